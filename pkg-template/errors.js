// The errors the library throws itself (SPEC E-8.6, issue 42), one class per stable code. An error keeps its message
// and its constructor (a plain `Error` or `TypeError`, so it reads and prints exactly as before) and carries its code:
// `error.code`, and a brand under a global symbol that every class tests in `instanceof`. So `instanceof` holds across
// the package's entries, its ESM and CommonJS builds, two copies in one bundle and every runtime, and an error a
// caller's own callback threw (no brand) is never taken for one of ours. Plain JS, no wasm: every entry imports it.
//
// The core (Rust) throws the codes of `core::errors::CORE_CODES` through `brandError` in src/js/snippets/values.js,
// the twin of `brand` here; tests/js/error-codes.test.mjs holds the two tables and the two brands to each other.

const BRAND = Symbol.for("agent-loop-wasm.errorCode");

/** Every code, with its class's name and whether its errors are `TypeError`s. */
const CODES = {
  INVALID_ARGUMENT: ["InvalidArgumentError", true],
  AGENT_BUSY: ["AgentBusyError", false],
  APPROVALS_PENDING: ["ApprovalsPendingError", false],
  INVALID_APPROVAL: ["InvalidApprovalError", false],
  CANNOT_CONTINUE: ["CannotContinueError", false],
  LIMIT_REACHED: ["LimitReachedError", false],
  RESTORE_REFUSED: ["RestoreRefusedError", false],
  NOT_SERIALIZABLE: ["NotSerializableError", true],
  NOT_INITIALIZED: ["NotInitializedError", false],
  INSTANCE_FAILED: ["InstanceFailedError", false],
  NO_SUCH_MODEL: ["NoSuchModelError", false],
  MCP_TOOLS: ["McpToolsError", false],
};

/** The codes, each its own name: `ERROR_CODES.AGENT_BUSY === "AGENT_BUSY"`. */
export const ERROR_CODES = Object.freeze(Object.fromEntries(Object.keys(CODES).map((code) => [code, code])));

/** Brands `error` with `code`: a `code` property (not enumerable, so nothing prints or serializes differently). */
export function brand(error, code) {
  Object.defineProperty(error, BRAND, { value: code });
  Object.defineProperty(error, "code", { value: code, writable: true, configurable: true });
  return error;
}

/** The error the library throws for `code`: a plain `Error` or `TypeError` with `message`, branded. */
export function codedError(code, message) {
  const kind = CODES[code];
  if (kind === undefined) throw new RangeError(`agent-loop-wasm: no error code ${code}`);
  return brand(kind[1] ? new TypeError(message) : new Error(message), code);
}

/** The code `value` is branded with, if it is an error of the library. */
function codeOf(value) {
  if (value === null || (typeof value !== "object" && typeof value !== "function")) return undefined;
  const code = value[BRAND];
  return typeof code === "string" ? code : undefined;
}

/** Any error the library throws itself: `error instanceof AgentLoopError` tells it from a callback's own error. */
export class AgentLoopError extends Error {
  /** `code`: one of `ERROR_CODES`. */
  constructor(message, code, options) {
    if (CODES[code] === undefined) throw new RangeError(`AgentLoopError: no error code ${code}`);
    super(message, options);
    brand(this, code);
  }
  static [Symbol.hasInstance](value) {
    return codeOf(value) !== undefined;
  }
}

function errorClass(code) {
  const [name, isType] = CODES[code];
  const Base = isType ? TypeError : Error;
  const Kind = class extends Base {
    constructor(message, options) {
      super(message, options);
      brand(this, code);
    }
    static [Symbol.hasInstance](value) {
      return codeOf(value) === code;
    }
  };
  Object.defineProperty(Kind, "name", { value: name });
  Object.defineProperty(Kind, "code", { value: code, enumerable: true });
  return Kind;
}

export const InvalidArgumentError = errorClass("INVALID_ARGUMENT");
export const AgentBusyError = errorClass("AGENT_BUSY");
export const ApprovalsPendingError = errorClass("APPROVALS_PENDING");
export const InvalidApprovalError = errorClass("INVALID_APPROVAL");
export const CannotContinueError = errorClass("CANNOT_CONTINUE");
export const LimitReachedError = errorClass("LIMIT_REACHED");
export const RestoreRefusedError = errorClass("RESTORE_REFUSED");
export const NotSerializableError = errorClass("NOT_SERIALIZABLE");
export const NotInitializedError = errorClass("NOT_INITIALIZED");
export const InstanceFailedError = errorClass("INSTANCE_FAILED");
export const NoSuchModelError = errorClass("NO_SUCH_MODEL");
export const McpToolsError = errorClass("MCP_TOOLS");
