//! The Agent core (§5, D8) through the functions the JS facade calls: construction, queues and
//! modes, prompt/continue rules with their exact errors, the reducer, the listener barrier, run
//! failure (A-5.6), reset, and snapshots.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use super::support::*;
use crate::core::agent::{
    self, ASSISTANT_TAIL, CONTINUE_BUSY, NOTHING_TO_CONTINUE, PROMPT_BUSY, Queue as Q, RESET_BUSY,
};
use crate::core::host::Host;
use crate::core::test_host::{EPOCH_MS, FauxProvider, TV, TestHost};
use futures::FutureExt;
use serde_json::json;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

fn default_model_json() -> serde_json::Value {
    json!({"id": "unknown", "name": "unknown", "api": "unknown", "provider": "unknown", "baseUrl": "",
           "reasoning": false, "input": [], "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
           "contextWindow": 0, "maxTokens": 0})
}

/// `new Agent(options)` on a fresh host; the error text on failure.
fn init_with(options: TV) -> Result<AgentWorld, String> {
    let h = TestHost::new();
    let faux = FauxProvider::new(&h);
    let w = AgentWorld::bare(h, faux);
    match agent::init(&w.h, &w.agent, &w.st, &options, &TV::str("default-stream-fn")) {
        Ok(()) => Ok(w),
        Err(e) => Err(arg_error_text(&w.h, e)),
    }
}

fn labels_no_updates(rec: &crate::core::test_host::Recorder) -> Vec<String> {
    rec.labels()
        .into_iter()
        .filter(|l| !l.starts_with("message_update") && !l.starts_with("tool_execution_update"))
        .collect()
}

fn error_text(h: &TestHost, r: Result<(), TV>) -> String {
    match r {
        Ok(()) => "ok".into(),
        Err(e) => format!("{}: {}", e.get("name").js_string(), h.error_message(&e)),
    }
}

// ---------------------------------------------------------------------------------------------
// A-5.1 construction
// ---------------------------------------------------------------------------------------------

#[test]
fn a_5_1_3_default_state() {
    for options in [TV::Undefined, TV::Null, TV::obj(&[])] {
        let w = init_with(options).unwrap();
        assert_eq!(w.state("model").to_json(), default_model_json());
        assert_eq!(w.state("thinkingLevel").as_str(), Some("off"));
        assert!(w.state("tools").is_empty() && w.state("messages").is_empty());
        assert_eq!(w.state("isStreaming").as_bool(), Some(false));
        assert!(w.state("streamingMessage").is_undefined());
        assert!(w.h.set_items(&w.state("pendingToolCalls")).unwrap().is_empty());
        assert!(w.state("errorMessage").is_undefined());
        assert_eq!(w.state("steeringMode").as_str(), Some("one-at-a-time"));
        assert_eq!(w.state("followUpMode").as_str(), Some("one-at-a-time"));
        assert!(w.state("active").is_undefined());
        assert_eq!(w.agent.get("transport").as_str(), Some("auto"));
        assert_eq!(w.agent.get("toolExecution").as_str(), Some("parallel"));
        assert_eq!(
            w.agent.get("streamFunction").as_str(),
            Some("default-stream-fn"),
            "getDefaultStreamFn() at construction"
        );
        assert!(w.agent.get("convertToLlm").is_func());
        assert!(w.agent.has_own("sessionId") && w.agent.get("sessionId").is_undefined());
    }
}

#[test]
fn a_5_1_2_default_convert_to_llm_keeps_the_four_llm_roles() {
    let w = init_with(TV::Undefined).unwrap();
    let keep: Vec<TV> =
        ["system", "user", "assistant", "toolResult"].iter().map(|r| TV::obj(&[("role", TV::str(r))])).collect();
    let custom = TV::obj(&[("role", TV::str("notification"))]);
    let input = TV::arr(vec![keep[0].clone(), custom, keep[1].clone(), keep[2].clone(), keep[3].clone()]);
    let out = w.h.call_sync(&w.agent.get("convertToLlm"), &TV::Undefined, &[input]).unwrap();
    assert_eq!(out.len(), 4);
    for (i, m) in keep.iter().enumerate() {
        assert!(out.at(i).same(m));
    }
}

#[test]
fn a_5_1_2_options_become_public_fields() {
    let before = exec_ok("hook");
    let stream_fn = exec_ok("stream");
    let w = init_with(TV::obj(&[
        ("beforeToolCall", before.clone()),
        ("sessionId", TV::str("s-1")),
        ("apiKey", TV::str("k")),
        ("toolExecution", TV::str("sequential")),
        ("transport", TV::str("sse")),
        ("streamFn", stream_fn.clone()),
        ("steeringMode", TV::str("all")),
        ("maxParallelTools", TV::num(2.0)),
    ]))
    .unwrap();
    assert!(w.agent.get("beforeToolCall").same(&before));
    assert_eq!(w.agent.get("sessionId").as_str(), Some("s-1"));
    assert_eq!(w.agent.get("apiKey").as_str(), Some("k"));
    assert_eq!(w.agent.get("toolExecution").as_str(), Some("sequential"));
    assert_eq!(w.agent.get("transport").as_str(), Some("sse"));
    assert_eq!(w.agent.get("maxParallelTools").as_num(), Some(2.0));
    assert!(w.agent.get("streamFunction").same(&stream_fn));
    assert!(!w.agent.has_own("streamFn") && !w.agent.has_own("steeringMode") && !w.agent.has_own("initialState"));
    assert_eq!(w.state("steeringMode").as_str(), Some("all"));
}

#[test]
fn a_5_1_3_initial_state_system_prompt_and_tools_become_one_leading_system_message() {
    let m = model_with(&[("id", TV::str("custom-1"))]);
    let w = init_with(TV::obj(&[(
        "initialState",
        TV::obj(&[
            ("systemPrompt", TV::str("You are a helpful assistant.")),
            ("model", m.clone()),
            ("thinkingLevel", TV::str("low")),
        ]),
    )]))
    .unwrap();
    assert!(w.state("model").same(&m));
    assert_eq!(w.state("thinkingLevel").as_str(), Some("low"));
    assert_eq!(
        w.state("messages").to_json(),
        json!([{"role": "system", "content": "You are a helpful assistant.", "timestamp": 0}])
    );

    let echo = tool("echo", exec_ok("x"));
    let tools = TV::arr(vec![echo.clone()]);
    let w = init_with(TV::obj(&[(
        "initialState",
        TV::obj(&[("systemPrompt", TV::str("Be brief.")), ("tools", tools.clone())]),
    )]))
    .unwrap();
    let head = w.state("messages").at(0);
    assert_eq!(head.keys(), strs(&["role", "content", "toolsAdded", "timestamp"]));
    assert_eq!(
        head.to_json(),
        json!({"role": "system", "content": "Be brief.", "toolsAdded": [{"name": "echo", "description": "echo tool", "parameters": {"type": "object", "properties": {}}}], "timestamp": 0})
    );
    assert!(!w.state("tools").same(&tools), "arrays are copied");
    assert!(w.state("tools").at(0).same(&echo));

    // Tools only: content "".
    let w = init_with(TV::obj(&[("initialState", TV::obj(&[("tools", TV::arr(vec![echo.clone()]))]))])).unwrap();
    assert_eq!(w.state("messages").at(0).str_at("content"), "");
    // No prompt, no tools: nothing inserted; a system head: nothing inserted.
    let messages = TV::arr(vec![user("hi")]);
    let w = init_with(TV::obj(&[("initialState", TV::obj(&[("messages", messages.clone())]))])).unwrap();
    assert_eq!(roles(&w.state("messages")), strs(&["user"]));
    assert!(!w.state("messages").same(&messages));
    let head = TV::obj(&[("role", TV::str("system")), ("content", TV::str("mine")), ("timestamp", TV::num(3.0))]);
    let w = init_with(TV::obj(&[(
        "initialState",
        TV::obj(&[
            ("messages", TV::arr(vec![head.clone()])),
            ("systemPrompt", TV::str("ignored")),
            ("tools", TV::arr(vec![echo])),
        ]),
    )]))
    .unwrap();
    assert_eq!(w.state("messages").len(), 1);
    assert!(w.state("messages").at(0).same(&head));
}

#[test]
fn e_8_1_agent_options_are_checked_with_exact_type_errors() {
    let cases = [
        (TV::num(5.0), "TypeError: Agent: options must be an object"),
        (
            TV::obj(&[("steeringMode", TV::str("bogus"))]),
            "TypeError: Agent: options.steeringMode must be \"all\" or \"one-at-a-time\"",
        ),
        (
            TV::obj(&[("followUpMode", TV::Null)]),
            "TypeError: Agent: options.followUpMode must be \"all\" or \"one-at-a-time\"",
        ),
        (TV::obj(&[("beforeToolCall", TV::str("x"))]), "TypeError: Agent: options.beforeToolCall must be a function"),
        (TV::obj(&[("streamFn", TV::num(1.0))]), "TypeError: Agent: options.streamFn must be a function"),
        (
            TV::obj(&[("prepareNextTurnWithContext", TV::obj(&[]))]),
            "TypeError: Agent: options.prepareNextTurnWithContext must be a function",
        ),
        (TV::obj(&[("initialState", TV::num(1.0))]), "TypeError: Agent: options.initialState must be an object"),
        (
            TV::obj(&[("initialState", TV::obj(&[("tools", TV::arr(vec![TV::obj(&[("name", TV::str("t"))])]))]))]),
            "TypeError: Agent: options.initialState.tools[0].execute must be a function",
        ),
        (
            TV::obj(&[("initialState", TV::obj(&[("messages", TV::arr(vec![TV::obj(&[])]))]))]),
            "TypeError: Agent: options.initialState.messages[0].role must be a string",
        ),
        (
            TV::obj(&[("abortGraceMs", TV::num(-1.0))]),
            "TypeError: Agent: options.abortGraceMs must be a number between 0 and 2147483647, or Infinity",
        ),
        (
            TV::obj(&[("maxParallelTools", TV::num(0.5))]),
            "TypeError: Agent: options.maxParallelTools must be a positive integer",
        ),
    ];
    for (options, expected) in cases {
        assert_eq!(init_with(options).err().unwrap(), expected);
    }
    let hostile = TV::obj(&[]);
    hostile.throwing_getter("initialState", TV::error("hostile options"));
    assert_eq!(init_with(hostile).err().unwrap(), "thrown: hostile options");
}

// ---------------------------------------------------------------------------------------------
// A-5.3 queues
// ---------------------------------------------------------------------------------------------

#[test]
fn a_5_3_1_peek_and_drain_follow_the_modes() {
    let w = AgentWorld::new(&[], &[]);
    let h = &w.h;
    assert!(w.peek_texts().is_empty());
    let (f1, f2, s1, s2) = (user("f1"), user("f2"), user("s1"), user("s2"));
    w.follow_up(f1.clone());
    w.follow_up(f2.clone());
    assert_eq!(w.peek_texts(), strs(&["f1"]));
    agent::set_mode(h, &w.st, Q::FollowUp, &TV::str("all")).ok().unwrap();
    assert_eq!(w.peek_texts(), strs(&["f1", "f2"]));
    w.steer(s1.clone());
    w.steer(s2.clone());
    let p1 = agent::peek_queued(h, &w.st).unwrap();
    let p2 = agent::peek_queued(h, &w.st).unwrap();
    assert_eq!(p1.len(), 1);
    assert!(p1.at(0).same(&s1) && p2.at(0).same(&s1), "never consumes; the same objects");
    assert!(!p1.same(&p2) && !p1.same(&w.st.get("steering")), "a copy");
    agent::set_mode(h, &w.st, Q::Steering, &TV::str("all")).ok().unwrap();
    assert_eq!(w.peek_texts(), strs(&["s1", "s2"]));
    let drained = agent::drain(h, &w.st, Q::Steering).unwrap();
    assert_eq!(drained.len(), 2);
    assert!(w.st.get("steering").is_empty());
    agent::set_mode(h, &w.st, Q::FollowUp, &TV::str("one-at-a-time")).ok().unwrap();
    let drained = agent::drain(h, &w.st, Q::FollowUp).unwrap();
    assert_eq!(drained.len(), 1);
    assert!(drained[0].same(&f1));
    assert_eq!(w.peek_texts(), strs(&["f2"]));
    agent::clear(h, &w.st, Q::FollowUp).unwrap();
    assert!(!w.has_queued());
    assert!(w.messages().is_empty(), "queues never touch the transcript");
}

#[test]
fn a_5_3_2_mode_setters_and_enqueue_check_their_input() {
    let w = AgentWorld::new(&[], &[]);
    let h = &w.h;
    for bad in [TV::str("bogus"), TV::Undefined, TV::Null, TV::num(1.0), TV::str("ALL")] {
        let e = agent::set_mode(h, &w.st, Q::Steering, &bad).err().unwrap();
        assert_eq!(arg_error_text(h, e), "TypeError: Agent: steeringMode must be \"all\" or \"one-at-a-time\"");
        let e = agent::set_mode(h, &w.st, Q::FollowUp, &bad).err().unwrap();
        assert_eq!(arg_error_text(h, e), "TypeError: Agent: followUpMode must be \"all\" or \"one-at-a-time\"");
    }
    assert_eq!(w.state("steeringMode").as_str(), Some("one-at-a-time"));
    let e = agent::enqueue(h, &w.st, Q::Steering, &TV::str("hi"), "Agent.steer").err().unwrap();
    assert_eq!(arg_error_text(h, e), "TypeError: Agent.steer: message must be an object");
    let e = agent::enqueue(h, &w.st, Q::FollowUp, &TV::obj(&[]), "Agent.followUp").err().unwrap();
    assert_eq!(arg_error_text(h, e), "TypeError: Agent.followUp: message.role must be a string");
    assert!(!w.has_queued());
}

// ---------------------------------------------------------------------------------------------
// A-5.4 methods
// ---------------------------------------------------------------------------------------------

#[test]
fn a_5_4_1_prompt_text_images_array_and_message() {
    let w = AgentWorld::new(&[], &[]);
    w.push(vec![reply("r1"), reply("r2"), reply("r3")]);
    w.h.advance(4.0);
    let image = TV::obj(&[("type", TV::str("image")), ("data", TV::str("AAAA")), ("mimeType", TV::str("image/png"))]);
    let started = agent::prompt(&w.h, &w.agent, &w.st, &TV::str("look"), &TV::arr(vec![image.clone()])).unwrap();
    w.h.run(started).unwrap();
    let first = w.messages()[0].clone();
    assert_eq!(
        first.to_json(),
        json!({"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image", "data": "AAAA", "mimeType": "image/png"}], "timestamp": 1_700_000_000_004_i64})
    );
    assert!(first.get("content").at(1).same(&image));
    let (a, b) = (user("a"), user("b"));
    w.prompt(TV::arr(vec![a.clone(), b.clone()])).unwrap();
    let m = w.messages();
    assert!(m[2].same(&a) && m[3].same(&b));
    let single = user("single");
    w.prompt(single.clone()).unwrap();
    assert!(w.messages()[5].same(&single));
    assert_eq!(w.texts(), strs(&["look", "r1", "a", "b", "r2", "single", "r3"]));
}

#[test]
fn a_5_4_1_misuse_rejects_with_a_type_error_before_any_event_and_stays_idle() {
    let w = AgentWorld::new(&[], &[]);
    let rec = w.record(|_, _| {});
    let h = &w.h;
    let texts: Vec<String> = [TV::num(5.0), TV::arr(vec![TV::num(5.0)]), TV::obj(&[("content", TV::str("x"))])]
        .into_iter()
        .map(|input| error_text(h, w.prompt(input)))
        .collect();
    assert_eq!(
        texts,
        strs(&[
            "TypeError: Agent.prompt: message must be an object",
            "TypeError: Agent.prompt: messages[0] must be an object",
            "TypeError: Agent.prompt: message.role must be a string",
        ])
    );
    assert_eq!(
        error_text(h, agent::prompt(h, &w.agent, &w.st, &TV::str("x"), &TV::num(1.0)).map(|_| ())),
        "TypeError: Agent.prompt: images must be an array"
    );
    // State misuse: a tool without execute.
    w.st.set("tools", TV::arr(vec![TV::obj(&[("name", TV::str("t"))])]));
    assert_eq!(
        error_text(h, w.prompt(TV::str("go"))),
        "TypeError: Agent.prompt: state.tools[0].execute must be a function"
    );
    w.st.set("messages", TV::arr(vec![user("q")]));
    assert_eq!(error_text(h, w.resume()), "TypeError: Agent.continue: state.tools[0].execute must be a function");
    w.st.set("tools", TV::arr(vec![]));
    w.agent.set("finishTurn", TV::num(3.0));
    assert_eq!(error_text(h, w.prompt(TV::str("go"))), "TypeError: Agent.prompt: agent.finishTurn must be a function");
    assert!(rec.is_empty());
    assert_eq!(w.faux.call_count(), 0);
    assert!(w.state("active").is_undefined());
    assert_eq!(w.state("isStreaming").as_bool(), Some(false));
}

#[test]
fn a_5_4_busy_errors_are_exact_while_a_run_is_active() {
    let w = AgentWorld::new(&[], &[]);
    w.push(vec![reply("r1")]);
    let seen = Rc::new(RefCell::new(Vec::<String>::new()));
    let (s, agent_v, st) = (seen.clone(), w.agent.clone(), w.st.clone());
    w.subscribe(TV::func(move |h, _this, args| {
        if args[0].str_at("type") == "turn_start" {
            let p = agent::prompt(h, &agent_v, &st, &TV::str("again"), &TV::Undefined).map(|_| ());
            s.borrow_mut().push(error_text(h, p));
            let c = agent::continue_run(h, &agent_v, &st, &TV::Undefined).map(|_| ());
            s.borrow_mut().push(error_text(h, c));
            s.borrow_mut().push(error_text(h, agent::reset(h, &st)));
            s.borrow_mut().push(format!("{}", roles(&st.get("messages")).len()));
        }
        Ok(TV::Undefined)
    }));
    w.prompt_text("go");
    assert_eq!(
        *seen.borrow(),
        vec![
            format!("Error: {PROMPT_BUSY}"),
            format!("Error: {CONTINUE_BUSY}"),
            format!("Error: {RESET_BUSY}"),
            "0".to_string()
        ]
    );
    assert_eq!(w.texts(), strs(&["go", "r1"]), "messages untouched by the failed reset");
    assert_eq!(w.faux.call_count(), 1);
}

#[test]
fn a_5_4_2_continue_with_no_messages_or_only_system_messages_rejects_without_draining() {
    for initial in [vec![], vec![("systemPrompt", TV::str("sys"))]] {
        let w = AgentWorld::new(&[], &initial);
        w.steer(user("steer"));
        w.follow_up(user("follow"));
        let rec = w.record(|_, _| {});
        assert_eq!(error_text(&w.h, w.resume()), format!("Error: {NOTHING_TO_CONTINUE}"));
        assert!(rec.is_empty());
        assert_eq!(w.faux.call_count(), 0);
        assert_eq!(w.state("isStreaming").as_bool(), Some(false));
        assert_eq!(w.peek_texts(), strs(&["steer"]));
        assert_eq!(w.st.get("followUp").len(), 1);
    }
}

#[test]
fn a_5_4_3_continue_from_an_assistant_tail() {
    // Nothing queued: the exact error, no run.
    let w = AgentWorld::new(&[], &[("messages", TV::arr(vec![user("q"), assistant_message("a")]))]);
    assert_eq!(error_text(&w.h, w.resume()), format!("Error: {ASSISTANT_TAIL}"));
    assert!(w.state("active").is_undefined());
    // Steering wins over follow-up and runs as a prompt with S0 suppressed; the follow-up comes at F.
    w.push(vec![reply("r1"), reply("r2")]);
    w.follow_up(user("follow"));
    w.steer(user("steer"));
    let rec = w.record(|_, _| {});
    w.resume().unwrap();
    let calls = w.faux.calls();
    assert_eq!(calls.len(), 2);
    let users = |i: usize| -> Vec<String> {
        calls[i].messages.iter().filter(|m| m.get("role").as_str() == Some("user")).map(first_text).collect()
    };
    assert_eq!(users(0), strs(&["q", "steer"]));
    assert_eq!(users(1), strs(&["q", "steer", "follow"]));
    assert_eq!(
        labels_no_updates(&rec)[..4],
        strs(&["agent_start", "turn_start", "message_start:user", "message_end:user"])
    );
    // Only a follow-up: it runs as a prompt with a normal S0 (a steering message queued while the
    // follow-up is emitted joins the first request).
    w.push(vec![reply("r3")]);
    w.follow_up(user("f2"));
    let st = w.st.clone();
    w.subscribe(TV::func(move |h, _this, args| {
        if args[0].str_at("type") == "message_end" && first_text(&args[0].get("message")) == "f2" {
            agent::enqueue(h, &st, Q::Steering, &user("s0"), "Agent.steer").ok();
        }
        Ok(TV::Undefined)
    }));
    w.resume().unwrap();
    let calls = w.faux.calls();
    assert_eq!(calls.len(), 3);
    let last: Vec<String> = calls[2].messages.iter().map(first_text).collect();
    assert_eq!(last[last.len() - 2..], strs(&["f2", "s0"]));
    assert_eq!(error_text(&w.h, w.resume()), format!("Error: {ASSISTANT_TAIL}"));
}

#[test]
fn a_5_4_3_assistant_tail_steering_modes() {
    for (mode, requests) in [("one-at-a-time", 2), ("all", 1)] {
        let w = AgentWorld::new(
            &[("steeringMode", TV::str(mode))],
            &[("messages", TV::arr(vec![user("start"), assistant_message("earlier")]))],
        );
        w.push(vec![reply("r1"), reply("r2"), reply("r3")]);
        w.steer(user("s1"));
        w.steer(user("s2"));
        w.resume().unwrap();
        assert_eq!(w.faux.call_count(), requests, "{mode}");
        let added: Vec<String> = w.texts()[2..].to_vec();
        if mode == "all" {
            assert_eq!(added, strs(&["s1", "s2", "r1"]));
        } else {
            assert_eq!(added, strs(&["s1", "r1", "s2", "r2"]));
        }
        assert!(!w.has_queued());
    }
}

#[test]
fn a_5_4_3_other_tails_continue_and_poll_steering_at_s0_follow_ups_wait_for_f() {
    let tool_result = TV::from_json(
        &json!({"role": "toolResult", "toolCallId": "c1", "toolName": "t", "content": [{"type": "text", "text": "res"}], "isError": false, "timestamp": 1}),
    );
    for tail in [user("question"), tool_result] {
        let w = AgentWorld::new(&[], &[("messages", TV::arr(vec![user("q0"), tail.clone()]))]);
        w.push(vec![reply("r1"), reply("r2")]);
        w.follow_up(user("follow"));
        w.steer(user("steer"));
        let rec = w.record(|_, _| {});
        w.resume().unwrap();
        let calls = w.faux.calls();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].messages.last().map(first_text).as_deref(), Some("steer"));
        assert!(!calls[0].messages.iter().any(|m| first_text(m) == "follow"));
        assert_eq!(calls[1].messages.last().map(first_text).as_deref(), Some("follow"));
        assert_eq!(w.texts()[2..], strs(&["steer", "r1", "follow", "r2"]));
        // A continuation: no prompt events before the polled steering.
        assert_eq!(
            labels_no_updates(&rec)[..4],
            strs(&["agent_start", "turn_start", "message_start:user", "message_end:user"])
        );
        assert_eq!(first_text(&rec.of_type("message_end")[0].get("message")), "steer");
    }
}

#[test]
fn a_5_4_4_abort_while_idle_is_a_no_op_and_wait_for_idle_resolves() {
    let w = AgentWorld::new(&[], &[]);
    w.abort();
    assert!(w.state("active").is_undefined());
    w.push(vec![reply("r")]);
    // waitForIdle(): the active run's promise resolves once the run and its listeners settled.
    let started = agent::prompt(&w.h, &w.agent, &w.st, &TV::str("go"), &TV::Undefined).unwrap();
    let promise = w.st.get("active").get("promise");
    assert_eq!(w.state("isStreaming").as_bool(), Some(true));
    let (run_done, idle_done) = w.h.run(async {
        let idle = w.h.await_value(&promise);
        let (a, b) = futures::join!(started, idle);
        (a.is_ok(), b.is_ok())
    });
    assert!(run_done && idle_done);
    assert!(w.state("active").is_undefined());
}

#[test]
fn a_5_4_4_reset_restores_the_replayed_head_and_clears_runtime_fields_and_queues() {
    let echo = tool("echo", exec_ok("x"));
    let w = AgentWorld::new(&[], &[("systemPrompt", TV::str("base")), ("tools", TV::arr(vec![echo.clone()]))]);
    w.push(vec![reply("r1")]);
    w.prompt_text("go");
    let extra = TV::from_json(
        &json!({"role": "system", "content": "more", "sections": {"style": "terse", "gone": null}, "timestamp": 9}),
    );
    w.st.get("messages").push(extra);
    w.steer(user("s"));
    w.follow_up(user("f"));
    w.st.set("errorMessage", TV::str("old error"));
    agent::reset(&w.h, &w.st).unwrap();
    assert_eq!(
        w.state("messages").to_json(),
        json!([{"role": "system", "content": "base\n\nmore", "sections": {"style": "terse"},
                "toolsAdded": [{"name": "echo", "description": "echo tool", "parameters": {"type": "object", "properties": {}}}], "timestamp": 0}])
    );
    assert!(!w.has_queued());
    assert!(w.state("errorMessage").is_undefined());
    assert_eq!(w.state("isStreaming").as_bool(), Some(false));
    // No system message: [].
    let w = AgentWorld::new(&[], &[("messages", TV::arr(vec![user("a")]))]);
    agent::reset(&w.h, &w.st).unwrap();
    assert!(w.state("messages").is_empty());
}

#[test]
fn a_5_4_5_subscribe_unsubscribe_and_listener_calls() {
    let w = AgentWorld::new(&[], &[]);
    w.push(vec![reply("r1"), reply("r2")]);
    let calls = Log::new();
    let c = calls.clone();
    let listener = TV::func(move |_h, this, args| {
        c.push(format!(
            "{} this={} signal={}",
            args[0].str_at("type"),
            this.js_string(),
            matches!(args[1], TV::Obj(_))
        ));
        Ok(TV::Undefined)
    });
    let unsubscribe = w.subscribe(listener.clone());
    w.subscribe(listener.clone());
    assert_eq!(w.h.set_items(&w.state("listeners")).unwrap().len(), 1, "a listener is added once");
    assert!(calls.get().is_empty(), "no initial event");
    w.st.set("model", model());
    assert!(calls.get().is_empty(), "setters emit nothing");
    w.prompt_text("go");
    assert_eq!(calls.get()[0], "agent_start this=undefined signal=true");
    let n = calls.get().len();
    assert!(n >= 6);
    w.h.call_sync(&unsubscribe, &TV::Undefined, &[]).unwrap();
    w.prompt_text("again");
    assert_eq!(calls.get().len(), n);
    let e = agent::subscribe(&w.h, &w.st, &TV::num(1.0)).err().unwrap();
    assert_eq!(arg_error_text(&w.h, e), "TypeError: Agent.subscribe: listener must be a function");
}

#[test]
fn a_5_4_5_unsubscribing_during_a_run_stops_delivery_from_the_next_event() {
    let w = AgentWorld::new(&[], &[]);
    w.push(vec![reply("r1")]);
    let seen = Log::new();
    let unsubscribe = Rc::new(RefCell::new(TV::Undefined));
    let (s, u) = (seen.clone(), unsubscribe.clone());
    let off = w.subscribe(TV::func(move |h, _this, args| {
        s.push(args[0].str_at("type"));
        if args[0].str_at("type") == "turn_start" {
            h.call_sync(&u.borrow(), &TV::Undefined, &[])?;
        }
        Ok(TV::Undefined)
    }));
    unsubscribe.replace(off);
    w.prompt_text("go");
    assert_eq!(seen.get(), strs(&["agent_start", "turn_start"]));
}

/// A listener that logs `"<tag>:<event type>"`.
fn logging(log: &Log, tag: &'static str) -> TV {
    let log = log.clone();
    TV::func(move |_h, _this, args| {
        log.push(format!("{tag}:{}", args[0].str_at("type")));
        Ok(TV::Undefined)
    })
}

#[test]
fn a_5_4_5_dispatch_iterates_the_listeners_live_as_the_reference_does() {
    // The reference's `for (const l of this.listeners) await l(event, signal)` over a Set: a listener subscribed
    // during a dispatch hears that same event; one unsubscribed before its turn does not.
    let w = AgentWorld::new(&[], &[]);
    w.push(vec![reply("r1")]);
    let log = Log::new();
    let off_b = Rc::new(RefCell::new(TV::Undefined));
    let once = Rc::new(Cell::new(false));
    let (l, ob, o, st, h2) = (log.clone(), off_b.clone(), once.clone(), w.st.clone(), w.h.clone());
    let late = logging(&log, "C");
    w.subscribe(TV::func(move |h, _this, args| {
        l.push(format!("A:{}", args[0].str_at("type")));
        if !o.replace(true) {
            agent::subscribe(&h2, &st, &late).map_err(|e| arg_error_text(&h2, e)).map_err(TV::Str)?;
            h.call_sync(&ob.borrow(), &TV::Undefined, &[])?;
        }
        Ok(TV::Undefined)
    }));
    off_b.replace(w.subscribe(logging(&log, "B")));
    w.prompt_text("go");
    assert_eq!(log.get()[..4], strs(&["A:agent_start", "C:agent_start", "A:turn_start", "C:turn_start"]));
}

#[test]
fn a_5_6_2_failure_events_reach_every_listener_live_past_a_throwing_one() {
    // A throws on every event: the run fails at agent_start. Its failure events still reach B (after A), and C,
    // which B subscribes during the first of them, hears that one too.
    let w = AgentWorld::new(&[], &[]);
    w.push(vec![reply("r1")]);
    let log = Log::new();
    let a = log.clone();
    w.subscribe(TV::func(move |_h, _this, args| {
        a.push(format!("A:{}", args[0].str_at("type")));
        Err(TV::Str("A fails".into()))
    }));
    let (b, st, h2, once) = (log.clone(), w.st.clone(), w.h.clone(), Rc::new(Cell::new(false)));
    let late = logging(&log, "C");
    w.subscribe(TV::func(move |_h, _this, args| {
        b.push(format!("B:{}", args[0].str_at("type")));
        if !once.replace(true) {
            agent::subscribe(&h2, &st, &late).map_err(|e| arg_error_text(&h2, e)).map_err(TV::Str)?;
        }
        Ok(TV::Undefined)
    }));
    w.prompt_text("go");
    let kinds = ["message_start", "message_end", "turn_end", "agent_end"];
    let mut expected = vec!["A:agent_start".to_string()];
    for kind in kinds {
        expected.extend([format!("A:{kind}"), format!("B:{kind}"), format!("C:{kind}")]);
    }
    assert_eq!(log.get(), expected);
    assert_eq!(w.state("errorMessage").js_string(), "A fails");
}

// ---------------------------------------------------------------------------------------------
// A-5.2 reducer, A-5.5 lifecycle, L-3.10.2 barrier
// ---------------------------------------------------------------------------------------------

#[test]
fn a_5_2_2_reducer_runs_before_listeners() {
    let exec = exec_after(5.0, ok_result("x"));
    let w = AgentWorld::new(&[], &[("tools", TV::arr(vec![tool("t", exec)]))]);
    w.push(vec![reply_calls(vec![call("a", "t", json!({})), call("b", "t", json!({}))]), reply("done")]);
    let checks = Log::new();
    let (c, st) = (checks.clone(), w.st.clone());
    let pending_sets = Rc::new(RefCell::new(Vec::<TV>::new()));
    let ps = pending_sets.clone();
    w.subscribe(TV::func(move |h, _this, args| {
        let e = &args[0];
        let kind = e.str_at("type");
        match kind.as_str() {
            "message_start" | "message_update" => {
                c.push(format!("{kind} streaming={}", st.get("streamingMessage").same(&e.get("message"))));
            }
            "message_end" => {
                let last = st.get("messages").items().pop().unwrap();
                c.push(format!(
                    "message_end pushed={} streaming={}",
                    last.same(&e.get("message")),
                    st.get("streamingMessage").js_string()
                ));
            }
            "tool_execution_start" | "tool_execution_end" => {
                let set = st.get("pendingToolCalls");
                ps.borrow_mut().push(set.clone());
                let ids: Vec<String> = h.set_items(&set).unwrap().iter().map(TV::js_string).collect();
                c.push(format!("{kind} {ids:?}"));
            }
            "agent_end" => c.push(format!(
                "agent_end streaming={} isStreaming={}",
                st.get("streamingMessage").js_string(),
                st.get("isStreaming").js_string()
            )),
            _ => {}
        }
        Ok(TV::Undefined)
    }));
    w.prompt_text("go");
    let log = checks.get();
    assert!(
        log.iter()
            .filter(|l| l.starts_with("message_start") || l.starts_with("message_update"))
            .all(|l| l.ends_with("streaming=true"))
    );
    assert!(
        log.iter().filter(|l| l.starts_with("message_end")).all(|l| l == "message_end pushed=true streaming=undefined")
    );
    let tools: Vec<&String> = log.iter().filter(|l| l.starts_with("tool_execution")).collect();
    assert_eq!(
        tools,
        vec![
            "tool_execution_start [\"a\"]",
            "tool_execution_start [\"a\", \"b\"]",
            "tool_execution_end [\"b\"]",
            "tool_execution_end []",
        ]
    );
    let sets = pending_sets.borrow();
    assert!(!sets[0].same(&sets[1]) && !sets[1].same(&sets[2]), "a new Set per change");
    assert_eq!(log.last().unwrap(), "agent_end streaming=undefined isStreaming=true");
    assert_eq!(w.state("isStreaming").as_bool(), Some(false));
    assert!(w.h.set_items(&w.state("pendingToolCalls")).unwrap().is_empty());
}

#[test]
fn a_5_2_2_turn_end_error_message_sets_state_error_message_and_the_next_run_clears_it() {
    let w = AgentWorld::new(&[], &[]);
    w.push(vec![crate::core::test_host::faux_assistant_error(vec![text("x")], "503 upstream"), reply("fine")]);
    w.prompt_text("go");
    assert_eq!(w.state("errorMessage").as_str(), Some("503 upstream"));
    w.prompt_text("again");
    assert!(w.state("errorMessage").is_undefined());
}

#[test]
fn l_3_10_2_listeners_are_awaited_one_by_one_in_subscription_order() {
    let w = AgentWorld::new(&[], &[]);
    w.push(vec![reply("r")]);
    let log = Log::new();
    for name in ["first", "second"] {
        let l = log.clone();
        w.subscribe(TV::async_func(move |h, _this, args| {
            let kind = args[0].str_at("type");
            l.push(format!("{name} start {kind} @{}", h.now()));
            let (sleep, l) = (h.sleep(if name == "first" { 10.0 } else { 1.0 }), l.clone());
            async move {
                sleep.await;
                l.push(format!("{name} end {kind}"));
                Ok(TV::Undefined)
            }
            .boxed_local()
        }));
    }
    w.prompt_text("go");
    let log = log.get();
    assert_eq!(
        log[..4],
        strs(&[
            "first start agent_start @0",
            "first end agent_start",
            "second start agent_start @10",
            "second end agent_start"
        ])
    );
    assert_eq!(log[4], "first start turn_start @11");
    let events = log.len() / 4;
    assert_eq!(w.h.now(), 11.0 * events as f64, "every event waited for both listeners");
}

#[test]
fn a_5_5_3_an_async_agent_end_listener_holds_the_run_is_streaming_stays_true() {
    let w = AgentWorld::new(&[], &[]);
    w.push(vec![reply("r")]);
    let seen = Log::new();
    let (s, st) = (seen.clone(), w.st.clone());
    w.subscribe(TV::async_func(move |h, _this, args| {
        let is_end = args[0].str_at("type") == "agent_end";
        let (sleep, s, st) = (h.sleep(if is_end { 50.0 } else { 0.0 }), s.clone(), st.clone());
        async move {
            if is_end {
                sleep.await;
                s.push(format!("after wait isStreaming={}", st.get("isStreaming").js_string()));
            }
            Ok(TV::Undefined)
        }
        .boxed_local()
    }));
    w.prompt_text("go");
    assert_eq!(seen.get(), strs(&["after wait isStreaming=true"]));
    assert_eq!(w.h.now(), 50.0);
    assert_eq!(w.state("isStreaming").as_bool(), Some(false));
    assert!(w.state("streamingMessage").is_undefined());
}

#[test]
fn a_5_5_2_forwarded_options_reach_the_stream_and_hooks_get_the_signal() {
    let finish_args = Rc::new(RefCell::new(Vec::<TV>::new()));
    let fa = finish_args.clone();
    let finish = TV::func(move |_h, _this, args| {
        fa.borrow_mut().extend(args.iter().cloned());
        Ok(TV::obj(&[("action", TV::str("end"))]))
    });
    let budgets = TV::obj(&[("low", TV::num(100.0))]);
    let identity = TV::obj(&[("version", TV::str("9"))]);
    let w = AgentWorld::new(
        &[
            ("sessionId", TV::str("s-1")),
            ("transport", TV::str("sse")),
            ("thinkingBudgets", budgets.clone()),
            ("maxRetryDelayMs", TV::num(500.0)),
            ("identity", identity),
            ("apiKey", TV::str("k")),
            ("temperature", TV::num(0.5)),
            ("finishTurn", finish),
        ],
        &[("thinkingLevel", TV::str("low"))],
    );
    w.push(vec![reply("r1"), reply("r2")]);
    w.prompt_text("go");
    let o = w.faux.calls()[0].options.clone();
    assert_eq!(o.get("sessionId").as_str(), Some("s-1"));
    assert_eq!(o.get("transport").as_str(), Some("sse"));
    assert!(o.get("thinkingBudgets").same(&budgets));
    assert_eq!(o.get("maxRetryDelayMs").as_num(), Some(500.0));
    assert_eq!(o.get("apiKey").as_str(), Some("k"));
    assert_eq!(o.get("temperature").as_num(), Some(0.5));
    assert_eq!(o.get("reasoning").as_str(), Some("low"));
    assert_eq!(
        json(&w.h, &o.get("identity")),
        r#"{"attribution":{"name":"pi","url":"https://pi.dev","categories":["cli-agent"]},"version":"9"}"#
    );
    let signal = o.get("signal");
    assert!(finish_args.borrow()[1].same(&signal), "finishTurn gets the run's signal");
    // Changing the field affects the next run; "off" clears reasoning.
    w.agent.set("sessionId", TV::str("s-2"));
    w.st.set("thinkingLevel", TV::str("off"));
    w.prompt_text("again");
    let o = w.faux.calls()[1].options.clone();
    assert_eq!(o.get("sessionId").as_str(), Some("s-2"));
    assert!(o.get("reasoning").is_undefined());
    assert!(!o.get("signal").same(&signal), "a new controller per run");
}

#[test]
fn a_5_5_1_state_changed_mid_run_affects_the_next_run_only() {
    let echo = tool("echo", exec_ok("x"));
    let w = AgentWorld::new(&[], &[("tools", TV::arr(vec![echo]))]);
    w.push(vec![reply_calls(vec![call("c1", "echo", json!({}))]), reply("r2"), reply("r3")]);
    let m2 = model_with(&[("id", TV::str("m2"))]);
    let (st, m) = (w.st.clone(), m2.clone());
    w.subscribe(TV::func(move |_h, _this, args| {
        if args[0].str_at("type") == "tool_execution_start" {
            st.set("model", m.clone());
            st.set("tools", TV::arr(vec![]));
        }
        Ok(TV::Undefined)
    }));
    w.prompt_text("go");
    let calls = w.faux.calls();
    assert_eq!(calls[1].model.str_at("id"), "faux-1", "the run captured its model");
    assert_eq!(first_text(&w.messages()[3]), "x", "and its tools");
    w.prompt_text("next");
    assert_eq!(w.faux.calls()[2].model.str_at("id"), "m2");
}

#[test]
fn a_5_1_1_prepare_next_turn_with_context_wins_over_the_legacy_hook() {
    let legacy_calls = Count::new();
    let lc = legacy_calls.clone();
    let legacy = TV::func(move |_h, _this, _args| {
        lc.bump();
        Ok(TV::Undefined)
    });
    let seen = Rc::new(RefCell::new(Vec::<TV>::new()));
    let s = seen.clone();
    let with_context = TV::func(move |_h, this, args| {
        s.borrow_mut().push(this.clone());
        s.borrow_mut().extend(args.iter().cloned());
        Ok(TV::obj(&[("messages", TV::arr(vec![user("from hook")]))]))
    });
    let echo = tool("echo", exec_ok("x"));
    let w = AgentWorld::new(
        &[("prepareNextTurn", legacy), ("prepareNextTurnWithContext", with_context)],
        &[("tools", TV::arr(vec![echo]))],
    );
    w.push(vec![reply_calls(vec![call("c1", "echo", json!({}))]), reply("done")]);
    w.prompt_text("go");
    assert_eq!(legacy_calls.get(), 0);
    let seen = seen.borrow();
    assert!(seen[0].same(&w.agent), "called on the agent");
    assert_eq!(seen[1].keys(), strs(&["message", "toolResults", "context", "newMessages"]));
    assert!(seen[2].same(&w.faux.calls()[0].options.get("signal")));
    assert_eq!(w.faux.calls()[1].messages.last().map(first_text).as_deref(), Some("from hook"));
}

#[test]
fn a_5_5_2_legacy_prepare_next_turn_gets_the_signal() {
    let seen = Rc::new(RefCell::new(Vec::<TV>::new()));
    let s = seen.clone();
    let legacy = TV::func(move |_h, _this, args| {
        s.borrow_mut().extend(args.iter().cloned());
        Ok(TV::Undefined)
    });
    let w = AgentWorld::new(&[("prepareNextTurn", legacy)], &[("tools", TV::arr(vec![tool("echo", exec_ok("x"))]))]);
    w.push(vec![reply_calls(vec![call("c1", "echo", json!({}))]), reply("done")]);
    w.prompt_text("go");
    assert_eq!(w.faux.call_count(), 2);
    let seen = seen.borrow();
    assert_eq!(seen.len(), 1);
    assert!(seen[0].same(&w.faux.calls()[0].options.get("signal")));
}

// ---------------------------------------------------------------------------------------------
// A-5.6 run failure
// ---------------------------------------------------------------------------------------------

#[test]
fn a_5_6_1_a_listener_throws_the_failure_events_pass_reducer_and_listeners() {
    let w = AgentWorld::new(&[], &[]);
    let rec = w.record(|_, _| {});
    let thrown = Rc::new(Cell::new(false));
    let t = thrown.clone();
    w.subscribe(TV::func(move |_h, _this, args| {
        if args[0].str_at("type") == "message_end" && args[0].path("message.role").as_str() == Some("user") && !t.get()
        {
            t.set(true);
            return Err(TV::error("listener boom"));
        }
        Ok(TV::Undefined)
    }));
    w.prompt_text("hi");
    assert_eq!(w.faux.call_count(), 0);
    assert_eq!(
        rec.labels(),
        strs(&[
            "agent_start",
            "turn_start",
            "message_start:user",
            "message_end:user",
            "message_start:assistant",
            "message_end:assistant",
            "turn_end",
            "agent_end"
        ])
    );
    let f = w.messages()[1].clone();
    assert_eq!(f.to_json(), failure_json("error", "listener boom", 0.0));
    let end = rec.of_type("agent_end").pop().unwrap();
    assert_eq!(end.get("messages").len(), 1);
    assert!(end.get("messages").at(0).same(&f));
    let turn_end = rec.of_type("turn_end").pop().unwrap();
    assert!(turn_end.get("toolResults").is_empty());
    assert!(turn_end.get("message").same(&f));
    assert_eq!(roles_of(&w.messages()), strs(&["user", "assistant"]));
    assert_eq!(w.state("errorMessage").as_str(), Some("listener boom"));
    assert_eq!(w.state("isStreaming").as_bool(), Some(false));
    assert!(w.state("active").is_undefined());
    // Usable afterwards, and the next run clears the error.
    w.push(vec![reply("fine")]);
    w.prompt_text("again");
    assert_eq!(first_text(&w.messages().pop().unwrap()), "fine");
    assert!(w.state("errorMessage").is_undefined());
}

#[test]
fn a_5_6_1_a_listener_aborts_then_throws_stop_reason_aborted_with_the_state_model() {
    let m = model_with(&[
        ("id", TV::str("other-model")),
        ("api", TV::str("other-api")),
        ("provider", TV::str("other-provider")),
    ]);
    let w = AgentWorld::new(&[], &[("model", m)]);
    w.push(vec![reply("never")]);
    let rec = w.record(|_, _| {});
    let (st, done) = (w.st.clone(), Rc::new(Cell::new(false)));
    w.subscribe(TV::func(move |h, _this, args| {
        if args[0].str_at("type") == "turn_start" && !done.get() {
            done.set(true);
            abort_agent(h, &st);
            return Err(TV::str("plain string failure"));
        }
        Ok(TV::Undefined)
    }));
    w.prompt_text("hi");
    assert_eq!(w.faux.call_count(), 0);
    let f = w.messages().pop().unwrap();
    assert_eq!((f.str_at("stopReason"), f.str_at("errorMessage")), ("aborted".into(), "plain string failure".into()));
    assert_eq!(
        (f.str_at("api"), f.str_at("provider"), f.str_at("model")),
        ("other-api".into(), "other-provider".into(), "other-model".into())
    );
    assert_eq!(w.state("errorMessage").as_str(), Some("plain string failure"));
    let labels = rec.labels();
    assert_eq!(
        labels[labels.len() - 4..],
        strs(&["message_start:assistant", "message_end:assistant", "turn_end", "agent_end"])
    );
}

#[test]
fn a_5_6_2_listener_errors_during_the_failure_events_are_swallowed() {
    let w = AgentWorld::new(&[], &[]);
    w.push(vec![reply("never")]);
    let rec = w.record(|_, _| {});
    let off =
        w.subscribe(TV::func(|_h, _this, args| Err(TV::error(&format!("always fails on {}", args[0].str_at("type"))))));
    assert!(w.prompt(TV::str("hi")).is_ok(), "prompt() resolves");
    assert_eq!(w.state("isStreaming").as_bool(), Some(false));
    assert!(w.state("active").is_undefined());
    assert_eq!(w.state("errorMessage").as_str(), Some("always fails on agent_start"));
    assert_eq!(
        rec.labels(),
        strs(&["agent_start", "message_start:assistant", "message_end:assistant", "turn_end", "agent_end"])
    );
    assert_eq!(w.messages().pop().unwrap().to_json(), failure_json("error", "always fails on agent_start", 0.0));
    assert_eq!(w.faux.call_count(), 0);
    w.h.call_sync(&off, &TV::Undefined, &[]).unwrap();
    w.prompt_text("again");
    assert_eq!(first_text(&w.messages().pop().unwrap()), "never");
}

#[test]
fn a_5_6_l_3_10_4_a_listener_failing_on_a_fast_tool_end_waits_for_the_slow_tool() {
    let slow_done = Rc::new(Cell::new(false));
    let sd = slow_done.clone();
    let slow = TV::async_func(move |h, _this, _args| {
        let (sleep, sd) = (h.sleep(40.0), sd.clone());
        async move {
            sleep.await;
            sd.set(true);
            Ok(ok_result("slow"))
        }
        .boxed_local()
    });
    let w = AgentWorld::new(&[], &[("tools", TV::arr(vec![tool("fast", exec_ok("fast")), tool("slow", slow)]))]);
    w.push(vec![reply_calls(vec![call("f", "fast", json!({})), call("s", "slow", json!({}))]), reply("never")]);
    w.subscribe(TV::func(|_h, _this, args| {
        if args[0].str_at("type") == "tool_execution_end" && args[0].str_at("toolCallId") == "f" {
            return Err(TV::error("listener failed"));
        }
        Ok(TV::Undefined)
    }));
    let settled_when_idle = Rc::new(Cell::new(false));
    let started = agent::prompt(&w.h, &w.agent, &w.st, &TV::str("go"), &TV::Undefined).unwrap();
    let sd = slow_done.clone();
    let s = settled_when_idle.clone();
    w.h.run(async move {
        started.await.unwrap();
        s.set(sd.get());
    });
    assert!(settled_when_idle.get(), "prompt() resolved after the slow tool settled");
    assert_eq!(w.h.now(), 40.0);
    assert_eq!(w.state("errorMessage").as_str(), Some("listener failed"));
    assert_eq!(w.faux.call_count(), 1);
    assert_eq!(w.state("isStreaming").as_bool(), Some(false));
}

#[test]
fn a_5_4_4_a_listener_sees_the_run_signal_aborted_after_abort() {
    let w = AgentWorld::new(&[], &[]);
    w.push(vec![reply("a long answer that the abort will cut short")]);
    w.faux.set_chunk_delay(1.0);
    let seen = Log::new();
    let (s, st) = (seen.clone(), w.st.clone());
    w.subscribe(TV::func(move |h, _this, args| {
        let kind = args[0].str_at("type");
        if kind == "message_update" && s.get().is_empty() {
            abort_agent(h, &st);
            s.push(format!("aborted={}", h.signal_aborted(&args[1])));
        }
        if kind == "agent_end" {
            s.push(format!("end aborted={}", h.signal_aborted(&args[1])));
        }
        Ok(TV::Undefined)
    }));
    w.prompt_text("go");
    assert_eq!(seen.get(), strs(&["aborted=true", "end aborted=true"]));
    let last = w.messages().pop().unwrap();
    assert_eq!(last.str_at("stopReason"), "aborted");
    assert_eq!(w.state("errorMessage").as_str(), Some("Request was aborted"));
    assert_eq!(w.h.abort_listener_count(), 0);
    assert_eq!(w.h.pending_timers(), 0);
}

// ---------------------------------------------------------------------------------------------
// D8 snapshots
// ---------------------------------------------------------------------------------------------

#[test]
fn d8_1_snapshot_exact_shape_and_a_deep_copy() {
    let echo = tool("echo", exec_ok("x"));
    let w = AgentWorld::new(
        &[("sessionId", TV::str("s-1")), ("followUpMode", TV::str("all"))],
        &[("tools", TV::arr(vec![echo]))],
    );
    w.push(vec![reply("r1")]);
    w.prompt_text("go");
    w.steer(user("s"));
    let snap = agent::snapshot(&w.h, &w.agent, &w.st).unwrap();
    assert_eq!(
        snap.keys(),
        strs(&[
            "format",
            "version",
            "model",
            "thinkingLevel",
            "messages",
            "steeringQueue",
            "followUpQueue",
            "steeringMode",
            "followUpMode",
            "sessionId",
            "toolNames"
        ])
    );
    assert_eq!(snap.str_at("format"), "agent-loop-wasm/agent-snapshot");
    assert_eq!(snap.num_at("version"), 1.0);
    assert_eq!(snap.get("toolNames").to_json(), json!(["echo"]));
    assert_eq!(snap.get("followUpMode").as_str(), Some("all"));
    assert_eq!(snap.get("messages").to_json(), w.state("messages").to_json());
    assert!(!snap.get("messages").at(1).same(&w.messages()[1]), "a deep copy");
    assert_eq!(
        snap.get("steeringQueue").to_json(),
        json!([{"role": "user", "content": "s", "timestamp": EPOCH_MS as i64}])
    );
    // sessionId omitted when undefined.
    let w2 = AgentWorld::new(&[], &[]);
    let snap2 = agent::snapshot(&w2.h, &w2.agent, &w2.st).unwrap();
    assert!(!snap2.has_own("sessionId"));
    assert_eq!(snap2.get("model").to_json(), model().to_json());
}

#[test]
fn d8_1_unserializable_values_name_their_path() {
    let w = AgentWorld::new(&[], &[]);
    let details = TV::obj(&[("fn", exec_ok("x"))]);
    let bad = TV::from_json(
        &json!({"role": "toolResult", "toolCallId": "c", "toolName": "t", "content": [], "isError": false, "timestamp": 1}),
    );
    bad.set("details", details);
    w.st.set("messages", TV::arr(vec![user("a"), assistant_message("b"), user("c"), bad]));
    let e = agent::snapshot(&w.h, &w.agent, &w.st).err().unwrap();
    assert_eq!(e.get("name").as_str(), Some("TypeError"));
    assert_eq!(w.h.error_message(&e), "Agent.snapshot: messages[3].details.fn is not JSON-serializable");
    // A cycle, a symbol in a queue entry.
    let cyclic = user("cyclic");
    cyclic.set("self", cyclic.clone());
    w.st.set("messages", TV::arr(vec![cyclic]));
    assert_eq!(
        w.h.error_message(&agent::snapshot(&w.h, &w.agent, &w.st).err().unwrap()),
        "Agent.snapshot: messages[0].self is not JSON-serializable"
    );
    w.st.set("messages", TV::arr(vec![]));
    let sym = user("sym");
    sym.set("tag", TV::symbol("s"));
    w.st.set("followUp", TV::arr(vec![sym]));
    assert_eq!(
        w.h.error_message(&agent::snapshot(&w.h, &w.agent, &w.st).err().unwrap()),
        "Agent.snapshot: followUpQueue[0].tag is not JSON-serializable"
    );
    // A shared (non-cyclic) object is fine; undefined fields are dropped.
    let shared = TV::obj(&[("k", TV::num(1.0))]);
    let m = user("shared");
    m.set("a", shared.clone());
    m.set("b", shared);
    m.set("u", TV::Undefined);
    w.st.set("followUp", TV::arr(vec![m]));
    let snap = agent::snapshot(&w.h, &w.agent, &w.st).unwrap();
    assert_eq!(snap.path("followUpQueue.0").keys(), strs(&["role", "content", "timestamp", "a", "b"]));
}

#[test]
fn d8_2_restore_round_trip_object_and_json_text() {
    let w = AgentWorld::new(
        &[("sessionId", TV::str("s-1")), ("steeringMode", TV::str("all"))],
        &[("thinkingLevel", TV::str("high"))],
    );
    w.push(vec![reply("r1")]);
    w.prompt_text("go");
    w.steer(user("s"));
    w.follow_up(user("f"));
    let snap = agent::snapshot(&w.h, &w.agent, &w.st).unwrap();
    let text = json(&w.h, &snap);
    for input in [snap.clone(), TV::str(&text)] {
        let data = agent::parse_snapshot(&w.h, &input).unwrap();
        let restored = AgentWorld::new(&[], &[]);
        let tools = TV::arr(vec![tool("echo", exec_ok("x"))]);
        agent::apply_snapshot(&restored.h, &restored.agent, &restored.st, &data, &tools).ok().unwrap();
        assert!(restored.state("active").is_undefined() && restored.state("isStreaming").as_bool() == Some(false));
        assert_eq!(restored.state("messages").to_json(), w.state("messages").to_json(), "verbatim transcript");
        assert_eq!(restored.state("thinkingLevel").as_str(), Some("high"));
        assert_eq!(restored.state("steeringMode").as_str(), Some("all"));
        assert_eq!(restored.peek_texts(), strs(&["s"]));
        assert_eq!(restored.agent.get("sessionId").as_str(), Some("s-1"));
        assert_eq!(restored.state("tools").at(0).str_at("name"), "echo");
        let again = agent::snapshot(&restored.h, &restored.agent, &restored.st).unwrap();
        let mut expected = snap.to_json();
        expected["toolNames"] = json!(["echo"]);
        assert_eq!(again.to_json(), expected);
    }
}

#[test]
fn d8_2_restored_agents_continue_like_the_original() {
    let original = AgentWorld::new(&[], &[]);
    original.push(vec![reply("r1"), reply("r2")]);
    original.prompt_text("go");
    original.follow_up(user("later"));
    let data =
        agent::parse_snapshot(&original.h, &agent::snapshot(&original.h, &original.agent, &original.st).unwrap())
            .unwrap();
    let restored = AgentWorld::new(&[], &[]);
    restored.push(vec![reply("r2")]);
    agent::apply_snapshot(&restored.h, &restored.agent, &restored.st, &data, &TV::Undefined).ok().unwrap();
    original.resume().unwrap();
    restored.resume().unwrap();
    let a = original.faux.calls()[1].messages.iter().map(|m| json(&original.h, m)).collect::<Vec<_>>();
    let b = restored.faux.calls()[0].messages.iter().map(|m| json(&restored.h, m)).collect::<Vec<_>>();
    assert_eq!(a, b, "the same provider request");
}

#[test]
fn d8_3_restore_errors_are_exact_and_nothing_is_applied() {
    let h = TestHost::new();
    let err = |input: TV| h.error_message(&agent::parse_snapshot(&h, &input).err().unwrap());
    assert_eq!(err(TV::num(5.0)), "Agent.restore: not an agent-loop-wasm snapshot");
    assert_eq!(err(TV::obj(&[("format", TV::str("x"))])), "Agent.restore: not an agent-loop-wasm snapshot");
    assert!(err(TV::str("{not json")).starts_with("Agent.restore: snapshot is not valid JSON: "));
    let with_fn = TV::from_json(&json!({"format": "agent-loop-wasm/agent-snapshot", "version": 1}));
    with_fn.set("messages", TV::arr(vec![TV::obj(&[("role", TV::str("user")), ("x", exec_ok("f"))])]));
    assert_eq!(err(with_fn), "Agent.restore: invalid snapshot: messages[0].x: not JSON-serializable");
    let newer = TV::from_json(&json!({"format": "agent-loop-wasm/agent-snapshot", "version": 2}));
    assert_eq!(err(newer), "Agent.restore: snapshot version 2 is newer than this library supports (1)");
    let w = AgentWorld::new(&[], &[]);
    let good = agent::parse_snapshot(&w.h, &agent::snapshot(&w.h, &w.agent, &w.st).unwrap()).unwrap();
    let e = agent::apply_snapshot(&w.h, &w.agent, &w.st, &good, &TV::arr(vec![TV::obj(&[("name", TV::str("t"))])]))
        .err()
        .unwrap();
    assert_eq!(arg_error_text(&w.h, e), "TypeError: Agent.restore: options.tools[0].execute must be a function");
}

// ---------------------------------------------------------------------------------------------
// A-5.4.4 idle hygiene after an aborted tool run (E-8.4.4)
// ---------------------------------------------------------------------------------------------

#[test]
fn e_8_4_4_agent_runs_leave_no_timer_or_listener() {
    let waiter = TV::async_func(|h, _this, args| {
        let wait = h.wait_abort(&args[2]);
        async move {
            wait.await;
            Ok(ok_result("stopped"))
        }
        .boxed_local()
    });
    let w = AgentWorld::new(&[], &[("tools", TV::arr(vec![tool("w", waiter)]))]);
    w.push(vec![reply_calls(vec![call("c1", "w", json!({}))]), reply("never")]);
    let st = w.st.clone();
    w.h.at(25.0, move |h| abort_agent(h, &st));
    w.prompt_text("go");
    assert_eq!(w.h.now(), 25.0);
    assert_eq!(first_text(&w.messages().pop().unwrap()), "stopped");
    assert_eq!(w.h.pending_timers(), 0);
    assert_eq!(w.h.abort_listener_count(), 0);
    assert_eq!(roles_of(&w.messages()), strs(&["system", "user", "assistant", "toolResult"]));
}

#[test]
fn d8_1_a_snapshot_during_streaming_holds_committed_messages_only() {
    let w = AgentWorld::new(&[], &[]);
    w.push(vec![reply("streamed answer")]);
    let seen = Log::new();
    let (s, agent_v, st) = (seen.clone(), w.agent.clone(), w.st.clone());
    w.subscribe(TV::func(move |h, _this, args| {
        if args[0].str_at("type") == "message_update" && s.get().is_empty() {
            let snap = agent::snapshot(h, &agent_v, &st)?;
            s.push(format!("{:?}", roles(&snap.get("messages"))));
        }
        Ok(TV::Undefined)
    }));
    w.prompt_text("go");
    assert_eq!(seen.get(), strs(&[r#"["user"]"#]));
}

#[test]
fn l_3_10_3_agent_listener_calls_never_overlap_with_parallel_tools() {
    let mk = |ms: f64| {
        TV::async_func(move |h, _this, args| {
            let (h, on_update, id) = (h.clone(), args[3].clone(), args[0].js_string());
            async move {
                h.call_sync(&on_update, &TV::Undefined, &[ok_result(&format!("{id} 1"))])?;
                h.sleep(ms).await;
                h.call_sync(&on_update, &TV::Undefined, &[ok_result(&format!("{id} 2"))])?;
                Ok(ok_result(&id))
            }
            .boxed_local()
        })
    };
    let w = AgentWorld::new(&[], &[("tools", TV::arr(vec![tool("ta", mk(4.0)), tool("tb", mk(5.0))]))]);
    w.push(vec![reply_calls(vec![call("a", "ta", json!({})), call("b", "tb", json!({}))]), reply("done")]);
    let in_flight = Rc::new(Cell::new(0usize));
    let max = Rc::new(Cell::new(0usize));
    let delivered = Log::new();
    let (i, m, d) = (in_flight.clone(), max.clone(), delivered.clone());
    w.subscribe(TV::async_func(move |h, _this, args| {
        let kind = args[0].str_at("type");
        i.set(i.get() + 1);
        m.set(m.get().max(i.get()));
        if let Some(rest) = kind.strip_prefix("tool_execution_") {
            d.push(format!("{rest}:{}", args[0].str_at("toolCallId")));
        }
        let (sleep, i) = (h.sleep(if kind.starts_with("tool_execution_") { 6.0 } else { 0.0 }), i.clone());
        async move {
            sleep.await;
            i.set(i.get() - 1);
            Ok(TV::Undefined)
        }
        .boxed_local()
    }));
    w.prompt_text("go");
    assert_eq!(max.get(), 1);
    for id in ["a", "b"] {
        let mine: Vec<String> = delivered.get().into_iter().filter(|x| x.ends_with(&format!(":{id}"))).collect();
        assert_eq!(
            mine,
            vec![format!("start:{id}"), format!("update:{id}"), format!("update:{id}"), format!("end:{id}")]
        );
    }
    assert_eq!(w.h.pending_timers(), 0);
}

#[test]
fn d2_5_abort_keeps_undrained_messages_queued() {
    let st_cell = Rc::new(RefCell::new(TV::Undefined));
    let sc = st_cell.clone();
    let t = tool(
        "t",
        TV::func(move |h, _this, _args| {
            let st = sc.borrow().clone();
            agent::enqueue(h, &st, Q::Steering, &user("s1"), "Agent.steer").ok();
            agent::enqueue(h, &st, Q::Steering, &user("s2"), "Agent.steer").ok();
            abort_agent(h, &st);
            Ok(ok_result("ok"))
        }),
    );
    let w = AgentWorld::new(&[], &[("tools", TV::arr(vec![t]))]);
    st_cell.replace(w.st.clone());
    w.push(vec![reply_calls(vec![call("c1", "t", json!({}))]), reply("never")]);
    w.prompt_text("go");
    assert_eq!(w.faux.call_count(), 1);
    assert_eq!(w.peek_texts(), strs(&["s1"]));
    agent::set_mode(&w.h, &w.st, Q::Steering, &TV::str("all")).ok().unwrap();
    assert_eq!(w.peek_texts(), strs(&["s1", "s2"]));
}

#[test]
fn a_5_queues_are_kept_on_error_and_aborted_responses_whatever_finish_turn_says() {
    for stop in ["error", "aborted"] {
        for decision in ["continue", "end"] {
            let w = AgentWorld::new(
                &[("finishTurn", TV::func(move |_h, _this, _args| Ok(TV::obj(&[("action", TV::str(decision))]))))],
                &[],
            );
            let bad = crate::core::test_host::faux_assistant(vec![text("bad")], stop);
            bad.set("errorMessage", TV::str("provider failed"));
            w.push(vec![bad, reply("never")]);
            w.follow_up(user("follow"));
            let st = w.st.clone();
            let rec = w.record(move |h, e| {
                if e.str_at("type") == "message_end" && e.path("message.role").as_str() == Some("assistant") {
                    agent::enqueue(h, &st, Q::Steering, &user("steer"), "Agent.steer").ok();
                }
            });
            w.prompt_text("go");
            assert_eq!(w.faux.call_count(), 1, "{stop} {decision}");
            assert_eq!(w.messages().pop().unwrap().str_at("stopReason"), stop);
            assert_eq!(w.peek_texts(), strs(&["steer"]));
            agent::clear(&w.h, &w.st, Q::Steering).unwrap();
            assert_eq!(w.peek_texts(), strs(&["follow"]));
            let labels = labels_no_updates(&rec);
            assert_eq!(labels[labels.len() - 2..], strs(&["turn_end", "agent_end"]));
        }
    }
}

/// Issue 14.4: `takeQueuedMessages(predicate)` removes what the predicate selects, by identity,
/// steering first; the rest keep their queue and mode; a throw removes nothing.
#[test]
fn take_queued_messages_removes_the_selected_by_identity_and_keeps_the_rest() {
    let w = AgentWorld::new(&[], &[]);
    let (s1, s2, f1, f2) = (user("s1"), user("s2"), user("f1"), user("f2"));
    w.steer(s1.clone());
    w.steer(s2.clone());
    w.follow_up(f1.clone());
    w.follow_up(f2.clone());
    w.st.set("followUpMode", TV::str("all"));
    let (keep_s2, keep_f1) = (s2.clone(), f1.clone());
    let predicate = TV::func(move |_h, _this, args| Ok(TV::Bool(!args[0].same(&keep_s2) && !args[0].same(&keep_f1))));
    let taken = agent::take_queued(&w.h, &w.st, &predicate).unwrap().items();
    assert_eq!(taken.len(), 2);
    assert!(taken[0].same(&s1) && taken[1].same(&f2));
    assert!(w.st.get("steering").items()[0].same(&s2));
    assert!(w.st.get("followUp").items()[0].same(&f1));
    assert_eq!(w.st.get("followUpMode").as_str(), Some("all"));

    let throwing = TV::func(|_h, _this, _args| Err(TV::error("no")));
    assert!(agent::take_queued(&w.h, &w.st, &throwing).is_err());
    assert_eq!(w.peek_texts(), strs(&["s2"]));
    let not_a_function = agent::take_queued(&w.h, &w.st, &TV::num(1.0)).unwrap_err();
    assert_eq!(w.h.error_message(&not_a_function), "Agent.takeQueuedMessages: predicate must be a function");
}

#[test]
fn e_8_6_the_agents_refusals_carry_their_codes() {
    let w = AgentWorld::new(&[], &[]);
    let Err(nothing) = w.resume() else { panic!("continue with no messages must fail") };
    assert_eq!(nothing.get("code").js_string(), crate::core::errors::CANNOT_CONTINUE);
    w.push(vec![reply("r1")]);
    let codes = Rc::new(RefCell::new(Vec::<String>::new()));
    let (c, agent_v, st) = (codes.clone(), w.agent.clone(), w.st.clone());
    w.subscribe(TV::func(move |h, _this, args| {
        if args[0].str_at("type") == "turn_start" {
            let busy = agent::prompt(h, &agent_v, &st, &TV::str("again"), &TV::Undefined).map(|_| ());
            c.borrow_mut().push(busy.err().map(|e| e.get("code").js_string()).unwrap_or_default());
        }
        Ok(TV::Undefined)
    }));
    w.prompt_text("go");
    assert_eq!(*codes.borrow(), strs(&[crate::core::errors::AGENT_BUSY]));
}
