//! The T- rules of §4: mode selection, the one-call pipeline, sequential and parallel batches,
//! truncation, terminate, updates, and `runToolCall` (`ToolEnv::run_call` + `outcome_object`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use super::support::*;
use crate::core::host::Host;
use crate::core::test_host::{TV, TestHost, faux_assistant, faux_usage};
use crate::core::tools::{Call, ToolEnv, outcome_object};
use futures::FutureExt;
use serde_json::json;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

const TRUNCATED_TAIL: &str = "was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments.";

fn truncated(name: &str) -> String {
    format!("Tool call \"{name}\" {TRUNCATED_TAIL}")
}

/// One prompt through the loop with these tools and replies (barrier sink).
fn run(replies: Vec<TV>, tools: Vec<TV>, extra: &[(&str, TV)]) -> (World, TV) {
    let w = World::with(replies);
    let result = w.prompt(vec![user("go")], ctx_tools(vec![], tools), config(extra));
    (w, result)
}

fn result_messages(result: &TV) -> Vec<TV> {
    result.items().into_iter().filter(|m| m.get("role").as_str() == Some("toolResult")).collect()
}

/// `(name, ms, extra tool fields)`.
type TimedSpec<'a> = (&'a str, f64, &'a [(&'a str, TV)]);

/// Tools logging `start:<name>:<id>` / `end:<name>:<id>` around a sleep.
fn timed_tools(specs: &[TimedSpec<'_>]) -> (Log, Vec<TV>) {
    let log = Log::new();
    let tools = specs
        .iter()
        .map(|(name, ms, extra)| {
            let (log, name_s, ms) = (log.clone(), name.to_string(), *ms);
            let exec = TV::async_func(move |h, _this, args| {
                let id = args[0].js_string();
                log.push(format!("start:{name_s}:{id}"));
                let (sleep, log, name_s) = (h.sleep(ms), log.clone(), name_s.clone());
                async move {
                    sleep.await;
                    log.push(format!("end:{name_s}:{id}"));
                    Ok(ok_result(&name_s))
                }
                .boxed_local()
            });
            tool_with(name, exec, extra)
        })
        .collect();
    (log, tools)
}

fn two_calls(a: &str, b: &str) -> Vec<TV> {
    vec![reply_calls(vec![call("1", a, json!({})), call("2", b, json!({}))]), reply("ok")]
}

// ---------------------------------------------------------------------------------------------
// T-4.1 batch and mode
// ---------------------------------------------------------------------------------------------

#[test]
fn t_4_1_2_tool_execution_other_than_sequential_is_parallel() {
    for mode in [
        TV::str("SEQUENTIAL"),
        TV::num(42.0),
        TV::str("parallel"),
        TV::obj(&[("weird", TV::Bool(true))]),
        TV::Undefined,
    ] {
        let (log, tools) = timed_tools(&[("a", 20.0, &[]), ("b", 5.0, &[])]);
        run(two_calls("a", "b"), tools, &[("toolExecution", mode.clone())]);
        assert_eq!(log.get(), strs(&["start:a:1", "start:b:2", "end:b:2", "end:a:1"]), "{mode:?}");
    }
}

#[test]
fn t_4_1_2_global_sequential_runs_one_at_a_time_and_cannot_be_overridden() {
    let parallel = [("executionMode", TV::str("parallel"))];
    let (log, tools) = timed_tools(&[("a", 15.0, &parallel), ("b", 1.0, &parallel)]);
    run(two_calls("a", "b"), tools, &[("toolExecution", TV::str("sequential"))]);
    assert_eq!(log.get(), strs(&["start:a:1", "end:a:1", "start:b:2", "end:b:2"]));
}

#[test]
fn t_4_1_2_one_sequential_tool_makes_the_whole_batch_sequential() {
    let (log, tools) = timed_tools(&[
        ("slow", 25.0, &[("executionMode", TV::str("sequential"))]),
        ("fast", 1.0, &[("executionMode", TV::str("parallel"))]),
    ]);
    let (w, result) = run(two_calls("slow", "fast"), tools, &[]);
    assert_eq!(log.get(), strs(&["start:slow:1", "end:slow:1", "start:fast:2", "end:fast:2"]));
    let ids: Vec<String> = result_messages(&result).iter().map(|m| m.str_at("toolCallId")).collect();
    assert_eq!(ids, strs(&["1", "2"]));
    assert_eq!(w.h.now(), 26.0);
}

#[test]
fn t_4_1_2_all_parallel_tools_overlap() {
    let parallel = [("executionMode", TV::str("parallel"))];
    let (log, tools) = timed_tools(&[("p1", 20.0, &parallel), ("p2", 5.0, &parallel)]);
    let (w, _) = run(two_calls("p1", "p2"), tools, &[]);
    assert_eq!(log.get(), strs(&["start:p1:1", "start:p2:2", "end:p2:2", "end:p1:1"]));
    assert_eq!(w.h.now(), 20.0);
}

#[test]
fn t_4_1_1_a_batch_is_the_tool_calls_in_content_order() {
    let content = vec![
        call("x", "t", json!({})),
        text("between"),
        call("y", "t", json!({})),
        crate::core::test_host::faux_thinking("hm"),
    ];
    let (w, _) = run(vec![faux_assistant(content, "toolUse"), reply("ok")], vec![tool("t", exec_ok("t"))], &[]);
    let starts: Vec<String> = w.events("tool_execution_start").iter().map(|e| e.str_at("toolCallId")).collect();
    assert_eq!(starts, strs(&["x", "y"]));
}

// ---------------------------------------------------------------------------------------------
// §4.2 one call
// ---------------------------------------------------------------------------------------------

#[test]
fn t_4_2_step_1_an_aborted_signal_gives_operation_aborted_without_hooks() {
    let w = World::with(vec![
        reply_calls(vec![
            call("c1", "first", json!({})),
            call("c2", "second", json!({})),
            call("c3", "second", json!({})),
        ]),
        reply("x"),
    ]);
    let (controller, signal) = w.controller();
    let executed = Count::new();
    let e1 = executed.clone();
    let first = tool(
        "first",
        TV::func(move |h, _this, _args| {
            e1.bump();
            h.abort(&controller, &TV::Undefined);
            Ok(ok_result("first done"))
        }),
    );
    let e2 = executed.clone();
    let second = tool(
        "second",
        TV::func(move |_h, _this, _args| {
            e2.bump();
            Ok(ok_result("x"))
        }),
    );
    let (before, hooks) = counter();
    w.exec(
        RunSpec::prompt(
            vec![user("go")],
            ctx_tools(vec![], vec![first, second]),
            config(&[("toolExecution", TV::str("sequential")), ("beforeToolCall", before)]),
        )
        .signal(&signal),
    )
    .unwrap();
    assert_eq!((executed.get(), hooks.get()), (1, 1));
    let ends: Vec<(String, String, bool)> = w
        .events("tool_execution_end")
        .iter()
        .map(|e| (e.str_at("toolCallId"), first_text(&e.get("result")), e.get("isError").as_bool().unwrap()))
        .collect();
    assert_eq!(
        ends,
        vec![
            ("c1".to_string(), "first done".to_string(), false),
            ("c2".to_string(), "Operation aborted".to_string(), true),
            ("c3".to_string(), "Operation aborted".to_string(), true),
        ]
    );
    assert!(!w.end_of("c2").has_own("durationMs"));
    assert_eq!(w.requests(), 1);
    assert_eq!(w.rec.types().last().map(String::as_str), Some("agent_end"));
}

#[test]
fn t_4_2_step_2_first_tool_of_a_name_wins_and_missing_tools_are_not_found() {
    let calls = Log::new();
    let (c1, c2) = (calls.clone(), calls.clone());
    let first = tool(
        "dup",
        TV::func(move |_h, _this, _args| {
            c1.push("first");
            Ok(ok_result("first"))
        }),
    );
    let second = tool(
        "dup",
        TV::func(move |_h, _this, _args| {
            c2.push("second");
            Ok(ok_result("second"))
        }),
    );
    let (w, result) = run(
        vec![reply_calls(vec![call("1", "dup", json!({})), call("2", "nope", json!({}))]), reply("ok")],
        vec![first, second],
        &[],
    );
    assert_eq!(calls.get(), strs(&["first"]));
    assert_eq!(first_text(&w.end_of("2").get("result")), "Tool nope not found");
    assert_eq!(result_messages(&result)[1].get("toolName").as_str(), Some("nope"));
}

#[test]
fn t_4_2_step_3_prepare_arguments_feeds_validation_and_execute_only() {
    let received = Rc::new(RefCell::new(TV::Undefined));
    let r = received.clone();
    let prepare_this = Rc::new(RefCell::new(TV::Undefined));
    let pt = prepare_this.clone();
    let schema = json!({
        "type": "object",
        "properties": {"edits": {"type": "array", "items": {"type": "object",
            "properties": {"oldText": {"type": "string"}, "newText": {"type": "string"}}, "required": ["oldText", "newText"]}}},
        "required": ["edits"]
    });
    let edit = tool_with(
        "edit",
        TV::func(move |_h, _this, args| {
            r.replace(args[1].clone());
            Ok(ok_result("ok"))
        }),
        &[
            ("parameters", TV::from_json(&schema)),
            (
                "prepareArguments",
                TV::func(move |_h, this, args| {
                    pt.replace(this.clone());
                    let a = &args[0];
                    Ok(TV::from_json(
                        &json!({"edits": [{"oldText": a.get("oldText").js_string(), "newText": a.get("newText").js_string()}]}),
                    ))
                }),
            ),
        ],
    );
    let hook_seen = Rc::new(RefCell::new(Vec::<TV>::new()));
    let hs = hook_seen.clone();
    let before = TV::func(move |_h, _this, args| {
        hs.borrow_mut().push(args[0].get("args"));
        hs.borrow_mut().push(args[0].get("toolCall"));
        Ok(TV::Undefined)
    });
    let raw = call("c1", "edit", json!({"oldText": "a", "newText": "b"}));
    let (w, result) = run(vec![reply_calls(vec![raw]), reply("ok")], vec![edit.clone()], &[("beforeToolCall", before)]);
    assert_eq!(received.borrow().to_json(), json!({"edits": [{"oldText": "a", "newText": "b"}]}));
    assert!(prepare_this.borrow().same(&edit), "prepareArguments is called on the tool");
    let seen = hook_seen.borrow();
    assert_eq!(seen[0].to_json(), json!({"edits": [{"oldText": "a", "newText": "b"}]}));
    assert_eq!(
        seen[1].get("arguments").to_json(),
        json!({"oldText": "a", "newText": "b"}),
        "hooks keep the original call"
    );
    assert!(seen[1].same(&result.at(2).get("content").at(0)), "the very block of the assistant message");
    assert_eq!(w.events("tool_execution_start")[0].get("args").to_json(), json!({"oldText": "a", "newText": "b"}));
    assert_eq!(w.end_of("c1").get("isError").as_bool(), Some(false));
}

#[test]
fn t_4_2_step_3_prepare_arguments_returning_the_same_object_keeps_the_original() {
    let received = Rc::new(RefCell::new(TV::Undefined));
    let r = received.clone();
    let t = tool_with(
        "t",
        TV::func(move |_h, _this, args| {
            r.replace(args[1].clone());
            Ok(ok_result("ok"))
        }),
        &[
            ("parameters", TV::from_json(&json!({"type": "object", "properties": {"n": {"type": "integer"}}}))),
            ("prepareArguments", TV::func(|_h, _this, args| Ok(args[0].clone()))),
        ],
    );
    let (w, result) = run(vec![reply_calls(vec![call("c1", "t", json!({"n": "5"}))]), reply("ok")], vec![t], &[]);
    assert_eq!(received.borrow().to_json(), json!({"n": 5}), "validated (coerced) copy");
    let stored = result.at(2).get("content").at(0).get("arguments");
    assert!(!received.borrow().same(&stored), "execute gets a copy");
    assert_eq!(stored.to_json(), json!({"n": "5"}), "the transcript is never modified");
    assert_eq!(w.end_of("c1").get("isError").as_bool(), Some(false));
}

#[test]
fn t_4_2_step_3_prepare_validation_and_hook_throws_become_immediate_error_results() {
    let (exec, executed) = counted(|_, _| Ok(ok_result("x")));
    let prep = tool_with(
        "prep",
        exec.clone(),
        &[("prepareArguments", TV::func(|_h, _this, _args| Err(TV::error("cannot prepare"))))],
    );
    let typed = tool_with(
        "typed",
        exec.clone(),
        &[
            (
                "parameters",
                TV::from_json(&json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})),
            ),
            (
                "prepareArguments",
                TV::func(|h, _this, args| {
                    let copy = h.shallow_copy(&args[0])?;
                    copy.set("prepared", TV::Bool(true));
                    Ok(copy)
                }),
            ),
        ],
    );
    let hooked = tool("hooked", exec);
    let before = TV::func(|_h, _this, args| {
        if args[0].path("toolCall.name").as_str() == Some("hooked") {
            return Err(TV::error("hook failed"));
        }
        Ok(TV::Undefined)
    });
    let (after, after_calls) = counter();
    let (w, _) = run(
        vec![
            reply_calls(vec![
                call("1", "prep", json!({})),
                call("2", "typed", json!({"n": "x"})),
                call("3", "hooked", json!({})),
            ]),
            reply("ok"),
        ],
        vec![prep, typed, hooked],
        &[("beforeToolCall", before), ("afterToolCall", after)],
    );
    assert_eq!((executed.get(), after_calls.get()), (0, 0));
    assert_eq!(first_text(&w.end_of("1").get("result")), "cannot prepare");
    assert_eq!(
        first_text(&w.end_of("2").get("result")),
        "Validation failed for tool \"typed\":\n  - n: expected integer, got string\n\nReceived arguments:\n{\n  \"n\": \"x\",\n  \"prepared\": true\n}"
    );
    assert_eq!(first_text(&w.end_of("3").get("result")), "hook failed");
    for e in w.events("tool_execution_end") {
        assert_eq!(e.get("isError").as_bool(), Some(true));
        assert!(!e.has_own("durationMs"));
        assert_eq!(e.get("result").get("details").to_json(), json!({}));
    }
}

#[test]
fn t_4_2_step_3_before_tool_call_context_signal_and_this() {
    let w = World::with(vec![reply_calls(vec![call("c1", "t", json!({"v": "x"}))]), reply("ok")]);
    let seen = Rc::new(RefCell::new(Vec::<TV>::new()));
    let s = seen.clone();
    let cfg = config(&[]);
    let before = TV::func(move |_h, this, args| {
        s.borrow_mut().extend([this.clone(), args[0].clone(), args[1].clone()]);
        Ok(TV::Undefined)
    });
    cfg.set("beforeToolCall", before);
    let (_c, signal) = w.controller();
    let context = ctx_tools(vec![], vec![tool("t", exec_ok("x"))]);
    let result = w.exec(RunSpec::prompt(vec![user("go")], context, cfg.clone()).signal(&signal)).unwrap();
    let seen = seen.borrow();
    assert!(seen[0].same(&cfg), "this = the loop config");
    let ctx_arg = &seen[1];
    assert_eq!(ctx_arg.keys(), strs(&["assistantMessage", "toolCall", "args", "context"]));
    assert!(ctx_arg.get("assistantMessage").same(&result.at(2)));
    assert!(ctx_arg.get("toolCall").same(&result.at(2).get("content").at(0)));
    assert_eq!(ctx_arg.get("args").to_json(), json!({"v": "x"}));
    assert_eq!(roles(&ctx_arg.path("context.messages")).last().map(String::as_str), Some("assistant"));
    assert!(seen[2].same(&signal));
}

#[test]
fn t_4_2_step_3_block_texts_and_terminate_flag() {
    let (exec, executed) = counted(|_, _| Ok(ok_result("ran")));
    let before = TV::func(|_h, _this, args| {
        let stop = args[0].path("args.stop").as_num().unwrap_or(0.0);
        Ok(match stop as i64 {
            1 => TV::obj(&[("block", TV::Bool(true))]),
            2 => TV::obj(&[("block", TV::Bool(true)), ("reason", TV::str(""))]),
            3 => TV::obj(&[
                ("block", TV::Bool(true)),
                ("reason", TV::str("Blocked by policy")),
                ("terminate", TV::str("yes")),
            ]),
            4 => TV::obj(&[("block", TV::num(1.0)), ("reason", TV::num(7.0))]),
            5 => TV::obj(&[("block", TV::Bool(false)), ("reason", TV::str("not blocking"))]),
            _ => TV::Undefined,
        })
    });
    let (w, result) = run(
        vec![reply_calls((1..=5).map(|i| call(&format!("c{i}"), "t", json!({"stop": i}))).collect()), reply("ok")],
        vec![tool("t", exec)],
        &[("beforeToolCall", before)],
    );
    assert_eq!(executed.get(), 1, "only the non-blocking decision runs");
    let texts: Vec<String> = (1..=4).map(|i| first_text(&w.end_of(&format!("c{i}")).get("result"))).collect();
    assert_eq!(texts, strs(&["Tool execution was blocked", "Tool execution was blocked", "Blocked by policy", "7"]));
    assert!(!w.end_of("c3").get("result").has_own("terminate"), "terminate must be === true");
    assert_eq!(first_text(&w.end_of("c5").get("result")), "ran");
    assert_eq!(w.requests(), 2);
    assert!(result_messages(&result).iter().all(|m| !m.has_own("terminate")));
}

#[test]
fn t_4_2_step_3_before_tool_call_mutating_args_reaches_execute_without_revalidation() {
    let received = Rc::new(RefCell::new(TV::Undefined));
    let r = received.clone();
    let t = tool_with(
        "set",
        TV::func(move |_h, _this, args| {
            r.replace(args[1].clone());
            Ok(ok_result("ok"))
        }),
        &[("parameters", TV::from_json(&json!({"type": "object", "properties": {"value": {"type": "string"}}})))],
    );
    let before = TV::async_func(|_h, _this, args| {
        args[0].get("args").set("value", TV::num(123.0));
        futures::future::ready(Ok(TV::Undefined)).boxed_local()
    });
    let (w, _) = run(
        vec![reply_calls(vec![call("c1", "set", json!({"value": "x"}))]), reply("done")],
        vec![t],
        &[("beforeToolCall", before)],
    );
    assert_eq!(received.borrow().to_json(), json!({"value": 123}));
    assert_eq!(w.events("tool_execution_start")[0].get("args").to_json(), json!({"value": "x"}));
    assert_eq!(w.end_of("c1").get("isError").as_bool(), Some(false));
}

#[test]
fn t_4_2_step_4_execute_arguments_this_and_duration_of_execute_alone() {
    let got = Rc::new(RefCell::new(Vec::<TV>::new()));
    let g = got.clone();
    let exec = TV::async_func(move |h, this, args| {
        g.borrow_mut().push(this.clone());
        g.borrow_mut().extend(args.iter().cloned());
        let sleep = h.sleep(10.0);
        async move {
            sleep.await;
            Ok(ok_result_with("x", &[("isError", TV::str("yes"))]))
        }
        .boxed_local()
    });
    let t = tool_with(
        "t",
        exec,
        &[("parameters", TV::from_json(&json!({"type": "object", "properties": {"n": {"type": "integer"}}})))],
    );
    let slow_hook = TV::async_func(|h, _this, _args| {
        let sleep = h.sleep(60.0);
        async move {
            sleep.await;
            Ok(TV::Undefined)
        }
        .boxed_local()
    });
    let w = World::with(vec![reply_calls(vec![call("c1", "t", json!({"n": "5"}))]), reply("ok")]);
    let (_c, signal) = w.controller();
    let result = w
        .exec(
            RunSpec::prompt(
                vec![user("go")],
                ctx_tools(vec![], vec![t.clone()]),
                config(&[("beforeToolCall", slow_hook.clone()), ("afterToolCall", slow_hook)]),
            )
            .signal(&signal),
        )
        .unwrap();
    let got = got.borrow();
    assert!(got[0].same(&t), "execute is called on the tool");
    assert_eq!(got[1].as_str(), Some("c1"));
    assert_eq!(got[2].to_json(), json!({"n": 5}));
    assert!(got[3].same(&signal));
    assert!(got[4].is_func());
    let end = w.end_of("c1");
    assert_eq!(end.get("durationMs").as_num(), Some(10.0), "hooks are not timed");
    assert_eq!(end.get("isError").as_bool(), Some(false), "only isError === true counts");
    assert_eq!(end.path("result.isError").as_str(), Some("yes"));
    assert_eq!(result_messages(&result)[0].get("durationMs").as_num(), Some(10.0));
    assert_eq!(w.h.now(), 130.0);
}

#[test]
fn t_4_2_step_4_is_error_true_marks_the_result() {
    let (w, result) = run(
        vec![reply_calls(vec![call("c1", "e", json!({}))]), reply("ok")],
        vec![tool("e", TV::func(|_h, _this, _args| Ok(ok_result_with("e", &[("isError", TV::Bool(true))]))))],
        &[],
    );
    assert_eq!(w.end_of("c1").get("isError").as_bool(), Some(true));
    assert_eq!(result_messages(&result)[0].get("isError").as_bool(), Some(true));
}

#[test]
fn t_4_2_step_4_a_throwing_execute_becomes_an_error_result_after_tool_call_still_runs() {
    let seen = Rc::new(RefCell::new(Vec::<TV>::new()));
    let s = seen.clone();
    let after = TV::func(move |_h, _this, args| {
        s.borrow_mut().push(args[0].clone());
        Ok(TV::Undefined)
    });
    let (w, result) = run(
        vec![reply_calls(vec![call("c1", "t", json!({}))]), reply("ok")],
        vec![tool("t", exec_after_throw(7.0, TV::error("disk full")))],
        &[("afterToolCall", after)],
    );
    let seen = seen.borrow();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].keys(), strs(&["assistantMessage", "toolCall", "args", "result", "isError", "context"]));
    assert_eq!(seen[0].get("isError").as_bool(), Some(true));
    assert_eq!(
        seen[0].get("result").to_json(),
        json!({"content": [{"type": "text", "text": "disk full"}], "details": {}})
    );
    let end = w.end_of("c1");
    assert_eq!(end.get("isError").as_bool(), Some(true));
    assert_eq!(end.get("result").to_json(), json!({"content": [{"type": "text", "text": "disk full"}], "details": {}}));
    assert_eq!(end.get("durationMs").as_num(), Some(7.0));
    assert_eq!(result_messages(&result)[0].get("durationMs").as_num(), Some(7.0));
}

fn exec_after_throw(ms: f64, thrown: TV) -> TV {
    TV::async_func(move |h, _this, _args| {
        let sleep = h.sleep(ms);
        let thrown = thrown.clone();
        async move {
            sleep.await;
            Err(thrown)
        }
        .boxed_local()
    })
}

#[test]
fn t_4_2_e_8_3_1_thrown_values_become_the_message() {
    let cases = [
        (TV::str("plain string"), "plain string"),
        (TV::num(42.0), "42"),
        (TV::obj(&[("reason", TV::str("x"))]), "[object Object]"),
        (TV::obj(&[("message", TV::str("only message"))]), "[object Object]"),
        (TV::type_error("typed"), "typed"),
        (TV::Undefined, "undefined"),
        (TV::Null, "null"),
        (TV::obj(&[("name", TV::str("CustomError")), ("message", TV::str("custom message"))]), "custom message"),
    ];
    let n = cases.len();
    let tools: Vec<TV> =
        cases.iter().enumerate().map(|(i, (v, _))| tool(&format!("t{i}"), exec_throw(v.clone()))).collect();
    let calls: Vec<TV> = (0..n).map(|i| call(&format!("c{i}"), &format!("t{i}"), json!({}))).collect();
    let (w, _) = run(vec![reply_calls(calls), reply("ok")], tools, &[]);
    for (i, (_, expected)) in cases.iter().enumerate() {
        let end = w.end_of(&format!("c{i}"));
        assert_eq!(first_text(&end.get("result")), *expected);
        assert_eq!(end.get("isError").as_bool(), Some(true));
    }
}

#[test]
fn t_4_2_e_8_2_1_a_non_object_execute_result_is_an_error_result() {
    for value in [TV::Undefined, TV::Null, TV::str("a string"), TV::num(42.0), TV::Bool(true)] {
        let after_seen = Log::new();
        let a = after_seen.clone();
        let after = TV::func(move |_h, _this, args| {
            a.push(args[0].get("isError").js_string());
            Ok(TV::Undefined)
        });
        let v = value.clone();
        let (w, result) = run(
            vec![reply_calls(vec![call("c1", "weird", json!({}))]), reply("done")],
            vec![tool("weird", TV::func(move |_h, _this, _args| Ok(v.clone())))],
            &[("afterToolCall", after)],
        );
        let end = w.end_of("c1");
        assert_eq!(end.get("isError").as_bool(), Some(true), "{value:?}");
        assert_eq!(
            end.get("result").to_json(),
            json!({"content": [{"type": "text", "text": "Tool \"weird\" returned an invalid result: expected an object"}], "details": {}})
        );
        assert_eq!(end.get("durationMs").as_num(), Some(0.0));
        assert_eq!(after_seen.get(), strs(&["true"]));
        let tr = &result_messages(&result)[0];
        assert_eq!(tr.get("isError").as_bool(), Some(true));
        assert_eq!(tr.get("durationMs").as_num(), Some(0.0));
    }
}

#[test]
fn t_4_2_a_throwing_is_error_getter_counts_as_an_execute_throw() {
    let exec = TV::func(|_h, _this, _args| {
        let r = ok_result("x");
        r.throwing_getter("isError", TV::error("getter exploded"));
        Ok(r)
    });
    let (w, _) = run(vec![reply_calls(vec![call("c1", "t", json!({}))]), reply("ok")], vec![tool("t", exec)], &[]);
    let end = w.end_of("c1");
    assert_eq!(end.get("isError").as_bool(), Some(true));
    assert_eq!(first_text(&end.get("result")), "getter exploded");
}

#[test]
fn t_4_2_e_8_2_a_throwing_result_getter_gives_an_error_result_and_reaches_no_event() {
    // Issue 14.3: reading the result is part of execute, for every field the pipeline reads.
    for key in ["content", "details", "usage", "terminate", "structuredContent"] {
        let exec = TV::func(move |_h, _this, _args| {
            let r = ok_result("x");
            r.throwing_getter(key, TV::error(&format!("{key} getter exploded")));
            Ok(r)
        });
        let (w, result) =
            run(vec![reply_calls(vec![call("c1", "t", json!({}))]), reply("ok")], vec![tool("t", exec)], &[]);
        let end = w.end_of("c1");
        assert_eq!(end.get("isError").as_bool(), Some(true), "{key}");
        let expected = json!({"content": [{"type": "text", "text": format!("{key} getter exploded")}], "details": {}});
        assert_eq!(end.get("result").to_json(), expected, "{key}");
        let tr = &result_messages(&result)[0];
        assert_eq!(tr.get("isError").as_bool(), Some(true), "{key}");
        assert_eq!(first_text(tr), format!("{key} getter exploded"));
    }
}

#[test]
fn t_4_2_step_5_after_tool_call_sees_usage_and_its_override_replaces_it() {
    let mut usage = faux_usage().to_json();
    usage["input"] = json!(5);
    usage["totalTokens"] = json!(5);
    let mut over = faux_usage().to_json();
    over["output"] = json!(9);
    over["totalTokens"] = json!(9);
    let (tool_usage, override_usage) = (TV::from_json(&usage), TV::from_json(&over));
    let tu = tool_usage.clone();
    let echo = tool_with(
        "echo",
        TV::func(move |_h, _this, args| {
            Ok(ok_result_with(
                &format!("echo {}", args[1].get("v").js_string()),
                &[("details", TV::obj(&[("n", TV::num(1.0))])), ("usage", tu.clone())],
            ))
        }),
        &[(
            "parameters",
            TV::from_json(&json!({"type": "object", "properties": {"v": {"type": "string"}}, "required": ["v"]})),
        )],
    );
    let seen = Log::new();
    let (s, ou) = (seen.clone(), override_usage.clone());
    let after = TV::func(move |h, _this, args| {
        let c = &args[0];
        s.push(format!(
            "{} {} {} {}",
            json(h, &c.path("result.usage")),
            c.get("isError").js_string(),
            json(h, &c.get("args")),
            c.path("toolCall.id").js_string()
        ));
        Ok(TV::obj(&[("usage", ou.clone())]))
    });
    let (w, result) = run(
        vec![reply_calls(vec![call("tool-1", "echo", json!({"v": "hi"}))]), reply("done")],
        vec![echo],
        &[("afterToolCall", after)],
    );
    assert_eq!(seen.get(), vec![format!("{} false {{\"v\":\"hi\"}} tool-1", serde_json::to_string(&usage).unwrap())]);
    let tr = &result_messages(&result)[0];
    assert!(tr.get("usage").same(&override_usage));
    assert!(w.end_of("tool-1").path("result.usage").same(&override_usage));
    assert_eq!(first_text(tr), "echo hi");
    assert_eq!(tr.get("details").to_json(), json!({"n": 1}));
    assert_eq!(
        w.events("tool_execution_start")[0].to_json(),
        json!({"type": "tool_execution_start", "toolCallId": "tool-1", "toolName": "echo", "args": {"v": "hi"}})
    );
}

#[test]
fn s_2_5_2_after_tool_call_merge_rules() {
    let own = TV::from_json(
        &json!({"content": [{"type": "text", "text": "orig"}], "details": {"d": 1}, "structuredContent": {"s": 1}, "terminate": true}),
    );
    type Check = Box<dyn Fn(&TV, &TV, &TV)>;
    let cases: Vec<(TV, Check)> = vec![
        (
            TV::Undefined,
            Box::new(|r: &TV, is_error: &TV, own: &TV| {
                assert!(r.same(own), "no object: the tool's own result object");
                assert_eq!(is_error.as_bool(), Some(false));
            }),
        ),
        (
            TV::str("not an object"),
            Box::new(|r: &TV, _: &TV, own: &TV| assert!(r.same(own), "non-objects are ignored")),
        ),
        (
            TV::from_json(&json!({"details": {"d": 2}, "isError": true, "terminate": false})),
            Box::new(|r: &TV, is_error: &TV, own: &TV| {
                assert!(!r.same(own));
                assert_eq!(
                    r.to_json(),
                    json!({"content": [{"type": "text", "text": "orig"}], "details": {"d": 2}, "structuredContent": {"s": 1}, "terminate": false})
                );
                assert_eq!(r.keys(), strs(&["content", "details", "structuredContent", "terminate", "usage"]));
                assert_eq!(is_error.as_bool(), Some(true));
            }),
        ),
        (
            TV::from_json(
                &json!({"content": null, "details": null, "usage": null, "structuredContent": null, "isError": null, "terminate": null}),
            ),
            Box::new(|r: &TV, is_error: &TV, _: &TV| {
                assert_eq!(
                    r.to_json(),
                    json!({"content": [{"type": "text", "text": "orig"}], "details": {"d": 1}, "structuredContent": {"s": 1}, "terminate": true})
                );
                assert_eq!(is_error.as_bool(), Some(false));
            }),
        ),
        (
            TV::from_json(&json!({"content": [{"type": "text", "text": "new"}], "structuredContent": {"s": 2}})),
            Box::new(|r: &TV, _: &TV, _: &TV| {
                assert_eq!(r.get("content").to_json(), json!([{"type": "text", "text": "new"}]));
                assert_eq!(r.get("structuredContent").to_json(), json!({"s": 2}));
            }),
        ),
        (
            TV::from_json(&json!({"content": [{"type": "text", "text": "new"}]})),
            Box::new(|r: &TV, _: &TV, _: &TV| {
                assert_eq!(r.get("content").to_json(), json!([{"type": "text", "text": "new"}]));
                assert!(!r.has_own("structuredContent"), "content without structuredContent removes it");
                assert_eq!(r.get("details").to_json(), json!({"d": 1}));
            }),
        ),
        (
            TV::obj(&[("isError", TV::str("sure"))]),
            Box::new(|_: &TV, is_error: &TV, _: &TV| assert_eq!(is_error.as_str(), Some("sure"), "kept as given")),
        ),
    ];
    for (ret, check) in cases {
        let own2 = own.clone();
        let r = ret.clone();
        let (w, _) = run(
            vec![reply_calls(vec![call("c1", "t", json!({}))]), reply("ok"), reply("ok")],
            vec![tool("t", TV::func(move |_h, _this, _args| Ok(own2.clone())))],
            &[("afterToolCall", TV::func(move |_h, _this, _args| Ok(r.clone())))],
        );
        let end = w.end_of("c1");
        check(&end.get("result"), &end.get("isError"), &own);
    }
    assert_eq!(
        own.to_json(),
        json!({"content": [{"type": "text", "text": "orig"}], "details": {"d": 1}, "structuredContent": {"s": 1}, "terminate": true}),
        "the tool's object is never mutated"
    );
}

#[test]
fn t_4_2_step_5_after_tool_call_throwing_loses_terminate_keeps_duration() {
    let t = tool("t", exec_after(3.0, ok_result_with("fine", &[("terminate", TV::Bool(true))])));
    let (w, _) = run(
        vec![reply_calls(vec![call("c1", "t", json!({}))]), reply("ok")],
        vec![t],
        &[("afterToolCall", TV::func(|_h, _this, _args| Err(TV::error("after failed"))))],
    );
    let end = w.end_of("c1");
    assert_eq!(end.get("isError").as_bool(), Some(true));
    assert_eq!(
        end.get("result").to_json(),
        json!({"content": [{"type": "text", "text": "after failed"}], "details": {}})
    );
    assert_eq!(end.get("durationMs").as_num(), Some(3.0));
    assert_eq!(w.requests(), 2, "terminate was lost");
}

#[test]
fn s_2_1_1_structured_content_and_terminate_never_reach_the_tool_result_message() {
    let t = tool(
        "t",
        TV::func(|_h, _this, _args| {
            Ok(ok_result_with(
                "x",
                &[("structuredContent", TV::obj(&[("k", TV::num(1.0))])), ("terminate", TV::Bool(true))],
            ))
        }),
    );
    let (w, result) = run(vec![reply_calls(vec![call("c1", "t", json!({}))]), reply("never")], vec![t], &[]);
    let end = w.end_of("c1");
    assert_eq!(end.path("result.structuredContent").to_json(), json!({"k": 1}));
    assert_eq!(end.path("result.terminate").as_bool(), Some(true));
    let tr = &result_messages(&result)[0];
    assert!(!tr.has_own("structuredContent") && !tr.has_own("terminate"));
}

#[test]
fn t_4_2_step_6_tool_result_message_shape_and_key_order() {
    let mut u = faux_usage().to_json();
    u["input"] = json!(1);
    let usage = TV::from_json(&u);
    let us = usage.clone();
    let with_usage = tool(
        "u",
        TV::func(move |_h, _this, _args| {
            Ok(ok_result_with("u", &[("details", TV::obj(&[("a", TV::num(1.0))])), ("usage", us.clone())]))
        }),
    );
    let no_content =
        tool("n", TV::func(|_h, _this, _args| Ok(TV::obj(&[("details", TV::obj(&[("b", TV::num(2.0))]))]))));
    let (w, result) = run(
        vec![
            reply_calls(vec![call("c1", "u", json!({})), call("c2", "n", json!({})), call("c3", "missing", json!({}))]),
            reply("ok"),
        ],
        vec![with_usage, no_content],
        &[],
    );
    let trs = result_messages(&result);
    let keys = |m: &TV| -> Vec<String> { w.h.json_parse(&json(&w.h, m)).unwrap().keys() };
    assert_eq!(
        keys(&trs[0]),
        strs(&["role", "toolCallId", "toolName", "content", "details", "usage", "isError", "durationMs", "timestamp"])
    );
    assert!(trs[0].get("usage").same(&usage));
    assert_eq!(
        keys(&trs[1]),
        strs(&["role", "toolCallId", "toolName", "content", "details", "isError", "durationMs", "timestamp"])
    );
    assert_eq!(trs[1].get("content").len(), 0);
    assert!(trs[1].has_own("usage") && trs[1].get("usage").is_undefined(), "absent fields are undefined, not null");
    assert_eq!(
        json(&w.h, &trs[2]),
        r#"{"role":"toolResult","toolCallId":"c3","toolName":"missing","content":[{"type":"text","text":"Tool missing not found"}],"details":{},"isError":true,"timestamp":1700000000000}"#
    );
}

// ---------------------------------------------------------------------------------------------
// T-4.4 sequential, T-4.5 parallel
// ---------------------------------------------------------------------------------------------

/// `execute` that sends one update, sleeps `ms`, then resolves with its id.
fn exec_updating(ms: f64) -> TV {
    TV::async_func(move |h, _this, args| {
        let (id, on_update) = (args[0].js_string(), args[3].clone());
        let _ = h.call_sync(&on_update, &TV::Undefined, &[ok_result(&format!("progress {id}"))]);
        let sleep = h.sleep(ms);
        async move {
            sleep.await;
            Ok(ok_result(&id))
        }
        .boxed_local()
    })
}

#[test]
fn t_4_4_1_sequential_start_update_end_result_pair_per_call() {
    let (w, _) = run(
        vec![reply_calls(vec![call("c1", "t", json!({})), call("c2", "t", json!({}))]), reply("ok")],
        vec![tool("t", exec_updating(2.0))],
        &[("toolExecution", TV::str("sequential"))],
    );
    let tail: Vec<String> =
        w.all_labels().into_iter().filter(|l| l.starts_with("tool_") || l.ends_with(":toolResult")).collect();
    assert_eq!(
        tail,
        strs(&[
            "tool_execution_start:c1",
            "tool_execution_update:c1",
            "tool_execution_end:c1",
            "message_start:toolResult",
            "message_end:toolResult",
            "tool_execution_start:c2",
            "tool_execution_update:c2",
            "tool_execution_end:c2",
            "message_start:toolResult",
            "message_end:toolResult",
        ])
    );
}

#[test]
fn t_4_5_1_preflight_every_start_and_before_tool_call_precede_any_execute() {
    let order = Log::new();
    let exec = |ms: f64| {
        let o = order.clone();
        TV::async_func(move |h, _this, args| {
            let id = args[0].js_string();
            o.push(format!("execute:{id}"));
            let sleep = h.sleep(ms);
            async move {
                sleep.await;
                Ok(ok_result(&id))
            }
            .boxed_local()
        })
    };
    let o = order.clone();
    let before = TV::async_func(move |h, _this, args| {
        let (sleep, o, id) = (h.sleep(2.0), o.clone(), args[0].path("toolCall.id").js_string());
        async move {
            sleep.await;
            o.push(format!("before:{id}"));
            Ok(TV::Undefined)
        }
        .boxed_local()
    });
    let o = order.clone();
    let sink = TV::func(move |_h, _this, args| {
        let e = &args[0];
        let kind = e.str_at("type");
        if kind.starts_with("tool_execution_") && kind != "tool_execution_update" {
            o.push(format!("{}:{}", &kind[15..], e.str_at("toolCallId")));
        }
        if kind == "message_end" && e.path("message.role").as_str() == Some("toolResult") {
            o.push(format!("result:{}", e.path("message.toolCallId").js_string()));
        }
        Ok(TV::Undefined)
    });
    let w = World::with(vec![
        reply_calls(vec![call("c1", "slow", json!({})), call("c2", "nope", json!({})), call("c3", "fast", json!({}))]),
        reply("ok"),
    ]);
    let result = w
        .exec(
            RunSpec::prompt(
                vec![user("go")],
                ctx_tools(vec![], vec![tool("slow", exec(30.0)), tool("fast", exec(5.0))]),
                config(&[("beforeToolCall", before)]),
            )
            .sink(sink),
        )
        .unwrap();
    assert_eq!(
        order.get(),
        strs(&[
            "start:c1",
            "before:c1",
            "start:c2",
            "end:c2",
            "start:c3",
            "before:c3",
            "execute:c1",
            "execute:c3",
            "end:c3",
            "end:c1",
            "result:c1",
            "result:c2",
            "result:c3",
        ])
    );
    let ids: Vec<String> = result_messages(&result).iter().map(|m| m.str_at("toolCallId")).collect();
    assert_eq!(ids, strs(&["c1", "c2", "c3"]));
}

#[test]
fn t_4_5_2_an_abort_during_preflight_gives_every_call_operation_aborted() {
    let w =
        World::with(vec![reply_calls(vec![call("c1", "t", json!({})), call("c2", "t", json!({}))]), reply("after")]);
    let (controller, signal) = w.controller();
    let (exec, executed) = counted(|_, _| Ok(ok_result("x")));
    let before = TV::func(move |h, _this, args| {
        if args[0].path("toolCall.id").as_str() == Some("c2") {
            h.abort(&controller, &TV::Undefined);
        }
        Ok(TV::Undefined)
    });
    let result = w
        .exec(
            RunSpec::prompt(
                vec![user("go")],
                ctx_tools(vec![], vec![tool("t", exec)]),
                config(&[("beforeToolCall", before)]),
            )
            .signal(&signal),
        )
        .unwrap();
    assert_eq!(executed.get(), 0);
    for id in ["c1", "c2"] {
        let end = w.end_of(id);
        assert_eq!(first_text(&end.get("result")), "Operation aborted");
        assert_eq!(end.get("isError").as_bool(), Some(true));
    }
    let ids: Vec<String> = result_messages(&result).iter().map(|m| m.str_at("toolCallId")).collect();
    assert_eq!(ids, strs(&["c1", "c2"]));
    assert_eq!(w.requests(), 1);
    assert_eq!(w.rec.types().last().map(String::as_str), Some("agent_end"));
    w.assert_clean();
}

// ---------------------------------------------------------------------------------------------
// T-4.6 truncation, T-4.7 terminate
// ---------------------------------------------------------------------------------------------

#[test]
fn t_4_6_1_truncated_response_executes_nothing_exact_text_raw_args_not_terminating() {
    let (prepare, prepared) = counted(|_, args| Ok(args[0].clone()));
    let (exec, executed) = counted(|_, _| Ok(ok_result("x")));
    let t = tool_with(
        "write",
        exec,
        &[
            ("prepareArguments", prepare),
            (
                "parameters",
                TV::from_json(
                    &json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
                ),
            ),
        ],
    );
    let (hook, hooks) = counter();
    let (w, result) = run(
        vec![
            faux_assistant(
                vec![text("writing"), call("c1", "write", json!({"pa": 1})), call("c2", "other", json!({"x": 1}))],
                "length",
            ),
            reply("retry"),
        ],
        vec![t],
        &[("beforeToolCall", hook.clone()), ("afterToolCall", hook)],
    );
    assert_eq!((prepared.get(), executed.get(), hooks.get()), (0, 0, 0));
    let tail: Vec<String> =
        w.labels().into_iter().filter(|l| l.starts_with("tool_") || l.ends_with(":toolResult")).collect();
    assert_eq!(
        tail,
        strs(&[
            "tool_execution_start:c1",
            "tool_execution_end:c1",
            "message_start:toolResult",
            "message_end:toolResult",
            "tool_execution_start:c2",
            "tool_execution_end:c2",
            "message_start:toolResult",
            "message_end:toolResult",
        ])
    );
    assert_eq!(w.events("tool_execution_start")[0].get("args").to_json(), json!({"pa": 1}));
    assert_eq!(
        w.end_of("c1").get("result").to_json(),
        json!({"content": [{"type": "text", "text": truncated("write")}], "details": {}})
    );
    assert_eq!(
        w.end_of("c2").get("result").to_json(),
        json!({"content": [{"type": "text", "text": truncated("other")}], "details": {}})
    );
    for e in w.events("tool_execution_end") {
        assert_eq!(e.get("isError").as_bool(), Some(true));
        assert!(!e.has_own("durationMs"));
    }
    assert_eq!(w.requests(), 2);
    assert_eq!(roles(&result), strs(&["system", "user", "assistant", "toolResult", "toolResult", "assistant"]));
    assert_eq!(first_text(&result.items().pop().unwrap()), "retry");
}

fn exec_terminate() -> TV {
    TV::func(|_h, _this, _args| Ok(ok_result_with("bye", &[("terminate", TV::Bool(true))])))
}

#[test]
fn t_4_7_1_every_result_terminating_suppresses_the_tool_result_request() {
    let (w, result) = run(two_calls_with("stop", "stop"), vec![tool("stop", exec_terminate())], &[]);
    assert_eq!(w.requests(), 1);
    assert_eq!(roles(&result), strs(&["system", "user", "assistant", "toolResult", "toolResult"]));
    assert_eq!(w.events("turn_end").len(), 1);
    let (w, result) = run(
        vec![reply_calls(vec![call("a", "stop", json!({}))]), reply("never")],
        vec![tool("stop", exec_terminate())],
        &[],
    );
    assert_eq!(w.requests(), 1);
    assert_eq!(roles(&result), strs(&["system", "user", "assistant", "toolResult"]));
}

fn two_calls_with(a: &str, b: &str) -> Vec<TV> {
    vec![reply_calls(vec![call("a", a, json!({})), call("b", b, json!({}))]), reply("never")]
}

#[test]
fn t_4_7_1_blocked_with_terminate_is_not_executed_and_terminates() {
    let (exec, executed) = counted(|_, _| Ok(ok_result("x")));
    let before = TV::func(|_h, _this, _args| {
        Ok(TV::obj(&[
            ("block", TV::Bool(true)),
            ("reason", TV::str("Blocked by policy")),
            ("terminate", TV::Bool(true)),
        ]))
    });
    let (w, result) = run(
        vec![reply_calls(vec![call("a", "danger", json!({}))]), reply("never")],
        vec![tool("danger", exec)],
        &[("beforeToolCall", before)],
    );
    assert_eq!((executed.get(), w.requests()), (0, 1));
    let tr = &result_messages(&result)[0];
    assert_eq!(tr.get("isError").as_bool(), Some(true));
    assert_eq!(tr.get("content").to_json(), json!([{"type": "text", "text": "Blocked by policy"}]));
    assert!(!tr.has_own("durationMs"));
    let end = w.end_of("a");
    assert_eq!(end.path("result.terminate").as_bool(), Some(true));
    assert!(!end.has_own("durationMs"));
}

#[test]
fn t_4_7_1_mixed_batches_do_not_terminate() {
    // One terminating block, one normal run.
    let executed = Log::new();
    let mk = |name: &'static str| {
        let e = executed.clone();
        tool(
            name,
            TV::func(move |_h, _this, _args| {
                e.push(name);
                Ok(ok_result(name))
            }),
        )
    };
    let before = TV::func(|_h, _this, args| {
        Ok(if args[0].path("toolCall.name").as_str() == Some("first") {
            TV::obj(&[("block", TV::Bool(true)), ("reason", TV::str("no")), ("terminate", TV::Bool(true))])
        } else {
            TV::Undefined
        })
    });
    let (w, _) = run(two_calls_with("first", "second"), vec![mk("first"), mk("second")], &[("beforeToolCall", before)]);
    assert_eq!(executed.get(), strs(&["second"]));
    assert_eq!(w.requests(), 2);
    // Only one of two results terminates.
    let (w, result) = run(two_calls_with("a", "b"), vec![tool("a", exec_terminate()), tool("b", exec_ok("b"))], &[]);
    assert_eq!(w.requests(), 2);
    assert_eq!(roles(&result), strs(&["system", "user", "assistant", "toolResult", "toolResult", "assistant"]));
    // An immediate error without the flag.
    let (w, _) = run(two_calls_with("t", "unknown"), vec![tool("t", exec_terminate())], &[]);
    assert_eq!(w.requests(), 2);
    // A non-boolean flag does not count.
    let (w, _) = run(
        vec![reply_calls(vec![call("a", "t", json!({}))]), reply("again")],
        vec![tool("t", TV::func(|_h, _this, _args| Ok(ok_result_with("x", &[("terminate", TV::str("true"))]))))],
        &[],
    );
    assert_eq!(w.requests(), 2);
}

#[test]
fn t_4_7_1_after_tool_call_terminate_marks_the_batch() {
    let (w, _) = run(
        vec![reply_calls(vec![call("1", "a", json!({}))]), reply("never")],
        vec![tool("a", exec_ok("a"))],
        &[("afterToolCall", TV::func(|_h, _this, _args| Ok(TV::obj(&[("terminate", TV::Bool(true))]))))],
    );
    assert_eq!(w.requests(), 1);
    assert_eq!(w.end_of("1").path("result.terminate").as_bool(), Some(true));
}

#[test]
fn t_4_7_2_terminate_suppresses_only_the_tool_result_request() {
    // finishTurn continue still forces one request.
    let (finish, _) =
        counted(|n, _| Ok(if n == 0 { TV::obj(&[("action", TV::str("continue"))]) } else { TV::Undefined }));
    let (w, result) = run(
        vec![reply_calls(vec![call("1", "t", json!({}))]), reply("forced")],
        vec![tool("t", exec_terminate())],
        &[("finishTurn", finish)],
    );
    assert_eq!(w.requests(), 2);
    assert_eq!(first_text(&result.items().pop().unwrap()), "forced");
    // Steering found at S1 still starts a turn; finishTurn and S1 still run.
    let steering = Queue::all();
    let s = steering.clone();
    let exec = TV::func(move |_h, _this, _args| {
        s.push(user("steer"));
        Ok(ok_result_with("x", &[("terminate", TV::Bool(true))]))
    });
    let (finish, finished) = counter();
    let (w, _) = run(
        vec![reply_calls(vec![call("1", "t", json!({}))]), reply("after steer")],
        vec![tool("t", exec)],
        &[("getSteeringMessages", steering.getter()), ("finishTurn", finish)],
    );
    assert_eq!((w.requests(), finished.get(), steering.polls()), (2, 2, 3));
    assert_eq!(w.request_texts(1).last().map(String::as_str), Some("steer"));
}

// ---------------------------------------------------------------------------------------------
// T-4.8 updates
// ---------------------------------------------------------------------------------------------

#[test]
fn t_4_8_1_update_payload_delivered_before_the_end_late_calls_ignored() {
    let late = Rc::new(RefCell::new(TV::Undefined));
    let l = late.clone();
    let exec = TV::func(move |h, _this, args| {
        l.replace(args[3].clone());
        let partial = TV::from_json(&json!({"content": [{"type": "text", "text": "half"}], "details": {"p": 50}}));
        h.call_sync(&args[3], &TV::Undefined, &[partial])?;
        Ok(ok_result("done"))
    });
    let t = tool_with(
        "t",
        exec,
        &[("parameters", TV::from_json(&json!({"type": "object", "properties": {"q": {"type": "string"}}})))],
    );
    let (w, _) = run(vec![reply_calls(vec![call("c1", "t", json!({"q": "raw"}))]), reply("ok")], vec![t], &[]);
    let updates = w.events("tool_execution_update");
    assert_eq!(updates.len(), 1);
    assert_eq!(
        updates[0].to_json(),
        json!({"type": "tool_execution_update", "toolCallId": "c1", "toolName": "t", "args": {"q": "raw"},
               "partialResult": {"content": [{"type": "text", "text": "half"}], "details": {"p": 50}}})
    );
    let labels = w.all_labels();
    let pos = |l: &str| labels.iter().position(|x| x == l).unwrap();
    assert!(pos("tool_execution_update:c1") < pos("tool_execution_end:c1"));
    assert_eq!(crate::core::tools::open_routes(), 0, "the settled execution's route is closed");
    // After the run the function is still callable: no effect, no panic.
    let before = w.rec.len();
    let out = w.h.call_sync(&late.borrow(), &TV::Undefined, &[ok_result("too late")]).unwrap();
    assert!(out.is_undefined());
    w.h.settle();
    assert_eq!(w.rec.len(), before);
}

#[test]
fn t_4_8_1_a_settled_tools_late_update_is_ignored_while_another_runs() {
    for mode in ["sequential", "parallel"] {
        let fast = TV::func(|h, _this, args| {
            let on_update = args[3].clone();
            h.at(h.now() + 5.0, move |h| {
                let _ = h.call_sync(&on_update, &TV::Undefined, &[ok_result("late")]);
            });
            Ok(ok_result("fast"))
        });
        let (w, _) = run(
            vec![reply_calls(vec![call("f", "fast", json!({})), call("s", "slow", json!({}))]), reply("ok")],
            vec![tool("fast", fast), tool("slow", exec_after(30.0, ok_result("slow")))],
            &[("toolExecution", TV::str(mode))],
        );
        assert_eq!(w.events("tool_execution_update").len(), 0, "{mode}");
        w.assert_clean();
    }
}

#[test]
fn t_4_8_1_a_slow_barrier_sink_delays_the_tools_end() {
    let order = Log::new();
    let o = order.clone();
    let exec = TV::func(move |h, _this, args| {
        h.call_sync(&args[3], &TV::Undefined, &[ok_result("p")])?;
        o.push("execute returned");
        Ok(ok_result("x"))
    });
    let o = order.clone();
    let sink = TV::async_func(move |h, _this, args| {
        let kind = args[0].str_at("type");
        let (sleep, o) = (h.sleep(15.0), o.clone());
        if kind == "tool_execution_end" {
            o.push("end");
        }
        async move {
            if kind == "tool_execution_update" {
                sleep.await;
                o.push("update delivered");
            }
            Ok(TV::Undefined)
        }
        .boxed_local()
    });
    let w = World::with(vec![reply_calls(vec![call("c1", "t", json!({}))]), reply("ok")]);
    w.exec(RunSpec::prompt(vec![user("go")], ctx_tools(vec![], vec![tool("t", exec)]), config(&[])).sink(sink))
        .unwrap();
    assert_eq!(order.get(), strs(&["execute returned", "update delivered", "end"]));
    assert_eq!(w.h.now(), 15.0);
}

// ---------------------------------------------------------------------------------------------
// T-4.9 runToolCall
// ---------------------------------------------------------------------------------------------

/// `runToolCall(toolCall, options)` as the binding runs it; `on_update` receives partials.
fn run_tool_call(h: &TestHost, tool_call: &TV, options: &TV) -> TV {
    let call = Call::read(h, tool_call).unwrap();
    let grace_ms = options.get("abortGraceMs").as_num().filter(|ms| *ms >= 0.0).unwrap_or(5000.0);
    let (assistant, signal) = (options.get("assistantMessage"), options.get("signal"));
    let env = ToolEnv {
        h,
        tools: options.get("tools"),
        assistant: &assistant,
        context: options.get("context"),
        hooks: options.clone(),
        signal: &signal,
        grace_ms,
        tool_timeout_ms: crate::core::tools::timeout_ms(h, options, "toolTimeoutMs"),
        halted: None,
        tool_index: Default::default(),
        updates: Default::default(),
    };
    let on_update = options.get("onUpdate");
    h.run(async {
        let deliver = |partial: TV| {
            let on_update = on_update.clone();
            async move {
                if on_update.is_func() {
                    let _ = h.call(&on_update, &TV::Undefined, &[partial]).await;
                }
            }
            .boxed_local()
        };
        let outcome = env.run_call(&call, deliver).await;
        outcome_object(h, &outcome)
    })
}

#[test]
fn t_4_9_1_run_tool_call_never_rejects_unknown_aborted_thrown_blocked_invalid_structured() {
    let h = TestHost::new();
    let structured = tool(
        "structured",
        TV::func(|_h, _this, _args| {
            Ok(TV::from_json(
                &json!({"content": [{"type": "text", "text": "orig"}], "details": {"d": 1}, "structuredContent": {"rows": 3}}),
            ))
        }),
    );
    let boom = tool("boom", exec_after_throw(4.0, TV::error("kaboom")));
    let typed = tool_with(
        "typed",
        exec_ok("typed"),
        &[(
            "parameters",
            TV::from_json(&json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})),
        )],
    );
    let assistant = reply_calls(vec![call("x", "structured", json!({}))]);
    let context = ctx_tools(vec![], vec![]);
    let hook_calls = Count::new();
    let (hc, a2, c2) = (hook_calls.clone(), assistant.clone(), context.clone());
    let base = TV::obj(&[
        ("tools", TV::arr(vec![structured, boom, typed])),
        ("assistantMessage", assistant),
        ("context", context),
    ]);
    let base2 = base.clone();
    base.set(
        "beforeToolCall",
        TV::func(move |_h, this, args| {
            hc.bump();
            assert!(this.get("tools").same(&base2.get("tools")), "hooks are called on the options object");
            assert!(args[0].get("assistantMessage").same(&a2));
            assert!(args[0].get("context").same(&c2));
            let blocked =
                args[0].path("toolCall.name").as_str() == Some("typed") && args[0].path("args.n").as_num() == Some(7.0);
            Ok(if blocked { TV::obj(&[("block", TV::Bool(true))]) } else { TV::Undefined })
        }),
    );
    let with = |extra: &[(&str, TV)]| {
        let o = h.shallow_copy(&base).unwrap();
        for (k, v) in extra {
            o.set(k, v.clone());
        }
        o
    };

    let missing = run_tool_call(&h, &call("m", "missing", json!({})), &base);
    assert_eq!(missing.keys(), strs(&["toolCall", "result", "isError"]));
    assert_eq!(missing.get("isError").as_bool(), Some(true));
    assert_eq!(
        missing.get("result").to_json(),
        json!({"content": [{"type": "text", "text": "Tool missing not found"}], "details": {}})
    );
    assert_eq!(missing.path("toolCall.id").as_str(), Some("m"));

    let (controller, signal) = h.abort_controller();
    h.abort(&controller, &TV::Undefined);
    let before = hook_calls.get();
    let aborted = run_tool_call(&h, &call("s", "structured", json!({})), &with(&[("signal", signal)]));
    assert_eq!(aborted.get("isError").as_bool(), Some(true));
    assert_eq!(first_text(&aborted.get("result")), "Operation aborted");
    assert_eq!(hook_calls.get(), before, "checked before any hook");

    let thrown = run_tool_call(&h, &call("b", "boom", json!({})), &base);
    assert_eq!(thrown.keys(), strs(&["toolCall", "result", "isError", "durationMs"]));
    assert_eq!(thrown.get("result").to_json(), json!({"content": [{"type": "text", "text": "kaboom"}], "details": {}}));
    assert_eq!(thrown.get("durationMs").as_num(), Some(4.0));

    let blocked = run_tool_call(&h, &call("t", "typed", json!({"n": "7"})), &base);
    assert_eq!(first_text(&blocked.get("result")), "Tool execution was blocked");
    assert!(!blocked.has_own("durationMs"));

    let invalid = run_tool_call(&h, &call("t", "typed", json!({})), &base);
    assert_eq!(
        first_text(&invalid.get("result")),
        "Validation failed for tool \"typed\":\n  - n: missing\n\nReceived arguments:\n{}"
    );

    let plain = run_tool_call(&h, &call("s", "structured", json!({})), &base);
    assert_eq!(plain.get("isError").as_bool(), Some(false));
    assert_eq!(plain.path("result.structuredContent").to_json(), json!({"rows": 3}));

    let replaced = run_tool_call(
        &h,
        &call("s", "structured", json!({})),
        &with(&[(
            "afterToolCall",
            TV::func(|_h, _this, _args| Ok(TV::obj(&[("content", TV::arr(vec![text("replaced")]))]))),
        )]),
    );
    assert_eq!(replaced.get("isError").as_bool(), Some(false));
    assert_eq!(replaced.path("result.content").to_json(), json!([{"type": "text", "text": "replaced"}]));
    assert_eq!(replaced.path("result.details").to_json(), json!({"d": 1}));
    assert!(!replaced.get("result").has_own("structuredContent"));
    assert_eq!(replaced.get("durationMs").as_num(), Some(0.0));
    assert_eq!(h.pending_timers(), 0);
    assert_eq!(h.abort_listener_count(), 0);
}

#[test]
fn t_4_9_1_run_tool_call_updates_go_to_on_update_and_are_awaited() {
    let h = TestHost::new();
    let t = tool(
        "u",
        TV::func(|h, _this, args| {
            h.call_sync(&args[3], &TV::Undefined, &[ok_result("p1")])?;
            h.call_sync(&args[3], &TV::Undefined, &[ok_result("p2")])?;
            Ok(ok_result("done"))
        }),
    );
    let updates = Log::new();
    let resolved = Count::new();
    let (u, r) = (updates.clone(), resolved.clone());
    let this_seen = Rc::new(Cell::new(false));
    let ts = this_seen.clone();
    let on_update = TV::async_func(move |h, this, args| {
        ts.set(this.is_undefined());
        u.push(first_text(&args[0]));
        let (sleep, r) = (h.sleep(5.0), r.clone());
        async move {
            sleep.await;
            r.bump();
            Ok(TV::Undefined)
        }
        .boxed_local()
    });
    let options = TV::obj(&[
        ("tools", TV::arr(vec![t.clone()])),
        ("assistantMessage", reply_calls(vec![call("c", "u", json!({}))])),
        ("context", ctx_tools(vec![], vec![t])),
        ("onUpdate", on_update),
    ]);
    let outcome = run_tool_call(&h, &call("c", "u", json!({})), &options);
    assert_eq!(updates.get(), strs(&["p1", "p2"]));
    assert_eq!(resolved.get(), 2, "each update awaited before the outcome");
    assert!(this_seen.get(), "onUpdate is called with this undefined");
    assert_eq!(first_text(&outcome.get("result")), "done");
    assert_eq!(h.now(), 10.0);
    // Without onUpdate: a no-op.
    options.delete("onUpdate");
    let outcome = run_tool_call(&h, &call("c", "u", json!({})), &options);
    assert_eq!(outcome.get("isError").as_bool(), Some(false));
}

#[test]
fn e_8_2_before_tool_call_non_object_results_are_ignored() {
    for value in [TV::str("block"), TV::Bool(true), TV::num(42.0)] {
        let (exec, executed) = counted(|_, _| Ok(ok_result("echoed")));
        let v = value.clone();
        let (w, _) = run(
            vec![reply_calls(vec![call("c1", "echo", json!({}))]), reply("done")],
            vec![tool("echo", exec)],
            &[("beforeToolCall", TV::func(move |_h, _this, _args| Ok(v.clone())))],
        );
        assert_eq!(executed.get(), 1, "{value:?}");
        assert_eq!(w.end_of("c1").get("isError").as_bool(), Some(false));
        assert_eq!(first_text(&w.end_of("c1").get("result")), "echoed");
    }
}

#[test]
fn t_4_5_2_each_prepared_call_rechecks_the_signal_when_it_starts() {
    let w = World::with(vec![
        reply_calls(vec![call("c1", "aborter", json!({})), call("c2", "t", json!({}))]),
        reply("never"),
    ]);
    let (controller, signal) = w.controller();
    let aborter = tool(
        "aborter",
        TV::func(move |h, _this, _args| {
            h.abort(&controller, &TV::Undefined);
            Ok(ok_result("aborted it"))
        }),
    );
    let (exec, executed) = counted(|_, _| Ok(ok_result("x")));
    let (after, after_calls) = counter();
    w.exec(
        RunSpec::prompt(
            vec![user("go")],
            ctx_tools(vec![], vec![aborter, tool("t", exec)]),
            config(&[("afterToolCall", after)]),
        )
        .signal(&signal),
    )
    .unwrap();
    assert_eq!(executed.get(), 0);
    assert_eq!(first_text(&w.end_of("c1").get("result")), "aborted it");
    assert_eq!(first_text(&w.end_of("c2").get("result")), "Operation aborted");
    assert!(!w.end_of("c2").has_own("durationMs"));
    assert_eq!(after_calls.get(), 1, "afterToolCall only for the call that executed");
    assert_eq!(w.requests(), 1);
}

#[test]
fn d4_2_an_abandoned_after_tool_call_gives_operation_aborted_and_keeps_the_duration() {
    let w = World::with(vec![reply_calls(vec![call("c1", "t", json!({}))]), reply("never")]);
    let (controller, signal) = w.controller();
    let after = TV::async_func(move |h, _this, _args| {
        h.abort(&controller, &TV::Undefined);
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
            ctx_tools(vec![], vec![tool("t", exec_after(4.0, ok_result("done")))]),
            config(&[("afterToolCall", after), ("abortGraceMs", TV::num(10.0))]),
        )
        .signal(&signal),
    )
    .unwrap();
    let end = w.end_of("c1");
    assert_eq!(first_text(&end.get("result")), "Operation aborted");
    assert_eq!(end.get("isError").as_bool(), Some(true));
    assert_eq!(end.get("durationMs").as_num(), Some(4.0));
    assert_eq!(w.h.now(), 14.0);
    assert_eq!(w.h.abort_listener_count(), 0);
}

#[test]
fn t_4_8_1_updates_of_an_abandoned_call_are_ignored() {
    let w = World::with(vec![reply_calls(vec![call("c1", "t", json!({}))]), reply("never")]);
    let (controller, signal) = w.controller();
    w.h.abort_at(&controller, 5.0);
    let exec = TV::async_func(|h, _this, args| {
        let (h, on_update) = (h.clone(), args[3].clone());
        async move {
            for i in 0..10 {
                h.call_sync(&on_update, &TV::Undefined, &[ok_result(&format!("u{i}"))])?;
                h.sleep(10.0).await;
            }
            Ok(ok_result("late"))
        }
        .boxed_local()
    });
    w.exec(
        RunSpec::prompt(
            vec![user("go")],
            ctx_tools(vec![], vec![tool("t", exec)]),
            config(&[("abortGraceMs", TV::num(12.0))]),
        )
        .signal(&signal),
    )
    .unwrap();
    assert_eq!(w.h.now(), 17.0);
    let updates: Vec<String> =
        w.events("tool_execution_update").iter().map(|e| first_text(&e.get("partialResult"))).collect();
    assert_eq!(updates, strs(&["u0", "u1"]), "delivered while running, none after abandonment");
    assert_eq!(crate::core::tools::open_routes(), 0, "the abandoned execution's route is closed");
    let n = w.rec.len();
    w.h.settle();
    assert_eq!(w.rec.len(), n);
    assert_eq!(w.h.pending_timers(), 0);
}

/// Issue 17: an execution dropped before it settles (its run's future dropped mid-batch) closes its route too.
#[test]
fn t_4_8_1_a_dropped_execution_closes_its_route() {
    use crate::core::tools::{Call, ToolEnv, open_routes};
    let h = TestHost::new();
    let t = tool("t", exec_after(1000.0, ok_result("late")));
    let env = ToolEnv {
        h: &h,
        tools: TV::arr(vec![t.clone()]),
        assistant: &reply_calls(vec![]),
        context: ctx_tools(vec![], vec![t.clone()]),
        hooks: config(&[]),
        signal: &TV::Undefined,
        grace_ms: 0.0,
        tool_timeout_ms: 0.0,
        halted: None,
        tool_index: Default::default(),
        updates: Default::default(),
    };
    let executions: Vec<_> = ["c1", "c2"]
        .iter()
        .map(|id| {
            let c = Call::read(&h, &call(id, "t", json!({}))).unwrap();
            env.start(&c, &t, &TV::from_json(&json!({})))
        })
        .collect();
    assert_eq!(open_routes(), 2, "two executions started");
    drop(executions);
    assert_eq!(open_routes(), 0);
}

/// E-8.4.3 / API-1.3.6: a tool may call `runToolCall` from inside its own execution.
#[test]
fn e_8_4_3_run_tool_call_inside_a_running_tool() {
    let inner = tool("inner", exec_after(5.0, ok_result("inner result")));
    let inner_tools = TV::arr(vec![inner]);
    let outer = tool(
        "outer",
        TV::async_func(move |h, _this, args| {
            let (h, tools, signal) = (h.clone(), inner_tools.clone(), args[2].clone());
            async move {
                let options = TV::obj(&[
                    ("tools", tools),
                    ("assistantMessage", reply_calls(vec![])),
                    ("context", ctx(vec![])),
                    ("signal", signal),
                ]);
                let call = Call::read(&h, &call("nested", "inner", json!({}))).unwrap();
                let (assistant, signal) = (options.get("assistantMessage"), options.get("signal"));
                let env = ToolEnv {
                    h: &h,
                    tools: options.get("tools"),
                    assistant: &assistant,
                    context: options.get("context"),
                    hooks: options.clone(),
                    signal: &signal,
                    grace_ms: 5000.0,
                    tool_timeout_ms: 0.0,
                    halted: None,
                    tool_index: Default::default(),
                    updates: Default::default(),
                };
                let outcome = env.run_call(&call, |_p| futures::future::ready(()).boxed_local()).await;
                let object = outcome_object(&h, &outcome);
                Ok(ok_result(&format!("outer saw: {}", first_text(&object.get("result")))))
            }
            .boxed_local()
        }),
    );
    let (w, _) = run(vec![reply_calls(vec![call("c1", "outer", json!({}))]), reply("done")], vec![outer], &[]);
    assert_eq!(first_text(&w.end_of("c1").get("result")), "outer saw: inner result");
    assert_eq!(w.end_of("c1").get("durationMs").as_num(), Some(5.0));
    w.assert_clean();
}

/// Issue 13: nesting a JS engine takes (past serde_json's 128 levels) validates; past the limits the call fails with
/// exactly the reference's stack-overflow message, never a validation error or a trap; lone surrogates (stand-ins on
/// the Rust side) name distinct tools.
#[test]
fn t_4_3_deep_schemas_and_arguments_and_lone_surrogate_names() {
    use crate::core::validate::{MAX_DEPTH, MAX_SCHEMA_DEPTH, TOO_DEEP};
    let nest = |n: usize, leaf: serde_json::Value, wrap: &dyn Fn(serde_json::Value) -> serde_json::Value| {
        (0..n).fold(leaf, |v, _| wrap(v))
    };
    let items = |v| json!({"type": "array", "items": v});
    let (exec, executed) = counted(|_, args| {
        // The depth `execute` received, counted without recursion.
        let mut v = args[1].get("x");
        let mut depth = 0;
        while v.items().len() == 1 {
            v = v.at(0);
            depth += 1;
        }
        Ok(ok_result(&depth.to_string()))
    });
    let within = nest(MAX_DEPTH / 2 - 2, json!({"type": "integer"}), &items);
    let shallow = tool_with(
        "deep",
        exec.clone(),
        &[("parameters", TV::from_json(&json!({"type": "object", "properties": {"x": within}})))],
    );
    let too_deep = nest(MAX_SCHEMA_DEPTH + 1, json!({}), &items);
    let refused = tool_with("refused", exec.clone(), &[("parameters", TV::from_json(&too_deep))]);
    let (first, second) = (tool("x\u{10F800}", exec.clone()), tool("x\u{10FBFF}", exec));
    let arg = |n| json!({"x": nest(n, json!(1), &|v| json!([v]))});
    let (w, _) = run(
        vec![
            reply_calls(vec![
                call("c1", "deep", arg(MAX_DEPTH / 2 - 2)),
                call("c2", "deep", arg(MAX_DEPTH / 2 - 1)),
                call("c3", "refused", json!({})),
                call("c4", "x\u{10FBFF}", arg(3)),
                call("c5", "x\u{10F800}", arg(2)),
            ]),
            reply("ok"),
        ],
        vec![shallow, refused, first, second],
        &[],
    );
    assert_eq!(first_text(&w.end_of("c1").get("result")), (MAX_DEPTH / 2 - 2).to_string());
    let wrong = first_text(&w.end_of("c2").get("result"));
    assert!(wrong.starts_with("Validation failed for tool \"deep\":\n  - x."), "{}", &wrong[..80]);
    assert!(wrong.contains(": expected integer, got array\n"));
    assert_eq!(first_text(&w.end_of("c3").get("result")), TOO_DEEP);
    assert_eq!(w.end_of("c3").get("isError").as_bool(), Some(true));
    assert_eq!(first_text(&w.end_of("c4").get("result")), "3");
    assert_eq!(first_text(&w.end_of("c5").get("result")), "2");
    assert_eq!(executed.get(), 3);
}
