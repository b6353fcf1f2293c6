//! The CLI's contract on bad input, checked on the built binary:
//!
//! * a command that met any invalid input says *what* and *where* on stderr and exits
//!   non-zero, after finishing the valid lines where it goes on;
//! * it never exits 0 having skipped input;
//! * it never panics or prints a backtrace (every run sets `RUST_BACKTRACE=1`, so a panic
//!   would show).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_symstride");

/// A scratch directory for one test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "symstride-cli-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
    fn file(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs the binary with `RUST_BACKTRACE=1` and checks it did not panic.
fn run(args: &[&str]) -> Run {
    let Output {
        status,
        stdout,
        stderr,
    } = Command::new(BIN)
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run symstride");
    let r = Run {
        code: status.code().expect("terminated by a signal"),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    };
    assert!(
        !r.stderr.contains("panicked") && !r.stderr.contains("stack backtrace"),
        "symstride {args:?} panicked:\n{}",
        r.stderr
    );
    r
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

const GOOD_LAYOUT: &str =
    r#"{"kind":"layout","sizes":[2,3],"strides":[3,1],"expect":{"is_contiguous":true}}"#;
const GOOD_BROADCAST: &str = r#"{"kind":"broadcast","shapes":[[2,1],[3]],"expect":{"sizes":[2,3]}}"#;

/// stdout answer lines (`{"got": ...}`).
fn answers(r: &Run) -> Vec<serde_json::Value> {
    r.stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["got"].clone())
        .collect()
}

#[test]
fn conformance_valid_input_exits_zero() {
    let s = Scratch::new("valid");
    let f = s.file("ok.jsonl", format!("{GOOD_LAYOUT}\n\n{GOOD_BROADCAST}\n").as_bytes());
    for mode in [&[][..], &["--symbolic"][..], &["--check"][..]] {
        let mut args = vec!["conformance"];
        args.extend_from_slice(mode);
        args.push(p(&f));
        let r = run(&args);
        assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
        assert_eq!(answers(&r).len(), 2);
        assert!(r.stderr.is_empty(), "{}", r.stderr);
    }
}

#[test]
fn conformance_broken_lines_are_reported_and_the_rest_answered() {
    let s = Scratch::new("broken");
    let text = format!(
        "{GOOD_LAYOUT}\nnot json\n{GOOD_BROADCAST}\n{{\"kind\":\"layout\",\"sizes\":[1]}}\n{{\"kind\":\"nope\"}}\n{GOOD_LAYOUT}\n"
    );
    let f = s.file("broken.jsonl", text.as_bytes());
    for symbolic in [false, true] {
        let mut args = vec!["conformance"];
        if symbolic {
            args.push("--symbolic");
        }
        args.push(p(&f));
        let r = run(&args);
        assert_ne!(r.code, 0);
        let got = answers(&r);
        assert_eq!(got.len(), 6, "one answer per non-blank line: {}", r.stdout);
        assert_eq!(got[0]["is_contiguous"], true);
        assert_eq!(got[2]["sizes"], serde_json::json!([2, 3]));
        assert_eq!(got[5]["is_contiguous"], true);
        for line in [2, 4, 5] {
            assert!(
                r.stderr.contains(&format!("broken.jsonl:{line}:")),
                "line {line} not reported:\n{}",
                r.stderr
            );
        }
        for line in [1, 3, 6] {
            assert!(!r.stderr.contains(&format!("broken.jsonl:{line}:")), "{}", r.stderr);
        }
    }
}

#[test]
fn conformance_invalid_tensors_fail_the_run_naming_line_dim_and_value() {
    let s = Scratch::new("invalid");
    let cases = [
        (r#"{"kind":"layout","sizes":[2,-3],"strides":[3,1],"expect":{"is_contiguous":true}}"#, &["dim 1", "-3"][..]),
        (r#"{"kind":"layout","sizes":[2,3],"strides":[1],"expect":{"is_contiguous":true}}"#, &["2 sizes", "1 strides"][..]),
        (r#"{"kind":"layout","sizes":[4611686018427387904,4],"strides":[4,1],"expect":{"is_contiguous":true}}"#, &["overflow"][..]),
        (r#"{"kind":"layout","sizes":[4],"strides":[9223372036854775807],"expect":{"is_contiguous":true}}"#, &["overflow", "dim 0"][..]),
        (r#"{"kind":"broadcast","shapes":[[2],[-1]],"expect":{"sizes":[2]}}"#, &["dim 0", "-1"][..]),
        (r#"{"kind":"elementwise","op":"add","inputs":[{"sizes":[2],"strides":[1]},{"sizes":[2],"strides":[-1]}],"expect":{"sizes":[2],"strides":[1]}}"#, &["input 1", "dim 0", "-1"][..]),
        (r#"{"kind":"elementwise","op":"add","inputs":[{"sizes":[2],"strides":[1]}],"expect":{}}"#, &["2 inputs"][..]),
        (r#"{"kind":"layout","sizes":[99999999999999999999],"strides":[1],"expect":{}}"#, &["1e+20", "i64"][..]),
    ];
    let rank65 = format!(
        r#"{{"kind":"layout","sizes":{s:?},"strides":{s:?},"expect":{{"is_contiguous":true}}}}"#,
        s = vec![1; 65]
    );
    let mut all: Vec<(String, &[&str])> = cases.iter().map(|(c, w)| (c.to_string(), *w)).collect();
    all.push((rank65, &["65", "64"]));
    for (i, (case, what)) in all.iter().enumerate() {
        let f = s.file(&format!("c{i}.jsonl"), format!("{GOOD_LAYOUT}\n{case}\n").as_bytes());
        for symbolic in [false, true] {
            let mut args = vec!["conformance"];
            if symbolic {
                args.push("--symbolic");
            }
            args.push(p(&f));
            let r = run(&args);
            assert_ne!(r.code, 0, "{case} (symbolic {symbolic}) exited 0:\n{}", r.stdout);
            assert_eq!(answers(&r).len(), 2, "{}", r.stdout);
            let line = r
                .stderr
                .lines()
                .find(|l| l.contains(&format!("c{i}.jsonl:2:")))
                .unwrap_or_else(|| panic!("{case}: line 2 not reported:\n{}", r.stderr));
            for w in what.iter() {
                assert!(line.contains(w), "{case}: `{line}` does not mention `{w}`");
            }
        }
    }
}

#[test]
fn conformance_non_utf8_and_truncated_input() {
    let s = Scratch::new("bytes");
    let mut bytes = format!("{GOOD_LAYOUT}\n").into_bytes();
    bytes.extend_from_slice(b"{\"kind\":\"layout\",\"sizes\":[2],\xff\xfe\n");
    bytes.extend_from_slice(format!("{GOOD_BROADCAST}\n").as_bytes());
    bytes.extend_from_slice(&GOOD_LAYOUT.as_bytes()[..30]); // truncated, no newline
    let f = s.file("bytes.jsonl", &bytes);
    let r = run(&["conformance", p(&f)]);
    assert_ne!(r.code, 0);
    let got = answers(&r);
    assert_eq!(got.len(), 4, "{}", r.stdout);
    assert_eq!(got[0]["is_contiguous"], true);
    assert_eq!(got[2]["sizes"], serde_json::json!([2, 3]));
    assert!(r.stderr.contains("bytes.jsonl:2:") && r.stderr.contains("UTF-8"), "{}", r.stderr);
    assert!(r.stderr.contains("bytes.jsonl:4:"), "{}", r.stderr);
}

#[test]
fn conformance_missing_file_does_not_stop_the_others() {
    let s = Scratch::new("missing");
    let f = s.file("ok.jsonl", format!("{GOOD_LAYOUT}\n").as_bytes());
    let missing = s.0.join("nope.jsonl");
    let r = run(&["conformance", p(&missing), p(&f)]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("nope.jsonl"), "{}", r.stderr);
    assert_eq!(answers(&r).len(), 1);
    // A directory is not a file either.
    let r = run(&["conformance", p(&s.0)]);
    assert_ne!(r.code, 0);
    assert!(!r.stderr.is_empty());
}

#[test]
fn usage_errors_do_not_panic() {
    for args in [
        &[][..],
        &["conformance"][..],
        &["no-such-command"][..],
        &["conformance", "--no-such-flag", "x"][..],
        &["run"][..],
        &["demo", "--threads", "many"][..],
    ] {
        let r = run(args);
        assert_ne!(r.code, 0, "{args:?}");
        assert!(!r.stderr.is_empty(), "{args:?}");
    }
}

/// Commands reading a plan, a spec or bindings: a missing or garbage file, or bad
/// bindings, is an error naming it, never a panic.
#[test]
fn plan_commands_reject_garbage() {
    let s = Scratch::new("garbage");
    let missing = s.0.join("missing.plan");
    let garbage = s.file("garbage.plan", b"\x00\x01not a plan\xff");
    let empty = s.file("empty.json", b"");
    let spec_garbage = s.file("spec.json", b"{\"op\": \"add\", \"inputs\": [");
    for file in [&missing, &garbage, &empty, &spec_garbage] {
        let f = p(file);
        for args in [
            vec!["compile", f],
            vec!["compile", f, "-o", p(&s.0.join("out.plan"))],
            vec!["guards", f],
            vec!["check", f, "--bind", "s0=4"],
            vec!["run", f, "--bind", "s0=4"],
        ] {
            let r = run(&args);
            assert_ne!(r.code, 0, "{args:?} exited 0:\n{}", r.stdout);
            assert!(!r.stderr.is_empty(), "{args:?}: nothing on stderr");
        }
    }
}
