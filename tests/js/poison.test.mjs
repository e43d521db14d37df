// E-8.4.2: after a trap the instance is refused. A real trap needs a panic, which the core never
// reaches, so the test makes one glue export throw WebAssembly.RuntimeError (the error a trap
// raises) and checks the facade: that call and every later call throw the poisoned error. This file
// runs in its own process (node --test), so the poisoned instance affects nothing else.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { IS_REFERENCE } from "./impl.mjs";

test("E-8.4.2 ordinary errors do not poison: a TypeError stays a TypeError and the next call works", { skip: IS_REFERENCE && "ours only" }, async () => {
  const lib = await import("../../pkg/dist/node/index.mjs");
  assert.throws(() => lib.agentLoop("x", { messages: [] }, {}), { name: "TypeError", message: "agentLoop: prompts must be an array" });
  const tool = { name: "t", label: "t", description: "t", parameters: { type: "object" }, execute: async () => ({ content: [], details: {} }) };
  assert.deepEqual(lib.validateToolArguments(tool, { type: "toolCall", id: "c", name: "t", arguments: {} }), {});
});

test("E-8.4.2 a trap poisons the instance; later calls throw the poisoned error", { skip: IS_REFERENCE && "ours only" }, async () => {
  const lib = await import("../../pkg/dist/node/index.mjs");
  const glue = createRequire(import.meta.url)("../../pkg/dist/node/agent_loop_wasm.js");
  const tool = { name: "t", label: "t", description: "t", parameters: { type: "object" }, execute: async () => ({ content: [], details: {} }) };
  const call = { type: "toolCall", id: "c", name: "t", arguments: {} };
  assert.deepEqual(lib.validateToolArguments(tool, call), {}, "healthy before");
  const original = glue.validateToolArguments;
  glue.validateToolArguments = () => {
    throw new WebAssembly.RuntimeError("unreachable");
  };
  const expected = "agent-loop-wasm: the WebAssembly instance failed and can no longer be used (RuntimeError: unreachable)";
  assert.throws(() => lib.validateToolArguments(tool, call), { message: expected });
  glue.validateToolArguments = original;
  // Every later call, of any export, is refused with the same error.
  assert.throws(() => lib.validateToolArguments(tool, call), { message: expected });
  assert.throws(() => lib.agentLoop([], { messages: [] }, { model: {}, convertToLlm: (m) => m }), { message: expected });
  assert.throws(() => lib.runToolCall(call, { tools: [tool] }), { message: expected });
  assert.throws(() => new lib.Agent(), { message: expected });
  // E-8.6: the poisoned error is an InstanceFailedError.
  const poisoned = (() => { try { new lib.Agent(); } catch (e) { return e; } })();
  assert.ok(poisoned instanceof lib.InstanceFailedError && poisoned instanceof lib.AgentLoopError);
  assert.equal(poisoned.code, "INSTANCE_FAILED");
});
