//! The one executor of the binding's background work: runs, provider streams and the promises of
//! async exports are tasks here, polled by the `pollTasks` export from a microtask the snippets
//! schedule (snippets/executor.js). The npm wrapper (pkg-template/trap.js) installs that microtask's
//! body, so a trap while polling lands in a `try/catch` it owns: it poisons the instance (E-8.4.2)
//! and ends every live run from JS, where wasm-bindgen-futures' own queue would surface the trap as
//! an uncaught exception.

use futures::future::LocalBoxFuture;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use wasm_bindgen::prelude::*;

use super::snippets::{schedule_poll, set_fallback_poller, set_poller};

/// What a waker points at: the task's place in the table, the generation of that place (a place is reused once its
/// task ended, and a waker may outlive its task), and whether it is already in the ready queue. (An `Arc` only
/// because `std::task::Wake` asks for one; wasm32 here has a single thread.)
struct Handle {
    index: u32,
    generation: u32,
    queued: AtomicBool,
}

impl Wake for Handle {
    fn wake(self: Arc<Self>) {
        enqueue(&self);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        enqueue(self);
    }
}

/// The live tasks by place: a vector and its free places rather than a map, since it grows to the most tasks ever
/// alive at once and never shrinks (issue 34: after a burst of runs, what the instance keeps is that peak), and a
/// place costs 12 bytes where a map's entry cost 24 and its table a quarter more.
#[derive(Default)]
struct Table {
    places: Vec<Place>,
    free: Vec<u32>,
}

struct Place {
    generation: u32,
    /// `None` while the task is being polled (taken out so no borrow is held across the poll), and once it ended.
    future: Option<LocalBoxFuture<'static, ()>>,
}

impl Table {
    fn insert(&mut self, future: LocalBoxFuture<'static, ()>) -> Option<(u32, u32)> {
        if let Some(index) = self.free.pop() {
            let place = self.places.get_mut(index as usize)?;
            place.future = Some(future);
            return Some((index, place.generation));
        }
        let index = u32::try_from(self.places.len()).ok()?;
        self.places.push(Place { generation: 0, future: Some(future) });
        Some((index, 0))
    }

    fn place(&mut self, handle: &Handle) -> Option<&mut Place> {
        self.places.get_mut(handle.index as usize).filter(|p| p.generation == handle.generation)
    }

    /// Ends the task at `handle`'s place: the place's next task gets a new generation.
    fn remove(&mut self, handle: &Handle) {
        if let Some(place) = self.place(handle) {
            place.future = None;
            place.generation = place.generation.wrapping_add(1);
            self.free.push(handle.index);
        }
    }
}

thread_local! {
    static TASKS: RefCell<Table> = RefCell::new(Table::default());
    static READY: RefCell<VecDeque<Arc<Handle>>> = const { RefCell::new(VecDeque::new()) };
    /// A microtask is scheduled, or polling is under way (it drains wake-ups made meanwhile).
    static SCHEDULED: Cell<bool> = const { Cell::new(false) };
    static FALLBACK_INSTALLED: Cell<bool> = const { Cell::new(false) };
}

fn enqueue(handle: &Arc<Handle>) {
    if handle.queued.swap(true, Ordering::Relaxed) {
        return;
    }
    READY.with(|ready| ready.borrow_mut().push_back(handle.clone()));
    if !SCHEDULED.with(|s| s.replace(true)) {
        install_fallback();
        schedule_poll();
    }
}

/// Until the wrapper installs its guarded poller, the snippets call `pollTasks` directly.
fn install_fallback() {
    if FALLBACK_INSTALLED.with(|i| i.replace(true)) {
        return;
    }
    let poll = Closure::<dyn Fn()>::new(poll_tasks);
    set_fallback_poller(&poll.into_js_value());
}

/// Runs `future` to completion in the background.
pub fn spawn(future: impl Future<Output = ()> + 'static) {
    let placed = TASKS.with(|tasks| tasks.borrow_mut().insert(Box::pin(future)));
    // Only with 2^32 tasks alive at once is there no place: the task is dropped, never polled.
    let Some((index, generation)) = placed else { return };
    enqueue(&Arc::new(Handle { index, generation, queued: AtomicBool::new(false) }));
}

/// A promise settled with `future`'s outcome (what `future_to_promise` did, on this executor).
pub fn spawn_promise(future: impl Future<Output = Result<JsValue, JsValue>> + 'static) -> js_sys::Promise {
    let mut settle = None;
    let promise = js_sys::Promise::new(&mut |resolve, reject| settle = Some((resolve, reject)));
    spawn(async move {
        let outcome = future.await;
        if let Some((resolve, reject)) = settle {
            let _ = match outcome {
                Ok(value) => resolve.call1(&JsValue::UNDEFINED, &value),
                Err(error) => reject.call1(&JsValue::UNDEFINED, &error),
            };
        }
    });
    promise
}

/// Polls every ready task, including those woken meanwhile. Called by the snippets' microtask
/// (through the trap wrapper); never with a borrow of the executor's state held across a poll.
#[wasm_bindgen(js_name = pollTasks)]
pub fn poll_tasks() {
    while let Some(handle) = READY.with(|ready| ready.borrow_mut().pop_front()) {
        handle.queued.store(false, Ordering::Relaxed);
        let taken = TASKS.with(|tasks| tasks.borrow_mut().place(&handle)?.future.take());
        let Some(mut future) = taken else { continue };
        let waker = Waker::from(handle.clone());
        let mut cx = Context::from_waker(&waker);
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(()) => {
                TASKS.with(|tasks| tasks.borrow_mut().remove(&handle));
                // Dropped here, outside the borrow: a task's drop may call into JS.
                drop(future);
            }
            Poll::Pending => TASKS.with(|tasks| {
                if let Some(place) = tasks.borrow_mut().place(&handle) {
                    place.future = Some(future);
                }
            }),
        }
    }
    SCHEDULED.with(|s| s.set(false));
}

/// Installs the wrapper's guarded poller and its failure handler (for traps in promise
/// reactions the snippets run, such as an awaited promise settling).
#[wasm_bindgen(js_name = setPoller)]
pub fn set_poller_export(poll: JsValue, on_failure: JsValue) {
    set_poller(&poll, &on_failure);
}

/// How many tasks are alive (tests: a finished run leaves none behind).
#[wasm_bindgen(js_name = liveTasks)]
pub fn live_tasks() -> u32 {
    TASKS.with(|tasks| {
        let tasks = tasks.borrow();
        u32::try_from(tasks.places.len() - tasks.free.len()).unwrap_or(u32::MAX)
    })
}
