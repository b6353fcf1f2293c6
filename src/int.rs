//! The integer abstraction that lets layout and iterator algorithms be written once.
//!
//! PyTorch writes its layout code twice in spirit: once over `int64_t` for eager mode and
//! once (through `SymInt`) for tracing. Here every algorithm is generic over [`Int`], with
//! two implementations:
//!
//! * `i64` (with `bool` as its [`Bool`]): the concrete path. Branching is free and never
//!   fails; the reason closures are never called, so they cost nothing.
//! * `SymInt` (with `SymBool`): the symbolic path. Every branch that cannot be decided
//!   statically records a guard with the reason the closure produces.
//!
//! Callers of the concrete path validate their inputs first (sizes non-negative, products
//! within i64), so the arithmetic on validated values does not need to be checked again.
//! Values derived from several operands (the broadcast shape's products, an allocated
//! output's strides) are not bounded by any one operand's validation: those go through
//! [`Int::checked_mul`] / [`Int::mul_eq`], which behave identically on both paths.

use crate::error::{Error, Result};
use std::fmt;
use std::ops::{Add, Mul, Sub};

/// A boolean that may be symbolic. Branching on it goes through [`Bool::guard`].
pub trait Bool: Clone + fmt::Debug {
    /// A constant.
    fn from_bool(b: bool) -> Self;
    /// Logical and (no branching, no guard).
    fn and(&self, other: &Self) -> Self;
    /// Logical or (no branching, no guard).
    fn or(&self, other: &Self) -> Self;
    /// Logical not (no branching, no guard).
    fn not(&self) -> Self;
    /// Branch on the value. For a symbolic value that is not statically decidable this
    /// records a guard (the condition, or its negation when the hint says false) with the
    /// reason `why()` produces. Fails with a data-dependent error when the condition involves
    /// unbacked symbols and cannot be decided.
    fn guard(&self, why: impl FnOnce() -> String) -> Result<bool>;
    /// `Some(b)` when the value is known without any guard.
    fn statically_known(&self) -> Option<bool>;
    /// True only if statically known to be true; never records a guard, never fails.
    fn statically_known_true(&self) -> bool {
        self.statically_known() == Some(true)
    }
    /// Like [`Bool::guard`], but when the condition cannot be decided because of unbacked
    /// symbols, answers `false` without recording anything (PyTorch's `guard_or_false`).
    fn guard_or_false(&self, why: impl FnOnce() -> String) -> bool;
    /// Like [`Bool::guard_or_false`] with the default `true`.
    fn guard_or_true(&self, why: impl FnOnce() -> String) -> bool;
}

/// An integer that may be symbolic: the type layout and iterator algorithms are generic over.
pub trait Int:
    Clone + fmt::Debug + fmt::Display + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self>
{
    /// The boolean produced by comparisons.
    type Bool: Bool;
    /// Whether values may be symbolic (false for `i64`): lets generic code skip work that
    /// only a symbolic trace needs.
    const SYMBOLIC: bool;
    /// A constant.
    fn from_i64(v: i64) -> Self;
    /// The example value (concrete value for `i64`), `None` for an unbacked symbol.
    fn hint(&self) -> Option<i64>;
    /// `Some(v)` when the value is a known constant (no symbols).
    fn as_const(&self) -> Option<i64>;
    /// Runs `f` with its decisions taken as *plan decisions* on the environment of the
    /// first symbolic value of `probe` ([`ShapeEnv::plan_scope`](crate::sym::ShapeEnv::plan_scope)):
    /// decisions that only choose how a kernel iterates. Plain `f()` for `i64`.
    fn plan_scope<'a, R>(
        probe: impl IntoIterator<Item = &'a Self>,
        f: impl FnOnce() -> Result<R>,
    ) -> Result<R>
    where
        Self: 'a,
    {
        let _ = probe;
        f()
    }
    /// `self == other`
    fn sym_eq(&self, other: &Self) -> Self::Bool;
    /// `self != other`
    fn sym_ne(&self, other: &Self) -> Self::Bool {
        self.sym_eq(other).not()
    }
    /// `self < other`
    fn sym_lt(&self, other: &Self) -> Self::Bool;
    /// `self <= other`
    fn sym_le(&self, other: &Self) -> Self::Bool;
    /// `self > other`
    fn sym_gt(&self, other: &Self) -> Self::Bool {
        other.sym_lt(self)
    }
    /// `self >= other`
    fn sym_ge(&self, other: &Self) -> Self::Bool {
        other.sym_le(self)
    }
    /// `max(self, other)` as a value (no branching).
    fn max(&self, other: &Self) -> Self;
    /// `min(self, other)` as a value (no branching).
    fn min(&self, other: &Self) -> Self;
    /// `self * other` when it fits in i64, else [`Error::Overflow`] naming `what`. A
    /// symbolic product is checked at its hint (the concrete values it was traced with), so
    /// the concrete and the symbolic path fail on exactly the same inputs. For results that
    /// end up in a plan or an output layout, where a wrapped value would be a wrong answer.
    fn checked_mul(&self, other: &Self, what: impl FnOnce() -> String) -> Result<Self>;
    /// `self * factor == other`, decided exactly: a product outside i64 equals no i64, so
    /// the comparison never overflows (TensorIterator's coalescing test).
    fn mul_eq(&self, factor: &Self, other: &Self) -> Self::Bool;

    /// Floor division (Python `//`). The caller guarantees `other != 0` (and, on the
    /// concrete path, that the quotient fits: not `i64::MIN // -1`).
    fn floor_div(&self, other: &Self) -> Self;
    /// Modulo with the sign of the divisor (Python `%`). The caller guarantees `other != 0`.
    fn modulo(&self, other: &Self) -> Self;

    /// `self == v` for a constant.
    fn eq_i(&self, v: i64) -> Self::Bool {
        self.sym_eq(&Self::from_i64(v))
    }
    /// `self != v` for a constant.
    fn ne_i(&self, v: i64) -> Self::Bool {
        self.sym_ne(&Self::from_i64(v))
    }
    /// `self < v` for a constant.
    fn lt_i(&self, v: i64) -> Self::Bool {
        self.sym_lt(&Self::from_i64(v))
    }
    /// `self >= v` for a constant.
    fn ge_i(&self, v: i64) -> Self::Bool {
        self.sym_ge(&Self::from_i64(v))
    }
}

impl Bool for bool {
    #[inline]
    fn from_bool(b: bool) -> Self {
        b
    }
    #[inline]
    fn and(&self, other: &Self) -> Self {
        *self && *other
    }
    #[inline]
    fn or(&self, other: &Self) -> Self {
        *self || *other
    }
    #[inline]
    fn not(&self) -> Self {
        !*self
    }
    #[inline]
    fn guard(&self, _why: impl FnOnce() -> String) -> Result<bool> {
        Ok(*self)
    }
    #[inline]
    fn statically_known(&self) -> Option<bool> {
        Some(*self)
    }
    #[inline]
    fn guard_or_false(&self, _why: impl FnOnce() -> String) -> bool {
        *self
    }
    #[inline]
    fn guard_or_true(&self, _why: impl FnOnce() -> String) -> bool {
        *self
    }
}

impl Int for i64 {
    type Bool = bool;
    const SYMBOLIC: bool = false;
    #[inline]
    fn from_i64(v: i64) -> Self {
        v
    }
    #[inline]
    fn hint(&self) -> Option<i64> {
        Some(*self)
    }
    #[inline]
    fn as_const(&self) -> Option<i64> {
        Some(*self)
    }
    #[inline]
    fn sym_eq(&self, other: &Self) -> bool {
        self == other
    }
    #[inline]
    fn sym_ne(&self, other: &Self) -> bool {
        self != other
    }
    #[inline]
    fn sym_lt(&self, other: &Self) -> bool {
        self < other
    }
    #[inline]
    fn sym_le(&self, other: &Self) -> bool {
        self <= other
    }
    #[inline]
    fn max(&self, other: &Self) -> Self {
        std::cmp::max(*self, *other)
    }
    #[inline]
    fn min(&self, other: &Self) -> Self {
        std::cmp::min(*self, *other)
    }
    #[inline]
    fn floor_div(&self, other: &Self) -> Self {
        num_integer::Integer::div_floor(self, other)
    }
    #[inline]
    fn modulo(&self, other: &Self) -> Self {
        if *other == -1 {
            0
        } else {
            num_integer::Integer::mod_floor(self, other)
        }
    }
    #[inline]
    fn checked_mul(&self, other: &Self, what: impl FnOnce() -> String) -> Result<Self> {
        i64::checked_mul(*self, *other).ok_or_else(|| Error::overflow(what()))
    }
    #[inline]
    fn mul_eq(&self, factor: &Self, other: &Self) -> bool {
        i64::checked_mul(*self, *factor) == Some(*other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generic_max_via_branch<I: Int>(a: &I, b: &I) -> Result<I> {
        Ok(if a.sym_lt(b).guard(|| "test".into())? {
            b.clone()
        } else {
            a.clone()
        })
    }

    #[test]
    fn checked_arithmetic_never_wraps() {
        let big = 1i64 << 62;
        assert!(matches!(
            Int::checked_mul(&big, &2, || "x".into()),
            Err(Error::Overflow { .. })
        ));
        // 2^62 * 4 wraps to 0 in i64: it must not compare equal to 0.
        assert!(!Int::mul_eq(&big, &4, &0));
        assert!(Int::mul_eq(&big, &1, &big));
    }

    #[test]
    fn concrete_branching_matches_std() {
        for a in -3..4i64 {
            for b in -3..4i64 {
                assert_eq!(generic_max_via_branch(&a, &b).unwrap(), a.max(b));
                assert_eq!(a.sym_ge(&b), a >= b);
                assert_eq!(a.sym_gt(&b), a > b);
                assert_eq!(Int::max(&a, &b), std::cmp::max(a, b));
                assert_eq!(Int::min(&a, &b), std::cmp::min(a, b));
                assert_eq!(Int::checked_mul(&a, &b, String::new).unwrap(), a * b);
                assert!(Int::mul_eq(&a, &b, &(a * b)));
            }
        }
    }
}
