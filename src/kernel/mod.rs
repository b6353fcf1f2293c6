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
//! consecutive tiles continue the same source rows (sequential reads, few TLB misses). The
//! default edge of 64 was measured against 32 and 128. With few channels (NCHW → NHWC, C = 3)
//! a tile is one contiguous output block and is written with a single copy. Same-type 4-byte
//! tiles are read into the buffer with 4×4 SSE transposes rather than one scalar load/store
//! per element.
//!
//! **8×8 AVX2 direct transposes** (`copy::transpose_8x8_direct`, issue 15): on a CPU with AVX2
//! (run-time detection, [`Simd::Auto`]), same-type 4-byte tiles whose sides are multiples of 8
//! skip the buffer: 8 source rows are loaded 8 elements at a time, transposed in registers
//! (24 shuffles) and stored as 8 output row segments (the visiting order was since changed to
//! strips, below), each output line completed by consecutive stores, which are non-temporal
//! (`vmovntps`) when the output is large and its rows 32-byte aligned. Ragged tiles, other
//! element sizes, casts and [`Simd::Baseline`] keep the buffered path. `perf annotate` of the
//! buffered tile had put most of its samples on the source loads of its first phase.
//!
//! **Paired blocks** (after the honest copy reference): two 8×8 blocks side by side are
//! transposed before storing, so each 64-byte output line is written by two back-to-back
//! stores (one write-combining buffer open per line, instead of eight half-written lines
//! between consecutive blocks); a ragged last 8 columns keeps the single block.
//!
//! **16-row strips with software prefetch** (after the paired blocks): the direct
//! path now walks each tile in strips of 16 source rows (the two blocks of a pair), each strip
//! along the source rows, and prefetches (`prefetcht0`) every strip row 256 bytes (64
//! elements) ahead of its loads; the buffered 4×4 SSE phase 1 prefetches the same way.
//! Why: 16 rows 16 KiB apart are 16 strided streams the hardware prefetchers do not follow,
//! so without the hints each block waited on its misses one row at a time; within a strip
//! every source line is used up by two consecutive blocks (no re-read after eviction, where
//! the old order walked 64 rows per block column and at a power-of-two stride every row's
//! line maps to the same L1 set).
//!
//! Tiles, strips, prefetch distances and store kinds were chosen by probes and bench runs
//! recorded in `docs/perf/2026-11-kernels.md` (*Tiled copies*); the guest measured there
//! exposed no hardware counters, so the TLB/cache explanation rests on timings.
//!
//! # The copy reference and contiguous copies (`loops::stream_copy`)
//! Every "vs copy" ratio of `symstride bench` is against `memcpy_64MiB`, now
//! [`parallel_copy`]: one chunk per thread, each copied with AVX2 loads and non-temporal
//! stores (SSE2 `movntdq` without AVX2), one `sfence` per chunk. A copy with plain stores
//! (glibc's `memcpy` for large chunks, PyTorch's `copy_`) reads every destination line
//! before writing it (read for ownership), three memory streams for two, and measured
//! 25-30% slower; a reference slower than the fastest copy would flatter every ratio
//! (`docs/perf/2026-11-kernels.md`, *The copy reference*). The same `stream_copy` now
//! serves same-type contiguous copies of at least 8 MiB in the
//! copy kernel (`contiguous`, `to`, `copy_` of dense tensors: formerly `memcpy`), the
//! 512-byte bursts of `loops::streamed`, and the fused chains' block stores.
//!
//! # Fast paths of issue 15
//! Each fast path below exists because a measurement showed what it buys; the figures, the
//! variants tried and the conditions they were measured under are in
//! `docs/perf/2026-11-kernels.md` (*Fast paths*).
//! * **Non-temporal stores for large contiguous outputs** (`loops::streamed`): when an op's
//!   output is at least 8 MiB, contiguous rows are computed 512 bytes at a time into an
//!   L1 buffer and copied out with `movntdq`, skipping the read for ownership of each output
//!   line (a binary op then moves 3 streams instead of 4). One `sfence` per parallel range,
//!   not per row (a fence per 1 KiB row halved the bandwidth). The burst loop, the op's
//!   `contiguous` body and its element function are inlined into one
//!   `#[target_feature(enable = "avx2")]` twin (`loops::Burst::StreamAvx2`), chosen per call
//!   under [`Simd::Auto`] when the CPU reports AVX2 ([`Simd::Baseline`] keeps the SSE2
//!   build), and since a burst is whole lines at a 64-byte-aligned destination it calls the
//!   streaming line loop itself, inlined. Transposes stream their tile rows the same way when
//!   the output is large and the rows are whole, aligned lines. Sequential input streams are
//!   left to the hardware prefetchers except for read-heavy ops (below); an op whose bytes
//!   are nearly all reads (`eq`) cannot reach a copy's bandwidth by this measure, because
//!   reading alone does not.
//! * **Rows with a per-row scalar operand**: a contiguous output row whose inputs are each
//!   contiguous or a stride-0 scalar (`x - mean` over the last dim, a per-row `div`) takes
//!   the same 512-byte non-temporal bursts and AVX2 twin as all-contiguous rows
//!   (`with_dense_src`, the accessor shifted per burst) instead of the plain monomorphized
//!   loop (SSE2 and plain stores in the baseline build, which `perf` showed dominating a
//!   fused layer norm).
//! * **Prefetch for read-heavy ops and the copy; the same-bytes reference.** Ops that read
//!   more than twice what they write (`eq` f32 → bool, `where`) and the contiguous copy
//!   prefetch their contiguous inputs 4 KiB ahead (`loops::PREFETCH_AHEAD`,
//!   `loops::read_heavy`): the hardware prefetchers alone leave a read-mostly stream short of
//!   what the memory delivers, while ops that write as much as they read gain nothing. The
//!   copy takes it because the reference must be the fastest copy measured. Copy bandwidth
//!   depends on the working set (a copy that stays in a large L3 is faster than one streaming
//!   from DRAM), so the bench also reports each scenario against a copy of its own bytes
//!   (`cli::bench`).
//! * **AVX-512 twin for 64-bit integer outputs** (`loops::Burst::StreamAvx512`): AVX2 has
//!   no 64-bit multiply (LLVM emits three `vpmuludq` per vector); AVX-512 DQ's `vpmullq`
//!   brings an i64 multiply to a copy's bandwidth. Other types keep the AVX2 twin.
//! * **Narrow-channel interleave** (`copy::narrow_copy`): NCHW → NHWC with C ≤ 8 is dims
//!   `[C, H·W, N]` with the output dense over the first two. Instead of 4×64 tiles (3 channels
//!   fill 3 rows of each 64×64 tile, so per-tile overhead dominated), each unit reads C source
//!   rows of up to 4096 elements side by side and writes their interleave as one output
//!   stream; for 4-byte same-type copies 4 positions at a time by 4×4 SSE transposes (channels
//!   padded with zeros, overlapping 16-byte stores that a later store overwrites),
//!   monomorphized per C.
//! * **Re-laid-out broadcast operands** (`loops::relayout_input`): an input whose innermost
//!   iteration stride is neither 0 nor one element and that is reused at least 4 times (the
//!   contiguous `[c, h, w]` operand of a channels-last `[n, c, h, w]` add: stride `h·w` along
//!   C, reused `n` times) is copied once (through the tiled copy) into a buffer dense in
//!   iteration order, the plan is pointed at it and re-coalesced, so the whole op runs as
//!   contiguous vectorized rows (it was a scalar strided loop at about 0.6x of the copy).
//!
//! # `exp` (`vmath`)
//! `FloatElement::exp` (so the `Exp` and `Sigmoid` element functions, the op table's
//! kernels and the fused block evaluator) is `vmath::exp`: Cody–Waite range reduction, a
//! degree-7 near-minimax polynomial (f32; Taylor degree 13 for f64), `2^n` built from
//! exponent bits, all branch-free, so the element loops vectorize (SSE2 in the baseline
//! build, AVX2 in the `Burst::StreamAvx2` twin and the block evaluator's twin) where libm's
//! `expf` was a call per element. Accuracy in `vmath`; timings in `docs/perf/2026-11-programs.md`.
//! Tried and not kept: the Taylor coefficients for f32 (max error 1.02 ulp over all f32
//! against 0.952 with the fitted ones, same cost). Not tried: FMA (the AVX2 and baseline
//! builds would then differ in the last bit, and the baseline's `mul_add` is a libm call).
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
pub(crate) mod vmath;

pub use config::{ExecConfig, Simd};
pub use copy::{execute_copy, Cast};
pub use loops::{execute_map1, execute_map2, execute_map3, parallel_copy, Map1, Map2, Map3};
pub(crate) use loops::{store_fence, stream_copy, stream_output};
pub use ops::{
    abs, add, add_out, addcmul, copy_into, div, div_out, exp, map1, map1_out, map2, map2_out, map3,
    map3_out, maximum, maximum_out, minimum, minimum_out, mul, mul_out, neg, relu, sub, sub_out,
    where_, Abs, Add, Addcmul, BitAnd, BitElement, BitNot, BitOr, BitXor, Ceil, Clamp, Cos, Div, Erf,
    Exp, Expm1, Floor, Gelu, GeluTanh, Hardsigmoid, Hardswish, LeakyRelu, Log, Log1p, Maximum,
    Minimum, Mul, Neg, Pow, Reciprocal, Relu, Remainder, Round, Rsqrt, Sigmoid, Sign, Silu, Sin,
    Sqrt, Sub, Tanh, Trunc, Where,
};
pub use reduce::{execute_reduction, reduce, ReduceArgs, BLOCK, LANES, LEAF, ROW_LEAF};
pub(crate) use reduce::{fold_run, Cascade, Isa};
