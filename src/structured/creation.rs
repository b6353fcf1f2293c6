//! Creation ops: `arange`, `full`/`zeros`/`ones`/`empty`/`scalar_tensor`, the `*_like` ops
//! and `new_*`. Their sizes are integer arguments, so a symbolic size (`arange(s)`,
//! `full([b, s], v)`) is traced like any other size.

use super::call::dtype_of;
use super::{Call, Out, SOp};
use crate::layout::{self, MemoryFormat};
use crate::tensor::Scalar;
use crate::{Bool, DType, Error, Int, Result};

/// PyTorch's check of a size list: no negative size (`shape`).
pub(super) fn check_new_sizes<I: Int>(sizes: &[I]) -> Result<()> {
    for s in sizes {
        if s.lt_i(0).guard(|| format!("a new tensor's size {s} is negative"))? {
            let shown: Vec<String> = sizes.iter().map(|s| s.to_string()).collect();
            return Err(Error::Shape {
                message: format!(
                    "Trying to create tensor with negative dimension {s}: [{}]",
                    shown.join(", ")
                ),
            });
        }
    }
    layout::check_sizes("size", sizes)
}

/// The dtype a Python number infers (`torch.full` with `dtype=None`).
fn inferred(s: Scalar) -> DType {
    match s {
        Scalar::Bool(_) => DType::Bool,
        Scalar::Int(_) => DType::I64,
        Scalar::Float(_) => DType::F32,
    }
}

/// Strides of a new tensor of `sizes` in `format` (`None`: contiguous), with PyTorch's
/// rank check.
fn format_strides<I: Int>(sizes: &[I], format: Option<MemoryFormat>) -> Result<Vec<I>> {
    match format.unwrap_or(MemoryFormat::Contiguous) {
        MemoryFormat::Preserve => Err(Error::argument(
            "preserve memory format is unsupported by the contiguous operator",
        )),
        f => channels_rank_check(sizes.len(), f).and_then(|_| layout::strides_for_format(sizes, f)),
    }
}

fn channels_rank_check(rank: usize, f: MemoryFormat) -> Result<()> {
    let need = match f {
        MemoryFormat::ChannelsLast => 4,
        MemoryFormat::ChannelsLast3d => 5,
        _ => return Ok(()),
    };
    if rank != need {
        return Err(Error::argument(format!(
            "required rank {need} tensor to use {} format",
            f.name()
        )));
    }
    Ok(())
}

/// `arange(start, end, step, dtype)`: one dimension of `ceil((end - start) / step)`
/// elements as PyTorch's CPU kernel computes it: an integer result checks the bounds and
/// the step truncated to int64 (an int64 result also counts in integers, the others in
/// doubles of the given values), a float result checks and counts in doubles.
pub(super) fn arange<I: Int>(call: &Call<I>) -> Result<Vec<Out<I>>> {
    let start = call.number("start")?.unwrap_or(Scalar::Int(0));
    let step = call.number("step")?.unwrap_or(Scalar::Int(1));
    let end = call.int("end").ok();
    let end_num = if end.is_some() { None } else { call.number("end")? };
    let any_float = [Some(start), Some(step), end_num]
        .iter()
        .any(|s| matches!(s, Some(Scalar::Float(_))));
    let dtype = call
        .dtype("dtype")?
        .unwrap_or(if any_float { DType::F32 } else { DType::I64 });
    if dtype == DType::Bool {
        return Err(Error::DType {
            message: "\"arange_cpu\" not implemented for 'Bool'".into(),
        });
    }
    let f = Scalar::to_f64;
    let inconsistent = || Error::argument("upper bound and lower bound inconsistent with step sign");
    let nonzero = || Error::argument("step must be nonzero");
    let one = |len: I| Ok(vec![Out::new(vec![len], vec![I::from_i64(1)], dtype)]);
    // PyTorch's accumulation values: an integer result truncates the bounds and the step to
    // int64 (each must fit) for its checks, a float result keeps doubles.
    let trunc = |s: Scalar| -> Result<i64> {
        crate::op::check_scalar_fits(s, DType::I64)?;
        Ok(match s {
            Scalar::Float(v) => v.trunc() as i64,
            Scalar::Int(i) => i,
            Scalar::Bool(b) => i64::from(b),
        })
    };
    if let Some(e) = end.as_ref().filter(|e| e.as_const().is_none()) {
        // A symbolic end (programs: `arange(s)`): integer start and step only, where the
        // integer and the double formulas agree.
        let (Scalar::Int(s0), Scalar::Int(ds)) = (start, step) else {
            return Err(Error::invalid("arange: a symbolic end needs integer start and step"));
        };
        if ds == 0 {
            return Err(nonzero());
        }
        let s0 = I::from_i64(s0);
        let ok = if ds > 0 { e.sym_ge(&s0) } else { e.sym_le(&s0) };
        if !ok.guard(|| format!("arange({s0}, {e}, {ds}): end on the step's side of start"))? {
            return Err(inconsistent());
        }
        let sgn = ds.signum();
        return one((e.clone() - s0 + I::from_i64(ds - sgn)).floor_div(&I::from_i64(ds)));
    }
    let end = match (end.and_then(|e| e.as_const()), end_num) {
        (Some(e), _) => Scalar::Int(e),
        (None, Some(e)) => e,
        (None, None) => return Err(Error::invalid("arange: `end` must be a number")),
    };
    let (x0, x1, dx) = (f(start), f(end), f(step));
    if !dtype.is_floating() {
        let (i0, i1, di) = (trunc(start)?, trunc(end)?, trunc(step)?);
        if di == 0 {
            return Err(nonzero());
        }
        if !((di > 0 && i1 >= i0) || (di < 0 && i1 <= i0)) {
            return Err(inconsistent());
        }
        if dtype == DType::I64 {
            // `(end - start + step - sign(step)) / step` in integers.
            let n = (i1 as i128 - i0 as i128 + di as i128 - di.signum() as i128) / di as i128;
            return match i64::try_from(n) {
                Ok(n) if n <= i64::MAX / 16 => one(I::from_i64(n)),
                _ => Err(Error::argument(format!("invalid size, possible overflow? ({n} elements)"))),
            };
        }
        return arange_len_f64(x0, x1, dx, dtype, |_, _, _| Ok(()));
    }
    if dx == 0.0 {
        return Err(nonzero());
    }
    arange_len_f64(x0, x1, dx, dtype, |a, b, st| {
        if (st > 0.0 && b >= a) || (st < 0.0 && b <= a) {
            Ok(())
        } else {
            Err(inconsistent())
        }
    })
}

/// The length `ceil((end - start) / step)` in doubles, after `check` of the bounds.
fn arange_len_f64<I: Int>(
    start: f64,
    end: f64,
    step: f64,
    dtype: DType,
    check: impl Fn(f64, f64, f64) -> Result<()>,
) -> Result<Vec<Out<I>>> {
    if !start.is_finite() || !end.is_finite() {
        return Err(Error::argument(format!("unsupported range: {start} -> {end}")));
    }
    check(start, end, step)?;
    let n = ((end - start) / step).ceil();
    if !(0.0..=(i64::MAX / 16) as f64).contains(&n) {
        return Err(Error::argument(format!(
            "invalid size, possible overflow? ({n} elements)"
        )));
    }
    Ok(vec![Out::new(
        vec![I::from_i64(n as i64)],
        vec![I::from_i64(1)],
        dtype,
    )])
}

/// `full`, `zeros`, `ones`, `empty`, `scalar_tensor`.
pub(super) fn fill<I: Int>(call: &Call<I>) -> Result<Vec<Out<I>>> {
    let given = call.dtype("dtype")?;
    if call.op == SOp::ScalarTensor {
        let s = call.number("s")?.ok_or_else(|| Error::invalid("scalar_tensor needs `s`"))?;
        let dtype = given.unwrap_or(DType::F32);
        crate::op::check_scalar_fits(s, dtype)?;
        return Ok(vec![Out::new(Vec::new(), Vec::new(), dtype)]);
    }
    let sizes = call.ints("size")?;
    check_new_sizes(&sizes)?;
    let (dtype, format) = match call.op {
        SOp::Full => {
            let v = call
                .number("fill_value")?
                .ok_or_else(|| Error::invalid("full needs `fill_value`"))?;
            let dtype = given.unwrap_or(inferred(v));
            crate::op::check_scalar_fits(v, dtype)?;
            (dtype, None)
        }
        SOp::Empty => (given.unwrap_or(DType::F32), call.memory_format("memory_format")?),
        _ => (given.unwrap_or(DType::F32), None),
    };
    let strides = format_strides(&sizes, format)?;
    Ok(vec![Out::new(sizes, strides, dtype)])
}

/// `zeros_like`, `ones_like`, `empty_like`, `full_like`: `empty_like(x, dtype,
/// memory_format)` (preserve by default), then filled.
pub(super) fn like<I: Int>(call: &Call<I>) -> Result<Vec<Out<I>>> {
    let x = call.tensor(0)?;
    let dtype = call.dtype("dtype")?.unwrap_or(dtype_of(x));
    if call.op == SOp::FullLike {
        let v = call
            .number("fill_value")?
            .ok_or_else(|| Error::invalid("full_like needs `fill_value`"))?;
        crate::op::check_scalar_fits(v, dtype)?;
    }
    let strides = match call.memory_format("memory_format")? {
        None | Some(MemoryFormat::Preserve) => layout::empty_like_strides(&x.sizes, &x.strides)?,
        Some(f) => {
            channels_rank_check(x.sizes.len(), f)?;
            layout::strides_for_format(&x.sizes, f)?
        }
    };
    Ok(vec![Out::new(x.sizes.clone(), strides, dtype)])
}

/// `new_zeros`, `new_ones`, `new_full`: a contiguous tensor of `size` in `x`'s dtype.
pub(super) fn new_filled<I: Int>(call: &Call<I>) -> Result<Vec<Out<I>>> {
    let x = call.tensor(0)?;
    let dtype = call.dtype("dtype")?.unwrap_or(dtype_of(x));
    let sizes = call.ints("size")?;
    check_new_sizes(&sizes)?;
    if call.op == SOp::NewFull {
        let v = call
            .number("fill_value")?
            .ok_or_else(|| Error::invalid("new_full needs `fill_value`"))?;
        crate::op::check_scalar_fits(v, dtype)?;
    }
    Ok(vec![Out::contiguous(sizes, dtype)])
}

/// The value a creation op fills element `l` of its result with (`None`: `arange`'s
/// `start + l * step`, `empty`'s unspecified contents).
pub fn fill_value<I: Int>(call: &Call<I>) -> Result<Option<Scalar>> {
    Ok(match call.op {
        SOp::Full | SOp::FullLike | SOp::NewFull => call.number("fill_value")?,
        SOp::ScalarTensor => call.number("s")?,
        SOp::Zeros | SOp::ZerosLike | SOp::NewZeros | SOp::Empty | SOp::EmptyLike => {
            Some(Scalar::Int(0))
        }
        SOp::Ones | SOp::OnesLike | SOp::NewOnes => Some(Scalar::Int(1)),
        _ => None,
    })
}
