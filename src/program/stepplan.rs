//! Per-step iteration plans: what a specialization stores so execution never re-plans.
//!
//! # Why
//! A program step that runs a kernel (an op or a reduction) needs TensorIterator's plan:
//! the permutation, the coalesced shape and every operand's byte strides and offset. The one
//! trace already builds that plan over [`SymInt`](crate::sym::SymInt)s, so a
//! specialization keeps it as expressions and instantiates it with the values' layouts in
//! the same straight-line program. Execution then runs each kernel from its instantiated
//! plan: a cached run of a program plans nothing at run time (unless a plan condition fails,
//! below), which matters for small tensors, where building a TensorIterator costs more than
//! the kernel.
//!
//! Copies (`contiguous`, `clone`, `to`, a copying `reshape`) keep planning at run time: the
//! copy kernel chooses its own loop (tiles, the narrow interleave) from the concrete
//! layouts, and tracing a copy's TensorIterator symbolically would record guards that
//! PyTorch's trace of the same program does not have.
//!
//! # Soundness
//! The plan is promised where the specialization's guards *and* the step's plan
//! conditions hold: there the instantiated plan equals the plan the generic build makes at
//! `i64` for that binding ([`super::concrete_planned`]). Plan conditions are the decisions
//! that only choose how a kernel iterates (TensorIterator merging dimensions, the
//! iteration order over an output that exists already), recorded at the trace point
//! instead of guards ([`crate::sym::ShapeEnv::record_plan_conditions`]), since no layout
//! depends on them and PyTorch's trace, which builds no iteration plan, never guards on
//! them. Where a step's conditions fail at a binding the guards admit, the layouts are
//! still right and the step gets no stored plan: the run plans it from the concrete
//! layouts, as an eager run does.
//!
//! Plans are not stored in artifact files; a loaded specialization takes its plans and
//! their conditions from the re-trace at its trace point, and the loader's verifier
//! compares both with the re-trace in every region the stored guards admit (a cover merges
//! two traces, and a load accepts a merged one, only when their plans are equal
//! expressions and their conditions the same).

use super::trace::PlanConditions;
use crate::iter::{Plan, Storage, TensorSpec};
use crate::op::OpPlan;
use crate::sym::Expr;

/// The kernel plan of one program step.
#[derive(Clone, Debug, PartialEq)]
pub enum StepPlan<I> {
    /// An op: the iteration plan (output first, then the inputs in argument order), the
    /// dtypes, and the iterator's inputs (converted copies and Python numbers included).
    Op(OpPlan<I>),
    /// A reduction: the iteration plan (the output with stride 0 on reduced dims, then the
    /// input).
    Reduce(Plan<I>),
}

fn map_vec<I, J, E>(v: &[I], f: &mut impl FnMut(&I) -> Result<J, E>) -> Result<Vec<J>, E> {
    v.iter().map(f).collect()
}

fn map_spec<I, J, E>(
    s: &TensorSpec<I>,
    f: &mut impl FnMut(&I) -> Result<J, E>,
) -> Result<TensorSpec<J>, E> {
    Ok(TensorSpec {
        sizes: map_vec(&s.sizes, f)?,
        strides: map_vec(&s.strides, f)?,
        storage_offset: f(&s.storage_offset)?,
        element_size: s.element_size,
        storage: match &s.storage {
            Some(st) => Some(Storage {
                id: st.id,
                nbytes: f(&st.nbytes)?,
            }),
            None => None,
        },
        dtype: s.dtype,
        wrapped_number: s.wrapped_number,
        tensor_id: s.tensor_id,
    })
}

fn for_plan<'a, I>(p: &'a Plan<I>, f: &mut impl FnMut(&'a I)) {
    p.shape.iter().for_each(&mut *f);
    for o in &p.operands {
        o.byte_strides.iter().for_each(&mut *f);
        f(&o.offset);
    }
    p.broadcast_shape.iter().for_each(&mut *f);
    for s in &p.output_strides {
        s.iter().for_each(&mut *f);
    }
}

fn for_plan_mut<I>(p: &mut Plan<I>, f: &mut impl FnMut(&mut I)) {
    p.shape.iter_mut().for_each(&mut *f);
    for o in &mut p.operands {
        o.byte_strides.iter_mut().for_each(&mut *f);
        f(&mut o.offset);
    }
    p.broadcast_shape.iter_mut().for_each(&mut *f);
    for s in &mut p.output_strides {
        s.iter_mut().for_each(&mut *f);
    }
}

fn same_plan_shape<I, J>(a: &Plan<I>, b: &Plan<J>) -> bool {
    a.shape.len() == b.shape.len()
        && a.num_outputs == b.num_outputs
        && a.perm == b.perm
        && a.broadcast_shape.len() == b.broadcast_shape.len()
        && a.operands.len() == b.operands.len()
        && a.operands.iter().zip(&b.operands).all(|(x, y)| {
            x.byte_strides.len() == y.byte_strides.len()
                && x.element_size == y.element_size
                && x.is_output == y.is_output
        })
        && a.output_strides.len() == b.output_strides.len()
        && a.output_strides
            .iter()
            .zip(&b.output_strides)
            .all(|(x, y)| x.len() == y.len())
}

impl<I> StepPlan<I> {
    /// Applies `f` to every integer, keeping the structure (e.g. `SymInt` to `Expr`, or an
    /// `Expr` plan evaluated at a binding).
    pub fn try_map<J, E>(&self, mut f: impl FnMut(&I) -> Result<J, E>) -> Result<StepPlan<J>, E> {
        Ok(match self {
            StepPlan::Reduce(p) => StepPlan::Reduce(p.try_map(f)?),
            StepPlan::Op(o) => StepPlan::Op(OpPlan {
                plan: o.plan.try_map(&mut f)?,
                compute_dtype: o.compute_dtype,
                out_dtype: o.out_dtype,
                inputs: o
                    .inputs
                    .iter()
                    .map(|s| map_spec(s, &mut f))
                    .collect::<Result<_, E>>()?,
                converted: o.converted.clone(),
            }),
        })
    }

    /// The iteration plan.
    pub fn plan(&self) -> &Plan<I> {
        match self {
            StepPlan::Op(o) => &o.plan,
            StepPlan::Reduce(p) => p,
        }
    }

    /// Visits every integer in a fixed order (the order [`Self::for_each_mut`] writes).
    pub(crate) fn for_each<'a>(&'a self, f: &mut impl FnMut(&'a I)) {
        match self {
            StepPlan::Reduce(p) => for_plan(p, f),
            StepPlan::Op(o) => {
                for_plan(&o.plan, f);
                for s in &o.inputs {
                    s.sizes.iter().for_each(&mut *f);
                    s.strides.iter().for_each(&mut *f);
                    f(&s.storage_offset);
                    if let Some(st) = &s.storage {
                        f(&st.nbytes);
                    }
                }
            }
        }
    }

    /// Visits every integer mutably, in [`Self::for_each`]'s order.
    pub(crate) fn for_each_mut(&mut self, f: &mut impl FnMut(&mut I)) {
        match self {
            StepPlan::Reduce(p) => for_plan_mut(p, f),
            StepPlan::Op(o) => {
                for_plan_mut(&mut o.plan, f);
                for s in &mut o.inputs {
                    s.sizes.iter_mut().for_each(&mut *f);
                    s.strides.iter_mut().for_each(&mut *f);
                    f(&mut s.storage_offset);
                    if let Some(st) = &mut s.storage {
                        f(&mut st.nbytes);
                    }
                }
            }
        }
    }

    /// Everything but the integers agrees (kind, permutation, ranks, dtypes, element sizes,
    /// which inputs are converted or Python numbers).
    pub fn same_structure<J>(&self, other: &StepPlan<J>) -> bool {
        match (self, other) {
            (StepPlan::Reduce(a), StepPlan::Reduce(b)) => same_plan_shape(a, b),
            (StepPlan::Op(a), StepPlan::Op(b)) => {
                same_plan_shape(&a.plan, &b.plan)
                    && a.compute_dtype == b.compute_dtype
                    && a.out_dtype == b.out_dtype
                    && a.converted == b.converted
                    && a.inputs.len() == b.inputs.len()
                    && a.inputs.iter().zip(&b.inputs).all(|(x, y)| {
                        x.sizes.len() == y.sizes.len()
                            && x.strides.len() == y.strides.len()
                            && x.element_size == y.element_size
                            && x.storage.as_ref().map(|s| s.id) == y.storage.as_ref().map(|s| s.id)
                            && x.dtype == y.dtype
                            && x.wrapped_number == y.wrapped_number
                    })
            }
            _ => false,
        }
    }
}

/// Per-step plans equal in structure, with their integers paired in order, for comparisons
/// as expressions; `Err(k)`: step `k` (0-based) is the first whose plans differ in structure
/// (or is missing from one of them).
pub(crate) fn plan_pairs<'a>(
    a: &'a [Option<StepPlan<Expr>>],
    b: &'a [Option<StepPlan<Expr>>],
) -> Result<Vec<(usize, &'a Expr, &'a Expr)>, usize> {
    if a.len() != b.len() {
        return Err(a.len().min(b.len()));
    }
    let mut out = Vec::new();
    for (k, (x, y)) in a.iter().zip(b).enumerate() {
        match (x, y) {
            (None, None) => {}
            (Some(x), Some(y)) if x.same_structure(y) => {
                let mut xs = Vec::new();
                x.for_each(&mut |e| xs.push(e));
                let mut ys = Vec::new();
                y.for_each(&mut |e| ys.push(e));
                out.extend(xs.into_iter().zip(ys).map(|(p, q)| (k, p, q)));
            }
            _ => return Err(k),
        }
    }
    Ok(out)
}

/// The first step whose plan conditions differ between `a` and `b` (as sets of
/// conditions, reasons aside), `None` when every step's are the same. Two traces whose
/// plans are equal expressions answer each other's bindings with the same plan only where
/// the same conditions hold: a cover merges, and a verifier accepts, only such traces.
pub(crate) fn conditions_differ(a: &PlanConditions, b: &PlanConditions) -> Option<usize> {
    if a.len() != b.len() {
        return Some(a.len().min(b.len()));
    }
    a.iter().zip(b).position(|(x, y)| {
        x.len() != y.len() || !x.iter().all(|g| y.iter().any(|h| h.cond == g.cond))
    })
}

/// The structure of an optional step plan in words, for messages: its kind, iteration
/// order and rank (and dtypes for an op).
pub(crate) fn describe_structure<I>(p: Option<&StepPlan<I>>) -> String {
    match p {
        None => "no kernel plan".to_string(),
        Some(StepPlan::Reduce(r)) => {
            format!(
                "a reduction plan of rank {}, permutation {:?}",
                r.shape.len(),
                r.perm
            )
        }
        Some(StepPlan::Op(o)) => format!(
            "an op plan of rank {}, permutation {:?}, computing in {} into {}",
            o.plan.shape.len(),
            o.plan.perm,
            o.compute_dtype,
            o.out_dtype
        ),
    }
}
