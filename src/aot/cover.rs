//! `--cover`: specializations whose guard sets provably admit every binding of the domain.
//!
//! # Why a proof, not probes
//!
//! Probing a grid of values (each symbol 0, 1, a few larger ones) misses every region the
//! grid does not sample: `a == b`, `b == 2`, `2*d + 1 == b`... The cover is therefore built
//! from the guards themselves:
//!
//! 1. Every comparison that appears in a guard of a specialization is an *atom*. A guard
//!    set is a Boolean formula over atoms, so once every atom has a truth value each guard
//!    set is simply true or false.
//! 2. A case split over the atoms (DPLL-style) walks the truth assignments. Each branch
//!    assumes one more literal in a [`Facts`] (intervals, bounds, exclusions, substitutions:
//!    the decision procedure of `sym`), which also decides further atoms (propagation). A
//!    branch where some specialization's guards are all true is covered; one where every
//!    specialization is false is an *uncovered region*, described by its literals.
//! 3. For an uncovered region, a small backtracking search looks for a binding of the
//!    domain that satisfies its literals; the spec is traced there (an *error
//!    specialization* when the shapes do not broadcast: its guards prove the failure) and
//!    the split restarts with the new specialization and its atoms.
//! 4. The split ending without an uncovered region *is* the proof that the disjunction of
//!    all guard sets holds on the whole domain: every truth assignment of the atoms that
//!    the decision procedure could not rule out makes some guard set true. (An assignment
//!    it ruled out contradicts the domain, so no binding realizes it.) A region where no
//!    binding was found and none could be ruled out, or where tracing failed otherwise,
//!    is recorded as uncovered and the artifact says `"complete": false`.
//!
//! The domain: every symbol `>= 0` (sizes, and stride symbols: specs have no negative
//! strides), every stride expression `>= 0`; with `cover_zero` off, sizes `>= 1`.
//!
//! # Fewer specializations
//!
//! A new trace whose plan an existing specialization already computes (same structure,
//! every entry provably equal under the new guards, e.g. `c*h*w` vs `0` when `h == 0`)
//! widens that specialization's guards by a disjunction instead of adding one.

use super::spec::Spec;
use super::specialization::Specialization;
use super::trace::{trace, trace_or_error};
use crate::error::Result;
use crate::iter::Plan;
use crate::sym::{decide_under, Bindings, BoolExpr, Expr, Facts, Guard, Rel, Symbol};
use std::collections::HashMap;

/// Options of a compile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileOptions {
    /// Compile a covering set of specializations rather than only the one at the hints.
    pub cover: bool,
    /// With `cover`, also cover bindings where sizes are 0 (otherwise the domain is sizes
    /// `>= 1`).
    pub cover_zero: bool,
    /// With `cover`, the largest number of specializations; beyond, the cover stops and is
    /// recorded as incomplete.
    pub max_specializations: usize,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            cover: false,
            cover_zero: true,
            max_specializations: 256,
        }
    }
}

/// What the cover proof established about an artifact's specializations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coverage {
    /// True when the case split proved that every binding of `domain` is admitted by some
    /// specialization (a plan, or an error specialization).
    pub complete: bool,
    /// The domain the proof ranges over: one condition per symbol and stride expression.
    pub domain: Vec<BoolExpr>,
    /// Regions not proven covered, each a conjunction of conditions (empty when complete).
    pub uncovered: Vec<BoolExpr>,
}

/// The domain of a spec's bindings: symbols `>= 0` (size symbols `>= 1` without `zero`),
/// and every stride expression that is not a constant or a bare symbol `>= 0`.
pub fn cover_domain(spec: &Spec, zero: bool) -> Vec<BoolExpr> {
    let mut out = Vec::new();
    for (i, name) in spec.symbols.iter().enumerate() {
        let min = if !zero && spec.is_size_symbol(i) {
            1
        } else {
            0
        };
        out.push(BoolExpr::ge(&Expr::symbol(name), &Expr::constant(min)));
    }
    for inp in &spec.inputs {
        if let super::spec::StrideSpec::Exprs(es) = &inp.strides {
            for e in es {
                if e.as_const().is_none() && e.as_symbol().is_none() {
                    let c = BoolExpr::ge(e, &Expr::constant(0));
                    // `b*s >= 0` follows from `b, s >= 0`: not worth stating.
                    let mins: Vec<(Symbol, i64)> =
                        spec.symbols.iter().map(|n| (Symbol::new(n), 0)).collect();
                    if decide_under(&mins, &[], &c) != Some(true) && !out.contains(&c) {
                        out.push(c);
                    }
                }
            }
        }
    }
    out
}

/// Compiles the specializations of `spec`: the one traced at the hints, and with
/// `options.cover` as many more as the cover proof needs (see the module docs).
pub fn compile_specializations(
    spec: &Spec,
    options: &CompileOptions,
) -> Result<Vec<Specialization>> {
    Ok(compile_cover(spec, options)?.0)
}

/// Like [`compile_specializations`], also returning what the proof established (`None`
/// without `options.cover`).
pub fn compile_cover(
    spec: &Spec,
    options: &CompileOptions,
) -> Result<(Vec<Specialization>, Option<Coverage>)> {
    if !options.cover {
        return Ok((vec![trace(spec, &spec.hints)?], None));
    }
    let first = trace_or_error(spec, &spec.hints)?;
    let domain = cover_domain(spec, options.cover_zero);
    let mut classes = vec![vec![first.guards.clone()]];
    let mut out = vec![first];
    // Regions given up on (no binding found, or the trace failed otherwise): counted as
    // covered by the split so that it moves on, and reported.
    let mut given_up: Vec<BoolExpr> = Vec::new();
    loop {
        let found = {
            let mut prover = Prover::new(spec, &domain, &out, &given_up);
            prover.search()
        };
        if std::env::var_os("SYMSTRIDE_COVER_DEBUG").is_some() {
            eprintln!(
                "cover: {} specializations, {} given up, {}",
                out.len(),
                given_up.len(),
                match &found {
                    Found::Covered => "covered".to_string(),
                    Found::Region(l, _) | Found::Budget(l) =>
                        format!("region {}", BoolExpr::and_all(l.clone())),
                }
            );
        }
        let region = match found {
            Found::Covered => break,
            Found::Budget(lits) => {
                given_up.push(BoolExpr::and_all(lits));
                break;
            }
            Found::Region(lits, facts) => (lits, facts),
        };
        if out.len() >= options.max_specializations {
            given_up.push(BoolExpr::and_all(region.0));
            break;
        }
        let Some(w) = find_witness(spec, &region.0, &domain, &region.1) else {
            given_up.push(BoolExpr::and_all(region.0));
            continue;
        };
        match trace_or_error(spec, &w) {
            Ok(s) if s.admits(&w)? => add(spec, &mut out, &mut classes, s)?,
            _ => given_up.push(BoolExpr::and_all(region.0)),
        }
    }
    // Plans first (general ones before zero-size classes), error specializations last.
    out.sort_by_key(|s| {
        (
            s.error.is_some(),
            s.traced_at.iter().filter(|v| **v == 0).count(),
        )
    });
    let coverage = Coverage {
        complete: given_up.is_empty(),
        domain,
        uncovered: given_up,
    };
    Ok((out, Some(coverage)))
}

/// Re-runs the proof over given specializations: does every binding of `domain` satisfy
/// some specialization's guards? Returns the first region found uncovered, or `None`.
pub fn uncovered_region(
    spec: &Spec,
    domain: &[BoolExpr],
    specializations: &[Specialization],
) -> Option<BoolExpr> {
    match Prover::new(spec, domain, specializations, &[]).search() {
        Found::Covered => None,
        Found::Region(lits, _) | Found::Budget(lits) => Some(BoolExpr::and_all(lits)),
    }
}

/// Adds `s` to the cover: an existing specialization whose plan agrees with `s`'s under
/// `s`'s guards (or, for an error specialization, one with the same error) admits `s`'s
/// class too; otherwise `s` is appended. `classes[j]` holds the guard lists of the traces
/// merged into `out[j]`.
fn add(
    spec: &Spec,
    out: &mut Vec<Specialization>,
    classes: &mut Vec<Vec<Vec<Guard>>>,
    s: Specialization,
) -> Result<()> {
    let host = out.iter().position(|o| match (&o.error, &s.error) {
        (None, None) => plan_agrees(&o.plan, &s, spec),
        (Some(a), Some(b)) => a == b,
        _ => false,
    });
    match host {
        Some(j) => {
            classes[j].push(s.guards.clone());
            out[j] = widen(spec, &out[j], &classes[j])?;
        }
        None => {
            classes.push(vec![s.guards.clone()]);
            out.push(s);
        }
    }
    Ok(())
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

enum Found {
    Covered,
    /// An uncovered region: its literals, and the facts they give.
    Region(Vec<BoolExpr>, Facts),
    /// The split ran out of budget in this region.
    Budget(Vec<BoolExpr>),
}

/// Largest number of nodes of one case split.
const SPLIT_BUDGET: usize = 200_000;

struct Prover {
    atoms: Vec<BoolExpr>,
    sets: Vec<Node>,
    facts: Facts,
    nodes: usize,
}

impl Prover {
    fn new(
        spec: &Spec,
        domain: &[BoolExpr],
        specs: &[Specialization],
        given_up: &[BoolExpr],
    ) -> Prover {
        let mut atoms = Vec::new();
        let mut index: HashMap<BoolExpr, (usize, bool)> = HashMap::new();
        let mut sets: Vec<Node> = specs
            .iter()
            .map(|s| {
                Node::And(
                    s.guards
                        .iter()
                        .map(|g| compile(&g.cond, &mut atoms, &mut index))
                        .collect(),
                )
            })
            .collect();
        sets.extend(given_up.iter().map(|r| compile(r, &mut atoms, &mut index)));
        let mins: Vec<(Symbol, i64)> = spec.symbols.iter().map(|n| (Symbol::new(n), 0)).collect();
        let mut facts = Facts::new(&mins);
        for d in domain {
            facts.assume(d);
        }
        Prover {
            atoms,
            sets,
            facts,
            nodes: 0,
        }
    }

    fn search(&mut self) -> Found {
        let mut assign = vec![None; self.atoms.len()];
        let facts = self.facts.clone();
        self.rec(&mut assign, &facts)
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
        if self.refutes_one(lits) {
            return true;
        }
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
        more.len() > lits.len() && self.refutes_one(&more)
    }

    /// True when one literal is decided false under the others.
    fn refutes_one(&self, lits: &[BoolExpr]) -> bool {
        (0..lits.len()).any(|i| {
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

    fn rec(&mut self, assign: &mut Vec<Option<bool>>, facts: &Facts) -> Found {
        self.nodes += 1;
        if self.nodes > SPLIT_BUDGET {
            return Found::Budget(self.literals(assign));
        }
        // Propagation: atoms the facts decide.
        let mut set_here = Vec::new();
        for (i, (slot, atom)) in assign.iter_mut().zip(&self.atoms).enumerate() {
            if slot.is_none() {
                if let Some(v) = facts.decide(atom) {
                    *slot = Some(v);
                    set_here.push(i);
                }
            }
        }
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
        let result = if covered {
            Found::Covered
        } else if all_false {
            let lits = self.literals(assign);
            if self.contradictory(&lits) {
                Found::Covered // an empty region
            } else {
                Found::Region(lits, facts.clone())
            }
        } else {
            let i = pick.expect("an undecided formula has an unassigned atom");
            let mut result = Found::Covered;
            for v in [true, false] {
                let lit = if v {
                    self.atoms[i].clone()
                } else {
                    self.atoms[i].not()
                };
                assign[i] = Some(v);
                // An equality rebuilds the facts so that it rewrites the earlier ones.
                let f = if matches!(lit.as_cmp(), Some((Rel::Eq, _))) {
                    let lits = self.literals(assign);
                    self.facts_for(&lits.iter().collect::<Vec<_>>())
                } else {
                    let mut f = facts.clone();
                    for c in consequences(&lit) {
                        f.assume(&c);
                    }
                    f.assume(&lit);
                    f
                };
                let r = self.rec(assign, &f);
                assign[i] = None;
                if !matches!(r, Found::Covered) {
                    result = r;
                    break;
                }
            }
            result
        };
        for i in set_here {
            assign[i] = None;
        }
        result
    }
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
fn find_witness(
    spec: &Spec,
    lits: &[BoolExpr],
    domain: &[BoolExpr],
    facts: &Facts,
) -> Option<Vec<i64>> {
    let k = spec.symbols.len();
    let index = |s: &Symbol| spec.symbols.iter().position(|n| n == s.as_str());
    // Each condition is checked as soon as its last symbol has a value.
    let mut checks: Vec<Vec<&BoolExpr>> = vec![Vec::new(); k.max(1)];
    for c in lits.iter().chain(domain) {
        let last = c.symbols().iter().filter_map(index).max().unwrap_or(0);
        checks[last].push(c);
    }
    let syms: Vec<Symbol> = spec.symbols.iter().map(|n| Symbol::new(n)).collect();
    let mut values = vec![0i64; k];
    let mut budget = WITNESS_BUDGET;
    fn rec(
        i: usize,
        spec: &Spec,
        syms: &[Symbol],
        checks: &[Vec<&BoolExpr>],
        facts: &Facts,
        values: &mut Vec<i64>,
        budget: &mut usize,
    ) -> bool {
        let k = values.len();
        if i == k {
            return spec.concrete_inputs(values).is_ok();
        }
        let b = Bindings::from_pairs(
            spec.symbols[..i]
                .iter()
                .map(String::as_str)
                .zip(values[..i].iter().copied()),
        );
        for v in candidates(i, spec, syms, facts, values, &b) {
            if *budget == 0 {
                return false;
            }
            *budget -= 1;
            values[i] = v;
            let mut b2 = b.clone();
            b2.insert(spec.symbols[i].as_str(), v);
            if checks[i].iter().all(|c| c.eval(&b2).unwrap_or(false))
                && rec(i + 1, spec, syms, checks, facts, values, budget)
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
        return (ok && spec.concrete_inputs(&[]).is_ok()).then(Vec::new);
    }
    rec(0, spec, &syms, &checks, facts, &mut values, &mut budget).then_some(values)
}

/// Candidate values of symbol `i` given the values of the symbols before it.
fn candidates(
    i: usize,
    spec: &Spec,
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
    let h = spec.hints[i];
    if h >= 2 && !spec.hints[..i].contains(&h) {
        push(h);
    }
    push(11 + 2 * i as i64);
    for d in 0..4 {
        push(lo.saturating_add(d));
    }
    for &v in &values[..i] {
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

/// True when `plan` has the structure of `s.plan` and every entry equals `s.plan`'s
/// wherever `s`'s guards hold (decided statically; sizes `>= 0`).
fn plan_agrees(plan: &Plan<Expr>, s: &Specialization, spec: &Spec) -> bool {
    let other = &s.plan;
    let same_shape = plan.perm == other.perm
        && plan.num_outputs == other.num_outputs
        && plan.shape.len() == other.shape.len()
        && plan.broadcast_shape.len() == other.broadcast_shape.len()
        && plan.operands.len() == other.operands.len()
        && plan.output_strides.len() == other.output_strides.len()
        && plan.operands.iter().zip(&other.operands).all(|(a, b)| {
            a.element_size == b.element_size
                && a.is_output == b.is_output
                && a.byte_strides.len() == b.byte_strides.len()
        });
    if !same_shape {
        return false;
    }
    let mins: Vec<(Symbol, i64)> = spec.symbols.iter().map(|n| (Symbol::new(n), 0)).collect();
    let facts: Vec<&BoolExpr> = s.guards.iter().map(|g| &g.cond).collect();
    let equal = |a: &Expr, b: &Expr| {
        a == b || decide_under(&mins, &facts, &BoolExpr::eq(a, b)) == Some(true)
    };
    let pairs = plan
        .shape
        .iter()
        .zip(&other.shape)
        .chain(plan.broadcast_shape.iter().zip(&other.broadcast_shape))
        .chain(
            plan.operands
                .iter()
                .zip(&other.operands)
                .flat_map(|(a, b)| a.byte_strides.iter().zip(&b.byte_strides))
                .chain(
                    plan.operands
                        .iter()
                        .zip(&other.operands)
                        .map(|(a, b)| (&a.offset, &b.offset)),
                ),
        )
        .chain(
            plan.output_strides
                .iter()
                .zip(&other.output_strides)
                .flat_map(|(a, b)| a.iter().zip(b)),
        );
    for (a, b) in pairs {
        if !equal(a, b) {
            return false;
        }
    }
    true
}

/// `host` (its plan or its error) for the union of `classes` (guard lists of traces whose
/// plans agree with `host`'s under their own guards, see [`plan_agrees`]): the guards every
/// class shares, then one guard `class_1 || class_2 || ...` over the rest, simplified:
/// terms that differ in one complementary literal are merged (`(h == 1 && A) || (h != 1 &&
/// A)` is `A`), a term containing another is dropped, terms that cannot hold are dropped.
fn widen(spec: &Spec, host: &Specialization, classes: &[Vec<Guard>]) -> Result<Specialization> {
    let flat = |gs: &[Guard]| -> Vec<BoolExpr> {
        let mut v = Vec::new();
        for g in gs {
            match g.cond.conjuncts() {
                Some(cs) => v.extend(cs.iter().cloned()),
                None => v.push(g.cond.clone()),
            }
        }
        v
    };
    let terms: Vec<Vec<BoolExpr>> = classes.iter().map(|c| flat(c)).collect();
    let common: Vec<BoolExpr> = terms[0]
        .iter()
        .filter(|x| terms.iter().all(|t| t.contains(x)))
        .cloned()
        .collect();
    let mut terms: Vec<Vec<BoolExpr>> = terms
        .into_iter()
        .map(|t| t.into_iter().filter(|x| !common.contains(x)).collect())
        .collect();
    let mins: Vec<(Symbol, i64)> = spec.symbols.iter().map(|n| (Symbol::new(n), 0)).collect();
    merge_terms(&mut terms, &mins, &common);
    let either = super::guards::tidy_or(
        &BoolExpr::or_all(terms.into_iter().map(BoolExpr::and_all)),
        &mins,
        &common.iter().collect::<Vec<_>>(),
    );
    // The shared guards keep their reasons (from the first class that has them whole).
    let mut guards: Vec<Guard> = Vec::new();
    for c in &common {
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
                if host.error.is_some() {
                    "error"
                } else {
                    "plan"
                }
            ),
        });
    }
    super::guards::merge_symbol_bounds(&mut guards);
    let mut out = match &host.error {
        Some(e) => Specialization::new_error(spec, host.traced_at.clone(), guards, e)?,
        None => Specialization::new(spec, host.traced_at.clone(), guards, host.plan.clone())?,
    };
    out.error = host.error.clone();
    Ok(out)
}

/// A single comparison `z` on the one symbol of `x` and `y` with `z <=> x || y` where
/// `facts` hold (tried: `s >= k`, `s <= k`, `s != k` for `k` in 0..=3).
fn union_literal(
    x: &BoolExpr,
    y: &BoolExpr,
    mins: &[(Symbol, i64)],
    facts: &[&BoolExpr],
) -> Option<BoolExpr> {
    let sx = x.symbols();
    if sx.len() != 1 || y.symbols() != sx || x.disjuncts().is_some() || y.disjuncts().is_some() {
        return None;
    }
    let s = Expr::symbol(sx[0].as_str());
    let implies = |a: &BoolExpr, extra: Option<&BoolExpr>, b: &BoolExpr| {
        let mut f: Vec<&BoolExpr> = facts.to_vec();
        f.push(a);
        if let Some(e) = extra {
            f.push(e);
        }
        decide_under(mins, &f, b) == Some(true)
    };
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
fn merge_terms(terms: &mut Vec<Vec<BoolExpr>>, mins: &[(Symbol, i64)], common: &[BoolExpr]) {
    loop {
        let mut changed = false;
        // Absorption.
        let mut i = 0;
        while i < terms.len() {
            let absorbed = (0..terms.len()).any(|j| {
                j != i
                    && terms[j].iter().all(|x| terms[i].contains(x))
                    && (terms[j].len() < terms[i].len() || j < i)
            });
            if absorbed {
                terms.remove(i);
                changed = true;
            } else {
                i += 1;
            }
        }
        // A literal `x` of a term goes when the rest of the term and `!x` imply another
        // term (`s == 0 || (s >= 1 && s != 1)` is `s == 0 || s != 1`).
        'lit: for i in 0..terms.len() {
            for k in 0..terms[i].len() {
                let not_x = terms[i][k].not();
                let mut facts: Vec<&BoolExpr> = common.iter().collect();
                facts.extend(
                    terms[i]
                        .iter()
                        .enumerate()
                        .filter(|(m, _)| *m != k)
                        .map(|(_, z)| z),
                );
                facts.push(&not_x);
                let implies_other = (0..terms.len()).any(|j| {
                    j != i
                        && terms[j]
                            .iter()
                            .all(|y| decide_under(mins, &facts, y) == Some(true))
                });
                if implies_other {
                    terms[i].remove(k);
                    changed = true;
                    break 'lit;
                }
            }
        }
        // Resolution.
        'outer: for i in 0..terms.len() {
            for j in i + 1..terms.len() {
                if terms[i].len() != terms[j].len() {
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
                if decide_under(mins, &facts, y) == Some(true) {
                    terms[i] = shared;
                    terms.remove(j);
                    changed = true;
                    break 'outer;
                }
                // `x || y` as one comparison on the same symbol (`h == 1 || h >= 2` is
                // `h >= 1`).
                if let Some(z) = union_literal(x, y, mins, &facts[..facts.len() - 1]) {
                    let mut t = shared;
                    t.push(z);
                    terms[i] = t;
                    terms.remove(j);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn cover(json: &str) -> (Vec<Specialization>, Coverage) {
        let spec = Spec::from_json(json).unwrap();
        let (s, c) = compile_cover(
            &spec,
            &CompileOptions {
                cover: true,
                ..Default::default()
            },
        )
        .unwrap();
        (s, c.unwrap())
    }

    #[test]
    fn witness_satisfies_equalities_and_exclusions() {
        let spec = Spec::from_json(
            r#"{"op":"add","inputs":[{"sizes":["a"],"layout":"contiguous"},{"sizes":["b"],"layout":"contiguous"}],"hints":{"a":3,"b":5}}"#,
        )
        .unwrap();
        let lits = vec![
            BoolExpr::parse("a == b").unwrap(),
            BoolExpr::parse("a != 1").unwrap(),
            BoolExpr::parse("a >= 1").unwrap(),
        ];
        let domain = cover_domain(&spec, true);
        let mut f = Facts::new(&[(Symbol::new("a"), 0), (Symbol::new("b"), 0)]);
        for l in &lits {
            f.assume(l);
        }
        let w = find_witness(&spec, &lits, &domain, &f).unwrap();
        assert_eq!(w[0], w[1]);
        assert!(w[0] >= 2);
    }

    #[test]
    fn non_broadcasting_sizes_get_an_error_specialization() {
        let (s, c) = cover(
            r#"{"op":"add","inputs":[{"sizes":["a"],"layout":"contiguous"},{"sizes":["b"],"layout":"contiguous"}],"hints":{"a":3,"b":3}}"#,
        );
        assert!(c.complete, "{c:?}");
        assert!(s.iter().any(|x| x.error.as_deref() == Some("broadcast")));
        let spec = Spec::from_json(
            r#"{"op":"add","inputs":[{"sizes":["a"],"layout":"contiguous"},{"sizes":["b"],"layout":"contiguous"}],"hints":{"a":3,"b":3}}"#,
        )
        .unwrap();
        let domain = cover_domain(&spec, true);
        assert_eq!(uncovered_region(&spec, &domain, &s), None);
        // Without the error specialization the proof finds the gap.
        let plans: Vec<Specialization> = s.into_iter().filter(|x| x.error.is_none()).collect();
        assert!(uncovered_region(&spec, &domain, &plans).is_some());
    }
}
