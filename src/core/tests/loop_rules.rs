//! The L- rules of §3: entry points, update application, polling points, tool declarations, the
//! request boundary, streaming, hard exit, finishTurn, prepareNextTurn/prepareRequest, delivery.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use super::support::*;
use crate::core::agent_loop::declare_tool_changes;
use crate::core::agent_loop::{start_continue_run, start_prompt_run};
use crate::core::host::Host;
use crate::core::test_host::{EPOCH_MS, TV, TestHost};
use futures::FutureExt;
use serde_json::json;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

fn end_decision() -> TV {
    TV::obj(&[("action", TV::str("end"))])
}

fn continue_decision() -> TV {
    TV::obj(&[("action", TV::str("continue"))])
}

// ---------------------------------------------------------------------------------------------
// L-3.1 entry points
// ---------------------------------------------------------------------------------------------

#[test]
fn l_3_1_3_prompt_start_copies_the_context_and_keeps_prompt_identity() {
    let w = World::with(vec![reply("ok")]);
    let messages = TV::arr(vec![user("old"), assistant_message("old answer")]);
    let context = TV::obj(&[("messages", messages.clone())]);
    let prompt = user("new");
    let result = w.prompt(vec![prompt.clone()], context.clone(), config(&[]));
    assert_eq!(messages.len(), 2, "the caller's array is untouched");
    assert!(context.get("messages").same(&messages));
    assert!(result.at(0).same(&prompt));
    assert!(w.events("message_start")[0].get("message").same(&prompt));
    assert!(w.events("message_end")[0].get("message").same(&prompt));
    assert!(w.faux.calls()[0].messages[2].same(&prompt));
    assert_eq!(roles(&result), strs(&["user", "assistant"]), "newMessages = prompts + the run's messages");
}

#[test]
fn l_3_1_3_start_prompt_run_builds_the_working_context_synchronously() {
    let h = TestHost::new();
    let old = user("old");
    let context = TV::obj(&[("messages", TV::arr(vec![old.clone()])), ("extra", TV::str("kept"))]);
    let p = user("p");
    let start = start_prompt_run(&h, &TV::arr(vec![p.clone()]), &context).unwrap();
    assert!(!start.context.same(&context));
    assert_eq!(start.context.get("extra").as_str(), Some("kept"), "{{...context}}");
    let working = start.context.get("messages").items();
    assert_eq!(working.len(), 2);
    assert!(working[0].same(&old) && working[1].same(&p));
    let initial = start.initial.unwrap();
    assert_eq!(initial.len(), 1);
    assert!(initial[0].same(&p));
    assert_eq!(context.get("messages").len(), 1);
}

#[test]
fn l_3_1_4_continuation_guards_exact_texts_plain_error_before_any_event() {
    let h = TestHost::new();
    let e = start_continue_run(&h, &ctx(vec![])).err().unwrap();
    assert!(e.is_error());
    assert_eq!(e.get("name").as_str(), Some("Error"));
    assert_eq!(h.error_message(&e), "Cannot continue: no messages in context");
    let e = start_continue_run(&h, &ctx(vec![user("a"), assistant_message("b")])).err().unwrap();
    assert_eq!(e.get("name").as_str(), Some("Error"));
    assert_eq!(h.error_message(&e), "Cannot continue from message role: assistant");
    // A custom tail is the caller's responsibility: no guard.
    let custom = TV::obj(&[("role", TV::str("custom")), ("timestamp", TV::num(1.0))]);
    assert!(start_continue_run(&h, &ctx(vec![custom])).is_ok());
}

#[test]
fn l_3_1_4_d6_continuation_copies_the_messages_array() {
    let w = World::with(vec![reply("a")]);
    let messages = TV::arr(vec![user("hi")]);
    let context = TV::obj(&[("messages", messages.clone()), ("tools", TV::arr(vec![]))]);
    let result = w.exec(RunSpec::resume(context.clone(), config(&[]))).unwrap();
    assert_eq!(messages.len(), 1, "D6: the caller's array keeps its length");
    assert!(context.get("messages").same(&messages));
    assert_eq!(roles(&result), strs(&["assistant"]));
    assert_eq!(w.events("message_end").len(), 1);
    assert_eq!(
        w.labels(),
        strs(&[
            "agent_start",
            "turn_start",
            "message_start:assistant",
            "message_end:assistant",
            "turn_end",
            "agent_end"
        ])
    );
    assert!(w.faux.calls()[0].messages[0].same(&messages.at(0)));
}

#[test]
fn l_3_1_4_a_custom_tail_converted_by_convert_to_llm_gives_one_assistant() {
    let w = World::with(vec![reply("answer")]);
    let custom = TV::obj(&[("role", TV::str("custom")), ("payload", TV::str("do it")), ("timestamp", TV::num(1.0))]);
    let convert = TV::func(|_h, _this, args| {
        let out: Vec<TV> = args[0]
            .items()
            .into_iter()
            .map(|m| {
                if m.get("role").as_str() == Some("custom") {
                    TV::obj(&[
                        ("role", TV::str("user")),
                        ("content", m.get("payload")),
                        ("timestamp", m.get("timestamp")),
                    ])
                } else {
                    m
                }
            })
            .collect();
        Ok(TV::arr(out))
    });
    let result = w.exec(RunSpec::resume(ctx(vec![custom]), config(&[("convertToLlm", convert)]))).unwrap();
    assert_eq!(roles(&result), strs(&["assistant"]));
    assert_eq!(w.faux.calls()[0].messages[0].to_json(), json!({"role": "user", "content": "do it", "timestamp": 1}));
}

#[test]
fn l_3_1_1_observe_mode_never_awaits_the_sink() {
    let w = World::with(vec![reply("ok")]);
    let slow = w.rec.async_sink(50.0);
    let result = w.exec(RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[])).sink(slow).observe()).unwrap();
    assert_eq!(w.h.now(), 0.0, "the producer never waited for the sink");
    assert_eq!(w.rec.types().last().map(String::as_str), Some("agent_end"));
    assert_eq!(result.len(), 2);
}

#[test]
fn l_3_1_2_barrier_mode_awaits_every_emit() {
    let w = World::with(vec![reply("ok")]);
    let slow = w.rec.async_sink(5.0);
    w.exec(RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[])).sink(slow)).unwrap();
    let n = w.rec.len() as f64;
    assert_eq!(w.h.now(), 5.0 * n, "every event waited 5 ms");
    w.assert_clean();
}

// ---------------------------------------------------------------------------------------------
// L-3.2.1 applying updates
// ---------------------------------------------------------------------------------------------

#[test]
fn l_3_2_1_prepare_request_replaces_context_model_and_thinking_level() {
    let w = World::with(vec![reply("ok")]);
    let steer = user("steer now");
    let steering = Queue::with(vec![steer.clone()]);
    let canonical = user("canonical");
    let other = model_with(&[("id", TV::str("other-model"))]);
    let cfg = config(&[("getSteeringMessages", steering.getter())]);
    let original_model = cfg.get("model");
    let seen = Rc::new(RefCell::new(Vec::<TV>::new()));
    let (s, c2, o2, cfg2) = (seen.clone(), canonical.clone(), other.clone(), cfg.clone());
    cfg.set(
        "prepareRequest",
        TV::func(move |h, this, args| {
            assert!(this.same(&cfg2), "this = the loop's config");
            s.borrow_mut().push(args[0].clone());
            s.borrow_mut().push(args[1].clone());
            let context = h.shallow_copy(&args[0].get("context")).unwrap();
            context.set("messages", TV::arr(vec![c2.clone()]));
            Ok(TV::obj(&[("context", context), ("model", o2.clone()), ("thinkingLevel", TV::str("high"))]))
        }),
    );
    let (controller, signal) = w.controller();
    let result = w.exec(RunSpec::prompt(vec![user("go")], ctx(vec![]), cfg.clone()).signal(&signal)).unwrap();
    let seen = seen.borrow();
    assert_eq!(seen.len(), 2, "one preparation");
    let req = &seen[0];
    assert_eq!(req.keys(), strs(&["context", "model", "thinkingLevel"]));
    assert_eq!(roles(&req.path("context.messages")), strs(&["user", "user"]));
    assert!(req.path("context.messages").items()[1].same(&steer));
    assert!(req.get("model").same(&cfg.get("model")));
    assert_eq!(req.get("thinkingLevel").as_str(), Some("off"));
    assert!(seen[1].same(&signal));
    let call = &w.faux.calls()[0];
    assert!(call.model.same(&other));
    assert_eq!(call.options.get("reasoning").as_str(), Some("high"));
    assert_eq!(call.messages.len(), 1);
    assert!(call.messages[0].same(&canonical));
    let last = result.items().pop().unwrap();
    assert_eq!(last.get("thinkingLevel").as_str(), Some("high"));
    assert_eq!(last.get("model").as_str(), Some("other-model"));
    let texts: Vec<String> = result.items().iter().map(first_text).collect();
    assert_eq!(texts, strs(&["go", "steer now", "ok"]), "newMessages is never rewritten");
    assert!(cfg.get("model").same(&original_model), "the caller's config is not mutated");
    assert!(cfg.get("reasoning").is_undefined());
    drop(controller);
}

#[test]
fn l_3_2_1_prepare_request_messages_field_is_ignored() {
    let w = World::with(vec![reply("ok")]);
    let prepare = TV::func(|_h, _this, _args| Ok(TV::obj(&[("messages", TV::arr(vec![user("ignored")]))])));
    let result = w.prompt(vec![user("go")], ctx(vec![]), config(&[("prepareRequest", prepare)]));
    assert_eq!(w.request_texts(0), strs(&["go"]));
    assert_eq!(roles(&result), strs(&["user", "assistant"]));
}

#[test]
fn l_3_2_1_prepare_next_turn_model_and_level_last_for_the_rest_of_the_run() {
    let echo = tool("echo", exec_ok("ok"));
    let w = World::with(vec![
        reply_calls(vec![call("a", "echo", json!({}))]),
        reply_calls(vec![call("b", "echo", json!({}))]),
        reply_calls(vec![call("c", "echo", json!({}))]),
        reply("done"),
    ]);
    let m2 = model_with(&[("id", TV::str("m2"))]);
    let (prepare_next, _) = counted(move |n, _| {
        Ok(match n {
            0 => TV::obj(&[("model", m2.clone()), ("thinkingLevel", TV::str("high"))]),
            1 => TV::obj(&[("model", TV::Undefined), ("thinkingLevel", TV::Undefined)]),
            _ => TV::obj(&[("thinkingLevel", TV::str("off"))]),
        })
    });
    let result = w.prompt(
        vec![user("go")],
        ctx_tools(vec![declaring(std::slice::from_ref(&echo))], vec![echo]),
        config(&[("reasoning", TV::str("low")), ("prepareNextTurn", prepare_next)]),
    );
    let seen: Vec<(String, String)> =
        w.faux.calls().iter().map(|c| (c.model.str_at("id"), c.options.get("reasoning").js_string())).collect();
    assert_eq!(
        seen,
        vec![
            ("faux-1".to_string(), "low".to_string()),
            ("m2".to_string(), "high".to_string()),
            ("m2".to_string(), "high".to_string()),
            ("m2".to_string(), "undefined".to_string()),
        ]
    );
    let levels: Vec<String> = result
        .items()
        .iter()
        .filter(|m| m.get("role").as_str() == Some("assistant"))
        .map(|m| m.str_at("thinkingLevel"))
        .collect();
    assert_eq!(levels, strs(&["low", "high", "high", "off"]));
}

#[test]
fn l_3_2_1_prepare_next_turn_new_context_receives_later_appends() {
    let echo = tool("echo", exec_ok("ok"));
    let w = World::with(vec![reply_calls(vec![call("tool-1", "echo", json!({}))]), reply("done")]);
    let guidance =
        TV::obj(&[("role", TV::str("system")), ("content", TV::str("updated guidance")), ("timestamp", TV::num(5.0))]);
    let replacement = Rc::new(RefCell::new(TV::Undefined));
    let (r, g) = (replacement.clone(), guidance.clone());
    let (prepare_next, calls) = counted(move |_, args| {
        let turn = &args[0];
        let copy = TV::obj(&[
            ("messages", TV::arr(turn.path("context.messages").items())),
            ("tools", turn.path("context.tools")),
        ]);
        r.replace(copy.clone());
        Ok(TV::obj(&[("context", copy), ("messages", TV::arr(vec![g.clone()]))]))
    });
    let result =
        w.prompt(vec![user("go")], ctx_tools(vec![], vec![echo]), config(&[("prepareNextTurn", prepare_next)]));
    assert_eq!(calls.get(), 1);
    assert_eq!(w.requests(), 2);
    assert!(w.faux.calls()[1].messages.last().unwrap().same(&guidance));
    let replaced = replacement.borrow().get("messages").items();
    assert!(replaced[replaced.len() - 2].same(&guidance));
    assert!(replaced[replaced.len() - 1].same(&result.items().pop().unwrap()));
    assert_eq!(roles(&result), strs(&["system", "user", "assistant", "toolResult", "system", "assistant"]));
}

// ---------------------------------------------------------------------------------------------
// L-3.3 polling points
// ---------------------------------------------------------------------------------------------

/// A getter that logs `name` and returns what `q` would.
fn logged_getter(log: &Log, name: &'static str, q: &Queue) -> TV {
    let (log, getter) = (log.clone(), q.getter());
    TV::func(move |h, this, args| {
        log.push(name);
        h.call_sync(&getter, this, args)
    })
}

fn logged(log: &Log, name: &'static str, value: TV) -> TV {
    let log = log.clone();
    TV::func(move |_h, _this, _args| {
        log.push(name);
        Ok(value.clone())
    })
}

/// Records event types into the same log.
fn logging_sink(log: &Log) -> TV {
    let log = log.clone();
    TV::func(move |_h, _this, args| {
        let e = &args[0];
        let kind = e.str_at("type");
        if kind.starts_with("message_") && kind != "message_update" {
            log.push(format!("{kind}:{}", first_text(&e.get("message"))));
        } else if kind != "message_update" && kind != "tool_execution_update" {
            log.push(kind);
        }
        Ok(TV::Undefined)
    })
}

#[test]
fn l_3_3_s0_steering_follows_the_prompts_before_prepare_request() {
    let w = World::with(vec![reply("ok")]);
    let log = Log::new();
    let steering = Queue::with(vec![user("s0")]);
    w.exec(
        RunSpec::prompt(
            vec![user("prompt")],
            ctx(vec![]),
            config(&[
                ("getSteeringMessages", logged_getter(&log, "S", &steering)),
                ("prepareRequest", logged(&log, "prepareRequest", TV::Undefined)),
            ]),
        )
        .sink(logging_sink(&log)),
    )
    .unwrap();
    assert_eq!(
        log.get()[..8],
        strs(&[
            "agent_start",
            "turn_start",
            "message_start:prompt",
            "message_end:prompt",
            "S",
            "message_start:s0",
            "message_end:s0",
            "prepareRequest",
        ])
    );
}

#[test]
fn l_3_3_polling_points_in_order_s0_s1_prepare_next_turn_s2_turn_start_f() {
    let echo = tool("echo", exec_ok("ok"));
    let w = World::with(vec![reply_calls(vec![call("c1", "echo", json!({}))]), reply("done")]);
    let log = Log::new();
    let (steering, follow_up) = (Queue::all(), Queue::all());
    w.exec(
        RunSpec::prompt(
            vec![user("go")],
            ctx_tools(vec![declaring(std::slice::from_ref(&echo))], vec![echo]),
            config(&[
                ("getSteeringMessages", logged_getter(&log, "S", &steering)),
                ("getFollowUpMessages", logged_getter(&log, "F", &follow_up)),
                ("prepareNextTurn", logged(&log, "prepareNextTurn", TV::Undefined)),
                ("prepareRequest", logged(&log, "prepareRequest", TV::Undefined)),
                ("finishTurn", logged(&log, "finishTurn", TV::Undefined)),
            ]),
        )
        .sink(logging_sink(&log)),
    )
    .unwrap();
    assert_eq!(
        log.get(),
        strs(&[
            "agent_start",
            "turn_start",
            "message_start:go",
            "message_end:go",
            "S",
            "prepareRequest",
            "message_start:",
            "message_end:",
            "tool_execution_start",
            "tool_execution_end",
            "message_start:ok",
            "message_end:ok",
            "finishTurn",
            "turn_end",
            "S",
            "prepareNextTurn",
            "S",
            "turn_start",
            "prepareRequest",
            "message_start:",
            "message_end:done",
            "finishTurn",
            "turn_end",
            "S",
            "F",
            "agent_end",
        ])
    );
}

#[test]
fn l_3_3_s2_polls_only_when_nothing_pending_one_at_a_time_never_delivers_two_per_turn() {
    let w = World::with(vec![reply("1"), reply("2"), reply("3")]);
    let steering = Queue::one_at_a_time();
    let s = steering.clone();
    let (finish, _) = counted(move |n, _| {
        if n == 0 {
            s.push(user("a"));
            s.push(user("b"));
        }
        Ok(TV::Undefined)
    });
    w.prompt(
        vec![user("go")],
        ctx(vec![]),
        config(&[("getSteeringMessages", steering.getter()), ("finishTurn", finish)]),
    );
    assert_eq!(w.requests(), 3);
    let users = |i: usize| -> Vec<String> {
        w.faux.calls()[i].messages.iter().filter(|m| m.get("role").as_str() == Some("user")).map(first_text).collect()
    };
    assert_eq!(users(0), strs(&["go"]));
    assert_eq!(users(1), strs(&["go", "a"]));
    assert_eq!(users(2), strs(&["go", "a", "b"]));
    assert_eq!(steering.polls(), 4, "S0, S1 (a), S1 (b), S1 (empty); never S2 while a message was pending");
}

#[test]
fn l_3_3_s2_picks_up_steering_queued_during_prepare_next_turn() {
    let echo = tool("echo", exec_ok("ok"));
    let w = World::with(vec![reply_calls(vec![call("tool-1", "echo", json!({}))]), reply("done")]);
    let steering = Queue::all();
    let s = steering.clone();
    let (prepare_next, _) = counted(move |_, _| {
        s.push(user("steer during prepare"));
        Ok(TV::Undefined)
    });
    w.prompt(
        vec![user("go")],
        ctx_tools(vec![], vec![echo]),
        config(&[("getSteeringMessages", steering.getter()), ("prepareNextTurn", prepare_next)]),
    );
    assert_eq!(w.requests(), 2);
    assert_eq!(w.request_texts(1).last().map(String::as_str), Some("steer during prepare"));
    assert_eq!(steering.polls(), 4, "S0, S1, S2, S1");
}

#[test]
fn l_3_3_1_prepare_request_never_polls_steering_queued_there_reaches_only_request_2() {
    let w = World::with(vec![reply("first"), reply("second")]);
    let steering = Queue::all();
    let s = steering.clone();
    let (prepare, preparations) = counted(move |n, _| {
        if n == 0 {
            s.push(user("late steer"));
        }
        Ok(TV::Undefined)
    });
    w.prompt(
        vec![user("go")],
        ctx(vec![]),
        config(&[("getSteeringMessages", steering.getter()), ("prepareRequest", prepare)]),
    );
    assert!(!w.request_texts(0).contains(&"late steer".to_string()));
    assert!(w.request_texts(1).contains(&"late steer".to_string()));
    assert_eq!(preparations.get(), 2);
    assert_eq!(steering.polls(), 3);
}

#[test]
fn l_3_3_follow_ups_are_polled_only_when_the_inner_loop_ends() {
    let echo = tool("echo", exec_ok("ok"));
    let w = World::with(vec![
        reply_calls(vec![call("t1", "echo", json!({}))]),
        reply("after tool"),
        reply("after follow-up"),
    ]);
    let follow_up = Queue::with(vec![user("follow")]);
    w.prompt(
        vec![user("go")],
        ctx_tools(vec![declaring(std::slice::from_ref(&echo))], vec![echo]),
        config(&[("getFollowUpMessages", follow_up.getter())]),
    );
    assert_eq!(w.requests(), 3);
    assert_eq!(follow_up.polls(), 2);
    assert!(!w.request_texts(1).contains(&"follow".to_string()));
    assert_eq!(w.request_texts(2).last().map(String::as_str), Some("follow"));
    let labels = w.labels();
    assert_eq!(
        labels[labels.len() - 8..],
        strs(&[
            "turn_end",
            "turn_start",
            "message_start:user",
            "message_end:user",
            "message_start:assistant",
            "message_end:assistant",
            "turn_end",
            "agent_end",
        ])
    );
}

#[test]
fn l_3_3_getters_returning_undefined_or_null_count_as_empty() {
    let w = World::with(vec![reply("ok")]);
    let polls = Count::new();
    let (p1, p2) = (polls.clone(), polls.clone());
    let steering = TV::func(move |_h, _this, _args| {
        p1.bump();
        Ok(TV::Undefined)
    });
    let follow_up = TV::func(move |_h, _this, _args| {
        p2.bump();
        Ok(TV::Null)
    });
    let result = w.prompt(
        vec![user("go")],
        ctx(vec![]),
        config(&[("getSteeringMessages", steering), ("getFollowUpMessages", follow_up)]),
    );
    assert_eq!((w.requests(), polls.get(), result.len()), (1, 3, 2));
}

#[test]
fn l_3_3_2_prepared_messages_are_injected_before_queued_ones() {
    let w = World::with(vec![reply("one"), reply("two")]);
    let steering = Queue::all();
    let s = steering.clone();
    let (finish, _) = counted(move |n, _| {
        if n == 0 {
            s.push(user("queued"));
        }
        Ok(TV::Undefined)
    });
    let (prepare_next, _) = counted(|_, _| Ok(TV::obj(&[("messages", TV::arr(vec![user("prepared")]))])));
    let result = w.prompt(
        vec![user("go")],
        ctx(vec![]),
        config(&[
            ("getSteeringMessages", steering.getter()),
            ("finishTurn", finish),
            ("prepareNextTurn", prepare_next),
        ]),
    );
    let texts: Vec<String> = result.items().iter().map(first_text).collect();
    assert_eq!(texts, strs(&["go", "one", "prepared", "queued", "two"]));
    assert_eq!(steering.polls(), 3, "S0, S1 (queued), no S2, S1");
}

// ---------------------------------------------------------------------------------------------
// L-3.4 declareToolChanges
// ---------------------------------------------------------------------------------------------

fn sys(content: &str, extra: &[(&str, TV)]) -> TV {
    let m = TV::obj(&[("role", TV::str("system")), ("content", TV::str(content)), ("timestamp", TV::num(1.0))]);
    for (k, v) in extra {
        m.set(k, v.clone());
    }
    m
}

#[test]
fn l_3_4_2_a_system_message_is_inserted_before_the_first_non_system_prompt() {
    let echo = tool_with(
        "echo",
        exec_ok("x"),
        &[
            (
                "parameters",
                TV::obj(&[
                    ("type", TV::str("object")),
                    (
                        "properties",
                        TV::obj(&[("v", TV::obj(&[("type", TV::str("string")), ("description", TV::Undefined)]))]),
                    ),
                ]),
            ),
            ("extra", TV::str("ignored")),
        ],
    );
    let w = World::with(vec![reply("ok")]);
    let (u1, u2) = (user("go"), user("now"));
    w.h.advance(7.0);
    let result = w.prompt(vec![u1.clone(), u2.clone()], ctx_tools(vec![], vec![echo]), config(&[]));
    assert_eq!(
        w.labels()[..8],
        strs(&[
            "agent_start",
            "turn_start",
            "message_start:system",
            "message_end:system",
            "message_start:user",
            "message_end:user",
            "message_start:user",
            "message_end:user",
        ])
    );
    assert!(result.at(1).same(&u1) && result.at(2).same(&u2));
    let inserted = result.at(0);
    assert_eq!(inserted.keys(), strs(&["role", "content", "timestamp", "toolsAdded"]));
    assert_eq!(
        json(&w.h, &inserted),
        r#"{"role":"system","content":"","timestamp":1700000000007,"toolsAdded":[{"name":"echo","description":"echo tool","parameters":{"type":"object","properties":{"v":{"type":"string"}}}}]}"#
    );
    assert_eq!(inserted.get("toolsAdded").at(0).keys(), strs(&["name", "description", "parameters"]));
    assert_eq!(w.request_roles(0), strs(&["system", "user", "user"]));
}

#[test]
fn l_3_4_1_constrained_sampling_is_kept_only_when_defined() {
    let a = tool_with("a", exec_ok("a"), &[("constrainedSampling", TV::Bool(false))]);
    let b = tool_with("b", exec_ok("b"), &[("constrainedSampling", TV::Undefined)]);
    let w = World::with(vec![reply("ok")]);
    let result = w.prompt(vec![user("go")], ctx_tools(vec![], vec![a, b]), config(&[]));
    assert_eq!(
        result.at(0).get("toolsAdded").to_json(),
        json!([
            {"name": "a", "description": "a tool", "parameters": {"type": "object", "properties": {}}, "constrainedSampling": false},
            {"name": "b", "description": "b tool", "parameters": {"type": "object", "properties": {}}},
        ])
    );
    assert_eq!(result.at(0).get("toolsAdded").at(1).keys(), strs(&["name", "description", "parameters"]));
}

#[test]
fn l_3_4_tools_already_declared_in_the_context_add_no_system_message() {
    let echo = tool("echo", exec_ok("x"));
    let w = World::with(vec![reply("ok")]);
    let result =
        w.prompt(vec![user("go")], ctx_tools(vec![declaring(std::slice::from_ref(&echo))], vec![echo]), config(&[]));
    assert_eq!(roles(&result), strs(&["user", "assistant"]));
}

#[test]
fn l_3_4_2_unchanged_pending_is_returned_as_the_same_objects() {
    let h = TestHost::new();
    let echo = tool("echo", exec_ok("x"));
    let context = ctx_tools(vec![declaring(std::slice::from_ref(&echo))], vec![echo.clone()]);
    let empty_fields = sys("extra", &[("toolsAdded", TV::arr(vec![])), ("toolsRemoved", TV::arr(vec![]))]);
    let u = user("go");
    let out = declare_tool_changes(&h, &context, &[empty_fields.clone(), u.clone()]).unwrap();
    assert_eq!(out.len(), 2);
    assert!(out[0].same(&empty_fields), "empty tool arrays stay");
    assert!(out[1].same(&u));
    assert_eq!(empty_fields.get("toolsAdded").len(), 0);
    // No system message pending and nothing changed.
    let out = declare_tool_changes(&h, &context, std::slice::from_ref(&u)).unwrap();
    assert_eq!(out.len(), 1);
    assert!(out[0].same(&u));
    // Earlier pending system messages count (only the last one is rewritten).
    let early = declaring(std::slice::from_ref(&echo));
    let late = sys("late", &[]);
    let out =
        declare_tool_changes(&h, &ctx_tools(vec![], vec![echo]), &[early.clone(), late.clone(), u.clone()]).unwrap();
    assert!(out[0].same(&early) && out[1].same(&late) && out[2].same(&u));
}

#[test]
fn l_3_4_2_empty_pending_gets_the_update_alone() {
    let h = TestHost::new();
    h.advance(3.0);
    let out = declare_tool_changes(&h, &ctx_tools(vec![], vec![tool("echo", exec_ok("x"))]), &[]).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(
        out[0].to_json(),
        json!({"role": "system", "content": "", "timestamp": 1_700_000_000_003_i64,
               "toolsAdded": [{"name": "echo", "description": "echo tool", "parameters": {"type": "object", "properties": {}}}]})
    );
    // No tools and nothing declared: nothing to insert.
    assert!(declare_tool_changes(&h, &ctx(vec![]), &[]).unwrap().is_empty());
}

#[test]
fn l_3_4_2_a_pending_system_message_gains_the_changes_as_a_copy() {
    let echo = tool("echo", exec_ok("x"));
    let w = World::with(vec![reply("ok")]);
    let pending = TV::obj(&[
        ("role", TV::str("system")),
        ("content", TV::str("")),
        ("sections", TV::obj(&[("style", TV::str("terse"))])),
        ("timestamp", TV::num(1.0)),
    ]);
    let result = w.prompt(vec![pending.clone(), user("go")], ctx_tools(vec![], vec![echo]), config(&[]));
    let head = result.at(0);
    assert!(!head.same(&pending));
    assert_eq!(head.keys(), strs(&["role", "content", "sections", "timestamp", "toolsAdded"]));
    assert_eq!(head.num_at("timestamp"), 1.0);
    let names: Vec<String> = head.get("toolsAdded").items().iter().map(|t| t.str_at("name")).collect();
    assert_eq!(names, strs(&["echo"]));
    assert!(!pending.has_own("toolsAdded"), "the caller's message is untouched");
    assert_eq!(roles(&result), strs(&["system", "user", "assistant"]));
}

#[test]
fn l_3_4_2_claimed_tool_fields_are_overwritten_by_the_real_delta() {
    let (first, second) = (tool("first", exec_ok("1")), tool("second", exec_ok("2")));
    let w = World::with(vec![reply("ok")]);
    let claim = sys(
        "",
        &[
            ("timestamp", TV::num(2.0)),
            ("toolsAdded", TV::arr(vec![declaration(&second)])),
            ("toolsRemoved", TV::arr(vec![TV::obj(&[("name", TV::str("first"))])])),
        ],
    );
    let result = w.prompt(
        vec![claim.clone(), user("go")],
        ctx_tools(vec![declaring(std::slice::from_ref(&first))], vec![first]),
        config(&[]),
    );
    assert!(!result.at(0).same(&claim));
    assert_eq!(result.at(0).to_json(), json!({"role": "system", "content": "", "timestamp": 2}));
}

#[test]
fn l_3_4_1_a_changed_tool_is_removed_and_added_a_gone_tool_only_removed() {
    let (a, b) = (tool("a", exec_ok("a")), tool("b", exec_ok("b")));
    let a2 = tool_with("a", exec_ok("a"), &[("description", TV::str("a tool, v2"))]);
    let w = World::with(vec![reply("ok")]);
    let result = w.prompt(vec![user("go")], ctx_tools(vec![declaring(&[a, b])], vec![a2]), config(&[]));
    let head = result.at(0);
    assert_eq!(head.keys(), strs(&["role", "content", "timestamp", "toolsAdded", "toolsRemoved"]));
    assert_eq!(
        head.get("toolsAdded").to_json(),
        json!([{"name": "a", "description": "a tool, v2", "parameters": {"type": "object", "properties": {}}}])
    );
    assert_eq!(head.get("toolsRemoved").to_json(), json!([{"name": "a"}, {"name": "b"}]));
}

#[test]
fn l_3_4_3_tools_changed_in_prepare_request_are_declared_before_the_next_request() {
    let (a, b) = (tool("a", exec_ok("a")), tool("b", exec_ok("b")));
    let w = World::with(vec![reply_calls(vec![call("c1", "a", json!({}))]), reply("done")]);
    let (a2, b2) = (a.clone(), b.clone());
    let (prepare, _) = counted(move |n, args| {
        Ok(if n == 0 {
            TV::obj(&[(
                "context",
                TV::obj(&[
                    ("messages", args[0].path("context.messages")),
                    ("tools", TV::arr(vec![a2.clone(), b2.clone()])),
                ]),
            )])
        } else {
            TV::Undefined
        })
    });
    let result = w.prompt(
        vec![user("go")],
        ctx_tools(vec![declaring(std::slice::from_ref(&a))], vec![a]),
        config(&[("prepareRequest", prepare)]),
    );
    assert_eq!(
        w.labels(),
        strs(&[
            "agent_start",
            "turn_start",
            "message_start:user",
            "message_end:user",
            "message_start:assistant",
            "message_end:assistant",
            "tool_execution_start:c1",
            "tool_execution_end:c1",
            "message_start:toolResult",
            "message_end:toolResult",
            "turn_end",
            "turn_start",
            "message_start:system",
            "message_end:system",
            "message_start:assistant",
            "message_end:assistant",
            "turn_end",
            "agent_end",
        ])
    );
    let declared = result.items().into_iter().find(|m| m.get("role").as_str() == Some("system")).unwrap();
    let names: Vec<String> = declared.get("toolsAdded").items().iter().map(|t| t.str_at("name")).collect();
    assert_eq!(names, strs(&["b"]));
    assert!(!declared.has_own("toolsRemoved"));
    assert!(w.faux.calls()[1].messages.last().unwrap().same(&declared));
    // Execution looked the tool up in the replaced context (it exists in both).
    assert_eq!(w.end_of("c1").get("isError").as_bool(), Some(false));
}

// ---------------------------------------------------------------------------------------------
// L-3.5.1 the request boundary
// ---------------------------------------------------------------------------------------------

#[test]
fn l_3_5_1_boundary_order_per_request_transform_convert_api_key_stream_fn() {
    let echo = tool("echo", exec_ok("ok"));
    let w = World::with(vec![reply_calls(vec![call("c1", "echo", json!({}))]), reply("done")]);
    let log = Log::new();
    let (l1, l2, l3, l4) = (log.clone(), log.clone(), log.clone(), log.clone());
    let convert = convert_to_llm();
    let stream = w.faux.stream_fn();
    let cfg = config(&[
        (
            "transformContext",
            TV::func(move |_h, _this, args| {
                l1.push("transformContext");
                Ok(args[0].clone())
            }),
        ),
        (
            "convertToLlm",
            TV::func(move |h, this, args| {
                l2.push("convertToLlm");
                h.call_sync(&convert, this, args)
            }),
        ),
        (
            "getApiKey",
            TV::func(move |_h, _this, _args| {
                l3.push("getApiKey");
                Ok(TV::Undefined)
            }),
        ),
    ]);
    let stream_fn = TV::func(move |h, this, args| {
        l4.push("streamFn");
        assert!(this.is_undefined(), "streamFn is called with this undefined");
        h.call_sync(&stream, this, args)
    });
    w.exec(
        RunSpec::prompt(vec![user("go")], ctx_tools(vec![declaring(std::slice::from_ref(&echo))], vec![echo]), cfg)
            .stream_fn(stream_fn),
    )
    .unwrap();
    assert_eq!(
        log.get(),
        strs(&[
            "transformContext",
            "convertToLlm",
            "getApiKey",
            "streamFn",
            "transformContext",
            "convertToLlm",
            "getApiKey",
            "streamFn",
        ])
    );
}

#[test]
fn l_3_5_1_transform_context_output_is_used_for_that_request_only() {
    let w = World::with(vec![reply("one"), reply("two")]);
    let seen = Log::new();
    let s = seen.clone();
    let convert = convert_to_llm();
    let cfg = config(&[
        (
            "transformContext",
            TV::func(|_h, _this, args| {
                let items = args[0].items();
                Ok(TV::arr(items[items.len().saturating_sub(2)..].to_vec()))
            }),
        ),
        (
            "convertToLlm",
            TV::func(move |h, this, args| {
                s.push(args[0].len().to_string());
                h.call_sync(&convert, this, args)
            }),
        ),
        ("finishTurn", counted(|n, _| Ok(if n == 0 { continue_decision() } else { TV::Undefined })).0),
    ]);
    let messages: Vec<TV> = (0..4).map(|i| user(&format!("m{i}"))).collect();
    let result = w.prompt(vec![user("m4")], ctx(messages), cfg);
    assert_eq!(seen.get(), strs(&["2", "2"]), "convertToLlm receives the transformed list");
    assert_eq!(w.request_texts(0), strs(&["m3", "m4"]));
    assert_eq!(w.request_texts(1), strs(&["m4", "one"]));
    assert_eq!(result.len(), 3, "the working context keeps everything");
}

#[test]
fn l_3_5_1_transcript_has_exactly_messages_and_keeps_prompt_identity() {
    let w = World::with(vec![reply("ok")]);
    let system = sys("be nice", &[]);
    w.prompt(vec![system.clone(), user("go")], ctx(vec![]), config(&[]));
    let call = &w.faux.calls()[0];
    assert_eq!(call.context.keys(), strs(&["messages"]));
    assert!(call.messages[0].same(&system));
}

#[test]
fn l_3_5_1_stream_options_spread_config_api_key_identity_reasoning_signal() {
    let w = World::with(vec![reply("ok")]);
    let metadata = TV::obj(&[("user", TV::str("u"))]);
    let cfg = config(&[
        ("temperature", TV::num(0.25)),
        ("sessionId", TV::str("s-1")),
        ("maxTokens", TV::num(77.0)),
        ("metadata", metadata.clone()),
        ("apiKey", TV::str("static-key")),
        ("reasoning", TV::str("medium")),
        ("signal", TV::str("ignored")),
    ]);
    let (_controller, signal) = w.controller();
    w.exec(RunSpec::prompt(vec![user("go")], ctx(vec![]), cfg.clone()).signal(&signal)).unwrap();
    let call = &w.faux.calls()[0];
    assert!(call.model.same(&cfg.get("model")));
    let o = &call.options;
    assert!(!o.same(&cfg));
    assert_eq!(o.get("temperature").as_num(), Some(0.25));
    assert_eq!(o.get("sessionId").as_str(), Some("s-1"));
    assert_eq!(o.get("maxTokens").as_num(), Some(77.0));
    assert!(o.get("metadata").same(&metadata));
    assert_eq!(o.get("apiKey").as_str(), Some("static-key"));
    assert_eq!(o.get("reasoning").as_str(), Some("medium"));
    assert!(o.get("signal").same(&signal), "the run's signal, not config.signal");
    assert_eq!(
        json(&w.h, &o.get("identity")),
        r#"{"attribution":{"name":"pi","url":"https://pi.dev","categories":["cli-agent"]}}"#
    );
    assert!(o.get("convertToLlm").is_func(), "{{...config}}");
}

#[test]
fn l_3_5_1_identity_is_the_default_overlaid_field_by_field() {
    let cases = [
        (TV::Undefined, r#"{"attribution":{"name":"pi","url":"https://pi.dev","categories":["cli-agent"]}}"#),
        (
            TV::obj(&[("userAgent", TV::str("short"))]),
            r#"{"attribution":{"name":"pi","url":"https://pi.dev","categories":["cli-agent"]},"userAgent":"short"}"#,
        ),
        (TV::obj(&[("attribution", TV::Null)]), r#"{"attribution":null}"#),
        (
            TV::from_json(&json!({"attribution": {"name": "me", "url": "https://me.dev"}, "version": "9"})),
            r#"{"attribution":{"name":"me","url":"https://me.dev"},"version":"9"}"#,
        ),
        (
            TV::obj(&[("version", TV::Undefined)]),
            r#"{"attribution":{"name":"pi","url":"https://pi.dev","categories":["cli-agent"]}}"#,
        ),
    ];
    for (identity, expected) in cases {
        let w = World::with(vec![reply("ok")]);
        w.prompt(vec![user("go")], ctx(vec![]), config(&[("identity", identity)]));
        assert_eq!(json(&w.h, &w.faux.calls()[0].options.get("identity")), expected);
    }
}

#[test]
fn l_3_5_1_api_key_from_get_api_key_with_provider_falsy_falls_back_to_config() {
    let asked = Log::new();
    for (returned, expected) in [(TV::str("dynamic"), "dynamic"), (TV::Undefined, "static"), (TV::str(""), "static")] {
        let w = World::with(vec![reply("ok")]);
        let a = asked.clone();
        let get_key = TV::async_func(move |_h, _this, args| {
            a.push(args[0].js_string());
            futures::future::ready(Ok(returned.clone())).boxed_local()
        });
        w.prompt(
            vec![user("go")],
            ctx(vec![]),
            config(&[
                ("model", model_with(&[("provider", TV::str("acme"))])),
                ("apiKey", TV::str("static")),
                ("getApiKey", get_key),
            ]),
        );
        assert_eq!(w.faux.calls()[0].options.get("apiKey").as_str(), Some(expected));
    }
    assert_eq!(asked.get(), strs(&["acme", "acme", "acme"]));
}

// ---------------------------------------------------------------------------------------------
// L-3.6 streaming
// ---------------------------------------------------------------------------------------------

#[test]
fn l_3_6_1_2_message_start_and_updates_carry_shallow_copies_of_the_live_partial() {
    let echo = tool("echo", exec_ok("ok"));
    let w = World::with(vec![faux_assistant_with(vec![
        crate::core::test_host::faux_thinking("let me think"),
        text("hello world"),
        call("c1", "echo", json!({"v": "abc"})),
    ])]);
    w.prompt(
        vec![user("go")],
        ctx_tools(vec![declaring(std::slice::from_ref(&echo))], vec![echo]),
        config(&[("finishTurn", TV::func(|_h, _this, _args| Ok(end_decision())))]),
    );
    let start =
        w.events("message_start").into_iter().find(|e| e.path("message.role").as_str() == Some("assistant")).unwrap();
    assert_eq!(start.path("message.stopReason").as_str(), Some("pending"));
    let updates = w.events("message_update");
    assert!(updates.len() >= 8);
    let partial = updates[0].path("assistantMessageEvent.partial");
    assert!(!start.get("message").same(&partial), "message_start has a copy");
    let mut kinds: Vec<String> = Vec::new();
    for u in &updates {
        let ev = u.get("assistantMessageEvent");
        let p = ev.get("partial");
        assert!(!u.get("message").same(&p), "a copy");
        assert!(u.path("message.content").same(&p.get("content")), "shallow: the same content array");
        assert_eq!(u.path("message.stopReason").as_str(), Some("pending"));
        let k = ev.str_at("type");
        if kinds.last() != Some(&k) {
            kinds.push(k);
        }
    }
    assert_eq!(
        kinds,
        strs(&[
            "thinking_start",
            "thinking_delta",
            "thinking_end",
            "text_start",
            "text_delta",
            "text_end",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_end",
        ])
    );
    assert_eq!(updates.last().unwrap().path("assistantMessageEvent.toolCall.arguments.v").as_str(), Some("abc"));
    // The final message is the faux provider's shared partial object (done.message).
    let end =
        w.events("message_end").into_iter().find(|e| e.path("message.role").as_str() == Some("assistant")).unwrap();
    assert!(end.get("message").same(&partial));
}

fn faux_assistant_with(content: Vec<TV>) -> TV {
    crate::core::test_host::faux_assistant(content, "toolUse")
}

#[test]
fn l_3_6_2_the_events_partial_replaces_the_context_entry_and_final_replaces_the_partial() {
    let w = World::new();
    let h = &w.h;
    let fin = assistant_message("final");
    let (p0, p1) = (pending_copy(h, &fin), pending_copy(h, &fin));
    let source = source_of(
        h,
        vec![
            event("start", &[("partial", p0.clone())]),
            event("text_start", &[("contentIndex", TV::num(0.0)), ("partial", p1.clone())]),
            event("done", &[("reason", TV::str("stop")), ("message", fin.clone())]),
        ],
        None,
    );
    let working = Rc::new(RefCell::new(TV::Undefined));
    let wk = working.clone();
    let capture = TV::func(move |_h, _this, args| {
        wk.replace(args[0].path("context.messages"));
        Ok(TV::Undefined)
    });
    let checks = Log::new();
    let (c, wk, p0_seen) = (checks.clone(), working.clone(), p0.clone());
    let sink = TV::func(move |_h, _this, args| {
        let e = &args[0];
        let kind = e.str_at("type");
        let last = wk.borrow().items().pop().unwrap_or(TV::Undefined);
        if kind == "message_start" && e.path("message.role").as_str() == Some("assistant") {
            c.push(format!("start in context: {}", last.same(&p0_seen)));
        } else if kind == "message_update" {
            c.push(format!("update in context: {}", last.same(&e.path("assistantMessageEvent.partial"))));
        } else if kind == "message_end" && e.path("message.role").as_str() == Some("assistant") {
            c.push(format!("final in context: {}", last.same(&e.get("message"))));
        }
        Ok(TV::Undefined)
    });
    let result = w
        .exec(
            RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[("prepareRequest", capture)]))
                .stream_fn(returning(source))
                .sink(sink),
        )
        .unwrap();
    assert_eq!(checks.get(), strs(&["start in context: true", "update in context: true", "final in context: true"]));
    assert!(result.at(1).same(&fin));
    let working = working.borrow().items();
    assert_eq!(working.len(), 2);
    assert!(working[1].same(&fin) && !working.iter().any(|m| m.same(&p0) || m.same(&p1)));
}

#[test]
fn l_3_6_2_deltas_before_start_are_ignored() {
    let w = World::new();
    let h = &w.h;
    let fin = assistant_message("hello");
    let early = pending_copy(h, &fin);
    let source = source_of(
        h,
        vec![
            event("text_delta", &[("contentIndex", TV::num(0.0)), ("delta", TV::str("he")), ("partial", early)]),
            event("done", &[("reason", TV::str("stop")), ("message", fin.clone())]),
        ],
        None,
    );
    let result =
        w.exec(RunSpec::prompt(vec![user("hi")], ctx(vec![]), config(&[])).stream_fn(returning(source))).unwrap();
    assert_eq!(
        w.all_labels(),
        strs(&[
            "agent_start",
            "turn_start",
            "message_start:user",
            "message_end:user",
            "message_start:assistant",
            "message_end:assistant",
            "turn_end",
            "agent_end",
        ])
    );
    let starts = w.events("message_start");
    let start = &starts[1];
    assert!(!start.get("message").same(&fin), "message_start: a shallow copy of the final");
    assert!(start.path("message.content").same(&fin.get("content")));
    assert!(w.events("message_end")[1].get("message").same(&fin));
    assert!(result.at(1).same(&fin));
}

#[test]
fn l_3_6_3_final_is_source_result_when_the_source_has_one() {
    let w = World::new();
    let h = &w.h;
    let from_event = assistant_message("from event");
    let from_result = assistant_message("from result");
    let source = source_of(
        h,
        vec![
            event("start", &[("partial", pending_copy(h, &from_event))]),
            event("done", &[("reason", TV::str("stop")), ("message", from_event.clone())]),
        ],
        Some(from_result.clone()),
    );
    let result =
        w.exec(RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[])).stream_fn(returning(source))).unwrap();
    assert!(result.at(1).same(&from_result));
    assert!(w.events("message_end").last().unwrap().get("message").same(&from_result));
    assert_eq!(from_result.get("thinkingLevel").as_str(), Some("off"));
    assert!(from_event.get("thinkingLevel").is_undefined());
}

#[test]
fn l_3_6_3_result_rejecting_or_non_object_falls_back_to_the_event_message() {
    for bad in [TV::Undefined, TV::num(3.0)] {
        let w = World::new();
        let h = &w.h;
        let message = assistant_message("event message");
        let source = source_of(
            h,
            vec![
                event("start", &[("partial", pending_copy(h, &message))]),
                event("done", &[("reason", TV::str("stop")), ("message", message.clone())]),
            ],
            Some(bad),
        );
        let result =
            w.exec(RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[])).stream_fn(returning(source))).unwrap();
        assert!(result.at(1).same(&message));
    }
    let w = World::new();
    let h = &w.h;
    let message = assistant_message("event message");
    let source = source_of(h, vec![event("done", &[("reason", TV::str("stop")), ("message", message.clone())])], None);
    source.set("result", TV::func(|_h, _this, _args| Err(TV::error("no result"))));
    let result =
        w.exec(RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[])).stream_fn(returning(source))).unwrap();
    assert!(result.at(1).same(&message));
}

#[test]
fn l_3_6_3_thinking_level_is_stamped_last_after_duration_ms() {
    for (reasoning, expected) in [(TV::Undefined, "off"), (TV::str("high"), "high")] {
        let w = World::new();
        let h = &w.h;
        let fin = assistant_message("ok");
        fin.set("durationMs", TV::num(12.0));
        let source = source_of(
            h,
            vec![
                event("start", &[("partial", pending_copy(h, &fin))]),
                event("done", &[("reason", TV::str("stop")), ("message", fin.clone())]),
            ],
            Some(fin.clone()),
        );
        w.exec(
            RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[("reasoning", reasoning)]))
                .stream_fn(returning(source)),
        )
        .unwrap();
        assert_eq!(fin.get("thinkingLevel").as_str(), Some(expected));
        let keys = fin.keys();
        assert_eq!(keys[keys.len() - 2..], strs(&["durationMs", "thinkingLevel"]));
    }
}

#[test]
fn l_3_6_3_a_lone_error_event_gives_message_start_and_end_of_the_error() {
    let w = World::new();
    let h = &w.h;
    let failure = crate::core::test_host::faux_assistant_error(vec![], "setup failed");
    failure.set("timestamp", TV::num(EPOCH_MS));
    let source = source_of(h, vec![event("error", &[("reason", TV::str("error")), ("error", failure.clone())])], None);
    let result =
        w.exec(RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[])).stream_fn(returning(source))).unwrap();
    assert_eq!(
        w.labels(),
        strs(&[
            "agent_start",
            "turn_start",
            "message_start:user",
            "message_end:user",
            "message_start:assistant",
            "message_end:assistant",
            "turn_end",
            "agent_end",
        ])
    );
    assert!(result.at(1).same(&failure));
    assert_eq!(failure.get("thinkingLevel").as_str(), Some("off"));
    assert_eq!(failure.str_at("errorMessage"), "setup failed");
}

#[test]
fn l_3_6_an_async_stream_fn_is_awaited_and_iteration_stops_at_the_terminal_event() {
    let w = World::with(vec![reply("async")]);
    let stream = w.faux.stream_fn();
    let async_stream_fn = TV::async_func(move |h, this, args| {
        let source = h.call_sync(&stream, this, args);
        let sleep = h.sleep(3.0);
        async move {
            sleep.await;
            source
        }
        .boxed_local()
    });
    let result =
        w.exec(RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[])).stream_fn(async_stream_fn)).unwrap();
    assert_eq!(first_text(&result.at(1)), "async");
    assert_eq!(w.h.now(), 3.0);
    // After `done` the loop stops: a source with events after the terminal one is not read further.
    let w = World::new();
    let h = &w.h;
    let fin = assistant_message("x");
    let stream = h.stream(vec![
        crate::core::test_host::StreamStep::Event(event("done", &[("reason", TV::str("stop")), ("message", fin)])),
        crate::core::test_host::StreamStep::Event(event("start", &[("partial", TV::obj(&[]))])),
    ]);
    w.exec(RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[])).stream_fn(returning(stream.source.clone())))
        .unwrap();
    assert_eq!(stream.next_calls(), 1);
}

#[test]
fn l_3_6_4_a_source_without_result_ending_early_fails_at_once() {
    let w = World::new();
    let h = &w.h;
    let partial = pending_copy(h, &assistant_message("x"));
    partial.set("content", TV::arr(vec![]));
    let source = source_of(h, vec![event("start", &[("partial", partial)])], None);
    let result =
        w.exec(RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[])).stream_fn(returning(source))).unwrap();
    let last = result.at(1);
    assert_eq!(last.str_at("stopReason"), "error");
    assert_eq!(last.str_at("errorMessage"), "Stream ended without a done or error event");
    assert_eq!(w.h.now(), 0.0, "promptly");
    assert_eq!(w.labels()[4..], strs(&["message_start:assistant", "message_end:assistant", "turn_end", "agent_end"]));
}

#[test]
fn l_3_6_4_own_streams_report_at_once_that_no_result_will_come() {
    let w = World::new();
    let h = &w.h;
    let source = source_of(h, vec![], None);
    let (pending, _resolver) = h.deferred_promise();
    source.set("result", TV::func(move |_h, _this, _args| Ok(pending.clone())));
    source.set("hasResult", TV::func(|_h, _this, _args| Ok(TV::Bool(false))));
    let result =
        w.exec(RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[])).stream_fn(returning(source))).unwrap();
    assert_eq!(result.at(1).str_at("errorMessage"), "Stream ended without a done or error event");
    assert_eq!(w.h.now(), 0.0);
    w.assert_clean();
}

#[test]
fn l_3_6_4_foreign_result_is_awaited_at_most_1000_ms() {
    let w = World::new();
    let h = &w.h;
    let source = source_of(h, vec![], None);
    let (pending, _resolver) = h.deferred_promise();
    source.set("result", TV::func(move |_h, _this, _args| Ok(pending.clone())));
    let result =
        w.exec(RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[])).stream_fn(returning(source))).unwrap();
    assert_eq!(result.at(1).str_at("errorMessage"), "Stream ended without a done or error event");
    assert_eq!(w.h.now(), 1000.0);
    w.assert_clean();
}

#[test]
fn l_3_6_4_a_result_after_an_early_end_becomes_the_final() {
    let w = World::new();
    let h = &w.h;
    let fin = assistant_message("late result");
    let source = source_of(h, vec![event("start", &[("partial", pending_copy(h, &fin))])], None);
    let f = fin.clone();
    source.set(
        "result",
        TV::async_func(move |h, _this, _args| {
            let sleep = h.sleep(200.0);
            let f = f.clone();
            async move {
                sleep.await;
                Ok(f)
            }
            .boxed_local()
        }),
    );
    let result =
        w.exec(RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[])).stream_fn(returning(source))).unwrap();
    assert!(result.at(1).same(&fin));
    assert_eq!(fin.get("thinkingLevel").as_str(), Some("off"));
    assert_eq!(w.h.now(), 200.0);
}

// ---------------------------------------------------------------------------------------------
// L-3.7 hard exit, L-3.8 finishTurn, L-3.9 prepareNextTurn / prepareRequest
// ---------------------------------------------------------------------------------------------

#[test]
fn l_3_7_1_hard_exit_even_with_finish_turn_end_and_queued_messages() {
    let w = World::with(vec![crate::core::test_host::faux_assistant_error(vec![text("x")], "503"), reply("never")]);
    let steering = Queue::with(vec![user("s")]);
    let follow_up = Queue::with(vec![user("f")]);
    let (finish, finished) = counted(|_, _| Ok(end_decision()));
    let result = w.prompt(
        vec![user("go")],
        ctx(vec![]),
        config(&[
            ("getSteeringMessages", steering.getter()),
            ("getFollowUpMessages", follow_up.getter()),
            ("finishTurn", finish),
        ]),
    );
    assert_eq!(w.requests(), 1);
    assert_eq!(finished.get(), 1);
    assert_eq!((steering.polls(), follow_up.polls(), follow_up.len()), (1, 0, 1), "S0 only; follow-ups untouched");
    assert_eq!(result.items().pop().unwrap().str_at("errorMessage"), "503");
    assert_eq!(
        w.labels(),
        strs(&[
            "agent_start",
            "turn_start",
            "message_start:user",
            "message_end:user",
            "message_start:user",
            "message_end:user",
            "message_start:assistant",
            "message_end:assistant",
            "turn_end",
            "agent_end",
        ])
    );
}

#[test]
fn l_3_8_1_finish_turn_runs_after_the_result_message_end_and_before_turn_end() {
    let echo = tool("echo", exec_ok("ok"));
    let w = World::with(vec![reply_calls(vec![call("tool-1", "echo", json!({}))]), reply("done")]);
    let log = Log::new();
    let turns = Rc::new(RefCell::new(Vec::<TV>::new()));
    let (l, t) = (log.clone(), turns.clone());
    let cfg = config(&[]);
    let cfg2 = cfg.clone();
    cfg.set(
        "finishTurn",
        TV::func(move |_h, this, args| {
            assert!(this.same(&cfg2));
            l.push("finishTurn");
            let last = args[0].path("context.messages").items().pop().unwrap();
            l.push(format!("last:{}", last.str_at("role")));
            t.borrow_mut().push(args[0].clone());
            Ok(TV::Undefined)
        }),
    );
    let l = log.clone();
    let sink = TV::func(move |_h, _this, args| {
        let kind = args[0].str_at("type");
        if kind == "message_end" || kind == "turn_end" {
            l.push(format!("{kind}:{}", args[0].path("message.role").js_string()));
        }
        Ok(TV::Undefined)
    });
    let rec = w.rec.sink();
    let both = TV::func(move |h, this, args| {
        h.call_sync(&sink, this, args)?;
        h.call_sync(&rec, this, args)
    });
    let result = w.exec(RunSpec::prompt(vec![user("go")], ctx_tools(vec![], vec![echo]), cfg).sink(both)).unwrap();
    assert_eq!(
        log.get()[..7],
        strs(&[
            "message_end:system",
            "message_end:user",
            "message_end:assistant",
            "message_end:toolResult",
            "finishTurn",
            "last:toolResult",
            "turn_end:assistant",
        ])
    );
    let turns = turns.borrow();
    assert_eq!(turns.len(), 2, "called for every turn");
    let first = &turns[0];
    assert_eq!(first.keys(), strs(&["message", "toolResults", "context", "newMessages"]));
    assert_eq!(first.get("toolResults").len(), 1);
    assert!(first.get("message").same(&w.events("turn_end")[0].get("message")));
    assert!(first.get("newMessages").same(&result), "the live newMessages array");
    assert!(first.get("toolResults").at(0).same(&w.events("turn_end")[0].get("toolResults").at(0)));
}

#[test]
fn l_3_8_2_non_decisions_are_ignored() {
    for decision in [TV::str("end"), TV::num(5.0), TV::obj(&[("action", TV::str("stop"))]), TV::Null, TV::arr(vec![])] {
        let w = World::with(vec![reply_calls(vec![call("c1", "echo", json!({}))]), reply("done")]);
        let d = decision.clone();
        w.prompt(
            vec![user("go")],
            ctx_tools(vec![], vec![tool("echo", exec_ok("x"))]),
            config(&[("finishTurn", TV::func(move |_h, _this, _args| Ok(d.clone())))]),
        );
        assert_eq!(w.requests(), 2, "{decision:?}");
    }
}

#[test]
fn l_3_8_2_continue_is_satisfied_by_a_natural_request() {
    // A tool-result request.
    let w = World::with(vec![reply_calls(vec![call("tool-1", "echo", json!({}))]), reply("done"), reply("extra")]);
    let (finish, finished) = counted(|n, _| Ok(if n == 0 { continue_decision() } else { TV::Undefined }));
    w.prompt(vec![user("go")], ctx_tools(vec![], vec![tool("echo", exec_ok("x"))]), config(&[("finishTurn", finish)]));
    assert_eq!((w.requests(), finished.get()), (2, 2));
    // Steering at S1, and follow-ups at F.
    for steering_kind in [true, false] {
        let w = World::with(vec![reply("first"), reply("second"), reply("extra")]);
        let (steering, follow_up) = (Queue::all(), Queue::all());
        let target = if steering_kind { steering.clone() } else { follow_up.clone() };
        let (finish, _) = counted(move |n, _| {
            Ok(if n == 0 {
                target.push(user("queued text"));
                continue_decision()
            } else {
                TV::Undefined
            })
        });
        w.prompt(
            vec![user("go")],
            ctx(vec![]),
            config(&[
                ("getSteeringMessages", steering.getter()),
                ("getFollowUpMessages", follow_up.getter()),
                ("finishTurn", finish),
            ]),
        );
        assert_eq!(w.requests(), 2);
        assert!(!w.request_texts(0).contains(&"queued text".to_string()));
        assert_eq!(w.request_roles(1), strs(&["user", "assistant", "user"]));
        assert_eq!(w.request_texts(1)[2], "queued text");
    }
}

#[test]
fn l_3_8_2_always_continue_loops_until_aborted() {
    let w = World::with((0..20).map(|i| reply(&format!("r{i}"))).collect());
    let (controller, signal) = w.controller();
    let finished = Count::new();
    let f = finished.clone();
    let finish = TV::func(move |h, _this, _args| {
        if f.bump() == 4 {
            h.abort(&controller, &TV::Undefined);
        }
        Ok(continue_decision())
    });
    w.exec(RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[("finishTurn", finish)])).signal(&signal)).unwrap();
    assert_eq!((w.requests(), finished.get()), (5, 5));
    assert_eq!(w.labels()[w.labels().len() - 2..], strs(&["turn_end", "agent_end"]));
    w.assert_clean();
}

#[test]
fn l_3_9_1_prepare_next_turn_never_runs_before_the_first_turn_or_when_no_turn_follows() {
    let w = World::with(vec![reply("only")]);
    let (prepare_next, prepared) = counter();
    let (prepare, preparations) = counter();
    w.prompt(vec![user("go")], ctx(vec![]), config(&[("prepareNextTurn", prepare_next), ("prepareRequest", prepare)]));
    assert_eq!((prepared.get(), preparations.get()), (0, 1));
}

#[test]
fn l_3_9_2_prepare_request_sees_injected_messages_and_runs_before_every_request() {
    let echo = tool("echo", exec_ok("ok"));
    let w = World::with(vec![reply_calls(vec![call("c1", "echo", json!({}))]), reply("done")]);
    let seen = Log::new();
    let s = seen.clone();
    let prepare = TV::func(move |_h, _this, args| {
        s.push(format!("{:?}", roles(&args[0].path("context.messages"))));
        Ok(TV::Undefined)
    });
    w.prompt(vec![user("go")], ctx_tools(vec![], vec![echo]), config(&[("prepareRequest", prepare)]));
    assert_eq!(seen.get(), strs(&[r#"["system", "user"]"#, r#"["system", "user", "assistant", "toolResult"]"#]));
}

// ---------------------------------------------------------------------------------------------
// L-3.10 delivery
// ---------------------------------------------------------------------------------------------

#[test]
fn l_3_10_1_strict_nesting_and_agent_end_last() {
    let w = World::with(vec![reply_calls(vec![call("a", "t", json!({})), call("b", "t", json!({}))]), reply("done")]);
    w.prompt(vec![user("go")], ctx_tools(vec![], vec![tool("t", exec_after(5.0, ok_result("x")))]), config(&[]));
    let types = w.rec.types();
    assert_eq!(types.first().map(String::as_str), Some("agent_start"));
    assert_eq!(types.last().map(String::as_str), Some("agent_end"));
    assert_eq!(types.iter().filter(|t| *t == "agent_start").count(), 1);
    assert_eq!(types.iter().filter(|t| *t == "agent_end").count(), 1);
    let mut open = false;
    for t in &types {
        match t.as_str() {
            "turn_start" => {
                assert!(!open);
                open = true;
            }
            "turn_end" => {
                assert!(open);
                open = false;
            }
            _ => {}
        }
    }
    assert!(!open);
}

#[test]
fn l_3_10_2_barrier_before_tool_call_sees_listener_effects() {
    let w = World::with(vec![reply_calls(vec![call("c1", "echo", json!({}))]), reply("done")]);
    let flag = Rc::new(Cell::new(false));
    let f = flag.clone();
    let sink = TV::async_func(move |h, _this, args| {
        let is_assistant_end =
            args[0].str_at("type") == "message_end" && args[0].path("message.role").as_str() == Some("assistant");
        let sleep = h.sleep(10.0);
        let f = f.clone();
        async move {
            if is_assistant_end {
                sleep.await;
                f.set(true);
            }
            Ok(TV::Undefined)
        }
        .boxed_local()
    });
    let seen = Rc::new(Cell::new(false));
    let (s, f) = (seen.clone(), flag.clone());
    let before = TV::func(move |_h, _this, _args| {
        s.set(f.get());
        Ok(TV::Undefined)
    });
    w.exec(
        RunSpec::prompt(
            vec![user("go")],
            ctx_tools(vec![], vec![tool("echo", exec_ok("x"))]),
            config(&[("beforeToolCall", before)]),
        )
        .sink(sink),
    )
    .unwrap();
    assert!(seen.get());
}

#[test]
fn l_3_10_3_serialised_barrier_emit_never_overlaps_with_parallel_tools() {
    let in_flight = Rc::new(Cell::new(0usize));
    let max = Rc::new(Cell::new(0usize));
    let delivered = Log::new();
    let (i, m, d) = (in_flight.clone(), max.clone(), delivered.clone());
    let sink = TV::async_func(move |h, _this, args| {
        let e = &args[0];
        let kind = e.str_at("type");
        i.set(i.get() + 1);
        m.set(m.get().max(i.get()));
        if let Some(rest) = kind.strip_prefix("tool_execution_") {
            d.push(format!("{rest}:{}", e.str_at("toolCallId")));
        }
        let wait = if kind.starts_with("tool_execution_") { Some(h.sleep(6.0)) } else { None };
        let i = i.clone();
        async move {
            if let Some(wait) = wait {
                wait.await;
            }
            i.set(i.get() - 1);
            Ok(TV::Undefined)
        }
        .boxed_local()
    });
    let mk = |ms: f64| {
        TV::async_func(move |h, _this, args| {
            let (id, on_update) = (args[0].js_string(), args[3].clone());
            let h = h.clone();
            async move {
                h.call_sync(&on_update, &TV::Undefined, &[ok_result(&format!("{id} 1"))])?;
                h.sleep(ms).await;
                h.call_sync(&on_update, &TV::Undefined, &[ok_result(&format!("{id} 2"))])?;
                Ok(ok_result(&id))
            }
            .boxed_local()
        })
    };
    let w = World::with(vec![reply_calls(vec![call("a", "ta", json!({})), call("b", "tb", json!({}))]), reply("done")]);
    w.exec(
        RunSpec::prompt(
            vec![user("go")],
            ctx_tools(vec![], vec![tool("ta", mk(4.0)), tool("tb", mk(5.0))]),
            config(&[]),
        )
        .sink(sink),
    )
    .unwrap();
    assert_eq!(max.get(), 1, "never two emits in flight");
    for id in ["a", "b"] {
        let mine: Vec<String> = delivered.get().into_iter().filter(|x| x.ends_with(&format!(":{id}"))).collect();
        assert_eq!(
            mine,
            vec![format!("start:{id}"), format!("update:{id}"), format!("update:{id}"), format!("end:{id}")]
        );
    }
    w.assert_clean();
}

#[test]
fn l_3_10_4_failing_emit_lets_running_tools_settle_then_drive_returns_the_thrown_value() {
    let failure = TV::error("listener failed");
    let slow_settled = Rc::new(Cell::new(false));
    let ss = slow_settled.clone();
    let slow = TV::async_func(move |h, _this, _args| {
        let sleep = h.sleep(40.0);
        let ss = ss.clone();
        async move {
            sleep.await;
            ss.set(true);
            Ok(ok_result("slow"))
        }
        .boxed_local()
    });
    let w = World::with(vec![
        reply_calls(vec![call("f", "fast", json!({})), call("s", "slow", json!({}))]),
        reply("never"),
    ]);
    let calls_after = Count::new();
    let failed = Rc::new(Cell::new(false));
    let (ca, fl, thrown, rec) = (calls_after.clone(), failed.clone(), failure.clone(), w.rec.sink());
    let emit = TV::func(move |h, this, args| {
        if fl.get() {
            ca.bump();
        }
        h.call_sync(&rec, this, args)?;
        if args[0].str_at("type") == "tool_execution_end" && args[0].str_at("toolCallId") == "f" {
            fl.set(true);
            return Err(thrown.clone());
        }
        Ok(TV::Undefined)
    });
    let (after, after_calls) = counter();
    let outcome = w.exec(
        RunSpec::prompt(
            vec![user("go")],
            ctx_tools(vec![], vec![tool("fast", exec_ok("fast")), tool("slow", slow)]),
            config(&[("afterToolCall", after)]),
        )
        .sink(emit),
    );
    let err = outcome.err().unwrap();
    assert!(err.same(&failure), "rejects with the thrown value");
    assert!(slow_settled.get(), "the running tool settled first");
    assert_eq!(w.h.now(), 40.0);
    assert!(after_calls.get() >= 1);
    assert_eq!(calls_after.get(), 0, "nothing emitted after the failure");
    assert_eq!(w.requests(), 1, "no new request");
    w.h.settle();
    assert_eq!(calls_after.get(), 0);
    w.assert_clean();
}

#[test]
fn l_3_10_4_emit_throwing_on_agent_start_rejects_with_no_request() {
    let w = World::with(vec![reply("never")]);
    let failure = TV::error("sink down");
    let (f, calls) = {
        let failure = failure.clone();
        counted(move |_, _| Err(failure.clone()))
    };
    let err = w.exec(RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[])).sink(f)).err().unwrap();
    assert!(err.same(&failure));
    assert_eq!((calls.get(), w.requests()), (1, 0));
    w.assert_clean();
}

#[test]
fn l_3_10_4_a_rejecting_emit_stops_sequential_work_and_hooks() {
    let w =
        World::with(vec![reply_calls(vec![call("c1", "t", json!({})), call("c2", "t", json!({}))]), reply("never")]);
    let failure = TV::str("rejected");
    let (exec, executed) = counted(|_, _| Ok(ok_result("x")));
    let (finish, finished) = counter();
    let f = failure.clone();
    let emit = TV::func(move |h, _this, args| {
        if args[0].str_at("type") == "message_end" && args[0].path("message.role").as_str() == Some("assistant") {
            return Ok(h.rejected(&f));
        }
        Ok(TV::Undefined)
    });
    let err = w
        .exec(
            RunSpec::prompt(
                vec![user("go")],
                ctx_tools(vec![], vec![tool("t", exec)]),
                config(&[("finishTurn", finish), ("toolExecution", TV::str("sequential"))]),
            )
            .sink(emit),
        )
        .err()
        .unwrap();
    assert!(err.same(&failure));
    assert_eq!((executed.get(), finished.get(), w.requests()), (0, 0, 1));
}

// ---------------------------------------------------------------------------------------------
// API-1.3.5 `this` bindings
// ---------------------------------------------------------------------------------------------

#[test]
fn api_1_3_5_hooks_are_called_on_the_current_config_sinks_and_stream_fn_on_undefined() {
    let echo = tool("echo", exec_ok("x"));
    let w = World::with(vec![reply_calls(vec![call("c1", "echo", json!({}))]), reply("done")]);
    let cfg = config(&[]);
    let original_model = cfg.get("model");
    let m2 = model_with(&[("id", TV::str("m2"))]);
    let seen = Rc::new(RefCell::new(Vec::<(String, TV)>::new()));
    let hook = |name: &'static str, value: TV| {
        let s = seen.clone();
        TV::func(move |_h, this, _args| {
            s.borrow_mut().push((name.to_string(), this.clone()));
            Ok(value.clone())
        })
    };
    for (name, value) in [
        ("getSteeringMessages", TV::arr(vec![])),
        ("getFollowUpMessages", TV::arr(vec![])),
        ("beforeToolCall", TV::Undefined),
        ("afterToolCall", TV::Undefined),
        ("finishTurn", TV::Undefined),
        ("prepareRequest", TV::Undefined),
        ("getApiKey", TV::Undefined),
    ] {
        cfg.set(name, hook(name, value));
    }
    cfg.set("prepareNextTurn", hook("prepareNextTurn", TV::obj(&[("model", m2.clone())])));
    let s = seen.clone();
    let convert = convert_to_llm();
    cfg.set(
        "convertToLlm",
        TV::func(move |h, this, args| {
            s.borrow_mut().push(("convertToLlm".into(), this.clone()));
            h.call_sync(&convert, this, args)
        }),
    );
    let emit_this = Rc::new(RefCell::new(Vec::<TV>::new()));
    let et = emit_this.clone();
    let sink = TV::func(move |_h, this, _args| {
        et.borrow_mut().push(this.clone());
        Ok(TV::Undefined)
    });
    w.exec(RunSpec::prompt(vec![user("go")], ctx_tools(vec![], vec![echo]), cfg.clone()).sink(sink)).unwrap();
    let seen = seen.borrow();
    let prepare_next_at = seen.iter().position(|(n, _)| n == "prepareNextTurn").unwrap();
    for (i, (name, this)) in seen.iter().enumerate() {
        if i <= prepare_next_at {
            assert!(this.same(&cfg), "{name} before the update is called on the config");
        } else {
            assert!(!this.same(&cfg), "{name} after the update is called on the replaced config");
            assert!(this.get("model").same(&m2), "{name}: the current config");
            assert!(this.get("finishTurn").same(&cfg.get("finishTurn")), "a shallow copy");
        }
    }
    assert!(seen.len() > prepare_next_at + 3);
    assert!(emit_this.borrow().iter().all(TV::is_undefined));
    assert!(cfg.get("model").same(&original_model), "the caller's config is untouched");
}

#[test]
fn d2_4_an_abort_inside_a_steering_getter_that_returned_messages_injects_them() {
    let w = World::with(vec![reply("one"), reply("never")]);
    let (controller, signal) = w.controller();
    let steer = user("drained");
    let s = steer.clone();
    let polls = Count::new();
    let p = polls.clone();
    let getter = TV::func(move |h, _this, _args| {
        if p.bump() == 1 {
            h.abort(&controller, &TV::Undefined);
            return Ok(TV::arr(vec![s.clone()]));
        }
        Ok(TV::arr(vec![]))
    });
    let result = w
        .exec(
            RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[("getSteeringMessages", getter)])).signal(&signal),
        )
        .unwrap();
    assert_eq!(
        w.labels(),
        strs(&[
            "agent_start",
            "turn_start",
            "message_start:user",
            "message_end:user",
            "message_start:assistant",
            "message_end:assistant",
            "turn_end",
            "turn_start",
            "message_start:user",
            "message_end:user",
            "message_start:assistant",
            "message_end:assistant",
            "turn_end",
            "agent_end",
        ])
    );
    let items = result.items();
    assert!(items[2].same(&steer), "D2.5: drained messages always reach the transcript");
    assert_eq!(
        (items[3].str_at("stopReason"), items[3].str_at("errorMessage")),
        ("aborted".into(), "Request was aborted".into())
    );
    assert_eq!((w.requests(), polls.get()), (1, 2));
    w.assert_clean();
}

/// L-3.10.4: after a failing emit the loop "starts no new work (request, execute, hook)"; a
/// parallel call still running when the emit failed must settle without a new afterToolCall.
#[test]

fn l_3_10_4_no_after_tool_call_is_started_after_a_failing_emit() {
    let w = World::with(vec![
        reply_calls(vec![call("f", "fast", json!({})), call("s", "slow", json!({}))]),
        reply("never"),
    ]);
    let failure = TV::error("listener failed");
    let thrown = failure.clone();
    let emit = TV::func(move |_h, _this, args| {
        if args[0].str_at("type") == "tool_execution_end" && args[0].str_at("toolCallId") == "f" {
            return Err(thrown.clone());
        }
        Ok(TV::Undefined)
    });
    let after_ids = Log::new();
    let a = after_ids.clone();
    let after = TV::func(move |h, _this, args| {
        a.push(format!("{}@{}", args[0].path("toolCall.id").js_string(), h.now()));
        Ok(TV::Undefined)
    });
    let outcome = w.exec(
        RunSpec::prompt(
            vec![user("go")],
            ctx_tools(vec![], vec![tool("fast", exec_ok("fast")), tool("slow", exec_after(40.0, ok_result("slow")))]),
            config(&[("afterToolCall", after)]),
        )
        .sink(emit),
    );
    assert!(outcome.err().unwrap().same(&failure));
    assert_eq!(w.h.now(), 40.0, "the running execution settled first");
    assert_eq!(after_ids.get(), strs(&["f@0"]), "no hook started after the failure");
}

/// L-3.10.4, sequential: an emit failing on a running call's update lets the execution settle, but
/// its afterToolCall is new work and must not start.
#[test]

fn l_3_10_4_a_failing_update_emit_starts_no_after_tool_call() {
    let w = World::with(vec![reply_calls(vec![call("c1", "t", json!({}))]), reply("never")]);
    let failure = TV::error("update listener failed");
    let thrown = failure.clone();
    let emit = TV::func(move |_h, _this, args| {
        if args[0].str_at("type") == "tool_execution_update" {
            return Err(thrown.clone());
        }
        Ok(TV::Undefined)
    });
    let exec = TV::async_func(|h, _this, args| {
        let (h, on_update) = (h.clone(), args[3].clone());
        async move {
            h.call_sync(&on_update, &TV::Undefined, &[ok_result("progress")])?;
            h.sleep(10.0).await;
            Ok(ok_result("done"))
        }
        .boxed_local()
    });
    let (after, after_calls) = counter();
    let outcome = w.exec(
        RunSpec::prompt(
            vec![user("go")],
            ctx_tools(vec![], vec![tool("t", exec)]),
            config(&[("afterToolCall", after), ("toolExecution", TV::str("sequential"))]),
        )
        .sink(emit),
    );
    assert!(outcome.err().unwrap().same(&failure));
    assert_eq!(w.h.now(), 10.0, "the running execution settled");
    assert_eq!(after_calls.get(), 0, "no hook started after the failure");
}

#[test]
fn l_3_6_non_object_unknown_and_untyped_events_are_skipped() {
    let w = World::new();
    let h = &w.h;
    let fin = assistant_message("final");
    let source = source_of(
        h,
        vec![
            TV::num(5.0),
            TV::Null,
            TV::obj(&[("type", TV::num(7.0))]),
            event("start", &[("partial", pending_copy(h, &fin))]),
            event("something_new", &[("partial", TV::obj(&[]))]),
            event("text_start", &[("contentIndex", TV::num(0.0)), ("partial", pending_copy(h, &fin))]),
            event("done", &[("reason", TV::str("stop")), ("message", fin.clone())]),
        ],
        None,
    );
    let result =
        w.exec(RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[])).stream_fn(returning(source))).unwrap();
    assert!(result.at(1).same(&fin));
    assert_eq!(
        w.all_labels()[4..],
        strs(&[
            "message_start:assistant",
            "message_update:assistant",
            "message_end:assistant",
            "turn_end",
            "agent_end"
        ])
    );
}
