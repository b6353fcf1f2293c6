//! The meta function of every reduction: argument checks in PyTorch's order, the result's
//! dtype and layout, and the iteration plan (through [`crate::iter::reduction_plan`]).

use super::table::{DimsRule, EmptyRule, ReductionOp};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::int::{Bool, Int};
use crate::iter::{reduction_plan, Plan, TensorSpec};

/// The `dim` argument of a reduction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dims {
    /// `dim=None`: every dimension.
    All,
    /// One dimension (may be negative).
    One(i64),
    /// A list of dimensions (may be negative; `[]` is op-specific, see
    /// [`DimsRule`]).
    List(Vec<i64>),
}

/// What a reduction produces, before any data is touched.
#[derive(Clone, Debug, PartialEq)]
pub struct ReductionMeta<I> {
    /// The op.
    pub op: ReductionOp,
    /// Result dtype.
    pub dtype: DType,
    /// Reduced input dimensions (one entry per input dim).
    pub mask: Vec<bool>,
    /// Result sizes.
    pub sizes: Vec<I>,
    /// Result strides (contiguous).
    pub strides: Vec<I>,
    /// The iteration plan (output 0 with stride 0 on reduced dims, then the input).
    pub plan: Plan<I>,
}

/// PyTorch's `maybe_wrap_dim` (a 0-d tensor accepts dims `-1` and `0`).
pub fn wrap_dim(dim: i64, ndim: usize) -> Result<usize> {
    let n = ndim.max(1) as i64;
    if dim < -n || dim >= n {
        return Err(Error::Index {
            message: format!(
                "Dimension out of range (expected to be in range of [{}, {}], but got {dim})",
                -n,
                n - 1
            ),
        });
    }
    Ok(if dim < 0 { dim + n } else { dim } as usize)
}

/// True when some size is 0, decided with one guard.
fn any_empty<I: Int>(sizes: &[I], why: impl FnOnce() -> String) -> Result<bool> {
    sizes
        .iter()
        .fold(I::Bool::from_bool(false), |acc, s| acc.or(&s.eq_i(0)))
        .guard(why)
}

/// Checks the arguments of `op` over `input` (of dtype `dtype`) in PyTorch's order and
/// computes the result's dtype, sizes, strides and the iteration plan. Written once over
/// [`Int`]: symbolic sizes record guards for the empty-dimension checks (and for the
/// permutation and coalescing of the plan).
///
/// Errors carry PyTorch's categories: `index` (dim out of range, an empty reduced dim where
/// the op needs values), `dtype` (`mean` of a non-floating input, `argmax`/`argmin` of
/// `bool`), `error` (a dim given twice, several dims to an op taking one).
pub fn reduction_meta<I: Int>(
    op: ReductionOp,
    input: &TensorSpec<I>,
    dtype: DType,
    dims: &Dims,
    keepdim: bool,
) -> Result<ReductionMeta<I>> {
    let info = op.info();
    let name = info.name;
    let nd = input.ndim();
    if input.element_size != dtype.element_size() {
        return Err(Error::invalid(format!(
            "{name}(): input element size {} does not match dtype {dtype}",
            input.element_size
        )));
    }
    let listed: Vec<i64> = match (dims, info.dims) {
        (Dims::List(v), DimsRule::One) if v.len() != 1 => {
            return Err(Error::invalid(format!(
                "{name}() takes one dim or None, got {} dims",
                v.len()
            )))
        }
        (Dims::All, _) => Vec::new(),
        (Dims::One(d), _) => vec![*d],
        (Dims::List(v), _) => v.clone(),
    };
    // The dtype is checked before the dims (`mean` of ints, `argmax` of bool).
    let out_dtype = op.result_dtype(dtype)?;
    match info.empty {
        EmptyRule::Identity => {}
        EmptyRule::NeedsNonEmptyDims => {
            if nd > 0 && any_empty(&input.sizes, || format!("{name}(): input.numel() == 0"))? {
                if listed.is_empty() {
                    return Err(Error::Index {
                        message: format!("{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument."),
                    });
                }
                for &d in &listed {
                    let w = wrap_dim(d, nd)?;
                    check_nonzero(name, &input.sizes[w], w)?;
                }
            }
        }
        EmptyRule::NeedsNonEmptyDim => match dims {
            Dims::All => {
                if nd > 0 && any_empty(&input.sizes, || format!("{name}(): input.numel() == 0"))? {
                    return Err(Error::Index {
                        message: format!("{name}(): Expected reduction dim to be specified for input.numel() == 0."),
                    });
                }
            }
            _ => {
                let w = wrap_dim(listed[0], nd)?;
                if nd > 0 {
                    check_nonzero(name, &input.sizes[w], w)?;
                }
            }
        },
    }
    // make_dim_mask
    let mut mask = vec![false; nd];
    let reduce_all = match dims {
        Dims::All => true,
        Dims::List(v) if v.is_empty() => info.dims != DimsRule::ListEmptyIsNone,
        _ => false,
    };
    // PyTorch reduces more than 64 dims only over everything without `dim` (it flattens),
    // except `all`/`any`; any other such reduction is a RuntimeError (category `error`),
    // raised after the dims are checked. Here the build below takes at most 64 either way.
    if nd > crate::iter::MAX_DIMS && (!reduce_all || matches!(op, ReductionOp::All | ReductionOp::Any)) {
        for &d in &listed {
            wrap_dim(d, nd)?;
        }
        return Err(Error::invalid(format!(
            "{name}(): only tensors with up to {} dims are supported",
            crate::iter::MAX_DIMS
        )));
    }
    if reduce_all {
        mask.iter_mut().for_each(|m| *m = true);
    } else {
        let mut seen = vec![false; nd.max(1)];
        for &d in &listed {
            let w = wrap_dim(d, nd)?;
            if seen[w] {
                return Err(Error::invalid(format!(
                    "dim {w} appears multiple times in the list of dims"
                )));
            }
            seen[w] = true;
            if w < nd {
                mask[w] = true;
            }
        }
    }
    let r = reduction_plan(input, &mask, keepdim, out_dtype.element_size())?;
    Ok(ReductionMeta {
        op,
        dtype: out_dtype,
        mask,
        sizes: r.sizes,
        strides: r.strides,
        plan: r.plan,
    })
}

fn check_nonzero<I: Int>(name: &str, size: &I, dim: usize) -> Result<()> {
    if size
        .eq_i(0)
        .guard(|| format!("{name}(): reduction dim {dim} has size {size} == 0"))?
    {
        return Err(Error::Index {
            message: format!("{name}(): Expected reduction dim {dim} to have non-zero size."),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(
        op: ReductionOp,
        sizes: &[i64],
        dtype: DType,
        dims: Dims,
        keepdim: bool,
    ) -> Result<ReductionMeta<i64>> {
        let strides = crate::layout::contiguous_strides(sizes);
        let t = TensorSpec::new(sizes.to_vec(), strides, dtype.element_size());
        reduction_meta(op, &t, dtype, &dims, keepdim)
    }

    /// PyTorch 2.15 on 65 dims: `sum(0)`, `amax(-1)`, `sum` over every dim listed, `all()`
    /// and `any()` raise "only tensors with up to 64 dims are supported" (category `error`);
    /// a dim out of range is still an `index` error, a dtype error still `dtype`.
    #[test]
    fn more_than_64_dims_with_dims_is_pytorchs_error() {
        let big = [1i64; 65];
        for (op, dims) in [
            (ReductionOp::Sum, Dims::One(0)),
            (ReductionOp::Amax, Dims::One(-1)),
            (ReductionOp::Sum, Dims::List((0..65).collect())),
            (ReductionOp::All, Dims::All),
            (ReductionOp::Any, Dims::All),
            (ReductionOp::Argmax, Dims::One(0)),
        ] {
            let e = meta(op, &big, DType::F32, dims.clone(), false).unwrap_err();
            assert_eq!(e.category(), "error", "{op:?} {dims:?}: {e}");
            assert!(e.to_string().contains("up to 64 dims"), "{e}");
        }
        let e = meta(ReductionOp::Sum, &big, DType::F32, Dims::One(99), false).unwrap_err();
        assert_eq!(e.category(), "index");
        let e = meta(ReductionOp::Mean, &big, DType::I32, Dims::One(0), false).unwrap_err();
        assert_eq!(e.category(), "dtype");
        let e = meta(ReductionOp::Sum, &[1i64; 70], DType::F32, Dims::One(68), false).unwrap_err();
        assert_eq!(e.category(), "error");
    }

    #[test]
    fn dims_wrap_and_duplicates() {
        let m = meta(
            ReductionOp::Sum,
            &[2, 3, 4],
            DType::F32,
            Dims::List(vec![-1, 0]),
            false,
        )
        .unwrap();
        assert_eq!(m.mask, vec![true, false, true]);
        assert_eq!(m.sizes, vec![3]);
        let e = meta(
            ReductionOp::Sum,
            &[2, 3],
            DType::F32,
            Dims::List(vec![1, -1]),
            false,
        )
        .unwrap_err();
        assert_eq!(e.category(), "error");
        let e = meta(ReductionOp::Sum, &[2, 3], DType::F32, Dims::One(2), false).unwrap_err();
        assert_eq!(e.category(), "index");
        // 0-d: dims -1 and 0 are fine and reduce nothing visible.
        let m = meta(ReductionOp::Prod, &[], DType::U8, Dims::One(-1), true).unwrap();
        assert!(m.sizes.is_empty() && m.dtype == DType::I64);
    }

    #[test]
    fn empty_list_semantics_differ_per_op() {
        let m = meta(
            ReductionOp::Any,
            &[2, 3],
            DType::I32,
            Dims::List(vec![]),
            false,
        )
        .unwrap();
        assert_eq!((m.sizes, m.dtype), (vec![2, 3], DType::Bool));
        let m = meta(
            ReductionOp::Amin,
            &[2, 3],
            DType::I32,
            Dims::List(vec![]),
            true,
        )
        .unwrap();
        assert_eq!(m.sizes, vec![1, 1]);
    }

    #[test]
    fn empty_inputs() {
        let e = meta(ReductionOp::Amax, &[2, 0], DType::F32, Dims::All, false).unwrap_err();
        assert_eq!(e.category(), "index");
        let e = meta(ReductionOp::Amax, &[2, 0], DType::F32, Dims::One(1), false).unwrap_err();
        assert_eq!(e.category(), "index");
        let m = meta(ReductionOp::Amax, &[2, 0], DType::F32, Dims::One(0), false).unwrap();
        assert_eq!(m.sizes, vec![0]);
        let e = meta(
            ReductionOp::Argmin,
            &[0, 3],
            DType::F32,
            Dims::One(0),
            false,
        )
        .unwrap_err();
        assert_eq!(e.category(), "index");
        // The dtype error comes before the index errors.
        let e = meta(ReductionOp::Argmax, &[0], DType::Bool, Dims::One(3), false).unwrap_err();
        assert_eq!(e.category(), "dtype");
        let e = meta(ReductionOp::Argmax, &[2], DType::Bool, Dims::All, false).unwrap_err();
        assert_eq!(e.category(), "dtype");
        // mean checks its dtype first.
        let e = meta(ReductionOp::Mean, &[2], DType::I64, Dims::One(5), false).unwrap_err();
        assert_eq!(e.category(), "dtype");
        let m = meta(ReductionOp::Sum, &[0, 3], DType::Bool, Dims::All, true).unwrap();
        assert_eq!((m.sizes, m.dtype), (vec![1, 1], DType::I64));
    }
}
