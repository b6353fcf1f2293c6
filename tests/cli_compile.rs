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

/// The guards of one specialization as `guards` prints them, parsed back: a line is a
/// guard (text before `   #`), or `any of:` / `all of:` with its parts indented below
/// (an `all of` line may pack several conditions joined by `&&`).
fn parse_listing(lines: &[&str]) -> Vec<symstride::sym::BoolExpr> {
    use symstride::sym::BoolExpr;
    fn indent(l: &str) -> usize {
        l.len() - l.trim_start().len()
    }
    fn node(lines: &[&str], i: &mut usize) -> BoolExpr {
        let line = lines[*i];
        let depth = indent(line);
        let text = line.trim_start().split("   #").next().unwrap().trim_end();
        *i += 1;
        let head = match text {
            "any of:" => false,
            "all of:" => true,
            _ => return BoolExpr::parse(text).unwrap(),
        };
        let mut parts = Vec::new();
        while *i < lines.len() && indent(lines[*i]) > depth {
            parts.push(node(lines, i));
        }
        assert!(parts.len() >= 2, "a tree node with {} parts", parts.len());
        if head {
            BoolExpr::and_all(parts)
        } else {
            BoolExpr::or_all(parts)
        }
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        out.push(node(lines, &mut i));
    }
    out
}

/// Guards of a free-stride cover are long merged disjunctions: `guards` prints each guard
/// too long for a line as an `any of:` / `all of:` tree whose lines stay within 80 columns
/// (before the reason), ordering pairs read as equalities (`s == t`, never `t <= s && s <=
/// t`), and the tree parsed back is the stored guard.
#[test]
fn long_guards_print_as_a_faithful_tree_of_short_lines() {
    use symstride::aot::Artifact;
    use symstride::sym::Bindings;
    let dir = scratch("tree");
    let spec = dir.join("spec.json");
    std::fs::write(
        &spec,
        r#"{"op":"neg","inputs":[{"sizes":["a","b"],"strides":["s","t"]}],"hints":{"a":3,"b":4,"s":1,"t":3}}"#,
    )
    .unwrap();
    let plan = dir.join("p.plan");
    let o = run(&["compile", s(&spec), "--cover", "-o", s(&plan)]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let a = Artifact::from_json(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    let o = run(&["guards", s(&plan)]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let mut trees = 0;
    let blocks: Vec<Vec<&str>> = o
        .stdout
        .split("specialization ")
        .skip(1)
        .map(|b| b.lines().skip(1).collect())
        .collect();
    assert_eq!(blocks.len(), a.specializations.len());
    for (block, sp) in blocks.iter().zip(&a.specializations) {
        for l in block {
            let guard = l.split("   #").next().unwrap();
            assert!(guard.trim_end().len() <= 80, "{l}");
            assert!(!guard.contains("t <= s && s <= t"), "{l}");
        }
        trees += block.iter().filter(|l| l.contains(" of:")).count();
        let parsed = parse_listing(block);
        assert_eq!(parsed.len(), sp.guards.len());
        for (p, g) in parsed.iter().zip(&sp.guards) {
            // Same truth value at every binding of a small grid (the tree may regroup
            // `&&`-packed lines, so compare meanings, not text).
            for v in 0..625 {
                let at = Bindings::from_pairs([
                    ("a", v % 5),
                    ("b", v / 5 % 5),
                    ("s", v / 25 % 5),
                    ("t", v / 125),
                ]);
                assert_eq!(p.eval(&at).unwrap(), g.cond.eval(&at).unwrap(), "{} vs {}", p, g.cond);
            }
        }
    }
    assert!(trees > 0, "no guard was long enough to print as a tree:\n{}", o.stdout);
}

/// `--max-specializations` caps a cover: stopped there, the artifact says it is incomplete
/// and lists what is left; the default cap is large enough for the cover to finish; 0 and
/// a cap without `--cover` are refused.
#[test]
fn max_specializations_caps_a_cover() {
    let dir = scratch("cap");
    let spec = dir.join("s.json");
    std::fs::write(
        &spec,
        r#"{"op":"add","inputs":[{"sizes":["a","b","c"],"layout":"contiguous"},{"sizes":["d","e","f"],"layout":"contiguous"}],"hints":{"a":2,"b":3,"c":4,"d":2,"e":3,"f":4}}"#,
    )
    .unwrap();
    let plan = dir.join("p.plan");
    let load = |p: &std::path::Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let o = run(&["compile", s(&spec), "--cover", "--max-specializations", "5", "-o", s(&plan)]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v = load(&plan);
    assert!(v["specializations"].as_array().unwrap().len() <= 5);
    assert_eq!(v["complete"], false, "{v}");
    assert!(!v["uncovered"].as_array().unwrap().is_empty(), "{v}");
    assert!(o.stdout.contains("INCOMPLETE"), "{}", o.stdout);
    let o = run(&["compile", s(&spec), "--cover", "-o", s(&plan)]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(load(&plan)["complete"], true);
    for bad in [
        vec!["--cover", "--max-specializations", "0"],
        vec!["--max-specializations", "9"],
    ] {
        let mut args = vec!["compile", s(&spec), "-o", s(&plan)];
        args.extend(bad.iter().copied());
        let o = run(&args);
        assert_ne!(o.code, 0, "{bad:?}");
        assert!(o.stderr.contains("max-specializations"), "{}", o.stderr);
    }
}
