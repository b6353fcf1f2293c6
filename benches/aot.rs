//! Ahead-of-time specialization: the two costs users pay. `compile_seed_spec` is one compile
//! (parse + symbolic trace + guard simplification) of the seed spec (target <= 1 ms);
//! `dispatch_cached_4d` is one cached dispatch of that spec's 4-D add (bind the symbols from
//! the input layouts, check the layouts, run the compiled guards, instantiate the plan into
//! a reused buffer; no kernel; target <= 150 ns). `cover_10_symbols` is a `--cover` compile
//! (trace, case-split proof, witness traces) of a 10-symbol spec on sizes >= 1.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use symstride::aot::{compile_cover_10_symbols, compile_seed_spec, SeedDispatch};

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
    g.finish();
}

criterion_group!(benches, aot);
criterion_main!(benches);
