//! `symstride run` on large bindings and its options (issue 17, finding 3 and the CLI
//! bullets): refuse above a memory limit before allocating, `--no-verify`, `--threads`
//! 0 and too many, the parsed binding echoed.

use std::path::PathBuf;
use std::time::{Duration, Instant};

mod common;

use common::run;

/// The seed spec compiled into a scratch directory (one per test).
fn seed_plan(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("symstride-run-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let spec = dir.join("seed.json");
    std::fs::write(&spec, symstride::aot::SEED_SPEC_JSON).unwrap();
    let plan = dir.join("seed.plan");
    let o = run(&[
        "compile",
        spec.to_str().unwrap(),
        "-o",
        plan.to_str().unwrap(),
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    plan
}

/// The issue's binding (`c = 2^31`: 80 GiB with the reference check) is refused at once,
/// with the estimate and the limit, instead of being OOM-killed after a minute.
#[test]
fn issue17_huge_run_is_refused_before_allocating() {
    let plan = seed_plan("huge");
    let p = plan.to_str().unwrap();
    let t = Instant::now();
    let o = run(&[
        "run",
        p,
        "--bind",
        "c=2147483648,h=1,w=1",
        "--max-memory",
        "8G",
    ]);
    assert!(t.elapsed() < Duration::from_secs(10));
    assert_ne!(o.code, 0);
    assert!(
        o.stderr.contains("would allocate 80.00 GiB")
            && o.stderr.contains("8.00 GiB (--max-memory)"),
        "{}",
        o.stderr
    );
    // The default limit (half of the available memory) refuses it too on any machine with
    // less than 160 GiB available.
    let o = run(&["run", p, "--bind", "c=2147483648,h=1,w=1"]);
    assert_ne!(o.code, 0);
    assert!(o.stderr.contains("would allocate"), "{}", o.stderr);
}

#[test]
fn max_memory_and_no_verify() {
    let plan = seed_plan("limit");
    let p = plan.to_str().unwrap();
    // At c = h = w = 20: inputs 24000 elements, output 16000, reference copies 40000:
    // 320000 bytes with the check, 160000 without. 100K refuses, 1M admits.
    let o = run(&["run", p, "--bind", "c=20,h=20,w=20", "--max-memory", "100K"]);
    assert_ne!(o.code, 0);
    assert!(o.stderr.contains("--no-verify would need"), "{}", o.stderr);
    let o = run(&["run", p, "--bind", "c=20,h=20,w=20", "--max-memory", "1M"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("verified 16000 elements"), "{}", o.stdout);
    let o = run(&["run", p, "--bind", "c=20,h=20,w=20", "--no-verify"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("not verified (--no-verify)"),
        "{}",
        o.stdout
    );
    let o = run(&["run", p, "--bind", "c=2,h=2,w=2", "--max-memory", "12Q"]);
    assert_ne!(o.code, 0);
    assert!(o.stderr.contains("unknown unit"), "{}", o.stderr);
}

#[test]
fn threads_zero_means_all_cores_and_too_many_are_capped() {
    let plan = seed_plan("threads");
    let p = plan.to_str().unwrap();
    let cores = std::thread::available_parallelism().unwrap().get();
    let o = run(&["run", p, "--bind", "c=3,h=4,w=5", "--threads", "0"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains(&format!(", {cores} thread(s)")),
        "{}",
        o.stdout
    );
    let o = run(&["run", p, "--bind", "c=3,h=4,w=5", "--threads", "1000"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stderr.contains("--threads 1000 capped at"),
        "{}",
        o.stderr
    );
    assert!(
        o.stdout.contains(&format!(", {} thread(s)", 4 * cores)),
        "{}",
        o.stdout
    );
}

#[test]
fn run_echoes_the_parsed_binding() {
    let plan = seed_plan("echo");
    let o = run(&["run", plan.to_str().unwrap(), "--bind", " w=5, c=3,h=4 "]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains(" at c=3,h=4,w=5\n"), "{}", o.stdout);
}
