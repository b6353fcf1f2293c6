//! The `symstride conformance` command end to end: output format, `--check` summary and
//! exit status, malformed input.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn golden(file: &str) -> PathBuf {
    symstride::testing::golden_path(file)
}

fn run(args: &[&str], files: &[&Path]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_symstride"))
        .arg("conformance")
        .args(args)
        .args(files)
        .output()
        .expect("run symstride")
}

fn stdout_lines(o: &Output) -> Vec<String> {
    String::from_utf8(o.stdout.clone())
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

fn expects(path: &Path) -> Vec<serde_json::Map<String, Value>> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["expect"]
                .as_object()
                .unwrap()
                .clone()
        })
        .collect()
}

/// A file in the temp dir, unique per test and process, removed on drop.
struct TempFile(PathBuf);
impl TempFile {
    fn new(tag: &str, text: &str) -> TempFile {
        let p =
            std::env::temp_dir().join(format!("symstride-conf-{}-{tag}.jsonl", std::process::id()));
        std::fs::write(&p, text).unwrap();
        TempFile(p)
    }
}
impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn layout_and_broadcast_golden_cases_all_pass() {
    let (l, b) = (golden("layout.jsonl"), golden("broadcast.jsonl"));
    let o = run(&["--check"], &[&l, &b]);
    let lines = stdout_lines(&o);
    let (n_l, n_b) = (expects(&l).len(), expects(&b).len());
    assert_eq!(
        lines.last().map(String::as_str),
        Some(format!("{} passed, 0 failed", n_l + n_b).as_str()),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success());
    assert_eq!(lines.len(), n_l + n_b + 1);
}

#[test]
fn answers_have_exactly_the_expected_keys_in_input_order() {
    let path = golden("layout.jsonl");
    let o = run(&[], &[&path]);
    assert!(o.status.success());
    let lines = stdout_lines(&o);
    let exp = expects(&path);
    assert_eq!(lines.len(), exp.len(), "no summary line without --check");
    for (line, e) in lines.iter().zip(&exp) {
        let v: Value = serde_json::from_str(line).unwrap();
        let got = v["got"].as_object().unwrap();
        assert_eq!(got.keys().collect::<Vec<_>>(), e.keys().collect::<Vec<_>>());
        assert_eq!(got, e);
    }
}

#[test]
fn elementwise_golden_cases_all_pass_through_the_iterator() {
    let path = golden("elementwise.jsonl");
    let o = run(&["--check"], &[&path]);
    let lines = stdout_lines(&o);
    let exp = expects(&path);
    assert_eq!(lines.len(), exp.len() + 1);
    let mut matching = 0;
    for (line, e) in lines.iter().zip(&exp) {
        let got = serde_json::from_str::<Value>(line).unwrap()["got"]
            .as_object()
            .unwrap()
            .clone();
        assert!(
            got.keys().eq(e.keys()) || got.contains_key("error"),
            "{line}"
        );
        matching += usize::from(&got == e);
    }
    let summary = format!("{matching} passed, {} failed", exp.len() - matching);
    assert_eq!(lines.last().unwrap(), &summary);
    assert_eq!(
        matching,
        exp.len(),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success());
}

#[test]
fn malformed_lines_are_reported_and_skipped() {
    let f = TempFile::new(
        "malformed",
        concat!(
            r#"{"kind":"broadcast","shapes":[[2,1],[3]],"expect":{"sizes":[2,3]}}"#,
            "\n{\"kind\":\"broadcast\",\"shapes\":[[2,1]\n",
            r#"{"kind":"broadcast","shapes":[[2],[3]],"expect":{"error":"broadcast"}}"#,
            "\n",
            r#"{"kind":"layout","sizes":[2,-1],"strides":[1,1],"expect":{"is_contiguous":false}}"#,
            "\n"
        ),
    );
    let o = run(&["--check"], &[&f.0]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(":2: malformed case"), "{err}");
    let lines = stdout_lines(&o);
    assert_eq!(lines.len(), 5, "{lines:?}");
    assert!(lines[1].contains("malformed"));
    // A negative size is invalid input: answered with an error naming dim and value.
    assert!(
        lines[3].contains("error") && lines[3].contains("dim 1"),
        "{}",
        lines[3]
    );
    assert_eq!(lines[4], "2 passed, 2 failed");
}

#[test]
fn mismatches_fail_the_check() {
    let f = TempFile::new(
        "wrong",
        concat!(
            r#"{"kind":"layout","sizes":[3,4],"strides":[1,3],"expect":{"is_contiguous":true}}"#,
            "\n"
        ),
    );
    let o = run(&["--check"], &[&f.0]);
    assert!(!o.status.success());
    assert_eq!(
        stdout_lines(&o),
        vec![r#"{"got":{"is_contiguous":false}}"#, "0 passed, 1 failed"]
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains(":1: layout mismatch"));
}

#[test]
fn missing_file_fails() {
    let o = run(&[], &[Path::new("/nonexistent/golden.jsonl")]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("/nonexistent/golden.jsonl"));
}

/// The symbolic path: every size and stride a symbol with the concrete value as hint; the
/// traced answers evaluated at the hints must be PyTorch's, and every recorded guard must
/// hold at the hints (checked by the command itself).
#[test]
fn layout_and_broadcast_golden_cases_pass_symbolically() {
    let (l, b) = (golden("layout.jsonl"), golden("broadcast.jsonl"));
    let o = run(&["--symbolic", "--check"], &[&l, &b]);
    let lines = stdout_lines(&o);
    let n = expects(&l).len() + expects(&b).len();
    assert_eq!(
        lines.last().map(String::as_str),
        Some(format!("{n} passed, 0 failed").as_str()),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success());
}

#[test]
fn symbolic_mode_rejects_invalid_layouts_like_the_concrete_one() {
    let f = TempFile::new(
        "symbad",
        concat!(
            r#"{"kind":"layout","sizes":[2,-1],"strides":[1,1],"expect":{"is_contiguous":false}}"#,
            "\n"
        ),
    );
    let concrete = stdout_lines(&run(&[], &[&f.0]));
    let symbolic = stdout_lines(&run(&["--symbolic"], &[&f.0]));
    assert_eq!(concrete, symbolic);
    assert!(concrete[0].contains("dim 1"), "{concrete:?}");
}

#[test]
fn invalid_elementwise_inputs_get_the_same_error_on_both_paths() {
    let f = TempFile::new(
        "ewbad",
        concat!(
            r#"{"kind":"elementwise","op":"add","inputs":[{"sizes":[2],"strides":[1]},{"sizes":[2,3],"strides":[1]}],"expect":{"error":"broadcast"}}"#,
            "\n",
            r#"{"kind":"broadcast","shapes":[[2],[-4]],"expect":{"error":"broadcast"}}"#,
            "\n"
        ),
    );
    let concrete = stdout_lines(&run(&[], &[&f.0]));
    let symbolic = stdout_lines(&run(&["--symbolic"], &[&f.0]));
    assert_eq!(concrete, symbolic);
    assert!(
        concrete[0].contains("input 1:") && concrete[0].contains("2 sizes but 1 strides"),
        "{concrete:?}"
    );
    assert!(
        concrete[1].contains("input 1:") && concrete[1].contains("-4"),
        "{concrete:?}"
    );
}

/// Runs `conformance --check` on a golden file in both modes: every case must pass (one
/// answer line per case, then the summary) and the run must exit 0. Returns the answer lines
/// of each mode for further checks.
fn assert_all_pass_in_both_modes(file: &str, cases: usize) -> Vec<Vec<String>> {
    let path = golden(file);
    assert_eq!(expects(&path).len(), cases, "{file}");
    let mut answers = Vec::new();
    for mode in [&["--check"][..], &["--check", "--symbolic"][..]] {
        let o = run(mode, &[&path]);
        let mut lines = stdout_lines(&o);
        assert_eq!(
            lines.last().map(String::as_str),
            Some(format!("{cases} passed, 0 failed").as_str()),
            "{file} {mode:?} stderr: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.status.success(), "{file} {mode:?}");
        assert_eq!(lines.len(), cases + 1, "{file} {mode:?}");
        lines.pop();
        answers.push(lines);
    }
    answers
}

/// `ops.jsonl`: dtypes and promotion, Python numbers, `out=` (resized and restrided),
/// in-place, shared storages and offsets, PyTorch's errors by category; both modes.
#[test]
fn op_golden_cases_all_pass_concretely_and_symbolically() {
    assert_all_pass_in_both_modes("ops.jsonl", 3000);
}

/// `ops_real.jsonl` (ops of real model graphs): the elementwise ops and the structured ones
/// (creation, `*_like`, `cat`/`stack`, splits, indexing, softmax, the norms, attention);
/// every line passes in both modes.
#[test]
fn real_graph_golden_cases_pass_in_both_modes() {
    assert_all_pass_in_both_modes("ops_real.jsonl", 3000);
}

/// `programs_real.jsonl` (programs shaped like real model pieces: creation ops with
/// symbolic sizes, `cat`/`stack`, splits into several named results, indexing with index
/// inputs, softmax, the norms, attention, sizes passed as Python numbers (`div(x, d)`,
/// `clamp(i, max="n-1")`); values through the kernels): every line passes in both modes.
#[test]
fn real_graph_program_golden_cases_pass_in_both_modes() {
    assert_all_pass_in_both_modes("programs_real.jsonl", 400);
}

/// An op error answer is its category (the message is informational); a category that does
/// not match fails the check.
#[test]
fn op_error_answers_compare_by_category() {
    let ok = r#"{"kind":"op","op":"neg","inputs":[{"sizes":[2],"strides":[1],"dtype":"bool"}],"expect":{"error":"dtype","message":"anything"}}"#;
    let bad = r#"{"kind":"op","op":"neg","inputs":[{"sizes":[2],"strides":[1],"dtype":"bool"}],"expect":{"error":"shape","message":"anything"}}"#;
    let f = TempFile::new("op-cat", &format!("{ok}\n{bad}\n"));
    let o = run(&["--check"], &[&f.0]);
    assert_eq!(
        stdout_lines(&o).last().map(String::as_str),
        Some("1 passed, 1 failed")
    );
    assert!(!o.status.success());
}

/// Views (`views.jsonl`): every chain of movement ops answers PyTorch's sizes, strides,
/// storage offset and aliasing (or its error category), concretely and symbolically (base
/// sizes, strides, offset and storage size symbols; op arguments constants).
#[test]
fn view_golden_cases_all_pass_in_both_modes() {
    assert_all_pass_in_both_modes("views.jsonl", 3000);
}

#[test]
fn reduction_golden_cases_all_pass_in_both_modes() {
    let exp = expects(&golden("reductions.jsonl"));
    for lines in assert_all_pass_in_both_modes("reductions.jsonl", 1500) {
        // Independently of the CLI's own comparison: each answer is the expectation, an
        // error answer being the category alone (PyTorch's message is informational).
        for (line, e) in lines.iter().zip(&exp) {
            let got = serde_json::from_str::<Value>(line).unwrap()["got"]
                .as_object()
                .unwrap()
                .clone();
            let mut e = e.clone();
            if e.contains_key("error") {
                e.remove("message");
            }
            assert_eq!(got, e);
        }
    }
}

#[test]
fn a_wrong_reduction_category_is_a_mismatch() {
    // argmax of bool is a dtype error; claiming `index` must fail the check.
    let f = TempFile::new(
        "reduction-mismatch",
        r#"{"kind":"reduction","op":"argmax","input":{"sizes":[2],"strides":[1],"dtype":"bool"},"dim":0,"keepdim":false,"expect":{"error":"index","message":"x"}}"#,
    );
    let o = run(&["--check"], &[&f.0]);
    assert!(!o.status.success());
    assert_eq!(
        stdout_lines(&o).last().map(String::as_str),
        Some("0 passed, 1 failed")
    );
}

/// Programs (`programs.jsonl`): every program executed at its binding answers PyTorch's
/// sizes, strides, dtype, storage offset and values of every output (or its error
/// category), concretely and with the layouts of the symbolic trace.
#[test]
fn program_golden_cases_all_pass_in_both_modes() {
    assert_all_pass_in_both_modes("programs.jsonl", 250);
}

/// A program answer whose values differ beyond the tolerance, or whose error category
/// differs, fails the check.
#[test]
fn program_answers_fail_on_wrong_values_or_category() {
    let spec = r#"{"name":"p","inputs":[{"name":"x","sizes":["n"],"layout":"contiguous","dtype":"float32"}],"hints":{"n":2},"steps":[{"let":"y","op":"mul","args":["x",2]}],"outputs":["y"]}"#;
    let good = format!(
        r#"{{"kind":"program","spec":{spec},"binding":{{"n":2}},"expect":{{"outputs":{{"y":{{"sizes":[2],"strides":[1],"dtype":"float32","offset":0,"values":[-10.0,4.0]}}}}}}}}"#
    );
    let off = good.replace("4.0]", "4.001]");
    let cat = format!(
        r#"{{"kind":"program","spec":{spec},"binding":{{"n":2}},"expect":{{"error":"index"}}}}"#
    );
    // A dtype error is static (found when parsing) but answered as PyTorch's category.
    let dtype = r#"{"kind":"program","spec":{"inputs":[{"name":"m","sizes":["n"],"layout":"contiguous","dtype":"bool"}],"hints":{"n":2},"steps":[{"let":"y","op":"neg","args":["m"]}],"outputs":["y"]},"binding":{"n":3},"expect":{"error":"dtype"}}"#;
    let f = TempFile::new("prog", &format!("{good}\n{off}\n{cat}\n{dtype}\n"));
    let o = run(&["--check"], &[&f.0]);
    assert_eq!(
        stdout_lines(&o).last().map(String::as_str),
        Some("2 passed, 2 failed")
    );
    assert!(!o.status.success());
}
