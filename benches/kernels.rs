//! Criterion benches for the kernel scenarios of `symstride bench` (f32, random data).
//! Sample sizes and measurement times are small so the suite finishes in a couple of minutes.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use std::time::Duration;
use symstride::kernel::{self, ExecConfig};
use symstride::reduce::{Amax, Dims, Sum};
use symstride::tensor::{MemoryFormat, Tensor};

fn tensor(sizes: &[i64], seed: u64) -> Tensor<f32> {
    let n = sizes.iter().product::<i64>() as usize;
    let mut rng = symstride::testing::XorShift::new(seed);
    let v = (0..n).map(|_| rng.unit()).collect();
    Tensor::from_vec(v, sizes).expect("sizes")
}

fn kernels(c: &mut Criterion) {
    let cfg = ExecConfig::default();
    let mut g = c.benchmark_group("kernels");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));

    let n16 = 1u64 << 24;
    op_rows(&mut g, &cfg, n16);
    let (a, b) = (tensor(&[64, 64, 64, 64], 1), tensor(&[64, 64, 64, 64], 2));
    let out = Tensor::<f32>::zeros(&[64, 64, 64, 64]).unwrap();
    g.throughput(Throughput::Bytes(12 * n16));
    g.bench_function("add_contig_16M", |bn| {
        bn.iter(|| black_box(kernel::map2(&a, &b, &kernel::Add, &cfg).unwrap()))
    });
    g.bench_function("add_contig_16M_out", |bn| {
        bn.iter(|| kernel::map2_out(&a, &b, &out, &kernel::Add, &cfg).unwrap())
    });
    drop((a, b, out));

    let acl = tensor(&[32, 64, 56, 56], 3)
        .to(MemoryFormat::ChannelsLast)
        .unwrap();
    let bb = tensor(&[64, 56, 56], 4);
    let ocl = kernel::map2(&acl, &bb, &kernel::Add, &cfg).unwrap();
    g.throughput(Throughput::Bytes(8 * 32 * 64 * 56 * 56));
    g.bench_function("add_cl_bcast_6M", |bn| {
        bn.iter(|| black_box(kernel::map2(&acl, &bb, &kernel::Add, &cfg).unwrap()))
    });
    g.bench_function("add_cl_bcast_6M_out", |bn| {
        bn.iter(|| kernel::map2_out(&acl, &bb, &ocl, &kernel::Add, &cfg).unwrap())
    });
    drop((acl, bb, ocl));

    let t = tensor(&[4096, 4096], 5).transpose(0, 1).unwrap();
    let tout = Tensor::<f32>::zeros(&[4096, 4096]).unwrap();
    g.throughput(Throughput::Bytes(8 * n16));
    g.bench_function("copy_transpose_16M", |bn| {
        bn.iter(|| black_box(t.contiguous().unwrap()))
    });
    g.bench_function("copy_transpose_16M_out", |bn| {
        bn.iter(|| kernel::copy_into(&tout, &t, &cfg).unwrap())
    });
    drop((t, tout));

    let (x, bias) = (tensor(&[65536, 256], 6), tensor(&[256], 7));
    g.bench_function("add_bias_16M", |bn| {
        bn.iter(|| black_box(kernel::map2(&x, &bias, &kernel::Add, &cfg).unwrap()))
    });
    drop((x, bias));

    let img = tensor(&[8, 3, 224, 224], 8);
    g.throughput(Throughput::Bytes(8 * 8 * 3 * 224 * 224));
    g.bench_function("to_channels_last_1M", |bn| {
        bn.iter(|| black_box(img.to(MemoryFormat::ChannelsLast).unwrap()))
    });

    let (s1, s2) = (tensor(&[2, 3, 4, 5], 9), tensor(&[3, 4, 5], 10));
    g.throughput(Throughput::Elements(120));
    g.bench_function("add_small_dispatch", |bn| {
        bn.iter(|| black_box(kernel::add(black_box(&s1), black_box(&s2)).unwrap()))
    });

    // Reductions: throughput is the input read once.
    let x = tensor(&[65536, 256], 11);
    let (last, outer) = (
        kernel::ReduceArgs::new(Dims::One(-1)),
        kernel::ReduceArgs::new(Dims::One(0)),
    );
    g.throughput(Throughput::Bytes(4 * n16));
    g.bench_function("sum_lastdim_16M", |bn| {
        bn.iter(|| black_box(kernel::reduce(&x, Sum, &last, &cfg).unwrap()))
    });
    g.bench_function("sum_outer_16M", |bn| {
        bn.iter(|| black_box(kernel::reduce(&x, Sum, &outer, &cfg).unwrap()))
    });
    drop(x);
    let xcl = tensor(&[32, 64, 56, 56], 12)
        .to(MemoryFormat::ChannelsLast)
        .unwrap();
    let hw = kernel::ReduceArgs::new(Dims::List(vec![2, 3]));
    g.throughput(Throughput::Bytes(4 * 32 * 64 * 56 * 56));
    g.bench_function("amax_cl_6M", |bn| {
        bn.iter(|| black_box(kernel::reduce(&xcl, Amax, &hw, &cfg).unwrap()))
    });
    drop(xcl);

    let src = vec![1f32; 1 << 24];
    let mut dst = vec![0f32; 1 << 24];
    g.throughput(Throughput::Bytes(8 * n16));
    g.bench_function("memcpy_64MiB", |bn| {
        bn.iter(|| dst.copy_from_slice(black_box(&src)))
    });
    g.finish();
}

/// The op table's kernels on other dtypes (as `symstride bench`): `add` of two int32
/// tensors and `where` of a bool condition over two float32 tensors, 16M elements each,
/// through `op::call`.
fn op_rows(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    cfg: &ExecConfig,
    n16: u64,
) {
    use symstride::op::{self, AnyTensor, Input, Op, Output};
    let sizes = [64i64, 64, 64, 64];
    let ints = |seed: u64| -> AnyTensor {
        let t = tensor(&sizes, seed);
        let v: Vec<i32> = t
            .to_vec()
            .unwrap()
            .iter()
            .map(|&x| (x * 1e6) as i32)
            .collect();
        Tensor::from_vec(v, &sizes).unwrap().into()
    };
    let ab = [Input::Tensor(ints(21)), Input::Tensor(ints(22))];
    g.throughput(Throughput::Bytes(12 * n16));
    g.bench_function("add_int32_16M", |bn| {
        bn.iter(|| black_box(op::call(Op::Add, &ab, Output::New, cfg).unwrap()))
    });
    drop(ab);
    let cond: Vec<bool> = tensor(&sizes, 23)
        .to_vec()
        .unwrap()
        .iter()
        .map(|&x| x > 0.5)
        .collect();
    let w = [
        Input::Tensor(Tensor::from_vec(cond, &sizes).unwrap().into()),
        Input::Tensor(tensor(&sizes, 24).into()),
        Input::Tensor(tensor(&sizes, 25).into()),
    ];
    g.throughput(Throughput::Bytes(13 * n16));
    g.bench_function("where_16M", |bn| {
        bn.iter(|| black_box(op::call(Op::Where, &w, Output::New, cfg).unwrap()))
    });
}

criterion_group!(benches, kernels);
criterion_main!(benches);
