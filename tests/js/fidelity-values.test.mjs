// Issue 13, faithful values: lone UTF-16 surrogates, deep nesting and argument copies reach tools,
// validation, lookup by name and snapshots exactly as JS holds them. Every case but the snapshot
// ones runs against the reference too (AGENT_LOOP_IMPL=reference): its outcome is the expectation.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Agent, IS_REFERENCE, agentLoop, createAssistantMessageEventStream, validateToolArguments } from "./impl.mjs";
import { assistant, collect, config, okResult, tool, toolCall, userMessage } from "./faux.mjs";

const T = { timeout: 20000 };
const STACK = "Maximum call stack size exceeded";
const validate = (parameters, args) => validateToolArguments({ name: "t", parameters }, { name: "t", arguments: args });
const message = (f) => {
  try {
    f();
  } catch (e) {
    // The stack overflow is a RangeError in the reference (structuredClone's or pi-schema's compile's).
    if (e.message === STACK) assert.ok(e instanceof RangeError, "a RangeError");
    return e.message;
  }
  return "no error";
};
const deepObject = (n) => {
  let v = 1;
  for (let i = 0; i < n; i++) v = { a: v };
  return v;
};
const deepArray = (n) => {
  let v = 1;
  for (let i = 0; i < n; i++) v = [v];
  return v;
};
/** JSON text of plain data at any depth (JSON.stringify's own recursion stops near 4,000 levels). */
const deepText = (root) => {
  const out = [];
  const todo = [root];
  while (todo.length > 0) {
    const v = todo.pop();
    if (typeof v === "string" && v.startsWith("\0")) out.push(v.slice(1));
    else if (v === null || typeof v !== "object") out.push(JSON.stringify(v));
    else {
      const items = Array.isArray(v)
        ? v.map((x) => [null, x])
        : Object.entries(v).filter(([, x]) => x !== undefined).map(([k, x]) => [k, x]);
      const steps = [Array.isArray(v) ? "\0[" : "\0{"];
      items.forEach(([k, x], i) => {
        if (i > 0) steps.push("\0,");
        if (k !== null) steps.push(`\0${JSON.stringify(k)}:`);
        steps.push(x);
      });
      steps.push(Array.isArray(v) ? "\0]" : "\0}");
      todo.push(...steps.reverse());
    }
  }
  return out.join("");
};
/** How deep a value nests (arrays and objects), counted without recursion. */
const depthOf = (v) => {
  let d = 0;
  while (v !== null && typeof v === "object") {
    v = Array.isArray(v) ? v[0] : v.a;
    d++;
  }
  return d;
};

/** A provider handing over each reply as it is: the argument objects themselves, never a JSON copy. */
function direct(replies) {
  const pending = [...replies];
  return () => {
    const stream = createAssistantMessageEventStream();
    const message = pending.shift() ?? assistant("no more replies");
    setImmediate(() => {
      stream.push({ type: "start", partial: { ...message, content: [] } });
      stream.push({ type: "done", reason: message.stopReason, message });
    });
    return stream;
  };
}

async function runCalls(calls, tools) {
  const streamFn = direct([assistant(calls), assistant("done")]);
  const out = await collect(agentLoop([userMessage("go")], { messages: [], tools }, config(), undefined, streamFn));
  const results = out.events
    .filter((e) => e.type === "tool_execution_end")
    .map((e) => ({ id: e.toolCallId, isError: e.isError, text: e.result.content[0]?.text }))
    .sort((a, b) => (a.id < b.id ? -1 : 1));
  return { ...out, results };
}

test("a lone surrogate validates as the reference: lengths, pattern, enum, required, propertyNames", T, () => {
  const ok = validate(
    { type: "object", properties: { a: { type: "string", minLength: 2, maxLength: 2, pattern: "^x\uD800$" } } },
    { a: "x\uD800" },
  );
  assert.equal(ok.a, "x\uD800");
  assert.equal(validate({ type: "object", properties: { a: { const: "\uDC00" } } }, { a: "\uDC00" }).a, "\uDC00");
  assert.equal(
    message(() => validate({ type: "object", properties: { a: { enum: ["x\uD800"] } } }, { a: "x\uDBFF" })),
    'Validation failed for tool "t":\n  - a: expected one of ["x\\ud800"]\n\nReceived arguments:\n{\n  "a": "x\\udbff"\n}',
  );
  assert.equal(
    message(() => validate({ type: "object", required: ["k\uD800"] }, { "k\uDBFF": 1 })),
    'Validation failed for tool "t":\n  - k\uD800: missing\n\nReceived arguments:\n{\n  "k\\udbff": 1\n}',
  );
  assert.equal(
    message(() => validate({ type: "object", propertyNames: { maxLength: 1 } }, { "\uD800": 1, ab: 2 })),
    'Validation failed for tool "t":\n  - ab: invalid property name\n\nReceived arguments:\n{\n  "\\ud800": 1,\n  "ab": 2\n}',
  );
  // A pair counts one code point; a coerced value keeps its lone surrogate.
  assert.equal(validate({ type: "object", properties: { a: { maxLength: 1 } } }, { a: "\uD800\uDC00" }).a, "\uD800\uDC00");
  assert.deepEqual(validate({ type: "object", properties: { n: { type: "integer" } } }, { n: "5", s: "\uDFFF" }), {
    n: 5,
    s: "\uDFFF",
  });
});

test("deep arguments validate to the reference's depth and beyond; past our own limit, its stack error", T, () => {
  for (const value of [deepObject(1000), deepArray(2500)]) {
    const out = validate({ type: "object" }, { x: value });
    assert.equal(depthOf(out.x), depthOf(value));
    // Coercion elsewhere takes the full path, which copies the deep member too.
    const coerced = validate({ type: "object", properties: { n: { type: "integer" } } }, { n: "1", x: value });
    assert.equal(coerced.n, 1);
    assert.equal(depthOf(coerced.x), depthOf(value));
  }
  // The reference's structuredClone overflows its stack near 1,900 objects / 3,200 arrays; ours copies any depth
  // and takes it where the schema does not look inside (the common case), else it stops at 10,000 levels.
  for (const value of [deepObject(100000), deepArray(100000)]) {
    if (IS_REFERENCE) assert.equal(message(() => validate({ type: "object" }, { x: value })), STACK);
    else assert.equal(depthOf(validate({ type: "object" }, { x: value }).x), 100000);
    const coercing = { type: "object", properties: { n: { type: "integer" } } };
    assert.equal(message(() => validate(coercing, { n: "1", x: value })), STACK);
  }
  // The instance is fine afterwards.
  assert.deepEqual(validate({ type: "object", properties: { n: { type: "integer" } } }, { n: "2" }), { n: 2 });
});

test("schemas nested past 125 levels validate; far past the reference's depth, its stack error", T, () => {
  const props = (n) => {
    let s = { type: "integer" };
    for (let i = 0; i < n; i++) s = { type: "object", properties: { a: s } };
    return s;
  };
  const items = (n) => {
    let s = { type: "integer" };
    for (let i = 0; i < n; i++) s = { type: "array", items: s };
    return s;
  };
  assert.deepEqual(validate(props(400), {}), {});
  assert.deepEqual(validate(items(1000), []), []);
  assert.equal(depthOf(validate(items(1000), deepArray(1000))), 1000);
  assert.match(message(() => validate(items(1000), deepArray(1001))), /^Validation failed for tool "t":\n {2}- (0\.){999}0: expected integer, got array\n/);
  assert.equal(message(() => validate(props(100000), {})), STACK);
  // Past the reference's own depth on its first call (790 `properties`, 1,206–1,321 `items` here), ours validates.
  if (!IS_REFERENCE) {
    assert.deepEqual(validate(props(1350), {}), {});
    assert.equal(depthOf(validate(items(1350), deepArray(1350))), 1350);
  }
});

test("two tools named x\\uD800 and x\\uDBFF: each call runs its own tool", T, async () => {
  const ran = [];
  const make = (name) => tool(name, async () => (ran.push(name), okResult(name)));
  const { results } = await runCalls(
    [toolCall("c1", "x\uD800", {}), toolCall("c2", "x\uDBFF", {}), toolCall("c3", "x\uDC00", {})],
    [make("x\uD800"), make("x\uDBFF")],
  );
  assert.deepEqual(ran, ["x\uD800", "x\uDBFF"]);
  assert.deepEqual(results, [
    { id: "c1", isError: false, text: "x\uD800" },
    { id: "c2", isError: false, text: "x\uDBFF" },
    { id: "c3", isError: true, text: "Tool x\uDC00 not found" },
  ]);
});

test("an async prepareArguments gives the structuredClone error; execute gets a structuredClone", T, async () => {
  let executed = 0;
  const seen = [];
  const asyncPrep = tool("p", async () => (executed++, okResult()), { prepareArguments: async (a) => a });
  const clones = tool("c", async (id, args) => (seen.push(args), okResult()), {
    parameters: { type: "object" },
  });
  const date = new Date(0);
  const { results, events } = await runCalls(
    [toolCall("c1", "p", { v: 1 }), toolCall("c2", "c", { d: date, m: new Map([[1, 2]]), u: undefined })],
    [asyncPrep, clones],
  );
  assert.equal(executed, 0);
  assert.deepEqual(results, [
    { id: "c1", isError: true, text: "#<Promise> could not be cloned." },
    { id: "c2", isError: false, text: "ok" },
  ]);
  assert.equal(events.at(-1).type, "agent_end");
  const [args] = seen;
  assert.ok(args.d instanceof Date && args.d !== date && args.d.getTime() === 0);
  assert.ok(args.m instanceof Map && args.m.get(1) === 2);
  assert.ok("u" in args && args.u === undefined);
});

test("deep tool-call arguments run the tool (100,000 levels: the reference's stack error, ours runs it)", T, async () => {
  const depths = [];
  const t = tool("deep", async (id, args) => (depths.push(depthOf(args.x)), okResult()), {
    parameters: { type: "object" },
  });
  const { results, events } = await runCalls(
    [
      toolCall("c1", "deep", { x: deepObject(127) }),
      toolCall("c2", "deep", { x: deepObject(1000) }),
      toolCall("c3", "deep", { x: deepArray(2500) }),
      toolCall("c4", "deep", { x: deepArray(100000) }),
    ],
    [t],
  );
  assert.deepEqual(depths, IS_REFERENCE ? [127, 1000, 2500] : [127, 1000, 2500, 100000]);
  assert.deepEqual(
    results.map((r) => [r.isError, r.text]),
    [
      [false, "ok"],
      [false, "ok"],
      [false, "ok"],
      IS_REFERENCE ? [true, STACK] : [false, "ok"],
    ],
  );
  assert.equal(events.at(-1).type, "agent_end");
});

test("snapshot() → restore keeps lone surrogates and deep values exactly", { ...T, skip: IS_REFERENCE && "D8 is new" }, async () => {
  const deep = deepObject(1500);
  const deeper = deepArray(100000); // past what JSON.stringify takes on its own
  const tools = [tool("t\uD800", async () => okResult("r\uDFFF"))];
  const streamFn = direct([assistant([toolCall("c1", "t\uD800", { s: "\uDBFF!", "k\uDC00": deep, d: deeper })]), assistant("a\uD83D")]);
  const agent = new Agent({
    streamFn,
    initialState: { model: { id: "m", api: "faux", provider: "faux" }, tools },
  });
  await agent.prompt(userMessage("u\uD800"));
  const snap = agent.snapshot();
  const text = deepText(snap);
  for (const input of [snap, text]) {
    const restored = Agent.restore(input, { streamFn, tools });
    assert.equal(deepText(restored.snapshot()), text);
    const [user, call, result, reply] = restored.state.messages.filter((m) => m.role !== "system");
    assert.equal(user.content, "u\uD800");
    assert.equal(call.content[0].name, "t\uD800");
    assert.equal(call.content[0].arguments.s, "\uDBFF!");
    assert.equal(depthOf(call.content[0].arguments["k\uDC00"]), 1500);
    assert.equal(depthOf(call.content[0].arguments.d), 100000);
    assert.equal(result.content[0].text, "r\uDFFF");
    assert.equal(reply.content[0].text, "a\uD83D");
  }
});
