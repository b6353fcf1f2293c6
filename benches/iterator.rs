//! Cost of a concrete TensorIterator build (the per-call overhead an eager op pays), on the
//! fast path, the general path with a permutation, and broadcasting with coalescing.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use symstride::iter::{TensorIteratorConfig, TensorSpec};

/// Sizes and strides of one input.
type Layout = (Vec<i64>, Vec<i64>);

fn build(inputs: &[Layout]) -> usize {
    let mut c = TensorIteratorConfig::new().add_undefined_output(4);
    for (s, t) in inputs {
        c = c.add_input(TensorSpec::new(s.clone(), t.clone(), 4));
    }
    c.build().map(|p| p.ndim()).unwrap_or(0)
}

fn bench_build(c: &mut Criterion) {
    let nchw = vec![8i64, 64, 56, 56];
    let contiguous = vec![200704i64, 3136, 56, 1];
    let channels_last = vec![200704i64, 1, 3584, 64];
    let cases: Vec<(&str, Vec<Layout>)> = vec![
        (
            "fast_contiguous_binary",
            vec![
                (nchw.clone(), contiguous.clone()),
                (nchw.clone(), contiguous.clone()),
            ],
        ),
        (
            "general_cl_plus_contiguous",
            vec![
                (nchw.clone(), channels_last.clone()),
                (nchw.clone(), contiguous.clone()),
            ],
        ),
        (
            "broadcast_bias_cl",
            vec![
                (nchw.clone(), channels_last),
                (vec![64, 1, 1], vec![1, 1, 1]),
            ],
        ),
        (
            "ternary_transposed_6d",
            vec![
                (vec![2, 3, 4, 5, 6, 7], vec![1, 2, 6, 24, 120, 720]),
                (vec![4, 5, 6, 7], vec![210, 42, 7, 1]),
                (vec![7], vec![1]),
            ],
        ),
    ];
    let mut group = c.benchmark_group("iter_build");
    for (name, inputs) in &cases {
        group.bench_function(*name, |b| b.iter(|| build(black_box(inputs))));
    }
    group.finish();
}

criterion_group!(benches, bench_build);
criterion_main!(benches);
