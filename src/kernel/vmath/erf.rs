//! `erf`: a polynomial near 0, `1 - exp(…)` (through [`exp`](super::exp)) beyond.
//!
//! * `|x| < c` (`c = 1`): `erf x = x + x·E(x²)`, `E(s) = erf(√s)/√s - 1`
//!   fitted on `[0, c²]` (Chebyshev fit, 7 coefficients for f32, 13 for f64; fit error
//!   `2^-29.6` and `2^-62.7`). The `x + x·E` form keeps the leading term exact: the
//!   polynomial only carries the `≈ 0.128·x` correction.
//! * `|x| >= c`: `erf x = 1 - erfc x`, `erfc x = exp(g(x) - x²)`, `g(x) = ln erfc x + x²`
//!   (smooth, `≈ -ln(x√π)`) a polynomial in `x - m` on `[c, X]` (f32 `[1, 4]`, degree 6;
//!   f64 `[1, 6]`, degree 17), fitted by least squares weighted with `erfc x` and
//!   Lawson's reweighting: the error that matters is `erfc·δg` against 1, measured `2^-29.7`
//!   and `2^-57.0`. `|x|` is clamped to `[c, X]` for this branch: past `X` `erfc` is below
//!   half an ulp of 1 and the result is exactly 1. The roundings of `x²`, of `g - x²` and of
//!   `exp` reach the result scaled by `erfc x <= erfc c`.
//!
//! Both branches run on every lane and `|x| < c` selects; the sign is copied from `x`
//! (`erf(-0) = -0`, NaN stays NaN: it fails the compare, and the large branch keeps it).

use super::{exp, horner, MathFloat};

/// The per-type split point, clamp and polynomials of [`erf`].
pub trait ErfFloat: MathFloat {
    /// `c`: below, the small-argument polynomial.
    const ERF_SPLIT: Self;
    /// `X`: from here `erf` rounds to 1.
    const ERF_MAX: Self;
    /// `m`, the centre of `[c, X]`: `g` is a polynomial in `x - m`.
    const ERF_MID: Self;
    /// `E(s)`'s coefficients, highest first.
    const ERF_SMALL: &'static [Self];
    /// `g(m + t)`'s coefficients in `t`, highest first.
    const ERF_G: &'static [Self];
}

impl ErfFloat for f32 {
    const ERF_SPLIT: f32 = 1.0;
    const ERF_MAX: f32 = 4.0;
    const ERF_MID: f32 = 2.5;
    const ERF_SMALL: &'static [f32] = &[
        7.875_875e-5,
        -8.016_864_3e-4,
        5.189_087_2e-3,
        -2.685_421_1e-2,
        0.112_835_94,
        -0.376_126_26,
        0.128_379_17,
    ];
    const ERF_G: &'static [f32] = &[
        1.857_377_8e-4,
        -1.549_773e-4,
        2.460_170_1e-3,
        -1.071_521_3e-2,
        5.611_580_2e-2,
        -0.352_693_86,
        -1.556_817_9,
    ];
}

impl ErfFloat for f64 {
    const ERF_SPLIT: f64 = 1.0;
    const ERF_MAX: f64 = 6.0;
    const ERF_MID: f64 = 3.5;
    const ERF_SMALL: &'static [f64] = &[
        5.957176147748911e-11,
        -1.1372848856791674e-09,
        1.4659775274047436e-08,
        -1.6350312701054695e-07,
        1.6461000484121368e-06,
        -1.4925595266831182e-05,
        0.0001205533111164271,
        -0.000854832698083379,
        0.0052239776248180145,
        -0.026866170645076792,
        0.11283791670954879,
        -0.3761263890318375,
        0.1283791670955126,
    ];
    const ERF_G: &'static [f64] = &[
        -4.862961029986468e-12,
        -8.73952935210091e-11,
        -6.809534060635417e-10,
        -3.1420420971170376e-09,
        -9.08266959653395e-09,
        -1.673087957691657e-08,
        -1.7173512410541135e-08,
        1.0925991220899814e-08,
        -5.2434927683511264e-08,
        6.242129515714334e-07,
        -3.868049397420757e-06,
        2.4383852901868994e-05,
        -0.00014730869976102933,
        0.0008736813145632307,
        -0.005225659143945567,
        0.033246945535460114,
        -0.2660995882627698,
        -1.8624374021416052,
    ];
}

/// The error function: odd (`erf(-0) = -0`), saturating to `±1` (exactly, past `X`), NaN
/// for NaN. Branch-free; bound in the module docs.
#[inline(always)]
pub fn erf<T: ErfFloat>(x: T) -> T {
    let a = T::abs(x);
    let small = a + a * horner(a * a, T::ERF_SMALL);
    // NaN passes both compares (and then fails `a < c` below).
    let b = if a > T::ERF_MAX { T::ERF_MAX } else { a };
    let b = if b < T::ERF_SPLIT { T::ERF_SPLIT } else { b };
    let g = horner(b - T::ERF_MID, T::ERF_G);
    let large = T::ONE - exp(g - b * b);
    T::copysign(if a < T::ERF_SPLIT { small } else { large }, x)
}

#[cfg(test)]
mod tests {
    use super::super::erf_ref::erf_dd;
    use super::super::testutil::{check, f32_sample, f64_sample, ulps_f32, ulps_f64};
    use super::*;

    #[test]
    fn special_values() {
        for v in [0.0f32, -0.0] {
            assert_eq!(erf(v).to_bits(), v.to_bits());
            assert_eq!(erf(v as f64).to_bits(), (v as f64).to_bits());
        }
        for (x, want) in [
            (f32::INFINITY, 1.0f32),
            (f32::NEG_INFINITY, -1.0),
            (3.92, 1.0),
            (-4.5, -1.0),
            (1e30, 1.0),
        ] {
            assert_eq!(erf(x), want, "erf({x})");
        }
        for (x, want) in [
            (f64::INFINITY, 1.0f64),
            (f64::NEG_INFINITY, -1.0),
            (5.93, 1.0),
            (-7.0, -1.0),
        ] {
            assert_eq!(erf(x), want, "erf({x})");
        }
        assert!(erf(3.8f32) < 1.0 && erf(5.8f64) < 1.0);
        assert!(erf(f32::NAN).is_nan() && erf(f64::NAN).is_nan());
        assert_eq!(erf(f32::from_bits(1000)), f32::from_bits(1128));
        // The reference against values from a 50-digit evaluation.
        assert_eq!(erf_dd(0.5).0, 0.520_499_877_813_046_5);
        assert_eq!(erf_dd(1.0).0, 0.842_700_792_949_714_9);
        assert_eq!(erf_dd(3.0).0, 0.999_977_909_503_001_4);
    }

    #[test]
    fn f32_dense_sample() {
        let mut w = (0.0, 0.0);
        for x in f32_sample(4.5, 97) {
            let e = ulps_f32(erf(x), erf_dd(x as f64).0);
            if e > w.0 {
                w = (e, x as f64);
            }
        }
        check("f32 erf", w, 2.0);
    }

    #[test]
    fn f64_dense_sample() {
        let mut w = (0.0, 0.0);
        for x in f64_sample(1e-300, 6.5, 100_000).chain(f64_sample(0.3, 3.0, 300_000)) {
            let (hi, lo) = erf_dd(x);
            let e = ulps_f64(erf(x), hi, lo);
            if e > w.0 {
                w = (e, x);
            }
        }
        check("f64 erf", w, 2.0);
    }
}
