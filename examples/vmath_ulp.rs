//! Exhaustive f32 accuracy sweep and loop timing of the vectorizable math in `kernel::vmath`
//! (`log`, `log1p`, `expm1`, `tanh`, `erf`, `sin`, `cos`; `exp` has `examples/exp_ulp.rs`).
//!
//! `vmath` is crate-private, so this program compiles its source directly (`#[path]`); the
//! functions are the crate's, bit for bit.
//!
//! * `cargo run --release --example vmath_ulp -- sweep [NAME…]`: every one of the 2^32 bit
//!   patterns against the f64 libm function of the same input (for `erf`, the double-double
//!   reference of the unit tests), one thread; prints the largest error in ulps of the
//!   correctly rounded result, where, how many results are not correctly rounded, and how
//!   many NaN/non-NaN disagreements there are (`sin`/`cos` also over `|x| <= 1e9`, their
//!   documented domain). About a minute per function.
//! * `cargo run --release --example vmath_ulp -- time`: `y[i] = f(x[i])` over 16M f32,
//!   single thread, against the libm loop (`f32::ln` etc.); best of 5.
#![allow(dead_code, missing_docs)]

#[path = "../src/kernel/vmath/erf_ref.rs"]
mod erf_ref;
#[path = "../src/kernel/vmath/mod.rs"]
mod vmath;

use std::time::Instant;

/// Error of `got` against the exact `want`, in ulps of `want` rounded to f32.
fn ulps(got: f32, want: f64) -> f64 {
    let r = want as f32;
    if got.to_bits() == r.to_bits() {
        return 0.0;
    }
    if r.is_infinite() || got.is_infinite() {
        return f64::INFINITY;
    }
    let ulp = (f32::from_bits((r.to_bits() & 0x7fff_ffff) + 1) - r.abs()) as f64;
    ((got as f64) - want).abs() / ulp
}

type Fun = (&'static str, fn(f32) -> f32, fn(f64) -> f64);

fn funs() -> Vec<Fun> {
    vec![
        ("log", vmath::log::<f32>, f64::ln),
        ("log1p", vmath::log1p::<f32>, f64::ln_1p),
        ("expm1", vmath::expm1::<f32>, f64::exp_m1),
        ("tanh", vmath::tanh::<f32>, f64::tanh),
        ("erf", vmath::erf::<f32>, |x| erf_ref::erf_dd(x).0),
        ("sin", vmath::sin::<f32>, f64::sin),
        ("cos", vmath::cos::<f32>, f64::cos),
        ("exp", vmath::exp::<f32>, f64::exp),
    ]
}

fn sweep(name: &str, f: fn(f32) -> f32, r: fn(f64) -> f64) {
    let (mut worst, mut at, mut inexact, mut nan_bad) = (0.0f64, 0u32, 0u64, 0u64);
    let (mut dworst, mut dat) = (0.0f64, 0u32);
    for b in 0..=u32::MAX {
        let x = f32::from_bits(b);
        let y = f(x);
        let want = r(x as f64);
        if want.is_nan() || y.is_nan() {
            nan_bad += u64::from(want.is_nan() != y.is_nan());
            continue;
        }
        if y.to_bits() == (want as f32).to_bits() {
            continue;
        }
        inexact += 1;
        let e = ulps(y, want);
        if e > worst {
            (worst, at) = (e, b);
        }
        if x.abs() <= 1e9 && e > dworst {
            (dworst, dat) = (e, b);
        }
    }
    println!(
        "{name:6} max {worst:.3} ulp at x = {:e} ({at:#010x}); |x| <= 1e9: {dworst:.3} at {:e}; \
         {inexact} not correctly rounded; {nan_bad} NaN disagreements",
        f32::from_bits(at),
        f32::from_bits(dat)
    );
}

/// Best of 5 of `y[i] = g(x[i])` in ms; generic, so `g` is inlined into the loop.
#[inline(never)]
fn bench<G: Fn(f32) -> f32>(x: &[f32], y: &mut [f32], g: G) -> f64 {
    (0..5)
        .map(|_| {
            let t = Instant::now();
            for (o, &v) in y.iter_mut().zip(x) {
                *o = g(v);
            }
            std::hint::black_box(&mut *y);
            t.elapsed().as_secs_f64() * 1e3
        })
        .fold(f64::INFINITY, f64::min)
}

/// 16M inputs in `[lo, hi)` (a fixed xorshift sequence).
fn inputs(lo: f32, hi: f32) -> Vec<f32> {
    let mut s = 0x1234_5678u32;
    (0..1 << 24)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            lo + (hi - lo) * (s as f32 / u32::MAX as f32)
        })
        .collect()
}

fn time() {
    let mut y = vec![0.0f32; 1 << 24];
    macro_rules! row {
        ($name:literal, $lo:expr, $hi:expr, $ours:path, $libm:expr) => {{
            let x = inputs($lo, $hi);
            let ours = bench(&x, &mut y, |v| $ours(v));
            let theirs = bench(&x, &mut y, $libm);
            println!(
                "| {} | [{}, {}] | {ours:.1} | {theirs:.1} | {:.1}x |",
                $name,
                $lo,
                $hi,
                theirs / ours
            );
        }};
    }
    println!("| function | inputs | vmath ms | libm ms | speed-up |");
    println!("|---|---|---|---|---|");
    row!("exp", -10.0, 10.0, vmath::exp, f32::exp);
    row!("log", 1e-3, 1e3, vmath::log, f32::ln);
    row!("log1p", -0.9, 10.0, vmath::log1p, f32::ln_1p);
    row!("expm1", -10.0, 10.0, vmath::expm1, f32::exp_m1);
    row!("tanh", -10.0, 10.0, vmath::tanh, f32::tanh);
    // No f32 erf in std: the reference is the f64 series, not a libm loop.
    row!(
        "erf (vs f64 reference)",
        -5.0,
        5.0,
        vmath::erf,
        |v: f32| erf_ref::erf_dd(v as f64).0 as f32
    );
    row!("sin", -100.0, 100.0, vmath::sin, f32::sin);
    row!("cos", -100.0, 100.0, vmath::cos, f32::cos);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("time") => time(),
        Some("sweep") => {
            for (name, f, r) in funs() {
                if args.len() == 1 || args[1..].iter().any(|a| a == name) {
                    sweep(name, f, r);
                }
            }
        }
        _ => eprintln!("usage: vmath_ulp sweep [NAME…] | time"),
    }
}
