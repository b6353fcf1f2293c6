//! `symstride demo`: a tour of the engine. By default the program demo
//! ([`super::program::demo`]): compile a built-in attention-heads-with-softmax program, show
//! its guards and fused steps, dispatch shapes through it (hits and re-traces) and check every
//! output against the step-by-step reference. With `--single-op`, the same for the seed
//! spec's `add` through the vectorized kernels, plus timings.

use super::run::{describe_dispatch, fmt_time, measure, resolve_threads, with_threads};
use std::process::ExitCode;
use std::time::Instant;
use symstride::aot::{
    random_inputs, Artifact, CompileOptions, Dispatcher, SeedDispatch, Spec, SEED_SPEC_JSON,
};
use symstride::Result;

/// Arguments of `symstride demo`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Number of threads for the kernels (0 or absent: all cores; at most 4 per core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Run the single-op demo (the seed spec's add through the vectorized kernels) instead
    /// of the program demo.
    #[arg(long)]
    pub single_op: bool,
}

/// The shapes the demo runs (c, h, w) and what they show.
const SHAPES: [([i64; 3], &str); 8] = [
    ([3, 4, 5], "the hints"),
    ([64, 56, 56], "large, same guards"),
    ([32, 7, 7], "small"),
    ([64, 1, 56], "h = 1 fails `h >= 2`"),
    ([128, 1, 28], "h = 1 again"),
    ([1, 56, 56], "c = 1"),
    ([16, 0, 16], "empty (h = 0)"),
    ([64, 56, 56], "large again"),
];

/// Runs the subcommand.
pub fn run(args: Args) -> Result<ExitCode> {
    let threads = resolve_threads(args.threads);
    if !args.single_op {
        return with_threads(threads, super::program::demo)?.map(|()| ExitCode::SUCCESS);
    }
    with_threads(threads, || demo(threads))?
}

fn demo(threads: Option<usize>) -> Result<ExitCode> {
    let spec = Spec::from_json(SEED_SPEC_JSON)?;
    println!("== spec: add(a, b), a = [2, c, h, w] channels-last, b = [c, h, w] contiguous");
    println!("   {SEED_SPEC_JSON}\n");
    let t = Instant::now();
    let artifact = Artifact::compile(&spec, &CompileOptions::default())?;
    let compile_time = t.elapsed();
    println!(
        "== compile (one trace at the hints c=3, h=4, w=5): {}",
        fmt_time(compile_time)
    );
    print!("{}", super::guards::describe(&artifact));
    let s0 = &artifact.specializations[0];
    let plan: Vec<String> = s0.plan.shape.iter().map(|e| e.to_string()).collect();
    println!(
        "  plan: iteration shape [{}] (innermost first), perm {:?}\n",
        plan.join(", "),
        s0.plan.perm
    );

    let d = Dispatcher::new(artifact)?;
    println!(
        "== run ({} thread(s)); every output is verified against a naive reference",
        threads.unwrap_or_else(rayon::current_num_threads)
    );
    for (k, ([c, h, w], what)) in SHAPES.iter().enumerate() {
        let values = [*c, *h, *w];
        let inputs = random_inputs(&spec, &values, k as u64 + 1)?;
        let m = measure(&d, &inputs, 20, true, None)?;
        let out = &m.execution.output;
        println!(
            "  c={c:<3} h={h:<3} w={w:<3} ({what})\n      {}\n      output strides {:?}; {} elements verified; {} per call, {:.2} GB/s",
            describe_dispatch(&d, &values, m.execution.dispatched),
            out.strides(),
            m.verified,
            fmt_time(m.median),
            m.gbps()
        );
    }
    let s = d.stats();
    println!(
        "\n== dispatcher: {} hits, {} misses, {} re-traces, {} specializations cached ({} shapes, each dispatched 21 times: once checked, 20 timed)",
        s.hits,
        s.misses,
        s.retraces,
        s.specializations,
        SHAPES.len()
    );
    let mut sd = SeedDispatch::new()?;
    let n = 200_000;
    let t = Instant::now();
    for _ in 0..n {
        std::hint::black_box(sd.run()?);
    }
    println!(
        "== cached dispatch (bind + guard check + plan instantiation, no kernel): {:.0} ns per call",
        t.elapsed().as_secs_f64() * 1e9 / n as f64
    );
    Ok(ExitCode::SUCCESS)
}
