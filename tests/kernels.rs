//! Kernels vs a naive multi-index reference, on random layouts (broadcast, size 0/1,
//! overlapping inputs, arbitrary non-negative strides, in-place outputs), several thread
//! counts and grain sizes, and every element type.

use proptest::prelude::*;
use symstride::kernel::{self, ExecConfig, Map2};
use symstride::tensor::{Element, MemoryFormat, NumElement, Storage, Tensor};
use symstride::Error;

/// A random operand layout (sizes right-aligned to the broadcast shape).
#[derive(Clone, Debug)]
struct Lay {
    sizes: Vec<i64>,
    strides: Vec<i64>,
    offset: i64,
}

impl Lay {
    fn storage_len(&self) -> usize {
        let max: i64 = self.offset
            + self
                .sizes
                .iter()
                .zip(&self.strides)
                .map(|(&s, &t)| if s > 0 { (s - 1) * t } else { 0 })
                .sum::<i64>();
        max as usize + 1
    }
}

/// Broadcast shape, then per input: its rank (<= ndim), sizes (shape or 1), strides, offset.
fn shape_strategy() -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(
        prop_oneof![3 => 1i64..5, 1 => Just(1i64), 1 => Just(0i64)],
        0..5,
    )
}

fn input_strategy(shape: Vec<i64>) -> impl Strategy<Value = Lay> {
    let nd = shape.len();
    (
        0..=nd,
        prop::collection::vec((any::<bool>(), 0i64..13), nd),
        0i64..4,
        any::<bool>(),
    )
        .prop_map(move |(rank, dims, offset, dense)| {
            let shape = &shape[nd - rank..];
            let sizes: Vec<i64> = shape
                .iter()
                .zip(&dims)
                .map(|(&s, &(bcast, _))| if bcast && s > 0 { 1 } else { s })
                .collect();
            let strides: Vec<i64> = if dense {
                // row-major dense
                let mut acc = 1;
                let mut st = vec![0; rank];
                for d in (0..rank).rev() {
                    st[d] = acc;
                    acc *= sizes[d].max(1);
                }
                st
            } else {
                dims[..rank].iter().map(|&(_, st)| st).collect() // arbitrary, may overlap
            };
            Lay {
                sizes,
                strides,
                offset,
            }
        })
}

/// An output layout: a dense layout in a random dimension order, possibly with gaps.
fn output_strategy(shape: Vec<i64>) -> impl Strategy<Value = Lay> {
    let nd = shape.len();
    (
        Just((0..nd).collect::<Vec<_>>()).prop_shuffle(),
        prop::collection::vec(1i64..3, nd),
        0i64..3,
    )
        .prop_map(move |(order, gaps, offset)| {
            let mut st = vec![0; nd];
            let mut acc = 1;
            for &d in &order {
                st[d] = acc * gaps[d];
                acc = st[d] * shape[d].max(1);
            }
            Lay {
                sizes: shape.clone(),
                strides: st,
                offset,
            }
        })
}

fn tensor_from<T: Element>(l: &Lay, seed: u64) -> Tensor<T> {
    let n = l.storage_len();
    let data: Vec<T> = (0..n as u64)
        .map(|i| T::cast_from(((i * 7919 + seed * 104729) % 23) as i64 - 11))
        .collect();
    Tensor::from_storage(Storage::from_vec(data), &l.sizes, &l.strides, l.offset)
        .expect("valid layout")
}

/// Naive reference: the element of `t` at broadcast index `idx` (right-aligned).
fn at<T: Element>(t: &Tensor<T>, all: &[T], idx: &[i64]) -> T {
    let lead = idx.len() - t.dim();
    let mut off = t.storage_offset();
    for d in 0..t.dim() {
        let i = if t.sizes()[d] == 1 { 0 } else { idx[lead + d] };
        off += i * t.strides()[d];
    }
    all[off as usize]
}

fn storage_vec<T: Element>(t: &Tensor<T>) -> Vec<T> {
    Tensor::from_storage(t.storage().clone(), &[t.storage().len() as i64], &[1], 0)
        .unwrap()
        .to_vec()
        .unwrap()
}

fn for_each_index(shape: &[i64], mut f: impl FnMut(&[i64])) {
    if shape.contains(&0) {
        return;
    }
    let mut idx = vec![0i64; shape.len()];
    loop {
        f(&idx);
        let mut d = shape.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

fn pool(n: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .expect("pool")
}

fn check_binary<T: NumElement>(
    shape: &[i64],
    a: &Lay,
    b: &Lay,
    out: &Lay,
    threads: usize,
    grain: usize,
    same_storage: bool,
) {
    let ta = tensor_from::<T>(a, 1);
    // an input viewing the other's storage (overlapping inputs are legal)
    let tb = if same_storage && b.storage_len() <= ta.storage().len() {
        Tensor::from_storage(ta.storage().clone(), &b.sizes, &b.strides, b.offset).unwrap()
    } else {
        tensor_from::<T>(b, 2)
    };
    let cfg = ExecConfig::default().with_grain_size(grain);
    let f = |x: T, y: T| x.mul(y).add(x);
    let (va, vb) = (storage_vec(&ta), storage_vec(&tb));
    pool(threads).install(|| {
        // allocated output
        let r = kernel::map2(&ta, &tb, &f, &cfg).unwrap();
        assert_eq!(r.sizes(), &bshape(&[&a.sizes, &b.sizes])[..]);
        assert!(r.is_non_overlapping_and_dense());
        for_each_index(r.sizes(), |i| {
            assert_eq!(
                r.get(i).unwrap(),
                f(at(&ta, &va, i), at(&tb, &vb, i)),
                "at {i:?}"
            )
        });
        // given output with its own layout
        let to = tensor_from::<T>(out, 3);
        kernel::map2_out(&ta, &tb, &to, &f, &cfg).unwrap();
        for_each_index(shape, |i| {
            assert_eq!(
                to.get(i).unwrap(),
                f(at(&ta, &va, i), at(&tb, &vb, i)),
                "out at {i:?}"
            )
        });
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn binary_matches_reference(
        (shape, a, b, out) in shape_strategy().prop_flat_map(|s| (Just(s.clone()), input_strategy(s.clone()), input_strategy(s.clone()), output_strategy(s))),
        threads in 1usize..4, grain in 1usize..40, same in any::<bool>(), ty in 0u8..5,
    ) {
        match ty {
            0 => check_binary::<f32>(&shape, &a, &b, &out, threads, grain, same),
            1 => check_binary::<f64>(&shape, &a, &b, &out, threads, grain, same),
            2 => check_binary::<i32>(&shape, &a, &b, &out, threads, grain, same),
            3 => check_binary::<i64>(&shape, &a, &b, &out, threads, grain, same),
            _ => check_binary::<u8>(&shape, &a, &b, &out, threads, grain, same),
        }
    }

    #[test]
    fn copy_and_cast_match_reference(
        (shape, src, out) in shape_strategy().prop_flat_map(|s| (Just(s.clone()), input_strategy(s.clone()), output_strategy(s))),
        threads in 1usize..4, grain in 1usize..40, tile in 4usize..9,
    ) {
        let cfg = ExecConfig::default().with_grain_size(grain).with_tile(tile);
        let ts = tensor_from::<i32>(&src, 5);
        let vs = storage_vec(&ts);
        pool(threads).install(|| {
            let to = tensor_from::<f64>(&out, 6);
            kernel::copy_into(&to, &ts, &cfg).unwrap();
            for_each_index(&shape, |i| assert_eq!(to.get(i).unwrap(), at(&ts, &vs, i) as f64));
            let tb = tensor_from::<bool>(&out, 7);
            kernel::copy_into(&tb, &ts, &cfg).unwrap();
            for_each_index(&shape, |i| assert_eq!(tb.get(i).unwrap(), at(&ts, &vs, i) != 0));
            let same = tensor_from::<i32>(&out, 8);
            kernel::copy_into(&same, &ts, &cfg).unwrap();
            for_each_index(&shape, |i| assert_eq!(same.get(i).unwrap(), at(&ts, &vs, i)));
        });
    }

    #[test]
    fn ternary_where_and_addcmul_match_reference(
        (_shape, c, a, b) in shape_strategy().prop_flat_map(|s| (Just(s.clone()), input_strategy(s.clone()), input_strategy(s.clone()), input_strategy(s))),
        threads in 1usize..4, grain in 1usize..40,
    ) {
        let cfg = ExecConfig::default().with_grain_size(grain);
        let (tc, ta, tb) = (tensor_from::<bool>(&c, 1), tensor_from::<f32>(&a, 2), tensor_from::<f32>(&b, 3));
        let (vc, va, vb) = (storage_vec(&tc), storage_vec(&ta), storage_vec(&tb));
        pool(threads).install(|| {
            let r = kernel::map3(&tc, &ta, &tb, &kernel::Where, &cfg).unwrap();
            for_each_index(r.sizes(), |i| assert_eq!(r.get(i).unwrap(), if at(&tc, &vc, i) { at(&ta, &va, i) } else { at(&tb, &vb, i) }));
            let r = kernel::map3(&ta, &tb, &ta, &kernel::Addcmul(0.5f32), &cfg).unwrap();
            for_each_index(r.sizes(), |i| {
                let (x, y) = (at(&ta, &va, i), at(&tb, &vb, i));
                assert_eq!(r.get(i).unwrap(), x + 0.5 * y * x);
            });
        });
    }

    #[test]
    fn in_place_binary_matches_reference(
        (shape, b) in shape_strategy().prop_flat_map(|s| (Just(s.clone()), input_strategy(s))),
        threads in 1usize..4, grain in 1usize..40,
    ) {
        let cfg = ExecConfig::default().with_grain_size(grain);
        let a = tensor_from::<i64>(&Lay { sizes: shape.clone(), strides: contiguous(&shape), offset: 1 }, 4);
        let tb = tensor_from::<i64>(&b, 5);
        let (va, vb) = (storage_vec(&a), storage_vec(&tb));
        pool(threads).install(|| kernel::map2_out(&a, &tb, &a, &kernel::Sub, &cfg).unwrap());
        for_each_index(&shape, |i| assert_eq!(a.get(i).unwrap(), at(&a, &va, i).wrapping_sub(at(&tb, &vb, i))));
    }
}

/// Reference broadcast of right-aligned shapes whose sizes are either a common value or 1.
fn bshape(shapes: &[&[i64]]) -> Vec<i64> {
    let nd = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    (0..nd)
        .map(|d| {
            let vals: Vec<i64> = shapes
                .iter()
                .filter_map(|s| (d + s.len()).checked_sub(nd).map(|i| s[i]))
                .collect();
            vals.iter().copied().find(|&v| v != 1).unwrap_or(1)
        })
        .collect()
}

fn contiguous(shape: &[i64]) -> Vec<i64> {
    let mut st = vec![0; shape.len()];
    let mut acc = 1;
    for d in (0..shape.len()).rev() {
        st[d] = acc;
        acc *= shape[d].max(1);
    }
    st
}

#[test]
fn unary_ops_all_float_and_int_types() {
    let x = Tensor::from_vec(vec![-2.0f32, -0.5, 0.0, 3.0], &[2, 2])
        .unwrap()
        .transpose(0, 1)
        .unwrap();
    assert_eq!(
        kernel::relu(&x).unwrap().to_vec().unwrap(),
        vec![0.0, 0.0, 0.0, 3.0]
    );
    assert_eq!(
        kernel::neg(&x).unwrap().to_vec().unwrap(),
        vec![2.0, -0.0, 0.5, -3.0]
    );
    let e = kernel::exp(&x).unwrap().to_vec().unwrap();
    assert!((e[3] - 3.0f32.exp()).abs() < 1e-6);
    let i = Tensor::from_vec(vec![i32::MIN, -3, 4], &[3]).unwrap();
    assert_eq!(
        kernel::abs(&i).unwrap().to_vec().unwrap(),
        vec![i32::MIN, 3, 4]
    );
    let u = Tensor::from_vec(vec![1u8, 255], &[2]).unwrap();
    assert_eq!(kernel::add(&u, &u).unwrap().to_vec().unwrap(), vec![2, 254]);
    let b = Tensor::from_vec(vec![true, false], &[2]).unwrap();
    assert_eq!(b.cast::<f64>().unwrap().to_vec().unwrap(), vec![1.0, 0.0]);
}

/// A user function with a hand-written contiguous body: the body must be used for contiguous
/// non-aliasing rows and the scalar path elsewhere; both must agree.
struct Saxpy(f32);
impl Map2<f32, f32, f32> for Saxpy {
    fn call(&self, a: f32, b: f32) -> f32 {
        self.0 * a + b
    }
    fn contiguous(&self, out: &mut [std::mem::MaybeUninit<f32>], a: &[f32], b: &[f32]) {
        for (o, (x, y)) in out.chunks_mut(4).zip(a.chunks(4).zip(b.chunks(4))) {
            for k in 0..o.len() {
                o[k].write(self.0 * x[k] + y[k]);
            }
        }
    }
}

#[test]
fn user_function_with_vectorized_body() {
    let a = Tensor::from_vec((0..1000).map(|x| x as f32).collect(), &[10, 100]).unwrap();
    let b = Tensor::from_vec((0..100).map(|x| x as f32).collect(), &[100]).unwrap();
    let cfg = ExecConfig::default().with_grain_size(7);
    let r = pool(2).install(|| kernel::map2(&a, &b, &Saxpy(2.0), &cfg).unwrap());
    let r2 = kernel::map2(
        &a.transpose(0, 1).unwrap(),
        &b.unsqueeze(1).unwrap(),
        &Saxpy(2.0),
        &cfg,
    )
    .unwrap();
    for i in 0..10 {
        for j in 0..100 {
            let want = 2.0 * (i * 100 + j) as f32 + j as f32;
            assert_eq!(r.get(&[i, j]).unwrap(), want);
            assert_eq!(r2.get(&[j, i]).unwrap(), want);
        }
    }
}

#[test]
fn overlapping_outputs_are_rejected() {
    let a = Tensor::from_vec((0..16).map(|x| x as f32).collect(), &[16]).unwrap();
    // output with internal overlap (expanded)
    let e = a.narrow(0, 0, 1).unwrap().expand(&[4]).unwrap();
    let b = Tensor::zeros(&[4]).unwrap();
    assert!(matches!(
        kernel::add_out(&b, &b, &e),
        Err(Error::MemoryOverlap { .. })
    ));
    // output partially overlapping an input of the same storage
    let x = a.narrow(0, 0, 8).unwrap();
    let y = a.narrow(0, 4, 8).unwrap();
    assert!(matches!(
        kernel::add_out(&x, &x, &y),
        Err(Error::MemoryOverlap { .. })
    ));
    assert!(matches!(y.copy_(&x), Err(Error::MemoryOverlap { .. })));
    // disjoint halves of one storage are fine
    let lo = a.narrow(0, 0, 8).unwrap();
    let hi = a.narrow(0, 8, 8).unwrap();
    kernel::add_out(&lo, &lo, &hi).unwrap();
    assert_eq!(hi.get(&[3]).unwrap(), 6.0);
    // concurrent access is refused, not raced
    let g = a.storage().read().unwrap();
    assert!(matches!(
        kernel::add_out(&b, &b, &a.narrow(0, 0, 4).unwrap()),
        Err(Error::MemoryOverlap { .. })
    ));
    drop(g);
}

/// A plan from the `iter` build for a 1-d f32 copy of `n` elements.
fn plan_1d(n: i64) -> symstride::iter::Plan<i64> {
    use symstride::iter::{TensorIteratorConfig, TensorSpec};
    TensorIteratorConfig::new()
        .add_output(TensorSpec::new(vec![n], vec![1], 4))
        .add_input(TensorSpec::new(vec![n], vec![1], 4))
        .build()
        .unwrap()
}

#[test]
fn invalid_plans_are_rejected_before_any_access() {
    let out = Tensor::<f32>::zeros(&[4]).unwrap();
    let a = Tensor::<f32>::zeros(&[4]).unwrap();
    let mut plan = plan_1d(4);
    let add1 = |x: f32| x + 1.0;
    kernel::execute_map1(
        &plan,
        out.storage(),
        a.storage(),
        &add1,
        &ExecConfig::default(),
    )
    .unwrap();
    assert_eq!(out.to_vec().unwrap(), vec![1.0; 4]);
    plan.operands[1].offset = 1; // one past the end
    assert!(matches!(
        kernel::execute_map1(
            &plan,
            out.storage(),
            a.storage(),
            &add1,
            &ExecConfig::default()
        ),
        Err(Error::InvalidLayout { .. })
    ));
    plan.operands[1].offset = 3;
    plan.operands[1].byte_strides = vec![-4]; // walks backwards from the last element: fine
    kernel::execute_map1(
        &plan,
        out.storage(),
        a.storage(),
        &add1,
        &ExecConfig::default(),
    )
    .unwrap();
    plan.operands[1].byte_strides = vec![2]; // misaligned
    assert!(kernel::execute_map1(
        &plan,
        out.storage(),
        a.storage(),
        &add1,
        &ExecConfig::default()
    )
    .is_err());
    plan.operands[1].byte_strides = vec![i64::MAX - 3];
    assert!(kernel::execute_map1(
        &plan,
        out.storage(),
        a.storage(),
        &add1,
        &ExecConfig::default()
    )
    .is_err());
    let small = Tensor::<f32>::zeros(&[3]).unwrap();
    let plan = plan_1d(4);
    assert!(kernel::execute_map1(
        &plan,
        out.storage(),
        small.storage(),
        &add1,
        &ExecConfig::default()
    )
    .is_err());
    assert!(kernel::execute_map1(
        &plan,
        out.storage(),
        Tensor::<f64>::zeros(&[4]).unwrap().storage(),
        &|x: f64| x as f32,
        &ExecConfig::default()
    )
    .is_err());
}

#[test]
fn transposed_and_channels_last_copies_use_tiles_correctly() {
    for &(n, m) in &[(130usize, 70usize), (64, 64), (3, 200)] {
        let src = Tensor::from_vec(
            (0..(n * m) as i64).collect::<Vec<_>>(),
            &[n as i64, m as i64],
        )
        .unwrap()
        .transpose(0, 1)
        .unwrap();
        for threads in [1, 2, 3] {
            let out = pool(threads).install(|| src.contiguous().unwrap());
            assert!(out.is_contiguous(MemoryFormat::Contiguous));
            assert_eq!(out.to_vec().unwrap(), src.to_vec().unwrap());
        }
    }
    let x = Tensor::from_vec(
        (0..2 * 3 * 17 * 19).map(|v| v as f32).collect(),
        &[2, 3, 17, 19],
    )
    .unwrap();
    let cl = x.to(MemoryFormat::ChannelsLast).unwrap();
    assert_eq!(cl.strides(), &[3 * 17 * 19, 1, 3 * 19, 3]);
    assert_eq!(cl.to_vec().unwrap(), x.to_vec().unwrap());
    let back = cl.contiguous().unwrap();
    assert_eq!(back.strides(), x.strides());
    assert_eq!(back.to_vec().unwrap(), x.to_vec().unwrap());
}

#[test]
fn allocated_outputs_follow_input_layout() {
    let a = Tensor::<f32>::zeros(&[2, 3, 4, 5])
        .unwrap()
        .to(MemoryFormat::ChannelsLast)
        .unwrap();
    let b = Tensor::<f32>::zeros(&[3, 4, 5]).unwrap();
    let r = kernel::add(&a, &b).unwrap();
    assert_eq!(r.strides(), &[60, 1, 15, 3]);
    let t = Tensor::<f32>::zeros(&[4, 6])
        .unwrap()
        .transpose(0, 1)
        .unwrap();
    assert_eq!(kernel::neg(&t).unwrap().strides(), &[1, 6]);
    assert!(matches!(
        kernel::add(
            &Tensor::<f32>::zeros(&[2, 3]).unwrap(),
            &Tensor::<f32>::zeros(&[4]).unwrap()
        ),
        Err(Error::Broadcast { .. })
    ));
}

/// Every source/destination element type pair, through a strided (transposed) copy large
/// enough to take the tiled path, against the scalar cast.
#[test]
fn cast_matrix_all_element_types() {
    fn check<S: Element, D: Element>() {
        let src = Tensor::from_vec(
            (0..70 * 90)
                .map(|i| S::cast_from((i % 7) as i64 - 3))
                .collect(),
            &[70, 90],
        )
        .unwrap()
        .transpose(0, 1)
        .unwrap();
        let dst = Tensor::<D>::zeros(&[90, 70]).unwrap();
        let cfg = ExecConfig::default().with_grain_size(100);
        pool(2).install(|| kernel::copy_into(&dst, &src, &cfg).unwrap());
        let want: Vec<D> = src
            .to_vec()
            .unwrap()
            .into_iter()
            .map(D::cast_from)
            .collect();
        assert_eq!(
            dst.to_vec().unwrap(),
            want,
            "{:?} -> {:?}",
            S::DTYPE,
            D::DTYPE
        );
    }
    macro_rules! row {
        ($s:ty) => {
            check::<$s, f32>();
            check::<$s, f64>();
            check::<$s, i32>();
            check::<$s, i64>();
            check::<$s, u8>();
            check::<$s, bool>();
        };
    }
    row!(f32);
    row!(f64);
    row!(i32);
    row!(i64);
    row!(u8);
    row!(bool);
}

/// NCHW → NHWC of distinct values for channel count `c` (the narrow interleave for `c ≤ 8`),
/// into an allocated and a given channels-last output, against the per-index reference.
fn check_to_channels_last<S: Element, O: Element>(
    n: i64,
    c: i64,
    h: i64,
    w: i64,
    threads: usize,
    grain: usize,
) {
    let len = (n * c * h * w) as usize;
    let x = Tensor::from_vec(
        (0..len as i64).map(|v| S::cast_from(v % 251 + 1)).collect(),
        &[n, c, h, w],
    )
    .unwrap();
    let cfg = ExecConfig::default().with_grain_size(grain);
    let out = Tensor::<O>::zeros(&[n, h, w, c])
        .unwrap()
        .permute(&[0, 3, 1, 2])
        .unwrap();
    pool(threads).install(|| {
        kernel::copy_into(&out, &x, &cfg).unwrap();
        let cl = x.to(MemoryFormat::ChannelsLast).unwrap();
        for_each_index(&[n, c, h, w], |i| {
            let want = O::cast_from(x.get(i).unwrap());
            assert_eq!(out.get(i).unwrap(), want, "{n}x{c}x{h}x{w} at {i:?}");
            assert_eq!(
                O::cast_from(cl.get(i).unwrap()),
                want,
                "to() {n}x{c}x{h}x{w} at {i:?}"
            );
        });
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Every channel count 1..=8, odd spatial sizes (lengths not a multiple of the 4-wide
    /// SSE blocks), 1-3 threads, f32 (SSE body), i32→i32, f64 and u8 (scalar bodies) and a cast.
    #[test]
    fn narrow_channel_conversion_matches_reference(
        n in 1i64..3, c in 1i64..=8, h in 1i64..24, w in 1i64..40,
        threads in 1usize..=3, grain in prop::sample::select(vec![16usize, 1000, 32768]),
    ) {
        check_to_channels_last::<f32, f32>(n, c, h, w, threads, grain);
        check_to_channels_last::<i32, i32>(n, c, h, w, threads, grain);
        check_to_channels_last::<f64, f64>(n, c, h, w, threads, grain);
        check_to_channels_last::<u8, u8>(n, c, h, w, threads, grain);
        check_to_channels_last::<i32, f32>(n, c, h, w, threads, grain);
    }
}

/// Narrow conversions long enough for several interleave runs per channel row and several
/// rayon tasks.
#[test]
fn narrow_channel_conversion_long_rows() {
    for c in 1..=8 {
        check_to_channels_last::<f32, f32>(2, c, 67, 131, 3, 64);
    }
    check_to_channels_last::<f64, f64>(3, 3, 97, 89, 2, 64);
}

/// A channels-last `[n, c, h, w]` operand plus a contiguous `[c, h, w]` operand broadcast
/// over `n` (read with stride `h·w` along the innermost iteration dim, so it is re-laid out once
/// when `n ≥ 4` and the work is above the grain): binary into an allocated and a given
/// channels-last output, and a ternary op with the broadcast operand in every position.
fn check_cl_bcast<T: NumElement>(n: i64, c: i64, h: i64, w: i64, threads: usize, grain: usize) {
    let big = tensor_from::<T>(
        &Lay {
            sizes: vec![n, c, h, w],
            strides: contiguous(&[n, c, h, w]),
            offset: 0,
        },
        4,
    )
    .to(MemoryFormat::ChannelsLast)
    .unwrap();
    let small = tensor_from::<T>(
        &Lay {
            sizes: vec![c, h, w],
            strides: contiguous(&[c, h, w]),
            offset: 1,
        },
        5,
    );
    let cfg = ExecConfig::default().with_grain_size(grain);
    let f = |x: T, y: T| x.mul(y).add(y);
    let g = |x: T, y: T, z: T| x.add(y.mul(z)).sub(z);
    let (vb, vs) = (storage_vec(&big), storage_vec(&small));
    pool(threads).install(|| {
        let shape = [n, c, h, w];
        let r = kernel::map2(&big, &small, &f, &cfg).unwrap();
        let out = Tensor::<T>::zeros(&[n, h, w, c])
            .unwrap()
            .permute(&[0, 3, 1, 2])
            .unwrap();
        kernel::map2_out(&small, &big, &out, &f, &cfg).unwrap();
        let r3 = kernel::map3(&small, &big, &small, &g, &cfg).unwrap();
        let r3b = kernel::map3(&big, &small, &big, &g, &cfg).unwrap();
        for_each_index(&shape, |i| {
            let (x, y) = (at(&big, &vb, i), at(&small, &vs, i));
            assert_eq!(r.get(i).unwrap(), f(x, y), "map2 at {i:?}");
            assert_eq!(out.get(i).unwrap(), f(y, x), "map2_out at {i:?}");
            assert_eq!(r3.get(i).unwrap(), g(y, x, y), "map3 at {i:?}");
            assert_eq!(r3b.get(i).unwrap(), g(x, y, x), "map3 (middle) at {i:?}");
        });
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// The re-laid-out broadcast operand (n ≥ 4, above the grain) and the plain strided loop
    /// (n < 4 or below the grain), 1-3 threads, sizes not multiples of the vector width.
    #[test]
    fn relaid_out_broadcast_operand_matches_reference(
        n in 1i64..7, c in 1i64..40, h in 1i64..8, w in 1i64..9,
        threads in 1usize..=3, grain in prop::sample::select(vec![8usize, 64, 32768]),
    ) {
        check_cl_bcast::<f32>(n, c, h, w, threads, grain);
        check_cl_bcast::<i64>(n, c, h, w, threads, grain);
        check_cl_bcast::<u8>(n, c, h, w, threads, grain);
    }
}

/// The bench's shape scaled down: 64 channels, several tiles of the re-layout copy.
#[test]
fn relaid_out_broadcast_operand_bench_shape() {
    check_cl_bcast::<f32>(5, 64, 13, 11, 2, 256);
    check_cl_bcast::<f64>(8, 3, 17, 19, 3, 64);
}

/// Outputs above the non-temporal threshold (8 MiB): contiguous binary, ternary and unary
/// ops on lengths that are not a multiple of any vector width, 1-3 threads, against the
/// element function; the output starts at an odd offset so the streamed rows have a head.
/// Both burst modes: the vector twin (`Simd::Auto`: AVX2 where the CPU has it, AVX-512 for
/// i64 outputs where it has AVX-512 F/DQ/VL) and the baseline. The i64 multiplies wrap
/// with operands beyond 32 bits, so every 64-bit product form is checked.
#[test]
fn large_contiguous_outputs_match_reference() {
    fn check<T: NumElement>(n: usize) {
        let a = Tensor::from_vec(
            (0..n).map(|i| T::cast_from((i % 251) as i64)).collect(),
            &[n as i64],
        )
        .unwrap();
        let b = Tensor::from_vec(
            (0..n).map(|i| T::cast_from((i % 13) as i64 + 1)).collect(),
            &[n as i64],
        )
        .unwrap();
        let (va, vb) = (a.to_vec().unwrap(), b.to_vec().unwrap());
        let f = |x: T, y: T| x.mul(y).add(x);
        let g = |x: T, y: T, z: T| x.add(y).mul(z);
        let out = Tensor::from_storage(
            Storage::from_vec(vec![T::ZERO; n + 3]),
            &[n as i64],
            &[1],
            3,
        )
        .unwrap();
        // AVX2 bursts (`Simd::Auto` on a CPU with AVX2) and the SSE2 baseline
        for (threads, simd) in [1, 2, 3]
            .into_iter()
            .flat_map(|t| [(t, kernel::Simd::Auto), (t, kernel::Simd::Baseline)])
        {
            let cfg = ExecConfig::default().with_simd(simd);
            pool(threads).install(|| {
                let r = kernel::map2(&a, &b, &f, &cfg).unwrap().to_vec().unwrap();
                kernel::map3_out(&a, &b, &a, &out, &g, &cfg).unwrap();
                let o = out.to_vec().unwrap();
                let u = kernel::map1(&b, &|x: T| x.add(x), &cfg)
                    .unwrap()
                    .to_vec()
                    .unwrap();
                for i in 0..n {
                    assert_eq!(r[i], f(va[i], vb[i]), "map2 at {i} ({threads} threads, {simd:?})");
                    assert_eq!(o[i], g(va[i], vb[i], va[i]), "map3 at {i}");
                    assert_eq!(u[i], vb[i].add(vb[i]), "map1 at {i}");
                }
            });
        }
    }
    check::<f32>((3 << 20) + 13);
    check::<u8>((9 << 20) + 7);
    check::<f64>((1 << 20) + 5 + (1 << 20));
    check::<i64>((1 << 20) + 9);
    let n = (1usize << 20) + 3;
    let big = |k: i64| (0..n as i64).map(move |i| i.wrapping_mul(0x1E37_79B9_7F4A_7C15) ^ k);
    let a = Tensor::from_vec(big(5).collect(), &[n as i64]).unwrap();
    let b = Tensor::from_vec(big(-1 << 40).collect(), &[n as i64]).unwrap();
    let want: Vec<i64> = big(5).zip(big(-1 << 40)).map(|(x, y)| x.wrapping_mul(y)).collect();
    for simd in [kernel::Simd::Auto, kernel::Simd::Baseline] {
        let cfg = ExecConfig::default().with_simd(simd);
        let got = pool(2)
            .install(|| kernel::map2(&a, &b, &|x: i64, y: i64| x.wrapping_mul(y), &cfg))
            .unwrap();
        assert_eq!(got.to_vec().unwrap(), want, "{simd:?}");
    }
}

/// A dense `[a, b, c]` source permuted so the copy's output (contiguous) and source disagree
/// on the fastest dimension, copied with the tiled kernel (`perm` picks the permutation),
/// against the per-element reference.
fn check_tiled_copy<S: Element, O: Element>(
    sizes: [i64; 3],
    perm: usize,
    offset: i64,
    tile: usize,
    threads: usize,
    simd: kernel::Simd,
) {
    const PERMS: [[usize; 3]; 4] = [[1, 0, 2], [0, 2, 1], [2, 1, 0], [2, 0, 1]];
    let src = tensor_from::<S>(
        &Lay {
            sizes: sizes.to_vec(),
            strides: contiguous(&sizes),
            offset,
        },
        9,
    )
    .permute(&PERMS[perm % 4])
    .unwrap();
    let vs = storage_vec(&src);
    let cfg = ExecConfig::default()
        .with_tile(tile)
        .with_grain_size(64)
        .with_simd(simd);
    pool(threads).install(|| {
        let out = Tensor::<O>::zeros(src.sizes()).unwrap();
        kernel::copy_into(&out, &src, &cfg).unwrap();
        for_each_index(src.sizes(), |i| {
            assert_eq!(
                out.get(i).unwrap(),
                O::cast_from(at(&src, &vs, i)),
                "at {i:?}"
            );
        });
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// The tiled copy's fast paths: 8×8 AVX2 direct transposes (same-type 4-byte tiles whose
    /// sides are multiples of 8, `Simd::Auto` on an AVX2 CPU), 4×4 SSE blocks through the
    /// buffer (`Simd::Baseline`, or sides that are multiples of 4 only), scalar edges and
    /// casts; sizes 0, 1, odd tails, 1-3 threads.
    #[test]
    fn tiled_copy_paths_match_reference(
        a in prop_oneof![1 => Just(0i64), 1 => Just(1i64), 4 => 2i64..90],
        b in prop_oneof![1 => Just(1i64), 4 => 8i64..90],
        c in prop_oneof![2 => Just(1i64), 1 => 2i64..5],
        perm in 0usize..4, offset in 0i64..3,
        tile in prop::sample::select(vec![8usize, 16, 24, 64]),
        threads in 1usize..=3, baseline in any::<bool>(),
    ) {
        let simd = if baseline { kernel::Simd::Baseline } else { kernel::Simd::Auto };
        let s = [a, b, c];
        check_tiled_copy::<f32, f32>(s, perm, offset, tile, threads, simd);
        check_tiled_copy::<i32, i32>(s, perm, offset, tile, threads, simd);
        check_tiled_copy::<i32, f64>(s, perm, offset, tile, threads, simd);
        check_tiled_copy::<u8, u8>(s, perm, offset, tile, threads, simd);
    }
}

/// Values for the `exp`/`sigmoid` checks: spread over `[-110, 100)` (overflow, underflow to
/// 0 and denormals included), plus the special values.
fn exp_inputs<T: symstride::tensor::FloatElement>(n: usize, seed: u64) -> Vec<T> {
    let special = [0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 88.7, -87.5, -103.5];
    (0..n as u64)
        .map(|i| {
            let k = (i * 7919 + seed * 104729) % 21001;
            let v = if k < special.len() as u64 {
                special[k as usize]
            } else {
                k as f64 * 0.01 - 110.0 + (i % 7) as f64 * 1e-3
            };
            T::cast_from(v)
        })
        .collect()
}

/// `got` against the exact `want` (computed in f64): NaN for NaN, infinity where `want`
/// rounds to it in `T`, else
/// within `ulps` machine epsilons of `T` relative to `want`, plus `tiny` absolute.
fn close<T: symstride::tensor::FloatElement>(got: T, want: f64, ulps: f64, tiny: f64) -> bool {
    let g = f64::cast_from(got);
    if want.is_nan() {
        return g.is_nan();
    }
    // beyond `T`'s range: the rounded value (infinity) exactly
    let rounded = f64::cast_from(T::cast_from(want));
    if rounded.is_infinite() {
        return g == rounded;
    }
    let eps = if std::mem::size_of::<T>() == 4 {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    };
    g == want || (g - want).abs() <= ulps * eps * want.abs() + tiny
}

/// `T`'s smallest denormal, and its smallest normal number.
fn tiny<T>() -> (f64, f64) {
    if std::mem::size_of::<T>() == 4 {
        (f32::from_bits(1) as f64, f32::MIN_POSITIVE as f64)
    } else {
        (f64::from_bits(1), f64::MIN_POSITIVE)
    }
}

fn check_exp_sigmoid<T: symstride::tensor::FloatElement>(
    a: &Lay,
    out: &Lay,
    threads: usize,
    grain: usize,
) {
    let xs = exp_inputs::<T>(a.storage_len(), 5);
    let ta = Tensor::from_storage(Storage::from_vec(xs.clone()), &a.sizes, &a.strides, a.offset)
        .unwrap();
    let cfg = ExecConfig::default().with_grain_size(grain);
    let exp = |x: T| f64::cast_from(x).exp();
    let sig = |x: T| 1.0 / (1.0 + (-f64::cast_from(x)).exp());
    // `1 / (1 + e^-x)` in `T`: `e^-x` overflows to inf before the result leaves the
    // denormals, so sigmoid's absolute error there is up to the smallest normal number.
    let (den, norm) = tiny::<T>();
    pool(threads).install(|| {
        let e = kernel::map1(&ta, &kernel::Exp, &cfg).unwrap();
        let s = kernel::map1(&ta, &kernel::Sigmoid, &cfg).unwrap();
        for_each_index(e.sizes(), |i| {
            let x = at(&ta, &xs, i);
            assert!(close(e.get(i).unwrap(), exp(x), 1.0, den), "exp at {i:?}");
            assert!(close(s.get(i).unwrap(), sig(x), 3.0, norm), "sigmoid at {i:?}");
        });
        // a given output with its own layout (the input broadcast to it)
        let to = tensor_from::<T>(out, 3);
        kernel::map1_out(&ta, &to, &kernel::Exp, &cfg).unwrap();
        for_each_index(&out.sizes, |i| {
            let x = at(&ta, &xs, i);
            assert!(close(to.get(i).unwrap(), exp(x), 1.0, den), "exp out at {i:?}");
        });
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The op table's `exp` and `sigmoid` kernels (the vectorized `exp`) on random strided,
    /// broadcast and overlapping layouts, 1-3 threads, against `f64::exp`: `exp` within 1 ulp,
    /// `sigmoid` within 3.
    #[test]
    fn exp_and_sigmoid_match_f64_reference(
        (a, out) in shape_strategy().prop_flat_map(|s| (input_strategy(s.clone()), output_strategy(s))),
        threads in 1usize..4,
        grain in prop_oneof![Just(1usize), Just(7), Just(32768)],
        f64_ in any::<bool>(),
    ) {
        if f64_ {
            check_exp_sigmoid::<f64>(&a, &out, threads, grain);
        } else {
            check_exp_sigmoid::<f32>(&a, &out, threads, grain);
        }
    }
}

/// Outputs above the non-temporal threshold, where `exp` and `sigmoid` run in the AVX2 burst
/// twin (`Simd::Auto` on a CPU with AVX2) or the SSE2 baseline: both equal the scalar
/// `FloatElement::exp` bit for bit (no FMA, one algorithm) and `f64::exp` within 1 ulp.
#[test]
fn large_exp_and_sigmoid_equal_the_scalar_function() {
    use symstride::tensor::FloatElement;
    fn check<T: FloatElement>(n: usize) {
        let xs = exp_inputs::<T>(n, 9);
        let a = Tensor::from_vec(xs.clone(), &[n as i64]).unwrap();
        for (threads, simd) in [1, 2, 3]
            .into_iter()
            .flat_map(|t| [(t, kernel::Simd::Auto), (t, kernel::Simd::Baseline)])
        {
            let cfg = ExecConfig::default().with_simd(simd);
            pool(threads).install(|| {
                let e = kernel::map1(&a, &kernel::Exp, &cfg).unwrap().to_vec().unwrap();
                let s = kernel::map1(&a, &kernel::Sigmoid, &cfg)
                    .unwrap()
                    .to_vec()
                    .unwrap();
                for (i, &x) in xs.iter().enumerate() {
                    let (ew, sw) = (x.exp(), x.sigmoid());
                    let nan = |v: T| f64::cast_from(v).is_nan();
                    let same = |g: T, w: T| g == w || nan(g) && nan(w);
                    assert!(same(e[i], ew), "exp at {i} ({threads} threads, {simd:?})");
                    assert!(same(s[i], sw), "sigmoid at {i} ({threads} threads, {simd:?})");
                    assert!(close(e[i], f64::cast_from(x).exp(), 1.0, tiny::<T>().0), "exp at {i}");
                }
            });
        }
    }
    check::<f32>((2 << 20) + 13);
    check::<f64>((1 << 20) + 5);
}
