//! Hand-checked cases of the structured references, one test per family: every expected
//! value is worked out by hand in the test, not taken from the implementation.

use super::*;
use crate::iter::TensorSpec;
use crate::layout::contiguous_strides;
use crate::structured::Kw;
use DType::{Bool as B, F32, F64, I64, U8};

/// A tensor argument: its spec (contiguous, `dtype`) and its values.
type Input = (SArg<i64>, RArg);

fn tensor_in(sizes: &[i64], dtype: DType, values: Vec<Scalar>) -> Input {
    let spec = TensorSpec::typed(sizes.to_vec(), contiguous_strides(sizes), dtype);
    let r = RArg::Tensor {
        sizes: sizes.to_vec(),
        values,
    };
    (SArg::Tensor(spec), r)
}

fn list_in(items: Vec<Input>) -> Input {
    let (mut specs, mut vals) = (Vec::new(), Vec::new());
    for (s, r) in items {
        let (SArg::Tensor(s), RArg::Tensor { sizes, values }) = (s, r) else {
            unreachable!()
        };
        specs.push(s);
        vals.push((sizes, values));
    }
    (SArg::List(specs), RArg::List(vals))
}

fn absent() -> Input {
    (SArg::Absent, RArg::Absent)
}

fn ints(v: &[i64]) -> Vec<Scalar> {
    v.iter().map(|&i| Scalar::Int(i)).collect()
}

fn floats(v: &[f64]) -> Vec<Scalar> {
    v.iter().map(|&f| Scalar::Float(f)).collect()
}

fn bools(v: &[bool]) -> Vec<Scalar> {
    v.iter().map(|&b| Scalar::Bool(b)).collect()
}

fn int(i: i64) -> Kw<i64> {
    Kw::Int(i)
}

fn list(v: &[i64]) -> Kw<i64> {
    Kw::Ints(v.to_vec())
}

fn run(op: SOp, inputs: Vec<Input>, kws: &[(&str, Kw<i64>)]) -> Result<Vec<Vec<Scalar>>> {
    let (specs, rargs): (Vec<_>, Vec<_>) = inputs.into_iter().unzip();
    let mut kwarg = |name: &str| Ok(kws.iter().find(|(k, _)| *k == name).map(|(_, v)| v.clone()));
    let call = Call::new(op, specs, &mut kwarg)?;
    reference(&call, &rargs)
}

/// The single result of a call that must succeed.
fn one(op: SOp, inputs: Vec<Input>, kws: &[(&str, Kw<i64>)]) -> Vec<Scalar> {
    let mut r = run(op, inputs, kws).unwrap();
    assert_eq!(r.len(), 1);
    r.remove(0)
}

fn close(got: &[Scalar], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        let Scalar::Float(g) = *g else {
            panic!("{g:?} is not a float")
        };
        assert!(
            (g - w).abs() <= 1e-6 * w.abs().max(1.0),
            "{got:?} vs {want:?}"
        );
    }
}

#[test]
fn creation() {
    let r = one(
        SOp::Arange,
        vec![],
        &[("start", int(1)), ("end", int(7)), ("step", int(2))],
    );
    assert_eq!(r, ints(&[1, 3, 5]));
    let kws = [
        ("start", Kw::Float(0.5)),
        ("end", int(2)),
        ("step", Kw::Float(0.5)),
    ];
    assert_eq!(one(SOp::Arange, vec![], &kws), floats(&[0.5, 1.0, 1.5]));
    let r = one(
        SOp::Full,
        vec![],
        &[("size", list(&[2, 1])), ("fill_value", int(7))],
    );
    assert_eq!(r, ints(&[7, 7]));
    let x = tensor_in(&[3], B, bools(&[true, false, true]));
    assert_eq!(one(SOp::ZerosLike, vec![x], &[]), bools(&[false; 3]));
    let x = tensor_in(&[1], I64, ints(&[5]));
    let kws = [("size", list(&[2])), ("dtype", Kw::Name("float32".into()))];
    assert_eq!(one(SOp::NewOnes, vec![x], &kws), floats(&[1.0, 1.0]));
    let r = one(SOp::ScalarTensor, vec![], &[("s", Kw::Float(0.1))]);
    assert_eq!(r, floats(&[0.1f32 as f64]), "narrowed to float32");
}

#[test]
fn triangles() {
    let x = || tensor_in(&[3, 3], I64, ints(&[1, 2, 3, 4, 5, 6, 7, 8, 9]));
    let tri = |op, d| one(op, vec![x()], &[("diagonal", int(d))]);
    assert_eq!(tri(SOp::Triu, 1), ints(&[0, 2, 3, 0, 0, 6, 0, 0, 0]));
    assert_eq!(tri(SOp::Triu, -1), ints(&[1, 2, 3, 4, 5, 6, 0, 8, 9]));
    assert_eq!(tri(SOp::Tril, 1), ints(&[1, 2, 0, 4, 5, 6, 7, 8, 9]));
    assert_eq!(tri(SOp::Tril, -1), ints(&[0, 0, 0, 4, 0, 0, 7, 8, 0]));
    let b = tensor_in(&[2, 2], B, bools(&[true; 4]));
    assert_eq!(
        one(SOp::Tril, vec![b], &[]),
        bools(&[true, false, true, true])
    );
    // The meta function's error comes through.
    let v = tensor_in(&[2], I64, ints(&[1, 2]));
    assert!(matches!(
        run(SOp::Triu, vec![v], &[]),
        Err(Error::Shape { .. })
    ));
}

#[test]
fn cat_and_stack() {
    let ab = || {
        list_in(vec![
            tensor_in(&[1, 2], I64, ints(&[1, 2])),
            tensor_in(&[1, 2], I64, ints(&[3, 4])),
        ])
    };
    // [[1, 2], [3, 4]] and [[1, 2, 3, 4]]: the same row-major values.
    assert_eq!(
        one(SOp::Cat, vec![ab()], &[("dim", int(0))]),
        ints(&[1, 2, 3, 4])
    );
    assert_eq!(
        one(SOp::Cat, vec![ab()], &[("dim", int(1))]),
        ints(&[1, 2, 3, 4])
    );
    let cols = || {
        list_in(vec![
            tensor_in(&[2, 1], I64, ints(&[1, 2])),
            tensor_in(&[2, 1], I64, ints(&[3, 4])),
        ])
    };
    assert_eq!(
        one(SOp::Cat, vec![cols()], &[("dim", int(0))]),
        ints(&[1, 2, 3, 4])
    );
    assert_eq!(
        one(SOp::Cat, vec![cols()], &[("dim", int(-1))]),
        ints(&[1, 3, 2, 4])
    );
    // A 1-D empty input is skipped; int64 and float32 promote to float32.
    let mixed = list_in(vec![
        tensor_in(&[2], I64, ints(&[1, 2])),
        tensor_in(&[0], B, vec![]),
        tensor_in(&[1], F32, floats(&[0.5])),
    ]);
    assert_eq!(one(SOp::Cat, vec![mixed], &[]), floats(&[1.0, 2.0, 0.5]));
    let pair = || {
        list_in(vec![
            tensor_in(&[2], I64, ints(&[1, 2])),
            tensor_in(&[2], I64, ints(&[3, 4])),
        ])
    };
    assert_eq!(
        one(SOp::Stack, vec![pair()], &[("dim", int(0))]),
        ints(&[1, 2, 3, 4])
    );
    assert_eq!(
        one(SOp::Stack, vec![pair()], &[("dim", int(1))]),
        ints(&[1, 3, 2, 4])
    );
}

#[test]
fn repeat_flip_roll() {
    let col = tensor_in(&[2, 1], I64, ints(&[1, 2]));
    let r = one(SOp::Repeat, vec![col], &[("repeats", list(&[2, 2]))]);
    assert_eq!(r, ints(&[1, 1, 2, 2, 1, 1, 2, 2]));
    let row = tensor_in(&[2], I64, ints(&[1, 2]));
    let r = one(SOp::Repeat, vec![row], &[("repeats", list(&[2, 1, 2]))]);
    assert_eq!(r, ints(&[1, 2, 1, 2, 1, 2, 1, 2]));

    let m = || tensor_in(&[2, 3], I64, ints(&[1, 2, 3, 4, 5, 6]));
    assert_eq!(
        one(SOp::Flip, vec![m()], &[("dims", list(&[-1]))]),
        ints(&[3, 2, 1, 6, 5, 4])
    );
    assert_eq!(
        one(SOp::Flip, vec![m()], &[("dims", list(&[0, 1]))]),
        ints(&[6, 5, 4, 3, 2, 1])
    );

    let v = || tensor_in(&[5], I64, ints(&[1, 2, 3, 4, 5]));
    let roll = |shift, dims: Kw<i64>| {
        one(
            SOp::Roll,
            vec![v()],
            &[("shifts", int(shift)), ("dims", dims)],
        )
    };
    assert_eq!(roll(-1, int(0)), ints(&[2, 3, 4, 5, 1]));
    assert_eq!(roll(2, int(0)), ints(&[4, 5, 1, 2, 3]));
    assert_eq!(roll(-7, Kw::Null), ints(&[3, 4, 5, 1, 2]));
    // Flattened: [[1, 2], [3, 4]] rolled by 1 is [[4, 1], [2, 3]].
    let sq = tensor_in(&[2, 2], I64, ints(&[1, 2, 3, 4]));
    assert_eq!(
        one(SOp::Roll, vec![sq], &[("shifts", int(1))]),
        ints(&[4, 1, 2, 3])
    );
    // Rows down by 1 ([[4, 5, 6], [1, 2, 3]]), then columns left by 1.
    let kws = [("shifts", list(&[1, -1])), ("dims", list(&[0, 1]))];
    assert_eq!(one(SOp::Roll, vec![m()], &kws), ints(&[5, 6, 4, 2, 3, 1]));
}

#[test]
fn cumsum() {
    let m = || tensor_in(&[2, 3], I64, ints(&[1, 2, 3, 4, 5, 6]));
    assert_eq!(
        one(SOp::Cumsum, vec![m()], &[("dim", int(1))]),
        ints(&[1, 3, 6, 4, 9, 15])
    );
    assert_eq!(
        one(SOp::Cumsum, vec![m()], &[("dim", int(0))]),
        ints(&[1, 2, 3, 5, 7, 9])
    );
    let b = tensor_in(&[3], B, bools(&[true, false, true]));
    assert_eq!(
        one(SOp::Cumsum, vec![b], &[("dim", int(0))]),
        ints(&[1, 1, 2])
    );
    // uint8 wraps: 200 + 100 = 300 = 44 (mod 256).
    let u = tensor_in(&[2], U8, ints(&[200, 100]));
    let kws = [("dim", int(0)), ("dtype", Kw::Name("uint8".into()))];
    assert_eq!(one(SOp::Cumsum, vec![u], &kws), ints(&[200, 44]));
    let f = tensor_in(&[3], F64, floats(&[0.5, 0.25, -1.0]));
    close(
        &one(SOp::Cumsum, vec![f], &[("dim", int(0))]),
        &[0.5, 0.75, -0.25],
    );
}

fn is_index_error<T: std::fmt::Debug>(r: Result<T>) -> bool {
    matches!(r, Err(Error::Index { .. }))
}

#[test]
fn indexing() {
    let x = || tensor_in(&[3, 2], I64, ints(&[1, 2, 3, 4, 5, 6]));
    let idx = |v: &[i64]| tensor_in(&[v.len() as i64], I64, ints(v));
    let sel = |d, v: &[i64]| run(SOp::IndexSelect, vec![x(), idx(v)], &[("dim", int(d))]);
    assert_eq!(sel(0, &[2, 0]).unwrap(), vec![ints(&[5, 6, 1, 2])]);
    assert_eq!(
        sel(1, &[1, 1, 0]).unwrap(),
        vec![ints(&[2, 2, 1, 4, 4, 3, 6, 6, 5])]
    );
    assert!(is_index_error(sel(0, &[3])));
    assert!(is_index_error(sel(0, &[-1])));

    // torch.gather's documented example.
    let t = || tensor_in(&[2, 2], I64, ints(&[1, 2, 3, 4]));
    let gi = |v: &[i64]| tensor_in(&[2, 2], I64, ints(v));
    let g = one(
        SOp::Gather,
        vec![t(), gi(&[0, 0, 1, 0])],
        &[("dim", int(1))],
    );
    assert_eq!(g, ints(&[1, 1, 4, 3]));
    let g = one(
        SOp::Gather,
        vec![t(), gi(&[1, 0, 0, 0])],
        &[("dim", int(0))],
    );
    assert_eq!(g, ints(&[3, 2, 1, 2]));
    assert!(is_index_error(run(
        SOp::Gather,
        vec![t(), gi(&[0, 2, 0, 0])],
        &[("dim", int(1))]
    )));

    let w = || tensor_in(&[3, 2], F32, floats(&[0.0, 1.0, 10.0, 11.0, 20.0, 21.0]));
    let ids = tensor_in(&[1, 2], I64, ints(&[2, 0]));
    assert_eq!(
        one(SOp::Embedding, vec![w(), ids], &[]),
        floats(&[20.0, 21.0, 0.0, 1.0])
    );
    assert!(is_index_error(run(
        SOp::Embedding,
        vec![w(), idx(&[3])],
        &[]
    )));

    // x[:, [-1, 0]] and x[[[-2]]] of [[1, 2, 3], [4, 5, 6]].
    let m = || tensor_in(&[2, 3], I64, ints(&[1, 2, 3, 4, 5, 6]));
    assert_eq!(
        one(SOp::Index, vec![m(), idx(&[-1, 0])], &[("dim", int(1))]),
        ints(&[3, 1, 6, 4])
    );
    let deep = tensor_in(&[1, 1], I64, ints(&[-2]));
    assert_eq!(one(SOp::Index, vec![m(), deep], &[]), ints(&[1, 2, 3]));
    assert!(is_index_error(run(
        SOp::Index,
        vec![m(), idx(&[3])],
        &[("dim", int(1))]
    )));
    assert!(is_index_error(run(
        SOp::Index,
        vec![m(), idx(&[-4])],
        &[("dim", int(1))]
    )));
}

#[test]
fn softmax() {
    let ln3 = 3f64.ln();
    let x = || tensor_in(&[2], F64, floats(&[0.0, ln3]));
    close(
        &one(SOp::Softmax, vec![x()], &[("dim", int(0))]),
        &[0.25, 0.75],
    );
    close(
        &one(SOp::LogSoftmax, vec![x()], &[("dim", int(0))]),
        &[0.25f64.ln(), 0.75f64.ln()],
    );
    // Along dim 0 of [[0, 0], [ln 3, 0]]: columns [0.25, 0.75] and [0.5, 0.5].
    let m = tensor_in(&[2, 2], F64, floats(&[0.0, 0.0, ln3, 0.0]));
    close(
        &one(SOp::Softmax, vec![m], &[("dim", int(0))]),
        &[0.25, 0.5, 0.75, 0.5],
    );
}

#[test]
fn norms() {
    let x = tensor_in(&[2, 2], F64, floats(&[1.0, 3.0, 2.0, 6.0]));
    let kws = [("normalized_shape", list(&[2])), ("eps", Kw::Float(0.0))];
    close(
        &one(SOp::LayerNorm, vec![x, absent(), absent()], &kws),
        &[-1.0, 1.0, -1.0, 1.0],
    );
    let x = tensor_in(&[2], F64, floats(&[1.0, 3.0]));
    let w = tensor_in(&[2], F64, floats(&[2.0, 3.0]));
    let b = tensor_in(&[2], F64, floats(&[1.0, 1.0]));
    close(&one(SOp::LayerNorm, vec![x, w, b], &kws), &[-1.0, 4.0]);

    // rms([1, 7]) = sqrt((1 + 49) / 2) = 5.
    let x = tensor_in(&[2], F64, floats(&[1.0, 7.0]));
    let w = tensor_in(&[2], F64, floats(&[1.0, 2.0]));
    close(&one(SOp::RmsNorm, vec![x, w], &kws), &[0.2, 2.8]);
    // A null eps is float32's epsilon: [0, 0] stays 0.
    let z = tensor_in(&[2], F32, floats(&[0.0, 0.0]));
    close(
        &one(
            SOp::RmsNorm,
            vec![z, absent()],
            &[("normalized_shape", list(&[2]))],
        ),
        &[0.0, 0.0],
    );

    // Channel 0: (x - 2) / 2; channel 1: (x - 6) / 1 * 2 + 1.
    let x = tensor_in(&[1, 2, 2], F64, floats(&[1.0, 3.0, 5.0, 7.0]));
    let p = |v: &[f64]| tensor_in(&[2], F64, floats(v));
    let ins = vec![
        x,
        p(&[2.0, 6.0]),
        p(&[4.0, 1.0]),
        p(&[1.0, 2.0]),
        p(&[0.0, 1.0]),
    ];
    close(
        &one(SOp::BatchNorm, ins, &[("eps", Kw::Float(0.0))]),
        &[-0.5, 0.5, -1.0, 3.0],
    );

    // Groups [1, 3] (mean 2, var 1) and [10, 20] (mean 15, var 25).
    let x = || tensor_in(&[1, 4, 1], F64, floats(&[1.0, 3.0, 10.0, 20.0]));
    let kws = [("num_groups", int(2)), ("eps", Kw::Float(0.0))];
    close(
        &one(SOp::GroupNorm, vec![x(), absent(), absent()], &kws),
        &[-1.0, 1.0, -1.0, 1.0],
    );
    let w = tensor_in(&[4], F64, floats(&[1.0, 1.0, 2.0, 2.0]));
    let b = tensor_in(&[4], F64, floats(&[0.0, 0.0, 0.0, 1.0]));
    close(
        &one(SOp::GroupNorm, vec![x(), w, b], &kws),
        &[-1.0, 1.0, -2.0, 3.0],
    );
}

#[test]
fn attention() {
    let ln3 = 3f64.ln();
    let t = |sizes: &[i64], v: &[f64]| tensor_in(sizes, F64, floats(v));
    // Scores [ln 3, 0] give probabilities [0.75, 0.25] over v = [1, 3]: 1.5.
    let qkv = || {
        vec![
            t(&[1, 2], &[1.0, 0.0]),
            t(&[2, 2], &[1.0, 0.0, 0.0, 0.0]),
            t(&[2, 1], &[1.0, 3.0]),
        ]
    };
    let scale = [("scale", Kw::Float(ln3))];
    let with_mask = |m: Input| {
        let mut ins = qkv();
        ins.push(m);
        one(SOp::Sdpa, ins, &scale)
    };
    close(&with_mask(absent()), &[1.5]);
    close(&with_mask(t(&[1, 2], &[0.0, ln3])), &[2.0]);
    close(
        &with_mask(tensor_in(&[2], B, bools(&[false, true]))),
        &[3.0],
    );
    // Everything masked: zeros, not NaN.
    close(&with_mask(tensor_in(&[1, 1], B, bools(&[false]))), &[0.0]);
    // Causal: row 0 sees key 0 only (1); row 1 sees both (1.5).
    let ins = vec![
        t(&[2, 2], &[1.0, 0.0, 1.0, 0.0]),
        t(&[2, 2], &[1.0, 0.0, 0.0, 0.0]),
        t(&[2, 1], &[1.0, 3.0]),
        absent(),
    ];
    close(
        &one(
            SOp::Sdpa,
            ins,
            &[("scale", Kw::Float(ln3)), ("is_causal", Kw::Bool(true))],
        ),
        &[1.0, 1.5],
    );
    // The default scale 1 / sqrt(4) = 0.5.
    let ins = vec![
        t(&[1, 4], &[2.0 * ln3, 0.0, 0.0, 0.0]),
        t(&[2, 4], &[1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
        t(&[2, 1], &[1.0, 3.0]),
        absent(),
    ];
    close(&one(SOp::Sdpa, ins, &[]), &[1.5]);
    // Batch dims broadcast: q has 2 batches, k and v 1; batch 1 scores [0, 0]: 2.
    let ins = vec![
        t(&[2, 1, 2], &[1.0, 0.0, 0.0, 0.0]),
        t(&[1, 2, 2], &[1.0, 0.0, 0.0, 0.0]),
        t(&[1, 2, 1], &[1.0, 3.0]),
        absent(),
    ];
    close(&one(SOp::Sdpa, ins, &scale), &[1.5, 2.0]);
}

#[test]
fn views() {
    let v = || tensor_in(&[5], I64, ints(&[0, 1, 2, 3, 4]));
    let r = run(SOp::Split, vec![v()], &[("split_size", int(2))]).unwrap();
    assert_eq!(r, vec![ints(&[0, 1]), ints(&[2, 3]), ints(&[4])]);
    let r = run(
        SOp::SplitWithSizes,
        vec![v()],
        &[("split_sizes", list(&[1, 0, 4]))],
    )
    .unwrap();
    assert_eq!(r, vec![ints(&[0]), ints(&[]), ints(&[1, 2, 3, 4])]);
    let m = || tensor_in(&[2, 3], I64, ints(&[0, 1, 2, 3, 4, 5]));
    let r = run(
        SOp::Chunk,
        vec![m()],
        &[("chunks", int(2)), ("dim", int(1))],
    )
    .unwrap();
    assert_eq!(r, vec![ints(&[0, 1, 3, 4]), ints(&[2, 5])]);
    let r = run(SOp::Unbind, vec![m()], &[("dim", int(1))]).unwrap();
    assert_eq!(r, vec![ints(&[0, 3]), ints(&[1, 4]), ints(&[2, 5])]);
    let r = run(SOp::Unbind, vec![m()], &[]).unwrap();
    assert_eq!(r, vec![ints(&[0, 1, 2]), ints(&[3, 4, 5])]);
}

#[test]
fn bad_inputs_are_errors() {
    // Values that do not match the call's sizes.
    let spec = TensorSpec::typed(vec![2], vec![1], I64);
    let short = (
        SArg::Tensor(spec),
        RArg::Tensor {
            sizes: vec![2],
            values: ints(&[1]),
        },
    );
    assert!(run(SOp::Flip, vec![short], &[("dims", list(&[0]))]).is_err());
    let spec = TensorSpec::typed(vec![2], vec![1], I64);
    let other = (
        SArg::Tensor(spec),
        RArg::Tensor {
            sizes: vec![1, 2],
            values: ints(&[1, 2]),
        },
    );
    assert!(run(SOp::Flip, vec![other], &[("dims", list(&[0]))]).is_err());
    // A float index value.
    let x = tensor_in(&[2], I64, ints(&[1, 2]));
    let spec = TensorSpec::typed(vec![1], vec![1], I64);
    let idx = (
        SArg::Tensor(spec),
        RArg::Tensor {
            sizes: vec![1],
            values: floats(&[0.0]),
        },
    );
    assert!(run(SOp::IndexSelect, vec![x, idx], &[("dim", int(0))]).is_err());
}

#[test]
fn zero_dim_inputs() {
    let s = || tensor_in(&[], I64, ints(&[7]));
    let idx = tensor_in(&[1], I64, ints(&[0]));
    assert_eq!(
        one(SOp::IndexSelect, vec![s(), idx], &[("dim", int(0))]),
        ints(&[7])
    );
    let zero = tensor_in(&[], I64, ints(&[0]));
    assert_eq!(
        one(SOp::Gather, vec![s(), zero], &[("dim", int(0))]),
        ints(&[7])
    );
    assert_eq!(one(SOp::Cumsum, vec![s()], &[("dim", int(0))]), ints(&[7]));
    assert_eq!(one(SOp::Roll, vec![s()], &[("shifts", int(3))]), ints(&[7]));
    let f = tensor_in(&[], F64, floats(&[-2.0]));
    close(&one(SOp::Softmax, vec![f], &[("dim", int(0))]), &[1.0]);
}

#[test]
fn group_norm_without_groups_is_an_error() {
    let x = tensor_in(&[1, 2, 2], F64, floats(&[1.0, 2.0, 3.0, 4.0]));
    let r = run(
        SOp::GroupNorm,
        vec![x, absent(), absent()],
        &[("num_groups", int(0))],
    );
    assert!(r.is_err());
}
