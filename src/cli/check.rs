//! `symstride check`: evaluate a plan's guards against bindings of its symbols.
//!
//! One JSON line per binding, in input order: `{"pass", "specialization", "failed_guard",
//! "output"}` (`failed_guard`: the first failing guard of the closest specialization, the
//! one with the fewest failing guards); `{"pass": true, "specialization", "error":
//! "broadcast"}` when an error specialization of a `--cover` artifact admits the binding
//! (the op fails there, as in PyTorch). A binding that cannot be evaluated (malformed line, unknown or missing
//! symbol, negative size, overflow) gets `{"error": "..."}` instead, so output lines stay
//! aligned with input lines; it is also reported with its line number on stderr and makes
//! the exit status non-zero.

use serde_json::{json, Value};
use std::io::{BufRead, Write};
use std::process::ExitCode;
use symstride::aot::Artifact;
use symstride::program::AnyArtifact;
use symstride::{Error, Result};

/// Arguments of `symstride check`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The plan artifact.
    pub plan: std::path::PathBuf,
    /// One binding, `k=v,k=v`.
    #[arg(long, conflicts_with = "bindings")]
    pub bind: Option<String>,
    /// A JSONL file of bindings (objects symbol -> value).
    #[arg(long)]
    pub bindings: Option<std::path::PathBuf>,
}

/// Parses `k=v,k=v` into pairs.
pub fn parse_bind(text: &str) -> Result<Vec<(String, i64)>> {
    text.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p
                .split_once('=')
                .ok_or_else(|| Error::parse("binding", format!("`{p}` is not `name=value`")))?;
            let v: i64 = v.trim().parse().map_err(|_| {
                Error::parse(
                    "binding",
                    format!("value of `{}` is not an integer: `{v}`", k.trim()),
                )
            })?;
            Ok((k.trim().to_string(), v))
        })
        .collect()
}

/// Pairs from one JSONL line: an object `{name: value}` (or `{"binding": {...}}`).
fn parse_line(line: &str) -> Result<Vec<(String, i64)>> {
    let v: Value =
        serde_json::from_str(line).map_err(|e| Error::parse("binding line", e.to_string()))?;
    let obj = match v.get("binding") {
        Some(b @ Value::Object(_)) => b,
        _ => &v,
    };
    let Value::Object(map) = obj else {
        return Err(Error::parse(
            "binding line",
            "expected a JSON object of symbol values",
        ));
    };
    map.iter()
        .map(|(k, v)| {
            v.as_i64().map(|x| (k.clone(), x)).ok_or_else(|| {
                Error::parse(
                    "binding line",
                    format!("value of `{k}` is not an integer: {v}"),
                )
            })
        })
        .collect()
}

/// The JSON answer for one binding.
pub fn answer(a: &Artifact, pairs: &[(String, i64)]) -> Result<Value> {
    let values = a
        .spec
        .values_from_map(pairs.iter().map(|(k, v)| (k.as_str(), *v)))?;
    let out = a.check(&values)?;
    let failed = out
        .failed_guard
        .map(|(k, g)| a.specializations[k].guards[g].cond.to_string());
    if let Some(category) = &out.error {
        // An error specialization: the op fails at this binding as PyTorch does.
        return Ok(json!({
            "pass": true,
            "specialization": out.specialization,
            "error": category,
        }));
    }
    Ok(json!({
        "pass": out.specialization.is_some(),
        "specialization": out.specialization,
        "failed_guard": failed,
        "output": out.output.map(|(sizes, strides)| json!({"sizes": sizes, "strides": strides})),
    }))
}

/// The JSON answer for one binding of an artifact of either kind (a program's lists its
/// outputs: `{"pass", "specialization", "failed_guard", "outputs": {name: {"sizes",
/// "strides", "dtype"}}}`).
fn answer_any(a: &AnyArtifact, pairs: &[(String, i64)]) -> Result<Value> {
    match a {
        AnyArtifact::Op(a) => answer(a, pairs),
        AnyArtifact::Program(a) => super::program::check_answer(a, pairs),
    }
}

/// Runs the subcommand.
pub fn run(args: Args) -> Result<ExitCode> {
    let a = AnyArtifact::load(&args.plan)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let io_err = |e: std::io::Error| Error::Io {
        path: "<stdout>".into(),
        message: e.to_string(),
    };
    let mut bad = 0usize;
    if let Some(b) = &args.bind {
        let v = answer_any(&a, &parse_bind(b)?)?;
        writeln!(out, "{v}").map_err(io_err)?;
    } else if let Some(path) = &args.bindings {
        let file = std::fs::File::open(path).map_err(|e| Error::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        for (i, line) in std::io::BufReader::new(file).split(b'\n').enumerate() {
            let line = line.map_err(|e| Error::Io {
                path: path.display().to_string(),
                message: e.to_string(),
            })?;
            // A line that is not UTF-8 is one bad line: report it and go on.
            let line = std::str::from_utf8(&line)
                .map_err(|e| Error::parse("binding line", format!("not valid UTF-8 ({e})")));
            if line.as_ref().is_ok_and(|l| l.trim().is_empty()) {
                continue;
            }
            match line.and_then(|l| parse_line(l).and_then(|p| answer_any(&a, &p))) {
                Ok(v) => writeln!(out, "{v}").map_err(io_err)?,
                Err(e) => {
                    bad += 1;
                    eprintln!("{}:{}: {e}", path.display(), i + 1);
                    writeln!(out, "{}", json!({"error": e.to_string()})).map_err(io_err)?;
                }
            }
        }
    } else {
        return Err(Error::invalid(
            "give --bind k=v,... or --bindings FILE.jsonl",
        ));
    }
    out.flush().map_err(io_err)?;
    Ok(if bad > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
