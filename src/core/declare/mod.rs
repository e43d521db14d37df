//! Tools as the model sees them (L-3.4): `tools` reads declarations and replays what a transcript declares;
//! `inject` writes the changes into the messages of a request (`declareToolChanges`).

pub mod inject;
pub mod tools;
