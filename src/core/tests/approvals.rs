//! Tool calls that wait for a person (issue 30, T-4.10, A-5.8): the pause in parallel and sequential batches, the
//! continuation with decisions through the loop (`start_approved_run`) and the Agent (`approve`, `deny`), misuse
//! while paused, and a crash at every checkpoint of a run that pauses and is approved.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use super::support::*;
use crate::core::agent;
use crate::core::agent_loop::{drive_start, start_approved_run};
use crate::core::host::Host;
use crate::core::run::{Emitter, Run, SinkMode};
use crate::core::test_host::{TV, faux_tool_call};
use futures::FutureExt;
use serde_json::{Value, json};
use std::cell::RefCell;
use std::rc::Rc;

/// Executions by tool-call id, in order.
#[derive(Clone, Default)]
struct Ran(Rc<RefCell<Vec<String>>>);

impl Ran {
    fn get(&self) -> Vec<String> {
        self.0.borrow().clone()
    }
}

const NUMBER_SCHEMA: &str = r#"{"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}"#;

/// A tool logging the id it ran for and answering `<name> <n>`, after 1 ms.
fn logged(name: &str, ran: &Ran, extra: &[(&str, TV)]) -> TV {
    let (log, label) = (ran.clone(), name.to_string());
    let exec = TV::async_func(move |h, _this, args| {
        log.0.borrow_mut().push(args[0].js_string());
        let n = args[1].get("n").as_num().unwrap_or(0.0);
        let text = format!("{label} {n}");
        let sleep = h.sleep(1.0);
        async move {
            sleep.await;
            Ok(ok_result(&text))
        }
        .boxed_local()
    });
    let t = tool_with(name, exec, extra);
    t.set("parameters", TV::from_json(&serde_json::from_str::<Value>(NUMBER_SCHEMA).unwrap()));
    t
}

/// `work` (plain), `gate` (`needsApproval: true`), `stop` (terminates).
fn toolset(ran: &Ran) -> Vec<TV> {
    let stop = logged("stop", ran, &[]);
    let exec = stop.get("execute");
    stop.set(
        "execute",
        TV::async_func(move |h, this, args| {
            let running = h.call(&exec, this, args);
            async move {
                let result = running.await?;
                result.set("terminate", TV::Bool(true));
                Ok(result)
            }
            .boxed_local()
        }),
    );
    vec![logged("work", ran, &[]), logged("gate", ran, &[("needsApproval", TV::Bool(true))]), stop]
}

fn calls3(a: &str, b: &str, c: &str) -> TV {
    reply_calls(vec![
        faux_tool_call("a", a, json!({"n": 1})),
        faux_tool_call("b", b, json!({"n": 2})),
        faux_tool_call("c", c, json!({"n": 3})),
    ])
}

/// Labels without streaming updates.
fn plain(labels: Vec<String>) -> Vec<String> {
    labels.into_iter().filter(|l| !l.starts_with("message_update")).collect()
}

fn agent_end(w: &World) -> TV {
    w.events("agent_end").pop().unwrap()
}

fn ids(list: &TV) -> Vec<String> {
    list.items().iter().map(|r| r.str_at("toolCallId")).collect()
}

/// `agentLoopContinue(context, {...config, approvals})` on the test host: `Err` is the start's error text.
fn continue_with(w: &World, context: TV, config: TV, approvals: &TV) -> Result<TV, String> {
    let h = &w.h;
    let start = start_approved_run(h, &context, approvals, "agentLoopContinue").map_err(|e| arg_error_text(h, e))?;
    let sink = w.rec.sink();
    let stream_fn = w.faux.stream_fn();
    h.run(async {
        let run = Run::new(h, start.context, config, TV::Undefined, stream_fn, Emitter::new(sink, SinkMode::Barrier));
        drive_start(&run, start.initial, start.resumed).await
    })
    .map_err(|e| h.error_message(&e))
}

/// `agent_end.approvals` with `decisions`.
fn decided(w: &World, decisions: Vec<TV>) -> TV {
    let approvals = w.h.shallow_copy(&agent_end(w).get("approvals")).unwrap();
    approvals.set("decisions", TV::arr(decisions));
    approvals
}

fn approve(id: &str) -> TV {
    TV::obj(&[("toolCallId", TV::str(id)), ("approved", TV::Bool(true))])
}

fn deny(id: &str, reason: Option<&str>) -> TV {
    let d = TV::obj(&[("toolCallId", TV::str(id)), ("approved", TV::Bool(false))]);
    if let Some(r) = reason {
        d.set("reason", TV::str(r));
    }
    d
}

/// The context after a paused run: its new messages (the prompt's among them).
fn context_after(result: &TV, tools: Vec<TV>) -> TV {
    ctx_tools(result.items(), tools)
}

fn results_of(messages: &[TV]) -> Vec<(String, String)> {
    messages
        .iter()
        .filter(|m| m.get("role").as_str() == Some("toolResult"))
        .map(|m| (m.str_at("toolCallId"), first_text(m)))
        .collect()
}

#[test]
fn t_4_10_2_a_parallel_batch_runs_the_plain_calls_and_pauses_for_the_one_that_waits() {
    let ran = Ran::default();
    let w = World::with(vec![calls3("work", "gate", "work"), reply("done")]);
    let result = w.prompt(vec![user("go")], ctx_tools(vec![], toolset(&ran)), config(&[]));
    assert_eq!(
        plain(w.labels()),
        strs(&[
            "agent_start",
            "turn_start",
            "message_start:system",
            "message_end:system",
            "message_start:user",
            "message_end:user",
            "message_start:assistant",
            "message_end:assistant",
            "tool_execution_start:a",
            "tool_execution_start:b",
            "tool_approval_request:b",
            "tool_execution_start:c",
            "tool_execution_end:a",
            "tool_execution_end:c",
            "turn_end",
            "agent_end",
        ])
    );
    assert_eq!(ran.get(), strs(&["a", "c"]));
    assert_eq!(w.requests(), 1);
    // No result message yet: all three enter the transcript in request order once b is decided.
    assert_eq!(roles_of(&result.items()), strs(&["system", "user", "assistant"]));
    let request = w.events("tool_approval_request").pop().unwrap();
    assert_eq!(
        request.to_json(),
        json!({"type": "tool_approval_request", "toolCallId": "b", "toolName": "gate", "args": {"n": 2}})
    );
    let approvals = agent_end(&w).get("approvals");
    assert_eq!(approvals.get("requests").to_json(), json!([{"toolCallId": "b", "toolName": "gate", "args": {"n": 2}}]));
    assert_eq!(ids(&approvals.get("completedTools")), strs(&["a", "c"]));
    assert_eq!(w.events("turn_end")[0].get("toolResults").len(), 0);

    let tools = toolset(&ran);
    let approvals = decided(&w, vec![approve("b")]);
    w.rec.clear();
    let more = continue_with(&w, context_after(&result, tools), config(&[]), &approvals).unwrap();
    assert_eq!(
        plain(w.labels()),
        strs(&[
            "agent_start",
            "turn_start",
            "tool_execution_start:b",
            "tool_execution_end:b",
            "message_start:toolResult",
            "message_end:toolResult",
            "message_start:toolResult",
            "message_end:toolResult",
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
    assert_eq!(ran.get(), strs(&["a", "c", "b"]), "every call ran once");
    let got = results_of(&more.items());
    assert_eq!(got, vec![("a".into(), "work 1".into()), ("b".into(), "gate 2".into()), ("c".into(), "work 3".into())]);
    assert_eq!(w.request_roles(1), strs(&["system", "user", "assistant", "toolResult", "toolResult", "toolResult"]));
}

#[test]
fn t_4_10_1_an_approval_timeout_sets_the_requests_deadline() {
    let ran = Ran::default();
    let w = World::with(vec![reply_calls(vec![
        faux_tool_call("b", "gate", json!({"n": 2})),
        faux_tool_call("d", "gate", json!({"n": 4})),
    ])]);
    let tools = toolset(&ran);
    tools[1].set("approvalTimeoutMs", TV::num(0.0)); // 0: none of its own, so the config's applies
    w.prompt(vec![user("go")], ctx_tools(vec![], tools), config(&[("approvalTimeoutMs", TV::num(60_000.0))]));
    let now = w.h.date_now();
    let requests = agent_end(&w).get("approvals").get("requests").items();
    assert_eq!(requests[0].num_at("expiresAt"), now + 60_000.0);
    assert_eq!(requests[1].num_at("expiresAt"), now + 60_000.0);

    // A tool's own timeout wins; without any, no deadline.
    let ran = Ran::default();
    let w = World::with(vec![reply_calls(vec![faux_tool_call("b", "gate", json!({"n": 2}))])]);
    let tools = toolset(&ran);
    tools[1].set("approvalTimeoutMs", TV::num(5000.0));
    w.prompt(vec![user("go")], ctx_tools(vec![], tools), config(&[("approvalTimeoutMs", TV::num(60_000.0))]));
    let request = agent_end(&w).get("approvals").get("requests").items()[0].clone();
    assert_eq!(request.num_at("expiresAt"), w.h.date_now() + 5000.0);
    let w = World::with(vec![reply_calls(vec![faux_tool_call("b", "gate", json!({"n": 2}))])]);
    w.prompt(vec![user("go")], ctx_tools(vec![], toolset(&Ran::default())), config(&[]));
    assert!(agent_end(&w).get("approvals").get("requests").items()[0].get("expiresAt").is_undefined());
}

#[test]
fn t_4_10_3_in_a_sequential_batch_the_calls_after_a_waiting_call_wait_with_it() {
    let ran = Ran::default();
    let w = World::with(vec![calls3("work", "gate", "work"), reply("done")]);
    let seq = [("toolExecution", TV::str("sequential"))];
    let result = w.prompt(vec![user("go")], ctx_tools(vec![], toolset(&ran)), config(&seq));
    assert_eq!(
        plain(w.labels())[8..],
        strs(&[
            "tool_execution_start:a",
            "tool_execution_end:a",
            "message_start:toolResult",
            "message_end:toolResult",
            "tool_execution_start:b",
            "tool_approval_request:b",
            "turn_end",
            "agent_end",
        ])
    );
    assert_eq!(ran.get(), strs(&["a"]));
    assert!(agent_end(&w).get("approvals").get("completedTools").is_empty());
    assert_eq!(w.events("turn_end")[0].get("toolResults").len(), 1);

    let approvals = decided(&w, vec![deny("b", Some("not today"))]);
    w.rec.clear();
    let more = continue_with(&w, context_after(&result, toolset(&ran)), config(&seq), &approvals).unwrap();
    assert_eq!(
        plain(w.labels())[..10],
        strs(&[
            "agent_start",
            "turn_start",
            "tool_execution_start:b",
            "tool_execution_end:b",
            "tool_execution_start:c",
            "tool_execution_end:c",
            "message_start:toolResult",
            "message_end:toolResult",
            "message_start:toolResult",
            "message_end:toolResult",
        ])
    );
    assert_eq!(ran.get(), strs(&["a", "c"]), "the denied call never ran");
    let got = results_of(&more.items());
    assert_eq!(got, vec![("b".into(), "Tool call \"b\" was denied: not today".into()), ("c".into(), "work 3".into())]);
    let denied = more.items().into_iter().find(|m| m.get("toolCallId").as_str() == Some("b")).unwrap();
    assert_eq!(denied.get("isError").as_bool(), Some(true));
    assert_eq!(w.end_of("b").get("isError").as_bool(), Some(true));
}

#[test]
fn t_4_10_4_before_tool_call_asks_with_a_payload_and_sees_the_approval_when_it_runs() {
    let ran = Ran::default();
    let seen = Rc::new(RefCell::new(Vec::<Value>::new()));
    let s = seen.clone();
    let before = TV::func(move |_h, _this, args| {
        let ctx = &args[0];
        s.borrow_mut().push(json!({"id": ctx.get("toolCall").str_at("id"), "approved": ctx.get("approved").to_json()}));
        // Always asks: once approved, the answer's `approval` is ignored.
        let payload = TV::obj(&[("reason", TV::str("charges money")), ("data", TV::from_json(&json!({"cents": 500})))]);
        Ok(TV::obj(&[("approval", payload)]))
    });
    let w = World::with(vec![reply_calls(vec![faux_tool_call("a", "work", json!({"n": 1}))]), reply("done")]);
    let cfg = || config(&[("beforeToolCall", before.clone())]);
    let result = w.prompt(vec![user("go")], ctx_tools(vec![], toolset(&ran)), cfg());
    let request = w.events("tool_approval_request").pop().unwrap();
    assert_eq!(
        request.to_json(),
        json!({"type": "tool_approval_request", "toolCallId": "a", "toolName": "work", "args": {"n": 1},
               "reason": "charges money", "data": {"cents": 500}})
    );
    assert!(ran.get().is_empty());
    let approvals = decided(&w, vec![approve("a")]);
    let more = continue_with(&w, context_after(&result, toolset(&ran)), cfg(), &approvals).unwrap();
    assert_eq!(ran.get(), strs(&["a"]));
    assert_eq!(results_of(&more.items()), vec![("a".into(), "work 1".into())]);
    assert_eq!(*seen.borrow(), vec![json!({"id": "a", "approved": null}), json!({"id": "a", "approved": true})]);
}

#[test]
fn t_4_10_5_edited_arguments_are_validated_again() {
    for (edited, expected) in [
        (json!({"n": 7}), "gate 7"),
        (
            json!({"n": "seven"}),
            "Validation failed for tool \"gate\":\n  - n: expected number, got string\n\nReceived arguments:\n{\n  \"n\": \"seven\"\n}",
        ),
    ] {
        let ran = Ran::default();
        let w = World::with(vec![reply_calls(vec![faux_tool_call("b", "gate", json!({"n": 2}))]), reply("done")]);
        let result = w.prompt(vec![user("go")], ctx_tools(vec![], toolset(&ran)), config(&[]));
        let decision = approve("b");
        decision.set("args", TV::from_json(&edited));
        let approvals = decided(&w, vec![decision]);
        let more = continue_with(&w, context_after(&result, toolset(&ran)), config(&[]), &approvals).unwrap();
        assert_eq!(results_of(&more.items()), vec![("b".into(), expected.into())], "{edited}");
        assert_eq!(ran.get().len(), usize::from(edited["n"].is_number()), "{edited}");
    }
}

#[test]
fn t_4_10_2_terminate_counts_the_approved_calls_too() {
    let ran = Ran::default();
    let w = World::with(vec![
        reply_calls(vec![faux_tool_call("a", "stop", json!({"n": 1})), faux_tool_call("b", "gate", json!({"n": 2}))]),
        reply("never asked"),
    ]);
    let result = w.prompt(vec![user("go")], ctx_tools(vec![], toolset(&ran)), config(&[]));
    assert_eq!(ids(&agent_end(&w).get("approvals").get("completedTools")), strs(&["a"]));
    // b does not terminate: the batch goes on to the next request.
    let approvals = decided(&w, vec![approve("b")]);
    continue_with(&w, context_after(&result, toolset(&ran)), config(&[]), &approvals).unwrap();
    assert_eq!(w.requests(), 2);

    // Both terminate (b denied with a terminating beforeToolCall is not possible; here gate is also a `stop`).
    let ran = Ran::default();
    let w = World::with(vec![
        reply_calls(vec![faux_tool_call("a", "stop", json!({"n": 1})), faux_tool_call("b", "stop", json!({"n": 2}))]),
        reply("never asked"),
    ]);
    let ask_b = TV::func(|_h, _this, args| {
        let id = args[0].get("toolCall").str_at("id");
        Ok(if id == "b" { TV::obj(&[("approval", TV::Bool(true))]) } else { TV::Undefined })
    });
    let cfg = || config(&[("beforeToolCall", ask_b.clone())]);
    let result = w.prompt(vec![user("go")], ctx_tools(vec![], toolset(&ran)), cfg());
    let approvals = decided(&w, vec![approve("b")]);
    let more = continue_with(&w, context_after(&result, toolset(&ran)), cfg(), &approvals).unwrap();
    assert_eq!(w.requests(), 1, "a batch of terminating calls ends the run after the approval too");
    assert_eq!(roles_of(&more.items()), strs(&["toolResult", "toolResult"]));
    assert_eq!(ran.get(), strs(&["a", "b"]));
}

#[test]
fn t_4_10_6_an_undecided_call_is_asked_again_and_an_abort_is_no_pause() {
    let ran = Ran::default();
    let w = World::with(vec![
        reply_calls(vec![faux_tool_call("b", "gate", json!({"n": 2})), faux_tool_call("d", "gate", json!({"n": 4}))]),
        reply("done"),
    ]);
    let result = w.prompt(vec![user("go")], ctx_tools(vec![], toolset(&ran)), config(&[]));
    let approvals = decided(&w, vec![approve("b")]);
    w.rec.clear();
    let more = continue_with(&w, context_after(&result, toolset(&ran)), config(&[]), &approvals).unwrap();
    // b ran; d is asked again, and b's result waits with it.
    assert_eq!(ran.get(), strs(&["b"]));
    assert!(more.is_empty());
    let again = agent_end(&w).get("approvals");
    assert_eq!(ids(&again.get("requests")), strs(&["d"]));
    assert_eq!(ids(&again.get("completedTools")), strs(&["b"]));

    // An abort while the plain calls of the batch run: the waiting call ends aborted, no pause.
    let ran = Ran::default();
    let w = World::with(vec![calls3("work", "gate", "work")]);
    let (controller, signal) = w.controller();
    let aborter = w.aborter(&controller);
    let before = TV::func(move |h, _this, args| {
        if args[0].get("toolCall").str_at("id") == "c" {
            h.call_sync(&aborter, &TV::Undefined, &[])?;
        }
        Ok(TV::Undefined)
    });
    let spec =
        RunSpec::prompt(vec![user("go")], ctx_tools(vec![], toolset(&ran)), config(&[("beforeToolCall", before)]))
            .signal(&signal);
    w.exec(spec).unwrap();
    assert!(agent_end(&w).get("approvals").is_undefined());
    assert_eq!(first_text(&w.end_of("b").get("result")), "Operation aborted");
    assert!(ran.get().is_empty());
}

#[test]
fn t_4_10_5_malformed_approvals_are_exact_errors() {
    let ran = Ran::default();
    let w = World::with(vec![reply_calls(vec![faux_tool_call("b", "gate", json!({"n": 2}))])]);
    let result = w.prompt(vec![user("go")], ctx_tools(vec![], toolset(&ran)), config(&[]));
    let context = || context_after(&result, toolset(&ran));
    let error = |approvals: TV, ctx: TV| continue_with(&w, ctx, config(&[]), &approvals).unwrap_err();
    assert_eq!(
        error(decided(&w, vec![approve("zz")]), context()),
        "TypeError: agentLoopContinue: config.approvals.decisions[0]: no tool call \"zz\" is waiting for approval"
    );
    assert_eq!(
        error(decided(&w, vec![approve("b"), deny("b", None)]), context()),
        "TypeError: agentLoopContinue: config.approvals.decisions[1]: tool call \"b\" is decided twice"
    );
    let not_bool = TV::obj(&[("toolCallId", TV::str("b")), ("approved", TV::str("yes"))]);
    assert_eq!(
        error(decided(&w, vec![not_bool]), context()),
        "TypeError: agentLoopContinue: config.approvals.decisions[0].approved must be a boolean"
    );
    assert_eq!(
        error(TV::str("x"), context()),
        "TypeError: agentLoopContinue: config.approvals must be an object (agent_end.approvals)"
    );
    assert_eq!(
        error(decided(&w, vec![approve("b")]), ctx_tools(vec![user("go")], vec![])),
        "thrown: agentLoopContinue: the context's last assistant message has no tool call waiting for a result"
    );
}

// ---------------------------------------------------------------------------------------------
// The Agent (A-5.8)
// ---------------------------------------------------------------------------------------------

fn agent_world(ran: &Ran, options: &[(&str, TV)]) -> AgentWorld {
    let w = AgentWorld::new(options, &[]);
    w.st.set("tools", TV::arr(toolset(ran)));
    w
}

fn decide(w: &AgentWorld, id: &str, options: TV, approved: bool) -> Result<(), String> {
    let run =
        agent::decide(&w.h, &w.agent, &w.st, &TV::str(id), &options, approved).map_err(|e| w.h.error_message(&e))?;
    w.h.run(run).map_err(|e| w.h.error_message(&e))
}

/// `agent.state.pendingApprovals` by id; it always agrees with the pause the agent holds.
fn pending_ids(w: &AgentWorld) -> Vec<String> {
    let shown: Vec<String> = w.st.get("pendingApprovals").items().iter().map(|r| r.str_at("toolCallId")).collect();
    let held = match agent::approvals::held(&w.h, &w.st).unwrap() {
        Some(approvals) => agent::approvals::undecided(&w.h, &approvals).unwrap(),
        None => Vec::new(),
    };
    assert_eq!(shown, held.iter().map(|r| r.str_at("toolCallId")).collect::<Vec<_>>());
    shown
}

#[test]
fn a_5_8_the_agent_pauses_refuses_to_run_past_it_and_goes_on_when_all_are_decided() {
    let ran = Ran::default();
    let w = agent_world(&ran, &[]);
    w.push(vec![
        reply_calls(vec![
            faux_tool_call("a", "work", json!({"n": 1})),
            faux_tool_call("b", "gate", json!({"n": 2})),
            faux_tool_call("c", "gate", json!({"n": 3})),
        ]),
        reply("after approvals"),
        reply("after steering"),
    ]);
    w.prompt_text("go");
    assert_eq!(pending_ids(&w), strs(&["b", "c"]));
    assert_eq!(w.state("isStreaming").as_bool(), Some(false));
    let waiting =
        "Agent has tool calls waiting for approval (b, c): approve() or deny() each of them first, or reset()";
    assert_eq!(w.h.error_message(&w.prompt(TV::str("again")).unwrap_err()), waiting);
    assert_eq!(w.h.error_message(&w.resume().unwrap_err()), waiting);
    // abort() has no run to abort: the pause stays.
    w.abort();
    assert_eq!(pending_ids(&w), strs(&["b", "c"]));
    // Steering queued during the pause is delivered after the batch, as if there had been no pause.
    w.steer(user("steer!"));
    let rec = w.record(|_, _| {});
    decide(&w, "b", TV::Undefined, true).unwrap();
    assert!(rec.labels().is_empty(), "c still waits: no run yet");
    assert_eq!(pending_ids(&w), strs(&["c"]));
    assert_eq!(decide(&w, "b", TV::Undefined, false).unwrap_err(), "Agent.deny: tool call \"b\" was already approved");
    decide(&w, "c", TV::obj(&[("reason", TV::str("too risky"))]), false).unwrap();
    assert!(pending_ids(&w).is_empty());
    assert!(w.state("approvals").is_undefined());
    assert_eq!(ran.get(), strs(&["a", "b"]));
    assert_eq!(
        w.texts(),
        strs(&["", "go", "", "work 1", "gate 2", "Tool call \"c\" was denied: too risky", "steer!", "after approvals"])
    );
    // The denied call ends first (it has nothing to run), the results keep the request order.
    assert_eq!(
        plain(rec.labels())[..6],
        strs(&[
            "agent_start",
            "turn_start",
            "tool_execution_start:c",
            "tool_execution_end:c",
            "tool_execution_start:b",
            "tool_execution_end:b"
        ])
    );
    assert_eq!(
        decide(&w, "c", TV::Undefined, true).unwrap_err(),
        "Agent.approve: no tool call \"c\" is waiting for approval"
    );
}

#[test]
fn a_5_8_misuse_and_edited_arguments_are_clear_errors_and_reset_drops_the_pause() {
    let ran = Ran::default();
    let w = agent_world(&ran, &[]);
    w.push(vec![reply_calls(vec![faux_tool_call("b", "gate", json!({"n": 2}))]), reply("done")]);
    w.prompt_text("go");
    let bad_args = TV::obj(&[("args", TV::from_json(&json!({"n": "two"})))]);
    assert_eq!(
        decide(&w, "b", bad_args, true).unwrap_err(),
        "Agent.approve: options.args of tool call \"b\" are invalid: Validation failed for tool \"gate\":\n  - n: expected number, got string\n\nReceived arguments:\n{\n  \"n\": \"two\"\n}"
    );
    assert_eq!(
        decide(&w, "zz", TV::Undefined, true).unwrap_err(),
        "Agent.approve: no tool call \"zz\" is waiting for approval"
    );
    let wrong = TV::obj(&[("arguments", TV::obj(&[]))]);
    assert_eq!(
        decide(&w, "b", wrong, true).unwrap_err(),
        "Agent.approve: options.arguments is not an option; edited arguments go in options.args"
    );
    assert_eq!(
        decide(&w, "b", TV::obj(&[("reason", TV::num(1.0))]), false).unwrap_err(),
        "Agent.deny: options.reason must be a string"
    );
    assert_eq!(pending_ids(&w), strs(&["b"]), "a refused decision changes nothing");
    agent::reset(&w.h, &w.st).unwrap();
    assert!(w.state("approvals").is_undefined());
    assert_eq!(
        decide(&w, "b", TV::Undefined, true).unwrap_err(),
        "Agent.approve: no tool call \"b\" is waiting for approval"
    );
    w.prompt_text("fresh start");
    assert_eq!(w.texts(), strs(&["", "fresh start", "done"]));

    // Edited arguments that are valid run as edited.
    let ran = Ran::default();
    let w = agent_world(&ran, &[]);
    w.push(vec![reply_calls(vec![faux_tool_call("b", "gate", json!({"n": 2}))]), reply("done")]);
    w.prompt_text("go");
    decide(&w, "b", TV::obj(&[("args", TV::from_json(&json!({"n": 9})))]), true).unwrap();
    assert_eq!(w.texts(), strs(&["", "go", "", "gate 9", "done"]));
}

#[test]
fn a_5_8_3_an_abort_of_the_run_that_carries_out_the_decisions_is_d2s_and_ends_the_pause() {
    let ran = Ran::default();
    let w = agent_world(&ran, &[]);
    w.push(vec![calls3("work", "gate", "gate"), reply("never asked")]);
    w.prompt_text("go");
    assert_eq!(pending_ids(&w), strs(&["b", "c"]));
    // The approved b aborts the agent while it runs (and finishes anyway: it ignores the signal).
    let st = w.st.clone();
    let tools = w.st.get("tools").items();
    let gate = tools[1].clone();
    let exec = gate.get("execute");
    gate.set(
        "execute",
        TV::func(move |h, this, args| {
            abort_agent(h, &st);
            h.call_sync(&exec, this, args)
        }),
    );
    decide(&w, "c", TV::Undefined, false).unwrap();
    decide(&w, "b", TV::Undefined, true).unwrap();
    assert_eq!(ran.get(), strs(&["a", "b"]));
    assert_eq!(w.faux.call_count(), 1, "abort is final: no request after it");
    // Every call has its one result, the pause is over, and the agent takes a new prompt.
    let got = results_of(&w.messages());
    assert_eq!(
        got,
        vec![
            ("a".into(), "work 1".into()),
            ("b".into(), "gate 2".into()),
            ("c".into(), "Tool call \"c\" was denied".into())
        ]
    );
    assert!(pending_ids(&w).is_empty() && w.state("approvals").is_undefined());
    w.prompt_text("next");
    assert_eq!(w.texts().last().map(String::as_str), Some("never asked"), "the reply the aborted run did not ask for");
}

#[test]
fn a_5_8_3_a_listener_failure_in_the_run_that_carries_out_the_decisions_ends_the_pause_too() {
    let ran = Ran::default();
    let w = agent_world(&ran, &[]);
    w.push(vec![reply_calls(vec![faux_tool_call("b", "gate", json!({"n": 2}))]), reply("after"), reply("next")]);
    w.prompt_text("go");
    let failing = Rc::new(RefCell::new(true));
    let f = failing.clone();
    w.subscribe(TV::func(move |_h, _this, args| {
        let tool_end = args[0].get("type").as_str() == Some("tool_execution_end");
        if tool_end && *f.borrow() { Err(TV::error("listener broke")) } else { Ok(TV::Undefined) }
    }));
    decide(&w, "b", TV::Undefined, true).unwrap();
    assert_eq!(w.state("errorMessage").as_str(), Some("listener broke"));
    assert!(w.state("approvals").is_undefined(), "no decided pause is left to block prompt()");
    *failing.borrow_mut() = false;
    w.prompt_text("again");
    assert_eq!(ran.get(), strs(&["b"]));
}

// ---------------------------------------------------------------------------------------------
// Durable: crash at every checkpoint of a run that pauses and is approved
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Default)]
struct Store(Rc<RefCell<Vec<TV>>>);

impl Store {
    fn callback(&self) -> TV {
        let store = self.clone();
        TV::func(move |_h, _this, args| {
            store.0.borrow_mut().push(args[0].deep_clone());
            Ok(TV::Undefined)
        })
    }
    fn all(&self) -> Vec<TV> {
        self.0.borrow().clone()
    }
}

/// Turn 0: a (work), b (gate), c (work) in parallel; turn 1: d (gate) alone; then the answer.
fn script(ctx: &TV) -> TV {
    let messages = ctx.get("messages").items();
    match messages.iter().filter(|m| m.get("role").as_str() == Some("assistant")).count() {
        0 => calls3("work", "gate", "work"),
        1 => reply_calls(vec![faux_tool_call("d", "gate", json!({"n": 4}))]),
        _ => reply(&format!("done after {} messages", messages.len())),
    }
}

fn durable_world(store: &Store, ran: &Ran) -> AgentWorld {
    let w = agent_world(ran, &[("onCheckpoint", store.callback())]);
    for _ in 0..10 {
        w.faux.push_fn(|ctx, _| script(ctx));
    }
    w
}

/// The decisions of the script: b approved with edited args, d denied.
fn decide_all(w: &AgentWorld) {
    for _ in 0..4 {
        let waiting = pending_ids(w);
        if waiting.is_empty() {
            return;
        }
        for id in waiting {
            match id.as_str() {
                "b" => decide(w, "b", TV::obj(&[("args", TV::from_json(&json!({"n": 20})))]), true).unwrap(),
                _ => decide(w, &id, TV::obj(&[("reason", TV::str("no"))]), false).unwrap(),
            }
        }
    }
}

fn normalized(messages: &[TV]) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(map) => {
                map.remove("timestamp");
                map.remove("durationMs");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v = Value::Array(messages.iter().map(TV::to_json).collect());
    strip(&mut v);
    v
}

#[test]
fn a_5_8_5_crash_at_every_checkpoint_of_a_paused_and_approved_run_reaches_the_same_transcript() {
    let store = Store::default();
    let ran = Ran::default();
    let w = durable_world(&store, &ran);
    // The pause is stored before any listener hears agent_end: a crash in a listener keeps it.
    let stored_first = Rc::new(RefCell::new(Vec::<bool>::new()));
    let (seen, s) = (stored_first.clone(), store.clone());
    w.record(move |_h, e| {
        if e.get("type").as_str() == Some("agent_end") && !e.get("approvals").is_undefined() {
            let last = s.all().pop().unwrap();
            seen.borrow_mut().push(last.get("approvals").get("requests").len() == 1);
        }
    });
    w.prompt_text("go");
    assert_eq!(*stored_first.borrow(), [true]);
    assert_eq!(pending_ids(&w), strs(&["b"]));
    decide_all(&w);
    let transcript = normalized(&w.messages());
    assert_eq!(ran.get(), strs(&["a", "c", "b"]));
    assert_eq!(w.texts()[3..8], strs(&["work 1", "gate 20", "work 3", "", "Tool call \"d\" was denied: no"]));
    let checkpoints = store.all();
    assert!(checkpoints.iter().any(|c| c.get("approvals").get("requests").len() == 1));
    assert!(checkpoints.iter().any(|c| c.get("approvals").get("decisions").len() == 1));
    assert!(checkpoints.len() > 12, "{}", checkpoints.len());

    for k in 1..=checkpoints.len() {
        let ran_after = Ran::default();
        let store2 = Store::default();
        let w2 = durable_world(&store2, &ran_after);
        let data = agent::parse_restore(&w2.h, &TV::arr(checkpoints[..k].iter().map(TV::deep_clone).collect()))
            .unwrap_or_else(|e| panic!("restore {k}: {}", w2.h.error_message(&e)));
        let tools = TV::arr(toolset(&ran_after));
        agent::apply_snapshot(&w2.h, &w2.agent, &w2.st, &data, &tools)
            .unwrap_or_else(|e| panic!("{}", arg_error_text(&w2.h, e)));
        let done: Vec<String> = w2
            .messages()
            .iter()
            .filter(|m| m.get("role").as_str() == Some("toolResult"))
            .map(|m| m.str_at("toolCallId"))
            .chain(w2.st.get("completedTools").items().iter().map(|r| r.str_at("toolCallId")))
            .chain(w2.st.get("approvals").get("completedTools").items().iter().map(|r| r.str_at("toolCallId")))
            .collect();
        if !w2.texts().iter().any(|t| t == "go") {
            continue; // the crash came before the prompt was stored
        }
        // The process that restores: resumes what was running, then decides what waits, as the person would.
        let run = agent::resume(&w2.h, &w2.agent, &w2.st).unwrap();
        w2.h.run(run).unwrap();
        decide_all(&w2);
        assert_eq!(normalized(&w2.messages()), transcript, "crash after checkpoint {k}");
        for id in ran_after.get() {
            assert!(!done.contains(&id), "crash after checkpoint {k}: {id} ran again");
        }
        let mut all: Vec<String> = ran_after.get();
        all.retain(|id| !done.contains(id));
        assert!(pending_ids(&w2).is_empty() && w2.state("approvals").is_undefined(), "checkpoint {k}");
    }
}

#[test]
fn a_5_8_5_a_snapshot_holds_the_pause_and_a_restored_agent_accepts_the_decisions() {
    let ran = Ran::default();
    let w = agent_world(&ran, &[]);
    w.push(vec![calls3("work", "gate", "work")]);
    w.prompt_text("go");
    let snapshot = agent::snapshot(&w.h, &w.agent, &w.st).unwrap();
    assert_eq!(ids(&snapshot.get("approvals").get("requests")), strs(&["b"]));
    assert_eq!(ids(&snapshot.get("approvals").get("completedTools")), strs(&["a", "c"]));
    let text = snapshot.deep_clone();

    let ran2 = Ran::default();
    let w2 = AgentWorld::new(&[], &[]);
    w2.push(vec![reply("done")]);
    let data = agent::parse_restore(&w2.h, &text).unwrap();
    agent::apply_snapshot(&w2.h, &w2.agent, &w2.st, &data, &TV::arr(toolset(&ran2))).ok().unwrap();
    assert_eq!(pending_ids(&w2), strs(&["b"]));
    let rec = w2.record(|_, _| {});
    let run = agent::resume(&w2.h, &w2.agent, &w2.st).unwrap();
    w2.h.run(run).unwrap();
    assert_eq!(pending_ids(&w2), strs(&["b"]), "resume() does not run past a pause");
    assert!(rec.labels().is_empty(), "{:?}", rec.labels());
    decide(&w2, "b", TV::Undefined, true).unwrap();
    assert_eq!(ran2.get(), strs(&["b"]), "a and c ran before the snapshot, and not again");
    assert_eq!(w2.texts(), strs(&["", "go", "", "work 1", "gate 2", "work 3", "done"]));
}

/// A-5.8.7: the transcript and the pause a first Agent reached, carried to a fresh Agent as a stateless server would
/// (the messages and `agent_end.approvals`), with the decisions.
fn stateless_second_agent(ran: &Ran, decisions: serde_json::Value) -> (AgentWorld, Result<(), String>) {
    let first = agent_world(ran, &[]);
    first.push(vec![reply_calls(vec![
        faux_tool_call("a", "work", json!({"n": 1})),
        faux_tool_call("b", "gate", json!({"n": 2})),
        faux_tool_call("c", "gate", json!({"n": 3})),
    ])]);
    first.prompt_text("go");
    let held = agent::approvals::held(&first.h, &first.st).unwrap().unwrap();
    let second = agent_world(ran, &[]);
    second.st.set("messages", TV::arr(first.messages()));
    second.push(vec![reply("after approvals")]);
    let approvals = TV::from_json(&json!({
        "requests": held.get("requests").to_json(),
        "completedTools": held.get("completedTools").to_json(),
        "decisions": decisions,
    }));
    let options = TV::obj(&[("approvals", approvals)]);
    let outcome = agent::continue_run(&second.h, &second.agent, &second.st, &options)
        .map_err(|e| second.h.error_message(&e))
        .and_then(|run| second.h.run(run).map_err(|e| second.h.error_message(&e)));
    (second, outcome)
}

#[test]
fn a_5_8_7_continue_with_approvals_from_outside_carries_them_out_once() {
    let ran = Ran::default();
    let (w, outcome) = stateless_second_agent(
        &ran,
        json!([{"toolCallId": "b", "approved": true}, {"toolCallId": "c", "approved": false, "reason": "no"}]),
    );
    outcome.unwrap();
    // `a` ran in the first agent only; `b` once, in the second; `c` never.
    assert_eq!(ran.get(), strs(&["a", "b"]));
    assert_eq!(
        w.texts(),
        strs(&["", "go", "", "work 1", "gate 2", "Tool call \"c\" was denied: no", "after approvals"])
    );
    assert!(w.state("approvals").is_undefined());
}

#[test]
fn a_5_8_7_undecided_calls_from_outside_wait_for_approve_and_deny() {
    let ran = Ran::default();
    let (w, outcome) = stateless_second_agent(&ran, json!([{"toolCallId": "b", "approved": true}]));
    outcome.unwrap();
    assert_eq!(pending_ids(&w), strs(&["c"]));
    assert_eq!(ran.get(), strs(&["a"]));
    decide(&w, "c", TV::Undefined, true).unwrap();
    assert_eq!(ran.get(), strs(&["a", "b", "c"]));
    assert_eq!(w.texts(), strs(&["", "go", "", "work 1", "gate 2", "gate 3", "after approvals"]));
}

#[test]
fn a_5_8_7_continue_with_approvals_refuses_what_it_cannot_carry_out() {
    let ran = Ran::default();
    // A decision for a call that does not wait.
    let (_, outcome) = stateless_second_agent(&ran, json!([{"toolCallId": "zz", "approved": true}]));
    assert_eq!(
        outcome.unwrap_err(),
        "Agent.continue: options.approvals.decisions[0]: no tool call \"zz\" is waiting for approval"
    );
    // No open turn to finish.
    let w = agent_world(&ran, &[]);
    w.st.set("messages", TV::arr(vec![user("hi")]));
    let options = TV::from_json(&json!({"approvals": {"requests": [], "decisions": []}}));
    let Err(e) = agent::continue_run(&w.h, &w.agent, &w.st, &options) else { panic!("must refuse") };
    assert_eq!(
        w.h.error_message(&e),
        "Agent.continue: the transcript's last assistant message has no tool call waiting for a result"
    );
    assert_eq!(e.get("code").js_string(), "CANNOT_CONTINUE");
    let Err(e) = agent::continue_run(&w.h, &w.agent, &w.st, &TV::num(1.0)) else { panic!("must refuse") };
    assert_eq!(w.h.error_message(&e), "Agent.continue: options must be an object");
}
