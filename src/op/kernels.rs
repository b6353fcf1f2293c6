//! The typed element functions of the op table and their dispatch on the computation dtype.
//!
//! Every op runs as one monomorphized map over the computation dtype `T` (inputs of other
//! dtypes are converted first, as PyTorch's CPU path does), so each inner loop reads and
//! writes one element type and the compiler vectorizes the contiguous rows (`kernel::loops`).
//! Arithmetic on integers wraps, as in PyTorch's C++ kernels; floats propagate NaN through
//! `maximum`, `minimum` and `clamp`. `bool` arithmetic is PyTorch's: `add`/`maximum` are or,
//! `mul`/`minimum` are and.

use super::registry::{elementwise_ops, Op};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::iter::Plan;
use crate::kernel::{
    execute_map1, execute_map2, execute_map3, Addcmul, ExecConfig, Map1, Map2, Map3, Where,
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
        message: format!(
            "\"{}\" not implemented for '{}'",
            op.def().kernel_name,
            crate::iter::torch_name(d)
        ),
    }
}

/// `masked_fill`: operands `[out, x, mask, value]`, `x` and `value` in the computation dtype.
fn run_masked_fill<T: AnyElement>(
    plan: &Plan<i64>,
    out: &AnyTensor,
    x: &[AnyTensor],
    cfg: &ExecConfig,
) -> Result<()> {
    execute_map3(
        plan,
        &typed::<T>(out)?.storage,
        &typed::<T>(&x[0])?.storage,
        &typed::<bool>(&x[1])?.storage,
        &typed::<T>(&x[2])?.storage,
        &MaskedFillF,
        cfg,
    )
}

#[derive(Clone, Copy)]
struct MaskedFillF;
impl<T: Element> Map3<T, bool, T, T> for MaskedFillF {
    #[inline(always)]
    fn call(&self, x: T, mask: bool, value: T) -> T {
        if mask {
            value
        } else {
            x
        }
    }
}

/// Integer `remainder` by 0 is PyTorch's `ZeroDivisionError`; the divisor is checked first.
fn check_no_zero_divisor<T: AnyElement + NumElement>(divisor: &AnyTensor) -> Result<()> {
    let t = typed::<T>(divisor)?;
    if t.any(|v| v == T::ZERO)? {
        return Err(Error::argument("ZeroDivisionError"));
    }
    Ok(())
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
        crate::op::with_float!($d, |$T| $body, d => Err(unsupported($op, d)))
    };
}

/// `$body` with `$T` bound to the Rust type of an integer dtype or bool.
macro_rules! integral {
    ($d:expr, $op:expr, |$T:ident| $body:expr) => {
        match $d {
            DType::Bool => {
                type $T = bool;
                $body
            }
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
    use super::registry::Promotion::*;
    match op.def().promotion {
        Comparison | LogicalNot => DType::Bool,
        _ => compute,
    }
}

/// One kernel family of the registry: how an op's element function runs on each dtype.
macro_rules! kernel_family {
    (numeric1($F:expr), $op:expr, $d:expr, $plan:expr, $out:expr, $x:expr, $cfg:expr) => {
        numeric!($d, $op, |T| run1::<T, T, _>($plan, $out, $x, &$F, $cfg))
    };
    (float1($F:expr), $op:expr, $d:expr, $plan:expr, $out:expr, $x:expr, $cfg:expr) => {
        floating!($d, $op, |T| run1::<T, T, _>($plan, $out, $x, &$F, $cfg))
    };
    (any1_to_bool($F:expr), $op:expr, $d:expr, $plan:expr, $out:expr, $x:expr, $cfg:expr) => {
        any!($d, |T| run1::<T, bool, _>($plan, $out, $x, &$F, $cfg))
    };
    (numeric2($F:expr), $op:expr, $d:expr, $plan:expr, $out:expr, $x:expr, $cfg:expr) => {
        numeric!($d, $op, |T| run2::<T, T, _>($plan, $out, $x, &$F, $cfg))
    };
    (numeric2_bool($F:expr, |$a:ident, $b:ident| $e:expr), $op:expr, $d:expr, $plan:expr,
     $out:expr, $x:expr, $cfg:expr) => {
        if $d == DType::Bool {
            run2::<bool, bool, _>($plan, $out, $x, &|$a: bool, $b: bool| $e, $cfg)
        } else {
            numeric!($d, $op, |T| run2::<T, T, _>($plan, $out, $x, &$F, $cfg))
        }
    };
    (float2($F:expr), $op:expr, $d:expr, $plan:expr, $out:expr, $x:expr, $cfg:expr) => {
        floating!($d, $op, |T| run2::<T, T, _>($plan, $out, $x, &$F, $cfg))
    };
    (any2_to_bool($F:expr), $op:expr, $d:expr, $plan:expr, $out:expr, $x:expr, $cfg:expr) => {
        any!($d, |T| run2::<T, bool, _>($plan, $out, $x, &$F, $cfg))
    };
    (numeric3($F:expr), $op:expr, $d:expr, $plan:expr, $out:expr, $x:expr, $cfg:expr) => {
        numeric!($d, $op, |T| run3::<T, T, _>($plan, $out, $x, &$F, $cfg))
    };
    (addcmul(), $op:expr, $d:expr, $plan:expr, $out:expr, $x:expr, $cfg:expr) => {
        numeric!($d, $op, |T| {
            let one = <T as NumElement>::ONE;
            run3::<T, T, _>($plan, $out, $x, &Addcmul(one), $cfg)
        })
    };
    (where_(), $op:expr, $d:expr, $plan:expr, $out:expr, $x:expr, $cfg:expr) => {
        any!($d, |T| run3::<bool, T, _>($plan, $out, $x, &Where, $cfg))
    };
    (any1($F:expr), $op:expr, $d:expr, $plan:expr, $out:expr, $x:expr, $cfg:expr) => {
        if $d == DType::Bool {
            run1::<bool, bool, _>($plan, $out, $x, &|a: bool| a, $cfg)
        } else {
            numeric!($d, $op, |T| run1::<T, T, _>($plan, $out, $x, &$F, $cfg))
        }
    };
    (integral1($F:expr), $op:expr, $d:expr, $plan:expr, $out:expr, $x:expr, $cfg:expr) => {
        integral!($d, $op, |T| run1::<T, T, _>($plan, $out, $x, &$F, $cfg))
    };
    (integral2($F:expr), $op:expr, $d:expr, $plan:expr, $out:expr, $x:expr, $cfg:expr) => {
        integral!($d, $op, |T| run2::<T, T, _>($plan, $out, $x, &$F, $cfg))
    };
    (remainder(), $op:expr, $d:expr, $plan:expr, $out:expr, $x:expr, $cfg:expr) => {
        numeric!($d, $op, |T| {
            if !$d.is_floating() {
                check_no_zero_divisor::<T>(&$x[1])?;
            }
            run2::<T, T, _>($plan, $out, $x, &crate::kernel::Remainder, $cfg)
        })
    };
    (masked_fill(), $op:expr, $d:expr, $plan:expr, $out:expr, $x:expr, $cfg:expr) => {
        any!($d, |T| run_masked_fill::<T>($plan, $out, $x, $cfg))
    };
}

/// Expands the registry into [`run`]: one arm per op, its kernel family's dispatch.
macro_rules! define_run {
    ($( $op:ident : $name:literal / $arity:literal, $table:tt,
        kernel $kf:ident ($($ka:tt)*), fused $ff:ident $(($($fa:tt)*))? ; )*) => {
        /// Runs `op`'s kernel over `plan` (operands `[out, inputs...]`), every input already in
        /// the computation dtype `d` (a `where` condition in `bool`) and `out` in
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
                $(Op::$op => kernel_family!($kf($($ka)*), op, d, plan, out, x, cfg),)*
            }
        }
    };
}
elementwise_ops!(define_run);
