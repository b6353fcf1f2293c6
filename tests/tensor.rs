//! Tensor views vs a naive model of PyTorch's view semantics, layout validation, and the
//! memory-format conversions.

use proptest::prelude::*;
use symstride::tensor::{MemoryFormat, Storage, Tensor};

/// A reference model: a list of (multi-index → storage offset) computed by brute force.
fn offsets(t: &Tensor<i64>) -> Vec<i64> {
    // storage holds 0..len, so values are offsets
    t.to_vec().unwrap()
}

fn base(sizes: &[i64]) -> Tensor<i64> {
    let n: i64 = sizes.iter().product();
    Tensor::from_vec((0..n).collect(), sizes).unwrap()
}

fn row_major_indices(sizes: &[i64]) -> Vec<Vec<i64>> {
    let mut out = vec![vec![]];
    for &s in sizes {
        out = out
            .into_iter()
            .flat_map(|p| (0..s).map(move |i| [p.clone(), vec![i]].concat()))
            .collect();
    }
    out
}

fn off_of(sizes: &[i64], idx: &[i64]) -> i64 {
    let mut o = 0;
    for (s, i) in sizes.iter().zip(idx) {
        o = o * s + i;
    }
    o
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn views_match_index_model(sizes in prop::collection::vec(1i64..5, 1..5), seed in any::<u64>()) {
        let t = base(&sizes);
        let nd = sizes.len();
        let d = (seed % nd as u64) as usize;
        let e = ((seed / 7) % nd as u64) as usize;
        // transpose
        let tt = t.transpose(d, e).unwrap();
        let mut ts = sizes.clone();
        ts.swap(d, e);
        let got = offsets(&tt);
        for (k, idx) in row_major_indices(&ts).iter().enumerate() {
            let mut src = idx.clone();
            src.swap(d, e);
            prop_assert_eq!(got[k], off_of(&sizes, &src));
        }
        // slice with a step
        let step = 1 + (seed / 13 % 3) as i64;
        let start = (seed / 31 % sizes[d] as u64) as i64;
        let sl = t.slice(d, start, i64::MAX, step).unwrap();
        let got = offsets(&sl);
        for (k, idx) in row_major_indices(sl.sizes()).iter().enumerate() {
            let mut src = idx.clone();
            src[d] = start + idx[d] * step;
            prop_assert_eq!(got[k], off_of(&sizes, &src));
        }
        // select then unsqueeze then expand
        let i = (seed / 97 % sizes[d] as u64) as i64;
        let se = t.select(d, i).unwrap().unsqueeze(0).unwrap();
        let mut ex_sizes: Vec<i64> = se.sizes().to_vec();
        ex_sizes[0] = 3;
        let ex = se.expand(&ex_sizes).unwrap();
        let got = offsets(&ex);
        for (k, idx) in row_major_indices(&ex_sizes).iter().enumerate() {
            let mut src: Vec<i64> = idx[1..].to_vec();
            src.insert(d, i);
            prop_assert_eq!(got[k], off_of(&sizes, &src));
        }
    }

    #[test]
    fn as_strided_bounds_are_exact(sizes in prop::collection::vec(0i64..5, 0..4), strides in prop::collection::vec(0i64..7, 4), offset in 0i64..5, slack in -2i64..3) {
        let strides = &strides[..sizes.len()];
        let numel: i64 = sizes.iter().product();
        let max = offset + sizes.iter().zip(strides).map(|(&s, &t)| if s > 0 { (s - 1) * t } else { 0 }).sum::<i64>();
        let len = (max + 1 + slack).max(0);
        let s = Storage::from_vec(vec![0u8; len as usize]);
        let ok = Tensor::from_storage(s, &sizes, strides, offset).is_ok();
        prop_assert_eq!(ok, numel == 0 || max < len);
    }

    #[test]
    fn contiguous_and_to_roundtrip(sizes in prop::collection::vec(1i64..4, 4), perm in Just(vec![0usize, 1, 2, 3]).prop_shuffle()) {
        let t = base(&sizes).permute(&perm).unwrap();
        let want = t.to_vec().unwrap();
        for f in [MemoryFormat::Contiguous, MemoryFormat::ChannelsLast] {
            let c = t.contiguous_in(f).unwrap();
            prop_assert!(c.is_contiguous(f));
            prop_assert_eq!(c.to_vec().unwrap(), want.clone());
            let to = t.to(f).unwrap();
            if t.suggest_memory_format() == f {
                prop_assert!(to.shares_storage(&t));
            } else {
                prop_assert!(!to.shares_storage(&t));
                let dense = Tensor::<i64>::full(&sizes_of(&t), 0, f).unwrap();
                prop_assert_eq!(to.strides(), dense.strides());
            }
            prop_assert_eq!(to.to_vec().unwrap(), want.clone());
        }
        let cl = t.deep_clone().unwrap();
        prop_assert!(cl.is_non_overlapping_and_dense());
        prop_assert!(!cl.shares_storage(&t));
        prop_assert_eq!(cl.to_vec().unwrap(), want);
    }
}

fn sizes_of(t: &Tensor<i64>) -> Vec<i64> {
    t.sizes().to_vec()
}

#[test]
fn to_rewrites_ambiguous_strides_contiguous_does_not() {
    let t = Tensor::<f32>::zeros(&[2, 1, 4, 4]).unwrap();
    assert_eq!(
        t.contiguous_in(MemoryFormat::ChannelsLast)
            .unwrap()
            .strides(),
        &[16, 16, 4, 1]
    );
    assert_eq!(
        t.to(MemoryFormat::ChannelsLast).unwrap().strides(),
        &[16, 1, 4, 1]
    );
    // already channels-last: `to` aliases
    let cl = Tensor::<f32>::full(&[2, 3, 4, 5], 1.0, MemoryFormat::ChannelsLast).unwrap();
    let again = cl.to(MemoryFormat::ChannelsLast).unwrap();
    assert!(again.shares_storage(&cl));
}

#[test]
fn clone_preserves_dense_permuted_strides() {
    let t = base(&[2, 3, 4]).permute(&[2, 0, 1]).unwrap();
    let c = t.deep_clone().unwrap();
    assert_eq!(c.strides(), t.strides());
    let sliced = base(&[4, 6])
        .slice(1, 0, 6, 2)
        .unwrap()
        .transpose(0, 1)
        .unwrap();
    let c = sliced.deep_clone().unwrap();
    assert_eq!(c.strides(), &[1, 3]);
    assert_eq!(c.to_vec().unwrap(), sliced.to_vec().unwrap());
}

#[test]
fn copy_broadcasts_and_casts() {
    let dst = Tensor::<u8>::zeros(&[2, 3]).unwrap();
    let src = Tensor::from_vec(vec![1.9f64, 300.0, -1.0], &[3]).unwrap();
    dst.copy_(&src).unwrap();
    assert_eq!(dst.to_vec().unwrap(), vec![1, 44, 255, 1, 44, 255]);
    // a view of a bigger tensor can be written in place
    let big = Tensor::<i32>::zeros(&[4, 4]).unwrap();
    big.slice(1, 1, 4, 2)
        .unwrap()
        .copy_(&Tensor::from_vec(vec![7i32], &[1]).unwrap())
        .unwrap();
    assert_eq!(
        big.to_vec().unwrap(),
        vec![0, 7, 0, 7, 0, 7, 0, 7, 0, 7, 0, 7, 0, 7, 0, 7]
    );
}

#[cfg(feature = "ndarray")]
#[test]
fn ndarray_zero_copy_roundtrip() {
    use ndarray::{Array, ShapeBuilder};
    let a = Array::from_shape_vec((3, 4).f(), (0..12).map(|x| x as f32).collect()).unwrap();
    let want: Vec<f32> = a.iter().copied().collect();
    let ptr = a.as_ptr();
    let t = Tensor::from_ndarray(a).unwrap();
    assert_eq!(t.strides(), &[1, 3]);
    assert_eq!(t.to_vec().unwrap(), want);
    let v = t.transpose(0, 1).unwrap();
    let view = v.as_ndarray().unwrap();
    assert_eq!(view.as_ptr(), ptr);
    assert_eq!(view.shape(), &[4, 3]);
    assert_eq!(view[[2, 1]], t.get(&[1, 2]).unwrap());
    // no writer while a view is alive
    assert!(t
        .copy_(&Tensor::from_vec(vec![0f32], &[1]).unwrap())
        .is_err());
    drop(view);
    {
        let mut m = t.as_ndarray_mut().unwrap();
        m[[0, 0]] = 42.0;
    }
    assert_eq!(t.get(&[0, 0]).unwrap(), 42.0);
    assert!(Tensor::<f32>::zeros(&[1])
        .unwrap()
        .expand(&[3])
        .unwrap()
        .as_ndarray_mut()
        .is_err());
}
