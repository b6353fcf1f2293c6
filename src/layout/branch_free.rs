//! Branch-free forms: the layout predicates as one boolean expression, no guard recorded.
//!
//! On the symbolic path the branchy predicates record a guard per decision they take
//! (`size[d] == 1`, `stride[d] != expected`, the sort comparisons of the dense check...),
//! which specializes the trace to one path. The forms here instead build the whole
//! condition as an `I::Bool`, so a caller can keep it symbolic (a plan can test it at run
//! time), let the simplifier prove it (contiguous strides of symbolic sizes give
//! the constant `true`), or branch once on the whole condition.
//!
//! The `*_or_false` variants are PyTorch's `is_contiguous_or_false` family: "definitely
//! true, else false". They branch on the branch-free condition with
//! [`Bool::guard_or_false`], so they never fail on an undecidable condition over unbacked
//! symbols (answering `false`, nothing recorded); over backed symbols they record one
//! guard, the whole condition.

use super::strides::{numel, CL2D_ORDER, CL3D_ORDER};
use super::validate::check_layout;
use crate::{Bool, Int, Result};

const TENSOR: &str = "input";

fn t<B: Bool>() -> B {
    B::from_bool(true)
}

/// AND over `order` (fastest first) of `size[d] == 1 || stride[d] == product of the sizes
/// before d in the order`: the branchy loop with its branches turned into disjunctions.
/// Multiplying by a size-1 dimension is a no-op, so the product needs no condition.
fn contiguous_in_order_expr<I: Int>(
    sizes: &[I],
    strides: &[I],
    order: impl Iterator<Item = usize>,
) -> I::Bool {
    let mut expected = I::from_i64(1);
    let mut all = t::<I::Bool>();
    for d in order {
        let ok = sizes[d].eq_i(1).or(&strides[d].sym_eq(&expected));
        all = all.and(&ok);
        expected = expected * sizes[d].clone();
    }
    all
}

/// Branch-free [`is_contiguous`](super::is_contiguous): `numel == 0 ||
/// AND_d (size[d] == 1 || stride[d] == size[d+1] * ... * size[n-1])`.
pub fn contiguity_expr<I: Int>(sizes: &[I], strides: &[I]) -> Result<I::Bool> {
    check_layout(TENSOR, sizes, strides)?;
    Ok(contiguity_unchecked(sizes, strides))
}

/// A stride that is *structurally* equal to `max(size[d+1], 1) * ... * max(size[n-1], 1)`
/// (what `torch.empty` makes, [`contiguous_strides`](super::contiguous_strides)) satisfies
/// its term outright: that product differs from the plain one only when some size is 0,
/// where `numel == 0` makes the whole condition true anyway (sizes are >= 0). This lets
/// the simplifier-free construction prove `contiguous_strides(sizes)` contiguous for
/// symbolic sizes that may be 0 (otherwise a case split), while the condition for any
/// other strides keeps its plain form. Never taken on the concrete path.
fn contiguity_unchecked<I: Int>(sizes: &[I], strides: &[I]) -> I::Bool {
    let one = I::from_i64(1);
    let (mut expected, mut expected_max) = (one.clone(), one.clone());
    let mut all = t::<I::Bool>();
    for d in (0..sizes.len()).rev() {
        // Structural check only (the difference of two canonical forms is the constant 0),
        // no simplifier call: this runs for every dimension of every symbolic trace.
        let empty_stride = expected_max.as_const().is_none()
            && (strides[d].clone() - expected_max.clone()).as_const() == Some(0);
        let ok = if empty_stride {
            t::<I::Bool>()
        } else {
            sizes[d].eq_i(1).or(&strides[d].sym_eq(&expected))
        };
        all = all.and(&ok);
        expected = expected * sizes[d].clone();
        expected_max = expected_max * sizes[d].max(&one);
    }
    numel(sizes).eq_i(0).or(&all)
}

/// Branch-free [`is_channels_last_contiguous_2d`](super::is_channels_last_contiguous_2d)
/// (constant false for any rank but 4).
pub fn channels_last_contiguity_expr_2d<I: Int>(sizes: &[I], strides: &[I]) -> Result<I::Bool> {
    check_layout(TENSOR, sizes, strides)?;
    Ok(cl2d_unchecked(sizes, strides))
}

fn cl2d_unchecked<I: Int>(sizes: &[I], strides: &[I]) -> I::Bool {
    if sizes.len() != 4 {
        return I::Bool::from_bool(false);
    }
    contiguous_in_order_expr(sizes, strides, CL2D_ORDER.into_iter())
}

/// Branch-free [`is_channels_last_contiguous_3d`](super::is_channels_last_contiguous_3d)
/// (constant false for any rank but 5).
pub fn channels_last_contiguity_expr_3d<I: Int>(sizes: &[I], strides: &[I]) -> Result<I::Bool> {
    check_layout(TENSOR, sizes, strides)?;
    Ok(cl3d_unchecked(sizes, strides))
}

fn cl3d_unchecked<I: Int>(sizes: &[I], strides: &[I]) -> I::Bool {
    if sizes.len() != 5 {
        return I::Bool::from_bool(false);
    }
    contiguous_in_order_expr(sizes, strides, CL3D_ORDER.into_iter())
}

/// c10's sort-based dense check without the sort (characterisation and proof on
/// [`non_overlapping_and_dense_expr`]).
fn nod_compute_expr<I: Int>(sizes: &[I], strides: &[I]) -> I::Bool {
    let n = sizes.len();
    let big: Vec<I::Bool> = sizes.iter().map(|s| s.ge_i(2)).collect();
    let next: Vec<I> = (0..n)
        .map(|j| strides[j].clone() * sizes[j].clone())
        .collect();
    let mut all = t::<I::Bool>();
    for i in 0..n {
        let mut has_pred = strides[i].eq_i(1);
        for j in (0..n).filter(|&j| j != i) {
            has_pred = has_pred.or(&big[j].and(&strides[i].sym_eq(&next[j])));
        }
        all = all.and(&big[i].not().or(&has_pred));
    }
    for i in 0..n {
        for j in i + 1..n {
            let distinct = big[i]
                .not()
                .or(&big[j].not())
                .or(&strides[i].sym_ne(&strides[j]));
            all = all.and(&distinct);
        }
    }
    all
}

/// Branch-free [`is_non_overlapping_and_dense`](super::is_non_overlapping_and_dense),
/// combined as TensorImpl does: contiguous, or (4-D) channels-last contiguous, or (5-D)
/// channels-last-3d contiguous, or the dense check. (The contiguity disjuncts add only
/// empty tensors to what the dense check accepts, but they let the simplifier prove the
/// common symbolic layouts dense without reasoning about the quadratic check.)
///
/// c10's sort-based check is replaced by a sort-free one. With `D = {d : size[d] >= 2}`:
///
/// ```text
/// for every i in D: stride[i] == 1  or  some j in D, j != i: stride[i] == stride[j] * size[j]
/// and the strides within D are pairwise distinct
/// ```
///
/// Why this is exactly c10's sorted chain `1, n_a, n_a*n_b, ...` (dims of size 0/1 are
/// ignored by both). A dimension of `D` with stride 0 fails: its predecessor would have
/// stride 0 too, against distinctness. Otherwise each predecessor step at least halves
/// `|stride|`, so every predecessor walk ends at a dimension without a predecessor, which
/// must have stride 1: one root, shared by all (distinctness), and all strides positive.
/// Draw an edge `j -> i` when `stride[i] == stride[j] * size[j]`. Out-degrees are <= 1
/// (two successors of `j` would share a stride); strides grow strictly along edges, so
/// the graph is acyclic and has a sink; the root has in-degree 0 (`1 == stride * size`
/// is impossible with `size >= 2`). Hence `|D| - 1 <= #edges` (every non-root node has a
/// predecessor) and `#edges <= |D| - 1` (out-degrees, minus the sink): each non-root
/// node has exactly one predecessor, so the graph (in- and out-degrees <= 1, acyclic,
/// `|D| - 1` edges) is one path from the root: the sorted chain. Conversely the chain
/// satisfies both conditions (its strides grow strictly since sizes >= 2). Also tested
/// exhaustively against c10's sort for small ranks.
pub fn non_overlapping_and_dense_expr<I: Int>(sizes: &[I], strides: &[I]) -> Result<I::Bool> {
    check_layout(TENSOR, sizes, strides)?;
    Ok(nod_unchecked(sizes, strides))
}

fn nod_unchecked<I: Int>(sizes: &[I], strides: &[I]) -> I::Bool {
    let mut e = contiguity_unchecked(sizes, strides);
    match sizes.len() {
        4 => e = e.or(&cl2d_unchecked(sizes, strides)),
        5 => e = e.or(&cl3d_unchecked(sizes, strides)),
        _ => {}
    }
    e.or(&nod_compute_expr(sizes, strides))
}

/// Definitely contiguous: [`contiguity_expr`] branched with `guard_or_false`.
pub fn is_contiguous_or_false<I: Int>(sizes: &[I], strides: &[I]) -> Result<bool> {
    let e = contiguity_expr(sizes, strides)?;
    Ok(e.guard_or_false(|| "is_contiguous_or_false: contiguity condition".into()))
}

/// Definitely channels-last contiguous (4-D); see [`is_contiguous_or_false`].
pub fn is_channels_last_contiguous_2d_or_false<I: Int>(sizes: &[I], strides: &[I]) -> Result<bool> {
    let e = channels_last_contiguity_expr_2d(sizes, strides)?;
    Ok(e.guard_or_false(|| "is_channels_last_contiguous_or_false: channels-last condition".into()))
}

/// Definitely channels-last-3d contiguous (5-D); see [`is_contiguous_or_false`].
pub fn is_channels_last_contiguous_3d_or_false<I: Int>(sizes: &[I], strides: &[I]) -> Result<bool> {
    let e = channels_last_contiguity_expr_3d(sizes, strides)?;
    Ok(e.guard_or_false(|| {
        "is_channels_last_3d_contiguous_or_false: channels-last-3d condition".into()
    }))
}

/// Definitely non-overlapping and dense; see [`is_contiguous_or_false`].
pub fn is_non_overlapping_and_dense_or_false<I: Int>(sizes: &[I], strides: &[I]) -> Result<bool> {
    let e = non_overlapping_and_dense_expr(sizes, strides)?;
    Ok(e.guard_or_false(|| "is_non_overlapping_and_dense_or_false: dense condition".into()))
}

#[cfg(test)]
mod tests {
    use super::super::contiguity::compute_nod_sorted;
    use super::*;

    /// Exhaustive over small ranks/values: the sort-free dense check equals c10's sort.
    #[test]
    fn sort_free_dense_check_equals_sorted_exhaustively() {
        let sizes_vals = [0i64, 1, 2, 3];
        let stride_vals = [-2i64, 0, 1, 2, 3, 4, 6];
        for rank in 0..=4usize {
            let combos = sizes_vals.len().pow(rank as u32) * stride_vals.len().pow(rank as u32);
            for k in 0..combos {
                let mut k = k;
                let mut sizes = vec![0; rank];
                let mut strides = vec![0; rank];
                for d in 0..rank {
                    sizes[d] = sizes_vals[k % sizes_vals.len()];
                    k /= sizes_vals.len();
                    strides[d] = stride_vals[k % stride_vals.len()];
                    k /= stride_vals.len();
                }
                assert_eq!(
                    nod_compute_expr(&sizes, &strides),
                    compute_nod_sorted(&sizes, &strides).unwrap(),
                    "sizes {sizes:?} strides {strides:?}"
                );
            }
        }
    }
}
