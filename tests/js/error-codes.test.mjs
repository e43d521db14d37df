// E-8.6 (issue 42): the library's own errors have a class and a stable code. Each code is caused for real here, and
// its error is checked: the exact message (as before: nothing but the code changed), plain Error/TypeError as before,
// `code`, `instanceof` its class and AgentLoopError and no other class; errors of the ui and models entries are
// `instanceof` the main entry's classes, through ESM and CommonJS; a callback's own error is not one of ours. The core's
// table (src/core/errors.rs) and brand (snippets/values.js) are held to pkg-template/errors.js's.
// Ours only: the reference has no codes (its messages, where it has the same refusals, are compared elsewhere).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { test } from "node:test";
import { inspect } from "node:util";
import { join } from "node:path";
import { IS_REFERENCE } from "./impl.mjs";
import { ROOT as REPO, runInChromium, runInWorkerd } from "../runtimes.mjs";
import { assistant, createFaux, model, text, toolCall, userMessage } from "./faux.mjs";

const skip = IS_REFERENCE && "ours only: the reference's errors have no class or code";
const ROOT = new URL("../../", import.meta.url);
const read = (path) => readFileSync(new URL(path, ROOT), "utf8");
const lib = IS_REFERENCE ? {} : await import("../../pkg/dist/node/index.mjs");
const CLASSES = [
  ["INVALID_ARGUMENT", "InvalidArgumentError", TypeError],
  ["AGENT_BUSY", "AgentBusyError", Error],
  ["APPROVALS_PENDING", "ApprovalsPendingError", Error],
  ["INVALID_APPROVAL", "InvalidApprovalError", Error],
  ["CANNOT_CONTINUE", "CannotContinueError", Error],
  ["LIMIT_REACHED", "LimitReachedError", Error],
  ["RESTORE_REFUSED", "RestoreRefusedError", Error],
  ["NOT_SERIALIZABLE", "NotSerializableError", TypeError],
  ["NOT_INITIALIZED", "NotInitializedError", Error],
  ["INSTANCE_FAILED", "InstanceFailedError", Error],
  ["NO_SUCH_MODEL", "NoSuchModelError", Error],
  ["MCP_TOOLS", "McpToolsError", Error],
];

/** `error` is exactly the library's error of `code` with `message`, and of no other kind. */
function assertCoded(error, code, message) {
  const [, name, Base] = CLASSES.find(([c]) => c === code);
  assert.equal(error.message, message);
  assert.equal(Object.getPrototypeOf(error), Base.prototype, `${code}: a plain ${Base.name}, as before`);
  assert.equal(error.code, code);
  assert.ok(error instanceof lib[name], `${code}: instanceof ${name}`);
  assert.ok(error instanceof lib.AgentLoopError, `${code}: instanceof AgentLoopError`);
  for (const [other, otherName] of CLASSES) if (other !== code) assert.ok(!(error instanceof lib[otherName]), `${code} is not ${otherName}`);
  // It prints and serializes as before: the code is not enumerable.
  assert.deepEqual(Object.keys(error), []);
  assert.ok(inspect(error).startsWith(`${Base.name}: ${message}\n`), inspect(error).split("\n")[0]);
}

async function rejection(promise) {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail("expected a rejection");
}

function thrown(f) {
  try {
    f();
  } catch (error) {
    return error;
  }
  assert.fail("expected a throw");
}

test("E-8.6: the core's codes (src/core/errors.rs) and brand (snippets/values.js) are errors.js's; index.d.ts declares every class", { skip }, () => {
  const rust = [...read("src/core/errors.rs").matchAll(/^\s+\((\w+), (true|false)\),$/gm)].map((m) => [m[1], m[2] === "true"]);
  const js = Object.fromEntries([...read("pkg-template/errors.js").matchAll(/^ {2}(\w+): \["(\w+)", (true|false)\],$/gm)].map((m) => [m[1], [m[2], m[3] === "true"]]));
  assert.ok(rust.length >= 8, `the core's codes: ${rust}`);
  for (const [code, isType] of rust) assert.deepEqual(js[code]?.[1], isType, `${code}: in errors.js, TypeError ${isType}`);
  assert.deepEqual(
    Object.entries(js).map(([code, [name, isType]]) => [code, name, isType ? TypeError : Error]),
    CLASSES,
  );
  assert.deepEqual(Object.keys(lib.ERROR_CODES), CLASSES.map(([c]) => c));
  const brands = (path) => [...read(path).matchAll(/Symbol\.for\("(agent-loop-wasm\.errorCode)"\)/g)].map((m) => m[1]);
  assert.deepEqual(brands("src/js/snippets/values.js"), brands("pkg-template/errors.js"));
  assert.equal(brands("pkg-template/errors.js").length, 1);
  const dts = read("pkg-template/index.d.ts");
  for (const [code, name, Base] of CLASSES) {
    assert.match(dts, new RegExp(`export declare class ${name} extends ${Base.name} \\{\\n.*\\n  readonly code: "${code}";\\n  static readonly code: "${code}";\\n\\}`), name);
    assert.equal(lib[name].code, code);
    assert.equal(lib[name].name, name);
  }
});

test("E-8.6: every code the main entry throws, caused for real, with its message, class and code", { skip }, async () => {
  const { Agent } = lib;
  // INVALID_ARGUMENT: a core check and a check of the JS facade.
  assertCoded(thrown(() => lib.agentLoop(1)), "INVALID_ARGUMENT", "agentLoop: prompts must be an array");
  assertCoded(thrown(() => new Agent().events({ after: "x" })), "INVALID_ARGUMENT", "Agent.events: options.after must be a finite number (the seq of the last item seen)");
  // CANNOT_CONTINUE, AGENT_BUSY.
  assertCoded(await rejection(new Agent().continue()), "CANNOT_CONTINUE", "No messages to continue from");
  const slow = createFaux([assistant([text("done")])], { delayMs: 5 });
  const busy = new Agent({ initialState: { model: model() }, streamFn: slow.streamFn });
  const first = busy.prompt("one");
  assertCoded(await rejection(busy.prompt("two")), "AGENT_BUSY", "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.");
  await first;
  // APPROVALS_PENDING, INVALID_APPROVAL.
  const gate = { name: "gate", label: "gate", description: "d", parameters: { type: "object" }, needsApproval: true, execute: async () => ({ content: [text("ran")], details: {} }) };
  const faux = createFaux([assistant([toolCall("c1", "gate"), toolCall("c2", "gate")], { stopReason: "toolUse" }), assistant([text("ok")])]);
  const paused = new Agent({ initialState: { model: model(), tools: [gate] }, streamFn: faux.streamFn });
  await paused.prompt("go");
  assertCoded(await rejection(paused.prompt("again")), "APPROVALS_PENDING", "Agent has tool calls waiting for approval (c1, c2): approve() or deny() each of them first, or reset()");
  assertCoded(await rejection(paused.approve("nope")), "INVALID_APPROVAL", 'Agent.approve: no tool call "nope" is waiting for approval');
  await paused.approve("c1");
  assertCoded(await rejection(paused.deny("c1")), "INVALID_APPROVAL", 'Agent.deny: tool call "c1" was already approved');
  assertCoded(await rejection(paused.continue()), "APPROVALS_PENDING", "Agent has tool calls waiting for approval (c2): approve() or deny() each of them first, or reset()");
  // LIMIT_REACHED: the agent's totals passed its totalLimits.
  const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
  const spent = createFaux([assistant([text("a")], { usage })]);
  const limited = new Agent({ initialState: { model: model() }, streamFn: spent.streamFn, totalLimits: { maxTokens: 10 } });
  await limited.prompt("go");
  const limit = await rejection(limited.prompt("more"));
  assertCoded(limit, "LIMIT_REACHED", limit.message);
  assert.match(limit.message, /^Agent\.prompt: .*raise agent\.totalLimits\.maxTokens to run again$/);
  // RESTORE_REFUSED, NOT_SERIALIZABLE.
  assertCoded(thrown(() => Agent.restore({})), "RESTORE_REFUSED", "Agent.restore: not an agent-loop-wasm snapshot");
  const odd = new Agent({ initialState: { messages: [userMessage("x", 1n)] } });
  assertCoded(thrown(() => odd.snapshot()), "NOT_SERIALIZABLE", "Agent.snapshot: messages[0].timestamp is not JSON-serializable");
});

test("E-8.6: a caller's own error is not one of ours, and passes through unchanged", { skip }, () => {
  const mine = new Error("mine");
  const context = {
    get messages() {
      throw mine;
    },
  };
  const error = thrown(() => lib.agentLoop([], context, { model: model(), convertToLlm: (m) => m }));
  assert.equal(error, mine);
  assert.ok(!(error instanceof lib.AgentLoopError));
  assert.equal(error.code, undefined);
  // Nor is a foreign error that happens to have a code of the same name.
  assert.ok(!(Object.assign(new Error("x"), { code: "AGENT_BUSY" }) instanceof lib.AgentBusyError));
  assert.ok(!(Object.assign(new Error("x"), { code: "AGENT_BUSY" }) instanceof lib.AgentLoopError));
});

test("E-8.6: the ui and models entries' errors are instanceof the main entry's classes, through ESM and CommonJS", { skip }, async () => {
  const require = createRequire(import.meta.url);
  const uiEsm = await import("../../pkg/dist/node/ui.mjs");
  const uiCjs = require("../../pkg/dist/node/ui.cjs");
  const models = await import("../../pkg/dist/node/models.mjs");
  const mainCjs = require("../../pkg/dist/node/index.cjs");
  for (const ui of [uiEsm, uiCjs]) {
    const error = thrown(() => ui.toUIMessages(5));
    assertCoded(error, "INVALID_ARGUMENT", "toUIMessages: agentMessages must be an array of agent messages (agent.state.messages), got number");
    assert.ok(error instanceof mainCjs.InvalidArgumentError);
  }
  assertCoded(thrown(() => models.getModel("openai", "gpt-nope")), "NO_SUCH_MODEL", thrown(() => models.getModel("openai", "gpt-nope")).message);
  assert.match(thrown(() => models.getModel("openai", "gpt-nope")).message, /^getModel: no model "gpt-nope" for provider "openai"; /);
  // A class constructed by a caller is branded too.
  const own = new lib.AgentBusyError("busy");
  assert.equal(own.code, "AGENT_BUSY");
  assert.ok(own instanceof mainCjs.AgentLoopError && own instanceof lib.AgentBusyError);
  assert.equal(new lib.AgentLoopError("x", "LIMIT_REACHED").code, "LIMIT_REACHED");
  assert.throws(() => new lib.AgentLoopError("x", "NOPE"), { name: "RangeError", message: "AgentLoopError: no error code NOPE" });
});

test("E-8.6: agent-loop-wasm/web before init() throws NotInitializedError", { skip }, async () => {
  const web = await import("../../pkg/dist/web/slim.js");
  const error = thrown(() => new web.Agent());
  assertCoded(error, "NOT_INITIALIZED", 'agent-loop-wasm is not initialized: await init() from "agent-loop-wasm/web" first');
  assert.ok(error instanceof web.NotInitializedError);
});

/** What a page and a Worker check: a core error and a ui entry error against the main entry's classes. */
const RUNTIME_MAIN = `import * as lib from "agent-loop-wasm";
import * as ui from "./pkg/dist/web/ui.js";
const row = (e) => [e.code, e.constructor.name, e instanceof lib.AgentLoopError, e.message];
export default async () => {
  const rows = [];
  try { await new lib.Agent().continue(); } catch (e) { rows.push([...row(e), e instanceof lib.CannotContinueError]); }
  try { ui.toUIMessages(5); } catch (e) { rows.push([...row(e), e instanceof lib.InvalidArgumentError]); }
  return rows;
};
`;
const RUNTIME_ROWS = [
  ["CANNOT_CONTINUE", "Error", true, "No messages to continue from", true],
  ["INVALID_ARGUMENT", "TypeError", true, "toUIMessages: agentMessages must be an array of agent messages (agent.state.messages), got number", true],
];

// playwright-core exits the process on Node < 20 (the Node 18 pass of scripts/test): Chromium runs on Node 20+.
const NODE_MAJOR = Number(process.versions.node.split(".")[0]);
const chromiumSkip = skip || (NODE_MAJOR < 20 && `playwright-core needs Node 20+ (this is ${process.version}); the Chromium run is covered on Node 20+`);

test("E-8.6: in Chromium, the core's and the ui entry's errors are instanceof the main entry's classes", { skip: chromiumSkip, timeout: 120_000 }, async () => {
  const { result, problems } = await runInChromium({ pkgDir: join(REPO, "pkg"), files: {}, main: RUNTIME_MAIN });
  assert.deepEqual(problems, []);
  assert.deepEqual(result, RUNTIME_ROWS, "Chromium");
});

test("E-8.6: in workerd, the core's and the ui entry's errors are instanceof the main entry's classes", { skip, timeout: 120_000 }, async () => {
  assert.deepEqual(await runInWorkerd({ pkgDir: join(REPO, "pkg"), files: {}, main: RUNTIME_MAIN }), RUNTIME_ROWS, "workerd");
});
