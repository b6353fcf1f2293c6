//! Reductions end to end: kernels against the table's naive f64 references on random
//! strided, broadcast and offset layouts for every op and dtype at 1-3 threads; the
//! symbolic meta against the concrete one; the float32 sum's accuracy against a simulation
//! of PyTorch's cascade sum.

use proptest::prelude::*;
use std::sync::OnceLock;
use symstride::iter::TensorSpec;
use symstride::kernel::{reduce, ExecConfig, ReduceArgs, Simd};
use symstride::reduce::{
    reduction_meta, All, Amax, Amin, Any, Argmax, Argmin, Dims, Mean, Prod, ReduceElement, Reducer,
    ReductionOp, Sum,
};
use symstride::sym::{ShapeEnv, SymbolSpec};
use symstride::tensor::{Element, Scalar, Storage, Tensor};
use symstride::DType;

fn pools() -> &'static [rayon::ThreadPool] {
    static P: OnceLock<Vec<rayon::ThreadPool>> = OnceLock::new();
    P.get_or_init(|| {
        (1..=3)
            .map(|n| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .build()
                    .unwrap()
            })
            .collect()
    })
}

fn to_f64(s: Scalar) -> f64 {
    match s {
        Scalar::Float(f) => f,
        Scalar::Int(i) => i as f64,
        Scalar::Bool(b) => f64::from(u8::from(b)),
    }
}

/// A random layout: sizes, strides (permuted dense order, gaps, broadcast zeros), offset.
#[derive(Clone, Debug)]
struct Layout {
    sizes: Vec<i64>,
    strides: Vec<i64>,
    offset: i64,
}

impl Layout {
    fn storage_len(&self) -> usize {
        let ext: i64 = self
            .sizes
            .iter()
            .zip(&self.strides)
            .map(|(&s, &t)| (s - 1).max(0) * t)
            .sum();
        (self.offset + ext + 1) as usize
    }
}

fn layout() -> impl Strategy<Value = Layout> {
    let small = (0usize..=4).prop_flat_map(|rank| {
        (
            prop::collection::vec(prop_oneof![1 => Just(0i64), 8 => 1i64..=5], rank),
            Just(rank),
        )
    });
    // Occasionally one long dim, to reach multi-leaf rows, row cascades and split reductions.
    let long = (1usize..=3).prop_flat_map(|rank| {
        (
            prop::collection::vec(1i64..=6, rank),
            0..rank,
            300i64..=1300,
        )
            .prop_map(|(mut s, d, n)| {
                s[d] = n;
                let r = s.len();
                (s, r)
            })
    });
    prop_oneof![3 => small, 2 => long].prop_flat_map(|(sizes, rank)| {
        (
            Just(sizes),
            Just(rank).prop_shuffle_order(),
            prop::collection::vec(
                prop_oneof![6 => Just(1i64), 1 => Just(2), 1 => Just(0)],
                rank,
            ),
            0i64..3,
        )
            .prop_map(|(sizes, order, mult, offset)| {
                let mut strides = vec![0i64; sizes.len()];
                let mut acc = 1i64;
                for &d in &order {
                    strides[d] = acc * mult[d];
                    acc *= sizes[d].max(1) * mult[d].max(1);
                }
                Layout {
                    sizes,
                    strides,
                    offset,
                }
            })
    })
}

/// Helper to get a shuffled dim order out of a rank.
trait ShuffleOrder {
    fn prop_shuffle_order(self) -> BoxedStrategy<Vec<usize>>;
}
impl ShuffleOrder for Just<usize> {
    fn prop_shuffle_order(self) -> BoxedStrategy<Vec<usize>> {
        Just((0..self.0).collect::<Vec<_>>()).prop_shuffle().boxed()
    }
}

/// What a test's values look like.
#[derive(Clone, Copy)]
struct Draw {
    /// Some NaNs (floats).
    nan: bool,
    /// Only ±1 (exact products).
    prod: bool,
    /// Edge values: ±0.0 and ±inf for floats, values near the type's limits for integers
    /// (int32 near ±2^31, int64 near ±2^35 so f64 references of sums stay exact, uint8 near
    /// 255).
    edge: bool,
}

/// Deterministic values from a seed, per dtype: small integers (exact float sums, ties for
/// argmax), with some NaNs for floats when `nan`, edge values when `edge`.
trait Gen: ReduceElement {
    fn gen(h: u64, d: Draw) -> Self;
}
fn mix(i: u64, seed: u64) -> u64 {
    let mut x = i
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(seed.wrapping_mul(0xBF58_476D_1CE4_E5B9));
    x ^= x >> 31;
    x = x.wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 29)
}
macro_rules! gen_float {
    ($t:ty) => {
        impl Gen for $t {
            fn gen(h: u64, d: Draw) -> Self {
                if d.nan && h % 41 == 0 {
                    return <$t>::NAN;
                }
                if d.prod {
                    return if h % 2 == 0 { 1.0 } else { -1.0 };
                }
                if d.edge {
                    match (h >> 8) % 64 {
                        0..=11 => return 0.0,
                        12..=23 => return -0.0,
                        24 => return <$t>::INFINITY,
                        25 => return <$t>::NEG_INFINITY,
                        _ => {}
                    }
                }
                (h % 11) as $t - 5.0
            }
        }
    };
}
gen_float!(f32);
gen_float!(f64);
macro_rules! gen_int {
    ($t:ty, $m:expr, $o:expr, $edge:expr) => {
        impl Gen for $t {
            fn gen(h: u64, d: Draw) -> Self {
                if d.prod {
                    // ±1 (1 for uint8): products stay exact.
                    return if h % 2 == 0 || $o == 0 {
                        1 as $t
                    } else {
                        (0 as $t).wrapping_sub(1)
                    };
                }
                let small = ((h % $m) as i64 - $o as i64) as $t;
                if d.edge {
                    let edge: $t = $edge;
                    return match (h >> 8) % 3 {
                        0 => edge - small.max(0),
                        1 => (0 as $t).wrapping_sub(edge).wrapping_add(small.max(0)),
                        _ => small,
                    };
                }
                small
            }
        }
    };
}
gen_int!(i32, 11, 5, i32::MAX);
gen_int!(i64, 11, 5, 1i64 << 35);
gen_int!(u8, 256, 0, u8::MAX);
impl Gen for bool {
    fn gen(h: u64, _: Draw) -> Self {
        !h.is_multiple_of(3)
    }
}

/// Logical (row-major) positions of a layout's elements.
fn logical_values<T: Element>(t: &Tensor<T>) -> Vec<f64> {
    t.to_vec()
        .unwrap()
        .into_iter()
        .map(|v| to_f64(v.to_scalar()))
        .collect()
}

/// The naive reference: for each output (row-major over the result), the values of the
/// reduced dims in row-major order, through the table's f64 reference.
fn reference(op: ReductionOp, sizes: &[i64], vals: &[f64], mask: &[bool]) -> Vec<f64> {
    let nd = sizes.len();
    let kept: Vec<usize> = (0..nd).filter(|&d| !mask[d]).collect();
    let red: Vec<usize> = (0..nd).filter(|&d| mask[d]).collect();
    let m: i64 = kept.iter().map(|&d| sizes[d]).product();
    let k: i64 = red.iter().map(|&d| sizes[d]).product();
    let mut row_major = vec![1i64; nd];
    for d in (0..nd.saturating_sub(1)).rev() {
        row_major[d] = row_major[d + 1] * sizes[d + 1];
    }
    let index = |dims: &[usize], mut lin: i64| -> i64 {
        let mut off = 0;
        for &d in dims.iter().rev() {
            off += (lin % sizes[d]) * row_major[d];
            lin /= sizes[d];
        }
        off
    };
    (0..m)
        .map(|o| {
            let base = index(&kept, o);
            let v: Vec<f64> = (0..k)
                .map(|j| vals[(base + index(&red, j)) as usize])
                .collect();
            (op.info().reference)(&v)
        })
        .collect()
}

fn close(op: ReductionOp, dtype: DType, got: f64, want: f64) -> bool {
    if got.is_nan() || want.is_nan() {
        return got.is_nan() && want.is_nan();
    }
    if got == want {
        return true; // also equal infinities, whose difference is NaN
    }
    match (op, dtype) {
        (ReductionOp::Mean, DType::F32) => (got - want).abs() <= 1e-5 * want.abs().max(1.0),
        (ReductionOp::Mean, _) => (got - want).abs() <= 1e-12 * want.abs().max(1.0),
        _ => got == want,
    }
}

/// Runs one reduction on every thread count and compares with the reference.
fn check<T: Gen, R: Reducer<T>>(
    reducer: R,
    l: &Layout,
    dims: &Dims,
    keepdim: bool,
    seed: u64,
) -> Result<(), TestCaseError> {
    let op = R::OP;
    let data: Vec<T> = (0..l.storage_len() as u64)
        .map(|i| {
            let draw = Draw {
                nan: true,
                prod: op == ReductionOp::Prod,
                edge: seed.is_multiple_of(3),
            };
            T::gen(mix(i, seed), draw)
        })
        .collect();
    let x = Tensor::from_storage(Storage::from_vec(data), &l.sizes, &l.strides, l.offset).unwrap();
    let spec = TensorSpec::new(l.sizes.clone(), l.strides.clone(), std::mem::size_of::<T>())
        .with_offset(l.offset);
    let meta = reduction_meta(op, &spec, T::DTYPE, dims, keepdim);
    let args = ReduceArgs::new(dims.clone()).keepdim(keepdim);
    // Every thread count, with the run-time vector instruction set and with the portable path.
    let runs = pools()
        .iter()
        .enumerate()
        .flat_map(|(n, p)| [(n, p, Simd::Auto), (n, p, Simd::Baseline)]);
    for (n, pool, simd) in runs {
        let cfg = ExecConfig::default().with_grain_size(16).with_simd(simd);
        let got = pool.install(|| reduce(&x, reducer, &args, &cfg));
        let meta = match (&meta, got) {
            (Err(e), Err(g)) => {
                prop_assert_eq!(e.category(), g.category());
                continue;
            }
            (Ok(m), Ok(g)) => {
                prop_assert_eq!(g.sizes(), &m.sizes[..]);
                prop_assert_eq!(g.strides(), &m.strides[..]);
                (m.clone(), g)
            }
            (m, g) => {
                return Err(TestCaseError::fail(format!(
                    "meta {:?} but kernel {:?}",
                    m.as_ref().map(|m| &m.sizes),
                    g.map(|g| g.sizes().to_vec())
                )))
            }
        };
        let (m, g) = meta;
        let vals = logical_values(&x);
        let want = reference(op, &l.sizes, &vals, &m.mask);
        let got = logical_values(&g);
        prop_assert_eq!(got.len(), want.len());
        for (i, (a, b)) in got.iter().zip(&want).enumerate() {
            prop_assert!(
                close(op, T::DTYPE, *a, *b),
                "{} threads ({:?}), output {}: got {} want {} ({:?} dims {:?})",
                n + 1,
                simd,
                i,
                a,
                b,
                l,
                dims
            );
        }
    }
    Ok(())
}

fn dims_for(op: ReductionOp, rank: usize) -> impl Strategy<Value = Dims> {
    let r = rank.max(1) as i64;
    let one = (-r..r).prop_map(Dims::One);
    match op.info().dims {
        symstride::reduce::DimsRule::One => prop_oneof![1 => Just(Dims::All), 3 => one].boxed(),
        _ => prop_oneof![
            1 => Just(Dims::All),
            2 => one,
            3 => prop::collection::vec(-r..r, 0..=rank).prop_map(move |mut v| {
                // Distinct after wrapping (duplicates are tested by the meta's unit tests).
                let mut seen = std::collections::HashSet::new();
                v.retain(|d| seen.insert(d.rem_euclid(r)));
                Dims::List(v)
            }),
        ]
        .boxed(),
    }
}

macro_rules! each_dtype {
    ($dtype:expr, $op:expr, $f:ident, $($args:expr),*) => {
        match $dtype {
            DType::F32 => $f::<f32>($op, $($args),*),
            DType::F64 => $f::<f64>($op, $($args),*),
            DType::I32 => $f::<i32>($op, $($args),*),
            DType::I64 => $f::<i64>($op, $($args),*),
            DType::U8 => $f::<u8>($op, $($args),*),
            DType::Bool => $f::<bool>($op, $($args),*),
        }
    };
}

/// Every op for an element type `T`; `mean` only where PyTorch defines it.
fn run_op<T: Gen + MaybeMean>(
    op: ReductionOp,
    l: &Layout,
    dims: &Dims,
    keepdim: bool,
    seed: u64,
) -> Result<(), TestCaseError> {
    match op {
        ReductionOp::Sum => check::<T, _>(Sum, l, dims, keepdim, seed),
        ReductionOp::Mean => T::check_mean(l, dims, keepdim, seed),
        ReductionOp::Prod => check::<T, _>(Prod, l, dims, keepdim, seed),
        ReductionOp::Amax => check::<T, _>(Amax, l, dims, keepdim, seed),
        ReductionOp::Amin => check::<T, _>(Amin, l, dims, keepdim, seed),
        ReductionOp::Argmax => check::<T, _>(Argmax, l, dims, keepdim, seed),
        ReductionOp::Argmin => check::<T, _>(Argmin, l, dims, keepdim, seed),
        ReductionOp::All => check::<T, _>(All, l, dims, keepdim, seed),
        ReductionOp::Any => check::<T, _>(Any, l, dims, keepdim, seed),
    }
}

/// `mean` is a kernel for floats; for other dtypes the meta must reject it.
trait MaybeMean: Gen {
    fn check_mean(l: &Layout, dims: &Dims, keepdim: bool, seed: u64) -> Result<(), TestCaseError>;
}
macro_rules! mean_float {
    ($t:ty) => {
        impl MaybeMean for $t {
            fn check_mean(
                l: &Layout,
                dims: &Dims,
                keepdim: bool,
                seed: u64,
            ) -> Result<(), TestCaseError> {
                check::<$t, _>(Mean, l, dims, keepdim, seed)
            }
        }
    };
}
mean_float!(f32);
mean_float!(f64);
macro_rules! mean_other {
    ($t:ty) => {
        impl MaybeMean for $t {
            fn check_mean(
                l: &Layout,
                dims: &Dims,
                keepdim: bool,
                _: u64,
            ) -> Result<(), TestCaseError> {
                let spec = TensorSpec::new(
                    l.sizes.clone(),
                    l.strides.clone(),
                    std::mem::size_of::<$t>(),
                );
                let e = reduction_meta(ReductionOp::Mean, &spec, <$t>::DTYPE, dims, keepdim);
                prop_assert_eq!(e.unwrap_err().category(), "dtype");
                Ok(())
            }
        }
    };
}
mean_other!(i32);
mean_other!(i64);
mean_other!(u8);
mean_other!(bool);

fn case() -> impl Strategy<Value = (ReductionOp, DType, Layout, Dims, bool, u64)> {
    (
        prop::sample::select(ReductionOp::ALL.to_vec()),
        prop::sample::select(DType::ALL.to_vec()),
        layout(),
    )
        .prop_flat_map(|(op, dt, l)| {
            let rank = l.sizes.len();
            (
                Just(op),
                Just(dt),
                Just(l),
                dims_for(op, rank),
                any::<bool>(),
                any::<u64>(),
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn kernels_match_the_naive_reference((op, dt, l, dims, keepdim, seed) in case()) {
        // `prod` takes `None` only without keepdim (the Python API has no such overload).
        let keepdim = keepdim && !(op == ReductionOp::Prod && dims == Dims::All);
        each_dtype!(dt, op, run_op, &l, &dims, keepdim, seed)?;
    }

    /// The symbolic meta, evaluated at the hints, equals the concrete one; and at another
    /// binding that satisfies its guards it equals the concrete meta of that binding.
    #[test]
    fn symbolic_meta_is_sound((op, dt, l, dims, keepdim, _seed) in case(), bump in prop::collection::vec(0i64..3, 4)) {
        let env = ShapeEnv::default();
        let spec = SymbolSpec { min: 0, ..Default::default() };
        let sizes = env.create_symbols("s", &l.sizes, spec).unwrap();
        let strides = env.create_symbols("t", &l.strides, spec).unwrap();
        let es = dt.element_size();
        let sym = reduction_meta(op, &TensorSpec::new(sizes, strides, es), dt, &dims, keepdim);
        let conc = reduction_meta(op, &TensorSpec::new(l.sizes.clone(), l.strides.clone(), es), dt, &dims, keepdim);
        let hints = env.hints();
        match (&sym, &conc) {
            (Err(a), Err(b)) => prop_assert_eq!(a.category(), b.category()),
            (Ok(s), Ok(c)) => {
                let ev = |v: &[symstride::sym::SymInt]| v.iter().map(|x| x.eval(&hints).unwrap()).collect::<Vec<_>>();
                prop_assert_eq!(ev(&s.sizes), c.sizes.clone());
                prop_assert_eq!(ev(&s.strides), c.strides.clone());
                prop_assert_eq!(s.dtype, c.dtype);
                prop_assert_eq!(s.plan.try_map(|x| x.eval(&hints)).unwrap(), c.plan.clone());
            }
            _ => prop_assert!(false, "symbolic {:?} vs concrete {:?}", sym.as_ref().map(|m| &m.dtype), conc.as_ref().map(|m| &m.dtype)),
        }
        // Another binding: bump sizes and strides; if the guards admit it, the traced result
        // must be the concrete one there.
        let mut other = hints.clone();
        let mut bumped = l.clone();
        for d in 0..l.sizes.len() {
            bumped.sizes[d] += bump[d % bump.len()];
            bumped.strides[d] += bump[(d + 1) % bump.len()];
            other.insert(&format!("s{d}"), bumped.sizes[d]);
            other.insert(&format!("t{d}"), bumped.strides[d]);
        }
        let guards = env.guard_set();
        if guards.eval(&other).unwrap().is_pass() {
            let conc = reduction_meta(op, &TensorSpec::new(bumped.sizes.clone(), bumped.strides.clone(), es), dt, &dims, keepdim);
            match (&sym, &conc) {
                (Err(a), Err(b)) => prop_assert_eq!(a.category(), b.category()),
                (Ok(s), Ok(c)) => {
                    let ev = |v: &[symstride::sym::SymInt]| v.iter().map(|x| x.eval(&other).unwrap()).collect::<Vec<_>>();
                    prop_assert_eq!(ev(&s.sizes), c.sizes.clone());
                    prop_assert_eq!(ev(&s.strides), c.strides.clone());
                    prop_assert_eq!(s.plan.try_map(|x| x.eval(&other)).unwrap(), c.plan.clone());
                }
                _ => prop_assert!(false, "guards admit {:?} but the outcome differs", bumped),
            }
        }
    }
}

/// PyTorch's CPU `cascade_sum` for one contiguous float32 row (AVX2: 8-lane vectors, 4-way
/// ILP, 4 cascade levels of 2^max(4, ceil(log2(n)) / 4) steps), simulated in scalar code:
/// every lane is an independent f32 accumulator, exactly as the vector registers are.
#[allow(clippy::needless_range_loop)] // mirrors the C++ loops index for index
fn pytorch_cascade_sum(x: &[f32]) -> f32 {
    const VEC: usize = 8;
    const ILP: usize = 4;
    const LEVELS: usize = 4;
    let nvec = x.len() / VEC;
    let size_ilp = nvec / ILP;
    let ceil_log2 = |n: usize| {
        if n <= 1 {
            0
        } else {
            (usize::BITS - (n - 1).leading_zeros()) as usize
        }
    };
    let level_power = 4.max(ceil_log2(size_ilp) / LEVELS);
    let level_step = 1usize << level_power;
    let level_mask = level_step - 1;
    let load = |v: usize| -> [f32; VEC] { std::array::from_fn(|l| x[v * VEC + l]) };
    let add = |a: &mut [f32; VEC], b: [f32; VEC]| {
        for l in 0..VEC {
            a[l] += b[l];
        }
    };
    let mut acc = [[[0f32; VEC]; ILP]; LEVELS];
    let mut i = 0;
    while i + level_step <= size_ilp {
        for _ in 0..level_step {
            for k in 0..ILP {
                add(&mut acc[0][k], load(i * ILP + k));
            }
            i += 1;
        }
        for j in 1..LEVELS {
            for k in 0..ILP {
                let lower = acc[j - 1][k];
                add(&mut acc[j][k], lower);
                acc[j - 1][k] = [0.0; VEC];
            }
            let mask = level_mask << (j * level_power);
            if i & mask != 0 {
                break;
            }
        }
    }
    while i < size_ilp {
        for k in 0..ILP {
            add(&mut acc[0][k], load(i * ILP + k));
        }
        i += 1;
    }
    for j in 1..LEVELS {
        for k in 0..ILP {
            let hi = acc[j][k];
            add(&mut acc[0][k], hi);
        }
    }
    let mut partial = acc[0];
    for v in size_ilp * ILP..nvec {
        add(&mut partial[0], load(v));
    }
    for k in 1..ILP {
        let p = partial[k];
        add(&mut partial[0], p);
    }
    let mut s = partial[0].iter().sum::<f32>();
    for &v in &x[nvec * VEC..] {
        s += v;
    }
    s
}

#[test]
fn float32_sum_is_at_least_as_accurate_as_pytorchs_cascade_sum() {
    let n = 1usize << 24;
    for (seed, shift) in [(1u64, 0.0f32), (2, -0.5), (3, 0.25)] {
        let data: Vec<f32> = (0..n as u64)
            .map(|i| (mix(i, seed) >> 40) as f32 / (1u64 << 24) as f32 + shift)
            .collect();
        let exact: f64 = data.iter().map(|&v| v as f64).sum();
        let abs_sum: f64 = data.iter().map(|&v| (v as f64).abs()).sum();
        let torch = pytorch_cascade_sum(&data) as f64;
        let naive = data.iter().fold(0f32, |a, &v| a + v) as f64;
        let x = Tensor::from_vec(data, &[n as i64]).unwrap();
        let runs = pools()
            .iter()
            .flat_map(|p| [(p, Simd::Auto), (p, Simd::Baseline)]);
        for (pool, simd) in runs {
            let cfg = ExecConfig::default().with_simd(simd);
            let s = pool
                .install(|| reduce(&x, Sum, &ReduceArgs::new(Dims::All), &cfg))
                .unwrap()
                .to_vec()
                .unwrap()[0] as f64;
            let (e_ours, e_torch, e_naive) = (
                (s - exact).abs() / abs_sum,
                (torch - exact).abs() / abs_sum,
                (naive - exact).abs() / abs_sum,
            );
            assert!(
                e_ours <= e_torch,
                "seed {seed}: ours {e_ours:e} > PyTorch cascade {e_torch:e} (naive {e_naive:e})"
            );
            // The test can fail: a running f32 sum is far worse on this data.
            assert!(
                e_naive > 2.0 * e_torch,
                "naive {e_naive:e} torch {e_torch:e}"
            );
        }
        // Rows too: the inner reduction of [65536, 256] and the outer one over dim 0.
        let m = x.as_strided(&[65536, 256], &[256, 1], 0).unwrap();
        for dim in [0i64, 1] {
            let got = reduce(
                &m,
                Sum,
                &ReduceArgs::new(Dims::One(dim)),
                &ExecConfig::default(),
            )
            .unwrap()
            .to_vec()
            .unwrap();
            let vals = x.to_vec().unwrap();
            let (rows, cols) = if dim == 1 { (65536, 256) } else { (256, 65536) };
            for (o, &g) in got.iter().enumerate().step_by(97) {
                let line: Vec<f32> = (0..cols)
                    .map(|j| {
                        if dim == 1 {
                            vals[o * 256 + j]
                        } else {
                            vals[j * 256 + o]
                        }
                    })
                    .collect();
                let exact: f64 = line.iter().map(|&v| v as f64).sum();
                let abs: f64 = line.iter().map(|&v| (v as f64).abs()).sum();
                let torch = pytorch_cascade_sum(&line) as f64;
                let slack = f32::EPSILON as f64 * 4.0;
                assert!(
                    (g as f64 - exact).abs() / abs <= (torch - exact).abs() / abs + slack,
                    "dim {dim} output {o} of {rows}: {g} vs exact {exact}, PyTorch-like {torch}"
                );
            }
        }
    }
}

/// Fixed layouts that reach each kernel path on purpose: inner (contiguous reduced dim,
/// multi-leaf rows, split over threads with one output), outer (strided reduced dim,
/// contiguous kept dim; one block split over rows, and many blocks), and the strided
/// fallback; then run lengths around the vector widths (every tail of the hand-written AVX2
/// float32 sum and of the four-row outer fold); every op and dtype, ordinary and edge values.
#[test]
fn every_kernel_path_matches_the_reference() {
    let layouts = [
        // inner, one output of 5000 values (split reduction), and rows of 700
        (vec![5000i64], vec![1i64], Dims::All),
        (vec![6, 700], vec![700, 1], Dims::One(1)),
        // outer: [700, 5] over dim 0 (one block, rows split), [300, 600] over dim 0 (blocks)
        (vec![700, 5], vec![5, 1], Dims::One(0)),
        (vec![300, 600], vec![600, 1], Dims::One(0)),
        // channels-last [2, 8, 9, 7] over (2, 3): outer with a kept outer-outer dim
        (
            vec![2, 8, 9, 7],
            vec![504, 1, 56, 8],
            Dims::List(vec![2, 3]),
        ),
        // strided fallback: transposed input over the strided dim, kept dim strided too
        (vec![40, 50], vec![1, 40], Dims::One(1)),
        (vec![40, 3, 50], vec![3, 1, 120], Dims::List(vec![0, 2])),
    ];
    // Run lengths around the vector widths and the hand-written float32 sum's 32-value step
    // (tails of every kind), inner ([3, n] over dim 1) and outer ([n, w] over dim 0, rows
    // folded four at a time plus a tail).
    let lengths = [
        1i64, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 513,
    ];
    // Outer blocks around the register groups of the outer fold (256 bytes of accumulators:
    // 64 float32/int32, 32 float64/int64, 256 uint8/bool columns), ragged widths whose last
    // group overlaps the previous one, more rows than one leaf; and channels-last with 70
    // channels over (2, 3).
    let widths = [31i64, 32, 33, 60, 64, 65, 70, 127, 128, 129, 256, 257, 300];
    // Enough rows for the float32 sum's four-quarter outer fold (at least 64 passes of four
    // rows: 300 rows are 4 × 75, 303 leave three rows for the last leaf), at widths around
    // its 32-column minimum and its four-value step, and a block boundary (600 columns).
    let quarters = [32i64, 33, 37, 64, 100, 256, 257, 600]
        .iter()
        .flat_map(|&w| [300i64, 303].map(|n| (vec![n, w], vec![w, 1], Dims::One(0))))
        .collect::<Vec<_>>();
    let groups = widths
        .iter()
        .map(|&w| (vec![70, w], vec![w, 1], Dims::One(0)))

        .chain([(
            vec![2, 70, 5, 6],
            vec![2100, 1, 420, 70],
            Dims::List(vec![2, 3]),
        )]);
    let runs = lengths.iter().flat_map(|&n| {
        [
            (vec![3, n], vec![n, 1], Dims::One(1)),
            (vec![n, 13], vec![13, 1], Dims::One(0)),
            (vec![n, 9, 5], vec![45, 1, 9], Dims::List(vec![0, 2])),
        ]
    });
    // The four-quarter fold is the float32 sum's and mean's only (the other ops and dtypes
    // take the paths above on these layouts).
    for (sizes, strides, dims) in quarters {
        let l = Layout {
            sizes,
            strides,
            offset: 1,
        };
        for op in [ReductionOp::Sum, ReductionOp::Mean] {
            for (seed, keepdim) in [(7u64, false), (8, true), (9, false)] {
                let r = run_op::<f32>(op, &l, &dims, keepdim, seed);
                assert!(r.is_ok(), "{op} f32 {l:?} {dims:?}: {r:?}");
            }
        }
    }
    for (sizes, strides, dims) in layouts.into_iter().chain(groups).chain(runs) {
        let l = Layout {
            sizes,
            strides,
            offset: 1,
        };
        for op in ReductionOp::ALL {
            // Seed 9 draws edge values (seed % 3 == 0): ±0.0, ±inf, integers near their limits.
            for (seed, keepdim) in [(7u64, false), (8, true), (9, false)] {
                let keepdim = keepdim && op != ReductionOp::Prod;
                let dims = match (op.info().dims, &dims) {
                    (symstride::reduce::DimsRule::One, Dims::List(v)) => Dims::One(v[0]),
                    _ => dims.clone(),
                };
                for dt in DType::ALL {
                    let r = each_dtype!(dt, op, run_op, &l, &dims, keepdim, seed);
                    assert!(r.is_ok(), "{op} {dt} {l:?} {dims:?}: {r:?}");
                }
            }
        }
    }
}

/// `amax`/`amin` of floats through the outer fold's register groups with exactly one NaN:
/// a channels-last `[2, w, 9, 8]` tensor over `(2, 3)`, the NaN at one (batch, channel,
/// row) in turn (first and last row, first, middle and last lane of a group, the columns a
/// ragged width's groups overlap); every other output must be the exact extreme, the NaN's
/// column NaN (PyTorch propagates NaN), at 1-3 threads with and without AVX2.
#[test]
fn one_nan_in_a_vector_lane_propagates_through_the_outer_fold() {
    fn run<T: ReduceElement, R: Reducer<T, Out = T>>(r: R, nan: T, max: bool) {
        for w in [8i64, 60, 64, 70, 100, 130] {
            let (n, hw) = (2i64, 72i64);
            let len = (n * w * hw) as usize;
            let value = |i: usize| ((i * 37 + 11) % 101) as f64 - 50.0;
            let mut spots = vec![];
            for c in [0, 7, 31, w / 2, w - 33, w - 1] {
                for (b, row) in [(0, 0), (1, hw - 1), (1, 37)] {
                    spots.push((b, c.clamp(0, w - 1), row));
                }
            }
            for (b, c, row) in spots {
                // Channels-last storage: offset of (b, c, h·8 + w') is b·hw·w + row·w + c.
                let at = (b * hw * w + row * w + c) as usize;
                let data: Vec<T> = (0..len)
                    .map(|i| {
                        if i == at {
                            nan
                        } else {
                            T::from_scalar(Scalar::Float(value(i)))
                        }
                    })
                    .collect();
                let x = Tensor::from_storage(
                    Storage::from_vec(data),
                    &[n, w, 9, 8],
                    &[hw * w, 1, 8 * w, w],
                    0,
                )
                .unwrap();
                let args = ReduceArgs::new(Dims::List(vec![2, 3]));
                for pool in pools() {
                    for simd in [Simd::Auto, Simd::Baseline] {
                        let cfg = ExecConfig::default().with_grain_size(16).with_simd(simd);
                        let got = pool.install(|| reduce(&x, r, &args, &cfg)).unwrap();
                        let got = got.to_vec().unwrap();
                        for bb in 0..n {
                            for cc in 0..w {
                                let g = to_f64(got[(bb * w + cc) as usize].to_scalar());
                                let ctx = format!("w {w} NaN at {b},{c},{row}: output {bb},{cc}");
                                if (bb, cc) == (b, c) {
                                    assert!(g.is_nan(), "{ctx}: got {g}, want NaN");
                                    continue;
                                }
                                let vals =
                                    (0..hw).map(|rr| value((bb * hw * w + rr * w + cc) as usize));
                                let want = if max {
                                    vals.fold(f64::NEG_INFINITY, f64::max)
                                } else {
                                    vals.fold(f64::INFINITY, f64::min)
                                };
                                assert_eq!(g, want, "{ctx}");
                            }
                        }
                    }
                }
            }
        }
    }
    run::<f32, _>(Amax, f32::NAN, true);
    run::<f32, _>(Amin, f32::NAN, false);
    run::<f64, _>(Amax, f64::NAN, true);
    run::<f64, _>(Amin, -f64::NAN, false);
}

/// The last-dim sum of short rows folds four rows from four parts of a task's outputs at
/// once (`kernel::reduce`'s four-stream path, rows of at most one leaf), and the last
/// `n % 4` rows four at a time with the last repeated. Every row takes the same fold
/// wherever it falls, so the float32 `sum` and `mean` are bitwise the same at 1-3 threads
/// and any grain size, and match the f64 reference; a NaN stays in its own row. Row counts
/// around multiples of four, row lengths around the fold's eight- and four-value steps,
/// and kept dims in a permuted order (the four cursors walk an odometer). Every third row
/// of 32 or more values holds `2^60, -2^60, 1` at positions 0, 8 and 16, whose f64 sum
/// depends on the fold's order (1 in the four-row fold, 0 in the eight-accumulator fold of
/// longer runs), so a row folded the other way somewhere shows as differing bits.
#[test]
fn last_dim_sums_of_short_rows_are_the_same_at_every_thread_count() {
    let value = |i: usize| (((i as u64).wrapping_mul(2654435761) % 20011) as f32 - 10005.0) / 977.0;
    let mut layouts = vec![];
    for m in [1i64, 2, 3, 4, 5, 7, 17, 33, 130] {
        for k in [1i64, 3, 4, 7, 8, 9, 31, 32, 33, 256, 511, 512] {
            layouts.push((vec![m, k], vec![k, 1]));
        }
    }
    // [5, 7, k] with the kept dims transposed in memory, and a row stride with a gap.
    for k in [5i64, 64] {
        layouts.push((vec![5, 7, k], vec![k, 5 * k, 1]));
        layouts.push((vec![6, 9, k], vec![9 * (k + 3), k + 3, 1]));
    }
    for (sizes, strides) in layouts {
        let last = sizes.len() - 1;
        let k = sizes[last] as usize;
        // The first value of each output's row, in row-major order of the kept dims.
        let mut bases = vec![];
        let mut idx = vec![0i64; last];
        let outs: i64 = sizes[..last].iter().product();
        for _ in 0..outs {
            bases.push(idx.iter().zip(&strides).map(|(&i, &t)| i * t).sum::<i64>() as usize);
            for d in (0..last).rev() {
                idx[d] += 1;
                if idx[d] < sizes[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
        let len = bases.iter().max().unwrap() + k;
        let mut data: Vec<f32> = (0..len).map(value).collect();
        let cancels = |o: usize| o % 3 == 1 && k >= 32;
        for (o, &b) in bases.iter().enumerate() {
            if cancels(o) {
                data[b] = 2f32.powi(60);
                data[b + 8] = -(2f32.powi(60));
                data[b + 16] = 1.0;
            }
        }
        if len > 50 {
            data[bases[bases.len() / 2] + k / 2] = f32::NAN;
        }
        let x = Tensor::from_storage(Storage::from_vec(data.clone()), &sizes, &strides, 0).unwrap();
        let args = ReduceArgs::new(Dims::One(last as i64));
        let mut first: Option<(Vec<u32>, Vec<u32>)> = None;
        for pool in pools() {
            for grain in [1usize, 16, 1 << 20] {
                let cfg = ExecConfig::default().with_grain_size(grain);
                let (s, m) = pool.install(|| {
                    (
                        reduce(&x, Sum, &args, &cfg).unwrap().to_vec().unwrap(),
                        reduce(&x, Mean, &args, &cfg).unwrap().to_vec().unwrap(),
                    )
                });
                for (o, &b) in bases.iter().enumerate() {
                    let want: f64 = data[b..b + k].iter().map(|&v| v as f64).sum();
                    let ctx = format!("{sizes:?} {strides:?} output {o} grain {grain}");
                    if want.is_nan() {
                        assert!(s[o].is_nan() && m[o].is_nan(), "{ctx}: NaN lost");
                    } else if !cancels(o) {
                        // Exact: these values' f64 partial sums are exact in any order.
                        assert_eq!(s[o], want as f32, "{ctx}: sum");
                        assert_eq!(m[o], (want as f32) / k as f32, "{ctx}: mean");
                    }
                }
                let bits = (
                    s.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                    m.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                );
                match &first {
                    None => first = Some(bits),
                    Some(f) => assert_eq!(f, &bits, "{sizes:?} {strides:?} grain {grain}: bits differ"),
                }
            }
        }
    }
}
