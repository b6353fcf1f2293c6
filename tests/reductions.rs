//! Reductions end to end: kernels against the table's naive f64 references on random
//! strided, broadcast and offset layouts for every op and dtype at 1-3 threads; the
//! symbolic meta against the concrete one; the float32 sum's accuracy against a simulation
//! of PyTorch's cascade sum.

use proptest::prelude::*;
use std::sync::OnceLock;
use symstride::iter::TensorSpec;
use symstride::kernel::{reduce, ExecConfig, ReduceArgs};
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

/// Deterministic values from a seed, per dtype: small integers (exact float sums, ties for
/// argmax), with some NaNs for floats when `nan`.
trait Gen: ReduceElement {
    fn gen(h: u64, nan: bool, prod: bool) -> Self;
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
            fn gen(h: u64, nan: bool, prod: bool) -> Self {
                if nan && h % 41 == 0 {
                    return <$t>::NAN;
                }
                if prod {
                    return if h % 2 == 0 { 1.0 } else { -1.0 };
                }
                (h % 11) as $t - 5.0
            }
        }
    };
}
gen_float!(f32);
gen_float!(f64);
macro_rules! gen_int {
    ($t:ty, $m:expr, $o:expr) => {
        impl Gen for $t {
            fn gen(h: u64, _: bool, prod: bool) -> Self {
                if prod {
                    // ±1 (1 for uint8): products stay exact.
                    return if h % 2 == 0 || $o == 0 {
                        1 as $t
                    } else {
                        (0 as $t).wrapping_sub(1)
                    };
                }
                ((h % $m) as i64 - $o as i64) as $t
            }
        }
    };
}
gen_int!(i32, 11, 5);
gen_int!(i64, 11, 5);
gen_int!(u8, 256, 0);
impl Gen for bool {
    fn gen(h: u64, _: bool, _: bool) -> Self {
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
        .map(|i| T::gen(mix(i, seed), true, op == ReductionOp::Prod))
        .collect();
    let x = Tensor::from_storage(Storage::from_vec(data), &l.sizes, &l.strides, l.offset).unwrap();
    let spec = TensorSpec::new(l.sizes.clone(), l.strides.clone(), std::mem::size_of::<T>())
        .with_offset(l.offset);
    let meta = reduction_meta(op, &spec, T::DTYPE, dims, keepdim);
    let args = ReduceArgs::new(dims.clone()).keepdim(keepdim);
    let cfg = ExecConfig::default().with_grain_size(16);
    for (n, pool) in pools().iter().enumerate() {
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
                "{} threads, output {}: got {} want {} ({:?} dims {:?})",
                n + 1,
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
        for pool in pools() {
            let s = pool
                .install(|| reduce(&x, Sum, &ReduceArgs::new(Dims::All), &ExecConfig::default()))
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
/// fallback; every op and a few dtypes.
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
    for (sizes, strides, dims) in layouts {
        let l = Layout {
            sizes,
            strides,
            offset: 1,
        };
        for op in ReductionOp::ALL {
            for (seed, keepdim) in [(7u64, false), (8, true)] {
                let keepdim = keepdim && op != ReductionOp::Prod;
                let dims = match (op.info().dims, &dims) {
                    (symstride::reduce::DimsRule::One, Dims::List(v)) => Dims::One(v[0]),
                    _ => dims.clone(),
                };
                for dt in [DType::F32, DType::I64, DType::U8, DType::Bool] {
                    let r = each_dtype!(dt, op, run_op, &l, &dims, keepdim, seed);
                    assert!(r.is_ok(), "{op} {dt} {l:?} {dims:?}: {r:?}");
                }
            }
        }
    }
}
