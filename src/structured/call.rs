//! A structured op's call: its tensor arguments and keyword values, resolved against the
//! row (defaults applied), and the layout of each result.

use super::{KwDefault, SOp, Slot};
use crate::iter::TensorSpec;
use crate::layout::MemoryFormat;
use crate::tensor::Scalar;
use crate::{DType, Error, Int, Result};

/// One tensor argument.
#[derive(Clone, Debug, PartialEq)]
pub enum SArg<I> {
    /// A tensor (its `dtype` set).
    Tensor(TensorSpec<I>),
    /// A list of tensors.
    List(Vec<TensorSpec<I>>),
    /// An absent optional tensor.
    Absent,
}

/// One keyword value.
#[derive(Clone, Debug, PartialEq)]
pub enum Kw<I> {
    /// An integer (a size expression in programs).
    Int(I),
    /// A list of integers.
    Ints(Vec<I>),
    /// A float (or a non-finite number).
    Float(f64),
    /// A bool.
    Bool(bool),
    /// Python `None`.
    Null,
    /// A name (`dtype`, `memory_format`).
    Name(String),
}

/// A call of a structured op: tensors in the row's slot order, keywords in the row's
/// keyword order (absent ones hold their default).
#[derive(Clone, Debug, PartialEq)]
pub struct Call<I> {
    /// The op.
    pub op: SOp,
    /// Tensor arguments, one per slot.
    pub inputs: Vec<SArg<I>>,
    /// Keyword values, one per keyword of the row.
    pub kwargs: Vec<Kw<I>>,
}

/// One result: its layout, dtype, and for a view its storage offset (a view aliases input 0).
#[derive(Clone, Debug, PartialEq)]
pub struct Out<I> {
    /// Sizes.
    pub sizes: Vec<I>,
    /// Strides (elements).
    pub strides: Vec<I>,
    /// Element type.
    pub dtype: DType,
    /// `Some(offset)` for a view of input 0, `None` for a new tensor.
    pub view_offset: Option<I>,
}

impl<I: Int> Out<I> {
    /// A new tensor.
    pub fn new(sizes: Vec<I>, strides: Vec<I>, dtype: DType) -> Out<I> {
        Out {
            sizes,
            strides,
            dtype,
            view_offset: None,
        }
    }

    /// A new contiguous tensor.
    pub fn contiguous(sizes: Vec<I>, dtype: DType) -> Out<I> {
        let strides = crate::layout::contiguous_strides(&sizes);
        Out::new(sizes, strides, dtype)
    }
}

impl<I: Int> Call<I> {
    /// Builds a call: `inputs` one per slot, `kwarg(name)` the caller's value of a keyword
    /// (`None` when not given). Unknown keywords are the caller's to reject.
    pub fn new(
        op: SOp,
        inputs: Vec<SArg<I>>,
        kwarg: &mut dyn FnMut(&str) -> Result<Option<Kw<I>>>,
    ) -> Result<Call<I>> {
        let def = op.def();
        if inputs.len() != def.slots.len() {
            return Err(Error::invalid(format!(
                "{op} takes {} tensor arguments, got {}",
                def.slots.len(),
                inputs.len()
            )));
        }
        for (k, (a, s)) in inputs.iter().zip(def.slots).enumerate() {
            let ok = matches!(
                (a, s),
                (SArg::Tensor(_), Slot::Tensor | Slot::Optional)
                    | (SArg::Absent, Slot::Optional)
                    | (SArg::List(_), Slot::List)
            );
            if !ok {
                return Err(Error::invalid(format!(
                    "{op}: argument {k} must be {}",
                    match s {
                        Slot::Tensor => "a tensor",
                        Slot::Optional => "a tensor or null",
                        Slot::List => "a list of tensors",
                    }
                )));
            }
        }
        let mut kwargs = Vec::with_capacity(def.keywords.len());
        for k in def.keywords {
            let v = match (kwarg(k.name)?, k.default) {
                (Some(v), _) => v,
                (None, KwDefault::Required) => {
                    return Err(Error::invalid(format!("{op}: missing keyword `{}`", k.name)))
                }
                (None, KwDefault::Null) => Kw::Null,
                (None, KwDefault::Int(i)) => Kw::Int(I::from_i64(i)),
                (None, KwDefault::Float(f)) => Kw::Float(f),
                (None, KwDefault::Bool(b)) => Kw::Bool(b),
            };
            kwargs.push(v);
        }
        Ok(Call { op, inputs, kwargs })
    }

    /// The value of keyword `name`.
    pub fn kw(&self, name: &str) -> Result<&Kw<I>> {
        self.op
            .def()
            .keywords
            .iter()
            .position(|k| k.name == name)
            .map(|i| &self.kwargs[i])
            .ok_or_else(|| Error::invalid(format!("internal: {} has no keyword `{name}`", self.op)))
    }

    fn bad(&self, name: &str, want: &str) -> Error {
        Error::invalid(format!("{}: `{name}` must be {want}", self.op))
    }

    /// Keyword `name` as an integer.
    pub fn int(&self, name: &str) -> Result<I> {
        match self.kw(name)? {
            Kw::Int(i) => Ok(i.clone()),
            _ => Err(self.bad(name, "an integer")),
        }
    }

    /// Keyword `name` as an integer constant (a dim: PyTorch takes a plain `int`).
    pub fn cint(&self, name: &str) -> Result<i64> {
        self.int(name)?
            .as_const()
            .ok_or_else(|| self.bad(name, "an integer constant"))
    }

    /// Keyword `name` as a list of integers (a single integer is a list of one).
    pub fn ints(&self, name: &str) -> Result<Vec<I>> {
        match self.kw(name)? {
            Kw::Ints(v) => Ok(v.clone()),
            Kw::Int(i) => Ok(vec![i.clone()]),
            _ => Err(self.bad(name, "a list of integers")),
        }
    }

    /// Keyword `name` as a list of integer constants.
    pub fn cints(&self, name: &str) -> Result<Vec<i64>> {
        self.ints(name)?
            .iter()
            .map(|i| i.as_const().ok_or_else(|| self.bad(name, "integer constants")))
            .collect()
    }

    /// Keyword `name` as a Python number (`None` for `null`). Integers must be constants.
    pub fn number(&self, name: &str) -> Result<Option<Scalar>> {
        match self.kw(name)? {
            Kw::Null => Ok(None),
            Kw::Float(f) => Ok(Some(Scalar::Float(*f))),
            Kw::Bool(b) => Ok(Some(Scalar::Bool(*b))),
            Kw::Int(i) => i
                .as_const()
                .map(|c| Some(Scalar::Int(c)))
                .ok_or_else(|| self.bad(name, "a constant number")),
            _ => Err(self.bad(name, "a number")),
        }
    }

    /// Keyword `name` as a bool.
    pub fn flag(&self, name: &str) -> Result<bool> {
        match self.kw(name)? {
            Kw::Bool(b) => Ok(*b),
            Kw::Int(i) if i.as_const().is_some() => Ok(i.as_const() != Some(0)),
            _ => Err(self.bad(name, "a bool")),
        }
    }

    /// Keyword `name` as a dtype (`None` for `null`).
    pub fn dtype(&self, name: &str) -> Result<Option<DType>> {
        match self.kw(name)? {
            Kw::Null => Ok(None),
            Kw::Name(n) => DType::parse(n).map(Some),
            _ => Err(self.bad(name, "a dtype name")),
        }
    }

    /// Keyword `name` as a memory format (`None` for `null`).
    pub fn memory_format(&self, name: &str) -> Result<Option<MemoryFormat>> {
        match self.kw(name)? {
            Kw::Null => Ok(None),
            Kw::Name(n) => Ok(Some(match n.as_str() {
                "contiguous" | "contiguous_format" => MemoryFormat::Contiguous,
                "channels_last" => MemoryFormat::ChannelsLast,
                "channels_last_3d" => MemoryFormat::ChannelsLast3d,
                "preserve" | "preserve_format" => MemoryFormat::Preserve,
                other => return Err(self.bad(name, &format!("a memory format, not `{other}`"))),
            })),
            _ => Err(self.bad(name, "a memory format name")),
        }
    }

    /// Tensor argument `k`.
    pub fn tensor(&self, k: usize) -> Result<&TensorSpec<I>> {
        match self.inputs.get(k) {
            Some(SArg::Tensor(t)) => Ok(t),
            _ => Err(Error::invalid(format!("{}: argument {k} is not a tensor", self.op))),
        }
    }

    /// Optional tensor argument `k`.
    pub fn optional(&self, k: usize) -> Option<&TensorSpec<I>> {
        match self.inputs.get(k) {
            Some(SArg::Tensor(t)) => Some(t),
            _ => None,
        }
    }

    /// Tensor-list argument `k`.
    pub fn list(&self, k: usize) -> Result<&[TensorSpec<I>]> {
        match self.inputs.get(k) {
            Some(SArg::List(ts)) => Ok(ts),
            _ => Err(Error::invalid(format!("{}: argument {k} is not a list", self.op))),
        }
    }
}

/// A tensor's dtype (set on every argument of a structured call).
pub(super) fn dtype_of<I>(t: &TensorSpec<I>) -> DType {
    t.dtype.unwrap_or(DType::F32)
}
