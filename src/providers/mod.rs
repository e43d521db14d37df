//! Built-in providers (§6), pure Rust: bytes in, message operations out. `sse` decodes the byte
//! stream, each wire-format module builds its request and turns provider events into calls on
//! the `Assembler`, which applies the block rules of P-6.1.4 and emits `MessageOp`s. Applying
//! those to the JS message object (and doing HTTP) is the binding's job; nothing here names JS.

pub mod anthropic;
pub mod assemble;
pub mod google;
pub mod json;
pub mod marker;
pub mod openai_completions;
pub mod openai_responses;
pub mod partial_json;
pub mod repair;
pub mod request;
pub mod sse;
pub mod strict;
pub mod transcript;

pub use assemble::{Arguments, Assembler, BlockKind, MessageOp, StopReason, Usage};
pub use json::Json;
pub use request::RequestInput;

use serde_json::Value;

/// An HTTP request ready for `fetch` (method POST, JSON body).
#[derive(Debug, Clone, PartialEq)]
pub struct HttpRequest {
    pub url: String,
    /// Provider defaults; the binding merges `model.headers` and `options.headers` over them.
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

/// One wire format: builds its request and maps its parsed stream events onto an `Assembler`.
pub trait WireFormat {
    /// `Err` is the `errorMessage` of the final `error` event (e.g. a missing key).
    fn build_request(&self, input: &RequestInput<'_>) -> Result<HttpRequest, String>;
    /// A fresh per-response mapper of this wire format's events.
    fn stream_mapper(&self, input: &RequestInput<'_>) -> Box<dyn StreamMapper>;
    /// A fresh per-response mapper: the wire format's, and first the rules every format shares (issue 33: the
    /// tools whose schema accepts `{}`, so a call of one with `null` arguments gets `{}`).
    fn mapper(&self, input: &RequestInput<'_>) -> Box<dyn StreamMapper> {
        let accept_empty = transcript::system_head(input.messages)
            .1
            .iter()
            .filter(|tool| assemble::accepts_empty_object(tool.get("parameters")))
            .filter_map(|tool| tool.get("name").and_then(Value::as_str).map(str::to_string))
            .collect();
        Box::new(Shared { inner: self.stream_mapper(input), accept_empty: Some(accept_empty) })
    }
}

/// Hands the assembler what every wire format shares before the first event, then forwards.
struct Shared {
    inner: Box<dyn StreamMapper>,
    accept_empty: Option<Vec<String>>,
}

impl Shared {
    fn prepare(&mut self, asm: &mut Assembler) {
        if let Some(names) = self.accept_empty.take() {
            asm.accept_null_arguments(names);
        }
    }
}

impl StreamMapper for Shared {
    fn on_event(&mut self, event: Option<&str>, data: &Json<'_>, asm: &mut Assembler) {
        self.prepare(asm);
        self.inner.on_event(event, data, asm);
    }
    fn on_event_text(&mut self, event: Option<&str>, data: &str, asm: &mut Assembler) -> bool {
        self.prepare(asm);
        self.inner.on_event_text(event, data, asm)
    }
    fn on_text(&mut self, event: Option<&str>, data: &str, asm: &mut Assembler) -> bool {
        self.prepare(asm);
        self.inner.on_text(event, data, asm)
    }
    fn on_end(&mut self, asm: &mut Assembler) {
        self.prepare(asm);
        self.inner.on_end(asm);
    }
}

/// Turns one response's events (SSE `event` name and the JSON of its `data`) into assembler calls.
pub trait StreamMapper {
    /// Called per SSE event whose data parsed as JSON (`json::parse_data`). A provider error ends
    /// the stream through `asm.fail(..)`; the mapper is not called again after the assembler finished.
    fn on_event(&mut self, event: Option<&str>, data: &Json<'_>, asm: &mut Assembler);
    /// A shortcut for the wire format's commonest events, tried before `data` is parsed: either
    /// does exactly what `on_event` would do with the parsed `data` and returns true, or does
    /// nothing and returns false (the event then takes the general path). Default: false.
    fn on_event_text(&mut self, _event: Option<&str>, _data: &str, _asm: &mut Assembler) -> bool {
        false
    }
    /// Called per SSE event whose data is not JSON (e.g. `[DONE]`); true when the mapper decided what the event means
    /// (then `on_unparsed` adds nothing). Default: undecided.
    fn on_text(&mut self, _event: Option<&str>, _data: &str, _asm: &mut Assembler) -> bool {
        false
    }
    /// The byte stream ended. Must finish the assembler (done or error) if events did not.
    fn on_end(&mut self, asm: &mut Assembler);
}

/// An SSE event whose data is not JSON, for both drivers (the JS binding's and the native tests'): the mapper's when it
/// decides what the event means (Anthropic: a `ping` or an event it does not know is skipped, whatever its data);
/// otherwise `[DONE]` is nothing and anything else fails the stream with P-6.3.2's `Invalid JSON in provider stream`.
pub fn on_unparsed(mapper: &mut dyn StreamMapper, event: Option<&str>, data: &str, asm: &mut Assembler) {
    if !mapper.on_text(event, data, asm) && !asm.finished() && data.trim() != "[DONE]" {
        asm.fail(request::invalid_json_message(data), None);
    }
}

/// The wire format for `model.api`, or `None` (P-6.1.1).
pub fn wire_format(api: &str) -> Option<Box<dyn WireFormat>> {
    match api {
        "openai-completions" => Some(Box::new(openai_completions::OpenAiCompletions)),
        "openai-responses" => Some(Box::new(openai_responses::OpenAiResponses)),
        "anthropic-messages" => Some(Box::new(anthropic::AnthropicMessages)),
        "google-generative-ai" => Some(Box::new(google::GoogleGenerativeAi)),
        _ => None,
    }
}
