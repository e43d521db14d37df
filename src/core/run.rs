//! The state one run carries (working context, config, newMessages, signal) and the machinery every
//! step shares: event delivery (L-3.10), calling caller callbacks (D1, D4), and abort checks (D2).
//! It owns no scheduling decisions; those live in `agent_loop` and `tools`.

use super::budget::{Budget, Figures, Limits, Reached};
use super::host::{HostFuture, Kind};
use crate::core::fast::FastPaths;
use crate::core::local::Lock;
use futures::FutureExt;
use futures::future::LocalBoxFuture;
use futures::future::{Either, OptionFuture, select};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::task::Poll;

/// Why the normal flow of a run stopped early.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    /// A callback threw, rejected or returned the wrong kind of value (D1); the message per E-8.3.1.
    Failed(String),
    /// The run's signal was seen aborted at a step that must not start new work (D2).
    Aborted,
    /// `emit` threw or rejected (L-3.10.4); the thrown value is kept by the emitter.
    EmitFailed,
}

/// How events leave a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SinkMode {
    /// `agentLoop`: the sink is called synchronously and never awaited (L-3.1.1).
    Observe,
    /// `runAgentLoop` / `Agent`: every call is awaited before the producer continues (L-3.10.2).
    Barrier,
}

/// Whether an event ends a turn or the run, known where it was made: what the Agent's sink must tell apart without
/// reading the event's `type` back. One byte, so carrying it costs the run's future nothing (issue 34).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Boundary {
    None,
    TurnEnd,
    AgentEnd,
}

impl Boundary {
    /// The boundary an event of type `kind` is.
    pub fn of(kind: &str) -> Boundary {
        match kind {
            "turn_end" => Boundary::TurnEnd,
            "agent_end" => Boundary::AgentEnd,
            _ => Boundary::None,
        }
    }
}

/// A sink written in Rust (the `Agent`'s reducer and listeners), awaited like a barrier sink: each event with its
/// `Boundary`.
pub type NativeSink<V> = Rc<dyn Fn(Boundary, V) -> LocalBoxFuture<'static, Result<(), V>>>;

enum Sink<H: FastPaths> {
    Js(H::V, SinkMode),
    Native(NativeSink<H::V>),
}

/// Delivers events one at a time in production order (L-3.10.3) and remembers a failing sink.
pub struct Emitter<H: FastPaths> {
    sink: Sink<H>,
    /// L-3.10.3 for the awaited sinks (none for an observing one: every in-flight run's state is part of the wasm
    /// memory's peak, issue 34, and most runs in flight are `agentLoop`'s).
    turn: Option<Box<Lock>>,
    failure: RefCell<Option<H::V>>,
}

impl<H: FastPaths> Emitter<H> {
    pub fn new(sink: H::V, mode: SinkMode) -> Self {
        let turn = (mode != SinkMode::Observe).then(|| Box::new(Lock::default()));
        Emitter { sink: Sink::Js(sink, mode), turn, failure: RefCell::new(None) }
    }

    pub fn native(sink: NativeSink<H::V>) -> Self {
        Emitter { sink: Sink::Native(sink), turn: Some(Box::new(Lock::default())), failure: RefCell::new(None) }
    }

    pub fn failed(&self) -> bool {
        self.failure.borrow().is_some()
    }

    /// The sink when it is called synchronously and has not failed: a host may hand it events
    /// itself (`Host::pump`), reporting a throw through `record_failure`.
    pub fn observing_sink(&self) -> Option<&H::V> {
        match &self.sink {
            Sink::Js(sink, SinkMode::Observe) if !self.failed() => Some(sink),
            _ => None,
        }
    }

    /// The JS sink, failed or not (`None` for a native one).
    pub fn js_sink(&self) -> Option<&H::V> {
        match &self.sink {
            Sink::Js(sink, _) => Some(sink),
            Sink::Native(_) => None,
        }
    }

    /// Remembers what the sink threw (as `emit` does).
    pub fn record_failure(&self, thrown: H::V) -> Stop {
        self.failure.replace(Some(thrown));
        Stop::EmitFailed
    }

    /// The value the sink threw, once it failed.
    pub fn failure(&self) -> Option<H::V> {
        self.failure.borrow().clone()
    }

    /// Delivers `event`, which is a `boundary`.
    pub async fn emit(&self, h: &H, boundary: Boundary, event: H::V) -> Result<(), Stop> {
        if self.failed() {
            return Err(Stop::EmitFailed);
        }
        let undefined = h.undefined();
        let outcome = match &self.sink {
            Sink::Js(sink, SinkMode::Observe) => h.call_sync(sink, &undefined, &[event]).map(|_| ()),
            Sink::Js(sink, SinkMode::Barrier) => {
                let _turn = OptionFuture::from(self.turn.as_deref().map(Lock::lock)).await;
                if self.failed() {
                    return Err(Stop::EmitFailed);
                }
                h.call(sink, &undefined, &[event]).await.map(|_| ())
            }
            Sink::Native(sink) => {
                let _turn = OptionFuture::from(self.turn.as_deref().map(Lock::lock)).await;
                if self.failed() {
                    return Err(Stop::EmitFailed);
                }
                sink(boundary, event).await
            }
        };
        outcome.map_err(|e| {
            self.failure.replace(Some(e));
            Stop::EmitFailed
        })
    }
}

/// What D1.2 needs to end a run cleanly wherever it stopped.
#[derive(Default)]
pub struct Ending<V> {
    /// A `turn_start` was emitted and its `turn_end` was not.
    pub turn_open: bool,
    /// Messages drained from a queue or prepared by `prepareNextTurn` but not yet injected.
    pub undelivered: Vec<V>,
    /// Where the streamed partial sits: the array and its index there (it is read back on failure).
    pub partial: Option<(V, usize)>,
}

pub struct Run<'h, H: FastPaths> {
    pub h: &'h H,
    pub signal: H::V,
    pub stream_fn: H::V,
    pub new_messages: H::V,
    pub emitter: Emitter<H>,
    /// D4: how long callbacks are still awaited after an abort (`f64::INFINITY` = forever).
    pub abort_grace_ms: f64,
    config: RefCell<H::V>,
    context: RefCell<H::V>,
    pub ending: RefCell<Ending<H::V>>,
    turn_open: Cell<bool>,
    /// Steps since the run last checked the clock, and when it last yielded to the event loop.
    steps: Cell<u32>,
    last_yield: Cell<f64>,
    /// Issue 32: the run's limits and what it counted, only when it has limits (a run without costs 8 bytes).
    tracker: RefCell<Option<Box<Tracker>>>,
    /// Issue 45: `config.compaction` when it is on (`true` or an object; checked before: E-8.1), read when the run
    /// starts.
    pub compaction: Option<H::V>,
}

/// What a run with limits keeps (issue 32): its limits, its figures, its start, and a stop decided before a batch
/// and reported at the turn's end (held here, not in the loop's future).
struct Tracker {
    budget: Budget,
    counted: Figures,
    started: f64,
    stop: Option<Reached>,
}

impl Tracker {
    fn new<H: FastPaths>(h: &H, budget: Budget) -> Box<Tracker> {
        Box::new(Tracker { budget, counted: Figures::default(), started: h.now(), stop: None })
    }
}

impl<'h, H: FastPaths> Run<'h, H> {
    pub fn new(h: &'h H, context: H::V, config: H::V, signal: H::V, stream_fn: H::V, emitter: Emitter<H>) -> Self {
        let abort_grace_ms = match h.get(&config, "abortGraceMs").ok().and_then(|v| h.as_number(&v)) {
            Some(ms) if ms >= 0.0 => ms,
            _ => 5000.0,
        };
        let limits = Limits::read(h, &config, "limits");
        let tracker = (!limits.is_empty()).then(|| Tracker::new(h, Budget { run: limits, ..Budget::default() }));
        let compaction = h.get(&config, "compaction").ok().filter(|v| match h.kind(v) {
            Kind::Bool => h.truthy(v),
            Kind::Undefined | Kind::Null => false,
            _ => true,
        });
        Run {
            h,
            signal,
            stream_fn,
            new_messages: h.array(&[]),
            emitter,
            abort_grace_ms,
            config: RefCell::new(config),
            context: RefCell::new(context),
            ending: RefCell::new(Ending { turn_open: false, undelivered: Vec::new(), partial: None }),
            turn_open: Cell::new(false),
            steps: Cell::new(0),
            last_yield: Cell::new(h.now()),
            tracker: RefCell::new(tracker),
            compaction,
        }
    }

    // ---- budgets (issue 32)

    /// Replaces the run's limits (the Agent's: its `limits` and `totalLimits`, with what it spent before). Called
    /// right after `new`, before the run started.
    pub fn set_budget(&self, budget: Budget) {
        self.tracker.replace((!budget.is_empty()).then(|| Tracker::new(self.h, budget)));
    }

    /// Counts into the figures, when the run has limits (no JS call while the tracker is borrowed).
    fn count(&self, f: impl FnOnce(&mut Figures)) {
        if let Some(tracker) = self.tracker.borrow_mut().as_mut() {
            f(&mut tracker.counted);
        }
    }

    /// A model request starts.
    pub fn count_request(&self) {
        self.count(|f| f.requests += 1.0);
    }

    /// A tool batch of `n` calls runs.
    pub fn count_tool_calls(&self, n: usize) {
        self.count(|f| f.tool_calls += n as f64);
    }

    /// A model reply ended: its tokens and cost count, when the run has limits. With a cost limit, a reply that
    /// reported tokens but no cost makes the cost uncountable (L-3.12.6).
    pub fn count_spent(&self, message: &H::V) {
        let limits_cost = match self.tracker.borrow().as_ref() {
            Some(tracker) => tracker.budget.limits_cost(),
            None => return,
        };
        // Read before the tracker is borrowed: reading the message or the model may run caller code.
        let (tokens, cost) = super::budget::spent(self.h, message);
        let uncounted = (limits_cost && tokens > 0.0 && cost == 0.0).then(|| {
            let model = self.h.get(&self.config(), "model").unwrap_or_else(|_| self.h.undefined());
            super::budget::uncounted_cost(self.h, message, &model)
        });
        self.count(|f| {
            f.tokens += tokens;
            f.cost += cost;
            if f.uncounted.is_none() {
                f.uncounted = uncounted;
            }
        });
    }

    fn check(&self, at: impl FnOnce(&Budget, &Figures) -> Option<Reached>) -> Option<Reached> {
        let now = self.h.now();
        let tracker = self.tracker.borrow();
        let tracker = tracker.as_ref()?;
        at(&tracker.budget, &Figures { elapsed_ms: now - tracker.started, ..tracker.counted.clone() })
    }

    /// The limit reached before the next model request, if any.
    pub fn limit_before_request(&self) -> Option<Reached> {
        self.check(|budget, figures| budget.before_request(figures))
    }

    /// The limit reached before a tool batch of `n` calls, if any.
    pub fn limit_before_batch(&self, n: usize) -> Option<Reached> {
        self.check(|budget, figures| budget.before_batch(figures, n))
    }

    /// Holds the limit that refused a batch until its turn ended.
    pub fn hold_stop(&self, reached: Reached) {
        if let Some(tracker) = self.tracker.borrow_mut().as_mut() {
            tracker.stop = Some(reached);
        }
    }

    /// The limit held by `hold_stop`, once.
    pub fn take_stop(&self) -> Option<Reached> {
        self.tracker.borrow_mut().as_mut().and_then(|t| t.stop.take())
    }

    /// Yields to the event loop after ~50 ms of uninterrupted work. A stream or hook that always
    /// answers at once keeps the run on microtasks, where no timer and no abort could ever fire
    /// (D1, D2, D3 would all be starved); this keeps them live. Checked every 64 steps.
    pub async fn breathe(&self) {
        let steps = self.steps.get().wrapping_add(1);
        self.steps.set(steps);
        if !steps.is_multiple_of(64) {
            return;
        }
        let now = self.h.now();
        if now - self.last_yield.get() > 50.0 {
            self.h.sleep(0.0).await;
            self.last_yield.set(self.h.now());
        }
    }

    pub fn config(&self) -> H::V {
        self.config.borrow().clone()
    }
    pub fn set_config(&self, config: H::V) {
        self.config.replace(config);
    }
    pub fn context(&self) -> H::V {
        self.context.borrow().clone()
    }
    pub fn set_context(&self, context: H::V) {
        self.context.replace(context);
    }
    pub fn turn_open(&self) -> bool {
        self.turn_open.get()
    }

    pub fn aborted(&self) -> bool {
        self.h.signal_aborted(&self.signal)
    }

    /// D2.1: the guard in front of every step that would start new work.
    pub fn check_abort(&self) -> Result<(), Stop> {
        if self.aborted() { Err(Stop::Aborted) } else { Ok(()) }
    }

    /// Turns a thrown value into a D1 failure.
    pub fn fail(&self, thrown: &H::V) -> Stop {
        Stop::Failed(self.h.error_message(thrown))
    }

    // ---- events

    /// Emits `event`, whose `type` is `kind`.
    /// Not an `async fn`: its arguments would stay in every run future that awaits it (issue 34).
    pub fn emit(&self, kind: &'static str, event: H::V) -> impl Future<Output = Result<(), Stop>> + use<'_, 'h, H> {
        self.emitter.emit(self.h, Boundary::of(kind), event)
    }

    pub async fn emit_type(&self, kind: &'static str) -> Result<(), Stop> {
        let h = self.h;
        if kind == "turn_start" {
            self.turn_open.set(true);
            self.count(|f| f.turns += 1.0);
        }
        // The event is bound first: a temporary of the awaited expression would be held across the await, in every
        // future that awaits this one (issue 34).
        let event = h.object(&[("type", h.constant(kind))]);
        self.emit(kind, event).await
    }

    pub async fn emit_message(&self, kind: &'static str, message: &H::V) -> Result<(), Stop> {
        let h = self.h;
        let event = h.object(&[("type", h.constant(kind)), ("message", message.clone())]);
        self.emit(kind, event).await
    }

    /// `turn_end` with the turn's `toolResults` array itself (the one finishTurn saw), not a copy.
    pub async fn emit_turn_end(&self, message: &H::V, tool_results: &H::V) -> Result<(), Stop> {
        let h = self.h;
        self.turn_open.set(false);
        let event = h.object(&[
            ("type", h.constant("turn_end")),
            ("message", message.clone()),
            ("toolResults", tool_results.clone()),
        ]);
        self.emit("turn_end", event).await
    }

    pub async fn emit_agent_end(&self) -> Result<(), Stop> {
        let h = self.h;
        let event = h.object(&[("type", h.constant("agent_end")), ("messages", self.new_messages.clone())]);
        self.emit("agent_end", event).await
    }

    /// Issue 32: `agent_end` of a run a limit stopped, with `limitReached: {limit, scope, max, value, message}`.
    pub async fn emit_agent_end_limited(&self, reached: &Reached) -> Result<(), Stop> {
        let h = self.h;
        let event = h.object(&[
            ("type", h.constant("agent_end")),
            ("messages", self.new_messages.clone()),
            ("limitReached", reached.to_value(h)),
        ]);
        self.emit("agent_end", event).await
    }

    /// Issue 30: `agent_end` of a run that pauses for approvals, with `approvals: {requests, completedTools}`.
    pub async fn emit_agent_end_paused(&self, pause: &crate::core::approvals::Pause<H::V>) -> Result<(), Stop> {
        let h = self.h;
        let approvals = crate::core::approvals::pause_object(h, pause);
        let event = h.object(&[
            ("type", h.constant("agent_end")),
            ("messages", self.new_messages.clone()),
            ("approvals", approvals),
        ]);
        self.emit("agent_end", event).await
    }

    /// `message_start` + `message_end` for a message, then appends it to the context and newMessages.
    pub async fn inject(&self, message: &H::V) -> Result<(), Stop> {
        self.emit_message("message_start", message).await?;
        self.emit_message("message_end", message).await?;
        self.append(message)
    }

    /// Appends to the working context's `messages` and to newMessages.
    pub fn append(&self, message: &H::V) -> Result<(), Stop> {
        let h = self.h;
        let messages = self.context_messages()?;
        h.array_push(&messages, message).map_err(|e| self.fail(&e))?;
        h.array_push(&self.new_messages, message).map_err(|e| self.fail(&e))
    }

    pub fn context_messages(&self) -> Result<H::V, Stop> {
        let h = self.h;
        let messages = h.get(&self.context(), "messages").map_err(|e| self.fail(&e))?;
        if h.kind(&messages) != Kind::Array {
            return Err(Stop::Failed("context.messages must be an array".into()));
        }
        Ok(messages)
    }

    // ---- callbacks

    /// Reads `config[name]`: `None` when absent, a failure when present but not a function.
    pub fn hook(&self, name: &str) -> Result<Option<H::V>, Stop> {
        let h = self.h;
        let f = h.get(&self.config(), name).map_err(|e| self.fail(&e))?;
        match h.kind(&f) {
            Kind::Undefined | Kind::Null => Ok(None),
            Kind::Function => Ok(Some(f)),
            _ => Err(Stop::Failed(format!("config.{name} must be a function"))),
        }
    }

    /// Calls the config hook `name` (with `this` = the current config) under the D4 deadline.
    pub async fn call_hook(&self, name: &str, args: &[H::V]) -> Result<Option<H::V>, Stop> {
        let Some(f) = self.hook(name)? else {
            return Ok(None);
        };
        self.call_fn(&f, args).await.map(Some)
    }

    /// Calls a hook already read with `hook` (`this` = the current config) under the D4 deadline: for arguments
    /// that are built only when the hook exists, as `config.hook?.(args)` evaluates them.
    pub async fn call_fn(&self, f: &H::V, args: &[H::V]) -> Result<H::V, Stop> {
        let config = self.config();
        match self.guarded(self.h.call(f, &config, args)).await {
            Some(Ok(v)) => Ok(v),
            Some(Err(e)) => Err(self.fail(&e)),
            None => Err(Stop::Failed("Operation aborted".into())),
        }
    }

    /// Awaits a callback's future, abandoning it (`None`) at the D4 deadline.
    pub async fn guarded<T>(&self, fut: HostFuture<T>) -> Option<T> {
        guarded(self.h, &self.signal, self.abort_grace_ms, fut).await
    }
}

/// Awaits `fut`, abandoning it (`None`) `grace_ms` after `signal` aborts (D4).
pub async fn guarded<H: FastPaths, T>(h: &H, signal: &H::V, grace_ms: f64, mut fut: HostFuture<T>) -> Option<T> {
    // A callback that answered synchronously (most hooks) needs no deadline: no abort listener, no promise.
    if let Poll::Ready(v) = futures::poll!(&mut fut) {
        return Some(v);
    }
    match select(fut, abandon_deadline(h, signal, grace_ms)).await {
        Either::Left((v, _)) => Some(v),
        Either::Right(((), _)) => None,
    }
}

/// A future that resolves `grace_ms` after `signal` aborts (D4); never without a signal or with an
/// infinite grace. The grace timer only exists once the abort happened.
pub fn abandon_deadline<'h, H: FastPaths>(h: &'h H, signal: &H::V, grace_ms: f64) -> LocalBoxFuture<'h, ()> {
    if h.kind(signal).is_nullish() || !grace_ms.is_finite() {
        return futures::future::pending().boxed_local();
    }
    let aborted = h.wait_abort(signal);
    async move {
        aborted.await;
        h.sleep(grace_ms).await;
    }
    .boxed_local()
}
