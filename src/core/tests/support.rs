//! Shared scaffolding for the native rule tests: message/tool builders, counting callbacks, a
//! queue getter, and `World`, which prepares and drives one run on the scripted host.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing, dead_code)]

use crate::core::agent_loop::{Start, drive, start_continue_run, start_prompt_run};
use crate::core::host::Host;
use crate::core::run::{Emitter, Run, SinkMode};
use crate::core::test_host::{
    EPOCH_MS, FauxProvider, Recorder, TV, TestHost, faux_assistant, faux_model, faux_text, faux_tool_call, user_message,
};
use futures::FutureExt;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// Strings compared against `Vec<String>` label lists.
pub fn strs(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

// ---------------------------------------------------------------------------------------------
// Messages, results, models
// ---------------------------------------------------------------------------------------------

pub fn text(s: &str) -> TV {
    faux_text(s)
}

pub fn user(s: &str) -> TV {
    user_message(s)
}

/// A tool-call block.
pub fn call(id: &str, name: &str, args: serde_json::Value) -> TV {
    faux_tool_call(id, name, args)
}

/// An assistant reply with one text block, `stopReason: "stop"`.
pub fn reply(s: &str) -> TV {
    faux_assistant(vec![faux_text(s)], "stop")
}

/// An assistant reply with these tool calls, `stopReason: "toolUse"`.
pub fn reply_calls(calls: Vec<TV>) -> TV {
    faux_assistant(calls, "toolUse")
}

/// `{content: [text], details: {}}`.
pub fn ok_result(s: &str) -> TV {
    TV::obj(&[("content", TV::arr(vec![text(s)])), ("details", TV::obj(&[]))])
}

/// `{content: [text], details: {}, ...extra}`.
pub fn ok_result_with(s: &str, extra: &[(&str, TV)]) -> TV {
    let r = ok_result(s);
    for (k, v) in extra {
        r.set(k, v.clone());
    }
    r
}

pub fn model() -> TV {
    faux_model()
}

/// A model with some fields replaced.
pub fn model_with(extra: &[(&str, TV)]) -> TV {
    let m = faux_model();
    for (k, v) in extra {
        m.set(k, v.clone());
    }
    m
}

const LLM_ROLES: [&str; 4] = ["system", "user", "assistant", "toolResult"];

/// Keeps the LLM roles (same objects), like the JS suites' `convertToLlm`.
pub fn convert_to_llm() -> TV {
    TV::func(|_h, _this, args| {
        let kept: Vec<TV> = args
            .first()
            .map(TV::items)
            .unwrap_or_default()
            .into_iter()
            .filter(|m| m.get("role").as_str().is_some_and(|r| LLM_ROLES.contains(&r)))
            .collect();
        Ok(TV::arr(kept))
    })
}

/// `{model, convertToLlm, ...extra}`.
pub fn config(extra: &[(&str, TV)]) -> TV {
    let c = TV::obj(&[("model", model()), ("convertToLlm", convert_to_llm())]);
    for (k, v) in extra {
        c.set(k, v.clone());
    }
    c
}

/// `{messages}`.
pub fn ctx(messages: Vec<TV>) -> TV {
    TV::obj(&[("messages", TV::arr(messages))])
}

/// `{messages, tools}`.
pub fn ctx_tools(messages: Vec<TV>, tools: Vec<TV>) -> TV {
    TV::obj(&[("messages", TV::arr(messages)), ("tools", TV::arr(tools))])
}

/// Text of a message: a string content, or its first text block.
pub fn first_text(m: &TV) -> String {
    let content = m.get("content");
    if let Some(s) = content.as_str() {
        return s.to_string();
    }
    content
        .items()
        .iter()
        .find(|b| b.get("type").as_str() == Some("text"))
        .map(|b| b.get("text").js_string())
        .unwrap_or_default()
}

pub fn roles(messages: &TV) -> Vec<String> {
    messages.items().iter().map(|m| m.get("role").js_string()).collect()
}

pub fn roles_of(messages: &[TV]) -> Vec<String> {
    messages.iter().map(|m| m.get("role").js_string()).collect()
}

/// `JSON.stringify(v)` through the host.
pub fn json(h: &TestHost, v: &TV) -> String {
    h.json_stringify(v, false).unwrap().unwrap_or_default()
}

/// The D1.2 / A-5.6.1 failure message JSON for the faux model at virtual time `now_ms`.
pub fn failure_json(stop_reason: &str, error_message: &str, now_ms: f64) -> serde_json::Value {
    serde_json::json!({
        "role": "assistant",
        "content": [{"type": "text", "text": ""}],
        "api": "faux", "provider": "faux", "model": "faux-1",
        "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
                  "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
        "stopReason": stop_reason,
        "errorMessage": error_message,
        "timestamp": js_int(EPOCH_MS + now_ms),
    })
}

/// A number as `TV::to_json` gives it (integral values as JSON integers).
pub fn js_int(x: f64) -> serde_json::Value {
    serde_json::from_str(&crate::core::test_host::js_number(x)).unwrap()
}

pub const FAILURE_KEYS: [&str; 9] =
    ["role", "content", "api", "provider", "model", "usage", "stopReason", "errorMessage", "timestamp"];

// ---------------------------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------------------------

/// A tool with an empty object schema.
pub fn tool(name: &str, execute: TV) -> TV {
    tool_with(name, execute, &[])
}

pub fn tool_with(name: &str, execute: TV, extra: &[(&str, TV)]) -> TV {
    let t = TV::obj(&[
        ("name", TV::str(name)),
        ("label", TV::str(name)),
        ("description", TV::Str(format!("{name} tool"))),
        ("parameters", TV::from_json(&serde_json::json!({"type": "object", "properties": {}}))),
        ("execute", execute),
    ]);
    for (k, v) in extra {
        t.set(k, v.clone());
    }
    t
}

/// `execute` returning `ok_result(text)` synchronously.
pub fn exec_ok(s: &str) -> TV {
    let s = s.to_string();
    TV::func(move |_h, _this, _args| Ok(ok_result(&s)))
}

/// `execute` resolving `result` after `ms` virtual ms.
pub fn exec_after(ms: f64, result: TV) -> TV {
    TV::async_func(move |h, _this, _args| {
        let sleep = h.sleep(ms);
        let result = result.clone();
        async move {
            sleep.await;
            Ok(result)
        }
        .boxed_local()
    })
}

/// `execute` rejecting with `thrown`.
pub fn exec_throw(thrown: TV) -> TV {
    TV::func(move |_h, _this, _args| Err(thrown.clone()))
}

/// A tool declaration as the loop writes it (no execute / label).
pub fn declaration(t: &TV) -> TV {
    TV::obj(&[("name", t.get("name")), ("description", t.get("description")), ("parameters", t.get("parameters"))])
}

/// A system message declaring `tools` (timestamp 0).
pub fn declaring(tools: &[TV]) -> TV {
    TV::obj(&[
        ("role", TV::str("system")),
        ("content", TV::str("")),
        ("timestamp", TV::num(0.0)),
        ("toolsAdded", TV::arr(tools.iter().map(declaration).collect())),
    ])
}

// ---------------------------------------------------------------------------------------------
// Counting callbacks and queues
// ---------------------------------------------------------------------------------------------

/// A counter shared with a callback.
#[derive(Clone, Default)]
pub struct Count(pub Rc<Cell<usize>>);

impl Count {
    pub fn new() -> Self {
        Count::default()
    }
    pub fn get(&self) -> usize {
        self.0.get()
    }
    pub fn bump(&self) -> usize {
        let n = self.0.get();
        self.0.set(n + 1);
        n
    }
}

/// A synchronous function that counts its calls and answers with `f(call index, args)`.
pub fn counted(f: impl Fn(usize, &[TV]) -> Result<TV, TV> + 'static) -> (TV, Count) {
    let count = Count::new();
    let c = count.clone();
    (TV::func(move |_h, _this, args| f(c.bump(), args)), count)
}

/// A function returning undefined that counts its calls.
pub fn counter() -> (TV, Count) {
    counted(|_, _| Ok(TV::Undefined))
}

/// A shared, ordered log of strings.
#[derive(Clone, Default)]
pub struct Log(pub Rc<RefCell<Vec<String>>>);

impl Log {
    pub fn new() -> Self {
        Log::default()
    }
    pub fn push(&self, s: impl Into<String>) {
        self.0.borrow_mut().push(s.into());
    }
    pub fn get(&self) -> Vec<String> {
        self.0.borrow().clone()
    }
}

/// A queue getter (the JS suites' `queue()`): drains all or one per poll, counts polls.
#[derive(Clone)]
pub struct Queue {
    pub items: Rc<RefCell<Vec<TV>>>,
    pub polls: Count,
    all: bool,
}

impl Queue {
    pub fn all() -> Self {
        Queue { items: Rc::default(), polls: Count::new(), all: true }
    }
    pub fn one_at_a_time() -> Self {
        Queue { items: Rc::default(), polls: Count::new(), all: false }
    }
    pub fn with(items: Vec<TV>) -> Self {
        let q = Queue::all();
        q.items.borrow_mut().extend(items);
        q
    }
    pub fn push(&self, m: TV) {
        self.items.borrow_mut().push(m);
    }
    pub fn len(&self) -> usize {
        self.items.borrow().len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    pub fn polls(&self) -> usize {
        self.polls.get()
    }
    /// The getter (an async function, like `async () => items.splice(...)`).
    pub fn getter(&self) -> TV {
        let q = self.clone();
        TV::async_func(move |_h, _this, _args| {
            q.polls.bump();
            let mut items = q.items.borrow_mut();
            let n = if q.all { items.len() } else { items.len().min(1) };
            let taken: Vec<TV> = items.drain(..n).collect();
            futures::future::ready(Ok(TV::arr(taken))).boxed_local()
        })
    }
}

// ---------------------------------------------------------------------------------------------
// Runs
// ---------------------------------------------------------------------------------------------

/// How to start and drive one run.
pub struct RunSpec {
    pub prompts: Option<Vec<TV>>,
    pub context: TV,
    pub config: TV,
    pub signal: TV,
    pub stream_fn: Option<TV>,
    pub sink: Option<TV>,
    pub mode: SinkMode,
}

impl RunSpec {
    /// A prompt run (`runAgentLoop`: barrier sink).
    pub fn prompt(prompts: Vec<TV>, context: TV, config: TV) -> Self {
        RunSpec {
            prompts: Some(prompts),
            context,
            config,
            signal: TV::Undefined,
            stream_fn: None,
            sink: None,
            mode: SinkMode::Barrier,
        }
    }
    /// A continuation run.
    pub fn resume(context: TV, config: TV) -> Self {
        RunSpec { prompts: None, ..RunSpec::prompt(Vec::new(), context, config) }
    }
    pub fn signal(mut self, signal: &TV) -> Self {
        self.signal = signal.clone();
        self
    }
    pub fn stream_fn(mut self, f: TV) -> Self {
        self.stream_fn = Some(f);
        self
    }
    pub fn sink(mut self, sink: TV) -> Self {
        self.sink = Some(sink);
        self
    }
    /// `agentLoop`: the sink is called synchronously and never awaited.
    pub fn observe(mut self) -> Self {
        self.mode = SinkMode::Observe;
        self
    }
}

/// A host, a faux provider and a recorder.
pub struct World {
    pub h: TestHost,
    pub faux: FauxProvider,
    pub rec: Recorder,
}

impl Default for World {
    fn default() -> Self {
        World::new()
    }
}

impl World {
    pub fn new() -> Self {
        let h = TestHost::new();
        let faux = FauxProvider::new(&h);
        World { h, faux, rec: Recorder::new() }
    }

    /// A world whose provider answers with these replies.
    pub fn with(replies: Vec<TV>) -> Self {
        let w = World::new();
        for r in replies {
            w.faux.push(r);
        }
        w
    }

    /// The synchronous start (L-3.1.3 / L-3.1.4).
    pub fn start(&self, spec: &RunSpec) -> Result<Start<TV>, TV> {
        match &spec.prompts {
            Some(prompts) => start_prompt_run(&self.h, &TV::arr(prompts.clone()), &spec.context),
            None => start_continue_run(&self.h, &spec.context),
        }
    }

    /// Starts (panicking on a start error) and drives a run to its end.
    pub fn exec(&self, spec: RunSpec) -> Result<TV, TV> {
        let start = self.start(&spec).unwrap_or_else(|e| panic!("start failed: {e:?}"));
        self.drive(start, &spec)
    }

    /// Drives a prepared run.
    pub fn drive(&self, start: Start<TV>, spec: &RunSpec) -> Result<TV, TV> {
        let h = &self.h;
        let sink = spec.sink.clone().unwrap_or_else(|| self.rec.sink());
        let stream_fn = spec.stream_fn.clone().unwrap_or_else(|| self.faux.stream_fn());
        h.run(async {
            let run = Run::new(
                h,
                start.context,
                spec.config.clone(),
                spec.signal.clone(),
                stream_fn,
                Emitter::new(sink, spec.mode),
            );
            drive(&run, start.initial).await
        })
    }

    /// A prompt run with the barrier sink; the run must resolve.
    pub fn prompt(&self, prompts: Vec<TV>, context: TV, config: TV) -> TV {
        self.exec(RunSpec::prompt(prompts, context, config)).unwrap_or_else(|e| panic!("run rejected: {e:?}"))
    }

    /// Labels without `message_update` / `tool_execution_update`.
    pub fn labels(&self) -> Vec<String> {
        self.rec
            .labels()
            .into_iter()
            .filter(|l| !l.starts_with("message_update") && !l.starts_with("tool_execution_update"))
            .collect()
    }

    /// Labels including updates.
    pub fn all_labels(&self) -> Vec<String> {
        self.rec.labels()
    }

    pub fn events(&self, kind: &str) -> Vec<TV> {
        self.rec.of_type(kind)
    }

    /// `tool_execution_end` events by id.
    pub fn end_of(&self, id: &str) -> TV {
        self.events("tool_execution_end")
            .into_iter()
            .find(|e| e.get("toolCallId").as_str() == Some(id))
            .unwrap_or_else(|| panic!("no tool_execution_end for {id}"))
    }

    /// Provider requests made.
    pub fn requests(&self) -> usize {
        self.faux.call_count()
    }

    /// Message texts of request `i` (`first_text` of each).
    pub fn request_texts(&self, i: usize) -> Vec<String> {
        self.faux.calls()[i].messages.iter().map(first_text).collect()
    }

    pub fn request_roles(&self, i: usize) -> Vec<String> {
        roles_of(&self.faux.calls()[i].messages)
    }

    /// E-8.4.4: no library timer or abort listener left.
    pub fn assert_clean(&self) {
        assert_eq!(self.h.pending_timers(), 0, "timers left");
        assert_eq!(self.h.abort_listener_count(), 0, "abort listeners left");
    }

    /// A fresh AbortController and its signal.
    pub fn controller(&self) -> (TV, TV) {
        self.h.abort_controller()
    }

    /// A function aborting `controller` when called (returns undefined).
    pub fn aborter(&self, controller: &TV) -> TV {
        let c = controller.clone();
        TV::func(move |h, _this, _args| {
            h.abort(&c, &TV::Undefined);
            Ok(TV::Undefined)
        })
    }
}

// ---------------------------------------------------------------------------------------------
// The Agent core (agent.rs), driven the way the JS facade drives it
// ---------------------------------------------------------------------------------------------

use crate::core::agent;
use crate::core::args::ArgError;

/// The text of an `ArgError` (a `TypeError` message, or the thrown value's message).
pub fn arg_error_text(h: &TestHost, e: ArgError<TV>) -> String {
    match e {
        ArgError::Type(message) => format!("TypeError: {message}"),
        ArgError::Thrown(v) => format!("thrown: {}", h.error_message(&v)),
    }
}

/// An agent facade object and its state object, with the faux provider as `streamFn`.
pub struct AgentWorld {
    pub h: TestHost,
    pub faux: FauxProvider,
    pub agent: TV,
    pub st: TV,
}

impl AgentWorld {
    /// `new Agent({streamFn: faux, ...options, initialState: {model: faux, ...initial}})`.
    pub fn new(options: &[(&str, TV)], initial: &[(&str, TV)]) -> Self {
        let h = TestHost::new();
        let faux = FauxProvider::new(&h);
        let init_state = TV::obj(&[("model", model())]);
        for (k, v) in initial {
            init_state.set(k, v.clone());
        }
        let opts = TV::obj(&[("streamFn", faux.stream_fn())]);
        for (k, v) in options {
            opts.set(k, v.clone());
        }
        opts.set("initialState", init_state);
        let w = AgentWorld::bare(h, faux);
        agent::init(&w.h, &w.agent, &w.st, &opts, &TV::Undefined)
            .unwrap_or_else(|e| panic!("{}", arg_error_text(&w.h, e)));
        w
    }

    /// An uninitialised facade (for `init` tests).
    pub fn bare(h: TestHost, faux: FauxProvider) -> Self {
        AgentWorld { h, faux, agent: TV::obj(&[]), st: TV::obj(&[]) }
    }

    pub fn push(&self, replies: Vec<TV>) {
        for r in replies {
            self.faux.push(r);
        }
    }

    /// Drives a run future returned by prompt/continue.
    fn finish(&self, started: Result<agent::RunFuture<TV>, TV>) -> Result<(), TV> {
        let run = started?;
        self.h.run(run)
    }

    /// `await agent.prompt(input)`.
    pub fn prompt(&self, input: TV) -> Result<(), TV> {
        self.finish(agent::prompt(&self.h, &self.agent, &self.st, &input, &TV::Undefined))
    }

    pub fn prompt_text(&self, s: &str) {
        self.prompt(TV::str(s)).unwrap_or_else(|e| panic!("prompt rejected: {e:?}"));
    }

    /// `await agent.continue()`.
    pub fn resume(&self) -> Result<(), TV> {
        self.finish(agent::continue_run(&self.h, &self.agent, &self.st, &TV::Undefined))
    }

    pub fn steer(&self, m: TV) {
        agent::enqueue(&self.h, &self.st, agent::Queue::Steering, &m, "Agent.steer")
            .unwrap_or_else(|e| panic!("{}", arg_error_text(&self.h, e)));
    }

    pub fn follow_up(&self, m: TV) {
        agent::enqueue(&self.h, &self.st, agent::Queue::FollowUp, &m, "Agent.followUp")
            .unwrap_or_else(|e| panic!("{}", arg_error_text(&self.h, e)));
    }

    /// `agent.abort()`: aborts the active run's controller (no-op when idle).
    pub fn abort(&self) {
        abort_agent(&self.h, &self.st);
    }

    /// `agent.subscribe(listener)`.
    pub fn subscribe(&self, listener: TV) -> TV {
        agent::subscribe(&self.h, &self.st, &listener).unwrap_or_else(|e| panic!("{}", arg_error_text(&self.h, e)))
    }

    /// Subscribes a recording listener; `on_event(event)` runs after recording.
    pub fn record(&self, on_event: impl Fn(&TestHost, &TV) + 'static) -> Recorder {
        let rec = Recorder::new();
        let sink = rec.sink();
        self.subscribe(TV::func(move |h, this, args| {
            h.call_sync(&sink, this, args)?;
            if let Some(e) = args.first() {
                on_event(h, e);
            }
            Ok(TV::Undefined)
        }));
        rec
    }

    pub fn messages(&self) -> Vec<TV> {
        self.st.get("messages").items()
    }

    pub fn state(&self, key: &str) -> TV {
        self.st.get(key)
    }

    /// Texts of `peekQueuedMessages()`.
    pub fn peek_texts(&self) -> Vec<String> {
        agent::peek_queued(&self.h, &self.st).unwrap().items().iter().map(first_text).collect()
    }

    pub fn has_queued(&self) -> bool {
        !self.st.get("steering").is_empty() || !self.st.get("followUp").is_empty()
    }

    pub fn texts(&self) -> Vec<String> {
        self.messages().iter().map(first_text).collect()
    }
}

/// `st.active?.controller.abort()`.
pub fn abort_agent(h: &TestHost, st: &TV) {
    let active = st.get("active");
    if active.truthy() {
        h.abort(&active.get("controller"), &TV::Undefined);
    }
}

// ---------------------------------------------------------------------------------------------
// Hand-made event sources
// ---------------------------------------------------------------------------------------------

use crate::core::test_host::StreamStep;

/// An async-iterable source yielding `events` (then done), with `result()` when given.
pub fn source_of(h: &TestHost, events: Vec<TV>, result: Option<TV>) -> TV {
    let steps = events.into_iter().map(StreamStep::Event).collect();
    let source = h.stream(steps).source;
    if let Some(r) = result {
        source.set("result", TV::func(move |_h, _this, _args| Ok(r.clone())));
    }
    source
}

/// A stream function returning `source` (this/args ignored).
pub fn returning(source: TV) -> TV {
    TV::func(move |_h, _this, _args| Ok(source.clone()))
}

/// `{type, ...fields}`.
pub fn event(kind: &str, fields: &[(&str, TV)]) -> TV {
    let e = TV::obj(&[("type", TV::str(kind))]);
    for (k, v) in fields {
        e.set(k, v.clone());
    }
    e
}

/// A shallow copy of `m` with `stopReason: "pending"`.
pub fn pending_copy(h: &TestHost, m: &TV) -> TV {
    let p = h.shallow_copy(m).unwrap();
    p.set("stopReason", TV::str("pending"));
    p
}

/// A finished assistant message (timestamp set).
pub fn assistant_message(s: &str) -> TV {
    let m = reply(s);
    m.set("timestamp", TV::num(EPOCH_MS));
    m
}
