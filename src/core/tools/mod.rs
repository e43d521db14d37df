//! Tool execution (§4): the one-call pipeline `find → prepareArguments → validate → beforeToolCall
//! → execute → afterToolCall`, sequential and parallel batches, truncated batches, and the
//! pieces `runToolCall` reuses. Events go out through the run; this module never polls queues.

use super::approvals::{Pause, approval_request};
use super::fxhash::FxMap;
use super::host::{HostFuture, Kind};
use super::local;
use super::run::{Emitter, Run, Stop, abandon_deadline, guarded};
use super::validate::js_number_to_string;
use super::validate_call::validate_tool_call;
use crate::core::fast::FastPaths;
use futures::future::{LocalBoxFuture, join_all};
use futures::{FutureExt, StreamExt};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

mod batch;

/// What a resumed run picks up: the interrupted turn's assistant message (the transcript's last
/// assistant message), the tool results already in the transcript after it, and the calls that
/// ended without their result message reaching the transcript (`{toolCallId, toolName, result,
/// isError}`): only the calls in neither list run again.
pub struct Resumed<V> {
    pub assistant: V,
    pub existing: Vec<V>,
    pub completed: Vec<V>,
    /// Issue 30: the decisions about calls that waited for approval (`{toolCallId, approved, args?, reason?}`).
    pub decisions: Vec<V>,
    /// A crash interrupted the turn (`Agent.resume`), so a missing call may have been running: `resume: "fail"`
    /// tools are refused. `false` for a continuation after approvals, where nothing of the batch was running.
    pub interrupted: bool,
}

/// How a call is prepared (issue 30): asking for approval where the tool or `beforeToolCall` wants it, or as a
/// person approved it, with the arguments they edited when they did.
pub enum Approval<'a, V> {
    Ask,
    Approved(Option<&'a V>),
}

// Not derived: a derive would ask `V: Copy`, and only the reference is copied.
impl<V> Clone for Approval<'_, V> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<V> Copy for Approval<'_, V> {}

pub const OPERATION_ABORTED: &str = "Operation aborted";

/// Everything one call needs besides the call itself: where tools are found, where hooks are read
/// from (`this` of the hooks), the signal and the D4 grace.
pub struct ToolEnv<'a, H: FastPaths> {
    pub h: &'a H,
    pub tools: H::V,
    /// Borrowed, as is `signal`: a clone of a JS handle would take a slot of the host's table for the batch.
    pub assistant: &'a H::V,
    pub context: H::V,
    pub hooks: H::V,
    pub signal: &'a H::V,
    pub grace_ms: f64,
    /// D3.1: `config.toolTimeoutMs` (or `options.toolTimeoutMs`); 0 = none.
    pub tool_timeout_ms: f64,
    /// Set once the run's sink failed: no new hook starts after that (L-3.10.4).
    pub halted: Option<&'a Emitter<H>>,
    /// Tools by name (first match wins), read once per batch instead of once per call.
    pub tool_index: std::cell::OnceCell<FxMap<String, H::V>>,
    /// Where the executions' `onUpdate` calls go.
    pub updates: Updates<H::V>,
}

/// The `onUpdate` functions of every execution: one native function (`Host::shared_function`, so on the JS host
/// one for the whole instance) routes each call by the execution's number, which that execution's function passes
/// first (binding a number is far cheaper than a native function per execution, or per batch). An execution's
/// route closes when it settles.
pub struct Updates<V> {
    dispatch: std::cell::OnceCell<V>,
}

impl<V> Default for Updates<V> {
    fn default() -> Self {
        Updates { dispatch: Default::default() }
    }
}

thread_local! {
    /// The open routes of all executions (of every batch and run on this thread), by number: each an
    /// `local::Sender<H::V>` of the host that opened it, boxed as `Any` because a thread-local
    /// cannot be generic. Never borrowed across a call into JS.
    static ROUTES: RefCell<FxMap<u64, Box<dyn std::any::Any>>> = RefCell::new(FxMap::default());
    /// The next route number; exact in an f64 up to 2^53.
    static NEXT_ROUTE: Cell<u64> = const { Cell::new(0) };
}

/// How many `onUpdate` routes are open on this thread (each open route is an execution not yet settled).
#[cfg(test)]
pub fn open_routes() -> usize {
    ROUTES.with(|routes| routes.borrow().len())
}

/// An open route; dropping it closes the route (also when an execution is dropped unfinished).
struct Route(u64);

impl Route {
    /// Opens a route for `sender`.
    fn open<V: 'static>(sender: local::Sender<V>) -> Route {
        let route = NEXT_ROUTE.with(|n| {
            let route = n.get();
            n.set(route.wrapping_add(1) & ((1 << 53) - 1));
            route
        });
        ROUTES.with(|routes| routes.borrow_mut().insert(route, Box::new(sender)));
        Route(route)
    }
}

impl Drop for Route {
    /// The table gives its memory back once it is empty again: nothing per run is left in it.
    fn drop(&mut self) {
        // `try_with`: a route dropped while the thread's locals are torn down has nowhere to go
        let _ = ROUTES.try_with(|routes| {
            if let Ok(mut routes) = routes.try_borrow_mut() {
                routes.remove(&self.0);
                if routes.is_empty() && routes.capacity() > 64 {
                    routes.shrink_to_fit();
                }
            }
        });
    }
}

/// `(number, partial)`: `partial` goes to that route's execution while the route is open, else nowhere.
fn route_update<V: Clone + 'static>(args: &[V], number: Option<f64>, undefined: V) {
    let Some(route) = number.filter(|n| n.fract() == 0.0 && *n >= 0.0).map(|n| n as u64) else {
        return;
    };
    let sender =
        ROUTES.with(|routes| routes.borrow().get(&route).and_then(|s| s.downcast_ref::<local::Sender<V>>()).cloned());
    if let Some(sender) = sender {
        let _ = sender.send(args.get(1).cloned().unwrap_or(undefined));
    }
}

/// A positive finite number of milliseconds read from `owner[key]`, else 0.
pub fn timeout_ms<H: FastPaths>(h: &H, owner: &H::V, key: &str) -> f64 {
    if !h.kind(owner).is_object_like() {
        return 0.0;
    }
    match h.get(owner, key).ok().and_then(|v| h.as_number(&v)) {
        Some(ms) if ms.is_finite() && ms > 0.0 => ms,
        _ => 0.0,
    }
}

/// A `toolCall` block of an assistant message.
#[derive(Clone)]
pub struct Call<V> {
    pub block: V,
    pub id: V,
    pub name: String,
    pub name_value: V,
    pub args: V,
}

impl<V: Clone> Call<V> {
    pub fn read<H: FastPaths<V = V>>(h: &H, block: &V) -> Result<Self, V> {
        let id = h.get(block, "id")?;
        let name_value = h.get(block, "name")?;
        let args = h.get(block, "arguments")?;
        let name = h.as_string(&name_value).unwrap_or_else(|| h.error_message(&name_value));
        Ok(Call { block: block.clone(), id, name, name_value, args })
    }
}

/// The toolCall blocks of an assistant message, in content order (T-4.1.1).
pub fn tool_calls<H: FastPaths>(h: &H, message: &H::V) -> Result<Vec<Call<H::V>>, H::V> {
    let content = h.get(message, "content")?;
    if h.kind(&content) != Kind::Array {
        return Ok(Vec::new());
    }
    let mut calls = Vec::new();
    for block in h.array_items(&content)? {
        if !h.kind(&block).is_object_like() {
            continue;
        }
        let kind = h.get(&block, "type")?;
        if h.same(&kind, &h.constant("toolCall")) {
            calls.push(Call::read(h, &block)?);
        }
    }
    Ok(calls)
}

/// A finalised call: what `tool_execution_end` and the tool-result message report.
pub struct Outcome<V> {
    pub call: Call<V>,
    pub result: V,
    /// The raw value (an `afterToolCall` may return a non-boolean `isError`, kept as given).
    pub is_error: V,
    pub duration_ms: Option<f64>,
}

/// Where a call of a parallel batch stands after preflight.
enum Preflight<V> {
    /// Finalised already (an immediate outcome, its end emitted).
    Done(Outcome<V>),
    /// Ready to execute: the tool and the arguments `execute` gets.
    Ready(V, V),
    /// Waits for approval (issue 30): its request, announced already.
    Waiting(V),
}

pub enum Preparation<V> {
    Immediate {
        result: V,
    },
    Prepared {
        tool: V,
        args: V,
    },
    /// Issue 30: the call waits for a person; `request` is what `tool_approval_request` announces.
    Waiting {
        request: V,
    },
}

/// How one call of a batch came out: an outcome, or a request for approval (the call did not run).
pub enum Ended<V> {
    Done(Outcome<V>),
    Waiting(V),
}

/// The result of a tool that failed before or while running: `{content: [text], details: {}}`.
pub fn error_result<H: FastPaths>(h: &H, text: &str) -> H::V {
    let block = h.object(&[("type", h.constant("text")), ("text", h.string(text))]);
    h.object(&[("content", h.array(&[block])), ("details", h.object(&[]))])
}

fn round_ms(ms: f64) -> f64 {
    // Math.round: halves go up.
    (ms + 0.5).floor()
}

impl<'a, H: FastPaths> ToolEnv<'a, H> {
    fn immediate(&self, text: &str) -> Preparation<H::V> {
        Preparation::Immediate { result: error_result(self.h, text) }
    }

    fn find_tool(&self, name: &str) -> Result<Option<H::V>, H::V> {
        if let Some(index) = self.tool_index.get() {
            return Ok(index.get(name).cloned());
        }
        let h = self.h;
        let mut index = FxMap::default();
        if h.kind(&self.tools) == Kind::Array {
            for tool in h.array_items(&self.tools)? {
                if !h.kind(&tool).is_object_like() {
                    continue;
                }
                if let Some(tool_name) = h.as_string(&h.get(&tool, "name")?) {
                    index.get_or_insert_with(tool_name, || tool);
                }
            }
        }
        let found = index.get(name).cloned();
        let _ = self.tool_index.set(index);
        Ok(found)
    }

    fn hook(&self, name: &str) -> Result<Option<H::V>, H::V> {
        let h = self.h;
        let f = h.get(&self.hooks, name)?;
        match h.kind(&f) {
            Kind::Function => Ok(Some(f)),
            Kind::Undefined | Kind::Null => Ok(None),
            _ => Err(h.error(&format!("{name} must be a function"), true)),
        }
    }

    /// Awaits a callback under the D4 deadline (`None` = abandoned).
    async fn guarded<T>(&self, fut: HostFuture<T>) -> Option<T> {
        guarded(self.h, self.signal, self.grace_ms, fut).await
    }

    /// §4.2 steps 1–3.
    pub async fn prepare(&self, call: &Call<H::V>) -> Preparation<H::V> {
        self.prepare_as(call, Approval::Ask).await
    }

    /// §4.2 steps 1–3, asking for approval or as approved (issue 30).
    pub async fn prepare_as(&self, call: &Call<H::V>, approval: Approval<'_, H::V>) -> Preparation<H::V> {
        let h = self.h;
        if h.signal_aborted(self.signal) {
            return self.immediate(OPERATION_ABORTED);
        }
        let tool = match self.find_tool(&call.name) {
            Ok(Some(tool)) => tool,
            Ok(None) => return self.immediate(&format!("Tool {} not found", call.name)),
            Err(e) => return self.immediate(&h.error_message(&e)),
        };
        match self.prepare_found(call, &tool, approval).await {
            Ok(p) => p,
            Err(e) => self.immediate(&h.error_message(&e)),
        }
    }

    /// Step 3, inside one error boundary: prepareArguments, validation, needsApproval, beforeToolCall. Approved
    /// arguments a person edited are validated again (without prepareArguments: they are what the person saw).
    async fn prepare_found(
        &self,
        call: &Call<H::V>,
        tool: &H::V,
        approval: Approval<'_, H::V>,
    ) -> Result<Preparation<H::V>, H::V> {
        let h = self.h;
        let args = match approval {
            Approval::Approved(Some(edited)) => {
                let block = h.object(&[
                    ("type", h.constant("toolCall")),
                    ("id", call.id.clone()),
                    ("name", call.name_value.clone()),
                    ("arguments", edited.clone()),
                ]);
                validate_tool_call(h, tool, &block, edited).await?
            }
            _ => {
                let mut raw_args = call.args.clone();
                let prepare = h.get(tool, "prepareArguments")?;
                if h.kind(&prepare) == Kind::Function {
                    let prepared = h.call_sync(&prepare, tool, std::slice::from_ref(&call.args))?;
                    if !h.same(&prepared, &call.args) {
                        raw_args = prepared;
                    }
                }
                validate_tool_call(h, tool, &call.block, &raw_args).await?
            }
        };
        let asking = matches!(approval, Approval::Ask);
        if asking {
            match self.needs_approval(call, tool, &args).await? {
                None => return Ok(self.immediate(OPERATION_ABORTED)),
                Some(true) => {
                    return Ok(Preparation::Waiting { request: self.request(call, tool, &args, None) });
                }
                Some(false) => {}
            }
        }
        if let Some(before) = self.hook("beforeToolCall")? {
            let mut entries = vec![
                ("assistantMessage", self.assistant.clone()),
                ("toolCall", call.block.clone()),
                ("args", args.clone()),
                ("context", self.context.clone()),
            ];
            if !asking {
                entries.push(("approved", h.boolean(true)));
            }
            let ctx = h.object(&entries);
            let outcome = self.guarded(h.call(&before, &self.hooks, &[ctx, self.signal.clone()])).await;
            let decision = match outcome {
                None => return Ok(self.immediate(OPERATION_ABORTED)),
                Some(r) => r?,
            };
            if h.signal_aborted(self.signal) {
                return Ok(self.immediate(OPERATION_ABORTED));
            }
            if h.kind(&decision).is_object_like() && h.truthy(&h.get(&decision, "block")?) {
                let reason = h.get(&decision, "reason")?;
                let text = if h.truthy(&reason) {
                    h.as_string(&reason).unwrap_or_else(|| h.error_message(&reason))
                } else {
                    "Tool execution was blocked".to_string()
                };
                let result = error_result(h, &text);
                let terminate = h.get(&decision, "terminate")?;
                if h.kind(&terminate) == Kind::Bool && h.truthy(&terminate) {
                    h.set(&result, "terminate", &h.boolean(true))?;
                }
                return Ok(Preparation::Immediate { result });
            }
            // Issue 30: `{approval: {reason, data}}` asks a person first (an approved call is not asked again).
            if asking && h.kind(&decision).is_object_like() {
                let wanted = h.get(&decision, "approval")?;
                if h.truthy(&wanted) {
                    return Ok(Preparation::Waiting { request: self.request(call, tool, &args, Some(&wanted)) });
                }
            }
        }
        Ok(Preparation::Prepared { tool: tool.clone(), args })
    }

    /// The request of a waiting call; with `tool.approvalTimeoutMs ?? config.approvalTimeoutMs` (a positive number)
    /// it carries `expiresAt` (epoch ms), after which the Agent denies it.
    fn request(&self, call: &Call<H::V>, tool: &H::V, args: &H::V, payload: Option<&H::V>) -> H::V {
        let h = self.h;
        let request = approval_request(h, &call.id, &call.name_value, args, payload);
        let own = timeout_ms(h, tool, "approvalTimeoutMs");
        let ms = if own > 0.0 { own } else { timeout_ms(h, &self.hooks, "approvalTimeoutMs") };
        if ms > 0.0 {
            let _ = h.set(&request, "expiresAt", &h.number(h.date_now() + ms));
        }
        request
    }

    /// `tool.needsApproval`: a boolean, or `(args, {toolCall, assistantMessage, context})` returning one (or a
    /// promise of one). `None`: abandoned after an abort (D4).
    async fn needs_approval(&self, call: &Call<H::V>, tool: &H::V, args: &H::V) -> Result<Option<bool>, H::V> {
        let h = self.h;
        let flag = h.get(tool, "needsApproval")?;
        match h.kind(&flag) {
            Kind::Undefined | Kind::Null => Ok(Some(false)),
            Kind::Bool => Ok(Some(h.truthy(&flag))),
            Kind::Function => {
                let ctx = h.object(&[
                    ("toolCall", call.block.clone()),
                    ("assistantMessage", self.assistant.clone()),
                    ("context", self.context.clone()),
                ]);
                match self.guarded(h.call(&flag, tool, &[args.clone(), ctx])).await {
                    None => Ok(None),
                    Some(answer) => {
                        let answer = answer?;
                        if h.signal_aborted(self.signal) { Ok(None) } else { Ok(Some(h.truthy(&answer))) }
                    }
                }
            }
            _ => Err(h.error(&format!("Tool \"{}\": needsApproval must be a boolean or a function", call.name), true)),
        }
    }

    /// Step 4: starts `execute` now (synchronously, so parallel calls start in source order within
    /// one tick) and returns the execution to await.
    pub fn start(&self, call: &Call<H::V>, tool: &H::V, args: &H::V) -> Execution<H> {
        let h = self.h;
        let (tx, rx) = local::unbounded::<H::V>();
        let route = Route::open(tx);
        #[allow(clippy::cast_precision_loss)] // route numbers stay below 2^53
        let on_update = h.bind_first(self.update_dispatch(), &h.number(route.0 as f64));
        // D3.1: `tool.timeoutMs ?? toolTimeoutMs`; with one, execute gets a child signal.
        let own = h.get(tool, "timeoutMs").unwrap_or_else(|_| h.undefined());
        let ms = if h.kind(&own).is_nullish() { self.tool_timeout_ms } else { timeout_ms(h, tool, "timeoutMs") };
        let (timeout, signal) = if ms > 0.0 {
            let (controller, child) = h.abort_controller();
            (Some((ms, controller)), child)
        } else {
            (None, self.signal.clone())
        };
        let started_at = h.now();
        let running = match h.get(tool, "execute") {
            Ok(execute) => h.call(&execute, tool, &[call.id.clone(), args.clone(), signal, on_update]),
            Err(e) => futures::future::ready(Err(e)).boxed_local(),
        };
        Execution { running, updates: rx, route, started_at, timeout }
    }

    /// The batch's one native `onUpdate` target: `(number, partial)` goes to that execution's
    /// updates while its route is open, and is dropped silently after.
    fn update_dispatch(&self) -> &H::V {
        self.updates.dispatch.get_or_init(|| {
            let h = self.h.clone();
            self.h.shared_function("onUpdate", &move || {
                let h = h.clone();
                Rc::new(move |args: &[H::V]| {
                    route_update(args, args.first().and_then(|n| h.as_number(n)), h.undefined());
                    h.undefined()
                })
            })
        })
    }

    /// Awaits an execution, delivering its updates through `on_update` while it runs and before
    /// it is finalised (T-4.8.1). Updates after it settled are dropped silently.
    pub async fn finish<'f, F>(&self, call: &Call<H::V>, execution: Execution<H>, on_update: F) -> Executed<H::V>
    where
        F: Fn(H::V) -> LocalBoxFuture<'f, ()>,
    {
        let h = self.h;
        let Execution { running, mut updates, route, started_at, timeout } = execution;
        let mut running = running.fuse();
        let mut deadline = abandon_deadline(h, self.signal, self.grace_ms).fuse();
        let (mut timer, mut parent_abort) = match &timeout {
            Some((ms, _)) => (h.sleep(*ms).fuse(), h.wait_abort(self.signal).fuse()),
            None => (futures::future::pending().boxed_local().fuse(), futures::future::pending().boxed_local().fuse()),
        };
        let settled = loop {
            futures::select_biased! {
                r = running => break Settled::Done(r),
                partial = updates.next() => {
                    if let Some(partial) = partial {
                        on_update(partial).await;
                    }
                }
                () = parent_abort => {
                    // The child signal follows the run's signal, with its reason.
                    if let Some((_, controller)) = &timeout {
                        let reason = h.get(self.signal, "reason").unwrap_or_else(|_| h.undefined());
                        h.abort(controller, &reason);
                    }
                }
                () = timer => break Settled::TimedOut,
                () = deadline => break Settled::Abandoned,
            }
        };
        let duration = round_ms(h.now() - started_at);
        drop(route);
        let abandoned = matches!(settled, Settled::Abandoned);
        while let Some(partial) = updates.try_next() {
            if matches!(settled, Settled::Done(_)) {
                on_update(partial).await;
            }
        }
        let (result, is_error) = match settled {
            Settled::Abandoned => (error_result(h, OPERATION_ABORTED), true),
            Settled::TimedOut => {
                let ms = timeout.as_ref().map_or(0.0, |(ms, _)| *ms);
                let text =
                    format!("Tool \"{}\" timed out after {} seconds", call.name, js_number_to_string(ms / 1000.0));
                if let Some((_, controller)) = &timeout {
                    let reason = h.error(&text, false);
                    let _ = h.set(&reason, "name", &h.constant("TimeoutError"));
                    h.abort(controller, &reason);
                }
                (error_result(h, &text), true)
            }
            Settled::Done(Err(e)) => (error_result(h, &h.error_message(&e)), true),
            Settled::Done(Ok(v)) if h.kind(&v).is_object_like() => match read_result(h, &v) {
                Ok(flag) => {
                    let is_error = h.kind(&flag) == Kind::Bool && h.truthy(&flag);
                    (v, is_error)
                }
                Err(e) => (error_result(h, &h.error_message(&e)), true),
            },
            Settled::Done(Ok(_)) => {
                let text = format!("Tool \"{}\" returned an invalid result: expected an object", call.name);
                (error_result(h, &text), true)
            }
        };
        Executed { result, is_error: h.boolean(is_error), duration_ms: duration, abandoned }
    }

    /// Step 5: afterToolCall and the S-2.5.2 merge.
    pub async fn finalize(&self, call: &Call<H::V>, args: &H::V, executed: Executed<H::V>) -> Outcome<H::V> {
        let h = self.h;
        let Executed { result, is_error, duration_ms, abandoned } = executed;
        let outcome =
            |result, is_error| Outcome { call: call.clone(), result, is_error, duration_ms: Some(duration_ms) };
        if abandoned || self.halted.is_some_and(|emitter| emitter.failed()) {
            return outcome(result, is_error);
        }
        let after = match self.hook("afterToolCall") {
            Ok(Some(after)) => after,
            Ok(None) => return outcome(result, is_error),
            Err(e) => return outcome(error_result(h, &h.error_message(&e)), h.boolean(true)),
        };
        let ctx = h.object(&[
            ("assistantMessage", self.assistant.clone()),
            ("toolCall", call.block.clone()),
            ("args", args.clone()),
            ("result", result.clone()),
            ("isError", is_error.clone()),
            ("context", self.context.clone()),
        ]);
        match self.guarded(h.call(&after, &self.hooks, &[ctx, self.signal.clone()])).await {
            None => outcome(error_result(h, OPERATION_ABORTED), h.boolean(true)),
            Some(Err(e)) => outcome(error_result(h, &h.error_message(&e)), h.boolean(true)),
            Some(Ok(update)) if h.kind(&update).is_object_like() => match merge_after(h, &result, &is_error, &update) {
                Ok((result, is_error)) => outcome(result, is_error),
                Err(e) => outcome(error_result(h, &h.error_message(&e)), h.boolean(true)),
            },
            Some(Ok(_)) => outcome(result, is_error),
        }
    }

    /// The whole pipeline for one call (`runToolCall`). A call that asks for approval does not run: `runToolCall`
    /// has no run to pause, so it gets an error result saying so.
    pub async fn run_call<'f, F>(&self, call: &Call<H::V>, on_update: F) -> Outcome<H::V>
    where
        F: Fn(H::V) -> LocalBoxFuture<'f, ()>,
    {
        match self.run_call_as(call, Approval::Ask, on_update).await {
            Ended::Done(outcome) => outcome,
            Ended::Waiting(_) => {
                let id = self.h.as_string(&call.id).unwrap_or_else(|| self.h.error_message(&call.id));
                let text = format!("Tool call \"{id}\" needs approval, which runToolCall cannot wait for");
                immediate_outcome(self.h, call, error_result(self.h, &text))
            }
        }
    }

    /// The whole pipeline for one call of a sequential batch, asking for approval or as approved (issue 30).
    pub async fn run_call_as<'f, F>(&self, call: &Call<H::V>, approval: Approval<'_, H::V>, on_update: F) -> Ended<H::V>
    where
        F: Fn(H::V) -> LocalBoxFuture<'f, ()>,
    {
        match self.prepare_as(call, approval).await {
            Preparation::Immediate { result } => Ended::Done(immediate_outcome(self.h, call, result)),
            Preparation::Waiting { request } => Ended::Waiting(request),
            Preparation::Prepared { tool, args } => {
                let execution = self.start(call, &tool, &args);
                let executed = self.finish(call, execution, on_update).await;
                Ended::Done(self.finalize(call, &args, executed).await)
            }
        }
    }
}

/// E-8.2: reading the result is part of `execute`. Every field the pipeline, the events and the
/// tool-result message use is read once here, so a throwing getter gives the call an error result with
/// its message instead of reaching `tool_execution_end` or the transcript. Answers `isError`.
fn read_result<H: FastPaths>(h: &H, result: &H::V) -> Result<H::V, H::V> {
    let is_error = h.get(result, "isError")?;
    for key in ["content", "details", "usage", "terminate", "structuredContent"] {
        h.get(result, key)?;
    }
    Ok(is_error)
}

pub struct Execution<H: FastPaths> {
    running: HostFuture<Result<H::V, H::V>>,
    updates: local::Receiver<H::V>,
    /// This execution's `onUpdate` route, open until it settles.
    route: Route,
    started_at: f64,
    /// D3.1: the timeout and the controller of the child signal `execute` got.
    timeout: Option<(f64, H::V)>,
}

/// How an execution ended.
enum Settled<V> {
    Done(Result<V, V>),
    /// D3.1: the tool's timeout expired first.
    TimedOut,
    /// D4: still running `abortGraceMs` after the abort.
    Abandoned,
}

pub struct Executed<V> {
    pub result: V,
    pub is_error: V,
    pub duration_ms: f64,
    pub abandoned: bool,
}

pub fn immediate_outcome<H: FastPaths>(h: &H, call: &Call<H::V>, result: H::V) -> Outcome<H::V> {
    Outcome { call: call.clone(), result, is_error: h.boolean(true), duration_ms: None }
}

/// S-2.5.2: `{...result, content, details, usage, terminate}`, then the structuredContent rule.
fn merge_after<H: FastPaths>(h: &H, result: &H::V, is_error: &H::V, update: &H::V) -> Result<(H::V, H::V), H::V> {
    let pick = |key: &str| -> Result<H::V, H::V> {
        let new = h.get(update, key)?;
        if h.kind(&new).is_nullish() { h.get(result, key) } else { Ok(new) }
    };
    let new_structured = h.get(update, "structuredContent")?;
    let new_content = h.get(update, "content")?;
    let structured = if !h.kind(&new_structured).is_nullish() {
        new_structured
    } else if h.truthy(&new_content) {
        h.undefined()
    } else {
        h.get(result, "structuredContent")?
    };
    let content = pick("content")?;
    let details = pick("details")?;
    let usage = pick("usage")?;
    let terminate = pick("terminate")?;
    let merged = h.shallow_copy(result)?;
    h.set(&merged, "content", &content)?;
    h.set(&merged, "details", &details)?;
    h.set(&merged, "usage", &usage)?;
    h.set(&merged, "terminate", &terminate)?;
    if h.kind(&structured) == Kind::Undefined {
        h.delete(&merged, "structuredContent")?;
    } else {
        h.set(&merged, "structuredContent", &structured)?;
    }
    let new_is_error = h.get(update, "isError")?;
    let is_error = if h.kind(&new_is_error).is_nullish() { is_error.clone() } else { new_is_error };
    Ok((merged, is_error))
}

/// `{toolCall, result, isError, durationMs?}` as `runToolCall` resolves it.
pub fn outcome_object<H: FastPaths>(h: &H, outcome: &Outcome<H::V>) -> H::V {
    let mut entries = vec![
        ("toolCall", outcome.call.block.clone()),
        ("result", outcome.result.clone()),
        ("isError", outcome.is_error.clone()),
    ];
    if let Some(ms) = outcome.duration_ms {
        entries.push(("durationMs", h.number(ms)));
    }
    h.object(&entries)
}

/// §4.2 step 6: the tool-result message.
pub fn result_message<H: FastPaths>(h: &H, outcome: &Outcome<H::V>) -> H::V {
    let read = |key: &str| h.get(&outcome.result, key).unwrap_or_else(|_| h.undefined());
    let content = read("content");
    let content = if h.kind(&content).is_nullish() { h.array(&[]) } else { content };
    let mut entries = vec![
        ("role", h.constant("toolResult")),
        ("toolCallId", outcome.call.id.clone()),
        ("toolName", outcome.call.name_value.clone()),
        ("content", content),
        ("details", read("details")),
        ("usage", read("usage")),
        ("isError", outcome.is_error.clone()),
    ];
    if let Some(ms) = outcome.duration_ms {
        entries.push(("durationMs", h.number(ms)));
    }
    entries.push(("timestamp", h.number(h.date_now())));
    h.object(&entries)
}

/// Whether a finalised batch stops the automatic tool-result request (T-4.7.1).
fn batch_terminates<H: FastPaths>(h: &H, outcomes: &[Outcome<H::V>]) -> bool {
    !outcomes.is_empty()
        && outcomes
            .iter()
            .all(|o| h.get(&o.result, "terminate").map(|t| h.kind(&t) == Kind::Bool && h.truthy(&t)).unwrap_or(false))
}

pub struct Batch<V> {
    pub messages: Vec<V>,
    pub terminate: bool,
    /// Issue 30: calls of the batch wait for approval; the run ends here (T-4.10.2).
    pub paused: Option<Pause<V>>,
}

/// `{toolCallId, toolName, result, isError}`: an ended call whose result message is not in the transcript yet.
pub fn completed_record<H: FastPaths>(h: &H, outcome: &Outcome<H::V>) -> H::V {
    h.object(&[
        ("toolCallId", outcome.call.id.clone()),
        ("toolName", outcome.call.name_value.clone()),
        ("result", outcome.result.clone()),
        ("isError", outcome.is_error.clone()),
    ])
}
