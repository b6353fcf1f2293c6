//! Artifacts cannot lie (issue 17, finding 2): the loader re-traces every specialization at
//! its trace point and rejects weakened or deleted guards, plan expressions edited to agree
//! only at the trace point, a dropped specialization (when detectable) and other versions,
//! naming the specialization and the guard or field.

use serde_json::Value;
use symstride::aot::{concrete_plan, Artifact, CompileOptions, Spec};
use symstride::testing::spec_path;

fn public_specs() -> Vec<Spec> {
    let text = std::fs::read_to_string(spec_path("public_specs.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| Spec::from_value(s).unwrap())
        .collect()
}

fn compile(spec: &Spec, cover: bool) -> String {
    Artifact::compile(
        spec,
        &CompileOptions {
            cover,
            ..Default::default()
        },
    )
    .unwrap()
    .to_json()
}

fn edit(json: &str, f: impl FnOnce(&mut Value)) -> String {
    let mut v: Value = serde_json::from_str(json).unwrap();
    f(&mut v);
    v.to_string()
}

fn guards_of(json: &str, k: usize) -> Vec<String> {
    let v: Value = serde_json::from_str(json).unwrap();
    v["specializations"][k]["guards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["cond"].as_str().unwrap().to_string())
        .collect()
}

fn load_err(json: &str) -> String {
    match Artifact::from_json(json) {
        Ok(_) => panic!("the edited artifact loaded"),
        Err(e) => e.to_string(),
    }
}

/// `add` of `[a, b]` and `[d, e]`, all four sizes independent: its cover has error
/// specializations and widened guards.
fn independent_2d() -> Spec {
    Spec::from_json(
        r#"{"op":"add","inputs":[{"sizes":["a","b"],"layout":"contiguous"},{"sizes":["d","e"],"layout":"contiguous"}],"hints":{"a":2,"b":3,"d":2,"e":3}}"#,
    )
    .unwrap()
}

/// The index of the first error specialization of an artifact.
fn error_specialization(json: &str) -> usize {
    let v: Value = serde_json::from_str(json).unwrap();
    v["specializations"]
        .as_array()
        .unwrap()
        .iter()
        .position(|s| !s["error"].is_null())
        .expect("an error specialization")
}

/// The artifact without its verification hints (as written before they were stored).
fn without_verify_points(json: &str) -> String {
    edit(json, |v| {
        for s in v["specializations"].as_array_mut().unwrap() {
            s.as_object_mut().unwrap().remove("verify_points");
        }
    })
}

/// Every binding of a small grid (each symbol 0..=4) that `a` admits gets the plan a fresh
/// concrete build computes there.
fn assert_sound(a: &Artifact, what: &str) {
    assert_sound_on_grid(a, 5, what)
}

/// [`assert_sound`] on the grid `{0, ..., k - 1}^n`.
fn assert_sound_on_grid(a: &Artifact, k: usize, what: &str) {
    let n = a.spec.symbols.len();
    let total = k.pow(n as u32);
    for i in 0..total {
        let mut r = i;
        let values: Vec<i64> = (0..n)
            .map(|_| {
                let v = (r % k) as i64;
                r /= k;
                v
            })
            .collect();
        let Ok(expected) = concrete_plan(&a.spec, &values) else {
            continue;
        };
        for s in &a.specializations {
            if s.admits(&values).unwrap() {
                assert_eq!(
                    s.instantiate(&values).unwrap(),
                    expected,
                    "{what}: admitted {values:?}"
                );
                break;
            }
        }
    }
}

/// The seed spec's artifact with specialization 0's guard `c >= 2` replaced by `cond`.
fn seed_with_c_guard(cond: &str) -> String {
    let good = compile(&public_specs()[0], false);
    let guards = guards_of(&good, 0);
    let i = guards.iter().position(|g| g == "c >= 2").expect("c >= 2");
    edit(&good, |v| {
        v["specializations"][0]["guards"][i]["cond"] = cond.into();
    })
}

/// The issue's kind of edit: the seed spec's `c >= 2` weakened, here to `c >= 0`, which
/// admits `c = 0`, where the output strides differ. (Weakened to `c >= 1` it now loads, and
/// rightly: since a cover can widen a plan over sizes 1 by coalescing it again, the loader
/// proves the stored plan is the fresh build's at `c = 1` too; see
/// `weakened_to_where_the_plan_still_holds_loads_and_is_sound`.) Loaded before the fix.
#[test]
fn weakened_guard_is_rejected_naming_specialization_and_guard() {
    let bad = seed_with_c_guard("c >= 0");
    let err = load_err(&bad);
    assert!(
        err.contains("specialization 0") && err.contains("guard `c ") && err.contains("c=0"),
        "{err}"
    );
}

/// `c >= 2` weakened to `c >= 1`: the seed spec's plan, instantiated at `c = 1` and
/// coalesced again, is the fresh build's there (the guard was one too many), so the loader
/// proves the edit harmless and accepts it; every binding it admits then gets the fresh
/// plan.
#[test]
fn weakened_to_where_the_plan_still_holds_loads_and_is_sound() {
    let spec = &public_specs()[0];
    let edited = seed_with_c_guard("c >= 1");
    let a = Artifact::from_json(&edited).expect("loads");
    let s = &a.specializations[0];
    let mut admitted_c1 = 0;
    for c in 0..5 {
        for h in 0..5 {
            for w in 0..5 {
                let v = [c, h, w];
                if s.admits(&v).unwrap() {
                    admitted_c1 += usize::from(c == 1);
                    assert_eq!(s.instantiate(&v).unwrap(), concrete_plan(spec, &v).unwrap(), "{v:?}");
                }
            }
        }
    }
    assert!(admitted_c1 > 0, "the edit admits c = 1");
}

#[test]
fn deleted_guard_is_rejected_naming_specialization_and_guard() {
    let spec = &public_specs()[0];
    let good = compile(spec, false);
    let guards = guards_of(&good, 0);
    let i = guards.iter().position(|g| g == "c >= 2").expect("c >= 2");
    let bad = edit(&good, |v| {
        v["specializations"][0]["guards"]
            .as_array_mut()
            .unwrap()
            .remove(i);
    });
    let err = load_err(&bad);
    assert!(
        err.contains("specialization 0") && err.contains("guard `c ") && err.contains("c=0"),
        "{err}"
    );
}

/// Every single-guard deletion and every `>= 2` -> `>= 1` / `!= 1` -> `>= 0` weakening of
/// every public spec's artifact (one specialization, and the first specializations of its
/// `--cover` artifact): rejected, or sound on a grid of bindings. The loader verifies what
/// the stored guards admit, so an edit is accepted only where fresh traces prove the
/// stored plan right on everything it now admits (e.g. the seed spec's `h >= 2`: at h = 1
/// the trace gives the very same plan). All of these edits loaded before.
#[test]
fn every_guard_edit_of_the_public_specs_is_rejected_or_harmless() {
    let (mut rejected, mut total) = (0, 0);
    for spec in public_specs() {
        for cover in [false, true] {
            let good = compile(&spec, cover);
            let v: Value = serde_json::from_str(&good).unwrap();
            let n_spec = v["specializations"].as_array().unwrap().len().min(3);
            for k in 0..n_spec {
                let guards = guards_of(&good, k);
                for (i, g) in guards.iter().enumerate() {
                    let mut edits = vec![edit(&good, |v| {
                        v["specializations"][k]["guards"]
                            .as_array_mut()
                            .unwrap()
                            .remove(i);
                    })];
                    let weaker = if let Some(s) = g.strip_suffix(" >= 2") {
                        Some(format!("{s} >= 1"))
                    } else {
                        g.strip_suffix(" != 1").map(|s| format!("{s} >= 0"))
                    };
                    if let Some(w) = weaker {
                        edits.push(edit(&good, |v| {
                            v["specializations"][k]["guards"][i]["cond"] = w.into();
                        }));
                    }
                    for e in edits {
                        total += 1;
                        match Artifact::from_json(&e) {
                            Err(err) => {
                                let msg = err.to_string();
                                assert!(msg.contains(&format!("specialization {k}")), "{msg}");
                                rejected += 1;
                            }
                            Ok(a) => assert_sound(&a, &format!("{} edit of `{g}`", spec.op)),
                        }
                    }
                }
            }
        }
    }
    assert!(total >= 40, "{total} edits");
    assert!(rejected * 2 >= total, "{rejected} of {total} rejected");
}

/// A plan expression changed so that it agrees with the real one only at the trace point.
#[test]
fn plan_expression_agreeing_only_at_the_trace_point_is_rejected() {
    for spec in public_specs() {
        let good = compile(&spec, false);
        let name = &spec.symbols[0];
        let hint = spec.hints[0];
        let bad = edit(&good, |v| {
            let s = &mut v["specializations"][0]["plan"]["output_strides"][0][0];
            let old = s.as_str().unwrap().to_string();
            *s = format!("{old} + 7*({name} - {hint})").into();
        });
        let err = load_err(&bad);
        assert!(
            err.contains("specialization 0") && err.contains("output_strides[0][0]"),
            "{err}"
        );
    }
}

/// Dropping the specialization traced at the hints is detected: by the re-proof of a
/// complete cover (the region it covered is left uncovered), or, for any artifact, because no
/// other specialization admits the hints. Only an artifact that claims no complete cover and
/// has another specialization admitting the hints may lose it unnoticed (dispatch re-traces).
#[test]
fn dropped_hint_specialization_is_rejected() {
    let mut detected = 0;
    for spec in public_specs() {
        let good = Artifact::from_json(&compile(&spec, true)).unwrap();
        let others_admit = good.specializations[1..]
            .iter()
            .any(|s| s.admits(&spec.hints).unwrap());
        let complete = good.coverage.as_ref().is_some_and(|c| c.complete);
        let bad = edit(&good.to_json(), |v| {
            v["specializations"].as_array_mut().unwrap().remove(0);
        });
        match Artifact::from_json(&bad) {
            Err(e) => {
                let e = e.to_string();
                assert!(
                    (complete && e.contains("complete"))
                        || (!others_admit && e.contains("a specialization was removed")),
                    "{e}"
                );
                detected += 1;
            }
            Ok(_) => assert!(
                others_admit && !complete,
                "{}: dropped without notice",
                spec.op
            ),
        }
    }
    assert!(detected >= 3, "{detected}");
}

#[test]
fn wrong_version_is_rejected() {
    let spec = &public_specs()[0];
    let good = compile(spec, false);
    let bad = edit(&good, |v| v["version"] = 2.into());
    let err = load_err(&bad);
    assert!(err.contains("format version 2"), "{err}");
}

/// Honest artifacts of every public spec, with and without `--cover`, load.
#[test]
fn honest_artifacts_load() {
    for spec in public_specs() {
        for cover in [false, true] {
            let json = compile(&spec, cover);
            Artifact::from_json(&json).unwrap_or_else(|e| panic!("{} cover={cover}: {e}", spec.op));
        }
    }
}

/// The `artifact_load_100` bench artifact (`aot::artifact_100_json`): it loads with its 100
/// specializations, each admitting its own trace point, and the loader's verification of
/// a long cover still catches a weakened guard in the last specialization that has a
/// broadcast equality `x == y`, dropped (weakened to `x >= 0`): it admits shapes that do
/// not broadcast, or broadcast the other way. (The issue's `s >= 2` to `s >= 1` may now
/// load, rightly: the loader proves the plan, coalesced again where `s == 1`, the fresh
/// build's there; see `weakened_to_where_the_plan_still_holds_loads_and_is_sound`.)
#[test]
fn bench_artifact_loads_and_its_last_specialization_cannot_be_weakened() {
    let good = symstride::aot::artifact_100_json().unwrap();
    let a = Artifact::from_json(&good).unwrap();
    assert_eq!(a.specializations.len(), 100);
    for (k, s) in a.specializations.iter().enumerate() {
        assert!(s.admits(&s.traced_at).unwrap(), "specialization {k}");
    }
    let two_symbols = |g: &str| {
        let b = g.as_bytes();
        g.len() == 6 && &g[1..5] == " == " && b[0].is_ascii_lowercase() && b[5].is_ascii_lowercase()
    };
    let (k, i, g) = (0..100)
        .rev()
        .find_map(|k| {
            let guards = guards_of(&good, k);
            let i = guards.iter().position(|g| two_symbols(g))?;
            Some((k, i, guards[i].clone()))
        })
        .expect("a guard `x == y` in some specialization");
    assert!(k >= 50, "the edited specialization {k} is late in the artifact");
    let weak = format!("{} >= 0", &g[..1]);
    let bad = edit(&good, |v| {
        v["specializations"][k]["guards"][i]["cond"] = weak.into();
    });
    let err = load_err(&bad);
    assert!(err.contains(&format!("specialization {k}")), "{err}");
}

/// An error specialization is verified like a plan: widening its guards to admit shapes
/// that broadcast (here to every binding) is rejected, naming the specialization.
#[test]
fn weakened_error_specialization_is_rejected() {
    let spec = independent_2d();
    let good = compile(&spec, true);
    Artifact::from_json(&good).unwrap();
    let k = error_specialization(&good);
    let bad = edit(&good, |v| {
        v["specializations"][k]["guards"] = serde_json::json!([{"cond": "a >= 0", "reason": "edited"}]);
    });
    let err = load_err(&bad);
    assert!(err.contains(&format!("specialization {k}")), "{err}");
    assert!(err.contains("broadcast error") && err.contains("build succeeds"), "{err}");
}

/// The compile stores, per specialization, the points its own verification re-traced at
/// (`verify_points`), so that a load replays the case split without searching. They are
/// hints, never trusted: without them the artifact loads the same; malformed ones are
/// rejected by name; and points chosen to mislead do not make a weakened guard pass.
#[test]
fn verification_hints_are_checked_and_never_trusted() {
    let spec = independent_2d();
    let good = compile(&spec, true);
    let a = Artifact::from_json(&good).unwrap();
    let v: Value = serde_json::from_str(&good).unwrap();
    let specs = v["specializations"].as_array().unwrap();
    let hinted = specs
        .iter()
        .position(|s| s["verify_points"].as_array().is_some_and(|p| !p.is_empty()))
        .expect("a specialization whose verification traced beyond its trace point");
    assert!(specs.iter().all(|s| s["verify_points"].is_array()));
    // Loaded hints are the stored ones.
    assert_eq!(
        serde_json::to_value(&a.specializations[hinted].verify_points).unwrap(),
        specs[hinted]["verify_points"]
    );
    // Without hints: the same artifact.
    let stripped = without_verify_points(&good);
    assert_eq!(Artifact::from_json(&stripped).unwrap(), a);
    // Malformed hints name the field.
    for bad in [serde_json::json!([[1, 2]]), serde_json::json!([[1, 2, -3, 4]])] {
        let e = load_err(&edit(&good, |v| v["specializations"][hinted]["verify_points"] = bad));
        assert!(e.contains(&format!("specialization {hinted}")) && e.contains("verify_points"), "{e}");
    }
    // Every binding of a grid as hints, next to an error specialization widened to admit
    // everything: still rejected.
    let k = error_specialization(&good);
    let grid: Vec<Vec<i64>> = (0..256)
        .map(|i| (0..4).map(|d| (i >> (2 * d)) & 3).collect())
        .collect();
    let bad = edit(&good, |v| {
        v["specializations"][k]["guards"] =
            serde_json::json!([{"cond": "a >= 0", "reason": "edited"}]);
        v["specializations"][k]["verify_points"] = serde_json::to_value(&grid).unwrap();
    });
    let err = load_err(&bad);
    assert!(err.contains(&format!("specialization {k}")), "{err}");
}

/// A cover's widened specialization can need more re-traces to verify than the loader's
/// fixed budget (here `[a, ..., h] + [h]` covered in one run: the plan of its first
/// specialization is shared by 63 traced classes, the patterns of sizes 1 among `b..g`; the
/// default cover runs it as four parts, whose widened specializations are smaller, so the
/// premise needs `cover_parts` off). Such artifacts were written
/// and then refused by their own loader; now the compile verifies them, and the recorded
/// points both guide the load and extend its budget (one trace per point, so the cost
/// stays linear in the file). Without the points the fixed budget applies and the load is
/// refused as before; with them it loads, and what it admits is right.
#[test]
fn widened_specializations_load_with_their_recorded_points() {
    let spec = Spec::from_json(
        r#"{"op":"add","inputs":[{"sizes":["a","b","c","d","e","f","g","h"],"layout":"contiguous"},{"sizes":["h"],"layout":"contiguous"}],"hints":{"a":2,"b":3,"c":4,"d":5,"e":6,"f":7,"g":8,"h":9}}"#,
    )
    .unwrap();
    let good = Artifact::compile(
        &spec,
        &CompileOptions {
            cover: true,
            cover_parts: false,
            ..Default::default()
        },
    )
    .unwrap()
    .to_json();
    let a = Artifact::from_json(&good).unwrap();
    assert!(a.coverage.as_ref().is_some_and(|c| c.complete));
    assert_sound_on_grid(&a, 3, "`[a, ..., h] + [h]` cover");
    let stripped = without_verify_points(&good);
    let err = load_err(&stripped);
    assert!(err.contains("specialization 0") && err.contains("budget"), "{err}");
}

/// An empty-output specialization (every binding where the shapes broadcast and some input
/// is empty; the layout is computed at dispatch) is verified like the others: deleting any
/// of its guards admits bindings that are not empty or do not broadcast, and is rejected
/// naming it. A file cannot mark an error specialization as empty-output too, nor give an
/// empty-output specialization a plan.
#[test]
fn weakened_empty_output_specialization_is_rejected() {
    let spec = independent_2d();
    let good = compile(&spec, true);
    let a = Artifact::from_json(&good).unwrap();
    let k = (0..a.specializations.len())
        .find(|&k| a.specializations[k].is_empty_output())
        .expect("an empty-output specialization");
    let guards = guards_of(&good, k);
    assert!(guards.len() >= 3, "{guards:?}");
    for (i, g) in guards.iter().enumerate() {
        let bad = edit(&good, |v| {
            v["specializations"][k]["guards"]
                .as_array_mut()
                .unwrap()
                .remove(i);
        });
        let err = load_err(&bad);
        assert!(err.contains(&format!("specialization {k}")), "{g}: {err}");
    }
    let e = error_specialization(&good);
    let both = edit(&good, |v| v["specializations"][e]["empty_output"] = true.into());
    assert!(load_err(&both).contains("not both"));
    let with_plan = edit(&good, |v| {
        v["specializations"][k]["plan"] = v["specializations"][0]["plan"].clone();
    });
    assert!(load_err(&with_plan).contains("empty plan"));
}
