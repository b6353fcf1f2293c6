//! `scaled_dot_product_attention` as PyTorch 2.15 runs it on the CPU (measured, op by op):
//!
//! 1. `validate_sdpa_input`'s checks (dtypes, ranks), and a causal call with a mask is an
//!    error;
//! 2. q, k and v all 3-D: each is `unsqueeze(0)`'d (the mask too, up to rank 4), the call
//!    runs on the 4-D tensors and the result is `squeeze(0)`'d;
//! 3. an empty query length or an empty value gives `zeros(q.shape[:-1] + [Ev]) +
//!    (k.sum() + v.sum() + q.sum()) * 0` (a TensorIterator output; shapes unchecked);
//! 4. the CPU flash kernel where its conditions hold (floating dtypes, [`flash`]):
//!    `empty_like(q)`;
//! 5. else the math fallback, `softmax(q @ k^T * scale + mask) @ v` with `matmul`
//!    ([`super::linalg::matmul`]: contiguous results) and the mask added in place (it may
//!    not grow the scores' shape); an integral query is promoted to float by the scale, so
//!    the product with the integral value is a dtype error after the shape checks.

use super::call::dtype_of;
use super::linalg::{self, matmul};
use super::{Call, Out};
use crate::iter::{elementwise_output, TensorSpec};
use crate::layout;
use crate::reduce::wrap_dim;
use crate::{Bool, DType, Error, Int, Result};

fn shown<I: Int>(s: &[I]) -> String {
    format!("[{}]", s.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", "))
}

/// `t.unsqueeze(0)`: a size-1 dim in front, with stride `size[0] * stride[0]` (1 for 0-d).
fn unsqueeze0<I: Int>(t: &TensorSpec<I>) -> TensorSpec<I> {
    let mut t = t.clone();
    let stride = match (t.sizes.first(), t.strides.first()) {
        (Some(a), Some(b)) => a.clone() * b.clone(),
        _ => I::from_i64(1),
    };
    t.sizes.insert(0, I::from_i64(1));
    t.strides.insert(0, stride);
    t
}

/// `out.squeeze(0)`: drops dim 0 where its size is 1.
fn squeeze0<I: Int>(mut out: Out<I>) -> Result<Out<I>> {
    let one = match out.sizes.first() {
        Some(s) => s.eq_i(1).guard(|| "scaled_dot_product_attention: squeeze(0) of the 3-D result".to_string())?,
        None => false,
    };
    if one {
        out.sizes.remove(0);
        out.strides.remove(0);
    }
    Ok(out)
}

/// Whether the CPU flash kernel takes the call (`use_flash_attention_cpp`'s checks, in
/// order): q, k, v 4-D; equal batch sizes; k and v with equal head counts, q's equal to
/// theirs or theirs 1; the mask (`check_attn_mask_shape`: `[L|1, S|1]` or
/// `[B|1, H|1, L|1, S|1]`; a mask under 2-D is PyTorch's index error); a floating
/// dtype (checked after the mask, as PyTorch does: an integral call with a 1-D mask is the
/// index error too); equal head dims;
/// non-empty batch, heads and sequences; unit last-dim strides. Where the key and value
/// lengths differ PyTorch's flash kernel runs regardless (it reads the value by the key's
/// length); here such a call takes the math path, whose `bmm` reports the mismatch.
fn flash<I: Int>(
    q: &TensorSpec<I>,
    k: &TensorSpec<I>,
    v: &TensorSpec<I>,
    mask: Option<&TensorSpec<I>>,
    floating: bool,
) -> Result<bool> {
    if q.sizes.len() != 4 || k.sizes.len() != 4 || v.sizes.len() != 4 {
        return Ok(false);
    }
    let why = |w: &str| format!("scaled_dot_product_attention: the flash kernel's condition {w}");
    let (qs, ks, vs) = (&q.sizes, &k.sizes, &v.sizes);
    let mut cond = qs[0].sym_eq(&ks[0]).and(&qs[0].sym_eq(&vs[0]));
    cond = cond
        .and(&ks[1].sym_eq(&vs[1]))
        .and(&qs[1].sym_eq(&ks[1]).or(&ks[1].eq_i(1)));
    if let Some(m) = mask {
        if m.sizes.len() < 2 {
            if !cond.guard(|| why("on batch and heads holds"))? {
                return Ok(false);
            }
            wrap_dim(-2, m.sizes.len())?;
        }
        let n = m.sizes.len();
        let fits = |d: usize, full: &I| m.sizes[d].sym_eq(full).or(&m.sizes[d].eq_i(1));
        let mut shape = fits(n - 2, &qs[2]).and(&fits(n - 1, &ks[2]));
        shape = match n {
            2 => shape,
            4 => shape.and(&fits(0, &qs[0])).and(&fits(1, &qs[1])),
            _ => I::Bool::from_bool(false),
        };
        cond = cond.and(&shape);
    }
    if !floating {
        return Ok(false);
    }
    cond = cond
        .and(&qs[3].sym_eq(&ks[3]))
        .and(&qs[3].sym_eq(&vs[3]))
        .and(&ks[2].sym_eq(&vs[2]))
        .and(&qs[2].sym_gt(&I::from_i64(0)))
        .and(&ks[2].sym_gt(&I::from_i64(0)))
        .and(&qs[0].sym_gt(&I::from_i64(0)))
        .and(&qs[1].sym_gt(&I::from_i64(0)));
    for t in [q, k, v] {
        cond = cond.and(&t.strides[3].eq_i(1));
    }
    cond.guard(|| why("holds"))
}

/// A layout `matmul` reads only where it may fold (see [`linalg::reads_strides`]):
/// computed by `layout` there, else the contiguous strides of `sizes` (unread).
fn operand<I: Int>(
    sizes: Vec<I>,
    reads: bool,
    layout: impl FnOnce(&[I]) -> Result<Vec<I>>,
) -> Result<(Vec<I>, Vec<I>)> {
    let strides = if reads { layout(&sizes)? } else { layout::contiguous_strides(&sizes) };
    Ok((sizes, strides))
}

/// `scaled_dot_product_attention(q, k, v, attn_mask, is_causal, scale)`.
pub(super) fn sdpa<I: Int>(call: &Call<I>) -> Result<Vec<Out<I>>> {
    let (q, k, v) = (call.tensor(0)?, call.tensor(1)?, call.tensor(2)?);
    let mask = call.optional(3);
    let causal = call.flag("is_causal")?;
    if mask.is_some() && causal {
        return Err(Error::argument(
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True",
        ));
    }
    let dtype = dtype_of(q);
    if dtype_of(k) != dtype || dtype_of(v) != dtype {
        return Err(Error::DType {
            message: format!(
                "Expected query, key, and value to have the same dtype, but got query.dtype: {} key.dtype: {} and value.dtype: {} instead.",
                dtype, dtype_of(k), dtype_of(v)
            ),
        });
    }
    if let Some(m) = mask {
        let md = dtype_of(m);
        if md != DType::Bool && md != DType::F32 && md != dtype {
            return Err(Error::DType {
                message: format!(
                    "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: {md} and  query.dtype: {dtype} instead."
                ),
            });
        }
    }
    for (name, t) in [("query", q), ("key", k), ("value", v)] {
        if t.sizes.len() < 2 {
            return Err(Error::Shape {
                message: format!("{name} must be at least 2-D, got {}", shown(&t.sizes)),
            });
        }
    }
    // All three 3-D: the call runs on `unsqueeze(0)`'d tensors, the result `squeeze(0)`'d.
    let three = [q, k, v].iter().all(|t| t.sizes.len() == 3);
    let (q, k, v, mask) = if three {
        let mut m = mask.cloned();
        while let Some(t) = m.as_mut().filter(|t| t.sizes.len() < 4) {
            *t = unsqueeze0(t);
        }
        (unsqueeze0(q), unsqueeze0(k), unsqueeze0(v), m)
    } else {
        (q.clone(), k.clone(), v.clone(), mask.cloned())
    };
    let mask = mask.as_ref();
    let done = |out: Out<I>| Ok(vec![if three { squeeze0(out)? } else { out }]);
    let (nq, nk, nv) = (q.sizes.len(), k.sizes.len(), v.sizes.len());
    let (l, ev) = (&q.sizes[nq - 2], &v.sizes[nv - 1]);
    let empty = l.eq_i(0).or(&layout::numel(&v.sizes).eq_i(0));
    if empty.guard(|| "scaled_dot_product_attention: an empty query length or value".to_string())? {
        // `zeros(q.shape[:-1] + [Ev]) + (sums) * 0`: a TensorIterator output.
        let mut sizes = q.sizes[..nq - 1].to_vec();
        sizes.push(ev.clone());
        let zeros = (sizes.clone(), layout::contiguous_strides(&sizes));
        let (sizes, strides) = elementwise_output(&[zeros, (Vec::new(), Vec::new())])?;
        // The sums are int64 for a bool input, whose category then wins.
        let d = if dtype == DType::Bool { DType::I64 } else { dtype };
        return done(Out::new(sizes, strides, d));
    }
    if flash(&q, &k, &v, mask, dtype.is_floating())? {
        // The flash kernel writes into `empty_like(q)`.
        let strides = layout::empty_like_strides(&q.sizes, &q.strides)?;
        return done(Out::new(q.sizes.clone(), strides, dtype));
    }
    // The math path. `query * scale` and `key.transpose(-2, -1) * scale` are
    // TensorIterator outputs; their strides matter only where `matmul` may fold.
    let reads = linalg::reads_strides(nq, nk);
    let query = operand(q.sizes.clone(), reads[0], |s| Ok(elementwise_output(&[(s.to_vec(), q.strides.clone())])?.1))?;
    let (mut kt, mut kts) = (k.sizes.clone(), k.strides.clone());
    kt.swap(nk - 2, nk - 1);
    kts.swap(nk - 2, nk - 1);
    let key_t = operand(kt, reads[1], |s| Ok(elementwise_output(&[(s.to_vec(), kts)])?.1))?;
    let scores = matmul((&query.0, &query.1), (&key_t.0, &key_t.1))?;
    // `attn.add_(mask)` (a causal mask is `[L, S]`): in place, so it may not grow `attn`.
    if let Some(m) = mask {
        let b = layout::infer_size(&[&scores.sizes, &m.sizes])?;
        let grows = b.len() != scores.sizes.len()
            || b.iter().zip(&scores.sizes).try_fold(false, |acc, (x, y)| {
                Ok::<_, Error>(acc || x.sym_ne(y).guard(|| "scaled_dot_product_attention: the mask grows the scores".to_string())?)
            })?;
        if grows {
            return Err(Error::Shape {
                message: format!(
                    "output with shape {} doesn't match the broadcast shape {}",
                    shown(&scores.sizes),
                    shown(&b)
                ),
            });
        }
    }
    // `_safe_softmax(attn, -1)`: `where(all(attn == -inf, -1, keepdim), 0, softmax(attn))`.
    let nsc = scores.sizes.len();
    let attn = operand(scores.sizes, linalg::reads_strides(nsc, nv)[0], |s| {
        let mut rows = s.to_vec();
        rows[nsc - 1] = I::from_i64(1);
        let masked = (rows.clone(), layout::contiguous_strides(&rows));
        let soft = (s.to_vec(), layout::contiguous_strides(s));
        Ok(elementwise_output(&[masked, (Vec::new(), Vec::new()), soft])?.1)
    })?;
    let out = matmul((&attn.0, &attn.1), (&v.sizes, &v.strides))?;
    if !dtype.is_floating() {
        // `query * scale` promoted an integral query to float; the product with the
        // integral value fails after `matmul`'s shape checks.
        return Err(Error::DType {
            message: format!("expected scalar type Float but found {}", crate::iter::torch_name(dtype)),
        });
    }
    done(Out::new(out.sizes, out.strides, dtype))
}

/// The kernel: `softmax(q @ k^T * scale + mask) @ v` row by row in `f64` (a row whose
/// scores are all masked gives zeros, as PyTorch's safe softmax does), in parallel over
/// (batch, query) rows. Correct for every shape the meta function admits; making it fast
/// (blocked, fused with the products) belongs with the matrix multiply.
pub(super) fn kernel(
    call: &Call<i64>,
    args: &[super::KArg],
    out: &crate::op::AnyTensor,
    cfg: &crate::kernel::ExecConfig,
) -> Result<()> {
    use super::kernels::{contiguous, par_rows, tensor, typed, write_rows, Real};
    use crate::op::with_float;
    let (q, k, v) = (tensor(args, 0)?, tensor(args, 1)?, tensor(args, 2)?);
    if empty_path(q, v) {
        return zeros_path(q, k, v, out, cfg);
    }
    let mask = super::kernels::optional(args, 3);
    let osz = out.sizes().to_vec();
    let r = osz.len();
    let batch = &osz[..r - 2];
    let (l, ev) = (osz[r - 2], osz[r - 1]);
    let e = *q.sizes().last().unwrap_or(&1);
    let s = k.sizes()[k.sizes().len() - 2];
    let expand = |t: &crate::op::AnyTensor, tail: [i64; 2]| -> Result<crate::op::AnyTensor> {
        let mut sizes = batch.to_vec();
        sizes.extend(tail);
        let strides = layout::broadcast_strides(t.sizes(), t.strides(), &sizes)?;
        let x = t.as_strided(&sizes, &strides, t.storage_offset())?;
        contiguous(&x, out.dtype(), cfg)
    };
    let (qc, kc, vc) = (expand(q, [l, e])?, expand(k, [s, e])?, expand(v, [s, ev])?);
    let mc = match mask {
        Some(m) => {
            let d = if m.dtype() == DType::Bool { DType::Bool } else { out.dtype() };
            let mut sizes = batch.to_vec();
            sizes.extend([l, s]);
            // A 3-D call's mask may hold leading size-1 dims beyond the result's rank.
            let extra = m.sizes().len().saturating_sub(sizes.len());
            let strides = layout::broadcast_strides(&m.sizes()[extra..], &m.strides()[extra..], &sizes)?;
            let x = m.as_strided(&sizes, &strides, m.storage_offset())?;
            Some(contiguous(&x, d, cfg)?)
        }
        None => None,
    };
    let mvals: Option<Vec<f64>> = match &mc {
        Some(m) => Some(match m.dtype() {
            DType::Bool => typed::<bool>(m)?
                .to_vec()?
                .into_iter()
                .map(|b| if b { 0.0 } else { f64::NEG_INFINITY })
                .collect(),
            _ => super::kernels::params(Some(m))?.unwrap_or_default(),
        }),
        None => None,
    };
    let causal = call.flag("is_causal")?;
    let scale = match call.number("scale")? {
        Some(x) => x.to_f64(),
        None => 1.0 / (e.max(1) as f64).sqrt(),
    };
    let (l, s, e, ev) = (l as usize, s as usize, e as usize, ev as usize);
    with_float!(out.dtype(), |T| {
        let (qs, ks, vs, o) = (typed::<T>(&qc)?, typed::<T>(&kc)?, typed::<T>(&vc)?, typed::<T>(out)?);
        qs.with_slice(|qd| {
            ks.with_slice(|kd| {
                vs.with_slice(|vd| {
                    write_rows(o, cfg, |dst| {
                        par_rows(dst, ev.max(1), cfg, |row, y| {
                            let (b, i) = (row / l.max(1), row % l.max(1));
                            let qrow = &qd[(b * l + i) * e..(b * l + i + 1) * e];
                            let mut p: Vec<f64> = (0..s)
                                .map(|j| {
                                    let krow = &kd[(b * s + j) * e..(b * s + j + 1) * e];
                                    let dot: f64 = qrow.iter().zip(krow).map(|(a, c)| a.to_f() * c.to_f()).sum();
                                    // An empty head dim gives scores of 0 whatever the scale.
                                    let mut x = if e == 0 { 0.0 } else { dot * scale };
                                    if let Some(m) = &mvals {
                                        x += m[(b * l + i) * s + j];
                                    }
                                    if causal && j > i {
                                        x = f64::NEG_INFINITY;
                                    }
                                    x
                                })
                                .collect();
                            let m = p.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                            if p.iter().any(|x| x.is_nan()) {
                                p.iter_mut().for_each(|x| *x = f64::NAN);
                            } else if m == f64::NEG_INFINITY {
                                p.iter_mut().for_each(|x| *x = 0.0);
                            } else {
                                p.iter_mut().for_each(|x| *x = (*x - m).exp());
                                let sum: f64 = p.iter().sum();
                                p.iter_mut().for_each(|x| *x /= sum);
                            }
                            for (c, yv) in y.iter_mut().enumerate() {
                                let acc: f64 = (0..s).map(|j| p[j] * vd[(b * s + j) * ev + c].to_f()).sum();
                                *yv = T::of(acc);
                            }
                        });
                        Ok(())
                    })
                })?
            })?
        })?
    }, _other => Ok(()))
}

/// Whether the call takes the empty path (an empty query length or value).
fn empty_path(q: &crate::op::AnyTensor, v: &crate::op::AnyTensor) -> bool {
    let qs = q.sizes();
    qs[qs.len() - 2] == 0 || v.sizes().contains(&0)
}

/// The empty path: `zeros + (k.sum() + v.sum() + q.sum()) * 0`, i.e. zeros, or NaN where
/// an input holds a non-finite value (the sums are taken in `f64` here).
fn zeros_path(
    q: &crate::op::AnyTensor,
    k: &crate::op::AnyTensor,
    v: &crate::op::AnyTensor,
    out: &crate::op::AnyTensor,
    cfg: &crate::kernel::ExecConfig,
) -> Result<()> {
    use super::kernels::{params, write_rows};
    use crate::op::{each, AnyTensor};
    use crate::tensor::{Element, Scalar};
    let mut sum = 0.0;
    for t in [k, v, q] {
        sum += params(Some(t))?.unwrap_or_default().iter().sum::<f64>();
    }
    let x = if out.dtype().is_floating() { Scalar::Float(sum * 0.0) } else { Scalar::Int(0) };
    each!(out, |o| write_rows(o, cfg, |s| {
        let e = Element::from_scalar(x);
        s.iter_mut().for_each(|d| *d = e);
        Ok(())
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::structured::{meta, Kw, SArg, SOp};
    use crate::sym::{Bindings, ShapeEnv, SymInt, SymbolSpec};

    fn t<I: Int>(sizes: &[I], strides: &[I], dtype: DType) -> SArg<I> {
        SArg::Tensor(TensorSpec::typed(sizes.to_vec(), strides.to_vec(), dtype))
    }

    fn c(v: &[i64]) -> Vec<i64> {
        v.to_vec()
    }

    /// `sdpa(q, k, v, mask)` over `f32` tensors given as (sizes, strides).
    fn sdpa_of<I: Int>(args: [Option<(&[I], &[I])>; 4], causal: bool) -> Result<Out<I>> {
        let dts = [DType::F32, DType::F32, DType::F32, DType::Bool];
        let inputs = args
            .iter()
            .zip(dts)
            .map(|(a, d)| a.map_or(SArg::Absent, |(s, st)| t(s, st, d)))
            .collect();
        let call = Call::new(SOp::Sdpa, inputs, &mut |n: &str| Ok((n == "is_causal").then_some(Kw::Bool(causal))))?;
        Ok(meta(&call)?.remove(0))
    }

    fn strides(args: [Option<(&[i64], &[i64])>; 4], causal: bool) -> Vec<i64> {
        sdpa_of(args, causal).unwrap().strides
    }

    #[test]
    fn three_d_calls_run_unsqueezed_and_squeeze_back() {
        // The flash kernel takes 3-D calls (as one batch of B heads): `empty_like` of the
        // unsqueezed query keeps its strides, size-1 dims included.
        let (kv, kvs) = (&[2, 1, 2][..], &[2, 2, 1][..]);
        let q = Some((&[2, 1, 2][..], &[2, 4, 1][..]));
        assert_eq!(strides([q, Some((kv, kvs)), Some((kv, kvs)), None], true), c(&[2, 4, 1]));
        // With a 2-D mask, unsqueezed to 4-D for the flash kernel's mask check.
        let (q, k, v) = ((&[1, 4, 2][..], &[99, 2, 1][..]), (&[1, 4, 2][..], &[36, 3, 1][..]), (&[1, 4, 2][..], &[8, 2, 1][..]));
        let m = (&[4, 4][..], &[12, 3][..]);
        assert_eq!(strides([Some(q), Some(k), Some(v), Some(m)], false), c(&[99, 2, 1]));
        // A query whose last dim is strided takes the math path: contiguous.
        let q = (&[2, 5, 2][..], &[10, 1, 5][..]);
        let kv = (&[2, 5, 2][..], &[10, 2, 1][..]);
        assert_eq!(strides([Some(q), Some(kv), Some(kv), None], true), c(&[10, 2, 1]));
        // Key heads broadcast in the flash kernel: a non-contiguous query keeps its layout.
        let q = (&[1, 2, 3, 4][..], &[24, 4, 8, 1][..]);
        let kv = (&[1, 1, 5, 4][..], &[20, 20, 4, 1][..]);
        assert_eq!(strides([Some(q), Some(kv), Some(kv), None], false), c(&[24, 4, 8, 1]));
    }

    #[test]
    fn an_empty_query_length_or_value_gives_zeros_through_tensor_iterator() {
        let q = (&[3, 4, 0, 1][..], &[0, 1, 4, 1][..]);
        let kv = (&[3, 4, 2, 1][..], &[8, 1, 4, 1][..]);
        assert_eq!(strides([Some(q), Some(kv), Some(kv), None], true), c(&[0, 0, 1, 0]));
        // Shapes are not checked there (a mismatched head dim), and the result's shape is
        // the query's with the value's head dim, unbroadcast.
        let q = (&[1, 2, 0, 4][..], &[8, 4, 4, 1][..]);
        let k = (&[3, 1, 5, 3][..], &[15, 15, 3, 1][..]);
        let v = (&[3, 1, 5, 6][..], &[30, 30, 6, 1][..]);
        let out = sdpa_of([Some(q), Some(k), Some(v), None], false).unwrap();
        assert_eq!((out.sizes, out.strides), (c(&[1, 2, 0, 6]), c(&[12, 6, 6, 1])));
        // A bool query's empty result is int64 (the sums' dtype wins by category).
        let e = (&[1, 0, 4][..], &[4, 4, 1][..]);
        let inputs = vec![t(e.0, e.1, DType::Bool), t(e.0, e.1, DType::Bool), t(e.0, e.1, DType::Bool), SArg::Absent];
        let call = Call::new(SOp::Sdpa, inputs, &mut |_: &str| Ok(None)).unwrap();
        assert_eq!(meta(&call).unwrap()[0].dtype, DType::I64);
    }

    #[test]
    fn the_mask_is_added_in_place() {
        let qkv = (&[1, 1, 3, 4][..], &[12, 12, 4, 1][..]);
        let m = (&[2, 1, 3, 3][..], &[9, 9, 3, 1][..]);
        let e = sdpa_of([Some(qkv), Some(qkv), Some(qkv), Some(m)], false).unwrap_err();
        assert_eq!(e.category(), "shape");
        assert!(e.to_string().contains("doesn't match the broadcast shape [2, 1, 3, 3]"), "{e}");
        // A 1-D mask reaches the flash kernel's mask check: PyTorch's index error.
        let m = (&[3][..], &[1][..]);
        let e = sdpa_of([Some(qkv), Some(qkv), Some(qkv), Some(m)], false).unwrap_err();
        assert_eq!(e.category(), "index");
    }

    /// Traced with symbolic batch and query length, then evaluated at every binding the
    /// guards admit: the concrete answer there (the 3-D squeeze, the empty path, flash).
    #[test]
    fn symbolic_traces_agree_with_concrete_calls() {
        let points = [(1, 1), (2, 1), (1, 0), (3, 2), (0, 2), (2, 0)];
        for (b, l) in points {
            let env = ShapeEnv::default();
            let sb = env.create_symbol("b", b, SymbolSpec::default()).unwrap();
            let sl = env.create_symbol("l", l, SymbolSpec::default()).unwrap();
            let k = |v: i64| SymInt::constant(v);
            // q: [b, l, 2] with strides [2, 4 * b, 1] (dense only where l <= 1); k, v: [b, 3, 2].
            let (qs, qst) = ([sb.clone(), sl.clone(), k(2)], [k(2), k(4) * sb.clone(), k(1)]);
            let (ks, kst) = ([sb.clone(), k(3), k(2)], [k(6), k(2), k(1)]);
            let sym = sdpa_of([Some((&qs, &qst)), Some((&ks, &kst)), Some((&ks, &kst)), None], false).unwrap();
            let guards = env.guards();
            for (b2, l2) in points {
                let bind = Bindings::from_pairs([("b", b2), ("l", l2)]);
                if !guards.iter().all(|g| g.cond.eval(&bind).unwrap()) {
                    continue;
                }
                let (q, kv) = ([b2, l2, 2], [b2, 3, 2]);
                let (qst, kvst) = ([2, 4 * b2, 1], [6, 2, 1]);
                let conc = sdpa_of([Some((&q, &qst)), Some((&kv, &kvst)), Some((&kv, &kvst)), None], false).unwrap();
                let at = |v: &[SymInt]| v.iter().map(|x| x.eval(&bind).unwrap()).collect::<Vec<_>>();
                let msg = format!("traced at b={b} l={l}, bound b={b2} l={l2}");
                assert_eq!((at(&sym.sizes), at(&sym.strides)), (conc.sizes, conc.strides), "{msg}");
            }
        }
    }
}
