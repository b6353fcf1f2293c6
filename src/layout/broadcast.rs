//! Broadcasting: the common shape of several operands and the strides that expand an
//! operand to it.

use super::validate::{check_layout, check_sizes_named};
use crate::{Bool, Error, Int, Result};

/// Broadcasts two shapes (PyTorch's `infer_size`): right-aligned; at each dimension the
/// sizes must be equal or one of them 1 (a 1 maps to the other size, even 0).
fn infer_size_pair<I: Int>(a: &[I], b: &[I]) -> Result<Vec<I>> {
    let ndim = a.len().max(b.len());
    let one = I::from_i64(1);
    let mut out = vec![one.clone(); ndim];
    for i in (0..ndim).rev() {
        let off = ndim - 1 - i;
        let sa = if off < a.len() {
            a[a.len() - 1 - off].clone()
        } else {
            one.clone()
        };
        let sb = if off < b.len() {
            b[b.len() - 1 - off].clone()
        } else {
            one.clone()
        };
        // Equal sizes (statically, e.g. the same symbol, or after guarding) keep size a;
        // a 1 maps to the other size, even 0.
        // A size b that is statically 1 (a padded leading dimension, a literal 1) leaves
        // size a whatever it is, so no guard on `sa == 1` is needed.
        let same = sa.sym_eq(&sb).statically_known_true() || sb.eq_i(1).statically_known_true();
        out[i] = if !same
            && sa
                .eq_i(1)
                .guard(|| format!("broadcast: size {sa} of tensor a == 1 at dim {i}"))?
        {
            sb
        } else if same
            || sb
                .eq_i(1)
                .guard(|| format!("broadcast: size {sb} of tensor b == 1 at dim {i}"))?
            || sa
                .sym_eq(&sb)
                .guard(|| format!("broadcast: sizes {sa} == {sb} at dim {i}"))?
        {
            sa
        } else {
            return Err(Error::Broadcast {
                size_a: sa.to_string(),
                size_b: sb.to_string(),
                dim: i,
                from_end: ndim - 1 - i,
            });
        };
    }
    Ok(out)
}

/// The broadcast shape of any number of shapes, folded pairwise left to right as
/// TensorIterator does (`shape = infer_size(shape, next)`), so a mismatch reports the
/// accumulated shape as tensor a and the offending operand as tensor b, with the dimension
/// index in their common shape: [`Error::Broadcast`], PyTorch's wording. No shapes give
/// the scalar shape `[]`.
pub fn infer_size<I: Int>(shapes: &[&[I]]) -> Result<Vec<I>> {
    let mut out: Vec<I> = Vec::new();
    for (k, shape) in shapes.iter().enumerate() {
        check_sizes_named(|| format!("input {k}"), shape)?;
        out = infer_size_pair(&out, shape)?;
    }
    Ok(out)
}

/// The strides that view a tensor (`sizes`, `strides`) as the broadcast shape `target`,
/// the way TensorIterator does it: new leading dimensions and size-1 dimensions stretched
/// to another size get stride 0; all others keep their stride.
///
/// Errors: a dimension that is neither equal to the target nor 1 ([`Error::Broadcast`]),
/// rank above the target's, invalid layout.
pub fn broadcast_strides<I: Int>(sizes: &[I], strides: &[I], target: &[I]) -> Result<Vec<I>> {
    check_layout("input", sizes, strides)?;
    if sizes.len() > target.len() {
        return Err(Error::layout(
            "input",
            format!(
                "rank {} cannot broadcast to the rank-{} shape {:?}",
                sizes.len(),
                target.len(),
                target
            ),
        ));
    }
    let offset = target.len() - sizes.len();
    let mut out = vec![I::from_i64(0); target.len()];
    for (d, (size, stride)) in sizes.iter().zip(strides).enumerate() {
        let t = &target[offset + d];
        out[offset + d] = if size
            .sym_eq(t)
            .guard(|| format!("expand: size[{d}] == target size {t}"))?
        {
            stride.clone()
        } else if size.eq_i(1).guard(|| format!("expand: size[{d}] == 1"))? {
            I::from_i64(0)
        } else {
            return Err(Error::Broadcast {
                size_a: size.to_string(),
                size_b: t.to_string(),
                dim: offset + d,
                from_end: sizes.len() - 1 - d,
            });
        };
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasts_like_pytorch() {
        let s: [&[i64]; 3] = [&[8, 1], &[1], &[]];
        assert_eq!(infer_size(&s).unwrap(), vec![8, 1]);
        let s: [&[i64]; 2] = [&[1, 7], &[7, 1, 1, 7]];
        assert_eq!(infer_size(&s).unwrap(), vec![7, 1, 1, 7]);
        let s: [&[i64]; 2] = [&[1, 3, 0, 1], &[1]];
        assert_eq!(infer_size(&s).unwrap(), vec![1, 3, 0, 1]);
        let s: [&[i64]; 2] = [&[0], &[1]];
        assert_eq!(infer_size(&s).unwrap(), vec![0]);
        assert_eq!(infer_size::<i64>(&[]).unwrap(), Vec::<i64>::new());
    }

    #[test]
    fn mismatch_uses_pytorch_wording() {
        let s: [&[i64]; 3] = [&[2, 3], &[3], &[4, 1, 2]];
        let err = infer_size(&s).unwrap_err();
        assert_eq!(
            err,
            Error::Broadcast {
                size_a: "3".into(),
                size_b: "2".into(),
                dim: 2,
                from_end: 0
            }
        );
        assert_eq!(
            err.to_string(),
            "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 2"
        );
    }

    #[test]
    fn expanded_strides_are_zero_on_broadcast_dims() {
        assert_eq!(
            broadcast_strides(&[3i64, 1], &[1, 1], &[2, 3, 4]).unwrap(),
            vec![0, 1, 0]
        );
        assert_eq!(broadcast_strides(&[1i64], &[5], &[1]).unwrap(), vec![5]);
        assert!(matches!(
            broadcast_strides(&[3i64], &[1], &[4]),
            Err(Error::Broadcast { .. })
        ));
        assert!(broadcast_strides(&[3i64, 1], &[1, 1], &[1]).is_err());
    }

    #[test]
    fn a_static_one_needs_no_guard() {
        use crate::sym::{ShapeEnv, SymInt, SymbolSpec};
        let env = ShapeEnv::default();
        let n = env.create_symbol("n", 3, SymbolSpec::default()).unwrap();
        let h = env.create_symbol("h", 1, SymbolSpec::default()).unwrap();
        let one = SymInt::constant(1);
        let a = [n.clone(), h.clone()];
        let b = [one.clone(), one];
        let out = infer_size(&[&a[..], &b[..]]).unwrap();
        assert_eq!(out[0].expr(), n.expr());
        assert_eq!(out[1].expr(), h.expr());
        assert!(env.guards().is_empty(), "{:?}", env.guards());
        // Whereas a symbolic size b does need to know which side is 1.
        let c = env.create_symbol("c", 1, SymbolSpec::default()).unwrap();
        infer_size(&[&[n.clone()][..], &[c][..]]).unwrap();
        assert!(!env.guards().is_empty());
    }
}
