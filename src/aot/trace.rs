//! Tracing a spec: the iterator build run on `SymInt`s, and its concrete twin.

use super::spec::{SizeSpec, Spec};
use super::specialization::Specialization;
use crate::error::{Error, Result};
use crate::iter::{Plan, TensorIteratorConfig, TensorSpec, FLOAT32_SIZE};
use crate::sym::{BoolExpr, Expr, Guard, ShapeEnv, SymInt, SymbolSpec};

/// Element size of every operand (the specs are float32).
pub const ELEMENT_SIZE: usize = FLOAT32_SIZE;

/// The smallest value a symbol traced at `hint` is assumed to take.
///
/// A symbol traced at a positive value is created with range `>= 1`: size 0 changes many
/// layout rules (contiguous strides use `max(size, 1)`, a zero-size tensor is trivially
/// contiguous), and excluding it keeps the traced expressions polynomial (`h*w` rather than
/// `Max(h, 1)*Max(w, 1)`) and the guards about the shapes users actually run. That range is
/// an assumption the trace relies on without a recorded guard, so every specialization lists
/// it explicitly as a guard `s >= 1`. A symbol traced at 0 is created with range exactly
/// `[0, 0]` and the guard `s == 0`: a size-0 class is its own specialization, every decision
/// about that symbol is static, and no guard has to spell out `Max(s, 1)` cases.
pub fn symbol_min(hint: i64) -> i64 {
    if hint == 0 {
        0
    } else {
        1
    }
}

/// Reason attached to the range guard of a symbol: sizes and strides are described as what
/// they are.
fn range_reason(name: &str, is_size: bool, zero: bool) -> String {
    let what = if is_size { "size" } else { "stride" };
    if zero {
        format!("symbol range: `{name}` was traced as a {what} of 0 (its own specialization)")
    } else if is_size {
        format!(
            "symbol range: `{name}` was traced as a size >= 1 (size 0 is a separate specialization)"
        )
    } else {
        format!(
            "symbol range: `{name}` was traced as a stride >= 1 (stride 0 is a separate specialization)"
        )
    }
}

/// Traces `spec` with every symbol at `at` (spec symbol order): the iterator build on
/// `SymInt`s, returning the guards it recorded (plus the symbols' range assumptions) and the
/// plan as expressions. A build that fails (shapes that do not broadcast) is an error.
///
/// At a binding where some input is empty and the inputs do not all share one shape, the
/// result is an *empty-output specialization* ([`Specialization::new_empty_output`]; see
/// `empty_output_at`).
pub fn trace(spec: &Spec, at: &[i64]) -> Result<Specialization> {
    if let Some(guards) = empty_output_at(spec, at)? {
        return Specialization::new_empty_output(spec, at.to_vec(), guards);
    }
    let t = trace_parts(spec, at)?;
    Specialization::new(spec, t.traced_at, t.guards, t.plan)
}

/// Like [`trace`], but a build that fails with a broadcast error gives an *error
/// specialization* ([`Specialization::new_error`]): the guards recorded on the way to the
/// failure (every branch the build took, including the failing comparison) prove that
/// every binding satisfying them fails the same way.
pub fn trace_or_error(spec: &Spec, at: &[i64]) -> Result<Specialization> {
    match trace_outcome(spec, at, EmptyRule::EmptyOutput)? {
        (guards, Answer::Plan(plan)) => Specialization::new(spec, at.to_vec(), guards, plan),
        (guards, Answer::EmptyOutput) => {
            Specialization::new_empty_output(spec, at.to_vec(), guards)
        }
        (guards, Answer::Error(category)) => {
            Specialization::new_error(spec, at.to_vec(), guards, &category)
        }
    }
}

/// How a trace ends.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Answer {
    /// The build succeeds with this plan.
    Plan(Plan<Expr>),
    /// The build succeeds with an empty output, whose layout dispatch computes (see
    /// [`empty_output_at`]).
    EmptyOutput,
    /// The build fails with an error of this golden category.
    Error(String),
}

/// How a trace answers a binding where some input is empty (the inputs not all of one
/// shape).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EmptyRule {
    /// With [`Answer::EmptyOutput`] and the guards of [`empty_output_guards`]: what every
    /// trace does now.
    EmptyOutput,
    /// With a plan traced at that zero pattern (the zeros as constants): how artifacts
    /// written before empty-output specializations existed stored such bindings; their
    /// verification re-traces the same way.
    ZeroClassPlan,
}

/// [`trace_or_error`] without compiling the result: the guards, and the plan, the empty
/// output, or the category of the broadcast error (its guards cut to the failing
/// dimension). Other errors are errors.
pub(crate) fn trace_outcome(
    spec: &Spec,
    at: &[i64],
    rule: EmptyRule,
) -> Result<(Vec<Guard>, Answer)> {
    let (guards, answer) = trace_outcome_recorded(spec, at, rule)?;
    Ok((guards.simplified(), answer))
}

/// [`trace_outcome`] with a plan's guards left as recorded ([`TracedGuards::Recorded`]):
/// the loader's verification simplifies them only when it needs to.
pub(crate) fn trace_outcome_recorded(
    spec: &Spec,
    at: &[i64],
    rule: EmptyRule,
) -> Result<(TracedGuards, Answer)> {
    if rule == EmptyRule::EmptyOutput {
        if let Some(guards) = empty_output_at(spec, at)? {
            return Ok((TracedGuards::Simplified(guards), Answer::EmptyOutput));
        }
    }
    match trace_inner(spec, at)? {
        (guards, Ok(plan)) => Ok((TracedGuards::Recorded(guards), Answer::Plan(plan))),
        (guards, Err(e @ Error::Broadcast { from_end, .. })) => Ok((
            TracedGuards::Simplified(failing_dim_guards(spec, guards.simplify(), from_end)),
            Answer::Error(e.category().to_string()),
        )),
        (_, Err(e)) => Err(e),
    }
}

/// A trace's guards: in their stored (simplified) form, or as recorded.
pub(crate) enum TracedGuards {
    /// The form a specialization stores.
    Simplified(Vec<Guard>),
    /// As the build recorded them, simplified on demand.
    Recorded(RecordedGuards),
}

impl TracedGuards {
    /// The stored form.
    pub(crate) fn simplified(self) -> Vec<Guard> {
        match self {
            TracedGuards::Simplified(g) => g,
            TracedGuards::Recorded(r) => r.simplify(),
        }
    }
}

/// A trace's guards as the shape environment recorded them (plus the symbols' range
/// guards), before [`simplify_guards`](super::guards::simplify_guards) makes them the
/// stored form.
///
/// Why keep them: the loader's verification asks whether the stored guards imply a trace's
/// guards, and the simplification was about half of a trace (47% of `artifact_load_100`).
/// The simplification keeps the conjunction (each step replaces a guard by
/// one equivalent to it under the others and the ranges), and the environment's pruning only
/// drops guards the kept ones imply. So stored guards that imply every recorded guard imply
/// the trace's simplified guards: the verifier tries that first, with one decision per
/// recorded guard under facts assumed once, and simplifies only when it fails.
pub(crate) struct RecordedGuards {
    symbols: Vec<String>,
    at: Vec<i64>,
    mins: Vec<i64>,
    /// One range guard per symbol (`s >= 1`, `s == 0`), except sizes kept free at an empty
    /// point.
    range: Vec<Guard>,
    env: ShapeEnv,
}

impl RecordedGuards {
    /// Every guard as recorded: the range guards, then the environment's (unpruned).
    pub(crate) fn recorded(&self) -> Vec<Guard> {
        let mut all = self.range.clone();
        all.extend(self.env.guards_unpruned());
        all
    }

    /// The stored form.
    pub(crate) fn simplify(&self) -> Vec<Guard> {
        let mut all = self.range.clone();
        all.extend(self.env.guards());
        super::guards::simplify_guards(&self.symbols, &self.at, &self.mins, all, self.range.len())
    }
}

/// `Some(guards)` when `at` is a binding where some input is empty, the inputs do not all
/// share one shape and layout rule (those are traced over sizes `>= 0` instead, see
/// [`is_empty_point`]), and the shapes broadcast: the guards of
/// [`empty_output_guards`], which hold exactly where the same is true.
///
/// Why a rule of its own: an empty output's layout is all a binding observes (nothing is
/// iterated), but where shapes broadcast that layout depends on the zero pattern in ways
/// no single expression captures (see [`is_empty_point`]): traced per zero pattern, a
/// rank-10 broadcast needs a plan for each of up to 2^10 patterns (the cover stopped at
/// 256 specializations). An empty-output specialization instead states the condition
/// "the shapes broadcast and some input is empty" and leaves the layout to dispatch, which
/// computes it with the concrete build (rank-many integer operations; no kernel runs).
/// One specialization answers every empty binding of a spec.
pub(crate) fn empty_output_at(spec: &Spec, at: &[i64]) -> Result<Option<Vec<Guard>>> {
    if at.len() != spec.symbols.len() || is_same_shape(spec) {
        return Ok(None);
    }
    let size_at = |s: &SizeSpec| match s {
        SizeSpec::Const(k) => *k,
        SizeSpec::Sym(j) => at[*j],
    };
    if !spec.inputs.iter().any(|inp| inp.sizes.iter().any(|s| size_at(s) == 0)) {
        return Ok(None);
    }
    match concrete_plan(spec, at) {
        Ok(plan) if plan.is_statically_empty() => {}
        // A broadcast error: traced symbolically (an error specialization).
        Err(Error::Broadcast { .. }) => return Ok(None),
        Err(e) => return Err(e),
        Ok(_) => {
            return Err(Error::invalid(
                "internal error: an input is empty but the output is not",
            ))
        }
    }
    let guards = empty_output_guards(spec);
    let b = spec.bindings(at);
    for g in &guards {
        if !g.cond.eval(&b)? {
            return Err(Error::invalid(format!(
                "internal error: the empty-output guard `{}` fails where the output is empty",
                g.cond
            )));
        }
    }
    Ok(Some(guards))
}

/// The condition under which the op succeeds with an empty output, from the spec alone:
/// the shapes broadcast (at every dimension, aligned at the last, any two sizes are equal
/// or one of them is 1) and some size is 0. Exact: an input with a size-0 dimension makes
/// that output dimension 0 when the shapes broadcast (the others are then 0 or 1), and an
/// empty output needs an empty input.
pub(crate) fn empty_output_guards(spec: &Spec) -> Vec<Guard> {
    let expr = |s: &SizeSpec| match s {
        SizeSpec::Const(k) => Expr::constant(*k),
        SizeSpec::Sym(j) => Expr::symbol(&spec.symbols[*j]),
    };
    let rank = spec.inputs.iter().map(|i| i.sizes.len()).max().unwrap_or(0);
    let mut guards: Vec<Guard> = Vec::new();
    let one = Expr::constant(1);
    for from_end in 0..rank {
        let mut at_dim: Vec<&SizeSpec> = Vec::new();
        for inp in &spec.inputs {
            if let Some(d) = inp.sizes.len().checked_sub(from_end + 1) {
                let s = &inp.sizes[d];
                if *s != SizeSpec::Const(1) && !at_dim.contains(&s) {
                    at_dim.push(s);
                }
            }
        }
        for (i, x) in at_dim.iter().enumerate() {
            for y in &at_dim[i + 1..] {
                let (x, y) = (expr(x), expr(y));
                let cond = BoolExpr::or_all([
                    BoolExpr::eq(&x, &y),
                    BoolExpr::eq(&x, &one),
                    BoolExpr::eq(&y, &one),
                ]);
                if cond.as_const() == Some(true) {
                    continue;
                }
                guards.push(Guard {
                    cond,
                    reason: format!(
                        "empty output: the shapes broadcast (dimension {} from the end)",
                        from_end
                    ),
                });
            }
        }
    }
    let mut zeros: Vec<BoolExpr> = Vec::new();
    let mut has_const_zero = false;
    for inp in &spec.inputs {
        for s in &inp.sizes {
            match s {
                SizeSpec::Const(0) => has_const_zero = true,
                SizeSpec::Const(_) => {}
                SizeSpec::Sym(_) => {
                    let z = BoolExpr::eq(&expr(s), &Expr::constant(0));
                    if !zeros.contains(&z) {
                        zeros.push(z);
                    }
                }
            }
        }
    }
    if !has_const_zero {
        guards.push(Guard {
            cond: BoolExpr::or_all(zeros),
            reason: "empty output: some input size is 0 (the layout is computed at dispatch)"
                .to_string(),
        });
    }
    guards
}

/// The guards of a trace that failed to broadcast at the dimension `from_end` dimensions
/// before the last, cut to that dimension: the conjuncts connected to its sizes (the
/// symbols that size it in some input, inputs aligned at their last dimension, closed
/// under "appears in a conjunct with"), and no others.
///
/// Why this is sound: every binding that satisfies the trace's guards takes the traced
/// path, so the guards imply that the sizes at that dimension do not broadcast, a
/// condition on its size symbols alone. The conjuncts left out mention none of the
/// connected symbols and hold at the trace point, so they cannot help imply a condition on
/// those symbols: the kept conjuncts imply it alone. Any binding they admit fails to
/// broadcast with the same category (`broadcast`), perhaps at another dimension first.
/// Why it matters: the full guards also pin every other dimension's decisions, so the
/// failing bindings split into one class per combination of the other dimensions'
/// outcomes (a 3-dimension spec with independent sizes: hundreds), all answering the same
/// error.
fn failing_dim_guards(spec: &Spec, guards: Vec<Guard>, from_end: usize) -> Vec<Guard> {
    let mut connected: Vec<crate::sym::Symbol> = spec
        .inputs
        .iter()
        .filter_map(|inp| {
            let d = inp.sizes.len().checked_sub(from_end + 1)?;
            match inp.sizes.get(d)? {
                super::spec::SizeSpec::Sym(j) => {
                    Some(crate::sym::Symbol::new(&spec.symbols[*j]))
                }
                super::spec::SizeSpec::Const(_) => None,
            }
        })
        .collect();
    let mut parts: Vec<(BoolExpr, Vec<crate::sym::Symbol>, String)> = Vec::new();
    for g in guards {
        for cond in g.cond.conjuncts().map_or_else(|| vec![g.cond.clone()], |c| c.to_vec()) {
            if !parts.iter().any(|(c, _, _)| *c == cond) {
                let symbols = cond.symbols();
                parts.push((cond, symbols, g.reason.clone()));
            }
        }
    }
    loop {
        let before = connected.len();
        for (_, symbols, _) in &parts {
            if symbols.iter().any(|s| connected.contains(s)) {
                for s in symbols {
                    if !connected.contains(s) {
                        connected.push(s.clone());
                    }
                }
            }
        }
        if connected.len() == before {
            break;
        }
    }
    parts
        .into_iter()
        .filter(|(_, symbols, _)| symbols.iter().all(|s| connected.contains(s)))
        .map(|(cond, _, reason)| Guard { cond, reason })
        .collect()
}

/// A trace's guards and plan, not yet compiled into a [`Specialization`] (the loader's
/// verification compares them and needs nothing more).
pub(crate) struct Traced {
    pub(crate) traced_at: Vec<i64>,
    pub(crate) guards: Vec<Guard>,
    pub(crate) plan: Plan<Expr>,
}

/// [`trace`] without compiling the result.
pub(crate) fn trace_parts(spec: &Spec, at: &[i64]) -> Result<Traced> {
    let (guards, plan) = trace_inner(spec, at)?;
    Ok(Traced {
        traced_at: at.to_vec(),
        guards: guards.simplify(),
        plan: plan?,
    })
}

/// The guards a trace recorded (simplified on demand: [`RecordedGuards`]), and its plan
/// or, when the build failed, the build's error (the guards then cover every branch taken
/// up to the failure).
fn trace_inner(spec: &Spec, at: &[i64]) -> Result<(RecordedGuards, Result<Plan<Expr>>)> {
    let t = TraceEnv::new(spec, at)?;
    let lift = |e: &Expr| -> Result<SymInt> { Ok(t.lift(e)) };
    let built = build(
        spec,
        |i, d| match &spec.inputs[i].sizes[d] {
            super::spec::SizeSpec::Const(k) => SymInt::constant(*k),
            super::spec::SizeSpec::Sym(j) if at[*j] == 0 && !t.empty => SymInt::constant(0),
            super::spec::SizeSpec::Sym(j) => t.syms[*j].clone(),
        },
        &lift,
    );
    let guards = t.into_recorded();
    match built {
        Ok(plan) => Ok((
            guards,
            Ok(plan.try_map(|s| Ok::<_, Error>(s.expr().clone()))?),
        )),
        Err(e) => Ok((guards, Err(e))),
    }
}

/// `plan` (a specialization's, from a trace elsewhere) coalesced again as the build would
/// coalesce it at `at`, with the guards that decisions recorded (the same range guards and
/// symbol environment as a trace at `at`): over the bindings where those guards hold,
/// instantiating `plan` and coalescing it ([`Plan::coalesce`]) gives the returned plan
/// instantiated. The cover uses it to let a specialization answer bindings where some of
/// its iteration dimensions have size 1 (see `cover::plan_agrees`), and the loader to
/// verify such a specialization.
pub(crate) fn coalesce_at(
    spec: &Spec,
    at: &[i64],
    plan: &Plan<Expr>,
) -> Result<(RecordedGuards, Plan<Expr>)> {
    let t = TraceEnv::new(spec, at)?;
    let mut lifted = plan.try_map(|e| Ok::<_, Error>(t.lift(e)))?;
    lifted.coalesce()?;
    let plan = lifted.try_map(|s| Ok::<_, Error>(s.expr().clone()))?;
    Ok((t.into_recorded(), plan))
}

/// The symbol environment of a trace at a point: one symbol per spec symbol with its hint
/// and range, and the range guards.
struct TraceEnv<'a> {
    spec: &'a Spec,
    at: &'a [i64],
    env: ShapeEnv,
    syms: Vec<SymInt>,
    guards: Vec<Guard>,
    mins: Vec<i64>,
    /// See [`is_empty_point`].
    empty: bool,
}

impl<'a> TraceEnv<'a> {
    fn new(spec: &'a Spec, at: &'a [i64]) -> Result<TraceEnv<'a>> {
        if at.len() != spec.symbols.len() {
            return Err(Error::invalid(format!(
                "trace point has {} values for {} symbols",
                at.len(),
                spec.symbols.len()
            )));
        }
        // The trace point must describe real tensors (the loader compares the plan with a
        // concrete build there): a stride that divides by zero, is negative or overflows at
        // `at` is an error here rather than an artifact that cannot be loaded.
        spec.concrete_inputs(at)?;
        let env = ShapeEnv::default();
        let mut syms = Vec::with_capacity(at.len());
        let mut guards = Vec::new();
        let empty = is_empty_point(spec, at);
        let mut mins = Vec::with_capacity(at.len());
        for (i, (name, &v)) in spec.symbols.iter().zip(at).enumerate() {
            if v < 0 {
                return Err(Error::symbol(format!(
                    "symbol `{name}` = {v}: sizes are non-negative"
                )));
            }
            let free_size = empty && spec.is_size_symbol(i);
            let min = if free_size { 0 } else { symbol_min(v) };
            mins.push(min);
            syms.push(env.create_symbol(
                name,
                v,
                SymbolSpec {
                    min,
                    max: (v == 0 && !free_size).then_some(0),
                    ..SymbolSpec::default()
                },
            )?);
            if free_size {
                continue;
            }
            guards.push(Guard {
                cond: if v == 0 {
                    BoolExpr::eq(&Expr::symbol(name), &Expr::constant(0))
                } else {
                    BoolExpr::ge(&Expr::symbol(name), &Expr::constant(min))
                },
                reason: range_reason(name, spec.is_size_symbol(i), v == 0),
            });
        }
        Ok(TraceEnv {
            spec,
            at,
            env,
            syms,
            guards,
            mins,
            empty,
        })
    }

    /// An expression over the spec's symbols as a symbolic integer of this environment.
    ///
    /// A stride symbol traced at 0 enters the build as the constant 0 (its guard `s == 0`
    /// says so): no decision and no expression depends on it. Size symbols at an empty
    /// point stay symbols over `>= 0` (see [`is_empty_point`]).
    fn lift(&self, e: &Expr) -> SymInt {
        let zero = |s: &crate::sym::Symbol| {
            self.spec
                .symbol_index(s.as_str())
                .filter(|&i| self.at[i] == 0 && !(self.empty && self.spec.is_size_symbol(i)))
                .map(|_| Expr::constant(0))
        };
        SymInt::from_expr(e.substitute(&zero), &self.env)
    }

    fn into_recorded(self) -> RecordedGuards {
        RecordedGuards {
            symbols: self.spec.symbols.clone(),
            at: self.at.to_vec(),
            mins: self.mins,
            range: self.guards,
            env: self.env,
        }
    }
}

/// True when the trace at `at` keeps every size symbol a symbol over `>= 0` instead of
/// specializing the zeros: some size symbol is 0 there, every input has the same sizes and
/// strides given by a memory format.
///
/// Why: PyTorch's answer for such inputs is one rule over every zero pattern (the fast
/// setup's output strides are the format's strides, written with `Max(s, 1)`), so one trace
/// answers all `2^k - 1` zero patterns of `k` size symbols where specializing each zero
/// gives one plan per pattern (a 10-symbol spec needs 1023). Where shapes broadcast, the
/// zero patterns change the permutation and the trace over `>= 0` would record guards over
/// `Max` and products the cover's case split proves slowly; there an empty output is
/// answered by an empty-output specialization instead ([`empty_output_at`]), and a zero
/// pattern is traced as its own class only under [`EmptyRule::ZeroClassPlan`] (verifying
/// artifacts written before those existed).
///
/// Measured (PyTorch 2.15 and the concrete build, which agree): where shapes
/// broadcast, an empty output's strides are *not* the format's strides with `Max(s, 1)` in
/// general. When TensorIterator's permutation is the plain reversal the output is allocated
/// contiguous (`Max(s, 1)` products); otherwise its strides are the prefix products of the
/// permuted shape without `Max`, so a zero-size dim zeroes the stride of every dim permuted
/// outside it (`[a, b, c, d]` contiguous + `[b, 1, 1]` at `a = 0, b = 1, c = 4, d = 5`:
/// strides `[20, 0, 5, 1]`, not `[20, 20, 5, 1]`). So the zero patterns of a broadcasting spec
/// really have several plans. Tracing them over sizes `>= 0` here too (an experiment)
/// gave complete covers with fewer specializations (`[a, b, c, d]` + `[b, 1, 1]`: 40
/// instead of 51; channels-last `[n, c, h, w]` + `[c, 1, 1]`: 13 instead of 21) but the
/// loader (`retrace.rs`) cannot yet verify regions stated over `Max(s, 1)` products, and a
/// 6-symbol `addcmul` took 18 s: not enabled.
fn is_empty_point(spec: &Spec, at: &[i64]) -> bool {
    is_same_shape(spec)
        && at
            .iter()
            .enumerate()
            .any(|(i, &v)| v == 0 && spec.is_size_symbol(i))
}

/// Every input has the same sizes and strides given by a memory format.
fn is_same_shape(spec: &Spec) -> bool {
    spec.inputs.iter().all(|inp| {
        inp.sizes == spec.inputs[0].sizes
            && matches!(inp.strides, super::spec::StrideSpec::Layout(_))
    })
}

/// The concrete (eager) plan of `spec` at symbol values `values`: what a fresh `i64`
/// iterator build computes. The reference every specialization must reproduce.
pub fn concrete_plan(spec: &Spec, values: &[i64]) -> Result<Plan<i64>> {
    if values.len() != spec.symbols.len() {
        return Err(Error::invalid(format!(
            "{} values for {} symbols",
            values.len(),
            spec.symbols.len()
        )));
    }
    let inputs = spec.concrete_inputs(values)?;
    build_concrete(&inputs)
}

/// The concrete plan for concrete inputs `(sizes, strides)`.
pub fn build_concrete(inputs: &[(Vec<i64>, Vec<i64>)]) -> Result<Plan<i64>> {
    let mut config = TensorIteratorConfig::<i64>::new()
        .add_undefined_output(ELEMENT_SIZE)
        .options(aot_options());
    for (sizes, strides) in inputs {
        config = config.add_input(TensorSpec::new(
            sizes.clone(),
            strides.clone(),
            ELEMENT_SIZE,
        ));
    }
    config.build()
}

/// The iterator options of every ahead-of-time build, traced or concrete: PyTorch's
/// defaults, and empty outputs in their canonical form ([`Plan::canonicalize_empty`]), so
/// that the plan of an empty binding is its output layout and nothing that only the
/// (never executed) iteration over it would need.
fn aot_options() -> crate::iter::IterOptions {
    crate::iter::IterOptions {
        canonical_empty: true,
        ..Default::default()
    }
}

fn build<I: crate::Int>(
    spec: &Spec,
    size: impl Fn(usize, usize) -> I,
    lift: &dyn Fn(&Expr) -> Result<I>,
) -> Result<Plan<I>> {
    let mut config = TensorIteratorConfig::<I>::new()
        .add_undefined_output(ELEMENT_SIZE)
        .options(aot_options());
    for (i, inp) in spec.inputs.iter().enumerate() {
        let sizes: Vec<I> = (0..inp.sizes.len()).map(|d| size(i, d)).collect();
        let strides = spec.input_strides(i, &sizes, lift)?;
        config = config.add_input(TensorSpec::new(sizes, strides, ELEMENT_SIZE));
    }
    config.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan the build coalesced is a fixed point of coalescing again (instantiation
    /// coalesces a plan again where its verification needed it: on a specialization's own
    /// bindings that must change nothing), and coalescing a plan whose dimensions were
    /// split by sizes 1 gives the build's: inputs of sizes in 0..=2 (broadcasting, transposed, with sizes 1), their
    /// plan with a size-1 dimension (of any strides) inserted at every position.
    #[test]
    fn coalescing_a_built_plan_again_changes_nothing() {
        let mut rng = crate::testing::Lcg::new(0x9e37_79b9_7f4a_7c15);
        let mut next = |n: u64| rng.below(n) as i64;
        let mut checked = 0;
        for _ in 0..3000 {
            let rank = 1 + next(4) as usize;
            let sizes: Vec<i64> = (0..rank).map(|_| next(4)).collect();
            let other: Vec<i64> = sizes.iter().map(|&s| if next(3) == 0 { 1 } else { s }).collect();
            let contiguous = |s: &[i64]| {
                let mut st = vec![1i64; s.len()];
                for d in (0..s.len().saturating_sub(1)).rev() {
                    st[d] = st[d + 1] * s[d + 1].max(1);
                }
                st
            };
            let mut st = contiguous(&other);
            if next(2) == 0 && rank >= 2 {
                st.swap(0, rank - 1);
            }
            let Ok(plan) = build_concrete(&[(sizes.clone(), contiguous(&sizes)), (other, st)]) else {
                continue;
            };
            if plan.broadcast_shape.contains(&0) {
                continue;
            }
            let mut again = plan.clone();
            again.coalesce().unwrap();
            assert_eq!(again, plan, "{sizes:?}");
            // (Over one element every stride is unobservable, and a size-1 dimension's
            // strides may then be kept: not compared.)
            let one = plan.shape == [1];
            for at in (0..=plan.shape.len()).filter(|_| !one) {
                let mut split = plan.clone();
                split.shape.insert(at, 1);
                for op in &mut split.operands {
                    op.byte_strides.insert(at, 4 * (1 + next(50)));
                }
                split.coalesce().unwrap();
                assert_eq!(split, plan, "{sizes:?}, a size 1 at {at}");
            }
            checked += 1;
        }
        assert!(checked > 1000, "{checked}");
    }

    /// The loader's quick check rests on this: a trace's recorded guards and its simplified
    /// guards admit exactly the same bindings (sizes and strides `>= 0`). Differential, at
    /// pseudo-random trace points and bindings of a broadcasting, a channels-last and a
    /// free-stride spec.
    #[test]
    fn recorded_and_simplified_guards_admit_the_same_bindings() {
        let mut rng = crate::testing::Lcg::new(0x2545_f491_4f6c_dd1d);
        let mut next = |n: u64| rng.below(n);
        const VALUES: [i64; 6] = [0, 1, 2, 3, 4, 7];
        for json in [
            crate::aot::ARTIFACT_100_SPEC_JSON,
            crate::aot::SEED_SPEC_JSON,
            crate::aot::COVER_FREE_STRIDES_3D_SPEC_JSON,
        ] {
            let spec = Spec::from_json(json).unwrap();
            let n = spec.symbols.len();
            let (mut traces, mut admitted, mut rejected) = (0, 0, 0);
            for _ in 0..60 {
                // 1, 2 or 3 (1 half the time), so that most points broadcast and few
                // are empty (empty outputs and errors keep no recorded guards).
                let at: Vec<i64> = (0..n).map(|_| [1, 1, 2, 3][next(4) as usize]).collect();
                let Ok((TracedGuards::Recorded(r), _)) =
                    trace_outcome_recorded(&spec, &at, EmptyRule::EmptyOutput)
                else {
                    continue;
                };
                traces += 1;
                let (recorded, simplified) = (r.recorded(), r.simplify());
                for _ in 0..200 {
                    // Near the trace point (its class is small among 6^n bindings).
                    let p: Vec<i64> = at
                        .iter()
                        .map(|&v| if next(3) == 0 { VALUES[next(6) as usize] } else { v })
                        .collect();
                    let b = spec.bindings(&p);
                    let holds =
                        |gs: &[Guard]| gs.iter().all(|g| g.cond.eval(&b).ok() == Some(true));
                    let want = holds(&recorded);
                    assert_eq!(
                        holds(&simplified),
                        want,
                        "traced at {at:?}, binding {p:?}: recorded {:?} simplified {:?}",
                        recorded.iter().map(|g| g.cond.to_string()).collect::<Vec<_>>(),
                        simplified.iter().map(|g| g.cond.to_string()).collect::<Vec<_>>()
                    );
                    if want {
                        admitted += 1;
                    } else {
                        rejected += 1;
                    }
                }
            }
            assert!(
                traces >= 10 && admitted > 0 && rejected > 0,
                "{json}: {traces} traces, {admitted} admitted, {rejected} rejected"
            );
        }
    }
}
