//! Executes every code cell of every notebook in `notebooks/` against the current crate and
//! checks that what each cell prints equals the output saved in the notebook.
//!
//! The cells are compiled into this test by `build.rs` (see there). A cell whose metadata has
//! the tag `nondeterministic` (timings) must run, but its text is not compared.
//! To refresh the saved outputs after an intended change: `SYMSTRIDE_BLESS=1 cargo test --test notebooks`.

mod generated {
    include!(concat!(env!("OUT_DIR"), "/notebooks.rs"));
}

use serde_json::Value;
use std::path::PathBuf;

fn saved_text(cell: &Value) -> String {
    let mut s = String::new();
    for o in cell["outputs"].as_array().into_iter().flatten() {
        if o["output_type"] == "stream" && o["name"] == "stdout" {
            match &o["text"] {
                Value::Array(lines) => lines
                    .iter()
                    .filter_map(|l| l.as_str())
                    .for_each(|l| s.push_str(l)),
                Value::String(t) => s.push_str(t),
                _ => {}
            }
        }
    }
    s
}

/// Splits what a cell printed into plain text and rich outputs, following evcxr's protocol
/// (`EVCXR_BEGIN_CONTENT <mime>` ... `EVCXR_END_CONTENT`), which Jupyter shows as a
/// `display_data` output (an SVG plot, for instance).
fn split_rich(printed: &str) -> (String, Vec<(String, String)>) {
    let mut text = String::new();
    let mut rich = Vec::new();
    let mut rest = printed;
    while let Some(start) = rest.find("EVCXR_BEGIN_CONTENT ") {
        text.push_str(&rest[..start]);
        let after = &rest[start + "EVCXR_BEGIN_CONTENT ".len()..];
        let (mime, body) = after.split_once('\n').unwrap_or((after, ""));
        let (content, tail) = body.split_once("EVCXR_END_CONTENT").unwrap_or((body, ""));
        rich.push((mime.trim().to_string(), content.trim_end().to_string()));
        rest = tail.strip_prefix('\n').unwrap_or(tail);
    }
    text.push_str(rest);
    (text, rich)
}

fn outputs_for(printed: &str) -> Value {
    let (text, rich) = split_rich(printed);
    let mut outputs = Vec::new();
    if !text.is_empty() {
        outputs.push(serde_json::json!({ "output_type": "stream", "name": "stdout", "text": to_lines(&text) }));
    }
    for (mime, content) in rich {
        outputs.push(serde_json::json!({ "output_type": "display_data", "metadata": {}, "data": { mime: to_lines(&content) } }));
    }
    Value::Array(outputs)
}

fn is_nondeterministic(cell: &Value) -> bool {
    cell["metadata"]["tags"]
        .as_array()
        .is_some_and(|t| t.iter().any(|x| x == "nondeterministic"))
}

fn to_lines(text: &str) -> Value {
    let mut lines: Vec<Value> = text
        .split_inclusive('\n')
        .map(|l| Value::String(l.to_string()))
        .collect();
    if lines.is_empty() {
        lines = vec![];
    }
    Value::Array(lines)
}

#[test]
fn notebooks_run_and_outputs_match() {
    let bless = std::env::var_os("SYMSTRIDE_BLESS").is_some();
    let all = generated::all();
    let count = all.len();
    let mut failures = Vec::new();
    for (file, run) in all {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("notebooks")
            .join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut nb: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            nb["metadata"]["kernelspec"]["language"], "rust",
            "{file}: kernelspec.language"
        );
        let mut outputs = Vec::new();
        if let Err(e) = run(&mut outputs) {
            failures.push(format!("{file}: a cell failed: {e}"));
            continue;
        }
        let cells = nb["cells"].as_array_mut().unwrap();
        let code_cells: Vec<&mut Value> = cells
            .iter_mut()
            .filter(|c| c["cell_type"] == "code")
            .collect();
        assert_eq!(code_cells.len(), outputs.len(), "{file}: cell count");
        for (i, (cell, got)) in code_cells.into_iter().zip(&outputs).enumerate() {
            if bless {
                cell["outputs"] = outputs_for(got);
                cell["execution_count"] = serde_json::json!(i + 1);
            } else if !is_nondeterministic(cell) && cell["outputs"] != outputs_for(got) {
                failures.push(format!(
                    "{file}: code cell {i} prints\n{got}\nbut the notebook saved\n{}",
                    saved_text(cell)
                ));
            }
        }
        if bless {
            let mut s = serde_json::to_string_pretty(&nb).unwrap();
            s.push('\n');
            std::fs::write(&path, s).unwrap();
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
    assert!(count >= 3, "expected the three notebooks, found {count}");
}
