// Tools as agent-loop-wasm declares them (pi-agent-core's `AgentTool` and its results, pi-ai's `Tool`, the tool
// parameters' typing). Re-exported by index.d.ts; split from it only to keep each file readable.

import type { AgentContext } from "./index.js";
import type {
  AssistantMessage,
  ImageContent,
  JsonValue,
  SystemMessage,
  TextContent,
  ToolCall,
  Usage,
} from "./ai.js";

// ============================================================================================================
// Tools
// ============================================================================================================

/** Provider-side constrained sampling for a tool's arguments. */
export type ConstrainedSamplingConfig =
  | { type: "json_schema"; strict: "prefer" | "require" }
  | { type: "grammar"; variants: Partial<Record<"openai_lark" | "openai_regex", string>> };

/**
 * A Standard Schema v1 (standardschema.dev) that also writes its JSON Schema (Standard JSON Schema), as zod 4.2+,
 * ArkType 2.1.28+ and Valibot through `toStandardJsonSchema` of `@valibot/to-json-schema` implement it. As a tool's
 * `parameters` (T-4.3.8), the model is sent `jsonSchema.input({ target: "draft-07" })` without `$schema`, the arguments
 * are checked by `validate`, and `execute` receives the output.
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly "~standard": {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (value: unknown, options?: { readonly libraryOptions?: Record<string, unknown> }) => StandardSchemaResult<Output> | Promise<StandardSchemaResult<Output>>;
    readonly jsonSchema?: {
      readonly input: (options: { readonly target: string; readonly libraryOptions?: Record<string, unknown> }) => Record<string, unknown>;
    };
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
  };
}

/** What a Standard Schema's `validate` answers: the output, or the issues (each a message and a path). */
export type StandardSchemaResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<{ readonly message: string; readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> }> };

/**
 * A tool the model may call. `parameters` is the JSON Schema of its arguments (any schema object, TypeBox included),
 * or a Standard Schema with a JSON Schema converter (zod 4, ArkType, Valibot through `toStandardJsonSchema`; T-4.3.8).
 */
export interface Tool<TParameters extends object = object> {
  name: string;
  description: string;
  parameters: TParameters;
  constrainedSampling?: false | ConstrainedSamplingConfig;
}

/** Names a tool, e.g. in `SystemMessage.toolsRemoved`. */
export interface ToolReference {
  name: string;
}

type IsAnyType<T> = 0 extends 1 & T ? true : false;
type UnknownToAny<T> = unknown extends T ? any : T;
type PrettyObject<T> = { [K in keyof T]: T[K] } & {};

/** TypeBox 1.x kinds whose value type needs no further schema fields. */
interface TypeBoxScalarValues {
  String: string;
  Number: number;
  Integer: number;
  Boolean: boolean;
  Null: null;
  Undefined: undefined;
  BigInt: bigint;
  Unknown: unknown;
  Any: any;
}

/** TypeBox 1.x: the value type of a schema marked with `"~kind"`, for the common kinds; `any` for the others. */
type TypeBoxKindValue<S> = S extends { readonly "~kind": infer K } ? TypeBoxValueByKind<S, K> : any;

// prettier-ignore
type TypeBoxValueByKind<S, K> =
  K extends keyof TypeBoxScalarValues ? TypeBoxScalarValues[K] :
  K extends "Literal" ? (S extends { readonly const: infer V } ? V : any) :
  K extends "Enum" ? (S extends { readonly enum: readonly (infer V)[] } ? V : any) :
  K extends "Array" ? (S extends { readonly items: infer I } ? SchemaValue<I>[] : any) :
  K extends "Tuple" ? (S extends { readonly items: infer I extends readonly unknown[] } ? { -readonly [N in keyof I]: SchemaValue<I[N]> } : any) :
  K extends "Union" ? (S extends { readonly anyOf: readonly (infer B)[] } ? SchemaValue<B> : any) :
  K extends "Intersect" ? (S extends { readonly allOf: infer L } ? IntersectValues<L> : any) :
  K extends "Record" ? (S extends { readonly patternProperties: infer P } ? Record<RecordKeyOf<keyof P>, SchemaValue<P[keyof P]>> : any) :
  K extends "Object" ? (S extends { readonly properties: infer P } ? ObjectValue<P> : any) :
  any;

/** TypeBox writes number and integer record keys as these patterns. */
type NumericKeyPattern = "^-?(?:0|[1-9][0-9]*)$" | "^-?(?:0|[1-9][0-9]*)(?:\\.[0-9]+)?$";
type RecordKeyOf<Pattern> = Pattern extends NumericKeyPattern ? number : string;

type IntersectValues<L> = L extends readonly [infer H, ...infer R] ? SchemaValue<H> & IntersectValues<R> : unknown;

type OptionalMarked = { readonly "~optional": true };
type ReadonlyMarked = { readonly "~readonly": true };
type ObjectValue<P> = keyof P extends never
  ? object
  : PrettyObject<
      { -readonly [K in keyof P as P[K] extends OptionalMarked | ReadonlyMarked ? never : K]: SchemaValue<P[K]> } & {
        -readonly [K in keyof P as P[K] extends OptionalMarked
          ? P[K] extends ReadonlyMarked
            ? never
            : K
          : never]?: SchemaValue<P[K]>;
      } & {
        readonly [K in keyof P as P[K] extends ReadonlyMarked
          ? P[K] extends OptionalMarked
            ? never
            : K
          : never]: SchemaValue<P[K]>;
      } & {
        readonly [K in keyof P as P[K] extends ReadonlyMarked
          ? P[K] extends OptionalMarked
            ? K
            : never
          : never]?: SchemaValue<P[K]>;
      }
    >;

/**
 * The value type a schema records, if any: a Standard Schema's output, TypeBox 1.x (`"~unsafe"`, then `"~kind"`),
 * TypeBox 0.3x (`static`), or a type brand on a symbol key (pi-schema's builders). `unknown` when nothing is recorded.
 */
type SchemaValue<S> = S extends { readonly "~standard": { readonly types?: infer T } }
  ? NonNullable<T> extends { readonly output: infer O }
    ? O
    : unknown
  : S extends { readonly "~unsafe": infer T }
    ? T
    : S extends { readonly "~kind": unknown }
      ? TypeBoxKindValue<S>
      : S extends { readonly static: infer T }
        ? T
        : S extends { readonly [brand: symbol]: infer T }
          ? T
          : unknown;

/**
 * The argument type `execute` receives for a tool whose `parameters` has type `TParameters`: `any` for `AgentTool<any>`;
 * the type the schema records when it records one (a Standard Schema's output, pi-schema builders, TypeBox 1.x `"~kind"`/`"~unsafe"` schemas,
 * TypeBox 0.3x `static`); otherwise `any` (a plain JSON Schema object carries no static type).
 */
export type AgentToolParams<TParameters> =
  IsAnyType<TParameters> extends true ? any : UnknownToAny<SchemaValue<TParameters>>;

/** Reports partial results while a tool runs. Calls after `execute` settled are ignored. */
export type AgentToolUpdateCallback<T = any> = (partialResult: AgentToolResult<T>) => void;

/** Final or partial result of a tool. */
export interface AgentToolResult<T = JsonValue | undefined> {
  /** Text or images for the model. */
  content: (TextContent | ImageContent)[];
  /** Structured details for logs and UIs. */
  details: T;
  /** Machine-readable result matching the tool's `outputSchema`; not sent to the model. */
  structuredContent?: JsonValue;
  /** Usage of the tool's own work. */
  usage?: Usage;
  /** Report a failure without throwing; `details` and `structuredContent` are kept. */
  isError?: boolean;
  /** Ask to stop after this batch: honoured only when every finalised result of the batch sets it. */
  terminate?: boolean;
}

/** A tool the loop can execute. */
export interface AgentTool<TParameters extends object = object, TDetails = any> extends Tool<TParameters> {
  /** Label for UIs. */
  label: string;
  /**
   * Rewrites the raw arguments before validation (a compatibility shim). The result is used for validation and
   * execution only; events and hooks keep the original call.
   */
  prepareArguments?: (args: unknown) => AgentToolParams<TParameters>;
  /** JSON Schema of `structuredContent` on successful results (declared, not enforced). */
  outputSchema?: object;
  /**
   * Runs the tool with validated arguments. Throw on failure, or resolve a result with `isError: true`. Called with
   * `this` = the tool. `signal` is the run's signal (or a timeout child signal, see `timeoutMs`).
   */
  execute: (
    toolCallId: string,
    params: AgentToolParams<TParameters>,
    signal?: AbortSignal,
    onUpdate?: AgentToolUpdateCallback<TDetails>,
  ) => Promise<AgentToolResult<TDetails>>;
  /** Recovery policy for durable effects (declared only; the loop never reads it). */
  replay?: "never" | "safe";
  /** `"sequential"` forces the whole batch containing a call to this tool to run one call at a time. */
  executionMode?: ToolExecutionMode;
  /**
   * New (durable agents): what {@link Agent.resume} does with a call of this tool that a crash interrupted (started,
   * no recorded end). `"retry"` (default) runs it again; `"fail"` gives it the error result
   * `Tool call "<id>" was interrupted and not retried`, which the model sees.
   */
  resume?: "retry" | "fail";
  /**
   * New (issue 30, human in the loop): the call waits for a person before it runs. Decided after `prepareArguments`
   * and validation, with the validated arguments; `true` always asks. A waiting call ends the run (`agent_end` with
   * `approvals`) until it is approved or denied: `Agent.approve` / `Agent.deny`, or `agentLoopContinue` with
   * `config.approvals`.
   */
  needsApproval?:
    | boolean
    | ((
        args: AgentToolParams<TParameters>,
        context: { toolCall: AgentToolCall; assistantMessage: AssistantMessage; context: AgentContext },
      ) => boolean | Promise<boolean>);
  /** New (issue 30): milliseconds a call of this tool waits for approval before it is denied (`approval timed out`). */
  approvalTimeoutMs?: number;
  /**
   * New (D3): milliseconds after which `execute` is given up with `Tool "<name>" timed out after <s> seconds`.
   * Overrides `AgentLoopConfig.toolTimeoutMs`; absent or 0 = no timeout.
   */
  timeoutMs?: number;
}

/** A tool-call block of an assistant message. */
export type AgentToolCall = ToolCall;

/** Final outcome of one tool call after the hooks ran. */
export interface AgentToolCallOutcome {
  toolCall: AgentToolCall;
  result: AgentToolResult<any>;
  isError: boolean;
  /** Monotonic milliseconds `execute()` took; absent when the tool did not run. */
  durationMs?: number;
}

/**
 * How the tool calls of one assistant message run: `"sequential"` one after another; `"parallel"` (the default)
 * prepared in order, then executed concurrently, with `tool_execution_end` in completion order and result messages
 * in source order.
 */
export type ToolExecutionMode = "sequential" | "parallel";

/** How many queued messages a drain takes: every one, or only the oldest. */
export type QueueMode = "all" | "one-at-a-time";
