// AgentToolParams (API-1.6.3): `any` for AgentTool<any> and for schemas without a static type; the recorded type for
// pi-schema builders, TypeBox 1.x (`"~kind"`, `"~unsafe"`) and TypeBox 0.3x (`static`) schemas. TypeBox itself is not
// a dependency, so its schema types are modelled here by their shapes.
import type { AgentTool, AgentToolParams } from "agent-loop-wasm";
import { arr, int, lit, obj, opt, str, union } from "@earendil-works/pi-schema";
import type { Equal, Expect, IsAny } from "./assert.js";

// pi-schema builders.
const editSchema = obj({
  path: str(),
  edits: arr(obj({ oldText: str(), newText: str() })),
  mode: opt(union([lit("replace"), lit("append")])),
  line: opt(int()),
});
type EditArgs = AgentToolParams<typeof editSchema>;
export type PiSchema = Expect<
  Equal<EditArgs, { path: string; edits: { oldText: string; newText: string }[]; mode?: "replace" | "append"; line?: number }>
>;

export const editTool: AgentTool<typeof editSchema> = {
  name: "edit",
  label: "Edit",
  description: "Edits a file",
  parameters: editSchema,
  prepareArguments: (raw) => {
    const r = raw as { path: string; oldText?: string; newText?: string };
    return { path: r.path, edits: [{ oldText: r.oldText ?? "", newText: r.newText ?? "" }] };
  },
  async execute(_id, params) {
    const count: number = params.edits.length;
    // @ts-expect-error the recorded type is used, not any
    const wrong: string = params.line;
    return { content: [{ type: "text", text: `${params.path}: ${count} ${wrong}` }], details: undefined };
  },
};

// TypeBox 1.x shapes (package "typebox").
interface TString { "~kind": "String"; type: "string" }
interface TInteger { "~kind": "Integer"; type: "integer" }
interface TBoolean { "~kind": "Boolean"; type: "boolean" }
interface TLiteral<V> { "~kind": "Literal"; const: V }
interface TArray<T> { "~kind": "Array"; type: "array"; items: T }
interface TUnion<T extends unknown[]> { "~kind": "Union"; anyOf: T }
interface TObject<P> { "~kind": "Object"; type: "object"; properties: P; required: string[] }
interface TRecord<V> { "~kind": "Record"; type: "object"; patternProperties: { "^.*$": V } }
interface TTuple<T extends unknown[]> { "~kind": "Tuple"; type: "array"; items: T }
interface TEnum<V extends unknown[]> { "~kind": "Enum"; enum: V }
interface TIntersect<T extends unknown[]> { "~kind": "Intersect"; allOf: T }
interface TUnsafe<T> { "~unsafe": T }
type TOptional<T> = T & { "~optional": true };
type TReadonly<T> = T & { "~readonly": true };

type TypeBox1Schema = TObject<{
  name: TString;
  count: TOptional<TInteger>;
  id: TReadonly<TString>;
  flags: TArray<TBoolean>;
  kind: TUnion<[TLiteral<"a">, TLiteral<"b">]>;
  meta: TRecord<TInteger>;
  pair: TTuple<[TString, TInteger]>;
  color: TEnum<["red", "green"]>;
  both: TIntersect<[TObject<{ x: TInteger }>, TObject<{ y: TString }>]>;
  custom: TUnsafe<Date>;
}>;
type TB1 = AgentToolParams<TypeBox1Schema>;
export type TypeBox1 = [
  Expect<Equal<TB1["name"], string>>,
  Expect<Equal<TB1["count"], number | undefined>>,
  Expect<{} extends Pick<TB1, "count"> ? true : false>,
  Expect<Equal<TB1["flags"], boolean[]>>,
  Expect<Equal<TB1["kind"], "a" | "b">>,
  Expect<Equal<TB1["meta"], Record<string, number>>>,
  Expect<Equal<TB1["pair"], [string, number]>>,
  Expect<Equal<TB1["color"], "red" | "green">>,
  Expect<Equal<TB1["both"]["x"] | TB1["both"]["y"], number | string>>,
  Expect<Equal<TB1["custom"], Date>>,
  Expect<Equal<AgentToolParams<TUnsafe<{ q: string }>>, { q: string }>>,
];
export const readonlyId = (p: TB1): string => p.id;

// TypeBox 0.3x shapes (package "@sinclair/typebox"): the static type sits in `static`.
interface TSchema03 { static: unknown; params: unknown[] }
interface TObject03 extends TSchema03 { static: { query: string; limit?: number }; type: "object" }
export type TypeBox03 = [
  Expect<Equal<AgentToolParams<TObject03>, { query: string; limit?: number }>>,
  Expect<IsAny<AgentToolParams<TSchema03>>>,
];

// No static type: any (never unknown).
const plain = { type: "object", properties: { q: { type: "string" } }, required: ["q"] } as const;
export type Plain = [
  Expect<IsAny<AgentToolParams<typeof plain>>>,
  Expect<IsAny<AgentToolParams<object>>>,
  Expect<IsAny<AgentToolParams<any>>>,
  Expect<IsAny<AgentToolParams<{ type: "object" }>>>,
  Expect<IsAny<Parameters<AgentTool["execute"]>[1]>>,
  Expect<IsAny<Parameters<AgentTool<any>["execute"]>[1]>>,
];
