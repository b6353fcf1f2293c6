//! Replays the fuzz corpora that matter under plain `cargo test` (no cargo-fuzz, no nightly):
//! every file of `fuzz/seeds/<target>/` and `fuzz/regressions/<target>/` (inputs that once
//! crashed or hung a target, kept after the fix) goes through the same checks the fuzz
//! target runs (`fuzz/checks/<target>.rs`), with a time bound so a hang that comes back
//! fails here too.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[path = "../fuzz/checks/artifact_load.rs"]
mod artifact_load;
#[path = "../fuzz/checks/expr_parse.rs"]
mod expr_parse;
#[path = "../fuzz/checks/golden_case.rs"]
mod golden_case;
#[path = "../fuzz/checks/spec_parse.rs"]
mod spec_parse;

/// Generous for the dev profile on a loaded 2-core machine; a regressed hang takes minutes.
const PER_INPUT: Duration = Duration::from_secs(20);

fn inputs(target: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut files = Vec::new();
    for kind in ["seeds", "regressions"] {
        let dir = root.join(kind).join(target);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_file() {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(!files.is_empty(), "no inputs for fuzz target {target}");
    files
}

fn replay(target: &str, check: fn(&[u8])) {
    for path in inputs(target) {
        let data = std::fs::read(&path).unwrap();
        let start = Instant::now();
        check(&data);
        let took = start.elapsed();
        assert!(took < PER_INPUT, "{} took {took:?}", path.display());
    }
}

#[test]
fn expr_parse_corpus() {
    replay("expr_parse", expr_parse::check);
}

#[test]
fn golden_case_corpus() {
    replay("golden_case", golden_case::check);
}

#[test]
fn spec_parse_corpus() {
    replay("spec_parse", spec_parse::check);
}

#[test]
fn artifact_load_corpus() {
    replay("artifact_load", artifact_load::check);
}
