//! The program side of `compile`, `guards`, `check`, `run` and `demo`.
//!
//! Each subcommand detects what it was given: a spec file whose object (or `--name`d array
//! item) has `steps` is a program, an artifact of format version 2 is a program artifact;
//! everything else goes down the single-op path unchanged.

use super::run::{fmt_time, Progress};
use serde_json::{json, Map, Value as Json};
use std::process::ExitCode;
use std::time::Instant;
use symstride::aot::fmt_bytes;
use symstride::program::{
    execute, input_layouts, Program, ProgramArtifact, ProgramDispatch, ProgramDispatcher, Value,
    DEMO_PROGRAM_JSON,
};
use symstride::sym::Bindings;
use symstride::tensor::Scalar;
use symstride::{Error, Result};

/// The program in `text`, when it holds one: an object with `steps`, or the item named
/// `name` of an array when that item has `steps`.
pub fn program_value(text: &str, name: Option<&str>) -> Option<Json> {
    let v: Json = serde_json::from_str(text).ok()?;
    let item = match (&v, name) {
        (Json::Array(items), Some(n)) => items
            .iter()
            .find(|s| s.get("name").and_then(Json::as_str) == Some(n))?
            .clone(),
        (Json::Object(_), _) => v,
        _ => return None,
    };
    item.get("steps").is_some().then_some(item)
}

/// `compile` of a program.
pub fn compile(v: &Json, output: &std::path::Path, cover: bool) -> Result<ExitCode> {
    if cover {
        return Err(Error::invalid(
            "--cover is not available for programs yet (a program artifact holds one \
             specialization per trace; dispatch re-traces bindings it does not admit)",
        ));
    }
    let p = Program::from_value(v)?;
    let start = Instant::now();
    let a = ProgramArtifact::compile(&p)?;
    let elapsed = start.elapsed();
    a.save(output)?;
    println!(
        "compiled program {} ({} input{}, {} step{}, symbols {}) in {:.2} ms: {} specialization -> {}",
        p.name,
        p.inputs.len(),
        plural(p.inputs.len()),
        p.steps.len(),
        plural(p.steps.len()),
        symbols(&p),
        elapsed.as_secs_f64() * 1e3,
        a.specializations.len(),
        output.display()
    );
    let s = &a.specializations[0];
    let (exprs, steps) = s.program_size();
    if let Some(e) = s.error() {
        println!("  every admitted binding fails: {e}");
    } else {
        println!(
            "  {exprs} layout expressions of {} values in one straight-line program of {steps} steps",
            p.names.len()
        );
    }
    let guards: Vec<String> = s.guards.iter().map(|g| g.cond.to_string()).collect();
    println!(
        "  [0] {}",
        if guards.is_empty() {
            "(no guards)".to_string()
        } else {
            guards.join(", ")
        }
    );
    Ok(ExitCode::SUCCESS)
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn symbols(p: &Program) -> String {
    if p.symbols.is_empty() {
        "none".to_string()
    } else {
        p.symbols.join(", ")
    }
}

/// The readable listing `guards` prints for a program artifact: per specialization, where
/// it was traced, its outputs' layouts, and each guard with the step that asked.
pub fn describe(a: &ProgramArtifact) -> String {
    use std::fmt::Write;
    let p = &a.program;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "program {} ({} steps), symbols {}: {} specialization{}",
        p.name,
        p.steps.len(),
        symbols(p),
        a.specializations.len(),
        plural(a.specializations.len())
    );
    for (k, sp) in a.specializations.iter().enumerate() {
        let at: Vec<String> = p
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
        match &sp.values {
            Ok(vs) => {
                let outs: Vec<String> = p
                    .outputs
                    .iter()
                    .map(|&o| {
                        let l = &vs[o];
                        let list = |v: &[symstride::sym::Expr]| -> String {
                            v.iter()
                                .map(|e| e.to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        };
                        format!(
                            "{} sizes [{}] strides [{}]{}",
                            p.names[o],
                            list(&l.sizes),
                            list(&l.strides),
                            if l.storage == o {
                                String::new()
                            } else {
                                format!(" (view of {})", p.names[l.storage])
                            }
                        )
                    })
                    .collect();
                let _ = writeln!(
                    s,
                    "specialization {k} (traced at {at}): {}",
                    outs.join("; ")
                );
            }
            Err(e) => {
                let _ = writeln!(
                    s,
                    "specialization {k} (traced at {at}): {} error: {e}",
                    e.category()
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

/// Symbol values (program order) from `name=value` pairs: every symbol once, no unknown
/// names, sizes non-negative.
pub fn values_from_pairs(p: &Program, pairs: &[(String, i64)]) -> Result<Vec<i64>> {
    for (k, _) in pairs {
        if !p.symbols.contains(k) {
            return Err(Error::symbol(format!(
                "`{k}` is not a symbol of program {} (symbols: {})",
                p.name,
                symbols(p)
            )));
        }
    }
    p.symbols
        .iter()
        .map(|s| {
            let mut it = pairs.iter().filter(|(k, _)| k == s);
            let v = it
                .next()
                .ok_or_else(|| Error::symbol(format!("no value for symbol `{s}`")))?
                .1;
            if it.next().is_some() {
                return Err(Error::symbol(format!("symbol `{s}` is bound twice")));
            }
            if v < 0 {
                return Err(Error::symbol(format!(
                    "symbol `{s}` = {v}: sizes are non-negative"
                )));
            }
            Ok(v)
        })
        .collect()
}

/// The outputs' `{name: {sizes, strides, dtype}}` of instantiated values.
fn outputs_json(p: &Program, vals: &[Value<i64>]) -> Json {
    let mut m = Map::new();
    for &o in &p.outputs {
        let l = &vals[o];
        m.insert(
            p.names[o].clone(),
            json!({"sizes": l.sizes, "strides": l.strides, "dtype": l.dtype.name()}),
        );
    }
    Json::Object(m)
}

/// The JSON answer of `check` for one binding of a program artifact.
pub fn check_answer(a: &ProgramArtifact, pairs: &[(String, i64)]) -> Result<Json> {
    let values = values_from_pairs(&a.program, pairs)?;
    let out = a.check(&values)?;
    if let Some(category) = &out.error {
        return Ok(json!({
            "pass": true,
            "specialization": out.specialization,
            "error": category,
        }));
    }
    let failed = out
        .failed_guard
        .map(|(k, g)| a.specializations[k].guards[g].cond.to_string());
    Ok(json!({
        "pass": out.specialization.is_some(),
        "specialization": out.specialization,
        "failed_guard": failed,
        "outputs": out.values.map(|v| outputs_json(&a.program, &v)),
    }))
}

fn scalar_json(s: Scalar) -> Json {
    match s {
        Scalar::Bool(b) => json!(b),
        Scalar::Int(i) => json!(i),
        Scalar::Float(f) if f.is_finite() => json!(f),
        Scalar::Float(f) => json!(f.to_string()),
    }
}

/// Bytes the run allocates: every storage (inputs and the values that allocate) as the
/// reference executor holds them.
fn run_bytes(vals: &[Value<i64>]) -> u64 {
    let elements: u64 = vals
        .iter()
        .enumerate()
        .filter(|(k, v)| v.storage == *k)
        .map(|(_, v)| v.storage_numel.max(0) as u64)
        .sum();
    elements.saturating_mul(std::mem::size_of::<Scalar>() as u64)
}

/// What `run` needs from its arguments.
pub struct RunOptions {
    /// The binding pairs.
    pub pairs: Vec<(String, i64)>,
    /// Print the outputs' values as JSON.
    pub values: bool,
    /// Skip the check of the dispatched layouts against the reference executor's.
    pub no_verify: bool,
    /// Allocation limit in bytes and where it comes from.
    pub limit: (u64, String),
}

/// `run` of a program artifact: bind, dispatch (every value's layout), refuse above the
/// memory limit, execute on inputs made by the golden fill formula, print the outputs.
pub fn run(a: ProgramArtifact, o: &RunOptions) -> Result<ExitCode> {
    let p = a.program.clone();
    let values = values_from_pairs(&p, &o.pairs)?;
    let binding: Vec<String> = p
        .symbols
        .iter()
        .zip(&values)
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let binding = binding.join(",");
    let d = ProgramDispatcher::new(a)?;
    let layouts = input_layouts(&p, &values)?;
    let refs: Vec<(&[i64], &[i64])> = layouts.iter().map(|(s, t)| (&s[..], &t[..])).collect();
    let mut vals = Vec::new();
    let t = Instant::now();
    let dispatched = d.dispatch(&refs, &mut vals)?;
    let dispatch_time = t.elapsed();
    let needed = run_bytes(&vals);
    let (limit, source) = &o.limit;
    if needed > *limit {
        return Err(Error::Limit {
            message: format!(
                "run at {binding} would allocate {} (every storage), more than the limit of {} ({source})",
                fmt_bytes(needed),
                fmt_bytes(*limit)
            ),
        });
    }
    let progress = Progress::start("symstride run");
    progress.set("executing every step");
    let b = Bindings::from_pairs(
        p.symbols
            .iter()
            .map(String::as_str)
            .zip(values.iter().copied()),
    );
    let t = Instant::now();
    let ex = execute(&p, &b)?;
    let exec_time = t.elapsed();
    drop(progress);
    if !o.no_verify && ex.layouts != vals {
        return Err(Error::invalid(format!(
            "the dispatched layouts differ from the reference executor's at {binding}"
        )));
    }
    if o.values {
        let mut m = Map::new();
        for &k in &p.outputs {
            let l = &vals[k];
            m.insert(
                p.names[k].clone(),
                json!({
                    "sizes": l.sizes, "strides": l.strides, "dtype": l.dtype.name(),
                    "offset": l.offset,
                    "values": ex.values(k)?.into_iter().map(scalar_json).collect::<Vec<_>>(),
                }),
            );
        }
        println!(
            "{}",
            json!({"program": p.name, "binding": binding, "outputs": m})
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!("program {} at {binding}", p.name);
    for (i, (s, t)) in layouts.iter().enumerate() {
        println!("  input {i} (`{}`): sizes {s:?} strides {t:?}", p.names[i]);
    }
    for &k in &p.outputs {
        let l = &vals[k];
        println!(
            "  output `{}`: sizes {:?} strides {:?} offset {} {}{}",
            p.names[k],
            l.sizes,
            l.strides,
            l.offset,
            l.dtype.name(),
            l.aliases(k)
                .map_or(String::new(), |s| format!(" (view of `{}`)", p.names[s]))
        );
    }
    println!(
        "  dispatch: {} in {}",
        if dispatched.retraced {
            format!(
                "MISS -> re-traced specialization {}",
                dispatched.specialization
            )
        } else {
            format!("hit: specialization {}", dispatched.specialization)
        },
        fmt_time(dispatch_time)
    );
    println!(
        "  executed by the step-by-step reference executor in {} ({} allocated){}",
        fmt_time(exec_time),
        fmt_bytes(needed),
        if o.no_verify {
            "; layouts not verified (--no-verify)"
        } else {
            "; dispatched layouts verified against it"
        }
    );
    Ok(ExitCode::SUCCESS)
}

/// The program part of `demo`: compile the attention-heads-with-softmax program, show its
/// guards, dispatch shapes through it (hits and re-traces), check every layout against a
/// fresh concrete run and the softmax rows against 1, and time a cached dispatch.
pub fn demo() -> Result<()> {
    let p = Program::from_json(DEMO_PROGRAM_JSON)?;
    println!(
        "== program: attention heads with bias and softmax ({} steps)",
        p.steps.len()
    );
    for st in &p.steps {
        println!("   {}", st.label);
    }
    let t = Instant::now();
    let a = ProgramArtifact::compile(&p)?;
    println!(
        "\n== compile (one trace at the hints b=2, s=5): {}",
        fmt_time(t.elapsed())
    );
    print!("{}", describe(&a));
    let d = ProgramDispatcher::new(a)?;
    println!("\n== dispatch and execute (reference executor), softmax rows summed");
    let pi = p.names.iter().position(|n| n == "p").unwrap_or(0);
    for (b, s, what) in [
        (2, 5, "the hints"),
        (4, 7, "other sizes, same guards"),
        (1, 5, "b = 1"),
        (3, 1, "s = 1"),
        (3, 9, "hit again"),
    ] {
        let vals_in = [b, s];
        let layouts = input_layouts(&p, &vals_in)?;
        let refs: Vec<(&[i64], &[i64])> = layouts.iter().map(|(x, y)| (&x[..], &y[..])).collect();
        let mut vals = Vec::new();
        let r = d.dispatch(&refs, &mut vals)?;
        let ex = execute(
            &p,
            &Bindings::from_pairs(p.symbols.iter().map(String::as_str).zip(vals_in)),
        )?;
        if ex.layouts != vals {
            return Err(Error::invalid(format!(
                "dispatched layouts differ from the concrete run at b={b}, s={s}"
            )));
        }
        let probs: Vec<f64> = ex
            .values(pi)?
            .into_iter()
            .map(|x| match x {
                Scalar::Float(f) => f,
                Scalar::Int(i) => i as f64,
                Scalar::Bool(v) => f64::from(u8::from(v)),
            })
            .collect();
        let worst = probs
            .chunks(16)
            .map(|row| (row.iter().sum::<f64>() - 1.0).abs())
            .fold(0.0, f64::max);
        println!(
            "  b={b:<2} s={s:<2} ({what}): {}; p strides {:?}; max |row sum - 1| = {worst:.1e}",
            if r.retraced {
                format!("MISS -> re-traced specialization {}", r.specialization)
            } else {
                format!("hit: specialization {}", r.specialization)
            },
            vals[pi].strides
        );
    }
    let st = d.stats();
    println!(
        "  dispatcher: {} hits, {} misses, {} specializations cached",
        st.hits, st.misses, st.specializations
    );
    let mut pd = ProgramDispatch::new()?;
    let n = 200_000;
    let t = Instant::now();
    for _ in 0..n {
        std::hint::black_box(pd.run()?);
    }
    println!(
        "== cached program dispatch (bind + guards + every value of {} steps, no kernel): {:.0} ns per call",
        p.steps.len(),
        t.elapsed().as_secs_f64() * 1e9 / n as f64
    );
    Ok(())
}
