//! Durable checkpoints of an `Agent`: at every durable point the agent hands `onCheckpoint` only
//! what changed since the last checkpoint, under a sequence number, and awaits it like a listener;
//! `restore` folds a snapshot and/or checkpoints back into an agent's state. The values in a
//! checkpoint are the agent's own (no copies, no JSON round trip): storing them is the callback's job.
//!
//! The bookkeeping lives in the facade's state object (`st.ck`), never on the Rust side, and a
//! write's base only moves when the write succeeded, so a failed write is retried whole.

use super::agent_state::{MODES, Queue, get, items};
use super::args::ArgError;
use super::host::Kind;
use crate::core::agent_state::key;
use crate::core::approvals;
use crate::core::fast::FastPaths;
use crate::core::snapshot;
use std::rc::Rc;

pub const FORMAT: &str = "agent-loop-wasm/agent-checkpoint";
pub const VERSION: u64 = 1;

/// A checkpoint's field names, one constant each. Those it shares with a snapshot are the snapshot's own: `fold` writes
/// each into the snapshot it rebuilds under the same name. Code outside this module names a field only through these
/// (`core::tests::layers`).
pub mod field {
    pub use crate::core::snapshot::field::{
        APPROVALS, FOLLOW_UP_MODE, FOLLOW_UP_QUEUE, FORMAT, MESSAGES, MODEL, RUNNING, SESSION_ID, STEERING_MODE,
        STEERING_QUEUE, THINKING_LEVEL, TOOL_NAMES, USAGE, VERSION,
    };
    pub const SEQ: &str = "seq";
    pub const FULL: &str = "full";
    pub const ENDED: &str = "ended";
}

/// The fields of `messages`, an edit of the transcript: `transcript.slice(0, from).concat(append)`.
pub mod edit {
    pub const FROM: &str = "from";
    pub const APPEND: &str = "append";
}

/// Every field of a checkpoint, in writing order: the one definition. `index.d.ts`'s `AgentCheckpoint` is checked
/// against it (`tests/js/dts-names.test.mjs`).
pub const FIELDS: [&str; 17] = [
    field::FORMAT,
    field::VERSION,
    field::SEQ,
    field::FULL,
    field::MESSAGES,
    field::MODEL,
    field::THINKING_LEVEL,
    field::STEERING_MODE,
    field::FOLLOW_UP_MODE,
    field::SESSION_ID,
    field::TOOL_NAMES,
    field::STEERING_QUEUE,
    field::FOLLOW_UP_QUEUE,
    field::RUNNING,
    field::ENDED,
    field::APPROVALS,
    field::USAGE,
];

/// The fields a full checkpoint (or a snapshot) carries besides the transcript, in writing order.
const PLAIN: [&str; 6] = [
    field::MODEL,
    field::THINKING_LEVEL,
    field::STEERING_MODE,
    field::FOLLOW_UP_MODE,
    field::SESSION_ID,
    field::TOOL_NAMES,
];

/// The bookkeeping's own fields in `st.ck`. Beside them it keeps, under the checkpoint's names (`field::…`), the
/// value of each field as last stored (what `diff` compares by identity).
mod bookkeeping {
    /// The `seq` of the last checkpoint stored.
    pub const SEQ: &str = "seq";
    /// The next checkpoint is a full one.
    pub const FULL: &str = "full";
    /// The transcript's length as last stored.
    pub const COUNT: &str = "count";
    /// Its last message then (still in place: the transcript only grew since).
    pub const LAST: &str = "last";
    /// How many of `st.endedTools` were stored.
    pub const ENDED_COUNT: &str = "endedCount";
    /// The thenable `onCheckpoint` returned, until it settles.
    pub const IN_FLIGHT: &str = "inFlight";
    /// A change is due that no write has taken yet.
    pub const DIRTY: &str = "dirty";
    /// The base to adopt once the write in flight is stored.
    pub const PENDING: &str = "pending";
    /// What the last failed write threw or rejected with.
    pub const FAILURE: &str = "failure";
}

fn tracker<H: FastPaths>(h: &H, st: &H::V) -> Result<Option<H::V>, H::V> {
    let ck = get(h, st, key::CK)?;
    Ok(h.kind(&ck).is_object_like().then_some(ck))
}

fn number<H: FastPaths>(h: &H, obj: &H::V, key: &str) -> Result<f64, H::V> {
    Ok(h.as_number(&get(h, obj, key)?).unwrap_or(0.0))
}

/// Sets up `st.ck` for an agent with an `onCheckpoint` callback (none: checkpoints are off).
/// `seq` is the last sequence number already stored (0 for a new agent, whose first checkpoint is
/// then a full one).
pub fn init<H: FastPaths>(h: &H, st: &H::V, seq: f64) -> Result<(), H::V> {
    let ck = h.object(&[
        (bookkeeping::SEQ, h.number(seq)),
        (bookkeeping::FULL, h.boolean(seq == 0.0)),
        (bookkeeping::COUNT, h.number(0.0)),
        (bookkeeping::LAST, h.undefined()),
        (bookkeeping::IN_FLIGHT, h.undefined()),
        (bookkeeping::DIRTY, h.boolean(false)),
        (bookkeeping::PENDING, h.undefined()),
        (bookkeeping::FAILURE, h.undefined()),
    ]);
    h.set(st, key::CK, &ck)
}

/// What a checkpoint compares: the agent's durable state as it stands.
struct Current<V> {
    messages: V,
    count: usize,
    plain: Vec<(&'static str, V)>,
    steering: Vec<V>,
    follow_up: Vec<V>,
    running: bool,
    /// The calls that ended without their result in the transcript yet (what a resume keeps).
    completed: Vec<V>,
    /// Every call that ended in this run, in order (append-only; emptied when the run ends).
    ended: V,
    ended_count: usize,
    /// Issue 30: the pause the agent holds (`st.approvals`, replaced whole on every change), else undefined.
    approvals: V,
    /// Issue 32: the agent's usage totals (`st.totalUsage`, replaced whole on every change), else undefined.
    usage: V,
}

/// The messages a queue holds for durability: those drained by the running loop but not yet in the
/// transcript (they were at its head), then the queue itself.
pub fn durable_queue<H: FastPaths>(h: &H, st: &H::V, queue: Queue) -> Result<Vec<H::V>, H::V> {
    let mut all = items(h, st, queue.transit())?;
    all.extend(items(h, st, queue.keys().0)?);
    Ok(all)
}

/// The `seq` of the last checkpoint stored, when the agent writes checkpoints (a snapshot's `checkpointSeq`).
pub fn stored_seq<H: FastPaths>(h: &H, st: &H::V) -> Result<Option<H::V>, H::V> {
    match tracker(h, st)? {
        Some(ck) => Ok(Some(get(h, &ck, bookkeeping::SEQ)?)),
        None => Ok(None),
    }
}

fn tool_names<H: FastPaths>(h: &H, st: &H::V) -> Result<H::V, H::V> {
    let mut names = Vec::new();
    for tool in items(h, st, key::TOOLS)? {
        if h.kind(&tool).is_object_like() {
            names.push(get(h, &tool, "name")?);
        }
    }
    Ok(h.array(&names))
}

fn current<H: FastPaths>(h: &H, agent: &H::V, st: &H::V) -> Result<Current<H::V>, H::V> {
    let messages = get(h, st, key::MESSAGES)?;
    let ended = get(h, st, key::ENDED_TOOLS)?;
    let count = if h.kind(&messages) == Kind::Array { h.array_len(&messages)? } else { 0 };
    let plain = vec![
        (field::MODEL, get(h, st, key::MODEL)?),
        (field::THINKING_LEVEL, get(h, st, key::THINKING_LEVEL)?),
        (field::STEERING_MODE, get(h, st, key::STEERING_MODE)?),
        (field::FOLLOW_UP_MODE, get(h, st, key::FOLLOW_UP_MODE)?),
        (field::SESSION_ID, get(h, agent, "sessionId")?),
        (field::TOOL_NAMES, get(h, st, key::TOOLS)?),
    ];
    Ok(Current {
        messages,
        count,
        plain,
        steering: durable_queue(h, st, Queue::Steering)?,
        follow_up: durable_queue(h, st, Queue::FollowUp)?,
        running: h.truthy(&get(h, st, key::ACTIVE)?) || h.truthy(&get(h, st, key::INTERRUPTED)?),
        completed: items(h, st, key::COMPLETED_TOOLS)?,
        ended: ended.clone(),
        ended_count: if h.kind(&ended) == Kind::Array { h.array_len(&ended)? } else { 0 },
        approvals: get(h, st, key::APPROVALS)?,
        usage: get(h, st, key::TOTAL_USAGE)?,
    })
}

fn same_list<H: FastPaths>(h: &H, a: &[H::V], b: &[H::V]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| h.same(x, y))
}

/// The checkpoint of what changed since `ck`'s base, with the base to adopt once it is stored;
/// `None` when nothing changed.
/// A checkpoint and the tracker base to adopt once it is stored.
type Change<V> = (V, V);

fn diff<H: FastPaths>(h: &H, agent: &H::V, st: &H::V, ck: &H::V) -> Result<Option<Change<H::V>>, H::V> {
    let now = current(h, agent, st)?;
    let full = h.truthy(&get(h, ck, bookkeeping::FULL)?);
    let seq = number(h, ck, bookkeeping::SEQ)? + 1.0;
    let mut entries = vec![
        (field::FORMAT, h.constant(FORMAT)),
        (field::VERSION, h.number(VERSION as f64)),
        (field::SEQ, h.number(seq)),
    ];
    if full {
        entries.push((field::FULL, h.boolean(true)));
    }
    let header = entries.len();

    // The transcript: appended messages, or everything from the first one that differs (O(1) to
    // check: the last committed message must still be where it was).
    let base_count = number(h, ck, bookkeeping::COUNT)? as usize;
    let last = get(h, ck, bookkeeping::LAST)?;
    let at = |i: usize| get(h, &now.messages, &i.to_string());
    let kept = !full && now.count >= base_count && (base_count == 0 || h.same(&at(base_count - 1)?, &last));
    let from = if kept { base_count } else { 0 };
    if full || now.count != from {
        let mut append = Vec::with_capacity(now.count - from);
        for i in from..now.count {
            append.push(at(i)?);
        }
        let change = h.object(&[(edit::FROM, h.number(from as f64)), (edit::APPEND, h.array(&append))]);
        entries.push((field::MESSAGES, change));
    }
    let new_last = if now.count == 0 { h.undefined() } else { at(now.count - 1)? };

    for (key, value) in &now.plain {
        if !full && h.same(&get(h, ck, key)?, value) {
            continue;
        }
        let written = match *key {
            field::TOOL_NAMES => tool_names(h, st)?,
            // An unset session id is left out of a full checkpoint, and written as null when it
            // was set before.
            field::SESSION_ID if h.kind(value) == Kind::Undefined => {
                if full {
                    continue;
                }
                h.null()
            }
            _ => value.clone(),
        };
        entries.push((key, written));
    }
    for (key, list) in [(field::STEERING_QUEUE, &now.steering), (field::FOLLOW_UP_QUEUE, &now.follow_up)] {
        if full || !same_list(h, &items(h, ck, key)?, list) {
            entries.push((key, h.array(list)));
        }
    }
    let before_running = h.truthy(&get(h, ck, field::RUNNING)?);
    if full || before_running != now.running {
        entries.push((field::RUNNING, h.boolean(now.running)));
    }
    // Ended calls go out as additions (O(batch) per batch, not per checkpoint); a tool result
    // appended to the transcript removes its call's entry, and a run's end removes them all.
    if full {
        entries.push((field::ENDED, h.array(&now.completed)));
    } else {
        let base = (number(h, ck, bookkeeping::ENDED_COUNT)? as usize).min(now.ended_count);
        if now.ended_count > base {
            let mut added = Vec::with_capacity(now.ended_count - base);
            for i in base..now.ended_count {
                added.push(get(h, &now.ended, &i.to_string())?);
            }
            entries.push((field::ENDED, h.array(&added)));
        }
    }
    // A pause and each decision (issue 30): the whole object when it changed, `null` once it is over.
    let had_approvals = get(h, ck, field::APPROVALS)?;
    let has_approvals = h.kind(&now.approvals) == Kind::Object;
    if (full && has_approvals) || (!full && !h.same(&had_approvals, &now.approvals)) {
        entries.push((field::APPROVALS, if has_approvals { now.approvals.clone() } else { h.null() }));
    }
    // Issue 32: the usage totals when they changed (never while no reply reported usage).
    let has_usage = h.kind(&now.usage) == Kind::Object;
    if has_usage && (full || !h.same(&get(h, ck, field::USAGE)?, &now.usage)) {
        entries.push((field::USAGE, now.usage.clone()));
    }
    if entries.len() == header {
        return Ok(None);
    }
    let mut base = vec![
        (bookkeeping::SEQ, h.number(seq)),
        (bookkeeping::COUNT, h.number(now.count as f64)),
        (bookkeeping::LAST, new_last),
        (field::STEERING_QUEUE, h.array(&now.steering)),
        (field::FOLLOW_UP_QUEUE, h.array(&now.follow_up)),
        (field::RUNNING, h.boolean(now.running)),
        (bookkeeping::ENDED_COUNT, h.number(now.ended_count as f64)),
        (field::APPROVALS, now.approvals.clone()),
        (field::USAGE, now.usage.clone()),
    ];
    base.extend(now.plain.iter().map(|(k, v)| (*k, v.clone())));
    Ok(Some((h.object(&entries), h.object(&base))))
}

/// Adopts the base of a stored checkpoint.
fn commit<H: FastPaths>(h: &H, ck: &H::V) -> Result<(), H::V> {
    let pending = get(h, ck, bookkeeping::PENDING)?;
    if !h.kind(&pending).is_object_like() {
        return Ok(());
    }
    for (key, value) in h.entries(&pending)? {
        h.set(ck, &key, &value)?;
    }
    h.set(ck, bookkeeping::FULL, &h.boolean(false))?;
    h.set(ck, bookkeeping::PENDING, &h.undefined())
}

enum Written<V> {
    /// Nothing changed, or the callback returned a non-thenable: the base already moved.
    Done,
    /// The callback returned this thenable; the base moves when it fulfils.
    Pending(V, f64),
}

fn is_thenable<H: FastPaths>(h: &H, v: &H::V) -> Result<Option<H::V>, H::V> {
    if !h.kind(v).is_object_like() {
        return Ok(None);
    }
    let then = get(h, v, "then")?;
    Ok((h.kind(&then) == Kind::Function).then_some(then))
}

/// Hands the next checkpoint to `onCheckpoint` (nothing in flight is the caller's guarantee).
fn start_write<H: FastPaths>(h: &H, agent: &H::V, st: &H::V, ck: &H::V) -> Result<Written<H::V>, H::V> {
    let f = get(h, st, key::ON_CHECKPOINT)?;
    if h.kind(&f) != Kind::Function {
        return Ok(Written::Done);
    }
    let Some((checkpoint, base)) = diff(h, agent, st, ck)? else {
        return Ok(Written::Done);
    };
    let seq = number(h, &base, bookkeeping::SEQ)?;
    h.set(ck, bookkeeping::PENDING, &base)?;
    h.set(ck, bookkeeping::DIRTY, &h.boolean(false))?;
    let returned = match h.call_sync(&f, agent, &[checkpoint]) {
        Ok(v) => v,
        Err(e) => {
            written_failed(h, ck, &e)?;
            return Err(e);
        }
    };
    let then = match is_thenable(h, &returned) {
        Ok(then) => then,
        Err(e) => {
            written_failed(h, ck, &e)?;
            return Err(e);
        }
    };
    let Some(then) = then else {
        commit(h, ck)?;
        return Ok(Written::Done);
    };
    h.set(ck, bookkeeping::IN_FLIGHT, &returned)?;
    let (host, agent_ok, st_ok, ck_ok) = (h.clone(), agent.clone(), st.clone(), ck.clone());
    let on_ok = h.function(Rc::new(move |_args: &[H::V]| {
        let h = &host;
        let _ = h.set(&ck_ok, bookkeeping::IN_FLIGHT, &h.undefined());
        let _ = commit(h, &ck_ok);
        if h.truthy(&get(h, &ck_ok, bookkeeping::DIRTY).unwrap_or_else(|_| h.undefined())) {
            request(h, &agent_ok, &st_ok);
        }
        h.undefined()
    }));
    let (host, ck_err) = (h.clone(), ck.clone());
    let on_err = h.function(Rc::new(move |args: &[H::V]| {
        let h = &host;
        let _ = h.set(&ck_err, bookkeeping::IN_FLIGHT, &h.undefined());
        let thrown = args.first().cloned().unwrap_or_else(|| h.undefined());
        let _ = written_failed(h, &ck_err, &thrown);
        h.undefined()
    }));
    if let Err(e) = h.call_sync(&then, &returned, &[on_ok, on_err]) {
        let _ = h.set(ck, bookkeeping::IN_FLIGHT, &h.undefined());
        written_failed(h, ck, &e)?;
        return Err(e);
    }
    Ok(Written::Pending(returned, seq))
}

/// A write failed: the base stays, the change stays due (the next durable point retries it).
fn written_failed<H: FastPaths>(h: &H, ck: &H::V, thrown: &H::V) -> Result<(), H::V> {
    h.set(ck, bookkeeping::PENDING, &h.undefined())?;
    h.set(ck, bookkeeping::FAILURE, thrown)?;
    h.set(ck, bookkeeping::DIRTY, &h.boolean(true))
}

/// A durable point outside a run's await (a queue or mode change, a setter): writes now when
/// nothing is in flight, else marks the change due for when the write in flight is stored.
/// Failures are kept for the next durable point, which retries.
pub fn request<H: FastPaths>(h: &H, agent: &H::V, st: &H::V) {
    let Ok(Some(ck)) = tracker(h, st) else { return };
    if h.truthy(&get(h, &ck, bookkeeping::IN_FLIGHT).unwrap_or_else(|_| h.undefined())) {
        let _ = h.set(&ck, bookkeeping::DIRTY, &h.boolean(true));
        return;
    }
    let _ = start_write(h, agent, st, &ck);
}

/// A durable point inside a run: waits for any write in flight, then writes what changed and
/// awaits it. `Err` is what the callback threw or rejected with (the run fails as for a listener).
pub async fn flush<H: FastPaths>(h: &H, agent: &H::V, st: &H::V) -> Result<(), H::V> {
    let Some(ck) = tracker(h, st)? else { return Ok(()) };
    loop {
        let in_flight = get(h, &ck, bookkeeping::IN_FLIGHT)?;
        if h.truthy(&in_flight) {
            // Its own reaction (registered first) has run by the time this await resumes.
            let _ = h.settle(&in_flight).await;
            continue;
        }
        match start_write(h, agent, st, &ck)? {
            Written::Done => {
                if !h.truthy(&get(h, &ck, bookkeeping::DIRTY)?) {
                    return Ok(());
                }
            }
            Written::Pending(promise, seq) => {
                let _ = h.settle(&promise).await;
                if number(h, &ck, bookkeeping::SEQ)? < seq && !h.truthy(&get(h, &ck, bookkeeping::IN_FLIGHT)?) {
                    let failure = get(h, &ck, bookkeeping::FAILURE)?;
                    return Err(failure);
                }
            }
        }
    }
}

// ---- restore

/// A number as JS writes it (`String(n)`), for the texts below.
fn num(n: f64) -> String {
    super::validate::js_number_to_string(n)
}

fn restore_error(detail: &str) -> String {
    format!("Agent.restore: {detail}")
}

fn is_int(n: f64) -> bool {
    n.is_finite() && n.fract() == 0.0 && n >= 0.0
}

/// Checks a list of messages (`path` names it in the error).
fn check_messages<H: FastPaths>(h: &H, list: &H::V, path: &str) -> Result<Vec<H::V>, ArgError<H::V>> {
    if h.kind(list) != Kind::Array {
        return Err(ArgError::Type(restore_error(&format!("invalid checkpoint: {path}: expected an array"))));
    }
    let messages = h.array_items(list)?;
    for (i, message) in messages.iter().enumerate() {
        if !h.kind(message).is_object_like() || h.kind(message) == Kind::Array {
            return Err(ArgError::Type(restore_error(&format!("invalid checkpoint: {path}[{i}]: expected an object"))));
        }
        if h.kind(&get(h, message, "role")?) != Kind::String {
            return Err(ArgError::Type(restore_error(&format!(
                "invalid checkpoint: {path}[{i}].role: expected a string"
            ))));
        }
    }
    Ok(messages)
}

/// Folds `checkpoints` (already in order) into `data`, the state a snapshot described (or an empty
/// object when there is none, the first checkpoint then being a full one). Checks every envelope,
/// the sequence (no gap, no repeat) and every field; `Err` is the exact message to throw, and
/// nothing was applied to any agent yet. `data` gets `checkpointSeq`, `running`, `completedTools`.
pub fn fold<H: FastPaths>(h: &H, data: &H::V, checkpoints: &[H::V], mut seq: f64) -> Result<(), ArgError<H::V>> {
    let bad = |i: usize, detail: &str| ArgError::Type(restore_error(&format!("checkpoints[{i}]: {detail}")));
    let mut messages = items(h, data, snapshot::field::MESSAGES)?;
    let mut completed = items(h, data, snapshot::field::COMPLETED_TOOLS)?;
    for (i, checkpoint) in checkpoints.iter().enumerate() {
        if !h.kind(checkpoint).is_object_like()
            || h.as_string(&get(h, checkpoint, field::FORMAT)?).as_deref() != Some(FORMAT)
        {
            return Err(bad(i, "not an agent-loop-wasm checkpoint"));
        }
        match h.as_number(&get(h, checkpoint, field::VERSION)?) {
            Some(v) if v == VERSION as f64 => {}
            Some(v) if is_int(v) && v > VERSION as f64 => {
                // `to_string`, not `{VERSION}`: an integer's `Display` is formatter code the wasm otherwise does without.
                let supported = VERSION.to_string();
                return Err(bad(
                    i,
                    &format!("checkpoint version {} is newer than this library supports ({supported})", num(v)),
                ));
            }
            _ => return Err(bad(i, "unknown checkpoint version")),
        }
        let Some(n) = h.as_number(&get(h, checkpoint, field::SEQ)?).filter(|n| is_int(*n) && *n >= 1.0) else {
            return Err(bad(i, "seq must be a positive integer"));
        };
        let full = h.truthy(&get(h, checkpoint, field::FULL)?);
        if i == 0 && seq == 0.0 && !full {
            return Err(bad(i, "the first checkpoint of an agent (seq 1) or a snapshot must come first"));
        }
        if n <= seq {
            return Err(bad(
                i,
                &format!("checkpoint {} repeats or is out of order (expected {})", num(n), num(seq + 1.0)),
            ));
        }
        if n > seq + 1.0 {
            let missing =
                if n == seq + 2.0 { num(seq + 1.0) } else { format!("{}–{}", num(seq + 1.0), num(n - 1.0)) };
            return Err(bad(i, &format!("checkpoint {missing} is missing (next is {})", num(n))));
        }
        seq = n;
        let ended = get(h, checkpoint, field::ENDED)?;
        match h.kind(&ended) {
            Kind::Undefined => {}
            Kind::Array => {
                let records = h.array_items(&ended)?;
                for (j, record) in records.iter().enumerate() {
                    if h.kind(record) != Kind::Object {
                        return Err(bad(i, &format!("ended[{j}]: expected an object")));
                    }
                }
                if full {
                    completed.clear();
                }
                completed.extend(records);
            }
            _ => return Err(bad(i, "ended has the wrong type")),
        }
        let mut appended = Vec::new();
        let change = get(h, checkpoint, field::MESSAGES)?;
        if full && !h.kind(&change).is_object_like() {
            return Err(bad(i, "a full checkpoint must carry messages"));
        }
        if h.kind(&change).is_object_like() {
            let from =
                h.as_number(&get(h, &change, edit::FROM)?).filter(|f| is_int(*f) && *f as usize <= messages.len());
            let Some(from) = from else {
                return Err(bad(i, &format!("messages.from must be an integer from 0 to {}", messages.len())));
            };
            let append =
                check_messages(h, &get(h, &change, edit::APPEND)?, &format!("checkpoints[{i}].messages.append"))?;
            messages.truncate(from as usize);
            appended = append.clone();
            messages.extend(append);
        }
        // Each field goes into the snapshot under its own name (`field` re-exports the snapshot's).
        for key in PLAIN {
            let value = get(h, checkpoint, key)?;
            let present = h.kind(&value) != Kind::Undefined;
            if !present {
                if full && key != field::SESSION_ID {
                    return Err(bad(i, &format!("a full checkpoint must carry {key}")));
                }
                continue;
            }
            if key == field::SESSION_ID && h.kind(&value) == Kind::Null {
                h.set(data, key, &h.undefined())?;
                continue;
            }
            let ok = match key {
                field::MODEL => h.kind(&value) == Kind::Object,
                field::THINKING_LEVEL | field::SESSION_ID => h.kind(&value) == Kind::String,
                field::STEERING_MODE | field::FOLLOW_UP_MODE => {
                    h.as_string(&value).is_some_and(|m| MODES.contains(&m.as_str()))
                }
                _ => h.kind(&value) == Kind::Array,
            };
            if !ok {
                return Err(bad(i, &format!("{key} has the wrong type")));
            }
            h.set(data, key, &value)?;
        }
        for key in [field::STEERING_QUEUE, field::FOLLOW_UP_QUEUE] {
            let value = get(h, checkpoint, key)?;
            if h.kind(&value) == Kind::Undefined {
                if full {
                    return Err(bad(i, &format!("a full checkpoint must carry {key}")));
                }
                continue;
            }
            let list = check_messages(h, &value, &format!("checkpoints[{i}].{key}"))?;
            h.set(data, key, &h.array(&list))?;
        }
        let running = get(h, checkpoint, field::RUNNING)?;
        match h.kind(&running) {
            Kind::Undefined => {}
            Kind::Bool => h.set(data, snapshot::field::RUNNING, &running)?,
            _ => return Err(bad(i, "running has the wrong type")),
        }
        let approvals = get(h, checkpoint, field::APPROVALS)?;
        match h.kind(&approvals) {
            Kind::Undefined => {}
            Kind::Null => h.set(data, snapshot::field::APPROVALS, &h.undefined())?,
            Kind::Object => {
                check_approvals(h, &approvals).map_err(|detail| bad(i, &format!("approvals{detail}")))?;
                h.set(data, snapshot::field::APPROVALS, &approvals)?;
            }
            _ => return Err(bad(i, "approvals has the wrong type")),
        }
        let usage = get(h, checkpoint, field::USAGE)?;
        if h.kind(&usage) != Kind::Undefined {
            let totals =
                crate::core::budget::check_totals(h, &usage).map_err(|detail| bad(i, &format!("usage{detail}")))?;
            h.set(data, snapshot::field::USAGE, &totals)?;
        }
        for message in &appended {
            if h.as_string(&get(h, message, "role")?).as_deref() == Some("toolResult") {
                let id = get(h, message, "toolCallId")?;
                completed.retain(|r| !h.get(r, "toolCallId").is_ok_and(|x| h.same(&x, &id)));
            }
        }
        if h.kind(&running) == Kind::Bool && !h.truthy(&running) {
            completed.clear();
        }
    }
    h.set(data, snapshot::field::COMPLETED_TOOLS, &h.array(&completed))?;
    h.set(data, snapshot::field::MESSAGES, &h.array(&messages))?;
    h.set(data, snapshot::field::CHECKPOINT_SEQ, &h.number(seq))?;
    Ok(())
}

/// The shape of a stored pause (issue 30): `Err` is the detail after the field's path.
pub fn check_approvals<H: FastPaths>(h: &H, pause: &H::V) -> Result<(), String> {
    for key in approvals::FIELDS {
        let list = h.get(pause, key).map_err(|e| format!(".{key}: {}", h.error_message(&e)))?;
        if h.kind(&list) != Kind::Array {
            return Err(format!(".{key} must be an array"));
        }
    }
    Ok(())
}

/// After a restore: the tracker's base is the restored state, numbering goes on from `seq`.
pub fn adopt<H: FastPaths>(h: &H, agent: &H::V, st: &H::V, seq: f64) -> Result<(), H::V> {
    init(h, st, seq)?;
    let Some(ck) = tracker(h, st)? else { return Ok(()) };
    let now = current(h, agent, st)?;
    let last = if now.count == 0 { h.undefined() } else { get(h, &now.messages, &(now.count - 1).to_string())? };
    h.set(&ck, bookkeeping::COUNT, &h.number(now.count as f64))?;
    h.set(&ck, bookkeeping::LAST, &last)?;
    for (key, value) in &now.plain {
        h.set(&ck, key, value)?;
    }
    h.set(&ck, field::STEERING_QUEUE, &h.array(&now.steering))?;
    h.set(&ck, field::FOLLOW_UP_QUEUE, &h.array(&now.follow_up))?;
    h.set(&ck, field::RUNNING, &h.boolean(now.running))?;
    h.set(&ck, bookkeeping::ENDED_COUNT, &h.number(now.ended_count as f64))?;
    h.set(&ck, field::APPROVALS, &now.approvals)?;
    h.set(&ck, field::USAGE, &now.usage)?;
    h.set(&ck, bookkeeping::FULL, &h.boolean(seq == 0.0))
}
