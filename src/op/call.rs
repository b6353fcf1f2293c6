//! An op call through the TensorIterator build: dtypes, checks, given outputs, the plan.
//! Written once over [`Int`], so the symbolic trace and the eager call decide alike.

use super::registry::{check_where_condition, Op, Promotion};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::int::Int;
use crate::iter::{
    result_type, torch_name, Plan, TensorIteratorConfig, TensorSpec, TypeConfig, TypeOperand,
};
use crate::layout;
use crate::tensor::Scalar;

/// One argument of an op call.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg<I> {
    /// A tensor; its `dtype` must be set.
    Tensor(TensorSpec<I>),
    /// A Python number (only where [`OpDef::scalar_args`](super::OpDef::scalar_args) allows).
    Scalar(Scalar),
}

/// Where the result goes.
#[derive(Clone, Debug, PartialEq)]
pub enum Dest<I> {
    /// A new tensor, laid out by the build.
    New,
    /// A given `out=` tensor (resized and restrided by the build when its shape differs).
    Out(TensorSpec<I>),
    /// In place: input 0 is the output (it must have the broadcast shape).
    InPlace,
}

/// What an op call decided: the plan and the dtypes.
#[derive(Clone, Debug, PartialEq)]
pub struct OpPlan<I> {
    /// The iteration plan; operands are the output, then the inputs in argument order.
    pub plan: Plan<I>,
    /// The dtype the op computes in (inputs are converted to it).
    pub compute_dtype: DType,
    /// The output's dtype.
    pub out_dtype: DType,
    /// The iterator's inputs. Python numbers appear as 0-dim tensors; inputs of another dtype
    /// than the computation dtype appear as the copies PyTorch makes (`storage: None`).
    pub inputs: Vec<TensorSpec<I>>,
    /// Per input: `Some(dtype)` when the iterator reads a converted copy of the argument,
    /// `None` when it reads the argument itself.
    pub converted: Vec<Option<DType>>,
}

impl<I: Int> OpPlan<I> {
    /// The output's sizes (user order).
    pub fn out_sizes(&self) -> &[I] {
        &self.plan.broadcast_shape
    }
    /// The output's strides in elements (user order): allocated, kept, or restrided.
    pub fn out_strides(&self) -> &[I] {
        &self.plan.output_strides[0]
    }
}

/// The dtype of a Python number as PyTorch wraps it.
pub fn scalar_dtype(s: Scalar) -> DType {
    match s {
        Scalar::Bool(_) => DType::Bool,
        Scalar::Int(_) => DType::I64,
        Scalar::Float(_) => DType::F64,
    }
}

fn arg_dtype<I>(a: &Arg<I>, k: usize) -> Result<DType> {
    match a {
        Arg::Tensor(t) => t
            .dtype
            .ok_or_else(|| Error::invalid(format!("argument {k} has no dtype"))),
        Arg::Scalar(s) => Ok(scalar_dtype(*s)),
    }
}

fn arg_spec<I: Int>(a: &Arg<I>) -> TensorSpec<I> {
    match a {
        Arg::Tensor(t) => t.clone(),
        Arg::Scalar(s) => TensorSpec::wrapped_number(scalar_dtype(*s)),
    }
}

fn type_operand<I>(a: &Arg<I>, dtype: DType) -> TypeOperand {
    match a {
        Arg::Tensor(t) => TypeOperand {
            dtype,
            zero_dim: t.sizes.is_empty(),
            wrapped_number: t.wrapped_number,
        },
        Arg::Scalar(_) => TypeOperand {
            dtype,
            zero_dim: true,
            wrapped_number: true,
        },
    }
}

/// `where`'s Python integer must fit the integral result type it is converted to (PyTorch's
/// `checked_convert` when it makes the scalar a tensor: unsigned types also take negatives
/// down to `-max`). The arithmetic ops and comparisons do not check: PyTorch wraps their
/// integer scalar into the computation dtype (`uint8 + 1000` adds 232, `uint8 < 1048576`
/// compares with 0), which the kernels and the reference do when they narrow it.
fn check_scalar_fits(s: Scalar, dtype: DType) -> Result<()> {
    let Scalar::Int(v) = s else { return Ok(()) };
    let (lo, hi) = match dtype {
        DType::U8 => (-255, 255),
        DType::I32 => (i32::MIN as i64, i32::MAX as i64),
        _ => return Ok(()),
    };
    if v < lo || v > hi {
        return Err(Error::invalid(format!(
            "value cannot be converted to type {} without overflow",
            dtype.name()
        )));
    }
    Ok(())
}

/// `t.to(dtype)` as PyTorch copies it: a fresh tensor with `empty_like`'s strides.
fn converted_copy<I: Int>(t: &TensorSpec<I>, dtype: DType) -> Result<TensorSpec<I>> {
    let strides = layout::empty_like_strides(&t.sizes, &t.strides)?;
    Ok(TensorSpec::typed(t.sizes.clone(), strides, dtype))
}

/// The TensorIterator dtype flags an op family uses; `given` is the dtype of a given output.
fn type_config(p: Promotion, given: Option<DType>) -> TypeConfig {
    let promoted = TypeConfig {
        promote_inputs_to_common_dtype: true,
        cast_common_dtype_to_outputs: true,
        enforce_safe_casting_to_output: true,
        check_all_same_dtype: false,
        ..TypeConfig::default()
    };
    match p {
        Promotion::SameAsInput => TypeConfig::default(),
        Promotion::Default => promoted,
        Promotion::IntToFloat => TypeConfig {
            promote_integer_inputs_to_float: true,
            ..promoted
        },
        Promotion::Comparison => TypeConfig {
            promote_inputs_to_common_dtype: true,
            cast_common_dtype_to_outputs: given.is_some_and(|d| d != DType::Bool),
            check_all_same_dtype: false,
            static_dtype: Some(DType::Bool),
            ..TypeConfig::default()
        },
        Promotion::LogicalNot => TypeConfig {
            check_all_same_dtype: false,
            static_dtype: Some(DType::Bool),
            ..TypeConfig::default()
        },
        Promotion::Where => TypeConfig {
            check_all_same_dtype: false,
            ..TypeConfig::default()
        },
    }
}

/// Plans `op(args)` into `dest` as PyTorch does, with PyTorch's errors (see the
/// [module docs](super)): the checks before the build, the build (overlap, broadcast, output
/// shape, dtypes, layout), the kernel's dtype support.
pub fn plan_op<I: Int>(op: Op, args: &[Arg<I>], dest: &Dest<I>) -> Result<OpPlan<I>> {
    let def = op.def();
    if args.len() != def.arity {
        return Err(Error::invalid(format!(
            "{op} takes {} arguments, got {}",
            def.arity,
            args.len()
        )));
    }
    for (k, a) in args.iter().enumerate() {
        if matches!(a, Arg::Scalar(_)) && !def.scalar_args.contains(&k) {
            return Err(Error::invalid(format!(
                "{op}: argument {k} must be a tensor, not a Python number"
            )));
        }
    }
    match dest {
        Dest::Out(_) if !def.out => return Err(Error::invalid(format!("{op} has no out= form"))),
        Dest::InPlace if !def.inplace => {
            return Err(Error::invalid(format!("{op} has no in-place form")))
        }
        _ => {}
    }
    let dtypes = args
        .iter()
        .enumerate()
        .map(|(k, a)| arg_dtype(a, k))
        .collect::<Result<Vec<_>>>()?;
    (def.check)(&dtypes)?;

    // The output operand.
    let out_spec = match dest {
        Dest::New => None,
        Dest::Out(t) => Some(t.clone()),
        Dest::InPlace => match &args[0] {
            Arg::Tensor(t) if t.storage.is_some() || t.tensor_id.is_some() => Some(t.clone()),
            Arg::Tensor(_) => {
                return Err(Error::invalid(format!(
                    "in-place {op}: input 0 needs its storage for the aliasing checks"
                )))
            }
            Arg::Scalar(_) => return Err(Error::invalid("in-place op on a Python number")),
        },
    };
    let given = match &out_spec {
        Some(t) => Some(
            t.dtype
                .ok_or_else(|| Error::invalid(format!("{op}: the output has no dtype")))?,
        ),
        None => None,
    };

    // The iterator's inputs (where: PyTorch's conversions first).
    let mut inputs: Vec<TensorSpec<I>> = args.iter().map(arg_spec).collect();
    let mut converted = vec![None; args.len()];
    let mut tc = type_config(def.promotion, given);
    if def.promotion == Promotion::Where {
        let ops = [
            type_operand(&args[1], dtypes[1]),
            type_operand(&args[2], dtypes[2]),
        ];
        let rt = result_type(&ops).unwrap_or(DType::F32);
        if let Some(g) = given {
            if g != rt {
                return Err(Error::DType {
                    message: format!(
                        "Expected out type to be {} but got {}",
                        torch_name(rt),
                        torch_name(g)
                    ),
                });
            }
        }
        for k in 1..3 {
            match &args[k] {
                Arg::Scalar(s) => {
                    check_scalar_fits(*s, rt)?;
                    inputs[k] = TensorSpec::typed(Vec::new(), Vec::new(), rt);
                    converted[k] = Some(rt);
                }
                Arg::Tensor(t) if dtypes[k] != rt => {
                    inputs[k] = converted_copy(t, rt)?;
                    converted[k] = Some(rt);
                }
                Arg::Tensor(_) => {}
            }
        }
        if dtypes[0] == DType::U8 {
            if let Arg::Tensor(t) = &args[0] {
                inputs[0] = converted_copy(t, DType::Bool)?;
                converted[0] = Some(DType::Bool);
            }
        }
        check_where_condition(dtypes[0])?;
        tc.static_dtype = Some(rt);
    }

    let mut config = TensorIteratorConfig::new().types(tc);
    config = match out_spec {
        Some(t) => config.add_output(t),
        None => config.add_undefined_output(1),
    };
    for t in &inputs {
        config = config.add_input(t.clone());
    }
    let (plan, types) = config.build_typed()?;
    let types = types.ok_or_else(|| Error::invalid("internal: typed build without types"))?;
    let out_dtype = types.dtypes[0];
    for &j in &types.promoted_inputs {
        let d = types.dtypes[1 + j];
        inputs[j] = converted_copy(&inputs[j], d)?;
        converted[j] = Some(d);
    }
    let compute_dtype = match def.promotion {
        Promotion::Where => out_dtype,
        _ => types
            .common_dtype
            .ok_or_else(|| Error::invalid(format!("internal: {op} has no common dtype")))?,
    };
    // Kernel-time checks (PyTorch dispatches on the computation dtype after the build).
    if compute_dtype == DType::Bool && !def.bool_kernel {
        let kernel = match op {
            Op::Addcmul => "addcmul_cpu_out",
            Op::Clamp => "clamp_cpu",
            _ => "abs_cpu",
        };
        return Err(Error::DType {
            message: format!("\"{kernel}\" not implemented for 'Bool'"),
        });
    }
    Ok(OpPlan {
        plan,
        compute_dtype,
        out_dtype,
        inputs,
        converted,
    })
}
