//! The op registry: one [`OpDef`] per elementwise op, read by every layer.

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
    /// The kernel exists for a `bool` computation dtype (`abs`, `addcmul`, `clamp`: no).
    pub bool_kernel: bool,
    /// Checks PyTorch makes on the input dtypes before the build (`neg` of bool, ...).
    pub check: fn(&[DType]) -> Result<()>,
    /// The naive reference: one element, inputs already converted to the computation
    /// dtype, result in the computation dtype (bool for comparisons and logical ops).
    pub reference: fn(&[Scalar]) -> Scalar,
    /// How far a float32 kernel result may be from the reference rounded to float32,
    /// relative to `1 + |reference|`: 0 for ops that round once, a few ulps for two roundings
    /// (`addcmul`) and the vectorized transcendental functions (`exp`, `sigmoid`).
    pub tolerance: f64,
    /// May join a fused elementwise chain (`crate::program`'s fused evaluator has its form).
    pub fusable: bool,
}

fn no_check(_: &[DType]) -> Result<()> {
    Ok(())
}

fn dtype_error(message: impl Into<String>) -> Error {
    Error::DType {
        message: message.into(),
    }
}

fn check_neg(d: &[DType]) -> Result<()> {
    if d[0] == DType::Bool {
        return Err(dtype_error("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."));
    }
    Ok(())
}

fn check_sub(d: &[DType]) -> Result<()> {
    let (a, b) = (d[0] == DType::Bool, d[1] == DType::Bool);
    if a && b {
        return Err(dtype_error("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead."));
    }
    if a || b {
        return Err(dtype_error("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."));
    }
    Ok(())
}

fn check_relu(d: &[DType]) -> Result<()> {
    if d[0] == DType::Bool {
        return Err(dtype_error("Boolean inputs not supported for relu"));
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
/// Each row is one op: its variant and PyTorch name, arity, how its dtypes are decided,
/// where Python numbers go, its `out=`/in-place forms, whether a bool kernel exists, the
/// dtype check PyTorch makes first, the naive reference (`reference.rs`), the typed kernel
/// (a family of `super::kernels` and the element function, `crate::kernel::ops` or
/// `super::kernels`) and the fused evaluator's form (`un`/`bin` of the element function, or
/// `none` for ops that never join a fused chain) and, where results may differ from the
/// reference by more than one rounding, a relative `tolerance`.
///
/// The list is handed to a callback macro, so each consumer expands it in its own module:
/// the [`Op`] enum and [`TABLE`] here, the kernel dispatch in `super::kernels`, the fused
/// evaluator in `crate::program`. Adding an elementwise op is one row here plus its element
/// function and reference: no other list names ops.
macro_rules! elementwise_ops {
    ($callback:ident) => {
        $callback! {
            Neg: "neg" / 1, SameAsInput, scalars [], inplace true, out true, bool_kernel true,
                check check_neg, reference neg, kernel numeric1(crate::kernel::Neg), fused un(crate::kernel::Neg);
            Abs: "abs" / 1, SameAsInput, scalars [], inplace true, out true, bool_kernel false,
                check no_check, reference abs, kernel numeric1(crate::kernel::Abs), fused un(crate::kernel::Abs);
            Exp: "exp" / 1, IntToFloat, scalars [], inplace true, out true, bool_kernel true,
                check no_check, reference exp, kernel float1(crate::kernel::Exp), fused un(crate::kernel::Exp), tolerance 1e-6;
            Sqrt: "sqrt" / 1, IntToFloat, scalars [], inplace true, out true, bool_kernel true,
                check no_check, reference sqrt, kernel float1(crate::kernel::Sqrt), fused un(crate::kernel::Sqrt);
            Sigmoid: "sigmoid" / 1, IntToFloat, scalars [], inplace true, out true, bool_kernel true,
                check no_check, reference sigmoid, kernel float1(crate::kernel::Sigmoid), fused un(crate::kernel::Sigmoid), tolerance 1e-6;
            Relu: "relu" / 1, SameAsInput, scalars [], inplace true, out false, bool_kernel true,
                check check_relu, reference relu, kernel numeric1(crate::kernel::Relu), fused un(crate::kernel::Relu);
            LogicalNot: "logical_not" / 1, LogicalNot, scalars [], inplace true, out true, bool_kernel true,
                check no_check, reference logical_not, kernel any1_to_bool(LogicalNotF), fused none;
            Add: "add" / 2, Default, scalars [1], inplace true, out true, bool_kernel true,
                check no_check, reference add, kernel numeric2_bool(crate::kernel::Add, |a, b| a | b), fused bin(crate::kernel::Add);
            Sub: "sub" / 2, Default, scalars [1], inplace true, out true, bool_kernel true,
                check check_sub, reference sub, kernel numeric2(crate::kernel::Sub), fused bin(crate::kernel::Sub);
            Mul: "mul" / 2, Default, scalars [1], inplace true, out true, bool_kernel true,
                check no_check, reference mul, kernel numeric2_bool(crate::kernel::Mul, |a, b| a & b), fused bin(crate::kernel::Mul);
            Div: "div" / 2, IntToFloat, scalars [1], inplace true, out true, bool_kernel true,
                check no_check, reference div, kernel float2(crate::kernel::Div), fused bin(crate::kernel::Div);
            Maximum: "maximum" / 2, Default, scalars [], inplace false, out true, bool_kernel true,
                check no_check, reference maximum, kernel numeric2_bool(crate::kernel::Maximum, |a, b| a | b), fused bin(crate::kernel::Maximum);
            Minimum: "minimum" / 2, Default, scalars [], inplace false, out true, bool_kernel true,
                check no_check, reference minimum, kernel numeric2_bool(crate::kernel::Minimum, |a, b| a & b), fused bin(crate::kernel::Minimum);
            Eq: "eq" / 2, Comparison, scalars [1], inplace true, out true, bool_kernel true,
                check no_check, reference eq, kernel any2_to_bool(EqF), fused none;
            Ne: "ne" / 2, Comparison, scalars [1], inplace true, out true, bool_kernel true,
                check no_check, reference ne, kernel any2_to_bool(NeF), fused none;
            Lt: "lt" / 2, Comparison, scalars [1], inplace true, out true, bool_kernel true,
                check no_check, reference lt, kernel any2_to_bool(LtF), fused none;
            Le: "le" / 2, Comparison, scalars [1], inplace true, out true, bool_kernel true,
                check no_check, reference le, kernel any2_to_bool(LeF), fused none;
            Gt: "gt" / 2, Comparison, scalars [1], inplace true, out true, bool_kernel true,
                check no_check, reference gt, kernel any2_to_bool(GtF), fused none;
            Ge: "ge" / 2, Comparison, scalars [1], inplace true, out true, bool_kernel true,
                check no_check, reference ge, kernel any2_to_bool(GeF), fused none;
            LogicalAnd: "logical_and" / 2, Comparison, scalars [], inplace true, out true, bool_kernel true,
                check no_check, reference logical_and, kernel any2_to_bool(LogicalAndF), fused none;
            LogicalOr: "logical_or" / 2, Comparison, scalars [], inplace true, out true, bool_kernel true,
                check no_check, reference logical_or, kernel any2_to_bool(LogicalOrF), fused none;
            Addcmul: "addcmul" / 3, Default, scalars [], inplace true, out true, bool_kernel false,
                check no_check, reference addcmul, kernel addcmul(), fused none, tolerance 1e-6;
            Where: "where" / 3, Where, scalars [1, 2], inplace false, out true, bool_kernel true,
                check no_check, reference where_, kernel where_(), fused none;
            Clamp: "clamp" / 3, Default, scalars [], inplace true, out true, bool_kernel false,
                check no_check, reference clamp, kernel numeric3(ClampF), fused none;
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
    ($( $op:ident : $name:literal / $arity:literal, $prom:ident, scalars [$($sc:literal),*],
        inplace $ip:literal, out $out:literal, bool_kernel $bk:literal,
        check $check:ident, reference $refn:ident, kernel $kf:ident ($($ka:tt)*),
        fused $ff:ident $(($($fa:tt)*))? $(, tolerance $tol:literal)? ; )*) => {
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
                bool_kernel: $bk,
                fusable: fused_form!($ff $(($($fa)*))?),
                check: $check,
                reference: reference::$refn,
                tolerance: 0.0 $(+ $tol)?,
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
        }
        assert!(Op::parse("tanh").is_err());
    }
}
