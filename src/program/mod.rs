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
//! tolerances.
//!
//! # Layout of the module
//!
//! | file | what |
//! |---|---|
//! | `spec.rs` | [`Program`]: parsing and static validation (names, arities, keywords from the op, reduction and view tables) |
//! | `trace.rs` | [`run_steps`] over `Int`, [`concrete`], the symbolic [`trace`] and its instantiation |
//! | `exec.rs` | [`execute`]: inputs by the fill formula, every step on real data |
//! | `golden.rs` | answers to golden `program` lines and their comparison (tolerances) |

mod exec;
pub mod golden;
mod spec;
mod trace;

pub use exec::{execute, fill_value, Data, Executed};
pub use spec::{InputStrides, Program, ProgramInput, Step, StepArg, StepOp};
pub use trace::{concrete, run_steps, trace, ProgramTrace, Value};
