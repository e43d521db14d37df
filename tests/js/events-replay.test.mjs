// Issue 31: `agent.events({ after, signal, untilIdle })`. The rule it proves: for every cut point of a scripted run
// (three runs: text, thinking, parallel tools with progress updates, a second turn) and every moment a reader may
// reconnect, the items a reader saw before the cut plus what `events({ after })` replays rebuild exactly the state an
// uninterrupted reader has at that moment: the transcript, the streaming message's partial, the tools in flight.
// The run is held by a gate the test opens one step at a time, so each moment is a fixed point.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Agent, AssistantMessageEventStream, IS_REFERENCE } from "./impl.mjs";
import { reduce } from "./events-reduce.mjs";

const OURS = { skip: IS_REFERENCE && "agent.events() is new in agent-loop-wasm (issue 31)", timeout: 60000 };
const model = { id: "m", api: "x", provider: "x" };
const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const tick = () => new Promise((r) => setImmediate(r));

/** A gate the scripted model and tools wait on: `open()` lets the oldest waiter go. */
function gate() {
  const waiters = [];
  return {
    wait: () => new Promise((r) => waiters.push(r)),
    open: () => waiters.shift()?.(),
    get waiting() {
      return waiters.length;
    },
  };
}

/** A stream function that plays `replies` in order, one step per gate opening. */
function scripted(g, replies) {
  let n = 0;
  return () => {
    const reply = replies[n++];
    const s = new AssistantMessageEventStream();
    const m = { role: "assistant", content: [], api: "x", provider: "x", model: "m", usage, stopReason: reply.stop ?? "stop", timestamp: n };
    (async () => {
      await g.wait();
      s.push({ type: "start", partial: m });
      for (const [i, block] of reply.blocks.entries()) {
        await g.wait();
        if (block.type === "toolCall") {
          m.content.push({ ...block });
          s.push({ type: "toolcall_start", contentIndex: i, partial: m });
          s.push({ type: "toolcall_end", contentIndex: i, toolCall: m.content[i], partial: m });
          continue;
        }
        const field = block.type === "text" ? "text" : "thinking";
        m.content.push({ type: block.type, [field]: "" });
        s.push({ type: `${field}_start`, contentIndex: i, partial: m });
        for (const piece of block[field].match(/.{1,3}/g)) {
          await g.wait();
          m.content[i][field] += piece;
          s.push({ type: `${field}_delta`, contentIndex: i, delta: piece, partial: m });
        }
        s.push({ type: `${field}_end`, contentIndex: i, content: m.content[i][field], partial: m });
      }
      await g.wait();
      s.push({ type: "done", reason: m.stopReason, message: m });
    })();
    return s;
  };
}

function tool(g, name) {
  return {
    name,
    label: name,
    description: name,
    parameters: { type: "object", properties: {} },
    execute: async (id, _args, _signal, onUpdate) => {
      for (let i = 1; i <= 3; i++) {
        await g.wait();
        onUpdate({ content: [{ type: "text", text: `${name} ${i}/3` }], details: { i } });
      }
      await g.wait();
      return { content: [{ type: "text", text: `${name} done` }], details: {} };
    },
  };
}

/** A reader's view with the partial tool results left out (a sync tells which tools run, not their progress). */
const coarse = (state) => ({ ...state, tools: Object.keys(state.tools).sort() });

/** The items `iterator` holds now (the run is held: nothing more arrives until the gate opens). */
async function drain(iterator, upTo) {
  const items = [];
  if (upTo === undefined) return items;
  for (;;) {
    const next = await Promise.race([iterator.next(), tick().then(() => null)]);
    if (next === null || next.done) break;
    items.push(next.value);
    if (next.value.seq >= upTo) break;
  }
  return items;
}

test("issue 31: events() — before the cut plus the replay after it rebuilds what an uninterrupted reader shows, at every cut and every moment", OURS, async () => {
  const g = gate();
  const replies = [
    { blocks: [{ type: "thinking", thinking: "let me see" }, { type: "text", text: "Hello there, friend." }] },
    { blocks: [{ type: "text", text: "On it." }, { type: "toolCall", id: "a", name: "alpha", arguments: {} }, { type: "toolCall", id: "b", name: "beta", arguments: {} }], stop: "toolUse" },
    { blocks: [{ type: "text", text: "Both done." }] },
    { blocks: [{ type: "text", text: "Third run." }] },
  ];
  const agent = new Agent({ initialState: { model, tools: [tool(g, "alpha"), tool(g, "beta")] }, streamFn: scripted(g, replies) });
  const live = agent.events();
  const seen = [];
  const views = []; // the uninterrupted reader's state after each item
  const reading = (async () => {
    for await (const item of live) {
      seen.push(item);
      views.push(reduce(seen));
    }
  })();
  let cuts = 0;
  let syncs = 0;
  for (const prompt of ["one", "two", "three"]) {
    const run = agent.prompt(prompt);
    for (;;) {
      await tick();
      await tick();
      // A fixed moment: every cut so far reconnects now.
      const now = seen.at(-1)?.seq;
      const expected = views.at(-1);
      for (let k = 0; k < seen.length; k++) {
        const before = seen.slice(0, k + 1);
        const again = agent.events({ after: before.at(-1).seq });
        const replay = await drain(again, now);
        await again.return();
        for (const item of replay) assert.equal(item.replay, true);
        assert.ok(replay.length === 0 || replay.at(-1).seq === now, `cut ${k}: the replay ends at the latest item`);
        const got = reduce([...before, ...replay]);
        if (replay[0]?.event.type === "agent_sync") {
          // A sync carries the transcript itself, with the messages no event announces (the system record of the
          // tools the agent started with): the rest is what the uninterrupted reader shows.
          syncs++;
          const truth = JSON.parse(JSON.stringify(agent.state.messages));
          assert.deepEqual(got.messages, truth, `cut ${k} of ${seen.length}: the sync's transcript`);
          assert.deepEqual(got.messages.filter((m) => m.role !== "system"), expected.messages);
          assert.deepEqual(coarse({ ...got, messages: [] }), coarse({ ...expected, messages: [] }), `cut ${k} of ${seen.length}: after a sync`);
        } else {
          assert.deepEqual(got, expected, `cut ${k} of ${seen.length} (after seq ${before.at(-1).seq})`);
        }
        cuts++;
      }
      if (g.waiting === 0) break;
      g.open();
    }
    await run;
  }
  await live.return();
  await reading;
  // Seqs only grow; the third run's replays reached back to the second, the first's came as a sync.
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i].seq > seen[i - 1].seq);
  assert.ok(cuts > 1500, `${cuts} cut × moment pairs`);
  assert.ok(syncs > 0, "cuts older than the last ended run get an agent_sync");
  assert.equal(reduce(seen).messages.length, 9);
});

test("issue 31: a replay holds the streaming message once (its partial), not its deltas; a finished message as its message_end", OURS, async () => {
  const g = gate();
  const long = "x".repeat(3 * 400);
  const agent = new Agent({ initialState: { model }, streamFn: scripted(g, [{ blocks: [{ type: "text", text: long }] }]) });
  const live = agent.events();
  const first = [];
  const run = agent.prompt("go");
  while (g.waiting > 0 || first.length === 0) {
    g.open();
    await tick();
    if (first.length === 0) first.push((await live.next()).value);
    if (agent.state.streamingMessage?.content?.[0]?.text?.length >= 600) break;
  }
  const replay = await drain(agent.events({ after: first[0].seq }), Infinity);
  assert.deepEqual(replay.map((i) => i.event.type), ["turn_start", "message_start", "message_end", "message_start", "message_update"]);
  assert.equal(replay.at(-1).event.message.content[0].text.length, 600);
  while (g.waiting > 0) {
    g.open();
    await tick();
  }
  await run;
  const done = await drain(agent.events({ after: first[0].seq, untilIdle: true }), Infinity);
  assert.deepEqual(done.map((i) => i.event.type), ["turn_start", "message_start", "message_end", "message_start", "message_end", "turn_end", "agent_end"]);
  assert.equal(done[4].event.message.content[0].text, long);
});

test("issue 31: many readers get the same items; a slow reader is told it fell behind and catches up from the journal", OURS, async () => {
  const g = gate();
  const agent = new Agent({ initialState: { model }, streamFn: scripted(g, [{ blocks: [{ type: "text", text: "a".repeat(90) }] }]) });
  const a = agent.events();
  const b = agent.events();
  const slow = agent.events({ highWaterMark: 5 });
  const run = agent.prompt("go");
  const first = (await slow.next()).value; // then it stops reading
  while (g.waiting > 0 || agent.state.isStreaming) {
    g.open();
    await tick();
    if (!agent.state.isStreaming && g.waiting === 0) break;
  }
  await run;
  const [itemsA, itemsB] = [await drain(a, Infinity), await drain(b, Infinity)];
  assert.deepEqual(itemsA.map((i) => i.seq), itemsB.map((i) => i.seq));
  assert.equal(itemsA.at(-1).event.type, "agent_end");
  const rest = await drain(slow, Infinity);
  assert.equal(rest[0].behind, true, "the first item after the gap says the reader fell behind");
  assert.ok(rest.length < 10, `caught up in ${rest.length} items, not ${itemsA.length}`);
  assert.deepEqual(reduce([first, ...rest]).messages, reduce(itemsA).messages);
  assert.deepEqual(reduce([first, ...rest]), reduce(itemsA));
});

test("issue 31: events() ends on return(), on its signal, after agent_end with untilIdle; bad options are TypeErrors", OURS, async () => {
  const g = gate();
  const agent = new Agent({ initialState: { model }, streamFn: scripted(g, [{ blocks: [{ type: "text", text: "hi" }] }, { blocks: [{ type: "text", text: "again" }] }]) });
  const controller = new AbortController();
  const bySignal = agent.events({ signal: controller.signal });
  const untilIdle = agent.events({ untilIdle: true });
  const idle = (async () => {
    const types = [];
    for await (const item of untilIdle) types.push(item.event.type);
    return types;
  })();
  const run = agent.prompt("go");
  const pending = bySignal.next();
  g.open();
  assert.equal((await pending).value.event.type, "agent_start");
  controller.abort();
  assert.deepEqual(await bySignal.next(), { done: true, value: undefined });
  while (g.waiting > 0 || agent.state.isStreaming) {
    g.open();
    await tick();
    if (!agent.state.isStreaming && g.waiting === 0) break;
  }
  await run;
  assert.deepEqual(await idle, ["agent_start", "turn_start", "message_start", "message_end", "message_start", "message_update", "message_update", "message_update", "message_end", "turn_end", "agent_end"]);
  // An idle agent, a reader catching up with untilIdle: the replay, then the end.
  const caughtUp = [];
  for await (const item of agent.events({ after: 0, untilIdle: true })) caughtUp.push(item.event.type);
  assert.deepEqual(caughtUp, ["agent_sync"]);
  for (const [options, message] of [
    [null, "Agent.events: options must be an object"],
    [{ after: "3" }, "Agent.events: options.after must be a finite number (the seq of the last item seen)"],
    [{ signal: {} }, "Agent.events: options.signal must be an AbortSignal"],
    [{ highWaterMark: 0 }, "Agent.events: options.highWaterMark must be a positive integer"],
  ]) {
    assert.throws(() => agent.events(options), { name: "TypeError", message });
  }
  // reset() and a new transcript reach a reader as an agent_sync.
  const reader = agent.events();
  agent.reset();
  const sync = (await reader.next()).value;
  assert.equal(sync.event.type, "agent_sync");
  assert.deepEqual(sync.event.messages, []);
  agent.state.messages = [{ role: "user", content: "x", timestamp: 1 }];
  assert.deepEqual((await reader.next()).value.event.messages.length, 1);
  await reader.return();
});

test("issue 31: seqs keep growing across a restore (another Agent from the same checkpoints)", OURS, async () => {
  const g = gate();
  const rows = [];
  const agent = new Agent({ initialState: { model }, streamFn: scripted(g, [{ blocks: [{ type: "text", text: "hi" }] }]), onCheckpoint: (c) => rows.push(JSON.stringify(c)) });
  const reader = agent.events();
  const run = agent.prompt("go");
  while (agent.state.isStreaming || g.waiting > 0) {
    g.open();
    await tick();
    if (!agent.state.isStreaming && g.waiting === 0) break;
  }
  await run;
  const items = await drain(reader, Infinity);
  const last = items.at(-1).seq;
  const again = Agent.restore(rows, { streamFn: scripted(g, [{ blocks: [{ type: "text", text: "more" }] }]) });
  // A reader of the old process reconnects: it is not in this journal, so it gets the state, numbered above.
  const resumed = again.events({ after: last });
  const sync = (await resumed.next()).value;
  assert.equal(sync.event.type, "agent_sync");
  assert.equal(sync.event.messages.length, 2);
  const run2 = again.prompt("more");
  g.open();
  const next = (await resumed.next()).value;
  assert.equal(next.event.type, "agent_start");
  assert.ok(next.seq > last, `${next.seq} > ${last}`);
  while (g.waiting > 0) {
    g.open();
    await tick();
  }
  await run2;
  await resumed.return();
});

test("issue 31: a restore within the same millisecond as the old agent's last event still numbers above it", OURS, async () => {
  // The clock stands still: every event of both agents falls in one millisecond (a fast restart, or this test's
  // process on a fast machine, where the test above once failed with two equal numbers).
  const realNow = Date.now;
  Date.now = () => 1_796_000_000_000;
  const free = { wait: () => Promise.resolve(), open() {}, waiting: 0 }; // a gate that never holds
  try {
    const rows = [];
    const agent = new Agent({ initialState: { model }, streamFn: scripted(free, [{ blocks: [{ type: "text", text: "hi" }] }]), onCheckpoint: (c) => rows.push(JSON.stringify(c)) });
    const reader = agent.events();
    await agent.prompt("go");
    const last = (await drain(reader, Infinity)).at(-1).seq;
    const again = Agent.restore(rows, { streamFn: scripted(free, [{ blocks: [{ type: "text", text: "more" }] }]) });
    const resumed = again.events({ after: last });
    const sync = (await resumed.next()).value;
    assert.equal(sync.event.type, "agent_sync");
    assert.ok(sync.seq > last, `the sync: ${sync.seq} > ${last}`);
    const run = again.prompt("more");
    const next = (await resumed.next()).value;
    assert.equal(next.event.type, "agent_start");
    assert.ok(next.seq > last, `${next.seq} > ${last}`);
    await run;
    await resumed.return();
  } finally {
    Date.now = realNow;
  }
});

test("issue 31: events({ fromRunStart }) — the current run from its agent_start, compacted, at every moment; the last run when idle; a sync when the journal missed the start", OURS, async () => {
  const g = gate();
  const replies = [
    { blocks: [{ type: "thinking", thinking: "let me see" }, { type: "text", text: "Hello there, friend." }] },
    { blocks: [{ type: "text", text: "On it." }, { type: "toolCall", id: "a", name: "alpha", arguments: {} }, { type: "toolCall", id: "b", name: "beta", arguments: {} }], stop: "toolUse" },
    { blocks: [{ type: "text", text: "Both done." }] },
  ];
  const agent = new Agent({ initialState: { model, tools: [tool(g, "alpha"), tool(g, "beta")] }, streamFn: scripted(g, replies) });
  const live = agent.events();
  const seen = [];
  const views = [];
  const reading = (async () => {
    for await (const item of live) {
      seen.push(item);
      views.push(reduce(seen));
    }
  })();
  let moments = 0;
  for (const prompt of ["one", "two"]) {
    const run = agent.prompt(prompt);
    for (;;) {
      await tick();
      await tick();
      const start = seen.findLastIndex((i) => i.event.type === "agent_start");
      if (start !== -1 && agent.state.isStreaming) {
        const now = seen.at(-1).seq;
        const again = agent.events({ fromRunStart: true });
        const replay = await drain(again, now);
        await again.return();
        assert.deepEqual(replay[0], { ...seen[start], replay: true }, "the replay starts at this run's agent_start");
        assert.equal(replay.at(-1).seq, now);
        assert.ok(replay.every((i) => i.replay === true));
        assert.ok(replay.filter((i) => i.event.type === "message_update").length <= 1, "one partial, not the deltas");
        assert.deepEqual(reduce([...seen.slice(0, start), ...replay]), views.at(-1), `moment at seq ${now}`);
        moments++;
      }
      if (g.waiting === 0) break;
      g.open();
    }
    await run;
  }
  await live.return();
  await reading;
  assert.ok(moments > 20, `${moments} moments`);
  // Idle: the last ended run, then the end (untilIdle).
  const last = [];
  for await (const item of agent.events({ fromRunStart: true, untilIdle: true })) last.push(item);
  const lastStart = seen.findLastIndex((i) => i.event.type === "agent_start");
  assert.deepEqual(last[0].seq, seen[lastStart].seq);
  assert.equal(last.at(-1).event.type, "agent_end");
  assert.deepEqual(reduce([...seen.slice(0, lastStart), ...last]), reduce(seen));

  // A journal that begins mid-run did not see the run's start: the sync.
  const g2 = gate();
  const other = new Agent({ initialState: { model }, streamFn: scripted(g2, [{ blocks: [{ type: "text", text: "late reader" }] }]) });
  const run = other.prompt("go");
  for (let i = 0; i < 4; i++) {
    g2.open();
    await tick();
  }
  assert.equal(other.state.isStreaming, true);
  const late = other.events({ fromRunStart: true });
  assert.equal((await late.next()).value.event.type, "agent_sync");
  await late.return();
  while (g2.waiting > 0 || other.state.isStreaming) {
    g2.open();
    await tick();
  }
  await run;
  for (const [options, message] of [
    [{ fromRunStart: 1 }, "Agent.events: options.fromRunStart must be a boolean"],
    [{ fromRunStart: true, after: 3 }, "Agent.events: options.after and options.fromRunStart exclude each other"],
  ]) {
    assert.throws(() => agent.events(options), { name: "TypeError", message });
  }
});
