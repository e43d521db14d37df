// The demo's tools (SPEC K-9.3.2): get_time, calculate (a small recursive-descent parser, no eval),
// wait (honours its abort signal, reports progress), random_number, and the design document's
// list_files / read_file over a small in-memory virtual file system, and delete_file, which waits for the
// person at the page to approve or deny each call (issue 30: needsApproval).
//
// list_files and read_file simulate disk latency — 100 ms and 10 ms, the design document's toolA and
// toolB — so a parallel batch visibly overlaps on the timeline and finishes out of order.

const text = (value, details = {}) => ({ content: [{ type: "text", text: String(value) }], details });

/** Resolves after `ms`, or rejects with `Aborted after <n> ms` when `signal` aborts first. */
function delay(ms, signal, onTick) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    if (signal?.aborted) return reject(new Error("Aborted before it started"));
    let tick;
    const finish = (fn) => {
      clearTimeout(timer);
      clearInterval(tick);
      signal?.removeEventListener("abort", onAbort);
      fn();
    };
    const onAbort = () =>
      finish(() => reject(new Error(`Aborted after ${Math.round(performance.now() - started)} ms`)));
    const timer = setTimeout(() => finish(resolve), ms);
    if (onTick) tick = setInterval(() => onTick(performance.now() - started), 250);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Virtual file system (memory only)
// ---------------------------------------------------------------------------------------------------------------

export const VIRTUAL_FILES = {
  "README.md": `# demo-project

A tiny project that lives in your browser's memory, so the offline demo has something to look at.
The agent can list these files and read them with the list_files and read_file tools.

## What is in here
- src/main.rs and src/lib.rs: a greeting, in Rust
- docs/design.md: how the agent loop runs tools in parallel
- package.json: project metadata
`,
  "package.json": `{
  "name": "demo-project",
  "version": "1.0.0",
  "private": true,
  "description": "A virtual project for the agent-loop-wasm demo"
}
`,
  "Cargo.toml": `[package]
name = "demo-project"
version = "1.0.0"
edition = "2021"
`,
  "src/main.rs": `fn main() {
    println!("{}", demo_project::greeting("world"));
}
`,
  "src/lib.rs": `/// Returns a friendly greeting.
pub fn greeting(name: &str) -> String {
    format!("Hello, {name}!")
}
`,
  "docs/design.md": `# Parallel tool calls

The assistant asks for toolA and toolB in one message.
toolA takes 100 ms, toolB takes 10 ms.

Events: start toolA, start toolB, end toolB, end toolA.
Context order: toolResult toolA, toolResult toolB.
`,
  "notes.txt": `Ideas:
- try the Steer button while a tool runs
- export a snapshot, reset, then import it again
`,
};

function normalisePath(path) {
  const parts = [];
  for (const part of String(path ?? ".").replace(/\\/g, "/").split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) throw new Error(`${path} is outside the project`);
      parts.pop();
    } else {
      parts.push(part);
    }
  }
  return parts.join("/");
}

function listDirectory(path) {
  const dir = normalisePath(path);
  const prefix = dir ? `${dir}/` : "";
  if (dir && VIRTUAL_FILES[dir] !== undefined) throw new Error(`${path} is a file, not a directory`);
  const entries = new Set();
  for (const file of Object.keys(VIRTUAL_FILES)) {
    if (!file.startsWith(prefix)) continue;
    const rest = file.slice(prefix.length);
    const slash = rest.indexOf("/");
    entries.add(slash === -1 ? rest : `${rest.slice(0, slash)}/`);
  }
  if (entries.size === 0) throw new Error(`No such directory: ${path}`);
  return [...entries].sort();
}

// ---------------------------------------------------------------------------------------------------------------
// calculate: a recursive-descent parser (no eval)
//   expr   := term (("+" | "-") term)*
//   term   := unary (("*" | "/" | "%") unary)*
//   unary  := ("+" | "-") unary | power
//   power  := primary ("^" unary)?            (right-associative; -2^2 = -4)
//   primary:= number | "(" expr ")" | name | name "(" expr ("," expr)* ")"
// ---------------------------------------------------------------------------------------------------------------

const CONSTANTS = { pi: Math.PI, e: Math.E, tau: 2 * Math.PI };
const FUNCTIONS = {
  sqrt: [1, Math.sqrt], abs: [1, Math.abs], sin: [1, Math.sin], cos: [1, Math.cos], tan: [1, Math.tan],
  ln: [1, Math.log], log: [1, Math.log10], exp: [1, Math.exp], round: [1, Math.round], floor: [1, Math.floor],
  ceil: [1, Math.ceil], min: [-1, Math.min], max: [-1, Math.max],
};

export function evaluate(source) {
  const input = String(source);
  if (input.length > 500) throw new Error("Expression too long (500 characters at most)");
  const tokens = [];
  const re = /\s*(?:(\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)|([A-Za-z_]\w*)|(\*\*|[-+*/%^(),×÷]))/y;
  let pos = 0;
  while (pos < input.length) {
    if (/^\s*$/.test(input.slice(pos))) break;
    re.lastIndex = pos;
    const m = re.exec(input);
    if (!m) throw new Error(`Unexpected character '${input.slice(pos).trim()[0]}' at position ${pos + 1}`);
    pos = re.lastIndex;
    if (m[1] !== undefined) tokens.push({ kind: "num", value: Number(m[1]) });
    else if (m[2] !== undefined) tokens.push({ kind: "name", value: m[2].toLowerCase() });
    else tokens.push({ kind: "op", value: m[3] === "**" ? "^" : m[3] === "×" ? "*" : m[3] === "÷" ? "/" : m[3] });
  }
  let i = 0;
  let depth = 0;
  const peek = () => tokens[i];
  const isOp = (v) => peek()?.kind === "op" && peek().value === v;
  const expect = (v) => {
    if (!isOp(v)) throw new Error(`Expected '${v}'${peek() ? ` but found '${peek().value}'` : " at the end"}`);
    i++;
  };
  const expr = () => {
    if (++depth > 200) throw new Error("Expression nested too deeply");
    let value = term();
    while (isOp("+") || isOp("-")) value = tokens[i++].value === "+" ? value + term() : value - term();
    depth--;
    return value;
  };
  const term = () => {
    let value = unary();
    while (isOp("*") || isOp("/") || isOp("%")) {
      const op = tokens[i++].value;
      const right = unary();
      if ((op === "/" || op === "%") && right === 0) throw new Error("Division by zero");
      value = op === "*" ? value * right : op === "/" ? value / right : value % right;
    }
    return value;
  };
  const unary = () => {
    if (isOp("-")) { i++; return -unary(); }
    if (isOp("+")) { i++; return unary(); }
    return power();
  };
  const power = () => {
    const base = primary();
    if (isOp("^")) { i++; return base ** unary(); }
    return base;
  };
  const primary = () => {
    const token = peek();
    if (!token) throw new Error("Unexpected end of expression");
    if (token.kind === "num") { i++; return token.value; }
    if (isOp("(")) { i++; const value = expr(); expect(")"); return value; }
    if (token.kind === "name") {
      i++;
      if (isOp("(")) {
        const fn = FUNCTIONS[token.value];
        if (!fn) throw new Error(`Unknown function '${token.value}'`);
        i++;
        const args = [expr()];
        while (isOp(",")) { i++; args.push(expr()); }
        expect(")");
        if (fn[0] !== -1 && args.length !== fn[0]) throw new Error(`${token.value}() takes ${fn[0]} argument`);
        return fn[1](...args);
      }
      if (token.value in CONSTANTS) return CONSTANTS[token.value];
      throw new Error(`Unknown name '${token.value}'`);
    }
    throw new Error(`Unexpected '${token.value}'`);
  };
  if (tokens.length === 0) throw new Error("Empty expression");
  const value = expr();
  if (i < tokens.length) throw new Error(`Unexpected '${tokens[i].value}' after the expression`);
  if (!Number.isFinite(value)) throw new Error(`The result is not a finite number (${value})`);
  return value;
}

function formatNumber(value) {
  if (Number.isInteger(value)) return String(value);
  return String(Number(value.toPrecision(12)));
}

// ---------------------------------------------------------------------------------------------------------------
// The tools
// ---------------------------------------------------------------------------------------------------------------

export const TOOLS = [
  {
    name: "get_time",
    label: "Get time",
    description: "Current date and time, optionally in an IANA time zone such as Europe/Paris.",
    parameters: {
      type: "object",
      properties: { timeZone: { type: "string", description: "IANA time zone; default: the browser's" } },
    },
    async execute(_id, { timeZone } = {}) {
      const now = new Date();
      const zone = timeZone || Intl.DateTimeFormat().resolvedOptions().timeZone;
      const human = new Intl.DateTimeFormat("en-GB", {
        dateStyle: "full", timeStyle: "long", timeZone: zone,
      }).format(now); // throws RangeError for an unknown zone → an error result
      return text(`${human}\n${now.toISOString()}`, { iso: now.toISOString(), timeZone: zone });
    },
  },
  {
    name: "calculate",
    label: "Calculate",
    description:
      "Evaluate an arithmetic expression: + - * / % ^, parentheses, pi, e, and sqrt abs sin cos tan ln log exp " +
      "round floor ceil min max.",
    parameters: {
      type: "object",
      properties: { expression: { type: "string", description: "e.g. (17 + 25) * 3 / 2" } },
      required: ["expression"],
    },
    async execute(_id, { expression }) {
      const value = evaluate(expression);
      return text(formatNumber(value), { value });
    },
  },
  {
    name: "wait",
    label: "Wait",
    description: "Wait for the given number of milliseconds (at most 60000), then report. Stops when aborted.",
    parameters: {
      type: "object",
      properties: { ms: { type: "integer", minimum: 0, maximum: 60000, description: "Milliseconds" } },
      required: ["ms"],
    },
    async execute(_id, { ms }, signal, onUpdate) {
      const total = Math.max(0, Math.min(60_000, Number(ms) || 0));
      const started = performance.now();
      await delay(total, signal, (elapsed) =>
        onUpdate?.(text(`${Math.round(elapsed)} of ${total} ms`, { elapsed: Math.round(elapsed), total })));
      return text(`done after ${Math.round(performance.now() - started)} ms`, { ms: total });
    },
  },
  {
    name: "random_number",
    label: "Random number",
    description: "A random number between min and max (inclusive); integers unless integer is false.",
    parameters: {
      type: "object",
      properties: {
        min: { type: "number", description: "default 0" },
        max: { type: "number", description: "default 100" },
        integer: { type: "boolean", description: "default true" },
      },
    },
    async execute(_id, { min = 0, max = 100, integer = true } = {}) {
      if (!(min <= max)) throw new Error(`min (${min}) must not exceed max (${max})`);
      const [r] = crypto.getRandomValues(new Uint32Array(1));
      const unit = r / 2 ** 32;
      const value = integer
        ? Math.ceil(min) + Math.floor(unit * (Math.floor(max) - Math.ceil(min) + 1))
        : min + unit * (max - min);
      return text(formatNumber(value), { value, min, max, integer });
    },
  },
  {
    name: "list_files",
    label: "List files",
    description: "List a directory of the project (a virtual file system in memory). Directories end with '/'.",
    parameters: {
      type: "object",
      properties: { path: { type: "string", description: "Directory, '.' for the project root" } },
      required: ["path"],
    },
    async execute(_id, { path }, signal) {
      await delay(100, signal); // simulated disk latency (the design document's toolA)
      const entries = listDirectory(path);
      return text(entries.join("\n"), { count: entries.length, simulatedLatencyMs: 100 });
    },
  },
  {
    name: "read_file",
    label: "Read file",
    description: "Read a text file of the project (a virtual file system in memory).",
    parameters: {
      type: "object",
      properties: { path: { type: "string", description: "File path, e.g. README.md" } },
      required: ["path"],
    },
    async execute(_id, { path }, signal) {
      await delay(10, signal); // simulated disk latency (the design document's toolB)
      const file = normalisePath(path);
      const body = VIRTUAL_FILES[file];
      if (body === undefined) {
        throw new Error(`No such file: ${path}${listDirectory(".").length ? ` (try list_files)` : ""}`);
      }
      return text(body, { chars: body.length, simulatedLatencyMs: 10 });
    },
  },
  {
    name: "delete_file",
    label: "Delete file",
    description: "Delete a file of the project (a virtual file system in memory). Each call waits for your approval.",
    parameters: {
      type: "object",
      properties: { path: { type: "string", description: "File path, e.g. notes.txt" } },
      required: ["path"],
    },
    // The call runs only after the person approves it on its card (Approve / Deny); a denial is the result.
    needsApproval: true,
    async execute(_id, { path }, signal) {
      await delay(10, signal);
      const file = normalisePath(path);
      if (VIRTUAL_FILES[file] === undefined) throw new Error(`No such file: ${path}`);
      delete VIRTUAL_FILES[file];
      return text(`Deleted ${file}`, { path: file });
    },
  },
];
