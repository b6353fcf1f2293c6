//! TEMPORARY plan builder for already-broadcast concrete operands.
//!
//! This is a stop-gap until the real TensorIterator build (`crate::iter`, branch `iter`) lands
//! on main; it will then be deleted and every caller switched to `iter`'s build. It does the
//! minimum the kernels need: broadcast (stride 0), order dimensions by PyTorch's stride
//! comparison (outputs first, broadcast dims ambiguous), and coalesce.

use crate::iter::{OperandPlan, Plan};
use crate::{Error, Result};

/// One operand of the temporary builder (strides in elements).
pub(crate) struct Layout<'a> {
    pub sizes: &'a [i64],
    pub strides: &'a [i64],
    pub offset: i64,
    pub element_size: usize,
}

/// Broadcasts shapes PyTorch-style (right-aligned).
pub(crate) fn broadcast_shapes(shapes: &[&[i64]]) -> Result<Vec<i64>> {
    let nd = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1i64; nd];
    for s in shapes {
        for (i, &v) in s.iter().enumerate() {
            let d = nd - s.len() + i;
            if out[d] == 1 {
                out[d] = v;
            } else if v != 1 && v != out[d] {
                return Err(Error::Broadcast {
                    size_a: out[d].to_string(),
                    size_b: v.to_string(),
                    dim: d,
                });
            }
        }
    }
    Ok(out)
}

/// Strides of `op` viewed at `shape` (broadcast dims get stride 0).
fn broadcast_strides(op: &Layout<'_>, shape: &[i64], what: usize) -> Result<Vec<i64>> {
    let nd = shape.len();
    if op.sizes.len() > nd {
        return Err(Error::layout(
            format!("operand {what}"),
            format!("{} dims exceed the {nd}-d iteration shape", op.sizes.len()),
        ));
    }
    let lead = nd - op.sizes.len();
    let mut st = vec![0i64; nd];
    for (i, (&s, &t)) in op.sizes.iter().zip(op.strides).enumerate() {
        if s == shape[lead + i] {
            st[lead + i] = if s == 1 { 0 } else { t };
        } else if s != 1 {
            return Err(Error::Broadcast {
                size_a: s.to_string(),
                size_b: shape[lead + i].to_string(),
                dim: lead + i,
            });
        }
    }
    Ok(st)
}

/// PyTorch's `compute_perm` (innermost first) over broadcast strides of the given operands.
pub(crate) fn compute_perm(shape: &[i64], strides: &[Vec<i64>]) -> Vec<usize> {
    let nd = shape.len();
    let mut perm: Vec<usize> = (0..nd).rev().collect();
    let should_swap = |d0: usize, d1: usize| -> i32 {
        for st in strides {
            let (s0, s1) = (st[d0], st[d1]);
            if s0 == 0 || s1 == 0 {
                continue;
            }
            if s0 < s1 {
                return -1;
            }
            if s0 > s1 {
                return 1;
            }
            if shape[d0] > shape[d1] {
                return 1;
            }
        }
        0
    };
    for i in 1..nd {
        let mut d1 = i;
        for d0 in (0..i).rev() {
            let c = should_swap(perm[d0], perm[d1]);
            if c > 0 {
                perm.swap(d0, d1);
                d1 = d0;
            } else if c < 0 {
                break;
            }
        }
    }
    perm
}

/// Dense output strides for `shape` following the inputs' layout (TensorIterator's rule).
pub(crate) fn output_strides(shape: &[i64], inputs: &[Layout<'_>]) -> Result<Vec<i64>> {
    let strides = inputs
        .iter()
        .enumerate()
        .map(|(i, op)| broadcast_strides(op, shape, i))
        .collect::<Result<Vec<_>>>()?;
    let perm = compute_perm(shape, &strides);
    Ok(crate::tensor::strides_in_order(shape, &perm))
}

/// Builds a plan; `ops[..num_outputs]` are outputs and define the iteration shape.
pub(crate) fn build_plan(ops: &[Layout<'_>], num_outputs: usize) -> Result<Plan<i64>> {
    let shape: Vec<i64> = if num_outputs > 0 {
        ops[0].sizes.to_vec()
    } else {
        broadcast_shapes(&ops.iter().map(|o| o.sizes).collect::<Vec<_>>())?
    };
    for (i, o) in ops[..num_outputs].iter().enumerate() {
        if o.sizes != &shape[..] {
            return Err(Error::layout(
                format!("output {i}"),
                format!(
                    "sizes {:?} differ from the iteration shape {shape:?}",
                    o.sizes
                ),
            ));
        }
    }
    let strides = ops
        .iter()
        .enumerate()
        .map(|(i, op)| broadcast_strides(op, &shape, i))
        .collect::<Result<Vec<_>>>()?;
    let perm = compute_perm(&shape, &strides);
    // permuted, in elements
    let mut pshape: Vec<i64> = perm.iter().map(|&d| shape[d]).collect();
    let mut pstr: Vec<Vec<i64>> = strides
        .iter()
        .map(|st| perm.iter().map(|&d| st[d]).collect())
        .collect();
    // coalesce
    let nd = pshape.len();
    if nd > 1 {
        let mut prev = 0;
        for d in 1..nd {
            let can = pshape[prev] == 1
                || pshape[d] == 1
                || pstr
                    .iter()
                    .all(|st| st[prev].checked_mul(pshape[prev]) == Some(st[d]));
            if can {
                if pshape[prev] == 1 {
                    for st in pstr.iter_mut() {
                        st[prev] = st[d];
                    }
                }
                pshape[prev] *= pshape[d];
            } else {
                prev += 1;
                if prev != d {
                    pshape[prev] = pshape[d];
                    for st in pstr.iter_mut() {
                        st[prev] = st[d];
                    }
                }
            }
        }
        pshape.truncate(prev + 1);
        for st in pstr.iter_mut() {
            st.truncate(prev + 1);
        }
    }
    let operands = ops
        .iter()
        .zip(pstr)
        .enumerate()
        .map(|(i, (op, st))| {
            let es = op.element_size as i64;
            let stride_bytes = st
                .iter()
                .map(|&s| {
                    s.checked_mul(es)
                        .ok_or_else(|| Error::overflow(format!("byte stride of operand {i}")))
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(OperandPlan {
                stride_bytes,
                offset: op.offset,
                element_size: op.element_size,
                is_output: i < num_outputs,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Plan {
        shape: pshape,
        operands,
        num_outputs,
        broadcast_shape: shape,
        output_strides: ops[..num_outputs]
            .iter()
            .map(|o| o.strides.to_vec())
            .collect(),
        perm,
    })
}
