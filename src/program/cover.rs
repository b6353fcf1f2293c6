//! `--cover` for programs: traces whose guard sets provably admit every binding.
//!
//! The algorithm is the single-op cover's, written once over [`CoverTarget`] (see
//! `aot/cover.rs`: a case split over the guards' atoms finds a region no trace admits, a
//! witness binding in it is traced, until the split proves the disjunction of all guard
//! sets on the whole domain). A program's trace is a [`ProgramTrace`]: every value's layout
//! as expressions, or the error every admitted binding fails with (a view whose sizes do not
//! divide, shapes that do not broadcast). Two traces are merged (one trace whose guards are
//! the union) when they have the same answer under the new trace's guards: every value of
//! every step equal as expressions (sizes, strides, offsets, storages, dtypes), or errors of
//! the same category at the same step.

use super::spec::{InputStrides, Program};
use super::stepplan::{conditions_differ, plan_pairs};
use super::trace::{concrete_inputs, trace, ProgramTrace};
use crate::aot::{cover, equal_under, CoverLimits, uncovered_by, CoverOptions, CoverTarget};
use crate::sym::{decide_under, Bindings, BoolExpr, Expr, Guard, GuardSet, Symbol};
use crate::{Error, Result};

/// The cover of a program ([`cover_program`]).
#[derive(Clone, Debug)]
pub struct ProgramCover {
    /// The traces: plans first (general ones before zero-size classes), error traces last.
    /// A binding is served by the first trace whose guards admit it ([`Self::admitting`]).
    pub traces: Vec<ProgramTrace>,
    /// Where each trace ran (values in [`Program::symbols`] order), parallel to `traces`:
    /// a loader re-traces there.
    pub traced_at: Vec<Vec<i64>>,
    /// True when the case split proved that every binding of `domain` is admitted by some
    /// trace.
    pub complete: bool,
    /// The domain the proof ranges over ([`program_cover_domain`]).
    pub domain: Vec<BoolExpr>,
    /// Regions not proven covered, each a conjunction of conditions (empty when complete).
    pub uncovered: Vec<BoolExpr>,
    /// Every trace the cover made, with the values it ran at, each with its own guards
    /// (before merging): a compile's verification takes them where a region contains their
    /// point instead of tracing there again (they are what its own trace would give).
    pub made: Vec<(Vec<i64>, ProgramTrace)>,
}

impl ProgramCover {
    /// Index of the first trace whose guards admit `b`, `None` when none does.
    pub fn admitting(&self, b: &Bindings) -> Result<Option<usize>> {
        for (k, t) in self.traces.iter().enumerate() {
            if t.admits(b)? {
                return Ok(Some(k));
            }
        }
        Ok(None)
    }
}

/// The domain of a program's bindings: every symbol `>= 0` (`>= 1` without `zero`), and
/// every input stride expression that is not a constant or a bare symbol `>= 0` unless that
/// follows from the symbols being non-negative.
pub fn program_cover_domain(p: &Program, zero: bool) -> Vec<BoolExpr> {
    let min = i64::from(!zero);
    let mut out: Vec<BoolExpr> = p
        .symbols
        .iter()
        .map(|s| BoolExpr::ge(&Expr::symbol(s), &Expr::constant(min)))
        .collect();
    let mins: Vec<(Symbol, i64)> = p.symbols.iter().map(|n| (Symbol::new(n), 0)).collect();
    for inp in &p.inputs {
        if let InputStrides::Exprs(es) = &inp.strides {
            for e in es {
                if e.as_const().is_none() && e.as_symbol().is_none() {
                    let c = BoolExpr::ge(e, &Expr::constant(0));
                    if decide_under(&mins, &[], &c) != Some(true) && !out.contains(&c) {
                        out.push(c);
                    }
                }
            }
        }
    }
    out
}

/// Covers `p`: its trace at the hints, then as many more as the proof needs, until every
/// binding of [`program_cover_domain`] is admitted by one of them or
/// `options.max_specializations` is reached (then `complete` is false and `uncovered` says
/// where). Errors when the trace at the hints fails (no hints, an overflow).
pub fn cover_program(p: &Program, options: &CoverOptions) -> Result<ProgramCover> {
    if p.hints.len() != p.symbols.len() {
        return Err(Error::symbol(format!(
            "program `{}`: a cover starts at the hints, and not every symbol has one",
            p.name
        )));
    }
    let domain = program_cover_domain(p, options.zero);
    let target = Target(p, std::cell::RefCell::new(Vec::new()));
    let run = cover(
        &target,
        &domain,
        CoverLimits::entries(options.max_specializations),
    )?;
    let (traced_at, traces) = run.traces.into_iter().map(|t| (t.at, t.trace)).unzip();
    Ok(ProgramCover {
        traces,
        traced_at,
        complete: run.uncovered.is_empty(),
        domain,
        uncovered: run.uncovered,
        made: target.1.into_inner(),
    })
}

/// Re-runs the cover proof over given traces: does every binding of `domain` satisfy some
/// trace's guards? Returns the first region found uncovered, or `None` (for a loader that
/// re-proves a stored `complete` claim).
pub fn program_uncovered_region(
    p: &Program,
    domain: &[BoolExpr],
    traces: &[ProgramTrace],
) -> Option<BoolExpr> {
    let sets: Vec<&[Guard]> = traces.iter().map(|t| &t.guards.guards[..]).collect();
    uncovered_by(&p.symbols, domain, &sets)
}

/// A program seen by the cover, and every trace made (see [`ProgramCover::made`]).
struct Target<'a>(&'a Program, std::cell::RefCell<Vec<(Vec<i64>, ProgramTrace)>>);

/// A trace with the values it ran at.
struct PointTrace {
    at: Vec<i64>,
    trace: ProgramTrace,
}

impl Target<'_> {
    fn bindings(&self, values: &[i64]) -> Bindings {
        Bindings::from_pairs(
            self.0
                .symbols
                .iter()
                .zip(values)
                .map(|(s, &v)| (s.as_str(), v)),
        )
    }
}

/// The step label an error message starts with (`step 2 (view ...)`), if any.
fn failing_step(e: &Error) -> Option<String> {
    let m = e.to_string();
    let i = m.find("step ")?;
    let rest = &m[i..];
    rest.find("): ").map(|j| rest[..=j].to_string())
}

impl CoverTarget for Target<'_> {
    type Trace = PointTrace;

    fn symbols(&self) -> &[String] {
        &self.0.symbols
    }

    fn hints(&self) -> &[i64] {
        &self.0.hints
    }

    fn realizable(&self, values: &[i64]) -> bool {
        concrete_inputs(self.0, &self.bindings(values)).is_ok()
    }

    fn trace_at(&self, values: &[i64]) -> Result<PointTrace> {
        let t = trace(self.0, &self.bindings(values))?;
        self.1.borrow_mut().push((values.to_vec(), t.clone()));
        Ok(PointTrace {
            at: values.to_vec(),
            trace: t,
        })
    }

    fn guards<'a>(&self, t: &'a PointTrace) -> &'a [Guard] {
        &t.trace.guards.guards
    }

    fn traced_at<'a>(&self, t: &'a PointTrace) -> &'a [i64] {
        &t.at
    }

    fn is_error(&self, t: &PointTrace) -> bool {
        t.trace.values.is_err()
    }

    fn admits(&self, t: &PointTrace, values: &[i64]) -> Result<bool> {
        t.trace.admits(&self.bindings(values))
    }

    fn same_answer(&self, host: &PointTrace, new: &PointTrace) -> bool {
        match (&host.trace.values, &new.trace.values) {
            (Ok(a), Ok(b)) => {
                let same_shape = a.len() == b.len()
                    && a.iter().zip(b).all(|(x, y)| {
                        x.dtype == y.dtype
                            && x.storage == y.storage
                            && x.sizes.len() == y.sizes.len()
                            && x.strides.len() == y.strides.len()
                    });
                // The kernel plans are part of the answer, where their plan conditions
                // hold: a host whose plans or plan conditions differ from the new trace's
                // cannot take its bindings (its plans would be promised under conditions
                // decided in its own region).
                let Ok(plans) = plan_pairs(&host.trace.plans, &new.trace.plans) else {
                    return false;
                };
                if conditions_differ(&host.trace.plan_conditions, &new.trace.plan_conditions)
                    .is_some()
                {
                    return false;
                }
                same_shape
                    && equal_under(
                        &self.0.symbols,
                        &new.trace.guards.guards,
                        a.iter()
                            .zip(b)
                            .flat_map(|(x, y)| {
                                x.sizes
                                    .iter()
                                    .zip(&y.sizes)
                                    .chain(x.strides.iter().zip(&y.strides))
                                    .chain([
                                        (&x.offset, &y.offset),
                                        (&x.storage_numel, &y.storage_numel),
                                    ])
                            })
                            .chain(plans.into_iter().map(|(_, x, y)| (x, y))),
                    )
            }
            (Err(a), Err(b)) => a.category() == b.category() && failing_step(a) == failing_step(b),
            _ => false,
        }
    }

    fn with_guards(&self, host: &PointTrace, guards: Vec<Guard>) -> Result<PointTrace> {
        Ok(PointTrace {
            at: host.at.clone(),
            trace: ProgramTrace {
                values: host.trace.values.clone(),
                plans: host.trace.plans.clone(),
                guards: GuardSet::from(guards),
                plan_conditions: host.trace.plan_conditions.clone(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{concrete, HEADS};

    #[test]
    fn the_readme_program_is_covered_and_every_binding_is_answered() {
        let p = Program::from_json(HEADS).unwrap();
        let c = cover_program(&p, &CoverOptions::default()).unwrap();
        assert!(c.complete, "{:?}", c.uncovered);
        assert_eq!(c.traces.len(), c.traced_at.len());
        assert_eq!(program_uncovered_region(&p, &c.domain, &c.traces), None);
        for b in 0..6 {
            for s in 0..6 {
                let bind = Bindings::from_pairs([("b", b), ("s", s)]);
                let k = c
                    .admitting(&bind)
                    .unwrap()
                    .expect("a complete cover admits");
                let t = &c.traces[k];
                match (&t.values, concrete(&p, &bind)) {
                    (Ok(_), Ok(v)) => assert_eq!(t.instantiate(&bind).unwrap(), v),
                    (Err(te), Err(ce)) => assert_eq!(te.category(), ce.category()),
                    (te, ce) => panic!("b={b} s={s}: {te:?} vs {ce:?}"),
                }
            }
        }
        // The single trace at the hints leaves a gap the proof finds.
        let single = trace(&p, &p.hint_bindings()).unwrap();
        assert!(program_uncovered_region(&p, &c.domain, &[single]).is_some());
    }

    /// A region the split reaches can be empty only through a symbol pinned by two bounds
    /// (`c >= 1`, `c <= 1`, `a <= c`, `a >= 1`, `a != 1`): found by random programs; before
    /// the prover substituted pinned symbols it was given up and the cover was incomplete.
    #[test]
    fn regions_empty_through_pinned_symbols_are_refuted() {
        let p = Program::from_json(
            r#"{"inputs": [{"name": "x", "sizes": ["a", "b", "c"], "layout": "contiguous"}],
                "hints": {"a": 1, "b": 1, "c": 1},
                "steps": [{"let": "v0", "op": "transpose", "args": ["x", 0, -1]},
                          {"let": "v1", "op": "mul", "args": ["v0", 2]}],
                "outputs": ["v1"]}"#,
        )
        .unwrap();
        let c = cover_program(&p, &CoverOptions::default()).unwrap();
        assert!(c.complete, "{:?}", c.uncovered);
    }
}
