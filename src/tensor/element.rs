//! Element types: what a tensor can hold, how values cast between types, and the arithmetic
//! the built-in kernels need.

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
    /// Narrows a widened value with PyTorch-like cast semantics: float → int truncates toward
    /// zero into `i64` (saturating there, NaN → 0) and then wraps into narrower integer types
    /// (what PyTorch does on x86-64: `300.0 → u8` is 44, `-1.0 → u8` is 255), int → narrower
    /// int wraps, anything → bool is `!= 0`, bool → number is 0 or 1.
    fn from_scalar(s: Scalar) -> Self;
    /// Casts from another element type (see [`Element::from_scalar`]).
    #[inline(always)]
    fn cast_from<S: Element>(s: S) -> Self {
        Self::from_scalar(s.to_scalar())
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
                    Scalar::Float(f) => f as i64 as $t,
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

/// Floating-point elements: division and transcendental functions.
pub trait FloatElement: NumElement {
    /// `a / b`
    fn div(self, b: Self) -> Self;
    /// `e^a`, within 1 ulp (f32: 0.952 ulp, exhaustively measured; see `kernel::vmath`),
    /// vectorizable.
    fn exp(self) -> Self;
    /// natural logarithm
    fn ln(self) -> Self;
    /// square root
    fn sqrt(self) -> Self;
    /// hyperbolic tangent
    fn tanh(self) -> Self;
    /// `1 / (1 + e^-a)`
    fn sigmoid(self) -> Self;
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
                self.ln()
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                self.sqrt()
            }
            #[inline(always)]
            fn tanh(self) -> Self {
                self.tanh()
            }
            #[inline(always)]
            fn sigmoid(self) -> Self {
                1.0 / (1.0 + FloatElement::exp(-self))
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
        assert_eq!(i64::cast_from(f32::NAN), 0);
        assert_eq!(i64::cast_from(i64::MAX), i64::MAX);
    }

    #[test]
    fn float_maximum_propagates_nan() {
        assert!(NumElement::maximum(1.0f32, f32::NAN).is_nan());
        assert!(NumElement::minimum(f64::NAN, 1.0).is_nan());
        assert_eq!(NumElement::maximum(3i32, -4), 3);
        assert_eq!(NumElement::abs(i32::MIN), i32::MIN);
    }
}
