//! Kernels: execute an iteration plan ([`crate::iter::Plan`]) over real data, fast and safely.
//!
//! # Layers
//! * **Plan execution** ([`execute_map1`], [`execute_map2`], [`execute_map3`],
//!   [`execute_copy`]): a plan plus the operands' storages. The plan is validated first —
//!   element sizes, byte strides that are multiples of the element size, every addressed byte
//!   inside its storage (checked `i64`, min/max over the strided extent, so negative strides are
//!   handled), outputs without internal overlap, outputs either disjoint from or identical to
//!   any operand in the same storage (`Error::MemoryOverlap` otherwise). The storages are then
//!   borrowed (outputs exclusively) for the call. Every `unsafe` pointer operation below relies
//!   on that validation; see `exec::Prepared`.
//! * **Tensor ops** ([`map1`]/[`map2`]/[`map3`] and `_out` variants, [`add`], [`where_`],
//!   [`addcmul`], `Tensor::copy_`, `contiguous`, `to`, `deep_clone`, `cast`): broadcast,
//!   allocate the output with TensorIterator's layout rule, build the plan, execute.
//! * **Reductions** ([`reduce`], [`execute_reduction`]): a [`crate::reduce::Reducer`] over the
//!   plan of [`crate::iter::reduction_plan`] (reduced dims innermost); see the `reduce`
//!   module of this directory for the inner/outer/split strategies and the accuracy of sums.
//! * **User element functions**: implement [`Map1`]/[`Map2`]/[`Map3`] (or pass a closure). The
//!   optional `contiguous` method is a vectorized body for contiguous, non-aliasing rows.
//!
//! # Loops
//! The iteration space (innermost dim first) is walked in 2-D steps from any linear start
//! (PyTorch's DimCounter), so any range `[begin, end)` can go to a thread. Each step calls a
//! 1-D inner loop chosen from the innermost byte strides: all contiguous → slice body (the
//! compiler vectorizes it); stride-0 inputs → a scalar hoisted out of an otherwise contiguous
//! loop; otherwise a general strided loop.
//!
//! Verified, not assumed: `perf annotate` of `symstride bench --only add_contig_16M_out`
//! shows the f32 add row loop as packed `movups`/`addps` (SSE2, the default x86-64 target;
//! build with `-C target-cpu=native` for AVX), unrolled twice.
//!
//! # Parallelism and the grain size
//! Work below `2 × grain_size` elements (default 32768, [`ExecConfig`]) runs on the calling
//! thread: a rayon hand-off costs microseconds, more than a small op. Larger work is cut into at
//! most `tasks_per_thread × threads` ranges of at least `grain_size` elements, run on the
//! current rayon pool (install a local pool to choose the thread count). Outputs written by
//! different ranges are disjoint because outputs have no internal overlap.
//!
//! # Why tiles
//! A copy whose output and input disagree on the fastest dimension (transpose, NCHW↔NHWC)
//! reads one element per cache line if walked in output order, and at power-of-two strides
//! every line of a column maps to the same cache set. [`execute_copy`] then moves the input's
//! fastest dimension next to the output's and copies `tile × tile` blocks through a small
//! buffer: rows of the source are streamed in along its contiguous dimension, rows of the
//! output are streamed out along its own, so both sides use whole lines. Tiles are numbered so
//! consecutive tiles continue the same source rows (sequential reads, few TLB misses). On the
//! 4096² f32 transpose this took one thread from 65 ms (direct strided walk) to 17 ms against
//! 12 ms for a plain memcpy of the same bytes; the default edge of 64 was measured (32 and
//! 128 were 3-4× slower). With few channels (NCHW → NHWC, C = 3) a tile is one contiguous
//! output block and is written with a single copy. Same-type 4-byte tiles are read into the
//! buffer with 4×4 SSE transposes rather than one scalar load/store per element: at 2 threads
//! on the shared machine this took `copy_transpose_16M` from 19-24 ms (2.9-3.5× memcpy) to
//! 13 ms (1.9×), and `to_channels_last_1M` from 1.0 ms to 0.65 ms.
//!
//! Tried and not kept (no measured gain): non-temporal stores for the tile output rows, and,
//! for elementwise ops whose input is strided along the innermost dimension but contiguous
//! along the next (the broadcast NCHW operand of `add_cl_bcast`), gathering 64×16 blocks of
//! that input into a buffer so rows run vectorized. The plain strided loop is already at
//! memory speed there (single-thread minimum 4.3 ms against ~4.5 ms gathered).
//!
//! # Allocated outputs
//! Ops that allocate their output get it from the storage pool (see [`crate::tensor`]): a fresh
//! 64 MiB output would pay 16k page faults, as much time again as the op. Pool misses are first
//! touched by the kernel itself, in parallel, so their faults are spread over the threads.
//!
//! # Plans
//! Tensor ops build their plans with the TensorIterator build ([`crate::iter`]): allocated
//! outputs take the layout the build computes (a channels-last input gives a channels-last
//! output), given outputs are never resized. Callers with their own plans (e.g. a plan
//! specialized ahead of time from a symbolic build) call the `execute_*` entry points directly.

mod config;
mod copy;
mod exec;
mod loops;
mod ops;
mod reduce;

pub use config::{ExecConfig, Simd};
pub use copy::{execute_copy, Cast};
pub use loops::{execute_map1, execute_map2, execute_map3, Map1, Map2, Map3};
pub use ops::{
    abs, add, add_out, addcmul, copy_into, div, div_out, exp, map1, map1_out, map2, map2_out, map3,
    map3_out, maximum, maximum_out, minimum, minimum_out, mul, mul_out, neg, relu, sub, sub_out,
    where_, Abs, Add, Addcmul, Div, Exp, Maximum, Minimum, Mul, Neg, Relu, Sigmoid, Sqrt, Sub,
    Tanh, Where,
};
pub use reduce::{execute_reduction, reduce, ReduceArgs, BLOCK, LANES, LEAF, ROW_LEAF};
