//! Integration tests of the symbolic layer: ShapeEnv, SymInt/SymBool through the Int/Bool
//! traits, guard recording/pruning, unbacked symbols, guard evaluation and serialization.

use symstride::sym::{
    Bindings, BoolExpr, Expr, GuardCheck, GuardSet, ShapeEnv, ShapeEnvConfig, SymInt, SymbolSpec,
};
use symstride::{Bool, Error, Int, Result};

fn spec_min(min: i64) -> SymbolSpec {
    SymbolSpec {
        min,
        ..Default::default()
    }
}

/// A generic algorithm with branches (PyTorch-style contiguity check).
fn contiguous_strides<I: Int>(sizes: &[I]) -> Vec<I> {
    let mut strides = vec![I::from_i64(1); sizes.len()];
    for d in (0..sizes.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1].clone() * Int::max(&sizes[d + 1], &I::from_i64(1));
    }
    strides
}

fn is_contiguous<I: Int>(sizes: &[I], strides: &[I]) -> Result<bool> {
    let mut expected = I::from_i64(1);
    for d in (0..sizes.len()).rev() {
        if sizes[d]
            .eq_i(1)
            .guard(|| format!("is_contiguous: dim {d} size == 1"))?
        {
            continue;
        }
        if strides[d]
            .sym_ne(&expected)
            .guard(|| format!("is_contiguous: dim {d} stride"))?
        {
            return Ok(false);
        }
        expected = expected * sizes[d].clone();
    }
    Ok(true)
}

#[test]
fn decidable_conditions_record_nothing() {
    let env = ShapeEnv::default();
    let s = env.create_symbol("s", 4, spec_min(2)).unwrap();
    let t = env.create_symbol("t", 3, spec_min(1)).unwrap();
    assert!(s.ne_i(1).guard(|| "x".into()).unwrap());
    assert!(s.ge_i(1).guard(|| "x".into()).unwrap());
    assert!(!s.eq_i(0).guard(|| "x".into()).unwrap());
    assert!((s.clone() * t.clone())
        .ge_i(2)
        .guard(|| "x".into())
        .unwrap());
    assert!(Int::max(&s, &SymInt::constant(1))
        .sym_eq(&s)
        .guard(|| "x".into())
        .unwrap());
    let a = env.create_symbol("a", 2, SymbolSpec::default()).unwrap();
    let lhs = a.clone() * (s.clone() + t.clone());
    let rhs = t.clone() * a.clone() + a.clone() * s.clone();
    assert!(lhs.sym_eq(&rhs).guard(|| "x".into()).unwrap());
    assert!((s.clone() * t.clone() * a.clone())
        .sym_eq(&(a * t * s))
        .guard(|| "x".into())
        .unwrap());
    assert!(env.guards().is_empty(), "{:?}", env.guards());
}

#[test]
fn guards_are_recorded_deduplicated_and_pruned() {
    let env = ShapeEnv::default();
    let s = env.create_symbol("s", 5, SymbolSpec::default()).unwrap();
    assert!(s.ne_i(0).guard(|| "first".into()).unwrap());
    assert!(s.ne_i(0).guard(|| "again".into()).unwrap());
    assert_eq!(env.guards().len(), 1);
    assert_eq!(env.guards()[0].to_string(), "s != 0");
    assert_eq!(env.guards()[0].reason, "first");
    // s != 0 with s >= 0 means s >= 1: decided.
    assert!(s.ge_i(1).guard(|| "x".into()).unwrap());
    assert_eq!(env.guards().len(), 1);
    // s >= 2 subsumes s != 0.
    assert!(s.ge_i(2).guard(|| "bound".into()).unwrap());
    let g = env.guards();
    assert_eq!(g.len(), 1, "{g:?}");
    assert_eq!(g[0].to_string(), "s >= 2");
    assert!(s.ne_i(1).guard(|| "x".into()).unwrap());
    assert_eq!(env.guards().len(), 1);
    // The negation is recorded when the hint says false.
    assert!(!s.lt_i(3).guard(|| "neg".into()).unwrap());
    let g = env.guards();
    assert_eq!(g.len(), 1, "{g:?}");
    assert_eq!(g[0].to_string(), "s >= 3");
}

#[test]
fn equalities_are_used_as_facts() {
    let env = ShapeEnv::default();
    let a = env.create_symbol("a", 6, SymbolSpec::default()).unwrap();
    let b = env.create_symbol("b", 6, SymbolSpec::default()).unwrap();
    let c = env.create_symbol("c", 2, SymbolSpec::default()).unwrap();
    assert!(a.sym_eq(&b).guard(|| "eq".into()).unwrap());
    assert!((a.clone() * c.clone())
        .sym_eq(&(c.clone() * b.clone()))
        .guard(|| "x".into())
        .unwrap());
    assert!(!(a.clone() + 1).sym_le(&b).guard(|| "x".into()).unwrap());
    assert_eq!(env.guards().len(), 1);
}

#[test]
fn symbolic_contiguity_matches_concrete_under_guards() {
    let hints = [3i64, 1, 4, 5];
    let env = ShapeEnv::default();
    let sizes: Vec<SymInt> = env
        .create_symbols("s", &hints, SymbolSpec::default())
        .unwrap();
    let strides = contiguous_strides(&sizes);
    let sym_result = is_contiguous(&sizes, &strides).unwrap();
    let guards = env.guard_set();
    assert!(!guards.is_empty());
    // Every guard holds at the hints.
    let hb = env.hints();
    assert!(guards.eval(&hb).unwrap().is_pass());
    // For every shape the guards accept, the concrete algorithm agrees.
    let mut accepted = 0;
    for a in 0..4i64 {
        for b in 0..3i64 {
            for c in 0..3i64 {
                for d in 0..3i64 {
                    let bind = Bindings::from_pairs([("s0", a), ("s1", b), ("s2", c), ("s3", d)]);
                    let conc = [a, b, c, d];
                    let cstr = contiguous_strides(&conc);
                    for (sd, cd) in strides.iter().zip(&cstr) {
                        assert_eq!(sd.eval(&bind).unwrap(), *cd);
                    }
                    if guards.eval(&bind).unwrap().is_pass() {
                        accepted += 1;
                        assert_eq!(is_contiguous(&conc, &cstr).unwrap(), sym_result);
                    }
                }
            }
        }
    }
    assert!(accepted > 1);
}

#[test]
fn duck_sizing_and_specialization() {
    let env = ShapeEnv::default();
    let duck = SymbolSpec {
        duck: true,
        ..Default::default()
    };
    let a = env.create_symbol("a", 8, duck).unwrap();
    let b = env.create_symbol("b", 8, duck).unwrap();
    let c = env.create_symbol("c", 8, SymbolSpec::default()).unwrap();
    assert_eq!(a.expr(), b.expr());
    assert_ne!(a.expr(), c.expr());
    let spec = SymbolSpec {
        specialize_zero_one: true,
        ..Default::default()
    };
    let one = env.create_symbol("d", 1, spec).unwrap();
    assert_eq!(one.as_const(), Some(1));
    let e = env.create_symbol("e", 1, SymbolSpec::default()).unwrap();
    assert_eq!(e.as_const(), None);
    assert!(matches!(
        env.create_symbol("c", 3, SymbolSpec::default()),
        Err(Error::Symbol { .. })
    ));
    assert!(matches!(
        env.create_symbol("Max", 3, SymbolSpec::default()),
        Err(Error::Symbol { .. })
    ));
    assert!(matches!(
        env.create_symbol("f", 1, spec_min(2)),
        Err(Error::Symbol { .. })
    ));
}

#[test]
fn unbacked_symbols() {
    let env = ShapeEnv::default();
    let u = env.create_unbacked("u0", 0).unwrap();
    let s = env.create_symbol("s", 3, SymbolSpec::default()).unwrap();
    assert_eq!(u.hint(), None);
    assert!(u.ge_i(0).guard(|| "x".into()).unwrap());
    let err = u.eq_i(1).guard(|| "broadcast dim 0".into()).unwrap_err();
    match &err {
        Error::DataDependent { expr, reason } => {
            assert_eq!(expr, "u0 == 1");
            assert_eq!(reason, "broadcast dim 0");
        }
        e => panic!("unexpected {e:?}"),
    }
    assert!(!u.eq_i(1).guard_or_false(|| "x".into()));
    assert!(u.eq_i(1).guard_or_true(|| "x".into()));
    assert!(!u.eq_i(1).statically_known_true());
    assert!(env.guards().is_empty());
    // Backed conditions through guard_or_false still guard.
    assert!(!s.eq_i(1).guard_or_false(|| "x".into()));
    assert_eq!(env.guards().len(), 1);
    // Mixed: still data-dependent.
    assert!(matches!(
        (u.clone() * s.clone()).eq_i(6).guard(|| "m".into()),
        Err(Error::DataDependent { .. })
    ));
}

#[test]
fn limits() {
    let env = ShapeEnv::new(ShapeEnvConfig {
        max_guards_per_symbol: 2,
        ..Default::default()
    });
    let s = env.create_symbol("s", 10, SymbolSpec::default()).unwrap();
    let t = env.create_symbol("t", 10, SymbolSpec::default()).unwrap();
    s.sym_eq(&t).guard(|| "1".into()).unwrap();
    s.ne_i(3).guard(|| "2".into()).unwrap();
    assert!(matches!(
        s.ne_i(4).guard(|| "3".into()),
        Err(Error::Limit { .. })
    ));
    let env = ShapeEnv::new(ShapeEnvConfig {
        max_expr_nodes: 5,
        ..Default::default()
    });
    let v: Vec<SymInt> = (0..4)
        .map(|i| {
            env.create_symbol(&format!("x{i}"), 2, SymbolSpec::default())
                .unwrap()
        })
        .collect();
    let sum = v.iter().fold(SymInt::constant(0), |a, b| a + b.clone());
    assert!(matches!(
        sum.eq_i(8).guard(|| "big".into()),
        Err(Error::Limit { .. })
    ));
}

#[test]
fn guards_serialize_and_evaluate() {
    let env = ShapeEnv::default();
    let a = env.create_symbol("a", 4, SymbolSpec::default()).unwrap();
    let b = env.create_symbol("b", 1, SymbolSpec::default()).unwrap();
    a.sym_eq(&b).guard(|| "eq".into()).unwrap();
    b.eq_i(1).guard(|| "one".into()).unwrap();
    (a.floor_div(&SymInt::constant(2)))
        .ge_i(2)
        .guard(|| "div".into())
        .unwrap();
    let set = env.guard_set();
    let json = serde_json::to_string(&set).unwrap();
    let back: GuardSet = serde_json::from_str(&json).unwrap();
    assert_eq!(back, set);
    assert_eq!(set.eval(&env.hints()).unwrap(), GuardCheck::Pass);
    let fails = set
        .eval(&Bindings::from_pairs([("a", 4), ("b", 4)]))
        .unwrap();
    assert!(fails.failed().is_some());
    let e: Expr = serde_json::from_str("\"2*c + 1\"").unwrap();
    assert_eq!(e.to_string(), "2*c + 1");
    assert!(serde_json::from_str::<BoolExpr>("\"a >=\"").is_err());
}

#[test]
fn symint_hints_and_eval() {
    let env = ShapeEnv::default();
    let a = env.create_symbol("a", 7, SymbolSpec::default()).unwrap();
    let b = env.create_symbol("b", 2, spec_min(1)).unwrap();
    let e = (a.clone() * b.clone() + 3).floor_div(&b);
    assert_eq!(e.hint(), Some(8));
    assert_eq!(e.eval(&env.hints()).unwrap(), 8);
    let m = a.modulo(&b);
    assert_eq!(m.hint(), Some(1));
    // (a*b) // b == a for b >= 1.
    assert_eq!((a.clone() * b.clone()).floor_div(&b).expr(), a.expr());
    let bind = Bindings::from_pairs([("a", 10), ("b", 3)]);
    assert_eq!(e.eval(&bind).unwrap(), 11);
    assert_eq!(m.eval(&bind).unwrap(), 1);
}

#[test]
fn simplifier_fallback_decides_non_polynomial_conditions() {
    let env = ShapeEnv::default();
    let s = env.create_symbol("s", 4, SymbolSpec::default()).unwrap();
    let cond = BoolExpr::parse("Max(s, 1) == s").unwrap();
    assert_eq!(env.statically_known(&cond), None);
    assert!(s.ge_i(1).guard(|| "nonzero".into()).unwrap());
    assert_eq!(env.statically_known(&cond), Some(true));
    let d = env.create_symbol("d", 3, spec_min(1)).unwrap();
    let q = (s.clone() * d.clone()).floor_div(&d);
    assert_eq!(q.expr(), s.expr());
    let m = (s.clone() * d.clone()).modulo(&d);
    assert_eq!(m.as_const(), Some(0));
    let e = Expr::parse("Min(s, 0) + Max(d, 1)").unwrap();
    assert_eq!(env.simplify(&e), Expr::parse("d").unwrap());
    assert_eq!(env.guards().len(), 1);
}

#[test]
fn case_splits_decide_relational_max_min() {
    let env = ShapeEnv::default();
    let a = env.create_symbol("a", 4, SymbolSpec::default()).unwrap();
    let b = env.create_symbol("b", 7, SymbolSpec::default()).unwrap();
    for (cond, want) in [
        ("Max(a, b) >= a", Some(true)),
        ("Min(a, b) <= b", Some(true)),
        ("Max(a, b) + Min(a, b) == a + b", Some(true)),
        ("Max(a, b) < a", Some(false)),
        ("Max(a, b) == a", None),
        ("Max(a + 1, b) > Min(a, b)", Some(true)),
    ] {
        assert_eq!(
            env.statically_known(&BoolExpr::parse(cond).unwrap()),
            want,
            "{cond}"
        );
    }
    // Through SymInt: deciding records nothing.
    let m = Int::max(&a, &b);
    assert!(m.sym_ge(&a).guard(|| "x".into()).unwrap());
    assert!(env.guards().is_empty());
    let _ = (&a, &b);
}

#[test]
fn simplifier_regressions() {
    use symstride::sym::{simplify, SymbolRanges};
    let sizes = SymbolRanges::new()
        .with("s", 1, None)
        .with("t", 1, None)
        .with("a", 0, None)
        .with("b", 1, None);
    let e = |x: &str| Expr::parse(x).unwrap();
    for (input, want) in [
        ("Max(s, 1)", "s"),
        ("Min(a, 0)", "0"),
        ("Max(s*t, 1)", "s*t"),
        ("FloorDiv(s*t, s)", "t"),
        ("Mod(s*t, t)", "0"),
        ("FloorDiv(FloorDiv(a, 2), 3)", "FloorDiv(a, 6)"),
        ("b*FloorDiv(a, b) + Mod(a, b)", "a"),
        ("Max(s, 1)*Max(t, 1) - t*s", "0"),
        ("Max(a, 1)", "Max(a, 1)"),
    ] {
        assert_eq!(simplify(&e(input), &sizes), e(want), "{input}");
    }
    // Through a ShapeEnv: decided by the e-graph fallback, nothing recorded.
    let env = ShapeEnv::default();
    let _s = env.create_symbol("s", 3, spec_min(1)).unwrap();
    let _t = env.create_symbol("t", 5, SymbolSpec::default()).unwrap();
    let _a = env.create_symbol("a", 7, SymbolSpec::default()).unwrap();
    for cond in [
        "FloorDiv(t*s, s) == t",
        "s*FloorDiv(a, s) + Mod(a, s) == a",
        "Mod(a*s, s) == 0",
    ] {
        let c = BoolExpr::parse(cond).unwrap();
        assert_eq!(env.statically_known(&c), Some(true), "{cond}");
    }
    assert_eq!(
        env.statically_known(&BoolExpr::parse("FloorDiv(t*a, a) == t").unwrap()),
        None
    );
    assert!(env.guards().is_empty());
}

mod props {
    use super::*;
    use num_bigint::BigInt;
    use num_integer::Integer;
    use num_traits::{ToPrimitive, Zero};
    use proptest::prelude::*;
    use symstride::sym::{simplify, Guard, SymBool, SymbolRanges};

    const NSYM: usize = 3;

    #[derive(Clone, Debug)]
    enum Ast {
        Sym(usize),
        Const(i64),
        Add(Box<Ast>, Box<Ast>),
        Sub(Box<Ast>, Box<Ast>),
        Mul(Box<Ast>, Box<Ast>),
        Div(Box<Ast>, Box<Ast>),
        Mod(Box<Ast>, Box<Ast>),
        Max(Box<Ast>, Box<Ast>),
        Min(Box<Ast>, Box<Ast>),
    }

    #[derive(Clone, Debug)]
    enum Cond {
        Cmp(u8, Ast, Ast),
        And(Box<Cond>, Box<Cond>),
        Or(Box<Cond>, Box<Cond>),
        Not(Box<Cond>),
    }

    fn ast() -> impl Strategy<Value = Ast> {
        let leaf = prop_oneof![
            (0..NSYM).prop_map(Ast::Sym),
            (-3i64..=5).prop_map(Ast::Const)
        ];
        leaf.prop_recursive(4, 20, 2, |inner| {
            let pair = (inner.clone(), inner.clone());
            prop_oneof![
                3 => pair.clone().prop_map(|(a, b)| Ast::Add(Box::new(a), Box::new(b))),
                2 => pair.clone().prop_map(|(a, b)| Ast::Sub(Box::new(a), Box::new(b))),
                3 => pair.clone().prop_map(|(a, b)| Ast::Mul(Box::new(a), Box::new(b))),
                1 => pair.clone().prop_map(|(a, b)| Ast::Div(Box::new(a), Box::new(b))),
                1 => pair.clone().prop_map(|(a, b)| Ast::Mod(Box::new(a), Box::new(b))),
                1 => pair.clone().prop_map(|(a, b)| Ast::Max(Box::new(a), Box::new(b))),
                1 => pair.prop_map(|(a, b)| Ast::Min(Box::new(a), Box::new(b))),
            ]
        })
    }

    fn cond() -> impl Strategy<Value = Cond> {
        let leaf = (0u8..6, ast(), ast()).prop_map(|(o, a, b)| Cond::Cmp(o, a, b));
        leaf.prop_recursive(2, 4, 2, |inner| {
            prop_oneof![
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| Cond::And(Box::new(a), Box::new(b))),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| Cond::Or(Box::new(a), Box::new(b))),
                inner.prop_map(|a| Cond::Not(Box::new(a))),
            ]
        })
    }

    fn name(i: usize) -> String {
        format!("s{i}")
    }

    /// Reference semantics, independent of the canonical form (None: division by zero).
    fn reference(a: &Ast, v: &[i64]) -> Option<BigInt> {
        Some(match a {
            Ast::Sym(i) => BigInt::from(v[*i]),
            Ast::Const(c) => BigInt::from(*c),
            Ast::Add(x, y) => reference(x, v)? + reference(y, v)?,
            Ast::Sub(x, y) => reference(x, v)? - reference(y, v)?,
            Ast::Mul(x, y) => reference(x, v)? * reference(y, v)?,
            Ast::Div(x, y) | Ast::Mod(x, y) => {
                let (p, q) = (reference(x, v)?, reference(y, v)?);
                if q.is_zero() {
                    return None;
                }
                if matches!(a, Ast::Div(..)) {
                    p.div_floor(&q)
                } else {
                    p.mod_floor(&q)
                }
            }
            Ast::Max(x, y) => reference(x, v)?.max(reference(y, v)?),
            Ast::Min(x, y) => reference(x, v)?.min(reference(y, v)?),
        })
    }

    fn reference_cond(c: &Cond, v: &[i64]) -> Option<bool> {
        Some(match c {
            Cond::Cmp(o, a, b) => {
                let (x, y) = (reference(a, v)?, reference(b, v)?);
                match o {
                    0 => x == y,
                    1 => x != y,
                    2 => x < y,
                    3 => x <= y,
                    4 => x > y,
                    _ => x >= y,
                }
            }
            // Strict (non-short-circuit) so an undefined operand makes the whole undefined.
            Cond::And(a, b) => reference_cond(a, v)? & reference_cond(b, v)?,
            Cond::Or(a, b) => reference_cond(a, v)? | reference_cond(b, v)?,
            Cond::Not(a) => !reference_cond(a, v)?,
        })
    }

    fn build(a: &Ast) -> Expr {
        match a {
            Ast::Sym(i) => Expr::symbol(&name(*i)),
            Ast::Const(c) => Expr::constant(*c),
            Ast::Add(x, y) => build(x) + build(y),
            Ast::Sub(x, y) => build(x) - build(y),
            Ast::Mul(x, y) => build(x) * build(y),
            Ast::Div(x, y) => build(x).floor_div(&build(y)),
            Ast::Mod(x, y) => build(x).modulo(&build(y)),
            Ast::Max(x, y) => build(x).max(&build(y)),
            Ast::Min(x, y) => build(x).min(&build(y)),
        }
    }

    fn build_cond(c: &Cond) -> BoolExpr {
        match c {
            Cond::Cmp(o, a, b) => {
                let (x, y) = (build(a), build(b));
                match o {
                    0 => BoolExpr::eq(&x, &y),
                    1 => BoolExpr::ne(&x, &y),
                    2 => BoolExpr::lt(&x, &y),
                    3 => BoolExpr::le(&x, &y),
                    4 => BoolExpr::gt(&x, &y),
                    _ => BoolExpr::ge(&x, &y),
                }
            }
            Cond::And(a, b) => build_cond(a).and(&build_cond(b)),
            Cond::Or(a, b) => build_cond(a).or(&build_cond(b)),
            Cond::Not(a) => build_cond(a).not(),
        }
    }

    fn sym_build(a: &Ast, s: &[SymInt]) -> SymInt {
        match a {
            Ast::Sym(i) => s[*i].clone(),
            Ast::Const(c) => SymInt::constant(*c),
            Ast::Add(x, y) => sym_build(x, s) + sym_build(y, s),
            Ast::Sub(x, y) => sym_build(x, s) - sym_build(y, s),
            Ast::Mul(x, y) => sym_build(x, s) * sym_build(y, s),
            Ast::Div(x, y) => sym_build(x, s).floor_div(&sym_build(y, s)),
            Ast::Mod(x, y) => sym_build(x, s).modulo(&sym_build(y, s)),
            Ast::Max(x, y) => Int::max(&sym_build(x, s), &sym_build(y, s)),
            Ast::Min(x, y) => Int::min(&sym_build(x, s), &sym_build(y, s)),
        }
    }

    fn sym_cond(c: &Cond, s: &[SymInt]) -> SymBool {
        match c {
            Cond::Cmp(o, a, b) => {
                let (x, y) = (sym_build(a, s), sym_build(b, s));
                match o {
                    0 => x.sym_eq(&y),
                    1 => x.sym_ne(&y),
                    2 => x.sym_lt(&y),
                    3 => x.sym_le(&y),
                    4 => x.sym_gt(&y),
                    _ => x.sym_ge(&y),
                }
            }
            Cond::And(a, b) => sym_cond(a, s).and(&sym_cond(b, s)),
            Cond::Or(a, b) => sym_cond(a, s).or(&sym_cond(b, s)),
            Cond::Not(a) => sym_cond(a, s).not(),
        }
    }

    fn bind(v: &[i64]) -> Bindings {
        Bindings::from_pairs(v.iter().enumerate().map(|(i, x)| (name(i), *x)))
    }

    fn interesting_i64() -> impl Strategy<Value = i64> {
        prop_oneof![
            4 => -6i64..=12,
            1 => Just(i64::MAX),
            1 => Just(i64::MIN),
            1 => Just(i64::MAX / 2 + 1),
            1 => Just(1i64 << 32),
            1 => Just(-(1i64 << 31)),
            1 => Just(3_037_000_500i64),
            1 => any::<i64>(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn canonical_form_evaluates_like_the_reference(a in ast(), vals in prop::collection::vec(interesting_i64(), NSYM)) {
            let e = build(&a);
            if let Some(r) = reference(&a, &vals) {
                match r.to_i64() {
                    Some(v) => prop_assert_eq!(e.eval(&bind(&vals)), Ok(v), "{}", e),
                    None => prop_assert!(matches!(e.eval(&bind(&vals)), Err(Error::Overflow { .. })), "{}", e),
                }
                prop_assert_eq!(e.eval_big(&bind(&vals)).ok(), Some(r));
            }
        }

        #[test]
        fn print_parse_round_trips(a in ast(), c in cond()) {
            let e = build(&a);
            let printed = e.to_string();
            let back = Expr::parse(&printed).unwrap();
            prop_assert_eq!(&back, &e, "{}", printed);
            prop_assert_eq!(back.to_string(), printed);
            let b = build_cond(&c);
            let printed = b.to_string();
            let back = BoolExpr::parse(&printed).unwrap();
            prop_assert_eq!(&back, &b, "{}", printed);
        }

        #[test]
        fn canonical_conditions_evaluate_like_the_reference(c in cond(), vals in prop::collection::vec(-4i64..=9, NSYM)) {
            let b = build_cond(&c);
            if let Some(r) = reference_cond(&c, &vals) {
                prop_assert_eq!(b.eval(&bind(&vals)), Ok(r), "{}", b);
            }
        }

        #[test]
        fn simplified_form_evaluates_the_same(
            a in ast(),
            lows in prop::collection::vec(-2i64..=3, NSYM),
            offs in prop::collection::vec(prop::collection::vec(0i64..=7, NSYM), 12),
        ) {
            let e = build(&a);
            let mut r = SymbolRanges::new();
            for (i, lo) in lows.iter().enumerate() {
                r.set(&name(i), *lo, None);
            }
            let s = simplify(&e, &r);
            prop_assert!(s.node_count() <= e.node_count());
            for o in &offs {
                let vals: Vec<i64> = lows.iter().zip(o).map(|(l, d)| l + d).collect();
                if let Ok(v) = e.eval(&bind(&vals)) {
                    prop_assert_eq!(s.eval(&bind(&vals)), Ok(v), "{} simplified to {}", e, s);
                }
            }
        }

        #[test]
        fn static_decisions_and_guards_are_sound(
            conds in prop::collection::vec(cond(), 1..6),
            lows in prop::collection::vec(0i64..=2, NSYM),
            hints in prop::collection::vec(0i64..=6, NSYM),
            offs in prop::collection::vec(prop::collection::vec(0i64..=7, NSYM), 16),
        ) {
            let env = ShapeEnv::default();
            let syms: Vec<SymInt> = (0..NSYM)
                .map(|i| env.create_symbol(&name(i), lows[i] + hints[i], spec_min(lows[i])).unwrap())
                .collect();
            let hint_vals: Vec<i64> = (0..NSYM).map(|i| lows[i] + hints[i]).collect();
            let mut taken = Vec::new();
            for (k, c) in conds.iter().enumerate() {
                let sb = sym_cond(c, &syms);
                let known = sb.statically_known();
                match sb.guard(|| format!("cond {k}")) {
                    Ok(v) => {
                        if let Some(kv) = known {
                            prop_assert_eq!(kv, v);
                        }
                        if let Some(r) = reference_cond(c, &hint_vals) {
                            prop_assert_eq!(r, v, "branch disagrees with the hints: {}", sb);
                        }
                        taken.push((c.clone(), v));
                    }
                    Err(Error::DivisionByZero { .. }) => {}
                    Err(e) => prop_assert!(false, "unexpected error {e}"),
                }
            }
            let guards: Vec<Guard> = env.guards();
            let set = GuardSet::from(guards.clone());
            prop_assert_eq!(set.eval(&bind(&hint_vals)), Ok(GuardCheck::Pass), "guards fail at the hints: {:?}", guards);
            for o in &offs {
                let vals: Vec<i64> = lows.iter().zip(o).map(|(l, d)| l + d).collect();
                if set.eval(&bind(&vals)) != Ok(GuardCheck::Pass) {
                    continue;
                }
                for (c, v) in &taken {
                    if let Some(r) = reference_cond(c, &vals) {
                        prop_assert_eq!(r, *v, "guards {:?} admit {:?} but the branch differs", guards, vals);
                    }
                }
            }
        }

        #[test]
        fn compiled_guards_match_naive(
            conds in prop::collection::vec(cond(), 0..10),
            vals in prop::collection::vec(prop::collection::vec(interesting_i64(), NSYM), 8),
        ) {
            let set = GuardSet::from(
                conds.iter().map(|c| Guard { cond: build_cond(c), reason: String::new() }).collect::<Vec<_>>(),
            );
            let order: Vec<String> = (0..NSYM).map(name).collect();
            let compiled = set.compile(&order).unwrap();
            for v in &vals {
                prop_assert_eq!(compiled.eval(v), set.eval(&bind(v)).map(|r| r.failed()));
            }
        }
    }
}
