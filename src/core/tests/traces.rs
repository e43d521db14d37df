//! Normative traces (SPEC §3.11 T1–T9, D1-a, D2-a, D2-b) and the design document's parallel
//! example, with exact event labels, request counts and polling counts.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use super::support::*;
use crate::core::host::Host;
use crate::core::test_host::{EPOCH_MS, TV, faux_assistant};
use futures::FutureExt;
use serde_json::json;

#[test]
fn t1_prompt_one_tool_undeclared_tools_exact_trace_roles_result_json_and_stream_options() {
    let w = World::with(vec![reply_calls(vec![call("c1", "noop", json!({}))]), reply("done")]);
    let noop = tool("noop", exec_ok("noop"));
    let result = w.prompt(vec![user("go")], ctx_tools(vec![], vec![noop]), config(&[]));
    assert_eq!(
        w.labels(),
        strs(&[
            "agent_start",
            "turn_start",
            "message_start:system",
            "message_end:system",
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
            "message_start:assistant",
            "message_end:assistant",
            "turn_end",
            "agent_end",
        ])
    );
    assert_eq!(roles(&result), strs(&["system", "user", "assistant", "toolResult", "assistant"]));
    let items = result.items();
    assert_eq!(items[4].get("thinkingLevel").as_str(), Some("off"));
    assert_eq!(
        json(&w.h, &items[3]),
        r#"{"role":"toolResult","toolCallId":"c1","toolName":"noop","content":[{"type":"text","text":"noop"}],"details":{},"isError":false,"durationMs":0,"timestamp":1700000000000}"#
    );
    assert_eq!(w.requests(), 2);
    for c in w.faux.calls() {
        assert_eq!(
            json(&w.h, &c.options.get("identity")),
            r#"{"attribution":{"name":"pi","url":"https://pi.dev","categories":["cli-agent"]}}"#
        );
        assert!(c.options.get("reasoning").is_undefined());
    }
    // The result is the live array agent_end carries.
    assert!(w.events("agent_end")[0].get("messages").same(&result));
    w.assert_clean();
}

#[test]
fn t2_sequential_batch_ok_unknown_coerced_blocked_missing_argument() {
    let received = Log::new();
    let r = received.clone();
    let exec = TV::func(move |h, _this, args| {
        r.push(format!("{} {}", args[0].js_string(), json(h, &args[1])));
        Ok(ok_result(&format!("ok {}", args[0].js_string())))
    });
    let ok = tool_with(
        "ok",
        exec,
        &[(
            "parameters",
            TV::from_json(&json!({"type": "object", "properties": {"v": {"type": "string"}}, "required": ["v"]})),
        )],
    );
    let w = World::with(vec![
        reply_calls(vec![
            call("a", "ok", json!({"v": "x"})),
            call("b", "nope", json!({})),
            call("c", "ok", json!({"v": 5})),
            call("d", "ok", json!({"v": "block me"})),
            call("e", "ok", json!({})),
        ]),
        reply("done"),
    ]);
    let before = TV::func(|_h, _this, args| {
        Ok(if args[0].path("args.v").as_str() == Some("block me") {
            TV::obj(&[("block", TV::Bool(true))])
        } else {
            TV::Undefined
        })
    });
    w.prompt(
        vec![user("go")],
        ctx_tools(vec![], vec![ok]),
        config(&[("toolExecution", TV::str("sequential")), ("beforeToolCall", before)]),
    );
    let h = &w.h;
    let a = w.end_of("a");
    assert_eq!(first_text(&a.get("result")), "ok a");
    assert_eq!(a.get("isError").as_bool(), Some(false));
    assert_eq!(a.get("durationMs").as_num(), Some(0.0));
    let b = w.end_of("b");
    assert_eq!(json(h, &b.get("result")), r#"{"content":[{"type":"text","text":"Tool nope not found"}],"details":{}}"#);
    assert_eq!(b.get("isError").as_bool(), Some(true));
    assert!(!b.has_own("durationMs"));
    assert_eq!(first_text(&w.end_of("c").get("result")), "ok c");
    assert_eq!(received.get(), strs(&[r#"a {"v":"x"}"#, r#"c {"v":"5"}"#]));
    let d = w.end_of("d");
    assert_eq!(
        json(h, &d.get("result")),
        r#"{"content":[{"type":"text","text":"Tool execution was blocked"}],"details":{}}"#
    );
    assert_eq!(d.get("isError").as_bool(), Some(true));
    let e = w.end_of("e");
    assert_eq!(
        first_text(&e.get("result")),
        "Validation failed for tool \"ok\":\n  - v: missing\n\nReceived arguments:\n{}"
    );
    assert_eq!(e.get("isError").as_bool(), Some(true));
    let tool_part: Vec<String> =
        w.labels().into_iter().filter(|l| l.starts_with("tool_") || l.ends_with(":toolResult")).collect();
    let mut expected = Vec::new();
    for id in ["a", "b", "c", "d", "e"] {
        expected.push(format!("tool_execution_start:{id}"));
        expected.push(format!("tool_execution_end:{id}"));
        expected.push("message_start:toolResult".to_string());
        expected.push("message_end:toolResult".to_string());
    }
    assert_eq!(tool_part, expected);
}

/// The design document's example: toolA takes 100 virtual ms, toolB 10 ms.
#[test]
fn t3_parallel_ends_in_completion_order_results_in_source_order() {
    let tool_a = tool("toolA", exec_after(100.0, ok_result("A")));
    let tool_b = tool("toolB", exec_after(10.0, ok_result("B")));
    let w = World::with(vec![
        reply_calls(vec![call("A", "toolA", json!({})), call("B", "toolB", json!({}))]),
        reply("done"),
    ]);
    let result = w.prompt(vec![user("go")], ctx_tools(vec![], vec![tool_a, tool_b]), config(&[]));
    let part: Vec<String> = w
        .rec
        .events()
        .iter()
        .filter_map(|e| {
            let kind = e.str_at("type");
            if kind.starts_with("tool_execution_") {
                Some(format!("{kind}:{}", e.str_at("toolCallId")))
            } else if kind.starts_with("message_") && e.path("message.role").as_str() == Some("toolResult") {
                Some(format!("{kind}:toolResult({})", e.path("message.toolCallId").js_string()))
            } else if kind == "turn_end" {
                Some(kind)
            } else {
                None
            }
        })
        .collect();
    assert_eq!(
        part[..9],
        strs(&[
            "tool_execution_start:A",
            "tool_execution_start:B",
            "tool_execution_end:B",
            "tool_execution_end:A",
            "message_start:toolResult(A)",
            "message_end:toolResult(A)",
            "message_start:toolResult(B)",
            "message_end:toolResult(B)",
            "turn_end",
        ])
    );
    // Virtual durations are exact: execute alone, rounded.
    assert_eq!(w.end_of("A").get("durationMs").as_num(), Some(100.0));
    assert_eq!(w.end_of("B").get("durationMs").as_num(), Some(10.0));
    let ids: Vec<String> = w.faux.calls()[1]
        .messages
        .iter()
        .filter(|m| m.get("role").as_str() == Some("toolResult"))
        .map(|m| m.str_at("toolCallId"))
        .collect();
    assert_eq!(ids, strs(&["A", "B"]));
    let turn_end = &w.events("turn_end")[0];
    let ids: Vec<String> = turn_end.get("toolResults").items().iter().map(|m| m.str_at("toolCallId")).collect();
    assert_eq!(ids, strs(&["A", "B"]));
    // Both tool results are stamped when the batch finished (t = 100).
    for m in result.items().iter().filter(|m| m.get("role").as_str() == Some("toolResult")) {
        assert_eq!(m.num_at("timestamp"), EPOCH_MS + 100.0);
    }
    assert_eq!(w.h.now(), 100.0);
    w.assert_clean();
}

#[test]
fn t4_finish_turn_end_after_a_tool_turn_exact_events_and_counts() {
    let w = World::with(vec![reply_calls(vec![call("tool-1", "echo", json!({}))]), reply("never")]);
    let steering = Queue::all();
    let follow_up = Queue::all();
    let (prepare_next, prepared) = counter();
    let seen = Log::new();
    let s = seen.clone();
    let finish = TV::func(move |_h, _this, args| {
        let turn = &args[0];
        let ids: Vec<String> = turn.get("toolResults").items().iter().map(|r| r.str_at("toolCallId")).collect();
        s.push(format!("{ids:?} {:?}", roles(&turn.path("context.messages"))));
        Ok(TV::obj(&[("action", TV::str("end"))]))
    });
    let (exec, executed) = counted(|_, _| Ok(ok_result("ok")));
    w.prompt(
        vec![user("go")],
        ctx_tools(vec![], vec![tool("echo", exec)]),
        config(&[
            ("getSteeringMessages", steering.getter()),
            ("getFollowUpMessages", follow_up.getter()),
            ("prepareNextTurn", prepare_next),
            ("finishTurn", finish),
        ]),
    );
    assert_eq!(
        w.labels(),
        strs(&[
            "agent_start",
            "turn_start",
            "message_start:system",
            "message_end:system",
            "message_start:user",
            "message_end:user",
            "message_start:assistant",
            "message_end:assistant",
            "tool_execution_start:tool-1",
            "tool_execution_end:tool-1",
            "message_start:toolResult",
            "message_end:toolResult",
            "turn_end",
            "agent_end",
        ])
    );
    assert_eq!(executed.get(), 1);
    assert_eq!(seen.get(), vec![r#"["tool-1"] ["system", "user", "assistant", "toolResult"]"#.to_string()]);
    assert_eq!(
        (w.requests(), steering.polls(), follow_up.polls(), prepared.get()),
        (1, 1, 0, 0),
        "1 request, 1 steering poll, 0 follow-up polls, 0 prepareNextTurn"
    );
}

#[test]
fn t5_continuation_with_undeclared_tools_declares_them_first() {
    let w = World::with(vec![reply("ok")]);
    let result =
        w.exec(RunSpec::resume(ctx_tools(vec![user("hi")], vec![tool("echo", exec_ok("x"))]), config(&[]))).unwrap();
    assert_eq!(
        w.labels(),
        strs(&[
            "agent_start",
            "turn_start",
            "message_start:system",
            "message_end:system",
            "message_start:assistant",
            "message_end:assistant",
            "turn_end",
            "agent_end",
        ])
    );
    assert_eq!(roles(&result), strs(&["system", "assistant"]));
    let added: Vec<String> = result.at(0).get("toolsAdded").items().iter().map(|t| t.str_at("name")).collect();
    assert_eq!(added, strs(&["echo"]));
    assert_eq!(w.request_roles(0), strs(&["user", "system"]));
}

fn hard_exit_trace(stop_reason: &str) {
    let message = faux_assistant(vec![text("partial"), call("c1", "echo", json!({}))], stop_reason);
    message.delete("timestamp");
    message.set("errorMessage", TV::str("provider failed"));
    let w = World::with(vec![message, reply("never")]);
    let steering = Queue::all();
    let follow_up = Queue::all();
    let order = Log::new();
    let turns = Log::new();
    let (o, t) = (order.clone(), turns.clone());
    let finish = TV::func(move |_h, _this, args| {
        o.push("finishTurn");
        t.push(format!("{}", args[0].get("toolResults").len()));
        Ok(TV::obj(&[("action", TV::str("continue"))]))
    });
    let o = order.clone();
    let sink = TV::func(move |_h, _this, args| {
        let e = &args[0];
        let kind = e.str_at("type");
        if kind.starts_with("message_") && kind != "message_update" {
            o.push(format!("{kind}:{}", e.path("message.role").js_string()));
        } else if kind != "message_update" {
            o.push(kind);
        }
        Ok(TV::Undefined)
    });
    let (exec, executed) = counted(|_, _| Ok(ok_result("ok")));
    let echo = tool("echo", exec);
    let result = w
        .exec(
            RunSpec::prompt(
                vec![user("go")],
                ctx_tools(vec![declaring(std::slice::from_ref(&echo))], vec![echo]),
                config(&[
                    ("getSteeringMessages", steering.getter()),
                    ("getFollowUpMessages", follow_up.getter()),
                    ("finishTurn", finish),
                ]),
            )
            .sink(sink),
        )
        .unwrap();
    assert_eq!(
        order.get(),
        strs(&[
            "agent_start",
            "turn_start",
            "message_start:user",
            "message_end:user",
            "message_start:assistant",
            "message_end:assistant",
            "finishTurn",
            "turn_end",
            "agent_end",
        ])
    );
    assert_eq!(turns.get(), strs(&["0"]), "finishTurn sees toolResults: []");
    assert_eq!((w.requests(), executed.get(), steering.polls(), follow_up.polls()), (1, 0, 1, 0));
    assert_eq!(roles(&result), strs(&["user", "assistant"]));
    let last = result.at(1);
    assert_eq!(last.str_at("stopReason"), stop_reason);
    assert_eq!(last.str_at("errorMessage"), "provider failed");
}

#[test]
fn t6_hard_exit_on_error_ignores_finish_turn_continue() {
    hard_exit_trace("error");
}

#[test]
fn t6_hard_exit_on_aborted_ignores_finish_turn_continue() {
    hard_exit_trace("aborted");
}

#[test]
fn t7_steering_queued_during_the_first_sequential_execution_waits_for_the_batch() {
    let steering = Queue::all();
    let s = steering.clone();
    let exec = TV::async_func(move |h, _this, args| {
        if args[0].as_str() == Some("c1") {
            s.push(user("interrupt"));
        }
        let sleep = h.sleep(2.0);
        let id = args[0].js_string();
        async move {
            sleep.await;
            Ok(ok_result(&id))
        }
        .boxed_local()
    });
    let w = World::with(vec![reply_calls(vec![call("c1", "t", json!({})), call("c2", "t", json!({}))]), reply("done")]);
    w.prompt(
        vec![user("go")],
        ctx_tools(vec![], vec![tool("t", exec)]),
        config(&[("toolExecution", TV::str("sequential")), ("getSteeringMessages", steering.getter())]),
    );
    let labels = w.labels();
    let from = labels.iter().position(|l| l == "tool_execution_start:c1").unwrap();
    assert_eq!(
        labels[from..],
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
            "turn_start",
            "message_start:user",
            "message_end:user",
            "message_start:assistant",
            "message_end:assistant",
            "turn_end",
            "agent_end",
        ])
    );
    assert!(!w.request_texts(0).contains(&"interrupt".to_string()));
    assert_eq!(w.request_texts(1).last().map(String::as_str), Some("interrupt"));
    assert_eq!(w.request_roles(1), strs(&["system", "user", "assistant", "toolResult", "toolResult", "user"]));
    assert_eq!(w.h.now(), 4.0);
}

#[test]
fn t8_explicit_continuation_two_requests_four_steering_polls_two_follow_up_polls() {
    let w = World::with(vec![reply("first"), reply("second")]);
    let steering = Queue::all();
    let follow_up = Queue::all();
    let (finish, finished) =
        counted(|n, _| Ok(if n == 0 { TV::obj(&[("action", TV::str("continue"))]) } else { TV::Undefined }));
    let (prepare_next, prepared) = counter();
    let result = w.prompt(
        vec![user("go")],
        ctx(vec![]),
        config(&[
            ("getSteeringMessages", steering.getter()),
            ("getFollowUpMessages", follow_up.getter()),
            ("prepareNextTurn", prepare_next),
            ("finishTurn", finish),
        ]),
    );
    assert_eq!((w.requests(), finished.get(), steering.polls(), follow_up.polls(), prepared.get()), (2, 2, 4, 2, 1));
    assert_eq!(w.request_roles(1), strs(&["user", "assistant"]));
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
            "message_start:assistant",
            "message_end:assistant",
            "turn_end",
            "agent_end",
        ])
    );
    assert_eq!(roles(&result), strs(&["user", "assistant", "assistant"]));
}

#[test]
fn t9_terminate_plus_one_queued_follow_up_makes_two_requests() {
    let t = tool("t", exec_ok_terminate());
    let follow_up = Queue::with(vec![user("next task")]);
    let w = World::with(vec![
        reply_calls(vec![call("1", "t", json!({})), call("2", "t", json!({}))]),
        reply("did next task"),
    ]);
    let result =
        w.prompt(vec![user("go")], ctx_tools(vec![], vec![t]), config(&[("getFollowUpMessages", follow_up.getter())]));
    assert_eq!(w.requests(), 2);
    assert_eq!(w.request_texts(1).last().map(String::as_str), Some("next task"));
    assert_eq!(roles(&result), strs(&["system", "user", "assistant", "toolResult", "toolResult", "user", "assistant"]));
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

fn exec_ok_terminate() -> TV {
    TV::func(|_h, _this, _args| Ok(ok_result_with("x", &[("terminate", TV::Bool(true))])))
}

#[test]
fn d1_a_stream_fn_throws_provider_exploded_the_run_ends_with_an_error_assistant() {
    let w = World::new();
    let prompt = user("hi");
    let stream_fn = TV::func(|_h, _this, _args| Err(TV::error("provider exploded")));
    let result =
        w.exec(RunSpec::prompt(vec![prompt.clone()], ctx(vec![]), config(&[])).stream_fn(stream_fn).observe()).unwrap();
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
    assert_eq!(result.len(), 2);
    assert!(result.at(0).same(&prompt));
    let failure = result.at(1);
    assert_eq!(failure.keys(), strs(&FAILURE_KEYS));
    assert_eq!(failure.to_json(), failure_json("error", "provider exploded", 0.0));
    let turn_end = &w.events("turn_end")[0];
    assert!(turn_end.get("message").same(&failure));
    assert!(turn_end.get("toolResults").is_empty());
    let end =
        w.events("message_end").into_iter().find(|e| e.path("message.role").as_str() == Some("assistant")).unwrap();
    assert!(end.get("message").same(&failure));
    w.assert_clean();
}

/// Trace D2-a (Agent): a tool aborted mid-batch while steering and follow-up are queued.
#[test]
fn d2_a_agent_tool_abort_keeps_both_queues_then_continue_sends_steering_then_follow_up() {
    let rejecting = TV::async_func(|h, _this, args| {
        let wait = h.wait_abort(&args[2]);
        async move {
            wait.await;
            Err(TV::error("tool aborted"))
        }
        .boxed_local()
    });
    let t = tool("t", rejecting);
    let w = AgentWorld::new(&[], &[("tools", TV::arr(vec![t]))]);
    w.push(vec![reply_calls(vec![call("c1", "t", json!({}))]), reply("after steer"), reply("after follow")]);
    let st = w.st.clone();
    let rec = w.record(move |h, e| {
        if e.str_at("type") == "tool_execution_start" {
            crate::core::agent::enqueue(h, &st, crate::core::agent::Queue::Steering, &user("steer"), "Agent.steer")
                .ok();
            crate::core::agent::enqueue(h, &st, crate::core::agent::Queue::FollowUp, &user("follow"), "Agent.followUp")
                .ok();
            abort_agent(h, &st);
        }
    });
    w.prompt_text("go");
    assert_eq!(w.faux.call_count(), 1);
    assert_eq!(roles_of(&w.messages()), strs(&["system", "user", "assistant", "toolResult"]));
    assert_eq!(w.messages()[3].get("isError").as_bool(), Some(true));
    // Aborted in the listener of its tool_execution_start: it never executed (D2.3).
    assert_eq!(first_text(&w.messages()[3]), "Operation aborted");
    assert!(!w.messages()[3].has_own("durationMs"));
    assert!(w.has_queued());
    assert_eq!(w.peek_texts(), strs(&["steer"]));
    let labels: Vec<String> = rec.labels().into_iter().filter(|l| !l.starts_with("message_update")).collect();
    assert_eq!(
        labels[labels.len() - 4..],
        strs(&["message_start:toolResult", "message_end:toolResult", "turn_end", "agent_end"])
    );
    assert_eq!(rec.of_type("turn_start").len(), 1);
    assert_eq!(w.h.abort_listener_count(), 0);
    assert_eq!(w.h.pending_timers(), 0);

    rec.clear();
    w.resume().unwrap();
    let calls = w.faux.calls();
    assert_eq!(calls.len(), 3);
    assert!(
        !w.h.signal_aborted(&calls[1].options.get("signal")) && !w.h.signal_aborted(&calls[2].options.get("signal"))
    );
    assert_eq!(calls[1].messages.last().map(first_text).as_deref(), Some("steer"));
    assert!(!calls[1].messages.iter().any(|m| first_text(m) == "follow"));
    assert_eq!(calls[2].messages.last().map(first_text).as_deref(), Some("follow"));
    assert_eq!(
        roles_of(&w.messages()),
        strs(&["system", "user", "assistant", "toolResult", "user", "assistant", "user", "assistant"])
    );
    assert!(!w.has_queued());
}

fn d2_b_variant(steering: bool) {
    let w = AgentWorld::new(&[], &[]);
    w.push(vec![reply("first"), reply("never")]);
    let st = w.st.clone();
    let (prepare_next, prepared) = {
        let st = st.clone();
        let count = Count::new();
        let c = count.clone();
        (
            TV::func(move |h, _this, args| {
                c.bump();
                assert!(matches!(args[0], TV::Obj(_)), "legacy prepareNextTurn gets the signal");
                abort_agent(h, &st);
                Ok(TV::Undefined)
            }),
            count,
        )
    };
    w.agent.set("prepareNextTurn", prepare_next);
    let ends = Count::new();
    let e2 = ends.clone();
    let rec = w.record(move |h, e| {
        if e.str_at("type") == "message_end" && e2.bump() + 1 == 2 {
            let which =
                if steering { crate::core::agent::Queue::Steering } else { crate::core::agent::Queue::FollowUp };
            crate::core::agent::enqueue(h, &st, which, &user("queued"), "Agent.steer").ok();
        }
    });
    w.prompt_text("go");
    assert_eq!(prepared.get(), 1);
    assert_eq!(w.faux.call_count(), 1, "no second request");
    assert_eq!(roles_of(&w.messages()), strs(&["user", "assistant", "user", "assistant"]));
    assert_eq!(first_text(&w.messages()[2]), "queued");
    let last = w.messages()[3].clone();
    assert_eq!(last.to_json(), failure_json("aborted", "Request was aborted", 0.0));
    assert_eq!(rec.of_type("turn_start").len(), 2);
    assert_eq!(rec.of_type("turn_end").len(), 2);
    let labels: Vec<String> = rec.labels().into_iter().filter(|l| !l.starts_with("message_update")).collect();
    assert_eq!(
        labels,
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
    assert_eq!(w.state("errorMessage").as_str(), Some("Request was aborted"));
    assert!(!w.has_queued());
    assert_eq!(w.state("isStreaming").as_bool(), Some(false));
    assert_eq!(w.h.abort_listener_count(), 0);
}

#[test]
fn d2_b_agent_prepare_next_turn_aborts_after_a_drained_steering_message() {
    d2_b_variant(true);
}

#[test]
fn d2_b_agent_prepare_next_turn_aborts_after_a_drained_follow_up_message() {
    d2_b_variant(false);
}

/// A tool that settles only when its signal aborts, rejecting.
fn waits_for_abort() -> TV {
    TV::async_func(|h, _this, args| {
        let wait = h.wait_abort(&args[2]);
        async move {
            wait.await;
            Err(TV::error("tool aborted"))
        }
        .boxed_local()
    })
}

/// Trace D2-c (issue 14.2): steering an aborted run left queued goes before the next prompt's
/// messages, in the order written; a follow-up left queued stays a follow-up.
#[test]
fn d2_c_agent_steering_left_by_an_aborted_run_goes_before_the_next_prompt() {
    let w = AgentWorld::new(&[], &[("tools", TV::arr(vec![tool("t", waits_for_abort())]))]);
    w.push(vec![reply_calls(vec![call("c1", "t", json!({}))]), reply("after next"), reply("after follow")]);
    let st = w.st.clone();
    let rec = w.record(move |h, e| {
        if e.str_at("type") == "tool_execution_start" {
            let q = |queue, text: &str, f| crate::core::agent::enqueue(h, &st, queue, &user(text), f).ok();
            q(crate::core::agent::Queue::Steering, "s1", "Agent.steer");
            q(crate::core::agent::Queue::Steering, "s2", "Agent.steer");
            q(crate::core::agent::Queue::FollowUp, "follow", "Agent.followUp");
            abort_agent(h, &st);
        }
    });
    w.prompt_text("go");
    assert_eq!(w.faux.call_count(), 1, "D2: no request after the abort");
    assert_eq!(w.peek_texts(), strs(&["s1"]), "D2.5: both steering messages stay queued");
    rec.clear();
    w.prompt_text("next");
    let calls = w.faux.calls();
    assert_eq!(calls.len(), 3);
    let texts_of = |i: usize| calls[i].messages.iter().map(first_text).collect::<Vec<_>>();
    // Both left steering messages (one-at-a-time mode notwithstanding), then the prompt.
    assert_eq!(texts_of(1)[texts_of(1).len() - 3..], strs(&["s1", "s2", "next"]));
    assert_eq!(texts_of(2).last().map(String::as_str), Some("follow"));
    let tail: Vec<String> = w.texts().into_iter().skip(4).collect();
    assert_eq!(tail, strs(&["s1", "s2", "next", "after next", "follow", "after follow"]));
    let labels: Vec<String> = rec.labels().into_iter().filter(|l| !l.starts_with("message_update")).collect();
    assert_eq!(
        labels[..8],
        strs(&[
            "agent_start",
            "turn_start",
            "message_start:user",
            "message_end:user",
            "message_start:user",
            "message_end:user",
            "message_start:user",
            "message_end:user",
        ])
    );
    assert!(!w.has_queued());
}

/// Issue 14.2: steering queued while idle keeps the reference's order (prompt first, then the run's
/// initial poll); the mark of an aborted run covers only what it left, and any run start clears it.
#[test]
fn d2_c_agent_steering_queued_while_idle_follows_the_prompt_and_only_left_steering_goes_first() {
    let w = AgentWorld::new(&[], &[("tools", TV::arr(vec![tool("t", waits_for_abort())]))]);
    w.push(vec![reply("first"), reply("second")]);
    w.prompt_text("go");
    w.steer(user("idle"));
    w.prompt_text("next");
    let texts = w.texts();
    assert_eq!(texts[texts.len() - 5..], strs(&["go", "first", "next", "idle", "second"]));

    // Left by an abort ("left"), then queued while idle ("idle2"): left, prompt, idle2.
    w.push(vec![reply_calls(vec![call("c1", "t", json!({}))]), reply("third")]);
    let st = w.st.clone();
    w.record(move |h, e| {
        if e.str_at("type") == "tool_execution_start" {
            crate::core::agent::enqueue(h, &st, crate::core::agent::Queue::Steering, &user("left"), "Agent.steer").ok();
            abort_agent(h, &st);
        }
    });
    w.prompt_text("go2");
    w.steer(user("idle2"));
    w.st.set("steeringMode", TV::str("all"));
    w.prompt_text("p");
    let texts = w.texts();
    assert_eq!(texts[texts.len() - 5..], strs(&["Operation aborted", "left", "p", "idle2", "third"]));
    assert!(!w.has_queued());
}
