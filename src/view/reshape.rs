//! `view`, `reshape`, `flatten`, `unflatten`: `-1` inference and c10's `computeStride`,
//! generic over [`Int`].
//!
//! # Deciding without guards
//!
//! c10's `computeStride` walks the old dimensions from the back in *chunks* (runs whose
//! strides chain, `stride[d-1] == size[d] * stride[d]`) and greedily assigns the new
//! dimensions to them. Over symbolic sizes each comparison is a potential guard. Three
//! things keep the common cases guard-free:
//!
//! * **Contiguous input.** When the strides are *structurally* the contiguous strides of
//!   the sizes (products of the sizes, or of `max(size, 1)`), the answer is known for every
//!   binding: the input's own strides for the same shape, else the contiguous strides of
//!   the new shape. A split `[b, s, h*d] -> [b, s, h, d]`, a merge, a `flatten` of a
//!   contiguous tensor record nothing.
//! * **Conjunctions decided as a whole.** A chunk boundary is `size[d-1] != 1 &&
//!   stride[d-1] != chunk_numel * base`; when the stride already chains (statically equal),
//!   the conjunction is false whatever the size, so no guard on `size == 1` is recorded.
//!   Dimensions whose strides chain are therefore merged without a guard once the sizes
//!   are known to be at least 2 (what PyTorch assumes of every backed symbol); with sizes
//!   that may be 0 or 1 the size-1 questions of c10's greedy walk are real and recorded.
//! * **Chunk sizes compared factor by factor.** When numel != 0 is known (every size is
//!   then `>= 1`), c10's comparisons of the new sizes' product with the chunk's
//!   (`view_numel < tensor_numel`, `!=`) cancel shared factors, divide exact monomial
//!   multiples (`s*e` by `e`), and are decided when the rest is 1 on one side and holds a
//!   size known to be `>= 2` on the other; interval arithmetic on the expanded products
//!   alone cannot see that `(s-1)*c > 1` for `s, c >= 2`.
//! * **Floor division and modulo.** `-1` inference divides the element count by the
//!   product of the other sizes. Once `product >= 1` holds (statically or by a recorded
//!   guard), [`SymInt`](crate::sym::SymInt)'s `//` and `%` divide monomials exactly
//!   (`(b*s*h*d) // (b*s*h) == d`, `(b*s*h*d) % (b*s*h) == 0`), so the divisibility check
//!   is decided, not guarded; otherwise the modulo atom carries the identities of the
//!   simplifier (`0 <= a % b < b` for `b >= 1`, `a == b*(a//b) + a%b`).
//!
//! Each remaining question goes through `guard_or_true`/`guard_or_false` exactly where
//! c10 uses `TORCH_GUARD_OR_TRUE`/`TORCH_GUARD_OR_FALSE`: backed symbols record a guard,
//! undecidable unbacked ones take the default that makes `view` fail and `reshape` copy,
//! never a wrong view.

use super::core::{list, wrap_dim, View};
use crate::layout;
use crate::{Bool, Error, Int, Result};
use std::cmp::Ordering;

/// The result of [`View::reshape`]: a view of the same storage, or (when no view can
/// express the new shape) a fresh contiguous tensor at offset 0 (`copied`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reshaped<I> {
    /// The resulting layout.
    pub view: View<I>,
    /// True when PyTorch copies (the result does not alias the input).
    pub copied: bool,
}

/// The PyTorch name of a shape with `-1`s (`[2, -1]`).
fn shape_str<I: Int>(shape: &[I]) -> String {
    list(shape)
}

/// Resolves one `-1` in `shape` so that its product is `numel` (ATen's `infer_size`),
/// with PyTorch's errors ([`Error::Shape`]).
pub fn infer_size<I: Int>(shape: &[I], numel: &I, op: &str) -> Result<Vec<I>> {
    infer_size_of(shape, std::slice::from_ref(numel), op)
}

/// Removes from `a` the factors of `b` it contains: a structurally equal factor, or one
/// that a factor of `a` is an exact multiple of (`s*e` by `e`, leaving `s`; only for
/// divisors known to be `>= 1`). Returns `a`'s rest and the factors of `b` not removed:
/// `([b, s, e], [8, b, s])` becomes `([e], [8])`. Constants are left to multiply.
fn cancel<I: Int>(a: &[I], b: &[I]) -> (Vec<I>, Vec<I>) {
    let mut a: Vec<I> = a.to_vec();
    let mut rest = Vec::new();
    for f in b {
        if f.as_const().is_some() {
            rest.push(f.clone());
            continue;
        }
        if let Some(k) = a.iter().position(|g| g.sym_eq(f).statically_known_true()) {
            a.remove(k);
            continue;
        }
        let divides = |g: &I| {
            let q = g.floor_div(f);
            (q.clone() * f.clone())
                .sym_eq(g)
                .statically_known_true()
                .then_some(q)
        };
        let hit = if f.ge_i(1).statically_known_true() {
            a.iter().enumerate().find_map(|(k, g)| {
                g.as_const()
                    .is_none()
                    .then(|| divides(g))
                    .flatten()
                    .map(|q| (k, q))
            })
        } else {
            None
        };
        match hit {
            Some((k, q)) => a[k] = q,
            None => rest.push(f.clone()),
        }
    }
    (a, rest)
}

/// [`cancel`] in both directions: what remains of `a` and of `b` once every factor one
/// side shares with (or divides in) the other is gone.
fn cancel_both<I: Int>(a: &[I], b: &[I]) -> (Vec<I>, Vec<I>) {
    let (a1, b1) = cancel(a, b);
    let (b2, a2) = cancel(&b1, &a1);
    (a2, b2)
}

/// [`infer_size`] for an element count given as a product of `factors` (the input's
/// sizes). Factors shared by the input and the new shape cancel before any modulo or
/// division is formed, which is exact once the new shape's known product is `>= 1` (then
/// every factor is `>= 1`): `numel % newsize == 0` becomes `e % 8 == 0` and the inferred
/// size `e // 8` instead of `(b*s*e) // (8*b*s)`.
pub(crate) fn infer_size_of<I: Int>(shape: &[I], factors: &[I], op: &str) -> Result<Vec<I>> {
    let numel = layout::numel(factors);
    let mut infer = None;
    for (i, s) in shape.iter().enumerate() {
        if s.as_const() == Some(-1) {
            if infer.is_some() {
                return Err(Error::Shape {
                    message: "only one dimension can be inferred".into(),
                });
            }
            infer = Some(i);
        } else if s.lt_i(0).guard(|| format!("{op}: size[{i}] = {s} < 0"))? {
            return Err(Error::Shape {
                message: format!(
                    "invalid shape dimension {s} at index {i} of shape {}",
                    shape_str(shape)
                ),
            });
        }
    }
    let known: Vec<I> = shape
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != infer)
        .map(|(_, s)| s.clone())
        .collect();
    layout::check_sizes(op, &known)?;
    let newsize = layout::numel(&known);
    let invalid = || Error::Shape {
        message: format!(
            "shape '{}' is invalid for input of size {numel}",
            shape_str(shape)
        ),
    };
    let mut out = shape.to_vec();
    match infer {
        None => {
            // Cancelling shared factors keeps `numel == newsize` equivalent when either
            // side is known to be non-zero (then the shared factors are non-zero).
            let nonzero =
                newsize.ne_i(0).statically_known_true() || numel.ne_i(0).statically_known_true();
            let (a, b) = if nonzero {
                let (a, b) = cancel(factors, &known);
                (layout::numel(&a), layout::numel(&b))
            } else {
                (numel.clone(), newsize.clone())
            };
            if !a
                .sym_eq(&b)
                .guard(|| format!("{op}: numel {numel} == product of sizes {newsize}"))?
            {
                return Err(invalid());
            }
        }
        Some(i) => {
            let positive = newsize.ge_i(1).guard(|| {
                format!("{op}: product of the other sizes {newsize} >= 1 (to infer size[{i}])")
            })?;
            if !positive {
                let empty = numel
                    .eq_i(0)
                    .guard(|| format!("{op}: numel {numel} == 0"))?;
                return Err(if empty {
                    Error::Shape {
                        message: format!(
                            "cannot reshape tensor of 0 elements into shape {} because the \
                             unspecified dimension size -1 can be any value and is ambiguous",
                            shape_str(shape)
                        ),
                    }
                } else {
                    invalid()
                });
            }
            let (a, b) = cancel(factors, &known);
            let (a, b) = (layout::numel(&a), layout::numel(&b));
            if b.as_const() != Some(1) {
                let rem = a.modulo(&b);
                if !rem.eq_i(0).guard(|| {
                    format!("{op}: {b} divides {a} (to infer size[{i}] of numel {numel})")
                })? {
                    return Err(invalid());
                }
            }
            out[i] = if b.as_const() == Some(1) {
                a
            } else {
                a.floor_div(&b)
            };
        }
    }
    Ok(out)
}

/// Decides `a && b` asking as little as possible: a conjunct that is statically false
/// decides it without a guard; otherwise `a` then `b` are asked in order with `ask`.
fn both<B: Bool>(a: &B, b: &B, ask: impl Fn(&B, u8) -> bool) -> bool {
    if a.statically_known() == Some(false) || b.statically_known() == Some(false) {
        return false;
    }
    ask(a, 0) && ask(b, 1)
}

/// Decides `a || b` asking as little as possible (see [`both`]).
fn either<B: Bool>(a: &B, b: &B, ask: impl Fn(&B, u8) -> bool) -> bool {
    if a.statically_known() == Some(true) || b.statically_known() == Some(true) {
        return true;
    }
    ask(a, 0) || ask(b, 1)
}

/// Compares two products of sizes that are all `>= 1` (the caller knows numel != 0) by
/// their factors, without any guard: shared factors cancel, constants multiply, and a
/// remaining size known to be `>= 2` makes its side larger. `None` when that does not
/// decide it (then the caller asks the products as a whole).
fn compare_products<I: Int>(v: &[I], t: &[I]) -> Option<Ordering> {
    let (t_rest, v_rest) = cancel_both(t, v);
    let split = |f: &[I]| {
        let mut c: i64 = 1;
        let mut sym = Vec::new();
        for x in f {
            match x.as_const() {
                Some(k) => c = c.checked_mul(k)?,
                None => sym.push(x.clone()),
            }
        }
        Some((c, sym))
    };
    let ((cv, sv), (ct, st)) = (split(&v_rest)?, split(&t_rest)?);
    let big = |f: &[I]| f.iter().any(|x| x.ge_i(2).statically_known_true());
    match (sv.is_empty(), st.is_empty()) {
        (true, true) => Some(cv.cmp(&ct)),
        (true, false) if cv < ct || (cv == ct && big(&st)) => Some(Ordering::Less),
        (false, true) if ct < cv || (ct == cv && big(&sv)) => Some(Ordering::Greater),
        _ => None,
    }
}

/// How the strides of a view are known to be contiguous, without any guard.
#[derive(Clone, Copy, PartialEq, Eq)]
enum KnownContiguous {
    /// Structurally products of `max(size, 1)` (c10's `contiguous_strides`).
    MaxForm,
    /// Structurally plain products of the sizes (equal to the above unless numel is 0).
    ProductForm,
    /// Not known.
    No,
}

/// Plain row-major products of the sizes (no `max(size, 1)`).
fn product_strides<I: Int>(sizes: &[I]) -> Vec<I> {
    let mut products = vec![I::from_i64(1); sizes.len()];
    for d in (0..sizes.len().saturating_sub(1)).rev() {
        products[d] = products[d + 1].clone() * sizes[d + 1].clone();
    }
    products
}

/// Whether `strides` are structurally the contiguous strides of `sizes`.
fn known_contiguous<I: Int>(sizes: &[I], strides: &[I]) -> KnownContiguous {
    let same = |expected: &[I]| {
        expected
            .iter()
            .zip(strides)
            .all(|(e, s)| e.sym_eq(s).statically_known_true())
    };
    if same(&layout::contiguous_strides(sizes)) {
        KnownContiguous::MaxForm
    } else if same(&product_strides(sizes)) {
        KnownContiguous::ProductForm
    } else {
        KnownContiguous::No
    }
}

/// c10's `computeStride`: the strides under which `new_sizes` views the same elements as
/// `(old_sizes, old_strides)`, or `None` when no view can (the element counts must already
/// agree). `op` names the caller in guard reasons.
pub fn compute_stride<I: Int>(
    old_sizes: &[I],
    old_strides: &[I],
    new_sizes: &[I],
    op: &str,
) -> Result<Option<Vec<I>>> {
    if old_sizes.is_empty() {
        return Ok(Some(vec![I::from_i64(1); new_sizes.len()]));
    }
    let same_shape = old_sizes.len() == new_sizes.len()
        && old_sizes
            .iter()
            .zip(new_sizes)
            .all(|(a, b)| a.sym_eq(b).statically_known_true());
    let numel = layout::numel(old_sizes);
    let nonzero = numel.ne_i(0).statically_known_true();
    // A statically contiguous input is decided for every binding (nothing is recorded):
    // c10 gives the input's strides for the same shape and otherwise the contiguous
    // strides of the new shape (plain products when numel != 0; `max(size, 1)` products
    // when numel == 0, where it also keeps the input strides of an equal shape).
    let known = known_contiguous(old_sizes, old_strides);
    if known != KnownContiguous::No {
        if same_shape {
            return Ok(Some(old_strides.to_vec()));
        }
        if nonzero {
            return Ok(Some(product_strides(new_sizes)));
        }
        if known == KnownContiguous::MaxForm {
            return Ok(Some(layout::contiguous_strides(new_sizes)));
        }
    }
    let zero_numel = numel
        .eq_i(0)
        .guard_or_false(|| format!("{op}: numel {numel} == 0"));
    if zero_numel {
        let equal = old_sizes.len() == new_sizes.len()
            && old_sizes
                .iter()
                .zip(new_sizes)
                .enumerate()
                .all(|(d, (a, b))| {
                    a.sym_eq(b)
                        .guard_or_false(|| format!("{op}: size[{d}] = {b} equals the input's {a}"))
                });
        if equal {
            return Ok(Some(old_strides.to_vec()));
        }
        return Ok(Some(layout::contiguous_strides(new_sizes)));
    }
    let n_new = new_sizes.len();
    let mut new_strides = vec![I::from_i64(0); n_new];
    let mut view_d = n_new as i64 - 1;
    let mut base = old_strides[old_sizes.len() - 1].clone();
    let mut tensor_numel = I::from_i64(1);
    let mut view_numel = I::from_i64(1);
    // The same products as lists of sizes, for deciding comparisons factor by factor.
    let mut tensor_factors: Vec<I> = Vec::new();
    let mut view_factors: Vec<I> = Vec::new();
    for tensor_d in (0..old_sizes.len()).rev() {
        tensor_numel = tensor_numel * old_sizes[tensor_d].clone();
        tensor_factors.push(old_sizes[tensor_d].clone());
        let chunk_end = tensor_d == 0 || {
            let size_not_one = old_sizes[tensor_d - 1].ne_i(1);
            let chained = tensor_numel.clone() * base.clone();
            let stride_breaks = old_strides[tensor_d - 1].sym_ne(&chained);
            both(&size_not_one, &stride_breaks, |c, k| {
                c.guard_or_true(|| match k {
                    0 => format!(
                        "{op}: input size[{}] = {} != 1 (chunk boundary)",
                        tensor_d - 1,
                        old_sizes[tensor_d - 1]
                    ),
                    _ => format!(
                        "{op}: input stride[{}] = {} breaks the chain {chained} (chunk boundary)",
                        tensor_d - 1,
                        old_strides[tensor_d - 1]
                    ),
                })
            })
        };
        if !chunk_end {
            continue;
        }
        while view_d >= 0 {
            let vd = view_d as usize;
            let below = match nonzero.then(|| compare_products(&view_factors, &tensor_factors)) {
                Some(Some(o)) => I::Bool::from_bool(o == Ordering::Less),
                _ => view_numel.sym_lt(&tensor_numel),
            };
            let unit = new_sizes[vd].eq_i(1);
            let take = either(&below, &unit, |c, k| {
                match k {
                0 => c.guard_or_true(|| {
                    format!(
                        "{op}: size[{vd}] = {} splits the input chunk of {tensor_numel} (stride {base})",
                        new_sizes[vd]
                    )
                }),
                _ => c.guard_or_false(|| format!("{op}: size[{vd}] = {} == 1", new_sizes[vd])),
            }
            });
            if !take {
                break;
            }
            new_strides[vd] = view_numel.clone() * base.clone();
            view_numel = view_numel * new_sizes[vd].clone();
            view_factors.push(new_sizes[vd].clone());
            view_d -= 1;
        }
        let differ = match nonzero.then(|| compare_products(&view_factors, &tensor_factors)) {
            Some(Some(o)) => I::Bool::from_bool(o != Ordering::Equal),
            _ => view_numel.sym_ne(&tensor_numel),
        };
        let mismatch = differ.guard_or_true(|| {
            format!(
                "{op}: sizes ending at dim {} cover the input chunk of {tensor_numel}",
                view_d + 1
            )
        });
        if mismatch {
            return Ok(None);
        }
        if tensor_d > 0 {
            base = old_strides[tensor_d - 1].clone();
            tensor_numel = I::from_i64(1);
            view_numel = I::from_i64(1);
            tensor_factors.clear();
            view_factors.clear();
        }
    }
    if view_d != -1 {
        return Ok(None);
    }
    Ok(Some(new_strides))
}

impl<I: Int> View<I> {
    /// `view(shape)` (one `-1` allowed): the same elements under new sizes, or
    /// [`Error::View`] when the strides cannot express it.
    pub fn view(&self, shape: &[I]) -> Result<Self> {
        let shape = infer_size_of(shape, self.sizes(), "view")?;
        match compute_stride(self.sizes(), self.strides(), &shape, "view")? {
            Some(strides) => View::derived(shape, strides, self.offset().clone(), "view"),
            None => Err(Error::View {
                message: "view size is not compatible with input tensor's size and stride (at \
                          least one dimension spans across two contiguous subspaces). Use \
                          .reshape(...) instead."
                    .into(),
            }),
        }
    }

    /// `reshape(shape)`: a view when one exists, else a contiguous copy (offset 0).
    pub fn reshape(&self, shape: &[I]) -> Result<Reshaped<I>> {
        self.reshape_as("reshape", shape)
    }

    fn reshape_as(&self, op: &str, shape: &[I]) -> Result<Reshaped<I>> {
        let shape = infer_size_of(shape, self.sizes(), op)?;
        Ok(
            match compute_stride(self.sizes(), self.strides(), &shape, op)? {
                Some(strides) => Reshaped {
                    view: View::derived(shape, strides, self.offset().clone(), op)?,
                    copied: false,
                },
                None => Reshaped {
                    view: View::contiguous(shape)?,
                    copied: true,
                },
            },
        )
    }

    /// `flatten(start, end)`: merges dims `start..=end` through `reshape` (so it may copy);
    /// a 0-d tensor becomes 1-d.
    pub fn flatten(&self, start: i64, end: i64) -> Result<Reshaped<I>> {
        let n = self.dim();
        let (s, e) = (wrap_dim(start, n)?, wrap_dim(end, n)?);
        if s > e {
            return Err(Error::invalid(
                "flatten() has invalid args: start_dim cannot come after end_dim",
            ));
        }
        if n == 0 {
            return self.reshape_as("flatten", &[I::from_i64(1)]);
        }
        if s == e {
            return Ok(Reshaped {
                view: self.clone(),
                copied: false,
            });
        }
        let merged = layout::numel(&self.sizes()[s..=e]);
        let mut shape = self.sizes()[..s].to_vec();
        shape.push(merged);
        shape.extend_from_slice(&self.sizes()[e + 1..]);
        self.reshape_as("flatten", &shape)
    }

    /// `unflatten(dim, sizes)`: splits one dimension into `sizes` (one `-1` allowed).
    pub fn unflatten(&self, dim: i64, sizes: &[I]) -> Result<Self> {
        let n = self.dim();
        let d = wrap_dim(dim, n)?;
        if sizes.is_empty() {
            return Err(Error::invalid("unflatten: sizes must be non-empty"));
        }
        if n == 0 {
            return Err(Error::Index {
                message: "unflatten got an unexpected error:\nDimension specified as 0 but \
                          tensor has no dimensions"
                    .into(),
            });
        }
        let inferred = infer_size(sizes, &self.sizes()[d], "unflatten").map_err(|e| match e {
            Error::Shape { message } if message.starts_with("shape '") => Error::Shape {
                message: format!(
                    "unflatten: Provided sizes {} don't multiply up to the size of dim {dim} ({}) \
                     in the input tensor",
                    list(sizes),
                    self.sizes()[d]
                ),
            },
            other => other,
        })?;
        let mut shape = self.sizes()[..d].to_vec();
        shape.extend(inferred);
        shape.extend_from_slice(&self.sizes()[d + 1..]);
        // The element count matches by construction (checked by `infer_size` above), so
        // PyTorch's re-check inside `view` is skipped: it could only record a guard the
        // divisibility guard already implies. Splitting one dim is always a view.
        match compute_stride(self.sizes(), self.strides(), &shape, "unflatten")? {
            Some(strides) => View::derived(shape, strides, self.offset().clone(), "unflatten"),
            None => self.view(&shape),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strided(sizes: &[i64], strides: &[i64]) -> View<i64> {
        View::new(sizes.to_vec(), strides.to_vec(), 0).unwrap()
    }

    #[test]
    fn infer_size_errors_match_pytorch() {
        assert_eq!(infer_size(&[2i64, -1], &6, "view").unwrap(), vec![2, 3]);
        let cat = |s: &[i64], n: i64| infer_size(s, &n, "view").unwrap_err().category();
        assert_eq!(cat(&[-1, -1], 6), "shape");
        assert_eq!(cat(&[-2, 3], 6), "shape");
        assert_eq!(cat(&[4, -1], 6), "shape");
        assert_eq!(cat(&[0, -1], 0), "shape");
        assert_eq!(cat(&[5], 6), "shape");
    }

    #[test]
    fn compute_stride_cases() {
        let x = strided(&[2, 3, 4], &[12, 4, 1]);
        let v = x.view(&[6, 4]).unwrap();
        assert_eq!(v.strides(), &[4, 1]);
        let t = x.transpose(0, 1).unwrap(); // [3, 2, 4] strides [4, 12, 1]
        assert_eq!(t.view(&[3, 8]).unwrap_err().category(), "view");
        let r = t.reshape(&[3, 8]).unwrap();
        assert!(r.copied);
        assert_eq!(r.view.strides(), &[8, 1]);
        let r = t.reshape(&[3, 2, 2, 2]).unwrap();
        assert!(!r.copied);
        assert_eq!(r.view.strides(), &[4, 12, 2, 1]);
        // size-1 dims at chunk ends take the chunk's stride, as in c10.
        let y = strided(&[6, 1], &[1, 100]);
        assert_eq!(y.view(&[6, 1]).unwrap().strides(), &[1, 100]);
        let z = strided(&[1, 2], &[7, 1]);
        assert_eq!(z.view(&[1, 2]).unwrap().strides(), &[2, 1]);
    }

    #[test]
    fn flatten_and_unflatten() {
        let x = strided(&[2, 3, 4], &[12, 4, 1]);
        let f = x.flatten(1, -1).unwrap();
        assert_eq!((f.view.sizes(), f.copied), (&[2, 12][..], false));
        assert!(x.flatten(2, 1).is_err());
        let u = x.unflatten(-1, &[2, -1]).unwrap();
        assert_eq!(
            (u.sizes(), u.strides()),
            (&[2, 3, 2, 2][..], &[12, 4, 2, 1][..])
        );
        assert_eq!(x.unflatten(0, &[3, -1]).unwrap_err().category(), "shape");
        assert_eq!(x.unflatten(0, &[]).unwrap_err().category(), "error");
    }
}
