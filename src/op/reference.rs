//! Naive per-element references of the ops, the oracle kernels are tested against.
//!
//! Inputs are [`Scalar`]s already converted to the op's computation dtype; the result is
//! returned widened (integers in `i64` with wrapping arithmetic, floats in `f64`) and is
//! narrowed to the computation dtype by [`narrow`], which wraps integers and rounds floats the
//! way the typed kernels do. Plain code, no vectorization, no cleverness.

use crate::dtype::DType;
use crate::tensor::{Element, Scalar};

/// Narrows a widened value to `dtype` with the crate's cast semantics.
pub fn narrow(s: Scalar, dtype: DType) -> Scalar {
    match dtype {
        DType::Bool => bool::from_scalar(s).to_scalar(),
        DType::U8 => u8::from_scalar(s).to_scalar(),
        DType::I32 => i32::from_scalar(s).to_scalar(),
        DType::I64 => i64::from_scalar(s).to_scalar(),
        DType::F32 => f32::from_scalar(s).to_scalar(),
        DType::F64 => f64::from_scalar(s).to_scalar(),
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
    match s {
        Scalar::Bool(b) => b as u8 as f64,
        Scalar::Int(i) => i as f64,
        Scalar::Float(f) => f,
    }
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
