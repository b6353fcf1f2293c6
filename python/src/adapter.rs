//! The seam between the Python `Artifact` and the crate's program layer.
//!
//! Everything `program.rs` needs from the crate goes through this file, so only this file
//! follows the crate's program API:
//! * compiling: [`ProgramArtifact::compile`] (one specialization traced at the hints:
//!   guards + every value's layout expressions) or, with `cover`,
//!   [`ProgramArtifact::compile_cover`] (traces until every binding is proved admitted);
//!   saving and loading its version-2 JSON
//!   (loading re-traces and rejects edited guards or layouts);
//! * checking a binding: [`ProgramArtifact::check`] (the admitting specialization or the
//!   closest one's first failing guard); for a binding none admits, the layouts (or the
//!   error) come from [`concrete`], the same generic code at `i64`;
//! * running: [`ProgramDispatcher::run_opts`] over the artifact (guards checked in order,
//!   the first admitting specialization's layouts and kernel plans instantiated, a miss
//!   re-traced and cached; its fused chains one pass each unless `fuse` is off; views
//!   alias, ops/reductions/copies through the vectorized kernels, dead intermediates
//!   reused). Inputs whose strides are not the spec's layouts at the binding (which no
//!   specialization describes) run from a plan for the strides they have, which the
//!   dispatcher caches by those layouts and counts (`layout_hits`, `layout_misses`), so
//!   any non-negative strides run; an empty input is the spec's layout whatever its
//!   strides (numpy 2 gives empty arrays zero strides).

use serde_json::Value as Json;
use std::ptr::NonNull;
use symstride::kernel::ExecConfig;
use symstride::op::AnyTensor;
use symstride::program::{
    concrete, Fuse, FusionPlan, Program, ProgramArtifact, ProgramDispatcher, Value,
};
use symstride::sym::{Bindings, Guard};
use symstride::tensor::{Element, Storage, Tensor};
use symstride::{Error, Result};

/// A compiled program: the artifact (what `compile` made or `load` read) and the
/// dispatcher that runs it (which may add re-traced specializations to its cache).
#[derive(Debug)]
pub struct Compiled {
    /// The validated program.
    pub program: Program,
    /// The compiled specializations.
    pub artifact: ProgramArtifact,
    dispatcher: ProgramDispatcher,
}

/// What [`Compiled::run`] did.
#[derive(Debug)]
pub struct Ran {
    /// The outputs, in the program's output order.
    pub outputs: Vec<AnyTensor>,
    /// Every value's layout (inputs, then steps).
    pub values: Vec<Value<i64>>,
}

/// What [`Compiled::check`] found for a binding.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The first specialization whose guards admit the binding.
    pub specialization: Option<usize>,
    /// When none admits it: the closest specialization's first failing guard.
    pub failed_guard: Option<Guard>,
    /// The value layouts at the binding (inputs, then steps), or the program's error there.
    pub values: std::result::Result<Vec<Value<i64>>, Error>,
}

impl Compiled {
    fn new(artifact: ProgramArtifact) -> Result<Compiled> {
        Ok(Compiled {
            program: artifact.program.clone(),
            dispatcher: ProgramDispatcher::new(artifact.clone())?,
            artifact,
        })
    }

    /// Parses, validates and traces `spec` at its hints; with `cover`, adds traces until
    /// a case split proves every binding (sizes `>= 0`) admitted (the crate's `--cover`).
    pub fn compile(spec: &Json, cover: bool) -> Result<Compiled> {
        let p = Program::from_value(spec)?;
        Compiled::new(if cover {
            ProgramArtifact::compile_cover(&p, &symstride::aot::CoverOptions::default())?
        } else {
            ProgramArtifact::compile(&p)?
        })
    }

    /// The guards of specialization `k`.
    pub fn guards(&self, k: usize) -> Option<&[Guard]> {
        self.artifact.specializations.get(k).map(|s| &s.guards[..])
    }

    /// The number of specializations.
    pub fn num_specializations(&self) -> usize {
        self.artifact.specializations.len()
    }

    /// The dispatcher's counters: hits, misses, re-traces, cached specializations.
    pub fn stats(&self) -> symstride::aot::DispatchStats {
        self.dispatcher.stats()
    }

    /// Symbol values in program order ([`Program::values_from_pairs`]: every symbol
    /// bound, no name that is not a symbol, none negative; the CLI's messages).
    fn values_of(&self, b: &Bindings) -> Result<Vec<i64>> {
        let pairs: Vec<(&str, i64)> = b.iter().collect();
        self.program.values_from_pairs(&pairs)
    }

    /// Which specialization admits `b` and the layouts at `b` (its instantiation, or the
    /// program's error there).
    pub fn check(&self, b: &Bindings) -> Result<Checked> {
        let vals = self.values_of(b)?;
        let c = self.artifact.check(&vals)?;
        let failed_guard = c
            .failed_guard
            .and_then(|(k, i)| self.artifact.specializations.get(k)?.guards.get(i).cloned());
        let values = match c.values {
            Some(v) => Ok(v),
            // Not admitted, or admitted by an error specialization: the concrete run says
            // what happens (its error carries PyTorch's message with the real sizes).
            None => concrete(&self.program, b),
        };
        Ok(Checked {
            specialization: c.specialization,
            failed_guard,
            values,
        })
    }

    /// Runs the program on `inputs` (bound to `b`) through the dispatcher
    /// ([`ProgramDispatcher::run_opts`]): a specialization when their strides are the
    /// spec's layouts (an empty input's strides are not compared), else the plan for the
    /// layouts they have (cached by those layouts). With `retrace == false`, a binding no
    /// specialization admits (or inputs in another layout than the spec's) is `Ok(None)`,
    /// and nothing runs.
    pub fn run(
        &self,
        b: &Bindings,
        inputs: Vec<AnyTensor>,
        retrace: bool,
        fuse: bool,
        cfg: &ExecConfig,
    ) -> Result<Option<Ran>> {
        // The binding's messages first (unknown or negative values).
        self.values_of(b)?;
        let fuse = if fuse { Fuse::Chains } else { Fuse::StepByStep };
        Ok(self
            .dispatcher
            .run_opts(inputs, cfg, fuse, retrace)?
            .map(|r| Ran {
                outputs: r.outputs,
                values: r.values,
            }))
    }

    /// The fusion plan of specialization `k` (empty for an error specialization).
    pub fn fusion(&self, k: usize) -> Option<&FusionPlan> {
        self.artifact.specializations.get(k).map(|s| &s.fusion)
    }

    /// The artifact file (JSON, format version 2).
    pub fn to_json(&self) -> String {
        self.artifact.to_json()
    }

    /// Loads an artifact file: verified (re-traced) by the crate's loader.
    pub fn from_json(text: &str) -> Result<Compiled> {
        Compiled::new(ProgramArtifact::from_json(text)?)
    }
}

/// A storage over memory owned by `owner`, as a tensor of `sizes`/`strides` (elements).
///
/// # Safety
/// `ptr` must be aligned for `T` and valid for reads of every element the layout addresses
/// (`len` elements from `ptr`), holding valid values of `T`, for as long as `owner` lives;
/// nothing may write that memory while a kernel runs on it.
pub unsafe fn external_tensor<T: Element>(
    ptr: *mut T,
    len: usize,
    sizes: &[i64],
    strides: &[i64],
    owner: Box<dyn std::any::Any + Send + Sync>,
) -> Result<Tensor<T>> {
    let ptr = NonNull::new(ptr).unwrap_or(NonNull::dangling());
    // SAFETY: the caller's contract is `from_external`'s.
    let storage = unsafe { Storage::from_external(ptr, len, owner) };
    Tensor::from_storage(storage, sizes, strides, 0)
}

/// `$body` with `$t` bound to the tensor inside an [`AnyTensor`].
macro_rules! each {
    ($x:expr, |$t:ident| $body:expr) => {
        match $x {
            AnyTensor::Bool($t) => $body,
            AnyTensor::U8($t) => $body,
            AnyTensor::I32($t) => $body,
            AnyTensor::I64($t) => $body,
            AnyTensor::F32($t) => $body,
            AnyTensor::F64($t) => $body,
        }
    };
}
pub(crate) use each;
