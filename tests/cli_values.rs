//! Values at the edges against PyTorch, and the CLI around them (issue 39): casts of
//! non-finite floats, an overflowing `int64` `prod`, integer tensors with Python integers
//! outside their dtype, `run --max-memory` on expanded outputs, symbolic expressions where
//! PyTorch takes a plain `int`, and the small `run`/`check`/`compile`/`conformance` items.
//!
//! Every expected value here was measured with PyTorch 2.15 (CPU) on inputs made by the
//! golden fill formula; none was taken from this crate's output.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};

mod common;

use common::run;

fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("symstride-values-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn regression(name: &str) -> PathBuf {
    symstride::testing::spec_path(&format!("regressions/{name}"))
}

/// Compiles `spec` (a path) into `dir`; the compile must succeed.
fn compile_file(spec: &Path, dir: &Path, name: &str) -> PathBuf {
    let plan = dir.join(format!("{name}.plan"));
    let o = run(&["compile", s(spec), "-o", s(&plan)]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    plan
}

/// Compiles the program `text` into `dir`.
fn compile_text(text: &str, dir: &Path, name: &str) -> PathBuf {
    let spec = dir.join(format!("{name}.json"));
    std::fs::write(&spec, text).unwrap();
    compile_file(&spec, dir, name)
}

/// `run --values` (verified against the reference first): the outputs object.
fn values(plan: &Path, bind: &str) -> Value {
    let o = run(&["run", s(plan), "--bind", bind, "--values"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: Value = serde_json::from_str(o.stdout.trim()).unwrap();
    v["outputs"].clone()
}

/// `cast_nonfinite.json` at n=4: `x / 0` is `[-inf, inf, -inf, inf]`, `to(int32)` of it is
/// the int32 minimum everywhere, `y - y` is NaN and `to(int64)` of that the int64 minimum
/// (PyTorch 2.15, CPU). `run` verifies the kernels against the reference, which now
/// follows PyTorch on its own, and `--values` spells the non-finite floats as the golden
/// format does (`"nan"`, `"inf"`, `"-inf"`).
#[test]
fn casts_of_nonfinite_floats_follow_pytorch() {
    let dir = scratch("cast");
    let plan = compile_file(&regression("cast_nonfinite.json"), &dir, "cast");
    let o = run(&["run", s(&plan), "--bind", "n=4"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("verified"), "{}", o.stdout);
    let out = values(&plan, "n=4");
    assert_eq!(out["y"]["values"], json!(["-inf", "inf", "-inf", "inf"]));
    assert_eq!(out["i"]["values"], json!(vec![i32::MIN; 4]));
    assert_eq!(out["j"]["values"], json!(vec![i64::MIN; 4]));
    assert_eq!(out["i"]["dtype"], "int32");
    // Longer than any vector width, the same (PyTorch's vectorized and scalar loops agree).
    let out = values(&plan, "n=37");
    assert!(out["i"]["values"]
        .as_array()
        .unwrap()
        .iter()
        .all(|v| v == &json!(i32::MIN)));
    assert!(out["j"]["values"]
        .as_array()
        .unwrap()
        .iter()
        .all(|v| v == &json!(i64::MIN)));
}

/// `prod_overflow.json` at k=33: the `int64` products wrap as PyTorch's do; the reference
/// wraps too, so `run` verifies instead of reporting a false failure. PyTorch 2.15 gives
/// these values for the first six columns.
#[test]
fn int64_prod_overflow_wraps_in_kernel_and_reference() {
    let dir = scratch("prod");
    let plan = compile_file(&regression("prod_overflow.json"), &dir, "prod");
    let o = run(&["run", s(&plan), "--bind", "k=33"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("verified"), "{}", o.stdout);
    let out = values(&plan, "k=33");
    let p = out["p"]["values"].as_array().unwrap();
    assert_eq!(p.len(), 33);
    assert_eq!(
        p[..6],
        [
            json!(2080022246165795451i64),
            json!(8589934592i64),
            json!(-8589934592i64),
            json!(-2080022246165795451i64),
            json!(1),
            json!(-5559060566555523i64)
        ]
    );
}

/// `uint8` with Python integers outside its range: PyTorch wraps the number into `uint8`
/// and computes (`+ 1000` adds 232, `< 1048576` compares with 0, `== -255` with 1, `>
/// -2147483649` with 255); an `int32` with `2**40 + 3` adds 3, `< 2**32` compares with 0.
/// Values measured with PyTorch 2.15 on the fill formula's inputs (`uint8`: 0, 7, 3, 10,
/// 6, 2; `int32`: -2, 5, 1, -3, 4, 0).
#[test]
fn integer_tensors_with_out_of_range_python_integers_compute_as_pytorch() {
    let dir = scratch("scalars");
    let plan = compile_text(
        r#"{"name": "wrap", "inputs": [{"name": "u", "sizes": ["n"], "layout": "contiguous", "dtype": "uint8"},
                                      {"name": "i", "sizes": ["n"], "layout": "contiguous", "dtype": "int32"}],
            "hints": {"n": 6},
            "steps": [{"let": "a", "op": "add", "args": ["u", 1000]},
                      {"let": "l", "op": "lt", "args": ["u", 1048576]},
                      {"let": "b", "op": "sub", "args": ["u", -1000]},
                      {"let": "m", "op": "mul", "args": ["u", 1000]},
                      {"let": "e", "op": "eq", "args": ["u", -255]},
                      {"let": "g", "op": "gt", "args": ["u", -2147483649]},
                      {"let": "w", "op": "add", "args": ["i", 1099511627779]},
                      {"let": "c", "op": "lt", "args": ["i", 4294967296]}],
            "outputs": ["a", "l", "b", "m", "e", "g", "w", "c"]}"#,
        &dir,
        "wrap",
    );
    let out = values(&plan, "n=6");
    assert_eq!(out["a"]["dtype"], "uint8");
    assert_eq!(out["a"]["values"], json!([232, 239, 235, 242, 238, 234]));
    assert_eq!(out["l"]["values"], json!(vec![false; 6]));
    assert_eq!(out["b"]["values"], json!([232, 239, 235, 242, 238, 234]));
    assert_eq!(out["m"]["values"], json!([0, 88, 184, 16, 112, 208]));
    assert_eq!(out["e"]["values"], json!(vec![false; 6]));
    assert_eq!(out["g"]["values"], json!(vec![false; 6]));
    assert_eq!(out["w"]["dtype"], "int32");
    assert_eq!(out["w"]["values"], json!([1, 8, 4, 0, 7, 3]));
    assert_eq!(
        out["c"]["values"],
        json!([true, false, false, true, false, false])
    );
}

/// `expand_maxmem.json`: the output is a view of one element, but reading it (the
/// reference's values and the kernels' output values compared with them) takes
/// `n**3` elements. `--max-memory 1G` refuses n=1000 and n=2000 at once with the limit
/// named, instead of growing past 10 GB or failing an allocation; a small binding runs.
#[test]
fn max_memory_is_enforced_for_expanded_outputs() {
    let dir = scratch("maxmem");
    let plan = compile_file(&regression("expand_maxmem.json"), &dir, "ex");
    for n in ["n=1000", "n=2000"] {
        let t = std::time::Instant::now();
        let o = run(&["run", s(&plan), "--bind", n, "--max-memory", "1G"]);
        assert_ne!(o.code, 0, "{n}: {}", o.stdout);
        assert!(o.stderr.contains("limit of 1.00 GiB"), "{n}: {}", o.stderr);
        assert!(!o.stderr.contains("cannot allocate"), "{}", o.stderr);
        assert!(t.elapsed().as_secs() < 20, "{n} took {:?}", t.elapsed());
    }
    // --no-verify and no --values reads no output value: n=1000 fits.
    let o = run(&[
        "run",
        s(&plan),
        "--bind",
        "n=1000",
        "--max-memory",
        "1G",
        "--no-verify",
    ]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = run(&["run", s(&plan), "--bind", "n=20", "--max-memory", "1G"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("verified 8000 output elements"),
        "{}",
        o.stdout
    );
}

/// The step-by-step reference charges its own allocations too: a reduction of an expanded
/// value reads `n**3` elements of a one-element storage, refused under the limit.
#[test]
fn max_memory_bounds_the_reference_of_a_reduced_expansion() {
    let dir = scratch("maxmem_reduce");
    let plan = compile_text(
        r#"{"name": "exsum", "inputs": [{"name": "x", "sizes": [1], "layout": "contiguous", "dtype": "float32"},
                                       {"name": "y", "sizes": ["n"], "layout": "contiguous", "dtype": "float32"}],
            "hints": {"n": 4},
            "steps": [{"let": "e", "op": "expand", "args": ["x", ["n*n*n"]]},
                      {"let": "s", "op": "sum", "args": ["e"]}],
            "outputs": ["s"]}"#,
        &dir,
        "exsum",
    );
    // 300**3 inputs of 8 bytes in the reference: 216 MB, over 64 MiB.
    let o = run(&["run", s(&plan), "--bind", "n=300", "--max-memory", "64M"]);
    assert_ne!(o.code, 0, "{}", o.stdout);
    assert!(o.stderr.contains("step-by-step reference"), "{}", o.stderr);
    assert!(o.stderr.contains("more than its limit"), "{}", o.stderr);
    let o = run(&["run", s(&plan), "--bind", "n=30", "--max-memory", "64M"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
}

/// A symbolic expression where PyTorch takes a plain `int` is refused by `compile`, naming
/// the argument, instead of compiling into an artifact whose `check` answers a false
/// `{"error": "error"}`. (A size used as a Python number, `mul(x, "n")`, is not such an
/// argument: it compiles and is evaluated per binding; see `tests/program_artifacts.rs` and `tests/cli_program.rs`.)
#[test]
fn symbolic_plain_int_arguments_are_refused_at_compile() {
    let dir = scratch("plain_int");
    for (step, what) in [
        (
            r#"{"let": "z", "op": "transpose", "args": ["x", 0, "n-1"]}"#,
            "`dim1`",
        ),
        (
            r#"{"let": "z", "op": "sum", "args": ["x", "n-2"]}"#,
            "`dim`",
        ),
        (
            r#"{"let": "z", "op": "unfold", "args": ["x", 0, 2, "n"]}"#,
            "`step`",
        ),
        (
            r#"{"let": "z", "op": "diagonal", "args": ["x", "n-3", 0, 1]}"#,
            "`offset`",
        ),
    ] {
        let text = format!(
            r#"{{"name": "p", "inputs": [{{"name": "x", "sizes": ["n", "n"], "layout": "contiguous"}}], "hints": {{"n": 3}},
                "steps": [{step}], "outputs": ["z"]}}"#
        );
        let spec = dir.join("p.json");
        std::fs::write(&spec, text).unwrap();
        let o = run(&["compile", s(&spec), "-o", s(&dir.join("p.plan"))]);
        assert_ne!(o.code, 0, "{step}: {}", o.stdout);
        assert!(o.stderr.contains(what), "{step}: {}", o.stderr);
        assert!(o.stderr.contains("constant"), "{step}: {}", o.stderr);
    }
}

/// `--repeat` times a program's kernel runs (the first verified).
#[test]
fn repeat_times_programs() {
    let dir = scratch("repeat");
    let plan = compile_file(&regression("prod_overflow.json"), &dir, "prod");
    let o = run(&["run", s(&plan), "--bind", "k=8", "--repeat", "3"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("(median of 3 runs, min "), "{}", o.stdout);
    assert!(o.stdout.contains("verified"), "{}", o.stdout);
}

/// Single-op cover options given for a program are refused by name, not ignored.
#[test]
fn single_op_cover_options_are_refused_for_programs() {
    let dir = scratch("cover_flags");
    let spec = regression("prod_overflow.json");
    for flag in ["--no-parts", "--no-widen-size-1", "--widen-size-1"] {
        let o = run(&[
            "compile",
            s(&spec),
            "-o",
            s(&dir.join("p.plan")),
            "--cover",
            flag,
        ]);
        assert_ne!(o.code, 0, "{flag}: {}", o.stdout);
        assert!(o.stderr.contains(flag), "{flag}: {}", o.stderr);
        assert!(o.stderr.contains("single-op"), "{flag}: {}", o.stderr);
    }
}

/// Counts agree in number: one specialization, one step.
#[test]
fn messages_count_in_the_right_number() {
    let dir = scratch("grammar");
    let spec = regression("prod_overflow.json");
    let plan = dir.join("p.plan");
    let o = run(&["compile", s(&spec), "-o", s(&plan)]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains(": 1 specialization ->"), "{}", o.stdout);
    assert!(o.stdout.contains("(1 input, 1 step, "), "{}", o.stdout);
    let o = run(&["guards", s(&plan)]);
    assert!(
        o.stdout.contains("(1 step), symbols k: 1 specialization\n"),
        "{}",
        o.stdout
    );
}

/// `conformance` given a coverage file says it does not take that kind, instead of
/// counting every line as a failed case.
#[test]
fn conformance_refuses_coverage_files_clearly() {
    let path = symstride::testing::golden_path("program_coverage.jsonl");
    let o = run(&["conformance", "--check", s(&path)]);
    assert_ne!(o.code, 0);
    assert!(o.stderr.contains("is a coverage file"), "{}", o.stderr);
    assert!(!o.stderr.contains("more mismatches"), "{}", o.stderr);
    assert!(o.stdout.contains("0 passed, 0 failed"), "{}", o.stdout);
}

/// `demo --help` says what `demo` does (the program demo by default).
#[test]
fn demo_help_describes_the_program_demo() {
    let o = run(&["--help"]);
    assert!(o.stdout.contains("built-in program"), "{}", o.stdout);
    assert!(
        !o.stdout.contains("compile the seed spec, show"),
        "{}",
        o.stdout
    );
}
