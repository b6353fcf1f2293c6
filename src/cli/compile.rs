//! `symstride compile`: trace a spec into a plan artifact.

use std::process::ExitCode;
use symstride::aot::{Artifact, CompileOptions, Spec};
use symstride::{Error, Result};

/// Arguments of `symstride compile`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The spec file: one spec or program object, or an array of them (then pick one with
    /// --name). A program (an object with `steps`) compiles to a version-2 artifact.
    pub spec: std::path::PathBuf,
    /// The spec to compile from a file holding an array of specs (matched on `name`).
    #[arg(long)]
    pub name: Option<String>,
    /// Output artifact path.
    #[arg(short, long)]
    pub output: std::path::PathBuf,
    /// Compile specializations until a case split over their guards proves that every
    /// binding (sizes and strides >= 0) is admitted, by a plan or by an error
    /// specialization (shapes that do not broadcast); the artifact records `complete`.
    #[arg(long)]
    pub cover: bool,
    /// With --cover, cover only bindings whose sizes are all >= 1 (no size-0 classes).
    #[arg(long, requires = "cover")]
    pub no_zero: bool,
    /// With --cover, the most specializations to compile; a cover that needs more stops
    /// there and is recorded as incomplete (`"complete": false`, with the regions left).
    #[arg(long, requires = "cover", default_value_t = symstride::aot::MAX_SPECIALIZATIONS as u32,
          value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub max_specializations: u32,
    /// With --cover of a single-op spec, never re-run the cover as parallel parts of its
    /// domain: the fewest specializations, slower where many traced classes merge into few
    /// plans (by default such a cover, past 128 traces and 6 per specialization, runs as
    /// four parts). Program covers always run as one.
    #[arg(long, requires = "cover")]
    pub no_parts: bool,
    /// With --cover of a single-op spec, give every traced class of sizes 1 its own plan:
    /// by default a specialization also answers classes whose sizes 1 its plan coalesces
    /// away (`a == 1` next to `a >= 2`; proved per class), which gives far fewer
    /// specializations where sizes are partly independent (`[a,...,g] + [h,i,j,1,1,1,g]`:
    /// 36 instead of 135) and loads up to a quarter slower.
    #[arg(long, requires = "cover", overrides_with = "widen_size_1")]
    pub no_widen_size_1: bool,
    /// The default (a plan answers classes whose sizes 1 it coalesces away); kept so that
    /// scripts passing it keep working.
    #[arg(long, requires = "cover", overrides_with = "no_widen_size_1")]
    pub widen_size_1: bool,
}

/// The spec of `text`: the object itself, or the one named `name` of an array of specs.
fn pick_spec(text: &str, name: Option<&str>, path: &std::path::Path) -> Result<Spec> {
    let v: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        // Not JSON: let the spec parser report it (with line and column).
        Err(_) => return Spec::from_json(text),
    };
    let names = |items: &[serde_json::Value]| -> Vec<String> {
        items
            .iter()
            .map(|s| {
                s.get("name")
                    .and_then(|n| n.as_str())
                    .unwrap_or("(unnamed)")
                    .to_string()
            })
            .collect()
    };
    match (&v, name) {
        (serde_json::Value::Array(items), None) => Err(Error::invalid(format!(
            "{} holds an array of {} specs ({}); pick one with --name NAME",
            path.display(),
            items.len(),
            names(items).join(", ")
        ))),
        (serde_json::Value::Array(items), Some(n)) => {
            let found = items
                .iter()
                .find(|s| s.get("name").and_then(|x| x.as_str()) == Some(n));
            match found {
                Some(s) => Spec::from_value(s),
                None => Err(Error::invalid(format!(
                    "{} has no spec named `{n}` (it has: {})",
                    path.display(),
                    names(items).join(", ")
                ))),
            }
        }
        (_, Some(n)) => {
            let spec = Spec::from_value(&v)?;
            if spec.name.as_deref() != Some(n) {
                return Err(Error::invalid(format!(
                    "{} holds one spec, named {}, not `{n}`",
                    path.display(),
                    spec.name
                        .as_deref()
                        .map_or("nothing".into(), |s| format!("`{s}`"))
                )));
            }
            Ok(spec)
        }
        (_, None) => Spec::from_value(&v),
    }
}

/// Runs the subcommand.
pub fn run(args: Args) -> Result<ExitCode> {
    let text = std::fs::read_to_string(&args.spec).map_err(|e| Error::Io {
        path: args.spec.display().to_string(),
        message: e.to_string(),
    })?;
    if let Some(v) = super::program::program_value(&text, args.name.as_deref()) {
        // These shape a single-op cover only (its parts, its widening of size-1 classes);
        // a program cover has neither.
        for (given, flag) in [
            (args.no_parts, "--no-parts"),
            (args.no_widen_size_1, "--no-widen-size-1"),
            (args.widen_size_1, "--widen-size-1"),
        ] {
            if given {
                return Err(Error::invalid(format!(
                    "{flag} applies to the cover of a single-op spec; {} holds a program, \
                     whose cover has no parts and no size-1 widening",
                    args.spec.display()
                )));
            }
        }
        let cover = args.cover.then_some(symstride::aot::CoverOptions {
            zero: !args.no_zero,
            max_specializations: args.max_specializations as usize,
        });
        return super::program::compile(&v, &args.output, cover);
    }
    let spec = pick_spec(&text, args.name.as_deref(), &args.spec).map_err(|e| match e {
        Error::Parse { what, message } => Error::Parse {
            what: format!("{what} {}", args.spec.display()),
            message,
        },
        e => e,
    })?;
    let options = CompileOptions {
        cover: args.cover,
        cover_zero: !args.no_zero,
        max_specializations: args.max_specializations as usize,
        cover_parts: !args.no_parts,
        widen_size_1: !args.no_widen_size_1,
    };
    let start = std::time::Instant::now();
    let artifact = Artifact::compile(&spec, &options)?;
    let elapsed = start.elapsed();
    artifact.save(&args.output)?;
    let n = artifact.specializations.len();
    println!(
        "compiled {} ({} {}, symbols {}) in {:.2} ms: {n} specialization{} -> {}",
        spec.name.as_deref().unwrap_or("spec"),
        spec.op,
        spec.inputs.len(),
        if spec.symbols.is_empty() {
            "none".to_string()
        } else {
            spec.symbols.join(", ")
        },
        elapsed.as_secs_f64() * 1e3,
        if n == 1 { "" } else { "s" },
        args.output.display()
    );
    for (k, s) in artifact.specializations.iter().enumerate().take(8) {
        let guards: Vec<String> = s.guards.iter().map(|g| g.cond.to_string()).collect();
        println!(
            "  [{k}]{} {}",
            match &s.error {
                Some(e) => format!(" ({e} error)"),
                None if s.is_empty_output() => " (empty output)".to_string(),
                None => String::new(),
            },
            if guards.is_empty() {
                "(no guards)".to_string()
            } else {
                guards.join(", ")
            }
        );
    }
    if let Some(c) = &artifact.coverage {
        if c.complete {
            println!(
                "  cover: complete (proved for every binding where {})",
                domain_text(c)
            );
        } else {
            println!("  cover: INCOMPLETE, not proved for:");
            for r in &c.uncovered {
                println!("    {r}");
            }
        }
    }
    if n > 8 {
        println!(
            "  ... {} more (symstride guards {})",
            n - 8,
            args.output.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The domain of a cover as one readable condition.
fn domain_text(c: &symstride::aot::Coverage) -> String {
    c.domain
        .iter()
        .map(|b| b.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
