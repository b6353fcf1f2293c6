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
//! # Fusion
//!
//! [`plan_fusion`] decides, from the program and its traced layouts, which elementwise
//! chains run as one pass ([`FusionPlan`], serde-serializable for artifacts; printed as
//! `steps 2-3 fused`); [`run_program_fused`] runs them (rules and evaluator in `fuse.rs`):
//! an intermediate read by one later elementwise step of the same sizes and dtype is never
//! materialized. Softmax fuses `sub, exp` (its `exp` has two readers), layer norm `add eps,
//! sqrt`, the conv epilogue `add, relu`. Not done: evaluating a chain inside a reduction
//! loop (layer norm's `mul(c, c)` feeding `mean` still materializes).
//!
//! Measured with `symstride bench --threads 2 --reps 7` on this machine while shared
//! (load average 10-12 on 2 cores, so medians are noisy; the 2-thread copy of 64 MiB, the
//! reference, took 28 ms instead of its usual ~3 ms), medians (min):
//!
//! | scenario | step by step | fused |
//! |---|---|---|
//! | `conv_epilogue_cl_6M` | 21.9 ms (12.1) | 19.3 ms (4.7) |
//! | `layernorm_16M` | 170.5 ms (158.8) | 166.9 ms (148.4) |
//! | `softmax_lastdim_16M` | 255.3 ms (251.8) | 282.5 ms (259.4) |
//!
//! The first version allocated the per-block operand lists on the heap: the conv epilogue
//! (rows of 64 channels) ran at 50.7 ms fused against 16.7 ms step by step; small inline
//! vectors fixed it. Softmax is bound by `exp` (16M scalar `expf` calls), which fusion does
//! not change; it does not reach `torch.softmax` (219 ms under the same load, PyTorch eager
//! composite 487 ms; `docs/bench/torch_programs.py` times these in PyTorch).
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
//! | `exec.rs` | [`execute`]: inputs by the fill formula, every step on real data (the per-element reference) |
//! | `fuse.rs` | [`FusionPlan`]: which elementwise chains run as one pass ([`plan_fusion`], [`check_fusion`]), and the block evaluator |
//! | `run.rs` | [`run_program`]: every step through the vectorized kernels, views aliasing, dead buffers reused |
//! | `golden.rs` | answers to golden `program` lines and their comparison (tolerances) |

mod exec;
mod fuse;
pub mod golden;
mod run;
mod spec;
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

pub use exec::{execute, fill_value, Data, Executed};
pub use fuse::{check_fusion, plan_fusion, FusedChain, FusionPlan, BLOCK as FUSED_BLOCK};
pub use run::{
    fill_inputs, run_program, run_program_fused, run_program_stats, tensor_values, RunStats,
};
pub use spec::{InputStrides, Program, ProgramInput, Step, StepArg, StepOp};
pub use trace::{concrete, run_steps, trace, ProgramTrace, Value};
