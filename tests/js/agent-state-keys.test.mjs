// The Agent's state object is defined once: `KEYS` in src/core/agent_state/mod.rs (the core's own uses of it are held to
// that list by a native test in src/core/tests/layers.rs). Here the JS side is: the facade's JSDoc typedef
// (`AgentStateObject` in pkg-template/agent.js) lists exactly those keys, and every key the facade and the JS twins
// (src/js/**/*.js) read or write on a state object is one of them. Reads the sources; needs no build.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";

const root = fileURLToPath(new URL("../../", import.meta.url));
const read = (path) => readFileSync(join(root, path), "utf8");

/** `KEYS` in order, each `key::CONST` read as the string its constant in `pub mod key` holds. */
function definedKeys() {
  const state = read("src/core/agent_state/mod.rs");
  const consts = new Map([...state.matchAll(/^\s+pub const (\w+): &str = "(\w+)";/gm)].map((m) => [m[1], m[2]]));
  const block = state.slice(state.indexOf("pub const KEYS"), state.indexOf("];", state.indexOf("pub const KEYS")));
  return [...block.matchAll(/\(\s*key::(\w+)\s*,/g)].map((m) => {
    assert.ok(consts.has(m[1]), `KEYS names key::${m[1]}, which pub mod key does not define`);
    return consts.get(m[1]);
  });
}

function typedefKeys() {
  const agent = read("pkg-template/agent.js");
  const start = agent.indexOf("@typedef {object} AgentStateObject");
  assert.ok(start > 0, "pkg-template/agent.js has no AgentStateObject typedef");
  const doc = agent.slice(start, agent.indexOf("*/", start));
  return [...doc.matchAll(/@property \{[^}]*\} (\w+)/g)].map((m) => m[1]);
}

function jsFiles(dir) {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? jsFiles(join(dir, e.name)) : e.name.endsWith(".js") ? [join(dir, e.name)] : [],
  );
}

/** The keys a source uses on a variable named `st`: `st.key`, `Reflect.get(st, "key")`, `Reflect.set(st, "key", …)`,
 *  and the lists the twins pass to helpers (`retainList(st, "key", …)`). */
function keysUsedIn(text) {
  const keys = new Set();
  for (const m of text.matchAll(/\bst\.([A-Za-z_]\w*)/g)) keys.add(m[1]);
  for (const m of text.matchAll(/\b\w+\(st, "(\w+)"/g)) keys.add(m[1]);
  return keys;
}

test("the facade's AgentStateObject typedef lists exactly agent_state::KEYS, in order", () => {
  const defined = definedKeys();
  assert.ok(defined.length >= 20, `read ${defined.length} keys from state.rs`);
  assert.deepEqual(typedefKeys(), defined);
});

test("every key the facade and the JS twins use on a state object is in agent_state::KEYS", () => {
  const defined = new Set(definedKeys());
  const files = ["pkg-template/agent.js", ...jsFiles("src/js")];
  const seen = new Set();
  for (const file of files) {
    const used = keysUsedIn(read(file));
    for (const key of used) {
      seen.add(key);
      assert.ok(defined.has(key), `${file} uses st.${key}, which src/core/agent_state/mod.rs KEYS does not define`);
    }
  }
  // The reader finds what it must (the reducer's twin and the facade's uses).
  for (const key of ["streamingMessage", "ck", "transitSteering", "completedTools", "view", "listeners"]) {
    assert.ok(seen.has(key), `no use of ${key} found: the reader is broken`);
  }
});

/** The keys of `newStateObject`'s literal in pkg-template/agent.js, in order. */
function literalKeys() {
  const agent = read("pkg-template/agent.js");
  const start = agent.indexOf("function newStateObject()");
  assert.ok(start > 0, "pkg-template/agent.js has no newStateObject");
  const body = agent.slice(agent.indexOf("return {", start), agent.indexOf("};", start));
  return [...body.matchAll(/(\w+): undefined/g)].map((m) => m[1]);
}

test("issue 43: a new state object is one literal of exactly agent_state::KEYS, in order (one fixed shape)", () => {
  assert.deepEqual(literalKeys(), definedKeys());
});

test("issue 43: the Agent class declares exactly the public fields agentInit sets: FIELDS in order, then streamFunction", () => {
  const options = read("src/core/agent/options.rs");
  const block = options.slice(options.indexOf("const FIELDS"), options.indexOf("];", options.indexOf("const FIELDS")));
  const fields = [...block.matchAll(/"(\w+)"/g)].map((m) => m[1]);
  assert.ok(fields.length >= 20, `read ${fields.length} fields from options.rs`);
  assert.ok(options.includes('h.set(agent, "streamFunction"'), "options.rs sets streamFunction last");
  const agent = read("pkg-template/agent.js");
  const start = agent.indexOf("export class Agent {");
  const declared = agent.slice(agent.indexOf("\n", agent.indexOf("// tests/js/agent-state-keys", start)), agent.indexOf("constructor(", start));
  assert.deepEqual([...declared.matchAll(/(\w+);/g)].map((m) => m[1]), [...fields, "streamFunction"]);
});
