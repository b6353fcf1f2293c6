//! `exp` (issue 15: softmax was bound by scalar `expf`): the algorithm and its measured
//! accuracy are in the parent module's docs.

use std::ops::{Add, Mul, Sub};

/// The per-type constants and bit operations of [`exp`].
pub trait ExpFloat:
    'static + Copy + PartialOrd + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self>
{
    /// `1`
    const ONE: Self;
    /// `1/2`
    const HALF: Self;
    /// The clamp bound `L`: `e^L` overflows, `e^-L` rounds to 0.
    const LIMIT: Self;
    /// `-LIMIT`
    const NEG_LIMIT: Self;
    /// `log2(e)` rounded.
    const LOG2E: Self;
    /// The leading bits of `ln 2` (`n·LN2_HI` exact for every `n` of the clamped range).
    const LN2_HI: Self;
    /// `ln 2 - LN2_HI` rounded.
    const LN2_LO: Self;
    /// `1.5 · 2^p` (`p` the significand bits): adding it rounds to an integer.
    const MAGIC: Self;
    /// `P(r)`'s coefficients `1/k!`, highest `k` first, down to `1/2!`.
    const POLY: &'static [Self];
    /// `2^m` for `t = m + MAGIC` (`m` an integer of the exponent range): the exponent field
    /// built from `t`'s low bits.
    fn pow2_of_magic(t: Self) -> Self;
}

impl ExpFloat for f32 {
    const ONE: f32 = 1.0;
    const HALF: f32 = 0.5;
    const LIMIT: f32 = 104.0;
    const NEG_LIMIT: f32 = -104.0;
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    // 0x1.62e4p-1 (16 significant bits) and ln 2 minus it.
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    const MAGIC: f32 = 12_582_912.0;
    // Near-minimax for e^r on |r| <= 0.3467 (weighted least squares with Lawson's
    // reweighting, coefficients rounded to f32, error evaluated in 120-bit arithmetic):
    // relative error 1.3e-10, against 7.3e-9 for the Taylor coefficients 1/k! of the same
    // degree, which left the exhaustive sweep at 1.02 ulp instead of 0.95.
    const POLY: &'static [f32] = &[
        1.973_342_6e-4,
        1.393_524_7e-3,
        8.333_586e-3,
        4.166_646_3e-2,
        0.166_666_66,
        0.5,
    ];
    #[inline(always)]
    fn pow2_of_magic(t: f32) -> f32 {
        // The low 23 bits of `t` are `2^22 + m`; adding the bias 127 and shifting the 9 low
        // bits to the top leaves the exponent field `m + 127` (in 1..=254 for |m| <= 76)
        // and a zero sign bit.
        f32::from_bits(t.to_bits().wrapping_add(127) << 23)
    }
}

impl ExpFloat for f64 {
    const ONE: f64 = 1.0;
    const HALF: f64 = 0.5;
    const LIMIT: f64 = 746.0;
    const NEG_LIMIT: f64 = -746.0;
    const LOG2E: f64 = std::f64::consts::LOG2_E;
    // 0x1.62e42fefa38p-1 (42 significant bits) and ln 2 minus it.
    const LN2_HI: f64 = 0.693_147_180_559_890_3;
    const LN2_LO: f64 = 5.497_923_018_708_371e-14;
    const MAGIC: f64 = 6_755_399_441_055_744.0;
    const POLY: &'static [f64] = &[
        1.0 / 6_227_020_800.0,
        1.0 / 479_001_600.0,
        1.0 / 39_916_800.0,
        1.0 / 3_628_800.0,
        1.0 / 362_880.0,
        1.0 / 40_320.0,
        1.0 / 5040.0,
        1.0 / 720.0,
        1.0 / 120.0,
        1.0 / 24.0,
        1.0 / 6.0,
        0.5,
    ];
    #[inline(always)]
    fn pow2_of_magic(t: f64) -> f64 {
        // As for f32: the low 12 bits of `t`'s bits plus 1023 are the exponent field
        // `m + 1023` (in 1..=2046 for |m| <= 540), shifted to the top.
        f64::from_bits(t.to_bits().wrapping_add(1023) << 52)
    }
}

/// `e^x` within about 1 ulp (see the module docs), `inf` above the overflow threshold, `0`
/// below the underflow threshold, NaN for NaN, exact for `±inf`; branch-free, so loops over
/// it vectorize.
#[inline(always)]
pub fn exp<T: ExpFloat>(x: T) -> T {
    // NaN fails both compares and passes through.
    let x = if x > T::LIMIT {
        T::LIMIT
    } else if x < T::NEG_LIMIT {
        T::NEG_LIMIT
    } else {
        x
    };
    let t = x * T::LOG2E + T::MAGIC;
    let n = t - T::MAGIC;
    let r = (x - n * T::LN2_HI) - n * T::LN2_LO;
    let mut p = T::POLY[0];
    for &c in &T::POLY[1..] {
        p = p * r + c;
    }
    let y = T::ONE + (r + r * r * p);
    // 2^n = 2^k · 2^(n - k), k = round(n / 2): both factors are normal numbers.
    let tk = n * T::HALF + T::MAGIC;
    let k = tk - T::MAGIC;
    let tj = (n - k) + T::MAGIC;
    y * T::pow2_of_magic(tk) * T::pow2_of_magic(tj)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Error of `got` against the exact value `want` (an f64, or better), in ulps of the
    /// correctly rounded f32 result.
    fn ulps_f32(got: f32, want: f64) -> f64 {
        let r = want as f32;
        if got == r {
            return 0.0;
        }
        // One ulp at `r`: the gap to the next float away from zero (denormal spacing for
        // tiny results).
        let ulp = (f32::from_bits(r.to_bits() + 1) - r) as f64;
        ((got as f64) - want).abs() / ulp
    }

    #[test]
    fn special_values_match_libm() {
        for (x, want) in [
            (0.0f32, 1.0f32),
            (-0.0, 1.0),
            (f32::INFINITY, f32::INFINITY),
            (f32::NEG_INFINITY, 0.0),
            (88.72284, f32::INFINITY),
            (89.0, f32::INFINITY),
            (1e30, f32::INFINITY),
            (f32::MAX, f32::INFINITY),
            (-104.0, 0.0),
            (-1e30, 0.0),
            (f32::MIN, 0.0),
        ] {
            assert_eq!(exp(x), want, "exp({x})");
            assert_eq!(x.exp(), want, "libm exp({x})");
        }
        assert!(exp(88.72283f32).is_finite());
        assert!(exp(-103.0f32) > 0.0);
        assert!(exp(f32::NAN).is_nan());
        assert!(exp(-f32::NAN).is_nan());
        for (x, want) in [
            (0.0f64, 1.0f64),
            (f64::INFINITY, f64::INFINITY),
            (f64::NEG_INFINITY, 0.0),
            (709.79, f64::INFINITY),
            (1e300, f64::INFINITY),
            (-746.0, 0.0),
            (-1e300, 0.0),
        ] {
            assert_eq!(exp(x), want, "exp({x})");
            assert_eq!(x.exp(), want, "libm exp({x})");
        }
        assert!(exp(709.78f64).is_finite());
        assert!(exp(-744.0f64) > 0.0);
        assert!(exp(f64::NAN).is_nan());
    }

    /// A dense sample of the f32 range where `e^x` is finite and non-zero (every 97th bit
    /// pattern, plus neighbourhoods of the thresholds), against `f64::exp`: at most 1 ulp.
    #[test]
    fn f32_within_one_ulp_of_f64_exp() {
        let mut worst = 0.0f64;
        let mut check = |x: f32| {
            let e = ulps_f32(exp(x), (x as f64).exp());
            assert!(e <= 1.0, "exp({x:e}) = {:e}, {e} ulp", exp(x));
            worst = worst.max(e);
        };
        let top = 89.0f32.to_bits();
        let bottom = 104.0f32.to_bits();
        let mut b = 0u32;
        while b < top.max(bottom) {
            if b < top {
                check(f32::from_bits(b));
            }
            if b < bottom {
                check(-f32::from_bits(b));
            }
            b += 97;
        }
        for edge in [88.72283f32, -87.33655, -103.27893, -103.97208, 0.346_573_6] {
            let mut v = edge;
            for _ in 0..2000 {
                check(v);
                check(-v);
                v = f32::from_bits(v.to_bits() + 1);
            }
        }
        assert!(worst > 0.0, "the sample must contain inexact results");
    }

    /// f64 against libm's `exp` (itself within 1 ulp) over a dense sample of the finite,
    /// non-zero range: at most 1 ulp apart (measured: 1), so at most 2 ulp from exact.
    #[test]
    fn f64_within_one_ulp_of_libm() {
        let mut x = -745.0f64;
        let mut worst = 0.0f64;
        while x < 709.7 {
            let (got, want) = (exp(x), x.exp());
            if want.is_normal() {
                let ulp = f64::from_bits(want.to_bits() + 1) - want;
                let e = (got - want).abs() / ulp;
                assert!(e <= 1.0, "exp({x:e}) = {got:e} vs {want:e}: {e} ulp");
                worst = worst.max(e);
            } else {
                assert!((got - want).abs() <= 2.0 * f64::from_bits(1), "exp({x:e})");
            }
            x += 0.000_731_1;
        }
        assert!(worst > 0.0);
    }
}
