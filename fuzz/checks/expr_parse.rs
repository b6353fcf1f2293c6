//! Fuzzes the expression and condition parsers (`Expr::parse`, `BoolExpr::parse`).
//!
//! Invariants checked on every input, besides "no panic, no hang":
//! * a parse error has a non-empty message;
//! * `parse(print(e)) == e` and printing is stable (`print(parse(print(e))) == print(e)`);
//! * evaluation (exact) at a few bindings never panics, and gives the same answer for the
//!   re-parsed expression;
//! * for conditions, the compiled guard program agrees with exact evaluation.
//!
//! Shared by the cargo-fuzz target `fuzz_targets/expr_parse.rs` and by `tests/fuzz_regressions.rs`,
//! which replays `fuzz/seeds/expr_parse` and `fuzz/regressions/expr_parse` under `cargo test`.
use symstride::sym::{Bindings, BoolExpr, Expr, Guard, GuardSet};

/// Values that stress evaluation: zero (division), one, negatives, the i64 extremes.
const VALUES: [i64; 8] = [0, 1, 2, -1, 7, -3, i64::MAX, i64::MIN];

fn bindings(names: &[String], salt: usize) -> Bindings {
    Bindings::from_pairs(
        names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), VALUES[(i + salt) % VALUES.len()])),
    )
}

fn check_expr(src: &str) {
    let e = match Expr::parse(src) {
        Ok(e) => e,
        Err(err) => {
            assert!(!err.to_string().is_empty());
            return;
        }
    };
    let printed = e.to_string();
    let again = Expr::parse(&printed)
        .unwrap_or_else(|err| panic!("printed form `{printed}` of `{src}` does not parse: {err}"));
    assert_eq!(again, e, "round trip of `{src}` via `{printed}`");
    assert_eq!(again.to_string(), printed, "printing is not stable");
    let names: Vec<String> = e.symbols().iter().map(|s| s.as_str().to_string()).collect();
    for salt in 0..3 {
        let b = bindings(&names, salt);
        assert_eq!(e.eval(&b), again.eval(&b), "eval of `{src}`");
        let _ = e.eval_big(&b);
    }
}

fn check_bool(src: &str) {
    let c = match BoolExpr::parse(src) {
        Ok(c) => c,
        Err(err) => {
            assert!(!err.to_string().is_empty());
            return;
        }
    };
    let printed = c.to_string();
    let again = BoolExpr::parse(&printed)
        .unwrap_or_else(|err| panic!("printed form `{printed}` of `{src}` does not parse: {err}"));
    assert_eq!(again, c, "round trip of `{src}` via `{printed}`");
    assert_eq!(again.to_string(), printed, "printing is not stable");
    let names: Vec<String> = c.symbols().iter().map(|s| s.as_str().to_string()).collect();
    let set = GuardSet::from(vec![Guard {
        cond: c.clone(),
        reason: "fuzz".into(),
    }]);
    let compiled = set.compile(&names).expect("compiling over all its symbols");
    for salt in 0..3 {
        let b = bindings(&names, salt);
        let exact = c.eval(&b);
        assert_eq!(exact, again.eval(&b), "eval of `{src}`");
        let values: Vec<i64> = names.iter().map(|n| b.get(n).unwrap()).collect();
        let fast = compiled.eval(&values);
        let slow = set.eval(&b).map(|r| r.failed());
        assert_eq!(
            fast, slow,
            "compiled vs exact guard evaluation of `{src}` at {values:?}"
        );
        match (&exact, &slow) {
            (Ok(v), Ok(first_failing)) => assert_eq!(*v, first_failing.is_none()),
            (Err(_), Err(_)) => {}
            other => panic!("eval and guard eval disagree on `{src}`: {other:?}"),
        }
    }
}

/// Runs every check on one input (panics on a violated invariant).
pub fn check(data: &[u8]) {
    // Long inputs only slow the search down; the parser's own limits are what matter.
    if data.len() > 256 {
        return;
    }
    let Ok(src) = std::str::from_utf8(data) else {
        return;
    };
    check_expr(src);
    check_bool(src);
}
