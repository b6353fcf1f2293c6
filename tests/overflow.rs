//! i64 overflow in output-layout computations (issue 17, finding 1): the concrete and the
//! symbolic path must give the same answer on every input, near the i64 limit too: PyTorch's
//! layout when it is representable, else the same clean `Error::Overflow`.

use proptest::prelude::*;
use symstride::iter::elementwise_output;
use symstride::layout;
use symstride::sym::{ShapeEnv, SymInt, SymbolSpec};
use symstride::Error;

type Case = Vec<(Vec<i64>, Vec<i64>)>;

/// The concrete answer: sizes and strides of the allocated output.
fn concrete(inputs: &Case) -> symstride::Result<(Vec<i64>, Vec<i64>)> {
    for (k, (s, t)) in inputs.iter().enumerate() {
        layout::check_layout(&format!("x{k}"), s, t)?;
    }
    elementwise_output(inputs)
}

/// The symbolic answer: every size and stride a symbol hinted by its value (as
/// `conformance --symbolic` does), the result evaluated at the hints.
fn symbolic(inputs: &Case) -> symstride::Result<(Vec<i64>, Vec<i64>)> {
    let env = ShapeEnv::default();
    let mut lifted: Vec<(Vec<SymInt>, Vec<SymInt>)> = Vec::new();
    for (k, (s, t)) in inputs.iter().enumerate() {
        layout::check_layout(&format!("x{k}"), s, t)?;
        let sym = |what: &str, v: &[i64], min: i64| {
            let spec = SymbolSpec {
                min,
                ..Default::default()
            };
            env.create_symbols(&format!("x{k}_{what}"), v, spec)
        };
        lifted.push((sym("s", s, 0)?, sym("t", t, i64::MIN)?));
    }
    let (sizes, strides) = elementwise_output(&lifted)?;
    let hints = env.hints();
    let eval = |v: &[SymInt]| {
        v.iter()
            .map(|x| x.eval(&hints))
            .collect::<symstride::Result<Vec<_>>>()
    };
    let out = (eval(&sizes)?, eval(&strides)?);
    // Every guard recorded on the way holds at the hints.
    assert!(env.guard_set().eval(&hints).unwrap().is_pass());
    Ok(out)
}

/// Equal answers: the same layout, or errors of the same kind (overflow errors with the
/// same message: they name operands and dimensions, never values).
fn same(
    a: &symstride::Result<(Vec<i64>, Vec<i64>)>,
    b: &symstride::Result<(Vec<i64>, Vec<i64>)>,
) -> bool {
    match (a, b) {
        (Ok(x), Ok(y)) => x == y,
        (Err(Error::Overflow { what: x }), Err(Error::Overflow { what: y })) => x == y,
        (Err(x), Err(y)) => std::mem::discriminant(x) == std::mem::discriminant(y),
        _ => false,
    }
}

/// The case from the issue: each input is valid, the broadcast output has 0 elements, and
/// its allocated strides (PyTorch computes them in bytes, `2^33 * 2^31` wraps to 0 there)
/// do not fit in i64. Before the fix the concrete path answered a wrapped stride
/// (`-9223372036854775808`; a panic in debug builds) while `--symbolic` reported an overflow.
#[test]
fn issue17_zero_numel_broadcast_overflow_is_the_same_error_in_both_modes() {
    let p = 1i64 << 31;
    let case: Case = vec![
        (vec![0, 1, 1, 1, p], vec![0, 0, 0, 0, 0]),
        (vec![0, 1, p, 2, 1], vec![0, 1, 0, 1, 0]),
    ];
    let c = concrete(&case);
    let s = symbolic(&case);
    assert!(matches!(c, Err(Error::Overflow { .. })), "{c:?}");
    assert!(same(&c, &s), "concrete {c:?} vs symbolic {s:?}");
    assert_eq!(c.unwrap_err().category(), "error");
}

/// Representable answers near the limit are exact: a 0-element output whose sizes multiply
/// to 2^62 gets PyTorch's strides, not an error.
#[test]
fn representable_strides_near_the_limit_are_exact() {
    let p = 1i64 << 30;
    // Contiguous inputs, output in the same (reversed) order: `empty` strides with
    // max(size, 1) (2^60 elements, 2^62 bytes: both fit).
    let case: Case = vec![
        (vec![0, p, p], vec![p * p, p, 1]),
        (vec![1, p, 1], vec![p, 1, 1]),
    ];
    let c = concrete(&case).unwrap();
    assert_eq!(c, (vec![0, p, p], vec![p * p, p, 1]));
    assert_eq!(symbolic(&case).unwrap(), c);
}

/// A CLI round trip of the issue's line: `conformance` and `conformance --symbolic` print
/// the same answer, an overflow.
#[test]
fn issue17_conformance_cli_agrees_on_the_overflow() {
    let dir = std::env::temp_dir().join(format!("symstride-overflow-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("case.jsonl");
    std::fs::write(
        &file,
        r#"{"kind":"elementwise","op":"add","inputs":[{"sizes":[0,1,1,1,2147483648],"strides":[0,0,0,0,0]},{"sizes":[0,1,2147483648,2,1],"strides":[0,1,0,1,0]}],"expect":{"sizes":[0,1,2147483648,2,2147483648],"strides":[0,2147483648,2147483648,0,1]}}"#,
    )
    .unwrap();
    let run = |symbolic: bool| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_symstride"));
        cmd.arg("conformance");
        if symbolic {
            cmd.arg("--symbolic");
        }
        let out = cmd.arg(&file).output().unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let (c, s) = (run(false), run(true));
    assert!(c.contains("overflow"), "{c}");
    assert!(!c.contains("-9223372036854775808"), "{c}");
    assert_eq!(c, s);
    std::fs::remove_dir_all(&dir).ok();
}

/// Sizes that make products cross 2^63 (alone or combined), and 0/1 to broadcast.
fn size() -> impl Strategy<Value = i64> {
    prop_oneof![
        2 => Just(0i64),
        3 => Just(1),
        2 => 2i64..=3,
        3 => (20u32..=62).prop_map(|k| 1i64 << k),
        1 => (30u32..=33).prop_map(|k| (1i64 << k) + 1),
    ]
}

fn stride() -> impl Strategy<Value = i64> {
    prop_oneof![
        3 => Just(0i64),
        3 => Just(1),
        1 => Just(2),
        2 => (20u32..=61).prop_map(|k| 1i64 << k),
    ]
}

/// 1 to 3 operands over one broadcast shape of rank <= 5: each keeps a trailing part of it
/// with some sizes replaced by 1 (and now and then a size that does not broadcast).
fn case() -> impl Strategy<Value = Case> {
    prop_oneof![random_case(), risky_case()]
}

/// Shapes from [`size`]; each operand keeps a trailing part of the broadcast shape with some
/// sizes replaced by 1 (and now and then a size that does not broadcast).
fn random_case() -> impl Strategy<Value = Case> {
    proptest::collection::vec(size(), 1..=5).prop_flat_map(|shape| {
        let n = shape.len();
        let operand = (
            0..n,
            proptest::collection::vec(0u8..8, n),
            proptest::collection::vec(stride(), n),
        )
            .prop_map(move |(skip, pick, strides)| {
                let sizes: Vec<i64> = (skip..n)
                    .map(|d| match pick[d] {
                        0..=2 => shape[d],
                        3..=6 => 1,
                        _ => 3,
                    })
                    .collect();
                (sizes, strides[skip..].to_vec())
            });
        proptest::collection::vec(operand, 1..=3)
    })
}

/// The region of the issue: a broadcast shape with a 0 and two or three large sizes, each
/// large size owned by one operand (the others have 1 there), so every operand is valid on
/// its own while the output has 0 elements and strides that may cross 2^63.
fn risky_case() -> impl Strategy<Value = Case> {
    let dim = prop_oneof![
        3 => (31u32..=42).prop_map(|k| 1i64 << k),
        1 => Just(0i64),
        1 => 1i64..=2,
    ];
    (
        proptest::collection::vec((dim, 0usize..3), 2..=5),
        2usize..=3,
    )
        .prop_flat_map(|(dims, n)| {
            let rank = dims.len();
            proptest::collection::vec(proptest::collection::vec(stride(), rank), n).prop_map(
                move |strides| {
                    strides
                        .into_iter()
                        .enumerate()
                        .map(|(j, t)| {
                            let sizes = dims
                                .iter()
                                .map(|&(z, owner)| if owner % n == j || z <= 2 { z } else { 1 })
                                .collect();
                            (sizes, t)
                        })
                        .collect()
                },
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    /// Near the i64 limit the concrete and the symbolic path always agree, and an answer
    /// is never a wrapped (negative) stride.
    #[test]
    fn concrete_equals_symbolic_near_the_i64_limit(case in case()) {
        let c = concrete(&case);
        let s = symbolic(&case);
        prop_assert!(same(&c, &s), "concrete {:?} vs symbolic {:?}", c, s);
        if let Ok((sizes, strides)) = &c {
            prop_assert!(sizes.iter().chain(strides).all(|&v| v >= 0));
        }
    }
}
