//! The check (T-4.3.4): whether a value passes a schema, keyword by keyword, with pi-schema's semantics (draft
//! 2020-12 mode, which also reads draft 7's `items` arrays, `additionalItems`, `definitions` and `dependencies`).
//! Only answers yes or no; `explain.rs` says why.

use crate::core::text::json::Kw;
use serde_json::{Map, Value};

use super::Ctx;
use super::format;
use super::number::{as_f64, is_bigint_multiple, is_integer, is_multiple};
use super::problems::NEUTRAL;
use super::resolve::{BaseId, Target, address};
use super::special::{Special, bytes_len, special};
use crate::core::text::json::{is_primitive, js_property_key, json_equal};

/// Whether `v` has the type `name` (`integer`: a number without fraction; unknown names never match).
pub(crate) fn has_type(name: &str, v: &Value) -> bool {
    if let Some(value) = special(v) {
        return value.has_type(name);
    }
    match name {
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.as_number().is_some_and(|n| is_integer(as_f64(n))),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        _ => false,
    }
}

/// Whether `v` is the marker of `undefined`: a property set to it counts as absent unless it is required, and
/// then its schema decides whether `undefined` is a value of it (pi-schema, as TypeBox's `Type.Undefined`).
pub(crate) fn is_undefined(v: &Value) -> bool {
    special(v) == Some(Special::Undefined)
}

/// Whether `required` lists `key`.
pub(crate) fn is_required(o: &Map<String, Value>, key: &str) -> bool {
    matches!(o.kw("required"), Some(Value::Array(list)) if list.iter().any(|r| r.as_str() == Some(key)))
}

/// `type: "bytes"`: then `minLength` and `maxLength` count a Uint8Array's bytes (and no string keyword applies).
pub(crate) fn is_bytes_type(o: &Map<String, Value>) -> bool {
    o.kw("type").and_then(Value::as_str) == Some("bytes")
}

fn valid_bytes(o: &Map<String, Value>, len: usize) -> bool {
    let len = len as f64;
    num(o, "minLength").is_none_or(|m| len >= m) && num(o, "maxLength").is_none_or(|m| len <= m)
}

/// The type names pi-schema tests with a shared check (`TYPE_CHECKS`).
const TYPE_NAMES: [&str; 10] =
    ["string", "number", "integer", "boolean", "null", "array", "object", "bytes", "bigint", "undefined"];

/// A schema that is only one known type name and annotations: pi-schema compiles it to its shared type test, which
/// its `anyOf` runs before the other branches.
fn bare_type_branch(s: &Value) -> bool {
    let Value::Object(o) = s else {
        return false;
    };
    matches!(o.kw("type"), Some(Value::String(t)) if TYPE_NAMES.contains(&t.as_str()))
        && o.keys().all(|k| k == "type" || NEUTRAL.contains(&k.as_str()))
}

/// Whether `v` matches the `type` keyword's value (a name or a list of names).
pub(crate) fn type_matches(t: &Value, v: &Value) -> bool {
    match t {
        Value::String(name) => has_type(name, v),
        Value::Array(names) => names.iter().any(|n| n.as_str().is_some_and(|name| has_type(name, v))),
        _ => false,
    }
}

/// A numeric keyword's value, when it is a number.
pub(crate) fn num(o: &Map<String, Value>, key: &str) -> Option<f64> {
    o.kw(key).and_then(Value::as_number).map(as_f64)
}

/// The prefix item schemas and the schema of the items after them.
pub(crate) fn item_schemas(o: &Map<String, Value>) -> (&[Value], Option<&Value>) {
    match o.kw("items") {
        Some(Value::Array(prefix)) => (prefix.as_slice(), o.kw("additionalItems")),
        items => match o.kw("prefixItems") {
            Some(Value::Array(prefix)) => (prefix.as_slice(), items),
            _ => (&[], items),
        },
    }
}

/// `minContains` (default 1) and `maxContains` (default none).
pub(crate) fn contains_bounds(o: &Map<String, Value>) -> (f64, f64) {
    (num(o, "minContains").unwrap_or(1.0), num(o, "maxContains").unwrap_or(f64::INFINITY))
}

impl<'a> Ctx<'a> {
    /// Whether `v` passes `node`. Anything that is not a schema accepts (`schema_problem` reports it).
    pub(crate) fn valid(&mut self, node: &'a Value, base: BaseId, v: &Value) -> bool {
        let Value::Object(o) = node else {
            return node.as_bool().unwrap_or(true);
        };
        if !self.enter() {
            return false;
        }
        self.check_calls = self.check_calls.saturating_add(1);
        let b = self.resolver.base_for(node, base);
        let ok = self.valid_object(o, b, v);
        self.check_calls = self.check_calls.saturating_sub(1);
        if self.check_calls == 0 {
            self.check_memo.clear();
        }
        self.leave();
        ok
    }

    fn valid_object(&mut self, o: &'a Map<String, Value>, b: BaseId, v: &Value) -> bool {
        if let Some(t) = o.kw("type")
            && !type_matches(t, v)
        {
            return false;
        }
        let typed = match v {
            Value::String(s) => match special(v) {
                // pi-schema applies the number keywords to every `typeof` number and to BigInts: NaN fails them all.
                Some(Special::Bytes(list)) => !is_bytes_type(o) || valid_bytes(o, bytes_len(list)),
                Some(value) => value.numeric().is_none_or(|x| valid_number(o, x, value.digits())),
                None => self.valid_string(o, s),
            },
            Value::Number(n) => valid_number(o, as_f64(n), None),
            Value::Object(m) => self.valid_members(o, b, m, v),
            Value::Array(items) => self.valid_items(o, b, items),
            _ => true,
        };
        typed && self.valid_in_place(o, b, v)
    }

    /// The keywords that apply to a value of any type.
    fn valid_in_place(&mut self, o: &'a Map<String, Value>, b: BaseId, v: &Value) -> bool {
        if let Some(Value::Array(values)) = o.kw("enum")
            && !values.iter().any(|x| json_equal(x, v))
        {
            return false;
        }
        if let Some(c) = o.kw("const")
            && !json_equal(c, v)
        {
            return false;
        }
        if let Some(Value::Array(all)) = o.kw("allOf") {
            for s in all {
                if !self.valid(s, b, v) {
                    return false;
                }
            }
        }
        if let Some(Value::Array(any)) = o.kw("anyOf")
            && !self.any_passes(any, b, v)
        {
            return false;
        }
        if let Some(Value::Array(one)) = o.kw("oneOf")
            && self.count_passing(one, b, v, 2) != 1
        {
            return false;
        }
        if let Some(not) = o.kw("not")
            && self.valid(not, b, v)
        {
            return false;
        }
        if let Some(cond) = o.kw("if") {
            let (then, otherwise) = (o.kw("then"), o.kw("else"));
            if then.is_some() || otherwise.is_some() {
                let branch = if self.valid(cond, b, v) { then } else { otherwise };
                if let Some(branch) = branch
                    && !self.valid(branch, b, v)
                {
                    return false;
                }
            }
        }
        for key in ["$ref", "$dynamicRef"] {
            if let Some(Value::String(reference)) = o.kw(key)
                && !self.valid_ref(reference, b, v)
            {
                return false;
            }
        }
        true
    }

    /// `anyOf` in pi-schema's order: the branches that are only a type name (one type test for all of them) first,
    /// then the others in order. The answer is the same in any order; the order decides whether a branch that refers
    /// to itself without going deeper into the value is ever reached (`{"anyOf": [{"$ref": "#"}, {"type": "integer"}]}`
    /// passes 0 in pi-schema, and must not stop at the depth limit here).
    fn any_passes(&mut self, branches: &'a [Value], b: BaseId, v: &Value) -> bool {
        for s in branches.iter().filter(|s| bare_type_branch(s)) {
            if self.valid(s, b, v) {
                return true;
            }
        }
        for s in branches.iter().filter(|s| !bare_type_branch(s)) {
            if self.valid(s, b, v) {
                return true;
            }
        }
        false
    }

    /// How many of `branches` pass, counting no further than `stop`.
    pub(crate) fn count_passing(&mut self, branches: &'a [Value], b: BaseId, v: &Value, stop: usize) -> usize {
        let mut n = 0usize;
        for s in branches {
            if self.valid(s, b, v) {
                n = n.saturating_add(1);
                if n >= stop {
                    break;
                }
            }
        }
        n
    }

    pub(crate) fn valid_ref(&mut self, reference: &str, b: BaseId, v: &Value) -> bool {
        let Target::Found(target, tb) = self.resolver.resolve(reference, b) else {
            return false;
        };
        if is_primitive(v) {
            return self.valid(target, tb, v);
        }
        // Objects and arrays by address: they outlive the outermost `valid` call, which clears the memo.
        let key = (address(target), address(v));
        if let Some(known) = self.check_memo.get(&key) {
            return *known;
        }
        let ok = self.valid(target, tb, v);
        if !self.too_deep {
            self.check_memo.insert(key, ok);
        }
        ok
    }

    /// Whether `text` matches `pattern`; an invalid pattern matches nothing.
    pub(crate) fn matches(&self, pattern: &str, text: &str) -> bool {
        self.re.is_match(pattern, text) == Some(true)
    }

    fn valid_string(&self, o: &Map<String, Value>, s: &str) -> bool {
        let len = s.chars().count() as f64;
        if num(o, "minLength").is_some_and(|min| len < min) || num(o, "maxLength").is_some_and(|max| len > max) {
            return false;
        }
        if let Some(Value::String(p)) = o.kw("pattern")
            && !self.matches(p, s)
        {
            return false;
        }
        match o.kw("format") {
            Some(Value::String(name)) => format::check(name, s, self.re) != Some(false),
            _ => true,
        }
    }

    fn valid_members(&mut self, o: &'a Map<String, Value>, b: BaseId, m: &Map<String, Value>, v: &Value) -> bool {
        let properties = o.kw("properties").and_then(Value::as_object);
        if let Some(props) = properties {
            for (k, s) in props {
                if let Some(x) = m.kw(k)
                    && (!is_undefined(x) || is_required(o, k))
                    && !self.valid(s, b, x)
                {
                    return false;
                }
            }
        }
        if let Some(Value::Array(required)) = o.kw("required")
            && required.iter().any(|r| r.as_str().is_some_and(|k| !m.contains_key(k)))
        {
            return false;
        }
        let patterns = o.kw("patternProperties").and_then(Value::as_object);
        let additional = o.kw("additionalProperties");
        let names = o.kw("propertyNames");
        if patterns.is_some() || additional.is_some() || names.is_some() {
            for (k, x) in m {
                let mut matched = properties.is_some_and(|p| p.contains_key(k));
                for (p, s) in patterns.into_iter().flatten() {
                    if self.matches(p, k) {
                        matched = true;
                        if !self.valid(s, b, x) {
                            return false;
                        }
                    }
                }
                if let (false, Some(extra)) = (matched, additional)
                    && !self.valid(extra, b, x)
                {
                    return false;
                }
                if let Some(names) = names
                    && !self.valid(names, b, &Value::String(k.clone()))
                {
                    return false;
                }
            }
        }
        let count = m.len() as f64;
        if num(o, "minProperties").is_some_and(|min| count < min)
            || num(o, "maxProperties").is_some_and(|max| count > max)
        {
            return false;
        }
        for key in ["dependentRequired", "dependencies"] {
            for (k, d) in o.kw(key).and_then(Value::as_object).into_iter().flatten() {
                if !m.contains_key(k) {
                    continue;
                }
                match d {
                    Value::Array(list) if list.iter().any(|r| !m.contains_key(&js_property_key(r))) => {
                        return false;
                    }
                    schema if key == "dependencies" && !self.valid(schema, b, v) => {
                        return false;
                    }
                    _ => {}
                }
            }
        }
        for (k, s) in o.kw("dependentSchemas").and_then(Value::as_object).into_iter().flatten() {
            if m.contains_key(k) && !self.valid(s, b, v) {
                return false;
            }
        }
        true
    }

    fn valid_items(&mut self, o: &'a Map<String, Value>, b: BaseId, items: &[Value]) -> bool {
        let (prefix, rest) = item_schemas(o);
        for (i, x) in items.iter().enumerate() {
            if let Some(s) = prefix.get(i).or(if i >= prefix.len() { rest } else { None })
                && !self.valid(s, b, x)
            {
                return false;
            }
        }
        let count = items.len() as f64;
        if num(o, "minItems").is_some_and(|min| count < min) || num(o, "maxItems").is_some_and(|max| count > max) {
            return false;
        }
        if o.kw("uniqueItems") == Some(&Value::Bool(true)) && !unique(items) {
            return false;
        }
        if let Some(contains) = o.kw("contains") {
            let (min, max) = contains_bounds(o);
            let n = self.count_contained(contains, b, items, max);
            if n < min || n > max {
                return false;
            }
        }
        true
    }

    /// How many items pass `contains`, counting no further than just past `max`.
    pub(crate) fn count_contained(&mut self, contains: &'a Value, b: BaseId, items: &[Value], max: f64) -> f64 {
        let mut n = 0.0;
        for x in items {
            if self.valid(contains, b, x) {
                n += 1.0;
                if n > max {
                    break;
                }
            }
        }
        n
    }
}

/// Every bound holds, as pi-schema's number check compares: `min <= x <= max`, `xmin < x < xmax`, with absent
/// bounds as ±Infinity. So when any number keyword is present, NaN and the infinities fail (`-Infinity > -Infinity`
/// is false); for a finite `x` the absent bounds hold.
/// `big`: the digits when the value is a BigInt (whose `multipleOf` is exact integer arithmetic).
fn valid_number(o: &Map<String, Value>, x: f64, big: Option<&str>) -> bool {
    const KEYWORDS: [&str; 5] = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"];
    if !x.is_finite() && KEYWORDS.iter().any(|k| num(o, k).is_some()) {
        return false;
    }
    num(o, "minimum").is_none_or(|m| x >= m)
        && num(o, "maximum").is_none_or(|m| x <= m)
        && num(o, "exclusiveMinimum").is_none_or(|m| x > m)
        && num(o, "exclusiveMaximum").is_none_or(|m| x < m)
        && num(o, "multipleOf").is_none_or(|m| multiple(x, big, m))
}

/// `isMultiple` of a number, or of a BigInt by its digits.
pub(crate) fn multiple(x: f64, big: Option<&str>, m: f64) -> bool {
    match big {
        Some(digits) => is_bigint_multiple(digits, m),
        None => is_multiple(x, m),
    }
}

/// `uniqueItems`: no two items are JSON-equal.
pub(crate) fn unique(items: &[Value]) -> bool {
    for (i, x) in items.iter().enumerate() {
        if items.get(..i).is_some_and(|before| before.iter().any(|y| json_equal(x, y))) {
            return false;
        }
    }
    true
}
