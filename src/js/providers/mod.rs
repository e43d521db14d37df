//! The HTTP side of the built-in providers (§6, P-6.2): builds the request with the pure wire
//! format, sends it through `options.fetch` or `globalThis.fetch` with retries and abort, reads
//! the body incrementally into the SSE decoder, and applies the assembler's operations to the one
//! JS message object every event shares. Never throws: every failure is the final `error` event.

mod apply;

use super::executor::spawn;
use super::host::JsHost;
use super::protocol::{delta_kind, patch_op};
use super::snippets::{
    env_var, failure_message, global_fetch, header_entries, parse_args, patch, project_line, project_messages,
    push_delta, random, restore_at, restore_string, restore_text, restore_value, retryable_failure, set_args_text,
    silence, stringify_in_js, take_args_text,
};
use crate::core::agent_loop::empty_assistant;
use crate::core::builtin::unavailable_event;
use crate::core::host::{Host, Kind};
use crate::core::sort;
use crate::core::text::json::js_json_stringify_verbatim;
use crate::core::text::wtf;
use crate::core::validate::js_number_to_string;
use crate::providers::assemble::{HostStrings, final_arguments};
use crate::providers::json::parse_data;
use crate::providers::marker;
use crate::providers::partial_json::{Patch, PatchOp, PathSeg, Scalar};
use crate::providers::repair::parse_json;
use crate::providers::sse::{DEFAULT_MAX_EVENT_BYTES, SseDecoder, SseError, SseEvents};
use crate::providers::{
    Arguments, Assembler, BlockKind, HttpRequest, Json, MessageOp, RequestInput, StreamMapper, json, wire_format,
};
use futures::future::{Either, select};
use js_sys::{Array, JsString, Object, Reflect, Uint8Array};
use serde_json::Value;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

const REQUEST_ABORTED: &str = "Request was aborted";
const ERROR_BODY_LIMIT: usize = 64 * 1024;
/// What stands in an error text for a secret the request carried (P-6.2.3).
const REDACTED: &str = "[redacted]";
/// Shorter secrets are not scrubbed: they would cut ordinary words out of messages.
const MIN_SECRET_LEN: usize = 6;
/// Header names whose values are credentials, scrubbed from errors like the API key.
const CREDENTIAL_HEADERS: [&str; 6] =
    ["authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key", "cookie"];

/// What a request is built from (`Driver::project`).
struct Projected {
    /// The messages' JSON text, parsed by `json::parse_array` into a tree that borrows from it (`parsed`).
    text: String,
    /// `marker::json_len` of the messages' JSON text as JS wrote it (P-6.2.7's estimate).
    messages_json_len: usize,
    /// The JS originals the markers in the other fields stand for.
    table: JsValue,
    model: Value,
    options: Value,
}

/// A projection and its messages, when it has one and its text parses.
fn parsed(projected: &Option<Projected>) -> Option<(&Projected, Vec<Json<'_>>)> {
    let projected = projected.as_ref()?;
    // A tree that borrows its strings from the text: no `Value` (an ordered map, a `String` per key) per field.
    Some((projected, json::parse_array(&projected.text)?))
}

/// Network chunks are copied into wasm memory this many bytes at a time, into one reused buffer,
/// so a huge chunk never needs a buffer of its size (issue 13).
const COPY_WINDOW: u32 = 64 * 1024;

/// Issue 34: a data line that reaches this many bytes leaves wasm memory as it arrives and is parsed in JS
/// (`projectLine`); shorter lines are decoded here as before.
const SPILL_LINE_AFTER: usize = 256 * 1024;

/// A long string of a stream line is read by the assembler in pieces of this many UTF-16 units.
const HOST_STRING_PIECE: u32 = 16 * 1024;

/// The long strings of the stream's lines parsed in JS (`projectLine`'s table), for the assembler.
struct LineStrings(Array);

/// Calls `each` with the text of `text` in pieces of at most `HOST_STRING_PIECE` units: a surrogate pair stays
/// whole, a lone surrogate is read as its stand-in.
fn read_pieces(text: &JsString, each: &mut dyn FnMut(&str)) {
    let len = text.length();
    let mut at = 0u32;
    while at < len {
        let mut end = at.saturating_add(HOST_STRING_PIECE).min(len);
        if end < len && (0xD800..0xDC00).contains(&text.char_code_at(end.saturating_sub(1)).to_bits()) {
            end = end.saturating_sub(1).max(at.saturating_add(1));
        }
        if let Some(piece) = super::host::rust_string(&text.slice(at, end).into()) {
            each(&piece);
        }
        at = end;
    }
}

/// `text` as Rust text, its buffer reserved fallibly: a line of megabytes the core must read itself (not JSON) is
/// an `OutOfMemory` stream error when wasm memory cannot hold it, as it was when the decoder held it (issue 13).
fn copy_in(text: &JsString) -> Result<String, SseError> {
    let mut out = String::new();
    let mut failed = None;
    read_pieces(text, &mut |piece| {
        if failed.is_some() {
            return;
        }
        if out.try_reserve(piece.len()).is_err() {
            failed = Some(out.len().saturating_add(piece.len()));
            return;
        }
        out.push_str(piece);
    });
    match failed {
        Some(bytes) => Err(SseError::OutOfMemory { bytes }),
        None => Ok(out),
    }
}

impl HostStrings for LineStrings {
    fn read(&self, marker: &str, each: &mut dyn FnMut(&str)) {
        let Some(index) = marker::whole_string(marker).and_then(|i| u32::try_from(i).ok()) else { return };
        if let Ok(text) = self.0.get(index).dyn_into::<JsString>() {
            read_pieces(&text, each);
        }
    }

    fn keep(&self, text: &str) -> String {
        let index = self.0.push(&js_str(text)).saturating_sub(1);
        format!("{}s{index}.{}{}", marker::START, marker::utf16_count(text), marker::END)
    }
}

/// The bytes of long lines handed out by the decoder (`SseDecoder::take_spill`), kept as JS strings.
#[derive(Default)]
struct Spill {
    /// The line being received.
    held: Option<JsString>,
    /// The beginnings of the spilled events of the current batch, in order.
    done: VecDeque<JsString>,
}

impl Spill {
    /// `count` spilled events were dispatched: the text held so far is the first one's (a push ends at most one).
    fn settle(&mut self, count: usize) {
        for _ in 0..count {
            self.done.push_back(self.held.take().unwrap_or_else(|| JsString::from("")));
        }
    }

    fn append(&mut self, text: &str) {
        let piece = js_str(text);
        self.held = Some(match self.held.take() {
            Some(held) => held.concat(&piece),
            None => piece.unchecked_into(),
        });
    }
}

/// How a request ended early.
enum End {
    Error(String),
    Aborted,
}

fn js(v: &Value) -> JsValue {
    match v {
        Value::String(s) => js_str(s),
        Value::Number(n) => JsValue::from_f64(n.as_f64().unwrap_or(0.0)),
        Value::Bool(b) => JsValue::from_bool(*b),
        Value::Null => JsValue::NULL,
        // The host's JSON.parse restores the stand-ins of lone surrogates.
        other => JsHost.json_parse(&js_json_stringify_verbatim(other)).unwrap_or(JsValue::UNDEFINED),
    }
}

/// A provider string as JS, lone surrogates (the parsers' `wtf` stand-ins) restored.
fn js_str(text: &str) -> JsValue {
    super::host::js_string(text)
}

/// Entry point of `streamBuiltin`: fills `stream` (an AssistantMessageEventStream).
pub fn stream_builtin(model: JsValue, context: JsValue, options: JsValue, stream: JsValue) {
    let h = JsHost;
    let api = h.get(&model, "api").ok().and_then(|a| a.as_string());
    let Some(format) = api.as_deref().and_then(wire_format) else {
        push(&stream, &unavailable_event(&h, &model));
        return;
    };
    let message = empty_assistant(&h, &model, false, &h.constant("pending"), None);
    let options = if options.is_object() { options } else { Object::new().into() };
    let signal = h.get(&options, "signal").unwrap_or(JsValue::UNDEFINED);
    let driver = Driver {
        h,
        stream,
        message,
        model,
        context,
        options,
        signal,
        last_path: RefCell::default(),
        secrets: RefCell::default(),
        line_table: RefCell::default(),
    };
    spawn(async move {
        let format = format;
        if let Err(end) = driver.run(format.as_ref()).await {
            driver.end(end);
        }
    });
}

fn push(stream: &JsValue, event: &JsValue) {
    if let Ok(f) = JsHost.get(stream, "push") {
        let _ = JsHost.call_sync(&f, stream, std::slice::from_ref(event));
    }
}

/// The request body: its JSON text, or the JS value `onPayload` saw (written by `JSON.stringify` when sent).
enum Payload {
    Text(JsValue),
    Value(JsValue),
}

struct Driver {
    h: JsHost,
    stream: JsValue,
    message: JsValue,
    model: JsValue,
    context: JsValue,
    options: JsValue,
    signal: JsValue,
    /// The JS array of the last tool-call patch path: consecutive patches of one string share it.
    last_path: RefCell<Option<(Vec<PathSeg>, Array)>>,
    /// The API key and credential header values of the request: never shown in an error (P-6.2.3).
    secrets: RefCell<Vec<String>>,
    /// The long strings of the stream's lines parsed in JS, once there is one (issue 34).
    line_table: RefCell<Option<Array>>,
}

impl Driver {
    fn option(&self, key: &str) -> JsValue {
        self.h.get(&self.options, key).unwrap_or(JsValue::UNDEFINED)
    }

    fn aborted(&self) -> bool {
        self.h.signal_aborted(&self.signal)
    }

    /// Calls an option hook with `(value, model)`; a throw becomes the error of the request.
    async fn hook(&self, name: &str, value: JsValue) -> Result<JsValue, End> {
        let f = self.option(name);
        if self.h.kind(&f) != Kind::Function {
            return Ok(JsValue::UNDEFINED);
        }
        self.h
            .call(&f, &JsValue::UNDEFINED, &[value, self.model.clone()])
            .await
            .map_err(|e| End::Error(self.h.error_message(&e)))
    }

    /// P-6.2.3: options.apiKey, else options.env[VAR], else the environment. A key that cannot be
    /// a header value (CR, LF, NUL) is refused before any request, naming where it came from but
    /// never showing it: fetch would put it into its TypeError, and that into the transcript.
    fn api_key(&self, provider: &str) -> Result<Option<String>, End> {
        let h = &self.h;
        if let Some(key) = self.option("apiKey").as_string().filter(|k| !k.is_empty()) {
            return self.checked_key(key, "options.apiKey");
        }
        let env = self.option("env");
        for var in crate::providers::request::api_key_env_vars(provider) {
            let from_options = if env.is_object() { h.get(&env, var).ok().and_then(|v| v.as_string()) } else { None };
            if let Some(key) = from_options.filter(|k| !k.is_empty()) {
                return self.checked_key(key, &format!("options.env.{var}"));
            }
            if let Some(key) = env_var(var).as_string().filter(|k| !k.is_empty()) {
                return self.checked_key(key, &format!("the environment variable {var}"));
            }
        }
        Ok(None)
    }

    fn checked_key(&self, key: String, source: &str) -> Result<Option<String>, End> {
        self.secrets.borrow_mut().push(key.clone());
        if key.contains(['\r', '\n', '\0']) {
            return Err(End::Error(format!(
                "Invalid API key in {source}: it contains a line break or NUL character (the request was not sent)"
            )));
        }
        Ok(Some(key))
    }

    /// `text` with every secret of the request replaced (longest first, so none survives in part).
    fn scrub(&self, text: String) -> String {
        let secrets = self.secrets.borrow();
        let found: Vec<&String> =
            secrets.iter().filter(|s| s.len() >= MIN_SECRET_LEN && text.contains(s.as_str())).collect();
        if found.is_empty() {
            return text;
        }
        // Longest first; a key's number is the length's complement (lengths past u32 sort as the longest).
        let mut keys: Vec<u64> = found
            .iter()
            .enumerate()
            .map(|(at, s)| sort::key(u32::MAX - u32::try_from(s.len()).unwrap_or(u32::MAX), at))
            .collect();
        sort::sort_keys(&mut keys);
        keys.into_iter()
            .filter_map(|key| found.get(sort::position(key)))
            .fold(text, |text, secret| text.replace(secret.as_str(), REDACTED))
    }

    async fn run(&self, format: &dyn crate::providers::WireFormat) -> Result<(), End> {
        let h = self.h;
        if self.aborted() {
            return Err(End::Aborted);
        }
        let raw = if self.context.is_object() { h.get(&self.context, "messages").ok() } else { None };
        let Some(raw) = raw.filter(js_sys::Array::is_array) else {
            return Err(End::Error("streamBuiltin: context.messages must be an array".into()));
        };
        // Schemas go as JSON when Rust can hold them (Google rewrites them), else as forwarded values.
        let first = self.project(&raw, false)?;
        let second;
        let (projected, messages) = match parsed(&first) {
            Some(found) => found,
            None => {
                second = self.project(&raw, true)?;
                parsed(&second)
                    .ok_or_else(|| End::Error("streamBuiltin: context.messages cannot be read as JSON".into()))?
            }
        };
        let Projected { messages_json_len, table, model, options, .. } = projected;
        let mut options = options.clone();
        if let Value::Object(map) = &mut options {
            // Generated tool-call ids (Google) take the request's start time.
            map.insert("timestamp".into(), Value::from(h.date_now()));
        }
        let provider = model.get("provider").and_then(Value::as_str).unwrap_or_default().to_string();
        let key = self.api_key(&provider)?;
        let input = RequestInput {
            model,
            messages: &messages,
            options: &options,
            api_key: key.as_deref(),
            messages_json_len: Some(*messages_json_len),
        };
        let mut request = format.build_request(&input).map_err(End::Error)?;
        if request.url.contains(marker::START) {
            // A URL is text for fetch, which writes a lone surrogate as U+FFFD: so does the lossy copy.
            if let Some(url) = restore_string(&request.url, table).as_string() {
                request.url = url;
            }
        }
        let mut mapper = format.mapper(&input);
        let mut asm = Assembler::for_model(model, input_keeps_open(model));
        // Tool-call arguments stay in JS as they stream (issue 34): `pushDelta` keeps them, `parseArgs` parses them.
        asm.keep_args_in_host();
        let body = self.payload(&request.body, table).await?;
        let response = self.send(&request, &body).await?;
        push(&self.stream, &h.object(&[("type", h.constant("start")), ("partial", self.message.clone())]));
        self.read_body(&response, mapper.as_mut(), &mut asm).await
    }

    /// The fields of `context.messages` the wire formats read, `model` and `options`, and the side
    /// table of the values left in JS (`projectMessages` in snippets/providers.js, `providers::marker`);
    /// `None` when the schemas do not fit as JSON text and must go as forwarded values (`opaque_schemas`).
    fn project(&self, raw: &JsValue, opaque_schemas: bool) -> Result<Option<Projected>, End> {
        let fail = |e: JsValue| End::Error(self.h.error_message(&e));
        let projected = project_messages(raw, &self.model, &self.options, opaque_schemas).map_err(fail)?;
        if projected.is_null() {
            return Ok(None);
        }
        let part = |i: u32| Reflect::get_u32(&projected, i).ok().and_then(|t| t.as_string());
        let parse = |i: u32| part(i).and_then(|t| parse_json(&t).ok()).unwrap_or(Value::Null);
        let Some(text) = part(0) else { return Ok(None) };
        let table = Reflect::get_u32(&projected, 1).map_err(fail)?;
        // P-6.2.7's JSON length of the messages is that of this text (JS wrote it): no second writing.
        let messages_json_len = marker::json_len(&text);
        Ok(Some(Projected { text, messages_json_len, table, model: parse(2), options: parse(3) }))
    }

    /// The body to send. With an `onPayload` hook (P-6.2.4) it gets the body as JS values and may replace them; else
    /// the body is written as text in Rust as JS would write it (`js_json_stringify_verbatim`) and the markers'
    /// originals are put back into the text: no `JSON.parse` and `JSON.stringify` of the whole body in JS.
    async fn payload(&self, body: &Value, table: &JsValue) -> Result<Payload, End> {
        let h = self.h;
        let fail = |e: JsValue| End::Error(h.error_message(&e));
        let hook = self.option("onPayload");
        if h.kind(&hook) != Kind::Function {
            let text = js_json_stringify_verbatim(body);
            // Every caller string holding the marker character is in the table: none, nothing to find.
            if table.unchecked_ref::<Array>().length() == 0 {
                return Ok(Payload::Text(JsValue::from_str(&text)));
            }
            return restore_text(&text, table).map(Payload::Text).map_err(fail);
        }
        let payload = self.body(body, table)?;
        let replaced =
            h.call(&hook, &JsValue::UNDEFINED, &[payload.clone(), self.model.clone()]).await.map_err(fail)?;
        Ok(Payload::Value(if replaced.is_undefined() { payload } else { replaced }))
    }

    /// The request body as JS values, the markers' originals put back where they are.
    fn body(&self, body: &Value, table: &JsValue) -> Result<JsValue, End> {
        let fail = |e: JsValue| End::Error(self.h.error_message(&e));
        let root = js_sys::JSON::parse(&js_json_stringify_verbatim(body)).map_err(fail)?;
        // Every caller string holding the marker character is in the table: none, nothing to find.
        if table.unchecked_ref::<Array>().length() == 0 {
            return Ok(root);
        }
        for (path, s) in marker::marked_strings(body) {
            let path: Array = path
                .iter()
                .map(|step| match step {
                    marker::Step::Key(k) => JsValue::from_str(k),
                    marker::Step::Index(i) => JsValue::from_f64(*i as f64),
                })
                .collect();
            restore_at(&root, &path, s, table).map_err(fail)?;
        }
        Ok(root)
    }

    /// P-6.2.1, P-6.2.5, P-6.2.6: fetch with headers, retries before any event, HTTP errors.
    async fn send(&self, request: &HttpRequest, body: &Payload) -> Result<JsValue, End> {
        let h = self.h;
        let fetch = {
            let given = self.option("fetch");
            if h.kind(&given) == Kind::Function { given } else { global_fetch() }
        };
        if h.kind(&fetch) != Kind::Function {
            return Err(End::Error("No fetch function available: pass options.fetch".into()));
        }
        let headers = self.headers(request);
        // A payload `onPayload` made unsendable ends the request with JSON.stringify's error (it was sent as "null").
        let body_text = match body {
            Payload::Text(text) => text.clone(),
            Payload::Value(value) => stringify_in_js(value).map_err(|e| End::Error(h.error_message(&e)))?,
        };
        let body_text = if body_text.is_undefined() { h.constant("null") } else { body_text };
        let max_retries =
            self.option("maxRetries").as_f64().filter(|n| n.is_finite() && *n >= 0.0).unwrap_or(2.0) as u32;
        let max_delay =
            self.option("maxRetryDelayMs").as_f64().filter(|n| n.is_finite() && *n >= 0.0).unwrap_or(60000.0);
        let timeout = self.option("timeoutMs").as_f64().filter(|n| n.is_finite() && *n > 0.0);
        let mut attempt: u32 = 0;
        loop {
            if self.aborted() {
                return Err(End::Aborted);
            }
            // With a header timeout, fetch gets its own signal so a timed-out request is cancelled.
            let (controller, signal) = match timeout {
                Some(_) => {
                    let (controller, signal) = h.abort_controller();
                    (Some(controller), signal)
                }
                None => (None, self.signal.clone()),
            };
            let init = h.object(&[
                ("method", h.constant("POST")),
                ("headers", headers.clone()),
                ("body", body_text.clone()),
                ("signal", signal),
            ]);
            let sent = h.call(&fetch, &JsValue::UNDEFINED, &[h.string(&request.url), init]);
            let waited = match (timeout, &controller) {
                (Some(ms), Some(controller)) => {
                    let stop = futures::future::select(h.sleep(ms), h.wait_abort(&self.signal));
                    match select(sent, stop).await {
                        Either::Left((r, _)) => r.map_err(|e| (failure_message(&e), retryable_failure(&e))),
                        Either::Right((Either::Right(_), _)) => {
                            h.abort(controller, &JsValue::UNDEFINED);
                            return Err(End::Aborted);
                        }
                        Either::Right((Either::Left(_), _)) => {
                            let text = format!("Request timed out after {} ms", js_number_to_string(ms));
                            h.abort(controller, &h.error(&text, false));
                            Err((text, true))
                        }
                    }
                }
                _ => sent.await.map_err(|e| (failure_message(&e), retryable_failure(&e))),
            };
            let retry_wait = match waited {
                Err(_) if self.aborted() => return Err(End::Aborted),
                Err((message, retryable)) => {
                    // A bad URL, header or init fails the same way every time (issue 13).
                    // P-6.2.6: a wait above maxRetryDelayMs is not retried, whatever failed.
                    let wait = backoff(attempt);
                    if !retryable || attempt >= max_retries || (max_delay > 0.0 && wait > max_delay) {
                        return Err(End::Error(message));
                    }
                    wait
                }
                Ok(response) => {
                    let status = h.get(&response, "status").ok().and_then(|s| s.as_f64()).unwrap_or(0.0);
                    let response_headers = h.get(&response, "headers").unwrap_or(JsValue::UNDEFINED);
                    let info = h.object(&[("status", h.number(status)), ("headers", header_object(&response_headers))]);
                    self.hook("onResponse", info).await?;
                    if (200.0..300.0).contains(&status) {
                        return Ok(response);
                    }
                    let retryable = status == 408.0 || status == 409.0 || status == 429.0 || status >= 500.0;
                    let wait = retry_after(&response_headers).unwrap_or_else(|| backoff(attempt));
                    if !retryable || attempt >= max_retries || (max_delay > 0.0 && wait > max_delay) {
                        let detail = self.error_detail(&response).await;
                        return Err(End::Error(format!("HTTP {}: {detail}", js_number_to_string(status))));
                    }
                    cancel_body(&response);
                    wait
                }
            };
            attempt += 1;
            match select(h.sleep(retry_wait), h.wait_abort(&self.signal)).await {
                Either::Left(_) => {}
                Either::Right(_) => return Err(End::Aborted),
            }
        }
    }

    /// Provider defaults < model.headers < options.headers (`null` removes).
    fn headers(&self, request: &HttpRequest) -> JsValue {
        let h = self.h;
        let mut merged: Vec<(String, JsValue)> =
            request.headers.iter().map(|(k, v)| (k.clone(), h.string(v))).collect();
        for source in [h.get(&self.model, "headers").unwrap_or(JsValue::UNDEFINED), self.option("headers")] {
            if !source.is_object() {
                continue;
            }
            for (key, value) in h.entries(&source).unwrap_or_default() {
                merged.retain(|(k, _)| !k.eq_ignore_ascii_case(&key));
                if CREDENTIAL_HEADERS.iter().any(|c| c.eq_ignore_ascii_case(&key))
                    && let Some(text) = value.as_string()
                {
                    self.keep_secret(&text);
                }
                if !value.is_null() && !value.is_undefined() {
                    merged.push((key, value));
                }
            }
        }
        let object = h.object(&[]);
        for (key, value) in &merged {
            let _ = h.set(&object, key, value);
        }
        object
    }

    /// A credential header value, and its token without the scheme (`Bearer <token>`).
    fn keep_secret(&self, value: &str) {
        let mut secrets = self.secrets.borrow_mut();
        if let Some((_, token)) = value.trim().split_once(' ') {
            secrets.push(token.trim().to_string());
        }
        secrets.push(value.to_string());
    }

    /// P-6.2.5: at most 64 KiB of the body; `error.message`, `message` or a string `error`.
    async fn error_detail(&self, response: &JsValue) -> String {
        let text = read_limited(response, ERROR_BODY_LIMIT).await;
        if let Ok(value) = parse_json(&text) {
            let found = value
                .get("error")
                .and_then(|e| e.get("message"))
                .and_then(Value::as_str)
                .or_else(|| value.get("message").and_then(Value::as_str))
                .or_else(|| value.get("error").and_then(Value::as_str));
            if let Some(detail) = found {
                return detail.to_string();
            }
        }
        text
    }

    async fn read_body(
        &self,
        response: &JsValue,
        mapper: &mut dyn StreamMapper,
        asm: &mut Assembler,
    ) -> Result<(), End> {
        let h = self.h;
        let body = h.get(response, "body").unwrap_or(JsValue::UNDEFINED);
        let reader = h
            .get(&body, "getReader")
            .and_then(|f| h.call_sync(&f, &body, &[]))
            .map_err(|e| End::Error(h.error_message(&e)))?;
        let read = h.get(&reader, "read").map_err(|e| End::Error(h.error_message(&e)))?;
        let mut decoder = SseDecoder::with_limit(self.max_event_bytes());
        decoder.spill_long_lines(SPILL_LINE_AFTER);
        let mut spill = Spill::default();
        // Refilled per chunk: its buffers are reused, so events cost no allocations.
        let mut events = SseEvents::new();
        let mut window = Vec::new();
        let on_event = self.option("onProviderStreamEvent");
        let on_event = (h.kind(&on_event) == Kind::Function).then_some(on_event);
        // With the hook, JS runs between events: each event's operations are applied before the
        // next event. Without it, a chunk's events are mapped, then their operations applied
        // together (in the same order), so their texts are decoded together (`Texts`).
        let per_event = on_event.is_some();
        loop {
            let chunk = match select(h.call(&read, &reader, &[]), h.wait_abort(&self.signal)).await {
                Either::Left((Ok(chunk), _)) => chunk,
                Either::Left((Err(_), _)) if self.aborted() => return self.abort_reader(&reader),
                Either::Left((Err(e), _)) => return Err(End::Error(failure_message(&e))),
                Either::Right(_) => return self.abort_reader(&reader),
            };
            let done = h.get(&chunk, "done").map(|d| d.is_truthy()).unwrap_or(true);
            events.clear();
            let decoded = if done {
                let result = decoder.finish(&mut events);
                spill.settle(events.spilled());
                result
            } else if let Ok(value) = h.get(&chunk, "value") {
                let Some(bytes) = chunk_bytes(&value) else {
                    silence(&reader_cancel(&reader));
                    return Err(End::Error("Provider stream chunk is not an ArrayBuffer or a view of one".into()));
                };
                decode_chunk(&mut decoder, &bytes, &mut window, &mut events, &mut spill)
            } else {
                Ok(())
            };
            if let Err(e) = decoded {
                silence(&reader_cancel(&reader));
                return Err(End::Error(e.message()));
            }
            for event in events.iter() {
                // A long line was parsed in JS: the event's text with its long strings as markers (issue 34).
                let projected = if event.spilled {
                    let head = spill.done.pop_front().unwrap_or_else(|| JsString::from(""));
                    Some(self.project_line(&head.concat(&js_str(event.data)), asm))
                } else if self.line_table.borrow().is_some() && marker::may_hold_start(event.data) {
                    // A marker character of the provider's own must not read as one of ours.
                    Some(self.project_line(&js_str(event.data).unchecked_into(), asm))
                } else {
                    None
                };
                let projected = match projected.transpose() {
                    Ok(projected) => projected,
                    Err(e) => {
                        silence(&reader_cancel(&reader));
                        return Err(End::Error(e.message()));
                    }
                };
                let text = projected.as_deref().unwrap_or(event.data);
                // The hook wants every event parsed; without it the mapper may take its shortcut.
                let mapped = on_event.is_none() && mapper.on_event_text(event.event, text, asm);
                if !mapped {
                    let data = match parse_data(text) {
                        Some(data) => data,
                        None => {
                            crate::providers::on_unparsed(mapper, event.event, text, asm);
                            if per_event {
                                self.apply_all(asm)?;
                            }
                            continue;
                        }
                    };
                    if let Some(on_event) = &on_event {
                        let parsed = self.restored(js(&data.to_value()));
                        if let Err(e) = h.call(on_event, &JsValue::UNDEFINED, &[parsed, self.model.clone()]).await {
                            silence(&reader_cancel(&reader));
                            return Err(End::Error(h.error_message(&e)));
                        }
                    }
                    mapper.on_event(event.event, &data, asm);
                }
                if per_event || asm.finished() {
                    self.apply_all(asm)?;
                }
                if asm.finished() {
                    silence(&reader_cancel(&reader));
                    return Ok(());
                }
            }
            self.apply_all(asm)?;
            if done {
                mapper.on_end(asm);
                if !asm.finished() {
                    asm.fail("Stream ended before the response completed", None);
                }
                return self.apply_all(asm);
            }
        }
    }

    /// The event data `text` of a long line as `projectLine` writes it (its long strings as markers of the stream's
    /// table, which the assembler is then told about), or as it is when it is not JSON.
    fn project_line(&self, text: &JsString, asm: &mut Assembler) -> Result<String, SseError> {
        let table = self.line_table.borrow().clone();
        let table = table.unwrap_or_else(|| {
            let table = Array::new();
            *self.line_table.borrow_mut() = Some(table.clone());
            asm.use_host_strings(Rc::new(LineStrings(table.clone())));
            table
        });
        let projected = project_line(text, &table);
        copy_in(projected.dyn_ref::<JsString>().unwrap_or(text))
    }

    /// `v` with the long strings of the stream's lines put back, when there were any (issue 34).
    fn restored(&self, v: JsValue) -> JsValue {
        let table = self.line_table.borrow().clone();
        match table {
            Some(table) => restore_value(&v, &table),
            None => v,
        }
    }

    /// `options.maxStreamEventBytes`: a positive number (floored), else the 64 MiB default.
    fn max_event_bytes(&self) -> usize {
        match self.option("maxStreamEventBytes").as_f64() {
            Some(n) if n >= 1.0 => n.min(usize::MAX as f64) as usize,
            _ => DEFAULT_MAX_EVENT_BYTES,
        }
    }

    fn abort_reader(&self, reader: &JsValue) -> Result<(), End> {
        silence(&reader_cancel(reader));
        Err(End::Aborted)
    }
}

/// openai-completions keeps text and thinking blocks open until the end (P-6.1.4).
fn input_keeps_open(model: &Value) -> bool {
    model.get("api").and_then(Value::as_str) == Some("openai-completions")
}

/// 500 ms · 2^attempt ± 20 % (P-6.2.6).
fn backoff(attempt: u32) -> f64 {
    let base = 500.0 * 2f64.powi(attempt.min(16) as i32);
    base * (0.8 + 0.4 * random())
}

/// `Retry-After` in seconds or as an HTTP date, in milliseconds.
fn retry_after(headers: &JsValue) -> Option<f64> {
    let get = Reflect::get(headers, &JsValue::from_str("get")).ok()?;
    let value = JsHost.call_sync(&get, headers, &[JsValue::from_str("retry-after")]).ok()?.as_string()?;
    if let Some(seconds) = crate::core::validate::parse_f64(value.trim()) {
        return Some((seconds * 1000.0).max(0.0));
    }
    let date = js_sys::Date::parse(&value);
    if date.is_finite() { Some((date - js_sys::Date::now()).max(0.0)) } else { None }
}

fn header_object(headers: &JsValue) -> JsValue {
    let object = Object::new();
    for pair in header_entries(headers).iter() {
        let pair: Array = pair.unchecked_into();
        let _ = Reflect::set(&object, &pair.get(0), &pair.get(1));
    }
    object.into()
}

fn reader_cancel(reader: &JsValue) -> JsValue {
    Reflect::get(reader, &JsValue::from_str("cancel"))
        .and_then(|f| JsHost.call_sync(&f, reader, &[]))
        .unwrap_or(JsValue::UNDEFINED)
}

fn cancel_body(response: &JsValue) {
    let body = Reflect::get(response, &JsValue::from_str("body")).unwrap_or(JsValue::UNDEFINED);
    let cancelled = Reflect::get(&body, &JsValue::from_str("cancel")).and_then(|f| JsHost.call_sync(&f, &body, &[]));
    if let Ok(p) = cancelled {
        silence(&p);
    }
}

/// The bytes of a chunk as a `TextDecoder` reads them: a `Uint8Array`, any other view (its bytes),
/// or an `ArrayBuffer`; `None` for anything else.
fn chunk_bytes(value: &JsValue) -> Option<Uint8Array> {
    if value.is_instance_of::<Uint8Array>() {
        return Some(value.clone().unchecked_into());
    }
    if js_sys::ArrayBuffer::is_view(value) {
        let field = |key: &str| Reflect::get(value, &JsValue::from_str(key)).ok();
        let buffer = field("buffer")?;
        let offset = field("byteOffset")?.as_f64()? as u32;
        let length = field("byteLength")?.as_f64()? as u32;
        return Some(Uint8Array::new_with_byte_offset_and_length(&buffer, offset, length));
    }
    value.is_instance_of::<js_sys::ArrayBuffer>().then(|| Uint8Array::new(value))
}

/// Feeds one network chunk to the decoder through the reused `window` buffer; a long line's bytes leave for `spill`
/// after each window (issue 34).
fn decode_chunk(
    decoder: &mut SseDecoder,
    bytes: &Uint8Array,
    window: &mut Vec<u8>,
    events: &mut SseEvents,
    spill: &mut Spill,
) -> Result<(), SseError> {
    let len = bytes.length();
    let mut at = 0u32;
    while at < len {
        let end = at.saturating_add(COPY_WINDOW).min(len);
        let size = end.saturating_sub(at) as usize;
        if window.len() != size {
            if size > window.capacity() {
                window
                    .try_reserve_exact(size.saturating_sub(window.len()))
                    .map_err(|_| SseError::OutOfMemory { bytes: size })?;
            }
            window.resize(size, 0);
        }
        bytes.subarray(at, end).copy_to(window);
        let before = events.spilled();
        decoder.push(window, events)?;
        spill.settle(events.spilled().saturating_sub(before));
        decoder.take_spill(&mut |text| spill.append(text));
        at = end;
    }
    Ok(())
}

/// Reads at most `limit` bytes of a response body as text, then cancels the rest.
async fn read_limited(response: &JsValue, limit: usize) -> String {
    let h = JsHost;
    let Ok(body) = h.get(response, "body") else { return String::new() };
    let Ok(reader) = h.get(&body, "getReader").and_then(|f| h.call_sync(&f, &body, &[])) else {
        return String::new();
    };
    let Ok(read) = h.get(&reader, "read") else { return String::new() };
    let mut bytes = Vec::new();
    while bytes.len() < limit {
        let Ok(chunk) = h.call(&read, &reader, &[]).await else { break };
        if h.get(&chunk, "done").map(|d| d.is_truthy()).unwrap_or(true) {
            break;
        }
        if let Ok(value) = h.get(&chunk, "value") {
            let array: Uint8Array = value.unchecked_into();
            bytes.extend(array.to_vec());
        }
    }
    bytes.truncate(limit);
    silence(&reader_cancel(&reader));
    String::from_utf8_lossy(&bytes).into_owned()
}
