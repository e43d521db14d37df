// The agent's tools over one folder: list_files and read_file run at once; write_file needs approval (the CLI asks on
// the terminal). Paths are relative to the folder; one that leads outside it is refused. Each result's
// `details.summary` is the one line the CLI prints for it.
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, relative, resolve } from "node:path";

const MAX_CHARS = 8000;
const pathParameter = (description) => ({ type: "object", properties: { path: { type: "string", description } }, required: ["path"] });
const result = (text, summary) => ({ content: [{ type: "text", text }], details: { summary } });

/** The tools over `folder` (an absolute path). */
export function fileTools(folder) {
  const inside = (path) => {
    const full = resolve(folder, String(path));
    const rel = relative(folder, full);
    if (rel.startsWith("..") || isAbsolute(rel)) throw new Error(`${path} is outside the folder`);
    return full;
  };
  return [
    {
      name: "list_files",
      label: "List files",
      description: "Lists a directory of the folder ('.' for the folder itself); directories end with '/'",
      parameters: pathParameter("A directory, relative to the folder"),
      async execute(_id, { path }) {
        const entries = await readdir(inside(path), { withFileTypes: true });
        const names = entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort();
        return result(names.join("\n"), `${names.length} ${names.length === 1 ? "entry" : "entries"}`);
      },
    },
    {
      name: "read_file",
      label: "Read file",
      description: `Reads a UTF-8 text file of the folder (at most ${MAX_CHARS} characters)`,
      parameters: pathParameter("A file, relative to the folder, e.g. README.md"),
      async execute(_id, { path }) {
        const full = inside(path);
        if ((await stat(full)).isDirectory()) throw new Error(`${path} is a directory: use list_files`);
        const text = await readFile(full, "utf8");
        const body = text.length > MAX_CHARS ? `${text.slice(0, MAX_CHARS)}\n… (${text.length - MAX_CHARS} more characters)` : text;
        return result(body, `${text.length} characters`);
      },
    },
    {
      name: "write_file",
      label: "Write file",
      description: "Writes a UTF-8 text file in the folder, replacing it if it exists (the user approves each call)",
      parameters: {
        type: "object",
        properties: { path: { type: "string", description: "A file, relative to the folder" }, content: { type: "string" } },
        required: ["path", "content"],
      },
      needsApproval: true,
      async execute(_id, { path, content }) {
        const full = inside(path);
        await mkdir(dirname(full), { recursive: true });
        await writeFile(full, content);
        return result(`Wrote ${content.length} characters to ${path}`, `wrote ${content.length} characters to ${path}`);
      },
    },
  ];
}
