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
    /// and offsets, perm, output sizes and strides. Empty for an error specialization.
    pub plan: Plan<Expr>,
    /// For an *error specialization*: the golden error category (`"broadcast"`) every
    /// binding satisfying the guards fails with (the guards are the conditions the trace
    /// took on its way to the failure, so they prove it). `None` for a plan.
    pub error: Option<String>,
    /// Where the loader's verification re-traced besides `traced_at` when the artifact was
    /// compiled (`"verify_points"` in the file): hints that spare a load its search for
    /// points, not trusted (a hint is used only for a region it lies in, where any point
    /// would do; see `aot::retrace`). `None` when not recorded (a specialization built in
    /// memory, or a file written before they were stored). Not part of equality.
    pub verify_points: Option<Vec<Vec<i64>>>,
    /// For an *empty-output specialization* (`"empty_output": true` in the file): the spec,
    /// whose concrete build gives the output layout at dispatch. Its guards say that the
    /// shapes broadcast and some input is empty; its plan is empty. See
    /// [`Specialization::new_empty_output`].
    empty_output: Option<std::sync::Arc<Spec>>,
    compiled: CompiledGuards,
    program: PlanProgram,
}

impl PartialEq for Specialization {
    fn eq(&self, other: &Self) -> bool {
        self.traced_at == other.traced_at
            && self.guards == other.guards
            && self.plan == other.plan
            && self.error == other.error
            && self.is_empty_output() == other.is_empty_output()
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
            error: None,
            verify_points: None,
            empty_output: None,
            compiled,
            program,
        })
    }

    /// An error specialization: every binding satisfying `guards` makes the op fail with
    /// the error of golden category `category` (see [`Specialization::error`]).
    pub fn new_error(
        spec: &Spec,
        traced_at: Vec<i64>,
        guards: Vec<Guard>,
        category: &str,
    ) -> Result<Specialization> {
        let mut s = Specialization::new(spec, traced_at, guards, Plan::nothing())?;
        s.error = Some(category.to_string());
        Ok(s)
    }

    /// An empty-output specialization: every binding satisfying `guards` makes the op
    /// succeed with an empty output (the shapes broadcast and some input is empty). Nothing
    /// is iterated there, so the plan is the concrete build's at the binding, computed when
    /// it is instantiated (its canonical empty form: the output layout PyTorch allocates,
    /// nothing to iterate). Why the layout is not stored as expressions: where shapes
    /// broadcast it depends on the zero pattern (see `aot::trace::empty_output_at`), and one
    /// plan per pattern multiplied the specializations of a cover (2^k for k sizes).
    pub fn new_empty_output(
        spec: &Spec,
        traced_at: Vec<i64>,
        guards: Vec<Guard>,
    ) -> Result<Specialization> {
        let mut s = Specialization::new(spec, traced_at, guards, Plan::nothing())?;
        s.empty_output = Some(std::sync::Arc::new(spec.clone()));
        Ok(s)
    }

    /// What every binding the guards admit gets: the plan, an empty output, or the error.
    pub(crate) fn answer(&self) -> super::trace::Answer {
        use super::trace::Answer;
        match (&self.error, self.is_empty_output()) {
            (Some(category), _) => Answer::Error(category.clone()),
            (None, true) => Answer::EmptyOutput,
            (None, false) => Answer::Plan(self.plan.clone()),
        }
    }

    /// Whether instantiating the plan coalesces it again (PyTorch's `coalesce_dimensions`,
    /// [`Plan::coalesce`]): needed by a plan a cover widened to bindings where some of its
    /// iteration dimensions have size 1 (`CompileOptions::widen_size_1`), where the fresh
    /// build has fewer dimensions. On for a specialization built in memory; the compile's
    /// and the loader's verification turn it off where they proved every binding of the
    /// guards gets the stored plan as it is.
    pub fn coalesces_on_instantiation(&self) -> bool {
        self.program.coalesces()
    }

    /// See [`Specialization::coalesces_on_instantiation`].
    pub(crate) fn set_coalesce(&mut self, on: bool) {
        self.program.set_coalesce(on);
    }

    /// True for an empty-output specialization ([`Specialization::new_empty_output`]).
    pub fn is_empty_output(&self) -> bool {
        self.empty_output.is_some()
    }

    /// The concrete plan of an empty-output specialization at `values`.
    fn concrete_empty_plan(&self, spec: &Spec, values: &[i64]) -> Result<Plan<i64>> {
        let plan = super::trace::concrete_plan(spec, values)?;
        if !plan.is_statically_empty() {
            return Err(Error::invalid(format!(
                "an empty-output specialization instantiated at {values:?}, where the output is not empty"
            )));
        }
        Ok(plan)
    }

    fn no_plan(&self) -> Error {
        Error::invalid(format!(
            "this specialization has no plan: its bindings fail with {}",
            self.error
                .as_deref()
                .map_or("an error".to_string(), crate::a_category_error)
        ))
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
        if self.error.is_some() {
            return Err(self.no_plan());
        }
        if let Some(spec) = &self.empty_output {
            return self.concrete_empty_plan(spec, values);
        }
        let mut p = self.program.skeleton();
        self.program.instantiate_into(values, &mut p)?;
        Ok(p)
    }

    /// Like [`Specialization::instantiate`], reusing `out`'s allocations (no allocation when
    /// `out` already has this plan's structure).
    #[inline]
    pub fn instantiate_into(&self, values: &[i64], out: &mut Plan<i64>) -> Result<()> {
        if self.error.is_some() {
            return Err(self.no_plan());
        }
        if let Some(spec) = &self.empty_output {
            *out = self.concrete_empty_plan(spec, values)?;
            return Ok(());
        }
        self.program.instantiate_into(values, out)
    }

    /// The output's sizes and strides at `values`.
    pub fn output_layout(&self, values: &[i64]) -> Result<(Vec<i64>, Vec<i64>)> {
        if self.error.is_some() {
            return Err(self.no_plan());
        }
        if let Some(spec) = &self.empty_output {
            let plan = self.concrete_empty_plan(spec, values)?;
            let strides = plan.output_strides.into_iter().next().unwrap_or_default();
            return Ok((plan.broadcast_shape, strides));
        }
        self.program.output_layout(values)
    }
}

