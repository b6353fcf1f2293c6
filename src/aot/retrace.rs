//! Load-time verification of a specialization against a fresh trace.
//!
//! An artifact is a file: anyone can weaken a guard (`w >= 2` to `w >= 1`), delete one, or
//! edit a plan expression so that it still agrees with a concrete build at the trace point.
//! Checking the guards and the plan only *at* the trace point cannot see such edits, and
//! dispatch would then admit bindings the real guards reject. So the loader re-traces each
//! specialization at its trace point and accepts it only when
//!
//! * the stored guards **imply** every traced guard (structurally equal after the trace's
//!   own simplification, the fast path; otherwise proved by [`decide_under_by_cases`] from the stored
//!   guards, sizes `>= 0`), and
//! * the stored plan **equals** the traced plan *as expressions* (structurally, or proved
//!   equal under the stored guards): a changed expression that agrees only at the trace
//!   point is caught.
//!
//! Together these restore the soundness contract of [`Specialization`] for the stored
//! guards: every binding they admit satisfies the traced guards, where the traced plan is
//! the concrete build and the stored plan equals it.
//!
//! A `--cover` compile may widen a zero-size specialization's guards (one plan for several
//! traced classes: a guard becomes a disjunction, or is dropped when one class needs no
//! extra guard). Such guards cannot imply one trace's guards. So verification works on
//! *regions*: starting from the stored guards, a region whose trace records a guard `g` the
//! region does not imply is split into `region && g` and `region && !g` (a stored
//! disjunction the trace did not record is split into its disjuncts first), and each part
//! is verified against a trace at a point inside it (the trace point when it lies there,
//! else the first point of a small probe grid that does). Every leaf region is then covered
//! by a trace whose guards it implies and whose plan equals the stored plan under it, which
//! is the soundness contract. A weakened guard that really changes the answer lands in a
//! region whose trace gives another plan (rejected, naming the guard); a region for which
//! no point can be found, or a split beyond the budget, is rejected as unverifiable.

use super::spec::Spec;
use super::specialization::Specialization;
use super::trace::{trace_parts, Traced};
use crate::error::{Error, Result};
use crate::iter::Plan;
use crate::sym::{
    decide_under_by_cases, Bindings, BoolExpr, CompiledGuards, Expr, Guard, GuardSet, Symbol,
};
use std::rc::Rc;

/// At most this many traces per specialization (the first, plus those of split regions).
const MAX_TRACES: usize = 32;
/// At most this many probe points are examined to find a point of one region.
const MAX_PROBES: usize = 20_000;

/// Why a specialization was rejected (the message of the loader's `Artifact` error, which
/// prefixes `specialization k: `).
fn reject(message: String) -> Error {
    Error::Artifact { message }
}

/// Verifies `stored` (a specialization of an artifact of `spec`) against fresh traces.
pub(super) fn verify(spec: &Spec, stored: &Specialization) -> Result<()> {
    let facts: Vec<BoolExpr> = stored.guards.iter().map(|g| g.cond.clone()).collect();
    let mut v = Verifier {
        spec,
        stored,
        traces: Vec::new(),
        budget: MAX_TRACES,
    };
    v.region(facts, None)
}

struct Verifier<'a> {
    spec: &'a Spec,
    stored: &'a Specialization,
    /// Traces made so far (point, trace), reused when a region contains their point.
    traces: Vec<Rc<Traced>>,
    budget: usize,
}

impl Verifier<'_> {
    /// Verifies the region `facts`; `why` is the traced guard whose negation created it.
    fn region(&mut self, facts: Vec<BoolExpr>, why: Option<&Guard>) -> Result<()> {
        let refs: Vec<&BoolExpr> = facts.iter().collect();
        let Some(t) = self.trace_in(&refs, why)? else {
            return Ok(());
        };
        let missing = t
            .guards
            .iter()
            .find(|g| !implied(self.spec, &refs, &g.cond));
        let Some(g) = missing.cloned() else {
            return compare_plans(self.spec, &refs, &self.stored.plan, &t.plan, &t.traced_at)
                .map_err(|e| in_region(e, why));
        };
        // A stored disjunction the trace did not record: one region per disjunct.
        if let Some(i) = facts
            .iter()
            .position(|f| f.disjuncts().is_some() && !t.guards.iter().any(|tg| &tg.cond == f))
        {
            for d in facts[i].disjuncts().unwrap_or_default() {
                let mut sub = facts.clone();
                sub[i] = d.clone();
                self.region(sub, why)?;
            }
            return Ok(());
        }
        if self.budget == 0 {
            return Err(reject(format!(
                "the stored guards do not imply the traced guard `{}` ({}) of a trace at {}: \
                 a guard was weakened or removed",
                g.cond,
                g.reason,
                fmt_point(self.spec, &t.traced_at)
            )));
        }
        let mut with = facts.clone();
        with.push(g.cond.clone());
        self.region(with, why)?;
        let mut without = facts;
        without.push(g.cond.not());
        self.region(without, Some(&g))
    }

    /// A trace at a point of the region: a previous one when its point lies there, else a
    /// new one at the stored trace point or a probe point.
    /// `None` when the region is provably empty (nothing to verify).
    fn trace_in(&mut self, facts: &[&BoolExpr], why: Option<&Guard>) -> Result<Option<Rc<Traced>>> {
        // The region's facts compiled once: a point test is then a few nanoseconds, and
        // the probe grid below examines up to thousands of points.
        let region = Region::new(self.spec, facts);
        if let Some(t) = self.traces.iter().find(|t| region.holds(&t.traced_at)) {
            return Ok(Some(Rc::clone(t)));
        }
        let point = if region.holds(&self.stored.traced_at) {
            Some(self.stored.traced_at.clone())
        } else {
            find_point(self.spec, &region)
        };
        let Some(point) = point else {
            if provably_empty(self.spec, facts) {
                return Ok(None);
            }
            return Err(match why {
                Some(g) => reject(format!(
                    "the stored guards do not imply the traced guard `{}` ({}), and no \
                     binding was found to verify what they admit beyond it: a guard was \
                     weakened or removed",
                    g.cond, g.reason
                )),
                None => reject(format!(
                    "no binding found to re-trace the region {{{}}} (cannot verify)",
                    describe(facts)
                )),
            });
        };
        if self.budget == 0 {
            return Err(reject(format!(
                "verification needs more than {MAX_TRACES} traces (region {{{}}})",
                describe(facts)
            )));
        }
        self.budget -= 1;
        let t = trace_parts(self.spec, &point).map_err(|e| {
            reject(format!(
                "re-tracing at {} failed: {e}",
                fmt_point(self.spec, &point)
            ))
        })?;
        let t = Rc::new(t);
        self.traces.push(Rc::clone(&t));
        Ok(Some(t))
    }
}

/// Adds `f` to `facts`, a conjunction as its parts (so that a disjunction nested in it
/// becomes a fact of its own, which [`empty_by_cases`] can take apart).
fn push_flat(facts: &mut Vec<BoolExpr>, f: &BoolExpr) {
    match f.conjuncts() {
        Some(parts) => parts.iter().for_each(|p| push_flat(facts, p)),
        None => {
            if !facts.contains(f) {
                facts.push(f.clone())
            }
        }
    }
}

/// `goal` follows from `facts` (sizes >= 0): structurally (the fast path: the trace's
/// own simplified guard is stored as is), or proved.
fn implied(spec: &Spec, facts: &[&BoolExpr], goal: &BoolExpr) -> bool {
    if facts.contains(&goal)
        || goal
            .conjuncts()
            .is_some_and(|parts| parts.iter().all(|p| facts.contains(&p)))
    {
        return true;
    }
    decide(spec, facts, goal) == Some(true)
}

/// Some fact's negation follows from the others: no binding satisfies them all.
fn provably_empty(spec: &Spec, facts: &[&BoolExpr]) -> bool {
    empty_by_cases(spec, facts, 3)
}

/// [`provably_empty`]: constants substituted (`c == 1` makes `b < c` read `b < 1`), a fact
/// that becomes false, a fact whose negation the others imply, or a disjunction every
/// branch of which is empty (at most `depth` nested splits).
fn empty_by_cases(spec: &Spec, facts: &[&BoolExpr], depth: usize) -> bool {
    let facts = substitute_constants(facts);
    if facts.iter().any(|f| f.as_const() == Some(false)) {
        return true;
    }
    let refs: Vec<&BoolExpr> = facts.iter().collect();
    let contradicted = (0..refs.len()).any(|i| {
        let others: Vec<&BoolExpr> = (0..refs.len())
            .filter(|&j| j != i)
            .map(|j| refs[j])
            .collect();
        decide(spec, &others, &refs[i].not()) == Some(true)
    });
    if contradicted || depth == 0 {
        return contradicted;
    }
    let Some(i) = refs.iter().position(|f| f.disjuncts().is_some()) else {
        return false;
    };
    refs[i].disjuncts().unwrap_or_default().iter().all(|d| {
        let mut sub: Vec<BoolExpr> = Vec::new();
        for (j, f) in refs.iter().enumerate() {
            if j != i {
                push_flat(&mut sub, f);
            }
        }
        push_flat(&mut sub, d);
        let sub_refs: Vec<&BoolExpr> = sub.iter().collect();
        empty_by_cases(spec, &sub_refs, depth - 1)
    })
}

/// Substitutes every symbol a fact pins to a constant (`s == k`) into all facts.
fn substitute_constants(facts: &[&BoolExpr]) -> Vec<BoolExpr> {
    let mut pinned: Vec<(Symbol, i64)> = Vec::new();
    for f in facts {
        if let Some((crate::sym::Rel::Eq, p)) = f.as_cmp() {
            if let Some(terms) = p.polynomial_terms() {
                // `c*s + k == 0` with c = ±1 (terms in either order), or `c*s == 0`.
                let (mut sym, mut coef, mut k, mut other) = (None, 0, 0, false);
                for (c, fs) in &terms {
                    match fs.as_slice() {
                        [(x, 1)] if sym.is_none() => (sym, coef) = (Some(x.clone()), *c),
                        [] => k = *c,
                        _ => other = true,
                    }
                }
                if let (Some(x), false) = (sym, other) {
                    if coef == 1 || coef == -1 {
                        pinned.push((x, -k * coef));
                    } else if k == 0 && coef != 0 {
                        pinned.push((x, 0));
                    }
                }
            }
        }
    }
    if pinned.is_empty() {
        return facts.iter().map(|f| (*f).clone()).collect();
    }
    let sub = |e: &Expr| {
        e.substitute(&|s: &Symbol| {
            pinned
                .iter()
                .find(|(p, _)| p == s)
                .map(|(_, v)| Expr::constant(*v))
        })
    };
    facts.iter().map(|f| f.map_exprs(&sub)).collect()
}

/// Decides `goal` under `facts`: lower bounds from the facts, factors the bounds make
/// positive cancelled everywhere (`c*h*n == 0` is `c*h == 0` under `n >= 1`), then
/// [`decide_under_by_cases`].
fn decide(spec: &Spec, facts: &[&BoolExpr], goal: &BoolExpr) -> Option<bool> {
    let mins = mins(spec, facts);
    let positive = |s: &Symbol| mins.iter().any(|(m, k)| m == s && *k >= 1);
    let facts: Vec<BoolExpr> = facts
        .iter()
        .map(|f| f.cancel_positive_monomials(&positive))
        .collect();
    let refs: Vec<&BoolExpr> = facts.iter().collect();
    let goal = goal.cancel_positive_monomials(&positive);
    decide_under_by_cases(&mins, &refs, &goal)
}

/// Lower bounds of the symbols: 0 (sizes), raised by facts `s >= k` and `s == k` (the
/// decision procedure then knows e.g. `Max(n, 1) == n` under `n >= 1`).
fn mins(spec: &Spec, facts: &[&BoolExpr]) -> Vec<(Symbol, i64)> {
    let mut mins: Vec<(Symbol, i64)> = spec.symbols.iter().map(|n| (Symbol::new(n), 0)).collect();
    let mut raise = |f: &BoolExpr| {
        let Some((rel, p)) = f.as_cmp() else { return };
        let Some(terms) = p.polynomial_terms() else {
            return;
        };
        let (mut sym, mut coef, mut k) = (None, 0, 0);
        for (c, fs) in &terms {
            match fs.as_slice() {
                [(s, 1)] => (sym, coef) = (Some(s.clone()), *c),
                [] => k = *c,
                _ => return,
            }
        }
        let Some(sym) = sym else { return };
        // `coef*s + k REL 0`: `-s + k <= 0` is `s >= k`; `±s + k == 0` is `s == ∓k`.
        let bound = match (rel, coef) {
            (crate::sym::Rel::Le, -1) => Some(k),
            (crate::sym::Rel::Eq, 1) => Some(-k),
            (crate::sym::Rel::Eq, -1) => Some(k),
            _ => None,
        };
        if let (Some(b), Some(m)) = (bound, mins.iter_mut().find(|(s, _)| *s == sym)) {
            m.1 = m.1.max(b);
        }
    };
    for f in facts {
        match f.conjuncts() {
            Some(parts) => parts.iter().for_each(&mut raise),
            None => raise(f),
        }
    }
    mins
}

fn describe(facts: &[&BoolExpr]) -> String {
    facts
        .iter()
        .map(|f| f.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Adds which traced guard's negation made the region to a plan mismatch.
fn in_region(e: Error, why: Option<&Guard>) -> Error {
    match (e, why) {
        (Error::Artifact { message }, Some(g)) => reject(format!(
            "the stored guards admit bindings where the traced guard `{}` ({}) fails, and \
             there {message}: a guard was weakened or removed",
            g.cond, g.reason
        )),
        (e, _) => e,
    }
}

/// Structure equal, and every expression equal (structurally, or proved under `facts`).
fn compare_plans(
    spec: &Spec,
    facts: &[&BoolExpr],
    stored: &Plan<Expr>,
    traced: &Plan<Expr>,
    at: &[i64],
) -> Result<()> {
    let mismatch = |what: String, a: &dyn std::fmt::Display, b: &dyn std::fmt::Display| {
        reject(format!(
            "plan {what} is `{a}` but a trace at {} gives `{b}` (edited?)",
            fmt_point(spec, at)
        ))
    };
    let fmt_list = |v: &[usize]| format!("{v:?}");
    if stored.perm != traced.perm {
        return Err(mismatch(
            "perm".into(),
            &fmt_list(&stored.perm),
            &fmt_list(&traced.perm),
        ));
    }
    if stored.shape.len() != traced.shape.len() {
        return Err(mismatch(
            "rank".into(),
            &stored.shape.len(),
            &traced.shape.len(),
        ));
    }
    let equal =
        |a: &Expr, b: &Expr| a == b || decide(spec, facts, &BoolExpr::eq(a, b)) == Some(true);
    let mut pairs: Vec<(String, &Expr, &Expr)> = Vec::new();
    for (d, (a, b)) in stored.shape.iter().zip(&traced.shape).enumerate() {
        pairs.push((format!("shape[{d}]"), a, b));
    }
    for (d, (a, b)) in stored
        .broadcast_shape
        .iter()
        .zip(&traced.broadcast_shape)
        .enumerate()
    {
        pairs.push((format!("broadcast_shape[{d}]"), a, b));
    }
    for (k, (a, b)) in stored.operands.iter().zip(&traced.operands).enumerate() {
        if a.byte_strides.len() != b.byte_strides.len() || a.element_size != b.element_size {
            return Err(mismatch(
                format!("operand {k} structure"),
                &a.byte_strides.len(),
                &b.byte_strides.len(),
            ));
        }
        for (d, (x, y)) in a.byte_strides.iter().zip(&b.byte_strides).enumerate() {
            pairs.push((format!("operand {k} stride_bytes[{d}]"), x, y));
        }
        pairs.push((format!("operand {k} offset"), &a.offset, &b.offset));
    }
    for (o, (a, b)) in stored
        .output_strides
        .iter()
        .zip(&traced.output_strides)
        .enumerate()
    {
        for (d, (x, y)) in a.iter().zip(b).enumerate() {
            pairs.push((format!("output_strides[{o}][{d}]"), x, y));
        }
    }
    for (what, a, b) in pairs {
        if !equal(a, b) {
            return Err(mismatch(what, a, b));
        }
    }
    Ok(())
}

fn bindings(spec: &Spec, point: &[i64]) -> Bindings {
    let mut b = Bindings::new();
    for (n, &v) in spec.symbols.iter().zip(point) {
        b.insert(n, v);
    }
    b
}

/// Every fact holds at `point` (an evaluation error counts as not holding).
fn holds(spec: &Spec, facts: &[&BoolExpr], point: &[i64]) -> bool {
    let b = bindings(spec, point);
    facts.iter().all(|f| f.eval(&b).unwrap_or(false))
}

/// A region's facts, ready to be tested at many points: compiled ([`CompiledGuards`]) when
/// they compile, else evaluated exactly through [`Bindings`] (same answers: a fact that
/// cannot be evaluated at a point does not hold there).
struct Region<'a> {
    spec: &'a Spec,
    facts: &'a [&'a BoolExpr],
    compiled: Option<CompiledGuards>,
}

impl<'a> Region<'a> {
    fn new(spec: &'a Spec, facts: &'a [&'a BoolExpr]) -> Region<'a> {
        let set = GuardSet::from(
            facts
                .iter()
                .map(|f| Guard {
                    cond: (*f).clone(),
                    reason: String::new(),
                })
                .collect::<Vec<_>>(),
        );
        Region {
            spec,
            facts,
            compiled: set.compile(&spec.symbols).ok(),
        }
    }

    /// Every fact holds at `point`.
    fn holds(&self, point: &[i64]) -> bool {
        match &self.compiled {
            Some(c) => matches!(c.eval(point), Ok(None)),
            None => holds(self.spec, self.facts, point),
        }
    }
}

/// The first point of a probe grid (per symbol: its hint or a value >= 2, 1, a larger
/// value, 0) where every fact holds and the spec's inputs are real tensors.
fn find_point(spec: &Spec, region: &Region) -> Option<Vec<i64>> {
    let values: Vec<[i64; 4]> = spec
        .hints
        .iter()
        .enumerate()
        .map(|(i, &h)| {
            let a = if h >= 2 { h } else { 2 + i as i64 };
            [a, 1, a + 3 + 2 * i as i64, 0]
        })
        .collect();
    let k = values.len();
    let count = 4usize.checked_pow(k as u32).unwrap_or(usize::MAX);
    let mut point = vec![0i64; k];
    for n in 0..count.min(MAX_PROBES) {
        let mut r = n;
        for (i, vs) in values.iter().enumerate() {
            point[i] = vs[r % 4];
            r /= 4;
        }
        if region.holds(&point) && spec.concrete_inputs(&point).is_ok() {
            return Some(point);
        }
    }
    None
}

fn fmt_point(spec: &Spec, point: &[i64]) -> String {
    let parts: Vec<String> = spec
        .symbols
        .iter()
        .zip(point)
        .map(|(n, v)| format!("{n}={v}"))
        .collect();
    if parts.is_empty() {
        "the (symbol-free) spec".to_string()
    } else {
        parts.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The compiled point test answers exactly as the exact evaluation, including facts
    /// that cannot be evaluated at a point (a division by a size that is 0 there).
    #[test]
    fn compiled_region_test_agrees_with_exact_evaluation() {
        let spec = Spec::from_json(crate::aot::SEED_SPEC_JSON).unwrap();
        let facts: Vec<BoolExpr> = [
            "c >= 1",
            "h != 1 || w == 0",
            "c*h*w != 4",
            "(c*w) // h >= 1",
            "w <= h + 2",
        ]
        .iter()
        .map(|f| BoolExpr::parse(f).unwrap())
        .collect();
        let refs: Vec<&BoolExpr> = facts.iter().collect();
        for n in 1..=refs.len() {
            let region = Region::new(&spec, &refs[..n]);
            assert!(region.compiled.is_some());
            let (mut yes, mut no) = (0, 0);
            for c in 0..5 {
                for h in 0..5 {
                    for w in 0..5 {
                        let p = [c, h, w];
                        let exact = holds(&spec, &refs[..n], &p);
                        assert_eq!(region.holds(&p), exact, "{n} facts at {p:?}");
                        if exact {
                            yes += 1
                        } else {
                            no += 1
                        }
                    }
                }
            }
            assert!(yes > 0 && no > 0, "{n} facts: {yes} / {no}");
        }
    }
}
