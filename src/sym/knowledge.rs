//! What is known about the symbols: declared ranges plus the facts recorded guards establish.
//!
//! Static decisions are interval reasoning on canonical forms. A comparison `p REL 0` is
//! split into `p = s*X + k` where `X` is the non-constant part with a positive leading
//! coefficient (`s = ±1`). The interval of `X` is the meet of (a) interval arithmetic over
//! the symbol ranges and (b) any bound a guard established for the same `X`. Guards
//! contribute facts: bounds (`X <= c`, `X >= c`, `X == c`), excluded values (`X != c`, which
//! also tighten a bound when `c` is at an end of the range), substitutions (`a == b + 1`
//! eliminates the greatest symbol occurring linearly with a unit coefficient, here `b`), and, for anything
//! else, the guard itself as a known-true condition.

use super::boolexpr::{BoolExpr, BoolKind, Rel};
use super::expr::{rebuild_func, Atom, Expr, FuncKind, FxMap, FxSet, Symbol};
use super::interval::{expr_interval, Interval, NEG_INF, POS_INF};
use super::num::Coeff;

#[derive(Clone, Default, Debug)]
pub(crate) struct Knowledge {
    /// Declared ranges of the symbols (refined by single-symbol facts).
    pub(crate) ranges: FxMap<Symbol, Interval>,
    /// Bounds on non-constant parts `X` (normalized: positive leading coefficient).
    facts: FxMap<Expr, Interval>,
    /// Values `X` is known not to take.
    excluded: FxMap<Expr, Vec<i128>>,
    /// Symbols eliminated by equality guards.
    subst: FxMap<Symbol, Expr>,
    /// Other conditions known to hold.
    true_facts: FxSet<BoolExpr>,
    /// Set when a fact contradicts the others (an impossible case during case splitting).
    contradictory: bool,
}

/// `p = sign * x + k` with `x` normalized (positive leading coefficient).
pub(crate) fn split(p: &Expr) -> (Expr, i32, Coeff) {
    let k = p.constant_term();
    let x = p.without_constant();
    if x.terms().first().is_some_and(|t| t.coef.signum() < 0) {
        (x.neg(), -1, k)
    } else {
        (x, 1, k)
    }
}

fn bump_ends(iv: &mut Interval, excl: &[i128]) {
    // Tighten both ends past excluded values (the list is tiny).
    loop {
        let mut changed = false;
        if iv.lo != i128::MIN && excl.contains(&iv.lo) {
            iv.lo += 1;
            changed = true;
        }
        if iv.hi != i128::MAX && iv.lo <= iv.hi && excl.contains(&iv.hi) {
            iv.hi -= 1;
            changed = true;
        }
        if !changed {
            break;
        }
    }
}

impl Knowledge {
    pub(crate) fn new(ranges: FxMap<Symbol, Interval>) -> Knowledge {
        Knowledge {
            ranges,
            ..Default::default()
        }
    }

    fn sym_range(&self, s: &Symbol) -> Interval {
        self.ranges.get(s).copied().unwrap_or(Interval::FULL)
    }

    /// The interval of a normalized non-constant part.
    fn x_interval(&self, x: &Expr) -> Interval {
        let mut iv = expr_interval(x, &|s| self.sym_range(s));
        if let Some(f) = self.facts.get(x) {
            iv = iv.meet(f);
        }
        if let Some(ex) = self.excluded.get(x) {
            bump_ends(&mut iv, ex);
        }
        iv
    }

    /// Interval of an arbitrary expression (after substitutions).
    pub(crate) fn interval(&self, e: &Expr) -> Interval {
        let e = self.apply_subst(e);
        let (x, s, k) = split(&e);
        if x.terms().is_empty() {
            let v = k.to_i128_sat();
            return Interval::point(v);
        }
        let iv = self.x_interval(&x);
        let iv = if s < 0 { iv.neg() } else { iv };
        iv.add(&Interval::point(k.to_i128_sat()))
    }

    pub(crate) fn apply_subst(&self, e: &Expr) -> Expr {
        if self.subst.is_empty() {
            return e.clone();
        }
        e.substitute(&|s| self.subst.get(s).cloned())
    }

    pub(crate) fn apply_subst_bool(&self, b: &BoolExpr) -> BoolExpr {
        if self.subst.is_empty() {
            return b.clone();
        }
        b.substitute(&|s| self.subst.get(s).cloned())
    }

    /// Decides `b` from ranges and facts, `None` when unknown.
    pub(crate) fn decide(&self, b: &BoolExpr) -> Option<bool> {
        if let Some(c) = b.as_const() {
            return Some(c);
        }
        let b = self.apply_subst_bool(b);
        self.decide_inner(&b)
    }

    fn decide_inner(&self, b: &BoolExpr) -> Option<bool> {
        if !self.true_facts.is_empty() {
            if self.true_facts.contains(b) {
                return Some(true);
            }
            if self.true_facts.contains(&b.not()) {
                return Some(false);
            }
        }
        match b.kind() {
            BoolKind::Const(c) => Some(*c),
            BoolKind::Cmp(rel, p) => self.decide_cmp(*rel, p),
            BoolKind::And(v) => {
                let mut all = true;
                for x in v {
                    match self.decide_inner(x) {
                        Some(false) => return Some(false),
                        Some(true) => {}
                        None => all = false,
                    }
                }
                all.then_some(true)
            }
            BoolKind::Or(v) => {
                let mut none = true;
                for x in v {
                    match self.decide_inner(x) {
                        Some(true) => return Some(true),
                        Some(false) => {}
                        None => none = false,
                    }
                }
                none.then_some(false)
            }
        }
    }

    fn decide_cmp(&self, rel: Rel, p: &Expr) -> Option<bool> {
        if self.facts.is_empty() && self.excluded.is_empty() {
            // Fast path: pure interval arithmetic over the ranges, no allocation.
            let pv = expr_interval(p, &|s| self.sym_range(s));
            return decide_interval(rel, pv, None);
        }
        let (x, s, k) = split(p);
        let kv = k.as_i64()? as i128;
        let iv = self.x_interval(&x);
        if iv.is_empty() {
            return None; // contradictory facts: decide nothing
        }
        let pv = if s < 0 { iv.neg() } else { iv }.add(&Interval::point(kv));
        // p == 0  <=>  x == -k*s
        let excluded = self
            .excluded
            .get(&x)
            .is_some_and(|ex| ex.contains(&(-kv * s as i128)));
        decide_interval(rel, pv, Some(excluded))
    }
}

/// Decides `p REL 0` from the interval of `p` (and whether `p == 0` is excluded).
fn decide_interval(rel: Rel, pv: Interval, zero_excluded: Option<bool>) -> Option<bool> {
    if pv.is_empty() {
        return None;
    }
    {
        match rel {
            Rel::Le => {
                if pv.hi <= 0 {
                    Some(true)
                } else if pv.lo > 0 {
                    Some(false)
                } else {
                    None
                }
            }
            Rel::Eq | Rel::Ne => {
                let eq = if pv.as_point() == Some(0) {
                    Some(true)
                } else if pv.lo > 0 || pv.hi < 0 || zero_excluded == Some(true) {
                    Some(false)
                } else {
                    None
                };
                if rel == Rel::Eq {
                    eq
                } else {
                    eq.map(|v| !v)
                }
            }
        }
    }
}

impl Knowledge {
    /// Decides `cond` by splitting on its `Max`/`Min` atoms: for `Max(a, b)` one case
    /// assumes `a >= b` (and replaces the atom by `a`), the other `b >= a`. Decided when every
    /// feasible case agrees. At most `depth` nested splits. `Err(())` when the depth ran out
    /// (so a more expensive method may still help), `Ok(None)` when undecided.
    pub(crate) fn decide_by_cases(
        &self,
        cond: &BoolExpr,
        depth: usize,
    ) -> Result<Option<bool>, ()> {
        let Some(atom) = cond.exprs().iter().find_map(|p| p.find_extremum()) else {
            return Ok(self.decide(cond));
        };
        if depth == 0 {
            return Err(());
        }
        let Atom::Func(f) = &atom else {
            return Ok(None);
        };
        let mut answer: Option<bool> = None;
        let mut feasible = 0;
        for (i, chosen) in f.args.iter().enumerate() {
            let mut k = self.clone();
            for (j, other) in f.args.iter().enumerate() {
                if i != j {
                    let c = if f.kind == FuncKind::Max {
                        BoolExpr::ge(chosen, other)
                    } else {
                        BoolExpr::le(chosen, other)
                    };
                    if c.as_const() == Some(false) {
                        k.contradictory = true;
                    }
                    k.assume(&c);
                }
            }
            if k.contradictory {
                continue;
            }
            feasible += 1;
            let case = cond.map_exprs(&|p| k.reduce_atoms(&p.replace_atom(&atom, chosen)));
            let v = match case.as_const() {
                Some(v) => Some(v),
                None => match k.decide(&case) {
                    Some(v) => Some(v),
                    None => k.decide_by_cases(&case, depth - 1)?,
                },
            };
            match (v, answer) {
                (None, _) => return Ok(None),
                (Some(v), None) => answer = Some(v),
                (Some(v), Some(a)) if v != a => return Ok(None),
                _ => {}
            }
        }
        Ok(if feasible > 0 { answer } else { None })
    }

    /// Rewrites `Max`/`Min`/`FloorDiv`/`Mod` atoms that the known intervals decide:
    /// a `Max` argument another one dominates is dropped, `FloorDiv(a, b)` with
    /// `0 <= a < b` is 0 and `Mod(a, b)` is `a`. Cheap (no e-graph); bottom-up.
    pub(crate) fn reduce_atoms(&self, e: &Expr) -> Expr {
        if !e.has_non_polynomial() {
            return e.clone();
        }
        e.map_atoms(&|a| match a {
            Atom::Sym(_) => None,
            Atom::Func(f) => {
                let args: Vec<Expr> = f.args.iter().map(|x| self.reduce_atoms(x)).collect();
                let changed = args.iter().zip(f.args.iter()).any(|(x, y)| x != y);
                match self.reduce_func(f.kind, &args) {
                    Some(r) => Some(r),
                    None if changed => Some(rebuild_func(f.kind, &args)),
                    None => None,
                }
            }
        })
    }

    fn reduce_func(&self, kind: FuncKind, args: &[Expr]) -> Option<Expr> {
        let ivs: Vec<Interval> = args.iter().map(|a| self.interval(a)).collect();
        // `x >= y` everywhere.
        let ge = |x: &Interval, y: &Interval| x.lo != NEG_INF && y.hi != POS_INF && x.lo >= y.hi;
        match kind {
            FuncKind::Max | FuncKind::Min => {
                let mut keep = vec![true; args.len()];
                for j in 0..args.len() {
                    let dominated = (0..args.len()).any(|i| {
                        i != j
                            && keep[i]
                            && if kind == FuncKind::Max {
                                ge(&ivs[i], &ivs[j])
                            } else {
                                ge(&ivs[j], &ivs[i])
                            }
                    });
                    if dominated {
                        keep[j] = false;
                    }
                }
                if keep.iter().all(|k| *k) {
                    return None;
                }
                let kept: Vec<Expr> = args
                    .iter()
                    .zip(&keep)
                    .filter(|(_, k)| **k)
                    .map(|(a, _)| a.clone())
                    .collect();
                Some(Expr::extremum(kind, &kept))
            }
            FuncKind::FloorDiv | FuncKind::Mod => {
                let (a, b) = (ivs[0], ivs[1]);
                if a.lo >= 0 && a.hi != POS_INF && b.lo != NEG_INF && a.hi < b.lo {
                    Some(if kind == FuncKind::FloorDiv {
                        Expr::constant(0)
                    } else {
                        args[0].clone()
                    })
                } else {
                    None
                }
            }
        }
    }

    /// Adds a condition known to hold.
    pub(crate) fn assume(&mut self, b: &BoolExpr) {
        let b = self.apply_subst_bool(b);
        self.assume_inner(&b);
    }

    fn assume_inner(&mut self, b: &BoolExpr) {
        match b.kind() {
            BoolKind::Const(_) => {}
            BoolKind::And(v) => {
                for x in v {
                    self.assume_inner(x);
                }
            }
            BoolKind::Or(_) => {
                self.true_facts.insert(b.clone());
            }
            BoolKind::Cmp(rel, p) => {
                // Bounds, exclusions and substitutions below capture a comparison fully,
                // except for huge constants, which are kept as a plain fact.
                let (x, s, k) = split(p);
                let Some(kv) = k.as_i64() else {
                    self.true_facts.insert(b.clone());
                    return;
                };
                let kv = kv as i128;
                // p = s*x + k
                let bound = match rel {
                    Rel::Le if s > 0 => Some(Interval::new(i128::MIN, -kv)),
                    Rel::Le => Some(Interval::new(kv, i128::MAX)),
                    Rel::Eq => Some(Interval::point(-kv * s as i128)),
                    Rel::Ne => {
                        self.excluded
                            .entry(x.clone())
                            .or_default()
                            .push(-kv * s as i128);
                        if let Some(sym) = x.as_symbol() {
                            let sym = sym.clone();
                            let mut r = self.sym_range(&sym);
                            bump_ends(&mut r, &self.excluded[&x]);
                            self.ranges.insert(sym, r);
                        }
                        None
                    }
                };
                if let Some(bound) = bound {
                    let f = self.facts.entry(x.clone()).or_insert(Interval::FULL);
                    *f = f.meet(&bound);
                    if f.is_empty() {
                        self.contradictory = true;
                    }
                    if let Some(sym) = x.as_symbol() {
                        let sym = sym.clone();
                        let r = self.sym_range(&sym).meet(&bound);
                        if r.is_empty() {
                            self.contradictory = true;
                        }
                        self.ranges.insert(sym, r);
                    }
                }
                if *rel == Rel::Eq {
                    if kv == 0 {
                        self.assume_divisible(&x);
                    }
                    self.add_substitution(p);
                }
            }
        }
    }

    /// Divisibility: for `Mod(a, k) == 0` with a symbol `a` and a constant `k >= 1`, moves
    /// the ends of `a`'s range to multiples of `k` (by `a == k*(a//k) + a%k` the value is a
    /// multiple), so a size `a >= 2` becomes `a >= k` and `a // k >= 1` is then decided.
    fn assume_divisible(&mut self, x: &Expr) {
        let [t] = x.terms() else { return };
        let [(Atom::Func(f), 1)] = t.mono.as_slice() else {
            return;
        };
        if f.kind != FuncKind::Mod || !t.coef.is_one() {
            return;
        }
        let (Some(sym), Some(k)) = (f.args[0].as_symbol(), f.args[1].as_const()) else {
            return;
        };
        if k < 1 {
            return;
        }
        let (sym, k) = (sym.clone(), k as i128);
        let mut r = self.sym_range(&sym);
        if r.lo != i128::MIN {
            r.lo = r.lo.div_euclid(k) * k + if r.lo.rem_euclid(k) == 0 { 0 } else { k };
        }
        if r.hi != i128::MAX {
            r.hi = r.hi.div_euclid(k) * k;
        }
        if r.is_empty() {
            self.contradictory = true;
        }
        self.ranges.insert(sym, r);
    }

    /// For `p == 0`, eliminates the greatest symbol that occurs only linearly with a unit
    /// coefficient.
    fn add_substitution(&mut self, p: &Expr) {
        let mut best: Option<(Symbol, Coeff)> = None;
        let mut all_syms = Vec::new();
        p.collect_symbols(&mut all_syms);
        for t in p.terms() {
            if let [(Atom::Sym(s), 1)] = t.mono.as_slice() {
                if (t.coef.is_one() || t.coef == Coeff::Small(-1))
                    && all_syms.iter().filter(|x| *x == s).count() == 1
                    && best.as_ref().is_none_or(|(b, _)| s > b)
                {
                    best = Some((s.clone(), t.coef.clone()));
                }
            }
        }
        let Some((sym, c)) = best else { return };
        // c*sym + rest == 0  =>  sym = -rest / c = -c * rest (c = ±1)
        let rest = p.sub(&Expr::from_symbol(&sym).scale(&c));
        let value = rest.scale(&c.neg());
        // Keep earlier substitutions consistent.
        for v in self.subst.values_mut() {
            *v = v.substitute(&|s| (*s == sym).then(|| value.clone()));
        }
        // What is known of `sym` (its range, the values it excludes) is from now on asked
        // of `value` (every later question reads `value` for `sym`), so it is assumed of
        // `value`: else `c != 0`, `c != 1` and then `a == c` (`c := a`) forgot that `c`,
        // now `a`, is at least 2.
        let x = Expr::from_symbol(&sym);
        let mut range = self.sym_range(&sym);
        if let Some(f) = self.facts.get(&x) {
            range = range.meet(f);
        }
        let excluded = self.excluded.get(&x).cloned().unwrap_or_default();
        self.subst.insert(sym, value.clone());
        // Only what `value`'s own interval does not say already (usually nothing: two
        // sizes `>= 0`), so that substituting stays cheap.
        let has = self.interval(&value);
        let mut known = Vec::new();
        if range.lo > has.lo {
            if let Ok(lo) = i64::try_from(range.lo) {
                known.push(BoolExpr::cmp0(Rel::Le, Expr::constant(lo).sub(&value)));
            }
        }
        if range.hi < has.hi {
            if let Ok(hi) = i64::try_from(range.hi) {
                known.push(BoolExpr::cmp0(Rel::Le, value.sub(&Expr::constant(hi))));
            }
        }
        for e in excluded {
            if let Ok(e) = i64::try_from(e) {
                known.push(BoolExpr::cmp0(Rel::Ne, value.sub(&Expr::constant(e))));
            }
        }
        for k in known {
            let k = self.apply_subst_bool(&k);
            match k.as_const() {
                Some(false) => self.contradictory = true,
                Some(true) => {}
                None => self.assume_inner(&k),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(ranges: &[(&str, i128)]) -> Knowledge {
        Knowledge::new(
            ranges
                .iter()
                .map(|(n, lo)| (Symbol::new(n), Interval::new(*lo, i128::MAX)))
                .collect(),
        )
    }

    /// A substitution keeps what was known of the symbol it replaces, in any order of the
    /// facts: bounds, excluded values, and a contradiction with them.
    #[test]
    fn substitutions_keep_what_was_known_of_the_replaced_symbol() {
        let p = |s: &str| BoolExpr::parse(s).unwrap();
        let facts = ["c != 0", "c != 1", "a == c"];
        for order in [[0, 1, 2], [2, 0, 1], [0, 2, 1], [1, 2, 0]] {
            let mut kn = k(&[("a", 0), ("c", 0)]);
            for i in order {
                kn.assume(&p(facts[i]));
            }
            assert_eq!(kn.decide(&p("c >= 2")), Some(true), "{order:?}");
            assert_eq!(kn.decide(&p("a >= 2")), Some(true), "{order:?}");
        }
        let mut kn = k(&[("a", 0), ("c", 0)]);
        kn.assume(&p("c >= 5"));
        kn.assume(&p("c <= 9"));
        kn.assume(&p("a == c"));
        assert_eq!(kn.decide(&p("a <= 9")), Some(true));
        assert_eq!(kn.decide(&p("a >= 5")), Some(true));
        kn.assume(&p("a <= 4"));
        assert!(kn.contradictory);
        let mut kn = k(&[("c", 0)]);
        kn.assume(&p("c != 3"));
        kn.assume(&p("c == 3"));
        assert!(kn.contradictory);
    }

    #[test]
    fn decides_from_ranges_and_facts() {
        let mut kn = k(&[("a", 1), ("b", 0)]);
        let p = |s: &str| BoolExpr::parse(s).unwrap();
        assert_eq!(kn.decide(&p("a >= 1")), Some(true));
        assert_eq!(kn.decide(&p("a == 0")), Some(false));
        assert_eq!(kn.decide(&p("a*b >= 0")), Some(true));
        assert_eq!(kn.decide(&p("b >= 1")), None);
        kn.assume(&p("b != 0"));
        assert_eq!(kn.decide(&p("b >= 1")), Some(true));
        kn.assume(&p("a*b >= 7"));
        assert_eq!(kn.decide(&p("a*b != 1")), Some(true));
        assert_eq!(kn.decide(&p("b*a > 6")), Some(true));
        kn.assume(&p("a == b + 1"));
        assert_eq!(kn.decide(&p("a - b == 1")), Some(true));
        assert_eq!(kn.decide(&p("a > b")), Some(true));
    }

    #[test]
    fn divisibility_moves_range_ends_to_multiples() {
        let mut kn = k(&[("e", 2), ("f", 0)]);
        let p = |s: &str| BoolExpr::parse(s).unwrap();
        assert_eq!(kn.decide(&p("FloorDiv(e, 8) >= 1")), None);
        kn.assume(&p("Mod(e, 8) == 0"));
        assert_eq!(kn.decide(&p("e >= 8")), Some(true));
        assert_eq!(kn.decide(&p("FloorDiv(e, 8) >= 1")), Some(true));
        // 0 is a multiple: a size that may be 0 stays at 0.
        kn.assume(&p("Mod(f, 4) == 0"));
        assert_eq!(kn.decide(&p("f >= 1")), None);
    }
}
