//! The seam between the Python `Artifact` and the crate's program layer.
//!
//! Everything `program.rs` needs from the crate goes through this file: compiling a
//! program spec into specializations (guards + traced layouts), checking a binding,
//! saving/loading, and executing a program on tensors. It is written over what the crate
//! offers today (`program::trace`, `ProgramTrace::admits/instantiate`, `program::concrete`,
//! `op::call`, `kernel::copy_into`), so that only this file changes when the crate's
//! program artifacts, dispatcher and kernel executor arrive.
//!
//! Today:
//! * a compiled program has one specialization: the trace at the spec's hints;
//! * a binding its guards do not admit is re-planned concretely (`program::concrete`, the
//!   same generic code at `i64`), never guessed;
//! * a saved artifact holds the spec and the guards; loading re-traces the spec and
//!   rejects a file whose guards differ from the re-traced ones;
//! * execution runs views as tensor views (no allocation), ops through `op::call` (the
//!   vectorized kernels) and copies through `kernel::copy_into`; every result's layout is
//!   checked against the traced layout.

use serde_json::{json, Value as Json};
use std::ptr::NonNull;
use symstride::kernel::{copy_into, ExecConfig};
use symstride::op::{self, AnyTensor, Input, Output};
use symstride::program::{
    concrete, trace, InputStrides, Program, ProgramTrace, StepArg, StepOp, Value,
};
use symstride::sym::{Bindings, Expr, Guard};
use symstride::tensor::{Element, Storage, Tensor};
use symstride::{DType, Error, Result};

/// The artifact file's format name.
const FORMAT: &str = "symstride-python-program";
/// The artifact file's format version.
const VERSION: u64 = 1;

/// A compiled program: the spec and its specializations.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The validated program.
    pub program: Program,
    /// The spec as given (JSON), saved with the artifact.
    pub spec: Json,
    /// The specializations, tried in order.
    pub specializations: Vec<ProgramTrace>,
}

/// How a binding was planned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Planned {
    /// The guards of this specialization admit the binding; its layouts were instantiated.
    Specialization(usize),
    /// No specialization admits it; the program was planned concretely for it.
    Replanned,
}

/// What [`Compiled::check`] found for a binding.
#[derive(Clone, Debug)]
pub struct Checked {
    /// The first specialization whose guards admit the binding.
    pub specialization: Option<usize>,
    /// When none admits it: the first failing guard of the first specialization.
    pub failed_guard: Option<Guard>,
    /// The value layouts at the binding (inputs, then steps), or the program's error there.
    pub values: std::result::Result<Vec<Value<i64>>, Error>,
}

impl Compiled {
    /// Parses, validates and traces `spec` at its hints. `cover` is refused until the
    /// crate can cover programs.
    pub fn compile(spec: &Json, cover: bool) -> Result<Compiled> {
        if cover {
            return Err(Error::invalid(
                "compile(cover=True): covering programs is not available in this build of symstride (only the trace at the hints; other bindings are re-planned at run time)",
            ));
        }
        let program = Program::from_value(spec)?;
        let hints = program.hint_bindings();
        if hints.len() != program.symbols.len() {
            return Err(Error::symbol(format!(
                "the spec needs a hint for every symbol ({})",
                program.symbols.join(", ")
            )));
        }
        let t = trace(&program, &hints)?;
        Ok(Compiled {
            program,
            spec: spec.clone(),
            specializations: vec![t],
        })
    }

    /// The specialization admitting `b`, if any.
    fn admitting(&self, b: &Bindings) -> Result<Option<usize>> {
        for (i, s) in self.specializations.iter().enumerate() {
            if s.admits(b)? {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }

    /// Which specialization admits `b` and the layouts at `b` (its instantiation, or the
    /// program's error there).
    pub fn check(&self, b: &Bindings) -> Result<Checked> {
        for s in &self.program.symbols {
            match b.get(s) {
                Some(v) if v < 0 => {
                    return Err(Error::symbol(format!(
                        "binding `{s}` = {v}: sizes are non-negative"
                    )))
                }
                Some(_) => {}
                None => return Err(Error::symbol(format!("no value for symbol `{s}`"))),
            }
        }
        match self.admitting(b)? {
            Some(i) => Ok(Checked {
                specialization: Some(i),
                failed_guard: None,
                values: self.specializations[i].instantiate(b),
            }),
            None => {
                let failed = self.specializations.first().and_then(|s| {
                    s.guards
                        .guards
                        .iter()
                        .find(|g| !matches!(g.cond.eval(b), Ok(true)))
                        .cloned()
                });
                Ok(Checked {
                    specialization: None,
                    failed_guard: failed,
                    values: concrete(&self.program, b),
                })
            }
        }
    }

    /// The layouts of every value at `b` for inputs of `strides` (elements), and how they
    /// were planned. Inputs whose strides differ from the spec's layouts at `b` are planned
    /// for the strides they have.
    pub fn plan(&self, b: &Bindings, strides: &[Vec<i64>]) -> Result<(Vec<Value<i64>>, Planned)> {
        if let Some(i) = self.admitting(b)? {
            let values = self.specializations[i].instantiate(b)?;
            // Exactly the spec's strides (also on size-1 dimensions, where numpy may put
            // anything): the executor checks inputs against the layouts exactly.
            let same = values.iter().zip(strides).all(|(v, s)| v.strides == *s);
            if same {
                return Ok((values, Planned::Specialization(i)));
            }
        }
        let mut p = self.program.clone();
        for (input, s) in p.inputs.iter_mut().zip(strides) {
            input.strides = InputStrides::Exprs(s.iter().map(|&v| Expr::constant(v)).collect());
        }
        Ok((concrete(&p, b)?, Planned::Replanned))
    }

    /// The artifact file (JSON).
    pub fn to_json(&self) -> String {
        let specs: Vec<Json> = self
            .specializations
            .iter()
            .map(|s| {
                json!({"guards": s.guards.guards.iter()
                    .map(|g| json!({"cond": g.cond.to_string(), "reason": g.reason}))
                    .collect::<Vec<_>>()})
            })
            .collect();
        let v = json!({"format": FORMAT, "version": VERSION, "spec": self.spec,
                       "specializations": specs});
        serde_json::to_string_pretty(&v).unwrap_or_default()
    }

    /// Loads an artifact file: re-traces the spec and checks the file's guards are the
    /// re-traced ones (an edited guard is rejected).
    pub fn from_json(text: &str) -> Result<Compiled> {
        let bad = |m: String| Error::Artifact { message: m };
        let v: Json = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        if v.get("format").and_then(Json::as_str) != Some(FORMAT) {
            return Err(bad(format!("not a `{FORMAT}` file")));
        }
        if v.get("version").and_then(Json::as_u64) != Some(VERSION) {
            return Err(bad(format!(
                "version {} (this build reads version {VERSION})",
                v.get("version").unwrap_or(&Json::Null)
            )));
        }
        let spec = v.get("spec").ok_or_else(|| bad("no `spec`".into()))?;
        let fresh = Compiled::compile(spec, false)?;
        let stored = v
            .get("specializations")
            .and_then(Json::as_array)
            .ok_or_else(|| bad("no `specializations`".into()))?;
        if stored.len() != fresh.specializations.len() {
            return Err(bad(format!(
                "{} specializations, but the spec traces to {}",
                stored.len(),
                fresh.specializations.len()
            )));
        }
        for (i, (s, t)) in stored.iter().zip(&fresh.specializations).enumerate() {
            let conds: Vec<&str> = s
                .get("guards")
                .and_then(Json::as_array)
                .map(|gs| {
                    gs.iter()
                        .filter_map(|g| g.get("cond").and_then(Json::as_str))
                        .collect()
                })
                .unwrap_or_default();
            let want: Vec<String> = t.guards.guards.iter().map(|g| g.cond.to_string()).collect();
            if conds != want {
                return Err(bad(format!(
                    "specialization {i}: its guards [{}] are not the traced guards [{}]",
                    conds.join(", "),
                    want.join(", ")
                )));
            }
        }
        Ok(fresh)
    }
}

/// Strides equal where they matter: dimensions of size 1 (or an empty tensor) are never
/// stepped over, so their strides may differ.
fn same_strides(sizes: &[i64], want: &[i64], got: &[i64]) -> bool {
    if want.len() != got.len() {
        return false;
    }
    if sizes.contains(&0) {
        return true;
    }
    sizes
        .iter()
        .zip(want.iter().zip(got))
        .all(|(&z, (a, b))| z == 1 || a == b)
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

/// A view of `base`'s storage with `v`'s layout.
fn view_of(base: &AnyTensor, v: &Value<i64>) -> Result<AnyTensor> {
    Ok(each!(base, |t| {
        Tensor::from_storage(t.storage().clone(), &v.sizes, &v.strides, v.offset)?.into()
    }))
}

fn alloc_typed<T: Element>(v: &Value<i64>) -> Result<Tensor<T>> {
    let n = usize::try_from(v.storage_numel)
        .map_err(|_| Error::invalid("internal: negative storage size"))?;
    let s = Storage::filled(n, T::default())?;
    Tensor::from_storage(s, &v.sizes, &v.strides, v.offset)
}

/// A new storage laid out as `v` says.
pub fn alloc(v: &Value<i64>) -> Result<AnyTensor> {
    Ok(match v.dtype {
        DType::Bool => alloc_typed::<bool>(v)?.into(),
        DType::U8 => alloc_typed::<u8>(v)?.into(),
        DType::I32 => alloc_typed::<i32>(v)?.into(),
        DType::I64 => alloc_typed::<i64>(v)?.into(),
        DType::F32 => alloc_typed::<f32>(v)?.into(),
        DType::F64 => alloc_typed::<f64>(v)?.into(),
    })
}

fn check_layout(t: &AnyTensor, v: &Value<i64>, what: &str) -> Result<()> {
    if t.sizes() != v.sizes
        || t.dtype() != v.dtype
        || !same_strides(&v.sizes, &v.strides, t.strides())
    {
        return Err(Error::invalid(format!(
            "internal: {what} produced sizes {:?}, strides {:?}, {} but the plan says sizes {:?}, strides {:?}, {}",
            t.sizes(),
            t.strides(),
            t.dtype(),
            v.sizes,
            v.strides,
            v.dtype
        )));
    }
    Ok(())
}

/// Executes `p` on `inputs` laid out as `values` says (inputs, then steps); returns the
/// outputs in `p.outputs` order. Reductions are not executed by this adapter yet.
pub fn run_program(
    p: &Program,
    values: &[Value<i64>],
    inputs: Vec<AnyTensor>,
    cfg: &ExecConfig,
) -> Result<Vec<AnyTensor>> {
    let n = p.inputs.len();
    if inputs.len() != n || values.len() != n + p.steps.len() {
        return Err(Error::invalid("internal: value count"));
    }
    for (k, t) in inputs.iter().enumerate() {
        check_layout(t, &values[k], &format!("input `{}`", p.inputs[k].name))?;
    }
    let mut done: Vec<AnyTensor> = inputs;
    for (k, step) in p.steps.iter().enumerate() {
        let me = n + k;
        let v = &values[me];
        let arg = |i: usize| -> Result<&AnyTensor> {
            match step.args.get(i) {
                Some(StepArg::Value(j)) => Ok(&done[*j]),
                _ => Err(Error::invalid(format!(
                    "{}: argument {i} is not a value",
                    step.label
                ))),
            }
        };
        let t = if v.storage != me {
            // A view: the same storage as the value it aliases.
            view_of(&done[v.storage], v)?
        } else {
            match &step.op {
                StepOp::Op(o) => {
                    let args = step
                        .args
                        .iter()
                        .map(|a| match a {
                            StepArg::Value(j) => Ok(Input::Tensor(done[*j].clone())),
                            StepArg::Number(s) => Ok(Input::Scalar(*s)),
                            _ => Err(Error::invalid(format!(
                                "{}: an op argument that is neither a value nor a number",
                                step.label
                            ))),
                        })
                        .collect::<Result<Vec<_>>>()?;
                    op::call(*o, &args, Output::New, cfg)?
                }
                StepOp::Reduce(r) => {
                    return Err(Error::invalid(format!(
                        "{}: executing reductions ({r}) needs the crate's program executor, which this build does not have yet",
                        step.label
                    )))
                }
                StepOp::View(_) | StepOp::Contiguous | StepOp::Clone | StepOp::To => {
                    // A copy (also a `reshape` that could not be a view): a new storage in
                    // the planned layout, written in the source's logical order.
                    let src = arg(0)?;
                    let dst = alloc(v)?;
                    let target = if dst.sizes() == src.sizes() {
                        dst.clone()
                    } else {
                        // A reshape copy: the destination is contiguous, so viewing it with
                        // the source's sizes and contiguous strides is the same memory in
                        // the same row-major order.
                        let strides = symstride::layout::try_contiguous_strides(src.sizes())?;
                        let flat = Value {
                            sizes: src.sizes().to_vec(),
                            strides,
                            ..v.clone()
                        };
                        view_of(&dst, &flat)?
                    };
                    each!(&target, |d| each!(src, |s| copy_into(d, s, cfg)))?;
                    dst
                }
            }
        };
        check_layout(&t, v, &step.label)?;
        done.push(t);
    }
    Ok(p.outputs.iter().map(|&i| done[i].clone()).collect())
}
