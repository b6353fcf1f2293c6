//! The op registry: one [`OpDef`] per elementwise op, read by every layer.

use super::call::Numbers;
use super::reference;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::iter::torch_name;
use crate::tensor::Scalar;
use std::fmt;

/// How an op's dtypes are decided (PyTorch's TensorIterator flags per op family).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Promotion {
    /// The output has the input's dtype and a given output must have it too
    /// (`check_all_same_dtype`: `neg abs relu`).
    SameAsInput,
    /// Inputs promoted to their result type, cast to outputs that can hold it (`add sub mul
    /// maximum minimum addcmul clamp`).
    Default,
    /// As [`Promotion::Default`], but an integral or bool result type becomes `float32`
    /// (`div exp sqrt sigmoid`).
    IntToFloat,
    /// Inputs promoted; the output is `bool` unless given, any given dtype is accepted
    /// (comparisons, `logical_and`, `logical_or`).
    Comparison,
    /// Computed in the input's dtype; output `bool` unless given, any given dtype accepted
    /// (`logical_not`).
    LogicalNot,
    /// `where(cond, a, b)`: `cond` bool (or `uint8`, converted), `a` and `b` converted to
    /// their result type, which a given output must have exactly.
    Where,
    /// `clamp(x, min, max)` with Python-number bounds (`clamp_scalar`, `clamp_min`,
    /// `clamp_max`): the result type of `x` and the bounds as Python numbers; `x` is
    /// converted to it, an integral result must hold the bounds, a given output must have it
    /// exactly, and an in-place `x` must already have it (PyTorch's `clamp` meta function).
    ClampScalar,
    /// `masked_fill(x, mask, value)`: the result has `x`'s dtype; `mask` must be bool;
    /// out of place the result is a contiguous tensor of the broadcast shape (PyTorch clones
    /// the expanded `x` contiguous, then fills in place).
    MaskedFill,
}

/// Which computation dtypes an op's kernel exists for (PyTorch's `AT_DISPATCH` list): a call
/// that computes in another dtype fails with PyTorch's `"<kernel>" not implemented for
/// '<dtype>'`, after the build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernels {
    /// All six dtypes.
    All,
    /// All but `bool`.
    NoBool,
    /// `float32` and `float64` only.
    Float,
    /// The integer dtypes and `bool` (bitwise ops).
    Integral,
}

impl Kernels {
    /// Whether the kernel exists for `d`.
    pub fn has(self, d: DType) -> bool {
        match self {
            Kernels::All => true,
            Kernels::NoBool => d != DType::Bool,
            Kernels::Float => d.is_floating(),
            Kernels::Integral => !d.is_floating(),
        }
    }
}

/// A scalar parameter of an op: a trailing argument that PyTorch takes as a plain `Scalar`
/// (`negative_slope`, `min_val`, `value`), converted to the computation dtype without
/// taking part in type promotion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Param {
    /// Argument position.
    pub pos: usize,
    /// PyTorch's keyword name.
    pub name: &'static str,
    /// Its default, if the keyword may be left out.
    pub default: Option<f64>,
}

/// One row of the op table.
pub struct OpDef {
    /// The op.
    pub op: Op,
    /// PyTorch's name (`"add"`, `"logical_not"`, ...), as in golden files and specs.
    pub name: &'static str,
    /// Number of inputs.
    pub arity: usize,
    /// How dtypes are decided.
    pub promotion: Promotion,
    /// Argument positions (0-based) where PyTorch's Python API takes a Python number.
    pub scalar_args: &'static [usize],
    /// Has an in-place form (`add_`: input 0 is the output).
    pub inplace: bool,
    /// Accepts `out=`.
    pub out: bool,
    /// The computation dtypes the kernel exists for.
    pub kernels: Kernels,
    /// PyTorch's kernel name, for the error on a dtype without a kernel (`"abs_cpu"`).
    pub kernel_name: &'static str,
    /// Scalar parameters (trailing arguments outside type promotion).
    pub params: &'static [Param],
    /// Checks PyTorch makes on the input dtypes (and the Python numbers given, by position)
    /// before the build (`neg` of bool, `hardtanh`'s bounds, ...).
    pub check: fn(&[DType], &Numbers) -> Result<()>,
    /// The naive reference: one element, inputs already converted to the computation
    /// dtype, result in the computation dtype (bool for comparisons and logical ops).
    pub reference: fn(&[Scalar]) -> Scalar,
    /// How far a float32 kernel result may be from the reference rounded to float32,
    /// relative to `1 + |reference|`: 0 for ops that round once, a few ulps for two roundings
    /// (`addcmul`) and the vectorized transcendental functions (`exp`, `sigmoid`, `tanh`).
    pub tolerance: f64,
    /// May join a fused elementwise chain (`crate::program`'s fused evaluator has its form).
    pub fusable: bool,
}

impl OpDef {
    /// Whether argument `k` may be a Python number (a promoting scalar or a parameter).
    pub fn takes_number(&self, k: usize) -> bool {
        self.scalar_args.contains(&k) || self.params.iter().any(|p| p.pos == k)
    }
    /// The dtype argument `k` is read in when the op computes in `compute`: `bool` for
    /// `where`'s condition and `masked_fill`'s mask, `compute` for every other argument.
    pub fn input_dtype(&self, k: usize, compute: DType) -> DType {
        match (self.op, k) {
            (Op::Where, 0) | (Op::MaskedFill, 1) => DType::Bool,
            _ => compute,
        }
    }
    /// Whether argument `k` is a parameter (outside type promotion).
    pub fn is_param(&self, k: usize) -> bool {
        self.params.iter().any(|p| p.pos == k)
    }
}

fn no_check(_: &[DType], _: &Numbers) -> Result<()> {
    Ok(())
}

fn dtype_error(message: impl Into<String>) -> Error {
    Error::DType {
        message: message.into(),
    }
}

fn check_neg(d: &[DType], _: &Numbers) -> Result<()> {
    if d[0] == DType::Bool {
        return Err(dtype_error("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."));
    }
    Ok(())
}

fn check_sub(d: &[DType], _: &Numbers) -> Result<()> {
    let (a, b) = (d[0] == DType::Bool, d[1] == DType::Bool);
    if a && b {
        return Err(dtype_error("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead."));
    }
    if a || b {
        return Err(dtype_error("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."));
    }
    Ok(())
}

fn check_relu(d: &[DType], _: &Numbers) -> Result<()> {
    if d[0] == DType::Bool {
        return Err(dtype_error("Boolean inputs not supported for relu"));
    }
    Ok(())
}

fn number(s: Option<Scalar>) -> Option<f64> {
    match s? {
        Scalar::Bool(b) => Some(b as u8 as f64),
        Scalar::Int(i) => Some(i as f64),
        Scalar::Float(f) => Some(f),
    }
}

fn check_hardtanh(d: &[DType], s: &Numbers) -> Result<()> {
    if d[0] == DType::Bool {
        return Err(dtype_error("Bool inputs not supported for hardtanh"));
    }
    if !(s.given(1) && s.given(2)) {
        return Ok(());
    }
    if let (Some(lo), Some(hi)) = (number(s.value(1)), number(s.value(2))) {
        if lo > hi {
            return Err(Error::argument("min_val cannot be greater than max_val"));
        }
    }
    Ok(())
}

/// An integral base to a negative Python-integer power (`pow(int_tensor, -2)`).
fn check_pow(d: &[DType], s: &Numbers) -> Result<()> {
    if d[0].is_floating() || s.given(0) || s.kind(1) != Some(DType::I64) {
        return Ok(());
    }
    if let Some(Scalar::Int(e)) = s.value(1) {
        if e < 0 {
            return Err(Error::argument(
                "Integers to negative integer powers are not allowed.",
            ));
        }
    }
    Ok(())
}

/// `where`'s condition check (after the result type and `out` checks, see `super::call`).
pub(super) fn check_where_condition(cond: DType) -> Result<()> {
    if cond != DType::Bool && cond != DType::U8 {
        return Err(dtype_error(format!(
            "where expected condition to be a boolean tensor, but got a tensor with dtype {}",
            torch_name(cond)
        )));
    }
    Ok(())
}

/// The registry: every elementwise op, once, with everything the layers need to know.
///
/// Each row is one op: its variant and PyTorch name, arity, then in braces what the table
/// holds (how its dtypes are decided, where Python numbers go, its `out=`/in-place forms,
/// the computation dtypes its kernel exists for and PyTorch's kernel name, the check
/// PyTorch makes first, the naive reference (`reference.rs`), how far a result may be from
/// the reference beyond one rounding, the scalar parameters with their keyword names and
/// defaults), then the typed kernel (a family of `super::kernels` and the element function,
/// `crate::kernel::ops` or `super::kernels`) and the fused evaluator's form (`un`/`bin`/`tern`
/// of the element function, or `none` for ops that never join a fused chain).
///
/// The list is handed to a callback macro, so each consumer expands it in its own module:
/// the [`Op`] enum and [`TABLE`] here, the kernel dispatch in `super::kernels`, the fused
/// evaluator in `crate::program`. The kernel and fused consumers read the braces as one
/// token tree, so a new table field changes this file only. Adding an elementwise op is
/// one row here plus its element function and reference: no other list names ops.
macro_rules! elementwise_ops {
    ($callback:ident) => {
        $callback! {
            Neg: "neg" / 1, { SameAsInput, scalars [], inplace true, out true, kernels All "neg_cpu",
                check check_neg, reference neg, tolerance 0.0, params [] },
                kernel numeric1(crate::kernel::Neg), fused un(crate::kernel::Neg);
            Abs: "abs" / 1, { SameAsInput, scalars [], inplace true, out true, kernels NoBool "abs_cpu",
                check no_check, reference abs, tolerance 0.0, params [] },
                kernel numeric1(crate::kernel::Abs), fused un(crate::kernel::Abs);
            Exp: "exp" / 1, { IntToFloat, scalars [], inplace true, out true, kernels Float "exp_vml_cpu",
                check no_check, reference exp, tolerance 1e-6, params [] },
                kernel float1(crate::kernel::Exp), fused un(crate::kernel::Exp);
            Sqrt: "sqrt" / 1, { IntToFloat, scalars [], inplace true, out true, kernels Float "sqrt_vml_cpu",
                check no_check, reference sqrt, tolerance 0.0, params [] },
                kernel float1(crate::kernel::Sqrt), fused un(crate::kernel::Sqrt);
            Sigmoid: "sigmoid" / 1, { IntToFloat, scalars [], inplace true, out true, kernels Float "sigmoid_cpu",
                check no_check, reference sigmoid, tolerance 1e-6, params [] },
                kernel float1(crate::kernel::Sigmoid), fused un(crate::kernel::Sigmoid);
            Relu: "relu" / 1, { SameAsInput, scalars [], inplace true, out false, kernels All "relu_cpu",
                check check_relu, reference relu, tolerance 0.0, params [] },
                kernel numeric1(crate::kernel::Relu), fused un(crate::kernel::Relu);
            LogicalNot: "logical_not" / 1, { LogicalNot, scalars [], inplace true, out true, kernels All "logical_not_cpu",
                check no_check, reference logical_not, tolerance 0.0, params [] },
                kernel any1_to_bool(LogicalNotF), fused none;
            Add: "add" / 2, { Default, scalars [1], inplace true, out true, kernels All "add_cpu",
                check no_check, reference add, tolerance 0.0, params [] },
                kernel numeric2_bool(crate::kernel::Add, |a, b| a | b), fused bin(crate::kernel::Add);
            Sub: "sub" / 2, { Default, scalars [1], inplace true, out true, kernels All "sub_cpu",
                check check_sub, reference sub, tolerance 0.0, params [] },
                kernel numeric2(crate::kernel::Sub), fused bin(crate::kernel::Sub);
            Mul: "mul" / 2, { Default, scalars [1], inplace true, out true, kernels All "mul_cpu",
                check no_check, reference mul, tolerance 0.0, params [] },
                kernel numeric2_bool(crate::kernel::Mul, |a, b| a & b), fused bin(crate::kernel::Mul);
            Div: "div" / 2, { IntToFloat, scalars [1], inplace true, out true, kernels Float "div_cpu",
                check no_check, reference div, tolerance 0.0, params [] },
                kernel float2(crate::kernel::Div), fused bin(crate::kernel::Div);
            Maximum: "maximum" / 2, { Default, scalars [], inplace false, out true, kernels All "maximum_cpu",
                check no_check, reference maximum, tolerance 0.0, params [] },
                kernel numeric2_bool(crate::kernel::Maximum, |a, b| a | b), fused bin(crate::kernel::Maximum);
            Minimum: "minimum" / 2, { Default, scalars [], inplace false, out true, kernels All "minimum_cpu",
                check no_check, reference minimum, tolerance 0.0, params [] },
                kernel numeric2_bool(crate::kernel::Minimum, |a, b| a & b), fused bin(crate::kernel::Minimum);
            Eq: "eq" / 2, { Comparison, scalars [1], inplace true, out true, kernels All "eq_cpu",
                check no_check, reference eq, tolerance 0.0, params [] },
                kernel any2_to_bool(EqF), fused none;
            Ne: "ne" / 2, { Comparison, scalars [1], inplace true, out true, kernels All "ne_cpu",
                check no_check, reference ne, tolerance 0.0, params [] },
                kernel any2_to_bool(NeF), fused none;
            Lt: "lt" / 2, { Comparison, scalars [1], inplace true, out true, kernels All "lt_cpu",
                check no_check, reference lt, tolerance 0.0, params [] },
                kernel any2_to_bool(LtF), fused none;
            Le: "le" / 2, { Comparison, scalars [1], inplace true, out true, kernels All "le_cpu",
                check no_check, reference le, tolerance 0.0, params [] },
                kernel any2_to_bool(LeF), fused none;
            Gt: "gt" / 2, { Comparison, scalars [1], inplace true, out true, kernels All "gt_cpu",
                check no_check, reference gt, tolerance 0.0, params [] },
                kernel any2_to_bool(GtF), fused none;
            Ge: "ge" / 2, { Comparison, scalars [1], inplace true, out true, kernels All "ge_cpu",
                check no_check, reference ge, tolerance 0.0, params [] },
                kernel any2_to_bool(GeF), fused none;
            LogicalAnd: "logical_and" / 2, { Comparison, scalars [], inplace true, out true, kernels All "logical_and_cpu",
                check no_check, reference logical_and, tolerance 0.0, params [] },
                kernel any2_to_bool(LogicalAndF), fused none;
            LogicalOr: "logical_or" / 2, { Comparison, scalars [], inplace true, out true, kernels All "logical_or_cpu",
                check no_check, reference logical_or, tolerance 0.0, params [] },
                kernel any2_to_bool(LogicalOrF), fused none;
            Addcmul: "addcmul" / 3, { Default, scalars [], inplace true, out true, kernels NoBool "addcmul_cpu_out",
                check no_check, reference addcmul, tolerance 1e-6, params [] },
                kernel addcmul(), fused none;
            Where: "where" / 3, { Where, scalars [1, 2], inplace false, out true, kernels All "where_cpu",
                check no_check, reference where_, tolerance 0.0, params [] },
                kernel where_(), fused none;
            Clamp: "clamp" / 3, { Default, scalars [], inplace true, out true, kernels NoBool "clamp_cpu",
                check no_check, reference clamp, tolerance 0.0, params [] },
                kernel numeric3(crate::kernel::Clamp), fused tern(crate::kernel::Clamp);
            // Unary float math (`unary_float_op`: integers and bool compute in float32).
            Tanh: "tanh" / 1, { IntToFloat, scalars [], inplace true, out true, kernels Float "tanh_vml_cpu",
                check no_check, reference tanh, tolerance 1e-6, params [] },
                kernel float1(crate::kernel::Tanh), fused un(crate::kernel::Tanh);
            Erf: "erf" / 1, { IntToFloat, scalars [], inplace true, out true, kernels Float "erf_vml_cpu",
                check no_check, reference erf, tolerance 1e-6, params [] },
                kernel float1(crate::kernel::Erf), fused un(crate::kernel::Erf);
            Rsqrt: "rsqrt" / 1, { IntToFloat, scalars [], inplace true, out true, kernels Float "rsqrt_cpu",
                check no_check, reference rsqrt, tolerance 1e-6, params [] },
                kernel float1(crate::kernel::Rsqrt), fused un(crate::kernel::Rsqrt);
            Reciprocal: "reciprocal" / 1, { IntToFloat, scalars [], inplace true, out true, kernels Float "reciprocal_cpu",
                check no_check, reference reciprocal, tolerance 0.0, params [] },
                kernel float1(crate::kernel::Reciprocal), fused un(crate::kernel::Reciprocal);
            Log: "log" / 1, { IntToFloat, scalars [], inplace true, out true, kernels Float "log_vml_cpu",
                check no_check, reference log, tolerance 1e-6, params [] },
                kernel float1(crate::kernel::Log), fused un(crate::kernel::Log);
            Log1p: "log1p" / 1, { IntToFloat, scalars [], inplace true, out true, kernels Float "log1p_vml_cpu",
                check no_check, reference log1p, tolerance 1e-6, params [] },
                kernel float1(crate::kernel::Log1p), fused un(crate::kernel::Log1p);
            Expm1: "expm1" / 1, { IntToFloat, scalars [], inplace true, out true, kernels Float "expm1_vml_cpu",
                check no_check, reference expm1, tolerance 1e-6, params [] },
                kernel float1(crate::kernel::Expm1), fused un(crate::kernel::Expm1);
            Sin: "sin" / 1, { IntToFloat, scalars [], inplace true, out true, kernels Float "sin_vml_cpu",
                check no_check, reference sin, tolerance 1e-6, params [] },
                kernel float1(crate::kernel::Sin), fused un(crate::kernel::Sin);
            Cos: "cos" / 1, { IntToFloat, scalars [], inplace true, out true, kernels Float "cos_vml_cpu",
                check no_check, reference cos, tolerance 1e-6, params [] },
                kernel float1(crate::kernel::Cos), fused un(crate::kernel::Cos);
            // Rounding keeps integer dtypes (identity on them); no bool kernel.
            Floor: "floor" / 1, { SameAsInput, scalars [], inplace true, out true, kernels NoBool "floor_vml_cpu",
                check no_check, reference floor, tolerance 0.0, params [] },
                kernel numeric1(crate::kernel::Floor), fused un(crate::kernel::Floor);
            Ceil: "ceil" / 1, { SameAsInput, scalars [], inplace true, out true, kernels NoBool "ceil_vml_cpu",
                check no_check, reference ceil, tolerance 0.0, params [] },
                kernel numeric1(crate::kernel::Ceil), fused un(crate::kernel::Ceil);
            Round: "round" / 1, { SameAsInput, scalars [], inplace true, out true, kernels NoBool "round_vml_cpu",
                check no_check, reference round, tolerance 0.0, params [] },
                kernel numeric1(crate::kernel::Round), fused un(crate::kernel::Round);
            Trunc: "trunc" / 1, { SameAsInput, scalars [], inplace true, out true, kernels NoBool "trunc_vml_cpu",
                check no_check, reference trunc, tolerance 0.0, params [] },
                kernel numeric1(crate::kernel::Trunc), fused un(crate::kernel::Trunc);
            Sign: "sign" / 1, { SameAsInput, scalars [], inplace true, out true, kernels All "sign_cpu",
                check no_check, reference sign, tolerance 0.0, params [] },
                kernel any1(crate::kernel::Sign), fused un(crate::kernel::Sign);
            BitwiseNot: "bitwise_not" / 1, { SameAsInput, scalars [], inplace true, out true, kernels Integral "bitwise_not_cpu",
                check no_check, reference bitwise_not, tolerance 0.0, params [] },
                kernel integral1(crate::kernel::BitNot), fused none;
            // Activations (float kernels only; parameters are plain Scalars).
            Gelu: "gelu" / 1, { SameAsInput, scalars [], inplace false, out false, kernels Float "GeluKernelImpl",
                check no_check, reference gelu, tolerance 1e-6, params [] },
                kernel float1(crate::kernel::Gelu), fused un(crate::kernel::Gelu);
            GeluTanh: "gelu_tanh" / 1, { SameAsInput, scalars [], inplace false, out false, kernels Float "GeluKernelImpl",
                check no_check, reference gelu_tanh, tolerance 1e-6, params [] },
                kernel float1(crate::kernel::GeluTanh), fused un(crate::kernel::GeluTanh);
            Silu: "silu" / 1, { SameAsInput, scalars [], inplace true, out false, kernels Float "silu_cpu",
                check no_check, reference silu, tolerance 1e-6, params [] },
                kernel float1(crate::kernel::Silu), fused un(crate::kernel::Silu);
            Hardswish: "hardswish" / 1, { SameAsInput, scalars [], inplace true, out false, kernels Float "hardswish_cpu",
                check no_check, reference hardswish, tolerance 1e-7, params [] },
                kernel float1(crate::kernel::Hardswish), fused un(crate::kernel::Hardswish);
            Hardsigmoid: "hardsigmoid" / 1, { SameAsInput, scalars [], inplace true, out false, kernels Float "hardsigmoid_cpu",
                check no_check, reference hardsigmoid, tolerance 1e-7, params [] },
                kernel float1(crate::kernel::Hardsigmoid), fused un(crate::kernel::Hardsigmoid);
            LeakyRelu: "leaky_relu" / 2, { SameAsInput, scalars [], inplace true, out false, kernels Float "leaky_relu_cpu",
                check no_check, reference leaky_relu, tolerance 0.0, params [(1, "negative_slope", Some(0.01))] },
                kernel float2(crate::kernel::LeakyRelu), fused bin(crate::kernel::LeakyRelu);
            Hardtanh: "hardtanh" / 3, { SameAsInput, scalars [], inplace true, out false, kernels NoBool "hardtanh_cpu",
                check check_hardtanh, reference clamp, tolerance 0.0,
                params [(1, "min_val", Some(-1.0)), (2, "max_val", Some(1.0))] },
                kernel numeric3(crate::kernel::Clamp), fused tern(crate::kernel::Clamp);
            // Binary ops with Python numbers on either side.
            Pow: "pow" / 2, { Default, scalars [0, 1], inplace true, out true, kernels NoBool "pow",
                check check_pow, reference pow, tolerance 1e-6, params [] },
                kernel numeric2(crate::kernel::Pow), fused bin(crate::kernel::Pow);
            Remainder: "remainder" / 2, { Default, scalars [0, 1], inplace true, out true, kernels NoBool "remainder_cpu",
                check no_check, reference remainder, tolerance 0.0, params [] },
                kernel remainder(), fused bin(crate::kernel::Remainder);
            BitwiseAnd: "bitwise_and" / 2, { Default, scalars [0, 1], inplace true, out true, kernels Integral "bitwise_and_cpu",
                check no_check, reference bitwise_and, tolerance 0.0, params [] },
                kernel integral2(crate::kernel::BitAnd), fused none;
            BitwiseOr: "bitwise_or" / 2, { Default, scalars [0, 1], inplace true, out true, kernels Integral "bitwise_or_cpu",
                check no_check, reference bitwise_or, tolerance 0.0, params [] },
                kernel integral2(crate::kernel::BitOr), fused none;
            BitwiseXor: "bitwise_xor" / 2, { Default, scalars [0, 1], inplace true, out true, kernels Integral "bitwise_xor_cpu",
                check no_check, reference bitwise_xor, tolerance 0.0, params [] },
                kernel integral2(crate::kernel::BitXor), fused none;
            // `clamp` with Python-number bounds (`min`/`max` keywords; `None` drops a side).
            ClampScalar: "clamp_scalar" / 3, { ClampScalar, scalars [1, 2], inplace true, out true, kernels NoBool "clamp_scalar_cpu",
                check no_check, reference clamp, tolerance 0.0, params [] },
                kernel numeric3(crate::kernel::Clamp), fused tern(crate::kernel::Clamp);
            ClampMin: "clamp_min" / 2, { ClampScalar, scalars [1], inplace true, out true, kernels NoBool "clamp_min_scalar_cpu",
                check no_check, reference maximum, tolerance 0.0, params [] },
                kernel numeric2(crate::kernel::Maximum), fused bin(crate::kernel::Maximum);
            ClampMax: "clamp_max" / 2, { ClampScalar, scalars [1], inplace true, out true, kernels NoBool "clamp_max_scalar_cpu",
                check no_check, reference minimum, tolerance 0.0, params [] },
                kernel numeric2(crate::kernel::Minimum), fused bin(crate::kernel::Minimum);
            MaskedFill: "masked_fill" / 3, { MaskedFill, scalars [], inplace true, out false, kernels All "masked_fill",
                check no_check, reference masked_fill, tolerance 0.0, params [(2, "value", None)] },
                kernel masked_fill(), fused none;
        }
    };
}
pub(crate) use elementwise_ops;

/// Whether a row's fused form lets it join a fused chain.
macro_rules! fused_form {
    (none) => {
        false
    };
    ($form:ident ($($f:tt)*)) => {
        true
    };
}

/// Expands the registry into the [`Op`] enum and [`TABLE`].
macro_rules! define_table {
    ($( $op:ident : $name:literal / $arity:literal, { $prom:ident, scalars [$($sc:literal),*],
        inplace $ip:literal, out $out:literal, kernels $kd:ident $kname:literal,
        check $check:ident, reference $refn:ident, tolerance $tol:literal,
        params [$(($ppos:literal, $pname:literal, $pdef:expr)),*] },
        kernel $kf:ident ($($ka:tt)*), fused $ff:ident $(($($fa:tt)*))? ; )*) => {
        /// An elementwise op of the registry. `Op::def()` is its row.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[allow(missing_docs)] // the names are the ops' (see `OpDef::name`)
        pub enum Op {
            $($op,)*
        }

        /// The registry's rows, in [`Op`] order.
        pub static TABLE: [OpDef; [$(Op::$op),*].len()] = [
            $(OpDef {
                op: Op::$op,
                name: $name,
                arity: $arity,
                promotion: Promotion::$prom,
                scalar_args: &[$($sc),*],
                inplace: $ip,
                out: $out,
                kernels: Kernels::$kd,
                kernel_name: $kname,
                params: &[$(Param { pos: $ppos, name: $pname, default: $pdef }),*],
                fusable: fused_form!($ff $(($($fa)*))?),
                check: $check,
                reference: reference::$refn,
                tolerance: $tol,
            },)*
        ];
    };
}
elementwise_ops!(define_table);

impl Op {
    /// Every op, in table order.
    pub fn all() -> impl Iterator<Item = Op> {
        TABLE.iter().map(|d| d.op)
    }

    /// The op's row of [`TABLE`].
    pub fn def(self) -> &'static OpDef {
        &TABLE[self as usize]
    }

    /// PyTorch's name.
    pub fn name(self) -> &'static str {
        self.def().name
    }

    /// Number of inputs.
    pub fn arity(self) -> usize {
        self.def().arity
    }

    /// Looks an op up by name ([`Error::Parse`] listing the known names otherwise).
    pub fn parse(name: &str) -> Result<Op> {
        TABLE
            .iter()
            .find(|d| d.name == name)
            .map(|d| d.op)
            .ok_or_else(|| {
                let names: Vec<&str> = TABLE.iter().map(|d| d.name).collect();
                Error::parse(
                    "op",
                    format!("unknown op `{name}` (expected one of {})", names.join(", ")),
                )
            })
    }
}

/// An op deserializes from its PyTorch name (golden files, specs).
impl<'de> serde::Deserialize<'de> for Op {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Op, D::Error> {
        let name = String::deserialize(d)?;
        Op::parse(&name).map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_enum_order_and_names_round_trip() {
        for (k, d) in TABLE.iter().enumerate() {
            assert_eq!(d.op as usize, k, "row {k} ({}) out of order", d.name);
            assert_eq!(Op::parse(d.name).unwrap(), d.op);
            assert!(d.scalar_args.iter().all(|&p| p < d.arity));
            assert!(d.tolerance >= 0.0);
            // The fused evaluator passes at most MAX_ARITY operands to a member.
            assert!(!d.fusable || d.arity <= crate::program::MAX_FUSED_ARITY, "{}", d.name);
        }
        assert!(Op::parse("tan").is_err());
        for d in TABLE.iter() {
            for p in d.params {
                assert!(p.pos < d.arity && !d.scalar_args.contains(&p.pos), "{}", d.name);
            }
        }
    }
}
