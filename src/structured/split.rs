//! The multi-result views: `split`, `split_with_sizes`, `chunk`, `unbind`. Their number of
//! results depends on sizes; a symbolic trace guards the count it took (a program names its
//! results, so the count is part of the program's contract).

use super::{Call, Out, SOp};
use crate::reduce::wrap_dim;
use crate::{Bool, Error, Int, Result};

/// `v` as a concrete count, guarded equal to its hint in a symbolic trace.
fn count<I: Int>(v: &I, why: impl Fn() -> String) -> Result<i64> {
    if let Some(c) = v.as_const() {
        return Ok(c);
    }
    let h = v
        .hint()
        .ok_or_else(|| Error::invalid(format!("{}: the count has no hint", why())))?;
    if !v.eq_i(h).guard(&why)? {
        return Err(Error::invalid(format!("internal: {} is not its hint", why())));
    }
    Ok(h)
}

fn narrowed<I: Int>(
    x: &crate::iter::TensorSpec<I>,
    dim: usize,
    start: I,
    len: I,
    dtype: crate::DType,
) -> Out<I> {
    let mut sizes = x.sizes.clone();
    sizes[dim] = len;
    Out {
        sizes,
        strides: x.strides.clone(),
        dtype,
        view_offset: Some(x.storage_offset.clone() + start * x.strides[dim].clone()),
    }
}

/// The views of `split`, `split_with_sizes`, `chunk` and `unbind`.
pub(super) fn split<I: Int>(call: &Call<I>) -> Result<Vec<Out<I>>> {
    let x = call.tensor(0)?;
    let dtype = super::call::dtype_of(x);
    let rank = x.sizes.len();
    match call.op {
        SOp::Unbind => {
            if rank == 0 {
                return Err(Error::Index {
                    message: "Dimension specified as 0 but tensor has no dimensions".into(),
                });
            }
            let d = wrap_dim(call.cint("dim")?, rank)?;
            let n = count(&x.sizes[d], || format!("unbind: the number of results, size {d}"))?;
            Ok((0..n)
                .map(|i| {
                    let mut o = narrowed(x, d, I::from_i64(i), I::from_i64(1), dtype);
                    o.sizes.remove(d);
                    o.strides.remove(d);
                    o
                })
                .collect())
        }
        SOp::Chunk => {
            if rank == 0 {
                return Err(Error::argument("chunk expects at least a 1-dimensional tensor"));
            }
            let chunks = call.cint("chunks")?;
            if chunks <= 0 {
                return Err(Error::argument(format!(
                    "chunk expects `chunks` to be greater than 0, got: {chunks}"
                )));
            }
            let d = wrap_dim(call.cint("dim")?, rank)?;
            let size = x.sizes[d].clone();
            let empty = size.eq_i(0).guard(|| format!("chunk: size {d} is 0"))?;
            if empty {
                return Ok((0..chunks)
                    .map(|_| narrowed(x, d, I::from_i64(0), I::from_i64(0), dtype))
                    .collect());
            }
            // `ceil(size / chunks)` for a non-empty dim, without overflow for any `chunks`.
            let piece = (size - I::from_i64(1)).floor_div(&I::from_i64(chunks)) + I::from_i64(1);
            split_by(x, d, piece, dtype)
        }
        SOp::Split => {
            if rank == 0 {
                return Err(Error::argument("split expects at least a 1-dimensional tensor"));
            }
            let piece = call.int("split_size")?;
            if piece.lt_i(0).guard(|| "split: split_size is negative".to_string())? {
                return Err(Error::argument(format!(
                    "split expects split_size be non-negative, but got split_size={piece}"
                )));
            }
            let d = wrap_dim(call.cint("dim")?, rank)?;
            let size = x.sizes[d].clone();
            let zero = piece.eq_i(0).guard(|| "split: split_size is 0".to_string())?;
            if zero {
                if size.ne_i(0).guard(|| format!("split: size {d} is not 0"))? {
                    return Err(Error::argument(format!(
                        "split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
                    )));
                }
                return Ok(vec![narrowed(x, d, I::from_i64(0), size, dtype)]);
            }
            split_by(x, d, piece, dtype)
        }
        SOp::SplitWithSizes => {
            if rank == 0 {
                return Err(Error::argument("split expects at least a 1-dimensional tensor"));
            }
            let sizes = call.ints("split_sizes")?;
            let d = wrap_dim(call.cint("dim")?, rank)?;
            let shown = || {
                format!("[{}]", sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "))
            };
            let mut start = I::from_i64(0);
            let mut outs = Vec::with_capacity(sizes.len());
            for s in &sizes {
                if s.lt_i(0).guard(|| "split_with_sizes: a size is negative".to_string())? {
                    return Err(Error::argument(format!(
                        "split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes={}",
                        shown()
                    )));
                }
                outs.push(narrowed(x, d, start.clone(), s.clone(), dtype));
                start = start + s.clone();
            }
            let size = &x.sizes[d];
            if start.sym_ne(size).guard(|| format!("split_with_sizes: the sizes sum to size {d}"))? {
                return Err(Error::Shape {
                    message: format!(
                        "split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at dimension {d}), but got split_sizes={}",
                        shown()
                    ),
                });
            }
            Ok(outs)
        }
        other => Err(Error::invalid(format!("internal: {other} is not a split"))),
    }
}

/// `split(piece, d)` for a positive `piece`: `max(ceil(size / piece), 1)` views, the last
/// one shorter.
fn split_by<I: Int>(
    x: &crate::iter::TensorSpec<I>,
    d: usize,
    piece: I,
    dtype: crate::DType,
) -> Result<Vec<Out<I>>> {
    let size = x.sizes[d].clone();
    // `ceil(size / piece)` (0 for an empty dim, then one piece), without overflow.
    let n_expr = (size.clone() - I::from_i64(1)).floor_div(&piece) + I::from_i64(1);
    let n = count(&n_expr, || format!("split: the number of pieces of size {d}"))?.max(1);
    let mut outs = Vec::with_capacity(n as usize);
    for i in 0..n {
        let start = piece.clone() * I::from_i64(i);
        let len = if i + 1 < n {
            piece.clone()
        } else {
            size.clone() - start.clone()
        };
        outs.push(narrowed(x, d, start, len, dtype));
    }
    Ok(outs)
}
