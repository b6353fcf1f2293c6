//! Post-processing of a trace's guards into an equivalent, smaller, readable list.
//!
//! The iterator records conditions as its steps phrase them: `c < c*w` (a stride
//! comparison), `c*h*w != 1 && c != 1 && w != 1` (a coalescing test over all operands). Under
//! the specialization's symbol ranges these are equivalent to `w >= 2` and `c != 1 && w != 1`.
//! The symbolic layer's interval reasoning does not see through products of symbols, so
//! this pass does two equivalence-preserving rewrites:
//!
//! 1. cancel monomial factors whose symbols are `>= 1` from every comparison
//!    ([`BoolExpr::cancel_positive_monomials`]);
//! 2. drop a conjunct implied by the ranges and the other conjuncts of its guard, then drop
//!    a guard implied by the ranges and the other remaining guards.
//!
//! Both steps keep the conjunction of all guards (with the range guards, which are never
//! dropped) logically equivalent, so the admitted bindings are exactly the same.

use crate::error::Result;
use crate::sym::{BoolExpr, Guard, ShapeEnv, ShapeEnvConfig, SymbolSpec, Symbol};

/// An environment with the spec's symbols at `at` (ranges as traced) and `facts` assumed.
fn env_with<'a>(
    symbols: &[String],
    at: &[i64],
    mins: &[i64],
    facts: impl Iterator<Item = &'a BoolExpr>,
) -> Result<ShapeEnv> {
    let env = ShapeEnv::new(ShapeEnvConfig {
        use_simplifier: false,
        ..ShapeEnvConfig::default()
    });
    for ((name, &v), &min) in symbols.iter().zip(at).zip(mins) {
        env.create_symbol(
            name,
            v,
            SymbolSpec {
                min,
                ..SymbolSpec::default()
            },
        )?;
    }
    for f in facts {
        env.evaluate_guard(f, String::new)?;
    }
    Ok(env)
}

/// Simplifies `guards` (the first `n_range` are range guards, kept as they are) of a trace
/// at `at` with symbol minimums `mins`.
pub(crate) fn simplify_guards(
    symbols: &[String],
    at: &[i64],
    mins: &[i64],
    guards: Vec<Guard>,
    n_range: usize,
) -> Result<Vec<Guard>> {
    let positive = |s: &Symbol| {
        symbols
            .iter()
            .position(|n| n == s.as_str())
            .is_some_and(|i| mins[i] >= 1)
    };
    // 1. Cancel positive monomials; drop constant-true and duplicate guards.
    let mut out: Vec<Guard> = Vec::with_capacity(guards.len());
    for (i, g) in guards.into_iter().enumerate() {
        if i < n_range {
            out.push(g);
            continue;
        }
        let cond = g.cond.cancel_positive_monomials(&positive);
        if cond.as_const() == Some(true) || out[n_range..].iter().any(|o| o.cond == cond) {
            continue;
        }
        out.push(Guard {
            cond,
            reason: g.reason,
        });
    }
    // 2. Each step replaces guard `i` by a weaker form that, together with the current
    //    other guards and the ranges, still implies it: the conjunction never changes.
    let mut i = n_range;
    while i < out.len() {
        if let Some(parts) = out[i].cond.conjuncts().map(|p| p.to_vec()) {
            let mut keep = parts;
            let mut j = 0;
            while j < keep.len() && keep.len() > 1 {
                let others = out[n_range..]
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| *k + n_range != i)
                    .map(|(_, g)| &g.cond)
                    .chain(keep.iter().enumerate().filter(|(k, _)| *k != j).map(|(_, c)| c));
                let env = env_with(symbols, at, mins, others)?;
                if env.statically_known(&keep[j]) == Some(true) {
                    keep.remove(j);
                } else {
                    j += 1;
                }
            }
            out[i].cond = BoolExpr::and_all(keep);
        }
        let others = out[n_range..]
            .iter()
            .enumerate()
            .filter(|(k, _)| *k + n_range != i)
            .map(|(_, g)| &g.cond);
        let env = env_with(symbols, at, mins, others)?;
        if env.statically_known(&out[i].cond) == Some(true) {
            out.remove(i);
        } else {
            i += 1;
        }
    }
    Ok(out)
}
