//! Fuzzes the spec parser (`aot::Spec::from_json`) and the compile behind it.
//!
//! Invariants, besides "no panic, no hang": a parse error has a message; a parsed spec
//! round-trips through its file format (`from_value(to_value(s)) == s`); a small spec
//! either compiles or fails with an error, and a compiled artifact round-trips through its
//! JSON and admits the spec's hints with its first specialization.
//!
//! Shared by the cargo-fuzz target `fuzz_targets/spec_parse.rs` and by
//! `tests/fuzz_regressions.rs`, which replays `fuzz/seeds/spec_parse` and
//! `fuzz/regressions/spec_parse` under `cargo test`.
use symstride::aot::{Artifact, CompileOptions, Spec};

/// Runs every check on one input (panics on a violated invariant).
pub fn check(data: &[u8]) {
    if data.len() > 4096 {
        return;
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let spec = match Spec::from_json(text) {
        Ok(s) => s,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    let again = Spec::from_value(&spec.to_value())
        .unwrap_or_else(|e| panic!("the file form of a parsed spec does not parse: {e}"));
    assert_eq!(again, spec, "spec round trip");
    // Compiling traces the iterator build symbolically: keep it to small specs.
    let rank: usize = spec.inputs.iter().map(|i| i.sizes.len()).sum();
    if rank > 12 || spec.symbols.len() > 8 {
        return;
    }
    let artifact = match Artifact::compile(&spec, &CompileOptions::default()) {
        Ok(a) => a,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    let loaded = Artifact::from_json(&artifact.to_json())
        .unwrap_or_else(|e| panic!("a compiled artifact does not load: {e}"));
    assert_eq!(loaded, artifact, "artifact round trip");
    let outcome = artifact
        .check(&spec.hints)
        .unwrap_or_else(|e| panic!("checking the hints: {e}"));
    assert_eq!(
        outcome.specialization,
        Some(0),
        "the hints are not admitted"
    );
}
