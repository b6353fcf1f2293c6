//! Ahead-of-time specialization: compile an elementwise kernel for a dynamic-shape signature,
//! see exactly which guards it depends on, and run concrete tensors through it.
//!
//! # The flow
//!
//! 1. **Spec** ([`Spec`]): the op (`neg`, `add`, `addcmul`), each input's sizes (integers
//!    or symbol names) and strides (a memory format, or one expression per dimension), and a
//!    hint per symbol. Parsing validates everything a trace or a dispatch will rely on:
//!    arity, ranks against layouts, known symbols, non-negative hints, and that every symbol
//!    can be *bound* from concrete tensors (it is some size, or some whole stride).
//! 2. **Trace** ([`trace`]): the TensorIterator build ([`crate::iter`]) runs on
//!    [`SymInt`](crate::sym::SymInt)s whose hints are the trace point. Every decision the
//!    build cannot make from the symbols' ranges alone records a guard with the build
//!    step's reason (`compute_perm: ...`, `coalesce_dimensions: ...`), already with
//!    known-positive factors cancelled (`c < c*w` is recorded as `w >= 2`). The guards are
//!    then rewritten into an equivalent, smaller, readable list (an implied guard is
//!    dropped, `s == k` substituted; see `guards.rs`). The result is a [`Specialization`]: the
//!    guards and the whole [`Plan`](crate::iter::Plan) (iteration shape, per-operand byte
//!    strides and offsets, perm, output sizes and strides) as expressions over the symbols.
//! 3. **Artifact** ([`Artifact`]): the spec plus one or more specializations, as JSON with a
//!    format name and version. `--cover` ([`CompileOptions::cover`]) adds specializations
//!    until a case split over the guards proves that every binding is admitted, by a plan
//!    or by an *error specialization* (shapes that do not broadcast); see `cover.rs` and
//!    [`Coverage`].
//! 4. **Dispatch** ([`Dispatcher`]): bind the symbols from the concrete inputs, check that
//!    the inputs really have the spec's layouts at those values, run each specialization's
//!    guards in order, instantiate the first that passes with compiled plan programs; on a
//!    miss trace at the concrete values and cache the result. Guards are evaluated by
//!    [`CompiledGuards`](crate::sym::CompiledGuards) (single-symbol guards as range checks,
//!    flat programs otherwise, exact fallback), which also names the first failing guard;
//!    the plan is one straight-line program with shared subexpressions written into the
//!    caller's plan. A cached dispatch of the seed spec is about 1400 instructions; a
//!    compile, about 0.1-0.3 ms.
//! 5. **Execute** ([`Dispatcher::execute`]): allocate the output with the instantiated layout and run
//!    the kernel over the plan; the kernel layer validates the plan against the real
//!    storages (bounds, overlap) before touching memory.
//!
//! # Soundness
//!
//! The claim: *if all guards of a specialization hold at a binding, its plan evaluated at
//! that binding equals the plan a fresh concrete build computes for that binding.* The
//! argument, step by step:
//!
//! * The iterator build is one generic function over [`Int`](crate::Int); the concrete and
//!   the symbolic run execute the same code. They can only diverge at branches, and every
//!   branch on a value goes through [`Bool::guard`](crate::Bool::guard) (or its
//!   `guard_or_*` variants, which for backed symbols also guard).
//! * A symbolic branch either is decided statically (from the symbols' declared ranges and
//!   the facts of earlier guards), or records the condition as it evaluated at the hints.
//!   At a binding satisfying the recorded guards and the declared ranges, each branch
//!   therefore goes the way it went in the trace, so the concrete run performs the same
//!   sequence of arithmetic operations, and the symbolic results (exact polynomial
//!   expressions) evaluate to the concrete results.
//! * Declared ranges are assumptions without a recorded guard. The trace declares a symbol
//!   traced at a positive value as `>= 1` (see [`symbol_min`]) and adds that range as an
//!   explicit guard (`c >= 1`, reason `symbol range: ...`), so it is checked at dispatch
//!   like every other guard. A symbol traced at 0 is declared `>= 0`, which binding
//!   enforces for every size. At a point where some size is 0 and every input has the same
//!   sizes and a memory format's strides, *every* size symbol is declared `>= 0` (not
//!   specialized): PyTorch answers all zero patterns of such inputs by one rule (format
//!   strides written with `Max(s, 1)`), so one trace covers the `2^k - 1` zero patterns
//!   that specializing each zero would split into separate plans.
//! * The build's *validation* (non-negative sizes and strides, no i64 overflow) runs on the
//!   hints and records nothing. Dispatch binds only from validated tensors, evaluation of
//!   every plan expression is exact and reports overflow instead of wrapping, and the
//!   kernel layer bounds-checks the instantiated plan against the storages before any
//!   access: a binding outside what validation covered can produce an error, never an
//!   out-of-bounds access.
//! * Operand offsets never take part in a decision of an elementwise build without a given
//!   output, so inputs are traced at offset 0 and execution substitutes the real offsets.
//!
//! The property is tested directly (`tests/aot.rs`): random specs, random bindings admitted
//! by the guards, instantiated plan == fresh concrete build.
//!
//! # Weak guards, and size 0 and 1
//!
//! Symbols are not specialized at 0 or 1 (PyTorch's tracer turns every size-1 symbol into a
//! constant, and guards every other size `>= 2`). Here a symbol traced at 5 only gets
//! `s != 1` or `s >= 2` when a decision actually depended on it (a broadcast, a stride
//! comparison, a coalescing step), and one traced at 1 gets `s == 1` only then; otherwise
//! the single specialization also serves size 1. Size 0 is excluded by the range guard of
//! a specialization traced at a positive value. A symbol traced at 0 enters the build as
//! the constant 0 with the guard `s == 0` (as PyTorch specializes 0): `--cover` traces
//! those classes, and dispatch retraces for them on demand.
//!
//! On the public specs the single specialization admits exactly what PyTorch's guards
//! admit for five of them (their decisions really need `s >= 2`: a size-1 dimension changes
//! the permutation or the coalescing, hence the plan) and 212 against 81 of 300 bindings
//! for `cl_plus_cl`, whose only guard is `h*w != 1 && c != 1` (fast setup).
//!
//! `--cover` builds the cover from the guards themselves: a case split over every
//! comparison appearing in a guard finds a region no specialization admits, a small search
//! finds a binding there, the spec is traced at it, and the split resumes where it stopped
//! (guard sets only grow, so closed branches stay closed) until it proves that the
//! disjunction of all guard sets holds on the whole domain (`"complete": true`, re-proved
//! on load) or gives up on a region (`"complete": false` with the region). Specs with free
//! stride symbols multiply classes (each order of the strides is a permutation): the
//! orderings are closed as difference constraints so that the split sees the equalities and
//! contradictions they imply. A trace whose
//! plan an existing specialization already computes (same structure, every entry provably
//! equal under the new guards) widens that specialization's guards instead of adding one.
//! A binding outside an incomplete cover is still served correctly by a re-trace at dispatch.
//!
//! # Artifacts are untrusted input
//!
//! Loading ([`Artifact::from_json`]) checks the format and version, parses every
//! expression, checks symbols against the spec and the plan's structure (operand count,
//! ranks, perm, element sizes), then evaluates each specialization at the values it was
//! traced at: its guards must hold there and its plan must equal a fresh concrete build.
//! Then each specialization is re-traced at its trace point (`retrace.rs`; in parallel over
//! the specializations): the stored guards must imply the traced guards and the stored
//! plan must equal the traced plan as expressions, so a weakened or deleted guard, or a
//! plan expression edited to agree only at the trace point, is rejected, naming the
//! specialization and the guard. A `complete` cover claim is re-proved.
//!
//! **Verification hints.** The compile runs the loader's verification on every
//! specialization it writes (so it never writes what the loader would reject) and stores
//! the points that verification re-traced at besides the trace point (`verify_points`).
//! A load replays the same case split, so each region needing a point finds one among
//! them; a region none lies in is first tried for a (cheap) proof that it is empty, the
//! only way the compile's verification went past it. Hints are not trusted: one is used
//! only for a region it lies in, where any point would do, and a file without them loads
//! by searching as before. Each stored point also adds one trace to the load's budget
//! (otherwise 32 traces, and 4 per branch of a stored disjunction), so a widened
//! specialization whose region splits into more traced classes than that still loads,
//! at a cost linear in the file: until these hints, covers of rank-6 broadcasts such as
//! `[a,b,c,d,e,f] + [f]` (one specialization needs 139 traces) or `+ [d,e,f]` (151) were
//! written by `--cover` and then refused by their own loader for want of budget; a
//! compile now verifies with a budget of 4096 and fails rather than write such a file.
//! With the hints a load is mostly the traces themselves rather than a search for points
//! (a profile and timings of `artifact_load_100`: `docs/perf/2026-11-cover.md`).
//!
//! The simplification is skipped where it proves nothing: the simplified guards
//! are equivalent to the guards as recorded (range guards plus the environment's), so the
//! verifier first asks whether the region's facts imply each *recorded* guard (one
//! decision each, under facts assumed once) and the plans are equal, and simplifies a
//! trace's guards only when that does not settle the region (`trace::RecordedGuards`).
//! That check only accepts, so what is rejected and why is unchanged. 72 of the 100
//! specializations of the bench artifact verify without simplifying (the others merge
//! classes into a disjunction or a widened guard, which no single trace's recorded guards
//! follow from). A load's time, with and without these shortcuts, is recorded in
//! `docs/perf/2026-11-cover.md` (*Loading artifacts*).

mod artifact;
mod cover;
mod cube;
mod dispatch;
mod exec;
mod guards;
mod memory;
mod program;
mod prover;
mod retrace;
mod spec;
mod specialization;
mod trace;

pub(crate) use artifact::{art, in_specialization, load_traced_at, load_verify_points, strings, RawGuard};
pub use artifact::{Artifact, CheckOutcome, ARTIFACT_FORMAT, FORMAT_VERSION};
pub use cover::{
    compile_cover, compile_specializations, cover_domain, uncovered_region, CompileOptions,
    CoverOptions, Coverage, MAX_SPECIALIZATIONS, SPLIT_AFTER_TRACES, SPLIT_TRACES_PER_ENTRY,
};
pub(crate) use dispatch::Binder;
pub use dispatch::{empty_plan, DispatchStats, Dispatched, Dispatcher, Values};
pub use exec::{random_inputs, verify, Execution};
pub use memory::{estimate_run_memory, fmt_bytes, parse_bytes, MemoryEstimate};
pub(crate) use program::ExprProgram;
pub use prover::CoverTarget;
pub(crate) use prover::{cover, equal_under, uncovered_by, CoverLimits};
pub(crate) use retrace::{
    verify_stored_pooled, Hints, Mismatch, Pairs, Retrace, Traced,
};
pub(crate) use guards::simplify_guards;
pub(crate) use trace::TracedGuards;
pub use spec::{
    is_spec_op, InputSpec, Op, SizeSpec, Spec, StrideSpec, COVER_10_SYMBOLS_SPEC_JSON,
    COVER_FREE_STRIDES_3D_SPEC_JSON, SEED_SPEC_JSON,
};
pub use specialization::Specialization;
pub use trace::{build_concrete, concrete_plan, symbol_min, trace, trace_or_error, ELEMENT_SIZE};

use crate::error::Result;

/// Benchmark scenario `compile_seed_spec`: one compile (parse + trace at the hints) of the
/// seed spec ([`SEED_SPEC_JSON`]).
pub fn compile_seed_spec() -> Result<Artifact> {
    let spec = Spec::from_json(SEED_SPEC_JSON)?;
    Artifact::compile(&spec, &CompileOptions::default())
}

/// Benchmark scenario `cover_10_symbols`: `--cover` of [`COVER_10_SYMBOLS_SPEC_JSON`] over
/// every binding, size 0 included (one trace over sizes `>= 0` answers every zero pattern of
/// same-shape, format-laid-out inputs; see [`trace`]).
pub fn compile_cover_10_symbols() -> Result<Artifact> {
    compile_cover_of(COVER_10_SYMBOLS_SPEC_JSON)
}

/// Benchmark scenario `cover_free_strides_3d`: `--cover` of
/// [`COVER_FREE_STRIDES_3D_SPEC_JSON`] over every binding (sizes and strides `>= 0`): every
/// order of the free strides is a class of its own.
pub fn compile_cover_free_strides_3d() -> Result<Artifact> {
    compile_cover_of(COVER_FREE_STRIDES_3D_SPEC_JSON)
}

fn compile_cover_of(json: &str) -> Result<Artifact> {
    let spec = Spec::from_json(json)?;
    Artifact::compile(
        &spec,
        &CompileOptions {
            cover: true,
            ..CompileOptions::default()
        },
    )
}

/// The spec of benchmark scenario `artifact_load_100`: an `add` of two 4-D tensors whose 8
/// sizes are independent (four broadcasting pairs, each equal, or either side 1 or 0), so
/// its `--cover` compile has more than 100 specializations (it stops at 100).
pub const ARTIFACT_100_SPEC_JSON: &str = r#"{"name":"four_pairs","op":"add","inputs":[{"sizes":["a","b","c","d"],"layout":"contiguous"},{"sizes":["e","f","g","h"],"layout":"contiguous"}],"hints":{"a":2,"b":3,"c":4,"d":5,"e":2,"f":3,"g":4,"h":5}}"#;

/// The artifact benchmark scenario `artifact_load_100` loads ([`Artifact::from_json`]): the
/// first 100 specializations of the `--cover` compile of [`ARTIFACT_100_SPEC_JSON`], as
/// JSON. An error when the cover has fewer than 100.
pub fn artifact_100_json() -> Result<String> {
    let spec = Spec::from_json(ARTIFACT_100_SPEC_JSON)?;
    // Plans not widened over sizes 1: widened, this cover has 83 specializations, and the
    // scenario measures the load of 100.
    let options = CompileOptions {
        cover: true,
        max_specializations: 100,
        widen_size_1: false,
        ..CompileOptions::default()
    };
    let mut a = Artifact::compile(&spec, &options)?;
    if a.specializations.len() < 100 {
        return Err(crate::error::Error::invalid(format!(
            "the cover of `artifact_load_100`'s spec has {} specializations, fewer than 100",
            a.specializations.len()
        )));
    }
    a.specializations.truncate(100);
    Ok(a.to_json())
}

/// Benchmark scenario `dispatch_cached_4d`: a dispatcher over the compiled seed spec and the
/// concrete input layouts of one call (`[2, 8, 16, 32]` channels-last + `[8, 16, 32]`
/// contiguous), so that [`SeedDispatch::run`] measures binding, the guard check and the
/// plan instantiation of a cache hit, without any kernel.
#[derive(Debug)]
pub struct SeedDispatch {
    /// The dispatcher.
    pub dispatcher: Dispatcher,
    /// Input layouts `(sizes, strides)`.
    pub inputs: Vec<(Vec<i64>, Vec<i64>)>,
    /// The plan instantiated into (reused across calls).
    pub plan: crate::iter::Plan<i64>,
}

impl SeedDispatch {
    /// Compiles the seed spec and prepares one call's inputs.
    pub fn new() -> Result<SeedDispatch> {
        let artifact = compile_seed_spec()?;
        let inputs = artifact.spec.concrete_inputs(&[8, 16, 32])?;
        let dispatcher = Dispatcher::new(artifact)?;
        let mut s = SeedDispatch {
            dispatcher,
            inputs,
            plan: empty_plan(),
        };
        s.run()?;
        Ok(s)
    }

    /// One dispatch (bind + guards + instantiate); returns the specialization index.
    #[inline]
    pub fn run(&mut self) -> Result<usize> {
        let a = (&self.inputs[0].0[..], &self.inputs[0].1[..]);
        let b = (&self.inputs[1].0[..], &self.inputs[1].1[..]);
        Ok(self
            .dispatcher
            .dispatch(&[a, b], &mut self.plan)?
            .specialization)
    }
}
