//! Exports behind the JS `Agent` facade (pkg-template/agent.js). Each takes the facade's state
//! object `st` (and the agent itself where its public fields are read) and forwards to
//! `core::agent`; nothing is kept on the Rust side between calls.

use super::api::to_js;
use super::executor::spawn_promise;
use super::host::JsHost;
use crate::core::agent::{self, Queue};
use crate::core::args::ArgError;
use futures::FutureExt;
use wasm_bindgen::prelude::*;

fn queue(which: u8) -> Queue {
    if which == 0 { Queue::Steering } else { Queue::FollowUp }
}

fn run_promise(outcome: Result<agent::RunFuture<JsValue>, JsValue>) -> js_sys::Promise {
    match outcome {
        Ok(run) => spawn_promise(run.map(|r| r.map(|()| JsValue::UNDEFINED))),
        Err(e) => js_sys::Promise::reject(&e),
    }
}

#[wasm_bindgen(js_name = agentInit)]
pub fn agent_init(agent: JsValue, st: JsValue, options: JsValue, default_stream_fn: JsValue) -> Result<(), JsValue> {
    agent::init(&JsHost, &agent, &st, &options, &default_stream_fn).map_err(to_js)
}

#[wasm_bindgen(js_name = agentPrompt)]
pub fn agent_prompt(agent: JsValue, st: JsValue, input: JsValue, images: JsValue) -> js_sys::Promise {
    run_promise(agent::prompt(&JsHost, &agent, &st, &input, &images))
}

#[wasm_bindgen(js_name = agentContinue)]
pub fn agent_continue(agent: JsValue, st: JsValue, options: JsValue) -> js_sys::Promise {
    run_promise(agent::continue_run(&JsHost, &agent, &st, &options))
}

#[wasm_bindgen(js_name = agentEnqueue)]
pub fn agent_enqueue(st: JsValue, which: u8, message: JsValue) -> Result<(), JsValue> {
    let function = if which == 0 { "Agent.steer" } else { "Agent.followUp" };
    agent::enqueue(&JsHost, &st, queue(which), &message, function).map_err(to_js)
}

#[wasm_bindgen(js_name = agentClearQueue)]
pub fn agent_clear_queue(st: JsValue, which: u8) -> Result<(), JsValue> {
    agent::clear(&JsHost, &st, queue(which))
}

#[wasm_bindgen(js_name = agentPeekQueued)]
pub fn agent_peek_queued(st: JsValue) -> Result<JsValue, JsValue> {
    agent::peek_queued(&JsHost, &st)
}

#[wasm_bindgen(js_name = agentTakeQueued)]
pub fn agent_take_queued(st: JsValue, predicate: JsValue) -> Result<JsValue, JsValue> {
    agent::take_queued(&JsHost, &st, &predicate)
}

#[wasm_bindgen(js_name = agentSetMode)]
pub fn agent_set_mode(st: JsValue, which: u8, mode: JsValue) -> Result<(), JsValue> {
    agent::set_mode(&JsHost, &st, queue(which), &mode).map_err(to_js)
}

#[wasm_bindgen(js_name = agentSubscribe)]
pub fn agent_subscribe(st: JsValue, listener: JsValue) -> Result<JsValue, JsValue> {
    agent::subscribe(&JsHost, &st, &listener).map_err(to_js)
}

#[wasm_bindgen(js_name = agentReset)]
pub fn agent_reset(st: JsValue) -> Result<(), JsValue> {
    agent::reset(&JsHost, &st)
}

#[wasm_bindgen(js_name = agentSystemPrompt)]
pub fn agent_system_prompt(st: JsValue) -> Result<String, JsValue> {
    let h = JsHost;
    let messages = crate::core::host::Host::get(&h, &st, "messages")?;
    let messages = crate::core::host::Host::array_items(&h, &messages)?;
    crate::core::transcript::current_system_prompt(&h, &messages)
}

#[wasm_bindgen(js_name = agentCheckArray)]
pub fn agent_check_array(value: JsValue, path: &str) -> Result<(), JsValue> {
    if js_sys::Array::is_array(&value) {
        Ok(())
    } else {
        Err(to_js(ArgError::Type(format!("Agent: {path} must be an array"))))
    }
}

#[wasm_bindgen(js_name = agentSnapshot)]
pub fn agent_snapshot(agent: JsValue, st: JsValue) -> Result<JsValue, JsValue> {
    agent::snapshot(&JsHost, &agent, &st)
}

#[wasm_bindgen(js_name = agentApplySnapshot)]
pub fn agent_apply_snapshot(agent: JsValue, st: JsValue, data: JsValue, tools: JsValue) -> Result<(), JsValue> {
    agent::apply_snapshot(&JsHost, &agent, &st, &data, &tools).map_err(to_js)
}

#[wasm_bindgen(js_name = agentResume)]
pub fn agent_resume(agent: JsValue, st: JsValue) -> js_sys::Promise {
    run_promise(agent::resume(&JsHost, &agent, &st))
}

/// `approve` (`approved`) or `deny` (issue 30).
#[wasm_bindgen(js_name = agentDecide)]
pub fn agent_decide(agent: JsValue, st: JsValue, id: JsValue, options: JsValue, approved: bool) -> js_sys::Promise {
    run_promise(agent::decide(&JsHost, &agent, &st, &id, &options, approved))
}

#[wasm_bindgen(js_name = agentParseRestore)]
pub fn agent_parse_restore(input: JsValue) -> Result<JsValue, JsValue> {
    agent::parse_restore(&JsHost, &input)
}

#[wasm_bindgen(js_name = agentStateChanged)]
pub fn agent_state_changed(st: JsValue) {
    agent::state_changed(&JsHost, &st);
}
