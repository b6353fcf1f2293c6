//! `symstride run`: execute concrete tensors through a plan artifact and verify them.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use symstride::aot::{
    empty_plan, estimate_run_memory, fmt_bytes, parse_bytes, random_inputs, verify, Dispatched,
    Dispatcher, Execution,
};
use symstride::kernel::ExecConfig;
use symstride::program::AnyArtifact;
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
    /// Number of threads (0 or absent: all cores; at most 4 per core, larger values are
    /// capped with a note).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Repetitions for timing (a single op: timed runs after the verified one; a program:
    /// runs through the kernels, the first one verified, the median reported).
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
    /// Refuse a run that would allocate more than this many bytes (inputs, output, the
    /// reference check), e.g. `512M`, `8G`. Default: half of the available memory
    /// (`MemAvailable` in /proc/meminfo), or 4 GiB where that cannot be read.
    #[arg(long, value_name = "BYTES")]
    pub max_memory: Option<String>,
    /// Skip the naive reference check (saves its memory and time on large runs).
    #[arg(long)]
    pub no_verify: bool,
    /// Programs: run every step on its own instead of the specialization's fused chains
    /// (the default evaluates each chain in one pass; `guards` lists them).
    #[arg(long)]
    pub no_fuse: bool,
    /// Programs: print the outputs (layout and values in row-major order) as one JSON
    /// object, comparable with PyTorch's.
    #[arg(long)]
    pub values: bool,
}

/// The allocation limit of a run: `--max-memory`, else half of the available memory, else
/// a fixed fallback; with where it comes from.
fn memory_limit(max_memory: &Option<String>) -> Result<(u64, String)> {
    Ok(match max_memory {
        Some(t) => (parse_bytes(t)?, "--max-memory".to_string()),
        None => match default_max_memory() {
            Some(b) => (b, "half of MemAvailable; see --max-memory".to_string()),
            None => (
                FALLBACK_MAX_MEMORY,
                "default without /proc/meminfo; see --max-memory".to_string(),
            ),
        },
    })
}

/// Fallback memory limit when /proc/meminfo cannot be read.
const FALLBACK_MAX_MEMORY: u64 = 4 << 30;

/// Half of `MemAvailable` from /proc/meminfo, if readable.
fn default_max_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024) / 2)
}

/// A progress line on stderr, once a second, for a run phase that takes longer than a
/// second (quiet for fast runs). Stops when dropped.
pub struct Progress {
    phase: Arc<Mutex<String>>,
    done: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    /// Starts reporting, prefixed by `what`.
    pub fn start(what: &str) -> Progress {
        let phase = Arc::new(Mutex::new(String::new()));
        let done = Arc::new(AtomicBool::new(false));
        let (p, d, what) = (phase.clone(), done.clone(), what.to_string());
        let handle = std::thread::spawn(move || {
            let start = Instant::now();
            let mut next = Duration::from_secs(1);
            while !d.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
                if start.elapsed() >= next && !d.load(Ordering::Relaxed) {
                    let phase = p.lock().map(|s| s.clone()).unwrap_or_default();
                    eprintln!("{what}: {phase} ({:.0} s)", start.elapsed().as_secs_f64());
                    next += Duration::from_secs(1);
                }
            }
        });
        Progress {
            phase,
            done,
            handle: Some(handle),
        }
    }

    /// Names the current phase.
    pub fn set(&self, phase: &str) {
        if let Ok(mut p) = self.phase.lock() {
            *p = phase.to_string();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
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

/// Runs `inputs` through `d` once (verifying against the reference unless `check` is
/// false), then `repeat` more times for timing.
pub fn measure(
    d: &Dispatcher,
    inputs: &[Tensor<f32>],
    repeat: usize,
    check: bool,
    progress: Option<&Progress>,
) -> Result<Measured> {
    let refs: Vec<&Tensor<f32>> = inputs.iter().collect();
    let cfg = ExecConfig::default();
    let phase = |p: &str| {
        if let Some(pr) = progress {
            pr.set(p)
        }
    };
    phase("executing");
    let execution = d.execute(&refs, &cfg)?;
    phase("verifying against the naive reference");
    let verified = if check {
        verify(d.spec().op, &refs, &execution.output)?
    } else {
        0
    };
    phase("timing");
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

/// The thread count to use for `--threads`: `None` or 0 mean all cores (`None`: the
/// global pool); more than 4 per core is capped there, with a note on stderr.
pub fn resolve_threads(requested: Option<usize>) -> Option<usize> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cap = 4 * cores;
    match requested {
        None | Some(0) => None,
        Some(n) if n > cap => {
            eprintln!("symstride: --threads {n} capped at {cap} (4 per core, {cores} core(s))");
            Some(cap)
        }
        Some(n) => Some(n),
    }
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
    let pairs = super::check::parse_bind(&args.bind)?;
    let a = match AnyArtifact::load(&args.plan)? {
        AnyArtifact::Op(a) => a,
        AnyArtifact::Program(a) => {
            let options = super::program::RunOptions {
                pairs,
                values: args.values,
                no_verify: args.no_verify,
                no_fuse: args.no_fuse,
                threads: resolve_threads(args.threads),
                limit: memory_limit(&args.max_memory)?,
                repeat: args.repeat,
            };
            return super::program::run(a, &options);
        }
    };
    if args.values {
        return Err(Error::invalid(
            "--values prints a program's outputs; this is a single-op artifact",
        ));
    }
    if args.no_fuse {
        return Err(Error::invalid(
            "--no-fuse runs a program step by step; this is a single-op artifact",
        ));
    }
    let values = a
        .spec
        .values_from_map(pairs.iter().map(|(k, v)| (k.as_str(), *v)))?;
    let binding: Vec<String> = a
        .spec
        .symbols
        .iter()
        .zip(&values)
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let binding = binding.join(",");
    // Refuse before allocating: inputs, output and the reference's copies.
    let estimate = estimate_run_memory(&a.spec, &values)?;
    let needed = estimate.total(!args.no_verify);
    let (limit, source) = memory_limit(&args.max_memory)?;
    if needed > limit {
        let hint = if args.no_verify {
            String::new()
        } else {
            format!(
                "; --no-verify would need {}",
                fmt_bytes(estimate.total(false))
            )
        };
        return Err(Error::Limit {
            message: format!(
                "run at {binding} would allocate {} (inputs {}, output {}, reference check {}), \
                 more than the limit of {} ({source}){hint}",
                fmt_bytes(needed),
                fmt_bytes(estimate.inputs),
                fmt_bytes(estimate.output),
                if args.no_verify {
                    "skipped".to_string()
                } else {
                    fmt_bytes(estimate.reference)
                },
                fmt_bytes(limit),
            ),
        });
    }
    let threads = resolve_threads(args.threads);
    let progress = Progress::start("symstride run");
    progress.set("building inputs");
    let inputs = random_inputs(&a.spec, &values, 0x5eed)?;
    let name = a.spec.name.clone().unwrap_or_else(|| "spec".into());
    let op = a.spec.op;
    let d = Dispatcher::new(a)?;
    let check = !args.no_verify;
    let m = with_threads(threads, || {
        measure(&d, &inputs, args.repeat, check, Some(&progress))
    })??;
    drop(progress);
    let out = &m.execution.output;
    println!("{name} ({op}) at {binding}");
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
    if check {
        println!(
            "  verified {} elements against the naive reference",
            m.verified
        );
    } else {
        println!("  not verified (--no-verify)");
    }
    println!(
        "  time: median {} (min {}) over {} run(s), {} thread(s): {:.2} GB/s effective",
        fmt_time(m.median),
        fmt_time(m.min),
        args.repeat.max(1),
        threads.unwrap_or_else(rayon::current_num_threads),
        m.gbps()
    );
    Ok(ExitCode::SUCCESS)
}
