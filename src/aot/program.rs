//! Plan expressions compiled for dispatch: flat polynomial programs over a value slice.
//!
//! Instantiating a specialization evaluates a few dozen expressions (`4*c*h*w`, `h`, `0`)
//! per call. Going through [`Bindings`] (name lookups, exact arithmetic) would cost more
//! than the whole guard check, and evaluating each expression on its own repeats work: plan
//! entries are mostly monomials sharing factors (`c*w`, `c*h*w`, `4*c*h*w`). So the whole
//! list is compiled once into one straight-line program over registers (symbol values
//! first) with common subexpressions computed once, evaluated with checked `i64`
//! arithmetic into a stack register file, and read straight into the caller's plan.
//! Anything the flat form cannot express (`Max`, `FloorDiv`, ...) is evaluated exactly
//! in its step, and any overflow re-evaluates everything exactly, so the answer is always
//! [`Expr::eval`]'s.

use crate::error::{Error, Result};
use crate::iter::{OperandPlan, Plan};
use crate::sym::{Bindings, Expr};

/// One step of the straight-line program; step `i` defines register `nsym + i`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Instr {
    Const(i64),
    /// `r[a] * r[b]` (checked).
    Mul(u32, u32),
    /// `r[a] * k` (checked).
    MulK(u32, i64),
    /// `r[a] + r[b]` (checked).
    Add(u32, u32),
    /// `r[a] + k` (checked).
    AddK(u32, i64),
    /// Expression `k` evaluated exactly (not a plain `i64` polynomial).
    Exact(u32),
}

/// Register file size kept on the stack; larger programs use a heap buffer.
const STACK_REGS: usize = 32;

thread_local! {
    /// The register buffer of programs larger than [`STACK_REGS`] (reused across calls).
    static HEAP_REGS: std::cell::Cell<Vec<i64>> = const { std::cell::Cell::new(Vec::new()) };
}

/// A list of expressions compiled, for a fixed symbol order, into one straight-line program
/// over registers (the symbol values first, then one register per step). Common
/// subexpressions are computed once: every monomial is built from the largest monomial
/// already computed that divides it (`4*c*h*w` reuses `c*h*w`, which reuses `h*w`), and
/// identical steps are shared. All arithmetic is checked; on any overflow every expression
/// is re-evaluated exactly, so results and errors are always [`Expr::eval`]'s.
#[derive(Clone, Debug)]
pub(crate) struct ExprProgram {
    symbols: Vec<String>,
    instrs: Vec<Instr>,
    /// The non-constant steps with their destination register.
    steps: Vec<(u32, Instr)>,
    /// Initial register file (constants in place) for programs of at most `STACK_REGS`
    /// registers.
    init: [i64; STACK_REGS],
    /// Initial register file (constants in place) for larger programs (empty otherwise).
    init_heap: Vec<i64>,
    /// Register holding each expression's value.
    outs: Vec<u32>,
    exprs: Vec<Expr>,
}

/// `coef * Π v[i]` with the symbol indices sorted and repeated per exponent.
type FlatTerm = (i64, Vec<u32>);

struct Builder {
    nsym: u32,
    instrs: Vec<Instr>,
    memo: std::collections::HashMap<Instr, u32>,
    /// Monomials (sorted symbol multisets) already in a register.
    monos: Vec<(Vec<u32>, u32)>,
}

impl Builder {
    fn emit(&mut self, i: Instr) -> u32 {
        if let Some(&r) = self.memo.get(&i) {
            return r;
        }
        let r = self.nsym + self.instrs.len() as u32;
        self.instrs.push(i);
        if !matches!(i, Instr::Exact(_)) {
            self.memo.insert(i, r);
        }
        r
    }

    /// Register of the monomial `m` (sorted symbol indices, repeated per exponent).
    fn mono(&mut self, m: &[u32]) -> u32 {
        if m.len() == 1 {
            return m[0];
        }
        if let Some((_, r)) = self.monos.iter().find(|(x, _)| x[..] == *m) {
            return *r;
        }
        // Largest computed proper divisor, else split off the last factor.
        let best = self
            .monos
            .iter()
            .filter(|(x, _)| x.len() < m.len() && divides(x, m))
            .max_by_key(|(x, _)| x.len())
            .map(|(x, r)| (x.clone(), *r));
        let (a, rest) = match best {
            Some((x, r)) => (r, remove(m, &x)),
            None => (self.mono(&m[..m.len() - 1]), vec![m[m.len() - 1]]),
        };
        let b = self.mono(&rest);
        let (a, b) = (a.min(b), a.max(b));
        let r = self.emit(Instr::Mul(a, b));
        self.monos.push((m.to_vec(), r));
        r
    }
}

/// True when multiset `a` divides multiset `b` (both sorted).
fn divides(a: &[u32], b: &[u32]) -> bool {
    let mut j = 0;
    for x in a {
        while j < b.len() && b[j] < *x {
            j += 1;
        }
        if j == b.len() || b[j] != *x {
            return false;
        }
        j += 1;
    }
    true
}

/// `b / a` for multisets with `a` dividing `b`.
fn remove(b: &[u32], a: &[u32]) -> Vec<u32> {
    let mut out = b.to_vec();
    for x in a {
        if let Some(p) = out.iter().position(|y| y == x) {
            out.remove(p);
        }
    }
    out
}

impl ExprProgram {
    /// Compiles `exprs` for values given in `symbols` order. Fails if an expression mentions
    /// a symbol not in the list.
    pub(crate) fn new(symbols: &[String], exprs: Vec<Expr>) -> Result<ExprProgram> {
        let index = |s: &str| symbols.iter().position(|n| n == s);
        let mut polys: Vec<Option<Vec<FlatTerm>>> = Vec::with_capacity(exprs.len());
        for e in &exprs {
            for s in e.symbols() {
                if index(s.as_str()).is_none() {
                    return Err(Error::symbol(format!(
                        "expression `{e}` mentions unknown symbol `{s}`"
                    )));
                }
            }
            polys.push(e.polynomial_terms().and_then(|terms| {
                terms
                    .into_iter()
                    .map(|(coef, fs)| {
                        let mut m = Vec::new();
                        for (s, exp) in fs {
                            if exp > 16 {
                                return None;
                            }
                            let i = index(s.as_str())? as u32;
                            m.extend(std::iter::repeat_n(i, exp as usize));
                        }
                        m.sort_unstable();
                        Some((coef, m))
                    })
                    .collect::<Option<Vec<_>>>()
            }));
        }
        let mut b = Builder {
            nsym: symbols.len() as u32,
            instrs: Vec::new(),
            memo: Default::default(),
            monos: Vec::new(),
        };
        // Monomials by increasing degree, so that larger ones reuse smaller ones.
        let mut all: Vec<Vec<u32>> = polys
            .iter()
            .flatten()
            .flat_map(|ts| ts.iter().map(|(_, m)| m.clone()))
            .filter(|m| m.len() > 1)
            .collect();
        all.sort_by_key(|m| (m.len(), m.clone()));
        all.dedup();
        for m in &all {
            b.mono(m);
        }
        let mut outs = Vec::with_capacity(exprs.len());
        for (k, poly) in polys.iter().enumerate() {
            let r = match poly {
                None => b.emit(Instr::Exact(k as u32)),
                Some(ts) => {
                    let mut konst = 0i64;
                    let mut acc: Option<u32> = None;
                    for (coef, m) in ts {
                        if m.is_empty() {
                            konst = *coef;
                            continue;
                        }
                        let r = b.mono(m);
                        let t = if *coef == 1 {
                            r
                        } else {
                            b.emit(Instr::MulK(r, *coef))
                        };
                        acc = Some(match acc {
                            None => t,
                            Some(a) => b.emit(Instr::Add(a.min(t), a.max(t))),
                        });
                    }
                    match acc {
                        None => b.emit(Instr::Const(konst)),
                        Some(a) if konst == 0 => a,
                        Some(a) => b.emit(Instr::AddK(a, konst)),
                    }
                }
            };
            outs.push(r);
        }
        let nsym = symbols.len();
        let mut init = [0i64; STACK_REGS];
        let mut steps = Vec::with_capacity(b.instrs.len());
        for (i, ins) in b.instrs.iter().enumerate() {
            match *ins {
                Instr::Const(k) => {
                    if let Some(r) = init.get_mut(nsym + i) {
                        *r = k;
                    }
                }
                _ => steps.push(((nsym + i) as u32, *ins)),
            }
        }
        let n = nsym + b.instrs.len();
        let init_heap = if n > STACK_REGS {
            let mut v = vec![0i64; n];
            for (i, ins) in b.instrs.iter().enumerate() {
                if let Instr::Const(k) = ins {
                    v[nsym + i] = *k;
                }
            }
            v
        } else {
            Vec::new()
        };
        Ok(ExprProgram {
            symbols: symbols.to_vec(),
            steps,
            init,
            init_heap,
            instrs: b.instrs,
            outs,
            exprs,
        })
    }

    /// Runs the program on `regs` (symbol values and constants already in place);
    /// `None` on overflow or on an exact evaluation error.
    #[inline]
    fn run(&self, values: &[i64], regs: &mut [i64]) -> Option<()> {
        for &(dst, ins) in &self.steps {
            let v = match ins {
                Instr::Const(k) => k,
                Instr::Mul(a, b) => regs[a as usize].checked_mul(regs[b as usize])?,
                Instr::MulK(a, k) => regs[a as usize].checked_mul(k)?,
                Instr::Add(a, b) => regs[a as usize].checked_add(regs[b as usize])?,
                Instr::AddK(a, k) => regs[a as usize].checked_add(k)?,
                Instr::Exact(k) => self.exact(k as usize, values).ok()?,
            };
            regs[dst as usize] = v;
        }
        Some(())
    }

    /// Evaluates every expression at `values` and hands them to `f` (same answers and
    /// errors as [`Expr::eval`]).
    #[inline]
    pub(crate) fn with_values<R>(
        &self,
        values: &[i64],
        f: impl FnOnce(Evaluated<'_>) -> R,
    ) -> Result<R> {
        let nsym = self.symbols.len();
        if values.len() != nsym {
            return Err(Error::invalid(format!(
                "expected {nsym} symbol values, got {}",
                values.len()
            )));
        }
        let n = nsym + self.instrs.len();
        if n <= STACK_REGS {
            let mut stack = self.init;
            return self.eval_in(values, &mut stack[..n], f);
        }
        // Larger programs (a whole multi-step program's values) run in a per-thread
        // register buffer, taken out for the call so that a nested evaluation simply gets
        // a fresh one: no allocation once the buffer has grown.
        let mut heap = HEAP_REGS.with(std::cell::Cell::take);
        heap.clear();
        heap.extend_from_slice(&self.init_heap);
        let r = self.eval_in(values, &mut heap, f);
        HEAP_REGS.with(|c| c.set(heap));
        r
    }

    #[inline]
    fn eval_in<R>(
        &self,
        values: &[i64],
        regs: &mut [i64],
        f: impl FnOnce(Evaluated<'_>) -> R,
    ) -> Result<R> {
        let nsym = self.symbols.len();
        regs[..nsym].copy_from_slice(values);
        if self.run(values, regs).is_none() {
            // Exact values into the output registers (shared registers hold identical
            // expressions, hence identical values).
            for k in 0..self.outs.len() {
                regs[self.outs[k] as usize] = self.exact(k, values)?;
            }
        }
        Ok(f(Evaluated {
            regs,
            outs: &self.outs,
        }))
    }

    /// Number of expressions.
    pub(crate) fn len(&self) -> usize {
        self.outs.len()
    }

    /// Number of straight-line steps (shared subexpressions counted once).
    pub(crate) fn steps(&self) -> usize {
        self.instrs.len()
    }

    #[cold]
    fn exact(&self, k: usize, values: &[i64]) -> Result<i64> {
        if values.len() != self.symbols.len() {
            return Err(Error::invalid(format!(
                "expected {} symbol values, got {}",
                self.symbols.len(),
                values.len()
            )));
        }
        let b = Bindings::from_pairs(
            self.symbols
                .iter()
                .map(String::as_str)
                .zip(values.iter().copied()),
        );
        self.exprs[k].eval(&b)
    }
}

/// The values of a program's expressions at one binding.
#[derive(Clone, Copy)]
pub(crate) struct Evaluated<'a> {
    regs: &'a [i64],
    outs: &'a [u32],
}

impl Evaluated<'_> {
    /// Value of expression `k`.
    #[inline(always)]
    pub(crate) fn get(&self, k: usize) -> i64 {
        self.regs[self.outs[k] as usize]
    }
}

/// A symbolic plan compiled for instantiation: the plan's integers in a fixed order
/// (shape, then each operand's byte strides and offset, then the broadcast shape, then the
/// output strides) plus the plan's non-integer structure.
#[derive(Clone, Debug)]
pub(crate) struct PlanProgram {
    program: ExprProgram,
    ndim: usize,
    rank: usize,
    skeleton: Plan<i64>,
    /// Whether instantiation coalesces the plan again (see [`PlanProgram::instantiate_into`]).
    coalesce: bool,
}

fn flatten(plan: &Plan<Expr>) -> Vec<Expr> {
    let mut v = plan.shape.clone();
    for op in &plan.operands {
        v.extend(op.byte_strides.iter().cloned());
        v.push(op.offset.clone());
    }
    v.extend(plan.broadcast_shape.iter().cloned());
    for s in &plan.output_strides {
        v.extend(s.iter().cloned());
    }
    v
}

impl PlanProgram {
    /// Compiles `plan`, whose structure must already be consistent (every operand has
    /// `plan.shape.len()` strides, every output stride list has the broadcast rank).
    pub(crate) fn new(symbols: &[String], plan: &Plan<Expr>) -> Result<PlanProgram> {
        let ndim = plan.shape.len();
        let rank = plan.broadcast_shape.len();
        for (k, op) in plan.operands.iter().enumerate() {
            if op.byte_strides.len() != ndim {
                return Err(Error::invalid(format!(
                    "operand {k} has {} strides for {ndim} iteration dims",
                    op.byte_strides.len()
                )));
            }
        }
        for (k, s) in plan.output_strides.iter().enumerate() {
            if s.len() != rank {
                return Err(Error::invalid(format!(
                    "output {k} has {} strides for rank {rank}",
                    s.len()
                )));
            }
        }
        let skeleton = Plan {
            shape: vec![0; ndim],
            operands: plan
                .operands
                .iter()
                .map(|op| OperandPlan {
                    byte_strides: vec![0; ndim],
                    offset: 0,
                    element_size: op.element_size,
                    is_output: op.is_output,
                })
                .collect(),
            num_outputs: plan.num_outputs,
            broadcast_shape: vec![0; rank],
            output_strides: vec![vec![0; rank]; plan.output_strides.len()],
            perm: plan.perm.clone(),
        };
        Ok(PlanProgram {
            program: ExprProgram::new(symbols, flatten(plan))?,
            ndim,
            rank,
            skeleton,
            coalesce: true,
        })
    }

    /// Whether instantiation coalesces the plan again: on (the safe choice) until a
    /// verification proved it unneeded (see [`PlanProgram::instantiate_into`]).
    pub(crate) fn coalesces(&self) -> bool {
        self.coalesce
    }

    /// Sets [`PlanProgram::coalesces`]; off only where a verification proved every binding
    /// of the guards gets the fresh build's plan without it.
    pub(crate) fn set_coalesce(&mut self, on: bool) {
        self.coalesce = on;
    }

    /// A fresh plan with this structure (integers zero), to instantiate into.
    pub(crate) fn skeleton(&self) -> Plan<i64> {
        self.skeleton.clone()
    }

    /// Evaluates the plan at `values` into `out`, reusing its allocations (none when `out`
    /// already has this plan's structure): every integer is written straight from the
    /// program's registers.
    pub(crate) fn instantiate_into(&self, values: &[i64], out: &mut Plan<i64>) -> Result<()> {
        if !same_lengths(out, &self.skeleton) {
            out.clone_from(&self.skeleton);
        }
        self.program.with_values(values, |v| {
            let mut outs = v.outs;
            let regs = v.regs;
            let mut fill = |dst: &mut [i64]| {
                let (head, rest) = outs.split_at(dst.len().min(outs.len()));
                for (x, &r) in dst.iter_mut().zip(head) {
                    *x = regs[r as usize];
                }
                outs = rest;
            };
            fill(&mut out.shape);
            for (op, sk) in out.operands.iter_mut().zip(&self.skeleton.operands) {
                fill(&mut op.byte_strides);
                fill(std::slice::from_mut(&mut op.offset));
                op.element_size = sk.element_size;
                op.is_output = sk.is_output;
            }
            fill(&mut out.broadcast_shape);
            for s in out.output_strides.iter_mut() {
                fill(s);
            }
        })?;
        out.num_outputs = self.skeleton.num_outputs;
        for (x, y) in out.perm.iter_mut().zip(&self.skeleton.perm) {
            *x = *y;
        }
        // An empty output at these values: the plan in the form the concrete build gives
        // it (a specialization widened to several zero patterns keeps one plan's iteration
        // part, which no binding of an empty output ever runs).
        if out.broadcast_shape.contains(&0) {
            out.canonicalize_empty();
        } else if self.coalesce {
            // A specialization a cover widened to bindings where some of its iteration
            // dimensions have size 1 (`a == 1` next to `a >= 2`): coalesced again, its plan
            // is the fresh build's there (the cover proved it; `cover::plan_agrees`). On
            // the bindings of its own trace this is a no-op. Off where the loader's (or
            // the compile's) verification found every region's plan equal to the stored
            // one without coalescing (`retrace::Verification::coalesced`): a third of a
            // cached dispatch (0.09 -> 0.12 us) for nothing.
            out.coalesce()?;
        }
        Ok(())
    }

    /// The output layout only (sizes, strides of output 0) at `values`.
    pub(crate) fn output_layout(&self, values: &[i64]) -> Result<(Vec<i64>, Vec<i64>)> {
        let base = self.ndim + self.skeleton.operands.len() * (self.ndim + 1);
        let r = self.rank;
        self.program.with_values(values, |v| {
            let sizes = (0..r).map(|d| v.get(base + d)).collect();
            let strides = (0..r).map(|d| v.get(base + r + d)).collect();
            (sizes, strides)
        })
    }
}

/// True when every vector of `a` has the length of `b`'s (the rest is overwritten).
fn same_lengths(a: &Plan<i64>, b: &Plan<i64>) -> bool {
    a.shape.len() == b.shape.len()
        && a.broadcast_shape.len() == b.broadcast_shape.len()
        && a.operands.len() == b.operands.len()
        && a.operands
            .iter()
            .zip(&b.operands)
            .all(|(x, y)| x.byte_strides.len() == y.byte_strides.len())
        && a.perm.len() == b.perm.len()
        && a.output_strides.len() == b.output_strides.len()
        && a.output_strides
            .iter()
            .zip(&b.output_strides)
            .all(|(x, y)| x.len() == y.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_matches_exact() {
        let syms = vec!["a".to_string(), "b".to_string()];
        let lists: [&[&str]; 3] = [
            &["4*a*b**2 - 3", "Max(a, b) + 1", "7", "a*b"],
            &[
                "a*b",
                "4*a*b",
                "a**2*b",
                "2*a**2*b - a*b + 5",
                "0",
                "b",
                "a*b*a*b",
            ],
            &["4*a*b**2 - 3", "a + b", "3*a*b - 2*b"],
        ];
        for list in lists {
            let exprs: Vec<Expr> = list.iter().map(|s| Expr::parse(s).unwrap()).collect();
            let p = ExprProgram::new(&syms, exprs.clone()).unwrap();
            for a in [0, 1, 5, 1 << 20, i64::MAX / 2, i64::MAX] {
                for b in [0, 1, 3, 1 << 21, i64::MAX] {
                    let bind = Bindings::from_pairs([("a", a), ("b", b)]);
                    // All values, or the first expression's error.
                    let want: Result<Vec<i64>> = exprs.iter().map(|e| e.eval(&bind)).collect();
                    let got =
                        p.with_values(&[a, b], |v| (0..exprs.len()).map(|k| v.get(k)).collect());
                    assert_eq!(got, want, "{list:?} a={a} b={b}");
                }
            }
        }
        assert!(ExprProgram::new(&syms, vec![Expr::parse("z").unwrap()]).is_err());
    }

    #[test]
    fn programs_beyond_the_stack_registers_match_exact() {
        let syms = vec!["a".to_string(), "b".to_string()];
        let exprs: Vec<Expr> = (0..40)
            .map(|k| Expr::parse(&format!("{k}*a*b + {k}*a + Max(a, {k})")).unwrap())
            .collect();
        let p = ExprProgram::new(&syms, exprs.clone()).unwrap();
        assert!(syms.len() + p.instrs.len() > STACK_REGS);
        for (a, b) in [(3, 4), (0, 7), (i64::MAX / 8, 2), (i64::MAX, i64::MAX)] {
            let bind = Bindings::from_pairs([("a", a), ("b", b)]);
            let want: Result<Vec<i64>> = exprs.iter().map(|e| e.eval(&bind)).collect();
            // Twice: the second call reuses the per-thread register buffer.
            for _ in 0..2 {
                let got = p.with_values(&[a, b], |v| (0..40).map(|k| v.get(k)).collect());
                assert_eq!(got, want, "a={a} b={b}");
            }
        }
    }

    #[test]
    fn shared_factors_are_computed_once() {
        let syms: Vec<String> = ["c", "h", "w"].iter().map(|s| s.to_string()).collect();
        let exprs: Vec<Expr> = [
            "4*c*h*w", "c*h*w", "c*w", "h*w", "4*h*w", "4*c*h*w", "c", "2",
        ]
        .iter()
        .map(|s| Expr::parse(s).unwrap())
        .collect();
        let p = ExprProgram::new(&syms, exprs).unwrap();
        // h*w, c*w, c*(h*w) or (c*w)*h, 4*c*h*w, 4*h*w, the constant: six steps.
        assert_eq!(p.instrs.len(), 6, "{:?}", p.instrs);
        let got = p.with_values(&[3, 4, 5], |v| (0..8).map(|k| v.get(k)).collect::<Vec<_>>());
        assert_eq!(got.unwrap(), vec![240, 60, 15, 20, 80, 240, 3, 2]);
    }
}
