//! Element functions and the inner (1-D) loops that apply them.
//!
//! Each inner loop is chosen per call from the operands' innermost byte strides:
//! * all operands contiguous and the output not aliasing an input: the function's
//!   `contiguous` slice body (vectorized by the compiler for the built-in ops, or a user's
//!   hand-written SIMD body);
//! * contiguous output with each input contiguous or a stride-0 scalar: a loop monomorphized
//!   for that combination (the scalar is hoisted into a register, so it still vectorizes);
//! * anything else: a general strided loop.

use super::config::{ExecConfig, Simd};
use super::exec::{prepare, Prepared};
use crate::iter::Plan;
use crate::tensor::{borrow_all, Element, Storage};
use crate::Result;
use std::marker::PhantomData;
use std::mem::{size_of, MaybeUninit};

/// A function of one input producing one output element, with an optional vectorized body.
pub trait Map1<A: Element, O: Element>: Sync {
    /// The element function.
    fn call(&self, a: A) -> O;
    /// Body for contiguous, non-aliasing operands (`out.len() == a.len()`); must write every
    /// `out[i]` as `call(a[i])` would. Override with a hand-vectorized version if wanted.
    #[inline(always)]
    fn contiguous(&self, out: &mut [MaybeUninit<O>], a: &[A]) {
        for (o, &x) in out.iter_mut().zip(a) {
            o.write(self.call(x));
        }
    }
}

/// A function of two inputs (see [`Map1`]).
pub trait Map2<A: Element, B: Element, O: Element>: Sync {
    /// The element function.
    fn call(&self, a: A, b: B) -> O;
    /// Body for contiguous, non-aliasing operands (all slices have the same length).
    #[inline(always)]
    fn contiguous(&self, out: &mut [MaybeUninit<O>], a: &[A], b: &[B]) {
        for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
            o.write(self.call(x, y));
        }
    }
}

/// A function of three inputs (see [`Map1`]).
pub trait Map3<A: Element, B: Element, C: Element, O: Element>: Sync {
    /// The element function.
    fn call(&self, a: A, b: B, c: C) -> O;
    /// Body for contiguous, non-aliasing operands (all slices have the same length).
    #[inline(always)]
    fn contiguous(&self, out: &mut [MaybeUninit<O>], a: &[A], b: &[B], c: &[C]) {
        for (((o, &x), &y), &z) in out.iter_mut().zip(a).zip(b).zip(c) {
            o.write(self.call(x, y, z));
        }
    }
}

impl<A: Element, O: Element, F: Fn(A) -> O + Sync> Map1<A, O> for F {
    #[inline(always)]
    fn call(&self, a: A) -> O {
        self(a)
    }
}
impl<A: Element, B: Element, O: Element, F: Fn(A, B) -> O + Sync> Map2<A, B, O> for F {
    #[inline(always)]
    fn call(&self, a: A, b: B) -> O {
        self(a, b)
    }
}
impl<A: Element, B: Element, C: Element, O: Element, F: Fn(A, B, C) -> O + Sync> Map3<A, B, C, O>
    for F
{
    #[inline(always)]
    fn call(&self, a: A, b: B, c: C) -> O {
        self(a, b, c)
    }
}

// ----- operand accessors (monomorphized per stride kind) -----

trait Src<T>: Copy {
    unsafe fn at(self, i: usize) -> T;
    /// The accessor of the elements from `i` on (a burst's start within its row).
    unsafe fn shift(self, i: usize) -> Self;
    /// Prefetches what the burst of elements `i..i + m` of this row of `n` elements will
    /// read [`PREFETCH_AHEAD`] bytes later ([`prefetch_range`]); nothing for a scalar.
    #[inline(always)]
    fn prefetch(self, _i: usize, _m: usize, _n: usize) {}
}
#[derive(Clone, Copy)]
struct Contig<T>(*const T);
impl<T: Copy> Src<T> for Contig<T> {
    #[inline(always)]
    unsafe fn at(self, i: usize) -> T {
        *self.0.add(i)
    }
    #[inline(always)]
    unsafe fn shift(self, i: usize) -> Self {
        Contig(self.0.add(i))
    }
    #[inline(always)]
    fn prefetch(self, i: usize, m: usize, n: usize) {
        let e = size_of::<T>();
        prefetch_range(self.0 as *const u8, i * e, (i + m) * e, n * e)
    }
}

/// How far ahead of a streamed row's reads its contiguous inputs are prefetched, in bytes
/// (read-heavy ops only: [`read_heavy`]; and the contiguous copy, [`stream_copy`]).
///
/// The hardware prefetchers alone leave a thread's sequential reads short of what the memory
/// system delivers: `prefetcht0` of every line 4 KiB ahead closed most of that gap (1 KiB
/// ahead gained half as much, 8 KiB no more; `prefetcht1` less, `prefetchnta` made reads
/// slower) and made the contiguous copy faster too. Which ops gain is in [`read_heavy`];
/// figures in `docs/perf/2026-11-kernels.md` (*Prefetch for read-heavy ops*).
const PREFETCH_AHEAD: usize = 4096;

/// Prefetches into L1 the 64-byte lines at byte offsets `[from, to)` + [`PREFETCH_AHEAD`]
/// of the `len` bytes at `base`, those inside them (a prefetch never faults, but lines
/// past the range would be fetched for nothing).
#[inline(always)]
fn prefetch_range(base: *const u8, from: usize, to: usize, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let mut at = from + PREFETCH_AHEAD;
        let stop = (to + PREFETCH_AHEAD).min(len);
        while at < stop {
            // SAFETY: `_mm_prefetch` is a hint: it reads nothing architecturally and never
            // faults; `at < len` keeps the address inside the caller's range anyway.
            unsafe {
                std::arch::x86_64::_mm_prefetch(
                    base.wrapping_add(at) as *const i8,
                    std::arch::x86_64::_MM_HINT_T0,
                )
            };
            at += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (base, from, to, len);
}

/// Whether an op reading `read` bytes and writing `written` bytes per element (the sums of
/// its inputs' and output's element sizes, known at compile time) prefetches its contiguous
/// inputs in streamed rows: when it reads more than twice what it writes.
///
/// Measured with and without the prefetch in one process: ops reading 8 or 2.25 bytes per
/// byte written (`eq` f32 -> bool, `where`) took 10-14% less time, ops reading twice what
/// they write (`add` f32/f64, `mul` i64) moved within a few percent either way (figures in
/// `docs/perf/2026-11-kernels.md`). Ops that read no more than twice what they write leave
/// their sequential reads to the hardware prefetchers, which keep up with them.
#[inline(always)]
const fn read_heavy(read: isize, written: isize) -> bool {
    read > 2 * written
}

#[derive(Clone, Copy)]
struct Bcast<T>(T);
impl<T: Copy> Src<T> for Bcast<T> {
    #[inline(always)]
    unsafe fn at(self, _i: usize) -> T {
        self.0
    }
    #[inline(always)]
    unsafe fn shift(self, _i: usize) -> Self {
        self
    }
}
struct Strided<T>(*const u8, isize, PhantomData<T>);
impl<T> Clone for Strided<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Strided<T> {}
impl<T: Copy> Src<T> for Strided<T> {
    #[inline(always)]
    unsafe fn at(self, i: usize) -> T {
        *(self.0.offset(i as isize * self.1) as *const T)
    }
    #[inline(always)]
    unsafe fn shift(self, i: usize) -> Self {
        Strided(self.0.offset(i as isize * self.1), self.1, PhantomData)
    }
}
trait Dst<T>: Copy {
    unsafe fn put(self, i: usize, v: T);
}
impl<T> Dst<T> for Strided<T> {
    #[inline(always)]
    unsafe fn put(self, i: usize, v: T) {
        (self.0.offset(i as isize * self.1) as *mut T).write(v)
    }
}
struct ContigDst<T>(*mut T);
impl<T> Clone for ContigDst<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for ContigDst<T> {}
impl<T> Dst<T> for ContigDst<T> {
    #[inline(always)]
    unsafe fn put(self, i: usize, v: T) {
        self.0.add(i).write(v)
    }
}

/// Binds `$v` to the best accessor for an input with byte stride `$s` and runs `$body`.
macro_rules! with_src {
    ($T:ty, $p:expr, $s:expr, |$v:ident| $body:expr) => {{
        let (p, s): (*mut u8, isize) = ($p, $s);
        if s == size_of::<$T>() as isize {
            let $v = Contig::<$T>(p as *const $T);
            $body
        } else if s == 0 {
            let $v = Bcast::<$T>(*(p as *const $T));
            $body
        } else {
            let $v = Strided::<$T>(p, s, PhantomData);
            $body
        }
    }};
}

/// [`with_src`] for an input the caller knows is contiguous (`$s` is its element size) or
/// a stride-0 scalar: the two accessors that keep a row's loop vectorized.
macro_rules! with_dense_src {
    ($T:ty, $p:expr, $s:expr, |$v:ident| $body:expr) => {{
        let (p, s): (*mut u8, isize) = ($p, $s);
        if s == 0 {
            let $v = Bcast::<$T>(*(p as *const $T));
            $body
        } else {
            let $v = Contig::<$T>(p as *const $T);
            $body
        }
    }};
}

/// Whether an input of element size `e`, byte stride `s` at `p` is read by a
/// [`with_dense_src`] accessor in a row whose contiguous output starts at `out`: contiguous
/// or a stride-0 scalar, and not the output itself (an output shares memory with an input
/// only element for element, Prepared invariant, so any other input is disjoint from it).
#[inline(always)]
fn dense_input(out: *mut u8, p: *mut u8, s: isize, e: isize) -> bool {
    (s == e || s == 0) && p != out
}

// SAFETY (all `run*` below): callers pass pointers/strides from a `Prepared` plan for `n`
// consecutive elements of the innermost dimension, so every `at(i)`/`put(i)` for `i < n` is an
// in-bounds, aligned element (Prepared invariant).
#[inline(always)]
unsafe fn run1<A: Element, O: Element, F: Map1<A, O>>(
    f: &F,
    d: impl Dst<O>,
    a: impl Src<A>,
    n: usize,
) {
    for i in 0..n {
        d.put(i, f.call(a.at(i)));
    }
}
#[inline(always)]
unsafe fn run2<A: Element, B: Element, O: Element, F: Map2<A, B, O>>(
    f: &F,
    d: impl Dst<O>,
    a: impl Src<A>,
    b: impl Src<B>,
    n: usize,
) {
    for i in 0..n {
        d.put(i, f.call(a.at(i), b.at(i)));
    }
}
#[inline(always)]
unsafe fn run3<A: Element, B: Element, C: Element, O: Element, F: Map3<A, B, C, O>>(
    f: &F,
    d: impl Dst<O>,
    a: impl Src<A>,
    b: impl Src<B>,
    c: impl Src<C>,
    n: usize,
) {
    for i in 0..n {
        d.put(i, f.call(a.at(i), b.at(i), c.at(i)));
    }
}

/// Inner loop of a unary map. SAFETY: see `run1`; an output that shares memory with the
/// input does so element-for-element (Prepared invariant), so `p[0] != p[1]` means disjoint.
#[inline(always)]
pub(crate) unsafe fn inner1<A: Element, O: Element, F: Map1<A, O>>(
    f: &F,
    p: &[*mut u8; 2],
    s: &[isize; 2],
    n: usize,
) {
    inner1_with(f, p, s, n, Burst::Plain)
}

/// [`inner1`], writing contiguous rows with non-temporal stores when `stream` (see
/// [`streamed`]).
///
/// The row closures are `#[inline(always)]`: left to the inliner, a closure whose element
/// function is large (`exp`, `gelu`: a few dozen instructions once inlined) stays a
/// separate function compiled for the baseline, so the AVX2 twin of [`streamed`] ran the
/// SSE2 body (found with `perf annotate`, `docs/perf/2026-11-28-vmath.md`).
#[inline(always)]
pub(crate) unsafe fn inner1_with<A: Element, O: Element, F: Map1<A, O>>(
    f: &F,
    p: &[*mut u8; 2],
    s: &[isize; 2],
    n: usize,
    burst: Burst,
) {
    let (eo, ea) = (size_of::<O>() as isize, size_of::<A>() as isize);
    let prefetch = burst != Burst::Plain && read_heavy(ea, eo);
    if s[0] == eo {
        let d = ContigDst(p[0] as *mut O);
        if s[1] == ea && p[0] != p[1] {
            let a = std::slice::from_raw_parts(p[1] as *const A, n);
            burst_rows(p[0] as *mut O, n, burst, #[inline(always)] |out, i| {
                if prefetch {
                    Contig(a.as_ptr()).prefetch(i, out.len(), n);
                }
                f.contiguous(out, &a[i..i + out.len()])
            });
            return;
        }
        if dense_input(p[0], p[1], s[1], ea) {
            with_dense_src!(A, p[1], s[1], |a| burst_rows(
                p[0] as *mut O,
                n,
                burst,
                #[inline(always)] |out, i| {
                    if prefetch {
                        a.prefetch(i, out.len(), n);
                    }
                    run1(f, ContigDst(out.as_mut_ptr() as *mut O), a.shift(i), out.len())
                }
            ));
            return;
        }
        with_src!(A, p[1], s[1], |a| run1(f, d, a, n))
    } else {
        run1(
            f,
            Strided::<O>(p[0], s[0], PhantomData),
            Strided::<A>(p[1], s[1], PhantomData),
            n,
        )
    }
}

/// Inner loop of a binary map (see [`inner1`]).
#[inline(always)]
#[allow(dead_code)] // the non-streaming entry point, kept beside `inner1` for other drivers
pub(crate) unsafe fn inner2<A: Element, B: Element, O: Element, F: Map2<A, B, O>>(
    f: &F,
    p: &[*mut u8; 3],
    s: &[isize; 3],
    n: usize,
) {
    inner2_with(f, p, s, n, Burst::Plain)
}

/// [`inner2`], writing contiguous rows with non-temporal stores when `stream`.
#[inline(always)]
pub(crate) unsafe fn inner2_with<A: Element, B: Element, O: Element, F: Map2<A, B, O>>(
    f: &F,
    p: &[*mut u8; 3],
    s: &[isize; 3],
    n: usize,
    burst: Burst,
) {
    let (eo, ea, eb) = (
        size_of::<O>() as isize,
        size_of::<A>() as isize,
        size_of::<B>() as isize,
    );
    let prefetch = burst != Burst::Plain && read_heavy(ea + eb, eo);
    if s[0] == eo {
        if s[1] == ea && s[2] == eb && p[0] != p[1] && p[0] != p[2] {
            let a = std::slice::from_raw_parts(p[1] as *const A, n);
            let b = std::slice::from_raw_parts(p[2] as *const B, n);
            burst_rows(p[0] as *mut O, n, burst, #[inline(always)] |out, i| {
                let m = out.len();
                if prefetch {
                    Contig(a.as_ptr()).prefetch(i, m, n);
                    Contig(b.as_ptr()).prefetch(i, m, n);
                }
                f.contiguous(out, &a[i..i + m], &b[i..i + m])
            });
            return;
        }
        if dense_input(p[0], p[1], s[1], ea) && dense_input(p[0], p[2], s[2], eb) {
            with_dense_src!(A, p[1], s[1], |a| with_dense_src!(B, p[2], s[2], |b| burst_rows(
                p[0] as *mut O,
                n,
                burst,
                #[inline(always)] |out, i| {
                    if prefetch {
                        a.prefetch(i, out.len(), n);
                        b.prefetch(i, out.len(), n);
                    }
                    let d = ContigDst(out.as_mut_ptr() as *mut O);
                    run2(f, d, a.shift(i), b.shift(i), out.len())
                }
            )));
            return;
        }
        let d = ContigDst(p[0] as *mut O);
        with_src!(A, p[1], s[1], |a| with_src!(B, p[2], s[2], |b| run2(
            f, d, a, b, n
        )))
    } else {
        let d = Strided::<O>(p[0], s[0], PhantomData);
        run2(
            f,
            d,
            Strided::<A>(p[1], s[1], PhantomData),
            Strided::<B>(p[2], s[2], PhantomData),
            n,
        )
    }
}

/// Inner loop of a ternary map (see [`inner1`]).
#[inline(always)]
#[allow(dead_code)] // the non-streaming entry point, kept beside `inner1` for other drivers
pub(crate) unsafe fn inner3<A: Element, B: Element, C: Element, O: Element, F: Map3<A, B, C, O>>(
    f: &F,
    p: &[*mut u8; 4],
    s: &[isize; 4],
    n: usize,
) {
    inner3_with(f, p, s, n, Burst::Plain)
}

/// [`inner3`], writing contiguous rows with non-temporal stores when `stream`.
#[inline(always)]
pub(crate) unsafe fn inner3_with<
    A: Element,
    B: Element,
    C: Element,
    O: Element,
    F: Map3<A, B, C, O>,
>(
    f: &F,
    p: &[*mut u8; 4],
    s: &[isize; 4],
    n: usize,
    burst: Burst,
) {
    let e = [
        size_of::<O>(),
        size_of::<A>(),
        size_of::<B>(),
        size_of::<C>(),
    ]
    .map(|x| x as isize);
    let prefetch = burst != Burst::Plain && read_heavy(e[1] + e[2] + e[3], e[0]);
    if s[0] == e[0] {
        if s[1] == e[1]
            && s[2] == e[2]
            && s[3] == e[3]
            && p[0] != p[1]
            && p[0] != p[2]
            && p[0] != p[3]
        {
            let a = std::slice::from_raw_parts(p[1] as *const A, n);
            let b = std::slice::from_raw_parts(p[2] as *const B, n);
            let c = std::slice::from_raw_parts(p[3] as *const C, n);
            burst_rows(p[0] as *mut O, n, burst, #[inline(always)] |out, i| {
                let m = out.len();
                if prefetch {
                    Contig(a.as_ptr()).prefetch(i, m, n);
                    Contig(b.as_ptr()).prefetch(i, m, n);
                    Contig(c.as_ptr()).prefetch(i, m, n);
                }
                f.contiguous(out, &a[i..i + m], &b[i..i + m], &c[i..i + m])
            });
            return;
        }
        if dense_input(p[0], p[1], s[1], e[1])
            && dense_input(p[0], p[2], s[2], e[2])
            && dense_input(p[0], p[3], s[3], e[3])
        {
            with_dense_src!(A, p[1], s[1], |a| with_dense_src!(B, p[2], s[2], |b| {
                with_dense_src!(C, p[3], s[3], |c| burst_rows(
                    p[0] as *mut O,
                    n,
                    burst,
                    #[inline(always)] |out, i| {
                        if prefetch {
                            a.prefetch(i, out.len(), n);
                            b.prefetch(i, out.len(), n);
                            c.prefetch(i, out.len(), n);
                        }
                        let d = ContigDst(out.as_mut_ptr() as *mut O);
                        run3(f, d, a.shift(i), b.shift(i), c.shift(i), out.len())
                    }
                ))
            }));
            return;
        }
        let d = ContigDst(p[0] as *mut O);
        with_src!(A, p[1], s[1], |a| with_src!(B, p[2], s[2], |b| with_src!(
            C,
            p[3],
            s[3],
            |c| run3(f, d, a, b, c, n)
        )))
    } else {
        let d = Strided::<O>(p[0], s[0], PhantomData);
        run3(
            f,
            d,
            Strided::<A>(p[1], s[1], PhantomData),
            Strided::<B>(p[2], s[2], PhantomData),
            Strided::<C>(p[3], s[3], PhantomData),
            n,
        )
    }
}

/// Output size (bytes) from which an op writes its contiguous rows with non-temporal stores:
/// twice a core's L2 here, so the output would not stay in the core's caches anyway.
const STREAM_MIN_BYTES: usize = 8 << 20;
/// Bytes computed into the on-stack buffer per non-temporal burst (8 cache lines).
const STREAM_CHUNK: usize = 512;
const _: () = assert!(STREAM_CHUNK.is_multiple_of(64), "a burst is whole cache lines");

/// Orders this thread's earlier non-temporal stores before its later stores (`sfence`); a
/// no-op off x86-64.
#[inline]
pub(crate) fn store_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `sfence` has no preconditions (SSE is part of the x86-64 baseline).
    #[allow(unused_unsafe)]
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// Whether an op writing `numel` elements of `O` streams its contiguous rows.
pub(crate) fn stream_output<O: Element>(numel: usize) -> bool {
    cfg!(target_arch = "x86_64") && numel.saturating_mul(size_of::<O>()) >= STREAM_MIN_BYTES
}

/// Copies `n` bytes from `src` to `dst` with non-temporal stores for the 64-byte-aligned
/// middle of the destination (AVX2 when the CPU reports it, else SSE2 `movntdq`), the
/// unaligned head and the tail with a plain copy. No fence: the caller issues
/// [`store_fence`] once per parallel range, before the results are published.
///
/// Why: a large copy with plain stores reads every destination line before writing it (read
/// for ownership), three memory streams for two. glibc's `memcpy` (the `copy_from_slice` of
/// the former bench reference and of the contiguous copy kernel) keeps plain stores for
/// per-thread chunks of tens of MiB; AVX2 loads with non-temporal stores were the fastest
/// of the copies probed (`rep movsb`, SSE2 non-temporal, PyTorch's `copy_` among them;
/// figures in `docs/perf/2026-11-kernels.md`, *The copy reference*).
///
/// SAFETY: `src` is valid for `n` byte reads, `dst` for `n` byte writes, and they do not
/// overlap.
#[inline]
pub(crate) unsafe fn stream_copy(dst: *mut u8, src: *const u8, n: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let head = ((64 - dst as usize % 64) % 64).min(n);
        let lines = (n - head) / 64;
        if lines > 0 {
            // SAFETY: the caller's contract; [head, head + 64·lines) is inside both ranges
            // and 64-byte aligned at the destination.
            // An empty head or tail skips its `memcpy` call (and the `vzeroupper` before it
            // in AVX2 callers): e.g. the fused evaluator's blocks of an aligned output.
            unsafe {
                if head > 0 {
                    std::ptr::copy_nonoverlapping(src, dst, head);
                }
                let (d, s) = (dst.add(head), src.add(head));
                // The source is prefetched ahead ([`PREFETCH_AHEAD`]) up to its last line.
                if std::arch::is_x86_feature_detected!("avx2") {
                    stream_lines_avx2(d, s, lines, 64 * lines);
                } else {
                    stream_lines_sse2(d, s, lines, 64 * lines);
                }
                let done = head + 64 * lines;
                if done < n {
                    std::ptr::copy_nonoverlapping(src.add(done), dst.add(done), n - done);
                }
            }
            return;
        }
    }
    // SAFETY: the caller's contract.
    unsafe { std::ptr::copy_nonoverlapping(src, dst, n) };
}

/// `lines` 64-byte lines from `s` to the 64-byte-aligned `d`, two 32-byte non-temporal
/// stores each; the first `prefetch` bytes of `s` are prefetched [`PREFETCH_AHEAD`] bytes
/// ahead of the reads (0 when `s` is a buffer in L1).
///
/// SAFETY: the CPU has AVX2; `s` readable and `d` writable for `64·lines` bytes, disjoint.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn stream_lines_avx2(d: *mut u8, s: *const u8, lines: usize, prefetch: usize) {
    use std::arch::x86_64::*;
    for k in 0..lines {
        prefetch_range(s, 64 * k, 64 * k + 64, prefetch);
        // SAFETY: the caller's contract (line k is inside both ranges, `d` aligned).
        unsafe {
            let (s, d) = (
                s.add(64 * k) as *const __m256i,
                d.add(64 * k) as *mut __m256i,
            );
            let (a, b) = (_mm256_loadu_si256(s), _mm256_loadu_si256(s.add(1)));
            _mm256_stream_si256(d, a);
            _mm256_stream_si256(d.add(1), b);
        }
    }
}

/// [`stream_lines_avx2`] with SSE2 (x86-64 baseline): four 16-byte stores per line.
///
/// SAFETY: `s` readable and `d` writable for `64·lines` bytes, disjoint, `d` 64-byte aligned.
#[cfg(target_arch = "x86_64")]
unsafe fn stream_lines_sse2(d: *mut u8, s: *const u8, lines: usize, prefetch: usize) {
    use std::arch::x86_64::*;
    for k in 0..4 * lines {
        if k % 4 == 0 {
            prefetch_range(s, 16 * k, 16 * k + 64, prefetch);
        }
        // SAFETY: the caller's contract.
        unsafe {
            let v = _mm_loadu_si128((s as *const __m128i).add(k));
            _mm_stream_si128((d as *mut __m128i).add(k), v);
        }
    }
}

/// The contiguous copy `dst ← src` of equal-length slices, split into one chunk per thread
/// of the current rayon pool; chunks of at least the streaming size (8 MiB of output, as for
/// every op) are written with `stream_copy`, smaller ones with `copy_from_slice`. This is
/// the bench's physical reference (`memcpy_64MiB`) and the fastest contiguous copy measured
/// here (see `stream_copy`).
pub fn parallel_copy<T: Element>(dst: &mut [T], src: &[T]) -> Result<()> {
    if dst.len() != src.len() {
        return Err(crate::Error::invalid(format!(
            "parallel_copy of {} elements into {}",
            src.len(),
            dst.len()
        )));
    }
    use rayon::prelude::*;
    let stream = stream_output::<T>(dst.len());
    let chunk = src.len().div_ceil(rayon::current_num_threads()).max(1);
    dst.par_chunks_mut(chunk)
        .zip(src.par_chunks(chunk))
        .for_each(|(d, s)| {
            if stream {
                // SAFETY: two slices of equal length (zip of equal chunks); `&mut` and `&`
                // borrows cannot overlap.
                unsafe {
                    stream_copy(
                        d.as_mut_ptr() as *mut u8,
                        s.as_ptr() as *const u8,
                        std::mem::size_of_val(s),
                    )
                };
                store_fence();
            } else {
                d.copy_from_slice(s);
            }
        });
    Ok(())
}

/// Writes the `n` contiguous output elements at `out` through `body(chunk, start)`, which must
/// initialize every element of `chunk` with output elements `start..start + chunk.len()`.
///
/// With `stream` (x86-64), the row is cut at 64-byte boundaries: the unaligned head and the
/// tail are written in place, the aligned middle is computed [`STREAM_CHUNK`] bytes at a time
/// into a buffer in L1 and copied out with non-temporal (`movntdq`) stores, which skip the read
/// for ownership of the output lines a normal store pays (a fourth memory stream for a binary
/// op). The caller issues [`store_fence`] at the end of each parallel range (not per row: a
/// fence waits for the write-combining buffers to drain, which per 1 KiB row of `add_bias_16M`
/// would cost more than the stores save), ordering those stores before the rayon join that
/// publishes the output. Without `stream`, one call over the whole row.
///
/// The copy-out of a burst is the aligned line loop itself (`stream_lines_avx2` when `avx2`,
/// else `stream_lines_sse2`), inlined into the burst loop: the destination is 64-byte
/// aligned and a burst is whole lines, so [`stream_copy`]'s head and tail (two `memcpy`
/// calls of 0 bytes, each behind a `vzeroupper`) and its CPU-feature check are not paid per
/// 512-byte burst (measured: `docs/perf/2026-11-kernels.md`).
///
/// SAFETY: `out[..n]` is valid for writes, aligned for `O`, and not read by `body`'s inputs;
/// `avx2` only when the CPU has AVX2.
#[inline(always)]
pub(crate) unsafe fn streamed<O: Element>(
    out: *mut O,
    n: usize,
    stream: bool,
    avx2: bool,
    mut body: impl FnMut(&mut [MaybeUninit<O>], usize),
) {
    let slice = |at: usize, len: usize| {
        // SAFETY: at + len <= n (every caller below), inside the caller's row.
        unsafe { std::slice::from_raw_parts_mut(out.add(at) as *mut MaybeUninit<O>, len) }
    };
    #[cfg(target_arch = "x86_64")]
    if stream && STREAM_CHUNK.is_multiple_of(size_of::<O>()) {
        let eo = size_of::<O>();
        let per = STREAM_CHUNK / eo;
        // `out` is aligned to `eo`, which divides 64, so the head is a whole number of elements
        let head = ((64 - out as usize % 64) % 64 / eo).min(n);
        if n - head >= per {
            #[repr(align(64))]
            struct Buf([MaybeUninit<u8>; STREAM_CHUNK]);
            let mut buf = Buf([MaybeUninit::uninit(); STREAM_CHUNK]);
            body(slice(0, head), 0);
            let mut i = head;
            while i + per <= n {
                let chunk =
                    std::slice::from_raw_parts_mut(buf.0.as_mut_ptr() as *mut MaybeUninit<O>, per);
                body(chunk, i);
                // SAFETY: `body` initialized all `per · eo = STREAM_CHUNK` buffer bytes; the
                // destination out[i..i + per] is inside the row, 64-byte aligned (head), and
                // not the buffer; `STREAM_CHUNK` is whole lines; AVX2 only when `avx2` (the
                // caller's contract).
                let (d, b) = (out.add(i) as *mut u8, buf.0.as_ptr() as *const u8);
                if avx2 {
                    stream_lines_avx2(d, b, STREAM_CHUNK / 64, 0);
                } else {
                    stream_lines_sse2(d, b, STREAM_CHUNK / 64, 0);
                }
                i += per;
            }
            body(slice(i, n - i), i);
            return;
        }
    }
    let _ = (stream, avx2);
    body(slice(0, n), 0);
}

/// How an op writes its contiguous rows (chosen once per call, see [`Burst::for_output`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Burst {
    /// In place, plain stores (small outputs, or off x86-64).
    Plain,
    /// Bursts through [`streamed`], the element loops compiled for the baseline (SSE2).
    Stream,
    /// Bursts through [`streamed`] inside an AVX2 `#[target_feature]` twin: the element
    /// loops of the built-in ops run 8 f32 (4 f64, 32 u8) per instruction and the burst
    /// copy-out inlines the AVX2 streaming loop. Only when the CPU reports AVX2.
    StreamAvx2,
    /// Bursts through [`streamed`] inside an AVX-512 (F, DQ, VL) twin: for 64-bit integer
    /// outputs only, whose `mul` has no AVX2 form (LLVM builds it from three `vpmuludq`;
    /// AVX-512 DQ has `vpmullq`). Only when the CPU reports all three features.
    ///
    /// Other element types keep the AVX2 twin: their loops have AVX2 forms and run at the
    /// copy's speed already (figures in `docs/perf/2026-11-kernels.md`).
    StreamAvx512,
}

impl Burst {
    /// The burst mode of an op writing `numel` elements of `O` under `simd`: streamed from
    /// [`STREAM_MIN_BYTES`] of output ([`stream_output`]), with AVX2 when `simd` is
    /// [`Simd::Auto`] and the CPU reports it.
    pub(crate) fn for_output<O: Element>(numel: usize, simd: Simd) -> Burst {
        if !stream_output::<O>(numel) {
            return Burst::Plain;
        }
        #[cfg(target_arch = "x86_64")]
        if simd == Simd::Auto {
            use std::arch::is_x86_feature_detected as has;
            if O::DTYPE == crate::dtype::DType::I64
                && has!("avx512f")
                && has!("avx512dq")
                && has!("avx512vl")
            {
                return Burst::StreamAvx512;
            }
            if has!("avx2") {
                return Burst::StreamAvx2;
            }
        }
        let _ = simd;
        Burst::Stream
    }
}

/// [`streamed`] under `burst`: in place for [`Burst::Plain`], through the AVX2 twin for
/// [`Burst::StreamAvx2`].
///
/// SAFETY: as [`streamed`]; [`Burst::StreamAvx2`] only when the CPU reports AVX2.
#[inline(always)]
unsafe fn burst_rows<O: Element, B: FnMut(&mut [MaybeUninit<O>], usize)>(
    out: *mut O,
    n: usize,
    burst: Burst,
    body: B,
) {
    #[cfg(target_arch = "x86_64")]
    match burst {
        // SAFETY: the caller's contract (AVX2 present, row valid).
        Burst::StreamAvx2 => return unsafe { streamed_avx2(out, n, body) },
        // SAFETY: the caller's contract (AVX-512 F, DQ and VL present, row valid).
        Burst::StreamAvx512 => return unsafe { streamed_avx512(out, n, body) },
        Burst::Plain | Burst::Stream => {}
    }
    // SAFETY: the caller's contract.
    unsafe { streamed(out, n, burst != Burst::Plain, false, body) }
}

/// [`streamed`] compiled for AVX2: `streamed`, `body` and the element functions it calls
/// (`#[inline]`) are inlined here, so the compiler vectorizes them 256 bits wide.
///
/// SAFETY: the CPU has AVX2; otherwise as [`streamed`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn streamed_avx2<O: Element, B: FnMut(&mut [MaybeUninit<O>], usize)>(
    out: *mut O,
    n: usize,
    body: B,
) {
    // SAFETY: the caller's contract (the CPU has AVX2).
    unsafe { streamed(out, n, true, true, body) }
}

/// [`streamed`] compiled for AVX-512 F, DQ and VL (and AVX2, which they imply on every CPU
/// that has them): as [`streamed_avx2`], with `vpmullq` for 64-bit multiplies.
///
/// SAFETY: the CPU has AVX-512 F, DQ and VL, and AVX2; otherwise as [`streamed`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx2")]
unsafe fn streamed_avx512<O: Element, B: FnMut(&mut [MaybeUninit<O>], usize)>(
    out: *mut O,
    n: usize,
    body: B,
) {
    // SAFETY: the caller's contract (the CPU has AVX-512 F/DQ/VL and AVX2).
    unsafe { streamed(out, n, true, true, body) }
}

/// Smallest reuse factor (iteration elements per distinct element) for which a strided
/// input is re-laid out (see [`relayout_input`]).
const RELAYOUT_MIN_REUSE: usize = 4;
/// Largest re-laid-out copy, in bytes.
const RELAYOUT_MAX_BYTES: usize = 64 << 20;

/// A strided input read many times (a broadcast operand whose innermost iteration stride is
/// neither 0 nor one element, e.g. the NCHW `[c, h, w]` operand of a channels-last add) is
/// copied once into a buffer laid out densely in iteration order over its non-broadcast dims,
/// and the plan is pointed at the buffer: every row of the main loop then reads it
/// contiguously (vectorized body) instead of one element per stride. Returns the buffer, which
/// must outlive every use of `p`; `None` (plan unchanged) when the input is not such an operand:
/// the work is below the parallel threshold, the output is not contiguous along dim 0, the
/// input is contiguous or broadcast there, it is reused fewer than [`RELAYOUT_MIN_REUSE`]
/// times, or the copy would exceed [`RELAYOUT_MAX_BYTES`].
///
/// The caller has borrowed the storages (outputs exclusively); `p` is a validated plan.
pub(crate) fn relayout_input<T: Element, const N: usize>(
    p: &mut Prepared<N>,
    k: usize,
    out_elem: usize,
    cfg: &ExecConfig,
) -> Option<Vec<MaybeUninit<T>>> {
    let es = size_of::<T>() as isize;
    let s0 = p.strides[0][k];
    if p.numel < 2 * cfg.grain() || p.strides[0][0] != out_elem as isize || s0 == 0 || s0 == es {
        return None;
    }
    let distinct: usize = p
        .shape
        .iter()
        .zip(&p.strides)
        .filter(|(_, st)| st[k] != 0)
        .map(|(&n, _)| n)
        .product();
    if distinct == 0
        || p.numel / distinct < RELAYOUT_MIN_REUSE
        || distinct.checked_mul(size_of::<T>())? > RELAYOUT_MAX_BYTES
    {
        return None;
    }
    let mut buf: Vec<MaybeUninit<T>> = Vec::with_capacity(distinct);
    // SAFETY: MaybeUninit needs no initialization; every element is written by the copy below.
    unsafe { buf.set_len(distinct) };
    let mut sub = Prepared::<2> {
        shape: Default::default(),
        strides: Default::default(),
        base: [buf.as_mut_ptr() as *mut u8, p.base[k]],
        numel: distinct,
    };
    let mut dense = es;
    let mut new_strides = p.strides.clone();
    for (d, (&n, st)) in p.shape.iter().zip(&p.strides).enumerate() {
        if st[k] == 0 {
            continue;
        }
        sub.shape.push(n);
        sub.strides.push([dense, st[k]]);
        new_strides[d][k] = dense;
        dense *= n as isize;
    }
    // SAFETY (the sub-plan's invariant): the source indices are the plan's indices with 0 on
    // the dims where the input does not move, so they are in bounds (p's invariant); the buffer
    // indices cover exactly `distinct` elements densely; the buffer is fresh, so the output
    // aliases nothing.
    super::copy::copy_prepared::<T, T>(sub, cfg);
    // The buffer holds, at the dense offset of every index, the element the input had there,
    // so the plan reads the same values from in-bounds, aligned buffer elements.
    p.base[k] = buf.as_mut_ptr() as *mut u8;
    p.strides = new_strides;
    p.coalesce();
    Some(buf)
}

pub(crate) fn run_prepared1<A: Element, O: Element, F: Map1<A, O>>(
    p: &Prepared<2>,
    f: &F,
    cfg: &ExecConfig,
) {
    // SAFETY: `p` is a validated plan (Prepared invariant) and the storages are borrowed
    // (outputs exclusively) by the caller for the whole call.
    p.run(
        cfg,
        &|ptr: &[*mut u8; 2], s: &[isize; 2], n: usize| unsafe { inner1(f, ptr, s, n) },
    );
}

/// Executes a unary element function over a plan: `out[i] = f(a[i])`.
///
/// The plan's operands are `[out, a]`; `out`/`a` provide the memory (offsets and strides come
/// from the plan). The plan is validated (bounds, overlap) before any access.
pub fn execute_map1<A: Element, O: Element, F: Map1<A, O>>(
    plan: &Plan<i64>,
    out: &Storage<O>,
    a: &Storage<A>,
    f: &F,
    cfg: &ExecConfig,
) -> Result<()> {
    let raws = [out.raw(), a.raw()];
    let p = prepare(plan, &raws, 1)?;
    let _g = borrow_all(&raws, 1)?;
    let burst = Burst::for_output::<O>(p.numel, cfg.simd);
    let stream = burst != Burst::Plain;
    // SAFETY: as in `run_prepared1`.
    p.run_then(
        cfg,
        &|ptr: &[*mut u8; 2], s: &[isize; 2], n: usize| unsafe {
            inner1_with(f, ptr, s, n, burst)
        },
        &|| {
            if stream {
                store_fence()
            }
        },
    );
    Ok(())
}

/// Executes a binary element function over a plan with operands `[out, a, b]`
/// (see [`execute_map1`]).
pub fn execute_map2<A: Element, B: Element, O: Element, F: Map2<A, B, O>>(
    plan: &Plan<i64>,
    out: &Storage<O>,
    a: &Storage<A>,
    b: &Storage<B>,
    f: &F,
    cfg: &ExecConfig,
) -> Result<()> {
    let raws = [out.raw(), a.raw(), b.raw()];
    let mut p = prepare(plan, &raws, 1)?;
    let _g = borrow_all(&raws, 1)?;
    let eo = size_of::<O>();
    let _ra = relayout_input::<A, 3>(&mut p, 1, eo, cfg);
    let _rb = relayout_input::<B, 3>(&mut p, 2, eo, cfg);
    let burst = Burst::for_output::<O>(p.numel, cfg.simd);
    let stream = burst != Burst::Plain;
    // SAFETY: as in `run_prepared1`.
    p.run_then(
        cfg,
        &|ptr: &[*mut u8; 3], s: &[isize; 3], n: usize| unsafe {
            inner2_with(f, ptr, s, n, burst)
        },
        &|| {
            if stream {
                store_fence()
            }
        },
    );
    Ok(())
}

/// Executes a ternary element function over a plan with operands `[out, a, b, c]`
/// (see [`execute_map1`]).
pub fn execute_map3<A: Element, B: Element, C: Element, O: Element, F: Map3<A, B, C, O>>(
    plan: &Plan<i64>,
    out: &Storage<O>,
    a: &Storage<A>,
    b: &Storage<B>,
    c: &Storage<C>,
    f: &F,
    cfg: &ExecConfig,
) -> Result<()> {
    let raws = [out.raw(), a.raw(), b.raw(), c.raw()];
    let mut p = prepare(plan, &raws, 1)?;
    let _g = borrow_all(&raws, 1)?;
    let eo = size_of::<O>();
    let _ra = relayout_input::<A, 4>(&mut p, 1, eo, cfg);
    let _rb = relayout_input::<B, 4>(&mut p, 2, eo, cfg);
    let _rc = relayout_input::<C, 4>(&mut p, 3, eo, cfg);
    let burst = Burst::for_output::<O>(p.numel, cfg.simd);
    let stream = burst != Burst::Plain;
    // SAFETY: as in `run_prepared1`.
    p.run_then(
        cfg,
        &|ptr: &[*mut u8; 4], s: &[isize; 4], n: usize| unsafe {
            inner3_with(f, ptr, s, n, burst)
        },
        &|| {
            if stream {
                store_fence()
            }
        },
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::NumElement;

    /// The streamed (non-temporal) contiguous rows against the element function: every
    /// element size, output misalignments 0..64 bytes and lengths around the 64-byte head and
    /// the burst size, so head, bursts and tail are all exercised (on x86-64; elsewhere this
    /// checks the plain body).
    fn check_streamed<T: NumElement>(burst: Burst) {
        let f = |a: T, b: T| a.mul(b).add(a);
        let g = |a: T, b: T, c: T| a.add(b).mul(c);
        let h = |a: T| a.mul(a).add(T::ONE);
        let e = size_of::<T>();
        let per = STREAM_CHUNK / e;
        for skip in 0..64 / e {
            for n in [0, 1, 7, per - 1, per, per + 1, 64 / e + per, 3 * per + 5] {
                let a: Vec<T> = (0..n).map(|i| T::cast_from(i as i64 % 13 - 6)).collect();
                let b: Vec<T> = (0..n).map(|i| T::cast_from(i as i64 % 7 + 1)).collect();
                let mut out = vec![T::ZERO; n + skip + 1];
                let o = out[skip..].as_mut_ptr() as *mut u8;
                let ps = |x: &Vec<T>| x.as_ptr() as *mut u8;
                let st = [e as isize; 4];
                let want2: Vec<T> = (0..n).map(|i| f(a[i], b[i])).collect();
                // SAFETY: contiguous, disjoint buffers of n elements each.
                unsafe { inner2_with(&f, &[o, ps(&a), ps(&b)], &[st[0]; 3], n, burst) };
                assert_eq!(&out[skip..skip + n], &want2[..], "map2 n {n} skip {skip}");
                let want3: Vec<T> = (0..n).map(|i| g(a[i], b[i], a[i])).collect();
                // SAFETY: as above.
                unsafe { inner3_with(&g, &[o, ps(&a), ps(&b), ps(&a)], &st, n, burst) };
                assert_eq!(&out[skip..skip + n], &want3[..], "map3 n {n} skip {skip}");
                let want1: Vec<T> = (0..n).map(|i| h(a[i])).collect();
                // SAFETY: as above.
                unsafe { inner1_with(&h, &[o, ps(&a)], &[st[0]; 2], n, burst) };
                store_fence();
                assert_eq!(&out[skip..skip + n], &want1[..], "map1 n {n} skip {skip}");
                // A stride-0 scalar beside contiguous operands: the same bursts, the scalar
                // held in a register (`with_dense_src`).
                let s0 = [e as isize, e as isize, 0, e as isize];
                let want2: Vec<T> = (0..n).map(|i| f(a[i], b[0])).collect();
                if n > 0 {
                    // SAFETY: as above; the scalar is b[0].
                    unsafe { inner2_with(&f, &[o, ps(&a), ps(&b)], &[e as isize, e as isize, 0], n, burst) };
                    assert_eq!(&out[skip..skip + n], &want2[..], "map2 bcast n {n} skip {skip}");
                    let want3: Vec<T> = (0..n).map(|i| g(a[i], b[0], a[i])).collect();
                    // SAFETY: as above.
                    unsafe { inner3_with(&g, &[o, ps(&a), ps(&b), ps(&a)], &s0, n, burst) };
                    assert_eq!(&out[skip..skip + n], &want3[..], "map3 bcast n {n} skip {skip}");
                    let want1: Vec<T> = vec![h(b[0]); n];
                    // SAFETY: as above.
                    unsafe { inner1_with(&h, &[o, ps(&b)], &[e as isize, 0], n, burst) };
                    store_fence();
                    assert_eq!(&out[skip..skip + n], &want1[..], "map1 bcast n {n} skip {skip}");
                }
                assert_eq!(out[skip + n], T::ZERO, "wrote past the row");
                assert!(
                    out[..skip].iter().all(|&x| x == T::ZERO),
                    "wrote before the row"
                );
            }
        }
    }

    /// `stream_copy` against the source bytes: destination and source misalignments 0..64
    /// and lengths around the 64-byte head and whole lines (head, streamed lines and tail
    /// all exercised), nothing written outside the range.
    #[test]
    fn stream_copy_copies_exactly_the_range() {
        let src: Vec<u8> = (0..1024u32).map(|i| (i * 7 + 3) as u8).collect();
        for d_off in 0..64 {
            for s_off in [0, 1, 13, 32, 63] {
                for n in [0, 1, 63, 64, 65, 127, 128, 200, 513] {
                    let mut dst = vec![0xAAu8; 700];
                    // SAFETY: both ranges are inside their vectors, which are distinct.
                    unsafe { stream_copy(dst.as_mut_ptr().add(d_off), src.as_ptr().add(s_off), n) };
                    store_fence();
                    assert_eq!(
                        &dst[d_off..d_off + n],
                        &src[s_off..s_off + n],
                        "{d_off} {s_off} {n}"
                    );
                    assert!(
                        dst[..d_off].iter().all(|&b| b == 0xAA),
                        "before: {d_off} {n}"
                    );
                    assert!(
                        dst[d_off + n..].iter().all(|&b| b == 0xAA),
                        "after: {d_off} {n}"
                    );
                }
            }
        }
    }

    /// The SSE2 line copy (taken on CPUs without AVX2) against the source.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn sse2_stream_lines_copy_the_lines() {
        #[repr(align(64))]
        struct Lines([u8; 320]);
        let src: Vec<u8> = (0..400u32).map(|i| (i * 5 + 1) as u8).collect();
        for s_off in [0, 3, 16] {
            for lines in 0..=5 {
                let mut dst = Lines([0xAA; 320]);
                // SAFETY: `lines · 64 <= 320` bytes inside both; `dst` is 64-byte aligned.
                unsafe {
                    stream_lines_sse2(dst.0.as_mut_ptr(), src.as_ptr().add(s_off), lines, 64 * lines)
                };
                store_fence();
                assert_eq!(&dst.0[..64 * lines], &src[s_off..s_off + 64 * lines]);
                assert!(dst.0[64 * lines..].iter().all(|&b| b == 0xAA));
            }
        }
    }

    /// `parallel_copy` at 1-3 threads, below and above the streaming size (then through
    /// `stream_copy`, ragged per-thread chunks included), and a clear error on a length
    /// mismatch.
    #[test]
    fn parallel_copy_matches_the_source() {
        for threads in 1..=3 {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            for n in [0usize, 5, 1000, (STREAM_MIN_BYTES / 4) + 37] {
                let src: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 3.0).collect();
                let mut dst = vec![f32::NAN; n];
                pool.install(|| parallel_copy(&mut dst, &src)).unwrap();
                assert!(dst == src, "{threads} threads, {n} elements");
            }
            let mut short = vec![0u8; 3];
            assert!(pool
                .install(|| parallel_copy(&mut short, &[1u8; 4]))
                .is_err());
        }
    }

    /// Read-heavy streamed rows ([`read_heavy`]: f64 compared into bools, and a `where`
    /// of a bool and two f64, which prefetch their inputs): rows long enough that the
    /// prefetches reach the end of the inputs, contiguous and with a stride-0 scalar.
    fn check_read_heavy(burst: Burst) {
        assert!(read_heavy(16, 1) && read_heavy(17, 8) && !read_heavy(8, 4));
        let lt = |a: f64, b: f64| a < b;
        let pick = |c: bool, a: f64, b: f64| if c { a } else { b };
        let (e, per) = (size_of::<f64>(), STREAM_CHUNK);
        for skip in [0, 5, 63] {
            for n in [per - 1, 3 * per + 7, PREFETCH_AHEAD / e + 2 * per + 3] {
                let a: Vec<f64> = (0..n).map(|i| (i % 11) as f64).collect();
                let b: Vec<f64> = (0..n).map(|i| (i % 7) as f64 + 2.0).collect();
                let c: Vec<bool> = (0..n).map(|i| i % 3 == 0).collect();
                let mut out = vec![false; n + skip];
                let o = out[skip..].as_mut_ptr() as *mut u8;
                let (pa, pb) = (a.as_ptr() as *mut u8, b.as_ptr() as *mut u8);
                // SAFETY: contiguous, disjoint buffers of n elements each.
                unsafe { inner2_with(&lt, &[o, pa, pb], &[1, 8, 8], n, burst) };
                store_fence();
                let want: Vec<bool> = (0..n).map(|i| a[i] < b[i]).collect();
                assert_eq!(&out[skip..], &want[..], "lt n {n} skip {skip}");
                // SAFETY: as above; the scalar is b[0].
                unsafe { inner2_with(&lt, &[o, pa, pb], &[1, 8, 0], n, burst) };
                store_fence();
                let want: Vec<bool> = (0..n).map(|i| a[i] < b[0]).collect();
                assert_eq!(&out[skip..], &want[..], "lt bcast n {n} skip {skip}");
                let mut picked = vec![0f64; n + skip];
                let o = picked[skip..].as_mut_ptr() as *mut u8;
                let pc = c.as_ptr() as *mut u8;
                // SAFETY: as above.
                unsafe { inner3_with(&pick, &[o, pc, pa, pb], &[8, 1, 8, 8], n, burst) };
                store_fence();
                let want: Vec<f64> = (0..n).map(|i| pick(c[i], a[i], b[i])).collect();
                assert_eq!(&picked[skip..], &want[..], "where n {n} skip {skip}");
            }
        }
    }

    #[test]
    fn streamed_rows_match_the_element_function() {
        // the AVX2 twin only where the CPU has it (`Burst::for_output`'s rule)
        let big = STREAM_MIN_BYTES;
        // and the AVX-512 twin of 64-bit integer outputs where the CPU has it
        let wide = Burst::for_output::<i64>(big, Simd::Auto);
        for burst in [Burst::Stream, Burst::for_output::<u8>(big, Simd::Auto), wide] {
            check_streamed::<u8>(burst);
            check_streamed::<i32>(burst);
            check_streamed::<f32>(burst);
            check_streamed::<i64>(burst);
            check_streamed::<f64>(burst);
            check_read_heavy(burst);
        }
        #[cfg(target_arch = "x86_64")]
        assert_eq!(Burst::for_output::<u8>(big, Simd::Baseline), Burst::Stream);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(Burst::for_output::<i64>(big, Simd::Baseline), Burst::Stream);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(
            wide == Burst::StreamAvx512,
            std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512dq")
                && std::arch::is_x86_feature_detected!("avx512vl")
        );
        assert_eq!(Burst::for_output::<u8>(big - 1, Simd::Auto), Burst::Plain);
    }
}
