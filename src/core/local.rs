//! Channels and a lock for futures on one thread: the loop's executions, batches and emitters never leave the
//! thread that made them. `futures`' own (`mpsc`, `oneshot`, `lock::Mutex`) are built for threads (atomics, `Arc`,
//! lock-free queues) and were ~2 KB of the download for nothing (issue 43). Same semantics where the loop relies on
//! them: a channel ends when its last sender is dropped; a lock's release wakes its oldest waiter, and a waiter that
//! was woken but dropped before it took the lock passes the wake on.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use futures::stream::{FusedStream, Stream};

// ---- an unbounded channel

struct Queue<T> {
    items: VecDeque<T>,
    waker: Option<Waker>,
    senders: usize,
    receiving: bool,
}

/// The sending half of `unbounded`; clones send into the same channel.
pub struct Sender<T>(Rc<RefCell<Queue<T>>>);

/// The receiving half of `unbounded`: a stream of what was sent, ending once every sender is gone and it is empty.
pub struct Receiver<T> {
    queue: Rc<RefCell<Queue<T>>>,
    ended: bool,
}

/// A channel without a bound.
pub fn unbounded<T>() -> (Sender<T>, Receiver<T>) {
    let queue = Rc::new(RefCell::new(Queue { items: VecDeque::new(), waker: None, senders: 1, receiving: true }));
    (Sender(queue.clone()), Receiver { queue, ended: false })
}

impl<T> Sender<T> {
    /// Queues `item`; gives it back when the receiver is gone.
    pub fn send(&self, item: T) -> Result<(), T> {
        let waker = {
            let mut queue = self.0.borrow_mut();
            if !queue.receiving {
                return Err(item);
            }
            queue.items.push_back(item);
            queue.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
        Ok(())
    }
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.0.borrow_mut().senders += 1;
        Sender(self.0.clone())
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let waker = {
            let mut queue = self.0.borrow_mut();
            queue.senders -= 1;
            if queue.senders == 0 { queue.waker.take() } else { None }
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl<T> Receiver<T> {
    /// The next item already sent, if any.
    pub fn try_next(&mut self) -> Option<T> {
        self.queue.borrow_mut().items.pop_front()
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        // Taken out first: dropping an item may run the host's code, which must not find the queue borrowed.
        let items = {
            let mut queue = self.queue.borrow_mut();
            queue.receiving = false;
            queue.waker = None;
            std::mem::take(&mut queue.items)
        };
        drop(items);
    }
}

impl<T> Stream for Receiver<T> {
    type Item = T;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let this = self.get_mut();
        if this.ended {
            return Poll::Ready(None);
        }
        let mut queue = this.queue.borrow_mut();
        if let Some(item) = queue.items.pop_front() {
            return Poll::Ready(Some(item));
        }
        if queue.senders == 0 {
            drop(queue);
            this.ended = true;
            return Poll::Ready(None);
        }
        queue.waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl<T> FusedStream for Receiver<T> {
    fn is_terminated(&self) -> bool {
        self.ended
    }
}

// ---- a lock

/// An async lock without data: `lock().await` holds it until the guard is dropped. Release wakes the oldest waiter;
/// a caller that finds it free takes it, waiters or not (as `futures::lock::Mutex`).
#[derive(Default)]
pub struct Lock {
    held: Cell<bool>,
    next_id: Cell<u32>,
    /// Waiters in the order they first waited: `(id, waker)`, the waker `None` once woken.
    waiters: RefCell<Vec<(u32, Option<Waker>)>>,
}

/// Holds its `Lock` until dropped.
pub struct Guard<'a>(&'a Lock);

/// `Lock::lock`'s future.
pub struct Locking<'a> {
    lock: &'a Lock,
    /// This future's place among the waiters, once it waited.
    id: Option<u32>,
}

impl Lock {
    pub fn lock(&self) -> Locking<'_> {
        Locking { lock: self, id: None }
    }

    /// Wakes the oldest waiter (which may find the lock taken again and wait on in its place).
    fn wake_oldest(&self) {
        let waker = self.waiters.borrow_mut().first_mut().and_then(|(_, waker)| waker.take());
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl<'a> Future for Locking<'a> {
    type Output = Guard<'a>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Guard<'a>> {
        let this = self.get_mut();
        let lock = this.lock;
        let mut waiters = lock.waiters.borrow_mut();
        if !lock.held.get() {
            lock.held.set(true);
            if let Some(id) = this.id.take() {
                waiters.retain(|(other, _)| *other != id);
            }
            return Poll::Ready(Guard(lock));
        }
        match this.id {
            Some(id) => {
                if let Some(entry) = waiters.iter_mut().find(|(other, _)| *other == id) {
                    entry.1 = Some(cx.waker().clone());
                }
            }
            None => {
                let id = lock.next_id.get();
                lock.next_id.set(id.wrapping_add(1));
                waiters.push((id, Some(cx.waker().clone())));
                this.id = Some(id);
            }
        }
        Poll::Pending
    }
}

impl Drop for Locking<'_> {
    /// A waiter dropped after its wake passes the wake on, so that the lock does not stay free with waiters asleep.
    fn drop(&mut self) {
        let Some(id) = self.id else { return };
        let woken = {
            let mut waiters = self.lock.waiters.borrow_mut();
            let at = waiters.iter().position(|(other, _)| *other == id);
            at.is_some_and(|at| waiters.remove(at).1.is_none())
        };
        if woken && !self.lock.held.get() {
            self.lock.wake_oldest();
        }
    }
}

impl Drop for Guard<'_> {
    fn drop(&mut self) {
        self.0.held.set(false);
        self.0.wake_oldest();
    }
}

// ---- a semaphore

/// A first-come-first-served counting semaphore: a released permit goes straight to the oldest waiter still waiting
/// (no barging: a caller finds none free while others wait).
pub struct Semaphore {
    free: Cell<usize>,
    waiters: RefCell<VecDeque<Rc<Handoff>>>,
}

/// A waiter's slot: whether a permit was handed to it, and its waker.
#[derive(Default)]
struct Handoff {
    given: Cell<bool>,
    waker: RefCell<Option<Waker>>,
}

/// A permit of its `Semaphore`, given back when dropped.
pub struct Permit(Rc<Semaphore>);

impl Semaphore {
    pub fn new(permits: usize) -> Rc<Self> {
        Rc::new(Semaphore { free: Cell::new(permits), waiters: RefCell::new(VecDeque::new()) })
    }

    /// A permit, when one is free and nobody waits.
    pub fn try_acquire(self: &Rc<Self>) -> Option<Permit> {
        if self.free.get() == 0 || !self.waiters.borrow().is_empty() {
            return None;
        }
        self.free.set(self.free.get() - 1);
        Some(Permit(self.clone()))
    }

    /// A permit, waiting in line for one.
    pub async fn acquire(self: Rc<Self>) -> Permit {
        if let Some(permit) = self.try_acquire() {
            return permit;
        }
        let handoff = Rc::new(Handoff::default());
        self.waiters.borrow_mut().push_back(handoff.clone());
        Waiting { semaphore: &self, handoff: &handoff, taken: false }.await;
        Permit(self)
    }
}

/// Waits for a handoff; dropped before it came, it leaves the line (and gives back a permit handed to it meanwhile).
struct Waiting<'a> {
    semaphore: &'a Rc<Semaphore>,
    handoff: &'a Rc<Handoff>,
    /// Whether it answered `Ready` (the permit is then its caller's).
    taken: bool,
}

impl Future for Waiting<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        if this.handoff.given.get() {
            this.taken = true;
            return Poll::Ready(());
        }
        *this.handoff.waker.borrow_mut() = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.taken {
            return;
        }
        if self.handoff.given.get() {
            drop(Permit(self.semaphore.clone()));
        } else {
            self.semaphore.waiters.borrow_mut().retain(|w| !Rc::ptr_eq(w, self.handoff));
        }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let next = self.0.waiters.borrow_mut().pop_front();
        match next {
            Some(waiter) => {
                // The permit passes straight to the oldest waiter.
                waiter.given.set(true);
                let waker = waiter.waker.borrow_mut().take();
                if let Some(waker) = waker {
                    waker.wake();
                }
            }
            None => self.0.free.set(self.0.free.get().saturating_add(1)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;
    use futures::executor::LocalPool;
    use futures::task::LocalSpawnExt;

    #[test]
    fn a_channel_delivers_in_order_and_ends_with_its_last_sender() {
        let (tx, mut rx) = unbounded();
        let tx2 = tx.clone();
        assert!(tx.send(1).is_ok());
        assert!(tx2.send(2).is_ok());
        drop(tx);
        let mut pool = LocalPool::new();
        let got = Rc::new(RefCell::new(Vec::new()));
        let seen = got.clone();
        pool.spawner()
            .spawn_local(async move {
                while let Some(n) = rx.next().await {
                    seen.borrow_mut().push(n);
                }
                seen.borrow_mut().push(0);
            })
            .ok();
        pool.run_until_stalled();
        assert_eq!(*got.borrow(), vec![1, 2]);
        assert!(tx2.send(3).is_ok());
        pool.run_until_stalled();
        assert_eq!(*got.borrow(), vec![1, 2, 3]);
        drop(tx2);
        pool.run_until_stalled();
        assert_eq!(*got.borrow(), vec![1, 2, 3, 0]);
    }

    #[test]
    fn a_send_after_the_receiver_is_gone_gives_the_item_back() {
        let (tx, rx) = unbounded();
        drop(rx);
        assert_eq!(tx.send(7), Err(7));
    }

    /// Three tasks take the lock in turn, in the order they first waited; one dropped after its wake passes it on.
    #[test]
    fn the_lock_goes_to_its_oldest_waiter() {
        let lock = Rc::new(Lock::default());
        let order = Rc::new(RefCell::new(Vec::new()));
        let mut pool = LocalPool::new();
        let held = lock.clone();
        let (gate, opened) = unbounded::<()>();
        let mut opened = Some(opened);
        for n in 0..3 {
            let (lock, order) = (lock.clone(), order.clone());
            let opened = opened.take();
            pool.spawner()
                .spawn_local(async move {
                    let _guard = lock.lock().await;
                    order.borrow_mut().push(n);
                    // The first holds it until the gate opens.
                    if let Some(mut opened) = opened {
                        opened.next().await;
                    }
                })
                .ok();
        }
        pool.run_until_stalled();
        assert_eq!(*order.borrow(), vec![0]);
        assert_eq!(held.waiters.borrow().len(), 2);
        drop(gate);
        pool.run();
        assert_eq!(*order.borrow(), vec![0, 1, 2]);
        assert!(held.waiters.borrow().is_empty() && !held.held.get());
    }

    #[test]
    fn a_woken_waiter_dropped_before_it_locks_passes_the_wake_on() {
        let lock = Lock::default();
        let guard = lock.lock();
        let mut pool = LocalPool::new();
        let g = pool.run_until(guard);
        let waker = futures::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        let mut first = Box::pin(lock.lock());
        let mut second = Box::pin(lock.lock());
        assert!(first.as_mut().poll(&mut cx).is_pending());
        assert!(second.as_mut().poll(&mut cx).is_pending());
        drop(g);
        // The first was woken; dropping it wakes the second, whose waker is taken.
        drop(first);
        assert!(lock.waiters.borrow().first().is_some_and(|(_, w)| w.is_none()));
        assert!(second.as_mut().poll(&mut cx).is_ready());
    }

    #[test]
    fn a_semaphore_hands_permits_first_come_first_served() {
        let slots = Semaphore::new(1);
        let order = Rc::new(RefCell::new(Vec::new()));
        let mut pool = LocalPool::new();
        let first = slots.try_acquire();
        assert!(first.is_some() && slots.try_acquire().is_none());
        for n in 0..3 {
            let (slots, order) = (slots.clone(), order.clone());
            pool.spawner()
                .spawn_local(async move {
                    let _permit = slots.acquire().await;
                    order.borrow_mut().push(n);
                })
                .ok();
        }
        pool.run_until_stalled();
        assert!(order.borrow().is_empty());
        drop(first);
        pool.run();
        assert_eq!(*order.borrow(), vec![0, 1, 2]);
        assert_eq!(slots.free.get(), 1);
    }

    #[test]
    fn a_waiter_dropped_with_a_permit_handed_to_it_gives_it_back() {
        let slots = Semaphore::new(1);
        let first = slots.try_acquire();
        let waker = futures::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        let mut waiting = Box::pin(slots.clone().acquire());
        assert!(waiting.as_mut().poll(&mut cx).is_pending());
        drop(first);
        assert_eq!(slots.free.get(), 0);
        drop(waiting);
        assert_eq!(slots.free.get(), 1);
        assert!(slots.try_acquire().is_some());
    }
}
