//! The CLI on programs: `compile` (a program file, or `--name` from the shipped
//! `public_programs.json`), `guards`, `check`, `run` (`--values` against a fresh concrete
//! run), `--cover`, `demo`, and the auto-detection of program vs single-op files.

use serde_json::Value;
use std::path::PathBuf;

mod common;

use common::run;
use symstride::program::{execute, Program};
use symstride::sym::Bindings;

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("symstride-program-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn s(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

fn compile(name: &str, dir: &std::path::Path) -> PathBuf {
    let programs = symstride::testing::spec_path("public_programs.json");
    let plan = dir.join(format!("{name}.plan"));
    let o = run(&["compile", s(&programs), "--name", name, "-o", s(&plan)]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("compiled program"), "{}", o.stdout);
    plan
}

#[test]
fn compile_guards_and_check_a_program() {
    let dir = scratch("check");
    let plan = compile("nhwc_to_nchw", &dir);
    let text = std::fs::read_to_string(&plan).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["version"], 2);
    assert!(v["specializations"][0]["guards"][0]["cond"].is_string());
    assert!(v["specializations"][0]["traced_at"].is_object());

    let o = run(&["guards", s(&plan)]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("# step 2 (contiguous cl"), "{}", o.stdout);

    // A binding the guards admit: the outputs' layouts, as a concrete run gives them.
    let o = run(&["check", s(&plan), "--bind", "n=3,h=4,w=5,c=6"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let got: Value = serde_json::from_str(o.stdout.trim()).unwrap();
    assert_eq!(got["pass"], true);
    assert_eq!(got["specialization"], 0);
    let p = Program::from_value(&v["program"]).unwrap();
    let b = Bindings::from_pairs([("n", 3), ("h", 4), ("w", 5), ("c", 6)]);
    let layouts = symstride::program::concrete(&p, &b).unwrap();
    for &k in &p.outputs {
        let out = &got["outputs"][&p.names[k]];
        assert_eq!(out["sizes"], serde_json::json!(layouts[k].sizes));
        assert_eq!(out["strides"], serde_json::json!(layouts[k].strides));
        assert_eq!(out["dtype"], layouts[k].dtype.name());
    }
    // One it does not: the failed guard is named.
    let o = run(&["check", s(&plan), "--bind", "n=3,h=4,w=5,c=1"]);
    let got: Value = serde_json::from_str(o.stdout.trim()).unwrap();
    assert_eq!(got["pass"], false);
    assert_eq!(got["failed_guard"], "c >= 2");
    // Unknown and missing symbols are clear errors.
    let o = run(&["check", s(&plan), "--bind", "n=3,h=4,w=5"]);
    assert_ne!(o.code, 0);
    assert!(o.stderr.contains("no value for symbol `c`"), "{}", o.stderr);
    let o = run(&["check", s(&plan), "--bind", "n=3,h=4,w=5,c=2,q=1"]);
    assert_ne!(o.code, 0);
    assert!(o.stderr.contains("`q` is not a symbol"), "{}", o.stderr);
}

#[test]
fn run_values_equal_a_fresh_reference_run() {
    let dir = scratch("run");
    let plan = compile("softmax_lastdim", &dir);
    let o = run(&["run", s(&plan), "--bind", "b=2,t=1,v=5", "--values"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let got: Value = serde_json::from_str(o.stdout.trim()).unwrap();
    let text = std::fs::read_to_string(&plan).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let p = Program::from_value(&v["program"]).unwrap();
    let ex = execute(&p, &Bindings::from_pairs([("b", 2), ("t", 1), ("v", 5)])).unwrap();
    for &k in &p.outputs {
        let out = &got["outputs"][&p.names[k]];
        assert_eq!(out["strides"], serde_json::json!(ex.layouts[k].strides));
        let vals = ex.values(k).unwrap();
        let arr = out["values"].as_array().unwrap();
        assert_eq!(arr.len(), vals.len());
        for (a, b) in arr.iter().zip(vals) {
            let b = match b {
                symstride::tensor::Scalar::Float(f) => f,
                symstride::tensor::Scalar::Int(i) => i as f64,
                symstride::tensor::Scalar::Bool(x) => f64::from(u8::from(x)),
            };
            assert!((a.as_f64().unwrap() - b).abs() <= 1e-12, "{a} vs {b}");
        }
    }
    // Without --values: a report, t = 1 misses the hints' specialization and re-traces.
    let o = run(&["run", s(&plan), "--bind", "b=2,t=1,v=5"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("MISS"), "{}", o.stdout);
    assert!(o.stdout.contains("verified"), "{}", o.stdout);
    // A run above the memory limit is refused before allocating.
    let o = run(&[
        "run",
        s(&plan),
        "--bind",
        "b=2,t=3,v=5",
        "--max-memory",
        "100",
    ]);
    assert_ne!(o.code, 0);
    assert!(o.stderr.contains("more than the limit"), "{}", o.stderr);
}

#[test]
fn single_op_files_keep_their_pipeline_and_programs_cover() {
    let dir = scratch("kinds");
    let specs = symstride::testing::spec_path("public_specs.json");
    let plan = dir.join("op.plan");
    let o = run(&[
        "compile",
        s(&specs),
        "--name",
        "rows_plus_cols",
        "-o",
        s(&plan),
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    assert_eq!(v["version"], 1);
    let o = run(&["check", s(&plan), "--bind", "m=3,n=5"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("\"output\""), "{}", o.stdout);

    // --cover on a program: a complete cover, loaded back (re-proved) by check.
    let programs = symstride::testing::spec_path("public_programs.json");
    let cover = dir.join("c.plan");
    let o = run(&[
        "compile",
        s(&programs),
        "--name",
        "glu_lastdim",
        "--cover",
        "-o",
        s(&cover),
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("cover: complete"), "{}", o.stdout);
    for bind in ["n=1,t=1", "n=0,t=3", "n=4,t=1", "n=3,t=4"] {
        let o = run(&["check", s(&cover), "--bind", bind]);
        assert_eq!(o.code, 0, "{}", o.stderr);
        let got: Value = serde_json::from_str(o.stdout.trim()).unwrap();
        assert_eq!(got["pass"], true, "{bind}: {got}");
    }
}

#[test]
fn demo_runs_the_program() {
    let o = run(&["demo"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("attention heads with bias and softmax"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("MISS"), "{}", o.stdout);
    assert!(o.stdout.contains("cached program dispatch"), "{}", o.stdout);
}

/// Which steps run fused is shown by `guards` (`fused: steps 2-4 fused (reduction 4 in
/// the loop, 3 written); steps 1-5 fused row by row ...`: the softmax's `sub, exp`
/// evaluated inside the `sum`, `exp` written once for the `div`, and the whole program one
/// row at a time where rows are short enough), by `check` (`"fused": {"chains": [[2, 3,
/// 4]], "rows": [[1, 2, 3, 4, 5]]}`, step numbers from 1, as the artifact's 0-based `fusion`
/// plus one) and by
/// `run`, which fuses by default (row by row: 5 steps in one pass; rows longer than
/// `ROW_MAX`: the chain, 3 steps in one pass) and runs step by step with `--no-fuse`; all
/// give the same values.
#[test]
fn fusion_is_shown_by_guards_check_and_run() {
    let dir = scratch("fusion");
    let plan = compile("softmax_lastdim", &dir);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    assert_eq!(
        v["specializations"][0]["fusion"],
        serde_json::json!({"chains": [
            {"steps": [1, 2, 3], "kind": {"reduction": {"writes_input": true}}}
        ], "rows": [{"steps": [0, 1, 2, 3, 4], "written": [0, 4]}]})
    );
    let o = run(&["guards", s(&plan)]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout
            .contains("  fused: steps 2-4 fused (reduction 4 in the loop, 3 written); steps 1-5 fused row by row at rows of 32-16384 elements (1, 5 written)"),
        "{}",
        o.stdout
    );
    let o = run(&["check", s(&plan), "--bind", "b=2,t=3,v=40"]);
    let got: Value = serde_json::from_str(o.stdout.trim()).unwrap();
    assert_eq!(got["pass"], true, "{got}");
    assert_eq!(
        got["fused"],
        serde_json::json!({"chains": [[2, 3, 4]], "rows": [[1, 2, 3, 4, 5]]})
    );
    let o = run(&["run", s(&plan), "--bind", "b=2,t=3,v=40"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("(1, 5 written) (5 steps in 1 pass)"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("verified"), "{}", o.stdout);
    let o = run(&["run", s(&plan), "--bind", "b=1,t=2,v=16385"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("(1, 5 written) (3 steps in 1 pass)"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("verified"), "{}", o.stdout);
    let o = run(&["run", s(&plan), "--bind", "b=2,t=3,v=40", "--no-fuse"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("step by step (--no-fuse)"),
        "{}",
        o.stdout
    );
    let values = |extra: &[&str]| -> Value {
        let mut args = vec!["run", s(&plan), "--bind", "b=2,t=3,v=40", "--values"];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert_eq!(o.code, 0, "{}", o.stderr);
        serde_json::from_str(o.stdout.trim()).unwrap()
    };
    let (fused, plain) = (values(&[]), values(&["--no-fuse"]));
    assert_eq!(
        fused["fused"],
        serde_json::json!({"chains": [[2, 3, 4]], "rows": [[1, 2, 3, 4, 5]]})
    );
    assert_eq!(plain["fused"], serde_json::json!({"chains": [], "rows": []}));
    for (name, out) in fused["outputs"].as_object().unwrap() {
        let (a, b) = (&out["values"], &plain["outputs"][name]["values"]);
        let (a, b) = (a.as_array().unwrap(), b.as_array().unwrap());
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!(
                (x - y).abs() <= 1e-5 * (1.0 + y.abs()),
                "{name}: {x} vs {y}"
            );
        }
    }
}

/// A program passing sizes as Python numbers (the rotary-embedding pattern `div(arange(0, d,
/// 2), d)`, `clamp(i, max=n-1)`): `compile` writes an artifact that `run` loads and runs at
/// two bindings of its one specialization, each with that binding's numbers (the values of
/// a fresh reference run there), fused or not, and verified.
#[test]
fn compile_and_run_a_program_with_sizes_as_numbers() {
    let dir = scratch("symnum");
    let spec = dir.join("symnum.json");
    std::fs::write(
        &spec,
        r#"{"name": "symnum",
 "inputs": [{"name": "x", "sizes": ["s", "d"], "layout": "contiguous", "dtype": "float32"},
            {"name": "i", "sizes": ["s"], "layout": "contiguous", "dtype": "int64"}],
 "hints": {"s": 3, "d": 8},
 "steps": [{"let": "ar", "op": "arange", "args": [], "start": 0, "end": "d", "step": 2, "dtype": "float32"},
           {"let": "ex", "op": "div", "args": ["ar", "d"]},
           {"let": "y", "op": "mul", "args": ["x", "s*d"]},
           {"let": "z", "op": "add", "args": ["y", "s"]},
           {"let": "j", "op": "clamp", "args": ["i"], "min": 0, "max": "s-1"}],
 "outputs": ["ex", "z", "j"]}"#,
    )
    .unwrap();
    let plan = dir.join("symnum.plan");
    let o = run(&["compile", s(&spec), "-o", s(&plan)]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    let p = Program::from_value(&v["program"]).unwrap();
    for (bind, pairs) in [("s=3,d=8", [("s", 3), ("d", 8)]), ("s=5,d=6", [("s", 5), ("d", 6)])] {
        let o = run(&["run", s(&plan), "--bind", bind]);
        assert_eq!(o.code, 0, "{}", o.stderr);
        assert!(o.stdout.contains("verified") && !o.stdout.contains("MISS"), "{}", o.stdout);
        let ex = execute(&p, &Bindings::from_pairs(pairs)).unwrap();
        for extra in [&[][..], &["--no-fuse"][..]] {
            let mut args = vec!["run", s(&plan), "--bind", bind, "--values"];
            args.extend_from_slice(extra);
            let o = run(&args);
            assert_eq!(o.code, 0, "{}", o.stderr);
            let got: Value = serde_json::from_str(o.stdout.trim()).unwrap();
            for &k in &p.outputs {
                let arr = got["outputs"][&p.names[k]]["values"].as_array().unwrap().clone();
                let want = ex.values(k).unwrap();
                assert_eq!(arr.len(), want.len(), "{bind}");
                for (a, b) in arr.iter().zip(want) {
                    let b = match b {
                        symstride::tensor::Scalar::Float(f) => f,
                        symstride::tensor::Scalar::Int(i) => i as f64,
                        symstride::tensor::Scalar::Bool(x) => f64::from(u8::from(x)),
                    };
                    let a = a.as_f64().unwrap();
                    assert!((a - b).abs() <= 1e-6 * (1.0 + b.abs()), "{bind} {}: {a} vs {b}", p.names[k]);
                }
            }
        }
    }
}
