//! A read-only view of an expression's polynomial terms.
//!
//! Code that evaluates the same expressions millions of times (the ahead-of-time dispatcher
//! instantiating plan strides) compiles them once into flat programs; it needs the terms,
//! which the canonical form keeps private.

use super::boolexpr::{BoolExpr, BoolKind, Rel};
use super::expr::{Atom, Expr, FxMap, Symbol};
use super::interval::{Interval, POS_INF};
use super::knowledge::Knowledge;
use std::sync::Arc;

/// Decides `goal` from lower bounds on symbols (`(symbol, min)`, unbounded above) and
/// assumed `facts`, with the static reasoning of a `ShapeEnv` (canonical form, intervals,
/// facts; no simplifier) but without hints: the facts need not hold anywhere in particular,
/// so this answers implication questions such as "does `h != 1` imply `h*w != 1` when
/// `h, w >= 1`?". `None` when undecided.
pub fn decide_under(mins: &[(Symbol, i64)], facts: &[&BoolExpr], goal: &BoolExpr) -> Option<bool> {
    let ranges: FxMap<Symbol, Interval> = mins
        .iter()
        .map(|(s, m)| (s.clone(), Interval::new(*m as i128, POS_INF)))
        .collect();
    let mut k = Knowledge::new(ranges);
    for f in facts {
        k.assume(f);
    }
    k.decide(goal)
}

/// [`decide_under`], then with `Max`/`Min`/`FloorDiv`/`Mod` atoms the assumptions decide
/// rewritten (`Max(n, 1)` is `n` under `n >= 1`), then by case splits on the remaining
/// `Max`/`Min` atoms (at most 3 nested). For equalities of plan expressions, where
/// `Max(n, 1) == n` must be provable from `n >= 1`.
pub fn decide_under_by_cases(
    mins: &[(Symbol, i64)],
    facts: &[&BoolExpr],
    goal: &BoolExpr,
) -> Option<bool> {
    let ranges: FxMap<Symbol, Interval> = mins
        .iter()
        .map(|(s, m)| (s.clone(), Interval::new(*m as i128, POS_INF)))
        .collect();
    let mut k = Knowledge::new(ranges);
    for f in facts {
        k.assume(f);
    }
    decide_with_cases(&k, goal)
}

/// The decision of [`decide_under_by_cases`] once the facts are assumed.
fn decide_with_cases(k: &Knowledge, goal: &BoolExpr) -> Option<bool> {
    if let Some(v) = k.decide(goal) {
        return Some(v);
    }
    let reduced = goal.map_exprs(&|p| k.reduce_atoms(p));
    if let Some(v) = reduced.as_const().or_else(|| k.decide(&reduced)) {
        return Some(v);
    }
    k.decide_by_cases(&reduced, 3).ok().flatten()
}

/// What is known inside one region of a case split over conditions: lower bounds on the
/// symbols plus the conditions assumed so far, with the static reasoning of a `ShapeEnv`
/// (canonical form, intervals, bounds, exclusions, substitutions; `Max`/`Min` atoms by case
/// splits). Used by `--cover` to prove that a set of guard sets covers a domain: each branch
/// of the split assumes one more literal, and a literal the facts already decide is either
/// implied (nothing to split) or contradictory (the region is empty).
#[derive(Clone, Debug)]
pub struct Facts {
    k: Knowledge,
}

impl Facts {
    /// No facts beyond `symbol >= min` for each `(symbol, min)` (unbounded above).
    pub fn new(mins: &[(Symbol, i64)]) -> Facts {
        Facts {
            k: Knowledge::new(
                mins.iter()
                    .map(|(s, m)| (s.clone(), Interval::new(*m as i128, POS_INF)))
                    .collect(),
            ),
        }
    }

    /// Adds a condition known to hold in this region.
    pub fn assume(&mut self, b: &BoolExpr) {
        self.k.assume(b);
    }

    /// Decides `goal` in this region: `Some(true)` when the facts imply it, `Some(false)`
    /// when they imply its negation, `None` when undecided.
    pub fn decide(&self, goal: &BoolExpr) -> Option<bool> {
        if let Some(v) = self.k.decide(goal) {
            return Some(v);
        }
        if goal.has_non_polynomial() {
            let g = self.k.apply_subst_bool(goal);
            return self.k.decide_by_cases(&g, 3).ok().flatten();
        }
        None
    }

    /// Decides `goal` from the facts alone, without [`Facts::decide`]'s case split on
    /// non-polynomial atoms: exactly [`decide_under`] with these facts, for callers that
    /// decide many goals under the same facts and so assume them once.
    pub fn decide_plain(&self, goal: &BoolExpr) -> Option<bool> {
        self.k.decide(goal)
    }

    /// Decides `goal` from the facts as [`decide_under_by_cases`] does (with `Max`/`Min`
    /// atoms the facts decide rewritten, then case splits): exactly its answer for these
    /// facts, for callers that decide many goals under the same facts.
    pub fn decide_by_cases(&self, goal: &BoolExpr) -> Option<bool> {
        decide_with_cases(&self.k, goal)
    }

    /// True when no integer point satisfies every one of `lits` with each symbol in the
    /// interval these facts give it: linear reasoning over the whole conjunction (`linear.rs`:
    /// `Max`/`Min` split into cases, `FloorDiv`/`Mod` by a constant as a quotient with its
    /// bounds, products cut linearly on their factors' bounds, Fourier-Motzkin), which
    /// sees contradictions that no single decision shows (`k >= 1`, `k <= FloorDiv(k, 2)`;
    /// `a*s <= a + 1` with `a, s >= 2`). `false` when none was found, which says nothing.
    pub fn refutes(&self, lits: &[BoolExpr]) -> bool {
        let range = |s: &Symbol| self.k.interval(&Expr::from_symbol(s));
        super::linear::conjunction_is_empty(lits, &range)
    }

    /// The interval the facts give a symbol: `(lo, hi)` with `None` for unbounded.
    pub fn range(&self, s: &Symbol) -> (Option<i64>, Option<i64>) {
        let iv = self.k.interval(&Expr::from_symbol(s));
        let lo = (iv.lo != i128::MIN)
            .then(|| i64::try_from(iv.lo).ok())
            .flatten();
        let hi = (iv.hi != POS_INF)
            .then(|| i64::try_from(iv.hi).ok())
            .flatten();
        (lo, hi)
    }

    /// `b` rewritten with the facts: substitutions from assumed equalities applied, then
    /// monomial factors the facts make positive cancelled (`a*s == s` with `s >= 1` is
    /// `a == 1`), so that what intervals cannot see in `b` becomes visible. Equivalent
    /// to `b` wherever the facts hold.
    pub fn normalize(&self, b: &BoolExpr) -> BoolExpr {
        let mut b = self.k.apply_subst_bool(b);
        // `Max`/`Min` atoms the intervals decide are rewritten first (`Max(s, 1)` is `s`
        // where `s >= 1`), so that the comparison becomes polynomial and the cancellation
        // below applies to it.
        if b.has_non_polynomial() {
            b = b.map_exprs(&|e| self.k.reduce_atoms(e));
        }
        b.cancel_positive_monomials(&|s| self.k.interval(&Expr::from_symbol(s)).lo >= 1)
    }

    /// The expression a symbol was eliminated for by an assumed equality (`b` for `a` after
    /// `a == b`), if any.
    pub fn substitution(&self, s: &Symbol) -> Option<Expr> {
        let e = self.k.apply_subst(&Expr::from_symbol(s));
        (e.as_symbol() != Some(s)).then_some(e)
    }
}

/// One term of a polynomial: `coefficient * Π symbol^exponent`.
pub type PolyTerm = (i64, Vec<(Symbol, u32)>);

impl Expr {
    /// The terms of the expression when it is a plain polynomial in symbols with `i64`
    /// coefficients (no `FloorDiv`/`Mod`/`Max`/`Min` nodes, no big coefficients); `None`
    /// otherwise. The constant term is a term with no factors; zero has no terms.
    pub fn polynomial_terms(&self) -> Option<Vec<PolyTerm>> {
        let mut out = Vec::with_capacity(self.terms().len());
        for t in self.terms() {
            let coef = t.coef.as_i64()?;
            let mut factors = Vec::with_capacity(t.mono.len());
            for (a, e) in &t.mono {
                match a {
                    Atom::Sym(s) => factors.push((s.clone(), *e)),
                    Atom::Func(_) => return None,
                }
            }
            out.push((coef, factors));
        }
        Some(out)
    }
}

impl BoolExpr {
    /// The operands of a conjunction (`None` when this is not an `&&`).
    pub fn conjuncts(&self) -> Option<&[BoolExpr]> {
        match self.kind() {
            BoolKind::And(v) => Some(v),
            _ => None,
        }
    }

    /// Cancels positive monomial factors from every comparison (see
    /// [`Expr::split_positive_monomial`]), giving an equivalent condition whenever the
    /// symbols `positive` accepts are `>= 1`: `c < c*w` becomes `w >= 2` (that is,
    /// `c - c*w + 1 <= 0` becomes `1 - w + 1 <= 0`), `h*w == w` becomes `h == 1`.
    /// Only constant terms 0 (and 1 for `<=`, a strict comparison) allow the cancellation.
    pub fn cancel_positive_monomials(&self, positive: &dyn Fn(&Symbol) -> bool) -> BoolExpr {
        match self.kind() {
            BoolKind::Const(_) => self.clone(),
            BoolKind::And(v) | BoolKind::Or(v) => {
                let parts: Vec<BoolExpr> = v
                    .iter()
                    .map(|b| b.cancel_positive_monomials(positive))
                    .collect();
                // Nothing cancelled: `self` is already the normalized junction of these
                // parts (rebuilding it would sort and negate every part again).
                if parts.iter().zip(v).all(|(a, b)| Arc::ptr_eq(&a.0, &b.0)) {
                    return self.clone();
                }
                if matches!(self.kind(), BoolKind::And(_)) {
                    BoolExpr::and_all(parts)
                } else {
                    BoolExpr::or_all(parts)
                }
            }
            BoolKind::Cmp(rel, p) => {
                let Some(k) = p.constant_term().as_i64() else {
                    return self.clone();
                };
                let ok = match rel {
                    Rel::Le => k == 0 || k == 1,
                    Rel::Eq | Rel::Ne => k == 0,
                };
                if !ok {
                    return self.clone();
                }
                // No positive symbol common to every non-constant term: nothing to cancel
                // (what `split_positive_monomial` finds), decided without building terms.
                let mut vars = p.terms().iter().filter(|t| !t.mono.is_empty());
                let common = vars.next().is_some_and(|first| {
                    first.mono.iter().any(|(a, _)| {
                        matches!(a, Atom::Sym(s) if positive(s))
                            && vars.clone().all(|t| t.mono.iter().any(|(b, _)| b == a))
                    })
                });
                if !common {
                    return self.clone();
                }
                match p.without_constant().split_positive_monomial(positive) {
                    Some((_, q)) => BoolExpr::cmp0(*rel, q.add(&Expr::constant(k))),
                    None => self.clone(),
                }
            }
        }
    }

    /// The operands of a disjunction (`None` when this is not an `||`).
    pub fn disjuncts(&self) -> Option<&[BoolExpr]> {
        match self.kind() {
            BoolKind::Or(v) => Some(v),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sym::Bindings;

    #[test]
    fn terms_of_polynomials_only() {
        let e = Expr::parse("4*c*h**2 + 3").unwrap();
        let mut t = e.polynomial_terms().unwrap();
        t.sort_by_key(|(c, _)| *c);
        assert_eq!(t[0], (3, vec![]));
        assert_eq!(t[1].0, 4);
        assert_eq!(t[1].1.len(), 2);
        assert!(Expr::parse("Max(c, 1)")
            .unwrap()
            .polynomial_terms()
            .is_none());
        assert_eq!(Expr::constant(0).polynomial_terms().unwrap(), vec![]);
    }

    #[test]
    fn normalize_rewrites_max_atoms_the_intervals_decide() {
        let mins: Vec<(Symbol, i64)> = ["b", "c", "d"]
            .iter()
            .map(|n| (Symbol::new(n), 0))
            .collect();
        let p = |s: &str| BoolExpr::parse(s).unwrap();
        let mut f = Facts::new(&mins);
        f.assume(&p("c >= 2"));
        f.assume(&p("d >= 1"));
        // `Max(c, 1)*Max(d, 1) <= Max(d, 1)` is `c*d <= d`, i.e. `c <= 1`: false here. A
        // `Max` whose argument may be 0 (`b`) stays.
        let goals = [
            "Max(c, 1)*Max(d, 1) <= Max(d, 1)",
            "Max(b, 1)*Max(c, 1)*Max(d, 1) <= Max(b, 1)*Max(d, 1)",
            "Max(b, 1)*Max(d, 1) == d",
        ];
        let n: Vec<BoolExpr> = goals.iter().map(|g| f.normalize(&p(g))).collect();
        assert_eq!(f.decide(&n[0]), Some(false), "{}", n[0]);
        // With `b`'s zero-ness decided (the cover splits on it first) the second one too.
        let mut g = f.clone();
        g.assume(&p("b >= 1"));
        assert_eq!(g.decide(&g.normalize(&p(goals[1]))), Some(false));
        assert!(n[2].has_non_polynomial(), "{}", n[2]);
        // Equivalent wherever the facts hold (checked against the originals).
        for b in 0..5 {
            for c in 2..6 {
                for d in 1..5 {
                    let v = Bindings::from_pairs([("b", b), ("c", c), ("d", d)]);
                    for (g, x) in goals.iter().zip(&n) {
                        assert_eq!(
                            p(g).eval(&v).unwrap(),
                            x.eval(&v).unwrap(),
                            "{g} at {b},{c},{d}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn implications_without_hints() {
        let mins = [(Symbol::new("h"), 1), (Symbol::new("w"), 1)];
        let p = |s: &str| BoolExpr::parse(s).unwrap();
        assert_eq!(
            decide_under(&mins, &[&p("h != 1")], &p("h*w != 1")),
            Some(true)
        );
        assert_eq!(
            decide_under(&mins, &[&p("h == 1")], &p("h >= 2")),
            Some(false)
        );
        assert_eq!(decide_under(&mins, &[], &p("h >= 2")), None);
        assert_eq!(decide_under(&mins, &[], &p("h*w >= 1")), Some(true));
    }

    #[test]
    fn positive_monomials_split_off() {
        let e = Expr::parse("c*h*w - c*w").unwrap();
        let (m, q) = e.split_positive_monomial(&|_| true).unwrap();
        assert_eq!(m, Expr::parse("c*w").unwrap());
        assert_eq!(q, Expr::parse("h - 1").unwrap());
        let (m, _) = e.split_positive_monomial(&|s| s.as_str() != "c").unwrap();
        assert_eq!(m, Expr::parse("w").unwrap());
        assert!(Expr::parse("c*w - 1")
            .unwrap()
            .split_positive_monomial(&|_| true)
            .is_none());
        let b = BoolExpr::parse("a == 1 && b != 2").unwrap();
        assert_eq!(b.conjuncts().map(|c| c.len()), Some(2));
        assert!(b.disjuncts().is_none());
        let pos = |_: &Symbol| true;
        for (a, want) in [
            ("c < c*w", "w >= 2"),
            ("c*w < c*h*w", "h >= 2"),
            ("h*w == w", "h == 1"),
            ("c*w != c && c*h >= 2", "w != 1 && c*h >= 2"),
            ("c*w <= c", "w <= 1"),
            ("2*c < c*w", "w >= 3"),
            ("c*w < c + 1", "w <= 1"),
            ("c*w < h", "c*w < h"),
        ] {
            let got = BoolExpr::parse(a).unwrap().cancel_positive_monomials(&pos);
            assert_eq!(got, BoolExpr::parse(want).unwrap(), "{a} -> {got}");
        }
    }
}
