//! The build steps, one function per step of PyTorch's `TensorIteratorBase::build`.
//!
//! Every decision goes through [`Bool::guard`] with a reason naming the step, the operand
//! (index in the operand list: outputs first, then inputs) and the dimension(s). Dimensions
//! named `dim` are in user order (the broadcast shape); `iteration dim` is a position after
//! `reorder_dimensions` (innermost first).

use super::config::{IterOptions, OutputSpec, TensorIteratorConfig, TensorSpec};
use super::overlap::{self, all_equal};
use super::plan::{OperandPlan, Plan};
use super::types::{self, Types};
use super::{fmt_dims, validate};
use crate::error::{Error, Result};
use crate::int::{Bool, Int};
use crate::layout;

/// One operand during the build (PyTorch's `OperandInfo`).
struct Operand<'a, I> {
    /// `None` for an undefined output (allocated by the build).
    tensor: Option<&'a TensorSpec<I>>,
    element_size: usize,
    is_output: bool,
    /// An output that is also passed as an input (in-place): never resized.
    is_read_write: bool,
    /// A given output whose sizes differ from the broadcast shape: re-strided like an
    /// undefined one.
    will_resize: bool,
    /// Byte strides over the broadcast dimensions; empty until `compute_strides` (and for
    /// operands that do not take part in it: undefined or resized outputs).
    byte_strides: Vec<I>,
}

impl<I> Operand<'_, I> {
    /// Defined and not to be resized: its strides take part in layout decisions.
    fn participates(&self) -> bool {
        self.tensor.is_some() && !self.will_resize
    }
}

/// PyTorch's `FastSetupType` (minus `NONE`, which is `Option::None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FastSetupType {
    Contiguous,
    ChannelsLast,
    NonOverlappingDense,
}

struct TensorIterator<'a, I> {
    options: &'a IterOptions,
    operands: Vec<Operand<'a, I>>,
    num_outputs: usize,
    /// The iteration shape: user order until `reorder_dimensions`, then innermost first.
    shape: Vec<I>,
    /// The broadcast shape (user order), fixed after `compute_shape`.
    broadcast_shape: Vec<I>,
    all_ops_same_shape: bool,
    perm: Vec<usize>,
    /// Element strides of every output in user order, filled by the output setup.
    output_strides: Vec<Vec<I>>,
}

/// Runs the whole build. See the module docs of [`crate::iter`].
pub(super) fn build<I: Int>(config: &TensorIteratorConfig<I>) -> Result<(Plan<I>, Option<Types>)> {
    if config.outputs_after_inputs {
        return Err(Error::invalid(
            "TensorIteratorConfig: all outputs must be added before any input",
        ));
    }
    // Copies of promoted inputs; declared first so the iterator may borrow them.
    let promoted: Vec<TensorSpec<I>>;
    let mut it = TensorIterator::populate_operands(config)?;
    it.mark_outputs();
    if it.options.check_mem_overlap {
        it.compute_mem_overlaps()?;
    }
    it.compute_shape()?;
    it.mark_resize_outputs()?;
    let types = match &config.types {
        Some(tc) => Some(it.compute_types(tc)?),
        None => None,
    };
    promoted = match &types {
        Some(t) => t
            .promoted_inputs
            .iter()
            .map(|&j| it.promoted_copy(j, t.dtypes[it.num_outputs + j]))
            .collect::<Result<Vec<_>>>()?,
        None => Vec::new(),
    };
    if let Some(t) = &types {
        for (&j, copy) in t.promoted_inputs.iter().zip(&promoted) {
            let op = &mut it.operands[it.num_outputs + j];
            op.tensor = Some(copy);
            op.element_size = copy.element_size;
        }
    }
    let max_es = it
        .operands
        .iter()
        .map(|o| o.element_size)
        .max()
        .unwrap_or(1);
    validate::validate_broadcast_shape(&it.shape, max_es)?;
    let canonical_empty = it.options.canonical_empty
        && !it.options.is_reduction
        && it.shape.iter().any(|s| s.as_const() == Some(0));
    // Past this point, a decision decides a layout only through an output this build
    // allocates (`fast_set_up`'s and `compute_perm`'s choice of its strides); with every
    // output given, and always for `coalesce_dimensions` (which runs after allocation),
    // decisions only choose how the kernel iterates: plan decisions (`Int::plan_scope`).
    let probe = if I::SYMBOLIC {
        it.symbolic_probe()
    } else {
        None
    };
    let allocates = (0..it.num_outputs).any(|i| !it.operands[i].participates());
    let coalesce = it.options.coalesce_dimensions && !canonical_empty;
    let iterate = |it: &mut TensorIterator<'_, I>| -> Result<()> {
        if !(it.options.allow_fast_setup && it.fast_set_up()?) {
            it.compute_strides()?;
            it.reorder_dimensions()?;
            it.allocate_or_resize_outputs()?;
            if coalesce {
                I::plan_scope(probe.as_ref(), || it.coalesce_dimensions())?;
            }
        }
        Ok(())
    };
    if allocates {
        iterate(&mut it)?;
    } else {
        I::plan_scope(probe.as_ref(), || iterate(&mut it))?;
    }
    let mut plan = it.into_plan();
    if canonical_empty {
        plan.canonicalize_empty();
    }
    Ok((plan, types))
}

/// A layout predicate in its two forms: branch-free (one condition) and branchy.
pub(super) struct Predicate<I: Int> {
    expr: fn(&[I], &[I]) -> Result<I::Bool>,
    branchy: fn(&[I], &[I]) -> Result<bool>,
}

impl<I: Int> Clone for Predicate<I> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<I: Int> Copy for Predicate<I> {}

impl<I: Int> Predicate<I> {
    pub(super) fn contiguous() -> Self {
        Predicate {
            expr: layout::contiguity_expr::<I>,
            branchy: layout::is_contiguous::<I>,
        }
    }
    pub(super) fn channels_last_2d() -> Self {
        Predicate {
            expr: layout::channels_last_contiguity_expr_2d::<I>,
            branchy: layout::is_channels_last_contiguous_2d::<I>,
        }
    }
    pub(super) fn non_overlapping_and_dense() -> Self {
        Predicate {
            expr: layout::non_overlapping_and_dense_expr::<I>,
            branchy: layout::is_non_overlapping_and_dense::<I>,
        }
    }
}

/// Decides a layout predicate of one tensor with a single guard on its branch-free
/// condition, so the reason names the step and operand and the guard is exactly the
/// predicate (not one path through it). A condition too large for the symbolic engine
/// ([`Error::Limit`]) falls back to the branchy predicate, whose guards carry the layout
/// module's reasons. All-constant layouts (the concrete path) take the short-circuiting
/// branchy form directly: nothing is recorded either way, and it is cheaper.
pub(super) fn decide_layout<I: Int>(
    t: &TensorSpec<I>,
    p: Predicate<I>,
    why: impl FnOnce() -> String,
) -> Result<bool> {
    let constant = |v: &[I]| v.iter().all(|x| x.as_const().is_some());
    if constant(&t.sizes) && constant(&t.strides) {
        return (p.branchy)(&t.sizes, &t.strides);
    }
    match (p.expr)(&t.sizes, &t.strides)?.guard(why) {
        Err(Error::Limit { .. }) => (p.branchy)(&t.sizes, &t.strides),
        r => r,
    }
}

/// `a == b` as lists (rank and every size), decided with one guard.
fn sizes_equal<I: Int>(a: &[I], b: &[I], why: impl FnOnce() -> String) -> Result<bool> {
    if a.len() != b.len() {
        return Ok(false);
    }
    all_equal(a, b).guard(why)
}

impl<'a, I: Int> TensorIterator<'a, I> {
    fn name(&self, k: usize) -> OperandName {
        operand_name(k, self.num_outputs)
    }

    /// `populate_operands`: outputs first, then inputs; validates each given tensor.
    fn populate_operands(config: &'a TensorIteratorConfig<I>) -> Result<Self> {
        let num_outputs = config.outputs.len();
        let mut operands = Vec::with_capacity(num_outputs + config.inputs.len());
        for (i, out) in config.outputs.iter().enumerate() {
            let name = operand_name(i, num_outputs);
            let (tensor, element_size) = match out {
                OutputSpec::Given(t) => {
                    validate::validate_operand(name, t)?;
                    (Some(t), t.element_size)
                }
                OutputSpec::Undefined { element_size } => {
                    validate::validate_element_size(name, *element_size)?;
                    (None, *element_size)
                }
            };
            operands.push(Operand {
                tensor,
                element_size,
                is_output: true,
                is_read_write: false,
                will_resize: false,
                byte_strides: Vec::new(),
            });
        }
        for (j, t) in config.inputs.iter().enumerate() {
            validate::validate_operand(operand_name(num_outputs + j, num_outputs), t)?;
            operands.push(Operand {
                tensor: Some(t),
                element_size: t.element_size,
                is_output: false,
                is_read_write: false,
                will_resize: false,
                byte_strides: Vec::new(),
            });
        }
        Ok(TensorIterator {
            options: &config.options,
            operands,
            num_outputs,
            shape: Vec::new(),
            broadcast_shape: Vec::new(),
            all_ops_same_shape: true,
            perm: Vec::new(),
            output_strides: vec![Vec::new(); num_outputs],
        })
    }

    /// `mark_outputs`: an output that is the very same view as an input (same storage, offset,
    /// sizes, strides and element size, known without guards) is read-write (in-place).
    fn mark_outputs(&mut self) {
        for i in 0..self.num_outputs {
            let Some(out) = self.operands[i].tensor else {
                continue;
            };
            let same = self.operands[self.num_outputs..]
                .iter()
                .filter_map(|op| op.tensor)
                .any(|inp| is_same(out, inp));
            self.operands[i].is_read_write = same;
        }
    }

    /// `compute_mem_overlaps`: see [`super::overlap`].
    fn compute_mem_overlaps(&self) -> Result<()> {
        for i in 0..self.num_outputs {
            let Some(out) = self.operands[i].tensor else {
                continue;
            };
            let out_name = self.name(i);
            overlap::assert_no_internal_overlap(out_name, out)?;
            for j in self.num_outputs..self.operands.len() {
                let Some(inp) = self.operands[j].tensor else {
                    continue;
                };
                if !is_same(out, inp) {
                    overlap::assert_no_partial_overlap((&out_name, out), (self.name(j), inp))?;
                }
            }
        }
        Ok(())
    }

    /// `compute_shape`: broadcast the sizes of all defined operands (outputs excluded when
    /// they may be resized), tracking whether they all had the same shape.
    fn compute_shape(&mut self) -> Result<()> {
        let mut shape: Vec<I> = Vec::new();
        let (mut has_scalars, mut has_tensors) = (false, false);
        for k in 0..self.operands.len() {
            let op = &self.operands[k];
            let Some(t) = op.tensor else { continue };
            if self.options.resize_outputs && op.is_output {
                continue;
            }
            if t.sizes.is_empty() {
                has_scalars = true;
            } else {
                has_tensors = true;
            }
            if has_scalars && has_tensors {
                self.all_ops_same_shape = false;
            }
            if shape.is_empty() {
                shape = t.sizes.clone();
            } else if !sizes_equal(&t.sizes, &shape, || {
                format!(
                    "compute_shape: {} sizes {} equal the broadcast shape so far {}",
                    self.name(k),
                    fmt_dims(&t.sizes),
                    fmt_dims(&shape)
                )
            })? {
                self.all_ops_same_shape = false;
                shape = layout::infer_size(&[&shape, &t.sizes])?;
            }
            if self.options.check_all_same_shape && !self.all_ops_same_shape {
                return Err(Error::invalid(format!(
                    "check_all_same_shape: {} has sizes {}, which differ from the other operands' {}",
                    self.name(k),
                    fmt_dims(&t.sizes),
                    fmt_dims(&shape)
                )));
            }
        }
        self.broadcast_shape = shape.clone();
        self.shape = shape;
        Ok(())
    }

    /// `mark_resize_outputs`: a given output whose sizes differ from the broadcast shape is
    /// resized when allowed (`resize_outputs` and not read-write), otherwise rejected.
    fn mark_resize_outputs(&mut self) -> Result<()> {
        for i in 0..self.num_outputs {
            let Some(out) = self.operands[i].tensor else {
                continue;
            };
            if sizes_equal(&out.sizes, &self.shape, || {
                format!(
                    "mark_resize_outputs: {} sizes {} equal the broadcast shape {}",
                    self.name(i),
                    fmt_dims(&out.sizes),
                    fmt_dims(&self.shape)
                )
            })? {
                continue;
            }
            if self.options.resize_outputs && !self.operands[i].is_read_write {
                self.operands[i].will_resize = true;
            } else {
                return Err(Error::Shape {
                    message: format!(
                        "{} with shape {} doesn't match the broadcast shape {}",
                        self.name(i),
                        fmt_dims(&out.sizes),
                        fmt_dims(&self.shape)
                    ),
                });
            }
        }
        Ok(())
    }

    /// `compute_types` (see [`super::types`]): decides the common dtype and the dtypes of
    /// allocated outputs, whose element sizes follow.
    fn compute_types(&mut self, tc: &types::TypeConfig) -> Result<Types> {
        let mut slots = Vec::with_capacity(self.operands.len());
        for (k, op) in self.operands.iter().enumerate() {
            let dtype = match op.tensor {
                Some(t) => {
                    let name = operand_name(k, self.num_outputs);
                    let d = t.dtype.ok_or_else(|| {
                        Error::invalid(format!("compute_types: {name} has no dtype"))
                    })?;
                    if d.element_size() != t.element_size {
                        return Err(Error::invalid(format!(
                            "compute_types: {name} is {d} ({} bytes) but has element size {}",
                            d.element_size(),
                            t.element_size
                        )));
                    }
                    Some(d)
                }
                None => None,
            };
            slots.push(types::Slot {
                dtype,
                is_output: op.is_output,
                zero_dim: op.tensor.is_some_and(|t| t.sizes.is_empty()),
                wrapped_number: op.tensor.is_some_and(|t| t.wrapped_number),
            });
        }
        let types = types::compute_types(&slots, tc)?;
        for (op, d) in self.operands.iter_mut().zip(&types.dtypes) {
            if op.tensor.is_none() {
                op.element_size = d.element_size();
            }
        }
        Ok(types)
    }

    /// The copy `t.to(dtype)` of input `j` that the CPU path iterates instead of the input:
    /// `empty_like` strides, offset 0, a storage of its own.
    fn promoted_copy(&self, j: usize, dtype: crate::DType) -> Result<TensorSpec<I>> {
        let t = self.operands[self.num_outputs + j]
            .tensor
            .ok_or_else(|| Error::invalid("compute_types: undefined input"))?;
        let strides = layout::empty_like_strides(&t.sizes, &t.strides)?;
        Ok(TensorSpec {
            wrapped_number: t.wrapped_number,
            ..TensorSpec::typed(t.sizes.clone(), strides, dtype)
        })
    }

    /// `compute_fast_setup_type`: all operands of one shape and all contiguous, or all
    /// channels-last, or all non-overlapping-and-dense with identical strides. Each property
    /// is evaluated lazily (stopping at the first operand that lacks it), which decides the
    /// same as PyTorch's eager `&=` but records only the guards the answer needed.
    fn compute_fast_setup_type(&self) -> Result<Option<FastSetupType>> {
        if self.options.is_reduction || !self.all_ops_same_shape {
            return Ok(None);
        }
        let parts: Vec<(usize, &TensorSpec<I>)> = self
            .operands
            .iter()
            .enumerate()
            .filter(|(_, o)| o.participates())
            .filter_map(|(k, o)| o.tensor.map(|t| (k, t)))
            .collect();
        let all = |what: &str, p: Predicate<I>| -> Result<bool> {
            for &(k, t) in &parts {
                if !decide_layout(t, p, || format!("fast_setup: {} is {what}", self.name(k)))? {
                    return Ok(false);
                }
            }
            Ok(true)
        };
        let contiguous = all("contiguous", Predicate::contiguous())?;
        if self.options.enforce_linear_iteration || contiguous {
            return Ok(contiguous.then_some(FastSetupType::Contiguous));
        }
        if all("channels-last contiguous", Predicate::channels_last_2d())? {
            return Ok(Some(FastSetupType::ChannelsLast));
        }
        if all(
            "non-overlapping and dense",
            Predicate::non_overlapping_and_dense(),
        )? {
            // Same strides everywhere, compared against the last operand (as PyTorch does).
            if let Some(((kl, last), rest)) = parts.split_last() {
                for &(k, t) in rest.iter().rev() {
                    if !all_equal(&t.strides, &last.strides).guard(|| {
                        format!(
                            "fast_setup: {} strides {} equal strides {} of {}",
                            self.name(k),
                            fmt_dims(&t.strides),
                            fmt_dims(&last.strides),
                            self.name(*kl)
                        )
                    })? {
                        return Ok(None);
                    }
                }
            }
            return Ok(Some(FastSetupType::NonOverlappingDense));
        }
        Ok(None)
    }

    /// `fast_set_up`: when every operand shares one dense layout, outputs take that layout and
    /// the iteration is a single dimension of `numel` elements with stride = element size.
    fn fast_set_up(&mut self) -> Result<bool> {
        let Some(kind) = self.compute_fast_setup_type()? else {
            return Ok(false);
        };
        let nd = self.shape.len();
        for i in 0..self.num_outputs {
            let op = &self.operands[i];
            self.output_strides[i] = match (op.participates(), op.tensor) {
                (true, Some(t)) => t.strides.clone(),
                _ => match kind {
                    FastSetupType::Contiguous => {
                        checked_contiguous_strides(&self.shape, operand_name(i, self.num_outputs))?
                    }
                    FastSetupType::ChannelsLast => layout::channels_last_strides_2d(&self.shape)?,
                    FastSetupType::NonOverlappingDense => {
                        // PyTorch copies the strides of the last defined operand.
                        let last = self.operands.iter().rev().find(|o| o.participates());
                        match last.and_then(|o| o.tensor) {
                            Some(t) => t.strides.clone(),
                            None => checked_contiguous_strides(
                                &self.shape,
                                operand_name(i, self.num_outputs),
                            )?,
                        }
                    }
                },
            };
        }
        let numel = self
            .shape
            .iter()
            .fold(I::from_i64(1), |acc, s| acc * s.clone());
        self.perm = (0..nd).collect();
        if nd >= 1 {
            self.shape = vec![numel];
        }
        for op in &mut self.operands {
            op.byte_strides = if nd >= 1 {
                vec![I::from_i64(op.element_size as i64)]
            } else {
                Vec::new()
            };
        }
        Ok(true)
    }

    /// `compute_strides`: byte strides of every participating operand over the broadcast
    /// dimensions; 0 on dimensions it is broadcast along (size 1 against a larger size, or
    /// missing leading dimensions). A size-1 dimension that is also 1 in the broadcast shape
    /// keeps its stride: these "effective strides" still steer `reorder_dimensions`.
    fn compute_strides(&mut self) -> Result<()> {
        let nd = self.shape.len();
        for k in 0..self.operands.len() {
            let op = &self.operands[k];
            if !op.participates() {
                continue;
            }
            let Some(t) = op.tensor else { continue };
            let es = I::from_i64(op.element_size as i64);
            let offset = nd - t.ndim();
            let mut byte_strides = vec![I::from_i64(0); nd];
            for (i, (size, stride)) in t.sizes.iter().zip(&t.strides).enumerate() {
                let full = &self.shape[offset + i];
                let broadcast = if size.sym_eq(full).statically_known_true() {
                    false
                } else {
                    size.eq_i(1).and(&full.ne_i(1)).guard(|| {
                        format!(
                            "compute_strides: {} dim {} (own dim {i}): size {size} broadcast to {full}",
                            operand_name(k, self.num_outputs),
                            offset + i
                        )
                    })?
                };
                if !broadcast {
                    byte_strides[offset + i] = stride.clone() * es.clone();
                }
            }
            self.operands[k].byte_strides = byte_strides;
        }
        Ok(())
    }

    /// PyTorch's `should_swap`: `1` if `dim0` should come after `dim1` (iterate faster), `-1`
    /// if before, `0` if no operand decides (ambiguous). Operands are consulted in order
    /// (outputs first; undefined and resized outputs skipped); a broadcast (stride 0) dimension
    /// defers to the next operand; equal strides are broken by size when the first is larger,
    /// else deferred too.
    fn should_swap(&self, dim0: usize, dim1: usize) -> Result<i8> {
        for (k, op) in self.operands.iter().enumerate() {
            if op.byte_strides.is_empty() || op.will_resize {
                continue;
            }
            let (s0, s1) = (&op.byte_strides[dim0], &op.byte_strides[dim1]);
            if self.options.is_reduction && op.is_output {
                // Reduced dimensions (stride 0 in the output view) go innermost.
                let (z0, z1) = (s0.eq_i(0), s1.eq_i(0));
                if z0.and(&z1.not()).or(&z1.and(&z0.not())).guard(|| {
                    format!("compute_perm: reduction output {k} dims {dim0},{dim1}: exactly one byte stride is 0 ({s0}, {s1})")
                })? {
                    let reduced1 = z1.guard(|| {
                        format!("compute_perm: reduction output {k} dim {dim1}: byte stride {s1} == 0")
                    })?;
                    return Ok(if reduced1 { 1 } else { -1 });
                }
            }
            if s0.eq_i(0).or(&s1.eq_i(0)).guard(|| {
                format!(
                    "compute_perm: {} dims {dim0},{dim1}: a byte stride is 0 ({s0}, {s1})",
                    self.name(k)
                )
            })? {
                continue;
            }
            if s0.sym_lt(s1).guard(|| {
                format!(
                    "compute_perm: {} dims {dim0},{dim1}: byte stride {s0} < {s1}",
                    self.name(k)
                )
            })? {
                return Ok(-1);
            }
            if s0.sym_gt(s1).guard(|| {
                format!(
                    "compute_perm: {} dims {dim0},{dim1}: byte stride {s0} > {s1}",
                    self.name(k)
                )
            })? {
                return Ok(1);
            }
            let (z0, z1) = (&self.shape[dim0], &self.shape[dim1]);
            if z0.sym_gt(z1).guard(|| {
                format!(
                    "compute_perm: {} dims {dim0},{dim1}: equal strides, size {z0} > {z1}",
                    self.name(k)
                )
            })? {
                return Ok(1);
            }
        }
        Ok(0)
    }

    /// The first symbolic integer among the shape and the operands' layouts (the
    /// environment a [`Int::plan_scope`] enters), `None` when all are constants.
    fn symbolic_probe(&self) -> Option<I> {
        let tensors = self.operands.iter().filter_map(|o| o.tensor);
        self.shape
            .iter()
            .chain(tensors.flat_map(|t| t.sizes.iter().chain(&t.strides).chain([&t.storage_offset])))
            .find(|x| x.as_const().is_none())
            .cloned()
    }

    /// `compute_perm`: insertion sort of the dimensions (starting from reversed user order)
    /// with the ambiguous comparator [`Self::should_swap`]: an ambiguous comparison neither
    /// swaps nor stops, so the element keeps moving left past dimensions nobody orders.
    fn compute_perm(&self) -> Result<Vec<usize>> {
        let nd = self.shape.len();
        let mut perm: Vec<usize> = (0..nd).rev().collect();
        if nd <= 1 || self.options.enforce_linear_iteration {
            return Ok(perm);
        }
        for i in 1..nd {
            let mut dim1 = i;
            for dim0 in (0..i).rev() {
                match self.should_swap(perm[dim0], perm[dim1])? {
                    c if c > 0 => {
                        perm.swap(dim0, dim1);
                        dim1 = dim0;
                    }
                    c if c < 0 => break,
                    _ => {}
                }
            }
        }
        Ok(perm)
    }

    /// `reorder_dimensions`: compute the permutation and apply it to the shape and every
    /// operand's strides, so iteration dimension 0 is the fastest-moving one.
    fn reorder_dimensions(&mut self) -> Result<()> {
        self.perm = self.compute_perm()?;
        let perm = &self.perm;
        // In place through a stack scratch buffer: no allocation per operand.
        let reorder = |v: &mut Vec<I>| {
            let tmp: smallvec::SmallVec<[I; 8]> = perm.iter().map(|&p| v[p].clone()).collect();
            v.clear();
            v.extend(tmp);
        };
        reorder(&mut self.shape);
        for op in &mut self.operands {
            if !op.byte_strides.is_empty() {
                reorder(&mut op.byte_strides);
            }
        }
        Ok(())
    }

    /// PyTorch's `invert_perm`: from iteration order back to user order.
    fn invert_perm(&self, v: &[I]) -> Vec<I> {
        let mut res = vec![I::from_i64(0); v.len()];
        for (d, &p) in self.perm.iter().enumerate() {
            res[p] = v[d].clone();
        }
        res
    }

    /// `allocate_or_resize_outputs`: undefined and resized outputs get dense strides laid out
    /// in iteration order (so the kernel writes them linearly and their layout follows the
    /// inputs'), expressed back in user order; given outputs keep their strides. When the
    /// permutation is the plain reversal PyTorch allocates with `empty` (contiguous strides).
    ///
    /// The broadcast shape's partial products are bounded by no single operand's validation
    /// (with a size-0 dimension the element count is 0 while the other sizes may multiply
    /// past i64), so every stride is a checked product: PyTorch's value when it fits, else
    /// [`Error::Overflow`] (PyTorch computes these byte strides in wrapping `int64_t` and
    /// answers garbage there), identically on the concrete and the symbolic path.
    fn allocate_or_resize_outputs(&mut self) -> Result<()> {
        let nd = self.shape.len();
        let inverted = self.perm.iter().enumerate().all(|(j, &p)| p == nd - 1 - j);
        for i in 0..self.num_outputs {
            if self.operands[i].participates() {
                if let Some(t) = self.operands[i].tensor {
                    self.output_strides[i] = t.strides.clone();
                }
                continue;
            }
            let name = self.name(i);
            let es = I::from_i64(self.operands[i].element_size as i64);
            // compatible_stride, in elements, then in bytes.
            let mut compat = Vec::with_capacity(nd);
            let mut byte_strides = Vec::with_capacity(nd);
            for d in 0..nd {
                let next = match compat.last() {
                    None => I::from_i64(1),
                    Some(prev) => self.shape[d - 1].checked_mul(prev, || {
                        format!("{name}: allocated stride of iteration dim {d}")
                    })?,
                };
                byte_strides.push(es.checked_mul(&next, || {
                    format!("{name}: allocated byte stride of iteration dim {d}")
                })?);
                compat.push(next);
            }
            self.output_strides[i] = if inverted {
                checked_contiguous_strides(&self.broadcast_shape, name)?
            } else {
                self.invert_perm(&compat)
            };
            self.operands[i].byte_strides = byte_strides;
        }
        Ok(())
    }

    /// `coalesce_dimensions` ([`coalesce`]) over every operand's byte strides.
    fn coalesce_dimensions(&mut self) -> Result<()> {
        let mut strides: smallvec::SmallVec<[&mut Vec<I>; 4]> =
            self.operands.iter_mut().map(|op| &mut op.byte_strides).collect();
        coalesce(&mut self.shape, &mut strides, &self.perm)
    }

    fn into_plan(self) -> Plan<I> {
        let operands = self
            .operands
            .into_iter()
            .map(|op| OperandPlan {
                offset: op
                    .tensor
                    .map_or_else(|| I::from_i64(0), |t| t.storage_offset.clone()),
                byte_strides: op.byte_strides,
                element_size: op.element_size,
                is_output: op.is_output,
            })
            .collect();
        Plan {
            shape: self.shape,
            operands,
            num_outputs: self.num_outputs,
            broadcast_shape: self.broadcast_shape,
            output_strides: self.output_strides,
            perm: self.perm,
        }
    }
}

/// `torch.empty(shape)` strides (products of `max(size, 1)`, c10's `contiguous_strides`),
/// checked: c10 refuses with "Stride calculation overflowed" where this is
/// [`Error::Overflow`].
fn checked_contiguous_strides<I: Int>(shape: &[I], name: OperandName) -> Result<Vec<I>> {
    let one = I::from_i64(1);
    let mut strides = vec![one.clone(); shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1].checked_mul(&shape[d + 1].max(&one), || {
            format!("{name}: contiguous stride of dim {d}")
        })?;
    }
    Ok(strides)
}

/// "output i" / "input j" for operand `k`, formatted only when an error message needs it
/// (the build runs per op call; eager `String`s were ~10% of a small op).
fn operand_name(k: usize, num_outputs: usize) -> OperandName {
    OperandName { k, num_outputs }
}

/// The display name of an operand ("output i" / "input j").
#[derive(Clone, Copy, Debug)]
pub(super) struct OperandName {
    k: usize,
    num_outputs: usize,
}

impl std::fmt::Display for OperandName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.k < self.num_outputs {
            write!(f, "output {}", self.k)
        } else {
            write!(f, "input {}", self.k - self.num_outputs)
        }
    }
}

/// PyTorch's `is_same`: the same tensor object when both carry a tensor id; otherwise, for
/// views without identity, the same storage and, statically (no guard), the same offset,
/// element size, sizes and strides.
fn is_same<I: Int>(a: &TensorSpec<I>, b: &TensorSpec<I>) -> bool {
    if let (Some(x), Some(y)) = (a.tensor_id, b.tensor_id) {
        return x == y;
    }
    match (&a.storage, &b.storage) {
        (Some(x), Some(y)) if x.id == y.id => {}
        _ => return false,
    }
    a.element_size == b.element_size
        && a.storage_offset
            .sym_eq(&b.storage_offset)
            .statically_known_true()
        && all_equal(&a.sizes, &b.sizes).statically_known_true()
        && all_equal(&a.strides, &b.strides).statically_known_true()
}

/// PyTorch's `coalesce_dimensions`: merges adjacent iteration dimensions (innermost first)
/// when either has size 1 or `shape[d0] * stride[d0] == stride[d1]` holds for every
/// operand's byte strides. `perm` (the user dimension at each iteration position) only
/// names the dimensions in the guards' reasons.
///
/// Written once for the build and for a plan coalesced again
/// ([`Plan::coalesce`](crate::iter::Plan::coalesce)): a specialization that an
/// ahead-of-time cover widened to bindings where some of its dimensions have size 1 is
/// instantiated and coalesced again, which gives the fresh build's plan there.
pub(crate) fn coalesce<I: Int>(
    shape: &mut Vec<I>,
    strides: &mut [&mut Vec<I>],
    perm: &[usize],
) -> Result<()> {
    let nd = shape.len();
    if nd <= 1 {
        return Ok(());
    }
    let nops = strides.len();
    let replace_stride = |strides: &mut [&mut Vec<I>], d0: usize, d1: usize| {
        for s in strides.iter_mut() {
            s[d0] = s[d1].clone();
        }
    };
    let mut prev = 0usize;
    for dim in 1..nd {
        let (z0, z1) = (&shape[prev], &shape[dim]);
        let chain = strides.iter().fold(I::Bool::from_bool(true), |acc, s| {
            acc.and(&z0.mul_eq(&s[prev], &s[dim]))
        });
        let user_dim = perm.get(dim).copied().unwrap_or(dim);
        let can = z0.eq_i(1).or(&z1.eq_i(1)).or(&chain).guard(|| {
            format!(
                "coalesce_dimensions: iteration dim {dim} (user dim {user_dim}) merges into iteration dim {prev}: a size is 1 ({z0}, {z1}) or size*stride == next stride for all {nops} operands"
            )
        })?;
        if can {
            if z0.eq_i(1).guard(|| {
                format!("coalesce_dimensions: iteration dim {prev} has size {z0} == 1 (takes the strides of iteration dim {dim}, user dim {user_dim})")
            })? {
                replace_stride(strides, prev, dim);
            }
            shape[prev] = shape[prev].checked_mul(&shape[dim], || {
                format!("coalesce_dimensions: size of iteration dims {prev}..={dim} merged")
            })?;
        } else {
            prev += 1;
            if prev != dim {
                replace_stride(strides, prev, dim);
                shape[prev] = shape[dim].clone();
            }
        }
    }
    shape.truncate(prev + 1);
    for s in strides.iter_mut() {
        s.truncate(prev + 1);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(inputs: &[(Vec<i64>, Vec<i64>)], options: IterOptions) -> Plan<i64> {
        let mut c = TensorIteratorConfig::new()
            .options(options)
            .add_undefined_output(4);
        for (s, t) in inputs {
            c = c.add_input(TensorSpec::new(s.clone(), t.clone(), 4));
        }
        c.build().unwrap()
    }

    fn general() -> IterOptions {
        IterOptions {
            allow_fast_setup: false,
            ..Default::default()
        }
    }

    /// `canonical_empty` changes only the iteration part of an empty plan: the broadcast
    /// shape and output strides are PyTorch's (the default build's), nothing is iterated,
    /// and a non-empty plan is untouched.
    #[test]
    fn canonical_empty_plans_keep_the_output_layout() {
        let canonical = IterOptions {
            canonical_empty: true,
            ..Default::default()
        };
        let cases: [&[(Vec<i64>, Vec<i64>)]; 4] = [
            &[(vec![0, 1, 4, 5], vec![20, 20, 5, 1]), (vec![1, 1, 1], vec![1, 1, 1])],
            &[(vec![2, 0, 3], vec![1, 6, 2]), (vec![1, 3], vec![3, 1])],
            &[(vec![3, 1, 0], vec![1, 3, 3]), (vec![3, 4, 1], vec![4, 1, 1])],
            &[(vec![2, 3], vec![3, 1]), (vec![3], vec![1])],
        ];
        for inputs in cases {
            let base = plan(inputs, IterOptions::default());
            let p = plan(inputs, canonical.clone());
            assert_eq!(p.broadcast_shape, base.broadcast_shape);
            assert_eq!(p.output_strides, base.output_strides);
            if base.broadcast_shape.contains(&0) {
                assert_eq!(p.shape, vec![0]);
                assert_eq!(p.numel(), 0);
                assert!(p.operands.iter().all(|o| o.byte_strides == vec![0]));
            } else {
                assert_eq!(p, base);
            }
        }
    }

    #[test]
    fn fully_ambiguous_comparisons_keep_reversed_order() {
        // Every stride is 0 (a broadcast scalar): nothing orders the dims.
        let p = plan(
            &[(vec![], vec![]), (vec![2, 3, 4], vec![0, 0, 0])],
            general(),
        );
        assert_eq!(p.perm, vec![2, 1, 0]);
        assert_eq!(p.output_strides[0], vec![12, 4, 1]);
    }

    #[test]
    fn first_operand_decides_and_later_ones_break_ties() {
        // The first operand is transposed, the second row-major: the first wins.
        let p = plan(
            &[(vec![4, 5], vec![1, 4]), (vec![4, 5], vec![5, 1])],
            general(),
        );
        assert_eq!(p.output_strides[0], vec![1, 4]);
        let p = plan(
            &[(vec![4, 5], vec![5, 1]), (vec![4, 5], vec![1, 4])],
            general(),
        );
        assert_eq!(p.output_strides[0], vec![5, 1]);
        // A fully broadcast first operand is ambiguous everywhere: the transposed second decides.
        let t = (vec![4, 5], vec![1, 4]);
        let c = (vec![4, 5], vec![0, 0]);
        let p = plan(&[c, t], general());
        assert_eq!(p.perm, vec![0, 1]);
        assert_eq!(p.output_strides[0], vec![1, 4]);
    }

    #[test]
    fn equal_strides_are_broken_by_size() {
        // Dims 0 and 1 both have stride 1 in the input (an overlapping view): the larger dim
        // goes outside.
        let p = plan(&[(vec![3, 2], vec![1, 1])], general());
        assert_eq!(p.perm, vec![1, 0]);
        let p = plan(&[(vec![2, 3], vec![1, 1])], general());
        assert_eq!(p.perm, vec![0, 1]);
    }

    #[test]
    fn coalescing_merges_contiguous_runs_and_size_one_dims() {
        let p = plan(&[(vec![2, 1, 3, 4], vec![12, 7, 4, 1])], general());
        assert_eq!(p.shape, vec![24]);
        assert_eq!(p.operands[1].byte_strides, vec![4]);
        // A gap (row stride 5 for rows of 4) prevents merging the two dims.
        let p = plan(&[(vec![3, 4], vec![5, 1])], general());
        assert_eq!(p.shape, vec![4, 3]);
        assert_eq!(p.operands[1].byte_strides, vec![4, 20]);
        assert_eq!(p.operands[0].byte_strides, vec![4, 16]);
    }

    #[test]
    fn fast_setup_collapses_to_one_dimension() {
        let p = plan(
            &[(vec![2, 3], vec![3, 1]), (vec![2, 3], vec![3, 1])],
            IterOptions::default(),
        );
        assert_eq!(p.shape, vec![6]);
        assert_eq!(p.perm, vec![0, 1]);
        assert!(p.operands.iter().all(|o| o.byte_strides == vec![4]));
        // Non-overlapping-and-dense with equal (transposed) strides: output copies them.
        let p = plan(
            &[(vec![2, 3], vec![1, 2]), (vec![2, 3], vec![1, 2])],
            IterOptions::default(),
        );
        assert_eq!(p.shape, vec![6]);
        assert_eq!(p.output_strides[0], vec![1, 2]);
        // 0-dim operands: an empty iteration shape.
        let p = plan(&[(vec![], vec![])], IterOptions::default());
        assert!(p.shape.is_empty() && p.broadcast_shape.is_empty());
    }

    #[test]
    fn typed_builds_allocate_the_common_dtype_and_check_element_sizes() {
        use crate::dtype::DType;
        use crate::iter::TypeConfig;
        let promoting = TypeConfig {
            promote_inputs_to_common_dtype: true,
            check_all_same_dtype: false,
            ..TypeConfig::default()
        };
        let (p, t) = TensorIteratorConfig::<i64>::new()
            .types(promoting.clone())
            .add_undefined_output(1)
            .add_input(TensorSpec::typed(vec![2, 3], vec![1, 2], DType::I32))
            .add_input(TensorSpec::typed(vec![2, 3], vec![3, 1], DType::F64))
            .build_typed()
            .unwrap();
        let t = t.unwrap();
        assert_eq!(t.common_dtype, Some(DType::F64));
        assert_eq!(t.promoted_inputs, vec![0]);
        // The int32 input is read as a float64 copy with empty_like strides (its own
        // transposed ones, being dense), so the output follows it; 8-byte elements.
        assert_eq!(p.output_strides[0], vec![1, 2]);
        assert_eq!(p.operands[0].element_size, 8);
        let mut bad = TensorSpec::typed(vec![2], vec![1], DType::F32);
        bad.element_size = 8;
        let e = TensorIteratorConfig::<i64>::new()
            .types(promoting)
            .add_undefined_output(1)
            .add_input(bad)
            .build();
        assert!(matches!(e, Err(Error::Invalid { .. })), "{e:?}");
    }

    #[test]
    fn zero_size_outputs_follow_compatible_strides() {
        // Non-reversed perm with a 0-size dim: strides are products of sizes (no max(.,1)),
        // as `empty_strided` receives them from `compatible_stride`.
        // Byte strides [4, 8, 8]: dim 0 innermost, the size tie puts dim 1 (size 0) before
        // dim 2, so the outermost stride is 2 * 0.
        let p = plan(&[(vec![2, 0, 3], vec![1, 2, 2])], general());
        assert_eq!(p.perm, vec![0, 1, 2]);
        assert_eq!(p.output_strides[0], vec![1, 2, 0]);
        assert_eq!(p.numel(), 0);
    }
}
