// `agent-loop-wasm/mcp` (issue 18): the tools of an MCP server as `AgentTool`s, over a connected `Client` of the
// official SDK (`@modelcontextprotocol/sdk`, an optional peer dependency; all protocol work is the SDK's), and a
// live sync of `agent.state.tools` with the server's `notifications/tools/list_changed`. It never touches the wasm
// (nothing here imports the main entry), so the main entry's size and load are unchanged by this file.
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { codedError } from "./errors.js";

const LIST_CHANGED = "notifications/tools/list_changed";
/** Bound on `tools/list` pages: a server that hands out cursors forever must not hang the caller. */
const MAX_PAGES = 1000;

/** tool object -> the server it calls (for clash messages naming both sides). */
const toolServers = new WeakMap();
/** client -> { listeners: Set<() => void>, previous } — one SDK handler per client, shared by every sync. */
const clientHubs = new WeakMap();

/** run signal -> the per-call controllers it aborts (see callSignal). */
const fanouts = new WeakMap();

/**
 * A signal of its own for one `tools/call`, aborted with the run's signal. The SDK adds an abort listener to the
 * signal of every request and never removes it; on the run's signal those would pile up for the whole run (Node
 * warns past 10, e.g. one batch of parallel calls). The run's signal gets one listener, whatever the number of calls.
 */
function callSignal(signal) {
  const controller = new AbortController();
  if (!signal) return { signal: undefined, done() {} };
  if (signal.aborted) {
    controller.abort(signal.reason);
    return { signal: controller.signal, done() {} };
  }
  let calls = fanouts.get(signal);
  if (!calls) {
    const set = new Set();
    calls = set;
    fanouts.set(signal, set);
    signal.addEventListener("abort", () => {
      for (const c of set) c.abort(signal.reason);
      set.clear();
    }, { once: true });
  }
  calls.add(controller);
  return { signal: controller.signal, done: () => calls.delete(controller) };
}

function serverName(client) {
  try {
    const info = typeof client.getServerVersion === "function" ? client.getServerVersion() : undefined;
    if (info && typeof info.name === "string" && info.name !== "") return info.name;
  } catch {
    // an unusual client: fall through to the generic name
  }
  return "MCP server";
}

function checkClient(client, fn) {
  if (client === null || typeof client !== "object") {
    throw codedError("INVALID_ARGUMENT", `${fn}: client must be a connected Client from @modelcontextprotocol/sdk`);
  }
  for (const method of ["listTools", "callTool"]) {
    if (typeof client[method] !== "function") {
      throw codedError("INVALID_ARGUMENT", `${fn}: client.${method} is not a function (pass a Client from @modelcontextprotocol/sdk)`);
    }
  }
}

function checkOptions(options, fn) {
  if (options === undefined || options === null) return {};
  if (typeof options !== "object") throw codedError("INVALID_ARGUMENT", `${fn}: options must be an object`);
  const { prefix, filter, timeoutMs } = options;
  if (prefix !== undefined && typeof prefix !== "string") throw codedError("INVALID_ARGUMENT", `${fn}: options.prefix must be a string`);
  if (filter !== undefined && typeof filter !== "function" && !Array.isArray(filter)) {
    throw codedError("INVALID_ARGUMENT", `${fn}: options.filter must be a function or an array of tool names`);
  }
  if (timeoutMs !== undefined && !(typeof timeoutMs === "number" && timeoutMs > 0)) {
    throw codedError("INVALID_ARGUMENT", `${fn}: options.timeoutMs must be a positive number`);
  }
  return options;
}

function selected(filter, tool) {
  if (filter === undefined) return true;
  if (Array.isArray(filter)) return filter.includes(tool.name);
  return Boolean(filter(tool));
}

async function listAllTools(client) {
  const tools = [];
  let cursor;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await client.listTools(cursor === undefined ? undefined : { cursor });
    if (Array.isArray(result?.tools)) tools.push(...result.tools);
    cursor = result?.nextCursor;
    if (typeof cursor !== "string" || cursor === "") return tools;
  }
  throw codedError("MCP_TOOLS", `tools/list of ${serverName(client)} returned more than ${MAX_PAGES} pages`);
}

function base64Bytes(data) {
  // 4 base64 characters carry 3 bytes; padding does not count
  if (typeof data !== "string") return 0;
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/**
 * One MCP content block -> the blocks the model can take (text and images only, SPEC §2.1). What has no block of
 * its own (audio, binary resources, links) becomes a one-line text that says what it was; the raw blocks stay in
 * `details.content` for UIs.
 */
function toContentBlocks(block) {
  switch (block?.type) {
    case "text":
      return [{ type: "text", text: String(block.text ?? "") }];
    case "image":
      return [{ type: "image", data: String(block.data ?? ""), mimeType: String(block.mimeType ?? "image/png") }];
    case "audio":
      return [{ type: "text", text: `[audio ${block.mimeType ?? "of unknown type"}, ${base64Bytes(block.data)} bytes]` }];
    case "resource": {
      const r = block.resource ?? {};
      if (typeof r.text === "string") return [{ type: "text", text: r.text }];
      if (typeof r.blob === "string" && typeof r.mimeType === "string" && r.mimeType.startsWith("image/")) {
        return [{ type: "image", data: r.blob, mimeType: r.mimeType }];
      }
      return [{ type: "text", text: `[resource ${r.uri ?? ""} (${r.mimeType ?? "binary"}), ${base64Bytes(r.blob)} bytes]` }];
    }
    case "resource_link": {
      const parts = [block.uri ?? ""];
      if (block.mimeType) parts.push(`(${block.mimeType})`);
      const head = `[resource link ${block.name ?? ""}: ${parts.join(" ")}]`;
      return [{ type: "text", text: block.description ? `${head} ${block.description}` : head }];
    }
    default:
      return [{ type: "text", text: `[MCP content of type ${JSON.stringify(String(block?.type))}]` }];
  }
}

function toAgentResult(tool, result) {
  const raw = Array.isArray(result?.content) ? result.content : [];
  const content = raw.flatMap(toContentBlocks);
  const out = { content, details: { tool: tool.name, content: raw } };
  if (result?.structuredContent !== undefined) {
    out.structuredContent = result.structuredContent;
    // MCP servers SHOULD also serialise structured output as text; when one does not, the model still sees it.
    if (content.length === 0) content.push({ type: "text", text: JSON.stringify(result.structuredContent) });
  }
  if (result?._meta !== undefined) out.details.meta = result._meta;
  if (result?.isError === true) {
    out.isError = true;
    if (content.length === 0) content.push({ type: "text", text: `Tool "${tool.name}" failed` });
  }
  return out;
}

function progressResult(tool, progress) {
  const { progress: done, total, message } = progress ?? {};
  const text = typeof message === "string" && message !== "" ? message : total !== undefined ? `${done}/${total}` : `${done}`;
  const details = { tool: tool.name, progress: done };
  if (total !== undefined) details.total = total;
  if (message !== undefined) details.message = message;
  return { content: [{ type: "text", text }], details };
}

function toAgentTool(client, server, tool, options) {
  const name = `${options.prefix ?? ""}${tool.name}`;
  const agentTool = {
    name,
    label: tool.title ?? tool.annotations?.title ?? tool.name,
    description: tool.description ?? "",
    parameters: tool.inputSchema ?? { type: "object", properties: {} },
    async execute(_toolCallId, params, signal, onUpdate) {
      const call = callSignal(signal);
      const requestOptions = { signal: call.signal, resetTimeoutOnProgress: true };
      if (options.timeoutMs !== undefined) requestOptions.timeout = options.timeoutMs;
      // The SDK asks the server for progress (a progressToken) only when onprogress is given.
      if (typeof onUpdate === "function") requestOptions.onprogress = (p) => onUpdate(progressResult(tool, p));
      // Transport failures and JSON-RPC errors reject with the SDK's McpError; the loop turns a throw into an error
      // result carrying that message (the server's own text for JSON-RPC errors).
      try {
        const result = await client.callTool({ name: tool.name, arguments: params ?? {} }, undefined, requestOptions);
        return toAgentResult(tool, result);
      } finally {
        call.done();
      }
    },
  };
  if (tool.outputSchema !== undefined) agentTool.outputSchema = tool.outputSchema;
  toolServers.set(agentTool, server);
  return agentTool;
}

/**
 * The tools an MCP server lists (`tools/list`, every page), as `AgentTool`s whose `execute` calls `tools/call`
 * with the run's abort signal and turns progress notifications into `onUpdate` partial results.
 */
export async function mcpTools(client, options) {
  checkClient(client, "mcpTools");
  const opts = checkOptions(options, "mcpTools");
  const server = serverName(client);
  const listed = (await listAllTools(client)).filter((tool) => tool && typeof tool.name === "string" && selected(opts.filter, tool));
  const tools = listed.map((tool) => toAgentTool(client, server, tool, opts));
  const seen = new Set();
  for (const tool of tools) {
    if (seen.has(tool.name)) throw codedError("MCP_TOOLS", `mcpTools: ${server} lists the tool "${tool.name}" twice`);
    seen.add(tool.name);
  }
  return tools;
}

function subscribe(client, listener) {
  if (typeof client.setNotificationHandler !== "function") {
    throw codedError("INVALID_ARGUMENT", "syncMcpTools: client.setNotificationHandler is not a function (pass a Client from @modelcontextprotocol/sdk)");
  }
  let hub = clientHubs.get(client);
  if (!hub) {
    // The SDK keeps one handler per method. One set earlier (the app's, or the SDK's own `listChanged` option) is
    // still called after ours, and put back when the last sync on this client stops.
    const handlers = client._notificationHandlers;
    const previous = handlers instanceof Map ? handlers.get(LIST_CHANGED) : undefined;
    hub = { listeners: new Set(), previous };
    clientHubs.set(client, hub);
    const listeners = hub.listeners;
    client.setNotificationHandler(ToolListChangedNotificationSchema, async (notification) => {
      for (const l of [...listeners]) l();
      if (previous) await previous(notification);
    });
  }
  hub.listeners.add(listener);
  return () => {
    const current = clientHubs.get(client);
    if (!current || !current.listeners.delete(listener) || current.listeners.size > 0) return;
    clientHubs.delete(client);
    if (current.previous) {
      const previous = current.previous;
      client.setNotificationHandler(ToolListChangedNotificationSchema, (notification) => previous(notification));
    } else if (typeof client.removeNotificationHandler === "function") {
      client.removeNotificationHandler(LIST_CHANGED);
    }
  };
}

/**
 * Keeps this server's tools in `agent.state.tools` equal to what the server lists, refreshing on every
 * `notifications/tools/list_changed`; the next request declares the difference to the model (`toolsAdded` /
 * `toolsRemoved`, SPEC §3.4). Resolves, once the first list is in, to a function that stops the sync and takes
 * this server's tools out of `agent.state.tools`.
 */
export async function syncMcpTools(agent, client, options) {
  if (agent === null || typeof agent !== "object" || agent.state === null || typeof agent.state !== "object" || !Array.isArray(agent.state.tools)) {
    throw codedError("INVALID_ARGUMENT", "syncMcpTools: agent must be an Agent (an object whose state.tools is an array)");
  }
  checkClient(client, "syncMcpTools");
  const opts = checkOptions(options, "syncMcpTools");
  if (opts.onError !== undefined && typeof opts.onError !== "function") throw codedError("INVALID_ARGUMENT", "syncMcpTools: options.onError must be a function");
  if (opts.onChange !== undefined && typeof opts.onChange !== "function") throw codedError("INVALID_ARGUMENT", "syncMcpTools: options.onChange must be a function");
  const server = serverName(client);
  let owned = new Set();
  let stopped = false;

  /** Puts `next` in place of the tools this sync owns; throws, changing nothing, on a name another tool has. */
  function install(next) {
    const others = agent.state.tools.filter((t) => !owned.has(t));
    const taken = new Map(others.map((t) => [t?.name, t]));
    for (const tool of next) {
      const other = taken.get(tool.name);
      if (other) {
        const owner = toolServers.get(other);
        const from = owner === undefined ? "a tool already in agent.state.tools" : `a tool of ${owner}`;
        throw codedError("MCP_TOOLS", `syncMcpTools: the tool "${tool.name}" of ${server} clashes with ${from}; give this server a prefix (options.prefix)`);
      }
    }
    owned = new Set(next);
    agent.state.tools = [...others, ...next];
  }

  // Refreshes run one at a time (the first listing included); notifications arriving during one coalesce into
  // one more refresh after it.
  let running = null;
  let again = false;
  async function refresh() {
    do {
      again = false;
      try {
        const next = await mcpTools(client, opts);
        if (stopped) return;
        install(next);
        opts.onChange?.(next);
      } catch (error) {
        if (stopped) return;
        // An app's callback that throws must not become an unhandled rejection of this background refresh.
        try {
          if (opts.onError) opts.onError(error);
          else console.error(error);
        } catch (callbackError) {
          console.error(callbackError);
        }
      }
    } while (again && !stopped);
  }
  const onListChanged = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = refresh().finally(() => {
      running = null;
    });
  };
  // Subscribed before the first listing, so a change made while it runs is not missed.
  const unsubscribe = subscribe(client, onListChanged);
  running = mcpTools(client, opts).then(install);
  try {
    await running;
  } catch (error) {
    stopped = true;
    unsubscribe();
    throw error;
  } finally {
    running = null;
  }
  if (again) {
    again = false;
    onListChanged();
  }

  return function stop() {
    if (stopped) return;
    stopped = true;
    unsubscribe();
    agent.state.tools = agent.state.tools.filter((t) => !owned.has(t));
    owned = new Set();
  };
}
