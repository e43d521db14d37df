//! Applying the assembler's operations (`MessageOp`) to the one JS message object every event shares, and pushing
//! the events into the `AssistantMessageEventStream`: the JS half of `providers::assemble`.

use super::*;

impl Driver {
    pub(super) fn apply_all(&self, asm: &mut Assembler) -> Result<(), End> {
        let mut texts = Texts::of(asm.pending());
        for op in asm.drain() {
            self.apply(op, &mut texts);
        }
        Ok(())
    }

    fn content(&self, index: usize) -> JsValue {
        let content = self.h.get(&self.message, "content").unwrap_or(JsValue::UNDEFINED);
        Reflect::get_u32(&content, index as u32).unwrap_or(JsValue::UNDEFINED)
    }

    fn event(&self, kind: &'static str, index: usize, extra: &[(&str, JsValue)]) {
        let h = self.h;
        let mut entries = vec![("type", h.constant(kind)), ("contentIndex", h.number(index as f64))];
        entries.extend(extra.iter().cloned());
        entries.push(("partial", self.message.clone()));
        push(&self.stream, &h.object(&entries));
    }

    /// A delta: the block grows and its event is pushed, in one call for the common cases (a text
    /// or thinking delta, a tool-call fragment with at most one patch).
    fn delta(&self, index: usize, kind: BlockKind, delta: &str, patches: &[Patch], texts: &mut Texts) {
        // `Texts` hands out the strings in `op_texts` order: the delta, then the patches.
        let delta = self.restored(texts.next(delta));
        let (code, single) = match (kind, patches) {
            (BlockKind::Text, _) => (delta_kind::TEXT, None),
            (BlockKind::Thinking, _) => (delta_kind::THINKING, None),
            (BlockKind::ToolCall, [one]) => (delta_kind::TOOL_CALL, Some(one)),
            (BlockKind::ToolCall, []) => (delta_kind::TOOL_CALL, None),
            (BlockKind::ToolCall, several) => {
                let root = self.h.get(&self.content(index), "arguments").unwrap_or(JsValue::UNDEFINED);
                for p in several {
                    let (op, value) = encode_patch(&p.op, texts);
                    let _ = patch(&root, &self.path(&p.path), op, &self.restored(value));
                }
                (delta_kind::TOOL_CALL, None)
            }
        };
        let index = u32::try_from(index).unwrap_or(u32::MAX);
        let (path, op, value) = match single {
            Some(p) => {
                let (op, value) = encode_patch(&p.op, texts);
                (JsValue::from(self.path(&p.path)), i32::from(op), self.restored(value))
            }
            None => (JsValue::UNDEFINED, patch_op::NONE, JsValue::UNDEFINED),
        };
        push_delta(&self.stream, &self.message, index, code, &delta, &path, op, &value);
    }

    /// A patch path as a JS array; the last one is reused while the path stays the same.
    fn path(&self, path: &[PathSeg]) -> Array {
        let mut last = self.last_path.borrow_mut();
        if let Some((_, array)) = last.as_ref().filter(|(segs, _)| segs.as_slice() == path) {
            return array.clone();
        }
        let array: Array = path
            .iter()
            .map(|seg| match seg {
                PathSeg::Key(k) => js_str(k),
                PathSeg::Index(i) => JsValue::from_f64(*i as f64),
            })
            .collect();
        *last = Some((path.to_vec(), array.clone()));
        array
    }

    /// Applies one operation to the message and pushes its event (P-6.1.4).
    fn apply(&self, op: MessageOp, texts: &mut Texts) {
        let h = self.h;
        match op {
            MessageOp::Meta { key, value } => {
                let _ = h.set(&self.message, key, &self.restored(js(&value)));
            }
            MessageOp::Usage(usage) => {
                let _ = h.set(&self.message, "usage", &self.restored(js(&usage)));
            }
            MessageOp::Open { index, kind, fields } => {
                let entries: Vec<(&str, JsValue)> = fields.iter().map(|(k, v)| (*k, self.restored(js(v)))).collect();
                if let Ok(content) = h.get(&self.message, "content") {
                    let _ = h.array_push(&content, &h.object(&entries));
                }
                self.event(event_name(kind, "start"), index, &[]);
            }
            MessageOp::Delta { index, kind, delta, patches } => self.delta(index, kind, &delta, &patches, texts),
            MessageOp::SetField { index, key, value } => {
                let _ = h.set(&self.content(index), key, &self.restored(js(&value)));
            }
            MessageOp::ArgsText { index, text } => set_args_text(&self.content(index), &self.restored(js_str(&text))),
            MessageOp::Close { index, kind, arguments } => {
                let block = self.content(index);
                match kind {
                    BlockKind::Text | BlockKind::Thinking => {
                        let field = if kind == BlockKind::Text { "text" } else { "thinking" };
                        let text = h.get(&block, field).unwrap_or(JsValue::UNDEFINED);
                        self.event(event_name(kind, "end"), index, &[("content", text)]);
                    }
                    BlockKind::ToolCall => {
                        let parsed = match arguments {
                            Some(Arguments::Parsed(parsed)) => Some(parsed),
                            Some(Arguments::InHost { clean, accept_null }) => {
                                let args = if clean { parse_args(&block) } else { JsValue::UNDEFINED };
                                if args.is_undefined() {
                                    // Not read alike by JSON.parse and the core's parser (or not an object): the core
                                    // parses it, with P-6.4.3's repair and error texts.
                                    let text = match wtf::parse(&take_args_text(&block)) {
                                        Ok(Value::String(text)) => text,
                                        _ => String::new(),
                                    };
                                    Some(final_arguments(&text, accept_null))
                                } else {
                                    let _ = h.set(&block, "arguments", &args);
                                    None
                                }
                            }
                            None => None,
                        };
                        match parsed {
                            Some(Ok(args)) => {
                                let _ = h.set(&block, "arguments", &self.restored(js(&Value::Object(args))));
                            }
                            Some(Err(error)) => {
                                let _ = h.set(&block, "arguments", &h.object(&[]));
                                let _ = h.set(&block, "argumentsError", &self.restored(h.string(&error)));
                            }
                            None => {}
                        }
                        self.event("toolcall_end", index, &[("toolCall", block.clone())]);
                    }
                }
            }
            MessageOp::Done { reason, raw } => {
                let _ = h.set(&self.message, "stopReason", &h.string(reason.as_str()));
                if let Some(raw) = raw {
                    let _ = h.set(&self.message, "rawStopReason", &h.string(&raw));
                }
                let event = h.object(&[
                    ("type", h.constant("done")),
                    ("reason", h.string(reason.as_str())),
                    ("message", self.message.clone()),
                ]);
                push(&self.stream, &event);
            }
            MessageOp::Fail { message, raw } => self.fail(self.aborted(), message, raw),
        }
    }

    /// The final `error` event for a request that ended early.
    pub(super) fn end(&self, end: End) {
        match end {
            End::Aborted => self.fail(true, String::new(), None),
            End::Error(text) => self.fail(self.aborted(), text, None),
        }
    }

    /// The final `error` event: `stopReason` `aborted` (with the P-6.1.5 text) or `error`.
    fn fail(&self, aborted: bool, message: String, raw: Option<String>) {
        let h = self.h;
        let reason = if aborted { "aborted" } else { "error" };
        // A long string of a stream line is put back before the secrets are scrubbed from it (issue 34).
        let message = if message.contains(marker::START) {
            super::super::host::rust_string(&self.restored(js_str(&message))).unwrap_or(message)
        } else {
            message
        };
        let text = if aborted { REQUEST_ABORTED.to_string() } else { self.scrub(message) };
        let _ = h.set(&self.message, "stopReason", &h.constant(reason));
        let _ = h.set(&self.message, "errorMessage", &h.string(&text));
        if let Some(raw) = raw {
            let _ = h.set(&self.message, "rawStopReason", &h.string(&raw));
        }
        let event =
            h.object(&[("type", h.constant("error")), ("reason", h.constant(reason)), ("error", self.message.clone())]);
        push(&self.stream, &event);
    }
}

/// A scalar of a patch as JS.
fn scalar(v: Scalar) -> JsValue {
    match v {
        Scalar::Null => JsValue::NULL,
        Scalar::Bool(b) => JsValue::from_bool(b),
        Scalar::Number(x) => JsValue::from_f64(x),
    }
}

/// A patch's `patch_op` code and value for the `patch` snippet.
fn encode_patch(op: &PatchOp, texts: &mut Texts) -> (u8, JsValue) {
    match op {
        PatchOp::SetObject => (patch_op::SET_OBJECT, JsValue::UNDEFINED),
        PatchOp::SetArray => (patch_op::SET_ARRAY, JsValue::UNDEFINED),
        PatchOp::SetValue(v) => (patch_op::SET_VALUE, scalar(*v)),
        PatchOp::SetString(s) => (patch_op::SET_STRING, texts.next(s)),
        PatchOp::AppendString(s) => (patch_op::APPEND_STRING, texts.next(s)),
    }
}

/// The strings a batch of operations passes to JS (delta texts, string patches), decoded as one
/// JS string and handed out as slices in `op_texts` order: one `TextDecoder` call per network
/// chunk instead of one or two per delta (a `String.prototype.slice` is much cheaper).
struct Texts {
    /// `None` for at most one string, which is simply decoded.
    joined: Option<JsString>,
    /// UTF-16 offset of the next string.
    at: u32,
}

impl Texts {
    fn of(ops: &[MessageOp]) -> Texts {
        let mut joined = String::new();
        let mut count = 0usize;
        for op in ops {
            op_texts(op, |text| {
                joined.push_str(text);
                count += 1;
            });
        }
        // Offsets are counted on the Rust text, so a batch with encoded lone surrogates goes one by one.
        let joined = (count > 1 && !wtf::has_stand_in(&joined)).then(|| JsString::from(joined.as_str()));
        Texts { joined, at: 0 }
    }

    /// The next string, which is `text`.
    fn next(&mut self, text: &str) -> JsValue {
        let Some(joined) = &self.joined else { return js_str(text) };
        let len = marker::utf16_count(text);
        let end = self.at.saturating_add(u32::try_from(len).unwrap_or(u32::MAX));
        let slice = joined.slice(self.at, end);
        self.at = end;
        slice.into()
    }
}

/// The strings of `op` that `Driver::delta` passes to JS, in the order it takes them.
fn op_texts(op: &MessageOp, mut each: impl FnMut(&str)) {
    let MessageOp::Delta { kind, delta, patches, .. } = op else { return };
    each(delta);
    if *kind == BlockKind::ToolCall {
        for p in patches {
            if let PatchOp::SetString(text) | PatchOp::AppendString(text) = &p.op {
                each(text);
            }
        }
    }
}

/// `<kind>_start` or `<kind>_end` as a static name (cached as a JS string by the host); deltas
/// are named in the `pushDelta` helper.
fn event_name(kind: BlockKind, phase: &str) -> &'static str {
    match (kind, phase) {
        (BlockKind::Text, "start") => "text_start",
        (BlockKind::Text, _) => "text_end",
        (BlockKind::Thinking, "start") => "thinking_start",
        (BlockKind::Thinking, _) => "thinking_end",
        (BlockKind::ToolCall, "start") => "toolcall_start",
        (BlockKind::ToolCall, _) => "toolcall_end",
    }
}
