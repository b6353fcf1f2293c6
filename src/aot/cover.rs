//! `--cover`: enough specializations that every binding of the symbols is admitted.

use super::spec::Spec;
use super::specialization::Specialization;
use super::trace::trace;
use crate::error::{Error, Result};
use crate::iter::Plan;
use crate::sym::{decide_under, BoolExpr, Expr, Guard, Symbol};

/// Options of a compile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileOptions {
    /// Compile a covering set of specializations rather than only the one at the hints.
    pub cover: bool,
    /// With `cover`, also cover bindings where sizes are 0.
    pub cover_zero: bool,
    /// With `cover`, the largest number of probe bindings examined ([`crate::Error::Limit`]
    /// beyond; the probe grid has 3 or 4 values per symbol).
    pub max_probes: usize,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            cover: false,
            cover_zero: true,
            max_probes: 100_000,
        }
    }
}

/// The probe values of each symbol: 0 (optionally), 1, and two distinct values >= 2 (the
/// hint when it is >= 2, and a larger one). Layout decisions of elementwise ops depend on
/// whether sizes are 0, 1 or larger and on how sizes compare with each other; the two large
/// values per symbol, chosen differently for different symbols, make the probes see both
/// orders of every pair.
fn probe_values(spec: &Spec, zero: bool, two_large: bool) -> Vec<Vec<i64>> {
    spec.hints
        .iter()
        .enumerate()
        .map(|(i, &h)| {
            let a = if h >= 2 { h } else { 2 + i as i64 };
            let mut v = vec![a, 1];
            if two_large {
                v.push(a + 3 + 2 * i as i64);
            }
            if zero {
                v.push(0);
            }
            v
        })
        .collect()
}

fn covered(out: &[Specialization], probe: &[i64]) -> Result<bool> {
    for s in out {
        if s.admits(probe)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Compiles the specializations of `spec`: the one traced at the hints, and with
/// `options.cover` one more for every probe binding (see [`CompileOptions`]) that none of
/// the previous ones admits. A probe whose trace fails (e.g. shapes that do not broadcast
/// at that binding) is skipped: no plan exists there.
pub fn compile_specializations(
    spec: &Spec,
    options: &CompileOptions,
) -> Result<Vec<Specialization>> {
    let mut out = vec![trace(spec, &spec.hints)?];
    if !options.cover {
        return Ok(out);
    }
    let k = spec.symbols.len();
    let per = if options.cover_zero { 4usize } else { 3 };
    let grid = |p: usize| -> Option<usize> { p.checked_pow(k as u32) };
    let two_large = grid(per).is_some_and(|n| n <= options.max_probes);
    let total = grid(if two_large { per } else { per - 1 });
    let total = match total {
        Some(n) if n <= options.max_probes => n,
        _ => {
            return Err(Error::Limit {
                message: format!(
                    "--cover over {k} symbols needs more than max_probes = {} probe bindings",
                    options.max_probes
                ),
            })
        }
    };
    // Positive sizes first (the bindings users run), then the classes with a zero size,
    // so that dispatch meets the general specializations first.
    let passes: &[bool] = if options.cover_zero {
        &[false, true]
    } else {
        &[false]
    };
    let mut probe = vec![0i64; k];
    let mut first_zero = usize::MAX;
    for &zero in passes {
        let values = probe_values(spec, zero, two_large);
        let count: usize = values.iter().map(Vec::len).product();
        for n in 0..count {
            let mut r = n;
            for (i, vs) in values.iter().enumerate() {
                probe[i] = vs[r % vs.len()];
                r /= vs.len();
            }
            if zero && !probe.contains(&0) {
                continue;
            }
            // A probe at which the inputs are not tensors (a stride dividing by zero or
            // negative there) is no binding any call can have: nothing to cover.
            if spec.concrete_inputs(&probe).is_err() {
                continue;
            }
            if covered(&out, &probe)? {
                continue;
            }
            match trace(spec, &probe) {
                Ok(s) => {
                    if out.iter().any(|o| o.guards == s.guards) {
                        continue;
                    }
                    // A zero-size class whose plan an earlier zero-size specialization
                    // already computes (equal under the new guards: entries multiplied by
                    // the zero size vanish) widens that one's guards instead.
                    let host = if zero {
                        (first_zero..out.len()).find(|&j| plan_agrees(&out[j].plan, &s, spec))
                    } else {
                        None
                    };
                    match host {
                        Some(j) => out[j] = widen(spec, &out[j], &s)?,
                        None => {
                            if zero && first_zero == usize::MAX {
                                first_zero = out.len();
                            }
                            out.push(s)
                        }
                    }
                }
                Err(Error::Broadcast { .. }) => {}
                Err(e) => return Err(e),
            }
        }
    }
    let _ = total;
    Ok(out)
}

/// True when `plan` has the structure of `s.plan` and every entry equals `s.plan`'s
/// wherever `s`'s guards hold (decided statically; sizes `>= 0`).
fn plan_agrees(plan: &Plan<Expr>, s: &Specialization, spec: &Spec) -> bool {
    let other = &s.plan;
    let same_shape = plan.perm == other.perm
        && plan.num_outputs == other.num_outputs
        && plan.shape.len() == other.shape.len()
        && plan.broadcast_shape.len() == other.broadcast_shape.len()
        && plan.operands.len() == other.operands.len()
        && plan.output_strides.len() == other.output_strides.len()
        && plan.operands.iter().zip(&other.operands).all(|(a, b)| {
            a.element_size == b.element_size
                && a.is_output == b.is_output
                && a.byte_strides.len() == b.byte_strides.len()
        });
    if !same_shape {
        return false;
    }
    let mins: Vec<(Symbol, i64)> = spec.symbols.iter().map(|n| (Symbol::new(n), 0)).collect();
    let facts: Vec<&BoolExpr> = s.guards.iter().map(|g| &g.cond).collect();
    let equal = |a: &Expr, b: &Expr| {
        a == b || decide_under(&mins, &facts, &BoolExpr::eq(a, b)) == Some(true)
    };
    let pairs = plan
        .shape
        .iter()
        .zip(&other.shape)
        .chain(plan.broadcast_shape.iter().zip(&other.broadcast_shape))
        .chain(
            plan.operands
                .iter()
                .zip(&other.operands)
                .flat_map(|(a, b)| a.byte_strides.iter().zip(&b.byte_strides))
                .chain(
                    plan.operands
                        .iter()
                        .zip(&other.operands)
                        .map(|(a, b)| (&a.offset, &b.offset)),
                ),
        )
        .chain(
            plan.output_strides
                .iter()
                .zip(&other.output_strides)
                .flat_map(|(a, b)| a.iter().zip(b)),
        );
    for (a, b) in pairs {
        if !equal(a, b) {
            return false;
        }
    }
    true
}

/// `host` admitting also what `s` admits: the guards both share, then one guard
/// `(rest of host) || (rest of s)`. Sound because `host`'s plan equals `s`'s wherever
/// `s`'s guards hold ([`plan_agrees`]).
fn widen(spec: &Spec, host: &Specialization, s: &Specialization) -> Result<Specialization> {
    let common: Vec<Guard> = host
        .guards
        .iter()
        .filter(|g| s.guards.iter().any(|h| h.cond == g.cond))
        .cloned()
        .collect();
    let rest = |gs: &[Guard]| {
        BoolExpr::and_all(
            gs.iter()
                .filter(|g| !common.iter().any(|c| c.cond == g.cond))
                .map(|g| g.cond.clone()),
        )
    };
    let either = BoolExpr::or_all([rest(&host.guards), rest(&s.guards)]);
    let mut guards = common;
    if either.as_const() != Some(true) {
        guards.push(Guard {
            cond: either,
            reason: format!(
                "cover: one plan for the zero-size classes traced at {:?} and {:?}",
                host.traced_at, s.traced_at
            ),
        });
    }
    Specialization::new(spec, host.traced_at.clone(), guards, host.plan.clone())
}
