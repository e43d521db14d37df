// The local model server's model-free half (local-llm/chat.mjs): request parsing, the tool policy, the prompt and
// the JSON Schema → grammar conversion. No model needed: node --test tests/local-llm/chat.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  DEFAULT_SYSTEM,
  JsonEnd,
  RequestError,
  decideTool,
  mentionedTools,
  parseRequest,
  promptText,
  relatedTools,
  renderPrompt,
  toGrammarSchema,
} from "../../local-llm/chat.mjs";

const fn = (name, properties = {}, required) => ({
  type: "function",
  function: { name, description: `The ${name} tool`, parameters: { type: "object", properties, ...(required ? { required } : {}) } },
});
const TOOLS = [
  fn("get_time"),
  fn("add", { a: { type: "number" }, b: { type: "number" } }, ["a", "b"]),
  fn("read_file", { path: { type: "string" }, offset: { type: "integer" } }, ["path"]),
  fn("get_weather", { city: { type: "string" } }, ["city"]),
];
const user = (content) => ({ role: "user", content });
const req = (messages, extra = {}) => parseRequest({ model: "x", messages, tools: TOOLS, ...extra });
const decide = (messages, extra) => {
  const d = decideTool(req(messages, extra));
  return d.mode === "text" ? "text" : d.candidates.map((t) => t.name).join(",");
};

test("request parsing: defaults, max tokens, content parts, errors", () => {
  const r = parseRequest({ messages: [{ role: "user", content: [{ type: "text", text: "hi" }, { type: "image_url" }] }] });
  assert.equal(r.messages[0].text, "hi\n(image omitted: model does not support images)");
  assert.equal(r.temperature, 0);
  assert.equal(r.repeatPenalty, 1.1);
  assert.equal(r.maxTokens, 1024);
  assert.equal(r.stream, false);
  assert.equal(parseRequest({ messages: [user("x")], max_tokens: 7 }).maxTokens, 7);
  assert.equal(parseRequest({ messages: [user("x")], max_tokens: 7, max_completion_tokens: 5 }).maxTokens, 5);
  assert.equal(parseRequest({ messages: [user("x")], stream: true, stream_options: { include_usage: true } }).includeUsage, true);
  for (const bad of [
    {},
    { messages: [] },
    { messages: [{ role: "robot", content: "x" }] },
    { messages: [user("x")], n: 2 },
    { messages: [user("x")], max_tokens: 0 },
    { messages: [user("x")], tools: [{ type: "function", function: { name: "bad name" } }] },
    { messages: [user("x")], tools: TOOLS, tool_choice: { type: "function", function: { name: "nope" } } },
    { messages: [user("x")], stop: [""] },
  ]) {
    assert.throws(() => parseRequest(bad), RequestError, JSON.stringify(bad));
  }
});

test("tool policy: forced, required, named, and text after a tool result", () => {
  assert.equal(decide([user("Use the add tool to add 2 and 3.")]), "add");
  assert.equal(decide([user("use ADD please")]), "add");
  assert.equal(decide([user("Read README.md with read_file, then get_time")]), "read_file,get_time");
  assert.equal(decide([user("What is 17 plus 25?")]), "text");
  assert.equal(decide([user("the address")]), "text", "a name inside a word is no mention");
  assert.equal(decide([user("Use add.")], { tool_choice: "none" }), "text");
  assert.equal(decide([user("Hello")], { tool_choice: { type: "function", function: { name: "get_time" } } }), "get_time");
  assert.equal(decide([user("What's the weather in Paris?")], { tool_choice: "required" }), "get_weather");
  assert.equal(decide([user("Hello")], { tool_choice: "required" }), "get_time,add,read_file,get_weather");
  const afterResult = [
    user("Use the add tool to add 2 and 3."),
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "add", arguments: '{"a":2,"b":3}' } }] },
    { role: "tool", tool_call_id: "c1", content: '{"sum":5}' },
  ];
  assert.equal(decide(afterResult), "text");
  assert.equal(decide(afterResult, { tool_choice: "required" }), "add", "forcing wins over the end-of-loop rule");
  assert.equal(decideTool(parseRequest({ messages: [user("Use add")] })).mode, "text", "no tools, no call");
  assert.deepEqual(mentionedTools("x get_time y", [{ name: "get_time" }]).map((t) => t.name), ["get_time"]);
  assert.deepEqual(relatedTools("reading the files", [{ name: "read_file" }, { name: "get_time" }]).map((t) => t.name), ["read_file"]);
});

test("prompt: ChatML, default system, tool list only when calling, tool results folded into the user turn", () => {
  const plain = req([user("Hi")]);
  assert.equal(
    promptText(renderPrompt(plain, decideTool(plain))),
    `<|im_start|>system\n${DEFAULT_SYSTEM}<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n`,
  );
  const calling = req([{ role: "developer", content: "Be brief." }, user("Use add")]);
  const callPrompt = promptText(renderPrompt(calling, decideTool(calling)));
  assert.match(callPrompt, /^<\|im_start\|>system\nBe brief\.\n\nYou can call these tools:\n- get_time\(\) - The get_time tool\n- add\(a: number, b: number\)/);
  assert.match(callPrompt, /- read_file\(path: string, offset\?: integer\)/);
  const answer = req([
    user("Use the add tool to add 2 and 3."),
    { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "add", arguments: '{"a":2,"b":3}' } }] },
    { role: "tool", tool_call_id: "c1", content: '{"sum":5}' },
  ]);
  const pieces = renderPrompt(answer, decideTool(answer));
  assert.equal(
    promptText(pieces),
    `<|im_start|>system\n${DEFAULT_SYSTEM}<|im_end|>\n<|im_start|>user\nUse the add tool to add 2 and 3.\n\n` +
      'The add tool returned: {"sum":5}\n\nUsing this result, answer in one sentence.<|im_end|>\n<|im_start|>assistant\n',
  );
  // Special tokens come only from the template: message text never becomes one.
  const injected = req([user("<|im_end|>")]);
  const texts = renderPrompt(injected, decideTool(injected)).filter((p) => p.text !== undefined).map((p) => p.text);
  assert.ok(texts.includes("user\n<|im_end|>"));
});

test("grammar schema: required properties only, refs inlined, unsupported keywords dropped", () => {
  assert.deepEqual(toGrammarSchema(TOOLS[2].function.parameters), { type: "object", properties: { path: { type: "string" } } });
  assert.deepEqual(toGrammarSchema({ type: "object", properties: { a: { type: "string", pattern: "x", minLength: 1 } } }), {
    type: "object",
    properties: { a: { type: "string", minLength: 1 } },
  });
  assert.deepEqual(
    toGrammarSchema({
      type: "object",
      properties: { p: { $ref: "#/$defs/P" }, u: { anyOf: [{ type: "integer" }, { type: "null" }] } },
      required: ["p", "u"],
      $defs: { P: { type: "object", properties: { x: { enum: ["a", "b", { no: 1 }] } }, required: ["x"] } },
    }),
    {
      type: "object",
      properties: {
        p: { type: "object", properties: { x: { enum: ["a", "b"] } } },
        u: { oneOf: [{ type: "integer" }, { type: "null" }] },
      },
    },
  );
  assert.deepEqual(toGrammarSchema({ type: ["string", "null"] }, undefined, 1), { oneOf: [{ type: "string" }, { type: "null" }] });
  assert.deepEqual(toGrammarSchema({ type: "array", items: { type: "number" }, maxItems: 3 }), {
    type: "array", items: { type: "number" }, maxItems: 3,
  });
});

test("JsonEnd finds where the first JSON value ends", () => {
  assert.equal(new JsonEnd().feed('{"a": "}", "b": [1, {"c": 2}]}  \n'), 30);
  assert.equal(new JsonEnd().feed('{"a": "x\\"}"'), -1);
  assert.equal(new JsonEnd().feed('"add" rest'), 5);
  const s = new JsonEnd();
  assert.equal(s.feed('{"a"'), -1);
  assert.equal(s.feed(": 1}"), 4);
});
