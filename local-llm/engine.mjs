// The model half of the server: loads the GGUF with node-llama-cpp's prebuilt CPU binaries and generates from a
// rendered prompt (chat.mjs) on one context sequence, one request at a time (server.mjs serialises).
// Never builds llama.cpp (build: "never": its sources cannot be fetched here) and never uses more threads than asked.
import { getLlama, LlamaGrammarEvaluationState, LlamaLogLevel } from "node-llama-cpp";
import { JsonEnd, argumentsGrammarSchema, toGrammarSchema } from "./chat.mjs";

const TRAILING_UNKNOWN = /\uFFFD+$/u; // an incomplete UTF-8 character at the end of the detokenized text
const PENALTY_LAST_N = 64;

export async function loadEngine({ modelPath, threads = 1, contextSize = 8192, log = () => {} }) {
  const t0 = performance.now();
  const llama = await getLlama({ gpu: false, build: "never", maxThreads: threads, logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath });
  const context = await model.createContext({ contextSize, threads, sequences: 1 });
  const sequence = context.getSequence();
  log(`model loaded in ${Math.round(performance.now() - t0)} ms (threads ${threads}, context ${context.contextSize})`);
  const grammars = new Map(); // JSON text of a grammar schema → compiled grammar

  async function grammarFor(schema) {
    const key = JSON.stringify(schema);
    let g = grammars.get(key);
    if (!g) {
      g = schema === "json" ? await llama.getGrammarFor("json") : await llama.createGrammarForJsonSchema(schema);
      if (grammars.size > 64) grammars.delete(grammars.keys().next().value);
      grammars.set(key, g);
    }
    return g;
  }

  function tokenize(pieces) {
    // Special tokens only where the template puts them: message text containing "<|im_end|>" stays text.
    return pieces.flatMap((p) => (p.special !== undefined
      ? model.tokenize(p.special, true)
      : model.tokenize(p.text, false)));
  }

  /**
   * Generates after `tokens` (the prompt). Streams text through `onText(delta)`; stops at an end-of-generation
   * token, after `maxTokens` tokens, when `stopAt(text)` returns a cut index (`stopAt.holdBack`: characters kept back for a stop string that may be starting), or when `signal` aborts.
   * Returns { tokens: generated tokens, text, finish: "stop" | "length" | "abort" }.
   */
  async function generate(tokens, { maxTokens, grammar, sampling, repeat, onText, stopAt, signal }) {
    if (tokens.length >= context.contextSize) {
      const e = new Error(`The prompt has ${tokens.length} tokens; this server's context holds ${context.contextSize}`);
      e.code = "context_length_exceeded";
      throw e;
    }
    const budget = Math.min(maxTokens, context.contextSize - tokens.length);
    // Reuse the cached prefix (the previous request's prompt usually starts the same way); at least the last prompt
    // token is evaluated again, for its logits.
    await sequence.adaptStateToTokens(tokens.slice(0, -1), false);
    const input = tokens.slice(sequence.nextTokenIndex);
    const generated = [];
    let full = "";
    let text = "";
    let emitted = 0;
    let cutAt = -1;
    let finish = "stop";
    const grammarEvaluationState = grammar ? new LlamaGrammarEvaluationState({ model, grammar }) : undefined;
    const nl = model.tokens.nl;
    const iterator = sequence.evaluate(input, {
      temperature: sampling.temperature,
      topP: sampling.topP,
      seed: sampling.seed,
      grammarEvaluationState,
      repeatPenalty: repeat
        ? {
            punishTokens: () => generated.slice(-PENALTY_LAST_N).filter((t) => t !== nl),
            maxPunishTokens: PENALTY_LAST_N,
            penalty: repeat.penalty,
            frequencyPenalty: repeat.frequencyPenalty,
            presencePenalty: repeat.presencePenalty,
          }
        : undefined,
    });
    try {
      for await (const token of iterator) {
        generated.push(token);
        full = model.detokenize(generated);
        // Hold back a split multi-byte character until its other bytes arrive.
        text = full.replace(TRAILING_UNKNOWN, "");
        cutAt = stopAt ? stopAt(text) : -1;
        if (cutAt >= 0) {
          text = text.slice(0, cutAt);
          if (text.length > emitted) onText?.(text.slice(emitted));
          emitted = text.length;
          break;
        }
        const safe = stopAt?.holdBack ? Math.max(emitted, text.length - stopAt.holdBack) : text.length;
        if (safe > emitted) {
          onText?.(text.slice(emitted, safe));
          emitted = safe;
        }
        if (signal?.aborted) {
          finish = "abort";
          break;
        }
        if (generated.length >= budget) {
          finish = "length";
          break;
        }
      }
    } finally {
      await iterator.return();
    }
    if (cutAt < 0) text = full; // the end: nothing more will complete a held-back character
    if (finish !== "abort" && text.length > emitted) onText?.(text.slice(emitted));
    return { tokens: generated, text, finish };
  }

  /**
   * Runs one planned completion (see server.mjs) and reports through callbacks:
   *   onText(delta) · onToolStart(name) · onToolArguments(delta)
   * Resolves { finishReason: "stop" | "length" | "tool_calls", text, toolCall?, usage } (null when aborted).
   */
  async function complete(req, decision, pieces, { onText, onToolStart, onToolArguments, signal }) {
    const prompt = tokenize(pieces);
    const sampling = { temperature: req.temperature, topP: req.topP, seed: req.seed };
    let completionTokens = 0;
    const usage = () => ({ prompt_tokens: prompt.length, completion_tokens: completionTokens,
      total_tokens: prompt.length + completionTokens });

    if (decision.mode === "tool") {
      // 1. The tool's name: prefilled when there is one candidate, else chosen under a grammar among the candidates.
      let name = decision.candidates[0].name;
      let prefix = '{"name": ';
      if (decision.candidates.length > 1) {
        const g = await grammarFor({ enum: decision.candidates.map((t) => t.name) });
        const r = await generate(tokenize([...pieces, { text: prefix }]), {
          maxTokens: req.maxTokens, grammar: g, sampling, signal, stopAt: (t) => new JsonEnd().feed(t),
        });
        completionTokens += r.tokens.length;
        if (r.finish === "abort") return null;
        try {
          name = JSON.parse(r.text);
        } catch {
          return { finishReason: "length", text: "", usage: usage() };
        }
      }
      const tool = decision.candidates.find((t) => t.name === name) ?? decision.candidates[0];
      prefix += `${JSON.stringify(tool.name)}, "arguments": `;
      onToolStart(tool.name);
      // 2. The arguments: JSON under the grammar of the tool's parameters, streamed as they are generated.
      const schema = argumentsGrammarSchema(tool);
      if (Object.keys(schema.properties).length === 0) {
        onToolArguments("{}"); // nothing to choose: no need to ask the model
        return { finishReason: "tool_calls", text: "", toolCall: { name: tool.name, arguments: "{}" }, usage: usage() };
      }
      const g = await grammarFor(schema);
      const r = await generate(tokenize([...pieces, { text: prefix }]), {
        maxTokens: Math.max(1, req.maxTokens - completionTokens), grammar: g, sampling, signal,
        onText: onToolArguments, stopAt: (t) => new JsonEnd().feed(t),
      });
      completionTokens += r.tokens.length;
      if (r.finish === "abort") return null;
      const complete = new JsonEnd().feed(r.text) >= 0;
      return {
        finishReason: complete ? "tool_calls" : "length",
        text: "",
        toolCall: { name: tool.name, arguments: r.text },
        usage: usage(),
      };
    }

    // Text, optionally under response_format's grammar.
    let grammar;
    let stopAt;
    if (req.responseFormat) {
      grammar = await grammarFor(req.responseFormat.type === "json_schema" ? toGrammarSchema(req.responseFormat.schema) : "json");
      stopAt = (t) => new JsonEnd().feed(t);
    } else if (req.stop.length > 0) {
      stopAt = (t) => {
        let cut = -1;
        for (const s of req.stop) {
          const i = t.indexOf(s);
          if (i >= 0 && (cut < 0 || i < cut)) cut = i;
        }
        return cut;
      };
      stopAt.holdBack = Math.max(...req.stop.map((s) => s.length)) - 1;
    }
    const r = await generate(prompt, {
      maxTokens: req.maxTokens, grammar, sampling, signal, onText, stopAt,
      repeat: grammar ? undefined : {
        penalty: req.repeatPenalty,
        frequencyPenalty: req.frequencyPenalty > 0 ? Math.min(1, req.frequencyPenalty) : undefined,
        presencePenalty: req.presencePenalty > 0 ? Math.min(1, req.presencePenalty) : undefined,
      },
    });
    completionTokens += r.tokens.length;
    if (r.finish === "abort") return null;
    return { finishReason: r.finish, text: r.text, usage: usage() };
  }

  return {
    complete,
    contextSize: context.contextSize,
    threads,
    async dispose() {
      await context.dispose();
      await model.dispose();
      await llama.dispose();
    },
  };
}
