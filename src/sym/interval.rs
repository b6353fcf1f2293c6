//! Integer intervals with `i128` bounds and explicit infinities, for static decisions.
//!
//! Bounds are always sound: an operation whose exact bound does not fit is widened
//! (an upper bound rounds up, to +inf when needed; a lower bound rounds down).

use super::expr::{Atom, Expr, FuncKind, Symbol};

/// Stands for -infinity.
pub(crate) const NEG_INF: i128 = i128::MIN;
/// Stands for +infinity.
pub(crate) const POS_INF: i128 = i128::MAX;

/// A closed integer interval `[lo, hi]` (`NEG_INF`/`POS_INF` for unbounded sides).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Interval {
    /// Lower bound (inclusive), `i128::MIN` for -infinity.
    pub lo: i128,
    /// Upper bound (inclusive), `i128::MAX` for +infinity.
    pub hi: i128,
}

/// Which way to round a bound that does not fit.
#[derive(Clone, Copy, PartialEq)]
enum Round {
    Down,
    Up,
}

fn fix(v: Option<i128>, r: Round, positive_overflow: bool) -> i128 {
    match v {
        Some(x) if x != NEG_INF && x != POS_INF => x,
        _ => match (r, positive_overflow) {
            (Round::Up, true) => POS_INF,
            (Round::Up, false) => NEG_INF + 1,
            (Round::Down, true) => POS_INF - 1,
            (Round::Down, false) => NEG_INF,
        },
    }
}

fn add_b(a: i128, b: i128, r: Round) -> i128 {
    if a == NEG_INF || b == NEG_INF {
        return NEG_INF;
    }
    if a == POS_INF || b == POS_INF {
        return POS_INF;
    }
    fix(a.checked_add(b), r, a > 0)
}

fn mul_b(a: i128, b: i128, r: Round) -> i128 {
    if a == 0 || b == 0 {
        return 0;
    }
    let neg = (a < 0) != (b < 0);
    if a == NEG_INF || a == POS_INF || b == NEG_INF || b == POS_INF {
        return if neg { NEG_INF } else { POS_INF };
    }
    fix(a.checked_mul(b), r, !neg)
}

fn floordiv_b(a: i128, b: i128) -> i128 {
    // b >= 1 finite, a any.
    if a == NEG_INF || a == POS_INF {
        return a;
    }
    a.div_euclid(b)
}

impl Interval {
    /// Everything.
    pub const FULL: Interval = Interval {
        lo: NEG_INF,
        hi: POS_INF,
    };

    /// A single value.
    pub fn point(v: i128) -> Interval {
        Interval { lo: v, hi: v }
    }

    /// `[lo, hi]`.
    pub fn new(lo: i128, hi: i128) -> Interval {
        Interval { lo, hi }
    }

    /// True when the interval has no integer.
    pub fn is_empty(&self) -> bool {
        self.lo > self.hi
    }

    /// `Some(v)` when the interval is exactly one value.
    pub fn as_point(&self) -> Option<i128> {
        (self.lo == self.hi && self.lo != NEG_INF && self.lo != POS_INF).then_some(self.lo)
    }

    /// Intersection.
    pub fn meet(&self, o: &Interval) -> Interval {
        Interval {
            lo: self.lo.max(o.lo),
            hi: self.hi.min(o.hi),
        }
    }

    /// Smallest interval containing both.
    pub fn join(&self, o: &Interval) -> Interval {
        Interval {
            lo: self.lo.min(o.lo),
            hi: self.hi.max(o.hi),
        }
    }

    /// Sum.
    pub fn add(&self, o: &Interval) -> Interval {
        Interval {
            lo: add_b(self.lo, o.lo, Round::Down),
            hi: add_b(self.hi, o.hi, Round::Up),
        }
    }

    /// Negation.
    pub fn neg(&self) -> Interval {
        let n = |v: i128| {
            if v == NEG_INF {
                POS_INF
            } else if v == POS_INF {
                NEG_INF
            } else {
                -v
            }
        };
        Interval {
            lo: n(self.hi),
            hi: n(self.lo),
        }
    }

    /// Product.
    pub fn mul(&self, o: &Interval) -> Interval {
        let c = [
            (self.lo, o.lo),
            (self.lo, o.hi),
            (self.hi, o.lo),
            (self.hi, o.hi),
        ];
        let lo = c
            .iter()
            .map(|(a, b)| mul_b(*a, *b, Round::Down))
            .min()
            .unwrap_or(NEG_INF);
        let hi = c
            .iter()
            .map(|(a, b)| mul_b(*a, *b, Round::Up))
            .max()
            .unwrap_or(POS_INF);
        Interval { lo, hi }
    }

    /// `x ** e`.
    pub fn pow(&self, e: u32) -> Interval {
        if e == 0 {
            return Interval::point(1);
        }
        let mut acc = *self;
        for _ in 1..e {
            acc = acc.mul(self);
        }
        if e.is_multiple_of(2) {
            acc.lo = acc.lo.max(0);
        }
        acc
    }

    /// Floor division by a positive-divisor interval (`None` when the divisor may be <= 0).
    pub(crate) fn floordiv(&self, d: &Interval) -> Option<Interval> {
        if d.lo < 1 {
            return None;
        }
        let ds = [d.lo, d.hi];
        let mut lo = POS_INF;
        let mut hi = NEG_INF;
        for &a in &[self.lo, self.hi] {
            for &b in &ds {
                let v = if b == POS_INF {
                    // a / inf: 0 for a >= 0, -1 for a < 0 (or -inf).
                    if a >= 0 {
                        0
                    } else if a == NEG_INF {
                        NEG_INF
                    } else {
                        -1
                    }
                } else {
                    floordiv_b(a, b)
                };
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
        // Also, a/b with a in between can hit 0/-1 when a spans both signs and b large.
        if self.lo < 0 && self.hi >= 0 {
            lo = lo.min(-1);
            hi = hi.max(0);
        }
        Some(Interval { lo, hi })
    }

    /// Modulo by a positive-divisor interval.
    pub(crate) fn modulo(&self, d: &Interval) -> Option<Interval> {
        if d.lo < 1 {
            return None;
        }
        let top = if d.hi == POS_INF { POS_INF } else { d.hi - 1 };
        let mut r = Interval { lo: 0, hi: top };
        if self.lo >= 0 {
            r.hi = r.hi.min(self.hi);
        }
        Some(r)
    }
}

/// Interval of an expression given intervals for its symbols.
pub(crate) fn expr_interval(e: &Expr, sym: &dyn Fn(&Symbol) -> Interval) -> Interval {
    let mut acc = Interval::point(0);
    for t in e.terms() {
        let mut v = Interval::point(t.coef.to_i128_sat());
        if t.coef.as_i64().is_none() {
            v = if t.coef.signum() > 0 {
                Interval::new(i64::MAX as i128, POS_INF)
            } else {
                Interval::new(NEG_INF, i64::MIN as i128)
            };
        }
        for (a, exp) in &t.mono {
            let x = atom_interval(a, sym);
            v = v.mul(&x.pow(*exp));
        }
        acc = acc.add(&v);
    }
    acc
}

fn atom_interval(a: &Atom, sym: &dyn Fn(&Symbol) -> Interval) -> Interval {
    match a {
        Atom::Sym(s) => sym(s),
        Atom::Func(f) => {
            let args: Vec<Interval> = f.args.iter().map(|x| expr_interval(x, sym)).collect();
            match f.kind {
                FuncKind::Max => {
                    args.iter()
                        .fold(Interval::new(NEG_INF, NEG_INF), |acc, x| Interval {
                            lo: acc.lo.max(x.lo),
                            hi: acc.hi.max(x.hi),
                        })
                }
                FuncKind::Min => {
                    args.iter()
                        .fold(Interval::new(POS_INF, POS_INF), |acc, x| Interval {
                            lo: acc.lo.min(x.lo),
                            hi: acc.hi.min(x.hi),
                        })
                }
                FuncKind::FloorDiv => args[0].floordiv(&args[1]).unwrap_or(Interval::FULL),
                FuncKind::Mod => args[0].modulo(&args[1]).unwrap_or(Interval::FULL),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_is_sound() {
        let a = Interval::new(-3, 5);
        let b = Interval::new(2, 4);
        assert_eq!(a.mul(&b), Interval::new(-12, 20));
        assert_eq!(a.add(&b), Interval::new(-1, 9));
        assert_eq!(
            Interval::new(2, POS_INF).mul(&Interval::new(3, POS_INF)),
            Interval::new(6, POS_INF)
        );
        assert_eq!(a.pow(2), Interval::new(0, 25));
        assert_eq!(
            Interval::new(7, 9).floordiv(&Interval::new(2, 3)),
            Some(Interval::new(2, 4))
        );
        assert_eq!(
            Interval::new(-7, -7).floordiv(&Interval::new(2, 2)),
            Some(Interval::new(-4, -4))
        );
        let big = Interval::new(i128::MAX / 2, i128::MAX / 2);
        let p = big.mul(&big);
        assert!(p.hi == POS_INF && p.lo < POS_INF);
    }
}
