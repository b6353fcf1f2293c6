//! Exact evaluation against concrete symbol values.
//!
//! The fast path evaluates with checked `i64` arithmetic; on any overflow the whole
//! expression is re-evaluated with `BigInt`, so results are never wrapped. Only a final
//! integer result that does not fit `i64` is an [`Error::Overflow`].

use super::boolexpr::{BoolExpr, BoolKind, Rel};
use super::expr::{Atom, Expr, FuncKind, Symbol};
use super::num::Coeff;
use crate::error::{Error, Result};
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{Signed, ToPrimitive, Zero};

/// Concrete values of symbols (name → `i64`); a small sorted vector.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bindings {
    entries: Vec<(Symbol, i64)>,
}

impl Bindings {
    /// No bindings.
    pub fn new() -> Bindings {
        Bindings::default()
    }

    /// From `(name, value)` pairs; a later pair overrides an earlier one with the same name.
    pub fn from_pairs<S: AsRef<str>>(pairs: impl IntoIterator<Item = (S, i64)>) -> Bindings {
        let mut b = Bindings::new();
        for (k, v) in pairs {
            b.insert(k.as_ref(), v);
        }
        b
    }

    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<i64> {
        self.entries
            .binary_search_by(|(s, _)| s.as_str().cmp(name))
            .ok()
            .map(|i| self.entries[i].1)
    }

    /// Sets the value of `name` (replacing any previous one).
    pub fn insert(&mut self, name: &str, value: i64) {
        match self.entries.binary_search_by(|(s, _)| s.as_str().cmp(name)) {
            Ok(i) => self.entries[i].1 = value,
            Err(i) => self.entries.insert(i, (Symbol::new(name), value)),
        }
    }

    /// Number of bound symbols.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing is bound.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `(name, value)` pairs in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, i64)> + '_ {
        self.entries.iter().map(|(s, v)| (s.as_str(), *v))
    }
}

impl<S: AsRef<str>> FromIterator<(S, i64)> for Bindings {
    fn from_iter<T: IntoIterator<Item = (S, i64)>>(iter: T) -> Self {
        Bindings::from_pairs(iter)
    }
}

/// Looks a symbol's value up (`None` when unbound).
pub(crate) type Lookup<'a> = &'a dyn Fn(&Symbol) -> Option<i64>;

fn unbound(s: &Symbol) -> Error {
    Error::symbol(format!("no value bound for symbol `{s}`"))
}

fn div_zero(kind: FuncKind, args: &[Expr]) -> Error {
    Error::DivisionByZero {
        expr: format!("{}({}, {})", kind.name(), args[0], args[1]),
    }
}

/// `Ok(None)` means an intermediate overflowed `i64` (use the exact path).
pub(crate) fn eval_i64(e: &Expr, look: Lookup) -> Result<Option<i64>> {
    let mut acc: i64 = 0;
    for t in e.terms() {
        let Some(mut v) = t.coef.as_i64() else {
            return Ok(None);
        };
        for (a, exp) in &t.mono {
            let x = match a {
                Atom::Sym(s) => look(s).ok_or_else(|| unbound(s))?,
                Atom::Func(f) => match eval_func_i64(f.kind, &f.args, look)? {
                    Some(x) => x,
                    None => return Ok(None),
                },
            };
            let Some(p) = x.checked_pow(*exp) else {
                return Ok(None);
            };
            let Some(nv) = v.checked_mul(p) else {
                return Ok(None);
            };
            v = nv;
        }
        let Some(na) = acc.checked_add(v) else {
            return Ok(None);
        };
        acc = na;
    }
    Ok(Some(acc))
}

fn eval_func_i64(kind: FuncKind, args: &[Expr], look: Lookup) -> Result<Option<i64>> {
    let mut vals = [0i64; 2];
    match kind {
        FuncKind::FloorDiv | FuncKind::Mod => {
            for (i, a) in args.iter().take(2).enumerate() {
                match eval_i64(a, look)? {
                    Some(v) => vals[i] = v,
                    None => return Ok(None),
                }
            }
            let (a, b) = (vals[0], vals[1]);
            if b == 0 {
                return Err(div_zero(kind, args));
            }
            if b == -1 {
                return Ok(if kind == FuncKind::Mod {
                    Some(0)
                } else {
                    a.checked_neg()
                });
            }
            Ok(Some(if kind == FuncKind::Mod {
                Integer::mod_floor(&a, &b)
            } else {
                Integer::div_floor(&a, &b)
            }))
        }
        FuncKind::Max | FuncKind::Min => {
            let mut best: Option<i64> = None;
            for a in args {
                let Some(v) = eval_i64(a, look)? else {
                    return Ok(None);
                };
                best = Some(match best {
                    None => v,
                    Some(b) if kind == FuncKind::Max => b.max(v),
                    Some(b) => b.min(v),
                });
            }
            Ok(best)
        }
    }
}

/// Exact evaluation.
pub(crate) fn eval_big(e: &Expr, look: Lookup) -> Result<BigInt> {
    let mut acc = BigInt::zero();
    for t in e.terms() {
        let mut v = t.coef.to_big();
        for (a, exp) in &t.mono {
            let x = match a {
                Atom::Sym(s) => BigInt::from(look(s).ok_or_else(|| unbound(s))?),
                Atom::Func(f) => eval_func_big(f.kind, &f.args, look)?,
            };
            v *= num_traits::pow(x, *exp as usize);
        }
        acc += v;
    }
    Ok(acc)
}

fn eval_func_big(kind: FuncKind, args: &[Expr], look: Lookup) -> Result<BigInt> {
    match kind {
        FuncKind::FloorDiv | FuncKind::Mod => {
            let a = eval_big(&args[0], look)?;
            let b = eval_big(&args[1], look)?;
            if b.is_zero() {
                return Err(div_zero(kind, args));
            }
            Ok(if kind == FuncKind::Mod {
                a.mod_floor(&b)
            } else {
                a.div_floor(&b)
            })
        }
        FuncKind::Max | FuncKind::Min => {
            let mut best: Option<BigInt> = None;
            for a in args {
                let v = eval_big(a, look)?;
                best = Some(match best {
                    None => v,
                    Some(b) if kind == FuncKind::Max => b.max(v),
                    Some(b) => b.min(v),
                });
            }
            Ok(best.unwrap_or_default())
        }
    }
}

/// Exact value as a [`Coeff`] (i64 fast path).
pub(crate) fn eval_exact(e: &Expr, look: Lookup) -> Result<Coeff> {
    match eval_i64(e, look)? {
        Some(v) => Ok(Coeff::Small(v)),
        None => Ok(Coeff::from_big(eval_big(e, look)?)),
    }
}

/// The sign (-1, 0, 1) of `e`, exactly.
pub(crate) fn eval_sign(e: &Expr, look: Lookup) -> Result<i32> {
    match eval_i64(e, look)? {
        Some(v) => Ok(v.signum() as i32),
        None => {
            let b = eval_big(e, look)?;
            Ok(if b.is_zero() {
                0
            } else if b.is_negative() {
                -1
            } else {
                1
            })
        }
    }
}

pub(crate) fn eval_bool_with(b: &BoolExpr, look: Lookup) -> Result<bool> {
    Ok(match b.kind() {
        BoolKind::Const(v) => *v,
        BoolKind::Cmp(rel, p) => {
            let s = eval_sign(p, look)?;
            match rel {
                Rel::Eq => s == 0,
                Rel::Ne => s != 0,
                Rel::Le => s <= 0,
            }
        }
        BoolKind::And(v) | BoolKind::Or(v) => {
            // Order-independent: a decisive operand (false for And, true for Or) decides
            // even if another operand cannot be evaluated; otherwise the first error wins.
            let decisive = matches!(b.kind(), BoolKind::Or(_));
            let mut err = None;
            for x in v {
                match eval_bool_with(x, look) {
                    Ok(r) if r == decisive => return Ok(decisive),
                    Ok(_) => {}
                    Err(e) => {
                        if err.is_none() {
                            err = Some(e);
                        }
                    }
                }
            }
            match err {
                Some(e) => return Err(e),
                None => !decisive,
            }
        }
    })
}

impl Expr {
    /// Evaluates exactly; [`Error::Overflow`] if the result does not fit `i64`,
    /// [`Error::DivisionByZero`], or [`Error::Symbol`] for an unbound symbol.
    pub fn eval(&self, b: &Bindings) -> Result<i64> {
        let look = |s: &Symbol| b.get(s.as_str());
        match eval_exact(self, &look)? {
            Coeff::Small(v) => Ok(v),
            Coeff::Big(_) => Err(Error::overflow(format!("the value of `{self}`"))),
        }
    }

    /// Evaluates exactly to a `BigInt` (never overflows).
    pub fn eval_big(&self, b: &Bindings) -> Result<BigInt> {
        let look = |s: &Symbol| b.get(s.as_str());
        eval_big(self, &look)
    }
}

impl BoolExpr {
    /// Evaluates exactly (intermediate values never wrap).
    pub fn eval(&self, b: &Bindings) -> Result<bool> {
        let look = |s: &Symbol| b.get(s.as_str());
        eval_bool_with(self, &look)
    }
}

#[allow(dead_code)]
pub(crate) fn big_to_i64(b: &BigInt) -> Option<i64> {
    b.to_i64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eval_basic_and_overflow() {
        let b = Bindings::from_pairs([("a", 7), ("b", -2)]);
        assert_eq!(Expr::parse("a*b + 1").unwrap().eval(&b).unwrap(), -13);
        assert_eq!(Expr::parse("FloorDiv(a, b)").unwrap().eval(&b).unwrap(), -4);
        assert_eq!(Expr::parse("Mod(a, b)").unwrap().eval(&b).unwrap(), -1);
        assert_eq!(Expr::parse("Max(a, b, 3)").unwrap().eval(&b).unwrap(), 7);
        let big = Bindings::from_pairs([("a", i64::MAX), ("b", i64::MAX)]);
        // a*b - a*b + a: intermediate overflow, exact result fits.
        let e = Expr::parse("FloorDiv(a*b, b)").unwrap();
        assert_eq!(e.eval(&big).unwrap(), i64::MAX);
        assert!(matches!(
            Expr::parse("a + b").unwrap().eval(&big),
            Err(Error::Overflow { .. })
        ));
        assert!(BoolExpr::parse("a + b > a").unwrap().eval(&big).unwrap());
        let z = Bindings::from_pairs([("a", 1), ("b", 0)]);
        assert!(matches!(
            Expr::parse("FloorDiv(a, b)").unwrap().eval(&z),
            Err(Error::DivisionByZero { .. })
        ));
        assert!(matches!(
            Expr::parse("c").unwrap().eval(&z),
            Err(Error::Symbol { .. })
        ));
    }
}
