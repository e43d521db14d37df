//! The reference of `FastPaths::check_tool_call` (T-4.3) on host values: the argumentsError check, the schema (its
//! kind and problems, cached per `parameters` object), then the pure validator of `core::validate` on a JSON view of
//! a copy of the arguments (`ViewPaths`). The transcript is never modified. Its JS twin is `checkToolCall` in
//! `src/js/snippets/validate.js`; the callers, which await a Standard Schema's answer, are `core::validate_call`.

use super::view::ViewPaths;
use crate::core::fxhash::FxMap;
use crate::core::host::{Host, Kind};
use crate::core::text::json::js_json_stringify;
use crate::core::text::wtf;
use crate::core::tool_schema::{self, ToolSchema};
use crate::core::validate::{
    INVALID_REGEX, MARK, MAX_SCHEMA_DEPTH, PatternMatcher, SchemaError, TOO_DEEP, WEAK_MAP_KEY,
    coerce_and_validate_changes, coerce_and_validate_view, depth_exceeds, format_validation_error, is_too_deep,
    schema_problem,
};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

struct HostPatterns<'a, H: Host>(&'a H);

impl<H: Host> PatternMatcher for HostPatterns<'_, H> {
    fn is_match(&self, pattern: &str, text: &str) -> Option<bool> {
        self.0.regex_test(pattern, text)
    }
    fn pattern_error(&self, pattern: &str) -> Option<String> {
        self.0.regex_error(pattern)
    }
    fn is_regex(&self, text: &str) -> bool {
        self.0.regex_unicode(text)
    }
    fn url_can_parse(&self, text: &str) -> Option<bool> {
        self.0.url_can_parse(text)
    }
}

/// JSON text as the validator sees it (no text, from `undefined`, → `null`): lone surrogates as stand-ins, any depth.
fn parse_json<H: ViewPaths>(h: &H, text: Option<&str>) -> Result<serde_json::Value, H::V> {
    match text {
        Some(text) => wtf::parse(text).map_err(|e| h.error(&e, false)),
        None => Ok(serde_json::Value::Null),
    }
}

/// A JSON copy of a host value as the validator sees it (`undefined` → `null`).
fn to_json<H: ViewPaths>(h: &H, v: &H::V) -> Result<serde_json::Value, H::V> {
    parse_json(h, h.json_stringify(v, false)?.as_deref())
}

// Issue 34: a long string of the arguments comes in the view as a marker (`MARK`, `l`, its index in the host's list),
// so that a 20 MB file a tool writes is not copied into wasm memory to be validated. Where the schema asks of it only
// that it be a string (a `properties`/`items` path of plain object and array schemas down to `{"type": "string"}`
// with annotations), the validator reads the marker as the string it stands for: a string, nothing of its text read,
// nothing coerced. Anywhere else its text is fetched from the host (`ViewPaths::view_string`) before validating.

/// One step of a path into the arguments.
enum Step {
    Key(String),
    Index(usize),
}

/// The host's index of a long-string marker.
fn long_index(s: &str) -> Option<usize> {
    let digits = s.strip_prefix(MARK)?.strip_prefix('l')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The paths of the long-string markers in `root`, with their indices. Iterative: one path, cut back to each node's
/// depth as the walk returns, copied only for a marker.
fn long_markers(root: &serde_json::Value) -> Vec<(Vec<Step>, usize)> {
    use serde_json::Value;
    let mut out = Vec::new();
    let mut path: Vec<Step> = Vec::new();
    let mut stack: Vec<(&Value, usize, Option<Step>)> = vec![(root, 0, None)];
    while let Some((v, depth, step)) = stack.pop() {
        path.truncate(depth);
        path.extend(step);
        match v {
            Value::String(s) => {
                if let Some(index) = long_index(s) {
                    out.push((path.iter().map(clone_step).collect(), index));
                }
            }
            Value::Array(items) => {
                let depth = path.len();
                stack.extend(items.iter().enumerate().map(|(i, item)| (item, depth, Some(Step::Index(i)))));
            }
            Value::Object(map) => {
                let depth = path.len();
                stack.extend(map.iter().map(|(k, item)| (item, depth, Some(Step::Key(k.clone())))));
            }
            _ => {}
        }
    }
    out
}

fn clone_step(step: &Step) -> Step {
    match step {
        Step::Key(k) => Step::Key(k.clone()),
        Step::Index(i) => Step::Index(*i),
    }
}

/// Whether the schema at `path` asks of the value there only that it be a string, and nothing on the way reads it.
fn plain_string_at(schema: &serde_json::Value, path: &[Step]) -> bool {
    const ANNOTATIONS: [&str; 9] =
        ["description", "title", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly", "$schema"];
    let only = |node: &serde_json::Map<String, serde_json::Value>, also: &[&str]| {
        node.keys().all(|k| ANNOTATIONS.contains(&k.as_str()) || also.contains(&k.as_str()))
    };
    let mut node = schema;
    for step in path {
        let Some(map) = node.as_object() else { return false };
        node = match step {
            Step::Key(key) => {
                let plain_additional = map.get("additionalProperties").is_none_or(serde_json::Value::is_boolean);
                if !plain_additional
                    || !only(map, &["type", "properties", "required", "additionalProperties"])
                    || map.get("type").is_some_and(|t| t.as_str() != Some("object"))
                {
                    return false;
                }
                match map.get("properties").and_then(|p| p.get(key.as_str())) {
                    Some(child) => child,
                    None => return false,
                }
            }
            Step::Index(_) => {
                if !only(map, &["type", "items", "minItems", "maxItems"])
                    || map.get("type").is_some_and(|t| t.as_str() != Some("array"))
                {
                    return false;
                }
                match map.get("items") {
                    Some(child) if child.is_object() => child,
                    _ => return false,
                }
            }
        };
    }
    node.as_object()
        .is_some_and(|map| only(map, &["type"]) && map.get("type").and_then(|t| t.as_str()) == Some("string"))
}

/// The long-string markers of `value` that the schema may read or coerce, replaced by their text from the host.
fn fetch_read_long_strings<H: ViewPaths>(h: &H, schema: &serde_json::Value, value: &mut serde_json::Value) {
    // One fetch per string (a cycle's repeats are the same marker).
    let mut fetched: FxMap<usize, serde_json::Value> = FxMap::default();
    for (path, index) in long_markers(value) {
        if plain_string_at(schema, &path) {
            continue;
        }
        let text = match fetched.get(&index) {
            Some(text) => text.clone(),
            None => {
                let Some(text) = h.view_string(index).and_then(|json| wtf::parse(&json).ok()) else { continue };
                fetched.insert(index, text.clone());
                text
            }
        };
        let mut node = Some(&mut *value);
        for step in &path {
            node = node.and_then(|n| match step {
                Step::Key(k) => n.get_mut(k.as_str()),
                Step::Index(i) => n.get_mut(*i),
            });
        }
        if let Some(node) = node {
            // Parsed from its JSON text, as the view's own strings are: lone surrogates as stand-ins.
            *node = text;
        }
    }
}

/// Coercion's -0 (`Math.trunc(-0.5)`, `+"-0"`) as the `z` marker, which `Host::patch_copy` turns back into -0: JSON
/// text has no -0 (`JSON.stringify(-0)` is `0`). Iterative.
fn mark_negative_zeros(v: &mut serde_json::Value) {
    use serde_json::Value;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Number(n) if n.as_f64().is_some_and(|x| x == 0.0 && x.is_sign_negative()) => {
                *v = Value::String(format!("{MARK}z"));
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => stack.extend(map.values_mut()),
            _ => {}
        }
    }
}

/// What coercion changed from the view `old` to `new`, as `Host::patch_copy` takes it: `[path, value]` to set,
/// `[path]` to delete, `[path, 0, 0]` to wrap the value into a one-item array (patches inside it follow).
/// Iterative (a path is rebuilt from parent links only for a change), so any depth is fine.
fn patches(old: &serde_json::Value, new: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    // (parent link, key) of every container member visited; `usize::MAX` is the root.
    let mut links: Vec<(usize, Value)> = Vec::new();
    let path = |links: &[(usize, Value)], mut at: usize| {
        let mut keys = Vec::new();
        while let Some((parent, key)) = links.get(at) {
            keys.push(key.clone());
            at = *parent;
        }
        keys.reverse();
        Value::Array(keys)
    };
    let mut out = Vec::new();
    let mut stack = vec![(old, new, usize::MAX)];
    while let Some((old, new, at)) = stack.pop() {
        match (old, new) {
            (Value::Object(before), Value::Object(after)) => {
                for (key, next) in after {
                    links.push((at, Value::String(key.clone())));
                    let link = links.len().saturating_sub(1);
                    match before.get(key) {
                        Some(prev) => stack.push((prev, next, link)),
                        None => out.push(Value::Array(vec![path(&links, link), next.clone()])),
                    }
                }
                for key in before.keys().filter(|key| !after.contains_key(*key)) {
                    links.push((at, Value::String(key.clone())));
                    out.push(Value::Array(vec![path(&links, links.len().saturating_sub(1))]));
                }
            }
            (Value::Array(before), Value::Array(after)) if before.len() == after.len() => {
                for (i, (prev, next)) in before.iter().zip(after).enumerate() {
                    links.push((at, Value::from(i)));
                    stack.push((prev, next, links.len().saturating_sub(1)));
                }
            }
            // A value coercion wrapped into a one-item array: the array is new, the item is the value (converted).
            (old, Value::Array(after)) if !old.is_array() && after.len() == 1 => {
                out.push(Value::Array(vec![path(&links, at), Value::from(0), Value::from(0)]));
                if let Some(item) = after.first() {
                    links.push((at, Value::from(0)));
                    stack.push((old, item, links.len().saturating_sub(1)));
                }
            }
            // Leaves, or containers of another kind or length (whose `==` stops at once).
            _ if old == new => {}
            _ => out.push(Value::Array(vec![path(&links, at), new.clone()])),
        }
    }
    Value::Array(out)
}

/// What a `parameters` object is, checked once per object: JSON Schema as JSON and what is wrong with it, if anything
/// (`Json`), or a Standard Schema (T-4.3.8; its `~standard` is read at each call), or unusable (the reason).
enum PreparedSchema {
    Json(serde_json::Value, Option<String>),
    Standard,
    Unreadable(String),
}

/// The cache holds schemas of at most this many bytes in all (estimated heap size of the parsed
/// JSON, see `heap_size`): tools rebuilt with fresh `parameters` objects every request must not
/// grow memory without bound (issue 13: 1.7 MB schemas used to exhaust wasm memory).
const SCHEMA_CACHE_BYTES: usize = 16 * 1024 * 1024;

/// And at most this many schemas.
const SCHEMA_CACHE_LIMIT: usize = 512;

/// Schemas by object identity, like the reference's validator cache (a `WeakMap`); the oldest
/// entries go first when a bound is reached. (The JS twin's cache is a `WeakMap` itself, which needs no bound: an
/// entry goes with its `parameters` object.)
#[derive(Default)]
struct SchemaCache {
    entries: FxMap<u64, (Rc<PreparedSchema>, usize)>,
    /// Keys in insertion order.
    order: VecDeque<u64>,
    bytes: usize,
}

impl SchemaCache {
    /// Forgets the schemas of objects JS no longer holds.
    fn forget(&mut self, collected: &[f64]) {
        if collected.is_empty() {
            return;
        }
        for id in collected {
            if let Some((_, size)) = self.entries.remove(&(*id as u64)) {
                self.bytes = self.bytes.saturating_sub(size);
            }
        }
        let entries = &self.entries;
        self.order.retain(|k| entries.contains_key(k));
    }

    fn get(&self, key: u64) -> Option<Rc<PreparedSchema>> {
        self.entries.get(&key).map(|(schema, _)| schema.clone())
    }

    /// Remembers `schema` (of `size` bytes) unless it alone exceeds the byte bound.
    fn insert(&mut self, key: u64, schema: Rc<PreparedSchema>, size: usize) {
        if size > SCHEMA_CACHE_BYTES {
            return;
        }
        if let Some((_, old)) = self.entries.remove(&key) {
            self.bytes = self.bytes.saturating_sub(old);
            self.order.retain(|k| *k != key);
        }
        while self.entries.len() >= SCHEMA_CACHE_LIMIT || self.bytes.saturating_add(size) > SCHEMA_CACHE_BYTES {
            let Some(oldest) = self.order.pop_front() else { break };
            if let Some((_, old)) = self.entries.remove(&oldest) {
                self.bytes = self.bytes.saturating_sub(old);
            }
        }
        // Fallible growth: a full memory means no caching, not an abort.
        if self.entries.try_reserve(1).is_err() || self.order.try_reserve(1).is_err() {
            return;
        }
        self.entries.insert(key, (schema, size));
        self.order.push_back(key);
        self.bytes = self.bytes.saturating_add(size);
    }
}

thread_local! {
    static SCHEMAS: RefCell<SchemaCache> = RefCell::new(SchemaCache::default());
}

/// Estimated heap bytes of a parsed JSON value (nodes, strings, map entries); iterative, so any
/// depth is fine.
fn heap_size(v: &serde_json::Value) -> usize {
    use serde_json::Value;
    const NODE: usize = std::mem::size_of::<Value>();
    // A map entry: key string header, hash slot and bucket overhead (indexmap), besides the value.
    const ENTRY: usize = std::mem::size_of::<String>() + 2 * std::mem::size_of::<usize>();
    let mut total = 0usize;
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        total = total.saturating_add(NODE);
        match v {
            Value::String(s) => total = total.saturating_add(s.len()),
            Value::Array(items) => stack.extend(items.iter()),
            Value::Object(map) => {
                for (key, value) in map {
                    total = total.saturating_add(ENTRY).saturating_add(key.len());
                    stack.push(value);
                }
            }
            _ => {}
        }
    }
    total
}

fn prepare_schema<H: ViewPaths>(h: &H, parameters: &H::V) -> Result<PreparedSchema, H::V> {
    match tool_schema::classify(h, parameters)? {
        ToolSchema::Json => {}
        ToolSchema::Standard(_) => return Ok(PreparedSchema::Standard),
        ToolSchema::Unreadable(reason) => return Ok(PreparedSchema::Unreadable(reason)),
    }
    let schema = to_json(h, parameters)?;
    if depth_exceeds(&schema, MAX_SCHEMA_DEPTH) {
        // Never used, and never dropped recursively (from the cache, at any time).
        wtf::drop_deep(schema);
        return Ok(PreparedSchema::Json(serde_json::Value::Null, Some(TOO_DEEP.to_string())));
    }
    let problem = schema_problem(&schema, &HostPatterns(h));
    Ok(PreparedSchema::Json(schema, problem))
}

impl PreparedSchema {
    /// What the cache counts for it (see `heap_size`).
    fn size(&self) -> usize {
        match self {
            PreparedSchema::Json(schema, problem) => {
                heap_size(schema).saturating_add(problem.as_ref().map_or(0, String::len))
            }
            PreparedSchema::Standard => 0,
            PreparedSchema::Unreadable(reason) => reason.len(),
        }
    }
}

fn cached_schema<H: ViewPaths>(h: &H, id: f64, parameters: &H::V) -> Result<Rc<PreparedSchema>, H::V> {
    let key = id as u64;
    if let Some(found) = SCHEMAS.with(|cache| cache.borrow().get(key)) {
        return Ok(found);
    }
    // Computed with no borrow held: converting the schema may run caller getters.
    let prepared = Rc::new(prepare_schema(h, parameters)?);
    let size = prepared.size();
    let collected = h.collected_ids();
    SCHEMAS.with(|cache| {
        let mut cache = cache.borrow_mut();
        cache.forget(&collected);
        cache.insert(key, prepared.clone(), size);
    });
    Ok(prepared)
}

/// The name of the call as the model wrote it, for the messages (the reference reads `toolCall.name`).
fn call_name<H: Host>(h: &H, call: &H::V) -> Result<String, H::V> {
    if !h.kind(call).is_object_like() {
        return Ok("undefined".to_string());
    }
    let name = h.get(call, "name")?;
    Ok(h.as_string(&name).unwrap_or_else(|| h.error_message(&name)))
}

/// What validating a call found before anything is awaited.
pub enum Checked<V> {
    /// The arguments `execute` gets (JSON Schema: the coerced copy).
    Args(V),
    /// What a Standard Schema's `validate` returned, maybe a promise (T-4.3.8): see `validate_call::standard_outcome`.
    Standard(V),
}

/// The reference of `FastPaths::check_tool_call` (see there).
pub fn check_tool_call<H: ViewPaths>(h: &H, tool: &H::V, call: &H::V, args: &H::V) -> Result<Checked<H::V>, H::V> {
    let name = || call_name(h, call);
    if h.kind(call).is_object_like() {
        let arguments_error = h.get(call, "argumentsError")?;
        if h.truthy(&arguments_error) {
            let detail = h.as_string(&arguments_error).unwrap_or_else(|| h.error_message(&arguments_error));
            return Err(h.error(&format!("Invalid arguments for tool \"{}\": {detail}", name()?), false));
        }
    }
    let parameters = h.get(tool, "parameters")?;
    if h.kind(&parameters) == Kind::Undefined {
        return Err(h.error("A schema must be an object or a boolean, got undefined", false));
    }
    let schema = match h.object_id(&parameters) {
        Some(id) => cached_schema(h, id, &parameters)?,
        None => Rc::new(prepare_schema(h, &parameters)?),
    };
    let (schema, problem) = match &*schema {
        PreparedSchema::Json(schema, problem) => (schema, problem),
        PreparedSchema::Standard => {
            // T-4.3.8: the schema's own `validate`, on a JSON copy (a library may change what it is given in place).
            let props = h.get(&parameters, "~standard")?;
            let validate = h.get(&props, "validate")?;
            let input = h.json_clone(args)?;
            return Ok(Checked::Standard(h.call_sync(&validate, &props, &[input])?));
        }
        PreparedSchema::Unreadable(reason) => {
            return Err(tool_schema::unreadable_error(h, tool, reason)?);
        }
    };
    if let Some(problem) = problem {
        // The reference's stack overflow (in pi-schema's `compile`) is a RangeError, a pattern `new RegExp` rejects its
        // SyntaxError (told by V8's words, which `regex_error` gives); every other problem an Error. pi-ai's validator
        // cache, a WeakMap, throws V8's TypeError for a boolean schema (`schema_problem`).
        return Err(match problem.as_str() {
            TOO_DEEP => h.range_error(problem),
            WEAK_MAP_KEY => h.error(problem, true),
            p if p.starts_with(INVALID_REGEX) => h.syntax_error(problem),
            _ => h.error(problem, false),
        });
    }
    // The copy `execute` gets is the JS engine's own JSON round trip unless coercion changed something.
    let (text, copy) = h.json_copy(args)?;
    // A view that holds values JSON cannot (NaN, BigInts, undefined items, Dates, ...) starts with `MARK`.
    let view = text.as_deref().and_then(|text| text.strip_prefix(MARK));
    let mut value = parse_json(h, view.or(text.as_deref()))?;
    // Only a view holding a long-string marker (`MARK` then `l`) has any: most views hold none.
    if view.is_some_and(|v| crate::core::text::find(v, &format!("{MARK}l")).is_some()) {
        fetch_read_long_strings(h, schema, &mut value);
    }
    let outcome = match view {
        Some(_) => coerce_and_validate_view(schema, &value, &HostPatterns(h)),
        None => coerce_and_validate_changes(schema, &value, &HostPatterns(h)),
    };
    let outcome = match outcome {
        Ok(None) => Ok(Ok(Checked::Args(copy))),
        // Plain JSON is rebuilt from the coerced value; a view's copy keeps what JSON cannot hold, changed in place.
        Ok(Some(coerced)) => {
            let mut edits = match view {
                Some(_) => {
                    let edits = patches(&value, &coerced);
                    wtf::drop_deep(coerced);
                    edits
                }
                None => serde_json::Value::Array(vec![serde_json::Value::Array(vec![
                    serde_json::Value::Array(Vec::new()),
                    coerced,
                ])]),
            };
            mark_negative_zeros(&mut edits);
            let patched = h.patch_copy(&copy, &js_json_stringify(&edits));
            wtf::drop_deep(edits);
            Ok(patched.map(Checked::Args))
        }
        Err(errors) => Err(errors),
    };
    // The copy may nest far deeper than serde_json's recursive `Drop` can take.
    wtf::drop_deep(value);
    match outcome {
        Ok(result) => result,
        Err(errors) if is_too_deep(&errors) => Err(h.range_error(TOO_DEEP)),
        Err(mut errors) => {
            if h.kind(args) == Kind::Undefined {
                // JSON has no undefined: the copy saw null, the message names what was given.
                for error in &mut errors {
                    if error.path == "root" && error.message.ends_with(", got null") {
                        let mut kept = error.message.as_str();
                        while let Some(shorter) = kept.strip_suffix("null") {
                            kept = shorter;
                        }
                        error.message = format!("{kept}undefined");
                    }
                }
            }
            Err(validation_error(h, call, args, &errors)?)
        }
    }
}

/// T-4.3.5's error for `errors` of the arguments `args` of `call` (a JSON Schema's, or a Standard Schema's issues).
pub fn validation_error<H: Host>(h: &H, call: &H::V, args: &H::V, errors: &[SchemaError]) -> Result<H::V, H::V> {
    let received = h.json_stringify(args, true)?.unwrap_or_else(|| "undefined".to_string());
    Ok(h.error(&format_validation_error(&call_name(h, call)?, errors, &received), false))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::arithmetic_side_effects)]
    use super::*;
    use serde_json::json;

    fn schema(v: serde_json::Value) -> Rc<PreparedSchema> {
        Rc::new(PreparedSchema::Json(v, None))
    }

    #[test]
    fn issue_13_patches_name_only_what_coercion_changed() {
        let old = json!({"a": "1", "b": {"c": [1, "2"], "d": null}, "e": "x", "keep": {"deep": [true]}});
        let new = json!({"a": 1, "b": {"c": [1, 2]}, "e": ["x"], "keep": {"deep": [true]}});
        let mut got: Vec<String> = patches(&old, &new).as_array().unwrap().iter().map(js_json_stringify).collect();
        got.sort();
        assert_eq!(got, vec![r#"[["a"],1]"#, r#"[["b","c",1],2]"#, r#"[["b","d"]]"#, r#"[["e"],0,0]"#]);
        // A wrap keeps the item (the caller's value), patched inside when it was converted too.
        let got = patches(&json!({"n": "5"}), &json!([{"n": 5}]));
        assert_eq!(js_json_stringify(&got), r#"[[[],0,0],[[0,"n"],5]]"#);
        assert_eq!(js_json_stringify(&patches(&json!("x"), &json!(1))), r#"[[[],1]]"#);
        assert_eq!(js_json_stringify(&patches(&json!([1]), &json!([1, 2]))), r#"[[[],[1,2]]]"#);
        assert_eq!(patches(&json!({"a": [1]}), &json!({"a": [1]})), json!([]));
        // Any depth: no recursion.
        let (mut old, mut new) = (json!("1"), json!(1));
        for _ in 0..50_000 {
            old = serde_json::Value::Array(vec![old]);
            new = serde_json::Value::Array(vec![new]);
        }
        let got = patches(&old, &new);
        assert_eq!(got[0][0].as_array().unwrap().len(), 50_000);
        wtf::drop_deep(got);
        wtf::drop_deep(old);
        wtf::drop_deep(new);
    }

    #[test]
    fn issue_13_negative_zero_crosses_as_a_marker() {
        let mut v = json!({"a": [1.5, 0, 2]});
        v["a"][1] = serde_json::Value::Number(serde_json::Number::from_f64(-0.0).unwrap());
        mark_negative_zeros(&mut v);
        assert_eq!(v, json!({"a": [1.5, format!("{MARK}z"), 2]}));
    }

    #[test]
    fn issue_13_schema_cache_is_bounded_by_bytes_oldest_first() {
        let mut cache = SchemaCache::default();
        let size = SCHEMA_CACHE_BYTES / 10;
        // 1,000 fresh large schemas (tools rebuilt every request): the cache never holds more than its bytes.
        for key in 0..1000u64 {
            cache.insert(key, schema(json!({"type": "object"})), size);
            assert!(cache.bytes <= SCHEMA_CACHE_BYTES, "{} bytes after {key}", cache.bytes);
            assert_eq!(cache.bytes, cache.entries.values().map(|(_, s)| s).sum::<usize>());
            assert_eq!(cache.order.len(), cache.entries.len());
        }
        assert_eq!(cache.entries.len(), 10);
        // The newest are kept, the oldest went first.
        assert!(cache.get(999).is_some() && cache.get(990).is_some());
        assert!(cache.get(989).is_none() && cache.get(0).is_none());
        // A schema larger than the whole budget is not cached (and evicts nothing).
        cache.insert(5000, schema(json!(true)), SCHEMA_CACHE_BYTES + 1);
        assert!(cache.get(5000).is_none());
        assert_eq!(cache.entries.len(), 10);
        // Re-inserting a key replaces its accounting.
        cache.insert(999, schema(json!(false)), 1);
        assert_eq!(cache.bytes, 9 * size + 1);
        assert_eq!(cache.order.iter().filter(|k| **k == 999).count(), 1);
    }

    #[test]
    fn issue_13_schema_cache_forgets_collected_objects() {
        let mut cache = SchemaCache::default();
        for key in 1..=5u64 {
            cache.insert(key, schema(json!({})), 10);
        }
        cache.forget(&[2.0, 4.0, 99.0]);
        assert!(cache.get(2).is_none() && cache.get(4).is_none());
        assert!(cache.get(1).is_some() && cache.get(3).is_some() && cache.get(5).is_some());
        assert_eq!((cache.bytes, cache.order.len()), (30, 3));
        assert_eq!(cache.order.iter().copied().collect::<Vec<_>>(), vec![1, 3, 5]);
    }

    #[test]
    fn issue_13_schema_cache_count_bound_still_holds_for_small_schemas() {
        let mut cache = SchemaCache::default();
        for key in 0..2000u64 {
            cache.insert(key, schema(json!({})), 100);
        }
        assert_eq!(cache.entries.len(), SCHEMA_CACHE_LIMIT);
        assert_eq!(cache.bytes, SCHEMA_CACHE_LIMIT * 100);
        assert!(cache.get(1999).is_some() && cache.get(2000 - SCHEMA_CACHE_LIMIT as u64 - 1).is_none());
    }

    #[test]
    fn issue_13_heap_size_counts_strings_keys_and_nodes_at_any_depth() {
        let node = std::mem::size_of::<serde_json::Value>();
        assert_eq!(heap_size(&json!(null)), node);
        assert_eq!(heap_size(&json!("abcd")), node + 4);
        let big = "x".repeat(100_000);
        assert!(heap_size(&json!({"description": big})) > 100_000);
        // Deep nesting: no recursion, so no stack overflow.
        let mut deep = json!(1);
        for _ in 0..100_000 {
            deep = serde_json::Value::Array(vec![deep]);
        }
        let size = heap_size(&deep);
        assert!(size == node * 100_001, "{size}");
        // serde_json's own drop recurses; unwind the nest by hand.
        while let serde_json::Value::Array(mut items) = deep {
            deep = items.pop().unwrap_or(serde_json::Value::Null);
        }
    }
}
