//! The cover algorithm, written once over what is traced ([`CoverTarget`]): the case split
//! over the guards' atoms, the witness search, the merging of traces that compute the same
//! answer. `cover.rs` documents the algorithm; it is implemented for a single-op
//! [`Spec`](super::Spec) there and for a [`Program`](crate::program::Program) in
//! `program/cover.rs`.
//!
//! # Why a trait
//!
//! The proof only sees guards (Boolean formulas over the symbols), a domain, and a way to
//! trace at a binding. What a trace computes (an iterator plan, the layouts of every step of
//! a program, an error) matters at one place only: deciding whether a new trace's answer is
//! an existing one's under the new guards, so that the existing one is widened instead of a
//! specialization being added. That and the trace itself are the trait's methods.

use super::cube::{self, Cube, ILit, IntSet, Region};
use crate::error::Result;
use crate::sym::{decide_under, Bindings, BoolExpr, Expr, Facts, Guard, Rel, Symbol};
use std::cell::RefCell;
use std::collections::HashMap;

/// What the cover needs from the thing it covers: its symbols, a way to trace at a binding,
/// and what a trace holds (guards, an answer that is a plan or an error).
pub trait CoverTarget {
    /// One trace: guards, and the answer (a plan or an error) every binding they admit has.
    type Trace;
    /// The symbols, in the order of binding values.
    fn symbols(&self) -> &[String];
    /// A value per symbol: the first trace runs there, and the witness search tries them.
    fn hints(&self) -> &[i64];
    /// Whether `values` describe real inputs (non-negative, representable strides).
    fn realizable(&self, values: &[i64]) -> bool;
    /// A trace at `values`: its answer holds wherever its guards hold, an error answer
    /// included (its guards prove the failure). `Err` when neither can be traced there.
    fn trace_at(&self, values: &[i64]) -> Result<Self::Trace>;
    /// A trace's guards.
    fn guards<'a>(&self, t: &'a Self::Trace) -> &'a [Guard];
    /// The values a trace ran at.
    fn traced_at<'a>(&self, t: &'a Self::Trace) -> &'a [i64];
    /// Whether a trace's answer is an error.
    fn is_error(&self, t: &Self::Trace) -> bool;
    /// Whether a trace's guards hold at `values`.
    fn admits(&self, t: &Self::Trace, values: &[i64]) -> Result<bool>;
    /// True when `host`'s answer equals `new`'s wherever `new`'s guards hold (then `host`,
    /// widened to `new`'s guards too, answers both).
    fn same_answer(&self, host: &Self::Trace, new: &Self::Trace) -> bool;
    /// `host`'s answer under other guards (the union of the classes merged into it).
    fn with_guards(&self, host: &Self::Trace, guards: Vec<Guard>) -> Result<Self::Trace>;
}

/// What one cover run produced.
pub(crate) struct CoverRun<T> {
    /// The traces: plans first (general ones before zero-size classes), errors last.
    pub(crate) traces: Vec<T>,
    /// Regions not proven covered (empty when the proof is complete).
    pub(crate) uncovered: Vec<BoolExpr>,
    /// The run stopped at [`CoverLimits::traces`] (its answer is then incomplete).
    pub(crate) trace_limited: bool,
}

/// How far one cover run may go.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CoverLimits {
    /// At most this many entries (specializations); beyond, the regions left are reported
    /// uncovered.
    pub(crate) entries: usize,
    /// Stop with [`CoverRun::trace_limited`] once the run has made at least this many
    /// traces and at least [`CoverLimits::traces_per_entry`] per entry.
    pub(crate) traces: usize,
    /// See [`CoverLimits::traces`].
    pub(crate) traces_per_entry: usize,
}

impl CoverLimits {
    /// At most `entries` entries, traces unlimited.
    pub(crate) fn entries(entries: usize) -> CoverLimits {
        CoverLimits {
            entries,
            traces: usize::MAX,
            traces_per_entry: 0,
        }
    }
}

/// See the final merge in [`cover`].
const REMERGE_MAX_CLASSES: usize = 64;

/// The cover of `target` over `domain` (conditions on the symbols): the trace at the hints,
/// then one trace per uncovered region the case split meets, until the split proves every
/// binding of the domain admitted, or `max_traces` is reached (the rest is reported
/// uncovered). See `cover.rs` for the algorithm.
///
/// The split runs once: at an uncovered region it stops, the region's witness is traced,
/// the new (or widened) guard set joins the split, and the split resumes at the same node.
/// Every branch it had closed stays closed, because guard sets only ever admit more (a new
/// set, or an old one widened by a disjunction), so the completed split is the proof over
/// the final sets; restarting it per trace would redo the same branches once per trace.
pub(crate) fn cover<T: CoverTarget>(
    target: &T,
    domain: &[BoolExpr],
    limits: CoverLimits,
) -> Result<CoverRun<T::Trace>> {
    let first = target.trace_at(target.hints())?;
    let mut classes = vec![Merged::new(target.guards(&first))];
    let first_set = conditions(target.guards(&first));
    let mut out = vec![first];
    let debug = std::env::var_os("SYMSTRIDE_COVER_DEBUG").is_some();
    let mut prover = Prover::new(target.symbols(), domain, &[&first_set]);
    let mut refuter = Refuter::new(target.symbols().len());
    let (mut traces, mut trace_limited) = (1, false);
    let outcome = prover.search(&mut |lits, facts| {
        if debug {
            eprintln!(
                "cover: {} specializations, region {}",
                out.len(),
                BoolExpr::and_all(lits.to_vec())
            );
        }
        if out.len() >= limits.entries {
            return Ok(None);
        }
        if traces >= limits.traces && traces >= limits.traces_per_entry.saturating_mul(out.len()) {
            trace_limited = true;
            return Ok(None);
        }
        traces += 1;
        let Some(w) = find_witness(target, lits, domain, facts) else {
            if debug {
                eprintln!("cover: no binding found in the region");
            }
            return Ok(Some(Change::GiveUp));
        };
        Ok(Some(match target.trace_at(&w) {
            Ok(s) if target.admits(&s, &w)? => {
                let j = add(target, &mut out, &mut classes, &mut refuter, s)?;
                Change::Set(j, conditions(target.guards(&out[j])))
            }
            _ => {
                if debug {
                    eprintln!("cover: the trace at {w:?} failed or does not admit it");
                }
                Change::GiveUp
            }
        }))
    })?;
    // Regions given up on (no binding found, the trace failed otherwise, the budget or the
    // trace limit reached): counted as covered by the split so that it moved on, and
    // reported.
    let mut uncovered = std::mem::take(&mut prover.given_up);
    if let Outcome::Stopped(lits) = outcome {
        uncovered.push(BoolExpr::and_all(lits));
    }
    if debug {
        eprintln!(
            "cover: {} specializations, {} split nodes, {} given up",
            out.len(),
            prover.nodes,
            uncovered.len()
        );
    }
    // Merging each widening into the merged disjunction so far (fast) can leave longer
    // guards than merging all of an entry's classes at once; that is done once here, and
    // kept when shorter (the two are equivalent on the domain, so the proof stands). Not
    // for entries of more than `REMERGE_MAX_CLASSES` classes, where one merge of them all
    // costs what the incremental merging saved.
    // The widened guards are tidied here too, once per entry (`Tidy::Yes`): during the
    // split they are the merged terms as they stand, which the split reads as well.
    for (o, m) in out.iter_mut().zip(&mut classes) {
        if m.classes.len() < 2 {
            continue;
        }
        *o = guarded(target, o, m, Tidy::Yes)?;
        if m.classes.len() <= REMERGE_MAX_CLASSES {
            let length = |t: &T::Trace| -> usize {
                target.guards(t).iter().map(|g| g.cond.to_string().len()).sum()
            };
            let mut again = Merged {
                classes: m.classes.clone(),
                terms: Vec::new(),
                common: Vec::new(),
                rest: Vec::new(),
            };
            let all = m.classes.iter().map(|c| flat_conjuncts(c)).collect();
            let fresh = merge_into(target, o, &mut again, all, 0, &mut refuter, Tidy::Yes)?;
            if length(&fresh) < length(o) {
                *o = fresh;
            }
        }
    }
    order_traces(target, &mut out);
    Ok(CoverRun {
        traces: out,
        uncovered,
        trace_limited,
    })
}

/// The conditions of a guard list.
fn conditions(guards: &[Guard]) -> Vec<BoolExpr> {
    guards.iter().map(|g| g.cond.clone()).collect()
}

/// Orders a cover's traces as [`CoverRun::traces`] says: plans first (general ones before
/// zero-size classes), error traces last (stable otherwise).
pub(crate) fn order_traces<T: CoverTarget>(target: &T, traces: &mut [T::Trace]) {
    traces.sort_by_key(|s| {
        (
            target.is_error(s),
            target.traced_at(s).iter().filter(|v| **v == 0).count(),
        )
    });
}

/// Re-runs the proof over given guard sets: does every binding of `domain` satisfy one of
/// them? Returns the first region found uncovered, or `None`.
pub(crate) fn uncovered_by(
    symbols: &[String],
    domain: &[BoolExpr],
    sets: &[&[Guard]],
) -> Option<BoolExpr> {
    let sets: Vec<Vec<BoolExpr>> = sets.iter().map(|s| conditions(s)).collect();
    let sets: Vec<&[BoolExpr]> = sets.iter().map(|s| &s[..]).collect();
    let mut prover = Prover::new(symbols, domain, &sets);
    match prover.search(&mut |_, _| Ok(None)) {
        Ok(Outcome::Covered) => None,
        Ok(Outcome::Stopped(lits)) => Some(BoolExpr::and_all(lits)),
        // This handler cannot fail; were it to, nothing would be proved.
        Err(_) => Some(BoolExpr::and_all(Vec::new())),
    }
}

/// True when every pair of expressions is equal wherever `guards` hold (decided
/// statically; symbols `>= 0`).
pub(crate) fn equal_under<'e>(
    symbols: &[String],
    guards: &[Guard],
    pairs: impl IntoIterator<Item = (&'e Expr, &'e Expr)>,
) -> bool {
    let mins: Vec<(Symbol, i64)> = symbols.iter().map(|n| (Symbol::new(n), 0)).collect();
    let facts: Vec<&BoolExpr> = guards.iter().map(|g| &g.cond).collect();
    pairs
        .into_iter()
        .all(|(a, b)| a == b || decide_under(&mins, &facts, &BoolExpr::eq(a, b)) == Some(true))
}

/// Adds `s` to the cover and returns its index: an existing trace whose answer is `s`'s
/// under `s`'s guards ([`CoverTarget::same_answer`]) admits `s`'s class too; otherwise `s`
/// is appended. `classes[j]` holds the traces merged into `out[j]`.
fn add<T: CoverTarget>(
    target: &T,
    out: &mut Vec<T::Trace>,
    classes: &mut Vec<Merged>,
    refuter: &mut Refuter,
    s: T::Trace,
) -> Result<usize> {
    let host = out.iter().position(|o| target.same_answer(o, &s));
    match host {
        Some(j) => {
            out[j] = widen(target, &out[j], &mut classes[j], target.guards(&s), refuter)?;
            Ok(j)
        }
        None => {
            classes.push(Merged::new(target.guards(&s)));
            out.push(s);
            Ok(out.len() - 1)
        }
    }
}

/// A guard formula over atom indices.
enum Node {
    Const(bool),
    Lit(usize, bool),
    And(Vec<Node>),
    Or(Vec<Node>),
}

impl Node {
    /// Three-valued (Kleene) evaluation under a partial assignment.
    fn eval(&self, a: &[Option<bool>]) -> Option<bool> {
        match self {
            Node::Const(c) => Some(*c),
            Node::Lit(i, p) => a[*i].map(|v| v == *p),
            Node::And(v) => {
                let mut all = Some(true);
                for n in v {
                    match n.eval(a) {
                        Some(false) => return Some(false),
                        None => all = None,
                        Some(true) => {}
                    }
                }
                all
            }
            Node::Or(v) => {
                let mut any = Some(false);
                for n in v {
                    match n.eval(a) {
                        Some(true) => return Some(true),
                        None => any = None,
                        Some(false) => {}
                    }
                }
                any
            }
        }
    }

    /// An unassigned atom inside an undecided part.
    fn pick(&self, a: &[Option<bool>]) -> Option<usize> {
        match self {
            Node::Const(_) => None,
            Node::Lit(i, _) => a[*i].is_none().then_some(*i),
            Node::And(v) | Node::Or(v) => v
                .iter()
                .filter(|n| n.eval(a).is_none())
                .find_map(|n| n.pick(a)),
        }
    }
}

/// How the split ended.
enum Outcome {
    /// Every branch is covered (given-up regions counted as covered, see
    /// [`Prover::given_up`]).
    Covered,
    /// The handler of an uncovered region stopped the split there (its literals).
    Stopped(Vec<BoolExpr>),
}

/// What the handler of an uncovered region does to the split before it resumes there.
enum Change {
    /// Guard set `j` is now these conditions: a new set (`j` = the number of sets) or an
    /// existing one widened (it admits everything it did before, and more).
    Set(usize, Vec<BoolExpr>),
    /// Give the region up: it is recorded in [`Prover::given_up`] and counts as covered.
    GiveUp,
}

/// Called at an uncovered region with its literals and facts: a [`Change`] to the guard
/// sets that covers (part of) it, or `None` to stop the split there.
type OnRegion<'h> = dyn FnMut(&[BoolExpr], &Facts) -> Result<Option<Change>> + 'h;

/// Largest number of nodes of one case split (after it, the region at hand is given up and
/// so is every branch not yet split: the split stops).
const SPLIT_BUDGET: usize = 400_000;

struct Prover {
    symbols: Vec<Symbol>,
    atoms: Vec<BoolExpr>,
    /// Atom (or negated atom) to its index and polarity.
    index: HashMap<BoolExpr, (usize, bool)>,
    /// Per atom: the atoms `s == 0` of the symbols whose zero-ness it depends on beyond
    /// intervals (symbols in a product or inside `Max`/`Min`), see [`zero_sensitive`].
    zero_split: Vec<Vec<usize>>,
    sets: Vec<Node>,
    facts: Facts,
    nodes: usize,
    /// Regions given up on (no binding found there, the trace failed otherwise, the
    /// budget ran out): each also a guard set, so that the split moves on.
    given_up: Vec<BoolExpr>,
    /// The domain as [`cube::Lit`]s, when every condition of it is one (sizes `>= 0`): then
    /// [`cube::region_is_empty`] can decide a region of such literals exactly.
    domain_lits: Option<Vec<cube::Lit>>,
    /// Literals as [`cube::Lit`]s ([`cube::classify`]), remembered.
    lits: RefCell<HashMap<BoolExpr, Option<cube::Lit>>>,
}

impl Prover {
    fn new(symbols: &[String], domain: &[BoolExpr], guard_sets: &[&[BoolExpr]]) -> Prover {
        let mins: Vec<(Symbol, i64)> = symbols.iter().map(|n| (Symbol::new(n), 0)).collect();
        let mut facts = Facts::new(&mins);
        for d in domain {
            facts.assume(d);
        }
        let mut p = Prover {
            symbols: mins.into_iter().map(|(s, _)| s).collect(),
            atoms: Vec::new(),
            index: HashMap::new(),
            zero_split: Vec::new(),
            sets: Vec::new(),
            facts,
            nodes: 0,
            given_up: Vec::new(),
            domain_lits: domain.iter().map(cube::classify).collect(),
            lits: RefCell::new(HashMap::new()),
        };
        for (j, set) in guard_sets.iter().enumerate() {
            p.set(j, set);
        }
        p
    }

    /// Makes guard set `j` (a new one when `j` is the number of sets) the conjunction of
    /// `conds`, registering its new atoms.
    fn set(&mut self, j: usize, conds: &[BoolExpr]) {
        let node = Node::And(
            conds
                .iter()
                .map(|c| compile(c, &mut self.atoms, &mut self.index))
                .collect(),
        );
        self.register_zero_splits();
        if j == self.sets.len() {
            self.sets.push(node);
        } else {
            self.sets[j] = node;
        }
    }

    /// Gives up the region `lits`: recorded, and a guard set of its own.
    fn give_up(&mut self, lits: Vec<BoolExpr>) {
        let region = BoolExpr::and_all(lits);
        let node = compile(&region, &mut self.atoms, &mut self.index);
        self.register_zero_splits();
        self.sets.push(node);
        self.given_up.push(region);
    }

    /// [`zero_split_atoms`] for the atoms registered since the last call.
    fn register_zero_splits(&mut self) {
        let from = self.zero_split.len();
        for i in from..self.atoms.len() {
            let ids = zero_split_atoms(&self.atoms[i].clone(), &mut self.atoms, &mut self.index);
            self.zero_split.push(ids);
        }
        // The `s == 0` atoms registered on the way are linear: nothing to split first.
        self.zero_split.resize(self.atoms.len(), Vec::new());
    }

    fn search(&mut self, on_region: &mut OnRegion<'_>) -> Result<Outcome> {
        let mut assign = vec![None; self.atoms.len()];
        let facts = self.facts.clone();
        self.rec(&mut assign, &facts, on_region)
    }

    fn literals(&self, assign: &[Option<bool>]) -> Vec<BoolExpr> {
        assign
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                v.map(|v| {
                    if v {
                        self.atoms[i].clone()
                    } else {
                        self.atoms[i].not()
                    }
                })
            })
            .collect()
    }

    /// True when the decision procedure refutes one literal from the others (assumed in
    /// another order than along the branch, which catches substitutions found late).
    fn contradictory(&self, lits: &[BoolExpr]) -> bool {
        // A box (every literal, and the domain, single-symbol comparisons: the regions of
        // a broadcast over sizes) is decided exactly, without the decision procedure: a
        // thousand regions of the rank-10 `[a, ..., j] + [a, 1, ..., 1]` cost 0.4 s there.
        // Equalities and disequalities of two symbols (the broadcast checks of independent
        // sizes) join them, exactly where `cube::region_is_empty` decides.
        if let Some(domain) = &self.domain_lits {
            let mut memo = self.lits.borrow_mut();
            let region: Option<Vec<cube::Lit>> = lits
                .iter()
                .map(|l| {
                    memo.entry(l.clone())
                        .or_insert_with(|| cube::classify(l))
                        .clone()
                })
                .chain(domain.iter().cloned().map(Some))
                .collect();
            if let Some(empty) = region.and_then(|r| cube::region_is_empty(&r, &[])) {
                return empty;
            }
        }
        if self.refutes_one(lits) {
            return true;
        }
        // With the equalities the orderings imply (`s <= t`, `t <= s`: `s == t`).
        let mut with_eqs = order_equalities(lits);
        with_eqs.extend(lits.iter().cloned());
        let lits = &with_eqs[..];
        // Once more with every literal rewritten by the facts of all of them (substitutions
        // applied, positive factors cancelled: `a*s == t`, `s == t`, `s >= 1` give `a == 1`).
        let f = self.facts_for(&lits.iter().collect::<Vec<_>>());
        let mut more: Vec<BoolExpr> = lits.to_vec();
        for l in lits {
            let n = f.normalize(l);
            match n.as_const() {
                Some(false) => return true,
                Some(true) => {}
                None => {
                    if !more.contains(&n) {
                        more.push(n)
                    }
                }
            }
        }
        if more.len() > lits.len() && self.refutes_one(&more) {
            return true;
        }
        // Once more with every symbol the facts pin to one value (`c >= 1`, `c <= 1`)
        // replaced by it: `a <= c` becomes `a <= 1`, which intervals see (with `a >= 1`
        // and `a != 1`, a contradiction no single literal shows).
        let pinned: Vec<(Symbol, i64)> = self
            .symbols
            .iter()
            .filter_map(|s| match f.range(s) {
                (Some(lo), Some(hi)) if lo == hi => Some((s.clone(), lo)),
                _ => None,
            })
            .collect();
        if pinned.is_empty() {
            return f.refutes(&more);
        }
        let sub = |s: &Symbol| {
            pinned
                .iter()
                .find(|(p, _)| p == s)
                .map(|(_, v)| Expr::constant(*v))
        };
        let mut rewritten: Vec<BoolExpr> = Vec::with_capacity(more.len());
        for l in &more {
            let n = l.substitute(&sub);
            match n.as_const() {
                Some(false) => return true,
                Some(true) => {}
                None => {
                    if !rewritten.contains(&n) {
                        rewritten.push(n)
                    }
                }
            }
        }
        // Last, the conjunction as a whole (a contradiction between literals that no single
        // decision shows: `k >= 1`, `k <= FloorDiv(k, 2)`), see `Facts::refutes`.
        self.refutes_one(&rewritten) || f.refutes(&rewritten)
    }

    /// True when one literal is decided false under the others, or the difference
    /// constraints among them contradict each other ([`order_cycle`]).
    fn refutes_one(&self, lits: &[BoolExpr]) -> bool {
        order_cycle(lits)
            || (0..lits.len()).any(|i| {
                let others: Vec<&BoolExpr> = lits
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != i)
                    .map(|(_, l)| l)
                    .collect();
                self.facts_for(&others).decide(&lits[i]) == Some(false)
            })
    }

    /// The domain's facts plus `lits`, equalities first (so that their substitutions
    /// normalize every later fact).
    fn facts_for(&self, lits: &[&BoolExpr]) -> Facts {
        let mut f = self.facts.clone();
        let extra: Vec<BoolExpr> = lits.iter().flat_map(|l| consequences(l)).collect();
        let lits: Vec<&BoolExpr> = extra.iter().chain(lits.iter().copied()).collect();
        let is_eq = |l: &BoolExpr| matches!(l.as_cmp(), Some((Rel::Eq, _)));
        // Simple equalities first (`b == c`, `c == 0` before `b*s == c`), so that their
        // substitutions reach the nonlinear ones.
        let mut eqs: Vec<&BoolExpr> = lits.iter().copied().filter(|l| is_eq(l)).collect();
        eqs.sort_by_key(|l| l.node_count());
        for l in eqs {
            f.assume(l);
        }
        for l in lits.iter().filter(|l| !is_eq(l)) {
            f.assume(l);
        }
        f
    }

    fn rec(
        &mut self,
        assign: &mut Vec<Option<bool>>,
        facts: &Facts,
        on_region: &mut OnRegion<'_>,
    ) -> Result<Outcome> {
        self.nodes += 1;
        if self.nodes > SPLIT_BUDGET {
            return Ok(Outcome::Stopped(self.literals(assign)));
        }
        let mut set_here = Vec::new();
        // Resumed here after each change the region's handler makes (new atoms to decide,
        // new or wider sets to evaluate).
        let mut changed_here = false;
        let result = loop {
            self.propagate(assign, facts, &mut set_here);
            let mut all_false = true;
            let mut pick = None;
            let mut covered = false;
            for set in &self.sets {
                match set.eval(assign) {
                    Some(true) => {
                        covered = true;
                        break;
                    }
                    Some(false) => {}
                    None => {
                        all_false = false;
                        if pick.is_none() {
                            pick = set.pick(assign);
                        }
                    }
                }
            }
            if covered {
                break Ok(Outcome::Covered);
            }
            if all_false {
                let lits = self.literals(assign);
                if self.contradictory(&lits) {
                    break Ok(Outcome::Covered); // an empty region
                }
                // A change made here that still leaves the region uncovered (the new trace
                // must admit its witness, so this means it was not found there): give up.
                let change = if changed_here {
                    Some(Change::GiveUp)
                } else {
                    // The handler's witness search needs every literal's facts: those the
                    // propagation decided were never assumed along the branch
                    // (`c*u == s` decided true leaves `s` unsubstituted there).
                    let mut all = order_equalities(&lits);
                    all.extend(lits.iter().cloned());
                    let f = self.facts_for(&all.iter().collect::<Vec<_>>());
                    on_region(&lits, &f)?
                };
                match change {
                    None => break Ok(Outcome::Stopped(lits)),
                    Some(Change::GiveUp) => self.give_up(lits),
                    Some(Change::Set(j, conds)) => self.set(j, &conds),
                }
                assign.resize(self.atoms.len(), None);
                changed_here = true;
                continue;
            }
            let i = pick.expect("an undecided formula has an unassigned atom");
            break self.split(i, assign, facts, on_region);
        };
        for i in set_here {
            assign[i] = None;
        }
        result
    }

    /// Propagation: assigns the atoms the facts decide (a product once its positive factors
    /// are cancelled: `b*c*d == b` is `c*d == 1` where `b >= 1`), noting them in `set_here`.
    fn propagate(&self, assign: &mut [Option<bool>], facts: &Facts, set_here: &mut Vec<usize>) {
        for (i, (slot, atom)) in assign.iter_mut().zip(&self.atoms).enumerate() {
            if slot.is_none() {
                let v = facts.decide(atom).or_else(|| {
                    if self.zero_split[i].is_empty() {
                        return None;
                    }
                    let n = facts.normalize(atom);
                    n.as_const().or_else(|| facts.decide(&n))
                });
                if let Some(v) = v {
                    *slot = Some(v);
                    set_here.push(i);
                }
            }
        }
    }

    /// Splits on atom `i` (or first on the zero-ness of its symbols, when it is over
    /// products or `Max`): then every symbol is 0 (substituted) or >= 1 (positive factors
    /// cancel, `Max(s, 1)` is `s`), where the decision procedure is strong.
    fn split(
        &mut self,
        i: usize,
        assign: &mut Vec<Option<bool>>,
        facts: &Facts,
        on_region: &mut OnRegion<'_>,
    ) -> Result<Outcome> {
        let i = self.zero_split[i]
            .iter()
            .copied()
            .find(|&z| assign[z].is_none())
            .unwrap_or(i);
        for v in [true, false] {
            let lit = if v {
                self.atoms[i].clone()
            } else {
                self.atoms[i].not()
            };
            assign[i] = Some(v);
            let f = self.branch_facts(assign, facts, &lit);
            let r = self.rec(assign, &f, on_region);
            assign[i] = None;
            // Atoms registered below belong to no literal here.
            assign.resize(self.atoms.len(), None);
            match r? {
                Outcome::Covered => {}
                stopped => return Ok(stopped),
            }
        }
        Ok(Outcome::Covered)
    }

    /// The facts of a branch: `facts` and the branch's literal `lit` (already in
    /// `assign`). An equality, or an ordering that closes an equality among the region's
    /// orderings (`s <= t` after `t <= s`: `s == t`, [`order_equalities`]), rebuilds them
    /// from every literal so that its substitution rewrites the earlier ones.
    fn branch_facts(&self, assign: &[Option<bool>], facts: &Facts, lit: &BoolExpr) -> Facts {
        let is_eq = matches!(lit.as_cmp(), Some((Rel::Eq, _)));
        if !is_eq {
            let mut f = facts.clone();
            for c in consequences(lit) {
                f.assume(&c);
            }
            f.assume(lit);
            if difference(lit).is_none() {
                return f;
            }
            let lits = self.literals(assign);
            let eqs = order_equalities(&lits);
            if eqs.iter().all(|e| f.decide(e) == Some(true)) {
                return f;
            }
            let all: Vec<&BoolExpr> = eqs.iter().chain(&lits).collect();
            return self.facts_for(&all);
        }
        let lits = self.literals(assign);
        self.facts_for(&lits.iter().collect::<Vec<_>>())
    }
}

/// A difference constraint `pos - neg <= k` (or `== k`), with `None` for the constant zero:
/// `s <= t`, `a == b + 2`, `s >= 3`. `None` when the literal is no such constraint.
fn difference(lit: &BoolExpr) -> Option<(Option<Symbol>, Option<Symbol>, i128, Rel)> {
    let (rel, p) = lit.as_cmp()?;
    if rel == Rel::Ne {
        return None;
    }
    // p = pos - neg + c with unit coefficients (or one symbol): p REL 0.
    let mut c: i128 = 0;
    let mut pos = None;
    let mut neg = None;
    for (k, fs) in p.polynomial_terms()? {
        match (fs.as_slice(), k) {
            ([], k) => c = k as i128,
            ([(s, 1)], 1) if pos.is_none() => pos = Some(s.clone()),
            ([(s, 1)], -1) if neg.is_none() => neg = Some(s.clone()),
            _ => return None,
        }
    }
    if pos.is_none() && neg.is_none() {
        return None;
    }
    Some((pos, neg, -c, rel))
}

/// The shortest-path closure of the difference constraints among `lits` (every symbol
/// `>= 0`): the symbols (node `i + 1`; node 0 is the constant zero) and `d[x][y]`, the
/// tightest bound `y - x <= d[x][y]` they imply (`None`: no bound). `None` when they have
/// no common solution (a negative cycle).
#[allow(clippy::type_complexity)]
fn difference_closure<'a>(
    lits: impl IntoIterator<Item = &'a BoolExpr>,
) -> Option<(Vec<Symbol>, Vec<Vec<Option<i128>>>)> {
    let mut nodes: Vec<Symbol> = Vec::new();
    let mut edges: Vec<(usize, usize, i128)> = Vec::new();
    let mut node = |s: Option<Symbol>| match s {
        None => 0,
        Some(s) => match nodes.iter().position(|n| *n == s) {
            Some(i) => i + 1,
            None => {
                nodes.push(s);
                nodes.len()
            }
        },
    };
    for l in lits {
        let Some((pos, neg, k, rel)) = difference(l) else {
            continue;
        };
        // pos - neg <= k: an edge neg -> pos of weight k (and back for an equality).
        let (x, y) = (node(pos), node(neg));
        if x == y {
            continue;
        }
        edges.push((y, x, k));
        if rel == Rel::Eq {
            edges.push((x, y, -k));
        }
    }
    let n = nodes.len() + 1;
    let mut d = vec![vec![None; n]; n];
    for (i, row) in d.iter_mut().enumerate() {
        row[i] = Some(0);
        // Every symbol >= 0: `0 - x <= 0`.
        if i > 0 {
            row[0] = Some(0);
        }
    }
    for (from, to, w) in edges {
        let e = &mut d[from][to];
        *e = Some(e.map_or(w, |v| v.min(w)));
    }
    for k in 0..n {
        let via = d[k].clone();
        for row in d.iter_mut() {
            let Some(ik) = row[k] else { continue };
            for (e, kj) in row.iter_mut().zip(&via) {
                if let Some(kj) = kj {
                    if e.is_none_or(|v| ik + kj < v) {
                        *e = Some(ik + kj);
                    }
                }
            }
        }
    }
    if (0..n).any(|i| d[i][i].is_some_and(|v| v < 0)) {
        return None;
    }
    Some((nodes, d))
}

/// True when the difference constraints among `lits` (`x - y <= k`, `x == y + k`, bounds
/// `x <= k` and `x >= k`; every symbol `>= 0`) have no common solution: a negative cycle in
/// their constraint graph. Orderings of free strides (`u < s`, `s <= t`, `t <= u`)
/// contradict each other this way, which no single literal's interval shows.
pub(crate) fn order_cycle(lits: &[BoolExpr]) -> bool {
    difference_closure(lits).is_none()
}

/// True when the difference constraints among `lits` (every symbol `>= 0`) imply `goal`, a
/// difference constraint itself: `t >= 1`, `t < s` imply `s >= 2`; `s >= 1` follows from
/// `t >= 1`, `t < s`. `false` says nothing.
pub(crate) fn order_implies(lits: &[&BoolExpr], goal: &BoolExpr) -> bool {
    let Some((pos, neg, k, rel)) = difference(goal) else {
        return false;
    };
    let Some((nodes, d)) = difference_closure(lits.iter().copied()) else {
        // No common solution: they imply anything (callers drop what cannot hold first).
        return false;
    };
    let index = |s: &Option<Symbol>| match s {
        None => Some(0),
        Some(s) => nodes.iter().position(|n| n == s).map(|i| i + 1),
    };
    let bound = |from: &Option<Symbol>, to: &Option<Symbol>| -> Option<i128> {
        // The tightest `to - from <= w` (a symbol absent from every constraint is only
        // known `>= 0`: `0 - x <= 0`).
        match (index(from), index(to)) {
            (Some(f), Some(t)) => d[f][t],
            (None, Some(0)) => Some(0),
            _ => None,
        }
    };
    // goal: pos - neg <= k (and >= k for an equality).
    let le = bound(&neg, &pos).is_some_and(|w| w <= k);
    match rel {
        Rel::Le => le,
        Rel::Eq => le && bound(&pos, &neg).is_some_and(|w| w <= -k),
        Rel::Ne => false,
    }
}

/// The equalities the difference constraints among `lits` imply and no single literal
/// states: `s == t` from `s <= t` and `t <= s`, `t == u` from `t <= s <= u <= t`, `s == 3`
/// from `s <= t`, `t <= 3`, `s >= 3`. Facts see one literal at a time; substituting these
/// equalities makes the rest visible (`c*u == t` with `t == u`, `u >= 1` is `c == 1`).
pub(crate) fn order_equalities(lits: &[BoolExpr]) -> Vec<BoolExpr> {
    let Some((nodes, d)) = difference_closure(lits) else {
        return Vec::new();
    };
    let expr = |i: usize| {
        if i == 0 {
            Expr::constant(0)
        } else {
            Expr::symbol(nodes[i - 1].as_str())
        }
    };
    let mut out = Vec::new();
    for (x, row_x) in d.iter().enumerate() {
        for (y, row_y) in d.iter().enumerate().skip(x + 1) {
            if let (Some(w), Some(back)) = (row_x[y], row_y[x]) {
                if w + back == 0 {
                    let Ok(w) = i64::try_from(w) else { continue };
                    // y - x == w.
                    let eq = BoolExpr::eq(&expr(y), &expr(x).add(&Expr::constant(w)));
                    if eq.as_const().is_none() && !lits.contains(&eq) {
                        out.push(eq);
                    }
                }
            }
        }
    }
    out
}

/// Facts a literal implies on non-negative integers that intervals do not see: a product
/// of symbols equal to 1 makes every factor 1 (`b*s == 1` gives `b == 1`, `s == 1`).
fn consequences(lit: &BoolExpr) -> Vec<BoolExpr> {
    let Some((Rel::Eq, p)) = lit.as_cmp() else {
        return Vec::new();
    };
    let Some(terms) = p.polynomial_terms() else {
        return Vec::new();
    };
    match terms.as_slice() {
        [(c, fs), (-1, k)] | [(-1, k), (c, fs)] if k.is_empty() && *c == 1 && fs.len() > 1 => fs
            .iter()
            .map(|(s, _)| BoolExpr::eq(&Expr::symbol(s.as_str()), &Expr::constant(1)))
            .collect(),
        _ => Vec::new(),
    }
}

/// The atoms `s == 0` (registered here) of an atom's zero-sensitive symbols: those inside a
/// product of symbols or a `Max`/`Min`/`FloorDiv`/`Mod`, where whether `s` is 0 changes
/// what the atom says beyond what intervals see (`b*c == b` is `b == 0 || c == 1`).
fn zero_split_atoms(
    atom: &BoolExpr,
    atoms: &mut Vec<BoolExpr>,
    index: &mut HashMap<BoolExpr, (usize, bool)>,
) -> Vec<usize> {
    let mut ids = Vec::new();
    for s in zero_sensitive(atom) {
        let z = BoolExpr::eq(&Expr::symbol(s.as_str()), &Expr::constant(0));
        if let Node::Lit(j, _) = compile(&z, atoms, index) {
            ids.push(j);
        }
    }
    ids
}

/// The symbols of a comparison that occur in a product of symbols or under a
/// non-polynomial function (see [`zero_split_atoms`]).
fn zero_sensitive(atom: &BoolExpr) -> Vec<Symbol> {
    let Some((_, p)) = atom.as_cmp() else {
        return Vec::new();
    };
    match p.polynomial_terms() {
        Some(terms) => {
            let mut out: Vec<Symbol> = Vec::new();
            for (_, fs) in terms {
                if fs.len() > 1 || fs.iter().any(|(_, e)| *e > 1) {
                    for (s, _) in fs {
                        if !out.contains(&s) {
                            out.push(s);
                        }
                    }
                }
            }
            out
        }
        None => p.symbols(),
    }
}

/// Compiles a guard into a formula over atoms, registering new atoms (and their negations).
fn compile(
    b: &BoolExpr,
    atoms: &mut Vec<BoolExpr>,
    index: &mut HashMap<BoolExpr, (usize, bool)>,
) -> Node {
    if let Some(c) = b.as_const() {
        return Node::Const(c);
    }
    if let Some(v) = b.conjuncts() {
        return Node::And(v.iter().map(|x| compile(x, atoms, index)).collect());
    }
    if let Some(v) = b.disjuncts() {
        return Node::Or(v.iter().map(|x| compile(x, atoms, index)).collect());
    }
    if let Some(&(i, p)) = index.get(b) {
        return Node::Lit(i, p);
    }
    let i = atoms.len();
    atoms.push(b.clone());
    index.insert(b.not(), (i, false));
    index.insert(b.clone(), (i, true));
    Node::Lit(i, true)
}

/// Largest number of candidate values tried while looking for a binding in a region.
const WITNESS_BUDGET: usize = 20_000;

/// A binding of the domain satisfying every literal of a region (and describing real
/// tensors), found by backtracking over the symbols with candidate values taken from the
/// region's facts (ranges, equalities), small values and the hints.
pub(crate) fn find_witness<T: CoverTarget>(
    target: &T,
    lits: &[BoolExpr],
    domain: &[BoolExpr],
    facts: &Facts,
) -> Option<Vec<i64>> {
    let conds: Vec<&BoolExpr> = lits.iter().chain(domain).collect();
    let realizable = |v: &[i64]| target.realizable(v);
    witness(target.symbols(), target.hints(), &realizable, &conds, facts)
}

/// A binding where every one of `conds` holds (symbols `>= 0`) and `realizable` accepts,
/// found as [`find_witness`] does, the facts built from `conds` themselves (equalities
/// first, with those the orderings imply). For the loader's verification of a region the
/// probe grid misses (`t == c*u`).
pub(crate) fn witness_of(
    symbols: &[String],
    hints: &[i64],
    realizable: &dyn Fn(&[i64]) -> bool,
    conds: &[&BoolExpr],
) -> Option<Vec<i64>> {
    let mins: Vec<(Symbol, i64)> = symbols.iter().map(|n| (Symbol::new(n), 0)).collect();
    let mut facts = Facts::new(&mins);
    let owned: Vec<BoolExpr> = conds.iter().map(|c| (*c).clone()).collect();
    let eqs = order_equalities(&owned);
    let is_eq = |l: &BoolExpr| matches!(l.as_cmp(), Some((Rel::Eq, _)));
    for c in eqs.iter().chain(owned.iter().filter(|c| is_eq(c))) {
        facts.assume(c);
    }
    for c in owned.iter().filter(|c| !is_eq(c)) {
        facts.assume(c);
    }
    witness(symbols, hints, realizable, conds, &facts)
}

fn witness(
    symbols: &[String],
    hints: &[i64],
    realizable: &dyn Fn(&[i64]) -> bool,
    conds: &[&BoolExpr],
    facts: &Facts,
) -> Option<Vec<i64>> {
    let k = symbols.len();
    let syms: Vec<Symbol> = symbols.iter().map(|n| Symbol::new(n)).collect();
    // Symbols the facts eliminate by an equality (`u` for `u == b*t`) get values last, from
    // the others: the search then meets `u = b*t` as its first candidate.
    let mut order: Vec<usize> = (0..k).collect();
    order.sort_by_key(|&i| facts.substitution(&syms[i]).is_some());
    let step = |s: &Symbol| order.iter().position(|&i| symbols[i] == s.as_str());
    // Each condition is checked as soon as its last symbol (in search order) has a value.
    let mut checks: Vec<Vec<&BoolExpr>> = vec![Vec::new(); k.max(1)];
    for c in conds {
        let last = c.symbols().iter().filter_map(step).max().unwrap_or(0);
        checks[last].push(c);
    }
    let mut values = vec![0i64; k];
    let mut budget = WITNESS_BUDGET;
    struct Search<'s> {
        symbols: &'s [String],
        hints: &'s [i64],
        realizable: &'s dyn Fn(&[i64]) -> bool,
        syms: &'s [Symbol],
        order: &'s [usize],
        checks: &'s [Vec<&'s BoolExpr>],
        facts: &'s Facts,
    }
    fn rec(n: usize, s: &Search<'_>, values: &mut Vec<i64>, budget: &mut usize) -> bool {
        if n == values.len() {
            return (s.realizable)(values);
        }
        let i = s.order[n];
        let b = Bindings::from_pairs(
            s.order[..n]
                .iter()
                .map(|&j| (s.symbols[j].as_str(), values[j])),
        );
        let done: Vec<i64> = s.order[..n].iter().map(|&j| values[j]).collect();
        for v in candidates(i, s.hints, s.syms, s.facts, &done, &b) {
            if *budget == 0 {
                return false;
            }
            *budget -= 1;
            values[i] = v;
            let mut b2 = b.clone();
            b2.insert(s.symbols[i].as_str(), v);
            if s.checks[n].iter().all(|c| c.eval(&b2).unwrap_or(false))
                && rec(n + 1, s, values, budget)
            {
                return true;
            }
        }
        false
    }
    if k == 0 {
        let ok = checks[0]
            .iter()
            .all(|c| c.eval(&Bindings::new()).unwrap_or(false));
        return (ok && realizable(&[])).then(Vec::new);
    }
    let search = Search {
        symbols,
        hints,
        realizable,
        syms: &syms,
        order: &order,
        checks: &checks,
        facts,
    };
    rec(0, &search, &mut values, &mut budget).then_some(values)
}

/// Candidate values of symbol `i` given the values of the symbols assigned before it
/// (`values`, also as `assigned`).
fn candidates(
    i: usize,
    hints: &[i64],
    syms: &[Symbol],
    facts: &Facts,
    values: &[i64],
    assigned: &Bindings,
) -> Vec<i64> {
    let (lo, hi) = facts.range(&syms[i]);
    let lo = lo.unwrap_or(0).max(0);
    let hi = hi.unwrap_or(i64::MAX);
    let mut out: Vec<i64> = Vec::new();
    let mut push = |v: i64| {
        if v >= lo && v <= hi && !out.contains(&v) {
            out.push(v);
        }
    };
    // An equality the facts hold: the symbol's value follows from earlier ones.
    if let Some(e) = facts.substitution(&syms[i]) {
        if let Ok(v) = e.eval(assigned) {
            push(v);
        }
    }
    // A generic value first (distinct from the other symbols' generic values), so that
    // the trace does not meet coincidences the region does not ask for.
    let h = hints.get(i).copied().unwrap_or(0);
    if h >= 2 && !hints[..i].contains(&h) {
        push(h);
    }
    push(11 + 2 * i as i64);
    for d in 0..4 {
        push(lo.saturating_add(d));
    }
    for &v in values {
        push(v);
        push(v.saturating_add(1));
        push(v.saturating_sub(1));
        push(v.saturating_mul(2).saturating_add(1));
    }
    if hi != i64::MAX {
        push(hi);
        push(hi.saturating_sub(1));
    }
    push(lo.saturating_add(4));
    push(lo.saturating_add(6));
    out
}

/// `host` (its plan or its error) for the union of `classes` (guard lists of traces whose
/// answers are `host`'s under their own guards, see [`CoverTarget::same_answer`]): the guards every
/// class shares, then one guard `class_1 || class_2 || ...` over the rest, simplified:
/// terms that differ in one complementary literal are merged (`(h == 1 && A) || (h != 1 &&
/// A)` is `A`), a term containing another is dropped, terms that cannot hold are dropped.
fn widen<T: CoverTarget>(
    target: &T,
    host: &T::Trace,
    merged: &mut Merged,
    new: &[Guard],
    refuter: &mut Refuter,
) -> Result<T::Trace> {
    merged.classes.push(new.to_vec());
    // The disjunction so far (already merged: equivalent to the union of the classes
    // before `new`, and usually far fewer terms) and the new class: merging from scratch
    // at every widening made a cover that widens one plan hundreds of times cubic in them.
    let mut terms: Vec<Vec<BoolExpr>> = std::mem::take(&mut merged.terms);
    let closed = terms.len();
    terms.push(flat_conjuncts(new));
    merge_into(target, host, merged, terms, closed, refuter, Tidy::No)
}

/// Whether [`merge_into`] tidies the widened guard ([`super::guards::tidy_or`]: drops the
/// literals and disjuncts the rest implies). Only the readability of the guard depends on
/// it, not what it admits, so a cover tidies each entry once, after the split: tidying at
/// every widening cost a third of the cover of `[a, ..., j] + [a, 1, ..., 1]`, whose
/// general plan is widened 510 times.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tidy {
    Yes,
    No,
}

/// `host` with the guards `terms` (a disjunction of conjunctions of literals, equivalent
/// to the union of `merged`'s classes) simplify to, which `merged` keeps. The first
/// `closed` terms are the result of an earlier merge (see [`merge_disjunction`]).
fn merge_into<T: CoverTarget>(
    target: &T,
    host: &T::Trace,
    merged: &mut Merged,
    terms: Vec<Vec<BoolExpr>>,
    closed: usize,
    refuter: &mut Refuter,
    tidy: Tidy,
) -> Result<T::Trace> {
    let mins = symbol_mins(target);
    let (common, rest) = merge_disjunction(terms, closed, &mins, refuter);
    merged.terms = rejoined(&common, &rest);
    merged.common = common;
    merged.rest = rest;
    guarded(target, host, merged, tidy)
}

/// Every symbol of `target` with its lower bound 0 (the cover's domain).
fn symbol_mins<T: CoverTarget>(target: &T) -> Vec<(Symbol, i64)> {
    target
        .symbols()
        .iter()
        .map(|n| (Symbol::new(n), 0))
        .collect()
}

/// `host` with the guards of `merged`'s last merge: its common literals (with the reasons
/// of the first class that has them) and the disjunction of the rest, tidied or not.
fn guarded<T: CoverTarget>(
    target: &T,
    host: &T::Trace,
    merged: &Merged,
    tidy: Tidy,
) -> Result<T::Trace> {
    let (classes, common) = (&merged.classes, &merged.common);
    let either = BoolExpr::or_all(merged.rest.iter().cloned().map(BoolExpr::and_all));
    let either = match tidy {
        Tidy::Yes => super::guards::tidy_or(
            &either,
            &symbol_mins(target),
            &common.iter().collect::<Vec<_>>(),
        ),
        Tidy::No => either,
    };
    // The shared guards keep their reasons (from the first class that has them whole).
    let mut guards: Vec<Guard> = Vec::new();
    for c in common {
        let reason = classes
            .iter()
            .flatten()
            .find(|g| g.cond == *c || g.cond.conjuncts().is_some_and(|cs| cs.contains(c)))
            .map_or_else(String::new, |g| g.reason.clone());
        guards.push(Guard {
            cond: c.clone(),
            reason,
        });
    }
    if either.as_const() != Some(true) {
        guards.push(Guard {
            cond: either,
            reason: format!(
                "cover: {} traced classes share this {}",
                classes.len(),
                if target.is_error(host) {
                    "error"
                } else {
                    "plan"
                }
            ),
        });
    }
    super::guards::merge_symbol_bounds(&mut guards);
    target.with_guards(host, guards)
}

/// A disjunction of conjunctions (`terms`, each a list of literals) as the literals every
/// term shares and the remaining terms simplified under them ([`merge_terms`]):
/// `common && (t1 || t2 || ...)` is equivalent to the input on the domain `mins`.
///
/// The first `closed` terms may be an earlier answer of this function (rejoined with its
/// common literals) to which new terms were appended: when the new terms keep every
/// literal those share, the shared literals are the same, no rule applies between two of
/// the old terms (the earlier merge ran until none did), and only pairs with a new (or
/// changed) term are examined. A widening of one cover entry by its hundredth class then
/// costs a pass over the terms, not over their pairs (`[a, ..., j] + [a, 1, ..., 1]`, whose
/// general plan absorbs 512 classes: see the `cover` module docs).
fn merge_disjunction(
    terms: Vec<Vec<BoolExpr>>,
    closed: usize,
    mins: &[(Symbol, i64)],
    refuter: &mut Refuter,
) -> (Vec<BoolExpr>, Vec<Vec<BoolExpr>>) {
    let shared = |ts: &[Vec<BoolExpr>]| -> Vec<BoolExpr> {
        ts.first().map_or_else(Vec::new, |t0| {
            t0.iter()
                .filter(|x| ts.iter().all(|t| t.contains(x)))
                .cloned()
                .collect()
        })
    };
    let common = shared(&terms);
    let closed = closed.min(terms.len());
    let closed = if closed > 0 && shared(&terms[..closed]) == common {
        closed
    } else {
        0
    };
    let mut terms: Vec<Vec<BoolExpr>> = terms
        .into_iter()
        .map(|t| t.into_iter().filter(|x| !common.contains(x)).collect())
        .collect();
    merge_terms(&mut terms, closed, mins, &common, refuter);
    (common, terms)
}

/// The terms of [`merge_disjunction`]'s answer with the common literals put back in each:
/// the disjunction as a list of whole conjunctions again.
fn rejoined(common: &[BoolExpr], terms: &[Vec<BoolExpr>]) -> Vec<Vec<BoolExpr>> {
    terms
        .iter()
        .map(|t| common.iter().chain(t).cloned().collect())
        .collect()
}

/// The traces merged into one cover entry: their guard lists (for the reasons and the
/// count the widened guard reports) and the merged disjunction of their conditions, each
/// term a conjunction of literals (equivalent, under the domain, to the union of the
/// classes).
struct Merged {
    classes: Vec<Vec<Guard>>,
    terms: Vec<Vec<BoolExpr>>,
    /// The last merge's answer ([`merge_disjunction`]): the literals every term shares, and
    /// the terms without them.
    common: Vec<BoolExpr>,
    rest: Vec<Vec<BoolExpr>>,
}

impl Merged {
    fn new(guards: &[Guard]) -> Merged {
        Merged {
            classes: vec![guards.to_vec()],
            terms: vec![flat_conjuncts(guards)],
            common: Vec::new(),
            rest: Vec::new(),
        }
    }
}

/// The literals of a guard list: each guard's conjuncts, or the guard itself.
fn flat_conjuncts(gs: &[Guard]) -> Vec<BoolExpr> {
    let mut v = Vec::new();
    for g in gs {
        match g.cond.conjuncts() {
            Some(cs) => v.extend(cs.iter().cloned()),
            None => v.push(g.cond.clone()),
        }
    }
    v
}

/// A single comparison `z` on the one symbol of `x` and `y` with `z <=> x || y` under the
/// caller's facts (tried: `s >= k`, `s <= k`, `s != k` for `k` in 0..=3), `implies(a,
/// extra, b)` deciding whether the facts with `a` (and `extra`) imply `b`.
fn union_literal(
    x: &BoolExpr,
    y: &BoolExpr,
    implies: impl Fn(&BoolExpr, Option<&BoolExpr>, &BoolExpr) -> bool,
) -> Option<BoolExpr> {
    let sx = x.symbols();
    if sx.len() != 1 || y.symbols() != sx || x.disjuncts().is_some() || y.disjuncts().is_some() {
        return None;
    }
    let s = Expr::symbol(sx[0].as_str());
    let not_x = x.not();
    let ks = || (0..=3i64).map(Expr::constant);
    ks().map(|k| BoolExpr::ge(&s, &k))
        .chain(ks().map(|k| BoolExpr::le(&s, &k)))
        .chain(ks().map(|k| BoolExpr::ne(&s, &k)))
        .find(|z| implies(x, None, z) && implies(y, None, z) && implies(z, Some(&not_x), y))
}

/// Simplifies a disjunction of conjunctions (under `common`) in place: absorption (a term
/// that contains another goes) and resolution (two terms equal but for one literal each,
/// `x` and `y` with `!x` implying `y` there, become their common part).
fn merge_terms(
    terms: &mut Vec<Vec<BoolExpr>>,
    closed: usize,
    mins: &[(Symbol, i64)],
    common: &[BoolExpr],
    refuter: &mut Refuter,
) {
    // `dirty[i]`: term `i` is new or changed, so its pairs with every term are examined; a
    // pair of two clean terms was examined by the merge that produced them (see
    // [`merge_disjunction`]) and gave nothing then, so it gives nothing now.
    let mut dirty: Vec<bool> = (0..terms.len()).map(|i| i >= closed).collect();
    loop {
        let mut changed = false;
        // Absorption.
        let mut i = 0;
        while i < terms.len() {
            let absorbed = (0..terms.len()).any(|j| {
                j != i
                    && (dirty[i] || dirty[j])
                    && terms[j].iter().all(|x| terms[i].contains(x))
                    && (terms[j].len() < terms[i].len() || j < i)
            });
            if absorbed {
                terms.remove(i);
                dirty.remove(i);
                changed = true;
            } else {
                i += 1;
            }
        }
        // A literal `x` of a term goes when the rest of the term and `!x` imply another
        // term (`s == 0 || (s >= 1 && s != 1)` is `s == 0 || s != 1`).
        // The facts are assumed once per literal and then decide every other term's
        // literals (assuming them per decision made wide covers quadratic in the terms).
        // One pass drops every literal it can (re-checking a term's remaining literals
        // after each drop); the outer loop repeats passes until nothing changes. Sample
        // points where the facts hold rule most other terms out before any proof: a term
        // false at one of them is not implied.
        // Boxes (every literal one symbol against a constant, as in most classes of a
        // broadcast) are decided exactly by interval arithmetic (see `cube.rs`); otherwise
        // sample points rule most candidates out and the facts decide the rest.
        let common_held = refuter.holds_all(mins, common);
        let common_lits = refuter.lits_of(mins, common);
        let mut lits: Vec<Option<Vec<ILit>>> =
            terms.iter().map(|t| refuter.lits_of(mins, t)).collect();
        let domain: Vec<i64> = mins.iter().map(|(_, m)| *m).collect();
        let common_singles = common_lits.as_deref().and_then(cube::singles);
        let mut singles: Vec<Option<Vec<(usize, IntSet)>>> = lits
            .iter()
            .map(|l| l.as_deref().and_then(cube::singles))
            .collect();
        let boxes = common_singles.is_some() && singles.iter().all(Option::is_some);
        // The domain and the common literals, which every premise starts from.
        let base = common_singles
            .as_ref()
            .filter(|_| boxes)
            .map(|cs| Cube::domain(&domain).and(cs, None));
        let names: Vec<Symbol> = mins.iter().map(|(s, _)| s.clone()).collect();
        let mut truths: Vec<Vec<(Bits, Bits)>> = if boxes {
            Vec::new()
        } else {
            terms
                .iter()
                .map(|t| t.iter().map(|x| refuter.truth(mins, x).clone()).collect())
                .collect()
        };
        for i in 0..terms.len() {
            let mut k = 0;
            while k < terms[i].len() {
                let implies_other = match (&base, &singles[i]) {
                    (Some(base), Some(ts)) => {
                        let premise = base.and(ts, Some(k));
                        (0..terms.len()).any(|j| {
                            j != i
                                && (dirty[i] || dirty[j])
                                && singles[j].as_ref().is_some_and(|c| premise.implies(c))
                        })
                    }
                    _ => {
                        // The premise as a [`Region`] when its literals are all [`ILit`]s
                        // (single-symbol comparisons and the broadcast checks `e == i` of
                        // independent sizes): it decides most candidates exactly. The
                        // others are filtered by the sample points, and the facts, assumed
                        // only when needed, decide the rest.
                        let region = match (&common_lits, &lits[i]) {
                            (Some(c), Some(t)) => Some(Region::new(
                                c.iter().cloned().chain(t.iter().enumerate().map(|(m, l)| {
                                    if m == k {
                                        l.negate()
                                    } else {
                                        l.clone()
                                    }
                                })),
                                &domain,
                            )),
                            _ => None,
                        };
                        let mut held: Option<Bits> = None;
                        let mut open = Vec::new();
                        let mut proved = false;
                        for j in 0..terms.len() {
                            if j == i || !(dirty[i] || dirty[j]) {
                                continue;
                            }
                            if let (Some(r), Some(l)) = (&region, &lits[j]) {
                                match r.implies_all(l) {
                                    Some(false) => continue,
                                    Some(true) => {
                                        proved = true;
                                        break;
                                    }
                                    None => {}
                                }
                            }
                            let held = held.get_or_insert_with(|| {
                                let mut held = common_held.clone();
                                for (m, (t, f)) in truths[i].iter().enumerate() {
                                    // `!x` holds where `x` is false.
                                    held.and(if m == k { f } else { t });
                                }
                                held
                            });
                            if truths[j].iter().all(|(_, f)| !held.meets(f)) {
                                open.push(j);
                            }
                        }
                        proved
                            || (!open.is_empty() && {
                                let facts = refuter.premise(mins, common, &terms[i], k);
                                open.iter().any(|&j| {
                                    terms[j]
                                        .iter()
                                        .all(|y| facts.decide_plain(y) == Some(true))
                                })
                            })
                    }
                };
                if implies_other {
                    terms[i].remove(k);
                    if let Some(ts) = singles[i].as_mut() {
                        ts.remove(k);
                    }
                    if !boxes {
                        truths[i].remove(k);
                    }
                    if let Some(l) = lits[i].as_mut() {
                        l.remove(k);
                    }
                    dirty[i] = true;
                    changed = true;
                } else {
                    k += 1;
                }
            }
        }
        // Resolution.
        'outer: for i in 0..terms.len() {
            for j in i + 1..terms.len() {
                if terms[i].len() != terms[j].len() || !(dirty[i] || dirty[j]) {
                    continue;
                }
                let only_i: Vec<&BoolExpr> =
                    terms[i].iter().filter(|x| !terms[j].contains(x)).collect();
                let only_j: Vec<&BoolExpr> =
                    terms[j].iter().filter(|x| !terms[i].contains(x)).collect();
                let ([x], [y]) = (only_i.as_slice(), only_j.as_slice()) else {
                    continue;
                };
                let shared: Vec<BoolExpr> = terms[i]
                    .iter()
                    .filter(|z| terms[j].contains(z))
                    .cloned()
                    .collect();
                let not_x = x.not();
                let mut facts: Vec<&BoolExpr> = common.iter().chain(&shared).collect();
                facts.push(&not_x);
                // The shared literals (and the common ones) as [`ILit`]s, when they are:
                // then a [`Region`] decides most implications, the procedure the rest.
                let shared_lits: Option<Vec<ILit>> = common_lits.as_ref().and_then(|c| {
                    let li = lits.get(i)?.as_ref()?;
                    let mut v = c.clone();
                    v.extend(
                        terms[i]
                            .iter()
                            .zip(li)
                            .filter(|(z, _)| terms[j].contains(z))
                            .map(|(_, l)| l.clone()),
                    );
                    Some(v)
                });
                // Whether the facts with `a` (and `extra`) imply `b`.
                let implies = |a: &BoolExpr, extra: Option<&BoolExpr>, b: &BoolExpr| {
                    let quick = shared_lits.as_ref().and_then(|base| {
                        let mut v = base.clone();
                        v.push(ILit::of(a, &names)?);
                        if let Some(e) = extra {
                            v.push(ILit::of(e, &names)?);
                        }
                        Region::new(v, &domain).implies(&ILit::of(b, &names)?)
                    });
                    quick.unwrap_or_else(|| {
                        let mut f = facts[..facts.len() - 1].to_vec();
                        f.push(a);
                        f.extend(extra);
                        decide_under(mins, &f, b) == Some(true)
                    })
                };
                if implies(&not_x, None, y) {
                    terms[i] = shared;
                    dirty[i] = true;
                    terms.remove(j);
                    dirty.remove(j);
                    changed = true;
                    break 'outer;
                }
                // `x || y` as one comparison on the same symbol (`h == 1 || h >= 2` is
                // `h >= 1`).
                if let Some(z) = union_literal(x, y, implies) {
                    let mut t = shared;
                    t.push(z);
                    terms[i] = t;
                    dirty[i] = true;
                    terms.remove(j);
                    dirty.remove(j);
                    changed = true;
                    break 'outer;
                }
            }
        }
        if !changed {
            return;
        }
    }
}

/// Bits over the sample points of a [`Refuter`].
#[derive(Clone, Debug, PartialEq, Eq)]
struct Bits(Vec<u64>);

impl Bits {
    fn ones(n: usize) -> Bits {
        let mut v = vec![u64::MAX; n.div_ceil(64)];
        if !n.is_multiple_of(64) {
            if let Some(last) = v.last_mut() {
                *last = (1u64 << (n % 64)) - 1;
            }
        }
        Bits(v)
    }

    fn and(&mut self, other: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a &= b;
        }
    }

    fn meets(&self, other: &Bits) -> bool {
        self.0.iter().zip(&other.0).any(|(a, b)| a & b != 0)
    }
}

/// Concrete counterexamples for the implications [`merge_terms`] asks: the truth of each
/// condition at a fixed set of sample points (symbols `>= 0`), cached per condition. Facts
/// that all hold at a point where a goal is false do not imply it, so the goal needs no
/// proof attempt; the proof is only tried where no sample refutes it. The answers are the
/// proof's own (a sound proof never proves a goal a point refutes), found faster: a wide
/// cover merges hundreds of classes into one guard, and the proofs were nearly all of its
/// time.
struct Refuter {
    points: Vec<Vec<i64>>,
    cache: HashMap<BoolExpr, (Bits, Bits)>,
    /// The facts of a premise of [`merge_terms`] (the common literals, a term without one
    /// literal, and that literal negated), by its literals. A cover widening one entry
    /// hundreds of times asks the same premises of its unchanged terms at every widening;
    /// assuming them again was half of the merging (`[a, ..., j] + [a, 1, ..., 1]`).
    premises: HashMap<Vec<BoolExpr>, Facts>,
    /// Each literal as an [`ILit`] over the cover's symbols, when it is one.
    lits: HashMap<BoolExpr, Option<ILit>>,
}

impl Refuter {
    /// At most this many sample points.
    const MAX_POINTS: usize = 4096;

    /// Sample points for `n` symbols: the whole grid of values `0..=3` when it is small
    /// enough, else random points over `0..=5` (a fixed seed: the same cover every run).
    fn new(n: usize) -> Refuter {
        let mut points = Vec::new();
        let full = 4usize.checked_pow(n as u32).filter(|&c| c <= Self::MAX_POINTS);
        match full {
            Some(count) => {
                for mut code in 0..count {
                    let mut p = vec![0; n];
                    for v in p.iter_mut() {
                        *v = (code % 4) as i64;
                        code /= 4;
                    }
                    points.push(p);
                }
            }
            None => {
                let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
                for _ in 0..Self::MAX_POINTS {
                    let p = (0..n)
                        .map(|_| {
                            state = state
                                .wrapping_mul(6364136223846793005)
                                .wrapping_add(1442695040888963407);
                            ((state >> 33) % 6) as i64
                        })
                        .collect();
                    points.push(p);
                }
            }
        }
        Refuter {
            points,
            cache: HashMap::new(),
            premises: HashMap::new(),
            lits: HashMap::new(),
        }
    }

    /// No sample points: every implication goes to the proof (the reference the sampled
    /// merge is tested against).
    #[cfg(test)]
    fn without_points() -> Refuter {
        Refuter {
            points: Vec::new(),
            cache: HashMap::new(),
            premises: HashMap::new(),
            lits: HashMap::new(),
        }
    }

    /// `lits` as [`ILit`]s over the symbols of `mins`, when every one is. (Cached by
    /// literal: a refuter serves one cover, whose symbols and their order are fixed, as its
    /// sample points already assume.)
    fn lits_of(&mut self, mins: &[(Symbol, i64)], lits: &[BoolExpr]) -> Option<Vec<ILit>> {
        debug_assert_eq!(self.points.first().map_or(mins.len(), Vec::len), mins.len());
        lits.iter()
            .map(|l| {
                self.lits
                    .entry(l.clone())
                    .or_insert_with(|| {
                        let names: Vec<Symbol> = mins.iter().map(|(s, _)| s.clone()).collect();
                        ILit::of(l, &names)
                    })
                    .clone()
            })
            .collect()
    }

    /// The facts `mins`, `common`, `term` without its literal `k`, and that literal negated.
    fn premise(
        &mut self,
        mins: &[(Symbol, i64)],
        common: &[BoolExpr],
        term: &[BoolExpr],
        k: usize,
    ) -> &Facts {
        /// Beyond this many cached premises the cache starts over (memory stays bounded).
        const MAX_PREMISES: usize = 20_000;
        let mut key: Vec<BoolExpr> = common.to_vec();
        key.extend(term.iter().enumerate().filter(|(m, _)| *m != k).map(|(_, z)| z.clone()));
        key.push(term[k].not());
        if !self.premises.contains_key(&key) {
            if self.premises.len() >= MAX_PREMISES {
                self.premises.clear();
            }
            let mut facts = Facts::new(mins);
            for z in &key {
                facts.assume(z);
            }
            self.premises.insert(key.clone(), facts);
        }
        &self.premises[&key]
    }

    /// Where `c` is certainly true, and where it is certainly false (a point where it
    /// cannot be evaluated, e.g. it overflows, is in neither).
    fn truth(&mut self, mins: &[(Symbol, i64)], c: &BoolExpr) -> &(Bits, Bits) {
        if !self.cache.contains_key(c) {
            let n = self.points.len();
            let (mut t, mut f) = (Bits(vec![0; n.div_ceil(64)]), Bits(vec![0; n.div_ceil(64)]));
            let names: Vec<&str> = mins.iter().map(|(s, _)| s.as_str()).collect();
            let compiled = crate::sym::GuardSet::from(vec![Guard {
                cond: c.clone(),
                reason: String::new(),
            }])
            .compile(&names);
            if let Ok(compiled) = compiled {
                for (i, p) in self.points.iter().enumerate() {
                    match compiled.eval(p) {
                        Ok(None) => t.0[i / 64] |= 1 << (i % 64),
                        Ok(Some(_)) => f.0[i / 64] |= 1 << (i % 64),
                        Err(_) => {}
                    }
                }
            }
            self.cache.insert(c.clone(), (t, f));
        }
        &self.cache[c]
    }

    /// The points where every condition of `cs` is certainly true.
    fn holds_all(&mut self, mins: &[(Symbol, i64)], cs: &[BoolExpr]) -> Bits {
        let mut held = Bits::ones(self.points.len());
        for c in cs {
            held.and(&self.truth(mins, c).0);
        }
        held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lits(v: &[&str]) -> Vec<BoolExpr> {
        v.iter().map(|s| BoolExpr::parse(s).unwrap()).collect()
    }

    /// The sample points only skip proofs: merging with them gives exactly the terms a
    /// merge with no points (every implication tried by proof) gives, on random disjunctions
    /// of literals over three symbols.
    #[test]
    fn sample_refutation_does_not_change_merged_terms() {
        let pool = lits(&[
            "a == 0", "a == 1", "a >= 2", "a != 1", "b == 0", "b == 1", "b >= 2", "a == b",
            "a != b", "c == 1", "c >= 1", "b <= 1", "a <= c", "c == a", "c != 0",
        ]);
        let mins: Vec<(Symbol, i64)> = ["a", "b", "c"].iter().map(|n| (Symbol::new(n), 0)).collect();
        let mut rng = crate::testing::Lcg::new(7);
        let mut next = |n: usize| rng.index(n);
        let mut merged_some = 0;
        for _ in 0..300 {
            let terms: Vec<Vec<BoolExpr>> = (0..2 + next(5))
                .map(|_| {
                    let mut t: Vec<BoolExpr> = Vec::new();
                    for _ in 0..1 + next(3) {
                        let l = pool[next(pool.len())].clone();
                        if !t.contains(&l) {
                            t.push(l);
                        }
                    }
                    t
                })
                .collect();
            let (mut with, mut without) = (terms.clone(), terms.clone());
            merge_terms(&mut with, 0, &mins, &[], &mut Refuter::new(3));
            merge_terms(&mut without, 0, &mins, &[], &mut Refuter::without_points());
            assert_eq!(with, without, "{terms:?}");
            merged_some += usize::from(with != terms);
        }
        assert!(merged_some > 50, "{merged_some}");
    }

    /// A region of single-symbol literals (a box) is decided by interval arithmetic: it is
    /// empty exactly when no point of a grid that holds a witness of every satisfiable one
    /// (constants are at most 3) satisfies it; and the decision procedure's path, where it
    /// decides, agrees.
    #[test]
    fn empty_boxes_are_exactly_the_unsatisfiable_regions() {
        let pool = lits(&[
            "a == 0", "a == 1", "a >= 2", "a != 1", "a <= 2", "a >= 3", "b == 1", "b >= 2",
            "b != 0", "b <= 1", "c == 3", "c != 3", "c >= 1", "c <= 2",
        ]);
        let names: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let domain = lits(&["a >= 0", "b >= 0", "c >= 0"]);
        let prover = Prover::new(&names, &domain, &[]);
        let mut reference = Prover::new(&names, &domain, &[]);
        reference.domain_lits = None;
        let mut rng = crate::testing::Lcg::new(3);
        let mut next = |n: usize| rng.index(n);
        let (mut empty, mut nonempty) = (0, 0);
        for _ in 0..2000 {
            let region: Vec<BoolExpr> = (0..1 + next(4)).map(|_| pool[next(pool.len())].clone()).collect();
            let satisfiable = (0..5 * 5 * 5).any(|p| {
                let b = Bindings::from_pairs([("a", p % 5), ("b", p / 5 % 5), ("c", p / 25)]);
                region.iter().all(|l| l.eval(&b).unwrap())
            });
            let by_box = prover.contradictory(&region);
            assert_eq!(by_box, !satisfiable, "{region:?}");
            // The decision procedure proves only real contradictions.
            if reference.contradictory(&region) {
                assert!(by_box, "{region:?}");
            }
            if by_box {
                empty += 1;
            } else {
                nonempty += 1;
            }
        }
        assert!(empty > 200 && nonempty > 200, "{empty} empty, {nonempty} not");
    }

    /// Widening one class at a time (each class merged into the disjunction merged so far,
    /// as the cover does, examining only the pairs with a new term) keeps exactly the union
    /// of the classes: on random classes over three symbols, at every point of the grid
    /// `0..=4`, the merged guard holds iff some class does; and each incremental merge equals
    /// a merge that examines every pair.
    #[test]
    fn widening_one_class_at_a_time_keeps_the_union() {
        let pool = lits(&[
            "a == 0", "a == 1", "a >= 2", "a != 1", "b == 0", "b == 1", "b >= 2", "a == b",
            "a != b", "c == 1", "c >= 1", "b <= 1", "a <= c", "c == a", "c != 0", "c >= 2",
        ]);
        let names: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let mins: Vec<(Symbol, i64)> = names.iter().map(|n| (Symbol::new(n), 0)).collect();
        let mut rng = crate::testing::Lcg::new(11);
        let mut next = |n: usize| rng.index(n);
        let holds = |f: &BoolExpr, p: &[i64]| {
            let pairs = names.iter().map(String::as_str).zip(p.iter().copied());
            let b = crate::sym::Bindings::from_pairs(pairs);
            f.eval(&b).unwrap()
        };
        let mut shrank = 0;
        for _ in 0..200 {
            let classes: Vec<Vec<BoolExpr>> = (0..2 + next(8))
                .map(|_| (0..1 + next(3)).map(|_| pool[next(pool.len())].clone()).collect())
                .collect();
            let mut refuter = Refuter::new(3);
            let mut merged: Vec<Vec<BoolExpr>> = vec![classes[0].clone()];
            for c in &classes[1..] {
                let closed = merged.len();
                merged.push(c.clone());
                // The incremental merge (pairs of two old terms skipped) gives exactly the
                // terms of a merge that examines every pair.
                let (c0, t0) = merge_disjunction(merged.clone(), 0, &mins, &mut refuter);
                let (common, terms) = merge_disjunction(merged, closed, &mins, &mut refuter);
                assert_eq!((&common, &terms), (&c0, &t0), "{classes:?}");
                merged = rejoined(&common, &terms);
            }
            let union = BoolExpr::or_all(classes.iter().cloned().map(BoolExpr::and_all));
            let guard = BoolExpr::or_all(merged.iter().cloned().map(BoolExpr::and_all));
            for i in 0..125 {
                let p = [i % 5, i / 5 % 5, i / 25];
                assert_eq!(holds(&guard, &p), holds(&union, &p), "{classes:?} at {p:?}: {guard}");
            }
            shrank += usize::from(merged.len() < classes.len());
        }
        assert!(shrank > 50, "{shrank}");
    }

    /// The split's emptiness test on the regions covers were left incomplete on (issue 39,
    /// each empty) and on neighbours of them (not empty, each with its witness checked).
    #[test]
    fn regions_empty_only_as_a_whole_are_empty_to_the_split() {
        let syms: Vec<String> = ["a", "c", "d0", "k", "s"].iter().map(|s| s.to_string()).collect();
        let domain: Vec<BoolExpr> = syms
            .iter()
            .map(|s| BoolExpr::parse(&format!("{s} >= 0")).unwrap())
            .collect();
        let p = Prover::new(&syms, &domain, &[]);
        for region in [
            &["k >= 1", "k <= FloorDiv(k, 2)"][..],
            &["a**2 <= a + 1", "a >= 2"],
            &["a*s <= a + 1", "a >= 2", "s >= 2"],
            &["c == FloorDiv(c, 2)", "c != 0"],
            &["Min(s, 2) == 1", "Min(d0, s) != 1", "d0 != 0"],
        ] {
            assert!(p.contradictory(&lits(region)), "{region:?}");
        }
        for (region, at) in [
            (&["k >= 0", "k <= FloorDiv(k, 2)"][..], [0, 0, 0, 0, 0]),
            (&["a**2 <= a + 2", "a >= 2"], [2, 0, 0, 0, 0]),
            (&["a*s <= a + 2", "a >= 2", "s >= 2"], [2, 0, 0, 0, 2]),
            (&["c == FloorDiv(c, 2) + 1", "c != 0"], [0, 1, 0, 0, 0]),
            (&["Min(s, 2) == 1", "Min(d0, s) != 1"], [0, 0, 0, 0, 1]),
        ] {
            assert!(!p.contradictory(&lits(region)), "{region:?}");
            let b = Bindings::from_pairs(syms.iter().map(|s| s.as_str()).zip(at));
            assert!(lits(region).iter().all(|l| l.eval(&b).unwrap()), "{region:?} at {at:?}");
        }
    }

    #[test]
    fn order_cycles_are_refuted_and_consistent_orders_are_not() {
        assert!(order_cycle(&lits(&["u < s", "s <= t", "t <= u"])));
        assert!(order_cycle(&lits(&["a == b + 2", "b >= a"])));
        assert!(order_cycle(&lits(&["s <= 2", "t >= 3", "t <= s"])));
        assert!(order_cycle(&lits(&["s <= t - 1", "t <= 0"])));
        assert!(!order_cycle(&lits(&["u < s", "s <= t", "u <= t"])));
        assert!(!order_cycle(&lits(&["a == b + 2", "b >= 1", "a*b == 6"])));
        assert!(!order_cycle(&lits(&["s != t", "t != s"])));
    }
}
