//! Concrete-path cost of the layout predicates: the branchy c10 forms against the
//! branch-free ones (which evaluate every term, and for the dense check a quadratic
//! sort-free condition), plus broadcasting and empty_like strides.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use symstride::layout;

fn predicates(c: &mut Criterion) {
    let cases: [(&str, Vec<i64>, Vec<i64>); 3] = [
        (
            "contiguous_4d",
            vec![8, 64, 56, 56],
            vec![200704, 3136, 56, 1],
        ),
        (
            "channels_last_4d",
            vec![8, 64, 56, 56],
            vec![200704, 1, 3584, 64],
        ),
        (
            "permuted_6d",
            vec![2, 3, 4, 5, 6, 7],
            vec![2520, 1, 630, 3, 105, 15],
        ),
    ];
    for (name, s, t) in &cases {
        let mut g = c.benchmark_group(format!("layout/{name}"));
        g.bench_function("is_contiguous", |b| {
            b.iter(|| layout::is_contiguous(black_box(s), black_box(t)))
        });
        g.bench_function("contiguity_expr", |b| {
            b.iter(|| layout::contiguity_expr(black_box(s), black_box(t)))
        });
        g.bench_function("is_non_overlapping_and_dense", |b| {
            b.iter(|| layout::is_non_overlapping_and_dense(black_box(s), black_box(t)))
        });
        g.bench_function("non_overlapping_and_dense_expr", |b| {
            b.iter(|| layout::non_overlapping_and_dense_expr(black_box(s), black_box(t)))
        });
        g.bench_function("empty_like_strides", |b| {
            b.iter(|| layout::empty_like_strides(black_box(s), black_box(t)))
        });
        g.finish();
    }
}

fn broadcast(c: &mut Criterion) {
    let (a, b2, d): (Vec<i64>, Vec<i64>, Vec<i64>) = (vec![8, 1, 56, 56], vec![64, 1, 1], vec![56]);
    c.bench_function("layout/infer_size_3_operands", |b| {
        b.iter(|| layout::infer_size(black_box(&[&a[..], &b2[..], &d[..]])))
    });
}

/// Symbolic path: tracing a 4-D channels-last tensor of fresh symbols (environment set-up
/// included), branchy (records guards) against branch-free (builds one condition).
fn symbolic(c: &mut Criterion) {
    use symstride::sym::{ShapeEnv, SymInt, SymbolSpec};
    let lift = || {
        let env = ShapeEnv::default();
        let s: Vec<SymInt> = [8, 64, 56, 56]
            .iter()
            .enumerate()
            .map(|(d, &h)| {
                env.create_symbol(&format!("s{d}"), h, SymbolSpec::default())
                    .unwrap()
            })
            .collect();
        let t = layout::channels_last_strides_2d(&s).unwrap();
        (env, s, t)
    };
    let mut g = c.benchmark_group("layout/symbolic_channels_last_4d");
    g.bench_function("trace_is_non_overlapping_and_dense", |b| {
        b.iter(|| {
            let (env, s, t) = lift();
            (
                layout::is_non_overlapping_and_dense(&s, &t).unwrap(),
                env.guards().len(),
            )
        })
    });
    g.bench_function("non_overlapping_and_dense_expr", |b| {
        b.iter(|| {
            let (_env, s, t) = lift();
            layout::non_overlapping_and_dense_expr(&s, &t).unwrap()
        })
    });
    g.bench_function("trace_empty_like_strides", |b| {
        b.iter(|| {
            let (_env, s, t) = lift();
            layout::empty_like_strides(&s, &t).unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, predicates, broadcast, symbolic);
criterion_main!(benches);
