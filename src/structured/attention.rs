//! `scaled_dot_product_attention`: the layout of the CPU flash kernel where it applies, and
//! of the math fallback (`softmax(q @ k^T * scale + mask) @ v`) elsewhere.

use super::call::dtype_of;
use super::{Call, Out};
use crate::iter::TensorSpec;
use crate::layout;
use crate::{Bool, DType, Error, Int, Result};

fn shown<I: Int>(s: &[I]) -> String {
    format!("[{}]", s.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", "))
}

/// Whether the CPU flash kernel takes the call: q, k, v 4-D with equal batch and head
/// sizes, equal head dims, non-empty sequences, unit last-dim strides.
fn flash<I: Int>(q: &TensorSpec<I>, k: &TensorSpec<I>, v: &TensorSpec<I>) -> Result<bool> {
    if q.sizes.len() != 4 || k.sizes.len() != 4 || v.sizes.len() != 4 {
        return Ok(false);
    }
    let why = |w: &str| format!("scaled_dot_product_attention: the flash kernel's condition {w}");
    let mut cond = I::Bool::from_bool(true);
    for d in [0, 1] {
        cond = cond
            .and(&q.sizes[d].sym_eq(&k.sizes[d]))
            .and(&q.sizes[d].sym_eq(&v.sizes[d]));
    }
    cond = cond
        .and(&q.sizes[3].sym_eq(&k.sizes[3]))
        .and(&q.sizes[3].sym_eq(&v.sizes[3]))
        .and(&q.sizes[2].sym_gt(&I::from_i64(0)))
        .and(&k.sizes[2].sym_gt(&I::from_i64(0)))
        .and(&q.sizes[0].sym_gt(&I::from_i64(0)))
        .and(&q.sizes[1].sym_gt(&I::from_i64(0)));
    for t in [q, k, v] {
        cond = cond.and(&t.strides[3].eq_i(1));
    }
    cond.guard(|| why("holds"))
}

/// `scaled_dot_product_attention(q, k, v, attn_mask, is_causal, scale)`.
pub(super) fn sdpa<I: Int>(call: &Call<I>) -> Result<Vec<Out<I>>> {
    let (q, k, v) = (call.tensor(0)?, call.tensor(1)?, call.tensor(2)?);
    let mask = call.optional(3);
    if mask.is_some() && call.flag("is_causal")? {
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
    if !dtype.is_floating() {
        return Err(Error::DType {
            message: format!("\"baddbmm_cpu\" not implemented for '{}'", crate::iter::torch_name(dtype)),
        });
    }
    if let Some(m) = mask {
        let md = dtype_of(m);
        if md != DType::Bool && md != dtype {
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
    let (nq, nk, nv) = (q.sizes.len(), k.sizes.len(), v.sizes.len());
    let (l, e) = (&q.sizes[nq - 2], &q.sizes[nq - 1]);
    let (s, ek) = (&k.sizes[nk - 2], &k.sizes[nk - 1]);
    let (sv, ev) = (&v.sizes[nv - 2], &v.sizes[nv - 1]);
    // The math path's products: `q @ k^T` ([.., L, E] x [.., E, S]), then `@ v`.
    let batch = layout::infer_size(&[&q.sizes[..nq - 2], &k.sizes[..nk - 2]])?;
    if e.sym_ne(ek).guard(|| "scaled_dot_product_attention: q and k head dims".to_string())? {
        return Err(Error::Shape {
            message: format!(
                "Expected size for first two dimensions of batch2 tensor to be: [{}, {e}] but got: [{}, {ek}].",
                layout::numel(&batch), layout::numel(&batch)
            ),
        });
    }
    let batch = layout::infer_size(&[&batch, &v.sizes[..nv - 2]])?;
    if s.sym_ne(sv).guard(|| "scaled_dot_product_attention: k and v lengths".to_string())? {
        return Err(Error::Shape {
            message: format!(
                "Expected size for first two dimensions of batch2 tensor to be: [{}, {s}] but got: [{}, {sv}].",
                layout::numel(&batch), layout::numel(&batch)
            ),
        });
    }
    let mut batch = batch;
    if let Some(m) = mask {
        // The scores `[..batch, L, S]` plus the mask: its leading dims broadcast in.
        let mut scores = batch.clone();
        scores.push(l.clone());
        scores.push(s.clone());
        let mut b = layout::infer_size(&[&scores, &m.sizes])?;
        b.truncate(b.len() - 2);
        batch = b;
    }
    let mut sizes = batch;
    sizes.push(l.clone());
    sizes.push(ev.clone());
    if flash(q, k, v)? {
        // The flash kernel writes into `empty_like(q)`.
        let strides = layout::empty_like_strides(&q.sizes, &q.strides)?;
        return Ok(vec![Out::new(sizes, strides, dtype)]);
    }
    Ok(vec![Out::contiguous(sizes, dtype)])
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
            let strides = layout::broadcast_strides(m.sizes(), m.strides(), &sizes)?;
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
