//! Errors of a failed value (T-4.3.5, T-4.3.6): a walk over the schema that reports each failing keyword at the value
//! it failed on, in pi-schema's order and words. It runs only after the check failed, and asks `check.rs` whether a
//! subschema passes before explaining it.

use crate::core::text::json::Kw;
use serde_json::{Map, Value};

use super::check::{contains_bounds, is_bytes_type, is_undefined, item_schemas, multiple, num, type_matches, unique};
use super::format;
use super::number::{as_f64, is_integer, js_number_to_string};
use super::resolve::{BaseId, Target, address};
use super::special::{Special, bytes_len, special};
use super::{Ctx, RawError};
use crate::core::text::json::{
    is_primitive, js_entries, js_join_element, js_json_stringify, js_keys, js_order, js_property_key, json_equal,
    list_values, pointer, pointer_index, strict_equal,
};

fn err(out: &mut Vec<RawError>, path: &str, message: String) {
    out.push(RawError { path: path.to_string(), message });
}

/// A path's length as JavaScript counts it (UTF-16 units), which ranks union branches.
fn utf16_len(s: &str) -> usize {
    crate::core::text::wtf::utf16_len(s)
}

fn n(x: f64) -> String {
    js_number_to_string(x)
}

impl<'a> Ctx<'a> {
    /// The errors of `value`, which failed `schema`: at least one.
    pub(crate) fn errors(&mut self, schema: &'a Value, value: &Value) -> Vec<RawError> {
        let mut out = Vec::new();
        let base = self.resolver.root_base();
        self.walk(schema, base, value, "", &mut out);
        self.explain_memo.clear();
        if out.is_empty() {
            err(&mut out, "", "invalid".to_string());
        }
        out
    }

    fn walk(&mut self, node: &'a Value, base: BaseId, v: &Value, path: &str, out: &mut Vec<RawError>) {
        let Value::Object(o) = node else {
            if node == &Value::Bool(false) {
                err(out, path, "no value is allowed here".to_string());
            }
            return;
        };
        if !self.enter() {
            return;
        }
        let b = self.resolver.base_for(node, base);
        if !self.valid(node, b, v) {
            self.walk_object(o, b, v, path, out);
        }
        self.leave();
    }

    fn walk_object(&mut self, o: &'a Map<String, Value>, b: BaseId, v: &Value, path: &str, out: &mut Vec<RawError>) {
        let start = out.len();
        if let Some(t) = o.kw("type")
            && !type_matches(t, v)
        {
            let names = match t {
                Value::Array(list) => list.iter().map(js_join_element).collect::<Vec<_>>().join(" or "),
                single => js_join_element(single),
            };
            err(out, path, format!("expected {names}, got {}", type_name(v)));
            return;
        }
        if let Some(Value::Array(values)) = o.kw("enum")
            && !values.iter().any(|x| json_equal(x, v))
        {
            err(out, path, format!("expected one of {}", list_values(values)));
        }
        if let Some(c) = o.kw("const")
            && !json_equal(c, v)
        {
            err(out, path, format!("expected {}", js_json_stringify(c)));
        }
        match v {
            Value::String(s) => match special(v) {
                Some(Special::Bytes(list)) if is_bytes_type(o) => {
                    let len = bytes_len(list) as f64;
                    if let Some(min) = num(o, "minLength").filter(|min| len < *min) {
                        err(out, path, format!("expected at least {} bytes", n(min)));
                    }
                    if let Some(max) = num(o, "maxLength").filter(|max| len > *max) {
                        err(out, path, format!("expected at most {} bytes", n(max)));
                    }
                }
                Some(value) => {
                    if let Some(x) = value.numeric() {
                        walk_number(o, x, value.digits(), path, out);
                    }
                }
                None => self.walk_string(o, s, path, out),
            },
            Value::Number(x) => walk_number(o, as_f64(x), None, path, out),
            Value::Object(m) => self.walk_members(o, b, m, v, path, out),
            Value::Array(items) => self.walk_items(o, b, items, path, out),
            _ => {}
        }
        if let Some(Value::Array(all)) = o.kw("allOf") {
            for s in all {
                self.walk(s, b, v, path, out);
            }
        }
        if let Some(Value::Array(any)) = o.kw("anyOf") {
            self.walk_union(any, b, v, path, out, false);
        }
        if let Some(Value::Array(one)) = o.kw("oneOf") {
            self.walk_union(one, b, v, path, out, true);
        }
        if let Some(not) = o.kw("not")
            && self.valid(not, b, v)
        {
            err(out, path, "must not match the schema in not".to_string());
        }
        if let Some(cond) = o.kw("if") {
            let branch = if self.valid(cond, b, v) { o.kw("then") } else { o.kw("else") };
            if let Some(branch) = branch {
                self.walk(branch, b, v, path, out);
            }
        }
        if let Some(Value::String(reference)) = o.kw("$ref") {
            self.walk_ref(reference, b, v, path, out);
        }
        if out.len() == start && o.kw("$dynamicRef").is_some_and(Value::is_string) {
            err(out, path, "does not match the dynamically referenced schema".to_string());
        }
    }

    fn walk_ref(&mut self, reference: &str, b: BaseId, v: &Value, path: &str, out: &mut Vec<RawError>) {
        let (target, tb) = match self.resolver.resolve(reference, b) {
            Target::Found(target, tb) => (target, tb),
            Target::Unresolved => {
                err(out, path, format!("unresolved reference {reference}"));
                return;
            }
        };
        if is_primitive(v) || !target.is_object() {
            self.walk(target, tb, v, path, out);
            return;
        }
        // A recursive union explains each branch to pick the one to blame: reuse a target's errors for a value.
        let key = (address(target), address(v));
        if let Some((known_path, errors)) = self.explain_memo.get(&key)
            && known_path == path
        {
            out.extend(errors.iter().cloned());
            return;
        }
        let mut errors = Vec::new();
        self.walk(target, tb, v, path, &mut errors);
        self.explain_memo.insert(key, (path.to_string(), errors.clone()));
        out.extend(errors);
    }

    fn walk_string(&self, o: &Map<String, Value>, s: &str, path: &str, out: &mut Vec<RawError>) {
        let len = s.chars().count() as f64;
        if let Some(min) = num(o, "minLength").filter(|min| len < *min) {
            err(out, path, format!("expected at least {} characters", n(min)));
        }
        if let Some(max) = num(o, "maxLength").filter(|max| len > *max) {
            err(out, path, format!("expected at most {} characters", n(max)));
        }
        if let Some(Value::String(p)) = o.kw("pattern")
            && !self.matches(p, s)
        {
            err(out, path, format!("expected to match {p}"));
        }
        if let Some(Value::String(name)) = o.kw("format")
            && format::check(name, s, self.re) == Some(false)
        {
            err(out, path, format!("expected format {name}"));
        }
    }

    fn walk_members(
        &mut self,
        o: &'a Map<String, Value>,
        b: BaseId,
        m: &Map<String, Value>,
        v: &Value,
        path: &str,
        out: &mut Vec<RawError>,
    ) {
        let properties = o.kw("properties").and_then(Value::as_object);
        for r in o.kw("required").and_then(Value::as_array).into_iter().flatten() {
            let Some(k) = r.as_str() else { continue };
            // Present and `undefined`: missing unless its declared schema takes `undefined`.
            let missing = match m.kw(k) {
                None => true,
                Some(x) if is_undefined(x) => !properties.and_then(|p| p.kw(k)).is_some_and(|s| self.valid(s, b, x)),
                Some(_) => false,
            };
            if missing {
                err(out, &pointer(path, k), "missing".to_string());
            }
        }
        for (k, s) in properties.map(js_entries).unwrap_or_default() {
            if let Some(x) = m.kw(k).filter(|x| !is_undefined(x)) {
                self.walk(s, b, x, &pointer(path, k), out);
            }
        }
        let patterns = o.kw("patternProperties").and_then(Value::as_object).map(js_entries).unwrap_or_default();
        let additional = o.kw("additionalProperties");
        for (k, x) in js_entries(m) {
            let mut matched = properties.is_some_and(|p| p.contains_key(k));
            for (p, s) in &patterns {
                if self.matches(p, k) {
                    matched = true;
                    self.walk(s, b, x, &pointer(path, k), out);
                }
            }
            match additional {
                Some(Value::Bool(false)) if !matched => err(out, &pointer(path, k), "unknown field".to_string()),
                Some(extra) if !matched => self.walk(extra, b, x, &pointer(path, k), out),
                _ => {}
            }
            if let Some(names) = o.kw("propertyNames")
                && !self.valid(names, b, &Value::String(k.clone()))
            {
                err(out, &pointer(path, k), "invalid property name".to_string());
            }
        }
        let count = m.len() as f64;
        if let Some(min) = num(o, "minProperties").filter(|min| count < *min) {
            err(out, path, format!("expected at least {} properties", n(min)));
        }
        if let Some(max) = num(o, "maxProperties").filter(|max| count > *max) {
            err(out, path, format!("expected at most {} properties", n(max)));
        }
        for (k, d) in dependencies(o) {
            if !m.contains_key(k) {
                continue;
            }
            match d {
                Value::Array(list) => {
                    for r in list {
                        let r = js_property_key(r);
                        if !m.contains_key(&r) {
                            err(out, &pointer(path, &r), format!("required when {k} is present"));
                        }
                    }
                }
                schema => self.walk(schema, b, v, path, out),
            }
        }
        for (k, s) in o.kw("dependentSchemas").and_then(Value::as_object).map(js_entries).unwrap_or_default() {
            if m.contains_key(k) {
                self.walk(s, b, v, path, out);
            }
        }
    }

    fn walk_items(
        &mut self,
        o: &'a Map<String, Value>,
        b: BaseId,
        items: &[Value],
        path: &str,
        out: &mut Vec<RawError>,
    ) {
        let (prefix, rest) = item_schemas(o);
        for (i, x) in items.iter().enumerate() {
            if let Some(s) = prefix.get(i).or(if i >= prefix.len() { rest } else { None }) {
                self.walk(s, b, x, &pointer_index(path, i), out);
            }
        }
        let count = items.len() as f64;
        if let Some(min) = num(o, "minItems").filter(|min| count < *min) {
            err(out, path, format!("expected at least {} items", n(min)));
        }
        if let Some(max) = num(o, "maxItems").filter(|max| count > *max) {
            err(out, path, format!("expected at most {} items", n(max)));
        }
        if o.kw("uniqueItems") == Some(&Value::Bool(true)) && !unique(items) {
            err(out, path, "expected unique items".to_string());
        }
        if let Some(contains) = o.kw("contains") {
            let (min, max) = contains_bounds(o);
            let found = self.count_contained(contains, b, items, max);
            if found < min || found > max {
                err(out, path, contains_message(min, max));
            }
        }
    }

    fn walk_union(
        &mut self,
        branches: &'a [Value],
        b: BaseId,
        v: &Value,
        path: &str,
        out: &mut Vec<RawError>,
        exactly_one: bool,
    ) {
        let matches = self.count_passing(branches, b, v, 2);
        if matches == 1 || (!exactly_one && matches > 0) {
            return;
        }
        if matches > 1 {
            err(out, path, "matches more than one alternative".to_string());
            return;
        }
        // A tagged union reports the branch its tag selects.
        if let (Some((key, values)), Value::Object(m)) = (self.tag_of(branches, b), v) {
            let tag = m.get(&key);
            match values.iter().position(|t| tag.is_some_and(|x| strict_equal(t, x))).and_then(|i| branches.get(i)) {
                Some(branch) => self.walk(branch, b, v, path, out),
                None => err(out, &pointer(path, &key), format!("expected one of {}", list_values(&values))),
            }
            return;
        }
        // Otherwise the branch declaring most of the object's keys, then the one whose first error is deepest.
        let mut best: Option<(Vec<RawError>, usize)> = None;
        for s in branches {
            let mut errors = Vec::new();
            self.walk(s, b, v, path, &mut errors);
            let Some(first_len) = errors.first().map(|e| utf16_len(&e.path)) else {
                continue;
            };
            let declared = match v {
                Value::Object(m) => self.declared_keys(s, b, m),
                _ => 0,
            };
            let better = match &best {
                None => true,
                Some((best_errors, best_declared)) => {
                    declared > *best_declared
                        || (declared == *best_declared
                            && first_len > best_errors.first().map_or(0, |e| utf16_len(&e.path)))
                }
            };
            if better {
                best = Some((errors, declared));
            }
        }
        match best {
            Some((errors, _)) => out.extend(errors),
            None => err(out, path, "matches no alternative".to_string()),
        }
    }

    /// A branch, through its `$ref` when it has one.
    fn through_ref(&mut self, s: &'a Value, b: BaseId) -> Option<&'a Value> {
        match s.kw("$ref") {
            Some(Value::String(reference)) => {
                let sb = self.resolver.base_for(s, b);
                match self.resolver.resolve(reference, sb) {
                    Target::Found(target, _) => Some(target),
                    Target::Unresolved => None,
                }
            }
            _ => Some(s),
        }
    }

    /// How many keys of `m` the branch `s` declares in `properties`.
    fn declared_keys(&mut self, s: &'a Value, b: BaseId, m: &Map<String, Value>) -> usize {
        let properties = self.through_ref(s, b).and_then(|n| n.kw("properties")).and_then(Value::as_object);
        properties.map_or(0, |p| m.keys().filter(|k| p.contains_key(*k)).count())
    }

    /// The tag of a union: the first property of the first branch on which every branch has a distinct primitive const.
    fn tag_of(&mut self, branches: &'a [Value], b: BaseId) -> Option<(String, Vec<Value>)> {
        let resolved: Vec<Option<&'a Value>> = branches.iter().map(|s| self.through_ref(s, b)).collect();
        let first = resolved.first().copied().flatten()?.get("properties")?.as_object()?;
        for key in js_keys(first) {
            let mut values: Vec<Value> = Vec::with_capacity(resolved.len());
            for s in &resolved {
                let tag = s.and_then(|s| s.kw("properties")).and_then(|p| p.kw(key)).and_then(|t| t.kw("const"));
                match tag {
                    Some(t) if is_primitive(t) && !values.iter().any(|x| strict_equal(x, t)) => values.push(t.clone()),
                    _ => break,
                }
            }
            if values.len() == resolved.len() {
                return Some((key.clone(), values));
            }
        }
        None
    }
}

fn walk_number(o: &Map<String, Value>, x: f64, big: Option<&str>, path: &str, out: &mut Vec<RawError>) {
    if let Some(m) = num(o, "minimum").filter(|m| x < *m) {
        err(out, path, format!("expected >= {}", n(m)));
    }
    if let Some(m) = num(o, "maximum").filter(|m| x > *m) {
        err(out, path, format!("expected <= {}", n(m)));
    }
    if let Some(m) = num(o, "exclusiveMinimum").filter(|m| x <= *m) {
        err(out, path, format!("expected > {}", n(m)));
    }
    if let Some(m) = num(o, "exclusiveMaximum").filter(|m| x >= *m) {
        err(out, path, format!("expected < {}", n(m)));
    }
    if let Some(m) = num(o, "multipleOf").filter(|m| !multiple(x, big, *m)) {
        err(out, path, format!("expected a multiple of {}", n(m)));
    }
}

/// `dependentRequired` and `dependencies` as one map, `dependencies` winning a shared key (an object spread).
fn dependencies(o: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut merged: Vec<(&String, &Value)> = Vec::new();
    for key in ["dependentRequired", "dependencies"] {
        for (k, d) in o.kw(key).and_then(Value::as_object).map(js_entries).unwrap_or_default() {
            match merged.iter_mut().find(|(seen, _)| *seen == k) {
                Some(slot) => slot.1 = d,
                None => merged.push((k, d)),
            }
        }
    }
    js_order(merged)
}

/// `contains` with `min` = `minContains` ?? 1 and `max` = `maxContains` ?? none.
fn contains_message(min: f64, max: f64) -> String {
    let noun = |x: f64| if x == 1.0 { "item" } else { "items" };
    if max == f64::INFINITY {
        format!("expected at least {} matching {}", n(min), noun(min))
    } else if min == 0.0 {
        format!("expected at most {} matching {}", n(max), noun(max))
    } else {
        format!("expected between {} and {} matching items", n(min), n(max))
    }
}

/// The type named in `expected …, got <type>`.
pub(crate) fn type_name(v: &Value) -> &'static str {
    if let Some(value) = super::special::special(v) {
        return value.type_name();
    }
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) => {
            if is_integer(as_f64(n)) {
                "integer"
            } else {
                "number"
            }
        }
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}
