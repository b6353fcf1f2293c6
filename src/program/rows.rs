//! Row fusion: a run of steps that reduce over the last dim and broadcast back, evaluated
//! one row at a time with the row in L1.
//!
//! # What is fused
//! A [`RowSegment`] is a run of consecutive steps over one floating dtype that all live on
//! the rows of one shape `S` (the input of a reduction in the run): each step is
//! * an elementwise op of the fusion table (`fuse.rs`'s rules: a fresh value, every tensor
//!   operand of its dtype) whose value has sizes `S` (a *row* value) or `S` with the last
//!   dim 1 (a *per-row* value: one number per row), or
//! * a reduction (`sum mean amax amin prod`) of a row value over the last dim with
//!   `keepdim`, in its dtype (a per-row value).
//!
//! Sizes are compared as expressions (at every binding the guards admit they are equal), as
//! for the chains. Values from before the run (leaves) broadcast to `S` as each step's own
//! build required. A run is only a segment when it holds a reduction and another step, and
//! every fused chain that touches it lies inside it.
//!
//! Softmax over the last dim (`amax, sub, exp, sum, div`) and layer norm (`mean, sub, mul,
//! mean, add, sqrt, div`) are each one segment: per row the input is read once, every
//! intermediate lives in a row buffer or a register, and only the values needed after the
//! run (outputs, values read by later steps or aliased by views) are written. Step by step
//! (or as chains), each reduction is one more pass over memory and each value it is
//! broadcast into is written and read back.
//!
//! # When it runs
//! The segment is decided at compile time (in the artifact's fusion plan, shown by
//! `guards`/`check`); whether a concrete run takes it is decided per run from the row
//! length: [`ROW_MIN`] to [`ROW_MAX`] elements (a task's row buffers stay in its core's
//! cache; shorter rows are faster as chains, measured at [`ROW_MIN`]). Other rows run the
//! segment's steps as the plan's chains and single steps (which a row segment always
//! leaves intact for that reason).
//!
//! # Evaluation
//! Rows are spread over rayon tasks (contiguous ranges of rows, in row-major order of the
//! outer dims). Per row each step is one vectorizable loop over the row (the op table's
//! element functions, as the chains' block evaluator) or one number; a reduction folds its
//! row with the reduction kernels' leaf fold and pairwise cascade (`kernel::fold_run`,
//! `kernel::Cascade`: the f32 sum accumulates in f64), so results equal the step-by-step
//! run's within float rounding. The row loop is compiled twice, for the x86-64 baseline and
//! for AVX2 (chosen at run time under `Simd::Auto`), as the block evaluator is.

use super::blocks::{bcast_strides, eval, store, typed, use_avx2, Opnd, Ptrs, RowCursor, Walk};
use super::fuse::{aliased, fusable, readers, FusedChain, FUSABLE_REDUCTIONS};
use super::spec::{Program, StepArg, StepOp};
use super::trace::Value;
use crate::kernel::{fold_run, store_fence, stream_output, Cascade, ExecConfig, Simd, LEAF};
use crate::op::{AnyElement, AnyTensor, Op};
use crate::sym::Bindings;
use crate::reduce::{Amax, Amin, Dims, Mean, Prod, ReduceElement, Reducer, ReductionOp, Sum};
use crate::tensor::{FloatElement, Scalar, Tensor};
use crate::{DType, Error, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

/// Longest row (elements) a segment is evaluated row by row at: 64 KiB rows of f32 (a
/// task's few row buffers then stay in its core's L2). Longer rows run the segment's steps
/// as chains and single steps.
pub const ROW_MAX: i64 = 16384;

/// Shortest row (elements) a segment is evaluated row by row at: below it the per-row work
/// (operands set up, each step's loop started, a cascade per reduction) outweighs the passes
/// saved: in a probe of a 16M-f32 softmax, rows of 16 elements ran slower row by row than
/// as chains, rows of 64 and more faster (`docs/perf/2026-11-programs.md`).
pub const ROW_MIN: i64 = 32;

/// Consecutive steps evaluated row by row (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowSegment {
    /// The steps (0-based, consecutive, ascending).
    pub steps: Vec<usize>,
    /// The steps whose values are written to memory (outputs, read after the segment, or
    /// aliased by a view), ascending.
    pub written: Vec<usize>,
}

impl RowSegment {
    /// The first and last step.
    pub(crate) fn span(&self) -> Option<(usize, usize)> {
        Some((*self.steps.first()?, *self.steps.last()?))
    }

    /// The value whose sizes are the segment's rows: the input of its first reduction.
    pub fn row_value(&self, p: &Program) -> Option<usize> {
        self.steps.iter().find_map(|&k| match (&p.steps[k].op, p.steps[k].args.first()) {
            (StepOp::Reduce(_), Some(StepArg::Value(i))) => Some(*i),
            _ => None,
        })
    }

    /// Whether a run over these concrete layouts takes the segment: rows of [`ROW_MIN`] to
    /// [`ROW_MAX`] elements.
    pub fn fits(&self, p: &Program, values: &[Value<i64>]) -> bool {
        self.row_value(p)
            .and_then(|v| values.get(v))
            .and_then(|v| v.sizes.last())
            .is_some_and(|k| (ROW_MIN..=ROW_MAX).contains(k))
    }
}

/// Whether a reduction step reduces exactly the last of `nd` dims.
fn last_dim_only(st: &super::spec::Step, nd: usize) -> bool {
    let last = |d: i64| nd >= 1 && (d == -1 || d == nd as i64 - 1);
    match st.reduction_dims() {
        Ok(Dims::One(d)) => last(d),
        Ok(Dims::List(ds)) => matches!(ds[..], [d] if last(d)),
        _ => false,
    }
}

/// Whether step `k` may be in a segment over rows of sizes `full` in `dtype`: an
/// elementwise step of the fusion table whose value has sizes `full` (a row) or `per_row`
/// (one number per row), or a reduction of a row over its last dim with `keepdim`.
fn in_segment<I: PartialEq>(
    p: &Program,
    values: &[Value<I>],
    k: usize,
    full: &[I],
    per_row: &[I],
    dtype: DType,
) -> bool {
    let me = p.inputs.len() + k;
    let st = &p.steps[k];
    let v = &values[me];
    if v.dtype != dtype {
        return false;
    }
    match st.op {
        StepOp::Op(_) => fusable(p, values, k) && (v.sizes == full || v.sizes == per_row),
        StepOp::Reduce(op) => {
            let Some(StepArg::Value(i)) = st.args.first() else {
                return false;
            };
            FUSABLE_REDUCTIONS.contains(&op)
                && st.keepdim
                && matches!(dtype, DType::F32 | DType::F64)
                && v.storage == me
                && values[*i].dtype == dtype
                && values[*i].sizes == full
                && v.sizes == per_row
                && last_dim_only(st, full.len())
        }
        _ => false,
    }
}

/// The row segments of `p` at these layouts (traced `Expr`s or concrete `i64`s), given the
/// chains decided for it (a segment never splits a chain).
pub(crate) fn plan_rows<I: PartialEq>(
    p: &Program,
    values: &[Value<I>],
    chains: &[FusedChain],
) -> Vec<RowSegment> {
    let n_in = p.inputs.len();
    let n = p.steps.len();
    if values.len() != n_in + n {
        return Vec::new();
    }
    let readers = readers(p);
    let mut segs = Vec::new();
    let mut free_from = 0;
    for r in 0..n {
        let (StepOp::Reduce(_), Some(StepArg::Value(i))) = (&p.steps[r].op, p.steps[r].args.first())
        else {
            continue;
        };
        if r < free_from {
            continue;
        }
        let (full, per_row) = (&values[*i].sizes, &values[n_in + r].sizes);
        let dtype = values[n_in + r].dtype;
        let ok = |k: usize| in_segment(p, values, k, full, per_row, dtype);
        if !ok(r) {
            continue;
        }
        let (mut lo, mut hi) = (r, r);
        while lo > free_from && ok(lo - 1) {
            lo -= 1;
        }
        while hi + 1 < n && ok(hi + 1) {
            hi += 1;
        }
        let inside = |k: &usize| (lo..=hi).contains(k);
        let splits = chains
            .iter()
            .any(|c| c.steps.iter().any(inside) && !c.steps.iter().all(inside));
        if hi == lo || splits {
            continue;
        }
        let written = (lo..=hi)
            .filter(|&k| {
                let me = n_in + k;
                p.outputs.contains(&me) || aliased(values, me) || readers[me].iter().any(|&j| j > hi)
            })
            .collect();
        segs.push(RowSegment {
            steps: (lo..=hi).collect(),
            written,
        });
        free_from = hi + 1;
    }
    segs
}

/// An operand of a segment step: a leaf, an earlier step of the segment, a number.
#[derive(Clone, Copy, Debug)]
enum RSrc {
    Leaf(usize),
    Reg(usize),
    Imm(Scalar),
}

/// One step of a compiled segment.
#[derive(Clone, Debug)]
enum Instr {
    /// An elementwise op writing a row (`row`) or one number per row.
    Elem { op: Op, args: SmallVec<[RSrc; 2]>, row: bool },
    /// A reduction of a row over the last dim.
    Reduce { op: ReductionOp, src: RSrc },
}

/// A segment compiled for evaluation at concrete layouts.
#[derive(Clone, Debug)]
pub(crate) struct RowCode {
    instrs: Vec<Instr>,
    /// The values read from before the segment, in first-use order.
    pub(crate) leaves: Vec<usize>,
    /// Per written value: its instruction.
    written: Vec<usize>,
    /// The row shape.
    pub(crate) sizes: Vec<i64>,
}

/// Resolves a segment's operands at concrete layouts. A size passed as a Python number
/// becomes its value at `binding` (the run's).
pub(crate) fn compile_rows(
    p: &Program,
    values: &[Value<i64>],
    seg: &RowSegment,
    binding: &Bindings,
) -> Result<RowCode> {
    let bad = |m: &str| Error::invalid(format!("internal: row segment: {m}"));
    let n_in = p.inputs.len();
    let (lo, _) = seg.span().ok_or_else(|| bad("no steps"))?;
    let sizes = values[seg.row_value(p).ok_or_else(|| bad("no reduction"))?]
        .sizes
        .clone();
    let mut leaves: Vec<usize> = Vec::new();
    let mut src = |a: &StepArg| -> Result<RSrc> {
        Ok(match a {
            StepArg::Value(i) if *i >= n_in + lo => RSrc::Reg(*i - n_in - lo),
            StepArg::Value(i) => RSrc::Leaf(match leaves.iter().position(|l| l == i) {
                Some(l) => l,
                None => {
                    leaves.push(*i);
                    leaves.len() - 1
                }
            }),
            StepArg::Number(_) | StepArg::SymNumber(_) => match a.number_at(binding) {
                Some(s) => RSrc::Imm(s?),
                None => return Err(bad("a number without a value")),
            },
            other => return Err(bad(&format!("argument {other:?}"))),
        })
    };
    let mut instrs = Vec::new();
    for &k in &seg.steps {
        let st = &p.steps[k];
        instrs.push(match st.op {
            StepOp::Op(op) => {
                if !op.def().fusable || st.args.len() != op.def().arity {
                    return Err(bad(&format!("{op}")));
                }
                let args = st.args.iter().map(&mut src).collect::<Result<_>>()?;
                let row = values[n_in + k].sizes == sizes;
                Instr::Elem { op, args, row }
            }
            StepOp::Reduce(op) if FUSABLE_REDUCTIONS.contains(&op) => {
                let a = st.args.first().ok_or_else(|| bad("a reduction of nothing"))?;
                Instr::Reduce { op, src: src(a)? }
            }
            _ => return Err(bad("a step that is no op or reduction")),
        });
    }
    // Every register read is an earlier step, and a reduction reads a row.
    for (i, ins) in instrs.iter().enumerate() {
        let regs: SmallVec<[usize; 2]> = match ins {
            Instr::Elem { args, .. } => args
                .iter()
                .filter_map(|a| match a {
                    RSrc::Reg(j) => Some(*j),
                    _ => None,
                })
                .collect(),
            Instr::Reduce { src: RSrc::Reg(j), .. } => smallvec::smallvec![*j],
            Instr::Reduce { .. } => SmallVec::new(),
        };
        if regs.iter().any(|&j| j >= i) {
            return Err(bad("a step reads a later one"));
        }
        if let Instr::Reduce { src: RSrc::Reg(j), .. } = ins {
            if !matches!(instrs[*j], Instr::Elem { row: true, .. }) {
                return Err(bad("a reduction of a per-row value"));
            }
        }
    }
    let written = seg
        .written
        .iter()
        .map(|&k| k.checked_sub(lo).filter(|&i| i < instrs.len()))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| bad("a written step outside the segment"))?;
    Ok(RowCode {
        instrs,
        leaves,
        written,
        sizes,
    })
}

/// Evaluates a compiled segment: `leaves` as in [`RowCode::leaves`], `outs` the written
/// values' tensors (in [`RowSegment::written`] order).
pub(crate) fn run_rows(
    code: &RowCode,
    leaves: &[&AnyTensor],
    outs: &[&AnyTensor],
    cfg: &ExecConfig,
) -> Result<()> {
    match outs.first().map(|t| t.dtype()) {
        Some(DType::F32) => run_typed::<f32>(code, leaves, outs, cfg),
        Some(DType::F64) => run_typed::<f64>(code, leaves, outs, cfg),
        Some(other) => Err(Error::invalid(format!("internal: row segment of {other}"))),
        None => Ok(()),
    }
}

fn run_typed<T>(
    code: &RowCode,
    leaves: &[&AnyTensor],
    outs: &[&AnyTensor],
    cfg: &ExecConfig,
) -> Result<()>
where
    T: FloatElement + AnyElement + ReduceElement<Wide = T>,
{
    let sizes = &code.sizes;
    let nd = sizes.len();
    if nd == 0 || leaves.len() != code.leaves.len() || outs.len() != code.written.len() {
        return Err(Error::invalid("internal: row segment operands"));
    }
    let mut per_row = sizes.clone();
    per_row[nd - 1] = 1;
    let outs: Vec<&Tensor<T>> = outs.iter().map(|t| typed::<T>(t)).collect::<Result<_>>()?;
    let ins: Vec<&Tensor<T>> = leaves.iter().map(|t| typed::<T>(t)).collect::<Result<_>>()?;
    for (t, &i) in outs.iter().zip(&code.written) {
        let want: &[i64] = if is_row(&code.instrs[i]) { sizes } else { &per_row };
        if t.sizes() != want {
            return Err(Error::invalid("internal: a row segment's output of other sizes"));
        }
        if !crate::tensor::layout_is_non_overlapping(t.sizes(), t.strides()) {
            return Err(Error::MemoryOverlap {
                message: "a row segment's output overlaps itself".into(),
            });
        }
    }
    for (a, t) in outs.iter().enumerate() {
        let shared = outs[..a].iter().chain(&ins).any(|u| u.storage().same(t.storage()));
        if shared {
            return Err(Error::MemoryOverlap {
                message: "a row segment's output shares storage with another operand".into(),
            });
        }
    }
    // Per operand (outputs, then leaves): its strides broadcast to the rows' sizes.
    let strides = outs
        .iter()
        .chain(&ins)
        .map(|t| Ok(bcast_strides(*t, sizes)?.iter().map(|&s| s as isize).collect()))
        .collect::<Result<Vec<Vec<isize>>>>()?;
    let k_len = sizes[nd - 1] as usize;
    let rows: usize = sizes[..nd - 1].iter().product::<i64>() as usize;
    if rows == 0 {
        return Ok(());
    }
    let (ptrs, _borrows) = Ptrs::borrow(&outs, &ins)?;
    let stream: SmallVec<[bool; 2]> = outs.iter().map(|t| stream_output::<T>(t.numel() as usize)).collect();
    let w = Walk {
        sizes: sizes.iter().map(|&z| z as usize).collect(),
        offsets: outs.iter().chain(&ins).map(|t| t.storage_offset() as isize).collect(),
        period: 0,
        periodic: vec![false; strides.len()],
        strides,
    };
    let avx2 = use_avx2(cfg.simd);
    let job = Job {
        code,
        w: &w,
        ptrs: &ptrs,
        k_len,
        stream: &stream,
        simd: cfg.simd,
    };
    let numel = rows * k_len.max(1);
    let threads = rayon::current_num_threads();
    let tasks = (threads * cfg.tasks_per_thread.max(1)).min(rows);
    if threads > 1 && numel >= 2 * cfg.grain_size.max(1) && tasks > 1 {
        let per = rows.div_ceil(tasks);
        (0..tasks).into_par_iter().for_each(|t| {
            let (r0, r1) = ((t * per).min(rows), ((t + 1) * per).min(rows));
            // SAFETY: the operands were validated above and are borrowed; tasks take
            // disjoint rows; AVX2 only when detected.
            unsafe { job.run_simd(avx2, r0, r1) };
        });
    } else {
        // SAFETY: as above.
        unsafe { job.run_simd(avx2, 0, rows) };
    }
    Ok(())
}

/// One evaluation's shared state.
struct Job<'a, T> {
    code: &'a RowCode,
    w: &'a Walk,
    ptrs: &'a Ptrs<T>,
    k_len: usize,
    stream: &'a [bool],
    simd: Simd,
}

// SAFETY: see `Ptrs` (tasks write disjoint rows of non-overlapping outputs and only read
// the leaves); the rest is shared read-only.
unsafe impl<T: Send> Sync for Job<'_, T> {}

/// Folds a row with reducer `r` as the kernels fold a reduction: leaves of [`LEAF`] values,
/// combined by a pairwise cascade.
#[inline(always)]
fn fold_row<T: Copy, R: Reducer<T, Out = T>>(r: R, xs: &[T], simd: Simd) -> T {
    let comb = |a, b| r.combine(a, b);
    let mut casc = Cascade::new();
    let mut at = 0i64;
    for c in xs.chunks(LEAF) {
        casc.push(fold_run(&r, c, at, simd), comb);
        at += c.len() as i64;
    }
    r.finish(casc.finish(r.identity(), comb), xs.len() as i64)
}

fn reduce_row<T>(op: ReductionOp, xs: &[T], simd: Simd) -> T
where
    T: FloatElement + ReduceElement<Wide = T>,
{
    match op {
        ReductionOp::Sum => fold_row(Sum, xs, simd),
        ReductionOp::Mean => fold_row(Mean, xs, simd),
        ReductionOp::Amax => fold_row(Amax, xs, simd),
        ReductionOp::Amin => fold_row(Amin, xs, simd),
        // `compile_rows` admits only the fusable reductions.
        _ => fold_row(Prod, xs, simd),
    }
}

impl<T> Job<'_, T>
where
    T: FloatElement + ReduceElement<Wide = T>,
{
    /// Rows `r0..r1`.
    ///
    /// # Safety
    /// The operands are validated and borrowed (see [`run_typed`]); no other task writes
    /// these rows.
    #[inline(always)]
    unsafe fn run(&self, r0: usize, r1: usize) {
        let code = self.code;
        let k = self.k_len;
        let mut sc = RowScratch {
            bufs: code
                .instrs
                .iter()
                .map(|i| if is_row(i) { vec![T::ZERO; k] } else { Vec::new() })
                .collect(),
            scal: vec![T::ZERO; code.instrs.len()],
            gathered: vec![Vec::new(); code.leaves.len()],
            fill: Vec::new(),
        };
        let mut at = RowCursor::new(self.w, r0);
        for _ in r0..r1 {
            // SAFETY: the caller's contract; `at` is a row of the validated walk.
            unsafe { self.row(&at.base, &mut sc) };
            at.advance(self.w);
        }
        if self.stream.iter().any(|&s| s) {
            store_fence();
        }
    }

    /// One row: the leaves' rows (slices in place, numbers, or gathered), every step over
    /// the row, then the written values stored.
    ///
    /// # Safety
    /// As [`Job::run`]; `base` holds the operands' offsets at a row of the walk.
    #[inline(always)]
    unsafe fn row(&self, base: &[isize], sc: &mut RowScratch<T>) {
        let code = self.code;
        let k = self.k_len;
        let n_out = self.ptrs.outs.len();
        let id = self.w.sizes.len() - 1;
        let RowScratch {
            bufs,
            scal,
            gathered,
            fill,
        } = sc;
        let mut lv: SmallVec<[Opnd<'_, T>; 4]> = SmallVec::new();
        for (l, g) in gathered.iter_mut().enumerate() {
            let o = n_out + l;
            let s = self.w.strides[o][id];
            // SAFETY: `base[o] + j·s` for `j < k` addresses the leaf's broadcast layout,
            // inside its storage (validated tensor), borrowed for reading.
            unsafe {
                let p = self.ptrs.leaves[l].offset(base[o]);
                lv.push(if s == 1 {
                    Opnd::Slice(std::slice::from_raw_parts(p, k))
                } else if s == 0 || k == 0 {
                    Opnd::Scalar(if k == 0 { T::ZERO } else { *p })
                } else {
                    g.clear();
                    g.extend((0..k).map(|j| *p.offset(j as isize * s)));
                    Opnd::Slice(std::slice::from_raw_parts(g.as_ptr(), k))
                });
            }
        }
        for (i, ins) in code.instrs.iter().enumerate() {
            let (done, rest) = bufs.split_at_mut(i);
            let opnd = |a: &RSrc| match *a {
                RSrc::Leaf(l) => lv[l],
                RSrc::Reg(j) if is_row(&code.instrs[j]) => Opnd::Slice(&done[j][..k]),
                RSrc::Reg(j) => Opnd::Scalar(scal[j]),
                RSrc::Imm(v) => Opnd::Scalar(T::from_scalar(v)),
            };
            match ins {
                Instr::Elem { op, args, row } => {
                    let mut a = [Opnd::Scalar(T::ZERO); 2];
                    for (slot, s) in a.iter_mut().zip(args) {
                        *slot = opnd(s);
                    }
                    let a = &a[..args.len().min(2)];
                    if *row {
                        let _ = eval(*op, &mut rest[0][..k], a);
                    } else {
                        let mut one = [T::ZERO];
                        let _ = eval(*op, &mut one, a);
                        scal[i] = one[0];
                    }
                }
                Instr::Reduce { op, src } => {
                    scal[i] = match opnd(src) {
                        Opnd::Slice(xs) => reduce_row(*op, xs, self.simd),
                        Opnd::Scalar(v) => {
                            fill.clear();
                            fill.resize(k, v);
                            reduce_row(*op, fill, self.simd)
                        }
                    };
                }
            }
        }
        for (o, &i) in code.written.iter().enumerate() {
            // SAFETY: `base[o]` (+ j·stride for a row) addresses this row of output `o`,
            // which only this task writes (validated, borrowed exclusively).
            unsafe {
                let p = self.ptrs.outs[o].offset(base[o]);
                if is_row(&code.instrs[i]) {
                    store(p, self.w.strides[o][id], &bufs[i][..k], self.stream[o]);
                } else {
                    *p = scal[i];
                }
            }
        }
    }

    /// [`Job::run`], compiled for AVX2 when `avx2`.
    ///
    /// # Safety
    /// As [`Job::run`]; `avx2` only when the CPU reports AVX2 ([`use_avx2`]).
    #[inline(always)]
    unsafe fn run_simd(&self, avx2: bool, r0: usize, r1: usize) {
        #[cfg(target_arch = "x86_64")]
        if avx2 {
            // SAFETY: the caller's contract (AVX2 present).
            return unsafe { self.run_avx2(r0, r1) };
        }
        let _ = avx2;
        // SAFETY: the caller's contract.
        unsafe { self.run(r0, r1) }
    }

    /// # Safety
    /// As [`Job::run`], on a CPU with AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn run_avx2(&self, r0: usize, r1: usize) {
        // SAFETY: the caller's contract.
        unsafe { self.run(r0, r1) }
    }
}

/// A task's buffers: a row per row-valued step, a number per step, a gathered row per
/// strided leaf, and a row of one repeated number (a reduction of a broadcast operand).
struct RowScratch<T> {
    bufs: Vec<Vec<T>>,
    scal: Vec<T>,
    gathered: Vec<Vec<T>>,
    fill: Vec<T>,
}

fn is_row(i: &Instr) -> bool {
    matches!(i, Instr::Elem { row: true, .. })
}
