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

use crate::core::places::{Key, Places};

use super::snippets::{schedule_poll, set_fallback_poller, set_poller};

/// What a waker points at: the task's key in the table (a place is reused once its task ended, and a waker may outlive
/// its task; the key's generation tells them apart), and whether it is already in the ready queue. (An `Arc` only
/// because `std::task::Wake` asks for one; wasm32 here has a single thread.)
struct Handle {
    key: Key,
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

/// A live task's future: `None` while it is being polled (taken out so no borrow is held across the poll).
type Task = Option<LocalBoxFuture<'static, ()>>;

thread_local! {
    static TASKS: RefCell<Places<Task>> = RefCell::new(Places::default());
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
    let placed = TASKS.with(|tasks| tasks.borrow_mut().insert(Some(Box::pin(future))));
    // Only with 2^32 tasks alive at once is there no place: the task is dropped, never polled.
    let Some(key) = placed else { return };
    enqueue(&Arc::new(Handle { key, queued: AtomicBool::new(false) }));
}

/// A promise settled with `future`'s outcome (what `future_to_promise` did, on this executor).
#[cfg(feature = "loop")]
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
        let taken = TASKS.with(|tasks| tasks.borrow_mut().get_mut(handle.key)?.take());
        let Some(mut future) = taken else { continue };
        let waker = Waker::from(handle.clone());
        let mut cx = Context::from_waker(&waker);
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(()) => {
                TASKS.with(|tasks| tasks.borrow_mut().remove(handle.key));
                // Dropped here, outside the borrow: a task's drop may call into JS.
                drop(future);
            }
            Poll::Pending => TASKS.with(|tasks| {
                if let Some(task) = tasks.borrow_mut().get_mut(handle.key) {
                    *task = Some(future);
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
    TASKS.with(|tasks| u32::try_from(tasks.borrow().len()).unwrap_or(u32::MAX))
}
