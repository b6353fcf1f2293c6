//! Boolean expressions over [`Expr`] in a canonical negation normal form.
//!
//! Comparisons are normalized to `p == 0`, `p != 0` or `p <= 0` with `p` a canonical
//! polynomial whose non-constant coefficients are coprime (and, for `==`/`!=`, whose leading
//! coefficient is positive). `a < b` becomes `a - b + 1 <= 0` (integers). Negation is pushed
//! to the leaves (every comparison has a comparison as negation), `And`/`Or` are flattened,
//! sorted and deduplicated. So equivalent guards written differently compare equal.

use super::expr::Expr;
use super::num::Coeff;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// The relation of a canonical comparison `p REL 0`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Rel {
    /// `p == 0`
    Eq,
    /// `p != 0`
    Ne,
    /// `p <= 0`
    Le,
}

#[derive(Clone, PartialEq, Eq)]
pub(crate) enum BoolKind {
    Const(bool),
    Cmp(Rel, Expr),
    And(Vec<BoolExpr>),
    Or(Vec<BoolExpr>),
}

pub(crate) struct BoolNode {
    pub(crate) kind: BoolKind,
    hash: u64,
}

/// A symbolic boolean (comparisons combined with and/or), canonical; cheap to clone.
#[derive(Clone)]
pub struct BoolExpr(pub(crate) Arc<BoolNode>);

impl BoolExpr {
    fn make(kind: BoolKind) -> BoolExpr {
        let mut h = super::expr::FxHasher::default();
        match &kind {
            BoolKind::Const(b) => h.write_u8(*b as u8),
            BoolKind::Cmp(r, p) => {
                h.write_u8(10 + *r as u8);
                h.write_u64(p.hash_u64());
            }
            BoolKind::And(v) | BoolKind::Or(v) => {
                h.write_u8(if matches!(kind, BoolKind::And(_)) {
                    20
                } else {
                    21
                });
                for b in v {
                    h.write_u64(b.0.hash);
                }
            }
        }
        BoolExpr(Arc::new(BoolNode {
            kind,
            hash: h.finish(),
        }))
    }

    pub(crate) fn kind(&self) -> &BoolKind {
        &self.0.kind
    }

    /// A constant.
    pub fn constant(b: bool) -> BoolExpr {
        BoolExpr::make(BoolKind::Const(b))
    }

    /// `Some(b)` for a constant.
    pub fn as_const(&self) -> Option<bool> {
        match self.kind() {
            BoolKind::Const(b) => Some(*b),
            _ => None,
        }
    }

    /// `Some((rel, p))` when this is a single comparison `p REL 0`.
    pub fn as_cmp(&self) -> Option<(Rel, &Expr)> {
        match self.kind() {
            BoolKind::Cmp(r, p) => Some((*r, p)),
            _ => None,
        }
    }

    /// The canonical comparison `p REL 0`.
    pub fn cmp0(rel: Rel, p: Expr) -> BoolExpr {
        if let Some(c) = p.as_coeff() {
            let s = c.signum();
            return BoolExpr::constant(match rel {
                Rel::Eq => s == 0,
                Rel::Ne => s != 0,
                Rel::Le => s <= 0,
            });
        }
        let k = p.constant_term();
        let x = p.without_constant();
        let mut g = x.content();
        if matches!(rel, Rel::Eq | Rel::Ne) && x.terms()[0].coef.signum() < 0 {
            g = g.neg();
        }
        if g.is_one() {
            return BoolExpr::make(BoolKind::Cmp(rel, p));
        }
        let x = x.div_exact(&g);
        match rel {
            Rel::Eq | Rel::Ne => {
                let r = k.mod_floor(&g).unwrap_or(Coeff::ZERO);
                if !r.is_zero() {
                    return BoolExpr::constant(rel == Rel::Ne);
                }
                let k = k.div_floor(&g).unwrap_or(Coeff::ZERO);
                BoolExpr::make(BoolKind::Cmp(rel, x.add(&Expr::from_coeff(k))))
            }
            Rel::Le => {
                // g*x + k <= 0  <=>  x <= -k/g  <=>  x <= floor(-k/g)  <=>  x - floor(-k/g) <= 0
                let bound = k.neg().div_floor(&g).unwrap_or(Coeff::ZERO);
                BoolExpr::make(BoolKind::Cmp(rel, x.sub(&Expr::from_coeff(bound))))
            }
        }
    }

    /// `a == b`
    pub fn eq(a: &Expr, b: &Expr) -> BoolExpr {
        BoolExpr::cmp0(Rel::Eq, a.sub(b))
    }
    /// `a != b`
    pub fn ne(a: &Expr, b: &Expr) -> BoolExpr {
        BoolExpr::cmp0(Rel::Ne, a.sub(b))
    }
    /// `a <= b`
    pub fn le(a: &Expr, b: &Expr) -> BoolExpr {
        BoolExpr::cmp0(Rel::Le, a.sub(b))
    }
    /// `a < b`
    pub fn lt(a: &Expr, b: &Expr) -> BoolExpr {
        BoolExpr::cmp0(Rel::Le, a.sub(b).add(&Expr::constant(1)))
    }
    /// `a >= b`
    pub fn ge(a: &Expr, b: &Expr) -> BoolExpr {
        BoolExpr::le(b, a)
    }
    /// `a > b`
    pub fn gt(a: &Expr, b: &Expr) -> BoolExpr {
        BoolExpr::lt(b, a)
    }

    /// Logical negation (pushed to the comparisons).
    pub fn not(&self) -> BoolExpr {
        match self.kind() {
            BoolKind::Const(b) => BoolExpr::constant(!b),
            BoolKind::Cmp(Rel::Eq, p) => BoolExpr::make(BoolKind::Cmp(Rel::Ne, p.clone())),
            BoolKind::Cmp(Rel::Ne, p) => BoolExpr::make(BoolKind::Cmp(Rel::Eq, p.clone())),
            BoolKind::Cmp(Rel::Le, p) => BoolExpr::cmp0(Rel::Le, Expr::constant(1).sub(p)),
            BoolKind::And(v) => BoolExpr::or_all(v.iter().map(|b| b.not())),
            BoolKind::Or(v) => BoolExpr::and_all(v.iter().map(|b| b.not())),
        }
    }

    /// `self && other`
    pub fn and(&self, other: &BoolExpr) -> BoolExpr {
        BoolExpr::and_all([self.clone(), other.clone()])
    }

    /// `self || other`
    pub fn or(&self, other: &BoolExpr) -> BoolExpr {
        BoolExpr::or_all([self.clone(), other.clone()])
    }

    /// Conjunction of all (true when empty).
    pub fn and_all(items: impl IntoIterator<Item = BoolExpr>) -> BoolExpr {
        BoolExpr::junction(true, items)
    }

    /// Disjunction of all (false when empty).
    pub fn or_all(items: impl IntoIterator<Item = BoolExpr>) -> BoolExpr {
        BoolExpr::junction(false, items)
    }

    fn junction(is_and: bool, items: impl IntoIterator<Item = BoolExpr>) -> BoolExpr {
        let mut flat = Vec::new();
        for b in items {
            match b.kind() {
                BoolKind::Const(c) => {
                    if *c != is_and {
                        return BoolExpr::constant(*c);
                    }
                }
                BoolKind::And(v) if is_and => flat.extend(v.iter().cloned()),
                BoolKind::Or(v) if !is_and => flat.extend(v.iter().cloned()),
                _ => flat.push(b),
            }
        }
        flat.sort_by(BoolExpr::canon_cmp);
        flat.dedup();
        // x && !x is false, x || !x is true.
        for b in &flat {
            if b.as_cmp().is_some() && flat.binary_search_by(|x| x.canon_cmp(&b.not())).is_ok() {
                return BoolExpr::constant(!is_and);
            }
        }
        match flat.len() {
            0 => BoolExpr::constant(is_and),
            1 => flat.pop().unwrap_or_else(|| BoolExpr::constant(is_and)),
            _ => BoolExpr::make(if is_and {
                BoolKind::And(flat)
            } else {
                BoolKind::Or(flat)
            }),
        }
    }

    /// All symbols, sorted and deduplicated.
    pub fn symbols(&self) -> Vec<super::expr::Symbol> {
        let mut out = Vec::new();
        self.collect_symbols(&mut out);
        out.sort();
        out.dedup();
        out
    }

    pub(crate) fn collect_symbols(&self, out: &mut Vec<super::expr::Symbol>) {
        match self.kind() {
            BoolKind::Const(_) => {}
            BoolKind::Cmp(_, p) => p.collect_symbols(out),
            BoolKind::And(v) | BoolKind::Or(v) => v.iter().for_each(|b| b.collect_symbols(out)),
        }
    }

    /// Number of nodes (the size measure limits use).
    pub fn node_count(&self) -> usize {
        match self.kind() {
            BoolKind::Const(_) => 1,
            BoolKind::Cmp(_, p) => 1 + p.node_count(),
            BoolKind::And(v) | BoolKind::Or(v) => {
                1 + v.iter().map(|b| b.node_count()).sum::<usize>()
            }
        }
    }

    /// All compared polynomials.
    pub(crate) fn exprs(&self) -> Vec<&Expr> {
        let mut out = Vec::new();
        fn walk<'a>(b: &'a BoolExpr, out: &mut Vec<&'a Expr>) {
            match b.kind() {
                BoolKind::Const(_) => {}
                BoolKind::Cmp(_, p) => out.push(p),
                BoolKind::And(v) | BoolKind::Or(v) => v.iter().for_each(|x| walk(x, out)),
            }
        }
        walk(self, &mut out);
        out
    }

    /// True when some comparison involves a `FloorDiv`/`Mod`/`Max`/`Min` atom.
    pub fn has_non_polynomial(&self) -> bool {
        match self.kind() {
            BoolKind::Const(_) => false,
            BoolKind::Cmp(_, p) => p.has_non_polynomial(),
            BoolKind::And(v) | BoolKind::Or(v) => v.iter().any(|b| b.has_non_polynomial()),
        }
    }

    /// Replaces symbols by expressions (and re-canonicalizes).
    pub fn substitute(&self, f: &dyn Fn(&super::expr::Symbol) -> Option<Expr>) -> BoolExpr {
        self.map_exprs(&|p| p.substitute(f))
    }

    /// Rewrites every compared polynomial with `f` (and re-canonicalizes).
    pub(crate) fn map_exprs(&self, f: &dyn Fn(&Expr) -> Expr) -> BoolExpr {
        match self.kind() {
            BoolKind::Const(_) => self.clone(),
            BoolKind::Cmp(r, p) => {
                let q = f(p);
                if q == *p {
                    self.clone()
                } else {
                    BoolExpr::cmp0(*r, q)
                }
            }
            BoolKind::And(v) => BoolExpr::and_all(v.iter().map(|b| b.map_exprs(f))),
            BoolKind::Or(v) => BoolExpr::or_all(v.iter().map(|b| b.map_exprs(f))),
        }
    }
}

impl PartialEq for BoolExpr {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
            || (self.0.hash == other.0.hash && self.0.kind == other.0.kind)
    }
}
impl Eq for BoolExpr {}
impl Hash for BoolExpr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.hash)
    }
}
impl BoolExpr {
    /// The canonical total order (used to sort `And`/`Or` items).
    pub(crate) fn canon_cmp(&self, other: &Self) -> Ordering {
        if Arc::ptr_eq(&self.0, &other.0) {
            return Ordering::Equal;
        }
        fn rank(k: &BoolKind) -> u8 {
            match k {
                BoolKind::Const(_) => 0,
                BoolKind::Cmp(..) => 1,
                BoolKind::And(_) => 2,
                BoolKind::Or(_) => 3,
            }
        }
        let (a, b) = (self.kind(), other.kind());
        rank(a).cmp(&rank(b)).then_with(|| match (a, b) {
            (BoolKind::Const(x), BoolKind::Const(y)) => x.cmp(y),
            (BoolKind::Cmp(r1, p1), BoolKind::Cmp(r2, p2)) => {
                r1.cmp(r2).then_with(|| p1.canon_cmp(p2))
            }
            (BoolKind::And(x), BoolKind::And(y)) | (BoolKind::Or(x), BoolKind::Or(y)) => {
                for (u, v) in x.iter().zip(y.iter()) {
                    let o = u.canon_cmp(v);
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                x.len().cmp(&y.len())
            }
            _ => Ordering::Equal,
        })
    }
}
impl fmt::Debug for BoolExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BoolExpr({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equivalent_comparisons_are_equal() {
        let a = Expr::symbol("a");
        let b = Expr::symbol("b");
        assert_eq!(BoolExpr::lt(&a, &b), BoolExpr::le(&(a.clone() + 1), &b));
        assert_eq!(
            BoolExpr::ge(&a, &Expr::constant(2)),
            BoolExpr::gt(&a, &Expr::constant(1))
        );
        assert_eq!(BoolExpr::eq(&a, &b), BoolExpr::eq(&b, &a));
        assert_eq!(
            BoolExpr::eq(&(a.clone() * 2), &(b.clone() * 2)),
            BoolExpr::eq(&a, &b)
        );
        assert_eq!(
            BoolExpr::eq(&(a.clone() * 2), &Expr::constant(3)),
            BoolExpr::constant(false)
        );
        assert_eq!(
            BoolExpr::le(&(a.clone() * 2), &Expr::constant(3)),
            BoolExpr::le(&a, &Expr::constant(1))
        );
        assert_eq!(BoolExpr::lt(&a, &b).not(), BoolExpr::ge(&a, &b));
        let x = BoolExpr::eq(&a, &b);
        assert_eq!(x.and(&x.not()), BoolExpr::constant(false));
        assert_eq!(x.not().not(), x);
    }
}
