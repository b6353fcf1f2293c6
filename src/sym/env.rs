//! `ShapeEnv`: the symbols of one trace, their hints and ranges, and the recorded guards.

use super::boolexpr::BoolExpr;
use super::eval::{eval_bool_with, Bindings};
use super::expr::{Expr, FxMap, Symbol};
use super::guards::{Guard, GuardSet};
use super::interval::{Interval, POS_INF};
use super::knowledge::Knowledge;
use super::parse::is_valid_symbol_name;
use super::simplify::{simplify_with, SimplifyConfig, SymbolRanges};
use super::symint::{SymBool, SymInt};
use crate::error::{Error, Result};
use std::cell::RefCell;
use std::sync::{Arc, Mutex, MutexGuard};

/// Limits and defaults of a [`ShapeEnv`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeEnvConfig {
    /// Maximum number of recorded guards mentioning any one symbol ([`Error::Limit`] beyond).
    pub max_guards_per_symbol: usize,
    /// Maximum size ([`Expr::node_count`]) of a condition that may be guarded on.
    pub max_expr_nodes: usize,
    /// Whether to use the egg simplifier as a fallback for static decisions involving
    /// `FloorDiv`/`Mod`/`Max`/`Min`.
    pub use_simplifier: bool,
    /// Limits of each simplifier run for static decisions
    /// (default [`SimplifyConfig::for_decisions`]).
    pub simplifier: SimplifyConfig,
}

impl Default for ShapeEnvConfig {
    fn default() -> Self {
        ShapeEnvConfig {
            max_guards_per_symbol: 64,
            max_expr_nodes: 2000,
            use_simplifier: true,
            simplifier: SimplifyConfig::for_decisions(),
        }
    }
}

/// How one size symbol is created (default: `min` 0, unbounded, no duck sizing, no
/// specialization).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SymbolSpec {
    /// Smallest value the symbol can take (sizes: 0; declare 1 or 2 when known).
    pub min: i64,
    /// Largest value, if bounded.
    pub max: Option<i64>,
    /// Duck sizing: reuse an existing duck symbol with the same hint and range.
    pub duck: bool,
    /// Return a constant instead of a symbol when the hint is 0 or 1.
    pub specialize_zero_one: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct SymbolInfo {
    pub(crate) name: Symbol,
    pub(crate) hint: Option<i64>,
    pub(crate) range: Interval,
}

pub(crate) struct EnvState {
    pub(crate) config: ShapeEnvConfig,
    pub(crate) symbols: Vec<SymbolInfo>,
    pub(crate) by_name: FxMap<Symbol, usize>,
    duck: FxMap<(i64, i64, Option<i64>), usize>,
    pub(crate) guards: Vec<Guard>,
    /// The symbols of each guard (parallel to `guards`).
    guard_syms: Vec<Vec<Symbol>>,
    /// Guards were recorded since the last pruning.
    dirty: bool,
    pub(crate) know: Knowledge,
    /// Symbols `know` has shown to be `>= 1` (for [`EnvState::cancel_positive`]). The
    /// knowledge only grows (ranges of new symbols, assumed facts), so an entry stays true.
    positive: RefCell<Vec<Symbol>>,
    /// The plan conditions recorded so far; `Some` once a caller opted in with
    /// [`ShapeEnv::record_plan_conditions`].
    plan_conditions: Option<Vec<Guard>>,
    /// Depth of [`ShapeEnv::plan_scope`]s entered: decisions inside one are plan decisions.
    plan_depth: u32,
}

/// The symbols of one trace and the guards recorded so far.
///
/// A cheap handle (`Arc<Mutex<..>>`): clones share state, and every [`SymInt`] built from
/// its symbols carries one. `Send + Sync`.
#[derive(Clone)]
pub struct ShapeEnv(pub(crate) Arc<Mutex<EnvState>>);

impl Default for ShapeEnv {
    fn default() -> Self {
        ShapeEnv::new(ShapeEnvConfig::default())
    }
}

impl std::fmt::Debug for ShapeEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let st = self.lock();
        f.debug_struct("ShapeEnv")
            .field("symbols", &st.symbols.len())
            .field("guards", &st.guards.len())
            .finish()
    }
}

impl PartialEq for ShapeEnv {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl ShapeEnv {
    /// An empty environment.
    pub fn new(config: ShapeEnvConfig) -> ShapeEnv {
        ShapeEnv(Arc::new(Mutex::new(EnvState {
            config,
            symbols: Vec::new(),
            by_name: FxMap::default(),
            duck: FxMap::default(),
            guards: Vec::new(),
            guard_syms: Vec::new(),
            dirty: false,
            know: Knowledge::default(),
            positive: RefCell::new(Vec::new()),
            plan_conditions: None,
            plan_depth: 0,
        })))
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, EnvState> {
        // A panic while holding the lock cannot leave the state half-updated in a way that
        // matters more than losing the trace; keep going with the inner value.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The configuration.
    pub fn config(&self) -> ShapeEnvConfig {
        self.lock().config.clone()
    }

    /// One symbol per value, named `{prefix}0`, `{prefix}1`, ..., each hinted by its value
    /// (see [`create_symbol`](Self::create_symbol)). This is how a concrete case (a golden
    /// line, a random layout) is lifted to a symbolic one whose trace must agree with the
    /// concrete answer at the hints.
    pub fn create_symbols(
        &self,
        prefix: &str,
        values: &[i64],
        spec: SymbolSpec,
    ) -> Result<Vec<SymInt>> {
        values
            .iter()
            .enumerate()
            .map(|(d, &v)| self.create_symbol(&format!("{prefix}{d}"), v, spec))
            .collect()
    }

    /// Creates a size symbol with example value `hint` (see [`SymbolSpec`]).
    pub fn create_symbol(&self, name: &str, hint: i64, spec: SymbolSpec) -> Result<SymInt> {
        if spec.max.is_some_and(|m| m < spec.min) {
            return Err(Error::symbol(format!(
                "symbol `{name}`: max {:?} < min {}",
                spec.max, spec.min
            )));
        }
        if hint < spec.min || spec.max.is_some_and(|m| hint > m) {
            return Err(Error::symbol(format!(
                "symbol `{name}`: hint {hint} is outside its declared range [{}, {}]",
                spec.min,
                spec.max.map_or("inf".to_string(), |m| m.to_string())
            )));
        }
        if spec.specialize_zero_one && (hint == 0 || hint == 1) {
            return Ok(SymInt::constant(hint));
        }
        let mut st = self.lock();
        if spec.duck {
            if let Some(&i) = st.duck.get(&(hint, spec.min, spec.max)) {
                let s = st.symbols[i].name.clone();
                drop(st);
                return Ok(SymInt::from_parts(
                    Expr::from_symbol(&s),
                    Some(hint),
                    Some(self.clone()),
                ));
            }
        }
        let idx = self.add_symbol(&mut st, name, Some(hint), spec.min, spec.max)?;
        if spec.duck {
            st.duck.insert((hint, spec.min, spec.max), idx);
        }
        let s = st.symbols[idx].name.clone();
        drop(st);
        Ok(SymInt::from_parts(
            Expr::from_symbol(&s),
            Some(hint),
            Some(self.clone()),
        ))
    }

    /// Creates an unbacked symbol (a data-dependent size with no example value), `>= min`.
    pub fn create_unbacked(&self, name: &str, min: i64) -> Result<SymInt> {
        let mut st = self.lock();
        let idx = self.add_symbol(&mut st, name, None, min, None)?;
        let s = st.symbols[idx].name.clone();
        drop(st);
        Ok(SymInt::from_parts(
            Expr::from_symbol(&s),
            None,
            Some(self.clone()),
        ))
    }

    fn add_symbol(
        &self,
        st: &mut EnvState,
        name: &str,
        hint: Option<i64>,
        min: i64,
        max: Option<i64>,
    ) -> Result<usize> {
        if !is_valid_symbol_name(name) {
            return Err(Error::symbol(format!(
                "invalid symbol name `{name}` (use letters, digits, `_` and `.`, not starting with a digit, not a function name)"
            )));
        }
        let sym = Symbol::new(name);
        if st.by_name.contains_key(&sym) {
            return Err(Error::symbol(format!(
                "symbol `{name}` already exists in this ShapeEnv"
            )));
        }
        let range = Interval::new(min as i128, max.map_or(POS_INF, |m| m as i128));
        let idx = st.symbols.len();
        st.symbols.push(SymbolInfo {
            name: sym.clone(),
            hint,
            range,
        });
        st.by_name.insert(sym.clone(), idx);
        st.know.ranges.insert(sym, range);
        Ok(idx)
    }

    /// The recorded guards (deduplicated and pruned), in recording order.
    pub fn guards(&self) -> Vec<Guard> {
        let mut st = self.lock();
        st.prune();
        st.guards.clone()
    }

    /// The recorded guards without [`ShapeEnv::guards`]' pruning: the same conjunction (a
    /// pruned guard is implied by the kept ones), without the pruning's quadratic cost. For
    /// callers that only ask whether something implies every guard.
    pub fn guards_unpruned(&self) -> Vec<Guard> {
        self.lock().guards.clone()
    }

    /// The recorded guards as a [`GuardSet`].
    pub fn guard_set(&self) -> GuardSet {
        GuardSet::from(self.guards())
    }

    /// Hints of all backed symbols.
    pub fn hints(&self) -> Bindings {
        let st = self.lock();
        Bindings::from_pairs(
            st.symbols
                .iter()
                .filter_map(|s| s.hint.map(|h| (s.name.as_str(), h))),
        )
    }

    /// Names of all symbols, in creation order.
    pub fn symbol_names(&self) -> Vec<String> {
        self.lock()
            .symbols
            .iter()
            .map(|s| s.name.to_string())
            .collect()
    }

    /// The hint of a symbol (`None` when unknown or unbacked).
    pub fn symbol_hint(&self, name: &str) -> Option<i64> {
        let st = self.lock();
        st.by_name.get(name).and_then(|&i| st.symbols[i].hint)
    }

    /// The currently known range of an expression (declared ranges refined by the guards).
    pub fn range_of(&self, e: &Expr) -> Interval {
        self.lock().know.interval(e)
    }

    /// Simplifies `e` for display using everything known (ranges, guard facts) — egg-based.
    pub fn simplify(&self, e: &Expr) -> Expr {
        let (e, ranges, cfg) = {
            let st = self.lock();
            (
                st.know.apply_subst(e),
                st.know.ranges.clone(),
                st.config.simplifier.clone(),
            )
        };
        simplify_with(&e, &SymbolRanges::from_map(ranges), &cfg)
    }

    /// Decides `cond` without recording anything (`None` when it depends on the shapes).
    pub fn statically_known(&self, cond: &BoolExpr) -> Option<bool> {
        let st = self.lock();
        st.decide(cond)
    }

    /// Branches on `cond`: decides it statically if possible, otherwise records a guard
    /// (the condition or its negation, as the hints say) with `reason`.
    pub fn evaluate_guard(&self, cond: &BoolExpr, reason: impl FnOnce() -> String) -> Result<bool> {
        let mut st = self.lock();
        let cond = st.cancel_positive(cond);
        // `decide` would cancel again; cancelling is idempotent, so decide the form directly.
        if let Some(v) = st.decide_form(&cond) {
            return Ok(v);
        }
        if st.plan_depth > 0 && st.plan_conditions.is_some() {
            return st.record_plan_condition(&cond, reason);
        }
        st.record(&cond, reason)
    }

    /// Opts this environment in to *plan conditions*: from now on a decision taken inside a
    /// [`Self::plan_scope`] that is not statically known is decided at the hints and
    /// recorded as a plan condition ([`Self::take_plan_conditions`]), not as a guard, and
    /// never becomes a fact for later decisions.
    ///
    /// # Why
    /// Some decisions of a trace only choose how a kernel iterates (TensorIterator merging
    /// two dimensions whose strides chain, the iteration order over an output that already
    /// exists), never a layout or a value. As guards they would split the bindings a
    /// specialization admits by facts no layout depends on (`n2` even or odd), which
    /// PyTorch's own trace (a `FakeTensorMode` run, which builds no iteration plan) never
    /// records. As plan conditions they only say where the traced plan is the one a fresh
    /// build makes; elsewhere the caller plans the kernel from the concrete layouts.
    pub fn record_plan_conditions(&self) {
        let mut st = self.lock();
        if st.plan_conditions.is_none() {
            st.plan_conditions = Some(Vec::new());
        }
    }

    /// The plan conditions recorded since the last call (each the condition or its
    /// negation, whichever holds at the hints; deduplicated), leaving none.
    pub fn take_plan_conditions(&self) -> Vec<Guard> {
        self.lock()
            .plan_conditions
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Runs `f` with its decisions taken as plan decisions (see
    /// [`Self::record_plan_conditions`]; without that opt-in, decisions are guards as
    /// everywhere else).
    pub fn plan_scope<R>(&self, f: impl FnOnce() -> Result<R>) -> Result<R> {
        self.lock().plan_depth += 1;
        let r = f();
        self.lock().plan_depth -= 1;
        r
    }

    /// Decides `cond` statically, `None` also for backed-undecidable; for unbacked-undecidable
    /// conditions reports whether a hint exists.
    pub(crate) fn decide_or_hint(&self, cond: &BoolExpr) -> (Option<bool>, Option<bool>) {
        let st = self.lock();
        if let Some(v) = st.decide(cond) {
            return (Some(v), Some(v));
        }
        let h = st.hint_of(cond);
        (None, h)
    }
}

/// Nested `Max`/`Min` case splits tried by a static decision (at most 2^3 cases).
const MAX_CASE_SPLITS: usize = 3;

impl EnvState {
    fn hint_lookup(&self) -> impl Fn(&Symbol) -> Option<i64> + '_ {
        move |s: &Symbol| self.by_name.get(s).and_then(|&i| self.symbols[i].hint)
    }

    /// The value of `cond` at the hints (`None` if it involves unbacked symbols or errors).
    pub(crate) fn hint_of(&self, cond: &BoolExpr) -> Option<bool> {
        let look = self.hint_lookup();
        eval_bool_with(cond, &look).ok()
    }

    /// Static decision: canonical form + ranges + guard facts; for conditions with
    /// `Max`/`Min`/`FloorDiv`/`Mod` atoms, then the cheap interval-based atom reduction, and
    /// only then the (cached, limited) egg simplifier.
    pub(crate) fn decide(&self, cond: &BoolExpr) -> Option<bool> {
        let cancelled = self.cancel_positive(cond);
        if cancelled != *cond {
            if let Some(v) = self.decide_form(&cancelled) {
                return Some(v);
            }
        }
        self.decide_form(cond)
    }

    /// `cond` with monomial factors cancelled that are known positive (every symbol `>= 1`
    /// by its range or by recorded facts): `p*q REL p*r` as `q REL r`. Equivalent wherever
    /// the ranges and the recorded guards hold, so a guard recorded in this form is
    /// already minimal (`c < c*w` is recorded as `w >= 2`), and interval reasoning sees
    /// through the product (`h*w < w` is false when `h >= 1`).
    pub(crate) fn cancel_positive(&self, cond: &BoolExpr) -> BoolExpr {
        let worth = cond
            .exprs()
            .iter()
            .any(|p| p.terms().iter().any(|t| !t.mono.is_empty()));
        if !worth {
            return cond.clone();
        }
        let positive = |s: &Symbol| {
            if self.positive.borrow().contains(s) {
                return true;
            }
            let p = self.know.interval(&Expr::from_symbol(s)).lo >= 1;
            if p {
                self.positive.borrow_mut().push(s.clone());
            }
            p
        };
        cond.cancel_positive_monomials(&positive)
    }

    fn decide_form(&self, cond: &BoolExpr) -> Option<bool> {
        if let Some(v) = self.know.decide(cond) {
            return Some(v);
        }
        if !cond.has_non_polynomial() {
            return None;
        }
        let c = self.know.apply_subst_bool(cond);
        let reduced = c.map_exprs(&|p| self.know.reduce_atoms(p));
        if let Some(v) = reduced.as_const() {
            return Some(v);
        }
        if reduced != c {
            if let Some(v) = self.know.decide(&reduced) {
                return Some(v);
            }
        }
        if !reduced.has_non_polynomial() {
            return None;
        }
        // Case splits on Max/Min atoms (cheap, exact); the e-graph only when FloorDiv/Mod
        // atoms are involved or there were too many Max/Min atoms to split on.
        let by_cases = self.know.decide_by_cases(&reduced, MAX_CASE_SPLITS);
        if let Ok(Some(v)) = by_cases {
            return Some(v);
        }
        let div_mod = reduced.exprs().iter().any(|p| p.has_div_mod());
        if !self.config.use_simplifier || (by_cases.is_ok() && !div_mod) {
            return None;
        }
        super::simplify::decide_with_simplifier(&reduced, &self.know, &self.config.simplifier)
    }

    /// `cond` that has no value at the hints (nothing recorded): a data-dependent error
    /// when it involves an unbacked symbol, else the error (or value) of its evaluation.
    fn without_hint(&self, cond: &BoolExpr, reason: impl FnOnce() -> String) -> Result<bool> {
        match eval_bool_with(cond, &self.hint_lookup()) {
            Err(Error::Symbol { .. }) => Err(Error::DataDependent {
                expr: cond.to_string(),
                reason: reason(),
            }),
            r => r,
        }
    }

    /// Records the value of `cond` at the hints as a plan condition (see
    /// [`ShapeEnv::record_plan_conditions`]): no guard, no fact.
    fn record_plan_condition(
        &mut self,
        cond: &BoolExpr,
        reason: impl FnOnce() -> String,
    ) -> Result<bool> {
        let Some(value) = self.hint_of(cond) else {
            return self.without_hint(cond, reason);
        };
        let fact = if value { cond.clone() } else { cond.not() };
        let list = self.plan_conditions.get_or_insert_with(Vec::new);
        if !list.iter().any(|g| g.cond == fact) {
            list.push(Guard {
                cond: fact,
                reason: reason(),
            });
        }
        Ok(value)
    }

    fn record(&mut self, cond: &BoolExpr, reason: impl FnOnce() -> String) -> Result<bool> {
        let nodes = cond.node_count();
        if nodes > self.config.max_expr_nodes {
            return Err(Error::Limit {
                message: format!(
                    "condition `{cond}` has {nodes} nodes (max_expr_nodes = {})",
                    self.config.max_expr_nodes
                ),
            });
        }
        let Some(value) = self.hint_of(cond) else {
            // Either an unbacked symbol or an evaluation error at the hints.
            return self.without_hint(cond, reason);
        };
        let fact = if value { cond.clone() } else { cond.not() };
        if self.guards.iter().any(|g| g.cond == fact) {
            return Ok(value);
        }
        // Per-symbol guard cap (counted after pruning).
        let syms = fact.symbols();
        let count =
            |st: &EnvState, s: &Symbol| st.guard_syms.iter().filter(|g| g.contains(s)).count();
        if syms
            .iter()
            .any(|s| count(self, s) >= self.config.max_guards_per_symbol)
        {
            self.prune();
        }
        for s in &syms {
            let n = count(self, s);
            if n >= self.config.max_guards_per_symbol {
                return Err(Error::Limit {
                    message: format!(
                        "symbol `{s}` already has {n} guards (max_guards_per_symbol = {}); refusing `{fact}`",
                        self.config.max_guards_per_symbol
                    ),
                });
            }
        }
        self.guards.push(Guard {
            cond: fact.clone(),
            reason: reason(),
        });
        self.guard_syms.push(syms);
        self.know.assume(&fact);
        self.dirty = true;
        Ok(value)
    }

    fn base_knowledge(&self) -> Knowledge {
        Knowledge::new(
            self.symbols
                .iter()
                .map(|s| (s.name.clone(), s.range))
                .collect(),
        )
    }

    /// Drops guards that the other guards (with the declared ranges) imply: duplicates up
    /// to canonical form, bounds subsumed by stronger bounds on the same expression
    /// (`s >= 2` drops `s != 0` and `s >= 1`), conjunctions whose parts the others cover.
    /// Guards are checked in recording order, each against the kept earlier ones and all
    /// later ones. Runs lazily (when the guards are read, or a cap is reached), so a trace
    /// pays for it once. The decision knowledge keeps the facts of dropped guards: they are
    /// implied by the kept ones, so using them stays sound.
    #[allow(clippy::needless_range_loop)]
    fn prune(&mut self) {
        if !self.dirty {
            return;
        }
        self.dirty = false;
        let n = self.guards.len();
        if n < 2 {
            return;
        }
        let mut keep = vec![true; n];
        let mut prefix = self.base_knowledge();
        // Guard `i` is decided under the later guards of its symbol component only (guards
        // sharing symbols with it, transitively): the guards hold together at the hints, so
        // they are consistent, and guards over unrelated symbols decide nothing about it.
        // A guard alone in its component shares no symbol with any other: nothing else can
        // imply it.
        let comp = symbol_components(&self.guard_syms);
        for i in 0..n {
            let shares = (0..n).any(|j| j != i && comp[j] == comp[i]);
            if shares {
                let mut k = prefix.clone();
                for (j, g) in self.guards.iter().enumerate().skip(i + 1) {
                    if comp[j] == comp[i] {
                        k.assume(&g.cond);
                    }
                }
                if k.decide(&self.guards[i].cond) == Some(true) {
                    keep[i] = false;
                    continue;
                }
            }
            prefix.assume(&self.guards[i].cond);
        }
        if keep.iter().all(|k| *k) {
            return;
        }
        let mut it = keep.iter();
        self.guards.retain(|_| *it.next().unwrap_or(&true));
        let mut it = keep.iter();
        self.guard_syms.retain(|_| *it.next().unwrap_or(&true));
    }
}

/// For each item, the least index of the items it is connected to by shared symbols
/// (directly or through other items): equal numbers, same component.
pub(crate) fn symbol_components(symbols: &[Vec<Symbol>]) -> Vec<usize> {
    fn root(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    let mut parent: Vec<usize> = (0..symbols.len()).collect();
    let mut owner: FxMap<&Symbol, usize> = FxMap::default();
    for (i, syms) in symbols.iter().enumerate() {
        for s in syms {
            match owner.get(s) {
                Some(&j) => {
                    let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                    parent[a.max(b)] = a.min(b);
                }
                None => {
                    owner.insert(s, i);
                }
            }
        }
    }
    (0..symbols.len()).map(|i| root(&mut parent, i)).collect()
}

// Make sure handles can cross threads.
const _: fn() = || {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<ShapeEnv>();
    assert_send_sync::<SymInt>();
    assert_send_sync::<SymBool>();
    assert_send_sync::<Expr>();
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Bool, Int};

    #[test]
    fn create_symbols_names_by_position_and_checks_each_hint() {
        let env = ShapeEnv::default();
        let s = env
            .create_symbols("x_s", &[3, 0, 7], SymbolSpec::default())
            .unwrap();
        let names: Vec<String> = s.iter().map(|x| x.to_string()).collect();
        assert_eq!(names, ["x_s0", "x_s1", "x_s2"]);
        let hints = env.hints();
        let back: Vec<i64> = s.iter().map(|x| x.eval(&hints).unwrap()).collect();
        assert_eq!(back, [3, 0, 7]);
        // A hint below the declared minimum is an error naming the symbol.
        let e = env
            .create_symbols("y", &[1, -2], SymbolSpec::default())
            .unwrap_err();
        assert!(e.to_string().contains("`y1`"), "{e}");
    }

    fn env_with(names: &[(&str, i64, i64)]) -> (ShapeEnv, Vec<SymInt>) {
        let env = ShapeEnv::new(ShapeEnvConfig::default());
        let syms = names
            .iter()
            .map(|&(n, hint, min)| {
                env.create_symbol(
                    n,
                    hint,
                    SymbolSpec {
                        min,
                        ..Default::default()
                    },
                )
                .unwrap()
            })
            .collect();
        (env, syms)
    }

    #[test]
    fn positive_factors_cancel_before_recording() {
        let (env, s) = env_with(&[("c", 3, 1), ("h", 4, 1), ("w", 5, 1)]);
        let (c, h, w) = (&s[0], &s[1], &s[2]);
        let cw = c.clone() * w.clone();
        assert!(c.sym_lt(&cw).guard(|| "a".into()).unwrap());
        let chw = cw.clone() * h.clone();
        assert!(cw.sym_lt(&chw).guard(|| "b".into()).unwrap());
        let g: Vec<String> = env.guards().iter().map(|g| g.to_string()).collect();
        assert_eq!(g, ["w >= 2", "h >= 2"]);
        // Decided through the factor: `c*w != c` from `w >= 2`, `h*w >= w` always.
        assert_eq!(cw.sym_ne(c).statically_known(), Some(true));
        assert_eq!(
            (h.clone() * w.clone()).sym_ge(w).statically_known(),
            Some(true)
        );
        assert_eq!(env.guards().len(), 2);
    }

    #[test]
    fn factors_positive_by_facts_only_cancel_after_the_fact() {
        // `c` may be 0 by its range: `c < c*w` is not `w >= 2` until `c >= 1` is known.
        let (env, s) = env_with(&[("c", 3, 0), ("w", 5, 0)]);
        let (c, w) = (&s[0], &s[1]);
        let cw = c.clone() * w.clone();
        assert!(c.sym_lt(&cw).guard(|| "a".into()).unwrap());
        assert_eq!(env.guards()[0].to_string(), "c < c*w");
        let (env, s) = env_with(&[("c", 3, 0), ("w", 5, 0)]);
        let (c, w) = (&s[0], &s[1]);
        assert!(c.ge_i(1).guard(|| "pos".into()).unwrap());
        let cw = c.clone() * w.clone();
        assert!(c.sym_lt(&cw).guard(|| "a".into()).unwrap());
        let g: Vec<String> = env.guards().iter().map(|g| g.to_string()).collect();
        assert_eq!(g, ["c >= 1", "w >= 2"]);
    }

    #[test]
    fn max_with_one_is_the_size_when_positive() {
        let (env, s) = env_with(&[("w", 5, 1)]);
        let w = &s[0];
        let m = Int::max(w, &SymInt::from_i64(1));
        assert_eq!(w.sym_eq(&m).statically_known(), Some(true));
        let (env3, s3) = env_with(&[("c", 3, 1), ("w", 5, 1)]);
        let (c, w3) = (&s3[0], &s3[1]);
        let lhs = c.clone() * w3.clone();
        let rhs = c.clone() * Int::max(w3, &SymInt::from_i64(1));
        assert_eq!(lhs.sym_eq(&rhs).statically_known(), Some(true));
        assert!(env3.guards().is_empty());
        let (env2, s) = env_with(&[("w", 5, 0)]);
        let w2 = &s[0];
        assert!(w2.ge_i(1).guard(|| "pos".into()).unwrap());
        let m = Int::max(w2, &SymInt::from_i64(1));
        assert_eq!(w2.sym_eq(&m).statically_known(), Some(true));
        assert!(env.guards().is_empty());
        assert_eq!(env2.guards().len(), 1);
    }
}
