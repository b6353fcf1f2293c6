//! Layout predicates and strides on Python ints or `SymInt`s.
//!
//! Every function converts its arguments once ([`Lists`]) and calls the crate's generic
//! function at `i64` (all ints) or at `SymInt` (any symbol): nothing is re-implemented
//! here, so the Python answers are the crate's, guards included.

use crate::errors::IntoPyResult;
use crate::generic;
use crate::symbolic::{to_py_list, Lists, Num, ToPyBool};
use pyo3::prelude::*;
use pyo3::IntoPyObjectExt;
use symstride::layout::{self, MemoryFormat, StrideMatch};

fn two(sizes: Vec<Num>, strides: Vec<Num>) -> Lists {
    Lists::new(vec![sizes, strides])
}

/// `torch.Tensor.is_contiguous()` for this layout (c10's branchy check: records guards
/// when symbolic).
#[pyfunction]
pub fn is_contiguous(sizes: Vec<Num>, strides: Vec<Num>) -> PyResult<bool> {
    generic!(two(sizes, strides), |x| layout::is_contiguous(&x[0], &x[1])
        .py())
}

/// `is_contiguous(memory_format=torch.channels_last)` (4-D layouts).
#[pyfunction]
pub fn is_channels_last_contiguous(sizes: Vec<Num>, strides: Vec<Num>) -> PyResult<bool> {
    generic!(two(sizes, strides), |x| {
        layout::is_channels_last_contiguous_2d(&x[0], &x[1]).py()
    })
}

/// `is_contiguous(memory_format=torch.channels_last_3d)` (5-D layouts).
#[pyfunction]
pub fn is_channels_last_3d_contiguous(sizes: Vec<Num>, strides: Vec<Num>) -> PyResult<bool> {
    generic!(two(sizes, strides), |x| {
        layout::is_channels_last_contiguous_3d(&x[0], &x[1]).py()
    })
}

/// c10's `is_non_overlapping_and_dense` (the C++ TensorImpl flag).
#[pyfunction]
pub fn is_non_overlapping_and_dense(sizes: Vec<Num>, strides: Vec<Num>) -> PyResult<bool> {
    generic!(two(sizes, strides), |x| {
        layout::is_non_overlapping_and_dense(&x[0], &x[1]).py()
    })
}

/// `suggest_memory_format`: `"contiguous"`, `"channels_last"` or `"channels_last_3d"`.
/// `exact=True` is `channels_last_strides_exact_match=True`.
#[pyfunction]
#[pyo3(signature = (sizes, strides, exact=false))]
pub fn suggest_memory_format(
    sizes: Vec<Num>,
    strides: Vec<Num>,
    exact: bool,
) -> PyResult<&'static str> {
    let m = if exact {
        StrideMatch::Exact
    } else {
        StrideMatch::Like
    };
    let f: MemoryFormat = generic!(two(sizes, strides), |x| {
        layout::suggest_memory_format(&x[0], &x[1], m).py()
    })?;
    Ok(f.name())
}

/// The strides of `torch.empty(sizes)`.
#[pyfunction]
pub fn contiguous_strides(py: Python<'_>, sizes: Vec<Num>) -> PyResult<PyObject> {
    generic!(Lists::new(vec![sizes]), |x| {
        to_py_list(py, &layout::try_contiguous_strides(&x[0]).py()?)
    })
}

/// The strides of `torch.empty(sizes, memory_format=torch.channels_last)` (4-D).
#[pyfunction]
pub fn channels_last_strides(py: Python<'_>, sizes: Vec<Num>) -> PyResult<PyObject> {
    generic!(Lists::new(vec![sizes]), |x| {
        to_py_list(py, &layout::channels_last_strides_2d(&x[0]).py()?)
    })
}

/// The strides of `torch.empty(sizes, memory_format=torch.channels_last_3d)` (5-D).
#[pyfunction]
pub fn channels_last_3d_strides(py: Python<'_>, sizes: Vec<Num>) -> PyResult<PyObject> {
    generic!(Lists::new(vec![sizes]), |x| {
        to_py_list(py, &layout::channels_last_strides_3d(&x[0]).py()?)
    })
}

/// The strides of `torch.empty_like(t)` (preserve_format) for a tensor of this layout.
#[pyfunction]
pub fn empty_like_strides(
    py: Python<'_>,
    sizes: Vec<Num>,
    strides: Vec<Num>,
) -> PyResult<PyObject> {
    generic!(two(sizes, strides), |x| {
        to_py_list(py, &layout::empty_like_strides(&x[0], &x[1]).py()?)
    })
}

/// The number of elements (product of the sizes).
#[pyfunction]
pub fn numel(py: Python<'_>, sizes: Vec<Num>) -> PyResult<PyObject> {
    generic!(Lists::new(vec![sizes]), |x| {
        use crate::symbolic::ToPyNum;
        layout::try_numel(&x[0]).py()?.to_py(py)
    })
}

/// `torch.broadcast_shapes(*shapes)`: the broadcast shape, or `BroadcastError` with
/// PyTorch's message.
#[pyfunction]
#[pyo3(signature = (*shapes))]
pub fn broadcast_shapes(py: Python<'_>, shapes: Vec<Vec<Num>>) -> PyResult<PyObject> {
    generic!(Lists::new(shapes), |x| {
        let refs: Vec<&[_]> = x.iter().map(|s| &s[..]).collect();
        to_py_list(py, &layout::infer_size(&refs).py()?)
    })
}

/// Branch-free contiguity: the whole condition as one `SymBool` (or `bool`), recording
/// nothing.
#[pyfunction]
pub fn contiguity_expr(py: Python<'_>, sizes: Vec<Num>, strides: Vec<Num>) -> PyResult<PyObject> {
    generic!(two(sizes, strides), |x| {
        layout::contiguity_expr(&x[0], &x[1]).py()?.to_py(py)
    })
}

/// Branch-free channels-last contiguity (4-D), recording nothing.
#[pyfunction]
pub fn channels_last_contiguity_expr(
    py: Python<'_>,
    sizes: Vec<Num>,
    strides: Vec<Num>,
) -> PyResult<PyObject> {
    generic!(two(sizes, strides), |x| {
        layout::channels_last_contiguity_expr_2d(&x[0], &x[1])
            .py()?
            .to_py(py)
    })
}

/// Branch-free non-overlapping-and-dense, recording nothing.
#[pyfunction]
pub fn non_overlapping_and_dense_expr(
    py: Python<'_>,
    sizes: Vec<Num>,
    strides: Vec<Num>,
) -> PyResult<PyObject> {
    generic!(two(sizes, strides), |x| {
        layout::non_overlapping_and_dense_expr(&x[0], &x[1])
            .py()?
            .to_py(py)
    })
}

/// `is_contiguous_or_false`: true only when contiguity is decided true; records nothing
/// and never fails on unbacked symbols.
#[pyfunction]
pub fn is_contiguous_or_false(sizes: Vec<Num>, strides: Vec<Num>) -> PyResult<bool> {
    generic!(two(sizes, strides), |x| {
        layout::is_contiguous_or_false(&x[0], &x[1]).py()
    })
}

/// The output TensorIterator allocates for an elementwise float32 op over these inputs
/// (`(sizes, strides)` pairs, no `out=`): `(sizes, strides)` of the output, with the
/// guards the build records when symbolic.
#[pyfunction]
#[pyo3(signature = (*tensors))]
pub fn elementwise_output(
    py: Python<'_>,
    tensors: Vec<(Vec<Num>, Vec<Num>)>,
) -> PyResult<PyObject> {
    let k = tensors.len();
    let flat: Vec<Vec<Num>> = tensors.into_iter().flat_map(|(a, b)| [a, b]).collect();
    generic!(Lists::new(flat), |x| {
        let pairs: Vec<_> = (0..k)
            .map(|i| (x[2 * i].clone(), x[2 * i + 1].clone()))
            .collect();
        let (sizes, strides) = symstride::iter::elementwise_output(&pairs).py()?;
        (to_py_list(py, &sizes)?, to_py_list(py, &strides)?).into_py_any(py)
    })
}
