//! The fast paths' references, callable from JS, for `tests/js/parity.test.mjs`: each fast path of `core::fast` runs
//! either as its Rust reference or as its JS twin, on the real engine (`JsHost`) and the same values, so the test
//! can require the same results and the same reads and writes in the same order. Compiled only with the test-only
//! `parity` feature (scripts/build.mjs: `target/parity/`), never into the package's wasm.

use super::host::JsHost;
use crate::core::agent::Queue;
use crate::core::agent_state::init::Initial;
use crate::core::args::ArgError;
use crate::core::fast::{self, Checked, EventCode, FastPaths, Pumped, ViewPaths};
use crate::core::host::Host;
use js_sys::Array;
use wasm_bindgen::prelude::*;

fn arg(args: &Array, i: u32) -> JsValue {
    args.get(i)
}

fn pair(a: JsValue, b: JsValue) -> JsValue {
    Array::of2(&a, &b).into()
}

fn code_name(code: EventCode) -> &'static str {
    match code {
        EventCode::Start => "start",
        EventCode::Block => "block",
        EventCode::Done => "done",
        EventCode::Error => "error",
        EventCode::Other => "other",
    }
}

/// `__fastPath(name, reference, args)`: the fast path `name` (its JS twin's name) on `args`, as the Rust reference
/// when `reference`, else as the JS twin. Results are plain JS values; a value a getter threw is thrown.
#[wasm_bindgen(js_name = __fastPath)]
pub fn fast_path(name: &str, reference: bool, args: Array) -> Result<JsValue, JsValue> {
    let h = JsHost;
    match name {
        // Issue 45: the references of pkg-template/compaction.js, which the test calls itself (its module is loaded
        // by the package on first use, not by this build).
        "compactionPlan" | "compactionProject" | "compactionEntry" if !reference => {
            Err(h.error("the compaction twins are pkg-template/compaction.js: call them from JS", true))
        }
        "compactionProblem" => {
            let problem = if reference {
                match crate::core::compaction::read_options(&h, &arg(&args, 0)) {
                    Ok(_) => None,
                    Err(crate::core::compaction::Unreadable::Field(f, w)) => Some((f.to_string(), w.to_string())),
                    Err(crate::core::compaction::Unreadable::Thrown(e)) => return Err(e),
                }
            } else {
                h.compaction_problem(&arg(&args, 0))?
            };
            Ok(problem.map_or(JsValue::UNDEFINED, |(f, w)| pair(JsValue::from_str(&f), JsValue::from_str(&w))))
        }
        "compactionPlan" => {
            let plan = crate::core::compaction::plan(&h, &arg(&args, 0), &arg(&args, 1), &arg(&args, 2))?;
            Ok(plan.unwrap_or(JsValue::NULL))
        }
        "compactionProject" => crate::core::compaction::request_messages(&h, &arg(&args, 0)),
        "compactionEntry" => {
            let now = arg(&args, 4).as_f64().unwrap_or(0.0);
            crate::core::compaction::entry(&h, &arg(&args, 0), &arg(&args, 1), &arg(&args, 2), &arg(&args, 3), now)
        }
        "reduceAgentEvent" => {
            let (st, event) = (arg(&args, 0), arg(&args, 1));
            let durable = if reference {
                crate::core::agent_state::reducer::reduce(&h, &st, &event)?
            } else {
                h.reduce_agent_event(&st, &event)?
            };
            Ok(JsValue::from_bool(durable))
        }
        "initState" => {
            let (st, values) = (arg(&args, 0), arg(&args, 1));
            let v = |i: u32| values.unchecked_ref::<Array>().get(i);
            let initial = Initial {
                model: v(0),
                thinking_level: v(1),
                tools: v(2),
                messages: v(3),
                steering_mode: v(4),
                follow_up_mode: v(5),
                on_checkpoint: v(6),
                agent: v(7),
            };
            if reference {
                crate::core::agent_state::init::init_state(&h, &st, &initial)?;
            } else {
                h.init_state(&st, &initial)?;
            }
            Ok(JsValue::UNDEFINED)
        }
        "beginRunState" => {
            let (st, active) = (arg(&args, 0), arg(&args, 1));
            if reference {
                crate::core::agent_state::init::begin_run_state(&h, &st, &active)?;
            } else {
                h.begin_run_state(&st, &active)?;
            }
            Ok(JsValue::UNDEFINED)
        }
        "endRunState" => {
            let st = arg(&args, 0);
            if reference {
                crate::core::agent_state::init::end_run_state(&h, &st)?;
            } else {
                h.end_run_state(&st)?;
            }
            Ok(JsValue::UNDEFINED)
        }
        "queuePoller" => {
            let st = arg(&args, 0);
            let queue = if arg(&args, 1).as_string().as_deref() == Some("followUp") {
                Queue::FollowUp
            } else {
                Queue::Steering
            };
            let skip = arg(&args, 2).is_truthy();
            Ok(if reference {
                crate::core::agent_state::drain::native_queue_poller(&h, &st, queue, skip)
            } else {
                h.queue_poller(&st, queue, skip)
            })
        }
        "defaultConvertToLlm" => Ok(if reference {
            crate::core::agent_state::convert::default_convert_to_llm(&h)
        } else {
            h.default_convert_to_llm()
        }),
        "toolChanges" => {
            let (messages, extra, tools) = (arg(&args, 0), arg(&args, 1), arg(&args, 2));
            let extra: Vec<(JsValue, JsValue)> = h
                .array_items(&extra)?
                .iter()
                .map(|p| (h.array_get(p, 0).unwrap_or_default(), h.array_get(p, 1).unwrap_or_default()))
                .collect();
            let (added, removed) = if reference {
                crate::core::declare::tools::tool_changes(&h, &messages, &extra, &tools)?
            } else {
                h.tool_changes(&messages, &extra, &tools)?
            };
            Ok(pair(h.array(&added), h.array(&removed)))
        }
        "jsonTextKept" => {
            // [text, table]: the JSON text with kept strings as markers, and what was kept (`undefined`: nothing).
            let v = arg(&args, 0);
            let (text, table) = if reference { fast::view::json_text_kept(&h, &v)? } else { h.json_text_kept(&v)? };
            Ok(pair(text.map(|t| h.string(&t)).unwrap_or(JsValue::UNDEFINED), table))
        }
        "jsonParseKept" => {
            let (text, table) = (arg(&args, 0).as_string().unwrap_or_default(), arg(&args, 1));
            if reference { fast::view::json_parse_kept(&h, &text, &table) } else { h.json_parse_kept(&text, &table) }
        }
        "firstBadMessage" => {
            let list = arg(&args, 0);
            let bad = if reference { fast::args::first_bad_message(&h, &list)? } else { h.first_bad_message(&list)? };
            Ok(match bad {
                None => JsValue::NULL,
                Some((index, not_object)) => pair(h.number(index as f64), h.boolean(not_object)),
            })
        }
        "agentStateValid" => {
            let (agent, st) = (arg(&args, 0), arg(&args, 1));
            if !reference {
                return Ok(JsValue::from_bool(h.agent_state_valid(&agent, &st)?));
            }
            match crate::core::agent::lifecycle::check_state_fully(&h, &agent, &st, "Agent.prompt") {
                Ok(()) => Ok(JsValue::TRUE),
                Err(ArgError::Type(_)) => Ok(JsValue::FALSE),
                Err(ArgError::Thrown(thrown)) => Err(thrown),
            }
        }
        "loopArgsValid" => {
            // (prompts, hasPrompts, context, config, emit, hasEmit, signal, streamFn): the twin's one-step check
            // (`loop_args_look_valid`, snippets/args.js) or the full check of `agentLoop`'s arguments (`Checker`).
            let has = |i: u32| arg(&args, i).is_truthy();
            let (prompts, emit) = (arg(&args, 0), arg(&args, 4));
            let (prompts, emit) = (has(1).then_some(&prompts), has(5).then_some(&emit));
            let (context, config, signal, stream_fn) = (arg(&args, 2), arg(&args, 3), arg(&args, 6), arg(&args, 7));
            if !reference {
                let valid = super::host::loop_args_look_valid(prompts, &context, &config, emit, &signal, &stream_fn)?;
                return Ok(JsValue::from_bool(valid));
            }
            let a = super::api::LoopArgs {
                function: "agentLoop",
                prompts,
                context: &context,
                config: &config,
                emit,
                signal: &signal,
                stream_fn: &stream_fn,
            };
            match super::api::check_loop_args_fully(&a) {
                Ok(()) => Ok(JsValue::TRUE),
                Err(ArgError::Type(_)) => Ok(JsValue::FALSE),
                Err(ArgError::Thrown(thrown)) => Err(thrown),
            }
        }
        "callListeners" => {
            // The whole dispatch, synchronously: every step until the end, nothing awaited; each listener's throw
            // is recorded and the walk goes on after it (the failure events' `swallow`).
            let (listeners, a, b) = (arg(&args, 0), arg(&args, 1), arg(&args, 2));
            let thrown = Array::new();
            let mut cursor = None;
            loop {
                let step = if reference {
                    fast::listeners::call_listeners(&h, &listeners, &mut cursor, &a, &b)
                } else {
                    h.call_listeners(&listeners, &mut cursor, &a, &b)
                };
                match step {
                    Ok(Some(_)) => {}
                    Ok(None) => break,
                    Err(e) => {
                        thrown.push(&e);
                        if cursor.is_none() {
                            break;
                        }
                    }
                }
            }
            Ok(thrown.into())
        }
        "pumpEvent" => {
            // One event handed in (the reference sees no queue of its own, so only this form compares).
            let (event, messages, slot, sink) = (arg(&args, 0), arg(&args, 1), arg(&args, 2), arg(&args, 3));
            let slot = slot.as_f64().filter(|n| *n >= 0.0).map(|n| n as usize);
            let sink = (!sink.is_undefined()).then_some(&sink);
            let pumped = if reference {
                fast::pump::pump(&h, &JsValue::UNDEFINED, Some(event), &messages, slot, sink)?
            } else {
                h.pump(&JsValue::UNDEFINED, Some(event), &messages, slot, sink)?
            };
            Ok(match pumped {
                Pumped::Empty => pair(h.constant("empty"), JsValue::UNDEFINED),
                Pumped::Delivered => pair(h.constant("delivered"), JsValue::UNDEFINED),
                Pumped::Update(update) => pair(h.constant("update"), update),
                Pumped::SinkFailed(thrown) => pair(h.constant("sinkFailed"), thrown),
                Pumped::Event(code, event) => pair(h.constant(code_name(code)), event),
            })
        }
        "jsonCopy" => {
            let v = arg(&args, 0);
            let (text, copy) = if reference { fast::view::json_copy(&h, &v)? } else { h.json_copy(&v)? };
            Ok(pair(text.map_or(JsValue::UNDEFINED, |t| h.string(&t)), copy))
        }
        "patchCopy" => {
            let (copy, patches) = (arg(&args, 0), arg(&args, 1).as_string().unwrap_or_default());
            if reference { fast::view::patch_copy(&h, &copy, &patches) } else { h.patch_copy(&copy, &patches) }
        }
        "checkToolCall" => {
            // [code, value]: "args" and the arguments `execute` gets, or "standard" and what `validate` returned.
            let (tool, call, call_args) = (arg(&args, 0), arg(&args, 1), arg(&args, 2));
            let checked = if reference {
                fast::check_call::check_tool_call(&h, &tool, &call, &call_args)?
            } else {
                h.check_tool_call(&tool, &call, &call_args)?
            };
            Ok(match checked {
                Checked::Args(v) => pair(h.constant("args"), v),
                Checked::Standard(v) => pair(h.constant("standard"), v),
            })
        }
        _ => Err(JsValue::from(js_sys::Error::new(&format!("__fastPath: no fast path named {name}")))),
    }
}
