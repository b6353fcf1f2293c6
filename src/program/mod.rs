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
//! # Against PyTorch
//!
//! One trace per public program at its hints, checked on the 200 bindings per program of
//! `program_coverage.jsonl` (every admitted binding's outputs equal PyTorch's; guards count
//! the symbol ranges; a guard the others imply is dropped, `s >= 1` with `s != 1` is
//! `s >= 2`). Printed by `cargo test --test programs -- --nocapture` (the dev profile, this
//! machine, shared; PyTorch's time is its recorded `torch_trace_s`):
//!
//! | program | guards ours/PyTorch | coverage ours/PyTorch | trace time ours/PyTorch |
//! |---|---|---|---|
//! | attn_head_split | 3/3 | 0.560/0.560 | 0.21 ms/46.4 ms |
//! | cl_conv_epilogue | 5/8 | 0.365/0.365 | 0.31 ms/67.9 ms |
//! | softmax_lastdim | 4/5 | 0.610/0.480 | 0.23 ms/23.1 ms |
//! | layer_norm_seq_first | 5/6 | 0.440/0.440 | 0.51 ms/68.8 ms |
//! | glu_lastdim | 2/3 | 0.695/0.585 | 0.27 ms/22.0 ms |
//! | nhwc_to_nchw | 4/7 | 0.335/0.335 | 0.15 ms/17.7 ms |
//! | flatten_transpose_copy | 3/5 | 0.355/0.355 | 0.17 ms/171.9 ms |
//! | int_bool_promotion | 2/4 | 0.615/0.615 | 0.28 ms/43.5 ms |
//! | unsqueeze_expand_select | 4/6 | 0.405/0.405 | 0.12 ms/39.6 ms |
//! | mask_count_argmax | 3/6 | 0.505/0.505 | 0.11 ms/26.5 ms |
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
//! | `run.rs` | [`run_program`]: every step through the vectorized kernels, views aliasing, dead buffers reused |
//! | `golden.rs` | answers to golden `program` lines and their comparison (tolerances) |

mod artifact;
mod dispatch;
mod exec;
pub mod golden;
mod run;
mod spec;
mod specialize;
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
pub use dispatch::{
    compile_demo_program, input_layouts, ProgramDispatch, ProgramDispatcher, ProgramValues,
    DEMO_PROGRAM_JSON,
};
pub use exec::{execute, fill_value, Data, Executed};
pub use run::{fill_inputs, run_program, run_program_stats, tensor_values, RunStats};
pub use spec::{InputStrides, Program, ProgramInput, Step, StepArg, StepOp};
pub use specialize::{specialize, ProgramSpecialization};
pub use trace::{concrete, run_steps, trace, ProgramTrace, Value};
