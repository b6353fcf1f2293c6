//! Element types: what a tensor can hold, how values cast between types, and the arithmetic
//! the built-in kernels need.
//!
//! # Casts of floats to integers
//! C++ leaves a float → int conversion of NaN, ±inf or an out-of-range value undefined, so
//! PyTorch's results are what its CPU build's instructions give. On x86-64, `cvttsd2si` /
//! `cvttss2si` answer the "integer indefinite" value (the type's minimum) for every such
//! input: `to(int32)` and `to(int64)` give `-2147483648` and `-9223372036854775808`, and
//! `to(uint8)`, which converts through a 64-bit integer and keeps the low byte, gives 0 for
//! NaN and ±inf and wraps finite values (`300.0` is 44, `-2147483649.0` is 255). Rust's `as`
//! saturates instead (and makes NaN 0), so the casts here spell PyTorch's rule out
//! ([`float_to_i64`], [`float_to_i32`]). PyTorch's vectorized loops (contiguous data) and its
//! scalar loops (strided data, tails shorter than a vector) agree on every value measured,
//! so one rule holds for every layout. `bool` is `!= 0`, so NaN is true.

pub use crate::dtype::DType;
use std::fmt::Debug;

/// A value widened to one of three kinds; the pivot of dtype casts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// A floating-point value.
    Float(f64),
    /// An integer value.
    Int(i64),
    /// A boolean.
    Bool(bool),
}

impl Scalar {
    /// The value as `f64` (bool: 0 or 1; integers beyond 2**53 round).
    pub fn to_f64(self) -> f64 {
        match self {
            Scalar::Float(f) => f,
            Scalar::Int(i) => i as f64,
            Scalar::Bool(b) => f64::from(u8::from(b)),
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A plain-old-data element type a [`crate::tensor::Tensor`] can hold.
///
/// Sealed: the kernels move elements with raw pointer reads and writes and rely on every
/// implementor being `Copy`, without drop glue, and with `size_of::<T>()` a power of two.
pub trait Element:
    sealed::Sealed + Copy + Send + Sync + PartialEq + Debug + Default + 'static
{
    /// Runtime tag.
    const DTYPE: DType;
    /// Widens the value (exactly for every type here except `i64` → float casts later).
    fn to_scalar(self) -> Scalar;
    /// Narrows a widened value with PyTorch's CPU cast semantics (x86-64, see
    /// [`float_to_i64`]): float → `int64` and `int32` truncate toward zero, and NaN, ±inf
    /// and values outside the target give its minimum; float → `uint8` goes through `int64`
    /// and wraps (`300.0` is 44, `-1.0` is 255, `+inf` and NaN are 0); int → narrower int
    /// wraps; anything → bool is `!= 0` (NaN is true); bool → number is 0 or 1.
    fn from_scalar(s: Scalar) -> Self;
    /// Casts from another element type (see [`Element::from_scalar`]).
    #[inline(always)]
    fn cast_from<S: Element>(s: S) -> Self {
        Self::from_scalar(s.to_scalar())
    }
}

/// Float → `int64` as PyTorch's CPU casts compute it on x86-64: C++'s `static_cast`, which
/// compiles to `cvttsd2si`/`cvttss2si`, truncates toward zero and answers the "integer
/// indefinite" value `i64::MIN` for NaN, ±inf and anything outside `int64` (Rust's `as`
/// saturates instead, and gives 0 for NaN). PyTorch's vectorized and scalar loops agree
/// on this (contiguous and strided inputs, sizes below and above a vector width), and
/// float → `uint8` takes the same path and keeps the low byte (`1e10` and `+inf` are 0,
/// `-2147483649.0` is 255, `4294967297.0` is 1).
#[inline(always)]
pub fn float_to_i64(f: f64) -> i64 {
    // -2**63 is exact in f64; 2**63 is the first value past the top.
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
        f as i64
    } else {
        i64::MIN
    }
}

/// Float → `int32` as PyTorch's CPU casts compute it on x86-64 (`cvttsd2si` into a 32-bit
/// register): truncation toward zero, `i32::MIN` for NaN, ±inf and anything whose truncation
/// is outside `int32` (`3e9` and `2147483648.0` give `i32::MIN`, not a wrapped value).
#[inline(always)]
pub fn float_to_i32(f: f64) -> i32 {
    if f > -2_147_483_649.0 && f < 2_147_483_648.0 {
        f as i32
    } else {
        i32::MIN
    }
}

/// Float → an integer element type (PyTorch's x86-64 CPU semantics, above).
trait FromFloat {
    fn from_float(f: f64) -> Self;
}
impl FromFloat for i64 {
    #[inline(always)]
    fn from_float(f: f64) -> i64 {
        float_to_i64(f)
    }
}
impl FromFloat for i32 {
    #[inline(always)]
    fn from_float(f: f64) -> i32 {
        float_to_i32(f)
    }
}
impl FromFloat for u8 {
    #[inline(always)]
    fn from_float(f: f64) -> u8 {
        float_to_i64(f) as u8
    }
}

macro_rules! int_element {
    ($t:ty, $tag:ident) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$tag;
            #[inline(always)]
            fn to_scalar(self) -> Scalar {
                Scalar::Int(self as i64)
            }
            #[inline(always)]
            fn from_scalar(s: Scalar) -> Self {
                match s {
                    Scalar::Float(f) => <$t as FromFloat>::from_float(f),
                    Scalar::Int(i) => i as $t,
                    Scalar::Bool(b) => b as $t,
                }
            }
        }
    };
}
macro_rules! float_element {
    ($t:ty, $tag:ident) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$tag;
            #[inline(always)]
            fn to_scalar(self) -> Scalar {
                Scalar::Float(self as f64)
            }
            #[inline(always)]
            fn from_scalar(s: Scalar) -> Self {
                match s {
                    Scalar::Float(f) => f as $t,
                    Scalar::Int(i) => i as $t,
                    Scalar::Bool(b) => b as u8 as $t,
                }
            }
        }
    };
}
int_element!(i32, I32);
int_element!(i64, I64);
int_element!(u8, U8);
float_element!(f32, F32);
float_element!(f64, F64);

impl sealed::Sealed for bool {}
impl Element for bool {
    const DTYPE: DType = DType::Bool;
    #[inline(always)]
    fn to_scalar(self) -> Scalar {
        Scalar::Bool(self)
    }
    #[inline(always)]
    fn from_scalar(s: Scalar) -> Self {
        match s {
            Scalar::Float(f) => f != 0.0,
            Scalar::Int(i) => i != 0,
            Scalar::Bool(b) => b,
        }
    }
}

/// Numeric elements: the arithmetic of the built-in unary/binary/ternary ops.
///
/// Integer arithmetic wraps (as PyTorch's does in C++), so no kernel can panic on overflow.
pub trait NumElement: Element + PartialOrd {
    /// Additive identity.
    const ZERO: Self;
    /// Multiplicative identity.
    const ONE: Self;
    /// `a + b`
    fn add(self, b: Self) -> Self;
    /// `a - b`
    fn sub(self, b: Self) -> Self;
    /// `a * b`
    fn mul(self, b: Self) -> Self;
    /// `a * b + c` with one rounding for floats (a fused multiply-add, as PyTorch's
    /// `addcmul` computes: `-13 + (-0.72 * -18)` in float32 is `-0.039999485`, not the
    /// `-0.039999008` of a rounded product); wrapping for integers.
    fn mul_add(self, b: Self, c: Self) -> Self;
    /// `-a`
    fn neg(self) -> Self;
    /// `|a|`
    fn abs(self) -> Self;
    /// PyTorch `maximum` (NaN-propagating for floats).
    fn maximum(self, b: Self) -> Self;
    /// PyTorch `minimum` (NaN-propagating for floats).
    fn minimum(self, b: Self) -> Self;
}

/// Numeric elements' rounding, sign, power and remainder, as PyTorch's CPU kernels compute
/// them: rounding is the identity on integers, `sign` is `(0 < a) - (a < 0)` (NaN and `-0.0`
/// give `0`), integer `pow` is repeated squaring with wrapping (a negative exponent gives
/// `1` for a base of 1, `±1` for -1, else 0), `rem` is Python's modulo (the divisor's sign).
pub trait MathElement: NumElement {
    /// `floor(a)`
    fn floor(self) -> Self;
    /// `ceil(a)`
    fn ceil(self) -> Self;
    /// `round(a)`, halves to even
    fn round(self) -> Self;
    /// `trunc(a)`
    fn trunc(self) -> Self;
    /// `(0 < a) - (a < 0)`
    fn sign(self) -> Self;
    /// `a^b`
    fn pow(self, b: Self) -> Self;
    /// `a mod b` with the sign of `b` (an integer `b` must not be 0: the kernel checks).
    fn rem(self, b: Self) -> Self;
}

macro_rules! int_math {
    ($t:ty, $signed:expr) => {
        impl MathElement for $t {
            #[inline(always)]
            fn floor(self) -> Self {
                self
            }
            #[inline(always)]
            fn ceil(self) -> Self {
                self
            }
            #[inline(always)]
            fn round(self) -> Self {
                self
            }
            #[inline(always)]
            fn trunc(self) -> Self {
                self
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn sign(self) -> Self {
                ((0 < self) as $t).wrapping_sub((self < 0 as $t) as $t)
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn pow(self, b: Self) -> Self {
                if b < 0 as $t {
                    return if self == 1 as $t {
                        1 as $t
                    } else if $signed && self == (0 as $t).wrapping_sub(1 as $t) {
                        if b % (2 as $t) == 0 as $t { 1 as $t } else { self }
                    } else {
                        0 as $t
                    };
                }
                let (mut base, mut e, mut r) = (self, b, 1 as $t);
                while e > 0 as $t {
                    if e & (1 as $t) == 1 as $t {
                        r = r.wrapping_mul(base);
                    }
                    base = base.wrapping_mul(base);
                    e >>= 1;
                }
                r
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn rem(self, b: Self) -> Self {
                if b == 0 as $t {
                    return 0 as $t;
                }
                let r = self.wrapping_rem(b);
                if r != 0 as $t && ((r < 0 as $t) != (b < 0 as $t)) {
                    r.wrapping_add(b)
                } else {
                    r
                }
            }
        }
    };
}
int_math!(u8, false);
int_math!(i32, true);
int_math!(i64, true);

macro_rules! float_math {
    ($t:ty) => {
        impl MathElement for $t {
            #[inline(always)]
            fn floor(self) -> Self {
                <$t>::floor(self)
            }
            #[inline(always)]
            fn ceil(self) -> Self {
                <$t>::ceil(self)
            }
            #[inline(always)]
            fn round(self) -> Self {
                <$t>::round_ties_even(self)
            }
            #[inline(always)]
            fn trunc(self) -> Self {
                <$t>::trunc(self)
            }
            #[inline(always)]
            fn sign(self) -> Self {
                ((0.0 < self) as i32 - (self < 0.0) as i32) as $t
            }
            #[inline(always)]
            fn pow(self, b: Self) -> Self {
                <$t>::powf(self, b)
            }
            #[inline(always)]
            fn rem(self, b: Self) -> Self {
                let m = self % b;
                if m != 0.0 && ((b < 0.0) != (m < 0.0)) {
                    m + b
                } else {
                    m
                }
            }
        }
    };
}
float_math!(f32);
float_math!(f64);

/// Floating-point elements: division and transcendental functions.
pub trait FloatElement: MathElement {
    /// `a / b`
    fn div(self, b: Self) -> Self;
    /// `e^a`, within 1 ulp (f32: 0.952 ulp, exhaustively measured; see `kernel::vmath`),
    /// vectorizable.
    fn exp(self) -> Self;
    /// natural logarithm (the vectorizable ones of `kernel::vmath` here and below: measured
    /// bounds there, f32 within 2.3 ulp, f64 within 3 ulp of libm; `sin`/`cos` for
    /// `|x| <= 1e9`)
    fn ln(self) -> Self;
    /// square root
    fn sqrt(self) -> Self;
    /// hyperbolic tangent
    fn tanh(self) -> Self;
    /// `1 / (1 + e^-a)`
    fn sigmoid(self) -> Self;
    /// the error function
    fn erf(self) -> Self;
    /// `ln(1 + a)`
    fn ln_1p(self) -> Self;
    /// `e^a - 1`
    fn exp_m1(self) -> Self;
    /// sine
    fn sin(self) -> Self;
    /// cosine
    fn cos(self) -> Self;
    /// A constant (`0.5`, `3`, ...), rounded to this type.
    fn from_f64(v: f64) -> Self;
}

macro_rules! int_num {
    ($t:ty, $abs:expr) => {
        impl NumElement for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            #[inline(always)]
            fn add(self, b: Self) -> Self {
                self.wrapping_add(b)
            }
            #[inline(always)]
            fn sub(self, b: Self) -> Self {
                self.wrapping_sub(b)
            }
            #[inline(always)]
            fn mul(self, b: Self) -> Self {
                self.wrapping_mul(b)
            }
            #[inline(always)]
            fn mul_add(self, b: Self, c: Self) -> Self {
                self.wrapping_mul(b).wrapping_add(c)
            }
            #[inline(always)]
            fn neg(self) -> Self {
                self.wrapping_neg()
            }
            #[inline(always)]
            fn abs(self) -> Self {
                let f: fn($t) -> $t = $abs;
                f(self)
            }
            #[inline(always)]
            fn maximum(self, b: Self) -> Self {
                if self > b {
                    self
                } else {
                    b
                }
            }
            #[inline(always)]
            fn minimum(self, b: Self) -> Self {
                if self < b {
                    self
                } else {
                    b
                }
            }
        }
    };
}
int_num!(i32, |x| x.wrapping_abs());
int_num!(i64, |x| x.wrapping_abs());
int_num!(u8, |x| x);

macro_rules! float_num {
    ($t:ty) => {
        impl NumElement for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            #[inline(always)]
            fn add(self, b: Self) -> Self {
                self + b
            }
            #[inline(always)]
            fn sub(self, b: Self) -> Self {
                self - b
            }
            #[inline(always)]
            fn mul(self, b: Self) -> Self {
                self * b
            }
            #[inline(always)]
            fn mul_add(self, b: Self, c: Self) -> Self {
                <$t>::mul_add(self, b, c)
            }
            #[inline(always)]
            fn neg(self) -> Self {
                -self
            }
            #[inline(always)]
            fn abs(self) -> Self {
                self.abs()
            }
            #[inline(always)]
            fn maximum(self, b: Self) -> Self {
                if self.is_nan() || b.is_nan() {
                    <$t>::NAN
                } else if self > b {
                    self
                } else {
                    b
                }
            }
            #[inline(always)]
            fn minimum(self, b: Self) -> Self {
                if self.is_nan() || b.is_nan() {
                    <$t>::NAN
                } else if self < b {
                    self
                } else {
                    b
                }
            }
        }
        impl FloatElement for $t {
            #[inline(always)]
            fn div(self, b: Self) -> Self {
                self / b
            }
            /// The vectorizable `exp` of `kernel::vmath` (within 1 ulp, branch-free), not
            /// libm's: loops over it vectorize.
            #[inline(always)]
            fn exp(self) -> Self {
                crate::kernel::vmath::exp(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                crate::kernel::vmath::log(self)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                self.sqrt()
            }
            #[inline(always)]
            fn tanh(self) -> Self {
                crate::kernel::vmath::tanh(self)
            }
            #[inline(always)]
            fn sigmoid(self) -> Self {
                1.0 / (1.0 + FloatElement::exp(-self))
            }
            #[inline(always)]
            fn erf(self) -> Self {
                crate::kernel::vmath::erf(self)
            }
            #[inline(always)]
            fn ln_1p(self) -> Self {
                crate::kernel::vmath::log1p(self)
            }
            #[inline(always)]
            fn exp_m1(self) -> Self {
                crate::kernel::vmath::expm1(self)
            }
            #[inline(always)]
            fn sin(self) -> Self {
                crate::kernel::vmath::sin(self)
            }
            #[inline(always)]
            fn cos(self) -> Self {
                crate::kernel::vmath::cos(self)
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
        }
    };
}
float_num!(f32);
float_num!(f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts_follow_pytorch_rules() {
        assert_eq!(i32::cast_from(-2.7f64), -2);
        assert_eq!(u8::cast_from(300i64), 44);
        assert!(bool::cast_from(0.5f32));
        assert!(!bool::cast_from(0u8));
        assert_eq!(f32::cast_from(true), 1.0);
        assert_eq!(i64::cast_from(i64::MAX), i64::MAX);
    }

    /// Non-finite and out-of-range floats cast as PyTorch 2.15's CPU casts do on x86-64
    /// (measured with `torch.full(..., v, dtype=float64).to(float32/float64).to(dtype)`,
    /// the same for contiguous and strided tensors of 1, 5, 64 and 1000 elements).
    #[test]
    fn nonfinite_and_out_of_range_floats_cast_as_pytorch() {
        let (nan, inf) = (f64::NAN, f64::INFINITY);
        // (value, int32, int64, uint8), from float64.
        let table: [(f64, i32, i64, u8); 16] = [
            (nan, i32::MIN, i64::MIN, 0),
            (inf, i32::MIN, i64::MIN, 0),
            (-inf, i32::MIN, i64::MIN, 0),
            (1e10, i32::MIN, 10_000_000_000, 0),
            (-3e9, i32::MIN, -3_000_000_000, 0),
            (2147483648.0, i32::MIN, 2_147_483_648, 0),
            (-2147483649.0, i32::MIN, -2_147_483_649, 255),
            (9223372036854775808.0, i32::MIN, i64::MIN, 0),
            (-9223372036854775808.0, i32::MIN, i64::MIN, 0),
            (1e19, i32::MIN, i64::MIN, 0),
            (300.0, 300, 300, 44),
            (-1.0, -1, -1, 255),
            (-300.0, -300, -300, 212),
            (255.5, 255, 255, 255),
            (-2.7, -2, -2, 254),
            (4294967297.0, i32::MIN, 4_294_967_297, 1),
        ];
        for (v, i, l, u) in table {
            assert_eq!(i32::cast_from(v), i, "{v} -> int32");
            assert_eq!(i64::cast_from(v), l, "{v} -> int64");
            assert_eq!(u8::cast_from(v), u, "{v} -> uint8");
            assert!(bool::cast_from(v), "{v} -> bool");
        }
        // From float32 the same rules apply to the (exactly widened) value.
        assert_eq!(i32::cast_from(f32::NAN), i32::MIN);
        assert_eq!(i64::cast_from(f32::INFINITY), i64::MIN);
        assert_eq!(u8::cast_from(f32::INFINITY), 0);
        assert_eq!(i32::cast_from(-2147483648.0f32), i32::MIN);
        assert_eq!(i64::cast_from(-9223372036854775808.0f32), i64::MIN);
        assert_eq!(i64::cast_from(3e9f32), 3_000_000_000);
        assert_eq!(i32::cast_from(-2147483648.9f64), i32::MIN);
        assert_eq!(i32::cast_from(2147483647.9f64), i32::MAX);
        assert!(!bool::cast_from(-0.0f64));
    }

    #[test]
    fn float_maximum_propagates_nan() {
        assert!(NumElement::maximum(1.0f32, f32::NAN).is_nan());
        assert!(NumElement::minimum(f64::NAN, 1.0).is_nan());
        assert_eq!(NumElement::maximum(3i32, -4), 3);
        assert_eq!(NumElement::abs(i32::MIN), i32::MIN);
    }
}
