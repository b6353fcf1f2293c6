//! `sin` and `cos`: Cody–Waite reduction by `π/2` in f64, fdlibm's kernels on `[-π/4, π/4]`.
//!
//! **Reduction** (both types, in f64): `n = round(x·2/π)` (magic-constant add), and
//! `r = x - n·π/2` with `π/2 = C1 + C2 + C3 + C4`, `C1..C3` of 23 significant bits each:
//! for `|n| < 2^30` (`|x| <= 1e9` with margin) `n·C1`, `n·C2`, `n·C3` are exact, `x - n·C1`
//! is exact (Sterbenz) and so is the next subtraction; the third is an exact two-sum, so
//! `r = hi + lo` carries only the rounding of `n·C4` (`< 2^-92` absolute), far below the
//! smallest `|r|` a double of that range can leave. f32 arguments are widened to f64 for
//! this (one conversion each way; no 16-bit Cody–Waite pieces, and the f32 bound holds to
//! `1e9` as well) and `r` comes back as an f32 pair.
//!
//! **Kernels**: `sin(hi + lo) = hi - ((z·(lo/2 - v·S) - lo) - v·S1)` and
//! `cos(hi + lo) = w + (((1 - w) - z/2) + (z·z·C(z) - hi·lo))`, `w = 1 - z/2`, `z = hi²`,
//! `v = z·hi` (fdlibm's `__kernel_sin`/`__kernel_cos`; musl's `__sindf`/`__cosdf`
//! coefficients rounded to f32 for f32). Both kernels run on every lane and the quadrant
//! `n mod 4` (the low bits of the magic-constant sum) selects one and the sign.
//!
//! **Beyond `|x| = 1e9`** the products `n·Ci` round and the error grows with `|x|`
//! (measured in the module docs' tests only for finiteness); above `2^50` `r` is clamped
//! to `[-π/4, π/4]`, so the result is finite and in `[-1, 1]` but no approximation of
//! `sin x` (PyTorch's Sleef versions use Payne–Hanek there). `sin(±inf) = cos(±inf) = NaN`
//! (`inf - inf` in the reduction), NaN gives NaN, `sin(-0) = -0`.

use super::{horner, MathFloat};

/// The per-type kernels' coefficients and the reduction of [`sin`] and [`cos`].
pub trait TrigFloat: MathFloat {
    /// `S1` of the sine kernel (`≈ -1/6`).
    const SIN_S1: Self;
    /// The sine kernel's `S2..` coefficients, highest first.
    const SIN_POLY: &'static [Self];
    /// The cosine kernel's `C1..` coefficients (`≈ 1/24, -1/720, …`), highest first.
    const COS_POLY: &'static [Self];
    /// `(hi, lo, q)`: `x - n·π/2 = hi + lo` (`|lo| <= ulp(hi)/2`, `|hi| <= π/4` in the
    /// domain) and `q ≡ n (mod 4)` in the low two bits.
    fn reduce_half_pi(x: Self) -> (Self, Self, u32);
}

/// The f64 reduction both types share: `(hi, lo, bits of n + MAGIC)`.
#[inline(always)]
fn reduce_f64(x: f64) -> (f64, f64, u64) {
    const MAGIC: f64 = 6_755_399_441_055_744.0;
    const C1: f64 = 1.570_796_251_296_997;
    const C2: f64 = 7.549_789_415_861_596e-8;
    const C3: f64 = 5.390_302_529_957_765e-15;
    const C4: f64 = 3.282_003_542_873_500_5e-22;
    let t = x * std::f64::consts::FRAC_2_PI + MAGIC;
    let n = t - MAGIC;
    let a = (x - n * C1) - n * C2;
    let w = n * C3;
    // Two-sum of `a - w`.
    let hi = a - w;
    let v = hi - a;
    let lo = ((a - (hi - v)) - (w + v)) - n * C4;
    // Far out of the domain `n` and the products are meaningless: keep `r` bounded (NaN,
    // from `±inf`, passes the compares).
    let big = f64::abs(x) > 1.125_899_906_842_624e15;
    let hi = if big && hi > 0.785 { 0.785 } else { hi };
    let hi = if big && hi < -0.785 { -0.785 } else { hi };
    let lo = if big { 0.0 } else { lo };
    (hi, lo, t.to_bits())
}

impl TrigFloat for f32 {
    const SIN_S1: f32 = -0.166_666_67;
    const SIN_POLY: &'static [f32] = &[2.718_311_4e-6, -1.983_933_5e-4, 8.333_329e-3];
    const COS_POLY: &'static [f32] = &[2.439_044_9e-5, -1.388_676_3e-3, 4.166_662_3e-2];
    #[inline(always)]
    fn reduce_half_pi(x: f32) -> (f32, f32, u32) {
        let (hi, lo, t) = reduce_f64(x as f64);
        let h = hi as f32;
        let l = ((hi - h as f64) + lo) as f32;
        (h, l, t as u32)
    }
}

impl TrigFloat for f64 {
    const SIN_S1: f64 = -1.666_666_666_666_663_2e-1;
    const SIN_POLY: &'static [f64] = &[
        1.589_690_995_211_55e-10,
        -2.505_076_025_340_686_3e-8,
        2.755_731_370_707_006_8e-6,
        -1.984_126_982_985_795e-4,
        8.333_333_333_322_49e-3,
    ];
    const COS_POLY: &'static [f64] = &[
        -1.135_964_755_778_819_5e-11,
        2.087_572_321_298_175e-9,
        -2.755_731_435_139_066_3e-7,
        2.480_158_728_947_673e-5,
        -1.388_888_888_887_411e-3,
        4.166_666_666_666_660_2e-2,
    ];
    #[inline(always)]
    fn reduce_half_pi(x: f64) -> (f64, f64, u32) {
        let (hi, lo, t) = reduce_f64(x);
        (hi, lo, t as u32)
    }
}

/// `sin(x + y)` for `|x| <= π/4`, `|y| <= ulp(x)/2`.
#[inline(always)]
fn sin_kernel<T: TrigFloat>(x: T, y: T) -> T {
    let z = x * x;
    let v = z * x;
    let r = horner(z, T::SIN_POLY);
    x - ((z * (T::HALF * y - v * r) - y) - v * T::SIN_S1)
}

/// `cos(x + y)` for `|x| <= π/4`, `|y| <= ulp(x)/2`.
#[inline(always)]
fn cos_kernel<T: TrigFloat>(x: T, y: T) -> T {
    let z = x * x;
    let r = z * horner(z, T::COS_POLY);
    let hz = T::HALF * z;
    let w = T::ONE - hz;
    w + (((T::ONE - w) - hz) + (z * r - x * y))
}

/// `sin(r + q·π/2)` from the two kernels.
#[inline(always)]
fn quadrant<T: TrigFloat>(hi: T, lo: T, q: u32) -> T {
    let s = sin_kernel(hi, lo);
    let c = cos_kernel(hi, lo);
    let y = if q & 1 == 0 { s } else { c };
    if q & 2 == 0 {
        y
    } else {
        -y
    }
}

/// The sine: odd (`sin(-0) = -0`), NaN for `±inf` and NaN. Within the module docs' bound
/// for `|x| <= 1e9` (f32 and f64); beyond, finite and in `[-1, 1]` but increasingly
/// inaccurate (see the [`trig`](self) notes: no Payne–Hanek reduction). Branch-free.
#[inline(always)]
pub fn sin<T: TrigFloat>(x: T) -> T {
    let (hi, lo, q) = T::reduce_half_pi(x);
    let y = quadrant(hi, lo, q);
    if x == T::ZERO {
        x
    } else {
        y
    }
}

/// The cosine: NaN for `±inf` and NaN; domain and bound as [`sin`]. Branch-free.
#[inline(always)]
pub fn cos<T: TrigFloat>(x: T) -> T {
    let (hi, lo, q) = T::reduce_half_pi(x);
    quadrant(hi, lo, q.wrapping_add(1))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{check, f32_sample, f64_sample, ulps_f32, ulps_f64};
    use super::*;

    #[test]
    fn special_values() {
        for v in [0.0f32, -0.0] {
            assert_eq!(sin(v).to_bits(), v.to_bits());
            assert_eq!(sin(v as f64).to_bits(), (v as f64).to_bits());
            assert_eq!(cos(v), 1.0);
            assert_eq!(cos(v as f64), 1.0);
        }
        for v in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -f32::NAN] {
            assert!(sin(v).is_nan() && cos(v).is_nan(), "{v}");
            assert!(sin(v as f64).is_nan() && cos(v as f64).is_nan(), "{v}");
        }
        assert_eq!(sin(1e-30f32), 1e-30);
        assert_eq!(sin(f32::from_bits(1)), f32::from_bits(1));
        assert_eq!(sin(-1e-300f64), -1e-300);
        assert_eq!(cos(1e-30f64), 1.0);
    }

    /// Beyond the documented domain only finiteness is asserted.
    #[test]
    fn beyond_domain_finite() {
        for x in f32_sample(f32::MAX, 1_000_003).filter(|x| x.abs() > 1e9) {
            for y in [sin(x), cos(x)] {
                assert!(y.is_finite() && y.abs() <= 1.0 + 1e-6, "{x:e}: {y}");
            }
        }
        for x in f64_sample(1e9, f64::MAX, 100_000) {
            for y in [sin(x), cos(x)] {
                assert!(y.is_finite() && y.abs() <= 1.0 + 1e-12, "{x:e}: {y}");
            }
        }
    }

    #[test]
    fn f32_dense_sample() {
        let (mut ws, mut wc) = ((0.0, 0.0), (0.0, 0.0));
        for x in f32_sample(1e5, 97) {
            let e = ulps_f32(sin(x), (x as f64).sin());
            if e > ws.0 {
                ws = (e, x as f64);
            }
            let e = ulps_f32(cos(x), (x as f64).cos());
            if e > wc.0 {
                wc = (e, x as f64);
            }
        }
        check("f32 sin", ws, 1.0);
        check("f32 cos", wc, 1.0);
    }

    #[test]
    fn f64_dense_sample() {
        let (mut ws, mut wc) = ((0.0, 0.0), (0.0, 0.0));
        for x in f64_sample(1e-300, 1e9, 400_000).chain(f64_sample(0.5, 8.0, 400_000)) {
            let e = ulps_f64(sin(x), x.sin(), 0.0);
            if e > ws.0 {
                ws = (e, x);
            }
            let e = ulps_f64(cos(x), x.cos(), 0.0);
            if e > wc.0 {
                wc = (e, x);
            }
        }
        check("f64 sin", ws, 1.0);
        check("f64 cos", wc, 1.0);
    }
}
