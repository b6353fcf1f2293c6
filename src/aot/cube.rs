//! Conjunctions of single-symbol comparisons (`b == 1`, `c >= 2`, `d != 0`) as boxes of
//! integer sets, so that the merge of a cover's classes decides implications between them
//! by interval arithmetic instead of the decision procedure.
//!
//! # Why
//!
//! The classes a cover merges into one plan are mostly such boxes: two plans of the
//! rank-10 `[a, ..., j] + [a, 1, ..., 1]` absorb 511 classes each, each class a
//! conjunction of `x == 1` / `x >= 2` literals. The merge asks, per widening, whether a term with one
//! literal negated lies inside another term; assuming the literals into a [`Facts`] for
//! every such question was most of the merge. On a box the question is a subset test per
//! symbol, and it is exact (over the integers, with every symbol at least its domain
//! minimum), where the decision procedure may answer "unknown". Anything else (two symbols
//! in one literal, a product, a coefficient other than one or minus one) is not a box, and
//! the caller falls back to the decision procedure. The case split asks the same of its
//! regions (is this conjunction of literals empty?), and answers boxes here too.
//!
//! [`Facts`]: crate::sym::Facts

use crate::sym::{BoolExpr, Rel, Symbol};
use smallvec::{smallvec, SmallVec};

/// A set of integers: sorted, disjoint, non-adjacent inclusive ranges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct IntSet(SmallVec<[(i64, i64); 2]>);

impl IntSet {
    /// Every integer.
    pub(crate) fn all() -> IntSet {
        IntSet(smallvec![(i64::MIN, i64::MAX)])
    }

    /// The integers `>= lo`.
    pub(crate) fn at_least(lo: i64) -> IntSet {
        IntSet(smallvec![(lo, i64::MAX)])
    }

    /// The integers not in the set.
    pub(crate) fn complement(&self) -> IntSet {
        let mut out = SmallVec::new();
        let mut next = Some(i64::MIN);
        for &(lo, hi) in &self.0 {
            if let Some(n) = next {
                if lo > n {
                    out.push((n, lo - 1));
                }
            }
            next = hi.checked_add(1);
        }
        if let Some(n) = next {
            out.push((n, i64::MAX));
        }
        IntSet(out)
    }

    /// The integers in both sets.
    pub(crate) fn intersect(&self, other: &IntSet) -> IntSet {
        let (mut i, mut j, mut out) = (0, 0, SmallVec::new());
        while i < self.0.len() && j < other.0.len() {
            let (a, b) = (self.0[i], other.0[j]);
            let (lo, hi) = (a.0.max(b.0), a.1.min(b.1));
            if lo <= hi {
                out.push((lo, hi));
            }
            if a.1 < b.1 {
                i += 1;
            } else {
                j += 1;
            }
        }
        IntSet(out)
    }

    /// Whether every integer `>= min` of `self` is in `other` (no allocation: the merge asks
    /// this hundreds of thousands of times).
    pub(crate) fn subset_of_from(&self, min: i64, other: &IntSet) -> bool {
        let mut j = 0;
        for &(lo, hi) in &self.0 {
            if hi < min {
                continue;
            }
            let lo = lo.max(min);
            // A range lies inside `other` only within one of its ranges (they are disjoint
            // and non-adjacent).
            while j < other.0.len() && other.0[j].1 < lo {
                j += 1;
            }
            match other.0.get(j) {
                Some(&(olo, ohi)) if olo <= lo && hi <= ohi => {}
                _ => return false,
            }
        }
        true
    }

    /// The `n` smallest integers of the set (fewer when it has fewer), for a set with a lower
    /// bound (a set without one starts at `i64::MIN`).
    pub(crate) fn smallest(&self, n: usize) -> SmallVec<[i64; 2]> {
        let mut out = SmallVec::new();
        for &(lo, hi) in &self.0 {
            let mut v = lo;
            while out.len() < n {
                out.push(v);
                if v == hi {
                    break;
                }
                v += 1;
            }
        }
        out
    }

    /// Whether the set has no integer `>= min`.
    fn empty_from(&self, min: i64) -> bool {
        self.0.last().is_none_or(|&(_, hi)| hi < min)
    }

    /// The integers `v` with `coef * v + c REL 0`, for `coef` ±1; `None` when that is not
    /// representable.
    fn of_comparison(rel: Rel, coef: i64, c: i64) -> Option<IntSet> {
        // `coef * v + c == 0` at `v = -c * coef` (coef is ±1).
        let v = c.checked_neg()?.checked_mul(coef)?;
        Some(match (rel, coef) {
            (Rel::Eq, _) => IntSet(smallvec![(v, v)]),
            (Rel::Ne, _) => IntSet(smallvec![(v, v)]).complement(),
            // `v' + c <= 0`: `v' <= -c`.
            (Rel::Le, 1) => IntSet(smallvec![(i64::MIN, v)]),
            // `-v' + c <= 0`: `v' >= c`.
            (Rel::Le, _) => IntSet(smallvec![(v, i64::MAX)]),
        })
    }
}

/// A literal `s REL k` as its symbol and the set of values it allows; `None` for any other
/// condition.
pub(crate) fn single_symbol(lit: &BoolExpr) -> Option<(Symbol, IntSet)> {
    let (rel, p) = lit.as_cmp()?;
    let terms = p.polynomial_terms()?;
    let (mut sym, mut coef, mut c) = (None, 0i64, 0i64);
    for (k, fs) in &terms {
        match fs.as_slice() {
            [] => c = *k,
            [(s, 1)] if sym.is_none() => {
                sym = Some(s.clone());
                coef = *k;
            }
            _ => return None,
        }
    }
    if coef != 1 && coef != -1 {
        return None;
    }
    Some((sym?, IntSet::of_comparison(rel, coef, c)?))
}

/// A literal the region test [`region_is_empty`] reads: a single-symbol comparison, or an
/// equality or disequality of two symbols (`a == e`, `a != e`: the broadcast checks).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Lit {
    /// `s ∈ set`.
    Single(Symbol, IntSet),
    /// `x == y`.
    Eq(Symbol, Symbol),
    /// `x != y`.
    Ne(Symbol, Symbol),
}

/// `lit` as a [`Lit`], or `None` for any other condition.
pub(crate) fn classify(lit: &BoolExpr) -> Option<Lit> {
    if let Some((s, set)) = single_symbol(lit) {
        return Some(Lit::Single(s, set));
    }
    let (rel, p) = lit.as_cmp()?;
    let terms = p.polynomial_terms()?;
    let [(k1, f1), (k2, f2)] = terms.as_slice() else {
        return None;
    };
    let ([(x, 1)], [(y, 1)]) = (f1.as_slice(), f2.as_slice()) else {
        return None;
    };
    if *k1 + *k2 != 0 || k1.abs() != 1 {
        return None;
    }
    match rel {
        Rel::Eq => Some(Lit::Eq(x.clone(), y.clone())),
        Rel::Ne => Some(Lit::Ne(x.clone(), y.clone())),
        Rel::Le => None,
    }
}

/// Whether no binding of the domain `mins` satisfies every literal: `Some` when decided
/// exactly, `None` when it is not (a disequality between two symbols whose sets are both
/// finite, where which values remain is a small colouring problem).
///
/// Equalities join symbols into classes whose sets are intersected; a disequality inside a
/// class, or between two classes pinned to the same value, is a contradiction. Otherwise,
/// when every disequality has a class with an unbounded set at one end, a binding exists:
/// the bounded classes take any value of theirs (no disequality joins two of them), then
/// each unbounded class a distinct value above all others.
pub(crate) fn region_is_empty(lits: &[Lit], mins: &[(Symbol, i64)]) -> Option<bool> {
    let mut names: Vec<&Symbol> = Vec::new();
    for l in lits {
        let (x, y) = match l {
            Lit::Single(s, _) => (s, s),
            Lit::Eq(x, y) | Lit::Ne(x, y) => (x, y),
        };
        for s in [x, y] {
            // Few symbols: a linear search.
            if !names.contains(&s) {
                names.push(s);
            }
        }
    }
    let n = names.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let index = |s: &Symbol| names.iter().position(|t| *t == s).unwrap_or(0);
    for l in lits {
        if let Lit::Eq(x, y) = l {
            let (a, b) = (find(&mut parent, index(x)), find(&mut parent, index(y)));
            parent[a] = b;
        }
    }
    let mut sets: Vec<IntSet> = (0..n)
        .map(|i| IntSet::at_least(minimum(names[i], mins)))
        .collect();
    // Each symbol's domain, and its single-symbol literals, meet in its class's set.
    for i in 0..n {
        let r = find(&mut parent, i);
        if r != i {
            let own = sets[i].clone();
            sets[r] = sets[r].intersect(&own);
        }
    }
    for l in lits {
        if let Lit::Single(s, set) = l {
            let r = find(&mut parent, index(s));
            sets[r] = sets[r].intersect(set);
        }
    }
    if (0..n).any(|i| find(&mut parent, i) == i && sets[i].0.is_empty()) {
        return Some(true);
    }
    let mut undecided = false;
    for l in lits {
        if let Lit::Ne(x, y) = l {
            let (a, b) = (find(&mut parent, index(x)), find(&mut parent, index(y)));
            if a == b {
                return Some(true);
            }
            let point = |s: &IntSet| match s.0.as_slice() {
                [(lo, hi)] if lo == hi => Some(*lo),
                _ => None,
            };
            if let (Some(u), Some(v)) = (point(&sets[a]), point(&sets[b])) {
                if u == v {
                    return Some(true);
                }
            }
            let unbounded = |s: &IntSet| s.0.last().is_some_and(|&(_, hi)| hi == i64::MAX);
            if !unbounded(&sets[a]) && !unbounded(&sets[b]) {
                undecided = true;
            }
        }
    }
    if undecided {
        None
    } else {
        Some(false)
    }
}

/// A conjunction of single-symbol literals: a set per symbol (symbols it does not mention
/// range over their domain), sorted by symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Cube {
    sets: Vec<(Symbol, IntSet)>,
    /// Every set already lies within the domain it was built for ([`Cube::of`]).
    bounded: bool,
}

impl Cube {
    /// No constraint.
    pub(crate) fn everything() -> Cube {
        Cube {
            sets: Vec::new(),
            bounded: false,
        }
    }

    /// The conjunction of single-symbol literals, literal `negate` (if any) negated, within
    /// the domain `mins` (each listed symbol `>=` its minimum).
    pub(crate) fn of(
        lits: &[(Symbol, IntSet)],
        negate: Option<usize>,
        mins: &[(Symbol, i64)],
    ) -> Cube {
        let mut c = Cube::everything();
        for (m, (s, set)) in lits.iter().enumerate() {
            if negate == Some(m) {
                c.and(s, &set.complement());
            } else {
                c.and(s, set);
            }
        }
        for (s, set) in &mut c.sets {
            let min = minimum(s, mins);
            if min > i64::MIN {
                *set = set.intersect(&IntSet(smallvec![(min, i64::MAX)]));
            }
        }
        c.bounded = true;
        c
    }

    /// Adds the constraint `s ∈ set`.
    pub(crate) fn and(&mut self, s: &Symbol, set: &IntSet) {
        match self.sets.binary_search_by(|(t, _)| t.cmp(s)) {
            Ok(i) => self.sets[i].1 = self.sets[i].1.intersect(set),
            Err(i) => {
                self.sets.insert(i, (s.clone(), set.clone()));
                self.bounded = false;
            }
        }
    }

    /// Whether no binding of the domain `mins` (each symbol `>=` its minimum; symbols not
    /// listed are unbounded) satisfies the conjunction.
    pub(crate) fn is_empty(&self, mins: &[(Symbol, i64)]) -> bool {
        if self.bounded {
            // Within the domain already: no bound to look up (the merge asks this of every
            // premise and candidate pair; the lookups were a quarter of a split cover).
            return self.sets.iter().any(|(_, set)| set.0.is_empty());
        }
        self.sets
            .iter()
            .any(|(s, set)| set.empty_from(minimum(s, mins)))
    }

    /// Whether every binding of the domain `mins` that satisfies `self` satisfies `other`.
    pub(crate) fn implies(&self, other: &Cube, mins: &[(Symbol, i64)]) -> bool {
        if self.is_empty(mins) {
            return true;
        }
        let all = IntSet::all();
        other.sets.iter().all(|(s, want)| {
            match self.sets.binary_search_by(|(t, _)| t.cmp(s)) {
                // Within the domain already: no bound to look up.
                Ok(i) if self.bounded => self.sets[i].1.subset_of_from(i64::MIN, want),
                Ok(i) => self.sets[i].1.subset_of_from(minimum(s, mins), want),
                Err(_) => all.subset_of_from(minimum(s, mins), want),
            }
        })
    }
}

/// The smallest value the domain allows a symbol.
fn minimum(s: &Symbol, mins: &[(Symbol, i64)]) -> i64 {
    mins.iter()
        .find(|(t, _)| t == s)
        .map_or(i64::MIN, |(_, m)| *m)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sym::decide_under;

    fn lit(s: &str) -> BoolExpr {
        BoolExpr::parse(s).unwrap()
    }

    #[test]
    fn sets_of_comparisons_match_their_values() {
        for text in [
            "b == 1", "b != 1", "b >= 2", "b <= 3", "b < 3", "b > 0", "2 >= b", "1 - b == 0",
        ] {
            let (s, set) = single_symbol(&lit(text)).unwrap();
            assert_eq!(s.as_str(), "b");
            for v in -3..8 {
                let inside = set.intersect(&IntSet(smallvec![(v, v)])) == IntSet(smallvec![(v, v)]);
                let b = crate::sym::Bindings::from_pairs([("b", v)]);
                assert_eq!(lit(text).eval(&b).unwrap(), inside, "{text} at {v}");
            }
        }
        let (_, ne1) = single_symbol(&lit("b != 1")).unwrap();
        let at0 = ne1.intersect(&IntSet::at_least(0));
        assert_eq!(at0.smallest(3).as_slice(), &[0, 2, 3]);
        let (_, eq2) = single_symbol(&lit("b == 2")).unwrap();
        assert_eq!(eq2.smallest(2).as_slice(), &[2]);
        assert!(eq2.intersect(&IntSet::at_least(3)).smallest(2).is_empty());
        for text in ["a == b", "a*b >= 2", "b*b >= 3", "Max(b, 1) == 1"] {
            assert!(single_symbol(&lit(text)).is_none(), "{text}");
        }
    }

    /// Regions of single-symbol literals, equalities and disequalities (constants at most
    /// 3, so a satisfiable region has a point in `0..=5`): wherever `region_is_empty`
    /// decides, it agrees with the grid; it decides most of them.
    #[test]
    fn region_emptiness_with_equalities_agrees_with_a_grid() {
        let pool = [
            "a == 0", "a == 1", "a >= 2", "a != 1", "b == 1", "b >= 2", "b <= 1", "c == 3",
            "c != 3", "c >= 1", "c <= 2", "a == b", "a != b", "b == c", "b != c", "a != c",
            "a == c",
        ];
        let mins: Vec<(Symbol, i64)> = ["a", "b", "c"].map(|n| (Symbol::new(n), 0)).to_vec();
        let mut rng = 9u64;
        let mut next = |n: usize| {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((rng >> 33) % n as u64) as usize
        };
        let (mut decided, mut empty) = (0, 0);
        for _ in 0..4000 {
            let xs: Vec<BoolExpr> = (0..1 + next(5)).map(|_| lit(pool[next(pool.len())])).collect();
            let ls: Vec<Lit> = xs.iter().map(|x| classify(x).unwrap()).collect();
            let satisfiable = (0..6 * 6 * 6).any(|p| {
                let b = crate::sym::Bindings::from_pairs([
                    ("a", p % 6),
                    ("b", p / 6 % 6),
                    ("c", p / 36),
                ]);
                xs.iter().all(|x| x.eval(&b).unwrap())
            });
            if let Some(e) = region_is_empty(&ls, &mins) {
                assert_eq!(e, !satisfiable, "{xs:?}");
                decided += 1;
                empty += usize::from(e);
            }
        }
        assert!(decided > 3600 && empty > 500, "{decided} decided, {empty} empty");
        assert!(classify(&lit("a <= b")).is_none());
        assert!(classify(&lit("a == 2*b")).is_none());
        assert!(classify(&lit("a == b + 1")).is_none());
    }

    #[test]
    fn implication_between_cubes_agrees_with_the_decision_procedure() {
        let pool = [
            "a == 0", "a == 1", "a >= 2", "a != 1", "a >= 1", "a <= 2", "b == 1", "b >= 2",
            "b != 0", "b <= 1", "c == 3", "c != 3", "c >= 1",
        ];
        let mins: Vec<(Symbol, i64)> = ["a", "b", "c"].map(|n| (Symbol::new(n), 0)).to_vec();
        let mut rng = 5u64;
        let mut next = |n: usize| {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((rng >> 33) % n as u64) as usize
        };
        let cube = |ls: &[BoolExpr]| {
            let mut c = Cube::everything();
            for l in ls {
                let (s, set) = single_symbol(l).unwrap();
                c.and(&s, &set);
            }
            c
        };
        let mut decided = 0;
        for _ in 0..3000 {
            let xs: Vec<BoolExpr> = (0..1 + next(3)).map(|_| lit(pool[next(pool.len())])).collect();
            let ys: Vec<BoolExpr> = (0..1 + next(2)).map(|_| lit(pool[next(pool.len())])).collect();
            let facts: Vec<&BoolExpr> = xs.iter().collect();
            let proof = ys
                .iter()
                .all(|y| decide_under(&mins, &facts, y) == Some(true));
            let by_cube = cube(&xs).implies(&cube(&ys), &mins);
            // The procedure proves only true implications; on boxes the cube is exact, so it
            // proves at least those.
            if proof {
                assert!(by_cube, "{xs:?} => {ys:?}");
                decided += 1;
            }
            // And whatever the cube proves holds at every point of a grid.
            if by_cube {
                for p in 0..6 * 6 * 6 {
                    let b = crate::sym::Bindings::from_pairs([
                        ("a", p % 6),
                        ("b", p / 6 % 6),
                        ("c", p / 36),
                    ]);
                    if xs.iter().all(|x| x.eval(&b).unwrap()) {
                        assert!(ys.iter().all(|y| y.eval(&b).unwrap()), "{xs:?} => {ys:?}");
                    }
                }
            }
        }
        assert!(decided > 100, "only {decided} implications proved");
    }
}
