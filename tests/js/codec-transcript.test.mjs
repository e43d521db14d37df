// The request transcript (pkg-template/providers/transcript.js): the replayed system head (P-6.5.1) and the clean-up
// of the conversation (P-6.5.2).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  NO_RESULT_PROVIDED,
  TOOL_IMAGE_OMITTED,
  USER_IMAGE_OMITTED,
  blockType,
  cleanUp,
  contentText,
  field,
  isSameModel,
  prepare,
  replaceImages,
  role,
  strField,
  systemHead,
} from "../../pkg-template/providers/transcript.js";

const model = () => ({ id: "m1", api: "anthropic-messages", provider: "anthropic", input: ["text"] });
const input = (model, messages, options = {}) => ({ model, messages, options, apiKey: undefined });
const tool = (name, description) => ({ name, description, parameters: { type: "object" } });
const assistant = (content, stop) => ({
  role: "assistant",
  content,
  api: "anthropic-messages",
  provider: "anthropic",
  model: "m1",
  stopReason: stop,
  timestamp: 1,
});
const result = (id) => ({
  role: "toolResult",
  toolCallId: id,
  toolName: "t",
  content: [{ type: "text", text: "ok" }],
  isError: false,
  timestamp: 2,
});
/** The JSON text of a value: key order included. */
const text = (v) => JSON.stringify(v);
const deepFreeze = (v) => {
  if (v && typeof v === "object") {
    Object.values(v).forEach(deepFreeze);
    Object.freeze(v);
  }
  return v;
};

test("P-6.5.1 head joins contents and sections and replays tools (p_6_5_1_head_joins_contents_and_sections_and_replays_tools)", () => {
  const messages = [
    { role: "system", content: "Base.", sections: { a: "A1", b: "B" }, toolsAdded: [tool("x", "X"), tool("y", "Y")], timestamp: 0 },
    { role: "user", content: "hi", timestamp: 1 },
    {
      role: "system",
      content: [{ type: "text", text: "More" }, { type: "text", text: "lines" }],
      sections: { a: "A2", b: null, c: "C" },
      toolsRemoved: [{ name: "x" }],
      toolsAdded: [tool("z", "Z"), tool("y", "Y2")],
      timestamp: 2,
    },
    { role: "system", content: "", sections: { b: "B again" }, timestamp: 3 },
  ];
  const t = prepare(input(model(), messages));
  assert.equal(t.systemPrompt, "Base.\n\nMore\nlines\n\nA2\n\nC\n\nB again");
  assert.deepEqual(t.tools, [tool("y", "Y2"), tool("z", "Z")]);
  assert.deepEqual(t.messages, [{ role: "user", content: "hi", timestamp: 1 }]);
  assert.deepEqual(systemHead(messages), [t.systemPrompt, t.tools]);
});

test("P-6.5.1 no system messages gives empty head (p_6_5_1_no_system_messages_gives_empty_head)", () => {
  const t = prepare(input(model(), [{ role: "user", content: null, timestamp: 1 }]));
  assert.equal(t.systemPrompt, "");
  assert.deepEqual(t.tools, []);
  assert.equal(text(t.messages), text([{ role: "user", content: [], timestamp: 1 }]));
});

test("P-6.5.1 head: sections only, non-string sections, empty contents, tools without names", () => {
  const messages = [
    { role: "system", content: [{ type: "image" }, { type: "text", text: "" }], sections: { a: 5, b: "" } },
    { role: "system", sections: { c: "C" }, toolsAdded: [{ description: "no name" }, { name: "n", v: 1 }] },
    { role: "system", toolsAdded: [{ name: "n", v: 2 }, { v: 3 }], toolsRemoved: [{ name: "nothing" }, 4] },
  ];
  const [prompt, tools] = systemHead(messages);
  assert.equal(prompt, "C");
  // Unnamed tools share the name "", and a removal without a name (the 4) removes that one; removals come first.
  assert.deepEqual(tools, [{ name: "n", v: 2 }, { v: 3 }]);
  assert.deepEqual(systemHead([messages[1], { role: "system", toolsAdded: [{ v: 3 }] }])[1], [{ v: 3 }, { name: "n", v: 1 }]);
  // A removed section re-added goes last.
  const [again] = systemHead([
    { role: "system", sections: { a: "A", b: "B" } },
    { role: "system", sections: { a: null } },
    { role: "system", sections: { a: "A2" } },
  ]);
  assert.equal(again, "B\n\nA2");
});

test("P-6.5.2 images become placeholders without image input (p_6_5_2_images_become_placeholders_without_image_input)", () => {
  const messages = [
    {
      role: "user",
      content: [
        { type: "text", text: "look" },
        { type: "image", data: "AA", mimeType: "image/png" },
        { type: "image", data: "BB", mimeType: "image/png" },
      ],
      timestamp: 1,
    },
    assistant([{ type: "toolCall", id: "c1", name: "t", arguments: {} }], "toolUse"),
    {
      role: "toolResult",
      toolCallId: "c1",
      toolName: "t",
      isError: false,
      timestamp: 2,
      content: [{ type: "image", data: "CC", mimeType: "image/png" }],
    },
  ];
  let t = prepare(input(model(), messages));
  assert.deepEqual(t.messages[0].content, [{ type: "text", text: "look" }, { type: "text", text: USER_IMAGE_OMITTED }]);
  assert.deepEqual(t.messages[2].content, [{ type: "text", text: TOOL_IMAGE_OMITTED }]);
  const vision = { id: "m1", api: "anthropic-messages", provider: "anthropic", input: ["text", "image"] };
  t = prepare(input(vision, messages));
  assert.equal(t.messages[0].content[2].type, "image");
});

test("P-6.5.2 image runs: one placeholder per run, an existing placeholder absorbs the run after it", () => {
  const img = { type: "image", data: "x" };
  const a = { type: "text", text: "a" };
  const p = { type: "text", text: USER_IMAGE_OMITTED };
  assert.deepEqual(replaceImages([img, img, a, img], USER_IMAGE_OMITTED), [p, a, p]);
  assert.deepEqual(replaceImages([p, img, img, a], USER_IMAGE_OMITTED), [p, a]);
  assert.deepEqual(replaceImages([null, img], USER_IMAGE_OMITTED), [null, p]);
  // The other placeholder does not absorb.
  assert.deepEqual(replaceImages([{ type: "text", text: TOOL_IMAGE_OMITTED }, img], USER_IMAGE_OMITTED), [
    { type: "text", text: TOOL_IMAGE_OMITTED },
    p,
  ]);
});

test("P-6.5.2 error and aborted assistants are skipped (p_6_5_2_error_and_aborted_assistants_are_skipped)", () => {
  const messages = [
    { role: "user", content: "a", timestamp: 1 },
    assistant([{ type: "text", text: "partial" }], "error"),
    assistant([{ type: "text", text: "partial" }], "aborted"),
    { role: "user", content: "b", timestamp: 1 },
  ];
  assert.deepEqual(prepare(input(model(), messages)).messages.map(role), ["user", "user"]);
});

test("P-6.5.2 an error assistant's calls get no results; the previous assistant's are closed", () => {
  const messages = [
    assistant([{ type: "toolCall", id: "a", name: "t", arguments: {} }], "toolUse"),
    assistant([{ type: "toolCall", id: "b", name: "t", arguments: {} }], "error"),
  ];
  const summary = prepare(input(model(), messages)).messages.map((m) => `${role(m)}:${strField(m, "toolCallId")}`);
  assert.deepEqual(summary, ["assistant:", "toolResult:a"]);
});

test("P-6.5.2 other model loses thinking and signatures (p_6_5_2_other_model_loses_thinking_and_signatures)", () => {
  const content = [
    { type: "thinking", thinking: "hmm", thinkingSignature: "sig" },
    { type: "text", text: "hello", textSignature: "ts" },
    { type: "toolCall", id: "c1", name: "t", arguments: { a: 1 }, thoughtSignature: "x" },
  ];
  const other = { ...assistant(content, "toolUse"), model: "m2" };
  let t = prepare(input(model(), deepFreeze([other, result("c1")])));
  assert.equal(
    text(t.messages[0].content),
    text([{ type: "text", text: "hello" }, { type: "toolCall", id: "c1", name: "t", arguments: { a: 1 } }]),
  );
  // The caller's blocks are not touched.
  assert.equal(other.content[2].thoughtSignature, "x");
  // The same model keeps everything.
  t = prepare(input(model(), [assistant(content, "toolUse"), result("c1")]));
  assert.deepEqual(t.messages[0].content, content);
});

test("P-6.5.2 same model drops only empty unsigned thinking (p_6_5_2_same_model_drops_only_empty_unsigned_thinking)", () => {
  const content = [
    { type: "thinking", thinking: "  " },
    { type: "thinking", thinking: "", thinkingSignature: "enc" },
    { type: "thinking", thinking: "", redacted: true, thinkingSignature: "r" },
    { type: "thinking", thinking: "real" },
  ];
  const t = prepare(input(model(), [assistant(content, "stop")]));
  assert.equal(t.messages[0].content.length, 3);
  // `redacted` counts only as `true`; a mistyped thinking text is empty.
  const odd = [
    { type: "thinking", redacted: "yes" },
    { type: "thinking", thinking: 5 },
    { type: "thinking", redacted: true },
  ];
  assert.deepEqual(prepare(input(model(), [assistant(odd, "stop")])).messages[0].content, [odd[2]]);
});

test("P-6.5.2 ids normalised and results renamed (p_6_5_2_ids_normalised_and_results_renamed)", () => {
  const long = `call|${"x".repeat(80)}`;
  const messages = [assistant([{ type: "toolCall", id: long, name: "t", arguments: {} }], "toolUse"), result(long)];
  const normalize = (id) => id.replaceAll("|", "_").slice(0, 10);
  const t = prepare(input(model(), deepFreeze(messages)), normalize);
  assert.equal(t.messages[0].content[0].id, "call_xxxxx");
  assert.equal(t.messages[1].toolCallId, "call_xxxxx");
  // Key order kept: the id in its place.
  assert.deepEqual(Object.keys(t.messages[0].content[0]), ["type", "id", "name", "arguments"]);
  assert.deepEqual(Object.keys(t.messages[1]), Object.keys(result("x")));
});

test("P-6.5.2 renames: the latest rename of an id counts; a call without id gets one at the end", () => {
  let n = 0;
  const normalize = (id) => `${id}#${++n}`;
  const messages = [
    assistant([{ type: "toolCall", id: "a", name: "t" }], "toolUse"),
    result("a"),
    assistant([{ type: "toolCall", id: "a", name: "t" }, { type: "toolCall", name: "u" }], "toolUse"),
    result("a"),
  ];
  const t = prepare(input(model(), messages), normalize);
  assert.deepEqual(
    t.messages.map((m) => (role(m) === "assistant" ? m.content.map((b) => b.id) : m.toolCallId)),
    [["a#1"], "a#1", ["a#2", "#3"], "a#2", "#3"],
  );
  assert.deepEqual(Object.keys(t.messages[2].content[1]), ["type", "name", "id"]);
  assert.equal(t.messages[4].toolName, "u");
});

test("P-6.5.2 missing results are synthesised before the next turn and at the end (p_6_5_2_missing_results_are_synthesised_before_next_turn_and_at_end)", () => {
  const messages = [
    assistant(
      [
        { type: "toolCall", id: "a", name: "t", arguments: {} },
        { type: "toolCall", id: "b", name: "u", arguments: {} },
      ],
      "toolUse",
    ),
    result("a"),
    { role: "user", content: "next", timestamp: 3 },
    assistant([{ type: "toolCall", id: "c", name: "v", arguments: {} }], "toolUse"),
  ];
  const t = prepare(input(model(), messages));
  const summary = t.messages.map((m) => `${role(m)}:${strField(m, "toolCallId")}`);
  assert.deepEqual(summary, ["assistant:", "toolResult:a", "toolResult:b", "user:", "assistant:", "toolResult:c"]);
  assert.equal(
    text(t.messages[2]),
    text({
      role: "toolResult",
      toolCallId: "b",
      toolName: "u",
      content: [{ type: "text", text: NO_RESULT_PROVIDED }],
      isError: true,
      timestamp: 0,
    }),
  );
});

test("P-6.5.2 an assistant without calls keeps the earlier pending ones closed (no double results)", () => {
  const messages = [
    assistant([{ type: "toolCall", id: "a", name: "t" }], "toolUse"),
    assistant([{ type: "text", text: "x" }], "stop"),
    result("a"),
  ];
  const summary = cleanUp(messages, model()).map((m) => `${role(m)}:${strField(m, "toolCallId")}`);
  assert.deepEqual(summary, ["assistant:", "toolResult:a", "assistant:", "toolResult:a"]);
});

test("P-6.5.2 system message between call and results moves after them (p_6_5_2_system_message_between_call_and_results_moves_after_them)", () => {
  const messages = [
    assistant([{ type: "toolCall", id: "a", name: "t", arguments: {} }], "toolUse"),
    { role: "system", content: "update", timestamp: 2 },
    result("a"),
    { role: "user", content: "next", timestamp: 3 },
  ];
  const cleaned = cleanUp(messages, model());
  assert.deepEqual(cleaned.map(role), ["assistant", "toolResult", "system", "user"]);
  assert.equal(cleaned.filter((m) => role(m) === "toolResult").length, 1);
  // Held to the end of the transcript when nothing closes the calls; after the synthetic result.
  const end = cleanUp(messages.slice(0, 2), model());
  assert.deepEqual(end.map(role), ["assistant", "toolResult", "system"]);
  // Other roles stay in place; without pending calls a system message stays too.
  const other = cleanUp([{ role: "system" }, { role: "custom", content: "c" }], model());
  assert.equal(text(other), text([{ role: "system", content: [] }, { role: "custom", content: "c" }]));
});

test("malformed messages never throw (malformed_messages_never_panic)", () => {
  const messages = [
    null,
    3,
    { role: "assistant", content: "text?" },
    { role: "assistant", content: "" },
    { role: "assistant", content: { length: 0 } },
    { role: "assistant", content: [null, 1, { type: "toolCall" }] },
    { role: "toolResult", content: { x: 1 } },
    { role: "system", toolsAdded: [1, { name: 2 }], toolsRemoved: "x", sections: [1] },
  ];
  const t = prepare(input(null, messages, null), (s) => s);
  assert.deepEqual(t.messages.map(role), ["assistant", "assistant", "assistant", "assistant", "toolResult"]);
  for (const i of [0, 1, 2]) assert.deepEqual(t.messages[i].content, []);
  assert.deepEqual(t.messages[4].content, []);
  assert.deepEqual(t.tools, [{ name: 2 }]);
});

test("P-6.5.2 tool results: string content becomes a text block, other types empty", () => {
  const t = cleanUp(
    [
      { role: "toolResult", toolCallId: "a", content: "done" },
      { role: "toolResult", toolCallId: "b", content: 5 },
      { role: "toolResult", toolCallId: "c" },
    ],
    model(),
  );
  assert.equal(
    text(t),
    text([
      { role: "toolResult", toolCallId: "a", content: [{ type: "text", text: "done" }] },
      { role: "toolResult", toolCallId: "b", content: [] },
      { role: "toolResult", toolCallId: "c", content: [] },
    ]),
  );
  // A user's string content stays a string, with or without image support.
  assert.equal(cleanUp([{ role: "user", content: "s" }], model())[0].content, "s");
});

test("the common messages are not copied (the_common_messages_are_not_copied)", () => {
  const model = { id: "m1", api: "a", provider: "p", input: ["text"] };
  const messages = [
    { role: "user", content: "hi", timestamp: 1 },
    {
      role: "assistant",
      content: [
        { type: "text", text: "yes" },
        { type: "toolCall", id: "c1", name: "read", arguments: {} },
      ],
      api: "b",
      provider: "q",
      model: "m2",
      stopReason: "toolUse",
      timestamp: 2,
    },
    { role: "toolResult", toolCallId: "c1", toolName: "read", content: [{ type: "text", text: "ok" }], isError: false, timestamp: 3 },
  ];
  const cleaned = cleanUp(messages, model, (id) => id);
  cleaned.forEach((m, i) => assert.equal(m, messages[i], `message ${i} copied`));
  assert.equal(text(cleaned), text(messages));
  // A text block with a signature, from another model, is rewritten: a copy, the caller's value kept.
  const signed = [
    {
      role: "assistant",
      content: [{ type: "text", text: "yes", textSignature: "s" }],
      api: "b",
      provider: "q",
      model: "m2",
      stopReason: "stop",
      timestamp: 2,
    },
  ];
  const out = cleanUp(signed, model);
  assert.notEqual(out[0], signed[0]);
  assert.equal(signed[0].content[0].textSignature, "s");
  assert.equal(
    text(out[0]),
    text({ role: "assistant", content: [{ type: "text", text: "yes" }], api: "b", provider: "q", model: "m2", stopReason: "stop", timestamp: 2 }),
  );
  // Another model's text block with a mistyped text becomes {type, text: ""}.
  assert.deepEqual(cleanUp([{ role: "assistant", content: [{ type: "text", text: 3 }] }], model)[0].content, [
    { type: "text", text: "" },
  ]);
});

test("same model: provider, api and id; missing or mistyped fields match only each other", () => {
  const m = model();
  assert.equal(isSameModel(assistant([], "stop"), m), true);
  assert.equal(isSameModel({ ...assistant([], "stop"), api: "x" }, m), false);
  assert.equal(isSameModel({}, {}), true);
  assert.equal(isSameModel({ provider: 1 }, { provider: 2 }), true);
  assert.equal(isSameModel({ provider: "p" }, {}), false);
  assert.equal(isSameModel(null, {}), false);
  assert.equal(isSameModel([], {}), false);
});

test("content text and field readers", () => {
  assert.equal(contentText("s"), "s");
  assert.equal(contentText([{ type: "text", text: "a" }, { type: "image" }, { type: "text", text: 1 }, { type: "text", text: "b" }]), "a\n\nb");
  assert.equal(contentText(undefined), "");
  assert.equal(contentText({ text: "x" }), "");
  assert.equal(role({ role: "user" }), "user");
  assert.equal(blockType({ type: "text" }), "text");
  assert.equal(strField({ a: 1 }, "a"), "");
  assert.equal(field({ a: 1 }, "a"), 1);
  assert.equal(field([1], "0"), undefined);
});

/** A small deterministic generator (xorshift) for the property test below. */
const rng = (seed) => () => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 2 ** 32;
};

test("P-6.5.2 properties on generated transcripts: no throw, no mutation, the guarantees hold", () => {
  const next = rng(0x9e3779b9);
  const pick = (list) => list[Math.floor(next() * list.length)];
  const maybe = (o, key, values) => (next() < 0.5 ? { ...o, [key]: pick(values) } : o);
  const block = () => {
    let b = { type: pick(["text", "thinking", "toolCall", "image", "other"]) };
    for (const [key, values] of [
      ["text", ["hi", " ", 3, USER_IMAGE_OMITTED]],
      ["thinking", ["hmm", "", "  "]],
      ["thinkingSignature", ["sig", ""]],
      ["redacted", [true, false]],
      ["thoughtSignature", ["t"]],
      ["id", ["call_1", "a|b", "c", 7]],
      ["name", ["t", "u"]],
      ["textSignature", ["s"]],
    ]) {
      b = maybe(b, key, values);
    }
    return b;
  };
  const message = () => {
    const content = pick([null, "text", 5, undefined, "list", "list", "list", "list"]);
    let m = { role: pick(["user", "assistant", "toolResult", "system", "other"]) };
    if (content !== undefined) m.content = content === "list" ? Array.from({ length: 1 + Math.floor(next() * 3) }, block) : content;
    for (const [key, values] of [
      ["provider", ["anthropic", "other"]],
      ["api", ["anthropic-messages"]],
      ["model", ["m1"]],
      ["toolCallId", ["call_1", "a|b", "c"]],
      ["stopReason", ["stop", "toolUse", "error", "aborted"]],
    ]) {
      m = maybe(m, key, values);
    }
    return m;
  };
  const normalize = (id) => id.replaceAll("|", "_");
  for (let run = 0; run < 2000; run++) {
    const images = next() < 0.5;
    const m = { id: "m1", api: "anthropic-messages", provider: "anthropic", input: images ? ["text", "image"] : ["text"] };
    const messages = deepFreeze(Array.from({ length: Math.floor(next() * 8) }, message));
    const before = text(messages);
    const normalizeId = next() < 0.5 ? normalize : undefined;
    const out = cleanUp(messages, m, normalizeId);
    assert.equal(text(messages), before);
    let pending = [];
    for (const msg of out) {
      const r = role(msg);
      assert.ok(Array.isArray(msg.content) || (r !== "assistant" && r !== "toolResult"), before);
      if (!images && Array.isArray(msg.content) && (r === "user" || r === "toolResult")) {
        assert.ok(!msg.content.some((b) => blockType(b) === "image"), before);
      }
      if (r === "toolResult") pending = pending.filter((id) => id !== strField(msg, "toolCallId"));
      if (r === "assistant" || r === "user") {
        assert.deepEqual(pending, [], before);
        if (r === "assistant") {
          assert.ok(!["error", "aborted"].includes(msg.stopReason), before);
          pending = msg.content.filter((b) => blockType(b) === "toolCall").map((b) => strField(b, "id"));
          if (normalizeId) pending.forEach((id) => assert.equal(normalizeId(id), id));
          if (!isSameModel(msg, m)) {
            // (Blocks of other types are left as they are.)
            const signed = (b) =>
              (blockType(b) === "text" && "textSignature" in b) || (blockType(b) === "toolCall" && "thoughtSignature" in b);
            assert.ok(!msg.content.some((b) => blockType(b) === "thinking" || signed(b)), before);
          }
        }
      }
    }
    assert.deepEqual(pending, [], before);
  }
});
