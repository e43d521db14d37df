// pkg-template/index.d.ts against the names the code defines: the Rust lists in src/ (event types, queue modes,
// built-in apis, the Agent's fields and options, snapshot and checkpoint fields, wasm export names) and the JS
// wrapper's exports. Everything is read as text, so it runs without a build; a rename on one side without the other
// fails here instead of reaching a user's types.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join, sep } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const read = (path) => readFileSync(join(ROOT, path), "utf8");
// The main entry's declarations: index.d.ts and the two files it re-exports (the pi-ai shapes, the tools).
const DTS = ["index.d.ts", "ai.d.ts", "tools.d.ts"].map((f) => read(`pkg-template/${f}`)).join("\n");

// ---- reading the Rust side

/** The text without its `#[cfg(test)] mod name { … }` blocks (top-level modules close with a `}` in column 0). */
function withoutTestModules(text) {
  return text.replace(/^#\[cfg\(test\)\]\s*\n(?:#\[[^\n]*\]\s*\n)*(?:pub )?mod \w+ \{[\s\S]*?^\}$/gm, "");
}

/** Every `.rs` file under `dir`, with `#[cfg(test)] mod …` blocks and `tests/` folders left out. */
function rustSources(dir) {
  const out = [];
  const walk = (d) => {
    for (const entry of readdirSync(join(ROOT, d), { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== "tests") walk(path);
      } else if (entry.name.endsWith(".rs") && entry.name !== "test_host.rs") {
        out.push({ path, text: withoutTestModules(read(path)) });
      }
    }
  };
  walk(dir);
  return out;
}
const CORE = rustSources("src/core");
const SRC = rustSources("src");
const allText = (files) => files.map((f) => f.text).join("\n");

/** The string items of every `const NAME: [&str; N] = [...]` in `files`, one list per definition. */
function rustStrConsts(files, name) {
  const found = [];
  for (const { path, text } of files) {
    for (const m of text.matchAll(new RegExp(`const ${name}: \\[&str; \\d+\\] =\\s*\\[([^\\]]*)\\]`, "g"))) {
      found.push({ path, items: [...m[1].matchAll(/"([^"]*)"/g)].map((s) => s[1]) });
    }
  }
  assert.ok(found.length > 0, `no \`const ${name}: [&str; N]\` found under src/: was it renamed or moved? Update this test.`);
  return found;
}
const rustStrConst = (files, name) => {
  const found = rustStrConsts(files, name);
  assert.equal(found.length, 1, `expected one \`const ${name}\`, found it in ${found.map((f) => f.path).join(", ")}`);
  return found[0].items;
};

/** The body of the Rust function `name` (from its signature to the first line that is a lone `}`). */
function rustFnBody(files, signature) {
  for (const { text } of files) {
    const at = text.indexOf(signature);
    if (at >= 0) return text.slice(at, text.indexOf("\n}", at) + 2);
  }
  assert.fail(`no \`${signature}\` found under src/: was it renamed or moved? Update this test.`);
}

// ---- reading index.d.ts

/** The text of a top-level declaration from its header to the matching closing brace or semicolon. */
function dtsDecl(header) {
  const at = DTS.indexOf(header);
  assert.ok(at >= 0, `index.d.ts has no \`${header}\``);
  let depth = 0;
  for (let i = at; i < DTS.length; i++) {
    const c = DTS[i];
    if (c === "{" || c === "(" || c === "<") depth++;
    else if (c === "}" || c === ")" || (c === ">" && DTS[i - 1] !== "=")) {
      depth--;
      if (depth === 0 && c === "}" && !header.startsWith("export type")) return DTS.slice(at, i + 1);
    } else if (c === ";" && depth === 0) return DTS.slice(at, i + 1);
  }
  assert.fail(`unterminated \`${header}\``);
}

/** The string literals of a union type alias: `export type NAME = "a" | "b"`. */
const dtsUnion = (name) => [...dtsDecl(`export type ${name} =`).matchAll(/"([^"]*)"/g)].map((m) => m[1]);

/** The `type: "…"` literals of a union of object types. */
const dtsTypeTags = (name) => [...dtsDecl(`export type ${name} =`).matchAll(/\btype: "([^"]*)"/g)].map((m) => m[1]);

/**
 * The members declared directly in an interface or class body: `{ fields, methods }`. Members are the lines indented
 * by two spaces (the file's format); getters and setters count as fields.
 */
function dtsMembers(header) {
  const body = dtsDecl(header);
  const fields = new Set();
  const methods = new Set();
  for (const line of body.split("\n").slice(1)) {
    const m = /^ {2}(?:readonly )?(static )?(?:(get|set) )?([A-Za-z_$][\w$]*)(\??)(\s*[:(<])/.exec(line);
    if (!m) continue;
    const [, isStatic, accessor, name, , after] = m;
    if (accessor || after.trim() === ":") fields.add(name);
    else methods.add(isStatic ? `static ${name}` : name);
  }
  return { fields, methods };
}

/** Interface keys including those of the interfaces it extends (within index.d.ts; `Omit<…>`/`Pick<…>` not followed). */
function dtsInterfaceKeys(name) {
  const header = new RegExp(`export interface ${name}(?:<[^{]*?>)?(?: extends ([\\w, ]+))? \\{`).exec(DTS);
  assert.ok(header, `index.d.ts has no interface ${name}`);
  const keys = dtsMembers(header[0]).fields;
  for (const base of (header[1] ?? "").split(",").map((s) => s.trim()).filter(Boolean)) {
    for (const key of dtsInterfaceKeys(base)) keys.add(key);
  }
  return keys;
}

const sorted = (items) => [...new Set(items)].sort();
const same = (actual, expected, message) => assert.deepEqual(sorted(actual), sorted(expected), message);
function subset(small, big, message) {
  const missing = sorted(small).filter((x) => !new Set(big).has(x));
  assert.deepEqual(missing, [], message);
}

// ---- reading the JS wrapper

/** The names a pkg-template module exports, following `export * from` and `export { … } from` within the folder. */
function jsExports(file, seen = new Set()) {
  if (seen.has(file)) return new Set();
  seen.add(file);
  const text = read(`pkg-template/${file}`);
  const names = new Set();
  for (const m of text.matchAll(/^export (?:async )?(?:function\*?|const|let|class) ([\w$]+)/gm)) names.add(m[1]);
  for (const m of text.matchAll(/^export \{([^}]*)\}/gm)) {
    for (const part of m[1].split(",").map((s) => s.trim()).filter(Boolean)) names.add(part.split(/\s+as\s+/).pop());
  }
  for (const m of text.matchAll(/^export \* from "\.\/([\w.-]+)"/gm)) {
    for (const name of jsExports(m[1], seen)) names.add(name);
  }
  return names;
}

/** Functions the wasm side exports under a JS name: `#[wasm_bindgen(js_name = x)] pub fn …` at the top level. */
function wasmExports() {
  const names = new Set();
  for (const { text } of rustSources("src/js")) {
    for (const m of text.matchAll(/^#\[wasm_bindgen\(js_name = (\w+)\)\]\s*\n(?:#\[[^\n]*\]\s*\n)*pub fn/gm)) names.add(m[1]);
    for (const m of text.matchAll(/^#\[wasm_bindgen\]\s*\n(?:#\[[^\n]*\]\s*\n)*pub fn (\w+)/gm)) names.add(m[1]);
  }
  return names;
}

// ---- the lists

// Exported by pkg-template/api.js without being public API. Each entry says why; an entry that stops being exported
// fails the test, so the list cannot outlive its reason.
const EXPORTED_BUT_UNDECLARED = {};

test("API-1.1/API-1.6.1 index.d.ts declares exactly the values the package's main entry exports", () => {
  const exported = jsExports("index.js");
  const declared = [...DTS.matchAll(/^export declare (?:function|const|let|class) ([\w$]+)/gm)].map((m) => m[1]);
  for (const name of Object.keys(EXPORTED_BUT_UNDECLARED)) {
    assert.ok(exported.has(name), `${name} is no longer exported: remove it from EXPORTED_BUT_UNDECLARED`);
  }
  same(declared, [...exported].filter((n) => !(n in EXPORTED_BUT_UNDECLARED)), "index.d.ts vs pkg-template exports");
});

test("K-9.2 the web, MCP and telemetry entries' declarations match their modules' exports", () => {
  const declared = (file) => [...read(`pkg-template/${file}`).matchAll(/^export declare (?:function|const|let|class) ([\w$]+)/gm)]
    .map((m) => m[1]);
  const main = jsExports("index.js");
  const web = jsExports("web-slim.js");
  assert.match(read("pkg-template/web.d.ts"), /^export \* from "\.\/index\.js";$/m, "web.d.ts re-exports index.d.ts");
  same([...declared("index.d.ts"), ...declared("web.d.ts")], [...web].filter((n) => !(n in EXPORTED_BUT_UNDECLARED)),
    "index.d.ts + web.d.ts vs pkg-template/web-slim.js (agent-loop-wasm/web)");
  subset(main, web, "agent-loop-wasm/web lacks an export of the main entry");
  same(declared("mcp.d.ts"), jsExports("mcp.js"), "mcp.d.ts vs pkg-template/mcp.js (agent-loop-wasm/mcp)");
  same(declared("otel.d.ts"), jsExports("otel.js"), "otel.d.ts vs pkg-template/otel.js (agent-loop-wasm/otel)");
});

test("API-1.1 every wasm function the JS wrapper calls is exported by src/js under that name", () => {
  const wasm = wasmExports();
  assert.ok(wasm.size > 20, `only ${wasm.size} wasm exports found: is the scan broken?`);
  const used = new Set();
  for (const file of readdirSync(join(ROOT, "pkg-template")).filter((f) => /\.(m?js|cjs)$/.test(f))) {
    for (const m of read(`pkg-template/${file}`).matchAll(/\bcore\.([A-Za-z_$][\w$]*)\s*\(/g)) used.add(m[1]);
  }
  subset(used, wasm, "called as core.<name>(…) in pkg-template/ but not a #[wasm_bindgen(js_name = …)] export of src/js/");
});

test("API-1.1 each public function of api.js that enters the wasm calls the Rust export of its own name", () => {
  const api = read("pkg-template/api.js");
  const wasm = wasmExports();
  const pairs = [];
  for (const m of api.matchAll(/^export function ([\w$]+)\([^)]*\) \{\n([\s\S]*?)\n\}/gm)) {
    const calls = [...m[2].matchAll(/\bcore\.([\w$]+)\(/g)].map((c) => c[1]);
    if (calls.length > 0) pairs.push([m[1], calls]);
  }
  assert.ok(pairs.length >= 8, `only ${pairs.length} wrappers found: is the scan broken?`);
  for (const [name, calls] of pairs) {
    assert.deepEqual(calls, [name], `api.js ${name} should call core.${name} (calls ${calls.join(", ")})`);
    assert.ok(wasm.has(name), `core.${name} is not exported by src/js/`);
  }
});

test("S-2.6 AgentEvent's `type`s are exactly the event types src/core emits", () => {
  const core = [...allText(CORE).matchAll(/"((?:agent|turn|message|tool_execution)_[a-z_]+)"/g)].map((m) => m[1]);
  same(dtsTypeTags("AgentEvent"), core, "index.d.ts AgentEvent vs string literals in src/core");
  // The Agent's trap path (agent.js) builds failure events in JS: they must be declared events too.
  const js = [...read("pkg-template/agent.js").matchAll(/\btype: "([a-z_]+)"/g)].map((m) => m[1]);
  subset(js, dtsTypeTags("AgentEvent"), "events built by pkg-template/agent.js but missing from AgentEvent");
});

test("L-3.13.7 CompactionEvent's `type`s are exactly the compaction events src/core emits", () => {
  const core = [...new Set([...allText(CORE).matchAll(/"(compaction_[a-z_]+)"/g)].map((m) => m[1]))];
  assert.ok(core.length > 0, "no compaction event found in src/core: is the scan broken?");
  same(dtsTypeTags("CompactionEvent"), core, "index.d.ts CompactionEvent vs string literals in src/core");
});

test("S-2.7 AssistantMessageEvent's `type`s are exactly the ones core::host::EventCode recognises", () => {
  const of = rustFnBody(CORE, "pub fn of(kind: &str) -> EventCode");
  const rust = [...of.matchAll(/"([a-z_]+)"/g)].map((m) => m[1]);
  same(dtsTypeTags("AssistantMessageEvent"), rust, "index.d.ts AssistantMessageEvent vs EventCode::of");
});

test("S-2.1/P-6.10 stop reasons: what the providers produce is a `done` reason, and every reason is a StopReason", async () => {
  const { STOP_REASONS } = await import("../../pkg-template/providers/assemble.js");
  // Every literal the wire formats finish with is one of STOP_REASONS, and each of those is produced somewhere.
  const dir = join(ROOT, "pkg-template", "providers");
  const finished = readdirSync(dir).flatMap((f) => [...read(`pkg-template/providers/${f}`).matchAll(/\.finish\(([^;]*)\);/g)])
    .flatMap((m) => [...m[1].matchAll(/"(\w+)"/g)].map((s) => s[1]));
  assert.ok(finished.length >= 6, "no asm.finish(…) read under pkg-template/providers/");
  same(finished, STOP_REASONS, "the literals of asm.finish(…) vs STOP_REASONS (assemble.js)");
  const events = dtsDecl("export type AssistantMessageEvent =");
  const reasons = (type) => [...new RegExp(`type: "${type}"; reason: ([^;]+);`).exec(events)[1].matchAll(/"(\w+)"/g)].map((m) => m[1]);
  subset(STOP_REASONS, reasons("done"), "a stop reason the providers produce is not a `done` reason in index.d.ts");
  subset([...reasons("done"), ...reasons("error")], dtsUnion("StopReason"), "an event reason missing from StopReason");
});

test("A-5.3 QueueMode is every MODES list of src/core (Agent options, snapshots, checkpoints)", () => {
  const lists = rustStrConsts(SRC, "MODES");
  for (const { path, items } of lists) same(dtsUnion("QueueMode"), items, `index.d.ts QueueMode vs MODES in ${path}`);
});

test("T-4.1 ToolExecutionMode's values are the ones src/core reads", () => {
  const core = allText(CORE);
  for (const mode of dtsUnion("ToolExecutionMode")) {
    assert.ok(core.includes(`"${mode}"`), `"${mode}" is declared in ToolExecutionMode but src/core never names it`);
  }
  assert.equal(dtsUnion("ToolExecutionMode").length, 2);
});

test("S-2.1 ThinkingLevel is \"off\" plus the built-in providers' THINKING_LEVELS (request.js)", async () => {
  const { THINKING_LEVELS } = await import("../../pkg-template/providers/request.js");
  same(dtsUnion("ThinkingLevel"), ["off", ...THINKING_LEVELS], "index.d.ts ThinkingLevel");
});

test("API-1.1/§6 BuiltinApi is core::builtin::BUILTIN_APIS, each is a KnownApi and has a wire format", async () => {
  const rust = rustStrConst(CORE, "BUILTIN_APIS");
  same(dtsUnion("BuiltinApi"), rust, "index.d.ts BuiltinApi vs BUILTIN_APIS");
  subset(rust, dtsUnion("KnownApi"), "a built-in api missing from KnownApi");
  // The JS providers serve exactly these (pkg-template/providers/index.js).
  const { wireFormat } = await import("../../pkg-template/providers/index.js");
  for (const api of rust) assert.equal(typeof wireFormat(api)?.buildRequest, "function", `no wire format for ${api}`);
  const formats = [...read("pkg-template/providers/index.js").matchAll(/^\s+"([\w-]+)": \w+,$/gm)].map((m) => m[1]);
  same(formats, rust, "pkg-template/providers/index.js FORMATS vs BUILTIN_APIS");
});

test("A-5.1 the Agent's public fields and options are core::agent's FIELDS", () => {
  // Issue 32: OPTIONAL_FIELDS are public fields too, set only when given. (The records' FIELDS are read below.)
  const agentFiles = CORE.filter((f) => f.path.startsWith(join("src", "core", "agent") + sep));
  const fields = [...rustStrConst(agentFiles, "FIELDS"), ...rustStrConst(agentFiles, "OPTIONAL_FIELDS")];
  const agent = dtsMembers("export declare class Agent {");
  same(agent.fields, [...fields, "streamFunction", "state", "steeringMode", "followUpMode", "signal"],
    "index.d.ts class Agent fields vs FIELDS (+ streamFunction and the accessors)");
  same(dtsInterfaceKeys("AgentOptions"), [...fields, "initialState", "onCheckpoint", "streamFn", "steeringMode", "followUpMode"],
    "index.d.ts AgentOptions vs FIELDS (+ the options that are not fields)");
  subset(rustStrConst(CORE, "AGENT_HOOKS"), agent.fields, "a hook core::agent reads that class Agent does not declare");
});

test("A-5.4 the Agent's methods in index.d.ts are the methods of pkg-template/agent.js", () => {
  const js = read("pkg-template/agent.js");
  const cls = js.slice(js.indexOf("export class Agent {"));
  const methods = [...cls.matchAll(/^ {2}(static )?([A-Za-z_$][\w$]*)\(/gm)].map((m) => (m[1] ? `static ${m[2]}` : m[2]));
  const accessors = [...cls.matchAll(/^ {2}(?:get|set) ([A-Za-z_$][\w$]*)\(/gm)].map((m) => m[1]);
  const declared = dtsMembers("export declare class Agent {");
  same([...declared.methods].filter((m) => m !== "constructor"), methods.filter((m) => m !== "constructor"),
    "index.d.ts class Agent methods vs agent.js");
  subset(accessors, declared.fields, "a getter or setter of agent.js missing from class Agent");
});

test("A-5.5.2 every field core::agent forwards into a run's config, and every hook args.rs checks, is an AgentLoopConfig key", () => {
  const config = dtsInterfaceKeys("AgentLoopConfig");
  subset(rustStrConst(CORE, "FORWARDED"), config, "FORWARDED names a key AgentLoopConfig (with its bases) lacks");
  subset(rustStrConst(CORE, "CONFIG_HOOKS"), config, "CONFIG_HOOKS names a key AgentLoopConfig lacks");
});

test("A-5.2 AgentState's keys are the state view's, and the core keeps each (systemPrompt is computed)", () => {
  const declared = dtsMembers("export interface AgentState {").fields;
  const js = read("pkg-template/agent.js");
  // The view's accessors: the entries of VIEW_ACCESSORS, each `name: { get() …`.
  const view = js.slice(js.indexOf("const VIEW_ACCESSORS"), js.indexOf("function createStateView("));
  const viewed = [...view.matchAll(/^ {2}([\w$]+): \{/gm)].map((m) => m[1]);
  assert.ok(viewed.length > 10, `VIEW_ACCESSORS read as ${viewed}`);
  same(declared, viewed, "index.d.ts AgentState vs VIEW_ACCESSORS");
  // A new Agent's state: core::agent_state::init (the reference of the `init_state` fast path, which core::agent's
  // `init` calls).
  const init = rustFnBody(CORE, "pub fn init_state<");
  // The state's fields by their constants (`key::MODEL`), each read as the string `agent_state::key` gives it.
  const keyRs = read("src/core/agent_state/mod.rs");
  const keyOf = new Map([...keyRs.matchAll(/^\s+pub const (\w+): &str = "(\w+)";/gm)].map((m) => [m[1], m[2]]));
  const kept = [...init.slice(init.indexOf("let state = [")).matchAll(/\(key::(\w+),/g)].map((m) => keyOf.get(m[1]));
  assert.ok(kept.length > 20 && !kept.includes(undefined), `init_state's state list read as ${kept}`);
  subset([...declared].filter((k) => k !== "systemPrompt"), kept, "an AgentState key agent_state::init does not set");
});

/**
 * A record's field constants (`pub mod field { pub const NAME: &str = "value"; … }` of `file`), with those it
 * re-exports from another record's (`pub use crate::core::<module>::field::{…}`) read there.
 */
function fieldConsts(file) {
  const text = withoutTestModules(read(file));
  const start = text.indexOf("\npub mod field {");
  assert.ok(start >= 0, `${file} has no \`pub mod field\`: was the record moved? Update this test.`);
  const block = text.slice(start, text.indexOf("\n}", start + 1));
  const consts = new Map([...block.matchAll(/pub const (\w+): &str = "(\w+)";/g)].map((m) => [m[1], m[2]]));
  for (const m of block.matchAll(/pub use crate::core::(\w+)::field::\{([^}]*)\};/g)) {
    const theirs = fieldConsts(`src/core/${m[1]}.rs`);
    for (const name of m[2].split(",").map((n) => n.trim()).filter(Boolean)) {
      assert.ok(theirs.has(name), `${file} re-exports ${m[1]}::field::${name}, which ${m[1]}.rs does not define`);
      consts.set(name, theirs.get(name));
    }
  }
  return consts;
}

/** A record's `FIELDS` (`pub const FIELDS: [&str; N] = [field::A, …]`) as strings; it must list every constant of its
 *  `pub mod field`, once. */
function recordFields(file) {
  const consts = fieldConsts(file);
  const m = /^pub const FIELDS: \[&str; (\d+)\] = \[([^\]]*)\];/m.exec(withoutTestModules(read(file)));
  assert.ok(m, `${file} has no \`pub const FIELDS: [&str; N]\``);
  const names = [...m[2].matchAll(/\bfield::(\w+)/g)].map((f) => f[1]);
  assert.equal(names.length, Number(m[1]), `${file}: FIELDS read as ${names}`);
  assert.deepEqual(sorted(names), sorted([...consts.keys()]), `${file}: FIELDS vs the constants of its pub mod field`);
  assert.equal(new Set(names).size, names.length, `${file}: a field listed twice in FIELDS`);
  return names.map((n) => consts.get(n));
}

/** `pub const NAME: &str = "…"` or `pub const NAME: u64 = …` at the top level of `file` (not a field's constant). */
const rustTopConst = (file, name) => {
  const m = new RegExp(`^pub const ${name}: (?:&str|u64) = "?([^";]+)"?;`, "m").exec(read(file));
  assert.ok(m, `${file} has no top-level \`pub const ${name}\``);
  return m[1];
};

test("D8 AgentSnapshot's fields are core::snapshot::FIELDS (each checked by restore), under its format name", () => {
  const file = "src/core/snapshot.rs";
  const fields = recordFields(file);
  assert.ok(fields.length > 10, `FIELDS read as ${fields}`);
  same(dtsMembers("export interface AgentSnapshot {").fields, fields, "index.d.ts AgentSnapshot vs core::snapshot::FIELDS");
  assert.match(dtsDecl("export interface AgentSnapshot {"), new RegExp(`format: "${rustTopConst(file, "FORMAT")}"`));
});

test("D8 AgentCheckpoint's fields are core::checkpoint::FIELDS, under its format name and version", () => {
  const file = "src/core/checkpoint.rs";
  const fields = recordFields(file);
  assert.ok(fields.length > 10, `FIELDS read as ${fields}`);
  const decl = dtsDecl("export interface AgentCheckpoint {");
  same(dtsMembers("export interface AgentCheckpoint {").fields, fields, "index.d.ts AgentCheckpoint vs core::checkpoint::FIELDS");
  assert.match(decl, new RegExp(`format: "${rustTopConst(file, "FORMAT")}"`));
  assert.match(decl, new RegExp(`version: ${rustTopConst(file, "VERSION")};`));
  // `messages` is an edit of the transcript, its two fields `checkpoint::edit`'s.
  const text = read(file);
  const edit = text.slice(text.indexOf("pub mod edit {"), text.indexOf("\n}", text.indexOf("pub mod edit {")));
  const [from, append] = ["FROM", "APPEND"].map((n) => new RegExp(`pub const ${n}: &str = "(\\w+)";`).exec(edit)?.[1]);
  assert.ok(from && append, "checkpoint::edit's FROM and APPEND not found");
  assert.match(decl, new RegExp(`messages\\?: \\{ ${from}: number; ${append}: AgentMessage\\[\\] \\};`));
});

test("issue 30 a pause's fields are core::approvals::FIELDS: ToolApprovals, toUIMessages' approvals, and the JS that reads one", () => {
  const fields = recordFields("src/core/approvals.rs");
  assert.equal(fields.length, 3, `FIELDS read as ${fields}`);
  same(dtsMembers("export interface ToolApprovals {").fields, fields, "index.d.ts ToolApprovals vs core::approvals::FIELDS");
  const ui = read("pkg-template/ui.d.ts");
  const at = ui.indexOf("\n  approvals?: {");
  assert.ok(at >= 0, "ui.d.ts has no `approvals?: {` option");
  const option = ui.slice(at, ui.indexOf("\n  };", at));
  same([...option.matchAll(/^ {4}(\w+)\??:/gm)].map((m) => m[1]), fields, "ui.d.ts toUIMessages' options.approvals vs FIELDS");
  // The package's JS reads and builds a pause by property name (ui-route, ui-history, otel): each is one of FIELDS.
  const used = new Set();
  for (const file of readdirSync(join(ROOT, "pkg-template")).filter((f) => /\.(m?js|cjs)$/.test(f))) {
    const text = read(`pkg-template/${file}`);
    for (const m of text.matchAll(/\bapprovals\??\.(\w+)/g)) used.add(m[1]);
    for (const m of text.matchAll(/\(approvals, "(\w+)"\)/g)) used.add(m[1]);
    for (const m of text.matchAll(/\bapprovals = \{([^}]*)\}/g)) for (const k of m[1].matchAll(/(\w+):/g)) used.add(k[1]);
  }
  subset(used, fields, "pkg-template/ names a field of a pause that core::approvals::FIELDS does not define");
  same(used, fields, "the reader finds every field of a pause in pkg-template/ (or a field is no longer used there)");
});
