//! cargo-fuzz target; the checks live in `checks/golden_case.rs` (also replayed by `cargo test`).
#![no_main]

#[path = "../checks/golden_case.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
