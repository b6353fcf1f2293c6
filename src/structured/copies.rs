//! Copies that move data: `triu`/`tril`, `cat`, `stack`, `repeat`, `flip`, `roll`,
//! `cumsum`. Their layout rules are PyTorch's: `cat` keeps the inputs' common suggested
//! memory format, `stack` is `cat` of the inputs unsqueezed, `roll` is `cat` of two
//! narrowed views (so it keeps the input's suggested format), `flip` allocates as
//! TensorIterator does.

use super::call::dtype_of;
use super::{Call, Out};
use crate::iter::TensorSpec;
use crate::layout::{self, MemoryFormat, StrideMatch};
use crate::reduce::wrap_dim;
use crate::{promote_types, Bool, DType, Error, Int, Result};

/// `triu`/`tril`: a contiguous copy, at least 2-D.
pub(super) fn triangle<I: Int>(call: &Call<I>) -> Result<Vec<Out<I>>> {
    let x = call.tensor(0)?;
    if x.sizes.len() < 2 {
        return Err(Error::Shape {
            message: format!("{}: input tensor must have at least 2 dimensions", call.op),
        });
    }
    call.cint("diagonal")?;
    Ok(vec![Out::contiguous(x.sizes.clone(), dtype_of(x))])
}

/// A tensor `cat` leaves out: PyTorch's legacy 1-D `[0]` tensors.
fn skipped<I: Int>(t: &TensorSpec<I>) -> Result<bool> {
    Ok(t.sizes.len() == 1
        && t.sizes[0]
            .eq_i(0)
            .guard(|| format!("cat: a 1-D input of size {} is skipped when empty", t.sizes[0]))?)
}

/// `cat(tensors, dim)`: the layout of PyTorch's meta function (see the module docs).
pub(super) fn cat<I: Int>(call: &Call<I>) -> Result<Vec<Out<I>>> {
    cat_of(call.list(0)?, call.cint("dim")?).map(|o| vec![o])
}

pub(super) fn cat_of<I: Int>(ts: &[TensorSpec<I>], dim: i64) -> Result<Out<I>> {
    for (i, t) in ts.iter().enumerate() {
        if t.sizes.is_empty() {
            return Err(Error::argument(format!(
                "zero-dimensional tensor (at position {i}) cannot be concatenated"
            )));
        }
    }
    let mut skip = Vec::with_capacity(ts.len());
    for t in ts {
        skip.push(skipped(t)?);
    }
    let valid = skip.iter().position(|s| !s);
    let dim = match valid {
        Some(v) => wrap_dim(dim, ts[v].sizes.len())?,
        None => dim.max(0) as usize,
    };
    if ts.is_empty() {
        return Err(Error::argument(
            "torch.cat(): expected a non-empty list of Tensors",
        ));
    }
    let dtype = ts
        .iter()
        .map(dtype_of)
        .reduce(promote_types)
        .unwrap_or(DType::F32);
    // The common suggested memory format of every input (skipped ones too), else contiguous.
    let mut format: Option<MemoryFormat> = None;
    for t in ts {
        let f = layout::suggest_memory_format(&t.sizes, &t.strides, StrideMatch::Like)?;
        if f == MemoryFormat::Contiguous || format.is_some_and(|g| g != f) {
            format = Some(MemoryFormat::Contiguous);
            break;
        }
        format = Some(f);
    }
    let format = format.unwrap_or(MemoryFormat::Contiguous);
    let r = valid.unwrap_or(0);
    let first = &ts[r];
    let mut at_dim = I::from_i64(0);
    for (i, t) in ts.iter().enumerate() {
        if skip[i] {
            continue;
        }
        if t.sizes.len() != first.sizes.len() {
            return Err(Error::Shape {
                message: format!(
                    "Tensors must have same number of dimensions: got {} and {}",
                    first.sizes.len(),
                    t.sizes.len()
                ),
            });
        }
        for d in 0..first.sizes.len() {
            if d == dim {
                continue;
            }
            let (a, b) = (&first.sizes[d], &t.sizes[d]);
            if a.sym_ne(b).guard(|| format!("cat: size {d} of input {i} ({b}) equals {a}"))? {
                return Err(Error::Shape {
                    message: format!(
                        "Sizes of tensors must match except in dimension {dim}. Expected size \
                         {a} but got size {b} for tensor number {i} in the list."
                    ),
                });
            }
        }
        at_dim = at_dim + t.sizes[dim].clone();
    }
    let mut sizes = first.sizes.clone();
    if dim < sizes.len() {
        sizes[dim] = at_dim;
    }
    let strides = layout::strides_for_format(&sizes, format)?;
    Ok(Out::new(sizes, strides, dtype))
}

/// `stack(tensors, dim)` as ATen computes it: below the inputs' rank, `cat` along `dim`
/// viewed with the new dim split out; at the end, `cat` of the inputs unsqueezed.
pub(super) fn stack<I: Int>(call: &Call<I>) -> Result<Vec<Out<I>>> {
    let ts = call.list(0)?;
    let Some(first) = ts.first() else {
        return Err(Error::argument("stack expects a non-empty TensorList"));
    };
    let dim = wrap_dim(call.cint("dim")?, first.sizes.len() + 1)?;
    for (i, t) in ts.iter().enumerate().skip(1) {
        let equal = t.sizes.len() == first.sizes.len()
            && t.sizes.iter().zip(&first.sizes).enumerate().all(|(d, (a, b))| {
                !a.sym_ne(b)
                    .guard_or_true(|| format!("stack: size {d} of input {i} equals input 0's"))
            });
        if !equal {
            let shown = |t: &TensorSpec<I>| {
                format!("[{}]", t.sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "))
            };
            return Err(Error::Shape {
                message: format!(
                    "stack expects each tensor to be equal size, but got {} at entry 0 and {} at entry {i}",
                    shown(first),
                    shown(t)
                ),
            });
        }
    }
    if dim < first.sizes.len() {
        // `cat` along `dim`, then a view that splits it into `[len(tensors), size]`.
        let o = cat_of(ts, dim as i64)?;
        let mut sizes = first.sizes.clone();
        sizes.insert(dim, I::from_i64(ts.len() as i64));
        let v = crate::view::View::new(o.sizes, o.strides, I::from_i64(0))?.view(&sizes)?;
        let (sizes, strides, _) = v.into_parts();
        return Ok(vec![Out::new(sizes, strides, o.dtype)]);
    }
    let unsqueezed = ts
        .iter()
        .map(|t| {
            let v = crate::view::View::new(t.sizes.clone(), t.strides.clone(), I::from_i64(0))?
                .unsqueeze(dim as i64)?;
            let (sizes, strides, _) = v.into_parts();
            let mut u = TensorSpec::typed(sizes, strides, dtype_of(t));
            u.storage_offset = t.storage_offset.clone();
            Ok(u)
        })
        .collect::<Result<Vec<_>>>()?;
    cat_of(&unsqueezed, dim as i64).map(|o| vec![o])
}

/// `repeat(repeats)`: a contiguous tensor of the (left-padded) sizes times the repeats.
pub(super) fn repeat<I: Int>(call: &Call<I>) -> Result<Vec<Out<I>>> {
    let x = call.tensor(0)?;
    let reps = call.ints("repeats")?;
    if reps.len() < x.sizes.len() {
        return Err(Error::Shape {
            message: "Number of dimensions of repeat dims can not be smaller than number of \
                      dimensions of tensor"
                .into(),
        });
    }
    let pad = reps.len() - x.sizes.len();
    let sizes: Vec<I> = reps
        .iter()
        .enumerate()
        .map(|(d, r)| {
            if d < pad {
                Ok(r.clone())
            } else {
                x.sizes[d - pad].checked_mul(r, || format!("repeat: size {d} times its count"))
            }
        })
        .collect::<Result<_>>()?;
    for r in &reps {
        if r.lt_i(0).guard(|| format!("repeat: count {r} is negative"))? {
            return Err(Error::Shape {
                message: format!(
                    "Trying to create tensor with negative dimension {r}: [{}]",
                    sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")
                ),
            });
        }
    }
    Ok(vec![Out::contiguous(sizes, dtype_of(x))])
}

/// Wraps a list of dims, rejecting duplicates (`flip`).
pub(super) fn wrap_dims(dims: &[i64], ndim: usize) -> Result<Vec<usize>> {
    let mut seen = vec![false; ndim.max(1)];
    let mut out = Vec::with_capacity(dims.len());
    for &d in dims {
        let w = wrap_dim(d, ndim)?;
        if seen[w] {
            return Err(Error::argument(format!("dim {w} appears multiple times in the list of dims")));
        }
        seen[w] = true;
        out.push(w);
    }
    Ok(out)
}

/// `flip(dims)`: `empty_like(x)` (preserve format).
pub(super) fn flip<I: Int>(call: &Call<I>) -> Result<Vec<Out<I>>> {
    let x = call.tensor(0)?;
    wrap_dims(&call.cints("dims")?, x.sizes.len())?;
    let strides = layout::empty_like_strides(&x.sizes, &x.strides)?;
    Ok(vec![Out::new(x.sizes.clone(), strides, dtype_of(x))])
}

/// `roll(shifts, dims)` as ATen's `roll_cpu` computes it: one dim at a time, each a `cat`
/// of two narrowed views; no dims rolls the flattened tensor.
pub(super) fn roll<I: Int>(call: &Call<I>) -> Result<Vec<Out<I>>> {
    let x = call.tensor(0)?;
    let shifts = call.ints("shifts")?;
    let dims: Vec<i64> = match call.kw("dims")? {
        super::Kw::Null => Vec::new(),
        _ => call.cints("dims")?,
    };
    let dtype = dtype_of(x);
    if shifts.is_empty() {
        return Err(Error::argument("`shifts` required"));
    }
    if dims.is_empty() && shifts.len() == 1 {
        let sizes = x.sizes.clone();
        return Ok(vec![Out::contiguous(sizes, dtype)]);
    }
    if shifts.len() != dims.len() {
        return Err(Error::argument(format!(
            "shifts and dimensions must align. shifts: {}, dims:{}",
            shifts.len(),
            dims.len()
        )));
    }
    let mut t = TensorSpec::typed(x.sizes.clone(), x.strides.clone(), dtype);
    for (shift, &dim) in shifts.iter().zip(&dims) {
        t = roll_one(&t, shift, dim)?;
    }
    Ok(vec![Out::new(t.sizes, t.strides, dtype)])
}

fn roll_one<I: Int>(x: &TensorSpec<I>, shift: &I, dim: i64) -> Result<TensorSpec<I>> {
    if x.sizes.is_empty() {
        return Err(Error::Index {
            message: format!("dimension specified as {dim} but tensor has no dimensions"),
        });
    }
    let d = wrap_dim(dim, x.sizes.len())?;
    let numel = layout::numel(&x.sizes);
    let dtype = dtype_of(x);
    if numel.eq_i(0).guard(|| "roll: the input is empty".to_string())? {
        let strides = layout::empty_like_strides(&x.sizes, &x.strides)?;
        return Ok(TensorSpec::typed(x.sizes.clone(), strides, dtype));
    }
    let size = x.sizes[d].clone();
    // `(size - shift) mod size`, with the shift reduced first (no overflow for any shift).
    let start = (size.clone() - shift.modulo(&size)).modulo(&size);
    let part = |len: I| {
        let mut sizes = x.sizes.clone();
        sizes[d] = len;
        TensorSpec::typed(sizes, x.strides.clone(), dtype)
    };
    let parts = [part(size - start.clone()), part(start)];
    let o = cat_of(&parts, d as i64)?;
    Ok(TensorSpec::typed(o.sizes, o.strides, dtype))
}

/// `cumsum(dim, dtype)`: contiguous; integer and bool inputs sum in int64 unless `dtype`.
pub(super) fn cumsum<I: Int>(call: &Call<I>) -> Result<Vec<Out<I>>> {
    let x = call.tensor(0)?;
    wrap_dim(call.cint("dim")?, x.sizes.len())?;
    let xd = dtype_of(x);
    let dtype = match call.dtype("dtype")? {
        Some(d) => d,
        None if xd.is_integral() || xd == DType::Bool => DType::I64,
        None => xd,
    };
    let empty = layout::numel(&x.sizes)
        .eq_i(0)
        .guard(|| "cumsum: the input is empty".to_string())?;
    if dtype == DType::Bool && !empty {
        return Err(Error::DType {
            message: "\"cumsum_cpu\" not implemented for 'Bool'".into(),
        });
    }
    Ok(vec![Out::contiguous(x.sizes.clone(), dtype)])
}
