//! Naive references of the structured ops: the oracle their kernels are compared against.
//!
//! [`reference`] asks [`meta`](super::meta) for the results' sizes and dtypes (and
//! PyTorch's error), then computes every value with plain multi-index loops: floats in
//! `f64`, integers in `i64` where PyTorch computes in integers, each result value narrowed
//! to the result dtype with [`narrow`] (PyTorch's casts, written out in `op::reference`).
//! No vectorization, no threads, no cleverness: a reference must be obviously right.
//!
//! Input values are read only through [`Vals::at`], which checks every coordinate, and
//! index values are checked with [`check_index_values`] before they are used, so bad input
//! is an error, never a panic or a read out of bounds. The norms, softmax and attention
//! live in [`norm`]; the pieces of the multi-result views in [`views`].

mod norm;
mod views;

use super::{check_index_values, fill_value, Call, Out, SArg, SOp};
use crate::op::narrow;
use crate::reduce::wrap_dim;
use crate::tensor::Scalar;
use crate::{DType, Error, Result};

/// One argument of a reference call: a tensor's values in row-major (logical) order with
/// its sizes, a list of them, or an absent optional tensor.
#[derive(Clone, Debug, PartialEq)]
pub enum RArg {
    /// A tensor: its sizes and its values in row-major order (`values.len()` is the
    /// product of `sizes`).
    Tensor {
        /// Sizes, outermost first.
        sizes: Vec<i64>,
        /// Values in row-major order, in the tensor's dtype.
        values: Vec<Scalar>,
    },
    /// A list of tensors (sizes, row-major values), for `cat` and `stack`.
    List(Vec<(Vec<i64>, Vec<Scalar>)>),
    /// An absent optional tensor (`None`).
    Absent,
}

/// The results of `call` (as [`meta`](super::meta) describes them: same count, sizes and
/// dtypes), each in row-major order, values already narrowed to the result dtype with
/// [`narrow`]. Split/chunk/unbind (views) return their pieces' values too.
///
/// `inputs` holds one [`RArg`] per tensor slot of the call, whose sizes must be the call's.
/// Index values out of range are an [`Error::Index`].
pub fn reference(call: &Call<i64>, inputs: &[RArg]) -> Result<Vec<Vec<Scalar>>> {
    let outs = super::meta(call)?;
    let args = check_args(call, inputs)?;
    let out = || {
        outs.first()
            .ok_or_else(|| internal("meta returned no result"))
    };
    use SOp::*;
    let one = match call.op {
        Arange => arange(call, out()?)?,
        Full | Zeros | Ones | Empty | ScalarTensor | ZerosLike | OnesLike | EmptyLike
        | FullLike | NewZeros | NewOnes | NewFull => {
            let v = fill_value(call)?.ok_or_else(|| internal("no fill value"))?;
            compute(out()?, |_| Ok(v))?
        }
        Triu | Tril => triangle(call, &args, out()?)?,
        Cat => cat(call, &args, out()?)?,
        Stack => stack(call, &args, out()?)?,
        Repeat => repeat(call, &args, out()?)?,
        Flip => flip(call, &args, out()?)?,
        Roll => roll(call, &args, out()?)?,
        Cumsum => cumsum(call, &args, out()?)?,
        IndexSelect => index_select(call, &args, out()?)?,
        Gather => gather(call, &args, out()?)?,
        Embedding => embedding(&args, out()?)?,
        Index => index(call, &args, out()?)?,
        Softmax | LogSoftmax => norm::softmax(call, &args, out()?)?,
        LayerNorm => norm::layer_norm(call, &args, out()?)?,
        RmsNorm => norm::rms_norm(call, &args, out()?)?,
        BatchNorm => norm::batch_norm(call, &args, out()?)?,
        GroupNorm => norm::group_norm(call, &args, out()?)?,
        Sdpa => norm::sdpa(call, &args, out()?)?,
        Split | SplitWithSizes | Chunk | Unbind => return views::pieces(call, &args, &outs),
    };
    Ok(vec![one])
}

fn internal(what: &str) -> Error {
    Error::invalid(format!("reference: internal: {what}"))
}

/// A tensor argument's values, checked against its sizes.
#[derive(Clone, Copy, Debug)]
pub(super) struct Vals<'a> {
    sizes: &'a [i64],
    values: &'a [Scalar],
}

impl<'a> Vals<'a> {
    /// The element at multi-index `at` (row-major), every coordinate checked.
    fn at(&self, at: &[i64]) -> Result<Scalar> {
        if at.len() != self.sizes.len() {
            return Err(internal(&format!(
                "{} coordinates for a tensor of rank {}",
                at.len(),
                self.sizes.len()
            )));
        }
        let mut flat = 0usize;
        for (&i, &s) in at.iter().zip(self.sizes) {
            if i < 0 || i >= s {
                return Err(internal(&format!("coordinate {i} outside size {s}")));
            }
            flat = flat * s as usize + i as usize;
        }
        self.values
            .get(flat)
            .copied()
            .ok_or_else(|| internal("element outside the values"))
    }

    /// The values `start..start + len` (row-major), checked.
    fn slice(&self, start: usize, len: usize) -> Result<&'a [Scalar]> {
        self.values
            .get(start..start.saturating_add(len))
            .ok_or_else(|| internal("a run outside the values"))
    }
}

/// One checked argument.
pub(super) enum Arg<'a> {
    Tensor(Vals<'a>),
    List(Vec<Vals<'a>>),
    Absent,
}

/// The number of elements of `sizes`, or an error when it overflows.
fn numel(sizes: &[i64]) -> Result<usize> {
    sizes.iter().try_fold(1usize, |n, &s| {
        usize::try_from(s)
            .ok()
            .and_then(|s| n.checked_mul(s))
            .ok_or_else(|| Error::invalid(format!("reference: bad sizes {sizes:?}")))
    })
}

fn vals<'a>(
    what: &str,
    spec_sizes: &[i64],
    sizes: &'a [i64],
    values: &'a [Scalar],
) -> Result<Vals<'a>> {
    if sizes != spec_sizes {
        return Err(Error::invalid(format!(
            "reference: {what} has sizes {sizes:?}, the call says {spec_sizes:?}"
        )));
    }
    if values.len() != numel(sizes)? {
        return Err(Error::invalid(format!(
            "reference: {what} has {} values for sizes {sizes:?}",
            values.len()
        )));
    }
    Ok(Vals { sizes, values })
}

/// Checks `inputs` against the call's tensor arguments (kinds, sizes, value counts).
fn check_args<'a>(call: &Call<i64>, inputs: &'a [RArg]) -> Result<Vec<Arg<'a>>> {
    if inputs.len() != call.inputs.len() {
        return Err(Error::invalid(format!(
            "reference: {} takes {} tensor arguments, got {}",
            call.op,
            call.inputs.len(),
            inputs.len()
        )));
    }
    let mut args = Vec::with_capacity(inputs.len());
    for (k, (spec, given)) in call.inputs.iter().zip(inputs).enumerate() {
        let what = format!("argument {k} of {}", call.op);
        args.push(match (spec, given) {
            (SArg::Tensor(t), RArg::Tensor { sizes, values }) => {
                Arg::Tensor(vals(&what, &t.sizes, sizes, values)?)
            }
            (SArg::List(ts), RArg::List(list)) if ts.len() == list.len() => Arg::List(
                ts.iter()
                    .zip(list)
                    .map(|(t, (sizes, values))| vals(&what, &t.sizes, sizes, values))
                    .collect::<Result<_>>()?,
            ),
            (SArg::Absent, RArg::Absent) => Arg::Absent,
            _ => {
                return Err(Error::invalid(format!(
                    "reference: {what} does not match the call's (tensor, list or absent)"
                )))
            }
        });
    }
    Ok(args)
}

/// Tensor argument `k`.
pub(super) fn tensor<'a>(args: &[Arg<'a>], k: usize) -> Result<Vals<'a>> {
    match args.get(k) {
        Some(Arg::Tensor(t)) => Ok(*t),
        _ => Err(internal(&format!("argument {k} is not a tensor"))),
    }
}

/// Optional tensor argument `k`.
pub(super) fn optional<'a>(args: &[Arg<'a>], k: usize) -> Option<Vals<'a>> {
    match args.get(k) {
        Some(Arg::Tensor(t)) => Some(*t),
        _ => None,
    }
}

/// The multi-index of row-major position `l` in `sizes` (every size positive).
fn unravel(mut l: usize, sizes: &[i64]) -> Vec<i64> {
    let mut at = vec![0i64; sizes.len()];
    for k in (0..sizes.len()).rev() {
        let s = sizes[k].max(1) as usize;
        at[k] = (l % s) as i64;
        l /= s;
    }
    at
}

/// Every element of a result of `sizes`, in row-major order: `f` of its multi-index,
/// narrowed to `dtype`.
fn compute_in(
    sizes: &[i64],
    dtype: DType,
    mut f: impl FnMut(&[i64]) -> Result<Scalar>,
) -> Result<Vec<Scalar>> {
    let n = numel(sizes)?;
    let mut values = Vec::new();
    for l in 0..n {
        values.push(narrow(f(&unravel(l, sizes))?, dtype));
    }
    Ok(values)
}

/// [`compute_in`] over the sizes and dtype of `out`.
fn compute(out: &Out<i64>, f: impl FnMut(&[i64]) -> Result<Scalar>) -> Result<Vec<Scalar>> {
    compute_in(&out.sizes, out.dtype, f)
}

/// A value as `f64` (bool: 0 or 1).
pub(super) fn float(s: Scalar) -> f64 {
    s.to_f64()
}

/// A value as `i64` (bool: 0 or 1; a float truncated toward zero, as `Scalar::to<int64_t>`).
fn integer(s: Scalar) -> i64 {
    match s {
        Scalar::Int(i) => i,
        Scalar::Bool(b) => i64::from(b),
        Scalar::Float(f) => f.trunc() as i64,
    }
}

/// The index values of `t` (row-major), which must be integers.
fn index_values(t: Vals<'_>) -> Result<Vec<i64>> {
    t.values
        .iter()
        .map(|v| match v {
            Scalar::Int(i) => Ok(*i),
            other => Err(Error::invalid(format!(
                "reference: index values must be integers, got {other:?}"
            ))),
        })
        .collect()
}

/// `arange`: `start + i * step`. An integer result is computed in `int64` from `start`
/// and `step` converted to `int64` (PyTorch's `accscalar_t` for integer types), a floating
/// one in `f64`.
fn arange(call: &Call<i64>, out: &Out<i64>) -> Result<Vec<Scalar>> {
    let start = call.number("start")?.unwrap_or(Scalar::Int(0));
    let step = call.number("step")?.unwrap_or(Scalar::Int(1));
    if out.dtype.is_integral() {
        let (s0, ds) = (integer(start), integer(step));
        compute(out, |p| {
            Ok(Scalar::Int(s0.wrapping_add(ds.wrapping_mul(p[0]))))
        })
    } else {
        let (s0, ds) = (float(start), float(step));
        compute(out, |p| Ok(Scalar::Float(s0 + p[0] as f64 * ds)))
    }
}

/// `triu`/`tril` over the last two dims: `j - i >= diagonal` (triu) or `<=` (tril) kept,
/// zero elsewhere.
fn triangle(call: &Call<i64>, args: &[Arg<'_>], out: &Out<i64>) -> Result<Vec<Scalar>> {
    let x = tensor(args, 0)?;
    let diagonal = call.cint("diagonal")?;
    let n = out.sizes.len();
    let zero = narrow(Scalar::Int(0), out.dtype);
    compute(out, |p| {
        let (i, j) = (p[n - 2], p[n - 1]);
        let keep = if call.op == SOp::Triu {
            j - i >= diagonal
        } else {
            j - i <= diagonal
        };
        if keep {
            x.at(p)
        } else {
            Ok(zero)
        }
    })
}

/// `cat`: walk the (non-skipped) inputs along `dim` until the coordinate falls in one.
fn cat(call: &Call<i64>, args: &[Arg<'_>], out: &Out<i64>) -> Result<Vec<Scalar>> {
    let Some(Arg::List(ts)) = args.first() else {
        return Err(internal("cat takes a list"));
    };
    // PyTorch's legacy rule: 1-D inputs of size 0 are skipped.
    let kept: Vec<Vals<'_>> = ts.iter().copied().filter(|t| t.sizes != [0]).collect();
    let d = wrap_dim(call.cint("dim")?, out.sizes.len())?;
    compute(out, |p| {
        let mut at = p.to_vec();
        for t in &kept {
            let size = t.sizes.get(d).copied().unwrap_or(0);
            if at[d] < size {
                return t.at(&at);
            }
            at[d] -= size;
        }
        Err(internal("cat: a coordinate past every input"))
    })
}

/// `stack`: input `p[dim]` at the multi-index without `dim`.
fn stack(call: &Call<i64>, args: &[Arg<'_>], out: &Out<i64>) -> Result<Vec<Scalar>> {
    let Some(Arg::List(ts)) = args.first() else {
        return Err(internal("stack takes a list"));
    };
    let d = wrap_dim(call.cint("dim")?, out.sizes.len())?;
    compute(out, |p| {
        let mut at = p.to_vec();
        let which = at.remove(d);
        ts.get(which as usize)
            .ok_or_else(|| internal("stack: no such input"))?
            .at(&at)
    })
}

/// `repeat`: sizes left-padded with 1s; `out[i] = x[i % size]` in every dim.
fn repeat(call: &Call<i64>, args: &[Arg<'_>], out: &Out<i64>) -> Result<Vec<Scalar>> {
    let x = tensor(args, 0)?;
    let pad = call
        .cints("repeats")?
        .len()
        .checked_sub(x.sizes.len())
        .ok_or_else(|| internal("repeat: fewer repeats than dims"))?;
    compute(out, |p| {
        let mut at = Vec::with_capacity(x.sizes.len());
        for (k, &s) in x.sizes.iter().enumerate() {
            at.push(
                p[pad + k]
                    .checked_rem(s)
                    .ok_or_else(|| internal("repeat: size 0"))?,
            );
        }
        x.at(&at)
    })
}

/// `flip`: reversed along each of `dims`.
fn flip(call: &Call<i64>, args: &[Arg<'_>], out: &Out<i64>) -> Result<Vec<Scalar>> {
    let x = tensor(args, 0)?;
    let rank = x.sizes.len();
    let mut dims = Vec::new();
    for d in call.cints("dims")? {
        dims.push(wrap_dim(d, rank)?);
    }
    compute(out, |p| {
        let mut at = p.to_vec();
        for &d in &dims {
            if d < rank {
                at[d] = x.sizes[d] - 1 - p[d];
            }
        }
        x.at(&at)
    })
}

/// `(i - shift) mod size`, in `i128` so that no shift overflows.
fn rolled(i: i64, shift: i64, size: i64) -> Result<i64> {
    if size <= 0 {
        return Err(internal("roll of an empty dim"));
    }
    Ok((i128::from(i) - i128::from(shift)).rem_euclid(i128::from(size)) as i64)
}

/// `roll`: `out[i] = x[(i - shift) mod size]` along each dim (the flattened tensor when
/// `dims` is null or empty); a dim given twice rolls by the sum of its shifts.
fn roll(call: &Call<i64>, args: &[Arg<'_>], out: &Out<i64>) -> Result<Vec<Scalar>> {
    let x = tensor(args, 0)?;
    let shifts = call.cints("shifts")?;
    let dims = match call.kw("dims")? {
        super::Kw::Null => Vec::new(),
        _ => call.cints("dims")?,
    };
    if dims.is_empty() {
        let shift = *shifts.first().ok_or_else(|| internal("roll: no shift"))?;
        let n = x.values.len() as i64;
        return compute(out, |p| {
            let l = p.iter().zip(x.sizes).fold(0i64, |l, (&i, &s)| l * s + i);
            x.at(&unravel(rolled(l, shift, n)? as usize, x.sizes))
        });
    }
    let mut wrapped = Vec::with_capacity(dims.len());
    for (&shift, &d) in shifts.iter().zip(&dims) {
        wrapped.push((shift, wrap_dim(d, x.sizes.len())?));
    }
    compute(out, |p| {
        let mut at = p.to_vec();
        for &(shift, d) in &wrapped {
            at[d] = rolled(at[d], shift, x.sizes[d])?;
        }
        x.at(&at)
    })
}

/// `cumsum`: the input converted to the result dtype, summed along `dim` up to each
/// position; integers wrap (in `i64`, then narrowed: the same low bits), floats in `f64`.
fn cumsum(call: &Call<i64>, args: &[Arg<'_>], out: &Out<i64>) -> Result<Vec<Scalar>> {
    let x = tensor(args, 0)?;
    let d = wrap_dim(call.cint("dim")?, x.sizes.len())?;
    let dtype = out.dtype;
    compute(out, |p| {
        let mut at = p.to_vec();
        let upto = p.get(d).copied().unwrap_or(0);
        let (mut int_sum, mut float_sum) = (0i64, 0.0f64);
        for k in 0..=upto {
            if let Some(a) = at.get_mut(d) {
                *a = k;
            }
            match narrow(x.at(&at)?, dtype) {
                Scalar::Float(f) => float_sum += f,
                other => int_sum = int_sum.wrapping_add(integer(other)),
            }
        }
        Ok(if dtype.is_floating() {
            Scalar::Float(float_sum)
        } else {
            Scalar::Int(int_sum)
        })
    })
}

/// The size `dim` of `x` indexes into (a 0-d tensor: 1).
fn bound(x: Vals<'_>, d: usize) -> i64 {
    x.sizes.get(d).copied().unwrap_or(1)
}

/// `index_select`: `x` with coordinate `dim` replaced by `index[p[dim]]`.
fn index_select(call: &Call<i64>, args: &[Arg<'_>], out: &Out<i64>) -> Result<Vec<Scalar>> {
    let (x, idx) = (tensor(args, 0)?, tensor(args, 1)?);
    let d = wrap_dim(call.cint("dim")?, x.sizes.len())?;
    let values = index_values(idx)?;
    check_index_values(call.op, bound(x, d), &values)?;
    compute(out, |p| {
        if x.sizes.is_empty() {
            return x.at(&[]);
        }
        let mut at = p.to_vec();
        at[d] = *values
            .get(p[d] as usize)
            .ok_or_else(|| internal("index_select"))?;
        x.at(&at)
    })
}

/// `gather`: `out[p] = x[p with coordinate dim replaced by index[p]]`.
fn gather(call: &Call<i64>, args: &[Arg<'_>], out: &Out<i64>) -> Result<Vec<Scalar>> {
    let (x, idx) = (tensor(args, 0)?, tensor(args, 1)?);
    let d = wrap_dim(call.cint("dim")?, x.sizes.len())?;
    check_index_values(call.op, bound(x, d), &index_values(idx)?)?;
    compute(out, |p| {
        let v = integer(idx.at(p)?);
        // A 0-d tensor counts as 1-D of size 1 (its coordinate is 0).
        let at: Vec<i64> = (0..x.sizes.len())
            .map(|k| {
                if k == d {
                    v
                } else {
                    p.get(k).copied().unwrap_or(0)
                }
            })
            .collect();
        x.at(&at)
    })
}

/// `embedding`: `out[p, j] = weight[indices[p], j]`.
fn embedding(args: &[Arg<'_>], out: &Out<i64>) -> Result<Vec<Scalar>> {
    let (w, idx) = (tensor(args, 0)?, tensor(args, 1)?);
    check_index_values(SOp::Embedding, bound(w, 0), &index_values(idx)?)?;
    let r = idx.sizes.len();
    compute(out, |p| {
        let row = integer(idx.at(&p[..r])?);
        w.at(&[row, p[r]])
    })
}

/// `index`: `x[(slice(None),) * dim + (index,)]`, negative values from the end.
fn index(call: &Call<i64>, args: &[Arg<'_>], out: &Out<i64>) -> Result<Vec<Scalar>> {
    let (x, idx) = (tensor(args, 0)?, tensor(args, 1)?);
    let d = wrap_dim(call.cint("dim")?, x.sizes.len())?;
    let size = bound(x, d);
    check_index_values(SOp::Index, size, &index_values(idx)?)?;
    let k = idx.sizes.len();
    compute(out, |p| {
        let v = integer(idx.at(&p[d..d + k])?);
        let mut at = p[..d].to_vec();
        at.push(if v < 0 { v + size } else { v });
        at.extend_from_slice(&p[d + k..]);
        x.at(&at)
    })
}

#[cfg(test)]
mod tests;
