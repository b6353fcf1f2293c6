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

use crate::error::Result;
use crate::sym::{decide_under, Bindings, BoolExpr, Expr, Facts, Guard, Rel, Symbol};
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
}

/// The cover of `target` over `domain` (conditions on the symbols): the trace at the hints,
/// then one trace per uncovered region found by the case split, until the split proves
/// every binding of the domain admitted, or `max_traces` is reached (the rest is reported
/// uncovered). See `cover.rs` for the algorithm.
pub(crate) fn cover<T: CoverTarget>(
    target: &T,
    domain: &[BoolExpr],
    max_traces: usize,
) -> Result<CoverRun<T::Trace>> {
    let first = target.trace_at(target.hints())?;
    let mut classes = vec![vec![target.guards(&first).to_vec()]];
    let mut out = vec![first];
    // Regions given up on (no binding found, or the trace failed otherwise): counted as
    // covered by the split so that it moves on, and reported.
    let mut given_up: Vec<BoolExpr> = Vec::new();
    loop {
        let found = {
            let sets: Vec<&[Guard]> = out.iter().map(|t| target.guards(t)).collect();
            let mut prover = Prover::new(target.symbols(), domain, &sets, &given_up);
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
        if out.len() >= max_traces {
            given_up.push(BoolExpr::and_all(region.0));
            break;
        }
        let Some(w) = find_witness(target, &region.0, domain, &region.1) else {
            given_up.push(BoolExpr::and_all(region.0));
            continue;
        };
        match target.trace_at(&w) {
            Ok(s) if target.admits(&s, &w)? => add(target, &mut out, &mut classes, s)?,
            _ => given_up.push(BoolExpr::and_all(region.0)),
        }
    }
    // Plans first (general ones before zero-size classes), error traces last.
    out.sort_by_key(|s| {
        (
            target.is_error(s),
            target.traced_at(s).iter().filter(|v| **v == 0).count(),
        )
    });
    Ok(CoverRun {
        traces: out,
        uncovered: given_up,
    })
}

/// Re-runs the proof over given guard sets: does every binding of `domain` satisfy one of
/// them? Returns the first region found uncovered, or `None`.
pub(crate) fn uncovered_by(
    symbols: &[String],
    domain: &[BoolExpr],
    sets: &[&[Guard]],
) -> Option<BoolExpr> {
    match Prover::new(symbols, domain, sets, &[]).search() {
        Found::Covered => None,
        Found::Region(lits, _) | Found::Budget(lits) => Some(BoolExpr::and_all(lits)),
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

/// Adds `s` to the cover: an existing trace whose answer is `s`'s under `s`'s guards
/// ([`CoverTarget::same_answer`]) admits `s`'s class too; otherwise `s` is appended. `classes[j]` holds the guard lists of the traces
/// merged into `out[j]`.
fn add<T: CoverTarget>(
    target: &T,
    out: &mut Vec<T::Trace>,
    classes: &mut Vec<Vec<Vec<Guard>>>,
    s: T::Trace,
) -> Result<()> {
    let host = out.iter().position(|o| target.same_answer(o, &s));
    match host {
        Some(j) => {
            classes[j].push(target.guards(&s).to_vec());
            out[j] = widen(target, &out[j], &classes[j])?;
        }
        None => {
            classes.push(vec![target.guards(&s).to_vec()]);
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
    symbols: Vec<Symbol>,
    atoms: Vec<BoolExpr>,
    /// Per atom: the atoms `s == 0` of the symbols whose zero-ness it depends on beyond
    /// intervals (symbols in a product or inside `Max`/`Min`), see [`zero_sensitive`].
    zero_split: Vec<Vec<usize>>,
    sets: Vec<Node>,
    facts: Facts,
    nodes: usize,
}

impl Prover {
    fn new(
        symbols: &[String],
        domain: &[BoolExpr],
        guard_sets: &[&[Guard]],
        given_up: &[BoolExpr],
    ) -> Prover {
        let mut atoms = Vec::new();
        let mut index: HashMap<BoolExpr, (usize, bool)> = HashMap::new();
        let mut sets: Vec<Node> = guard_sets
            .iter()
            .map(|gs| {
                Node::And(
                    gs.iter()
                        .map(|g| compile(&g.cond, &mut atoms, &mut index))
                        .collect(),
                )
            })
            .collect();
        sets.extend(given_up.iter().map(|r| compile(r, &mut atoms, &mut index)));
        let zero_split = zero_split_atoms(&mut atoms, &mut index);
        let mins: Vec<(Symbol, i64)> = symbols.iter().map(|n| (Symbol::new(n), 0)).collect();
        let mut facts = Facts::new(&mins);
        for d in domain {
            facts.assume(d);
        }
        Prover {
            symbols: mins.into_iter().map(|(s, _)| s).collect(),
            atoms,
            zero_split,
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
            return false;
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
        self.refutes_one(&rewritten)
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

    fn rec(&mut self, assign: &mut Vec<Option<bool>>, facts: &Facts) -> Found {
        self.nodes += 1;
        if self.nodes > SPLIT_BUDGET {
            return Found::Budget(self.literals(assign));
        }
        // Propagation: atoms the facts decide (a product once its positive factors are
        // cancelled: `b*c*d == b` is `c*d == 1` where `b >= 1`).
        let mut set_here = Vec::new();
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
            // Split an atom over products or `Max` on its symbols' zero-ness first: then
            // every symbol is 0 (substituted) or >= 1 (positive factors cancel, `Max(s, 1)`
            // is `s`), where the decision procedure is strong.
            let i = self.zero_split[i]
                .iter()
                .copied()
                .find(|&z| assign[z].is_none())
                .unwrap_or(i);
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

/// True when the difference constraints among `lits` (`x - y <= k`, `x == y + k`, bounds
/// `x <= k` and `x >= k`; every symbol `>= 0`) have no common solution: a negative cycle in
/// their constraint graph (Bellman-Ford over the symbols plus a zero node). Orderings of
/// free strides (`u < s`, `s <= t`, `t <= u`) contradict each other this way, which no
/// single literal's interval shows.
pub(crate) fn order_cycle(lits: &[BoolExpr]) -> bool {
    // Edges `to - from <= w`, nodes: 0 is the constant zero, then the symbols.
    let mut nodes: Vec<Symbol> = Vec::new();
    let mut edges: Vec<(usize, usize, i128)> = Vec::new();
    let node = |s: &Symbol, nodes: &mut Vec<Symbol>| match nodes.iter().position(|n| n == s) {
        Some(i) => i + 1,
        None => {
            nodes.push(s.clone());
            nodes.len()
        }
    };
    for l in lits {
        let Some((rel, p)) = l.as_cmp() else {
            continue;
        };
        if rel == Rel::Ne {
            continue;
        }
        let Some(terms) = p.polynomial_terms() else {
            continue;
        };
        // p = c_x*x + c_y*y + k with unit coefficients of opposite signs (or one symbol).
        let mut k: i128 = 0;
        let mut pos = None;
        let mut neg = None;
        let mut linear = true;
        for (c, fs) in &terms {
            match (fs.as_slice(), *c) {
                ([], c) => k = c as i128,
                ([(s, 1)], 1) if pos.is_none() => pos = Some(node(s, &mut nodes)),
                ([(s, 1)], -1) if neg.is_none() => neg = Some(node(s, &mut nodes)),
                _ => linear = false,
            }
        }
        if !linear {
            continue;
        }
        // pos - neg + k <= 0  <=>  pos - neg <= -k: an edge neg -> pos of weight -k.
        let (x, y) = (pos.unwrap_or(0), neg.unwrap_or(0));
        if x == y {
            continue;
        }
        edges.push((y, x, -k));
        if rel == Rel::Eq {
            edges.push((x, y, k));
        }
    }
    if edges.is_empty() {
        return false;
    }
    // Every symbol >= 0: `0 - x <= 0`.
    for i in 1..=nodes.len() {
        edges.push((i, 0, 0));
    }
    let n = nodes.len() + 1;
    let mut dist = vec![0i128; n];
    for _ in 0..n {
        let mut changed = false;
        for &(from, to, w) in &edges {
            if dist[from] + w < dist[to] {
                dist[to] = dist[from] + w;
                changed = true;
            }
        }
        if !changed {
            return false;
        }
    }
    true
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

/// For each atom, the atoms `s == 0` (registered here) of its zero-sensitive symbols: those
/// inside a product of symbols or a `Max`/`Min`/`FloorDiv`/`Mod`, where whether `s` is 0
/// changes what the atom says beyond what intervals see (`b*c == b` is `b == 0 || c == 1`).
fn zero_split_atoms(
    atoms: &mut Vec<BoolExpr>,
    index: &mut HashMap<BoolExpr, (usize, bool)>,
) -> Vec<Vec<usize>> {
    let n = atoms.len();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let syms = zero_sensitive(&atoms[i]);
        let mut ids = Vec::with_capacity(syms.len());
        for s in syms {
            let z = BoolExpr::eq(&Expr::symbol(s.as_str()), &Expr::constant(0));
            if let Node::Lit(j, _) = compile(&z, atoms, index) {
                ids.push(j);
            }
        }
        out.push(ids);
    }
    out.resize(atoms.len(), Vec::new());
    out
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
    let symbols = target.symbols();
    let k = symbols.len();
    let syms: Vec<Symbol> = symbols.iter().map(|n| Symbol::new(n)).collect();
    // Symbols the facts eliminate by an equality (`u` for `u == b*t`) get values last, from
    // the others: the search then meets `u = b*t` as its first candidate.
    let mut order: Vec<usize> = (0..k).collect();
    order.sort_by_key(|&i| facts.substitution(&syms[i]).is_some());
    let step = |s: &Symbol| order.iter().position(|&i| symbols[i] == s.as_str());
    // Each condition is checked as soon as its last symbol (in search order) has a value.
    let mut checks: Vec<Vec<&BoolExpr>> = vec![Vec::new(); k.max(1)];
    for c in lits.iter().chain(domain) {
        let last = c.symbols().iter().filter_map(step).max().unwrap_or(0);
        checks[last].push(c);
    }
    let mut values = vec![0i64; k];
    let mut budget = WITNESS_BUDGET;
    struct Search<'s, T> {
        target: &'s T,
        syms: &'s [Symbol],
        order: &'s [usize],
        checks: &'s [Vec<&'s BoolExpr>],
        facts: &'s Facts,
    }
    fn rec<T: CoverTarget>(
        n: usize,
        s: &Search<'_, T>,
        values: &mut Vec<i64>,
        budget: &mut usize,
    ) -> bool {
        if n == values.len() {
            return s.target.realizable(values);
        }
        let i = s.order[n];
        let b = Bindings::from_pairs(
            s.order[..n]
                .iter()
                .map(|&j| (s.target.symbols()[j].as_str(), values[j])),
        );
        let done: Vec<i64> = s.order[..n].iter().map(|&j| values[j]).collect();
        for v in candidates(i, s.target.hints(), s.syms, s.facts, &done, &b) {
            if *budget == 0 {
                return false;
            }
            *budget -= 1;
            values[i] = v;
            let mut b2 = b.clone();
            b2.insert(s.target.symbols()[i].as_str(), v);
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
        return (ok && target.realizable(&[])).then(Vec::new);
    }
    let search = Search {
        target,
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
fn widen<T: CoverTarget>(target: &T, host: &T::Trace, classes: &[Vec<Guard>]) -> Result<T::Trace> {
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
    let mins: Vec<(Symbol, i64)> = target
        .symbols()
        .iter()
        .map(|n| (Symbol::new(n), 0))
        .collect();
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

    fn lits(v: &[&str]) -> Vec<BoolExpr> {
        v.iter().map(|s| BoolExpr::parse(s).unwrap()).collect()
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
