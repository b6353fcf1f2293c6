//! Ahead-of-time specialization: coverage against PyTorch's guards, soundness (symbolic plan
//! at admitted bindings == fresh concrete build), artifact round trips and tampering,
//! dispatch (binding, cache, threads).

mod common;

use proptest::prelude::*;
use serde_json::Value;
use std::sync::Arc;
use symstride::aot::{
    compile_seed_spec, concrete_plan, empty_plan, trace, Artifact, CompileOptions, Dispatcher,
    Spec, SEED_SPEC_JSON,
};
use symstride::Error;

use symstride::testing::{golden_path, spec_path};

struct Row {
    values: Vec<i64>,
    torch_pass: bool,
    sizes: Vec<i64>,
    strides: Vec<i64>,
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_i64().expect("int"))
        .collect()
}

/// (spec, rows) per line of coverage.jsonl.
fn coverage() -> Vec<(Spec, Vec<Row>)> {
    let text = std::fs::read_to_string(golden_path("coverage.jsonl")).expect("coverage.jsonl");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("json line");
            let spec = Spec::from_value(&v["spec"]).expect("spec");
            let rows = v["rows"]
                .as_array()
                .expect("rows")
                .iter()
                .map(|r| {
                    let b = r["binding"].as_object().expect("binding");
                    let values = spec
                        .values_from_map(
                            b.iter()
                                .map(|(k, v)| (k.as_str(), v.as_i64().expect("int"))),
                        )
                        .expect("binding of the spec's symbols");
                    Row {
                        values,
                        torch_pass: r["torch_pass"].as_bool().expect("bool"),
                        sizes: ints(&r["torch_out"]["sizes"]),
                        strides: ints(&r["torch_out"]["strides"]),
                    }
                })
                .collect();
            (spec, rows)
        })
        .collect()
}

/// The `--cover` artifact of a spec.
fn compile_cover(spec: &Spec) -> Artifact {
    Artifact::compile(
        spec,
        &CompileOptions {
            cover: true,
            ..Default::default()
        },
    )
    .unwrap()
}

#[test]
fn public_specs_file_parses() {
    let text = std::fs::read_to_string(spec_path("public_specs.json")).expect("public specs");
    let v: Value = serde_json::from_str(&text).expect("json");
    let specs: Vec<Spec> = v
        .as_array()
        .expect("array")
        .iter()
        .map(|s| Spec::from_value(s).expect("spec"))
        .collect();
    assert_eq!(specs.len(), 6);
    assert_eq!(specs[0], Spec::from_json(SEED_SPEC_JSON).unwrap());
}

#[test]
fn single_specialization_admits_at_least_what_torch_admits_and_matches_torch() {
    for (spec, rows) in coverage() {
        let a = Artifact::compile(&spec, &CompileOptions::default()).unwrap();
        assert_eq!(a.specializations.len(), 1);
        let (mut ours, mut torch) = (0, 0);
        for r in &rows {
            torch += r.torch_pass as usize;
            let out = a.check(&r.values).unwrap();
            if let Some(k) = out.specialization {
                ours += 1;
                assert_eq!(k, 0);
                let (sizes, strides) = out.output.unwrap();
                assert_eq!(
                    (&sizes, &strides),
                    (&r.sizes, &r.strides),
                    "{:?} at {:?}",
                    spec.name,
                    r.values
                );
            }
        }
        println!("{:?}: ours {ours}/{} torch {torch}", spec.name, rows.len());
        assert!(
            ours >= torch,
            "{:?}: ours {ours} < torch {torch}",
            spec.name
        );
    }
}

#[test]
fn cover_admits_every_binding_with_torch_output() {
    for (spec, rows) in coverage() {
        let a = compile_cover(&spec);
        for r in &rows {
            let out = a.check(&r.values).unwrap();
            assert!(
                out.specialization.is_some(),
                "{:?}: {:?} not covered",
                spec.name,
                r.values
            );
            let (sizes, strides) = out.output.unwrap();
            assert_eq!(
                (&sizes, &strides),
                (&r.sizes, &r.strides),
                "{:?} at {:?}",
                spec.name,
                r.values
            );
        }
    }
}

#[test]
fn cover_admits_small_bindings_including_zero() {
    let text = std::fs::read_to_string(spec_path("public_specs.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    // All public specs: zero-size classes share specializations when their plans agree
    // (cover.rs), which this checks against fresh concrete builds.
    for s in v.as_array().unwrap() {
        let spec = Spec::from_value(s).unwrap();
        let a = compile_cover(&spec);
        let k = spec.symbols.len();
        let vals = [0i64, 1, 2, 3, 7];
        for n in 0..vals.len().pow(k as u32) {
            let mut r = n;
            let values: Vec<i64> = (0..k)
                .map(|_| {
                    let x = vals[r % vals.len()];
                    r /= vals.len();
                    x
                })
                .collect();
            let out = a.check(&values).unwrap();
            let Some(idx) = out.specialization else {
                panic!("{:?}: {values:?} not covered", spec.name)
            };
            let plan = a.specializations[idx].instantiate(&values).unwrap();
            assert_eq!(
                plan,
                concrete_plan(&spec, &values).unwrap(),
                "{:?} at {values:?}",
                spec.name
            );
        }
    }
}

#[test]
fn seed_guards_are_weak_and_readable() {
    let a = compile_seed_spec().unwrap();
    let guards: Vec<String> = a.specializations[0]
        .guards
        .iter()
        .map(|g| g.cond.to_string())
        .collect();
    // Nothing about c, h, w beyond what a decision needed, and no product of symbols left.
    assert!(guards.iter().all(|g| !g.contains('*')), "{guards:?}");
    for g in &a.specializations[0].guards {
        assert!(!g.reason.is_empty());
    }
}

// ---------------------------------------------------------------------------------------
// Soundness property: random specs, random admitted bindings.

/// A random spec as JSON: a base shape of symbols/constants, inputs taking suffixes of it
/// with some dims replaced by 1, each with a layout or stride expressions.
fn spec_strategy() -> impl Strategy<Value = (Value, Vec<Vec<i64>>)> {
    let dim = prop_oneof![5 => (0usize..4).prop_map(Some), 1 => Just(None)];
    (
        prop::collection::vec(dim, 1..=5),
        1usize..=3,
        prop::collection::vec((any::<u64>(), 0usize..4), 3),
        prop::collection::vec(0i64..5, 4),
        prop::collection::vec(prop::collection::vec(0i64..6, 4), 24),
    )
        .prop_map(|(base, arity, inputs, hints, bindings)| {
            let names = ["a", "b", "c", "d"];
            let op = ["neg", "add", "addcmul"][arity - 1];
            let mut used = std::collections::BTreeSet::new();
            let mut ins = Vec::new();
            for (seed, kind) in inputs.into_iter().take(arity) {
                let mut rng = symstride::testing::Lcg::new(seed);
                let mut next = |m: u64| rng.below(m);
                let drop = next(base.len() as u64) as usize;
                let dims: Vec<Value> = base[drop..]
                    .iter()
                    .map(|d| match d {
                        _ if next(7) == 0 => Value::from(1),
                        Some(k) => {
                            used.insert(*k);
                            Value::from(names[*k])
                        }
                        None => Value::from(2 + next(2) as i64),
                    })
                    .collect();
                let rank = dims.len();
                let mut input = serde_json::Map::new();
                input.insert("sizes".into(), Value::from(dims.clone()));
                match kind {
                    1 if rank == 4 => {
                        input.insert("layout".into(), "channels_last".into());
                    }
                    1 if rank == 5 => {
                        input.insert("layout".into(), "channels_last_3d".into());
                    }
                    0 | 1 => {
                        input.insert("layout".into(), "contiguous".into());
                    }
                    _ => {
                        // Dense strides in a random order, sometimes with gaps or a zero.
                        let mut order: Vec<usize> = (0..rank).collect();
                        for i in (1..rank).rev() {
                            order.swap(i, next(i as u64 + 1) as usize);
                        }
                        let mut strides = vec![String::new(); rank];
                        let mut acc = "1".to_string();
                        for &d in &order {
                            strides[d] = if kind == 3 && next(4) == 0 {
                                "0".to_string()
                            } else {
                                acc.clone()
                            };
                            let size = match &dims[d] {
                                Value::String(s) => s.clone(),
                                v => v.to_string(),
                            };
                            let gap = if next(3) == 0 { "2*" } else { "" };
                            acc = format!("{gap}({acc})*{size}");
                        }
                        input.insert("strides".into(), Value::from(strides));
                    }
                }
                ins.push(Value::Object(input));
            }
            let hints: serde_json::Map<String, Value> = used
                .iter()
                .map(|&k| (names[k].to_string(), Value::from(hints[k])))
                .collect();
            let spec = serde_json::json!({"op": op, "inputs": ins, "hints": hints});
            let order: Vec<usize> = used.iter().copied().collect();
            let bindings = bindings
                .into_iter()
                .map(|b| order.iter().map(|&k| b[k]).collect())
                .collect();
            (spec, bindings)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn admitted_bindings_instantiate_the_concrete_plan((spec_json, bindings) in spec_strategy()) {
        let spec = Spec::from_value(&spec_json).unwrap();
        // Shapes may not broadcast at the hints: then there is nothing to specialize.
        let s = match trace(&spec, &spec.hints) {
            Ok(s) => s,
            Err(Error::Broadcast { .. }) => return Ok(()),
            Err(e) => panic!("{spec_json}: {e}"),
        };
        prop_assert!(s.admits(&spec.hints).unwrap());
        prop_assert_eq!(s.instantiate(&spec.hints).unwrap(), concrete_plan(&spec, &spec.hints).unwrap());
        let mut admitted = 0;
        let mut retraced = 0;
        for mut values in bindings {
            // Symbols ordered by first appearance in the spec.
            values.truncate(spec.symbols.len());
            if !s.admits(&values).unwrap() {
                // What dispatch does on a miss: trace at the binding itself (sizes 0 and 1
                // included); if a plan exists there, the new specialization must give it.
                if retraced < 4 {
                    retraced += 1;
                    match (trace(&spec, &values), concrete_plan(&spec, &values)) {
                        (Ok(t), Ok(fresh)) => {
                            prop_assert!(t.admits(&values).unwrap());
                            prop_assert_eq!(t.instantiate(&values).unwrap(), fresh, "{} retraced at {:?}", spec_json, values);
                        }
                        (Err(Error::Broadcast { .. }), Err(Error::Broadcast { .. })) => {}
                        (a, b) => prop_assert!(false, "{} at {:?}: trace {:?} vs concrete {:?}", spec_json, values, a.err(), b.err()),
                    }
                }
                continue;
            }
            admitted += 1;
            let fresh = concrete_plan(&spec, &values);
            prop_assert!(fresh.is_ok(), "{}: guards admit {:?} but the concrete build fails: {:?}", spec_json, values, fresh);
            let fresh = fresh.unwrap();
            let got = s.instantiate(&values).unwrap();
            prop_assert_eq!(&got, &fresh, "{} at {:?}", spec_json, values);
            let (sizes, strides) = s.output_layout(&values).unwrap();
            prop_assert_eq!(&sizes, &fresh.broadcast_shape);
            prop_assert_eq!(&strides, &fresh.output_strides[0]);
        }
        let _ = admitted;
    }
}

// ---------------------------------------------------------------------------------------
// Artifacts.

fn seed_artifact_json() -> String {
    compile_seed_spec().unwrap().to_json()
}

fn edit(json: &str, f: impl FnOnce(&mut Value)) -> String {
    let mut v: Value = serde_json::from_str(json).unwrap();
    f(&mut v);
    v.to_string()
}

#[test]
fn artifact_round_trips() {
    let spec = Spec::from_json(SEED_SPEC_JSON).unwrap();
    let a = compile_cover(&spec);
    let back = Artifact::from_json(&a.to_json()).unwrap();
    assert_eq!(back, a);
}

#[test]
fn tampered_artifacts_are_errors() {
    let good = seed_artifact_json();
    assert!(Artifact::from_json(&good).is_ok());
    let cases: Vec<(&str, String)> = vec![
        ("version", edit(&good, |v| v["version"] = 2.into())),
        ("format", edit(&good, |v| v["format"] = "other".into())),
        ("not JSON", good[..good.len() / 2].to_string()),
        ("spec", edit(&good, |v| v["spec"]["op"] = "tanh".into())),
        (
            "symbols",
            edit(&good, |v| v["symbols"] = serde_json::json!(["c", "h"])),
        ),
        (
            "cannot parse",
            edit(&good, |v| {
                v["specializations"][0]["guards"][0]["cond"] = "c >=".into()
            }),
        ),
        (
            "unknown symbol",
            edit(&good, |v| {
                v["specializations"][0]["guards"][0]["cond"] = "z >= 1".into()
            }),
        ),
        (
            "does not hold",
            edit(&good, |v| {
                v["specializations"][0]["guards"][0]["cond"] = "c >= 100".into()
            }),
        ),
        (
            "does not match",
            edit(&good, |v| {
                v["specializations"][0]["plan"]["operands"][1]["stride_bytes"][0] = "8".into()
            }),
        ),
        (
            "does not match",
            edit(&good, |v| {
                v["specializations"][0]["plan"]["output_strides"][0][1] = "2".into()
            }),
        ),
        (
            "does not match",
            edit(&good, |v| {
                v["specializations"][0]["plan"]["shape"][0] = "c + 1".into()
            }),
        ),
        (
            "permutation",
            edit(&good, |v| {
                v["specializations"][0]["plan"]["perm"] = serde_json::json!([0, 0, 1, 2])
            }),
        ),
        (
            "operands",
            edit(&good, |v| {
                v["specializations"][0]["plan"]["operands"]
                    .as_array_mut()
                    .unwrap()
                    .pop();
            }),
        ),
        (
            "strides for",
            edit(&good, |v| {
                v["specializations"][0]["plan"]["operands"][0]["stride_bytes"]
                    .as_array_mut()
                    .unwrap()
                    .pop();
            }),
        ),
        (
            "element_size",
            edit(&good, |v| {
                v["specializations"][0]["plan"]["operands"][0]["element_size"] = 8.into()
            }),
        ),
        (
            "traced_at",
            edit(&good, |v| {
                v["specializations"][0]["traced_at"]["c"] = (-3).into()
            }),
        ),
        (
            "no specializations",
            edit(&good, |v| v["specializations"] = serde_json::json!([])),
        ),
        ("unknown field", edit(&good, |v| v["extra"] = 1.into())),
        (
            "invalid type",
            edit(&good, |v| {
                v["specializations"][0]["plan"]["shape"] = 3.into()
            }),
        ),
    ];
    for (needle, text) in cases {
        match Artifact::from_json(&text) {
            Ok(_) => panic!("tampered artifact ({needle}) accepted"),
            Err(e) => {
                assert!(matches!(e, Error::Artifact { .. }), "{needle}: {e:?}");
                assert!(e.to_string().contains(needle), "{needle}: {e}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Dispatch.

fn seed_inputs(spec: &Spec, c: i64, h: i64, w: i64) -> Vec<(Vec<i64>, Vec<i64>)> {
    spec.concrete_inputs(&[c, h, w]).unwrap()
}

fn refs(v: &[(Vec<i64>, Vec<i64>)]) -> Vec<(&[i64], &[i64])> {
    v.iter().map(|(a, b)| (&a[..], &b[..])).collect()
}

#[test]
fn dispatch_hits_misses_and_retraces() {
    let d = Dispatcher::new(compile_seed_spec().unwrap()).unwrap();
    let spec = d.spec().clone();
    let mut plan = empty_plan();
    for (c, h, w, hit) in [
        (3, 4, 5, true),
        (8, 16, 32, true),
        (3, 1, 5, false),
        (3, 1, 7, true),
        (3, 4, 5, true),
    ] {
        let inputs = seed_inputs(&spec, c, h, w);
        let r = d.dispatch(&refs(&inputs), &mut plan).unwrap();
        assert_eq!(r.retraced, !hit, "{c},{h},{w}");
        assert_eq!(plan, concrete_plan(&spec, &[c, h, w]).unwrap());
    }
    let s = d.stats();
    assert_eq!(
        (s.hits, s.misses, s.retraces, s.specializations),
        (4, 1, 1, 2)
    );
    // The cache round-trips through an artifact.
    let again = Artifact::from_json(&d.to_artifact().to_json()).unwrap();
    assert_eq!(again.specializations.len(), 2);
}

#[test]
fn binding_rejects_inconsistent_inputs() {
    let d = Dispatcher::new(compile_seed_spec().unwrap()).unwrap();
    let spec = d.spec().clone();
    let mut inputs = seed_inputs(&spec, 3, 4, 5);
    inputs[1] = seed_inputs(&spec, 3, 4, 6)[1].clone();
    let err = d.bind(&refs(&inputs)).unwrap_err().to_string();
    assert!(err.contains("already bound"), "{err}");
    let mut inputs = seed_inputs(&spec, 3, 4, 5);
    inputs[0].0[0] = 3;
    assert!(d
        .bind(&refs(&inputs))
        .unwrap_err()
        .to_string()
        .contains("fixes it to 2"));
    let mut inputs = seed_inputs(&spec, 3, 4, 5);
    inputs[0].1 = vec![60, 20, 5, 1];
    assert!(d
        .bind(&refs(&inputs))
        .unwrap_err()
        .to_string()
        .contains("channels_last"));
    let inputs = seed_inputs(&spec, 3, 4, 5);
    assert!(d.bind(&refs(&inputs[..1])).is_err());
}

#[test]
fn concurrent_dispatch_equals_serial() {
    let d = Arc::new(Dispatcher::new(compile_seed_spec().unwrap()).unwrap());
    let spec = d.spec().clone();
    let shapes: Vec<[i64; 3]> = (0..60)
        .map(|i| [1 + i % 3, 1 + (i / 3) % 4, 1 + (i / 12) % 5])
        .collect();
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let d = Arc::clone(&d);
            let spec = spec.clone();
            let shapes = shapes.clone();
            std::thread::spawn(move || {
                let mut plan = empty_plan();
                for k in 0..shapes.len() {
                    let [c, h, w] = shapes[(k * (t + 1)) % shapes.len()];
                    let inputs = seed_inputs(&spec, c, h, w);
                    d.dispatch(&refs(&inputs), &mut plan).unwrap();
                    assert_eq!(
                        plan,
                        concrete_plan(&spec, &[c, h, w]).unwrap(),
                        "{c},{h},{w}"
                    );
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let s = d.stats();
    assert_eq!(s.hits + s.misses, 4 * shapes.len() as u64);
    // Every cached specialization is distinct and sound where it admits.
    for [c, h, w] in &shapes {
        let k = d.lookup(&[*c, *h, *w]).unwrap().expect("cached");
        let sp = d.specialization(k).unwrap();
        assert_eq!(
            sp.instantiate(&[*c, *h, *w]).unwrap(),
            concrete_plan(&spec, &[*c, *h, *w]).unwrap()
        );
    }
}

// ---------------------------------------------------------------------------------------
// Execution through the kernel layer.

use symstride::aot::{random_inputs, verify, Specialization};
use symstride::kernel::ExecConfig;
use symstride::tensor::Tensor;

#[test]
fn execute_matches_reference_for_every_public_spec() {
    for (spec, rows) in coverage() {
        let a = Artifact::compile(&spec, &CompileOptions::default()).unwrap();
        let d = Dispatcher::new(a).unwrap();
        for (i, r) in rows.iter().take(12).enumerate() {
            let inputs = random_inputs(&spec, &r.values, i as u64).unwrap();
            let refs: Vec<&Tensor<f32>> = inputs.iter().collect();
            let e = d.execute(&refs, &ExecConfig::default()).unwrap();
            assert_eq!(e.output.sizes(), &r.sizes[..]);
            assert_eq!(
                e.output.strides(),
                &r.strides[..],
                "{:?} at {:?}",
                spec.name,
                r.values
            );
            let n = verify(spec.op, &refs, &e.output).unwrap();
            assert_eq!(n as i64, r.sizes.iter().product::<i64>());
        }
    }
}

#[test]
fn execute_uses_real_storage_offsets() {
    let spec = Spec::from_json(SEED_SPEC_JSON).unwrap();
    let d = Dispatcher::new(compile_seed_spec().unwrap()).unwrap();
    let inputs = random_inputs(&spec, &[3, 4, 5], 7).unwrap();
    // The same layout as input 1, 17 elements into a larger storage.
    let big = Tensor::from_vec((0..200).map(|x| x as f32).collect(), &[200]).unwrap();
    let b = big
        .as_strided(inputs[1].sizes(), inputs[1].strides(), 17)
        .unwrap();
    let refs = [&inputs[0], &b];
    let e = d.execute(&refs, &ExecConfig::default()).unwrap();
    verify(spec.op, &refs, &e.output).unwrap();
}

#[test]
fn an_edit_agreeing_at_the_trace_point_is_rejected_and_cannot_reach_out_of_bounds() {
    // Agrees with the real stride at the trace point (c = 3) only: the loader's re-trace
    // compares the plans as expressions and rejects every such edit, naming the field.
    let good = seed_artifact_json();
    let v: Value = serde_json::from_str(&good).unwrap();
    let k = v["specializations"][0]["plan"]["operands"][2]["stride_bytes"]
        .as_array()
        .unwrap()
        .len();
    for d in 0..k {
        let edited = edit(&good, |v| {
            let s = &mut v["specializations"][0]["plan"]["operands"][2]["stride_bytes"][d];
            let old = s.as_str().unwrap().to_string();
            *s = format!("{old} + 1000*(c - 3)").into();
        });
        let err = Artifact::from_json(&edited).unwrap_err().to_string();
        assert!(
            err.contains("specialization 0") && err.contains(&format!("stride_bytes[{d}]")),
            "{err}"
        );
    }
    // Defense in depth: the same edit assembled without the loader (a library user building
    // a specialization by hand) is still bounds-checked before any kernel runs.
    let a = Artifact::from_json(&good).unwrap();
    let spec = a.spec.clone();
    let s0 = &a.specializations[0];
    let mut plan = s0.plan.clone();
    let last = plan.operands[2].byte_strides.len() - 1;
    let c = symstride::sym::Expr::parse("1000*(c - 3)").unwrap();
    plan.operands[2].byte_strides[last] = plan.operands[2].byte_strides[last].add(&c);
    let edited = Specialization::new(&spec, s0.traced_at.clone(), s0.guards.clone(), plan).unwrap();
    let d = Dispatcher::new(Artifact {
        spec: spec.clone(),
        specializations: vec![edited],
        coverage: None,
    })
    .unwrap();
    let inputs = random_inputs(&spec, &[8, 4, 5], 1).unwrap();
    let refs: Vec<&Tensor<f32>> = inputs.iter().collect();
    let err = d
        .execute(&refs, &ExecConfig::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("storage"), "{err}");
}

// ---------------------------------------------------------------------------------------
// The CLI.

#[test]
fn cli_compile_guards_check_run() {
    let dir = std::env::temp_dir().join(format!("symstride-aot-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let spec = dir.join("spec.json");
    let plan = dir.join("plan.json");
    std::fs::write(&spec, SEED_SPEC_JSON).unwrap();
    let p = |x: &std::path::Path| x.to_str().unwrap().to_string();

    let out = common::run(&["compile", &p(&spec), "-o", &p(&plan)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("1 specialization"));

    let out = common::run(&["guards", &p(&plan)]);
    let text = out.stdout.as_str();
    assert_eq!(out.code, 0);
    assert!(
        text.contains("h >= 2") && text.contains("compute_perm"),
        "{text}"
    );

    let out = common::run(&["check", &p(&plan), "--bind", "c=3,h=4,w=5"]);
    let v: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["pass"], true);
    assert_eq!(v["specialization"], 0);
    assert_eq!(v["output"]["strides"], serde_json::json!([60, 1, 15, 3]));

    let lines = dir.join("b.jsonl");
    std::fs::write(
        &lines,
        "{\"c\":3,\"h\":1,\"w\":5}\nnot json\n{\"c\":3,\"h\":4}\n{\"c\":8,\"h\":8,\"w\":8}\n",
    )
    .unwrap();
    let out = common::run(&["check", &p(&plan), "--bindings", &p(&lines)]);
    assert_ne!(out.code, 0);
    let stderr = out.stderr.as_str();
    assert!(stderr.contains(":2:") && stderr.contains(":3:"), "{stderr}");
    let got: Vec<Value> = out
        .stdout
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(got.len(), 4);
    assert_eq!(got[0]["pass"], false);
    assert_eq!(got[0]["failed_guard"], "h >= 2");
    assert!(got[0]["output"].is_null());
    assert!(got[1]["error"].is_string());
    assert_eq!(got[3]["pass"], true);

    let out = common::run(&[
        "run",
        &p(&plan),
        "--bind",
        "c=4,h=3,w=6",
        "--repeat",
        "3",
        "--threads",
        "2",
    ]);
    let text = out.stdout.as_str();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(text.contains("verified 144 elements"), "{text}");

    std::fs::write(&plan, "{\"format\":\"symstride-aot\",\"version\":99}").unwrap();
    let out = common::run(&["guards", &p(&plan)]);
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("version 99"));
    let _ = std::fs::remove_dir_all(&dir);
}
