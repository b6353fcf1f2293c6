//! Program inputs as callers give them: an empty input dispatches through the
//! specializations whatever its strides (re-strided to the program's layout), and its
//! result is a fresh concrete computation's at the strides it really has wherever those
//! strides can matter; inputs in another layout run from plans cached by their layouts,
//! counted in the dispatcher's stats.

use serde_json::Value as Json;
use symstride::kernel::ExecConfig;
use symstride::op::AnyTensor;
use symstride::program::{
    concrete, fill_inputs, Fuse, InputStrides, Program, ProgramArtifact, ProgramDispatcher, Value,
    LAYOUT_PLANS_MAX,
};
use symstride::sym::{Bindings, Expr};
use symstride::testing::{spec_path, Lcg};
use symstride::Error;

fn programs(file: &str) -> Vec<Program> {
    let text = std::fs::read_to_string(spec_path(file)).unwrap();
    let v: Json = serde_json::from_str(&text).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|p| Program::from_value(p).unwrap())
        .collect()
}

fn all_programs() -> Vec<Program> {
    let mut ps = programs("public_programs.json");
    ps.extend(programs("hard_programs.json"));
    ps
}

fn bind(p: &Program, vals: &[i64]) -> Bindings {
    Bindings::from_pairs(p.symbols.iter().zip(vals).map(|(s, &v)| (s.as_str(), v)))
}

/// `p` with every input's strides the constants `strides[i]`.
fn with_strides(p: &Program, strides: &[Vec<i64>]) -> Program {
    let mut q = p.clone();
    for (inp, st) in q.inputs.iter_mut().zip(strides) {
        inp.strides = InputStrides::Exprs(st.iter().map(|&v| Expr::constant(v)).collect());
    }
    q
}

/// Input tensors of `sizes`/`strides` (golden fill), one storage each.
fn inputs_of(p: &Program, layouts: &[(Vec<i64>, Vec<i64>)]) -> Vec<AnyTensor> {
    let values: Vec<Value<i64>> = layouts
        .iter()
        .zip(&p.inputs)
        .enumerate()
        .map(|(k, ((sizes, strides), inp))| Value {
            sizes: sizes.clone(),
            strides: strides.clone(),
            offset: 0,
            dtype: inp.dtype,
            storage: k,
            storage_numel: if sizes.contains(&0) {
                0
            } else {
                1 + sizes
                    .iter()
                    .zip(strides)
                    .map(|(n, s)| (n - 1) * s)
                    .sum::<i64>()
            },
        })
        .collect();
    fill_inputs(p, &values).unwrap()
}

/// Every element of `t`, row-major, as text (NaN-safe equality).
fn elements(t: &AnyTensor) -> Vec<String> {
    let sizes = t.sizes().to_vec();
    if sizes.contains(&0) {
        return Vec::new();
    }
    let mut idx = vec![0i64; sizes.len()];
    let mut out = Vec::new();
    loop {
        out.push(format!("{:?}", t.get(&idx).unwrap()));
        let mut d = sizes.len();
        loop {
            if d == 0 {
                return out;
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < sizes[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// Odd strides for an empty input of `sizes`: all zero, or seeded non-negative values.
fn odd_strides(sizes: &[i64], rng: &mut Lcg, zero: bool) -> Vec<i64> {
    sizes
        .iter()
        .map(|_| if zero { 0 } else { rng.below(40) as i64 })
        .collect()
}

/// Bindings of `p` with one symbol 0 and the others at small values.
fn empty_bindings(p: &Program) -> Vec<Vec<i64>> {
    let mut out = Vec::new();
    for zero in 0..p.symbols.len() {
        for other in [1i64, 2, 3] {
            let mut v: Vec<i64> = p
                .hints
                .iter()
                .map(|&h| if other == 1 { h } else { other.max(h / other) })
                .collect();
            v[zero] = 0;
            out.push(v);
        }
    }
    out
}

/// Dispatching an empty input whatever its strides: bound and run through a specialization
/// (not a plan for another layout); the layouts are the program's at the binding (the
/// input taken as the program's layout); compared with a fresh concrete trace at the
/// strides the input really has, every value with elements has the same layout, every
/// empty one the same sizes and dtype (only an empty value's strides, which address
/// nothing, may follow the normalized input, e.g. a view of it); the outputs' elements are
/// the same as a run of that fresh trace.
#[test]
fn empty_inputs_dispatch_whatever_their_strides() {
    let mut rng = Lcg::new(39);
    let cfg = ExecConfig::default();
    let (mut runs, mut differing_empty_strides) = (0usize, 0usize);
    for p in all_programs() {
        let d = ProgramDispatcher::new(ProgramArtifact::compile(&p).unwrap()).unwrap();
        for vals in empty_bindings(&p) {
            let b = bind(&p, &vals);
            let spec_layouts = symstride::program::input_layouts(&p, &vals).unwrap();
            for zero in [true, false] {
                let mut layouts = spec_layouts.clone();
                let mut changed = false;
                for (i, (l, inp)) in layouts.iter_mut().zip(&p.inputs).enumerate() {
                    if l.0.contains(&0) && matches!(inp.strides, InputStrides::Layout(_)) {
                        l.1 = odd_strides(&l.0, &mut rng, zero);
                        changed |= l.1 != spec_layouts[i].1;
                    }
                }
                if !changed {
                    continue;
                }
                let strides: Vec<Vec<i64>> = layouts.iter().map(|l| l.1.clone()).collect();
                let real = with_strides(&p, &strides);
                let refs: Vec<(&[i64], &[i64])> =
                    layouts.iter().map(|(a, b)| (&a[..], &b[..])).collect();
                assert_eq!(
                    &d.bind(&refs).unwrap()[..],
                    &vals[..],
                    "{} {vals:?}",
                    p.name
                );
                let fresh = concrete(&real, &b);
                let ran = d.run_with(inputs_of(&p, &layouts), &cfg, Fuse::Chains);
                let (ran, fresh) = match (ran, fresh) {
                    (Ok(r), Ok(f)) => (r, f),
                    (Err(e), Err(f)) => {
                        assert_eq!(e.category(), f.category(), "{} {vals:?}: {e} / {f}", p.name);
                        continue;
                    }
                    (r, f) => panic!(
                        "{} {vals:?} strides {strides:?}: dispatched {:?}, fresh {:?}",
                        p.name,
                        r.map(|r| r.values).err(),
                        f.err()
                    ),
                };
                runs += 1;
                assert!(
                    ran.dispatched.is_some(),
                    "{} {vals:?}: not dispatched",
                    p.name
                );
                assert_eq!(ran.values, concrete(&p, &b).unwrap(), "{} {vals:?}", p.name);
                for (k, (got, want)) in ran.values.iter().zip(&fresh).enumerate() {
                    let what = format!(
                        "{} at {vals:?}, input strides {strides:?}: value {k} (`{}`)",
                        p.name, p.names[k]
                    );
                    assert_eq!((&got.sizes, got.dtype), (&want.sizes, want.dtype), "{what}");
                    if got.sizes.contains(&0) {
                        differing_empty_strides += usize::from(got.strides != want.strides);
                    } else {
                        assert_eq!(
                            (&got.strides, got.offset),
                            (&want.strides, want.offset),
                            "{what}: a value with elements depends on an empty input's strides"
                        );
                    }
                }
                let (fresh_out, _) = symstride::program::run_program_with(
                    &real,
                    &fresh,
                    inputs_of(&p, &layouts),
                    &Default::default(),
                    &cfg,
                )
                .unwrap();
                for (got, want) in ran.outputs.iter().zip(&fresh_out) {
                    assert_eq!(got.sizes(), want.sizes(), "{} {vals:?}", p.name);
                    assert_eq!(elements(got), elements(want), "{} {vals:?}", p.name);
                }
            }
        }
    }
    assert!(runs >= 20, "only {runs} runs with an empty input");
    eprintln!("{runs} runs; {differing_empty_strides} empty values whose strides follow the normalized input");
}

/// A non-empty input with other strides is never taken as the program's layout.
#[test]
fn non_empty_inputs_in_other_strides_are_not_bound() {
    for p in all_programs() {
        let d = ProgramDispatcher::new(ProgramArtifact::compile(&p).unwrap()).unwrap();
        let mut layouts = symstride::program::input_layouts(&p, &p.hints).unwrap();
        // An input given by a memory format (stride expressions may bind symbols).
        let Some(i) = layouts.iter().zip(&p.inputs).position(|(l, inp)| {
            matches!(inp.strides, InputStrides::Layout(_)) && l.1.len() >= 2 && l.1[0] != l.1[1]
        }) else {
            continue;
        };
        layouts[i].1.swap(0, 1);
        let refs: Vec<(&[i64], &[i64])> = layouts.iter().map(|(a, b)| (&a[..], &b[..])).collect();
        let e = d.bind(&refs).unwrap_err();
        assert!(matches!(e, Error::InvalidLayout { .. }), "{}: {e}", p.name);
    }
}

/// Inputs in another layout: planned once per distinct layout, the plan cached and
/// counted (`layout_misses`, `layout_hits`, `layout_plans`), the result a fresh concrete
/// trace's at those strides; the specializations' counters untouched; `retrace == false`
/// runs nothing.
#[test]
fn inputs_in_other_layouts_are_planned_once_per_layout() {
    let p = all_programs()
        .into_iter()
        .find(|p| p.name == "softmax_lastdim")
        .unwrap();
    let cfg = ExecConfig::default();
    let d = ProgramDispatcher::new(ProgramArtifact::compile(&p).unwrap()).unwrap();
    let vals = p.hints.clone();
    let b = bind(&p, &vals);
    let mut layouts = symstride::program::input_layouts(&p, &vals).unwrap();
    // The last two dims transposed in memory.
    let (sizes, strides) = &mut layouts[0];
    let r = sizes.len();
    let (n1, n2) = (sizes[r - 2], sizes[r - 1]);
    strides[r - 1] = n1;
    strides[r - 2] = 1;
    for st in strides[..r - 2].iter_mut() {
        *st = n1 * n2;
    }
    let all: Vec<Vec<i64>> = layouts.iter().map(|l| l.1.clone()).collect();
    let real = with_strides(&p, &all);
    let fresh = concrete(&real, &b).unwrap();
    let mut outs = Vec::new();
    for call in 0..3 {
        let ran = d
            .run_with(inputs_of(&p, &layouts), &cfg, Fuse::Chains)
            .unwrap();
        assert_eq!(ran.dispatched, None);
        assert_eq!(ran.layout_plan_cached, Some(call > 0));
        assert_eq!(ran.values, fresh);
        outs.push(ran.outputs.iter().map(elements).collect::<Vec<_>>());
    }
    assert!(outs.windows(2).all(|w| w[0] == w[1]));
    let st = d.stats();
    assert_eq!(
        (st.layout_misses, st.layout_hits, st.layout_plans),
        (1, 2, 1)
    );
    assert_eq!((st.hits, st.misses, st.retraces), (0, 0, 0));
    assert!(d
        .run_opts(inputs_of(&p, &layouts), &cfg, Fuse::Chains, false)
        .unwrap()
        .is_none());
    assert_eq!(d.stats(), st);
    // The program's own layout still goes through the specializations.
    let own = symstride::program::input_layouts(&p, &vals).unwrap();
    let ran = d.run_with(inputs_of(&p, &own), &cfg, Fuse::Chains).unwrap();
    assert!(ran.dispatched.is_some() && ran.layout_plan_cached.is_none());
    assert_eq!(d.stats().hits, 1);
}

/// The cache of plans for other layouts is bounded: beyond [`LAYOUT_PLANS_MAX`] distinct
/// layouts, each is planned on every call (and still runs correctly).
#[test]
fn layout_plans_are_bounded() {
    let p = all_programs()
        .into_iter()
        .find(|p| p.name == "softmax_lastdim")
        .unwrap();
    let cfg = ExecConfig::default();
    let d = ProgramDispatcher::new(ProgramArtifact::compile(&p).unwrap()).unwrap();
    let vals = p.hints.clone();
    let base = symstride::program::input_layouts(&p, &vals).unwrap();
    let n = LAYOUT_PLANS_MAX + 3;
    for k in 0..n {
        // Distinct padded row strides: another layout each time.
        let mut layouts = base.clone();
        let (sizes, strides) = &mut layouts[0];
        let r = sizes.len();
        let row = sizes[r - 1] + 1 + k as i64;
        let mut acc = row;
        for d in (0..r - 1).rev() {
            strides[d] = acc;
            acc *= sizes[d].max(1);
        }
        let all: Vec<Vec<i64>> = layouts.iter().map(|l| l.1.clone()).collect();
        let fresh = concrete(&with_strides(&p, &all), &bind(&p, &vals)).unwrap();
        let ran = d
            .run_with(inputs_of(&p, &layouts), &cfg, Fuse::Chains)
            .unwrap();
        assert_eq!(ran.values, fresh);
    }
    let st = d.stats();
    assert_eq!(
        (st.layout_misses, st.layout_hits, st.layout_plans),
        (n as u64, 0, LAYOUT_PLANS_MAX)
    );
}

/// A single op: empty inputs with zero strides (numpy's) execute through the cached
/// specialization, laid out as the plan at the binding says.
#[test]
fn single_op_empty_inputs_execute_whatever_their_strides() {
    use symstride::aot::{compile_seed_spec, concrete_plan, Dispatcher, Spec, SEED_SPEC_JSON};
    use symstride::tensor::Tensor;
    let spec = Spec::from_json(SEED_SPEC_JSON).unwrap();
    let d = Dispatcher::new(compile_seed_spec().unwrap()).unwrap();
    for vals in [[0i64, 4, 5], [3, 0, 5], [3, 4, 0]] {
        let [c, h, w] = vals;
        let a = Tensor::<f32>::from_vec(Vec::new(), &[0])
            .unwrap()
            .as_strided(&[2, c, h, w], &[0, 0, 0, 0], 0)
            .unwrap();
        let b = Tensor::<f32>::from_vec(Vec::new(), &[0])
            .unwrap()
            .as_strided(&[c, h, w], &[0, 0, 0], 0)
            .unwrap();
        let e = d.execute(&[&a, &b], &ExecConfig::default()).unwrap();
        let want = concrete_plan(&spec, &vals).unwrap();
        assert_eq!(e.output.sizes(), &want.broadcast_shape[..], "{vals:?}");
        assert_eq!(e.output.strides(), &want.output_strides[0][..], "{vals:?}");
        assert_eq!(e.output.numel(), 0);
    }
    assert_eq!(d.stats().hits + d.stats().misses, 3);
}
