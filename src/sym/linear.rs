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
//!    The region is empty when every case is. A case that bound propagation alone shows
//!    empty is dropped before it counts against the budget of cases; past the budget, an
//!    atom is kept as an opaque value bounded by its arguments (`Min(a, b) <= a`, `<= b`).
//! 2. Each comparison is made linear over *variables*: symbols, `FloorDiv(x, k)` with a
//!    constant `k >= 1` as a variable `q` with `k*q <= x <= k*q + k - 1`, `Mod(x, k)` as
//!    `x - k*q` with `0 <= Mod(x, k) <= k - 1`, and each product of variables (`a*s`,
//!    `a**2`) as a variable of its own.
//! 3. Bounds are propagated over the linear constraints (intervals, a few rounds; back
//!    from a product to its factors where they are all `>= 0`: a product `>= 1` has every
//!    factor `>= 1`, and `x <= hi(x*P) / lo(P)`; a disequality `x != c` at an end of `x`'s
//!    bounds moves that end), then
//!    each product gets linear cuts valid on the bounds of its factors: with every factor
//!    `x_i >= l_i >= 0`, expanding `prod (l_i + y_i)` with `y_i >= 0` gives
//!    `prod >= sum_i (prod_{j != i} l_j) * x_i - (d - 1) * prod l` (`a*s >= 2*a + 2*s - 4`
//!    where `a, s >= 2`); for each way to write it as `x * w`, `x` one factor and `w` a
//!    variable (another factor, or a sub-product that has a variable: `b**3` as
//!    `b * b**2`), the four McCormick inequalities of the box of `x` and `w`; for `x * x`
//!    the integer tangent `x**2 >= (2t + 1)*x - t*(t + 1)` (from
//!    `(x - t)*(x - t - 1) >= 0`, true at every integer `x`); where `x` is fixed to `k`,
//!    the equality `x*w == k*w`.
//! 4. Fourier-Motzkin elimination over those inequalities, equalities with a unit
//!    coefficient substituted first, each derived inequality divided by the gcd of its
//!    coefficients with its bound rounded down (valid at integer points), ends in `0 <= b`
//!    with `b < 0` exactly when it found a contradiction. Disequalities `p != c` are split
//!    (`p <= c - 1` or `p >= c + 1`, a few of them, each side with its bounds propagated
//!    and its products cut again; the rest dropped, which only enlarges the set); one that
//!    the equalities' substitution turns into `0 != 0` is a contradiction.
//! 5. Where that finds nothing and the system has products, a second pass relates them
//!    ([`System::enrich`]): each division by a constant gets its remainder
//!    (`x = k*q + r`), an equality over no product is multiplied by the rest of a product
//!    that has one of its variables as a factor (`b**2 = 2*(b*q) + b*r`; with
//!    `c == 2*q`, `c**2 = 2*(c*q)`: exact at every point), and products of degree >= 3 get
//!    variables for their sub-products (for the `x * w` cuts of step 3: `a*b*q >= 2*(a*b)`
//!    where `q >= 2`). The enriched system is then decided by cases on the values of the
//!    products' factors that take few values (a remainder `Mod(b, 2)` in `{0, 1}`: with
//!    `r` fixed, `b*r` is linear), every case empty for the region to be.
//!
//! Every step keeps all integer points of the region (a constraint added is valid on all
//! of them, a constraint dropped only enlarges the set), so a contradiction at the end means
//! the region has no integer point. Limits (cases, disequalities split, products expanded
//! and sub-products added, rows of the elimination) bound the cost; past them the answer is
//! `false`.

use super::boolexpr::{BoolExpr, BoolKind, Rel};
use super::expr::{Atom, Expr, FuncKind, FxMap, Symbol};
use super::interval::{Interval, NEG_INF, POS_INF};

/// At most this many cases of the `Max`/`Min` split (leaves).
const MAX_CASES: usize = 16;
/// At most this many products multiplied by an equality (see [`System::enrich`]).
const MAX_EXPANSIONS: usize = 12;
/// At most this many of them by one equality.
const MAX_EXPANSIONS_PER_EQUALITY: usize = 4;
/// At most this many sub-product variables added.
const MAX_SUBPRODUCTS: usize = 16;
/// At most this many cases of the split on the values of products' factors.
const MAX_FACTOR_CASES: i128 = 8;
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
    // Crossing bounds and divisibility are asked at each leaf of the case split (`leaf`);
    // here the bounds only pick the symbols to enumerate.
    let Some(bounds) = symbol_bounds(&cmps, range) else {
        return true;
    };
    if small_domain(&cmps, &bounds, range) == Some(true) {
        return true;
    }
    let mut budget = MAX_CASES;
    by_cases(cmps, range, &mut budget)
}

/// A region without `Max`/`Min` atoms to split on (or past the budget of cases): the cheap
/// rules first ([`quick_refutes`]), then the linear reasoning.
fn leaf(cmps: &[BoolExpr], range: &dyn Fn(&Symbol) -> Interval) -> bool {
    quick_refutes(cmps, range) || linear_empty(cmps, range)
}

/// At most this many points of the symbols with small bounded ranges are enumerated.
const MAX_SMALL_DOMAIN: i128 = 32;

/// `p` as `c*s + k` (one symbol to the first power, `i64` coefficients).
fn single_symbol(p: &Expr) -> Option<(Symbol, i64, i64)> {
    let k = p.constant_term().as_i64()?;
    let mut vars = p.terms().iter().filter(|t| !t.mono.is_empty());
    let t = vars.next()?;
    if vars.next().is_some() {
        return None;
    }
    match t.mono.as_slice() {
        [(Atom::Sym(s), 1)] => Some((s.clone(), t.coef.as_i64()?, k)),
        _ => None,
    }
}

/// Each symbol's bounds from `range` and the comparisons on that symbol alone
/// (`c*s + k <= 0`, `c*s + k == 0`, and `c*s + k != 0` at an end); `None` when some
/// symbol's bounds cross (the region is empty). Sound: every point of the region satisfies
/// each comparison used.
fn symbol_bounds(
    cmps: &[BoolExpr],
    range: &dyn Fn(&Symbol) -> Interval,
) -> Option<Vec<(Symbol, Interval)>> {
    let mut out: Vec<(Symbol, Interval)> = Vec::new();
    let at = |s: &Symbol, out: &mut Vec<(Symbol, Interval)>| -> usize {
        out.iter().position(|(x, _)| x == s).unwrap_or_else(|| {
            out.push((s.clone(), range(s)));
            out.len() - 1
        })
    };
    for c in cmps {
        for s in c.symbols() {
            at(&s, &mut out);
        }
        let Some((rel, p)) = c.as_cmp() else { continue };
        let Some((s, c, k)) = single_symbol(p) else { continue };
        let (c, k) = (c as i128, k as i128);
        let i = at(&s, &mut out);
        let b = &mut out[i].1;
        match rel {
            // c*s <= -k
            Rel::Le if c > 0 => b.hi = b.hi.min((-k).div_euclid(c)),
            Rel::Le if c < 0 => b.lo = b.lo.max(-((-k).div_euclid(-c))),
            Rel::Eq if c != 0 => {
                if (-k) % c != 0 {
                    return None;
                }
                b.lo = b.lo.max(-k / c);
                b.hi = b.hi.min(-k / c);
            }
            _ => {}
        }
        if b.lo > b.hi {
            return None;
        }
    }
    // A disequality `s != v` at an end of `s`'s bounds moves that end (a few rounds: one
    // move can bring another disequality to the end).
    for _ in 0..4 {
        let mut moved = false;
        for c in cmps {
            let Some((Rel::Ne, p)) = c.as_cmp() else { continue };
            let Some((s, c, k)) = single_symbol(p) else { continue };
            let (c, k) = (c as i128, k as i128);
            if c == 0 || (-k) % c != 0 {
                continue;
            }
            let v = -k / c;
            let Some((_, b)) = out.iter_mut().find(|(x, _)| *x == s) else { continue };
            if b.lo == v {
                b.lo += 1;
                moved = true;
            } else if b.hi == v {
                b.hi -= 1;
                moved = true;
            }
            if b.lo > b.hi {
                return None;
            }
        }
        if !moved {
            break;
        }
    }
    Some(out)
}

/// The cheap rules on one case: crossing single-symbol bounds, or an equality no value of a
/// shared factor divides.
fn quick_refutes(cmps: &[BoolExpr], range: &dyn Fn(&Symbol) -> Interval) -> bool {
    match symbol_bounds(cmps, range) {
        None => true,
        Some(bounds) => divisibility_refutes(cmps, &bounds),
    }
}

/// An equality `s*Q + k == 0` (every non-constant term has the symbol `s` as a factor, so
/// the rest `Q` is an integer) says `s` divides `k`: with `k != 0` that needs
/// `|k| >= |s|`, impossible when `s >= lo > |k|` (`a*c*(b - 2)*q == 1` with `a >= 2`).
fn divisibility_refutes(cmps: &[BoolExpr], bounds: &[(Symbol, Interval)]) -> bool {
    cmps.iter().any(|c| {
        let Some((Rel::Eq, p)) = c.as_cmp() else {
            return false;
        };
        let Some(k) = p.constant_term().as_i64() else {
            return false;
        };
        let mut vars = p.terms().iter().filter(|t| !t.mono.is_empty()).peekable();
        if k == 0 || vars.peek().is_none() {
            return false;
        }
        let vars: Vec<_> = vars.collect();
        bounds.iter().any(|(s, b)| {
            b.lo > (k as i128).abs()
                && vars.iter().all(|t| {
                    t.mono
                        .iter()
                        .any(|(a, e)| *e >= 1 && matches!(a, Atom::Sym(x) if x == s))
                })
        })
    })
}

/// Enumerates the symbols whose bounds hold few values (at most [`MAX_SMALL_DOMAIN`]
/// points together): `Some(true)` when every point makes the region empty (a comparison
/// false once they are substituted, or the rest shown empty), `Some(false)` when a point
/// leaves a region not shown empty, `None` when no symbol is small. Sound: the points
/// cover every value the bounds allow, and the bounds hold on the whole region.
fn small_domain(
    cmps: &[BoolExpr],
    bounds: &[(Symbol, Interval)],
    range: &dyn Fn(&Symbol) -> Interval,
) -> Option<bool> {
    let mut small: Vec<(Symbol, i128, i128)> = Vec::new();
    let mut points: i128 = 1;
    for (s, b) in bounds {
        if b.lo > NEG_INF && b.hi < POS_INF && b.hi - b.lo < MAX_SMALL_DOMAIN {
            let n = b.hi - b.lo + 1;
            if points * n <= MAX_SMALL_DOMAIN {
                points *= n;
                small.push((s.clone(), b.lo, b.hi));
            }
        }
    }
    if small.is_empty() {
        return None;
    }
    let mut value: Vec<i128> = small.iter().map(|(_, lo, _)| *lo).collect();
    loop {
        let subst = |x: &Symbol| -> Option<Expr> {
            let i = small.iter().position(|(s, _, _)| s == x)?;
            i64::try_from(value[i]).ok().map(Expr::constant)
        };
        let mut rest = Vec::new();
        let mut empty = false;
        for c in cmps {
            let d = c.substitute(&subst);
            match d.as_const() {
                Some(false) => {
                    empty = true;
                    break;
                }
                Some(true) => {}
                None => rest.push(d),
            }
        }
        if !empty {
            let mut budget = MAX_CASES;
            if rest.is_empty() || !by_cases(rest, range, &mut budget) {
                return Some(false);
            }
        }
        // Next point (odometer).
        let mut i = 0;
        loop {
            if i == small.len() {
                return Some(true);
            }
            if value[i] < small[i].2 {
                value[i] += 1;
                break;
            }
            value[i] = small[i].1;
            i += 1;
        }
    }
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

/// Step 1: splits on the first `Max`/`Min` atom; every case must be empty. Cases that bound
/// propagation alone shows empty (a cheap check, the atoms left opaque) are dropped before
/// they count against the budget, so that it goes to the cases that need the elimination.
fn by_cases(cmps: Vec<BoolExpr>, range: &dyn Fn(&Symbol) -> Interval, budget: &mut usize) -> bool {
    let atom = cmps.iter().find_map(|c| match c.as_cmp() {
        Some((_, p)) => p.find_extremum(),
        None => None,
    });
    let f = match &atom {
        Some(Atom::Func(f)) => f.clone(),
        _ => return leaf(&cmps, range),
    };
    let atom = Atom::Func(f.clone());
    let mut live: Vec<Vec<BoolExpr>> = Vec::with_capacity(f.args.len());
    for (i, chosen) in f.args.iter().enumerate() {
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
        if case.iter().any(|c| flatten(c, &mut flat) == Some(false)) {
            continue; // a literal false: an empty case
        }
        if !bounds_empty(&flat, range) {
            live.push(flat);
        }
    }
    if live.is_empty() {
        return true;
    }
    if *budget < live.len() {
        return leaf(&cmps, range);
    }
    *budget -= live.len() - 1;
    live.into_iter().all(|case| by_cases(case, range, budget))
}

/// True when bound propagation over `cmps` (without cuts or elimination) empties a bound.
fn bounds_empty(cmps: &[BoolExpr], range: &dyn Fn(&Symbol) -> Interval) -> bool {
    let mut sys = System::default();
    for c in cmps {
        sys.add_cmp(c);
    }
    propagate_bounds(&sys, range).is_none()
}

/// A variable of the linear system.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    Sym(Symbol),
    /// A non-polynomial atom (as an expression of that atom alone).
    Atom(Expr),
    /// `FloorDiv(x, k)` as the quotient of `x` (an expression) by `k`.
    Quotient(Expr, i128),
    /// `Mod(x, k)`: the remainder `x - k*FloorDiv(x, k)`.
    Remainder(Expr, i128),
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

/// A division by a constant: `q = FloorDiv(x, k)` with `x` linear (`form`).
#[derive(Clone, Debug)]
struct Division {
    x: Expr,
    form: Form,
    k: i128,
    q: usize,
}

#[derive(Default, Clone)]
struct System {
    keys: Vec<Key>,
    index: FxMap<Key, usize>,
    /// `<=` rows.
    rows: Vec<Row>,
    /// `==` rows.
    eqs: Vec<Row>,
    /// `!=` rows.
    nes: Vec<Row>,
    /// The divisions by constants (for [`System::enrich`]).
    divisions: Vec<Division>,
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
                    self.divisions.push(Division {
                        x: f.args[0].clone(),
                        form: (xf.clone(), xc),
                        k,
                        q,
                    });
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
                let r = self.remainder(&f.args[0], k, q, (&xf, xc))?;
                self.index.insert(key, r);
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

    /// The variable of `Mod(x, k)` (`x` of linear form `xf + xc`, `q` its quotient's
    /// variable): `r = x - k*q`, in `[0, k - 1]`.
    fn remainder(
        &mut self,
        x: &Expr,
        k: i128,
        q: usize,
        (xf, xc): (&[(usize, i128)], i128),
    ) -> Option<usize> {
        let (r, new) = self.var(Key::Remainder(x.clone(), k));
        if new {
            let mut def = neg(xf)?;
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
        }
        Some(r)
    }

    /// The variable of the product `fs` (sorted factors with exponents): the factor itself
    /// for a single one to the first power.
    fn product(&mut self, fs: Vec<(usize, u32)>) -> usize {
        match fs[..] {
            [(v, 1)] => v,
            _ => self.var(Key::Product(fs)).0,
        }
    }

    /// The factors of variable `v`: its own if a product, else `v` itself.
    fn factors(&self, v: usize) -> Vec<(usize, u32)> {
        match &self.keys[v] {
            Key::Product(fs) => fs.clone(),
            _ => vec![(v, 1)],
        }
    }

    /// Step 5 (see the module doc): relates products to each other, for the cuts of
    /// [`product_cuts`] between a product and its sub-products. `true` when it added a
    /// variable or a constraint.
    ///
    /// * Every division by a constant gets its remainder's variable, `r = x - k*q` (so
    ///   `x = k*q + r` is an equality).
    /// * A product `v = x * R` with a factor `x` that an equality `sum a_i*y_i == b` has
    ///   gets that equality multiplied by `R`: `sum a_i*(y_i*R) == b*R` (true at every
    ///   integer point where the equality is, whatever `R`), each `y_i*R` the variable of
    ///   that product (`x*R` is `v`). With `q = FloorDiv(b, 2)`, `r = Mod(b, 2)`,
    ///   `b**2` is `2*(b*q) + b*r`; with `c == 2*q`, `c**2` is `2*(c*q)`. At most
    ///   [`MAX_EXPANSIONS`] of them.
    /// * Every product of degree >= 3 gets the variable of each sub-product missing one
    ///   factor (`a*b*q` gets `b*q`, `a*q` and `a*b`), recursively, up to
    ///   [`MAX_SUBPRODUCTS`] new ones; then each product is the product of such a variable
    ///   and a single factor, and the McCormick cuts of that pair apply.
    fn enrich(&mut self, all: bool) -> bool {
        for d in self.divisions.clone() {
            self.remainder(&d.x, d.k, d.q, (&d.form.0, d.form.1));
        }
        let products: Vec<Vec<(usize, u32)>> = self
            .keys
            .iter()
            .filter_map(|k| match k {
                Key::Product(fs) => Some(fs.clone()),
                _ => None,
            })
            .collect();
        // Linear equalities (over no product), those with a remainder (the divisions')
        // first, then the shortest.
        let mut eqs: Vec<(bool, Row)> = self
            .eqs
            .iter()
            .filter(|e| {
                e.a.iter()
                    .all(|&(y, _)| !matches!(self.keys[y], Key::Product(_)))
            })
            .map(|e| {
                let rem =
                    e.a.iter()
                        .any(|&(y, _)| matches!(self.keys[y], Key::Remainder(..)));
                (rem, e.clone())
            })
            .filter(|(rem, _)| all || *rem)
            .collect();
        eqs.sort_by_key(|(rem, e)| (!rem, e.a.len()));
        let mut expansions = 0;
        let mut others = 0;
        'eqs: for (rem, e) in &eqs {
            let mut here = 0;
            for fs in &products {
                // The factor to substitute: for a division's equality its dividend (not
                // the quotient or remainder, which it defines).
                let Some(&(x, _)) = fs.iter().find(|&&(x, _)| {
                    e.a.iter().any(|&(y, _)| y == x)
                        && !(*rem
                            && matches!(self.keys[x], Key::Quotient(..) | Key::Remainder(..)))
                }) else {
                    continue;
                };
                if expansions == MAX_EXPANSIONS {
                    break 'eqs;
                }
                if here == MAX_EXPANSIONS_PER_EQUALITY {
                    break;
                }
                here += 1;
                expansions += 1;
                others += usize::from(!rem);
                let rest = without_one(fs, x);
                let mut row = || -> Option<Row> {
                    let mut a = Vec::new();
                    for &(y, c) in &e.a {
                        let p = self.product(times(&self.factors(y), &rest));
                        add_to(&mut a, p, c)?;
                    }
                    let rv = self.product(rest.clone());
                    add_to(&mut a, rv, e.b.checked_neg()?)?;
                    Some(Row { a, b: 0 })
                };
                if let Some(row) = row() {
                    self.eqs.push(row);
                }
            }
        }
        // Sub-products, breadth first.
        let mut queue: std::collections::VecDeque<Vec<(usize, u32)>> = self
            .keys
            .iter()
            .filter_map(|k| match k {
                Key::Product(fs) => Some(fs.clone()),
                _ => None,
            })
            .collect();
        let mut added = 0;
        while let Some(fs) = queue.pop_front() {
            if degree(&fs) < 3 {
                continue;
            }
            for &(x, _) in &fs {
                let rest = without_one(&fs, x);
                if self.index.contains_key(&Key::Product(rest.clone())) {
                    continue;
                }
                if added == MAX_SUBPRODUCTS {
                    queue.clear();
                    break;
                }
                added += 1;
                self.var(Key::Product(rest.clone()));
                queue.push_back(rest);
            }
        }
        if all {
            others > 0
        } else {
            expansions > 0 || added > 0
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

/// The total degree of a product.
fn degree(fs: &[(usize, u32)]) -> u32 {
    fs.iter().map(|(_, e)| e).sum()
}

/// The product `fs` with one factor `x` less (`x` must be a factor).
fn without_one(fs: &[(usize, u32)], x: usize) -> Vec<(usize, u32)> {
    fs.iter()
        .filter_map(|&(y, e)| match (y == x, e) {
            (true, 1) => None,
            (true, e) => Some((y, e - 1)),
            (false, e) => Some((y, e)),
        })
        .collect()
}

/// The product of two products (sorted factors).
fn times(fs: &[(usize, u32)], gs: &[(usize, u32)]) -> Vec<(usize, u32)> {
    let mut out = fs.to_vec();
    for &(x, e) in gs {
        match out.iter_mut().find(|(y, _)| *y == x) {
            Some(f) => f.1 += e,
            None => out.push((x, e)),
        }
    }
    out.sort();
    out
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
    if system_empty(&sys, range) {
        return true;
    }
    // Then with products related to each other, by cases on the factors that take few
    // values (a second pass only where that adds something, so that the plain system's
    // elimination is never crowded out).
    // First with the divisions' equalities only (`x = k*q + r` into the products), then
    // with every linear equality (a larger system, whose elimination may give up sooner).
    let mut first = sys.clone();
    let grew = first.enrich(false);
    if factor_cases(&first, range, grew) {
        return true;
    }
    sys.enrich(true) && factor_cases(&sys, range, true)
}

/// The system by cases on the factors of products that take few values after propagation
/// (remainders first, then the narrowest; [`MAX_FACTOR_CASES`] cases at most). Every integer
/// point has each such factor equal to one value of its bounds, so the cases cover every
/// point. With `x == c` fixed, a product `x*R` is exactly `c*R` (its McCormick cuts at a
/// point bound of `x` are that equality), which makes `v = k*(q*R) + r*R - c*R` (see
/// [`System::enrich`]) linear in `q*R` and `R` once `r` is fixed. Without such factors, the
/// system once more when `grew` (enriched), else `false`.
fn factor_cases(sys: &System, range: &dyn Fn(&Symbol) -> Interval, grew: bool) -> bool {
    let Some(bounds) = propagate_bounds(sys, range) else {
        return true;
    };
    let mut candidates: Vec<(bool, i128, usize)> = Vec::new();
    for (v, key) in sys.keys.iter().enumerate() {
        let iv = bounds[v];
        if iv.lo == NEG_INF || iv.hi == POS_INF {
            continue;
        }
        let Some(n) = iv.hi.checked_sub(iv.lo).and_then(|d| d.checked_add(1)) else {
            continue;
        };
        let in_product = sys
            .keys
            .iter()
            .any(|k| matches!(k, Key::Product(fs) if fs.iter().any(|&(x, _)| x == v)));
        if (2..=MAX_FACTOR_CASES).contains(&n) && in_product {
            candidates.push((!matches!(key, Key::Remainder(..)), n, v));
        }
    }
    candidates.sort();
    let mut split: Vec<(usize, Interval)> = Vec::new();
    let mut cases = 1i128;
    for (_, n, v) in candidates {
        if cases * n <= MAX_FACTOR_CASES {
            cases *= n;
            split.push((v, bounds[v]));
        }
    }
    if split.is_empty() {
        return grew && system_empty(sys, range);
    }
    let mut point = vec![0i128; split.len()];
    loop {
        let mut case = sys.clone();
        for (&(v, iv), &i) in split.iter().zip(&point) {
            case.eqs.push(Row {
                a: vec![(v, 1)],
                b: iv.lo + i,
            });
        }
        if !system_empty(&case, range) {
            return false;
        }
        // The next point of the cases' grid.
        let mut d = 0;
        loop {
            if d == split.len() {
                return true;
            }
            point[d] += 1;
            if iv_len(split[d].1) > point[d] {
                break;
            }
            point[d] = 0;
            d += 1;
        }
    }
}

fn iv_len(iv: Interval) -> i128 {
    iv.hi - iv.lo + 1
}

/// Step 3 for one system: its rows, the bounds propagation gives as rows, and the products'
/// cuts on those bounds; the bounds; its equalities and disequalities (`None` when some
/// bound is empty). A product `v = x*w` whose factor `x` the bounds fix to `k` is `k*w` at
/// every point of the region: `v == k*w` joins the equalities, and `v` is replaced by
/// `k*w` in every row, equality and disequality (an equivalent constraint on the region),
/// then the bounds are propagated again, a few rounds (`p*q - p <= 1` with `q == 2` reads
/// `p <= 1`, which fixes `p` in turn where `p >= 1`).
#[allow(clippy::type_complexity)]
fn rows_with_cuts(
    sys: &System,
    range: &dyn Fn(&Symbol) -> Interval,
) -> Option<(Vec<Row>, Vec<Interval>, Vec<Row>, Vec<Row>)> {
    let mut sys = std::borrow::Cow::Borrowed(sys);
    let mut bounds = propagate_bounds(&sys, range)?;
    let mut fixed: Vec<bool> = vec![false; sys.keys.len()];
    for _ in 0..FIXED_ROUNDS {
        let mut subs: Vec<(usize, usize, i128)> = Vec::new();
        for (v, key) in sys.keys.iter().enumerate() {
            let Key::Product(fs) = key else { continue };
            if fixed[v] {
                continue;
            }
            for &(x, _) in fs {
                let iv = bounds[x];
                if iv.lo != iv.hi {
                    continue;
                }
                let w = match &without_one(fs, x)[..] {
                    [(w, 1)] => Some(*w),
                    rest => sys.index.get(&Key::Product(rest.to_vec())).copied(),
                };
                if let Some(w) = w {
                    subs.push((v, w, iv.lo));
                    break;
                }
            }
        }
        if subs.is_empty() {
            break;
        }
        let s = sys.to_mut();
        for (v, w, k) in subs {
            fixed[v] = true;
            let replace = |r: &Row| -> Option<Row> {
                let Ok(i) = r.a.binary_search_by_key(&v, |(y, _)| *y) else {
                    return Some(r.clone());
                };
                let m = r.a[i].1;
                let mut a = r.a.clone();
                a.remove(i);
                add_to(&mut a, w, m.checked_mul(k)?)?;
                Some(Row { a, b: r.b })
            };
            // A constraint that overflows is dropped (only enlarges the set).
            s.rows = s.rows.iter().filter_map(replace).collect();
            s.eqs = s.eqs.iter().filter_map(replace).collect();
            s.nes = s.nes.iter().filter_map(replace).collect();
            let mut a = vec![(v, 1)];
            if k.checked_neg().and_then(|nk| add_to(&mut a, w, nk)).is_some() {
                s.eqs.push(Row { a, b: 0 });
            }
        }
        bounds = propagate_bounds(&sys, range)?;
    }
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
            product_cuts(v, fs, &sys, &bounds, &mut base);
        }
    }
    Some((base, bounds, sys.eqs.clone(), sys.nes.clone()))
}

/// Steps 3-4 for one system.
fn system_empty(sys: &System, range: &dyn Fn(&Symbol) -> Interval) -> bool {
    let Some((base, bounds, eqs, nes)) = rows_with_cuts(sys, range) else {
        return true;
    };
    if nes.iter().any(|r| r.a.is_empty() && r.b == 0) {
        return true; // `0 != 0`
    }
    // Without the disequalities first (one elimination; most empty regions end here).
    if fourier_motzkin(base, eqs, nes.clone(), sys.keys.len()) {
        return true;
    }
    // Then a few disequalities split into their two sides (every side must be empty):
    // those whose excluded value the bounds of their sum do not already exclude. Each side
    // is a system of its own, its bounds propagated again and its products cut on them
    // (`q != 1` with `q` in `[0, 1]` makes `q == 0`, and `b*q` then 0).
    let split: Vec<&Row> = nes
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
        let mut side = sys.clone();
        for (i, r) in split.iter().enumerate() {
            // sum != b: sum <= b - 1, or -sum <= -b - 1.
            let row = if mask & (1 << i) == 0 {
                r.b.checked_sub(1).map(|b| Row { a: r.a.clone(), b })
            } else {
                match (neg(&r.a), r.b.checked_neg().and_then(|b| b.checked_sub(1))) {
                    (Some(a), Some(b)) => Some(Row { a, b }),
                    _ => None,
                }
            };
            if let Some(row) = row {
                side.rows.push(row);
            }
        }
        match rows_with_cuts(&side, range) {
            None => true,
            Some((rows, _, eqs, nes)) => fourier_motzkin(rows, eqs, nes, side.keys.len()),
        }
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
                if m.is_empty() {
                    return None;
                }
                // Back to the factors, where every factor is >= 0: a product >= 1 has every
                // factor >= 1 (a factor 0 makes it 0); and `x * P = v` with `P >= L >= 1`
                // gives `x <= x*P / L <= hi(v) / L` (`x >= 0`), `P` the others' product.
                if !fs.iter().all(|&(x, _)| b[x].lo >= 0) {
                    continue;
                }
                for (i, &(x, _)) in fs.iter().enumerate() {
                    let mut iv = b[x];
                    if m.lo >= 1 {
                        iv.lo = iv.lo.max(1);
                    }
                    if m.hi != POS_INF {
                        // The others' lower bound, `x` itself once less.
                        let mut low = Interval::point(1);
                        for (j, &(y, e)) in fs.iter().enumerate() {
                            let e = if j == i { e - 1 } else { e };
                            low = low.mul(&Interval::point(b[y].lo).pow(e));
                        }
                        if low.lo >= 1 && low.lo != POS_INF {
                            iv.hi = iv.hi.min(m.hi.div_euclid(low.lo));
                        }
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
        }
        // A disequality of one variable at an end of its bounds moves that end: an integer
        // `x` in `[lo, hi]` with `c*x != c*lo` is in `[lo + 1, hi]`.
        for r in &sys.nes {
            let [(x, c)] = r.a[..] else { continue };
            if r.b % c != 0 {
                continue;
            }
            let at = r.b / c;
            let mut iv = b[x];
            if iv.lo == at {
                iv.lo += 1;
            }
            if iv.hi == at {
                iv.hi -= 1;
            }
            if iv != b[x] {
                b[x] = iv;
                changed = true;
            }
            if iv.is_empty() {
                return None;
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

/// Rounds of the substitution of products with a fixed factor (see [`rows_with_cuts`]).
const FIXED_ROUNDS: usize = 3;

/// Bounds past this magnitude are moved out to it for the cuts of products.
const CUT_CAP: i128 = 1 << 12;

/// `iv` for the cuts of products: a lower bound above [`CUT_CAP`] lowered to it, an upper
/// bound below `-CUT_CAP` raised to it. A wider box keeps every cut valid (each is a product
/// of factors `x - l >= 0` or `u - x >= 0`, still true with `l` lower or `u` higher), and
/// keeps the cuts' coefficients small: bounds that ran away (`3*b**2*q == b` pushes `b` to
/// `2^40`) gave cuts whose combinations overflow in the elimination, which drops them.
fn for_cuts(iv: Interval) -> Interval {
    Interval {
        lo: if iv.lo > CUT_CAP { CUT_CAP } else { iv.lo },
        hi: if iv.hi != NEG_INF && iv.hi < -CUT_CAP { -CUT_CAP } else { iv.hi },
    }
}

/// Linear cuts of the product `v = prod x_i^e_i` valid on the bounds of its factors.
fn product_cuts(v: usize, fs: &[(usize, u32)], sys: &System, b: &[Interval], out: &mut Vec<Row>) {
    let factors: Vec<usize> = fs
        .iter()
        .flat_map(|&(x, e)| std::iter::repeat_n(x, e as usize))
        .collect();
    let fin = |x: i128| x != NEG_INF && x != POS_INF;
    // Every factor >= l_i >= 0: v >= sum_i P_i * x_i - (d - 1) * prod l, P_i the product of
    // the other lower bounds; as a row: sum_i P_i * x_i - v <= (d - 1) * prod l.
    let lows: Vec<i128> = factors.iter().map(|&x| for_cuts(b[x]).lo).collect();
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
    // Each way to write `v` as `x * w`, `x` one factor and `w` the variable of the others
    // (a single factor, or a sub-product that has a variable: see `System::enrich`).
    for (i, &(x, _)) in fs.iter().enumerate() {
        if i == 1 && fs.len() == 2 && fs[0].1 == 1 && fs[1].1 == 1 {
            break; // `x*y` as `y*x` gives the same cuts
        }
        let rest = without_one(fs, x);
        let w = match rest[..] {
            [(w, 1)] => Some(w),
            _ => sys.index.get(&Key::Product(rest)).copied(),
        };
        if let Some(w) = w {
            pair_cuts(v, x, w, b, out);
        }
    }
}

/// The cuts of `v = x * y` (exact at every integer point) valid on the bounds of `x` and `y`.
fn pair_cuts(v: usize, x: usize, y: usize, b: &[Interval], out: &mut Vec<Row>) {
    let fin = |x: i128| x != NEG_INF && x != POS_INF;
    let (bx, by) = (for_cuts(b[x]), for_cuts(b[y]));
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
/// constant), or when a disequality of `nes` becomes `0 != 0` once the equalities are
/// substituted into it (an exact rewriting on the region). `false` when none was found or
/// the rows grew past [`MAX_ROWS`].
fn fourier_motzkin(mut rows: Vec<Row>, mut eqs: Vec<Row>, mut nes: Vec<Row>, nvars: usize) -> bool {
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
        // The disequalities too: one that becomes `0 != 0` contradicts the equalities.
        nes = nes.iter().filter_map(subst).collect();
        if nes.iter().any(|r| r.a.is_empty() && r.b == 0) {
            return true;
        }
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

    /// Each of `empty_ones` is shown empty, none of `neighbours` is (each has a point).
    fn regions(empty_ones: &[&[&str]], neighbours: &[&[&str]]) {
        for region in empty_ones {
            assert!(empty(region), "{region:?}");
        }
        for region in neighbours {
            assert!(!empty(region), "{region:?}");
        }
    }

    /// Regions left by the 3000-program run after the second round: symbols bounded to a
    /// few values (enumerated), and an equality whose terms share a factor `>= 2` that
    /// cannot divide its constant; each beside a non-empty neighbour.
    #[test]
    fn small_domains_and_divisibility() {
        assert!(empty(&["Mod(b + FloorDiv(b, 2), 2) == 0", "b >= 1", "b <= 2"]));
        assert!(!empty(&["Mod(b + FloorDiv(b, 2), 2) == 0", "b >= 1", "b <= 3"]));
        assert!(empty(&[
            "e == 2",
            "Mod(a + FloorDiv(a, 2), 2) == 0",
            "a >= 1",
            "a <= 2",
            "FloorDiv(a, 2) <= 2",
        ]));
        assert!(!empty(&["e == 2", "Mod(a + FloorDiv(a, 2), 2) == 1", "a >= 1", "a <= 2"]));
        let shared = "a*b*c*FloorDiv(Min(a, Max(e - 1, 1)), 2) == 2*a*c*FloorDiv(Min(a, Max(e - 1, 1)), 2) + 1";
        assert!(empty(&[shared, "a >= 2", "b >= 3", "c >= 1", "e >= 1"]));
        assert!(!empty(&["a*c == 1", "a >= 1", "c >= 1"]));
        assert!(empty(&["a*c == 1", "a >= 2", "c >= 1"]));
        assert!(!empty(&["a*c == 2", "a >= 2", "c >= 1"]));
        assert!(empty(&["2*a*c + 3*a == 2", "a >= 3"]));
        // Inside a `Min` case: `a*c == a**2 - 1` where `a - 1 != 0` moves `a >= 1` to 2.
        let min = ["a*c == a*Min(a - 1, c) + Min(a - 1, c)", "Min(a - 1, c) != 0", "c >= 2", "a >= 1", "FloorDiv(c, 2) <= 1"];
        assert!(empty(&min));
        // A neighbour with a point (`a = 2`, `c = 3`).
        assert!(!empty(&["a*c == a*Min(a - 1, c) + Min(a - 1, c) + c", "Min(a - 1, c) != 0", "c >= 2", "a >= 1"]));
        assert!(!empty(&["2*a*c + 3*a == 3", "a >= 1", "c >= 0"]));
    }

    /// The regions covers were left incomplete on (issue 39), each empty, and neighbours
    /// of them that are not.
    #[test]
    fn regions_of_incomplete_covers_are_empty_and_their_neighbours_are_not() {
        regions(
            &[
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
            ],
            &[
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
            ],
        );
    }

    /// Products sharing factors (issue 39, family 1): a product against a product of a
    /// subset of its factors. Empty, and neighbours that are not.
    #[test]
    fn products_sharing_factors() {
        regions(
            &[
                &["b**3 + 2 <= b**2", "b >= 2"][..],
                &["a*b*FloorDiv(b + 1, 2) == a*b", "b >= 3", "a >= 1"],
                &["h*w*FloorDiv(c, 4) <= h*w", "FloorDiv(c, 4) >= 2", "h >= 2", "w >= 2"],
                &["a**2*b <= a*b", "a >= 2", "b >= 1"],
                &["a*b*c <= 2*b*c", "a >= 3", "b >= 1", "c >= 1"],
            ],
            &[
                &["b**3 <= b**2", "b >= 1"][..],
                &["a*b*FloorDiv(b + 1, 2) == a*b", "b >= 1", "a >= 1"],
                &["h*w*FloorDiv(c, 4) <= h*w", "FloorDiv(c, 4) >= 1", "h >= 2", "w >= 2"],
                &["a**2*b <= a*b", "a >= 1", "b >= 1"],
                &["a*b*c <= 2*b*c", "a >= 2", "b >= 1", "c >= 1"],
                &["a*b*c <= 2*b*c", "a >= 3"],
            ],
        );
    }

    /// A symbol split by a constant divisor inside products (issue 39, family 2):
    /// `b = 2*FloorDiv(b, 2) + Mod(b, 2)` inside `b**2`, `n*n2`.
    #[test]
    fn divisions_inside_products() {
        regions(
            &[
                &["Mod(b, 2) == 0", "b**2 != 2*b*FloorDiv(b, 2)"][..],
                &["n2 == 2*FloorDiv(n2, 2)", "n*n2 != 2*n*FloorDiv(n2, 2)"],
                &["c == 4*FloorDiv(c, 4)", "c*h != 4*h*FloorDiv(c, 4)"],
                &["Mod(t + 1, 2) == 1", "t*s != 2*s*FloorDiv(t + 1, 2)"],
                &["Mod(b, 3) == 1", "a*b != 3*a*FloorDiv(b, 3) + a"],
            ],
            &[
                &["Mod(b, 2) == 1", "b**2 != 2*b*FloorDiv(b, 2)"][..],
                &["n*n2 != 2*n*FloorDiv(n2, 2)"],
                &["c == 4*FloorDiv(c, 4) + 1", "c*h != 4*h*FloorDiv(c, 4)"],
                &["Mod(t + 1, 2) == 0", "t*s != 2*s*FloorDiv(t + 1, 2)"],
                &["Mod(b, 3) == 2", "a*b != 3*a*FloorDiv(b, 3) + a"],
            ],
        );
    }

    /// Rules that the families above need on the way: a disequality at an end of a bound,
    /// bounds back from a product to its factors, cases on a factor of few values, an
    /// equality multiplied into a product, a factor fixed to one value. Each region empty,
    /// and a neighbour that is not.
    #[test]
    fn bounds_cases_and_equalities_in_products() {
        regions(
            &[
                // `FloorDiv(Min(Max(e - 1, 1), 2), 2)` is 0 or 1; `!= 1` makes it 0, `b*0 != 0`.
                &[
                    "b*FloorDiv(Min(Max(e - 1, 1), 2), 2) != 0",
                    "FloorDiv(Min(Max(e - 1, 1), 2), 2) != 1",
                    "b >= 2",
                    "e >= 1",
                ][..],
                // A product 1 has every factor 1, against `a >= 2`.
                &["a*b*FloorDiv(Min(b - 1, e), 2) == 1", "a >= 2", "b >= 2", "e >= 1"],
                // `Min(a, e)` is 1 or 2 in the second case: `a*1 == a + 1`, `2*a == a + 1`.
                &["a*Min(a, e) == a + 1", "a >= 2", "e >= 1", "Min(a, e) <= 2"],
                // `c == 2*x` multiplied by `c`: `c**2 == 2*c*x`.
                &["c == 2*x", "c**2 != 2*c*x"],
                &[
                    "c == 2*FloorDiv(Min(c, FloorDiv(c, 2)) + 1, 2)",
                    "c**2 != 2*c*FloorDiv(Min(c, FloorDiv(c, 2)) + 1, 2)",
                    "c >= 2",
                ],
                // `q == 1` makes `c*q` equal to `c`.
                &[
                    "FloorDiv(Max(w - 1, 1), 2) == 1",
                    "c*FloorDiv(Max(w - 1, 1), 2) != c",
                    "c >= 2",
                ],
                // A region of `cl_crop_flatten_tokens`' cover (many products and disequalities).
                &[
                    "c*w == 2*c*FloorDiv(Max(w - 1, 1), 2)",
                    "h == 1",
                    "c*n*FloorDiv(h + 1, 2)*FloorDiv(Max(w - 1, 1), 2) != 0",
                    "c*h*w != 2*c*w*FloorDiv(h + 1, 2)",
                    "c*FloorDiv(h + 1, 2)*FloorDiv(Max(w - 1, 1), 2) != 1",
                    "c*w != c*FloorDiv(Max(w - 1, 1), 2)",
                    "c*FloorDiv(Max(w - 1, 1), 2) != 1",
                    "FloorDiv(Max(w - 1, 1), 2) != 1",
                    "FloorDiv(h + 1, 2)*FloorDiv(Max(w - 1, 1), 2) >= 2",
                    "c >= 2",
                    "h <= 2",
                    "n >= 2",
                    "w >= 3",
                    "FloorDiv(Max(w - 1, 1), 2) >= 2",
                ],
            ],
            &[
                &["b*FloorDiv(Min(Max(e - 1, 1), 2), 2) != 0", "b >= 2", "e >= 1"][..],
                &["a*b*FloorDiv(e, 2) == 2", "a >= 1", "b >= 2"],
                &["a*Min(a, e) == 2*a", "a >= 2", "e >= 1", "Min(a, e) <= 2"],
                &["c == 2*x + 1", "c**2 != 2*c*x"],
                &[
                    "FloorDiv(Max(w - 1, 1), 2) == 1",
                    "c*FloorDiv(Max(w - 1, 1), 2) != 2*c",
                    "c >= 2",
                ],
                &[
                    "c*w == 2*c*FloorDiv(Max(w - 1, 1), 2) + c",
                    "h == 1",
                    "c*n*FloorDiv(h + 1, 2)*FloorDiv(Max(w - 1, 1), 2) != 0",
                    "c*w != c*FloorDiv(Max(w - 1, 1), 2)",
                    "FloorDiv(Max(w - 1, 1), 2) >= 2",
                    "c >= 2",
                    "n >= 2",
                ],
            ],
        );
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
        let (called, total) = brute_force(&atoms, 0x9e3779b97f4a7c15);
        // The generator does reach both answers.
        assert!(called > 100 && called < total, "{called} of {total}");
    }

    /// The same with the shapes of issue 39's families: products sharing factors,
    /// divisions inside products, nested `Min`/`Max`/`FloorDiv`.
    #[test]
    fn regions_with_shared_factors_called_empty_have_no_point_in_a_box() {
        let atoms = [
            "a*b*FloorDiv(b + 1, 2)",
            "a*b",
            "b**3",
            "b**2",
            "a**2*b",
            "b*FloorDiv(b, 2)",
            "2*b*FloorDiv(b, 2)",
            "a*Mod(b, 2)",
            "a*FloorDiv(b, 3)",
            "Mod(b, 2)",
            "FloorDiv(Max(a - 2, 0) + 1, 2)",
            "Min(b, 2)*a",
            "Max(FloorDiv(a, 2), 1)*b",
            "FloorDiv(Min(Max(a - 1, 1), 2), 2)*b",
            "a*Min(a, b)",
            "a",
            "b",
            "1",
        ];
        let (called, total) = brute_force(&atoms, 0x2545f4914f6cdd1d);
        assert!(called > 100 && called < total, "{called} of {total}");
    }

    /// 3000 random conjunctions of 1-3 comparisons between `atoms`: each one called empty
    /// has no point in `0..=12` (for `a` and `b`). Returns (called empty, total).
    fn brute_force(atoms: &[&str], mut seed: u64) -> (usize, usize) {
        let rels = ["<=", "==", "!=", ">="];
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
        (called, total)
    }
}
