//! Emptiness of a conjunction of comparisons by linear reasoning over the integers.
//!
//! # Why
//!
//! The decision procedure of [`Knowledge`](super::knowledge) decides one comparison at a
//! time from intervals: each normalized non-constant part gets an interval, and a
//! comparison is decided when that interval is on one side of 0. Regions of a cover's case
//! split can be empty for reasons no single interval shows:
//!
//! * several literals together (`k >= 1`, `k <= FloorDiv(k, 2)`: with `q = FloorDiv(k, 2)`,
//!   `2*q <= k <= q` gives `q <= 0`, so `k <= 0`), which needs a linear combination;
//! * a polynomial whose interval over-approximates (`a**2 <= a + 1` with `a >= 2`: the
//!   interval of `a**2 - a` is `[4, inf) - [2, inf)`, unbounded below), which needs the
//!   relation between `a**2` and `a`;
//! * a `Min`/`Max` whose value depends on which argument wins (`Min(s, 2) == 1` says
//!   `s == 1`, as `Min(s, 2) == 2` otherwise).
//!
//! Those regions were left uncovered (the witness search finds nothing in an empty region)
//! and a cover ended incomplete. This module decides them, soundly and incompletely: it
//! answers `true` only when it derived a contradiction, `false` when it did not (which says
//! nothing).
//!
//! # How
//!
//! 1. `Max`/`Min` atoms are split into cases (one per argument that attains the extremum:
//!    `Min(a, b)` is `a` where `a <= b`, `b` where `b <= a`; the cases cover every point).
//!    The region is empty when every case is. Past a budget of cases, an atom is kept as
//!    an opaque value bounded by its arguments (`Min(a, b) <= a`, `<= b`).
//! 2. Each comparison is made linear over *variables*: symbols, `FloorDiv(x, k)` with a
//!    constant `k >= 1` as a variable `q` with `k*q <= x <= k*q + k - 1`, `Mod(x, k)` as
//!    `x - k*q` with `0 <= Mod(x, k) <= k - 1`, and each product of variables (`a*s`,
//!    `a**2`) as a variable of its own.
//! 3. Bounds are propagated over the linear constraints (intervals, a few rounds), then
//!    each product gets linear cuts valid on the bounds of its factors: with every factor
//!    `x_i >= l_i >= 0`, expanding `prod (l_i + y_i)` with `y_i >= 0` gives
//!    `prod >= sum_i (prod_{j != i} l_j) * x_i - (d - 1) * prod l` (`a*s >= 2*a + 2*s - 4`
//!    where `a, s >= 2`); for two factors the four McCormick inequalities of their box; for
//!    a square the integer tangent `a**2 >= (2t + 1)*a - t*(t + 1)` (from
//!    `(a - t)*(a - t - 1) >= 0`, true at every integer `a`).
//! 4. Fourier-Motzkin elimination over those inequalities, equalities with a unit
//!    coefficient substituted first, each derived inequality divided by the gcd of its
//!    coefficients with its bound rounded down (valid at integer points), ends in `0 <= b`
//!    with `b < 0` exactly when it found a contradiction. Disequalities `p != c` are split
//!    (`p <= c - 1` or `p >= c + 1`, a few of them; the rest dropped, which only enlarges
//!    the set).
//!
//! Every step keeps all integer points of the region (a constraint added is valid on all
//! of them, a constraint dropped only enlarges the set), so a contradiction at the end means
//! the region has no integer point. Limits (cases, disequalities split, rows of the
//! elimination) bound the cost; past them the answer is `false`.

use super::boolexpr::{BoolExpr, BoolKind, Rel};
use super::expr::{Atom, Expr, FuncKind, FxMap, Symbol};
use super::interval::{Interval, NEG_INF, POS_INF};

/// At most this many cases of the `Max`/`Min` split (leaves).
const MAX_CASES: usize = 16;
/// At most this many disequalities split into their two sides.
const MAX_SPLIT_DISEQUALITIES: usize = 3;
/// Fourier-Motzkin gives up past this many inequalities.
const MAX_ROWS: usize = 800;
/// Rounds of bound propagation.
const BOUND_ROUNDS: usize = 6;

/// Bounds the propagation may tighten to. Past it a tightening is skipped, keeping the looser
/// bound (always sound): products of tightened bounds grow doubly exponentially round after
/// round (`3*b**2 + 2 <= b` pushes `b` to 29, 2525, 2e7, ...), and once they overflow no
/// product cut can be computed at all, while the cuts at moderate bounds already refute.
const BOUND_CAP: i128 = 1 << 40;

/// `new`, with each finite end beyond [`BOUND_CAP`] replaced by `old`'s.
fn tame(new: Interval, old: Interval) -> Interval {
    let wild = |x: i128| x != NEG_INF && x != POS_INF && x.unsigned_abs() > BOUND_CAP as u128;
    Interval {
        lo: if wild(new.lo) && new.lo != old.lo { old.lo } else { new.lo },
        hi: if wild(new.hi) && new.hi != old.hi { old.hi } else { new.hi },
    }
}

/// True when no integer point satisfies every one of `lits` with every symbol in the
/// interval `range` gives it. `false` means "not shown", not "non-empty". Disjunctions
/// among `lits` are ignored (dropping a constraint only enlarges the set).
pub(crate) fn conjunction_is_empty(lits: &[BoolExpr], range: &dyn Fn(&Symbol) -> Interval) -> bool {
    let mut cmps: Vec<BoolExpr> = Vec::new();
    for l in lits {
        match flatten(l, &mut cmps) {
            Some(false) => return true,
            _ => continue,
        }
    }
    let mut budget = MAX_CASES;
    by_cases(cmps, range, &mut budget)
}

/// Collects the comparisons of a conjunction into `out`; `Some(false)` when one is the
/// constant false.
fn flatten(b: &BoolExpr, out: &mut Vec<BoolExpr>) -> Option<bool> {
    match b.kind() {
        BoolKind::Const(false) => Some(false),
        BoolKind::Const(true) | BoolKind::Or(_) => None,
        BoolKind::Cmp(..) => {
            if !out.contains(b) {
                out.push(b.clone());
            }
            None
        }
        BoolKind::And(v) => {
            for x in v {
                if flatten(x, out) == Some(false) {
                    return Some(false);
                }
            }
            None
        }
    }
}

/// Step 1: splits on the first `Max`/`Min` atom; every case must be empty.
fn by_cases(cmps: Vec<BoolExpr>, range: &dyn Fn(&Symbol) -> Interval, budget: &mut usize) -> bool {
    let atom = cmps.iter().find_map(|c| match c.as_cmp() {
        Some((_, p)) => p.find_extremum(),
        None => None,
    });
    let f = match &atom {
        Some(Atom::Func(f)) => f.clone(),
        _ => return linear_empty(&cmps, range),
    };
    let atom = Atom::Func(f.clone());
    if *budget < f.args.len() {
        return linear_empty(&cmps, range);
    }
    *budget -= f.args.len() - 1;
    f.args.iter().enumerate().all(|(i, chosen)| {
        let mut case: Vec<BoolExpr> = Vec::with_capacity(cmps.len() + f.args.len());
        for (j, other) in f.args.iter().enumerate() {
            if j != i {
                case.push(if f.kind == FuncKind::Max {
                    BoolExpr::ge(chosen, other)
                } else {
                    BoolExpr::le(chosen, other)
                });
            }
        }
        for c in &cmps {
            case.push(c.map_exprs(&|p| p.replace_atom(&atom, chosen)));
        }
        let mut flat = Vec::with_capacity(case.len());
        for c in &case {
            if flatten(c, &mut flat) == Some(false) {
                return true;
            }
        }
        by_cases(flat, range, budget)
    })
}

/// A variable of the linear system.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    Sym(Symbol),
    /// A non-polynomial atom (as an expression of that atom alone).
    Atom(Expr),
    /// `FloorDiv(x, k)` as the quotient of `x` (an expression) by `k`.
    Quotient(Expr, i128),
    /// A product of variables with exponents (sorted).
    Product(Vec<(usize, u32)>),
}

/// `sum a_i * x_i <= b` (sorted by variable, no zero coefficient).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Row {
    a: Vec<(usize, i128)>,
    b: i128,
}

/// A linear form `sum a_i * x_i + c`.
type Form = (Vec<(usize, i128)>, i128);

#[derive(Default)]
struct System {
    keys: Vec<Key>,
    index: FxMap<Key, usize>,
    /// `<=` rows.
    rows: Vec<Row>,
    /// `==` rows.
    eqs: Vec<Row>,
    /// `!=` rows.
    nes: Vec<Row>,
}

fn add_to(form: &mut Vec<(usize, i128)>, v: usize, c: i128) -> Option<()> {
    match form.binary_search_by_key(&v, |(x, _)| *x) {
        Ok(i) => {
            form[i].1 = form[i].1.checked_add(c)?;
            if form[i].1 == 0 {
                form.remove(i);
            }
        }
        Err(i) => {
            if c != 0 {
                form.insert(i, (v, c));
            }
        }
    }
    Some(())
}

impl System {
    fn var(&mut self, key: Key) -> (usize, bool) {
        if let Some(&i) = self.index.get(&key) {
            return (i, false);
        }
        let i = self.keys.len();
        self.keys.push(key.clone());
        self.index.insert(key, i);
        (i, true)
    }

    /// The linear form of `e` (`None` when a coefficient does not fit).
    fn linearize(&mut self, e: &Expr) -> Option<Form> {
        let mut form: Vec<(usize, i128)> = Vec::new();
        let mut c: i128 = 0;
        for t in e.terms() {
            let coef = t.coef.as_i64()? as i128;
            if t.mono.is_empty() {
                c = c.checked_add(coef)?;
                continue;
            }
            let mut factors: Vec<(usize, u32)> = Vec::with_capacity(t.mono.len());
            for (a, exp) in &t.mono {
                let v = self.atom(a)?;
                match factors.iter_mut().find(|(x, _)| *x == v) {
                    Some(f) => f.1 += exp,
                    None => factors.push((v, *exp)),
                }
            }
            factors.sort();
            let v = match factors.as_slice() {
                [(v, 1)] => *v,
                _ => self.var(Key::Product(factors)).0,
            };
            add_to(&mut form, v, coef)?;
        }
        Some((form, c))
    }

    /// The variable of an atom (registering the constraints that define it).
    fn atom(&mut self, a: &Atom) -> Option<usize> {
        let f = match a {
            Atom::Sym(s) => return Some(self.var(Key::Sym(s.clone())).0),
            Atom::Func(f) => f.clone(),
        };
        let key = Key::Atom(Expr::from_atom(a.clone()));
        if let Some(&i) = self.index.get(&key) {
            return Some(i);
        }
        match f.kind {
            FuncKind::FloorDiv | FuncKind::Mod => {
                let k = f.args[1].as_const().filter(|k| *k >= 1).map(i128::from);
                let x = match k {
                    Some(_) => self.linearize(&f.args[0]),
                    None => None,
                };
                let (Some(k), Some((xf, xc))) = (k, x) else {
                    return Some(self.var(key).0);
                };
                let (q, new) = self.var(Key::Quotient(f.args[0].clone(), k));
                if new {
                    // k*q <= x, i.e. k*q - xf <= xc; x <= k*q + k - 1, i.e. xf - k*q <= k - 1 - xc.
                    let mut lo = neg(&xf)?;
                    add_to(&mut lo, q, k)?;
                    self.rows.push(Row { a: lo, b: xc });
                    let mut hi = xf.clone();
                    add_to(&mut hi, q, -k)?;
                    self.rows.push(Row {
                        a: hi,
                        b: k.checked_sub(1)?.checked_sub(xc)?,
                    });
                }
                if f.kind == FuncKind::FloorDiv {
                    self.index.insert(key, q);
                    return Some(q);
                }
                // Mod(x, k) = x - k*q, in [0, k - 1].
                let (r, _) = self.var(key);
                let mut def = neg(&xf)?;
                add_to(&mut def, r, 1)?;
                add_to(&mut def, q, k)?;
                self.eqs.push(Row { a: def, b: xc });
                self.rows.push(Row {
                    a: vec![(r, -1)],
                    b: 0,
                });
                self.rows.push(Row {
                    a: vec![(r, 1)],
                    b: k - 1,
                });
                Some(r)
            }
            FuncKind::Max | FuncKind::Min => {
                // Past the case budget: bounded by its arguments.
                let (v, _) = self.var(key);
                for arg in &f.args {
                    if let Some((af, ac)) = self.linearize(arg) {
                        // Max: arg <= v, i.e. af - v <= -ac. Min: v <= arg, i.e. v - af <= ac.
                        let row = if f.kind == FuncKind::Max {
                            let mut a = af;
                            add_to(&mut a, v, -1)?;
                            Row {
                                a,
                                b: ac.checked_neg()?,
                            }
                        } else {
                            let mut a = neg(&af)?;
                            add_to(&mut a, v, 1)?;
                            Row { a, b: ac }
                        };
                        self.rows.push(row);
                    }
                }
                Some(v)
            }
        }
    }

    /// Adds the comparison `c` (`false` when it does not fit: then it is left out).
    fn add_cmp(&mut self, c: &BoolExpr) -> bool {
        let Some((rel, p)) = c.as_cmp() else {
            return false;
        };
        let Some((form, k)) = self.linearize(p) else {
            return false;
        };
        let Some(b) = k.checked_neg() else {
            return false;
        };
        let row = Row { a: form, b };
        match rel {
            Rel::Le => self.rows.push(row),
            Rel::Eq => self.eqs.push(row),
            Rel::Ne => self.nes.push(row),
        }
        true
    }
}

fn neg(f: &[(usize, i128)]) -> Option<Vec<(usize, i128)>> {
    f.iter()
        .map(|&(v, c)| Some((v, c.checked_neg()?)))
        .collect()
}

/// Steps 2-4 for comparisons without `Max`/`Min` atoms (or with atoms past the budget).
fn linear_empty(cmps: &[BoolExpr], range: &dyn Fn(&Symbol) -> Interval) -> bool {
    let mut sys = System::default();
    for c in cmps {
        sys.add_cmp(c);
    }
    let Some(bounds) = propagate_bounds(&sys, range) else {
        return true;
    };
    // Bounds as rows, then the products' cuts.
    let mut base: Vec<Row> = sys.rows.clone();
    for (v, iv) in bounds.iter().enumerate() {
        if iv.hi != POS_INF {
            base.push(Row {
                a: vec![(v, 1)],
                b: iv.hi,
            });
        }
        if iv.lo != NEG_INF {
            base.push(Row {
                a: vec![(v, -1)],
                b: -iv.lo,
            });
        }
    }
    for (v, key) in sys.keys.iter().enumerate() {
        if let Key::Product(fs) = key {
            product_cuts(v, fs, &bounds, &mut base);
        }
    }
    if sys.nes.iter().any(|r| r.a.is_empty() && r.b == 0) {
        return true; // `0 != 0`
    }
    // Without the disequalities first (one elimination; most empty regions end here).
    if fourier_motzkin(base.clone(), sys.eqs.clone(), sys.keys.len()) {
        return true;
    }
    // Then a few disequalities split into their two sides (every side must be empty):
    // those whose excluded value the bounds of their sum do not already exclude.
    let split: Vec<&Row> = sys
        .nes
        .iter()
        .filter(|r| {
            let mut iv = Interval::point(0);
            for &(x, c) in &r.a {
                iv = iv.add(&Interval::point(c).mul(&bounds[x]));
            }
            !r.a.is_empty() && iv.lo <= r.b && r.b <= iv.hi
        })
        .take(MAX_SPLIT_DISEQUALITIES)
        .collect();
    if split.is_empty() {
        return false;
    }
    (0..1usize << split.len()).all(|mask| {
        let mut rows = base.clone();
        for (i, r) in split.iter().enumerate() {
            // sum != b: sum <= b - 1, or -sum <= -b - 1.
            let side = if mask & (1 << i) == 0 {
                r.b.checked_sub(1).map(|b| Row { a: r.a.clone(), b })
            } else {
                match (neg(&r.a), r.b.checked_neg().and_then(|b| b.checked_sub(1))) {
                    (Some(a), Some(b)) => Some(Row { a, b }),
                    _ => None,
                }
            };
            if let Some(s) = side {
                rows.push(s);
            }
        }
        fourier_motzkin(rows, sys.eqs.clone(), sys.keys.len())
    })
}

/// Bounds of every variable: symbols from `range`, then propagated over the rows (and
/// equalities, both ways) and the products. `None` when some bound is empty.
fn propagate_bounds(sys: &System, range: &dyn Fn(&Symbol) -> Interval) -> Option<Vec<Interval>> {
    let mut b: Vec<Interval> = sys
        .keys
        .iter()
        .map(|k| match k {
            Key::Sym(s) => range(s),
            _ => Interval::FULL,
        })
        .collect();
    let mut all: Vec<Row> = sys.rows.clone();
    for r in &sys.eqs {
        all.push(r.clone());
        if let (Some(a), Some(bb)) = (neg(&r.a), r.b.checked_neg()) {
            all.push(Row { a, b: bb });
        }
    }
    for _ in 0..BOUND_ROUNDS {
        let mut changed = false;
        for (v, k) in sys.keys.iter().enumerate() {
            if let Key::Product(fs) = k {
                let mut iv = Interval::point(1);
                for &(x, e) in fs {
                    iv = iv.mul(&b[x].pow(e));
                }
                let m = tame(b[v].meet(&iv), b[v]);
                if m != b[v] {
                    b[v] = m;
                    changed = true;
                }
            }
        }
        for r in &all {
            // Lower bound of each term; the sum of the others' is the total minus its own.
            let lows: Vec<i128> =
                r.a.iter()
                    .map(|&(x, c)| Interval::point(c).mul(&b[x]).lo)
                    .collect();
            let infinite = lows.iter().filter(|l| **l == NEG_INF).count();
            let finite: Option<i128> = lows
                .iter()
                .filter(|l| **l != NEG_INF)
                .try_fold(0i128, |acc, l| acc.checked_add(*l));
            let Some(finite) = finite else { continue };
            for (i, &(x, c)) in r.a.iter().enumerate() {
                let rest = if lows[i] == NEG_INF {
                    if infinite > 1 {
                        continue;
                    }
                    finite
                } else {
                    if infinite > 0 {
                        continue;
                    }
                    finite - lows[i]
                };
                // c*x <= r.b - rest
                let Some(room) = r.b.checked_sub(rest) else {
                    continue;
                };
                let mut iv = b[x];
                if c > 0 {
                    iv.hi = iv.hi.min(room.div_euclid(c));
                } else {
                    // -d*x <= room with d = -c > 0: x >= ceil(-room / d) = -floor(room / d).
                    let Some(lo) = room.div_euclid(-c).checked_neg() else {
                        continue;
                    };
                    iv.lo = iv.lo.max(lo);
                }
                let iv = tame(iv, b[x]);
                if iv != b[x] {
                    b[x] = iv;
                    changed = true;
                }
                if iv.is_empty() {
                    return None;
                }
            }
        }
        if !changed {
            break;
        }
    }
    if b.iter().any(|iv| iv.is_empty()) {
        return None;
    }
    Some(b)
}

/// Linear cuts of the product `v = prod x_i^e_i` valid on the bounds of its factors.
fn product_cuts(v: usize, fs: &[(usize, u32)], b: &[Interval], out: &mut Vec<Row>) {
    let factors: Vec<usize> = fs
        .iter()
        .flat_map(|&(x, e)| std::iter::repeat_n(x, e as usize))
        .collect();
    let fin = |x: i128| x != NEG_INF && x != POS_INF;
    // Every factor >= l_i >= 0: v >= sum_i P_i * x_i - (d - 1) * prod l, P_i the product of
    // the other lower bounds; as a row: sum_i P_i * x_i - v <= (d - 1) * prod l.
    let lows: Vec<i128> = factors.iter().map(|&x| b[x].lo).collect();
    if lows.iter().all(|&l| fin(l) && l >= 0) {
        let cut = || -> Option<Row> {
            let mut a: Vec<(usize, i128)> = Vec::new();
            let mut prod: i128 = 1;
            for l in &lows {
                prod = prod.checked_mul(*l)?;
            }
            for (i, &x) in factors.iter().enumerate() {
                let mut p: i128 = 1;
                for (j, l) in lows.iter().enumerate() {
                    if j != i {
                        p = p.checked_mul(*l)?;
                    }
                }
                add_to(&mut a, x, p)?;
            }
            add_to(&mut a, v, -1)?;
            let d = factors.len() as i128 - 1;
            Some(Row {
                a,
                b: d.checked_mul(prod)?,
            })
        };
        if let Some(r) = cut() {
            out.push(r);
        }
    }
    let [x, y] = factors[..] else { return };
    let (bx, by) = (b[x], b[y]);
    // McCormick: (x - lx)(y - ly) >= 0, (ux - x)(uy - y) >= 0 below; (x - lx)(uy - y) >= 0,
    // (ux - x)(y - ly) >= 0 above. Each as a row over x, y, v.
    let mut push = |cx: i128, cy: i128, cv: i128, k: Option<i128>| {
        let Some(k) = k else { return };
        let mut a = Vec::new();
        if add_to(&mut a, x, cx).is_none() || add_to(&mut a, y, cy).is_none() {
            return;
        }
        if add_to(&mut a, v, cv).is_none() {
            return;
        }
        out.push(Row { a, b: k });
    };
    let (lx, ux, ly, uy) = (bx.lo, bx.hi, by.lo, by.hi);
    // v >= ly*x + lx*y - lx*ly:  ly*x + lx*y - v <= lx*ly
    if fin(lx) && fin(ly) {
        push(ly, lx, -1, lx.checked_mul(ly));
    }
    // v >= uy*x + ux*y - ux*uy
    if fin(ux) && fin(uy) {
        push(uy, ux, -1, ux.checked_mul(uy));
    }
    // v <= uy*x + lx*y - lx*uy:  v - uy*x - lx*y <= -lx*uy
    if fin(lx) && fin(uy) {
        push(
            -uy,
            -lx,
            1,
            lx.checked_mul(uy).and_then(|p| p.checked_neg()),
        );
    }
    // v <= ly*x + ux*y - ux*ly
    if fin(ux) && fin(ly) {
        push(
            -ly,
            -ux,
            1,
            ux.checked_mul(ly).and_then(|p| p.checked_neg()),
        );
    }
    if x == y {
        // Integer tangents: (x - t)(x - t - 1) >= 0 at every integer x, i.e.
        // v >= (2t + 1)*x - t*(t + 1), at t = lx and t = ux - 1.
        for t in [fin(lx).then_some(lx), fin(ux).then(|| ux - 1)]
            .into_iter()
            .flatten()
        {
            let c = t.checked_mul(2).and_then(|c| c.checked_add(1));
            let k = t.checked_mul(t + 1);
            if let (Some(c), Some(k)) = (c, k) {
                // (2t + 1)*x - v <= t*(t + 1)
                let mut a = Vec::new();
                if add_to(&mut a, x, c).is_some() && add_to(&mut a, v, -1).is_some() {
                    out.push(Row { a, b: k });
                }
            }
        }
    }
}

fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a as i128
}

/// Divides a row by the gcd of its coefficients, rounding the bound down (valid at integer
/// points).
fn tighten(mut r: Row) -> Row {
    let g = r.a.iter().fold(0, |g, &(_, c)| gcd(g, c));
    if g > 1 {
        for t in &mut r.a {
            t.1 /= g;
        }
        r.b = r.b.div_euclid(g);
    }
    r
}

/// Fourier-Motzkin elimination: `true` when the rows and equalities have no integer
/// solution (a derived `0 <= b` with `b < 0`, or an equality whose gcd does not divide its
/// constant). `false` when none was found or the rows grew past [`MAX_ROWS`].
fn fourier_motzkin(mut rows: Vec<Row>, mut eqs: Vec<Row>, nvars: usize) -> bool {
    // Equalities: divisibility, then substitution of a variable with a unit coefficient.
    while let Some(e) = eqs.pop() {
        let g = e.a.iter().fold(0, |g, &(_, c)| gcd(g, c));
        if g == 0 {
            if e.b != 0 {
                return true;
            }
            continue;
        }
        if e.b % g != 0 {
            return true;
        }
        let unit = e.a.iter().find(|(_, c)| c.abs() == 1).copied();
        let Some((x, c)) = unit else {
            rows.push(e.clone());
            if let (Some(a), Some(b)) = (neg(&e.a), e.b.checked_neg()) {
                rows.push(Row { a, b });
            }
            continue;
        };
        // c*x + rest = b  =>  x = c*(b - rest) (c = ±1).
        let subst = |r: &Row| -> Option<Row> {
            let Ok(i) = r.a.binary_search_by_key(&x, |(v, _)| *v) else {
                return Some(r.clone());
            };
            let m = r.a[i].1; // r: m*x + others <= rb; x = c*b - c*rest
            let mut a: Vec<(usize, i128)> = r.a.clone();
            a.remove(i);
            for &(v, cv) in &e.a {
                if v != x {
                    add_to(&mut a, v, m.checked_mul(c)?.checked_mul(cv)?.checked_neg()?)?;
                }
            }
            let b = r.b.checked_sub(m.checked_mul(c)?.checked_mul(e.b)?)?;
            Some(Row { a, b })
        };
        let mut next = Vec::with_capacity(rows.len());
        for r in &rows {
            // A row that overflows is dropped (only enlarges the set).
            if let Some(r) = subst(r) {
                next.push(r);
            }
        }
        rows = next;
        eqs = eqs.iter().filter_map(subst).collect();
    }
    let mut set: FxMap<Vec<(usize, i128)>, i128> = FxMap::default();
    let insert = |set: &mut FxMap<Vec<(usize, i128)>, i128>, r: Row| -> bool {
        let r = tighten(r);
        if r.a.is_empty() {
            return r.b < 0;
        }
        let e = set.entry(r.a).or_insert(r.b);
        *e = (*e).min(r.b);
        false
    };
    for r in rows {
        if insert(&mut set, r) {
            return true;
        }
    }
    let mut alive: Vec<bool> = vec![true; nvars];
    loop {
        // The variable whose elimination makes the fewest new rows.
        let mut best: Option<(usize, usize)> = None;
        for (v, live) in alive.iter_mut().enumerate() {
            if !*live {
                continue;
            }
            let (mut p, mut n) = (0usize, 0usize);
            for a in set.keys() {
                if let Ok(i) = a.binary_search_by_key(&v, |(x, _)| *x) {
                    if a[i].1 > 0 {
                        p += 1;
                    } else {
                        n += 1;
                    }
                }
            }
            if p + n == 0 {
                *live = false;
                continue;
            }
            let cost = p * n;
            if best.is_none_or(|(_, c)| cost < c) {
                best = Some((v, cost));
            }
        }
        let Some((v, _)) = best else {
            return false;
        };
        alive[v] = false;
        let (mut pos, mut negs, mut rest) = (Vec::new(), Vec::new(), FxMap::default());
        for (a, b) in set.drain() {
            match a.binary_search_by_key(&v, |(x, _)| *x) {
                Ok(i) if a[i].1 > 0 => pos.push((a, b, i)),
                Ok(i) => negs.push((a, b, i)),
                Err(_) => {
                    rest.insert(a, b);
                }
            }
        }
        set = rest;
        if pos.len() * negs.len() + set.len() > MAX_ROWS {
            return false;
        }
        for (pa, pb, pi) in &pos {
            for (na, nb, ni) in &negs {
                let (cp, cn) = (pa[*pi].1, -na[*ni].1);
                let combined = || -> Option<Row> {
                    let mut a: Vec<(usize, i128)> = Vec::new();
                    for &(x, c) in pa {
                        add_to(&mut a, x, c.checked_mul(cn)?)?;
                    }
                    for &(x, c) in na {
                        add_to(&mut a, x, c.checked_mul(cp)?)?;
                    }
                    let b = pb.checked_mul(cn)?.checked_add(nb.checked_mul(cp)?)?;
                    Some(Row { a, b })
                };
                if let Some(r) = combined() {
                    if insert(&mut set, r) {
                        return true;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sym::Bindings;

    fn p(s: &str) -> BoolExpr {
        BoolExpr::parse(s).unwrap()
    }

    fn nonneg(_: &Symbol) -> Interval {
        Interval::new(0, POS_INF)
    }

    fn empty(lits: &[&str]) -> bool {
        let lits: Vec<BoolExpr> = lits.iter().map(|l| p(l)).collect();
        conjunction_is_empty(&lits, &nonneg)
    }

    /// The regions covers were left incomplete on (issue 39), each empty, and neighbours
    /// of them that are not.
    #[test]
    fn regions_of_incomplete_covers_are_empty_and_their_neighbours_are_not() {
        for region in [
            &["k >= 1", "k <= FloorDiv(k, 2)"][..],
            &["a**2 <= a + 1", "a >= 2"],
            &["a*s <= a + 1", "a >= 2", "s >= 2"],
            &["c == FloorDiv(c, 2)", "c != 0"],
            &["Min(s, 2) == 1", "Min(d0, s) != 1", "d0 >= 1"],
            &["Mod(t, 2) == 1", "2*FloorDiv(t, 2) == t"],
            &["FloorDiv(t, 2) == FloorDiv(t + 1, 2)", "Mod(t, 2) == 1"],
            &["Max(a, b) <= a - 1"],
            &["a*b*c <= a + b + c", "a >= 2", "b >= 2", "c >= 2"],
            &["2*a == 2*b + 1"],
            &["a + b == 5", "a >= 3", "b >= 3"],
            // Bounds that would run away round after round (see `BOUND_CAP`).
            &["3*b**2 + 2 <= b", "b >= 3"],
        ] {
            assert!(empty(region), "{region:?}");
        }
        for region in [
            &["k >= 0", "k <= FloorDiv(k, 2)"][..],
            &["a**2 <= a + 1", "a >= 1"],
            &["a*s <= a + 1", "a >= 2", "s >= 1"],
            &["c == FloorDiv(c, 2)"],
            &["Min(s, 2) == 1", "Min(d0, s) != 1"],
            &["FloorDiv(t, 2) == FloorDiv(t + 1, 2)"],
            &["Max(a, b) <= a"],
            &["a*b*c <= a + b + c + 2", "a >= 2", "b >= 2", "c >= 2"],
            &["a + b == 5", "a >= 2", "b >= 3"],
            &["a != b", "a != 0", "b != 1", "a + b <= 3"],
            &["3*b**2 <= 4*b", "b >= 1"],
        ] {
            assert!(!empty(region), "{region:?}");
        }
    }

    /// Random conjunctions over 2 symbols (products, squares, `FloorDiv`, `Mod`, `Min`,
    /// `Max`): whenever one is called empty, no point of `0..=12` satisfies it.
    #[test]
    fn regions_called_empty_have_no_point_in_a_box() {
        let atoms = [
            "a",
            "b",
            "a*b",
            "a**2",
            "FloorDiv(a, 2)",
            "FloorDiv(b + 1, 3)",
            "Mod(a, 3)",
            "Min(a, 2)",
            "Max(a, b)",
            "Min(a, b + 1)",
            "2*a - b",
            "1",
        ];
        let rels = ["<=", "==", "!=", ">="];
        let mut seed: u64 = 0x9e3779b97f4a7c15;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let (mut called, mut total) = (0, 0);
        for _ in 0..3000 {
            let n = 1 + next(3);
            let lits: Vec<String> = (0..n)
                .map(|_| {
                    format!(
                        "{} {} {} + {}",
                        atoms[next(atoms.len())],
                        rels[next(rels.len())],
                        atoms[next(atoms.len())],
                        next(3)
                    )
                })
                .collect();
            let refs: Vec<&str> = lits.iter().map(|s| s.as_str()).collect();
            total += 1;
            if !empty(&refs) {
                continue;
            }
            called += 1;
            let parsed: Vec<BoolExpr> = refs.iter().map(|l| p(l)).collect();
            for a in 0..=12 {
                for b in 0..=12 {
                    let v = Bindings::from_pairs([("a", a), ("b", b)]);
                    let holds = parsed.iter().all(|l| l.eval(&v).unwrap_or(false));
                    assert!(!holds, "{lits:?} called empty, holds at a={a}, b={b}");
                }
            }
        }
        // The generator does reach both answers.
        assert!(called > 100 && called < total, "{called} of {total}");
    }
}
