//! `validateToolArguments` on host values (T-4.3): the argumentsError check, then the pure
//! validator of `validate` on a JSON copy of the arguments. The transcript is never modified.

use super::fxhash::FxMap;
use super::host::{Host, Kind};
use super::validate::{
    MAX_SCHEMA_DEPTH, PatternMatcher, TOO_DEEP, coerce_and_validate_changes, depth_exceeds, format_validation_error,
    is_too_deep, js_json_stringify, schema_problem,
};
use super::wtf;
use std::cell::RefCell;
use std::rc::Rc;

struct HostPatterns<'a, H: Host>(&'a H);

impl<H: Host> PatternMatcher for HostPatterns<'_, H> {
    fn is_match(&self, pattern: &str, text: &str) -> Option<bool> {
        self.0.regex_test(pattern, text)
    }
}

/// JSON text as the validator sees it (no text, from `undefined`, → `null`): lone surrogates as stand-ins, any depth.
fn parse_json<H: Host>(h: &H, text: Option<&str>) -> Result<serde_json::Value, H::V> {
    match text {
        Some(text) => wtf::parse(text).map_err(|e| h.error(&e, false)),
        None => Ok(serde_json::Value::Null),
    }
}

/// A JSON copy of a host value as the validator sees it (`undefined` → `null`).
fn to_json<H: Host>(h: &H, v: &H::V) -> Result<serde_json::Value, H::V> {
    parse_json(h, h.json_stringify(v, false)?.as_deref())
}

fn from_json<H: Host>(h: &H, v: &serde_json::Value) -> Result<H::V, H::V> {
    h.json_parse(&js_json_stringify(v))
}

/// A schema as JSON and what is wrong with it, if anything (checked once per schema object).
type PreparedSchema = (serde_json::Value, Option<String>);

/// At most this many schemas are remembered; the cache starts over when it is full.
const SCHEMA_CACHE_LIMIT: usize = 512;

thread_local! {
    /// Schemas by object identity, like the reference's validator cache (a `WeakMap`).
    static SCHEMAS: RefCell<FxMap<u64, Rc<PreparedSchema>>> = RefCell::new(FxMap::default());
}

fn prepare_schema<H: Host>(h: &H, parameters: &H::V) -> Result<PreparedSchema, H::V> {
    let schema = to_json(h, parameters)?;
    if depth_exceeds(&schema, MAX_SCHEMA_DEPTH) {
        // Never used, and never dropped recursively (from the cache, at any time).
        wtf::drop_deep(schema);
        return Ok((serde_json::Value::Null, Some(TOO_DEEP.to_string())));
    }
    let problem = schema_problem(&schema, &HostPatterns(h));
    Ok((schema, problem))
}

fn cached_schema<H: Host>(h: &H, id: f64, parameters: &H::V) -> Result<Rc<PreparedSchema>, H::V> {
    let key = id as u64;
    if let Some(found) = SCHEMAS.with(|cache| cache.borrow().get(&key).cloned()) {
        return Ok(found);
    }
    // Computed with no borrow held: converting the schema may run caller getters.
    let prepared = Rc::new(prepare_schema(h, parameters)?);
    SCHEMAS.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.len() >= SCHEMA_CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(key, prepared.clone());
    });
    Ok(prepared)
}

/// Validates `args` (the possibly prepared arguments of `call`) against `tool.parameters` and
/// returns the coerced copy; throws (as `Err`) an `Error` with the exact T-4.3.5 text.
pub fn validate_tool_call<H: Host>(h: &H, tool: &H::V, call: &H::V, args: &H::V) -> Result<H::V, H::V> {
    // The messages name the call as the model wrote it (the reference reads `toolCall.name`).
    let name = || -> Result<String, H::V> {
        if !h.kind(call).is_object_like() {
            return Ok("undefined".to_string());
        }
        let name = h.get(call, "name")?;
        Ok(h.as_string(&name).unwrap_or_else(|| h.error_message(&name)))
    };
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
    let (schema, problem) = (&schema.0, &schema.1);
    if let Some(problem) = problem {
        // The reference's stack overflow (in pi-schema's `compile`) is a RangeError; every other problem an Error.
        return Err(if problem == TOO_DEEP { h.range_error(problem) } else { h.error(problem, false) });
    }
    // The copy `execute` gets is the JS engine's own JSON round trip unless coercion changed something.
    let (text, copy) = h.json_copy(args)?;
    let value = parse_json(h, text.as_deref())?;
    let outcome = coerce_and_validate_changes(schema, &value, &HostPatterns(h));
    // The copy may nest far deeper than serde_json's recursive `Drop` can take.
    wtf::drop_deep(value);
    match outcome {
        Ok(None) => Ok(copy),
        Ok(Some(coerced)) => {
            let result = from_json(h, &coerced);
            wtf::drop_deep(coerced);
            result
        }
        Err(errors) if is_too_deep(&errors) => Err(h.range_error(TOO_DEEP)),
        Err(mut errors) => {
            if h.kind(args) == Kind::Undefined {
                // JSON has no undefined: the copy saw null, the message names what was given.
                for error in &mut errors {
                    if error.path == "root" && error.message.ends_with(", got null") {
                        error.message = format!("{}undefined", error.message.trim_end_matches("null"));
                    }
                }
            }
            let received = h.json_stringify(args, true)?.unwrap_or_else(|| "undefined".to_string());
            Err(h.error(&format_validation_error(&name()?, &errors, &received), false))
        }
    }
}
