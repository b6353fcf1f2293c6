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
    // Cells print through these shadowing macros into a thread-local buffer, so that functions
    // defined inside a cell can print too.
    let mut code = String::from(
        "thread_local! { static CELL_OUTPUT: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) }; }\n\
         fn take_cell_output() -> String { CELL_OUTPUT.with(|c| std::mem::take(&mut *c.borrow_mut())) }\n\
         #[allow(unused_macros)]\n\
         macro_rules! println { () => { CELL_OUTPUT.with(|c| c.borrow_mut().push('\\n')) }; ($($t:tt)*) => {{ let line = format!($($t)*); CELL_OUTPUT.with(|c| { let mut c = c.borrow_mut(); c.push_str(&line); c.push('\\n'); }) }} }\n\
         #[allow(unused_macros)]\n\
         macro_rules! print { ($($t:tt)*) => {{ let text = format!($($t)*); CELL_OUTPUT.with(|c| c.borrow_mut().push_str(&text)) }} }\n",
    );
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
                "#[allow(unused_mut, unused_variables, unused_imports, redundant_semicolons, clippy::all)]\n\
                 pub fn {stem}(out: &mut Vec<String>) -> Result<(), Box<dyn std::error::Error>> {{\n\
                 take_cell_output();"
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
                writeln!(code, ";\nout.push(take_cell_output());").unwrap();
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
        "/// Runs one notebook's cells, pushing each cell's output.\n\
         pub type Runner = fn(&mut Vec<String>) -> Result<(), Box<dyn std::error::Error>>;\n\
         /// (notebook file name, runner) for every notebook.\n\
         pub fn all() -> Vec<(&'static str, Runner)> {{ vec![{}] }}",
        names
            .iter()
            .map(|(s, f)| format!("({f:?}, {s})"))
            .collect::<Vec<_>>()
            .join(", ")
    )
    .unwrap();
    std::fs::write(Path::new(&out_dir).join("notebooks.rs"), code).expect("OUT_DIR is writable");
}
