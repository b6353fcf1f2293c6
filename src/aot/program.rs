//! Plan expressions compiled for dispatch: flat polynomial programs over a value slice.
//!
//! Instantiating a specialization evaluates a few dozen expressions (`4*c*h*w`, `h`, `0`)
//! per call. Going through [`Bindings`] (name lookups, exact arithmetic) would cost more
//! than the whole guard check, so each expression is compiled once into a list of terms
//! `coef * Π v[i]^e` evaluated with checked `i64` arithmetic. Anything the flat form cannot
//! express (`Max`, `FloorDiv`, ...) or any overflow falls back to the exact evaluator, so
//! the answer is always [`Expr::eval`]'s.

use crate::error::{Error, Result};
use crate::iter::{OperandPlan, Plan};
use crate::sym::{Bindings, Expr};
use smallvec::SmallVec;

#[derive(Clone, Copy, Debug)]
struct Term {
    coef: i64,
    start: u32,
    end: u32,
}

#[derive(Clone, Debug)]
enum Slot {
    Const(i64),
    /// A bare symbol (the most common plan entry: a size).
    Sym(u32),
    /// One term `coef * Π v[i]^e` (strides are monomials).
    Mono(Term),
    Poly {
        start: u32,
        end: u32,
    },
    Exact,
}

/// A list of expressions compiled for a fixed symbol order.
#[derive(Clone, Debug)]
pub(crate) struct ExprProgram {
    symbols: Vec<String>,
    slots: Vec<Slot>,
    terms: Vec<Term>,
    factors: Vec<(u32, u32)>,
    exprs: Vec<Expr>,
    /// Indices of the non-constant slots.
    varying: Vec<u32>,
    /// Every slot's value if constant, else 0.
    consts: Vec<i64>,
}

impl ExprProgram {
    /// Compiles `exprs` for values given in `symbols` order. Fails if an expression mentions
    /// a symbol not in the list.
    pub(crate) fn new(symbols: &[String], exprs: Vec<Expr>) -> Result<ExprProgram> {
        let mut p = ExprProgram {
            symbols: symbols.to_vec(),
            slots: Vec::with_capacity(exprs.len()),
            terms: Vec::new(),
            factors: Vec::new(),
            exprs: Vec::new(),
            varying: Vec::new(),
            consts: Vec::new(),
        };
        for e in &exprs {
            for s in e.symbols() {
                if !symbols.iter().any(|n| n == s.as_str()) {
                    return Err(Error::symbol(format!(
                        "expression `{e}` mentions unknown symbol `{s}`"
                    )));
                }
            }
            let slot = if let Some(c) = e.as_const() {
                Slot::Const(c)
            } else if let Some(i) = e
                .as_symbol()
                .and_then(|s| symbols.iter().position(|n| n == s.as_str()))
            {
                Slot::Sym(i as u32)
            } else if let Some(terms) = e.polynomial_terms() {
                let start = p.terms.len() as u32;
                for (coef, fs) in terms {
                    let fstart = p.factors.len() as u32;
                    for (s, exp) in fs {
                        let i = symbols.iter().position(|n| n == s.as_str()).unwrap_or(0);
                        p.factors.push((i as u32, exp));
                    }
                    p.terms.push(Term {
                        coef,
                        start: fstart,
                        end: p.factors.len() as u32,
                    });
                }
                if p.terms.len() as u32 == start + 1 {
                    Slot::Mono(p.terms.pop().unwrap_or(Term {
                        coef: 0,
                        start: 0,
                        end: 0,
                    }))
                } else {
                    Slot::Poly {
                        start,
                        end: p.terms.len() as u32,
                    }
                }
            } else {
                Slot::Exact
            };
            p.slots.push(slot);
        }
        p.exprs = exprs;
        for (k, slot) in p.slots.iter().enumerate() {
            match slot {
                Slot::Const(c) => p.consts.push(*c),
                _ => {
                    p.consts.push(0);
                    p.varying.push(k as u32);
                }
            }
        }
        Ok(p)
    }

    /// Number of expressions.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    #[inline(always)]
    fn term(&self, t: &Term, values: &[i64]) -> Option<i64> {
        let mut v = t.coef;
        for &(i, e) in &self.factors[t.start as usize..t.end as usize] {
            let x = *values.get(i as usize)?;
            let p = if e == 1 { x } else { x.checked_pow(e)? };
            v = v.checked_mul(p)?;
        }
        Some(v)
    }

    #[inline]
    fn fast(&self, start: u32, end: u32, values: &[i64]) -> Option<i64> {
        let mut acc: i64 = 0;
        for t in &self.terms[start as usize..end as usize] {
            acc = acc.checked_add(self.term(t, values)?)?;
        }
        Some(acc)
    }

    /// Value of expression `k` at `values` (same answer and errors as [`Expr::eval`]).
    #[inline]
    pub(crate) fn eval(&self, k: usize, values: &[i64]) -> Result<i64> {
        match &self.slots[k] {
            Slot::Const(c) => Ok(*c),
            Slot::Sym(i) => match values.get(*i as usize) {
                Some(v) => Ok(*v),
                None => self.exact(k, values),
            },
            Slot::Mono(t) => match self.term(t, values) {
                Some(v) => Ok(v),
                None => self.exact(k, values),
            },
            Slot::Poly { start, end } => match self.fast(*start, *end, values) {
                Some(v) => Ok(v),
                None => self.exact(k, values),
            },
            Slot::Exact => self.exact(k, values),
        }
    }

    /// Evaluates the non-constant expressions into `out` (same length as the program;
    /// constant entries are left as they are: the caller pre-fills them).
    #[inline]
    pub(crate) fn eval_all(&self, values: &[i64], out: &mut [i64]) -> Result<()> {
        for &k in &self.varying {
            let k = k as usize;
            let fast = match &self.slots[k] {
                Slot::Const(c) => Some(*c),
                Slot::Sym(i) => values.get(*i as usize).copied(),
                Slot::Mono(t) => self.term(t, values),
                Slot::Poly { start, end } => self.fast(*start, *end, values),
                Slot::Exact => None,
            };
            out[k] = match fast {
                Some(v) => v,
                None => self.exact(k, values)?,
            };
        }
        Ok(())
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

/// A symbolic plan compiled for instantiation: the plan's integers in a fixed order
/// (shape, then each operand's byte strides and offset, then the broadcast shape, then the
/// output strides) plus the plan's non-integer structure.
#[derive(Clone, Debug)]
pub(crate) struct PlanProgram {
    program: ExprProgram,
    ndim: usize,
    rank: usize,
    skeleton: Plan<i64>,
}

fn flatten(plan: &Plan<Expr>) -> Vec<Expr> {
    let mut v = plan.shape.clone();
    for op in &plan.operands {
        v.extend(op.stride_bytes.iter().cloned());
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
            if op.stride_bytes.len() != ndim {
                return Err(Error::invalid(format!(
                    "operand {k} has {} strides for {ndim} iteration dims",
                    op.stride_bytes.len()
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
                    stride_bytes: vec![0; ndim],
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
        })
    }

    /// A fresh plan with this structure (integers zero), to instantiate into.
    pub(crate) fn skeleton(&self) -> Plan<i64> {
        self.skeleton.clone()
    }

    /// Evaluates the plan at `values` into `out`, reusing its allocations.
    pub(crate) fn instantiate_into(&self, values: &[i64], out: &mut Plan<i64>) -> Result<()> {
        if !same_lengths(out, &self.skeleton) {
            out.clone_from(&self.skeleton);
        }
        let mut buf: SmallVec<[i64; 64]> = SmallVec::from_slice(&self.program.consts);
        self.program.eval_all(values, &mut buf)?;
        let (n, r) = (self.ndim, self.rank);
        let mut k = 0usize;
        out.shape.copy_from_slice(&buf[k..k + n]);
        k += n;
        for (op, sk) in out.operands.iter_mut().zip(&self.skeleton.operands) {
            op.stride_bytes.copy_from_slice(&buf[k..k + n]);
            op.offset = buf[k + n];
            op.element_size = sk.element_size;
            op.is_output = sk.is_output;
            k += n + 1;
        }
        out.broadcast_shape.copy_from_slice(&buf[k..k + r]);
        k += r;
        for s in out.output_strides.iter_mut() {
            s.copy_from_slice(&buf[k..k + r]);
            k += r;
        }
        out.num_outputs = self.skeleton.num_outputs;
        out.perm.clone_from(&self.skeleton.perm);
        debug_assert_eq!(k, self.program.len());
        Ok(())
    }

    /// The output layout only (sizes, strides of output 0) at `values`.
    pub(crate) fn output_layout(&self, values: &[i64]) -> Result<(Vec<i64>, Vec<i64>)> {
        let p = &self.program;
        let base = self.ndim + self.skeleton.operands.len() * (self.ndim + 1);
        let sizes = (0..self.rank)
            .map(|d| p.eval(base + d, values))
            .collect::<Result<Vec<_>>>()?;
        let strides = (0..self.rank)
            .map(|d| p.eval(base + self.rank + d, values))
            .collect::<Result<Vec<_>>>()?;
        Ok((sizes, strides))
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
            .all(|(x, y)| x.stride_bytes.len() == y.stride_bytes.len())
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
        let exprs: Vec<Expr> = ["4*a*b**2 - 3", "Max(a, b) + 1", "7", "a*b"]
            .iter()
            .map(|s| Expr::parse(s).unwrap())
            .collect();
        let p = ExprProgram::new(&syms, exprs.clone()).unwrap();
        for a in [0, 1, 5, i64::MAX / 2, i64::MAX] {
            for b in [0, 1, 3, i64::MAX] {
                let bind = Bindings::from_pairs([("a", a), ("b", b)]);
                for (k, e) in exprs.iter().enumerate() {
                    assert_eq!(p.eval(k, &[a, b]), e.eval(&bind), "{e} a={a} b={b}");
                }
            }
        }
        assert!(ExprProgram::new(&syms, vec![Expr::parse("z").unwrap()]).is_err());
    }
}
