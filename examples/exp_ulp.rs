//! Exhaustive accuracy sweep of the vectorized f32 `exp` (`FloatElement::exp`, the kernels'
//! and the fused evaluator's `exp`): every one of the 2^32 bit patterns, in chunks of 2^22
//! through the tensor kernel `kernel::exp` (the AVX2 streamed path where the CPU has it),
//! against `f64::exp` of the same input. Prints the largest error in ulps of the correctly
//! rounded result, how many results are not correctly rounded, and whether NaN stayed NaN
//! and the kernel agreed bit for bit with the scalar function. Not a test: about 2 minutes
//! of CPU.
//!
//! `cargo run --release --example exp_ulp`
use rayon::prelude::*;
use symstride::kernel;
use symstride::tensor::{FloatElement, Tensor};

/// Error of `got` against the exact `want`, in ulps of `want` rounded to f32.
fn ulps(got: f32, want: f64) -> f64 {
    let r = want as f32;
    if got.to_bits() == r.to_bits() {
        return 0.0;
    }
    if r.is_infinite() || got.is_infinite() {
        return f64::INFINITY;
    }
    let ulp = (f32::from_bits(r.to_bits() + 1) - r) as f64;
    ((got as f64) - want).abs() / ulp
}

fn main() -> symstride::Result<()> {
    const CHUNK: u64 = 1 << 22;
    let (mut worst, mut at, mut inexact, mut bad) = (0.0f64, 0u32, 0u64, 0u64);
    for c in 0..(1u64 << 32) / CHUNK {
        let xs: Vec<f32> = (0..CHUNK)
            .map(|i| f32::from_bits((c * CHUNK + i) as u32))
            .collect();
        let ys = kernel::exp(&Tensor::from_vec(xs.clone(), &[CHUNK as i64])?)?.to_vec()?;
        let (w, wx, n, b) = xs
            .par_iter()
            .zip(&ys)
            .map(|(&x, &y)| {
                if x.is_nan() {
                    return (0.0, 0, 0, u64::from(!y.is_nan()));
                }
                let want = (x as f64).exp();
                let mismatch = u64::from(FloatElement::exp(x).to_bits() != y.to_bits());
                let inexact = u64::from(y.to_bits() != (want as f32).to_bits());
                (ulps(y, want), x.to_bits(), inexact, mismatch)
            })
            .reduce(
                || (0.0, 0, 0, 0),
                |a, b| {
                    let m = if a.0 >= b.0 { (a.0, a.1) } else { (b.0, b.1) };
                    (m.0, m.1, a.2 + b.2, a.3 + b.3)
                },
            );
        if w > worst {
            (worst, at) = (w, wx);
        }
        inexact += n;
        bad += b;
    }
    println!(
        "max error {worst:.4} ulp at x = {:e} ({at:#010x}); {inexact} of 2^32 results not \
         correctly rounded; {bad} NaN lost or kernel != scalar",
        f32::from_bits(at)
    );
    Ok(())
}
