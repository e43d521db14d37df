// Declarations of the `agent-loop-wasm/web` entry (SPEC K-9.2): the whole API of the main entry, plus explicit
// initialisation for hosts without top-level await or with custom wasm hosting. Call `await init()` (or
// `initSync(...)`) once before anything else; until then every call throws `agent-loop-wasm is not initialized:
// await init() from "agent-loop-wasm/web" first`.

export * from "./index.js";

// The platform types below are read from the global scope when the compilation has them (DOM or Workers libs), so
// this file also compiles in projects without those libs.
type GlobalWasmModule = typeof globalThis extends { WebAssembly: { Module: { prototype: infer M } } } ? M : never;
type GlobalRequest = typeof globalThis extends { Request: { prototype: infer R } } ? R : never;
type GlobalResponse = typeof globalThis extends { Response: { prototype: infer R } } ? R : never;

/** Bytes or a compiled module of `agent_loop_wasm_bg.wasm`, for {@link initSync}. */
export type SyncInitInput = ArrayBuffer | ArrayBufferView | GlobalWasmModule;

/**
 * Where {@link init} finds the wasm: a URL (string or `URL`), a `Request`, a `Response` (e.g. from `fetch`), bytes,
 * or a compiled `WebAssembly.Module`.
 */
export type InitInput = string | URL | GlobalRequest | GlobalResponse | SyncInitInput;

/**
 * Loads and instantiates the wasm. Without `input` the file is found next to the module
 * (`new URL("agent_loop_wasm_bg.wasm", import.meta.url)`). Safe to call more than once; later calls reuse the first
 * instance. The built-in providers need no wasm of their own: they are JS, imported on their first request.
 */
export declare function init(
  input?:
    | InitInput
    | Promise<InitInput>
    | { module_or_path?: InitInput | Promise<InitInput> },
): Promise<void>;

/** Instantiates the wasm synchronously from its bytes or a compiled module (e.g. Workers' wasm imports). */
export declare function initSync(bytesOrModule: SyncInitInput | { module: SyncInitInput }): void;
