// The demo page's timeline: model requests and tool executions of the latest run, placed by real start/end times
// A tool's bar is its execute() call (timed by the instrumented tools in app.js); before it, a hatched "queued"
// segment runs from its tool_execution_start event (the batch's preflight, or waiting for a maxParallelTools slot).
// The page sets `timeline.running` while a run goes on (it keeps the frames coming) and `timeline.runCount`.

import { $, el, fmtMs } from "./dom.js";

export const timeline = { running: false, runCount: 0, t0: 0, lanes: [], frame: 0, endedAt: null, zoom: "tools" };
const since = () => performance.now() - timeline.t0;
export function timelineReset() {
  timeline.t0 = performance.now();
  timeline.lanes = [];
  timeline.endedAt = null;
  $("timeline").replaceChildren(el("div", { class: "axis" }));
  timelineTick();
}
function timelineLane(key, kind, label) {
  let lane = timeline.lanes.find((l) => l.key === key);
  if (lane) return lane;
  const track = el("div", { class: "track" });
  const node = el("div", { class: `lane ${kind}` },
    el("div", { class: "lane-label", title: label }, el("span", { text: label })), track);
  lane = { key, kind, label, bars: [], node, track };
  timeline.lanes.push(lane);
  $("timeline").append(node);
  return lane;
}
function findBar(key) {
  for (const lane of timeline.lanes) for (const b of lane.bars) if (b.key === key) return b;
  return undefined;
}
/**
 * A model request: hatched from turn_start (context preparation, the request, waiting for the response) to
 * the assistant message_start, solid while the response streams, until its message_end.
 */
export function timelineRequestPending(key, label) {
  const lane = timelineLane("model", "model", "model");
  const bar = { key, kind: "model", label, queuedAt: since(), start: null, end: null, status: "queued" };
  bar.wait = el("div", { class: "wait", dataset: { testid: "timeline-wait" } });
  bar.node = el("div", { class: "bar model queued", dataset: { testid: "timeline-bar", kind: "model", request: label, status: "queued" } },
    el("span", { class: "bar-label" }));
  bar.node.dataset.queuedAt = bar.queuedAt.toFixed(1);
  lane.bars.push(bar);
  lane.track.append(bar.wait, bar.node);
  timelineTick();
}
export function timelineRequestStreaming(key, label) {
  if (!findBar(key)) timelineRequestPending(key, label);
  timelineToolRunning(key);
}
/** A tool call: queued at tool_execution_start, running while execute() runs. */
export function timelineToolQueued(toolCallId, toolName) {
  const lane = timelineLane(`tool-${toolCallId}`, "tool", toolName);
  const bar = { key: toolCallId, kind: "tool", label: toolName, queuedAt: since(), start: null, end: null, status: "queued" };
  bar.wait = el("div", { class: "wait", dataset: { testid: "timeline-wait" } });
  bar.node = el("div", { class: "bar tool queued", dataset: { testid: "timeline-bar", kind: "tool", toolCallId, toolName, status: "queued" } },
    el("span", { class: "bar-label" }));
  bar.node.dataset.queuedAt = bar.queuedAt.toFixed(1);
  lane.bars.push(bar);
  lane.track.append(bar.wait, bar.node);
  timelineTick();
}
export function timelineToolRunning(key) {
  const bar = findBar(key);
  if (!bar || bar.start !== null) return;
  bar.start = since();
  bar.status = "running";
  bar.node.dataset.start = bar.start.toFixed(1);
  bar.node.dataset.status = "running";
  bar.node.classList.replace("queued", "running");
}
export function timelineEnd(key, status) {
  const bar = findBar(key);
  if (!bar || bar.closed) return;
  bar.closed = true;
  if (bar.start === null) bar.start = bar.queuedAt ?? since(); // never executed (validation error, abort, …)
  if (bar.end === null) bar.end = since();
  bar.status = status;
  bar.node.dataset.start = bar.start.toFixed(1);
  bar.node.dataset.end = bar.end.toFixed(1);
  bar.node.dataset.status = status;
  bar.node.classList.remove("queued", "running");
  bar.node.classList.add(status);
  timelineDraw();
}
/** The end of execute() itself (before afterToolCall and the tool_execution_end event). */
export function timelineToolReturned(toolCallId) {
  const bar = findBar(toolCallId);
  if (bar && bar.start !== null && bar.end === null) {
    bar.end = since();
    bar.node.dataset.end = bar.end.toFixed(1);
  }
}
function niceStep(span) {
  const target = span / 5;
  const steps = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000];
  return steps.find((s) => s >= target) ?? 600_000;
}
// The visible window: the whole run, or (zoom "tools") the span of the tool executions with a margin.
function timelineWindow(now) {
  let total = 100;
  for (const lane of timeline.lanes) for (const b of lane.bars) total = Math.max(total, b.end ?? now);
  total = Math.max(total, now);
  const tools = timeline.lanes.filter((l) => l.kind === "tool").flatMap((l) => l.bars);
  if (timeline.zoom !== "tools" || tools.length === 0) return [0, total, total];
  const first = Math.min(...tools.map((b) => b.queuedAt ?? b.start));
  const last = Math.max(...tools.map((b) => b.end ?? now));
  const pad = Math.max(5, (last - first) * 0.12);
  return [Math.max(0, first - pad), Math.min(total, last + pad), total];
}
export function timelineDraw() {
  const now = timeline.endedAt ?? (performance.now() - timeline.t0);
  const [w0, w1, total] = timelineWindow(now);
  const span = Math.max(1, w1 - w0);
  const pct = (t) => (100 * (t - w0)) / span;
  const axis = $("timeline").querySelector(".axis");
  if (axis) {
    const step = niceStep(span);
    const ticks = [];
    for (let t = Math.ceil(w0 / step) * step; t <= w1 + 0.001; t += step) {
      const left = pct(t);
      ticks.push(el("span", { class: `tick${left < 4 ? " first" : left > 94 ? " last" : ""}`, style: `left:${left}%`, text: t === 0 ? "0" : fmtMs(t) }));
    }
    axis.replaceChildren(...ticks);
  }
  const place = (node, from, to) => {
    const a = Math.max(from, w0);
    const z = Math.min(to, w1);
    node.hidden = z < a;
    node.style.left = `min(${pct(a)}%, calc(100% - 3px))`;
    node.style.width = `max(3px, ${(100 * (z - a)) / span}%)`;
    node.classList.toggle("clipped-left", from < w0);
    node.classList.toggle("clipped-right", to > w1);
    return (z - a) / span;
  };
  for (const lane of timeline.lanes) {
    for (const b of lane.bars) {
      if (b.wait) {
        const waitedUntil = b.start ?? b.end ?? now;
        const waited = waitedUntil - b.queuedAt;
        if (waited >= 2) place(b.wait, b.queuedAt, waitedUntil);
        b.wait.hidden = waited < 2;
        b.wait.title = `${b.label}: queued for ${fmtMs(waited)} before it ran`;
      }
      if (b.start === null) { b.node.hidden = true; continue; }
      const end = b.end ?? now;
      const width = place(b.node, b.start, end);
      b.node.title = `${b.label}: ${fmtMs(b.start)} → ${b.end === null ? "running" : fmtMs(end)} (${fmtMs(end - b.start)})`;
      b.node.firstChild.textContent = fmtMs(end - b.start);
      b.node.classList.toggle("narrow", width < 0.14);
      b.node.classList.toggle("label-left", width < 0.14 && (Math.min(end, w1) - w0) / span > 0.8);
    }
  }
  const tools = timeline.lanes.filter((l) => l.kind === "tool").flatMap((l) => l.bars);
  const requests = timeline.lanes.filter((l) => l.kind === "model").flatMap((l) => l.bars);
  let peak = 0;
  let open = 0;
  const points = tools.filter((b) => b.start !== null && b.status !== "queued")
    .flatMap((b) => [[b.start, 1], [b.end ?? now, -1]]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  for (const [, d] of points) { open += d; peak = Math.max(peak, open); }
  $("timeline-meta").textContent = `Run ${timeline.runCount} · ${fmtMs(total)} · ${requests.length} request${requests.length === 1 ? "" : "s"} · ` +
    `${tools.length} tool call${tools.length === 1 ? "" : "s"}${tools.length > 1 ? ` · up to ${peak} at once` : ""}`;
  $("timeline").dataset.peakParallel = String(peak);
}
for (const button of document.querySelectorAll("[data-zoom]")) {
  button.addEventListener("click", () => {
    timeline.zoom = button.dataset.zoom;
    for (const b of document.querySelectorAll("[data-zoom]")) b.setAttribute("aria-pressed", String(b === button));
    timelineDraw();
  });
}
export function timelineTick() {
  cancelAnimationFrame(timeline.frame);
  timelineDraw();
  if (timeline.running) timeline.frame = requestAnimationFrame(timelineTick);
}
