//! Durable agents (checkpoint.rs, `Agent.resume`): incremental checkpoints, restore from them, and
//! a crash at every checkpoint of a scripted run followed by a resume that reaches the transcript
//! of the uninterrupted run, with no completed tool run twice.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use super::support::*;
use crate::core::agent;
use crate::core::host::Host;
use crate::core::test_host::{TV, TestHost, faux_tool_call};
use serde_json::{Value, json};
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// Storage: every checkpoint as it was handed over, deep-copied (as a database would keep it).
#[derive(Clone, Default)]
struct Store(Rc<RefCell<Vec<TV>>>);

impl Store {
    /// `onCheckpoint`: sync (returns undefined) or async (returns a resolved promise).
    fn callback(&self, asynchronous: bool) -> TV {
        let store = self.clone();
        TV::func(move |h, _this, args| {
            store.0.borrow_mut().push(args[0].deep_clone());
            Ok(if asynchronous { h.resolved(TV::Undefined) } else { TV::Undefined })
        })
    }
    fn all(&self) -> Vec<TV> {
        self.0.borrow().clone()
    }
}

/// Executions per tool-call id, across a run and its resume.
#[derive(Clone, Default)]
struct Executions(Rc<RefCell<Vec<String>>>);

/// The scripted model: three calls (two `work` in parallel with a `slow` one), then one more
/// `work` call, then an answer naming how many messages it saw.
fn model_script(ctx: &TV) -> TV {
    let messages = ctx.get("messages").items();
    let turns = messages.iter().filter(|m| m.get("role").as_str() == Some("assistant")).count();
    match turns {
        0 => reply_calls(vec![
            faux_tool_call("a", "work", json!({"n": 1})),
            faux_tool_call("b", "work", json!({"n": 2})),
            faux_tool_call("c", "slow", json!({})),
        ]),
        1 => reply_calls(vec![faux_tool_call("d", "work", json!({"n": 3}))]),
        _ => reply(&format!("done after {} messages", messages.len())),
    }
}

/// The tools: `work` answers at once; `slow` waits 10 ms and steers the agent once (idempotent:
/// not when its steering message is already queued or delivered).
fn tools(st: &TV, runs: &Executions, slow_extra: &[(&str, TV)]) -> Vec<TV> {
    let log = runs.clone();
    let work = tool(
        "work",
        TV::async_func(move |h, _this, args| {
            log.0.borrow_mut().push(args[0].as_str().unwrap().to_string());
            let n = args[1].get("n").as_num().unwrap_or(0.0);
            let h = h.clone();
            Box::pin(async move {
                h.sleep(1.0).await;
                Ok(ok_result(&format!("work {n}")))
            })
        }),
    );
    let (log, state) = (runs.clone(), st.clone());
    let slow = tool_with(
        "slow",
        TV::async_func(move |h, _this, args| {
            log.0.borrow_mut().push(args[0].as_str().unwrap().to_string());
            let seen = ["messages", "steering", "transitSteering"]
                .iter()
                .flat_map(|k| state.get(k).items())
                .any(|m| first_text(&m) == "steer!");
            if !seen {
                agent::enqueue(h, &state, agent::Queue::Steering, &user("steer!"), "Agent.steer").ok();
            }
            let h = h.clone();
            Box::pin(async move {
                h.sleep(10.0).await;
                Ok(ok_result("slow done"))
            })
        }),
        slow_extra,
    );
    vec![work, slow]
}

/// A world whose model follows `model_script` for up to 20 requests.
fn world(store: &Store, asynchronous: bool) -> AgentWorld {
    let w = AgentWorld::new(&[("onCheckpoint", store.callback(asynchronous))], &[]);
    for _ in 0..20 {
        w.faux.push_fn(|ctx, _options| model_script(ctx));
    }
    w
}

/// A transcript without what differs between runs (times, durations).
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

/// Restores an agent from checkpoints into a fresh world (same options), with the tools.
fn restored(list: &[TV], store: &Store, runs: &Executions, slow_extra: &[(&str, TV)]) -> AgentWorld {
    let w = world(store, false);
    let data = agent::parse_restore(&w.h, &TV::arr(list.iter().map(TV::deep_clone).collect()))
        .unwrap_or_else(|e| panic!("restore: {}", w.h.error_message(&e)));
    let tools = TV::arr(tools(&w.st, runs, slow_extra));
    agent::apply_snapshot(&w.h, &w.agent, &w.st, &data, &tools)
        .unwrap_or_else(|e| panic!("{}", arg_error_text(&w.h, e)));
    w
}

fn resume(w: &AgentWorld) {
    let run = agent::resume(&w.h, &w.agent, &w.st).unwrap_or_else(|e| panic!("{}", w.h.error_message(&e)));
    w.h.run(run).unwrap();
}

/// The uninterrupted run: its checkpoints, final transcript and executions.
fn uninterrupted(asynchronous: bool) -> (Vec<TV>, Value, Vec<String>) {
    let store = Store::default();
    let runs = Executions::default();
    let w = world(&store, asynchronous);
    w.st.set("tools", TV::arr(tools(&w.st, &runs, &[])));
    w.prompt_text("go");
    let executed = runs.0.borrow().clone();
    (store.all(), normalized(&w.messages()), executed)
}

#[test]
fn checkpoints_carry_only_what_changed_and_fold_back_exactly() {
    let (checkpoints, transcript, executed) = uninterrupted(false);
    assert_eq!(executed, ["a", "b", "c", "d"]);
    let seqs: Vec<f64> = checkpoints.iter().map(|c| c.num_at("seq")).collect();
    assert_eq!(seqs, (1..=checkpoints.len()).map(|n| n as f64).collect::<Vec<_>>());
    assert_eq!(checkpoints[0].get("full").as_bool(), Some(true));
    let mut count = 0.0;
    for c in &checkpoints {
        let change = c.get("messages");
        if change.is_undefined() {
            continue;
        }
        // Appends continue where the previous checkpoint stopped, one message at a time.
        assert_eq!(change.num_at("from"), count, "checkpoint {}", c.num_at("seq"));
        assert!(change.get("append").len() <= 1);
        count += change.get("append").len() as f64;
    }
    let h = TestHost::new();
    let data = agent::parse_restore(&h, &TV::arr(checkpoints.clone())).unwrap();
    assert_eq!(normalized(&data.get("messages").items()), transcript);
    assert_eq!(data.get("running").as_bool(), Some(false));
    assert!(data.get("steeringQueue").is_empty() && data.get("completedTools").is_empty());
    // The prompt, 3 + 1 tool ends, the steering delivery, the answer: every durable point is there.
    let labels: Vec<String> = checkpoints
        .iter()
        .map(|c| {
            let mut keys = c.keys();
            keys.retain(|k| !["format", "version", "seq", "full"].contains(&k.as_str()));
            keys.join(",")
        })
        .collect();
    assert!(labels.iter().filter(|l| l.contains("ended")).count() >= 4, "{labels:?}");
}

fn crash_everywhere(asynchronous: bool) {
    let (checkpoints, transcript, _) = uninterrupted(asynchronous);
    assert!(checkpoints.len() > 10);
    for k in 1..=checkpoints.len() {
        let prefix = &checkpoints[..k];
        let store = Store::default();
        let runs = Executions::default();
        let w = restored(prefix, &store, &runs, &[]);
        // What the prefix already holds as done must not run again.
        let done: Vec<String> = w
            .messages()
            .iter()
            .filter(|m| m.get("role").as_str() == Some("toolResult"))
            .map(|m| m.str_at("toolCallId"))
            .chain(w.st.get("completedTools").items().iter().map(|r| r.str_at("toolCallId")))
            .collect();
        let prompted = w.texts().iter().any(|t| t == "go");
        resume(&w);
        if !prompted {
            // The crash came before the prompt was stored: there is nothing to resume.
            assert!(w.messages().iter().all(|m| m.get("role").as_str() == Some("system")), "checkpoint {k}");
            assert!(runs.0.borrow().is_empty());
            continue;
        }
        assert_eq!(normalized(&w.messages()), transcript, "crash after checkpoint {k}");
        for id in runs.0.borrow().iter() {
            assert!(!done.contains(id), "crash after checkpoint {k}: {id} ran again");
        }
        assert!(!w.has_queued(), "crash after checkpoint {k}: queue left");
        // The resumed agent's own checkpoints go on from k.
        if let Some(first) = store.all().first() {
            assert_eq!(first.num_at("seq"), k as f64 + 1.0);
        }
    }
}

#[test]
fn crash_at_every_checkpoint_then_resume_reaches_the_uninterrupted_transcript() {
    crash_everywhere(false);
}

#[test]
fn crash_at_every_checkpoint_with_an_async_store() {
    crash_everywhere(true);
}

#[test]
fn a_tool_marked_resume_fail_is_reported_interrupted_not_run() {
    let (checkpoints, _, _) = uninterrupted(false);
    // The first checkpoint after the assistant message with the three calls, before any end.
    let k = checkpoints
        .iter()
        .position(|c| {
            let append = c.get("messages").get("append");
            !append.is_undefined() && append.items().iter().any(|m| m.get("role").as_str() == Some("assistant"))
        })
        .unwrap()
        + 1;
    let store = Store::default();
    let runs = Executions::default();
    let w = restored(&checkpoints[..k], &store, &runs, &[("resume", TV::str("fail"))]);
    let rec = w.record(|_, _| {});
    resume(&w);
    assert!(!runs.0.borrow().contains(&"c".to_string()));
    let result = w.messages().into_iter().find(|m| m.get("toolCallId").as_str() == Some("c")).unwrap();
    assert_eq!(first_text(&result), "Tool call \"c\" was interrupted and not retried");
    assert_eq!(result.get("isError").as_bool(), Some(true));
    let labels = rec.labels();
    assert_eq!(labels.first().map(String::as_str), Some("agent_start"));
    assert!(labels.iter().any(|l| l.starts_with("tool_execution_end")), "{labels:?}");
}

#[test]
fn gaps_repeats_and_foreign_values_are_exact_errors() {
    let (checkpoints, _, _) = uninterrupted(false);
    let h = TestHost::new();
    let error = |list: Vec<TV>| h.error_message(&agent::parse_restore(&h, &TV::arr(list)).unwrap_err());
    let c = |i: usize| checkpoints[i].deep_clone();
    assert_eq!(error(vec![c(0), c(2)]), "Agent.restore: checkpoints[1]: checkpoint 2 is missing (next is 3)");
    assert_eq!(
        error(vec![c(0), c(1), c(1)]),
        "Agent.restore: checkpoints[2]: checkpoint 2 repeats or is out of order (expected 3)"
    );
    assert_eq!(
        error(vec![c(1)]),
        "Agent.restore: checkpoints[0]: the first checkpoint of an agent (seq 1) or a snapshot must come first"
    );
    assert_eq!(error(vec![TV::obj(&[])]), "Agent.restore: not an agent-loop-wasm snapshot");
    assert_eq!(error(vec![c(0), TV::obj(&[])]), "Agent.restore: checkpoints[1]: not an agent-loop-wasm checkpoint");
    let newer = c(0);
    newer.set("version", TV::num(2.0));
    assert_eq!(
        error(vec![newer]),
        "Agent.restore: checkpoints[0]: checkpoint version 2 is newer than this library supports (1)"
    );
    assert_eq!(error(vec![]), "Agent.restore: not an agent-loop-wasm snapshot");
    assert!(error(vec![TV::str("{")]).starts_with("Agent.restore: checkpoints[0] is not valid JSON: "));
}

#[test]
fn an_idle_agent_resumes_at_once_and_a_snapshot_takes_checkpoints_after_it() {
    let store = Store::default();
    let w = world(&store, false);
    w.push(vec![reply("hi")]);
    w.prompt_text("hello");
    let snapshot = agent::snapshot(&w.h, &w.agent, &w.st).unwrap();
    assert_eq!(snapshot.num_at("checkpointSeq"), store.all().len() as f64);
    let before = store.all().len();
    w.follow_up(user("later"));
    w.prompt_text("again");
    let after: Vec<TV> = store.all()[before..].to_vec();
    let mut list = vec![snapshot];
    list.extend(after);
    let data = agent::parse_restore(&w.h, &TV::arr(list)).unwrap();
    assert_eq!(normalized(&data.get("messages").items()), normalized(&w.messages()));

    // Idle: nothing to resume, no event, no checkpoint.
    let rec = w.record(|_, _| {});
    let written = store.all().len();
    resume(&w);
    assert!(rec.labels().is_empty());
    assert_eq!(store.all().len(), written);
}

#[test]
fn a_failed_write_keeps_its_seq_and_fails_the_run_like_a_listener() {
    let fail = Rc::new(Cell::new(false));
    let seen = Rc::new(RefCell::new(Vec::<f64>::new()));
    let (f, s) = (fail.clone(), seen.clone());
    let callback = TV::func(move |_h, _this, args| {
        s.borrow_mut().push(args[0].num_at("seq"));
        if f.get() { Err(TV::error("disk full")) } else { Ok(TV::Undefined) }
    });
    let w = AgentWorld::new(&[("onCheckpoint", callback)], &[]);
    w.push(vec![reply("one"), reply("two")]);
    w.prompt_text("first");
    let last = *seen.borrow().last().unwrap();
    fail.set(true);
    w.prompt_text("second");
    // The run failed at its first durable point (the prompt), with the write's error...
    assert_eq!(w.state("errorMessage").as_str(), Some("disk full"));
    // ...and every attempt after the failure reused the next sequence number.
    assert!(seen.borrow().iter().filter(|n| **n > last).all(|n| *n == last + 1.0));
    fail.set(false);
    w.push(vec![reply("three")]);
    w.prompt_text("third");
    assert_eq!(*seen.borrow().iter().filter(|n| **n > last).min_by(|a, b| a.total_cmp(b)).unwrap(), last + 1.0);
}

#[test]
fn a_snapshot_between_a_drain_and_its_delivery_still_holds_the_message() {
    let store = Store::default();
    let runs = Executions::default();
    let w = world(&store, false);
    w.st.set("tools", TV::arr(tools(&w.st, &runs, &[])));
    let taken = Rc::new(RefCell::new(None));
    let (t, agent_v, st) = (taken.clone(), w.agent.clone(), w.st.clone());
    // At the steering message's message_start it is drained and not yet in the transcript.
    w.record(move |h, e| {
        if e.get("type").as_str() == Some("message_start") && first_text(&e.get("message")) == "steer!" {
            *t.borrow_mut() = Some(agent::snapshot(h, &agent_v, &st).unwrap());
        }
    });
    w.prompt_text("go");
    let snapshot = taken.borrow().clone().unwrap();
    let queued: Vec<String> = snapshot.get("steeringQueue").items().iter().map(first_text).collect();
    assert_eq!(queued, ["steer!"]);
    assert!(!snapshot.get("messages").items().iter().any(|m| first_text(m) == "steer!"));
    assert_eq!(snapshot.get("running").as_bool(), Some(true));
}

// ---- issue 45: a compaction is a durable point

/// A compacting agent's model: a summary request gets "SUMMARY"; otherwise it asks for the step after the last one
/// whose result it sees, up to 8, then answers. Each reply reports the request's size (4 characters a token + 100) as
/// its usage, so the same transcript compacts at the same place in every run.
fn compacting_script(ctx: &TV) -> TV {
    let messages = ctx.get("messages").items();
    let chars: usize = messages.iter().map(|m| first_text(m).len()).sum();
    let usage = |m: TV| {
        let tokens = (chars / 4 + 100) as f64;
        m.set(
            "usage",
            TV::from_json(
                &json!({ "input": tokens, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": tokens }),
            ),
        );
        m
    };
    if messages.first().is_some_and(|m| first_text(m).starts_with("You are a context summarization assistant")) {
        return usage(reply("SUMMARY"));
    }
    let last = messages
        .iter()
        .rev()
        .find(|m| m.get("role").as_str() == Some("toolResult"))
        .and_then(|m| {
            first_text(m).strip_prefix("step ").and_then(|n| n.split(' ').next().and_then(|n| n.parse::<u32>().ok()))
        })
        .unwrap_or(0);
    if last < 8 {
        let n = last + 1;
        usage(reply_calls(vec![faux_tool_call(&format!("s{n}"), "step", json!({ "n": n }))]))
    } else {
        usage(reply("done"))
    }
}

fn compacting_world(store: &Store, runs: &Executions) -> AgentWorld {
    let model = model_with(&[("contextWindow", TV::num(1000.0))]);
    let compaction = TV::from_json(&json!({ "keepRecentTokens": 150 }));
    let w =
        AgentWorld::new(&[("onCheckpoint", store.callback(false)), ("compaction", compaction)], &[("model", model)]);
    for _ in 0..30 {
        w.faux.push_fn(|ctx, _options| compacting_script(ctx));
    }
    let log = runs.clone();
    let step = tool(
        "step",
        TV::func(move |_h, _this, args| {
            log.0.borrow_mut().push(args[0].as_str().unwrap().to_string());
            let n = args[1].get("n").as_num().unwrap_or(0.0);
            Ok(ok_result(&format!("step {n} {}", "x".repeat(800))))
        }),
    );
    w.st.set("tools", TV::arr(vec![step]));
    w
}

/// The entry is a message like any other: a crash at every checkpoint of a run that compacts twice, then a resume,
/// reaches the uninterrupted transcript (entries included), and no step runs twice.
#[test]
fn a_crash_at_every_checkpoint_around_a_compaction_resumes_to_the_same_transcript() {
    let (store, runs) = (Store::default(), Executions::default());
    let w = compacting_world(&store, &runs);
    w.prompt_text("run the steps");
    let transcript = normalized(&w.messages());
    let roles: Vec<String> = w.messages().iter().map(|m| m.str_at("role")).collect();
    let entries = roles.iter().filter(|r| *r == "compactionSummary").count();
    assert!(entries >= 2, "the run compacts at least twice: {roles:?}");
    let checkpoints = store.all();
    for k in 1..=checkpoints.len() {
        let (again, runs) = (Store::default(), Executions::default());
        let w = compacting_world(&again, &runs);
        let data = agent::parse_restore(&w.h, &TV::arr(checkpoints[..k].iter().map(TV::deep_clone).collect()))
            .unwrap_or_else(|e| panic!("restore: {}", w.h.error_message(&e)));
        let tools = w.st.get("tools");
        agent::apply_snapshot(&w.h, &w.agent, &w.st, &data, &tools)
            .unwrap_or_else(|e| panic!("{}", arg_error_text(&w.h, e)));
        let done: Vec<String> = w
            .messages()
            .iter()
            .filter(|m| m.get("role").as_str() == Some("toolResult"))
            .map(|m| m.str_at("toolCallId"))
            .collect();
        if !w.texts().iter().any(|t| t == "run the steps") {
            continue; // the crash came before the prompt was stored
        }
        resume(&w);
        assert_eq!(normalized(&w.messages()), transcript, "crash after checkpoint {k}");
        for id in runs.0.borrow().iter() {
            assert!(!done.contains(id), "crash after checkpoint {k}: {id} ran again");
        }
    }
}
