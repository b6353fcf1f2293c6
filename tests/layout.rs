//! Layout semantics: the library against PyTorch's golden answers, and differential
//! property tests (branch-free == branchy, constructed layouts satisfy their predicates).

use proptest::prelude::*;
use serde_json::{json, Value};
use std::path::Path;
use symstride::golden::{self, Case};
use symstride::layout::{self, MemoryFormat, StrideMatch};
use symstride::Error;

fn golden_cases(file: &str) -> Vec<Case> {
    let dir = golden::find_golden_dir(Path::new(env!("CARGO_MANIFEST_DIR"))).expect(
        "golden directory shared/golden not found beside the repository (or set SYMSTRIDE_GOLDEN)",
    );
    golden::read_cases(&dir.join(file))
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
