//! cargo-fuzz target; the checks live in `checks/expr_parse.rs` (also replayed by `cargo test`).
#![no_main]

#[path = "../checks/expr_parse.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::check(data));
