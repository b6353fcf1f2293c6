//! Copies (with dtype casts): memcpy for matching contiguous rows, cache-blocked tiles when
//! the operands disagree on the fastest dimension, the generic unary loop otherwise.

use super::config::{ExecConfig, Simd};
use super::exec::{prepare, Prepared};
use super::loops::{run_prepared1, store_fence, stream_output, Map1};
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
    let p = prepare(plan, &raws, 1)?;
    let _g = borrow_all(&raws, 1)?;
    copy_prepared::<S, O>(p, cfg);
    Ok(())
}

/// The copy of [`execute_copy`] over a validated plan whose storages the caller has borrowed
/// (output exclusively): the narrow interleave, tiles, or the plain unary loop.
pub(crate) fn copy_prepared<S: Element, O: Element>(mut p: Prepared<2>, cfg: &ExecConfig) {
    if let Some(k) = narrow_partner::<S, O>(&p) {
        // NCHW → NHWC with C ≤ 8: interleave C source rows into one output stream.
        p.shape.swap(1, k);
        p.strides.swap(1, k);
        narrow_copy::<S, O>(&p, cfg);
    } else if let Some(k) = tile_partner::<S, O>(&p, cfg) {
        // Iteration order of a copy is free: bring the source's fastest dim next to dim 0.
        p.shape.swap(1, k);
        p.strides.swap(1, k);
        tiled_copy::<S, O>(&p, cfg);
    } else if TypeId::of::<S>() == TypeId::of::<O>() && stream_output::<O>(p.numel) {
        // A large same-type copy: contiguous, non-aliasing rows are copied with
        // non-temporal stores (`stream_copy`: 25-30% faster than the plain stores of
        // `memcpy` here), anything else by the unary loop.
        let e = size_of::<O>() as isize;
        p.run_then(
            cfg,
            &|ptr: &[*mut u8; 2], s: &[isize; 2], n: usize| {
                if s[0] == e && s[1] == e && ptr[0] != ptr[1] {
                    // SAFETY: a row of the validated plan: `n` contiguous elements of each
                    // operand in bounds; distinct starts of two contiguous rows of one
                    // non-overlapping output and an input that is disjoint from it or
                    // identical (excluded here) do not overlap.
                    unsafe { super::loops::stream_copy(ptr[0], ptr[1], n * e as usize) }
                } else {
                    // SAFETY: as in `run_prepared1`.
                    unsafe { super::loops::inner1(&Cast::<S, O>::default(), ptr, s, n) }
                }
            },
            &store_fence,
        );
    } else {
        run_prepared1(&p, &Cast::<S, O>::default(), cfg);
    }
}

/// Largest inner dimension handled by [`narrow_copy`] (the channel count of NCHW → NHWC).
const NARROW_MAX: usize = 8;
/// Source elements per channel row in one unit of [`narrow_copy`] work.
const NARROW_RUN: usize = 4096;

/// The dimension `k` for the narrow interleave: the output is contiguous along dim 0 of at most
/// [`NARROW_MAX`] elements (the channels) and along `k` with stride `shape[0]` elements (the
/// output is `[.., k, 0]` dense), while the source is contiguous along `k`.
fn narrow_partner<S: Element, O: Element>(p: &Prepared<2>) -> Option<usize> {
    let (eo, es) = (size_of::<O>() as isize, size_of::<S>() as isize);
    let c = *p.shape.first()?;
    if p.shape.len() < 2 || !(2..=NARROW_MAX).contains(&c) || p.strides[0][0] != eo {
        return None;
    }
    if p.strides[0][1] == es {
        return None;
    }
    (1..p.shape.len())
        .find(|&d| p.strides[d][1] == es && p.strides[d][0] == c as isize * eo && p.shape[d] >= 16)
}

/// Copy where dims 0 (`c` ≤ [`NARROW_MAX`] channels, contiguous in the output) and 1 (contiguous
/// in the source, stride `c` elements in the output) form one dense output run: each unit reads
/// `c` source rows of up to [`NARROW_RUN`] elements side by side and writes their interleave
/// as one contiguous output stream. Units are `(outer index, run)` pairs; ranges of units go
/// to rayon tasks.
fn narrow_copy<S: Element, O: Element>(p: &Prepared<2>, cfg: &ExecConfig) {
    let (c, n1) = (p.shape[0], p.shape[1]);
    let runs = n1.div_ceil(NARROW_RUN);
    let outer: usize = p.shape[2..].iter().product();
    let units = runs * outer;
    let run_units = |u0: usize, u1: usize| {
        let mut idx = vec![0usize; p.shape.len()];
        for u in u0..u1 {
            let (r, mut o) = (u % runs, u / runs);
            for (i, &s) in idx.iter_mut().zip(&p.shape).skip(2) {
                *i = o % s;
                o /= s;
            }
            idx[1] = r * NARROW_RUN;
            let len = NARROW_RUN.min(n1 - idx[1]);
            let base = p.ptrs_at(&idx);
            // SAFETY: indices [0, c) × [idx1, idx1 + len) × idx[2..] are inside the iteration
            // space (Prepared invariant: in bounds, aligned); the output stride along dim 1 is
            // `c` elements and along dim 0 one element (narrow_partner), so the unit writes the
            // `c·len` output elements from base[0] on, disjoint from every other unit's.
            unsafe { interleave::<S, O>(base[0] as *mut O, base[1], p.strides[0][1], c, len) };
        }
    };
    let threads = rayon::current_num_threads();
    let unit_elems = c * NARROW_RUN;
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

/// `dst[j·c + i] = cast(src[i·cs + j])` for `i < c`, `j < len`, monomorphized per channel count.
///
/// SAFETY: `dst[..c·len]` is writable and owned by the caller; source element `(i, j)` at byte
/// `src + i·cs + j·size_of::<S>()` is readable for `i < c`, `j < len`; `2 ≤ c ≤ NARROW_MAX`.
unsafe fn interleave<S: Element, O: Element>(
    dst: *mut O,
    src: *const u8,
    cs: isize,
    c: usize,
    len: usize,
) {
    match c {
        2 => interleave_c::<S, O, 2>(dst, src, cs, len),
        3 => interleave_c::<S, O, 3>(dst, src, cs, len),
        4 => interleave_c::<S, O, 4>(dst, src, cs, len),
        5 => interleave_c::<S, O, 5>(dst, src, cs, len),
        6 => interleave_c::<S, O, 6>(dst, src, cs, len),
        7 => interleave_c::<S, O, 7>(dst, src, cs, len),
        _ => interleave_c::<S, O, 8>(dst, src, cs, len),
    }
}

/// [`interleave`] for a compile-time channel count `C`. SAFETY: as for [`interleave`].
#[inline(always)]
unsafe fn interleave_c<S: Element, O: Element, const C: usize>(
    dst: *mut O,
    src: *const u8,
    cs: isize,
    len: usize,
) {
    let rows: [*const S; C] = std::array::from_fn(|i| src.offset(i as isize * cs) as *const S);
    #[allow(unused_mut)]
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if size_of::<S>() == 4 && TypeId::of::<S>() == TypeId::of::<O>() {
        // SAFETY: S == O is a 4-byte plain-data type: moving its bits through f32 lanes
        // (loads, shuffles, stores only) copies it exactly; bounds as for the caller.
        done = interleave_sse::<C>(
            dst as *mut f32,
            std::array::from_fn(|i| rows[i] as *const f32),
            len,
        );
    }
    for j in done..len {
        for (i, r) in rows.iter().enumerate() {
            dst.add(j * C + i).write(O::cast_from(*r.add(j)));
        }
    }
}

/// The 4-byte same-type body of [`interleave_c`]: 4 positions `j` at a time, channel groups
/// of 4 transposed with SSE (rows past `C` are zeros), each position's channels stored with one
/// or two 16-byte stores. With `C` not a multiple of 4 a store runs past the position's `C`
/// channels into the next position's, which a later store (in program order) overwrites; the
/// loop stops while every such store still ends inside `dst[..C·len]`. Returns how many
/// positions were written (the caller finishes the rest).
///
/// SAFETY: as for [`interleave`], with `C ≤ 8`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn interleave_sse<const C: usize>(
    dst: *mut f32,
    rows: [*const f32; C],
    len: usize,
) -> usize {
    use std::arch::x86_64::*;
    let groups = C.div_ceil(4);
    let mut j = 0;
    // the last store of a block ends at (j+3)·C + 4·groups elements
    while (j + 3) * C + 4 * groups <= len * C {
        // out[g][k]: channels 4g..4g+4 of position j + k
        let mut out = [[_mm_setzero_ps(); 4]; 2];
        for (g, og) in out.iter_mut().enumerate().take(groups) {
            let v: [__m128; 4] = std::array::from_fn(|k| {
                let i = 4 * g + k;
                if i < C {
                    _mm_loadu_ps(rows[i].add(j))
                } else {
                    _mm_setzero_ps()
                }
            });
            let (t0, t1) = (_mm_unpacklo_ps(v[0], v[1]), _mm_unpacklo_ps(v[2], v[3]));
            let (t2, t3) = (_mm_unpackhi_ps(v[0], v[1]), _mm_unpackhi_ps(v[2], v[3]));
            *og = [
                _mm_movelh_ps(t0, t1),
                _mm_movehl_ps(t1, t0),
                _mm_movelh_ps(t2, t3),
                _mm_movehl_ps(t3, t2),
            ];
        }
        // position by position, low channels first: a store's overhang into the next
        // position is overwritten by that position's own stores
        for k in 0..4 {
            for (g, og) in out.iter().enumerate().take(groups) {
                _mm_storeu_ps(dst.add((j + k) * C + 4 * g), og[k]);
            }
        }
        j += 4;
    }
    j
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
    let stream = stream_output::<O>(p.numel);
    let avx2 = direct_avx2::<S, O>(cfg);
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
            #[cfg(target_arch = "x86_64")]
            if avx2 && w.is_multiple_of(8) && rows.is_multiple_of(8) {
                // SAFETY: as below (same tile, every element read and written once); `avx2`
                // is only true when the CPU reports AVX2 (`direct_avx2`) and S == O is a
                // 4-byte type; w and rows are multiples of 8.
                unsafe {
                    transpose_8x8_direct(
                        base[1],
                        p.strides[0][1],
                        base[0],
                        p.strides[1][0],
                        w,
                        rows,
                        stream,
                    )
                };
                continue;
            }
            // SAFETY: the tile covers indices [b0·t, b0·t+w) × [b1·t, b1·t+rows) × idx[2..], all
            // inside the iteration space, so every pointer formed is in bounds (Prepared
            // invariant); units are disjoint, so are the output elements they write.
            unsafe {
                copy_tile::<S, O>(
                    base,
                    &p.strides[0],
                    &p.strides[1],
                    w,
                    rows,
                    &mut buf,
                    stream,
                )
            };
        }
        if stream {
            store_fence();
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

/// How far ahead (in elements along a source row) [`transpose_8x8_direct`] prefetches: 256
/// bytes, four lines. Measured 48-96 about equal, 32 and 128+ slower (module docs).
#[cfg(target_arch = "x86_64")]
const PREFETCH: usize = 64;

/// Whether same-type 4-byte tiles may take [`transpose_8x8_direct`]: `cfg.simd` allows
/// run-time detection ([`Simd::Auto`]) and the CPU reports AVX2.
fn direct_avx2<S: Element, O: Element>(cfg: &ExecConfig) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        size_of::<S>() == 4
            && TypeId::of::<S>() == TypeId::of::<O>()
            && cfg.simd == Simd::Auto
            && std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = cfg;
        false
    }
}

/// A `w × rows` tile of 4-byte elements copied unchanged, straight from source to output in
/// 8×8 AVX2 register transposes (8 loads, 24 shuffles, 8 stores per 64 elements; no buffer).
/// The tile is walked in strips of 16 source rows (`i`), each along the source rows (`j`),
/// with the source lines 256 bytes ahead prefetched: the 16 rows are 16 independent strided
/// streams the hardware prefetchers do not follow. Each output line is completed by two
/// consecutive stores; with `stream` and 32-byte aligned output rows the stores are
/// non-temporal (the caller fences before publishing).
///
/// SAFETY: the CPU supports AVX2; `w` and `rows` are multiples of 8; source element (i, j) at
/// `src + i·s0 + 4j` is readable and output element (i, j) at `dst + 4i + j·d1` writable and
/// owned by the caller, for i < w, j < rows.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn transpose_8x8_direct(
    src: *const u8,
    s0: isize,
    dst: *mut u8,
    d1: isize,
    w: usize,
    rows: usize,
    stream: bool,
) {
    use std::arch::x86_64::*;
    let nt = stream && (dst as usize).is_multiple_of(32) && d1 % 32 == 0;
    // The 8×8 block at (ib, jb) transposed: o[k] holds elements (ib..ib + 8, jb + k).
    // SAFETY (all pointer arithmetic): callers pass ib + 8 <= w, jb + 8 <= rows.
    let block = |ib: usize, jb: usize| -> [__m256; 8] {
        let r: [__m256; 8] = std::array::from_fn(|k| unsafe {
            _mm256_loadu_ps(src.offset((ib + k) as isize * s0 + 4 * jb as isize) as *const f32)
        });
        let a0 = _mm256_unpacklo_ps(r[0], r[1]);
        let a1 = _mm256_unpackhi_ps(r[0], r[1]);
        let a2 = _mm256_unpacklo_ps(r[2], r[3]);
        let a3 = _mm256_unpackhi_ps(r[2], r[3]);
        let a4 = _mm256_unpacklo_ps(r[4], r[5]);
        let a5 = _mm256_unpackhi_ps(r[4], r[5]);
        let a6 = _mm256_unpacklo_ps(r[6], r[7]);
        let a7 = _mm256_unpackhi_ps(r[6], r[7]);
        let b0 = _mm256_shuffle_ps::<0x44>(a0, a2);
        let b1 = _mm256_shuffle_ps::<0xEE>(a0, a2);
        let b2 = _mm256_shuffle_ps::<0x44>(a1, a3);
        let b3 = _mm256_shuffle_ps::<0xEE>(a1, a3);
        let b4 = _mm256_shuffle_ps::<0x44>(a4, a6);
        let b5 = _mm256_shuffle_ps::<0xEE>(a4, a6);
        let b6 = _mm256_shuffle_ps::<0x44>(a5, a7);
        let b7 = _mm256_shuffle_ps::<0xEE>(a5, a7);
        [
            _mm256_permute2f128_ps::<0x20>(b0, b4),
            _mm256_permute2f128_ps::<0x20>(b1, b5),
            _mm256_permute2f128_ps::<0x20>(b2, b6),
            _mm256_permute2f128_ps::<0x20>(b3, b7),
            _mm256_permute2f128_ps::<0x31>(b0, b4),
            _mm256_permute2f128_ps::<0x31>(b1, b5),
            _mm256_permute2f128_ps::<0x31>(b2, b6),
            _mm256_permute2f128_ps::<0x31>(b3, b7),
        ]
    };
    // Stores output elements (ib..ib + 8, jb + k) from v.
    // SAFETY: callers pass ib + 8 <= w, jb + k < rows; aligned when `nt` (dst, d1, 4·ib are).
    let store = |ib: usize, jb: usize, k: usize, v: __m256| unsafe {
        let q = dst.offset(4 * ib as isize + (jb + k) as isize * d1) as *mut f32;
        if nt {
            _mm256_stream_ps(q, v);
        } else {
            _mm256_storeu_ps(q, v);
        }
    };
    // Source row `i`'s element `jb + PREFETCH` requested ahead of its load. Prefetches do not
    // fault, and the address is formed with wrapping arithmetic, so one past the tile (or the
    // tensor) is harmless.
    let prefetch = |i: usize, jb: usize| {
        let a = src.wrapping_offset(i as isize * s0 + 4 * (jb + PREFETCH) as isize);
        _mm_prefetch::<_MM_HINT_T0>(a as *const i8);
    };
    // Strips of 16 source rows (two 8×8 blocks side by side), each walked along the source
    // rows: every source line is used up by two consecutive blocks, every 64-byte output line
    // (when aligned) written by two back-to-back stores.
    let mut ib = 0;
    while ib + 16 <= w {
        for jb in (0..rows).step_by(8) {
            for i in ib..ib + 16 {
                prefetch(i, jb);
            }
            let (lo, hi) = (block(ib, jb), block(ib + 8, jb));
            for k in 0..8 {
                store(ib, jb, k, lo[k]);
                store(ib + 8, jb, k, hi[k]);
            }
        }
        ib += 16;
    }
    // A last strip of 8 rows (w ≡ 8 mod 16).
    if ib < w {
        for jb in (0..rows).step_by(8) {
            for i in ib..ib + 8 {
                prefetch(i, jb);
            }
            for (k, &v) in block(ib, jb).iter().enumerate() {
                store(ib, jb, k, v);
            }
        }
    }
}

/// Copies one `w × rows` tile through a small buffer: the tile is read
/// along the source's contiguous dimension into the buffer, then written along the output's
/// contiguous dimension. Streaming whole lines on both sides avoids the cache-set conflicts a
/// direct strided walk has with power-of-two strides.
///
/// SAFETY: caller guarantees every element `base + i·s0 + j·s1` (i < n0, j < rows) is in
/// bounds and aligned for both operands, `s0[0] == size_of::<O>()`, `s1[1] == size_of::<S>()`,
/// and `buf.len() >= w * rows`. With `stream`, output rows that are whole 64-byte-aligned
/// lines are written with non-temporal stores, and the caller issues [`store_fence`] before
/// its results are published.
#[inline(never)]
unsafe fn copy_tile<S: Element, O: Element>(
    base: [*mut u8; 2],
    s0: &[isize; 2],
    s1: &[isize; 2],
    w: usize,
    rows: usize,
    buf: &mut [MaybeUninit<O>],
    stream: bool,
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
        #[cfg(target_arch = "x86_64")]
        if stream
            && (w * size_of::<O>()).is_multiple_of(64)
            && (base[0] as usize).is_multiple_of(64)
            && s1[0] % 64 == 0
        {
            use std::arch::x86_64::*;
            // Whole, aligned output lines: non-temporal stores skip the read for ownership
            // of each line (the caller fences at the end of its range).
            let lines = w * size_of::<O>() / 16;
            for j in 0..rows {
                let o = base[0].offset(j as isize * s1[0]) as *mut __m128i;
                let r = b.add(j * w) as *const __m128i;
                for k in 0..lines {
                    _mm_stream_si128(o.add(k), _mm_loadu_si128(r.add(k)));
                }
            }
            return;
        }
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

/// Phase 1 of [`copy_tile`] for 4-byte elements copied unchanged, in 4×4 SSE transposes, each
/// source row prefetched [`PREFETCH`] elements ahead
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
            if j % 16 == 0 {
                // the line PREFETCH elements ahead (the next tile's, for tiles of 64): the
                // rows are strided streams the hardware prefetchers do not follow
                for rk in r {
                    let a = rk.wrapping_add(j + PREFETCH);
                    _mm_prefetch::<_MM_HINT_T0>(a as *const i8);
                }
            }
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
        for simd in [Simd::Auto, Simd::Baseline] {
            check_with::<T, O>(n, m, tile, threads, simd);
        }
    }

    fn check_with<T: Element, O: Element>(
        n: usize,
        m: usize,
        tile: usize,
        threads: usize,
        simd: Simd,
    ) {
        let vals: Vec<T> = (0..n * m).map(|i| T::cast_from(i as i64 + 1)).collect();
        let src = Tensor::from_vec(vals, &[n as i64, m as i64])
            .unwrap()
            .transpose(0, 1)
            .unwrap();
        let dst = Tensor::<O>::zeros(&[m as i64, n as i64]).unwrap();
        let cfg = ExecConfig::default()
            .with_tile(tile)
            .with_grain_size(64)
            .with_simd(simd);
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
                    "{n}x{m} tile {tile} {simd:?} at ({i}, {j})"
                );
            }
        }
    }

    /// Same-type copies of at least 8 MiB of output (rows through `stream_copy`, with
    /// unaligned row starts and rows with gaps: a narrowed source or output) and a cast of the
    /// same size (the unary loop), at 1-3 threads, against the elements read one by one.
    #[test]
    fn large_contiguous_copies_match_reference() {
        let (n, m) = (1031i64, 2053i64); // > 2M f32: above the 8 MiB streaming threshold
        let vals: Vec<f32> = (0..n * m).map(|i| i as f32 * 0.25 - 7.0).collect();
        let full = Tensor::from_vec(vals, &[n, m]).unwrap();
        for threads in 1..=3 {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let cfg = ExecConfig::default();
            for (dst_cols, start) in [(m, 0), (m + 5, 0), (m, 3)] {
                let w = m - start;
                let src = full.narrow(1, start, w).unwrap();
                let dst = Tensor::<f32>::zeros(&[n, dst_cols]).unwrap();
                let dst_view = dst.narrow(1, 0, w).unwrap();
                pool.install(|| copy_into(&dst_view, &src, &cfg).unwrap());
                for i in (0..n).step_by(97).chain([n - 1]) {
                    for j in 0..w {
                        let (g, want) = (dst.get(&[i, j]).unwrap(), src.get(&[i, j]).unwrap());
                        assert_eq!(g, want, "{threads} threads, {dst_cols} {start}: ({i}, {j})");
                    }
                }
                if dst_cols > w {
                    assert_eq!(dst.get(&[5, w]).unwrap(), 0.0, "wrote past a row");
                }
            }
            let dst = Tensor::<f64>::zeros(&[n, m]).unwrap();
            pool.install(|| copy_into(&dst, &full, &cfg).unwrap());
            assert_eq!(
                dst.get(&[n - 1, m - 1]).unwrap(),
                full.get(&[n - 1, m - 1]).unwrap() as f64
            );
        }
    }

    /// NCHW → NHWC with few channels selects the narrow interleave (dims: C, H·W, N), many
    /// channels or a source contiguous along C do not.
    #[test]
    fn narrow_interleave_is_selected_for_few_channels() {
        let prep = |c: usize, src_c_stride: isize| Prepared::<2> {
            shape: [c, 50176, 8].into_iter().collect(),
            strides: [
                [4, src_c_stride],
                [4 * c as isize, 4],
                [4 * 50176 * c as isize, 4 * 50176 * c as isize],
            ]
            .into_iter()
            .collect(),
            base: [std::ptr::null_mut(); 2],
            numel: c * 50176 * 8,
        };
        for c in 2..=NARROW_MAX {
            assert_eq!(
                narrow_partner::<f32, f32>(&prep(c, 4 * 50176)),
                Some(1),
                "C = {c}"
            );
            assert_eq!(
                narrow_partner::<u8, u8>(&prep(c, 4 * 50176)),
                None,
                "element size"
            );
        }
        assert_eq!(narrow_partner::<f32, f32>(&prep(9, 4 * 50176)), None);
        assert_eq!(narrow_partner::<f32, f32>(&prep(3, 4)), None);
    }

    /// A transpose whose output (8 MiB) takes the non-temporal tile rows, plus ragged edges.
    #[test]
    fn streamed_tiled_transpose_matches_reference() {
        check::<f32, f32>(2048, 1030, 64, 2);
        check::<f32, f32>(2050, 1024, 64, 3);
    }

    #[test]
    fn tiled_transpose_matches_reference() {
        for &(n, m) in &[
            (64, 64),
            (130, 70),
            (67, 129),
            (16, 200),
            (200, 17),
            (8, 8),
            (72, 9),
        ] {
            for &(tile, threads) in &[(64, 1), (64, 2), (16, 2), (6, 1), (8, 3), (24, 2)] {
                check::<f32, f32>(n, m, tile, threads);
                check::<i32, i32>(n, m, tile, threads);
                check::<i32, f32>(n, m, tile, threads);
                check::<f64, f64>(n, m, tile, threads);
            }
        }
    }
}
