//! The reference of `FastPaths::pump`: one step of reading an assistant message event source
//! (L-3.6.2) through `Host`'s primitives. The JS twin is `src/js/snippets/pump.js`.

use crate::core::host::Host;

/// The kind of an assistant message event, as the loop dispatches on it (L-3.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventCode {
    Start,
    /// `text_*`, `thinking_*`, `toolcall_*`.
    Block,
    Done,
    Error,
    /// Anything else, a non-object, or a missing `type`.
    Other,
}

impl EventCode {
    pub fn of(kind: &str) -> EventCode {
        match kind {
            "start" => EventCode::Start,
            "text_start" | "text_delta" | "text_end" | "thinking_start" | "thinking_delta" | "thinking_end"
            | "toolcall_start" | "toolcall_delta" | "toolcall_end" => EventCode::Block,
            "done" => EventCode::Done,
            "error" => EventCode::Error,
            _ => EventCode::Other,
        }
    }
}

/// What one step of reading an assistant message event source produced (`FastPaths::pump`).
pub enum Pumped<V> {
    /// Nothing queued: await the iterator.
    Empty,
    /// A block event with the partial in place whose `message_update` the observing sink took.
    Delivered,
    /// The same, when there is no observing sink: the `message_update` event to emit.
    Update(V),
    /// The observing sink threw this for the `message_update` event.
    SinkFailed(V),
    /// Any other event, with its code, for the loop to handle.
    Event(EventCode, V),
}

/// The reference of `FastPaths::pump` (see there).
pub fn pump<H: Host>(
    h: &H,
    _source: &H::V,
    event: Option<H::V>,
    messages: &H::V,
    slot: Option<usize>,
    sink: Option<&H::V>,
) -> Result<Pumped<H::V>, H::V> {
    let Some(event) = event else {
        return Ok(Pumped::Empty);
    };
    let code = if h.kind(&event).is_object_like() {
        let kind = h.get(&event, "type")?;
        h.as_string(&kind).map_or(EventCode::Other, |k| EventCode::of(&k))
    } else {
        EventCode::Other
    };
    let (EventCode::Block, Some(index)) = (code, slot) else {
        return Ok(Pumped::Event(code, event));
    };
    let partial = h.get(&event, "partial")?;
    h.array_set(messages, index, &partial)?;
    let copy = h.shallow_copy(&partial)?;
    let update = h.object(&[
        ("type", h.constant("message_update")),
        ("assistantMessageEvent", event.clone()),
        ("message", copy),
    ]);
    let Some(sink) = sink else {
        return Ok(Pumped::Update(update));
    };
    match h.call_sync(sink, &h.undefined(), &[update]) {
        Ok(_) => Ok(Pumped::Delivered),
        Err(e) => Ok(Pumped::SinkFailed(e)),
    }
}
