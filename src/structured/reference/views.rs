//! References of the multi-result views (`split`, `split_with_sizes`, `chunk`, `unbind`):
//! each piece's values, read from the input's logical (row-major) values.

use super::{compute, internal, tensor, Arg};
use crate::reduce::wrap_dim;
use crate::structured::{Call, Out, SOp};
use crate::tensor::Scalar;
use crate::Result;

/// The values of every piece `meta` gave (`outs`). `unbind`'s piece `i` is index `i` along
/// `dim`; the other ops' pieces follow each other along `dim`, each starting where the
/// previous one ends (checked against the piece's `view_offset` where the input's stride
/// along `dim` tells it).
pub(super) fn pieces(
    call: &Call<i64>,
    args: &[Arg<'_>],
    outs: &[Out<i64>],
) -> Result<Vec<Vec<Scalar>>> {
    let x = tensor(args, 0)?;
    let d = wrap_dim(call.cint("dim")?, x.sizes.len())?;
    let spec = call.tensor(0)?;
    let stride = spec.strides.get(d).copied().unwrap_or(0);
    let mut all = Vec::with_capacity(outs.len());
    let mut start = 0i64;
    for (i, o) in outs.iter().enumerate() {
        let unbind = call.op == SOp::Unbind;
        if unbind {
            start = i as i64;
        }
        let expected = start
            .checked_mul(stride)
            .and_then(|s| s.checked_add(spec.storage_offset));
        if stride != 0 && o.view_offset != expected {
            return Err(internal(&format!(
                "{}: piece {i} starts at {start} along dim {d}, meta says offset {:?}",
                call.op, o.view_offset
            )));
        }
        all.push(compute(o, |p| {
            let mut at = p.to_vec();
            if unbind {
                at.insert(d, start);
            } else {
                at[d] += start;
            }
            x.at(&at)
        })?);
        if !unbind {
            start += o.sizes.get(d).copied().unwrap_or(0);
        }
    }
    Ok(all)
}
