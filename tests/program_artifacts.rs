//! Program artifacts (version 2): round trip, tampered files rejected with the specialization
//! and guard or value named, never a wrong answer; the program dispatcher; and a single-op
//! spec compiled as a one-step program against the single-op (version 1) pipeline.

use serde_json::Value as Json;
use symstride::aot::{Artifact, CompileOptions, Spec};
use symstride::program::{
    concrete, input_layouts, AnyArtifact, Fuse, Program, ProgramArtifact, ProgramDispatcher,
};
use symstride::sym::Bindings;

fn public_programs() -> Vec<Program> {
    let text =
        std::fs::read_to_string(symstride::testing::spec_path("public_programs.json")).unwrap();
    let v: Json = serde_json::from_str(&text).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|p| Program::from_value(p).unwrap())
        .collect()
}

fn program(name: &str) -> Program {
    public_programs()
        .into_iter()
        .find(|p| p.name == name)
        .unwrap()
}

fn bind(p: &Program, vals: &[i64]) -> Bindings {
    Bindings::from_pairs(p.symbols.iter().zip(vals).map(|(s, &v)| (s.as_str(), v)))
}

/// Every point of `0..=max` per symbol.
fn grid(n: usize, max: i64) -> Vec<Vec<i64>> {
    let mut out = vec![Vec::new()];
    for _ in 0..n {
        out = out
            .into_iter()
            .flat_map(|v| {
                (0..=max).map(move |x| {
                    let mut w = v.clone();
                    w.push(x);
                    w
                })
            })
            .collect();
    }
    out
}

fn compiled_json(p: &Program) -> Json {
    serde_json::from_str(&ProgramArtifact::compile(p).unwrap().to_json()).unwrap()
}

fn load(v: &Json) -> Result<ProgramArtifact, String> {
    ProgramArtifact::from_json(&v.to_string()).map_err(|e| e.to_string())
}

/// Index of the guard of specialization 0 whose condition is `cond`.
fn guard_index(v: &Json, cond: &str) -> usize {
    v["specializations"][0]["guards"]
        .as_array()
        .unwrap()
        .iter()
        .position(|g| g["cond"] == cond)
        .unwrap_or_else(|| panic!("no guard `{cond}` in {v}"))
}

/// A loaded artifact is sound on the grid: at every binding a specialization admits, the
/// instantiated values equal a fresh concrete run (or both fail with one category).
fn assert_sound(a: &ProgramArtifact, max: i64) {
    let p = &a.program;
    for pt in grid(p.symbols.len(), max) {
        let Some(s) = a.specializations.iter().find(|s| s.admits(&pt).unwrap()) else {
            continue;
        };
        match (s.instantiate(&pt), concrete(p, &bind(p, &pt))) {
            (Ok(x), Ok(y)) => assert_eq!(x, y, "{} at {pt:?}", p.name),
            (Err(x), Err(y)) => assert_eq!(x.category(), y.category(), "{} at {pt:?}", p.name),
            (x, y) => panic!("{} at {pt:?}: {:?} vs {:?}", p.name, x.err(), y.err()),
        }
    }
}

#[test]
fn every_public_program_round_trips_and_is_sound() {
    for p in public_programs() {
        let a = ProgramArtifact::compile(&p).unwrap();
        let back = ProgramArtifact::from_json(&a.to_json()).unwrap();
        assert_eq!(back, a, "{}", p.name);
        assert!(matches!(
            AnyArtifact::from_json(&a.to_json()).unwrap(),
            AnyArtifact::Program(_)
        ));
        assert_sound(&back, 3);
    }
}

#[test]
fn weakened_guard_is_rejected_naming_specialization_and_guard() {
    let p = program("nhwc_to_nchw");
    let mut v = compiled_json(&p);
    let g = guard_index(&v, "c >= 2");
    v["specializations"][0]["guards"][g]["cond"] = "c >= 1".into();
    let e = load(&v).unwrap_err();
    assert!(
        e.contains("specialization 0") && e.contains("`c >= 2`"),
        "{e}"
    );
}

#[test]
fn deleted_guard_is_rejected() {
    let p = program("nhwc_to_nchw");
    let mut v = compiled_json(&p);
    let g = guard_index(&v, "c >= 2");
    v["specializations"][0]["guards"]
        .as_array_mut()
        .unwrap()
        .remove(g);
    let e = load(&v).unwrap_err();
    assert!(
        e.contains("specialization 0") && e.contains("`c >= 2`"),
        "{e}"
    );
}

#[test]
fn value_expression_agreeing_only_at_the_trace_point_is_rejected() {
    let p = program("nhwc_to_nchw");
    let mut v = compiled_json(&p);
    // `y = contiguous(p)`: strides [c*h*w, h*w, w, 1]; `c + h*w - 5` equals `h*w` at c = 5.
    let vals = v["specializations"][0]["values"].as_array_mut().unwrap();
    let y = vals.iter_mut().find(|x| x["name"] == "y").unwrap();
    assert_eq!(y["strides"][1], "h*w");
    y["strides"][1] = "c + h*w - 5".into();
    let e = load(&v).unwrap_err();
    assert!(
        e.contains("specialization 0") && e.contains("value `y` strides[1]"),
        "{e}"
    );
    // An edit that is wrong at the trace point too is caught by the point check.
    let mut v = compiled_json(&p);
    v["specializations"][0]["values"][2]["offset"] = "1".into();
    let e = load(&v).unwrap_err();
    assert!(e.contains("specialization 0"), "{e}");
}

#[test]
fn dropped_specialization_is_rejected() {
    let p = program("nhwc_to_nchw");
    let d = ProgramDispatcher::new(ProgramArtifact::compile(&p).unwrap()).unwrap();
    let mut out = Vec::new();
    // c = 1 misses (the hints' specialization needs c >= 2): a second specialization.
    d.dispatch_values(&[2, 3, 4, 1], &mut out).unwrap();
    let a = d.to_artifact();
    assert_eq!(a.specializations.len(), 2);
    let mut v: Json = serde_json::from_str(&a.to_json()).unwrap();
    ProgramArtifact::from_json(&v.to_string()).unwrap();
    v["specializations"].as_array_mut().unwrap().remove(0);
    let e = load(&v).unwrap_err();
    assert!(e.contains("a specialization was removed"), "{e}");
}

#[test]
fn wrong_version_unknown_fields_and_bad_json_are_clear_errors() {
    let p = program("attn_head_split");
    let v = compiled_json(&p);
    for (version, want) in [(3, "version 3"), (1, "single-op")] {
        let mut w = v.clone();
        w["version"] = version.into();
        let e = load(&w).unwrap_err();
        assert!(e.contains(want), "{e}");
    }
    let mut w = v.clone();
    w["specializations"][0]["extra"] = 1.into();
    assert!(load(&w).unwrap_err().contains("extra"));
    let mut w = v.clone();
    w["specializations"][0]["values"][0]["sizes"][0] = "zz".into();
    let e = load(&w).unwrap_err();
    assert!(e.contains("unknown symbol `zz`"), "{e}");
    let e = ProgramArtifact::from_json("{not json")
        .unwrap_err()
        .to_string();
    assert!(e.contains("not JSON"), "{e}");
    // A version-2 file read as a single-op artifact says what it is.
    let e = Artifact::from_json(&v.to_string()).unwrap_err().to_string();
    assert!(e.contains("version 2"), "{e}");
}

/// Every guard of every public program deleted, and every `>= 2` weakened to `>= 1`: the
/// loader either rejects the file or what it loads is still sound (a guard the values do
/// not depend on, e.g. one only the iterator's coalescing asked for, may go).
#[test]
fn any_guard_edit_is_rejected_or_harmless() {
    let mut rejected = 0;
    let mut edits = 0;
    for p in public_programs() {
        let v = compiled_json(&p);
        let n = v["specializations"][0]["guards"].as_array().unwrap().len();
        for g in 0..n {
            let cond = v["specializations"][0]["guards"][g]["cond"]
                .as_str()
                .unwrap()
                .to_string();
            let mut variants = Vec::new();
            let mut del = v.clone();
            del["specializations"][0]["guards"]
                .as_array_mut()
                .unwrap()
                .remove(g);
            variants.push(del);
            if cond.ends_with(">= 2") {
                let mut w = v.clone();
                w["specializations"][0]["guards"][g]["cond"] = cond.replace(">= 2", ">= 1").into();
                variants.push(w);
            }
            for w in variants {
                edits += 1;
                match load(&w) {
                    Err(e) => {
                        rejected += 1;
                        assert!(e.contains("specialization 0"), "{e}");
                    }
                    Ok(a) => assert_sound(&a, 3),
                }
            }
        }
    }
    println!("{rejected} of {edits} guard edits rejected; the rest are sound");
    assert!(rejected > 0);
}

#[test]
fn dispatcher_instantiates_concrete_layouts_and_retraces() {
    for p in public_programs() {
        let d = ProgramDispatcher::new(ProgramArtifact::compile(&p).unwrap()).unwrap();
        let mut out = Vec::new();
        for pt in grid(p.symbols.len(), 2).into_iter().step_by(3) {
            let Ok(l) = input_layouts(&p, &pt) else {
                continue;
            };
            let refs: Vec<(&[i64], &[i64])> = l.iter().map(|(a, b)| (&a[..], &b[..])).collect();
            let got = d.dispatch(&refs, &mut out);
            match (got, concrete(&p, &bind(&p, &pt))) {
                (Ok(_), Ok(c)) => assert_eq!(out, c, "{} at {pt:?}", p.name),
                (Err(x), Err(y)) => assert_eq!(x.category(), y.category()),
                (x, y) => panic!("{} at {pt:?}: {:?} vs {:?}", p.name, x.err(), y.err()),
            }
        }
        // What the dispatcher learned loads back.
        ProgramArtifact::from_json(&d.to_artifact().to_json()).unwrap();
    }
}

/// A public single-op spec compiled as a one-step program admits every binding the
/// single-op pipeline's guards admit, with the same output layout; it may admit more, since
/// a program trace records kernel-plan decisions (coalescing) as plan conditions where the
/// single-op pipeline still guards them, and there its values are a fresh concrete run's.
#[test]
fn single_op_spec_as_a_program_matches_the_v1_pipeline() {
    let text = std::fs::read_to_string(symstride::testing::spec_path("public_specs.json")).unwrap();
    let specs: Json = serde_json::from_str(&text).unwrap();
    let (mut both, mut only_program) = (0, 0);
    for sv in specs.as_array().unwrap() {
        let spec = Spec::from_value(sv).unwrap();
        let v1 = Artifact::compile(&spec, &CompileOptions::default()).unwrap();
        let p = Program::from_spec(&spec).unwrap();
        assert_eq!(p.symbols, spec.symbols);
        let v2 = ProgramArtifact::compile(&p).unwrap();
        let (s1, s2) = (&v1.specializations[0], &v2.specializations[0]);
        for pt in grid(spec.symbols.len(), 3) {
            let a1 = s1.admits(&pt).unwrap();
            let a2 = s2.admits(&pt).unwrap();
            assert!(
                a2 || !a1,
                "{:?} at {pt:?}: {:?} vs {:?}",
                spec.name, s1.guards, s2.guards
            );
            if a1 {
                both += 1;
                let (sizes, strides) = s1.output_layout(&pt).unwrap();
                let vals = s2.instantiate(&pt).unwrap();
                let out = &vals[p.outputs[0]];
                assert_eq!((&out.sizes, &out.strides), (&sizes, &strides));
            } else if a2 {
                only_program += 1;
                assert_eq!(
                    s2.instantiate(&pt).unwrap(),
                    concrete(&p, &bind(&p, &pt)).unwrap(),
                    "{:?} at {pt:?}",
                    spec.name
                );
            }
        }
    }
    println!("admitted by both: {both}; by the one-step program only: {only_program}");
}

/// Concurrent dispatch (hits and misses from four threads) gives the results of serial use:
/// every call's values equal a fresh concrete run, and every binding is cached once.
#[test]
fn concurrent_dispatch_equals_serial() {
    let p = program("softmax_lastdim");
    let d = ProgramDispatcher::new(ProgramArtifact::compile(&p).unwrap()).unwrap();
    let points = grid(p.symbols.len(), 3);
    std::thread::scope(|s| {
        for t in 0..4 {
            let (d, p, points) = (&d, &p, &points);
            s.spawn(move || {
                let mut out = Vec::new();
                for pt in points.iter().skip(t).chain(points.iter()) {
                    let l = input_layouts(p, pt).unwrap();
                    let refs: Vec<(&[i64], &[i64])> =
                        l.iter().map(|(a, b)| (&a[..], &b[..])).collect();
                    match (d.dispatch(&refs, &mut out), concrete(p, &bind(p, pt))) {
                        (Ok(_), Ok(c)) => assert_eq!(out, c, "{pt:?}"),
                        (Err(x), Err(y)) => assert_eq!(x.category(), y.category()),
                        (x, y) => panic!("{pt:?}: {:?} vs {:?}", x.err(), y.err()),
                    }
                }
            });
        }
    });
    // Every cached specialization is admitted by some binding no earlier one admits.
    let a = d.to_artifact();
    for (k, s) in a.specializations.iter().enumerate() {
        assert!(
            points.iter().any(|pt| s.admits(pt).unwrap()
                && a.specializations[..k]
                    .iter()
                    .all(|e| !e.admits(pt).unwrap())),
            "specialization {k} is redundant"
        );
    }
}

/// TensorIterator's coalescing decides no layout, so it is a plan condition of the demo's
/// step 4 (`amax`: its iteration dims merge only when `b != 1`), not a guard: the stored
/// guards (`b >= 1`, `s >= 2`) admit `b = 1`, where every value is the traced expression
/// and step 4 gets no stored plan (the run plans it). A real guard still binds: weakening
/// `s >= 2` (at `s = 1` the bias broadcasts and the layouts and plans differ) is rejected on
/// load, naming the step's plan, and so is deleting it; the unedited artifact loads.
#[test]
fn coalescing_is_a_plan_condition_and_a_weakened_guard_is_rejected_through_the_plan() {
    let p = Program::from_json(symstride::program::DEMO_PROGRAM_JSON).unwrap();
    let v = compiled_json(&p);
    let a = load(&v).unwrap();
    let spec = &a.specializations[0];
    let conds: Vec<String> = spec.guards.iter().map(|g| g.cond.to_string()).collect();
    assert_eq!(conds, ["b >= 1", "s >= 2"]);
    assert!(spec.plan_conditions[3]
        .iter()
        .any(|g| g.reason.contains("coalesce_dimensions")));
    let b1 = concrete(&p, &bind(&p, &[1, 5])).unwrap();
    assert!(spec.admits(&[1, 5]).unwrap());
    let (mut values, mut plans) = (Vec::new(), Vec::new());
    spec.instantiate_with_plans(&[1, 5], &mut values, &mut plans)
        .unwrap();
    assert_eq!(values, b1);
    assert!(plans[3].is_none(), "step 4's plan conditions fail at b = 1");
    let g = v["specializations"][0]["guards"]
        .as_array()
        .unwrap()
        .iter()
        .position(|g| g["cond"] == "s >= 2")
        .expect("the demo's broadcast guard");
    let mut edited = v.clone();
    edited["specializations"][0]["guards"][g]["cond"] = Json::from("s >= 1");
    let err = load(&edited).unwrap_err();
    assert!(err.contains("kernel plan"), "{err}");
    let mut deleted = v.clone();
    deleted["specializations"][0]["guards"]
        .as_array_mut()
        .unwrap()
        .remove(g);
    let err = load(&deleted).unwrap_err();
    assert!(err.contains("kernel plan"), "{err}");
}

/// The fusion plan is recorded per specialization (the demo evaluates `add` inside the
/// `amax` and `sub, exp` inside the `sum`, writing `y` and `e` for their later readers:
/// steps 3-4 and 5-7, stored 0-based) and verified on load: a chain with a member read
/// outside it (the `exp`, read by `sum` and `div`), a reduction in an elementwise chain,
/// one with an output member, a plan with a chain dropped, steps out of range and a plan on an error
/// specialization are each rejected with the specialization named; a file without the
/// field loads with the plan re-decided from the trace.
#[test]
fn tampered_fusion_plans_are_rejected() {
    use symstride::program::{ChainKind, FusedChain, FusionPlan};
    let p = Program::from_json(symstride::program::DEMO_PROGRAM_JSON).unwrap();
    let v = compiled_json(&p);
    let reduction = |steps: Vec<usize>| FusedChain {
        steps,
        kind: ChainKind::Reduction { writes_input: true },
    };
    let want = FusionPlan {
        chains: vec![reduction(vec![2, 3]), reduction(vec![4, 5, 6])],
        rows: vec![symstride::program::RowSegment {
            steps: vec![2, 3, 4, 5, 6, 7],
            written: vec![7],
        }],
    };
    assert_eq!(
        v["specializations"][0]["fusion"],
        serde_json::to_value(&want).unwrap()
    );
    assert_eq!(load(&v).unwrap().specializations[0].fusion, want);
    let mut absent = v.clone();
    absent["specializations"][0]
        .as_object_mut()
        .unwrap()
        .remove("fusion");
    assert_eq!(load(&absent).unwrap().specializations[0].fusion, want);
    for (chains, why) in [
        (
            serde_json::json!([{"steps": [4, 5, 7]}]),
            "needed outside its chain",
        ),
        (
            serde_json::json!([{"steps": [2, 4, 5]}]),
            "needed outside its chain",
        ),
        (serde_json::json!([{"steps": [4, 5, 6]}]), "cannot be fused"),
        (serde_json::json!([]), "not the one decided"),
        (
            serde_json::json!([{"steps": [4, 5]}, {"steps": [6, 7]}]),
            "cannot be fused",
        ),
        (serde_json::json!([{"steps": [5, 4]}]), "not ascending"),
        (serde_json::json!([{"steps": [4, 99]}]), "not ascending"),
        (serde_json::json!([{"steps": []}]), "empty chain"),
    ] {
        let mut t = v.clone();
        t["specializations"][0]["fusion"]["chains"] = chains.clone();
        let e = load(&t).unwrap_err();
        assert!(
            e.contains("specialization 0") && e.contains(why),
            "{chains}: {e}"
        );
    }
    // Row segments: a written value left out, a step more, the segment dropped.
    for (rows, why) in [
        (
            serde_json::json!([{"steps": [2, 3, 4, 5, 6, 7], "written": []}]),
            "not a row segment",
        ),
        (
            serde_json::json!([{"steps": [1, 2, 3, 4, 5, 6, 7], "written": [7]}]),
            "not a row segment",
        ),
        (serde_json::json!([]), "not the one decided"),
    ] {
        let mut t = v.clone();
        t["specializations"][0]["fusion"]["rows"] = rows.clone();
        let e = load(&t).unwrap_err();
        assert!(
            e.contains("specialization 0") && e.contains(why),
            "{rows}: {e}"
        );
    }
    // An output read by one elementwise step is not fused; a plan fusing it is rejected.
    let out = Program::from_json(
        r#"{"inputs": [{"name": "x", "sizes": ["n"], "layout": "contiguous"}],
            "hints": {"n": 4},
            "steps": [{"let": "a", "op": "neg", "args": ["x"]},
                      {"let": "b", "op": "exp", "args": ["a"]}],
            "outputs": ["b", "a"]}"#,
    )
    .unwrap();
    let mut t = compiled_json(&out);
    assert_eq!(
        t["specializations"][0]["fusion"]["chains"],
        serde_json::json!([])
    );
    t["specializations"][0]["fusion"]["chains"] = serde_json::json!([{"steps": [0, 1]}]);
    let e = load(&t).unwrap_err();
    assert!(
        e.contains("specialization 0") && e.contains("an output"),
        "{e}"
    );
    // An error specialization stores no plan and accepts none.
    let bad = Program::from_json(
        r#"{"inputs": [{"name": "x", "sizes": ["a"], "layout": "contiguous"},
                       {"name": "y", "sizes": ["b"], "layout": "contiguous"}],
            "hints": {"a": 2, "b": 3},
            "steps": [{"let": "s", "op": "add", "args": ["x", "y"]},
                      {"let": "e", "op": "exp", "args": ["s"]}],
            "outputs": ["e"]}"#,
    )
    .unwrap();
    let mut t = compiled_json(&bad);
    assert!(t["specializations"][0].get("fusion").is_none(), "{t}");
    t["specializations"][0]["fusion"] = serde_json::json!({"chains": [{"steps": [0, 1]}]});
    let e = load(&t).unwrap_err();
    assert!(
        e.contains("specialization 0") && e.contains("fusion plan"),
        "{e}"
    );
}

/// The dispatcher runs the specialization's fused chains: the same outputs as step by
/// step, on every public program at a few bindings, and `fused_steps` counts the chains.
#[test]
fn dispatcher_runs_fused_chains_like_step_by_step() {
    use symstride::kernel::ExecConfig;
    use symstride::program::{fill_inputs, tensor_values};
    use symstride::tensor::Scalar;
    for p in public_programs() {
        let d = ProgramDispatcher::new(ProgramArtifact::compile(&p).unwrap()).unwrap();
        for pt in grid(p.symbols.len(), 3).into_iter().step_by(7) {
            let Ok(values) = concrete(&p, &bind(&p, &pt)) else {
                continue;
            };
            let cfg = ExecConfig::default().with_grain_size(4);
            let fused = d
                .run_with(fill_inputs(&p, &values).unwrap(), &cfg, Fuse::Chains)
                .unwrap();
            let plain = d
                .run_with(fill_inputs(&p, &values).unwrap(), &cfg, Fuse::StepByStep)
                .unwrap();
            let members = fused.fusion.steps_fused_at(&p, &fused.values);
            assert_eq!(fused.stats.fused_steps, members, "{} at {pt:?}", p.name);
            assert_eq!(plain.stats.fused_steps, 0);
            for (f, s) in fused.outputs.iter().zip(&plain.outputs) {
                let (f, s) = (tensor_values(f).unwrap(), tensor_values(s).unwrap());
                assert_eq!(f.len(), s.len());
                for (x, y) in f.iter().zip(&s) {
                    let close = match (x, y) {
                        (Scalar::Float(x), Scalar::Float(y)) => {
                            x == y
                                || (x.is_nan() && y.is_nan())
                                || (x - y).abs() <= 1e-5 * (1.0 + y.abs())
                        }
                        _ => x == y,
                    };
                    assert!(close, "{} at {pt:?}: {x:?} vs {y:?}", p.name);
                }
            }
        }
    }
}

/// A `--cover` of every public program round-trips its fusion plans (a merged
/// specialization's plan is decided under its merged guards, and so re-decided on load),
/// and at every grid binding the admitting specialization's plan is a valid fusion of the
/// concrete layouts there, equal to the plan the rules decide on them.
#[test]
fn cover_fusion_plans_round_trip_and_hold_at_every_admitted_binding() {
    use symstride::aot::CoverOptions;
    use symstride::program::{check_fusion, plan_fusion};
    for p in public_programs() {
        let a = ProgramArtifact::compile_cover(&p, &CoverOptions::default()).unwrap();
        let back = ProgramArtifact::from_json(&a.to_json()).unwrap();
        // (Whole-artifact equality does not hold for covers with error specializations:
        // a loaded one carries the concrete run's message, not the trace's.)
        let plans = |a: &ProgramArtifact| -> Vec<_> {
            a.specializations.iter().map(|s| s.fusion.clone()).collect()
        };
        assert_eq!(plans(&back), plans(&a), "{}", p.name);
        for pt in grid(p.symbols.len(), 3) {
            let Some(s) = a.specializations.iter().find(|s| s.admits(&pt).unwrap()) else {
                continue;
            };
            let Ok(values) = concrete(&p, &bind(&p, &pt)) else {
                continue;
            };
            check_fusion(&p, &values, &s.fusion).unwrap();
            assert_eq!(s.fusion, plan_fusion(&p, &values), "{} at {pt:?}", p.name);
        }
    }
}

/// A program passing sizes as Python numbers (`div(x, d)`, `mul(a, n*d-1)`, a row segment's
/// `mul(e, n)`, `clamp(i, max=n-1)`): compiled once, written and loaded, one specialization
/// serves two bindings (no re-trace), and at each the numbers take that binding's values:
/// fused and step-by-step runs equal a fresh reference run there.
const SIZES_AS_NUMBERS: &str = r#"{"name": "sizes_as_numbers",
 "inputs": [{"name": "x", "sizes": ["n", "d"], "layout": "contiguous", "dtype": "float32"},
            {"name": "i", "sizes": ["n"], "layout": "contiguous", "dtype": "int64"}],
 "hints": {"n": 3, "d": 40},
 "steps": [{"let": "a", "op": "div", "args": ["x", "d"]},
           {"let": "b", "op": "mul", "args": ["a", "n*d-1"]},
           {"let": "c", "op": "add", "args": ["b", 0.5]},
           {"let": "m", "op": "amax", "args": ["c", [-1]], "keepdim": true},
           {"let": "e", "op": "sub", "args": ["c", "m"]},
           {"let": "f", "op": "mul", "args": ["e", "n"]},
           {"let": "ex", "op": "exp", "args": ["f"]},
           {"let": "s", "op": "sum", "args": ["ex", [-1]], "keepdim": true},
           {"let": "sm", "op": "div", "args": ["ex", "s"]},
           {"let": "j", "op": "clamp", "args": ["i"], "min": 0, "max": "n-1"}],
 "outputs": ["c", "sm", "j"]}"#;

#[test]
fn sizes_passed_as_python_numbers_are_evaluated_per_binding() {
    use symstride::kernel::ExecConfig;
    use symstride::program::{execute, fill_inputs, tensor_values};
    use symstride::tensor::Scalar;
    let p = Program::from_json(SIZES_AS_NUMBERS).unwrap();
    let a = load(&compiled_json(&p)).unwrap();
    assert_eq!(a.specializations.len(), 1);
    let d = ProgramDispatcher::new(a).unwrap();
    let mut fused_somewhere = false;
    for pt in [[3, 40], [2, 64]] {
        let b = bind(&p, &pt);
        let reference = execute(&p, &b).unwrap();
        for fuse in [Fuse::Chains, Fuse::StepByStep] {
            let run = d
                .run_with(fill_inputs(&p, &reference.layouts).unwrap(), &ExecConfig::default(), fuse)
                .unwrap();
            let how = run.dispatched.unwrap();
            assert_eq!((how.specialization, how.retraced), (0, false), "{pt:?}");
            fused_somewhere |= run.stats.fused_steps > 0;
            for (t, &k) in run.outputs.iter().zip(&p.outputs) {
                let (got, want) = (tensor_values(t).unwrap(), reference.values(k).unwrap());
                assert_eq!(got.len(), want.len());
                for (x, y) in got.iter().zip(&want) {
                    let close = match (x, y) {
                        (Scalar::Float(x), Scalar::Float(y)) => (x - y).abs() <= 1e-5 * (1.0 + y.abs()),
                        _ => x == y,
                    };
                    assert!(close, "{} at {pt:?} ({fuse:?}): {x:?} vs {y:?}", p.names[k]);
                }
            }
        }
    }
    assert!(fused_somewhere, "no step ran fused");
    // `j` is clamped to the binding's `n - 1`, not the hint's.
    let run = d
        .run_with(
            fill_inputs(&p, &concrete(&p, &bind(&p, &[2, 64])).unwrap()).unwrap(),
            &ExecConfig::default(),
            Fuse::Chains,
        )
        .unwrap();
    let j = tensor_values(&run.outputs[2]).unwrap();
    assert!(j.iter().all(|v| matches!(v, Scalar::Int(0 | 1))), "{j:?}");
    assert!(j.contains(&Scalar::Int(1)));
}

/// A size passed as a number is exact: where its value does not fit `i64` (`n**40`, traced
/// at `n = 2`, run at `n = 3`: about 1.2e19), the run fails with an overflow naming it,
/// never a wrapped value or a panic; so does a fresh concrete run there.
#[test]
fn a_python_number_that_overflows_is_a_clear_error() {
    use symstride::kernel::ExecConfig;
    use symstride::program::{fill_inputs, Value};
    let p = Program::from_json(
        r#"{"inputs": [{"name": "x", "sizes": ["n"], "layout": "contiguous", "dtype": "float32"}],
            "hints": {"n": 2},
            "steps": [{"let": "y", "op": "mul", "args": ["x", "n**40"]}],
            "outputs": ["y"]}"#,
    )
    .unwrap();
    let d = ProgramDispatcher::new(load(&compiled_json(&p)).unwrap()).unwrap();
    let x = Value {
        sizes: vec![3],
        strides: vec![1],
        offset: 0,
        dtype: symstride::DType::F32,
        storage: 0,
        storage_numel: 3,
    };
    let e = d
        .run_with(fill_inputs(&p, &[x]).unwrap(), &ExecConfig::default(), Fuse::Chains)
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(e, symstride::Error::Overflow { .. }), "{e}");
    // Admitted by the guards (no re-trace): the run's evaluation refused it.
    assert_eq!((d.stats().hits, d.stats().retraces), (1, 0));
    assert!(e.to_string().contains("the Python number `n**40` at this binding"), "{e}");
    let e = concrete(&p, &Bindings::from_pairs([("n", 3)])).unwrap_err();
    assert!(matches!(e, symstride::Error::Overflow { .. }), "{e}");
}
