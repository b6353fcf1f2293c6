//! Element-level reducers: identity, step, combine and finish of every reduction, for
//! every element type where PyTorch defines it.
//!
//! A [`Reducer`] folds values into an accumulator (`step`), merges two accumulators of
//! adjacent ranges (`combine`, earlier range first), and turns the final accumulator into
//! the result element (`finish`, given the number of values). The kernels decide the order:
//! lanes, pairwise trees, per-thread partials; every reducer here gives the same answer for
//! any such order up to floating-point rounding (and exactly for `argmax`/`argmin`, whose
//! ties are broken by index, not by order).

use super::table::ReductionOp;
use crate::tensor::{Element, FloatElement, NumElement, Scalar};

/// Element types reductions accept: how they widen for `sum`/`prod`, what `all`/`any`
/// return for them, and their ordering (NaN-aware for floats).
pub trait ReduceElement: Element {
    /// `sum`/`prod` accumulator and result type: the float itself, `int64` otherwise.
    type Wide: NumElement;
    /// `all`/`any` result type: `uint8` for `uint8`, `bool` otherwise.
    type Logical: Element;
    /// `sum`/`mean` accumulator: `f64` for both floats (a float32 sum is then correctly
    /// rounded up to `n · 2^-53` relative, never less accurate than PyTorch's float32
    /// cascade), `int64` otherwise.
    type SumAcc: NumElement;
    /// Widens for `sum`/`prod` (`bool` is 0 or 1).
    fn widen(self) -> Self::Wide;
    /// Widens for the `sum` accumulator.
    fn to_sum_acc(self) -> Self::SumAcc;
    /// Rounds a `sum` accumulator to the result type.
    fn from_sum_acc(acc: Self::SumAcc) -> Self::Wide;
    /// `x != 0`.
    fn truthy(self) -> bool;
    /// A truth value as the `all`/`any` result type.
    fn logical(b: bool) -> Self::Logical;
    /// NaN (false for non-floats).
    fn is_nan(self) -> bool;
    /// `self > other` (false if either is NaN).
    fn gt(self, other: Self) -> bool;
    /// `self < other` (false if either is NaN).
    fn lt(self, other: Self) -> bool;
    /// The lowest value (`amax` identity).
    fn lowest() -> Self;
    /// The highest value (`amin` identity).
    fn highest() -> Self;
    /// Kernel hook: the `sum` accumulator of the contiguous run `xs`, computed with AVX2, or
    /// `None` (the default) where no hand-written fold exists and the kernels' generic lanes
    /// are used.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn sum_run_avx2(xs: &[Self]) -> Option<Self::SumAcc> {
        let _ = xs;
        None
    }

    /// Kernel hook: the `sum` accumulators of four contiguous runs of equal length, folded
    /// together with AVX2, or `None` (the default): see [`Reducer::fold_runs4_avx2`].
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA; the runs have the same length.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn sum_runs4_avx2(rows: [&[Self]; 4]) -> Option<[Self::SumAcc; 4]> {
        let _ = rows;
        None
    }

    /// Kernel hook: `acc[j]` plus the `j`-th values of four rows (each at least
    /// `acc.len()` long), summed with AVX2; `false` (the default), having changed nothing,
    /// where no such fold exists: see [`Reducer::fold_rows4_into_avx2`].
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn sum_rows4_into_avx2(acc: &mut [Self::SumAcc], rows: [&[Self]; 4]) -> bool {
        let _ = (acc, rows);
        false
    }

    /// Kernel hook: the maximum (`max`) or minimum of the contiguous run `xs` computed with
    /// AVX2 when it is neither NaN nor zero, else `None` (also the default: no such fold),
    /// and the kernels fold the run with their generic lanes, so a result never depends on
    /// which fold ran.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn extreme_run_avx2(xs: &[Self], max: bool) -> Option<Self> {
        let _ = (xs, max);
        None
    }
}

macro_rules! reduce_int {
    ($t:ty, $logical:ty) => {
        impl ReduceElement for $t {
            type Wide = i64;
            type Logical = $logical;
            type SumAcc = i64;
            #[inline(always)]
            fn widen(self) -> i64 {
                self as i64
            }
            #[inline(always)]
            fn to_sum_acc(self) -> i64 {
                self as i64
            }
            #[inline(always)]
            fn from_sum_acc(acc: i64) -> i64 {
                acc
            }
            #[inline(always)]
            fn truthy(self) -> bool {
                self != 0
            }
            #[inline(always)]
            fn logical(b: bool) -> $logical {
                <$logical>::from(b)
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                false
            }
            #[inline(always)]
            fn gt(self, other: Self) -> bool {
                self > other
            }
            #[inline(always)]
            fn lt(self, other: Self) -> bool {
                self < other
            }
            fn lowest() -> Self {
                <$t>::MIN
            }
            fn highest() -> Self {
                <$t>::MAX
            }
        }
    };
}
reduce_int!(u8, u8);
reduce_int!(i32, bool);
reduce_int!(i64, bool);

macro_rules! reduce_float {
    ($t:ty, $extreme:path $(, $sum_avx2:path, $sum4_avx2:path, $rows4_avx2:path)?) => {
        impl ReduceElement for $t {
            type Wide = $t;
            type Logical = bool;
            type SumAcc = f64;
            #[inline(always)]
            fn widen(self) -> $t {
                self
            }
            #[inline(always)]
            fn to_sum_acc(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn from_sum_acc(acc: f64) -> $t {
                acc as $t
            }
            #[inline(always)]
            fn truthy(self) -> bool {
                self != 0.0
            }
            #[inline(always)]
            fn logical(b: bool) -> bool {
                b
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                self.is_nan()
            }
            #[inline(always)]
            fn gt(self, other: Self) -> bool {
                self > other
            }
            #[inline(always)]
            fn lt(self, other: Self) -> bool {
                self < other
            }
            fn lowest() -> Self {
                <$t>::NEG_INFINITY
            }
            fn highest() -> Self {
                <$t>::INFINITY
            }
            #[cfg(target_arch = "x86_64")]
            #[inline(always)]
            unsafe fn extreme_run_avx2(xs: &[Self], max: bool) -> Option<Self> {
                // SAFETY: the caller guarantees AVX2 and FMA.
                unsafe { $extreme(xs, max) }
            }
            $(
                #[cfg(target_arch = "x86_64")]
                #[inline(always)]
                unsafe fn sum_run_avx2(xs: &[Self]) -> Option<f64> {
                    // SAFETY: the caller guarantees AVX2 and FMA.
                    Some(unsafe { $sum_avx2(xs) })
                }
                #[cfg(target_arch = "x86_64")]
                #[inline(always)]
                unsafe fn sum_runs4_avx2(rows: [&[Self]; 4]) -> Option<[f64; 4]> {
                    // SAFETY: the caller guarantees AVX2, FMA and equal lengths.
                    Some(unsafe { $sum4_avx2(rows) })
                }
                #[cfg(target_arch = "x86_64")]
                #[inline(always)]
                unsafe fn sum_rows4_into_avx2(acc: &mut [f64], rows: [&[Self]; 4]) -> bool {
                    // SAFETY: the caller guarantees AVX2 and FMA and the rows' lengths.
                    unsafe { $rows4_avx2(acc, rows) };
                    true
                }
            )?
        }
    };
}
#[cfg(target_arch = "x86_64")]
reduce_float!(
    f32,
    super::simd::extreme_f32_avx2,
    super::simd::sum_f32_avx2,
    super::simd::sum4_f32_avx2,
    super::simd::sum_rows4_into_f32_avx2
);
#[cfg(target_arch = "x86_64")]
reduce_float!(f64, super::simd::extreme_f64_avx2);
#[cfg(not(target_arch = "x86_64"))]
reduce_float!(f32, unreachable);
#[cfg(not(target_arch = "x86_64"))]
reduce_float!(f64, unreachable);

impl ReduceElement for bool {
    type Wide = i64;
    type Logical = bool;
    type SumAcc = i64;
    #[inline(always)]
    fn widen(self) -> i64 {
        self as i64
    }
    #[inline(always)]
    fn to_sum_acc(self) -> i64 {
        self as i64
    }
    #[inline(always)]
    fn from_sum_acc(acc: i64) -> i64 {
        acc
    }
    #[inline(always)]
    fn truthy(self) -> bool {
        self
    }
    #[inline(always)]
    fn logical(b: bool) -> bool {
        b
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        false
    }
    #[inline(always)]
    fn gt(self, other: Self) -> bool {
        self & !other
    }
    #[inline(always)]
    fn lt(self, other: Self) -> bool {
        !self & other
    }
    fn lowest() -> Self {
        false
    }
    fn highest() -> Self {
        true
    }
}

/// A reduction's arithmetic over input elements `T` (see the module docs).
pub trait Reducer<T>: Copy + Send + Sync {
    /// The table entry this reducer implements.
    const OP: ReductionOp;
    /// Accumulator.
    type Acc: Copy + Send + Sync;
    /// Result element.
    type Out: Element;
    /// The accumulator of no values.
    fn identity(&self) -> Self::Acc;
    /// Folds value `x`, at logical position `index` along the reduced dim, into `acc`.
    fn step(&self, acc: Self::Acc, x: T, index: i64) -> Self::Acc;
    /// Merges the accumulators of two ranges (`earlier` first).
    fn combine(&self, earlier: Self::Acc, later: Self::Acc) -> Self::Acc;
    /// The result from the accumulator of `count` values.
    fn finish(&self, acc: Self::Acc, count: i64) -> Self::Out;
    /// Kernel hook: the contiguous run `xs` (positions `first..`) folded into one
    /// accumulator by a hand-written AVX2 loop, or `None` (the default) to let the kernels use
    /// their generic lanes. An override must agree with folding by `step` and `combine`
    /// (up to the rounding of a different order).
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn fold_run_avx2(&self, xs: &[T], first: i64) -> Option<Self::Acc> {
        let _ = (xs, first);
        None
    }

    /// Kernel hook: four contiguous runs of equal length, each the whole reduced range of
    /// one output (positions `0..`), folded together by a hand-written AVX2 loop, or `None`
    /// (the default). The inner reduction of short rows then folds four rows from four
    /// distant parts of a task's range at once: four memory streams instead of one (see
    /// the `kernel::reduce` docs). Every row of such a reduction goes through this fold, so
    /// a row's result does not depend on which rows it was grouped with.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA; the runs have the same length.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn fold_runs4_avx2(&self, rows: [&[T]; 4]) -> Option<[Self::Acc; 4]> {
        let _ = rows;
        None
    }

    /// Kernel hook: folds the `j`-th values of four rows of the reduced dim (each at least
    /// `acc.len()` long) into `acc[j]` with a hand-written AVX2 loop, or returns `false`
    /// (the default) having changed nothing, so an empty `acc` asks whether the fold
    /// exists. The fold ignores the rows' positions, so only order-insensitive reducers
    /// (`sum`, `mean`) implement it. The outer reduction then folds rows from four distant
    /// parts of its range together (four memory streams, one accumulator load and store per
    /// four values; see the `kernel::reduce` docs).
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn fold_rows4_into_avx2(&self, acc: &mut [Self::Acc], rows: [&[T]; 4]) -> bool {
        let _ = (acc, rows);
        false
    }
}

/// The AVX2 kernel hooks of the reducers whose accumulator is the element's `sum`
/// accumulator (`sum`, `mean`): the element type's hand-written folds
/// ([`ReduceElement::sum_run_avx2`] and its four-row forms).
macro_rules! sum_kernel_hooks {
    () => {
        #[cfg(target_arch = "x86_64")]
        #[inline(always)]
        unsafe fn fold_run_avx2(&self, xs: &[T], _: i64) -> Option<T::SumAcc> {
            // SAFETY: the caller guarantees AVX2 and FMA.
            unsafe { T::sum_run_avx2(xs) }
        }
        #[cfg(target_arch = "x86_64")]
        #[inline(always)]
        unsafe fn fold_runs4_avx2(&self, rows: [&[T]; 4]) -> Option<[T::SumAcc; 4]> {
            // SAFETY: the caller guarantees AVX2, FMA and equal lengths.
            unsafe { T::sum_runs4_avx2(rows) }
        }
        #[cfg(target_arch = "x86_64")]
        #[inline(always)]
        unsafe fn fold_rows4_into_avx2(&self, acc: &mut [T::SumAcc], rows: [&[T]; 4]) -> bool {
            // SAFETY: the caller guarantees AVX2, FMA and the rows' lengths.
            unsafe { T::sum_rows4_into_avx2(acc, rows) }
        }
    };
}

/// The AVX2 kernel hooks of `amax` (`max`) and `amin`: the element type's hand-written
/// extreme fold ([`ReduceElement::extreme_run_avx2`]), per run and for four rows.
macro_rules! extreme_kernel_hooks {
    ($max:expr) => {
        #[cfg(target_arch = "x86_64")]
        #[inline(always)]
        unsafe fn fold_run_avx2(&self, xs: &[T], _: i64) -> Option<T> {
            // SAFETY: the caller guarantees AVX2 and FMA.
            unsafe { T::extreme_run_avx2(xs, $max) }
        }
        #[cfg(target_arch = "x86_64")]
        #[inline(always)]
        unsafe fn fold_runs4_avx2(&self, rows: [&[T]; 4]) -> Option<[T; 4]> {
            let mut out = [T::lowest(); 4];
            for (o, r) in out.iter_mut().zip(rows) {
                // SAFETY: the caller guarantees AVX2 and FMA.
                *o = unsafe { T::extreme_run_avx2(r, $max) }?;
            }
            Some(out)
        }
    };
}

/// `sum`: floats accumulate in `f64` (more accurate than PyTorch's float32 cascade, see
/// [`ReduceElement::SumAcc`]), integers and `bool` in `int64` with wrapping.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sum;
/// `mean`: the float sum divided by the count (NaN over nothing).
#[derive(Clone, Copy, Debug, Default)]
pub struct Mean;
/// `prod`: like [`Sum`] with multiplication.
#[derive(Clone, Copy, Debug, Default)]
pub struct Prod;
/// `amax`: NaN-propagating maximum (`or` for `bool`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Amax;
/// `amin`: NaN-propagating minimum (`and` for `bool`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Amin;
/// `argmax`: index of the first maximum (the first NaN if any).
#[derive(Clone, Copy, Debug, Default)]
pub struct Argmax;
/// `argmin`: index of the first minimum (the first NaN if any).
#[derive(Clone, Copy, Debug, Default)]
pub struct Argmin;
/// `all`: every value non-zero.
#[derive(Clone, Copy, Debug, Default)]
pub struct All;
/// `any`: some value non-zero.
#[derive(Clone, Copy, Debug, Default)]
pub struct Any;

impl<T: ReduceElement> Reducer<T> for Sum {
    const OP: ReductionOp = ReductionOp::Sum;
    type Acc = T::SumAcc;
    type Out = T::Wide;
    #[inline(always)]
    fn identity(&self) -> T::SumAcc {
        T::SumAcc::ZERO
    }
    #[inline(always)]
    fn step(&self, acc: T::SumAcc, x: T, _: i64) -> T::SumAcc {
        acc.add(x.to_sum_acc())
    }
    #[inline(always)]
    fn combine(&self, a: T::SumAcc, b: T::SumAcc) -> T::SumAcc {
        a.add(b)
    }
    #[inline(always)]
    fn finish(&self, acc: T::SumAcc, _: i64) -> T::Wide {
        T::from_sum_acc(acc)
    }
    sum_kernel_hooks!();
}

impl<T: ReduceElement<Wide = T> + FloatElement> Reducer<T> for Mean {
    const OP: ReductionOp = ReductionOp::Mean;
    type Acc = T::SumAcc;
    type Out = T;
    #[inline(always)]
    fn identity(&self) -> T::SumAcc {
        T::SumAcc::ZERO
    }
    #[inline(always)]
    fn step(&self, acc: T::SumAcc, x: T, _: i64) -> T::SumAcc {
        acc.add(x.to_sum_acc())
    }
    #[inline(always)]
    fn combine(&self, a: T::SumAcc, b: T::SumAcc) -> T::SumAcc {
        a.add(b)
    }
    #[inline(always)]
    fn finish(&self, acc: T::SumAcc, count: i64) -> T {
        // As PyTorch: the sum in the result type, divided by the count.
        T::from_sum_acc(acc).div(T::from_scalar(Scalar::Int(count)))
    }
    sum_kernel_hooks!();
}

impl<T: ReduceElement> Reducer<T> for Prod {
    const OP: ReductionOp = ReductionOp::Prod;
    type Acc = T::Wide;
    type Out = T::Wide;
    #[inline(always)]
    fn identity(&self) -> T::Wide {
        T::Wide::ONE
    }
    #[inline(always)]
    fn step(&self, acc: T::Wide, x: T, _: i64) -> T::Wide {
        acc.mul(x.widen())
    }
    #[inline(always)]
    fn combine(&self, a: T::Wide, b: T::Wide) -> T::Wide {
        a.mul(b)
    }
    #[inline(always)]
    fn finish(&self, acc: T::Wide, _: i64) -> T::Wide {
        acc
    }
}

/// NaN-propagating extreme: `b` replaces `a` when it is NaN or strictly beyond it. Once `a`
/// is NaN nothing is beyond it, so it stays NaN (or is replaced by another NaN). Two
/// compares and a select: the outer reduction's loop vectorizes to a handful of SSE ops.
#[inline(always)]
fn extreme<T: ReduceElement>(a: T, b: T, beyond: fn(T, T) -> bool) -> T {
    if beyond(b, a) | b.is_nan() {
        b
    } else {
        a
    }
}

impl<T: ReduceElement> Reducer<T> for Amax {
    const OP: ReductionOp = ReductionOp::Amax;
    type Acc = T;
    type Out = T;
    #[inline(always)]
    fn identity(&self) -> T {
        T::lowest()
    }
    #[inline(always)]
    fn step(&self, acc: T, x: T, _: i64) -> T {
        extreme(acc, x, T::gt)
    }
    #[inline(always)]
    fn combine(&self, a: T, b: T) -> T {
        extreme(a, b, T::gt)
    }
    #[inline(always)]
    fn finish(&self, acc: T, _: i64) -> T {
        acc
    }
    extreme_kernel_hooks!(true);
}

impl<T: ReduceElement> Reducer<T> for Amin {
    const OP: ReductionOp = ReductionOp::Amin;
    type Acc = T;
    type Out = T;
    #[inline(always)]
    fn identity(&self) -> T {
        T::highest()
    }
    #[inline(always)]
    fn step(&self, acc: T, x: T, _: i64) -> T {
        extreme(acc, x, T::lt)
    }
    #[inline(always)]
    fn combine(&self, a: T, b: T) -> T {
        extreme(a, b, T::lt)
    }
    #[inline(always)]
    fn finish(&self, acc: T, _: i64) -> T {
        acc
    }
    extreme_kernel_hooks!(false);
}

/// The better of two `(value, index)` candidates (index -1: none): NaN first, then the
/// value beyond, then the smaller index — independent of the order they are offered in.
#[inline(always)]
fn arg_pick<T: ReduceElement>(a: (T, i64), b: (T, i64), beyond: fn(T, T) -> bool) -> (T, i64) {
    if a.1 < 0 {
        return b;
    }
    if b.1 < 0 {
        return a;
    }
    let take_b = match (a.0.is_nan(), b.0.is_nan()) {
        (true, true) => b.1 < a.1,
        (true, false) => false,
        (false, true) => true,
        (false, false) => beyond(b.0, a.0) || (!beyond(a.0, b.0) && b.1 < a.1),
    };
    if take_b {
        b
    } else {
        a
    }
}

impl<T: ReduceElement> Reducer<T> for Argmax {
    const OP: ReductionOp = ReductionOp::Argmax;
    type Acc = (T, i64);
    type Out = i64;
    #[inline(always)]
    fn identity(&self) -> (T, i64) {
        (T::lowest(), -1)
    }
    #[inline(always)]
    fn step(&self, acc: (T, i64), x: T, index: i64) -> (T, i64) {
        arg_pick(acc, (x, index), T::gt)
    }
    #[inline(always)]
    fn combine(&self, a: (T, i64), b: (T, i64)) -> (T, i64) {
        arg_pick(a, b, T::gt)
    }
    #[inline(always)]
    fn finish(&self, acc: (T, i64), _: i64) -> i64 {
        acc.1.max(0)
    }
}

impl<T: ReduceElement> Reducer<T> for Argmin {
    const OP: ReductionOp = ReductionOp::Argmin;
    type Acc = (T, i64);
    type Out = i64;
    #[inline(always)]
    fn identity(&self) -> (T, i64) {
        (T::highest(), -1)
    }
    #[inline(always)]
    fn step(&self, acc: (T, i64), x: T, index: i64) -> (T, i64) {
        arg_pick(acc, (x, index), T::lt)
    }
    #[inline(always)]
    fn combine(&self, a: (T, i64), b: (T, i64)) -> (T, i64) {
        arg_pick(a, b, T::lt)
    }
    #[inline(always)]
    fn finish(&self, acc: (T, i64), _: i64) -> i64 {
        acc.1.max(0)
    }
}

impl<T: ReduceElement> Reducer<T> for All {
    const OP: ReductionOp = ReductionOp::All;
    type Acc = bool;
    type Out = T::Logical;
    #[inline(always)]
    fn identity(&self) -> bool {
        true
    }
    #[inline(always)]
    fn step(&self, acc: bool, x: T, _: i64) -> bool {
        acc & x.truthy()
    }
    #[inline(always)]
    fn combine(&self, a: bool, b: bool) -> bool {
        a & b
    }
    #[inline(always)]
    fn finish(&self, acc: bool, _: i64) -> T::Logical {
        T::logical(acc)
    }
}

impl<T: ReduceElement> Reducer<T> for Any {
    const OP: ReductionOp = ReductionOp::Any;
    type Acc = bool;
    type Out = T::Logical;
    #[inline(always)]
    fn identity(&self) -> bool {
        false
    }
    #[inline(always)]
    fn step(&self, acc: bool, x: T, _: i64) -> bool {
        acc | x.truthy()
    }
    #[inline(always)]
    fn combine(&self, a: bool, b: bool) -> bool {
        a | b
    }
    #[inline(always)]
    fn finish(&self, acc: bool, _: i64) -> T::Logical {
        T::logical(acc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fold<T: Copy, R: Reducer<T>>(r: R, v: &[T]) -> R::Out {
        let acc = v
            .iter()
            .enumerate()
            .fold(r.identity(), |a, (i, &x)| r.step(a, x, i as i64));
        r.finish(acc, v.len() as i64)
    }

    #[test]
    fn arg_ties_and_nans_do_not_depend_on_order() {
        let v = [1.0f32, 3.0, 3.0, f32::NAN, 2.0, f32::NAN];
        assert_eq!(fold(Argmax, &v), 3);
        assert_eq!(fold(Argmax, &v[..3]), 1);
        assert_eq!(fold(Argmin, &[2i32, 1, 1, 5]), 1);
        // Combining in reverse order gives the same pick.
        let a = Argmax.step(Argmax.identity(), 3.0f32, 2);
        let b = Argmax.step(Argmax.identity(), 3.0f32, 1);
        assert_eq!(Argmax.combine(a, b).1, 1);
    }

    #[test]
    fn extremes_and_logicals() {
        assert!(fold(Amax, &[1.0f64, f64::NAN, 3.0]).is_nan());
        assert_eq!(fold(Amin, &[4u8, 2, 9]), 2);
        assert!(fold(Amax, &[false, true]));
        assert!(!fold(Amin, &[false, true]));
        assert_eq!(fold(Any, &[0u8, 0, 7]), 1u8);
        assert!(!fold(All, &[1i32, 0]));
        assert_eq!(fold(Sum, &[true, true, false]), 2i64);
        assert_eq!(fold(Prod, &[3u8, 200]), 600i64);
        assert!(fold(Mean, &[] as &[f32]).is_nan());
        assert_eq!(fold(Sum, &[i64::MAX, 1]), i64::MIN); // wraps like PyTorch
    }
}
