//! Program artifacts (format version 2): a program and its specializations, as JSON,
//! trusted for nothing on load.
//!
//! # Why re-trace on load
//! An artifact is a file anyone can edit: weaken a guard, delete one, drop a
//! specialization, or rewrite a layout expression so that it still agrees at the trace
//! point. Dispatch would then admit bindings the real guards reject and instantiate a wrong
//! layout. So loading checks, per specialization: the guards hold at `traced_at` and the
//! values equal a concrete run there (cheap, catches most edits), then re-traces the program
//! at `traced_at` (and in every region the stored guards admit beyond the trace's own, see
//! the single-op loader's `retrace.rs`, which is the ONE verification for both kinds): the
//! stored guards must imply the traced guards and every stored value expression must equal
//! the traced one as an expression. Finally some specialization must admit the program's
//! hints (every compile traces there first), which catches a dropped specialization.
//!
//! Each value specialization also stores its fusion plan (`"fusion": {"chains": [{"steps":
//! [4, 5]}]}`, steps numbered from 0; [`FusionPlan`]'s serde form). On load it must equal
//! the plan [`plan_fusion`] decides from the re-trace at `traced_at`, which the verifier
//! has just found equal to the stored values; a chain that is not what the rules allow (a
//! member with two readers, an output, a reduction) is rejected with the specialization
//! named. A file without the field (written before fusion was recorded) loads with the plan
//! re-decided from that trace. Error specializations store none.
//!
//! # What a compile writes, its loader accepts
//! A compile (plain or `--cover`) puts every specialization it is about to return through
//! the same verification as a load (`verify_specialization`, then the cover's claim and the
//! hints, as `from_json` checks them), with the compile's budget of traces and the cover's
//! traces as a pool, and stores the points that verification traced at
//! (`"verify_points"`). A load replays them: each is tried first where a region needs a
//! point, and each adds one trace to the load's budget, so the load repeats the compile's
//! case split instead of searching with a smaller budget (covers whose merged
//! specializations split into more than the load's 32 traces, or into regions its search
//! found no point in, were written and then rejected). What the compile cannot verify is a
//! compile error: no artifact is returned, none written. Points are hints, not trusted: one
//! is used only for a region it lies in; a file without them loads by searching.
//!
//! The JSON keeps the guards where tools look for them: `specializations[i].guards[j].cond`
//! and `.reason`, and `specializations[i].traced_at`. Version 1 files are single-op
//! artifacts ([`crate::aot::Artifact`]); [`AnyArtifact::from_json`] reads either.

use super::cover::{cover_program, program_cover_domain, program_uncovered_region};
use super::dispatch::input_layouts;
use super::fuse::{check_fusion, plan_fusion, FusionPlan};
use super::spec::Program;
use super::specialize::{bindings_of, fusion_values, specialize, ProgramSpecialization};
use super::stepplan::{conditions_differ, describe_structure, plan_pairs, StepPlan};
use super::trace::{concrete, trace, PlanConditions, ProgramTrace, StepPlans, Value};
use crate::aot::{
    art, in_specialization, load_traced_at, load_verify_points, strings, verify_stored_pooled, Artifact, CoverOptions, Coverage, Hints, Mismatch, TracedGuards,
    Pairs, RawGuard, Retrace, Traced as Made, ARTIFACT_FORMAT,
};
use crate::sym::{BoolExpr, Expr, GuardSet};
use crate::{DType, Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// The format version of program artifacts.
pub const PROGRAM_FORMAT_VERSION: u32 = 2;

/// A compiled program: what `symstride compile` writes for a program spec.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgramArtifact {
    /// The program.
    pub program: Program,
    /// Specializations, tried in order by dispatch.
    pub specializations: Vec<ProgramSpecialization>,
    /// With `--cover`: what the cover established (`"complete"`, `"domain"`, `"uncovered"`
    /// in the JSON). Validated on load: a `complete` claim is re-proved over the loaded
    /// specializations. Dispatch never relies on it: a binding no specialization admits is
    /// re-traced.
    pub coverage: Option<Coverage>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawArtifact {
    format: String,
    version: u32,
    program: Json,
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
    /// Every value (inputs, then steps); empty for an error specialization.
    #[serde(default)]
    values: Vec<RawValue>,
    /// The error every admitted binding fails with (an error specialization).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<RawError>,
    /// The fused chains (a value specialization); absent: re-decided on load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    fusion: Option<FusionPlan>,
    /// Where the compile's verification re-traced besides `traced_at` (values in `symbols`
    /// order): hints a load replays ([`ProgramSpecialization::verify_points`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    verify_points: Option<Vec<Vec<i64>>>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawValue {
    name: String,
    sizes: Vec<String>,
    strides: Vec<String>,
    offset: String,
    storage_numel: String,
    dtype: String,
    /// The value whose storage this one lives in (by name).
    storage: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawError {
    category: String,
    message: String,
}

/// The verifier's view of a program.
struct ProgramSubject<'a>(&'a Program);

type Values = std::result::Result<Vec<Value<Expr>>, Error>;

/// What the verifier compares: the values and, per step, the kernel plans and their plan
/// conditions.
struct Payload {
    values: Values,
    plans: StepPlans<Expr>,
    conditions: PlanConditions,
}

impl Retrace for ProgramSubject<'_> {
    type Payload = Payload;

    fn symbols(&self) -> &[String] {
        &self.0.symbols
    }

    fn hints(&self) -> &[i64] {
        &self.0.hints
    }

    fn valid_point(&self, point: &[i64]) -> bool {
        input_layouts(self.0, point).is_ok()
    }

    fn retrace(&self, point: &[i64]) -> Result<(TracedGuards, Payload)> {
        let t = trace(self.0, &bindings_of(&self.0.symbols, point))?;
        Ok((
            TracedGuards::Simplified(t.guards.guards),
            Payload {
                values: t.values,
                plans: t.plans,
                conditions: t.plan_conditions,
            },
        ))
    }

    fn pairs<'a>(
        &self,
        stored_all: &'a Payload,
        traced_all: &'a Payload,
    ) -> std::result::Result<Pairs<'a>, Mismatch> {
        let (stored, traced) = (&stored_all.values, &traced_all.values);
        let cat = |v: &Values| match v {
            Ok(_) => "values".to_string(),
            Err(e) => crate::error::a_category_error(e.category()),
        };
        let (s, t) = match (stored, traced) {
            (Ok(s), Ok(t)) => (s, t),
            (Err(a), Err(b)) if a.category() == b.category() => return Ok(Vec::new()),
            _ => return Err(("the result".into(), cat(stored), cat(traced))),
        };
        if s.len() != t.len() {
            return Err((
                "the number of values".into(),
                s.len().to_string(),
                t.len().to_string(),
            ));
        }
        let mut pairs: Pairs<'a> = Vec::new();
        for (k, (a, b)) in s.iter().zip(t).enumerate() {
            let name = &self.0.names[k];
            if a.sizes.len() != b.sizes.len() || a.strides.len() != b.strides.len() {
                return Err((
                    format!("value `{name}` rank"),
                    a.sizes.len().to_string(),
                    b.sizes.len().to_string(),
                ));
            }
            if a.dtype != b.dtype {
                return Err((
                    format!("value `{name}` dtype"),
                    a.dtype.name().into(),
                    b.dtype.name().into(),
                ));
            }
            if a.storage != b.storage {
                return Err((
                    format!("value `{name}` storage"),
                    self.0.names[a.storage].clone(),
                    self.0.names[b.storage].clone(),
                ));
            }
            for (d, (x, y)) in a.sizes.iter().zip(&b.sizes).enumerate() {
                pairs.push((format!("value `{name}` sizes[{d}]"), x, y));
            }
            for (d, (x, y)) in a.strides.iter().zip(&b.strides).enumerate() {
                pairs.push((format!("value `{name}` strides[{d}]"), x, y));
            }
            pairs.push((format!("value `{name}` offset"), &a.offset, &b.offset));
            pairs.push((
                format!("value `{name}` storage_numel"),
                &a.storage_numel,
                &b.storage_numel,
            ));
        }
        let plan_pairs = plan_pairs(&stored_all.plans, &traced_all.plans).map_err(|k| {
            let at = |p: &[Option<StepPlan<Expr>>]| {
                describe_structure(p.get(k).and_then(Option::as_ref))
            };
            (
                format!("step {} kernel plan structure", k + 1),
                at(&stored_all.plans),
                at(&traced_all.plans),
            )
        })?;
        for (k, x, y) in plan_pairs {
            pairs.push((format!("step {} kernel plan", k + 1), x, y));
        }
        if let Some(k) = conditions_differ(&stored_all.conditions, &traced_all.conditions) {
            let at = |c: &PlanConditions| {
                c.get(k).map_or_else(String::new, |gs| {
                    gs.iter()
                        .map(|g| g.cond.to_string())
                        .collect::<Vec<_>>()
                        .join(" && ")
                })
            };
            return Err((
                format!("step {} plan conditions", k + 1),
                at(&stored_all.conditions),
                at(&traced_all.conditions),
            ));
        }
        Ok(pairs)
    }
}

/// What [`ProgramArtifact::check`] found for one binding.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgramCheck {
    /// The first specialization whose guards all hold.
    pub specialization: Option<usize>,
    /// When none passes: the closest specialization (fewest failing guards) and the index
    /// of its first failing guard.
    pub failed_guard: Option<(usize, usize)>,
    /// Every value's layout, when the admitting specialization computes them.
    pub values: Option<Vec<Value<i64>>>,
    /// When the admitting specialization is an error specialization: the error category
    /// the program fails with at this binding.
    pub error: Option<String>,
    /// The admitting value specialization's fusion plan (which steps a run fuses).
    pub fusion: Option<FusionPlan>,
}

impl ProgramArtifact {
    /// Compiles `p`: one trace at its hints, verified as a load will verify it
    /// ([`Self::verified`]).
    pub fn compile(p: &Program) -> Result<ProgramArtifact> {
        if p.hints.len() != p.symbols.len() {
            return Err(Error::invalid(format!(
                "program `{}` has no hints to trace at (symbols: {})",
                p.name,
                p.symbols.join(", ")
            )));
        }
        ProgramArtifact::verified(p, vec![specialize(p, &p.hints)?], None, Vec::new())
    }

    /// Compiles `p` with `--cover` ([`cover_program`]): traces until a case split over
    /// their guards proves that every binding of the domain is admitted (by values or by an
    /// error specialization), or the specialization cap is reached (`complete: false`);
    /// then verified as a load will verify it ([`Self::verified`]).
    pub fn compile_cover(p: &Program, options: &CoverOptions) -> Result<ProgramArtifact> {
        let c = cover_program(p, options)?;
        let pool = c
            .made
            .into_iter()
            .map(|(at, t)| {
                Made::made(
                    at,
                    t.guards.guards,
                    Payload {
                        values: t.values,
                        plans: t.plans,
                        conditions: t.plan_conditions,
                    },
                )
            })
            .collect();
        let specializations = c
            .traces
            .into_iter()
            .zip(c.traced_at)
            .map(|(t, at)| ProgramSpecialization::from_trace(p, at, t))
            .collect::<Result<Vec<_>>>()?;
        let coverage = Coverage {
            complete: c.complete,
            domain: c.domain,
            uncovered: c.uncovered,
        };
        ProgramArtifact::verified(p, specializations, Some(coverage), pool)
    }

    /// A compile's specializations put through the loader's own verification
    /// ([`verify_specialization`], [`check_coverage`], [`check_hints_admitted`]), with the
    /// compile's budget of traces ([`Hints::Record`]); the points each verification traced
    /// at are stored (`verify_points`), so that a load replays the same case split with a
    /// budget grown by their number. A compile thus never returns (and never writes) an
    /// artifact its loader rejects: what cannot be verified is a compile error. `pool`: the
    /// cover's traces, taken where a region contains their point (as the single-op compile
    /// does), so that a region a cover traced in needs no search.
    fn verified(
        p: &Program,
        specializations: Vec<ProgramSpecialization>,
        coverage: Option<Coverage>,
        pool: Vec<Arc<Made<Payload>>>,
    ) -> Result<ProgramArtifact> {
        use rayon::prelude::*;
        let not_verified = |what: String, e: Error| {
            Error::invalid(format!(
                "program `{}`: the compile cannot verify {what}, so no artifact is written \
                 (its loader would reject it): {}",
                p.name,
                match e {
                    Error::Artifact { message } => message,
                    e => e.to_string(),
                }
            ))
        };
        let verified: Vec<Result<ProgramSpecialization>> = specializations
            .into_par_iter()
            .enumerate()
            .map(|(k, s)| {
                let stored = s.values.map_err(|e| e.category().to_string());
                let pool = pool.clone();
                verify_specialization(p, s.traced_at, s.guards, stored, Some(s.fusion), Hints::Record, pool)
                    .map_err(|e| not_verified(format!("specialization {k}"), e))
            })
            .collect();
        let specializations = verified.into_iter().collect::<Result<Vec<_>>>()?;
        if let Some(c) = &coverage {
            check_coverage(p, &specializations, c)
                .map_err(|e| not_verified("its cover".into(), e))?;
        }
        check_hints_admitted(p, &specializations)
            .map_err(|e| not_verified("its specializations".into(), e))?;
        Ok(ProgramArtifact {
            program: p.clone(),
            specializations,
            coverage,
        })
    }

    /// The artifact as pretty JSON.
    pub fn to_json(&self) -> String {
        let p = &self.program;
        let raw = RawArtifact {
            format: ARTIFACT_FORMAT.to_string(),
            version: PROGRAM_FORMAT_VERSION,
            program: p.source.clone(),
            symbols: p.symbols.clone(),
            specializations: self
                .specializations
                .iter()
                .map(|s| RawSpecialization {
                    traced_at: p
                        .symbols
                        .iter()
                        .cloned()
                        .zip(s.traced_at.iter().copied())
                        .collect(),
                    guards: RawGuard::store(&s.guards),
                    values: s.values.as_ref().map_or(Vec::new(), |vs| {
                        vs.iter()
                            .enumerate()
                            .map(|(k, v)| RawValue {
                                name: p.names[k].clone(),
                                sizes: strings(&v.sizes),
                                strides: strings(&v.strides),
                                offset: v.offset.to_string(),
                                storage_numel: v.storage_numel.to_string(),
                                dtype: v.dtype.name().to_string(),
                                storage: p.names[v.storage].clone(),
                            })
                            .collect()
                    }),
                    error: s.error().map(|e| RawError {
                        category: e.category().to_string(),
                        message: e.to_string(),
                    }),
                    fusion: s.values.is_ok().then(|| s.fusion.clone()),
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

    /// Parses and verifies a version-2 artifact (see the `program::artifact` module docs): format and
    /// version, the program, every expression, each specialization at its trace point and
    /// against fresh traces, and that some specialization admits the hints. Errors name
    /// the specialization, and the guard or value that failed.
    pub fn from_json(text: &str) -> Result<ProgramArtifact> {
        let v: Json = serde_json::from_str(text).map_err(|e| art(format!("not JSON: {e}")))?;
        check_header(&v, PROGRAM_FORMAT_VERSION)?;
        let raw: RawArtifact = serde_json::from_value(v).map_err(|e| art(e.to_string()))?;
        let p = Program::from_value(&raw.program).map_err(|e| art(format!("program: {e}")))?;
        if raw.symbols != p.symbols {
            return Err(art(format!(
                "symbols {:?} do not match the program's {:?}",
                raw.symbols, p.symbols
            )));
        }
        if raw.specializations.is_empty() {
            return Err(art("no specializations"));
        }
        use rayon::prelude::*;
        let loaded: Vec<Result<ProgramSpecialization>> = raw
            .specializations
            .into_par_iter()
            .enumerate()
            .map(|(k, s)| load_specialization(&p, s).map_err(|e| in_specialization(k, e)))
            .collect();
        let specializations = loaded.into_iter().collect::<Result<Vec<_>>>()?;
        let coverage = load_coverage(
            &p,
            &specializations,
            raw.complete,
            &raw.domain,
            &raw.uncovered,
        )?;
        check_hints_admitted(&p, &specializations)?;
        Ok(ProgramArtifact {
            program: p,
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

    /// Evaluates the specializations' guards at `values` (program symbol order).
    pub fn check(&self, values: &[i64]) -> Result<ProgramCheck> {
        for (k, s) in self.specializations.iter().enumerate() {
            if s.admits(values)? {
                return Ok(ProgramCheck {
                    specialization: Some(k),
                    failed_guard: None,
                    values: s
                        .values
                        .is_ok()
                        .then(|| s.instantiate(values))
                        .transpose()?,
                    error: s.error().map(|e| e.category().to_string()),
                    fusion: s.values.is_ok().then(|| s.fusion.clone()),
                });
            }
        }
        // The closest: fewest failing guards (exact evaluation; a guard that cannot be
        // evaluated fails).
        let b = bindings_of(&self.program.symbols, values);
        let mut best: Option<(usize, usize, usize)> = None;
        for (k, s) in self.specializations.iter().enumerate() {
            let failing: Vec<usize> = s
                .guards
                .iter()
                .enumerate()
                .filter(|(_, g)| !g.cond.eval(&b).unwrap_or(false))
                .map(|(i, _)| i)
                .collect();
            if let Some(&i) = failing.first() {
                if best.is_none_or(|(n, _, _)| failing.len() < n) {
                    best = Some((failing.len(), k, i));
                }
            }
        }
        Ok(ProgramCheck {
            specialization: None,
            failed_guard: best.map(|(_, k, i)| (k, i)),
            values: None,
            error: None,
            fusion: None,
        })
    }
}

/// `format` and `version` of an artifact's JSON.
fn check_header(v: &Json, want: u32) -> Result<()> {
    let format = v.get("format").and_then(Json::as_str);
    if format != Some(ARTIFACT_FORMAT) {
        return Err(art(format!(
            "`format` is {}, expected \"{ARTIFACT_FORMAT}\"",
            v.get("format")
                .map_or("missing".to_string(), |f| f.to_string())
        )));
    }
    match v.get("version").and_then(Json::as_u64) {
        Some(n) if n == u64::from(want) => Ok(()),
        Some(1) => Err(art(
            "format version 1 is a single-op artifact (a spec, not a program)",
        )),
        Some(n) => Err(art(format!(
            "format version {n}; program artifacts are version {want} (recompile the program)"
        ))),
        None => Err(art("missing or invalid `version`")),
    }
}

fn parse_exprs(p: &Program, what: &str, v: &[String]) -> Result<Vec<Expr>> {
    v.iter()
        .enumerate()
        .map(|(i, s)| parse_expr(p, &format!("{what}[{i}]"), s))
        .collect()
}

fn parse_expr(p: &Program, what: &str, s: &str) -> Result<Expr> {
    let e = Expr::parse(s).map_err(|e| art(format!("{what}: {e}")))?;
    if let Some(x) = e
        .symbols()
        .into_iter()
        .find(|x| !p.symbols.contains(&x.to_string()))
    {
        return Err(art(format!("{what}: unknown symbol `{x}`")));
    }
    Ok(e)
}

fn load_specialization(p: &Program, s: RawSpecialization) -> Result<ProgramSpecialization> {
    let traced_at = load_traced_at(&p.symbols, &s.traced_at, "program")?;
    let guards = RawGuard::load(&s.guards)?;
    let verify_points = s
        .verify_points
        .map(|points| load_verify_points(&p.symbols, points))
        .transpose()?;
    let stored = match (s.error, s.values.is_empty()) {
        (Some(e), true) => Err(e.category),
        (Some(_), false) => return Err(art("an error specialization has no values")),
        (None, _) => Ok(load_values(p, &s.values)?),
    };
    verify_specialization(
        p,
        traced_at,
        guards,
        stored,
        s.fusion,
        Hints::from(verify_points.as_deref()),
        Vec::new(),
    )
}

/// The values of a stored specialization, or the category of the error every binding it
/// admits fails with.
type StoredValues = std::result::Result<Vec<Value<Expr>>, String>;

/// Verifies one specialization (what a load establishes, and what a compile establishes
/// for every specialization it writes: ONE procedure, so that what a compile writes its
/// loader accepts): its guards hold at `traced_at` and its values equal a concrete run
/// there (or the run fails with the stored error's category), then the stored guards and
/// values are checked against fresh traces in every region the guards admit
/// ([`verify_stored_pooled`], with `hints`: [`Hints::Record`] for a compile, the stored
/// points for a load; `pool`: traces already made, see [`ProgramArtifact::verified`]), and
/// the fusion plan (`fusion`; `None`: decided here) against the one decided from the trace
/// at `traced_at`. The result records the points the verification traced at
/// (`verify_points`).
fn verify_specialization(
    p: &Program,
    traced_at: Vec<i64>,
    guards: Vec<crate::sym::Guard>,
    stored: StoredValues,
    fusion: Option<FusionPlan>,
    hints: Hints,
    pool: Vec<Arc<Made<Payload>>>,
) -> Result<ProgramSpecialization> {
    let concrete_at = concrete(p, &bindings_of(&p.symbols, &traced_at));
    let values: Values = match stored {
        Err(category) => match &concrete_at {
            Err(c) if c.category() == category => Err(c.clone()),
            Err(c) => {
                return Err(art(format!(
                    "an error specialization ({}), but the program at the values it was traced \
                     at fails with: {c}",
                    crate::a_category_error(&category)
                )))
            }
            Ok(_) => {
                return Err(art(format!(
                    "an error specialization ({}), but the program runs at the values it was \
                     traced at",
                    crate::a_category_error(&category)
                )))
            }
        },
        Ok(vs) => Ok(vs),
    };
    // The kernel plans are not stored: they come from the trace at the trace point, which
    // the verifier below reuses as its first trace, comparing them with the re-trace in
    // every region the guards admit.
    let subject = ProgramSubject(p);
    let seed = if values.is_ok() {
        Some(subject.retrace(&traced_at)?)
    } else {
        None
    };
    let (plans, conditions) = seed.as_ref().map_or_else(
        || (Vec::new(), Vec::new()),
        |(_, t)| (t.plans.clone(), t.conditions.clone()),
    );
    // The fusion plan is checked once the values are verified (below).
    let mut spec = ProgramSpecialization::new(
        p,
        traced_at.clone(),
        guards,
        values,
        (plans, conditions),
        FusionPlan::default(),
    )
    .map_err(|e| art(e.to_string()))?;
    if let Some(g) = spec.first_failing_guard(&traced_at)? {
        return Err(art(format!(
            "guard {g} (`{}`) does not hold at the values it was traced at",
            spec.guards[g].cond
        )));
    }
    if let Ok(c) = &concrete_at {
        if spec.values.is_ok() && &spec.instantiate(&traced_at)? != c {
            return Err(art(
                "the values do not match a concrete run at the values they were traced at \
                 (edited?)",
            ));
        }
    } else if spec.values.is_ok() {
        return Err(art(
            "values are stored, but the program fails at the values they were traced at",
        ));
    }
    let stored = Payload {
        values: spec.values.clone(),
        plans: spec.plans.clone(),
        conditions: spec.plan_conditions.clone(),
    };
    // The plan decided from the trace at the trace point (before the verifier consumes
    // it), sizes compared under the stored guards: a cover's merged specialization was
    // decided under its merged guards, which the verifier checks hold the values. The
    // traced values' sizes unified under the guards (prover calls) are computed once: a
    // stored plan is checked against the same unification when the stored values are the
    // traced ones (the usual case; edited or merged values get their own).
    let traced_fusion_values = seed.as_ref().and_then(|(_, t)| {
        let vs = t.values.as_ref().ok()?;
        let same = spec.values.as_ref().is_ok_and(|stored| stored == vs);
        Some((same, fusion_values(p, &traced_at, &spec.guards, vs)))
    });
    let decided = traced_fusion_values
        .as_ref()
        .map_or_else(FusionPlan::default, |(_, fv)| plan_fusion(p, fv));
    let reuse = traced_fusion_values.and_then(|(same, fv)| same.then_some(fv));
    let verification =
        verify_stored_pooled(&subject, &traced_at, &spec.guards, &stored, seed, pool, hints)?;
    spec.fusion = load_fusion(p, &spec, fusion, decided, reuse)?;
    spec.verify_points = Some(verification.points);
    Ok(spec)
}

/// The fusion plan of a verified specialization: the stored one when it is exactly the
/// plan decided from the trace at its trace point (`decided`), that plan when none is
/// stored. `unified` is [`fusion_values`] of the stored values when already computed.
fn load_fusion(
    p: &Program,
    spec: &ProgramSpecialization,
    stored: Option<FusionPlan>,
    decided: FusionPlan,
    unified: Option<Vec<Value<Expr>>>,
) -> Result<FusionPlan> {
    let Some(stored) = stored else {
        return Ok(decided);
    };
    if let Ok(vs) = &spec.values {
        let vs = unified.unwrap_or_else(|| fusion_values(p, &spec.traced_at, &spec.guards, vs));
        check_fusion(p, &vs, &stored).map_err(|e| art(e.to_string()))?;
    }
    if stored != decided {
        return Err(art(format!(
            "the fusion plan ({stored}) is not the one decided from a trace at the values it \
             was traced at ({decided})"
        )));
    }
    Ok(stored)
}

fn load_values(p: &Program, raw: &[RawValue]) -> Result<Vec<Value<Expr>>> {
    let n = p.names.len();
    if raw.len() != n {
        return Err(art(format!(
            "{} values, the program has {n} (inputs, then one per step)",
            raw.len()
        )));
    }
    raw.iter()
        .enumerate()
        .map(|(k, v)| {
            let at = format!("value {k} (`{}`)", p.names[k]);
            if v.name != p.names[k] {
                return Err(art(format!("{at}: named `{}`", v.name)));
            }
            let storage = p.names[..=k]
                .iter()
                .position(|x| *x == v.storage)
                .ok_or_else(|| {
                    art(format!(
                        "{at}: storage `{}` is not this or an earlier value",
                        v.storage
                    ))
                })?;
            Ok(Value {
                sizes: parse_exprs(p, &format!("{at} sizes"), &v.sizes)?,
                strides: parse_exprs(p, &format!("{at} strides"), &v.strides)?,
                offset: parse_expr(p, &format!("{at} offset"), &v.offset)?,
                storage_numel: parse_expr(p, &format!("{at} storage_numel"), &v.storage_numel)?,
                dtype: DType::parse(&v.dtype).map_err(|e| art(format!("{at}: {e}")))?,
                storage,
            })
        })
        .collect()
}

/// The cover fields: conditions parse and mention only the program's symbols, the domain
/// is the program's (with or without size 0), `complete` and `uncovered` are consistent,
/// and a `complete` claim is re-proved over the loaded specializations.
fn load_coverage(
    p: &Program,
    specializations: &[ProgramSpecialization],
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
                    .find(|s| !p.symbols.contains(&s.to_string()))
                {
                    return Err(art(format!("{what}[{i}]: unknown symbol `{s}`")));
                }
                Ok(b)
            })
            .collect()
    };
    // The domain of a program without symbols is empty (nothing to range over), so the
    // file of its cover has no `domain` field: `complete` or `uncovered` say it is a cover.
    if domain.is_empty() && !p.symbols.is_empty() {
        if complete || !uncovered.is_empty() {
            return Err(art(
                "`complete`/`uncovered` without the `domain` of a cover",
            ));
        }
        return Ok(None);
    }
    if domain.is_empty() && !complete && uncovered.is_empty() {
        return Ok(None);
    }
    let domain = parse("domain", domain)?;
    let uncovered = parse("uncovered", uncovered)?;
    let coverage = Coverage {
        complete,
        domain,
        uncovered,
    };
    check_coverage(p, specializations, &coverage)?;
    Ok(Some(coverage))
}

/// A cover's fields against the program and its verified specializations (a load and a
/// compile both check them): the domain is the program's (with or without size 0),
/// `complete` and `uncovered` are consistent, and a `complete` claim is re-proved.
fn check_coverage(
    p: &Program,
    specializations: &[ProgramSpecialization],
    c: &Coverage,
) -> Result<()> {
    if c.domain != program_cover_domain(p, true) && c.domain != program_cover_domain(p, false) {
        return Err(art("`domain` is not the domain of the program's bindings"));
    }
    if c.complete && !c.uncovered.is_empty() {
        return Err(art("`complete` is true but `uncovered` lists regions"));
    }
    if c.complete {
        let traces: Vec<ProgramTrace> = specializations
            .iter()
            .map(|s| ProgramTrace {
                values: s.values.clone(),
                plans: s.plans.clone(),
                guards: GuardSet::from(s.guards.clone()),
                plan_conditions: s.plan_conditions.clone(),
            })
            .collect();
        if let Some(r) = program_uncovered_region(p, &c.domain, &traces) {
            return Err(art(format!(
                "`complete` is true but no specialization admits the bindings where {r}"
            )));
        }
    }
    if !c.complete && c.uncovered.is_empty() {
        return Err(art("`complete` is false but `uncovered` names no region"));
    }
    Ok(())
}

/// Some specialization admits the program's hints, where every compile traces first (a
/// file without one has lost a specialization).
fn check_hints_admitted(p: &Program, specializations: &[ProgramSpecialization]) -> Result<()> {
    if p.hints.len() != p.symbols.len() {
        return Ok(());
    }
    for s in specializations {
        if s.admits(&p.hints)? {
            return Ok(());
        }
    }
    Err(art(
        "no specialization admits the program's hints, where every compile traces first: a \
         specialization was removed",
    ))
}

/// A loaded artifact of either kind: a single-op spec's (version 1) or a program's
/// (version 2).
#[derive(Clone, Debug)]
pub enum AnyArtifact {
    /// A single-op artifact.
    Op(Artifact),
    /// A program artifact.
    Program(ProgramArtifact),
}

impl AnyArtifact {
    /// Parses and verifies an artifact of either version (by its `version` field).
    pub fn from_json(text: &str) -> Result<AnyArtifact> {
        let v: Json = serde_json::from_str(text).map_err(|e| art(format!("not JSON: {e}")))?;
        if v.get("version").and_then(Json::as_u64) == Some(u64::from(PROGRAM_FORMAT_VERSION)) {
            ProgramArtifact::from_json(text).map(AnyArtifact::Program)
        } else {
            Artifact::from_json(text).map(AnyArtifact::Op)
        }
    }

    /// Reads and verifies an artifact of either version from `path`.
    pub fn load(path: &Path) -> Result<AnyArtifact> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        AnyArtifact::from_json(&text).map_err(|e| match e {
            Error::Artifact { message } => Error::Artifact {
                message: format!("{}: {message}", path.display()),
            },
            e => e,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::HEADS;

    #[test]
    fn round_trips() {
        let p = Program::from_json(HEADS).unwrap();
        let a = ProgramArtifact::compile(&p).unwrap();
        let back = ProgramArtifact::from_json(&a.to_json()).unwrap();
        assert_eq!(back, a);
        assert!(matches!(
            AnyArtifact::from_json(&a.to_json()).unwrap(),
            AnyArtifact::Program(_)
        ));
    }

    /// What the loader would reject, the compile refuses to return (so nothing is
    /// written): a specialization whose guards admit more than its trace (a guard the
    /// trace needs removed, which the loader rejects in a file), and a `complete` claim the
    /// specializations do not make good.
    #[test]
    fn a_compile_that_cannot_verify_what_it_would_write_is_an_error() {
        let text = std::fs::read_to_string(crate::testing::spec_path("public_programs.json"))
            .unwrap();
        let all: Json = serde_json::from_str(&text).unwrap();
        let v = all
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "nhwc_to_nchw")
            .unwrap();
        let p = Program::from_value(v).unwrap();
        let mut s = specialize(&p, &p.hints).unwrap();
        let needed = s
            .guards
            .iter()
            .position(|g| g.cond.to_string() == "c >= 2")
            .unwrap_or_else(|| panic!("{:?}", s.guards));
        s.guards.remove(needed);
        let e = ProgramArtifact::verified(&p, vec![s], None, Vec::new())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cannot verify specialization 0") && e.contains("`c >= 2`"),
            "{e}"
        );
        let single = specialize(&p, &p.hints).unwrap();
        let claim = Coverage {
            complete: true,
            domain: program_cover_domain(&p, true),
            uncovered: Vec::new(),
        };
        let e = ProgramArtifact::verified(&p, vec![single], Some(claim), Vec::new())
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot verify its cover"), "{e}");
    }
}
