//! `symstride compile` and friends on the inputs of issue 17's "Smaller" section: spec files
//! holding an array of specs, specs without symbols, stride order, closed pipes.

use std::path::PathBuf;
use std::process::{Command, Stdio};

mod common;

use common::{run, BIN};

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("symstride-compile-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn s(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

/// The shipped `public_specs.json` is an array: without `--name` the message says so and
/// lists the names; `--name` picks one; an unknown name is listed against the others.
#[test]
fn compile_of_an_array_of_specs_needs_a_name() {
    let dir = scratch("array");
    let specs = symstride::testing::spec_path("public_specs.json");
    let plan = dir.join("p.plan");
    let o = run(&["compile", s(&specs), "-o", s(&plan)]);
    assert_ne!(o.code, 0);
    assert!(
        o.stderr.contains("array of 6 specs") && o.stderr.contains("--name"),
        "{}",
        o.stderr
    );
    let o = run(&[
        "compile",
        s(&specs),
        "--name",
        "rows_plus_cols",
        "-o",
        s(&plan),
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.starts_with("compiled rows_plus_cols"),
        "{}",
        o.stdout
    );
    let o = run(&["compile", s(&specs), "--name", "nope", "-o", s(&plan)]);
    assert_ne!(o.code, 0);
    assert!(o.stderr.contains("no spec named `nope`"), "{}", o.stderr);
}

#[test]
fn spec_without_symbols_prints_none() {
    let dir = scratch("nosym");
    let spec = dir.join("s.json");
    std::fs::write(
        &spec,
        r#"{"op":"neg","inputs":[{"sizes":[2,3],"layout":"contiguous"}],"hints":{}}"#,
    )
    .unwrap();
    let plan = dir.join("s.plan");
    let o = run(&["compile", s(&spec), "-o", s(&plan)]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("symbols none)"), "{}", o.stdout);
    assert!(!o.stdout.contains("symbols )"), "{}", o.stdout);
    let o = run(&["guards", s(&plan)]);
    assert!(o.stdout.contains("symbols none:"), "{}", o.stdout);
    assert!(o.stdout.contains("traced at no symbols"), "{}", o.stdout);
}

/// A symbol bound by a whole stride may be used in a stride expression before it.
#[test]
fn stride_order_does_not_matter() {
    let dir = scratch("order");
    let mut answers = Vec::new();
    for strides in [r#"["s","s*b"]"#, r#"["s*b","s"]"#] {
        let spec = dir.join("s.json");
        std::fs::write(
            &spec,
            format!(
                r#"{{"op":"neg","inputs":[{{"sizes":["a","b"],"strides":{strides}}}],"hints":{{"a":2,"b":3,"s":1}}}}"#
            ),
        )
        .unwrap();
        let plan = dir.join("s.plan");
        let o = run(&["compile", s(&spec), "-o", s(&plan)]);
        assert_eq!(o.code, 0, "{strides}: {}", o.stderr);
        let o = run(&["check", s(&plan), "--bind", "a=2,b=3,s=1"]);
        assert_eq!(o.code, 0, "{strides}: {}", o.stderr);
        answers.push(o.stdout.contains("\"pass\":true"));
    }
    assert_eq!(answers, [true, true]);
}

/// `| head`: the reader closes the pipe early; the command ends quietly (no `Broken pipe`).
#[test]
fn closed_stdout_is_quiet() {
    let golden = symstride::testing::golden_path("layout.jsonl");
    for args in [
        vec!["conformance", s(&golden)],
        vec!["conformance", "--check", s(&golden)],
    ] {
        let mut child = Command::new(BIN)
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Read one line, then close our end.
        let mut out = child.stdout.take().unwrap();
        let mut buf = [0u8; 64];
        let _ = std::io::Read::read(&mut out, &mut buf).unwrap();
        drop(out);
        let o = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!err.contains("Broken pipe"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
