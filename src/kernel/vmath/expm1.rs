//! `expm1` and `tanh`.
//!
//! `expm1` reuses [`exp`](super::exp)'s reduction `x = n·ln 2 + r` and polynomial, but keeps
//! `p = e^r - 1 = r + r²·P(r)` apart from the 1, so nothing cancels near 0 (`n = 0` gives
//! `p` itself). With `h = 2^(n-1)` (built from the magic-constant sum's bits):
//! `e^x - 1 = 2·(h·p + (h - 1/2))`, where `h·p` and `h - 1/2` are exact for every `n` that
//! matters and the ×2 is exact, so the one rounding is the sum's: the result stays within a
//! small multiple of `p`'s error. The argument is clamped first (f32 `[-25, 89]`, f64
//! `[-40, 710]`): below, `e^x - 1` rounds to `-1`; above, `2·h·(1+p)` overflows to `inf`
//! as it should, while `h` itself (at most `2^127`/`2^1023`) is still a normal number.
//!
//! `tanh` shares that reduction for `-2|x|`: with `u = e^(-2|x|) - 1` (as `expm1`) and
//! `e = e^(-2|x|) = 2h·(1+p)`, `tanh|x| = -u/(u + 2)` below `|x| = ln 3/2` (`tanh = 1/2`;
//! no cancellation, glibc's form) and `1 - 2e/(1 + e)` above, where the small quotient's
//! error stays below the result's ulp (`-u/(u+2)` there amplified `u`'s error as `u`
//! nears `-1`: 2.5 ulp in f32). `|x|` past the clamp gives `e ≈ 0`, so `±1`; the sign is
//! copied from `x` (so `tanh(-0) = -0` and NaN stays NaN).

use super::{horner, MathFloat};

/// The clamp bounds of [`expm1`] and [`tanh`] (the reduction's constants are
/// [`ExpFloat`](super::ExpFloat)'s).
pub trait Expm1Float: MathFloat {
    /// Above the overflow threshold, yet `round(EXPM1_MAX·log2 e) - 1` is a normal exponent.
    const EXPM1_MAX: Self;
    /// Below where `e^x - 1` rounds to `-1`.
    const EXPM1_MIN: Self;
    /// `ln 3 / 2`, where `tanh = 1/2`: below, `tanh` is computed from `expm1(-2|x|)`,
    /// above, from `exp(-2|x|)`.
    const TANH_SPLIT: Self;
}

impl Expm1Float for f32 {
    const EXPM1_MAX: f32 = 89.0;
    const EXPM1_MIN: f32 = -25.0;
    const TANH_SPLIT: f32 = 0.549_306_1;
}

impl Expm1Float for f64 {
    const EXPM1_MAX: f64 = 710.0;
    const EXPM1_MIN: f64 = -40.0;
    const TANH_SPLIT: f64 = 0.549_306_144_334_054_8;
}

/// `(h, p)` with `e^x = 2h·(1 + p)` (`h = 2^(n-1)`, `p = e^r - 1`) for `x` clamped to
/// `[EXPM1_MIN, EXPM1_MAX]`.
#[inline(always)]
fn expm1_parts<T: Expm1Float>(x: T) -> (T, T, T) {
    let xc = if x > T::EXPM1_MAX {
        T::EXPM1_MAX
    } else if x < T::EXPM1_MIN {
        T::EXPM1_MIN
    } else {
        x
    };
    let t = xc * T::LOG2E + T::MAGIC;
    let n = t - T::MAGIC;
    let r = (xc - n * T::LN2_HI) - n * T::LN2_LO;
    let p = r + r * r * horner(r, T::POLY);
    // 2^(n-1): `t - 1` is `(n - 1) + MAGIC`, exactly.
    (T::pow2_of_magic(t - T::ONE), p, n)
}

/// `e^x - 1`, accurate near 0 (`expm1(±0) = ±0`, `expm1(x) = x` for tiny `x`), `inf` above
/// the overflow threshold, `-1` for very negative `x`, NaN for NaN. Branch-free; bound in
/// the module docs.
#[inline(always)]
pub fn expm1<T: Expm1Float>(x: T) -> T {
    let (h, p, n) = expm1_parts(x);
    let y = (h * p + (h - T::HALF)) * T::TWO;
    // `n = 0`: `p` itself (halving a denormal `p` would round).
    let y = if n == T::ZERO { p } else { y };
    if x == T::ZERO {
        x
    } else {
        y
    }
}

/// The hyperbolic tangent: odd (`tanh(-0) = -0`), accurate near 0, saturating to `±1`,
/// NaN for NaN. Branch-free; bound in the module docs.
#[inline(always)]
pub fn tanh<T: Expm1Float>(x: T) -> T {
    let a = T::abs(x);
    let (h, p, n) = expm1_parts(-(a + a));
    // u = e^(-2a) - 1 (as `expm1`), e = e^(-2a).
    let u = (h * p + (h - T::HALF)) * T::TWO;
    let u = if n == T::ZERO { p } else { u };
    let e = (h + h * p) * T::TWO;
    let small = -u / (u + T::TWO);
    let q = (e + e) / (T::ONE + e);
    let t = if a < T::TANH_SPLIT { small } else { T::ONE - q };
    T::copysign(t, x)
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{check, f32_sample, f64_sample, ulps_f32, ulps_f64};
    use super::*;

    #[test]
    fn special_values() {
        for v in [0.0f32, -0.0] {
            assert_eq!(expm1(v).to_bits(), v.to_bits());
            assert_eq!(expm1(v as f64).to_bits(), (v as f64).to_bits());
            assert_eq!(tanh(v).to_bits(), v.to_bits());
            assert_eq!(tanh(v as f64).to_bits(), (v as f64).to_bits());
        }
        for (x, want) in [
            (f32::INFINITY, f32::INFINITY),
            (88.72284, f32::INFINITY),
            (89.5, f32::INFINITY),
            (f32::MAX, f32::INFINITY),
            (f32::NEG_INFINITY, -1.0),
            (-17.4, -1.0),
            (-1e30, -1.0),
            (1e-30, 1e-30),
            (f32::from_bits(1), f32::from_bits(1)),
        ] {
            assert_eq!(expm1(x), want, "expm1({x})");
            assert_eq!(
                expm1(x as f64) as f32,
                (x as f64).exp_m1() as f32,
                "expm1({x} f64)"
            );
        }
        assert!(expm1(88.72283f32).is_finite());
        assert_eq!(expm1(709.79f64), f64::INFINITY);
        assert!(expm1(709.78f64).is_finite());
        assert_eq!(expm1(-38.0f64), -1.0);
        for (x, want) in [
            (f32::INFINITY, 1.0f32),
            (f32::NEG_INFINITY, -1.0),
            (20.0, 1.0),
            (-20.0, -1.0),
        ] {
            assert_eq!(tanh(x), want);
            assert_eq!(tanh(x as f64), want as f64);
        }
        assert_eq!(tanh(20.0f64), 1.0);
        assert_eq!(tanh(1e-30f32), 1e-30);
        assert_eq!(tanh(-1e-300f64), -1e-300);
        for v in [f32::NAN, -f32::NAN] {
            assert!(expm1(v).is_nan() && expm1(v as f64).is_nan());
            assert!(tanh(v).is_nan() && tanh(v as f64).is_nan());
        }
    }

    #[test]
    fn f32_dense_sample() {
        let (mut we, mut wt) = ((0.0, 0.0), (0.0, 0.0));
        for x in f32_sample(90.0, 97) {
            let e = ulps_f32(expm1(x), (x as f64).exp_m1());
            if e > we.0 {
                we = (e, x as f64);
            }
            let e = ulps_f32(tanh(x), (x as f64).tanh());
            if e > wt.0 {
                wt = (e, x as f64);
            }
        }
        check("f32 expm1", we, 2.0);
        check("f32 tanh", wt, 2.5);
    }

    #[test]
    fn f64_dense_sample() {
        let (mut we, mut wt) = ((0.0, 0.0), (0.0, 0.0));
        for x in f64_sample(1e-300, 709.0, 400_000).chain(f64_sample(0.1, 3.0, 400_000)) {
            let e = ulps_f64(expm1(x), x.exp_m1(), 0.0);
            if e > we.0 {
                we = (e, x);
            }
            let e = ulps_f64(tanh(x), x.tanh(), 0.0);
            if e > wt.0 {
                wt = (e, x);
            }
        }
        check("f64 expm1", we, 2.0);
        check("f64 tanh", wt, 3.0);
    }
}
