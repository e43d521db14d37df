//! Issue 32: usage totals and limits. Each limit at each check point (before a model request, before a tool batch)
//! with the exact events, the stop's message and `agent_end.limitReached`; no lost tool result; queues kept; raise
//! and continue; the Agent's totals through runs, snapshots, checkpoints and a crash at every checkpoint; bad values.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use super::support::*;
use crate::core::agent;
use crate::core::host::Host;
use crate::core::test_host::{TV, TestHost};
use serde_json::{Value, json};
use std::cell::RefCell;
use std::rc::Rc;

/// A usage of `tokens` tokens (input = output = half) costing `cost` USD.
fn usage(tokens: f64, cost: f64) -> TV {
    let half = tokens / 2.0;
    TV::obj(&[
        ("input", TV::num(half)),
        ("output", TV::num(half)),
        ("cacheRead", TV::num(0.0)),
        ("cacheWrite", TV::num(0.0)),
        ("totalTokens", TV::num(tokens)),
        (
            "cost",
            TV::obj(&[
                ("input", TV::num(cost / 2.0)),
                ("output", TV::num(cost / 2.0)),
                ("cacheRead", TV::num(0.0)),
                ("cacheWrite", TV::num(0.0)),
                ("total", TV::num(cost)),
            ]),
        ),
    ])
}

fn with_usage(m: TV, tokens: f64, cost: f64) -> TV {
    m.set("usage", usage(tokens, cost));
    m
}

/// A reply calling `work` once per id, with usage.
fn calls(ids: &[&str], tokens: f64, cost: f64) -> TV {
    with_usage(reply_calls(ids.iter().map(|id| call(id, "work", json!({}))).collect()), tokens, cost)
}

fn answer(s: &str, tokens: f64, cost: f64) -> TV {
    with_usage(reply(s), tokens, cost)
}

fn work() -> TV {
    tool("work", exec_ok("done"))
}

fn limits(fields: &[(&str, f64)]) -> TV {
    TV::obj(&fields.iter().map(|(k, v)| (*k, TV::num(*v))).collect::<Vec<_>>())
}

/// One prompt run with `limits` and these replies; also a steering getter, to see that no queue is polled.
fn run_with(replies: Vec<TV>, fields: &[(&str, f64)], steering: &Queue) -> (World, TV) {
    let w = World::with(replies);
    let cfg = config(&[("limits", limits(fields)), ("getSteeringMessages", steering.getter())]);
    let result = w.prompt(vec![user("go")], ctx_tools(vec![], vec![work()]), cfg);
    (w, result)
}

fn limit_reached(w: &World) -> Value {
    w.events("agent_end").last().unwrap().get("limitReached").to_json()
}

fn tool_texts(result: &TV) -> Vec<String> {
    result.items().iter().filter(|m| m.get("role").as_str() == Some("toolResult")).map(first_text).collect()
}

/// The events of one turn that calls `work` with these ids in a parallel batch (each call ends before the pairs).
fn batch_turn(ids: &[&str]) -> Vec<String> {
    let mut labels = strs(&["turn_start", "message_start:assistant", "message_end:assistant"]);
    for id in ids {
        labels.push(format!("tool_execution_start:{id}"));
    }
    for id in ids {
        labels.push(format!("tool_execution_end:{id}"));
    }
    for _ in ids {
        labels.extend(strs(&["message_start:toolResult", "message_end:toolResult"]));
    }
    labels.push("turn_end".into());
    labels
}

/// A refused batch: each call starts, ends with its error and gets its message pair, one after the other.
fn refused_turn(ids: &[&str]) -> Vec<String> {
    let mut labels = strs(&["turn_start", "message_start:assistant", "message_end:assistant"]);
    for id in ids {
        labels.extend([
            format!("tool_execution_start:{id}"),
            format!("tool_execution_end:{id}"),
            "message_start:toolResult".into(),
            "message_end:toolResult".into(),
        ]);
    }
    labels.push("turn_end".into());
    labels
}

/// A prompt run's events: the start (the tools' system message, the prompt, `steered` messages S0 delivered), the
/// turns (the first without its `turn_start`, which comes first), `agent_end`.
fn expected(steered: usize, turns: Vec<Vec<String>>) -> Vec<String> {
    let mut labels = strs(&["agent_start", "turn_start", "message_start:system", "message_end:system"]);
    for _ in 0..=steered {
        labels.extend(strs(&["message_start:user", "message_end:user"]));
    }
    for (i, turn) in turns.into_iter().enumerate() {
        labels.extend(if i == 0 { turn.into_iter().skip(1).collect::<Vec<_>>() } else { turn });
    }
    labels.push("agent_end".into());
    labels
}

#[test]
fn max_turns_stops_before_the_next_request_without_an_assistant_message_or_a_poll() {
    // Each execution queues a steering message: turn 1's is delivered at S1, turn 2's stays queued.
    let steering = Queue::all();
    let q = steering.clone();
    let steer = tool(
        "work",
        TV::func(move |_h, _this, _args| {
            q.push(user("steer"));
            Ok(ok_result("done"))
        }),
    );
    let w = World::with(vec![calls(&["a"], 10.0, 0.0), calls(&["b"], 10.0, 0.0), answer("never", 0.0, 0.0)]);
    let cfg = config(&[("limits", limits(&[("maxTurns", 2.0)])), ("getSteeringMessages", steering.getter())]);
    let result = w.prompt(vec![user("go")], ctx_tools(vec![], vec![steer]), cfg);
    let mut turn2 = batch_turn(&["b"]);
    turn2.splice(1..1, strs(&["message_start:user", "message_end:user"]));
    assert_eq!(w.labels(), expected(0, vec![batch_turn(&["a"]), turn2]));
    assert_eq!(w.requests(), 2);
    assert_eq!(
        limit_reached(&w),
        json!({"limit": "maxTurns", "scope": "run", "max": 2, "value": 2,
               "message": "Run stopped: turn limit of 2 reached"})
    );
    // The transcript ends with the tool result (a continuation can go on); no poll after the stop: S0, S1, S2.
    assert_eq!(roles(&result).last().map(String::as_str), Some("toolResult"));
    assert_eq!(steering.polls(), 2);
    assert_eq!(steering.len(), 1, "turn 2's steering message stays queued");
    w.assert_clean();
}

#[test]
fn max_model_requests_counts_calls_of_the_stream_function() {
    let steering = Queue::all();
    let (w, _) =
        run_with(vec![calls(&["a"], 0.0, 0.0), answer("never", 0.0, 0.0)], &[("maxModelRequests", 1.0)], &steering);
    assert_eq!(w.labels(), expected(0, vec![batch_turn(&["a"])]));
    assert_eq!(w.requests(), 1);
    assert_eq!(limit_reached(&w)["message"], json!("Run stopped: model request limit of 1 reached"));
}

#[test]
fn a_cost_limit_before_a_batch_gives_every_call_one_error_result_naming_it() {
    let steering = Queue::with(vec![user("later")]);
    let (w, result) = run_with(
        vec![calls(&["a"], 10.0, 0.3), calls(&["b", "c"], 10.0, 0.22), answer("never", 0.0, 0.0)],
        &[("maxCostUsd", 0.5)],
        &steering,
    );
    assert_eq!(w.labels(), expected(1, vec![batch_turn(&["a"]), refused_turn(&["b", "c"])]));
    let stop = "Run stopped: cost limit of $0.50 reached ($0.52 spent)";
    assert_eq!(limit_reached(&w)["message"], json!(stop));
    assert_eq!(limit_reached(&w)["limit"], json!("maxCostUsd"));
    let texts = tool_texts(&result);
    assert_eq!(
        texts,
        [
            "done".to_string(),
            format!("Tool call \"work\" was not executed: {stop}"),
            format!("Tool call \"work\" was not executed: {stop}")
        ]
    );
    for id in ["b", "c"] {
        assert_eq!(w.end_of(id).get("isError").as_bool(), Some(true));
        assert!(w.end_of(id).get("durationMs").is_undefined(), "{id} never ran");
    }
    // Exactly one end per started call.
    assert_eq!(w.events("tool_execution_start").len(), w.events("tool_execution_end").len());
    assert_eq!(steering.len(), 0, "S0 drained it into turn 1");
}

#[test]
fn a_cost_limit_that_cannot_be_checked_stops_at_the_first_reply_with_tokens_but_no_cost() {
    // L-3.12.6: a model without prices (the faux model's are all 0). The first reply reports tokens and costs 0: its
    // batch is refused as a reached limit would be, marked `uncounted`; no second request goes out.
    let (w, result) =
        run_with(vec![calls(&["a"], 10.0, 0.0), answer("never", 0.0, 0.0)], &[("maxCostUsd", 0.5)], &Queue::all());
    assert_eq!(w.labels(), expected(0, vec![refused_turn(&["a"])]));
    assert_eq!(w.requests(), 1);
    let stop = "Run stopped: cost limit of $0.50 cannot be checked: model \"faux-1\" has no prices (set model.cost)";
    assert_eq!(
        limit_reached(&w),
        json!({"limit": "maxCostUsd", "scope": "run", "max": 0.5, "value": 0, "message": stop, "uncounted": true})
    );
    assert_eq!(tool_texts(&result), [format!("Tool call \"work\" was not executed: {stop}")]);

    // A priced model whose reply came without a cost (a stream function that fills in none); before a request here.
    let priced =
        model_with(&[("cost", TV::from_json(&json!({"input": 0.15, "output": 0.6, "cacheRead": 0, "cacheWrite": 0})))]);
    let cut = calls(&["a"], 10.0, 0.0);
    cut.set("stopReason", TV::str("length"));
    let w = World::with(vec![cut, answer("never", 0.0, 0.0)]);
    let cfg = config(&[("model", priced), ("limits", limits(&[("maxCostUsd", 0.5)]))]);
    w.prompt(vec![user("go")], ctx_tools(vec![], vec![work()]), cfg);
    assert_eq!(w.requests(), 1);
    assert_eq!(
        limit_reached(&w)["message"],
        json!(
            "Run stopped: cost limit of $0.50 cannot be checked: a reply of model \"faux-1\" reported tokens but no cost"
        )
    );

    // A reply that reports no usage at all counts nothing and stops nothing; without a cost limit nothing changes.
    let (w, _) =
        run_with(vec![calls(&["a"], 0.0, 0.0), answer("done", 0.0, 0.0)], &[("maxCostUsd", 0.5)], &Queue::all());
    assert_eq!(w.requests(), 2);
    assert!(w.events("agent_end")[0].get("limitReached").is_undefined());
    let (w, _) =
        run_with(vec![calls(&["a"], 10.0, 0.0), answer("done", 0.0, 0.0)], &[("maxTokens", 1000.0)], &Queue::all());
    assert_eq!(w.requests(), 2);
    assert!(w.events("agent_end")[0].get("limitReached").is_undefined());
}

#[test]
fn an_agent_cost_limit_that_cannot_be_checked_names_the_agent_scope() {
    let w = agent_world(&[("totalLimits", limits(&[("maxCostUsd", 5.0)]))]);
    w.push(vec![calls(&["a"], 10.0, 0.0), answer("never", 0.0, 0.0)]);
    w.prompt_text("go");
    let stop =
        "Run stopped: agent cost limit of $5.00 cannot be checked: model \"faux-1\" has no prices (set model.cost)";
    assert_eq!(w.state("errorMessage").as_str(), Some(stop));
    assert_eq!(w.state("limitReached").str_at("scope"), "agent");
    assert_eq!(w.state("limitReached").get("uncounted").as_bool(), Some(true));
}

#[test]
fn a_token_limit_is_checked_before_a_batch_and_before_a_request() {
    // Before a batch: the reply that passes the limit asks for a tool.
    let (w, _) = run_with(vec![calls(&["a"], 1200.0, 0.0)], &[("maxTokens", 1000.0)], &Queue::all());
    assert_eq!(w.labels(), expected(0, vec![refused_turn(&["a"])]));
    assert_eq!(limit_reached(&w)["message"], json!("Run stopped: token limit of 1000 reached (1200 tokens used)"));
    // Before a request: a truncated reply (no batch runs, T-4.6) leaves results the model should see.
    let cut = calls(&["a"], 1200.0, 0.0);
    cut.set("stopReason", TV::str("length"));
    let (w, _) = run_with(vec![cut, answer("never", 0.0, 0.0)], &[("maxTokens", 1000.0)], &Queue::all());
    assert_eq!(w.requests(), 1);
    assert_eq!(limit_reached(&w)["limit"], json!("maxTokens"));
}

#[test]
fn a_time_limit_is_seen_after_a_slow_batch() {
    let w = World::with(vec![calls(&["a"], 0.0, 0.0), answer("never", 0.0, 0.0)]);
    let slow = tool("work", exec_after(100.0, ok_result("late")));
    let cfg = config(&[("limits", limits(&[("maxDurationMs", 50.0)]))]);
    w.prompt(vec![user("go")], ctx_tools(vec![], vec![slow]), cfg);
    assert_eq!(w.labels(), expected(0, vec![batch_turn(&["a"])]));
    assert_eq!(w.requests(), 1);
    assert_eq!(limit_reached(&w)["message"], json!("Run stopped: time limit of 50 ms reached (100 ms elapsed)"));
}

#[test]
fn a_time_limit_is_seen_before_a_batch_after_a_slow_stream_and_finish_turn_end_does_not_hide_the_stop() {
    let w = World::with(vec![calls(&["a"], 0.0, 0.0)]);
    w.faux.set_chunk_delay(40.0);
    let finish = TV::func(|_h, _this, _args| Ok(TV::obj(&[("action", TV::str("end"))])));
    let cfg = config(&[("limits", limits(&[("maxDurationMs", 30.0)])), ("finishTurn", finish)]);
    let result = w.prompt(vec![user("go")], ctx_tools(vec![], vec![work()]), cfg);
    assert_eq!(w.labels(), expected(0, vec![refused_turn(&["a"])]));
    let reached = limit_reached(&w);
    assert_eq!(reached["limit"], json!("maxDurationMs"));
    assert!(reached["message"].as_str().unwrap().starts_with("Run stopped: time limit of 30 ms reached ("));
    assert_eq!(tool_texts(&result).len(), 1);
    w.assert_clean();
}

#[test]
fn a_tool_call_limit_refuses_a_batch_that_would_pass_it() {
    let (w, result) = run_with(
        vec![calls(&["a", "b", "c"], 0.0, 0.0), calls(&["d", "e"], 0.0, 0.0), answer("never", 0.0, 0.0)],
        &[("maxToolCalls", 4.0)],
        &Queue::all(),
    );
    assert_eq!(w.labels(), expected(0, vec![batch_turn(&["a", "b", "c"]), refused_turn(&["d", "e"])]));
    let stop = "Run stopped: tool call limit of 4 reached (3 run, 2 more requested)";
    assert_eq!(
        limit_reached(&w),
        json!({"limit": "maxToolCalls", "scope": "run", "max": 4, "value": 5, "message": stop})
    );
    assert_eq!(tool_texts(&result)[3], format!("Tool call \"work\" was not executed: {stop}"));
}

#[test]
fn after_a_final_answer_a_reached_limit_ends_the_run_as_it_would_have_and_polls_nothing() {
    let steering = Queue::all();
    let (w, _) = run_with(vec![answer("hi", 2000.0, 1.0)], &[("maxTokens", 1000.0)], &steering);
    steering.push(user("queued meanwhile"));
    assert!(w.events("agent_end")[0].get("limitReached").is_undefined());
    assert_eq!(w.events("agent_end")[0].keys(), ["type", "messages"]);
    assert_eq!(steering.polls(), 1, "S0 only");
    // finishTurn's "continue" asked for another request: that one is reported.
    let w = World::with(vec![answer("hi", 2000.0, 1.0)]);
    let finish = TV::func(|_h, _this, _args| Ok(TV::obj(&[("action", TV::str("continue"))])));
    let cfg = config(&[("limits", limits(&[("maxTokens", 1000.0)])), ("finishTurn", finish)]);
    w.prompt(vec![user("go")], ctx(vec![]), cfg);
    assert_eq!(limit_reached(&w)["limit"], json!("maxTokens"));
}

#[test]
fn without_limits_nothing_changes_and_infinity_is_no_limit() {
    let (w, _) = run_with(
        vec![calls(&["a"], 10.0, 5.0), answer("end", 10.0, 5.0)],
        &[("maxTurns", f64::INFINITY), ("maxCostUsd", f64::INFINITY)],
        &Queue::all(),
    );
    assert_eq!(w.requests(), 2);
    assert_eq!(w.events("agent_end")[0].keys(), ["type", "messages"]);
}

#[test]
fn bad_limit_values_are_type_errors_naming_the_field() {
    let h = TestHost::new();
    let c = crate::core::args::Checker::new(&h, "agentLoop");
    let check = |v: TV| {
        let cfg = config(&[("limits", v)]);
        match c.config(&cfg, "config") {
            Ok(()) => "ok".to_string(),
            Err(e) => arg_error_text(&h, e),
        }
    };
    assert_eq!(
        check(limits(&[("maxTurns", 0.0)])),
        "TypeError: agentLoop: config.limits.maxTurns must be a positive integer or Infinity"
    );
    assert_eq!(
        check(limits(&[("maxToolCalls", 1.5)])),
        "TypeError: agentLoop: config.limits.maxToolCalls must be a positive integer or Infinity"
    );
    assert_eq!(
        check(limits(&[("maxCostUsd", -1.0)])),
        "TypeError: agentLoop: config.limits.maxCostUsd must be a positive number or Infinity"
    );
    assert_eq!(
        check(limits(&[("maxDurationMs", f64::NAN)])),
        "TypeError: agentLoop: config.limits.maxDurationMs must be a positive number or Infinity"
    );
    assert_eq!(
        check(TV::obj(&[("maxTokens", TV::str("10"))])),
        "TypeError: agentLoop: config.limits.maxTokens must be a positive number or Infinity"
    );
    assert_eq!(check(TV::num(5.0)), "TypeError: agentLoop: config.limits must be an object");
    assert_eq!(check(TV::Null), "ok");
    assert_eq!(check(limits(&[("maxTurns", 3.0), ("maxCostUsd", 0.01)])), "ok");
    // The Agent: its options, and its fields when a run starts.
    let w = AgentWorld::bare(TestHost::new(), crate::core::test_host::FauxProvider::new(&h));
    let opts = TV::obj(&[("totalLimits", limits(&[("maxCostUsd", 0.0)]))]);
    let e = agent::init(&w.h, &w.agent, &w.st, &opts, &TV::Undefined).unwrap_err();
    assert_eq!(
        arg_error_text(&w.h, e),
        "TypeError: Agent: options.totalLimits.maxCostUsd must be a positive number or Infinity"
    );
    let w = AgentWorld::new(&[], &[]);
    w.agent.set("limits", TV::arr(vec![]));
    let e = w.prompt(TV::str("go")).unwrap_err();
    assert_eq!(w.h.error_message(&e), "Agent.prompt: agent.limits must be an object");
    assert!(w.messages().iter().all(|m| m.get("role").as_str() == Some("system")), "nothing ran");
}

// ---- the Agent

fn agent_world(options: &[(&str, TV)]) -> AgentWorld {
    AgentWorld::new(options, &[]).tap(|w| w.st.set("tools", TV::arr(vec![work()])))
}

trait Tap: Sized {
    fn tap(self, f: impl FnOnce(&Self)) -> Self {
        f(&self);
        self
    }
}
impl Tap for AgentWorld {}

fn apply(w: &AgentWorld, data: &TV) {
    agent::apply_snapshot(&w.h, &w.agent, &w.st, data, &TV::arr(vec![work()]))
        .unwrap_or_else(|e| panic!("{}", arg_error_text(&w.h, e)));
}

fn totals(v: &TV) -> Value {
    v.to_json()
}

#[test]
fn the_agent_keeps_run_and_total_usage_and_a_raised_limit_continues_with_the_queue_kept() {
    let w = agent_world(&[("limits", limits(&[("maxTurns", 2.0)]))]);
    w.push(vec![
        calls(&["a"], 10.0, 0.1),
        calls(&["b"], 20.0, 0.2),
        calls(&["c"], 30.0, 0.3),
        answer("end", 40.0, 0.4),
    ]);
    w.follow_up(user("and then"));
    let rec = w.record(|_, _| {});
    w.prompt_text("go");
    assert_eq!(w.state("errorMessage").as_str(), Some("Run stopped: turn limit of 2 reached"));
    assert_eq!(w.state("limitReached").str_at("limit"), "maxTurns");
    assert_eq!(roles_of(&w.messages()).last().map(String::as_str), Some("toolResult"));
    assert_eq!(w.peek_texts(), ["and then"], "the follow-up is still queued");
    assert_eq!(totals(&w.state("runUsage"))["totalTokens"], json!(30));
    assert_eq!(totals(&w.state("totalUsage"))["cost"]["total"].as_f64().map(|c| (c * 100.0).round()), Some(30.0));
    assert_eq!(rec.labels().last().map(String::as_str), Some("agent_end"));

    // Raise it and go on: the run continues from the tool result, then delivers the follow-up.
    w.agent.set("limits", limits(&[("maxTurns", 10.0)]));
    w.push(vec![answer("after follow-up", 5.0, 0.0)]);
    w.resume().unwrap();
    assert!(w.state("limitReached").is_undefined());
    assert!(w.state("errorMessage").is_undefined());
    assert_eq!(w.texts().last().map(String::as_str), Some("after follow-up"));
    assert!(w.texts().contains(&"and then".to_string()));
    assert!(!w.has_queued());
    assert_eq!(totals(&w.state("runUsage"))["totalTokens"], json!(75));
    assert_eq!(totals(&w.state("totalUsage"))["totalTokens"], json!(105));
    assert_eq!(totals(&w.state("totalUsage"))["input"], json!(52.5));

    // reset() forgets the run, keeps the agent's bill.
    agent::reset(&w.h, &w.st).unwrap();
    assert!(w.state("runUsage").is_undefined());
    assert_eq!(totals(&w.state("totalUsage"))["totalTokens"], json!(105));
}

#[test]
fn total_limits_stop_a_run_and_then_refuse_to_start_one() {
    let w = agent_world(&[("totalLimits", limits(&[("maxCostUsd", 0.5)]))]);
    w.push(vec![calls(&["a"], 10.0, 0.3), calls(&["b"], 10.0, 0.3), answer("never", 0.0, 0.0)]);
    w.prompt_text("go");
    let stop = "Run stopped: agent cost limit of $0.50 reached ($0.60 spent in total)";
    assert_eq!(w.state("errorMessage").as_str(), Some(stop));
    assert_eq!(w.state("limitReached").str_at("scope"), "agent");
    let e = w.prompt(TV::str("more")).unwrap_err();
    assert_eq!(
        w.h.error_message(&e),
        "Agent.prompt: agent cost limit of $0.50 reached ($0.60 spent in total); raise agent.totalLimits.maxCostUsd to run again"
    );
    let e = w.resume().unwrap_err();
    assert!(w.h.error_message(&e).starts_with("Agent.continue: agent cost limit"));
    assert!(!w.texts().contains(&"more".to_string()));
    w.agent.set("totalLimits", limits(&[("maxCostUsd", 1.0)]));
    w.resume().unwrap();
    assert_eq!(w.texts().last().map(String::as_str), Some("never"));
}

#[test]
fn totals_survive_snapshots_and_zero_usage_adds_no_field() {
    let w = agent_world(&[]);
    w.push(vec![reply("no usage")]);
    w.prompt_text("go");
    assert!(w.state("totalUsage").is_undefined());
    let snapshot = agent::snapshot(&w.h, &w.agent, &w.st).unwrap();
    assert!(snapshot.get("usage").is_undefined());
    w.push(vec![answer("paid", 100.0, 0.25)]);
    w.prompt_text("again");
    let snapshot = agent::snapshot(&w.h, &w.agent, &w.st).unwrap();
    assert_eq!(snapshot.get("usage").to_json()["totalTokens"], json!(100));
    let data = agent::parse_restore(&w.h, &snapshot).unwrap();
    let other = agent_world(&[]);
    apply(&other, &data);
    assert_eq!(other.state("totalUsage").to_json(), w.state("totalUsage").to_json());
    // A bad stored total is an exact error.
    snapshot.get("usage").set("totalTokens", TV::str("x"));
    let e = agent::parse_restore(&w.h, &snapshot).unwrap_err();
    assert_eq!(
        w.h.error_message(&e),
        "Agent.restore: invalid snapshot: usage.totalTokens: expected a non-negative number"
    );
}

#[derive(Clone, Default)]
struct Store(Rc<RefCell<Vec<TV>>>);

#[test]
fn totals_ride_in_checkpoints_and_a_crash_at_every_one_restores_the_stored_replies_totals() {
    let store = Store::default();
    let s = store.clone();
    let callback = TV::func(move |_h, _this, args| {
        s.0.borrow_mut().push(args[0].deep_clone());
        Ok(TV::Undefined)
    });
    let w = agent_world(&[("onCheckpoint", callback)]);
    w.push(vec![calls(&["a"], 10.0, 0.125), calls(&["b"], 20.0, 0.25), answer("end", 40.0, 0.5)]);
    w.prompt_text("go");
    let all = store.0.borrow().clone();
    let with_usage: Vec<f64> = all.iter().filter(|c| !c.get("usage").is_undefined()).map(|c| c.num_at("seq")).collect();
    assert_eq!(with_usage.len(), 3, "one per reply with usage");
    for k in 1..=all.len() {
        let data = agent::parse_restore(&w.h, &TV::arr(all[..k].iter().map(TV::deep_clone).collect())).unwrap();
        let other = agent_world(&[]);
        apply(&other, &data);
        // The totals are those of the assistant messages the checkpoints hold.
        let assistants: Vec<TV> =
            other.messages().into_iter().filter(|m| m.get("role").as_str() == Some("assistant")).collect();
        let stored: f64 = assistants.iter().map(|m| m.get("usage").num_at("totalTokens")).sum();
        let restored = other.state("totalUsage");
        let tokens = if restored.is_undefined() { 0.0 } else { restored.num_at("totalTokens") };
        assert_eq!(tokens, stored, "after checkpoint {k}");
        // Resumed (the model answers what the checkpoints miss), the agent reaches the whole run's totals.
        let replies = [calls(&["a"], 10.0, 0.125), calls(&["b"], 20.0, 0.25), answer("end", 40.0, 0.5)];
        other.push(replies.into_iter().skip(assistants.len()).collect());
        let run = agent::resume(&other.h, &other.agent, &other.st).unwrap();
        other.h.run(run).unwrap();
        if other.texts().iter().any(|t| t == "go") {
            assert_eq!(other.state("totalUsage").num_at("totalTokens"), 70.0, "after checkpoint {k}");
            assert_eq!(other.state("totalUsage").get("cost").num_at("total"), 0.875, "after checkpoint {k}");
        }
    }
    // A bad stored total is an exact error.
    let bad: Vec<TV> = all.iter().map(TV::deep_clone).collect();
    let at = bad.iter().position(|c| !c.get("usage").is_undefined()).unwrap();
    bad[at].set("usage", TV::num(1.0));
    let e = agent::parse_restore(&w.h, &TV::arr(bad[..=at].to_vec())).unwrap_err();
    assert_eq!(w.h.error_message(&e), format!("Agent.restore: checkpoints[{at}]: usage must be an object"));
}
