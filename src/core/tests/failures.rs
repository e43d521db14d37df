//! Failures and aborts: D1 per callback kind (throws, rejects, wrong kind of return), D2 abort at
//! every step, D4 abandonment, E-8.1 argument checks (exact TypeError texts), hostile getters.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use super::support::*;
use crate::core::args::{ArgError, Checker};
use crate::core::host::Host;
use crate::core::test_host::{EPOCH_MS, StreamStep, TV, TestHost};
use futures::FutureExt;
use serde_json::json;

const HEAD: [&str; 4] = ["agent_start", "turn_start", "message_start:user", "message_end:user"];
const FAIL_TAIL: [&str; 4] = ["message_start:assistant", "message_end:assistant", "turn_end", "agent_end"];
const FIRST_TURN: [&str; 2] = ["message_start:assistant", "message_end:assistant"];

fn throwing(thrown: TV) -> TV {
    TV::func(move |_h, _this, _args| Err(thrown.clone()))
}

fn rejecting(thrown: TV) -> TV {
    TV::async_func(move |_h, _this, _args| futures::future::ready(Err(thrown.clone())).boxed_local())
}

fn returning_value(v: TV) -> TV {
    TV::func(move |_h, _this, _args| Ok(v.clone()))
}

/// `n`-th call (0-based) throws `message`, others return `ok`.
fn throws_on(n: usize, message: &'static str, ok: TV) -> TV {
    counted(move |i, _| if i == n { Err(TV::error(message)) } else { Ok(ok.clone()) }).0
}

/// Asserts the D1.2 synthesized message.
fn assert_synthesized(m: &TV, stop_reason: &str, error: &str, now_ms: f64) {
    assert_eq!(m.keys()[..9], strs(&FAILURE_KEYS));
    let mut picked = m.to_json();
    if let Some(o) = picked.as_object_mut() {
        o.remove("thinkingLevel");
    }
    assert_eq!(picked, failure_json(stop_reason, error, now_ms));
}

enum Expect {
    Exact(&'static str),
    Prefix(&'static str),
}

struct D1Case {
    name: &'static str,
    extra: Vec<(&'static str, TV)>,
    stream_fn: Option<TV>,
    with_tool: bool,
    labels: Vec<&'static str>,
    error: Expect,
    requests: usize,
}

fn labels_of(parts: &[&[&'static str]]) -> Vec<&'static str> {
    parts.iter().flat_map(|p| p.iter().copied()).collect()
}

fn d1_cases() -> Vec<D1Case> {
    let head_fail = labels_of(&[&HEAD, &FAIL_TAIL]);
    let between = labels_of(&[&HEAD, &FIRST_TURN, &["turn_end", "turn_start"], &FAIL_TAIL]);
    let after_tool = labels_of(&[
        &HEAD,
        &FIRST_TURN,
        &["tool_execution_start:c1", "tool_execution_end:c1", "message_start:toolResult", "message_end:toolResult"],
        &["turn_end", "turn_start"],
        &FAIL_TAIL,
    ]);
    let case = |name, extra: Vec<(&'static str, TV)>, labels: &Vec<&'static str>, error, requests| D1Case {
        name,
        extra,
        stream_fn: None,
        with_tool: false,
        labels: labels.clone(),
        error,
        requests,
    };
    vec![
        case(
            "convertToLlm throws",
            vec![("convertToLlm", throwing(TV::error("convert failed")))],
            &head_fail,
            Expect::Exact("convert failed"),
            0,
        ),
        case(
            "convertToLlm rejects",
            vec![("convertToLlm", rejecting(TV::error("convert rejected")))],
            &head_fail,
            Expect::Exact("convert rejected"),
            0,
        ),
        case(
            "convertToLlm returns a non-array",
            vec![("convertToLlm", returning_value(TV::obj(&[("messages", TV::arr(vec![]))])))],
            &head_fail,
            Expect::Exact("convertToLlm must return an array of messages"),
            0,
        ),
        case(
            "convertToLlm returns undefined",
            vec![("convertToLlm", returning_value(TV::Undefined))],
            &head_fail,
            Expect::Exact("convertToLlm must return an array of messages"),
            0,
        ),
        case(
            "transformContext rejects",
            vec![("transformContext", rejecting(TV::error("transform failed")))],
            &head_fail,
            Expect::Exact("transform failed"),
            0,
        ),
        case(
            "transformContext returns a non-array",
            vec![("transformContext", returning_value(TV::str("nope")))],
            &head_fail,
            Expect::Exact("transformContext must return an array of messages"),
            0,
        ),
        case(
            "getApiKey throws a string",
            vec![("getApiKey", throwing(TV::str("no key")))],
            &head_fail,
            Expect::Exact("no key"),
            0,
        ),
        D1Case {
            stream_fn: Some(throwing(TV::error("provider exploded"))),
            ..case("streamFn throws", vec![], &head_fail, Expect::Exact("provider exploded"), 0)
        },
        D1Case {
            stream_fn: Some(rejecting(TV::error("provider rejected"))),
            ..case("streamFn rejects", vec![], &head_fail, Expect::Exact("provider rejected"), 0)
        },
        D1Case {
            stream_fn: Some(returning_value(TV::obj(&[("not", TV::str("a stream"))]))),
            ..case(
                "streamFn returns a non-iterable",
                vec![],
                &head_fail,
                Expect::Exact("streamFn must return an async iterable of assistant message events"),
                0,
            )
        },
        D1Case {
            stream_fn: Some(TV::async_func(|_h, _this, _args| futures::future::ready(Ok(TV::num(42.0))).boxed_local())),
            ..case(
                "streamFn resolves a number",
                vec![],
                &head_fail,
                Expect::Exact("streamFn must return an async iterable of assistant message events"),
                0,
            )
        },
        D1Case {
            stream_fn: Some(TV::func(|_h, _this, _args| {
                let s = TV::obj(&[]);
                s.set_async_iterator(throwing(TV::error("no iterator")));
                Ok(s)
            })),
            ..case("the source's iterator method throws", vec![], &head_fail, Expect::Exact("no iterator"), 0)
        },
        case(
            "getSteeringMessages throws at S0",
            vec![("getSteeringMessages", rejecting(TV::error("steer failed")))],
            &head_fail,
            Expect::Exact("steer failed"),
            0,
        ),
        case(
            "getSteeringMessages returns a non-array",
            vec![("getSteeringMessages", returning_value(TV::str("x")))],
            &head_fail,
            Expect::Exact("getSteeringMessages must return an array of messages"),
            0,
        ),
        case(
            "getSteeringMessages throws at S1",
            vec![("getSteeringMessages", throws_on(1, "S1 failed", TV::arr(vec![])))],
            &between,
            Expect::Exact("S1 failed"),
            1,
        ),
        case(
            "getFollowUpMessages throws",
            vec![("getFollowUpMessages", rejecting(TV::error("follow failed")))],
            &between,
            Expect::Exact("follow failed"),
            1,
        ),
        case(
            "getFollowUpMessages returns a non-array",
            vec![("getFollowUpMessages", returning_value(TV::num(7.0)))],
            &between,
            Expect::Exact("getFollowUpMessages must return an array of messages"),
            1,
        ),
        D1Case {
            with_tool: true,
            ..case(
                "prepareNextTurn throws",
                vec![("prepareNextTurn", throwing(TV::error("next failed")))],
                &after_tool,
                Expect::Exact("next failed"),
                1,
            )
        },
        D1Case {
            with_tool: true,
            ..case(
                "prepareNextTurn returns an invalid update",
                vec![("prepareNextTurn", returning_value(TV::num(42.0)))],
                &after_tool,
                Expect::Exact("prepareNextTurn returned an invalid update: expected an object"),
                1,
            )
        },
        D1Case {
            with_tool: true,
            ..case(
                "prepareNextTurn returns non-array messages",
                vec![("prepareNextTurn", returning_value(TV::obj(&[("messages", TV::str("x"))])))],
                &after_tool,
                Expect::Prefix("prepareNextTurn returned an invalid update: "),
                1,
            )
        },
        case(
            "prepareRequest throws",
            vec![("prepareRequest", rejecting(TV::error("prepare failed")))],
            &head_fail,
            Expect::Exact("prepare failed"),
            0,
        ),
        case(
            "prepareRequest returns a non-object",
            vec![("prepareRequest", returning_value(TV::str("nope")))],
            &head_fail,
            Expect::Exact("prepareRequest returned an invalid update: expected an object"),
            0,
        ),
        case(
            "prepareRequest returns a bad context",
            vec![(
                "prepareRequest",
                returning_value(TV::obj(&[("context", TV::obj(&[("messages", TV::str("nope"))]))])),
            )],
            &head_fail,
            Expect::Prefix("prepareRequest returned an invalid update: "),
            0,
        ),
        case(
            "prepareRequest returns a non-object context",
            vec![("prepareRequest", returning_value(TV::obj(&[("context", TV::num(5.0))])))],
            &head_fail,
            Expect::Prefix("prepareRequest returned an invalid update: "),
            0,
        ),
        case(
            "finishTurn throws (turn open)",
            vec![("finishTurn", throwing(TV::error("finish failed")))],
            &labels_of(&[&HEAD, &FIRST_TURN, &FAIL_TAIL]),
            Expect::Exact("finish failed"),
            1,
        ),
        case(
            "transformContext throws",
            vec![("transformContext", throwing(TV::error("transform threw")))],
            &head_fail,
            Expect::Exact("transform threw"),
            0,
        ),
        case(
            "getApiKey rejects",
            vec![("getApiKey", rejecting(TV::error("key rejected")))],
            &head_fail,
            Expect::Exact("key rejected"),
            0,
        ),
        case(
            "prepareRequest throws synchronously",
            vec![("prepareRequest", throwing(TV::num(404.0)))],
            &head_fail,
            Expect::Exact("404"),
            0,
        ),
        case(
            "finishTurn rejects (turn open)",
            vec![("finishTurn", rejecting(TV::error("finish rejected")))],
            &labels_of(&[&HEAD, &FIRST_TURN, &FAIL_TAIL]),
            Expect::Exact("finish rejected"),
            1,
        ),
        case(
            "getFollowUpMessages returns an object",
            vec![("getFollowUpMessages", returning_value(TV::obj(&[("length", TV::num(1.0))])))],
            &between,
            Expect::Exact("getFollowUpMessages must return an array of messages"),
            1,
        ),
        D1Case {
            with_tool: true,
            ..case(
                "prepareNextTurn rejects",
                vec![("prepareNextTurn", rejecting(TV::error("next rejected")))],
                &after_tool,
                Expect::Exact("next rejected"),
                1,
            )
        },
        case(
            "a hook that is not a function",
            vec![("transformContext", TV::num(5.0))],
            &head_fail,
            Expect::Exact("config.transformContext must be a function"),
            0,
        ),
        case(
            "a thenable whose then getter throws",
            vec![(
                "prepareRequest",
                returning_value({
                    let t = TV::obj(&[]);
                    t.throwing_getter("then", TV::error("then getter"));
                    t
                }),
            )],
            &head_fail,
            Expect::Exact("then getter"),
            0,
        ),
    ]
}

fn run_d1_case(c: &D1Case, observe: bool) {
    let w = World::with(if c.with_tool {
        vec![reply_calls(vec![call("c1", "echo", json!({}))]), reply("never")]
    } else {
        vec![reply("first answer"), reply("never")]
    });
    let finish_reasons = Log::new();
    let cfg = config(&[]);
    for (k, v) in &c.extra {
        cfg.set(k, v.clone());
    }
    let user_finish = cfg.get("finishTurn");
    let fr = finish_reasons.clone();
    cfg.set(
        "finishTurn",
        TV::func(move |h, this, args| {
            fr.push(args[0].path("message.stopReason").js_string());
            if user_finish.is_func() { h.call_sync(&user_finish, this, args) } else { Ok(TV::Undefined) }
        }),
    );
    let tools = if c.with_tool { vec![tool("echo", exec_ok("echo"))] } else { vec![] };
    let mut spec = RunSpec::prompt(vec![user("go")], ctx_tools(vec![], tools), cfg);
    if let Some(f) = &c.stream_fn {
        spec = spec.stream_fn(f.clone());
    }
    if observe {
        spec = spec.observe();
    }
    let result = w.exec(spec).unwrap_or_else(|e| panic!("{}: run rejected {e:?}", c.name));
    let mut expected: Vec<&str> = c.labels.clone();
    if c.with_tool {
        expected.splice(2..2, ["message_start:system", "message_end:system"]);
    }
    assert_eq!(w.labels(), strs(&expected), "{}", c.name);
    let failure = result.items().pop().unwrap();
    let message = failure.str_at("errorMessage");
    match c.error {
        Expect::Exact(text) => assert_eq!(message, text, "{}", c.name),
        Expect::Prefix(prefix) => {
            assert!(message.starts_with(prefix) && message.len() > prefix.len(), "{}: {message}", c.name)
        }
    }
    assert_synthesized(&failure, "error", &message, 0.0);
    let events = w.rec.events();
    assert!(events.last().unwrap().get("messages").same(&result), "{}: agent_end carries newMessages", c.name);
    let turn_end = w.events("turn_end").pop().unwrap();
    assert!(turn_end.get("message").same(&failure));
    assert!(turn_end.get("toolResults").is_empty());
    assert!(w.events("message_end").pop().unwrap().get("message").same(&failure));
    if c.stream_fn.is_none() {
        assert_eq!(w.requests(), c.requests, "{}", c.name);
    }
    assert!(!finish_reasons.get().contains(&"error".to_string()), "{}: no callback after the failure", c.name);
    w.assert_clean();
}

#[test]
fn d1_every_callback_failure_ends_with_the_exact_d1_2_ending_observed() {
    for c in d1_cases() {
        run_d1_case(&c, true);
    }
}

#[test]
fn d1_every_callback_failure_ends_with_the_exact_d1_2_ending_barrier() {
    for c in d1_cases() {
        run_d1_case(&c, false);
    }
}

#[test]
fn d1_1_after_a_failure_no_further_callback_runs() {
    let w = World::with(vec![reply("x")]);
    let (steering, follow_up) = (Queue::all(), Queue::all());
    let (finish, finished) = counter();
    let (next, nexts) = counter();
    let result = w.prompt(
        vec![user("go")],
        ctx(vec![]),
        config(&[
            ("convertToLlm", throwing(TV::error("boom"))),
            ("getSteeringMessages", steering.getter()),
            ("getFollowUpMessages", follow_up.getter()),
            ("finishTurn", finish),
            ("prepareNextTurn", next),
        ]),
    );
    assert_eq!(result.items().pop().unwrap().str_at("errorMessage"), "boom");
    assert_eq!((steering.polls(), follow_up.polls(), finished.get(), nexts.get()), (1, 0, 0, 0));
}

#[test]
fn d1_2_a_failure_with_a_streamed_partial_ends_with_a_shallow_copy_of_it() {
    let w = World::new();
    let h = &w.h;
    let partial = pending_copy(h, &assistant_message("half an ans"));
    partial.set("timestamp", TV::num(EPOCH_MS - 5.0));
    let stream = h.stream(vec![
        StreamStep::Event(event("start", &[("partial", partial.clone())])),
        StreamStep::Event(event("text_start", &[("contentIndex", TV::num(0.0)), ("partial", partial.clone())])),
        StreamStep::Event(event(
            "text_delta",
            &[("contentIndex", TV::num(0.0)), ("delta", TV::str("half an ans")), ("partial", partial.clone())],
        )),
        StreamStep::Delay(3.0),
        StreamStep::Throw(TV::error("connection reset")),
    ]);
    let result = w
        .exec(RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[])).stream_fn(returning(stream.source.clone())))
        .unwrap();
    assert_eq!(
        w.all_labels(),
        strs(&[
            "agent_start",
            "turn_start",
            "message_start:user",
            "message_end:user",
            "message_start:assistant",
            "message_update:assistant",
            "message_update:assistant",
            "message_end:assistant",
            "turn_end",
            "agent_end",
        ])
    );
    let fin = result.at(1);
    assert!(!fin.same(&partial));
    assert_eq!(fin.str_at("stopReason"), "error");
    assert_eq!(fin.str_at("errorMessage"), "connection reset");
    assert!(fin.get("content").same(&partial.get("content")), "a shallow copy");
    assert_eq!(fin.num_at("timestamp"), EPOCH_MS - 5.0);
    assert_eq!(partial.str_at("stopReason"), "pending", "the partial itself is untouched");
    assert!(w.events("message_end")[1].get("message").same(&fin));
    assert_eq!(result.len(), 2);
    assert_eq!(w.h.now(), 3.0);
}

#[test]
fn d1_2_stop_reason_is_aborted_when_the_signal_was_aborted_at_the_failure() {
    let w = World::with(vec![reply("x")]);
    let (controller, signal) = w.controller();
    let get_key = TV::func(move |h, _this, _args| {
        h.abort(&controller, &TV::Undefined);
        Err(TV::error("key lookup cancelled"))
    });
    let result = w
        .exec(RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[("getApiKey", get_key)])).signal(&signal))
        .unwrap();
    assert_synthesized(&result.at(1), "aborted", "key lookup cancelled", 0.0);
    assert_eq!(w.requests(), 0);
}

#[test]
fn d1_2_drained_steering_is_injected_before_the_failure_message() {
    let w = World::with(vec![reply("one"), reply("never")]);
    let steer = user("steer me");
    let s = steer.clone();
    let (steering, _) = counted(move |n, _| Ok(TV::arr(if n == 1 { vec![s.clone()] } else { vec![] })));
    let result = w.prompt(
        vec![user("go")],
        ctx(vec![]),
        config(&[("getSteeringMessages", steering), ("prepareNextTurn", throwing(TV::error("next failed")))]),
    );
    assert_eq!(
        w.labels(),
        strs(&labels_of(&[
            &HEAD,
            &FIRST_TURN,
            &["turn_end", "turn_start", "message_start:user", "message_end:user"],
            &FAIL_TAIL
        ]))
    );
    let items = result.items();
    assert!(items[items.len() - 2].same(&steer));
    assert_synthesized(&items[items.len() - 1], "error", "next failed", 0.0);
}

#[test]
fn d1_2_prepared_messages_are_injected_before_the_failure_message() {
    let w = World::with(vec![reply("one"), reply("never")]);
    let prepared = user("prepared");
    let p = prepared.clone();
    let polls = Count::new();
    let pl = polls.clone();
    let steering = TV::func(move |_h, _this, _args| {
        if pl.bump() == 2 {
            return Err(TV::error("S2 failed"));
        }
        Ok(TV::arr(vec![]))
    });
    let pl = polls.clone();
    let finish = TV::func(move |_h, _this, _args| {
        Ok(if pl.get() < 3 { TV::obj(&[("action", TV::str("continue"))]) } else { TV::Undefined })
    });
    let result = w.prompt(
        vec![user("go")],
        ctx(vec![]),
        config(&[
            ("getSteeringMessages", steering),
            ("finishTurn", finish),
            ("prepareNextTurn", returning_value(TV::obj(&[("messages", TV::arr(vec![p]))]))),
        ]),
    );
    assert_eq!(
        w.labels(),
        strs(&labels_of(&[
            &HEAD,
            &FIRST_TURN,
            &["turn_end", "turn_start", "message_start:user", "message_end:user"],
            &FAIL_TAIL
        ]))
    );
    let items = result.items();
    assert!(items[items.len() - 2].same(&prepared));
    assert_synthesized(&items[items.len() - 1], "error", "S2 failed", 0.0);
}

#[test]
fn d1_2_the_synthesized_message_uses_the_current_config_model() {
    let w = World::with(vec![reply_calls(vec![call("c1", "echo", json!({}))]), reply("never")]);
    let m2 =
        model_with(&[("id", TV::str("m2")), ("api", TV::str("other-api")), ("provider", TV::str("other-provider"))]);
    let m2b = m2.clone();
    let prepare = TV::func(move |_h, _this, args| {
        if args[0].get("model").same(&m2b) {
            return Err(TV::error("second request failed"));
        }
        Ok(TV::Undefined)
    });
    let result = w.prompt(
        vec![user("go")],
        ctx_tools(vec![], vec![tool("echo", exec_ok("x"))]),
        config(&[("prepareNextTurn", returning_value(TV::obj(&[("model", m2)]))), ("prepareRequest", prepare)]),
    );
    let f = result.items().pop().unwrap();
    assert_eq!(
        (f.str_at("api"), f.str_at("provider"), f.str_at("model")),
        ("other-api".into(), "other-provider".into(), "m2".into())
    );
    assert_eq!(f.str_at("errorMessage"), "second request failed");
}

#[test]
fn d1_continuation_runs_end_the_same_way() {
    let w = World::new();
    let result = w
        .exec(RunSpec::resume(ctx(vec![user("hi")]), config(&[])).stream_fn(throwing(TV::error("provider exploded"))))
        .unwrap();
    assert_eq!(w.labels(), strs(&labels_of(&[&["agent_start", "turn_start"], &FAIL_TAIL])));
    assert_eq!(result.len(), 1);
    assert_synthesized(&result.at(0), "error", "provider exploded", 0.0);
}

#[test]
fn d1_a_failure_later_in_virtual_time_is_stamped_with_date_now() {
    let w = World::with(vec![reply("x")]);
    let slow_fail = TV::async_func(|h, _this, _args| {
        let sleep = h.sleep(250.0);
        async move {
            sleep.await;
            Err(TV::error("late failure"))
        }
        .boxed_local()
    });
    let result = w.prompt(vec![user("go")], ctx(vec![]), config(&[("transformContext", slow_fail)]));
    assert_synthesized(&result.at(1), "error", "late failure", 250.0);
}

// ---------------------------------------------------------------------------------------------
// D2 abort is final
// ---------------------------------------------------------------------------------------------

/// A stream function that records whether the signal was aborted at each request.
fn watching(w: &World, log: &Log) -> TV {
    let (stream, log) = (w.faux.stream_fn(), log.clone());
    TV::func(move |h, this, args| {
        log.push(h.signal_aborted(&args[2].get("signal")).to_string());
        h.call_sync(&stream, this, args)
    })
}

fn assert_one_end_per_start(w: &World) {
    let starts: Vec<String> = w.events("tool_execution_start").iter().map(|e| e.str_at("toolCallId")).collect();
    let mut ends: Vec<String> = w.events("tool_execution_end").iter().map(|e| e.str_at("toolCallId")).collect();
    ends.sort();
    let mut sorted = starts.clone();
    sorted.sort();
    assert_eq!(sorted, ends, "exactly one end per started call");
    let results: Vec<String> = w
        .events("message_end")
        .iter()
        .filter(|e| e.path("message.role").as_str() == Some("toolResult"))
        .map(|e| e.path("message.toolCallId").js_string())
        .collect();
    assert_eq!(results, starts, "one result message per call, in source order");
}

#[test]
fn d2_1_a_signal_aborted_before_the_run_no_poll_no_request() {
    let w = World::with(vec![reply("never")]);
    let (controller, signal) = w.controller();
    w.h.abort(&controller, &TV::Undefined);
    let steering = Queue::with(vec![user("not drained")]);
    let follow_up = Queue::all();
    let prompt = user("go");
    let result = w
        .exec(
            RunSpec::prompt(
                vec![prompt.clone()],
                ctx(vec![]),
                config(&[("getSteeringMessages", steering.getter()), ("getFollowUpMessages", follow_up.getter())]),
            )
            .signal(&signal),
        )
        .unwrap();
    assert_eq!((w.requests(), steering.polls(), follow_up.polls(), steering.len()), (0, 0, 0, 1));
    assert_eq!(w.labels(), strs(&labels_of(&[&HEAD, &FAIL_TAIL])));
    assert!(result.at(0).same(&prompt));
    assert_synthesized(&result.at(1), "aborted", "Request was aborted", 0.0);
    w.assert_clean();
}

#[test]
fn d2_1_a_continuation_with_an_aborted_signal_ends_with_agent_end_only() {
    let w = World::with(vec![reply("never")]);
    let (controller, signal) = w.controller();
    w.h.abort(&controller, &TV::Undefined);
    let result = w.exec(RunSpec::resume(ctx(vec![user("hi")]), config(&[])).signal(&signal)).unwrap();
    assert_eq!(w.requests(), 0);
    assert_eq!(w.labels(), strs(&labels_of(&[&["agent_start", "turn_start"], &FAIL_TAIL])));
    assert_synthesized(&result.at(0), "aborted", "Request was aborted", 0.0);
}

#[test]
fn d2_2_abort_during_streaming_takes_the_hard_exit_path() {
    let w = World::with(vec![reply("a long answer that will be cut off by the abort"), reply("never")]);
    w.faux.set_chunk_delay(2.0);
    let (controller, signal) = w.controller();
    w.h.abort_at(&controller, 5.0);
    let (steering, follow_up) = (Queue::all(), Queue::all());
    let (finish, finished) = counted(|_, _| Ok(TV::obj(&[("action", TV::str("continue"))])));
    let requests = Log::new();
    let result = w
        .exec(
            RunSpec::prompt(
                vec![user("go")],
                ctx(vec![]),
                config(&[
                    ("getSteeringMessages", steering.getter()),
                    ("getFollowUpMessages", follow_up.getter()),
                    ("finishTurn", finish),
                ]),
            )
            .signal(&signal)
            .stream_fn(watching(&w, &requests)),
        )
        .unwrap();
    assert_eq!(requests.get(), strs(&["false"]), "one request, made before the abort");
    let last = result.at(1);
    assert_eq!(last.str_at("stopReason"), "aborted");
    assert_eq!(last.str_at("errorMessage"), "Request was aborted");
    assert_eq!(first_text(&last), "a long ");
    assert_eq!(w.labels()[4..], strs(&FAIL_TAIL));
    assert_eq!((steering.polls(), follow_up.polls(), finished.get()), (1, 0, 1));
    assert_eq!(w.h.now(), 6.0);
    w.assert_clean();
}

#[test]
fn d2_3_abort_during_a_sequential_batch_no_further_request_no_queue_drained() {
    let w =
        World::with(vec![reply_calls(vec![call("c1", "t", json!({})), call("c2", "t", json!({}))]), reply("never")]);
    let (controller, signal) = w.controller();
    let steering = Queue::all();
    let follow_up = Queue::with(vec![user("follow")]);
    let s = steering.clone();
    let t = tool(
        "t",
        TV::func(move |h, _this, _args| {
            s.push(user("steer during tool"));
            h.abort(&controller, &TV::Undefined);
            Ok(ok_result("stopped"))
        }),
    );
    let seen = Log::new();
    let sn = seen.clone();
    let finish = TV::func(move |_h, _this, args| {
        sn.push(args[0].get("toolResults").len().to_string());
        Ok(TV::obj(&[("action", TV::str("continue"))]))
    });
    let requests = Log::new();
    let result = w
        .exec(
            RunSpec::prompt(
                vec![user("go")],
                ctx_tools(vec![], vec![t]),
                config(&[
                    ("toolExecution", TV::str("sequential")),
                    ("getSteeringMessages", steering.getter()),
                    ("getFollowUpMessages", follow_up.getter()),
                    ("finishTurn", finish),
                ]),
            )
            .signal(&signal)
            .stream_fn(watching(&w, &requests)),
        )
        .unwrap();
    assert_eq!(requests.get(), strs(&["false"]));
    let labels = w.labels();
    assert_eq!(
        labels[labels.len() - 10..],
        strs(&[
            "tool_execution_start:c1",
            "tool_execution_end:c1",
            "message_start:toolResult",
            "message_end:toolResult",
            "tool_execution_start:c2",
            "tool_execution_end:c2",
            "message_start:toolResult",
            "message_end:toolResult",
            "turn_end",
            "agent_end",
        ])
    );
    assert_eq!(first_text(&w.end_of("c2").get("result")), "Operation aborted");
    assert_eq!(seen.get(), strs(&["2"]), "finishTurn once, decision ignored");
    assert_eq!(roles(&result), strs(&["system", "user", "assistant", "toolResult", "toolResult"]));
    assert_eq!((steering.polls(), follow_up.polls(), steering.len(), follow_up.len()), (1, 0, 1, 1));
    assert_one_end_per_start(&w);
    w.assert_clean();
}

#[test]
fn d2_3_parallel_abort_running_calls_keep_their_results_and_run_after_tool_call() {
    let w = World::with(vec![
        reply_calls(vec![
            call("c1", "aborter", json!({})),
            call("c2", "waiter", json!({})),
            call("c3", "waiter", json!({})),
        ]),
        reply("never"),
    ]);
    let (controller, signal) = w.controller();
    let aborter = tool(
        "aborter",
        TV::async_func(move |h, _this, _args| {
            let (sleep, h, c) = (h.sleep(5.0), h.clone(), controller.clone());
            async move {
                sleep.await;
                h.abort(&c, &TV::Undefined);
                Ok(ok_result("aborted the run"))
            }
            .boxed_local()
        }),
    );
    let waiter = tool(
        "waiter",
        TV::async_func(|h, _this, args| {
            let wait = h.wait_abort(&args[2]);
            async move {
                wait.await;
                Ok(ok_result_with("noticed abort", &[("isError", TV::Bool(true))]))
            }
            .boxed_local()
        }),
    );
    let after = Log::new();
    let a = after.clone();
    let after_hook = TV::func(move |_h, _this, args| {
        a.push(args[0].path("toolCall.id").js_string());
        Ok(TV::Undefined)
    });
    let requests = Log::new();
    let result = w
        .exec(
            RunSpec::prompt(
                vec![user("go")],
                ctx_tools(vec![], vec![aborter, waiter]),
                config(&[("afterToolCall", after_hook)]),
            )
            .signal(&signal)
            .stream_fn(watching(&w, &requests)),
        )
        .unwrap();
    assert_eq!(requests.get(), strs(&["false"]));
    assert_eq!(first_text(&w.end_of("c1").get("result")), "aborted the run");
    assert_eq!(first_text(&w.end_of("c2").get("result")), "noticed abort");
    assert_eq!(w.end_of("c2").get("isError").as_bool(), Some(true));
    assert_eq!(w.end_of("c2").get("durationMs").as_num(), Some(5.0));
    let mut seen = after.get();
    seen.sort();
    assert_eq!(seen, strs(&["c1", "c2", "c3"]));
    let ids: Vec<String> = result
        .items()
        .iter()
        .filter(|m| m.get("role").as_str() == Some("toolResult"))
        .map(|m| m.str_at("toolCallId"))
        .collect();
    assert_eq!(ids, strs(&["c1", "c2", "c3"]));
    assert_eq!(w.rec.types()[w.rec.len() - 2..], strs(&["turn_end", "agent_end"]));
    assert_one_end_per_start(&w);
    w.assert_clean();
}

#[test]
fn d2_4_abort_between_turns_with_nothing_drained_ends_right_after_turn_end() {
    let echo = tool("echo", exec_ok("x"));
    let w = World::with(vec![reply_calls(vec![call("c1", "echo", json!({}))]), reply("never")]);
    let (controller, signal) = w.controller();
    let steering = Queue::all();
    let (next, nexts) = counter();
    let (prepare, preparations) = counter();
    w.exec(
        RunSpec::prompt(
            vec![user("go")],
            ctx_tools(vec![declaring(std::slice::from_ref(&echo))], vec![echo]),
            config(&[
                ("getSteeringMessages", steering.getter()),
                ("prepareNextTurn", next),
                ("prepareRequest", prepare),
                ("finishTurn", w.aborter(&controller)),
            ]),
        )
        .signal(&signal),
    )
    .unwrap();
    assert_eq!(w.requests(), 1);
    let labels = w.labels();
    assert_eq!(
        labels[labels.len() - 6..],
        strs(&[
            "tool_execution_start:c1",
            "tool_execution_end:c1",
            "message_start:toolResult",
            "message_end:toolResult",
            "turn_end",
            "agent_end"
        ])
    );
    assert_eq!((steering.polls(), nexts.get(), preparations.get()), (1, 0, 1));
    w.assert_clean();
}

fn d2_b_loop_variant(steering_kind: bool) {
    let w = World::with(vec![reply("first"), reply("never")]);
    let (controller, signal) = w.controller();
    let queued = user("queued");
    let (steering, follow_up) = (Queue::all(), Queue::all());
    let target = if steering_kind { steering.clone() } else { follow_up.clone() };
    let q = queued.clone();
    let (finish, _) = counted(move |_, _| {
        target.push(q.clone());
        Ok(TV::Undefined)
    });
    let (prepare, preparations) = counter();
    let result = w
        .exec(
            RunSpec::prompt(
                vec![user("go")],
                ctx(vec![]),
                config(&[
                    ("getSteeringMessages", steering.getter()),
                    ("getFollowUpMessages", follow_up.getter()),
                    ("prepareRequest", prepare),
                    ("finishTurn", finish),
                    ("prepareNextTurn", w.aborter(&controller)),
                ]),
            )
            .signal(&signal),
        )
        .unwrap();
    assert_eq!((w.requests(), preparations.get()), (1, 1));
    assert_eq!(
        w.labels(),
        strs(&labels_of(&[
            &HEAD,
            &FIRST_TURN,
            &["turn_end", "turn_start", "message_start:user", "message_end:user"],
            &FAIL_TAIL
        ]))
    );
    assert_eq!(w.events("turn_start").len(), 2);
    assert_eq!(w.events("turn_end").len(), 2);
    let items = result.items();
    assert!(items[items.len() - 2].same(&queued));
    assert_synthesized(&items[items.len() - 1], "aborted", "Request was aborted", 0.0);
    w.assert_clean();
}

#[test]
fn d2_4_trace_d2_b_prepare_next_turn_aborts_after_a_drained_steering_message() {
    d2_b_loop_variant(true);
}

#[test]
fn d2_4_trace_d2_b_prepare_next_turn_aborts_after_a_drained_follow_up_message() {
    d2_b_loop_variant(false);
}

#[test]
fn d2_4_abort_seen_at_the_request_boundary_before_stream_fn() {
    let w = World::with(vec![reply("never")]);
    let (controller, signal) = w.controller();
    let result = w
        .exec(
            RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[("prepareRequest", w.aborter(&controller))]))
                .signal(&signal),
        )
        .unwrap();
    assert_eq!(w.requests(), 0);
    assert_eq!(w.labels(), strs(&labels_of(&[&HEAD, &FAIL_TAIL])));
    assert_synthesized(&result.at(1), "aborted", "Request was aborted", 0.0);
    assert_eq!(result.len(), 2);
    // Also when convertToLlm (after prepareRequest) is where the abort happens.
    let w = World::with(vec![reply("never")]);
    let (controller, signal) = w.controller();
    let c = controller.clone();
    let convert = convert_to_llm();
    let aborting_convert = TV::func(move |h, this, args| {
        h.abort(&c, &TV::Undefined);
        h.call_sync(&convert, this, args)
    });
    let result = w
        .exec(
            RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[("convertToLlm", aborting_convert)]))
                .signal(&signal),
        )
        .unwrap();
    assert_eq!(w.requests(), 0);
    assert_synthesized(&result.at(1), "aborted", "Request was aborted", 0.0);
}

// ---------------------------------------------------------------------------------------------
// D4 non-cooperative callbacks after abort
// ---------------------------------------------------------------------------------------------

/// A tool that ignores its signal and resolves after `ms`.
fn stubborn(ms: f64) -> TV {
    tool("stubborn", exec_after(ms, ok_result("finally")))
}

fn d4_run(grace: Option<TV>, abort_at: f64) -> (World, TV, Log) {
    let w = World::with(vec![reply_calls(vec![call("c1", "stubborn", json!({}))]), reply("never")]);
    let (controller, signal) = w.controller();
    w.h.abort_at(&controller, abort_at);
    let times = Log::new();
    let (t, h) = (times.clone(), w.h.clone());
    let rec = w.rec.sink();
    let sink = TV::func(move |hh, this, args| {
        if args[0].str_at("type") == "tool_execution_end" {
            t.push(h.now().to_string());
        }
        hh.call_sync(&rec, this, args)
    });
    let cfg = config(&[]);
    if let Some(g) = grace {
        cfg.set("abortGraceMs", g);
    }
    let result = w
        .exec(
            RunSpec::prompt(vec![user("go")], ctx_tools(vec![], vec![stubborn(60_000.0)]), cfg)
                .signal(&signal)
                .sink(sink),
        )
        .unwrap();
    (w, result, times)
}

#[test]
fn d4_3_a_tool_ignoring_its_signal_is_abandoned_grace_ms_after_the_abort() {
    let (w, result, times) = d4_run(None, 10.0);
    assert_eq!(times.get(), strs(&["5010"]), "default grace 5000 ms");
    let end = w.end_of("c1");
    assert_eq!(first_text(&end.get("result")), "Operation aborted");
    assert_eq!(end.get("isError").as_bool(), Some(true));
    assert_eq!(end.get("durationMs").as_num(), Some(5010.0), "until abandonment");
    let labels = w.labels();
    assert_eq!(
        labels[labels.len() - 5..],
        strs(&["tool_execution_end:c1", "message_start:toolResult", "message_end:toolResult", "turn_end", "agent_end"])
    );
    assert_eq!(w.requests(), 1);
    assert_eq!(roles(&result), strs(&["system", "user", "assistant", "toolResult"]));
    assert_eq!(w.h.now(), 5010.0);
    assert_eq!(w.h.abort_listener_count(), 0);
    assert_eq!(w.h.pending_timers(), 1, "only the abandoned tool's own timer");
    let n = w.rec.len();
    w.h.settle();
    assert_eq!(w.rec.len(), n, "the late result is ignored");
    assert_eq!(w.h.pending_timers(), 0);
}

#[test]
fn d4_1_grace_zero_abandons_at_once_and_infinity_waits() {
    let (w, _, times) = d4_run(Some(TV::num(0.0)), 10.0);
    assert_eq!(times.get(), strs(&["10"]));
    assert_eq!(first_text(&w.end_of("c1").get("result")), "Operation aborted");
    let (w, _, times) = d4_run(Some(TV::num(f64::INFINITY)), 10.0);
    assert_eq!(times.get(), strs(&["60000"]), "the reference's unbounded wait");
    assert_eq!(first_text(&w.end_of("c1").get("result")), "finally");
    w.assert_clean();
}

#[test]
fn d4_2_an_abandoned_before_tool_call_gives_its_call_operation_aborted() {
    let w = World::with(vec![reply_calls(vec![call("c1", "t", json!({}))]), reply("never")]);
    let (controller, signal) = w.controller();
    w.h.abort_at(&controller, 1.0);
    let (exec, executed) = counted(|_, _| Ok(ok_result("x")));
    let never = TV::async_func(|h, _this, _args| {
        let sleep = h.sleep(100_000.0);
        async move {
            sleep.await;
            Ok(TV::Undefined)
        }
        .boxed_local()
    });
    w.exec(
        RunSpec::prompt(
            vec![user("go")],
            ctx_tools(vec![], vec![tool("t", exec)]),
            config(&[("beforeToolCall", never), ("abortGraceMs", TV::num(20.0))]),
        )
        .signal(&signal),
    )
    .unwrap();
    assert_eq!(executed.get(), 0);
    assert_eq!(first_text(&w.end_of("c1").get("result")), "Operation aborted");
    assert_eq!(w.h.now(), 21.0);
    assert_eq!(w.h.abort_listener_count(), 0);
}

#[test]
fn d4_2_another_abandoned_hook_counts_as_failed_with_stop_reason_aborted() {
    let w = World::with(vec![reply("never")]);
    let (controller, signal) = w.controller();
    w.h.abort_at(&controller, 2.0);
    let (pending, _resolver) = w.h.deferred_promise();
    let result = w
        .exec(
            RunSpec::prompt(
                vec![user("go")],
                ctx(vec![]),
                config(&[("transformContext", returning_value(pending)), ("abortGraceMs", TV::num(30.0))]),
            )
            .signal(&signal),
        )
        .unwrap();
    let last = result.at(1);
    assert_eq!(last.str_at("stopReason"), "aborted");
    assert_eq!(w.requests(), 0);
    assert_eq!(w.h.now(), 32.0);
    assert_eq!(w.labels(), strs(&labels_of(&[&HEAD, &FAIL_TAIL])));
    w.assert_clean();
}

#[test]
fn d4_2_an_abandoned_stream_ends_with_request_was_aborted() {
    let w = World::new();
    let h = &w.h;
    let (controller, signal) = w.controller();
    h.abort_at(&controller, 10.0);
    let partial = pending_copy(h, &assistant_message("x"));
    let stream =
        h.stream(vec![StreamStep::Event(event("start", &[("partial", partial)])), StreamStep::Delay(100_000.0)]);
    let result = w
        .exec(
            RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[("abortGraceMs", TV::num(50.0))]))
                .signal(&signal)
                .stream_fn(returning(stream.source.clone())),
        )
        .unwrap();
    let last = result.at(1);
    assert_eq!(
        (last.str_at("stopReason"), last.str_at("errorMessage")),
        ("aborted".into(), "Request was aborted".into())
    );
    assert_eq!(w.h.now(), 60.0);
    assert!(stream.return_called(), "the iterator's return() is called");
    assert_eq!(w.labels()[4..], strs(&FAIL_TAIL));
    assert_eq!(w.h.abort_listener_count(), 0);
    // A stream function whose promise never settles is bounded the same way.
    let w = World::new();
    let (controller, signal) = w.controller();
    w.h.abort_at(&controller, 10.0);
    let (pending, _resolver) = w.h.deferred_promise();
    let result = w
        .exec(
            RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[("abortGraceMs", TV::num(50.0))]))
                .signal(&signal)
                .stream_fn(returning_value(pending)),
        )
        .unwrap();
    assert_eq!(result.at(1).str_at("errorMessage"), "Request was aborted");
    assert_eq!(w.h.now(), 60.0);
    w.assert_clean();
}

// ---------------------------------------------------------------------------------------------
// E-8.1 argument checks
// ---------------------------------------------------------------------------------------------

fn type_text<T>(h: &TestHost, r: Result<T, ArgError<TV>>) -> String {
    match r {
        Ok(_) => "ok".to_string(),
        Err(e) => arg_error_text(h, e),
    }
}

#[test]
fn e_8_1_1_checker_exact_type_error_texts() {
    let h = TestHost::new();
    let c = Checker::new(&h, "agentLoop");
    let no_execute = TV::obj(&[
        ("name", TV::str("c")),
        ("label", TV::str("c")),
        ("description", TV::str("")),
        ("parameters", TV::obj(&[])),
    ]);
    let t = |n: &str| tool(n, exec_ok(n));
    let cases: Vec<(String, &str)> = vec![
        (type_text(&h, c.messages(&TV::str("hi"), "prompts")), "TypeError: agentLoop: prompts must be an array"),
        (
            type_text(&h, c.config(&TV::obj(&[("model", model())]), "config")),
            "TypeError: agentLoop: config.convertToLlm must be a function",
        ),
        (
            type_text(&h, c.config(&config(&[("convertToLlm", TV::str("nope"))]), "config")),
            "TypeError: agentLoop: config.convertToLlm must be a function",
        ),
        (
            type_text(&h, c.context(&ctx_tools(vec![], vec![t("a"), t("b"), no_execute]), "context")),
            "TypeError: agentLoop: context.tools[2].execute must be a function",
        ),
        (
            type_text(&h, c.config(&config(&[("beforeToolCall", TV::str("nope"))]), "config")),
            "TypeError: agentLoop: config.beforeToolCall must be a function",
        ),
        (
            type_text(&h, Checker::new(&h, "runAgentLoop").function(&TV::Undefined, "emit")),
            "TypeError: runAgentLoop: emit must be a function",
        ),
        (type_text(&h, c.context(&TV::Null, "context")), "TypeError: agentLoop: context must be an object"),
        (
            type_text(&h, c.context(&TV::obj(&[("messages", TV::str("x"))]), "context")),
            "TypeError: agentLoop: context.messages must be an array",
        ),
        (type_text(&h, c.config(&TV::Null, "config")), "TypeError: agentLoop: config must be an object"),
        (
            type_text(&h, c.config(&TV::obj(&[("convertToLlm", convert_to_llm())]), "config")),
            "TypeError: agentLoop: config.model must be an object",
        ),
        (
            type_text(&h, c.messages(&TV::arr(vec![TV::num(5.0)]), "prompts")),
            "TypeError: agentLoop: prompts[0] must be an object",
        ),
        (
            type_text(&h, c.messages(&TV::arr(vec![TV::obj(&[("content", TV::str("x"))])]), "prompts")),
            "TypeError: agentLoop: prompts[0].role must be a string",
        ),
        (
            type_text(&h, c.context(&ctx(vec![user("a"), TV::obj(&[("role", TV::num(7.0))])]), "context")),
            "TypeError: agentLoop: context.messages[1].role must be a string",
        ),
        (
            type_text(&h, c.context(&TV::obj(&[("messages", TV::arr(vec![])), ("tools", TV::str("x"))]), "context")),
            "TypeError: agentLoop: context.tools must be an array",
        ),
        (
            type_text(&h, c.context(&ctx_tools(vec![], vec![TV::Null]), "context")),
            "TypeError: agentLoop: context.tools[0] must be an object",
        ),
        (
            type_text(
                &h,
                c.context(&ctx_tools(vec![], vec![tool_with("a", exec_ok("a"), &[("name", TV::num(1.0))])]), "context"),
            ),
            "TypeError: agentLoop: context.tools[0].name must be a string",
        ),
        (
            type_text(
                &h,
                c.context(
                    &ctx_tools(vec![], vec![tool_with("a", exec_ok("a"), &[("parameters", TV::str("x"))])]),
                    "context",
                ),
            ),
            "TypeError: agentLoop: context.tools[0].parameters must be an object",
        ),
        (
            type_text(&h, c.config(&config(&[("finishTurn", TV::num(1.0))]), "config")),
            "TypeError: agentLoop: config.finishTurn must be a function",
        ),
        (
            type_text(&h, c.config(&config(&[("getSteeringMessages", TV::obj(&[]))]), "config")),
            "TypeError: agentLoop: config.getSteeringMessages must be a function",
        ),
        (type_text(&h, c.signal(&TV::str("signal"), "signal")), "TypeError: agentLoop: signal must be an AbortSignal"),
        (
            type_text(&h, c.signal(&TV::obj(&[("aborted", TV::Bool(false))]), "signal")),
            "TypeError: agentLoop: signal must be an AbortSignal",
        ),
        (
            type_text(&h, c.optional_function(&TV::num(5.0), "streamFn")),
            "TypeError: agentLoop: streamFn must be a function",
        ),
        (
            type_text(&h, c.config(&config(&[("toolTimeoutMs", TV::num(-1.0))]), "config")),
            "TypeError: agentLoop: config.toolTimeoutMs must be a finite number between 0 and 2147483647",
        ),
        (
            type_text(&h, c.config(&config(&[("abortGraceMs", TV::num(f64::NAN))]), "config")),
            "TypeError: agentLoop: config.abortGraceMs must be a number between 0 and 2147483647, or Infinity",
        ),
        (
            type_text(&h, c.config(&config(&[("maxParallelTools", TV::num(0.0))]), "config")),
            "TypeError: agentLoop: config.maxParallelTools must be a positive integer",
        ),
        (
            type_text(&h, c.config(&config(&[("maxParallelTools", TV::num(1.5))]), "config")),
            "TypeError: agentLoop: config.maxParallelTools must be a positive integer",
        ),
        (
            type_text(&h, c.config(&config(&[("streamIdleTimeoutMs", TV::num(3e9))]), "config")),
            "TypeError: agentLoop: config.streamIdleTimeoutMs must be a finite number between 0 and 2147483647",
        ),
    ];
    for (got, expected) in cases {
        assert_eq!(got, expected);
    }
}

#[test]
fn e_8_1_2_accepted_values_pass() {
    let h = TestHost::new();
    let c = Checker::new(&h, "agentLoop");
    let abort_signal_like = TV::obj(&[("aborted", TV::Bool(false)), ("addEventListener", exec_ok("x"))]);
    let accepted: Vec<String> = vec![
        type_text(&h, c.config(&config(&[("toolExecution", TV::obj(&[("weird", TV::Bool(true))]))]), "config")),
        type_text(
            &h,
            c.config(&config(&[("abortGraceMs", TV::num(f64::INFINITY)), ("toolTimeoutMs", TV::num(0.0))]), "config"),
        ),
        type_text(&h, c.config(&config(&[("timeoutMs", TV::num(-5.0))]), "config")),
        type_text(
            &h,
            c.config(&config(&[("maxParallelTools", TV::num(3.0)), ("transformContext", TV::Null)]), "config"),
        ),
        type_text(&h, c.context(&ctx_tools(vec![user("a")], vec![tool("a", exec_ok("a"))]), "context")),
        type_text(&h, c.context(&TV::obj(&[("messages", TV::arr(vec![])), ("tools", TV::Null)]), "context")),
        type_text(&h, c.signal(&TV::Undefined, "signal")),
        type_text(&h, c.signal(&TV::Null, "signal")),
        type_text(&h, c.signal(&abort_signal_like, "signal")),
        type_text(&h, c.optional_function(&TV::Null, "streamFn")),
    ];
    assert!(accepted.iter().all(|r| r == "ok"), "{accepted:?}");
    // The timer bound is inclusive.
    assert_eq!(type_text(&h, c.limits(&TV::obj(&[("toolTimeoutMs", TV::num(2_147_483_647.0))]), "config")), "ok");
    assert_eq!(
        type_text(&h, c.limits(&TV::obj(&[("timeoutMs", TV::num(-1.0))]), "options")),
        "TypeError: agentLoop: options.timeoutMs must be a finite number between 0 and 2147483647"
    );
}

#[test]
fn e_8_1_a_throwing_getter_during_the_checks_is_rethrown_as_is() {
    let h = TestHost::new();
    let thrown = TV::error("hostile model");
    let cfg = config(&[]);
    cfg.throwing_getter("model", thrown.clone());
    match Checker::new(&h, "agentLoop").config(&cfg, "config") {
        Err(ArgError::Thrown(v)) => assert!(v.same(&thrown)),
        other => panic!("expected the thrown value, got {}", type_text(&h, other)),
    }
}

// ---------------------------------------------------------------------------------------------
// Hostile getters: a clean ending, never a panic
// ---------------------------------------------------------------------------------------------

#[test]
fn e_8_4_hostile_prompt_or_context_getters_fail_the_start_cleanly() {
    let w = World::new();
    let hostile = TV::obj(&[("content", TV::str("x"))]);
    hostile.throwing_getter("role", TV::error("role getter"));
    let spec = RunSpec::prompt(vec![hostile], ctx(vec![]), config(&[]));
    let e = w.start(&spec).err().unwrap();
    assert_eq!(w.h.error_message(&e), "role getter");
    let context = TV::obj(&[]);
    context.throwing_getter("messages", TV::str("messages getter"));
    let e = w.start(&RunSpec::resume(context, config(&[]))).err().unwrap();
    assert_eq!(w.h.error_message(&e), "messages getter");
    assert!(w.rec.is_empty());
}

#[test]
fn e_8_4_hostile_config_getters_end_the_run_through_d1() {
    for key in ["transformContext", "getSteeringMessages", "model", "convertToLlm"] {
        let w = World::with(vec![reply("never")]);
        let cfg = config(&[]);
        cfg.throwing_getter(key, TV::error(&format!("{key} getter")));
        let result = w.prompt(vec![user("go")], ctx(vec![]), cfg);
        assert_eq!(w.labels(), strs(&labels_of(&[&HEAD, &FAIL_TAIL])), "{key}");
        let last = result.items().pop().unwrap();
        assert_eq!(last.str_at("errorMessage"), format!("{key} getter"));
        assert_eq!(last.str_at("stopReason"), "error");
        assert_eq!(w.requests(), 0);
        if key == "model" {
            assert!(last.get("api").is_undefined() && last.get("model").is_undefined(), "no model to describe");
        }
    }
}

#[test]
fn e_8_4_hostile_tool_getters_become_error_results() {
    let exec_hostile = tool("a", exec_ok("a"));
    exec_hostile.throwing_getter("execute", TV::error("execute getter"));
    let prep_hostile = tool("b", exec_ok("b"));
    prep_hostile.throwing_getter("prepareArguments", TV::error("prepare getter"));
    let result_hostile = tool(
        "c",
        TV::func(|_h, _this, _args| {
            let r = ok_result("c");
            r.throwing_getter("content", TV::error("content getter"));
            r.throwing_getter("terminate", TV::error("terminate getter"));
            Ok(r)
        }),
    );
    let decision_hostile = TV::func(|_h, _this, args| {
        if args[0].path("toolCall.id").as_str() == Some("d") {
            let d = TV::obj(&[]);
            d.throwing_getter("block", TV::error("block getter"));
            return Ok(d);
        }
        Ok(TV::Undefined)
    });
    let w = World::with(vec![
        reply_calls(vec![
            call("a", "a", json!({})),
            call("b", "b", json!({})),
            call("c", "c", json!({})),
            call("d", "a", json!({})),
        ]),
        reply("done"),
    ]);
    let result = w.prompt(
        vec![user("go")],
        ctx_tools(vec![], vec![exec_hostile, prep_hostile, result_hostile]),
        config(&[("beforeToolCall", decision_hostile)]),
    );
    assert_eq!(first_text(&w.end_of("a").get("result")), "execute getter");
    assert_eq!(first_text(&w.end_of("b").get("result")), "prepare getter");
    assert_eq!(first_text(&w.end_of("d").get("result")), "block getter");
    let c_message = result.items().into_iter().find(|m| m.get("toolCallId").as_str() == Some("c")).unwrap();
    // E-8.2 (issue 14.3): reading the result is part of execute, so the first throwing getter is the error.
    assert_eq!(first_text(&c_message), "content getter");
    assert_eq!(c_message.get("isError").as_bool(), Some(true));
    assert_eq!(first_text(&w.end_of("c").get("result")), "content getter");
    assert_eq!(w.requests(), 2);
    assert_eq!(w.rec.types().last().map(String::as_str), Some("agent_end"));
    w.assert_clean();
}

#[test]
fn e_8_4_hostile_assistant_messages_and_events_end_through_d1() {
    // A tool-call block whose arguments getter throws.
    let w = World::new();
    let h = &w.h;
    let m = assistant_message("x");
    let block = TV::obj(&[("type", TV::str("toolCall")), ("id", TV::str("c1")), ("name", TV::str("t"))]);
    block.throwing_getter("arguments", TV::error("arguments getter"));
    m.set("content", TV::arr(vec![block]));
    m.set("stopReason", TV::str("toolUse"));
    let source = source_of(h, vec![event("done", &[("reason", TV::str("toolUse")), ("message", m.clone())])], None);
    let result =
        w.exec(RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[])).stream_fn(returning(source))).unwrap();
    let last = result.items().pop().unwrap();
    assert_eq!(last.str_at("errorMessage"), "arguments getter");
    assert_eq!(w.rec.types().last().map(String::as_str), Some("agent_end"));
    assert_eq!(w.events("turn_end").len(), 1);
    // An event whose type getter throws.
    let w = World::new();
    let h = &w.h;
    let hostile_event = TV::obj(&[]);
    hostile_event.throwing_getter("type", TV::error("type getter"));
    let source = source_of(h, vec![hostile_event], None);
    let result =
        w.exec(RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[])).stream_fn(returning(source))).unwrap();
    assert_eq!(result.at(1).str_at("errorMessage"), "type getter");
    // A thrown error whose message getter throws.
    let w = World::new();
    let weird = TV::error("x");
    weird.throwing_getter("message", TV::str("no"));
    let result =
        w.exec(RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[])).stream_fn(throwing(weird))).unwrap();
    assert_eq!(result.at(1).str_at("errorMessage"), "[object Error]");
    // A finishTurn decision whose action getter throws is ignored.
    let w = World::with(vec![reply("only")]);
    let decision = TV::obj(&[]);
    decision.throwing_getter("action", TV::error("action getter"));
    let result = w.prompt(vec![user("go")], ctx(vec![]), config(&[("finishTurn", returning_value(decision))]));
    assert_eq!(first_text(&result.at(1)), "only");
    assert_eq!(w.requests(), 1);
}

/// `{...config}` for the stream options reads every enumerable getter, so one that throws ends
/// the run through D1 before the request (Run::new's own read falls back to the default).
#[test]
fn e_8_4_a_throwing_config_getter_read_by_the_options_spread_ends_through_d1() {
    let w = World::with(vec![reply("never")]);
    let cfg = config(&[]);
    cfg.throwing_getter("abortGraceMs", TV::error("grace getter"));
    let result = w.prompt(vec![user("go")], ctx(vec![]), cfg);
    assert_eq!(w.requests(), 0);
    assert_synthesized(&result.at(1), "error", "grace getter", 0.0);
    w.assert_clean();
}

#[test]
fn e_8_4_4_hygiene_no_timer_or_listener_after_a_streamed_tool_run() {
    let w = World::with(vec![reply_calls(vec![call("c1", "t", json!({}))]), reply("done")]);
    w.faux.set_chunk_delay(1.0);
    let (_controller, signal) = w.controller();
    w.exec(
        RunSpec::prompt(
            vec![user("go")],
            ctx_tools(vec![], vec![tool("t", exec_after(3.0, ok_result("x")))]),
            config(&[]),
        )
        .signal(&signal),
    )
    .unwrap();
    assert!(w.h.now() > 3.0);
    w.assert_clean();
}

/// A sink that never reads message fields (the messages here are hostile).
fn type_sink(log: &Log) -> TV {
    let log = log.clone();
    TV::func(move |_h, _this, args| {
        let kind = args[0].str_at("type");
        if kind != "message_update" {
            log.push(kind);
        }
        Ok(TV::Undefined)
    })
}

#[test]
fn e_8_4_a_queued_message_with_a_throwing_role_getter_ends_through_d1() {
    let w = World::with(vec![reply("one"), reply("never")]);
    let hostile = TV::obj(&[("content", TV::str("x"))]);
    hostile.throwing_getter("role", TV::error("role getter"));
    let h2 = hostile.clone();
    let (steering, _) = counted(move |n, _| Ok(TV::arr(if n == 1 { vec![h2.clone()] } else { vec![] })));
    let types = Log::new();
    let result = w
        .exec(
            RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[("getSteeringMessages", steering)]))
                .sink(type_sink(&types)),
        )
        .unwrap();
    assert_eq!(
        types.get(),
        strs(&[
            "agent_start",
            "turn_start",
            "message_start",
            "message_end",
            "message_start",
            "message_end",
            "turn_end",
            "turn_start",
            "message_start",
            "message_end",
            "message_start",
            "message_end",
            "turn_end",
            "agent_end",
        ])
    );
    let items = result.items();
    assert!(items[2].same(&hostile), "the drained message still reaches the transcript");
    assert_eq!(items[3].str_at("errorMessage"), "role getter");
    assert_eq!(w.requests(), 1);
}

#[test]
fn e_8_4_a_tool_name_getter_turning_hostile_between_turns_ends_through_d1() {
    let hostile = std::rc::Rc::new(std::cell::Cell::new(false));
    let echo = tool("echo", exec_ok("x"));
    let flag = hostile.clone();
    echo.define_getter("name", move |_| if flag.get() { Err(TV::error("name getter")) } else { Ok(TV::str("echo")) });
    let w = World::with(vec![reply_calls(vec![call("c1", "echo", json!({}))]), reply("never")]);
    let flag = hostile.clone();
    let finish = TV::func(move |_h, _this, _args| {
        flag.set(true);
        Ok(TV::Undefined)
    });
    let result = w.prompt(vec![user("go")], ctx_tools(vec![], vec![echo]), config(&[("finishTurn", finish)]));
    assert_eq!(w.end_of("c1").get("isError").as_bool(), Some(false));
    let last = result.items().pop().unwrap();
    assert_eq!(last.str_at("errorMessage"), "name getter");
    assert_eq!(w.requests(), 1);
    let labels = w.labels();
    assert_eq!(
        labels[labels.len() - 6..],
        strs(&["turn_end", "turn_start", "message_start:assistant", "message_end:assistant", "turn_end", "agent_end"])
    );
}

/// E-8.2 / L-3.2: only `undefined` and `null` count as `[]`; any other non-array (also a falsy
/// one) is "`<getter>` must return an array of messages".
#[test]
fn e_8_2_a_falsy_non_array_queue_result_is_a_d1_failure() {
    for value in [TV::Bool(false), TV::num(0.0), TV::str("")] {
        let w = World::with(vec![reply("never")]);
        let result =
            w.prompt(vec![user("go")], ctx(vec![]), config(&[("getSteeringMessages", returning_value(value.clone()))]));
        let last = result.items().pop().unwrap();
        assert_eq!(
            last.get("errorMessage").as_str(),
            Some("getSteeringMessages must return an array of messages"),
            "{value:?}"
        );
        assert_eq!(w.requests(), 0);
    }
}
