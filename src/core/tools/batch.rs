//! Tool calls in batches inside a run (T-4.1, T-4.5, T-4.6, D5): sequential and parallel batches, the results in
//! request order, the calls a resumed turn still owes, the calls of a response cut by the token limit, and the
//! counting semaphore of `maxParallelTools`.

use super::*;
use crate::core::approvals::{Verdict, decision_for, denied_text, request_event, verdict};
use crate::core::local::Semaphore;

impl<'h, H: FastPaths> Run<'h, H> {
    fn tool_env<'s>(&'s self, assistant: &'s H::V) -> Result<ToolEnv<'s, H>, Stop> {
        let h = self.h;
        let context = self.context();
        let tools = h.get(&context, "tools").map_err(|e| self.fail(&e))?;
        Ok(ToolEnv {
            h,
            tools,
            assistant,
            context,
            hooks: self.config(),
            signal: &self.signal,
            grace_ms: self.abort_grace_ms,
            tool_timeout_ms: timeout_ms(h, &self.config(), "toolTimeoutMs"),
            halted: Some(&self.emitter),
            tool_index: Default::default(),
            updates: Default::default(),
        })
    }

    async fn emit_tool_start(&self, call: &Call<H::V>) -> Result<(), Stop> {
        let h = self.h;
        let event = h.object(&[
            ("type", h.constant("tool_execution_start")),
            ("toolCallId", call.id.clone()),
            ("toolName", call.name_value.clone()),
            ("args", call.args.clone()),
        ]);
        self.emit("tool_execution_start", event).await
    }

    async fn emit_tool_end(&self, outcome: &Outcome<H::V>) -> Result<(), Stop> {
        let h = self.h;
        let mut entries = vec![
            ("type", h.constant("tool_execution_end")),
            ("toolCallId", outcome.call.id.clone()),
            ("toolName", outcome.call.name_value.clone()),
            ("result", outcome.result.clone()),
            ("isError", outcome.is_error.clone()),
        ];
        if let Some(ms) = outcome.duration_ms {
            entries.push(("durationMs", h.number(ms)));
        }
        let event = h.object(&entries);
        drop(entries);
        self.emit("tool_execution_end", event).await
    }

    async fn emit_result_message(&self, outcome: &Outcome<H::V>) -> Result<H::V, Stop> {
        let message = result_message(self.h, outcome);
        self.emit_message("message_start", &message).await?;
        self.emit_message("message_end", &message).await?;
        Ok(message)
    }

    /// The execution's `onUpdate` events. The call is borrowed, not cloned: each clone of a JS handle holds a slot of
    /// the host's table for as long as the execution runs (issue 17).
    fn update_sink<'s>(&'s self, call: &'s Call<H::V>) -> impl Fn(H::V) -> LocalBoxFuture<'s, ()> + 's {
        move |partial: H::V| {
            let h = self.h;
            let event = h.object(&[
                ("type", h.constant("tool_execution_update")),
                ("toolCallId", call.id.clone()),
                ("toolName", call.name_value.clone()),
                ("args", call.args.clone()),
                ("partialResult", partial),
            ]);
            async move {
                // A failing sink is remembered by the emitter; the tool keeps running (L-3.10.4).
                let _ = self.emit("tool_execution_update", event).await;
            }
            .boxed_local()
        }
    }

    /// T-4.1.2: sequential when the config says so or any called tool asks for it.
    fn batch_is_sequential(&self, env: &ToolEnv<'_, H>, calls: &[Call<H::V>]) -> bool {
        let h = self.h;
        let mode = h.get(&env.hooks, "toolExecution").ok().and_then(|v| h.as_string(&v));
        if mode.as_deref() == Some("sequential") {
            return true;
        }
        calls.iter().any(|call| match env.find_tool(&call.name) {
            Ok(Some(tool)) => {
                h.get(&tool, "executionMode").ok().and_then(|v| h.as_string(&v)).as_deref() == Some("sequential")
            }
            _ => false,
        })
    }

    pub async fn execute_tool_calls(&self, assistant: &H::V, calls: &[Call<H::V>]) -> Result<Batch<H::V>, Stop> {
        let env = self.tool_env(assistant)?;
        if self.batch_is_sequential(&env, calls) {
            // Boxed (ARCHITECTURE, "A run's future"): its future is larger than the parallel batch's.
            Box::pin(self.execute_tool_calls_sequential(&env, calls)).await
        } else {
            self.execute_tool_calls_parallel(&env, calls).await
        }
    }

    async fn execute_tool_calls_sequential(
        &self,
        env: &ToolEnv<'_, H>,
        calls: &[Call<H::V>],
    ) -> Result<Batch<H::V>, Stop> {
        let mut outcomes = Vec::with_capacity(calls.len());
        let mut messages = Vec::with_capacity(calls.len());
        for call in calls {
            self.emit_tool_start(call).await?;
            let outcome = match env.run_call_as(call, Approval::Ask, self.update_sink(call)).await {
                Ended::Done(outcome) => outcome,
                Ended::Waiting(request) => {
                    // T-4.10.3: the calls after it wait with it; the results before it are in the transcript.
                    self.emit_approval_request(&request).await?;
                    let paused = Pause { requests: vec![request], completed: Vec::new() };
                    return Ok(Batch { messages, terminate: false, paused: Some(paused) });
                }
            };
            self.emit_tool_end(&outcome).await?;
            messages.push(self.emit_result_message(&outcome).await?);
            outcomes.push(outcome);
        }
        let terminate = batch_terminates(self.h, &outcomes);
        Ok(Batch { messages, terminate, paused: None })
    }

    async fn execute_tool_calls_parallel(
        &self,
        env: &ToolEnv<'_, H>,
        calls: &[Call<H::V>],
    ) -> Result<Batch<H::V>, Stop> {
        let modes = vec![Approval::Ask; calls.len()];
        let ended = self.parallel_outcomes(env, calls, &modes).await?;
        if ended.iter().any(|e| matches!(e, Ended::Waiting(_))) {
            // T-4.10.2: no result message yet, so that all of them enter the transcript in source order later.
            return Ok(Batch { messages: Vec::new(), terminate: false, paused: Some(pause_of(self.h, ended)) });
        }
        let outcomes: Vec<Outcome<H::V>> = ended
            .into_iter()
            .filter_map(|e| match e {
                Ended::Done(outcome) => Some(outcome),
                Ended::Waiting(_) => None,
            })
            .collect();
        // T-4.5.3: result messages in source order.
        let mut messages = Vec::with_capacity(outcomes.len());
        for outcome in &outcomes {
            messages.push(self.emit_result_message(outcome).await?);
        }
        let terminate = batch_terminates(self.h, &outcomes);
        Ok(Batch { messages, terminate, paused: None })
    }

    /// Issue 30: announces a call that waits for approval.
    async fn emit_approval_request(&self, request: &H::V) -> Result<(), Stop> {
        let event = request_event(self.h, request).map_err(|e| self.fail(&e))?;
        self.emit("tool_approval_request", event).await
    }

    /// A parallel batch up to its outcomes (every `tool_execution_end` emitted), in source order; a call that asks
    /// for approval is announced in the preflight and does not run (issue 30), unless the run was aborted meanwhile:
    /// then it ends as aborted, like every other call that did not start.
    async fn parallel_outcomes(
        &self,
        env: &ToolEnv<'_, H>,
        calls: &[Call<H::V>],
        modes: &[Approval<'_, H::V>],
    ) -> Result<Vec<Ended<H::V>>, Stop> {
        let h = self.h;
        // T-4.5.1 preflight in source order; immediate outcomes end here.
        let mut preflight: Vec<Preflight<H::V>> = Vec::with_capacity(calls.len());
        for (i, call) in calls.iter().enumerate() {
            self.emit_tool_start(call).await?;
            let mode = modes.get(i).copied().unwrap_or(Approval::Ask);
            match env.prepare_as(call, mode).await {
                Preparation::Immediate { result } => {
                    let outcome = immediate_outcome(h, call, result);
                    self.emit_tool_end(&outcome).await?;
                    preflight.push(Preflight::Done(outcome));
                }
                Preparation::Prepared { tool, args } => preflight.push(Preflight::Ready(tool, args)),
                Preparation::Waiting { request } => {
                    self.emit_approval_request(&request).await?;
                    preflight.push(Preflight::Waiting(request));
                }
            }
        }
        // T-4.5.2: prepared calls start in source order, all within this tick unless D5 caps
        // them (then as slots free, still in source order); each ends on its own.
        let slots = Semaphore::new(max_parallel_tools(h, &env.hooks));
        let mut running: Vec<LocalBoxFuture<'_, Ended<H::V>>> = Vec::with_capacity(calls.len());
        for (call, entry) in calls.iter().zip(preflight) {
            let (tool, args) = match entry {
                Preflight::Done(outcome) => {
                    running.push(futures::future::ready(Ended::Done(outcome)).boxed_local());
                    continue;
                }
                Preflight::Waiting(request) => {
                    running.push(futures::future::ready(Ended::Waiting(request)).boxed_local());
                    continue;
                }
                Preflight::Ready(tool, args) => (tool, args),
            };
            let stopped = || h.signal_aborted(env.signal) || self.emitter.failed();
            let aborted = move || async move {
                let outcome = immediate_outcome(h, call, error_result(h, OPERATION_ABORTED));
                let _ = self.emit_tool_end(&outcome).await;
                Ended::Done(outcome)
            };
            let execute = move |execution: Execution<H>, args: H::V| async move {
                let executed = env.finish(call, execution, self.update_sink(call)).await;
                let outcome = env.finalize(call, &args, executed).await;
                let _ = self.emit_tool_end(&outcome).await;
                Ended::Done(outcome)
            };
            match slots.try_acquire() {
                Some(_) if stopped() => running.push(aborted().boxed_local()),
                Some(permit) => {
                    let execution = env.start(call, &tool, &args);
                    running.push(
                        async move {
                            let _permit = permit;
                            execute(execution, args).await
                        }
                        .boxed_local(),
                    );
                }
                None => {
                    let slots = slots.clone();
                    running.push(
                        async move {
                            let _permit = slots.acquire().await;
                            if stopped() {
                                return aborted().await;
                            }
                            let execution = env.start(call, &tool, &args);
                            execute(execution, args).await
                        }
                        .boxed_local(),
                    );
                }
            }
        }
        let mut ended = join_all(running).await;
        if self.emitter.failed() {
            return Err(Stop::EmitFailed);
        }
        if h.signal_aborted(env.signal) {
            // D2: every started call gets a result; an abort is no pause.
            for (call, entry) in calls.iter().zip(ended.iter_mut()) {
                if matches!(entry, Ended::Waiting(_)) {
                    let outcome = immediate_outcome(h, call, error_result(h, OPERATION_ABORTED));
                    self.emit_tool_end(&outcome).await?;
                    *entry = Ended::Done(outcome);
                }
            }
        }
        Ok(ended)
    }

    /// Finishes the tool batch of an interrupted turn (`Agent.resume`): calls with a result in the
    /// transcript or an ended execution are not run again; a tool with `resume: "fail"` gets the
    /// interruption as its error result; the rest run as a batch would. The new result messages
    /// are emitted in source order; returns them as the batch, and every result of the turn.
    pub async fn resume_tool_calls(
        &self,
        assistant: &H::V,
        calls: &[Call<H::V>],
        resumed: &Resumed<H::V>,
    ) -> Result<(Batch<H::V>, Vec<H::V>), Stop> {
        enum Slot<V> {
            Have(V),
            Done(Outcome<V>),
            Rerun(usize),
        }
        let h = self.h;
        let env = self.tool_env(assistant)?;
        let truncated = h.get(assistant, "stopReason").ok().and_then(|r| h.as_string(&r)).as_deref() == Some("length");
        let id_of = |v: &H::V| h.get(v, "toolCallId").unwrap_or_else(|_| h.undefined());
        let mut slots = Vec::with_capacity(calls.len());
        let mut rerun = Vec::new();
        // Per rerun call: `Some(edited args)` when a person approved it (issue 30), `None` to ask as usual.
        let mut approved: Vec<Option<Option<H::V>>> = Vec::new();
        for call in calls {
            if let Some(message) = resumed.existing.iter().find(|m| h.same(&id_of(m), &call.id)) {
                slots.push(Slot::Have(message.clone()));
                continue;
            }
            if let Some(record) = resumed.completed.iter().find(|r| h.same(&id_of(r), &call.id)) {
                let read = |key: &str| h.get(record, key).unwrap_or_else(|_| h.undefined());
                let outcome = Outcome {
                    call: call.clone(),
                    result: read("result"),
                    is_error: read("isError"),
                    duration_ms: None,
                };
                slots.push(Slot::Done(outcome));
                continue;
            }
            let id = || h.as_string(&call.id).unwrap_or_else(|| h.error_message(&call.id));
            let verdict = decision_for(h, &resumed.decisions, &call.id).map(|d| verdict(h, d));
            let refused = match &verdict {
                Some(Verdict::Denied(reason)) => Some(denied_text(&id(), reason.as_deref())),
                _ if truncated => Some(truncated_text(&call.name)),
                _ if resumed.interrupted => {
                    let tool = env.find_tool(&call.name).ok().flatten();
                    let mode = tool.and_then(|t| h.get(&t, "resume").ok()).and_then(|m| h.as_string(&m));
                    (mode.as_deref() == Some("fail"))
                        .then(|| format!("Tool call \"{}\" was interrupted and not retried", id()))
                }
                _ => None,
            };
            match refused {
                Some(text) => {
                    self.emit_tool_start(call).await?;
                    let outcome = immediate_outcome(h, call, error_result(h, &text));
                    self.emit_tool_end(&outcome).await?;
                    slots.push(Slot::Done(outcome));
                }
                None => {
                    rerun.push(call.clone());
                    approved.push(match verdict {
                        Some(Verdict::Approved(args)) => Some(args),
                        _ => None,
                    });
                    slots.push(Slot::Rerun(rerun.len() - 1));
                }
            }
        }
        let modes: Vec<Approval<'_, H::V>> = approved
            .iter()
            .map(|a| match a {
                Some(args) => Approval::Approved(args.as_ref()),
                None => Approval::Ask,
            })
            .collect();
        let mut ran: Vec<Option<Ended<H::V>>> = if rerun.is_empty() {
            Vec::new()
        } else if self.batch_is_sequential(&env, &rerun) {
            let mut outcomes = Vec::with_capacity(rerun.len());
            for (i, call) in rerun.iter().enumerate() {
                self.emit_tool_start(call).await?;
                let mode = modes.get(i).copied().unwrap_or(Approval::Ask);
                match env.run_call_as(call, mode, self.update_sink(call)).await {
                    Ended::Done(outcome) => {
                        self.emit_tool_end(&outcome).await?;
                        outcomes.push(Some(Ended::Done(outcome)));
                    }
                    Ended::Waiting(request) => {
                        // T-4.10.3: the calls after it wait with it.
                        self.emit_approval_request(&request).await?;
                        outcomes.push(Some(Ended::Waiting(request)));
                        break;
                    }
                }
            }
            outcomes
        } else {
            self.parallel_outcomes(&env, &rerun, &modes).await?.into_iter().map(Some).collect()
        };
        if ran.iter().any(|e| matches!(e, Some(Ended::Waiting(_)))) {
            // Paused again: nothing new enters the transcript; what ended waits with the requests, in source order.
            let mut ended = Vec::new();
            let mut all = Vec::new();
            for slot in slots {
                match slot {
                    Slot::Have(message) => all.push(message),
                    Slot::Done(outcome) => ended.push(Ended::Done(outcome)),
                    Slot::Rerun(i) => ended.extend(ran.get_mut(i).and_then(Option::take)),
                }
            }
            let paused = Some(pause_of(h, ended));
            return Ok((Batch { messages: Vec::new(), terminate: false, paused }, all));
        }
        let (mut messages, mut all, mut outcomes) = (Vec::new(), Vec::new(), Vec::new());
        let mut had_existing = false;
        for slot in slots {
            let outcome = match slot {
                Slot::Have(message) => {
                    had_existing = true;
                    all.push(message);
                    continue;
                }
                Slot::Done(outcome) => outcome,
                Slot::Rerun(i) => match ran.get_mut(i).and_then(Option::take) {
                    Some(Ended::Done(outcome)) => outcome,
                    _ => continue,
                },
            };
            let message = self.emit_result_message(&outcome).await?;
            messages.push(message.clone());
            all.push(message);
            outcomes.push(outcome);
        }
        // Results already in the transcript carry no `terminate`: such a batch goes on.
        let terminate = !had_existing && batch_terminates(h, &outcomes);
        Ok((Batch { messages, terminate, paused: None }, all))
    }

    /// T-4.6.1: a response cut by the token limit executes nothing.
    pub async fn fail_truncated(&self, calls: &[Call<H::V>]) -> Result<Batch<H::V>, Stop> {
        self.fail_calls(calls, truncated_text).await
    }

    /// Issue 32: a limit was reached before the batch, so none of its calls runs; each gets an error result that
    /// names the limit (as T-4.6.1's, with its start, end and message pair, in source order).
    pub async fn fail_limited(&self, calls: &[Call<H::V>], stop: &str) -> Result<Batch<H::V>, Stop> {
        self.fail_calls(calls, |name| format!("Tool call \"{name}\" was not executed: {stop}")).await
    }

    async fn fail_calls(&self, calls: &[Call<H::V>], text: impl Fn(&str) -> String) -> Result<Batch<H::V>, Stop> {
        let h = self.h;
        let mut messages = Vec::with_capacity(calls.len());
        for call in calls {
            self.emit_tool_start(call).await?;
            let outcome = immediate_outcome(h, call, error_result(h, &text(&call.name)));
            self.emit_tool_end(&outcome).await?;
            messages.push(self.emit_result_message(&outcome).await?);
        }
        Ok(Batch { messages, terminate: false, paused: None })
    }
}

/// The pause of a batch: the requests, and the calls that ended (as records), each in source order.
fn pause_of<H: FastPaths>(h: &H, ended: Vec<Ended<H::V>>) -> Pause<H::V> {
    let mut pause = Pause { requests: Vec::new(), completed: Vec::new() };
    for entry in ended {
        match entry {
            Ended::Done(outcome) => pause.completed.push(completed_record(h, &outcome)),
            Ended::Waiting(request) => pause.requests.push(request),
        }
    }
    pause
}

/// T-4.6.1's error text for a call of a response cut by the token limit.
fn truncated_text(name: &str) -> String {
    format!(
        "Tool call \"{name}\" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments."
    )
}

/// D5: `config.maxParallelTools` (a positive integer), else unlimited.
fn max_parallel_tools<H: FastPaths>(h: &H, config: &H::V) -> usize {
    match h.get(config, "maxParallelTools").ok().and_then(|v| h.as_number(&v)) {
        Some(n) if n.is_finite() && n >= 1.0 => n as usize,
        _ => usize::MAX,
    }
}
