//! Cross-checks against the reference implementation (pi-ai's `validateToolArguments`), and randomized robustness.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use serde_json::Value;

use super::tests_support::*;
use super::*;
use crate::core::text::json::{js_json_stringify, js_json_stringify_pretty};

/// Cases recorded from the reference: `VALIDATE_CASES=path cargo test -- --ignored differential` compares them all.
#[test]
#[ignore = "run by scripts/test on cases recorded from the reference by tests/validate/gen.mjs"]
fn differential_against_recorded_reference() {
    let path = std::env::var("VALIDATE_CASES").expect("VALIDATE_CASES");
    // Parsed as the validator's own copies are: lone surrogates (escaped by JSON.stringify) as stand-ins.
    let Value::Array(cases) = crate::core::text::wtf::parse(&std::fs::read_to_string(path).unwrap()).unwrap() else {
        panic!("VALIDATE_CASES holds no array");
    };
    let mut failures = 0;
    // Skipped only where the reference itself gives no answer (it overflowed its stack) or no stable one (asked
    // twice, it answered twice differently): ours stops at its own limit there. A case where only ours stops (`TOO_DEEP`) while the reference answered is compared, and fails, unless
    // the reference's answer is a `$ref` walk of 200+ error lines (below).
    let mut reference_overflowed = 0;
    let mut reference_unstable = 0;
    let mut ours_limited = 0;
    for (i, case) in cases.iter().enumerate() {
        let (schema, args, expected) = (&case["schema"], &case["args"], &case["expected"]);
        if expected["err"].as_str().is_some_and(|e| e.contains("Maximum call stack size exceeded")) {
            reference_overflowed += 1;
            continue;
        }
        // Asked twice at different stack depths, the reference gave two answers (gen.mjs): its stack decided.
        if expected.get("unstable").is_some() {
            reference_unstable += 1;
            continue;
        }
        let got = validate_tool_arguments("t", schema, args, &TestRegex);
        // A schema that recurses through `$ref` without going deeper into the value: the reference walks it until
        // its own stack or the schema stops it (hundreds of repeated error lines), ours stops at its fixed limit
        // (README, Differences). Counted apart, only when the reference's answer shows that walk.
        let deep_walk = expected["err"].as_str().is_some_and(|e| e.lines().count() > 200);
        if deep_walk && got.as_ref().err().is_some_and(|e| e.contains("Maximum call stack size exceeded")) {
            ours_limited += 1;
            continue;
        }
        let (got_text, want_text) = match (&got, expected.get("ok")) {
            (Ok(v), Some(want)) => (js_json_stringify(v), js_json_stringify(want)),
            (Ok(v), None) => (format!("OK {}", js_json_stringify(v)), expected["err"].as_str().unwrap().to_string()),
            (Err(e), Some(want)) => (e.clone(), format!("OK {}", js_json_stringify(want))),
            (Err(e), None) => (e.clone(), expected["err"].as_str().unwrap().to_string()),
        };
        if got_text != want_text {
            failures += 1;
            if failures <= 15 {
                eprintln!(
                    "--- case {i}\nschema: {}\nargs:   {}\nwant: {want_text}\ngot:  {got_text}\n",
                    js_json_stringify(schema),
                    js_json_stringify(args)
                );
            }
        }
    }
    let skipped = reference_overflowed + reference_unstable + ours_limited;
    let compared = cases.len() - skipped;
    println!(
        "validator differential: {compared} of {} cases compared, {reference_overflowed} skipped (the reference \
         overflowed its stack), {reference_unstable} skipped (the reference's answer changed with its stack depth), \
         {ours_limited} where only ours stopped at its depth limit on a $ref walk the reference took to 200+ errors",
        cases.len()
    );
    assert_eq!(failures, 0, "{failures} of the {compared} cases compared differ");
    // Skips are the exception (about 1 in 3,000 in practice): a change that made many cases skip (ours failing at its
    // depth limit where the reference answered, say) must fail here, not shrink what is compared.
    assert!(cases.len() >= 100, "only {} cases recorded", cases.len());
    assert!(skipped * 100 <= cases.len(), "{skipped} of {} cases skipped (at most 1% may be)", cases.len());
}

fn j(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

/// The coerced value of `args` at property `v` of a one-property object schema, or the error lines.
fn prop(schema: &str, arg: &str) -> String {
    answer(
        &j(&format!(r#"{{"type":"object","properties":{{"v":{schema}}},"required":["v"]}}"#)),
        &j(&format!(r#"{{"v":{arg}}}"#)),
    )
}

#[test]
fn t_4_3_3_measured_type_array_coercions() {
    let cases = [
        (r#"["integer","null"]"#, r#""5""#, r#"{"v":5}"#),
        (r#"["integer","null"]"#, r#""""#, r#"{"v":null}"#),
        (r#"["integer","null"]"#, r#""null""#, "v: expected integer or null, got string"),
        (r#"["integer","null"]"#, r#""42.7""#, "v: expected integer or null, got string"),
        (r#"["number","string"]"#, "true", r#"{"v":1}"#),
        (r#"["string","number"]"#, "true", r#"{"v":"true"}"#),
        (r#"["string","boolean"]"#, "null", r#"{"v":""}"#),
        (r#"["boolean","string"]"#, "null", r#"{"v":false}"#),
        (r#"["integer","boolean"]"#, r#""true""#, r#"{"v":true}"#),
    ];
    for (types, arg, want) in cases {
        assert_eq!(prop(&format!(r#"{{"type":{types}}}"#), arg), want, "{types} {arg}");
    }
}

#[test]
fn t_4_3_3_measured_conversions() {
    let number = r#"{"type":"number"}"#;
    assert_eq!(prop(number, r#""""#), r#"{"v":0}"#);
    assert_eq!(prop(number, r#"" 12 ""#), r#"{"v":12}"#);
    assert_eq!(prop(number, r#""0x10""#), r#"{"v":16}"#);
    assert_eq!(prop(number, r#""1e3""#), r#"{"v":1000}"#);
    assert_eq!(prop(number, r#""Infinity""#), "v: expected number, got string");
    assert_eq!(prop(number, r#""tRuE""#), r#"{"v":1}"#);
    assert_eq!(prop(number, r#""12n""#), r#"{"v":12}"#);
    assert_eq!(prop(r#"{"type":"integer"}"#, r#""42.7""#), r#"{"v":42}"#);
    assert_eq!(prop(r#"{"enum":[null,0]}"#, r#""null""#), "v: expected one of [null,0]");
    assert_eq!(prop(r#"{"type":"array","items":{"type":"string"}}"#, "null"), r#"{"v":["null"]}"#);
    assert_eq!(prop(r#"{"type":"string"}"#, "5"), r#"{"v":"5"}"#);
    assert_eq!(prop(r#"{"type":"string"}"#, "null"), r#"{"v":"null"}"#);
    assert_eq!(prop(r#"{"type":"null"}"#, r#""Undefined""#), r#"{"v":null}"#);
    // A tuple never wraps a single value.
    assert_eq!(prop(r#"{"type":"array","prefixItems":[{"type":"string"}]}"#, "1"), "v: expected array, got integer");
}

#[test]
fn t_4_3_7_measured_examples() {
    let schema =
        j(r#"{"type":"object","properties":{"n":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}},
        "opt":{"type":"string"},"b":{"type":"boolean"}},"required":["n","tags","b"]}"#);
    let args = j(r#"{"n":"42.7","tags":"one","opt":null,"b":"true"}"#);
    let coerced = coerce_and_validate(&schema, &args, &TestRegex).unwrap();
    assert_eq!(coerced, j(r#"{"n":42,"tags":["one"],"b":true}"#));
    assert_eq!(args, j(r#"{"n":"42.7","tags":"one","opt":null,"b":"true"}"#), "the input is never modified");

    let args = j(r#"{"n":"ten","extra":1}"#);
    let errors = coerce_and_validate(&schema, &args, &TestRegex).unwrap_err();
    let want = "Validation failed for tool \"t\":\n  - tags: missing\n  - b: missing\n  - n: expected integer, got string\n\nReceived arguments:\n{\n  \"n\": \"ten\",\n  \"extra\": 1\n}";
    assert_eq!(format_validation_error("t", &errors, &js_json_stringify_pretty(&args)), want);
    assert_eq!(validate_tool_arguments("t", &schema, &args, &TestRegex).unwrap_err(), want);
}

#[test]
fn unchanged_arguments_come_back_equal() {
    let schema =
        j(r#"{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"array","items":{"type":"number"}}}}"#);
    let args = j(r#"{"b":[1,2.5],"a":"x","z":{"q":[null]}}"#);
    assert_eq!(coerce_and_validate(&schema, &args, &TestRegex).unwrap(), args);
    assert_eq!(coerce_and_validate(&j("{}"), &j("[1,{}]"), &TestRegex).unwrap(), j("[1,{}]"));
}

fn nested(depth: usize, leaf: Value, wrap: impl Fn(Value) -> Value) -> Value {
    let mut v = leaf;
    for _ in 0..depth {
        v = wrap(v);
    }
    v
}

fn too_deep() -> Vec<SchemaError> {
    vec![SchemaError { path: "root".to_string(), message: TOO_DEEP.to_string() }]
}

#[test]
fn e_8_4_1_deep_values_and_schemas_stop_with_an_error() {
    // The shortcut reads a value only as deep as the schema reaches: any depth passes `{}` unchanged, as in the
    // reference (whose only limit is its stack, in `structuredClone`).
    let deepest = nested(100_000, json!(1), |v| Value::Array(vec![v]));
    assert_eq!(coerce_and_validate_changes(&json!({}), &deepest, &TestRegex), Ok(None));
    assert_eq!(coerce_and_validate_changes(&json!({"type": "array"}), &deepest, &TestRegex), Ok(None));
    crate::core::text::wtf::drop_deep(deepest);
    // The full path copies members recursively: past `MAX_VALUE_DEPTH` it stops with the reference's error.
    let deep_value = nested(MAX_VALUE_DEPTH, json!(1), |v| Value::Array(vec![v]));
    assert_eq!(coerce_and_validate(&json!({"minItems": 1}), &deep_value, &TestRegex), Err(too_deep()));
    let within = nested(MAX_VALUE_DEPTH - 1, json!(1), |v| Value::Array(vec![v]));
    assert_eq!(coerce_and_validate_changes(&json!({"minItems": 1}), &within, &TestRegex), Ok(None));
    // A schema's JSON past `MAX_SCHEMA_DEPTH`, or recursion past `MAX_DEPTH`, stops with the reference's error.
    let deep_schema = nested(MAX_SCHEMA_DEPTH, json!({}), |s| json!({"items": s}));
    assert_eq!(coerce_and_validate(&deep_schema, &json!([]), &TestRegex), Err(too_deep()));
    assert_eq!(schema_problem(&deep_schema, &TestRegex).as_deref(), Some(TOO_DEEP));
    let typed = |n| nested(n, json!({"type": "integer"}), |s| json!({"type": "array", "items": s}));
    let strings = |n| nested(n, json!("7"), |v| json!([v]));
    assert_eq!(coerce_and_validate(&typed(MAX_DEPTH + 5), &strings(MAX_DEPTH + 5), &TestRegex), Err(too_deep()));
    assert_eq!(schema_problem(&typed(MAX_DEPTH + 5), &TestRegex).as_deref(), Some(TOO_DEEP));
    assert_eq!(schema_problem(&typed(MAX_DEPTH - 5), &TestRegex), None);
    // Within the limit, a deep schema walks a deep value.
    let schema = nested(150, json!({"type": "integer"}), |s| json!({"type": "array", "items": s}));
    let value = nested(150, json!("7"), |v| json!([v]));
    assert_eq!(coerce_and_validate(&schema, &value, &TestRegex), Ok(nested(150, json!(7), |v| json!([v]))));
}

#[test]
fn e_8_4_1_ref_cycles_terminate() {
    for schema in [
        json!({"$ref": "#"}),
        json!({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}}),
        json!({"anyOf": [{"$ref": "#"}, {"type": "string"}]}),
        json!({"allOf": [{"$ref": "#"}], "properties": {"a": {"type": "integer"}}}),
        json!({"not": {"$ref": "#"}}),
        json!({"type": "array", "items": {"$ref": "#"}}),
    ] {
        for args in [json!(1), json!("x"), json!({"a": "1"}), json!([[["1"]]]), json!(null)] {
            let result = coerce_and_validate(&schema, &args, &TestRegex);
            assert!(result.is_ok() || result.as_ref().is_err_and(|e| !e.is_empty()), "{schema} {args}");
            assert_eq!(schema_problem(&schema, &TestRegex), None, "{schema}");
        }
    }
    assert_eq!(coerce_and_validate(&json!({"$ref": "#"}), &json!(1), &TestRegex), Err(too_deep()));
    // A recursive tree of ordinary depth is no problem.
    let tree = json!({"$defs": {"t": {"type": "object", "properties": {"v": {"type": "integer"},
        "kids": {"type": "array", "items": {"$ref": "#/$defs/t"}}}}}, "$ref": "#/$defs/t"});
    let value = nested(40, json!({"v": "1"}), |v| json!({"v": "2", "kids": [v]}));
    let want = nested(40, json!({"v": 1}), |v| json!({"v": 2, "kids": [v]}));
    assert_eq!(coerce_and_validate(&tree, &value, &TestRegex), Ok(want));
}

#[test]
fn recursive_unions_explain_the_deepest_failure() {
    // Every level fails every branch. (Coercing this is exponential in the depth here as in the reference, whose
    // memo is also off across a cut re-entry; the check and the explanation are memoized.)
    let schema = json!({"$defs": {"n": {"anyOf": [
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}, "required": ["a"]},
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}, "b": {"type": "string"}}, "required": ["b"]},
        {"type": "array", "items": {"$ref": "#/$defs/n"}}]}}, "$ref": "#/$defs/n"});
    let value = nested(8, json!(5), |v| json!({"a": v}));
    assert_eq!(answer(&schema, &value), "a.a.a.a.a.a.a.a: expected object, got integer");
}

struct Strict;
impl PatternMatcher for Strict {
    fn is_match(&self, pattern: &str, text: &str) -> Option<bool> {
        TestRegex.is_match(pattern, text)
    }
    fn pattern_error(&self, pattern: &str) -> Option<String> {
        Some(format!("Invalid regular expression: /{pattern}/: Unterminated group"))
    }
    fn is_regex(&self, text: &str) -> bool {
        !text.contains("\\-")
    }
    fn url_can_parse(&self, text: &str) -> Option<bool> {
        Some(text.starts_with("x:"))
    }
}

#[test]
fn schema_problems_are_what_compile_throws() {
    let cases = [
        (json!({"properties": {"a": 5}}), Some("A schema must be an object or a boolean, got 5")),
        (json!({"items": "x"}), Some("A schema must be an object or a boolean, got \"x\"")),
        (json!({"not": null}), Some("A schema must be an object or a boolean, got null")),
        (json!({"anyOf": [{}, [1, {"a": 2}]]}), Some("A schema must be an object or a boolean, got [1,{\"a\":2}]")),
        (json!({"properties": {"a": {"$ref": "#/properties/a/minimum"}}}), None),
        (
            json!({"properties": {"a": {"minimum": 5, "$ref": "#/properties/a/minimum"}}}),
            Some("A schema must be an object or a boolean, got 5"),
        ),
        (json!({"type": "string", "pattern": "("}), Some("Invalid regular expression: /(/")),
        (json!({"patternProperties": {"[": {}}}), Some("Invalid regular expression: /[/")),
        (json!(true), Some("Invalid value used as weak map key")),
        (json!({"$defs": {"unused": 5}, "type": "object"}), None),
        (json!({"anyOf": [{"const": 1}, {"const": "a"}]}), None),
        (json!({"if": 5}), None),
        (json!({"$ref": "#/$defs/missing"}), None),
    ];
    for (schema, want) in cases {
        assert_eq!(schema_problem(&schema, &TestRegex).as_deref(), want, "{schema}");
    }
    assert_eq!(
        schema_problem(&json!({"pattern": "("}), &Strict).as_deref(),
        Some("Invalid regular expression: /(/: Unterminated group")
    );
    let err = validate_tool_arguments("t", &json!({"properties": {"a": 5}}), &json!({}), &TestRegex).unwrap_err();
    assert_eq!(err, "A schema must be an object or a boolean, got 5");
}

#[test]
fn host_answers_regex_and_url_formats() {
    let regex = json!({"type": "string", "format": "regex"});
    assert!(coerce_and_validate(&regex, &json!("a\\-b"), &TestRegex).is_ok());
    assert!(coerce_and_validate(&regex, &json!("a\\-b"), &Strict).is_err());
    assert!(coerce_and_validate(&regex, &json!("("), &TestRegex).is_err());
    let url = json!({"type": "string", "format": "url"});
    assert!(coerce_and_validate(&url, &json!("x:y"), &Strict).is_ok());
    assert!(coerce_and_validate(&url, &json!("https://a.com"), &Strict).is_err());
    assert!(coerce_and_validate(&url, &json!("https://a.com:8080/x?y#z"), &TestRegex).is_ok());
    assert!(coerce_and_validate(&url, &json!("mailto:a@b"), &TestRegex).is_ok());
    for bad in ["https://", "no scheme", "http://a b", "http://a.com:99999", "1http://x"] {
        assert!(coerce_and_validate(&url, &json!(bad), &TestRegex).is_err(), "{bad}");
    }
}

#[test]
fn js_numbers_in_messages() {
    assert_eq!(js_number_to_string(1.5), "1.5");
    assert_eq!(js_number_to_string(1e21), "1e+21");
    assert_eq!(prop(r#"{"type":"number","minimum":1.5}"#, "1"), "v: expected >= 1.5");
    assert_eq!(prop(r#"{"enum":[1.0,2e21,-0.0]}"#, "3"), "v: expected one of [1,2e+21,0]");
    assert_eq!(prop(r#"{"const":[1.0,"\u0007"]}"#, "3"), r#"v: expected [1,"\u0007"]"#);
}

use serde_json::json;

mod never_panics {
    use proptest::prelude::*;
    use serde_json::{Map, Value};

    use super::super::tests_support::TestRegex;
    use super::super::*;

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            (-5i64..50).prop_map(Value::from),
            prop::sample::select(vec![0.5, -1.5, 1e21, 1e-7, 3.0, f64::MAX, 5e-324]).prop_map(Value::from),
            prop::sample::select(vec![
                "",
                "x",
                "42",
                "42.7",
                "true",
                "null",
                "0x10",
                "12n",
                "#",
                "#/$defs/a",
                "#/properties/a",
                "^a",
                "(",
                "[",
                "a/b",
                "~",
                "string",
                "number",
                "integer",
                "object",
                "array",
                "boolean",
                "email",
                "date",
                "uri",
            ])
            .prop_map(Value::from),
        ]
    }

    /// Any JSON value, biased towards schema keywords as object keys, so generated values are often odd schemas.
    fn value() -> impl Strategy<Value = Value> {
        let keys = prop::sample::select(vec![
            "type",
            "properties",
            "required",
            "items",
            "prefixItems",
            "additionalProperties",
            "patternProperties",
            "anyOf",
            "oneOf",
            "allOf",
            "not",
            "if",
            "then",
            "else",
            "enum",
            "const",
            "$ref",
            "$defs",
            "$id",
            "$anchor",
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "multipleOf",
            "minLength",
            "maxLength",
            "pattern",
            "format",
            "minItems",
            "maxItems",
            "uniqueItems",
            "contains",
            "minContains",
            "maxContains",
            "minProperties",
            "propertyNames",
            "dependentRequired",
            "dependencies",
            "dependentSchemas",
            "additionalItems",
            "a",
            "b",
        ]);
        leaf().prop_recursive(5, 64, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec((keys.clone(), inner), 0..5).prop_map(|entries| {
                    Value::Object(entries.into_iter().map(|(k, v)| (k.to_string(), v)).collect::<Map<_, _>>())
                }),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

        #[test]
        fn e_8_4_1_any_schema_any_value(schema in value(), args in value()) {
            let result = coerce_and_validate(&schema, &args, &TestRegex);
            if let Err(errors) = &result {
                prop_assert!(!errors.is_empty());
                let text = format_validation_error("t", errors, &js_json_stringify_pretty(&args));
                prop_assert!(text.starts_with("Validation failed for tool \"t\":\n  - "));
            }
            let _ = schema_problem(&schema, &TestRegex);
            let _ = validate_tool_arguments("t", &schema, &args, &TestRegex);
        }

        #[test]
        fn js_number_text_round_trips(x in any::<f64>()) {
            let text = js_number_to_string(x);
            if x.is_finite() {
                prop_assert_eq!(super::super::number::js_string_to_number(&text), if x == 0.0 { 0.0 } else { x });
            }
        }
    }
}

#[test]
fn t_4_3_4_unlisted_formats_pass() {
    // The spec's list; the reference also checks idn-email, idn-hostname, iri, iri-reference, uri-template,
    // relative-json-pointer and json-pointer-uri-fragment.
    for format in ["idn-email", "idn-hostname", "iri", "iri-reference", "uri-template", "relative-json-pointer", "x"] {
        let schema = json!({"type": "string", "format": format});
        assert!(coerce_and_validate(&schema, &json!("%% not anything %%"), &TestRegex).is_ok(), "{format}");
    }
}

#[test]
fn issue_13_a_lone_surrogate_key_is_one_utf16_unit_when_union_branches_are_ranked() {
    // pi-schema blames the branch whose first error is deepest by `path.length`: "/\udfff" is 2 units, as "/é" is,
    // so the tie keeps the first branch.
    let schema = crate::core::text::wtf::parse(
        r#"{"oneOf":[{"properties":{"é":{}},"required":["é"],"additionalProperties":false},
                     {"properties":{"\udfff":{}},"required":["\udfff"],"additionalProperties":false}]}"#,
    )
    .unwrap();
    let errors = coerce_and_validate(&schema, &j(r#"{"x":1}"#), &TestRegex).unwrap_err();
    assert_eq!(errors.first().map(|e| e.path.as_str()), Some("é"));
}

/// Recorded from the reference (seed 44 of the differential): the union's only branch refers to itself, so checking
/// it never ends. pi-schema's coercion catches the overflow of that check (its `passes`), takes the branch as not
/// passing, and reports the `type` the value fails; ours stops the check at its depth limit and does the same.
#[test]
fn a_check_past_the_depth_limit_inside_coercion_is_a_branch_that_does_not_pass() {
    let schema =
        j(r##"{"type":"object","properties":{"a":{"anyOf":[{"$ref":"#anc","exclusiveMaximum":100,"$anchor":"anc"}],
        "type":"null","minimum":1}}}"##);
    let want = "Validation failed for tool \"t\":\n  - a: expected null, got string\n\nReceived arguments:\n{\n  \"a\": \"text\"\n}";
    assert_eq!(validate_tool_arguments("t", &schema, &j(r#"{"a":"text"}"#), &TestRegex).unwrap_err(), want);
    // Without the `type` the final check walks the branch itself: the reference overflows there too.
    let schema = j(r##"{"type":"object","properties":{"a":{"anyOf":[{"$ref":"#anc","$anchor":"anc"}]}}}"##);
    assert_eq!(validate_tool_arguments("t", &schema, &j(r#"{"a":5}"#), &TestRegex).unwrap_err(), TOO_DEEP);
}

/// Recorded from the reference (seed 155): pi-schema's `anyOf` tests its bare-type branches before the others, so a
/// branch that refers to its own union is never reached when a type branch passes; when none does, the check
/// overflows, which coercion catches (the branch does not pass) and `null` converts to the integer 0.
#[test]
fn any_of_tries_bare_type_branches_first() {
    let schema =
        j(r##"{"type":"object","properties":{"b":{"anyOf":[{"$ref":"#anc"},{"type":"integer"}],"$anchor":"anc"}}}"##);
    for (args, want) in [(r#"{"b":null}"#, r#"{"b":0}"#), (r#"{"b":0}"#, r#"{"b":0}"#), (r#"{"b":"5"}"#, r#"{"b":5}"#)]
    {
        assert_eq!(answer(&schema, &j(args)), want, "{args}");
    }
}
