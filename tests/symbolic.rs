//! Integration tests of the symbolic layer: ShapeEnv, SymInt/SymBool through the Int/Bool
//! traits, guard recording/pruning, unbacked symbols, guard evaluation and serialization.

use symstride::sym::{
    Bindings, BoolExpr, Expr, GuardSet, ShapeEnv, ShapeEnvConfig, SymInt, SymbolSpec,
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
    let sizes: Vec<SymInt> = hints
        .iter()
        .enumerate()
        .map(|(i, h)| {
            env.create_symbol(&format!("s{i}"), *h, SymbolSpec::default())
                .unwrap()
        })
        .collect();
    let strides = contiguous_strides(&sizes);
    let sym_result = is_contiguous(&sizes, &strides).unwrap();
    let guards = env.guard_set();
    assert!(!guards.is_empty());
    // Every guard holds at the hints.
    let hb = env.hints();
    assert_eq!(guards.eval(&hb).unwrap(), None);
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
                    if guards.eval(&bind).unwrap().is_none() {
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
    assert_eq!(set.eval(&env.hints()).unwrap(), None);
    let fails = set
        .eval(&Bindings::from_pairs([("a", 4), ("b", 4)]))
        .unwrap();
    assert!(fails.is_some());
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
