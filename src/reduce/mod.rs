//! Reductions (`sum mean prod amax amin argmax argmin all any`): the table, PyTorch's
//! argument semantics, and the element-level reducers the kernels run.
//!
//! # Why a table
//! Each reduction differs from the others in a handful of facts — its result dtype rule,
//! which `dim` forms it takes and what `dim=[]` means, whether an empty input is an error,
//! its identity and combine step, and its naive reference — and in nothing else. Those facts
//! are one [`ReductionInfo`] entry of [`REDUCTIONS`] (plus one [`Reducer`] impl for the
//! arithmetic), so the meta function, the kernels, the conformance runner and the tests all
//! read the same data and adding a reduction is one entry.
//!
//! # Why through the TensorIterator build
//! [`reduction_meta`] checks arguments in PyTorch's order (so the same bad call fails with
//! the same category), then calls [`crate::iter::reduction_plan`]: the result is allocated
//! contiguous and viewed over the input with stride 0 on the reduced dims, and the build
//! (with `is_reduction`) moves those dims innermost and coalesces them. The kernels in
//! [`crate::kernel`] execute that plan. Everything is written once over [`crate::Int`], so a
//! symbolic trace records the guards of the empty-dim checks and of the plan.
//!
//! # Kernel hooks
//! The kernels fold contiguous runs with generic lanes that the compiler vectorizes. Where
//! that falls short (the float32 `sum`, whose f64 accumulation the compiler keeps at two
//! lanes per register), an element type hands the kernels a hand-written AVX2 fold
//! ([`ReduceElement::sum_run_avx2`], in `simd`) and the reducer exposes it
//! ([`Reducer::fold_run_avx2`]); both default to "none", so other reducers and dtypes are
//! untouched.
//!
//! # Conventions PyTorch forced (see the golden README)
//! `dim=[]` reduces everything for `sum`/`mean`/`amax`/`amin` but nothing for `all`/`any`;
//! `prod`, `argmax`, `argmin` take one dim or none; `argmax`/`argmin` without a dim reduce
//! the flattened input; `amax`/`amin` of an empty input need explicit non-empty dims; dtype
//! errors (`mean` of integers, `argmax` of `bool`) come before dim errors.

mod meta;
mod reducers;
mod simd;
mod table;

pub use meta::{reduction_meta, wrap_dim, Dims, ReductionMeta};
pub use reducers::{All, Amax, Amin, Any, Argmax, Argmin, Mean, Prod, ReduceElement, Reducer, Sum};
pub use table::{DimsRule, EmptyRule, ReductionInfo, ReductionOp, ResultDType, REDUCTIONS};
