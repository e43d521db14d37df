// Shared parts of the telemetry tests: the built package (installed here by install-pkg.mjs, loaded by name, so its
// @opentelemetry/api is this folder's, the one the SDK below uses), the real OpenTelemetry SDK with its in-memory
// exporter, a scripted model, and the span tree rendered as text for exact comparisons.
import { readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { scriptedWith } from "./script.mjs";

export { ZERO_USAGE, usage, model, convertToLlm, sleep, user, tool, ok } from "./script.mjs";

export const HERE = dirname(fileURLToPath(import.meta.url));

// The copy under node_modules must be this build's: a stale one would test old code.
{
  const built = join(HERE, "..", "..", "pkg", "dist", "node");
  const copy = join(HERE, "node_modules", "agent-loop-wasm", "dist", "node");
  let fresh = false;
  try {
    const wasm = "agent_loop_wasm_bg.wasm";
    fresh =
      statSync(join(built, wasm)).size === statSync(join(copy, wasm)).size &&
      Math.trunc(statSync(join(built, wasm)).mtimeMs / 1000) === Math.trunc(statSync(join(copy, wasm)).mtimeMs / 1000) &&
      ["otel.cjs", "api.js"].every((f) => readFileSync(join(built, f), "utf8") === readFileSync(join(copy, f), "utf8"));
  } catch {
    fresh = false;
  }
  if (!fresh) throw new Error("tests/otel: the installed agent-loop-wasm is missing or older than pkg/: run node tests/otel/install-pkg.mjs");
}

export const lib = await import("agent-loop-wasm");
export const otel = await import("agent-loop-wasm/otel");

/**
 * A tracer of the real SDK (BasicTracerProvider + SimpleSpanProcessor + InMemorySpanExporter) that numbers spans in
 * the order they start, so sibling order in a rendered tree is the start order.
 */
export function tracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const sdkTracer = provider.getTracer("tests/otel");
  const order = new Map();
  let seq = 0;
  const tracer = {
    startSpan(name, options, context) {
      const span = sdkTracer.startSpan(name, options, context);
      order.set(span.spanContext().spanId, seq++);
      return span;
    },
  };
  return { exporter, tracer, order, spans: () => exporter.getFinishedSpans() };
}

const STATUS = ["UNSET", "OK", "ERROR"];
/** Attributes whose values are times: rendered as their presence only. */
const TIMES = new Set(["gen_ai.response.time_to_first_chunk", "agent_loop.tool.execute_ms"]);

function renderAttributes(attributes) {
  return Object.keys(attributes)
    .sort()
    .map((k) => (TIMES.has(k) ? `${k}=<t>` : `${k}=${JSON.stringify(attributes[k])}`))
    .join(" ");
}

/** The attributes a brief tree shows (the ones that tell kinds of runs and calls apart). */
const KEY_ATTRIBUTES = ["agent_loop.run.kind", "agent_loop.run.outcome", "agent_loop.run.pending_approvals", "agent_loop.run.limit", "agent_loop.run.limit.scope", "agent_loop.run.limit.max", "agent_loop.run.limit.value", "gen_ai.tool.call.id", "agent_loop.tool.approval", "error.type"];

function renderSpan(span, brief) {
  const status = STATUS[span.status.code] + (span.status.message ? `(${span.status.message})` : "");
  const links = span.links.map((l) => `link:${l.context.spanId === undefined ? "?" : "<" + (l.attributes?.["agent_loop.link"] ?? "") + ">"}`);
  if (brief) {
    const attributes = Object.fromEntries(KEY_ATTRIBUTES.filter((k) => k in span.attributes).map((k) => [k, span.attributes[k]]));
    return [`${span.name} ${status}`, renderAttributes(attributes), ...links].filter((x) => x !== "").join(" ");
  }
  const events = span.events.map((e) => e.name + (e.attributes && Object.keys(e.attributes).length ? `{${renderAttributes(e.attributes)}}` : ""));
  return [`${span.name} ${status}`, renderAttributes(span.attributes), ...(events.length ? [`events[${events.join(", ")}]`] : []), ...links]
    .filter((x) => x !== "")
    .join(" ");
}

/**
 * The finished spans as trees, one line per span, two spaces of indent per level; children in start order. `root`:
 * only the tree under that span id. `brief`: names, statuses and KEY_ATTRIBUTES only. Spans whose parent is not among
 * them are roots.
 */
export function render(spans, order, { root, brief = false } = {}) {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  const children = new Map();
  const roots = [];
  for (const s of spans) {
    const parent = s.parentSpanContext?.spanId;
    if (parent !== undefined && byId.has(parent)) {
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push(s);
    } else roots.push(s);
  }
  const rank = (s) => order.get(s.spanContext().spanId) ?? Infinity;
  const lines = [];
  const walk = (s, depth) => {
    lines.push("  ".repeat(depth) + renderSpan(s, brief));
    for (const c of (children.get(s.spanContext().spanId) ?? []).sort((a, b) => rank(a) - rank(b))) walk(c, depth + 1);
  };
  for (const r of roots.sort((a, b) => rank(a) - rank(b))) if (root === undefined || r.spanContext().spanId === root) walk(r, 0);
  return lines.join("\n");
}

/** The scripted model of script.mjs over this build (see scriptedWith). */
export const scripted = (replies) => scriptedWith(lib, replies);
