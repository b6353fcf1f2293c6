//! Guards compiled to a flat postfix program over a slice of symbol values.
//!
//! Dispatch checks a plan's guards on every call, so evaluation must cost nanoseconds: no
//! map lookups, no allocation, no recursion. Each guard becomes a short postfix program run
//! on a fixed-size `i64` stack with checked arithmetic. If anything unusual happens (an
//! overflow, a division by zero, a coefficient beyond `i64`), that one guard is re-evaluated
//! by the exact evaluator, so the answer (or error) is always the same as [`GuardSet::eval`].

use super::boolexpr::{BoolExpr, BoolKind, Rel};
use super::eval::eval_bool_with;
use super::expr::{Atom, Expr, FuncKind, Symbol};
use super::guards::GuardSet;
use crate::error::{Error, Result};
use num_integer::Integer;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Const(i64),
    Sym(u32),
    Add,
    Mul,
    MulConst(i64),
    Pow(u32),
    FloorDiv,
    Mod,
    Max,
    Min,
    Le0,
    Eq0,
    Ne0,
    And,
    Or,
}

const STACK: usize = 16;

/// Guards compiled for a fixed symbol order; see [`GuardSet::compile`].
#[derive(Clone, Debug)]
pub struct CompiledGuards {
    /// Checks in guard order; a guard that is a conjunction has one check per conjunct.
    checks: Vec<Check>,
    /// Postfix programs (for checks that are not plain polynomial comparisons).
    ops: Vec<Op>,
    /// Polynomial terms: coefficient and a range of `factors`.
    terms: Vec<(i64, u32, u32)>,
    /// Symbol indices of the monomials (a symbol repeats for its exponent).
    factors: Vec<u32>,
    symbols: Vec<Symbol>,
    conds: Vec<BoolExpr>,
    /// When every check is a single-symbol range: the checks as
    /// `(x, lo, span, negate, guard)`, holding iff `((v - lo) as u64 <= span) != negate`.
    ranges: Option<Vec<RangeCheck>>,
}

#[derive(Clone, Copy, Debug)]
struct RangeCheck {
    lo: i64,
    span: u64,
    x: u32,
    guard: u32,
    negate: bool,
}

#[derive(Clone, Copy, Debug)]
enum CheckKind {
    /// `(lo <= x <= hi) != negate` for one symbol `x`: a single-symbol linear comparison
    /// `c * x + k REL 0` solved for `x` at compile time (the most common guard: `s >= 2`,
    /// `s != 1`), exact for every `x`, no arithmetic at evaluation.
    Range {
        x: u32,
        lo: i64,
        hi: i64,
        negate: bool,
    },
    /// `sum(terms) + k REL 0`, evaluated in checked `i64`.
    Poly { rel: Rel, k: i64, t0: u32, t1: u32 },
    /// A postfix program `ops[o0..o1]`.
    Program { o0: u32, o1: u32 },
    /// Not compilable (huge constants, deep nesting): exact evaluation.
    Exact,
}

#[derive(Clone, Copy, Debug)]
struct Check {
    guard: u32,
    kind: CheckKind,
}

struct Compiler<'a> {
    ops: Vec<Op>,
    symbols: &'a [Symbol],
    depth: usize,
    max_depth: usize,
    ok: bool,
}

impl Compiler<'_> {
    fn push(&mut self, op: Op) {
        match op {
            Op::Const(_) | Op::Sym(_) => {
                self.depth += 1;
                self.max_depth = self.max_depth.max(self.depth);
            }
            Op::MulConst(_) | Op::Pow(_) | Op::Le0 | Op::Eq0 | Op::Ne0 => {}
            _ => self.depth -= 1,
        }
        self.ops.push(op);
    }

    fn expr(&mut self, e: &Expr) -> Result<()> {
        if e.terms().is_empty() {
            self.push(Op::Const(0));
            return Ok(());
        }
        for (i, t) in e.terms().iter().enumerate() {
            let Some(c) = t.coef.as_i64() else {
                self.ok = false;
                self.push(Op::Const(0));
                if i > 0 {
                    self.push(Op::Add);
                }
                continue;
            };
            if t.mono.is_empty() {
                self.push(Op::Const(c));
            } else {
                for (j, (a, exp)) in t.mono.iter().enumerate() {
                    self.atom(a)?;
                    if *exp != 1 {
                        self.push(Op::Pow(*exp));
                    }
                    if j > 0 {
                        self.push(Op::Mul);
                    }
                }
                if c != 1 {
                    self.push(Op::MulConst(c));
                }
            }
            if i > 0 {
                self.push(Op::Add);
            }
        }
        Ok(())
    }

    fn atom(&mut self, a: &Atom) -> Result<()> {
        match a {
            Atom::Sym(s) => {
                let idx = self.symbols.iter().position(|x| x == s).ok_or_else(|| {
                    Error::symbol(format!(
                        "guard mentions symbol `{s}`, which is not in the compiled symbol order"
                    ))
                })?;
                self.push(Op::Sym(idx as u32));
            }
            Atom::Func(f) => {
                for (i, arg) in f.args.iter().enumerate() {
                    self.expr(arg)?;
                    if i > 0 {
                        self.push(match f.kind {
                            FuncKind::FloorDiv => Op::FloorDiv,
                            FuncKind::Mod => Op::Mod,
                            FuncKind::Max => Op::Max,
                            FuncKind::Min => Op::Min,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    fn cond(&mut self, b: &BoolExpr) -> Result<()> {
        match b.kind() {
            BoolKind::Const(v) => self.push(Op::Const(*v as i64)),
            BoolKind::Cmp(rel, p) => {
                self.expr(p)?;
                self.push(match rel {
                    Rel::Le => Op::Le0,
                    Rel::Eq => Op::Eq0,
                    Rel::Ne => Op::Ne0,
                });
            }
            BoolKind::And(v) | BoolKind::Or(v) => {
                let op = if matches!(b.kind(), BoolKind::And(_)) {
                    Op::And
                } else {
                    Op::Or
                };
                for (i, x) in v.iter().enumerate() {
                    self.cond(x)?;
                    if i > 0 {
                        self.push(op);
                    }
                }
            }
        }
        Ok(())
    }
}

impl GuardSet {
    /// Compiles the guards for evaluation on a slice of values given in `symbol_order`.
    /// Fails if a guard mentions a symbol that is not in `symbol_order`.
    pub fn compile<S: AsRef<str>>(&self, symbol_order: &[S]) -> Result<CompiledGuards> {
        let symbols: Vec<Symbol> = symbol_order
            .iter()
            .map(|s| Symbol::new(s.as_ref()))
            .collect();
        let mut out = CompiledGuards {
            checks: Vec::new(),
            ops: Vec::new(),
            terms: Vec::new(),
            factors: Vec::new(),
            symbols,
            conds: self.guards.iter().map(|g| g.cond.clone()).collect(),
            ranges: None,
        };
        for (gi, g) in self.guards.iter().enumerate() {
            let parts: Vec<&BoolExpr> = match g.cond.kind() {
                BoolKind::And(v) => v.iter().collect(),
                _ => vec![&g.cond],
            };
            for part in parts {
                let kind = out.compile_part(part)?;
                out.checks.push(Check {
                    guard: gi as u32,
                    kind,
                });
            }
        }
        out.ranges = out
            .checks
            .iter()
            .map(|ch| match ch.kind {
                CheckKind::Range { x, lo, hi, negate } => Some(if lo <= hi {
                    RangeCheck {
                        lo,
                        span: hi.wrapping_sub(lo) as u64,
                        x,
                        guard: ch.guard,
                        negate,
                    }
                } else {
                    // Empty: the negation of the full range.
                    RangeCheck {
                        lo: i64::MIN,
                        span: u64::MAX,
                        x,
                        guard: ch.guard,
                        negate: !negate,
                    }
                }),
                _ => None,
            })
            .collect();
        Ok(out)
    }
}

impl CompiledGuards {
    fn sym_index(&self, s: &Symbol) -> Result<u32> {
        self.symbols
            .iter()
            .position(|x| x == s)
            .map(|i| i as u32)
            .ok_or_else(|| {
                Error::symbol(format!(
                    "guard mentions symbol `{s}`, which is not in the compiled symbol order"
                ))
            })
    }

    /// A plain polynomial comparison, if `b` is one with `i64` coefficients.
    fn compile_poly(&mut self, b: &BoolExpr) -> Result<Option<CheckKind>> {
        let Some((rel, p)) = b.as_cmp() else {
            return Ok(None);
        };
        if p.has_non_polynomial() {
            return Ok(None);
        }
        let mut k = 0i64;
        let mut terms = Vec::new();
        let mut factors = Vec::new();
        for t in p.terms() {
            let Some(c) = t.coef.as_i64() else {
                return Ok(None);
            };
            if t.mono.is_empty() {
                k = c;
                continue;
            }
            let f0 = (self.factors.len() + factors.len()) as u32;
            for (a, e) in &t.mono {
                let Atom::Sym(s) = a else { return Ok(None) };
                let idx = self.sym_index(s)?;
                if *e > 8 {
                    return Ok(None);
                }
                for _ in 0..*e {
                    factors.push(idx);
                }
            }
            terms.push((c, f0, (self.factors.len() + factors.len()) as u32));
        }
        if let [(c, f0, f1)] = terms[..] {
            if f1 == f0 + 1 {
                let (lo, hi, negate) = solve_linear(rel, c, k);
                return Ok(Some(CheckKind::Range {
                    x: factors[0],
                    lo,
                    hi,
                    negate,
                }));
            }
        }
        let t0 = self.terms.len() as u32;
        self.terms.extend(terms);
        self.factors.extend(factors);
        Ok(Some(CheckKind::Poly {
            rel,
            k,
            t0,
            t1: self.terms.len() as u32,
        }))
    }

    fn compile_part(&mut self, b: &BoolExpr) -> Result<CheckKind> {
        if let Some(kind) = self.compile_poly(b)? {
            return Ok(kind);
        }
        let mut c = Compiler {
            ops: Vec::new(),
            symbols: &self.symbols,
            depth: 0,
            max_depth: 0,
            ok: true,
        };
        c.cond(b)?;
        if !c.ok || c.max_depth > STACK {
            return Ok(CheckKind::Exact);
        }
        let o0 = self.ops.len() as u32;
        self.ops.extend_from_slice(&c.ops);
        Ok(CheckKind::Program {
            o0,
            o1: self.ops.len() as u32,
        })
    }

    /// `Some(holds)`, or `None` when the checked arithmetic overflowed.
    #[inline(always)]
    fn poly(&self, rel: Rel, k: i64, t0: u32, t1: u32, vals: &[i64]) -> Option<bool> {
        let mut acc = k;
        for &(c, f0, f1) in &self.terms[t0 as usize..t1 as usize] {
            let mut v = c;
            for &f in &self.factors[f0 as usize..f1 as usize] {
                v = v.checked_mul(*vals.get(f as usize)?)?;
            }
            acc = acc.checked_add(v)?;
        }
        Some(match rel {
            Rel::Le => acc <= 0,
            Rel::Eq => acc == 0,
            Rel::Ne => acc != 0,
        })
    }
}

/// The integers `x` with `c*x + k REL 0` (`c != 0`) as `(lo <= x <= hi) != negate`, in
/// exact arithmetic (an empty range is `lo > hi`).
fn solve_linear(rel: Rel, c: i64, k: i64) -> (i64, i64, bool) {
    let (c, k) = (c as i128, k as i128);
    let clamp = |v: i128| v.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
    let empty = (i64::MAX, i64::MIN);
    if c == 0 {
        // Not produced by the canonical form; a constant condition either way.
        let holds = match rel {
            Rel::Le => k <= 0,
            Rel::Eq => k == 0,
            Rel::Ne => k != 0,
        };
        return (i64::MIN, i64::MAX, !holds);
    }
    match rel {
        // c*x <= -k
        Rel::Le => {
            if c > 0 {
                let hi = Integer::div_floor(&-k, &c);
                if hi < i64::MIN as i128 {
                    (empty.0, empty.1, false)
                } else {
                    (i64::MIN, clamp(hi), false)
                }
            } else {
                let lo = Integer::div_ceil(&k, &-c);
                if lo > i64::MAX as i128 {
                    (empty.0, empty.1, false)
                } else {
                    (clamp(lo), i64::MAX, false)
                }
            }
        }
        Rel::Eq | Rel::Ne => {
            let negate = rel == Rel::Ne;
            if c == 0 || (-k) % c != 0 {
                return (empty.0, empty.1, negate);
            }
            let v = -k / c;
            if v < i64::MIN as i128 || v > i64::MAX as i128 {
                (empty.0, empty.1, negate)
            } else {
                (v as i64, v as i64, negate)
            }
        }
    }
}

#[inline(always)]
fn run(ops: &[Op], vals: &[i64], st: &mut [i64; STACK]) -> Option<bool> {
    let mut sp = 0usize;
    for op in ops {
        match *op {
            Op::Const(c) => {
                *st.get_mut(sp)? = c;
                sp += 1;
            }
            Op::Sym(i) => {
                *st.get_mut(sp)? = *vals.get(i as usize)?;
                sp += 1;
            }
            Op::MulConst(c) => st[sp - 1] = st[sp - 1].checked_mul(c)?,
            Op::Pow(e) => st[sp - 1] = st[sp - 1].checked_pow(e)?,
            Op::Le0 => st[sp - 1] = (st[sp - 1] <= 0) as i64,
            Op::Eq0 => st[sp - 1] = (st[sp - 1] == 0) as i64,
            Op::Ne0 => st[sp - 1] = (st[sp - 1] != 0) as i64,
            op => {
                sp -= 1;
                let (a, b) = (st[sp - 1], st[sp]);
                st[sp - 1] = match op {
                    Op::Add => a.checked_add(b)?,
                    Op::Mul => a.checked_mul(b)?,
                    Op::FloorDiv => {
                        if b == 0 || (a == i64::MIN && b == -1) {
                            return None;
                        }
                        Integer::div_floor(&a, &b)
                    }
                    Op::Mod => {
                        if b == 0 {
                            return None;
                        }
                        if b == -1 {
                            0
                        } else {
                            Integer::mod_floor(&a, &b)
                        }
                    }
                    Op::Max => a.max(b),
                    Op::Min => a.min(b),
                    Op::And => a & b,
                    _ => a | b,
                };
            }
        }
    }
    Some(st[0] != 0)
}

impl CompiledGuards {
    /// The symbol order the values slice follows.
    pub fn symbols(&self) -> &[Symbol] {
        &self.symbols
    }

    /// Number of guards.
    pub fn len(&self) -> usize {
        self.conds.len()
    }

    /// True when there is no guard.
    pub fn is_empty(&self) -> bool {
        self.conds.is_empty()
    }

    /// Index of the first guard that does not hold for `values` (in the compiled symbol
    /// order), `None` when all hold. Same answers and errors as [`GuardSet::eval`].
    pub fn eval(&self, values: &[i64]) -> Result<Option<usize>> {
        if values.len() != self.symbols.len() {
            return Err(Error::invalid(format!(
                "compiled guards expect {} symbol values ({}), got {}",
                self.symbols.len(),
                self.symbols
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                values.len()
            )));
        }
        if let Some(ranges) = &self.ranges {
            for r in ranges {
                let v = values[r.x as usize];
                if ((v.wrapping_sub(r.lo) as u64) <= r.span) == r.negate {
                    return Ok(Some(r.guard as usize));
                }
            }
            return Ok(None);
        }
        let mut st = [0i64; STACK];
        for ch in &self.checks {
            let fast = match ch.kind {
                CheckKind::Range { x, lo, hi, negate } => values
                    .get(x as usize)
                    .map(|&v| (lo <= v && v <= hi) != negate),
                CheckKind::Poly { rel, k, t0, t1 } => self.poly(rel, k, t0, t1, values),
                CheckKind::Program { o0, o1 } => {
                    run(&self.ops[o0 as usize..o1 as usize], values, &mut st)
                }
                CheckKind::Exact => None,
            };
            let ok = match fast {
                Some(v) => v,
                None => self.exact(ch.guard as usize, values)?,
            };
            if !ok {
                return Ok(Some(ch.guard as usize));
            }
        }
        Ok(None)
    }

    #[cold]
    fn exact(&self, i: usize, values: &[i64]) -> Result<bool> {
        let look = |s: &Symbol| self.symbols.iter().position(|x| x == s).map(|j| values[j]);
        eval_bool_with(&self.conds[i], &look)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sym::{Bindings, Guard};

    fn set(conds: &[&str]) -> GuardSet {
        GuardSet::from(
            conds
                .iter()
                .map(|c| Guard {
                    cond: BoolExpr::parse(c).unwrap(),
                    reason: String::new(),
                })
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn linear_ranges_are_exact() {
        let big = [
            i64::MIN,
            i64::MIN + 1,
            -7,
            -1,
            0,
            1,
            2,
            3,
            7,
            i64::MAX - 1,
            i64::MAX,
        ];
        for rel in [Rel::Le, Rel::Eq, Rel::Ne] {
            for c in [-7i64, -3, -1, 0, 1, 2, 5, i64::MAX, i64::MIN] {
                for k in big.iter().copied().chain([-10, -4, 4, 10]) {
                    let (lo, hi, neg) = solve_linear(rel, c, k);
                    for x in big.iter().copied().chain(-12..12) {
                        let v = c as i128 * x as i128 + k as i128;
                        let want = match rel {
                            Rel::Le => v <= 0,
                            Rel::Eq => v == 0,
                            Rel::Ne => v != 0,
                        };
                        assert_eq!(
                            (lo <= x && x <= hi) != neg,
                            want,
                            "{rel:?} c={c} k={k} x={x}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn range_only_guards_match_naive() {
        for conds in [
            &["a >= 1", "b >= 1", "a >= 2", "b != 1", "a != 1"][..],
            &["2*a >= 7", "b == 3", "a <= 5"][..],
            &["3*a <= 7", "b != 0"][..],
        ] {
            let g = set(conds);
            let c = g.compile(&["a", "b"]).unwrap();
            assert!(c.ranges.is_some(), "{conds:?} {:?}", c.checks);
            for a in [i64::MIN, -1, 0, 1, 2, 3, 4, 5, 6, i64::MAX] {
                for b in [i64::MIN, 0, 1, 2, 3, i64::MAX] {
                    let naive = g
                        .eval(&Bindings::from_pairs([("a", a), ("b", b)]))
                        .map(|r| r.failed());
                    assert_eq!(naive, c.eval(&[a, b]), "{conds:?} a={a} b={b}");
                }
            }
        }
    }

    #[test]
    fn compiled_matches_naive() {
        let g = set(&[
            "a >= 2",
            "a*b != 1",
            "FloorDiv(a, b) <= 3 || Mod(a, 3) == 1",
            "Max(a, b, 2) == a && b <= 10",
            "a**2 - b >= 0",
            "FloorDiv(a, b - 3) >= 0",
        ]);
        let c = g.compile(&["a", "b"]).unwrap();
        for a in [-3, 0, 1, 2, 5, 9, i64::MAX, i64::MIN] {
            for b in [-2, 0, 1, 3, 4, 11, i64::MAX] {
                let naive = g
                    .eval(&Bindings::from_pairs([("a", a), ("b", b)]))
                    .map(|r| r.failed());
                let fast = c.eval(&[a, b]);
                assert_eq!(naive, fast, "a={a} b={b}");
            }
        }
        assert!(g.compile(&["a"]).is_err());
        assert!(c.eval(&[1]).is_err());
    }
}
