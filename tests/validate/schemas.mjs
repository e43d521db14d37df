// Random JSON Schemas and arguments for differential tests against pi-ai's validateToolArguments
// (tests/validate/gen.mjs, tests/js/validate-values.test.mjs). `generator(seed)` returns seeded makers.
export function generator(seed, { specials = false } = {}) {
  // `specials`: values may hold what JSON cannot, and schemas may name pi-schema's own types for them. Schemas
  // themselves stay JSON (their enum and const members are made while `inSchema` is set).
  let inSchema = false;
  const rnd = () => { seed |= 0; seed = (seed + 0x6D2B79F5) | 0; let t = Math.imul(seed ^ (seed >>> 15), 1 | seed); t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
  const pick = (a) => a[Math.floor(rnd() * a.length)];
  const chance = (p) => rnd() < p;
  // Lone surrogates (text cut mid-emoji) in keys, strings, enums and patterns: issue 13.
  const KEYS = ["a", "b", "c", "n", "tags", "1", "x-y", "a/b", "kind", "10", "~t", "é", "k\uD800", "\uDFFF"];
  const STRINGS = ["", " ", "42", "42.7", " 12 ", "0x10", "1e3", "12n", "-5", "true", "TRUE", "false", "False", "1", "0", "null", "NULL", "undefined", "abc", "Infinity", "2020-02-29", "2021-02-29", "12:00:00Z", "2020-01-01T00:00:00+01:00", "P1Y2M", "P1W", "PT", "a@b.co", "x@", "example.com", "-bad.com", "1.2.3.4", "01.2.3.4", "::1", "1::2::3", "http://a.com/x?y#z", "a:b", "//x", "/p", "550e8400-e29b-41d4-a716-446655440000", "/a~1b", "/a~2", "[a-", "é", "text", "one", "2020-12-31T23:59:60Z", "23:59:60+00:00", "P1Y1D", "PT1H1S", "P3W", "\"q\"@x.org", "a@[1.2.3.4]", "xn--nxasmq6b.com", "a..b", "1:2:3:4:5:6:7:8", "::ffff:1.2.3.4", "mailto:x@y", "urn:isbn:1", "http://[::1]:80/", "http://a b", "#frag", "?q", "g;x=1/../y", "3", "-0", "0.5", " ", "1e400", "-Infinity", "0b11", "0o7", "9007199254740993n", "+5", ".5", "5.", "x\uD800", "\uDBFF", "\uD83D\uDE00", "\uDC00\uD800", "\uD83D"];
  const NUMBERS = [0, 1, -1, 2, 3, 3.5, 42, 42.7, 0.1, 0.3, 1e21, -0.5, 100, 7];
  const TYPES = ["string", "number", "integer", "boolean", "null", "array", "object"];
  // pi-schema's own types for values that never pass through JSON; after the JSON ones, so picks of those stay.
  if (specials) TYPES.push("bigint", "bytes", "undefined");
  const FORMATS = ["date", "date-time", "time", "duration", "email", "hostname", "ipv4", "ipv6", "uri", "uri-reference", "uuid", "json-pointer", "unknown-format"];
  const PATTERNS = ["^a", "b$", "^[0-9]+$", "x", "^$", "^x\uD800", "\uDBFF$", "^.$"];
  // Values JSON cannot hold (issue 13), for arguments built in code: made fresh for every use.
  const SPECIALS = [() => NaN, () => Infinity, () => -Infinity, () => -0, () => 5n, () => 0n, () => 1n, () => -3n,
    () => 2n ** 70n, () => undefined, () => new Date(0), () => new Map([[1, 2]]), () => new Uint8Array([1, 2]),
    () => new Uint16Array([7]), () => new String("x"), () => /re/g, () => new Error("e"), () => new Set([1])];
  function prim() {
    if (specials && !inSchema && chance(0.3)) return pick(SPECIALS)();
    const r = rnd();
    if (r < 0.35) return pick(STRINGS);
    if (r < 0.65) return pick(NUMBERS);
    if (r < 0.8) return pick([true, false]);
    return null;
  }
  function value(d) {
    const r = rnd();
    if (d <= 0 || r < 0.55) return prim();
    if (r < 0.75) {
      const n = Math.floor(rnd() * 4);
      const items = Array.from({ length: n }, () => value(d - 1));
      if (specials && n > 1 && chance(0.15)) delete items[0]; // a hole
      return items;
    }
    const o = {}; const n = Math.floor(rnd() * 4);
    for (let i = 0; i < n; i++) o[pick(KEYS)] = value(d - 1);
    if (specials && chance(0.05)) o[pick(KEYS)] = o; // a cycle
    return o;
  }
  function schema(d, defs) {
    const outer = inSchema;
    inSchema = true;
    try {
      return schemaNode(d, defs);
    } finally {
      inSchema = outer;
    }
  }
  function schemaNode(d, defs) {
    if (chance(0.05)) return pick([true, false]);
    const s = {};
    const r = rnd();
    if (d <= 0 || r < 0.4) {
      if (chance(0.8)) s.type = chance(0.8) ? pick(specials && chance(0.2) ? TYPES.slice(7) : TYPES.slice(0, 5)) : [pick(TYPES), pick(TYPES)];
    } else if (r < 0.65) {
      s.type = "object";
      s.properties = {};
      const n = 1 + Math.floor(rnd() * 3);
      for (let i = 0; i < n; i++) s.properties[pick(KEYS)] = schema(d - 1, defs);
      if (chance(0.6)) s.required = Object.keys(s.properties).filter(() => chance(0.6));
      if (chance(0.3)) s.additionalProperties = chance(0.7) ? false : schema(d - 1, defs);
      if (chance(0.1)) s.patternProperties = { [pick(PATTERNS)]: schema(d - 1, defs) };
      if (chance(0.1)) s.minProperties = Math.floor(rnd() * 3);
      if (chance(0.1)) s.maxProperties = Math.floor(rnd() * 3);
      if (chance(0.1)) s.dependentRequired = { [pick(KEYS)]: [pick(KEYS)] };
      if (chance(0.05)) s.propertyNames = { maxLength: 1 };
    } else if (r < 0.78) {
      s.type = "array";
      if (chance(0.2)) s.prefixItems = [schema(d - 1, defs), schema(d - 1, defs)];
      if (chance(0.8)) s.items = schema(d - 1, defs);
      if (chance(0.15)) s.minItems = Math.floor(rnd() * 3);
      if (chance(0.15)) s.maxItems = Math.floor(rnd() * 3);
      if (chance(0.1)) s.uniqueItems = true;
      if (chance(0.1)) { s.contains = schema(d - 1, defs); if (chance(0.5)) s.minContains = Math.floor(rnd() * 3); if (chance(0.3)) s.maxContains = Math.floor(rnd() * 3); }
    } else if (r < 0.9) {
      const k = pick(["anyOf", "oneOf", "allOf"]);
      s[k] = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => schema(d - 1, defs));
      if (chance(0.2)) s.type = pick(TYPES);
    } else if (r < 0.94) {
      // tagged union
      const tags = ["a", "b", "c"].slice(0, 2 + Math.floor(rnd() * 2));
      s.anyOf = tags.map((t) => ({ type: "object", properties: { kind: { const: t }, n: schema(d - 1, defs) }, required: ["kind"] }));
    } else if (r < 0.97 && defs.length > 0) {
      s.$ref = pick(defs);
    } else {
      s.not = schema(d - 1, defs);
    }
    if (chance(0.1)) s.enum = Array.from({ length: 1 + Math.floor(rnd() * 3) }, prim);
    else if (chance(0.05)) s.const = prim();
    if (chance(0.1)) { s.minimum = pick(NUMBERS); }
    if (chance(0.05)) { s.exclusiveMaximum = pick(NUMBERS); }
    if (chance(0.05)) { s.multipleOf = pick([0.1, 2, 1.5, 0.01]); }
    if (chance(0.08)) { s.minLength = Math.floor(rnd() * 4); }
    if (chance(0.05)) { s.maxLength = Math.floor(rnd() * 4); }
    if (chance(0.05)) { s.pattern = pick(PATTERNS); }
    if (chance(0.1)) { s.format = pick(FORMATS); }
    if (chance(0.03)) { s.dependencies = { [pick(KEYS)]: chance(0.5) ? [pick(KEYS)] : schema(d - 1, defs) }; }
    if (chance(0.03)) { s.dependentSchemas = { [pick(KEYS)]: schema(d - 1, defs) }; }
    if (chance(0.03)) { s.items = [schema(d - 1, defs), schema(d - 1, defs)]; if (chance(0.5)) s.additionalItems = schema(d - 1, defs); }
    if (chance(0.02)) { s.enum = Array.from({ length: 25 }, (_, i) => i); }
    if (chance(0.02)) { s.const = pick([{ a: 1 }, [1, "x"], "x"]); }
    if (chance(0.03)) { s.$anchor = "anc"; defs.push("#anc"); }
    if (chance(0.02)) { s.propertyNames = { pattern: pick(PATTERNS) }; }
    if (chance(0.02)) { s.maxContains = 1; s.contains = { type: "integer" }; }
    if (chance(0.02)) { s.format = pick(FORMATS); s.type = "string"; }
    if (chance(0.04)) { s.if = schema(d - 1, defs); s.then = schema(d - 1, defs); if (chance(0.5)) s.else = schema(d - 1, defs); }
    return s;
  }
  /** A random (schema, arguments) pair: a schema, often an object of three properties, sometimes with `$defs` (none
   *  with `specials`), and arguments that mostly fill it. gen.mjs, validate-values and the parity test draw theirs here. */
  function pair() {
    const defs = [];
    const $defs = {};
    if (!specials && chance(0.3)) {
      $defs.d1 = schema(2, ["#"]);
      defs.push("#/$defs/d1");
      if (chance(0.3)) defs.push("#/$defs/missing");
    }
    let root = schema(3, defs);
    if (chance(0.7)) {
      root = { type: "object", properties: { a: schema(2, defs), b: schema(2, defs), n: schema(1, defs) }, required: chance(0.5) ? ["a"] : [],
        ...(!specials && chance(0.3) ? { additionalProperties: false } : {}) };
    }
    if (defs.length > 0 && typeof root === "object") root.$defs = $defs;
    let args = chance(0.8) ? {} : value(2);
    if (typeof args === "object" && args !== null && Object.getPrototypeOf(args) === Object.prototype) {
      for (const k of ["a", "b", "n", pick(KEYS)]) if (chance(0.6)) args[k] = value(2);
    }
    return [root, args];
  }
  return { rnd, pick, chance, prim, value, schema, pair, KEYS, TYPES };
}
