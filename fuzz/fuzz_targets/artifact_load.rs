//! cargo-fuzz target; the checks live in `checks/artifact_load.rs` (also replayed by `cargo test`).
#![no_main]

#[path = "../checks/artifact_load.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
