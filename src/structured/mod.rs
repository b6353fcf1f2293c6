//! Structured ops: the ops of real model graphs that are neither elementwise, reductions
//! nor views — creation (`arange`, `full`, `*_like`), copies that move data (`cat`,
//! `stack`, `repeat`, `flip`, `roll`, `triu`), indexing (`index_select`, `gather`,
//! `embedding`, `index`), normalization and softmax, attention, and the multi-result views
//! (`split`, `chunk`, `unbind`).
//!
//! # Why a registry of their own
//! Each of these ops has its own *meta function* in PyTorch (sizes, strides and dtype of
//! the result decided by code specific to the op, not by TensorIterator alone), so one row
//! here holds what every consumer reads: the name and keyword arguments with PyTorch's
//! defaults (parsing of golden op lines, program steps and Python calls), the tensor
//! arguments (a tensor, an optional tensor, a list), whether the results are views, and
//! the kernel. The meta function is written once over [`Int`] ([`meta`]): at `i64` it is
//! the eager answer, at [`SymInt`](crate::sym::SymInt) it records guards with reasons.
//!
//! Layouts follow what PyTorch 2.15 does (measured in `ops_real.jsonl`): `cat` keeps the
//! inputs' common suggested memory format, `*_like` is `empty_like`, `flip`/`index`
//! allocate as TensorIterator does (`rms_norm` too, then `.contiguous()` unless channels
//! last), `softmax`/`layer_norm`/`repeat`/indexing results are contiguous, attention is
//! `empty_like(q)` (flash), zeros through TensorIterator (empty) or `matmul`'s contiguous
//! result (math; `linalg`).

mod attention;
mod call;
mod copies;
mod creation;
mod index;
mod kernels;
pub mod linalg;
mod norm;
mod reference;
mod rowwise;
mod split;

pub use call::{Call, Kw, Out, SArg};
pub use creation::fill_value;
pub use index::{check_index_values, index_bound};
pub use kernels::{allocate, run, sargs_of, spec_of, write, KArg};
pub use reference::{reference, RArg};

use crate::{Int, Result};
use std::fmt;

/// One tensor argument slot of a structured op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// A tensor.
    Tensor,
    /// An optional tensor (`null` / `None` allowed).
    Optional,
    /// A list of tensors.
    List,
}

/// A keyword's default when the caller does not give it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KwDefault {
    /// The caller must give it.
    Required,
    /// Python `None`.
    Null,
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A bool.
    Bool(bool),
}

/// One keyword argument: PyTorch's name and default.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Keyword {
    /// PyTorch's keyword name.
    pub name: &'static str,
    /// Its default.
    pub default: KwDefault,
    /// Whether the value is a name (`dtype`, `memory_format`, `approximate`), not an
    /// integer expression, in program steps.
    pub is_name: bool,
}

const fn kw(name: &'static str, default: KwDefault) -> Keyword {
    Keyword {
        name,
        default,
        is_name: false,
    }
}

const fn name_kw(name: &'static str) -> Keyword {
    Keyword {
        name,
        default: KwDefault::Null,
        is_name: true,
    }
}

/// How many results an op returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Results {
    /// One new tensor.
    One,
    /// Several views of the first input (their number depends on sizes).
    Views,
}

/// One row of the registry.
#[derive(Clone, Copy, Debug)]
pub struct SDef {
    /// The op.
    pub op: SOp,
    /// PyTorch's name.
    pub name: &'static str,
    /// The tensor arguments, in PyTorch's order.
    pub slots: &'static [Slot],
    /// The keyword arguments.
    pub keywords: &'static [Keyword],
    /// One result or several views.
    pub results: Results,
}

macro_rules! structured_ops {
    ($($v:ident: $name:literal, [$($slot:ident),*], [$($kw:expr),* $(,)?], $res:ident;)*) => {
        /// A structured op (see the module docs).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum SOp {
            $(
                #[doc = concat!("`", $name, "`")]
                $v,
            )*
        }

        /// The registry: one row per op.
        pub const STRUCTURED: &[SDef] = &[
            $(SDef {
                op: SOp::$v,
                name: $name,
                slots: &[$(Slot::$slot),*],
                keywords: &[$($kw),*],
                results: Results::$res,
            },)*
        ];
    };
}

use KwDefault::{Bool as B, Float as F, Int as I, Null, Required as Req};

structured_ops! {
    Arange: "arange", [], [kw("start", I(0)), kw("end", Req), kw("step", I(1)), name_kw("dtype")], One;
    Full: "full", [], [kw("size", Req), kw("fill_value", Req), name_kw("dtype")], One;
    Zeros: "zeros", [], [kw("size", Req), name_kw("dtype")], One;
    Ones: "ones", [], [kw("size", Req), name_kw("dtype")], One;
    Empty: "empty", [], [kw("size", Req), name_kw("dtype"), name_kw("memory_format")], One;
    ScalarTensor: "scalar_tensor", [], [kw("s", Req), name_kw("dtype")], One;
    ZerosLike: "zeros_like", [Tensor], [name_kw("dtype"), name_kw("memory_format")], One;
    OnesLike: "ones_like", [Tensor], [name_kw("dtype"), name_kw("memory_format")], One;
    EmptyLike: "empty_like", [Tensor], [name_kw("dtype"), name_kw("memory_format")], One;
    FullLike: "full_like", [Tensor], [kw("fill_value", Req), name_kw("dtype"), name_kw("memory_format")], One;
    NewZeros: "new_zeros", [Tensor], [kw("size", Req), name_kw("dtype")], One;
    NewOnes: "new_ones", [Tensor], [kw("size", Req), name_kw("dtype")], One;
    NewFull: "new_full", [Tensor], [kw("size", Req), kw("fill_value", Req), name_kw("dtype")], One;
    Triu: "triu", [Tensor], [kw("diagonal", I(0))], One;
    Tril: "tril", [Tensor], [kw("diagonal", I(0))], One;
    Cat: "cat", [List], [kw("dim", I(0))], One;
    Stack: "stack", [List], [kw("dim", I(0))], One;
    Repeat: "repeat", [Tensor], [kw("repeats", Req)], One;
    Flip: "flip", [Tensor], [kw("dims", Req)], One;
    Roll: "roll", [Tensor], [kw("shifts", Req), kw("dims", Null)], One;
    Cumsum: "cumsum", [Tensor], [kw("dim", Req), name_kw("dtype")], One;
    IndexSelect: "index_select", [Tensor, Tensor], [kw("dim", Req)], One;
    Gather: "gather", [Tensor, Tensor], [kw("dim", Req)], One;
    Embedding: "embedding", [Tensor, Tensor], [], One;
    Index: "index", [Tensor, Tensor], [kw("dim", I(0))], One;
    Softmax: "softmax", [Tensor], [kw("dim", Req), name_kw("dtype")], One;
    LogSoftmax: "log_softmax", [Tensor], [kw("dim", Req), name_kw("dtype")], One;
    LayerNorm: "layer_norm", [Tensor, Optional, Optional], [kw("normalized_shape", Req), kw("eps", F(1e-5))], One;
    RmsNorm: "rms_norm", [Tensor, Optional], [kw("normalized_shape", Req), kw("eps", Null)], One;
    BatchNorm: "batch_norm", [Tensor, Tensor, Tensor, Optional, Optional], [kw("training", B(false)), kw("eps", F(1e-5))], One;
    GroupNorm: "group_norm", [Tensor, Optional, Optional], [kw("num_groups", Req), kw("eps", F(1e-5))], One;
    Sdpa: "scaled_dot_product_attention", [Tensor, Tensor, Tensor, Optional], [kw("is_causal", B(false)), kw("scale", Null)], One;
    Split: "split", [Tensor], [kw("split_size", Req), kw("dim", I(0))], Views;
    SplitWithSizes: "split_with_sizes", [Tensor], [kw("split_sizes", Req), kw("dim", I(0))], Views;
    Chunk: "chunk", [Tensor], [kw("chunks", Req), kw("dim", I(0))], Views;
    Unbind: "unbind", [Tensor], [kw("dim", I(0))], Views;
}

impl SOp {
    /// The op's row.
    pub fn def(self) -> &'static SDef {
        &STRUCTURED[self as usize]
    }

    /// The op named `name` (PyTorch's name), if it is one of the registry's.
    pub fn parse(name: &str) -> Option<SOp> {
        STRUCTURED.iter().find(|d| d.name == name).map(|d| d.op)
    }

    /// PyTorch's name.
    pub fn name(self) -> &'static str {
        self.def().name
    }
}

impl fmt::Display for SOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The results' layouts and dtypes of `call` (PyTorch's meta function), or PyTorch's
/// error. Written once over [`Int`]: guards are recorded where a decision depends on sizes.
pub fn meta<I: Int>(call: &Call<I>) -> Result<Vec<Out<I>>> {
    use SOp::*;
    match call.op {
        Arange => creation::arange(call),
        Full | Zeros | Ones | Empty | ScalarTensor => creation::fill(call),
        ZerosLike | OnesLike | EmptyLike | FullLike => creation::like(call),
        NewZeros | NewOnes | NewFull => creation::new_filled(call),
        Triu | Tril => copies::triangle(call),
        Cat => copies::cat(call),
        Stack => copies::stack(call),
        Repeat => copies::repeat(call),
        Flip => copies::flip(call),
        Roll => copies::roll(call),
        Cumsum => copies::cumsum(call),
        IndexSelect => index::index_select(call),
        Gather => index::gather(call),
        Embedding => index::embedding(call),
        Index => index::index(call),
        Softmax | LogSoftmax => norm::softmax(call),
        LayerNorm => norm::layer_norm(call),
        RmsNorm => norm::rms_norm(call),
        BatchNorm => norm::batch_norm(call),
        GroupNorm => norm::group_norm(call),
        Sdpa => attention::sdpa(call),
        Split | SplitWithSizes | Chunk | Unbind => split::split(call),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_in_enum_order_and_names_unique() {
        for (k, d) in STRUCTURED.iter().enumerate() {
            assert_eq!(d.op as usize, k);
            assert_eq!(SOp::parse(d.name), Some(d.op));
        }
    }
}
