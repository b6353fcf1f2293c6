//! Exact integer coefficients: an `i64` fast path that falls back to `BigInt` on overflow.
//!
//! Coefficients of canonical polynomials must be exact (two expressions are equal iff their
//! canonical forms are), but in practice they are tiny. `Coeff` keeps the `i64` case inline and
//! only allocates when a checked operation overflows. A `Big` value never fits in an `i64`
//! (normalized), so structural equality is numeric equality.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

/// An exact integer: `i64` when it fits, otherwise a shared `BigInt`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub(crate) enum Coeff {
    Small(i64),
    Big(Arc<BigInt>),
}

impl Coeff {
    pub(crate) const ZERO: Coeff = Coeff::Small(0);
    pub(crate) const ONE: Coeff = Coeff::Small(1);

    pub(crate) fn from_big(b: BigInt) -> Coeff {
        match b.to_i64() {
            Some(v) => Coeff::Small(v),
            None => Coeff::Big(Arc::new(b)),
        }
    }

    pub(crate) fn to_big(&self) -> BigInt {
        match self {
            Coeff::Small(v) => BigInt::from(*v),
            Coeff::Big(b) => (**b).clone(),
        }
    }

    pub(crate) fn as_i64(&self) -> Option<i64> {
        match self {
            Coeff::Small(v) => Some(*v),
            Coeff::Big(_) => None,
        }
    }

    /// Saturating conversion to i128 (used by interval reasoning; saturation is handled by
    /// the caller as "unbounded").
    pub(crate) fn to_i128_sat(&self) -> i128 {
        match self {
            Coeff::Small(v) => *v as i128,
            Coeff::Big(b) => b.to_i128().unwrap_or(if b.is_negative() {
                i128::MIN
            } else {
                i128::MAX
            }),
        }
    }

    pub(crate) fn is_zero(&self) -> bool {
        matches!(self, Coeff::Small(0))
    }

    pub(crate) fn is_one(&self) -> bool {
        matches!(self, Coeff::Small(1))
    }

    pub(crate) fn signum(&self) -> i32 {
        match self {
            Coeff::Small(v) => v.signum() as i32,
            Coeff::Big(b) => {
                if b.is_negative() {
                    -1
                } else {
                    1
                }
            }
        }
    }

    pub(crate) fn add(&self, o: &Coeff) -> Coeff {
        if let (Coeff::Small(a), Coeff::Small(b)) = (self, o) {
            if let Some(r) = a.checked_add(*b) {
                return Coeff::Small(r);
            }
        }
        Coeff::from_big(self.to_big() + o.to_big())
    }

    #[allow(dead_code)]
    pub(crate) fn sub(&self, o: &Coeff) -> Coeff {
        if let (Coeff::Small(a), Coeff::Small(b)) = (self, o) {
            if let Some(r) = a.checked_sub(*b) {
                return Coeff::Small(r);
            }
        }
        Coeff::from_big(self.to_big() - o.to_big())
    }

    pub(crate) fn mul(&self, o: &Coeff) -> Coeff {
        if let (Coeff::Small(a), Coeff::Small(b)) = (self, o) {
            if let Some(r) = a.checked_mul(*b) {
                return Coeff::Small(r);
            }
        }
        Coeff::from_big(self.to_big() * o.to_big())
    }

    pub(crate) fn neg(&self) -> Coeff {
        if let Coeff::Small(a) = self {
            if let Some(r) = a.checked_neg() {
                return Coeff::Small(r);
            }
        }
        Coeff::from_big(-self.to_big())
    }

    #[allow(dead_code)]
    pub(crate) fn abs(&self) -> Coeff {
        if self.signum() < 0 {
            self.neg()
        } else {
            self.clone()
        }
    }

    /// Floor division; `None` when `o` is zero.
    pub(crate) fn div_floor(&self, o: &Coeff) -> Option<Coeff> {
        if o.is_zero() {
            return None;
        }
        if let (Coeff::Small(a), Coeff::Small(b)) = (self, o) {
            if !(*a == i64::MIN && *b == -1) {
                return Some(Coeff::Small(Integer::div_floor(a, b)));
            }
        }
        Some(Coeff::from_big(self.to_big().div_floor(&o.to_big())))
    }

    /// Modulo with the sign of the divisor (Python / sympy semantics); `None` when `o` is zero.
    pub(crate) fn mod_floor(&self, o: &Coeff) -> Option<Coeff> {
        if o.is_zero() {
            return None;
        }
        if let (Coeff::Small(a), Coeff::Small(b)) = (self, o) {
            if *b == -1 {
                return Some(Coeff::ZERO);
            }
            return Some(Coeff::Small(Integer::mod_floor(a, b)));
        }
        Some(Coeff::from_big(self.to_big().mod_floor(&o.to_big())))
    }

    pub(crate) fn gcd(&self, o: &Coeff) -> Coeff {
        if let (Coeff::Small(a), Coeff::Small(b)) = (self, o) {
            if *a != i64::MIN && *b != i64::MIN {
                return Coeff::Small(a.gcd(b));
            }
        }
        Coeff::from_big(self.to_big().gcd(&o.to_big()))
    }

    pub(crate) fn pow(&self, e: u32) -> Coeff {
        if let Coeff::Small(a) = self {
            if let Some(r) = a.checked_pow(e) {
                return Coeff::Small(r);
            }
        }
        Coeff::from_big(num_traits::pow(self.to_big(), e as usize))
    }

    pub(crate) fn cmp_num(&self, o: &Coeff) -> Ordering {
        match (self, o) {
            (Coeff::Small(a), Coeff::Small(b)) => a.cmp(b),
            _ => self.to_big().cmp(&o.to_big()),
        }
    }

    #[allow(dead_code)]
    pub(crate) fn one() -> Coeff {
        Coeff::from_big(BigInt::one())
    }

    #[allow(dead_code)]
    pub(crate) fn zero_big() -> BigInt {
        BigInt::zero()
    }
}

impl From<i64> for Coeff {
    fn from(v: i64) -> Self {
        Coeff::Small(v)
    }
}

impl fmt::Display for Coeff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Coeff::Small(v) => write!(f, "{v}"),
            Coeff::Big(b) => write!(f, "{b}"),
        }
    }
}

impl fmt::Debug for Coeff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflow_goes_big_and_back() {
        let a = Coeff::Small(i64::MAX);
        let b = a.add(&Coeff::ONE);
        assert!(matches!(b, Coeff::Big(_)));
        let c = b.sub(&Coeff::ONE);
        assert_eq!(c, Coeff::Small(i64::MAX));
        assert_eq!(Coeff::Small(i64::MIN).neg().neg(), Coeff::Small(i64::MIN));
        assert_eq!(
            Coeff::Small(i64::MIN)
                .div_floor(&Coeff::Small(-1))
                .unwrap()
                .sub(&Coeff::ONE),
            Coeff::Small(i64::MAX)
        );
    }

    #[test]
    fn floor_semantics() {
        assert_eq!(
            Coeff::Small(-7).div_floor(&Coeff::Small(2)),
            Some(Coeff::Small(-4))
        );
        assert_eq!(
            Coeff::Small(-7).mod_floor(&Coeff::Small(2)),
            Some(Coeff::Small(1))
        );
        assert_eq!(
            Coeff::Small(7).mod_floor(&Coeff::Small(-2)),
            Some(Coeff::Small(-1))
        );
        assert_eq!(Coeff::Small(7).div_floor(&Coeff::ZERO), None);
    }
}
