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

#[derive(Clone, Copy, Debug)]
struct Term {
    coef: i64,
    start: u32,
    end: u32,
}

#[derive(Clone, Debug)]
enum Slot {
    Const(i64),
    Poly { start: u32, end: u32 },
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
                Slot::Poly {
                    start,
                    end: p.terms.len() as u32,
                }
            } else {
                Slot::Exact
            };
            p.slots.push(slot);
        }
        p.exprs = exprs;
        Ok(p)
    }

    /// Number of expressions.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    #[inline]
    fn fast(&self, start: u32, end: u32, values: &[i64]) -> Option<i64> {
        let mut acc: i64 = 0;
        for t in &self.terms[start as usize..end as usize] {
            let mut v = t.coef;
            for &(i, e) in &self.factors[t.start as usize..t.end as usize] {
                let x = *values.get(i as usize)?;
                let p = if e == 1 { x } else { x.checked_pow(e)? };
                v = v.checked_mul(p)?;
            }
            acc = acc.checked_add(v)?;
        }
        Some(acc)
    }

    /// Value of expression `k` at `values` (same answer and errors as [`Expr::eval`]).
    #[inline]
    pub(crate) fn eval(&self, k: usize, values: &[i64]) -> Result<i64> {
        match self.slots[k] {
            Slot::Const(c) => Ok(c),
            Slot::Poly { start, end } => match self.fast(start, end, values) {
                Some(v) => Ok(v),
                None => self.exact(k, values),
            },
            Slot::Exact => self.exact(k, values),
        }
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
        if !same_structure(out, &self.skeleton) {
            out.clone_from(&self.skeleton);
        }
        let p = &self.program;
        let mut k = 0usize;
        for d in 0..self.ndim {
            out.shape[d] = p.eval(k, values)?;
            k += 1;
        }
        for op in out.operands.iter_mut() {
            for d in 0..self.ndim {
                op.stride_bytes[d] = p.eval(k, values)?;
                k += 1;
            }
            op.offset = p.eval(k, values)?;
            k += 1;
        }
        for d in 0..self.rank {
            out.broadcast_shape[d] = p.eval(k, values)?;
            k += 1;
        }
        for s in out.output_strides.iter_mut() {
            for d in 0..self.rank {
                s[d] = p.eval(k, values)?;
                k += 1;
            }
        }
        debug_assert_eq!(k, p.len());
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

fn same_structure(a: &Plan<i64>, b: &Plan<i64>) -> bool {
    a.shape.len() == b.shape.len()
        && a.broadcast_shape.len() == b.broadcast_shape.len()
        && a.num_outputs == b.num_outputs
        && a.perm == b.perm
        && a.operands.len() == b.operands.len()
        && a.operands.iter().zip(&b.operands).all(|(x, y)| {
            x.stride_bytes.len() == y.stride_bytes.len()
                && x.element_size == y.element_size
                && x.is_output == y.is_output
        })
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
