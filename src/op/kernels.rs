//! The typed element functions of the op table and their dispatch on the computation dtype.
//!
//! Every op runs as one monomorphized map over the computation dtype `T` (inputs of other
//! dtypes are converted first, as PyTorch's CPU path does), so each inner loop reads and
//! writes one element type and the compiler vectorizes the contiguous rows (`kernel::loops`).
//! Arithmetic on integers wraps, as in PyTorch's C++ kernels; floats propagate NaN through
//! `maximum`, `minimum` and `clamp`. `bool` arithmetic is PyTorch's: `add`/`maximum` are or,
//! `mul`/`minimum` are and.

use super::table::Op;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::iter::Plan;
use crate::kernel::{
    execute_map1, execute_map2, execute_map3, Abs, Add, Addcmul, Div, ExecConfig, Exp, Map1, Map2,
    Map3, Maximum, Minimum, Mul, Neg, Relu, Sigmoid, Sqrt, Sub, Where,
};
use crate::tensor::{Element, NumElement, Tensor};

use super::exec::{AnyElement, AnyTensor};

macro_rules! cmp_fn {
    ($name:ident, |$a:ident, $b:ident| $e:expr) => {
        #[derive(Clone, Copy)]
        struct $name;
        impl<T: Element + PartialOrd> Map2<T, T, bool> for $name {
            #[inline(always)]
            fn call(&self, $a: T, $b: T) -> bool {
                $e
            }
        }
    };
}
cmp_fn!(EqF, |a, b| a == b);
cmp_fn!(NeF, |a, b| a != b);
cmp_fn!(LtF, |a, b| a < b);
cmp_fn!(LeF, |a, b| a <= b);
cmp_fn!(GtF, |a, b| a > b);
cmp_fn!(GeF, |a, b| a >= b);

/// Truth value of an element (`x != 0`).
trait Truthy: Element {
    fn truthy(self) -> bool;
}
macro_rules! truthy {
    ($($t:ty),*) => {$(
        impl Truthy for $t {
            #[inline(always)]
            fn truthy(self) -> bool {
                self != (0 as $t)
            }
        }
    )*};
}
truthy!(u8, i32, i64, f32, f64);
impl Truthy for bool {
    #[inline(always)]
    fn truthy(self) -> bool {
        self
    }
}

#[derive(Clone, Copy)]
struct LogicalNotF;
impl<T: Truthy> Map1<T, bool> for LogicalNotF {
    #[inline(always)]
    fn call(&self, a: T) -> bool {
        !a.truthy()
    }
}
#[derive(Clone, Copy)]
struct LogicalAndF;
impl<T: Truthy> Map2<T, T, bool> for LogicalAndF {
    #[inline(always)]
    fn call(&self, a: T, b: T) -> bool {
        a.truthy() & b.truthy()
    }
}
#[derive(Clone, Copy)]
struct LogicalOrF;
impl<T: Truthy> Map2<T, T, bool> for LogicalOrF {
    #[inline(always)]
    fn call(&self, a: T, b: T) -> bool {
        a.truthy() | b.truthy()
    }
}

/// `minimum(maximum(x, lo), hi)`.
#[derive(Clone, Copy)]
struct ClampF;
impl<T: NumElement> Map3<T, T, T, T> for ClampF {
    #[inline(always)]
    fn call(&self, x: T, lo: T, hi: T) -> T {
        x.maximum(lo).minimum(hi)
    }
}

fn typed<T: AnyElement>(t: &AnyTensor) -> Result<&Tensor<T>> {
    t.typed::<T>().ok_or_else(|| {
        Error::invalid(format!(
            "internal: kernel expected a {} tensor, got {}",
            T::DTYPE,
            t.dtype()
        ))
    })
}

fn run1<A: AnyElement, O: AnyElement, F: Map1<A, O>>(
    plan: &Plan<i64>,
    out: &AnyTensor,
    x: &[AnyTensor],
    f: &F,
    cfg: &ExecConfig,
) -> Result<()> {
    execute_map1(
        plan,
        &typed::<O>(out)?.storage,
        &typed::<A>(&x[0])?.storage,
        f,
        cfg,
    )
}

fn run2<A: AnyElement, O: AnyElement, F: Map2<A, A, O>>(
    plan: &Plan<i64>,
    out: &AnyTensor,
    x: &[AnyTensor],
    f: &F,
    cfg: &ExecConfig,
) -> Result<()> {
    execute_map2(
        plan,
        &typed::<O>(out)?.storage,
        &typed::<A>(&x[0])?.storage,
        &typed::<A>(&x[1])?.storage,
        f,
        cfg,
    )
}

fn run3<C: AnyElement, A: AnyElement, F: Map3<C, A, A, A>>(
    plan: &Plan<i64>,
    out: &AnyTensor,
    x: &[AnyTensor],
    f: &F,
    cfg: &ExecConfig,
) -> Result<()> {
    execute_map3(
        plan,
        &typed::<A>(out)?.storage,
        &typed::<C>(&x[0])?.storage,
        &typed::<A>(&x[1])?.storage,
        &typed::<A>(&x[2])?.storage,
        f,
        cfg,
    )
}

fn unsupported(op: Op, d: DType) -> Error {
    Error::DType {
        message: format!("internal: no {op} kernel for {d}"),
    }
}

/// `$body` with `$T` bound to the Rust type of a numeric (non-bool) dtype.
macro_rules! numeric {
    ($d:expr, $op:expr, |$T:ident| $body:expr) => {
        match $d {
            DType::U8 => {
                type $T = u8;
                $body
            }
            DType::I32 => {
                type $T = i32;
                $body
            }
            DType::I64 => {
                type $T = i64;
                $body
            }
            DType::F32 => {
                type $T = f32;
                $body
            }
            DType::F64 => {
                type $T = f64;
                $body
            }
            DType::Bool => Err(unsupported($op, DType::Bool)),
        }
    };
}

/// `$body` with `$T` bound to the Rust type of a floating dtype.
macro_rules! floating {
    ($d:expr, $op:expr, |$T:ident| $body:expr) => {
        match $d {
            DType::F32 => {
                type $T = f32;
                $body
            }
            DType::F64 => {
                type $T = f64;
                $body
            }
            d => Err(unsupported($op, d)),
        }
    };
}

/// `$body` with `$T` bound to the Rust type of any dtype.
macro_rules! any {
    ($d:expr, |$T:ident| $body:expr) => {
        match $d {
            DType::Bool => {
                type $T = bool;
                $body
            }
            d => numeric!(d, Op::Eq, |$T| $body),
        }
    };
}

/// The dtype a kernel writes: `bool` for comparisons and logical ops, else the computation
/// dtype.
pub(super) fn kernel_out_dtype(op: Op, compute: DType) -> DType {
    use super::table::Promotion::*;
    match op.def().promotion {
        Comparison | LogicalNot => DType::Bool,
        _ => compute,
    }
}

/// Runs `op`'s kernel over `plan` (operands `[out, inputs...]`), every input already in the
/// computation dtype `d` (a `where` condition in `bool`) and `out` in
/// [`kernel_out_dtype`].
pub(super) fn run(
    op: Op,
    d: DType,
    plan: &Plan<i64>,
    out: &AnyTensor,
    x: &[AnyTensor],
    cfg: &ExecConfig,
) -> Result<()> {
    match op {
        Op::Neg => numeric!(d, op, |T| run1::<T, T, _>(plan, out, x, &Neg, cfg)),
        Op::Abs => numeric!(d, op, |T| run1::<T, T, _>(plan, out, x, &Abs, cfg)),
        Op::Relu => numeric!(d, op, |T| run1::<T, T, _>(plan, out, x, &Relu, cfg)),
        Op::Exp => floating!(d, op, |T| run1::<T, T, _>(plan, out, x, &Exp, cfg)),
        Op::Sqrt => floating!(d, op, |T| run1::<T, T, _>(plan, out, x, &Sqrt, cfg)),
        Op::Sigmoid => floating!(d, op, |T| run1::<T, T, _>(plan, out, x, &Sigmoid, cfg)),
        Op::LogicalNot => any!(d, |T| run1::<T, bool, _>(plan, out, x, &LogicalNotF, cfg)),
        Op::Add if d == DType::Bool => {
            run2::<bool, bool, _>(plan, out, x, &|a: bool, b: bool| a | b, cfg)
        }
        Op::Add => numeric!(d, op, |T| run2::<T, T, _>(plan, out, x, &Add, cfg)),
        Op::Sub => numeric!(d, op, |T| run2::<T, T, _>(plan, out, x, &Sub, cfg)),
        Op::Mul if d == DType::Bool => {
            run2::<bool, bool, _>(plan, out, x, &|a: bool, b: bool| a & b, cfg)
        }
        Op::Mul => numeric!(d, op, |T| run2::<T, T, _>(plan, out, x, &Mul, cfg)),
        Op::Div => floating!(d, op, |T| run2::<T, T, _>(plan, out, x, &Div, cfg)),
        Op::Maximum if d == DType::Bool => {
            run2::<bool, bool, _>(plan, out, x, &|a: bool, b: bool| a | b, cfg)
        }
        Op::Maximum => numeric!(d, op, |T| run2::<T, T, _>(plan, out, x, &Maximum, cfg)),
        Op::Minimum if d == DType::Bool => {
            run2::<bool, bool, _>(plan, out, x, &|a: bool, b: bool| a & b, cfg)
        }
        Op::Minimum => numeric!(d, op, |T| run2::<T, T, _>(plan, out, x, &Minimum, cfg)),
        Op::Eq => any!(d, |T| run2::<T, bool, _>(plan, out, x, &EqF, cfg)),
        Op::Ne => any!(d, |T| run2::<T, bool, _>(plan, out, x, &NeF, cfg)),
        Op::Lt => any!(d, |T| run2::<T, bool, _>(plan, out, x, &LtF, cfg)),
        Op::Le => any!(d, |T| run2::<T, bool, _>(plan, out, x, &LeF, cfg)),
        Op::Gt => any!(d, |T| run2::<T, bool, _>(plan, out, x, &GtF, cfg)),
        Op::Ge => any!(d, |T| run2::<T, bool, _>(plan, out, x, &GeF, cfg)),
        Op::LogicalAnd => any!(d, |T| run2::<T, bool, _>(plan, out, x, &LogicalAndF, cfg)),
        Op::LogicalOr => any!(d, |T| run2::<T, bool, _>(plan, out, x, &LogicalOrF, cfg)),
        Op::Addcmul => numeric!(d, op, |T| {
            let one = <T as NumElement>::ONE;
            run3::<T, T, _>(plan, out, x, &Addcmul(one), cfg)
        }),
        Op::Clamp => numeric!(d, op, |T| run3::<T, T, _>(plan, out, x, &ClampF, cfg)),
        Op::Where => any!(d, |T| run3::<bool, T, _>(plan, out, x, &Where, cfg)),
    }
}
