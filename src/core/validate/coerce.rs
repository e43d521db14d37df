//! Coercion (T-4.3.3): three copy-on-write passes over the arguments before they are checked, as pi-schema's
//! coercer (ported from TypeBox's `Value.Convert` and Ajv's `coerceTypes`). This file drives them and holds passes
//! 1 (optional nulls) and 3 (primitive coercion by type); pass 2 is `convert.rs`. Every function returns `None` when
//! the value stays as it is, so unchanged parts are never copied; the input is never modified. A value no rule
//! applies to stays for the check to report.

use crate::core::text::json::Kw;
use serde_json::{Map, Value};

use super::Ctx;
use super::check::has_type;
use super::number::{as_f64, is_integer, js_number_to_string, js_string_to_number, js_trim, number_value};
use super::resolve::BaseId;
use super::special::{Special, bytes_members, special};
use crate::core::text::json::{js_entries, js_keys, strict_equal};

/// `Some(new)` unless `new === old`.
pub(crate) fn changed(new: Value, old: &Value) -> Option<Value> {
    if strict_equal(&new, old) { None } else { Some(new) }
}

/// The schema of an array's item at `index`: a tuple's (`prefixItems` or an `items` array), else `items`.
fn item_schema_at(o: &Map<String, Value>, index: usize) -> Option<&Value> {
    if let Some(Value::Array(items)) = o.kw("items") {
        return items.get(index);
    }
    if let Some(Value::Array(prefix)) = o.kw("prefixItems")
        && index < prefix.len()
    {
        return prefix.get(index);
    }
    o.kw("items")
}

/// `patternProperties` as (pattern, schema) pairs in `Object.keys` order.
pub(crate) fn patterns(o: &Map<String, Value>) -> Vec<(&String, &Value)> {
    o.kw("patternProperties").and_then(Value::as_object).map(js_entries).unwrap_or_default()
}

/// `additionalProperties` when it is a schema object (a boolean converts nothing).
pub(crate) fn additional(o: &Map<String, Value>) -> Option<&Value> {
    o.kw("additionalProperties").filter(|a| a.is_object())
}

/// Sets `key` of the copy of `m` being built (made on the first change).
pub(crate) fn set(out: &mut Option<Map<String, Value>>, m: &Map<String, Value>, key: &str, next: Value) {
    out.get_or_insert_with(|| m.clone()).insert(key.to_string(), next);
}

/// Sets item `i` of the copy of `items` being built.
pub(crate) fn set_item(out: &mut Option<Vec<Value>>, items: &[Value], i: usize, next: Value) {
    if let Some(slot) = out.get_or_insert_with(|| items.to_vec()).get_mut(i) {
        *slot = next;
    }
}

impl<'a> Ctx<'a> {
    /// The three passes over `args`; `None` when nothing changed.
    pub(crate) fn coerce(&mut self, args: &Value) -> Option<Value> {
        let (root, base) = (self.root, self.resolver.root_base());
        let first = self.drop_nulls(args, root, base);
        let v1 = first.as_ref().unwrap_or(args);
        let second = self.convert(root, base, v1);
        self.convert_memo.clear();
        self.entered.clear();
        self.cuts = 0;
        let v2 = second.as_ref().unwrap_or(v1);
        let third = self.coerce_types(v2, root, base);
        third.or(second).or(first)
    }

    // -- Pass 1: optional nulls ------------------------------------------------------------------------------------

    fn drop_nulls(&mut self, value: &Value, schema: &'a Value, base: BaseId) -> Option<Value> {
        let Value::Object(o) = schema else {
            return None;
        };
        if !self.enter() {
            return None;
        }
        let b = self.resolver.base_for(schema, base);
        let result = match value {
            Value::Array(items) => {
                let mut out: Option<Vec<Value>> = None;
                for (i, item) in items.iter().enumerate() {
                    if let Some(next) = item_schema_at(o, i).and_then(|s| self.drop_nulls(item, s, b)) {
                        set_item(&mut out, items, i, next);
                    }
                }
                out.map(Value::Array)
            }
            Value::Object(m) => self.drop_nulls_in_object(o, b, m),
            _ => None,
        };
        self.leave();
        result
    }

    fn drop_nulls_in_object(&mut self, o: &'a Map<String, Value>, b: BaseId, m: &Map<String, Value>) -> Option<Value> {
        let properties = o.kw("properties").and_then(Value::as_object);
        let patterns = patterns(o);
        let additional = additional(o);
        if patterns.is_empty() && additional.is_none() && properties.is_none() {
            return None;
        }
        let required: Vec<&str> =
            o.kw("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        let mut out: Option<Map<String, Value>> = None;
        for (key, property) in properties.map(js_entries).unwrap_or_default() {
            let Some(x) = m.kw(key) else {
                continue;
            };
            let is_ref = property.kw("$ref").is_some_and(Value::is_string);
            if x.is_null()
                && !required.contains(&key.as_str())
                && !is_ref
                && self.passes(property, b, &Value::Null) == Some(false)
            {
                out.get_or_insert_with(|| m.clone()).shift_remove(key);
                continue;
            }
            if let Some(next) = self.drop_nulls(x, property, b) {
                set(&mut out, m, key, next);
            }
        }
        // Values of pattern and additional properties are walked for their own optional nulls; their keys stay.
        if !patterns.is_empty() || additional.is_some() {
            for key in js_keys(m) {
                let mut matched = properties.is_some_and(|p| p.contains_key(key));
                for (p, item) in &patterns {
                    if !self.matches(p, key) {
                        continue;
                    }
                    matched = true;
                    let current = match &out {
                        Some(copy) => copy.kw(key),
                        None => m.kw(key),
                    };
                    let Some(current) = current else {
                        continue;
                    };
                    if let Some(next) = self.drop_nulls(current, item, b) {
                        set(&mut out, m, key, next);
                    }
                }
                if let (false, Some(extra), Some(x)) = (matched, additional, m.kw(key))
                    && let Some(next) = self.drop_nulls(x, extra, b)
                {
                    set(&mut out, m, key, next);
                }
            }
        }
        out.map(Value::Object)
    }

    // -- Pass 3: primitive coercion by type (Ajv's coerceTypes) ----------------------------------------------------

    fn coerce_types(&mut self, value: &Value, schema: &'a Value, base: BaseId) -> Option<Value> {
        let Value::Object(o) = schema else {
            return None;
        };
        if !self.enter() {
            return None;
        }
        let b = self.resolver.base_for(schema, base);
        let mut next: Option<Value> = None;
        if let Some(Value::Array(members)) = o.kw("allOf") {
            for member in members {
                let coerced = self.coerce_types(next.as_ref().unwrap_or(value), member, b);
                if coerced.is_some() {
                    next = coerced;
                }
            }
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = o.kw(key) {
                let coerced = self.coerce_union(next.as_ref().unwrap_or(value), branches, b);
                if coerced.is_some() {
                    next = coerced;
                }
            }
        }
        let types: Vec<&str> = match o.kw("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let current = next.as_ref().unwrap_or(value);
        let matches_member = types.len() > 1 && types.iter().any(|t| has_type(t, current));
        if !matches_member {
            if special(current) == Some(Special::NaN) {
                // pi-schema stops at the first type whose coercion gives a value `!==` the input: for NaN, the first.
                if types.first() == Some(&"string") {
                    next = Some(Value::String("NaN".to_string()));
                }
            } else if let Some(coerced) = types.iter().find_map(|t| coerce_primitive(current, t)) {
                next = Some(coerced);
            }
        }
        let current = next.as_ref().unwrap_or(value);
        let coerced = match current {
            Value::Object(m) if types.contains(&"object") => self.coerce_properties(m, o, b),
            // A Uint8Array is an object to pi-schema's coercion (see `convert_object`).
            Value::String(_) if types.contains(&"object") => match special(current) {
                Some(Special::Bytes(list)) => self.coerce_properties(&bytes_members(list), o, b),
                _ => None,
            },
            Value::Array(items) if types.contains(&"array") => self.coerce_items(items, o, b),
            _ => None,
        };
        if coerced.is_some() {
            next = coerced;
        }
        self.leave();
        next
    }

    fn coerce_union(&mut self, value: &Value, branches: &'a [Value], b: BaseId) -> Option<Value> {
        for branch in branches {
            if self.passes(branch, b, value) == Some(true) {
                return None;
            }
        }
        for branch in branches {
            let coerced = self.coerce_types(value, branch, b);
            if self.passes(branch, b, coerced.as_ref().unwrap_or(value)) == Some(true) {
                return coerced;
            }
        }
        None
    }

    fn coerce_properties(&mut self, m: &Map<String, Value>, o: &'a Map<String, Value>, b: BaseId) -> Option<Value> {
        let properties = o.kw("properties").and_then(Value::as_object);
        let patterns = patterns(o);
        let additional = additional(o);
        let mut out: Option<Map<String, Value>> = None;
        for (key, property) in properties.map(js_entries).unwrap_or_default() {
            if let Some(next) = m.kw(key).and_then(|x| self.coerce_types(x, property, b)) {
                set(&mut out, m, key, next);
            }
        }
        for key in js_keys(m) {
            let mut matched = properties.is_some_and(|p| p.contains_key(key));
            for (p, item) in &patterns {
                if !self.matches(p, key) {
                    continue;
                }
                matched = true;
                let current = match &out {
                    Some(copy) => copy.kw(key),
                    None => m.kw(key),
                };
                if let Some(next) = current.and_then(|x| self.coerce_types(x, item, b)) {
                    set(&mut out, m, key, next);
                }
            }
            if let (false, Some(extra), Some(x)) = (matched, additional, m.kw(key))
                && let Some(next) = self.coerce_types(x, extra, b)
            {
                set(&mut out, m, key, next);
            }
        }
        out.map(Value::Object)
    }

    fn coerce_items(&mut self, items: &[Value], o: &'a Map<String, Value>, b: BaseId) -> Option<Value> {
        let mut out: Option<Vec<Value>> = None;
        for (i, item) in items.iter().enumerate() {
            let schema = item_schema_at(o, i).filter(|s| s.is_object());
            if let Some(next) = schema.and_then(|s| self.coerce_types(item, s, b)) {
                set_item(&mut out, items, i, next);
            }
        }
        out.map(Value::Array)
    }
}

/// Ajv's primitive coercion of `value` to `type`; `None` when it stays.
fn coerce_primitive(value: &Value, t: &str) -> Option<Value> {
    if let Some(value) = special(value) {
        // Of the values JSON cannot hold, only a `typeof` number becomes text (NaN is the caller's).
        return match (t, value) {
            ("string", Special::Infinity) => Some(Value::String("Infinity".to_string())),
            ("string", Special::NegInfinity) => Some(Value::String("-Infinity".to_string())),
            _ => None,
        };
    }
    let coerced = match (t, value) {
        ("number" | "integer", Value::Null) => Some(Value::from(0)),
        ("number" | "integer", Value::String(s)) if !js_trim(s).is_empty() => {
            let x = js_string_to_number(s);
            let ok = if t == "number" { x.is_finite() } else { is_integer(x) };
            if ok { number_value(x) } else { None }
        }
        ("number" | "integer", Value::Bool(b)) => Some(Value::from(u8::from(*b))),
        ("boolean", Value::Null) => Some(Value::Bool(false)),
        ("boolean", Value::String(s)) if s == "true" => Some(Value::Bool(true)),
        ("boolean", Value::String(s)) if s == "false" => Some(Value::Bool(false)),
        ("boolean", Value::Number(n)) if as_f64(n) == 1.0 => Some(Value::Bool(true)),
        ("boolean", Value::Number(n)) if as_f64(n) == 0.0 => Some(Value::Bool(false)),
        ("string", Value::Null) => Some(Value::String(String::new())),
        ("string", Value::Number(n)) => Some(Value::String(js_number_to_string(as_f64(n)))),
        ("string", Value::Bool(b)) => Some(Value::String(b.to_string())),
        ("null", Value::String(s)) if s.is_empty() => Some(Value::Null),
        ("null", Value::Number(n)) if as_f64(n) == 0.0 => Some(Value::Null),
        ("null", Value::Bool(false)) => Some(Value::Null),
        _ => None,
    };
    coerced.and_then(|c| changed(c, value))
}
