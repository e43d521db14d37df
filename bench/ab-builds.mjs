// Two or more builds of our package side by side in one process, rotating which goes first each round: request
// building at 10,000 prior messages through each wire format (the workload of bench/request-build.mjs, the bodies
// compared byte for byte across builds), and the peer table's run of 5 steps × 3 tools. Each build is a copy of
// `pkg/dist/node` (its .wasm swapped, or built from another commit or with other flags). Not a test.
//   cp -r pkg/dist/node /tmp/a && … build the variant … && cp -r pkg/dist/node /tmp/b
//   node --expose-gc bench/ab-builds.mjs /tmp/a /tmp/b [requests|runs|tools] [--rounds 16]
// (`tools`: the peer table's 20 steps × 100 parallel tools instead of the run of 5 steps × 3 tools; `deltas`: its
// 20,000 streamed deltas of one reply.) The build loaded
// first can come out up to ~8 % faster with the same code (Dec 4: 1.04 one way, 0.93 the other): run both orders.
// Prints medians in ms (requests) or µs per run, each with its ratio to the first build.
import { median } from "./harness.mjs";
import { APIS, buildRequest, messages, tools } from "./request-fixture.mjs";

const argv = process.argv.slice(2);
const ROUNDS = argv.includes("--rounds") ? Number(argv[argv.indexOf("--rounds") + 1]) : 16;
const WARM = 4;
const DIRS = argv.filter((a) => a.startsWith("/"));
const only = argv.find((a) => a === "requests" || a === "runs" || a === "tools" || a === "deltas");
if (DIRS.length < 2) throw new Error("usage: node --expose-gc bench/ab-builds.mjs /abs/build-a /abs/build-b [requests|runs|tools|deltas]");
const label = (dir) => dir.split("/").filter(Boolean).pop();
/** Round r visits the builds starting from a different one each time. */
const order = (r) => DIRS.map((_, i) => (i + r) % DIRS.length);
const report = (what, unit, times) =>
  console.log(`${what}: ${DIRS.map((d, i) => `${label(d)} ${median(times[i]).toFixed(1)} ${unit} (${(median(times[i]) / median(times[0])).toFixed(2)})`).join(", ")}`);

if (only === undefined || only === "requests") {
  const libs = await Promise.all(DIRS.map((d) => import(`${d}/index.mjs`)));
  for (const api of APIS) {
    const context = { systemPrompt: "You are a bench.", messages: messages(10_000, api), tools };
    const times = DIRS.map(() => []);
    const bodies = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (const i of order(r)) {
        globalThis.gc?.();
        const { ms, body } = await buildRequest(libs[i], api, context);
        if (r >= WARM) times[i].push(ms);
        bodies[i] = body;
      }
    }
    if (!bodies.every((b) => b === bodies[0])) throw new Error(`${api}: the builds sent different bodies`);
    report(`request ${api}, 10,000 messages`, "ms", times);
  }
}

if (only === undefined || only === "runs" || only === "tools" || only === "deltas") {
  // Each build gets its own copy of the caller's code (sides.mjs and its faux stream function), so no call site
  // turns polymorphic over the builds' stream classes, as it would in a process that holds one build.
  const sides = [];
  let copy;
  for (const [i, d] of DIRS.entries()) {
    process.env.BENCH_OURS_ENTRY = `${d}/index.mjs`;
    copy = await import(`./peers/sides.mjs?build=${i}`);
    sides.push(await copy.loadSide("ours"));
  }
  const { deltaPieces, plans, toolNames } = copy;
  /** µs per unit of `work(i, r)` (which does `units` of it) for each build, over the rounds. */
  const timeRounds = async (units, work) => {
    const times = DIRS.map(() => []);
    for (let r = 0; r < ROUNDS; r++) {
      for (const i of order(r)) {
        globalThis.gc?.();
        const t0 = performance.now();
        await work(i, r);
        if (r >= WARM) times[i].push(((performance.now() - t0) * 1000) / units);
      }
    }
    return times;
  };
  if (only === "deltas") {
    // The peer table's first row: one reply of 20,000 text deltas; µs per delta.
    const ps = plans.text(deltaPieces(20_000));
    const times = await timeRounds(20_000, (i) => sides[i].runPlans(ps));
    report("20,000 streamed deltas, per delta", "µs", times);
  } else if (only === "tools") {
    // The peer table's second row: 20 steps of 100 parallel tool calls, then a short answer; µs per tool.
    const wide = toolNames(100);
    const times = await timeRounds(2000, (i, r) => sides[i].runPlans(plans.tools(wide, 20, `t${i}r${r}`), wide));
    report("20 steps × 100 parallel tools, per tool", "µs", times);
  } else {
    const names = toolNames(3);
    const times = await timeRounds(300, async (i, r) => {
      for (let k = 0; k < 300; k++) await sides[i].runPlans(plans.tools(names, 5, `b${i}r${r}_${k}`), names);
    });
    report("run of 5 steps × 3 tools", "µs", times);
  }
}
