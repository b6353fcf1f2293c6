//! Guards for a dozen real reshapes: symstride next to PyTorch.
//!
//! `docs/view_guards/pytorch.json` holds what PyTorch 2.15 recorded for the same traces,
//! measured by `docs/view_guards/measure_pytorch.py` (FakeTensorMode + ShapeEnv, every input
//! size a dynamic symbol; not run here). This test traces the same ops through
//! `symstride::view` with the same hints and PyTorch's assumption about backed symbols (a
//! dynamic size is at least 2; a size-1 input dim is the constant 1), prints both columns,
//! and checks that symstride records no more guards than PyTorch on every row, agrees on
//! whether the result aliases, and that its own guards hold at the hints.
//!
//! Run with `cargo test --test view_guards -- --nocapture` to see the table.

use serde_json::Value;
use symstride::sym::{ShapeEnv, SymInt, SymbolSpec};
use symstride::view::View;
use symstride::Result;

/// One traced case: the result view, whether it aliases the input, and the guards.
struct Traced {
    sizes: Vec<String>,
    strides: Vec<String>,
    aliases: bool,
    guards: Vec<String>,
}

type Trace = fn(&View<SymInt>, &[SymInt]) -> Result<(View<SymInt>, bool)>;

fn c(v: i64) -> SymInt {
    SymInt::from(v)
}

/// The ops of each case, as `measure_pytorch.py` writes them (`x` and its sizes `n`).
fn traces() -> Vec<(&'static str, Trace)> {
    vec![
        ("attn_split", |x, n| {
            Ok((x.view(&[n[0].clone(), n[1].clone(), c(8), c(-1)])?, true))
        }),
        ("attn_split_transpose", |x, n| {
            let q = x.view(&[n[0].clone(), n[1].clone(), c(8), c(-1)])?;
            Ok((q.transpose(1, 2)?, true))
        }),
        ("attn_merge_copy", |x, n| {
            let r = x
                .transpose(1, 2)?
                .reshape(&[n[0].clone(), n[2].clone(), c(-1)])?;
            Ok((r.view, !r.copied))
        }),
        ("attn_merge_view", |x, n| {
            let r = x.reshape(&[n[0].clone(), n[1].clone(), n[2].clone() * n[3].clone()])?;
            Ok((r.view, !r.copied))
        }),
        ("nchw_flatten_1", |x, _| {
            let r = x.flatten(1, -1)?;
            Ok((r.view, !r.copied))
        }),
        ("nchw_flatten_all", |x, _| {
            let r = x.flatten(0, -1)?;
            Ok((r.view, !r.copied))
        }),
        ("channels_last_flatten_hw", |x, _| {
            let r = x.flatten(2, -1)?;
            Ok((r.view, !r.copied))
        }),
        ("channels_last_flatten_chw", |x, _| {
            let r = x.flatten(1, -1)?;
            Ok((r.view, !r.copied))
        }),
        ("channels_last_nhwc_flatten", |x, _| {
            let r = x.permute(&[0, 2, 3, 1])?.flatten(1, 2)?;
            Ok((r.view, !r.copied))
        }),
        ("group_norm_view", |x, n| {
            Ok((x.view(&[n[0].clone(), c(4), c(-1)])?, true))
        }),
        ("group_norm_view_5d", |x, n| {
            let g = n[1].floor_div(&c(4));
            Ok((
                x.view(&[n[0].clone(), c(4), g, n[2].clone(), n[3].clone()])?,
                true,
            ))
        }),
        ("unflatten_heads", |x, _| {
            Ok((x.unflatten(1, &[c(8), c(-1)])?, true))
        }),
        ("sliced_reshape", |x, n| {
            let r = x
                .slice(1, Some(c(1)), None, 1)?
                .reshape(&[c(-1), n[2].clone()])?;
            Ok((r.view, !r.copied))
        }),
        ("expanded_reshape", |x, n| {
            let r = x
                .expand(&[n[0].clone(), c(3), n[2].clone()])?
                .reshape(&[c(-1), n[2].clone()])?;
            Ok((r.view, !r.copied))
        }),
    ]
}

/// Strides PyTorch's fake tensors give a contiguous or channels-last input: plain
/// products of the sizes.
fn input_strides(sizes: &[SymInt], layout: &str) -> Vec<SymInt> {
    let order: Vec<usize> = match layout {
        "channels_last" => vec![1, 3, 2, 0],
        _ => (0..sizes.len()).rev().collect(),
    };
    let mut strides = vec![c(1); sizes.len()];
    let mut next = c(1);
    for d in order {
        strides[d] = next.clone();
        next = next * sizes[d].clone();
    }
    strides
}

fn trace(case: &Value, f: Trace) -> Result<Traced> {
    let env = ShapeEnv::default();
    let spec = SymbolSpec {
        min: 2,
        ..SymbolSpec::default()
    };
    let names = ["a", "b", "c", "d"];
    let sizes: Vec<SymInt> = case["sizes"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(k, v)| match v.as_i64().unwrap() {
            1 => Ok(c(1)),
            h => env.create_symbol(names[k], h, spec),
        })
        .collect::<Result<_>>()?;
    let strides = input_strides(&sizes, case["layout"].as_str().unwrap());
    let x = View::new(sizes.clone(), strides, c(0))?;
    let (y, aliases) = f(&x, &sizes)?;
    let guards = env.guard_set();
    assert!(
        guards.eval(&env.hints())?.is_pass(),
        "guards fail at the hints"
    );
    Ok(Traced {
        sizes: y.sizes().iter().map(|s| s.to_string()).collect(),
        strides: y.strides().iter().map(|s| s.to_string()).collect(),
        aliases,
        guards: env
            .guards()
            .iter()
            .map(|g| format!("{} ({})", g.cond, g.reason))
            .collect(),
    })
}

#[test]
fn symstride_records_no_more_view_guards_than_pytorch() -> Result<()> {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/view_guards/pytorch.json");
    let measured: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cases = &measured["cases"];
    println!(
        "| case | symstride guards | PyTorch {} guards | aliases | symstride result |",
        measured["torch"].as_str().unwrap()
    );
    println!("|---|---|---|---|---|");
    let mut rows = 0;
    for (name, f) in traces() {
        let torch = &cases[name];
        assert!(
            torch["error"].is_null(),
            "{name}: PyTorch failed: {}",
            torch["error"]
        );
        let ours = trace(torch, f)?;
        let theirs: Vec<&str> = torch["guards"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g.as_str().unwrap())
            .collect();
        // Input dims are `a, b, c, d` here and PyTorch's `input_symbols` there, in order.
        let names: Vec<String> = torch["input_symbols"]
            .as_array()
            .unwrap()
            .iter()
            .zip(["a", "b", "c", "d"])
            .filter(|(t, _)| t.as_str() != Some("1"))
            .map(|(t, n)| format!("{n}={}", t.as_str().unwrap()))
            .collect();
        let cell = |v: &[&str]| v.join("; ").replace('|', "\\|");
        let ours_refs: Vec<&str> = ours.guards.iter().map(String::as_str).collect();
        println!(
            "| {name} ({}) | {}: {} | {}: {} | {} | sizes [{}] strides [{}] |",
            names.join(", "),
            ours.guards.len(),
            cell(&ours_refs),
            theirs.len(),
            cell(&theirs),
            ours.aliases,
            ours.sizes.join(", "),
            ours.strides.join(", ")
        );
        assert_eq!(
            ours.aliases,
            torch["aliases"].as_bool().unwrap(),
            "{name}: aliasing"
        );
        assert!(
            ours.guards.len() <= theirs.len(),
            "{name}: {} guards {:?} vs PyTorch's {}",
            ours.guards.len(),
            ours.guards,
            theirs.len()
        );
        rows += 1;
    }
    assert_eq!(rows, 14);
    Ok(())
}
