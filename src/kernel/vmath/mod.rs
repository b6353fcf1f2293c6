//! Vectorizable float math for the elementwise kernels: `exp`, `log`, `log1p`, `expm1`,
//! `tanh`, `erf`, `sin`, `cos`, generic over f32 and f64.
//!
//! # Why hand-written
//! `f32::exp`, `f32::ln`, `f32::sin`, … are calls into libm per element: the compiler cannot
//! vectorize a loop around a call, so a loop of `y[i] = f(x[i])` runs one element per call
//! (issue 15: the fused softmax spent most of its time in `expf`). Every function here is
//! straight-line arithmetic with no branch, no table, no call and no loop whose trip count
//! depends on the value: float add/sub/mul/div, bit casts, integer add/and/shift and
//! compare-selects (`if x < c { a } else { b }` on values, which the compiler turns into
//! blends). A loop of `f(x[i])` therefore vectorizes: 4 f32 per SSE2 instruction in the
//! x86-64 baseline build, 8 in the AVX2 twins the kernels select at run time.
//!
//! # Shared design
//! * **No FMA**: every product is rounded before it is added, so the SSE2 and AVX2 builds
//!   give bit-identical results (an `fma` call in the baseline build would be a libm call).
//! * **Per-type constants in traits**: one generic algorithm per function, the constants,
//!   polynomial coefficients and bit manipulations of each type in a trait: [`ExpFloat`]
//!   (`exp`), [`MathFloat`] (shared: zero, infinities, NaN, `abs`, `copysign`, the f64-wide
//!   Cody–Waite reduction by `π/2`), [`LogFloat`] (`log`, `log1p`), [`Expm1Float`]
//!   (`expm1`, `tanh`), [`ErfFloat`] (`erf`), [`TrigFloat`] (`sin`, `cos`).
//! * **Special values by selects at the end**: the core formula runs on every lane, NaN,
//!   infinities, zeros and out-of-domain arguments are patched with compare-selects; NaN in
//!   gives NaN out everywhere.
//! * **Polynomials** are Horner with separate multiply and add ([`horner`]).
//!
//! # Functions and measured accuracy
//! Errors are in ulps of the correctly rounded result. f32: exhaustive over all 2^32 bit
//! patterns against the f64 libm function of the same input (`examples/vmath_ulp.rs`; for
//! `erf`, against an f64 series/continued-fraction reference in that program). f64: the
//! unit tests' dense samples against glibc's libm (itself within 1 ulp; the bound is the
//! distance to libm) or, for `erf`, against a double-double reference.
//!
//! | function | algorithm | f32 exhaustive max (at) | f64 sample max (vs) |
//! |---|---|---|---|
//! | [`exp`] | Cody–Waite by `ln 2`, minimax/Taylor polynomial, two-factor `2^n` | 0.952 (`-59.939537`) | 1 (libm) |
//! | [`log`] | `x = 2^k·m`, `m ∈ [√2/2, √2)`, `s = f/(2+f)` odd series (fdlibm) | 0.840 (`1.4133185`) | 1 (libm) |
//! | [`log1p`] | `log` of `u = 1+x` plus the rounding correction `(x-(u-1))/u` | 0.865 (`0.40803996`) | 1 (libm) |
//! | [`expm1`] | `exp`'s reduction, `2·(2^(n-1)·p + (2^(n-1) - 1/2))`, `p = e^r - 1` | 1.450 (`0.3478867`) | 2 (libm) |
//! | [`tanh`] | `-u/(u+2)`, `u = expm1(-2|x|)`, sign copied | 2.278 (`0.5484617`) | 3 (libm; glibc's `tanh` is itself up to 2 ulp) |
//! | [`erf`] | `|x| < c`: `x + x·E(x²)`; else `1 - exp(-x² + g(|x|))` | 1.337 (`0.9954118`) | 1.251 (double-double reference, at `0.97276`) |
//! | [`sin`] | Cody–Waite by `π/2` in f64 (4 pieces), `sin`/`cos` kernels on `[-π/4, π/4]` | 0.804 (`3406.2773`), `|x| <= 1e9` | 1 (libm), `|x| <= 1e9` |
//! | [`cos`] | as `sin`, quadrant shifted by one | 0.815 (`7.5279354e8`), `|x| <= 1e9` | 1 (libm), `|x| <= 1e9` |
//!
//! Beyond `|x| = 1e9` the exhaustive f32 sweep finds `sin`/`cos` results that are finite
//! and in `[-1, 1]` but unrelated to the true value (see the domain note below).
//!
//! The f64 samples (see each file's tests): 800k points spread geometrically over the
//! finite range and a dense part near 1. All functions: NaN in, NaN out (0 disagreements
//! with libm over the exhaustive f32 sweep). PyTorch's Sleef `_u10` functions are 1.0 ulp,
//! `_u35` 3.5 ulp; `tanh` is the weakest here (the `-u/(u+2)` quotient below `tanh = 1/2`).
//!
//! # `sin`/`cos` domain
//! See [`sin`]: the bounds above hold for `|x| <= 1e9` (both types; the reduction is exact
//! there). Beyond, the result is finite and in `[-1, 1]` but not an approximation of
//! `sin x` (no Payne–Hanek reduction); `sin(±inf) = cos(±inf) = NaN`.
//!
//! # `exp` in detail
//! `exp` (issue 15) is as Sleef's `expf_u10`/`exp_u10`, which PyTorch's vectorized `exp`
//! uses:
//! * **Clamp** `x` to `[-L, L]` (f32 `L = 104`, f64 `L = 746`) with compares, so NaN passes
//!   through unchanged (`f32::min`/`max` would drop it): `e^L` overflows and `e^-L` is below
//!   half the smallest denormal, so the final scaling alone yields `inf` and `0` exactly as
//!   libm, and `±inf` land there too.
//! * **Range reduction** `x = n·ln 2 + r`, `|r| ≲ ln 2 / 2`: `n = round(x·log2 e)` by the
//!   `1.5·2^p` magic-constant add (round to nearest even, no conversion instruction), and
//!   `r = (x - n·LN2_HI) - n·LN2_LO` (Cody–Waite): `LN2_HI` has few enough significant bits
//!   (f32: 16, f64: 42) that `n·LN2_HI` is exact for every `|n|` the clamp allows, and
//!   `x - n·LN2_HI` is exact too (Sterbenz), so `r` carries only the rounding of the small
//!   `n·LN2_LO` term.
//! * **Polynomial** `e^r = 1 + (r + r²·P(r))` with `P` the Taylor coefficients `1/k!`,
//!   `k = 2..=7` for f32 (truncation `r^8/8! ≤ 5.3e-9`, 0.05 ulp) and `k = 2..=13` for f64
//!   (`r^14/14! ≤ 4.2e-18`, 0.04 ulp), Horner's scheme with separate multiply and add: no
//!   FMA, so the SSE2 and AVX2 builds give bit-identical results (an `fma` call in the
//!   baseline build would be a libm call, the loop would not vectorize).
//! * **Scale** by `2^n` as `2^k · 2^(n-k)`, `k = round(n/2)`, each factor built from its
//!   exponent bits (integer add and shift of the magic-constant sum): one factor cannot reach
//!   the results near overflow (`n = 128` for f32) nor the denormals (`n < -126`), two always
//!   can, and only the second multiply rounds (denormal results are rounded once).
//!
//! Accuracy (measured):
//! * f32, exhaustive over all 2^32 bit patterns against `f64::exp` rounded (`examples/exp_ulp.rs`):
//!   **at most 0.952 ulp** (at `x = -59.939537`); 18.1M results (0.42%) differ from the
//!   correctly rounded one, none by more than one step; NaN in, NaN out; the scalar and the
//!   AVX2 loop agree bit for bit. With the Taylor coefficients the maximum was 1.02 ulp.
//!   (Sleef's `expf_u10`, PyTorch's, is specified at 1.0 ulp.) The unit tests assert
//!   `<= 1` ulp on a dense sample and the threshold neighbourhoods.
//! * f64, against glibc's `exp` on 20M points over `[-745.5, 710]`: at most 1 ulp apart.

// Fitted coefficients are written with the digits the fit printed (they round to the
// intended float).
#![allow(clippy::excessive_precision)]

use std::ops::{Div, Neg};

mod erf;
#[cfg(test)]
mod erf_ref;
mod exp;
mod expm1;
mod log;
mod trig;

// The elementwise ops these are for are not wired yet: the re-exports are the API.
pub use erf::erf;
pub use exp::{exp, ExpFloat};
pub use expm1::{expm1, tanh};
pub use log::{log, log1p};
pub use trig::{cos, sin};

/// Constants and bit operations shared by the functions past `exp`.
pub trait MathFloat: ExpFloat + Div<Output = Self> + Neg<Output = Self> {
    /// `0`
    const ZERO: Self;
    /// `2`
    const TWO: Self;
    /// `+inf`
    const INFINITY: Self;
    /// `-inf`
    const NEG_INFINITY: Self;
    /// A quiet NaN.
    const NAN: Self;
    /// `|x|` (clears the sign bit; NaN stays NaN).
    fn abs(x: Self) -> Self;
    /// `|mag|` with the sign bit of `sign`.
    fn copysign(mag: Self, sign: Self) -> Self;
}

impl MathFloat for f32 {
    const ZERO: f32 = 0.0;
    const TWO: f32 = 2.0;
    const INFINITY: f32 = f32::INFINITY;
    const NEG_INFINITY: f32 = f32::NEG_INFINITY;
    const NAN: f32 = f32::NAN;
    #[inline(always)]
    fn abs(x: f32) -> f32 {
        f32::from_bits(x.to_bits() & 0x7fff_ffff)
    }
    #[inline(always)]
    fn copysign(mag: f32, sign: f32) -> f32 {
        f32::from_bits((mag.to_bits() & 0x7fff_ffff) | (sign.to_bits() & 0x8000_0000))
    }
}

impl MathFloat for f64 {
    const ZERO: f64 = 0.0;
    const TWO: f64 = 2.0;
    const INFINITY: f64 = f64::INFINITY;
    const NEG_INFINITY: f64 = f64::NEG_INFINITY;
    const NAN: f64 = f64::NAN;
    #[inline(always)]
    fn abs(x: f64) -> f64 {
        f64::from_bits(x.to_bits() & 0x7fff_ffff_ffff_ffff)
    }
    #[inline(always)]
    fn copysign(mag: f64, sign: f64) -> f64 {
        f64::from_bits((mag.to_bits() & 0x7fff_ffff_ffff_ffff) | (sign.to_bits() & (1 << 63)))
    }
}

/// `c[0]·z^(n-1) + … + c[n-1]` by Horner's scheme (separate multiply and add; the slice is
/// a constant, so the loop unrolls).
#[inline(always)]
pub fn horner<T: ExpFloat>(z: T, c: &[T]) -> T {
    let mut p = c[0];
    for &k in &c[1..] {
        p = p * z + k;
    }
    p
}

/// Test helpers: errors in ulps and the samples every test sweeps.
#[cfg(test)]
pub(crate) mod testutil {
    /// Error of `got` against the exact value `want` (an f64), in ulps of `want` rounded to
    /// f32 (the gap to the next float away from zero; denormal spacing for tiny results).
    /// Infinite when one is infinite or NaN and the other is not the same.
    pub fn ulps_f32(got: f32, want: f64) -> f64 {
        let r = want as f32;
        if got.to_bits() == r.to_bits() || (got.is_nan() && want.is_nan()) {
            return 0.0;
        }
        if !got.is_finite() || !r.is_finite() {
            return f64::INFINITY;
        }
        let ulp = (f32::from_bits((r.to_bits() & 0x7fff_ffff) + 1) - r.abs()) as f64;
        ((got as f64) - want).abs() / ulp
    }

    /// Distance of `got` from the exact value `hi + lo` (`lo` a correction below `hi`'s
    /// ulp; 0 when `hi` is libm's result), in ulps of `hi`.
    pub fn ulps_f64(got: f64, hi: f64, lo: f64) -> f64 {
        if got.to_bits() == hi.to_bits() && lo == 0.0 || (got.is_nan() && hi.is_nan()) {
            return 0.0;
        }
        if !got.is_finite() || !hi.is_finite() {
            return if got == hi { 0.0 } else { f64::INFINITY };
        }
        let ulp = f64::from_bits((hi.to_bits() & (u64::MAX >> 1)) + 1) - hi.abs();
        ((got - hi) - lo).abs() / ulp
    }

    /// Every `step`-th f32 bit pattern of both signs with magnitude below `limit`
    /// (`step` odd, so all exponents and many low-bit patterns are hit).
    pub fn f32_sample(limit: f32, step: u32) -> impl Iterator<Item = f32> {
        (0..limit.to_bits() / step).flat_map(move |i| {
            let x = f32::from_bits(i * step);
            [x, -x]
        })
    }

    /// `n` points spread geometrically over `[lo, hi]` (`0 < lo < hi`), each also negated.
    pub fn f64_sample(lo: f64, hi: f64, n: usize) -> impl Iterator<Item = f64> {
        let r = (hi / lo).ln() / n as f64;
        (0..=n).flat_map(move |i| {
            // Perturb the low bits so the points are not all on one grid.
            let x = lo * (r * i as f64).exp();
            let x = f64::from_bits(x.to_bits() ^ (i as u64).wrapping_mul(0x9e37_79b9) & 0xffff);
            [x, -x]
        })
    }

    /// Asserts `worst <= bound` for `name`, reporting the argument.
    pub fn check(name: &str, worst: (f64, f64), bound: f64) {
        eprintln!("{name}: max {:.3} ulp at x = {:e}", worst.0, worst.1);
        assert!(
            worst.0 <= bound,
            "{name}: {} ulp at x = {:e} (bound {bound})",
            worst.0,
            worst.1
        );
        assert!(
            worst.0 > 0.0,
            "{name}: the sample must contain inexact results"
        );
    }
}
