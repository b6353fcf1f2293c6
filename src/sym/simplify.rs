//! egg-based simplification, for what the canonical polynomial form cannot do alone.
//!
//! The canonical form decides polynomial identities; it cannot see that `Max(s, 1)` is `s`
//! when `s >= 1`, or that `Mod(a, b)` is `a` when `0 <= a < b`. Those need range facts and
//! rewriting under conditions, which is what an e-graph is good at:
//!
//! * `SymLang` (a `define_language!`): `+ * // % max min <= == != && || !`, integer literals
//!   (exact `BigInt`), symbols. Booleans are the integers 0/1, so one analysis covers both.
//! * `RangeAnalysis` (an egg `Analysis`): per e-class an exact constant (folded with `BigInt`)
//!   and an integer interval computed from the symbol ranges; merging intersects intervals;
//!   a class whose interval is a single point gets that constant as a node, so comparisons
//!   decided by ranges become `1`/`0`.
//! * Rewrites: commutativity/associativity of `+`/`*`, unit and zero laws, cancellation,
//!   and conditional rules on `max/min/floordiv/mod` that consult the intervals.
//! * The `Runner` has explicit iteration, node and time limits, and stops as soon as the
//!   root is known to be a constant. Extraction picks the smallest form (`AstSize`), which
//!   is converted back through the canonical constructors.

use super::boolexpr::{BoolExpr, BoolKind, Rel};
use super::expr::{Atom, Expr, FuncKind, FxMap, Symbol};
use super::interval::{Interval, NEG_INF, POS_INF};
use super::knowledge::Knowledge;
use super::num::Coeff;
use egg::{
    define_language, rewrite, Analysis, DidMerge, EGraph, Id, RecExpr, Rewrite, Runner, Subst, Var,
};
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{ToPrimitive, Zero};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

define_language! {
    /// The e-graph language (integers; booleans are 0/1).
    pub(crate) enum SymLang {
        "+" = Add([Id; 2]),
        "*" = Mul([Id; 2]),
        "//" = FloorDiv([Id; 2]),
        "%" = Mod([Id; 2]),
        "max" = Max([Id; 2]),
        "min" = Min([Id; 2]),
        "<=" = Le([Id; 2]),
        "==" = Eq([Id; 2]),
        "&&" = And([Id; 2]),
        "||" = Or([Id; 2]),
        "!" = Not(Id),
        Num(BigInt),
        Sym(egg::Symbol),
    }
}

/// Limits of one simplifier run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimplifyConfig {
    /// Maximum number of rewrite iterations.
    pub iter_limit: usize,
    /// Maximum number of e-nodes.
    pub node_limit: usize,
    /// Maximum wall time.
    pub time_limit: Duration,
    /// Static decisions skip the simplifier for conditions larger than this (nodes).
    pub max_input_nodes: usize,
}

impl Default for SimplifyConfig {
    fn default() -> Self {
        SimplifyConfig {
            iter_limit: 8,
            node_limit: 1500,
            time_limit: Duration::from_millis(5),
            max_input_nodes: 48,
        }
    }
}

impl SimplifyConfig {
    /// Tighter limits for the static-decision fallback, which runs inside traces: most
    /// conditions that reach it are genuinely undecidable, so a failed run must be cheap.
    pub fn for_decisions() -> SimplifyConfig {
        SimplifyConfig {
            iter_limit: 4,
            node_limit: 400,
            time_limit: Duration::from_millis(1),
            max_input_nodes: 24,
        }
    }
}

/// Value ranges of symbols, for [`simplify`].
#[derive(Clone, Debug, Default)]
pub struct SymbolRanges {
    map: FxMap<Symbol, Interval>,
}

impl SymbolRanges {
    /// No range known (every symbol unbounded).
    pub fn new() -> SymbolRanges {
        SymbolRanges::default()
    }
    /// `name` lies in `[lo, hi]` (`hi = None` for unbounded).
    pub fn set(&mut self, name: &str, lo: i64, hi: Option<i64>) -> &mut Self {
        self.map.insert(
            Symbol::new(name),
            Interval::new(lo as i128, hi.map_or(POS_INF, |h| h as i128)),
        );
        self
    }
    /// Builder form of [`SymbolRanges::set`].
    pub fn with(mut self, name: &str, lo: i64, hi: Option<i64>) -> Self {
        self.set(name, lo, hi);
        self
    }
    pub(crate) fn from_map(map: FxMap<Symbol, Interval>) -> Self {
        SymbolRanges { map }
    }
}

/// Per-class data: exact constant (if known) and interval.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Data {
    konst: Option<BigInt>,
    iv: Interval,
}

#[derive(Default)]
pub(crate) struct RangeAnalysis {
    ranges: FxMap<egg::Symbol, Interval>,
}

fn big_iv(b: &BigInt) -> Interval {
    match b.to_i128() {
        Some(v) if v != NEG_INF && v != POS_INF => Interval::point(v),
        _ => {
            if b.sign() == num_bigint::Sign::Minus {
                Interval::new(NEG_INF, NEG_INF + 1)
            } else {
                Interval::new(POS_INF - 1, POS_INF)
            }
        }
    }
}

const BOOL: Interval = Interval { lo: 0, hi: 1 };

fn b2i(b: bool) -> BigInt {
    BigInt::from(b as i64)
}

impl Analysis<SymLang> for RangeAnalysis {
    type Data = Data;

    fn make(eg: &mut EGraph<SymLang, Self>, n: &SymLang, _id: Id) -> Data {
        let d = |i: &Id| &eg[*i].data;
        let k = |i: &Id| eg[*i].data.konst.clone();
        let (konst, iv): (Option<BigInt>, Interval) = match n {
            SymLang::Num(v) => (Some(v.clone()), big_iv(v)),
            SymLang::Sym(s) => (
                None,
                eg.analysis.ranges.get(s).copied().unwrap_or(Interval::FULL),
            ),
            SymLang::Add([a, b]) => (k(a).zip(k(b)).map(|(x, y)| x + y), d(a).iv.add(&d(b).iv)),
            SymLang::Mul([a, b]) => {
                let kk = match (k(a), k(b)) {
                    (Some(x), Some(y)) => Some(x * y),
                    (Some(x), _) | (_, Some(x)) if x.is_zero() => Some(BigInt::zero()),
                    _ => None,
                };
                (kk, d(a).iv.mul(&d(b).iv))
            }
            SymLang::FloorDiv([a, b]) | SymLang::Mod([a, b]) => {
                let is_div = matches!(n, SymLang::FloorDiv(_));
                let kk = match (k(a), k(b)) {
                    (Some(x), Some(y)) if !y.is_zero() => Some(if is_div {
                        x.div_floor(&y)
                    } else {
                        x.mod_floor(&y)
                    }),
                    _ => None,
                };
                let iv = if is_div {
                    d(a).iv.floordiv(&d(b).iv)
                } else {
                    d(a).iv.modulo(&d(b).iv)
                };
                (kk, iv.unwrap_or(Interval::FULL))
            }
            SymLang::Max([a, b]) | SymLang::Min([a, b]) => {
                let mx = matches!(n, SymLang::Max(_));
                let kk = k(a)
                    .zip(k(b))
                    .map(|(x, y)| if mx { x.max(y) } else { x.min(y) });
                let (x, y) = (d(a).iv, d(b).iv);
                let iv = if mx {
                    Interval::new(x.lo.max(y.lo), x.hi.max(y.hi))
                } else {
                    Interval::new(x.lo.min(y.lo), x.hi.min(y.hi))
                };
                (kk, iv)
            }
            SymLang::Le([a, b]) => {
                let (x, y) = (d(a).iv, d(b).iv);
                let v = if let (Some(p), Some(q)) = (k(a), k(b)) {
                    Some(p <= q)
                } else if eg.find(*a) == eg.find(*b)
                    || (x.hi != POS_INF && y.lo != NEG_INF && x.hi <= y.lo)
                {
                    Some(true)
                } else if x.lo != NEG_INF && y.hi != POS_INF && x.lo > y.hi {
                    Some(false)
                } else {
                    None
                };
                (v.map(b2i), BOOL)
            }
            SymLang::Eq([a, b]) => {
                let (x, y) = (d(a).iv, d(b).iv);
                let v = if let (Some(p), Some(q)) = (k(a), k(b)) {
                    Some(p == q)
                } else if eg.find(*a) == eg.find(*b) {
                    Some(true)
                } else if (x.hi != POS_INF && y.lo != NEG_INF && x.hi < y.lo)
                    || (x.lo != NEG_INF && y.hi != POS_INF && x.lo > y.hi)
                {
                    Some(false)
                } else {
                    None
                };
                (v.map(b2i), BOOL)
            }
            SymLang::And([a, b]) | SymLang::Or([a, b]) => {
                let and = matches!(n, SymLang::And(_));
                let (x, y) = (k(a).map(|v| !v.is_zero()), k(b).map(|v| !v.is_zero()));
                let v = match (x, y) {
                    (Some(p), Some(q)) => Some(if and { p && q } else { p || q }),
                    (Some(p), _) | (_, Some(p)) if p != and => Some(p),
                    _ => None,
                };
                (v.map(b2i), BOOL)
            }
            SymLang::Not(a) => (k(a).map(|v| b2i(v.is_zero())), BOOL),
        };
        let konst = konst.or_else(|| iv.as_point().map(BigInt::from));
        let iv = match &konst {
            Some(c) => big_iv(c),
            None => iv,
        };
        Data { konst, iv }
    }

    fn merge(&mut self, a: &mut Data, b: Data) -> DidMerge {
        let mut changed_a = false;
        let iv = a.iv.meet(&b.iv);
        if iv != a.iv {
            a.iv = iv;
            changed_a = true;
        }
        let changed_b = iv != b.iv;
        let mut kb = false;
        match (&a.konst, b.konst) {
            (None, Some(c)) => {
                a.konst = Some(c);
                changed_a = true;
            }
            (Some(_), None) => kb = true,
            _ => {}
        }
        if a.konst.is_none() {
            if let Some(p) = a.iv.as_point() {
                a.konst = Some(BigInt::from(p));
                changed_a = true;
            }
        }
        DidMerge(changed_a, changed_b || kb)
    }

    fn modify(eg: &mut EGraph<SymLang, Self>, id: Id) {
        if let Some(c) = eg[id].data.konst.clone() {
            let added = eg.add(SymLang::Num(c));
            eg.union(id, added);
        }
    }
}

type EG = EGraph<SymLang, RangeAnalysis>;

fn var(s: &str) -> Var {
    s.parse()
        .unwrap_or_else(|_| unreachable!("pattern variables are literals"))
}

fn iv(eg: &EG, s: &Subst, v: Var) -> Interval {
    eg[s[v]].data.iv
}

/// `a >= b` for every value in the ranges.
fn ge(a: &str, b: &str) -> impl Fn(&mut EG, Id, &Subst) -> bool {
    let (a, b) = (var(a), var(b));
    move |eg, _, s| {
        let (x, y) = (iv(eg, s, a), iv(eg, s, b));
        x.lo != NEG_INF && y.hi != POS_INF && x.lo >= y.hi
    }
}

/// `0 <= a < b` for every value in the ranges.
fn small_nonneg(a: &str, b: &str) -> impl Fn(&mut EG, Id, &Subst) -> bool {
    let (a, b) = (var(a), var(b));
    move |eg, _, s| {
        let (x, y) = (iv(eg, s, a), iv(eg, s, b));
        x.lo >= 0 && x.hi != POS_INF && y.lo != NEG_INF && x.hi < y.lo
    }
}

fn positive(a: &str) -> impl Fn(&mut EG, Id, &Subst) -> bool {
    let a = var(a);
    move |eg, _, s| iv(eg, s, a).lo >= 1
}

fn both_positive(a: &str, b: &str) -> impl Fn(&mut EG, Id, &Subst) -> bool {
    let (a, b) = (positive(a), positive(b));
    move |eg, id, s| a(eg, id, s) && b(eg, id, s)
}

fn nonzero(a: &str) -> impl Fn(&mut EG, Id, &Subst) -> bool {
    let a = var(a);
    move |eg, _, s| {
        let x = iv(eg, s, a);
        x.lo >= 1 || x.hi <= -1
    }
}

fn rules() -> &'static [Rewrite<SymLang, RangeAnalysis>] {
    static RULES: OnceLock<Vec<Rewrite<SymLang, RangeAnalysis>>> = OnceLock::new();
    RULES.get_or_init(|| {
        vec![
            rewrite!("add-comm"; "(+ ?a ?b)" => "(+ ?b ?a)"),
            rewrite!("mul-comm"; "(* ?a ?b)" => "(* ?b ?a)"),
            rewrite!("add-assoc"; "(+ ?a (+ ?b ?c))" => "(+ (+ ?a ?b) ?c)"),
            rewrite!("mul-assoc"; "(* ?a (* ?b ?c))" => "(* (* ?a ?b) ?c)"),
            rewrite!("add-0"; "(+ ?a 0)" => "?a"),
            rewrite!("mul-1"; "(* ?a 1)" => "?a"),
            rewrite!("mul-0"; "(* ?a 0)" => "0"),
            rewrite!("cancel"; "(+ ?a (* -1 ?a))" => "0"),
            rewrite!("max-comm"; "(max ?a ?b)" => "(max ?b ?a)"),
            rewrite!("min-comm"; "(min ?a ?b)" => "(min ?b ?a)"),
            rewrite!("max-idem"; "(max ?a ?a)" => "?a"),
            rewrite!("min-idem"; "(min ?a ?a)" => "?a"),
            rewrite!("max-left"; "(max ?a ?b)" => "?a" if ge("?a", "?b")),
            rewrite!("min-left"; "(min ?a ?b)" => "?a" if ge("?b", "?a")),
            rewrite!("max-add"; "(+ (max ?a ?b) ?c)" => "(max (+ ?a ?c) (+ ?b ?c))"),
            rewrite!("min-add"; "(+ (min ?a ?b) ?c)" => "(min (+ ?a ?c) (+ ?b ?c))"),
            rewrite!("div-1"; "(// ?a 1)" => "?a"),
            rewrite!("div-small"; "(// ?a ?b)" => "0" if small_nonneg("?a", "?b")),
            rewrite!("mod-small"; "(% ?a ?b)" => "?a" if small_nonneg("?a", "?b")),
            rewrite!("div-mul"; "(// (* ?a ?b) ?b)" => "?a" if nonzero("?b")),
            rewrite!("mod-mul"; "(% (* ?a ?b) ?b)" => "0" if nonzero("?b")),
            rewrite!("div-self"; "(// ?a ?a)" => "1" if nonzero("?a")),
            rewrite!("mod-self"; "(% ?a ?a)" => "0" if nonzero("?a")),
            rewrite!("div-div"; "(// (// ?a ?b) ?c)" => "(// ?a (* ?b ?c))" if both_positive("?b", "?c")),
            rewrite!("div-mod-recombine"; "(+ (* ?b (// ?a ?b)) (% ?a ?b))" => "?a" if nonzero("?b")),
            rewrite!("le-refl"; "(<= ?a ?a)" => "1"),
            rewrite!("eq-refl"; "(== ?a ?a)" => "1"),
            rewrite!("eq-comm"; "(== ?a ?b)" => "(== ?b ?a)"),
            rewrite!("not-not"; "(! (! ?a))" => "?a"),
            rewrite!("and-comm"; "(&& ?a ?b)" => "(&& ?b ?a)"),
            rewrite!("or-comm"; "(|| ?a ?b)" => "(|| ?b ?a)"),
            rewrite!("and-1"; "(&& ?a 1)" => "?a"),
            rewrite!("or-0"; "(|| ?a 0)" => "?a"),
        ]
    })
}

// ---- conversion Expr -> RecExpr ----

fn push_coeff(r: &mut RecExpr<SymLang>, c: &Coeff) -> Id {
    r.add(SymLang::Num(c.to_big()))
}

fn push_expr(r: &mut RecExpr<SymLang>, e: &Expr) -> Id {
    let mut acc: Option<Id> = None;
    for t in e.terms() {
        let mut prod: Option<Id> = None;
        for (a, exp) in &t.mono {
            let id = push_atom(r, a);
            for _ in 0..*exp {
                prod = Some(match prod {
                    None => id,
                    Some(p) => r.add(SymLang::Mul([p, id])),
                });
            }
        }
        let term = match prod {
            None => push_coeff(r, &t.coef),
            Some(p) if t.coef.is_one() => p,
            Some(p) => {
                let c = push_coeff(r, &t.coef);
                r.add(SymLang::Mul([c, p]))
            }
        };
        acc = Some(match acc {
            None => term,
            Some(s) => r.add(SymLang::Add([s, term])),
        });
    }
    acc.unwrap_or_else(|| r.add(SymLang::Num(BigInt::zero())))
}

fn push_atom(r: &mut RecExpr<SymLang>, a: &Atom) -> Id {
    match a {
        Atom::Sym(s) => r.add(SymLang::Sym(egg::Symbol::from(s.as_str()))),
        Atom::Func(f) => {
            let ids: Vec<Id> = f.args.iter().map(|x| push_expr(r, x)).collect();
            let mut acc = ids[0];
            for &id in &ids[1..] {
                acc = r.add(match f.kind {
                    FuncKind::FloorDiv => SymLang::FloorDiv([acc, id]),
                    FuncKind::Mod => SymLang::Mod([acc, id]),
                    FuncKind::Max => SymLang::Max([acc, id]),
                    FuncKind::Min => SymLang::Min([acc, id]),
                });
            }
            acc
        }
    }
}

fn push_bool(r: &mut RecExpr<SymLang>, b: &BoolExpr) -> Id {
    match b.kind() {
        BoolKind::Const(v) => r.add(SymLang::Num(b2i(*v))),
        BoolKind::Cmp(rel, p) => {
            // Split p = lhs - rhs so the e-graph sees `Max(s, 1) == s` rather than a sum.
            let (pos, neg) = split_signs(p);
            let a = push_expr(r, &pos);
            let c = push_expr(r, &neg);
            match rel {
                Rel::Le => r.add(SymLang::Le([a, c])),
                Rel::Eq => r.add(SymLang::Eq([a, c])),
                Rel::Ne => {
                    let e = r.add(SymLang::Eq([a, c]));
                    r.add(SymLang::Not(e))
                }
            }
        }
        BoolKind::And(v) | BoolKind::Or(v) => {
            let and = matches!(b.kind(), BoolKind::And(_));
            let ids: Vec<Id> = v.iter().map(|x| push_bool(r, x)).collect();
            let mut acc = ids[0];
            for &id in &ids[1..] {
                acc = r.add(if and {
                    SymLang::And([acc, id])
                } else {
                    SymLang::Or([acc, id])
                });
            }
            acc
        }
    }
}

/// `p = pos - neg`, both with positive coefficients (the constant goes to its sign's side).
fn split_signs(p: &Expr) -> (Expr, Expr) {
    let mut pos = Vec::new();
    let mut neg = Vec::new();
    for t in p.terms() {
        if t.coef.signum() > 0 {
            pos.push(t.clone());
        } else {
            let mut t = t.clone();
            t.coef = t.coef.neg();
            neg.push(t);
        }
    }
    (Expr::from_terms(pos), Expr::from_terms(neg))
}

// ---- conversion RecExpr -> Expr ----

#[derive(Clone)]
enum Val {
    Int(Expr),
    Bool(BoolExpr),
}

fn to_int(v: &Val) -> Option<Expr> {
    match v {
        Val::Int(e) => Some(e.clone()),
        Val::Bool(b) => b.as_const().map(|c| Expr::constant(c as i64)),
    }
}

fn to_bool(v: &Val) -> Option<BoolExpr> {
    match v {
        Val::Bool(b) => Some(b.clone()),
        Val::Int(e) => Some(BoolExpr::ne(e, &Expr::constant(0))),
    }
}

fn from_rec(r: &RecExpr<SymLang>) -> Option<Val> {
    let nodes = r.as_ref();
    let mut vals: Vec<Val> = Vec::with_capacity(nodes.len());
    for n in nodes {
        let g = |i: &Id| vals.get(usize::from(*i)).cloned();
        let int = |i: &Id| g(i).as_ref().and_then(to_int);
        let boo = |i: &Id| g(i).as_ref().and_then(to_bool);
        let v = match n {
            SymLang::Num(c) => Val::Int(Expr::from_coeff(Coeff::from_big(c.clone()))),
            SymLang::Sym(s) => Val::Int(Expr::symbol(s.as_str())),
            SymLang::Add([a, b]) => Val::Int(int(a)?.add(&int(b)?)),
            SymLang::Mul([a, b]) => Val::Int(int(a)?.mul(&int(b)?)),
            SymLang::FloorDiv([a, b]) => Val::Int(int(a)?.floor_div(&int(b)?)),
            SymLang::Mod([a, b]) => Val::Int(int(a)?.modulo(&int(b)?)),
            SymLang::Max([a, b]) => Val::Int(int(a)?.max(&int(b)?)),
            SymLang::Min([a, b]) => Val::Int(int(a)?.min(&int(b)?)),
            SymLang::Le([a, b]) => Val::Bool(BoolExpr::le(&int(a)?, &int(b)?)),
            SymLang::Eq([a, b]) => Val::Bool(BoolExpr::eq(&int(a)?, &int(b)?)),
            SymLang::And([a, b]) => Val::Bool(boo(a)?.and(&boo(b)?)),
            SymLang::Or([a, b]) => Val::Bool(boo(a)?.or(&boo(b)?)),
            SymLang::Not(a) => Val::Bool(boo(a)?.not()),
        };
        vals.push(v);
    }
    vals.pop()
}

// ---- running ----

fn run(
    rec: &RecExpr<SymLang>,
    ranges: &FxMap<Symbol, Interval>,
    cfg: &SimplifyConfig,
) -> (Option<BigInt>, RecExpr<SymLang>) {
    let analysis = RangeAnalysis {
        ranges: ranges
            .iter()
            .map(|(k, v)| (egg::Symbol::from(k.as_str()), *v))
            .collect(),
    };
    let mut eg = EG::new(analysis);
    let root = eg.add_expr(rec);
    eg.rebuild();
    let runner = Runner::<SymLang, RangeAnalysis>::new(RangeAnalysis::default())
        .with_egraph(eg)
        .with_iter_limit(cfg.iter_limit)
        .with_node_limit(cfg.node_limit)
        .with_time_limit(cfg.time_limit)
        .with_hook(move |r| {
            let root = r.egraph.find(root);
            if r.egraph[root].data.konst.is_some() {
                Err("root is constant".into())
            } else {
                Ok(())
            }
        })
        .run(rules());
    let root = runner.egraph.find(root);
    if let Some(c) = runner.egraph[root].data.konst.clone() {
        return (Some(c.clone()), {
            let mut r = RecExpr::default();
            r.add(SymLang::Num(c));
            r
        });
    }
    let ex = egg::Extractor::new(&runner.egraph, egg::AstSize);
    let (_, best) = ex.find_best(root);
    (None, best)
}

/// Simplifies `e` assuming each symbol lies in its range (unlisted symbols: unbounded).
/// The result is canonical and equal to `e` for every assignment within the ranges.
pub fn simplify(e: &Expr, ranges: &SymbolRanges) -> Expr {
    simplify_with(e, ranges, &SimplifyConfig::default())
}

/// [`simplify`] with explicit limits.
pub fn simplify_with(e: &Expr, ranges: &SymbolRanges, cfg: &SimplifyConfig) -> Expr {
    if !e.has_non_polynomial() {
        return e.clone();
    }
    let mut r = RecExpr::default();
    push_expr(&mut r, e);
    let (k, best) = run(&r, &ranges.map, cfg);
    if let Some(c) = k {
        return Expr::from_coeff(Coeff::from_big(c));
    }
    match from_rec(&best).as_ref().and_then(to_int) {
        Some(s) if s.node_count() <= e.node_count() => s,
        _ => e.clone(),
    }
}

/// Simplifies a condition under the ranges (a decided condition becomes `True`/`False`).
pub fn simplify_bool(b: &BoolExpr, ranges: &SymbolRanges) -> BoolExpr {
    simplify_bool_with(b, &ranges.map, &SimplifyConfig::default())
}

pub(crate) fn simplify_bool_with(
    b: &BoolExpr,
    ranges: &FxMap<Symbol, Interval>,
    cfg: &SimplifyConfig,
) -> BoolExpr {
    if b.as_const().is_some() {
        return b.clone();
    }
    let mut r = RecExpr::default();
    push_bool(&mut r, b);
    let (k, best) = run(&r, ranges, cfg);
    if let Some(c) = k {
        return BoolExpr::constant(!c.is_zero());
    }
    match from_rec(&best).as_ref().and_then(to_bool) {
        Some(s) if s.node_count() <= b.node_count() => s,
        _ => b.clone(),
    }
}

type CacheKey = (BoolExpr, Vec<(Symbol, Interval)>, usize, usize);

/// Simplifier results, shared by all `ShapeEnv`s (keyed by the condition, the ranges of its
/// symbols and the limits), so repeated traces pay for each e-graph run once.
fn cache() -> &'static Mutex<FxMap<CacheKey, BoolExpr>> {
    static CACHE: OnceLock<Mutex<FxMap<CacheKey, BoolExpr>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(FxMap::default()))
}

const CACHE_CAP: usize = 1 << 14;

/// Empties the process-wide cache of simplifier results (for benchmarks and tests).
pub fn clear_simplifier_cache() {
    cache().lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// The static-decision fallback: simplify under the known ranges (cached), then decide the
/// simplified form with the guard facts. `cond` has substitutions applied already.
pub(crate) fn decide_with_simplifier(
    cond: &BoolExpr,
    know: &Knowledge,
    cfg: &SimplifyConfig,
) -> Option<bool> {
    if cond.node_count() > cfg.max_input_nodes {
        return None;
    }
    let ranges: Vec<(Symbol, Interval)> = cond
        .symbols()
        .into_iter()
        .map(|s| {
            let r = know.ranges.get(&s).copied().unwrap_or(Interval::FULL);
            (s, r)
        })
        .collect();
    let key = (cond.clone(), ranges, cfg.iter_limit, cfg.node_limit);
    let hit = cache()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&key)
        .cloned();
    let s = match hit {
        Some(s) => s,
        None => {
            let s = simplify_bool_with(cond, &know.ranges, cfg);
            let mut c = cache().lock().unwrap_or_else(|e| e.into_inner());
            if c.len() >= CACHE_CAP {
                c.clear();
            }
            c.insert(key, s.clone());
            s
        }
    };
    if let Some(c) = s.as_const() {
        return Some(c);
    }
    know.decide(&s)
}

impl SymbolRanges {
    /// The range of `name`, if set.
    pub fn get(&self, name: &str) -> Option<Interval> {
        self.map.get(name).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(s: &str) -> Expr {
        Expr::parse(s).unwrap()
    }

    #[test]
    fn max_of_positive_size() {
        let r = SymbolRanges::new().with("s", 1, None);
        assert_eq!(simplify(&e("Max(s, 1)"), &r), e("s"));
        assert_eq!(
            simplify(&e("Max(s, 1)"), &SymbolRanges::new().with("s", 0, None)),
            e("Max(s, 1)")
        );
        assert_eq!(simplify(&e("2*Max(s, 1) + Min(s, 0)"), &r), e("2*s"));
        let b = BoolExpr::parse("Max(s, 1) == s").unwrap();
        assert_eq!(simplify_bool(&b, &r), BoolExpr::constant(true));
    }

    #[test]
    fn div_mod_with_ranges() {
        let r = SymbolRanges::new()
            .with("a", 0, Some(3))
            .with("b", 4, None)
            .with("c", 1, None);
        assert_eq!(simplify(&e("FloorDiv(a, b)"), &r), e("0"));
        assert_eq!(simplify(&e("Mod(a, b)"), &r), e("a"));
        assert_eq!(simplify(&e("FloorDiv(a*b, b)"), &r), e("a"));
        assert_eq!(simplify(&e("Mod(c*b, b)"), &r), e("0"));
        assert_eq!(simplify(&e("b*FloorDiv(a, b) + Mod(a, b)"), &r), e("a"));
        // Without a range, division by a symbol is left alone.
        assert_eq!(
            simplify(&e("FloorDiv(x*y, y)"), &SymbolRanges::new()),
            e("FloorDiv(x*y, y)")
        );
    }
}
