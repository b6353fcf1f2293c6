//! Kernels of the structured ops, over concrete tensors.
//!
//! # Why this shape
//! Every result is allocated (or given) with the layout [`meta`](super::meta) decided, so
//! the kernels never choose a layout. Copies that only move data (`cat`, `stack`, `repeat`,
//! `roll`, the `*_like` fills) are views of the output filled by the crate's strided copy
//! kernel ([`crate::kernel::copy_into`]): parallel, vectorized, tiled for transposes.
//! Gathers and the row computations (flip, triangles, indexing, softmax, the norms,
//! attention) read a row-major input and write a row-major result, in parallel over
//! independent rows; where the result's layout is not row-major they write a contiguous
//! buffer and copy it into place. Floating-point statistics accumulate in `f64`.
//!
//! Index values are checked against the sizes they index before any read
//! ([`check_index_values`](super::check_index_values)): an `index` error, never an access
//! out of bounds.

use super::rowwise;
use super::{check_index_values, fill_value, index_bound, meta, Call, Kw, Out, SArg, SOp};
use crate::iter::TensorSpec;
use crate::layout::MemoryFormat;
use crate::kernel::{copy_into, ExecConfig};
use crate::op::{each, with_dtype, with_float, AnyElement, AnyTensor};
use crate::reduce::wrap_dim;
use crate::tensor::{Element, Scalar, Storage, Tensor};
use crate::{DType, Error, Result};
use rayon::prelude::*;

/// One concrete argument of a structured call.
#[derive(Clone, Debug)]
pub enum KArg {
    /// A tensor.
    Tensor(AnyTensor),
    /// A list of tensors.
    List(Vec<AnyTensor>),
    /// An absent optional tensor.
    Absent,
}

/// The spec the meta function reads for a concrete tensor.
pub fn spec_of(t: &AnyTensor) -> TensorSpec<i64> {
    TensorSpec::typed(t.sizes().to_vec(), t.strides().to_vec(), t.dtype())
        .with_offset(t.storage_offset())
}

/// The meta arguments of concrete arguments.
pub fn sargs_of(args: &[KArg]) -> Vec<SArg<i64>> {
    args.iter()
        .map(|a| match a {
            KArg::Tensor(t) => SArg::Tensor(spec_of(t)),
            KArg::List(ts) => SArg::List(ts.iter().map(spec_of).collect()),
            KArg::Absent => SArg::Absent,
        })
        .collect()
}

/// Runs `call` (whose tensor specs describe `args`): new results laid out as the meta
/// function says, or the views of input 0 for `split`/`chunk`/`unbind`.
pub fn run(call: &Call<i64>, args: &[KArg], cfg: &ExecConfig) -> Result<Vec<AnyTensor>> {
    let outs = meta(call)?;
    if call.op.def().results == super::Results::Views {
        let x = tensor(args, 0)?;
        return outs
            .iter()
            .map(|o| x.as_strided(&o.sizes, &o.strides, o.view_offset.unwrap_or(0)))
            .collect();
    }
    let [o] = outs.as_slice() else {
        return Err(Error::invalid(format!("internal: {} gave {} results", call.op, outs.len())));
    };
    let out = allocate(o)?;
    write(call, args, &out, cfg)?;
    Ok(vec![out])
}

/// A new tensor laid out as `o` (contents zero).
pub fn allocate(o: &Out<i64>) -> Result<AnyTensor> {
    let extent = o
        .sizes
        .iter()
        .zip(&o.strides)
        .try_fold(1i64, |acc, (&z, &s)| {
            if z == 0 {
                return Some(0);
            }
            acc.checked_add((z - 1).checked_mul(s)?)
        })
        .ok_or_else(|| Error::overflow("a structured op's result extent"))?;
    let n = if o.sizes.contains(&0) { 0 } else { extent as usize };
    with_dtype!(o.dtype, |T| {
        Ok(Tensor::<T>::from_storage(Storage::filled(n, T::default())?, &o.sizes, &o.strides, 0)?.into())
    })
}

/// Writes the single result of `call` into `out` (laid out as the meta function says).
pub fn write(call: &Call<i64>, args: &[KArg], out: &AnyTensor, cfg: &ExecConfig) -> Result<()> {
    use SOp::*;
    match call.op {
        Arange => arange(call, out, cfg),
        Full | Zeros | Ones | Empty | ScalarTensor | ZerosLike | OnesLike | EmptyLike
        | FullLike | NewZeros | NewOnes | NewFull => fill(call, out, cfg),
        Triu | Tril => triangle(call, args, out, cfg),
        Cat => cat(call, list(args, 0)?, out, cfg),
        Stack => stack(call, args, out, cfg),
        Repeat => repeat(args, out, cfg),
        Flip => flip(call, args, out, cfg),
        Roll => roll(call, args, out, cfg),
        Cumsum => cumsum(call, args, out, cfg),
        IndexSelect | Gather | Embedding | Index => gather_family(call, args, out, cfg),
        Softmax | LogSoftmax => softmax(call, args, out, cfg),
        LayerNorm | RmsNorm | BatchNorm | GroupNorm => norm(call, args, out, cfg),
        Sdpa => super::attention::kernel(call, args, out, cfg),
        Split | SplitWithSizes | Chunk | Unbind => Err(Error::invalid(format!(
            "internal: {} returns views, not a written result",
            call.op
        ))),
    }
}

pub(super) fn tensor(args: &[KArg], k: usize) -> Result<&AnyTensor> {
    match args.get(k) {
        Some(KArg::Tensor(t)) => Ok(t),
        _ => Err(Error::invalid(format!("internal: argument {k} is not a tensor"))),
    }
}

pub(super) fn optional(args: &[KArg], k: usize) -> Option<&AnyTensor> {
    match args.get(k) {
        Some(KArg::Tensor(t)) => Some(t),
        _ => None,
    }
}

fn list(args: &[KArg], k: usize) -> Result<&[AnyTensor]> {
    match args.get(k) {
        Some(KArg::List(ts)) => Ok(ts),
        _ => Err(Error::invalid(format!("internal: argument {k} is not a list"))),
    }
}

/// Copies `src` into `dst` (same sizes, any dtypes).
pub(super) fn copy(dst: &AnyTensor, src: &AnyTensor, cfg: &ExecConfig) -> Result<()> {
    each!(dst, |d| each!(src, |s| copy_into(d, s, cfg)))
}

/// `t` as a row-major contiguous tensor of `dtype` (itself when it already is one).
pub(super) fn contiguous(t: &AnyTensor, dtype: DType, cfg: &ExecConfig) -> Result<AnyTensor> {
    if t.dtype() == dtype && crate::layout::is_contiguous(t.sizes(), t.strides())? {
        return Ok(t.clone());
    }
    let o = Out::contiguous(t.sizes().to_vec(), dtype);
    let c = allocate(&o)?;
    copy(&c, t, cfg)?;
    Ok(c)
}

/// Runs `f` on a row-major slice of `out`'s elements: `out`'s own when it is contiguous,
/// otherwise a buffer copied into `out` afterwards.
pub(super) fn write_rows<T: AnyElement>(
    out: &Tensor<T>,
    cfg: &ExecConfig,
    f: impl FnOnce(&mut [T]) -> Result<()>,
) -> Result<()> {
    if crate::layout::is_contiguous(out.sizes(), out.strides())? {
        return out.with_slice_mut(f)?;
    }
    let buf = allocate(&Out::contiguous(out.sizes().to_vec(), T::DTYPE))?;
    let b = T::get(&buf).ok_or_else(|| Error::invalid("internal: buffer dtype"))?;
    b.with_slice_mut(f)??;
    copy_into(out, b, cfg)
}

/// `a` as a tensor of `_o`'s element type (its dtype checked).
fn like<'a, T: AnyElement>(_o: &Tensor<T>, a: &'a AnyTensor) -> Result<&'a Tensor<T>> {
    typed(a)
}

/// `a`'s typed tensor (its dtype checked).
pub(super) fn typed<T: AnyElement>(a: &AnyTensor) -> Result<&Tensor<T>> {
    T::get(a).ok_or_else(|| Error::invalid(format!("internal: expected {}, got {}", T::DTYPE, a.dtype())))
}

/// Splits `out` into rows of `row` elements processed by `f(row_index, row)`, in parallel
/// when the work is large enough.
pub(super) fn par_rows<T: Send>(
    out: &mut [T],
    row: usize,
    cfg: &ExecConfig,
    f: impl Fn(usize, &mut [T]) + Sync + Send,
) {
    if row == 0 || out.is_empty() {
        return;
    }
    if out.len() < cfg.grain_size {
        out.chunks_mut(row).enumerate().for_each(|(i, r)| f(i, r));
    } else {
        let rows_per_task = (cfg.grain_size / row).max(1);
        out.par_chunks_mut(row * rows_per_task)
            .enumerate()
            .for_each(|(t, chunk)| {
                for (i, r) in chunk.chunks_mut(row).enumerate() {
                    f(t * rows_per_task + i, r);
                }
            });
    }
}

fn fill(call: &Call<i64>, out: &AnyTensor, cfg: &ExecConfig) -> Result<()> {
    let v = fill_value(call)?.unwrap_or(Scalar::Int(0));
    each!(out, |o| {
        let x = v;
        write_rows(o, cfg, |s| {
            let e = Element::from_scalar(x);
            s.iter_mut().for_each(|d| *d = e);
            Ok(())
        })
    })
}

fn arange(call: &Call<i64>, out: &AnyTensor, cfg: &ExecConfig) -> Result<()> {
    let start = call.number("start")?.unwrap_or(Scalar::Int(0));
    let step = call.number("step")?.unwrap_or(Scalar::Int(1));
    // An integer result steps in int64 from the truncated start and step (PyTorch's
    // accumulation type), a float result in doubles.
    let integral = !out.dtype().is_floating();
    let (s0, ds) = (start.to_f64(), step.to_f64());
    let t = |s: Scalar| match s {
        Scalar::Float(f) => f.trunc() as i64,
        Scalar::Int(i) => i,
        Scalar::Bool(b) => i64::from(b),
    };
    let (i0, di) = (t(start), t(step));
    each!(out, |o| write_rows(o, cfg, |s| {
        for (k, d) in s.iter_mut().enumerate() {
            *d = Element::from_scalar(if integral {
                Scalar::Int(i0.wrapping_add(di.wrapping_mul(k as i64)))
            } else {
                Scalar::Float(s0 + ds * k as f64)
            });
        }
        Ok(())
    }))
}

/// Sizes as `[outer, n, inner]` around dim `d`.
pub(super) fn around(sizes: &[i64], d: usize) -> (usize, usize, usize) {
    let p = |s: &[i64]| s.iter().product::<i64>().max(0) as usize;
    if sizes.is_empty() {
        return (1, 1, 1);
    }
    (p(&sizes[..d]), sizes[d].max(0) as usize, p(&sizes[d + 1..]))
}

fn triangle(call: &Call<i64>, args: &[KArg], out: &AnyTensor, cfg: &ExecConfig) -> Result<()> {
    let x = contiguous(tensor(args, 0)?, out.dtype(), cfg)?;
    let diag = call.cint("diagonal")?;
    let upper = call.op == SOp::Triu;
    let sizes = x.sizes().to_vec();
    let (r, c) = (sizes[sizes.len() - 2].max(0) as usize, sizes[sizes.len() - 1].max(0) as usize);
    each!(out, |o| {
        let xs = like(o, &x)?;
        xs.with_slice(|src| {
            write_rows(o, cfg, |dst| {
                par_rows(dst, c.max(1), cfg, |row, d| {
                    let i = (row % r.max(1)) as i64;
                    let base = row * c;
                    for (j, v) in d.iter_mut().enumerate() {
                        let k = j as i64 - i;
                        let keep = if upper { k >= diag } else { k <= diag };
                        *v = if keep { src[base + j] } else { Default::default() };
                    }
                });
                Ok(())
            })
        })?
    })
}

fn narrow_any(t: &AnyTensor, d: usize, start: i64, len: i64) -> Result<AnyTensor> {
    let mut sizes = t.sizes().to_vec();
    sizes[d] = len;
    let off = t.storage_offset() + start * t.strides()[d];
    t.as_strided(&sizes, t.strides(), off)
}

fn cat(call: &Call<i64>, ts: &[AnyTensor], out: &AnyTensor, cfg: &ExecConfig) -> Result<()> {
    let rank = out.sizes().len();
    let d = wrap_dim(call.cint("dim")?, rank)?;
    let mut at = 0;
    for t in ts {
        if t.sizes().len() == 1 && t.sizes()[0] == 0 {
            continue;
        }
        let len = t.sizes()[d];
        copy(&narrow_any(out, d, at, len)?, t, cfg)?;
        at += len;
    }
    Ok(())
}

fn stack(call: &Call<i64>, args: &[KArg], out: &AnyTensor, cfg: &ExecConfig) -> Result<()> {
    let ts = list(args, 0)?;
    let d = wrap_dim(call.cint("dim")?, out.sizes().len())?;
    for (i, t) in ts.iter().enumerate() {
        let mut sizes = out.sizes().to_vec();
        let mut strides = out.strides().to_vec();
        let off = out.storage_offset() + i as i64 * strides[d];
        sizes.remove(d);
        strides.remove(d);
        copy(&out.as_strided(&sizes, &strides, off)?, t, cfg)?;
    }
    Ok(())
}

fn repeat(args: &[KArg], out: &AnyTensor, cfg: &ExecConfig) -> Result<()> {
    let x = tensor(args, 0)?;
    let n = out.sizes().len();
    let pad = n - x.sizes().len();
    // The output seen as `[r0, s0, r1, s1, ...]`, the input expanded to it (stride 0 on
    // the repeat dims): one strided copy.
    let (mut osz, mut ost, mut xsz, mut xst) = (vec![], vec![], vec![], vec![]);
    for d in 0..n {
        let (s, xs) = if d < pad { (1, 0) } else { (x.sizes()[d - pad], x.strides()[d - pad]) };
        let r = if s == 0 { 0 } else { out.sizes()[d] / s.max(1) };
        osz.extend([r, s]);
        ost.extend([out.strides()[d] * s, out.strides()[d]]);
        xsz.extend([r, s]);
        xst.extend([0, xs]);
    }
    if out.sizes().contains(&0) {
        return Ok(());
    }
    let dst = out.as_strided(&osz, &ost, out.storage_offset())?;
    let src = x.as_strided(&xsz, &xst, x.storage_offset())?;
    copy(&dst, &src, cfg)
}

fn flip(call: &Call<i64>, args: &[KArg], out: &AnyTensor, cfg: &ExecConfig) -> Result<()> {
    let x = contiguous(tensor(args, 0)?, out.dtype(), cfg)?;
    let sizes = x.sizes().to_vec();
    let flipped = super::copies::wrap_dims(&call.cints("dims")?, sizes.len())?;
    let strides = crate::layout::contiguous_strides(&sizes);
    let last = sizes.last().copied().unwrap_or(1).max(1) as usize;
    let n = sizes.len();
    each!(out, |o| {
        let xs = like(o, &x)?;
        xs.with_slice(|src| {
            write_rows(o, cfg, |dst| {
                par_rows(dst, last, cfg, |row, d| {
                    // The source offset of this row's first element.
                    let mut rem = row;
                    let mut base = 0i64;
                    for k in (0..n.saturating_sub(1)).rev() {
                        let z = sizes[k] as usize;
                        let i = (rem % z) as i64;
                        rem /= z;
                        let i = if flipped.contains(&k) { sizes[k] - 1 - i } else { i };
                        base += i * strides[k];
                    }
                    let rev = n > 0 && flipped.contains(&(n - 1));
                    for (j, v) in d.iter_mut().enumerate() {
                        let jj = if rev { last - 1 - j } else { j };
                        *v = src[base as usize + jj];
                    }
                });
                Ok(())
            })
        })?
    })
}

fn roll(call: &Call<i64>, args: &[KArg], out: &AnyTensor, cfg: &ExecConfig) -> Result<()> {
    let x = tensor(args, 0)?;
    let shifts = call.cints("shifts")?;
    let dims: Vec<i64> = match call.kw("dims")? {
        Kw::Null => Vec::new(),
        _ => call.cints("dims")?,
    };
    if dims.is_empty() {
        // The flattened tensor, rolled as one dim (the result is contiguous).
        let c = contiguous(x, x.dtype(), cfg)?;
        let n = c.sizes().iter().product::<i64>();
        let flat = c.as_strided(&[n], &[1], c.storage_offset())?;
        let oflat = out.as_strided(&[n], &[1], out.storage_offset())?;
        return roll_one(&flat, shifts[0], 0, &oflat, cfg);
    }
    let mut cur = x.clone();
    for (k, (&s, &d)) in shifts.iter().zip(&dims).enumerate() {
        let d = wrap_dim(d, cur.sizes().len())?;
        let dst = if k + 1 == dims.len() {
            out.clone()
        } else {
            allocate(&Out::contiguous(cur.sizes().to_vec(), cur.dtype()))?
        };
        roll_one(&cur, s, d, &dst, cfg)?;
        cur = dst;
    }
    Ok(())
}

/// `dst = roll(src, shift, d)`: two strided copies.
fn roll_one(src: &AnyTensor, shift: i64, d: usize, dst: &AnyTensor, cfg: &ExecConfig) -> Result<()> {
    let size = src.sizes()[d];
    if size == 0 || src.sizes().contains(&0) {
        return Ok(());
    }
    let start = (size - shift).rem_euclid(size);
    copy(&narrow_any(dst, d, 0, size - start)?, &narrow_any(src, d, start, size - start)?, cfg)?;
    copy(&narrow_any(dst, d, size - start, start)?, &narrow_any(src, d, 0, start)?, cfg)
}

fn cumsum(call: &Call<i64>, args: &[KArg], out: &AnyTensor, cfg: &ExecConfig) -> Result<()> {
    let x = contiguous(tensor(args, 0)?, out.dtype(), cfg)?;
    let d = wrap_dim(call.cint("dim")?, x.sizes().len())?;
    let (_, n, inner) = around(x.sizes(), d);
    each!(out, |o| {
        let xs = like(o, &x)?;
        xs.with_slice(|src| {
            write_rows(o, cfg, |dst| {
                par_rows(dst, (n * inner).max(1), cfg, |row, blk| {
                    let base = row * n * inner;
                    for i in 0..inner {
                        let mut acc = Acc::zero(src.first().copied());
                        for j in 0..n {
                            acc = acc.add(src[base + j * inner + i]);
                            blk[j * inner + i] = acc.value();
                        }
                    }
                });
                Ok(())
            })
        })?
    })
}

/// A running sum in PyTorch's accumulation type: `f64` for floats, wrapping `i64` for
/// integers (narrowed to the element type on each write).
#[derive(Clone, Copy)]
enum Acc {
    F(f64),
    I(i64),
}

impl Acc {
    fn zero<T: Element>(_: Option<T>) -> Acc {
        if T::DTYPE.is_floating() {
            Acc::F(0.0)
        } else {
            Acc::I(0)
        }
    }
    fn add<T: Element>(self, v: T) -> Acc {
        match (self, v.to_scalar()) {
            (Acc::F(a), s) => Acc::F(a + s.to_f64()),
            (Acc::I(a), Scalar::Int(b)) => Acc::I(a.wrapping_add(b)),
            (Acc::I(a), Scalar::Bool(b)) => Acc::I(a.wrapping_add(i64::from(b))),
            (Acc::I(a), Scalar::Float(f)) => Acc::I(a.wrapping_add(f as i64)),
        }
    }
    fn value<T: Element>(self) -> T {
        match self {
            Acc::F(a) => T::from_scalar(Scalar::Float(a)),
            Acc::I(a) => T::from_scalar(Scalar::Int(a)),
        }
    }
}

/// An index tensor's values as `i64`, row-major.
fn index_values(t: &AnyTensor) -> Result<Vec<i64>> {
    each!(t, |x| Ok(x
        .to_vec()?
        .into_iter()
        .map(|v| match v.to_scalar() {
            Scalar::Int(i) => i,
            Scalar::Bool(b) => i64::from(b),
            Scalar::Float(f) => f as i64,
        })
        .collect()))
}

/// `index_select`, `gather`, `embedding`, `index`: the index values checked, then a gather
/// of rows (`index_select`, `embedding`, `index`: runs of `inner` elements) or elements.
fn gather_family(call: &Call<i64>, args: &[KArg], out: &AnyTensor, cfg: &ExecConfig) -> Result<()> {
    let x = contiguous(tensor(args, 0)?, out.dtype(), cfg)?;
    let idx = index_values(tensor(args, 1)?)?;
    let bound = index_bound(call)?.unwrap_or(0);
    check_index_values(call.op, bound, &idx)?;
    let xsizes = x.sizes().to_vec();
    let d = match call.op {
        SOp::Embedding => 0,
        _ => wrap_dim(call.cint("dim")?, xsizes.len())?,
    };
    let (_, n, inner) = around(&xsizes, d);
    let wrap = |v: i64| if v < 0 { v + bound } else { v } as usize;
    each!(out, |o| {
        let xs = like(o, &x)?;
        xs.with_slice(|src| {
            write_rows(o, cfg, |dst| {
                if call.op == SOp::Gather {
                    let isizes = tensor(args, 1)?.sizes().to_vec();
                    let xstr = crate::layout::contiguous_strides(&xsizes);
                    let last = isizes.last().copied().unwrap_or(1).max(1) as usize;
                    let r = isizes.len();
                    par_rows(dst, last, cfg, |row, blk| {
                        // Coordinates of this row's first element in the index.
                        let mut coord = vec![0i64; r];
                        let mut rem = row;
                        for k in (0..r.saturating_sub(1)).rev() {
                            let z = isizes[k].max(1) as usize;
                            coord[k] = (rem % z) as i64;
                            rem /= z;
                        }
                        for (j, y) in blk.iter_mut().enumerate() {
                            if r > 0 {
                                coord[r - 1] = j as i64;
                            }
                            let p = row * last + j;
                            // x's coordinates: the index's, with `dim` replaced by the
                            // index value (a 0-d index reads x's dim 0; a 0-d x has none).
                            let mut off = 0i64;
                            for (k, s) in xstr.iter().enumerate() {
                                let c = if k == d { wrap(idx[p]) as i64 } else { coord.get(k).copied().unwrap_or(0) };
                                off += c * s;
                            }
                            *y = src[off as usize];
                        }
                    });
                } else {
                    // One row of `inner` elements per (outer, index) pair.
                    let per = idx.len();
                    par_rows(dst, inner.max(1), cfg, |row, r| {
                        let (a, k) = (row / per.max(1), row % per.max(1));
                        let from = (a * n + wrap(idx[k])) * inner;
                        r.copy_from_slice(&src[from..from + inner]);
                    });
                }
                Ok(())
            })
        })?
    })
}

/// Float elements as `f64` and back.
pub(super) trait Real: AnyElement {
    fn to_f(self) -> f64;
    fn of(v: f64) -> Self;
}
impl Real for f32 {
    fn to_f(self) -> f64 {
        self as f64
    }
    fn of(v: f64) -> f32 {
        v as f32
    }
}
impl Real for f64 {
    fn to_f(self) -> f64 {
        self
    }
    fn of(v: f64) -> f64 {
        v
    }
}


fn softmax(call: &Call<i64>, args: &[KArg], out: &AnyTensor, cfg: &ExecConfig) -> Result<()> {
    let x = contiguous(tensor(args, 0)?, out.dtype(), cfg)?;
    let d = wrap_dim(call.cint("dim")?, x.sizes().len())?;
    let (_, n, inner) = around(x.sizes(), d);
    let log = call.op == SOp::LogSoftmax;
    with_float!(out.dtype(), |T| {
        let (xs, o) = (typed::<T>(&x)?, typed::<T>(out)?);
        xs.with_slice(|src| {
            write_rows(o, cfg, |dst| {
                if inner == 1 {
                    rowwise::drive(&rowwise::Softmax { len: n, log }, src, dst, cfg);
                } else {
                    rowwise::drive(&rowwise::SoftmaxColumns { n, inner, log }, src, dst, cfg);
                }
                Ok(())
            })
        })?
    }, _other => Ok(()))
}

/// A parameter tensor's values as `f64` (contiguous, row-major).
pub(super) fn params(t: Option<&AnyTensor>) -> Result<Option<Vec<f64>>> {
    t.map(|t| each!(t, |x| Ok(x.to_vec()?.into_iter().map(|v| v.to_scalar().to_f64()).collect())))
        .transpose()
}

fn norm(call: &Call<i64>, args: &[KArg], out: &AnyTensor, cfg: &ExecConfig) -> Result<()> {
    let x0 = tensor(args, 0)?;
    let sizes = x0.sizes().to_vec();
    let eps_default = if out.dtype() == DType::F32 { f32::EPSILON as f64 } else { f64::EPSILON };
    let eps = call.number("eps")?.map(Scalar::to_f64).unwrap_or(eps_default);
    let c = sizes.get(1).copied().unwrap_or(1).max(0) as usize;
    let plane = sizes.get(2..).unwrap_or(&[]).iter().product::<i64>().max(0) as usize;
    let ones = |n: usize, p: Option<Vec<f64>>, v: f64| p.unwrap_or_else(|| vec![v; n]);
    match call.op {
        SOp::LayerNorm | SOp::RmsNorm => {
            let k = call.ints("normalized_shape")?.len();
            let len = sizes[sizes.len() - k..].iter().product::<i64>().max(0) as usize;
            let rms = call.op == SOp::RmsNorm;
            let w = ones(len, params(optional(args, 1))?, 1.0);
            let b = ones(len, if rms { None } else { params(optional(args, 2))? }, 0.0);
            let (w, b) = (rowwise::Params::new(w), rowwise::Params::new(b));
            rows(x0, out, cfg, &rowwise::RowNorm { w, b, rms, eps })
        }
        SOp::BatchNorm => {
            let (m, v) = (params(optional(args, 1))?, params(optional(args, 2))?);
            let (Some(m), Some(v)) = (m, v) else {
                return Err(Error::invalid("internal: inference batch_norm without running statistics"));
            };
            let w = ones(c, params(optional(args, 3))?, 1.0);
            let b = ones(c, params(optional(args, 4))?, 0.0);
            // Per channel `(x - mean) · a + b`, `a = w / sqrt(var + eps)`.
            let a: Vec<f64> = (0..c).map(|j| w[j] / (v[j] + eps).sqrt()).collect();
            // Channels-last input and result: rows of all channels, the NHWC order.
            let nhwc = |t: &AnyTensor| -> Result<Option<AnyTensor>> {
                if sizes.len() != 4 || !crate::layout::is_contiguous_in(t.sizes(), t.strides(), MemoryFormat::ChannelsLast)? {
                    return Ok(None);
                }
                let p = each!(t, |t| Ok::<AnyTensor, Error>(t.permute(&[0, 2, 3, 1])?.into()))?;
                Ok(crate::layout::is_contiguous(p.sizes(), p.strides())?.then_some(p))
            };
            if let (Some(xp), Some(op)) = (nhwc(x0)?, nhwc(out)?) {
                return rows(&xp, &op, cfg, &rowwise::ChannelAffine::new(m, a, b, c, true));
            }
            let by_position = plane == 1;
            let len = if by_position { c } else { plane };
            rows(x0, out, cfg, &rowwise::ChannelAffine::new(m, a, b, len, by_position))
        }
        _ => {
            let groups = call.cint("num_groups")?.max(1) as usize;
            let w = ones(c, params(optional(args, 1))?, 1.0);
            let b = ones(c, params(optional(args, 2))?, 0.0);
            rows(x0, out, cfg, &rowwise::GroupNorm { w, b, groups, plane, eps })
        }
    }
}

/// Runs row kernel `k` over `x` (made row-major in `out`'s dtype) into `out` (through a
/// buffer when `out` is not row-major).
fn rows<K>(x: &AnyTensor, out: &AnyTensor, cfg: &ExecConfig, k: &K) -> Result<()>
where
    K: rowwise::RowOp<f32> + rowwise::RowOp<f64>,
{
    let x = contiguous(x, out.dtype(), cfg)?;
    with_float!(out.dtype(), |T| {
        let (xs, o) = (typed::<T>(&x)?, typed::<T>(out)?);
        xs.with_slice(|src| {
            write_rows(o, cfg, |dst| {
                rowwise::drive(k, src, dst, cfg);
                Ok(())
            })
        })?
    }, _other => Ok(()))
}
