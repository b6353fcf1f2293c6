//! Execution: concrete tensors through a dispatcher's plans and the kernel layer, plus the
//! helpers `run`/`demo` use (inputs of a spec's layouts, a naive reference).

use super::dispatch::{empty_plan, Dispatched, Dispatcher};
use super::spec::{Op, Spec};
use crate::error::{Error, Result};
use crate::iter::Plan;
use crate::kernel::ExecConfig;
use crate::tensor::{Element, Scalar, Storage, Tensor};

/// The result of [`Dispatcher::execute`].
#[derive(Debug)]
pub struct Execution {
    /// The output tensor (laid out as the plan's output strides).
    pub output: Tensor<f32>,
    /// How the call was dispatched.
    pub dispatched: Dispatched,
}

fn layouts<'a>(inputs: &'a [&Tensor<f32>]) -> Vec<(&'a [i64], &'a [i64])> {
    inputs.iter().map(|t| (t.sizes(), t.strides())).collect()
}

fn run_kernel(
    op: Op,
    plan: &Plan<i64>,
    out: &Storage<f32>,
    inputs: &[&Tensor<f32>],
    cfg: &ExecConfig,
) -> Result<()> {
    if inputs.len() != op.arity() {
        return Err(Error::invalid(format!(
            "op {op} takes {} inputs, got {}",
            op.arity(),
            inputs.len()
        )));
    }
    let storages: Vec<&Storage<f32>> = inputs.iter().map(|t| t.storage()).collect();
    crate::op::run_kernel_f32(op, plan, out, &storages, cfg)
}

/// Puts the real storage offsets into an instantiated plan (traces use offset 0; offsets
/// take part in no decision of an elementwise build without a given output).
fn set_offsets(plan: &mut Plan<i64>, inputs: &[&Tensor<f32>]) -> Result<()> {
    if plan.operands.len() != inputs.len() + 1 {
        return Err(Error::invalid(format!(
            "plan has {} operands for {} inputs",
            plan.operands.len(),
            inputs.len()
        )));
    }
    plan.operands[0].offset = 0;
    for (op, t) in plan.operands[1..].iter_mut().zip(inputs) {
        op.offset = t.storage_offset();
    }
    Ok(())
}

impl Dispatcher {
    /// Dispatches `inputs` (see [`Dispatcher::dispatch`]), allocates the output with the
    /// instantiated layout and runs the kernel. The kernel validates the plan against the
    /// storages (bounds, overlap) before touching memory.
    pub fn execute(&self, inputs: &[&Tensor<f32>], cfg: &ExecConfig) -> Result<Execution> {
        let mut plan = empty_plan();
        self.execute_with(inputs, cfg, &mut plan)
    }

    /// [`Dispatcher::execute`] with a caller-provided plan buffer (no plan allocation on a hit).
    pub fn execute_with(
        &self,
        inputs: &[&Tensor<f32>],
        cfg: &ExecConfig,
        plan: &mut Plan<i64>,
    ) -> Result<Execution> {
        let dispatched = self.dispatch(&layouts(inputs), plan)?;
        set_offsets(plan, inputs)?;
        let sizes = plan.broadcast_shape.clone();
        let strides = plan.output_strides.first().cloned().unwrap_or_default();
        // The output storage is left uninitialized, so every element must be written: the
        // layout is dense (storage length == numel), the plan visits numel points, and the
        // kernel checks that the output has no internal overlap and stays in bounds, so the
        // points map one-to-one onto the storage.
        if !crate::layout::is_non_overlapping_and_dense(&sizes, &strides)? {
            return Err(Error::layout(
                "output",
                format!(
                    "the plan's output layout (sizes {sizes:?}, strides {strides:?}) is not dense"
                ),
            ));
        }
        let numel = crate::layout::numel(&sizes);
        if plan.numel() != numel {
            return Err(Error::invalid(format!(
                "the plan iterates {} points for an output of {numel} elements",
                plan.numel()
            )));
        }
        let len = usize::try_from(numel).map_err(|_| Error::overflow("output numel"))?;
        let out = Storage::<f32>::uninit(len)?;
        run_kernel(self.spec().op, plan, &out, inputs, cfg)?;
        let output = Tensor::from_storage(out, &sizes, &strides, 0)?;
        Ok(Execution { output, dispatched })
    }

    /// Runs the kernel into an existing output (e.g. for timing repeats), which must have
    /// exactly the plan's output layout.
    pub fn execute_into(
        &self,
        inputs: &[&Tensor<f32>],
        output: &Tensor<f32>,
        cfg: &ExecConfig,
        plan: &mut Plan<i64>,
    ) -> Result<Dispatched> {
        let dispatched = self.dispatch(&layouts(inputs), plan)?;
        set_offsets(plan, inputs)?;
        plan.operands[0].offset = output.storage_offset();
        if output.sizes() != &plan.broadcast_shape[..]
            || plan.output_strides.first().map(|s| &s[..]) != Some(output.strides())
        {
            return Err(Error::layout(
                "output",
                format!(
                    "sizes {:?} strides {:?}, but the plan writes sizes {:?} strides {:?}",
                    output.sizes(),
                    output.strides(),
                    plan.broadcast_shape,
                    plan.output_strides.first()
                ),
            ));
        }
        run_kernel(self.spec().op, plan, output.storage(), inputs, cfg)?;
        Ok(dispatched)
    }
}

/// Inputs of `spec`'s layouts at symbol values `values`, filled with deterministic
/// pseudo-random data from `seed`.
pub fn random_inputs(spec: &Spec, values: &[i64], seed: u64) -> Result<Vec<Tensor<f32>>> {
    let mut rng = crate::testing::XorShift::new(seed);
    let mut next = move || rng.unit() * 2.0 - 1.0;
    spec.concrete_inputs(values)?
        .into_iter()
        .map(|(sizes, strides)| {
            let extent = extent(&sizes, &strides)?;
            // A large binding must be an error, not an allocation-failure abort.
            let mut data: Vec<f32> = Vec::new();
            data.try_reserve_exact(extent).map_err(|_| {
                Error::invalid(format!(
                    "out of memory allocating an input of {extent} elements (sizes {sizes:?})"
                ))
            })?;
            data.extend((0..extent).map(|_| next()));
            Tensor::from_storage(Storage::from_vec(data), &sizes, &strides, 0)
        })
        .collect()
}

/// Elements a layout spans (0 when empty).
fn extent(sizes: &[i64], strides: &[i64]) -> Result<usize> {
    if sizes.contains(&0) {
        return Ok(0);
    }
    let mut last: i64 = 0;
    for (&n, &s) in sizes.iter().zip(strides) {
        last = (n - 1)
            .checked_mul(s)
            .and_then(|x| last.checked_add(x))
            .ok_or_else(|| Error::overflow("input extent"))?;
    }
    usize::try_from(last + 1).map_err(|_| Error::overflow("input extent"))
}

/// Checks `output` against a naive multi-index evaluation of `op` on `inputs` (broadcast
/// right-aligned, every element through its own strides). Returns the number of elements
/// compared, or an error naming the first mismatching index.
pub fn verify(op: Op, inputs: &[&Tensor<f32>], output: &Tensor<f32>) -> Result<usize> {
    let shape = output.sizes().to_vec();
    let rank = shape.len();
    // Everything in logical (row-major) order; each input indexed through its own
    // row-major strides, 0 on broadcast dims.
    let data: Vec<Vec<f32>> = inputs.iter().map(|t| t.to_vec()).collect::<Result<_>>()?;
    let out = output.to_vec()?;
    let istrides: Vec<Vec<i64>> = inputs
        .iter()
        .map(|t| {
            let c = crate::layout::contiguous_strides(t.sizes());
            t.sizes()
                .iter()
                .zip(c)
                .map(|(&n, s)| if n == 1 { 0 } else { s })
                .collect()
        })
        .collect();
    if shape.contains(&0) {
        return Ok(0);
    }
    let mut index = vec![0i64; rank];
    let mut count = 0usize;
    loop {
        let mut vals = [0f32; 3];
        for (k, t) in inputs.iter().enumerate() {
            let r = t.dim();
            let off: i64 = (0..r).map(|d| index[rank - r + d] * istrides[k][d]).sum();
            vals[k] = data[k][off as usize];
        }
        // The op table's reference, in f64, rounded to f32.
        let args: Vec<Scalar> = vals[..inputs.len()]
            .iter()
            .map(|&v| Scalar::Float(v as f64))
            .collect();
        let want = f32::from_scalar((op.def().reference)(&args));
        let got = out[count];
        // The registry's tolerance: exact for the ops that round once.
        let tol = (op.def().tolerance * (1.0 + want.abs() as f64)) as f32;
        let ok = (got.is_nan() && want.is_nan()) || (got - want).abs() <= tol;
        if !ok {
            return Err(Error::invalid(format!(
                "output mismatch at index {index:?}: kernel {got}, reference {want}"
            )));
        }
        count += 1;
        let mut d = rank;
        loop {
            if d == 0 {
                return Ok(count);
            }
            d -= 1;
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
}
