//! Post-processing of a trace's guards into an equivalent, smaller, readable list.
//!
//! The iterator records conditions as its steps phrase them: `c < c*w` (a stride
//! comparison), `c*h*w != 1 && c != 1 && w != 1` (a coalescing test over all operands). Under
//! the specialization's symbol ranges these are equivalent to `w >= 2` and `c != 1 && w != 1`.
//! The symbolic layer already records comparisons with known-positive monomial factors
//! cancelled (`c < c*w` is recorded as `w >= 2` once `c >= 1` is known), so most guards
//! arrive minimal; this pass does four equivalence-preserving rewrites for the rest:
//!
//! 1. cancel monomial factors whose symbols are `>= 1` from every comparison
//!    ([`BoolExpr::cancel_positive_monomials`]; again after the substitutions of step 2,
//!    which can expose new factors);
//! 2. write `s <= m` as `s == m` when `m` is the symbol's minimum, and substitute such
//!    equalities into the other guards (`c == 1, c < w` becomes `c == 1, w >= 2`);
//! 3. factor common conjuncts out of an `||` and drop disjuncts that imply another one
//!    (`(c != 1 && h != 1) || (c != 1 && h*w != 1)` becomes `c != 1 && h*w != 1`);
//! 4. drop a conjunct implied by the ranges and the other conjuncts of its guard, then drop
//!    a guard implied by the ranges and the other remaining guards.
//!
//! All steps keep the conjunction of all guards (with the range guards, which are never
//! dropped) logically equivalent, so the admitted bindings are exactly the same.

use crate::sym::{decide_under, BoolExpr, Expr, Guard, Rel, Symbol};

/// Decides `goal` under the symbols' ranges and `facts`.
fn implied<'a>(
    mins: &[(Symbol, i64)],
    facts: impl Iterator<Item = &'a BoolExpr>,
    goal: &BoolExpr,
) -> bool {
    let facts: Vec<&BoolExpr> = facts.collect();
    decide_under(mins, &facts, goal) == Some(true)
}

/// `(A && B) || (A && C)` as `A && (B || C)`.
fn factor_or(cond: &BoolExpr) -> BoolExpr {
    let Some(ds) = cond.disjuncts() else {
        return cond.clone();
    };
    let sets: Vec<Vec<BoolExpr>> = ds
        .iter()
        .map(|d| {
            d.conjuncts()
                .map(|c| c.to_vec())
                .unwrap_or_else(|| vec![d.clone()])
        })
        .collect();
    let common: Vec<BoolExpr> = sets[0]
        .iter()
        .filter(|c| sets.iter().all(|s| s.contains(c)))
        .cloned()
        .collect();
    if common.is_empty() {
        return cond.clone();
    }
    let rest = BoolExpr::or_all(
        sets.iter()
            .map(|s| BoolExpr::and_all(s.iter().filter(|c| !common.contains(c)).cloned())),
    );
    BoolExpr::and_all(common.into_iter().chain([rest]))
}

/// Drops each disjunct of an `||` that implies another remaining disjunct.
fn prune_or(cond: &BoolExpr, mins: &[(Symbol, i64)]) -> BoolExpr {
    if let Some(parts) = cond.conjuncts() {
        return BoolExpr::and_all(parts.iter().map(|c| prune_or(c, mins)));
    }
    let Some(ds) = cond.disjuncts() else {
        return cond.clone();
    };
    let mut keep: Vec<BoolExpr> = ds.to_vec();
    let mut j = 0;
    while j < keep.len() && keep.len() > 1 {
        let x = keep[j].clone();
        let subsumed = keep
            .iter()
            .enumerate()
            .any(|(k, y)| k != j && implied(mins, std::iter::once(&x), y));
        if subsumed {
            keep.remove(j);
        } else {
            j += 1;
        }
    }
    BoolExpr::or_all(keep)
}

/// `(s, k)` when `cond` is `s == k`.
fn symbol_equals(cond: &BoolExpr) -> Option<(Symbol, i64)> {
    let (Rel::Eq, p) = cond.as_cmp()? else {
        return None;
    };
    let terms = p.polynomial_terms()?;
    let (mut sym, mut k) = (None, 0);
    for (coef, fs) in &terms {
        match (coef, fs.as_slice()) {
            (1, [(s, 1)]) => sym = Some(s.clone()),
            (c, []) => k = c.checked_neg()?,
            _ => return None,
        }
    }
    sym.map(|s| (s, k))
}

/// Rewrites `s <= min(s)` (what a trace at the minimum records) as the equivalent `s == min`.
fn at_minimum(cond: &BoolExpr, symbols: &[String], mins: &[i64]) -> BoolExpr {
    if let Some(parts) = cond.conjuncts() {
        return BoolExpr::and_all(parts.iter().map(|c| at_minimum(c, symbols, mins)));
    }
    if let Some(parts) = cond.disjuncts() {
        return BoolExpr::or_all(parts.iter().map(|c| at_minimum(c, symbols, mins)));
    }
    let Some((Rel::Le, p)) = cond.as_cmp() else {
        return cond.clone();
    };
    let Some(terms) = p.polynomial_terms() else {
        return cond.clone();
    };
    let (mut sym, mut k) = (None, 0);
    for (coef, fs) in &terms {
        match (coef, fs.as_slice()) {
            (1, [(s, 1)]) => sym = Some(s.clone()),
            (c, []) => k = -c,
            _ => return cond.clone(),
        }
    }
    match sym.and_then(|s| symbols.iter().position(|n| n == s.as_str()).map(|i| (s, i))) {
        Some((s, i)) if terms.len() <= 2 && mins[i] == k => {
            BoolExpr::eq(&Expr::symbol(s.as_str()), &Expr::constant(k))
        }
        _ => cond.clone(),
    }
}

/// Simplifies `guards` (the first `n_range` are range guards, kept as they are) of a trace
/// with symbol minimums `mins`.
pub(crate) fn simplify_guards(
    symbols: &[String],
    mins: &[i64],
    guards: Vec<Guard>,
    n_range: usize,
) -> Vec<Guard> {
    let ranges: Vec<(Symbol, i64)> = symbols
        .iter()
        .zip(mins)
        .map(|(n, &m)| (Symbol::new(n), m))
        .collect();
    let positive = |s: &Symbol| {
        symbols
            .iter()
            .position(|n| n == s.as_str())
            .is_some_and(|i| mins[i] >= 1)
    };
    // 1. Cancel positive monomials; drop constant-true and duplicate guards.
    let mut out: Vec<Guard> = Vec::with_capacity(guards.len());
    for (i, g) in guards.into_iter().enumerate() {
        if i < n_range {
            out.push(g);
            continue;
        }
        let cond = at_minimum(&g.cond.cancel_positive_monomials(&positive), symbols, mins);
        let cond = prune_or(&factor_or(&cond), &ranges);
        if cond.as_const() == Some(true) || out[n_range..].iter().any(|o| o.cond == cond) {
            continue;
        }
        out.push(Guard {
            cond,
            reason: g.reason,
        });
    }
    // Substitute `s == k` guards into the other guards (equivalent given `s == k`).
    let eqs: Vec<(usize, Symbol, i64)> = out
        .iter()
        .enumerate()
        .skip(n_range)
        .filter_map(|(i, g)| symbol_equals(&g.cond).map(|(s, k)| (i, s, k)))
        .collect();
    if !eqs.is_empty() {
        for (i, g) in out.iter_mut().enumerate().skip(n_range) {
            let subst = |s: &Symbol| {
                eqs.iter()
                    .find(|(j, t, _)| *j != i && t == s)
                    .map(|(_, _, k)| Expr::constant(*k))
            };
            let c = g.cond.substitute(&subst);
            let c = at_minimum(&c.cancel_positive_monomials(&positive), symbols, mins);
            g.cond = prune_or(&factor_or(&c), &ranges);
        }
        out.retain(|g| g.cond.as_const() != Some(true));
    }
    // 2. Each step replaces guard `i` by a weaker form that, together with the current
    //    other guards and the ranges, still implies it: the conjunction never changes.
    let mut i = n_range;
    while i < out.len() {
        if let Some(parts) = out[i].cond.conjuncts().map(|p| p.to_vec()) {
            let mut keep = parts;
            let mut j = 0;
            while j < keep.len() && keep.len() > 1 {
                let others = out[n_range..]
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| *k + n_range != i)
                    .map(|(_, g)| &g.cond)
                    .chain(
                        keep.iter()
                            .enumerate()
                            .filter(|(k, _)| *k != j)
                            .map(|(_, c)| c),
                    );
                if implied(&ranges, others, &keep[j]) {
                    keep.remove(j);
                } else {
                    j += 1;
                }
            }
            out[i].cond = BoolExpr::and_all(keep);
        }
        let others = out[n_range..]
            .iter()
            .enumerate()
            .filter(|(k, _)| *k + n_range != i)
            .map(|(_, g)| &g.cond);
        if implied(&ranges, others, &out[i].cond) {
            out.remove(i);
        } else {
            i += 1;
        }
    }
    out
}
