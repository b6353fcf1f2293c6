//! Views: PyTorch's movement ops (`permute`, `expand`, `slice`, `select`, `view`,
//! `reshape`, ...) written once over [`Int`](crate::Int).
//!
//! # Why one generic layer
//!
//! A view is only `(sizes, strides, offset)`; every movement op is a small function of it.
//! Written over `Int`, the same code answers an eager `Tensor<T>` view (at `i64`) and
//! traces a symbolic one (at [`SymInt`](crate::sym::SymInt)), so a compiled plan can start
//! from `x.view(b, s, h, d).transpose(1, 2)` and eager and symbolic answers cannot drift
//! apart. Storage offsets are values like strides, so `narrow`/`select`/`slice` with
//! symbolic starts give offset *expressions*.
//!
//! # Where the guards come from
//!
//! Most ops never branch on a size: `permute`, `transpose`, `movedim`, `unsqueeze`,
//! `as_strided` (beyond its bounds check), and `slice`/`diagonal`, whose Python clamping
//! is expressed with `min`/`max` values instead of branches. Branches remain where PyTorch's
//! answer really depends on a size: `squeeze` and `expand` (is this size 1?), the bounds
//! checks of `narrow`/`select`/`unfold`, and `view`/`reshape`, whose decision procedure
//! ([`compute_stride`]) is documented in `reshape.rs`: contiguous inputs, chained strides
//! and exact monomial division are decided without a guard. Every guard's reason names
//! the op and the argument (`view: size[2] = h*d splits the input chunk ...`).
//!
//! For 14 real reshapes (attention head split/merge, NCHW and channels-last flattens,
//! group-norm views, ...) `tests/view_guards.rs` prints the guards recorded here next to
//! the guards PyTorch 2.15 records for the same trace (measured with
//! `docs/view_guards/measure_pytorch.py`; snapshot in `docs/view_guards/README.md`):
//! fewer or equal on every row, e.g. one guard `Mod(c, 8) == 0` for
//! `x.view(b, s, 8, -1)` where PyTorch records four, one for a group-norm
//! `x.view(n, 4, -1)` where PyTorch records eleven.
//!
//! # Layout of the module
//!
//! | file | what |
//! |---|---|
//! | `core.rs` | [`View`] and its validating constructor, dim wrapping |
//! | `movement.rs` | `permute`, `transpose`, `t`, `movedim`, `expand`, `unsqueeze`, `squeeze`, `diagonal`, `unfold`, `as_strided` |
//! | `index.rs` | `slice`, `narrow`, `select` |
//! | `reshape.rs` | `-1` inference, `computeStride`, `view`, `reshape`, `flatten`, `unflatten` |
//! | `op.rs` | [`ViewOp`] (ops as data, the golden JSON form) and [`ViewChain`] |
//!
//! Errors follow PyTorch's categories: a dim out of range is [`Error::Index`](crate::Error::Index),
//! bad sizes [`Error::Shape`](crate::Error::Shape), an impossible `view`
//! [`Error::View`](crate::Error::View), a bad `expand` [`Error::Expand`](crate::Error::Expand),
//! any other rejection [`Error::Invalid`](crate::Error::Invalid); messages are PyTorch's.

mod core;
mod index;
mod movement;
mod op;
mod reshape;

pub use self::core::View;
pub use movement::SqueezeDims;
pub use op::{ViewChain, ViewOp};
pub use reshape::{compute_stride, infer_size, Reshaped};
