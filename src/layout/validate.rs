//! Entry validation: the one place where untrusted sizes and strides are checked.
//!
//! Every public layout function validates its operands here first, so the algorithms
//! behind it can use plain (unchecked) `Int` arithmetic: after validation, every product of
//! `max(size, 1)` and every `|stride| * max(size, 1)` is known to fit in i64, which bounds
//! all intermediate values the algorithms form (contiguous and channels-last strides,
//! expected strides, `stride * size` in the branch-free non-overlapping-and-dense form).
//!
//! Symbolic values are checked through their hints; an unbacked value (no hint) can only
//! be checked when it is a constant.

use crate::{Error, Int, Result};

/// The concrete value used for validation: the constant, else the hint.
fn probe<I: Int>(v: &I) -> Option<i64> {
    v.as_const().or_else(|| v.hint())
}

/// Checks that `sizes` describe a tensor shape: at most [`MAX_DIMS`](crate::iter::MAX_DIMS)
/// dimensions ([`Error::Limit`]), no negative size, and the product of `max(size, 1)` (the
/// largest contiguous stride) fits in i64.
///
/// `tensor` names the tensor in the error (operand name or index).
pub fn check_sizes<I: Int>(tensor: &str, sizes: &[I]) -> Result<()> {
    check_sizes_named(|| tensor.to_string(), sizes)
}

/// [`check_sizes`] with the tensor name built only on error.
pub(crate) fn check_sizes_named<I: Int>(tensor: impl Fn() -> String, sizes: &[I]) -> Result<()> {
    if sizes.len() > crate::iter::MAX_DIMS {
        return Err(Error::Limit {
            message: format!(
                "{} has {} dimensions; at most {} are supported",
                tensor(),
                sizes.len(),
                crate::iter::MAX_DIMS
            ),
        });
    }
    let mut extent: i64 = 1;
    for (d, s) in sizes.iter().enumerate() {
        let Some(v) = probe(s) else { continue };
        if v < 0 {
            return Err(Error::layout(
                tensor(),
                format!("size {s} at dim {d} is negative ({v})"),
            ));
        }
        extent = extent.checked_mul(v.max(1)).ok_or_else(|| {
            Error::overflow(format!("{}: product of sizes up to dim {d}", tensor()))
        })?;
    }
    Ok(())
}

/// Checks sizes (see [`check_sizes`]), that there is one stride per size, and that every
/// `|stride| * max(size, 1)` fits in i64.
pub fn check_layout<I: Int>(tensor: &str, sizes: &[I], strides: &[I]) -> Result<()> {
    if sizes.len() != strides.len() {
        return Err(Error::layout(
            tensor,
            format!(
                "{} sizes but {} strides (ranks must match)",
                sizes.len(),
                strides.len()
            ),
        ));
    }
    check_sizes(tensor, sizes)?;
    for (d, (size, stride)) in sizes.iter().zip(strides).enumerate() {
        let (Some(n), Some(s)) = (probe(size), probe(stride)) else {
            continue;
        };
        s.checked_abs()
            .and_then(|a| a.checked_mul(n.max(1)))
            .ok_or_else(|| {
                Error::overflow(format!("{tensor}: stride {s} * size {n} at dim {d}"))
            })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_negative_size_naming_dim_and_value() {
        let err = check_sizes("x", &[2i64, -3]).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, Error::InvalidLayout { .. }), "{msg}");
        assert!(
            msg.contains("x") && msg.contains("dim 1") && msg.contains("-3"),
            "{msg}"
        );
    }

    #[test]
    fn rejects_rank_mismatch() {
        let err = check_layout("y", &[2i64, 3], &[1i64]).unwrap_err();
        assert!(matches!(err, Error::InvalidLayout { .. }));
        assert!(err.to_string().contains("2 sizes but 1 strides"));
    }

    #[test]
    fn rejects_overflowing_products() {
        let big = 1i64 << 40;
        assert!(matches!(
            check_sizes("t", &[big, big]),
            Err(Error::Overflow { .. })
        ));
        // Zero sizes count as 1 for the extent: still fine.
        assert!(check_sizes("t", &[big, 0, 4]).is_ok());
        assert!(matches!(
            check_layout("t", &[4i64], &[i64::MAX / 2]),
            Err(Error::Overflow { .. })
        ));
        assert!(matches!(
            check_layout("t", &[1i64], &[i64::MIN]),
            Err(Error::Overflow { .. })
        ));
        assert!(check_layout("t", &[1i64], &[i64::MAX]).is_ok());
    }
}
