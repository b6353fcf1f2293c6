//! Hostile input to the library's entry points: every malformed size, stride, rank,
//! overflowing product, storage bound, symbol, hint and expression is a clear [`Error`]
//! (which tensor, which dim, which value), never a panic.
//!
//! The targeted tests pin the error kind and what the message names; the property tests
//! throw arbitrary (including extreme) integers at every entry point, concrete and
//! symbolic, and check that the answer is an `Ok` exactly when validation accepts the
//! input.

use proptest::prelude::*;
use symstride::iter::{IterOptions, TensorIteratorConfig, TensorSpec, MAX_DIMS};
use symstride::layout::{self, StrideMatch};
use symstride::sym::{Bindings, BoolExpr, Expr, Guard, GuardSet, ShapeEnv, SymInt, SymbolSpec};
use symstride::{Bool, Error, Int, Result};

/// Calls every public layout entry point that takes one tensor; returns the first error,
/// or a summary of the answers.
fn all_layout<I: Int>(sizes: &[I], strides: &[I]) -> Result<String> {
    let mut out = Vec::new();
    out.push(format!("{}", layout::is_contiguous(sizes, strides)?));
    out.push(format!(
        "{}",
        layout::is_channels_last_contiguous_2d(sizes, strides)?
    ));
    out.push(format!(
        "{}",
        layout::is_channels_last_contiguous_3d(sizes, strides)?
    ));
    out.push(format!(
        "{}",
        layout::is_non_overlapping_and_dense(sizes, strides)?
    ));
    out.push(format!(
        "{}",
        layout::is_strides_like_channels_last_2d(sizes, strides)?
    ));
    out.push(format!(
        "{}",
        layout::is_strides_like_channels_last_3d(sizes, strides)?
    ));
    for m in [StrideMatch::Like, StrideMatch::Exact] {
        out.push(
            layout::suggest_memory_format(sizes, strides, m)?
                .name()
                .to_string(),
        );
    }
    out.push(format!(
        "{:?}",
        layout::contiguity_expr(sizes, strides)?.statically_known()
    ));
    out.push(format!(
        "{:?}",
        layout::channels_last_contiguity_expr_2d(sizes, strides)?.statically_known()
    ));
    out.push(format!(
        "{:?}",
        layout::channels_last_contiguity_expr_3d(sizes, strides)?.statically_known()
    ));
    out.push(format!(
        "{:?}",
        layout::non_overlapping_and_dense_expr(sizes, strides)?.statically_known()
    ));
    out.push(format!(
        "{}",
        layout::is_contiguous_or_false(sizes, strides)?
    ));
    out.push(format!(
        "{}",
        layout::is_channels_last_contiguous_2d_or_false(sizes, strides)?
    ));
    out.push(format!(
        "{}",
        layout::is_channels_last_contiguous_3d_or_false(sizes, strides)?
    ));
    out.push(format!(
        "{}",
        layout::is_non_overlapping_and_dense_or_false(sizes, strides)?
    ));
    out.push(format!("{:?}", layout::empty_like_strides(sizes, strides)?));
    out.push(format!(
        "{:?}",
        layout::infer_dense_strides(sizes, strides)?
    ));
    out.push(format!(
        "{:?}",
        layout::broadcast_strides(sizes, strides, sizes)?
    ));
    Ok(out.join(" "))
}

/// Every entry point that takes only sizes.
fn all_sizes<I: Int>(sizes: &[I]) -> Result<String> {
    let mut out = vec![format!("{:?}", layout::try_contiguous_strides(sizes)?)];
    out.push(format!("{:?}", layout::try_numel(sizes)?));
    out.push(format!("{:?}", layout::infer_size(&[sizes, sizes])?));
    Ok(out.join(" "))
}

fn msg(e: &Error) -> String {
    e.to_string()
}

fn assert_names(e: &Error, parts: &[&str]) {
    let m = msg(e);
    for p in parts {
        assert!(m.contains(p), "error `{m}` does not mention `{p}`");
    }
}

/// Lifts concrete values into symbols (any sign allowed) of one environment.
fn lift(env: &ShapeEnv, prefix: &str, values: &[i64]) -> Vec<SymInt> {
    let spec = SymbolSpec {
        min: i64::MIN,
        ..Default::default()
    };
    env.create_symbols(prefix, values, spec).unwrap()
}

// ---------------------------------------------------------------- layout entry points

#[test]
fn negative_size_names_tensor_dim_and_value() {
    let e = all_layout(&[2i64, -3, 4], &[12, 4, 1]).unwrap_err();
    assert!(matches!(e, Error::InvalidLayout { .. }), "{e}");
    assert_names(&e, &["dim 1", "-3"]);
    let e = all_sizes(&[2i64, -7]).unwrap_err();
    assert!(matches!(e, Error::InvalidLayout { .. }), "{e}");
    assert_names(&e, &["dim 1", "-7"]);
    // Symbolic: a symbol whose hint is negative is rejected the same way.
    let env = ShapeEnv::default();
    let s = lift(&env, "s", &[2, -3, 4]);
    let t = lift(&env, "t", &[12, 4, 1]);
    let e = all_layout(&s, &t).unwrap_err();
    assert!(matches!(e, Error::InvalidLayout { .. }), "{e}");
    assert_names(&e, &["dim 1", "-3"]);
}

#[test]
fn rank_mismatch_is_an_invalid_layout() {
    let e = all_layout(&[2i64, 3], &[1i64]).unwrap_err();
    assert!(matches!(e, Error::InvalidLayout { .. }), "{e}");
    assert_names(&e, &["2 sizes", "1 strides"]);
    let e = all_layout(&[2i64], &[3i64, 1]).unwrap_err();
    assert_names(&e, &["1 sizes", "2 strides"]);
}

#[test]
fn more_than_max_dims_is_a_limit() {
    let n = MAX_DIMS + 1;
    let sizes = vec![1i64; n];
    let strides = vec![1i64; n];
    let e = all_layout(&sizes, &strides).unwrap_err();
    assert!(matches!(e, Error::Limit { .. }), "{e}");
    assert_names(&e, &["65", "64"]);
    assert!(matches!(all_sizes(&sizes), Err(Error::Limit { .. })));
    // Exactly MAX_DIMS is fine.
    all_layout(&vec![1i64; MAX_DIMS], &vec![1i64; MAX_DIMS]).unwrap();
    // And symbolically (checked before any guard work).
    let env = ShapeEnv::default();
    let s = lift(&env, "s", &sizes);
    let t = lift(&env, "t", &strides);
    assert!(matches!(all_layout(&s, &t), Err(Error::Limit { .. })));
}

#[test]
fn overflowing_numel_and_strides_are_overflow_errors() {
    let big = 1i64 << 32;
    let e = all_layout(&[big, big], &[1, 1]).unwrap_err();
    assert!(matches!(e, Error::Overflow { .. }), "{e}");
    let e = all_sizes(&[big, big]).unwrap_err();
    assert!(matches!(e, Error::Overflow { .. }), "{e}");
    assert!(matches!(
        layout::try_numel(&[i64::MAX, 2]),
        Err(Error::Overflow { .. })
    ));
    assert_eq!(layout::try_numel(&[i64::MAX, 1]).unwrap(), i64::MAX);
    assert_eq!(layout::try_numel(&[i64::MAX, 0]).unwrap(), 0);
    // stride * size beyond i64, and |i64::MIN|.
    let e = all_layout(&[4i64], &[i64::MAX / 2]).unwrap_err();
    assert!(matches!(e, Error::Overflow { .. }), "{e}");
    assert_names(&e, &["dim 0"]);
    let e = all_layout(&[2i64, 1], &[1, i64::MIN]).unwrap_err();
    assert!(matches!(e, Error::Overflow { .. }), "{e}");
    assert_names(&e, &["dim 1"]);
    // The same through symbols: checked on the hints.
    let env = ShapeEnv::default();
    let s = lift(&env, "s", &[big, big]);
    let t = lift(&env, "t", &[1, 1]);
    assert!(matches!(all_layout(&s, &t), Err(Error::Overflow { .. })));
}

#[test]
fn broadcast_names_the_operand() {
    let e = layout::infer_size::<i64>(&[&[2, 3], &[4, -1]]).unwrap_err();
    assert!(matches!(e, Error::InvalidLayout { .. }), "{e}");
    assert_names(&e, &["input 1", "dim 1", "-1"]);
    let e = layout::infer_size::<i64>(&[&[2, 3], &[4, 3]]).unwrap_err();
    assert!(matches!(e, Error::Broadcast { .. }), "{e}");
}

fn extreme() -> impl Strategy<Value = i64> {
    prop_oneof![
        4 => -3i64..10,
        1 => Just(i64::MAX),
        1 => Just(i64::MIN),
        1 => Just(1i64 << 31),
        1 => Just(1i64 << 62),
        1 => any::<i64>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Arbitrary integers: every layout entry point answers, and answers `Ok` exactly when
    /// `check_layout` accepts the input; the symbolic path agrees on which inputs fail.
    #[test]
    fn layout_entry_points_never_panic(
        sizes in prop::collection::vec(extreme(), 0..7),
        strides in prop::collection::vec(extreme(), 0..7),
    ) {
        let valid = layout::check_layout("t", &sizes, &strides);
        let got = all_layout(&sizes, &strides);
        prop_assert_eq!(valid.is_ok(), got.is_ok(), "{:?} vs {:?}", valid, got);
        let sized = all_sizes(&sizes);
        prop_assert_eq!(layout::check_sizes("t", &sizes).is_ok(), sized.is_ok());
        if sizes.len() == strides.len() {
            let env = ShapeEnv::default();
            let s = lift(&env, "s", &sizes);
            let t = lift(&env, "t", &strides);
            let sym = all_layout(&s, &t);
            prop_assert_eq!(sym.is_ok(), got.is_ok(), "{:?} vs {:?}", sym, got);
        }
    }
}

// ---------------------------------------------------------------- iterator build

fn spec(sizes: &[i64], strides: &[i64]) -> TensorSpec<i64> {
    TensorSpec::new(sizes.to_vec(), strides.to_vec(), 4)
}

fn build1(t: TensorSpec<i64>) -> Result<()> {
    TensorIteratorConfig::new()
        .add_undefined_output(4)
        .add_input(spec(&[2, 3], &[3, 1]))
        .add_input(t)
        .build()
        .map(|_| ())
}

#[test]
fn iterator_validation_names_the_operand() {
    // Operand numbering: output 0, then inputs 1 and 2 (the hostile one).
    let e = build1(spec(&[2, -3], &[3, 1])).unwrap_err();
    assert!(matches!(e, Error::InvalidLayout { .. }), "{e}");
    assert_names(&e, &["input 1", "dim 1", "-3"]);
    let e = build1(spec(&[2, 3], &[1])).unwrap_err();
    assert!(matches!(e, Error::InvalidLayout { .. }), "{e}");
    assert_names(&e, &["input 1", "2 sizes", "1 strides"]);
    let e = build1(spec(&[2, 3], &[3, -1])).unwrap_err();
    assert_names(&e, &["input 1", "dim 1", "-1"]);
    let e = build1(spec(&[2, 3], &[3, 1]).with_offset(-5)).unwrap_err();
    assert_names(&e, &["input 1", "-5"]);
    let e = build1(TensorSpec::new(vec![3], vec![1], 0)).unwrap_err();
    assert_names(&e, &["input 1", "element size 0"]);
    let n = MAX_DIMS + 1;
    let e = build1(spec(&vec![1; n], &vec![1; n])).unwrap_err();
    assert!(matches!(e, Error::Limit { .. }), "{e}");
    assert_names(&e, &["input 1", "65"]);
}

#[test]
fn iterator_overflow_of_bytes_and_numel() {
    // Elements fit, bytes do not (element size 4).
    let e = build1(spec(&[3], &[i64::MAX / 4])).unwrap_err();
    assert!(matches!(e, Error::Overflow { .. }), "{e}");
    assert_names(&e, &["input 1"]);
    let e = build1(spec(&[1 << 32, 1 << 32], &[0, 0])).unwrap_err();
    assert!(matches!(e, Error::Overflow { .. }), "{e}");
    assert_names(&e, &["input 1", "number of elements"]);
    let e = build1(spec(&[3], &[1]).with_offset(i64::MAX - 1)).unwrap_err();
    assert!(matches!(e, Error::Overflow { .. }), "{e}");
    // The broadcast shape's output in bytes: two inputs that are fine alone.
    let e = TensorIteratorConfig::new()
        .add_undefined_output(8)
        .add_input(spec(&[1 << 31, 1], &[1, 0]))
        .add_input(spec(&[1 << 31], &[0]))
        .build()
        .unwrap_err();
    assert!(matches!(e, Error::Overflow { .. }), "{e}");
    assert_names(&e, &["broadcast shape"]);
}

#[test]
fn strides_past_the_storage_are_rejected() {
    // 2x3 contiguous float32 needs 24 bytes; give 20.
    let t = spec(&[2, 3], &[3, 1]).with_storage(7, 20);
    let e = build1(t).unwrap_err();
    assert!(matches!(e, Error::InvalidLayout { .. }), "{e}");
    assert_names(&e, &["input 1", "24", "20"]);
    // The offset counts too.
    let t = spec(&[2, 3], &[3, 1]).with_offset(1).with_storage(7, 24);
    assert_names(&build1(t).unwrap_err(), &["input 1", "28", "24"]);
    // Exactly enough is fine; an empty view needs no storage.
    build1(spec(&[2, 3], &[3, 1]).with_storage(7, 24)).unwrap();
    build1(spec(&[0, 3], &[1000, 1]).with_storage(7, 0)).unwrap_or_else(|e| {
        // A broadcast mismatch is fine here ([2,3] vs [0,3]); a storage complaint is not.
        assert!(matches!(e, Error::Broadcast { .. }), "{e}")
    });
}

#[test]
fn outputs_overlapping_themselves_or_inputs_are_rejected() {
    let t = |sizes: &[i64], strides: &[i64], off: i64| {
        spec(sizes, strides).with_offset(off).with_storage(1, 400)
    };
    // Stride 0 on a dim of size > 1.
    let e = TensorIteratorConfig::new()
        .add_output(t(&[4, 3], &[0, 1], 0))
        .add_input(t(&[4, 3], &[3, 1], 40))
        .build()
        .unwrap_err();
    assert!(matches!(e, Error::MemoryOverlap { .. }), "{e}");
    assert_names(&e, &["output", "dim 0"]);
    // Two dims with the same stride: "too hard" for PyTorch, which builds it (golden
    // ops.jsonl has such outputs); executing a plan re-checks overlap exactly (kernel::exec).
    TensorIteratorConfig::new()
        .add_output(t(&[4, 3], &[1, 1], 0))
        .add_input(t(&[4, 3], &[3, 1], 40))
        .build()
        .unwrap();
    // Partial overlap with an input in the same storage (shifted by one element).
    let e = TensorIteratorConfig::new()
        .add_output(t(&[4, 3], &[3, 1], 1))
        .add_input(t(&[4, 3], &[3, 1], 0))
        .build()
        .unwrap_err();
    assert!(matches!(e, Error::MemoryOverlap { .. }), "{e}");
    // Full aliasing (in place) is fine, so is a disjoint region of the same storage.
    TensorIteratorConfig::new()
        .add_output(t(&[4, 3], &[3, 1], 0))
        .add_input(t(&[4, 3], &[3, 1], 0))
        .build()
        .unwrap();
    TensorIteratorConfig::new()
        .add_output(t(&[4, 3], &[3, 1], 12))
        .add_input(t(&[4, 3], &[3, 1], 0))
        .build()
        .unwrap();
}

#[test]
fn outputs_after_inputs_is_an_error_not_a_panic() {
    let e = TensorIteratorConfig::new()
        .add_input(spec(&[2], &[1]))
        .add_undefined_output(4)
        .build()
        .unwrap_err();
    assert!(matches!(e, Error::Invalid { .. }), "{e}");
}

fn hostile_spec() -> impl Strategy<Value = TensorSpec<i64>> {
    (
        prop::collection::vec(extreme(), 0..5),
        prop::collection::vec(extreme(), 0..5),
        prop_oneof![3 => Just(0i64), 1 => extreme()],
        prop_oneof![Just(1usize), Just(4), Just(8), Just(0)],
        prop::option::of((0u64..3, extreme())),
    )
        .prop_map(|(sizes, strides, off, es, storage)| {
            let mut t = TensorSpec::new(sizes, strides, es).with_offset(off);
            if let Some((id, n)) = storage {
                t = t.with_storage(id, n);
            }
            t
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Arbitrary operands (extreme integers, bad element sizes, storages shared or not):
    /// the build, with and without its overlap check and fast paths, never panics.
    #[test]
    fn iterator_build_never_panics(
        out in prop::option::of(hostile_spec()),
        inputs in prop::collection::vec(hostile_spec(), 1..4),
        check_mem_overlap in any::<bool>(),
        allow_fast_setup in any::<bool>(),
        resize_outputs in any::<bool>(),
    ) {
        let mut cfg = TensorIteratorConfig::new().options(IterOptions {
            check_mem_overlap,
            allow_fast_setup,
            resize_outputs,
            ..Default::default()
        });
        cfg = match out {
            Some(t) => cfg.add_output(t),
            None => cfg.add_undefined_output(4),
        };
        for t in inputs {
            cfg = cfg.add_input(t);
        }
        if let Err(e) = cfg.build() {
            prop_assert!(!e.to_string().is_empty());
        }
    }
}

// ---------------------------------------------------------------- symbols and expressions

#[test]
fn unknown_symbols_are_named() {
    let e = Expr::parse("a*b + c").unwrap();
    let err = e
        .eval(&Bindings::from_pairs([("a", 1), ("b", 2)]))
        .unwrap_err();
    assert!(matches!(err, Error::Symbol { .. }), "{err}");
    assert_names(&err, &["`c`"]);
    let g = GuardSet::from(vec![Guard {
        cond: BoolExpr::parse("a >= 2 && zz != 1").unwrap(),
        reason: "test".into(),
    }]);
    let err = g.eval(&Bindings::from_pairs([("a", 3)])).unwrap_err();
    assert_names(&err, &["zz"]);
    let err = g.compile(&["a"]).unwrap_err();
    assert_names(&err, &["zz"]);
    let c = g.compile(&["a", "zz"]).unwrap();
    assert!(c.eval(&[3]).is_err(), "too few values");
    assert!(c.eval(&[3, 1, 4]).is_err(), "too many values");
}

#[test]
fn hints_outside_the_declared_range_or_missing() {
    let env = ShapeEnv::default();
    let err = env
        .create_symbol("s0", -1, SymbolSpec::default())
        .unwrap_err();
    assert!(matches!(err, Error::Symbol { .. }), "{err}");
    assert_names(&err, &["s0", "-1"]);
    let err = env
        .create_symbol(
            "s1",
            5,
            SymbolSpec {
                min: 0,
                max: Some(3),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_names(&err, &["s1", "5"]);
    let err = env
        .create_symbol(
            "s2",
            1,
            SymbolSpec {
                min: 4,
                max: Some(3),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_names(&err, &["s2"]);
    // Bad symbol names and redefinitions.
    assert!(env.create_symbol("2x", 1, SymbolSpec::default()).is_err());
    assert!(env.create_symbol("Max", 1, SymbolSpec::default()).is_err());
    assert!(env.create_symbol("", 1, SymbolSpec::default()).is_err());
    env.create_symbol("ok", 3, SymbolSpec::default()).unwrap();
    assert!(env.create_symbol("ok", 3, SymbolSpec::default()).is_err());
    // No hint: a branch on an unbacked size is a data-dependent error naming the
    // condition and the asker, not a panic.
    let u = env.create_unbacked("u0", 0).unwrap();
    let err = u
        .sym_eq(&SymInt::constant(1))
        .guard(|| "test step".into())
        .unwrap_err();
    assert!(matches!(err, Error::DataDependent { .. }), "{err}");
    assert_names(&err, &["u0", "test step"]);
    assert!(!u.eq_i(1).guard_or_false(|| "x".into()));
    // Layout on an unbacked size: either answers or reports data dependence.
    let s = vec![u.clone(), SymInt::constant(3)];
    let t = vec![SymInt::constant(3), SymInt::constant(1)];
    match layout::is_contiguous(&s, &t) {
        Ok(_) | Err(Error::DataDependent { .. }) => {}
        Err(e) => panic!("unexpected {e}"),
    }
}

#[test]
fn parse_errors_say_where() {
    for (src, pos) in [("a + * b", 4), ("Max(a,", 6), ("a $ b", 2), ("a / 2", 2)] {
        let err = Expr::parse(src).unwrap_err();
        assert!(matches!(err, Error::Parse { .. }), "{err}");
        assert_names(&err, &[&format!("position {pos}")]);
    }
    for src in [
        "",
        "(",
        ")",
        "a ==",
        "a < b < c",
        "Foo(a)",
        "FloorDiv(a)",
        "a ** b",
        "a ** 99999",
        "a ** -1",
        "1 +",
        "é",
    ] {
        let err = Expr::parse(src).unwrap_err();
        assert!(matches!(err, Error::Parse { .. }), "{src}: {err}");
        let err = BoolExpr::parse(src).unwrap_err();
        assert!(matches!(err, Error::Parse { .. }), "{src}: {err}");
    }
    // Nesting is bounded (no stack overflow).
    let deep = "(".repeat(100_000) + "a" + &")".repeat(100_000);
    assert!(Expr::parse(&deep).is_err());
    let negs = "-".repeat(100_000) + "a";
    assert!(Expr::parse(&negs).is_err());
    let nots = "!".repeat(100_000) + "a == 1";
    assert!(BoolExpr::parse(&nots).is_err());
}

#[test]
fn division_by_zero_names_the_expression() {
    let b = Bindings::from_pairs([("a", 5), ("b", 0)]);
    for src in ["FloorDiv(a, b)", "Mod(a, b)", "a // b + 1", "a % (b * 3)"] {
        let err = Expr::parse(src).unwrap().eval(&b).unwrap_err();
        assert!(matches!(err, Error::DivisionByZero { .. }), "{src}: {err}");
        assert!(msg(&err).contains('b'), "{err}");
    }
    // In guards, exact and compiled evaluation agree on the error.
    let g = GuardSet::from(vec![Guard {
        cond: BoolExpr::parse("FloorDiv(a, b) >= 1").unwrap(),
        reason: "t".into(),
    }]);
    let exact = g.eval(&b).map(|c| c.failed());
    let compiled = g.compile(&["a", "b"]).unwrap().eval(&[5, 0]);
    assert!(matches!(exact, Err(Error::DivisionByZero { .. })));
    assert_eq!(exact, compiled);
}

#[test]
fn overflowing_guard_evaluation_is_exact_or_an_error() {
    let b = Bindings::from_pairs([("a", i64::MAX), ("b", i64::MAX)]);
    // Guards are evaluated exactly: intermediate overflow does not change the answer.
    for (src, want) in [
        ("a*b > a", true),
        ("a + b >= 0", true),
        ("a*b*b - a*b*b == 0", true),
        ("FloorDiv(a*b, b) == a", true),
        ("-a - b < 0", true),
        ("a**3 <= 0", false),
    ] {
        let g = GuardSet::from(vec![Guard {
            cond: BoolExpr::parse(src).unwrap(),
            reason: "t".into(),
        }]);
        let exact = g.eval(&b).unwrap().failed();
        let compiled = g
            .compile(&["a", "b"])
            .unwrap()
            .eval(&[i64::MAX, i64::MAX])
            .unwrap();
        assert_eq!(exact.is_none(), want, "{src}");
        assert_eq!(exact, compiled, "{src}");
    }
    // A value that does not fit i64 is an Overflow error naming the expression.
    let err = Expr::parse("a + b").unwrap().eval(&b).unwrap_err();
    assert!(matches!(err, Error::Overflow { .. }), "{err}");
    assert_names(&err, &["a + b"]);
    let min = Bindings::from_pairs([("a", i64::MIN), ("b", -1)]);
    assert!(matches!(
        Expr::parse("FloorDiv(a, b)").unwrap().eval(&min),
        Err(Error::Overflow { .. })
    ));
    // SymInt arithmetic whose hint overflows keeps the exact expression.
    let env = ShapeEnv::default();
    let s = env
        .create_symbol("s", i64::MAX, SymbolSpec::default())
        .unwrap();
    let p = s.clone() * s.clone();
    assert_eq!(p.hint(), None);
    assert!(matches!(p.eval(&env.hints()), Err(Error::Overflow { .. })));
}

#[test]
fn huge_expressions_hit_a_limit_not_the_memory() {
    // Products and powers of sums expand into the normal form; a short input must not be
    // able to ask for billions of terms, a degree that overflows, or a gigantic constant.
    let start = std::time::Instant::now();
    for src in [
        "(a+b+c+d+e+f+g+h)**64",
        "((a+b)**64)**64",
        "(a+b+c)**40*(d+e+f)**40",
        "((((((a**64)**64)**64)**64)**64)**64)",
        "((((2**64)**64)**64)**64)",
    ] {
        let err = BoolExpr::parse(&format!("{src} >= 0"))
            .err()
            .or_else(|| Expr::parse(src).err())
            .unwrap_or_else(|| panic!("{src} parsed"));
        assert!(matches!(err, Error::Limit { .. }), "{src}: {err}");
        assert!(msg(&err).contains("position"), "{err}");
    }
    // Within the limits all is fine.
    assert_eq!(
        Expr::parse("(a+b)**2").unwrap().to_string(),
        "a**2 + 2*a*b + b**2"
    );
    Expr::parse("(a+b+c+d)**8").unwrap();
    Expr::parse("(2**64)**30").unwrap();
    assert!(start.elapsed().as_secs() < 10, "took {:?}", start.elapsed());
}

// ---------------------------------------------------------------- tensors and kernels

mod kernels {
    use super::*;
    use symstride::iter::{OperandPlan, Plan};
    use symstride::kernel::{self, ExecConfig};
    use symstride::tensor::{Storage, Tensor};

    fn iota(n: usize) -> Vec<f32> {
        (0..n).map(|i| i as f32).collect()
    }

    fn contents(s: &Storage<f32>) -> Vec<f32> {
        Tensor::from_storage(s.clone(), &[s.len() as i64], &[1], 0)
            .unwrap()
            .to_vec()
            .unwrap()
    }

    #[test]
    fn tensor_constructors_reject_bad_layouts() {
        let e = Tensor::from_vec(vec![0f32; 6], &[2, -3]).unwrap_err();
        assert_names(&e, &["-3"]);
        let e = Tensor::from_vec(vec![0f32; 6], &[1 << 40, 1 << 40]).unwrap_err();
        assert!(matches!(e, Error::Overflow { .. }), "{e}");
        let e = Tensor::from_vec(vec![0f32; 6], &[i64::MAX, 2, 3]).unwrap_err();
        assert!(matches!(e, Error::Overflow { .. }), "{e}");
        // The contiguous strides themselves overflow here.
        let e = Tensor::from_vec(vec![0f32; 6], &[2, i64::MAX, 3]).unwrap_err();
        assert!(matches!(e, Error::Overflow { .. }), "{e}");
        assert!(Tensor::from_vec(vec![0f32; 6], &[7]).is_err());
        assert!(Tensor::<f32>::zeros(&[1 << 62, 4]).is_err());
        // Empty, but its contiguous strides would overflow: rejected up front, or every
        // op on it works (no panic in a later stride computation).
        let empty = Tensor::from_storage(
            Storage::<f32>::from_vec(vec![]),
            &[0, 1 << 40, 1 << 40],
            &[0, 0, 0],
            0,
        );
        if let Ok(t) = empty {
            for format in [
                symstride::layout::MemoryFormat::Preserve,
                symstride::layout::MemoryFormat::Contiguous,
            ] {
                let _ = t.contiguous_in(format);
                let _ = t.clone_as(format);
            }
            let _ = t.deep_clone();
            let _ = kernel::neg(&t);
            let _ = kernel::add(&t, &t);
        }
        assert!(Tensor::<f32>::zeros(&[-1]).is_err());
        let t = Tensor::from_vec(iota(12), &[3, 4]).unwrap();
        let e = t.as_strided(&[3, 4], &[4, 1], 1).unwrap_err();
        assert!(matches!(e, Error::InvalidLayout { .. }), "{e}");
        assert_names(&e, &["12"]);
        assert!(t.as_strided(&[3, 4], &[4], 0).is_err());
        assert!(t.as_strided(&[2], &[i64::MAX], 0).is_err());
        assert!(t.as_strided(&[2], &[1], -1).is_err());
        assert!(t.as_strided(&[2], &[1], i64::MAX).is_err());
        assert!(t.slice(0, 0, 3, 0).is_err());
        assert!(t.select(5, 0).is_err());
        assert!(t.select(0, 3).is_err());
        assert!(t.narrow(1, 2, 5).is_err());
        assert!(t.permute(&[0, 0]).is_err());
        assert!(t.expand(&[2, 4]).is_err());
        assert!(t.get(&[3, 0]).is_err());
        assert!(t.get(&[0]).is_err());
        assert!(t.get(&[-1, 0]).is_err());
    }

    #[test]
    fn outputs_overlapping_inputs_or_themselves_fail_and_touch_nothing() {
        let base = Tensor::from_vec(iota(20), &[20]).unwrap();
        let before = base.to_vec().unwrap();
        // out = base[1..11], a = base[0..10]: partial overlap.
        let out = base.as_strided(&[10], &[1], 1).unwrap();
        let a = base.as_strided(&[10], &[1], 0).unwrap();
        let b = Tensor::from_vec(vec![100f32; 10], &[10]).unwrap();
        let e = kernel::add_out(&a, &b, &out).unwrap_err();
        assert!(matches!(e, Error::MemoryOverlap { .. }), "{e}");
        assert_eq!(
            base.to_vec().unwrap(),
            before,
            "data changed by a failed op"
        );
        // out overlapping itself (stride 0 on a dim of size > 1).
        let out = base.as_strided(&[4, 3], &[0, 1], 12).unwrap();
        let a = Tensor::from_vec(iota(12), &[4, 3]).unwrap();
        let e = kernel::neg(&a)
            .and_then(|n| kernel::add_out(&a, &n, &out))
            .unwrap_err();
        assert!(matches!(e, Error::MemoryOverlap { .. }), "{e}");
        assert_eq!(base.to_vec().unwrap(), before);
        // out overlapping itself with equal strides.
        let out = base.as_strided(&[3, 3], &[2, 2], 0).unwrap();
        let a = Tensor::from_vec(iota(9), &[3, 3]).unwrap();
        assert!(kernel::add_out(&a, &a, &out).is_err());
        assert_eq!(base.to_vec().unwrap(), before);
        // A broadcast mismatch of the given output is an error and leaves it alone too.
        let out = base.as_strided(&[5], &[1], 0).unwrap();
        assert!(kernel::add_out(&a, &a, &out).is_err());
        assert_eq!(base.to_vec().unwrap(), before);
        // Fully in place is fine.
        let x = Tensor::from_vec(iota(6), &[6]).unwrap();
        kernel::add_out(&x, &x, &x).unwrap();
        assert_eq!(x.to_vec().unwrap(), vec![0., 2., 4., 6., 8., 10.]);
    }

    /// A valid plan for `out[i] = a[i] + b[i]` over `n` f32 elements.
    fn plan(n: i64) -> Plan<i64> {
        let op = |is_output| OperandPlan {
            byte_strides: vec![4],
            offset: 0,
            element_size: 4,
            is_output,
        };
        Plan {
            shape: vec![n],
            operands: vec![op(true), op(false), op(false)],
            num_outputs: 1,
            broadcast_shape: vec![n],
            output_strides: vec![vec![1]],
            perm: vec![0],
        }
    }

    #[test]
    fn hand_made_plans_are_validated_before_any_access() {
        let cfg = ExecConfig::default();
        let add = |a: f32, b: f32| a + b;
        let out = Storage::from_vec(vec![-1f32; 8]);
        let a = Storage::from_vec(iota(8));
        let b = Storage::from_vec(iota(8));
        let run = |p: &Plan<i64>| kernel::execute_map2(p, &out, &a, &b, &add, &cfg);
        run(&plan(8)).unwrap();
        assert_eq!(
            contents(&out),
            (0..8).map(|i| 2. * i as f32).collect::<Vec<_>>()
        );
        let fresh = vec![-1f32; 8];
        let out = Storage::from_vec(fresh.clone());
        let run = |p: &Plan<i64>| kernel::execute_map2(p, &out, &a, &b, &add, &cfg);
        let mut bad = Vec::new();
        let mut p = plan(9); // one element past every storage
        bad.push(("past the end", p.clone()));
        p = plan(8);
        p.operands[1].offset = 1;
        bad.push(("input offset past the end", p.clone()));
        p = plan(8);
        p.operands[2].byte_strides = vec![8];
        bad.push(("input stride past the end", p.clone()));
        p = plan(8);
        p.operands[0].byte_strides = vec![2];
        bad.push(("stride not a multiple of the element size", p.clone()));
        p = plan(8);
        p.operands[0].element_size = 8;
        bad.push(("wrong element size", p.clone()));
        p = plan(8);
        p.operands[1].offset = -1;
        bad.push(("negative offset", p.clone()));
        p = plan(8);
        p.operands[0].byte_strides = vec![0];
        bad.push(("output stride 0", p.clone()));
        p = plan(8);
        p.shape = vec![-8];
        bad.push(("negative size", p.clone()));
        p = plan(8);
        p.shape = vec![1 << 40, 1 << 40];
        for op in &mut p.operands {
            op.byte_strides = vec![0, 0];
        }
        assert_eq!(p.numel(), i64::MAX, "saturates, no overflow panic");
        bad.push(("numel overflow", p.clone()));
        p = plan(8);
        p.operands[1].byte_strides = vec![i64::MAX - 3];
        bad.push(("huge stride", p.clone()));
        p = plan(8);
        p.operands[1].offset = i64::MAX / 2;
        bad.push(("huge offset", p.clone()));
        p = plan(8);
        p.operands[2].byte_strides = vec![4, 4];
        bad.push(("rank mismatch", p.clone()));
        p = plan(8);
        p.operands.pop();
        bad.push(("missing operand", p.clone()));
        p = plan(8);
        p.num_outputs = 2;
        bad.push(("wrong output count", p.clone()));
        for (what, p) in &bad {
            let e = run(p).expect_err(what);
            assert!(!e.to_string().is_empty());
            assert_eq!(
                contents(&out),
                fresh,
                "{what}: output written by a rejected plan"
            );
        }
        // The output aliasing an input storage partially (same storage, shifted).
        let shared = Storage::from_vec(iota(9));
        let mut p = plan(8);
        p.operands[0].offset = 1;
        let e = kernel::execute_map2(&p, &shared, &shared, &b, &add, &cfg).unwrap_err();
        assert!(matches!(e, Error::MemoryOverlap { .. }), "{e}");
        assert_eq!(contents(&shared), iota(9));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// Random plans over small storages: a plan the kernel accepts addresses only
        /// elements inside the storages (checked by a reference walk that indexes with
        /// bounds checks) and computes what the reference computes; a plan it rejects
        /// leaves the output untouched.
        #[test]
        fn random_plans_are_safe(
            shape in prop::collection::vec(-1i64..5, 0..4),
            strides in prop::collection::vec(prop::collection::vec(-2i64..5, 0..4), 3),
            offsets in prop::collection::vec(-1i64..6, 3),
            lens in prop::collection::vec(0usize..24, 3),
            same_storage in any::<bool>(),
        ) {
            let cfg = ExecConfig { grain_size: 4, ..ExecConfig::default() };
            let mut p = plan(1);
            p.shape = shape.clone();
            for k in 0..3 {
                p.operands[k].byte_strides = strides[k].iter().map(|s| s * 4).collect();
                p.operands[k].offset = offsets[k];
            }
            let init: Vec<Vec<f32>> = lens.iter().map(|&n| (0..n).map(|i| i as f32 + 1.0).collect()).collect();
            let out = Storage::from_vec(init[0].clone());
            let a = if same_storage { out.clone() } else { Storage::from_vec(init[1].clone()) };
            let b = Storage::from_vec(init[2].clone());
            let got = kernel::execute_map2(&p, &out, &a, &b, &|x: f32, y: f32| x * 10.0 + y, &cfg);
            match got {
                Err(_) => prop_assert_eq!(contents(&out), init[0].clone()),
                Ok(()) => {
                    // Reference: bounds-checked indexing (panics on any out-of-bounds).
                    let mut want = init[0].clone();
                    let a0 = if same_storage { init[0].clone() } else { init[1].clone() };
                    let b0 = init[2].clone();
                    p.for_each_byte_offsets(|offs| {
                        let idx: Vec<usize> = offs.iter().map(|&o| usize::try_from(o / 4).unwrap()).collect();
                        want[idx[0]] = a0[idx[1]] * 10.0 + b0[idx[2]];
                    });
                    prop_assert_eq!(contents(&out), want);
                }
            }
        }
    }
}

// ---------------------------------------------------------------- specs and artifacts

mod artifacts {
    use super::*;
    use serde_json::Value;
    use symstride::aot::{
        concrete_plan, random_inputs, verify, Artifact, CompileOptions, Dispatcher, Spec,
        FORMAT_VERSION, SEED_SPEC_JSON,
    };
    use symstride::kernel::ExecConfig;

    fn seed() -> Artifact {
        let spec = Spec::from_json(SEED_SPEC_JSON).unwrap();
        Artifact::compile(&spec, &CompileOptions::default()).unwrap()
    }

    #[test]
    fn bad_specs_are_parse_errors_naming_the_input() {
        let cases: &[(&str, &[&str])] = &[
            ("", &[]),
            ("{", &[]),
            ("[]", &[]),
            (r#"{"op":"mul","inputs":[],"hints":{}}"#, &["mul"]),
            (
                r#"{"op":"add","inputs":[{"sizes":["c"],"layout":"contiguous"}],"hints":{"c":2}}"#,
                &["2"],
            ),
            (
                r#"{"op":"neg","inputs":[{"sizes":["c",-3],"layout":"contiguous"}],"hints":{"c":2}}"#,
                &["input 0", "-3"],
            ),
            (
                r#"{"op":"neg","inputs":[{"sizes":["c"],"layout":"contiguous"}],"hints":{}}"#,
                &["missing hint", "c"],
            ),
            (
                r#"{"op":"neg","inputs":[{"sizes":["c"],"layout":"contiguous"}],"hints":{"c":-1}}"#,
                &["c", "-1"],
            ),
            (
                r#"{"op":"neg","inputs":[{"sizes":["c"],"layout":"contiguous"}],"hints":{"c":2,"d":3}}"#,
                &["d"],
            ),
            (
                r#"{"op":"neg","inputs":[{"sizes":["c"],"layout":"contiguous"}],"hints":{"c":"x"}}"#,
                &["c"],
            ),
            (
                r#"{"op":"neg","inputs":[{"sizes":["c"],"strides":["c +* 1"]}],"hints":{"c":2}}"#,
                &["input 0 stride 0", "position"],
            ),
            (
                r#"{"op":"neg","inputs":[{"sizes":["c"],"strides":["c*zz"]}],"hints":{"c":2,"zz":1}}"#,
                &["zz"],
            ),
            (
                r#"{"op":"neg","inputs":[{"sizes":["c"],"strides":["-2"]}],"hints":{"c":2}}"#,
                &["negative"],
            ),
            (
                r#"{"op":"neg","inputs":[{"sizes":["c"],"strides":["1","1"]}],"hints":{"c":2}}"#,
                &["2 strides", "1 sizes"],
            ),
            (
                r#"{"op":"neg","inputs":[{"sizes":["c",2],"layout":"channels_last"}],"hints":{"c":2}}"#,
                &["rank"],
            ),
            (
                r#"{"op":"neg","inputs":[{"sizes":["c"],"layout":"diagonal"}],"hints":{"c":2}}"#,
                &["diagonal"],
            ),
            (
                r#"{"op":"neg","inputs":[{"sizes":["c"]}],"hints":{"c":2}}"#,
                &["input 0"],
            ),
            (
                r#"{"op":"neg","inputs":[{"sizes":["c"],"layout":"contiguous","strides":["1"]}],"hints":{"c":2}}"#,
                &["input 0"],
            ),
            (
                r#"{"op":"neg","inputs":[{"sizes":["c"],"strides":["FloorDiv(c, 0)"]}],"hints":{"c":2}}"#,
                &[],
            ),
        ];
        for (text, parts) in cases {
            let Err(e) = Spec::from_json(text) else {
                // A spec that parses must still fail to compile cleanly.
                let spec = Spec::from_json(text).unwrap();
                let e = Artifact::compile(&spec, &CompileOptions::default()).expect_err(text);
                assert!(!msg(&e).is_empty());
                continue;
            };
            for p in parts.iter() {
                assert!(msg(&e).contains(p), "{text}: `{e}` does not mention `{p}`");
            }
        }
        let rank65 = format!(
            r#"{{"op":"neg","inputs":[{{"sizes":{:?},"layout":"contiguous"}}],"hints":{{}}}}"#,
            vec![1; 65]
        );
        assert_names(&Spec::from_json(&rank65).unwrap_err(), &["65"]);
    }

    #[test]
    fn huge_hints_are_errors_not_panics() {
        for (c, h, w) in [
            (1i64 << 40, 1i64 << 40, 1i64 << 40),
            (i64::MAX, 1, 1),
            (1 << 62, 4, 1),
        ] {
            let text = format!(
                r#"{{"op":"add","inputs":[{{"sizes":[2,"c","h","w"],"layout":"channels_last"}},{{"sizes":["c","h","w"],"layout":"contiguous"}}],"hints":{{"c":{c},"h":{h},"w":{w}}}}}"#
            );
            let spec = Spec::from_json(&text).unwrap();
            let e = Artifact::compile(&spec, &CompileOptions::default()).unwrap_err();
            assert!(
                matches!(e, Error::Overflow { .. } | Error::InvalidLayout { .. }),
                "{e}"
            );
        }
        // At dispatch: bindings whose layouts overflow are rejected by validation.
        let d = Dispatcher::new(seed()).unwrap();
        assert!(d
            .spec()
            .concrete_inputs(&[1 << 40, 1 << 40, 1 << 40])
            .is_err());
        let mut plan = symstride::aot::empty_plan();
        for v in [[1i64 << 40, 1 << 40, 1 << 40], [-1, 2, 2], [i64::MAX, 1, 1]] {
            let e = d.dispatch_values(&v, &mut plan);
            assert!(e.is_err(), "{v:?}: {e:?}");
        }
        assert!(
            d.dispatch_values(&[2, 2], &mut plan).is_err(),
            "too few values"
        );
    }

    #[test]
    fn wrong_format_version_truncation_and_bytes() {
        let a = seed();
        let text = a.to_json();
        assert_eq!(Artifact::from_json(&text).unwrap(), a);
        let mut v: Value = serde_json::from_str(&text).unwrap();
        v["version"] = Value::from(FORMAT_VERSION + 1);
        let e = Artifact::from_json(&v.to_string()).unwrap_err();
        assert!(matches!(e, Error::Artifact { .. }), "{e}");
        assert_names(&e, &[&format!("version {}", FORMAT_VERSION + 1)]);
        v["version"] = Value::from("1");
        assert!(Artifact::from_json(&v.to_string()).is_err());
        let mut v: Value = serde_json::from_str(&text).unwrap();
        v["format"] = Value::from("something-else");
        assert_names(
            &Artifact::from_json(&v.to_string()).unwrap_err(),
            &["something-else"],
        );
        for cut in [0, 1, text.len() / 3, text.len() / 2, text.len() - 2] {
            let e = Artifact::from_json(&text[..cut]).unwrap_err();
            assert!(matches!(e, Error::Artifact { .. }), "{e}");
        }
        let dir = std::env::temp_dir().join(format!("symstride-hostile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("bad.plan");
        let mut bytes = text.clone().into_bytes();
        bytes[text.len() / 2] = 0xff;
        std::fs::write(&f, &bytes).unwrap();
        let e = Artifact::load(&f).unwrap_err();
        assert_names(&e, &["bad.plan"]);
        let e = Artifact::load(&dir.join("missing.plan")).unwrap_err();
        assert!(matches!(e, Error::Io { .. }), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Every leaf (number or string) under `specializations`, as a JSON pointer.
    fn leaves(v: &Value, path: String, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    leaves(x, format!("{path}/{k}"), out);
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    leaves(x, format!("{path}/{i}"), out);
                }
            }
            _ => out.push(path),
        }
    }

    /// Rewrites every number and expression of a compiled artifact, one at a time, into
    /// plausible and hostile values. Each rewritten artifact either fails to load with an
    /// `Artifact` error, or loads and then every dispatch and execution either fails with
    /// an error or runs (in bounds: the kernels validate the instantiated plan against the
    /// real storages). Reports how many rewrites load *and* change results, which only a
    /// re-trace on load could catch.
    #[test]
    fn rewritten_numbers_never_reach_memory_unchecked() {
        let a = seed();
        let v: Value = serde_json::from_str(&a.to_json()).unwrap();
        let mut paths = Vec::new();
        leaves(&v["specializations"], "/specializations".into(), &mut paths);
        assert!(paths.len() > 20, "{paths:?}");
        let bindings = [[3i64, 4, 5], [1, 4, 5], [2, 1, 1], [3, 0, 2]];
        let reference = Dispatcher::new(a.clone()).unwrap();
        let cfg = ExecConfig::default();
        let (mut loaded, mut wrong) = (0usize, Vec::new());
        for path in &paths {
            let original = v.pointer(path).unwrap().clone();
            let replacements: Vec<Value> = match &original {
                Value::Number(n) => {
                    let k = n.as_i64().unwrap_or(0);
                    vec![
                        (k + 1).into(),
                        0.into(),
                        (-1).into(),
                        (k * 2).into(),
                        i64::MAX.into(),
                    ]
                }
                // Conditions: also weakened ones (the dangerous direction).
                Value::String(s) if path.ends_with("/cond") => vec![
                    format!("{s} + 1").into(),
                    "True".into(),
                    "c >= 0".into(),
                    format!("{s} || h >= 0").into(),
                    "((".into(),
                ],
                Value::String(s) => vec![
                    format!("{s} + 1").into(),
                    "0".into(),
                    "-1".into(),
                    "9223372036854775807".into(),
                    "c*h*w*c*h*w".into(),
                    "((".into(),
                ],
                Value::Bool(b) => vec![(!b).into()],
                _ => vec![],
            };
            for r in replacements {
                let mut t = v.clone();
                *t.pointer_mut(path).unwrap() = r.clone();
                let art = match Artifact::from_json(&t.to_string()) {
                    Err(e) => {
                        assert!(matches!(e, Error::Artifact { .. }), "{path} = {r}: {e}");
                        continue;
                    }
                    Ok(art) => art,
                };
                loaded += 1;
                if std::env::var_os("HOSTILE_VERBOSE").is_some() {
                    eprintln!("loaded: {path} = {r}");
                }
                let d = Dispatcher::new(art).unwrap();
                for b in &bindings {
                    let inputs = random_inputs(d.spec(), b, 7).unwrap();
                    let refs: Vec<_> = inputs.iter().collect();
                    // Must not panic; an error is fine.
                    if let Ok(ex) = d.execute(&refs, &cfg) {
                        let good = reference.execute(&refs, &cfg).unwrap();
                        let same = ex.output.sizes() == good.output.sizes()
                            && verify(d.spec().op, &refs, &ex.output).is_ok();
                        if !same {
                            wrong.push(format!("{path} = {r} at {b:?}"));
                        }
                    }
                    let plan = d
                        .spec()
                        .concrete_inputs(b)
                        .and_then(|_| concrete_plan(d.spec(), b));
                    assert!(plan.is_ok(), "{b:?}");
                }
            }
        }
        eprintln!(
            "{} rewrites, {loaded} loaded, {} gave wrong results: {:?}",
            paths.len(),
            wrong.len(),
            wrong
        );
        assert!(
            wrong.is_empty(),
            "tampered artifacts loaded and computed wrong results: {wrong:?}"
        );
    }
}
