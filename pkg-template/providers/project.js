// The request's view of the caller's values (§6, issue 13): the wire formats get a copy of only the message fields
// they read, each read once (a getter or a proxy answers once), and never write a caller value (D6). Tool-call
// `arguments` and tool schemas are forwarded as the caller's own objects, checked once that JSON can write them so an
// unsendable one is named by its path. Every other field is never touched.

import { errorMessage } from "../../src/js/snippets/values.js";
import { isObject } from "./json.js";

const MESSAGE_FIELDS = new Set(["role", "content", "timestamp", "toolCallId", "toolName", "isError", "api",
  "provider", "model", "stopReason", "sections", "toolsAdded", "toolsRemoved"]);
const BLOCK_FIELDS = new Set(["type", "text", "textSignature", "thinking", "thinkingSignature", "redacted", "data",
  "mimeType", "id", "name", "arguments", "thoughtSignature"]);
const TOOL_FIELDS = new Set(["name", "description", "parameters"]);

class Projection {
  constructor() {
    // Where the walk is (`"context.messages"`, then keys and indices): written out only for an error, so a long
    // transcript builds no path strings.
    this.at = ["context.messages"];
  }

  /** The walk's place as text: `context.messages[3].content[1].arguments`. */
  where() {
    let path = "";
    for (const step of this.at) path += typeof step === "number" ? `[${step}]` : path === "" ? step : `.${step}`;
    return path;
  }

  /** A forwarded value (arguments, a schema's member): the caller's own, once JSON can write it. */
  forwarded(v) {
    let text;
    try {
      text = JSON.stringify(v);
    } catch (e) {
      throw new Error(`${this.where()}: ${errorMessage(e)}`);
    }
    return text === undefined ? undefined : v;
  }

  /** A scalar field as JSON.stringify would write it; objects in scalar positions are stand-ins, never read. */
  scalar(v) {
    switch (typeof v) {
      case "string": case "number": case "boolean": return v;
      // No wire format sends a non-string scalar field as it is: a stand-in.
      case "bigint": return null;
      case "object": return v === null ? null : Array.isArray(v) ? [] : {};
      default: return undefined;
    }
  }

  fields(source, allowed, each) {
    const out = {};
    for (const key of Object.keys(source)) {
      if (!allowed.has(key)) continue;
      this.at.push(key);
      const v = each(key, source[key]);
      this.at.pop();
      if (v !== undefined) out[key] = v;
    }
    return out;
  }

  list(v, each) {
    if (!Array.isArray(v)) return this.scalar(v);
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) {
      this.at.push(i);
      const item = each(v[i]);
      this.at.pop();
      out[i] = item === undefined ? null : item;
    }
    return out;
  }

  message(m) {
    if (!isObject(m)) return this.scalar(m);
    return this.fields(m, MESSAGE_FIELDS, (key, v) => {
      switch (key) {
        case "content": return typeof v === "string" ? v : this.list(v, (b) => this.block(b));
        case "sections": return this.sections(v);
        case "toolsAdded": case "toolsRemoved": return this.list(v, (t) => this.tool(t));
        default: return this.scalar(v);
      }
    });
  }

  block(b) {
    if (!isObject(b)) return this.scalar(b);
    return this.fields(b, BLOCK_FIELDS, (key, v) =>
      key === "arguments" && ((v !== null && typeof v === "object") || typeof v === "bigint") ? this.forwarded(v) : this.scalar(v));
  }

  sections(v) {
    if (!isObject(v)) return this.scalar(v);
    const out = {};
    for (const name of Object.keys(v)) {
      this.at.push(name);
      const value = this.scalar(v[name]);
      this.at.pop();
      if (value !== undefined) out[name] = value;
    }
    return out;
  }

  tool(t) {
    if (!isObject(t)) return this.scalar(t);
    return this.fields(t, TOOL_FIELDS, (key, v) => (key === "parameters" && v !== null && typeof v === "object" ? this.schema(v) : this.scalar(v)));
  }

  /** A schema: the caller's object when JSON can write it whole; else the member that cannot be written is named. */
  schema(v) {
    try {
      JSON.stringify(v);
      return v;
    } catch {}
    if (isObject(v) && typeof v.toJSON !== "function") {
      for (const key of Object.keys(v)) {
        this.at.push(key);
        this.forwarded(v[key]);
        this.at.pop();
      }
    }
    return this.forwarded(v);
  }
}

/** `[messages, model, options]`: the fields of `context.messages` the wire formats read, and `model` and `options` as
 *  JSON data (null when they cannot be written). Throws an Error naming the field of a message value that cannot be
 *  sent. */
export function projectMessages(messages, model, options) {
  const p = new Projection();
  const copy = p.list(messages, (m) => p.message(m));
  const json = (v) => {
    try {
      const text = JSON.stringify(v);
      return text === undefined ? null : JSON.parse(text);
    } catch {
      return null;
    }
  };
  return [copy, json(model), json(options)];
}
