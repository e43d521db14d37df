//! The assembler: wire formats report what arrived (a text delta for their block `k`, a tool
//! call opening, usage, the finish reason); the assembler keeps the content blocks, applies the
//! block rules of P-6.1.4 (open at the first delta, close when a block of another kind starts,
//! when the provider closes it, or at the end in content order), runs the incremental argument
//! parser (P-6.4.2) and the final parse (P-6.4.3), computes usage cost (§6.10), and queues
//! `MessageOp`s for the binding to apply to the JS message and turn into stream events.

use super::partial_json::{PartialJson, Patch, PatchOp};
use super::repair::parse_tool_arguments;
use super::request::{object, put};
use serde_json::{Map, Value, json};
use std::rc::Rc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockKind {
    Text,
    Thinking,
    ToolCall,
}

impl BlockKind {
    /// The prefix of its events: `text_start`, `thinking_delta`, `toolcall_end`, ...
    pub fn event_prefix(self) -> &'static str {
        match self {
            BlockKind::Text => "text",
            BlockKind::Thinking => "thinking",
            BlockKind::ToolCall => "toolcall",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    Stop,
    Length,
    ToolUse,
}

impl StopReason {
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Stop => "stop",
            StopReason::Length => "length",
            StopReason::ToolUse => "toolUse",
        }
    }
}

/// Token counts as a provider reports them; missing numbers are 0 (§6.10).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Usage {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    pub cache_write_1h: Option<f64>,
    pub reasoning: Option<f64>,
    /// The provider's own total token count (Gemini's `totalTokenCount`, which counts tool-use prompt tokens the
    /// other fields leave out); `totalTokens` is the sum of the four counts without it.
    pub total: Option<f64>,
    /// The cost the provider billed (OpenRouter's `usage.cost`, already resolved for BYOK): it replaces the
    /// catalog total and sets `totalFromProvider` (issue 33, as the reference).
    pub billed: Option<f64>,
}

/// What the binding applies to the JS message, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum MessageOp {
    /// `message[key] = value` (`responseId`, `responseModel`).
    Meta { key: &'static str, value: Value },
    /// `message.usage = value` (a complete usage object).
    Usage(Value),
    /// Push a new content block (`fields` in key order) at `index`; emit `<kind>_start`.
    Open { index: usize, kind: BlockKind, fields: Vec<(&'static str, Value)> },
    /// Append `delta` to the block's `text`/`thinking` (for tool calls: apply `patches` to its live
    /// `arguments`); emit `<kind>_delta`.
    Delta { index: usize, kind: BlockKind, delta: String, patches: Vec<Patch> },
    /// `block[key] = value` with no event (signatures).
    SetField { index: usize, key: &'static str, value: Value },
    /// Emit `<kind>_end`; for tool calls first replace `arguments` with the final value, or set
    /// `arguments: {}` and `argumentsError` when the text was not a JSON object.
    Close { index: usize, kind: BlockKind, arguments: Option<Arguments> },
    /// `stopReason` (and `rawStopReason` when given); emit `done`.
    Done { reason: StopReason, raw: Option<String> },
    /// `stopReason: "error"`, `errorMessage` (and `rawStopReason`); emit `error`.
    Fail { message: String, raw: Option<String> },
    /// The host's arguments text of the tool call at `index` becomes `text` (a marker of a string it keeps, see
    /// [`HostStrings`]): the provider sent the whole text at the end. No event.
    ArgsText { index: usize, text: String },
}

/// Issue 34: the long strings of a stream line that the host keeps (the binding parses a line of megabytes in JS and
/// hands the wire format a copy whose long strings are markers, `marker::whole_string`). Text and thinking deltas
/// pass through as markers, and the binding puts the originals back; a tool call's arguments fragment is JSON text
/// that the live parser must read, so the assembler reads it here in pieces, and the parser's long strings go back
/// to the host as markers: what this side holds stays bounded by a piece.
pub trait HostStrings {
    /// Calls `each` with the text of the string marker `marker`, in order, in pieces of a bounded size.
    fn read(&self, marker: &str, each: &mut dyn FnMut(&str));
    /// Keeps `text` on the host's side; the marker that stands for it.
    fn keep(&self, text: &str) -> String;
}

/// A patch string this long goes back to the host as a marker.
const KEEP_PATCH_TEXT_FROM: usize = 1024;

/// A tool call's final arguments at `toolcall_end`.
#[derive(Clone, Debug, PartialEq)]
pub enum Arguments {
    /// Parsed here (P-6.4.3): the arguments object, or the error text.
    Parsed(Result<Map<String, Value>, String>),
    /// The text is the host's (`Assembler::keep_args_in_host`): the host parses it (`JSON.parse`, which reads it as
    /// this crate would when `clean`), or hands it back for `final_arguments` (with `accept_null`).
    InHost { clean: bool, accept_null: bool },
}

struct Block {
    kind: BlockKind,
    key: String,
    open: bool,
    /// A tool call's live parser and its arguments text (empty while the host keeps the text, unless a provider
    /// sent the whole text at the end).
    args: Option<(PartialJson, String)>,
    /// The whole text came in one piece (`tool_args_complete`): it is here, whoever keeps the deltas.
    args_replaced: bool,
    signature: String,
    /// A field written once, as JSON text, when the block closes (`reasoning_details`, issue 33).
    at_close: Option<(&'static str, Value)>,
    /// A tool call's name (for the `null`-arguments rule).
    name: String,
}

/// A tool call's final arguments from its text (P-6.4.3): `repair::parse_tool_arguments`, except that a call of a
/// tool whose schema accepts `{}` (`accept_null`) whose text is `null` gets `{}` (issue 33: Groq sends `"null"` for a
/// call without parameters; an error would have the model retry forever, and the reference rejects the call).
pub fn final_arguments(text: &str, accept_null: bool) -> Result<Map<String, Value>, String> {
    match parse_tool_arguments(text) {
        Err(_) if accept_null && text.trim() == "null" => Ok(Map::new()),
        parsed => parsed,
    }
}

pub struct Assembler {
    blocks: Vec<Block>,
    ops: Vec<MessageOp>,
    /// Model prices per million tokens: input, output, cacheRead, cacheWrite.
    cost: [f64; 4],
    /// `model.cost.tiers`: the prices that replace `cost` once a request's input exceeds `inputTokensAbove` (issue 42).
    tiers: Vec<(f64, [f64; 4])>,
    /// openai-completions: text and thinking blocks stay open until the end (P-6.1.4).
    keep_open: bool,
    finished: bool,
    /// Issue 34: the host keeps each tool call's arguments text (it has every delta) and parses it at the end, so a
    /// tool call of megabytes is not held here a second time.
    args_in_host: bool,
    /// Tools whose schema accepts `{}`: a call of one whose arguments are `null` gets `{}` (issue 33).
    accept_null: Vec<String>,
    /// Set once a stream line's long strings are kept by the host (issue 34).
    host_strings: Option<Rc<dyn HostStrings>>,
}

impl Assembler {
    pub fn new(cost: [f64; 4], keep_open: bool) -> Self {
        Assembler {
            blocks: Vec::new(),
            ops: Vec::new(),
            cost,
            tiers: Vec::new(),
            keep_open,
            finished: false,
            args_in_host: false,
            accept_null: Vec::new(),
            host_strings: None,
        }
    }

    /// Reads `model.cost` and its `tiers` (missing numbers are 0; a tier without a threshold is ignored).
    pub fn for_model(model: &Value, keep_open: bool) -> Self {
        let rates = |c: Option<&Value>| {
            let price = |k: &str| c.and_then(|c| c.get(k)).and_then(Value::as_f64).unwrap_or(0.0);
            [price("input"), price("output"), price("cacheRead"), price("cacheWrite")]
        };
        let cost = model.get("cost");
        let mut asm = Assembler::new(rates(cost), keep_open);
        let tiers = cost.and_then(|c| c.get("tiers")).and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        asm.tiers = tiers
            .iter()
            .filter_map(|t| {
                Some((t.get("inputTokensAbove").and_then(Value::as_f64).filter(|n| n.is_finite())?, rates(Some(t))))
            })
            .collect();
        asm
    }

    /// The host keeps the tool calls' arguments text (issue 34): `Close` carries `Arguments::InHost`, unless the
    /// provider sent the whole text at the end.
    pub fn keep_args_in_host(&mut self) {
        self.args_in_host = true;
    }

    /// From now on the wire format may report strings that are markers of strings `host` keeps (issue 34).
    pub fn use_host_strings(&mut self, host: Rc<dyn HostStrings>) {
        self.host_strings = Some(host);
    }

    /// The host's string that `text` is the marker of, when it is exactly one.
    fn host_string(&self, text: &str) -> Option<Rc<dyn HostStrings>> {
        self.host_strings.clone().filter(|_| super::marker::whole_string(text).is_some())
    }

    /// The queued operations, oldest first, left in the queue.
    pub fn pending(&self) -> &[MessageOp] {
        &self.ops
    }

    /// The queued operations, oldest first (the queue keeps its allocation for the next event).
    pub fn drain(&mut self) -> std::vec::Drain<'_, MessageOp> {
        self.ops.drain(..)
    }

    pub fn finished(&self) -> bool {
        self.finished
    }

    pub fn has_tool_calls(&self) -> bool {
        self.blocks.iter().any(|b| b.kind == BlockKind::ToolCall)
    }

    pub fn meta(&mut self, key: &'static str, value: Value) {
        if !self.finished {
            self.ops.push(MessageOp::Meta { key, value });
        }
    }

    fn find_open(&self, key: &str) -> Option<usize> {
        self.blocks.iter().rposition(|b| b.open && b.key == key)
    }

    fn find_any(&self, key: &str) -> Option<usize> {
        self.blocks.iter().rposition(|b| b.key == key)
    }

    /// Closes open text/thinking blocks other than `except` (a block of another kind started).
    fn close_streaming_blocks(&mut self, except_kind: Option<BlockKind>) {
        if self.keep_open {
            return;
        }
        let to_close: Vec<usize> = self
            .blocks
            .iter()
            .enumerate()
            .filter(|(_, b)| b.open && b.kind != BlockKind::ToolCall && Some(b.kind) != except_kind)
            .map(|(i, _)| i)
            .collect();
        for index in to_close {
            self.close_index(index);
        }
    }

    fn open(&mut self, key: &str, kind: BlockKind, fields: Vec<(&'static str, Value)>) -> usize {
        self.close_streaming_blocks(Some(kind));
        let index = self.blocks.len();
        let args = (kind == BlockKind::ToolCall).then(|| (PartialJson::new(), String::new()));
        self.blocks.push(Block {
            kind,
            key: key.to_string(),
            open: true,
            args,
            args_replaced: false,
            signature: String::new(),
            at_close: None,
            name: String::new(),
        });
        self.ops.push(MessageOp::Open { index, kind, fields });
        index
    }

    /// `emit_empty`: an empty delta still emits `<kind>_delta` (Anthropic's `""` before a signature, Gemini's
    /// `{"text": "", "thoughtSignature": …}`), as the reference does; without it an empty delta only opens the block.
    fn streaming_delta(&mut self, key: &str, kind: BlockKind, delta: &str, emit_empty: bool) {
        if self.finished {
            return;
        }
        let index = match self.find_open(key).filter(|&i| self.blocks.get(i).is_some_and(|b| b.kind == kind)) {
            Some(index) => index,
            None => {
                let field = if kind == BlockKind::Text { "text" } else { "thinking" };
                let type_name = if kind == BlockKind::Text { "text" } else { "thinking" };
                self.open(key, kind, vec![("type", Value::from(type_name)), (field, Value::from(""))])
            }
        };
        if emit_empty || !delta.is_empty() {
            self.ops.push(MessageOp::Delta { index, kind, delta: delta.to_string(), patches: Vec::new() });
        }
    }

    pub fn text_delta(&mut self, key: &str, delta: &str) {
        self.streaming_delta(key, BlockKind::Text, delta, false);
    }

    pub fn thinking_delta(&mut self, key: &str, delta: &str) {
        self.streaming_delta(key, BlockKind::Thinking, delta, false);
    }

    /// A delta the provider sent, emitted even when empty (issue 33: the reference emits those).
    pub fn sent_delta(&mut self, key: &str, kind: BlockKind, delta: &str) {
        self.streaming_delta(key, kind, delta, true);
    }

    /// Opens a text or thinking block without text yet (a provider announced it).
    pub fn open_block(&mut self, key: &str, kind: BlockKind) {
        self.streaming_delta(key, kind, "", false);
    }

    /// A thinking block that arrives complete (redacted thinking): opened and closed at once.
    pub fn redacted_thinking(&mut self, key: &str, data: &str) {
        if self.finished {
            return;
        }
        let index = self.open(
            key,
            BlockKind::Thinking,
            vec![
                ("type", Value::from("thinking")),
                ("thinking", Value::from("")),
                ("thinkingSignature", Value::from(data)),
                ("redacted", Value::Bool(true)),
            ],
        );
        self.close_index(index);
    }

    /// The tools whose schema accepts an empty object (see `accept_null`).
    pub fn accept_null_arguments(&mut self, names: Vec<String>) {
        self.accept_null = names;
    }

    /// Sets a field of the latest block with `key` (no event).
    pub fn set_field(&mut self, key: &str, field: &'static str, value: Value) {
        if let Some(index) = self.find_any(key) {
            if field == "name"
                && let (Some(block), Some(name)) = (self.blocks.get_mut(index), value.as_str())
            {
                block.name = name.to_string();
            }
            self.ops.push(MessageOp::SetField { index, key: field, value });
        }
    }

    /// The value (an array at first) the open block with `key` writes to `field` as JSON when it closes; kept in
    /// Rust until then, so a value that grows with every event is written once.
    pub fn at_close(&mut self, key: &str, field: &'static str) -> Option<&mut Value> {
        let index = self.find_open(key)?;
        let block = self.blocks.get_mut(index)?;
        let (_, value) = block.at_close.get_or_insert_with(|| (field, Value::Array(Vec::new())));
        Some(value)
    }

    /// Appends to the latest block's signature (`thinkingSignature`), no event.
    pub fn append_signature(&mut self, key: &str, field: &'static str, delta: &str) {
        let Some(index) = self.find_any(key) else { return };
        let Some(block) = self.blocks.get_mut(index) else { return };
        block.signature.push_str(delta);
        let value = Value::String(block.signature.clone());
        self.ops.push(MessageOp::SetField { index, key: field, value });
    }

    pub fn tool_start(&mut self, key: &str, id: &str, name: &str) {
        if self.finished {
            return;
        }
        let fields = vec![
            ("type", Value::from("toolCall")),
            ("id", Value::from(id)),
            ("name", Value::from(name)),
            ("arguments", Value::Object(Map::new())),
        ];
        let index = self.open(key, BlockKind::ToolCall, fields);
        if let Some(block) = self.blocks.get_mut(index) {
            block.name = name.to_string();
        }
    }

    /// Whether a tool call with this key is open.
    pub fn has_open(&self, key: &str) -> bool {
        self.find_open(key).is_some()
    }

    pub fn tool_args_delta(&mut self, key: &str, delta: &str) {
        if self.finished {
            return;
        }
        let Some(index) = self.find_open(key) else { return };
        let keep_text = !self.args_in_host;
        let host = self.host_string(delta);
        let Some(Block { args: Some((parser, text)), .. }) = self.blocks.get_mut(index) else { return };
        let mut patches = Vec::new();
        match host {
            None => {
                if keep_text {
                    text.push_str(delta);
                }
                parser.push(delta, &mut patches);
            }
            Some(host) => {
                // A fragment the host keeps: the parser reads it piece by piece, and its long strings go back.
                let mut fresh = Vec::new();
                host.read(delta, &mut |piece| {
                    if keep_text {
                        text.push_str(piece);
                    }
                    parser.push(piece, &mut fresh);
                    for mut patch in fresh.drain(..) {
                        if let PatchOp::SetString(s) | PatchOp::AppendString(s) = &mut patch.op
                            && s.len() >= KEEP_PATCH_TEXT_FROM
                        {
                            *s = host.keep(s);
                        }
                        patches.push(patch);
                    }
                });
            }
        }
        self.ops.push(MessageOp::Delta { index, kind: BlockKind::ToolCall, delta: delta.to_string(), patches });
    }

    /// Arguments that arrive as changes at paths (Gemini 3's `partialArgs`), not as text: `patches` update the live
    /// value; `delta` is what the `toolcall_delta` event carries. The final text comes by `tool_args_complete`.
    pub fn tool_args_patched(&mut self, key: &str, delta: &str, patches: Vec<Patch>) {
        if self.finished {
            return;
        }
        let Some(index) = self.find_open(key) else { return };
        self.ops.push(MessageOp::Delta { index, kind: BlockKind::ToolCall, delta: delta.to_string(), patches });
    }

    /// The provider sent the complete argument text (Responses `.done`): it replaces what arrived.
    pub fn tool_args_complete(&mut self, key: &str, full: &str) {
        let Some(index) = self.find_open(key) else { return };
        let host = self.host_string(full);
        let in_host = self.args_in_host;
        let Some(Block { args: Some((parser, text)), args_replaced, .. }) = self.blocks.get_mut(index) else { return };
        match host {
            None => {
                *text = full.to_string();
                *args_replaced = true;
            }
            // A text the host keeps replaces the host's text; a fresh parser reads it only to say whether
            // `JSON.parse` may read it where it is (`clean`).
            Some(host) if in_host => {
                let mut fresh = PartialJson::new();
                let mut ignored = Vec::new();
                host.read(full, &mut |piece| {
                    fresh.push(piece, &mut ignored);
                    ignored.clear();
                });
                *parser = fresh;
                self.ops.push(MessageOp::ArgsText { index, text: full.to_string() });
            }
            Some(host) => {
                text.clear();
                host.read(full, &mut |piece| text.push_str(piece));
                *args_replaced = true;
            }
        }
    }

    /// Closes the latest open block with `key` (the provider closed it).
    pub fn close(&mut self, key: &str) {
        if let Some(index) = self.find_open(key) {
            self.close_index(index);
        }
    }

    fn close_index(&mut self, index: usize) {
        let Some(block) = self.blocks.get_mut(index) else { return };
        if !block.open {
            return;
        }
        block.open = false;
        if let Some((field, value)) = block.at_close.take() {
            self.ops.push(MessageOp::SetField { index, key: field, value: Value::String(value.to_string()) });
        }
        let accept_null = self.accept_null.contains(&block.name);
        let in_host = self.args_in_host && !block.args_replaced;
        let arguments = block.args.as_ref().map(|(parser, text)| {
            if in_host {
                Arguments::InHost { clean: parser.clean(), accept_null }
            } else {
                Arguments::Parsed(final_arguments(text, accept_null))
            }
        });
        self.ops.push(MessageOp::Close { index, kind: block.kind, arguments });
    }

    fn close_all(&mut self) {
        for index in 0..self.blocks.len() {
            self.close_index(index);
        }
    }

    pub fn usage(&mut self, usage: &Usage) {
        if self.finished {
            return;
        }
        let clamp = |n: f64| if n.is_finite() && n > 0.0 { n } else { 0.0 };
        let (input, output, read, write) =
            (clamp(usage.input), clamp(usage.output), clamp(usage.cache_read), clamp(usage.cache_write));
        // The prices of the highest tier whose threshold the request's input (fresh, read and written) exceeds, as the
        // reference's `calculateCost` picks them.
        let mut rates = self.cost;
        let mut matched = -1.0;
        for (above, tier) in &self.tiers {
            if input + read + write > *above && *above > matched {
                rates = *tier;
                matched = *above;
            }
        }
        let [p_in, p_out, p_read, p_write] = rates;
        // The reference's arithmetic, operation for operation, so the numbers are equal to the last bit: the rate per
        // token times the count; a 1-hour cache write costs twice the input rate (issue 33), a 5-minute one the
        // cache-write rate.
        let long_write = usage.cache_write_1h.map_or(0.0, clamp);
        let short_write = write - long_write;
        let cost = [
            (p_in / 1e6) * input,
            (p_out / 1e6) * output,
            (p_read / 1e6) * read,
            (p_write * short_write + p_in * 2.0 * long_write) / 1e6,
        ];
        let mut fields = Map::new();
        put(&mut fields, "input", Value::from(input));
        put(&mut fields, "output", Value::from(output));
        put(&mut fields, "cacheRead", Value::from(read));
        put(&mut fields, "cacheWrite", Value::from(write));
        if let Some(n) = usage.cache_write_1h {
            put(&mut fields, "cacheWrite1h", Value::from(clamp(n)));
        }
        if let Some(n) = usage.reasoning {
            put(&mut fields, "reasoning", Value::from(clamp(n)));
        }
        put(&mut fields, "totalTokens", Value::from(usage.total.map_or(input + output + read + write, clamp)));
        let billed = usage.billed.filter(|n| n.is_finite() && *n >= 0.0);
        let cost = object([
            ("input", Value::from(cost[0])),
            ("output", Value::from(cost[1])),
            ("cacheRead", Value::from(cost[2])),
            ("cacheWrite", Value::from(cost[3])),
            ("total", Value::from(billed.unwrap_or(cost[0] + cost[1] + cost[2] + cost[3]))),
            ("totalFromProvider", Value::Bool(billed.is_some())),
        ]);
        put(&mut fields, "cost", cost);
        self.ops.push(MessageOp::Usage(Value::Object(fields)));
    }

    /// Open blocks close in content order, then `done`.
    pub fn finish(&mut self, reason: StopReason, raw: Option<String>) {
        if self.finished {
            return;
        }
        self.close_all();
        self.finished = true;
        self.ops.push(MessageOp::Done { reason, raw });
    }

    /// Open blocks close in content order, then `error` with this message.
    pub fn fail(&mut self, message: impl Into<String>, raw: Option<String>) {
        if self.finished {
            return;
        }
        self.close_all();
        self.finished = true;
        self.ops.push(MessageOp::Fail { message: message.into(), raw });
    }
}

/// Applies operations to a JSON model of the message and returns the event types they emit:
/// the reference applier for native fixture tests (the binding does the same on JS objects).
pub fn apply_native(message: &mut Value, op: &MessageOp) -> Option<String> {
    match op {
        MessageOp::Meta { key, value } => {
            if let Some(m) = message.as_object_mut() {
                m.insert((*key).to_string(), value.clone());
            }
            None
        }
        MessageOp::Usage(usage) => {
            if let Some(m) = message.as_object_mut() {
                m.insert("usage".into(), usage.clone());
            }
            None
        }
        MessageOp::Open { kind, fields, .. } => {
            let block: Map<String, Value> = fields.iter().map(|(k, v)| ((*k).to_string(), v.clone())).collect();
            if let Some(list) = message.get_mut("content").and_then(Value::as_array_mut) {
                list.push(Value::Object(block));
            }
            Some(format!("{}_start", kind.event_prefix()))
        }
        MessageOp::Delta { index, kind, delta, patches } => {
            let block = message.get_mut("content").and_then(|c| c.get_mut(*index))?;
            match kind {
                BlockKind::Text | BlockKind::Thinking => {
                    let field = if *kind == BlockKind::Text { "text" } else { "thinking" };
                    if let Some(Value::String(s)) = block.get_mut(field) {
                        s.push_str(delta);
                    }
                }
                BlockKind::ToolCall => {
                    if let Some(args) = block.get_mut("arguments") {
                        for patch in patches {
                            super::partial_json::apply(args, patch);
                        }
                    }
                }
            }
            Some(format!("{}_delta", kind.event_prefix()))
        }
        MessageOp::SetField { index, key, value } => {
            if let Some(Value::Object(block)) = message.get_mut("content").and_then(|c| c.get_mut(*index)) {
                block.insert((*key).to_string(), value.clone());
            }
            None
        }
        MessageOp::Close { index, kind, arguments } => {
            if let Some(Value::Object(block)) = message.get_mut("content").and_then(|c| c.get_mut(*index)) {
                match arguments {
                    Some(Arguments::Parsed(Ok(args))) => {
                        block.insert("arguments".into(), Value::Object(args.clone()));
                    }
                    Some(Arguments::Parsed(Err(error))) => {
                        block.insert("arguments".into(), Value::Object(Map::new()));
                        block.insert("argumentsError".into(), Value::String(error.clone()));
                    }
                    // Native callers never keep the text elsewhere.
                    Some(Arguments::InHost { .. }) | None => {}
                }
            }
            Some(format!("{}_end", kind.event_prefix()))
        }
        MessageOp::Done { reason, raw } => {
            if let Some(m) = message.as_object_mut() {
                m.insert("stopReason".into(), json!(reason.as_str()));
                if let Some(raw) = raw {
                    m.insert("rawStopReason".into(), json!(raw));
                }
            }
            Some("done".into())
        }
        MessageOp::Fail { message: text, raw } => {
            if let Some(m) = message.as_object_mut() {
                m.insert("stopReason".into(), json!("error"));
                m.insert("errorMessage".into(), json!(text));
                if let Some(raw) = raw {
                    m.insert("rawStopReason".into(), json!(raw));
                }
            }
            Some("error".into())
        }
        // Native callers never keep the text elsewhere.
        MessageOp::ArgsText { .. } => None,
    }
}

/// Whether a tool's `parameters` schema accepts `{}`: none, `true`, or an object schema (no `type`, or `"object"`,
/// or a list holding it) that requires no property and no minimum number of them; a schema this cannot read does not.
pub fn accepts_empty_object(schema: Option<&Value>) -> bool {
    let Some(Value::Object(schema)) = schema else { return matches!(schema, None | Some(Value::Bool(true))) };
    let object_type = match schema.get("type") {
        None => true,
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        Some(_) => false,
    };
    let requires_none = schema.get("required").is_none_or(|r| r.as_array().is_some_and(Vec::is_empty));
    let no_minimum = schema.get("minProperties").is_none_or(|n| n.as_f64() == Some(0.0));
    let unconditional = ["anyOf", "oneOf", "allOf", "not", "if", "$ref"].iter().all(|k| !schema.contains_key(*k));
    object_type && requires_none && no_minimum && unconditional
}

#[cfg(test)]
mod issue_33_tests {
    use super::accepts_empty_object;
    use serde_json::json;

    #[test]
    fn issue_33_which_schemas_accept_an_empty_object() {
        for yes in [
            json!({"type": "object", "properties": {}}),
            json!({}),
            json!({"type": ["object", "null"], "required": []}),
            json!(true),
        ] {
            assert!(accepts_empty_object(Some(&yes)), "{yes}");
        }
        for no in [
            json!({"type": "object", "required": ["a"]}),
            json!({"type": "string"}),
            json!({"minProperties": 1}),
            json!({"anyOf": [{"type": "object"}]}),
            json!("\u{fdd0}v1.2\u{fdd1}"),
        ] {
            assert!(!accepts_empty_object(Some(&no)), "{no}");
        }
        assert!(accepts_empty_object(None), "a tool without parameters");
    }
}

#[cfg(test)]
mod issue_34_tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
    use super::*;
    use crate::providers::marker;
    use std::cell::{Cell, RefCell};

    /// The host's side in a test: a table of strings, read in pieces of `piece` bytes.
    struct Table {
        strings: RefCell<Vec<String>>,
        piece: usize,
        largest: Cell<usize>,
    }

    impl HostStrings for Table {
        fn read(&self, marker: &str, each: &mut dyn FnMut(&str)) {
            let index = marker::whole_string(marker).unwrap();
            let text = self.strings.borrow()[index].clone();
            let mut rest = text.as_str();
            while !rest.is_empty() {
                let mut cut = self.piece.min(rest.len());
                while !rest.is_char_boundary(cut) {
                    cut -= 1;
                }
                let (head, tail) = rest.split_at(cut);
                each(head);
                rest = tail;
            }
        }
        fn keep(&self, text: &str) -> String {
            self.largest.set(self.largest.get().max(text.len()));
            let mut strings = self.strings.borrow_mut();
            strings.push(text.to_string());
            marker::string_marker(strings.len() - 1, text.len())
        }
    }

    /// The message the ops build, the table's markers put back.
    fn built(asm: &mut Assembler, table: Option<&Table>) -> Value {
        let mut message = json!({"content": []});
        let ops: Vec<MessageOp> = asm.drain().collect();
        for op in &ops {
            apply_native(&mut message, op);
        }
        fn restore(v: &mut Value, table: &Table) {
            match v {
                Value::String(s) => {
                    if let Some(i) = marker::whole_string(s) {
                        *s = table.strings.borrow()[i].clone();
                    }
                }
                Value::Array(items) => items.iter_mut().for_each(|i| restore(i, table)),
                Value::Object(map) => map.values_mut().for_each(|i| restore(i, table)),
                _ => {}
            }
        }
        if let Some(table) = table {
            restore(&mut message, table);
        }
        message
    }

    #[test]
    fn issue_34_a_tool_call_fragment_the_host_keeps_is_read_in_pieces_and_its_long_strings_go_back() {
        let content = "é😀\"\\n line ".repeat(20_000);
        let args = serde_json::to_string(&json!({"path": "a.txt", "content": content, "n": [1, 2]})).unwrap();
        for split in [args.len(), 17, 5000] {
            let (first, second) = args.split_at(split.min(args.len()));
            // Without the host: the fragments as they are.
            let mut plain = Assembler::new([0.0; 4], false);
            plain.tool_start("t", "call_1", "write");
            plain.tool_args_delta("t", first);
            plain.tool_args_delta("t", second);
            plain.close("t");
            let expected = built(&mut plain, None);
            // With the host keeping the first fragment.
            let table =
                Rc::new(Table { strings: RefCell::new(vec![first.to_string()]), piece: 4096, largest: Cell::new(0) });
            let mut asm = Assembler::new([0.0; 4], false);
            asm.use_host_strings(table.clone());
            asm.tool_start("t", "call_1", "write");
            asm.tool_args_delta("t", &marker::string_marker(0, first.len()));
            asm.tool_args_delta("t", second);
            let ops_text: usize = asm
                .pending()
                .iter()
                .map(|op| match op {
                    MessageOp::Delta { patches, .. } => patches
                        .iter()
                        .map(|p| match &p.op {
                            PatchOp::SetString(s) | PatchOp::AppendString(s) => s.len(),
                            _ => 0,
                        })
                        .sum(),
                    _ => 0,
                })
                .sum();
            asm.close("t");
            assert_eq!(built(&mut asm, Some(&table)), expected, "split at {split}");
            if split > 5000 {
                // The operations hold markers, not the text; each kept string is at most a piece.
                assert!(ops_text < 64 * 1024, "{ops_text} bytes of patch text");
                assert!(table.largest.get() <= 4096);
            }
        }
    }

    #[test]
    fn issue_34_a_whole_arguments_text_the_host_keeps_replaces_the_host_text() {
        let args = serde_json::to_string(&json!({"content": "x".repeat(3000)})).unwrap();
        let table = Rc::new(Table { strings: RefCell::new(vec![args.clone()]), piece: 100, largest: Cell::new(0) });
        let mut asm = Assembler::new([0.0; 4], false);
        asm.keep_args_in_host();
        asm.use_host_strings(table.clone());
        asm.tool_start("t", "call_1", "write");
        asm.tool_args_complete("t", &marker::string_marker(0, args.len()));
        asm.close("t");
        let ops: Vec<MessageOp> = asm.drain().collect();
        assert!(matches!(&ops[1], MessageOp::ArgsText { index: 0, text } if marker::whole_string(text) == Some(0)));
        assert!(matches!(&ops[2], MessageOp::Close { arguments: Some(Arguments::InHost { clean: true, .. }), .. }));
        // A marker the assembler was not told about is text like any other.
        let mut asm = Assembler::new([0.0; 4], false);
        asm.tool_start("t", "call_1", "write");
        asm.tool_args_complete("t", &marker::string_marker(0, args.len()));
        asm.close("t");
        let ops: Vec<MessageOp> = asm.drain().collect();
        assert!(matches!(&ops[1], MessageOp::Close { arguments: Some(Arguments::Parsed(Err(_))), .. }));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
mod issue_42_tests {
    use super::{Assembler, MessageOp, Usage};
    use serde_json::{Value, json};

    /// The `usage.cost` the assembler renders for these token counts.
    fn cost(model: &Value, input: f64, output: f64, read: f64, write: f64) -> Value {
        let mut asm = Assembler::for_model(model, false);
        asm.usage(&Usage { input, output, cache_read: read, cache_write: write, ..Usage::default() });
        match asm.drain().next() {
            Some(MessageOp::Usage(usage)) => usage["cost"].clone(),
            other => panic!("expected a usage, got {other:?}"),
        }
    }

    #[test]
    fn issue_42_cost_tiers_price_a_request_above_their_threshold_as_the_reference() {
        // gpt-5.4's prices (the model catalogue), with a second made-up tier to check the highest match wins.
        let model = json!({"cost": {"input": 2.5, "output": 15, "cacheRead": 0.25, "cacheWrite": 0, "tiers": [
            {"inputTokensAbove": 272000, "input": 5, "output": 22.5, "cacheRead": 0.5, "cacheWrite": 0},
            {"inputTokensAbove": 500000, "input": 7, "output": 30, "cacheRead": 0.7, "cacheWrite": 0},
            {"input": 99}
        ]}});
        let at = |input: f64, read: f64| cost(&model, input, 1000.0, read, 0.0);
        // At the threshold: the base prices; the threshold counts fresh and cached input together.
        assert_eq!(at(200_000.0, 72_000.0)["input"], json!((2.5 / 1e6) * 200_000.0));
        assert_eq!(at(200_000.0, 72_001.0)["input"], json!((5.0 / 1e6) * 200_000.0));
        assert_eq!(at(200_000.0, 72_001.0)["output"], json!((22.5 / 1e6) * 1000.0));
        assert_eq!(at(200_000.0, 72_001.0)["cacheRead"], json!((0.5 / 1e6) * 72_001.0));
        assert_eq!(at(600_000.0, 0.0)["output"], json!((30.0 / 1e6) * 1000.0));
        // A model without tiers, or a tier without a threshold (ignored), keeps its prices.
        assert_eq!(cost(&json!({"cost": {"input": 1}}), 1e7, 0.0, 0.0, 0.0)["input"], json!(10.0));
    }
}
