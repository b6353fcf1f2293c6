//! Layout semantics: the library against PyTorch's golden answers, and differential
//! property tests (branch-free == branchy, constructed layouts satisfy their predicates).

use proptest::prelude::*;
use serde_json::{json, Value};
use symstride::golden::{self, Case};
use symstride::layout::{self, MemoryFormat, StrideMatch};
use symstride::Error;

fn golden_cases(file: &str) -> Vec<Case> {
    golden::read_cases(&symstride::testing::golden_path(file))
        .unwrap()
        .into_iter()
        .map(|l| {
            l.case
                .unwrap_or_else(|e| panic!("{file}:{}: {e}", l.number))
        })
        .collect()
}

/// Every layout case, key by key, through the public library API (the concrete path).
#[test]
fn layout_golden_cases_match_pytorch() {
    let cases = golden_cases("layout.jsonl");
    assert_eq!(cases.len(), 3000);
    for case in cases {
        let Case::Layout(c) = case else {
            panic!("non-layout case in layout.jsonl")
        };
        let (s, t) = (&c.sizes[..], &c.strides[..]);
        let e = |k: &str| c.expect.get(k).cloned().unwrap_or(Value::Null);
        let ctx = format!("sizes {s:?} strides {t:?}");
        assert_eq!(
            json!(layout::is_contiguous(s, t).unwrap()),
            e("is_contiguous"),
            "{ctx}"
        );
        if s.len() == 4 {
            assert_eq!(
                json!(layout::is_channels_last_contiguous_2d(s, t).unwrap()),
                e("is_channels_last_contiguous"),
                "{ctx}"
            );
            assert_eq!(
                json!(layout::channels_last_strides_2d(s).unwrap()),
                e("channels_last_strides"),
                "{ctx}"
            );
        }
        if s.len() == 5 {
            assert_eq!(
                json!(layout::is_channels_last_contiguous_3d(s, t).unwrap()),
                e("is_channels_last_3d_contiguous"),
                "{ctx}"
            );
        }
        assert_eq!(
            json!(layout::is_non_overlapping_and_dense(s, t).unwrap()),
            e("is_non_overlapping_and_dense"),
            "{ctx}"
        );
        let f = layout::suggest_memory_format(s, t, StrideMatch::Like).unwrap();
        assert_eq!(json!(f.name()), e("suggest_memory_format"), "{ctx}");
        assert_eq!(
            json!(layout::empty_like_strides(s, t).unwrap()),
            e("empty_like_strides"),
            "{ctx}"
        );
        assert_eq!(
            json!(layout::contiguous_strides(s)),
            e("contiguous_strides"),
            "{ctx}"
        );
        // The branch-free forms agree with PyTorch too.
        assert_eq!(
            json!(layout::contiguity_expr(s, t).unwrap()),
            e("is_contiguous"),
            "{ctx}"
        );
        assert_eq!(
            json!(layout::non_overlapping_and_dense_expr(s, t).unwrap()),
            e("is_non_overlapping_and_dense"),
            "{ctx}"
        );
    }
}

#[test]
fn broadcast_golden_cases_match_pytorch() {
    let cases = golden_cases("broadcast.jsonl");
    assert_eq!(cases.len(), 2000);
    for case in cases {
        let Case::Broadcast(c) = case else {
            panic!("non-broadcast case in broadcast.jsonl")
        };
        let shapes: Vec<&[i64]> = c.shapes.iter().map(|s| &s[..]).collect();
        let got = match layout::infer_size(&shapes) {
            Ok(sizes) => {
                // Every operand expands to the result.
                for s in &shapes {
                    let strides = layout::contiguous_strides(s);
                    layout::broadcast_strides(s, &strides, &sizes).unwrap();
                }
                json!({ "sizes": sizes })
            }
            Err(Error::Broadcast { .. }) => json!({"error": "broadcast"}),
            Err(e) => panic!("{:?}: unexpected error {e}", c.shapes),
        };
        assert_eq!(got, Value::Object(c.expect.clone()), "{:?}", c.shapes);
    }
}

/// Random layouts biased towards the interesting ones: sizes 0..=4 (many 0/1), strides
/// either arbitrary small integers or a dense permutation with a few dims perturbed.
fn layouts() -> impl Strategy<Value = (Vec<i64>, Vec<i64>)> {
    (0usize..=6)
        .prop_flat_map(|rank| {
            (
                prop::collection::vec(prop_oneof![Just(0i64), Just(1), 2i64..=4], rank),
                prop::collection::vec(-1i64..=12, rank),
                Just((0..rank).collect::<Vec<_>>()).prop_shuffle(),
                prop::collection::vec(prop::option::weighted(0.15, -1i64..=12), rank),
                any::<bool>(),
            )
        })
        .prop_map(|(sizes, random, perm, tweaks, dense)| {
            if !dense {
                return (sizes, random);
            }
            let mut strides = vec![0; sizes.len()];
            let mut cur = 1;
            for &d in &perm {
                strides[d] = cur;
                cur *= sizes[d].max(1);
            }
            for (s, t) in strides.iter_mut().zip(tweaks) {
                if let Some(t) = t {
                    *s = t;
                }
            }
            (sizes, strides)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn branch_free_equals_branchy((s, t) in layouts()) {
        prop_assert_eq!(layout::contiguity_expr(&s, &t).unwrap(), layout::is_contiguous(&s, &t).unwrap());
        prop_assert_eq!(
            layout::channels_last_contiguity_expr_2d(&s, &t).unwrap(),
            layout::is_channels_last_contiguous_2d(&s, &t).unwrap()
        );
        prop_assert_eq!(
            layout::channels_last_contiguity_expr_3d(&s, &t).unwrap(),
            layout::is_channels_last_contiguous_3d(&s, &t).unwrap()
        );
        prop_assert_eq!(
            layout::non_overlapping_and_dense_expr(&s, &t).unwrap(),
            layout::is_non_overlapping_and_dense(&s, &t).unwrap()
        );
        // On the concrete path "definitely" is just the value.
        prop_assert_eq!(layout::is_contiguous_or_false(&s, &t).unwrap(), layout::is_contiguous(&s, &t).unwrap());
        prop_assert_eq!(
            layout::is_channels_last_contiguous_2d_or_false(&s, &t).unwrap(),
            layout::is_channels_last_contiguous_2d(&s, &t).unwrap()
        );
        prop_assert_eq!(
            layout::is_channels_last_contiguous_3d_or_false(&s, &t).unwrap(),
            layout::is_channels_last_contiguous_3d(&s, &t).unwrap()
        );
        prop_assert_eq!(
            layout::is_non_overlapping_and_dense_or_false(&s, &t).unwrap(),
            layout::is_non_overlapping_and_dense(&s, &t).unwrap()
        );
    }

    #[test]
    fn constructed_layouts_satisfy_their_predicates((s, t) in layouts()) {
        let c = layout::contiguous_strides(&s);
        prop_assert!(layout::is_contiguous(&s, &c).unwrap());
        prop_assert!(layout::is_non_overlapping_and_dense(&s, &c).unwrap());
        if s.len() == 4 {
            let cl = layout::channels_last_strides_2d(&s).unwrap();
            prop_assert!(layout::is_channels_last_contiguous_2d(&s, &cl).unwrap());
            prop_assert!(layout::is_non_overlapping_and_dense(&s, &cl).unwrap());
            prop_assert_eq!(layout::strides_for_format(&s, MemoryFormat::ChannelsLast).unwrap(), cl);
        }
        if s.len() == 5 {
            let cl = layout::channels_last_strides_3d(&s).unwrap();
            prop_assert!(layout::is_channels_last_contiguous_3d(&s, &cl).unwrap());
            prop_assert!(layout::is_non_overlapping_and_dense(&s, &cl).unwrap());
        }
        // empty_like always allocates a dense tensor, and keeps dense strides of size >= 2
        // dimensions exactly.
        let e = layout::empty_like_strides(&s, &t).unwrap();
        prop_assert!(layout::is_non_overlapping_and_dense(&s, &e).unwrap());
        let d = layout::infer_dense_strides(&s, &t).unwrap();
        prop_assert!(layout::is_non_overlapping_and_dense(&s, &d).unwrap());
        if s.iter().all(|&n| n >= 2) && layout::is_non_overlapping_and_dense(&s, &t).unwrap() {
            prop_assert_eq!(&d, &t);
        }
        // Exact channels-last implies channels-last-like.
        let exact = layout::suggest_memory_format(&s, &t, StrideMatch::Exact).unwrap();
        if exact != MemoryFormat::Contiguous {
            prop_assert_eq!(exact, layout::suggest_memory_format(&s, &t, StrideMatch::Like).unwrap());
        }
    }

    #[test]
    fn broadcasting_is_symmetric_and_expandable(
        a in prop::collection::vec(prop_oneof![Just(0i64), Just(1), 2i64..=3], 0..=4),
        b in prop::collection::vec(prop_oneof![Just(0i64), Just(1), 2i64..=3], 0..=4),
    ) {
        let ab = layout::infer_size(&[&a[..], &b[..]]);
        let ba = layout::infer_size(&[&b[..], &a[..]]);
        match (ab, ba) {
            (Ok(x), Ok(y)) => {
                prop_assert_eq!(&x, &y);
                for s in [&a, &b] {
                    let strides = layout::contiguous_strides(s);
                    let e = layout::broadcast_strides(s, &strides, &x).unwrap();
                    for (d, st) in e.iter().enumerate() {
                        let off = d as isize - (x.len() - s.len()) as isize;
                        if off < 0 || (s[off as usize] == 1 && x[d] != 1) {
                            prop_assert_eq!(*st, 0);
                        } else {
                            prop_assert_eq!(*st, strides[off as usize]);
                        }
                    }
                }
            }
            (Err(Error::Broadcast { .. }), Err(Error::Broadcast { .. })) => {}
            other => prop_assert!(false, "asymmetric result {:?}", other),
        }
    }
}

#[test]
fn invalid_layouts_are_errors_not_panics() {
    let bad_rank = layout::is_contiguous(&[2i64, 3], &[1]).unwrap_err();
    assert!(matches!(bad_rank, Error::InvalidLayout { .. }));
    let neg = layout::is_non_overlapping_and_dense(&[2i64, -3], &[1, 2]).unwrap_err();
    assert!(neg.to_string().contains("-3"), "{neg}");
    let big = i64::MAX / 2;
    assert!(matches!(
        layout::contiguity_expr(&[4i64], &[big]),
        Err(Error::Overflow { .. })
    ));
    assert!(matches!(
        layout::try_contiguous_strides(&[big, 4]),
        Err(Error::Overflow { .. })
    ));
    let shapes: [&[i64]; 2] = [&[2], &[-1]];
    assert!(matches!(
        layout::infer_size(&shapes),
        Err(Error::InvalidLayout { .. })
    ));
}

// ------------------------------------------------------------------------------------
// Symbolic path
// ------------------------------------------------------------------------------------

mod symbolic {
    use super::*;
    use symstride::sym::{Bindings, ShapeEnv, SymBool, SymInt, SymbolSpec};
    use symstride::{Bool, Int};

    fn spec(min: i64) -> SymbolSpec {
        SymbolSpec {
            min,
            ..Default::default()
        }
    }

    fn syms(env: &ShapeEnv, prefix: &str, hints: &[i64], min: i64) -> Vec<SymInt> {
        env.create_symbols(prefix, hints, spec(min)).unwrap()
    }

    fn prod(v: &[&SymInt]) -> SymInt {
        v.iter()
            .fold(SymInt::constant(1), |acc, x| acc * (*x).clone())
    }

    #[test]
    fn simplifier_proves_contiguous_and_channels_last_layouts() {
        let env = ShapeEnv::default();
        let [a, b, c, d, e] =
            [2, 3, 4, 5, 6].map(|h| env.create_symbol(&format!("x{h}"), h, spec(0)).unwrap());
        let one = SymInt::constant(1);
        // Row-major [a, b, c] @ [b*c, c, 1].
        let s3 = [a.clone(), b.clone(), c.clone()];
        let t3 = [prod(&[&b, &c]), c.clone(), one.clone()];
        assert_eq!(
            layout::contiguity_expr(&s3, &t3)
                .unwrap()
                .statically_known(),
            Some(true)
        );
        assert_eq!(
            layout::non_overlapping_and_dense_expr(&s3, &t3)
                .unwrap()
                .statically_known(),
            Some(true)
        );
        assert!(layout::is_contiguous_or_false(&s3, &t3).unwrap());
        // Channels-last [n, c, h, w] @ [h*w*c, 1, w*c, c].
        let s4 = [a.clone(), b.clone(), c.clone(), d.clone()];
        let t4 = [prod(&[&c, &d, &b]), one.clone(), prod(&[&d, &b]), b.clone()];
        assert_eq!(
            layout::channels_last_contiguity_expr_2d(&s4, &t4)
                .unwrap()
                .statically_known(),
            Some(true)
        );
        assert_eq!(
            layout::non_overlapping_and_dense_expr(&s4, &t4)
                .unwrap()
                .statically_known(),
            Some(true)
        );
        let cl = layout::channels_last_strides_2d(&s4).unwrap();
        assert_eq!(
            layout::channels_last_contiguity_expr_2d(&s4, &cl)
                .unwrap()
                .statically_known(),
            Some(true)
        );
        assert!(layout::is_channels_last_contiguous_2d_or_false(&s4, &cl).unwrap());
        // Channels-last-3d [n, c, d, h, w] @ [d*h*w*c, 1, h*w*c, w*c, c].
        let s5 = [a.clone(), b.clone(), c.clone(), d.clone(), e.clone()];
        let cl3 = layout::channels_last_strides_3d(&s5).unwrap();
        assert_eq!(cl3[2].expr(), prod(&[&d, &e, &b]).expr());
        assert_eq!(
            layout::channels_last_contiguity_expr_3d(&s5, &cl3)
                .unwrap()
                .statically_known(),
            Some(true)
        );
        assert!(layout::is_channels_last_contiguous_3d_or_false(&s5, &cl3).unwrap());
        assert!(layout::is_non_overlapping_and_dense_or_false(&s5, &cl3).unwrap());
        // None of this needed a guard.
        assert!(env.guards().is_empty(), "{:?}", env.guards());
    }

    #[test]
    fn empty_strides_of_symbolic_sizes_are_proven_contiguous() {
        // torch.empty's strides are Max(size, 1) products: contiguous for every binding,
        // including sizes 0 (numel == 0) and, with sizes >= 1, because the Max folds.
        for min in [0, 1] {
            let env = ShapeEnv::default();
            let s = syms(&env, "n", &[2, 3, 4, 5], min);
            let t = layout::contiguous_strides(&s);
            assert_eq!(
                layout::contiguity_expr(&s, &t).unwrap().statically_known(),
                Some(true),
                "min {min}"
            );
            assert_eq!(
                layout::non_overlapping_and_dense_expr(&s, &t)
                    .unwrap()
                    .statically_known(),
                Some(true),
                "min {min}"
            );
            assert!(layout::is_contiguous_or_false(&s, &t).unwrap());
            assert!(env.guards().is_empty(), "{:?}", env.guards());
        }
    }

    #[test]
    fn or_false_variants_never_fail_on_unbacked_sizes() {
        let env = ShapeEnv::default();
        let u = env.create_unbacked("u0", 0).unwrap();
        let sizes = [u.clone(), SymInt::constant(2)];
        let strides = [SymInt::constant(5), SymInt::constant(1)];
        // Contiguous iff u0 is 0 or 1: undecidable.
        assert!(matches!(
            layout::is_contiguous(&sizes, &strides),
            Err(Error::DataDependent { .. })
        ));
        assert!(!layout::is_contiguous_or_false(&sizes, &strides).unwrap());
        assert!(!layout::is_non_overlapping_and_dense_or_false(&sizes, &strides).unwrap());
        // Decidable despite the unbacked size: contiguous for every u0.
        let strides = [SymInt::constant(2), SymInt::constant(1)];
        assert!(layout::is_contiguous_or_false(&sizes, &strides).unwrap());
        assert!(env.guards().is_empty(), "{:?}", env.guards());
    }

    /// A layout whose strides are expressions of its size symbols: dense in a random
    /// dimension order (`Max(size, 1)` products, as `empty` and `permute` make them), with
    /// some dimensions' strides replaced by free stride symbols.
    #[derive(Debug, Clone)]
    struct Structured {
        sizes: Vec<i64>,
        perm: Vec<usize>,
        /// `Some(hint)` for a free stride symbol.
        free: Vec<Option<i64>>,
        /// Further bindings: sizes, and values of the free stride symbols.
        bindings: Vec<(Vec<i64>, Vec<i64>)>,
    }

    fn structured() -> impl Strategy<Value = Structured> {
        (0usize..=5).prop_flat_map(|rank| {
            let size = || prop_oneof![Just(0i64), Just(1), 2i64..=4];
            (
                prop::collection::vec(size(), rank),
                Just((0..rank).collect::<Vec<_>>()).prop_shuffle(),
                prop::collection::vec(prop::option::weighted(0.25, -1i64..=12), rank),
                prop::collection::vec(
                    (
                        prop::collection::vec(size(), rank),
                        prop::collection::vec(-1i64..=12, rank),
                    ),
                    6,
                ),
            )
                .prop_map(|(sizes, perm, free, bindings)| Structured {
                    sizes,
                    perm,
                    free,
                    bindings,
                })
        })
    }

    impl Structured {
        /// Symbols in a fresh environment, and the symbolic strides.
        fn lift(&self) -> (ShapeEnv, Vec<SymInt>, Vec<SymInt>) {
            let env = ShapeEnv::default();
            let sizes = syms(&env, "s", &self.sizes, 0);
            let mut strides = vec![SymInt::constant(0); sizes.len()];
            let mut cur = SymInt::constant(1);
            for &d in &self.perm {
                strides[d] = cur.clone();
                cur = cur * Int::max(&sizes[d], &SymInt::constant(1));
            }
            for (d, f) in self.free.iter().enumerate() {
                if let Some(h) = f {
                    strides[d] = env
                        .create_symbol(&format!("t{d}"), *h, spec(i64::MIN))
                        .unwrap();
                }
            }
            (env, sizes, strides)
        }

        /// Every binding: the hints first, then the hints with every size >= 2 grown (same
        /// size classes, so most guards hold), then the generated ones.
        fn all_bindings(&self) -> Vec<Bindings> {
            let free: Vec<i64> = self.free.iter().map(|f| f.unwrap_or(0)).collect();
            let grown = |k: i64| -> Vec<i64> {
                self.sizes
                    .iter()
                    .map(|&n| if n >= 2 { n + k } else { n })
                    .collect()
            };
            let derived = [
                (self.sizes.clone(), free.clone()),
                (grown(1), free.clone()),
                (grown(3), free),
            ];
            derived
                .iter()
                .chain(&self.bindings)
                .map(|(s, t)| {
                    let mut b = Bindings::new();
                    for (d, v) in s.iter().enumerate() {
                        b.insert(&format!("s{d}"), *v);
                    }
                    for (d, f) in self.free.iter().enumerate() {
                        if f.is_some() {
                            b.insert(&format!("t{d}"), t[d]);
                        }
                    }
                    b
                })
                .collect()
        }
    }

    fn concrete(v: &[SymInt], b: &Bindings) -> Vec<i64> {
        v.iter().map(|x| x.eval(b).unwrap()).collect()
    }

    /// A traced answer: a bool, a memory format or strides (kept symbolic).
    #[derive(Debug)]
    enum Traced {
        Flag(bool),
        Format(MemoryFormat),
        Strides(Vec<SymInt>),
    }

    type Op = fn(&[SymInt], &[SymInt]) -> symstride::Result<Traced>;
    type ConcreteOp = fn(&[i64], &[i64]) -> symstride::Result<Traced>;
    type Predicate = fn(&[i64], &[i64]) -> symstride::Result<bool>;

    fn ops() -> Vec<(&'static str, Op, ConcreteOp)> {
        macro_rules! flag {
            ($name:literal, $f:path) => {
                (
                    $name,
                    |s, t| Ok(Traced::Flag($f(s, t)?)),
                    |s, t| Ok(Traced::Flag($f(s, t)?)),
                )
            };
        }
        vec![
            flag!("is_contiguous", layout::is_contiguous),
            flag!(
                "is_channels_last_contiguous_2d",
                layout::is_channels_last_contiguous_2d
            ),
            flag!(
                "is_channels_last_contiguous_3d",
                layout::is_channels_last_contiguous_3d
            ),
            flag!(
                "is_strides_like_channels_last_2d",
                layout::is_strides_like_channels_last_2d
            ),
            flag!(
                "is_strides_like_channels_last_3d",
                layout::is_strides_like_channels_last_3d
            ),
            flag!(
                "is_non_overlapping_and_dense",
                layout::is_non_overlapping_and_dense
            ),
            (
                "suggest_memory_format(like)",
                |s, t| {
                    Ok(Traced::Format(layout::suggest_memory_format(
                        s,
                        t,
                        StrideMatch::Like,
                    )?))
                },
                |s, t| {
                    Ok(Traced::Format(layout::suggest_memory_format(
                        s,
                        t,
                        StrideMatch::Like,
                    )?))
                },
            ),
            (
                "suggest_memory_format(exact)",
                |s, t| {
                    Ok(Traced::Format(layout::suggest_memory_format(
                        s,
                        t,
                        StrideMatch::Exact,
                    )?))
                },
                |s, t| {
                    Ok(Traced::Format(layout::suggest_memory_format(
                        s,
                        t,
                        StrideMatch::Exact,
                    )?))
                },
            ),
            (
                "empty_like_strides",
                |s, t| Ok(Traced::Strides(layout::empty_like_strides(s, t)?)),
                |s, t| {
                    Ok(Traced::Strides(
                        layout::empty_like_strides(s, t)?
                            .into_iter()
                            .map(SymInt::constant)
                            .collect(),
                    ))
                },
            ),
            (
                "contiguous_strides",
                |s, _| Ok(Traced::Strides(layout::try_contiguous_strides(s)?)),
                |s, _| {
                    Ok(Traced::Strides(
                        layout::try_contiguous_strides(s)?
                            .into_iter()
                            .map(SymInt::constant)
                            .collect(),
                    ))
                },
            ),
        ]
    }

    /// Same answer, a symbolic one evaluated at `b`.
    fn same(sym: &Traced, conc: &Traced, b: &Bindings) -> bool {
        match (sym, conc) {
            (Traced::Flag(x), Traced::Flag(y)) => x == y,
            (Traced::Format(x), Traced::Format(y)) => x == y,
            (Traced::Strides(x), Traced::Strides(y)) => concrete(x, b) == concrete(y, b),
            _ => false,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]

        /// Traced once at the hints: the answer equals the concrete one at the hints, every
        /// guard holds there, and at any other binding where the guards hold the concrete
        /// answer is the traced one (the guards are sound).
        #[test]
        fn traced_answers_are_right_wherever_their_guards_hold(l in structured()) {
            let bindings = l.all_bindings();
            for (name, sym_op, conc_op) in ops() {
                let (env, s, t) = l.lift();
                let traced = sym_op(&s, &t).unwrap();
                let guards = env.guard_set();
                for (k, b) in bindings.iter().enumerate() {
                    if !guards.eval(b).unwrap().is_pass() {
                        prop_assert!(k > 0, "{name}: a guard fails at the hints: {guards:?}");
                        continue;
                    }
                    let (cs, ct) = (concrete(&s, b), concrete(&t, b));
                    if layout::check_layout("t", &cs, &ct).is_err() {
                        continue;
                    }
                    let expected = conc_op(&cs, &ct).unwrap();
                    prop_assert!(
                        same(&traced, &expected, b),
                        "{name}: traced {traced:?} but concrete {expected:?} at {cs:?} @ {ct:?} (guards {guards:?})"
                    );
                }
            }
        }

        /// The branch-free forms record nothing, and evaluated at any binding they equal the
        /// branchy predicate run on that binding's concrete values.
        #[test]
        fn branch_free_forms_evaluate_like_branchy(l in structured()) {
            let (env, s, t) = l.lift();
            let forms: Vec<(&str, SymBool, Predicate)> = vec![
                ("contiguity", layout::contiguity_expr(&s, &t).unwrap(), layout::is_contiguous),
                ("cl2d", layout::channels_last_contiguity_expr_2d(&s, &t).unwrap(), layout::is_channels_last_contiguous_2d),
                ("cl3d", layout::channels_last_contiguity_expr_3d(&s, &t).unwrap(), layout::is_channels_last_contiguous_3d),
                ("nod", layout::non_overlapping_and_dense_expr(&s, &t).unwrap(), layout::is_non_overlapping_and_dense),
            ];
            prop_assert!(env.guards().is_empty(), "{:?}", env.guards());
            for b in l.all_bindings() {
                let (cs, ct) = (concrete(&s, &b), concrete(&t, &b));
                for (name, form, branchy) in &forms {
                    prop_assert_eq!(form.eval(&b).unwrap(), branchy(&cs, &ct).unwrap(), "{} at {:?} @ {:?}", name, cs, ct);
                }
            }
        }

        /// Broadcasting symbolic shapes: the traced shape at the hints is the concrete one,
        /// and the guards are sound.
        #[test]
        fn traced_broadcast_is_sound(
            shapes in prop::collection::vec(prop::collection::vec(prop_oneof![Just(0i64), Just(1), 2i64..=3], 0..=3), 1..=3),
            other in prop::collection::vec(prop::collection::vec(prop_oneof![Just(0i64), Just(1), 2i64..=3], 3), 3),
        ) {
            let env = ShapeEnv::default();
            let lifted: Vec<Vec<SymInt>> =
                shapes.iter().enumerate().map(|(k, s)| syms(&env, &format!("x{k}_"), s, 0)).collect();
            let refs: Vec<&[SymInt]> = lifted.iter().map(|v| &v[..]).collect();
            let conc: Vec<&[i64]> = shapes.iter().map(|v| &v[..]).collect();
            let traced = layout::infer_size(&refs);
            let expected = layout::infer_size(&conc);
            let hints = env.hints();
            match (&traced, &expected) {
                (Ok(t), Ok(e)) => prop_assert_eq!(&concrete(t, &hints), e),
                (Err(Error::Broadcast { .. }), Err(Error::Broadcast { .. })) => {}
                _ => prop_assert!(false, "{:?} vs {:?}", traced, expected),
            }
            let Ok(traced) = traced else { return Ok(()) };
            let guards = env.guard_set();
            // Another binding of the same symbols.
            let mut b = Bindings::new();
            let mut shapes2 = shapes.clone();
            for (k, s) in shapes2.iter_mut().enumerate() {
                for (d, v) in s.iter_mut().enumerate() {
                    *v = other[k][d];
                    b.insert(&format!("x{k}_{d}"), *v);
                }
            }
            if guards.eval(&b).unwrap().is_pass() {
                let conc2: Vec<&[i64]> = shapes2.iter().map(|v| &v[..]).collect();
                prop_assert_eq!(concrete(&traced, &b), layout::infer_size(&conc2).unwrap());
            }
        }
    }
}
