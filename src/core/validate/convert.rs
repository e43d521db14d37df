//! Pass 2 of coercion (T-4.3.3): TypeBox's `Value.Convert` rules keyed on schema keywords (`$ref`, `const`, `enum`,
//! `anyOf`/`oneOf`, `allOf`, then `type`), with the re-entry guard that makes recursive schemas terminate and the
//! memo that keeps recursive unions from converting the same child once per branch. Copy-on-write like the others.

use crate::core::text::json::Kw;
use serde_json::{Map, Value};

use super::coerce::{additional, changed, patterns, set, set_item};
use super::number::{as_f64, js_number_to_string, js_string_to_number, number_value};
use super::resolve::{BaseId, Target, address};
use super::special::{self, Special, special};
use super::{Ctx, EnteredValue};
use crate::core::text::json::{is_primitive, js_entries, json_equal, strict_equal};

/// The key the pass-2 memo files a value under: an address for objects and arrays (checked by content on a hit,
/// since a temporary may reuse it), the value itself for primitives.
fn memo_key(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::Bool(b) => format!("b{b}"),
        Value::Number(n) => format!("n{}", js_number_to_string(as_f64(n))),
        Value::String(s) => format!("s{s}"),
        _ => format!("@{}", address(v)),
    }
}

impl EnteredValue {
    fn of(v: &Value) -> Self {
        if is_primitive(v) { EnteredValue::Primitive(v.clone()) } else { EnteredValue::Address(address(v)) }
    }

    fn is(&self, v: &Value) -> bool {
        match self {
            EnteredValue::Address(a) => !is_primitive(v) && *a == address(v),
            EnteredValue::Primitive(p) => strict_equal(p, v),
        }
    }
}

impl<'a> Ctx<'a> {
    pub(crate) fn convert(&mut self, node: &'a Value, base: BaseId, value: &Value) -> Option<Value> {
        let Value::Object(o) = node else {
            return None;
        };
        if !self.enter() {
            return None;
        }
        let b = self.resolver.base_for(node, base);
        let result = match o.kw("$ref") {
            Some(Value::String(reference)) => match self.resolver.resolve(reference, b) {
                Target::Found(target, tb) if target.is_object() => self.reenter(target, tb, value, true),
                _ => None,
            },
            _ => self.convert_node(node, o, b, value),
        };
        self.leave();
        result
    }

    /// `node` converted for `value` at a re-entry point (a `$ref`, a wrap): unchanged when that pair is already being
    /// converted, so a recursive schema that meets a value it cannot convert terminates.
    fn reenter(&mut self, node: &'a Value, base: BaseId, value: &Value, memoize: bool) -> Option<Value> {
        let at = address(node);
        if self.entered.iter().any(|(n, v)| *n == at && v.is(value)) {
            self.cuts = self.cuts.saturating_add(1);
            return None;
        }
        let key = (at, memo_key(value));
        if memoize {
            let hit = self.convert_memo.get(&key).and_then(|list| {
                list.iter().find(|(input, _)| is_primitive(value) || json_equal(input, value)).map(|(_, r)| r.clone())
            });
            if let Some(result) = hit {
                return result;
            }
        }
        let cuts = self.cuts;
        self.entered.push((at, EnteredValue::of(value)));
        let result = self.convert(node, base, value);
        self.entered.pop();
        if memoize && self.cuts == cuts {
            let input = if is_primitive(value) { Value::Null } else { value.clone() };
            self.convert_memo.get_or_insert_with(key, Vec::new).push((input, result.clone()));
        }
        result
    }

    /// One node's conversion: its first keyword among `const`, `enum`, `anyOf`, `oneOf`, `allOf`, `type`.
    fn convert_node(&mut self, node: &'a Value, o: &'a Map<String, Value>, b: BaseId, value: &Value) -> Option<Value> {
        if let Some(literal) = o.kw("const") {
            return convert_literal(literal, value);
        }
        if let Some(Value::Array(values)) = o.kw("enum") {
            return self.convert_enum(node, values, b, value);
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = o.kw(key) {
                return self.convert_union(node, o, branches, b, value);
            }
        }
        if let Some(Value::Array(members)) = o.kw("allOf") {
            let mut next: Option<Value> = None;
            for member in members {
                let converted = self.convert(member, b, next.as_ref().unwrap_or(value));
                if converted.is_some() {
                    next = converted;
                }
            }
            let members = self.convert_members(o, b, next.as_ref().unwrap_or(value));
            return members.or(next);
        }
        match o.kw("type") {
            Some(Value::String(t)) => match t.as_str() {
                "string" => try_string(value).and_then(|s| changed(Value::String(s), value)),
                "number" => try_number(value).and_then(number_value).and_then(|n| changed(n, value)),
                "integer" => try_number(value).and_then(|x| number_value(x.trunc())).and_then(|n| changed(n, value)),
                "boolean" => try_boolean(value).and_then(|x| changed(Value::Bool(x), value)),
                "null" => try_null(value).and_then(|()| changed(Value::Null, value)),
                "bigint" => try_bigint(value).and_then(|n| changed(n, value)),
                // TypeBox's TryUndefined takes exactly the values its TryNull takes.
                "undefined" => try_null(value).and_then(|()| changed(special::undefined(), value)),
                "array" => self.convert_array(o, b, value),
                "object" => self.convert_object(o, b, value),
                _ => None,
            },
            None if o.contains_key("properties") || o.contains_key("patternProperties") => {
                self.convert_object(o, b, value)
            }
            None if o.contains_key("items") || o.contains_key("prefixItems") => self.convert_array(o, b, value),
            _ => None,
        }
    }

    /// An enum is a union of its values: a member stays, else the first member the value converts to that passes.
    fn convert_enum(&mut self, node: &'a Value, values: &'a [Value], b: BaseId, value: &Value) -> Option<Value> {
        if values.iter().any(|member| strict_equal(member, value)) {
            return None;
        }
        for member in values {
            if let Some(candidate) = convert_literal(member, value)
                && self.passes(node, b, &candidate) == Some(true)
            {
                return Some(candidate);
            }
        }
        None
    }

    /// A value one branch accepts stays; else the first branch's conversion the whole node accepts. Members the node
    /// itself declares convert into each candidate before it is checked.
    fn convert_union(
        &mut self,
        node: &'a Value,
        o: &'a Map<String, Value>,
        branches: &'a [Value],
        b: BaseId,
        value: &Value,
    ) -> Option<Value> {
        for branch in branches {
            if self.passes(branch, b, value) == Some(true) {
                return self.convert_members(o, b, value);
            }
        }
        for branch in branches {
            let converted = self.convert(branch, b, value);
            let members = self.convert_members(o, b, converted.as_ref().unwrap_or(value));
            let candidate = members.or(converted);
            if self.passes(node, b, candidate.as_ref().unwrap_or(value)) == Some(true) {
                return candidate;
            }
        }
        self.convert_members(o, b, value)
    }

    /// The object members of a union or intersection node, when it declares any.
    fn convert_members(&mut self, o: &'a Map<String, Value>, b: BaseId, value: &Value) -> Option<Value> {
        let declares = ["properties", "patternProperties", "additionalProperties"].iter().any(|k| o.contains_key(*k));
        if declares { self.convert_object(o, b, value) } else { None }
    }

    fn convert_array(&mut self, o: &'a Map<String, Value>, b: BaseId, value: &Value) -> Option<Value> {
        let tuple = match (o.kw("items"), o.kw("prefixItems")) {
            (Some(Value::Array(prefix)), _) => Some((prefix, None)),
            (items, Some(Value::Array(prefix))) => Some((prefix, items)),
            _ => None,
        };
        if let Some((prefix, rest)) = tuple {
            // A tuple converts its items and never wraps a single value.
            let Value::Array(items) = value else {
                return None;
            };
            let mut out: Option<Vec<Value>> = None;
            for (i, item) in items.iter().enumerate() {
                let schema = if i < prefix.len() { prefix.get(i) } else { rest };
                if let Some(next) = schema.and_then(|s| self.convert(s, b, item)) {
                    set_item(&mut out, items, i, next);
                }
            }
            return out.map(Value::Array);
        }
        if let Value::Array(items) = value {
            let schema = o.kw("items")?;
            let mut out: Option<Vec<Value>> = None;
            for (i, item) in items.iter().enumerate() {
                if let Some(next) = self.convert(schema, b, item) {
                    set_item(&mut out, items, i, next);
                }
            }
            return out.map(Value::Array);
        }
        // A single value becomes a one-item array, converted by the item schema: a re-entry point.
        let item = match o.kw("items") {
            Some(schema @ Value::Object(_)) => self.reenter(schema, b, value, false).unwrap_or_else(|| value.clone()),
            _ => value.clone(),
        };
        Some(Value::Array(vec![item]))
    }

    fn convert_object(&mut self, o: &'a Map<String, Value>, b: BaseId, value: &Value) -> Option<Value> {
        let bytes;
        let m = match value {
            Value::Object(m) => m,
            // pi-schema's coercion takes a Uint8Array for an object: one member changed makes it a plain copy.
            _ => match special(value) {
                Some(Special::Bytes(list)) => {
                    bytes = special::bytes_members(list);
                    &bytes
                }
                _ => return None,
            },
        };
        let properties = o.kw("properties").and_then(Value::as_object);
        let patterns = patterns(o);
        let additional = additional(o);
        let mut out: Option<Map<String, Value>> = None;
        for (key, x) in js_entries(m) {
            // An undefined property counts as absent.
            if special(x) == Some(Special::Undefined) {
                continue;
            }
            let mut next: Option<Value> = None;
            let mut matched = false;
            if let Some(schema) = properties.and_then(|p| p.kw(key)) {
                matched = true;
                next = self.convert(schema, b, x);
            }
            for (p, schema) in &patterns {
                if self.matches(p, key) {
                    matched = true;
                    let converted = self.convert(schema, b, next.as_ref().unwrap_or(x));
                    if converted.is_some() {
                        next = converted;
                    }
                }
            }
            if let (false, Some(extra)) = (matched, additional) {
                next = self.convert(extra, b, x);
            }
            if let Some(next) = next {
                set(&mut out, m, key, next);
            }
        }
        out.map(Value::Object)
    }
}

/// A literal (`const`, an enum member) from a value of another type that converts to exactly it.
fn convert_literal(literal: &Value, value: &Value) -> Option<Value> {
    if strict_equal(literal, value) {
        return None;
    }
    let converted = match literal {
        Value::String(_) => try_string(value).map(Value::String),
        Value::Number(_) => try_number(value).and_then(number_value),
        Value::Bool(_) => try_boolean(value).map(Value::Bool),
        _ => None,
    };
    match converted {
        // The converted value (`+"-0"` is -0, which `===` 0).
        Some(c) if strict_equal(&c, literal) => Some(c),
        _ => None,
    }
}

/// TypeBox's TryString: numbers, BigInts and booleans as text, `null` as "null", `undefined` as "".
fn try_string(value: &Value) -> Option<String> {
    if let Some(value) = special(value) {
        return match value {
            Special::BigInt(digits) => Some(digits.to_string()),
            Special::Undefined => Some(String::new()),
            _ => None,
        };
    }
    match value {
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(js_number_to_string(as_f64(n))),
        Value::Null => Some("null".to_string()),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// TypeBox's TryNumber: numeric text (`+text`), "true"/"false" in any case, `12n`, booleans, `null` and
/// `undefined` as 0, safe-integer BigInts.
fn try_number(value: &Value) -> Option<f64> {
    if let Some(value) = special(value) {
        return match value {
            Special::Undefined => Some(0.0),
            other => other.safe_number(),
        };
    }
    match value {
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        Value::Number(n) => Some(as_f64(n)).filter(|x| x.is_finite()),
        Value::Null => Some(0.0),
        Value::String(s) => {
            let x = js_string_to_number(s);
            if x.is_finite() {
                return Some(x);
            }
            if s.eq_ignore_ascii_case("false") {
                Some(0.0)
            } else if s.eq_ignore_ascii_case("true") {
                Some(1.0)
            } else {
                big_int_text(s)
            }
        }
        _ => None,
    }
}

/// A BigInt text (`bigIntOfString`) within the safe integers (texts that are plain numbers already passed `+text`).
fn big_int_text(s: &str) -> Option<f64> {
    special::safe_integer(&big_int_of_text(s)?)
}

/// TypeBox's TryBoolean: "true"/"false" in any case, "1"/"0", 1/0 (and 1n/0n), `null` and `undefined` as false.
fn try_boolean(value: &Value) -> Option<bool> {
    if let Some(value) = special(value) {
        return match value {
            Special::Undefined => Some(false),
            other if other.is_bigint(0) => Some(false),
            other if other.is_bigint(1) => Some(true),
            _ => None,
        };
    }
    match value {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => {
            let x = as_f64(n);
            if x == 0.0 {
                Some(false)
            } else if x == 1.0 {
                Some(true)
            } else {
                None
            }
        }
        Value::Null => Some(false),
        Value::String(s) if s == "0" || s.eq_ignore_ascii_case("false") => Some(false),
        Value::String(s) if s == "1" || s.eq_ignore_ascii_case("true") => Some(true),
        _ => None,
    }
}

/// TypeBox's TryNull: "null"/"undefined" in any case, "", "0", 0, 0n, false, `undefined`.
fn try_null(value: &Value) -> Option<()> {
    if let Some(value) = special(value) {
        return (value == Special::Undefined || value.is_bigint(0)).then_some(());
    }
    let yes = match value {
        Value::Bool(b) => !*b,
        Value::Number(n) => as_f64(n) == 0.0,
        Value::Null => true,
        Value::String(s) => {
            s.is_empty() || s == "0" || s.eq_ignore_ascii_case("null") || s.eq_ignore_ascii_case("undefined")
        }
        _ => false,
    };
    yes.then_some(())
}

/// TypeBox's TryBigInt (pi-schema's `bigint` type): booleans as 1n/0n, numbers truncated, `null` and `undefined` as
/// 0n, integer texts (`12n`, `12`, `12.5` truncated), "true"/"false" in any case. A marker of the BigInt.
fn try_bigint(value: &Value) -> Option<Value> {
    if let Some(value) = special(value) {
        return match value {
            Special::BigInt(digits) => Some(special::bigint(digits)),
            Special::Undefined => Some(special::bigint("0")),
            _ => None,
        };
    }
    let digits = match value {
        Value::Bool(b) => u8::from(*b).to_string(),
        Value::Number(n) => integer_digits(as_f64(n))?,
        Value::Null => "0".to_string(),
        Value::String(s) => match big_int_of_text(s) {
            Some(digits) => digits,
            None if s.eq_ignore_ascii_case("false") => "0".to_string(),
            None if s.eq_ignore_ascii_case("true") => "1".to_string(),
            None => return None,
        },
        _ => return None,
    };
    Some(special::bigint(&digits))
}

/// `BigInt(Math.trunc(x))` as decimal digits (`None` for NaN and the infinities). Exact for every f64, without
/// float formatting (`{:.0}` would add core's exact-mode float printing): an integral f64 is `mantissa × 2^exp`.
fn integer_digits(x: f64) -> Option<String> {
    if !x.is_finite() {
        return None;
    }
    let t = x.trunc();
    let magnitude = t.abs();
    let digits = if magnitude < 18_446_744_073_709_551_616.0 {
        (magnitude as u64).to_string()
    } else {
        let bits = magnitude.to_bits();
        let exponent = ((bits >> 52) & 0x7ff) as u32;
        let mantissa = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
        // Limbs of 10^9, least significant first: the mantissa, then doubled `exponent - 1075` times.
        let mut limbs: Vec<u64> = vec![
            mantissa % 1_000_000_000,
            mantissa / 1_000_000_000 % 1_000_000_000,
            mantissa / 1_000_000_000_000_000_000,
        ];
        for _ in 0..exponent.saturating_sub(1075) {
            let mut carry = 0;
            for limb in &mut limbs {
                let doubled = *limb * 2 + carry;
                *limb = doubled % 1_000_000_000;
                carry = doubled / 1_000_000_000;
            }
            if carry > 0 {
                limbs.push(carry);
            }
        }
        while limbs.len() > 1 && limbs.last() == Some(&0) {
            limbs.pop();
        }
        let mut text = limbs.last().map(u64::to_string).unwrap_or_default();
        for limb in limbs.iter().rev().skip(1) {
            let part = limb.to_string();
            text.push_str(&"0".repeat(9usize.saturating_sub(part.len())));
            text.push_str(&part);
        }
        text
    };
    Some(if t < 0.0 && digits != "0" { format!("-{digits}") } else { digits })
}

#[cfg(test)]
#[test]
fn integer_digits_are_exact_for_every_f64() {
    assert_eq!(integer_digits(-0.5).as_deref(), Some("0"));
    assert_eq!(integer_digits(-7.9).as_deref(), Some("-7"));
    assert_eq!(integer_digits(1e21).as_deref(), Some("1000000000000000000000"));
    assert_eq!(integer_digits(2f64.powi(70)).as_deref(), Some("1180591620717411303424"));
    assert_eq!(integer_digits(-18_446_744_073_709_551_616.0).as_deref(), Some("-18446744073709551616"));
    assert_eq!(integer_digits(f64::MAX).map(|d| d.len()), Some(309));
    assert_eq!(integer_digits(f64::MAX).as_deref().map(|d| &d[..12]), Some("179769313486"));
    assert_eq!(integer_digits(f64::NAN), None);
}

/// pi-schema's `bigIntOfString`: `-?(0|[1-9]\d*)` optionally followed by `n` or by a fraction (truncated).
fn big_int_of_text(s: &str) -> Option<String> {
    let body = s.strip_suffix('n').unwrap_or_else(|| {
        s.split_once('.').map_or(s, |(whole, fraction)| {
            if !fraction.is_empty() && fraction.bytes().all(|c| c.is_ascii_digit()) { whole } else { "" }
        })
    });
    let digits = body.strip_prefix('-').unwrap_or(body);
    let valid = !digits.is_empty()
        && digits.bytes().all(|c| c.is_ascii_digit())
        && (digits.len() == 1 || !digits.starts_with('0'));
    if !valid {
        return None;
    }
    Some(if digits == "0" { "0".to_string() } else { body.to_string() })
}
