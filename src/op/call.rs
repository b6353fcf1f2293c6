//! An op call through the TensorIterator build: dtypes, checks, given outputs, the plan.
//! Written once over [`Int`], so the symbolic trace and the eager call decide alike.

use super::registry::{check_where_condition, Op, Promotion};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::int::Int;
use crate::iter::{
    result_type, torch_name, IterOptions, Plan, TensorIteratorConfig, TensorSpec, TypeConfig,
    TypeOperand,
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

/// The Python numbers of a call by argument position, as the checks read them: whether a
/// number is given and its kind (its wrapped dtype) are free to ask; reading its value
/// ([`Numbers::value`]) is recorded. A program may pass a size as a Python number
/// (`div(x, d)`, `clamp(x, max=n-1)`: PyTorch's SymInt as a Scalar); its trace plans the
/// call at the size's hint and guards the numbers whose value a check read
/// ([`plan_op_reads`]), as PyTorch's `guard_int` specializes a SymInt whose value a meta
/// function reads. Where no check reads the value (the layout and the dtypes never do), the
/// number stays symbolic.
#[derive(Debug)]
pub struct Numbers {
    values: Vec<Option<Scalar>>,
    read: std::cell::Cell<u64>,
}

impl Numbers {
    /// The numbers of `args` (`None` for a tensor).
    pub fn of<I>(args: &[Arg<I>]) -> Numbers {
        Numbers::new(
            args.iter()
                .map(|a| match a {
                    Arg::Scalar(s) => Some(*s),
                    Arg::Tensor(_) => None,
                })
                .collect(),
        )
    }
    /// Numbers by position (`None` where the argument is a tensor).
    pub fn new(values: Vec<Option<Scalar>>) -> Numbers {
        Numbers {
            values,
            read: std::cell::Cell::new(0),
        }
    }
    /// Whether argument `k` is a Python number.
    pub fn given(&self, k: usize) -> bool {
        matches!(self.values.get(k), Some(Some(_)))
    }
    /// The dtype argument `k` is wrapped as, if it is a number ([`scalar_dtype`]).
    pub fn kind(&self, k: usize) -> Option<DType> {
        self.values.get(k).copied().flatten().map(scalar_dtype)
    }
    /// The value of argument `k`, if it is a number; recorded as read.
    pub fn value(&self, k: usize) -> Option<Scalar> {
        let v = self.values.get(k).copied().flatten();
        if v.is_some() {
            self.read.set(self.read.get() | 1u64 << k.min(63));
        }
        v
    }
    /// The positions whose value was read.
    pub fn read(&self) -> Vec<usize> {
        (0..self.values.len().min(64))
            .filter(|k| self.read.get() & (1u64 << k) != 0)
            .collect()
    }
    /// [`check_scalar_fits`] for argument `k` (if it is a number), reading its value only
    /// where the value decides.
    fn check_fits(&self, k: usize, dtype: DType) -> Result<()> {
        match self.kind(k) {
            Some(kind) => check_fits(kind, dtype, || self.value(k).unwrap_or(Scalar::Int(0))),
            None => Ok(()),
        }
    }
}

/// A Python number converted to a tensor's dtype with PyTorch's `checked_convert` (where
/// `where`, `masked_fill` and the scalar parameters convert theirs): an integer must fit the
/// target's range (unsigned types also take negatives down to `-max`), a float converted to
/// an integer type must be finite and in range, a finite float converted to `float32` must
/// not exceed its range. The arithmetic ops and comparisons do not check: PyTorch wraps their
/// integer scalar into the computation dtype (`uint8 + 1000` adds 232, `uint8 < 1048576`
/// compares with 0), which the kernels and the reference do when they narrow it.
pub fn check_scalar_fits(s: Scalar, dtype: DType) -> Result<()> {
    check_fits(scalar_dtype(s), dtype, || s)
}

/// [`check_scalar_fits`] of a number of wrapped dtype `kind`, asking `value` only where the
/// value decides (an integer into `uint8` or `int32`, a float into an integer or `float32`).
fn check_fits(kind: DType, dtype: DType, value: impl FnOnce() -> Scalar) -> Result<()> {
    let fits = match (kind, dtype) {
        (DType::Bool, _) | (_, DType::Bool) | (_, DType::F64) => true,
        (DType::I64, DType::U8) => matches!(value(), Scalar::Int(v) if (-255..=255).contains(&v)),
        (DType::I64, DType::I32) => matches!(value(), Scalar::Int(v) if i32::try_from(v).is_ok()),
        (DType::I64, _) => true,
        (_, d) => match value() {
            Scalar::Float(f) if d == DType::F32 => !f.is_finite() || f.abs() <= f32::MAX as f64,
            Scalar::Float(f) => {
                let (lo, hi) = match d {
                    DType::U8 => (0.0, 255.0),
                    DType::I32 => (i32::MIN as f64, i32::MAX as f64),
                    _ => (i64::MIN as f64, i64::MAX as f64),
                };
                f.is_finite() && f >= lo && f <= hi
            }
            _ => true,
        },
    };
    if fits {
        return Ok(());
    }
    let c_name = match dtype {
        DType::U8 => "uint8_t",
        DType::I32 => "int",
        DType::I64 => "int64_t",
        DType::F32 => "float",
        DType::F64 => "double",
        DType::Bool => "bool",
    };
    Err(Error::argument(format!(
        "value cannot be converted to type {c_name} without overflow"
    )))
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
        Promotion::Where | Promotion::MaskedFill => TypeConfig {
            check_all_same_dtype: false,
            ..TypeConfig::default()
        },
        Promotion::ClampScalar => TypeConfig::default(),
    }
}

/// The Python-number arguments of `op` that are not iterator operands: its parameters,
/// `clamp`'s bounds, and `pow`'s exponent when the base is a tensor (`pow.Tensor_Scalar` is
/// a unary op over the base converted to the result type).
fn detached_args<I>(op: Op, args: &[Arg<I>]) -> Vec<usize> {
    let def = op.def();
    (0..args.len())
        .filter(|&k| {
            matches!(args[k], Arg::Scalar(_))
                && (def.is_param(k)
                    || def.promotion == Promotion::ClampScalar
                    || (op == Op::Pow && k == 1 && matches!(args[0], Arg::Tensor(_))))
        })
        .collect()
}

/// Dtypes of a call with detached numbers: the result type `r` (the input's dtype for ops
/// that keep it, else the result type of every argument with the numbers as Python numbers,
/// as `clamp`'s meta function and `pow.Tensor_Scalar` compute it); an in-place input must
/// already have it; `clamp`'s integral result must represent its bounds; parameters must
/// convert to it; tensor inputs are read converted to it; the numbers become 0-dim tensors
/// of it.
#[allow(clippy::too_many_arguments)]
fn scalar_unary_types<I: Int>(
    op: Op,
    args: &[Arg<I>],
    numbers: &Numbers,
    dtypes: &[DType],
    dest: &Dest<I>,
    detached: &[usize],
    inputs: &mut [TensorSpec<I>],
    converted: &mut [Option<DType>],
) -> Result<()> {
    let def = op.def();
    let keeps_dtype = matches!(def.promotion, Promotion::SameAsInput | Promotion::MaskedFill);
    let r = if keeps_dtype {
        dtypes[0]
    } else {
        let ops: Vec<TypeOperand> = args
            .iter()
            .zip(dtypes)
            .map(|(a, &d)| type_operand(a, d))
            .collect();
        result_type(&ops).unwrap_or(dtypes[0])
    };
    if matches!(dest, Dest::InPlace) && r != dtypes[0] {
        return Err(Error::DType {
            message: format!(
                "result type {} can't be cast to the desired output type {}",
                torch_name(r),
                torch_name(dtypes[0])
            ),
        });
    }
    for &k in detached {
        let Some(kind) = numbers.kind(k) else { continue };
        // An integral result must represent an integer bound (int64 represents every one).
        let range = match r {
            DType::U8 => Some((0, 255)),
            DType::I32 => Some((i32::MIN as i64, i32::MAX as i64)),
            _ => None,
        };
        if let (Promotion::ClampScalar, DType::I64, Some((lo, hi))) = (def.promotion, kind, range) {
            if let Some(Scalar::Int(v)) = numbers.value(k) {
                if v < lo || v > hi {
                    let side = if op == Op::ClampMax || k == 2 { "max" } else { "min" };
                    return Err(Error::argument(format!(
                        "Clamp {side} value {v} is outside the representable range of {}",
                        torch_name(r)
                    )));
                }
            }
        }
        if def.is_param(k) {
            numbers.check_fits(k, r)?;
        }
        inputs[k] = TensorSpec::typed(Vec::new(), Vec::new(), r);
        converted[k] = Some(r);
    }
    if !keeps_dtype {
        for (k, a) in args.iter().enumerate() {
            if let (Arg::Tensor(t), false) = (a, dtypes[k] == r) {
                inputs[k] = converted_copy(t, r)?;
                converted[k] = Some(r);
            }
        }
    }
    Ok(())
}

/// The output of ops that allocate it themselves instead of letting the iterator lay it
/// out: `hardtanh` is `clamp_out` into `empty_like(x)`; `pow(number, tensor)` allocates a
/// contiguous tensor of the exponent's shape (its meta function sets no strides).
fn allocated_output<I: Int>(
    op: Op,
    args: &[Arg<I>],
    dtypes: &[DType],
) -> Result<Option<TensorSpec<I>>> {
    Ok(match (op, args) {
        (Op::Hardtanh, [Arg::Tensor(x), ..]) => Some(TensorSpec::typed(
            x.sizes.clone(),
            layout::empty_like_strides(&x.sizes, &x.strides)?,
            dtypes[0],
        )),
        (Op::Pow, [Arg::Scalar(_), Arg::Tensor(e)]) => {
            let ops = [type_operand(&args[0], dtypes[0]), type_operand(&args[1], dtypes[1])];
            let r = result_type(&ops).unwrap_or(dtypes[1]);
            Some(TensorSpec::typed(
                e.sizes.clone(),
                layout::contiguous_strides(&e.sizes),
                r,
            ))
        }
        _ => None,
    })
}

/// `masked_fill`'s checks and output: out of place, `x` and `mask` broadcast first (PyTorch's
/// `expand_outplace`) and the result is a new contiguous tensor of that shape; then the mask
/// must be bool. Returns the output to give the build (out of place).
fn masked_fill_output<I: Int>(
    args: &[Arg<I>],
    dtypes: &[DType],
    dest: &Dest<I>,
) -> Result<Option<TensorSpec<I>>> {
    let (Arg::Tensor(x), Arg::Tensor(mask)) = (&args[0], &args[1]) else {
        return Err(Error::invalid("masked_fill: x and mask must be tensors"));
    };
    let out = match dest {
        Dest::New => {
            let shape = layout::infer_size(&[&x.sizes, &mask.sizes])?;
            let strides = layout::contiguous_strides(&shape);
            Some(TensorSpec::typed(shape, strides, dtypes[0]))
        }
        _ => None,
    };
    if dtypes[1] != DType::Bool {
        return Err(Error::DType {
            message: format!(
                "masked_fill_ only supports boolean masks, but got mask with dtype {}",
                dtypes[1].name()
            ),
        });
    }
    Ok(out)
}

/// Plans `op(args)` into `dest` as PyTorch does, with PyTorch's errors (see the
/// [module docs](super)): the checks before the build, the build (overlap, broadcast, output
/// shape, dtypes, layout), the kernel's dtype support.
pub fn plan_op<I: Int>(op: Op, args: &[Arg<I>], dest: &Dest<I>) -> Result<OpPlan<I>> {
    plan_op_reads(op, args, dest).0
}

/// [`plan_op`], also returning the positions of the Python numbers whose value (not only
/// their kind) a check read, whether the plan succeeded or not ([`Numbers`]): only these
/// can change the call's outcome. `div(x, 3)`'s plan reads no value; `pow(int_tensor, e)`
/// reads `e` (negative integer powers are refused), `clamp` of an `int32` tensor its bounds.
pub fn plan_op_reads<I: Int>(
    op: Op,
    args: &[Arg<I>],
    dest: &Dest<I>,
) -> (Result<OpPlan<I>>, Vec<usize>) {
    let numbers = Numbers::of(args);
    let plan = plan_with(op, args, dest, &numbers);
    (plan, numbers.read())
}

fn plan_with<I: Int>(
    op: Op,
    args: &[Arg<I>],
    dest: &Dest<I>,
    numbers: &Numbers,
) -> Result<OpPlan<I>> {
    let def = op.def();
    if args.len() != def.arity {
        return Err(Error::invalid(format!(
            "{op} takes {} arguments, got {}",
            def.arity,
            args.len()
        )));
    }
    for (k, a) in args.iter().enumerate() {
        if matches!(a, Arg::Scalar(_)) && !def.takes_number(k) {
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
    (def.check)(&dtypes, numbers)?;
    let new_output = match (op, dest) {
        (Op::MaskedFill, _) => masked_fill_output(args, &dtypes, dest)?,
        (_, Dest::New) => allocated_output(op, args, &dtypes)?,
        _ => None,
    };

    // The output operand.
    let out_spec = match dest {
        Dest::New => new_output,
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
    // Python numbers PyTorch does not make iterator operands (parameters, `clamp`'s bounds,
    // `pow`'s exponent): the layout is decided without them (a unary iterator can take the
    // fast setup), the kernel's plan reads them as 0-dim tensors of the result type.
    let detached = detached_args(op, args);
    if !detached.is_empty() {
        scalar_unary_types(
            op,
            args,
            numbers,
            &dtypes,
            dest,
            &detached,
            &mut inputs,
            &mut converted,
        )?;
        if def.promotion != Promotion::MaskedFill {
            tc = TypeConfig::default();
        }
    }
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
                Arg::Scalar(_) => {
                    numbers.check_fits(k, rt)?;
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

    // `masked_fill_` writes through overlapping outputs (deprecated in PyTorch, not an error).
    let options = IterOptions {
        check_mem_overlap: def.promotion != Promotion::MaskedFill,
        ..IterOptions::default()
    };
    let build = |tc: TypeConfig, out: Option<TensorSpec<I>>, skip: &[usize]| {
        let mut config = TensorIteratorConfig::new().types(tc).options(options.clone());
        config = match out {
            Some(t) => config.add_output(t),
            None => config.add_undefined_output(1),
        };
        for (k, t) in inputs.iter().enumerate() {
            if !skip.contains(&k) {
                config = config.add_input(t.clone());
            }
        }
        config.build_typed()
    };
    let (mut plan, types) = build(tc.clone(), out_spec.clone(), &detached)?;
    let types = types.ok_or_else(|| Error::invalid("internal: typed build without types"))?;
    if !detached.is_empty() {
        // The kernel's plan: the decided output given, every argument an operand.
        // The given output (`out=`, the in-place input, or one the op allocates itself),
        // else a new one of the decided dtype.
        let mut decided = match &out_spec {
            Some(t) => t.clone(),
            None => TensorSpec::typed(Vec::new(), Vec::new(), types.dtypes[0]),
        };
        decided.sizes = plan.broadcast_shape.clone();
        decided.strides = plan.output_strides[0].clone();
        // Aliasing was checked by the first build; a resized `out=` has no storage yet.
        decided.storage = None;
        decided.tensor_id = None;
        let kernel_tc = TypeConfig {
            check_all_same_dtype: false,
            ..TypeConfig::default()
        };
        plan = build(kernel_tc, Some(decided), &[])?.0;
    }
    let out_dtype = types.dtypes[0];
    for &j in &types.promoted_inputs {
        let d = types.dtypes[1 + j];
        inputs[j] = converted_copy(&inputs[j], d)?;
        converted[j] = Some(d);
    }
    let compute_dtype = match def.promotion {
        Promotion::Where => out_dtype,
        Promotion::MaskedFill => dtypes[0],
        _ => types
            .common_dtype
            .ok_or_else(|| Error::invalid(format!("internal: {op} has no common dtype")))?,
    };
    // Kernel-time checks (PyTorch dispatches on the computation dtype after the build).
    if !def.kernels.has(compute_dtype) {
        return Err(Error::DType {
            message: format!(
                "\"{}\" not implemented for '{}'",
                def.kernel_name,
                torch_name(compute_dtype)
            ),
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
