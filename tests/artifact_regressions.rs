//! Every artifact the compiler writes loads: the programs that a compile (plain or
//! `--cover`) once turned into files its own loader rejected (`tests/specs/regressions/`,
//! and two of the hard programs), compiled, saved, loaded, and the loaded artifact checked
//! against fresh concrete runs at every binding of a grid it admits.

use serde_json::Value as Json;
use symstride::aot::CoverOptions;
use symstride::program::{concrete, Program, ProgramArtifact};
use symstride::sym::Bindings;
use symstride::Error;

fn regression(file: &str) -> Program {
    let path = symstride::testing::spec_path(&format!("regressions/{file}"));
    let text = std::fs::read_to_string(&path).unwrap();
    Program::from_json(&text).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn hard(name: &str) -> Program {
    let text =
        std::fs::read_to_string(symstride::testing::spec_path("hard_programs.json")).unwrap();
    let v: Json = serde_json::from_str(&text).unwrap();
    let p = v
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no hard program {name}"));
    Program::from_value(p).unwrap()
}

/// Every point whose values are each in `0..=max` or within one of the symbol's hint.
fn grid(hints: &[i64], max: i64) -> Vec<Vec<i64>> {
    let mut out = vec![Vec::new()];
    for &h in hints {
        let mut values: Vec<i64> = (0..=max)
            .chain([h - 1, h, h + 1])
            .filter(|v| *v >= 0)
            .collect();
        values.sort_unstable();
        values.dedup();
        out = out
            .into_iter()
            .flat_map(|v| {
                values.iter().map(move |&x| {
                    let mut w = v.clone();
                    w.push(x);
                    w
                })
            })
            .collect();
    }
    out
}

/// Saves `a` to a file, loads it back (the loader's full verification), and checks that
/// the loaded artifact is the compiled one and that at every grid binding it admits, its
/// values equal a fresh concrete run (or both fail with one category). Returns how many
/// grid bindings were admitted.
fn saved_loads_and_is_sound(a: &ProgramArtifact, what: &str, max: i64) -> usize {
    let dir = std::env::temp_dir().join(format!(
        "symstride_artifact_regressions_{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{what}.json"));
    a.save(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).ok();
    let back = ProgramArtifact::from_json(&text).unwrap_or_else(|e| {
        panic!("{what}: the compile wrote an artifact its loader rejects: {e}")
    });
    assert_eq!(&back, a, "{what}: loaded != compiled");
    assert_eq!(back.coverage, a.coverage, "{what}");
    let p = &back.program;
    let mut admitted = 0;
    for pt in grid(&p.hints, max) {
        let b = Bindings::from_pairs(p.symbols.iter().zip(&pt).map(|(s, &v)| (s.as_str(), v)));
        let fresh = concrete(p, &b);
        let check = match back.check(&pt) {
            Ok(c) => c,
            // A guard that cannot be evaluated (`n**30` past i64): the concrete run
            // fails the same way.
            Err(e) => {
                let f = fresh.expect_err(&format!("{what} at {pt:?}: check fails: {e}"));
                assert_eq!(e.category(), f.category(), "{what} at {pt:?}");
                continue;
            }
        };
        let Some(k) = check.specialization else {
            // Not admitted: a complete cover admits every binding of its domain.
            if let Some(c) = back.coverage.as_ref().filter(|c| c.complete) {
                let in_domain = c.domain.iter().all(|d| d.eval(&b).unwrap_or(false));
                assert!(!in_domain, "{what}: a complete cover does not admit {pt:?}");
            }
            continue;
        };
        admitted += 1;
        let s = &back.specializations[k];
        match (s.instantiate(&pt), fresh) {
            (Ok(x), Ok(y)) => assert_eq!(x, y, "{what} at {pt:?}"),
            (Err(x), Err(y)) => assert_eq!(x.category(), y.category(), "{what} at {pt:?}"),
            (x, y) => panic!("{what} at {pt:?}: {:?} vs {:?}", x.err(), y.err()),
        }
    }
    admitted
}

/// Compiles `p` plainly and with `--cover` (with and without size 0), and checks each
/// artifact as [`saved_loads_and_is_sound`] does.
fn compiles_saves_and_loads(p: &Program, max: i64) {
    compiles_saves_and_loads_or_refuses(p, max, false)
}

/// [`compiles_saves_and_loads`]; with `may_refuse`, a cover may instead be refused by its
/// compile with a clear error (what it cannot verify it does not write), but never written
/// and then rejected, and may end incomplete, naming the regions it left (covers left
/// incomplete on empty `FloorDiv` regions are the emptiness prover's part of the issue).
fn compiles_saves_and_loads_or_refuses(p: &Program, max: i64, may_refuse: bool) {
    let plain =
        ProgramArtifact::compile(p).unwrap_or_else(|e| panic!("{}: plain compile: {e}", p.name));
    assert!(saved_loads_and_is_sound(&plain, &format!("{}_plain", p.name), max) > 0);
    for zero in [true, false] {
        let options = CoverOptions {
            zero,
            ..CoverOptions::default()
        };
        let what = format!("{}_cover_zero_{zero}", p.name);
        let a = match ProgramArtifact::compile_cover(p, &options) {
            Ok(a) => a,
            Err(e) if may_refuse => {
                let e = e.to_string();
                assert!(
                    e.contains("the compile cannot verify") && e.contains("no artifact is written"),
                    "{what}: {e}"
                );
                continue;
            }
            Err(e) => panic!("{what}: compile: {e}"),
        };
        let c = a.coverage.as_ref().expect("a cover records its coverage");
        if may_refuse {
            assert!(c.complete == c.uncovered.is_empty(), "{what}: {c:?}");
        } else {
            assert!(c.complete, "{what}: incomplete: {:?}", c.uncovered);
        }
        assert!(saved_loads_and_is_sound(&a, &what, max) > 0);
    }
}

#[test]
fn cover_reject_budget_loads() {
    compiles_saves_and_loads(&regression("cover_reject_budget.json"), 2);
}

#[test]
fn cover_reject_unfold_loads() {
    compiles_saves_and_loads(&regression("cover_reject_unfold.json"), 3);
}

#[test]
fn cover_no_symbols_loads() {
    compiles_saves_and_loads(&regression("cover_no_symbols.json"), 0);
}

/// `n**30` overflows at the hint `n = 5`, where the concrete run fails: the compile fails
/// the same way (no guard can describe where an expression overflows) and writes nothing;
/// at a hint where it fits, the artifact loads.
#[test]
fn pow_artifact_is_an_overflow_at_its_hint_and_loads_elsewhere() {
    let p = regression("pow_artifact.json");
    let overflow = |e: &Error| matches!(e, Error::Overflow { .. });
    let fresh = concrete(&p, &p.hint_bindings()).unwrap_err();
    assert!(overflow(&fresh), "{fresh}");
    let plain = ProgramArtifact::compile(&p).unwrap_err();
    assert!(overflow(&plain), "{plain}");
    let cover = ProgramArtifact::compile_cover(&p, &CoverOptions::default()).unwrap_err();
    assert!(overflow(&cover), "{cover}");
    // Not beyond `n = 4` (the grid goes one past the hint): past it `n**30` overflows, where the error specialization of the
    // view (`shape`) and the concrete run (an overflow) fail in different categories.
    for n in [2, 3] {
        let mut v: Json = serde_json::from_str(
            &std::fs::read_to_string(symstride::testing::spec_path(
                "regressions/pow_artifact.json",
            ))
            .unwrap(),
        )
        .unwrap();
        v["hints"]["n"] = Json::from(n);
        compiles_saves_and_loads(&Program::from_value(&v).unwrap(), 4);
    }
}

/// Its cover merges a specialization whose verification splits off a region that is empty
/// (`b == 0`, `t == 2` by `FloorDiv(t + 1, 2) == 1` and `FloorDiv(t, 2) == FloorDiv(t + 1,
/// 2)`, then `t == FloorDiv(t + 1, 2)` fails) but not provably so to the emptiness test of
/// the verifier: until that test proves it, the compile refuses the cover rather than
/// write a file its loader rejects.
#[test]
fn hard_time_pool_stride2_loads_or_is_refused() {
    compiles_saves_and_loads_or_refuses(&hard("time_pool_stride2"), 6, true);
}

#[test]
fn hard_cl_crop_flatten_tokens_loads() {
    compiles_saves_and_loads_or_refuses(&hard("cl_crop_flatten_tokens"), 3, true);
}

/// A compile verifies what it writes with the loader's procedure and stores the points
/// that verification traced at (`verify_points`), which a load replays.
#[test]
fn a_cover_stores_its_verify_points_and_a_load_replays_them() {
    let p = regression("cover_reject_budget.json");
    let a = ProgramArtifact::compile_cover(&p, &CoverOptions::default()).unwrap();
    assert!(a.specializations.iter().all(|s| s.verify_points.is_some()));
    assert!(
        a.specializations
            .iter()
            .any(|s| s.verify_points.as_ref().is_some_and(|v| !v.is_empty())),
        "no specialization needed a trace beyond its own point"
    );
    let json: Json = serde_json::from_str(&a.to_json()).unwrap();
    for (k, s) in a.specializations.iter().enumerate() {
        let stored = &json["specializations"][k]["verify_points"];
        let points: Vec<Vec<i64>> = serde_json::from_value(stored.clone()).unwrap();
        assert_eq!(
            Some(&points),
            s.verify_points.as_ref(),
            "specialization {k}"
        );
    }
    let back = ProgramArtifact::from_json(&a.to_json()).unwrap();
    assert_eq!(back, a);
}
