//! The op table: one [`OpDef`] per elementwise op, read by every layer.

use super::reference;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::iter::torch_name;
use crate::tensor::Scalar;
use std::fmt;

/// An elementwise op of the table. `Op::def()` is its row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)] // the names are the ops' (see `OpDef::name`)
pub enum Op {
    Neg,
    Abs,
    Exp,
    Sqrt,
    Sigmoid,
    Relu,
    LogicalNot,
    Add,
    Sub,
    Mul,
    Div,
    Maximum,
    Minimum,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    LogicalAnd,
    LogicalOr,
    Addcmul,
    Where,
    Clamp,
}

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

macro_rules! row {
    ($op:ident, $name:literal, $arity:literal, $prom:ident, $scalars:expr, inplace: $ip:literal,
     out: $out:literal, bool_kernel: $bk:literal, $check:expr, $reference:path) => {
        OpDef {
            op: Op::$op,
            name: $name,
            arity: $arity,
            promotion: Promotion::$prom,
            scalar_args: $scalars,
            inplace: $ip,
            out: $out,
            bool_kernel: $bk,
            check: $check,
            reference: $reference,
        }
    };
}

/// The table, in [`Op`] order.
pub static TABLE: [OpDef; 24] = {
    use reference as r;
    const S2: &[usize] = &[1];
    const NONE: &[usize] = &[];
    [
        row!(Neg, "neg", 1, SameAsInput, NONE, inplace: true, out: true, bool_kernel: true, check_neg, r::neg),
        row!(Abs, "abs", 1, SameAsInput, NONE, inplace: true, out: true, bool_kernel: false, no_check, r::abs),
        row!(Exp, "exp", 1, IntToFloat, NONE, inplace: true, out: true, bool_kernel: true, no_check, r::exp),
        row!(Sqrt, "sqrt", 1, IntToFloat, NONE, inplace: true, out: true, bool_kernel: true, no_check, r::sqrt),
        row!(Sigmoid, "sigmoid", 1, IntToFloat, NONE, inplace: true, out: true, bool_kernel: true, no_check, r::sigmoid),
        row!(Relu, "relu", 1, SameAsInput, NONE, inplace: true, out: false, bool_kernel: true, check_relu, r::relu),
        row!(LogicalNot, "logical_not", 1, LogicalNot, NONE, inplace: true, out: true, bool_kernel: true, no_check, r::logical_not),
        row!(Add, "add", 2, Default, S2, inplace: true, out: true, bool_kernel: true, no_check, r::add),
        row!(Sub, "sub", 2, Default, S2, inplace: true, out: true, bool_kernel: true, check_sub, r::sub),
        row!(Mul, "mul", 2, Default, S2, inplace: true, out: true, bool_kernel: true, no_check, r::mul),
        row!(Div, "div", 2, IntToFloat, S2, inplace: true, out: true, bool_kernel: true, no_check, r::div),
        row!(Maximum, "maximum", 2, Default, NONE, inplace: false, out: true, bool_kernel: true, no_check, r::maximum),
        row!(Minimum, "minimum", 2, Default, NONE, inplace: false, out: true, bool_kernel: true, no_check, r::minimum),
        row!(Eq, "eq", 2, Comparison, S2, inplace: true, out: true, bool_kernel: true, no_check, r::eq),
        row!(Ne, "ne", 2, Comparison, S2, inplace: true, out: true, bool_kernel: true, no_check, r::ne),
        row!(Lt, "lt", 2, Comparison, S2, inplace: true, out: true, bool_kernel: true, no_check, r::lt),
        row!(Le, "le", 2, Comparison, S2, inplace: true, out: true, bool_kernel: true, no_check, r::le),
        row!(Gt, "gt", 2, Comparison, S2, inplace: true, out: true, bool_kernel: true, no_check, r::gt),
        row!(Ge, "ge", 2, Comparison, S2, inplace: true, out: true, bool_kernel: true, no_check, r::ge),
        row!(LogicalAnd, "logical_and", 2, Comparison, NONE, inplace: true, out: true, bool_kernel: true, no_check, r::logical_and),
        row!(LogicalOr, "logical_or", 2, Comparison, NONE, inplace: true, out: true, bool_kernel: true, no_check, r::logical_or),
        row!(Addcmul, "addcmul", 3, Default, NONE, inplace: true, out: true, bool_kernel: false, no_check, r::addcmul),
        row!(Where, "where", 3, Where, &[1, 2], inplace: false, out: true, bool_kernel: true, no_check, r::where_),
        row!(Clamp, "clamp", 3, Default, NONE, inplace: true, out: true, bool_kernel: false, no_check, r::clamp),
    ]
};

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
