//! `symstride guards`: print each specialization's guards with their reasons.

use std::process::ExitCode;
use symstride::aot::Artifact;
use symstride::program::AnyArtifact;
use symstride::Result;

/// Arguments of `symstride guards`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The plan artifact.
    pub plan: std::path::PathBuf,
}

/// Runs the subcommand.
pub fn run(args: Args) -> Result<ExitCode> {
    match AnyArtifact::load(&args.plan)? {
        AnyArtifact::Op(a) => print!("{}", describe(&a)),
        AnyArtifact::Program(a) => print!("{}", super::program::describe(&a)),
    }
    Ok(ExitCode::SUCCESS)
}

/// The readable listing `guards` prints (also used by `demo`).
pub fn describe(a: &Artifact) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let spec = &a.spec;
    let _ = writeln!(
        s,
        "{} ({}), symbols {}: {} specialization{}",
        spec.name.as_deref().unwrap_or("spec"),
        spec.op,
        if spec.symbols.is_empty() {
            "none".to_string()
        } else {
            spec.symbols.join(", ")
        },
        a.specializations.len(),
        if a.specializations.len() == 1 {
            ""
        } else {
            "s"
        }
    );
    for (k, sp) in a.specializations.iter().enumerate() {
        let at: Vec<String> = spec
            .symbols
            .iter()
            .zip(&sp.traced_at)
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        let at = if at.is_empty() {
            "no symbols".to_string()
        } else {
            at.join(",")
        };
        match (&sp.error, sp.plan.output_strides.first()) {
            (None, Some(strides)) => {
                let out: Vec<String> = strides.iter().map(|e| e.to_string()).collect();
                let _ = writeln!(
                    s,
                    "specialization {k} (traced at {at}): output strides [{}]",
                    out.join(", ")
                );
            }
            (error, _) => {
                // An error specialization: the op fails wherever its guards hold.
                let _ = writeln!(
                    s,
                    "specialization {k} (traced at {at}): {} error",
                    error.as_deref().unwrap_or("an")
                );
            }
        }
        if sp.guards.is_empty() {
            let _ = writeln!(s, "  (no guards: admits every binding)");
        }
        let width = sp
            .guards
            .iter()
            .map(|g| g.cond.to_string().len())
            .max()
            .unwrap_or(0);
        for g in &sp.guards {
            let _ = writeln!(s, "  {:<width$}   # {}", g.cond.to_string(), g.reason);
        }
    }
    s
}
