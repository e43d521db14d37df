// The page: one chat per id in the URL (?chat=<id>), its history loaded from the server, then useChat with
// `resume: true` (an answer still under way when the page loaded streams on) and approval buttons for the calls that
// wait. VITE_CHAT_API (default /api; ":id" in it becomes the chat id) and VITE_CHAT_TOKEN (a bearer token) point the
// page at another server that serves the same routes.
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";
import { useEffect, useMemo, useState } from "react";

const API = (import.meta.env.VITE_CHAT_API || "/api").replace(/\/+$/, "");
const TOKEN = import.meta.env.VITE_CHAT_TOKEN;
const HEADERS = TOKEN ? { authorization: `Bearer ${TOKEN}` } : {};
/** A URL of the chat API: POST <base>/chat, GET <base>/chat/<id>/stream (the transport's default), GET <base>/chats/<id>. */
const endpoint = (id, path) => `${API.replaceAll(":id", encodeURIComponent(id))}${path}`;

const chatIdInUrl = () => new URLSearchParams(location.search).get("chat");

export function App() {
  const [chatId, setChatId] = useState(() => chatIdInUrl() ?? crypto.randomUUID());
  const [loaded, setLoaded] = useState(null);
  const [info, setInfo] = useState(null);

  useEffect(() => {
    if (chatIdInUrl() !== chatId) history.replaceState(null, "", `?chat=${encodeURIComponent(chatId)}`);
    const back = () => setChatId(chatIdInUrl() ?? crypto.randomUUID());
    addEventListener("popstate", back);
    return () => removeEventListener("popstate", back);
  }, [chatId]);

  useEffect(() => {
    let current = true;
    setLoaded(null);
    fetch(endpoint(chatId, `/chats/${encodeURIComponent(chatId)}`), { headers: HEADERS })
      .then((r) => (r.ok ? r.json() : Promise.reject(new Error(`the history: HTTP ${r.status}`))))
      .then((messages) => current && setLoaded({ chatId, messages }))
      .catch((error) => current && setLoaded({ chatId, messages: [], error: error.message }));
    return () => {
      current = false;
    };
  }, [chatId]);

  useEffect(() => {
    fetch(endpoint(chatId, "/info"), { headers: HEADERS })
      .then((r) => (r.ok ? r.json() : null))
      .then(setInfo, () => setInfo(null));
  }, []);

  const newChat = () => {
    const id = crypto.randomUUID();
    history.pushState(null, "", `?chat=${encodeURIComponent(id)}`);
    setChatId(id);
  };

  return (
    <main>
      <header>
        <h1>Store support</h1>
        <button type="button" onClick={newChat}>
          New chat
        </button>
      </header>
      {info?.offline && (
        <p className="notice" data-testid="offline">
          Offline: the answers come from a small scripted stream function in this example, <strong>not a language model</strong>.
          Try “Where is order 1042?” or “Refund order 2077”. Set OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY for a real one.
        </p>
      )}
      {loaded?.error && <p className="error">{loaded.error}</p>}
      {loaded?.chatId === chatId ? <Chat key={chatId} id={chatId} initialMessages={loaded.messages} /> : <p>Loading…</p>}
    </main>
  );
}

function Chat({ id, initialMessages }) {
  const transport = useMemo(() => new DefaultChatTransport({ api: endpoint(id, "/chat"), headers: HEADERS }), [id]);
  const { messages, sendMessage, addToolApprovalResponse, status, error } = useChat({
    id,
    messages: initialMessages,
    transport,
    resume: true,
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const [input, setInput] = useState("");
  const busy = status === "submitted" || status === "streaming";

  const submit = (event) => {
    event.preventDefault();
    if (!input.trim() || busy) return;
    sendMessage({ text: input });
    setInput("");
  };

  return (
    <>
      <ol className="messages">
        {messages.map((m) => (
          <li key={m.id} className={m.role} data-role={m.role} data-id={m.id}>
            {m.parts.map((part, i) => (
              <Part key={i} part={part} onDecide={addToolApprovalResponse} />
            ))}
          </li>
        ))}
      </ol>
      <p className="status" data-testid="status" data-status={status}>
        {busy ? "Answering…" : ""}
      </p>
      {error && <p className="error" data-testid="error">{error.message}</p>}
      <form onSubmit={submit}>
        <input value={input} onChange={(e) => setInput(e.target.value)} placeholder="Ask about an order" aria-label="Message" />
        <button type="submit" disabled={busy}>
          Send
        </button>
      </form>
    </>
  );
}

const outputText = (output) => (Array.isArray(output?.content) ? output.content.filter((b) => b.type === "text").map((b) => b.text).join("\n") : JSON.stringify(output));

function Part({ part, onDecide }) {
  if (part.type === "text") return <p data-part="text">{part.text}</p>;
  if (part.type === "reasoning") {
    return (
      <p className="reasoning" data-part="reasoning">
        {part.text}
      </p>
    );
  }
  if (part.type === "steering-message") return <p data-part="steering">{part.parts.map((p) => p.text ?? "").join("")}</p>;
  if (part.type.startsWith("tool-") || part.type === "dynamic-tool") return <ToolPart part={part} onDecide={onDecide} />;
  return null;
}

function ToolPart({ part, onDecide }) {
  const name = part.type === "dynamic-tool" ? part.toolName : part.type.slice("tool-".length);
  const [reason, setReason] = useState("");
  return (
    <div className="tool" data-part="tool" data-tool={name} data-state={part.state}>
      <code>
        {name}({JSON.stringify(part.input ?? {})})
      </code>{" "}
      <span className="state">{part.state}</span>
      {part.state === "output-available" && <p data-testid="output">{outputText(part.output)}</p>}
      {part.state === "output-error" && <p className="error">{part.errorText}</p>}
      {part.state === "output-denied" && <p data-testid="denied">Denied{part.approval?.reason ? `: ${part.approval.reason}` : ""}</p>}
      {part.state === "approval-requested" && (
        <div className="approval">
          <button type="button" onClick={() => onDecide({ id: part.approval.id, approved: true })}>
            Approve
          </button>
          <input value={reason} onChange={(e) => setReason(e.target.value)} placeholder="Reason (optional)" aria-label="Reason" />
          <button type="button" onClick={() => onDecide({ id: part.approval.id, approved: false, ...(reason ? { reason } : {}) })}>
            Deny
          </button>
        </div>
      )}
    </div>
  );
}
