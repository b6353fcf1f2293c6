//! Concrete validation of operands before any layout reasoning.
//!
//! Everything here runs on the *hints* (the concrete value of an `i64`, the example value of a
//! backed symbol) and never records a guard: it rejects inputs that do not describe a strided
//! tensor at all, and bounds every product the build later forms (strides in bytes, the
//! `shape * stride` tests of coalescing, compatible strides of allocated outputs) so that the
//! concrete path can use plain `i64` arithmetic without overflow. Values without a hint
//! (unbacked symbols) are skipped; such a plan must be re-validated when specialized.

use super::config::TensorSpec;
use crate::error::{Error, Result};
use crate::int::Int;
use std::fmt::Display;

/// Largest supported rank (PyTorch's limit for TensorIterator is also 64 on the CPU path).
pub const MAX_DIMS: usize = 64;

const LIMIT: i128 = i64::MAX as i128;

fn mul(a: i128, b: i128) -> Option<i128> {
    a.checked_mul(b)
}

/// Checks one operand: rank, matching sizes/strides lengths, non-negative sizes, strides and
/// offset, positive element size, no i64 overflow of its byte extent, and (when its storage is
/// known) that every element it can address lies inside the storage.
pub(super) fn validate_operand<I: Int>(name: impl Display + Copy, t: &TensorSpec<I>) -> Result<()> {
    if t.sizes.len() > MAX_DIMS {
        return Err(Error::Limit {
            message: format!(
                "{name} has {} dimensions; at most {MAX_DIMS} are supported",
                t.sizes.len()
            ),
        });
    }
    if t.sizes.len() != t.strides.len() {
        return Err(Error::layout(
            name.to_string(),
            format!("{} sizes but {} strides", t.sizes.len(), t.strides.len()),
        ));
    }
    validate_element_size(name, t.element_size)?;
    let es = t.element_size as i128;
    let offset = t.storage_offset.hint();
    if let Some(o) = offset {
        if o < 0 {
            return Err(Error::layout(
                name.to_string(),
                format!("negative storage offset {o}"),
            ));
        }
    }
    let mut numel: Option<i128> = Some(1);
    // (offset + sum(size*stride)) * es: one past the end along every dimension.
    let mut reach: Option<i128> = offset.map(|o| o as i128);
    // offset + sum((size-1)*stride): the last addressable element.
    let mut last: Option<i128> = offset.map(|o| o as i128);
    for (d, (size, stride)) in t.sizes.iter().zip(&t.strides).enumerate() {
        let (sz, st) = (size.hint(), stride.hint());
        if let Some(v) = sz {
            if v < 0 {
                return Err(Error::layout(
                    name.to_string(),
                    format!("dim {d} has negative size {v}"),
                ));
            }
        }
        if let Some(v) = st {
            if v < 0 {
                return Err(Error::layout(
                    name.to_string(),
                    format!("dim {d} has negative stride {v} (negative strides are not supported)"),
                ));
            }
            if (v as i128) * es > LIMIT {
                return Err(Error::overflow(format!(
                    "{name}: stride {v} of dim {d} times element size {es} (bytes)"
                )));
            }
        }
        numel = match (numel, sz) {
            (Some(n), Some(v)) => mul(n, v as i128),
            _ => None,
        };
        if let Some(n) = numel {
            if n > LIMIT {
                return Err(Error::overflow(format!("{name}: number of elements")));
            }
        }
        match (sz, st) {
            (Some(a), Some(b)) => {
                reach = reach.and_then(|r| r.checked_add(a as i128 * b as i128));
                last = last.and_then(|r| r.checked_add((a as i128 - 1).max(0) * b as i128));
            }
            _ => {
                reach = None;
                last = None;
            }
        }
        if let Some(r) = reach {
            if r > LIMIT {
                return Err(Error::overflow(format!(
                    "{name}: byte extent of its strides"
                )));
            }
        }
    }
    if let Some(r) = reach {
        if mul(r, es).is_none_or(|b| b > LIMIT) {
            return Err(Error::overflow(format!(
                "{name}: byte extent of its strides"
            )));
        }
    }
    if let (Some(storage), Some(n), Some(l)) = (&t.storage, numel, last) {
        if n > 0 {
            if let Some(nbytes) = storage.nbytes.hint() {
                let needed = (l + 1) * es;
                if needed > nbytes as i128 {
                    return Err(Error::layout(
                        name.to_string(),
                        format!(
                            "addresses bytes up to {needed} (storage offset {}, sizes {}, strides {}) but its storage has {nbytes} bytes",
                            t.storage_offset,
                            super::fmt_dims(&t.sizes),
                            super::fmt_dims(&t.strides)
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Element sizes must be positive and small enough for byte arithmetic.
pub(super) fn validate_element_size(name: impl Display, element_size: usize) -> Result<()> {
    if element_size == 0 || element_size > (1 << 20) {
        return Err(Error::layout(
            name.to_string(),
            format!("invalid element size {element_size} bytes"),
        ));
    }
    Ok(())
}

/// Checks the broadcast shape: its element count, times the largest element size (the byte
/// size of an allocated output), must fit in i64.
pub(super) fn validate_broadcast_shape<I: Int>(shape: &[I], max_element_size: usize) -> Result<()> {
    // The message shows the values (hints), so both paths report the same text.
    let Some(values) = shape.iter().map(|s| s.hint()).collect::<Option<Vec<i64>>>() else {
        return Ok(());
    };
    let mut n: i128 = 1;
    for &v in &values {
        n = n.saturating_mul(v.max(0) as i128);
        if n > LIMIT {
            return Err(Error::overflow(format!(
                "number of elements of the broadcast shape {}",
                super::fmt_dims(&values)
            )));
        }
    }
    if n.saturating_mul(max_element_size as i128) > LIMIT {
        return Err(Error::overflow(format!(
            "byte size of an output of the broadcast shape {}",
            super::fmt_dims(&values)
        )));
    }
    Ok(())
}
