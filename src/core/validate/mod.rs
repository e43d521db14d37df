//! Tool-argument validation (SPEC §4.3, `validateToolArguments`): coerce a model's arguments towards a tool's JSON
//! Schema in three passes (T-4.3.3), then check them and explain failures (T-4.3.4–T-4.3.6), with pi-schema's
//! semantics, messages and order. Pure Rust on `serde_json::Value`: no JS types; ECMAScript regexes are the host's
//! (`PatternMatcher`). Nothing here may panic: recursion stops at `MAX_DEPTH` with `TOO_DEEP` (E-8.4.1).

mod check;
mod coerce;
mod convert;
mod explain;
mod format;
mod ip;

pub(crate) mod number;
mod plain;
mod problems;
mod resolve;
pub(crate) mod special;
mod uri;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_coerce;
#[cfg(test)]
mod tests_errors;
#[cfg(test)]
mod tests_support;

use crate::core::fxhash::FxMap as HashMap;

use serde_json::Value;

pub use crate::core::text::json::depth_exceeds;
use crate::core::text::json::{self, js_json_stringify_pretty};
pub use number::js_number_to_string;
pub(crate) use number::parse_f64;
pub use special::MARK;

use resolve::{BaseId, Resolver};

/// How deep the validator's recursion (schema levels, `$ref`s, coercion) may go before it stops with `TOO_DEEP`.
///
/// Wasm frames share V8's native stack with JS (984 KiB on Node), and a stack overflow inside wasm unwinds the
/// instance mid-call (its shadow stack pointer and borrows are never restored), so this limit must be reached
/// first, whatever the caller's own depth. Measured on Node 20 in a fresh process (Dec 2), with no limit: the
/// heaviest path (coercion wrapping a scalar into arrays level by level) overflowed near 2,600 levels called from the
/// top of the stack, `anyOf` coercion near 2,950, the check of nested `items` or `properties` near 5,500; at 1,400
/// levels the wrap path still ran under 3,000 caller frames. The reference's first call reaches 790 `properties`
/// levels and 1,206 (with a nested value) to 1,321 `items` (its JS stack), so 1,400 is above it on every keyword.
/// Unoptimised builds have frames ~30× larger, so their limit is lower.
pub const MAX_DEPTH: usize = if cfg!(debug_assertions) { 300 } else { 1_400 };

/// How deeply a schema's JSON may nest (`properties` and `allOf` take two JSON levels per schema level).
pub const MAX_SCHEMA_DEPTH: usize = 2 * MAX_DEPTH + 8;

/// How deeply a value taking the full path (not the shortcut) may nest: its members are copied recursively (cheap
/// frames: a release build copied 12,000 levels). `structuredClone` stops near 3,300 on Node's default stack.
pub const MAX_VALUE_DEPTH: usize = if cfg!(debug_assertions) { 300 } else { 10_000 };

/// What is reported when the schema, the value or a `$ref` chain nests deeper than the limits: what the reference
/// throws for a depth it cannot take (V8's stack overflow, from `structuredClone` or pi-schema's `compile`).
pub const TOO_DEEP: &str = "Maximum call stack size exceeded";

/// How V8 begins the message of the `SyntaxError` `new RegExp` throws (and the validator's own text when the host
/// cannot give the engine's).
pub const INVALID_REGEX: &str = "Invalid regular expression: ";

/// What pi-ai's validator cache (a `WeakMap`) throws, as a TypeError, for a schema that is a boolean (V8's words).
pub const WEAK_MAP_KEY: &str = "Invalid value used as weak map key";

/// ECMAScript regex matching is done by the host (js_sys::RegExp in wasm). None = invalid pattern.
///
/// A pattern compiles as pi-schema's `sharedRegex` does: with the `u` flag, else (some older schemas escape
/// characters `u` rejects) without it; matching is `RegExp.prototype.test` (a search, not anchored).
pub trait PatternMatcher {
    fn is_match(&self, pattern: &str, text: &str) -> Option<bool>;

    /// The message `new RegExp(pattern)` throws for a pattern `is_match` rejects (reported by `schema_problem`).
    /// `None`: `Invalid regular expression: /<pattern>/`.
    fn pattern_error(&self, _pattern: &str) -> Option<String> {
        None
    }

    /// Format `regex`: whether `text` compiles as `new RegExp(text, "u")`. The default asks `is_match`, which also
    /// accepts patterns valid only without the `u` flag.
    fn is_regex(&self, text: &str) -> bool {
        self.is_match(text, "").is_some()
    }

    /// Format `url`: `URL.canParse(text)`. `None` (the default): a built-in approximation of the WHATWG parser.
    fn url_can_parse(&self, _text: &str) -> Option<bool> {
        None
    }
}

/// One failed keyword: where (a dotted path) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    /// Already dotted: "edits.0.oldText" or "root".
    pub path: String,
    pub message: String,
}

/// Coerce (three passes, T-4.3.3) then check (T-4.3.4–T-4.3.6). Returns the coerced value, or the errors in report order.
///
/// A malformed schema (a subschema that is not an object or a boolean, an invalid `pattern`) is not reported here;
/// `schema_problem` finds it, as pi-schema's `compile` throws before any value is seen. Here a part that is not a
/// schema accepts, and an invalid pattern matches nothing.
pub fn coerce_and_validate(schema: &Value, args: &Value, re: &dyn PatternMatcher) -> Result<Value, Vec<SchemaError>> {
    coerce_and_validate_changes(schema, args, re).map(|coerced| coerced.unwrap_or_else(|| args.clone()))
}

/// `coerce_and_validate`, with `Ok(None)` when the coerced arguments are `args` unchanged.
pub fn coerce_and_validate_changes(
    schema: &Value,
    args: &Value,
    re: &dyn PatternMatcher,
) -> Result<Option<Value>, Vec<SchemaError>> {
    if json::depth_exceeds(schema, MAX_SCHEMA_DEPTH) {
        return Err(too_deep());
    }
    // The shortcut reads the value only as deep as the schema reaches, so a value of any depth may take it; the full
    // path copies whole members (recursively), so there the value's own depth is bounded.
    if plain::accepts_as_is(schema, args) {
        return Ok(None);
    }
    coerce_and_validate_view(schema, args, re)
}

/// `coerce_and_validate_changes` for a view with markers (`special.rs`): never the shortcut, which reads only JSON.
pub fn coerce_and_validate_view(
    schema: &Value,
    args: &Value,
    re: &dyn PatternMatcher,
) -> Result<Option<Value>, Vec<SchemaError>> {
    if json::depth_exceeds(schema, MAX_SCHEMA_DEPTH) || json::depth_exceeds(args, MAX_VALUE_DEPTH) {
        return Err(too_deep());
    }
    coerce_then_check(schema, args, re)
}

/// The one error of a value, schema or `$ref` chain nested deeper than `MAX_DEPTH`.
fn too_deep() -> Vec<SchemaError> {
    vec![SchemaError { path: "root".to_string(), message: TOO_DEEP.to_string() }]
}

/// Whether `errors` is the one error of `too_deep`: the reference then throws its stack overflow, not a validation
/// error, so callers throw `TOO_DEEP` as it is.
pub fn is_too_deep(errors: &[SchemaError]) -> bool {
    matches!(errors, [e] if e.path == "root" && e.message == TOO_DEEP)
}

/// The three coercion passes, then the check (or the explanation of why it fails).
fn coerce_then_check(schema: &Value, args: &Value, re: &dyn PatternMatcher) -> Result<Option<Value>, Vec<SchemaError>> {
    let mut ctx = Ctx::new(schema, re);
    let coerced = ctx.coerce(args);
    if ctx.too_deep {
        return Err(too_deep());
    }
    let value = coerced.as_ref().unwrap_or(args);
    let base = ctx.resolver.root_base();
    if ctx.valid(schema, base, value) && !ctx.too_deep {
        return Ok(coerced);
    }
    let raw = ctx.errors(schema, value);
    if ctx.too_deep {
        return Err(too_deep());
    }
    Err(raw.into_iter().map(|e| SchemaError { path: json::dotted_path(&e.path), message: e.message }).collect())
}

/// `Validation failed for tool "<name>":\n  - <path>: <message>\n...\n\nReceived arguments:\n<received_pretty>`
pub fn format_validation_error(tool_name: &str, errors: &[SchemaError], received_pretty: &str) -> String {
    let lines: Vec<String> = errors.iter().map(|e| format!("  - {}: {}", e.path, e.message)).collect();
    format!(
        "Validation failed for tool \"{tool_name}\":\n{}\n\nReceived arguments:\n{received_pretty}",
        lines.join("\n")
    )
}

/// What pi-schema's `compile` would throw for this schema (its message), or `None` for a usable schema. Cache it per
/// schema: a schema with a problem fails every call with this message instead of a validation error.
pub fn schema_problem(schema: &Value, re: &dyn PatternMatcher) -> Option<String> {
    if schema.is_boolean() {
        // pi-ai caches validators in a WeakMap keyed by the schema, which throws for a primitive key (V8's words).
        return Some(WEAK_MAP_KEY.to_string());
    }
    if json::depth_exceeds(schema, MAX_SCHEMA_DEPTH) {
        return Some(TOO_DEEP.to_string());
    }
    problems::find(schema, re)
}

/// T-4.3.2 and T-4.3.5 in one call: the coerced arguments, or the text of the error `validateToolArguments` throws.
/// `original` is the value shown under `Received arguments` (the arguments before coercion).
pub fn validate_tool_arguments(
    tool_name: &str,
    schema: &Value,
    original: &Value,
    re: &dyn PatternMatcher,
) -> Result<Value, String> {
    if let Some(problem) = schema_problem(schema, re) {
        return Err(problem);
    }
    coerce_and_validate(schema, original, re).map_err(|errors| {
        if is_too_deep(&errors) {
            return TOO_DEEP.to_string();
        }
        format_validation_error(tool_name, &errors, &js_json_stringify_pretty(original))
    })
}

/// An error before its path is dotted: the path is a JSON Pointer (its length ranks union branches).
#[derive(Debug, Clone)]
pub(crate) struct RawError {
    pub path: String,
    pub message: String,
}

/// A pass-2 result kept in the memo: the value converted (objects and arrays only) and what it became.
type Converted = (Value, Option<Value>);

/// A value as the coercer's re-entry guard compares it: objects and arrays by identity, primitives by value.
enum EnteredValue {
    Address(usize),
    Primitive(Value),
}

/// The state of one `coerce_and_validate` call.
pub(crate) struct Ctx<'a> {
    pub root: &'a Value,
    pub resolver: Resolver<'a>,
    pub re: &'a dyn PatternMatcher,
    depth: usize,
    /// Set when any recursion reached `MAX_DEPTH`: the call then fails with `TOO_DEEP`.
    pub too_deep: bool,
    /// (schema node, value) pairs pass 2 is converting through a re-entry point (`$ref` or a wrap).
    entered: Vec<(usize, EnteredValue)>,
    /// How often a re-entry was cut short; results computed across a cut are not memoized.
    cuts: usize,
    /// Pass 2 results of `$ref` targets: (node, value key) → [(value, result)] (see `coerce.rs`).
    convert_memo: HashMap<(usize, String), Vec<Converted>>,
    /// Answers of `$ref` targets for objects and arrays within one outermost `valid` call, whose values all live
    /// as long as it runs: (node, value address) → passes. Keeps recursive unions from taking exponential time.
    check_memo: HashMap<(usize, usize), bool>,
    /// How many `valid` calls are running (the memo is cleared when the outermost one ends).
    check_calls: usize,
    /// Errors of `$ref` targets for objects and arrays: (node, value address) → (path, errors).
    explain_memo: HashMap<(usize, usize), (String, Vec<RawError>)>,
}

impl<'a> Ctx<'a> {
    fn new(schema: &'a Value, re: &'a dyn PatternMatcher) -> Self {
        Ctx {
            root: schema,
            resolver: Resolver::new(schema),
            re,
            depth: 0,
            too_deep: false,
            entered: Vec::new(),
            cuts: 0,
            convert_memo: HashMap::default(),
            check_memo: HashMap::default(),
            check_calls: 0,
            explain_memo: HashMap::default(),
        }
    }

    /// One level deeper; `false` (and the call fails) past `MAX_DEPTH`. Pair each `true` with `leave`.
    fn enter(&mut self) -> bool {
        if self.too_deep || self.depth >= MAX_DEPTH {
            self.too_deep = true;
            return false;
        }
        self.depth = self.depth.saturating_add(1);
        true
    }

    fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    /// Whether `value` passes `node`; `None` when `node` is not a schema (pi-schema's compile would throw) or when
    /// the check went past `MAX_DEPTH`: pi-schema's `passes` catches whatever its check throws, its stack overflow
    /// included, and coercion goes on as if the branch did not pass (a self-referencing `anyOf` branch beside a
    /// `type` the value fails is then reported as that type's error, not as the overflow).
    fn passes(&mut self, node: &'a Value, base: BaseId, value: &Value) -> Option<bool> {
        if !matches!(node, Value::Bool(_) | Value::Object(_)) {
            return None;
        }
        let before = self.too_deep;
        let ok = self.valid(node, base, value);
        if self.too_deep && !before {
            self.too_deep = false;
            return None;
        }
        Some(ok)
    }
}
