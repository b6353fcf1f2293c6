//! The CLI's contract on bad input, checked on the built binary:
//!
//! * a command that met any invalid input says *what* and *where* on stderr and exits
//!   non-zero, after finishing the valid lines where it goes on;
//! * it never exits 0 having skipped input;
//! * it never panics or prints a backtrace (every run sets `RUST_BACKTRACE=1`, so a panic
//!   would show).

use std::path::{Path, PathBuf};
mod common;

use std::process::{Command, Stdio};

use common::{run, Run, BIN};

/// A scratch directory for one test, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("symstride-cli-{}-{name}", std::process::id()));
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

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

const GOOD_LAYOUT: &str =
    r#"{"kind":"layout","sizes":[2,3],"strides":[3,1],"expect":{"is_contiguous":true}}"#;
const GOOD_BROADCAST: &str =
    r#"{"kind":"broadcast","shapes":[[2,1],[3]],"expect":{"sizes":[2,3]}}"#;

/// stdout answer lines (`{"got": ...}`).
fn answers(r: &Run) -> Vec<serde_json::Value> {
    r.stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["got"].clone())
        .collect()
}

/// `conformance [--symbolic] FILE`.
fn conformance_args(symbolic: bool, file: &str) -> Vec<&str> {
    let mut args = vec!["conformance"];
    if symbolic {
        args.push("--symbolic");
    }
    args.push(file);
    args
}

#[test]
fn conformance_valid_input_exits_zero() {
    let s = Scratch::new("valid");
    let f = s.file(
        "ok.jsonl",
        format!("{GOOD_LAYOUT}\n\n{GOOD_BROADCAST}\n").as_bytes(),
    );
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
        let args = conformance_args(symbolic, p(&f));
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
            assert!(
                !r.stderr.contains(&format!("broken.jsonl:{line}:")),
                "{}",
                r.stderr
            );
        }
    }
}

#[test]
fn conformance_invalid_tensors_fail_the_run_naming_line_dim_and_value() {
    let s = Scratch::new("invalid");
    let cases = [
        (
            r#"{"kind":"layout","sizes":[2,-3],"strides":[3,1],"expect":{"is_contiguous":true}}"#,
            &["dim 1", "-3"][..],
        ),
        (
            r#"{"kind":"layout","sizes":[2,3],"strides":[1],"expect":{"is_contiguous":true}}"#,
            &["2 sizes", "1 strides"][..],
        ),
        (
            r#"{"kind":"layout","sizes":[4611686018427387904,4],"strides":[4,1],"expect":{"is_contiguous":true}}"#,
            &["overflow"][..],
        ),
        (
            r#"{"kind":"layout","sizes":[4],"strides":[9223372036854775807],"expect":{"is_contiguous":true}}"#,
            &["overflow", "dim 0"][..],
        ),
        (
            r#"{"kind":"broadcast","shapes":[[2],[-1]],"expect":{"sizes":[2]}}"#,
            &["dim 0", "-1"][..],
        ),
        (
            r#"{"kind":"elementwise","op":"add","inputs":[{"sizes":[2],"strides":[1]},{"sizes":[2],"strides":[-1]}],"expect":{"sizes":[2],"strides":[1]}}"#,
            &["input 1", "dim 0", "-1"][..],
        ),
        (
            r#"{"kind":"elementwise","op":"add","inputs":[{"sizes":[2],"strides":[1]}],"expect":{}}"#,
            &["2 inputs"][..],
        ),
        (
            r#"{"kind":"layout","sizes":[99999999999999999999],"strides":[1],"expect":{}}"#,
            &["1e+20", "i64"][..],
        ),
    ];
    let rank65 = format!(
        r#"{{"kind":"layout","sizes":{s:?},"strides":{s:?},"expect":{{"is_contiguous":true}}}}"#,
        s = vec![1; 65]
    );
    let mut all: Vec<(String, &[&str])> = cases.iter().map(|(c, w)| (c.to_string(), *w)).collect();
    all.push((rank65, &["65", "64"]));
    for (i, (case, what)) in all.iter().enumerate() {
        let f = s.file(
            &format!("c{i}.jsonl"),
            format!("{GOOD_LAYOUT}\n{case}\n").as_bytes(),
        );
        for symbolic in [false, true] {
            let args = conformance_args(symbolic, p(&f));
            let r = run(&args);
            assert_ne!(
                r.code, 0,
                "{case} (symbolic {symbolic}) exited 0:\n{}",
                r.stdout
            );
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
    assert!(
        r.stderr.contains("bytes.jsonl:2:") && r.stderr.contains("UTF-8"),
        "{}",
        r.stderr
    );
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
        // A filter that selects nothing would otherwise "succeed" having run nothing.
        &["bench", "--only", "no_such_scenario"][..],
    ] {
        let r = run(args);
        assert_ne!(r.code, 0, "{args:?}");
        assert!(!r.stderr.is_empty(), "{args:?}");
    }
}

/// `bench --json`: every selected scenario has its median, and a bandwidth scenario its
/// ratios to the 64 MiB copy and to a copy of its own bytes, except one below 1 MiB (whose
/// copy would time thread dispatch), which has no same-bytes ratio.
#[test]
fn bench_json_has_both_copy_ratios() {
    let r = run(&[
        "bench",
        "--json",
        "--reps",
        "1",
        "--threads",
        "2",
        "--only",
        "to_channels_last_1M,add_small_dispatch,dispatch_cached_4d",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(r.stdout.trim()).expect("one JSON object");
    let positive = |x: &serde_json::Value| x.as_f64().is_some_and(|x| x.is_finite() && x > 0.0);
    for name in ["to_channels_last_1M", "add_small_dispatch", "dispatch_cached_4d"] {
        assert!(positive(&v["median_s"][name]), "{name}: {v}");
    }
    assert!(positive(&v["vs_copy"]["to_channels_last_1M"]), "{v}");
    assert!(positive(&v["vs_copy_same_bytes"]["to_channels_last_1M"]), "{v}");
    assert!(positive(&v["vs_copy"]["add_small_dispatch"]), "{v}");
    assert!(v["vs_copy_same_bytes"].get("add_small_dispatch").is_none(), "{v}");
    assert!(v["vs_copy"].get("dispatch_cached_4d").is_none(), "{v}");
    assert!(v["vs_copy_same_bytes"].get("dispatch_cached_4d").is_none(), "{v}");
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

const SEED_SPEC: &str = r#"{"name":"seed","op":"add","inputs":[{"sizes":[2,"c","h","w"],"layout":"channels_last"},{"sizes":["c","h","w"],"layout":"contiguous"}],"hints":{"c":3,"h":4,"w":5}}"#;

/// Compiles the seed spec into `dir`, returning the artifact path.
fn compiled(s: &Scratch) -> PathBuf {
    let spec = s.file("seed.json", SEED_SPEC.as_bytes());
    let plan = s.0.join("seed.plan");
    let r = run(&["compile", p(&spec), "-o", p(&plan)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    plan
}

#[test]
fn compile_reports_bad_specs_with_the_file_name() {
    let s = Scratch::new("badspec");
    for (name, text, what) in [
        (
            "neg.json",
            r#"{"op":"neg","inputs":[{"sizes":["c"],"layout":"contiguous"}],"hints":{"c":-1}}"#,
            "-1",
        ),
        (
            "unknown.json",
            r#"{"op":"neg","inputs":[{"sizes":["c"],"strides":["c*zz"]}],"hints":{"c":2}}"#,
            "zz",
        ),
        (
            "parse.json",
            r#"{"op":"neg","inputs":[{"sizes":["c"],"strides":["c +* 1"]}],"hints":{"c":2}}"#,
            "position",
        ),
        (
            "trunc.json",
            r#"{"op":"neg","inputs":[{"sizes":["c"],"#,
            "trunc.json",
        ),
        (
            "huge.json",
            r#"{"op":"neg","inputs":[{"sizes":["c","c","c"],"layout":"contiguous"}],"hints":{"c":4000000}}"#,
            "overflow",
        ),
    ] {
        let f = s.file(name, text.as_bytes());
        let out = s.0.join("out.plan");
        let r = run(&["compile", p(&f), "-o", p(&out)]);
        assert_ne!(r.code, 0, "{name}");
        assert!(r.stderr.contains(what), "{name}: {}", r.stderr);
        assert!(!out.exists(), "{name}: an artifact was written");
    }
}

#[test]
fn plan_commands_on_a_real_artifact() {
    let s = Scratch::new("aot");
    let plan = compiled(&s);
    let r = run(&["guards", p(&plan)]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("h >= 2"), "{}", r.stdout);
    let r = run(&["check", p(&plan), "--bind", "c=3,h=4,w=5"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = run(&["run", p(&plan), "--bind", "c=3,h=4,w=5"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for (bind, what) in [
        ("c=3,h=4", "`w`"),
        ("c=3,h=4,w=x", "`w`"),
        ("c=-3,h=4,w=5", "-3"),
        ("c=3,h=4,w=5,z=1", "`z`"),
        ("c=3,h=4,w", "`w`"),
        ("c=4611686018427387904,h=4,w=5", "overflow"),
    ] {
        for cmd in ["check", "run"] {
            let r = run(&[cmd, p(&plan), "--bind", bind]);
            assert_ne!(r.code, 0, "{cmd} {bind}");
            assert!(r.stderr.contains(what), "{cmd} {bind}: {}", r.stderr);
        }
    }
    // Too large to allocate: an error, not an abort.
    let r = run(&["run", p(&plan), "--bind", "c=10000,h=10000,w=1000"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("memory"), "{}", r.stderr);
}

#[test]
fn check_bindings_file_reports_bad_lines_and_answers_the_rest() {
    let s = Scratch::new("bindings");
    let plan = compiled(&s);
    let mut bytes = Vec::new();
    bytes.extend_from_slice(b"{\"c\":3,\"h\":4,\"w\":5}\n"); // 1 ok
    bytes.extend_from_slice(b"{\"c\":3,\"h\":4\n"); // 2 truncated
    bytes.extend_from_slice(b"\n"); // blank
    bytes.extend_from_slice(b"{\"c\":3,\"h\":1,\"w\":5}\n"); // 4 ok (fails a guard)
    bytes.extend_from_slice(b"{\"c\":3,\"h\":\xff,\"w\":5}\n"); // 5 not UTF-8
    bytes.extend_from_slice(b"{\"c\":3,\"h\":4,\"zz\":5}\n"); // 6 unknown symbol
    bytes.extend_from_slice(b"{\"c\":-3,\"h\":4,\"w\":5}\n"); // 7 negative
    bytes.extend_from_slice(b"[1,2]\n"); // 8 not an object
    bytes.extend_from_slice(b"{\"c\":2,\"h\":2,\"w\":2}"); // 9 ok, no final newline
    let f = s.file("b.jsonl", &bytes);
    let r = run(&["check", p(&plan), "--bindings", p(&f)]);
    assert_ne!(r.code, 0);
    let lines: Vec<serde_json::Value> = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 8, "{}", r.stdout);
    assert_eq!(lines[0]["pass"], true);
    assert_eq!(lines[2]["pass"], false);
    assert_eq!(lines[7]["pass"], true);
    for (k, n) in [(1, 2), (3, 5), (4, 6), (5, 7), (6, 8)] {
        assert!(lines[k].get("error").is_some(), "{k}: {}", lines[k]);
        assert!(
            r.stderr.contains(&format!("b.jsonl:{n}:")),
            "line {n}: {}",
            r.stderr
        );
    }
    for n in [1, 3, 4, 9] {
        assert!(!r.stderr.contains(&format!("b.jsonl:{n}:")), "{}", r.stderr);
    }
}

#[test]
fn plan_commands_reject_rewritten_artifacts() {
    let s = Scratch::new("rewritten");
    let plan = compiled(&s);
    let text = std::fs::read_to_string(&plan).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["version"] = serde_json::json!(99);
    let old = s.file("old.plan", v.to_string().as_bytes());
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["specializations"][0]["plan"]["shape"][0] = serde_json::json!("c + 1");
    let shape = s.file("shape.plan", v.to_string().as_bytes());
    let truncated = s.file("trunc.plan", &text.as_bytes()[..text.len() / 2]);
    for (f, what) in [
        (&old, "version 99"),
        (&shape, "shape.plan"),
        (&truncated, "trunc.plan"),
    ] {
        for args in [
            vec!["guards", p(f)],
            vec!["check", p(f), "--bind", "c=3,h=4,w=5"],
            vec!["run", p(f), "--bind", "c=3,h=4,w=5"],
        ] {
            let r = run(&args);
            assert_ne!(r.code, 0, "{args:?}");
            assert!(r.stderr.contains(what), "{args:?}: {}", r.stderr);
        }
    }
}

/// `symstride ... | head`: a closed stdout is not a panic (println! would panic on EPIPE).
#[test]
fn closed_stdout_is_not_a_panic() {
    let s = Scratch::new("pipe");
    let plan = compiled(&s);
    let spec = s.file("seed2.json", SEED_SPEC.as_bytes());
    let cases = s.file(
        "c.jsonl",
        format!("{GOOD_LAYOUT}\n").repeat(2000).as_bytes(),
    );
    for args in [
        vec!["guards", p(&plan)],
        vec!["compile", p(&spec), "-o", p(&s.0.join("x.plan"))],
        vec!["run", p(&plan), "--bind", "c=3,h=4,w=5"],
        vec!["check", p(&plan), "--bind", "c=3,h=4,w=5"],
        vec!["conformance", p(&cases)],
    ] {
        // A pipe whose read end is already closed: every write fails with EPIPE.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = Command::new(BIN)
            .args(&args)
            .env("RUST_BACKTRACE", "1")
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}:\n{stderr}");
        assert_ne!(
            out.status.code(),
            Some(0),
            "{args:?}: output lost but exit 0"
        );
    }
}

/// Specs take every float32 op of the op table: each compiles, and `run` executes it through
/// the table's kernel and checks it against the table's naive reference.
#[test]
fn specs_take_the_float32_ops_of_the_table() {
    let s = Scratch::new("spec-ops");
    for def in symstride::op::TABLE.iter() {
        if !symstride::aot::is_spec_op(def.op) {
            continue;
        }
        let inputs: Vec<String> = (0..def.arity)
            .map(|k| {
                if k == 0 {
                    r#"{"sizes":[2,"c","h","w"],"layout":"channels_last"}"#.to_string()
                } else {
                    r#"{"sizes":["c","h","w"],"layout":"contiguous"}"#.to_string()
                }
            })
            .collect();
        let spec = format!(
            r#"{{"op":"{}","inputs":[{}],"hints":{{"c":3,"h":4,"w":5}}}}"#,
            def.name,
            inputs.join(",")
        );
        let f = s.file(&format!("{}.json", def.name), spec.as_bytes());
        let plan = s.0.join(format!("{}.plan", def.name));
        let r = run(&["compile", p(&f), "-o", p(&plan)]);
        assert_eq!(r.code, 0, "{}: {}", def.name, r.stderr);
        let r = run(&["run", p(&plan), "--bind", "c=3,h=7,w=5"]);
        assert_eq!(r.code, 0, "{}: {}", def.name, r.stderr);
    }
}
