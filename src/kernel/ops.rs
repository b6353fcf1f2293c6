//! Tensor-level operations: broadcast, allocate the output, build a plan, execute.

use super::config::ExecConfig;
use super::copy::execute_copy;
use super::loops::{execute_map1, execute_map2, execute_map3, Map1, Map2, Map3};
use crate::iter::{IterOptions, Plan, TensorIteratorConfig, TensorSpec};
use crate::tensor::{Element, FloatElement, MathElement, MemoryFormat, NumElement, Tensor};
use crate::Result;
use std::mem::size_of;

/// What the plan build needs to know about one operand.
struct Operand<'a> {
    sizes: &'a [i64],
    strides: &'a [i64],
    offset: i64,
    element_size: usize,
    storage_id: u64,
    storage_bytes: i64,
}

fn operand<T: Element>(t: &Tensor<T>) -> Operand<'_> {
    Operand {
        sizes: &t.sizes,
        strides: &t.strides,
        offset: t.offset,
        element_size: size_of::<T>(),
        storage_id: t.storage.id() as u64,
        // a storage never exceeds isize::MAX bytes
        storage_bytes: (t.storage.len() * size_of::<T>()) as i64,
    }
}

fn spec(o: &Operand<'_>) -> TensorSpec<i64> {
    TensorSpec::new(o.sizes.to_vec(), o.strides.to_vec(), o.element_size)
        .with_offset(o.offset)
        .with_storage(o.storage_id, o.storage_bytes)
}

/// Builds the plan of an elementwise op with the TensorIterator build ([`crate::iter`]).
///
/// `out = None` asks for an output to be allocated: the plan's `broadcast_shape` and
/// `output_strides[0]` describe it (dense, TensorIterator's layout rule), offset 0. A given
/// `out` must already have the broadcast shape of itself and the inputs: it is never resized
/// (`resize_outputs: false`), since a view cannot be resized in place.
fn build(
    out: Option<Operand<'_>>,
    out_element_size: usize,
    inputs: &[Operand<'_>],
) -> Result<Plan<i64>> {
    let mut cfg = TensorIteratorConfig::new().options(IterOptions {
        resize_outputs: false,
        ..IterOptions::default()
    });
    cfg = match out {
        Some(o) => cfg.add_output(spec(&o)),
        None => cfg.add_undefined_output(out_element_size),
    };
    for i in inputs {
        cfg = cfg.add_input(spec(i));
    }
    cfg.build()
}

/// Allocates the output a plan built with `out = None` describes.
fn alloc<O: Element>(plan: &Plan<i64>) -> Result<Tensor<O>> {
    Tensor::uninit(&plan.broadcast_shape, &plan.output_strides[0])
}

/// `f(a)` into a new tensor.
pub fn map1<A: Element, O: Element, F: Map1<A, O>>(
    a: &Tensor<A>,
    f: &F,
    cfg: &ExecConfig,
) -> Result<Tensor<O>> {
    let plan = build(None, size_of::<O>(), &[operand(a)])?;
    let out = alloc::<O>(&plan)?;
    execute_map1(&plan, &out.storage, &a.storage, f, cfg)?;
    Ok(out)
}

/// `f(a)` into an existing `out` (`a` broadcast to `out`'s sizes).
pub fn map1_out<A: Element, O: Element, F: Map1<A, O>>(
    a: &Tensor<A>,
    out: &Tensor<O>,
    f: &F,
    cfg: &ExecConfig,
) -> Result<()> {
    let plan = build(Some(operand(out)), size_of::<O>(), &[operand(a)])?;
    execute_map1(&plan, &out.storage, &a.storage, f, cfg)
}

/// `f(a, b)` (broadcasting) into a new tensor.
pub fn map2<A: Element, B: Element, O: Element, F: Map2<A, B, O>>(
    a: &Tensor<A>,
    b: &Tensor<B>,
    f: &F,
    cfg: &ExecConfig,
) -> Result<Tensor<O>> {
    let plan = build(None, size_of::<O>(), &[operand(a), operand(b)])?;
    let out = alloc::<O>(&plan)?;
    execute_map2(&plan, &out.storage, &a.storage, &b.storage, f, cfg)?;
    Ok(out)
}

/// `f(a, b)` (broadcasting, to `out`'s sizes) into an existing `out`.
pub fn map2_out<A: Element, B: Element, O: Element, F: Map2<A, B, O>>(
    a: &Tensor<A>,
    b: &Tensor<B>,
    out: &Tensor<O>,
    f: &F,
    cfg: &ExecConfig,
) -> Result<()> {
    let plan = build(
        Some(operand(out)),
        size_of::<O>(),
        &[operand(a), operand(b)],
    )?;
    execute_map2(&plan, &out.storage, &a.storage, &b.storage, f, cfg)
}

/// `f(a, b, c)` (broadcasting) into a new tensor.
pub fn map3<A: Element, B: Element, C: Element, O: Element, F: Map3<A, B, C, O>>(
    a: &Tensor<A>,
    b: &Tensor<B>,
    c: &Tensor<C>,
    f: &F,
    cfg: &ExecConfig,
) -> Result<Tensor<O>> {
    let plan = build(None, size_of::<O>(), &[operand(a), operand(b), operand(c)])?;
    let out = alloc::<O>(&plan)?;
    execute_map3(
        &plan,
        &out.storage,
        &a.storage,
        &b.storage,
        &c.storage,
        f,
        cfg,
    )?;
    Ok(out)
}

/// `f(a, b, c)` (broadcasting, to `out`'s sizes) into an existing `out`.
pub fn map3_out<A: Element, B: Element, C: Element, O: Element, F: Map3<A, B, C, O>>(
    a: &Tensor<A>,
    b: &Tensor<B>,
    c: &Tensor<C>,
    out: &Tensor<O>,
    f: &F,
    cfg: &ExecConfig,
) -> Result<()> {
    let plan = build(
        Some(operand(out)),
        size_of::<O>(),
        &[operand(a), operand(b), operand(c)],
    )?;
    execute_map3(
        &plan,
        &out.storage,
        &a.storage,
        &b.storage,
        &c.storage,
        f,
        cfg,
    )
}

/// Copies `src` into `dst`, broadcasting `src` to `dst`'s sizes and casting the dtype.
pub fn copy_into<S: Element, O: Element>(
    dst: &Tensor<O>,
    src: &Tensor<S>,
    cfg: &ExecConfig,
) -> Result<()> {
    let plan = build(Some(operand(dst)), size_of::<O>(), &[operand(src)])?;
    execute_copy(&plan, &dst.storage, &src.storage, cfg)
}

macro_rules! unary_fn {
    ($(#[$m:meta])* $name:ident, $bound:ident, |$x:ident| $e:expr) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, Default)]
        pub struct $name;
        impl<T: $bound> Map1<T, T> for $name {
            #[inline(always)]
            fn call(&self, $x: T) -> T {
                $e
            }
        }
    };
}
macro_rules! binary_fn {
    ($(#[$m:meta])* $name:ident, $bound:ident, |$x:ident, $y:ident| $e:expr) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, Default)]
        pub struct $name;
        impl<T: $bound> Map2<T, T, T> for $name {
            #[inline(always)]
            fn call(&self, $x: T, $y: T) -> T {
                $e
            }
        }
    };
}
unary_fn!(/// `-x`
    Neg, NumElement, |x| x.neg());
unary_fn!(/// `|x|`
    Abs, NumElement, |x| x.abs());
unary_fn!(/// `max(x, 0)` (NaN propagates)
    Relu, NumElement, |x| if x < T::ZERO { T::ZERO } else { x });
unary_fn!(/// `e^x`
    Exp, FloatElement, |x| x.exp());
unary_fn!(/// `sqrt(x)`
    Sqrt, FloatElement, |x| x.sqrt());
unary_fn!(/// `tanh(x)`
    Tanh, FloatElement, |x| x.tanh());
unary_fn!(/// `1 / (1 + e^-x)`
    Sigmoid, FloatElement, |x| x.sigmoid());
unary_fn!(/// the error function
    Erf, FloatElement, |x| x.erf());
unary_fn!(/// `1 / sqrt(x)`
    Rsqrt, FloatElement, |x| T::ONE.div(x.sqrt()));
unary_fn!(/// `1 / x`
    Reciprocal, FloatElement, |x| T::ONE.div(x));
unary_fn!(/// `ln(x)`
    Log, FloatElement, |x| x.ln());
unary_fn!(/// `ln(1 + x)`
    Log1p, FloatElement, |x| x.ln_1p());
unary_fn!(/// `e^x - 1`
    Expm1, FloatElement, |x| x.exp_m1());
unary_fn!(/// `sin(x)`
    Sin, FloatElement, |x| x.sin());
unary_fn!(/// `cos(x)`
    Cos, FloatElement, |x| x.cos());
unary_fn!(/// `floor(x)` (integers unchanged)
    Floor, MathElement, |x| x.floor());
unary_fn!(/// `ceil(x)` (integers unchanged)
    Ceil, MathElement, |x| x.ceil());
unary_fn!(/// `round(x)`, halves to even (integers unchanged)
    Round, MathElement, |x| x.round());
unary_fn!(/// `trunc(x)` (integers unchanged)
    Trunc, MathElement, |x| x.trunc());
unary_fn!(/// `(0 < x) - (x < 0)`
    Sign, MathElement, |x| x.sign());
unary_fn!(/// `x/2 · (1 + erf(x/√2))` (PyTorch's exact `gelu`)
    Gelu, FloatElement, |x| {
        let half = T::from_f64(0.5);
        x.mul(half).mul(T::ONE.add(x.mul(T::from_f64(std::f64::consts::FRAC_1_SQRT_2)).erf()))
    });
unary_fn!(/// `x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³)))` (`gelu(approximate="tanh")`)
    GeluTanh, FloatElement, |x| {
        let k = T::from_f64(std::f64::consts::FRAC_2_SQRT_PI * std::f64::consts::FRAC_1_SQRT_2);
        let inner = k.mul(x.add(T::from_f64(0.044715).mul(x).mul(x).mul(x)));
        T::from_f64(0.5).mul(x).mul(T::ONE.add(inner.tanh()))
    });
unary_fn!(/// `x / (1 + e^-x)`
    Silu, FloatElement, |x| x.div(T::ONE.add(x.neg().exp())));
unary_fn!(/// `x · min(max(x + 3, 0), 6) / 6`
    Hardswish, FloatElement, |x| {
        let six = T::from_f64(6.0);
        x.mul(x.add(T::from_f64(3.0)).maximum(T::ZERO).minimum(six)).div(six)
    });
unary_fn!(/// `min(max(x + 3, 0), 6) / 6`
    Hardsigmoid, FloatElement, |x| {
        let six = T::from_f64(6.0);
        x.add(T::from_f64(3.0)).maximum(T::ZERO).minimum(six).div(six)
    });
binary_fn!(/// `x > 0 ? x : x · slope`
    LeakyRelu, FloatElement, |x, s| if x > T::ZERO { x } else { x.mul(s) });
binary_fn!(/// `a^b`
    Pow, MathElement, |a, b| a.pow(b));
binary_fn!(/// `a mod b`, the sign of `b` (Python's `%`)
    Remainder, MathElement, |a, b| a.rem(b));
binary_fn!(/// `a + b`
    Add, NumElement, |a, b| a.add(b));
binary_fn!(/// `a - b`
    Sub, NumElement, |a, b| a.sub(b));
binary_fn!(/// `a * b`
    Mul, NumElement, |a, b| a.mul(b));
binary_fn!(/// `a / b`
    Div, FloatElement, |a, b| a.div(b));
binary_fn!(/// PyTorch `maximum`
    Maximum, NumElement, |a, b| a.maximum(b));
binary_fn!(/// PyTorch `minimum`
    Minimum, NumElement, |a, b| a.minimum(b));

/// Integer and bool elements: PyTorch's bitwise ops (on bool, the logical ones).
pub trait BitElement: Element + std::ops::BitAnd<Output = Self> + std::ops::BitOr<Output = Self>
    + std::ops::BitXor<Output = Self> + std::ops::Not<Output = Self> {}
impl BitElement for bool {}
impl BitElement for u8 {}
impl BitElement for i32 {}
impl BitElement for i64 {}

macro_rules! bit_fn {
    ($(#[$m:meta])* $name:ident, |$x:ident, $y:ident| $e:expr) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, Default)]
        pub struct $name;
        impl<T: BitElement> Map2<T, T, T> for $name {
            #[inline(always)]
            fn call(&self, $x: T, $y: T) -> T {
                $e
            }
        }
    };
}
bit_fn!(/// `a & b`
    BitAnd, |a, b| a & b);
bit_fn!(/// `a | b`
    BitOr, |a, b| a | b);
bit_fn!(/// `a ^ b`
    BitXor, |a, b| a ^ b);

/// `~a` (bool: not)
#[derive(Clone, Copy, Debug, Default)]
pub struct BitNot;
impl<T: BitElement> Map1<T, T> for BitNot {
    #[inline(always)]
    fn call(&self, a: T) -> T {
        !a
    }
}

/// `minimum(maximum(x, lo), hi)` (NaN propagates; `clamp`, `hardtanh`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Clamp;
impl<T: NumElement> Map3<T, T, T, T> for Clamp {
    #[inline(always)]
    fn call(&self, x: T, lo: T, hi: T) -> T {
        x.maximum(lo).minimum(hi)
    }
}

/// `where(cond, a, b)`: `a` where `cond` is true, else `b`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Where;
impl<T: Element> Map3<bool, T, T, T> for Where {
    #[inline(always)]
    fn call(&self, c: bool, a: T, b: T) -> T {
        if c {
            a
        } else {
            b
        }
    }
}

/// `addcmul(x, t1, t2, value) = x + value * t1 * t2`, with the last multiply and the add
/// fused (one rounding) for floats: PyTorch's CPU kernel computes `fma(value * t1, t2, x)`
/// (measured with torch 2.15: float32 `addcmul(-13, -0.72, -18)` is `-0.039999485`).
#[derive(Clone, Copy, Debug)]
pub struct Addcmul<T>(pub T);
impl<T: NumElement> Map3<T, T, T, T> for Addcmul<T> {
    #[inline(always)]
    fn call(&self, x: T, a: T, b: T) -> T {
        self.0.mul(a).mul_add(b, x)
    }
}

macro_rules! binary_api {
    ($name:ident, $name_out:ident, $f:ident, $bound:ident, $doc:literal) => {
        #[doc = concat!("`", $doc, "` with broadcasting into a new tensor (default [`ExecConfig`]).")]
        pub fn $name<T: $bound>(a: &Tensor<T>, b: &Tensor<T>) -> Result<Tensor<T>> {
            map2(a, b, &$f, &ExecConfig::default())
        }
        #[doc = concat!("`", $doc, "` with broadcasting into `out`.")]
        pub fn $name_out<T: $bound>(a: &Tensor<T>, b: &Tensor<T>, out: &Tensor<T>) -> Result<()> {
            map2_out(a, b, out, &$f, &ExecConfig::default())
        }
    };
}
binary_api!(add, add_out, Add, NumElement, "a + b");
binary_api!(sub, sub_out, Sub, NumElement, "a - b");
binary_api!(mul, mul_out, Mul, NumElement, "a * b");
binary_api!(div, div_out, Div, FloatElement, "a / b");
binary_api!(maximum, maximum_out, Maximum, NumElement, "maximum(a, b)");
binary_api!(minimum, minimum_out, Minimum, NumElement, "minimum(a, b)");

macro_rules! unary_api {
    ($name:ident, $f:ident, $bound:ident) => {
        #[doc = concat!("[`", stringify!($f), "`] into a new tensor (default [`ExecConfig`]).")]
        pub fn $name<T: $bound>(a: &Tensor<T>) -> Result<Tensor<T>> {
            map1(a, &$f, &ExecConfig::default())
        }
    };
}
unary_api!(neg, Neg, NumElement);
unary_api!(abs, Abs, NumElement);
unary_api!(relu, Relu, NumElement);
unary_api!(exp, Exp, FloatElement);

/// `where(cond, a, b)` with broadcasting.
pub fn where_<T: Element>(cond: &Tensor<bool>, a: &Tensor<T>, b: &Tensor<T>) -> Result<Tensor<T>> {
    map3(cond, a, b, &Where, &ExecConfig::default())
}

/// `x + value * t1 * t2` with broadcasting.
pub fn addcmul<T: NumElement>(
    x: &Tensor<T>,
    t1: &Tensor<T>,
    t2: &Tensor<T>,
    value: T,
) -> Result<Tensor<T>> {
    map3(x, t1, t2, &Addcmul(value), &ExecConfig::default())
}

impl<T: Element> Tensor<T> {
    /// Copies `src` into this view (broadcasting `src`, casting its dtype): PyTorch's `copy_`.
    /// Writes through shared storage are checked at run time (see [`crate::tensor::Storage`]).
    pub fn copy_<S: Element>(&self, src: &Tensor<S>) -> Result<()> {
        copy_into(self, src, &ExecConfig::default())
    }

    /// A new tensor with the same values and element type `U` (layout as `clone`).
    pub fn cast<U: Element>(&self) -> Result<Tensor<U>> {
        let strides = crate::tensor::preserve_strides(&self.sizes, &self.strides);
        let out = Tensor::<U>::uninit(&self.sizes, &strides)?;
        copy_into(&out, self, &ExecConfig::default())?;
        Ok(out)
    }

    /// PyTorch's `clone()` (preserve format): a copy with the same strides when this tensor is
    /// non-overlapping and dense, else dense strides in this tensor's stride order.
    pub fn deep_clone(&self) -> Result<Tensor<T>> {
        self.cast::<T>()
    }

    /// A copy laid out in `format` (`Preserve` behaves like [`Tensor::deep_clone`]).
    pub fn clone_as(&self, format: MemoryFormat) -> Result<Tensor<T>> {
        if format == MemoryFormat::Preserve {
            return self.deep_clone();
        }
        let strides = crate::tensor::dense_strides_for(&self.sizes, format)?;
        let out = Tensor::<T>::uninit(&self.sizes, &strides)?;
        copy_into(&out, self, &ExecConfig::default())?;
        Ok(out)
    }

    /// PyTorch's `contiguous()`: this view if it is already row-major contiguous, else a
    /// row-major copy. [`Tensor::contiguous_in`] takes the memory format.
    pub fn contiguous(&self) -> Result<Tensor<T>> {
        self.contiguous_in(MemoryFormat::Contiguous)
    }

    /// PyTorch's `contiguous(memory_format)`: this view if it is already contiguous in
    /// `format` (ambiguous strides are kept as they are), else a copy.
    pub fn contiguous_in(&self, format: MemoryFormat) -> Result<Tensor<T>> {
        if format == MemoryFormat::Preserve || self.is_contiguous(format) {
            return Ok(self.clone());
        }
        self.clone_as(format)
    }

    /// PyTorch's `to(memory_format=format)`: this view if its suggested memory format already
    /// is `format`, else a copy with `format`'s strides. Unlike [`Tensor::contiguous_in`], this
    /// rewrites ambiguous strides (e.g. a contiguous `[2,1,4,4]` becomes `[16,1,4,1]`).
    pub fn to(&self, format: MemoryFormat) -> Result<Tensor<T>> {
        if format == MemoryFormat::Preserve || self.suggest_memory_format() == format {
            return Ok(self.clone());
        }
        self.clone_as(format)
    }
}

#[cfg(test)]
mod tests {
    use super::super::exec::prepare;
    use super::super::loops::relayout_input;
    use super::*;
    use crate::tensor::borrow_all;

    /// The fast paths are taken where intended (the kernels' results are checked against the
    /// naive reference in `tests/kernels.rs`): the `[c, h, w]` operand of a channels-last add
    /// is re-laid out once into a dense buffer and the plan coalesces to one long row per
    /// image; the channels-last operand itself is left alone.
    #[test]
    fn channels_last_broadcast_operand_is_relaid_out() {
        let a = Tensor::<f32>::zeros(&[8, 16, 5, 7])
            .unwrap()
            .to(MemoryFormat::ChannelsLast)
            .unwrap();
        let b = Tensor::<f32>::zeros(&[16, 5, 7]).unwrap();
        let plan = build(None, 4, &[operand(&a), operand(&b)]).unwrap();
        let out = alloc::<f32>(&plan).unwrap();
        let raws = [out.storage.raw(), a.storage.raw(), b.storage.raw()];
        let mut p = prepare(&plan, &raws, 1).unwrap();
        let _g = borrow_all(&raws, 1).unwrap();
        let cfg = ExecConfig::default().with_grain_size(16);
        assert!(relayout_input::<f32, 3>(&mut p, 1, 4, &cfg).is_none());
        let buf = relayout_input::<f32, 3>(&mut p, 2, 4, &cfg).expect("re-laid out");
        assert_eq!(buf.len(), 16 * 5 * 7);
        assert_eq!(p.shape.as_slice(), &[16 * 5 * 7, 8]);
        assert_eq!(p.strides[0], [4, 4, 4]);
        assert_eq!(p.strides[1][2], 0);
        // below the grain, or reused fewer than 4 times: unchanged
        let mut p = prepare(&plan, &raws, 1).unwrap();
        assert!(relayout_input::<f32, 3>(&mut p, 2, 4, &ExecConfig::default()).is_none());
        let a3 = Tensor::<f32>::zeros(&[3, 16, 5, 7])
            .unwrap()
            .to(MemoryFormat::ChannelsLast)
            .unwrap();
        let plan = build(None, 4, &[operand(&a3), operand(&b)]).unwrap();
        let out = alloc::<f32>(&plan).unwrap();
        let raws = [out.storage.raw(), a3.storage.raw(), b.storage.raw()];
        let mut p = prepare(&plan, &raws, 1).unwrap();
        assert!(relayout_input::<f32, 3>(&mut p, 2, 4, &cfg).is_none());
    }
}
