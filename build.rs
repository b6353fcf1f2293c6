//! Build script: turns the code cells of `notebooks/*.ipynb` into Rust functions so that
//! `tests/notebooks.rs` can execute every cell against the current crate and compare what it
//! prints with the outputs saved in the notebook (the notebooks cannot rot silently).
//!
//! Each notebook becomes `fn <stem>(out: &mut Vec<String>) -> Result<(), Box<dyn Error>>` whose
//! body is the concatenation of its code cells (variables persist across cells, as in evcxr);
//! `println!`/`print!` are shadowed by local macros that append to the current cell's output.
//! evcxr commands (lines starting with `:`, such as `:dep`) are skipped. Without a
//! `notebooks/` directory (a packaged crate) the generated file is empty.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let dir = Path::new("notebooks");
    println!("cargo:rerun-if-changed=notebooks");
    let mut code = String::new();
    let mut names = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        let mut paths: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "ipynb"))
            .collect();
        paths.sort();
        for path in paths {
            println!("cargo:rerun-if-changed={}", path.display());
            let stem = path
                .file_stem()
                .unwrap()
                .to_string_lossy()
                .replace(['-', '.'], "_");
            let text = std::fs::read_to_string(&path).expect("notebook is readable");
            let nb: serde_json::Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{}: invalid notebook JSON: {e}", path.display()));
            let cells = nb["cells"].as_array().cloned().unwrap_or_default();
            writeln!(
                code,
                "#[allow(unused_mut, unused_variables, unused_imports, unused_macros, clippy::all)]\n\
                 pub fn {stem}(out: &mut Vec<String>) -> Result<(), Box<dyn std::error::Error>> {{\n\
                 let mut __cell = String::new();\n\
                 macro_rules! println {{ () => {{ __cell.push('\\n') }}; ($($t:tt)*) => {{ {{ use std::fmt::Write as _; writeln!(__cell, $($t)*).unwrap(); }} }} }}\n\
                 macro_rules! print {{ ($($t:tt)*) => {{ {{ use std::fmt::Write as _; write!(__cell, $($t)*).unwrap(); }} }} }}"
            )
            .unwrap();
            for cell in cells.iter().filter(|c| c["cell_type"] == "code") {
                let src = match &cell["source"] {
                    serde_json::Value::Array(lines) => {
                        lines.iter().filter_map(|l| l.as_str()).collect::<String>()
                    }
                    serde_json::Value::String(s) => s.clone(),
                    _ => String::new(),
                };
                for line in src.lines() {
                    if !line.trim_start().starts_with(':') {
                        writeln!(code, "{line}").unwrap();
                    }
                }
                writeln!(code, ";\nout.push(std::mem::take(&mut __cell));").unwrap();
            }
            writeln!(code, "Ok(())\n}}").unwrap();
            names.push((
                stem,
                path.file_name().unwrap().to_string_lossy().to_string(),
            ));
        }
    }
    writeln!(
        code,
        "/// (notebook file name, runner) for every notebook.\n\
         pub fn all() -> Vec<(&'static str, fn(&mut Vec<String>) -> Result<(), Box<dyn std::error::Error>>)> {{ vec![{}] }}",
        names.iter().map(|(s, f)| format!("({f:?}, {s})")).collect::<Vec<_>>().join(", ")
    )
    .unwrap();
    std::fs::write(Path::new(&out_dir).join("notebooks.rs"), code).expect("OUT_DIR is writable");
}
