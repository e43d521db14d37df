//! D3 optional timeouts (tool execution, stream idle) and the D5 parallel limit.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use super::support::*;
use crate::core::host::Host;
use crate::core::test_host::{StreamStep, TV};
use futures::FutureExt;
use serde_json::json;
use std::cell::RefCell;
use std::rc::Rc;

/// `execute` that records its signal and resolves after `ms`, ignoring the signal.
fn recording_exec(ms: f64, signals: &Rc<RefCell<Vec<TV>>>) -> TV {
    let signals = signals.clone();
    TV::async_func(move |h, _this, args| {
        signals.borrow_mut().push(args[2].clone());
        let sleep = h.sleep(ms);
        async move {
            sleep.await;
            Ok(ok_result("finished"))
        }
        .boxed_local()
    })
}

#[test]
fn d3_1_a_tool_timeout_ends_the_call_with_the_exact_error_and_a_timeout_error_reason() {
    let w = World::with(vec![reply_calls(vec![call("c1", "slow", json!({}))]), reply("after")]);
    let (_controller, signal) = w.controller();
    let signals = Rc::new(RefCell::new(Vec::new()));
    let seen = Log::new();
    let s = seen.clone();
    let after = TV::func(move |_h, _this, args| {
        s.push(format!("{} {}", args[0].get("isError").js_string(), first_text(&args[0].get("result"))));
        Ok(TV::Undefined)
    });
    let result = w
        .exec(
            RunSpec::prompt(
                vec![user("go")],
                ctx_tools(vec![], vec![tool("slow", recording_exec(5000.0, &signals))]),
                config(&[("toolTimeoutMs", TV::num(1500.0)), ("afterToolCall", after)]),
            )
            .signal(&signal),
        )
        .unwrap();
    let end = w.end_of("c1");
    assert_eq!(first_text(&end.get("result")), "Tool \"slow\" timed out after 1.5 seconds");
    assert_eq!(end.get("isError").as_bool(), Some(true));
    assert_eq!(end.get("durationMs").as_num(), Some(1500.0));
    assert_eq!(seen.get(), strs(&["true Tool \"slow\" timed out after 1.5 seconds"]), "afterToolCall runs with it");
    let child = signals.borrow()[0].clone();
    assert!(!child.same(&signal), "execute gets a child signal");
    assert!(w.h.signal_aborted(&child));
    assert_eq!(child.path("reason.name").as_str(), Some("TimeoutError"));
    assert!(!w.h.signal_aborted(&signal), "the run goes on");
    assert_eq!(w.requests(), 2);
    assert_eq!(first_text(&result.items().pop().unwrap()), "after");
    assert_eq!(w.h.abort_listener_count(), 0);
    let n = w.rec.len();
    w.h.settle();
    assert_eq!(w.rec.len(), n, "the late result is ignored");
    assert_eq!(w.h.pending_timers(), 0);
}

#[test]
fn d3_1_tool_timeout_ms_wins_over_the_config_and_zero_means_none() {
    let signals = Rc::new(RefCell::new(Vec::new()));
    let long = tool_with("long", recording_exec(60_000.0, &signals), &[("timeoutMs", TV::num(30_000.0))]);
    let unbounded = tool_with("unbounded", recording_exec(50.0, &signals), &[("timeoutMs", TV::num(0.0))]);
    let w = World::with(vec![
        reply_calls(vec![call("c1", "long", json!({})), call("c2", "unbounded", json!({}))]),
        reply("after"),
    ]);
    let (_controller, signal) = w.controller();
    w.exec(
        RunSpec::prompt(
            vec![user("go")],
            ctx_tools(vec![], vec![long, unbounded]),
            config(&[("toolTimeoutMs", TV::num(10.0))]),
        )
        .signal(&signal),
    )
    .unwrap();
    assert_eq!(first_text(&w.end_of("c1").get("result")), "Tool \"long\" timed out after 30 seconds");
    assert_eq!(w.end_of("c1").get("durationMs").as_num(), Some(30_000.0));
    assert_eq!(first_text(&w.end_of("c2").get("result")), "finished");
    assert!(signals.borrow()[1].same(&signal), "without a timeout execute gets the run's signal itself");
    w.h.settle();
    assert_eq!(w.h.pending_timers(), 0);
}

#[test]
fn d3_1_the_child_signal_follows_the_runs_abort() {
    let w = World::with(vec![reply_calls(vec![call("c1", "t", json!({}))]), reply("never")]);
    let (controller, signal) = w.controller();
    w.h.abort_at(&controller, 10.0);
    let exec = TV::async_func(|h, _this, args| {
        let wait = h.wait_abort(&args[2]);
        async move {
            wait.await;
            Ok(ok_result("noticed"))
        }
        .boxed_local()
    });
    w.exec(
        RunSpec::prompt(
            vec![user("go")],
            ctx_tools(vec![], vec![tool("t", exec)]),
            config(&[("toolTimeoutMs", TV::num(1000.0))]),
        )
        .signal(&signal),
    )
    .unwrap();
    assert_eq!(first_text(&w.end_of("c1").get("result")), "noticed");
    assert_eq!(w.end_of("c1").get("durationMs").as_num(), Some(10.0));
    assert_eq!(w.h.now(), 10.0);
    w.assert_clean();
}

#[test]
fn d3_2_stream_idle_timeout_ends_the_message_keeping_the_partial() {
    let w = World::new();
    let h = &w.h;
    let partial = pending_copy(h, &assistant_message("kept text"));
    let stream = h.stream(vec![
        StreamStep::Event(event("start", &[("partial", partial.clone())])),
        StreamStep::Delay(60.0),
        StreamStep::Event(event("text_start", &[("contentIndex", TV::num(0.0)), ("partial", partial)])),
        StreamStep::Delay(500.0),
        StreamStep::Event(event("done", &[("reason", TV::str("stop")), ("message", assistant_message("never"))])),
    ]);
    let signals = Rc::new(RefCell::new(Vec::<TV>::new()));
    let (sg, source) = (signals.clone(), stream.source.clone());
    let stream_fn = TV::func(move |_h, _this, args| {
        sg.borrow_mut().push(args[2].get("signal"));
        Ok(source.clone())
    });
    let (finish, finished) = counter();
    let (_controller, signal) = w.controller();
    let result = w
        .exec(
            RunSpec::prompt(
                vec![user("go")],
                ctx(vec![]),
                config(&[("streamIdleTimeoutMs", TV::num(100.0)), ("finishTurn", finish)]),
            )
            .signal(&signal)
            .stream_fn(stream_fn),
        )
        .unwrap();
    let last = result.at(1);
    assert_eq!(last.str_at("stopReason"), "error");
    assert_eq!(last.str_at("errorMessage"), "Stream idle timeout: no event from the provider for 100 ms");
    assert_eq!(first_text(&last), "kept text", "the partial is kept");
    assert_eq!(w.h.now(), 160.0, "the timer restarted at the event at 60 ms");
    assert!(stream.return_called());
    let child = signals.borrow()[0].clone();
    assert!(!child.same(&signal), "streamFn gets a child signal");
    assert!(w.h.signal_aborted(&child) && !w.h.signal_aborted(&signal));
    assert_eq!(finished.get(), 1, "the hard exit path");
    assert_eq!(w.labels()[4..], strs(&["message_start:assistant", "message_end:assistant", "turn_end", "agent_end"]));
    assert_eq!(w.requests(), 0, "the faux provider was not used");
    w.h.settle();
    assert_eq!(w.h.pending_timers(), 0);
    assert_eq!(w.h.abort_listener_count(), 0);
}

#[test]
fn d3_2_a_stream_with_events_inside_the_idle_window_completes() {
    let w = World::with(vec![reply("a reasonably long streamed answer")]);
    w.faux.set_chunk_delay(60.0);
    let result = w.prompt(vec![user("go")], ctx(vec![]), config(&[("streamIdleTimeoutMs", TV::num(100.0))]));
    assert_eq!(first_text(&result.at(1)), "a reasonably long streamed answer");
    assert_eq!(result.at(1).str_at("stopReason"), "stop");
    w.assert_clean();
}

/// Tools logging their execution windows.
fn windowed(log: &Log, name: &'static str, ms: f64) -> TV {
    let log = log.clone();
    tool(
        name,
        TV::async_func(move |h, _this, _args| {
            log.push(format!("start:{name}@{}", h.now()));
            let (sleep, log, h) = (h.sleep(ms), log.clone(), h.clone());
            async move {
                sleep.await;
                log.push(format!("end:{name}@{}", h.now()));
                Ok(ok_result(name))
            }
            .boxed_local()
        }),
    )
}

#[test]
fn d5_1_max_parallel_tools_caps_concurrency_in_source_order() {
    let log = Log::new();
    let w = World::with(vec![
        reply_calls(vec![call("a", "ta", json!({})), call("b", "tb", json!({})), call("c", "tc", json!({}))]),
        reply("done"),
    ]);
    let tools = vec![windowed(&log, "ta", 30.0), windowed(&log, "tb", 10.0), windowed(&log, "tc", 10.0)];
    let result = w.prompt(vec![user("go")], ctx_tools(vec![], tools), config(&[("maxParallelTools", TV::num(2.0))]));
    assert_eq!(log.get(), strs(&["start:ta@0", "start:tb@0", "end:tb@10", "start:tc@10", "end:tc@20", "end:ta@30"]));
    let tool_part: Vec<String> = w.labels().into_iter().filter(|l| l.starts_with("tool_")).collect();
    assert_eq!(
        tool_part,
        strs(&[
            "tool_execution_start:a",
            "tool_execution_start:b",
            "tool_execution_start:c",
            "tool_execution_end:b",
            "tool_execution_end:c",
            "tool_execution_end:a",
        ])
    );
    let ids: Vec<String> = result
        .items()
        .iter()
        .filter(|m| m.get("role").as_str() == Some("toolResult"))
        .map(|m| m.str_at("toolCallId"))
        .collect();
    assert_eq!(ids, strs(&["a", "b", "c"]));
    assert_eq!(w.end_of("c").get("durationMs").as_num(), Some(10.0), "timed from its own start");
}

#[test]
fn d5_1_one_slot_keeps_the_parallel_event_layout() {
    let log = Log::new();
    let w = World::with(vec![reply_calls(vec![call("a", "ta", json!({})), call("b", "tb", json!({}))]), reply("done")]);
    w.prompt(
        vec![user("go")],
        ctx_tools(vec![], vec![windowed(&log, "ta", 20.0), windowed(&log, "tb", 5.0)]),
        config(&[("maxParallelTools", TV::num(1.0))]),
    );
    assert_eq!(log.get(), strs(&["start:ta@0", "end:ta@20", "start:tb@20", "end:tb@25"]));
    let tool_part: Vec<String> =
        w.labels().into_iter().filter(|l| l.starts_with("tool_") || l.ends_with(":toolResult")).collect();
    assert_eq!(
        tool_part,
        strs(&[
            "tool_execution_start:a",
            "tool_execution_start:b",
            "tool_execution_end:a",
            "tool_execution_end:b",
            "message_start:toolResult",
            "message_end:toolResult",
            "message_start:toolResult",
            "message_end:toolResult",
        ])
    );
}

#[test]
fn d5_1_d2_an_abort_while_calls_wait_for_a_slot_gives_them_operation_aborted() {
    let log = Log::new();
    let w = World::with(vec![
        reply_calls(vec![call("a", "ta", json!({})), call("b", "tb", json!({})), call("c", "tc", json!({}))]),
        reply("never"),
    ]);
    let (controller, signal) = w.controller();
    w.h.abort_at(&controller, 5.0);
    w.exec(
        RunSpec::prompt(
            vec![user("go")],
            ctx_tools(vec![], vec![windowed(&log, "ta", 10.0), windowed(&log, "tb", 10.0), windowed(&log, "tc", 10.0)]),
            config(&[("maxParallelTools", TV::num(1.0))]),
        )
        .signal(&signal),
    )
    .unwrap();
    assert_eq!(log.get(), strs(&["start:ta@0", "end:ta@10"]));
    assert_eq!(first_text(&w.end_of("a").get("result")), "ta");
    for id in ["b", "c"] {
        assert_eq!(first_text(&w.end_of(id).get("result")), "Operation aborted");
        assert!(!w.end_of(id).has_own("durationMs"));
    }
    assert_eq!(w.requests(), 1);
    w.assert_clean();
}
