// `npm run dev`: Vite's dev server with the chat API of server/chat.js mounted on it (the same handler `npm start`
// serves), so the page and /api/* share one origin.
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";
import { createChatApi } from "./server/chat.js";

const chatApi = {
  name: "chat-api",
  configureServer(server) {
    const api = createChatApi(process.env);
    server.middlewares.use((req, res, next) => api(req, res, next));
  },
};

export default defineConfig({
  plugins: [react(), chatApi],
  server: { host: "127.0.0.1" },
  // Bundled when the dev server starts, not on the first page load (which would reload the page once).
  optimizeDeps: { include: ["react", "react-dom/client", "@ai-sdk/react", "ai"] },
});
