//! `symstride` for Python: the engine's symbolic layer, layout predicates, views and
//! compiled programs, as the `symstride._symstride` extension module.
//!
//! # Why a separate crate
//! The root crate stays free of PyO3 (its `cargo test` and CI do not build Python
//! bindings); this package depends on it by path and only adapts types: every answer comes
//! from the crate's generic functions, called at `i64` for Python ints and at `SymInt` when
//! any argument is symbolic. Nothing here re-implements an algorithm.
//!
//! | file | what |
//! |---|---|
//! | `errors.rs` | engine errors as the Python exceptions of `symstride/_errors.py` |
//! | `symbolic.rs` | `ShapeEnv`, `SymInt`, `SymBool`, `Guard`; int-or-`SymInt` arguments |
//! | `layout.rs` | layout predicates, strides, broadcasting |
//! | `view.rs` | `View`: movement ops on a layout |
//! | `arrays.rs` | numpy arrays as engine tensors and back, without copies |
//! | `program.rs` | `compile`, `Artifact` (guards, check, save/load, run) |
//! | `adapter.rs` | the seam to the crate's program layer (trace, check, execution) |

use pyo3::prelude::*;

mod adapter;
mod arrays;
mod errors;
mod layout;
mod program;
mod symbolic;
mod view;

#[pymodule]
fn _symstride(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<symbolic::PyShapeEnv>()?;
    m.add_class::<symbolic::PySymInt>()?;
    m.add_class::<symbolic::PySymBool>()?;
    m.add_class::<symbolic::PyGuard>()?;
    m.add_class::<view::PyView>()?;
    m.add_class::<program::PyArtifact>()?;
    m.add_class::<program::PyCheck>()?;
    m.add_function(wrap_pyfunction!(symbolic::statically_known_true, m)?)?;
    m.add_function(wrap_pyfunction!(symbolic::guard_or_false, m)?)?;
    m.add_function(wrap_pyfunction!(symbolic::guard_or_true, m)?)?;
    m.add_function(wrap_pyfunction!(symbolic::sym_max, m)?)?;
    m.add_function(wrap_pyfunction!(symbolic::sym_min, m)?)?;
    m.add_function(wrap_pyfunction!(symbolic::canonical_condition, m)?)?;
    m.add_function(wrap_pyfunction!(layout::is_contiguous, m)?)?;
    m.add_function(wrap_pyfunction!(layout::is_channels_last_contiguous, m)?)?;
    m.add_function(wrap_pyfunction!(layout::is_channels_last_3d_contiguous, m)?)?;
    m.add_function(wrap_pyfunction!(layout::is_non_overlapping_and_dense, m)?)?;
    m.add_function(wrap_pyfunction!(layout::suggest_memory_format, m)?)?;
    m.add_function(wrap_pyfunction!(layout::contiguous_strides, m)?)?;
    m.add_function(wrap_pyfunction!(layout::channels_last_strides, m)?)?;
    m.add_function(wrap_pyfunction!(layout::channels_last_3d_strides, m)?)?;
    m.add_function(wrap_pyfunction!(layout::empty_like_strides, m)?)?;
    m.add_function(wrap_pyfunction!(layout::numel, m)?)?;
    m.add_function(wrap_pyfunction!(layout::broadcast_shapes, m)?)?;
    m.add_function(wrap_pyfunction!(layout::contiguity_expr, m)?)?;
    m.add_function(wrap_pyfunction!(layout::channels_last_contiguity_expr, m)?)?;
    m.add_function(wrap_pyfunction!(layout::non_overlapping_and_dense_expr, m)?)?;
    m.add_function(wrap_pyfunction!(layout::is_contiguous_or_false, m)?)?;
    m.add_function(wrap_pyfunction!(layout::elementwise_output, m)?)?;
    m.add_function(wrap_pyfunction!(program::compile, m)?)?;
    m.add_function(wrap_pyfunction!(program::_rust_run_seconds, m)?)?;
    Ok(())
}
