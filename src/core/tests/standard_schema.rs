//! T-4.3.8 (issue 42): tools whose `parameters` is a Standard Schema: declared by their converter's JSON Schema,
//! validated by their own `validate` (awaited), its `value` what `execute` gets; unreadable schemas refused by name.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use super::support::*;
use crate::core::args::{ArgError, Checker};
use crate::core::host::Host;
use crate::core::test_host::{TV, TestHost};
use futures::FutureExt;
use serde_json::json;
use std::cell::RefCell;
use std::rc::Rc;

/// A Standard Schema of `{ n: number }` whose output doubles `n`; `validate` answers after a virtual sleep when
/// `asynchronous`. The converter records the options it was given.
fn doubling_schema(asynchronous: bool, asked: Rc<RefCell<Vec<serde_json::Value>>>) -> TV {
    let answer = |value: &TV| -> TV {
        match value.get("n").as_num() {
            Some(n) => TV::obj(&[("value", TV::from_json(&json!({"n": n * 2.0})))]),
            None => TV::from_json(&json!({"issues": [
                {"message": "Expected number", "path": ["n"]},
                {"message": "Required", "path": [{"key": "deep"}, 0.0]},
                {"message": "Bad input"},
            ]})),
        }
    };
    let validate = if asynchronous {
        TV::async_func(move |h, _this, args| {
            let (sleep, answer) = (h.sleep(5.0), answer(&args[0]));
            async move {
                sleep.await;
                Ok(answer)
            }
            .boxed_local()
        })
    } else {
        TV::func(move |_h, _this, args| Ok(answer(&args[0])))
    };
    let input = TV::func(move |_h, _this, args| {
        asked.borrow_mut().push(args[0].to_json());
        Ok(TV::from_json(&json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"],
        })))
    });
    let props = TV::obj(&[
        ("version", TV::num(1.0)),
        ("vendor", TV::str("test")),
        ("validate", validate),
        ("jsonSchema", TV::obj(&[("input", input.clone()), ("output", input)])),
    ]);
    TV::obj(&[("~standard", props)])
}

fn standard_run(asynchronous: bool) {
    let asked = Rc::new(RefCell::new(Vec::new()));
    let got = Rc::new(RefCell::new(Vec::new()));
    let g = got.clone();
    let exec = TV::func(move |_h, _this, args| {
        g.borrow_mut().push(args[1].to_json());
        Ok(ok_result("done"))
    });
    let t = tool_with("double", exec, &[("parameters", doubling_schema(asynchronous, asked.clone()))]);
    let w = World::with(vec![
        reply_calls(vec![call("c1", "double", json!({"n": 2})), call("c2", "double", json!({"n": "x"}))]),
        reply("ok"),
    ]);
    let result = w.prompt(vec![user("go")], ctx_tools(vec![], vec![t]), config(&[]));
    // Declared by the converter's JSON Schema for draft-07, without `$schema`.
    assert_eq!(
        result.at(0).get("toolsAdded").to_json(),
        json!([{"name": "double", "description": "double tool",
                "parameters": {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]}}])
    );
    assert_eq!(asked.borrow()[0], json!({"target": "draft-07"}));
    // `execute` gets the schema's output; the issues are the library's validation error.
    assert_eq!(*got.borrow(), vec![json!({"n": 4})]);
    assert_eq!(first_text(&w.end_of("c1").get("result")), "done");
    assert_eq!(w.end_of("c2").get("isError").as_bool(), Some(true));
    assert_eq!(
        first_text(&w.end_of("c2").get("result")),
        "Validation failed for tool \"double\":\n  - n: Expected number\n  - deep.0: Required\n  - root: Bad input\n\n\
         Received arguments:\n{\n  \"n\": \"x\"\n}"
    );
    // The model's arguments are not changed.
    assert_eq!(w.events("tool_execution_start")[0].get("args").to_json(), json!({"n": 2}));
}

#[test]
fn t_4_3_8_a_standard_schema_declares_its_json_schema_and_validates_with_its_own_validate() {
    standard_run(false);
}

#[test]
fn t_4_3_8_an_asynchronous_validate_is_awaited() {
    standard_run(true);
}

fn check_tool(h: &TestHost, parameters: TV) -> Result<(), String> {
    let t = tool_with("weather", exec_ok("x"), &[("parameters", parameters)]);
    match Checker::new(h, "agentLoop").tool(&t, "context.tools[0]") {
        Ok(()) => Ok(()),
        Err(ArgError::Type(message)) => Err(message),
        Err(ArgError::Thrown(e)) => Err(format!("thrown: {e:?}")),
    }
}

#[test]
fn t_4_3_8_schemas_we_cannot_read_are_refused_naming_the_tool() {
    let h = TestHost::new();
    let no_converter = TV::obj(&[(
        "~standard",
        TV::obj(&[("version", TV::num(1.0)), ("vendor", TV::str("valibot")), ("validate", exec_ok("x"))]),
    )]);
    assert_eq!(
        check_tool(&h, no_converter),
        Err("agentLoop: context.tools[0].parameters (tool \"weather\") is a Standard Schema of \"valibot\" without a \
             JSON Schema converter (~standard.jsonSchema), and the model needs JSON Schema: pass a schema that has one \
             (zod 4.2 or later, ArkType 2.1.28 or later, Valibot through toStandardJsonSchema of \
             @valibot/to-json-schema) or JSON Schema"
            .into())
    );
    // A function that is not a Standard Schema (a validator of another library).
    assert_eq!(
        check_tool(&h, exec_ok("x")),
        Err("agentLoop: context.tools[0].parameters (tool \"weather\") is neither JSON Schema (a plain object) nor a \
             Standard Schema (an object with ~standard): pass JSON Schema, a TypeBox schema, or a Standard Schema \
             with a JSON Schema converter (zod 4, ArkType, Valibot through toStandardJsonSchema)"
            .into())
    );
    // A `~standard` of another version is not a Standard Schema v1: a plain object is JSON Schema, as before.
    let other = TV::obj(&[("~standard", TV::obj(&[("version", TV::num(2.0)), ("validate", exec_ok("x"))]))]);
    assert_eq!(check_tool(&h, other), Ok(()));
    assert_eq!(check_tool(&h, doubling_schema(false, Rc::default())), Ok(()));
    assert_eq!(check_tool(&h, TV::from_json(&json!({"type": "object"}))), Ok(()));
}

#[test]
fn t_4_3_8_declaring_an_unreadable_schema_is_an_error_naming_the_tool() {
    // Past the argument checks (tools a caller edits later are declared at the next request): the declaration refuses.
    let w = World::new();
    let t = tool_with("weather", exec_ok("x"), &[("parameters", exec_ok("x"))]);
    let spec = RunSpec::prompt(vec![user("go")], ctx_tools(vec![], vec![t]), config(&[]));
    let Err(e) = w.start(&spec) else { panic!("the start must fail") };
    assert_eq!(
        w.h.error_message(&e),
        "Tool \"weather\": parameters is neither JSON Schema (a plain object) nor a Standard Schema (an object with \
         ~standard): pass JSON Schema, a TypeBox schema, or a Standard Schema with a JSON Schema converter (zod 4, \
         ArkType, Valibot through toStandardJsonSchema)"
    );
    assert_eq!(w.requests(), 0);
}
