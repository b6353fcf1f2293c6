//! The program side of `compile`, `guards`, `check`, `run` and `demo`.
//!
//! Each subcommand detects what it was given: a spec file whose object (or `--name`d array
//! item) has `steps` is a program, an artifact of format version 2 is a program artifact;
//! everything else goes down the single-op path unchanged.

use super::run::{fmt_time, Progress};
use serde_json::{json, Map, Value as Json};
use std::process::ExitCode;
use std::time::Instant;
use symstride::aot::{fmt_bytes, CoverOptions};
use symstride::kernel::ExecConfig;
use symstride::program::golden::TOLERANCE;
use symstride::program::{
    execute, execute_within, fill_inputs, input_layouts, tensor_values, Fuse, FusionPlan, Program, ProgramArtifact,
    ProgramDispatch, ProgramDispatcher, Value, DEMO_PROGRAM_JSON,
};
use symstride::sym::Bindings;
use symstride::tensor::Scalar;
use symstride::{DType, Error, Result};

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

/// `compile` of a program (`cover`: the `--cover` options).
pub fn compile(
    v: &Json,
    output: &std::path::Path,
    cover: Option<CoverOptions>,
) -> Result<ExitCode> {
    let p = Program::from_value(v)?;
    let start = Instant::now();
    let a = match &cover {
        Some(o) => ProgramArtifact::compile_cover(&p, o)?,
        None => ProgramArtifact::compile(&p)?,
    };
    let elapsed = start.elapsed();
    a.save(output)?;
    println!(
        "compiled program {} ({} input{}, {} step{}, symbols {}) in {:.2} ms: {} specialization{} -> {}",
        p.name,
        p.inputs.len(),
        plural(p.inputs.len()),
        p.steps.len(),
        plural(p.steps.len()),
        symbols(&p),
        elapsed.as_secs_f64() * 1e3,
        a.specializations.len(),
        plural(a.specializations.len()),
        output.display()
    );
    for (k, s) in a.specializations.iter().enumerate().take(8) {
        let guards: Vec<String> = s.guards.iter().map(|g| g.cond.to_string()).collect();
        let (exprs, steps) = s.program_size();
        println!(
            "  [{k}] {}",
            if guards.is_empty() {
                "(no guards)".to_string()
            } else {
                guards.join(", ")
            }
        );
        match s.error() {
            Some(e) => println!("      every admitted binding fails with {}", symstride::a_category_error(e.category())),
            None => println!(
                "      {exprs} layout expression{} of {} value{} in one straight-line program of {steps} step{}",
                plural(exprs),
                p.names.len(),
                plural(p.names.len()),
                plural(steps)
            ),
        }
    }
    if a.specializations.len() > 8 {
        println!(
            "  ... {} more (symstride guards {})",
            a.specializations.len() - 8,
            output.display()
        );
    }
    if let Some(c) = &a.coverage {
        if c.complete {
            println!("  cover: complete (proved for every binding of the domain)");
        } else {
            println!("  cover: INCOMPLETE, not proved for:");
            for r in &c.uncovered {
                println!("    {r}");
            }
        }
    }
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
/// it was traced, its outputs' layouts, each guard with the step that asked, and which
/// steps a run fuses (`fused: steps 5-6 fused`, numbered from 1 as in the reasons).
pub fn describe(a: &ProgramArtifact) -> String {
    use std::fmt::Write;
    let p = &a.program;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "program {} ({} step{}), symbols {}: {} specialization{}",
        p.name,
        p.steps.len(),
        plural(p.steps.len()),
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
                    "specialization {k} (traced at {at}): {}: {e}",
                    symstride::a_category_error(e.category())
                );
            }
        }
        s.push_str(&super::guards::guard_lines(&sp.guards));
        let conditions: Vec<symstride::sym::Guard> =
            sp.plan_conditions.iter().flatten().cloned().collect();
        if !conditions.is_empty() {
            let _ = writeln!(
                s,
                "  plan conditions (no guards: where one fails, its step is planned at run time):"
            );
            for line in super::guards::guard_lines(&conditions).lines() {
                let _ = writeln!(s, "  {line}");
            }
        }
        if sp.values.is_ok() {
            let _ = writeln!(s, "  fused: {}", sp.fusion);
        }
    }
    s
}

/// Symbol values (program order) from `name=value` pairs ([`Program::values_from_pairs`]:
/// every symbol once, no unknown names, sizes non-negative).
pub fn values_from_pairs(p: &Program, pairs: &[(String, i64)]) -> Result<Vec<i64>> {
    p.values_from_pairs(pairs)
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
        "fused": out.fusion.map(|f| fused_json(&f)),
    }))
}

/// Which steps run fused, steps numbered from 1: `{"chains": [[2, 3, 4]], "rows": [[1, 2,
/// 3, 4, 5]]}` (a chain and a row segment may hold the same steps; a run takes a row
/// segment where its rows fit, the chains elsewhere).
fn fused_json(f: &FusionPlan) -> Json {
    json!({"chains": f.chain_numbers(), "rows": f.row_numbers()})
}

fn scalar_json(s: Scalar) -> Json {
    match s {
        Scalar::Bool(b) => json!(b),
        Scalar::Int(i) => json!(i),
        Scalar::Float(f) if f.is_finite() => json!(f),
        // The golden format's spelling of the non-finite floats.
        Scalar::Float(f) if f.is_nan() => json!("nan"),
        Scalar::Float(f) if f > 0.0 => json!("inf"),
        Scalar::Float(_) => json!("-inf"),
    }
}

/// Bytes of every storage (inputs and the values that allocate), each element of
/// `element(dtype)` bytes.
fn storage_bytes(vals: &[Value<i64>], element: impl Fn(DType) -> u64) -> u64 {
    vals.iter()
        .enumerate()
        .filter(|(k, v)| v.storage == *k)
        .fold(0u64, |acc, (_, v)| {
            acc.saturating_add((v.storage_numel.max(0) as u64).saturating_mul(element(v.dtype)))
        })
}

/// Elements of the outputs in logical order (a view can address far more than its storage:
/// `expand(x, [n*n*n])` of one element has `n**3`).
fn output_elements(p: &Program, vals: &[Value<i64>]) -> u64 {
    p.outputs.iter().fold(0u64, |acc, &k| {
        let n = vals[k]
            .sizes
            .iter()
            .fold(1u64, |a, &z| a.saturating_mul(z.max(0) as u64));
        acc.saturating_add(n)
    })
}

/// Bytes one output element takes in `--values`' JSON (a `serde_json::Value` and its text).
const JSON_BYTES_PER_VALUE: u64 = 64;

/// What a run allocates, estimated before allocating: the kernels' storages in their dtypes
/// (an upper bound: dead buffers are reused; twice with `--repeat`, whose later runs
/// allocate while the first one's outputs are kept), the outputs read back in logical order
/// (each element in its dtype, then widened to a `Scalar`), the step-by-step reference (one
/// `Scalar` per storage element, and the outputs' values once more) and `--values`' JSON.
struct RunBytes {
    kernels: u64,
    read_outputs: u64,
    reference: u64,
    json: u64,
}

impl RunBytes {
    fn new(p: &Program, vals: &[Value<i64>], o: &RunOptions) -> RunBytes {
        let scalar = std::mem::size_of::<Scalar>() as u64;
        let kernels = storage_bytes(vals, |d| d.element_size() as u64);
        let elements = output_elements(p, vals);
        let read = |per: u64| elements.saturating_mul(per);
        let widest = p
            .outputs
            .iter()
            .map(|&k| vals[k].dtype.element_size() as u64)
            .max()
            .unwrap_or(0);
        let verify = !o.no_verify;
        RunBytes {
            kernels: if o.repeat > 1 {
                kernels.saturating_mul(2)
            } else {
                kernels
            },
            read_outputs: if verify || o.values {
                read(widest + scalar)
            } else {
                0
            },
            reference: if verify {
                storage_bytes(vals, |_| scalar).saturating_add(read(scalar))
            } else {
                0
            },
            json: if o.values {
                read(JSON_BYTES_PER_VALUE)
            } else {
                0
            },
        }
    }

    /// The peak: the kernels' storages, with the verification or the printing of values,
    /// whichever needs more (they run one after the other).
    fn total(&self) -> u64 {
        self.kernels.saturating_add(
            self.read_outputs
                .saturating_add(self.reference.max(self.json)),
        )
    }
}

fn as_f64(s: Scalar) -> f64 {
    match s {
        Scalar::Float(f) => f,
        Scalar::Int(i) => i as f64,
        Scalar::Bool(v) => f64::from(u8::from(v)),
    }
}

/// Same value up to the golden tolerances (floats), exactly otherwise.
fn close(a: Scalar, b: Scalar) -> bool {
    match (a, b) {
        (Scalar::Float(x), Scalar::Float(y)) => {
            x == y || (x.is_nan() && y.is_nan()) || (x - y).abs() <= TOLERANCE + TOLERANCE * y.abs()
        }
        _ => as_f64(a) == as_f64(b),
    }
}

/// What `run` needs from its arguments.
pub struct RunOptions {
    /// The binding pairs.
    pub pairs: Vec<(String, i64)>,
    /// Print the outputs' values as JSON.
    pub values: bool,
    /// Skip the check against the step-by-step reference executor.
    pub no_verify: bool,
    /// Run every step on its own (no fused chains).
    pub no_fuse: bool,
    /// Kernel threads (`None`: the global pool).
    pub threads: Option<usize>,
    /// Allocation limit in bytes and where it comes from.
    pub limit: (u64, String),
    /// Kernel runs to time (`--repeat`): the first one's outputs are verified and printed,
    /// the time reported is the median over all of them.
    pub repeat: usize,
}

/// `run` of a program artifact: bind, dispatch (every value's layout), refuse above the
/// memory limit, make the inputs with the golden fill formula, run through the vectorized
/// kernels (the specialization's fused chains one pass each, unless `--no-fuse`; every
/// other step from its stored plan), verify the outputs against the step-by-step reference
/// executor (unless `--no-verify`), print them.
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
    let verify = !o.no_verify;
    let bytes = RunBytes::new(&p, &vals, o);
    let needed = bytes.total();
    let (limit, source) = &o.limit;
    if needed > *limit {
        let mut parts = vec![format!("storages {}", fmt_bytes(bytes.kernels))];
        if bytes.read_outputs > 0 {
            parts.push(format!(
                "the outputs' {} elements read back {}",
                output_elements(&p, &vals),
                fmt_bytes(bytes.read_outputs)
            ));
        }
        if verify {
            parts.push(format!("the reference check {}", fmt_bytes(bytes.reference)));
        }
        if o.values {
            parts.push(format!("--values' JSON {}", fmt_bytes(bytes.json)));
        }
        return Err(Error::Limit {
            message: format!(
                "run at {binding} would allocate {} ({}), more than the limit of {} ({source}){}",
                fmt_bytes(needed),
                parts.join(", "),
                fmt_bytes(*limit),
                if verify || o.values {
                    format!(
                        "; without the reference check and --values it would need {}",
                        fmt_bytes(bytes.kernels)
                    )
                } else {
                    String::new()
                }
            ),
        });
    }
    let progress = Progress::start("symstride run");
    progress.set("building inputs");
    let inputs = fill_inputs(&p, &vals)?;
    progress.set("executing every step through the kernels");
    let cfg = ExecConfig::default();
    let fuse = if o.no_fuse {
        Fuse::StepByStep
    } else {
        Fuse::Chains
    };
    let repeat = o.repeat.max(1);
    let mut times = Vec::with_capacity(repeat);
    let ran = super::run::with_threads(o.threads, || -> Result<_> {
        // The inputs are only read (every step writes a new value), so each timed run
        // takes the same tensors; a later run's outputs are dropped before the next.
        let t = Instant::now();
        let first = d.run_with(inputs.clone(), &cfg, fuse)?;
        times.push(t.elapsed());
        for _ in 1..repeat {
            let t = Instant::now();
            drop(d.run_with(inputs.clone(), &cfg, fuse)?);
            times.push(t.elapsed());
        }
        Ok(first)
    })??;
    times.sort();
    let outs = ran.outputs;
    let exec_time = times[times.len() / 2];
    let mut checked = 0usize;
    if verify {
        progress.set("verifying against the step-by-step reference");
        let b = Bindings::from_pairs(
            p.symbols
                .iter()
                .map(String::as_str)
                .zip(values.iter().copied()),
        );
        // The reference gets what the kernels' storages and the outputs read back leave.
        let room = limit.saturating_sub(bytes.kernels.saturating_add(bytes.read_outputs));
        let ex = execute_within(&p, &b, room)?;
        for (t, &k) in outs.iter().zip(&p.outputs) {
            let (got, want) = (tensor_values(t)?, ex.values(k)?);
            if got.len() != want.len() {
                return Err(Error::invalid(format!(
                    "output `{}`: {} elements, the reference has {}",
                    p.names[k],
                    got.len(),
                    want.len()
                )));
            }
            if let Some(i) = (0..got.len()).find(|&i| !close(got[i], want[i])) {
                return Err(Error::invalid(format!(
                    "output `{}` element {i}: {:?} but the reference computes {:?}",
                    p.names[k], got[i], want[i]
                )));
            }
            checked += got.len();
        }
    }
    drop(progress);
    if o.values {
        let mut m = Map::new();
        for (t, &k) in outs.iter().zip(&p.outputs) {
            m.insert(
                p.names[k].clone(),
                json!({
                    "sizes": t.sizes(), "strides": t.strides(), "dtype": vals[k].dtype.name(),
                    "offset": vals[k].offset,
                    "values": tensor_values(t)?.into_iter().map(scalar_json).collect::<Vec<_>>(),
                }),
            );
        }
        println!(
            "{}",
            json!({"program": p.name, "binding": binding, "outputs": m,
                   "fused": fused_json(&ran.fusion)})
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!("program {} at {binding}", p.name);
    for (i, (s, t)) in layouts.iter().enumerate() {
        println!("  input {i} (`{}`): sizes {s:?} strides {t:?}", p.names[i]);
    }
    for (t, &k) in outs.iter().zip(&p.outputs) {
        let l = &vals[k];
        println!(
            "  output `{}`: sizes {:?} strides {:?} offset {} {}{}",
            p.names[k],
            t.sizes(),
            t.strides(),
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
        "  executed through the kernels in {}{} (at most {} allocated); {}",
        fmt_time(exec_time),
        if repeat > 1 {
            format!(
                " (median of {repeat} runs, min {})",
                fmt_time(times[0])
            )
        } else {
            String::new()
        },
        fmt_bytes(storage_bytes(&vals, |d| d.element_size() as u64)),
        if o.no_fuse {
            "step by step (--no-fuse)".to_string()
        } else if ran.fusion.chains.is_empty() {
            "no fused chain in this specialization".to_string()
        } else {
            let n = ran.fusion.chains.len();
            format!(
                "fused: {} ({} step{} in {n} pass{})",
                ran.fusion,
                ran.stats.fused_steps,
                plural(ran.stats.fused_steps),
                if n == 1 { "" } else { "es" }
            )
        }
    );
    if verify {
        println!("  verified {checked} output elements against the step-by-step reference");
    } else {
        println!("  not verified (--no-verify)");
    }
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
    println!(
        "\n== dispatch and execute through the kernels; every output checked against the \
         step-by-step reference, softmax rows summed"
    );
    let pi = p.names.iter().position(|n| n == "p").unwrap_or(0);
    let po = p.outputs.iter().position(|&o| o == pi).unwrap_or(0);
    let cfg = ExecConfig::default();
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
        // The dispatch that serves the call (a miss re-traces here); `run` then hits.
        let r = d.dispatch(&refs, &mut vals)?;
        let (outs, _) = d.run(fill_inputs(&p, &vals)?, &cfg)?;
        let ex = execute(
            &p,
            &Bindings::from_pairs(p.symbols.iter().map(String::as_str).zip(vals_in)),
        )?;
        for (t, &k) in outs.iter().zip(&p.outputs) {
            let (got, want) = (tensor_values(t)?, ex.values(k)?);
            if got.len() != want.len() || got.iter().zip(&want).any(|(x, y)| !close(*x, *y)) {
                return Err(Error::invalid(format!(
                    "output `{}` differs from the reference at b={b}, s={s}",
                    p.names[k]
                )));
            }
        }
        let probs: Vec<f64> = tensor_values(&outs[po])?.into_iter().map(as_f64).collect();
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
        "  dispatcher: {} misses (re-traced), {} specializations cached",
        st.misses, st.specializations
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
