//! Program execution through the vectorized kernels, with buffer reuse.
//!
//! [`run_program`] takes the instantiated layouts of every value (from [`super::concrete`]
//! or from a compiled specialization) and real input tensors, and runs each step on the
//! kernel path:
//!
//! * **views** allocate nothing: the value's layout (sizes, strides, offset) is applied with
//!   `as_strided` to the tensor that owns its storage, so a view of an input aliases the
//!   input (as in PyTorch) and every view is bounds-checked against the real storage;
//! * **ops** run [`crate::op::call`] (the typed vectorized maps); **reductions** run the
//!   reduction kernels over the plan of [`reduction_meta`]; **copies** (`contiguous`,
//!   `clone`, `to`, a `reshape`/`flatten` that copies) run the copy kernel (tiles, casts).
//!
//! Every produced tensor is checked against its layout in `values` (sizes, strides, dtype;
//! the offset where the storage is the program's own): a disagreement between the layouts
//! and what the kernel path made is an [`Error::Invalid`], never a silent wrong answer.
//!
//! # Buffer reuse and the liveness rule
//! A storage is identified by the value that allocated it (`Value::storage`). Its *last
//! reader* is the last step that takes, as an argument, any value living in that storage:
//! the allocating value itself or any view aliasing it (a view is read through its storage,
//! so a live view keeps its base alive). After that step has run, the storage is dead and
//! goes to a free list, **unless** it is pinned:
//!
//! * an input's storage (the caller's memory is never written), or
//! * a storage that any output lives in (an output, or a view an output is).
//!
//! A value allocated later that is not pinned itself takes the smallest free storage of the
//! same dtype holding at least its elements (storages are typed: a byte-compatible reuse
//! across dtypes would need a transmute of the storage and is not done), otherwise it gets a
//! fresh one. A value nobody reads dies right after its own step. The step that reads a
//! storage for the last time never writes into it (it is freed only once the step has run),
//! so an op never sees its output alias one of its inputs. Temporaries that `op::call` makes
//! internally (inputs converted to the computation dtype) are not part of this accounting.
//! [`RunStats`] reports what was allocated and what was reused.

use super::blocks::{run_chain, Sink};
use super::exec::fill_value;
use super::fuse::{check_fusion, compile, ChainKind, FusionPlan};
use super::rows::{compile_rows, run_rows};
use super::spec::{Program, StepArg, StepOp};
use super::stepplan::StepPlan;
use super::trace::{in_step, Value};
use crate::sym::Bindings;
use crate::kernel::ExecConfig;
use crate::op::{self, each, with_dtype, AnyElement, AnyTensor, Input, Output};
use crate::reduce::{
    reduction_meta, All, Amax, Amin, Any, Argmax, Argmin, Dims, Mean, Prod, ReduceElement, Reducer,
    ReductionOp, Sum,
};
use crate::tensor::{Element, FloatElement, Scalar, Storage, Tensor};
use crate::{DType, Error, Result};

/// What a [`run_program_stats`] run allocated and reused (bytes of storages the program's
/// own steps own; see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Bytes of fresh storages allocated for step results.
    pub allocated_bytes: usize,
    /// Bytes of step results written into a dead storage instead of a fresh one.
    pub reused_bytes: usize,
    /// Step results that were written into a dead storage.
    pub reused_buffers: usize,
    /// Steps that ran inside a fused chain (roots included).
    pub fused_steps: usize,
}

/// A view of `t`'s storage with another layout (bounds-checked).
fn restride(t: &AnyTensor, sizes: &[i64], strides: &[i64], offset: i64) -> Result<AnyTensor> {
    each!(t, |x| Ok(x.as_strided(sizes, strides, offset)?.into()))
}

fn storage_len(t: &AnyTensor) -> usize {
    each!(t, |x| x.storage().len())
}

/// A fresh dense tensor of a layout; its contents are unspecified until a kernel writes
/// every element (each caller below does).
fn fresh(v: &Value<i64>) -> Result<AnyTensor> {
    with_dtype!(v.dtype, |T| {
        let n = usize::try_from(v.storage_numel)
            .map_err(|_| Error::invalid("internal: negative storage size"))?;
        Ok(Tensor::<T>::from_storage(Storage::uninit(n)?, &v.sizes, &v.strides, 0)?.into())
    })
}

/// Copies `src` into `dst` (same sizes, any dtypes) with the copy kernel.
fn copy(dst: &AnyTensor, src: &AnyTensor, cfg: &ExecConfig) -> Result<()> {
    each!(dst, |d| each!(src, |s| crate::kernel::copy_into(d, s, cfg)))
}

/// Input tensors made with the golden fill formula, laid out as `values[..inputs]` say
/// (elements a strided layout does not address are zero).
pub fn fill_inputs(p: &Program, values: &[Value<i64>]) -> Result<Vec<AnyTensor>> {
    let moduli = super::exec::input_moduli(p, &p.bindings_of_layouts(values))?;
    (0..p.inputs.len())
        .map(|k| {
            let v = values
                .get(k)
                .ok_or_else(|| Error::invalid("fewer layouts than inputs"))?;
            with_dtype!(v.dtype, |T| {
                let n = usize::try_from(v.storage_numel)
                    .map_err(|_| Error::invalid("negative storage size"))?;
                let mut data = vec![<T as Default>::default(); n];
                let mut l = 0i64;
                for_each_position(v, |pos| {
                    let slot = data
                        .get_mut(pos)
                        .ok_or_else(|| Error::invalid("input layout outside its storage"))?;
                    *slot = T::from_scalar(match moduli[k] {
                        Some(m) => super::exec::fill_value_mod(l, k as i64, m, v.dtype),
                        None => fill_value(l, k as i64, v.dtype),
                    });
                    l += 1;
                    Ok(())
                })?;
                Ok(Tensor::from_storage(Storage::from_vec(data), &v.sizes, &v.strides, 0)?.into())
            })
        })
        .collect()
}

/// Calls `f` with the storage position of every element of `v`, in row-major order.
fn for_each_position(v: &Value<i64>, mut f: impl FnMut(usize) -> Result<()>) -> Result<()> {
    if v.sizes.contains(&0) {
        return Ok(());
    }
    let nd = v.sizes.len();
    let mut idx = vec![0i64; nd];
    loop {
        let pos = v.offset + idx.iter().zip(&v.strides).map(|(i, s)| i * s).sum::<i64>();
        f(usize::try_from(pos).map_err(|_| Error::invalid("negative position"))?)?;
        let mut d = nd;
        loop {
            if d == 0 {
                return Ok(());
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < v.sizes[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// A tensor's elements in row-major logical order, widened.
pub fn tensor_values(t: &AnyTensor) -> Result<Vec<Scalar>> {
    each!(t, |x| Ok(x
        .to_vec()?
        .into_iter()
        .map(|e| e.to_scalar())
        .collect()))
}

/// Runs `p` through the kernels (see the module docs) and returns its outputs in
/// `p.outputs` order.
pub fn run_program(
    p: &Program,
    values: &[Value<i64>],
    inputs: Vec<AnyTensor>,
    cfg: &ExecConfig,
) -> Result<Vec<AnyTensor>> {
    run_program_stats(p, values, inputs, cfg).map(|(outs, _)| outs)
}

/// The storage bookkeeping of one run (see the module docs).
struct Liveness {
    /// Per allocating value: the last step reading its storage (`None`: never read).
    last_read: Vec<Option<usize>>,
    /// Per value: never recycled (a view, which owns no storage; an input; a storage an
    /// output lives in).
    pinned: Vec<bool>,
}

impl Liveness {
    /// `at[k]`: the step at which step `k`'s reads happen (a fused chain reads at its root).
    fn new(p: &Program, values: &[Value<i64>], at: &[usize]) -> Liveness {
        let n = values.len();
        let mut last_read = vec![None; n];
        let mut pinned = vec![false; n];
        // Inputs are the caller's; a view allocates nothing (it is no storage).
        for (s, v) in values.iter().enumerate() {
            pinned[s] = s < p.inputs.len() || v.storage != s;
        }
        for &o in &p.outputs {
            pinned[values[o].storage] = true;
        }
        for (k, st) in p.steps.iter().enumerate() {
            for i in st.value_args() {
                let s = values[i].storage;
                last_read[s] = last_read[s].max(Some(at[k]));
            }
        }
        Liveness { last_read, pinned }
    }

    /// Storages whose last reader is step `k` (or, never read, that step `k` allocated).
    fn dead_after(&self, k: usize, me: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.pinned.len()).filter(move |&s| {
            !self.pinned[s]
                && (self.last_read[s] == Some(k) || (s == me && self.last_read[s].is_none()))
        })
    }
}

/// Dead storages available for later intermediates.
#[derive(Default)]
struct FreeList {
    buffers: Vec<AnyTensor>,
}

impl FreeList {
    /// The smallest free storage of `dtype` holding at least `numel` elements.
    fn take(&mut self, dtype: DType, numel: usize) -> Option<AnyTensor> {
        let best = self
            .buffers
            .iter()
            .enumerate()
            .filter(|(_, t)| t.dtype() == dtype && storage_len(t) >= numel)
            .min_by_key(|(_, t)| storage_len(t))
            .map(|(i, _)| i)?;
        Some(self.buffers.swap_remove(best))
    }
}

fn check_layout(what: &str, t: &AnyTensor, v: &Value<i64>, offset: Option<i64>) -> Result<()> {
    if t.sizes() != v.sizes.as_slice()
        || t.strides() != v.strides.as_slice()
        || t.dtype() != v.dtype
        || offset.is_some_and(|o| o != t.storage_offset())
    {
        return Err(Error::invalid(format!(
            "{what}: the kernel path made sizes {:?}, strides {:?}, offset {}, {} but the layouts say sizes {:?}, strides {:?}, offset {}, {}",
            t.sizes(),
            t.strides(),
            t.storage_offset(),
            t.dtype(),
            v.sizes,
            v.strides,
            v.offset,
            v.dtype
        )));
    }
    Ok(())
}

/// [`run_program`], also reporting what was allocated and reused.
pub fn run_program_stats(
    p: &Program,
    values: &[Value<i64>],
    inputs: Vec<AnyTensor>,
    cfg: &ExecConfig,
) -> Result<(Vec<AnyTensor>, RunStats)> {
    run_inner(p, values, None, inputs, None, cfg)
}

/// How [`run_program_with`] runs a program: the one executor's options (every other entry
/// point is this with some of them set).
#[derive(Clone, Copy, Debug, Default)]
pub struct RunOptions<'a> {
    /// Per step, the kernel plan of an op or a reduction (`None` for views and copies: a
    /// specialization's plans instantiated with
    /// [`super::ProgramSpecialization::instantiate_with_plans`]), run instead of planning
    /// each step again. The plans are checked against the arguments' layouts and validated
    /// against the real storages by the kernels, as any plan. `None`: every step is
    /// planned at run time.
    pub plans: Option<&'a [Option<StepPlan<i64>>]>,
    /// The elementwise chains evaluated in one pass each (see `fuse.rs`); checked against
    /// the program and the layouts first ([`check_fusion`]): a plan from an artifact is not
    /// trusted. A fused chain's members run from the chain, not from their step plans.
    /// `None`: step by step.
    pub fusion: Option<&'a FusionPlan>,
}

/// Runs `p` (see the module docs) with `options`: stored step plans and/or fused chains.
/// Returns the outputs in `p.outputs` order and what was allocated, reused and fused.
pub fn run_program_with(
    p: &Program,
    values: &[Value<i64>],
    inputs: Vec<AnyTensor>,
    options: &RunOptions<'_>,
    cfg: &ExecConfig,
) -> Result<(Vec<AnyTensor>, RunStats)> {
    if let Some(plans) = options.plans {
        if plans.len() != p.steps.len() {
            return Err(Error::invalid(format!(
                "{} step plans for a program of {} steps",
                plans.len(),
                p.steps.len()
            )));
        }
    }
    if let Some(fusion) = options.fusion {
        check_fusion(p, values, fusion)?;
    }
    run_inner(p, values, options.plans, inputs, options.fusion, cfg)
}

/// [`run_program_with`] with every op and reduction run from its kernel plan in `plans`.
pub fn run_program_planned(
    p: &Program,
    values: &[Value<i64>],
    plans: &[Option<StepPlan<i64>>],
    inputs: Vec<AnyTensor>,
    cfg: &ExecConfig,
) -> Result<(Vec<AnyTensor>, RunStats)> {
    let options = RunOptions {
        plans: Some(plans),
        fusion: None,
    };
    run_program_with(p, values, inputs, &options, cfg)
}

/// [`run_program_with`] with the elementwise chains of `fusion` each evaluated in one pass
/// (the other steps planned at run time).
pub fn run_program_fused(
    p: &Program,
    values: &[Value<i64>],
    inputs: Vec<AnyTensor>,
    fusion: &FusionPlan,
    cfg: &ExecConfig,
) -> Result<(Vec<AnyTensor>, RunStats)> {
    let options = RunOptions {
        plans: None,
        fusion: Some(fusion),
    };
    run_program_with(p, values, inputs, &options, cfg)
}

pub(super) fn run_inner(
    p: &Program,
    values: &[Value<i64>],
    plans: Option<&[Option<StepPlan<i64>>]>,
    inputs: Vec<AnyTensor>,
    fusion: Option<&FusionPlan>,
    cfg: &ExecConfig,
) -> Result<(Vec<AnyTensor>, RunStats)> {
    let n_in = p.inputs.len();
    if values.len() != n_in + p.steps.len() {
        return Err(Error::invalid(format!(
            "{} layouts for a program of {} inputs and {} steps",
            values.len(),
            n_in,
            p.steps.len()
        )));
    }
    if inputs.len() != n_in {
        return Err(Error::invalid(format!(
            "{} input tensors for a program of {n_in} inputs",
            inputs.len()
        )));
    }
    for (k, v) in values.iter().enumerate() {
        if v.storage > k || values[v.storage].storage != v.storage {
            return Err(Error::invalid(format!(
                "value {k} lives in the storage of value {}, which is not an allocating value before it",
                v.storage
            )));
        }
    }
    for (k, t) in inputs.iter().enumerate() {
        let v = &values[k];
        if t.sizes() != v.sizes.as_slice()
            || t.strides() != v.strides.as_slice()
            || t.dtype() != v.dtype
        {
            return Err(Error::invalid(format!(
                "input {k} (`{}`): got sizes {:?}, strides {:?}, {} but the program expects sizes {:?}, strides {:?}, {}",
                p.names[k],
                t.sizes(),
                t.strides(),
                t.dtype(),
                v.sizes,
                v.strides,
                v.dtype
            )));
        }
    }
    // Sizes passed as Python numbers take their values at this run's binding, before any
    // step, chain or row segment runs (each reads them as constants).
    let binding = p.number_binding(values);
    let empty = FusionPlan::default();
    let fusion = fusion.unwrap_or(&empty);
    let chain_of = fusion.chain_of(p.steps.len());
    let compiled = fusion
        .chains
        .iter()
        .map(|c| compile(p, c, &binding))
        .collect::<Result<Vec<_>>>()?;
    // Row segments this run takes (rows short enough), and per step its segment.
    let mut segment_of: Vec<Option<usize>> = vec![None; p.steps.len()];
    let mut row_code = Vec::with_capacity(fusion.rows.len());
    for (s, seg) in fusion.rows.iter().enumerate() {
        if !seg.fits(p, values) {
            row_code.push(None);
            continue;
        }
        row_code.push(Some(compile_rows(p, values, seg, &binding)?));
        for &k in &seg.steps {
            if let Some(slot) = segment_of.get_mut(k) {
                *slot = Some(s);
            }
        }
    }
    let at: Vec<usize> = (0..p.steps.len())
        .map(|k| match segment_of[k] {
            Some(s) => fusion.rows[s].span().map_or(k, |(_, last)| last),
            None => chain_of[k].map_or(k, |c| *fusion.chains[c].steps.last().unwrap_or(&k)),
        })
        .collect();
    let live = Liveness::new(p, values, &at);
    let mut free = FreeList::default();
    let mut stats = RunStats::default();
    // Per value: its tensor (dropped once its storage is dead).
    let mut tensors: Vec<Option<AnyTensor>> = inputs.into_iter().map(Some).collect();
    tensors.resize(values.len(), None);
    // Per allocating value: the real offset of the value's offset 0 in its storage.
    let base_offset: Vec<i64> = (0..values.len())
        .map(|k| {
            tensors
                .get(k)
                .and_then(|t| t.as_ref())
                .map_or(0, AnyTensor::storage_offset)
        })
        .collect();
    for k in 0..p.steps.len() {
        let me = n_in + k;
        let label = &p.steps[k].label;
        if let Some(s) = segment_of[k] {
            // A row segment runs at its last step and writes every value needed after it.
            if at[k] != k {
                continue;
            }
            let (seg, code) = (&fusion.rows[s], row_code[s].as_ref());
            let code = code.ok_or_else(|| Error::invalid("internal: a row segment not compiled"))?;
            let leaves = live_tensors(p, &tensors, &code.leaves)?;
            let outs = seg
                .written
                .iter()
                .map(|&j| Ok(target(&values[n_in + j], n_in + j, &live, &mut free, &mut stats)?.0))
                .collect::<Result<Vec<_>>>()?;
            run_rows(code, &leaves, &outs.iter().collect::<Vec<_>>(), cfg)
                .map_err(|e| in_step(e, label))?;
            drop(leaves);
            for (t, &j) in outs.into_iter().zip(&seg.written) {
                let v = &values[n_in + j];
                check_layout(&p.steps[j].label, &t, v, Some(v.offset))?;
                tensors[n_in + j] = Some(t);
            }
            stats.fused_steps += seg.steps.len();
            release(&live, k, me, values, &mut tensors, &mut free);
            continue;
        }
        let t = match chain_of[k] {
            // A chain member below the root: never materialized.
            Some(_) if at[k] != k => continue,
            Some(c) => {
                let chain = &compiled[c];
                let leaves = live_tensors(p, &tensors, &chain.leaves)?;
                let fc = &fusion.chains[c];
                let root = n_in + *fc.members().last().unwrap_or(&k);
                let (out, _) = target(&values[me], me, &live, &mut free, &mut stats)?;
                let sizes = &values[root].sizes;
                match fc.kind {
                    ChainKind::Elementwise => {
                        run_chain(chain, &leaves, Sink::Write(&out), sizes, cfg)
                            .map_err(|e| in_step(e, label))?;
                    }
                    ChainKind::Reduction { writes_input } => {
                        let StepOp::Reduce(op) = p.steps[k].op else {
                            return Err(Error::invalid("internal: a reduction chain's root"));
                        };
                        let v = &values[root];
                        let spec = crate::iter::TensorSpec::new(
                            v.sizes.clone(),
                            v.strides.clone(),
                            v.dtype.element_size(),
                        );
                        let m = reduction_meta(
                            op,
                            &spec,
                            v.dtype,
                            &p.steps[k].reduction_dims()?,
                            p.steps[k].keepdim,
                        )
                        .map_err(|e| in_step(e, label))?;
                        let write = if writes_input {
                            Some(target(v, root, &live, &mut free, &mut stats)?.0)
                        } else {
                            None
                        };
                        let sink = Sink::Reduce {
                            op,
                            mask: &m.mask,
                            out: &out,
                            write: write.as_ref(),
                        };
                        run_chain(chain, &leaves, sink, sizes, cfg)
                            .map_err(|e| in_step(e, label))?;
                        if let Some(t) = write {
                            let r = &p.steps[root - n_in].label;
                            check_layout(r, &t, v, Some(v.offset))?;
                            tensors[root] = Some(t);
                        }
                    }
                }
                stats.fused_steps += fc.steps.len();
                out
            }
            None => run_step(
                p,
                k,
                values,
                &binding,
                plans.and_then(|ps| ps[k].as_ref()),
                &tensors,
                &base_offset,
                &live,
                &mut free,
                &mut stats,
                cfg,
            )
            .map_err(|e| in_step(e, label))?,
        };
        let own = values[values[me].storage].storage >= n_in;
        check_layout(label, &t, &values[me], own.then_some(values[me].offset))?;
        tensors[me] = Some(t);
        release(&live, k, me, values, &mut tensors, &mut free);
    }
    let outs = p
        .outputs
        .iter()
        .map(|&o| {
            tensors[o].clone().ok_or_else(|| {
                Error::invalid(format!("internal: output `{}` was freed", p.names[o]))
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((outs, stats))
}

/// The tensors of values `ids` (a fused chain's or row segment's leaves), all still live.
fn live_tensors<'a>(
    p: &Program,
    tensors: &'a [Option<AnyTensor>],
    ids: &[usize],
) -> Result<Vec<&'a AnyTensor>> {
    ids.iter()
        .map(|&l| {
            tensors[l].as_ref().ok_or_else(|| {
                Error::invalid(format!("internal: value `{}` was freed", p.names[l]))
            })
        })
        .collect()
}

/// Frees the storages whose last reader is step `k` (`me` its value): the allocating
/// value's tensor holds the storage and goes to the free list; every alias of it is dropped.
fn release(
    live: &Liveness,
    k: usize,
    me: usize,
    values: &[Value<i64>],
    tensors: &mut [Option<AnyTensor>],
    free: &mut FreeList,
) {
    for s in live.dead_after(k, me).collect::<Vec<_>>() {
        let owner = tensors[s].take();
        for (v, t) in tensors.iter_mut().enumerate() {
            if values[v].storage == s {
                *t = None;
            }
        }
        if let Some(owner) = owner {
            free.buffers.push(owner);
        }
    }
}

/// The tensor a step writes: a dead storage when one fits and the value is not pinned, else
/// a fresh one.
fn target(
    v: &Value<i64>,
    me: usize,
    live: &Liveness,
    free: &mut FreeList,
    stats: &mut RunStats,
) -> Result<(AnyTensor, bool)> {
    let numel = usize::try_from(v.storage_numel)
        .map_err(|_| Error::invalid("internal: negative storage size"))?;
    let bytes = numel * v.dtype.element_size();
    if !live.pinned[me] {
        if let Some(buf) = free.take(v.dtype, numel) {
            stats.reused_bytes += bytes;
            stats.reused_buffers += 1;
            return Ok((restride(&buf, &v.sizes, &v.strides, 0)?, true));
        }
    }
    stats.allocated_bytes += bytes;
    Ok((fresh(v)?, false))
}

#[allow(clippy::too_many_arguments)]
fn run_step(
    p: &Program,
    k: usize,
    values: &[Value<i64>],
    binding: &Bindings,
    plan: Option<&StepPlan<i64>>,
    tensors: &[Option<AnyTensor>],
    base_offset: &[i64],
    live: &Liveness,
    free: &mut FreeList,
    stats: &mut RunStats,
    cfg: &ExecConfig,
) -> Result<AnyTensor> {
    let st = &p.steps[k];
    let me = p.inputs.len() + k;
    let v = &values[me];
    let tensor = |i: usize| -> Result<&AnyTensor> {
        tensors[i]
            .as_ref()
            .ok_or_else(|| Error::invalid(format!("internal: value `{}` was freed", p.names[i])))
    };
    let arg = |j: usize| -> Result<&AnyTensor> {
        match st.args.get(j) {
            Some(StepArg::Value(i)) => tensor(*i),
            other => Err(Error::invalid(format!("expected a value, got {other:?}"))),
        }
    };
    if v.storage != me {
        // A view (or a no-op copy): the layout over the owner's storage.
        let owner = tensor(v.storage)?;
        return restride(
            owner,
            &v.sizes,
            &v.strides,
            base_offset[v.storage] + v.offset,
        );
    }
    match &st.op {
        StepOp::Op(op) => {
            let ins = st
                .args
                .iter()
                .map(|a| match (a, a.number_at(binding)) {
                    (StepArg::Value(i), _) => Ok(Input::Tensor(tensor(*i)?.clone())),
                    (_, Some(s)) => Ok(Input::Scalar(s?)),
                    (other, None) => Err(Error::invalid(format!("bad op argument {other:?}"))),
                })
                .collect::<Result<Vec<_>>>()?;
            if let Some(plan) = plan {
                let StepPlan::Op(plan) = plan else {
                    return Err(Error::invalid(
                        "the stored plan of an op step is not an op's",
                    ));
                };
                let (out, _) = target(v, me, live, free, stats)?;
                op::call_planned(*op, plan, &ins, &out, cfg)?;
                return Ok(out);
            }
            if !live.pinned[me] {
                let numel = usize::try_from(v.storage_numel).unwrap_or(usize::MAX);
                if let Some(buf) = free.take(v.dtype, numel) {
                    let out = restride(&buf, &v.sizes, &v.strides, 0)?;
                    op::call_into(*op, &ins, &out, cfg)?;
                    stats.reused_bytes += numel * v.dtype.element_size();
                    stats.reused_buffers += 1;
                    return Ok(out);
                }
            }
            let out = op::call(*op, &ins, Output::New, cfg)?;
            stats.allocated_bytes += storage_len(&out) * v.dtype.element_size();
            Ok(out)
        }
        StepOp::Reduce(op) => {
            let x = arg(0)?;
            let dims = st.reduction_dims()?;
            let (out, _) = target(v, me, live, free, stats)?;
            let flat_arg = matches!(op, ReductionOp::Argmax | ReductionOp::Argmin)
                && dims == Dims::All
                && x.sizes().len() > 1;
            match plan {
                // The flattened argmax/argmin plans at run time (see `reduce_into`).
                Some(_) if flat_arg => reduce_into(*op, x, &dims, st.keepdim, &out, cfg)?,
                Some(StepPlan::Reduce(plan)) => {
                    let StepArg::Value(xi) = &st.args[0] else {
                        return Err(Error::invalid("a reduction of a non-value"));
                    };
                    let input = &values[*xi];
                    if plan.operands.len() != 2
                        || x.sizes() != input.sizes.as_slice()
                        || x.strides() != input.strides.as_slice()
                    {
                        return Err(Error::invalid(
                            "the stored plan of a reduction does not match its input",
                        ));
                    }
                    let shift = [
                        out.storage_offset(),
                        x.storage_offset()
                            .checked_sub(input.offset)
                            .ok_or_else(|| Error::overflow("a plan's storage offset"))?,
                    ];
                    if shift == [0, 0] {
                        reduce_any(*op, x, plan, &out, cfg)?;
                    } else {
                        let mut q = plan.clone();
                        q.shift_offsets(&shift)?;
                        reduce_any(*op, x, &q, &out, cfg)?;
                    }
                }
                Some(StepPlan::Op(_)) => {
                    return Err(Error::invalid(
                        "the stored plan of a reduction step is an op's",
                    ))
                }
                None => reduce_into(*op, x, &dims, st.keepdim, &out, cfg)?,
            }
            Ok(out)
        }
        StepOp::Structured(_) => {
            use crate::structured::KArg;
            let b = p.bindings_of_layouts(values);
            let call = super::trace::structured_call(st, values, &|e| e.eval(&b))?;
            let args = st
                .args
                .iter()
                .map(|a| match a {
                    StepArg::Value(i) => Ok(KArg::Tensor(tensor(*i)?.clone())),
                    StepArg::Values(is) => Ok(KArg::List(
                        is.iter().map(|i| tensor(*i).cloned()).collect::<Result<_>>()?,
                    )),
                    _ => Ok(KArg::Absent),
                })
                .collect::<Result<Vec<_>>>()?;
            let (out, _) = target(v, me, live, free, stats)?;
            crate::structured::write(&call, &args, &out, cfg)?;
            Ok(out)
        }
        StepOp::View(_) | StepOp::Contiguous | StepOp::Clone | StepOp::To => {
            let x = arg(0)?;
            let (out, _) = target(v, me, live, free, stats)?;
            if x.sizes() == out.sizes() {
                copy(&out, x, cfg)?;
            } else {
                // A copying reshape/flatten: the row-major elements of `x` into the
                // contiguous result, seen with `x`'s sizes.
                let strides = crate::layout::contiguous_strides(x.sizes());
                if !crate::layout::is_contiguous(&v.sizes, &v.strides)? {
                    return Err(Error::invalid(
                        "internal: a copying reshape into a non-contiguous layout",
                    ));
                }
                let dst = restride(&out, x.sizes(), &strides, 0)?;
                copy(&dst, x, cfg)?;
            }
            Ok(out)
        }
    }
}

/// Runs reduction `op` of `x` over `dims` into the dense `out` (its sizes and dtype are the
/// meta function's, checked here).
fn reduce_into(
    op: ReductionOp,
    x: &AnyTensor,
    dims: &Dims,
    keepdim: bool,
    out: &AnyTensor,
    cfg: &ExecConfig,
) -> Result<()> {
    let spec = crate::iter::TensorSpec::new(
        x.sizes().to_vec(),
        x.strides().to_vec(),
        x.dtype().element_size(),
    )
    .with_offset(x.storage_offset());
    let m = reduction_meta(op, &spec, x.dtype(), dims, keepdim)?;
    if m.sizes != out.sizes() || m.dtype != out.dtype() {
        return Err(Error::invalid(format!(
            "internal: {op} makes sizes {:?} of {} but the output is {:?} of {}",
            m.sizes,
            m.dtype,
            out.sizes(),
            out.dtype()
        )));
    }
    if matches!(op, ReductionOp::Argmax | ReductionOp::Argmin)
        && *dims == Dims::All
        && x.sizes().len() > 1
    {
        // PyTorch reduces the flattened input (`reshape(-1)`): indices are row-major.
        let n: i64 = x.sizes().iter().product();
        let flat_layout = Value {
            sizes: vec![n],
            strides: vec![1],
            offset: 0,
            dtype: x.dtype(),
            storage: 0,
            storage_numel: n,
        };
        let flat = fresh(&flat_layout)?;
        copy(
            &restride(
                &flat,
                x.sizes(),
                &crate::layout::contiguous_strides(x.sizes()),
                0,
            )?,
            x,
            cfg,
        )?;
        let fspec = crate::iter::TensorSpec::new(vec![n], vec![1], x.dtype().element_size());
        let fm = reduction_meta(op, &fspec, x.dtype(), &Dims::One(0), false)?;
        return reduce_any(op, &flat, &fm.plan, out, cfg);
    }
    reduce_any(op, x, &m.plan, out, cfg)
}

fn reduce_any(
    op: ReductionOp,
    x: &AnyTensor,
    plan: &crate::iter::Plan<i64>,
    out: &AnyTensor,
    cfg: &ExecConfig,
) -> Result<()> {
    match x {
        AnyTensor::F32(t) => reduce_float(op, t, plan, out, cfg),
        AnyTensor::F64(t) => reduce_float(op, t, plan, out, cfg),
        AnyTensor::Bool(t) => reduce_common(op, t, plan, out, cfg),
        AnyTensor::U8(t) => reduce_common(op, t, plan, out, cfg),
        AnyTensor::I32(t) => reduce_common(op, t, plan, out, cfg),
        AnyTensor::I64(t) => reduce_common(op, t, plan, out, cfg),
    }
}

fn reduce_float<T>(
    op: ReductionOp,
    x: &Tensor<T>,
    plan: &crate::iter::Plan<i64>,
    out: &AnyTensor,
    cfg: &ExecConfig,
) -> Result<()>
where
    T: ReduceElement<Wide = T> + FloatElement + AnyElement,
    T::Logical: AnyElement,
{
    match op {
        ReductionOp::Mean => into(Mean, plan, x, out, cfg),
        other => reduce_common(other, x, plan, out, cfg),
    }
}

fn reduce_common<T>(
    op: ReductionOp,
    x: &Tensor<T>,
    plan: &crate::iter::Plan<i64>,
    out: &AnyTensor,
    cfg: &ExecConfig,
) -> Result<()>
where
    T: ReduceElement + AnyElement,
    T::Wide: AnyElement,
    T::Logical: AnyElement,
{
    match op {
        ReductionOp::Sum => into(Sum, plan, x, out, cfg),
        ReductionOp::Prod => into(Prod, plan, x, out, cfg),
        ReductionOp::Amax => into(Amax, plan, x, out, cfg),
        ReductionOp::Amin => into(Amin, plan, x, out, cfg),
        ReductionOp::Argmax => into(Argmax, plan, x, out, cfg),
        ReductionOp::Argmin => into(Argmin, plan, x, out, cfg),
        ReductionOp::All => into(All, plan, x, out, cfg),
        ReductionOp::Any => into(Any, plan, x, out, cfg),
        ReductionOp::Mean => Err(Error::DType {
            message: format!("mean(): no kernel for {}", T::DTYPE),
        }),
    }
}

/// Executes the reduction plan into `out`'s dense storage.
fn into<T, R>(
    r: R,
    plan: &crate::iter::Plan<i64>,
    x: &Tensor<T>,
    out: &AnyTensor,
    cfg: &ExecConfig,
) -> Result<()>
where
    T: Element,
    R: Reducer<T>,
    R::Out: AnyElement,
{
    let o = <R::Out as AnyElement>::get(out)
        .ok_or_else(|| Error::invalid("internal: reduction output of another dtype"))?;
    let numel = usize::try_from(o.numel()).map_err(|_| Error::overflow("numel"))?;
    let offset = usize::try_from(o.storage_offset()).map_err(|_| Error::overflow("offset"))?;
    if !crate::layout::is_contiguous(o.sizes(), o.strides())?
        || offset
            .checked_add(numel)
            .is_none_or(|end| end > o.storage().len())
    {
        return Err(Error::invalid(
            "internal: a reduction output must be contiguous inside its storage",
        ));
    }
    if x.storage().same(o.storage()) {
        return Err(Error::MemoryOverlap {
            message: "a reduction cannot write into the storage it reads".into(),
        });
    }
    let _write = o.storage().write()?;
    let base = o.storage().ptr();
    // SAFETY: the write guard excludes every other access to this storage (through any
    // handle, on any thread) until it drops at the end of this function, after the slice's
    // last use, and `offset + numel <= len` was checked above. The elements are first
    // written through the raw pointer (the storage may be uninitialized pool memory, and a
    // `&mut [bool]` over arbitrary bytes would be invalid), then viewed as a slice.
    let slice = unsafe {
        for i in offset..offset + numel {
            base.add(i).write(R::Out::default());
        }
        std::slice::from_raw_parts_mut(base.add(offset), numel)
    };
    crate::kernel::execute_reduction(r, plan, x, slice, cfg)
}
