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

use super::cube::{single_symbol, IntSet};
use crate::sym::{decide_under, Bindings, BoolExpr, Expr, Facts, Guard, Rel, Symbol};
use std::cell::RefCell;
use std::collections::HashMap;

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
    if cond.disjuncts().is_none() {
        return cond.clone();
    }
    // The traces of one cover meet the same disjunctions again and again (the rank-10 `[a,
    // ..., j] + [a, 1, ..., 1]` traces about a thousand classes, whose coalescing guards
    // repeat): the answer depends on `cond` and `mins` only, so it is remembered.
    type Memo = HashMap<(BoolExpr, Vec<(Symbol, i64)>), BoolExpr>;
    thread_local! {
        static MEMO: RefCell<Memo> = RefCell::new(HashMap::new());
    }
    /// Beyond this many remembered answers the memo starts over.
    const MAX_MEMO: usize = 4096;
    let key = (cond.clone(), mins.to_vec());
    if let Some(hit) = MEMO.with(|m| m.borrow().get(&key).cloned()) {
        return hit;
    }
    let pruned = prune_disjuncts(cond, mins);
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= MAX_MEMO {
            m.clear();
        }
        m.insert(key, pruned.clone());
    });
    pruned
}

/// [`prune_or`] of a disjunction, computed.
fn prune_disjuncts(cond: &BoolExpr, mins: &[(Symbol, i64)]) -> BoolExpr {
    let Some(ds) = cond.disjuncts() else {
        return cond.clone();
    };
    let mut keep: Vec<BoolExpr> = ds.to_vec();
    // Each disjunct's value at sample points of the domain: `x` does not imply `y` where a
    // point makes `x` true and `y` false, so most pairs need no proof (a cover's widened
    // guard is tidied at every widening, and its disjuncts are pairwise independent).
    let symbols = cond.symbols();
    let mut points = sample_points(&symbols, mins);
    for d in &keep {
        points.extend(witness_points(d, &symbols, mins));
    }
    let mut truth: Vec<Vec<Option<bool>>> = keep
        .iter()
        .map(|d| points.iter().map(|b| d.eval(b).ok()).collect())
        .collect();
    let refuted = |x: &[Option<bool>], y: &[Option<bool>]| {
        x.iter()
            .zip(y)
            .any(|(a, b)| *a == Some(true) && *b == Some(false))
    };
    let mut j = 0;
    while j < keep.len() && keep.len() > 1 {
        let x = keep[j].clone();
        let subsumed = keep.iter().enumerate().any(|(k, y)| {
            k != j && !refuted(&truth[j], &truth[k]) && implied(mins, std::iter::once(&x), y)
        });
        if subsumed {
            keep.remove(j);
            truth.remove(j);
        } else {
            j += 1;
        }
    }
    BoolExpr::or_all(keep)
}

/// Two bindings of `symbols` meant to satisfy the conjunction `d`: each symbol at the
/// smallest (then the next) value its single-symbol literals in `d` allow (`s == k`, `s >=
/// k`, `s <= k`, `s != k`; at least its minimum in `mins`). Random points rarely satisfy a
/// conjunction that pins many symbols (`b == 1 && c == 1 && ... && i >= 2`), and a point
/// where `d` fails refutes nothing; the caller evaluates `d` there anyway.
fn witness_points(d: &BoolExpr, symbols: &[Symbol], mins: &[(Symbol, i64)]) -> Vec<Bindings> {
    let lits: Vec<BoolExpr> = d.conjuncts().map_or_else(|| vec![d.clone()], |c| c.to_vec());
    // Each single-symbol literal's set, parsed once (`cube::single_symbol`).
    let singles: Vec<(Symbol, IntSet)> = lits.iter().filter_map(single_symbol).collect();
    let mut choice: Vec<[i64; 2]> = Vec::with_capacity(symbols.len());
    for s in symbols {
        let min = mins.iter().find(|(m, _)| m == s).map_or(0, |(_, v)| *v);
        let allowed = singles
            .iter()
            .filter(|(t, _)| t == s)
            .fold(IntSet::at_least(min), |acc, (_, set)| acc.intersect(set));
        let vals = match allowed.smallest(2).as_slice() {
            // Outside the domain (a disjunct that cannot hold there): no refutation from it.
            [] => return Vec::new(),
            &[v] => [v, v],
            &[v, w, ..] => [v, w],
        };
        choice.push(vals);
    }
    (0..2)
        .map(|k| {
            let values = choice.iter().map(|c| c[k]);
            Bindings::from_pairs(symbols.iter().map(|s| s.as_str()).zip(values))
        })
        .collect()
}

/// 64 bindings of `syms`, each at least its minimum in `mins` (0 for a symbol not there)
/// plus 0..=3, from a fixed pseudo-random sequence: points of the domain at which to
/// refute implications before trying to prove them.
fn sample_points(syms: &[Symbol], mins: &[(Symbol, i64)]) -> Vec<Bindings> {
    let lo: Vec<i64> = syms
        .iter()
        .map(|s| mins.iter().find(|(m, _)| m == s).map_or(0, |(_, v)| *v))
        .collect();
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    (0..64)
        .map(|_| {
            Bindings::from_pairs(syms.iter().zip(&lo).map(|(s, &l)| {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (s.as_str(), l.saturating_add((state >> 62) as i64))
            }))
        })
        .collect()
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
/// at `at` (every guard holds there) with symbol minimums `mins`.
pub(crate) fn simplify_guards(
    symbols: &[String],
    at: &[i64],
    mins: &[i64],
    guards: Vec<Guard>,
    mut n_range: usize,
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
        let cond = prune_or(&factor_or(&meet_pairs(&cond)), &ranges);
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
    // Each guard simplified where the ranges and the other guards hold (the conjunction
    // is unchanged: `F && G` is `F && G'` when `G` and `G'` agree wherever `F` holds).
    //
    // Every decision below about guard `i` takes as facts only the guards of its symbol
    // component (`comp`): the guards hold together at the trace point, so they are
    // consistent, and facts over symbols that share nothing with `i`'s, even through other
    // guards, decide nothing about it. The components are those of the guards at this
    // point; guards only lose symbols from here on, so they stay a (coarser) partition.
    let mut comp = symbol_components(&out);
    let mut i = n_range;
    while i < out.len() {
        let mut f = Facts::new(&ranges);
        for g in component_facts(&out, &comp, 0, i) {
            f.assume(g);
        }
        let c = simplify_under(&out[i].cond, &f);
        if c.as_const() == Some(true) {
            out.remove(i);
            comp.remove(i);
        } else {
            out[i].cond = c;
            i += 1;
        }
    }
    // 2. Each step replaces guard `i` by a weaker form that, together with the current
    //    other guards and the ranges, still implies it: the conjunction never changes.
    let mut i = n_range;
    while i < out.len() {
        if let Some(parts) = out[i].cond.conjuncts().map(|p| p.to_vec()) {
            let mut keep = parts;
            let mut j = 0;
            while j < keep.len() && keep.len() > 1 {
                let others: Vec<&BoolExpr> = component_facts(&out, &comp, n_range, i)
                    .chain(
                        keep.iter()
                            .enumerate()
                            .filter(|(k, _)| *k != j)
                            .map(|(_, c)| c),
                    )
                    .collect();
                if !refuted_near(symbols, at, mins, &others, &keep[j])
                    && implied(&ranges, others.into_iter(), &keep[j])
                {
                    keep.remove(j);
                } else {
                    j += 1;
                }
            }
            out[i].cond = BoolExpr::and_all(keep);
        }
        if out[i].cond.disjuncts().is_some() {
            // Disjuncts the other guards contradict go (`b == 2 || b == 1` next to
            // `b != 1` is `b == 2`).
            let others: Vec<&BoolExpr> = component_facts(&out, &comp, n_range, i).collect();
            out[i].cond = tidy_or(&out[i].cond, &ranges, &others);
        }
        let others: Vec<&BoolExpr> = component_facts(&out, &comp, n_range, i).collect();
        if !refuted_near(symbols, at, mins, &others, &out[i].cond)
            && implied(&ranges, others.into_iter(), &out[i].cond)
        {
            out.remove(i);
            comp.remove(i);
        } else {
            i += 1;
        }
    }
    // 3. A range guard `s >= 1` implied by the other guards (`s >= 2`, `s == 1`) is
    //    dropped: decided from the domain alone (every symbol `>= 0`), so nothing circular.
    //    Usually it is not implied, and the trace point with `s` moved to 0, 1 or 2 shows
    //    it (the others hold there, it does not): no proof is tried then, as none exists.
    let relaxed: Vec<(Symbol, i64)> = ranges.iter().map(|(s, _)| (s.clone(), 0)).collect();
    let zeros = vec![0; symbols.len()];
    let mut i = 0;
    while i < n_range.min(out.len()) {
        let others: Vec<&BoolExpr> = component_facts(&out, &comp, 0, i).collect();
        if !refuted_near(symbols, at, &zeros, &others, &out[i].cond)
            && decide_under(&relaxed, &others, &out[i].cond) == Some(true)
        {
            out.remove(i);
            comp.remove(i);
            n_range -= 1;
        } else {
            i += 1;
        }
    }
    // 4. Two comparisons of one symbol as one (`h >= 1`, `h != 1` is `h >= 2`).
    merge_symbol_bounds(&mut out);
    out
}

/// For each guard, the least index of the guards it shares symbols with, directly or
/// through other guards (`sym::symbol_components`).
fn symbol_components(guards: &[Guard]) -> Vec<usize> {
    let symbols: Vec<Vec<Symbol>> = guards.iter().map(|g| g.cond.symbols()).collect();
    crate::sym::symbol_components(&symbols)
}

/// The conditions of `guards[from..]` but guard `i` that are in `i`'s component (`comp`,
/// from [`symbol_components`]): the facts a decision about guard `i` takes.
fn component_facts<'a>(
    guards: &'a [Guard],
    comp: &'a [usize],
    from: usize,
    i: usize,
) -> impl Iterator<Item = &'a BoolExpr> + 'a {
    guards
        .iter()
        .enumerate()
        .skip(from)
        .filter(move |(k, _)| *k != i && comp[*k] == comp[i])
        .map(|(_, g)| &g.cond)
}

/// A binding of the domain (each symbol at least its bound in `lo`) where every fact holds
/// and `goal` fails, among the points `at` with one of `goal`'s symbols moved to its bound
/// or one of the two values above it: then `goal` does not follow from `facts` (no sound
/// proof of it exists, so none is tried). `false` says nothing.
fn refuted_near(
    symbols: &[String],
    at: &[i64],
    lo: &[i64],
    facts: &[&BoolExpr],
    goal: &BoolExpr,
) -> bool {
    goal.symbols().iter().any(|s| {
        let Some(i) = symbols.iter().position(|n| n == s.as_str()) else {
            return false;
        };
        (lo[i]..=lo[i] + 2).filter(|&v| v != at[i]).any(|v| {
            let b = Bindings::from_pairs(
                symbols
                    .iter()
                    .enumerate()
                    .map(|(j, n)| (n.as_str(), if j == i { v } else { at[j] })),
            );
            goal.eval(&b).ok() == Some(false) && facts.iter().all(|f| f.eval(&b).ok() == Some(true))
        })
    })
}

/// Tidies a disjunction assumed under `facts` (and symbol minimums `mins`): a disjunct
/// that cannot hold (`a == 1 && b == 4 && b == 1`) is dropped, a conjunct implied by the
/// facts and the rest of its disjunct is dropped, then a disjunct implying another one, and
/// common conjuncts are factored out. Equivalent under `facts`.
pub(crate) fn tidy_or(cond: &BoolExpr, mins: &[(Symbol, i64)], facts: &[&BoolExpr]) -> BoolExpr {
    let cond = meet_pairs(cond);
    let nonnegative = mins.iter().all(|(_, m)| *m >= 0);
    let Some(ds) = cond.disjuncts() else {
        return cond;
    };
    let mut kept = Vec::with_capacity(ds.len());
    'd: for d in ds {
        let mut cs: Vec<BoolExpr> = d
            .conjuncts()
            .map(|c| c.to_vec())
            .unwrap_or_else(|| vec![d.clone()]);
        let mut j = 0;
        while j < cs.len() {
            let mut with: Vec<&BoolExpr> = facts.to_vec();
            with.extend(
                cs.iter()
                    .enumerate()
                    .filter(|(k, _)| *k != j)
                    .map(|(_, c)| c),
            );
            let decided = decide_under(mins, &with, &cs[j]).or_else(|| {
                // Orderings the facts see one literal at a time: `t >= 1`, `t < s` give
                // `s >= 1` (sound on the cover's domain, every symbol `>= 0`).
                (nonnegative && super::prover::order_implies(&with, &cs[j])).then_some(true)
            });
            match decided {
                Some(false) => continue 'd,
                Some(true) if cs.len() > 1 => {
                    cs.remove(j);
                }
                Some(true) => return BoolExpr::constant(true),
                None => j += 1,
            }
        }
        kept.push(BoolExpr::and_all(cs));
    }
    factor_or(&prune_or(&BoolExpr::or_all(kept), mins))
}

/// `cond` simplified where `facts` hold (equivalent there): a comparison the facts decide
/// becomes a constant; inside `a && b` each part is simplified assuming the others, inside
/// `a || b` each part assuming the others are false. This is the rule that turns
/// `a != b || s != 1 || (a == b && s == 1)` into `true`, and `w != 1 && h*w != 1` next to
/// `h >= 2` into `w != 1`.
pub(crate) fn simplify_under(cond: &BoolExpr, facts: &Facts) -> BoolExpr {
    if cond.as_const().is_some() {
        return cond.clone();
    }
    if let Some(cs) = cond.conjuncts() {
        return junction(cs, facts, true);
    }
    if let Some(ds) = cond.disjuncts() {
        return junction(ds, facts, false);
    }
    match facts.decide(cond) {
        Some(v) => BoolExpr::constant(v),
        None => cond.clone(),
    }
}

fn junction(parts: &[BoolExpr], facts: &Facts, is_and: bool) -> BoolExpr {
    let mut parts: Vec<BoolExpr> = parts.iter().map(|p| simplify_under(p, facts)).collect();
    // Twice around: a part simplified later can simplify an earlier one.
    for _ in 0..2 {
        for i in 0..parts.len() {
            let mut f = facts.clone();
            for (j, p) in parts.iter().enumerate() {
                if j != i {
                    f.assume(&if is_and { p.clone() } else { p.not() });
                }
            }
            parts[i] = simplify_under(&parts[i], &f);
            let short = if is_and { Some(false) } else { Some(true) };
            if parts[i].as_const() == short {
                return BoolExpr::constant(!is_and);
            }
        }
    }
    if is_and {
        BoolExpr::and_all(parts)
    } else {
        BoolExpr::or_all(parts)
    }
}

/// Sample values `0..=SAMPLES` of the symbol at which [`meet_literal`] evaluates its
/// candidates before trying to prove one (every candidate's constant is at most 3).
const SAMPLES: i64 = 5;

/// The comparisons [`meet_literal`] tries: `s == k`, `s >= k`, `s <= k`, `s != k`.
#[derive(Clone, Copy)]
enum Literal {
    Eq,
    Ge,
    Le,
    Ne,
}

impl Literal {
    /// The comparison at `s = v`.
    fn holds(self, v: i64, k: i64) -> bool {
        match self {
            Literal::Eq => v == k,
            Literal::Ge => v >= k,
            Literal::Le => v <= k,
            Literal::Ne => v != k,
        }
    }

    /// The comparison as an expression over `s`.
    fn expr(self, s: &Expr, k: i64) -> BoolExpr {
        let k = Expr::constant(k);
        match self {
            Literal::Eq => BoolExpr::eq(s, &k),
            Literal::Ge => BoolExpr::ge(s, &k),
            Literal::Le => BoolExpr::le(s, &k),
            Literal::Ne => BoolExpr::ne(s, &k),
        }
    }
}

/// One comparison `z` on symbol `s` equivalent to `x && y` (both comparisons on `s` only)
/// over `s >= 0`: tried `s == k`, `s >= k`, `s <= k`, `s != k` for `k` in 0..=3.
/// `s >= 1 && s != 1` is `s >= 2`; `s >= 1 && s <= 1` is `s == 1`.
pub(crate) fn meet_literal(x: &BoolExpr, y: &BoolExpr) -> Option<BoolExpr> {
    let sx = x.symbols();
    if sx.len() != 1 || y.symbols() != sx || x.as_cmp().is_none() || y.as_cmp().is_none() {
        return None;
    }
    let mins = [(sx[0].clone(), 0)];
    let s = Expr::symbol(sx[0].as_str());
    let both = [x, y];
    // A candidate that differs from `x && y` at some `s` in 0..=SAMPLES is not equivalent
    // over `s >= 0`, so the proofs below cannot succeed for it: skipped without building
    // or proving it (a sample where `x` or `y` cannot be evaluated refutes nothing). Same
    // answer, most proofs saved.
    let meet: Vec<Option<bool>> = (0..=SAMPLES)
        .map(|v| {
            let b = Bindings::from_pairs([(sx[0].as_str(), v)]);
            Some(x.eval(&b).ok()? && y.eval(&b).ok()?)
        })
        .collect();
    [Literal::Eq, Literal::Ge, Literal::Le, Literal::Ne]
        .into_iter()
        .flat_map(|lit| (0..=3i64).map(move |k| (lit, k)))
        .filter(|&(lit, k)| {
            (0..=SAMPLES)
                .zip(&meet)
                .all(|(v, m)| m.is_none_or(|m| m == lit.holds(v, k)))
        })
        .map(|(lit, k)| lit.expr(&s, k))
        .find(|z| {
            decide_under(&mins, &[z], x) == Some(true)
                && decide_under(&mins, &[z], y) == Some(true)
                && decide_under(&mins, &both, z) == Some(true)
        })
}

/// One comparison equivalent to `x && y` for two comparisons of one difference `p` (any
/// symbols, any polynomial): `p <= 0 && -p <= 0` is `p == 0` (a cover's ordering classes
/// meet as `t <= s && s <= t`, which reads as `s == t`), and `p <= 0 && p != 0` is
/// `p + 1 <= 0` (`s <= t && s != t` is `s < t`). Exact over the integers.
pub(crate) fn meet_pair(x: &BoolExpr, y: &BoolExpr) -> Option<BoolExpr> {
    let ((rx, p), (ry, q)) = (x.as_cmp()?, y.as_cmp()?);
    let opposite = p.add(q).as_coeff().is_some_and(|c| c.is_zero());
    match (rx, ry) {
        (Rel::Le, Rel::Le) if opposite => Some(BoolExpr::cmp0(Rel::Eq, p.clone())),
        (Rel::Le, Rel::Ne) if opposite || p == q => {
            Some(BoolExpr::cmp0(Rel::Le, p.add(&Expr::constant(1))))
        }
        (Rel::Ne, Rel::Le) => meet_pair(y, x),
        _ => None,
    }
}

/// `x && y` as one comparison: [`meet_literal`] (one symbol) or [`meet_pair`] (one
/// difference).
fn meet(x: &BoolExpr, y: &BoolExpr) -> Option<BoolExpr> {
    meet_literal(x, y).or_else(|| meet_pair(x, y))
}

/// `cond` with [`meet_pair`] applied inside every conjunction, at any depth: equivalent,
/// never longer.
pub(crate) fn meet_pairs(cond: &BoolExpr) -> BoolExpr {
    if let Some(ds) = cond.disjuncts() {
        return BoolExpr::or_all(ds.iter().map(meet_pairs));
    }
    let Some(cs) = cond.conjuncts() else {
        return cond.clone();
    };
    let mut parts: Vec<BoolExpr> = cs.iter().map(meet_pairs).collect();
    meet_within(&mut parts, meet_pair);
    BoolExpr::and_all(parts)
}

/// Replaces each pair of conjuncts that `meet` combines into one comparison by it (the
/// first of the pair takes the result, the second goes), until no pair combines.
fn meet_within(parts: &mut Vec<BoolExpr>, meet: fn(&BoolExpr, &BoolExpr) -> Option<BoolExpr>) {
    let mut a = 0;
    while a < parts.len() {
        let hit = (a + 1..parts.len()).find_map(|b| meet(&parts[a], &parts[b]).map(|z| (b, z)));
        match hit {
            Some((b, z)) => {
                parts[a] = z;
                parts.remove(b);
            }
            None => a += 1,
        }
    }
}

/// Merges pairs of guards that compare the same single symbol (or the same difference,
/// [`meet_pair`]) into one comparison ([`meet_literal`]); the merged guard keeps the
/// reason of the later (decision) guard.
pub(crate) fn merge_symbol_bounds(guards: &mut Vec<Guard>) {
    // Inside a conjunction, and a conjunct with a separate one-comparison guard
    // (`c != 1 && n != 1 && c >= 1` is `c >= 2 && n != 1`).
    for g in guards.iter_mut() {
        let Some(parts) = g.cond.conjuncts().map(|p| p.to_vec()) else {
            continue;
        };
        let mut parts = parts;
        meet_within(&mut parts, meet);
        g.cond = BoolExpr::and_all(parts);
    }
    // `meet` combines only comparisons over the same symbols (one symbol, or a difference
    // whose terms cancel), so each guard's symbols are collected once and pairs over other
    // symbols are skipped without calling it: same merges, no per-pair symbol collection.
    let mut syms: Vec<Vec<Symbol>> = guards.iter().map(|g| g.cond.symbols()).collect();
    let subset = |a: &[Symbol], b: &[Symbol]| a.iter().all(|s| b.binary_search(s).is_ok());
    let mut j = 0;
    while j < guards.len() {
        let single = guards[j].cond.as_cmp().is_some();
        let target = single
            .then(|| {
                (0..guards.len())
                    .filter(|&i| i != j && subset(&syms[j], &syms[i]))
                    .find_map(|i| {
                        let parts = guards[i].cond.conjuncts()?;
                        parts
                            .iter()
                            .enumerate()
                            .find_map(|(a, x)| meet(x, &guards[j].cond).map(|z| (i, a, z)))
                    })
            })
            .flatten();
        match target {
            Some((i, a, z)) => {
                let mut parts = guards[i]
                    .cond
                    .conjuncts()
                    .map(|p| p.to_vec())
                    .unwrap_or_default();
                parts[a] = z;
                guards[i].cond = BoolExpr::and_all(parts);
                syms[i] = guards[i].cond.symbols();
                guards.remove(j);
                syms.remove(j);
            }
            None => j += 1,
        }
    }
    let mut i = 0;
    while i < guards.len() {
        let hit = (i + 1..guards.len())
            .filter(|&j| syms[j] == syms[i])
            .find_map(|j| meet(&guards[i].cond, &guards[j].cond).map(|z| (j, z)));
        match hit {
            Some((j, z)) => {
                let reason = guards[j].reason.clone();
                guards[i] = Guard { cond: z, reason };
                syms[i] = guards[i].cond.symbols();
                guards.remove(j);
                syms.remove(j);
            }
            None => i += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The witness points of a conjunction of single-symbol literals satisfy it (so the
    /// refutation before `prune_or`'s proofs can use them), and pruning keeps exactly the
    /// disjuncts a pruning by proof alone keeps.
    #[test]
    fn witness_points_satisfy_simple_conjunctions_and_pruning_is_unchanged() {
        let mins: Vec<(Symbol, i64)> =
            ["a", "b", "c", "d"].iter().map(|n| (Symbol::new(n), 0)).collect();
        for text in [
            "b == 1 && c == 1 && d >= 2",
            "a != 0 && a != 1 && b <= 2 && c >= 3",
            "a == 0 && d != 2",
            "c >= 1 && c <= 1",
        ] {
            let d = BoolExpr::parse(text).unwrap();
            let pts = witness_points(&d, &d.symbols(), &mins);
            assert_eq!(pts.len(), 2, "{text}");
            for p in &pts {
                assert!(d.eval(p).unwrap(), "{text}");
            }
        }
        let cond = BoolExpr::parse(
            "(a == 1 && b >= 2) || (a >= 1 && b >= 2) || (a == 0 && c == 1) || (a == 0 && c >= 1 && d != 1) || (b == 1 && c == 1 && d >= 2)",
        )
        .unwrap();
        let pruned = prune_or(&cond, &mins);
        let ds = cond.disjuncts().unwrap().to_vec();
        let mut keep = ds.clone();
        let mut j = 0;
        while j < keep.len() && keep.len() > 1 {
            let x = keep[j].clone();
            let once = std::iter::once(&x);
            if keep.iter().enumerate().any(|(k, y)| k != j && implied(&mins, once.clone(), y)) {
                keep.remove(j);
            } else {
                j += 1;
            }
        }
        assert_eq!(pruned, BoolExpr::or_all(keep));
        assert!(pruned.disjuncts().unwrap().len() < ds.len());
    }

    fn b(s: &str) -> BoolExpr {
        BoolExpr::parse(s).unwrap()
    }

    /// `x` and `y` agree at every point of `-3..=6` for symbols `s`, `t`, `u`.
    fn same_on_grid(x: &BoolExpr, y: &BoolExpr) -> bool {
        (-3..=6i64).all(|s| {
            (-3..=6i64).all(|t| {
                (-3..=6i64).all(|u| {
                    let at = Bindings::from_pairs([("s", s), ("t", t), ("u", u)]);
                    x.eval(&at).unwrap() == y.eval(&at).unwrap()
                })
            })
        })
    }

    #[test]
    fn meet_pair_is_exact_and_reads_as_one_comparison() {
        let cases = [
            ("t <= s", "s <= t", Some("s == t")),
            ("s <= t + 2", "t + 2 <= s", Some("s == t + 2")),
            ("s <= t + 2", "t - 2 <= s", None),
            ("s <= t", "s != t", Some("s < t")),
            ("s <= t", "t != s", Some("s < t")),
            ("s != t", "s <= t", Some("s < t")),
            ("2*s <= u", "u <= 2*s", Some("u == 2*s")),
            ("s <= t", "t <= s + 1", None),
            ("s <= t", "u <= s", None),
            ("s == t", "s <= t", None),
        ];
        for (x, y, want) in cases {
            let got = meet_pair(&b(x), &b(y));
            assert_eq!(
                got.as_ref().map(|g| g.to_string()),
                want.map(|w| b(w).to_string()),
                "{x} && {y}"
            );
            if let Some(z) = got {
                assert!(same_on_grid(&z, &b(x).and(&b(y))), "{x} && {y} is not {z}");
            }
        }
    }

    #[test]
    fn meet_pairs_rewrites_nested_conjunctions_equivalently() {
        let c = b("(u == 0 && t <= s && s <= t) || (s < t && (u <= t && t <= u || s != 1))");
        let m = meet_pairs(&c);
        assert!(same_on_grid(&m, &c));
        let text = m.to_string();
        assert!(text.contains("s == t") && text.contains("t == u"), "{text}");
        assert!(m.node_count() < c.node_count());
    }

    #[test]
    fn orderings_imply_bounds_and_orders() {
        let lits = |v: &[&str]| v.iter().map(|s| b(s)).collect::<Vec<_>>();
        let yes = [
            (vec!["t >= 1", "t < s"], "s >= 2"),
            (vec!["t >= 1", "t < s"], "s >= 1"),
            (vec!["s <= t", "t <= u"], "s <= u"),
            (vec!["s <= t", "t <= s"], "s == t"),
            (vec!["s == t + 1", "t >= 3"], "s >= 4"),
            (vec![], "s >= 0"),
        ];
        for (facts, goal) in yes {
            let f = lits(&facts);
            let refs: Vec<&BoolExpr> = f.iter().collect();
            assert!(
                super::super::prover::order_implies(&refs, &b(goal)),
                "{facts:?} => {goal}"
            );
        }
        let no = [
            (vec!["t >= 1", "t < s"], "s >= 3"),
            (vec!["s <= t"], "s == t"),
            (vec!["s <= t", "u <= t"], "s <= u"),
            (vec!["t >= 1"], "s >= 1"),
            (vec!["s <= t"], "s != t"),
        ];
        for (facts, goal) in no {
            let f = lits(&facts);
            let refs: Vec<&BoolExpr> = f.iter().collect();
            assert!(
                !super::super::prover::order_implies(&refs, &b(goal)),
                "{facts:?} =/=> {goal}"
            );
        }
    }
}
