//! The block evaluator of fused chains (the rules are in `fuse.rs`).
//!
//! # The walk
//! One loop walks the iteration in the memory order of the chain's outputs (dims sorted by
//! the first output's strides, adjacent dims coalesced where every operand allows). Short
//! innermost rows are merged further across outer dims along which an operand is broadcast
//! (stride 0): the 64 channels of a channels-last `[n, 64, h, w]` tensor plus a `[64, 1, 1]`
//! bias become one row of `n·h·w·64` elements in which the bias is *periodic* (period 64).
//! Blocks are then a multiple of the period long, and a periodic operand is one buffer laid
//! out once per task (the period repeated), so every block reads it as a plain slice.
//!
//! # A block
//! Per block of up to [`BLOCK`] elements every leaf is a slice (stride 1, no copy), a scalar
//! (stride 0), the pre-tiled buffer of a periodic leaf, or a small gathered buffer; the
//! members are evaluated one after another over the block with the op table's own element
//! functions (`kernel::Add`, `kernel::Exp`, ...), each a vectorizable loop over L1-resident
//! buffers. Then:
//! * an elementwise chain writes its root's block to memory (for outputs of at least 8 MiB,
//!   as the op kernels, with non-temporal stores straight from the block: `kernel::stream_copy`);
//! * a chain feeding a reduction folds the block into the output's accumulator with the
//!   reduction kernels' own leaf fold and pairwise cascade (`kernel::fold_run`,
//!   `kernel::Cascade`: the f32 sum still accumulates in f64), and writes the block too when
//!   the reduction's input is materialized (read by a later step; plain stores, so that
//!   later read finds it in the cache: measured, `docs/perf/2026-11-programs.md`).
//!
//! The whole block is stored at once: sub-blocks stored as they are computed, or the last
//! member writing non-temporal bursts itself, measured no faster on the conv epilogue
//! (`docs/perf/2026-11-programs.md`).
//!
//! For a reduction the first output operand is the reduction's dense result viewed over the
//! input's sizes with stride 0 on the reduced dims (as TensorIterator builds it), so the walk
//! puts the reduced dims innermost and every output is a run of consecutive rows.
//!
//! The block evaluation is compiled twice, for the x86-64 baseline (SSE2) and for AVX2
//! (`#[target_feature]`, chosen at run time under `Simd::Auto`): the member loops are the
//! same element functions, so the results are identical. The per-member operand list is a
//! fixed array (it was a collected `SmallVec`, whose out-of-line `extend` took as many
//! samples as the member loops in `perf`).
//!
//! # Parallelism
//! Rows are spread over rayon tasks above `2 × grain_size` elements (for a reduction: whole
//! outputs; with fewer outputs than tasks it runs on the calling thread). A single long row
//! (an elementwise chain over dense operands) is split into ranges of whole blocks.

use super::fuse::{Compiled, Src};
use crate::kernel::{
    fold_run, store_fence, stream_copy, stream_output, Cascade, ExecConfig, Map1, Map2, Map3, Simd,
};
use crate::op::{AnyElement, AnyTensor, Op};
use crate::reduce::{Amax, Amin, Mean, Prod, ReduceElement, Reducer, ReductionOp, Sum};
use crate::tensor::{FloatElement, ReadGuard, Tensor, WriteGuard};
use crate::{Error, Result};
use rayon::prelude::*;
use smallvec::SmallVec;

/// Elements per block of the fused evaluator (per leaf and member buffer: 1024 f32 are
/// 4 KiB, so a chain's few buffers stay in the 48 KiB L1). Measured on the conv epilogue
/// (see the `program` docs): 256 → 1024 took the fused pass from 1.29-1.37 to 0.80-0.92 ms
/// (minima, same runs); 512 gave 1.04-1.07, 2048 1.53-1.56 (the buffers spill L1).
pub const BLOCK: usize = 1024;

/// Most operands of a fusable op (the table's unary, binary and ternary elementwise ops;
/// `crate::op`'s table test asserts every fusable row fits).
pub(crate) const MAX_ARITY: usize = 3;

/// Where a fused chain's result goes.
pub(crate) enum Sink<'a> {
    /// An elementwise chain: its root's tensor.
    Write(&'a AnyTensor),
    /// A chain feeding reduction `op`: the reduction's dense output, whose sizes are those of
    /// the chain's last member with `mask`ed dims reduced, and, when that member is
    /// materialized too, its tensor.
    Reduce {
        /// The reduction.
        op: ReductionOp,
        /// Per dim of the chain's last member: reduced.
        mask: &'a [bool],
        /// The reduction's output (dense, `keepdim` or not).
        out: &'a AnyTensor,
        /// The last member's tensor, when it is written too.
        write: Option<&'a AnyTensor>,
    },
}

/// Evaluates a compiled chain reading `leaves` into `sink`.
pub(crate) fn run_chain(
    c: &Compiled,
    leaves: &[&AnyTensor],
    sink: Sink<'_>,
    sizes: &[i64],
    cfg: &ExecConfig,
) -> Result<()> {
    let dtype = match &sink {
        Sink::Write(t) => t.dtype(),
        Sink::Reduce { out, .. } => out.dtype(),
    };
    match dtype {
        crate::DType::F32 => run_typed::<f32>(c, leaves, sink, sizes, cfg),
        crate::DType::F64 => run_typed::<f64>(c, leaves, sink, sizes, cfg),
        other => Err(Error::invalid(format!("internal: fused chain of {other}"))),
    }
}

/// A block operand: a slice of the block's length or one value for all of it.
#[derive(Clone, Copy)]
pub(super) enum Opnd<'a, T> {
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

/// `o[i] = f(a[i], b[i], c[i])`; the common case (scalar bounds of a clamp) has its own loop.
#[inline(always)]
fn tern<T: Copy>(
    o: &mut [T],
    a: Opnd<'_, T>,
    b: Opnd<'_, T>,
    c: Opnd<'_, T>,
    f: impl Fn(T, T, T) -> T,
) {
    let at = |x: Opnd<'_, T>, i: usize| match x {
        Opnd::Slice(s) => s[i],
        Opnd::Scalar(v) => v,
    };
    match (a, b, c) {
        (Opnd::Slice(x), Opnd::Scalar(lo), Opnd::Scalar(hi)) => {
            for (o, &x) in o.iter_mut().zip(x) {
                *o = f(x, lo, hi);
            }
        }
        _ => {
            for (i, o) in o.iter_mut().enumerate() {
                *o = f(at(a, i), at(b, i), at(c, i));
            }
        }
    }
}

/// One fused form of the registry: how a fusable op's element function runs on a block.
macro_rules! fused_form {
    (none, $op:expr, $o:expr, $a:expr) => {
        return Err(Error::invalid(format!("internal: {} is not fusable", $op)))
    };
    (un($F:expr), $op:expr, $o:expr, $a:expr) => {
        match $a {
            [x] => un($o, *x, |v| $F.call(v)),
            _ => return Err(arity_error($op, $a.len())),
        }
    };
    (bin($F:expr), $op:expr, $o:expr, $a:expr) => {
        match $a {
            [x, y] => bin($o, *x, *y, |u, v| $F.call(u, v)),
            _ => return Err(arity_error($op, $a.len())),
        }
    };
    (tern($F:expr), $op:expr, $o:expr, $a:expr) => {
        match $a {
            [x, y, z] => tern($o, *x, *y, *z, |u, v, w| $F.call(u, v, w)),
            _ => return Err(arity_error($op, $a.len())),
        }
    };
}

fn arity_error(op: Op, n: usize) -> Error {
    Error::invalid(format!("internal: {op} with {n} operands in a fused chain"))
}

/// Expands the registry into [`eval`]: one arm per op, its fused form.
macro_rules! define_eval {
    ($( $op:ident : $name:literal / $arity:literal, $table:tt,
        kernel $kf:ident ($($ka:tt)*), fused $ff:ident $(($($fa:tt)*))? ; )*) => {
        /// Evaluates one fusable op over a block: `o[i] = op(a[0][i], ...)`.
        #[inline(always)]
        pub(super) fn eval<T: FloatElement>(op: Op, o: &mut [T], a: &[Opnd<'_, T>]) -> Result<()> {
            match op {
                $(Op::$op => fused_form!($ff $(($($fa)*))?, op, o, a),)*
            }
            Ok(())
        }
    };
}
crate::op::elementwise_ops!(define_eval);

/// The iteration: dims in the first output's memory order, coalesced; per operand (outputs
/// first, then the leaves) element strides; the innermost dim last.
pub(super) struct Walk {
    pub(super) sizes: Vec<usize>,
    pub(super) strides: Vec<Vec<isize>>,
    pub(super) offsets: Vec<isize>,
    /// When non-zero, the innermost dim is rows of `period` elements merged across outer
    /// dims along which the `periodic` operands are broadcast (stride 0): element `i` of
    /// such an operand's innermost dim is at `(i % period) · stride`.
    pub(super) period: usize,
    /// Per operand: read periodically along the innermost dim (see `period`).
    pub(super) periodic: Vec<bool>,
}

impl Walk {
    /// Elements per block: [`BLOCK`], or its largest multiple of the period (so every block
    /// starts at a period boundary and a periodic operand is one pre-tiled buffer).
    fn block(&self) -> usize {
        match BLOCK.checked_div(self.period) {
            None => BLOCK,
            Some(n) => n.max(1) * self.period,
        }
    }
}

/// The walk over `sizes` for `operands` (strides broadcast to `sizes`, offset), of which the
/// first `n_out` are written (they must stay dense wherever rows are merged). For a
/// `reduction` (the first operand has stride 0 on the reduced dims) the innermost dim is
/// always a reduced one: a size-1 dim is added when every reduced dim has size 1.
pub(super) fn walk(
    sizes: &[i64],
    operands: &[(Vec<i64>, i64)],
    n_out: usize,
    reduction: bool,
) -> Walk {
    let nd = sizes.len();
    let n_ops = operands.len();
    let first = &operands[0].0;
    // Sort the dims by the first output's decreasing stride (stable: ties keep the user
    // order; a reduction's stride-0 dims go innermost).
    let mut dims: Vec<usize> = (0..nd).filter(|&d| sizes[d] != 1).collect();
    dims.sort_by(|&a, &b| first[b].cmp(&first[a]));
    let mut wsizes: Vec<usize> = Vec::new();
    let mut strides: Vec<Vec<isize>> = vec![Vec::new(); n_ops];
    for &d in &dims {
        let z = sizes[d] as usize;
        if let Some(&last) = wsizes.last() {
            // Coalesce into the previous (outer) dim when every operand allows it.
            let can = (0..n_ops).all(|o| {
                let outer = *strides[o].last().unwrap_or(&0);
                outer == operands[o].0[d] as isize * z as isize
            });
            if can {
                let i = wsizes.len() - 1;
                wsizes[i] = last * z;
                for (o, s) in strides.iter_mut().enumerate() {
                    s[i] = operands[o].0[d] as isize;
                }
                continue;
            }
        }
        wsizes.push(z);
        for (o, s) in strides.iter_mut().enumerate() {
            s.push(operands[o].0[d] as isize);
        }
    }
    if wsizes.is_empty() || reduction && strides[0].last() != Some(&0) {
        wsizes.push(1);
        for s in &mut strides {
            s.push(0);
        }
    }
    // Short rows: merge outer dims into the innermost while every output continues densely
    // and every leaf either does too or is broadcast there (then it reads one period over
    // and over).
    let mut period = 0;
    let mut periodic = vec![false; n_ops];
    while wsizes.len() >= 2 {
        let i = wsizes.len() - 1;
        let inner = wsizes[i];
        let p = if period == 0 { inner } else { period };
        if p > BLOCK {
            break;
        }
        let ok = (0..n_ops).all(|o| {
            let (outer, st) = (strides[o][i - 1], strides[o][i]);
            let dense = !periodic[o] && outer == inner as isize * st;
            let bcast = o >= n_out && (periodic[o] || period == 0) && outer == 0 && st != 0;
            dense || bcast
        });
        // Merging only pays when some leaf becomes periodic (else the coalescing above
        // already merged everything it could).
        let gains = (0..n_ops).any(|o| periodic[o] || strides[o][i - 1] == 0 && strides[o][i] != 0);
        if !ok || !gains {
            break;
        }
        for (o, s) in strides.iter_mut().enumerate() {
            if s[i - 1] == 0 && s[i] != 0 {
                periodic[o] = true;
            }
            s[i - 1] = s[i];
            s.pop();
        }
        period = p;
        wsizes[i - 1] *= inner;
        wsizes.pop();
    }
    Walk {
        sizes: wsizes,
        strides,
        offsets: operands.iter().map(|o| o.1 as isize).collect(),
        period,
        periodic,
    }
}

/// Raw base pointers of the operands (outputs, then leaves), shared by the rayon tasks.
pub(super) struct Ptrs<T> {
    pub(super) outs: SmallVec<[*mut T; 2]>,
    pub(super) leaves: SmallVec<[*const T; 4]>,
}

/// The borrows [`Ptrs::borrow`] holds: every output exclusively, every leaf shared.
pub(super) type Borrows<'a> = (Vec<WriteGuard<'a>>, Vec<ReadGuard<'a>>);

impl<T: AnyElement> Ptrs<T> {
    /// Borrows the storages of `outs` (exclusively) and `ins` (shared) for as long as the
    /// returned guards live, and takes their base pointers.
    pub(super) fn borrow<'a>(outs: &[&'a Tensor<T>], ins: &[&'a Tensor<T>]) -> Result<(Self, Borrows<'a>)> {
        let w = outs.iter().map(|t| t.storage().write()).collect::<Result<Vec<_>>>()?;
        let r = ins.iter().map(|t| t.storage().read()).collect::<Result<Vec<_>>>()?;
        let ptrs = Ptrs {
            outs: outs.iter().map(|t| t.storage().ptr()).collect(),
            leaves: ins.iter().map(|t| t.storage().ptr() as *const T).collect(),
        };
        Ok((ptrs, (w, r)))
    }
}
// SAFETY: the pointed-to storages are borrowed (the outputs exclusively, the leaves shared)
// for the whole evaluation; tasks write disjoint output elements (distinct rows of a
// non-overlapping layout, distinct reduction outputs) and only read the leaves.
unsafe impl<T: Send> Send for Ptrs<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Ptrs<T> {}

/// Where a block is: the leaves' base pointers, the row's operand offsets (`n_out` outputs
/// first, then the leaves), and the block's `start` and `len` along the innermost dim.
#[derive(Clone, Copy)]
struct BlockAt<'a, T> {
    lptrs: &'a [*const T],
    base: &'a [isize],
    n_out: usize,
    start: usize,
    len: usize,
}

impl<'a, T> BlockAt<'a, T> {
    fn new(
        lptrs: &'a [*const T],
        base: &'a [isize],
        n_out: usize,
        start: usize,
        len: usize,
    ) -> Self {
        BlockAt {
            lptrs,
            base,
            n_out,
            start,
            len,
        }
    }
}

/// Per-task buffers: one block per leaf (gathered, or the pre-tiled period of a periodic
/// leaf and the base it was tiled from) and one per member.
struct Scratch<T> {
    leaf: Vec<Vec<T>>,
    tiled_at: Vec<Option<isize>>,
    regs: Vec<Vec<T>>,
}

impl<T: FloatElement> Scratch<T> {
    fn new(c: &Compiled, block: usize) -> Self {
        Scratch {
            leaf: vec![vec![T::ZERO; block]; c.leaves.len()],
            tiled_at: vec![None; c.leaves.len()],
            regs: vec![vec![T::ZERO; block]; c.code.len()],
        }
    }

    /// Evaluates the chain over `len` elements of the innermost dim from `start` (the row's
    /// operand offsets in `base`, leaves after the `n_out` outputs); returns the last
    /// member's block.
    ///
    /// # Safety
    /// `base` must be a row of `w` (every addressed leaf element inside its storage, which is
    /// borrowed for reading), `start + len` at most the innermost size, `len` at most
    /// `w.block()`, and `start` a multiple of `w.period` when there is one.
    #[inline(always)]
    unsafe fn block(&mut self, c: &Compiled, w: &Walk, at: BlockAt<'_, T>) -> &[T] {
        let BlockAt {
            lptrs,
            base,
            n_out,
            start,
            len,
        } = at;
        let id = w.sizes.len() - 1;
        let mut ops: SmallVec<[Opnd<'_, T>; 4]> = SmallVec::new();
        for (l, buf) in self.leaf.iter_mut().enumerate() {
            let o = l + n_out;
            let s = w.strides[o][id];
            if w.periodic[o] {
                if self.tiled_at[l] != Some(base[o]) {
                    // SAFETY: `base[o] + j·s` for `j < period` addresses the leaf's
                    // elements of this row's period (validated layout, caller's contract).
                    let p = unsafe { lptrs[l].offset(base[o]) };
                    for (i, b) in buf.iter_mut().enumerate() {
                        *b = unsafe { *p.offset((i % w.period) as isize * s) };
                    }
                    self.tiled_at[l] = Some(base[o]);
                }
                ops.push(Opnd::Slice(&buf[..len]));
                continue;
            }
            let at = base[o] + start as isize * s;
            // SAFETY: `at + i·s` for `i < len` addresses an element of the leaf's broadcast
            // layout, which lies inside its storage (tensor invariant; broadcast dims have
            // stride 0); the storage is borrowed for reading.
            unsafe {
                let p = lptrs[l].offset(at);
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
            let (done, rest) = self.regs.split_at_mut(i);
            // A fixed array, not a collected SmallVec: per block and member, the collect
            // (an out-of-line `extend`) cost as much as the member's loop (`perf`).
            let mut a = [Opnd::Scalar(T::ZERO); MAX_ARITY];
            for (slot, s) in a.iter_mut().zip(args) {
                *slot = match *s {
                    Src::Leaf(l) => ops[l],
                    Src::Reg(j) => Opnd::Slice(&done[j][..len]),
                    Src::Imm(v) => Opnd::Scalar(T::from_scalar(v)),
                };
            }
            // Checked before the walk: arities are the table's (at most MAX_ARITY).
            let _ = eval(*op, &mut rest[0][..len], &a[..args.len().min(MAX_ARITY)]);
        }
        &self.regs[c.code.len() - 1][..len]
    }

    /// [`Scratch::block`] compiled for AVX2 when `avx2` (the member loops then run 8 f32 per
    /// instruction instead of SSE2's 4; the results are the same: no FMA contraction, the
    /// same element functions).
    ///
    /// # Safety
    /// As [`Scratch::block`]; `avx2` only when the CPU reports AVX2 ([`use_avx2`]).
    #[inline(always)]
    unsafe fn block_simd(
        &mut self,
        avx2: bool,
        c: &Compiled,
        w: &Walk,
        at: BlockAt<'_, T>,
    ) -> &[T] {
        #[cfg(target_arch = "x86_64")]
        if avx2 {
            // SAFETY: the caller's contract (AVX2 present).
            return unsafe { self.block_avx2(c, w, at) };
        }
        let _ = avx2;
        // SAFETY: the caller's contract.
        unsafe { self.block(c, w, at) }
    }

    /// # Safety
    /// As [`Scratch::block`], on a CPU with AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn block_avx2(&mut self, c: &Compiled, w: &Walk, at: BlockAt<'_, T>) -> &[T] {
        // SAFETY: the caller's contract.
        unsafe { self.block(c, w, at) }
    }
}

/// Whether the block evaluator may use AVX2: `simd` allows run-time detection and the CPU
/// reports it.
pub(super) fn use_avx2(simd: Simd) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        simd == Simd::Auto && std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = simd;
        false
    }
}

/// Writes `res` to the output elements at `p`, `s` apart (non-temporal stores when `stream`
/// and contiguous).
///
/// # Safety
/// `p + i·s` for `i < res.len()` must be output elements no other task writes, in a storage
/// borrowed exclusively.
#[inline(always)]
pub(super) unsafe fn store<T: FloatElement>(p: *mut T, s: isize, res: &[T], stream: bool) {
    if s == 1 && stream {
        // SAFETY: the caller's contract; `res` is a scratch buffer, not the output. Straight
        // from the block to memory (the block is already in L1; no second buffer).
        unsafe {
            stream_copy(
                p as *mut u8,
                res.as_ptr() as *const u8,
                std::mem::size_of_val(res),
            )
        };
    } else if s == 1 {
        // SAFETY: the caller's contract; `res` is not the output.
        unsafe { std::ptr::copy_nonoverlapping(res.as_ptr(), p, res.len()) };
    } else {
        for (i, &v) in res.iter().enumerate() {
            // SAFETY: the caller's contract.
            unsafe { *p.offset(i as isize * s) = v };
        }
    }
}

/// Calls `f(base)` for rows `r0..r1` of `w` (row-major over the outer dims) with the
/// operands' offsets at each row's start.
fn for_rows(w: &Walk, r0: usize, r1: usize, mut f: impl FnMut(&[isize])) {
    let mut at = RowCursor::new(w, r0);
    for _ in r0..r1 {
        f(&at.base);
        at.advance(w);
    }
}

/// The operands' offsets at the start of a row of a [`Walk`], stepped row by row
/// (row-major over the outer dims). A cursor rather than a closure-taking loop for callers
/// inside a `#[target_feature]` twin: a closure that is not inlined is compiled without
/// the twin's features.
pub(super) struct RowCursor {
    idx: SmallVec<[usize; 8]>,
    /// Per operand: the offset of the current row's first element.
    pub(super) base: SmallVec<[isize; 8]>,
}

impl RowCursor {
    /// At row `r` of `w`.
    #[inline(always)]
    pub(super) fn new(w: &Walk, r: usize) -> Self {
        let outer = &w.sizes[..w.sizes.len() - 1];
        let mut idx: SmallVec<[usize; 8]> = smallvec::smallvec![0; outer.len()];
        let mut r = r;
        for d in (0..outer.len()).rev() {
            idx[d] = r % outer[d];
            r /= outer[d];
        }
        let base = (0..w.offsets.len())
            .map(|o| {
                w.offsets[o]
                    + idx
                        .iter()
                        .enumerate()
                        .map(|(d, &i)| i as isize * w.strides[o][d])
                        .sum::<isize>()
            })
            .collect();
        RowCursor { idx, base }
    }

    /// To the next row.
    #[inline(always)]
    pub(super) fn advance(&mut self, w: &Walk) {
        let outer = &w.sizes[..w.sizes.len() - 1];
        for d in (0..outer.len()).rev() {
            self.idx[d] += 1;
            for (o, b) in self.base.iter_mut().enumerate() {
                *b += w.strides[o][d];
            }
            if self.idx[d] < outer[d] {
                break;
            }
            for (o, b) in self.base.iter_mut().enumerate() {
                *b -= w.strides[o][d] * outer[d] as isize;
            }
            self.idx[d] = 0;
        }
    }
}

/// Broadcast strides of `t` to `sizes` (right-aligned; size 1 reads index 0).
pub(super) fn bcast_strides<T: AnyElement>(t: &Tensor<T>, sizes: &[i64]) -> Result<Vec<i64>> {
    let nd = sizes.len();
    let shift = nd
        .checked_sub(t.dim())
        .ok_or_else(|| Error::invalid("internal: a fused leaf has more dims than the output"))?;
    let mut st = vec![0i64; nd];
    for d in 0..t.dim() {
        let z = t.sizes()[d];
        if z == sizes[d + shift] {
            st[d + shift] = if z == 1 { 0 } else { t.strides()[d] };
        } else if z != 1 {
            return Err(Error::invalid(
                "internal: a fused leaf does not broadcast to the output",
            ));
        }
    }
    Ok(st)
}

pub(super) fn typed<T: AnyElement>(t: &AnyTensor) -> Result<&Tensor<T>> {
    t.typed::<T>()
        .ok_or_else(|| Error::invalid("internal: a fused operand of another dtype"))
}

fn run_typed<T>(
    c: &Compiled,
    leaves: &[&AnyTensor],
    sink: Sink<'_>,
    sizes: &[i64],
    cfg: &ExecConfig,
) -> Result<()>
where
    T: FloatElement + AnyElement + ReduceElement<Wide = T>,
{
    for (op, args) in &c.code {
        if args.len() != op.def().arity || !op.def().fusable {
            return Err(Error::invalid(format!("internal: {op} in a fused chain")));
        }
    }
    // Outputs (written) first, then the leaves.
    let mut outs: SmallVec<[&Tensor<T>; 2]> = SmallVec::new();
    let mut operands: Vec<(Vec<i64>, i64)> = Vec::new();
    let mut red = None;
    match sink {
        Sink::Write(t) => {
            let t = typed::<T>(t)?;
            if t.sizes() != sizes {
                return Err(Error::invalid("internal: a fused root of other sizes"));
            }
            operands.push((t.strides().to_vec(), t.storage_offset()));
            outs.push(t);
        }
        Sink::Reduce {
            op,
            mask,
            out,
            write,
        } => {
            let o = typed::<T>(out)?;
            let kept: i64 = sizes
                .iter()
                .zip(mask)
                .filter(|(_, &m)| !m)
                .map(|(s, _)| s)
                .product();
            if mask.len() != sizes.len()
                || o.numel() != kept
                || !crate::layout::is_contiguous(o.sizes(), o.strides())?
            {
                return Err(Error::invalid(
                    "internal: a fused reduction's output does not match its input",
                ));
            }
            // The dense output over the input's sizes, stride 0 on the reduced dims.
            let mut st = vec![0i64; sizes.len()];
            let mut acc = 1i64;
            for d in (0..sizes.len()).rev() {
                if !mask[d] {
                    st[d] = acc;
                    acc *= sizes[d];
                }
            }
            operands.push((st, o.storage_offset()));
            outs.push(o);
            if let Some(t) = write {
                let t = typed::<T>(t)?;
                if t.sizes() != sizes {
                    return Err(Error::invalid("internal: a fused root of other sizes"));
                }
                operands.push((t.strides().to_vec(), t.storage_offset()));
                outs.push(t);
            }
            red = Some(op);
        }
    }
    for t in &outs {
        if !crate::tensor::layout_is_non_overlapping(t.sizes(), t.strides()) {
            return Err(Error::MemoryOverlap {
                message: "a fused chain's output overlaps itself".into(),
            });
        }
    }
    if outs.len() == 2 && outs[0].storage().same(outs[1].storage()) {
        return Err(Error::MemoryOverlap {
            message: "a fused chain's outputs share storage".into(),
        });
    }
    let mut ins: Vec<&Tensor<T>> = Vec::with_capacity(leaves.len());
    for l in leaves {
        let t = typed::<T>(l)?;
        if outs.iter().any(|o| t.storage().same(o.storage())) {
            return Err(Error::MemoryOverlap {
                message: "a fused chain's output shares storage with an operand".into(),
            });
        }
        operands.push((bcast_strides(t, sizes)?, t.storage_offset()));
        ins.push(t);
    }
    let n_out = outs.len();
    let numel: i64 = sizes.iter().product();
    let (ptrs, _borrows) = Ptrs::borrow(&outs, &ins)?;
    let parallel = rayon::current_num_threads() > 1 && numel >= 2 * cfg.grain_size.max(1) as i64;
    let tasks = rayon::current_num_threads() * cfg.tasks_per_thread.max(1);
    match red {
        None => {
            if numel == 0 {
                return Ok(());
            }
            let w = walk(sizes, &operands, n_out, false);
            run_write(c, &w, &ptrs, numel as usize, parallel, tasks, cfg.simd);
            Ok(())
        }
        Some(op) => {
            if outs[0].numel() == 0 {
                return Ok(());
            }
            let mut w = walk(sizes, &operands, n_out, true);
            if numel == 0 {
                // Nothing to reduce: every output is the reducer's result for no values (one
                // row of none per output, in the dense output's order).
                w = Walk {
                    sizes: vec![outs[0].numel() as usize, 0],
                    strides: (0..operands.len())
                        .map(|o| vec![if o == 0 { 1 } else { 0 }, 0])
                        .collect(),
                    offsets: w.offsets,
                    period: 0,
                    periodic: vec![false; operands.len()],
                };
            }
            let red_dims = w.strides[0].iter().rev().take_while(|&&s| s == 0).count();
            let nd = w.sizes.len();
            let red_rows: usize = w.sizes[nd - red_dims..nd - 1].iter().product();
            let outputs: usize = w.sizes[..nd - red_dims].iter().product();
            let g = RedGeo {
                red_rows,
                outputs,
                parallel: parallel && outputs >= tasks,
                tasks,
                simd: cfg.simd,
            };
            match op {
                ReductionOp::Sum => run_reduce(Sum, c, &w, &ptrs, &g),
                ReductionOp::Mean => run_reduce(Mean, c, &w, &ptrs, &g),
                ReductionOp::Amax => run_reduce(Amax, c, &w, &ptrs, &g),
                ReductionOp::Amin => run_reduce(Amin, c, &w, &ptrs, &g),
                ReductionOp::Prod => run_reduce(Prod, c, &w, &ptrs, &g),
                other => {
                    return Err(Error::invalid(format!(
                        "internal: {other} fused with a chain"
                    )))
                }
            }
            Ok(())
        }
    }
}

/// An elementwise chain: rows over tasks, or one long row split into ranges of blocks.
fn run_write<T: FloatElement>(
    c: &Compiled,
    w: &Walk,
    ptrs: &Ptrs<T>,
    numel: usize,
    parallel: bool,
    tasks: usize,
    simd: Simd,
) {
    let avx2 = use_avx2(simd);
    let inner = *w.sizes.last().unwrap_or(&1);
    let rows: usize = w.sizes[..w.sizes.len() - 1].iter().product();
    let lb = w.block();
    let id = w.sizes.len() - 1;
    let stream = stream_output::<T>(numel);
    // Rows `r0..r1`, each over the inner range `i0..i1` (`i0` a multiple of `lb`).
    let run_rows = |r0: usize, r1: usize, i0: usize, i1: usize| {
        let mut sc = Scratch::<T>::new(c, lb);
        let s = w.strides[0][id];
        for_rows(w, r0, r1, |base| {
            let mut start = i0;
            while start < i1 {
                let len = lb.min(i1 - start);
                let at = BlockAt::new(&ptrs.leaves, base, 1, start, len);
                // SAFETY: `base` is a row of the validated walk, `start + len <= inner`,
                // `start` a multiple of `lb` (so of the period).
                let res = unsafe { sc.block_simd(avx2, c, w, at) };
                // SAFETY: this row block of the output is written by this task only (rows
                // and block ranges are disjoint in a non-overlapping layout) and the
                // storage is borrowed exclusively.
                unsafe {
                    store(
                        ptrs.outs[0].offset(base[0] + start as isize * s),
                        s,
                        res,
                        stream,
                    )
                };
                start += len;
            }
        });
        if stream {
            store_fence();
        }
    };
    if !parallel {
        run_rows(0, rows, 0, inner);
    } else if rows > 1 {
        let tasks = tasks.min(rows);
        let per = rows.div_ceil(tasks);
        (0..tasks)
            .into_par_iter()
            .for_each(|t| run_rows((t * per).min(rows), ((t + 1) * per).min(rows), 0, inner));
    } else {
        // One row: split it into ranges of whole blocks.
        let blocks = inner.div_ceil(lb);
        let per = blocks.div_ceil(tasks.min(blocks)) * lb;
        (0..inner.div_ceil(per))
            .into_par_iter()
            .for_each(|t| run_rows(0, 1, t * per, ((t + 1) * per).min(inner)));
    }
}

/// The shape of a fused reduction's walk: `outputs` runs of `red_rows` rows each.
struct RedGeo {
    red_rows: usize,
    outputs: usize,
    parallel: bool,
    tasks: usize,
    simd: Simd,
}

/// A chain feeding a reduction: per output, its rows in blocks, each block folded with the
/// reduction kernels' leaf fold and combined by their cascade (and written when the last
/// member is materialized).
fn run_reduce<T, R>(r: R, c: &Compiled, w: &Walk, ptrs: &Ptrs<T>, g: &RedGeo)
where
    T: FloatElement,
    R: Reducer<T, Out = T>,
{
    let inner = *w.sizes.last().unwrap_or(&1);
    let k = g.red_rows * inner;
    let lb = w.block();
    let id = w.sizes.len() - 1;
    let write = ptrs.outs.len() == 2;
    let avx2 = use_avx2(g.simd);
    // Plain stores: the written root is read again soon after (softmax's `div`), and
    // non-temporal stores would send it past the caches (see the `program` docs).
    let stream = false;
    let run = |o0: usize, o1: usize| {
        let mut sc = Scratch::<T>::new(c, lb);
        let mut casc = Cascade::new();
        let mut row = 0usize;
        let mut at = 0i64;
        let comb = |a, b| r.combine(a, b);
        for_rows(w, o0 * g.red_rows, o1 * g.red_rows, |base| {
            let mut start = 0;
            while start < inner {
                let len = lb.min(inner - start);
                let here = BlockAt::new(&ptrs.leaves, base, ptrs.outs.len(), start, len);
                // SAFETY: `base` is a row of the validated walk, `start + len <= inner`,
                // `start` a multiple of `lb`.
                let res = unsafe { sc.block_simd(avx2, c, w, here) };
                if write {
                    let s = w.strides[1][id];
                    // SAFETY: the materialized member's elements of this row block belong to
                    // this task's outputs only; its storage is borrowed exclusively.
                    unsafe {
                        store(
                            ptrs.outs[1].offset(base[1] + start as isize * s),
                            s,
                            res,
                            stream,
                        )
                    };
                }
                casc.push(fold_run(&r, res, at, g.simd), comb);
                at += len as i64;
                start += len;
            }
            row += 1;
            if row == g.red_rows {
                let acc = std::mem::replace(&mut casc, Cascade::new()).finish(r.identity(), comb);
                // SAFETY: `base[0]` is this output's offset in the dense reduction output
                // (stride 0 along the reduced dims), written by this task only.
                unsafe { *ptrs.outs[0].offset(base[0]) = r.finish(acc, k as i64) };
                row = 0;
                at = 0;
            }
        });
        if stream {
            store_fence();
        }
    };
    if g.parallel {
        let per = g.outputs.div_ceil(g.tasks);
        (0..g.tasks)
            .into_par_iter()
            .for_each(|t| run((t * per).min(g.outputs), ((t + 1) * per).min(g.outputs)));
    } else {
        run(0, g.outputs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_follows_memory_order_and_coalesces() {
        // Contiguous operands coalesce into one dim.
        let sizes = [2i64, 4, 3, 3];
        let c = vec![36i64, 9, 3, 1];
        let w = walk(&sizes, &[(c.clone(), 0), (c.clone(), 5)], 1, false);
        assert_eq!(w.sizes, vec![72]);
        assert_eq!(w.offsets, vec![0, 5]);
        assert_eq!(w.period, 0);
        // Two contiguous operands and a [1, 4, 1, 1]-like operand broadcast along the
        // innermost dims: rows of 9, nothing periodic (the broadcast one has stride 0 inside
        // the row, and a stride along C).
        let w = walk(&sizes, &[(c.clone(), 0), (vec![0, 1, 0, 0], 0)], 1, false);
        assert_eq!(w.sizes, vec![2, 4, 9]);
        assert_eq!(w.period, 0);
    }

    #[test]
    fn short_rows_merge_with_a_periodic_operand() {
        // Channels-last [2, 4, 3, 3] output and input, plus a [4, 1, 1] broadcast operand:
        // N, H, W coalesce, then C (rows of 4) merges into one row of 72 with the broadcast
        // operand periodic (period 4).
        let (sizes, cl) = ([2i64, 4, 3, 3], vec![36i64, 1, 12, 4]);
        let ops = vec![(cl.clone(), 0), (cl.clone(), 0), (vec![0, 1, 0, 0], 0)];
        let w = walk(&sizes, &ops, 1, false);
        assert_eq!(w.sizes, vec![72]);
        assert_eq!(w.period, 4);
        assert_eq!(w.periodic, vec![false, false, true]);
        assert_eq!(w.strides[2], vec![1]);
        assert_eq!(w.block(), BLOCK);
        // The output itself broadcast-like (a reduction's stride 0) never merges that way.
        let ops = vec![(vec![0, 1, 0, 0], 0), (cl.clone(), 0)];
        let w = walk(&sizes, &ops, 1, false);
        assert_eq!(w.period, 0);
        // Rows longer than a block are not merged.
        let c = BLOCK as i64 + 44;
        let big = [2i64, c, 3, 3];
        let cl = vec![9 * c, 1, 3 * c, c];
        let w = walk(&big, &[(cl.clone(), 0), (vec![0, 1, 0, 0], 0)], 1, false);
        assert_eq!(w.sizes, vec![18, c as usize]);
        assert_eq!(w.period, 0);
    }

    #[test]
    fn a_period_that_does_not_divide_the_block_shortens_it() {
        let (sizes, cl) = ([5i64, 3, 7], vec![21i64, 1, 3]);
        let w = walk(&sizes, &[(cl.clone(), 0), (vec![0, 1, 0], 0)], 1, false);
        assert_eq!(w.period, 3);
        assert_eq!(w.block(), (BLOCK / 3) * 3);
    }
}
