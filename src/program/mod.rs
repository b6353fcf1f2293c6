//! Programs: chains of views, ops, reductions and copies over named values, traced once.
//!
//! # Why programs
//! A compiler does not compile one `add`; it compiles `x.view(b, s, h, d).transpose(1, 2) +
//! bias` followed by a reduction. A [`Program`] is that graph in the golden "Programs"
//! format. The whole chain is traced once over symbols in one `ShapeEnv` ([`trace`]), so the
//! intermediate layouts stay symbolic and one guard set covers every step; each guard's
//! reason names the step that asked (`step 3 (add y = add(qt, bias)): ...`). The same
//! generic code at `i64` ([`concrete`]) is the eager answer every trace is checked against.
//!
//! # Compile, load, dispatch
//!
//! A trace becomes a [`ProgramSpecialization`] ([`specialize`]): its guards compiled as the
//! single-op pipeline compiles them, and every value's sizes, strides, storage offset and
//! storage size compiled into ONE straight-line program with subexpressions shared across
//! steps, instantiated into a reused `Vec` without allocation. A [`ProgramArtifact`]
//! (format version 2; [`AnyArtifact`] also reads the single-op version 1) stores the program
//! and its specializations (one, or a `--cover` of them with `complete`/`domain`/`uncovered`)
//! and trusts nothing on load: every specialization is re-traced through the single-op
//! loader's verifier (`aot/retrace.rs`, generic over what is traced), so a weakened or
//! deleted guard, an edited layout expression or a dropped specialization is rejected with
//! the specialization and the guard or value named. The [`ProgramDispatcher`] binds the
//! symbols from the inputs' layouts (the single-op binder), runs the guards, instantiates
//! every value, re-traces on a miss, and executes through the kernels
//! ([`ProgramDispatcher::run_with`]: the specialization's fused chains, every other step
//! from its stored kernel plan, through the one executor [`run_program_with`]). The trace
//! records TensorIterator's kernel-plan decisions as plan conditions, not guards
//! ([`ProgramTrace::plan_conditions`]): a step whose conditions fail at a binding is planned
//! from its concrete layouts instead.
//! A cached dispatch of the 8-step [`DEMO_PROGRAM_JSON`] (bind + guards + all values, no
//! kernel) takes about a tenth of a microsecond (`symstride bench --only program`).
//!
//! Execution ([`execute`]) makes the inputs with the golden fill formula and runs each step
//! on real data: views allocate nothing and alias their base (so outputs that are views of
//! inputs alias them, as in PyTorch); ops, reductions and copies write new storages laid out
//! as the trace says. Elements are computed with the op table's and the reduction table's
//! per-element references (the oracles the vectorized kernels are tested against), in the
//! computation dtype the op planning chose, so the values are PyTorch's up to the golden
//! tolerances. That executor is the oracle; [`run_program`] is the real path: the same
//! layouts, every op, reduction and copy through the vectorized kernels, dead intermediate
//! buffers reused (the liveness rule is in `run.rs`). Golden `program` lines are answered
//! through [`run_program`], and tests compare it with [`execute`].
//!
//! # Fusion
//!
//! [`plan_fusion`] decides, from the program and its traced layouts, which chains run as one
//! pass ([`FusionPlan`], serde-serializable for artifacts; printed as `steps 2-3 fused`, or
//! `steps 2-4 fused (reduction 4 in the loop, 3 written)`); the executor runs them when
//! [`RunOptions::fusion`] is given (rules in `fuse.rs`, the block evaluator in `blocks.rs`):
//! an intermediate read by one later elementwise step of the same sizes and dtype is never
//! materialized, and a chain feeding a `sum`/`mean`/`amax`/`amin`/`prod` of its root is
//! evaluated inside the reduction's loop (each block folded as it is computed, with the
//! reduction kernels' leaf fold and pairwise cascade, so an f32 sum still accumulates in
//! f64). Softmax runs `sub, exp, sum` as one pass that writes `exp` once (the `div` reads it
//! again) and reduces it from registers; layer norm evaluates `mul(c, c)` inside the second
//! `mean` and fuses `add eps, sqrt`; the conv epilogue fuses `add, relu`, its rows of 64
//! channels merged into one row along which the `[64, 1, 1]` bias is periodic (one
//! pre-tiled buffer per task instead of a block per 64-element row).
//!
//! Above the chains, a **row segment** (`rows.rs`, [`RowSegment`]) is a run of steps that
//! reduce over the last dim with `keepdim` and broadcast the result back: softmax
//! (`amax, sub, exp, sum, div`) and layer norm (all seven steps) are each one segment,
//! evaluated one row at a time with the row in L1, so the input is read once and only the
//! values needed later are written (`steps 1-5 fused row by row at rows of 32-16384
//! elements (5 written)`). A run takes it when its rows have [`ROW_MIN`]..=[`ROW_MAX`]
//! elements, else the chains inside it ([`FusionPlan::steps_fused_at`]).
//!
//! The plan is decided at compile time: each [`ProgramSpecialization`] holds the plan of
//! its symbolic trace (sizes compared as expressions, so it holds at every binding the
//! guards admit; the property tests check it equals the plan decided on the concrete
//! layouts there, and that the dispatcher's fused run equals its step-by-step run). The
//! artifact stores it per specialization and the loader verifies it against the plan of
//! the re-trace at the trace point (a file without it gets that plan); `symstride guards`
//! and `check` show it, `symstride run` and Python's `Artifact.run` use it (`--no-fuse`,
//! `run_with(..., fuse=False)`: step by step).
//!
//! Why fusion pays where it does: the conv epilogue's chain reads and writes its operand
//! once; layer norm saves writing and re-reading `sq` by evaluating `mul(c, c)` inside the
//! `mean`; a reduction chain's written root (softmax's `exp`) is stored with plain stores,
//! not non-temporally, so that the following `div` finds it in the cache; softmax was
//! bound by `exp` until `exp` was vectorized (`kernel::vmath`); row segments read the
//! input once and write only what is needed later. The per-block operand lists are fixed
//! arrays (a collected list per block cost as much as the member loops) and blocks are 1024
//! values (the buffers still fit L1). Tried for reduction chains and not taken: recomputing
//! a root that has other readers in each reader's chain (same bytes read, the chain
//! evaluated twice). The rounds of measurements and the comparisons with PyTorch are in
//! `docs/perf/2026-11-programs.md`; `scripts/torch_bench.py` times these programs in
//! PyTorch.
//!
//! # Against PyTorch
//!
//! One trace per public program at its hints is checked on the 200 bindings per program of
//! `program_coverage.jsonl`: every admitted binding's outputs equal PyTorch's. The guards
//! are simplified as a single op's are (`aot::simplify_guards`: a guard the others imply is
//! dropped, each guard is weakened where the others allow, `s >= 1` with `s != 1` is
//! `s >= 2`, so `b >= 1, s >= 1, b != 1 && s != 1` reads `b >= 2 && s >= 2`). The cover
//! ([`cover_program`], sizes `>= 0`) is proved complete for every program, admits every one
//! of the 200 row bindings, and the admitting trace's outputs (or error category) are
//! PyTorch's at each. `cargo test --release --test programs -- --nocapture` prints a table
//! of guards, coverage, trace times and cover sizes against PyTorch's (a recorded run:
//! `docs/perf/2026-11-programs.md`).
//!
//! # Layout of the module
//!
//! | file | what |
//! |---|---|
//! | `spec.rs` | [`Program`]: parsing and static validation (names, arities, keywords from the op, reduction and view tables) |
//! | `trace.rs` | [`run_steps`] over `Int`, [`concrete`], the symbolic [`trace`] and its instantiation |
//! | `specialize.rs` | [`ProgramSpecialization`]: a trace's guards compiled and every step's value in one straight-line program |
//! | `dispatch.rs` | [`ProgramDispatcher`]: bind (the single-op binder), first admitting specialization, instantiate every value; re-trace on a miss |
//! | `artifact.rs` | [`ProgramArtifact`] (format version 2), verified on load by re-tracing; [`AnyArtifact`] reads version 1 or 2 |
//! | `exec.rs` | [`execute`]: inputs by the fill formula, every step on real data (the per-element reference) |
//! | `fuse.rs` | [`FusionPlan`]: which chains run as one pass, elementwise or feeding a reduction ([`plan_fusion`], [`check_fusion`]) |
//! | `blocks.rs` | the block evaluator of fused chains: memory-order walk, periodic broadcast operands, writes or folds each block |
//! | `rows.rs` | row segments ([`RowSegment`]): steps reducing over the last dim and broadcasting back, evaluated row by row |
//! | `run.rs` | [`run_program`]: every step through the vectorized kernels, views aliasing, dead buffers reused |
//! | `cover.rs` | [`cover_program`]: the `--cover` proof (`aot`'s, generic over [`crate::aot::CoverTarget`]) over a program's traces |
//! | `golden.rs` | answers to golden `program` lines and their comparison (tolerances) |

mod artifact;
mod blocks;
mod cover;
mod dispatch;
mod exec;
mod fuse;
pub mod golden;
mod rows;
mod run;
mod spec;
mod specialize;
mod stepplan;
mod trace;

/// The program of the golden README (`x.view(b, s, 4, 16).transpose(1, 2) + bias`, then a
/// keepdim sum), shared by the unit tests of the spec and the trace.
#[cfg(test)]
const HEADS: &str = r#"{"name": "heads_bias_sum",
 "inputs": [{"name": "x", "sizes": ["b", "s", 64], "layout": "contiguous", "dtype": "float32"},
            {"name": "bias", "sizes": [4, 1, 16], "layout": "contiguous"}],
 "hints": {"b": 2, "s": 5},
 "steps": [{"let": "q",  "op": "view",      "args": ["x", ["b", "s", 4, 16]]},
           {"let": "qt", "op": "transpose", "args": ["q", 1, 2]},
           {"let": "y",  "op": "add",       "args": ["qt", "bias"]},
           {"let": "z",  "op": "sum",       "args": ["y", [-1]], "keepdim": true}],
 "outputs": ["z", "qt"]}"#;

pub use artifact::{AnyArtifact, ProgramArtifact, ProgramCheck, PROGRAM_FORMAT_VERSION};
pub use cover::{cover_program, program_cover_domain, program_uncovered_region, ProgramCover};
pub use dispatch::{
    compile_demo_program, input_layouts, Fuse, ProgramDispatch, ProgramDispatcher, ProgramRun,
    ProgramValues, DEMO_PROGRAM_JSON, LAYOUT_PLANS_MAX,
};
pub use exec::{execute, execute_within, fill_value, Data, Executed};
pub use fuse::{
    check_fusion, plan_fusion, ChainKind, FusedChain, FusionPlan, BLOCK as FUSED_BLOCK,
};
pub use rows::{RowSegment, ROW_MAX, ROW_MIN};
#[cfg(test)]
pub(crate) use blocks::MAX_ARITY as MAX_FUSED_ARITY;
pub use run::{
    fill_inputs, run_program, run_program_fused, run_program_planned, run_program_stats,
    run_program_with, tensor_values, RunOptions, RunStats,
};
pub use spec::{InputStrides, Program, ProgramInput, Step, StepArg, StepOp};
pub use specialize::{specialize, ProgramSpecialization};
pub use stepplan::StepPlan;
pub use trace::{
    concrete, concrete_planned, run_steps, run_steps_planned, trace, PlanConditions, ProgramTrace,
    StepPlans, Value,
};
