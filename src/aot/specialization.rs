//! A specialization: guards plus the plan (as expressions) that holds under them.

use super::program::PlanProgram;
use super::spec::Spec;
use crate::error::{Error, Result};
use crate::iter::Plan;
use crate::sym::{CompiledGuards, Expr, Guard, GuardSet};

/// One traced specialization of a spec.
///
/// Soundness contract: for every binding of the spec's symbols under which all `guards`
/// hold, `plan` evaluated at the binding equals the plan a concrete iterator build computes
/// for the spec's inputs at that binding (see the [module docs](super)).
#[derive(Clone, Debug)]
pub struct Specialization {
    /// The symbol values the trace ran at (spec symbol order).
    pub traced_at: Vec<i64>,
    /// The guards, in recording order (symbol ranges first), each with its reason.
    pub guards: Vec<Guard>,
    /// The plan as expressions over the symbols: iteration shape, per-operand byte strides
    /// and offsets, perm, output sizes and strides.
    pub plan: Plan<Expr>,
    compiled: CompiledGuards,
    program: PlanProgram,
}

impl PartialEq for Specialization {
    fn eq(&self, other: &Self) -> bool {
        self.traced_at == other.traced_at && self.guards == other.guards && self.plan == other.plan
    }
}

impl Specialization {
    /// Assembles and compiles a specialization (guards and plan are checked to mention only
    /// the spec's symbols, and the plan's shape to be consistent).
    pub fn new(
        spec: &Spec,
        traced_at: Vec<i64>,
        guards: Vec<Guard>,
        plan: Plan<Expr>,
    ) -> Result<Specialization> {
        if traced_at.len() != spec.symbols.len() {
            return Err(Error::invalid(format!(
                "specialization traced at {} values for {} symbols",
                traced_at.len(),
                spec.symbols.len()
            )));
        }
        let set = GuardSet::from(guards.clone());
        for s in set.symbols() {
            if spec.symbol_index(s.as_str()).is_none() {
                return Err(Error::symbol(format!(
                    "guard mentions unknown symbol `{s}`"
                )));
            }
        }
        let compiled = set.compile(&spec.symbols)?;

        let program = PlanProgram::new(&spec.symbols, &plan)?;

        Ok(Specialization {
            traced_at,
            guards,
            plan,
            compiled,
            program,
        })
    }

    /// Index of the first guard that fails at `values` (spec symbol order), `None` when
    /// every guard holds. Compiled evaluation: nanoseconds, no allocation.
    #[inline]
    pub fn first_failing_guard(&self, values: &[i64]) -> Result<Option<usize>> {
        self.compiled.eval(values)
    }

    /// True when every guard holds at `values`.
    #[inline]
    pub fn admits(&self, values: &[i64]) -> Result<bool> {
        Ok(self.compiled.eval(values)?.is_none())
    }

    /// The plan at `values` (the caller has checked the guards).
    pub fn instantiate(&self, values: &[i64]) -> Result<Plan<i64>> {
        let mut p = self.program.skeleton();
        self.program.instantiate_into(values, &mut p)?;
        Ok(p)
    }

    /// Like [`Specialization::instantiate`], reusing `out`'s allocations (no allocation when
    /// `out` already has this plan's structure).
    #[inline]
    pub fn instantiate_into(&self, values: &[i64], out: &mut Plan<i64>) -> Result<()> {
        self.program.instantiate_into(values, out)
    }

    /// The output's sizes and strides at `values`.
    pub fn output_layout(&self, values: &[i64]) -> Result<(Vec<i64>, Vec<i64>)> {
        self.program.output_layout(values)
    }
}
