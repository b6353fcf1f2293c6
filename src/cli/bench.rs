//! `symstride bench`: the kernel benchmark scenarios (f32, fresh random data, median of
//! repeated runs), as a table with bandwidth and ratio to a plain memcpy, or as JSON; plus the
//! ahead-of-time scenarios `dispatch_cached_4d` (bind + guards + plan instantiation of the
//! seed spec, no kernel), `compile_seed_spec` (one compile of that spec) and
//! `cover_10_symbols` (`--cover` of a 10-symbol spec; its specialization count is printed).

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;
use symstride::kernel::{self, ExecConfig};
use symstride::tensor::{MemoryFormat, Tensor};
use symstride::{Error, Result};

/// Arguments of `symstride bench`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print JSON (`{"median_s": {...}}`).
    #[arg(long)]
    pub json: bool,
    /// Number of threads (default: rayon's default, one per core).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Repetitions per scenario (the median is reported).
    #[arg(long, default_value_t = 11)]
    pub reps: usize,
    /// Copy tile edge in elements (default: `ExecConfig`'s).
    #[arg(long)]
    pub tile: Option<usize>,
    /// Only run scenarios whose name contains this string (include `memcpy` for the ratios).
    #[arg(long)]
    pub only: Option<String>,
}

/// A benchmark scenario: name, bytes moved per run (for GB/s), calls per timed sample, body.
struct Scenario {
    name: &'static str,
    bytes: f64,
    inner: usize,
    run: Box<dyn FnMut() -> Result<()>>,
}

fn random(n: usize, seed: u64) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 40) as f32 / (1u64 << 24) as f32 - 0.5
        })
        .collect()
}

fn tensor(sizes: &[i64], seed: u64) -> Result<Tensor<f32>> {
    let n = sizes.iter().product::<i64>() as usize;
    Tensor::from_vec(random(n, seed), sizes)
}

const F: f64 = 4.0; // bytes per f32

fn scenarios(cfg: ExecConfig) -> Result<Vec<Scenario>> {
    let mut v: Vec<Scenario> = Vec::new();
    let n16 = (1usize << 24) as f64;

    let (a, b) = (tensor(&[64, 64, 64, 64], 1)?, tensor(&[64, 64, 64, 64], 2)?);
    {
        let (a, b, c) = (a.clone(), b.clone(), cfg.clone());
        v.push(Scenario {
            name: "add_contig_16M",
            bytes: 3.0 * F * n16,
            inner: 1,
            run: Box::new(move || {
                black_box(kernel::map2(&a, &b, &kernel::Add, &c)?);
                Ok(())
            }),
        });
    }
    {
        let out = Tensor::<f32>::zeros(&[64, 64, 64, 64])?;
        let c = cfg.clone();
        v.push(Scenario {
            name: "add_contig_16M_out",
            bytes: 3.0 * F * n16,
            inner: 1,
            run: Box::new(move || kernel::map2_out(&a, &b, &out, &kernel::Add, &c)),
        });
    }

    let acl = tensor(&[32, 64, 56, 56], 3)?.to(MemoryFormat::ChannelsLast)?;
    let bb = tensor(&[64, 56, 56], 4)?;
    let ncl = (32 * 64 * 56 * 56) as f64;
    let bcl = (2.0 * ncl + 64.0 * 56.0 * 56.0) * F;
    {
        let (a, b, c) = (acl.clone(), bb.clone(), cfg.clone());
        v.push(Scenario {
            name: "add_cl_bcast_6M",
            bytes: bcl,
            inner: 1,
            run: Box::new(move || {
                black_box(kernel::map2(&a, &b, &kernel::Add, &c)?);
                Ok(())
            }),
        });
    }
    {
        let out = kernel::map2(&acl, &bb, &kernel::Add, &cfg)?; // channels-last output
        let c = cfg.clone();
        v.push(Scenario {
            name: "add_cl_bcast_6M_out",
            bytes: bcl,
            inner: 1,
            run: Box::new(move || kernel::map2_out(&acl, &bb, &out, &kernel::Add, &c)),
        });
    }

    let t = tensor(&[4096, 4096], 5)?.transpose(0, 1)?;
    {
        let t = t.clone();
        v.push(Scenario {
            name: "copy_transpose_16M",
            bytes: 2.0 * F * n16,
            inner: 1,
            run: Box::new(move || {
                black_box(t.contiguous(MemoryFormat::Contiguous)?);
                Ok(())
            }),
        });
    }
    {
        let out = Tensor::<f32>::zeros(&[4096, 4096])?;
        let c = cfg.clone();
        v.push(Scenario {
            name: "copy_transpose_16M_out",
            bytes: 2.0 * F * n16,
            inner: 1,
            run: Box::new(move || kernel::copy_into(&out, &t, &c)),
        });
    }

    {
        let (x, bias, c) = (tensor(&[65536, 256], 6)?, tensor(&[256], 7)?, cfg.clone());
        v.push(Scenario {
            name: "add_bias_16M",
            bytes: (2.0 * n16 + 256.0) * F,
            inner: 1,
            run: Box::new(move || {
                black_box(kernel::map2(&x, &bias, &kernel::Add, &c)?);
                Ok(())
            }),
        });
    }
    {
        let x = tensor(&[8, 3, 224, 224], 8)?;
        v.push(Scenario {
            name: "to_channels_last_1M",
            bytes: 2.0 * F * (8.0 * 3.0 * 224.0 * 224.0),
            inner: 1,
            run: Box::new(move || {
                black_box(x.to(MemoryFormat::ChannelsLast)?);
                Ok(())
            }),
        });
    }
    {
        let (x, y) = (tensor(&[2, 3, 4, 5], 9)?, tensor(&[3, 4, 5], 10)?);
        v.push(Scenario {
            name: "add_small_dispatch",
            bytes: 3.0 * F * 120.0,
            inner: 2000,
            run: Box::new(move || {
                for _ in 0..2000 {
                    black_box(kernel::add(black_box(&x), black_box(&y))?);
                }
                Ok(())
            }),
        });
    }
    {
        // Ahead-of-time dispatch, no kernel: bind c, h, w from the seed spec's concrete
        // layouts, run the compiled guards, instantiate the cached plan.
        let mut seed = symstride::aot::SeedDispatch::new()?;
        v.push(Scenario {
            name: "dispatch_cached_4d",
            bytes: 0.0,
            inner: 20_000,
            run: Box::new(move || {
                for _ in 0..20_000 {
                    black_box(seed.run()?);
                }
                Ok(())
            }),
        });
        v.push(Scenario {
            name: "compile_seed_spec",
            bytes: 0.0,
            inner: 10,
            run: Box::new(|| {
                for _ in 0..10 {
                    black_box(symstride::aot::compile_seed_spec()?);
                }
                Ok(())
            }),
        });
    }
    {
        // The cover's size is part of the result: printed once (stderr, so JSON stays clean).
        let a = symstride::aot::compile_cover_10_symbols()?;
        let c = a.coverage.as_ref().is_some_and(|c| c.complete);
        eprintln!(
            "cover_10_symbols: {} specialization{}, complete: {c} (domain: sizes >= 1)",
            a.specializations.len(),
            if a.specializations.len() == 1 {
                ""
            } else {
                "s"
            }
        );
        v.push(Scenario {
            name: "cover_10_symbols",
            bytes: 0.0,
            inner: 1,
            run: Box::new(|| {
                black_box(symstride::aot::compile_cover_10_symbols()?);
                Ok(())
            }),
        });
    }
    {
        let src = random(1 << 24, 11);
        let mut dst = vec![0f32; 1 << 24];
        v.push(Scenario {
            name: "memcpy_64MiB",
            bytes: 2.0 * F * n16,
            inner: 1,
            run: Box::new(move || {
                dst.copy_from_slice(black_box(&src));
                black_box(&dst);
                Ok(())
            }),
        });
    }
    Ok(v)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    xs[xs.len() / 2]
}

/// (name, median, min, bytes) per scenario.
fn measure(args: &Args) -> Result<Vec<(&'static str, f64, f64, f64)>> {
    let reps = args.reps;
    let mut cfg = ExecConfig::default();
    if let Some(t) = args.tile {
        cfg = cfg.with_tile(t);
    }
    let mut out = Vec::new();
    for mut s in scenarios(cfg)? {
        if let Some(f) = &args.only {
            if !s.name.contains(f.as_str()) {
                continue;
            }
        }
        (s.run)()?; // warm-up (page faults, pool fill)
        let mut times = Vec::with_capacity(reps);
        for _ in 0..reps.max(1) {
            let t0 = Instant::now();
            (s.run)()?;
            times.push(t0.elapsed().as_secs_f64() / s.inner as f64);
        }
        let min = times.iter().copied().fold(f64::INFINITY, f64::min);
        out.push((s.name, median(times), min, s.bytes));
    }
    if let (true, Some(f)) = (out.is_empty(), &args.only) {
        return Err(Error::invalid(format!(
            "no benchmark scenario matches `--only {f}`"
        )));
    }
    Ok(out)
}

/// Runs the subcommand.
pub fn run(args: Args) -> Result<ExitCode> {
    let results = match args.threads {
        Some(n) => rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .map_err(|e| Error::invalid(format!("cannot build a {n}-thread pool: {e}")))?
            .install(|| measure(&args))?,
        None => measure(&args)?,
    };
    if args.json {
        let map: serde_json::Map<String, serde_json::Value> = results
            .iter()
            .map(|(n, t, _, _)| (n.to_string(), serde_json::json!(t)))
            .collect();
        println!("{}", serde_json::json!({ "median_s": map }));
        return Ok(ExitCode::SUCCESS);
    }
    let memcpy_gbs = results
        .iter()
        .find(|r| r.0 == "memcpy_64MiB")
        .map(|r| r.3 / r.1 / 1e9)
        .unwrap_or(f64::NAN);
    let threads = args.threads.unwrap_or_else(rayon::current_num_threads);
    println!(
        "symstride bench: f32, {threads} thread(s), median of {} runs",
        args.reps
    );
    println!(
        "{:<24} {:>12} {:>10} {:>12} {:>12}",
        "scenario", "median", "GB/s", "vs memcpy", "min"
    );
    let fmt_time = |t: f64| {
        if t < 1e-3 {
            format!("{:.2} us", t * 1e6)
        } else {
            format!("{:.3} ms", t * 1e3)
        }
    };
    for &(name, t, min, bytes) in &results {
        if bytes == 0.0 {
            // Scenarios that move no tensor data (dispatch, compile): time only.
            println!(
                "{name:<24} {:>12} {:>10} {:>12} {:>12}",
                fmt_time(t),
                "-",
                "-",
                fmt_time(min)
            );
            continue;
        }
        let gbs = bytes / t / 1e9;
        println!(
            "{name:<24} {:>12} {gbs:>10.2} {:>11.2}x {:>12}",
            fmt_time(t),
            gbs / memcpy_gbs,
            fmt_time(min)
        );
    }
    Ok(ExitCode::SUCCESS)
}
