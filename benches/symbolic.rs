//! Benchmarks of the symbolic layer: the hot paths layout code and dispatch depend on.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use symstride::sym::{
    simplify, Bindings, Expr, GuardSet, ShapeEnv, SymInt, SymbolRanges, SymbolSpec,
};
use symstride::{Bool, Int, Result};

/// A symbolic trace of a broadcasting 4-D elementwise op: broadcast shapes, contiguous
/// strides, contiguity checks and a coalescing pass (the branches a TensorIterator build
/// takes), on fresh symbols.
fn trace_elementwise_4d() -> Result<usize> {
    let env = ShapeEnv::default();
    let hints_a = [8i64, 3, 32, 32];
    let hints_b = [1i64, 3, 32, 32];
    let a: Vec<SymInt> = hints_a
        .iter()
        .enumerate()
        .map(|(i, h)| env.create_symbol(&format!("a{i}"), *h, SymbolSpec::default()))
        .collect::<Result<_>>()?;
    let b: Vec<SymInt> = hints_b
        .iter()
        .enumerate()
        .map(|(i, h)| env.create_symbol(&format!("b{i}"), *h, SymbolSpec::default()))
        .collect::<Result<_>>()?;
    let mut out = Vec::new();
    for d in 0..4 {
        let s = if a[d]
            .eq_i(1)
            .guard(|| format!("broadcast: a dim {d} == 1"))?
        {
            b[d].clone()
        } else if b[d]
            .eq_i(1)
            .guard(|| format!("broadcast: b dim {d} == 1"))?
        {
            a[d].clone()
        } else {
            a[d].sym_eq(&b[d])
                .guard(|| format!("broadcast: dim {d} equal"))?;
            a[d].clone()
        };
        out.push(s);
    }
    let strides = |sizes: &[SymInt]| {
        let mut st = vec![SymInt::constant(1); sizes.len()];
        for d in (0..sizes.len() - 1).rev() {
            st[d] = st[d + 1].clone() * Int::max(&sizes[d + 1], &SymInt::constant(1));
        }
        st
    };
    let sa = strides(&a);
    let sb = strides(&b);
    let so = strides(&out);
    // Contiguity of each operand.
    for (sizes, st) in [(&a, &sa), (&b, &sb), (&out, &so)] {
        let mut expected = SymInt::constant(1);
        for d in (0..4).rev() {
            if sizes[d]
                .eq_i(1)
                .guard(|| format!("contiguous: dim {d} size 1"))?
            {
                continue;
            }
            if st[d]
                .sym_ne(&expected)
                .guard(|| format!("contiguous: dim {d}"))?
            {
                break;
            }
            expected = expected * sizes[d].clone();
        }
    }
    // Coalescing: can dims d and d+1 merge for every operand?
    let mut merged = 0;
    for d in 0..3 {
        let mut ok = true;
        for (sizes, st) in [(&out, &so), (&a, &sa)] {
            let c = (st[d + 1].clone() * sizes[d + 1].clone()).sym_eq(&st[d]);
            if !c.guard(|| format!("coalesce dims {d},{}", d + 1))? {
                ok = false;
            }
        }
        merged += ok as usize;
    }
    Ok(env.guards().len() + merged)
}

fn benches(c: &mut Criterion) {
    c.bench_function("trace 4-D broadcasting elementwise", |bch| {
        bch.iter(|| black_box(trace_elementwise_4d().unwrap()))
    });
    c.bench_function(
        "trace 4-D broadcasting elementwise (cold simplifier cache)",
        |bch| {
            bch.iter(|| {
                symstride::sym::clear_simplifier_cache();
                black_box(trace_elementwise_4d().unwrap())
            })
        },
    );

    let stride =
        Expr::parse("Max(s1, 1)*Max(s2, 1)*Max(s3, 1) + FloorDiv(s0*s1, s1) + Mod(s2*s3, s3) - s0")
            .unwrap();
    let ranges = SymbolRanges::new()
        .with("s0", 1, None)
        .with("s1", 1, None)
        .with("s2", 1, None)
        .with("s3", 1, None);
    c.bench_function("simplify stride expression (egg)", |bch| {
        bch.iter(|| black_box(simplify(&stride, &ranges)))
    });

    let build = || {
        let s = [
            Expr::symbol("s0"),
            Expr::symbol("s1"),
            Expr::symbol("s2"),
            Expr::symbol("s3"),
        ];
        (s[0].clone() * s[1].clone() * s[2].clone()) + s[3].clone() * 2 - 1
    };
    c.bench_function("build canonical expression", |bch| {
        bch.iter(|| black_box(build()))
    });

    let guards = GuardSet::from(
        [
            "s0 >= 2",
            "s1 != 1",
            "s2 >= 2",
            "s3 != 1",
            "s0 == s4",
            "s1*s2 >= 2",
            "s2*s3 == s5",
            "s1 != s2",
            "FloorDiv(s5, 4) >= 1",
            "s0 + s1 <= 4096",
        ]
        .iter()
        .map(|c| symstride::sym::Guard {
            cond: c.parse().unwrap(),
            reason: String::new(),
        })
        .collect::<Vec<_>>(),
    );
    let order = ["s0", "s1", "s2", "s3", "s4", "s5"];
    let compiled = guards.compile(&order).unwrap();
    let vals = [8i64, 3, 32, 32, 8, 1024];
    assert_eq!(compiled.eval(&vals).unwrap(), None);
    c.bench_function("eval 10 compiled guards", |bch| {
        bch.iter(|| black_box(compiled.eval(black_box(&vals)).unwrap()))
    });
    let bind = Bindings::from_pairs(order.iter().zip(vals).map(|(k, v)| (*k, v)));
    c.bench_function("eval 10 guards (naive)", |bch| {
        bch.iter(|| black_box(guards.eval(black_box(&bind)).unwrap()))
    });
}

criterion_group!(symbolic, benches);
criterion_main!(symbolic);
