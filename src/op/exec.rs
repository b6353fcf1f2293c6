//! Executing an op call on real tensors of any of the six dtypes.
//!
//! The call is planned by [`plan_op`] (all of PyTorch's checks and layout decisions), then:
//! inputs the plan reads as converted copies (promotion, `where`'s conversions, Python
//! numbers) are materialized with exactly the layout the plan assumed; the output is the
//! allocated tensor, the given `out` (replaced by a new tensor with the planned layout when
//! PyTorch would resize it), or input 0 (in place); the kernel of the op table runs over the
//! computation dtype. When the output's dtype differs from what the kernel writes (an `out=`
//! or in-place tensor of another dtype), the kernel writes a temporary that is then copied
//! into the output with a cast, as PyTorch's CPU path does.

use super::call::{plan_op, Arg, Dest, OpPlan};
use super::kernels;
use super::registry::Op;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::iter::TensorSpec;
use crate::kernel::{copy_into, ExecConfig};
use crate::tensor::{Element, Scalar, Tensor};

/// A tensor of any of the six dtypes.
#[derive(Clone, Debug)]
#[allow(missing_docs)] // one variant per dtype
pub enum AnyTensor {
    Bool(Tensor<bool>),
    U8(Tensor<u8>),
    I32(Tensor<i32>),
    I64(Tensor<i64>),
    F32(Tensor<f32>),
    F64(Tensor<f64>),
}

/// Element types that can be taken out of an [`AnyTensor`].
pub trait AnyElement: Element {
    /// The tensor, if it holds this element type.
    fn get(t: &AnyTensor) -> Option<&Tensor<Self>>;
    /// Wraps a tensor.
    fn wrap(t: Tensor<Self>) -> AnyTensor;
}

macro_rules! any_element {
    ($t:ty, $v:ident) => {
        impl AnyElement for $t {
            fn get(t: &AnyTensor) -> Option<&Tensor<Self>> {
                match t {
                    AnyTensor::$v(x) => Some(x),
                    _ => None,
                }
            }
            fn wrap(t: Tensor<Self>) -> AnyTensor {
                AnyTensor::$v(t)
            }
        }
        impl From<Tensor<$t>> for AnyTensor {
            fn from(t: Tensor<$t>) -> AnyTensor {
                AnyTensor::$v(t)
            }
        }
    };
}
any_element!(bool, Bool);
any_element!(u8, U8);
any_element!(i32, I32);
any_element!(i64, I64);
any_element!(f32, F32);
any_element!(f64, F64);

/// `$body` with `$t` bound to the tensor inside an [`AnyTensor`].
macro_rules! each {
    ($x:expr, |$t:ident| $body:expr) => {
        match $x {
            AnyTensor::Bool($t) => $body,
            AnyTensor::U8($t) => $body,
            AnyTensor::I32($t) => $body,
            AnyTensor::I64($t) => $body,
            AnyTensor::F32($t) => $body,
            AnyTensor::F64($t) => $body,
        }
    };
}

/// `$body` with `$T` bound to the Rust element type of a dtype.
macro_rules! with_dtype {
    ($d:expr, |$T:ident| $body:expr) => {
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
            DType::F32 => {
                type $T = f32;
                $body
            }
            DType::F64 => {
                type $T = f64;
                $body
            }
        }
    };
}
/// `$body` with `$T` bound to the Rust type of a floating dtype; `$fallback` (with the
/// dtype bound to `$other`) for the others.
macro_rules! with_float {
    ($d:expr, |$T:ident| $body:expr, $other:ident => $fallback:expr) => {
        match $d {
            DType::F32 => {
                type $T = f32;
                $body
            }
            DType::F64 => {
                type $T = f64;
                $body
            }
            $other => $fallback,
        }
    };
}
pub(crate) use each;
pub(crate) use with_dtype;
pub(crate) use with_float;

impl AnyTensor {
    /// The dtype.
    pub fn dtype(&self) -> DType {
        each!(self, |t| t.dtype())
    }
    /// Sizes.
    pub fn sizes(&self) -> &[i64] {
        each!(self, |t| t.sizes())
    }
    /// Strides in elements.
    pub fn strides(&self) -> &[i64] {
        each!(self, |t| t.strides())
    }
    /// Storage offset in elements.
    pub fn storage_offset(&self) -> i64 {
        each!(self, |t| t.storage_offset())
    }
    /// The typed tensor, if it holds `T`.
    pub fn typed<T: AnyElement>(&self) -> Option<&Tensor<T>> {
        T::get(self)
    }
    /// `as_strided(sizes, strides, offset)`: a validated view of the same storage.
    pub fn as_strided(&self, sizes: &[i64], strides: &[i64], offset: i64) -> Result<AnyTensor> {
        each!(self, |t| t
            .as_strided(sizes, strides, offset)
            .map(AnyTensor::from))
    }
    /// The element at `index`, widened.
    pub fn get(&self, index: &[i64]) -> Result<Scalar> {
        each!(self, |t| t.get(index).map(|v| v.to_scalar()))
    }
    /// A new tensor of `sizes` and `strides` (dense), offset 0, uninitialized storage that the
    /// caller fills completely.
    fn uninit(dtype: DType, sizes: &[i64], strides: &[i64]) -> Result<AnyTensor> {
        with_dtype!(dtype, |T| Ok(T::wrap(Tensor::<T>::uninit(sizes, strides)?)))
    }
    /// A 0-dim tensor holding `s` cast to `dtype`.
    fn scalar(dtype: DType, s: Scalar) -> Result<AnyTensor> {
        with_dtype!(dtype, |T| Ok(T::wrap(Tensor::<T>::from_vec(
            vec![T::from_scalar(s)],
            &[]
        )?)))
    }
    /// Copies `src` into this tensor (broadcast, cast).
    fn copy_from(&self, src: &AnyTensor, cfg: &ExecConfig) -> Result<()> {
        each!(self, |d| each!(src, |s| copy_into(d, s, cfg)))
    }
    /// The build's view of this tensor as argument `k` (its identity is its position).
    fn spec(&self, k: u64) -> TensorSpec<i64> {
        let (id, bytes) = each!(self, |t| (
            t.storage().id() as u64,
            (t.storage().len() * self.dtype().element_size()) as i64
        ));
        TensorSpec::typed(self.sizes().to_vec(), self.strides().to_vec(), self.dtype())
            .with_offset(self.storage_offset())
            .with_storage(id, bytes)
            .with_tensor_id(k)
    }
}

/// An argument of [`call`].
#[derive(Clone, Debug)]
pub enum Input {
    /// A tensor.
    Tensor(AnyTensor),
    /// A Python number.
    Scalar(Scalar),
}

impl From<AnyTensor> for Input {
    fn from(t: AnyTensor) -> Input {
        Input::Tensor(t)
    }
}

/// Where [`call`] writes.
#[derive(Debug)]
pub enum Output<'a> {
    /// A new tensor.
    New,
    /// `out=`: written in place when it has the broadcast shape, else replaced by a new tensor
    /// with the planned sizes and strides (PyTorch resizes and restrides it).
    Out(&'a mut AnyTensor),
    /// In place into input 0.
    InPlace,
}

/// Identity of the output in the build: distinct from every input's (`0..arity`).
const OUT_ID: u64 = u64::MAX;

/// Runs `op(inputs)` into `output` and returns the output tensor (for [`Output::Out`], also
/// left in `*out`). Errors are those of [`plan_op`], then the kernels' run-time checks.
pub fn call(op: Op, inputs: &[Input], output: Output<'_>, cfg: &ExecConfig) -> Result<AnyTensor> {
    let args: Vec<Arg<i64>> = inputs
        .iter()
        .enumerate()
        .map(|(k, a)| match a {
            Input::Tensor(t) => Arg::Tensor(t.spec(k as u64)),
            Input::Scalar(s) => Arg::Scalar(*s),
        })
        .collect();
    let dest = match &output {
        Output::New => Dest::New,
        Output::Out(t) => Dest::Out(t.spec(OUT_ID)),
        Output::InPlace => Dest::InPlace,
    };
    let mut p = plan_op(op, &args, &dest)?;
    // The output tensor.
    let out = match output {
        Output::New => AnyTensor::uninit(p.out_dtype, p.out_sizes(), p.out_strides())?,
        Output::Out(t) => {
            if t.sizes() != p.out_sizes() {
                *t = AnyTensor::uninit(p.out_dtype, p.out_sizes(), p.out_strides())?;
                // Re-plan against the new tensor (its offset and storage are new).
                p = plan_op(op, &args, &Dest::Out(t.spec(OUT_ID)))?;
            }
            t.clone()
        }
        Output::InPlace => match &inputs[0] {
            Input::Tensor(t) => t.clone(),
            Input::Scalar(_) => return Err(Error::invalid("in-place op on a Python number")),
        },
    };
    let kernel_dtype = kernels::kernel_out_dtype(op, p.compute_dtype);
    if out.dtype() != kernel_dtype {
        // The kernel writes a temporary of its own dtype, copied into `out` with a cast.
        let q = plan_op(op, &args, &Dest::New)?;
        let tmp = AnyTensor::uninit(q.out_dtype, q.out_sizes(), q.out_strides())?;
        let xs = materialize(inputs, &q.inputs, &q.converted, cfg)?;
        kernels::run(op, q.compute_dtype, &q.plan, &tmp, &xs, cfg)?;
        out.copy_from(&tmp, cfg)?;
        return Ok(out);
    }
    let xs = materialize(inputs, &p.inputs, &p.converted, cfg)?;
    kernels::run(op, p.compute_dtype, &p.plan, &out, &xs, cfg)?;
    Ok(out)
}

/// Runs `op(inputs)` as a new result would be planned (`Dest::New`, so ops without an
/// `out=` form qualify) but writes it into `out`, a dense tensor at offset 0 laid out
/// exactly as planned (checked) over storage the caller owns (program execution reuses
/// dead buffers this way).
pub(crate) fn call_into(op: Op, inputs: &[Input], out: &AnyTensor, cfg: &ExecConfig) -> Result<()> {
    let args: Vec<Arg<i64>> = inputs
        .iter()
        .enumerate()
        .map(|(k, a)| match a {
            Input::Tensor(t) => Arg::Tensor(t.spec(k as u64)),
            Input::Scalar(s) => Arg::Scalar(*s),
        })
        .collect();
    let p = plan_op(op, &args, &Dest::New)?;
    if out.sizes() != p.out_sizes()
        || out.strides() != p.out_strides()
        || out.dtype() != p.out_dtype
        || out.storage_offset() != 0
    {
        return Err(Error::invalid(format!(
            "{op}: the given output ({:?}, {:?}, offset {}, {}) is not the planned one ({:?}, {:?}, {})",
            out.sizes(),
            out.strides(),
            out.storage_offset(),
            out.dtype(),
            p.out_sizes(),
            p.out_strides(),
            p.out_dtype
        )));
    }
    let xs = materialize(inputs, &p.inputs, &p.converted, cfg)?;
    let kernel_dtype = kernels::kernel_out_dtype(op, p.compute_dtype);
    if out.dtype() != kernel_dtype {
        let tmp = AnyTensor::uninit(kernel_dtype, p.out_sizes(), p.out_strides())?;
        kernels::run(op, p.compute_dtype, &p.plan, &tmp, &xs, cfg)?;
        return out.copy_from(&tmp, cfg);
    }
    kernels::run(op, p.compute_dtype, &p.plan, out, &xs, cfg)
}

/// Runs `op(inputs)` into `out` from a plan made ahead of time instead of planning: a
/// program specialization's plan for the step (built for a new result, [`Dest::New`], over
/// the program's layouts), instantiated at the binding. The program's layouts put a tensor
/// argument at the offset its plan operand says; a real tensor may start elsewhere in its
/// storage (an input at an offset), so each operand's offsets are shifted to the real
/// tensor's. Every argument must have the layout the plan's input specs say (checked), and
/// the kernels validate the plan against the real storages before running, as for any plan.
pub(crate) fn call_planned(
    op: Op,
    p: &OpPlan<i64>,
    inputs: &[Input],
    out: &AnyTensor,
    cfg: &ExecConfig,
) -> Result<()> {
    let bad = |what: String| Error::invalid(format!("{op}: the stored plan {what}"));
    if inputs.len() != p.inputs.len() || p.plan.operands.len() != 1 + inputs.len() {
        return Err(bad(format!(
            "has {} inputs, the call {}",
            p.inputs.len(),
            inputs.len()
        )));
    }
    if out.sizes() != p.out_sizes()
        || out.strides() != p.out_strides()
        || out.dtype() != p.out_dtype
    {
        return Err(bad(format!(
            "writes sizes {:?}, strides {:?} of {}; the output is {:?}, {:?} of {}",
            p.out_sizes(),
            p.out_strides(),
            p.out_dtype,
            out.sizes(),
            out.strides(),
            out.dtype()
        )));
    }
    let xs = materialize(inputs, &p.inputs, &p.converted, cfg)?;
    let mut shift = Vec::with_capacity(xs.len() + 1);
    shift.push(out.storage_offset());
    for (x, spec) in xs.iter().zip(&p.inputs) {
        if x.sizes() != spec.sizes.as_slice() || x.strides() != spec.strides.as_slice() {
            return Err(bad(format!(
                "reads sizes {:?}, strides {:?}; the argument is {:?}, {:?}",
                spec.sizes,
                spec.strides,
                x.sizes(),
                x.strides()
            )));
        }
        shift.push(
            x.storage_offset()
                .checked_sub(spec.storage_offset)
                .ok_or_else(|| Error::overflow("a plan's storage offset"))?,
        );
    }
    let shifted;
    let plan = if shift.iter().all(|s| *s == 0) {
        &p.plan
    } else {
        let mut q = p.plan.clone();
        q.shift_offsets(&shift)?;
        shifted = q;
        &shifted
    };
    let kernel_dtype = kernels::kernel_out_dtype(op, p.compute_dtype);
    if out.dtype() != kernel_dtype {
        let tmp = AnyTensor::uninit(kernel_dtype, p.out_sizes(), p.out_strides())?;
        let mut q = plan.clone();
        q.operands[0].offset = p.plan.operands[0].offset;
        kernels::run(op, p.compute_dtype, &q, &tmp, &xs, cfg)?;
        return out.copy_from(&tmp, cfg);
    }
    kernels::run(op, p.compute_dtype, plan, out, &xs, cfg)
}

/// Runs `op`'s kernel over a float32 plan on bare storages (the ahead-of-time layer's
/// specializations; `op` must compute and write float32, see `aot::is_spec_op`). The plan
/// addresses the storages by its own offsets and strides; it is validated against them.
pub fn run_kernel_f32(
    op: Op,
    plan: &crate::iter::Plan<i64>,
    out: &crate::tensor::Storage<f32>,
    inputs: &[&crate::tensor::Storage<f32>],
    cfg: &ExecConfig,
) -> Result<()> {
    let whole = |s: &crate::tensor::Storage<f32>| -> Result<AnyTensor> {
        Ok(Tensor::from_storage(s.clone(), &[s.len() as i64], &[1], 0)?.into())
    };
    let xs = inputs
        .iter()
        .map(|s| whole(s))
        .collect::<Result<Vec<_>>>()?;
    kernels::run(op, DType::F32, plan, &whole(out)?, &xs, cfg)
}

/// The tensors the plan reads: the arguments themselves, or their converted copies laid out
/// exactly as the plan's input specs say.
fn materialize(
    inputs: &[Input],
    specs: &[TensorSpec<i64>],
    converted: &[Option<DType>],
    cfg: &ExecConfig,
) -> Result<Vec<AnyTensor>> {
    inputs
        .iter()
        .zip(specs)
        .zip(converted)
        .map(|((a, spec), conv)| {
            let dtype = spec
                .dtype
                .ok_or_else(|| Error::invalid("internal: untyped input spec"))?;
            match (a, conv) {
                (Input::Tensor(t), None) => Ok(t.clone()),
                (Input::Tensor(t), Some(_)) => {
                    let copy = AnyTensor::uninit(dtype, &spec.sizes, &spec.strides)?;
                    copy.copy_from(t, cfg)?;
                    Ok(copy)
                }
                (Input::Scalar(s), _) => AnyTensor::scalar(dtype, *s),
            }
        })
        .collect()
}
