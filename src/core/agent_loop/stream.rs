//! The request boundary (L-3.5.1: transformContext, convertToLlm, getApiKey, the stream function's call) and the
//! reading of its stream (L-3.6), watched for the D3.2 idle timeout and the D4 deadline after an abort; the final
//! message put in place of the streamed partial.

use super::messages::{REQUEST_ABORTED, failure_message, read_index, thinking_level};
use crate::core::fast::{EventCode, FastPaths, Pumped};
use crate::core::host::{HostFuture, Kind};
use crate::core::run::{Run, Stop, abandon_deadline};
use crate::core::tools::timeout_ms;
use crate::core::validate::js_number_to_string;
use futures::FutureExt;
use futures::future::{Either, Fuse, LocalBoxFuture, select};
use std::future::Future;

const STREAM_ENDED: &str = "Stream ended without a done or error event";

/// How long a foreign stream's `result()` is awaited after it ended without a terminal event.
const FOREIGN_RESULT_WAIT_MS: f64 = 1000.0;

/// API-1.4.2: DEFAULT_AGENT_IDENTITY overlaid field by field with `config.identity`.
pub fn request_identity<H: FastPaths>(h: &H, config: &H::V) -> Result<H::V, H::V> {
    let attribution = h.object(&[
        ("name", h.constant("pi")),
        ("url", h.constant("https://pi.dev")),
        ("categories", h.array(&[h.constant("cli-agent")])),
    ]);
    let merged = h.object(&[("attribution", attribution)]);
    let identity = h.get(config, "identity")?;
    if h.truthy(&identity) && h.kind(&identity).is_object_like() {
        for key in ["userAgent", "attribution", "version"] {
            let value = h.get(&identity, key)?;
            if h.kind(&value) != Kind::Undefined {
                h.set(&merged, key, &value)?;
            }
        }
    }
    Ok(merged)
}

/// The request boundary (L-3.5.1) and the stream (L-3.6). Returns the final assistant message,
/// already in the context (not yet in newMessages).
pub(super) async fn stream_assistant_response<H: FastPaths>(run: &Run<'_, H>) -> Result<H::V, Stop> {
    // The request is a function of its own, boxed (ARCHITECTURE, "A run's future"): what it holds across its awaits
    // (the messages, the config, the model, the key, the hooks' calls) is not held beside the stream's reading.
    let (source, mut watch) = match Box::pin(request(run)).await {
        Ok(Requested::Source(source, watch)) => (source, watch),
        Ok(Requested::Ended(message)) => return Ok(message),
        Err(stop) => return Err(stop),
    };
    read_stream(run, &source, &mut watch).await
}

enum Requested<'h, H: FastPaths> {
    /// The stream function's answer, and the watch its reading goes on with.
    Source(H::V, RequestWatch<'h, H>),
    /// The request went idle (D3.2): its message, ended.
    Ended(H::V),
}

/// transformContext, convertToLlm, getApiKey, then the call of the stream function.
async fn request<'h, H: FastPaths>(run: &Run<'h, H>) -> Result<Requested<'h, H>, Stop> {
    let h = run.h;
    run.check_abort()?;
    let fail = |e: H::V| run.fail(&e);
    let mut messages = run.context_messages()?;
    if run.compaction.is_some() {
        messages = h.compaction_project(&messages).map_err(fail)?;
    }
    if let Some(transformed) = run.call_hook("transformContext", &[messages.clone(), run.signal.clone()]).await? {
        if h.kind(&transformed) != Kind::Array {
            return Err(Stop::Failed("transformContext must return an array of messages".into()));
        }
        messages = transformed;
    }
    let llm = run.call_hook("convertToLlm", &[messages]).await?.unwrap_or_else(|| h.undefined());
    if h.kind(&llm) != Kind::Array {
        return Err(Stop::Failed("convertToLlm must return an array of messages".into()));
    }
    let transcript = h.object(&[("messages", llm)]);
    let config = run.config();
    let model = h.get(&config, "model").map_err(fail)?;
    let mut api_key = h.undefined();
    if run.hook("getApiKey")?.is_some() {
        let provider = h.get(&model, "provider").map_err(fail)?;
        if let Some(key) = run.call_hook("getApiKey", &[provider]).await? {
            api_key = key;
        }
    }
    if !h.truthy(&api_key) {
        api_key = h.get(&config, "apiKey").map_err(fail)?;
    }
    let options = h.shallow_copy(&config).map_err(fail)?;
    h.set(&options, "apiKey", &api_key).map_err(fail)?;
    h.set(&options, "identity", &request_identity(h, &config).map_err(fail)?).map_err(fail)?;
    let mut watch = RequestWatch::new(run, timeout_ms(h, &config, "streamIdleTimeoutMs"));
    h.set(&options, "signal", &watch.signal()).map_err(fail)?;
    run.check_abort()?; // D2.4: no request once aborted
    run.count_request();
    let undefined = h.undefined();
    let source = match watch.watch(h.call(&run.stream_fn, &undefined, &[model, transcript, options])).await {
        Watched::Value(Ok(source)) => source,
        Watched::Value(Err(e)) => return Err(run.fail(&e)),
        Watched::Idle(ms) => {
            return Box::pin(end_idle(run, &run.context_messages()?, None, ms)).await.map(Requested::Ended);
        }
        Watched::Abandoned => return Err(Stop::Failed(REQUEST_ABORTED.into())),
    };
    Ok(Requested::Source(source, watch))
}

/// Watches one request: the D4 deadline after an abort, and with `streamIdleTimeoutMs` (D3.2) an
/// idle timer that restarts at every event, on a child signal that follows the run's signal.
struct RequestWatch<'h, H: FastPaths> {
    h: &'h H,
    run_signal: H::V,
    deadline: Fuse<LocalBoxFuture<'h, ()>>,
    parent_abort: Fuse<HostFuture<()>>,
    /// The idle timeout and the controller of the child signal (boxed: only with `streamIdleTimeoutMs`, and the watch
    /// is held beside the stream's reading in every run in flight, issue 34).
    idle: Option<Box<Idle<H::V>>>,
}

/// The idle timeout (ms), the controller of the child signal and the signal.
type Idle<V> = (f64, V, V);

enum Watched<T> {
    Value(T),
    Idle(f64),
    Abandoned,
}

impl<'h, H: FastPaths> RequestWatch<'h, H> {
    fn new(run: &Run<'h, H>, idle_ms: f64) -> Self {
        let h = run.h;
        let idle = (idle_ms > 0.0).then(|| {
            let (controller, signal) = h.abort_controller();
            Box::new((idle_ms, controller, signal))
        });
        let parent_abort =
            if idle.is_some() { h.wait_abort(&run.signal) } else { futures::future::pending().boxed_local() };
        RequestWatch {
            h,
            run_signal: run.signal.clone(),
            deadline: abandon_deadline(h, &run.signal, run.abort_grace_ms).fuse(),
            parent_abort: parent_abort.fuse(),
            idle,
        }
    }

    /// The signal the stream function gets.
    fn signal(&self) -> H::V {
        self.idle.as_deref().map_or_else(|| self.run_signal.clone(), |(_, _, signal)| signal.clone())
    }

    async fn watch<T>(&mut self, fut: impl Future<Output = T>) -> Watched<T> {
        let h = self.h;
        let fut = fut.fuse();
        futures::pin_mut!(fut);
        let mut timer = match self.idle.as_deref() {
            Some((ms, _, _)) => h.sleep(*ms),
            None => futures::future::pending().boxed_local(),
        }
        .fuse();
        loop {
            futures::select_biased! {
                v = fut => return Watched::Value(v),
                () = &mut self.parent_abort => {
                    if let Some((_, controller, _)) = self.idle.as_deref() {
                        let reason = h.get(&self.run_signal, "reason").unwrap_or_else(|_| h.undefined());
                        h.abort(controller, &reason);
                    }
                }
                () = timer => {
                    let ms = self.idle.as_deref().map_or(0.0, |(ms, _, _)| *ms);
                    if let Some((_, controller, _)) = self.idle.as_deref() {
                        let reason = h.error(&idle_message(ms), false);
                        let _ = h.set(&reason, "name", &h.constant("TimeoutError"));
                        h.abort(controller, &reason);
                    }
                    return Watched::Idle(ms);
                }
                () = &mut self.deadline => return Watched::Abandoned,
            }
        }
    }
}

fn idle_message(ms: f64) -> String {
    format!("Stream idle timeout: no event from the provider for {} ms", js_number_to_string(ms))
}

/// D3.2: the stream went quiet. The message ends with `stopReason: "error"` (the partial kept),
/// so the loop takes the hard exit. Its callers box it: it is rare (ARCHITECTURE, "A run's future").
async fn end_idle<H: FastPaths>(run: &Run<'_, H>, messages: &H::V, slot: Option<usize>, ms: f64) -> Result<H::V, Stop> {
    let h = run.h;
    // Cloned out first: reading the array may run caller code, and no borrow is held across that.
    let placed = run.ending.borrow().partial.clone();
    let partial = placed.and_then(|(array, index)| read_index(h, &array, index));
    let message = match (slot, partial) {
        (Some(_), Some(partial)) => {
            let copy = h.shallow_copy(&partial).map_err(|e| run.fail(&e))?;
            h.set(&copy, "stopReason", &h.constant("error")).map_err(|e| run.fail(&e))?;
            h.set(&copy, "errorMessage", &h.string(&idle_message(ms))).map_err(|e| run.fail(&e))?;
            copy
        }
        _ => failure_message(run, &h.constant("error"), &idle_message(ms)),
    };
    finish_message(run, messages, slot, &message).await
}

/// Iterates an assistant message event source (L-3.6.1 – L-3.6.4).
async fn read_stream<H: FastPaths>(
    run: &Run<'_, H>,
    source: &H::V,
    watch: &mut RequestWatch<'_, H>,
) -> Result<H::V, Stop> {
    let h = run.h;
    let fail = |e: H::V| run.fail(&e);
    let not_iterable = || Stop::Failed("streamFn must return an async iterable of assistant message events".into());
    let iterator = match h.async_iterator(source) {
        Ok(Some(it)) => it,
        Ok(None) => return Err(not_iterable()),
        Err(e) => return Err(fail(e)),
    };
    let messages = run.context_messages()?;
    // Where the streamed partial sits in `messages`, once `start` arrived.
    let mut slot: Option<usize> = None;
    loop {
        run.breathe().await;
        let mut pumped = h.pump(source, None, &messages, slot, run.emitter.observing_sink()).map_err(fail)?;
        if let Pumped::Empty = pumped {
            let event = match watch.watch(h.iterator_next(&iterator)).await {
                Watched::Value(event) => event,
                Watched::Idle(ms) => {
                    h.iterator_return(&iterator);
                    return Box::pin(end_idle(run, &messages, slot, ms)).await;
                }
                Watched::Abandoned => {
                    h.iterator_return(&iterator);
                    return Err(Stop::Failed(REQUEST_ABORTED.into()));
                }
            };
            let event = match event {
                Ok(Some(event)) => event,
                Ok(None) => break,
                Err(e) => return Err(fail(e)),
            };
            pumped = h.pump(source, Some(event), &messages, slot, run.emitter.observing_sink()).map_err(fail)?;
        }
        let (code, event) = match pumped {
            Pumped::Delivered | Pumped::Empty => continue,
            Pumped::Update(update) => {
                run.emit("message_update", update).await?;
                continue;
            }
            Pumped::SinkFailed(thrown) => return Err(run.emitter.record_failure(thrown)),
            Pumped::Event(code, event) => (code, event),
        };
        match code {
            EventCode::Start => {
                let partial = h.get(&event, "partial").map_err(fail)?;
                h.array_push(&messages, &partial).map_err(fail)?;
                let index = h.array_len(&messages).map_err(fail)?.saturating_sub(1);
                slot = Some(index);
                run.ending.borrow_mut().partial = Some((messages.clone(), index));
                let copy = h.shallow_copy(&partial).map_err(fail)?;
                // Boxed, once a reply: the largest await of the reading (ARCHITECTURE, "A run's future").
                Box::pin(run.emit_message("message_start", &copy)).await?;
            }
            // Without a partial in place there is nothing to update (with one, `pump` did it).
            EventCode::Block => {}
            code @ (EventCode::Done | EventCode::Error) => {
                let (kind, field) = if code == EventCode::Done { ("done", "message") } else { ("error", "error") };
                let fallback = h.get(&event, field).map_err(fail)?;
                // Boxed, as the ending below: once a step.
                return Box::pin(async {
                    let final_message = match source_result(run, source, None).await {
                        Some(result) => result,
                        None if h.kind(&fallback).is_object_like() => fallback,
                        None => return Err(Stop::Failed(format!("Assistant message event \"{kind}\" has no {field}"))),
                    };
                    finish_message(run, &messages, slot, &final_message).await
                })
                .await;
            }
            EventCode::Other => {}
        }
    }
    // L-3.6.4: ended without a terminal event.
    Box::pin(async {
        match source_result(run, source, Some(FOREIGN_RESULT_WAIT_MS)).await {
            Some(final_message) => finish_message(run, &messages, slot, &final_message).await,
            None => Err(Stop::Failed(STREAM_ENDED.into())),
        }
    })
    .await
}

/// `await source.result()` when the source has one and it yields an object. With `wait_ms`, our
/// own streams answer at once that no result will come; foreign ones get `wait_ms`.
async fn source_result<H: FastPaths>(run: &Run<'_, H>, source: &H::V, wait_ms: Option<f64>) -> Option<H::V> {
    let h = run.h;
    let result = h.get(source, "result").ok()?;
    if h.kind(&result) != Kind::Function {
        return None;
    }
    // Our own streams answer at once whether a result will come.
    let has_result = h.get(source, "hasResult").unwrap_or_else(|_| h.undefined());
    if wait_ms.is_some() && h.kind(&has_result) == Kind::Function {
        let known = h.call_sync(&has_result, source, &[]).ok()?;
        if !h.truthy(&known) {
            return None;
        }
    }
    let pending = h.call(&result, source, &[]);
    let settled = match wait_ms {
        None => run.guarded(pending).await?,
        Some(ms) => match select(pending, h.sleep(ms)).await {
            Either::Left((v, _)) => v,
            Either::Right(_) => return None,
        },
    };
    match settled {
        Ok(v) if h.kind(&v).is_object_like() => Some(v),
        _ => None,
    }
}

/// L-3.6.3: stamps `thinkingLevel`, puts the final message in place of the partial (or appends
/// it after a `message_start`), and emits `message_end`.
async fn finish_message<H: FastPaths>(
    run: &Run<'_, H>,
    messages: &H::V,
    slot: Option<usize>,
    final_message: &H::V,
) -> Result<H::V, Stop> {
    let h = run.h;
    let fail = |e: H::V| run.fail(&e);
    h.set(final_message, "thinkingLevel", &thinking_level(run)).map_err(fail)?;
    run.count_spent(final_message);
    match slot {
        Some(index) => h.array_set(messages, index, final_message).map_err(fail)?,
        None => {
            h.array_push(messages, final_message).map_err(fail)?;
        }
    }
    run.ending.borrow_mut().partial = None;
    if slot.is_none() {
        let copy = h.shallow_copy(final_message).map_err(fail)?;
        run.emit_message("message_start", &copy).await?;
    }
    run.emit_message("message_end", final_message).await?;
    Ok(final_message.clone())
}
