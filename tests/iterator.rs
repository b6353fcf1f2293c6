//! Integration tests of the TensorIterator build: the plan against a naive multi-index walk,
//! fast setup against the general path, allocated outputs against density, and the public
//! error behaviour.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use symstride::iter::{IterOptions, Plan, TensorIteratorConfig, TensorSpec};
use symstride::Error;

/// Property-test case count: `default`, or `PROPTEST_CASES` when set (for deeper runs).
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One operand of a random case: sizes, strides, offset, element size.
#[derive(Clone, Debug)]
struct Op {
    sizes: Vec<i64>,
    strides: Vec<i64>,
    offset: i64,
    es: usize,
}

impl Op {
    fn spec(&self) -> TensorSpec<i64> {
        TensorSpec::new(self.sizes.clone(), self.strides.clone(), self.es).with_offset(self.offset)
    }
}

/// Dense strides for `sizes` laid out in `order` (fastest first).
fn dense_strides(sizes: &[i64], order: &[usize]) -> Vec<i64> {
    let mut strides = vec![0; sizes.len()];
    let mut next = 1;
    for &d in order {
        strides[d] = next;
        next *= sizes[d].max(1);
    }
    strides
}

/// Row-major multi-indices of `shape`.
fn multi_indices(shape: &[i64]) -> Vec<Vec<i64>> {
    let mut out = vec![vec![]];
    for &s in shape {
        let mut next = Vec::new();
        for prefix in &out {
            for i in 0..s {
                let mut p = prefix.clone();
                p.push(i);
                next.push(p);
            }
        }
        out = next;
    }
    out
}

/// Byte offset of element `idx` (an index into the broadcast shape) in an operand, with
/// numpy-style broadcasting of missing leading dims and size-1 dims.
fn naive_offset(sizes: &[i64], strides: &[i64], offset: i64, es: usize, idx: &[i64]) -> i64 {
    let lead = idx.len() - sizes.len();
    let mut off = offset;
    for (d, (&s, &st)) in sizes.iter().zip(strides).enumerate() {
        if s != 1 {
            off += idx[lead + d] * st;
        }
    }
    off * es as i64
}

/// The tuples a plan visits, sorted (a multiset).
fn plan_tuples(plan: &Plan<i64>) -> Vec<Vec<i64>> {
    let mut v = Vec::new();
    plan.for_each_byte_offsets(|p| v.push(p.to_vec()));
    v.sort();
    v
}

/// The tuples a naive walk of the broadcast shape visits: outputs (with the sizes/strides the
/// plan reports for them and the given offset) then inputs.
fn naive_tuples(plan: &Plan<i64>, outputs: &[Option<Op>], inputs: &[Op]) -> Vec<Vec<i64>> {
    let shape = &plan.broadcast_shape;
    let mut v = Vec::new();
    for idx in multi_indices(shape) {
        let mut t = Vec::new();
        for (i, out) in outputs.iter().enumerate() {
            let (offset, es) = out
                .as_ref()
                .map_or((0, plan.operands[i].element_size), |o| (o.offset, o.es));
            t.push(naive_offset(
                shape,
                &plan.output_strides[i],
                offset,
                es,
                &idx,
            ));
        }
        for op in inputs {
            t.push(naive_offset(&op.sizes, &op.strides, op.offset, op.es, &idx));
        }
        v.push(t);
    }
    v.sort();
    v
}

/// A random broadcast shape (rank 0..=4, sizes 0..=4 with 1 frequent).
fn shape_strategy() -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(
        prop_oneof![3 => Just(1i64), 6 => 2i64..=4, 1 => Just(0i64)],
        0..=4,
    )
}

/// An input that broadcasts to `shape`: a suffix of its dims, some reduced to 1, with either
/// a dense layout in a random order or arbitrary (possibly 0 or overlapping) strides.
fn input_strategy(shape: Vec<i64>) -> impl Strategy<Value = Op> {
    let n = shape.len();
    (
        0..=n,
        prop::collection::vec(any::<bool>(), n),
        Just((0..n).collect::<Vec<usize>>()).prop_shuffle(),
        prop::collection::vec(0i64..7, n),
        any::<bool>(),
        0i64..5,
        prop_oneof![Just(4usize), Just(8usize), Just(2usize)],
    )
        .prop_map(move |(rank, ones, order, raw, dense, offset, es)| {
            let sizes: Vec<i64> = shape[n - rank..]
                .iter()
                .zip(&ones[n - rank..])
                .map(|(&s, &one)| if one { 1 } else { s })
                .collect();
            let strides = if dense {
                let ord: Vec<usize> = order
                    .iter()
                    .filter(|&&d| d >= n - rank)
                    .map(|&d| d - (n - rank))
                    .collect();
                dense_strides(&sizes, &ord)
            } else {
                raw[n - rank..].to_vec()
            };
            Op {
                sizes,
                strides,
                offset,
                es,
            }
        })
}

/// A case: a broadcast shape, 1..=3 inputs, and optionally a given dense output, either of
/// that shape or of a shape with one size changed (which the build resizes).
fn case_strategy() -> impl Strategy<Value = (Vec<Op>, Option<Op>)> {
    shape_strategy().prop_flat_map(|shape| {
        let n = shape.len();
        (
            prop::collection::vec(input_strategy(shape.clone()), 1..=3),
            prop::option::of((
                Just((0..n).collect::<Vec<usize>>()).prop_shuffle(),
                0i64..3,
                prop::option::weighted(0.3, 0..n.max(1)),
            )),
        )
            .prop_map(move |(inputs, out)| {
                let out = out.map(|(order, offset, bump)| {
                    let mut sizes = shape.clone();
                    if let Some(d) = bump.filter(|&d| d < n) {
                        sizes[d] += 1;
                    }
                    Op {
                        strides: dense_strides(&sizes, &order),
                        sizes,
                        offset,
                        es: 4,
                    }
                });
                (inputs, out)
            })
    })
}

fn config_for(inputs: &[Op], out: &Option<Op>, options: IterOptions) -> TensorIteratorConfig<i64> {
    let mut c = TensorIteratorConfig::new().options(options);
    c = match out {
        Some(o) => c.add_output(o.spec()),
        None => c.add_undefined_output(4),
    };
    for op in inputs {
        c = c.add_input(op.spec());
    }
    c
}

/// Broadcasting `inputs` may fail; the cases whose inputs don't broadcast are skipped there.
fn broadcasts(inputs: &[Op]) -> bool {
    let nd = inputs.iter().map(|o| o.sizes.len()).max().unwrap_or(0);
    (0..nd).all(|d| {
        let sizes: Vec<i64> = inputs
            .iter()
            .filter_map(|o| o.sizes.len().checked_sub(nd - d).map(|i| o.sizes[i]))
            .filter(|&s| s != 1)
            .collect();
        sizes.windows(2).all(|w| w[0] == w[1])
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    /// The coalesced plan visits exactly the (output, inputs) offset tuples of a naive walk of
    /// the broadcast shape, on the fast path and when forced onto the general path.
    #[test]
    fn plan_visits_same_tuples_as_naive_walk((inputs, out) in case_strategy()) {
        prop_assume!(broadcasts(&inputs));
        for allow_fast_setup in [true, false] {
            let options = IterOptions { allow_fast_setup, check_mem_overlap: false, ..Default::default() };
            let plan = config_for(&inputs, &out, options).build().unwrap();
            prop_assert_eq!(plan.operands.len(), inputs.len() + 1);
            prop_assert_eq!(plan.shape.len(), plan.operands[0].byte_strides.len());
            let numel: i64 = plan.broadcast_shape.iter().product();
            prop_assert_eq!(plan.numel(), numel);
            prop_assert_eq!(plan_tuples(&plan), naive_tuples(&plan, std::slice::from_ref(&out), &inputs));
        }
    }

    /// An allocated output is dense: its elements occupy exactly bytes 0, 4, ..., 4*(numel-1),
    /// whatever the inputs' layouts, and it is contiguous when the permutation is the reversal.
    #[test]
    fn allocated_output_is_dense((inputs, _out) in case_strategy()) {
        prop_assume!(broadcasts(&inputs));
        let plan = config_for(&inputs, &None, IterOptions::default()).build().unwrap();
        let mut offs: Vec<i64> = plan_tuples(&plan).iter().map(|t| t[0]).collect();
        offs.sort();
        let numel = plan.numel();
        prop_assert_eq!(offs, (0..numel).map(|i| 4 * i).collect::<Vec<_>>());
        prop_assert_eq!(plan.output_strides[0].len(), plan.broadcast_shape.len());
    }

    /// With a single dense input (any permutation) and no size-1 or size-0 dims, the output
    /// copies the input's strides (PyTorch's `empty_like` semantics).
    #[test]
    fn single_dense_input_layout_is_preserved(
        sizes in prop::collection::vec(2i64..5, 0..=4),
        seed in any::<u64>(),
    ) {
        let n = sizes.len();
        let mut order: Vec<usize> = (0..n).collect();
        // a deterministic shuffle from the seed
        let mut rng = symstride::testing::Lcg::new(seed);
        for i in (1..n).rev() {
            order.swap(i, rng.index(i + 1));
        }
        let strides = dense_strides(&sizes, &order);
        let input = Op { sizes: sizes.clone(), strides: strides.clone(), offset: 0, es: 4 };
        for allow_fast_setup in [true, false] {
            let opts = IterOptions { allow_fast_setup, ..Default::default() };
            let plan = config_for(std::slice::from_ref(&input), &None, opts).build().unwrap();
            prop_assert_eq!(&plan.output_strides[0], &strides);
            prop_assert!(plan.shape.len() <= 1, "a dense single input coalesces to one dim");
        }
    }

    /// Coalescing never changes what is visited: a build with coalescing off visits the same
    /// tuples, and coalescing never adds dimensions.
    #[test]
    fn coalescing_preserves_tuples((inputs, out) in case_strategy()) {
        prop_assume!(broadcasts(&inputs));
        let base = IterOptions { allow_fast_setup: false, check_mem_overlap: false, ..Default::default() };
        let with = config_for(&inputs, &out, base.clone()).build().unwrap();
        let without = config_for(&inputs, &out, IterOptions { coalesce_dimensions: false, ..base }).build().unwrap();
        prop_assert!(with.ndim() <= without.ndim());
        prop_assert_eq!(without.ndim(), without.broadcast_shape.len());
        prop_assert_eq!(plan_tuples(&with), plan_tuples(&without));
        prop_assert_eq!(&with.output_strides, &without.output_strides);
    }
}

#[test]
fn left_operand_wins_between_contiguous_and_channels_last() {
    let sizes = vec![2i64, 3, 4, 5];
    let cl = dense_strides(&sizes, &[1, 3, 2, 0]);
    let ct = dense_strides(&sizes, &[3, 2, 1, 0]);
    let out = |a: &[i64], b: &[i64]| {
        TensorIteratorConfig::new()
            .add_undefined_output(4)
            .add_input(TensorSpec::new(sizes.clone(), a.to_vec(), 4))
            .add_input(TensorSpec::new(sizes.clone(), b.to_vec(), 4))
            .build()
            .unwrap()
            .output_strides
            .remove(0)
    };
    assert_eq!(out(&cl, &ct), cl);
    assert_eq!(out(&ct, &cl), ct);
    // A broadcast operand with one non-trivial dimension (a per-channel bias) does not disturb
    // the full-size channels-last one, whichever side it is on.
    let small = TensorSpec::new(vec![3i64, 1, 1], vec![1, 1, 1], 4);
    for first_is_small in [false, true] {
        let big = TensorSpec::new(sizes.clone(), cl.clone(), 4);
        let (a, b) = if first_is_small {
            (small.clone(), big)
        } else {
            (big, small.clone())
        };
        let plan = TensorIteratorConfig::new()
            .add_undefined_output(4)
            .add_input(a)
            .add_input(b)
            .build()
            .unwrap();
        assert_eq!(
            plan.output_strides[0], cl,
            "first_is_small={first_is_small}"
        );
    }
}

#[test]
fn broadcast_failure_is_a_broadcast_error() {
    let err = TensorIteratorConfig::<i64>::new()
        .add_undefined_output(4)
        .add_input(TensorSpec::new(vec![2, 3], vec![3, 1], 4))
        .add_input(TensorSpec::new(vec![4], vec![1], 4))
        .build()
        .unwrap_err();
    assert!(matches!(err, Error::Broadcast { dim: 1, .. }), "{err}");
}

#[test]
fn in_place_output_aliasing_an_input_is_allowed_and_not_resized() {
    let t = TensorSpec::new(vec![3i64, 4], vec![1, 3], 4).with_storage(7, 48);
    let other = TensorSpec::new(vec![4i64], vec![1], 4).with_storage(8, 16);
    let plan = TensorIteratorConfig::new()
        .add_output(t.clone())
        .add_input(t.clone())
        .add_input(other)
        .build()
        .unwrap();
    assert_eq!(plan.output_strides[0], vec![1, 3]);
    let mut tuples = plan_tuples(&plan);
    tuples.dedup_by_key(|t| t[0]);
    assert_eq!(tuples.len(), 12);
}

#[test]
fn partial_overlap_and_internal_overlap_are_rejected() {
    // Output and its transpose in the same storage: same bytes, different strides.
    let out = TensorSpec::new(vec![3i64, 3], vec![3, 1], 4).with_storage(1, 36);
    let transposed = TensorSpec::new(vec![3i64, 3], vec![1, 3], 4).with_storage(1, 36);
    let err = TensorIteratorConfig::new()
        .add_output(out.clone())
        .add_input(transposed)
        .build()
        .unwrap_err();
    assert!(matches!(err, Error::MemoryOverlap { .. }), "{err}");
    // Shifted by one element.
    let shifted = out.clone().with_offset(1).with_storage(1, 40);
    let err = TensorIteratorConfig::new()
        .add_output(out.clone().with_storage(1, 40))
        .add_input(shifted)
        .build()
        .unwrap_err();
    assert!(matches!(err, Error::MemoryOverlap { .. }), "{err}");
    // Disjoint halves of one storage are fine.
    let lo = TensorSpec::new(vec![4i64], vec![1], 4).with_storage(2, 32);
    let hi = lo.clone().with_offset(4);
    TensorIteratorConfig::new()
        .add_output(lo)
        .add_input(hi)
        .build()
        .unwrap();
    // Internal overlap: a broadcast (stride 0) output is rejected; a sliding window is "too
    // hard" and built, as PyTorch does (golden ops.jsonl), and an empty output never overlaps.
    let build_out = |sizes: Vec<i64>, strides: Vec<i64>| {
        TensorIteratorConfig::new()
            .add_output(TensorSpec::new(sizes.clone(), strides, 4))
            .add_input(TensorSpec::new(sizes, vec![3, 1], 4))
            .build()
    };
    let err = build_out(vec![3, 3], vec![0, 1]).unwrap_err();
    assert!(matches!(err, Error::MemoryOverlap { .. }), "{err}");
    build_out(vec![3, 3], vec![1, 1]).unwrap();
    build_out(vec![3, 0], vec![0, 1]).unwrap();
    // ... unless the check is off.
    TensorIteratorConfig::new()
        .options(IterOptions {
            check_mem_overlap: false,
            ..Default::default()
        })
        .add_output(TensorSpec::new(vec![3i64, 3], vec![0, 1], 4))
        .add_input(TensorSpec::new(vec![3i64, 3], vec![3, 1], 4))
        .build()
        .unwrap();
}

#[test]
fn invalid_operands_are_clear_errors() {
    let build = |t: TensorSpec<i64>| {
        TensorIteratorConfig::new()
            .add_undefined_output(4)
            .add_input(t)
            .build()
            .unwrap_err()
    };
    let e = build(TensorSpec::new(vec![2, -1], vec![1, 1], 4));
    assert!(
        matches!(&e, Error::InvalidLayout { message, .. } if message.contains("dim 1") && message.contains("-1")),
        "{e}"
    );
    let e = build(TensorSpec::new(vec![1; 65], vec![1; 65], 4));
    assert!(matches!(e, Error::Limit { .. }), "{e}");
    let e = build(TensorSpec::new(vec![2, 3], vec![3], 4));
    assert!(matches!(e, Error::InvalidLayout { .. }), "{e}");
    let e = build(TensorSpec::new(vec![2, 3], vec![3, 1], 4).with_storage(0, 20));
    assert!(
        matches!(&e, Error::InvalidLayout { message, .. } if message.contains("24") && message.contains("20")),
        "{e}"
    );
    let e = build(TensorSpec::new(vec![1 << 40, 1 << 30], vec![1, 1], 4));
    assert!(matches!(e, Error::Overflow { .. }), "{e}");
    let e = build(TensorSpec::new(vec![2], vec![i64::MAX / 2], 4));
    assert!(matches!(e, Error::Overflow { .. }), "{e}");
    let e = TensorIteratorConfig::<i64>::new()
        .add_input(TensorSpec::new(vec![2], vec![1], 4))
        .add_undefined_output(4)
        .build()
        .unwrap_err();
    assert!(matches!(e, Error::Invalid { .. }), "{e}");
}

#[test]
fn output_shape_mismatch_resizes_or_fails() {
    let input = TensorSpec::new(vec![2i64, 3], vec![1, 2], 4);
    let wrong = TensorSpec::new(vec![5i64], vec![1], 4);
    let plan = TensorIteratorConfig::new()
        .add_output(wrong.clone())
        .add_input(input.clone())
        .build()
        .unwrap();
    assert_eq!(plan.broadcast_shape, vec![2, 3]);
    assert_eq!(
        plan.output_strides[0],
        vec![1, 2],
        "resized outputs are re-strided like new ones"
    );
    // Without resize_outputs the output takes part in broadcasting: [5] vs [2, 3] fails to
    // broadcast, [3] broadcasts but the output cannot grow to [2, 3].
    let no_resize = IterOptions {
        resize_outputs: false,
        ..Default::default()
    };
    let e = TensorIteratorConfig::new()
        .options(no_resize.clone())
        .add_output(wrong)
        .add_input(input.clone())
        .build()
        .unwrap_err();
    assert!(matches!(e, Error::Broadcast { .. }), "{e}");
    let e = TensorIteratorConfig::new()
        .options(no_resize)
        .add_output(TensorSpec::new(vec![3i64], vec![1], 4))
        .add_input(input.clone())
        .build()
        .unwrap_err();
    assert!(
        e.to_string().contains("doesn't match the broadcast shape"),
        "{e}"
    );
    let e = TensorIteratorConfig::new()
        .options(IterOptions {
            check_all_same_shape: true,
            ..Default::default()
        })
        .add_undefined_output(4)
        .add_input(input)
        .add_input(TensorSpec::new(vec![3i64], vec![1], 4))
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("check_all_same_shape"), "{e}");
}

#[test]
fn enforce_linear_iteration_keeps_user_order() {
    let t = TensorSpec::new(vec![3i64, 4], vec![1, 3], 4);
    let plan = TensorIteratorConfig::new()
        .options(IterOptions {
            enforce_linear_iteration: true,
            ..Default::default()
        })
        .add_undefined_output(4)
        .add_input(t)
        .build()
        .unwrap();
    assert_eq!(plan.perm, vec![1, 0]);
    assert_eq!(plan.output_strides[0], vec![4, 1]);
    // Output walked linearly: its offsets increase in visiting order.
    let mut offs = Vec::new();
    plan.for_each_byte_offsets(|p| offs.push(p[0]));
    assert!(offs.windows(2).all(|w| w[0] < w[1]));
}

// ---------------------------------------------------------------------------------------
// Symbolic builds: the same code over `SymInt`.
// ---------------------------------------------------------------------------------------

use symstride::sym::{Bindings, ShapeEnv, SymInt, SymbolSpec};

/// The steps a guard reason may start with: the build's own steps (which also name an
/// operand or an iteration dim), and `broadcast:` from `layout::infer_size`.
const OWN_STEPS: &[&str] = &[
    "compute_mem_overlaps:",
    "compute_shape:",
    "mark_resize_outputs:",
    "fast_setup:",
    "compute_strides:",
    "compute_perm:",
    "coalesce_dimensions:",
];

/// Every size, stride and offset of `op` as a fresh symbol hinted by its concrete value.
fn lift(env: &ShapeEnv, name: &str, op: &Op) -> TensorSpec<SymInt> {
    let syms = |prefix: String, v: &[i64]| {
        env.create_symbols(&prefix, v, SymbolSpec::default())
            .unwrap()
    };
    let sizes = syms(format!("{name}_z"), &op.sizes);
    let strides = syms(format!("{name}_t"), &op.strides);
    let offset = env
        .create_symbol(&format!("{name}_off"), op.offset, SymbolSpec::default())
        .unwrap();
    TensorSpec::new(sizes, strides, op.es).with_offset(offset)
}

/// The case's ops with every symbol replaced by its value in `b`.
fn lower(ops: &[Op], names: &[String], b: &Bindings) -> Vec<Op> {
    ops.iter()
        .zip(names)
        .map(|(op, name)| Op {
            sizes: (0..op.sizes.len())
                .map(|d| b.get(&format!("{name}_z{d}")).unwrap())
                .collect(),
            strides: (0..op.strides.len())
                .map(|d| b.get(&format!("{name}_t{d}")).unwrap())
                .collect(),
            offset: b.get(&format!("{name}_off")).unwrap(),
            es: op.es,
        })
        .collect()
}

/// Symbolic build of a case (optional given output `o`, inputs `x0, x1, ...`).
fn symbolic_build(
    inputs: &[Op],
    out: &Option<Op>,
    options: IterOptions,
) -> (ShapeEnv, symstride::Result<Plan<SymInt>>) {
    let env = ShapeEnv::default();
    let mut c = TensorIteratorConfig::new().options(options);
    c = match out {
        Some(o) => c.add_output(lift(&env, "o", o)),
        None => c.add_undefined_output(4),
    };
    for (k, op) in inputs.iter().enumerate() {
        c = c.add_input(lift(&env, &format!("x{k}"), op));
    }
    let plan = c.build();
    (env, plan)
}

/// A binding near the hints: each symbol keeps its hint or (with probability 1/2) takes a
/// small random value (sizes and strides 0..=5, 1 and 0 included).
fn perturb(env: &ShapeEnv, seed: u64) -> Bindings {
    let mut s = seed | 1;
    let mut b = Bindings::new();
    for name in env.symbol_names() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let hint = env.symbol_hint(&name).unwrap();
        let v = if s.is_multiple_of(2) {
            hint
        } else {
            ((s >> 8) % 6) as i64
        };
        b.insert(&name, v);
    }
    b
}

/// Checks one binding: returns whether the guards admit it, and when they do, that the
/// symbolic plan evaluated there equals the concrete build there.
fn check_binding(
    env: &ShapeEnv,
    plan: &Plan<SymInt>,
    inputs: &[Op],
    out: &Option<Op>,
    options: &IterOptions,
    b: &Bindings,
) -> Result<bool, TestCaseError> {
    let guards = env.guard_set();
    if !guards.eval(b).unwrap().is_pass() {
        return Ok(false);
    }
    let names: Vec<String> = (0..inputs.len()).map(|k| format!("x{k}")).collect();
    let inputs_b = lower(inputs, &names, b);
    let out_b = out
        .as_ref()
        .map(|o| lower(std::slice::from_ref(o), &["o".to_string()], b).remove(0));
    let concrete = config_for(&inputs_b, &out_b, options.clone()).build();
    let concrete = match concrete {
        Ok(p) => p,
        Err(e) => {
            return Err(TestCaseError::fail(format!(
                "admitted binding {b:?} fails concretely: {e}"
            )))
        }
    };
    let evaluated = plan.try_map(|s| s.eval(b)).unwrap();
    prop_assert_eq!(evaluated, concrete, "binding {:?}, guards {:?}", b, guards);
    Ok(true)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(128), ..ProptestConfig::default() })]

    /// The symbolic build, evaluated at any binding its guards admit, is the concrete build
    /// at that binding; the hint binding is always admitted.
    #[test]
    fn symbolic_build_specializes_to_concrete_build(
        (inputs, out) in case_strategy(),
        seeds in prop::collection::vec(any::<u64>(), 8),
        allow_fast_setup in any::<bool>(),
    ) {
        prop_assume!(broadcasts(&inputs));
        let options = IterOptions { allow_fast_setup, ..Default::default() };
        let (env, plan) = symbolic_build(&inputs, &out, options.clone());
        let plan = plan.unwrap();
        prop_assert!(check_binding(&env, &plan, &inputs, &out, &options, &env.hints())?, "hints rejected");
        for seed in seeds {
            check_binding(&env, &plan, &inputs, &out, &options, &perturb(&env, seed))?;
        }
    }

    /// Every guard names its step, and the build's own steps name an operand or dimension.
    #[test]
    fn guard_reasons_name_step_and_operand((inputs, out) in case_strategy()) {
        prop_assume!(broadcasts(&inputs));
        let (env, plan) = symbolic_build(&inputs, &out, IterOptions::default());
        plan.unwrap();
        for g in env.guards() {
            let own = OWN_STEPS.iter().any(|s| g.reason.starts_with(s));
            prop_assert!(own || g.reason.starts_with("broadcast:"), "reason {:?}", g.reason);
            if own {
                let names_tensor = g.reason.contains("input ") || g.reason.contains("output ");
                prop_assert!(names_tensor || g.reason.contains("iteration dim"), "reason {:?}", g.reason);
            }
        }
    }
}

#[test]
fn perturbed_bindings_are_often_admitted() {
    // Not vacuous: over a fixed set of layouts, a good share of random bindings pass the
    // guards (and are then checked against the concrete build).
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut tried, mut admitted) = (0, 0);
    for _ in 0..64 {
        let (inputs, out) = case_strategy().new_tree(&mut runner).unwrap().current();
        if !broadcasts(&inputs) {
            continue;
        }
        let options = IterOptions::default();
        let (env, plan) = symbolic_build(&inputs, &out, options.clone());
        let plan = plan.unwrap();
        for seed in 1..=16u64 {
            tried += 1;
            if check_binding(
                &env,
                &plan,
                &inputs,
                &out,
                &options,
                &perturb(&env, seed * 7919),
            )
            .unwrap()
            {
                admitted += 1;
            }
        }
    }
    assert!(
        admitted * 10 >= tried,
        "only {admitted} of {tried} perturbed bindings admitted"
    );
}

#[test]
fn symbolic_transposed_add_guards_on_the_permutation() {
    // add(x, y) with x transposed: [s0, s1] strides [1, s0]; y: [s1] contiguous.
    let env = ShapeEnv::default();
    let sym = |n: &str, v: i64| {
        env.create_symbol(
            n,
            v,
            SymbolSpec {
                min: 2,
                ..SymbolSpec::default()
            },
        )
        .unwrap()
    };
    let (s0, s1) = (sym("s0", 3), sym("s1", 5));
    let one = SymInt::constant(1);
    let plan = TensorIteratorConfig::new()
        .add_undefined_output(4)
        .add_input(TensorSpec::new(
            vec![s0.clone(), s1.clone()],
            vec![one.clone(), s0.clone()],
            4,
        ))
        .add_input(TensorSpec::new(vec![s1.clone()], vec![one.clone()], 4))
        .build()
        .unwrap();
    let b = Bindings::from_pairs([("s0", 7), ("s1", 2)]);
    assert_eq!(
        env.guard_set().eval(&b).unwrap(),
        symstride::sym::GuardCheck::Pass,
        "sizes >= 2 need no specialization"
    );
    let p = plan.try_map(|s| s.eval(&b)).unwrap();
    assert_eq!(p.output_strides[0], vec![1, 7]);
    assert_eq!(p.perm, vec![0, 1]);
}

/// The golden elementwise cases (real PyTorch): every case through the concrete build, and
/// every 7th through the symbolic build (each size and stride its own symbol, evaluated at
/// the hints), to keep the test fast; the CLI `conformance --symbolic` runs them all.
#[test]
fn golden_elementwise_cases_match_pytorch() {
    use symstride::golden::{read_cases, Case};
    use symstride::iter::elementwise_output;
    let lines = read_cases(&symstride::testing::golden_path("elementwise.jsonl")).unwrap();
    let answer = |r: symstride::Result<(Vec<i64>, Vec<i64>)>| match r {
        Ok((s, t)) => serde_json::json!({"sizes": s, "strides": t}),
        Err(Error::Broadcast { .. }) => serde_json::json!({"error": "broadcast"}),
        Err(e) => serde_json::json!({"error": e.to_string()}),
    };
    let mut checked = 0;
    for (n, line) in lines.into_iter().enumerate() {
        let Ok(Case::Elementwise(case)) = line.case else {
            panic!("line {}: not elementwise", line.number)
        };
        let inputs: Vec<(Vec<i64>, Vec<i64>)> = case
            .inputs
            .iter()
            .map(|t| (t.sizes.clone(), t.strides.clone()))
            .collect();
        let expect = serde_json::Value::Object(case.expect.clone());
        assert_eq!(
            answer(elementwise_output(&inputs)),
            expect,
            "line {}",
            line.number
        );
        if n % 7 == 0 {
            let env = ShapeEnv::default();
            let lifted: Vec<(Vec<SymInt>, Vec<SymInt>)> = inputs
                .iter()
                .enumerate()
                .map(|(k, (s, t))| {
                    let op = Op {
                        sizes: s.clone(),
                        strides: t.clone(),
                        offset: 0,
                        es: 4,
                    };
                    let spec = lift(&env, &format!("x{k}"), &op);
                    (spec.sizes, spec.strides)
                })
                .collect();
            let hints = env.hints();
            let eval = |v: &[SymInt]| {
                v.iter()
                    .map(|x| x.eval(&hints).unwrap())
                    .collect::<Vec<_>>()
            };
            let sym = elementwise_output(&lifted).map(|(s, t)| (eval(&s), eval(&t)));
            assert_eq!(answer(sym), expect, "symbolic, line {}", line.number);
            checked += 1;
        }
    }
    assert!(checked > 400);
}

/// PyTorch's own traces of the public specs (`coverage.jsonl`): for 300 random bindings each,
/// the concrete build must give eager PyTorch's output (`torch_out`); the symbolic build
/// (every spec symbol a symbol) must give it at every binding its guards admit, and admit at
/// least as many bindings as PyTorch's guards did.
#[test]
fn coverage_specs_admitted_bindings_match_pytorch() {
    use symstride::layout;
    use symstride::sym::Expr;
    use symstride::Int;
    let text = std::fs::read_to_string(symstride::testing::golden_path("coverage.jsonl")).unwrap();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let spec = &v["spec"];
        let name = spec["name"].as_str().unwrap_or("?");
        let env = ShapeEnv::default();
        for (k, h) in spec["hints"].as_object().unwrap() {
            env.create_symbol(k, h.as_i64().unwrap(), SymbolSpec::default())
                .unwrap();
        }
        let int = |s: &serde_json::Value| match s {
            serde_json::Value::String(e) => SymInt::from_expr(Expr::parse(e).unwrap(), &env),
            x => SymInt::from_i64(x.as_i64().unwrap()),
        };
        let mut config = TensorIteratorConfig::<SymInt>::new().add_undefined_output(4);
        for inp in spec["inputs"].as_array().unwrap() {
            let sizes: Vec<SymInt> = inp["sizes"].as_array().unwrap().iter().map(int).collect();
            let strides = match inp["layout"].as_str() {
                Some("contiguous") => layout::contiguous_strides(&sizes),
                Some("channels_last") => layout::channels_last_strides_2d(&sizes).unwrap(),
                Some("channels_last_3d") => layout::channels_last_strides_3d(&sizes).unwrap(),
                Some(other) => panic!("{name}: unknown layout {other}"),
                None => inp["strides"].as_array().unwrap().iter().map(int).collect(),
            };
            config = config.add_input(TensorSpec::new(sizes, strides, 4));
        }
        let plan = config.build().unwrap();
        let guards = env.guard_set();
        let rows = v["rows"].as_array().unwrap();
        let mut admitted = 0;
        for row in rows {
            let b = Bindings::from_pairs(
                row["binding"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(k, x)| (k.clone(), x.as_i64().unwrap())),
            );
            let expect = &row["torch_out"];
            // The concrete build at this binding is eager PyTorch.
            let concrete = config.try_map(|s| s.eval(&b)).unwrap().build().unwrap();
            let got = serde_json::json!({"sizes": concrete.broadcast_shape, "strides": concrete.output_strides[0]});
            assert_eq!(&got, expect, "{name}: concrete build at {b:?}");
            if guards.eval(&b).unwrap().is_pass() {
                admitted += 1;
                let p = plan.try_map(|s| s.eval(&b)).unwrap();
                assert_eq!(p, concrete, "{name}: symbolic plan at admitted {b:?}");
            }
        }
        let coverage = admitted as f64 / rows.len() as f64;
        let torch = v["torch_coverage"].as_f64().unwrap();
        assert!(
            coverage + 1e-9 >= torch,
            "{name}: coverage {coverage} below PyTorch's {torch}"
        );
    }
}
