//! What a tool's `parameters` is (T-4.3.8, issue 42): JSON Schema, read as the reference reads it (TypeBox schemas are
//! JSON Schema), or a Standard Schema v1 (zod 4, ArkType, Valibot through `toStandardJsonSchema`), whose own converter
//! writes the JSON Schema the model is sent and whose own `validate` checks the arguments. Anything else is refused
//! with a message naming the tool: a schema we cannot read is never "anything goes".
//!
//! The JS twins are `classifySchema` and `standardJsonSchema` in `src/js/snippets/values.js` (the argument checks and
//! the declarations of the wasm build use them); `tests/js/standard-schema.test.mjs` holds both to the same answers.

use super::host::{Host, Kind};
use super::validate::SchemaError;

/// The JSON Schema dialect asked of a Standard Schema's converter: draft-07 is what every built-in wire format takes.
pub const JSON_SCHEMA_TARGET: &str = "draft-07";

/// What `parameters` is.
pub enum ToolSchema<V> {
    /// Absent, JSON Schema, or not an object at all (left to the checks that name those).
    Json,
    /// A Standard Schema with a JSON Schema converter: its `~standard` object.
    Standard(V),
    /// Unusable: the reason, finishing a sentence that starts with the tool's name.
    Unreadable(String),
}

/// Whether `v` is a Standard Schema v1: `~standard` an object with `version` 1 and a function `validate`. Returns its
/// `~standard` object. Reads `~standard`, then its `version` and `validate`.
fn standard_props<H: Host>(h: &H, v: &H::V) -> Result<Option<H::V>, H::V> {
    let props = h.get(v, "~standard")?;
    if !h.kind(&props).is_object_like() {
        return Ok(None);
    }
    let version = h.get(&props, "version")?;
    let validate = h.get(&props, "validate")?;
    Ok((h.as_number(&version) == Some(1.0) && h.kind(&validate) == Kind::Function).then_some(props))
}

/// Classifies `parameters`. A Standard Schema must also offer `~standard.jsonSchema.input` (the Standard JSON Schema
/// interface), since the model needs JSON Schema; an object that is not a Standard Schema is JSON Schema only when it
/// is a plain object (its prototype `Object.prototype` of some realm, or `null`): a class instance or a function is a
/// validator of a library we cannot read (zod 3, Joi, Yup without their Standard Schema).
pub fn classify<H: Host>(h: &H, parameters: &H::V) -> Result<ToolSchema<H::V>, H::V> {
    let kind = h.kind(parameters);
    if !matches!(kind, Kind::Object | Kind::Function) {
        return Ok(ToolSchema::Json);
    }
    if let Some(props) = standard_props(h, parameters)? {
        let converter = h.get(&props, "jsonSchema")?;
        if h.kind(&converter).is_object_like() && h.kind(&h.get(&converter, "input")?) == Kind::Function {
            return Ok(ToolSchema::Standard(props));
        }
        let vendor = h.get(&props, "vendor")?;
        let vendor = h.as_string(&vendor).unwrap_or_else(|| h.error_message(&vendor));
        return Ok(ToolSchema::Unreadable(format!(
            "is a Standard Schema of \"{vendor}\" without a JSON Schema converter (~standard.jsonSchema), and the \
             model needs JSON Schema: pass a schema that has one (zod 4.2 or later, ArkType 2.1.28 or later, Valibot \
             through toStandardJsonSchema of @valibot/to-json-schema) or JSON Schema"
        )));
    }
    if kind == Kind::Object && h.plain_object(parameters)? {
        return Ok(ToolSchema::Json);
    }
    Ok(ToolSchema::Unreadable(NOT_A_SCHEMA.to_string()))
}

/// Why an object that is no Standard Schema and no plain object is refused.
pub const NOT_A_SCHEMA: &str = "is neither JSON Schema (a plain object) nor a Standard Schema (an object with \
                                ~standard): pass JSON Schema, a TypeBox schema, or a Standard Schema with a JSON \
                                Schema converter (zod 4, ArkType, Valibot through toStandardJsonSchema)";

/// `Tool "<name>": parameters <reason>`, the message of the `TypeError` for an unreadable schema inside a run.
pub fn unreadable_message(tool_name: &str, reason: &str) -> String {
    format!("Tool \"{tool_name}\": parameters {reason}")
}

/// The `TypeError` for an unreadable schema of `tool` inside a run (`unreadable_message`, the tool's name read).
pub fn unreadable_error<H: Host>(h: &H, tool: &H::V, reason: &str) -> Result<H::V, H::V> {
    let name = h.get(tool, "name")?;
    let name = h.as_string(&name).unwrap_or_else(|| h.error_message(&name));
    Ok(h.error(&unreadable_message(&name, reason), true))
}

/// The JSON Schema a Standard Schema's converter writes for its input (`jsonSchema.input({ target: "draft-07" })`),
/// without the `$schema` key, which says only the dialect and would be sent with every request. A copy: the
/// converter's object is not changed.
pub fn standard_json_schema<H: Host>(h: &H, props: &H::V) -> Result<H::V, H::V> {
    let converter = h.get(props, "jsonSchema")?;
    let input = h.get(&converter, "input")?;
    let options = h.object(&[("target", h.constant(JSON_SCHEMA_TARGET))]);
    let schema = h.call_sync(&input, &converter, &[options])?;
    if h.kind(&schema) != Kind::Object {
        return Err(h.error("A Standard Schema's jsonSchema.input() must return a JSON Schema object", true));
    }
    let copy = h.shallow_copy(&schema)?;
    h.delete(&copy, "$schema")?;
    Ok(copy)
}

/// One segment of a Standard Schema issue's `path`: a property key, or `{ key }`.
fn segment<H: Host>(h: &H, v: &H::V) -> Result<String, H::V> {
    let key = if h.kind(v).is_object_like() { h.get(v, "key")? } else { v.clone() };
    Ok(match h.as_number(&key) {
        Some(n) => super::text::number::js_number_to_string(n),
        None => h.as_string(&key).unwrap_or_else(|| h.error_message(&key)),
    })
}

/// At most this many issues are listed (a schema may report one per array item).
const MAX_ISSUES: usize = 100;

/// A Standard Schema's answer (`validate`'s result, settled): `Ok(value)` for a success, else the issues as the
/// library's validation errors (a path joined with dots, `root` when empty; its message).
pub fn standard_answer<H: Host>(h: &H, answer: &H::V) -> Result<Result<H::V, Vec<SchemaError>>, H::V> {
    if !h.kind(answer).is_object_like() {
        return Err(h.error("A Standard Schema's validate must return a result object ({ value } or { issues })", true));
    }
    let issues = h.get(answer, "issues")?;
    if !h.truthy(&issues) {
        return Ok(Ok(h.get(answer, "value")?));
    }
    let list = if h.kind(&issues) == Kind::Array { h.array_items(&issues)? } else { Vec::new() };
    let mut errors = Vec::new();
    for issue in list.iter().take(MAX_ISSUES) {
        let (path, message) = if h.kind(issue).is_object_like() {
            (h.get(issue, "path")?, h.get(issue, "message")?)
        } else {
            (h.undefined(), issue.clone())
        };
        let mut segments = Vec::new();
        if h.kind(&path) == Kind::Array {
            for s in h.array_items(&path)? {
                segments.push(segment(h, &s)?);
            }
        }
        let path = if segments.is_empty() { "root".to_string() } else { segments.join(".") };
        let message = h.as_string(&message).unwrap_or_else(|| h.error_message(&message));
        errors.push(SchemaError { path, message });
    }
    if list.len() > MAX_ISSUES {
        errors.push(SchemaError { path: "root".into(), message: format!("and {} more", list.len() - MAX_ISSUES) });
    }
    if errors.is_empty() {
        errors.push(SchemaError { path: "root".into(), message: "invalid (the schema reported no issue)".into() });
    }
    Ok(Err(errors))
}
