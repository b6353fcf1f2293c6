//! Element functions and the inner (1-D) loops that apply them.
//!
//! Each inner loop is chosen per call from the operands' innermost byte strides:
//! * all operands contiguous and the output not aliasing an input: the function's
//!   `contiguous` slice body (vectorized by the compiler for the built-in ops, or a user's
//!   hand-written SIMD body);
//! * contiguous output with each input contiguous or a stride-0 scalar: a loop monomorphized
//!   for that combination (the scalar is hoisted into a register, so it still vectorizes);
//! * anything else: a general strided loop.

use super::config::ExecConfig;
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
}
#[derive(Clone, Copy)]
struct Contig<T>(*const T);
impl<T: Copy> Src<T> for Contig<T> {
    #[inline(always)]
    unsafe fn at(self, i: usize) -> T {
        *self.0.add(i)
    }
}
#[derive(Clone, Copy)]
struct Bcast<T>(T);
impl<T: Copy> Src<T> for Bcast<T> {
    #[inline(always)]
    unsafe fn at(self, _i: usize) -> T {
        self.0
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
    let (eo, ea) = (size_of::<O>() as isize, size_of::<A>() as isize);
    if s[0] == eo {
        let d = ContigDst(p[0] as *mut O);
        if s[1] == ea && p[0] != p[1] {
            let out = std::slice::from_raw_parts_mut(p[0] as *mut MaybeUninit<O>, n);
            let a = std::slice::from_raw_parts(p[1] as *const A, n);
            f.contiguous(out, a);
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
pub(crate) unsafe fn inner2<A: Element, B: Element, O: Element, F: Map2<A, B, O>>(
    f: &F,
    p: &[*mut u8; 3],
    s: &[isize; 3],
    n: usize,
) {
    let (eo, ea, eb) = (
        size_of::<O>() as isize,
        size_of::<A>() as isize,
        size_of::<B>() as isize,
    );
    if s[0] == eo {
        if s[1] == ea && s[2] == eb && p[0] != p[1] && p[0] != p[2] {
            let out = std::slice::from_raw_parts_mut(p[0] as *mut MaybeUninit<O>, n);
            let a = std::slice::from_raw_parts(p[1] as *const A, n);
            let b = std::slice::from_raw_parts(p[2] as *const B, n);
            f.contiguous(out, a, b);
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
pub(crate) unsafe fn inner3<A: Element, B: Element, C: Element, O: Element, F: Map3<A, B, C, O>>(
    f: &F,
    p: &[*mut u8; 4],
    s: &[isize; 4],
    n: usize,
) {
    let e = [
        size_of::<O>(),
        size_of::<A>(),
        size_of::<B>(),
        size_of::<C>(),
    ]
    .map(|x| x as isize);
    if s[0] == e[0] {
        if s[1] == e[1]
            && s[2] == e[2]
            && s[3] == e[3]
            && p[0] != p[1]
            && p[0] != p[2]
            && p[0] != p[3]
        {
            let out = std::slice::from_raw_parts_mut(p[0] as *mut MaybeUninit<O>, n);
            let a = std::slice::from_raw_parts(p[1] as *const A, n);
            let b = std::slice::from_raw_parts(p[2] as *const B, n);
            let c = std::slice::from_raw_parts(p[3] as *const C, n);
            f.contiguous(out, a, b, c);
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
    run_prepared1(&p, f, cfg);
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
    let p = prepare(plan, &raws, 1)?;
    let _g = borrow_all(&raws, 1)?;
    // SAFETY: as in `run_prepared1`.
    p.run(
        cfg,
        &|ptr: &[*mut u8; 3], s: &[isize; 3], n: usize| unsafe { inner2(f, ptr, s, n) },
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
    let p = prepare(plan, &raws, 1)?;
    let _g = borrow_all(&raws, 1)?;
    // SAFETY: as in `run_prepared1`.
    p.run(
        cfg,
        &|ptr: &[*mut u8; 4], s: &[isize; 4], n: usize| unsafe { inner3(f, ptr, s, n) },
    );
    Ok(())
}
