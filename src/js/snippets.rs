//! The Rust side of the JS snippets (`src/js/snippets/*.js`): one `extern` block per file, and nothing else. Each
//! block names the file wasm-bindgen copies into the package; every snippet another one imports must be bound here
//! too, or wasm-bindgen would not copy it. The numbers these functions answer are named in `protocol.rs`.

use js_sys::Array;
use wasm_bindgen::prelude::*;

/// The checked calls: a throw sets `CALL_FAILED` and waits for `takeCaught` (see `checked` in host.rs).
#[wasm_bindgen(module = "/src/js/snippets/calls.js")]
extern "C" {
    #[wasm_bindgen(js_name = setFailureFlag)]
    pub(super) fn set_failure_flag(memory: &JsValue, address: u32);
    #[wasm_bindgen(js_name = takeCaught)]
    pub(super) fn take_caught() -> JsValue;
    #[wasm_bindgen(js_name = getChecked)]
    pub(super) fn get_checked(obj: &JsValue, key: &JsValue) -> JsValue;
    pub(super) fn apply0(f: &JsValue, this: &JsValue) -> JsValue;
    pub(super) fn apply1(f: &JsValue, this: &JsValue, a: &JsValue) -> JsValue;
    pub(super) fn apply2(f: &JsValue, this: &JsValue, a: &JsValue, b: &JsValue) -> JsValue;
    pub(super) fn apply4(f: &JsValue, this: &JsValue, a: &JsValue, b: &JsValue, c: &JsValue, d: &JsValue) -> JsValue;
    #[wasm_bindgen(catch)]
    pub(super) fn apply(f: &JsValue, this: &JsValue, args: Vec<JsValue>) -> Result<JsValue, JsValue>;
}

/// Values: object shapes, copies, sets, ids, `kindOf`, error texts, the clock.
#[wasm_bindgen(module = "/src/js/snippets/values.js")]
extern "C" {
    #[wasm_bindgen(js_name = codeUnits)]
    pub(super) fn code_units(s: &JsValue) -> Vec<u16>;
    #[wasm_bindgen(catch, js_name = copyFields)]
    pub(super) fn copy_fields(from: &JsValue, to: &JsValue, keys: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, js_name = setAdd)]
    pub(super) fn set_add(set: &JsValue, v: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, js_name = setDelete)]
    pub(super) fn set_delete(set: &JsValue, v: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(js_name = objectId)]
    pub(super) fn object_id(v: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = takeCollected)]
    pub(super) fn take_collected() -> JsValue;
    pub(super) fn object1(k1: &JsValue, v1: &JsValue) -> JsValue;
    pub(super) fn object2(k1: &JsValue, v1: &JsValue, k2: &JsValue, v2: &JsValue) -> JsValue;
    pub(super) fn object3(
        k1: &JsValue,
        v1: &JsValue,
        k2: &JsValue,
        v2: &JsValue,
        k3: &JsValue,
        v3: &JsValue,
    ) -> JsValue;
    #[allow(clippy::too_many_arguments)]
    pub(super) fn object4(
        k1: &JsValue,
        v1: &JsValue,
        k2: &JsValue,
        v2: &JsValue,
        k3: &JsValue,
        v3: &JsValue,
        k4: &JsValue,
        v4: &JsValue,
    ) -> JsValue;
    #[allow(clippy::too_many_arguments)]
    pub(super) fn object5(
        k1: &JsValue,
        v1: &JsValue,
        k2: &JsValue,
        v2: &JsValue,
        k3: &JsValue,
        v3: &JsValue,
        k4: &JsValue,
        v4: &JsValue,
        k5: &JsValue,
        v5: &JsValue,
    ) -> JsValue;
    #[allow(clippy::too_many_arguments)]
    pub(super) fn object6(
        k1: &JsValue,
        v1: &JsValue,
        k2: &JsValue,
        v2: &JsValue,
        k3: &JsValue,
        v3: &JsValue,
        k4: &JsValue,
        v4: &JsValue,
        k5: &JsValue,
        v5: &JsValue,
        k6: &JsValue,
        v6: &JsValue,
    ) -> JsValue;
    #[wasm_bindgen(js_name = bindFirst)]
    pub(super) fn bind_first(f: &JsValue, first: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = typeMessage)]
    pub(super) fn type_message(t: &JsValue, message: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = toolStartEvent)]
    pub(super) fn tool_start_event(t: &JsValue, id: &JsValue, name: &JsValue, args: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = toolEndEvent)]
    pub(super) fn tool_end_event(
        t: &JsValue,
        id: &JsValue,
        name: &JsValue,
        result: &JsValue,
        is_error: &JsValue,
        ms: &JsValue,
    ) -> JsValue;
    #[allow(clippy::too_many_arguments)]
    #[wasm_bindgen(js_name = toolResultMessage)]
    pub(super) fn tool_result_message(
        role: &JsValue,
        id: &JsValue,
        name: &JsValue,
        content: &JsValue,
        details: &JsValue,
        usage: &JsValue,
        is_error: &JsValue,
        ms: &JsValue,
        timestamp: &JsValue,
    ) -> JsValue;
    #[wasm_bindgen(js_name = objectN)]
    pub(super) fn object_n(pairs: Vec<JsValue>) -> JsValue;
    #[wasm_bindgen(catch)]
    pub(super) fn copy(v: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch)]
    pub(super) fn items(v: &JsValue) -> Result<Vec<JsValue>, JsValue>;
    #[wasm_bindgen(catch)]
    pub(super) fn entries(v: &JsValue) -> Result<Array, JsValue>;
    #[wasm_bindgen(js_name = newSet)]
    pub(super) fn new_set(items: &Array) -> JsValue;
    #[wasm_bindgen(catch, js_name = setItems)]
    pub(super) fn set_items(v: &JsValue) -> Result<Array, JsValue>;
    pub(super) fn deferred() -> Array;
    #[wasm_bindgen(catch)]
    pub(super) fn push(a: &JsValue, v: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(js_name = kindOf)]
    pub(super) fn kind_of(v: &JsValue) -> u8;
    #[wasm_bindgen(js_name = brandError)]
    pub(super) fn brand_error(error: &JsValue, code: &str) -> JsValue;
    #[wasm_bindgen(catch, js_name = plainObject)]
    pub(super) fn plain_object(v: &JsValue) -> Result<bool, JsValue>;
    #[wasm_bindgen(js_name = errorMessage)]
    pub(super) fn error_message(e: &JsValue) -> String;
    #[wasm_bindgen(js_name = arrayOf)]
    pub(super) fn array_of(values: Vec<JsValue>) -> JsValue;
    pub(super) fn variadic(f: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = regexTest)]
    pub(super) fn regex_test(pattern: &str, text: &str) -> JsValue;
    #[wasm_bindgen(js_name = regexError)]
    pub(super) fn regex_error(pattern: &JsValue) -> Option<String>;
    #[wasm_bindgen(js_name = regexUnicode)]
    pub(super) fn regex_unicode(text: &JsValue) -> bool;
    #[wasm_bindgen(js_name = urlCanParse)]
    pub(super) fn url_can_parse(text: &JsValue) -> bool;
    #[wasm_bindgen(js_name = regexTest)]
    pub(super) fn regex_test_values(pattern: &JsValue, text: &JsValue) -> JsValue;
    pub(super) fn now() -> f64;
}

/// E-8.1 for the valid case, in one crossing (`Checker` in core::args names what is wrong).
#[wasm_bindgen(module = "/src/js/snippets/args.js")]
extern "C" {
    #[wasm_bindgen(catch, js_name = agentStateValid)]
    pub(super) fn agent_state_valid(
        agent: &JsValue,
        st: &JsValue,
        hooks: &JsValue,
        timers: &JsValue,
    ) -> Result<bool, JsValue>;
    #[wasm_bindgen(catch, js_name = compactionProblem)]
    pub(super) fn compaction_problem(compaction: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = loopArgsValid)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn loop_args_valid(
        prompts: &JsValue,
        has_prompts: bool,
        context: &JsValue,
        config: &JsValue,
        emit: &JsValue,
        has_emit: bool,
        signal: &JsValue,
        stream_fn: &JsValue,
        hooks: &JsValue,
        timers: &JsValue,
    ) -> Result<bool, JsValue>;
    #[wasm_bindgen(catch, js_name = firstBadMessage)]
    pub(super) fn first_bad_message(list: &JsValue) -> Result<f64, JsValue>;
}

/// The Agent's fused operations: reducer, queue poller, awaited listeners, default `convertToLlm`.
#[wasm_bindgen(module = "/src/js/snippets/agent.js")]
extern "C" {
    #[wasm_bindgen(catch, js_name = reduceAgentEvent)]
    pub(super) fn reduce_agent_event(st: &JsValue, event: &JsValue) -> Result<bool, JsValue>;
    #[wasm_bindgen(catch, js_name = beginRunState)]
    pub(super) fn begin_run_state(st: &JsValue, active: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, js_name = endRunState)]
    pub(super) fn end_run_state(st: &JsValue) -> Result<(), JsValue>;
    #[allow(clippy::too_many_arguments)]
    #[wasm_bindgen(catch, js_name = initState)]
    pub(super) fn init_state(
        st: &JsValue,
        model: &JsValue,
        thinking_level: &JsValue,
        tools: &JsValue,
        messages: &JsValue,
        steering_mode: &JsValue,
        follow_up_mode: &JsValue,
        on_checkpoint: &JsValue,
        agent: &JsValue,
    ) -> Result<(), JsValue>;
    #[wasm_bindgen(js_name = queuePoller)]
    pub(super) fn queue_poller(st: &JsValue, list: &JsValue, mode: &JsValue, transit: &JsValue, skip: bool) -> JsValue;
    #[wasm_bindgen(js_name = defaultConvertToLlm)]
    pub(super) fn default_convert_to_llm() -> JsValue;
    #[wasm_bindgen(js_name = callListeners)]
    pub(super) fn call_listeners(listeners: &JsValue, cursor: &JsValue, a: &JsValue, b: &JsValue) -> bool;
    #[wasm_bindgen(js_name = takeListened)]
    pub(super) fn take_listened() -> JsValue;
    #[wasm_bindgen(js_name = takeCursor)]
    pub(super) fn take_cursor() -> Option<JsValue>;
}

/// L-3.4 tool-declaration changes in one crossing.
#[wasm_bindgen(module = "/src/js/snippets/declare.js")]
extern "C" {
    #[wasm_bindgen(catch, js_name = toolChanges)]
    pub(super) fn tool_changes(messages: &JsValue, extra: Vec<JsValue>, tools: &JsValue) -> Result<JsValue, JsValue>;
}

/// The stream pump: answers a `protocol::pump` code; its value waits for `takePumped`.
#[wasm_bindgen(module = "/src/js/snippets/pump.js")]
extern "C" {
    #[wasm_bindgen(js_name = pumpQueued)]
    pub(super) fn pump_queued(source: &JsValue, messages: &JsValue, index: f64, sink: &JsValue) -> u8;
    #[wasm_bindgen(js_name = pumpEvent)]
    pub(super) fn pump_event(event: &JsValue, messages: &JsValue, index: f64, sink: &JsValue) -> u8;
    #[wasm_bindgen(js_name = takePumped)]
    pub(super) fn take_pumped() -> JsValue;
}

/// The reference validator's value view (`ViewPaths::json_copy`, `patch_copy`) and `JSON.stringify` at any depth.
#[wasm_bindgen(module = "/src/js/snippets/view.js")]
extern "C" {
    #[wasm_bindgen(catch, js_name = jsonCopy)]
    pub(super) fn json_copy(v: &JsValue) -> Result<Option<String>, JsValue>;
    #[wasm_bindgen(catch)]
    pub(super) fn stringify(v: &JsValue) -> Result<Option<String>, JsValue>;
    #[wasm_bindgen(js_name = viewString)]
    pub(super) fn view_string(index: u32) -> Option<String>;
    #[wasm_bindgen(catch, js_name = jsonClone)]
    pub(super) fn json_clone(v: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = jsonTextKept)]
    pub(super) fn json_text_kept(v: &JsValue) -> Result<Option<String>, JsValue>;
    #[wasm_bindgen(js_name = takeKept)]
    pub(super) fn take_kept() -> JsValue;
    #[wasm_bindgen(catch, js_name = parseKept)]
    pub(super) fn parse_kept(text: &str, table: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = parseText)]
    pub(super) fn parse_text(text: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = takeCopy)]
    pub(super) fn take_copy() -> JsValue;
    #[wasm_bindgen(catch, js_name = patchCopy)]
    pub(super) fn patch_copy(copy: &JsValue, patches: &str) -> Result<JsValue, JsValue>;
}

/// Tool-argument validation (`FastPaths::check_tool_call`): a `checked` code, its value waiting for `takeChecked`.
#[wasm_bindgen(module = "/src/js/snippets/validate.js")]
extern "C" {
    #[wasm_bindgen(catch, js_name = checkToolCall)]
    pub(super) fn check_tool_call(tool: &JsValue, call: &JsValue, args: &JsValue) -> Result<u8, JsValue>;
    #[wasm_bindgen(js_name = takeChecked)]
    pub(super) fn take_checked() -> JsValue;
}

/// Promises, timers, abort signals and iterators, awaited through numbered slots (`Awaited` in host.rs).
#[wasm_bindgen(module = "/src/js/snippets/waits.js")]
extern "C" {
    pub(super) fn timer(ms: f64) -> JsValue;
    #[wasm_bindgen(js_name = signalAborted)]
    pub(super) fn signal_aborted(signal: &JsValue) -> bool;
    #[wasm_bindgen(js_name = watchAbort)]
    pub(super) fn watch_abort(signal: &JsValue, slot: f64) -> bool;
    #[wasm_bindgen(js_name = unwatchAbort)]
    pub(super) fn unwatch_abort(signal: &JsValue, slot: f64);
    #[wasm_bindgen(js_name = abortController)]
    pub(super) fn abort_controller() -> Array;
    #[wasm_bindgen(catch)]
    pub(super) fn abort(controller: &JsValue, reason: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(catch, js_name = asyncIterator)]
    pub(super) fn async_iterator(source: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = setSettle)]
    pub(super) fn set_settle(f: &JsValue);
    #[wasm_bindgen(js_name = awaitHandle)]
    pub(super) fn await_handle(handle: &JsValue, slot: f64) -> JsValue;
    #[wasm_bindgen(catch, js_name = awaitThenable)]
    pub(super) fn await_thenable(value: &JsValue, slot: f64) -> Result<bool, JsValue>;
    #[wasm_bindgen(catch, js_name = nextInto)]
    pub(super) fn next_into(it: &JsValue, slot: f64) -> Result<(), JsValue>;
    #[wasm_bindgen(js_name = iteratorReturn)]
    pub(super) fn iterator_return(it: &JsValue);
    pub(super) fn silence(p: &JsValue);
}

/// The executor's wake-ups (src/js/executor.rs).
#[wasm_bindgen(module = "/src/js/snippets/executor.js")]
extern "C" {
    #[wasm_bindgen(js_name = schedulePoll)]
    pub(super) fn schedule_poll();
    #[wasm_bindgen(js_name = setPoller)]
    pub(super) fn set_poller(poll: &JsValue, on_failure: &JsValue);
    #[wasm_bindgen(js_name = setFallbackPoller)]
    pub(super) fn set_fallback_poller(poll: &JsValue);
}
