//! Vectorized row kernels of `softmax`, `log_softmax` and the norms (`layer_norm`,
//! `rms_norm`, inference `batch_norm`, `group_norm`).
//!
//! # Why a module of its own
//! Each of these ops reads a row two or three times (its maximum or statistics, then the
//! result) and writes it once. At memory speed the row is read from memory once and the
//! later passes hit the core's cache, every pass is a straight loop over contiguous
//! elements (no index arithmetic, no closures per element), and `exp` is
//! [`vmath::exp`](crate::kernel::vmath::exp) (branch-free, about 1 ulp), so the loops
//! vectorize. The first kernels (one `f64` libm `exp` per element through a closure) ran
//! softmax 3.2x and layer norm 1.6x slower than PyTorch eager
//! (`docs/perf/2026-11-28-structured-kernels.md`).
//!
//! # How a call runs
//! A kernel is a [`RowOp`]: rows of one length, a row at a time, into a buffer. [`drive`]
//! splits the rows into contiguous ranges for rayon tasks; a task evaluates groups of rows
//! into its buffer (at most [`GROUP`] elements unless one row is longer, so the buffer
//! stays in L1/L2) and copies each group to the result, with non-temporal stores when the
//! result is large ([`stream_output`]: the result is not read back, and a plain store would
//! first read every destination line). The group body is compiled twice, for the x86-64
//! baseline and inside an AVX2 function chosen at run time under
//! [`Simd::Auto`](crate::kernel::Simd), as the reductions and the fused row segments are.
//!
//! # Precision
//! Sums accumulate in `f64` (eight lanes, so the loops vectorize). Softmax computes
//! `exp(x - max)` in the element type and divides by the `f64` sum rounded once; the norms
//! compute their statistics and the normalized values in `f64` (the conversions vectorize)
//! and round each result once, so `tests/structured.rs` holds them to the naive `f64`
//! reference's tolerance.

use super::kernels::Real;
use crate::kernel::vmath::{exp, ExpFloat};
use crate::kernel::{store_fence, stream_copy, stream_output, ExecConfig, Isa};
use crate::tensor::Element;
use rayon::prelude::*;

/// Elements of a task's row buffer (rows are grouped up to it): 32 KiB of `f32`.
pub(super) const GROUP: usize = 8192;

/// The float types the row kernels run in.
pub(super) trait RowFloat: Real + ExpFloat + Element + std::ops::Div<Output = Self> {
    /// `-inf`.
    const NEG_INF: Self;
    /// `0`.
    const ZERO: Self;
    /// This type's copy of per-position parameters.
    fn pick(p: &Params) -> &[Self];
}

/// Per-position parameters (weights, biases, means) in both float types, converted once
/// per call.
pub(super) struct Params {
    f32: Vec<f32>,
    f64: Vec<f64>,
}

impl Params {
    /// `v` in both types.
    pub(super) fn new(v: Vec<f64>) -> Params {
        Params { f32: v.iter().map(|&x| x as f32).collect(), f64: v }
    }

    /// The number of values.
    pub(super) fn len(&self) -> usize {
        self.f64.len()
    }

    /// `v` as `hi + lo` per value ([`split`]).
    fn split(v: &[f64]) -> (Params, Params) {
        let hi = Params::new(v.to_vec());
        let lo = Params {
            f32: v.iter().zip(&hi.f32).map(|(&x, &h)| (x - h as f64) as f32).collect(),
            f64: vec![0.0; v.len()],
        };
        (hi, lo)
    }
}

impl RowFloat for f32 {
    const NEG_INF: f32 = f32::NEG_INFINITY;
    const ZERO: f32 = 0.0;
    fn pick(p: &Params) -> &[f32] {
        &p.f32
    }
}

impl RowFloat for f64 {
    const NEG_INF: f64 = f64::NEG_INFINITY;
    const ZERO: f64 = 0.0;
    fn pick(p: &Params) -> &[f64] {
        &p.f64
    }
}

/// A row kernel: rows of [`RowOp::len`] elements, each computed from the same row of the
/// input.
pub(super) trait RowOp<T>: Sync {
    /// The row length (at least 1).
    fn len(&self) -> usize;
    /// Writes rows `first..first + k` of the result to `dst` from the same rows of the
    /// input in `src` (`k·len` elements each). Implementations are `#[inline(always)]`, so
    /// the AVX2 twin of the group loop re-vectorizes them.
    fn rows(&self, first: usize, src: &[T], dst: &mut [T]);
}

/// Evaluates `k` over `src` into `dst` (both row-major, `dst.len() == src.len()`).
pub(super) fn drive<T: RowFloat, K: RowOp<T>>(k: &K, src: &[T], dst: &mut [T], cfg: &ExecConfig) {
    let len = k.len();
    if len == 0 || dst.is_empty() || src.len() != dst.len() {
        return;
    }
    let isa = Isa::select(cfg.simd);
    let stream = stream_output::<T>(dst.len());
    let group = (GROUP / len).max(1);
    let task = |first: usize, dst: &mut [T]| {
        let mut buf = vec![T::ZERO; (group * len).min(dst.len())];
        for (g, out) in dst.chunks_mut(group * len).enumerate() {
            let r0 = first + g * group;
            let b = &mut buf[..out.len()];
            let s = &src[r0 * len..r0 * len + out.len()];
            #[cfg(target_arch = "x86_64")]
            if isa == Isa::Avx2 {
                // SAFETY: `Isa::Avx2` is only selected when the CPU reports AVX2 and FMA.
                unsafe { rows_avx2(k, r0, s, b) };
            } else {
                k.rows(r0, s, b);
            }
            #[cfg(not(target_arch = "x86_64"))]
            k.rows(r0, s, b);
            if stream {
                // SAFETY: `b` and `out` are distinct slices of `out.len()` elements.
                unsafe {
                    stream_copy(
                        out.as_mut_ptr() as *mut u8,
                        b.as_ptr() as *const u8,
                        std::mem::size_of_val(out),
                    )
                };
            } else {
                out.copy_from_slice(b);
            }
        }
        if stream {
            store_fence();
        }
    };
    if dst.len() < cfg.grain_size {
        task(0, dst);
    } else {
        let per_task = (cfg.grain_size / len).max(group).max(1);
        dst.par_chunks_mut(per_task * len)
            .enumerate()
            .for_each(|(t, chunk)| task(t * per_task, chunk));
    }
}

/// [`RowOp::rows`] compiled for AVX2.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn rows_avx2<T: RowFloat, K: RowOp<T>>(k: &K, first: usize, src: &[T], dst: &mut [T]) {
    k.rows(first, src, dst)
}

/// Lanes of the accumulators in the element type (four AVX2 registers of `f32`, enough
/// independent chains to hide the add latency).
const W: usize = 32;

/// Elements whose lane sums are added to the `f64` total at a time: the element type's
/// rounding then spans at most `BLOCK / W` terms per lane.
const BLOCK: usize = 512;

/// The largest element of `xs` (`-inf` for none; a NaN element is skipped here and turns
/// the row to NaN through the sum, as in PyTorch).
#[inline(always)]
fn max<T: RowFloat>(xs: &[T]) -> T {
    let mut acc = [T::NEG_INF; W];
    let mut it = xs.chunks_exact(W);
    for c in &mut it {
        for l in 0..W {
            acc[l] = if c[l] > acc[l] { c[l] } else { acc[l] };
        }
    }
    let mut m = T::NEG_INF;
    for &v in acc.iter().chain(it.remainder()) {
        m = if v > m { v } else { m };
    }
    m
}

/// `Σ f(x)` over `xs`: lanes of the element type within blocks of [`BLOCK`], the blocks
/// added in `f64`.
#[inline(always)]
fn sum_by<T: RowFloat>(xs: &[T], f: impl Fn(T) -> T) -> f64 {
    let mut total = 0.0f64;
    for blk in xs.chunks(BLOCK) {
        let mut acc = [T::ZERO; W];
        let mut it = blk.chunks_exact(W);
        for c in &mut it {
            for l in 0..W {
                acc[l] = acc[l] + f(c[l]);
            }
        }
        let rest: f64 = it.remainder().iter().map(|&v| f(v).to_f()).sum();
        total += acc.iter().map(|&v| v.to_f()).sum::<f64>() + rest;
    }
    total
}

/// `dst = exp(src - m)`, returning `Σ dst` (lanes within blocks, blocks in `f64`).
#[inline(always)]
fn exp_sum<T: RowFloat>(src: &[T], m: T, dst: &mut [T]) -> f64 {
    let mut total = 0.0f64;
    for (sb, db) in src.chunks(BLOCK).zip(dst.chunks_mut(BLOCK)) {
        let mut acc = [T::ZERO; W];
        let mut s = sb.chunks_exact(W);
        let mut d = db.chunks_exact_mut(W);
        for (c, o) in (&mut s).zip(&mut d) {
            for l in 0..W {
                o[l] = exp(c[l] - m);
                acc[l] = acc[l] + o[l];
            }
        }
        for (&x, o) in s.remainder().iter().zip(d.into_remainder()) {
            *o = exp(x - m);
            total += o.to_f();
        }
        total += acc.iter().map(|&v| v.to_f()).sum::<f64>();
    }
    total
}

/// `v` as a sum `hi + lo` of two values of the element type (`lo` is 0 in `f64`): `(x -
/// hi) - lo` subtracts a mean with no rounding of the mean's own, which `1/σ` would
/// amplify.
#[inline(always)]
fn split<T: RowFloat>(v: f64) -> (T, T) {
    let hi = T::of(v);
    (hi, T::of(v - hi.to_f()))
}

/// `softmax` (or `log_softmax`) over contiguous rows.
pub(super) struct Softmax {
    /// Row length.
    pub len: usize,
    /// `log_softmax`.
    pub log: bool,
}

impl<T: RowFloat> RowOp<T> for Softmax {
    fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn rows(&self, _first: usize, src: &[T], dst: &mut [T]) {
        for (x, y) in src.chunks_exact(self.len).zip(dst.chunks_exact_mut(self.len)) {
            // `inf - inf` makes a row with an infinite maximum NaN, as in PyTorch.
            let m = max(x);
            let s = exp_sum(x, m, y);
            if self.log {
                let ls = T::of(s.ln());
                for (o, &v) in y.iter_mut().zip(x) {
                    *o = (v - m) - ls;
                }
            } else {
                let inv = T::of(1.0 / s);
                for o in y.iter_mut() {
                    *o = *o * inv;
                }
            }
        }
    }
}

/// Softmax over a dim with `inner > 1` elements after it: each block of `n·inner`
/// elements is `n` rows of `inner` columns, normalized per column (the column loops are
/// contiguous and vectorize).
pub(super) struct SoftmaxColumns {
    /// The softmax dim's size.
    pub n: usize,
    /// Elements after it.
    pub inner: usize,
    /// `log_softmax`.
    pub log: bool,
}

impl<T: RowFloat> RowOp<T> for SoftmaxColumns {
    fn len(&self) -> usize {
        self.n * self.inner
    }

    #[inline(always)]
    fn rows(&self, _first: usize, src: &[T], dst: &mut [T]) {
        let (n, inner) = (self.n, self.inner);
        let mut m = vec![T::NEG_INF; inner];
        let mut s = vec![0.0f64; inner];
        for (x, y) in src.chunks_exact(n * inner).zip(dst.chunks_exact_mut(n * inner)) {
            m.fill(T::NEG_INF);
            s.fill(0.0);
            for xr in x.chunks_exact(inner) {
                for (mi, &v) in m.iter_mut().zip(xr) {
                    *mi = if v > *mi { v } else { *mi };
                }
            }
            for (xr, yr) in x.chunks_exact(inner).zip(y.chunks_exact_mut(inner)) {
                for ((o, &v), (mi, si)) in yr.iter_mut().zip(xr).zip(m.iter().zip(s.iter_mut())) {
                    *o = exp(v - *mi);
                    *si += o.to_f();
                }
            }
            if self.log {
                let ls: Vec<T> = s.iter().map(|v| T::of(v.ln())).collect();
                for (xr, yr) in x.chunks_exact(inner).zip(y.chunks_exact_mut(inner)) {
                    for ((o, &v), (&mi, &l)) in yr.iter_mut().zip(xr).zip(m.iter().zip(&ls)) {
                        *o = (v - mi) - l;
                    }
                }
            } else {
                let inv: Vec<T> = s.iter().map(|v| T::of(1.0 / v)).collect();
                for yr in y.chunks_exact_mut(inner) {
                    for (o, &i) in yr.iter_mut().zip(&inv) {
                        *o = *o * i;
                    }
                }
            }
        }
    }
}

/// Per-row statistics of a normalization: the mean (0 for RMS norm) and `1/σ`, with the
/// row normalized as `(x - mean) / σ`.
#[inline(always)]
fn moments<T: RowFloat>(x: &[T], rms: bool, eps: f64) -> (f64, f64) {
    let n = x.len().max(1) as f64;
    if rms {
        let ms = sum_by(x, |v| v * v) / n;
        (0.0, 1.0 / (ms + eps).sqrt())
    } else {
        let mean = sum_by(x, |v| v) / n;
        let (hi, lo) = split::<T>(mean);
        let var = sum_by(x, |v| {
            let d = (v - hi) - lo;
            d * d
        }) / n;
        (mean, 1.0 / (var + eps).sqrt())
    }
}

/// `y = ((x - mean) · a) · w + b` elementwise (`w`, `b` per position).
#[inline(always)]
fn affine<T: RowFloat>(x: &[T], y: &mut [T], mean: f64, a: f64, w: &[T], b: &[T]) {
    let ((hi, lo), a) = (split::<T>(mean), T::of(a));
    for (((o, &v), &wj), &bj) in y.iter_mut().zip(x).zip(w).zip(b) {
        *o = ((v - hi) - lo) * a * wj + bj;
    }
}

/// `y = (x - mean) · a + b` elementwise.
#[inline(always)]
fn scale_shift<T: RowFloat>(x: &[T], y: &mut [T], mean: f64, a: f64, b: f64) {
    let ((hi, lo), a, b) = (split::<T>(mean), T::of(a), T::of(b));
    for (o, &v) in y.iter_mut().zip(x) {
        *o = ((v - hi) - lo) * a + b;
    }
}

/// `layer_norm` or `rms_norm` over contiguous rows; weight and bias per position (ones and
/// zeros when absent), applied in the same pass.
pub(super) struct RowNorm {
    /// Weight per position of the row.
    pub w: Params,
    /// Bias per position of the row.
    pub b: Params,
    /// RMS norm (no mean subtracted).
    pub rms: bool,
    /// `eps`.
    pub eps: f64,
}

impl<T: RowFloat> RowOp<T> for RowNorm {
    fn len(&self) -> usize {
        self.w.len()
    }

    #[inline(always)]
    fn rows(&self, _first: usize, src: &[T], dst: &mut [T]) {
        let len = self.w.len();
        let (w, b) = (T::pick(&self.w), T::pick(&self.b));
        for (x, y) in src.chunks_exact(len).zip(dst.chunks_exact_mut(len)) {
            let (mean, rstd) = moments(x, self.rms, self.eps);
            affine(x, y, mean, rstd, w, b);
        }
    }
}

/// Inference `batch_norm`: per channel `y = (x - mean) · a + b` with `a = w / sqrt(var +
/// eps)`. Rows are either the planes of a row-major input (`len` elements of one channel,
/// channel `row % channels`) or the channel vectors of a channels-last one (every channel,
/// by position).
pub(super) struct ChannelAffine {
    mean: Vec<f64>,
    a: Vec<f64>,
    b: Vec<f64>,
    /// Per position, for rows of every channel: `mean` split, `a`, `b`.
    pos: Option<[Params; 4]>,
    len: usize,
}

impl ChannelAffine {
    /// Channel statistics and parameters; rows of `len` elements of one channel, or of every
    /// channel when `by_position`.
    pub(super) fn new(mean: Vec<f64>, a: Vec<f64>, b: Vec<f64>, len: usize, by_position: bool) -> Self {
        let pos = by_position.then(|| {
            let (hi, lo) = Params::split(&mean);
            [hi, lo, Params::new(a.clone()), Params::new(b.clone())]
        });
        ChannelAffine { mean, a, b, pos, len }
    }
}

impl<T: RowFloat> RowOp<T> for ChannelAffine {
    fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn rows(&self, first: usize, src: &[T], dst: &mut [T]) {
        let ch = self.a.len().max(1);
        if let Some([hi, lo, a, b]) = &self.pos {
            let (hi, lo, a, b) = (T::pick(hi), T::pick(lo), T::pick(a), T::pick(b));
            for (x, y) in src.chunks_exact(self.len).zip(dst.chunks_exact_mut(self.len)) {
                for (j, (o, &v)) in y.iter_mut().zip(x).enumerate() {
                    *o = ((v - hi[j]) - lo[j]) * a[j] + b[j];
                }
            }
            return;
        }
        for (k, (x, y)) in src.chunks_exact(self.len).zip(dst.chunks_exact_mut(self.len)).enumerate() {
            let j = (first + k) % ch;
            scale_shift(x, y, self.mean[j], self.a[j], self.b[j]);
        }
    }
}

/// `group_norm` over row-major rows of one (sample, group): `channels / groups` channel
/// planes of `plane` elements, statistics over the row, weight and bias per channel.
pub(super) struct GroupNorm {
    /// Weight per channel.
    pub w: Vec<f64>,
    /// Bias per channel.
    pub b: Vec<f64>,
    /// Groups.
    pub groups: usize,
    /// Elements per channel plane.
    pub plane: usize,
    /// `eps`.
    pub eps: f64,
}

impl<T: RowFloat> RowOp<T> for GroupNorm {
    fn len(&self) -> usize {
        self.w.len() / self.groups.max(1) * self.plane
    }

    #[inline(always)]
    fn rows(&self, first: usize, src: &[T], dst: &mut [T]) {
        let len = <Self as RowOp<T>>::len(self);
        let per = self.w.len() / self.groups.max(1);
        if len == 0 || self.plane == 0 {
            return;
        }
        for (k, (x, y)) in src.chunks_exact(len).zip(dst.chunks_exact_mut(len)).enumerate() {
            let (mean, rstd) = moments(x, false, self.eps);
            let g = (first + k) % self.groups.max(1);
            for (q, (xp, yp)) in x.chunks_exact(self.plane).zip(y.chunks_exact_mut(self.plane)).enumerate() {
                let ch = g * per + q;
                scale_shift(xp, yp, mean, rstd * self.w[ch], self.b[ch]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::Simd;

    fn cfgs() -> Vec<ExecConfig> {
        let c = ExecConfig::default().with_grain_size(64);
        vec![c.clone(), c.with_simd(Simd::Baseline)]
    }

    /// Softmax rows against the definition in `f64`, for lengths around the lane and group
    /// sizes, both instruction sets and many tasks.
    #[test]
    fn softmax_rows_match_the_definition() {
        for len in [1usize, 7, 8, 17, 100, GROUP + 3] {
            let rows = 5;
            let x: Vec<f32> = (0..rows * len).map(|i| ((i * 37 % 101) as f32 - 50.0) / 7.0).collect();
            for log in [false, true] {
                for cfg in cfgs() {
                    let mut y = vec![0f32; x.len()];
                    drive(&Softmax { len, log }, &x, &mut y, &cfg);
                    for r in 0..rows {
                        let row = &x[r * len..(r + 1) * len];
                        let m = row.iter().fold(f64::NEG_INFINITY, |a, &v| a.max(v as f64));
                        let s: f64 = row.iter().map(|&v| (v as f64 - m).exp()).sum();
                        for j in 0..len {
                            let v = row[j] as f64 - m;
                            let want = if log { v - s.ln() } else { v.exp() / s };
                            let got = y[r * len + j] as f64;
                            assert!((got - want).abs() <= 2e-6 * (1.0 + want.abs()), "{len} {log} {got} {want}");
                        }
                    }
                }
            }
        }
    }

    /// The column form equals the row form on the transposed data.
    #[test]
    fn softmax_columns_equal_rows_of_the_transpose() {
        let (outer, n, inner) = (3usize, 9usize, 13usize);
        let x: Vec<f64> = (0..outer * n * inner).map(|i| ((i * 53 % 97) as f64 - 48.0) / 5.0).collect();
        for log in [false, true] {
            let mut y = vec![0f64; x.len()];
            drive(&SoftmaxColumns { n, inner, log }, &x, &mut y, &ExecConfig::default().with_grain_size(16));
            for o in 0..outer {
                for i in 0..inner {
                    let col: Vec<f64> = (0..n).map(|j| x[o * n * inner + j * inner + i]).collect();
                    let mut want = vec![0f64; n];
                    drive(&Softmax { len: n, log }, &col, &mut want, &ExecConfig::default());
                    for j in 0..n {
                        let got = y[o * n * inner + j * inner + i];
                        assert!((got - want[j]).abs() <= 1e-14 * (1.0 + want[j].abs()));
                    }
                }
            }
        }
    }

    /// Layer norm with weight and bias against the two-pass definition.
    #[test]
    fn layer_norm_rows_match_the_definition() {
        let (rows, len) = (6usize, 37usize);
        let x: Vec<f32> = (0..rows * len).map(|i| ((i * 29 % 83) as f32) / 9.0).collect();
        let w: Vec<f64> = (0..len).map(|j| 0.5 + j as f64 / 10.0).collect();
        let b: Vec<f64> = (0..len).map(|j| j as f64 - 3.0).collect();
        for rms in [false, true] {
            for cfg in cfgs() {
                let mut y = vec![0f32; x.len()];
                let k = RowNorm { w: Params::new(w.clone()), b: Params::new(b.clone()), rms, eps: 1e-5 };
                drive(&k, &x, &mut y, &cfg);
                for r in 0..rows {
                    let row: Vec<f64> = x[r * len..(r + 1) * len].iter().map(|&v| v as f64).collect();
                    let mean = if rms { 0.0 } else { row.iter().sum::<f64>() / len as f64 };
                    let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / len as f64;
                    for j in 0..len {
                        let want = (row[j] - mean) / (var + 1e-5).sqrt() * w[j] + b[j];
                        let got = y[r * len + j] as f64;
                        assert!((got - want).abs() <= 1e-6 * (1.0 + want.abs()), "{rms} {got} {want}");
                    }
                }
            }
        }
    }
}
