//! View ops as data: [`ViewOp`] (parsed from the golden JSON form `["slice", 0, 1, null,
//! 2]`) and [`ViewChain`], which applies them left to right and tracks what PyTorch's
//! result would report (`aliases`, the storage an `as_strided` is checked against).

use super::core::View;
use super::movement::SqueezeDims;
use crate::{Error, Int, Result};
use serde_json::Value;

/// One movement op with integer arguments (PyTorch's Python signature).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ViewOp {
    /// `permute(dims)`
    Permute(Vec<i64>),
    /// `transpose(d0, d1)`
    Transpose(i64, i64),
    /// `t()`
    T,
    /// `expand(sizes)` (`-1` keeps a size)
    Expand(Vec<i64>),
    /// `x[start:end:step]` along `dim`
    Slice {
        /// Dimension.
        dim: i64,
        /// Start (`None`: 0).
        start: Option<i64>,
        /// End (`None`: the size).
        end: Option<i64>,
        /// Step (>= 1).
        step: i64,
    },
    /// `narrow(dim, start, length)`
    Narrow(i64, i64, i64),
    /// `select(dim, index)`
    Select(i64, i64),
    /// `unsqueeze(dim)`
    Unsqueeze(i64),
    /// `squeeze(...)`
    Squeeze(SqueezeDims),
    /// `flatten(start, end)`
    Flatten(i64, i64),
    /// `unflatten(dim, sizes)`
    Unflatten(i64, Vec<i64>),
    /// `movedim(src, dst)`
    Movedim(i64, i64),
    /// `view(sizes)`
    View(Vec<i64>),
    /// `reshape(sizes)`
    Reshape(Vec<i64>),
    /// `as_strided(sizes, strides, offset)` (absolute offset)
    AsStrided(Vec<i64>, Vec<i64>, i64),
    /// `diagonal(offset, dim1, dim2)`
    Diagonal(i64, i64, i64),
    /// `unfold(dim, size, step)`
    Unfold(i64, i64, i64),
}

fn bad(op: &Value, why: &str) -> Error {
    Error::parse("view op", format!("{op}: {why}"))
}

fn int(op: &Value, v: Option<&Value>) -> Result<i64> {
    v.and_then(Value::as_i64)
        .ok_or_else(|| bad(op, "expected an integer argument"))
}

fn opt_int(op: &Value, v: Option<&Value>) -> Result<Option<i64>> {
    match v {
        Some(Value::Null) => Ok(None),
        other => int(op, other).map(Some),
    }
}

fn ints(op: &Value, v: Option<&Value>) -> Result<Vec<i64>> {
    v.and_then(Value::as_array)
        .ok_or_else(|| bad(op, "expected a list of integers"))?
        .iter()
        .map(|x| int(op, Some(x)))
        .collect()
}

impl ViewOp {
    /// Number of arguments after the tensor (`None`: not a view op).
    pub fn arity(name: &str) -> Option<usize> {
        Some(match name {
            "t" => 0,
            "permute" | "expand" | "unsqueeze" | "squeeze" | "view" | "reshape" => 1,
            "transpose" | "select" | "flatten" | "unflatten" | "movedim" => 2,
            "narrow" | "as_strided" | "diagonal" | "unfold" => 3,
            "slice" => 4,
            _ => return None,
        })
    }

    /// Parses the golden JSON form: `[name, args...]`.
    pub fn from_json(op: &Value) -> Result<ViewOp> {
        let items = op.as_array().ok_or_else(|| bad(op, "expected an array"))?;
        let name = items
            .first()
            .and_then(Value::as_str)
            .ok_or_else(|| bad(op, "expected the op name first"))?;
        let a = |k: usize| items.get(k);
        let arity =
            ViewOp::arity(name).ok_or_else(|| bad(op, &format!("unknown view op `{name}`")))?;
        if items.len() != arity + 1 {
            return Err(bad(op, &format!("`{name}` takes {arity} arguments")));
        }
        Ok(match name {
            "permute" => ViewOp::Permute(ints(op, a(1))?),
            "transpose" => ViewOp::Transpose(int(op, a(1))?, int(op, a(2))?),
            "t" => ViewOp::T,
            "expand" => ViewOp::Expand(ints(op, a(1))?),
            "slice" => ViewOp::Slice {
                dim: int(op, a(1))?,
                start: opt_int(op, a(2))?,
                end: opt_int(op, a(3))?,
                step: int(op, a(4))?,
            },
            "narrow" => ViewOp::Narrow(int(op, a(1))?, int(op, a(2))?, int(op, a(3))?),
            "select" => ViewOp::Select(int(op, a(1))?, int(op, a(2))?),
            "unsqueeze" => ViewOp::Unsqueeze(int(op, a(1))?),
            "squeeze" => ViewOp::Squeeze(match a(1) {
                Some(Value::Null) => SqueezeDims::All,
                Some(Value::Array(_)) => SqueezeDims::Many(ints(op, a(1))?),
                other => SqueezeDims::One(int(op, other)?),
            }),
            "flatten" => ViewOp::Flatten(int(op, a(1))?, int(op, a(2))?),
            "unflatten" => ViewOp::Unflatten(int(op, a(1))?, ints(op, a(2))?),
            "movedim" => ViewOp::Movedim(int(op, a(1))?, int(op, a(2))?),
            "view" => ViewOp::View(ints(op, a(1))?),
            "reshape" => ViewOp::Reshape(ints(op, a(1))?),
            "as_strided" => ViewOp::AsStrided(ints(op, a(1))?, ints(op, a(2))?, int(op, a(3))?),
            "diagonal" => ViewOp::Diagonal(int(op, a(1))?, int(op, a(2))?, int(op, a(3))?),
            "unfold" => ViewOp::Unfold(int(op, a(1))?, int(op, a(2))?, int(op, a(3))?),
            other => return Err(bad(op, &format!("unknown view op `{other}`"))),
        })
    }
}

impl TryFrom<Value> for ViewOp {
    type Error = Error;
    fn try_from(v: Value) -> Result<ViewOp> {
        ViewOp::from_json(&v)
    }
}

impl<'de> serde::Deserialize<'de> for ViewOp {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        ViewOp::from_json(&v).map_err(serde::de::Error::custom)
    }
}

/// A view being built by a chain of ops: the current layout, the number of elements of
/// the storage it lives in, and whether it still aliases the original storage (false once
/// a `reshape` or `flatten` copied; later ops then act on the copy).
#[derive(Clone, Debug)]
pub struct ViewChain<I> {
    /// The current layout.
    pub view: View<I>,
    /// Elements in the current storage (what `as_strided` is bounds-checked against).
    pub storage_numel: I,
    /// False once an op copied.
    pub aliases: bool,
}

impl<I: Int> ViewChain<I> {
    /// Starts a chain at `view` over a storage of `storage_numel` elements.
    pub fn new(view: View<I>, storage_numel: I) -> Self {
        ViewChain {
            view,
            storage_numel,
            aliases: true,
        }
    }

    /// Applies one op (integer arguments become constants of `I`).
    pub fn apply(&mut self, op: &ViewOp) -> Result<()> {
        let c = |v: &[i64]| -> Vec<I> { v.iter().map(|&x| I::from_i64(x)).collect() };
        let v = &self.view;
        let next = match op {
            ViewOp::Permute(d) => v.permute(d)?,
            ViewOp::Transpose(a, b) => v.transpose(*a, *b)?,
            ViewOp::T => v.t()?,
            ViewOp::Expand(s) => v.expand(&c(s))?,
            ViewOp::Slice {
                dim,
                start,
                end,
                step,
            } => v.slice(*dim, start.map(I::from_i64), end.map(I::from_i64), *step)?,
            ViewOp::Narrow(d, s, l) => v.narrow(*d, I::from_i64(*s), I::from_i64(*l))?,
            ViewOp::Select(d, i) => v.select(*d, I::from_i64(*i))?,
            ViewOp::Unsqueeze(d) => v.unsqueeze(*d)?,
            ViewOp::Squeeze(d) => v.squeeze(d)?,
            ViewOp::Flatten(s, e) => {
                let r = v.flatten(*s, *e)?;
                self.reshaped(r);
                return Ok(());
            }
            ViewOp::Unflatten(d, s) => v.unflatten(*d, &c(s))?,
            ViewOp::Movedim(s, d) => v.movedim(*s, *d)?,
            ViewOp::View(s) => v.view(&c(s))?,
            ViewOp::Reshape(s) => {
                let r = v.reshape(&c(s))?;
                self.reshaped(r);
                return Ok(());
            }
            ViewOp::AsStrided(s, t, o) => {
                v.as_strided(c(s), c(t), I::from_i64(*o), &self.storage_numel)?
            }
            ViewOp::Diagonal(o, a, b) => v.diagonal(*o, *a, *b)?,
            ViewOp::Unfold(d, s, st) => v.unfold(*d, I::from_i64(*s), *st)?,
        };
        self.view = next;
        Ok(())
    }

    fn reshaped(&mut self, r: super::reshape::Reshaped<I>) {
        if r.copied {
            self.storage_numel = r.view.numel();
            self.aliases = false;
        }
        self.view = r.view;
    }
}
