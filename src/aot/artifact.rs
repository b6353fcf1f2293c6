//! The artifact: a spec and its specializations, as versioned JSON, validated on load.

use super::retrace::Hints;
use super::cover::{cover_domain, uncovered_region, CompileOptions, Coverage};
use super::spec::Spec;
use super::specialization::Specialization;
use super::trace::{concrete_plan, ELEMENT_SIZE};
use crate::error::{Error, Result};
use crate::iter::{OperandPlan, Plan};
use crate::sym::{BoolExpr, Expr, Guard};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The `format` field of every artifact.
pub const ARTIFACT_FORMAT: &str = "symstride-aot";
/// The artifact format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// A compiled spec: what `symstride compile` writes and `guards`/`check`/`run` read.
#[derive(Clone, Debug, PartialEq)]
pub struct Artifact {
    /// The spec.
    pub spec: Spec,
    /// Specializations, tried in order by dispatch.
    pub specializations: Vec<Specialization>,
    /// With `--cover`: what the cover proof established (`"complete"`, `"domain"`,
    /// `"uncovered"` in the JSON). Validated on load: a `complete` claim is re-proved.
    pub coverage: Option<Coverage>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawArtifact {
    format: String,
    version: u32,
    spec: Value,
    symbols: Vec<String>,
    specializations: Vec<RawSpecialization>,
    #[serde(default)]
    complete: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    domain: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    uncovered: Vec<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpecialization {
    traced_at: BTreeMap<String, i64>,
    guards: Vec<RawGuard>,
    plan: RawPlan,
    /// The error category of an error specialization (its plan is empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// An empty-output specialization (its plan is empty; dispatch computes the layout).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    empty_output: bool,
    /// Where verification re-traced besides `traced_at` (values in `symbols` order): hints
    /// for the loader, see [`Specialization::verify_points`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    verify_points: Option<Vec<Vec<i64>>>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawGuard {
    cond: String,
    reason: String,
}

impl RawGuard {
    /// Guards as stored (both artifact versions).
    pub(crate) fn store(guards: &[Guard]) -> Vec<RawGuard> {
        guards
            .iter()
            .map(|g| RawGuard {
                cond: g.cond.to_string(),
                reason: g.reason.clone(),
            })
            .collect()
    }

    /// Stored guards parsed back; a condition that does not parse names its guard.
    pub(crate) fn load(raw: &[RawGuard]) -> Result<Vec<Guard>> {
        raw.iter()
            .enumerate()
            .map(|(i, g)| {
                Ok(Guard {
                    cond: BoolExpr::parse(&g.cond).map_err(|e| art(format!("guard {i}: {e}")))?,
                    reason: g.reason.clone(),
                })
            })
            .collect()
    }
}

/// A stored specialization's trace point in `symbols` order: every symbol has a value, none
/// is negative, and no other name appears (`owner` is "spec" or "program", for the message).
pub(crate) fn load_traced_at(
    symbols: &[String],
    traced_at: &BTreeMap<String, i64>,
    owner: &str,
) -> Result<Vec<i64>> {
    let mut out = Vec::with_capacity(symbols.len());
    for name in symbols {
        let v = *traced_at
            .get(name)
            .ok_or_else(|| art(format!("traced_at has no value for `{name}`")))?;
        if v < 0 {
            return Err(art(format!("traced_at: `{name}` = {v} is negative")));
        }
        out.push(v);
    }
    if traced_at.len() != symbols.len() {
        return Err(art(format!(
            "traced_at names symbols the {owner} does not have"
        )));
    }
    Ok(out)
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlan {
    shape: Vec<String>,
    perm: Vec<usize>,
    num_outputs: usize,
    operands: Vec<RawOperand>,
    broadcast_shape: Vec<String>,
    output_strides: Vec<Vec<String>>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOperand {
    /// The file keeps its version-1 name; the in-memory field is `OperandPlan::byte_strides`.
    #[serde(rename = "stride_bytes")]
    byte_strides: Vec<String>,
    offset: String,
    element_size: usize,
    is_output: bool,
}

/// An `Artifact` error.
pub(crate) fn art(message: impl Into<String>) -> Error {
    Error::Artifact {
        message: message.into(),
    }
}

/// `e` as an `Artifact` error about stored specialization `k` (both loaders report the
/// first failing specialization this way).
pub(crate) fn in_specialization(k: usize, e: Error) -> Error {
    match e {
        Error::Artifact { message } => art(format!("specialization {k}: {message}")),
        e => art(format!("specialization {k}: {e}")),
    }
}

/// Expressions as stored.
pub(crate) fn strings(v: &[Expr]) -> Vec<String> {
    v.iter().map(|e| e.to_string()).collect()
}

impl Artifact {
    /// Compiles `spec` (see [`CompileOptions`]).
    pub fn compile(spec: &Spec, options: &CompileOptions) -> Result<Artifact> {
        let (mut specializations, coverage, traced) =
            super::cover::compile_cover_traced(spec, options)?;
        // Each specialization goes through the loader's verification now (a compile never
        // writes what its own loader would reject), which records the points it re-traced
        // at: stored, they let a load skip its search for them (`aot::retrace`).
        use rayon::prelude::*;
        let traced = super::retrace::pool_of(&traced);
        specializations
            .par_iter_mut()
            .enumerate()
            .try_for_each(|(k, s)| -> Result<()> {
                let verified = super::retrace::verify_with(spec, s, Hints::Record, &traced);
                let points = verified.map_err(|e| {
                    Error::invalid(format!(
                        "the compile cannot verify specialization {k}, so no artifact is \
                         written (its loader would reject it): {}",
                        match e {
                            Error::Artifact { message } => message,
                            e => e.to_string(),
                        }
                    ))
                })?;
                s.verify_points = Some(points.points);
                s.set_coalesce(points.coalesced);
                Ok(())
            })?;
        Ok(Artifact {
            spec: spec.clone(),
            specializations,
            coverage,
        })
    }

    /// The artifact as pretty JSON.
    pub fn to_json(&self) -> String {
        let raw = RawArtifact {
            format: ARTIFACT_FORMAT.to_string(),
            version: FORMAT_VERSION,
            spec: self.spec.to_value(),
            symbols: self.spec.symbols.clone(),
            specializations: self
                .specializations
                .iter()
                .map(|s| RawSpecialization {
                    traced_at: self
                        .spec
                        .symbols
                        .iter()
                        .cloned()
                        .zip(s.traced_at.iter().copied())
                        .collect(),
                    guards: RawGuard::store(&s.guards),
                    plan: RawPlan {
                        shape: strings(&s.plan.shape),
                        perm: s.plan.perm.clone(),
                        num_outputs: s.plan.num_outputs,
                        operands: s
                            .plan
                            .operands
                            .iter()
                            .map(|o| RawOperand {
                                byte_strides: strings(&o.byte_strides),
                                offset: o.offset.to_string(),
                                element_size: o.element_size,
                                is_output: o.is_output,
                            })
                            .collect(),
                        broadcast_shape: strings(&s.plan.broadcast_shape),
                        output_strides: s.plan.output_strides.iter().map(|v| strings(v)).collect(),
                    },
                    error: s.error.clone(),
                    empty_output: s.is_empty_output(),
                    verify_points: s.verify_points.clone(),
                })
                .collect(),
            complete: self.coverage.as_ref().is_some_and(|c| c.complete),
            domain: self.coverage.as_ref().map_or(Vec::new(), |c| {
                c.domain.iter().map(|b| b.to_string()).collect()
            }),
            uncovered: self.coverage.as_ref().map_or(Vec::new(), |c| {
                c.uncovered.iter().map(|b| b.to_string()).collect()
            }),
        };
        serde_json::to_string_pretty(&raw).unwrap_or_default()
    }

    /// Parses and validates an artifact: format and version, the spec, every expression
    /// (parses, mentions only the spec's symbols), the plan's structure (operand count,
    /// ranks, perm, element sizes), each specialization's semantics at the point it was
    /// traced at (its guards hold there and its plan equals a fresh concrete build), and a
    /// fresh symbolic trace there: the stored guards must imply every traced guard and the
    /// stored plan must equal the traced plan as expressions, so a weakened or deleted
    /// guard, or a plan expression edited to agree only at the trace point, is rejected
    /// with the specialization and the guard or field named. Finally some specialization
    /// must admit the spec's hints (every compile traces there first).
    pub fn from_json(text: &str) -> Result<Artifact> {
        let v: Value = serde_json::from_str(text).map_err(|e| art(format!("not JSON: {e}")))?;
        let format = v.get("format").and_then(Value::as_str);
        if format != Some(ARTIFACT_FORMAT) {
            return Err(art(format!(
                "`format` is {}, expected \"{ARTIFACT_FORMAT}\"",
                v.get("format")
                    .map_or("missing".to_string(), |f| f.to_string())
            )));
        }
        match v.get("version").and_then(Value::as_u64) {
            Some(n) if n == FORMAT_VERSION as u64 => {}
            Some(n) => {
                return Err(art(format!(
                    "format version {n}; this build reads version {FORMAT_VERSION} (recompile the spec)"
                )))
            }
            None => return Err(art("missing or invalid `version`")),
        }
        let raw: RawArtifact = serde_json::from_value(v).map_err(|e| art(e.to_string()))?;
        let spec = Spec::from_value(&raw.spec).map_err(|e| art(format!("spec: {e}")))?;
        if raw.symbols != spec.symbols {
            return Err(art(format!(
                "symbols {:?} do not match the spec's {:?}",
                raw.symbols, spec.symbols
            )));
        }
        if raw.specializations.is_empty() {
            return Err(art("no specializations"));
        }
        let (complete, domain, uncovered) = (raw.complete, raw.domain, raw.uncovered);
        // Each specialization is parsed, then verified on its own (a re-trace each): in
        // parallel, the first failure in order reported. A cover's completeness claim is
        // re-proved beside the verification (`rayon::join`): the proof reads only the
        // stored guards and runs on one thread, so run after the verification it was a
        // quarter of the load of a 10-symbol cover. Its answer counts only once every
        // specialization has verified, so errors are reported in the same order as before:
        // parsing, verification, then the completeness claim (whose error names the region
        // a missing specialization leaves uncovered).
        use rayon::prelude::*;
        let parsed: Vec<Result<Specialization>> = raw
            .specializations
            .into_par_iter()
            .enumerate()
            .map(|(k, s)| parse_specialization(&spec, s).map_err(|e| in_specialization(k, e)))
            .collect();
        let mut specializations = parsed.into_iter().collect::<Result<Vec<_>>>()?;
        let (verified, coverage) = rayon::join(
            || {
                specializations
                    .par_iter()
                    .enumerate()
                    .map(|(k, s)| super::retrace::verify(&spec, s).map_err(|e| in_specialization(k, e)))
                    .collect::<Vec<_>>()
            },
            || load_coverage(&spec, &specializations, complete, &domain, &uncovered),
        );
        for (s, v) in specializations.iter_mut().zip(verified) {
            s.set_coalesce(v?.coalesced);
        }
        let coverage = coverage?;
        // Then, for every artifact: a compile always traces at the hints first, so one
        // none of whose specializations admits them has lost one.
        let mut admitted = false;
        for s in &specializations {
            admitted |= s.admits(&spec.hints)?;
        }
        if !admitted {
            return Err(art(
                "no specialization admits the spec's hints, where every compile traces first: a specialization was removed",
            ));
        }
        Ok(Artifact {
            spec,
            specializations,
            coverage,
        })
    }

    /// Writes the artifact to `path`.
    pub fn save(&self, path: &Path) -> Result<()> {
        std::fs::write(path, self.to_json() + "\n").map_err(|e| Error::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })
    }

    /// Reads and validates an artifact from `path`.
    pub fn load(path: &Path) -> Result<Artifact> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Artifact::from_json(&text).map_err(|e| match e {
            Error::Artifact { message } => Error::Artifact {
                message: format!("{}: {message}", path.display()),
            },
            e => e,
        })
    }

    /// Evaluates the specializations' guards at `values` (spec symbol order).
    pub fn check(&self, values: &[i64]) -> Result<CheckOutcome> {
        for (k, s) in self.specializations.iter().enumerate() {
            if s.first_failing_guard(values)?.is_none() {
                if let Some(e) = &s.error {
                    return Ok(CheckOutcome {
                        specialization: Some(k),
                        failed_guard: None,
                        output: None,
                        error: Some(e.clone()),
                    });
                }
                let output = s.output_layout(values)?;
                return Ok(CheckOutcome {
                    specialization: Some(k),
                    failed_guard: None,
                    output: Some(output),
                    error: None,
                });
            }
        }
        Ok(CheckOutcome {
            specialization: None,
            failed_guard: self.closest_failure(values)?,
            output: None,
            error: None,
        })
    }

    /// The specialization that fails at `values` with the fewest failing guards (the
    /// first such), with its first failing guard.
    fn closest_failure(&self, values: &[i64]) -> Result<Option<(usize, usize)>> {
        let b = self.spec.bindings(values);
        let mut best: Option<(usize, usize, usize)> = None;
        for (k, s) in self.specializations.iter().enumerate() {
            let mut failing = 0;
            let mut first = None;
            for (i, g) in s.guards.iter().enumerate() {
                if !g.cond.eval(&b)? {
                    failing += 1;
                    first.get_or_insert(i);
                }
            }
            if let Some(i) = first {
                if best.is_none_or(|(n, _, _)| failing < n) {
                    best = Some((failing, k, i));
                }
            }
        }
        Ok(best.map(|(_, k, i)| (k, i)))
    }
}

/// What [`Artifact::check`] found for one binding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckOutcome {
    /// The first specialization whose guards all hold.
    pub specialization: Option<usize>,
    /// When none passes: the closest specialization (fewest failing guards) and the index
    /// of its first failing guard.
    pub failed_guard: Option<(usize, usize)>,
    /// The output's (sizes, strides) the admitting specialization instantiates.
    pub output: Option<(Vec<i64>, Vec<i64>)>,
    /// When the admitting specialization is an error specialization: the error category
    /// (`"broadcast"`) the op fails with at this binding, as PyTorch does.
    pub error: Option<String>,
}

/// Validates the cover fields: conditions parse and mention only the spec's symbols, the
/// domain is the spec's (with or without size 0), and a `complete` claim is re-proved over
/// the loaded specializations.
fn load_coverage(
    spec: &Spec,
    specializations: &[Specialization],
    complete: bool,
    domain: &[String],
    uncovered: &[String],
) -> Result<Option<Coverage>> {
    let parse = |what: &str, v: &[String]| -> Result<Vec<BoolExpr>> {
        v.iter()
            .enumerate()
            .map(|(i, t)| {
                let b = BoolExpr::parse(t).map_err(|e| art(format!("{what}[{i}]: {e}")))?;
                if let Some(s) = b
                    .symbols()
                    .into_iter()
                    .find(|s| spec.symbol_index(s.as_str()).is_none())
                {
                    return Err(art(format!("{what}[{i}]: unknown symbol `{s}`")));
                }
                Ok(b)
            })
            .collect()
    };
    if domain.is_empty() {
        if complete || !uncovered.is_empty() {
            return Err(art(
                "`complete`/`uncovered` without the `domain` of a cover",
            ));
        }
        return Ok(None);
    }
    let domain = parse("domain", domain)?;
    let uncovered = parse("uncovered", uncovered)?;
    if domain != cover_domain(spec, true) && domain != cover_domain(spec, false) {
        return Err(art("`domain` is not the domain of the spec's bindings"));
    }
    if complete {
        if !uncovered.is_empty() {
            return Err(art("`complete` is true but `uncovered` lists regions"));
        }
        if let Some(r) = uncovered_region(spec, &domain, specializations) {
            return Err(art(format!(
                "`complete` is true but no specialization admits the bindings where {r}"
            )));
        }
    } else if uncovered.is_empty() {
        return Err(art("`complete` is false but `uncovered` names no region"));
    }
    Ok(Some(Coverage {
        complete,
        domain,
        uncovered,
    }))
}

fn parse_exprs(what: &str, v: &[String]) -> Result<Vec<Expr>> {
    v.iter()
        .enumerate()
        .map(|(i, s)| Expr::parse(s).map_err(|e| art(format!("{what}[{i}]: {e}"))))
        .collect()
}

/// A stored specialization, parsed and checked against the spec but not yet verified: the
/// loader then re-traces it ([`super::retrace::verify`]: the stored guards must imply the
/// trace's guards and the stored plan, or error, equal its plan as expressions).
fn parse_specialization(spec: &Spec, s: RawSpecialization) -> Result<Specialization> {
    let traced_at = load_traced_at(&spec.symbols, &s.traced_at, "spec")?;
    let guards = RawGuard::load(&s.guards)?;
    let verify_points = s
        .verify_points
        .map(|points| load_verify_points(&spec.symbols, points))
        .transpose()?;
    let mut spec_ = match (&s.error, s.empty_output) {
        (Some(_), true) => {
            return Err(art("a specialization is an error or an empty output, not both"))
        }
        (Some(category), false) => {
            load_error_specialization(spec, traced_at, guards, category, &s.plan)?
        }
        (None, true) => load_empty_output_specialization(spec, traced_at, guards, &s.plan)?,
        (None, false) => load_plan_specialization(spec, traced_at, guards, s.plan)?,
    };
    spec_.verify_points = verify_points;
    Ok(spec_)
}

/// Stored verification hints: each a binding of every symbol, none negative.
pub(crate) fn load_verify_points(
    symbols: &[String],
    points: Vec<Vec<i64>>,
) -> Result<Vec<Vec<i64>>> {
    for (i, p) in points.iter().enumerate() {
        if p.len() != symbols.len() {
            return Err(art(format!(
                "verify_points[{i}] has {} values for {} symbols",
                p.len(),
                symbols.len()
            )));
        }
        if let Some(v) = p.iter().find(|v| **v < 0) {
            return Err(art(format!("verify_points[{i}]: value {v} is negative")));
        }
    }
    Ok(points)
}

/// A plan specialization: the plan's structure, its guards at the trace point and the plan
/// against a fresh concrete build there (the re-trace is the caller's).
fn load_plan_specialization(
    spec: &Spec,
    traced_at: Vec<i64>,
    guards: Vec<Guard>,
    p: RawPlan,
) -> Result<Specialization> {
    let ndim = p.shape.len();
    let rank = spec.inputs.iter().map(|i| i.sizes.len()).max().unwrap_or(0);
    let n_ops = spec.op.arity() + 1;
    if p.num_outputs != 1 {
        return Err(art(format!("num_outputs is {}, expected 1", p.num_outputs)));
    }
    if p.operands.len() != n_ops {
        return Err(art(format!(
            "{} operands, the op {} has {n_ops} (output first)",
            p.operands.len(),
            spec.op
        )));
    }
    if ndim > rank.max(1) {
        return Err(art(format!(
            "iteration shape has {ndim} dims, more than the broadcast rank {rank}"
        )));
    }
    if p.broadcast_shape.len() != rank {
        return Err(art(format!(
            "broadcast_shape has {} dims, the inputs' broadcast rank is {rank}",
            p.broadcast_shape.len()
        )));
    }
    if p.output_strides.len() != 1 || p.output_strides[0].len() != rank {
        return Err(art(format!(
            "output_strides must be one list of {rank} strides"
        )));
    }
    let mut seen = vec![false; rank];
    if p.perm.len() != rank
        || p.perm
            .iter()
            .any(|&d| d >= rank || std::mem::replace(&mut seen[d], true))
    {
        return Err(art(format!(
            "perm {:?} is not a permutation of 0..{rank}",
            p.perm
        )));
    }
    let mut operands = Vec::with_capacity(n_ops);
    for (k, o) in p.operands.iter().enumerate() {
        if o.element_size != ELEMENT_SIZE {
            return Err(art(format!(
                "operand {k}: element_size {}, expected {ELEMENT_SIZE}",
                o.element_size
            )));
        }
        if o.is_output != (k == 0) {
            return Err(art(format!("operand {k}: is_output must be {}", k == 0)));
        }
        if o.byte_strides.len() != ndim {
            return Err(art(format!(
                "operand {k}: {} strides for {ndim} iteration dims",
                o.byte_strides.len()
            )));
        }
        operands.push(OperandPlan {
            byte_strides: parse_exprs(&format!("operand {k} stride_bytes"), &o.byte_strides)?,
            offset: Expr::parse(&o.offset).map_err(|e| art(format!("operand {k} offset: {e}")))?,
            element_size: o.element_size,
            is_output: o.is_output,
        });
    }
    let plan = Plan {
        shape: parse_exprs("shape", &p.shape)?,
        operands,
        num_outputs: 1,
        broadcast_shape: parse_exprs("broadcast_shape", &p.broadcast_shape)?,
        output_strides: vec![parse_exprs("output_strides", &p.output_strides[0])?],
        perm: p.perm,
    };
    let spec_ = Specialization::new(spec, traced_at.clone(), guards, plan)?;
    // Semantic check at the trace point.
    guards_hold_at_trace_point(&spec_)?;
    let expected = concrete_plan(spec, &traced_at)?;
    let got = spec_.instantiate(&traced_at)?;
    if got != expected {
        return Err(art(
            "the plan does not match a fresh build at the values it was traced at (edited?)",
        ));
    }
    Ok(spec_)
}

/// An empty-output specialization: the plan is empty, the guards hold at the trace point
/// and the build there succeeds with an empty output (the re-trace is the caller's).
fn load_empty_output_specialization(
    spec: &Spec,
    traced_at: Vec<i64>,
    guards: Vec<Guard>,
    p: &RawPlan,
) -> Result<Specialization> {
    if !raw_plan_is_empty(p) {
        return Err(art("an empty-output specialization has an empty plan"));
    }
    let s = Specialization::new_empty_output(spec, traced_at.clone(), guards)?;
    guards_hold_at_trace_point(&s)?;
    match concrete_plan(spec, &traced_at) {
        Ok(plan) if plan.is_statically_empty() => Ok(s),
        Ok(_) => Err(art(
            "an empty-output specialization, but the output at the values it was traced at is not empty",
        )),
        Err(e) => Err(art(format!(
            "an empty-output specialization, but the build at the values it was traced at fails: {e}"
        ))),
    }
}

/// Every guard of `s` holds at the values it was traced at.
fn guards_hold_at_trace_point(s: &Specialization) -> Result<()> {
    match s.first_failing_guard(&s.traced_at)? {
        Some(g) => Err(art(format!(
            "guard {g} (`{}`) does not hold at the values it was traced at",
            s.guards[g].cond
        ))),
        None => Ok(()),
    }
}

fn raw_plan_is_empty(p: &RawPlan) -> bool {
    p.shape.is_empty()
        && p.perm.is_empty()
        && p.num_outputs == 0
        && p.operands.is_empty()
        && p.broadcast_shape.is_empty()
        && p.output_strides.is_empty()
}

/// An error specialization: the category is one dispatch can answer, the plan is empty,
/// the guards hold at the trace point and the build really fails there that way.
fn load_error_specialization(
    spec: &Spec,
    traced_at: Vec<i64>,
    guards: Vec<Guard>,
    category: &str,
    p: &RawPlan,
) -> Result<Specialization> {
    if category != "broadcast" {
        return Err(art(format!(
            "error category `{category}`: only \"broadcast\" errors are specialized"
        )));
    }
    if !raw_plan_is_empty(p) {
        return Err(art("an error specialization has an empty plan"));
    }
    let s = Specialization::new_error(spec, traced_at.clone(), guards, category)?;
    guards_hold_at_trace_point(&s)?;
    match concrete_plan(spec, &traced_at) {
        Err(e) if e.category() == category => Ok(s),
        Err(e) => Err(art(format!(
            "a {category} error specialization, but the build at the values it was traced at fails with: {e}"
        ))),
        Ok(_) => Err(art(format!(
            "a {category} error specialization, but the build at the values it was traced at succeeds"
        ))),
    }
}
