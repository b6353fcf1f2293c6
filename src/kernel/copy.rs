//! Copies (with dtype casts): memcpy for matching contiguous rows, cache-blocked tiles when
//! the operands disagree on the fastest dimension, the generic unary loop otherwise.

use super::config::ExecConfig;
use super::exec::{prepare, Prepared};
use super::loops::{run_prepared1, Map1};
use crate::iter::Plan;
use crate::tensor::{borrow_all, Element, Storage};
use crate::Result;
use rayon::prelude::*;
use std::any::TypeId;
use std::marker::PhantomData;
use std::mem::{size_of, MaybeUninit};

/// The cast `S → O` as an element function (a plain copy when `S == O`).
pub struct Cast<S, O>(PhantomData<fn(S) -> O>);

impl<S, O> Default for Cast<S, O> {
    fn default() -> Self {
        Cast(PhantomData)
    }
}

impl<S: Element, O: Element> Map1<S, O> for Cast<S, O> {
    #[inline(always)]
    fn call(&self, a: S) -> O {
        O::cast_from(a)
    }
    #[inline(always)]
    fn contiguous(&self, out: &mut [MaybeUninit<O>], a: &[S]) {
        if TypeId::of::<S>() == TypeId::of::<O>() {
            // SAFETY: S and O are the same type; MaybeUninit<O> has O's layout; the slices do
            // not overlap (callers only use this body for non-aliasing operands).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    a.as_ptr() as *const O,
                    out.as_mut_ptr() as *mut O,
                    a.len(),
                )
            };
        } else {
            for (o, &x) in out.iter_mut().zip(a) {
                o.write(O::cast_from(x));
            }
        }
    }
}

/// Executes a copy `out[i] = cast(src[i])` over a plan with operands `[out, src]`.
///
/// When the output is contiguous along the plan's innermost dimension but the source is not
/// (it is contiguous along some other dimension: a transpose, NCHW↔NHWC), the copy runs in
/// square tiles of `cfg.tile` elements so both sides touch whole cache lines; a row-by-row
/// loop would read one element per cache line of the source and thrash the TLB.
pub fn execute_copy<S: Element, O: Element>(
    plan: &Plan<i64>,
    out: &Storage<O>,
    src: &Storage<S>,
    cfg: &ExecConfig,
) -> Result<()> {
    let raws = [out.raw(), src.raw()];
    let mut p = prepare(plan, &raws, 1)?;
    let _g = borrow_all(&raws, 1)?;
    if let Some(k) = tile_partner::<S, O>(&p, cfg) {
        // Iteration order of a copy is free: bring the source's fastest dim next to dim 0.
        p.shape.swap(1, k);
        p.strides.swap(1, k);
        tiled_copy::<S, O>(&p, cfg);
    } else {
        run_prepared1(&p, &Cast::<S, O>::default(), cfg);
    }
    Ok(())
}

/// The dimension along which the source is contiguous, if tiling pays off.
fn tile_partner<S: Element, O: Element>(p: &Prepared<2>, cfg: &ExecConfig) -> Option<usize> {
    let (eo, es) = (size_of::<O>() as isize, size_of::<S>() as isize);
    let t = cfg.tile_edge();
    if p.shape.len() < 2 || p.shape[0] < 2 || p.strides[0][0] != eo || p.strides[0][1] == es {
        return None;
    }
    (1..p.shape.len()).find(|&d| p.strides[d][1] == es && p.shape[d] >= t.min(16))
}

/// Tiled 2-D copy over dims 0 and 1. Units of work are single tiles, numbered with the
/// block index along dim 1 (the source's contiguous dim) fastest, so consecutive tiles continue
/// the same source rows (sequential reads, few TLB misses); ranges of units go to rayon tasks.
fn tiled_copy<S: Element, O: Element>(p: &Prepared<2>, cfg: &ExecConfig) {
    let t = cfg.tile_edge();
    let (n0, n1) = (p.shape[0], p.shape[1]);
    let (blocks0, blocks1) = (n0.div_ceil(t), n1.div_ceil(t));
    let outer: usize = p.shape[2..].iter().product();
    let units = blocks0 * blocks1 * outer;
    let unit_elems = t * t;
    let run_units = |u0: usize, u1: usize| {
        let mut buf: Vec<MaybeUninit<O>> = Vec::with_capacity(t * t);
        // SAFETY: MaybeUninit needs no initialization.
        unsafe { buf.set_len(t * t) };
        let mut idx = vec![0usize; p.shape.len()];
        for u in u0..u1 {
            let (b0, b1, mut o) = (u / blocks1 % blocks0, u % blocks1, u / (blocks0 * blocks1));
            for (i, &s) in idx.iter_mut().zip(&p.shape).skip(2) {
                *i = o % s;
                o /= s;
            }
            idx[0] = b0 * t;
            idx[1] = b1 * t;
            let base = p.ptrs_at(&idx);
            let w = t.min(n0 - b0 * t);
            let rows = t.min(n1 - b1 * t);
            // SAFETY: the tile covers indices [b0·t, b0·t+w) × [b1·t, b1·t+rows) × idx[2..], all
            // inside the iteration space, so every pointer formed is in bounds (Prepared
            // invariant); units are disjoint, so are the output elements they write.
            unsafe { copy_tile::<S, O>(base, &p.strides[0], &p.strides[1], w, rows, &mut buf) };
        }
    };
    let threads = rayon::current_num_threads();
    if units * unit_elems < 2 * cfg.grain() || threads <= 1 || units < 2 {
        run_units(0, units);
        return;
    }
    let per_task = (cfg.grain() / unit_elems)
        .max(1)
        .max(units.div_ceil(threads * cfg.tasks()));
    let tasks = units.div_ceil(per_task);
    (0..tasks)
        .into_par_iter()
        .for_each(|k| run_units(k * per_task, ((k + 1) * per_task).min(units)));
}

/// Copies one `w × rows` tile through a small buffer: the tile is read
/// along the source's contiguous dimension into the buffer, then written along the output's
/// contiguous dimension. Streaming whole lines on both sides avoids the cache-set conflicts a
/// direct strided walk has with power-of-two strides.
///
/// SAFETY: caller guarantees every element `base + i·s0 + j·s1` (i < n0, j < rows) is in
/// bounds and aligned for both operands, `s0[0] == size_of::<O>()`, `s1[1] == size_of::<S>()`,
/// and `buf.len() >= w * rows`.
#[inline(never)]
unsafe fn copy_tile<S: Element, O: Element>(
    base: [*mut u8; 2],
    s0: &[isize; 2],
    s1: &[isize; 2],
    w: usize,
    rows: usize,
    buf: &mut [MaybeUninit<O>],
) {
    // phase 1: source rows (contiguous along j) into buf[j*w + i]
    #[cfg(target_arch = "x86_64")]
    if size_of::<S>() == 4
        && TypeId::of::<S>() == TypeId::of::<O>()
        && w.is_multiple_of(4)
        && rows.is_multiple_of(4)
    {
        // SAFETY: as for the scalar loop below (same elements, read and written in 4×4 blocks);
        // S == O is a 4-byte plain-data type, so moving its bits through f32 lanes (no
        // arithmetic, loads/stores/shuffles only) copies it exactly.
        transpose_4x4_blocks(
            base[1] as *const u8,
            s0[1],
            w,
            rows,
            buf.as_mut_ptr() as *mut f32,
        );
    } else {
        copy_tile_phase1::<S, O>(base[1], s0[1], w, rows, buf);
    }
    #[cfg(not(target_arch = "x86_64"))]
    copy_tile_phase1::<S, O>(base[1], s0[1], w, rows, buf);
    // phase 2: buffer rows to output rows (contiguous along i); buf[..w*rows] was written above
    let b = buf.as_ptr() as *const O;
    if s1[0] == (w * size_of::<O>()) as isize {
        // the tile is one contiguous block of the output (e.g. NCHW→NHWC with few channels)
        std::ptr::copy_nonoverlapping(b, base[0] as *mut O, w * rows);
    } else {
        for j in 0..rows {
            let o = base[0].offset(j as isize * s1[0]) as *mut O;
            std::ptr::copy_nonoverlapping(b.add(j * w), o, w);
        }
    }
}

/// Phase 1 of [`copy_tile`], any element types: `buf[j·w + i] = cast(src[i·s0 + j])`.
///
/// SAFETY: as [`copy_tile`] (`src` is its source base, `s0` the source's dim-0 byte stride).
#[inline(always)]
unsafe fn copy_tile_phase1<S: Element, O: Element>(
    src: *mut u8,
    s0: isize,
    w: usize,
    rows: usize,
    buf: &mut [MaybeUninit<O>],
) {
    for i in 0..w {
        let s = src.offset(i as isize * s0) as *const S;
        for j in 0..rows {
            buf[j * w + i].write(O::cast_from(*s.add(j)));
        }
    }
}

/// Phase 1 of [`copy_tile`] for 4-byte elements copied unchanged, in 4×4 SSE transposes
/// (4 loads, 8 shuffles, 4 stores per 16 elements instead of 16 scalar loads and stores).
///
/// SAFETY: `w` and `rows` are multiples of 4; source element (i, j) at `src + i·s0 + 4j` is
/// readable for i < w, j < rows; `buf` holds `w·rows` 4-byte elements.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn transpose_4x4_blocks(src: *const u8, s0: isize, w: usize, rows: usize, buf: *mut f32) {
    use std::arch::x86_64::*;
    for i in (0..w).step_by(4) {
        let r: [*const f32; 4] =
            std::array::from_fn(|k| src.offset((i + k) as isize * s0) as *const f32);
        for j in (0..rows).step_by(4) {
            let (a, b, c, d) = (
                _mm_loadu_ps(r[0].add(j)),
                _mm_loadu_ps(r[1].add(j)),
                _mm_loadu_ps(r[2].add(j)),
                _mm_loadu_ps(r[3].add(j)),
            );
            let (t0, t1) = (_mm_unpacklo_ps(a, b), _mm_unpacklo_ps(c, d));
            let (t2, t3) = (_mm_unpackhi_ps(a, b), _mm_unpackhi_ps(c, d));
            _mm_storeu_ps(buf.add(j * w + i), _mm_movelh_ps(t0, t1));
            _mm_storeu_ps(buf.add((j + 1) * w + i), _mm_movehl_ps(t1, t0));
            _mm_storeu_ps(buf.add((j + 2) * w + i), _mm_movelh_ps(t2, t3));
            _mm_storeu_ps(buf.add((j + 3) * w + i), _mm_movehl_ps(t3, t2));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::copy_into;
    use super::*;
    use crate::tensor::Tensor;

    /// Transposed copies of distinct values through the tiled path (4×4 SSE blocks for
    /// same-type 4-byte elements, scalar edges when a tile side is not a multiple of 4, the
    /// scalar cast otherwise), against a per-element reference.
    fn check<T: Element, O: Element>(n: usize, m: usize, tile: usize, threads: usize) {
        let vals: Vec<T> = (0..n * m).map(|i| T::cast_from(i as i64 + 1)).collect();
        let src = Tensor::from_vec(vals, &[n as i64, m as i64])
            .unwrap()
            .transpose(0, 1)
            .unwrap();
        let dst = Tensor::<O>::zeros(&[m as i64, n as i64]).unwrap();
        let cfg = ExecConfig::default().with_tile(tile).with_grain_size(64);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| copy_into(&dst, &src, &cfg).unwrap());
        for i in 0..m {
            for j in 0..n {
                let want = O::cast_from(src.get(&[i as i64, j as i64]).unwrap());
                assert_eq!(
                    dst.get(&[i as i64, j as i64]).unwrap(),
                    want,
                    "{n}x{m} tile {tile} at ({i}, {j})"
                );
            }
        }
    }

    #[test]
    fn tiled_transpose_matches_reference() {
        for &(n, m) in &[(64, 64), (130, 70), (67, 129), (16, 200), (200, 17)] {
            for &(tile, threads) in &[(64, 1), (64, 2), (16, 2), (6, 1)] {
                check::<f32, f32>(n, m, tile, threads);
                check::<i32, i32>(n, m, tile, threads);
                check::<i32, f32>(n, m, tile, threads);
                check::<f64, f64>(n, m, tile, threads);
            }
        }
    }
}
