//! Errors, messages and order (T-4.3.4–T-4.3.7): expectations recorded from the reference (pi-ai's `validateToolArguments`), one group per rule.
//! Each line: `[schema, arguments, expected]`, the coerced value as JSON or the error lines (`THROW` for a
//! schema problem). Regenerate with `node emit.mjs` in /work/scratch/validate/ref.

use super::tests_support::expect_all;

/// T-4.3.7 measured error example
#[test]
fn t_4_3_7_measured_error_example() {
    expect_all(
        r#"
[{"type":"object","properties":{"n":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}},"opt":{"type":"string"},"b":{"type":"boolean"}},"required":["n","tags","b"]},{"n":"ten","extra":1},"tags: missing\nb: missing\nn: expected integer, got string"]
"#,
    );
}

/// T-4.3.5 type messages
#[test]
fn t_4_3_5_type_messages() {
    expect_all(
        r#"
[{"type":"integer"},"x","root: expected integer, got string"]
[{"type":"integer"},1.5,"1"]
[{"type":"string"},[1],"root: expected string, got array"]
[{"type":"string"},{"a":1},"root: expected string, got object"]
[{"type":["integer","null"]},"x","root: expected integer or null, got string"]
[{"type":"number"},"x","root: expected number, got string"]
[{"type":"boolean"},"maybe","root: expected boolean, got string"]
[{"type":"object"},3,"root: expected object, got integer"]
[{"type":"object"},"3","root: expected object, got string"]
[{"type":"array"},{},"[{}]"]
[{"type":"null"},"x","root: expected null, got string"]
[{"type":[]},1,"root: expected , got integer"]
"#,
    );
}

/// T-4.3.5 enum and const messages
#[test]
fn t_4_3_5_enum_and_const_messages() {
    expect_all(
        r#"
[{"enum":["a","b"]},"c","root: expected one of [\"a\",\"b\"]"]
[{"enum":[1,2.5,null,true,"x",[1],{"a":1}]},"q","root: expected one of [1,2.5,null,true,\"x\",[1],{\"a\":1}]"]
[{"enum":[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24]},"q","root: expected one of [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19, ... and 5 more]"]
[{"const":{"a":[1,2.5,1e+21,"x"]}},"x","root: expected {\"a\":[1,2.5,1e+21,\"x\"]}"]
[{"const":"a\"b"},"c","root: expected \"a\\\"b\""]
[{"const":1e-7},2,"root: expected 1e-7"]
"#,
    );
}

/// T-4.3.5 string messages
#[test]
fn t_4_3_5_string_messages() {
    expect_all(
        r#"
[{"type":"string","minLength":3},"ab","root: expected at least 3 characters"]
[{"type":"string","maxLength":1},"ab","root: expected at most 1 characters"]
[{"type":"string","maxLength":1},"é","\"é\""]
[{"type":"string","minLength":2},"😀","root: expected at least 2 characters"]
[{"type":"string","pattern":"^[0-9]+$"},"12a","root: expected to match ^[0-9]+$"]
[{"type":"string","format":"email"},"nope","root: expected format email"]
[{"type":"string","format":"date"},"2021-02-29","root: expected format date"]
[{"type":"string","format":"unknown"},"x","\"x\""]
[{"type":"string","minLength":2.5},"ab","root: expected at least 2.5 characters"]
"#,
    );
}

/// T-4.3.5 number messages
#[test]
fn t_4_3_5_number_messages() {
    expect_all(
        r#"
[{"type":"number","minimum":1.5},1,"root: expected >= 1.5"]
[{"type":"number","maximum":1e+21},1e+22,"root: expected <= 1e+21"]
[{"type":"number","exclusiveMinimum":0},0,"root: expected > 0"]
[{"type":"number","exclusiveMaximum":10},10,"root: expected < 10"]
[{"type":"number","multipleOf":0.1},0.35,"root: expected a multiple of 0.1"]
[{"type":"number","multipleOf":0.0001},0.0075,"0.0075"]
[{"type":"number","minimum":2,"multipleOf":3},1,"root: expected >= 2\nroot: expected a multiple of 3"]
"#,
    );
}

/// T-4.3.5 object messages
#[test]
fn t_4_3_5_object_messages() {
    expect_all(
        r#"
[{"type":"object","required":["a","b"],"properties":{"a":{"type":"string"}}},{},"a: missing\nb: missing"]
[{"type":"object","properties":{"a":{}},"additionalProperties":false},{"a":1,"b":2,"x/y~z":3},"b: unknown field\nx/y~z: unknown field"]
[{"type":"object","minProperties":2},{"a":1},"root: expected at least 2 properties"]
[{"type":"object","maxProperties":1},{"a":1,"b":2},"root: expected at most 1 properties"]
[{"type":"object","propertyNames":{"maxLength":1}},{"ab":1,"c":2},"ab: invalid property name"]
[{"type":"object","dependentRequired":{"a":["b","c"]}},{"a":1},"b: required when a is present\nc: required when a is present"]
[{"type":"object","dependencies":{"a":["b"],"c":{"required":["d"]}}},{"a":1,"c":2},"b: required when a is present\nd: missing"]
[{"type":"object","dependentSchemas":{"a":{"required":["z"]}}},{"a":1},"z: missing"]
[{"type":"object","patternProperties":{"^n":{"type":"number"}},"additionalProperties":{"type":"string"}},{"n1":"x","s":5},"n1: expected number, got string"]
"#,
    );
}

/// T-4.3.5 array messages
#[test]
fn t_4_3_5_array_messages() {
    expect_all(
        r#"
[{"type":"array","minItems":2},[1],"root: expected at least 2 items"]
[{"type":"array","maxItems":1},[1,2],"root: expected at most 1 items"]
[{"type":"array","uniqueItems":true},[1,{"a":[1]},{"a":[1]}],"root: expected unique items"]
[{"type":"array","contains":{"type":"string"}},[1],"root: expected at least 1 matching item"]
[{"type":"array","contains":{"type":"string"},"minContains":2},["a"],"root: expected at least 2 matching items"]
[{"type":"array","contains":{"type":"string"},"maxContains":1},["a","b"],"root: expected between 1 and 1 matching items"]
[{"type":"array","contains":{"type":"string"},"minContains":0,"maxContains":2},["a","b","c"],"root: expected at most 2 matching items"]
[{"type":"array","contains":{"type":"string"},"minContains":1,"maxContains":1},[],"root: expected between 1 and 1 matching items"]
[{"type":"array","contains":{"type":"string"},"minContains":2,"maxContains":3},["a"],"root: expected between 2 and 3 matching items"]
[{"type":"array","items":{"type":"integer"}},[1,"x",2.5],"1: expected integer, got string"]
[{"type":"array","prefixItems":[{"type":"string"}],"items":false},["a",1],"1: no value is allowed here"]
"#,
    );
}

/// T-4.3.5 combinator messages
#[test]
fn t_4_3_5_combinator_messages() {
    expect_all(
        r##"
[{"not":{"type":"string"}},"x","root: must not match the schema in not"]
[{"oneOf":[{"type":"number"},{"type":"integer"}]},1,"root: matches more than one alternative"]
[false,1,"THROW Invalid value used as weak map key"]
[{"type":"object","properties":{"a":false}},{"a":1},"a: no value is allowed here"]
[{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}},{"a":1},"a: unresolved reference #/$defs/missing"]
[{"if":{"type":"string"},"then":{"minLength":2},"else":{"type":"number"}},"a","root: expected at least 2 characters"]
[{"if":{"type":"string"},"then":{"minLength":2},"else":{"type":"number"}},true,"root: expected number, got boolean"]
[{"allOf":[{"type":"number"},{"minimum":5}]},1,"root: expected >= 5"]
[{"anyOf":[{"type":"string"},{"type":"number","minimum":5}]},1,"\"1\""]
"##,
    );
}

/// T-4.3.6 order
#[test]
fn t_4_3_6_order() {
    expect_all(
        r#"
[{"type":"object","required":["z","a"],"properties":{"b":{"type":"string"},"a":{"type":"string"}},"additionalProperties":false,"minProperties":9,"dependentRequired":{"b":["y"]},"allOf":[{"required":["q"]}]},{"1":3,"c":1,"b":2},"z: missing\na: missing\n1: unknown field\nc: unknown field\nroot: expected at least 9 properties\ny: required when b is present\nq: missing"]
[{"type":"array","items":{"type":"string"},"minItems":5,"uniqueItems":true,"contains":{"type":"string"}},[1,1],"root: expected at least 5 items\nroot: expected unique items"]
[{"type":"string","enum":["abc"],"const":"abc","minLength":5,"pattern":"^z","not":{"type":"string"}},"x","root: expected one of [\"abc\"]\nroot: expected \"abc\"\nroot: expected at least 5 characters\nroot: expected to match ^z\nroot: must not match the schema in not"]
"#,
    );
}

/// T-4.3.6 tagged unions
#[test]
fn t_4_3_6_tagged_unions() {
    expect_all(
        r##"
[{"anyOf":[{"type":"object","properties":{"kind":{"const":"text"},"text":{"type":"string"}},"required":["kind","text"]},{"type":"object","properties":{"kind":{"const":"image"},"width":{"type":"integer","minimum":0}},"required":["kind","width"]}]},{"kind":"video"},"kind: expected one of [\"text\",\"image\"]"]
[{"anyOf":[{"type":"object","properties":{"kind":{"const":"text"},"text":{"type":"string"}},"required":["kind","text"]},{"type":"object","properties":{"kind":{"const":"image"},"width":{"type":"integer","minimum":0}},"required":["kind","width"]}]},{"kind":"image","width":-1},"width: expected >= 0"]
[{"oneOf":[{"$ref":"#/$defs/a"},{"$ref":"#/$defs/b"}],"$defs":{"a":{"type":"object","properties":{"t":{"const":1},"x":{"type":"string"}},"required":["t","x"]},"b":{"type":"object","properties":{"t":{"const":2}},"required":["t"]}}},{"t":1},"x: missing"]
[{"anyOf":[{"type":"object","properties":{"kind":{"const":"text"}}},{"type":"object","properties":{"kind":{"const":"image"}}}]},5,"root: expected object, got integer"]
"##,
    );
}

/// T-4.3.6 union blames the branch declaring most keys
#[test]
fn t_4_3_6_union_blames_the_branch_declaring_most_keys() {
    expect_all(
        r#"
[{"anyOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"type":"object","properties":{"b":{"type":"number"},"c":{"type":"number"}},"required":["b"]}]},{"b":"x","c":1},"b: expected number, got string"]
[{"anyOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"type":"object","properties":{"b":{"type":"object","properties":{"d":{"type":"number"}}}},"required":["q"]}]},{"b":{"d":"x"}},"q: missing\nb.d: expected number, got string"]
[{"anyOf":[{"type":"string"},{"type":"object","properties":{"x":{"type":"object","properties":{"y":{"type":"number"}}}}}]},{"x":{"y":"z"}},"x.y: expected number, got string"]
[{"anyOf":[{"type":"string","minLength":5},{"type":"string","pattern":"^z"}]},"ab","root: expected at least 5 characters"]
"#,
    );
}

/// T-4.3.4 $ref resolution
#[test]
fn t_4_3_4_ref_resolution() {
    expect_all(
        r##"
[{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"integer","minimum":3}}},{"a":1},"a: expected >= 3"]
[{"type":"object","properties":{"a":{"$ref":"#/definitions/x"}},"definitions":{"x":{"type":"string"}}},{"a":[]},"a: expected string, got array"]
[{"type":"object","properties":{"a":{"$anchor":"foo","type":"integer"},"b":{"$ref":"#foo"}}},{"b":"x"},"b: expected integer, got string"]
[{"type":"object","properties":{"a":{"$id":"#foo","type":"integer"},"b":{"$ref":"#foo"}}},{"b":"x"},"b: expected integer, got string"]
[{"$id":"http://a.com/s.json","type":"object","properties":{"b":{"$ref":"other.json"}},"$defs":{"x":{"$id":"other.json","type":"string","minLength":3}}},{"b":"x"},"b: expected at least 3 characters"]
[{"type":"object","properties":{"b":{"$ref":"#/$defs/a%20b"}},"$defs":{"a b":{"type":"string","minLength":3}}},{"b":"x"},"b: expected at least 3 characters"]
[{"type":"object","properties":{"b":{"$ref":"#/$defs/a~1b"}},"$defs":{"a/b":{"type":"string","minLength":3}}},{"b":"x"},"b: expected at least 3 characters"]
[{"type":"object","properties":{"b":{"$ref":"#/$defs/%zz"}}},{"b":"x"},"b: unresolved reference #/$defs/%zz"]
[{"type":"object","properties":{"b":{"$ref":"urn:x#/a"}}},{"b":"x"},"b: unresolved reference urn:x#/a"]
[{"type":"object","properties":{"b":{"$ref":"#/$defs/x","type":"string"}},"$defs":{"x":{"minLength":3}}},{"b":5},"b: expected at least 3 characters"]
[{"type":"object","properties":{"next":{"$ref":"#"},"v":{"type":"integer"}}},{"next":{"next":{"v":"x"}}},"next.next.v: expected integer, got string"]
[{"$id":"http://a.com/root.json","type":"object","properties":{"s":{"$id":"sub/s.json","type":"object","properties":{"self":{"$ref":"#"},"n":{"type":"integer"}}}}},{"s":{"self":{"n":"x"}}},"s.self.n: expected integer, got string"]
[{"$id":"http://a.com/root.json","type":"object","properties":{"r":{"$ref":"sub/s.json#/properties/n"}},"$defs":{"s":{"$id":"sub/s.json","properties":{"n":{"type":"integer","maximum":2}}}}},{"r":3},"r: expected <= 2"]
[{"$id":"urn:example:root","type":"object","properties":{"r":{"$ref":"#/$defs/x"},"q":{"$ref":"other"}},"$defs":{"x":{"type":"integer"}}},{"r":"y","q":1},"r: expected integer, got string\nq: unresolved reference other"]
[{"type":"object","properties":{"r":{"$ref":"#/$defs/x/items/0"},"s":{"$ref":"#/$defs/arr/1"}},"$defs":{"x":{"items":[{"type":"integer"}]},"arr":[{},{"type":"string"}]}},{"r":"x","s":1},"r: expected integer, got string"]
[{"type":"object","properties":{"r":{"$ref":"#/$defs/x"}},"$defs":{"x":{"$anchor":"a","$id":"#b","type":"integer"}}},{"r":"x"},"r: unresolved reference #/$defs/x"]
"##,
    );
}

/// T-4.3.5 path formatting
#[test]
fn t_4_3_5_path_formatting() {
    expect_all(
        r#"
[{"type":"object","properties":{"edits":{"type":"array","items":{"type":"object","properties":{"oldText":{"type":"string"}},"required":["oldText"]}}}},{"edits":[{"oldText":"a"},{}]},"edits.1.oldText: missing"]
[{"type":"object","properties":{"a/b":{"type":"object","properties":{"c~d":{"type":"string"}}}}},{"a/b":{"c~d":1}},"{\"a/b\":{\"c~d\":\"1\"}}"]
[{"type":"object","properties":{"":{"type":"string"}}},{"":1},"{\"\":\"1\"}"]
"#,
    );
}

/// T-4.3.6 other keys in JavaScript key order
#[test]
fn t_4_3_6_other_keys_in_javascript_key_order() {
    expect_all(
        r#"
[{"type":"object","properties":{"a":{}},"additionalProperties":false},{"2":4,"10":2,"b":1,"a":3,"z":5},"2: unknown field\n10: unknown field\nb: unknown field\nz: unknown field"]
[{"type":"object","properties":{"2":{"type":"string"},"b":{"type":"string"},"a":{"type":"string"}}},{"2":3,"a":1,"b":2},"{\"2\":\"3\",\"a\":\"1\",\"b\":\"2\"}"]
[{"type":"object","dependentRequired":{"1":["y"],"b":["x"]}},{"1":2,"b":1},"y: required when 1 is present\nx: required when b is present"]
"#,
    );
}

/// T-4.3.4 keyword edge cases
#[test]
fn t_4_3_4_keyword_edge_cases() {
    expect_all(
        r##"
[{"type":"object","required":["a",5,null]},{},"a: missing"]
[{"type":"object","dependentRequired":{"a":[1,"b"]}},{"1":2,"a":1},"b: required when a is present"]
[{"enum":[1]},1,"1"]
[{"const":{"a":1,"b":[1,2]}},{"b":[1,2],"a":1},"{\"b\":[1,2],\"a\":1}"]
[{"type":"array","uniqueItems":true},[1,1],"root: expected unique items"]
[{"type":"array","uniqueItems":true},[{"a":1,"b":2},{"b":2,"a":1}],"root: expected unique items"]
[{"type":"array","contains":{"type":"string"},"minContains":0},[],"[]"]
[{"if":{"type":"string"}},5,"5"]
[{"type":"string","minLength":-1,"maxLength":"3"},"abcd","\"abcd\""]
[{"type":"number","multipleOf":0},5,"root: expected a multiple of 0"]
[{"type":"number","multipleOf":1e-10},123456789.1234,"123456789.1234"]
[{"type":"integer","multipleOf":7},1e+21,"1e+21"]
[{"type":"number","minimum":"5","exclusiveMinimum":true},1,"1"]
[{"type":null},1,"root: expected , got integer"]
[{"type":["string",5,null]},true,"\"true\""]
[{"oneOf":[{"type":"string"},{"type":"number"}],"anyOf":[{"minimum":5}]},true,"\"true\""]
[{"properties":{"a":{"type":"string"}}},"not an object","\"not an object\""]
[{"items":{"type":"string"}},{},"0: expected string, got object"]
[{"type":"object","propertyNames":false},{"a":1},"a: invalid property name"]
[{"type":"object","additionalProperties":{"type":"integer"}},{"a":"x"},"a: expected integer, got string"]
[{"$dynamicRef":"#/$defs/x","$defs":{"x":{"type":"string"}}},5,"root: does not match the dynamically referenced schema"]
"##,
    );
}

/// T-4.3.6 tagged union variants
#[test]
fn t_4_3_6_tagged_union_variants() {
    expect_all(
        r#"
[{"oneOf":[{"type":"object","properties":{"t":{"const":"a"},"v":{"type":"string"}}},{"type":"object","properties":{"t":{"const":"b"},"v":{"type":"number"}}}]},{"t":"b","v":"x"},"v: expected number, got string"]
[{"anyOf":[{"type":"object","properties":{"t":{"const":1},"v":{"type":"string"}}},{"type":"object","properties":{"t":{"const":"1"},"v":{"type":"number"}}}]},{"t":2},"t: expected one of [1,\"1\"]"]
[{"anyOf":[{"type":"object","properties":{"t":{"const":null}}},{"type":"object","properties":{"t":{"const":false}}}]},{},"{}"]
[{"anyOf":[{"type":"object","properties":{"t":{"const":"a"}}},{"type":"object","properties":{"t":{"const":"a"}}}]},{"t":"b"},"t: expected \"a\""]
[{"anyOf":[{"type":"object","properties":{"t":{"const":"a"},"n":{"const":1}},"required":["n"]},{"type":"object","properties":{"t":{"const":"b"},"n":{"const":2}}}]},{"t":"a"},"n: missing"]
"#,
    );
}

/// T-4.3.4 formats
#[test]
fn t_4_3_4_formats() {
    expect_all(
        r#"
[{"type":"object","properties":{"s":{"type":"string","format":"date"}}},{"s":"2024-02-29"},"{\"s\":\"2024-02-29\"}"]
[{"type":"object","properties":{"s":{"type":"string","format":"date"}}},{"s":"2023-02-29"},"s: expected format date"]
[{"type":"object","properties":{"s":{"type":"string","format":"date"}}},{"s":"2024-13-01"},"s: expected format date"]
[{"type":"object","properties":{"s":{"type":"string","format":"date-time"}}},{"s":"2024-01-01T10:00:00Z"},"{\"s\":\"2024-01-01T10:00:00Z\"}"]
[{"type":"object","properties":{"s":{"type":"string","format":"date-time"}}},{"s":"2024-01-01t10:00:00.5+05:30"},"{\"s\":\"2024-01-01t10:00:00.5+05:30\"}"]
[{"type":"object","properties":{"s":{"type":"string","format":"date-time"}}},{"s":"2024-01-01 10:00:00Z"},"s: expected format date-time"]
[{"type":"object","properties":{"s":{"type":"string","format":"time"}}},{"s":"23:59:60Z"},"{\"s\":\"23:59:60Z\"}"]
[{"type":"object","properties":{"s":{"type":"string","format":"time"}}},{"s":"23:59:60+01:00"},"s: expected format time"]
[{"type":"object","properties":{"s":{"type":"string","format":"time"}}},{"s":"10:00:00"},"s: expected format time"]
[{"type":"object","properties":{"s":{"type":"string","format":"duration"}}},{"s":"P1Y2M3DT4H5M6S"},"{\"s\":\"P1Y2M3DT4H5M6S\"}"]
[{"type":"object","properties":{"s":{"type":"string","format":"duration"}}},{"s":"P1Y3D"},"s: expected format duration"]
[{"type":"object","properties":{"s":{"type":"string","format":"duration"}}},{"s":"P2W"},"{\"s\":\"P2W\"}"]
[{"type":"object","properties":{"s":{"type":"string","format":"duration"}}},{"s":"PT"},"s: expected format duration"]
[{"type":"object","properties":{"s":{"type":"string","format":"email"}}},{"s":"a.b+c@d-e.fg"},"{\"s\":\"a.b+c@d-e.fg\"}"]
[{"type":"object","properties":{"s":{"type":"string","format":"email"}}},{"s":"\"x y\"@z.com"},"{\"s\":\"\\\"x y\\\"@z.com\"}"]
[{"type":"object","properties":{"s":{"type":"string","format":"email"}}},{"s":"a@[IPv6:::1]"},"{\"s\":\"a@[IPv6:::1]\"}"]
[{"type":"object","properties":{"s":{"type":"string","format":"email"}}},{"s":"a..b@c.d"},"s: expected format email"]
[{"type":"object","properties":{"s":{"type":"string","format":"hostname"}}},{"s":"a-b.c0"},"{\"s\":\"a-b.c0\"}"]
[{"type":"object","properties":{"s":{"type":"string","format":"hostname"}}},{"s":"-a.b"},"s: expected format hostname"]
[{"type":"object","properties":{"s":{"type":"string","format":"hostname"}}},{"s":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"},"s: expected format hostname"]
[{"type":"object","properties":{"s":{"type":"string","format":"hostname"}}},{"s":"xn--bcher-kva.de"},"{\"s\":\"xn--bcher-kva.de\"}"]
[{"type":"object","properties":{"s":{"type":"string","format":"hostname"}}},{"s":"ab--c"},"s: expected format hostname"]
[{"type":"object","properties":{"s":{"type":"string","format":"ipv4"}}},{"s":"255.255.255.255"},"{\"s\":\"255.255.255.255\"}"]
[{"type":"object","properties":{"s":{"type":"string","format":"ipv4"}}},{"s":"256.1.1.1"},"s: expected format ipv4"]
[{"type":"object","properties":{"s":{"type":"string","format":"ipv4"}}},{"s":"01.1.1.1"},"s: expected format ipv4"]
[{"type":"object","properties":{"s":{"type":"string","format":"ipv6"}}},{"s":"::"},"{\"s\":\"::\"}"]
[{"type":"object","properties":{"s":{"type":"string","format":"ipv6"}}},{"s":"1:2:3:4:5:6:7:8"},"{\"s\":\"1:2:3:4:5:6:7:8\"}"]
[{"type":"object","properties":{"s":{"type":"string","format":"ipv6"}}},{"s":"1:2:3:4:5:6:7:8:9"},"s: expected format ipv6"]
[{"type":"object","properties":{"s":{"type":"string","format":"ipv6"}}},{"s":"::ffff:10.0.0.1"},"{\"s\":\"::ffff:10.0.0.1\"}"]
[{"type":"object","properties":{"s":{"type":"string","format":"ipv6"}}},{"s":"fe80::1%eth0"},"s: expected format ipv6"]
[{"type":"object","properties":{"s":{"type":"string","format":"uri"}}},{"s":"https://u@h.com:8080/p/a?q=1#f"},"{\"s\":\"https://u@h.com:8080/p/a?q=1#f\"}"]
[{"type":"object","properties":{"s":{"type":"string","format":"uri"}}},{"s":"urn:isbn:0451450523"},"{\"s\":\"urn:isbn:0451450523\"}"]
[{"type":"object","properties":{"s":{"type":"string","format":"uri"}}},{"s":"/relative"},"s: expected format uri"]
[{"type":"object","properties":{"s":{"type":"string","format":"uri"}}},{"s":"http://[::1]/"},"{\"s\":\"http://[::1]/\"}"]
[{"type":"object","properties":{"s":{"type":"string","format":"uri"}}},{"s":"a b:c"},"s: expected format uri"]
[{"type":"object","properties":{"s":{"type":"string","format":"uri-reference"}}},{"s":"../a?b#c"},"{\"s\":\"../a?b#c\"}"]
[{"type":"object","properties":{"s":{"type":"string","format":"uri-reference"}}},{"s":"a:b:c"},"{\"s\":\"a:b:c\"}"]
[{"type":"object","properties":{"s":{"type":"string","format":"uri-reference"}}},{"s":"%zz"},"s: expected format uri-reference"]
[{"type":"object","properties":{"s":{"type":"string","format":"uuid"}}},{"s":"123e4567-E89B-12d3-a456-426614174000"},"{\"s\":\"123e4567-E89B-12d3-a456-426614174000\"}"]
[{"type":"object","properties":{"s":{"type":"string","format":"uuid"}}},{"s":"123e4567e89b12d3a456426614174000"},"s: expected format uuid"]
[{"type":"object","properties":{"s":{"type":"string","format":"json-pointer"}}},{"s":"/a~0b/c~1d"},"{\"s\":\"/a~0b/c~1d\"}"]
[{"type":"object","properties":{"s":{"type":"string","format":"json-pointer"}}},{"s":"a"},"s: expected format json-pointer"]
[{"type":"object","properties":{"s":{"type":"string","format":"json-pointer"}}},{"s":"/a~"},"s: expected format json-pointer"]
[{"type":"object","properties":{"s":{"type":"string","format":"regex"}}},{"s":"^[a-z]+$"},"{\"s\":\"^[a-z]+$\"}"]
[{"type":"object","properties":{"s":{"type":"string","format":"regex"}}},{"s":"(unclosed"},"s: expected format regex"]
[{"type":"object","properties":{"s":{"type":"string","format":"url"}}},{"s":"https://example.com/x"},"{\"s\":\"https://example.com/x\"}"]
[{"type":"object","properties":{"s":{"type":"string","format":"url"}}},{"s":"http://"},"s: expected format url"]
[{"type":"object","properties":{"s":{"type":"string","format":"whatever"}}},{"s":"x"},"{\"s\":\"x\"}"]
"#,
    );
}
