//! Softmax and the normalizations. `softmax`/`log_softmax`/`layer_norm` write contiguous
//! results, `batch_norm`/`group_norm` keep the input's suggested memory format, `rms_norm`
//! (a composite of elementwise ops in PyTorch) allocates as TensorIterator does, made
//! contiguous unless the input suggests channels last.

use super::call::dtype_of;
use super::{Call, Out, SOp};
use crate::iter::{torch_name, TensorSpec};
use crate::layout::{self, MemoryFormat, StrideMatch};
use crate::reduce::wrap_dim;
use crate::{Bool, DType, Error, Int, Result};

fn not_implemented(kernel: &str, d: DType) -> Error {
    Error::DType {
        message: format!("\"{kernel}\" not implemented for '{}'", torch_name(d)),
    }
}

fn is_empty<I: Int>(t: &TensorSpec<I>, what: &str) -> Result<bool> {
    layout::numel(&t.sizes)
        .eq_i(0)
        .guard(|| format!("{what}: the input is empty"))
}

/// `softmax`/`log_softmax(x, dim, dtype)`: contiguous, in `dtype` when given.
pub(super) fn softmax<I: Int>(call: &Call<I>) -> Result<Vec<Out<I>>> {
    let x = call.tensor(0)?;
    wrap_dim(call.cint("dim")?, x.sizes.len())?;
    let dtype = call.dtype("dtype")?.unwrap_or(dtype_of(x));
    if !dtype.is_floating() && !is_empty(x, call.op.name())? {
        let kernel = if call.op == SOp::Softmax {
            "softmax_lastdim_kernel_impl"
        } else {
            "log_softmax_lastdim_kernel_impl"
        };
        return Err(not_implemented(kernel, dtype));
    }
    Ok(vec![Out::contiguous(x.sizes.clone(), dtype)])
}

/// The parameters' dtypes must be the input's (PyTorch's CPU kernels read them as the
/// input's scalar type).
fn same_dtypes<I: Int>(x: &TensorSpec<I>, params: &[Option<&TensorSpec<I>>]) -> Result<()> {
    for p in params.iter().flatten() {
        if dtype_of(p) != dtype_of(x) {
            return Err(Error::DType {
                message: format!(
                    "expected scalar type {} but found {}",
                    torch_name(dtype_of(x)),
                    torch_name(dtype_of(p))
                ),
            });
        }
    }
    Ok(())
}

fn same_sizes<I: Int>(a: &[I], b: &[I], why: impl Fn() -> String) -> Result<bool> {
    if a.len() != b.len() {
        return Ok(false);
    }
    for (x, y) in a.iter().zip(b) {
        if x.sym_ne(y).guard(&why)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// PyTorch's `_check_layer_norm_inputs` (also `rms_norm`'s).
fn check_normalized<I: Int>(
    op: SOp,
    x: &TensorSpec<I>,
    shape: &[I],
    params: &[(&str, Option<&TensorSpec<I>>)],
) -> Result<()> {
    let shown = |s: &[I]| format!("[{}]", s.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", "));
    if shape.is_empty() {
        return Err(Error::Shape {
            message: format!(
                "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but got normalized_shape = {}",
                shown(shape)
            ),
        });
    }
    for (name, p) in params {
        if let Some(p) = p {
            if !same_sizes(&p.sizes, shape, || format!("{op}: {name}'s sizes equal normalized_shape"))? {
                return Err(Error::Shape {
                    message: format!(
                        "Expected {name} to be of same shape as normalized_shape, but got {name} of shape {} and normalized_shape = {}",
                        shown(&p.sizes),
                        shown(shape)
                    ),
                });
            }
        }
    }
    let n = x.sizes.len();
    let fits = n >= shape.len()
        && same_sizes(&x.sizes[n - shape.len()..], shape, || {
            format!("{op}: the input's trailing sizes equal normalized_shape")
        })?;
    if !fits {
        return Err(Error::Shape {
            message: format!(
                "Given normalized_shape={}, expected input with shape [*, {}], but got input of size{}",
                shown(shape),
                shown(shape).trim_matches(|c| c == '[' || c == ']'),
                shown(&x.sizes)
            ),
        });
    }
    Ok(())
}

/// `layer_norm(x, weight, bias, normalized_shape, eps)`: contiguous.
pub(super) fn layer_norm<I: Int>(call: &Call<I>) -> Result<Vec<Out<I>>> {
    let x = call.tensor(0)?;
    let (w, b) = (call.optional(1), call.optional(2));
    let shape = call.ints("normalized_shape")?;
    check_normalized(call.op, x, &shape, &[("weight", w), ("bias", b)])?;
    if !dtype_of(x).is_floating() {
        return Err(not_implemented("LayerNormKernelImpl", dtype_of(x)));
    }
    same_dtypes(x, &[w, b])?;
    Ok(vec![Out::contiguous(x.sizes.clone(), dtype_of(x))])
}

/// `rms_norm(x, weight, normalized_shape, eps)`: PyTorch 2.15's `rms_norm_composite` (the
/// CPU path, measured op by op): `x * rsqrt(mean(x**2, dims, keepdim) + eps)`, then
/// `* weight`, each product a TensorIterator output (the mean a contiguous reduction
/// result), then `.contiguous()` unless the input's suggested memory format is channels
/// last; in the input's dtype (the weight's does not promote).
pub(super) fn rms_norm<I: Int>(call: &Call<I>) -> Result<Vec<Out<I>>> {
    let x = call.tensor(0)?;
    let w = call.optional(1);
    let shape = call.ints("normalized_shape")?;
    check_normalized(call.op, x, &shape, &[("weight", w)])?;
    let dtype = dtype_of(x);
    if !dtype.is_floating() {
        return Err(not_implemented("rms_norm", dtype));
    }
    Ok(vec![Out::new(x.sizes.clone(), rms_norm_strides(x, shape.len(), w)?, dtype)])
}

/// The strides of [`rms_norm`]'s result over `x` normalized over its last `k` dims.
fn rms_norm_strides<I: Int>(x: &TensorSpec<I>, k: usize, w: Option<&TensorSpec<I>>) -> Result<Vec<I>> {
    // `rsqrt(mean(x**2, dims, keepdim=True).add_(eps))`: contiguous, then a unary op.
    let n = x.sizes.len();
    let mut rows = x.sizes.clone();
    rows[n - k..].iter_mut().for_each(|s| *s = I::from_i64(1));
    let rsqrt = crate::iter::elementwise_output(&[(rows.clone(), layout::contiguous_strides(&rows))])?;
    let mut y = crate::iter::elementwise_output(&[(x.sizes.clone(), x.strides.clone()), rsqrt])?;
    if let Some(w) = w {
        y = crate::iter::elementwise_output(&[y, (w.sizes.clone(), w.strides.clone())])?;
    }
    let f = layout::suggest_memory_format(&x.sizes, &x.strides, StrideMatch::Like)?;
    if matches!(f, MemoryFormat::ChannelsLast | MemoryFormat::ChannelsLast3d) || layout::is_contiguous(&y.0, &y.1)? {
        return Ok(y.1);
    }
    Ok(layout::contiguous_strides(&y.0))
}

/// `x.is_contiguous(memory_format=f)`.
fn contiguous_as<I: Int>(x: &TensorSpec<I>, f: MemoryFormat) -> Result<bool> {
    layout::is_contiguous_in(&x.sizes, &x.strides, f)
}

/// The result dtype of `x * p[0]` (a 0-d tensor counts only by its category).
fn zero_dim_promote(x: DType, p: DType) -> DType {
    let rank = |d: DType| if d.is_floating() { 2 } else if d == DType::Bool { 0 } else { 1 };
    if rank(p) > rank(x) {
        p
    } else {
        x
    }
}

/// The channel count `x.size(1)` of a norm over channels.
fn channels<I: Int>(op: SOp, x: &TensorSpec<I>) -> Result<I> {
    x.sizes.get(1).cloned().ok_or_else(|| Error::Shape {
        message: format!(
            "{op}: Expected at least 2 dimensions for input tensor but received {}",
            x.sizes.len()
        ),
    })
}

/// Output strides of a new tensor like `x` in its suggested memory format.
fn suggested_strides<I: Int>(x: &TensorSpec<I>) -> Result<Vec<I>> {
    let f = layout::suggest_memory_format(&x.sizes, &x.strides, StrideMatch::Like)?;
    layout::strides_for_format(&x.sizes, f)
}

/// Inference `batch_norm(x, running_mean, running_var, weight, bias)`: the input's
/// suggested memory format; an empty input is `x.clone()` (times `weight[0]`).
pub(super) fn batch_norm<I: Int>(call: &Call<I>) -> Result<Vec<Out<I>>> {
    let x = call.tensor(0)?;
    let c = channels(call.op, x)?;
    let dtype = dtype_of(x);
    let params = [
        ("running_mean", call.optional(1)),
        ("running_var", call.optional(2)),
        ("weight", call.optional(3)),
        ("bias", call.optional(4)),
    ];
    if is_empty(x, "batch_norm")? {
        // `out = x.clone(); out = out * weight[0]; out = out + bias[0]`.
        let mut out = (x.sizes.clone(), layout::empty_like_strides(&x.sizes, &x.strides)?);
        let mut d = dtype;
        for (name, p) in &params[2..] {
            if let Some(p) = p {
                let len = p.sizes.first().cloned().unwrap_or(I::from_i64(1));
                if len.eq_i(0).guard(|| format!("batch_norm: {name} is empty"))? {
                    return Err(Error::Index {
                        message: "select(): index 0 out of range for tensor of size [0] at dimension 0"
                            .into(),
                    });
                }
                d = zero_dim_promote(d, dtype_of(p));
                out = crate::iter::elementwise_output(&[out, (Vec::new(), Vec::new())])?;
            }
        }
        return Ok(vec![Out::new(out.0, out.1, d)]);
    }
    for (name, p) in &params {
        if let Some(p) = p {
            let n = layout::numel(&p.sizes);
            if n.sym_ne(&c).guard(|| format!("batch_norm: {name} has one element per channel"))? {
                return Err(Error::Shape {
                    message: format!("{name} should contain {c} elements not {n}"),
                });
            }
        }
    }
    if call.flag("training")? {
        return Err(Error::invalid("batch_norm: only inference (training=False) is supported"));
    }
    if !dtype.is_floating() {
        return Err(not_implemented("batch_norm_cpu", dtype));
    }
    same_dtypes(x, &params.iter().map(|(_, p)| *p).collect::<Vec<_>>())?;
    // `batch_norm_cpu`: an input contiguous in some memory format gives an output in that
    // format (`contiguous` first), otherwise the suggested memory format.
    let mut format = None;
    for f in [MemoryFormat::Contiguous, MemoryFormat::ChannelsLast3d, MemoryFormat::ChannelsLast] {
        if contiguous_as(x, f)? {
            format = Some(f);
            break;
        }
    }
    let strides = match format {
        Some(f) => layout::strides_for_format(&x.sizes, f)?,
        None => suggested_strides(x)?,
    };
    Ok(vec![Out::new(x.sizes.clone(), strides, dtype)])
}

/// `group_norm(x, num_groups, weight, bias, eps)`: the input's suggested memory format.
pub(super) fn group_norm<I: Int>(call: &Call<I>) -> Result<Vec<Out<I>>> {
    let x = call.tensor(0)?;
    let g = call.int("num_groups")?;
    if g.as_const().is_some_and(|g| g <= 0) {
        return Err(Error::argument(format!("Expected num groups to be positive, got {g}")));
    }
    let c = channels(call.op, x)?;
    let shown = |s: &[I]| format!("[{}]", s.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", "));
    let n = x.sizes[0].clone();
    let hw = layout::numel(&x.sizes[2..]);
    // F.group_norm's `_verify_batch_size` over `[N * C // G, G, *spatial]`.
    let per = (n * c.clone()).floor_div(&g) * hw.clone();
    if per.eq_i(1).guard(|| "group_norm: one value per group and channel".to_string())? {
        return Err(Error::Shape {
            message: format!(
                "Expected more than 1 value per channel when training, got input size {}",
                shown(&x.sizes)
            ),
        });
    }
    if c.modulo(&g).ne_i(0).guard(|| "group_norm: the groups divide the channels".to_string())? {
        return Err(Error::Shape {
            message: format!(
                "Expected number of channels in input to be divisible by num_groups, but got input of shape {} and num_groups={g}",
                shown(&x.sizes)
            ),
        });
    }
    for name in ["weight", "bias"] {
        let p = if name == "weight" { call.optional(1) } else { call.optional(2) };
        if let Some(p) = p {
            let ok = p.sizes.len() == 1
                && !p.sizes[0].sym_ne(&c).guard(|| format!("group_norm: {name} has one element per channel"))?;
            if !ok {
                return Err(Error::Shape {
                    message: format!(
                        "Expected {name} to be a vector of size equal to the number of channels in input, but got {name} of shape {} and input of shape {}",
                        shown(&p.sizes),
                        shown(&x.sizes)
                    ),
                });
            }
        }
    }
    if hw.eq_i(0).guard(|| "group_norm: H*W is 0".to_string())? {
        return Err(Error::Shape {
            message: "Expected HxW to be greater than 0, got 0".into(),
        });
    }
    let dtype = dtype_of(x);
    if !dtype.is_floating() && !is_empty(x, "group_norm")? {
        return Err(not_implemented("GroupNormKernelImpl", dtype));
    }
    same_dtypes(x, &[call.optional(1), call.optional(2)])?;
    Ok(vec![Out::new(x.sizes.clone(), suggested_strides(x)?, dtype)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::structured::{meta, Kw, SArg};
    use crate::sym::{Bindings, ShapeEnv, SymInt, SymbolSpec};

    fn rms<I: Int>(x: (&[I], &[I]), w: Option<(&[I], &[I])>, k: usize) -> Vec<I> {
        let t = |(s, st): (&[I], &[I])| SArg::Tensor(TensorSpec::typed(s.to_vec(), st.to_vec(), DType::F32));
        let shape = x.0[x.0.len() - k..].to_vec();
        let inputs = vec![t(x), w.map_or(SArg::Absent, t)];
        let mut kw = |n: &str| Ok((n == "normalized_shape").then(|| Kw::Ints(shape.clone())));
        let call = Call::new(SOp::RmsNorm, inputs, &mut kw).unwrap();
        meta(&call).unwrap().remove(0).strides
    }

    #[test]
    fn rms_norm_is_tensor_iterator_then_contiguous() {
        // Contiguous with odd size-1 strides: TensorIterator's strides stay (no copy).
        let x = (&[3, 1, 1][..], &[1, 7, 99][..]);
        assert_eq!(rms(x, Some((&[1, 1][..], &[1, 1][..])), 2), vec![1, 1, 1]);
        assert_eq!(rms(x, None, 2), vec![1, 1, 1]);
        // Not contiguous: `.contiguous()`.
        assert_eq!(rms((&[2, 3, 4][..], &[1, 2, 6][..]), None, 1), vec![12, 4, 1]);
        // Channels last suggested: TensorIterator's layout, kept.
        let cl = (&[2, 3, 4, 5][..], &[60, 1, 15, 3][..]);
        assert_eq!(rms(cl, Some((&[5][..], &[1][..])), 1), vec![60, 1, 15, 3]);
    }

    /// Symbolic size-1 dims: the trace evaluated at any binding its guards admit equals the
    /// concrete answer there.
    #[test]
    fn rms_norm_symbolic_agrees_with_concrete_on_size_one_dims() {
        let points = [(1, 1), (3, 1), (1, 2), (3, 2), (0, 1)];
        for (a, b) in points {
            let env = ShapeEnv::default();
            let sa = env.create_symbol("a", a, SymbolSpec::default()).unwrap();
            let sb = env.create_symbol("b", b, SymbolSpec::default()).unwrap();
            let k = |v: i64| SymInt::constant(v);
            // x: [a, b, 1] with strides [1, 7, 99]; weight [b, 1].
            let (xs, xst) = ([sa, sb.clone(), k(1)], [k(1), k(7), k(99)]);
            let (ws, wst) = ([sb, k(1)], [k(1), k(1)]);
            let sym = rms((&xs, &xst), Some((&ws, &wst)), 2);
            let guards = env.guards();
            for (a2, b2) in points {
                let bind = Bindings::from_pairs([("a", a2), ("b", b2)]);
                if !guards.iter().all(|g| g.cond.eval(&bind).unwrap()) {
                    continue;
                }
                let conc = rms((&[a2, b2, 1], &[1, 7, 99]), Some((&[b2, 1], &[1, 1])), 2);
                let got: Vec<i64> = sym.iter().map(|x| x.eval(&bind).unwrap()).collect();
                assert_eq!(got, conc, "traced at a={a} b={b}, bound a={a2} b={b2}");
            }
        }
    }
}
