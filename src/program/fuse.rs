//! Fusion of elementwise chains: one pass over memory instead of one per step.
//!
//! # What is fused
//! A [`FusionPlan`] is decided once, from the program and its traced layouts
//! ([`plan_fusion`], at `Expr` for a compiled artifact or at `i64`): a set of
//! [`FusedChain`]s. A chain is a tree of elementwise steps (`add sub mul div maximum minimum
//! neg abs relu exp sqrt sigmoid`) over one floating dtype in which
//!
//! * every step but the last (the root) is read by exactly one step, a later member, is no
//!   output, and has no view aliasing it (so nobody else ever needs it materialized);
//! * every member has the root's sizes (equal as expressions: at every binding the guards
//!   admit, they are equal) and computes in the dtype of all its tensor operands (no
//!   promotion, no converted copies), so the per-element expression is exactly the steps'.
//!
//! The operands from outside the chain (leaves) broadcast to the root's sizes, as each
//! member's own build already required. Anything else is not fused and runs step by step.
//!
//! # How a chain runs
//! At the root's step, one loop walks the root's layout in memory order (dims sorted by the
//! output's strides, adjacent dims coalesced where every operand allows). Each innermost
//! row is cut into blocks of [`BLOCK`] elements; per block every leaf is a slice (stride 1,
//! no copy), a scalar (stride 0) or a small gathered buffer, and the members are evaluated
//! one after another over the block with the op table's own element functions
//! (`kernel::Add`, `kernel::Exp`, ...), each a vectorizable loop over L1-resident buffers.
//! Only the root is written to memory; intermediates never leave the block buffers. Rows
//! are spread over rayon tasks above `2 × grain_size` elements.
//!
//! # Why
//! Step by step, a chain of `n` members over `N` elements writes and re-reads `n - 1`
//! intermediates of `N` elements: PyTorch eager does the same. The measurement that
//! justified the block evaluator is in the `program` module docs (the `symstride bench`
//! program scenarios).
//!
//! # Not fused (yet)
//! An elementwise chain feeding a reduction is not evaluated inside the reduction loop:
//! the reduction kernels take one strided input and a `Reducer`; the chain would have to be
//! an input kind of its own. The chains before and after reductions are still fused.

use super::spec::{Program, StepArg, StepOp};
use super::trace::Value;
use crate::kernel::{
    Abs, Add, Div, ExecConfig, Exp, Map1, Map2, Maximum, Minimum, Mul, Neg, Relu, Sigmoid, Sqrt,
    Sub,
};
use crate::op::{AnyElement, AnyTensor, Op};
use crate::tensor::{FloatElement, Scalar, Tensor};
use crate::{DType, Error, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

/// Elements per block of the fused evaluator (per leaf and member buffer: 256 f32 are 1 KiB,
/// so a chain's buffers stay in L1).
pub const BLOCK: usize = 256;

/// One fused chain: step indices (0-based, ascending); the last is the root, whose value
/// is the only one materialized.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FusedChain {
    /// The member steps (0-based, ascending); the last is the root.
    pub steps: Vec<usize>,
}

/// The fusion decisions of a program (empty: run step by step).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FusionPlan {
    /// Disjoint chains.
    pub chains: Vec<FusedChain>,
}

impl FusionPlan {
    /// One line per chain, steps numbered from 1 as in guard reasons: `steps 2-4 fused`
    /// (consecutive) or `steps 2, 4, 5 fused`.
    pub fn summary(&self) -> Vec<String> {
        self.step_numbers()
            .into_iter()
            .map(|s| {
                let consecutive = s.windows(2).all(|w| w[1] == w[0] + 1);
                if consecutive && s.len() > 1 {
                    format!("steps {}-{} fused", s[0], s[s.len() - 1])
                } else {
                    let list: Vec<String> = s.iter().map(|k| k.to_string()).collect();
                    format!("steps {} fused", list.join(", "))
                }
            })
            .collect()
    }

    /// Per chain, its member steps numbered from 1 (as in guard reasons and
    /// [`Self::summary`]); what `symstride check` prints as `"fused"`.
    pub fn step_numbers(&self) -> Vec<Vec<usize>> {
        self.chains
            .iter()
            .map(|c| c.steps.iter().map(|k| k + 1).collect())
            .collect()
    }

    /// Per step: the index of its chain, if fused.
    pub(crate) fn chain_of(&self, n_steps: usize) -> Vec<Option<usize>> {
        let mut of = vec![None; n_steps];
        for (c, ch) in self.chains.iter().enumerate() {
            for &k in &ch.steps {
                if let Some(slot) = of.get_mut(k) {
                    *slot = Some(c);
                }
            }
        }
        of
    }
}

impl std::fmt::Display for FusionPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.chains.is_empty() {
            return write!(f, "no fusion");
        }
        write!(f, "{}", self.summary().join("; "))
    }
}

const FUSABLE: [Op; 12] = [
    Op::Add,
    Op::Sub,
    Op::Mul,
    Op::Div,
    Op::Maximum,
    Op::Minimum,
    Op::Neg,
    Op::Abs,
    Op::Relu,
    Op::Exp,
    Op::Sqrt,
    Op::Sigmoid,
];

/// Whether step `k` may be a chain member: a fusable op writing a fresh floating value,
/// every tensor operand of that dtype, every number a float or an integer.
fn fusable<I>(p: &Program, values: &[Value<I>], k: usize) -> bool {
    let st = &p.steps[k];
    let me = p.inputs.len() + k;
    let StepOp::Op(op) = st.op else { return false };
    let v = &values[me];
    FUSABLE.contains(&op)
        && v.storage == me
        && matches!(v.dtype, DType::F32 | DType::F64)
        && st.args.iter().all(|a| match a {
            StepArg::Value(i) => values[*i].dtype == v.dtype,
            StepArg::Number(Scalar::Float(_) | Scalar::Int(_)) => true,
            _ => false,
        })
}

/// The steps reading each value (each reading step once).
fn readers(p: &Program) -> Vec<Vec<usize>> {
    let n = p.inputs.len() + p.steps.len();
    let mut r: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, st) in p.steps.iter().enumerate() {
        for a in &st.args {
            if let StepArg::Value(i) = a {
                if r[*i].last() != Some(&k) {
                    r[*i].push(k);
                }
            }
        }
    }
    r
}

/// Decides the fused chains of `p` from its layouts (traced `Expr`s or concrete `i64`s).
pub fn plan_fusion<I: PartialEq>(p: &Program, values: &[Value<I>]) -> FusionPlan {
    let n_in = p.inputs.len();
    if values.len() != n_in + p.steps.len() {
        return FusionPlan::default();
    }
    let readers = readers(p);
    let aliased = |me: usize| {
        values
            .iter()
            .enumerate()
            .any(|(v, x)| v != me && x.storage == me)
    };
    // `into[k]`: the member step that absorbs step `k` (its single reader).
    let mut into: Vec<Option<usize>> = vec![None; p.steps.len()];
    for (k, slot) in into.iter_mut().enumerate() {
        let me = n_in + k;
        if !fusable(p, values, k) || p.outputs.contains(&me) || aliased(me) {
            continue;
        }
        let [r] = readers[me][..] else { continue };
        let rv = n_in + r;
        if fusable(p, values, r)
            && values[rv].sizes == values[me].sizes
            && values[rv].dtype == values[me].dtype
        {
            *slot = Some(r);
        }
    }
    // Chains: each root (a member absorbing others, absorbed by none) and everything that
    // flows into it.
    let root_of = |mut k: usize| {
        while let Some(r) = into[k] {
            k = r;
        }
        k
    };
    let mut chains: Vec<FusedChain> = Vec::new();
    for k in 0..p.steps.len() {
        if into[k].is_some() || !into.contains(&Some(k)) {
            continue;
        }
        let steps: Vec<usize> = (0..p.steps.len())
            .filter(|&j| j == k || (into[j].is_some() && root_of(j) == k))
            .collect();
        chains.push(FusedChain { steps });
    }
    FusionPlan { chains }
}

/// Checks that `plan` is a valid fusion of `p` at these layouts (a plan read from an
/// artifact is not trusted): every chain is exactly what [`plan_fusion`]'s rules allow.
pub fn check_fusion<I: PartialEq>(
    p: &Program,
    values: &[Value<I>],
    plan: &FusionPlan,
) -> Result<()> {
    let bad = |m: String| Err(Error::invalid(format!("fusion plan: {m}")));
    let n_in = p.inputs.len();
    let readers = readers(p);
    let mut seen = vec![false; p.steps.len()];
    for ch in &plan.chains {
        let Some(&root) = ch.steps.last() else {
            return bad("an empty chain".into());
        };
        if ch.steps.windows(2).any(|w| w[0] >= w[1]) || root >= p.steps.len() {
            return bad(format!(
                "steps {:?} are not ascending step indices",
                ch.steps
            ));
        }
        for &k in &ch.steps {
            if std::mem::replace(&mut seen[k], true) {
                return bad(format!("step {} is in two chains", k + 1));
            }
            let me = n_in + k;
            if !fusable(p, values, k) || values[me].sizes != values[n_in + root].sizes {
                return bad(format!("step {} cannot be fused", k + 1));
            }
            if k == root {
                continue;
            }
            let aliased = values
                .iter()
                .enumerate()
                .any(|(v, x)| v != me && x.storage == me);
            let one_reader = matches!(readers[me][..], [r] if ch.steps.contains(&r));
            if p.outputs.contains(&me) || aliased || !one_reader {
                return bad(format!(
                    "step {} is needed outside its chain (an output, aliased, or read elsewhere)",
                    k + 1
                ));
            }
        }
    }
    Ok(())
}

/// An operand of a member: a leaf, an earlier member's block, a number.
#[derive(Clone, Copy, Debug)]
enum Src {
    Leaf(usize),
    Reg(usize),
    Imm(Scalar),
}

/// A chain compiled for evaluation: one instruction per member, operands resolved.
#[derive(Clone, Debug)]
pub(crate) struct Compiled {
    code: Vec<(Op, Vec<Src>)>,
    /// The values read from outside the chain, in first-use order.
    pub(crate) leaves: Vec<usize>,
}

/// Resolves the operands of a chain's members.
pub(crate) fn compile(p: &Program, chain: &FusedChain) -> Result<Compiled> {
    let n_in = p.inputs.len();
    let mut leaves: Vec<usize> = Vec::new();
    let mut code = Vec::new();
    for &k in &chain.steps {
        let StepOp::Op(op) = p.steps[k].op else {
            return Err(Error::invalid("internal: a fused step is no op"));
        };
        let args = p.steps[k]
            .args
            .iter()
            .map(|a| match a {
                StepArg::Value(i) => Ok(match chain.steps.iter().position(|&j| n_in + j == *i) {
                    Some(r) => Src::Reg(r),
                    None => Src::Leaf(match leaves.iter().position(|l| l == i) {
                        Some(l) => l,
                        None => {
                            leaves.push(*i);
                            leaves.len() - 1
                        }
                    }),
                }),
                StepArg::Number(s) => Ok(Src::Imm(*s)),
                other => Err(Error::invalid(format!("fused argument {other:?}"))),
            })
            .collect::<Result<Vec<_>>>()?;
        code.push((op, args));
    }
    Ok(Compiled { code, leaves })
}

/// Evaluates a compiled chain into `out` (the root's tensor) reading `leaves`.
pub(crate) fn run_chain(
    c: &Compiled,
    leaves: &[&AnyTensor],
    out: &AnyTensor,
    cfg: &ExecConfig,
) -> Result<()> {
    match out {
        AnyTensor::F32(o) => run_typed::<f32>(c, leaves, o, cfg),
        AnyTensor::F64(o) => run_typed::<f64>(c, leaves, o, cfg),
        other => Err(Error::invalid(format!(
            "internal: fused chain of {}",
            other.dtype()
        ))),
    }
}

/// A block operand: a slice of the block's length or one value for all of it.
#[derive(Clone, Copy)]
enum Opnd<'a, T> {
    Slice(&'a [T]),
    Scalar(T),
}

#[inline(always)]
fn un<T: Copy>(o: &mut [T], a: Opnd<'_, T>, f: impl Fn(T) -> T) {
    match a {
        Opnd::Slice(s) => {
            for (o, &x) in o.iter_mut().zip(s) {
                *o = f(x);
            }
        }
        Opnd::Scalar(x) => o.fill(f(x)),
    }
}

#[inline(always)]
fn bin<T: Copy>(o: &mut [T], a: Opnd<'_, T>, b: Opnd<'_, T>, f: impl Fn(T, T) -> T) {
    match (a, b) {
        (Opnd::Slice(x), Opnd::Slice(y)) => {
            for ((o, &x), &y) in o.iter_mut().zip(x).zip(y) {
                *o = f(x, y);
            }
        }
        (Opnd::Slice(x), Opnd::Scalar(y)) => {
            for (o, &x) in o.iter_mut().zip(x) {
                *o = f(x, y);
            }
        }
        (Opnd::Scalar(x), Opnd::Slice(y)) => {
            for (o, &y) in o.iter_mut().zip(y) {
                *o = f(x, y);
            }
        }
        (Opnd::Scalar(x), Opnd::Scalar(y)) => o.fill(f(x, y)),
    }
}

fn eval<T: FloatElement>(op: Op, o: &mut [T], a: &[Opnd<'_, T>]) -> Result<()> {
    match (op, a) {
        (Op::Neg, [x]) => un(o, *x, |v| Neg.call(v)),
        (Op::Abs, [x]) => un(o, *x, |v| Abs.call(v)),
        (Op::Relu, [x]) => un(o, *x, |v| Relu.call(v)),
        (Op::Exp, [x]) => un(o, *x, |v| Exp.call(v)),
        (Op::Sqrt, [x]) => un(o, *x, |v| Sqrt.call(v)),
        (Op::Sigmoid, [x]) => un(o, *x, |v| Sigmoid.call(v)),
        (Op::Add, [x, y]) => bin(o, *x, *y, |u, v| Add.call(u, v)),
        (Op::Sub, [x, y]) => bin(o, *x, *y, |u, v| Sub.call(u, v)),
        (Op::Mul, [x, y]) => bin(o, *x, *y, |u, v| Mul.call(u, v)),
        (Op::Div, [x, y]) => bin(o, *x, *y, |u, v| Div.call(u, v)),
        (Op::Maximum, [x, y]) => bin(o, *x, *y, |u, v| Maximum.call(u, v)),
        (Op::Minimum, [x, y]) => bin(o, *x, *y, |u, v| Minimum.call(u, v)),
        (op, a) => {
            return Err(Error::invalid(format!(
                "internal: {op} with {} operands in a fused chain",
                a.len()
            )))
        }
    }
    Ok(())
}

/// The iteration: dims in the output's memory order, coalesced; per operand (output first,
/// then the leaves) element strides; the innermost dim last.
struct Walk {
    sizes: Vec<usize>,
    strides: Vec<Vec<isize>>,
    offsets: Vec<isize>,
}

fn walk(out_sizes: &[i64], out_strides: &[i64], operands: &[(Vec<i64>, i64)]) -> Result<Walk> {
    let nd = out_sizes.len();
    let n_ops = operands.len();
    // Sort the output's dims by decreasing stride (stable: ties keep the user order).
    let mut dims: Vec<usize> = (0..nd).filter(|&d| out_sizes[d] != 1).collect();
    dims.sort_by(|&a, &b| out_strides[b].cmp(&out_strides[a]));
    let mut sizes: Vec<usize> = Vec::new();
    let mut strides: Vec<Vec<isize>> = vec![Vec::new(); n_ops];
    for &d in &dims {
        let z = out_sizes[d] as usize;
        if let Some(&last) = sizes.last() {
            // Coalesce into the previous (outer) dim when every operand allows it.
            let can = (0..n_ops).all(|o| {
                let outer = *strides[o].last().unwrap_or(&0);
                outer == operands[o].0[d] as isize * z as isize
            });
            if can {
                let i = sizes.len() - 1;
                sizes[i] = last * z;
                for (o, s) in strides.iter_mut().enumerate() {
                    s[i] = operands[o].0[d] as isize;
                }
                continue;
            }
        }
        sizes.push(z);
        for (o, s) in strides.iter_mut().enumerate() {
            s.push(operands[o].0[d] as isize);
        }
    }
    if sizes.is_empty() {
        sizes.push(1);
        for s in &mut strides {
            s.push(0);
        }
    }
    Ok(Walk {
        sizes,
        strides,
        offsets: operands.iter().map(|o| o.1 as isize).collect(),
    })
}

/// Raw base pointers shared by the rayon tasks.
#[derive(Clone, Copy)]
struct Ptrs<T>(*mut T, *const *const T);
// SAFETY: the pointed-to storages are borrowed (the output exclusively, the leaves shared)
// for the whole evaluation; tasks write disjoint output elements (distinct rows of a
// non-overlapping layout) and only read the leaves.
unsafe impl<T: Send> Send for Ptrs<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Ptrs<T> {}

impl<T> Ptrs<T> {
    #[inline(always)]
    fn get(self) -> (*mut T, *const *const T) {
        (self.0, self.1)
    }
}

fn run_typed<T: FloatElement + AnyElement>(
    c: &Compiled,
    leaves: &[&AnyTensor],
    out: &Tensor<T>,
    cfg: &ExecConfig,
) -> Result<()> {
    let osz = out.sizes();
    let nd = osz.len();
    if !crate::tensor::layout_is_non_overlapping(osz, out.strides()) {
        return Err(Error::MemoryOverlap {
            message: "a fused chain's output overlaps itself".into(),
        });
    }
    let mut typed: Vec<&Tensor<T>> = Vec::with_capacity(leaves.len());
    let mut operands: Vec<(Vec<i64>, i64)> = vec![(out.strides().to_vec(), out.storage_offset())];
    for l in leaves {
        let t = l
            .typed::<T>()
            .ok_or_else(|| Error::invalid("internal: a fused leaf of another dtype"))?;
        if t.storage().same(out.storage()) {
            return Err(Error::MemoryOverlap {
                message: "a fused chain's output shares storage with an operand".into(),
            });
        }
        // Broadcast to the output's sizes (right-aligned; size 1 reads index 0).
        let shift = nd.checked_sub(t.dim()).ok_or_else(|| {
            Error::invalid("internal: a fused leaf has more dims than the output")
        })?;
        let mut st = vec![0i64; nd];
        for d in 0..t.dim() {
            let z = t.sizes()[d];
            if z == osz[d + shift] {
                st[d + shift] = if z == 1 { 0 } else { t.strides()[d] };
            } else if z != 1 {
                return Err(Error::invalid(
                    "internal: a fused leaf does not broadcast to the output",
                ));
            }
        }
        operands.push((st, t.storage_offset()));
        typed.push(t);
    }
    let numel: i64 = osz.iter().product();
    if numel == 0 {
        return Ok(());
    }
    let w = walk(osz, out.strides(), &operands)?;
    let inner = *w.sizes.last().unwrap_or(&1);
    let rows: usize = w.sizes[..w.sizes.len() - 1].iter().product();

    let _out_guard = out.storage().write()?;
    let _leaf_guards = typed
        .iter()
        .map(|t| t.storage().read())
        .collect::<Result<Vec<_>>>()?;
    let leaf_ptrs: Vec<*const T> = typed
        .iter()
        .map(|t| t.storage().ptr() as *const T)
        .collect();
    let ptrs = Ptrs(out.storage().ptr(), leaf_ptrs.as_ptr());

    // Rows `r0..r1`, each over the inner range `i0..i1`.
    let run_rows = |r0: usize, r1: usize, i0: usize, i1: usize| {
        let (optr, lptrs) = ptrs.get();
        let n_leaves = c.leaves.len();
        let mut leaf_bufs: Vec<Vec<T>> = vec![vec![T::ZERO; BLOCK]; n_leaves];
        let mut regs: Vec<Vec<T>> = vec![vec![T::ZERO; BLOCK]; c.code.len()];
        let outer = &w.sizes[..w.sizes.len() - 1];
        let mut idx = vec![0usize; outer.len()];
        // Unravel r0 (row-major over the outer dims).
        let mut r = r0;
        for d in (0..outer.len()).rev() {
            idx[d] = r % outer[d];
            r /= outer[d];
        }
        let n_ops = w.offsets.len();
        let mut base: Vec<isize> = (0..n_ops)
            .map(|o| {
                w.offsets[o]
                    + idx
                        .iter()
                        .enumerate()
                        .map(|(d, &i)| i as isize * w.strides[o][d])
                        .sum::<isize>()
            })
            .collect();
        let id = w.sizes.len() - 1;
        for _ in r0..r1 {
            let mut start = i0;
            while start < i1 {
                let len = BLOCK.min(i1 - start);
                // Leaves as slices, scalars or gathered blocks.
                let mut ops: SmallVec<[Opnd<'_, T>; 4]> = SmallVec::new();
                for (l, buf) in leaf_bufs.iter_mut().enumerate() {
                    let s = w.strides[l + 1][id];
                    let at = base[l + 1] + start as isize * s;
                    // SAFETY: `at + i*s` for `i < len` addresses an element of the leaf's
                    // broadcast layout, which lies inside its storage (tensor invariant;
                    // broadcast dims have stride 0); the storage is borrowed for reading.
                    unsafe {
                        let p = (*lptrs.add(l)).offset(at);
                        if s == 1 {
                            ops.push(Opnd::Slice(std::slice::from_raw_parts(p, len)));
                        } else if s == 0 {
                            ops.push(Opnd::Scalar(*p));
                        } else {
                            for (i, b) in buf[..len].iter_mut().enumerate() {
                                *b = *p.offset(i as isize * s);
                            }
                            ops.push(Opnd::Slice(std::slice::from_raw_parts(buf.as_ptr(), len)));
                        }
                    }
                }
                for (i, (op, args)) in c.code.iter().enumerate() {
                    let (done, rest) = regs.split_at_mut(i);
                    let a: SmallVec<[Opnd<'_, T>; 3]> = args
                        .iter()
                        .map(|s| match *s {
                            Src::Leaf(l) => ops[l],
                            Src::Reg(j) => Opnd::Slice(&done[j][..len]),
                            Src::Imm(v) => Opnd::Scalar(T::from_scalar(v)),
                        })
                        .collect();
                    // Checked when compiled: arities are the table's.
                    let _ = eval(*op, &mut rest[0][..len], &a);
                }
                let res = &regs[c.code.len() - 1][..len];
                let s = w.strides[0][id];
                // SAFETY: the output elements of this row block are inside its storage
                // (tensor invariant), no other task writes them (rows are disjoint in a
                // non-overlapping layout), and the storage is borrowed exclusively.
                unsafe {
                    let p = optr.offset(base[0] + start as isize * s);
                    if s == 1 {
                        std::ptr::copy_nonoverlapping(res.as_ptr(), p, len);
                    } else {
                        for (i, &v) in res.iter().enumerate() {
                            *p.offset(i as isize * s) = v;
                        }
                    }
                }
                start += len;
            }
            // Next row.
            for d in (0..outer.len()).rev() {
                idx[d] += 1;
                for (o, b) in base.iter_mut().enumerate() {
                    *b += w.strides[o][d];
                }
                if idx[d] < outer[d] {
                    break;
                }
                for (o, b) in base.iter_mut().enumerate() {
                    *b -= w.strides[o][d] * outer[d] as isize;
                }
                idx[d] = 0;
            }
        }
    };
    // Arity check once (the evaluation loop ignores `eval`'s result).
    for (op, args) in &c.code {
        let want = op.def().arity;
        if args.len() != want || !FUSABLE.contains(op) {
            return Err(Error::invalid(format!("internal: {op} in a fused chain")));
        }
    }
    let threads = rayon::current_num_threads();
    let tasks = threads * cfg.tasks_per_thread.max(1);
    if threads < 2 || (numel as usize) < 2 * cfg.grain_size.max(1) {
        run_rows(0, rows, 0, inner);
    } else if rows > 1 {
        let tasks = tasks.min(rows);
        let per = rows.div_ceil(tasks);
        (0..tasks)
            .into_par_iter()
            .for_each(|t| run_rows((t * per).min(rows), ((t + 1) * per).min(rows), 0, inner));
    } else {
        // One row: split it into ranges of whole blocks.
        let blocks = inner.div_ceil(BLOCK);
        let per = blocks.div_ceil(tasks.min(blocks)) * BLOCK;
        (0..inner.div_ceil(per))
            .into_par_iter()
            .for_each(|t| run_rows(0, 1, t * per, ((t + 1) * per).min(inner)));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_number_steps_from_one() {
        let plan = FusionPlan {
            chains: vec![
                FusedChain {
                    steps: vec![1, 2, 3],
                },
                FusedChain { steps: vec![4, 6] },
            ],
        };
        assert_eq!(plan.summary(), vec!["steps 2-4 fused", "steps 5, 7 fused"]);
        assert_eq!(plan.step_numbers(), vec![vec![2, 3, 4], vec![5, 7]]);
        assert_eq!(plan.to_string(), "steps 2-4 fused; steps 5, 7 fused");
        assert_eq!(FusionPlan::default().to_string(), "no fusion");
    }

    #[test]
    fn the_walk_follows_memory_order_and_coalesces() {
        // Channels-last [2, 4, 3, 3] output and input, plus a [4, 1, 1] broadcast operand.
        let (sizes, cl) = ([2i64, 4, 3, 3], vec![36i64, 1, 12, 4]);
        let ops = vec![(cl.clone(), 0), (cl.clone(), 0), (vec![0, 1, 0, 0], 0)];
        let w = walk(&sizes, &cl, &ops).unwrap();
        // N, H, W coalesced (the broadcast operand allows it: stride 0 along all three),
        // then C innermost.
        assert_eq!(w.sizes, vec![18, 4]);
        assert_eq!(w.strides[0], vec![4, 1]);
        assert_eq!(w.strides[2], vec![0, 1]);
        // Fully contiguous operands coalesce into one dim.
        let c = vec![36i64, 9, 3, 1];
        let w = walk(&sizes, &c, &[(c.clone(), 0), (c.clone(), 5)]).unwrap();
        assert_eq!(w.sizes, vec![72]);
        assert_eq!(w.offsets, vec![0, 5]);
    }
}
