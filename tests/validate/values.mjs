// Tool arguments built in code that hold what JSON cannot (issue 13), and the text that tells such values apart:
// shared by tests/js/validate-values.test.mjs (ours against pi-ai) and tests/js/parity.test.mjs (the validator's twin
// against its reference).

/** `v` as text that tells every JS value apart that the comparison cares about. */
export function describe(v) {
  const path = [];
  const walk = (x) => {
    switch (typeof x) {
      case "number":
        return Object.is(x, -0) ? "-0" : String(x);
      case "bigint":
        return `${x}n`;
      case "undefined":
        return "undefined";
      case "string":
        return JSON.stringify(x);
      case "object": {
        if (x === null) return "null";
        const back = path.indexOf(x);
        if (back >= 0) return `<cycle ${path.length - back}>`;
        const name = Object.getPrototypeOf(x)?.constructor?.name ?? "null-proto";
        path.push(x);
        let text;
        if (Array.isArray(x)) text = `[${Array.from({ length: x.length }, (_, i) => (i in x ? walk(x[i]) : "<hole>")).join(",")}]`;
        else if (x instanceof Date) text = `Date(${x.getTime()})`;
        else if (x instanceof Map) text = `Map(${walk([...x])})`;
        else if (x instanceof Set) text = `Set(${walk([...x])})`;
        else if (ArrayBuffer.isView(x)) text = `${name}(${[...x].join(",")})`;
        else if (x instanceof RegExp) text = `RegExp(${x})`;
        else if (x instanceof Error) text = `Error(${x.message})`;
        else text = `${name === "Object" ? "" : name}{${Object.keys(x).map((k) => `${JSON.stringify(k)}:${walk(x[k])}`).join(",")}}`;
        path.pop();
        return text;
      }
      default:
        return String(x);
    }
  };
  return walk(v);
}

// The reported shapes, each named: a NaN under a typed optional property used to be dropped, a Date validated as its
// ISO string, BigInts and cycles threw.
const cyc = { a: 1 };
cyc.self = cyc;
const cycArr = [1];
cycArr.push(cycArr);
export const d = new Date(0);
export const CASES = [
  ["num NaN", { type: "object", properties: { n: { type: "number" } } }, { n: NaN }],
  ["num NaN req", { type: "object", properties: { n: { type: "number" } }, required: ["n"] }, { n: NaN }],
  ["num Inf", { type: "object", properties: { n: { type: "number" } } }, { n: Infinity }],
  ["int NaN", { type: "object", properties: { n: { type: "integer" } } }, { n: NaN }],
  ["int -Inf", { type: "object", properties: { n: { type: "integer" } } }, { n: -Infinity }],
  ["str NaN", { type: "object", properties: { n: { type: "string" } } }, { n: NaN }],
  ["any NaN", { type: "object", properties: { n: {} } }, { n: NaN }],
  ["none NaN", { type: "object" }, { n: NaN }],
  ["max NaN", { type: "object", properties: { n: { maximum: 5 } } }, { n: NaN }],
  ["root NaN num", { type: "number" }, NaN],
  ["bool NaN", { type: "object", properties: { n: { type: "boolean" } } }, { n: NaN }],
  ["null NaN", { type: "object", properties: { n: { type: "null" } } }, { n: NaN }],
  ["arr NaN", { type: "object", properties: { n: { type: "array", items: { type: "number" } } } }, { n: [1, NaN] }],
  ["arr scalar NaN", { type: "object", properties: { n: { type: "array", items: { type: "number" } } } }, { n: NaN }],
  ["date obj", { type: "object", properties: { d: { type: "object" } } }, { d }],
  ["date str", { type: "object", properties: { d: { type: "string" } } }, { d }],
  ["date dt", { type: "object", properties: { d: { type: "string", format: "date-time" } } }, { d }],
  ["date num", { type: "object", properties: { d: { type: "number" } } }, { d }],
  ["date any", { type: "object", properties: { d: {} } }, { d }],
  ["big int", { type: "object", properties: { n: { type: "integer" } } }, { n: 10n }],
  ["big num", { type: "object", properties: { n: { type: "number" } } }, { n: 10n }],
  ["big str", { type: "object", properties: { n: { type: "string" } } }, { n: 10n }],
  ["big any", { type: "object", properties: { n: {} } }, { n: 10n }],
  ["big max", { type: "object", properties: { n: { type: "integer", maximum: 5 } } }, { n: 10n }],
  ["cyc obj", { type: "object", properties: { a: { type: "number" } } }, cyc],
  ["cyc bad", { type: "object", properties: { a: { type: "string" } } }, cyc],
  ["cyc arr", { type: "object", properties: { x: { type: "array" } } }, { x: cycArr }],
  ["undef prop", { type: "object", properties: { n: { type: "number" } } }, { n: undefined }],
  ["undef req", { type: "object", properties: { n: { type: "number" } }, required: ["n"] }, { n: undefined }],
  ["undef in arr", { type: "object", properties: { n: { type: "array", items: { type: "number" } } } }, { n: [1, undefined] }],
  ["hole", { type: "object", properties: { n: { type: "array", items: { type: "number" } } } }, { n: [1, , 3] }],
  ["map", { type: "object", properties: { m: { type: "object" } } }, { m: new Map([[1, 2]]) }],
  ["regexp", { type: "object", properties: { m: { type: "string" } } }, { m: /x/ }],
  ["negzero", { type: "object", properties: { n: { type: "integer", maximum: 0 } } }, { n: -0 }],
  ["u8", { type: "object", properties: { m: { type: "array" } } }, { m: new Uint8Array([1]) }],
  ["boxed str", { type: "object", properties: { m: { type: "string" } } }, { m: new String("x") }],
  ["num coerce str", { type: "object", properties: { n: { type: "number" }, d: {} } }, { n: "42", d }],
  ["num coerce w nan", { type: "object", properties: { n: { type: "number" }, z: {} } }, { n: "42", z: NaN }],
  ["num coerce w big", { type: "object", properties: { n: { type: "number" }, z: {} } }, { n: "42", z: 7n }],
  ["enum NaN", { type: "object", properties: { n: { enum: [null, 1] } } }, { n: NaN }],
  ["const date", { type: "object", properties: { n: { const: "1970-01-01T00:00:00.000Z" } } }, { n: d }],
  ["err obj", { type: "object", properties: { e: { type: "object" } } }, { e: new Error("boom") }],

  ["big type num", { type: "object", properties: { n: { type: "bigint" } } }, { n: 5 }],
  ["big type str", { type: "object", properties: { n: { type: "bigint" } } }, { n: "12" }],
  ["bytes type", { type: "object", properties: { n: { type: "bytes" } } }, { n: "ab" }],
  ["undef type", { type: "object", properties: { n: { type: "undefined" } } }, { n: null }],
  ["undef type2", { type: "object", properties: { n: { type: "undefined" } }, required:["n"] }, { n: 1 }],
  ["addl false undef", { type: "object", properties: {}, additionalProperties: false }, { x: undefined }],
  ["minProps undef", { type: "object", minProperties: 1 }, { x: undefined }],
  ["arr null num", { type: "array", items: { type: "number" } }, [null]],
  ["arr undef str", { type: "array", items: { type: "string" } }, [undefined]],
  ["arr null str", { type: "array", items: { type: "string" } }, [null]],
  ["arr undef obj", { type: "array", items: { type: "object" } }, [undefined]],
  ["arr null obj", { type: "array", items: { type: "object" } }, [null]],
  ["arr undef any", { type: "array", items: {} }, [undefined]],
  ["date req", { type: "object", properties: { d: { type: "object", required: ["x"] } } }, { d: new Date(0) }],
  ["map minProps", { type: "object", properties: { d: { type: "object", minProperties: 1 } } }, { d: new Map([[1,2]]) }],
  ["u16 arr", { type: "object", properties: { d: { type: "object", properties: {"0": {type: "string"}} } } }, { d: new Uint16Array([7]) }],
  ["nan enum str", { type: "object", properties: { n: { enum: ["NaN"] } } }, { n: NaN }],
  ["big enum", { type: "object", properties: { n: { enum: [10] } } }, { n: 10n }],
  ["big const", { type: "object", properties: { n: { const: 10 } } }, { n: 10n }],
  ["big min", { type: "object", properties: { n: { minimum: 20 } } }, { n: 10n }],
  ["big mult", { type: "object", properties: { n: { multipleOf: 3 } } }, { n: 10n }],
  ["big huge int", { type: "object", properties: { n: { type: "integer" } } }, { n: 2n**70n }],
  ["big bool", { type: "object", properties: { n: { type: "boolean" } } }, { n: 1n }],
  ["nan bool", { type: "object", properties: { n: { type: "boolean" } } }, { n: NaN }],
  ["inf str", { type: "object", properties: { n: { type: "string" } } }, { n: -Infinity }],
  ["nan null", { type: "object", properties: { n: { type: ["null","string"] } } }, { n: NaN }],
  ["nan anyof", { type: "object", properties: { n: { anyOf: [{type:"number"},{type:"boolean"}] } } }, { n: NaN }],
  ["date anyof", { type: "object", properties: { n: { anyOf: [{type:"string"},{type:"number"}] } } }, { n: new Date(0) }],
  ["u8 bytes", { type: "object", properties: { n: { type: "bytes" } } }, { n: new Uint8Array([1]) }],
  ["u8 obj", { type: "object", properties: { n: { type: "object" } } }, { n: new Uint8Array([1]) }],
  ["u8 str", { type: "object", properties: { n: { type: "string" } } }, { n: new Uint8Array([1]) }],
  ["nan max root", { type: "object", properties: { n: { type: "number", maximum: 5 } } }, { n: NaN }],
  ["big pattern", { type: "object", properties: { n: { pattern: "^1" } } }, { n: 10n }],
  ["nan minLen", { type: "object", properties: { n: { minLength: 9 } } }, { n: NaN }],
  ["undef nested obj", { type: "object", properties: { o: {type:"object", properties: { n: { type: "number" } }, required:["n"] } } }, { o: { n: undefined } }],
];

