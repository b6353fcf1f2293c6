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
            (None, _) if sp.is_empty_output() => {
                // An empty output: its layout is the concrete build's, at dispatch.
                let _ = writeln!(
                    s,
                    "specialization {k} (traced at {at}): empty output (layout computed at dispatch)"
                );
            }
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
                    "specialization {k} (traced at {at}): {}",
                    error
                        .as_deref()
                        .map_or("an error".to_string(), symstride::a_category_error)
                );
            }
        }
        s.push_str(&guard_lines(&sp.guards));
    }
    s
}

/// Longest guard printed on one line (with its indent); longer `||`/`&&` guards print as
/// a tree, one alternative or condition per line.
const LINE: usize = 80;

/// A specialization's guards, one per line with its reason after `#` (reasons aligned over
/// the one-line guards). A guard too long for a line (a cover's merged classes, a
/// non-overlapping-and-dense test on free strides) prints as a tree: `any of:` / `all of:`
/// and its parts indented below, recursively, so each line stays short.
pub fn guard_lines(guards: &[symstride::sym::Guard]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    if guards.is_empty() {
        let _ = writeln!(s, "  (no guards: admits every binding)");
    }
    let texts: Vec<String> = guards.iter().map(|g| g.cond.to_string()).collect();
    let width = texts
        .iter()
        .map(String::len)
        .filter(|&n| n + 2 <= LINE)
        .max()
        .unwrap_or(0);
    for (g, text) in guards.iter().zip(&texts) {
        if text.len() + 2 <= LINE {
            let _ = writeln!(s, "  {text:<width$}   # {}", g.reason);
        } else {
            tree(&mut s, &g.cond, 2, Some(&g.reason));
        }
    }
    s
}

/// `cond` at `indent`: on one line when it fits, else as `any of:`/`all of:` with its parts
/// one level deeper; `reason` goes on the first line.
fn tree(s: &mut String, cond: &symstride::sym::BoolExpr, indent: usize, reason: Option<&str>) {
    use std::fmt::Write;
    let text = cond.to_string();
    let note = reason.map_or(String::new(), |r| format!("   # {r}"));
    let (head, parts) = match (cond.disjuncts(), cond.conjuncts()) {
        (Some(ds), _) => ("any of:", ds),
        (_, Some(cs)) => ("all of:", cs),
        _ => ("", &[][..]),
    };
    if indent + text.len() <= LINE || parts.is_empty() {
        let _ = writeln!(s, "{:indent$}{text}{note}", "");
        return;
    }
    let _ = writeln!(s, "{:indent$}{head}{note}", "");
    let inner = indent + 2;
    if cond.conjuncts().is_some() {
        // Conditions packed `a && b && ...` while a line has room; one too long alone
        // becomes its own subtree.
        let mut line = String::new();
        for p in parts {
            let t = p.to_string();
            let t = if p.disjuncts().is_some() {
                format!("({t})")
            } else {
                t
            };
            if inner + t.len() > LINE {
                tree(s, p, inner, None);
                continue;
            }
            if !line.is_empty() && inner + line.len() + 4 + t.len() > LINE {
                let _ = writeln!(s, "{:inner$}{line}", "");
                line.clear();
            }
            if !line.is_empty() {
                line.push_str(" && ");
            }
            line.push_str(&t);
        }
        if !line.is_empty() {
            let _ = writeln!(s, "{:inner$}{line}", "");
        }
    } else {
        for p in parts {
            tree(s, p, inner, None);
        }
    }
}
