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
//!
//!   before that, a quick check: the stored guards imply every guard *as recorded* by the
//!   trace (before its simplification, which keeps their conjunction; see
//!   [`RecordedGuards`]), with the plans equal. It only ever accepts, saves the
//!   simplification (half of a trace) for most specializations (72 of the 100 of
//!   `artifact_load_100`), and leaves
//!   everything it does not settle to the path below, so rejections are unchanged; and
//! * the stored plan **equals** the traced plan *as expressions* (structurally, or proved
//!   equal under the stored guards): a changed expression that agrees only at the trace
//!   point is caught. A stored plan with more iteration dimensions than the trace's (a
//!   cover widened it over sizes 1: `CompileOptions::widen_size_1`) is first coalesced
//!   again as the build would at the trace's point ([`Retrace::normalized`]), and the
//!   region must imply every decision that records, since instantiation coalesces it the
//!   same way.
//!
//! The verification is written once, generic over what is traced ([`Retrace`]): a
//! single-op spec (its payload is the iterator plan) or a program (its payload is every
//! value's layout, or the error the trace stopped with; see `program/artifact.rs`).
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
//! else the first point of a small probe grid that does, else a binding the cover's
//! witness search builds from the region's equalities). Every leaf region is then covered
//! by a trace whose guards it implies and whose plan equals the stored plan under it, which
//! is the soundness contract. A weakened guard that really changes the answer lands in a
//! region whose trace gives another plan (rejected, naming the guard); a region for which
//! no point can be found, or a split beyond the budget, is rejected as unverifiable (the
//! budget: see [`Hints`]; the compile stores the points it traced at as hints, so a load
//! replays its case split without searching).

use super::prover::{order_cycle, order_equalities, witness_of};
use super::spec::Spec;
use super::specialization::Specialization;
use super::trace::{trace_outcome_recorded, Answer, EmptyRule, RecordedGuards, TracedGuards};
use crate::error::{Error, Result};
use crate::iter::Plan;
use crate::sym::{
    Bindings, BoolExpr, CompiledGuards, Expr, Guard, GuardSet, Symbol,
};
use std::sync::{Arc, OnceLock};

/// At most this many traces per specialization (the first, plus those of split regions).
const MAX_TRACES: usize = 32;
/// And this many more per branch of a stored disjunction.
const TRACES_PER_BRANCH: usize = 4;
/// At most this many traces when a compile verifies a specialization it writes (its
/// points are then stored, and a load's budget grows by their number).
const COMPILE_MAX_TRACES: usize = 4096;
/// At most this many probe points are examined to find a point of one region.
const MAX_PROBES: usize = 20_000;

/// Why a specialization was rejected (the message of the loader's `Artifact` error, which
/// prefixes `specialization k: `).
fn reject(message: String) -> Error {
    Error::Artifact { message }
}

/// Verifies `stored` (a specialization of an artifact of `spec`) against fresh traces;
/// `stored.verify_points` are tried first where a region needs a point (see
/// [`verify_stored_pooled`]).
pub(super) fn verify(spec: &Spec, stored: &Specialization) -> Result<Verification> {
    verify_with(spec, stored, Hints::from(stored.verify_points.as_deref()), &[])
}

/// [`verify`] with the hints given: what a compile runs ([`Hints::Record`]) to find them.
/// `pool`: traces of `spec` the caller made already (a compile's cover, whose traces are
/// [`trace_or_error`](super::trace::trace_or_error)'s), used where a region contains their
/// point instead of tracing there again (each still counts as a trace of the verification
/// and is recorded among its points). Only traces equal to what the verification's own
/// trace at their point would give are taken: for a plan (re-traced under
/// [`EmptyRule::ZeroClassPlan`]) not the empty-output ones.
pub(super) fn verify_with(
    spec: &Spec,
    stored: &Specialization,
    hints: Hints,
    pool: &[Arc<Traced<Answer>>],
) -> Result<Verification> {
    let payload = stored.answer();
    let rule = match payload {
        // A plan: re-traced with the rule it may have been compiled under (artifacts written
        // before empty-output specializations widened plans over zero patterns; a plan is
        // never the answer at an empty point under the current rule, so a plan whose
        // guards admit such a point is checked against that pattern's traced plan).
        Answer::Plan(_) => EmptyRule::ZeroClassPlan,
        Answer::EmptyOutput | Answer::Error(_) => EmptyRule::EmptyOutput,
    };
    let pool: Vec<Arc<Traced<Answer>>> = pool
        .iter()
        .filter(|t| rule == EmptyRule::EmptyOutput || t.payload != Answer::EmptyOutput)
        .cloned()
        .collect();
    verify_stored_pooled(
        &SpecSubject(spec, rule),
        &stored.traced_at,
        &stored.guards,
        &payload,
        None,
        pool,
        hints,
    )
}

/// The traces of a compile's cover as a verification's pool (see [`verify_with`]): made
/// once and shared by every specialization's verification (converting them per
/// specialization was a tenth of the compile of a 245-specialization cover).
pub(super) fn pool_of(traced: &[Specialization]) -> Vec<Arc<Traced<Answer>>> {
    traced
        .iter()
        .map(|t| {
            Arc::new(Traced {
                traced_at: t.traced_at.clone(),
                recorded: None,
                guards: OnceLock::from(t.guards.clone()),
                payload: t.answer(),
            })
        })
        .collect()
}

/// What a verification knows in advance about where to trace, which also sets its budget.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Hints<'a> {
    /// Nothing: an artifact written before hints were stored, or a specialization built in
    /// memory. Points are searched for; budget [`MAX_TRACES`] plus [`TRACES_PER_BRANCH`]
    /// per branch of a stored disjunction.
    Unknown,
    /// The points a previous verification traced at (a loaded artifact's
    /// `verify_points`), tried first. The budget also grows by one per point: a load costs
    /// at most linearly more in the size of the file, and replays a verification that
    /// needed more traces than the fixed budget (a widened specialization whose region
    /// splits into many traced classes).
    Recorded(&'a [Vec<i64>]),
    /// A compile verifying what it is about to write, recording the points: budget
    /// [`COMPILE_MAX_TRACES`].
    Record,
}

impl<'a> From<Option<&'a [Vec<i64>]>> for Hints<'a> {
    fn from(h: Option<&'a [Vec<i64>]>) -> Hints<'a> {
        h.map_or(Hints::Unknown, Hints::Recorded)
    }
}

impl Hints<'_> {
    fn points(&self) -> Option<&[Vec<i64>]> {
        match self {
            Hints::Recorded(p) => Some(p),
            _ => None,
        }
    }

    /// The trace budget for a stored specialization with `branches` disjunct branches.
    fn budget(&self, branches: usize) -> usize {
        let base = MAX_TRACES + TRACES_PER_BRANCH * branches;
        match self {
            Hints::Unknown => base,
            Hints::Recorded(p) => base + p.len(),
            Hints::Record => COMPILE_MAX_TRACES.max(base),
        }
    }
}

/// Verifies a stored specialization of `subject` (its trace point, guards and payload)
/// against fresh traces: ONE verification for single-op specs and programs. `seed`: the
/// caller's own trace at `traced_at` (its guards and payload,
/// from [`Retrace::retrace`] there): the verifier uses it as its first trace instead of
/// tracing at that point again. It counts against the budget as that trace would.
///
/// `hints` are points to trace at, tried before any search where a region needs a point:
/// the points a previous verification of the same specialization traced at (what this
/// returns: every traced point but `traced_at`, in order), stored in the artifact by the
/// compile so that a load replays its case split without searching. They are not trusted:
/// a hint is used only for a region it lies in (and a valid binding), where any point
/// would do; a region none lies in is first tried for a proof that it is empty (the
/// verification that recorded the hints found no point there), then searched as without
/// hints. The budget of traces depends on them too (see [`Hints`]).
///
/// `pool`: traces the caller made already (see [`verify_with`]; a program compile's pool
/// is its cover's traces, [`Traced::made`]), taken where a region contains their point.
pub(crate) fn verify_stored_pooled<S: Retrace>(
    subject: &S,
    traced_at: &[i64],
    guards: &[Guard],
    payload: &S::Payload,
    seed: Option<(TracedGuards, S::Payload)>,
    pool: Vec<Arc<Traced<S::Payload>>>,
    hints: Hints,
) -> Result<Verification> {
    let facts: Vec<BoolExpr> = guards.iter().map(|g| g.cond.clone()).collect();
    let traces: Vec<_> = seed
        .map(|(guards, payload)| Arc::new(Traced::new(traced_at.to_vec(), guards, payload)))
        .into_iter()
        .collect();
    // Each branch of a stored disjunction (a cover's merged classes) is a region of its
    // own and needs its own traces: the budget grows with them (linearly in the file).
    let branches: usize = facts
        .iter()
        .map(|f| f.disjuncts().map_or(0, |d| d.len()))
        .sum();
    let mut v = Verifier {
        subject,
        traced_at,
        payload,
        budget: hints.budget(branches) - traces.len(),
        traces,
        pool,
        hints: hints.points(),
        searches: 0,
        simplified: 0,
        coalesced: std::cell::Cell::new(false),
    };
    v.region(facts, None)?;
    Ok(Verification {
        points: v
            .traces
            .iter()
            .map(|t| t.traced_at.clone())
            .filter(|p| p != traced_at)
            .collect(),
        searches: v.searches,
        simplified: v.simplified,
        coalesced: v.coalesced.get(),
    })
}

/// What a successful verification did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Verification {
    /// Every point it traced at but the trace point, in order: the hints a later
    /// verification of the same specialization replays.
    pub points: Vec<Vec<i64>>,
    /// Regions for which no trace, hint or trace point lay inside and no quick proof of
    /// emptiness held, so a point was searched for (probe grid, witness search).
    pub searches: usize,
    /// Traces whose recorded guards the quick check did not settle, so that they were
    /// simplified (see [`RecordedGuards`]).
    pub simplified: usize,
    /// Whether some region's traced plan is the stored one only once coalesced again
    /// ([`Retrace::normalized`]: a plan a cover widened over sizes 1). When false, every
    /// region's plan is the stored plan as it is, and instantiation need not coalesce.
    pub coalesced: bool,
}

/// A trace made during verification (or by the caller, for its pool).
pub(crate) struct Traced<P> {
    traced_at: Vec<i64>,
    /// The guards as recorded, when the trace kept them (see [`RecordedGuards`]).
    recorded: Option<RecordedGuards>,
    /// The guards in their stored form: simplified from `recorded` when first needed.
    guards: OnceLock<Vec<Guard>>,
    payload: P,
}

impl<P> Traced<P> {
    /// A trace the caller made at `traced_at` (guards simplified, as a cover keeps them), for
    /// a verification's pool ([`verify_stored_pooled`]). It must be what the verification's
    /// own [`Retrace::retrace`] at that point gives: the pool stands in for that trace.
    pub(crate) fn made(traced_at: Vec<i64>, guards: Vec<Guard>, payload: P) -> Arc<Traced<P>> {
        Arc::new(Traced::new(traced_at, TracedGuards::Simplified(guards), payload))
    }

    fn new(traced_at: Vec<i64>, guards: TracedGuards, payload: P) -> Traced<P> {
        let (recorded, guards) = match guards {
            TracedGuards::Simplified(g) => (None, OnceLock::from(g)),
            TracedGuards::Recorded(r) => (Some(r), OnceLock::new()),
        };
        Traced {
            traced_at,
            recorded,
            guards,
            payload,
        }
    }

    /// The guards in their stored form.
    fn guards(&self) -> &[Guard] {
        self.guards.get_or_init(|| {
            self.recorded
                .as_ref()
                .map(RecordedGuards::simplify)
                .unwrap_or_default()
        })
    }
}

struct Verifier<'a, S: Retrace> {
    subject: &'a S,
    traced_at: &'a [i64],
    payload: &'a S::Payload,
    /// Traces made so far (point, trace), reused when a region contains their point.
    traces: Vec<Arc<Traced<S::Payload>>>,
    budget: usize,
    /// Traces made by the caller, taken (into `traces`) when a region contains their point.
    pool: Vec<Arc<Traced<S::Payload>>>,
    /// Points to try first (see [`verify_stored_pooled`]).
    hints: Option<&'a [Vec<i64>]>,
    /// See [`Verification::searches`].
    searches: usize,
    /// See [`Verification::simplified`].
    simplified: usize,
    /// See [`Verification::coalesced`].
    coalesced: std::cell::Cell<bool>,
}

impl<S: Retrace> Verifier<'_, S> {
    /// Verifies the region `facts`; `why` is the traced guard whose negation created it.
    fn region(&mut self, facts: Vec<BoolExpr>, why: Option<&Guard>) -> Result<()> {
        let syms = self.subject.symbols();
        let refs: Vec<&BoolExpr> = facts.iter().collect();
        let Some(t) = self.trace_in(&refs, why)? else {
            return Ok(());
        };
        let mut decider = None;
        // The quick check first (see [`RecordedGuards`]): the region's facts imply every
        // guard as recorded, and the plans are equal. It only accepts; whatever it does not
        // prove goes through the simplified guards below, which decide rejections.
        if let (Some(r), None) = (&t.recorded, t.guards.get()) {
            let recorded = r.recorded();
            // Not split here when the check fails: whether a stored disjunction is one the
            // trace recorded (then no split is needed, and its branches may be regions no
            // point is found for) is known from the simplified guards only.
            if recorded
                .iter()
                .all(|g| implied_by(syms, &refs, &g.cond, &mut decider))
                && self.compare_under(&refs, &recorded, &t).is_ok()
            {
                return Ok(());
            }
            self.simplified += 1;
        }
        let missing = t
            .guards()
            .iter()
            .find(|g| !implied_by(syms, &refs, &g.cond, &mut decider));
        let Some(g) = missing.cloned() else {
            return self
                .compare_under(&refs, t.guards(), &t)
                .map_err(|e| in_region(e, why));
        };
        // A stored disjunction the trace did not record: one region per disjunct.
        if let Some(i) = facts
            .iter()
            .position(|f| f.disjuncts().is_some() && !t.guards().iter().any(|tg| &tg.cond == f))
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
                "the stored guards do not imply the traced guard `{}` ({}) of a trace at {}, \
                 and the budget of traces is spent: a guard was weakened or removed (or the \
                 file lacks the `verify_points` its compile recorded)",
                g.cond,
                g.reason,
                fmt_point(syms, &t.traced_at)
            )));
        }
        let mut with = facts.clone();
        with.push(g.cond.clone());
        self.region(with, why)?;
        let mut without = facts;
        without.push(g.cond.not());
        self.region(without, Some(&g))
    }

    /// Compares the stored payload with trace `t`'s under the region's `facts` and the
    /// trace's `guards`: the facts imply every one of them, so adding them is sound, and
    /// their literals (`b == 0`) are what the comparison substitutes.
    fn compare_under(
        &self,
        facts: &[&BoolExpr],
        guards: &[Guard],
        t: &Traced<S::Payload>,
    ) -> Result<()> {
        let mut with = facts.to_vec();
        with.extend(guards.iter().map(|g| &g.cond));
        let coalesced = compare(self.subject, &with, self.payload, &t.payload, &t.traced_at)?;
        if coalesced {
            self.coalesced.set(true);
        }
        Ok(())
    }

    /// A trace at a point of the region: a previous one when its point lies there, else a
    /// new one at the stored trace point or a probe point.
    /// `None` when the region is provably empty (nothing to verify).
    fn trace_in(
        &mut self,
        facts: &[&BoolExpr],
        why: Option<&Guard>,
    ) -> Result<Option<Arc<Traced<S::Payload>>>> {
        let syms = self.subject.symbols();
        // The region's facts compiled once: a point test is then a few nanoseconds, and
        // the probe grid below examines up to thousands of points.
        let region = Region::new(syms, facts);
        if let Some(t) = self.traces.iter().find(|t| region.holds(&t.traced_at)) {
            return Ok(Some(Arc::clone(t)));
        }
        if self.budget > 0 {
            if let Some(i) = self.pool.iter().position(|t| region.holds(&t.traced_at)) {
                self.budget -= 1;
                let t = self.pool.swap_remove(i);
                self.traces.push(Arc::clone(&t));
                return Ok(Some(t));
            }
        }
        // A hint, then the (cheap) proof that the region is empty, then the probe grid, and
        // only then the witness search: splitting regions on traced guards makes many
        // empty ones, where the search would run to exhaustion.
        let hint = || {
            self.hints?
                .iter()
                .find(|p| region.holds(p) && self.subject.valid_point(p))
                .cloned()
        };
        // A region no hint lies in is most likely empty (with hints: one the recording
        // verification proved empty): that proof is tried before the probe grid, and only
        // once. Without hints too (a compile verifying what it writes): regions split off
        // a specialization widened over sizes 1 are mostly empty, and the probe grid
        // (20,000 points) before each proof made the compile of `[a, ..., g] + [h, 1, ...,
        // 1, g]` widened in one run 3.9 s instead of 0.48 (27 Nov).
        let point = if region.holds(self.traced_at) {
            Some(self.traced_at.to_vec())
        } else if let Some(p) = hint() {
            Some(p)
        } else if provably_empty(syms, facts) {
            return Ok(None);
        } else {
            self.searches += 1;
            find_point(self.subject, &region)
        };
        let point = match point {
            Some(p) => Some(p),
            None => witness_of(
                self.subject.symbols(),
                self.subject.hints(),
                &|p| self.subject.valid_point(p),
                facts,
            ),
        };
        let point = match point {
            Some(p) => Some(p),
            // A region written as a disjunction (merged cover guards): a point of one branch
            // is a point of the region.
            None => point_in_branches(self.subject, facts, 3).filter(|p| region.holds(p)),
        };
        let Some(point) = point else {
            return Err(match why {
                Some(g) => reject(format!(
                    "the stored guards do not imply the traced guard `{}` ({}), and no \
                     binding was found to verify what they admit beyond it (region {{{}}}): \
                     a guard was weakened or removed",
                    g.cond,
                    g.reason,
                    describe(facts)
                )),
                None => reject(format!(
                    "no binding found to re-trace the region {{{}}} (cannot verify)",
                    describe(facts)
                )),
            });
        };
        if self.budget == 0 {
            return Err(reject(format!(
                "verification needs more traces than its budget ({MAX_TRACES}, \
                 {TRACES_PER_BRANCH} per branch of a stored disjunction and one per stored \
                 verify point; region {{{}}})",
                describe(facts)
            )));
        }
        self.budget -= 1;
        let (guards, payload) = self.subject.retrace(&point).map_err(|e| {
            reject(format!(
                "re-tracing at {} failed: {e}",
                fmt_point(syms, &point)
            ))
        })?;
        let t = Arc::new(Traced::new(point, guards, payload));
        self.traces.push(Arc::clone(&t));
        Ok(Some(t))
    }
}

/// A point of the region `facts` (compiled as `region`): the probe grid, then, for regions
/// pinned by products the grid misses (`t == c*u`, free strides), the cover's witness
/// search, which builds such values from the equalities.
fn grid_or_witness<S: Retrace>(
    subject: &S,
    region: &Region,
    facts: &[&BoolExpr],
) -> Option<Vec<i64>> {
    find_point(subject, region).or_else(|| {
        witness_of(
            subject.symbols(),
            subject.hints(),
            &|p| subject.valid_point(p),
            facts,
        )
    })
}

/// A point of the region `facts` with its conjunctions flattened (the witness search sees
/// one literal per fact, e.g. the orderings it solves): the probe grid, then the cover's
/// witness search, then the same in each branch of the first disjunction (a point of a
/// branch is one of the region), at most `depth` splits deep.
fn point_in_branches<S: Retrace>(
    subject: &S,
    facts: &[&BoolExpr],
    depth: usize,
) -> Option<Vec<i64>> {
    let syms = subject.symbols();
    let flat = flattened(facts.iter().copied());
    let refs: Vec<&BoolExpr> = flat.iter().collect();
    if let Some(p) = grid_or_witness(subject, &Region::new(syms, &refs), &refs) {
        return Some(p);
    }
    if depth == 0 {
        return None;
    }
    let i = flat.iter().position(|f| f.disjuncts().is_some())?;
    flat[i]
        .disjuncts()
        .unwrap_or_default()
        .iter()
        .find_map(|d| {
            let mut sub = flat.clone();
            sub.remove(i);
            push_flat(&mut sub, d);
            let refs: Vec<&BoolExpr> = sub.iter().collect();
            point_in_branches(subject, &refs, depth - 1)
        })
}

/// `facts` with each conjunction as its parts ([`push_flat`]).
fn flattened<'a>(facts: impl IntoIterator<Item = &'a BoolExpr>) -> Vec<BoolExpr> {
    let mut flat = Vec::new();
    for f in facts {
        push_flat(&mut flat, f);
    }
    flat
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
///
/// The proof uses `decider`, made from `facts` when first needed and kept for the caller's
/// next goal under the same facts.
fn implied_by(
    spec: &[String],
    facts: &[&BoolExpr],
    goal: &BoolExpr,
    decider: &mut Option<Decider>,
) -> bool {
    if facts.contains(&goal)
        || goal
            .conjuncts()
            .is_some_and(|parts| parts.iter().all(|p| facts.contains(&p)))
    {
        return true;
    }
    decider
        .get_or_insert_with(|| Decider::new(spec, facts))
        .decide(goal)
        == Some(true)
}

/// Some fact's negation follows from the others: no binding satisfies them all.
fn provably_empty(spec: &[String], facts: &[&BoolExpr]) -> bool {
    empty_by_cases(spec, facts, 3)
}

/// [`provably_empty`]: constants substituted (`c == 1` makes `b < c` read `b < 1`), a fact
/// that becomes false, orderings that contradict each other, a fact whose negation the
/// others (with the equalities the orderings imply) imply, or a disjunction every
/// branch of which is empty (at most `depth` nested splits).
fn empty_by_cases(spec: &[String], facts: &[&BoolExpr], depth: usize) -> bool {
    // Conjunctions as their parts, so that a disjunction nested in one is split below.
    let flat = flattened(facts.iter().copied());
    let refs: Vec<&BoolExpr> = flat.iter().collect();
    let mut facts = substitute_constants(&refs);
    if facts.iter().any(|f| f.as_const() == Some(false)) {
        return true;
    }
    // Orderings (free strides): a cycle is a contradiction, and the equalities they imply
    // (`s <= t`, `t <= s`) rewrite the other facts (`a*s == t` reads `a*s == s`, which
    // cancelling the positive `s` turns into `a == 1`).
    if order_cycle(&facts) {
        return true;
    }
    let equalities = order_equalities(&facts);
    for sol in equalities.iter().filter_map(solve_for) {
        facts = facts.iter().map(|f| rewrite(f, &sol)).collect();
    }
    facts.extend(equalities);
    // Then each equality fact that solves for a symbol (`a*s == u` gives `u`) rewrites the
    // others (`a*c*s == u` then reads `a*c*s == a*s`, i.e. `c == 1` under `a, s >= 1`).
    for i in 0..facts.len() {
        if let Some(sol) = solve_for(&facts[i]) {
            for (j, f) in facts.iter_mut().enumerate() {
                if j != i {
                    *f = rewrite(f, &sol);
                }
            }
        }
    }
    // A rewrite can collapse a disjunction to one branch, a conjunction (`(b == c && b >=
    // 2) || c >= 1` under `c == 0`): its parts become facts of their own, as the decision
    // procedure below reads them (`b == 0`, `b >= 2`).
    let facts = flattened(&facts);
    if facts.iter().any(|f| f.as_const() == Some(false)) {
        return true;
    }
    // Unit propagation: a disjunct the other facts refute goes; a disjunction left with
    // one branch becomes facts of its own (`b*t == u || u == 1` next to `u != 1` is `b*t
    // == u`), so the splits below are spent on real choices.
    let Some(facts) = propagate(spec, facts) else {
        return true;
    };
    let refs: Vec<&BoolExpr> = facts.iter().collect();
    // A fact next to its own negation (the rewrites above can make two facts meet:
    // `b*c == s` and `b*c != s || ...` under `s == 1`). The decision procedure below
    // may not see it: its facts would then contradict each other.
    if facts.iter().any(|f| facts.contains(&f.not())) {
        return true;
    }
    let contradicted = (0..refs.len()).any(|i| {
        let others: Vec<&BoolExpr> = (0..refs.len())
            .filter(|&j| j != i)
            .map(|j| refs[j])
            .collect();
        decide(spec, &others, &refs[i].not()) == Some(true)
    });
    if contradicted {
        return true;
    }
    // The conjunction as a whole (`sym::linear`: contradictions between facts that no
    // single decision shows, `t == FloorDiv(t + 1, 2)` with `FloorDiv(t + 1, 2) == 1` and
    // `FloorDiv(t, 2) == FloorDiv(t + 1, 2)`); its disjunctions are left out there.
    if Decider::new(spec, &refs).facts.refutes(&facts) {
        return true;
    }
    if depth == 0 {
        return false;
    }
    // The disjunction with the fewest branches first.
    let Some(i) = (0..refs.len())
        .filter(|&i| refs[i].disjuncts().is_some())
        .min_by_key(|&i| refs[i].disjuncts().map_or(0, |d| d.len()))
    else {
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

/// `facts` with each disjunction's branches that the other facts refute removed (a
/// disjunction left with one branch is replaced by its conjuncts), repeated until nothing
/// changes; `None` when a disjunction loses every branch (the facts contradict each
/// other). Equivalent: a refuted branch cannot hold where the others do.
fn propagate(spec: &[String], mut facts: Vec<BoolExpr>) -> Option<Vec<BoolExpr>> {
    // Each round removes at least one branch, so the rounds are bounded by their count.
    loop {
        let mut changed = false;
        let mut i = 0;
        while i < facts.len() {
            let Some(ds) = facts[i].disjuncts().map(|d| d.to_vec()) else {
                i += 1;
                continue;
            };
            let others: Vec<&BoolExpr> = (0..facts.len())
                .filter(|&j| j != i)
                .map(|j| &facts[j])
                .collect();
            let kept: Vec<BoolExpr> = ds
                .iter()
                .filter(|d| decide(spec, &others, d) != Some(false))
                .cloned()
                .collect();
            if kept.len() == ds.len() {
                i += 1;
                continue;
            }
            changed = true;
            match kept.len() {
                0 => return None,
                1 => {
                    facts.remove(i);
                    let mut rest = Vec::new();
                    push_flat(&mut rest, &kept[0]);
                    for f in rest {
                        if !facts.contains(&f) {
                            facts.push(f);
                        }
                    }
                }
                _ => {
                    facts[i] = BoolExpr::or_all(kept);
                    i += 1;
                }
            }
        }
        if !changed {
            return Some(facts);
        }
    }
}

/// The symbol an equality solves for and its value: `y == x + k` (a symbol with coefficient
/// ±1 that the rest of the equality does not mention) gives `(y, x + k)`.
fn solve_for(eq: &BoolExpr) -> Option<(Symbol, Expr)> {
    let Some((crate::sym::Rel::Eq, p)) = eq.as_cmp() else {
        return None;
    };
    let (c, y) = p
        .polynomial_terms()?
        .iter()
        .find_map(|(c, fs)| match fs.as_slice() {
            [(y, 1)] if *c == 1 || *c == -1 => Some((*c, y.clone())),
            _ => None,
        })?;
    // p = c*y + rest == 0, so y = -rest / c = -c * rest.
    let rest = p.sub(&Expr::symbol(y.as_str()).mul(&Expr::constant(c)));
    if rest.symbols().contains(&y) {
        return None;
    }
    Some((y, rest.mul(&Expr::constant(-c))))
}

/// Rewrites `fact` with `y` replaced by `value`.
fn rewrite(fact: &BoolExpr, (y, value): &(Symbol, Expr)) -> BoolExpr {
    fact.substitute(&|s: &Symbol| (s == y).then(|| value.clone()))
}

/// Substitutes every symbol a fact pins to a constant (`s == k`) into all facts.
fn substitute_constants(facts: &[&BoolExpr]) -> Vec<BoolExpr> {
    let pinned = pinned_constants(facts);
    if pinned.is_empty() {
        return facts.iter().map(|f| (*f).clone()).collect();
    }
    facts
        .iter()
        .map(|f| f.map_exprs(&|e: &Expr| with_constants(e, &pinned)))
        .collect()
}

/// `e` with the symbols of `pinned` replaced by their values.
fn with_constants(e: &Expr, pinned: &[(Symbol, i64)]) -> Expr {
    e.substitute(&|s: &Symbol| {
        pinned
            .iter()
            .find(|(p, _)| p == s)
            .map(|(_, v)| Expr::constant(*v))
    })
}

/// The symbols the facts pin to a constant: `c*s + k == 0` with `c = ±1`, or `c*s == 0`.
fn pinned_constants(facts: &[&BoolExpr]) -> Vec<(Symbol, i64)> {
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
    pinned
}

/// Decides `goal` under `facts`: lower bounds from the facts, factors the bounds make
/// positive cancelled everywhere (`c*h*n == 0` is `c*h == 0` under `n >= 1`), then
/// [`decide_under_by_cases`].
fn decide(spec: &[String], facts: &[&BoolExpr], goal: &BoolExpr) -> Option<bool> {
    Decider::new(spec, facts).decide(goal)
}

/// [`decide`] for many goals under the same facts: the facts are prepared and assumed
/// once (a plan comparison decides one equality per plan entry under one region).
struct Decider {
    mins: Vec<(Symbol, i64)>,
    facts: crate::sym::Facts,
}

impl Decider {
    fn new(spec: &[String], facts: &[&BoolExpr]) -> Decider {
        let mins = mins(spec, facts);
        let positive = |s: &Symbol| mins.iter().any(|(m, k)| m == s && *k >= 1);
        let mut known = crate::sym::Facts::new(&mins);
        for f in facts {
            known.assume(&f.cancel_positive_monomials(&positive));
        }
        Decider {
            mins,
            facts: known,
        }
    }

    fn decide(&self, goal: &BoolExpr) -> Option<bool> {
        let positive = |s: &Symbol| self.mins.iter().any(|(m, k)| m == s && *k >= 1);
        self.facts
            .decide_by_cases(&goal.cancel_positive_monomials(&positive))
    }
}

/// Lower bounds of the symbols: 0 (sizes), raised by facts `s >= k` and `s == k` (the
/// decision procedure then knows e.g. `Max(n, 1) == n` under `n >= 1`).
fn mins(spec: &[String], facts: &[&BoolExpr]) -> Vec<(Symbol, i64)> {
    let mut mins: Vec<(Symbol, i64)> = spec.iter().map(|n| (Symbol::new(n), 0)).collect();
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

/// A traced result's structure compared, its expressions listed as
/// `(what, stored, traced)` pairs for [`compare`] to prove equal.
pub(crate) type Pairs<'a> = Vec<(String, &'a Expr, &'a Expr)>;

/// A structural difference: `(what, stored, traced)`, printed.
pub(crate) type Mismatch = (String, String, String);

/// What the verifier re-traces: a single-op spec (its plan) or a program (its values).
pub(crate) trait Retrace {
    /// What a trace computes besides its guards.
    type Payload;
    /// The symbols, in value order.
    fn symbols(&self) -> &[String];
    /// The hints (seed of the probe grid).
    fn hints(&self) -> &[i64];
    /// Whether `point` describes real inputs (a trace and a concrete run are defined there).
    fn valid_point(&self, point: &[i64]) -> bool;
    /// A fresh trace at `point`: its guards (simplified, or as recorded when the trace
    /// keeps them) and its payload.
    fn retrace(&self, point: &[i64]) -> Result<(TracedGuards, Self::Payload)>;
    /// Compares the structure of a stored and a traced payload, listing the expressions
    /// that must be equal.
    fn pairs<'a>(
        &self,
        stored: &'a Self::Payload,
        traced: &'a Self::Payload,
    ) -> std::result::Result<Pairs<'a>, Mismatch>;
    /// The stored payload in the form a trace at `at` would give it, when it differs only
    /// by what the build's own normalization there removes, with the guards that
    /// normalization recorded (the region must imply them); `None` to compare as stored.
    /// A single-op plan with more iteration dimensions than the traced one is coalesced
    /// again (see [`super::trace::coalesce_at`]).
    fn normalized(
        &self,
        _stored: &Self::Payload,
        _traced: &Self::Payload,
        _at: &[i64],
    ) -> Option<Result<(Vec<Guard>, Self::Payload)>> {
        None
    }
}

/// A single-op spec: a trace ends in a plan, an empty output, or the category of the error
/// the build fails with (an error specialization); traced under the given rule for empty
/// inputs.
struct SpecSubject<'a>(&'a Spec, EmptyRule);

impl Retrace for SpecSubject<'_> {
    type Payload = Answer;

    fn symbols(&self) -> &[String] {
        &self.0.symbols
    }

    fn hints(&self) -> &[i64] {
        &self.0.hints
    }

    fn valid_point(&self, point: &[i64]) -> bool {
        self.0.concrete_inputs(point).is_ok()
    }

    fn retrace(&self, point: &[i64]) -> Result<(TracedGuards, Self::Payload)> {
        trace_outcome_recorded(self.0, point, self.1)
    }

    fn normalized(
        &self,
        stored: &Answer,
        traced: &Answer,
        at: &[i64],
    ) -> Option<Result<(Vec<Guard>, Answer)>> {
        match (stored, traced) {
            (Answer::Plan(a), Answer::Plan(b))
                if a.shape.len() > b.shape.len() && !b.is_statically_empty() =>
            {
                Some(
                    super::trace::coalesce_at(self.0, at, a)
                        .map(|(g, p)| (g.recorded(), Answer::Plan(p))),
                )
            }
            _ => None,
        }
    }

    fn pairs<'a>(
        &self,
        stored: &'a Self::Payload,
        traced: &'a Self::Payload,
    ) -> std::result::Result<Pairs<'a>, Mismatch> {
        let show = |e: &Self::Payload| match e {
            Answer::Error(c) => format!("a {c} error"),
            Answer::EmptyOutput => "an empty output (the build succeeds)".to_string(),
            Answer::Plan(_) => "a plan (the build succeeds)".to_string(),
        };
        match (stored, traced) {
            (Answer::Plan(a), Answer::Plan(b)) => plan_pairs(a, b),
            (Answer::EmptyOutput, Answer::EmptyOutput) => Ok(Vec::new()),
            (Answer::Error(a), Answer::Error(b)) if a == b => Ok(Vec::new()),
            _ => Err(("the answer".into(), show(stored), show(traced))),
        }
    }
}

/// [`Retrace::pairs`] of two plans (also the cover's test that a new trace has an
/// existing specialization's plan). A trace at an empty output (canonical empty form) is
/// compared on the output layout only: that is all a binding of an empty output observes,
/// and the stored plan is instantiated in the canonical empty form there too.
pub(super) fn plan_pairs<'a>(
    stored: &'a Plan<Expr>,
    traced: &'a Plan<Expr>,
) -> std::result::Result<Pairs<'a>, Mismatch> {
    let empty = traced.is_statically_empty();
    if !empty && stored.perm != traced.perm {
        return Err((
            "plan perm".into(),
            format!("{:?}", stored.perm),
            format!("{:?}", traced.perm),
        ));
    }
    if stored.num_outputs != traced.num_outputs
        || stored.broadcast_shape.len() != traced.broadcast_shape.len()
        || stored.output_strides.len() != traced.output_strides.len()
        || stored.operands.len() != traced.operands.len()
        || (!empty && stored.shape.len() != traced.shape.len())
    {
        return Err((
            "plan rank".into(),
            format!("{}/{}", stored.broadcast_shape.len(), stored.shape.len()),
            format!("{}/{}", traced.broadcast_shape.len(), traced.shape.len()),
        ));
    }
    let mut pairs: Pairs<'a> = Vec::new();
    if !empty {
        for (d, (a, b)) in stored.shape.iter().zip(&traced.shape).enumerate() {
            pairs.push((format!("plan shape[{d}]"), a, b));
        }
    }
    for (d, (a, b)) in stored
        .broadcast_shape
        .iter()
        .zip(&traced.broadcast_shape)
        .enumerate()
    {
        pairs.push((format!("plan broadcast_shape[{d}]"), a, b));
    }
    // Over an empty output the operands' iteration strides are never used.
    let operands = if empty { &[][..] } else { &stored.operands[..] };
    for (k, (a, b)) in operands.iter().zip(&traced.operands).enumerate() {
        if a.byte_strides.len() != b.byte_strides.len()
            || a.element_size != b.element_size
            || a.is_output != b.is_output
        {
            return Err((
                format!("plan operand {k} structure"),
                a.byte_strides.len().to_string(),
                b.byte_strides.len().to_string(),
            ));
        }
        for (d, (x, y)) in a.byte_strides.iter().zip(&b.byte_strides).enumerate() {
            pairs.push((format!("plan operand {k} stride_bytes[{d}]"), x, y));
        }
        pairs.push((format!("plan operand {k} offset"), &a.offset, &b.offset));
    }
    for (o, (a, b)) in stored
        .output_strides
        .iter()
        .zip(&traced.output_strides)
        .enumerate()
    {
        if a.len() != b.len() {
            return Err((
                format!("plan output {o} rank"),
                a.len().to_string(),
                b.len().to_string(),
            ));
        }
        for (d, (x, y)) in a.iter().zip(b).enumerate() {
            pairs.push((format!("plan output_strides[{o}][{d}]"), x, y));
        }
    }
    Ok(pairs)
}

/// [`compare`] of a stored and a traced single-op plan of `spec` at `at` (the stored one
/// coalesced again there first when it has more iteration dimensions): the cover's test
/// that a plan widened over sizes 1 answers a new trace's class.
pub(super) fn plan_equal_under(
    spec: &Spec,
    facts: &[&BoolExpr],
    stored: &Plan<Expr>,
    traced: &Plan<Expr>,
    at: &[i64],
) -> bool {
    let subject = SpecSubject(spec, EmptyRule::EmptyOutput);
    let (stored, traced) = (Answer::Plan(stored.clone()), Answer::Plan(traced.clone()));
    compare(&subject, facts, &stored, &traced, at).is_ok()
}

/// Structure equal, and every expression equal (structurally, or proved under `facts`);
/// `Ok(true)` when that needed the stored plan coalesced again ([`Retrace::normalized`]).
fn compare<S: Retrace>(
    subject: &S,
    facts: &[&BoolExpr],
    stored: &S::Payload,
    traced: &S::Payload,
    at: &[i64],
) -> Result<bool> {
    let syms = subject.symbols();
    let mismatch = |(what, a, b): Mismatch| {
        reject(format!(
            "{what} is `{a}` but a trace at {} gives `{b}` (edited?)",
            fmt_point(syms, at)
        ))
    };
    // Constants the region pins (`b == 0`) substituted first: `4*a*b` is `0` there.
    let pinned = pinned_constants(facts);
    let mut decider: Option<Decider> = None;
    let normalized = match subject.normalized(stored, traced, at) {
        None => None,
        Some(Err(e)) => {
            return Err(reject(format!(
                "the stored plan cannot be coalesced at {}: {e}",
                fmt_point(syms, at)
            )))
        }
        Some(Ok((decisions, payload))) => {
            let d = decider.get_or_insert_with(|| Decider::new(syms, facts));
            if let Some(g) = decisions.iter().find(|g| d.decide(&g.cond) != Some(true)) {
                return Err(reject(format!(
                    "the stored plan, coalesced again at {}, needs `{}` ({}), which the stored guards do not imply",
                    fmt_point(syms, at),
                    g.cond,
                    g.reason
                )));
            }
            Some(payload)
        }
    };
    let coalesced = normalized.is_some();
    let stored = normalized.as_ref().unwrap_or(stored);
    let pairs = subject.pairs(stored, traced).map_err(mismatch)?;
    let mut equal = |a: &Expr, b: &Expr| {
        let (a, b) = (with_constants(a, &pinned), with_constants(b, &pinned));
        a == b
            || decider
                .get_or_insert_with(|| Decider::new(syms, facts))
                .decide(&BoolExpr::eq(&a, &b))
                == Some(true)
    };
    for (what, a, b) in pairs {
        if !equal(a, b) {
            return Err(mismatch((what, a.to_string(), b.to_string())));
        }
    }
    Ok(coalesced)
}

fn bindings(spec: &[String], point: &[i64]) -> Bindings {
    let mut b = Bindings::new();
    for (n, &v) in spec.iter().zip(point) {
        b.insert(n, v);
    }
    b
}

/// Every fact holds at `point` (an evaluation error counts as not holding).
fn holds(spec: &[String], facts: &[&BoolExpr], point: &[i64]) -> bool {
    let b = bindings(spec, point);
    facts.iter().all(|f| f.eval(&b).unwrap_or(false))
}

/// A region's facts, ready to be tested at many points: compiled ([`CompiledGuards`]) when
/// they compile, else evaluated exactly through [`Bindings`] (same answers: a fact that
/// cannot be evaluated at a point does not hold there).
struct Region<'a> {
    symbols: &'a [String],
    facts: &'a [&'a BoolExpr],
    compiled: Option<CompiledGuards>,
}

impl<'a> Region<'a> {
    fn new(symbols: &'a [String], facts: &'a [&'a BoolExpr]) -> Region<'a> {
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
            symbols,
            facts,
            compiled: set.compile(symbols).ok(),
        }
    }

    /// Every fact holds at `point`.
    fn holds(&self, point: &[i64]) -> bool {
        match &self.compiled {
            Some(c) => matches!(c.eval(point), Ok(None)),
            None => holds(self.symbols, self.facts, point),
        }
    }
}

/// The first point of a probe grid (per symbol: its hint or a value >= 2, 1, a larger
/// value, 0) where every fact holds and the subject's inputs are real tensors.
fn find_point<S: Retrace>(subject: &S, region: &Region) -> Option<Vec<i64>> {
    let values: Vec<[i64; 4]> = subject
        .hints()
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
        if region.holds(&point) && subject.valid_point(&point) {
            return Some(point);
        }
    }
    None
}

fn fmt_point(spec: &[String], point: &[i64]) -> String {
    let parts: Vec<String> = spec
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
            let region = Region::new(&spec.symbols, &refs[..n]);
            assert!(region.compiled.is_some());
            let (mut yes, mut no) = (0, 0);
            for c in 0..5 {
                for h in 0..5 {
                    for w in 0..5 {
                        let p = [c, h, w];
                        let exact = holds(&spec.symbols, &refs[..n], &p);
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

    /// Verification hints replay a verification: given the points a first verification
    /// traced at, a second traces at the same points and searches for none; unrelated
    /// hints (all-zero, huge, the trace point) still verify. Over a cover with merged
    /// (widened) guards, where the first verification must search.
    #[test]
    fn verification_hints_replay_without_searching() {
        let spec = Spec::from_json(
            r#"{"op":"add","inputs":[{"sizes":["a","b"],"layout":"contiguous"},{"sizes":["d","e"],"layout":"contiguous"}],"hints":{"a":2,"b":3,"d":2,"e":3}}"#,
        )
        .unwrap();
        let options = crate::aot::CompileOptions {
            cover: true,
            ..Default::default()
        };
        let (specs, _) = crate::aot::cover::compile_cover(&spec, &options).unwrap();
        let mut searched = 0;
        for (k, stored) in specs.iter().enumerate() {
            assert!(stored.verify_points.is_none());
            let first = verify(&spec, stored).unwrap();
            searched += first.searches;
            let mut hinted = stored.clone();
            hinted.verify_points = Some(first.points.clone());
            let again = verify(&spec, &hinted).unwrap();
            assert_eq!(again.points, first.points, "specialization {k}");
            assert_eq!(again.searches, 0, "specialization {k}");
            let n = spec.symbols.len();
            let unrelated = vec![vec![0; n], vec![1 << 40; n], stored.traced_at.clone()];
            hinted.verify_points = Some(unrelated);
            verify(&spec, &hinted).unwrap();
        }
        assert!(searched > 0, "no specialization needed a search: the test shows nothing");
    }

    /// The quick check settles what it should: a specialization of one traced class
    /// verifies from its trace's recorded guards without simplifying them. Over the `artifact_load_100` artifact,
    /// whose load this is most of.
    #[test]
    fn specializations_verify_from_recorded_guards() {
        let spec = Spec::from_json(crate::aot::ARTIFACT_100_SPEC_JSON).unwrap();
        // As `artifact_100_json` compiles it: plans not widened over sizes 1.
        let options = crate::aot::CompileOptions {
            cover: true,
            max_specializations: 100,
            widen_size_1: false,
            ..Default::default()
        };
        let a = crate::aot::Artifact::compile(&spec, &options).unwrap();
        let (mut quick, mut simplified) = (0, 0);
        for stored in &a.specializations {
            let v = verify(&spec, stored).unwrap();
            quick += usize::from(v.simplified == 0);
            simplified += v.simplified;
        }
        // 72 of 100 and 38 traces in all on 27 Nov: the others merged classes (a stored
        // disjunction, or a widened guard: `f >= 1` for `f == 1` and `f >= 2`), which no
        // single trace's recorded guards follow from.
        assert!(quick >= 65, "{quick} of 100 verified without simplifying");
        assert!(simplified <= 60, "{simplified} traces simplified");
    }

    fn facts(v: &[&str]) -> Vec<BoolExpr> {
        v.iter().map(|f| BoolExpr::parse(f).unwrap()).collect()
    }

    /// Regions of a rank-3 free-stride cover that are empty only once the disjunctions'
    /// refuted branches are dropped (found reloading the `neg` cover).
    #[test]
    fn regions_empty_through_nested_disjunctions_are_proved_empty() {
        let spec: Vec<String> = ["a", "b", "c", "s", "t", "u"].map(String::from).to_vec();
        let empty = [
            facts(&[
                "c >= 2", "s >= 1", "t >= 1", "a >= 2", "b >= 2",
                "s == u && c <= a && u < t && (b*c != s || c != t || u != 1)",
                "b*c == s && c == t && u == 1",
            ]),
            facts(&[
                "a >= 1", "b >= 2", "c >= 2", "s >= 1", "t >= 1", "u >= 1", "u != 1",
                "t < u", "t < s", "b*t == s || a == 1",
                "s == u && a < c && (a >= 2 || (b*t != u && u != 1) || (c*u != t && t != 1))",
                "(c == t && u == 1 && (b*c == s || a == 1)) || (a <= 1 && (b*t == u || u == 1) && (c*u == t || t == 1))",
            ]),
        ];
        for f in &empty {
            let refs: Vec<&BoolExpr> = f.iter().collect();
            assert!(provably_empty(&spec, &refs), "{f:?}");
        }
        // Empty once `a == b` rewrites `a <= 1` (found by the random-spec cover test: an
        // `addcmul` of `[b, a, b]`, `[d, b, c]` and `[3]` failed its compile's verification).
        let sizes: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        let f = facts(&["a == b && b == c && b != 3 && b != 1", "b != 0", "d <= 0", "a <= 1"]);
        let refs: Vec<&BoolExpr> = f.iter().collect();
        assert!(provably_empty(&sizes, &refs), "{f:?}");
        // Empty: `b == c` and `b >= 2` or `c >= 1`, against `c <= 0` (found by the
        // random-spec cover test with plans widened over sizes 1: an `addcmul` of `[d, c,
        // c]`, `[d]` and `[b, b]` with strides `[s, s*b]` failed its compile's verification).
        let syms: Vec<String> = ["d", "c", "b", "s"].map(String::from).to_vec();
        let f = facts(&[
            "c == d",
            "(b == c && s == 0 && b >= 2) || (b == 1 && c >= 1)",
            "c <= 0",
        ]);
        let refs: Vec<&BoolExpr> = f.iter().collect();
        assert!(provably_empty(&syms, &refs), "{f:?}");
        // Not empty: a=1, b=2, c=2, s=2, t=1, u=2 satisfies these.
        let open = facts(&[
            "a >= 1",
            "b >= 2",
            "c >= 2",
            "u != 1",
            "t < u",
            "t < s",
            "b*t == s || a == 1",
            "(c*u == t || t == 1) && (b*t == u || u == 1)",
        ]);
        let refs: Vec<&BoolExpr> = open.iter().collect();
        assert!(holds(&spec, &refs, &[1, 2, 2, 2, 1, 2]));
        assert!(!provably_empty(&spec, &refs));
    }

    /// The region `time_pool_stride2`'s compile could not verify (issue 39): empty only by
    /// linear reasoning over the facts left once the disjunctions' refuted branches go
    /// (`t == FloorDiv(t + 1, 2) == 1` makes `t == 1`, where `FloorDiv(t, 2)` is 0, not 1).
    #[test]
    fn regions_empty_by_linear_reasoning_are_proved_empty() {
        let spec: Vec<String> = ["b", "t"].map(String::from).to_vec();
        let region = |q1: &str| {
            facts(&[
                "t >= 1",
                "FloorDiv(t, 2) == FloorDiv(t + 1, 2)",
                "FloorDiv(t + 1, 2)**2 == FloorDiv(t + 1, 2)",
                q1,
                "(b*FloorDiv(t, 2) == 0 || (FloorDiv(t, 2) == 1 && (b == 1 || t == FloorDiv(t, 2)))) && (b == 1 || t == FloorDiv(t + 1, 2))",
                "b <= 0",
            ])
        };
        let f = region("FloorDiv(t + 1, 2) == 1");
        let refs: Vec<&BoolExpr> = f.iter().collect();
        assert!(provably_empty(&spec, &refs), "{f:?}");
        // Not empty with `FloorDiv(t + 1, 2) == 0` in place of `== 1` and without `t >= 1`:
        // b=0, t=0 holds.
        let mut f = region("FloorDiv(t + 1, 2) == 0");
        f.remove(0);
        let refs: Vec<&BoolExpr> = f.iter().collect();
        assert!(holds(&spec, &refs, &[0, 0]));
        assert!(!provably_empty(&spec, &refs));
    }
}
