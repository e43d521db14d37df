//! Issue 45, L-3.13: the decisions compaction makes on a transcript — the option, the threshold, the estimate, the
//! projection of a compacted transcript, the kept-turn boundary (never a call without its result), the summary
//! request's text and the entry.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use crate::core::compaction::{self, Options, Summarize, Trigger};
use crate::core::host::Host;
use crate::core::test_host::{TV, TestHost};
use serde_json::json;

fn tv(v: serde_json::Value) -> TV {
    TV::from_json(&v)
}

fn user(text: &str) -> TV {
    tv(json!({ "role": "user", "content": [{ "type": "text", "text": text }], "timestamp": 1 }))
}

fn assistant(text: &str, total_tokens: f64) -> TV {
    tv(json!({ "role": "assistant", "content": [{ "type": "text", "text": text }], "stopReason": "stop",
        "usage": { "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": total_tokens }, "timestamp": 1 }))
}

fn calls(ids: &[&str]) -> TV {
    let blocks: Vec<_> = ids
        .iter()
        .map(|id| json!({ "type": "toolCall", "id": id, "name": "read", "arguments": { "path": "a.txt" } }))
        .collect();
    tv(
        json!({ "role": "assistant", "content": blocks, "stopReason": "toolUse", "usage": { "totalTokens": 0 }, "timestamp": 1 }),
    )
}

fn result(id: &str, text: &str) -> TV {
    tv(
        json!({ "role": "toolResult", "toolCallId": id, "toolName": "read", "content": [{ "type": "text", "text": text }],
        "isError": false, "timestamp": 1 }),
    )
}

fn system(content: &str, tools: &[&str]) -> TV {
    let added: Vec<_> = tools.iter().map(|n| json!({ "name": n, "description": "", "parameters": {} })).collect();
    tv(json!({ "role": "system", "content": content, "toolsAdded": added, "timestamp": 7 }))
}

fn roles(h: &TestHost, messages: &[TV]) -> Vec<String> {
    messages.iter().map(|m| h.as_string(&h.get(m, "role").unwrap()).unwrap_or_default()).collect()
}

fn options(h: &TestHost, v: serde_json::Value) -> Result<Option<Options<TV>>, &'static str> {
    compaction::read_options(h, &tv(v)).map_err(|e| match e {
        compaction::Unreadable::Field(field, _) => field,
        compaction::Unreadable::Thrown(_) => "thrown",
    })
}

#[test]
fn the_option_reads_defaults_and_names_a_bad_field() {
    let h = TestHost::new();
    assert!(compaction::read_options(&h, &TV::Undefined).unwrap().is_none());
    assert!(options(&h, json!(false)).unwrap().is_none());
    let on = options(&h, json!(true)).unwrap().unwrap();
    assert_eq!(on.trigger, Trigger::Fraction(0.8));
    assert!(matches!(on.summarize, Summarize::Model));
    // The default kept budget: a quarter of the window, at most 20,000.
    assert_eq!(on.keep_recent(4000.0), 1000.0);
    assert_eq!(on.keep_recent(200_000.0), 20_000.0);
    let full = options(
        &h,
        json!({ "trigger": { "tokens": 3000 }, "keepRecentTokens": 0, "contextWindow": 4000, "summarize": "drop", "instructions": "Be brief." }),
    )
    .unwrap()
    .unwrap();
    assert_eq!(full.trigger, Trigger::Tokens(3000.0));
    assert_eq!(full.keep_recent(4000.0), 0.0);
    assert_eq!(full.window(Some(128_000.0)), Some(4000.0));
    assert!(matches!(full.summarize, Summarize::Drop));
    assert_eq!(full.instructions.as_deref(), Some("Be brief."));
    let bad = [
        (json!(1), ""),
        (json!({ "trigger": 0.8 }), "trigger"),
        (json!({ "trigger": { "fraction": 0 } }), "trigger"),
        (json!({ "trigger": { "fraction": 1.5 } }), "trigger"),
        (json!({ "trigger": { "tokens": 2.5 } }), "trigger"),
        (json!({ "trigger": { "fraction": 0.5, "tokens": 100 } }), "trigger"),
        (json!({ "trigger": {} }), "trigger"),
        (json!({ "keepRecentTokens": -1 }), "keepRecentTokens"),
        (json!({ "contextWindow": 0 }), "contextWindow"),
        (json!({ "summarize": "llm" }), "summarize"),
        (json!({ "instructions": 3 }), "instructions"),
    ];
    for (v, field) in bad {
        assert_eq!(options(&h, v.clone()).err(), Some(field), "{v}");
    }
}

#[test]
fn the_threshold_is_a_share_of_the_window_or_a_token_count() {
    let h = TestHost::new();
    let on = options(&h, json!(true)).unwrap().unwrap();
    assert!(!on.passes(3200.0, 4000.0));
    assert!(on.passes(3201.0, 4000.0));
    let tokens = options(&h, json!({ "trigger": { "tokens": 1000 } })).unwrap().unwrap();
    assert!(!tokens.passes(1000.0, 4000.0));
    assert!(tokens.passes(1001.0, 4000.0));
    // No known window: nothing to compact against.
    assert_eq!(on.window(None), None);
    assert_eq!(on.window(Some(f64::NAN)), None);
    assert_eq!(on.window(Some(0.0)), None);
}

#[test]
fn the_estimate_is_the_last_reported_usage_plus_four_characters_a_token_after_it() {
    let h = TestHost::new();
    // No usage: every message by characters ("abcd" 1 token, 5 characters 2 tokens).
    assert_eq!(compaction::estimate(&h, &[user("abcd"), user("abcde")], 0).unwrap(), 3.0);
    // The last assistant's usage, plus what came after it; what came before is inside its usage.
    let messages = [user(&"x".repeat(4000)), assistant("ok", 1500.0), result("c1", &"y".repeat(400)), user("hi")];
    assert_eq!(compaction::estimate(&h, &messages, 0).unwrap(), 1500.0 + 100.0 + 1.0);
    // Usage from before the last compaction entry is not trusted: characters instead.
    assert_eq!(compaction::estimate(&h, &messages, 2).unwrap(), 1000.0 + 1.0 + 100.0 + 1.0);
    // An errored reply's usage is not trusted; nor one of zero tokens.
    let errored =
        tv(json!({ "role": "assistant", "content": [], "stopReason": "error", "usage": { "totalTokens": 9999 } }));
    assert_eq!(compaction::estimate(&h, &[assistant("a", 10.0), errored, user("abcd")], 0).unwrap(), 11.0);
    // Characters as JS counts them: "😀" is 2 UTF-16 units; an image 4,800 characters; a tool call its name and
    // arguments' JSON; thinking counts, a system message its content and declared tools.
    let mixed = tv(
        json!({ "role": "user", "content": [{ "type": "text", "text": "😀😀" }, { "type": "image", "data": "", "mimeType": "image/png" }] }),
    );
    assert_eq!(compaction::message_chars(&h, &mixed).unwrap(), 4.0 + 4800.0);
    let call = tv(
        json!({ "role": "assistant", "content": [{ "type": "thinking", "thinking": "hmm" }, { "type": "toolCall", "id": "c", "name": "read", "arguments": { "a": 1 } }] }),
    );
    assert_eq!(compaction::message_chars(&h, &call).unwrap(), 3.0 + 4.0 + 7.0);
    let sys = system("You are terse.", &["read"]);
    let tools_json = h.json_stringify(&h.get(&sys, "toolsAdded").unwrap(), false).unwrap().unwrap();
    assert_eq!(compaction::message_chars(&h, &sys).unwrap(), 14.0 + tools_json.len() as f64);
    assert_eq!(compaction::message_chars(&h, &tv(json!({ "role": "custom", "content": "zzzz" }))).unwrap(), 0.0);
}

#[test]
fn a_transcript_without_an_entry_is_sent_as_it_is() {
    let h = TestHost::new();
    let messages = vec![user("a"), assistant("b", 5.0)];
    let p = compaction::project(&h, &messages).unwrap();
    assert_eq!(p.live_from, 0);
    assert!(p.previous_summary.is_none());
    assert_eq!(p.messages.len(), 2);
    assert!(p.messages[0].same(&messages[0]) && p.messages[1].same(&messages[1]));
}

#[test]
fn the_projection_sends_the_head_the_summary_the_kept_messages_and_what_came_after() {
    let h = TestHost::new();
    let entry = compaction::Entry {
        summary: "## Goal\nread files",
        tokens_before: 3500.0,
        tokens_after: 900.0,
        kept_messages: 3,
        reason: "threshold",
        usage: None,
        timestamp: 42.0,
    }
    .to_value(&h);
    // system, user, calls, result | kept: calls, result, assistant | entry | after: user
    let transcript = vec![
        system("You are terse.", &["read"]),
        user("read a.txt"),
        calls(&["c1"]),
        result("c1", "old"),
        calls(&["c2"]),
        result("c2", "new"),
        assistant("done", 900.0),
        entry.clone(),
        user("and b.txt?"),
    ];
    let p = compaction::project(&h, &transcript).unwrap();
    assert_eq!(roles(&h, &p.messages), ["system", "user", "assistant", "toolResult", "assistant", "user"]);
    assert_eq!(p.live_from, 2);
    assert_eq!(p.trusted_from, 5);
    assert_eq!(p.previous_summary.as_deref(), Some("## Goal\nread files"));
    // The head is the replayed system message; the summary a user message in pi-coding-agent's words.
    assert_eq!(h.as_string(&h.get(&p.messages[0], "content").unwrap()).as_deref(), Some("You are terse."));
    let summary = p.messages[1].path("content.0.text");
    assert_eq!(
        summary.as_str(),
        Some(
            "The conversation history before this point was compacted into the following summary:\n\n<summary>\n## Goal\nread files\n</summary>"
        )
    );
    assert_eq!(p.messages[1].num_at("timestamp"), 42.0);
    // The kept and later messages are the transcript's own objects.
    assert!(p.messages[2].same(&transcript[4]) && p.messages[5].same(&transcript[8]));
    // The entry itself: every field, in order.
    assert_eq!(
        entry.keys(),
        ["role", "summary", "tokensBefore", "tokensAfter", "keptMessages", "reason", "timestamp"].map(String::from)
    );
}

#[test]
fn a_later_entry_counts_its_kept_messages_across_an_earlier_one() {
    let h = TestHost::new();
    let first = compaction::Entry {
        summary: "one",
        tokens_before: 0.0,
        tokens_after: 0.0,
        kept_messages: 1,
        reason: "threshold",
        usage: None,
        timestamp: 1.0,
    }
    .to_value(&h);
    let second = compaction::Entry {
        summary: "two",
        tokens_before: 0.0,
        tokens_after: 0.0,
        kept_messages: 3,
        reason: "overflow",
        usage: None,
        timestamp: 2.0,
    }
    .to_value(&h);
    let transcript = vec![user("a"), user("b"), first, user("c"), user("d"), second, user("e")];
    let p = compaction::project(&h, &transcript).unwrap();
    // Kept: b (before the first entry), c, d; the first entry itself is never sent.
    let texts: Vec<_> =
        p.messages.iter().map(|m| m.path("content.0.text").as_str().unwrap_or("").to_string()).collect();
    assert_eq!(texts[1..], ["b", "c", "d", "e"].map(String::from));
    assert!(texts[0].contains("<summary>\ntwo\n</summary>"));
    assert_eq!(p.previous_summary.as_deref(), Some("two"));
}

#[test]
fn the_cut_keeps_recent_tokens_and_never_separates_a_call_from_its_results() {
    let h = TestHost::new();
    // Each tool result 100 tokens (400 chars); the calls ~5 tokens each.
    let live = vec![
        user("start"),                  // 0
        calls(&["c1"]),                 // 1
        result("c1", &"a".repeat(400)), // 2
        calls(&["c2", "c3"]),           // 3
        result("c2", &"b".repeat(400)), // 4
        result("c3", &"c".repeat(400)), // 5
        calls(&["c4"]),                 // 6
        result("c4", &"d".repeat(400)), // 7
    ];
    // 150 tokens reach back into c4's result and call: kept from the call at 6.
    assert_eq!(compaction::cut(&h, &live, 150.0).unwrap(), Some(6));
    // 250: the budget is reached inside the c2/c3 results; never cut at a result: forward to the call at 6.
    assert_eq!(compaction::cut(&h, &live, 250.0).unwrap(), Some(6));
    // 320: reached at the call at 3 itself.
    assert_eq!(compaction::cut(&h, &live, 320.0).unwrap(), Some(3));
    // 0: reached at the newest message (a result): forward finds nothing, so back to its call at 6.
    assert_eq!(compaction::cut(&h, &live, 0.0).unwrap(), Some(6));
    // Everything fits: nothing to summarize.
    assert_eq!(compaction::cut(&h, &live, 10_000.0).unwrap(), None);
    // The cut lands on the first message: nothing before it to summarize.
    assert_eq!(compaction::cut(&h, &live[..3], 105.0).unwrap(), Some(1));
    assert_eq!(compaction::cut(&h, &live[..3], 106.0).unwrap(), None);
    // Whatever the budget, every kept result's call is kept too.
    for budget in 0..500 {
        if let Some(at) = compaction::cut(&h, &live, f64::from(budget)).unwrap() {
            assert_ne!(roles(&h, &live)[at], "toolResult", "budget {budget}");
        }
    }
}

#[test]
fn only_system_messages_before_the_cut_is_nothing_to_summarize() {
    let h = TestHost::new();
    let live = vec![system("s", &[]), user(&"u".repeat(400)), assistant("ok", 0.0)];
    assert_eq!(compaction::cut(&h, &live, 1.0).unwrap(), Some(2));
    assert_eq!(compaction::cut(&h, &live, 101.0).unwrap(), None);
}

#[test]
fn the_summary_request_serializes_the_conversation_as_pi_coding_agent_does() {
    let h = TestHost::new();
    let messages = vec![
        system("not sent", &[]),
        user("read a.txt"),
        tv(json!({ "role": "assistant", "content": [
            { "type": "thinking", "thinking": "secret" },
            { "type": "text", "text": "Reading." },
            { "type": "toolCall", "id": "c1", "name": "read", "arguments": { "path": "a.txt", "lines": [1, 2] } },
            { "type": "toolCall", "id": "c2", "name": "ls", "arguments": {} }
        ] })),
        result("c1", &"z".repeat(2005)),
        result("c2", ""),
    ];
    let text = compaction::serialize(&h, &messages).unwrap();
    let expected = format!(
        "[User]: read a.txt\n\n[Assistant]: Reading.\n\n[Assistant tool calls]: read(path=\"a.txt\", lines=[1,2]); ls()\n\n[Tool result]: {}\n\n[... 5 more characters truncated]",
        "z".repeat(2000)
    );
    assert_eq!(text, expected);
    let first = compaction::request_text("C", None, None);
    assert!(
        first.starts_with("<conversation>\nC\n</conversation>\n\nThe messages above are a conversation to summarize.")
    );
    let update = compaction::request_text("C", Some("P"), None);
    assert!(update.starts_with(
        "<conversation>\nC\n</conversation>\n\n<previous-summary>\nP\n</previous-summary>\n\nThe messages above are NEW"
    ));
    assert_eq!(compaction::request_text("C", Some("P"), Some("Mine.")).rsplit("\n\n").next(), Some("Mine."));
    assert_eq!(compaction::drop_summary(1), "1 earlier message was removed to fit the context window.");
    assert_eq!(compaction::drop_summary(12), "12 earlier messages were removed to fit the context window.");
}

#[test]
fn a_tool_result_is_cut_at_two_thousand_units_never_inside_a_pair() {
    let h = TestHost::new();
    let text = format!("{}😀tail", "a".repeat(1999));
    let serialized = compaction::serialize(&h, &[result("c", &text)]).unwrap();
    // 1999 + 2 + 4 = 2005 units; the pair at 1999..2001 does not fit in 2000.
    assert_eq!(serialized, format!("[Tool result]: {}\n\n[... 5 more characters truncated]", "a".repeat(1999)));
}

// ---- in the loop (L-3.13.5 – L-3.13.10)

mod in_the_loop {
    use super::super::support::*;
    use crate::core::host::Host;
    use crate::core::test_host::TV;
    use serde_json::json;

    fn usage(tokens: f64) -> TV {
        TV::from_json(&json!({ "input": tokens, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": tokens,
            "cost": { "input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0 } }))
    }

    fn with_usage(m: TV, tokens: f64) -> TV {
        m.set("usage", usage(tokens));
        m
    }

    /// A model whose window is 800 tokens.
    fn small_model() -> TV {
        model_with(&[("contextWindow", TV::num(800.0))])
    }

    fn compaction(extra: serde_json::Value) -> TV {
        let c = TV::from_json(&json!({ "keepRecentTokens": 150 }));
        for (k, v) in extra.as_object().cloned().unwrap_or_default() {
            c.set(&k, TV::from_json(&v));
        }
        c
    }

    /// One prompt with a `work` tool whose result is 800 characters (200 tokens): reply 1 calls it and reports 500
    /// tokens, so before request 2 the estimate is 700 > 0.8 × 800.
    fn run(replies: Vec<TV>, compaction: TV) -> (World, TV) {
        let w = World::with(replies);
        let tools = vec![tool("work", exec_ok(&"r".repeat(800)))];
        let cfg = config(&[("model", small_model()), ("compaction", compaction)]);
        let result = w.prompt(vec![user("go")], ctx_tools(vec![], tools), cfg);
        (w, result)
    }

    fn first_turn() -> Vec<String> {
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
        ])
    }

    #[test]
    fn a_request_past_the_threshold_is_compacted_first_with_the_models_summary() {
        let replies = vec![
            with_usage(reply_calls(vec![call("c1", "work", json!({}))]), 500.0),
            with_usage(reply("SUMMARY: the user said go; work ran once."), 40.0),
            with_usage(reply("done"), 300.0),
        ];
        let (w, result) = run(replies, compaction(json!({})));
        let mut labels = first_turn();
        labels.extend(strs(&[
            "compaction_start",
            "message_start:compactionSummary",
            "message_end:compactionSummary",
            "compaction_end",
            "message_start:assistant",
            "message_end:assistant",
            "turn_end",
            "agent_end",
        ]));
        assert_eq!(w.labels(), labels);
        assert_eq!(w.requests(), 3);
        // The summary request: the summarizer's system prompt and the serialized conversation, no tools.
        let summary_request = &w.faux.calls()[1];
        assert_eq!(roles_of(&summary_request.messages), ["system", "user"]);
        let text = summary_request.messages[1].path("content.0.text").js_string();
        assert!(
            text.starts_with("<conversation>\n[User]: go\n</conversation>\n\nThe messages above are a conversation"),
            "{text}"
        );
        assert!(summary_request.options.get("reasoning").is_undefined());
        // The request after it: the tools' system message replayed, the summary, then the kept call and its result.
        assert_eq!(w.request_roles(2), ["system", "user", "assistant", "toolResult"]);
        let sent = w.request_texts(2);
        assert!(sent[1].contains("<summary>\nSUMMARY: the user said go; work ran once.\n</summary>"), "{sent:?}");
        // The transcript keeps everything, the entry after the tool result.
        assert_eq!(roles(&result), ["system", "user", "assistant", "toolResult", "compactionSummary", "assistant"]);
        let entry = result.at(4);
        assert_eq!(entry.str_at("summary"), "SUMMARY: the user said go; work ran once.");
        assert_eq!(entry.num_at("tokensBefore"), 700.0);
        assert_eq!(entry.num_at("keptMessages"), 2.0);
        assert_eq!(entry.str_at("reason"), "threshold");
        assert_eq!(entry.get("usage").num_at("totalTokens"), 40.0);
        let start = w.events("compaction_start")[0].to_json();
        assert_eq!(
            start,
            json!({ "type": "compaction_start", "reason": "threshold", "tokensBefore": 700, "messages": 1 })
        );
        let end = &w.events("compaction_end")[0];
        assert!(end.get("message").same(&entry));
        assert_eq!(end.num_at("tokensAfter"), entry.num_at("tokensAfter"));
        assert!(end.num_at("tokensAfter") < 700.0 && end.num_at("tokensAfter") > 200.0);
        w.assert_clean();
    }

    #[test]
    fn under_the_threshold_nothing_changes() {
        let replies =
            vec![with_usage(reply_calls(vec![call("c1", "work", json!({}))]), 100.0), with_usage(reply("done"), 300.0)];
        let (w, result) = run(replies, compaction(json!({})));
        assert_eq!(w.requests(), 2);
        assert!(w.events("compaction_start").is_empty());
        assert_eq!(roles(&result), ["system", "user", "assistant", "toolResult", "assistant"]);
    }

    #[test]
    fn the_drop_strategy_and_a_callers_summarize_make_no_request() {
        let replies = || {
            vec![with_usage(reply_calls(vec![call("c1", "work", json!({}))]), 500.0), with_usage(reply("done"), 300.0)]
        };
        let (w, result) = run(replies(), compaction(json!({ "summarize": "drop" })));
        assert_eq!(w.requests(), 2);
        assert_eq!(result.at(4).str_at("summary"), "1 earlier message was removed to fit the context window.");
        assert!(!result.at(4).has_own("usage"));

        let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let log = seen.clone();
        let summarize = TV::func(move |_h, _this, args| {
            log.borrow_mut().push((roles_of(&args[0].items()), args[1].get("reason").js_string()));
            Ok(TV::from_json(&json!({ "summary": "mine", "usage": { "totalTokens": 7 } })))
        });
        let c = compaction(json!({}));
        c.set("summarize", summarize);
        let (w, result) = run(replies(), c);
        assert_eq!(w.requests(), 2);
        assert_eq!(*seen.borrow(), vec![(strs(&["user"]), "threshold".to_string())]);
        assert_eq!(result.at(4).str_at("summary"), "mine");
        assert_eq!(result.at(4).get("usage").num_at("totalTokens"), 7.0);
    }

    #[test]
    fn a_failed_summary_is_not_a_failed_run() {
        let replies = vec![
            with_usage(reply_calls(vec![call("c1", "work", json!({}))]), 500.0),
            crate::core::test_host::faux_assistant_error(vec![], "upstream 500"),
            with_usage(reply("done"), 300.0),
        ];
        let (w, result) = run(replies, compaction(json!({})));
        assert_eq!(w.requests(), 3);
        let end = w.events("compaction_end")[0].to_json();
        assert_eq!(
            end,
            json!({ "type": "compaction_end", "reason": "threshold", "errorMessage": "Compaction failed: upstream 500", "tokensBefore": 700 })
        );
        assert_eq!(roles(&result), ["system", "user", "assistant", "toolResult", "assistant"]);
        assert_eq!(w.request_roles(2), ["system", "user", "assistant", "toolResult"]);
    }

    #[test]
    fn without_the_option_an_entry_in_the_transcript_is_sent_as_it_is() {
        let w = World::with(vec![reply("ok")]);
        let entry =
            TV::from_json(&json!({ "role": "compactionSummary", "summary": "s", "tokensBefore": 1, "tokensAfter": 1,
            "keptMessages": 0, "reason": "threshold", "timestamp": 1 }));
        w.prompt(vec![user("next")], ctx(vec![user("old"), entry]), config(&[]));
        // The test convertToLlm keeps the LLM roles only: the old message goes, the entry does not.
        assert_eq!(w.request_texts(0), ["old", "next"]);
    }

    #[test]
    fn a_later_run_sends_the_projection_of_a_compacted_transcript() {
        let w = World::with(vec![reply("ok")]);
        let entry =
            TV::from_json(&json!({ "role": "compactionSummary", "summary": "s", "tokensBefore": 1, "tokensAfter": 1,
            "keptMessages": 1, "reason": "threshold", "timestamp": 1 }));
        let cfg = config(&[("compaction", TV::bool(true))]);
        w.prompt(vec![user("next")], ctx(vec![user("old"), user("kept"), entry]), cfg);
        assert_eq!(w.request_roles(0), ["user", "user", "user"]);
        let texts = w.request_texts(0);
        assert!(texts[0].contains("<summary>\ns\n</summary>"));
        assert_eq!(texts[1..], strs(&["kept", "next"]));
    }

    /// D2: an abort while the summary is written ends the run; no entry, the abort's text on `compaction_end`.
    #[test]
    fn an_abort_during_the_summary_ends_the_run() {
        let w = World::with(vec![with_usage(reply_calls(vec![call("c1", "work", json!({}))]), 500.0)]);
        let (controller, signal) = w.controller();
        let aborter = w.aborter(&controller);
        let summarize = TV::func(move |h, _this, _args| {
            h.call_sync(&aborter, &TV::Undefined, &[])?;
            Ok(TV::str("too late"))
        });
        let c = compaction(json!({}));
        c.set("summarize", summarize);
        let tools = vec![tool("work", exec_ok(&"r".repeat(800)))];
        let cfg = config(&[("model", small_model()), ("compaction", c)]);
        let result = w.exec(RunSpec::prompt(vec![user("go")], ctx_tools(vec![], tools), cfg).signal(&signal)).unwrap();
        let mut labels = first_turn();
        labels.extend(strs(&[
            "compaction_start",
            "compaction_end",
            "message_start:assistant",
            "message_end:assistant",
            "turn_end",
            "agent_end",
        ]));
        assert_eq!(w.labels(), labels);
        assert_eq!(w.requests(), 1);
        assert_eq!(w.events("compaction_end")[0].str_at("errorMessage"), "Request was aborted");
        let last = result.items().last().cloned().unwrap();
        assert_eq!(last.str_at("stopReason"), "aborted");
        assert_eq!(roles(&result), ["system", "user", "assistant", "toolResult", "assistant"]);
        w.assert_clean();
    }

    /// L-3.13.10: the summary request counts as a model request and its tokens count.
    #[test]
    fn limits_count_the_summary_request() {
        let replies = vec![
            with_usage(reply_calls(vec![call("c1", "work", json!({}))]), 500.0),
            with_usage(reply("SUMMARY"), 40.0),
            with_usage(reply_calls(vec![call("c2", "work", json!({}))]), 300.0),
            with_usage(reply("never"), 1.0),
        ];
        let w = World::with(replies);
        let tools = vec![tool("work", exec_ok(&"r".repeat(800)))];
        let limits = TV::from_json(&json!({ "maxModelRequests": 3 }));
        let cfg = config(&[("model", small_model()), ("compaction", compaction(json!({}))), ("limits", limits)]);
        w.prompt(vec![user("go")], ctx_tools(vec![], tools), cfg);
        // Requests: reply 1, the summary, reply 2; the limit of 3 stops the run before a fourth.
        assert_eq!(w.requests(), 3);
        let reached = w.events("agent_end")[0].get("limitReached").to_json();
        assert_eq!(reached["limit"], json!("maxModelRequests"));
        assert_eq!(reached["value"], json!(3));

        let w = World::with(vec![
            with_usage(reply_calls(vec![call("c1", "work", json!({}))]), 500.0),
            with_usage(reply("SUMMARY"), 40.0),
            with_usage(reply_calls(vec![call("c2", "work", json!({}))]), 300.0),
            with_usage(reply("never"), 1.0),
        ]);
        let tools = vec![tool("work", exec_ok(&"r".repeat(800)))];
        let limits = TV::from_json(&json!({ "maxTokens": 840 }));
        let cfg = config(&[("model", small_model()), ("compaction", compaction(json!({}))), ("limits", limits)]);
        w.prompt(vec![user("go")], ctx_tools(vec![], tools), cfg);
        // 500 + 40 + 300 = 840 tokens: at the limit after reply 2, counting the summary's 40.
        assert_eq!(w.requests(), 3);
        let reached = w.events("agent_end")[0].get("limitReached").to_json();
        assert_eq!(reached["limit"], json!("maxTokens"));
        assert_eq!(reached["value"], json!(840));
    }
}

#[test]
fn a_system_prompt_without_a_timestamp_is_not_dropped_by_the_projection() {
    let h = TestHost::new();
    let system = tv(json!({ "role": "system", "content": "You are terse." }));
    let entry = compaction::Entry {
        summary: "s",
        tokens_before: 0.0,
        tokens_after: 0.0,
        kept_messages: 1,
        reason: "threshold",
        usage: None,
        timestamp: 1.0,
    }
    .to_value(&h);
    let transcript = vec![system.clone(), user("a"), user("b"), entry];
    let p = compaction::project(&h, &transcript).unwrap();
    assert_eq!(roles(&h, &p.messages), ["system", "user", "user"]);
    assert!(p.messages[0].same(&system));
}
