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
//! **8×8 AVX2 direct transposes** (`copy::transpose_8x8_direct`, issue 15): on a CPU with AVX2
//! (run-time detection, [`Simd::Auto`]), same-type 4-byte tiles whose sides are multiples of 8
//! skip the buffer: 8 source rows are loaded 8 elements at a time, transposed in registers
//! (24 shuffles) and stored as 8 output row segments (the visiting order was since changed to
//! strips, below), each output line completed by consecutive stores, which are non-temporal
//! (`vmovntps`) when the output is large and its rows 32-byte aligned. Ragged tiles, other
//! element sizes, casts and [`Simd::Baseline`] keep the buffered path. Measured on the
//! 2-core KVM guest of 23 Nov 2026 (AMD EPYC, Zen 5: 48 KiB L1d, 1 MiB L2 per core, 32 MiB
//! L3; load average 8-10 from other agents, so process CPU time / threads): `perf annotate`
//! of the buffered tile put ~70% of its samples on the source loads of phase 1 and ~20% on
//! the non-temporal stores. A standalone probe of the 4096² f32 transpose at 2 threads
//! (medians of 15, CPU ms, copy of the same bytes 2.1-2.9 ms): buffered + NT stores (the old
//! kernel) 6.4-6.8, buffered + software prefetch of the next tile's source lines 4.1-4.5,
//! buffered without NT 7.7-8.1, **direct 8×8 + NT 3.4-4.2** (kept), direct 8×8 plain stores
//! 4.6-5.5, direct + prefetch 3.7-3.9 (within noise of direct, not kept); tiles of 32 and
//! 128 within noise of 64 for the direct path; output-row-major tile order (`b0` fastest)
//! 4.2-4.6 (not kept); transparent huge pages (`madvise`) cut the buffered kernel by ~15%
//! but did not change the direct one (not used). In the bench: `copy_transpose_16M(_out)`
//! went from 6.8-7.3 ms (2.8-3.0× the copy's time, same runs) to 4.5 ms (2.1-2.2×; target
//! at most 2.5×). The probe is not in the repository; its variants are described here.
//!
//! **Paired blocks** (after the honest copy reference): two 8×8 blocks side by side are
//! transposed before storing, so each 64-byte output line is written by two back-to-back
//! stores (one write-combining buffer open per line, instead of eight half-written lines
//! between consecutive blocks); a ragged last 8 columns keeps the single block. Same-minute
//! bench (00:47 UTC 24 Nov, `--cpu-time --reps 31`, old and new binaries alternated four
//! times each, load average ~4): `copy_transpose_16M(_out)` medians 4.27-4.98 ms (0.25-0.32x
//! the copy's bandwidth, i.e. 3.1-3.9x its time) → 3.81-4.32 ms (0.30-0.36x, 2.8-3.3x). The
//! 2.5x target is still not met against the AVX2 non-temporal copy reference.
//!
//! **16-row strips with software prefetch** (24 Nov, after the paired blocks): the direct
//! path now walks each tile in strips of 16 source rows (the two blocks of a pair), each strip
//! along the source rows, and prefetches (`prefetcht0`) every strip row 256 bytes (64
//! elements) ahead of its loads; the buffered 4×4 SSE phase 1 prefetches the same way.
//! Why: 16 rows 16 KiB apart are 16 strided streams the hardware prefetchers do not follow,
//! so without the hints each block waited on its misses one row at a time; within a strip
//! every source line is used up by two consecutive blocks (no re-read after eviction, where
//! the old order walked 64 rows per block column and at a power-of-two stride every row's
//! line maps to the same L1 set). A C probe (process CPU time / 2 threads, medians of 15,
//! AVX2 NT copy of the same bytes 1.5-2.2 ms in the same runs; load average 4-8 from other
//! agents): the old order 4.1-6.1 ms; the old order with prefetch 3.6-3.9; strips without
//! prefetch 6.4-7.2 (worse: the strip rows are the misses left alone); **strips + prefetch
//! 64 elements ahead 2.7-3.3** (kept; 48 and 96 equal, 32 and 128-256 slightly slower); 32-row
//! strips (two pairs per step) 3.4-3.7 and 64-row ones 3.6-3.9 (not kept; presumably too many
//! lines at one L1 set index for its 12 ways); tiles 128×64 or 256×64 within noise of 64×64, wider
//! tiles along the source rows (64×128 to 16×4096) 3.1-4.1; `prefetchnta` 3.0, `prefetcht1`
//! equal to t0, one prefetch per line instead of per 32-byte step equal (not kept, simpler);
//! `madvise(MADV_HUGEPAGE)` on both buffers no consistent change (not used). In the bench
//! (`--cpu-time --reps 21`, old and new binaries alternated three times each, 02:30 UTC,
//! load average 8): `copy_transpose_16M(_out)` 3.96-4.58 ms (0.31-0.34x the copy's
//! bandwidth, 2.9-3.2x its time) → 2.62-2.83 ms (0.52-0.62x, **1.6-1.9x the copy's time**;
//! target at most 2.5x: met). The buffered path (`--simd baseline`, `_out`): 6.1-6.4 ms →
//! 4.0-4.6 ms. Same minutes against PyTorch 2.15 (wall time, 03:03 UTC, load average 9.5,
//! so every wall figure is ~4x a quiet machine's): ours 12.0-14.8 ms (1.8-2.2x our copy),
//! PyTorch's `copy_transpose_16M_out` 30-39 ms and `contiguous()` 98-127 ms. The guest
//! exposes no hardware counters to `perf stat` (dTLB and LLC events "not supported"), so the
//! TLB/cache explanation above rests on the timings, not on counted misses.
//!
//! Tried and not kept in an earlier session (no measured gain): gathering 64×16 blocks of a
//! strided broadcast input into a buffer per block (single-thread minimum 4.3 ms against
//! ~4.5 ms gathered); the one-time re-layout below replaced it. Non-temporal stores for the
//! tile output rows were also tried then without a measured gain (how is not recorded);
//! measured again now, with one fence per parallel range, they are kept (see below).
//!
//! # The copy reference and contiguous copies (`loops::stream_copy`)
//! Every "vs copy" ratio of `symstride bench` is against `memcpy_64MiB`, now
//! [`parallel_copy`]: one chunk per thread, each copied with AVX2 loads and non-temporal
//! stores (SSE2 `movntdq` without AVX2), one `sfence` per chunk. Until 23 Nov 2026 it was
//! `copy_from_slice` per chunk, i.e. glibc's `memcpy`, which on this machine (2-core KVM
//! guest, AMD EPYC Zen 5, 32 MiB L3) copies the 32 MiB per-thread chunks with plain stores:
//! each destination line is read before it is written (read for ownership), three memory
//! streams for two. A standalone probe (64 MiB, 2 threads, minima of 21-31 runs, several
//! runs in the same minutes, load average 4-7): glibc `memcpy` 3.3-3.5 ms, AVX2 plain
//! stores 3.3-3.4, `rep movsb` 2.5-2.8 (medians up to 2x worse), SSE2 non-temporal
//! 2.6-3.1, **AVX2 non-temporal 2.5-2.6** (kept), PyTorch's `copy_` of the same tensors
//! (AVX2 loads and plain stores, `perf`) 3.2-3.7 right after. `madvise(MADV_HUGEPAGE)`
//! changed none of them (PyTorch's buffers are not huge pages either). So the old reference
//! was ~25-30% slow and every ratio below that was measured against it is ~1.3x too
//! flattering; the README's table is against the new one. The same `stream_copy` now
//! serves same-type contiguous copies of at least 8 MiB in the
//! copy kernel (`contiguous`, `to`, `copy_` of dense tensors: formerly `memcpy`), the
//! 512-byte bursts of `loops::streamed`, and the fused chains' block stores.
//!
//! # Fast paths of issue 15 and the measurements behind them
//! (Ratios in this list are against the **old** copy reference, glibc `memcpy`; divide them
//! by ~1.3 for the current one, or read the README's table.)
//! Measured on the shared 2-core machine (KVM, Intel Xeon with AVX-512, 4 MiB L2 per core)
//! while four other agents were compiling (load average 9-12): wall times were 5-10x the
//! quiet-machine figures and useless, so these figures are `symstride bench --threads 2
//! --cpu-time` (process CPU time / threads), each ratio against `memcpy_64MiB` of the same run.
//! Successive runs moved every figure by up to ±30%; ranges below are three full runs within
//! half an hour (the copy itself took 3.2, 2.5 and 2.3 ms of CPU time in them). The L3 is
//! 260 MiB: the copy reference (128 MiB moved) and the f32 scenarios mostly stay in it, the
//! f64/i64 scenarios (384 MiB) do not, which accounts for much of their lower ratios.
//! * **Non-temporal stores for large contiguous outputs** (`loops::streamed`): when an op's
//!   output is at least 8 MiB, contiguous rows are computed 512 bytes at a time into an
//!   L1 buffer and copied out with `movntdq`, skipping the read for ownership of each output
//!   line (a binary op then moves 3 streams instead of 4). One `sfence` per parallel range,
//!   not per row: with a fence per 1 KiB row `add_bias_16M` measured 0.54x of the copy, with
//!   one per range 1.07-1.50x. A standalone probe (2 threads, CPU time, 16M f32 add): plain
//!   stores 0.93-0.97x of the copy, buffered 512 B bursts 1.08-1.09x, 1 KiB
//!   bursts 1.02x, 4 KiB 0.97x (so 512 B was kept), a hand-written `addps`+`movntps` loop
//!   1.13x (not generic over the element function, not kept). In the bench, with everything
//!   else of this list: `add_contig_16M` 0.74-1.24x, `where_16M` 0.67-0.97x, `add_int32_16M`
//!   0.86-0.88x, `add_f64_16M` 0.63-0.88x, `eq_f32_16M` 0.62-0.82x, `mul_i64_16M` 0.54-0.76x
//!   (64-bit multiplies have no SSE2/AVX2 vector form; AVX-512 twin added on 28 Nov, below),
//!   `add_u8_16M` and `logical_and_bool_16M` 1.2-1.9x: the 90% target is met for the 1-byte
//!   types and in the better run for f32, not reliably for the others.
//!   **AVX2 bursts** (`loops::Burst::StreamAvx2`, after the honest copy reference): the
//!   burst loop of `streamed`, the op's `contiguous` body and its element function are
//!   inlined into one `#[target_feature(enable = "avx2")]` twin, chosen per call when
//!   [`Simd::Auto`] and the CPU reports AVX2 ([`Simd::Baseline`] keeps the SSE2 build), as the
//!   fused block evaluator does. Bench, 2 threads, `--cpu-time --reps 31`, medians "vs copy"
//!   against the new reference (AVX2 NT copy 1.15-1.23 ms in the same runs), two runs of the
//!   old and two of the new binary alternated in one minute (00:35 UTC 24 Nov, load average
//!   7-8 from other agents): `mul_i64_16M` 0.60-0.62x → 0.86-1.00x, `add_f64_16M` 0.68-0.81x
//!   → 0.90-0.93x, `eq_f32_16M` 0.75-0.78x → 0.86-0.90x, `where_16M` 0.71-0.73x →
//!   0.73-0.82x, `add_bias_16M` 0.85-0.86x → 0.89-0.95x, `add_contig_16M` 0.95-0.96x →
//!   0.97-1.01x, `add_int32_16M` 0.95-0.98x → 0.95-1.04x, 1-byte types 1.15-1.27x →
//!   1.25-1.39x. The 90% target now holds in these runs for every dtype except `where_16M`
//!   (bool condition + two f32 operands; not investigated further).
//!   **Burst copy-out inlined** (24 Nov, 05:00-06:00 UTC): `perf annotate` of the AVX2 burst
//!   loop showed, per 512-byte burst, two PLT `memcpy` calls (the 0-byte head and tail of
//!   `stream_copy`), each behind a `vzeroupper`, and the `is_x86_feature_detected` load;
//!   glibc's `memmove` was 1.7% of the samples. A burst is whole lines at a 64-byte-aligned
//!   destination, so `streamed` now calls the line loop itself (`stream_lines_avx2` in the
//!   AVX2 twin, `stream_lines_sse2` otherwise), inlined; `stream_copy` skips empty heads and
//!   tails. An in-process comparison (an uncommitted example: `op::call` against a
//!   hand-written AVX2 `vpaddd`/`vcmpps` + `vmovntdq` loop over the same tensors, 2 threads,
//!   each against a `parallel_copy` of the same repetition, 101 repetitions, CPU time, load
//!   average ~5): before, `add` int32 0.92-0.94x the copy's bandwidth against 0.99-1.01x
//!   for the hand-written loop, `eq` f32 0.82-0.84x against 0.88-0.90x; after, 0.93-0.98x
//!   against 0.92-1.00x and 0.85-0.86x against 0.88x. Bench (`--cpu-time --reps 21`, old
//!   and new binaries alternated six times, 05:45 UTC, load average 5.5), medians old → new:
//!   `add_int32_16M` 0.96 → 0.97x, `add_f64_16M` 0.81 → 0.95x, `mul_i64_16M` 0.86 → 0.91x,
//!   `eq_f32_16M` 0.82 → 0.86x, `where_16M` 0.81 → 0.90x, `add_contig_16M(_out)` 0.96/0.92
//!   → 0.95/0.95x, 1-byte types 1.12-1.15 → 1.28-1.31x; the low ends of the ranges rose
//!   most (`add_f64` 0.65 → 0.91, `where` 0.53 → 0.81). Three runs of the new binary
//!   each in wall time and CPU time at 06:11 UTC (load average 2.7, copy 2.4 ms wall),
//!   medians of the runs' medians, wall / CPU: `add_int32_16M` 1.00 / 1.09x, `add_f64_16M`
//!   0.97 / 1.01x, `mul_i64_16M` 0.89 / 0.94x, `eq_f32_16M` 0.87 / 0.89x, `where_16M`
//!   0.90 / 0.95x, `add_contig_16M(_out)` 0.98 / 0.97-0.99x, 1-byte types 1.27-1.42x.
//!   The 0.90x target holds for the adds and the 1-byte types; `eq_f32` and `mul_i64`
//!   stay just under it in wall time (see the limit below), `where` is at it.
//!   **27 Nov, paired ratios** (a copy timed before each run of the scenario, an interim
//!   bench; the bench now times copies right around each scenario, see `cli::bench`):
//!   three runs of 41, `add_int32_16M` 0.94-0.97x, `add_contig_16M` 0.87-0.94x; runs of
//!   15-21: `add_f64_16M` 0.92-0.98x, `mul_i64_16M` 0.75-0.88x, `eq_f32_16M` 0.73-0.87x.
//!   With the copies around each scenario, three runs that hour: `mul_i64_16M`
//!   0.78-0.84x, `eq_f32_16M` 0.86-0.91x, `add_f64_16M` 0.91-0.98x, `add_int32_16M`
//!   0.91-1.05x. A C probe in the same minutes (2 OpenMP threads, 16M
//!   elements, hand-written AVX2 loops with `vmovnt` stores, best of 15): `eq` f32 → u8
//!   0.90-0.95x of its own NT copy, the `vpmuludq` i64 multiply 0.90-0.99x, f64 add
//!   0.97-1.03x; the crate's fastest runs are 5% (`add_f64`: 9.3 ms against 8.6-9.2),
//!   ~10% (`eq`: 3.99 against 3.46-3.72 ms) and 12-25% (`mul_i64`: 11.2 against 8.9-10.0
//!   ms) above the probe's. So 0.9x is reachable for every dtype but not yet reached by
//!   `mul_i64` and `eq_f32`; not found this session where the gap lies (both loops are
//!   vectorized and their samples sit on the loads; the crate's i64 loop has the probe's
//!   3 `vpmuludq` per vector). The probe reading two distant halves of each thread's range
//!   in alternating 512-element bursts: copy +4-6%, `eq` +1-4%. Ruled out by the probe
//!   (same minutes, best of 15): this kernel's shape (64 results into an L1 buffer, then
//!   streamed out) against direct `vmovntdq` stores, `mul` 0.87-0.93x both ways (`add`
//!   f64 3-5% slower buffered), and inputs 16 bytes off a line (as the bench's `Vec`s
//!   are): no change. The evening of 27 Nov, the same prefetch in the crate itself
//!   (`prefetcht0` of both inputs of each 512-byte burst of the contiguous binary loop,
//!   512-4096 bytes ahead; two rounds, `--reps 11`): `mul_i64_16M` 0.70-0.87x and
//!   `eq_f32_16M` 0.56-0.84x against 0.81-0.83x and 0.70-0.84x without, no trend over the
//!   distance: within the noise, not kept. The README's table of that evening (quiet host)
//!   reads 0.86x for both.
//!   **The limit on this host** (a C probe, not in the repository: 2 pthreads, 16M int32
//!   `a + b → c`, process CPU time, medians of 11-21 runs, variants interleaved per run,
//!   05:05-05:40 UTC): the hand-written AVX2 loop with non-temporal stores runs at 1.00-1.16x
//!   the AVX2 non-temporal copy's bandwidth, 512-byte buffered bursts (this kernel's shape)
//!   at 0.96-1.12x. `eq` (two f32 reads, one byte written) at 0.84-0.99x, and a pure read of
//!   two int32 streams (nothing written) at only 0.77-0.93x: reading alone does not reach
//!   the copy's bandwidth here (as `read_64MiB` shows), so a comparison whose bytes are
//!   nearly all reads cannot reliably reach 0.95x by this measure, however it is computed.
//!   **Tried and not kept** (no gain beyond the noise): software prefetch of both inputs in
//!   the probe (`prefetcht0`/`t1`/`nta` every line 256 B to 8 KiB ahead: 0.72-1.05x against
//!   0.96-1.12x without; only the first lines of the next 4 KiB page: 0.65-1.03x), so the
//!   sequential streams are left to the hardware prefetchers (the prefetch that helped the
//!   transposes and the outer reduction serves strided rows, which those do not follow);
//!   bursts of 64, 128, 256 and 1024 bytes (64 lets LLVM keep the burst in registers and
//!   store it from there, a generic "direct" loop) and 1, 2 or 8 tasks per thread instead of
//!   4, each within ±2% of the current kernel in the in-process comparison with the order of
//!   the variants rotated per repetition (without the rotation the first variant after the
//!   copy measured up to 7% low, which had looked like a difference);
//!   `madvise(MADV_HUGEPAGE)` and inputs 16 bytes off a line in the probe: no change.
//!   Transposes stream their tile rows too when the output is large and the rows are whole,
//!   aligned lines: `copy_transpose_16M(_out)` went from 0.28x of the copy (3.6x its time) to
//!   0.61-1.00x in CPU time (target: at most 2.5x the copy's time, i.e. at least 0.4x).
//!   `perf` showed the row `memmove` of phase 2 (the output lines' read for ownership) as
//!   the largest cost before.
//! * **Rows with a per-row scalar operand** (28 Nov): a contiguous output row whose inputs
//!   are each contiguous or a stride-0 scalar (`x - mean` over the last dim, a per-row
//!   `div`) used to take the plain monomorphized loop: SSE2 in the baseline build and plain
//!   stores, so `perf` of the fused layer norm put 28% of its time on each of its `sub`
//!   and `div` (`subps`/`divps` on `xmm`). Such rows now take the same 512-byte
//!   non-temporal bursts and AVX2 twin as all-contiguous rows (`with_dense_src`, the
//!   accessor shifted per burst). Probe (2 threads, Xeon host, medians of 30):
//!   `layernorm_16M` fused 18.4 → 14 ms before row fusion (`program::rows`), 7.4 ms after.
//!   The same probe found the last-dim `amax` of the softmax at ~3.5 cycles per value (the
//!   generic NaN-propagating fold compiled to two-lane loads, inserts and blends); its AVX2
//!   fold (`vmaxps` and a NaN mask) took `softmax_lastdim_16M` fused from 25 to 22 ms.
//! * **Prefetch for read-heavy ops and the copy; the same-bytes reference** (28 Nov, Xeon
//!   host: 260 MiB L3). The 0.9x target read 0.60-0.65x for `add_f64_16M` and
//!   `mul_i64_16M` on this host against 0.87-0.92x on the AMD host the day before. Copies
//!   of growing size (2 threads, `parallel_copy`, two runs): 2 × 64 MiB moved at 63 GB/s,
//!   2 × 128 MiB at 47-55, 2 × 192 MiB at 39: the 64 MiB reference stays largely in the L3
//!   between runs, the 8-byte ops' 384 MiB do not, and `add_f64_16M` ran at 40 GB/s, the
//!   bandwidth of a copy of its own bytes. The bench therefore also reports each scenario
//!   against a copy moving its own bytes ("vs same-bytes copy", `cli::bench`). `perf` of
//!   `eq_f32_16M` put its samples on the loads; it reads 8 bytes per byte written, and a
//!   read alone runs at 49-50 GB/s here against the copy's ~60, so software prefetch was
//!   measured again (`loops::PREFETCH_AHEAD`, `loops::read_heavy`): in one process with the
//!   order rotated per repetition, `eq` -11 to -14% time, `where` -10%, `mul` i64 -4%,
//!   `add` f32/f64 +1 to +3%, the copy -3 to -8%. Kept for ops that read more than twice
//!   what they write, and for the copy (the reference must be the fastest copy measured;
//!   every "vs copy" ratio drops by that much). `eq_f32_16M`, whose bytes are nearly all
//!   reads, stays below a same-bytes copy: in one process (order rotated, 21 runs, three
//!   times) `eq` took 5.02 / 5.85 / 5.87 ms, a plain AVX2 read of its two inputs 5.34 / 6.29
//!   / 5.83 ms and a copy of its bytes 4.26 / 4.91 / 4.81 ms. It runs as fast as reading
//!   its inputs, and reading alone does not reach the copy's bandwidth on this host, so
//!   the 0.9x target is out of reach for it by this measure (0.82-0.85x here).
//! * **AVX-512 twin for 64-bit integer outputs** (`loops::Burst::StreamAvx512`): AVX2 has
//!   no 64-bit multiply (LLVM emits three `vpmuludq` per vector); AVX-512 DQ's `vpmullq`
//!   took an i64 multiply from 0.92-0.94x to 1.00x of a same-bytes copy in a probe (numbers
//!   in `Burst`). Bench, old and new binaries alternated twice (`--reps 15`, 05:35 UTC):
//!   `mul_i64_16M` 12.0 / 13.6 ms → 10.2 / 9.8 ms, 0.93 / 0.85x → 1.02 / 1.04x of its
//!   same-bytes copy; `add_f64_16M` unchanged (it keeps the AVX2 twin).
//! * **Narrow-channel interleave** (`copy::narrow_copy`): NCHW → NHWC with C ≤ 8 is dims
//!   `[C, H·W, N]` with the output dense over the first two. Instead of 4×64 tiles (3 channels
//!   fill 3 rows of each 64×64 tile, so per-tile overhead dominated), each unit reads C source
//!   rows of up to 4096 elements side by side and writes their interleave as one output
//!   stream; for 4-byte same-type copies 4 positions at a time by 4×4 SSE transposes (channels
//!   padded with zeros, overlapping 16-byte stores that a later store overwrites),
//!   monomorphized per C. `to_channels_last_1M`: 1.06-1.49x of the copy's bandwidth (CPU
//!   time), i.e. 0.67-0.94x of the copy's time for the same bytes (target: at most 1.5x);
//!   with the tiles it was 284 µs on a quiet machine against 158 µs for copying its bytes at
//!   the copy's bandwidth (1.8x).
//! * **Re-laid-out broadcast operands** (`loops::relayout_input`): an input whose innermost
//!   iteration stride is neither 0 nor one element and that is reused at least 4 times (the
//!   contiguous `[c, h, w]` operand of a channels-last `[n, c, h, w]` add: stride `h·w` along
//!   C, reused `n` times) is copied once (through the tiled copy) into a buffer dense in
//!   iteration order, the plan is pointed at it and re-coalesced, so the whole op runs as
//!   contiguous vectorized rows. `add_cl_bcast_6M` was a scalar strided loop at 0.60x of
//!   the copy (quiet machine, earlier session: 1.43 ms against a 2.21 ms copy); now 1.00-1.43x
//!   (CPU time), i.e. 0.71-1.02x of the time of reading and writing the big operands at the
//!   copy's bandwidth (target: at most 1.25x).
//!
//! # `exp` (`vmath`)
//! `FloatElement::exp` (so the `Exp` and `Sigmoid` element functions, the op table's
//! kernels and the fused block evaluator) is `vmath::exp`: Cody–Waite range reduction, a
//! degree-7 near-minimax polynomial (f32; Taylor degree 13 for f64), `2^n` built from
//! exponent bits, all branch-free, so the element loops vectorize (SSE2 in the baseline
//! build, AVX2 in the `Burst::StreamAvx2` twin and the block evaluator's twin) where libm's
//! `expf` was a call per element. Accuracy and timings in `vmath` and the `program` docs.
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
    where_, Abs, Add, Addcmul, Div, Exp, Maximum, Minimum, Mul, Neg, Relu, Sigmoid, Sqrt, Sub,
    Tanh, Where,
};
pub use reduce::{execute_reduction, reduce, ReduceArgs, BLOCK, LANES, LEAF, ROW_LEAF};
pub(crate) use reduce::{fold_run, Cascade};
