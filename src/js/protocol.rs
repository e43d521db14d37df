//! The numbers the binding and its JS snippets (`src/js/snippets/`) pass each other: what a return code means, how
//! an index and a flag share one number. Each module here has a twin object in a snippet, written in capitals
//! (`pump` ↔ `PUMP` in pump.js); `tests/js/protocol.test.mjs` reads this file and imports the snippets, and fails
//! when the two disagree. Change both sides together. Plain consts, so they serve as `match` patterns at no cost.

// Each set is complete, as the test compares whole sets: some codes are only written by JS (`call_flag::THREW`) or
// fall in a `match`'s catch-all here (`pump::OTHER`), so Rust never names them.
#![allow(dead_code)]

/// What `pumpEvent` / `pumpQueued` (snippets/pump.js) answer for `Host::pump`. `START`…`OTHER` is an event for the
/// loop, by its `EventCode`; the value of every code but `DELIVERED` and `EMPTY` waits for `takePumped`.
pub mod pump {
    pub const START: u8 = 0;
    /// `text_*`, `thinking_*`, `toolcall_*`.
    pub const BLOCK: u8 = 1;
    pub const DONE: u8 = 2;
    pub const ERROR: u8 = 3;
    pub const OTHER: u8 = 4;
    /// A block event whose `message_update` the observing sink took.
    pub const DELIVERED: u8 = 5;
    /// A block event with no sink: the `message_update` to emit.
    pub const UPDATE: u8 = 6;
    /// The sink threw for the `message_update`.
    pub const SINK_FAILED: u8 = 7;
    /// Nothing queued in our own stream.
    pub const EMPTY: u8 = 8;
    /// A getter of the event threw.
    pub const THREW: u8 = 9;
    /// The `index` argument when the partial has no transcript slot.
    pub const NO_SLOT: f64 = -1.0;
}

/// How an awaited promise ended, as the snippets' one settle function reports it (snippets/waits.js).
pub mod settled {
    pub const REJECTED: u8 = 0;
    pub const FULFILLED: u8 = 1;
    /// `it.next()` answered `done`.
    pub const DONE: u8 = 2;
}

/// `kindOf` (snippets/values.js): `typeof` with arrays and `null` apart, for `Host::kind`.
pub mod kind_code {
    pub const UNDEFINED: u8 = 0;
    pub const NULL: u8 = 1;
    pub const BOOL: u8 = 2;
    pub const NUMBER: u8 = 3;
    pub const STRING: u8 = 4;
    pub const ARRAY: u8 = 5;
    pub const FUNCTION: u8 = 6;
    pub const OBJECT: u8 = 7;
    /// BigInt, symbol.
    pub const OTHER: u8 = 8;
}

/// `firstBadMessage` (snippets/args.js) answers `ALL_MESSAGES`, or `index * 2 + why` for the first entry that is
/// not a message: one number, so the check needs no array.
pub mod bad_message {
    pub const ALL_MESSAGES: f64 = -1.0;
    /// `why`: not an object (or function), or an array.
    pub const NOT_OBJECT: usize = 0;
    /// `why`: an object whose `role` is not a string.
    pub const NO_ROLE: usize = 1;
}

/// What `checkToolCall` (snippets/validate.js) answers for `FastPaths::check_tool_call`; the value of `ARGS` and
/// `STANDARD` waits for `takeChecked`.
pub mod checked {
    /// The arguments `execute` gets.
    pub const ARGS: u8 = 0;
    /// What a Standard Schema's `validate` returned (T-4.3.8).
    pub const STANDARD: u8 = 1;
    /// `parameters` is neither JSON Schema nor a Standard Schema with a converter: the binding writes the error.
    pub const UNREADABLE: u8 = 2;
}

/// The word a checked call (snippets/calls.js) writes into wasm memory: `THREW` when the call threw.
pub mod call_flag {
    pub const CLEAR: i32 = 0;
    pub const THREW: i32 = 1;
}
