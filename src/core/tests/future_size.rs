//! What a run in flight costs in memory: the size of its future. Every run holds it for its whole life, and a server
//! holds one per run in flight (issue 17: memory per in-flight run; issue 34). The loop keeps it small by making each
//! step a function of its own and boxing the steps a run spends little time in (the request, the tool batch, the
//! rare endings: `Box::pin` at those calls in `agent_loop`), so that the future is sized for the stream's reading.
//! This test holds that size: an inline step that grows it fails here, with the size it grew to.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use super::support::*;
use crate::core::agent_loop::{drive, drive_start};
use crate::core::run::{Emitter, Run, SinkMode};

/// When the budget was set (scripted host, 64-bit, the test profile): `drive` 776 bytes, `drive_start` 736; room for
/// a few fields more. Dec 7: 736 / 696 since `Run::emit` hands back its emitter's future instead of wrapping it in an
/// `async fn` (whose arguments every awaiting future kept), and the budget came down with it.
const DRIVE_BUDGET: usize = 784;

#[test]
fn a_run_future_stays_sized_for_the_stream_reading() {
    let w = World::with(vec![reply("hi")]);
    let h = &w.h;
    let spec = RunSpec::prompt(vec![user("go")], ctx(vec![]), config(&[]));
    let start = w.start(&spec).unwrap();
    let run = Run::new(
        h,
        start.context,
        spec.config.clone(),
        spec.signal.clone(),
        w.faux.stream_fn(),
        Emitter::new(w.rec.sink(), SinkMode::Barrier),
    );
    let prompt = drive(&run, start.initial.clone());
    let resumable = drive_start(&run, start.initial, None);
    let (prompt_size, resumable_size) = (std::mem::size_of_val(&prompt), std::mem::size_of_val(&resumable));
    println!("run future: drive {prompt_size} bytes, drive_start {resumable_size} bytes");
    assert!(prompt_size <= DRIVE_BUDGET, "drive's future is {prompt_size} bytes (budget {DRIVE_BUDGET})");
    assert!(resumable_size <= DRIVE_BUDGET, "drive_start's future is {resumable_size} bytes (budget {DRIVE_BUDGET})");
}
