// The demo's MCP panel (issue 18): connects to an MCP server over Streamable HTTP with the SDK's client (bundled
// into ./vendor/mcp-sdk.js by scripts/mcp-vendor.mjs, since the page has no build step) and keeps the server's
// tools, prefixed "mcp_", in a holder kept by syncMcpTools; app.js adds them to the agent's tools before each run,
// so a list change on the server reaches the model on the next run.
export function createMcpPanel({ $, el, toast, onChange }) {
  const holder = { state: { tools: [] } };
  let session = null;

  function show(text, list = holder.state.tools) {
    $("mcp-status").textContent = text;
    $("mcp-tools").replaceChildren(...list.map((t) =>
      el("li", { class: "tool-toggle" }, el("span", {}, el("code", { text: t.name }), el("span", { class: "tool-desc", text: t.description.split(/(?<=\.)\s/)[0] })))));
  }

  async function disconnect() {
    if (!session) return;
    const { stop, client } = session;
    session = null;
    stop();
    await client.close().catch(() => {});
    show("Not connected");
    onChange();
  }

  async function connect(url) {
    await disconnect();
    let sdk;
    try {
      sdk = await import("./vendor/mcp-sdk.js");
    } catch {
      throw new Error("The MCP client is not built: run node scripts/mcp-vendor.mjs, then reload");
    }
    const { syncMcpTools } = await import("/pkg/dist/web/mcp.js");
    const client = new sdk.Client({ name: "agent-loop-wasm-demo", version: "1.0.0" });
    await client.connect(new sdk.StreamableHTTPClientTransport(new URL(url)));
    const server = client.getServerVersion()?.name ?? url;
    const stop = await syncMcpTools(holder, client, {
      prefix: "mcp_",
      onChange: () => {
        show(`${server}: ${holder.state.tools.length} tools (updated)`);
        onChange();
      },
      onError: (e) => toast(`MCP: ${e.message}`, "error"),
    });
    session = { client, stop };
    show(`${server}: ${holder.state.tools.length} tools`);
    onChange();
  }

  $("mcp-connect").addEventListener("click", async () => {
    const url = $("mcp-url").value.trim();
    $("mcp-connect").disabled = true;
    show("Connecting…", []);
    try {
      if (url === "") await disconnect();
      else await connect(url);
    } catch (e) {
      show(`Not connected: ${e.message}`, []);
      toast(`MCP: ${e.message}`, "error");
    } finally {
      $("mcp-connect").disabled = false;
    }
  });

  return { tools: () => holder.state.tools };
}
