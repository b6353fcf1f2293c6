//! Plan validation and the serial/parallel drivers (2-D stepping from any linear start).

use super::config::ExecConfig;
use crate::iter::Plan;
use crate::tensor::RawStorage;
use crate::{Error, Result};
use rayon::prelude::*;
use smallvec::SmallVec;

/// A validated plan bound to storages: sizes as `usize`, byte strides as `isize`, base
/// pointers at each operand's first element.
///
/// Invariant (established by [`prepare`]): for every multi-index `i` inside `shape`, and every
/// operand `k`, `base[k] + Σ i[d]·strides[d][k]` points to a whole, aligned element inside
/// operand `k`'s storage; outputs do not overlap themselves, and an output shares memory with
/// another operand only if both have identical layouts (same element at every index).
pub(crate) struct Prepared<const N: usize> {
    pub shape: SmallVec<[usize; 8]>,
    pub strides: SmallVec<[[isize; N]; 8]>,
    pub base: [*mut u8; N],
    pub numel: usize,
}

// SAFETY: the pointers are only dereferenced by the drivers, which hand each thread a
// disjoint range of the iteration space; by the `Prepared` invariant, disjoint ranges write
// disjoint output elements, and no thread reads an element another thread writes (an output
// aliases an input only element-for-element).
unsafe impl<const N: usize> Sync for Prepared<N> {}
// SAFETY: as above.
unsafe impl<const N: usize> Send for Prepared<N> {}

fn byte_range(shape: &[i64], strides: &[i64], start: i64, es: i64, k: usize) -> Result<(i64, i64)> {
    let ovf = || Error::overflow(format!("byte extent of plan operand {k}"));
    let (mut lo, mut hi) = (start, start.checked_add(es).ok_or_else(ovf)?);
    for (&s, &st) in shape.iter().zip(strides) {
        let e = (s - 1).checked_mul(st).ok_or_else(ovf)?;
        if e < 0 {
            lo = lo.checked_add(e).ok_or_else(ovf)?;
        } else {
            hi = hi.checked_add(e).ok_or_else(ovf)?;
        }
    }
    Ok((lo, hi))
}

/// Validates `plan` against the operands' storages and returns the bound plan.
///
/// Checks, with checked i64 arithmetic: operand count and element sizes, stride vector
/// lengths, non-negative sizes and offsets, strides that are multiples of the element size
/// (so every access is aligned), every addressed byte inside its storage (negative byte strides
/// are handled by taking the min and max over the strided extent), outputs free of internal
/// overlap, and outputs that share a storage with another operand either disjoint from it or
/// laid out identically (`Error::MemoryOverlap` otherwise).
pub(crate) fn prepare<const N: usize>(
    plan: &Plan<i64>,
    ops: &[RawStorage<'_>; N],
    num_outputs: usize,
) -> Result<Prepared<N>> {
    if plan.operands.len() != N || plan.num_outputs != num_outputs {
        return Err(Error::invalid(format!(
            "plan has {} operands ({} outputs) but the kernel takes {N} ({num_outputs} outputs)",
            plan.operands.len(),
            plan.num_outputs
        )));
    }
    let nd = plan.shape.len();
    let mut numel: i64 = 1;
    for (d, &s) in plan.shape.iter().enumerate() {
        if s < 0 {
            return Err(Error::layout("plan", format!("dim {d}: negative size {s}")));
        }
        numel = numel
            .checked_mul(s)
            .ok_or_else(|| Error::overflow("plan numel"))?;
    }
    let mut ranges = [(0i64, 0i64); N];
    for (k, (op, raw)) in plan.operands.iter().zip(ops).enumerate() {
        let what = || format!("plan operand {k}");
        if op.element_size != raw.element_size {
            return Err(Error::layout(
                what(),
                format!(
                    "element size {} but the storage holds {}-byte elements",
                    op.element_size, raw.element_size
                ),
            ));
        }
        if op.byte_strides.len() != nd {
            return Err(Error::layout(
                what(),
                format!("{} strides for {nd} dims", op.byte_strides.len()),
            ));
        }
        let es = op.element_size as i64;
        if let Some(d) = op.byte_strides.iter().position(|&s| s % es != 0) {
            return Err(Error::layout(
                what(),
                format!(
                    "dim {d}: byte stride {} is not a multiple of the element size {es}",
                    op.byte_strides[d]
                ),
            ));
        }
        if op.offset < 0 {
            return Err(Error::layout(
                what(),
                format!("negative offset {}", op.offset),
            ));
        }
        if numel == 0 {
            continue;
        }
        let start = op
            .offset
            .checked_mul(es)
            .ok_or_else(|| Error::overflow(what()))?;
        let (lo, hi) = byte_range(&plan.shape, &op.byte_strides, start, es, k)?;
        if lo < 0 || hi > raw.bytes as i64 {
            return Err(Error::layout(
                what(),
                format!("addresses bytes [{lo}, {hi}) but its storage has {} bytes (shape {:?}, byte strides {:?}, offset {})", raw.bytes, plan.shape, op.byte_strides, op.offset),
            ));
        }
        ranges[k] = (lo, hi);
    }
    if numel > 0 {
        for k in 0..num_outputs {
            let op = &plan.operands[k];
            let es = op.element_size as i64;
            let el: SmallVec<[i64; 8]> = op.byte_strides.iter().map(|s| s / es).collect();
            if !crate::tensor::layout_is_non_overlapping(&plan.shape, &el) {
                return Err(Error::MemoryOverlap {
                    message: format!("output {k} has internal overlap (more than one element written to one memory location): shape {:?}, byte strides {:?}", plan.shape, op.byte_strides),
                });
            }
            for j in 0..N {
                if j == k || ops[j].id != ops[k].id {
                    continue;
                }
                let disjoint = ranges[j].1 <= ranges[k].0 || ranges[k].1 <= ranges[j].0;
                let other = &plan.operands[j];
                let identical = other.offset == op.offset
                    && other.element_size == op.element_size
                    && plan
                        .shape
                        .iter()
                        .zip(other.byte_strides.iter().zip(&op.byte_strides))
                        .all(|(&s, (a, b))| s == 1 || a == b);
                if !(disjoint || (identical && j >= num_outputs)) {
                    return Err(Error::MemoryOverlap {
                        message: format!("output {k} partially overlaps operand {j} in the same storage; unsupported operation (clone one of them first)"),
                    });
                }
            }
        }
    }
    let numel = usize::try_from(numel).map_err(|_| Error::overflow("plan numel"))?;
    let mut shape: SmallVec<[usize; 8]> = plan.shape.iter().map(|&s| s as usize).collect();
    let mut strides: SmallVec<[[isize; N]; 8]> = (0..nd)
        .map(|d| std::array::from_fn(|k| plan.operands[k].byte_strides[d] as isize))
        .collect();
    if nd == 0 {
        shape.push(1);
        strides.push([0; N]);
    }
    let base = std::array::from_fn(|k| {
        if numel == 0 {
            ops[k].ptr
        } else {
            // SAFETY: offset·element_size is inside the storage (checked above: lo ≤ start < hi ≤ bytes).
            unsafe {
                ops[k]
                    .ptr
                    .add((plan.operands[k].offset as usize) * plan.operands[k].element_size)
            }
        }
    });
    Ok(Prepared {
        shape,
        strides,
        base,
        numel,
    })
}

impl<const N: usize> Prepared<N> {
    /// Pointers at a multi-index.
    #[inline]
    pub(crate) fn ptrs_at(&self, idx: &[usize]) -> [*mut u8; N] {
        let mut p = self.base;
        for (d, &i) in idx.iter().enumerate() {
            for (pk, &st) in p.iter_mut().zip(&self.strides[d]) {
                // SAFETY: `idx` is inside `shape`, so by the `Prepared` invariant the result
                // stays inside the operand's storage (in-bounds offset).
                *pk = unsafe { pk.offset(i as isize * st) };
            }
        }
        p
    }

    /// Merges adjacent dims that every operand walks linearly (`stride[d+1] == stride[d] ·
    /// shape[d]`) and drops size-1 dims, so inner loops get the longest rows. The set of
    /// addresses visited and their order are unchanged, so the invariant still holds.
    pub(crate) fn coalesce(&mut self) {
        if self.numel == 0 {
            return;
        }
        let mut shape: SmallVec<[usize; 8]> = SmallVec::new();
        let mut strides: SmallVec<[[isize; N]; 8]> = SmallVec::new();
        for (&n, st) in self.shape.iter().zip(&self.strides) {
            if n == 1 {
                continue;
            }
            if let (Some(last_n), Some(last_st)) = (shape.last_mut(), strides.last()) {
                if (0..N).all(|k| st[k] == last_st[k] * *last_n as isize) {
                    *last_n *= n;
                    continue;
                }
            }
            shape.push(n);
            strides.push(*st);
        }
        if shape.is_empty() {
            shape.push(1);
            strides.push([0; N]);
        }
        self.shape = shape;
        self.strides = strides;
    }

    /// Runs `inner(ptrs, inner_strides, n)` over the linear range `[begin, end)` of the
    /// iteration space, in 2-D steps (PyTorch's DimCounter): the first step finishes the
    /// current row, then whole rows are done in one call per row of the second dimension.
    pub(crate) fn run_range<L>(&self, begin: usize, end: usize, inner: &L)
    where
        L: Fn(&[*mut u8; N], &[isize; N], usize),
    {
        let nd = self.shape.len();
        let mut idx: SmallVec<[usize; 8]> = SmallVec::from_elem(0, nd);
        let mut rem = begin;
        for d in 0..nd {
            idx[d] = rem % self.shape[d];
            rem /= self.shape[d];
        }
        let mut pos = begin;
        let s0 = self.strides[0];
        while pos < end {
            let left = end - pos;
            let n0 = (self.shape[0] - idx[0]).min(left);
            let n1 = if nd > 1 && idx[0] == 0 && n0 == self.shape[0] {
                (self.shape[1] - idx[1]).min(left / self.shape[0])
            } else {
                1
            };
            let p = self.ptrs_at(&idx);
            for j in 0..n1 {
                let pj: [*mut u8; N] = if j == 0 {
                    p
                } else {
                    // SAFETY: idx[1] + j < shape[1], still inside the iteration space.
                    std::array::from_fn(|k| unsafe { p[k].offset(j as isize * self.strides[1][k]) })
                };
                inner(&pj, &s0, n0);
            }
            let mut carry = n0 * n1;
            pos += carry;
            for d in 0..nd {
                if carry == 0 {
                    break;
                }
                let v = idx[d] + carry;
                idx[d] = v % self.shape[d];
                carry = v / self.shape[d];
            }
        }
    }

    /// Runs over the whole space: serially when it is below the grain size or there is one
    /// thread, otherwise as rayon tasks of at least `grain_size` elements.
    pub(crate) fn run<L>(&self, cfg: &ExecConfig, inner: &L)
    where
        L: Fn(&[*mut u8; N], &[isize; N], usize) + Sync,
    {
        self.run_then(cfg, inner, &|| {});
    }

    /// [`Prepared::run`], calling `after()` on the executing thread at the end of every range
    /// (e.g. a store fence after non-temporal stores, before the range's results are
    /// published to other threads by the rayon join).
    pub(crate) fn run_then<L, A>(&self, cfg: &ExecConfig, inner: &L, after: &A)
    where
        L: Fn(&[*mut u8; N], &[isize; N], usize) + Sync,
        A: Fn() + Sync,
    {
        let n = self.numel;
        if n == 0 {
            return;
        }
        let threads = rayon::current_num_threads();
        if n < 2 * cfg.grain() || threads <= 1 {
            self.run_range(0, n, inner);
            after();
            return;
        }
        let tasks = (n / cfg.grain()).min(threads * cfg.tasks()).max(1);
        let chunk = n.div_ceil(tasks);
        (0..tasks).into_par_iter().with_min_len(1).for_each(|t| {
            let b = t * chunk;
            let e = ((t + 1) * chunk).min(n);
            if b < e {
                self.run_range(b, e, inner);
            }
            after();
        });
    }
}
