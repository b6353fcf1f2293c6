//! A program specialization: one trace's guards, compiled, and every step's value as one
//! straight-line program.
//!
//! # Why one program for all steps
//! A cached dispatch of a program must cost what a single op's costs, a few hundred
//! nanoseconds, however many steps it has. A [`ProgramTrace`] keeps each value's layout as
//! separate expressions (`h*d`, `s*h*d`, `4*s*h*d`, ...), and instantiating it through
//! [`Bindings`](crate::sym::Bindings) costs microseconds per value. Consecutive steps share
//! most of their factors (a view's strides are its base's, a reduction's sizes are its
//! input's), so all expressions of all values (sizes, strides, storage offset, storage
//! size, in value order) are compiled into ONE [`ExprProgram`]: common subexpressions are
//! computed once across steps, arithmetic is checked (overflow re-evaluates exactly, so
//! results and errors are always [`Expr::eval`]'s), and the results are written straight
//! into the caller's `Vec<Value<i64>>`, which is not reallocated when reused.
//!
//! The guards are compiled as the single-op pipeline compiles them
//! ([`GuardSet::compile`]): range checks for single-symbol guards, flat programs otherwise.
//!
//! The specialization also holds its [`FusionPlan`]: which elementwise chains run as one
//! pass, decided once by [`plan_fusion`] over the trace's symbolic values and checked with
//! [`check_fusion`] whatever its origin (an artifact's stored plan included). Both compare
//! sizes as expressions; they are given the values with every size replaced by the first
//! size that equals it at every binding the guards admit ([`fusion_values`]): a trace can
//! write one size two ways (`c` and `1` under `1 <= c <= 1`), and the plan must be the one
//! the rules decide on the concrete layouts at each admitted binding, not a smaller one.
//!
//! An *error specialization* is a trace that stopped at a step: its guards are the
//! conditions taken on the way to the failure, so every binding they admit fails the same
//! way, and [`ProgramSpecialization::instantiate_into`] answers that error.

use super::fuse::{check_fusion, plan_fusion, FusionPlan};
use super::spec::Program;
use super::stepplan::StepPlan;
use super::trace::{trace, PlanConditions, ProgramTrace, StepPlans, Value};
use crate::aot::{equal_under, ExprProgram};
use crate::sym::{Bindings, CompiledGuards, Expr, Guard, GuardSet};
use crate::{Error, Result};

/// One traced specialization of a program.
///
/// Soundness contract: for every binding of the program's symbols under which all `guards`
/// hold, the values instantiated at the binding equal a fresh concrete run
/// ([`super::concrete`]) at it, or, for an error specialization, the concrete run fails with
/// the same error category; and every kernel plan it instantiates there (for a step whose
/// plan conditions hold) equals a fresh build's.
#[derive(Clone, Debug)]
pub struct ProgramSpecialization {
    /// The symbol values the trace ran at (program symbol order).
    pub traced_at: Vec<i64>,
    /// The guards, symbol ranges first, each reason naming its step.
    pub guards: Vec<Guard>,
    /// Every value (inputs, then one per step) as expressions over the symbols, or the
    /// error every admitted binding fails with.
    pub values: std::result::Result<Vec<Value<Expr>>, Error>,
    /// Per step, the kernel plan of an op or a reduction as expressions (`None` for views
    /// and copies; empty for an error specialization). Compiled, after the values, into the
    /// straight-line program a run evaluates (`planned`).
    pub plans: StepPlans<Expr>,
    /// Per step, the plan conditions of its kernel plan ([`ProgramTrace::plan_conditions`];
    /// empty for an error specialization): a run where a step's conditions fail plans that
    /// step from the concrete layouts instead of instantiating its traced plan.
    pub plan_conditions: PlanConditions,
    /// The elementwise chains a run evaluates in one pass each, decided at the trace
    /// ([`plan_fusion`] over `values`; empty for an error specialization).
    pub fusion: FusionPlan,
    /// Where the verification of this specialization re-traced besides `traced_at`
    /// (`"verify_points"` in the file; `None` until a compile or a load verified it): hints
    /// that let a load replay the compile's case split without searching (see
    /// `aot::retrace`). Not part of equality: they say how it was verified, not what it is.
    pub verify_points: Option<Vec<Vec<i64>>>,
    symbols: Vec<String>,
    compiled: CompiledGuards,
    /// All values' integers, flattened (see [`flatten`]); `None` for an error
    /// specialization. What a dispatch evaluates.
    program: Option<ExprProgram>,
    /// The same values followed by every step plan's integers, in one program (shared
    /// subexpressions across values and plans); what a run evaluates. Kept apart from
    /// `program` so that a dispatch that only needs layouts does not evaluate the plans.
    planned: Option<ExprProgram>,
    /// The values' structure (integers zero), to instantiate into.
    skeleton: Vec<Value<i64>>,
    /// The plans' structure (integers zero), to instantiate into.
    plan_skeleton: StepPlans<i64>,
    /// `plan_conditions` compiled, per step (`None` for a step without any).
    plan_checks: Vec<Option<CompiledGuards>>,
}

impl PartialEq for ProgramSpecialization {
    fn eq(&self, other: &Self) -> bool {
        self.traced_at == other.traced_at
            && self.guards == other.guards
            && self.values == other.values
            && self.plans == other.plans
            && self.plan_conditions == other.plan_conditions
            && self.fusion == other.fusion
    }
}

/// Every integer of `values` in instantiation order: per value its sizes, strides, storage
/// offset and storage size.
fn flatten(values: &[Value<Expr>]) -> Vec<Expr> {
    let mut out = Vec::new();
    for v in values {
        out.extend(v.sizes.iter().cloned());
        out.extend(v.strides.iter().cloned());
        out.push(v.offset.clone());
        out.push(v.storage_numel.clone());
    }
    out
}

fn skeleton(values: &[Value<Expr>]) -> Vec<Value<i64>> {
    values
        .iter()
        .map(|v| Value {
            sizes: vec![0; v.sizes.len()],
            strides: vec![0; v.strides.len()],
            offset: 0,
            dtype: v.dtype,
            storage: v.storage,
            storage_numel: 0,
        })
        .collect()
}

/// `values` as fusion compares them: each size replaced by the first size (in value order)
/// equal to it at every binding `guards` admit (equal at `traced_at`, which they admit, and
/// proved equal under the guards), so that structural equality of sizes is equality under
/// the guards.
pub(crate) fn fusion_values(
    p: &Program,
    traced_at: &[i64],
    guards: &[Guard],
    values: &[Value<Expr>],
) -> Vec<Value<Expr>> {
    let b = bindings_of(&p.symbols, traced_at);
    // Distinct sizes so far, with their value at the trace point.
    let mut reps: Vec<(Expr, Option<i64>)> = Vec::new();
    let mut out = values.to_vec();
    for v in &mut out {
        for e in &mut v.sizes {
            if let Some((r, _)) = reps.iter().find(|(r, _)| r == e) {
                *e = r.clone();
                continue;
            }
            let at = e.eval(&b).ok();
            let same = reps.iter().find(|(r, ra)| {
                at.is_some() && *ra == at && equal_under(&p.symbols, guards, [(r, &*e)])
            });
            match same {
                Some((r, _)) => *e = r.clone(),
                None => reps.push((e.clone(), at)),
            }
        }
    }
    out
}

/// The fusion plan of a trace's values (empty for an error): [`plan_fusion`] over
/// [`fusion_values`].
pub(crate) fn decide_fusion(
    p: &Program,
    traced_at: &[i64],
    guards: &[Guard],
    values: &std::result::Result<Vec<Value<Expr>>, Error>,
) -> FusionPlan {
    match values {
        Ok(vs) => plan_fusion(p, &fusion_values(p, traced_at, guards, vs)),
        Err(_) => FusionPlan::default(),
    }
}

/// Bindings of `symbols` to `values` (same order).
pub(crate) fn bindings_of(symbols: &[String], values: &[i64]) -> Bindings {
    Bindings::from_pairs(
        symbols
            .iter()
            .map(String::as_str)
            .zip(values.iter().copied()),
    )
}

/// Traces `p` at `at` (program symbol order) and compiles the result.
pub fn specialize(p: &Program, at: &[i64]) -> Result<ProgramSpecialization> {
    if at.len() != p.symbols.len() {
        return Err(Error::invalid(format!(
            "trace point has {} values for {} symbols",
            at.len(),
            p.symbols.len()
        )));
    }
    let t = trace(p, &bindings_of(&p.symbols, at))?;
    ProgramSpecialization::from_trace(p, at.to_vec(), t)
}

impl ProgramSpecialization {
    /// Compiles a trace of `p` made at `traced_at`.
    pub fn from_trace(
        p: &Program,
        traced_at: Vec<i64>,
        t: ProgramTrace,
    ) -> Result<ProgramSpecialization> {
        let fusion = decide_fusion(p, &traced_at, &t.guards.guards, &t.values);
        ProgramSpecialization::new(
            p,
            traced_at,
            t.guards.guards,
            t.values,
            (t.plans, t.plan_conditions),
            fusion,
        )
    }

    /// Assembles and compiles a specialization: guards and values must mention only the
    /// program's symbols, and the values must have the program's structure (one per input
    /// and step, each with as many strides as sizes), the plans one per step, and the
    /// fusion plan a valid fusion of the values ([`check_fusion`]; empty for an error
    /// specialization). `plans`: the step plans and their plan conditions, one entry per
    /// step each (both empty for an error specialization).
    pub fn new(
        p: &Program,
        traced_at: Vec<i64>,
        guards: Vec<Guard>,
        values: std::result::Result<Vec<Value<Expr>>, Error>,
        plans: (StepPlans<Expr>, PlanConditions),
        fusion: FusionPlan,
    ) -> Result<ProgramSpecialization> {
        let (plans, plan_conditions) = plans;
        if traced_at.len() != p.symbols.len() {
            return Err(Error::invalid(format!(
                "specialization traced at {} values for {} symbols",
                traced_at.len(),
                p.symbols.len()
            )));
        }
        let compiled = compile_over(p, guards.clone(), "guard")?;
        let (program, planned, skel, plan_skel) = match &values {
            Ok(vs) => {
                if plans.len() != p.steps.len() || plan_conditions.len() != p.steps.len() {
                    return Err(Error::invalid(format!(
                        "{} step plans and {} steps' plan conditions for a program of {} steps",
                        plans.len(),
                        plan_conditions.len(),
                        p.steps.len()
                    )));
                }
                let n = p.inputs.len() + p.steps.len();
                if vs.len() != n {
                    return Err(Error::invalid(format!(
                        "{} values for a program of {} inputs and {} steps",
                        vs.len(),
                        p.inputs.len(),
                        p.steps.len()
                    )));
                }
                for (k, v) in vs.iter().enumerate() {
                    if v.sizes.len() != v.strides.len() {
                        return Err(Error::invalid(format!(
                            "value {k} (`{}`) has {} sizes and {} strides",
                            p.names[k],
                            v.sizes.len(),
                            v.strides.len()
                        )));
                    }
                    if v.storage >= n || v.storage > k {
                        return Err(Error::invalid(format!(
                            "value {k} (`{}`) lives in the storage of value {}, which is not \
                             an earlier value",
                            p.names[k], v.storage
                        )));
                    }
                }
                // An empty plan is valid for any values of the program's structure (checked
                // above); only chains need the sizes unified under the guards (prover calls).
                if !fusion.chains.is_empty() {
                    check_fusion(p, &fusion_values(p, &traced_at, &guards, vs), &fusion)?;
                }
                let exprs = flatten(vs);
                let mut planned = exprs.clone();
                for sp in plans.iter().flatten() {
                    sp.for_each(&mut |e| planned.push(e.clone()));
                }
                let plan_skel = plans
                    .iter()
                    .map(|o| {
                        o.as_ref()
                            .map(|sp| sp.try_map(|_| Ok::<i64, Error>(0)))
                            .transpose()
                    })
                    .collect::<Result<StepPlans<i64>>>()?;
                (
                    Some(ExprProgram::new(&p.symbols, exprs)?),
                    Some(ExprProgram::new(&p.symbols, planned)?),
                    skeleton(vs),
                    plan_skel,
                )
            }
            Err(_) => {
                if !fusion.chains.is_empty() {
                    return Err(Error::invalid(format!(
                        "an error specialization with a fusion plan ({fusion})"
                    )));
                }
                (None, None, Vec::new(), Vec::new())
            }
        };
        let (plans, plan_conditions) = if program.is_some() {
            (plans, plan_conditions)
        } else {
            (Vec::new(), Vec::new())
        };
        let plan_checks = plan_conditions
            .iter()
            .map(|c| {
                if c.is_empty() {
                    return Ok(None);
                }
                compile_over(p, c.clone(), "plan condition").map(Some)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(ProgramSpecialization {
            traced_at,
            guards,
            values,
            symbols: p.symbols.clone(),
            compiled,
            plans,
            plan_conditions,
            fusion,
            verify_points: None,
            program,
            planned,
            skeleton: skel,
            plan_skeleton: plan_skel,
            plan_checks,
        })
    }

    /// The error every admitted binding fails with (an error specialization), if any.
    pub fn error(&self) -> Option<&Error> {
        self.values.as_ref().err()
    }

    /// Index of the first guard that fails at `values` (program symbol order), `None` when
    /// every guard holds. A guard that cannot be evaluated there (it divides by a size that
    /// is 0) fails. Compiled evaluation: nanoseconds, no allocation.
    #[inline]
    pub fn first_failing_guard(&self, values: &[i64]) -> Result<Option<usize>> {
        match self.compiled.eval(values) {
            Err(Error::DivisionByZero { .. }) => self.first_failing_exact(values),
            r => r,
        }
    }

    #[cold]
    fn first_failing_exact(&self, values: &[i64]) -> Result<Option<usize>> {
        let b = bindings_of(&self.symbols, values);
        for (i, g) in self.guards.iter().enumerate() {
            match g.cond.eval(&b) {
                Ok(true) => {}
                Ok(false) | Err(Error::DivisionByZero { .. }) => return Ok(Some(i)),
                Err(e) => return Err(e),
            }
        }
        Ok(None)
    }

    /// True when every guard holds at `values`.
    #[inline]
    pub fn admits(&self, values: &[i64]) -> Result<bool> {
        Ok(self.first_failing_guard(values)?.is_none())
    }

    /// Every value at `values` into `out` (the caller has checked the guards), reusing its
    /// allocations: no allocation when `out` already has this specialization's structure.
    /// An error specialization answers its error.
    #[inline]
    pub fn instantiate_into(&self, values: &[i64], out: &mut Vec<Value<i64>>) -> Result<()> {
        self.instantiate_parts(values, out, None)
    }

    /// [`Self::instantiate_into`], also instantiating every step's kernel plan into
    /// `plans` (evaluated by the same straight-line program; no allocation when `plans`
    /// already has this specialization's structure). A step whose plan conditions fail at
    /// `values` gets `None`: its traced plan is not the fresh build's there, and a run
    /// plans it from the concrete layouts.
    pub fn instantiate_with_plans(
        &self,
        values: &[i64],
        out: &mut Vec<Value<i64>>,
        plans: &mut StepPlans<i64>,
    ) -> Result<()> {
        self.instantiate_parts(values, out, Some(plans))
    }

    /// Values into `out` and, when given, plans into `plans` (see the two above).
    #[inline]
    pub(crate) fn instantiate_parts(
        &self,
        values: &[i64],
        out: &mut Vec<Value<i64>>,
        plans: Option<&mut StepPlans<i64>>,
    ) -> Result<()> {
        let chosen = if plans.is_some() {
            &self.planned
        } else {
            &self.program
        };
        let Some(program) = chosen else {
            return Err(self.values.as_ref().err().cloned().unwrap_or_else(|| {
                Error::invalid("internal error: a specialization without values")
            }));
        };
        if !same_structure(out, &self.skeleton) {
            out.clone_from(&self.skeleton);
        }
        let mut plans = plans;
        if let Some(ps) = plans.as_mut() {
            if !same_plans(ps, &self.plan_skeleton) {
                ps.clone_from(&self.plan_skeleton);
            }
        }
        program.with_values(values, |ev| {
            let mut k = 0;
            let mut next = || {
                let x = ev.get(k);
                k += 1;
                x
            };
            for (v, sk) in out.iter_mut().zip(&self.skeleton) {
                for x in v.sizes.iter_mut() {
                    *x = next();
                }
                for x in v.strides.iter_mut() {
                    *x = next();
                }
                v.offset = next();
                v.storage_numel = next();
                v.dtype = sk.dtype;
                v.storage = sk.storage;
            }
            if let Some(ps) = plans.as_deref_mut() {
                for sp in ps.iter_mut().flatten() {
                    sp.for_each_mut(&mut |x| *x = next());
                }
            }
        })?;
        if let Some(ps) = plans {
            for (plan, check) in ps.iter_mut().zip(&self.plan_checks) {
                if let Some(c) = check {
                    // A condition that cannot be evaluated (a division by 0) does not hold.
                    if !matches!(c.eval(values), Ok(None)) {
                        *plan = None;
                    }
                }
            }
        }
        Ok(())
    }

    /// Every value at `values` (the caller has checked the guards).
    pub fn instantiate(&self, values: &[i64]) -> Result<Vec<Value<i64>>> {
        let mut out = Vec::new();
        self.instantiate_into(values, &mut out)?;
        Ok(out)
    }

    /// Number of expressions evaluated per instantiation, and of straight-line steps that
    /// compute them (shared subexpressions counted once).
    pub fn program_size(&self) -> (usize, usize) {
        self.program
            .as_ref()
            .map_or((0, 0), |p| (p.len(), p.steps()))
    }
}

/// `guards` compiled over `p`'s symbols, which are all they may mention (`what` names them
/// in the error).
fn compile_over(p: &Program, guards: Vec<Guard>, what: &str) -> Result<CompiledGuards> {
    let set = GuardSet::from(guards);
    if let Some(s) = set
        .symbols()
        .into_iter()
        .find(|s| !p.symbols.iter().any(|n| n == s.as_str()))
    {
        return Err(Error::symbol(format!("{what} mentions unknown symbol `{s}`")));
    }
    set.compile(&p.symbols)
}

/// True when every plan of `a` has the structure of `b`'s (the integers are overwritten).
fn same_plans(a: &StepPlans<i64>, b: &StepPlans<i64>) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (x, y) {
            (None, None) => true,
            (Some(x), Some(y)) => StepPlan::same_structure(x, y),
            _ => false,
        })
}

/// True when every value of `a` has the rank of `b`'s (the integers are overwritten).
fn same_structure(a: &[Value<i64>], b: &[Value<i64>]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.sizes.len() == y.sizes.len() && x.strides.len() == y.strides.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{concrete, HEADS};

    #[test]
    fn instantiate_equals_trace_and_concrete() {
        let p = Program::from_json(HEADS).unwrap();
        let s = specialize(&p, &p.hints).unwrap();
        let t = trace(&p, &p.hint_bindings()).unwrap();
        let mut out = Vec::new();
        for b in 0..6 {
            for sl in 0..6 {
                let vals = [b, sl];
                let bind = bindings_of(&p.symbols, &vals);
                let admitted = s.admits(&vals).unwrap();
                assert_eq!(admitted, t.admits(&bind).unwrap(), "{vals:?}");
                if !admitted {
                    continue;
                }
                s.instantiate_into(&vals, &mut out).unwrap();
                assert_eq!(out, t.instantiate(&bind).unwrap());
                assert_eq!(out, concrete(&p, &bind).unwrap());
            }
        }
        // Shared subexpressions across steps: fewer steps than expressions.
        let (exprs, steps) = s.program_size();
        assert!(steps < exprs, "{exprs} expressions in {steps} steps");
    }

    #[test]
    fn reused_output_is_not_reallocated() {
        let p = Program::from_json(HEADS).unwrap();
        let s = specialize(&p, &p.hints).unwrap();
        let mut out = Vec::new();
        s.instantiate_into(&[2, 5], &mut out).unwrap();
        let ptrs: Vec<*const i64> = out.iter().map(|v| v.sizes.as_ptr()).collect();
        s.instantiate_into(&[3, 7], &mut out).unwrap();
        assert_eq!(
            ptrs,
            out.iter().map(|v| v.sizes.as_ptr()).collect::<Vec<_>>()
        );
        assert_eq!(
            out,
            concrete(&p, &bindings_of(&p.symbols, &[3, 7])).unwrap()
        );
    }

    #[test]
    fn error_specializations_answer_their_error() {
        let p = Program::from_json(
            r#"{"inputs": [{"name": "x", "sizes": ["a"], "layout": "contiguous"},
                           {"name": "y", "sizes": ["b"], "layout": "contiguous"}],
                "hints": {"a": 2, "b": 3},
                "steps": [{"let": "z", "op": "add", "args": ["x", "y"]}],
                "outputs": ["z"]}"#,
        )
        .unwrap();
        let s = specialize(&p, &[2, 3]).unwrap();
        assert_eq!(s.error().map(Error::category), Some("broadcast"));
        assert!(s.admits(&[2, 3]).unwrap());
        assert_eq!(s.instantiate(&[2, 3]).unwrap_err().category(), "broadcast");
        // Every admitted binding really fails.
        for a in 0..5 {
            for b in 0..5 {
                if s.admits(&[a, b]).unwrap() {
                    let c = concrete(&p, &bindings_of(&p.symbols, &[a, b]));
                    assert_eq!(c.unwrap_err().category(), "broadcast", "a={a} b={b}");
                }
            }
        }
    }
}
