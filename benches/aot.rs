//! Ahead-of-time specialization: the two costs users pay. `compile_seed_spec` is one compile
//! (parse + symbolic trace + guard simplification) of the seed spec (target <= 1 ms);
//! `dispatch_cached_4d` is one cached dispatch of that spec's 4-D add (bind the symbols from
//! the input layouts, check the layouts, run the compiled guards, instantiate the plan into
//! a reused buffer; no kernel; target <= 150 ns). `artifact_load_100` loads (parses and
//! verifies by re-tracing, see `aot/retrace.rs`) an artifact of 100 specializations: the
//! `--cover` compile of `[a,b,c,d] + [e,f,g,h]` (independent sizes) stopped at 100,
//! `symstride::aot::artifact_100_json`, also a `symstride bench` scenario (target < 50 ms).
//! `compile_program` and `dispatch_cached_program` are the same two costs for the 8-step
//! demo program (`symstride::program::DEMO_PROGRAM_JSON`: every value's layout is
//! instantiated; targets < 1 ms and < 300 ns).
//! `cover_10_symbols` is a `--cover` compile (trace, case-split proof, witness traces) of a
//! 10-symbol spec on sizes >= 0; `cover_free_strides_3d` the same for a rank-3 spec whose
//! strides are free symbols.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use symstride::aot::{
    artifact_100_json, compile_cover_10_symbols, compile_cover_free_strides_3d, compile_seed_spec,
    Artifact, SeedDispatch,
};

fn aot(c: &mut Criterion) {
    let mut g = c.benchmark_group("aot");
    g.bench_function("compile_seed_spec", |b| {
        b.iter(|| black_box(compile_seed_spec().expect("compile")))
    });
    g.bench_function("cover_10_symbols", |b| {
        b.iter(|| black_box(compile_cover_10_symbols().expect("cover")))
    });
    let mut s = SeedDispatch::new().expect("seed dispatch");
    g.bench_function("dispatch_cached_4d", |b| {
        b.iter(|| black_box(s.run().expect("dispatch")))
    });
    g.bench_function("compile_program", |b| {
        b.iter(|| black_box(symstride::program::compile_demo_program().expect("compile")))
    });
    let mut pd = symstride::program::ProgramDispatch::new().expect("program dispatch");
    g.bench_function("dispatch_cached_program", |b| {
        b.iter(|| black_box(pd.run().expect("dispatch")))
    });
    let json = artifact_100_json().expect("artifact");
    g.bench_function("artifact_load_100", |b| {
        b.iter(|| black_box(Artifact::from_json(&json).expect("load")))
    });
    g.finish();
    // Seconds per run: few samples.
    let mut g = c.benchmark_group("aot_cover");
    g.sample_size(10);
    g.bench_function("cover_free_strides_3d", |b| {
        b.iter(|| black_box(compile_cover_free_strides_3d().expect("cover")))
    });
    g.finish();
}

criterion_group!(benches, aot);
criterion_main!(benches);
