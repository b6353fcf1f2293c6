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
        .and(&k.sizes[2].sym_gt(&I::from_i64(0)));
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
    if let Some(m) = mask {
        let mut scores = batch.clone();
        scores.push(l.clone());
        scores.push(s.clone());
        layout::infer_size(&[&scores, &m.sizes])?;
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
