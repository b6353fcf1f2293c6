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

    /// The integers `v` with `coef * v + c REL 0`, for `coef` ±1; `None` when that is not
    /// representable.
    fn of_comparison(rel: Rel, coef: i64, c: i64) -> Option<IntSet> {
        // `coef * v + c == 0` at `v = -c * coef` (coef is ±1).
        let v = c.checked_neg()?.checked_mul(coef)?;
        // A set's ends at `i64::MIN`/`i64::MAX` stand for "unbounded" ([`Region`] reads
        // them so): a constant near them would be taken for one, so such a literal is not
        // a set (no size or stride guard has one; the decision procedure takes it).
        if v.unsigned_abs() > (i64::MAX / 2) as u64 {
            return None;
        }
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
/// exactly, `None` when it is not (see [`Region`]).
pub(crate) fn region_is_empty(lits: &[Lit], mins: &[(Symbol, i64)]) -> Option<bool> {
    let mut names: SmallVec<[&Symbol; 16]> = SmallVec::new();
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
    let at = |s: &Symbol| names.iter().position(|t| *t == s).unwrap_or(0);
    let indexed = lits.iter().map(|l| match l {
        Lit::Single(s, set) => ILit::Single(at(s), set.clone()),
        Lit::Eq(x, y) => ILit::Eq(at(x), at(y)),
        Lit::Ne(x, y) => ILit::Ne(at(x), at(y)),
    });
    let domain: SmallVec<[i64; 16]> = names.iter().map(|s| minimum(s, mins)).collect();
    Region::new(indexed, &domain).empty
}

/// A [`Lit`] over symbols numbered by their position in a list (a cover's symbols): the
/// form [`Region`] reads, so that its questions compare numbers, not names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ILit {
    /// Symbol `s` in the set.
    Single(usize, IntSet),
    /// `x == y`.
    Eq(usize, usize),
    /// `x != y`.
    Ne(usize, usize),
}

impl ILit {
    /// `lit` with its symbols numbered by their position in `names`; `None` when it is not
    /// a [`Lit`] or names a symbol not listed.
    pub(crate) fn of(lit: &BoolExpr, names: &[Symbol]) -> Option<ILit> {
        let at = |s: &Symbol| names.iter().position(|t| t == s);
        Some(match classify(lit)? {
            Lit::Single(s, set) => ILit::Single(at(&s)?, set),
            Lit::Eq(x, y) => ILit::Eq(at(&x)?, at(&y)?),
            Lit::Ne(x, y) => ILit::Ne(at(&x)?, at(&y)?),
        })
    }

    /// The literal that holds exactly where `self` does not.
    pub(crate) fn negate(&self) -> ILit {
        match self {
            ILit::Single(s, set) => ILit::Single(*s, set.complement()),
            ILit::Eq(x, y) => ILit::Ne(*x, *y),
            ILit::Ne(x, y) => ILit::Eq(*x, *y),
        }
    }
}

/// A conjunction of [`ILit`]s in a normal form: its symbols joined into classes by the
/// equalities, a set of values per class (the domain and the single-symbol literals met),
/// and the disequalities between classes.
///
/// # Why
///
/// The merge of a cover's terms asks, for one premise (a conjunction) and many candidate
/// literals, whether the premise implies each. With the broadcast checks of independent
/// sizes (`e == i`) the terms are not boxes ([`Cube`]), and the decision procedure took a
/// third of a widened 10-symbol cover. Normalized once, the premise answers each literal
/// by a set test and a look at its disequalities.
///
/// # Exactness
///
/// A contradiction (an empty set, a disequality inside a class, two classes pinned to one
/// value and declared different) makes the region empty. Otherwise, when every disequality
/// has a class whose set is unbounded above at one end, a binding exists: the bounded
/// classes take any value of theirs (no disequality joins two of them), then each
/// unbounded class a distinct value above all others. When a disequality joins two bounded
/// classes, which values remain is a small colouring problem, and the region is undecided.
#[derive(Clone, Debug)]
pub(crate) struct Region {
    /// Each symbol's class (the index of its representative, fully compressed).
    class: SmallVec<[usize; 16]>,
    /// The values a class allows, at its representative (other entries unused).
    sets: SmallVec<[IntSet; 16]>,
    /// Disequalities between two classes (representatives).
    ne: SmallVec<[(usize, usize); 4]>,
    /// `Some(true)`: no binding; `Some(false)`: a binding exists; `None`: undecided.
    empty: Option<bool>,
}

impl Region {
    /// The conjunction of `lits` over symbols `0..mins.len()`, symbol `i` at least
    /// `mins[i]` (every literal's symbols must be numbered below `mins.len()`).
    pub(crate) fn new(lits: impl IntoIterator<Item = ILit>, mins: &[i64]) -> Region {
        let lits: SmallVec<[ILit; 24]> = lits.into_iter().collect();
        let n = mins.len();
        let mut parent: SmallVec<[usize; 16]> = (0..n).collect();
        fn find(parent: &mut [usize], mut i: usize) -> usize {
            while parent[i] != i {
                parent[i] = parent[parent[i]];
                i = parent[i];
            }
            i
        }
        for l in &lits {
            if let ILit::Eq(x, y) = *l {
                let (a, b) = (find(&mut parent, x), find(&mut parent, y));
                parent[a] = b;
            }
        }
        let class: SmallVec<[usize; 16]> = (0..n).map(|i| find(&mut parent, i)).collect();
        let mut sets: SmallVec<[IntSet; 16]> = mins.iter().map(|&m| IntSet::at_least(m)).collect();
        // Each symbol's domain, and its single-symbol literals, meet in its class's set.
        for i in 0..n {
            let r = class[i];
            if r != i {
                let own = sets[i].clone();
                sets[r] = sets[r].intersect(&own);
            }
        }
        let mut ne = SmallVec::new();
        for l in lits {
            match l {
                ILit::Single(s, set) => {
                    let r = class[s];
                    sets[r] = sets[r].intersect(&set);
                }
                ILit::Ne(x, y) => ne.push((class[x], class[y])),
                ILit::Eq(..) => {}
            }
        }
        let mut region = Region {
            class,
            sets,
            ne,
            empty: None,
        };
        region.empty = region.decide();
        region
    }

    fn decide(&self) -> Option<bool> {
        let n = self.class.len();
        if (0..n).any(|i| self.class[i] == i && self.sets[i].0.is_empty()) {
            return Some(true);
        }
        any_conflict(self.ne.iter().map(|&(a, b)| {
            if a == b {
                Some(true)
            } else {
                conflict(&self.sets[a], &self.sets[b])
            }
        }))
    }

    /// Whether every binding of the region satisfies `q`: `Some` when decided exactly,
    /// `None` when not (an undecided region, or a narrowing that leaves a disequality
    /// between two bounded classes).
    pub(crate) fn implies(&self, q: &ILit) -> Option<bool> {
        if self.empty == Some(true) {
            return Some(true);
        }
        // `q` is implied exactly when the region with `!q` added is empty. A contradiction
        // found proves that whatever the rest; "a binding remains" needs the region decided
        // (then each of its disequalities has an unbounded end).
        let with_not_q = match *q {
            ILit::Single(s, ref want) => {
                let r = self.class[s];
                let set = &self.sets[r];
                if set.subset_of_from(i64::MIN, want) {
                    return Some(true);
                }
                if self.ne.iter().any(|&(a, b)| a == r || b == r) {
                    self.narrowed(r, r, &set.intersect(&want.complement()))
                } else {
                    Some(false)
                }
            }
            // `x != y` added.
            ILit::Eq(x, y) => {
                let (rx, ry) = (self.class[x], self.class[y]);
                if rx == ry {
                    return Some(true);
                }
                conflict(&self.sets[rx], &self.sets[ry])
            }
            // `x == y` added: their classes joined.
            ILit::Ne(x, y) => {
                let (rx, ry) = (self.class[x], self.class[y]);
                if rx == ry {
                    // `x == y` holds already: implied only by an empty region.
                    Some(false)
                } else {
                    let joined = self.sets[rx].intersect(&self.sets[ry]);
                    let between = |&(a, b): &(usize, usize)| {
                        (a == rx && b == ry) || (a == ry && b == rx)
                    };
                    if joined.0.is_empty() || self.ne.iter().any(between) {
                        return Some(true);
                    }
                    self.narrowed(rx, ry, &joined)
                }
            }
        };
        match (with_not_q, self.empty) {
            (Some(true), _) => Some(true),
            (_, None) => None,
            (answer, _) => answer,
        }
    }

    /// Whether every binding of the region satisfies every literal of `qs` (a conjunction):
    /// `Some(false)` at the first literal decided not implied, `None` when one is undecided.
    pub(crate) fn implies_all(&self, qs: &[ILit]) -> Option<bool> {
        fold_answers(qs.iter().map(|q| self.implies(q)), false)
    }

    /// Whether the region is empty once classes `r` and `r2` (the same class, or two joined)
    /// allow only `set`: only their disequalities can change.
    fn narrowed(&self, r: usize, r2: usize, set: &IntSet) -> Option<bool> {
        let mine = |c: usize| c == r || c == r2;
        any_conflict(self.ne.iter().filter_map(|&(a, b)| {
            let other = match (mine(a), mine(b)) {
                (true, false) => b,
                (false, true) => a,
                // Untouched: it had an unbounded end before (the region was decided); one
                // between `r` and `r2` was answered by the caller.
                _ => return None,
            };
            Some(conflict(set, &self.sets[other]))
        }))
    }
}

/// Folds three-valued answers: `Some(decisive)` at the first one that is, else `None` when
/// one is undecided, else `Some(!decisive)` (with `true`: "any", with `false`: "all").
fn fold_answers(answers: impl Iterator<Item = Option<bool>>, decisive: bool) -> Option<bool> {
    let mut undecided = false;
    for a in answers {
        match a {
            Some(b) if b == decisive => return Some(decisive),
            None => undecided = true,
            Some(_) => {}
        }
    }
    if undecided {
        None
    } else {
        Some(!decisive)
    }
}

/// Folds the answers of [`conflict`]: `Some(true)` at the first contradiction, else `None`
/// when one is undecided, else `Some(false)`.
fn any_conflict(answers: impl Iterator<Item = Option<bool>>) -> Option<bool> {
    fold_answers(answers, true)
}

/// For a disequality between two classes allowing the values `a` and `b`: `Some(true)`
/// when it cannot hold (both pinned to one value), `Some(false)` when it leaves a binding
/// whatever the bounded classes take (one end unbounded above), `None` when that depends on
/// the other classes (both ends bounded).
fn conflict(a: &IntSet, b: &IntSet) -> Option<bool> {
    if a.point().is_some() && a.point() == b.point() {
        Some(true)
    } else if a.unbounded() || b.unbounded() {
        Some(false)
    } else {
        None
    }
}

impl IntSet {
    /// The one value of a single-value set.
    fn point(&self) -> Option<i64> {
        match self.0.as_slice() {
            [(lo, hi)] if lo == hi => Some(*lo),
            _ => None,
        }
    }

    /// Whether the set has no upper bound.
    fn unbounded(&self) -> bool {
        self.0.last().is_some_and(|&(_, hi)| hi == i64::MAX)
    }
}

/// A conjunction of single-symbol literals over a cover's symbols by number (the sets of
/// [`ILit::Single`]s): one set per symbol, each within the domain it was built for.
///
/// # Why dense and numbered
///
/// The merge builds one premise per literal of every term and asks it of every other term.
/// Keyed by symbol name and kept sorted, the premises' insertions and name comparisons
/// were half of the merge of a cover widening one plan hundreds of times (the bias
/// `[a, ..., j] + [a, 1, ..., 1]` with `--widen-size-1`: `Cube::of` 12% of the cover).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Cube {
    sets: SmallVec<[IntSet; 16]>,
}

impl Cube {
    /// The domain itself: symbol `i` at least `domain[i]`.
    pub(crate) fn domain(domain: &[i64]) -> Cube {
        Cube {
            sets: domain.iter().map(|&m| IntSet::at_least(m)).collect(),
        }
    }

    /// `self` and the literals `lits` (symbol number, set), literal `negate` (if any)
    /// negated.
    pub(crate) fn and(&self, lits: &[(usize, IntSet)], negate: Option<usize>) -> Cube {
        let mut c = self.clone();
        for (m, (s, set)) in lits.iter().enumerate() {
            c.sets[*s] = if negate == Some(m) {
                c.sets[*s].intersect(&set.complement())
            } else {
                c.sets[*s].intersect(set)
            };
        }
        c
    }

    /// Whether no binding satisfies the conjunction.
    pub(crate) fn is_empty(&self) -> bool {
        self.sets.iter().any(|set| set.0.is_empty())
    }

    /// Whether every binding of `self` satisfies every literal of `lits`.
    pub(crate) fn implies(&self, lits: &[(usize, IntSet)]) -> bool {
        self.is_empty()
            || lits
                .iter()
                .all(|(s, want)| self.sets[*s].subset_of_from(i64::MIN, want))
    }
}

/// The single-symbol literals of `lits` (symbol number, set), when every one is one.
pub(crate) fn singles(lits: &[ILit]) -> Option<Vec<(usize, IntSet)>> {
    lits.iter()
        .map(|l| match l {
            ILit::Single(s, set) => Some((*s, set.clone())),
            _ => None,
        })
        .collect()
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
        let mut rng = crate::testing::Lcg::new(9);
        let mut next = |n: usize| rng.index(n);
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

    /// Implications from regions of the same literals to one more: wherever
    /// `Region::implies` decides, it agrees with the grid (a region with a point has one in
    /// `0..=5`, and so has the region with the goal negated); it decides most of them, and
    /// at least whatever the decision procedure proves.
    #[test]
    fn region_implication_agrees_with_a_grid() {
        let pool = [
            "a == 0", "a == 1", "a >= 2", "a != 1", "b == 1", "b >= 2", "b <= 1", "c == 3",
            "c != 3", "c >= 1", "c <= 2", "a == b", "a != b", "b == c", "b != c", "a != c",
            "a == c", "d >= 1", "a == d", "d != b",
        ];
        let mins: Vec<(Symbol, i64)> = ["a", "b", "c", "d"].map(|n| (Symbol::new(n), 0)).to_vec();
        let mut rng = crate::testing::Lcg::new(17);
        let mut next = |n: usize| rng.index(n);
        let (mut decided, mut implied, mut proved) = (0, 0, 0);
        for _ in 0..4000 {
            let xs: Vec<BoolExpr> = (0..1 + next(4)).map(|_| lit(pool[next(pool.len())])).collect();
            let q = lit(pool[next(pool.len())]);
            let names: Vec<Symbol> = mins.iter().map(|(s, _)| s.clone()).collect();
            let il = |x: &BoolExpr| ILit::of(x, &names).unwrap();
            let region = Region::new(xs.iter().map(il), &[0; 4]);
            let truth = (0..6 * 6 * 6 * 6).all(|p| {
                let b = crate::sym::Bindings::from_pairs([
                    ("a", p % 6),
                    ("b", p / 6 % 6),
                    ("c", p / 36 % 6),
                    ("d", p / 216),
                ]);
                !xs.iter().all(|x| x.eval(&b).unwrap()) || q.eval(&b).unwrap()
            });
            let answer = region.implies(&il(&q));
            if let Some(a) = answer {
                assert_eq!(a, truth, "{xs:?} => {q:?}");
                decided += 1;
                implied += usize::from(a);
            }
            let facts: Vec<&BoolExpr> = xs.iter().collect();
            if decide_under(&mins, &facts, &q) == Some(true) {
                assert_eq!(answer, Some(true), "{xs:?} => {q:?}: proved, not by the region");
                proved += 1;
            }
        }
        assert!(decided > 3600 && implied > 400, "{decided} decided, {implied} implied");
        assert!(proved > 200, "{proved}");
        // A literal on a symbol the region does not mention.
        let names: Vec<Symbol> = mins.iter().map(|(s, _)| s.clone()).collect();
        let il = |x: &str| ILit::of(&lit(x), &names).unwrap();
        let r = Region::new([il("a == b")], &[0; 4]);
        assert_eq!(r.implies(&il("d >= 0")), Some(true));
        assert_eq!(r.implies(&il("d >= 1")), Some(false));
        assert_eq!(r.implies(&il("b == a")), Some(true));
        assert_eq!(ILit::of(&lit("e == 1"), &names), None);
    }

    #[test]
    fn implication_between_cubes_agrees_with_the_decision_procedure() {
        let pool = [
            "a == 0", "a == 1", "a >= 2", "a != 1", "a >= 1", "a <= 2", "b == 1", "b >= 2",
            "b != 0", "b <= 1", "c == 3", "c != 3", "c >= 1",
        ];
        let mins: Vec<(Symbol, i64)> = ["a", "b", "c"].map(|n| (Symbol::new(n), 0)).to_vec();
        let mut rng = crate::testing::Lcg::new(5);
        let mut next = |n: usize| rng.index(n);
        let names: Vec<Symbol> = mins.iter().map(|(s, _)| s.clone()).collect();
        let singles_of = |ls: &[BoolExpr]| {
            let lits: Vec<ILit> = ls.iter().map(|l| ILit::of(l, &names).unwrap()).collect();
            singles(&lits).unwrap()
        };
        let mut decided = 0;
        for _ in 0..3000 {
            let xs: Vec<BoolExpr> = (0..1 + next(3)).map(|_| lit(pool[next(pool.len())])).collect();
            let ys: Vec<BoolExpr> = (0..1 + next(2)).map(|_| lit(pool[next(pool.len())])).collect();
            let facts: Vec<&BoolExpr> = xs.iter().collect();
            let proof = ys
                .iter()
                .all(|y| decide_under(&mins, &facts, y) == Some(true));
            let by_cube = Cube::domain(&[0; 3])
                .and(&singles_of(&xs), None)
                .implies(&singles_of(&ys));
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
