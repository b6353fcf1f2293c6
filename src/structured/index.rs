//! Indexing: `index_select`, `gather`, `embedding`, and `index` (`x[..., index]` along one
//! dim). The layouts are decided by sizes alone; index *values* are checked where they are
//! known ([`check_index_values`]: the conformance checker and every kernel, before a
//! read), as an `index` error, never a read out of bounds.

use super::call::dtype_of;
use super::{Call, Out, SOp};
use crate::iter::TensorSpec;
use crate::reduce::wrap_dim;
use crate::{DType, Error, Int, Result};

fn index_dtype_ok(d: DType) -> bool {
    matches!(d, DType::I64 | DType::I32)
}

fn shown<I: Int>(sizes: &[I]) -> String {
    format!("[{}]", sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "))
}

/// `index_select(x, dim, index)`: contiguous, `x`'s sizes with `dim` replaced by the
/// number of indices.
pub(super) fn index_select<I: Int>(call: &Call<I>) -> Result<Vec<Out<I>>> {
    let (x, index) = (call.tensor(0)?, call.tensor(1)?);
    let d = wrap_dim(call.cint("dim")?, x.sizes.len())?;
    if index.sizes.len() > 1 {
        return Err(Error::Index {
            message: "index_select(): Index is supposed to be a vector".into(),
        });
    }
    let numel = crate::layout::numel(&index.sizes);
    if x.sizes.is_empty() {
        use crate::Bool;
        if numel.ne_i(1).guard(|| "index_select: one index into a 0-d input".to_string())? {
            return Err(Error::Shape {
                message: format!(
                    "index_select(): Index to scalar can have only 1 value, got {numel} value(s)"
                ),
            });
        }
    }
    if !index_dtype_ok(dtype_of(index)) {
        return Err(Error::DType {
            message: "index_select(): Expected dtype int32 or int64 for index".into(),
        });
    }
    let mut sizes = x.sizes.clone();
    if !sizes.is_empty() {
        sizes[d] = numel;
    }
    Ok(vec![Out::contiguous(sizes, dtype_of(x))])
}

/// `gather(x, dim, index)`: contiguous, the index's sizes.
pub(super) fn gather<I: Int>(call: &Call<I>) -> Result<Vec<Out<I>>> {
    use crate::Bool;
    let (x, index) = (call.tensor(0)?, call.tensor(1)?);
    let d = wrap_dim(call.cint("dim")?, x.sizes.len())?;
    let out = Out::contiguous(index.sizes.clone(), dtype_of(x));
    let numel = crate::layout::numel(&index.sizes);
    if numel.eq_i(0).guard(|| "gather: the index is empty".to_string())? {
        return Ok(vec![out]);
    }
    if !index_dtype_ok(dtype_of(index)) {
        return Err(Error::DType {
            message: "gather(): Expected dtype int32/int64 for index".into(),
        });
    }
    let (xr, ir) = (x.sizes.len().max(1), index.sizes.len().max(1));
    if xr != ir {
        return Err(Error::argument(
            "Index tensor must have the same number of dimensions as input tensor",
        ));
    }
    let size = |t: &TensorSpec<I>, k: usize| t.sizes.get(k).cloned().unwrap_or(I::from_i64(1));
    for k in 0..xr {
        if k == d {
            continue;
        }
        let (a, b) = (size(index, k), size(x, k));
        if a.sym_gt(&b).guard(|| format!("gather: index size {k} ({a}) exceeds the input's ({b})"))? {
            return Err(Error::Shape {
                message: format!(
                    "Size does not match at dimension {k} expected index {} to be no larger than self {} apart from dimension {d}",
                    shown(&index.sizes),
                    shown(&x.sizes)
                ),
            });
        }
    }
    Ok(vec![out])
}

/// `embedding(weight, indices)`: contiguous `indices.sizes + [weight.size(1)]`.
pub(super) fn embedding<I: Int>(call: &Call<I>) -> Result<Vec<Out<I>>> {
    let (w, idx) = (call.tensor(0)?, call.tensor(1)?);
    if w.sizes.len() != 2 {
        return Err(Error::argument("'weight' must be 2-D"));
    }
    if !index_dtype_ok(dtype_of(idx)) {
        return Err(Error::DType {
            message: format!(
                "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got {} instead",
                dtype_of(idx)
            ),
        });
    }
    let mut sizes = idx.sizes.clone();
    sizes.push(w.sizes[1].clone());
    Ok(vec![Out::contiguous(sizes, dtype_of(w))])
}

/// `x[(slice(None),) * dim + (index,)]`: TensorIterator's output over the input restrided
/// to the index's shape at `dim` (stride 0 there) and the index reshaped to match.
pub(super) fn index<I: Int>(call: &Call<I>) -> Result<Vec<Out<I>>> {
    let (x, index) = (call.tensor(0)?, call.tensor(1)?);
    if x.sizes.is_empty() {
        return Err(Error::Index {
            message: "too many indices for tensor of dimension 0".into(),
        });
    }
    let d = wrap_dim(call.cint("dim")?, x.sizes.len())?;
    if !index_dtype_ok(dtype_of(index)) {
        return Err(Error::Index {
            message: "tensors used as indices must be long, int, byte or bool tensors".into(),
        });
    }
    let (src, idx) = index_operands(x, index, d)?;
    let (sizes, strides) = crate::iter::elementwise_output(&[src, idx])?;
    Ok(vec![Out::new(sizes, strides, dtype_of(x))])
}

/// Sizes and strides.
type Layout<I> = (Vec<I>, Vec<I>);

/// The two operands of `index`'s TensorIterator: `x` with dim `d` replaced by the index's
/// dims at stride 0, and the index with size-1 dims around it (`reshape`'s strides).
pub(super) fn index_operands<I: Int>(
    x: &TensorSpec<I>,
    index: &TensorSpec<I>,
    d: usize,
) -> Result<(Layout<I>, Layout<I>)> {
    let k = index.sizes.len();
    let mut sizes = x.sizes[..d].to_vec();
    sizes.extend(index.sizes.iter().cloned());
    sizes.extend(x.sizes[d + 1..].iter().cloned());
    let mut strides = x.strides[..d].to_vec();
    strides.extend((0..k).map(|_| I::from_i64(0)));
    strides.extend(x.strides[d + 1..].iter().cloned());
    let after = x.sizes.len() - d - 1;
    let mut shape: Vec<I> = (0..d).map(|_| I::from_i64(1)).collect();
    shape.extend(index.sizes.iter().cloned());
    shape.extend((0..after).map(|_| I::from_i64(1)));
    // `reshape` (a view: only size-1 dims are added), whose strides for those dims are
    // `computeStride`'s, which TensorIterator reads.
    let v = crate::view::View::new(index.sizes.clone(), index.strides.clone(), I::from_i64(0))?
        .view(&shape)?;
    let (isizes, istrides, _) = v.into_parts();
    Ok(((sizes, strides), (isizes, istrides)))
}

/// Checks index values (row-major) against the sizes they index, as PyTorch does before
/// reading: `index_select`/`embedding`/`gather` take `0..size`, `index` also negative
/// values from `-size`. Out of range is an `index` error.
pub fn check_index_values(op: SOp, bound: i64, values: &[i64]) -> Result<()> {
    let negative_ok = op == SOp::Index;
    for &v in values {
        let ok = if negative_ok {
            v >= -bound && v < bound
        } else {
            v >= 0 && v < bound
        };
        if !ok {
            return Err(Error::Index {
                message: match op {
                    SOp::IndexSelect | SOp::Embedding => "index out of range in self".to_string(),
                    _ => format!("index {v} is out of bounds for dimension with size {bound}"),
                },
            });
        }
    }
    Ok(())
}

/// The size the index values of `call` index into (`None` when the op takes no index).
pub fn index_bound<I: Int>(call: &Call<I>) -> Result<Option<I>> {
    let x = call.tensor(0)?;
    Ok(match call.op {
        SOp::Embedding => x.sizes.first().cloned(),
        SOp::IndexSelect | SOp::Gather | SOp::Index => {
            let d = wrap_dim(call.cint("dim")?, x.sizes.len())?;
            Some(x.sizes.get(d).cloned().unwrap_or(I::from_i64(1)))
        }
        _ => None,
    })
}
