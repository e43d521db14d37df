//! Coercion (T-4.3.3): expectations recorded from the reference (pi-ai's `validateToolArguments`), one group per rule.
//! Each line: `[schema, arguments, expected]`, the coerced value as JSON or the error lines (`THROW` for a
//! schema problem). Regenerate with `node emit.mjs` in /work/scratch/validate/ref.

use super::tests_support::expect_all;

/// T-4.3.7 measured coercion example
#[test]
fn t_4_3_7_measured_coercion_example() {
    expect_all(
        r#"
[{"type":"object","properties":{"n":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}},"opt":{"type":"string"},"b":{"type":"boolean"}},"required":["n","tags","b"]},{"n":"42.7","tags":"one","opt":null,"b":"true"},"{\"n\":42,\"tags\":[\"one\"],\"b\":true}"]
"#,
    );
}

/// T-4.3.3 pass 1 drops optional nulls
#[test]
fn t_4_3_3_pass_1_drops_optional_nulls() {
    expect_all(
        r##"
[{"type":"object","properties":{"a":{"type":"string"}}},{"a":null},"{}"]
[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"a":null},"{\"a\":\"null\"}"]
[{"type":"object","properties":{"a":{"type":["string","null"]}}},{"a":null},"{\"a\":null}"]
[{"type":"object","properties":{"a":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":"string"}}},{"a":null},"{\"a\":\"null\"}"]
[{"type":"object","properties":{"a":false}},{"a":null},"{}"]
[{"type":"object","properties":{"a":true}},{"a":null},"{\"a\":null}"]
[{"type":"object","properties":{"o":{"type":"object","properties":{"x":{"type":"number"}}}}},{"o":{"x":null,"y":null}},"{\"o\":{\"y\":null}}"]
[{"type":"object","additionalProperties":{"type":"object","properties":{"x":{"type":"number"}}}},{"k":{"x":null},"j":null},"j: expected object, got null"]
[{"type":"array","items":{"type":"object","properties":{"x":{"type":"integer"}}}},[{"x":null},{"x":1}],"[{},{\"x\":1}]"]
[{"type":"object","patternProperties":{"^p":{"type":"object","properties":{"x":{"type":"string"}}}}},{"p1":{"x":null},"q":null},"{\"p1\":{},\"q\":null}"]
"##,
    );
}

/// T-4.3.3 pass 2 string
#[test]
fn t_4_3_3_pass_2_string() {
    expect_all(
        r#"
[{"type":"string"},5,"\"5\""]
[{"type":"string"},1.5,"\"1.5\""]
[{"type":"string"},true,"\"true\""]
[{"type":"string"},null,"\"null\""]
[{"type":"string"},1e+21,"\"1e+21\""]
[{"type":"string"},[1],"root: expected string, got array"]
[{"type":"string"},{},"root: expected string, got object"]
"#,
    );
}

/// T-4.3.3 pass 2 number
#[test]
fn t_4_3_3_pass_2_number() {
    expect_all(
        r#"
[{"type":"number"},"","0"]
[{"type":"number"}," 12 ","12"]
[{"type":"number"},"0x10","16"]
[{"type":"number"},"1e3","1000"]
[{"type":"number"},"Infinity","root: expected number, got string"]
[{"type":"number"},"TRUE","1"]
[{"type":"number"},"False","0"]
[{"type":"number"},"12n","12"]
[{"type":"number"},"-12n","-12"]
[{"type":"number"},"9007199254740993n","root: expected number, got string"]
[{"type":"number"},true,"1"]
[{"type":"number"},false,"0"]
[{"type":"number"},null,"0"]
[{"type":"number"},"abc","root: expected number, got string"]
[{"type":"number"},"0b11","3"]
[{"type":"number"},[1],"root: expected number, got array"]
"#,
    );
}

/// T-4.3.3 pass 2 integer
#[test]
fn t_4_3_3_pass_2_integer() {
    expect_all(
        r#"
[{"type":"integer"},"42.7","42"]
[{"type":"integer"},3.5,"3"]
[{"type":"integer"},-0.5,"0"]
[{"type":"integer"},"-3.9","-3"]
[{"type":"integer"},"true","1"]
[{"type":"integer"},null,"0"]
[{"type":"integer"},"ten","root: expected integer, got string"]
[{"type":"integer"},1e+21,"1e+21"]
"#,
    );
}

/// T-4.3.3 pass 2 boolean
#[test]
fn t_4_3_3_pass_2_boolean() {
    expect_all(
        r#"
[{"type":"boolean"},"true","true"]
[{"type":"boolean"},"TRUE","true"]
[{"type":"boolean"},"False","false"]
[{"type":"boolean"},"1","true"]
[{"type":"boolean"},"0","false"]
[{"type":"boolean"},1,"true"]
[{"type":"boolean"},0,"false"]
[{"type":"boolean"},2,"root: expected boolean, got integer"]
[{"type":"boolean"},null,"false"]
[{"type":"boolean"},"yes","root: expected boolean, got string"]
"#,
    );
}

/// T-4.3.3 pass 2 null
#[test]
fn t_4_3_3_pass_2_null() {
    expect_all(
        r#"
[{"type":"null"},"null","null"]
[{"type":"null"},"NULL","null"]
[{"type":"null"},"undefined","null"]
[{"type":"null"},"","null"]
[{"type":"null"},"0","null"]
[{"type":"null"},0,"null"]
[{"type":"null"},false,"null"]
[{"type":"null"},true,"root: expected null, got boolean"]
[{"type":"null"},"x","root: expected null, got string"]
"#,
    );
}

/// T-4.3.3 pass 2 array wraps
#[test]
fn t_4_3_3_pass_2_array_wraps() {
    expect_all(
        r#"
[{"type":"array","items":{"type":"string"}},null,"[\"null\"]"]
[{"type":"array","items":{"type":"integer"}},"5","[5]"]
[{"type":"array"},5,"[5]"]
[{"type":"array","items":{"type":"object","properties":{"a":{"type":"number"}}}},{"a":"1"},"[{\"a\":1}]"]
[{"type":"array","prefixItems":[{"type":"number"}]},"5","root: expected array, got string"]
[{"type":"array","prefixItems":[{"type":"number"},{"type":"string"}],"items":{"type":"boolean"}},["1",2,"true"],"[1,\"2\",true]"]
[{"type":"array","items":[{"type":"number"}],"additionalItems":{"type":"string"}},["1",2],"1: expected string, got integer"]
[{"items":{"type":"string"}},5,"[\"5\"]"]
"#,
    );
}

/// T-4.3.3 pass 2 object members
#[test]
fn t_4_3_3_pass_2_object_members() {
    expect_all(
        r#"
[{"type":"object","properties":{"a":{"type":"number"}},"patternProperties":{"^a":{"type":"string"}}},{"a":"5"},"a: expected number, got string"]
[{"type":"object","patternProperties":{"^n":{"type":"number"}},"additionalProperties":{"type":"boolean"}},{"n1":"5","x":"true"},"{\"n1\":5,\"x\":true}"]
[{"properties":{"a":{"type":"integer"}}},{"a":"7"},"{\"a\":7}"]
"#,
    );
}

/// T-4.3.3 pass 2 const and enum
#[test]
fn t_4_3_3_pass_2_const_and_enum() {
    expect_all(
        r#"
[{"const":5},"5","5"]
[{"const":"5"},5,"\"5\""]
[{"const":true},"TRUE","true"]
[{"const":null},"null","root: expected null"]
[{"const":5},"6","root: expected 5"]
[{"enum":["a",1,true]},"1","1"]
[{"enum":["a",1,true]},"true","1"]
[{"enum":[null,0]},"null","root: expected one of [null,0]"]
[{"enum":[2,3]},"3.0","3"]
[{"type":"string","enum":["1","2"]},2,"\"2\""]
[{"enum":[{"a":1}]},{"a":1},"{\"a\":1}"]
"#,
    );
}

/// T-4.3.3 pass 2 unions
#[test]
fn t_4_3_3_pass_2_unions() {
    expect_all(
        r#"
[{"anyOf":[{"type":"integer"},{"type":"boolean"}]},"5","5"]
[{"anyOf":[{"type":"boolean"},{"type":"integer"}]},"1","true"]
[{"anyOf":[{"type":"string"},{"type":"number"}]},5,"5"]
[{"oneOf":[{"type":"number"},{"type":"null"}]},"null","null"]
[{"anyOf":[{"type":"number"},{"type":"null"}]},"x","root: expected number, got string"]
[{"anyOf":[{"type":"object","properties":{"k":{"const":"a"},"v":{"type":"number"}},"required":["k"]},{"type":"object","properties":{"k":{"const":"b"},"v":{"type":"boolean"}},"required":["k"]}]},{"k":"b","v":"true"},"{\"k\":\"b\",\"v\":true}"]
[{"anyOf":[{"type":"integer"}],"properties":{"a":{"type":"number"}}},{"a":"5"},"root: expected integer, got object"]
"#,
    );
}

/// T-4.3.3 pass 2 allOf
#[test]
fn t_4_3_3_pass_2_allof() {
    expect_all(
        r#"
[{"allOf":[{"type":"number"},{"minimum":1}]},"5","5"]
[{"allOf":[{"properties":{"a":{"type":"integer"}}},{"properties":{"b":{"type":"boolean"}}}]},{"a":"1","b":"false"},"{\"a\":1,\"b\":false}"]
"#,
    );
}

/// T-4.3.3 pass 3 type arrays
#[test]
fn t_4_3_3_pass_3_type_arrays() {
    expect_all(
        r#"
[{"type":["integer","null"]},"5","5"]
[{"type":["integer","null"]},"","null"]
[{"type":["integer","null"]},"null","root: expected integer or null, got string"]
[{"type":["integer","null"]},"42.7","root: expected integer or null, got string"]
[{"type":["number","string"]},true,"1"]
[{"type":["string","number"]},true,"\"true\""]
[{"type":["string","boolean"]},null,"\"\""]
[{"type":["boolean","string"]},null,"false"]
[{"type":["integer","boolean"]},"true","true"]
[{"type":["number","null"]}," ","root: expected number or null, got string"]
[{"type":["boolean","null"]},"TRUE","root: expected boolean or null, got string"]
[{"type":["boolean","null"]},1,"true"]
[{"type":["null","string"]},0,"null"]
[{"type":["integer","string"]},3.5,"\"3.5\""]
[{"type":["object","null"],"properties":{"a":{"type":["number","null"]}}},{"a":"2"},"{\"a\":2}"]
[{"type":["array","null"],"items":{"type":["integer","null"]}},["1",""],"[1,null]"]
[{"type":"integer","enum":[1,2]},"2","2"]
[{"type":"number","anyOf":[{"minimum":0}]},"3","3"]
"#,
    );
}

/// T-4.3.3 recursion through $ref terminates
#[test]
fn t_4_3_3_recursion_through_ref_terminates() {
    expect_all(
        r##"
[{"$ref":"#/$defs/n","$defs":{"n":{"type":"object","properties":{"v":{"type":"integer"},"next":{"$ref":"#/$defs/n"}}}}},{"v":"1","next":{"v":"2","next":{"v":"x"}}},"next.next.v: expected integer, got string"]
[{"$defs":{"t":{"anyOf":[{"type":"string"},{"type":"array","items":{"$ref":"#/$defs/t"}}]}},"$ref":"#/$defs/t"},5,"\"5\""]
[{"$defs":{"t":{"type":"array","items":{"$ref":"#/$defs/t"}}},"$ref":"#/$defs/t"},5,"0: expected array, got integer"]
"##,
    );
}

/// T-4.3.3 "in any case" is JavaScript's `toLowerCase()`: only ASCII letters fold to these words (U+0130 lowers to
/// `i` + U+0307, fullwidth letters stay fullwidth), and U+212A KELVIN SIGN lowers to `k` in an `xn--` label.
#[test]
fn t_4_3_3_case_folding_is_to_lower_case() {
    expect_all(
        "
[{\"type\":\"boolean\"},\"tRuE\",\"true\"]
[{\"type\":\"boolean\"},\"\u{ff34}\u{ff32}\u{ff35}\u{ff25}\",\"root: expected boolean, got string\"]
[{\"type\":\"number\"},\"fALSE\",\"0\"]
[{\"type\":\"null\"},\"UNDEFINED\",\"null\"]
[{\"type\":\"null\"},\"nuLL\",\"null\"]
[{\"type\":\"null\"},\"und\u{130}fined\",\"root: expected null, got string\"]
[{\"type\":\"string\",\"format\":\"hostname\"},\"XN--BCHER-KVA.de\",\"\\\"XN--BCHER-KVA.de\\\"\"]
[{\"type\":\"string\",\"format\":\"hostname\"},\"xn--bcher-\u{212a}va.de\",\"\\\"xn--bcher-\u{212a}va.de\\\"\"]
[{\"type\":\"string\",\"format\":\"hostname\"},\"xn--bcher-\u{130}va.de\",\"root: expected format hostname\"]
",
    );
}
