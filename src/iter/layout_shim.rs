//! TEMPORARY stand-ins for the `layout` functions the build needs, with the exact generic
//! signatures announced for `crate::layout`. Deleted when `layout milestone 1` is merged.
#![allow(dead_code)]

use crate::error::{Error, Result};
use crate::int::{Bool, Int};

fn numel_is_zero<I: Int>(sizes: &[I]) -> I::Bool {
    sizes
        .iter()
        .fold(I::Bool::from_bool(false), |acc, s| acc.or(&s.eq_i(0)))
}

fn dense_in_order<I: Int>(sizes: &[I], strides: &[I], order: &[usize]) -> Result<bool> {
    let mut expected = I::from_i64(1);
    for &d in order {
        if sizes[d]
            .ne_i(1)
            .guard(|| format!("layout: dim {d} size != 1"))?
        {
            if strides[d]
                .sym_ne(&expected)
                .guard(|| format!("layout: dim {d} stride"))?
            {
                return Ok(false);
            }
            expected = expected * sizes[d].clone();
        }
    }
    Ok(true)
}

pub fn is_contiguous<I: Int>(sizes: &[I], strides: &[I]) -> Result<bool> {
    if numel_is_zero(sizes).guard(|| "is_contiguous: numel == 0".into())? {
        return Ok(true);
    }
    let order: Vec<usize> = (0..sizes.len()).rev().collect();
    dense_in_order(sizes, strides, &order)
}

pub fn is_channels_last_contiguous_2d<I: Int>(sizes: &[I], strides: &[I]) -> Result<bool> {
    if sizes.len() != 4 {
        return Ok(false);
    }
    dense_in_order(sizes, strides, &[1, 3, 2, 0])
}

pub fn is_channels_last_contiguous_3d<I: Int>(sizes: &[I], strides: &[I]) -> Result<bool> {
    if sizes.len() != 5 {
        return Ok(false);
    }
    dense_in_order(sizes, strides, &[1, 4, 3, 2, 0])
}

pub fn is_non_overlapping_and_dense<I: Int>(sizes: &[I], strides: &[I]) -> Result<bool> {
    if is_contiguous(sizes, strides)?
        || is_channels_last_contiguous_2d(sizes, strides)?
        || is_channels_last_contiguous_3d(sizes, strides)?
    {
        return Ok(true);
    }
    let n = sizes.len();
    if n == 1 {
        return Ok(sizes[0]
            .lt_i(2)
            .or(&strides[0].eq_i(1))
            .guard(|| "nod 1d".into())?);
    }
    let mut perm: Vec<usize> = (0..n).collect();
    // insertion sort: size<2 dims last, else by stride
    for i in 1..n {
        let mut j = i;
        while j > 0 {
            let (a, b) = (perm[j], perm[j - 1]);
            let a_lt_b = if sizes[a].lt_i(2).guard(|| "nod".into())? {
                false
            } else if sizes[b].lt_i(2).guard(|| "nod".into())? {
                true
            } else {
                strides[a].sym_lt(&strides[b]).guard(|| "nod".into())?
            };
            if !a_lt_b {
                break;
            }
            perm.swap(j, j - 1);
            j -= 1;
        }
    }
    let mut require = I::from_i64(1);
    for &d in &perm {
        if sizes[d].lt_i(2).guard(|| "nod".into())? {
            return Ok(true);
        }
        if strides[d].sym_ne(&require).guard(|| "nod".into())? {
            return Ok(false);
        }
        require = require * sizes[d].clone();
    }
    Ok(true)
}

pub fn infer_size<I: Int>(shapes: &[&[I]]) -> Result<Vec<I>> {
    let ndim = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out: Vec<I> = vec![I::from_i64(1); ndim];
    for s in shapes {
        let off = ndim - s.len();
        for (i, size) in s.iter().enumerate() {
            let cur = out[off + i].clone();
            if size.eq_i(1).guard(|| "infer_size".into())? {
                continue;
            }
            if cur.eq_i(1).guard(|| "infer_size".into())? {
                out[off + i] = size.clone();
            } else if cur.sym_ne(size).guard(|| "infer_size".into())? {
                return Err(Error::Broadcast {
                    size_a: cur.to_string(),
                    size_b: size.to_string(),
                    dim: off + i,
                });
            }
        }
    }
    Ok(out)
}

pub fn contiguous_strides<I: Int>(sizes: &[I]) -> Vec<I> {
    let mut out = vec![I::from_i64(1); sizes.len()];
    let mut acc = I::from_i64(1);
    for d in (0..sizes.len()).rev() {
        out[d] = acc.clone();
        acc = acc * sizes[d].max(&I::from_i64(1));
    }
    out
}

pub fn channels_last_strides_2d<I: Int>(sizes: &[I]) -> Result<Vec<I>> {
    if sizes.len() != 4 {
        return Err(Error::invalid("channels_last_strides_2d: rank must be 4"));
    }
    let one = I::from_i64(1);
    let mut s = vec![one.clone(); 4];
    s[1] = one.clone();
    s[3] = sizes[1].max(&one);
    s[2] = s[3].clone() * sizes[3].max(&one);
    s[0] = s[2].clone() * sizes[2].max(&one);
    Ok(s)
}

fn in_order_expr<I: Int>(sizes: &[I], strides: &[I], order: &[usize]) -> I::Bool {
    let mut expected = I::from_i64(1);
    let mut all = I::Bool::from_bool(true);
    for &d in order {
        all = all.and(&sizes[d].eq_i(1).or(&strides[d].sym_eq(&expected)));
        expected = expected * sizes[d].clone();
    }
    all
}

pub fn contiguity_expr<I: Int>(sizes: &[I], strides: &[I]) -> Result<I::Bool> {
    let order: Vec<usize> = (0..sizes.len()).rev().collect();
    Ok(numel_is_zero(sizes).or(&in_order_expr(sizes, strides, &order)))
}

pub fn channels_last_contiguity_expr_2d<I: Int>(sizes: &[I], strides: &[I]) -> Result<I::Bool> {
    if sizes.len() != 4 {
        return Ok(I::Bool::from_bool(false));
    }
    Ok(in_order_expr(sizes, strides, &[1, 3, 2, 0]))
}

pub fn non_overlapping_and_dense_expr<I: Int>(sizes: &[I], strides: &[I]) -> Result<I::Bool> {
    // Shim: branchy, folded to a constant (the real one is branch-free).
    Ok(I::Bool::from_bool(is_non_overlapping_and_dense(
        sizes, strides,
    )?))
}
