//! `symstride run`: execute concrete tensors through a plan artifact and verify them.

use std::process::ExitCode;
use std::time::{Duration, Instant};
use symstride::aot::{
    empty_plan, random_inputs, verify, Artifact, Dispatched, Dispatcher, Execution,
};
use symstride::kernel::ExecConfig;
use symstride::tensor::Tensor;
use symstride::{Error, Result};

/// Arguments of `symstride run`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The plan artifact.
    pub plan: std::path::PathBuf,
    /// The binding, `k=v,k=v`.
    #[arg(long)]
    pub bind: String,
    /// Number of threads.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Repetitions for timing.
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
}

/// One measured call: the first execution (dispatch, allocation, kernel), then `repeat`
/// timed kernel runs into the same output.
pub struct Measured {
    /// The first execution.
    pub execution: Execution,
    /// Median time of one call (dispatch + kernel, output reused).
    pub median: Duration,
    /// Fastest call.
    pub min: Duration,
    /// Bytes one call moves (each input's elements read once, the output written once).
    pub bytes: u64,
    /// Elements verified against the reference.
    pub verified: usize,
}

impl Measured {
    /// Effective bandwidth of the median call, GB/s.
    pub fn gbps(&self) -> f64 {
        self.bytes as f64 / self.median.as_secs_f64().max(1e-12) / 1e9
    }
}

/// Runs `inputs` through `d` once (verifying against the reference), then `repeat` more
/// times for timing.
pub fn measure(d: &Dispatcher, inputs: &[Tensor<f32>], repeat: usize) -> Result<Measured> {
    let refs: Vec<&Tensor<f32>> = inputs.iter().collect();
    let cfg = ExecConfig::default();
    let execution = d.execute(&refs, &cfg)?;
    let verified = verify(d.spec().op, &refs, &execution.output)?;
    let mut plan = empty_plan();
    let mut times = Vec::with_capacity(repeat.max(1));
    for _ in 0..repeat.max(1) {
        let t = Instant::now();
        d.execute_into(&refs, &execution.output, &cfg, &mut plan)?;
        times.push(t.elapsed());
    }
    times.sort();
    let numel = |t: &Tensor<f32>| t.numel().max(0) as u64;
    let bytes = 4 * (numel(&execution.output) + inputs.iter().map(numel).sum::<u64>());
    Ok(Measured {
        execution,
        median: times[times.len() / 2],
        min: times[0],
        bytes,
        verified,
    })
}

/// Runs `f` on a pool of `threads` threads (the global pool when `None`).
pub fn with_threads<T: Send>(threads: Option<usize>, f: impl FnOnce() -> T + Send) -> Result<T> {
    match threads {
        None => Ok(f()),
        Some(n) => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(n.max(1))
                .build()
                .map_err(|e| Error::invalid(format!("cannot build a thread pool: {e}")))?;
            Ok(pool.install(f))
        }
    }
}

/// Human-readable duration.
pub fn fmt_time(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

/// Describes how a call was dispatched: hit, or the guard that missed and the new guards.
pub fn describe_dispatch(d: &Dispatcher, values: &[i64], r: Dispatched) -> String {
    if !r.retraced {
        return format!("hit: specialization {}", r.specialization);
    }
    let mut why = String::new();
    if let Some(s0) = d.specialization(0) {
        if let Ok(Some(g)) = s0.first_failing_guard(values) {
            why = format!(" (specialization 0 needs `{}`)", s0.guards[g].cond);
        }
    }
    let new = d
        .specialization(r.specialization)
        .map(|s| {
            let gs: Vec<String> = s.guards.iter().map(|g| g.cond.to_string()).collect();
            gs.join(", ")
        })
        .unwrap_or_default();
    format!(
        "MISS{why} -> re-traced specialization {}: {new}",
        r.specialization
    )
}

/// Runs the subcommand.
pub fn run(args: Args) -> Result<ExitCode> {
    let a = Artifact::load(&args.plan)?;
    let pairs = super::check::parse_bind(&args.bind)?;
    let values = a
        .spec
        .values_from_map(pairs.iter().map(|(k, v)| (k.as_str(), *v)))?;
    let inputs = random_inputs(&a.spec, &values, 0x5eed)?;
    let name = a.spec.name.clone().unwrap_or_else(|| "spec".into());
    let op = a.spec.op;
    let d = Dispatcher::new(a)?;
    let m = with_threads(args.threads, || measure(&d, &inputs, args.repeat))??;
    let out = &m.execution.output;
    println!("{name} ({op}) at {}", args.bind);
    for (i, t) in inputs.iter().enumerate() {
        println!(
            "  input {i}: sizes {:?} strides {:?}",
            t.sizes(),
            t.strides()
        );
    }
    println!(
        "  output : sizes {:?} strides {:?}",
        out.sizes(),
        out.strides()
    );
    println!(
        "  dispatch: {}",
        describe_dispatch(&d, &values, m.execution.dispatched)
    );
    println!(
        "  verified {} elements against the naive reference",
        m.verified
    );
    println!(
        "  time: median {} (min {}) over {} run(s), {} thread(s): {:.2} GB/s effective",
        fmt_time(m.median),
        fmt_time(m.min),
        args.repeat.max(1),
        args.threads.unwrap_or_else(rayon::current_num_threads),
        m.gbps()
    );
    Ok(ExitCode::SUCCESS)
}
