//! Programs against PyTorch: `program_coverage.jsonl` (guards, coverage, outputs at random
//! bindings) and the soundness of the single trace against fresh concrete traces.

use proptest::prelude::*;
use serde_json::Value;
use std::time::Instant;
use symstride::aot::CoverOptions;
use symstride::program::{
    concrete, cover_program, program_uncovered_region, trace, Program, ProgramTrace,
};
use symstride::sym::Bindings;

fn coverage_lines() -> Vec<Value> {
    let path = symstride::testing::golden_path("program_coverage.jsonl");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn public_programs() -> Vec<Program> {
    let text =
        std::fs::read_to_string(symstride::testing::spec_path("public_programs.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|p| Program::from_value(p).unwrap())
        .collect()
}

/// The outputs' `{sizes, strides, dtype}` of layouts (PyTorch's `torch_out` form).
fn outputs_json(p: &Program, l: &[symstride::program::Value<i64>]) -> Value {
    let mut m = serde_json::Map::new();
    for &o in &p.outputs {
        m.insert(
            p.names[o].clone(),
            serde_json::json!({
                "sizes": l[o].sizes, "strides": l[o].strides, "dtype": l[o].dtype.name()
            }),
        );
    }
    Value::Object(m)
}

/// Our answer at `b` from the trace: outputs or the error category.
fn traced_answer(p: &Program, t: &ProgramTrace, b: &Bindings) -> Value {
    match &t.values {
        Ok(_) => outputs_json(p, &t.instantiate(b).unwrap()),
        Err(e) => serde_json::json!({ "error": e.category() }),
    }
}

/// For every public program: one trace at the hints; at every row binding the guards admit,
/// the instantiated outputs equal PyTorch's (an error only with PyTorch's category); the
/// concrete trace equals PyTorch at every row; guards and coverage compared with PyTorch's
/// (at least PyTorch's coverage with at most its number of guards) and printed
/// (`cargo test --test programs -- --nocapture`). The cover (`cover_program`, sizes >= 0):
/// proved complete (and re-proved from its traces), it admits every row binding, and the
/// first admitting trace's outputs (or error category) are PyTorch's at every row; its
/// trace count and compile time are printed in the same table.
#[test]
fn program_coverage_against_pytorch() {
    let lines = coverage_lines();
    assert_eq!(lines.len(), 10);
    println!("| program | guards ours/PyTorch | coverage ours/PyTorch | trace time ours/PyTorch | cover: specializations | cover: compile time |");
    println!("|---|---|---|---|---|---|");
    for line in &lines {
        let p = Program::from_value(&line["spec"]).unwrap();
        let hints = p.hint_bindings();
        let start = Instant::now();
        let t = trace(&p, &hints).unwrap();
        let ours_s = start.elapsed().as_secs_f64();
        let start = Instant::now();
        let cover = cover_program(&p, &CoverOptions::default()).unwrap();
        let cover_s = start.elapsed().as_secs_f64();
        assert!(
            cover.complete,
            "{}: cover incomplete: {:?}",
            p.name, cover.uncovered
        );
        assert_eq!(
            program_uncovered_region(&p, &cover.domain, &cover.traces),
            None,
            "{}: the cover's proof does not replay",
            p.name
        );
        let rows = line["rows"].as_array().unwrap();
        let mut admitted = 0usize;
        for row in rows {
            let b = p.bindings(row["binding"].as_object().unwrap()).unwrap();
            let torch = &row["torch_out"];
            // The concrete (eager) trace is PyTorch's at every binding.
            let eager = match concrete(&p, &b) {
                Ok(l) => outputs_json(&p, &l),
                Err(e) => serde_json::json!({ "error": e.category() }),
            };
            assert_eq!(
                &eager, torch,
                "{}: concrete at {:?}",
                p.name, row["binding"]
            );
            let k = cover.admitting(&b).unwrap().unwrap_or_else(|| {
                panic!(
                    "{}: the cover admits no trace at {:?}",
                    p.name, row["binding"]
                )
            });
            assert_eq!(
                &traced_answer(&p, &cover.traces[k], &b),
                torch,
                "{}: cover trace {k} (traced at {:?}) at {:?}",
                p.name,
                cover.traced_at[k],
                row["binding"]
            );
            if t.admits(&b).unwrap() {
                admitted += 1;
                assert_eq!(
                    &traced_answer(&p, &t, &b),
                    torch,
                    "{}: admitted binding {:?}",
                    p.name,
                    row["binding"]
                );
            }
        }
        let ours_cov = admitted as f64 / rows.len() as f64;
        let torch_cov = line["torch_coverage"].as_f64().unwrap();
        let torch_guards = line["torch_guards"].as_array().unwrap().len();
        let torch_s = line["torch_trace_s"].as_f64().unwrap();
        println!(
            "| {} | {}/{} | {:.3}/{:.3} | {:.2} ms/{:.1} ms | {} | {:.1} ms |",
            p.name,
            t.guards.len(),
            torch_guards,
            ours_cov,
            torch_cov,
            ours_s * 1e3,
            torch_s * 1e3,
            cover.traces.len(),
            cover_s * 1e3
        );
        assert!(
            ours_cov >= torch_cov,
            "{}: coverage {ours_cov} < PyTorch's {torch_cov}",
            p.name
        );
        assert!(
            t.guards.len() <= torch_guards,
            "{}: {} guards > PyTorch's {torch_guards}",
            p.name,
            t.guards.len()
        );
        for g in &t.guards.guards {
            println!("    {}    ({})", g.cond, g.reason);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Soundness: at random bindings the guards of a trace (at random hints) admit, the
    /// instantiated trace equals a fresh concrete trace (every value, not only outputs), and
    /// a trace that stopped at a step means the concrete run stops with the same category.
    #[test]
    fn admitted_bindings_instantiate_to_the_concrete_trace(
        which in 0usize..10,
        hints in proptest::collection::vec(0i64..9, 4),
        points in proptest::collection::vec(proptest::collection::vec(0i64..12, 4), 16),
    ) {
        let programs = public_programs();
        let p = &programs[which % programs.len()];
        let bind = |vals: &[i64]| {
            Bindings::from_pairs(p.symbols.iter().zip(vals).map(|(s, &v)| (s.as_str(), v)))
        };
        let t = trace(p, &bind(&hints)).unwrap();
        for pt in &points {
            let b = bind(pt);
            if !t.admits(&b).unwrap() {
                continue;
            }
            match (&t.values, concrete(p, &b)) {
                (Ok(_), Ok(c)) => prop_assert_eq!(t.instantiate(&b).unwrap(), c),
                (Err(te), Err(ce)) => prop_assert_eq!(te.category(), ce.category()),
                (te, c) => prop_assert!(false, "{}: trace {:?} vs concrete {:?} at {:?}", p.name, te.as_ref().err(), c.err(), pt),
            }
        }
        // The trace point itself is always admitted.
        prop_assert!(t.admits(&bind(&hints)).unwrap());
    }
}

/// One random step applied to the previous value `prev` (menu index `k`).
fn random_step(k: usize, name: &str, prev: &str, flag: bool) -> Value {
    use serde_json::json;
    let (op, args): (&str, Value) = match k {
        0 => ("transpose", json!([prev, 0, -1])),
        1 => ("unsqueeze", json!([prev, 0])),
        2 => ("add", json!([prev, "x"])),
        3 => ("mul", json!([prev, 2])),
        4 => ("relu", json!([prev])),
        5 => ("sum", json!([prev, [-1]])),
        6 => ("amax", json!([prev, [0]])),
        7 => ("reshape", json!([prev, [-1]])),
        8 => ("contiguous", json!([prev])),
        9 => ("select", json!([prev, 0, 0])),
        10 => ("narrow", json!([prev, -1, 0, 1])),
        11 => ("flatten", json!([prev, 0, -1])),
        12 => ("view", json!([prev, ["a", -1]])),
        13 => ("expand", json!([prev, [2, -1, -1, -1]])),
        14 => ("argmax", json!([prev, -1])),
        _ => ("div", json!([prev, "x"])),
    };
    let mut step = json!({"let": name, "op": op, "args": args});
    if matches!(op, "sum" | "amax" | "argmax") {
        step["keepdim"] = json!(flag);
    }
    if op == "contiguous" && flag {
        step["memory_format"] = json!("channels_last");
    }
    step
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Soundness over random programs (chains of views, ops, reductions and copies over an
    /// input `x` of sizes `[a, b, c]`, row- or column-major): at random bindings the guards of
    /// one trace admit, the instantiated trace equals a fresh concrete trace, or both stop
    /// with the same error category.
    #[test]
    fn random_programs_are_sound(
        menu in proptest::collection::vec((0usize..16, any::<bool>()), 1..6),
        column_major in any::<bool>(),
        hints in proptest::collection::vec(0i64..5, 3),
        points in proptest::collection::vec(proptest::collection::vec(0i64..6, 3), 12),
    ) {
        use serde_json::json;
        let layout = if column_major {
            json!({"name": "x", "sizes": ["a", "b", "c"], "strides": ["1", "a", "a*b"]})
        } else {
            json!({"name": "x", "sizes": ["a", "b", "c"], "layout": "contiguous"})
        };
        let mut steps = Vec::new();
        let mut prev = "x".to_string();
        for (i, (k, flag)) in menu.iter().enumerate() {
            let name = format!("v{i}");
            steps.push(random_step(*k, &name, &prev, *flag));
            prev = name;
        }
        let spec = json!({
            "inputs": [layout],
            "hints": {"a": hints[0], "b": hints[1], "c": hints[2]},
            "steps": steps,
            "outputs": [prev],
        });
        // Static dtype errors (e.g. a reduction of an index tensor to a float-only op) are
        // rejected at parse time; nothing to trace then.
        let Ok(p) = Program::from_value(&spec) else { return Ok(()) };
        let bind = |v: &[i64]| Bindings::from_pairs([("a", v[0]), ("b", v[1]), ("c", v[2])]);
        let t = trace(&p, &bind(&hints)).unwrap();
        prop_assert!(t.admits(&bind(&hints)).unwrap());
        for pt in points.iter().chain([&hints]) {
            let b = bind(pt);
            if !t.admits(&b).unwrap() {
                continue;
            }
            match (&t.values, concrete(&p, &b)) {
                (Ok(_), Ok(c)) => prop_assert_eq!(t.instantiate(&b).unwrap(), c, "{} at {:?}", spec, pt),
                (Err(te), Err(ce)) => prop_assert_eq!(te.category(), ce.category(), "{} at {:?}", spec, pt),
                (te, c) => prop_assert!(false, "{spec} at {pt:?}: trace {:?} vs concrete {:?}", te.as_ref().err(), c.err()),
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// The cover over random programs (the menu above): at random bindings (sizes 0..6),
    /// a complete cover admits each one, and the first admitting trace's instantiated values
    /// equal a fresh concrete trace (or both stop with the same error category).
    #[test]
    fn random_program_covers_answer_every_binding(
        menu in proptest::collection::vec((0usize..16, any::<bool>()), 1..5),
        hints in proptest::collection::vec(1i64..5, 3),
        points in proptest::collection::vec(proptest::collection::vec(0i64..6, 3), 16),
    ) {
        use serde_json::json;
        let mut steps = Vec::new();
        let mut prev = "x".to_string();
        for (i, (k, flag)) in menu.iter().enumerate() {
            let name = format!("v{i}");
            steps.push(random_step(*k, &name, &prev, *flag));
            prev = name;
        }
        let spec = json!({
            "inputs": [{"name": "x", "sizes": ["a", "b", "c"], "layout": "contiguous"}],
            "hints": {"a": hints[0], "b": hints[1], "c": hints[2]},
            "steps": steps,
            "outputs": [prev],
        });
        let Ok(p) = Program::from_value(&spec) else { return Ok(()) };
        let cover = cover_program(&p, &CoverOptions { zero: true, max_specializations: 64 }).unwrap();
        if !cover.complete {
            // Reported, not hidden: the regions left are named; nothing more to check.
            prop_assert!(!cover.uncovered.is_empty());
            return Ok(());
        }
        for pt in &points {
            let b = Bindings::from_pairs([("a", pt[0]), ("b", pt[1]), ("c", pt[2])]);
            let k = cover.admitting(&b).unwrap();
            prop_assert!(k.is_some(), "{} at {:?}: complete cover admits nothing", spec, pt);
            let t = &cover.traces[k.unwrap()];
            match (&t.values, concrete(&p, &b)) {
                (Ok(_), Ok(c)) => prop_assert_eq!(t.instantiate(&b).unwrap(), c, "{} at {:?}", spec, pt),
                (Err(te), Err(ce)) => prop_assert_eq!(te.category(), ce.category(), "{} at {:?}", spec, pt),
                (te, c) => prop_assert!(false, "{spec} at {pt:?}: trace {:?} vs concrete {:?}", te.as_ref().err(), c.err()),
            }
        }
    }
}
