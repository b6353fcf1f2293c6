//! `log` and `log1p` (fdlibm's reduction and series, without its branches).
//!
//! `x = 2^k·m` with `m ∈ [√2/2, √2)` (integer add on the bits moves the split point), then
//! `f = m - 1`, `s = f/(2+f)` and `log(1+f) = f - f²/2 + s·(f²/2 + R(s²))`, `R` fdlibm's
//! near-minimax odd series (`Lg1..Lg4` for f32, `Lg1..Lg7` for f64), summed smallest first
//! with `k·ln 2` split in a high part (`k·LN2_HI` exact) and a low part. Denormal inputs are
//! scaled by `2^25`/`2^54` first (a select). `log1p` feeds `u = 1 + x` through the same
//! reduction and adds the rounding error of that sum, `c/u` with `c = x - (u - 1)` (or
//! `1 - (u - x)` when `u >= 4`, where `u - x` is the exact one), as musl's `log1p` does.

use super::{horner, MathFloat};

/// The per-type constants and the bit-level split of [`log`] and [`log1p`].
pub trait LogFloat: MathFloat {
    /// `ln 2` with its low bits cleared (`k·LOG_LN2_HI` exact for every exponent `k`).
    const LOG_LN2_HI: Self;
    /// `ln 2 - LOG_LN2_HI` rounded.
    const LOG_LN2_LO: Self;
    /// `R(z)/z`'s coefficients (fdlibm's `Lg`), highest first, down to `Lg1`.
    const LOG_POLY: &'static [Self];
    /// `(k, f)` with `x = 2^k·(1 + f)`, `1 + f ∈ [√2/2, √2)`, `k` an integer-valued float,
    /// for positive finite `x` (denormals included); anything for other `x`.
    fn log_split(x: Self) -> (Self, Self);
}

impl LogFloat for f32 {
    // 0x3f317180 (17 significant bits) and ln 2 minus it (musl's logf).
    const LOG_LN2_HI: f32 = 0.693_138_1;
    const LOG_LN2_LO: f32 = 9.058_000_6e-6;
    const LOG_POLY: &'static [f32] = &[0.242_790_79, 0.284_987_87, 0.400_009_72, 0.666_666_6];
    #[inline(always)]
    fn log_split(x: f32) -> (f32, f32) {
        let tiny = x < f32::MIN_POSITIVE;
        let x = if tiny { x * 33_554_432.0 } else { x };
        let bias = if tiny { 25.0 } else { 0.0 };
        // Adding 1.0's bits minus √2/2's moves `m = √2/2` to an exponent boundary.
        let ix = x.to_bits().wrapping_add(0x3f80_0000 - 0x3f35_04f3);
        // The biased exponent (at most 255) added to 1.5·2^23's bits is `1.5·2^23 + e`.
        let k = f32::from_bits(0x4b40_0000 + (ix >> 23)) - (12_582_912.0 + 127.0);
        let m = f32::from_bits((ix & 0x007f_ffff) + 0x3f35_04f3);
        (k - bias, m - 1.0)
    }
}

impl LogFloat for f64 {
    // 0x3fe62e42fee00000 and ln 2 minus it (fdlibm's log).
    const LOG_LN2_HI: f64 = 6.931_471_803_691_238e-1;
    const LOG_LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    const LOG_POLY: &'static [f64] = &[
        1.479_819_860_511_658_6e-1,
        1.531_383_769_920_937_3e-1,
        1.818_357_216_161_805e-1,
        2.222_219_843_214_978_4e-1,
        2.857_142_874_366_239e-1,
        3.999_999_999_940_942e-1,
        6.666_666_666_666_735e-1,
    ];
    #[inline(always)]
    fn log_split(x: f64) -> (f64, f64) {
        let tiny = x < f64::MIN_POSITIVE;
        let x = if tiny {
            x * 18_014_398_509_481_984.0
        } else {
            x
        };
        let bias = if tiny { 54.0 } else { 0.0 };
        let ix = x
            .to_bits()
            .wrapping_add(0x3ff0_0000_0000_0000 - 0x3fe6_a09e_667f_3bcd);
        // Logical shifts and 64-bit adds only (SSE2/AVX2 have no 64-bit arithmetic shift
        // nor int64 -> f64 conversion): `1.5·2^52 + e` from the bits.
        let k =
            f64::from_bits(0x4338_0000_0000_0000 + (ix >> 52)) - (6_755_399_441_055_744.0 + 1023.0);
        let m = f64::from_bits((ix & 0x000f_ffff_ffff_ffff) + 0x3fe6_a09e_667f_3bcd);
        (k - bias, m - 1.0)
    }
}

/// `k·ln 2 + log(1 + f) + c` for `|f| <= √2 - 1` and a small correction `c`.
#[inline(always)]
fn log_core<T: LogFloat>(k: T, f: T, c: T) -> T {
    let hfsq = T::HALF * f * f;
    let s = f / (T::TWO + f);
    let z = s * s;
    let r = z * horner(z, T::LOG_POLY);
    s * (hfsq + r) + (k * T::LOG_LN2_LO + c) - hfsq + f + k * T::LOG_LN2_HI
}

/// The natural logarithm: `log(±0) = -inf`, `log(x < 0) = NaN`, `log(inf) = inf`, NaN for
/// NaN; denormal inputs are exact inputs. Within 1 ulp (module docs); branch-free.
#[inline(always)]
pub fn log<T: LogFloat>(x: T) -> T {
    let (k, f) = T::log_split(x);
    let y = log_core(k, f, T::ZERO);
    let y = if x == T::ZERO { T::NEG_INFINITY } else { y };
    let y = if x < T::ZERO { T::NAN } else { y };
    // `+inf` and NaN are their own logarithm.
    if x < T::INFINITY {
        y
    } else {
        x
    }
}

/// `log(1 + x)`, accurate near 0 (`log1p(±0) = ±0`, `log1p(x) = x` for tiny `x`):
/// `log1p(-1) = -inf`, NaN below `-1`, `log1p(inf) = inf`, NaN for NaN. Within 1 ulp
/// (module docs); branch-free.
#[inline(always)]
pub fn log1p<T: LogFloat>(x: T) -> T {
    let u = T::ONE + x;
    let (k, f) = T::log_split(u);
    // The rounding error of `1 + x`: `u - 1` is exact below 4, `u - x` from there.
    let c = if k >= T::TWO {
        T::ONE - (u - x)
    } else {
        x - (u - T::ONE)
    };
    let y = log_core(k, f, c / u);
    let y = if x == T::ZERO { x } else { y };
    let y = if x == -T::ONE { T::NEG_INFINITY } else { y };
    let y = if x < -T::ONE { T::NAN } else { y };
    if x < T::INFINITY {
        y
    } else {
        x
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{check, f32_sample, f64_sample, ulps_f32, ulps_f64};
    use super::*;

    #[test]
    fn special_values() {
        for v in [0.0f32, -0.0] {
            assert_eq!(log(v), f32::NEG_INFINITY);
            assert_eq!(log(v as f64), f64::NEG_INFINITY);
            assert_eq!(log1p(v).to_bits(), v.to_bits());
            assert_eq!(log1p(v as f64).to_bits(), (v as f64).to_bits());
        }
        assert_eq!(log(1.0f32).to_bits(), 0);
        assert_eq!(log(1.0f64).to_bits(), 0);
        assert_eq!(log(f32::INFINITY), f32::INFINITY);
        assert_eq!(log(f64::INFINITY), f64::INFINITY);
        assert_eq!(log1p(f32::INFINITY), f32::INFINITY);
        assert_eq!(log1p(f64::INFINITY), f64::INFINITY);
        assert_eq!(log1p(-1.0f32), f32::NEG_INFINITY);
        assert_eq!(log1p(-1.0f64), f64::NEG_INFINITY);
        for v in [-1e-30f32, -1.0, f32::NEG_INFINITY, f32::NAN, -f32::NAN] {
            assert!(log(v).is_nan() && log(v as f64).is_nan(), "log({v})");
        }
        for v in [-1.000_001f32, -2.0, f32::NEG_INFINITY, f32::NAN] {
            assert!(log1p(v).is_nan() && log1p(v as f64).is_nan(), "log1p({v})");
        }
        assert_eq!(log1p(1e-30f32), 1e-30);
        assert_eq!(log1p(f32::from_bits(1)), f32::from_bits(1));
        assert_eq!(log1p(-1e-300f64), -1e-300);
        // Denormals and the extremes.
        for b in [1u32, 2, 3, 0x7f_ffff, 0x40_0000, 0x80_0000, 0x7f7f_ffff] {
            let x = f32::from_bits(b);
            assert!(ulps_f32(log(x), (x as f64).ln()) <= 1.0, "log({x:e})");
        }
        for b in [
            1u64,
            3,
            0xf_ffff_ffff_ffff,
            0x10_0000_0000_0000,
            0x7fef_ffff_ffff_ffff,
        ] {
            let x = f64::from_bits(b);
            assert!(ulps_f64(log(x), x.ln(), 0.0) <= 1.0, "log({x:e})");
        }
    }

    #[test]
    fn f32_dense_sample() {
        let (mut wl, mut wp) = ((0.0, 0.0), (0.0, 0.0));
        for x in f32_sample(f32::INFINITY, 97) {
            let e = ulps_f32(log(x), (x as f64).ln());
            if e > wl.0 {
                wl = (e, x as f64);
            }
            let e = ulps_f32(log1p(x), (x as f64).ln_1p());
            if e > wp.0 {
                wp = (e, x as f64);
            }
        }
        check("f32 log", wl, 1.0);
        check("f32 log1p", wp, 1.0);
    }

    #[test]
    fn f64_dense_sample() {
        let (mut wl, mut wp) = ((0.0, 0.0), (0.0, 0.0));
        for x in f64_sample(1e-310, 1e308, 400_000).chain(f64_sample(0.1, 10.0, 400_000)) {
            let e = ulps_f64(log(x), x.ln(), 0.0);
            if e > wl.0 {
                wl = (e, x);
            }
            let e = ulps_f64(log1p(x), x.ln_1p(), 0.0);
            if e > wp.0 {
                wp = (e, x);
            }
        }
        check("f64 log", wl, 1.0);
        check("f64 log1p", wp, 1.0);
    }
}
