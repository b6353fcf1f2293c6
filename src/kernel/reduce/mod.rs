//! Reduction kernels: execute a reduction plan ([`crate::iter::reduction_plan`]) with a
//! [`Reducer`].
//!
//! # Shapes of work
//! The plan lists the reduced dims first (innermost; output byte stride 0), then the kept
//! dims. With `K` values per output and `M` outputs:
//! * **inner reduction** — the innermost reduced dim is contiguous in the input: each
//!   output reduces slices of memory in leaves of [`LEAF`] elements combined pairwise. A
//!   leaf is the reducer's hand-written AVX2 fold when it has one
//!   ([`Reducer::fold_run_avx2`]; today the float32 `sum`/`mean`, and the float32 and
//!   float64 `amax`/`amin`, which decline a run holding a NaN or whose extreme is a zero so
//!   that the generic lanes decide which NaN or which zero, see `reduce::simd`), else [`LANES`]
//!   independent accumulators that the compiler turns into SIMD registers. Rows of at most
//!   one leaf (`sum(-1)` of a `[65536, 256]` matrix) are folded four at a time when the
//!   reducer has a four-row fold ([`Reducer::fold_runs4_avx2`]): row `i` of each quarter of
//!   a task's outputs together, four memory streams (see "Four streams" below). Consecutive
//!   outputs find their input through an odometer over the kept dims (no division per
//!   output: with rows of 256 values a division is a tenth of the row's work);
//! * **outer reduction** — the reduced dim is strided but the first kept dim is contiguous
//!   (`sum(dim=0)` of a row-major matrix, `amax` over H, W of a channels-last tensor): a
//!   block of up to [`BLOCK`] adjacent outputs is accumulated across input rows at once;
//!   a block of at least 256 bytes of accumulators (the float32 `sum` of 32 or more
//!   columns, in f64) takes one whole row per pass (`acc[j] = step(acc[j], a[j])`,
//!   vectorized over `j`, the accumulators staying in L1), so the input is read in memory
//!   order; a narrower block takes four rows per pass (`acc[j] =
//!   step(step(step(step(acc[j], a[j]), b[j]), c[j]), d[j])`), so each accumulator is
//!   loaded and stored once per four input values; leaves of [`ROW_LEAF`] rows are
//!   combined pairwise. When
//!   the accumulator is no wider than the input (`amax`/`amin`, integer and float64 sums,
//!   `all`/`any`, ...) and the block is at least 256 bytes of accumulators wide, a leaf is
//!   instead folded in **register groups**: 256 bytes of adjacent outputs (64 float32, 32
//!   float64/int64, 256 uint8/bool) whose accumulators live in eight vector registers
//!   while whole rows stream past, one row per step (a ragged width's last group is shifted
//!   left to end at the block's edge, recomputing the overlapped columns). Under AVX2, a
//!   block of the float32 `sum`/`mean` at least 256 bytes of accumulators wide over at
//!   least 256 rows instead folds four rows per pass, one from each quarter of its rows,
//!   into the same accumulators ([`Reducer::fold_rows4_into_avx2`], see "Four streams").
//!   The folds
//!   prefetch the rows they will reach `PREFETCH_BYTES` (one-row passes:
//!   `ROW_PREFETCH_BYTES`) of reduced stride ahead (at least four rows), because the
//!   hardware prefetcher does not keep up with their row streams;
//! * otherwise a strided loop per output, also combined pairwise.
//!
//! # Instruction sets
//! The crate is compiled for the baseline target (SSE2 on x86-64). The hot bodies (a range
//! of inner outputs, one split range, one outer block) are `#[inline(always)]` generic
//! functions compiled twice by a small macro: as they are, and inside an
//! `#[target_feature(enable = "avx2,fma")]` twin where the compiler vectorizes the same code
//! with 256-bit registers, for every reducer and dtype. `isa::Isa::select` chooses the twin
//! once per call from [`ExecConfig::simd`](crate::kernel::ExecConfig) and
//! `is_x86_feature_detected!`; [`Simd::Baseline`](crate::kernel::Simd) forces the portable
//! body (the property tests run every case both ways). Other targets only have the portable
//! body.
//!
//! Why the float32 sum has a hand-written AVX2 fold: under AVX2 the compiler's SLP
//! vectorizer kept the 16-lane leaf at two f64 per register (`vcvtps2pd xmm`), so
//! `reduce::simd` folds with eight 256-bit f64 accumulators, four values converted per
//! instruction, and prefetches the lines 4 KiB ahead (the next rows of a last-dim sum). The
//! outer fold and the NaN-propagating `amax`/`amin` select vectorize to 256 bits on their
//! own and keep the generic code. The outer fold's register groups exist because the
//! four-row fold's accumulators, loaded and stored through a loop of run-time width, made
//! one dependent compare-and-blend chain per vector; with the accumulators in eight `ymm`
//! registers and one whole row per step the chains are independent and only the input is
//! loaded. Register groups are not used for the widening float32 sum (32 f64 accumulators
//! per group measured slower than the four-row fold). Not tried in the crate: AVX-512 (the
//! crate's minimum Rust version predates the stable AVX-512 target features). The `perf`
//! findings and timings: `docs/perf/2026-11-kernels.md` (*Reductions*).
//!
//! The outer sum (`sum(dim=0)`) reads one whole row per pass for blocks of at least 256
//! bytes of accumulators, prefetching `ROW_PREFETCH_BYTES` ahead: interleaving four 1 KiB
//! rows per pass, not the f32 → f64 conversion, was what kept the earlier fold above the
//! time of a pure read, and one row per pass reads the input as one sequential stream.
//! Narrower blocks keep the four-row pass, which saves loop overhead and accumulator
//! traffic per value. The lines to prefetch are returned as two parts looped separately (a
//! chained iterator's state machine had wrapped each row's prefetches). Summing pairs in
//! f32 before widening was ruled out: it would break the correctly rounded result of
//! `# Accuracy`. The probes and bench pairs behind this: `docs/perf/2026-11-kernels.md`.
//!
//! # Four streams
//! One thread reads several *distant* streams faster than one (in a probe, a plain read
//! split into four quarters read together took 15-20% less time than one stream), while
//! four *adjacent* rows interleaved inside the same pages defeat the hardware prefetcher.
//! So the inner reduction of short rows folds four rows from the four quarters of a
//! task's outputs together (`outputs_streams`, `reduce::simd::sum4_f32_avx2`). Because
//! that fold's order differs from the one-run fold's, every row of such a reduction goes
//! through it (a task's last `n % 4` rows too, the last row repeated), and such rows are
//! never split over tasks: the results are bitwise the same at every thread count
//! (`tests/reductions.rs` checks it with rows whose f64 sum depends on the order).
//!
//! The outer float32 sum folds the four quarters' rows into **one** block of accumulators,
//! `acc[j] += (a[j] + b[j]) + (c[j] + d[j])` in f64 (`fold_quarters`,
//! `reduce::simd::sum_rows4_into_f32_avx2`): it keeps the four streams and loads and stores
//! each accumulator once per four values (four separate accumulator blocks kept the
//! one-row fold's per-value cost and gained nothing). Figures:
//! `docs/perf/2026-11-kernels.md` (*Four streams*).
//!
//! # Accuracy
//! Pairwise combination (a binary-counter cascade over leaves) bounds the rounding error of
//! a float sum by `O((leaf / lanes + log2 n) · eps)` instead of the `O(n · eps)` of one
//! running sum; PyTorch's CPU `cascade_sum` has the same goal. float32 sums accumulate in
//! f64 on top of that: an f32 cascade is already within an ulp or two of the exact sum, so
//! on a given data set it is as likely to lose to PyTorch's cascade by an ulp as to win;
//! with f64 lanes the result is the correctly rounded sum (up to `n · 2^-53`), which no f32
//! summation order beats; the hand-written AVX2 fold accumulates in f64 too, so both
//! instruction sets keep that guarantee. `tests/reductions.rs` measures both on 16M float32
//! values against an f64 reference, on the AVX2 and on the baseline path.
//!
//! # Parallelism
//! Work below `2 × grain_size` values runs on the calling thread. Otherwise outputs (or
//! output blocks) are spread over rayon tasks; when there are too few outputs to keep every
//! thread busy, the reduced range is split too and the per-task partial accumulators are
//! combined in order afterwards (a split reduction).
//!
//! # Safety
//! [`execute_reduction`] validates the plan against the input's storage (every addressed
//! element in bounds, aligned strides) and the output slice (the kept dims describe exactly
//! the dense output, in order) before any pointer is formed; the `unsafe` reads below rely on
//! that, and outputs are written through safe disjoint `&mut` chunks.

mod isa;

use super::config::ExecConfig;
use crate::iter::{Plan, TensorSpec};
use crate::reduce::{reduction_meta, Dims, ReduceElement, Reducer, ReductionOp};
use crate::tensor::{Element, Tensor};
use crate::{Error, Result};
pub(crate) use isa::Isa;
use rayon::prelude::*;
use smallvec::SmallVec;

/// Independent accumulators of the inner reduction.
pub const LANES: usize = 16;
/// Values per leaf of the pairwise cascade (inner and strided reductions).
pub const LEAF: usize = 512;
/// Adjacent outputs accumulated together by the outer reduction.
pub const BLOCK: usize = 256;
/// Rows per leaf of the outer reduction's cascade.
pub const ROW_LEAF: usize = 64;

/// Arguments of [`reduce`]: the `dim` argument and `keepdim`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReduceArgs {
    /// Dimensions to reduce.
    pub dims: Dims,
    /// Keep reduced dimensions as size 1.
    pub keepdim: bool,
}

impl ReduceArgs {
    /// Reduce `dims`, dropping them from the result.
    pub fn new(dims: Dims) -> Self {
        ReduceArgs {
            dims,
            keepdim: false,
        }
    }

    /// Sets `keepdim`.
    pub fn keepdim(mut self, keepdim: bool) -> Self {
        self.keepdim = keepdim;
        self
    }
}

/// Reduces `x` with `reducer` (the op is [`Reducer::OP`]): PyTorch's argument checks and
/// result layout ([`reduction_meta`]), then the kernel.
/// The result is a new contiguous tensor of the dtype PyTorch gives (`R::Out` must be it).
///
/// ```
/// use symstride::kernel::{reduce, ExecConfig, ReduceArgs};
/// use symstride::reduce::{Dims, Sum};
/// use symstride::tensor::Tensor;
/// let x = Tensor::from_vec((0..6).map(|v| v as f32).collect(), &[2, 3]).unwrap();
/// let s = reduce(&x, Sum, &ReduceArgs::new(Dims::One(0)), &ExecConfig::default()).unwrap();
/// assert_eq!(s.to_vec().unwrap(), vec![3.0, 5.0, 7.0]);
/// ```
pub fn reduce<T, R>(
    x: &Tensor<T>,
    reducer: R,
    args: &ReduceArgs,
    cfg: &ExecConfig,
) -> Result<Tensor<R::Out>>
where
    T: ReduceElement,
    R: Reducer<T>,
{
    let op = R::OP;
    let spec = TensorSpec::new(
        x.sizes().to_vec(),
        x.strides().to_vec(),
        std::mem::size_of::<T>(),
    )
    .with_offset(x.storage_offset());
    let meta = reduction_meta(op, &spec, T::DTYPE, &args.dims, args.keepdim)?;
    if <R::Out as Element>::DTYPE != meta.dtype {
        return Err(Error::DType {
            message: format!(
                "{op}(): the reducer produces {} but the result dtype of {} input is {}",
                <R::Out as Element>::DTYPE,
                T::DTYPE,
                meta.dtype
            ),
        });
    }
    if matches!(op, ReductionOp::Argmax | ReductionOp::Argmin)
        && args.dims == Dims::All
        && x.dim() > 1
    {
        // PyTorch reduces the flattened input (`reshape(-1)`): indices are row-major.
        let flat = x.contiguous()?;
        let flat = flat.as_strided(&[x.numel()], &[1], flat.storage_offset())?;
        let one = reduce(&flat, reducer, &ReduceArgs::new(Dims::One(0)), cfg)?;
        return Tensor::from_vec(one.to_vec()?, &meta.sizes);
    }
    let m = meta.sizes.iter().product::<i64>();
    let mut out = vec![<R::Out as Default>::default(); m as usize];
    execute_reduction(reducer, &meta.plan, x, &mut out, cfg)?;
    Tensor::from_vec(out, &meta.sizes)
}

/// The plan in element units, split into reduced and kept dims (innermost first).
struct Geometry {
    /// `(size, input stride in elements)` of the reduced dims; at least one entry.
    red: SmallVec<[(usize, isize); 8]>,
    /// `(size, input stride in elements)` of the kept dims.
    kept: SmallVec<[(usize, isize); 8]>,
    /// Values per output.
    k: usize,
    /// Number of outputs.
    m: usize,
}

impl Geometry {
    /// Input offset (elements) of linear reduced index `k`.
    #[inline]
    fn red_offset(&self, mut k: usize) -> isize {
        if let [(_, st)] = self.red[..] {
            // One reduced dim (the common case after coalescing): k < its size.
            return k as isize * st;
        }
        let mut off = 0;
        for &(s, st) in &self.red {
            off += (k % s) as isize * st;
            k /= s;
        }
        off
    }

    /// Input offset (elements) of linear kept index `o`, from dim `from` on.
    #[inline]
    fn kept_offset(&self, mut o: usize, from: usize) -> isize {
        let mut off = 0;
        for &(s, st) in &self.kept[from..] {
            off += (o % s) as isize * st;
            o /= s;
        }
        off
    }
}

/// Validates a reduction plan against the input tensor and the output length.
fn geometry<T: Element, O: Element>(
    plan: &Plan<i64>,
    x: &Tensor<T>,
    out_len: usize,
) -> Result<Geometry> {
    let bad = |m: String| Error::invalid(format!("reduction plan: {m}"));
    if plan.operands.len() != 2 || plan.num_outputs != 1 {
        return Err(bad("expects one output and one input".into()));
    }
    let (o, i) = (&plan.operands[0], &plan.operands[1]);
    let (eo, ei) = (std::mem::size_of::<O>(), std::mem::size_of::<T>());
    if o.element_size != eo || i.element_size != ei {
        return Err(bad(format!(
            "element sizes {}/{} but the kernel has {eo}/{ei}",
            o.element_size, i.element_size
        )));
    }
    let nd = plan.shape.len();
    if o.byte_strides.len() != nd || i.byte_strides.len() != nd {
        return Err(bad("stride vectors do not match the shape".into()));
    }
    if plan.shape.iter().any(|&s| s < 0) {
        return Err(bad("negative size".into()));
    }
    if i.offset != x.storage_offset() {
        return Err(bad(format!(
            "input offset {} but the tensor's is {}",
            i.offset,
            x.storage_offset()
        )));
    }
    let r = o.byte_strides.iter().take_while(|&&s| s == 0).count();
    // With no output element the output strides are irrelevant (nothing is written).
    let no_output = plan.shape[r..].contains(&0);
    let mut red = SmallVec::new();
    let mut kept = SmallVec::new();
    let mut expect = eo as i64; // dense output stride of the next kept dim
    let (mut k, mut m) = (1i64, 1i64);
    for d in 0..nd {
        let (s, st) = (plan.shape[d], i.byte_strides[d]);
        if st % ei as i64 != 0 {
            return Err(bad(format!(
                "input byte stride {st} is not a multiple of {ei}"
            )));
        }
        let est = isize::try_from(st / ei as i64).map_err(|_| Error::overflow("input stride"))?;
        let size = usize::try_from(s).map_err(|_| Error::overflow("plan size"))?;
        if d < r {
            red.push((size, est));
            k = k
                .checked_mul(s)
                .ok_or_else(|| Error::overflow("plan numel"))?;
        } else {
            if s != 1 && !no_output && o.byte_strides[d] != expect {
                return Err(bad(format!(
                    "output byte stride {} at iteration dim {d}, expected the dense {expect}",
                    o.byte_strides[d]
                )));
            }
            expect = expect.saturating_mul(s);
            kept.push((size, est));
            m = m
                .checked_mul(s)
                .ok_or_else(|| Error::overflow("plan numel"))?;
        }
    }
    if red.is_empty() {
        red.push((1, 0));
    }
    if m as usize != out_len {
        return Err(bad(format!("{m} outputs but the output holds {out_len}")));
    }
    // Every addressed input element inside the storage (checked, min/max over the extent).
    if k > 0 && m > 0 {
        let ovf = || Error::overflow("reduction input extent");
        let (mut lo, mut hi) = (x.storage_offset(), x.storage_offset());
        for d in 0..nd {
            let e = (plan.shape[d] - 1)
                .checked_mul(i.byte_strides[d] / ei as i64)
                .ok_or_else(ovf)?;
            if e < 0 {
                lo = lo.checked_add(e).ok_or_else(ovf)?;
            } else {
                hi = hi.checked_add(e).ok_or_else(ovf)?;
            }
        }
        if lo < 0 || hi >= x.storage().len() as i64 {
            return Err(bad(format!(
                "input addresses elements [{lo}, {hi}] of a storage of {}",
                x.storage().len()
            )));
        }
    }
    Ok(Geometry {
        red,
        kept,
        k: k as usize,
        m: m as usize,
    })
}

/// Executes a reduction `plan` (from [`crate::iter::reduction_plan`] or a specialized
/// symbolic one) reading `x` and writing the dense result into `out` (one element per
/// output, in the result's row-major order).
pub fn execute_reduction<T, R>(
    reducer: R,
    plan: &Plan<i64>,
    x: &Tensor<T>,
    out: &mut [R::Out],
    cfg: &ExecConfig,
) -> Result<()>
where
    T: Element,
    R: Reducer<T>,
{
    let geo = geometry::<T, R::Out>(plan, x, out.len())?;
    if geo.m == 0 {
        return Ok(());
    }
    if geo.k == 0 {
        out.fill(reducer.finish(reducer.identity(), 0));
        return Ok(());
    }
    let _guard = x.storage().read()?;
    // SAFETY: `geometry` checked that offset + every addressed offset is inside the storage.
    let base = Base(unsafe { (x.storage().ptr() as *const T).add(x.storage_offset() as usize) });
    let threads = rayon::current_num_threads();
    let work = Work {
        isa: Isa::select(cfg.simd),
        parallel: threads > 1 && geo.m.saturating_mul(geo.k) >= 2 * cfg.grain(),
        tasks: threads * cfg.tasks(),
    };
    let outer = geo.red[0].1 != 1
        && geo.k > 1
        && geo.kept.first().is_some_and(|&(s, st)| st == 1 && s >= 4);
    if outer {
        run_outer(reducer, &geo, base, out, work);
    } else {
        run_inner(reducer, &geo, base, out, work);
    }
    Ok(())
}

/// How a call runs: instruction set, whether to use rayon, and how many tasks to aim for.
#[derive(Clone, Copy)]
struct Work {
    isa: Isa,
    parallel: bool,
    tasks: usize,
}

/// The input's first element, shareable across the rayon tasks.
#[derive(Clone, Copy)]
struct Base<T>(*const T);
// SAFETY: the pointed-to storage is borrowed for reading for the whole call and never
// written during it; tasks only read through the pointer.
unsafe impl<T: Sync> Sync for Base<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Send for Base<T> {}

impl<T> Base<T> {
    /// The pointer (a method, so closures capture the whole `Send + Sync` wrapper).
    #[inline(always)]
    fn ptr(self) -> *const T {
        self.0
    }
}

/// Defines a dispatcher `$name` that runs the `#[inline(always)]` kernel body `$body` either
/// as compiled for the baseline target or inside an AVX2 + FMA `#[target_feature]` twin
/// `$avx2` (same signature plus the leading [`Isa`]).
macro_rules! multiversion {
    (
        $(#[$doc:meta])*
        fn $name:ident / $avx2:ident = $body:ident <T, R> ( $($arg:ident : $ty:ty),* $(,)? ) -> $ret:ty
    ) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// The contract of the body.
        #[inline]
        unsafe fn $name<T: Copy, R: Reducer<T>>(isa: Isa, $($arg: $ty),*) -> $ret {
            match isa {
                // SAFETY: `Isa::Avx2` is only selected when the CPU reports AVX2 and FMA
                // (`Isa::select`); the caller's contract for the body is passed on unchanged.
                #[cfg(target_arch = "x86_64")]
                Isa::Avx2 => unsafe { $avx2($($arg),*) },
                // SAFETY: the caller's contract for the body.
                Isa::Base => unsafe { $body(Isa::Base, $($arg),*) },
            }
        }

        /// The AVX2 + FMA compilation of the same body.
        ///
        /// # Safety
        /// The CPU must support AVX2 and FMA, and the contract of the body holds.
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn $avx2<T: Copy, R: Reducer<T>>($($arg: $ty),*) -> $ret {
            // SAFETY: the caller's contract for the body; AVX2 and FMA are present.
            unsafe { $body(Isa::Avx2, $($arg),*) }
        }
    };
}

/// A pairwise cascade (binary counter): pushing `n` leaves keeps `O(log n)` partial results,
/// merging two of equal rank, earlier first.
pub(crate) struct Cascade<A> {
    stack: SmallVec<[(A, u32); 40]>,
}

impl<A: Copy> Cascade<A> {
    /// An empty cascade.
    #[inline(always)]
    pub(crate) fn new() -> Self {
        Cascade {
            stack: SmallVec::new(),
        }
    }

    /// Pushes the next leaf's accumulator.
    #[inline(always)]
    pub(crate) fn push(&mut self, a: A, combine: impl Fn(A, A) -> A) {
        let mut cur = (a, 0u32);
        while let Some(&(top, rank)) = self.stack.last() {
            if rank != cur.1 {
                break;
            }
            self.stack.pop();
            cur = (combine(top, cur.0), rank + 1);
        }
        self.stack.push(cur);
    }

    /// Combines what is left, earlier first (`identity` when nothing was pushed).
    #[inline(always)]
    pub(crate) fn finish(self, identity: A, combine: impl Fn(A, A) -> A) -> A {
        let mut it = self.stack.into_iter();
        match it.next() {
            None => identity,
            Some((first, _)) => it.fold(first, |acc, (a, _)| combine(acc, a)),
        }
    }
}

/// One leaf of a contiguous run: the reducer's hand-written fold for `isa` if it has one,
/// else [`LANES`] accumulators combined as a tree.
///
/// # Safety
/// `isa` must be supported by the CPU (it is a constant in each compiled body).
#[inline(always)]
unsafe fn leaf<T: Copy, R: Reducer<T>>(isa: Isa, r: &R, xs: &[T], first: i64) -> R::Acc {
    #[cfg(target_arch = "x86_64")]
    if isa == Isa::Avx2 {
        // SAFETY: the caller's contract: AVX2 and FMA are present.
        if let Some(a) = unsafe { r.fold_run_avx2(xs, first) } {
            return a;
        }
    }
    let _ = isa;
    let mut acc = [r.identity(); LANES];
    let mut chunks = xs.chunks_exact(LANES);
    let mut at = first;
    for c in &mut chunks {
        for l in 0..LANES {
            acc[l] = r.step(acc[l], c[l], at + l as i64);
        }
        at += LANES as i64;
    }
    let mut tail = r.identity();
    for (j, &v) in chunks.remainder().iter().enumerate() {
        tail = r.step(tail, v, at + j as i64);
    }
    let mut w = LANES;
    while w > 1 {
        w /= 2;
        for l in 0..w {
            acc[l] = r.combine(acc[l], acc[l + w]);
        }
    }
    r.combine(acc[0], tail)
}

/// One contiguous run folded as the kernels fold a leaf (the reducer's hand-written AVX2
/// fold when it has one and `simd` and the CPU allow it, else [`LANES`] accumulators): for
/// callers that compute the values themselves (a fused chain feeding a reduction) and
/// combine the leaves with a [`Cascade`], so they keep this module's accuracy contract.
#[inline]
pub(crate) fn fold_run<T: Copy, R: Reducer<T>>(
    r: &R,
    xs: &[T],
    first: i64,
    simd: super::config::Simd,
) -> R::Acc {
    // SAFETY: `Isa::select` returns `Isa::Avx2` only when the CPU reports AVX2 and FMA.
    unsafe { leaf(Isa::select(simd), r, xs, first) }
}

/// One leaf of a strided run (`n` values, `stride` elements apart): four accumulators.
///
/// # Safety
/// `p + j·stride` must be readable for `j < n`.
#[inline(always)]
unsafe fn strided_leaf<T: Copy, R: Reducer<T>>(
    r: &R,
    p: *const T,
    stride: isize,
    n: usize,
    first: i64,
) -> R::Acc {
    let mut acc = [r.identity(); 4];
    let mut j = 0;
    while j + 4 <= n {
        for (l, a) in acc.iter_mut().enumerate() {
            // SAFETY: j + l < n (caller's contract).
            let v = unsafe { *p.offset((j + l) as isize * stride) };
            *a = r.step(*a, v, first + (j + l) as i64);
        }
        j += 4;
    }
    let mut tail = r.identity();
    while j < n {
        // SAFETY: j < n.
        tail = r.step(
            tail,
            unsafe { *p.offset(j as isize * stride) },
            first + j as i64,
        );
        j += 1;
    }
    let a = r.combine(r.combine(acc[0], acc[1]), r.combine(acc[2], acc[3]));
    r.combine(a, tail)
}

/// Reduces the linear reduced range `[k0, k1)` of the output whose first value is at `base`.
///
/// # Safety
/// `base` must be the input position of a validated output (`geometry`), `k0 < k1 <= K`,
/// and `isa` supported by the CPU.
#[inline(always)]
unsafe fn reduce_range_body<T: Copy, R: Reducer<T>>(
    isa: Isa,
    r: &R,
    geo: &Geometry,
    base: *const T,
    k0: usize,
    k1: usize,
) -> R::Acc {
    let comb = |a, b| r.combine(a, b);
    let (n0, s0) = geo.red[0];
    if s0 == 1 && k1 - k0 <= LEAF && k0 % n0 + (k1 - k0) <= n0 {
        // One short contiguous run (e.g. a row of a last-dim sum): a single leaf.
        // SAFETY: k0 < K and the run stays within one row of validated elements.
        let xs = unsafe { std::slice::from_raw_parts(base.offset(geo.red_offset(k0)), k1 - k0) };
        return unsafe { leaf(isa, r, xs, k0 as i64) };
    }
    let mut c = Cascade::new();
    let mut k = k0;
    while k < k1 {
        let len = (n0 - k % n0).min(k1 - k);
        // SAFETY: k < K, so the offset addresses a validated input element, and the run of
        // `len` values along the innermost reduced dim stays inside it.
        let p = unsafe { base.offset(geo.red_offset(k)) };
        if s0 == 1 {
            // SAFETY: contiguous run of `len` validated elements.
            let xs = unsafe { std::slice::from_raw_parts(p, len) };
            for (j, ch) in xs.chunks(LEAF).enumerate() {
                c.push(unsafe { leaf(isa, r, ch, (k + j * LEAF) as i64) }, comb);
            }
        } else {
            let mut j = 0;
            while j < len {
                let n = (len - j).min(LEAF);
                // SAFETY: values j..j+n of the run are validated elements.
                let a =
                    unsafe { strided_leaf(r, p.offset(j as isize * s0), s0, n, (k + j) as i64) };
                c.push(a, comb);
                j += n;
            }
        }
        k += len;
    }
    c.finish(r.identity(), comb)
}

/// The full reductions of consecutive outputs `o0, o0 + 1, …` into `out`.
///
/// # Safety
/// `base` must be the validated input of `geo`, `o0 + out.len() <= M`, and `isa`
/// supported by the CPU.
#[inline(always)]
unsafe fn outputs_body<T: Copy, R: Reducer<T>>(
    isa: Isa,
    r: &R,
    geo: &Geometry,
    base: *const T,
    out: &mut [R::Out],
    o0: usize,
) {
    let k = geo.k;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the caller's contract, passed on.
    if isa == Isa::Avx2 && unsafe { outputs_streams(r, geo, base, out, o0) } {
        return;
    }
    let mut kept = KeptCursor::new(geo, o0);
    for v in out.iter_mut() {
        // SAFETY: the cursor is at a validated output below M (caller's contract).
        *v = r.finish(
            unsafe { reduce_range_body(isa, r, geo, base.offset(kept.offset), 0, k) },
            k as i64,
        );
        kept.advance();
    }
}

/// [`outputs_body`] for short contiguous rows (each output one run of at most [`LEAF`]
/// values, `sum(-1)` of a row-major matrix) when the reducer has a four-row AVX2 fold
/// ([`Reducer::fold_runs4_avx2`]): the outputs are split into four quarters and row `i` of
/// every quarter is folded together, so the task reads four memory streams at once; the
/// last `len % 4` rows are folded four at a time too (the last one repeated), so every row
/// takes the same fold wherever it falls, and a result does not depend on how the outputs
/// were split over tasks (nor, so, on the thread count: [`run_inner`] never splits such a
/// row). Returns `false`, having written nothing, when it does not apply.
///
/// # Safety
/// As [`outputs_body`], with AVX2 and FMA present.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn outputs_streams<T: Copy, R: Reducer<T>>(
    r: &R,
    geo: &Geometry,
    base: *const T,
    out: &mut [R::Out],
    o0: usize,
) -> bool {
    let (k, n) = (geo.k, out.len());
    if n == 0 || !matches!(geo.red[..], [(len, 1)] if len == k && k <= LEAF) {
        return false;
    }
    let q = n / 4;
    let mut cur: [KeptCursor<'_>; 4] = std::array::from_fn(|j| KeptCursor::new(geo, o0 + j * q));
    // SAFETY: each cursor is at a validated output below M (caller's contract: o0 + n <= M),
    // whose `k` values are contiguous (one reduced dim of stride 1 and size k).
    let row = |off: isize| unsafe { std::slice::from_raw_parts(base.offset(off), k) };
    for i in 0..q {
        let rows = [0, 1, 2, 3].map(|j| row(cur[j].offset));
        // SAFETY: AVX2 and FMA (caller's contract); the rows have length k.
        let Some(acc) = (unsafe { r.fold_runs4_avx2(rows) }) else {
            return false;
        };
        for (j, c) in cur.iter_mut().enumerate() {
            out[j * q + i] = r.finish(acc[j], k as i64);
            c.advance();
        }
    }
    // The last cursor stands at output o0 + 4q: the remaining `n - 4q < 4` rows.
    let last = &mut cur[3];
    let mut offs = [0isize; 4];
    for (j, o) in offs.iter_mut().enumerate() {
        *o = last.offset;
        if 4 * q + j + 1 < n {
            last.advance();
        }
    }
    if 4 * q < n {
        // SAFETY: as above; rows past `n` repeat the last row (their results are dropped).
        let Some(acc) = (unsafe { r.fold_runs4_avx2(offs.map(row)) }) else {
            return false;
        };
        for (j, v) in out[4 * q..].iter_mut().enumerate() {
            *v = r.finish(acc[j], k as i64);
        }
    }
    true
}

multiversion! {
    /// [`reduce_range_body`] for the instruction set `isa`.
    fn reduce_range / reduce_range_avx2 = reduce_range_body<T, R>(
        r: &R,
        geo: &Geometry,
        base: *const T,
        k0: usize,
        k1: usize,
    ) -> R::Acc
}

multiversion! {
    /// [`outputs_body`] for the instruction set `isa`.
    fn outputs / outputs_avx2 = outputs_body<T, R>(
        r: &R,
        geo: &Geometry,
        base: *const T,
        out: &mut [R::Out],
        o0: usize,
    ) -> ()
}

/// The input offset of consecutive outputs, advanced like an odometer over the kept dims
/// (no division per output).
struct KeptCursor<'a> {
    dims: &'a [(usize, isize)],
    index: SmallVec<[usize; 8]>,
    offset: isize,
}

impl<'a> KeptCursor<'a> {
    #[inline(always)]
    fn new(geo: &'a Geometry, mut o: usize) -> Self {
        let dims = &geo.kept[..];
        let mut index = SmallVec::new();
        let mut offset = 0;
        for &(s, st) in dims {
            let i = o % s.max(1);
            o /= s.max(1);
            index.push(i);
            offset += i as isize * st;
        }
        KeptCursor {
            dims,
            index,
            offset,
        }
    }

    #[inline(always)]
    fn advance(&mut self) {
        for (i, &(s, st)) in self.index.iter_mut().zip(self.dims) {
            *i += 1;
            self.offset += st;
            if *i < s {
                return;
            }
            *i = 0;
            self.offset -= s as isize * st;
        }
    }
}

/// One output per element of `out`: chunks of outputs per task, or, with few outputs, the
/// reduced range of each split over tasks (partials combined in order).
fn run_inner<T: Element, R: Reducer<T>>(
    r: R,
    geo: &Geometry,
    base: Base<T>,
    out: &mut [R::Out],
    work: Work,
) {
    let (k, isa) = (geo.k, work.isa);
    if !work.parallel {
        // SAFETY: `base` is the validated input, the outputs are 0..M.
        unsafe { outputs(isa, &r, geo, base.ptr(), out, 0) };
        return;
    }
    // A reduced range of at most one leaf is never split (there is nothing to split: one
    // leaf is one task's work), so such outputs are folded alike at every thread count.
    if geo.m >= work.tasks || k <= LEAF {
        let chunk = geo.m.div_ceil(work.tasks).max(1);
        out.par_chunks_mut(chunk).enumerate().for_each(|(ci, ch)| {
            // SAFETY: the chunk holds outputs ci·chunk .. ci·chunk + len <= M.
            unsafe { outputs(isa, &r, geo, base.ptr(), ch, ci * chunk) }
        });
        return;
    }
    let parts = (work.tasks / geo.m).max(1).min(k.div_ceil(LEAF));
    let span = k.div_ceil(parts);
    for (o, v) in out.iter_mut().enumerate() {
        let partials: Vec<R::Acc> = (0..parts)
            .into_par_iter()
            .filter(|p| p * span < k)
            .map(|p| {
                // SAFETY: o < M is a validated output position and p·span < k.
                unsafe {
                    let b = base.ptr().offset(geo.kept_offset(o, 0));
                    reduce_range(isa, &r, geo, b, p * span, ((p + 1) * span).min(k))
                }
            })
            .collect();
        let acc = partials
            .into_iter()
            .reduce(|a, b| r.combine(a, b))
            .unwrap_or_else(|| r.identity());
        *v = r.finish(acc, k as i64);
    }
}

/// Folds reduced rows `[k0, k1)` into `acc` (the `acc.len()` adjacent outputs at `base`).
/// A block of at least [`REG_BYTES`] of accumulators (the float32 `sum` of 256 columns in
/// f64) takes one whole row per pass, so the rows are read in memory order as one stream
/// while the accumulators stay in L1, prefetching [`ROW_PREFETCH_BYTES`] ahead; a narrower
/// block takes four rows per pass, so that each accumulator is loaded and stored once per
/// four input values (see the module docs for the measurements).
///
/// # Safety
/// `base` must be the input position of the block's first output, the block's `acc.len()`
/// outputs adjacent along the contiguous first kept dim, `k1 <= K`.
#[inline(always)]
unsafe fn fold_rows<T: Copy, R: Reducer<T>>(
    r: &R,
    geo: &Geometry,
    base: *const T,
    acc: &mut [R::Acc],
    k0: usize,
    k1: usize,
) {
    let w = acc.len();
    // SAFETY: kk < K and the block's `w` outputs lie along the contiguous kept dim, so the row
    // of `w` values is inside the validated input.
    let row = |kk: usize| unsafe { std::slice::from_raw_parts(base.offset(geo.red_offset(kk)), w) };
    let one_row = std::mem::size_of_val(acc) >= REG_BYTES;
    let ahead = if one_row {
        rows_ahead::<T>(geo, ROW_PREFETCH_BYTES)
    } else {
        rows_ahead::<T>(geo, PREFETCH_BYTES)
    };
    let mut kk = k0;
    while !one_row && kk + 4 <= k1 {
        for q in kk + ahead..kk + ahead + 4 {
            prefetch_row(geo, base, q, w);
        }
        let (a, b, c, d) = (row(kk), row(kk + 1), row(kk + 2), row(kk + 3));
        let i = kk as i64;
        for j in 0..w {
            let s = r.step(acc[j], a[j], i);
            let s = r.step(s, b[j], i + 1);
            let s = r.step(s, c[j], i + 2);
            acc[j] = r.step(s, d[j], i + 3);
        }
        kk += 4;
    }
    while kk < k1 {
        prefetch_row(geo, base, kk + ahead, w);
        for (s, &v) in acc.iter_mut().zip(row(kk)) {
            *s = r.step(*s, v, kk as i64);
        }
        kk += 1;
    }
}

/// How far ahead of the rows being folded the outer fold prefetches, in bytes of the
/// reduced dim's stride (see the module docs for the measurements).
const PREFETCH_BYTES: usize = 6144;

/// How far ahead [`fold_rows`] prefetches when it folds one whole row per pass.
const ROW_PREFETCH_BYTES: usize = 12288;

/// Reduced rows between the rows being folded and the rows prefetched: `bytes` of the
/// reduced dim's stride, at least four rows (one pass of [`fold_rows`]).
#[inline(always)]
fn rows_ahead<T>(geo: &Geometry, bytes: usize) -> usize {
    let stride = geo.red[0]
        .1
        .unsigned_abs()
        .saturating_mul(std::mem::size_of::<T>());
    bytes.div_ceil(stride.max(1)).max(4)
}

/// Asks the CPU to fetch the cache lines of the `w` values of reduced row `kk` at `base`
/// (the outer fold's rows `rows_ahead` ahead). On this host the hardware prefetcher does not
/// follow the fold's row streams across pages (`sum_outer_16M`: 2.1 against 5.0 ms in a
/// probe), so the fold asks for them. The address is formed with wrapping arithmetic and
/// a prefetch never faults, so rows past the input's end are harmless.
#[inline(always)]
fn prefetch_row<T>(geo: &Geometry, base: *const T, kk: usize, w: usize) {
    let p = base.wrapping_offset(geo.red_offset(kk)) as *const u8;
    let (lines, last) = line_offsets(w * std::mem::size_of::<T>());
    for b in lines {
        prefetch_line(p.wrapping_add(b));
    }
    if let Some(b) = last {
        prefetch_line(p.wrapping_add(b));
    }
}

/// Byte offsets, from the start of a run of `bytes` bytes, that hit every 64-byte cache line
/// the run touches wherever it starts: one per 64 bytes (the first part), then the last
/// byte (the second part: the run's last line when it does not start on a line boundary).
#[inline(always)]
fn line_offsets(bytes: usize) -> (std::iter::StepBy<std::ops::Range<usize>>, Option<usize>) {
    // Two parts rather than one chained iterator: a `Chain` compiled to a state machine
    // around every prefetch of the one-row fold's loop (`perf annotate`).
    ((0..bytes).step_by(64), bytes.checked_sub(1))
}

/// A T0 prefetch hint for the cache line holding `p` (any address: a hint never faults).
#[inline(always)]
fn prefetch_line(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: SSE is part of the x86-64 baseline, and a prefetch only hints the cache: it
        // never faults and reads nothing the program sees, whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p as *const i8) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Bytes of accumulators the register-resident outer fold keeps live: eight 256-bit
/// registers, half of AVX2's sixteen (the rest hold the loaded row and the compares).
const REG_BYTES: usize = 256;

/// Folds reduced rows `[k0, k1)` into the `w = acc.len() >= C` adjacent outputs at `base`
/// in groups of `C` columns, one whole group row of `C` values per step with the `C`
/// accumulators in a local array. `C` is a constant, so the compiler unrolls the column
/// loop and keeps the array in (vector) registers: each row costs `C` loads and `C` steps
/// and no accumulator load or store, and the `C / lanes` dependency chains are independent
/// (eight for [`REG_BYTES`]). The last group is shifted left to end at `w`: its columns
/// overlap the previous group's, both compute those columns from scratch over the same
/// rows, so the overlap is written twice with the same value. The results overwrite `acc`.
///
/// # Safety
/// As [`fold_rows`], and `acc.len() >= C`.
#[inline(always)]
unsafe fn fold_groups<T: Copy, R: Reducer<T>, const C: usize>(
    r: &R,
    geo: &Geometry,
    base: *const T,
    acc: &mut [R::Acc],
    k0: usize,
    k1: usize,
) {
    let w = acc.len();
    let ahead = rows_ahead::<T>(geo, PREFETCH_BYTES);
    let mut j0 = 0;
    loop {
        let g = j0.min(w - C);
        let mut a = [r.identity(); C];
        for kk in k0..k1 {
            prefetch_row(geo, base.wrapping_add(g), kk + ahead, C);
            // SAFETY: kk < K and columns g..g + C <= w of the block lie along the contiguous
            // kept dim (the caller's contract), so these C values are validated input.
            let row =
                unsafe { std::slice::from_raw_parts(base.offset(geo.red_offset(kk)).add(g), C) };
            for j in 0..C {
                a[j] = r.step(a[j], row[j], kk as i64);
            }
        }
        acc[g..g + C].copy_from_slice(&a);
        if g + C == w {
            break;
        }
        j0 += C;
    }
}

/// One leaf of the outer fold: [`fold_groups`] when the accumulator is no wider than the
/// input (a compare/select or same-width chain: `amax`, `amin`, `prod` of floats, integer
/// `sum`s of int64, ...) and the block has at least a register group of columns, else
/// [`fold_rows`]. A widening accumulator (the float32 `sum` in f64) stays with
/// [`fold_rows`]: its conversions make it throughput-bound, and register groups measured no
/// faster there (see the module docs).
///
/// # Safety
/// As [`fold_rows`].
#[inline(always)]
unsafe fn fold_leaf<T: Copy, R: Reducer<T>>(
    r: &R,
    geo: &Geometry,
    base: *const T,
    acc: &mut [R::Acc],
    k0: usize,
    k1: usize,
) {
    let size = std::mem::size_of::<R::Acc>();
    let w = acc.len();
    let fits = |c: usize| size <= std::mem::size_of::<T>() && size * c == REG_BYTES && w >= c;
    // SAFETY (every arm): the caller's contract; `fits` checked `w >= C`.
    unsafe {
        if fits(256) {
            fold_groups::<T, R, 256>(r, geo, base, acc, k0, k1)
        } else if fits(128) {
            fold_groups::<T, R, 128>(r, geo, base, acc, k0, k1)
        } else if fits(64) {
            fold_groups::<T, R, 64>(r, geo, base, acc, k0, k1)
        } else if fits(32) {
            fold_groups::<T, R, 32>(r, geo, base, acc, k0, k1)
        } else {
            fold_rows(r, geo, base, acc, k0, k1)
        }
    }
}

/// Accumulates the `w` adjacent outputs at `base` over reduced rows `[k0, k1)`: leaves of
/// [`ROW_LEAF`] rows ([`fold_leaf`]) combined by a pairwise cascade. Where the reducer has
/// a four-row fold (the float32 `sum`/`mean`, AVX2) and the block is at least
/// [`REG_BYTES`] of accumulators wide, the range's first `4·quarter` rows are read as its
/// four quarters instead ([`fold_quarters`], leaves of [`ROW_LEAF`] passes of four rows),
/// the last `(k1 - k0) % 4` rows as one more leaf.
///
/// # Safety
/// As [`fold_rows`] for a block of `w` outputs.
#[inline(always)]
unsafe fn outer_block_body<T: Copy, R: Reducer<T>>(
    isa: Isa,
    r: &R,
    geo: &Geometry,
    base: *const T,
    w: usize,
    k0: usize,
    k1: usize,
) -> Vec<R::Acc> {
    let id = r.identity();
    let comb = |a, b| r.combine(a, b);
    let mut cascade = BlockCascade::new();
    let mut k = k0;
    // Four streams: leaves of `ROW_LEAF` passes over the range's four quarters (see
    // `fold_quarters`), then the last `(k1 - k0) % 4` rows as one more leaf below.
    let quarter = (k1 - k0) / 4;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: AVX2 and FMA (the `isa`), the rows `[k0, k1)` of the caller's contract.
    if isa == Isa::Avx2
        && std::mem::size_of::<R::Acc>() * w >= REG_BYTES
        && quarter >= ROW_LEAF
        && unsafe { r.fold_rows4_into_avx2(&mut [], [&[]; 4]) }
    {
        let mut t = 0;
        while t < quarter {
            let n = ROW_LEAF.min(quarter - t);
            let mut acc = cascade.leaf(id, w);
            // SAFETY: as above; passes t..t + n of the quarters are rows below k0 + 4·quarter.
            unsafe { fold_quarters(r, geo, base, &mut acc, k0, quarter, t, t + n) };
            cascade.push(acc, comb);
            t += n;
        }
        k = k0 + 4 * quarter;
    }
    let _ = (isa, quarter);
    while k < k1 {
        let n = ROW_LEAF.min(k1 - k);
        let mut acc = cascade.leaf(id, w);
        // SAFETY: caller's contract, k + n <= k1.
        unsafe { fold_leaf(r, geo, base, &mut acc, k, k + n) };
        cascade.push(acc, comb);
        k += n;
    }
    cascade.finish(id, w, comb)
}

/// The outer fold's pairwise cascade over leaves that are blocks of accumulators (a binary
/// counter, as [`Cascade`] for single accumulators): two blocks of equal rank merge column
/// by column, earlier first; merged blocks are reused for later leaves.
struct BlockCascade<A> {
    stack: SmallVec<[(Vec<A>, u32); 24]>,
    free: Vec<Vec<A>>,
}

impl<A: Copy> BlockCascade<A> {
    fn new() -> Self {
        BlockCascade {
            stack: SmallVec::new(),
            free: Vec::new(),
        }
    }

    /// A block of `w` accumulators set to `id`, for the next leaf.
    #[inline(always)]
    fn leaf(&mut self, id: A, w: usize) -> Vec<A> {
        let mut acc = self.free.pop().unwrap_or_else(|| vec![id; w]);
        acc.fill(id);
        acc
    }

    #[inline(always)]
    fn push(&mut self, mut acc: Vec<A>, combine: impl Fn(A, A) -> A) {
        let mut rank = 0u32;
        while self.stack.last().is_some_and(|(_, rk)| *rk == rank) {
            let (mut prev, _) = self.stack.pop().expect("checked non-empty");
            for (p, &a) in prev.iter_mut().zip(&acc) {
                *p = combine(*p, a);
            }
            self.free.push(acc);
            acc = prev;
            rank += 1;
        }
        self.stack.push((acc, rank));
    }

    /// The blocks combined in order (`w` times `id` when nothing was pushed).
    fn finish(self, id: A, w: usize, combine: impl Fn(A, A) -> A) -> Vec<A> {
        let mut it = self.stack.into_iter();
        let (mut res, _) = it.next().unwrap_or_else(|| (vec![id; w], 0));
        for (a, _) in it {
            for (p, &x) in res.iter_mut().zip(&a) {
                *p = combine(*p, x);
            }
        }
        res
    }
}

/// Folds passes `t0..t1` over the four quarters of the `4·quarter` rows from `k0` into
/// `acc`: pass `t` adds rows `k0 + t`, `k0 + quarter + t`, `k0 + 2·quarter + t` and
/// `k0 + 3·quarter + t` ([`Reducer::fold_rows4_into_avx2`]), so the input is read as four
/// distant streams and each accumulator is loaded and stored once per four values.
///
/// # Safety
/// As [`fold_rows`] for the block of `acc.len()` outputs, `k0 + 4·quarter <= K`, `t1 <=
/// quarter`; AVX2 and FMA present; the reducer implements the hook.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn fold_quarters<T: Copy, R: Reducer<T>>(
    r: &R,
    geo: &Geometry,
    base: *const T,
    acc: &mut [R::Acc],
    k0: usize,
    quarter: usize,
    t0: usize,
    t1: usize,
) {
    let w = acc.len();
    // SAFETY: kk < K and the block's `w` outputs lie along the contiguous kept dim, so the
    // row of `w` values is inside the validated input (caller's contract).
    let row = |kk: usize| unsafe { std::slice::from_raw_parts(base.offset(geo.red_offset(kk)), w) };
    for t in t0..t1 {
        let rows = [0, 1, 2, 3].map(|q| row(k0 + q * quarter + t));
        // SAFETY: AVX2 and FMA (caller's contract); every row has `w` values.
        unsafe { r.fold_rows4_into_avx2(acc, rows) };
    }
}

multiversion! {
    /// [`outer_block_body`] for the instruction set `isa`.
    fn outer_block / outer_block_avx2 = outer_block_body<T, R>(
        r: &R,
        geo: &Geometry,
        base: *const T,
        w: usize,
        k0: usize,
        k1: usize,
    ) -> Vec<R::Acc>
}

/// Blocks of adjacent outputs along the contiguous first kept dim, accumulated across rows;
/// the rows are split over tasks too when there are fewer blocks than tasks.
fn run_outer<T: Element, R: Reducer<T>>(
    r: R,
    geo: &Geometry,
    base: Base<T>,
    out: &mut [R::Out],
    work: Work,
) {
    let (n_in, _) = geo.kept[0];
    let per_line = n_in.div_ceil(BLOCK);
    let blocks = (geo.m / n_in) * per_line;
    let k = geo.k;
    let parts = if work.parallel && blocks < work.tasks {
        work.tasks
            .div_ceil(blocks)
            .min(k.div_ceil(4 * ROW_LEAF))
            .max(1)
    } else {
        1
    };
    let span = k.div_ceil(parts);
    let block_of = |b: usize| {
        let (line, jb) = (b / per_line, b % per_line);
        let j0 = jb * BLOCK;
        let w = BLOCK.min(n_in - j0);
        (line * n_in + j0, w, geo.kept_offset(line, 1) + j0 as isize)
    };
    let task = |t: usize| {
        let (b, p) = (t / parts, t % parts);
        let (_, w, off) = block_of(b);
        let (k0, k1) = ((p * span).min(k), ((p + 1) * span).min(k));
        // SAFETY: `off` is the input offset of the block's first output (validated), whose
        // `w` outputs are adjacent along the contiguous first kept dim; k1 <= K.
        unsafe { outer_block(work.isa, &r, geo, base.ptr().offset(off), w, k0, k1) }
    };
    let n_tasks = blocks * parts;
    let partials: Vec<Vec<R::Acc>> = if work.parallel {
        (0..n_tasks).into_par_iter().map(task).collect()
    } else {
        (0..n_tasks).map(task).collect()
    };
    for (b, group) in partials.chunks(parts).enumerate() {
        let (o0, w, _) = block_of(b);
        for j in 0..w {
            let acc = group
                .iter()
                .map(|g| g[j])
                .reduce(|a, c| r.combine(a, c))
                .unwrap_or_else(|| r.identity());
            out[o0 + j] = r.finish(acc, k as i64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every cache line of a run is hit, wherever the run starts, with at most one offset
    /// per line plus one (the runs of the outer fold's prefetch).
    #[test]
    fn line_offsets_hit_every_line_of_a_run() {
        for start in 0..64usize {
            for bytes in 0..600usize {
                let (lines, last) = line_offsets(bytes);
                let offs: Vec<usize> = lines.chain(last).collect();
                assert!(offs.iter().all(|&o| o < bytes), "{start} {bytes}: {offs:?}");
                let hit: std::collections::BTreeSet<usize> =
                    offs.iter().map(|&o| (start + o) / 64).collect();
                let lines: std::collections::BTreeSet<usize> =
                    (0..bytes).map(|b| (start + b) / 64).collect();
                assert_eq!(hit, lines, "start {start} bytes {bytes}");
                assert!(offs.len() <= bytes / 64 + 2, "{start} {bytes}: {offs:?}");
            }
        }
    }

    /// The prefetched rows lie at least the requested distance ahead (both distances the
    /// folds use), at least one pass of the four-row fold, and no further than one row
    /// beyond that distance.
    #[test]
    fn rows_ahead_cover_the_prefetch_distance() {
        for bytes in [PREFETCH_BYTES, ROW_PREFETCH_BYTES] {
            for size in [1usize, 4, 8] {
                for stride in [-5000isize, -3, 0, 1, 7, 64, 256, 1000, 1536, 4096, 1 << 20] {
                    let geo = Geometry {
                        red: smallvec::smallvec![(10, stride)],
                        kept: SmallVec::new(),
                        k: 10,
                        m: 1,
                    };
                    let a = match size {
                        1 => rows_ahead::<u8>(&geo, bytes),
                        4 => rows_ahead::<f32>(&geo, bytes),
                        _ => rows_ahead::<f64>(&geo, bytes),
                    };
                    let row = stride.unsigned_abs() * size;
                    assert!(a >= 4, "{size} {stride}: {a}");
                    if row > 0 {
                        assert!(a * row >= bytes, "{size} {stride}: {a}");
                        assert!(a == 4 || (a - 1) * row < bytes, "{size} {stride}: {a}");
                    }
                }
            }
        }
    }
}
