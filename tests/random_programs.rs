//! Random programs built from what broke in issue 39: `//` and `%` in arguments,
//! `unflatten(-1)`, slices with a step above 1, `diagonal` offsets, `unfold`, channels-last
//! crops then `contiguous`/`flatten`, programs without symbols, slices whose end is a symbol
//! that may exceed the size (`Min`), casts of non-finite values.
//!
//! For each program, the properties every artifact must have:
//!
//! * what the compiler writes loads: a plain compile and a `--cover` compile, each through
//!   its JSON and [`ProgramArtifact::from_json`] (the loader re-traces and re-proves);
//! * a cover is complete, or every region it leaves names a non-empty set: a binding of the
//!   domain in the region is found by brute force over a box of small values (a region
//!   without one is most likely an empty region the split failed to rule out);
//! * at random bindings, what a loaded artifact admits equals a fresh concrete trace (every
//!   value's layout, or the error category), every kernel plan it gives there equals a
//!   fresh build's (a step whose plan conditions fail gets none), and a complete cover
//!   admits every binding.
//!
//! The number of programs is `PROPTEST_CASES` (default [`DEFAULT_CASES`], sized for CI);
//! `RANDOM_PROGRAMS_SEED` picks another sequence. A longer run, e.g.
//! `PROPTEST_CASES=3000 cargo test --release --test random_programs -- --nocapture`,
//! reports every failing program (each shrunk by dropping steps while it still fails the
//! same way) instead of stopping at the first; `RANDOM_PROGRAMS_VERBOSE=1` prints each
//! failure as it is found, progress every 100 programs, and covers that failed to compile.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use symstride::aot::CoverOptions;
use symstride::program::{concrete, concrete_planned, Program, ProgramArtifact};
use symstride::sym::{Bindings, BoolExpr};

/// Programs per run unless `PROPTEST_CASES` says otherwise.
const DEFAULT_CASES: u32 = 24;
/// Specializations a cover may have here (small: the generator's programs are small).
const MAX_SPECIALIZATIONS: usize = 24;

/// Symbols the input sizes draw from.
const SYMBOLS: [&str; 3] = ["a", "b", "c"];

/// One step of the menu: which op (`k`), small integers `i`, `j`, `s`, a flag.
type Menu = (usize, i64, i64, i64, bool);

/// One generated program: an input `x` of rank 2 to 4 (sizes symbols or constants, some
/// layout and dtype), an input `z` of sizes `[e]` (its symbol `e` bounds slices), and a
/// chain of steps.
#[derive(Clone, Debug)]
struct Gen {
    sizes: Vec<Option<usize>>,
    consts: Vec<i64>,
    layout: usize,
    dtype: usize,
    hints: Vec<i64>,
    steps: Vec<Menu>,
}

fn gen() -> impl Strategy<Value = Gen> {
    (
        2usize..=4,
        prop::collection::vec(prop::option::weighted(0.75, 0usize..3), 4),
        prop::collection::vec(1i64..5, 4),
        0usize..3,
        0usize..6,
        prop::collection::vec(1i64..9, 4),
        prop::collection::vec(
            (0usize..20, -2i64..3, 0i64..4, 1i64..4, any::<bool>()),
            1..5,
        ),
    )
        .prop_map(|(rank, sizes, consts, layout, dtype, hints, steps)| Gen {
            sizes: sizes[..rank].to_vec(),
            consts,
            layout,
            dtype,
            hints,
            steps,
        })
}

const DTYPES: [&str; 6] = ["float32", "float64", "int64", "int32", "uint8", "bool"];

/// A step applied to `prev` (menu index `k`, small integers `i`, `j`, `s`, a flag); `u` and
/// `w` are integer expressions for arguments (symbols of `x`'s sizes, or constants).
fn step(
    name: &str,
    prev: &str,
    (u, w): (&str, &str),
    (k, i, j, s, flag): Menu,
) -> Value {
    let d = if flag { -1 } else { 0 };
    let (op, args, extra): (&str, Value, Value) = match k {
        // Slices with a step, ends that are symbols (a `Min` when it may exceed the size),
        // floor divisions, negative ends.
        0 => {
            let end = match j {
                0 => Value::Null,
                1 => json!("e"),
                2 => json!(format!("{u}//2")),
                _ => json!(-1),
            };
            (
                "slice",
                json!([prev, d, i.clamp(0, 1), end, s]),
                Value::Null,
            )
        }
        1 => ("narrow", json!([prev, d, format!("{u}%2"), 1]), Value::Null),
        2 => ("select", json!([prev, d, format!("{w}//2")]), Value::Null),
        3 => {
            let sizes = if flag { json!([2, -1]) } else { json!([-1, 2]) };
            ("unflatten", json!([prev, -1, sizes]), Value::Null)
        }
        4 => ("diagonal", json!([prev, i, 0, -1]), Value::Null),
        5 => ("unfold", json!([prev, d, s, j.max(1)]), Value::Null),
        6 => (
            "contiguous",
            json!([prev]),
            if flag {
                json!("channels_last")
            } else {
                Value::Null
            },
        ),
        7 => (
            "flatten",
            json!([prev, if flag { 1 } else { 0 }, -1]),
            Value::Null,
        ),
        8 => ("transpose", json!([prev, 0, -1]), Value::Null),
        9 => ("movedim", json!([prev, 0, -1]), Value::Null),
        10 => ("add", json!([prev, "z"]), Value::Null),
        11 => ("mul", json!([prev, 0.5]), Value::Null),
        12 => ("ne", json!([prev, 1]), Value::Null),
        // Non-finite values, then a cast of them to an integer type.
        13 => ("div", json!([prev, 0]), Value::Null),
        14 => (
            "to",
            json!([prev]),
            json!(["int32", "int64", "uint8", "float32"][(j as usize) % 4]),
        ),
        15 => ("sum", json!([prev, [-1]]), Value::Null),
        16 => ("amax", json!([prev, [0]]), Value::Null),
        17 => ("reshape", json!([prev, [-1]]), Value::Null),
        18 => (
            "narrow",
            json!([prev, d, format!("{u}//2"), format!("{u} - {u}//2")]),
            Value::Null,
        ),
        _ => ("slice", json!([prev, d, 1, "e - 1", 2]), Value::Null),
    };
    let mut st = json!({"let": name, "op": op, "args": args});
    match op {
        "contiguous" if !extra.is_null() => st["memory_format"] = extra,
        "to" => st["dtype"] = extra,
        "sum" | "amax" => st["keepdim"] = json!(flag),
        _ => {}
    }
    st
}

/// The program's spec; `keep` selects the steps (all of them for the generated program,
/// fewer when shrinking).
fn spec_of(g: &Gen, keep: &[bool]) -> Value {
    let sizes: Vec<Value> = g
        .sizes
        .iter()
        .enumerate()
        .map(|(i, s)| match s {
            Some(k) => json!(SYMBOLS[*k]),
            None => json!(g.consts[i]),
        })
        .collect();
    let rank = sizes.len();
    let mut x = json!({"name": "x", "sizes": sizes, "dtype": DTYPES[g.dtype]});
    match g.layout {
        1 if rank == 4 => x["layout"] = json!("channels_last"),
        2 => {
            // Column-major strides: 1, s0, s0*s1, ...
            let mut strides = Vec::new();
            let mut acc = "1".to_string();
            for s in &sizes {
                strides.push(json!(acc.clone()));
                let v = match s {
                    Value::String(n) => n.clone(),
                    other => other.to_string(),
                };
                acc = format!("{acc}*{v}");
            }
            x["strides"] = json!(strides);
        }
        _ => x["layout"] = json!("contiguous"),
    }
    // `z` only where a step uses `z` or `e`: programs without it (and with constant sizes)
    // have no symbols.
    let kept: Vec<(usize, &Menu)> = g
        .steps
        .iter()
        .enumerate()
        .filter(|(i, _)| keep[*i])
        .collect();
    // Argument expressions: the symbols of `x`'s sizes (the last two), or constants.
    let syms: Vec<&str> = g.sizes.iter().flatten().map(|k| SYMBOLS[*k]).collect();
    let u = syms.last().copied().unwrap_or("5");
    let w = syms.iter().rev().nth(1).copied().unwrap_or(u);
    let mut steps = Vec::new();
    let mut prev = "x".to_string();
    for (n, (_, st)) in kept.iter().enumerate() {
        let name = format!("v{n}");
        steps.push(step(&name, &prev, (u, w), **st));
        prev = name;
    }
    let uses_z = steps.iter().any(|st| {
        st["args"].as_array().is_some_and(|args| {
            args.iter()
                .any(|a| a.as_str().is_some_and(|a| a == "z" || a.starts_with('e')))
        })
    });
    let mut inputs = vec![x];
    if uses_z {
        inputs.push(
            json!({"name": "z", "sizes": ["e"], "dtype": DTYPES[g.dtype], "layout": "contiguous"}),
        );
    }
    let mut spec = json!({
        "name": "random",
        "inputs": inputs,
        "hints": {},
        "steps": steps,
        "outputs": [prev],
    });
    // A hint for every symbol: those of `x`'s sizes, and `e` with `z`.
    for (k, s) in SYMBOLS.iter().enumerate() {
        if syms.contains(s) {
            spec["hints"][*s] = json!(g.hints[k]);
        }
    }
    if uses_z {
        spec["hints"]["e"] = json!(g.hints[3]);
    }
    spec
}

/// Candidate values per symbol for the brute-force search of a region's binding.
fn box_values(k: usize) -> Vec<i64> {
    let mut v: Vec<i64> = (0..=if k <= 2 { 24 } else { 12 }).collect();
    v.extend([15, 16, 17, 31, 32, 33]);
    v
}

/// A binding of `symbols` where every one of `conds` holds, by brute force over a box.
fn brute_witness(symbols: &[String], conds: &[BoolExpr]) -> Option<Vec<i64>> {
    let vals = box_values(symbols.len());
    let mut idx = vec![0usize; symbols.len()];
    loop {
        let pt: Vec<i64> = idx.iter().map(|&i| vals[i]).collect();
        let b = Bindings::from_pairs(symbols.iter().map(|s| s.as_str()).zip(pt.iter().copied()));
        if conds.iter().all(|c| c.eval(&b).unwrap_or(false)) {
            return Some(pt);
        }
        let mut d = 0;
        loop {
            if d == idx.len() {
                return None;
            }
            idx[d] += 1;
            if idx[d] < vals.len() {
                break;
            }
            idx[d] = 0;
            d += 1;
        }
    }
}

/// What went wrong with one program: a category (to group and to shrink by) and details.
type Failure = (&'static str, String);

/// At each of `points`, the artifact's answer equals a fresh concrete trace.
fn answers_like_concrete(
    p: &Program,
    a: &ProgramArtifact,
    points: &[Vec<i64>],
    what: &str,
) -> Result<usize, Failure> {
    let mut admitted = 0;
    for pt in points {
        let b = Bindings::from_pairs(p.symbols.iter().map(|s| s.as_str()).zip(pt.iter().copied()));
        let check = a
            .check(pt)
            .map_err(|e| ("check error", format!("{what} at {pt:?}: {e}")))?;
        let Some(k) = check.specialization else {
            if a.coverage.as_ref().is_some_and(|c| c.complete) {
                return Err(("complete cover admits nothing", format!("{what} at {pt:?}")));
            }
            continue;
        };
        admitted += 1;
        match (&check.values, &check.error, concrete(p, &b)) {
            (Some(v), None, Ok(c)) => {
                if *v != c {
                    return Err((
                        "admitted binding differs from the concrete trace",
                        format!("{what}: specialization {k} at {pt:?}"),
                    ));
                }
                // Every stored kernel plan the specialization gives here (a step whose
                // plan conditions fail gets none: the run plans it) is the fresh build's.
                let (mut values, mut plans) = (Vec::new(), Vec::new());
                a.specializations[k]
                    .instantiate_with_plans(pt, &mut values, &mut plans)
                    .map_err(|e| ("check error", format!("{what} at {pt:?}: plans: {e}")))?;
                let (_, fresh) = concrete_planned(p, &b)
                    .map_err(|e| ("check error", format!("{what} at {pt:?}: {e}")))?;
                if let Some(step) = plans
                    .iter()
                    .zip(&fresh)
                    .position(|(ours, fresh)| ours.is_some() && ours != fresh)
                {
                    return Err((
                        "admitted binding's kernel plan differs from a fresh build's",
                        format!("{what}: specialization {k} at {pt:?}, step {}", step + 1),
                    ));
                }
            }
            (None, Some(cat), Err(e)) => {
                if cat != e.category() {
                    return Err((
                        "admitted binding differs from the concrete trace",
                        format!(
                            "{what}: specialization {k} at {pt:?}: error {cat} vs {}",
                            e.category()
                        ),
                    ));
                }
            }
            (v, e, c) => return Err((
                "admitted binding differs from the concrete trace",
                format!(
                    "{what}: specialization {k} at {pt:?}: values {} error {e:?} vs concrete {:?}",
                    v.is_some(),
                    c.err().map(|e| e.to_string())
                ),
            )),
        }
    }
    Ok(admitted)
}

/// Every property for one program spec. `Ok(None)` when the spec is not a program (a
/// static error, which parsing reports).
fn check_program(spec: &Value, points: &[Vec<i64>]) -> Result<Option<Stats>, Failure> {
    let Ok(p) = Program::from_value(spec) else {
        return Ok(None);
    };
    let mut stats = Stats::default();
    // Plain compile: written, it loads and answers like concrete traces.
    if let Ok(a) = ProgramArtifact::compile(&p) {
        let json = a.to_json();
        let loaded = ProgramArtifact::from_json(&json)
            .map_err(|e| ("plain artifact rejected on load", e.to_string()))?;
        answers_like_concrete(&p, &loaded, points, "plain")?;
    }
    let options = CoverOptions {
        zero: true,
        max_specializations: MAX_SPECIALIZATIONS,
    };
    let a = match ProgramArtifact::compile_cover(&p, &options) {
        Ok(a) => a,
        Err(e) => {
            stats.cover_errors += 1;
            if std::env::var_os("RANDOM_PROGRAMS_VERBOSE").is_some() {
                eprintln!("cover compile error (nothing written): {e}\n  {spec}");
            }
            return Ok(Some(stats));
        }
    };
    let json = a.to_json();
    let loaded = ProgramArtifact::from_json(&json)
        .map_err(|e| ("cover artifact rejected on load", e.to_string()))?;
    let coverage = loaded
        .coverage
        .as_ref()
        .expect("a cover artifact has its coverage");
    if coverage.complete {
        stats.complete += 1;
    } else {
        stats.incomplete += 1;
        for region in &coverage.uncovered {
            let mut conds = coverage.domain.clone();
            conds.push(region.clone());
            if brute_witness(&p.symbols, &conds).is_none() {
                if std::env::var_os("RANDOM_PROGRAMS_REGIONS").is_some() {
                    let all: Vec<String> = conds.iter().map(|c| c.to_string()).collect();
                    eprintln!("REGION\t{}", all.join("\t"));
                }
                return Err((
                    "uncovered region without a binding",
                    format!("region {region} (symbols {:?})", p.symbols),
                ));
            }
        }
    }
    stats.admitted += answers_like_concrete(&p, &loaded, points, "cover")?;
    Ok(Some(stats))
}

#[derive(Default, Debug)]
struct Stats {
    complete: usize,
    incomplete: usize,
    cover_errors: usize,
    admitted: usize,
}

/// Drops steps while the program still fails with the same category.
fn shrink(g: &Gen, points: &[Vec<i64>], category: &str) -> Value {
    let mut keep = vec![true; g.steps.len()];
    let mut changed = true;
    while changed {
        changed = false;
        for i in 0..keep.len() {
            if !keep[i] || keep.iter().filter(|k| **k).count() == 1 {
                continue;
            }
            keep[i] = false;
            let still =
                matches!(check_program(&spec_of(g, &keep), points), Err((c, _)) if c == category);
            if still {
                changed = true;
            } else {
                keep[i] = true;
            }
        }
    }
    spec_of(g, &keep)
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_CASES)
}

fn runner(cases: u32) -> TestRunner {
    let seed: u64 = std::env::var("RANDOM_PROGRAMS_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(39);
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(
        Config {
            cases,
            ..Config::default()
        },
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    )
}

/// The properties of the module docs over `PROPTEST_CASES` random programs; every failure
/// is listed (shrunk), then the test fails if there was one.
#[test]
fn random_programs_write_loadable_artifacts_that_answer_like_concrete_traces() {
    let n = cases();
    let mut runner = runner(n);
    let strategy = (
        gen(),
        prop::collection::vec(prop::collection::vec(0i64..9, 4), 12),
    );
    let mut failures: BTreeMap<&'static str, Vec<(String, Value)>> = BTreeMap::new();
    let (mut programs, mut total) = (0usize, Stats::default());
    let start = std::time::Instant::now();
    let verbose = std::env::var_os("RANDOM_PROGRAMS_VERBOSE").is_some();
    for case in 0..n {
        if verbose && case % 100 == 0 {
            eprintln!(
                "{case} programs, {:.1} s, {} failing",
                start.elapsed().as_secs_f64(),
                failures.values().map(Vec::len).sum::<usize>()
            );
        }
        let (g, raw_points) = strategy.new_tree(&mut runner).unwrap().current();
        let spec = spec_of(&g, &vec![true; g.steps.len()]);
        let nsym = Program::from_value(&spec).map_or(0, |p| p.symbols.len());
        let points: Vec<Vec<i64>> = raw_points.iter().map(|p| p[..nsym].to_vec()).collect();
        match check_program(&spec, &points) {
            Ok(None) => {}
            Ok(Some(s)) => {
                programs += 1;
                total.complete += s.complete;
                total.incomplete += s.incomplete;
                total.cover_errors += s.cover_errors;
                total.admitted += s.admitted;
            }
            Err((category, detail)) => {
                programs += 1;
                let small = shrink(&g, &points, category);
                if verbose {
                    eprintln!("{category}: {detail}\n  {small}");
                }
                failures.entry(category).or_default().push((detail, small));
            }
        }
    }
    println!(
        "{programs} programs ({n} generated) in {:.1} s: covers complete {}, incomplete {}, \
         cover compile errors {}, {} admitted bindings checked; failures: {}",
        start.elapsed().as_secs_f64(),
        total.complete,
        total.incomplete,
        total.cover_errors,
        total.admitted,
        failures.values().map(Vec::len).sum::<usize>()
    );
    for (category, list) in &failures {
        println!("{category}: {}", list.len());
        for (detail, spec) in list.iter().take(5) {
            println!("  {detail}\n    {spec}");
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing programs",
        failures.values().map(Vec::len).sum::<usize>()
    );
}

/// The regression specs of covers left incomplete on empty regions: complete now, and their
/// artifacts load.
#[test]
fn covers_of_the_incomplete_regressions_are_complete() {
    for name in [
        "cover_incomplete_floordiv",
        "cover_incomplete_diag",
        "cover_incomplete_min",
    ] {
        let path = format!(
            "{}/tests/specs/regressions/{name}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).unwrap();
        let p = Program::from_json(&text).unwrap();
        let a = ProgramArtifact::compile_cover(&p, &CoverOptions::default()).unwrap();
        let c = a.coverage.as_ref().unwrap();
        assert!(
            c.complete,
            "{name}: uncovered {:?}",
            c.uncovered
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
        );
        ProgramArtifact::from_json(&a.to_json()).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}
