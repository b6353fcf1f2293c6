//! Fuzzes the artifact loader (`aot::Artifact::from_json`) and dispatch of what it loads.
//!
//! Starting from real compiled artifacts (`fuzz/seeds/artifact_load`), the fuzzer rewrites
//! numbers, expressions and structure. Invariants, besides "no panic, no hang": a rejected
//! artifact gets an error with a message; an accepted one round-trips through its JSON, and
//! dispatching and executing small bindings through it either fails with an error or runs
//! (the kernels bounds-check every instantiated plan against the real storages, so a
//! rewritten artifact can never reach memory out of bounds).
//!
//! Shared by the cargo-fuzz target `fuzz_targets/artifact_load.rs` and by
//! `tests/fuzz_regressions.rs`, which replays `fuzz/seeds/artifact_load` and
//! `fuzz/regressions/artifact_load` under `cargo test`.
use symstride::aot::{random_inputs, Artifact, Dispatcher};
use symstride::kernel::ExecConfig;

/// Runs every check on one input (panics on a violated invariant).
pub fn check(data: &[u8]) {
    if data.len() > 16384 {
        return;
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let artifact = match Artifact::from_json(text) {
        Ok(a) => a,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    let again = Artifact::from_json(&artifact.to_json())
        .unwrap_or_else(|e| panic!("an accepted artifact does not round-trip: {e}"));
    assert_eq!(again, artifact, "artifact round trip");
    let n = artifact.spec.symbols.len();
    let _ = artifact.check(&artifact.spec.hints);
    let Ok(d) = Dispatcher::new(artifact) else {
        return;
    };
    let cfg = ExecConfig::default();
    // The hints, then small bindings that hit other size classes (0, 1, 2, 3).
    let mut bindings = vec![d.spec().hints.clone()];
    for k in 0..4i64 {
        bindings.push((0..n).map(|i| (k + i as i64) % 4).collect());
    }
    for values in &bindings {
        if values.iter().any(|&v| v > 64) {
            continue; // keep the executions small
        }
        let Ok(inputs) = random_inputs(d.spec(), values, 1) else {
            continue;
        };
        let refs: Vec<_> = inputs.iter().collect();
        let _ = d.execute(&refs, &cfg);
    }
}
