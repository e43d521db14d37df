//! The shortcut for the common case: a schema built only from `type`, `properties`, `required`,
//! `items`, a boolean `additionalProperties` and annotations, and a value that already has every
//! type the schema declares for it. None of the three coercion passes changes such a value (each
//! acts only on a type mismatch, on a null the type refuses, or through keywords this shape lacks)
//! and the check passes, so `coerce_and_validate` can answer without building its context.
//! Anything else answers "not known" and takes the full path, which stays the one definition.

use serde_json::{Map, Value};

use super::MAX_DEPTH;
use super::check::has_type;

/// Whether `value` passes `schema` unchanged, as far as the shortcut can tell (`false`: ask the full path).
pub(crate) fn accepts_as_is(schema: &Value, value: &Value) -> bool {
    accepts(schema, value, 0)
}

/// The keywords a plain node may use, and what they hold.
#[derive(Default)]
struct Plain<'s> {
    type_name: Option<&'s str>,
    properties: Option<&'s Map<String, Value>>,
    required: Option<&'s [Value]>,
    closed: bool,
    items: Option<&'s Value>,
}

/// The node as a plain one, or `None` when it uses anything else (or an unusual form of a keyword).
fn plain(o: &Map<String, Value>) -> Option<Plain<'_>> {
    let mut node = Plain::default();
    let mut structural = false;
    for (key, v) in o {
        match key.as_str() {
            "type" => node.type_name = Some(v.as_str()?),
            "properties" => node.properties = Some(v.as_object()?),
            "required" => node.required = Some(v.as_array()?.as_slice()),
            "additionalProperties" => node.closed = !v.as_bool()?,
            "items" if v.is_object() || v.is_boolean() => node.items = Some(v),
            "description" | "title" | "default" | "examples" | "$comment" | "deprecated" | "readOnly" | "writeOnly" => {
                continue;
            }
            _ => return None,
        }
        structural |= key != "type";
    }
    // Without a type, structure keywords still convert (e.g. `properties` alone means an object).
    if node.type_name.is_none() && structural {
        return None;
    }
    Some(node)
}

fn accepts(schema: &Value, value: &Value, depth: usize) -> bool {
    let Value::Object(o) = schema else {
        return schema.as_bool() == Some(true);
    };
    if depth >= MAX_DEPTH {
        return false;
    }
    let Some(node) = plain(o) else {
        return false;
    };
    let Some(type_name) = node.type_name else {
        return true;
    };
    if !has_type(type_name, value) {
        return false;
    }
    match value {
        Value::Object(members) if type_name == "object" => {
            let required = node.required.unwrap_or_default();
            let present = |r: &Value| r.as_str().is_some_and(|k| members.contains_key(k));
            if !required.iter().all(present) {
                return false;
            }
            members.iter().all(|(key, x)| match node.properties.and_then(|p| p.get(key)) {
                Some(property) => accepts(property, x, depth + 1),
                None => !node.closed,
            })
        }
        Value::Array(items) if type_name == "array" => match node.items {
            Some(item) => items.iter().all(|x| accepts(item, x, depth + 1)),
            None => true,
        },
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::indexing_slicing)]
    use super::accepts_as_is;
    use crate::core::validate::coerce_then_check;
    use crate::core::validate::tests_support::TestRegex;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    /// Arbitrary JSON values.
    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<u64>().prop_map(|n| json!(n)),
            any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
            any::<String>().prop_map(Value::String),
        ];
        leaf.prop_recursive(6, 64, 8, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::vec((any::<String>(), inner), 0..6)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    /// A schema for `value` drawn from the plain keywords, steered by `bits`: mostly one the value
    /// fits, sometimes with a wrong type, a missing or extra required name, a closed object or an
    /// unknown keyword, so that both answers of the shortcut occur.
    fn pick(bits: &mut dyn Iterator<Item = u8>) -> u8 {
        bits.next().unwrap_or(0)
    }

    fn schema_for(value: &Value, bits: &mut dyn Iterator<Item = u8>) -> Value {
        let type_name = match value {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_f64() => "number",
            Value::Number(_) => ["integer", "number"][usize::from(pick(bits) % 2)],
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        };
        let mut schema = serde_json::Map::new();
        match pick(bits) % 16 {
            0 => return json!({"description": "anything"}),
            1 => return Value::Bool(true),
            2 => {
                schema.insert(
                    "type".into(),
                    json!(["string", "integer", "boolean", "object"][usize::from(pick(bits) % 4)]),
                );
            }
            3 => {
                schema.insert("type".into(), json!([type_name, "null"]));
            }
            4 => {
                schema.insert("minLength".into(), json!(1));
                schema.insert("type".into(), json!(type_name));
            }
            _ => {
                schema.insert("type".into(), json!(type_name));
            }
        }
        schema.insert("description".into(), json!("a field"));
        match value {
            Value::Object(members) => {
                let mut properties = serde_json::Map::new();
                let mut required = Vec::new();
                for (key, x) in members {
                    if !pick(bits).is_multiple_of(5) {
                        properties.insert(key.clone(), schema_for(x, bits));
                    }
                    if pick(bits).is_multiple_of(2) {
                        required.push(json!(key));
                    }
                }
                if pick(bits).is_multiple_of(6) {
                    required.push(json!("absent"));
                }
                schema.insert("properties".into(), Value::Object(properties));
                schema.insert("required".into(), Value::Array(required));
                if pick(bits).is_multiple_of(3) {
                    schema.insert("additionalProperties".into(), json!(pick(bits).is_multiple_of(2)));
                }
            }
            Value::Array(items) => {
                if let Some(first) = items.first() {
                    schema.insert("items".into(), schema_for(first, bits));
                }
            }
            _ => {}
        }
        Value::Object(schema)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        /// Whenever the shortcut accepts, the full path agrees: valid, and nothing coerced.
        #[test]
        fn the_shortcut_never_disagrees_with_the_full_path(value in arb_json(), bits in proptest::collection::vec(any::<u8>(), 64)) {
            let schema = schema_for(&value, &mut bits.into_iter());
            if accepts_as_is(&schema, &value) {
                prop_assert_eq!(coerce_then_check(&schema, &value, &TestRegex), Ok(None));
            }
        }
    }

    #[test]
    fn the_shortcut_takes_plain_fits_and_leaves_everything_else() {
        let schema = json!({
            "type": "object",
            "properties": {"path": {"type": "string"}, "n": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["path"],
            "additionalProperties": false,
        });
        assert!(accepts_as_is(&schema, &json!({"path": "a", "n": 2, "tags": ["x"]})));
        assert!(accepts_as_is(&json!({"type": "object", "properties": {}}), &json!({})));
        // A mismatch or anything the full path coerces or must explain:
        assert!(!accepts_as_is(&schema, &json!({"path": "a", "n": "2"})));
        assert!(!accepts_as_is(&schema, &json!({"n": 2})));
        assert!(!accepts_as_is(&schema, &json!({"path": "a", "extra": 1})));
        assert!(!accepts_as_is(&schema, &json!({"path": "a", "tags": "x"})));
        assert!(!accepts_as_is(&json!({"type": "string", "minLength": 1}), &json!("")));
        assert!(!accepts_as_is(&json!({"properties": {}}), &json!({})));
        assert!(!accepts_as_is(&json!({"anyOf": [{"type": "number"}, {"type": "string"}]}), &json!("5")));
        assert!(!accepts_as_is(
            &json!({"type": "object", "properties": {"x": {"type": "string"}}}),
            &json!({"x": null})
        ));
    }
}
