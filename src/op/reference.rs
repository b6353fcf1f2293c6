//! Naive per-element references of the ops, the oracle kernels are tested against.
//!
//! Inputs are [`Scalar`]s already converted to the op's computation dtype; the result is
//! returned widened (integers in `i64` with wrapping arithmetic, floats in `f64`) and is
//! narrowed to the computation dtype by [`narrow`], which spells out PyTorch's casts (see
//! `tensor::element` for why NaN and out-of-range floats become the integer minimum) on its
//! own rather than calling the kernels' casts: a reference that shares the code it checks
//! agrees with it when both are wrong. Plain code, no vectorization, no cleverness.

use crate::dtype::DType;
use crate::tensor::Scalar;

/// Narrows a widened value to `dtype` as PyTorch's CPU casts do (on x86-64), written out
/// here rather than borrowed from the kernels' [`crate::tensor::Element`] casts, so that a
/// kernel cast that strays from PyTorch is caught: integers wrap into narrower integers
/// (two's complement, the low bits); a float becomes an integer by truncation toward zero,
/// where NaN, ±inf and a value outside the target (`int32`, `int64`) give the target's
/// minimum, and `uint8` takes the low byte of the `int64` conversion; anything becomes
/// `bool` as `!= 0` (NaN is true); `float32` rounds to nearest.
pub fn narrow(s: Scalar, dtype: DType) -> Scalar {
    match dtype {
        DType::Bool => Scalar::Bool(truth(s)),
        // Integers round to float32 directly (through f64 they could round twice).
        DType::F32 => Scalar::Float(match s {
            Scalar::Int(i) => i as f32 as f64,
            other => float(other) as f32 as f64,
        }),
        DType::F64 => Scalar::Float(float(s)),
        DType::I64 | DType::I32 | DType::U8 => {
            let bits = match dtype {
                DType::U8 => 8,
                DType::I32 => 32,
                _ => 64,
            };
            let wide: i128 = match s {
                Scalar::Bool(b) => i128::from(b),
                Scalar::Int(i) => i128::from(i),
                Scalar::Float(f) => {
                    // The conversion's target: 32 bits for int32, 64 for int64 and uint8.
                    let via = if dtype == DType::I32 { 32 } else { 64 };
                    let (lo, hi) = (-(1i128 << (via - 1)), (1i128 << (via - 1)) - 1);
                    let t = f.trunc();
                    if t.is_nan() || t < lo as f64 || t > hi as f64 || (t == hi as f64 && via == 64)
                    {
                        lo
                    } else {
                        t as i128
                    }
                }
            };
            // Two's complement wrap into `bits` bits.
            let m = wide.rem_euclid(1i128 << bits);
            let v = if dtype != DType::U8 && m >= 1i128 << (bits - 1) {
                m - (1i128 << bits)
            } else {
                m
            };
            Scalar::Int(v as i64)
        }
    }
}

fn truth(s: Scalar) -> bool {
    match s {
        Scalar::Bool(b) => b,
        Scalar::Int(i) => i != 0,
        Scalar::Float(f) => f != 0.0,
    }
}

fn float(s: Scalar) -> f64 {
    s.to_f64()
}

/// Applies an integer, float or bool function by the kind of the first operand.
fn arith(
    a: Scalar,
    b: Scalar,
    int: fn(i64, i64) -> i64,
    flt: fn(f64, f64) -> f64,
    boolean: fn(bool, bool) -> bool,
) -> Scalar {
    match (a, b) {
        (Scalar::Int(x), Scalar::Int(y)) => Scalar::Int(int(x, y)),
        (Scalar::Bool(x), Scalar::Bool(y)) => Scalar::Bool(boolean(x, y)),
        _ => Scalar::Float(flt(float(a), float(b))),
    }
}

fn compare(a: Scalar, b: Scalar) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Scalar::Int(x), Scalar::Int(y)) => Some(x.cmp(&y)),
        (Scalar::Bool(x), Scalar::Bool(y)) => Some(x.cmp(&y)),
        _ => float(a).partial_cmp(&float(b)),
    }
}

fn fmax(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        f64::NAN
    } else {
        x.max(y)
    }
}

fn fmin(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        f64::NAN
    } else {
        x.min(y)
    }
}

/// `-a`
pub fn neg(v: &[Scalar]) -> Scalar {
    match v[0] {
        Scalar::Int(x) => Scalar::Int(x.wrapping_neg()),
        a => Scalar::Float(-float(a)),
    }
}
/// `|a|`
pub fn abs(v: &[Scalar]) -> Scalar {
    match v[0] {
        Scalar::Int(x) => Scalar::Int(x.wrapping_abs()),
        a => Scalar::Float(float(a).abs()),
    }
}
/// `e^a`
pub fn exp(v: &[Scalar]) -> Scalar {
    Scalar::Float(float(v[0]).exp())
}
/// `sqrt(a)`
pub fn sqrt(v: &[Scalar]) -> Scalar {
    Scalar::Float(float(v[0]).sqrt())
}
/// `1 / (1 + e^-a)`
pub fn sigmoid(v: &[Scalar]) -> Scalar {
    Scalar::Float(1.0 / (1.0 + (-float(v[0])).exp()))
}
/// `max(a, 0)`, NaN propagating.
pub fn relu(v: &[Scalar]) -> Scalar {
    match v[0] {
        Scalar::Int(x) => Scalar::Int(x.max(0)),
        a => {
            let x = float(a);
            Scalar::Float(if x < 0.0 { 0.0 } else { x })
        }
    }
}
/// `!a`
pub fn logical_not(v: &[Scalar]) -> Scalar {
    Scalar::Bool(!truth(v[0]))
}
/// `a + b` (bool: or)
pub fn add(v: &[Scalar]) -> Scalar {
    arith(v[0], v[1], i64::wrapping_add, |x, y| x + y, |x, y| x | y)
}
/// `a - b`
pub fn sub(v: &[Scalar]) -> Scalar {
    arith(v[0], v[1], i64::wrapping_sub, |x, y| x - y, |x, y| x ^ y)
}
/// `a * b` (bool: and)
pub fn mul(v: &[Scalar]) -> Scalar {
    arith(v[0], v[1], i64::wrapping_mul, |x, y| x * y, |x, y| x & y)
}
/// `a / b` (true division, always floating)
pub fn div(v: &[Scalar]) -> Scalar {
    Scalar::Float(float(v[0]) / float(v[1]))
}
/// `maximum(a, b)`, NaN propagating (bool: or)
pub fn maximum(v: &[Scalar]) -> Scalar {
    arith(v[0], v[1], i64::max, fmax, |x, y| x | y)
}
/// `minimum(a, b)`, NaN propagating (bool: and)
pub fn minimum(v: &[Scalar]) -> Scalar {
    arith(v[0], v[1], i64::min, fmin, |x, y| x & y)
}
/// `a == b`
pub fn eq(v: &[Scalar]) -> Scalar {
    Scalar::Bool(compare(v[0], v[1]) == Some(std::cmp::Ordering::Equal))
}
/// `a != b`
pub fn ne(v: &[Scalar]) -> Scalar {
    Scalar::Bool(compare(v[0], v[1]) != Some(std::cmp::Ordering::Equal))
}
/// `a < b`
pub fn lt(v: &[Scalar]) -> Scalar {
    Scalar::Bool(compare(v[0], v[1]) == Some(std::cmp::Ordering::Less))
}
/// `a <= b`
pub fn le(v: &[Scalar]) -> Scalar {
    Scalar::Bool(matches!(
        compare(v[0], v[1]),
        Some(std::cmp::Ordering::Less | std::cmp::Ordering::Equal)
    ))
}
/// `a > b`
pub fn gt(v: &[Scalar]) -> Scalar {
    Scalar::Bool(compare(v[0], v[1]) == Some(std::cmp::Ordering::Greater))
}
/// `a >= b`
pub fn ge(v: &[Scalar]) -> Scalar {
    Scalar::Bool(matches!(
        compare(v[0], v[1]),
        Some(std::cmp::Ordering::Greater | std::cmp::Ordering::Equal)
    ))
}
/// `a && b`
pub fn logical_and(v: &[Scalar]) -> Scalar {
    Scalar::Bool(truth(v[0]) && truth(v[1]))
}
/// `a || b`
pub fn logical_or(v: &[Scalar]) -> Scalar {
    Scalar::Bool(truth(v[0]) || truth(v[1]))
}
/// `x + a * b` (value 1)
pub fn addcmul(v: &[Scalar]) -> Scalar {
    match (v[0], v[1], v[2]) {
        (Scalar::Int(x), Scalar::Int(a), Scalar::Int(b)) => {
            Scalar::Int(x.wrapping_add(a.wrapping_mul(b)))
        }
        _ => Scalar::Float(float(v[0]) + float(v[1]) * float(v[2])),
    }
}
/// `cond ? a : b`
pub fn where_(v: &[Scalar]) -> Scalar {
    if truth(v[0]) {
        v[1]
    } else {
        v[2]
    }
}
/// `minimum(maximum(x, lo), hi)`, NaN propagating
pub fn clamp(v: &[Scalar]) -> Scalar {
    minimum(&[maximum(&[v[0], v[1]]), v[2]])
}

fn unary_float(v: &[Scalar], f: fn(f64) -> f64) -> Scalar {
    Scalar::Float(f(float(v[0])))
}
/// `tanh(a)`
pub fn tanh(v: &[Scalar]) -> Scalar {
    unary_float(v, f64::tanh)
}
/// `erf(a)` ([`erf64`])
pub fn erf(v: &[Scalar]) -> Scalar {
    unary_float(v, erf64)
}
/// `1 / sqrt(a)`
pub fn rsqrt(v: &[Scalar]) -> Scalar {
    unary_float(v, |x| 1.0 / x.sqrt())
}
/// `1 / a`
pub fn reciprocal(v: &[Scalar]) -> Scalar {
    unary_float(v, |x| 1.0 / x)
}
/// `ln(a)`
pub fn log(v: &[Scalar]) -> Scalar {
    unary_float(v, f64::ln)
}
/// `ln(1 + a)`
pub fn log1p(v: &[Scalar]) -> Scalar {
    unary_float(v, f64::ln_1p)
}
/// `e^a - 1`
pub fn expm1(v: &[Scalar]) -> Scalar {
    unary_float(v, f64::exp_m1)
}
/// `sin(a)`
pub fn sin(v: &[Scalar]) -> Scalar {
    unary_float(v, f64::sin)
}
/// `cos(a)`
pub fn cos(v: &[Scalar]) -> Scalar {
    unary_float(v, f64::cos)
}

/// Integers pass through the rounding ops unchanged.
fn rounding(v: &[Scalar], f: fn(f64) -> f64) -> Scalar {
    match v[0] {
        Scalar::Float(x) => Scalar::Float(f(x)),
        other => other,
    }
}
/// `floor(a)` (integers unchanged)
pub fn floor(v: &[Scalar]) -> Scalar {
    rounding(v, f64::floor)
}
/// `ceil(a)` (integers unchanged)
pub fn ceil(v: &[Scalar]) -> Scalar {
    rounding(v, f64::ceil)
}
/// `round(a)`, halves to even (`nearbyint`; integers unchanged)
pub fn round(v: &[Scalar]) -> Scalar {
    rounding(v, f64::round_ties_even)
}
/// `trunc(a)` (integers unchanged)
pub fn trunc(v: &[Scalar]) -> Scalar {
    rounding(v, f64::trunc)
}
/// `(0 < a) - (a < 0)`: NaN and `-0.0` give `0`; bool unchanged.
pub fn sign(v: &[Scalar]) -> Scalar {
    match v[0] {
        Scalar::Int(x) => Scalar::Int(x.signum()),
        Scalar::Float(x) => Scalar::Float(((0.0 < x) as i32 - (x < 0.0) as i32) as f64),
        b => b,
    }
}
/// `~a` (bool: not)
pub fn bitwise_not(v: &[Scalar]) -> Scalar {
    match v[0] {
        Scalar::Int(x) => Scalar::Int(!x),
        Scalar::Bool(b) => Scalar::Bool(!b),
        Scalar::Float(f) => Scalar::Float(f),
    }
}
/// `a/2 · (1 + erf(a/√2))`
pub fn gelu(v: &[Scalar]) -> Scalar {
    unary_float(v, |x| 0.5 * x * (1.0 + erf64(x / std::f64::consts::SQRT_2)))
}
/// `a/2 · (1 + tanh(√(2/π) · (a + 0.044715 a³)))`
pub fn gelu_tanh(v: &[Scalar]) -> Scalar {
    let k = (2.0 / std::f64::consts::PI).sqrt();
    let x = float(v[0]);
    Scalar::Float(0.5 * x * (1.0 + (k * (x + 0.044715 * x * x * x)).tanh()))
}
/// `a / (1 + e^-a)`
pub fn silu(v: &[Scalar]) -> Scalar {
    unary_float(v, |x| x / (1.0 + (-x).exp()))
}
/// `a · min(max(a + 3, 0), 6) / 6`
pub fn hardswish(v: &[Scalar]) -> Scalar {
    unary_float(v, |x| x * fmin(fmax(x + 3.0, 0.0), 6.0) / 6.0)
}
/// `min(max(a + 3, 0), 6) / 6`
pub fn hardsigmoid(v: &[Scalar]) -> Scalar {
    unary_float(v, |x| fmin(fmax(x + 3.0, 0.0), 6.0) / 6.0)
}
/// `a > 0 ? a : a · slope`
pub fn leaky_relu(v: &[Scalar]) -> Scalar {
    let (x, s) = (float(v[0]), float(v[1]));
    Scalar::Float(if x > 0.0 { x } else { x * s })
}
/// `a^b`: integers by repeated squaring with wrapping (a negative exponent gives `1` for a
/// base of 1, `±1` for -1, else 0, as PyTorch's integer `pow`), floats by `powf`.
pub fn pow(v: &[Scalar]) -> Scalar {
    match (v[0], v[1]) {
        (Scalar::Int(a), Scalar::Int(b)) => Scalar::Int(int_pow(a, b)),
        (a, b) => Scalar::Float(float(a).powf(float(b))),
    }
}

fn int_pow(a: i64, b: i64) -> i64 {
    if b < 0 {
        return match a {
            1 => 1,
            -1 if b % 2 == 0 => 1,
            -1 => -1,
            _ => 0,
        };
    }
    int_pow_wrapping(a, b)
}

fn int_pow_wrapping(a: i64, mut b: i64) -> i64 {
    let (mut base, mut result) = (a, 1i64);
    while b > 0 {
        if b & 1 == 1 {
            result = result.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        b >>= 1;
    }
    result
}
/// Python's modulo: the sign of the divisor (`fmod`, then `+ b` when the signs differ).
/// An integer divisor of 0 is refused by the kernel before this is asked.
pub fn remainder(v: &[Scalar]) -> Scalar {
    match (v[0], v[1]) {
        (Scalar::Int(a), Scalar::Int(b)) => {
            if b == 0 {
                return Scalar::Int(0);
            }
            let r = a.wrapping_rem(b);
            Scalar::Int(if r != 0 && ((r < 0) != (b < 0)) { r.wrapping_add(b) } else { r })
        }
        (a, b) => {
            let (a, b) = (float(a), float(b));
            let m = a % b;
            Scalar::Float(if m != 0.0 && ((b < 0.0) != (m < 0.0)) { m + b } else { m })
        }
    }
}
/// `a & b` (bool: and)
pub fn bitwise_and(v: &[Scalar]) -> Scalar {
    arith(v[0], v[1], |x, y| x & y, |x, _| x, |x, y| x & y)
}
/// `a | b` (bool: or)
pub fn bitwise_or(v: &[Scalar]) -> Scalar {
    arith(v[0], v[1], |x, y| x | y, |x, _| x, |x, y| x | y)
}
/// `a ^ b` (bool: xor)
pub fn bitwise_xor(v: &[Scalar]) -> Scalar {
    arith(v[0], v[1], |x, y| x ^ y, |x, _| x, |x, y| x ^ y)
}
/// `mask ? value : x` (arguments `x, mask, value`)
pub fn masked_fill(v: &[Scalar]) -> Scalar {
    if truth(v[1]) {
        v[2]
    } else {
        v[0]
    }
}

/// `erf(x)` in f64 to about 1e-15 relative: the Maclaurin series below 2.5 (its terms peak
/// near `e^(x²)`, so at most three digits cancel), the continued fraction of `erfc` above.
/// Plain and slow: the oracle, not a kernel.
pub fn erf64(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let a = x.abs();
    let r = if a < 2.5 {
        // erf(a) = 2/√π Σ (-1)^n a^(2n+1) / (n! (2n+1))
        let (mut term, mut sum, a2) = (a, a, a * a);
        let mut n = 0.0;
        loop {
            n += 1.0;
            term *= -a2 / n;
            let t = term / (2.0 * n + 1.0);
            sum += t;
            if t.abs() <= 1e-17 * sum.abs() {
                break;
            }
        }
        sum * 2.0 / std::f64::consts::PI.sqrt()
    } else if a < 6.5 {
        // erfc(a) = e^(-a²)/√π · 1/(a + (1/2)/(a + 1/(a + (3/2)/(a + 2/(a + ...))))),
        // evaluated from the tail.
        let mut f = a;
        for k in (1..=60).rev() {
            f = a + (k as f64 / 2.0) / f;
        }
        1.0 - (-a * a).exp() / (std::f64::consts::PI.sqrt() * f)
    } else {
        1.0
    };
    if x < 0.0 {
        -r
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::Element;

    /// Values of `erf` from tables (Abramowitz & Stegun 7.1, 10 digits and more).
    #[test]
    fn erf64_matches_tabulated_values() {
        for (x, want) in [
            (0.0, 0.0),
            (0.1, 0.112_462_916_018_284_9),
            (0.5, 0.520_499_877_813_046_5),
            (1.0, 0.842_700_792_949_714_9),
            (2.0, 0.995_322_265_018_952_7),
            (2.5, 0.999_593_047_982_555),
            (3.0, 0.999_977_909_503_001_4),
            (4.0, 0.999_999_984_582_742_1),
        ] {
            assert!((erf64(x) - want).abs() < 1e-15, "erf({x}) = {}", erf64(x));
            assert!((erf64(-x) + want).abs() < 1e-15);
        }
        assert!(erf64(f64::NAN).is_nan());
        assert_eq!(erf64(f64::INFINITY), 1.0);
        assert_eq!(erf64(f64::NEG_INFINITY), -1.0);
    }

    #[test]
    fn integer_pow_and_remainder_follow_pytorch() {
        let p = |a, b| pow(&[Scalar::Int(a), Scalar::Int(b)]);
        assert_eq!(p(3, 4), Scalar::Int(81));
        assert_eq!(p(2, -1), Scalar::Int(0));
        assert_eq!(p(-1, -3), Scalar::Int(-1));
        assert_eq!(p(2, 64), Scalar::Int(0));
        assert_eq!(p(-1, 1001), Scalar::Int(-1));
        assert_eq!(p(3, 100), Scalar::Int(int_pow_wrapping(3, 100)));
        let r = |a, b| remainder(&[Scalar::Int(a), Scalar::Int(b)]);
        assert_eq!(r(-7, 3), Scalar::Int(2));
        assert_eq!(r(7, -3), Scalar::Int(-2));
        let rf = remainder(&[Scalar::Float(-7.5), Scalar::Float(2.0)]);
        assert_eq!(rf, Scalar::Float(0.5));
    }

    /// The kernels' cast of `s` to `dtype`, widened back.
    fn kernel_cast(s: Scalar, dtype: DType) -> Scalar {
        match dtype {
            DType::Bool => bool::from_scalar(s).to_scalar(),
            DType::U8 => u8::from_scalar(s).to_scalar(),
            DType::I32 => i32::from_scalar(s).to_scalar(),
            DType::I64 => i64::from_scalar(s).to_scalar(),
            DType::F32 => f32::from_scalar(s).to_scalar(),
            DType::F64 => f64::from_scalar(s).to_scalar(),
        }
    }

    fn same(a: Scalar, b: Scalar) -> bool {
        match (a, b) {
            (Scalar::Float(x), Scalar::Float(y)) => x == y || (x.is_nan() && y.is_nan()),
            _ => a == b,
        }
    }

    /// What PyTorch 2.15 (CPU, x86-64) gives for `torch.tensor(v, dtype=float64).to(dtype)`,
    /// measured: the reference must say the same on its own.
    #[test]
    fn narrow_follows_pytorch_for_nonfinite_and_out_of_range_floats() {
        let f = Scalar::Float;
        let cases = [
            (f(f64::NAN), DType::I32, Scalar::Int(-2147483648)),
            (f(f64::NAN), DType::I64, Scalar::Int(i64::MIN)),
            (f(f64::NAN), DType::U8, Scalar::Int(0)),
            (f(f64::NAN), DType::Bool, Scalar::Bool(true)),
            (f(f64::INFINITY), DType::I32, Scalar::Int(-2147483648)),
            (f(f64::INFINITY), DType::I64, Scalar::Int(i64::MIN)),
            (f(f64::INFINITY), DType::U8, Scalar::Int(0)),
            (f(f64::NEG_INFINITY), DType::I64, Scalar::Int(i64::MIN)),
            (f(3e9), DType::I32, Scalar::Int(-2147483648)),
            (f(3e9), DType::I64, Scalar::Int(3_000_000_000)),
            (f(-2147483649.0), DType::U8, Scalar::Int(255)),
            (f(4294967297.0), DType::U8, Scalar::Int(1)),
            (f(9223372036854775808.0), DType::I64, Scalar::Int(i64::MIN)),
            (f(1e19), DType::U8, Scalar::Int(0)),
            (f(300.0), DType::U8, Scalar::Int(44)),
            (f(-300.0), DType::U8, Scalar::Int(212)),
            (f(-2.7), DType::U8, Scalar::Int(254)),
            (f(-2.7), DType::I32, Scalar::Int(-2)),
            (Scalar::Int(1000), DType::U8, Scalar::Int(232)),
            (Scalar::Int(-1000), DType::U8, Scalar::Int(24)),
            (Scalar::Int(1 << 40), DType::I32, Scalar::Int(0)),
            (Scalar::Int(-2147483649), DType::I32, Scalar::Int(2147483647)),
        ];
        for (s, dtype, want) in cases {
            assert_eq!(narrow(s, dtype), want, "{s:?} -> {}", dtype.name());
        }
    }

    /// The reference's narrowing and the kernels' casts are two implementations of one rule:
    /// they agree on edge values and on a sweep of random bit patterns of both float widths.
    #[test]
    fn narrow_agrees_with_the_kernel_casts() {
        let mut values: Vec<Scalar> = [
            0.0,
            -0.0,
            0.5,
            -0.5,
            255.0,
            256.0,
            -256.0,
            2147483647.0,
            2147483647.9,
            2147483648.0,
            -2147483648.0,
            -2147483648.9,
            -2147483649.0,
            9223372036854774784.0,
            -9223372036854775808.0,
            9223372036854775808.0,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ]
        .into_iter()
        .map(Scalar::Float)
        .collect();
        values.extend(
            [0, 1, -1, 255, 256, -255, i32::MAX as i64 + 1, i32::MIN as i64 - 1, i64::MIN, i64::MAX]
                .into_iter()
                .map(Scalar::Int),
        );
        values.extend([Scalar::Bool(true), Scalar::Bool(false)]);
        // splitmix64: every bit of the patterns random.
        let mut state = 39u64;
        let mut next = || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        for _ in 0..20_000 {
            let bits = next();
            values.push(Scalar::Float(f64::from_bits(bits)));
            values.push(Scalar::Float(f32::from_bits(bits as u32) as f64));
            // Magnitudes around the integer limits, where the rules turn.
            let e = (bits >> 58) as i32; // 0..63
            values.push(Scalar::Float(
                (bits as i64 as f64).signum() * 2f64.powi(e) * (1.0 + (bits & 0xff) as f64 / 256.0),
            ));
            values.push(Scalar::Int(bits as i64));
        }
        for s in values {
            for dtype in DType::ALL {
                let (r, k) = (narrow(s, dtype), kernel_cast(s, dtype));
                assert!(same(r, k), "{s:?} -> {}: reference {r:?}, kernel {k:?}", dtype.name());
            }
        }
    }
}
