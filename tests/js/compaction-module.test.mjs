// The JS twin of compaction (pkg-template/compaction.js, issue 45, SPEC L-3.13) on its own, no build needed: every
// assertion of the Rust unit tests in src/core/tests/compaction.rs (read_options aside: validation stays in Rust) with
// the same inputs and expected values, then `plan`, `entry` and `summarize` (drop, a function, a scripted stream).
import { test } from "node:test";
import assert from "node:assert/strict";
import * as compaction from "../../pkg-template/compaction.js";

const { ROLE, PREFIX, SUFFIX, SYSTEM_PROMPT, INSTRUCTIONS, UPDATE_INSTRUCTIONS } = compaction;
const { plan, project, entry, summarize, estimate, messageChars, cut, serialize, requestText, dropSummary, projection } =
  compaction;

const user = (text) => ({ role: "user", content: [{ type: "text", text }], timestamp: 1 });
const assistant = (text, totalTokens) => ({
  role: "assistant",
  content: [{ type: "text", text }],
  stopReason: "stop",
  usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens },
  timestamp: 1,
});
const calls = (ids) => ({
  role: "assistant",
  content: ids.map((id) => ({ type: "toolCall", id, name: "read", arguments: { path: "a.txt" } })),
  stopReason: "toolUse",
  usage: { totalTokens: 0 },
  timestamp: 1,
});
const result = (id, text) => ({
  role: "toolResult",
  toolCallId: id,
  toolName: "read",
  content: [{ type: "text", text }],
  isError: false,
  timestamp: 1,
});
const system = (content, tools) => ({
  role: "system",
  content,
  toolsAdded: tools.map((name) => ({ name, description: "", parameters: {} })),
  timestamp: 7,
});
const roles = (messages) => messages.map((m) => m.role);
/** An entry as Rust's `Entry::to_value` writes it. */
const makeEntry = (summary, tokensBefore, tokensAfter, keptMessages, reason, timestamp) => ({
  role: ROLE,
  summary,
  tokensBefore,
  tokensAfter,
  keptMessages,
  reason,
  timestamp,
});

/** Awaits `promise` and checks it rejects with an Error whose message is exactly `message`. */
async function rejectsWith(promise, message) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof Error, `not an Error: ${e}`);
    assert.equal(e.message, message);
    return true;
  });
}

// ---- the Rust unit tests, one by one

test("L-3.13.5 the threshold is a share of the window or a token count (through plan)", () => {
  // Estimate 3200 or 3201 (the reply's usage); keepRecentTokens 0 so that the cut always finds the first message.
  const at = (tokens) => [user("a"), assistant("b", tokens)];
  const keep0 = { keepRecentTokens: 0 };
  const window4000 = { contextWindow: 4000 };
  assert.equal(plan(at(3200), keep0, window4000), null);
  assert.equal(plan(at(3201), keep0, window4000).tokensBefore, 3201);
  const tokens = { trigger: { tokens: 1000 }, keepRecentTokens: 0 };
  assert.equal(plan(at(1000), tokens, window4000), null);
  assert.equal(plan(at(1001), tokens, window4000).tokensBefore, 1001);
  // No known window: nothing to compact against.
  assert.equal(plan(at(1001), tokens, {}), null);
  assert.equal(plan(at(1001), tokens, { contextWindow: NaN }), null);
  assert.equal(plan(at(1001), tokens, { contextWindow: 0 }), null);
  assert.equal(plan(at(1001), tokens, undefined), null);
  // The option's window wins over the model's (`full.window(Some(128_000)) == Some(4000)`).
  assert.equal(plan(at(3201), { ...keep0, contextWindow: 4000 }, { contextWindow: 128000 }).tokensBefore, 3201);
  assert.equal(plan(at(3201), keep0, { contextWindow: 128000 }), null);
});

test("L-3.13.1 the default kept budget is a quarter of the window, at most 20,000 (through plan)", () => {
  const every = { trigger: { tokens: 1 } };
  // 1000 + 999 + 1 tokens: a budget of 1000 (window 4000) keeps the last two; 1001 (window 4004) reaches the first.
  const small = [user("a".repeat(4000)), user("b".repeat(3996)), user("c".repeat(4))];
  assert.equal(plan(small, every, { contextWindow: 4000 }).keptMessages, 2);
  assert.equal(plan(small, every, { contextWindow: 4004 }), null);
  // 30000 + 20000 tokens, window 200,000: the budget is 20,000 (not 50,000), so the first is summarized.
  const big = [user("x".repeat(120000)), user("y".repeat(80000))];
  assert.equal(plan(big, every, { contextWindow: 200000 }).keptMessages, 1);
  assert.equal(plan(big, { ...every, keepRecentTokens: 50000 }, { contextWindow: 200000 }), null);
});

test("L-3.13.3 the estimate is the last reported usage plus four characters a token after it", () => {
  // No usage: every message by characters ("abcd" 1 token, 5 characters 2 tokens).
  assert.equal(estimate([user("abcd"), user("abcde")], 0), 3);
  // The last assistant's usage, plus what came after it; what came before is inside its usage.
  const messages = [user("x".repeat(4000)), assistant("ok", 1500), result("c1", "y".repeat(400)), user("hi")];
  assert.equal(estimate(messages, 0), 1500 + 100 + 1);
  // Usage from before the last compaction entry is not trusted: characters instead.
  assert.equal(estimate(messages, 2), 1000 + 1 + 100 + 1);
  // An errored reply's usage is not trusted; nor one of zero tokens.
  const errored = { role: "assistant", content: [], stopReason: "error", usage: { totalTokens: 9999 } };
  assert.equal(estimate([assistant("a", 10), errored, user("abcd")], 0), 11);
  // Characters as JS counts them: "😀" is 2 UTF-16 units; an image 4,800 characters; a tool call its name and
  // arguments' JSON; thinking counts, a system message its content and declared tools.
  const mixed = {
    role: "user",
    content: [{ type: "text", text: "😀😀" }, { type: "image", data: "", mimeType: "image/png" }],
  };
  assert.equal(messageChars(mixed), 4 + 4800);
  const call = {
    role: "assistant",
    content: [{ type: "thinking", thinking: "hmm" }, { type: "toolCall", id: "c", name: "read", arguments: { a: 1 } }],
  };
  assert.equal(messageChars(call), 3 + 4 + 7);
  const sys = system("You are terse.", ["read"]);
  assert.equal(messageChars(sys), 14 + JSON.stringify(sys.toolsAdded).length);
  assert.equal(messageChars({ role: "custom", content: "zzzz" }), 0);
});

test("L-3.13.4 a transcript without an entry is sent as it is", () => {
  const messages = [user("a"), assistant("b", 5)];
  const p = projection(messages);
  assert.equal(p.liveFrom, 0);
  assert.equal(p.previousSummary, undefined);
  assert.equal(p.messages.length, 2);
  assert.ok(p.messages[0] === messages[0] && p.messages[1] === messages[1]);
  // What a request sends: the array itself.
  assert.equal(project(messages), messages);
});

test("L-3.13.4 the projection sends the head, the summary, the kept messages and what came after", () => {
  const e = makeEntry("## Goal\nread files", 3500, 900, 3, "threshold", 42);
  // system, user, calls, result | kept: calls, result, assistant | entry | after: user
  const transcript = [
    system("You are terse.", ["read"]),
    user("read a.txt"),
    calls(["c1"]),
    result("c1", "old"),
    calls(["c2"]),
    result("c2", "new"),
    assistant("done", 900),
    e,
    user("and b.txt?"),
  ];
  const p = projection(transcript);
  assert.deepEqual(roles(p.messages), ["system", "user", "assistant", "toolResult", "assistant", "user"]);
  assert.equal(p.liveFrom, 2);
  assert.equal(p.trustedFrom, 5);
  assert.equal(p.previousSummary, "## Goal\nread files");
  // The head is the replayed system message; the summary a user message in pi-coding-agent's words.
  assert.equal(p.messages[0].content, "You are terse.");
  assert.equal(
    p.messages[1].content[0].text,
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n## Goal\nread files\n</summary>",
  );
  assert.equal(p.messages[1].timestamp, 42);
  // The kept and later messages are the transcript's own objects.
  assert.ok(p.messages[2] === transcript[4] && p.messages[5] === transcript[8]);
  // (JS) the head's fields, in Rust's order; `project` answers a fresh array of the same messages.
  assert.deepEqual(p.messages[0], { role: "system", content: "You are terse.", toolsAdded: transcript[0].toolsAdded, timestamp: 7 });
  assert.deepEqual(Object.keys(p.messages[0]), ["role", "content", "toolsAdded", "timestamp"]);
  const sent = project(transcript);
  assert.notEqual(sent, transcript);
  assert.deepEqual(sent, p.messages);
  // The entry itself: every field, in order (written by `entry`).
  const written = entry(transcript.slice(0, 7), { reason: "threshold", tokensBefore: 3500, keptMessages: 3 }, "## Goal\nread files", undefined, 42);
  assert.deepEqual(Object.keys(written), ["role", "summary", "tokensBefore", "tokensAfter", "keptMessages", "reason", "timestamp"]);
});

test("L-3.13.2 a later entry counts its kept messages across an earlier one", () => {
  const first = makeEntry("one", 0, 0, 1, "threshold", 1);
  const second = makeEntry("two", 0, 0, 3, "overflow", 2);
  const transcript = [user("a"), user("b"), first, user("c"), user("d"), second, user("e")];
  const p = projection(transcript);
  // Kept: b (before the first entry), c, d; the first entry itself is never sent.
  const texts = p.messages.map((m) => m.content?.[0]?.text ?? "");
  assert.deepEqual(texts.slice(1), ["b", "c", "d", "e"]);
  assert.ok(texts[0].includes("<summary>\ntwo\n</summary>"));
  assert.equal(p.previousSummary, "two");
});

test("L-3.13.5 the cut keeps recent tokens and never separates a call from its results", () => {
  // Each tool result 100 tokens (400 chars); the calls ~5 tokens each.
  const live = [
    user("start"), // 0
    calls(["c1"]), // 1
    result("c1", "a".repeat(400)), // 2
    calls(["c2", "c3"]), // 3
    result("c2", "b".repeat(400)), // 4
    result("c3", "c".repeat(400)), // 5
    calls(["c4"]), // 6
    result("c4", "d".repeat(400)), // 7
  ];
  // 150 tokens reach back into c4's result and call: kept from the call at 6.
  assert.equal(cut(live, 150), 6);
  // 250: the budget is reached inside the c2/c3 results; never cut at a result: forward to the call at 6.
  assert.equal(cut(live, 250), 6);
  // 320: reached at the call at 3 itself.
  assert.equal(cut(live, 320), 3);
  // 0: reached at the newest message (a result): forward finds nothing, so back to its call at 6.
  assert.equal(cut(live, 0), 6);
  // Everything fits: nothing to summarize.
  assert.equal(cut(live, 10000), null);
  // The cut lands on the first message: nothing before it to summarize.
  assert.equal(cut(live.slice(0, 3), 105), 1);
  assert.equal(cut(live.slice(0, 3), 106), null);
  // Whatever the budget, every kept result's call is kept too.
  for (let budget = 0; budget < 500; budget++) {
    const at = cut(live, budget);
    if (at !== null) assert.notEqual(roles(live)[at], "toolResult", `budget ${budget}`);
  }
});

test("L-3.13.5 only system messages before the cut is nothing to summarize", () => {
  const live = [system("s", []), user("u".repeat(400)), assistant("ok", 0)];
  assert.equal(cut(live, 1), 2);
  assert.equal(cut(live, 101), null);
});

test("L-3.13.6 the summary request serializes the conversation as pi-coding-agent does", () => {
  const messages = [
    system("not sent", []),
    user("read a.txt"),
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "secret" },
        { type: "text", text: "Reading." },
        { type: "toolCall", id: "c1", name: "read", arguments: { path: "a.txt", lines: [1, 2] } },
        { type: "toolCall", id: "c2", name: "ls", arguments: {} },
      ],
    },
    result("c1", "z".repeat(2005)),
    result("c2", ""),
  ];
  const expected = `[User]: read a.txt\n\n[Assistant]: Reading.\n\n[Assistant tool calls]: read(path="a.txt", lines=[1,2]); ls()\n\n[Tool result]: ${"z".repeat(2000)}\n\n[... 5 more characters truncated]`;
  assert.equal(serialize(messages), expected);
  const first = requestText("C", undefined, undefined);
  assert.ok(first.startsWith("<conversation>\nC\n</conversation>\n\nThe messages above are a conversation to summarize."));
  assert.equal(first, `<conversation>\nC\n</conversation>\n\n${INSTRUCTIONS}`);
  const update = requestText("C", "P", undefined);
  assert.ok(update.startsWith("<conversation>\nC\n</conversation>\n\n<previous-summary>\nP\n</previous-summary>\n\nThe messages above are NEW"));
  assert.ok(update.endsWith(UPDATE_INSTRUCTIONS));
  assert.equal(requestText("C", "P", "Mine.").split("\n\n").pop(), "Mine.");
  assert.equal(dropSummary(1), "1 earlier message was removed to fit the context window.");
  assert.equal(dropSummary(12), "12 earlier messages were removed to fit the context window.");
});

test("L-3.13.6 a tool result is cut at two thousand units, never inside a pair", () => {
  const text = `${"a".repeat(1999)}😀tail`;
  // 1999 + 2 + 4 = 2005 units; the pair at 1999..2001 does not fit in 2000.
  assert.equal(serialize([result("c", text)]), `[Tool result]: ${"a".repeat(1999)}\n\n[... 5 more characters truncated]`);
});

// ---- plan and entry: the in-the-loop scenario of the Rust tests (window 800, keepRecentTokens 150)

const work = { name: "work", description: "", parameters: {} };
/** System (the tools), go, a call reporting 500 tokens, its 800-character result: 700 > 0.8 × 800 before request 2. */
function scenario() {
  const call = { ...calls(["c1"]), usage: { input: 500, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 500 } };
  call.content = [{ type: "toolCall", id: "c1", name: "work", arguments: {} }];
  return [{ role: "system", content: "", toolsAdded: [work], timestamp: 1 }, user("go"), call, result("c1", "r".repeat(800))];
}
const smallModel = { id: "m", contextWindow: 800 };

test("L-3.13.5 plan: the messages summarized, the kept count, the estimate before", () => {
  const messages = scenario();
  const p = plan(messages, { keepRecentTokens: 150 }, smallModel);
  assert.deepEqual(Object.keys(p), ["reason", "tokensBefore", "messages", "keptMessages", "previousSummary"]);
  assert.equal(p.reason, "threshold");
  assert.equal(p.tokensBefore, 700);
  assert.equal(p.messages.length, 1);
  assert.equal(p.messages[0], messages[1]);
  assert.equal(p.keptMessages, 2);
  assert.equal(p.previousSummary, undefined);
  // `true`: every default (window 800: keep 200, trigger 640).
  assert.equal(plan(messages, true, smallModel).keptMessages, 2);
  // Under the threshold nothing is planned.
  const under = scenario();
  under[2].usage.totalTokens = 100;
  assert.equal(plan(under, { keepRecentTokens: 150 }, smallModel), null);
});

test("L-3.13.2 entry: its fields in order, tokensAfter the estimate with it in place, usage last when there is one", () => {
  const messages = scenario();
  const p = plan(messages, { keepRecentTokens: 150 }, smallModel);
  const summary = "SUMMARY: the user said go; work ran once.";
  const e = entry(messages, p, summary, { totalTokens: 40 }, 123);
  assert.deepEqual(Object.keys(e), ["role", "summary", "tokensBefore", "tokensAfter", "keptMessages", "reason", "timestamp", "usage"]);
  assert.equal(e.role, ROLE);
  assert.equal(e.summary, summary);
  assert.equal(e.tokensBefore, 700);
  assert.equal(e.keptMessages, 2);
  assert.equal(e.timestamp, 123);
  assert.deepEqual(e.usage, { totalTokens: 40 });
  // The projection with the entry in place: head (the tools) + summary + call + result, by characters (usage from
  // before the entry is not trusted).
  const next = projection([...messages, e]);
  assert.deepEqual(roles(next.messages), ["system", "user", "assistant", "toolResult"]);
  const chars = JSON.stringify([work]).length + (PREFIX + summary + SUFFIX).length;
  assert.equal(e.tokensAfter, Math.ceil(chars / 4) + Math.ceil(6 / 4) + 200);
  assert.ok(e.tokensAfter < 700 && e.tokensAfter > 200);
  // No usage: no field. The messages are not mutated.
  assert.equal("usage" in entry(messages, p, summary, undefined, 1), false);
  assert.equal(messages.length, 4);
});

// ---- summarize

/** A stream function that records its calls and answers each with `answer()`. */
function scripted(answer) {
  const seen = [];
  const streamFn = (model, context, options) => {
    seen.push({ model, context, options });
    return answer();
  };
  return { streamFn, seen };
}
/** An async-iterable stream of `events`. */
const streamOf = (events) => ({
  async *[Symbol.asyncIterator]() {
    for (const event of events) yield event;
  },
});
const reply = (fields) => ({ role: "assistant", content: [{ type: "text", text: "S" }], stopReason: "stop", ...fields });
const planOf = (messages, previousSummary) => ({ reason: "threshold", tokensBefore: 700, messages, keptMessages: 2, previousSummary });
const noStream = () => {
  throw new Error("no request expected");
};

test("L-3.13.6 summarize: drop makes no request", async () => {
  const messages = Array.from({ length: 12 }, (_, i) => user(`m${i}`));
  const out = await summarize(planOf(messages), { summarize: "drop" }, smallModel, noStream, {}, undefined, undefined);
  assert.deepEqual(out, { summary: "12 earlier messages were removed to fit the context window.", usage: undefined });
  const one = await summarize(planOf([user("a")]), { summarize: "drop" }, smallModel, noStream, {}, undefined, undefined);
  assert.equal(one.summary, "1 earlier message was removed to fit the context window.");
});

test("L-3.13.6 summarize: a caller's function", async () => {
  const messages = [user("go")];
  const signal = new AbortController().signal;
  const seen = [];
  const mine = (...args) => {
    seen.push(args);
    return "mine";
  };
  const out = await summarize(planOf(messages, "before"), { summarize: mine }, smallModel, noStream, {}, undefined, signal);
  assert.deepEqual(out, { summary: "mine", usage: undefined });
  assert.equal(seen.length, 1);
  assert.equal(seen[0][0], messages);
  assert.deepEqual(Object.keys(seen[0][1]), ["model", "signal", "previousSummary", "reason"]);
  assert.equal(seen[0][1].model, smallModel);
  assert.equal(seen[0][1].signal, signal);
  assert.equal(seen[0][1].previousSummary, "before");
  assert.equal(seen[0][1].reason, "threshold");
  // An object (awaited), with its usage; a usage that is not an object is none.
  const usage = { totalTokens: 7 };
  const object = await summarize(planOf(messages), { summarize: async () => ({ summary: "mine", usage }) }, smallModel, noStream, {}, undefined, signal);
  assert.equal(object.summary, "mine");
  assert.equal(object.usage, usage);
  const noUsage = await summarize(planOf(messages), { summarize: () => ({ summary: "mine", usage: 7 }) }, smallModel, noStream, {}, undefined, signal);
  assert.equal(noUsage.usage, undefined);
  // A throw, a rejection, anything else than a string or { summary }.
  await rejectsWith(summarize(planOf(messages), { summarize: () => { throw new Error("nope"); } }, smallModel, noStream, {}, undefined, signal), "Compaction failed: nope");
  await rejectsWith(summarize(planOf(messages), { summarize: () => Promise.reject("bad") }, smallModel, noStream, {}, undefined, signal), "Compaction failed: bad");
  const shape = "Compaction failed: compaction.summarize must return a string or { summary, usage? }";
  await rejectsWith(summarize(planOf(messages), { summarize: () => 42 }, smallModel, noStream, {}, undefined, signal), shape);
  await rejectsWith(summarize(planOf(messages), { summarize: () => ["x"] }, smallModel, noStream, {}, undefined, signal), shape);
  await rejectsWith(summarize(planOf(messages), { summarize: () => ({ summary: 3 }) }, smallModel, noStream, {}, undefined, signal), shape);
  const getter = { get summary() { throw new TypeError("no summary"); } };
  await rejectsWith(summarize(planOf(messages), { summarize: () => getter }, smallModel, noStream, {}, undefined, signal), "Compaction failed: no summary");
  // Blank after Rust's trim.
  await rejectsWith(summarize(planOf(messages), { summarize: () => " \n\t\u0085" }, smallModel, noStream, {}, undefined, signal), "Compaction failed: the summary is empty");
  // U+FEFF is not white space to Rust (JS trim would say blank).
  assert.equal((await summarize(planOf(messages), { summarize: () => "\ufeff" }, smallModel, noStream, {}, undefined, signal)).summary, "\ufeff");
});

test("L-3.13.6 summarize: the model, through the stream function, read to its done event", async () => {
  const usage = { totalTokens: 40 };
  const final = reply({ content: [{ type: "text", text: "S1" }, { type: "thinking", thinking: "x" }, { type: "text", text: "S2" }], usage });
  const { streamFn, seen } = scripted(() => streamOf([{ type: "start" }, 5, { type: "text_delta" }, { type: "done", message: final }]));
  // The loop's request options (L-3.5.1): the config's fields, the key from getApiKey (`this` = the config), the
  // identity, reasoning off, the signal.
  const signal = new AbortController().signal;
  const identity = { attribution: { name: "pi" } };
  const asked = [];
  const config = { model: smallModel, reasoning: "high", apiKey: "fallback", getApiKey(provider) { asked.push([this, provider]); return "k"; } };
  const before = Date.now();
  const out = await summarize(planOf([user("go")]), true, smallModel, streamFn, config, identity, signal);
  assert.deepEqual(out, { summary: "S1\nS2", usage });
  assert.equal(out.usage, usage);
  assert.equal(seen.length, 1);
  const { model, context, options } = seen[0];
  assert.equal(model, smallModel);
  assert.deepEqual(Object.keys(options), ["model", "reasoning", "apiKey", "getApiKey", "identity", "signal"]);
  assert.deepEqual({ ...options, getApiKey: undefined }, { model: smallModel, reasoning: undefined, apiKey: "k", getApiKey: undefined, identity, signal });
  assert.deepEqual(asked, [[config, smallModel.provider]]);
  // No key from getApiKey: config.apiKey.
  const fallback = scripted(() => streamOf([{ type: "done", message: final }]));
  await summarize(planOf([user("go")]), true, smallModel, fallback.streamFn, { apiKey: "fallback", getApiKey: () => "" }, identity, signal);
  assert.equal(fallback.seen[0].options.apiKey, "fallback");
  assert.deepEqual(Object.keys(context), ["messages"]);
  assert.deepEqual(roles(context.messages), ["system", "user"]);
  const [sys, usr] = context.messages;
  assert.deepEqual(Object.keys(sys), ["role", "content", "timestamp"]);
  assert.equal(sys.content, SYSTEM_PROMPT);
  assert.deepEqual(Object.keys(usr), ["role", "content", "timestamp"]);
  assert.deepEqual(Object.keys(usr.content[0]), ["type", "text"]);
  const text = usr.content[0].text;
  assert.ok(text.startsWith("<conversation>\n"));
  assert.equal(text, `<conversation>\n[User]: go\n</conversation>\n\n${INSTRUCTIONS}`);
  assert.ok(sys.timestamp >= before && sys.timestamp <= Date.now());
  assert.equal(usr.timestamp, sys.timestamp);

  // A previous summary and the caller's instructions.
  const again = scripted(() => streamOf([{ type: "done", message: reply({}) }]));
  await summarize(planOf([user("go")], "P"), { instructions: "Be brief." }, smallModel, again.streamFn, {}, undefined, undefined);
  assert.equal(again.seen[0].context.messages[1].content[0].text, "<conversation>\n[User]: go\n</conversation>\n\n<previous-summary>\nP\n</previous-summary>\n\nBe brief.");
  // "model" is the default's name.
  const named = scripted(() => streamOf([{ type: "done", message: reply({}) }]));
  assert.equal((await summarize(planOf([user("go")]), { summarize: "model" }, smallModel, named.streamFn, {}, undefined, undefined)).summary, "S");
});

test("L-3.13.6 summarize: the model's failures", async () => {
  const run = (answer) => summarize(planOf([user("go")]), true, smallModel, scripted(answer).streamFn, {}, undefined, undefined);
  const errored = { role: "assistant", content: [], stopReason: "error", errorMessage: "upstream 500" };
  await rejectsWith(run(() => streamOf([{ type: "start" }, { type: "error", error: errored }])), "Compaction failed: upstream 500");
  await rejectsWith(run(() => streamOf([{ type: "error", error: { ...errored, errorMessage: undefined } }])), "Compaction failed: error");
  await rejectsWith(run(() => streamOf([{ type: "done", message: reply({ stopReason: "length" }) }])), "Compaction failed: the summary hit the output token limit");
  await rejectsWith(run(() => streamOf([{ type: "done", message: reply({ stopReason: "aborted" }) }])), "Compaction failed: aborted");
  await rejectsWith(run(() => streamOf([{ type: "done", message: reply({ content: [{ type: "text", text: "  " }] }) }])), "Compaction failed: the summary is empty");
  await rejectsWith(run(() => streamOf([{ type: "start" }])), "Compaction failed: the summary's stream ended without a done or error event");
  await rejectsWith(run(() => ({})), "Compaction failed: the summary's stream ended without a done or error event");
  await rejectsWith(run(() => { throw new Error("boom"); }), "Compaction failed: boom");
  await rejectsWith(run(() => Promise.reject(new Error("later"))), "Compaction failed: later");
  const failing = { async *[Symbol.asyncIterator]() { yield { type: "start" }; throw new Error("cut off"); } };
  await rejectsWith(run(() => failing), "Compaction failed: cut off");
  // A done event without a message: read as Rust reads it (`Reflect.get`), its bare error text.
  await rejectsWith(run(() => streamOf([{ type: "done" }])), "Reflect.get called on non-object");
});

test("L-3.13.6 summarize: a stream with only result()", async () => {
  const usage = { totalTokens: 9 };
  let self;
  const source = {
    async result() {
      self = this;
      return reply({ content: [{ type: "text", text: "from result" }], usage });
    },
  };
  const out = await summarize(planOf([user("go")]), true, smallModel, scripted(() => source).streamFn, {}, undefined, undefined);
  assert.deepEqual(out, { summary: "from result", usage });
  assert.equal(self, source);
  // A result() that answers no object: the stream ended without a final message.
  const empty = { result: () => "text" };
  await rejectsWith(
    summarize(planOf([user("go")]), true, smallModel, scripted(() => empty).streamFn, {}, undefined, undefined),
    "Compaction failed: the summary's stream ended without a done or error event",
  );
  // An iterable that ends without done or error, then its result().
  const both = { ...streamOf([{ type: "start" }]), result: async () => reply({}) };
  assert.equal((await summarize(planOf([user("go")]), true, smallModel, scripted(() => both).streamFn, {}, undefined, undefined)).summary, "S");
});

test("L-3.13.4 a system prompt without a timestamp is not dropped by the projection", () => {
  const system = { role: "system", content: "You are terse." };
  const entry = { role: "compactionSummary", summary: "s", tokensBefore: 0, tokensAfter: 0, keptMessages: 1, reason: "threshold", timestamp: 1 };
  const a = { role: "user", content: "a", timestamp: 1 };
  const b = { role: "user", content: "b", timestamp: 1 };
  const out = project([system, a, b, entry]);
  assert.deepEqual(out.map((m) => m.role), ["system", "user", "user"]);
  assert.equal(out[0], system);
  assert.equal(out[2], b);
});
