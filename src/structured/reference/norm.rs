//! References of `softmax`/`log_softmax`, the norms and `scaled_dot_product_attention`:
//! every statistic in `f64` over the plain row-major values, then narrowed.

use super::{compute, float, internal, numel, optional, tensor, unravel, Arg, Vals};
use crate::op::narrow;
use crate::reduce::wrap_dim;
use crate::structured::{Call, Out, SOp};
use crate::tensor::Scalar;
use crate::{DType, Error, Result};

/// The larger of two values, NaN propagating (PyTorch's `max`).
fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

/// Element `j` of a per-feature or per-channel parameter, as `f64`.
fn param(t: Vals<'_>, j: usize) -> Result<f64> {
    t.values
        .get(j)
        .copied()
        .map(float)
        .ok_or_else(|| internal("a parameter shorter than its dim"))
}

/// Keyword `eps` as a number (`None` when null).
fn eps(call: &Call<i64>) -> Result<Option<f64>> {
    Ok(call.number("eps")?.map(float))
}

fn required_eps(call: &Call<i64>) -> Result<f64> {
    eps(call)?.ok_or_else(|| Error::invalid(format!("{}: `eps` must be a number", call.op)))
}

/// Mean and biased variance of `row`.
fn moments(row: &[f64]) -> (f64, f64) {
    let n = row.len() as f64;
    let mean = row.iter().sum::<f64>() / n;
    let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, var)
}

/// `softmax`/`log_softmax` along `dim`, of `x` converted to the result dtype first:
/// `exp(x - max) / sum(exp(x - max))`, or `x - max - ln(sum(exp(x - max)))`.
pub(super) fn softmax(call: &Call<i64>, args: &[Arg<'_>], out: &Out<i64>) -> Result<Vec<Scalar>> {
    let x = tensor(args, 0)?;
    let d = wrap_dim(call.cint("dim")?, x.sizes.len())?;
    let n = x.sizes.get(d).copied().unwrap_or(1);
    let log = call.op == SOp::LogSoftmax;
    let value = |at: &[i64]| -> Result<f64> { Ok(float(narrow(x.at(at)?, out.dtype))) };
    compute(out, |p| {
        let mut at = p.to_vec();
        let mut row = Vec::new();
        for k in 0..n {
            if let Some(a) = at.get_mut(d) {
                *a = k;
            }
            row.push(value(&at)?);
        }
        let m = row.iter().fold(f64::NEG_INFINITY, |m, &v| nan_max(m, v));
        let sum: f64 = row.iter().map(|v| (v - m).exp()).sum();
        let me = value(p)?;
        Ok(Scalar::Float(if log {
            me - m - sum.ln()
        } else {
            (me - m).exp() / sum
        }))
    })
}

/// `layer_norm`: over each run of `prod(normalized_shape)` trailing elements,
/// `(x - mean) / sqrt(var + eps) * w + b` (biased variance).
pub(super) fn layer_norm(
    call: &Call<i64>,
    args: &[Arg<'_>],
    out: &Out<i64>,
) -> Result<Vec<Scalar>> {
    let x = tensor(args, 0)?;
    let (w, b) = (optional(args, 1), optional(args, 2));
    let m = numel(&call.cints("normalized_shape")?)?;
    let eps = required_eps(call)?;
    let mut values = Vec::new();
    if m == 0 {
        return Ok(values); // the input is empty too
    }
    for g in 0..x.values.len() / m {
        let row: Vec<f64> = x.slice(g * m, m)?.iter().map(|&v| float(v)).collect();
        let (mean, var) = moments(&row);
        for (j, &v) in row.iter().enumerate() {
            let mut y = (v - mean) / (var + eps).sqrt();
            if let Some(w) = w {
                y *= param(w, j)?;
            }
            if let Some(b) = b {
                y += param(b, j)?;
            }
            values.push(narrow(Scalar::Float(y), out.dtype));
        }
    }
    Ok(values)
}

/// `rms_norm`: `x / sqrt(mean(x^2) + eps) * w` over each run of `prod(normalized_shape)`
/// trailing elements; a null `eps` is the dtype's machine epsilon.
pub(super) fn rms_norm(call: &Call<i64>, args: &[Arg<'_>], out: &Out<i64>) -> Result<Vec<Scalar>> {
    let x = tensor(args, 0)?;
    let w = optional(args, 1);
    let m = numel(&call.cints("normalized_shape")?)?;
    let eps = eps(call)?.unwrap_or(match out.dtype {
        DType::F32 => f64::from(f32::EPSILON),
        _ => f64::EPSILON,
    });
    let mut values = Vec::new();
    if m == 0 {
        return Ok(values);
    }
    for g in 0..x.values.len() / m {
        let row: Vec<f64> = x.slice(g * m, m)?.iter().map(|&v| float(v)).collect();
        let mean_square = row.iter().map(|v| v * v).sum::<f64>() / m as f64;
        for (j, &v) in row.iter().enumerate() {
            let mut y = v / (mean_square + eps).sqrt();
            if let Some(w) = w {
                y *= param(w, j)?;
            }
            values.push(narrow(Scalar::Float(y), out.dtype));
        }
    }
    Ok(values)
}

/// Inference `batch_norm`: channel `c = p[1]`,
/// `(x - running_mean[c]) / sqrt(running_var[c] + eps) * w[c] + b[c]`.
pub(super) fn batch_norm(
    call: &Call<i64>,
    args: &[Arg<'_>],
    out: &Out<i64>,
) -> Result<Vec<Scalar>> {
    let x = tensor(args, 0)?;
    let (mean, var) = (tensor(args, 1)?, tensor(args, 2)?);
    let (w, b) = (optional(args, 3), optional(args, 4));
    let eps = required_eps(call)?;
    compute(out, |p| {
        let c = *p
            .get(1)
            .ok_or_else(|| internal("batch_norm of a 1-D input"))? as usize;
        let mut y = (float(x.at(p)?) - param(mean, c)?) / (param(var, c)? + eps).sqrt();
        if let Some(w) = w {
            y *= param(w, c)?;
        }
        if let Some(b) = b {
            y += param(b, c)?;
        }
        Ok(Scalar::Float(y))
    })
}

/// `group_norm`: per sample and group (`C / G` consecutive channels, all their spatial
/// elements) `(x - mean) / sqrt(var + eps)` (biased variance), then `* w[c] + b[c]`.
pub(super) fn group_norm(
    call: &Call<i64>,
    args: &[Arg<'_>],
    out: &Out<i64>,
) -> Result<Vec<Scalar>> {
    let x = tensor(args, 0)?;
    let (w, b) = (optional(args, 1), optional(args, 2));
    let eps = required_eps(call)?;
    let groups = call.cint("num_groups")?;
    let (n, c) = match x.sizes {
        [n, c, ..] => (*n as usize, *c as usize),
        _ => return Err(internal("group_norm of a 1-D input")),
    };
    if groups <= 0 || c % groups as usize != 0 {
        return Err(Error::argument(format!(
            "group_norm: num_groups must be positive and divide the {c} channels, got {groups}"
        )));
    }
    let groups = groups as usize;
    let per_group = c / groups;
    let hw = numel(&x.sizes[2..])?;
    let mut values = Vec::new();
    for s in 0..n {
        for g in 0..groups {
            let start = (s * c + g * per_group) * hw;
            let row: Vec<f64> = x
                .slice(start, per_group * hw)?
                .iter()
                .map(|&v| float(v))
                .collect();
            let (mean, var) = moments(&row);
            for (k, &v) in row.iter().enumerate() {
                let channel = g * per_group + k / hw;
                let mut y = (v - mean) / (var + eps).sqrt();
                if let Some(w) = w {
                    y *= param(w, channel)?;
                }
                if let Some(b) = b {
                    y += param(b, channel)?;
                }
                values.push(narrow(Scalar::Float(y), out.dtype));
            }
        }
    }
    Ok(values)
}

/// The multi-index into a tensor of `sizes` that broadcasts to the multi-index `full`
/// (aligned at the last dim; a size-1 dim, or a dim before `full`'s first, reads 0).
fn broadcast_at(sizes: &[i64], full: &[i64]) -> Vec<i64> {
    let lead = full.len() as i64 - sizes.len() as i64;
    sizes
        .iter()
        .enumerate()
        .map(|(k, &s)| {
            let f = lead + k as i64;
            if s == 1 || f < 0 {
                0
            } else {
                full[f as usize]
            }
        })
        .collect()
}

/// Softmax of a row of scores; a row that is entirely `-inf` (everything masked) gives
/// zeros, not NaN (PyTorch's `_safe_softmax`).
fn safe_softmax(scores: &[f64]) -> Vec<f64> {
    if scores.iter().all(|&s| s == f64::NEG_INFINITY) {
        return vec![0.0; scores.len()];
    }
    let m = scores.iter().fold(f64::NEG_INFINITY, |m, &v| nan_max(m, v));
    let e: Vec<f64> = scores.iter().map(|s| (s - m).exp()).collect();
    let sum: f64 = e.iter().sum();
    e.iter().map(|v| v / sum).collect()
}

/// `scaled_dot_product_attention`: per batch index (broadcast) and query row `i`,
/// `scores[j] = (q[i] . k[j]) * scale` (null scale: `1 / sqrt(E)`), a bool mask's false
/// and (causal) `j > i` set to `-inf`, a float mask added; `out[i] = softmax(scores) @ v`.
pub(super) fn sdpa(call: &Call<i64>, args: &[Arg<'_>], out: &Out<i64>) -> Result<Vec<Scalar>> {
    let (q, k, v) = (tensor(args, 0)?, tensor(args, 1)?, tensor(args, 2)?);
    let mask = optional(args, 3);
    let bool_mask = call
        .optional(3)
        .is_some_and(|m| m.dtype == Some(DType::Bool));
    let causal = call.flag("is_causal")?;
    let last2 = |t: Vals<'_>| match t.sizes {
        [.., a, b] => Ok((*a, *b)),
        _ => Err(internal("attention of a 1-D tensor")),
    };
    let ((l, e), (s, _), (_, ev)) = (last2(q)?, last2(k)?, last2(v)?);
    if l == 0 || v.sizes.contains(&0) {
        // PyTorch's empty path: `zeros + (k.sum() + v.sum() + q.sum()) * 0`.
        let mut sum = 0.0;
        for t in [k, v, q] {
            for i in 0..numel(t.sizes)? {
                sum += float(t.at(&unravel(i, t.sizes))?);
            }
        }
        let x = if out.dtype.is_floating() { Scalar::Float(sum * 0.0) } else { Scalar::Int(0) };
        return Ok(vec![narrow(x, out.dtype); numel(&out.sizes)? as usize]);
    }
    let scale = match call.number("scale")? {
        Some(x) => float(x),
        None => 1.0 / (e as f64).sqrt(),
    };
    // Rows: the broadcast batch index and the query row `i`.
    let rows = out
        .sizes
        .get(..out.sizes.len().saturating_sub(1))
        .ok_or_else(|| internal("attention result of rank 0"))?;
    let nb = rows.len().saturating_sub(1);
    let mut values = Vec::new();
    for r in 0..numel(rows)? {
        let p = unravel(r, rows);
        let (batch, i) = (&p[..nb], p[nb]);
        let at = |t: Vals<'_>, a: i64, b: i64| {
            let mut full = batch.to_vec();
            full.extend([a, b]);
            t.at(&broadcast_at(t.sizes, &full))
        };
        let mut scores = Vec::new();
        for j in 0..s {
            let mut dot = 0.0;
            for c in 0..e {
                dot += float(at(q, i, c)?) * float(at(k, j, c)?);
            }
            // An empty head dim scores 0 (PyTorch scales q and k by sqrt(scale), whose
            // empty product is 0 even when the scale is infinite).
            let mut score = if e == 0 { 0.0 } else { dot * scale };
            if let Some(m) = mask {
                let mv = at(m, i, j)?;
                if bool_mask {
                    if float(mv) == 0.0 {
                        score = f64::NEG_INFINITY;
                    }
                } else {
                    score += float(mv);
                }
            }
            if causal && j > i {
                score = f64::NEG_INFINITY;
            }
            scores.push(score);
        }
        let probs = safe_softmax(&scores);
        for c in 0..ev {
            let mut o = 0.0;
            for (j, pr) in probs.iter().enumerate() {
                o += pr * float(at(v, j as i64, c)?);
            }
            values.push(narrow(Scalar::Float(o), out.dtype));
        }
    }
    Ok(values)
}
