//! `--cover`: specializations whose guard sets provably admit every binding of the domain.
//!
//! # Why a proof, not probes
//!
//! Probing a grid of values (each symbol 0, 1, a few larger ones) misses every region the
//! grid does not sample: `a == b`, `b == 2`, `2*d + 1 == b`... The cover is therefore built
//! from the guards themselves:
//!
//! 1. Every comparison that appears in a guard of a specialization is an *atom*. A guard
//!    set is a Boolean formula over atoms, so once every atom has a truth value each guard
//!    set is simply true or false.
//! 2. A case split over the atoms (DPLL-style) walks the truth assignments. Each branch
//!    assumes one more literal in a [`Facts`] (intervals, bounds, exclusions, substitutions:
//!    the decision procedure of `sym`), which also decides further atoms (propagation). A
//!    branch where some specialization's guards are all true is covered; one where every
//!    specialization is false is an *uncovered region*, described by its literals.
//! 3. For an uncovered region, a small backtracking search looks for a binding of the
//!    domain that satisfies its literals (symbols an equality of the region defines, such
//!    as `t == c*u`, get their values last, from that equality); the spec is traced there
//!    (an *error specialization* when the shapes do not broadcast: its guards prove the
//!    failure) and the split *resumes at that node* with the new specialization and its
//!    atoms. Branches already closed stay closed: guard sets only ever admit more (a new
//!    set, or one widened by a disjunction), so the split runs once in all, not once per
//!    trace (a rank-3 free-stride spec: 46 traces, one split of about 6,000 nodes).
//! 4. The split ending without an uncovered region *is* the proof that the disjunction of
//!    all guard sets holds on the whole domain: every truth assignment of the atoms that
//!    the decision procedure could not rule out makes some guard set true. (An assignment
//!    it ruled out contradicts the domain, so no binding realizes it.) A region where no
//!    binding was found and none could be ruled out, or where tracing failed otherwise,
//!    is recorded as uncovered and the artifact says `"complete": false`.
//!
//! The algorithm is written once, in `prover.rs`, over [`CoverTarget`] (symbols, a trace at
//! a binding, guards, whether two traces have the same answer); this file implements it for
//! a single-op [`Spec`] (its traces are [`Specialization`]s) and `program/cover.rs` for
//! programs.
//!
//! The domain: every symbol `>= 0` (sizes, and stride symbols: specs have no negative
//! strides), every stride expression `>= 0`; with `cover_zero` off, sizes `>= 1`.
//!
//! Two rules keep the split decisive. An atom over a product of symbols or a `Max`
//! (`b*c == b`, `Max(d, 1) <= b`) is split first on its symbols' zero-ness: with every
//! symbol either 0 (substituted) or `>= 1` (positive factors cancel, `Max(d, 1)` is `d`)
//! intervals decide it. And the ordering literals are closed like difference constraints
//! (shortest paths over the symbols): a negative cycle (`u < s`, `s <= t`, `t <= u`) makes
//! the region empty (`prover::order_cycle`), and the equalities they imply (`t <= s <= u
//! <= t`: `s == t`, `t == u`; `prover::order_equalities`) are assumed as substitutions, so
//! that `c*u == t` there reads `c == 1` and intervals decide it. Free strides need both:
//! their orders are what the guards of TensorIterator's permutation compare.
//!
//! A region no single literal contradicts can still be empty as a whole (`k >= 1`, `k <=
//! FloorDiv(k, 2)`; `a*s <= a + 1` with `a, s >= 2`; `Min(s, 2) == 1`, `Min(d0, s) != 1`,
//! `d0 != 0`): the split's last emptiness test is linear reasoning over the conjunction
//! ([`Facts::refutes`](crate::sym::Facts::refutes): `Min`/`Max` split into cases,
//! `FloorDiv`/`Mod` by a constant as a quotient with its bounds, products cut linearly on
//! their factors' bounds, Fourier-Motzkin). Without it the witness search found nothing in
//! such a region and the cover ended incomplete (85 of 1,022 random program covers).
//!
//! # Fewer specializations
//!
//! A new trace whose plan an existing specialization already computes (same structure,
//! every entry provably equal under the new guards, e.g. `c*h*w` vs `0` when `h == 0`)
//! widens that specialization's guards by a disjunction instead of adding one.
//!
//! Four rules keep broadcasting specs with size 0 small (each measured: `[a, b, c] +
//! [d, e, f]` with independent sizes went from no result in two minutes to 57
//! specializations in 0.4 s, then 37; `[a, b, c, d] + [b, 1, 1]` from 51 to 18, then 6;
//! the rank-10 `[a, ..., j] + [j]` from 256, incomplete, to 4, complete):
//!
//! * **One specialization for every empty output.** Where the inputs do not all share one
//!   shape, a binding with an empty input is answered by an *empty-output specialization*
//!   (`trace::empty_output_at`): its guards say exactly "the shapes broadcast and some
//!   size is 0", written from the spec, and dispatch computes the output layout with the
//!   concrete build (nothing is iterated). Traced per zero pattern instead, each pattern's
//!   output strides are other expressions (`trace::is_empty_point` has the measurement),
//!   so a rank-k broadcast needed up to 2^k plans for its empty bindings alone.
//! * **Empty outputs are answered by their layout.** Nothing is iterated over an empty
//!   output, so its plan is canonical ([`Plan::canonicalize_empty`], set for every
//!   ahead-of-time build, traced or concrete, and applied when a plan is instantiated at
//!   an empty binding): an empty trace records no coalescing guard, and it joins any
//!   specialization whose output sizes and strides equal its own under its guards (inputs
//!   of one shape, whose zero patterns are traced over sizes `>= 0`, and artifacts written
//!   before empty-output specializations).
//! * **An error keeps the failing dimension's guards.** A trace that fails to broadcast
//!   keeps only the conditions connected to the sizes of the dimension that failed
//!   (`trace::failing_dim_guards` gives the argument); the other dimensions' outcomes no
//!   longer split the failing bindings into classes. The loader verifies error
//!   specializations like plans (`retrace::verify`, whose payload is the plan or the error).
//! * **Merged guards are simplified cheaply.** Dropping a literal that the rest of a
//!   disjunction implies asks many implications; sample points (the grid `0..=3`, or random
//!   points) where the premises hold and a goal fails rule most of them out before any
//!   proof (`prover::Refuter`; the merged guards are the same, a test checks it).
//!   And a widening merges the new class into the entry's merged disjunction so far
//!   rather than re-merging all its classes (which was cubic in the classes of an entry
//!   widened hundreds of times); one merge of all of an entry's classes at the end (up to
//!   64 classes) keeps the shorter of the two equivalent forms (64, not more: one merge of
//!   128 classes could take most of a cover's time for guards of the same length). A
//!   widening examines only the pairs of terms with the new class in them
//!   (`prover::merge_disjunction`); the widened guards are tidied once per entry after the
//!   split (`prover::Tidy`), refuting most implications between disjuncts at sample and
//!   witness points first (`guards::prune_or`); conjunctions of single-symbol comparisons
//!   (boxes, `cube.rs`) are decided by interval arithmetic in the merge and in the split's
//!   emptiness test, which also decides equalities and disequalities of two symbols
//!   exactly (`cube::region_is_empty`). The compile's verification takes the cover's own
//!   traces where a region contains their point (`compile_cover_traced`), and a new trace
//!   whose plan differs from a specialization's at the trace's point rules that host out
//!   before any proof (`plan_agrees`). Each gave the same guards, faster
//!   (`docs/perf/2026-11-cover.md`).
//! * **Covers that merge many classes into few plans run as parallel parts.** Past 128
//!   traces, when they are at least 6 per specialization, the cover starts again as four
//!   covers of parts of the domain (cut by two `s == 1` literals), in parallel, reusing the
//!   traces made (see [`SPLIT_AFTER_TRACES`]; `--no-parts` keeps one run). A part's merges
//!   are over its own classes only, and two cores trace at once. Independent sizes, where
//!   most traces are specializations of their own, never split; nor do specs with free
//!   stride symbols (see [`SPLIT_AFTER_TRACES`]).
//! * **Traces are cheap.** Tracing is about half of a large cover (the bias spec: 1,024
//!   traces), so the structural hasher, the cancelling of positive monomials
//!   (`Expr::split_positive_monomial` divides the terms directly),
//!   `guards::merge_symbol_bounds` and the trace's simplification are written for speed:
//!   the simplification and the environment's pruning decide each guard only under the
//!   guards of its symbol component (sharing symbols, transitively), which is all that can
//!   matter since a trace's guards hold together at its trace point.
//! * **Plans widened over sizes 1 (`CompileOptions::widen_size_1`; on by default;
//!   `--no-widen-size-1` turns it off).** The build coalesces a dimension of
//!   trace's class joins a host whose plan has more dimensions when the host plan,
//!   coalesced as the build would at the new trace's point (`trace::coalesce_at`, over
//!   that point's symbol environment), records only decisions the class's guards imply
//!   and equals the class's plan under them (`plan_agrees`). The loader verifies such a
//!   specialization the same way (`retrace::Retrace::normalized`). Far fewer
//!   specializations where sizes are partly independent. The widened disjunctions hold
//!   two-symbol equalities (`e == i`), which the merge answers through a `cube::Region`
//!   (classes of equal symbols, a set of values per class, the disequalities between
//!   classes) by set tests, leaving the decision procedure the rest. Instantiation
//!   coalesces a plan again only where the verification (compile's or loader's) needed it
//!   (`retrace::Verification::coalesced`, `Specialization::coalesces_on_instantiation`):
//!   coalescing every plan cost the cached dispatch a third. The cost of the option: each
//!   merged class is a trace for the loader's verification, so loads take up to 20%
//!   longer, and compiles up to 0.1 s longer where few plans absorb many classes (the
//!   measurements behind turning it on: `docs/perf/2026-11-cover.md`).
//!
//! Independent sizes cannot have few specializations: at each dimension the two sizes
//! are equal or one of them is 1, and each of the 3^k patterns has its own TensorIterator
//! plan (`tests/cover.rs`, `independent_sizes_need_one_plan_per_broadcast_pattern`, checks
//! that no pattern's plan agrees at another pattern's binding). The default cap,
//! [`MAX_SPECIALIZATIONS`], leaves room for 3^5 and the degenerate classes.

use super::prover::{
    cover, equal_under, order_traces, uncovered_by, CoverLimits, CoverRun, CoverTarget,
};
use super::spec::Spec;
use super::specialization::Specialization;
use super::trace::{trace, trace_or_error};
use crate::error::Result;
use crate::iter::Plan;
use crate::sym::{decide_under, BoolExpr, Expr, Guard, Symbol};
use rayon::prelude::*;

/// The default cap on a cover's specializations. The broadcast `[a, ..., e] + [f, ..., j]`
/// of ten independent sizes needs 261 (each dimension pair is equal, or broadcast one way
/// or the other: 3^5 = 243 TensorIterator plans, each its own specialization), which the
/// former cap of 256 cut off, incomplete; covered completely in 3.5 s.
pub const MAX_SPECIALIZATIONS: usize = 1024;

/// Options of a compile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileOptions {
    /// Compile a covering set of specializations rather than only the one at the hints.
    pub cover: bool,
    /// With `cover`, also cover bindings where sizes are 0 (otherwise the domain is sizes
    /// `>= 1`).
    pub cover_zero: bool,
    /// With `cover`, the largest number of specializations; beyond, the cover stops and is
    /// recorded as incomplete.
    pub max_specializations: usize,
    /// With `cover`, a cover whose traces merge into few specializations (past
    /// [`SPLIT_AFTER_TRACES`] traces, [`SPLIT_TRACES_PER_ENTRY`] per specialization) is
    /// re-run as four parts of its domain in parallel: about twice as fast on two cores, with
    /// a few more specializations (the general plans once per part). Off: one sequential
    /// cover, the fewest specializations.
    pub cover_parts: bool,
    /// With `cover`, a specialization may also answer classes whose sizes 1 its plan
    /// coalesces away (`a == 1` next to `a >= 2`): instantiation coalesces a plan again,
    /// and the cover widens a plan to a class only when it proves the coalesced plan is the
    /// class's (`trace::coalesce_at`). Far fewer specializations where sizes
    /// are partly independent (channels-last `[a, b, c, d]` + contiguous `[e, b, f, g]`:
    /// 94 → 40), but compiles take longer where the merged terms compare two sizes
    /// (`e == i`; see the module docs). On by default (the cover
    /// target of at most 64 specializations for a 10-symbol spec laid out by memory
    /// formats: `[a, ..., g] + [h, i, j, 1, 1, 1, g]` 135 → 36); `compile
    /// --no-widen-size-1` turns it off.
    pub widen_size_1: bool,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            cover: false,
            cover_zero: true,
            max_specializations: MAX_SPECIALIZATIONS,
            cover_parts: true,
            widen_size_1: true,
        }
    }
}

/// Options of a cover ([`crate::program::cover_program`]; a spec's compile takes them from
/// [`CompileOptions`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoverOptions {
    /// Also cover bindings where sizes are 0 (otherwise the domain is sizes `>= 1`).
    pub zero: bool,
    /// The largest number of specializations; beyond, the cover stops and is recorded as
    /// incomplete.
    pub max_specializations: usize,
}

impl Default for CoverOptions {
    fn default() -> Self {
        CoverOptions {
            zero: true,
            max_specializations: MAX_SPECIALIZATIONS,
        }
    }
}

/// What the cover proof established about an artifact's specializations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coverage {
    /// True when the case split proved that every binding of `domain` is admitted by some
    /// specialization (a plan, or an error specialization).
    pub complete: bool,
    /// The domain the proof ranges over: one condition per symbol and stride expression.
    pub domain: Vec<BoolExpr>,
    /// Regions not proven covered, each a conjunction of conditions (empty when complete).
    pub uncovered: Vec<BoolExpr>,
}

/// The domain of a spec's bindings: symbols `>= 0` (size symbols `>= 1` without `zero`),
/// and every stride expression that is not a constant or a bare symbol `>= 0`.
pub fn cover_domain(spec: &Spec, zero: bool) -> Vec<BoolExpr> {
    let mut out = Vec::new();
    for (i, name) in spec.symbols.iter().enumerate() {
        let min = if !zero && spec.is_size_symbol(i) {
            1
        } else {
            0
        };
        out.push(BoolExpr::ge(&Expr::symbol(name), &Expr::constant(min)));
    }
    for inp in &spec.inputs {
        if let super::spec::StrideSpec::Exprs(es) = &inp.strides {
            for e in es {
                if e.as_const().is_none() && e.as_symbol().is_none() {
                    let c = BoolExpr::ge(e, &Expr::constant(0));
                    // `b*s >= 0` follows from `b, s >= 0`: not worth stating.
                    let mins: Vec<(Symbol, i64)> =
                        spec.symbols.iter().map(|n| (Symbol::new(n), 0)).collect();
                    if decide_under(&mins, &[], &c) != Some(true) && !out.contains(&c) {
                        out.push(c);
                    }
                }
            }
        }
    }
    out
}

/// Compiles the specializations of `spec`: the one traced at the hints, and with
/// `options.cover` as many more as the cover proof needs (see the module docs).
pub fn compile_specializations(
    spec: &Spec,
    options: &CompileOptions,
) -> Result<Vec<Specialization>> {
    Ok(compile_cover(spec, options)?.0)
}

/// Like [`compile_specializations`], also returning what the proof established (`None`
/// without `options.cover`).
pub fn compile_cover(
    spec: &Spec,
    options: &CompileOptions,
) -> Result<(Vec<Specialization>, Option<Coverage>)> {
    compile_cover_traced(spec, options).map(|(s, c, _)| (s, c))
}

/// [`compile_cover`], also returning every trace the cover made (the compile's
/// verification of what it writes reuses them instead of tracing at their points again:
/// a cover whose general plan absorbed hundreds of classes re-traced each).
pub(crate) fn compile_cover_traced(
    spec: &Spec,
    options: &CompileOptions,
) -> Result<(Vec<Specialization>, Option<Coverage>, Vec<Specialization>)> {
    cover_in_parts(spec, options, SPLIT_LITERALS)
}

/// [`compile_cover_traced`], cutting a split cover by at most `literals` literals.
fn cover_in_parts(
    spec: &Spec,
    options: &CompileOptions,
    literals: usize,
) -> Result<(Vec<Specialization>, Option<Coverage>, Vec<Specialization>)> {
    if !options.cover {
        return Ok((vec![trace(spec, &spec.hints)?], None, Vec::new()));
    }
    let domain = cover_domain(spec, options.cover_zero);
    let target = Recording::new(spec, &[], options.widen_size_1);
    let start = std::time::Instant::now();
    // Free stride symbols: one run (see [`SPLIT_AFTER_TRACES`]).
    let strides_free = (0..spec.symbols.len()).any(|i| !spec.is_size_symbol(i));
    let run = cover(
        &target,
        &domain,
        CoverLimits {
            entries: options.max_specializations,
            traces: if options.cover_parts && !strides_free {
                SPLIT_AFTER_TRACES
            } else {
                usize::MAX
            },
            traces_per_entry: SPLIT_TRACES_PER_ENTRY,
        },
    )?;
    let made = target.traced.into_inner();
    if run.trace_limited && std::env::var_os("SYMSTRIDE_COVER_DEBUG").is_some() {
        eprintln!(
            "cover: {} traces into {} specializations in {:.3} s: split into parts",
            made.len(),
            run.traces.len(),
            start.elapsed().as_secs_f64()
        );
    }
    if !run.trace_limited {
        let coverage = Coverage {
            complete: run.uncovered.is_empty(),
            domain,
            uncovered: run.uncovered,
        };
        return Ok((run.traces, Some(coverage), made));
    }
    // The parts of the domain the literals cut (every combination of each literal or its
    // negation), covered in parallel; each takes the traces made so far where they admit
    // its witnesses. Without a literal that cuts the traces, one part: the whole domain,
    // covered on from the traces made.
    let halving = halving_literals(spec, &made, literals);
    let mut parts: Vec<Vec<BoolExpr>> = vec![Vec::new()];
    for l in &halving {
        parts = parts
            .into_iter()
            .flat_map(|p| {
                let mut with = p.clone();
                with.push(l.clone());
                let mut without = p;
                without.push(l.not());
                [with, without]
            })
            .collect();
    }
    let runs: Vec<Result<(CoverRun<Specialization>, Vec<Specialization>)>> = parts
        .into_par_iter()
        .map(|lits| {
            let mut d = domain.clone();
            d.extend(lits.iter().cloned());
            let target = Recording::new(spec, &made, options.widen_size_1);
            let t0 = std::time::Instant::now();
            let mut run = cover(
                &target,
                &d,
                CoverLimits::entries(options.max_specializations),
            )?;
            if std::env::var_os("SYMSTRIDE_COVER_DEBUG").is_some() {
                eprintln!(
                    "cover: part {}: {:.3} s, {} specializations, {} new traces",
                    BoolExpr::and_all(lits.clone()),
                    t0.elapsed().as_secs_f64(),
                    run.traces.len(),
                    target.traced.borrow().len()
                );
            }
            let part = BoolExpr::and_all(lits);
            for u in &mut run.uncovered {
                *u = BoolExpr::and_all([u.clone(), part.clone()]);
            }
            Ok((run, target.traced.into_inner()))
        })
        .collect();
    let (mut traces, mut uncovered, mut traced) = (Vec::<Specialization>::new(), Vec::new(), made);
    for r in runs {
        let (run, made_there) = r?;
        // A specialization another part has already (the empty-output one, written from
        // the spec) is kept once.
        for t in run.traces {
            if !traces
                .iter()
                .any(|k| k.guards == t.guards && k.answer() == t.answer())
            {
                traces.push(t);
            }
        }
        uncovered.extend(run.uncovered);
        for t in made_there {
            if !traced.iter().any(|m| m.traced_at == t.traced_at) {
                traced.push(t);
            }
        }
    }
    // As one run orders them.
    order_traces(spec, &mut traces);
    // The cap holds for the parts together: beyond it the rest is dropped, and what the
    // kept specializations leave uncovered is found by the same proof.
    if traces.len() > options.max_specializations {
        traces.truncate(options.max_specializations);
        let sets: Vec<&[Guard]> = traces.iter().map(|t| &t.guards[..]).collect();
        uncovered = uncovered_by(&spec.symbols, &domain, &sets).into_iter().collect();
    }
    let coverage = Coverage {
        complete: uncovered.is_empty(),
        domain,
        uncovered,
    };
    Ok((traces, Some(coverage), traced))
}

/// A cover that has made this many traces without finishing (and at least
/// [`SPLIT_TRACES_PER_ENTRY`] per specialization) is started again as covers of the parts
/// of its domain (cut by the two `s == 1` literals that divide the traces made most
/// evenly), run in parallel, each taking the traces already made where they admit its
/// witnesses ([`CompileOptions::cover_parts`] turns this off).
///
/// Why: a cover is one sequential case split, each step a trace and a merge. Covers of
/// rank-10 broadcasts trace one class per pattern of sizes 1 (`[a, ..., j] + [a, 1, ...,
/// 1]`: 1,024 traces into 4 specializations, 1.8 s). Parts share no class, so their
/// traces split between them, and each part's merges are over its own classes only.
/// Four parts measured faster than halves or eight parts on the bias spec, and splitting
/// after 64 traces gained nothing over 128 (`docs/perf/2026-11-cover.md`). Small covers
/// (every public spec: at most 54
/// traces) finish before the limit and are unchanged. The result does not depend on the
/// thread count: the parts are the same at one thread, run one after the other, and are
/// concatenated in their fixed order.
///
/// Covers of specs with free stride symbols never split. Their classes multiply by the
/// orders of the strides, which the parts' `s == 1` literals on sizes do not separate,
/// so every part needs most of the plans again. Once plans were widened over sizes 1 by
/// default, these covers reached the split rule, and split (2 threads, compile's
/// own time, split → one run): `cover_free_strides_3d` 40 specializations in 0.94-0.98 s
/// → 17 in 1.0 s, with a broadcast `[b, c]` operand 31 in 0.40 s → 10 in 0.41 s, `neg`
/// of it 58 in 1.3 s → 29 in 0.9 s.
pub const SPLIT_AFTER_TRACES: usize = 128;

/// See [`SPLIT_AFTER_TRACES`]: a cover splits only once it has made at least this many
/// traces per specialization so far. The split pays
/// where many classes merge into few specializations (the bias spec: 1,023 traces, 4
/// specializations), whose merges each part then does over its own classes only. Where
/// most traces are specializations of their own (free strides: 223 traces, 44
/// specializations; the four independent pairs of `artifact_load_100`: 253 and 122) the
/// parts would only repeat the general plans: split there, `cover_free_strides_3d` took
/// 0.95 s instead of 0.80, and the 100-specialization artifact cut from the split cover
/// loaded in 42 ms instead of 29 (fewer of its specializations verified from the recorded
/// guards alone). With this rule neither splits (same artifacts as one run). 6 rather than
/// 8 (2 threads, five runs each, same minutes): `[a, ..., g] + [h, i, j, 1, 1, 1,
/// g]` then splits after 128 traces instead of 232 (the first run is one thread's work,
/// the other core idle): 1.11-1.20 s → 0.84-0.88 s (135 specializations either way), with
/// `--widen-size-1` 0.98-1.01 s → 0.85-0.96 s (36). Nine other 7- to 10-symbol specs
/// (free strides and `artifact_load_100`'s among them) give byte-identical artifacts in
/// both modes, except free strides widened (split now: 40 specializations either way,
/// 1.03-1.14 s → 0.97-1.05 s). 4 split `artifact_load_100`'s spec widened too (98
/// specializations instead of 83), so 6 it is.
pub const SPLIT_TRACES_PER_ENTRY: usize = 6;

/// Literals `s == 1` of size symbols that cut the traces made so far most evenly between
/// `s == 1` and `s != 1` (the classes of a broadcast differ by which sizes are 1): the
/// `literals` most even, fewer when fewer symbols cut them at all.
fn halving_literals(spec: &Spec, made: &[Specialization], literals: usize) -> Vec<BoolExpr> {
    let mut cuts: Vec<(usize, usize)> = (0..spec.symbols.len())
        .filter(|&i| spec.is_size_symbol(i))
        .map(|i| {
            let ones = made.iter().filter(|t| t.traced_at[i] == 1).count();
            (ones.min(made.len() - ones), i)
        })
        .filter(|&(smaller, _)| smaller > 0)
        .collect();
    // The most even first; among equals the last symbols (the innermost dimensions).
    cuts.sort_by_key(|&(smaller, i)| std::cmp::Reverse((smaller, i)));
    cuts.iter()
        .take(literals)
        .map(|&(_, i)| BoolExpr::eq(&Expr::symbol(&spec.symbols[i]), &Expr::constant(1)))
        .collect()
}

/// How many literals cut the domain of a cover past [`SPLIT_AFTER_TRACES`]: 2, so four
/// parts, which two threads balance better than two unequal halves.
const SPLIT_LITERALS: usize = 2;

/// A spec as the cover's target, keeping a copy of every trace it makes, and answering a
/// trace from `pool` (traces made earlier) when one admits the binding: its guards hold
/// there, so it is what a trace there gives (the same decisions, the same plan).
struct Recording<'a> {
    spec: &'a Spec,
    pool: &'a [Specialization],
    /// See [`CompileOptions::widen_size_1`].
    widen_size_1: bool,
    traced: std::cell::RefCell<Vec<Specialization>>,
}

impl<'a> Recording<'a> {
    fn new(spec: &'a Spec, pool: &'a [Specialization], widen_size_1: bool) -> Recording<'a> {
        Recording {
            spec,
            pool,
            widen_size_1,
            traced: std::cell::RefCell::new(Vec::new()),
        }
    }
}

impl CoverTarget for Recording<'_> {
    type Trace = Specialization;

    fn symbols(&self) -> &[String] {
        self.spec.symbols()
    }

    fn hints(&self) -> &[i64] {
        CoverTarget::hints(self.spec)
    }

    fn realizable(&self, values: &[i64]) -> bool {
        self.spec.realizable(values)
    }

    fn trace_at(&self, values: &[i64]) -> Result<Specialization> {
        for t in self.pool {
            if self.spec.admits(t, values)? {
                return Ok(t.clone());
            }
        }
        let s = self.spec.trace_at(values)?;
        self.traced.borrow_mut().push(s.clone());
        Ok(s)
    }

    fn guards<'a>(&self, t: &'a Specialization) -> &'a [Guard] {
        self.spec.guards(t)
    }

    fn traced_at<'a>(&self, t: &'a Specialization) -> &'a [i64] {
        self.spec.traced_at(t)
    }

    fn is_error(&self, t: &Specialization) -> bool {
        self.spec.is_error(t)
    }

    fn admits(&self, t: &Specialization, values: &[i64]) -> Result<bool> {
        self.spec.admits(t, values)
    }

    fn same_answer(&self, host: &Specialization, new: &Specialization) -> bool {
        same_answer(self.spec, host, new, self.widen_size_1)
    }

    fn with_guards(&self, host: &Specialization, guards: Vec<Guard>) -> Result<Specialization> {
        self.spec.with_guards(host, guards)
    }
}

/// Re-runs the proof over given specializations: does every binding of `domain` satisfy
/// some specialization's guards? Returns the first region found uncovered, or `None`.
pub fn uncovered_region(
    spec: &Spec,
    domain: &[BoolExpr],
    specializations: &[Specialization],
) -> Option<BoolExpr> {
    let sets: Vec<&[Guard]> = specializations.iter().map(|s| &s.guards[..]).collect();
    uncovered_by(&spec.symbols, domain, &sets)
}

/// A single-op spec is covered by [`Specialization`]s: a plan, or an error specialization
/// for shapes that do not broadcast.
impl CoverTarget for Spec {
    type Trace = Specialization;

    fn symbols(&self) -> &[String] {
        &self.symbols
    }

    fn hints(&self) -> &[i64] {
        &self.hints
    }

    fn realizable(&self, values: &[i64]) -> bool {
        self.concrete_inputs(values).is_ok()
    }

    fn trace_at(&self, values: &[i64]) -> Result<Specialization> {
        trace_or_error(self, values)
    }

    fn guards<'a>(&self, t: &'a Specialization) -> &'a [Guard] {
        &t.guards
    }

    fn traced_at<'a>(&self, t: &'a Specialization) -> &'a [i64] {
        &t.traced_at
    }

    fn is_error(&self, t: &Specialization) -> bool {
        t.error.is_some()
    }

    fn admits(&self, t: &Specialization, values: &[i64]) -> Result<bool> {
        t.admits(values)
    }

    fn same_answer(&self, host: &Specialization, new: &Specialization) -> bool {
        same_answer(self, host, new, false)
    }

    fn with_guards(&self, host: &Specialization, guards: Vec<Guard>) -> Result<Specialization> {
        let at = host.traced_at.clone();
        match &host.error {
            Some(e) => Specialization::new_error(self, at, guards, e),
            None if host.is_empty_output() => Specialization::new_empty_output(self, at, guards),
            None => Specialization::new(self, at, guards, host.plan.clone()),
        }
    }
}

/// [`CoverTarget::same_answer`] of two specializations of `spec`, a host's plan widened over
/// sizes 1 or not ([`CompileOptions::widen_size_1`]).
fn same_answer(spec: &Spec, host: &Specialization, new: &Specialization, widen_size_1: bool) -> bool {
    match (&host.error, &new.error) {
        (None, None) => match (host.is_empty_output(), new.is_empty_output()) {
            (false, false) => plan_agrees(&host.plan, new, spec, widen_size_1),
            (a, b) => a && b,
        },
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// True when `plan` has the structure of `s.plan` and every entry equals `s.plan`'s
/// wherever `s`'s guards hold (decided statically; sizes `>= 0`): the loader's comparison
/// of a stored plan with a trace ([`super::retrace::plan_pairs`], which compares a trace
/// at an empty output on its output layout only), proved under `s`'s guards.
///
/// A pair whose two sides differ at `s`'s trace point (where `s`'s guards hold) is not
/// equal under them, so such a host is ruled out by evaluation before any proof: a new
/// trace of `[a, ..., e] + [f, ..., j]` is compared with up to 245 hosts, and the proofs
/// (each assuming the guards again) were a fifth of its cover.
///
/// With `widen_size_1`, a host plan with more iteration dimensions than `s.plan` is first
/// coalesced again as the build would coalesce it at `s`'s trace point ([`super::trace::coalesce_at`]):
/// where `s`'s class has sizes 1 that the host's has not (`a == 1` against `a >= 2`), the
/// build drops those dimensions, and the host instantiated and coalesced again
/// ([`crate::iter::Plan::coalesce`], which instantiation does) is the fresh plan. It
/// answers `s`'s class when `s`'s guards imply every decision of that coalescing and
/// the coalesced plan equals `s.plan` under them.
fn plan_agrees(plan: &Plan<Expr>, s: &Specialization, spec: &Spec, widen_size_1: bool) -> bool {
    let at = || {
        crate::sym::Bindings::from_pairs(
            spec.symbols
                .iter()
                .map(String::as_str)
                .zip(s.traced_at.iter().copied()),
        )
    };
    if widen_size_1 && plan.shape.len() > s.plan.shape.len() && !s.plan.is_statically_empty() {
        return coalesced_agrees(plan, s, spec, &at());
    }
    super::retrace::plan_pairs(plan, &s.plan).is_ok_and(|pairs| {
        let at = at();
        let differs = |a: &Expr, b: &Expr| matches!((a.eval(&at), b.eval(&at)), (Ok(x), Ok(y)) if x != y);
        if pairs.iter().any(|(_, a, b)| differs(a, b)) {
            return false;
        }
        equal_under(
            &spec.symbols,
            &s.guards,
            pairs.iter().map(|(_, a, b)| (*a, *b)),
        )
    })
}

/// [`plan_agrees`] for a host plan with more iteration dimensions than `s.plan`: the
/// loader's comparison ([`super::retrace::plan_equal_under`], which coalesces the host
/// plan at `s`'s trace point and requires every decision and entry proved under `s`'s
/// guards), after a cheap check at that point: the host instantiated and coalesced again
/// must be `s`'s plan there (most hosts differ in a stride or in the dimensions left).
fn coalesced_agrees(
    plan: &Plan<Expr>,
    s: &Specialization,
    spec: &Spec,
    at: &crate::sym::Bindings,
) -> bool {
    let (Ok(mut host), Ok(here)) = (
        plan.try_map(|e| e.eval(at)),
        s.plan.try_map(|e| e.eval(at)),
    ) else {
        return false;
    };
    if host.coalesce().is_err() || host != here {
        return false;
    }
    let facts: Vec<&BoolExpr> = s.guards.iter().map(|g| &g.cond).collect();
    super::retrace::plan_equal_under(spec, &facts, plan, &s.plan, &s.traced_at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aot::prover::find_witness;
    use crate::sym::Facts;

    fn cover(json: &str) -> (Vec<Specialization>, Coverage) {
        let spec = Spec::from_json(json).unwrap();
        let (s, c) = compile_cover(
            &spec,
            &CompileOptions {
                cover: true,
                ..Default::default()
            },
        )
        .unwrap();
        (s, c.unwrap())
    }

    /// A split cover is complete however many literals cut it: with none (no `s == 1` cuts
    /// the traces made: the cover goes on as one part from them) it is the one run's
    /// specializations again, and with two every binding of a grid is admitted by a
    /// specialization whose plan is the fresh concrete build's.
    #[test]
    fn a_split_cover_is_complete_with_any_number_of_literals() {
        let spec = Spec::from_json(
            r#"{"op":"add","inputs":[{"sizes":["a","b","c","d","e","f","g","h"],"layout":"contiguous"},{"sizes":["h"],"layout":"contiguous"}],"hints":{"a":2,"b":3,"c":4,"d":5,"e":6,"f":7,"g":8,"h":9}}"#,
        )
        .unwrap();
        let on = CompileOptions {
            cover: true,
            ..Default::default()
        };
        let one_run = compile_cover(
            &spec,
            &CompileOptions {
                cover_parts: false,
                ..on.clone()
            },
        )
        .unwrap();
        assert!(one_run.1.as_ref().unwrap().complete);
        for literals in [0, 2] {
            let (specs, cov, _) = cover_in_parts(&spec, &on, literals).unwrap();
            let cov = cov.unwrap();
            assert!(cov.complete, "{literals} literals: {:?}", cov.uncovered);
            if literals == 0 {
                assert_eq!(specs, one_run.0, "one part is the one run");
            } else {
                assert!(specs.len() > one_run.0.len(), "not split");
            }
            for code in 0..3usize.pow(8) {
                let v: Vec<i64> = (0..8).map(|d| (code / 3usize.pow(d) % 3) as i64).collect();
                let s = specs
                    .iter()
                    .find(|s| spec.admits(s, &v).unwrap())
                    .unwrap_or_else(|| panic!("{literals} literals: {v:?} not admitted"));
                if s.error.is_none() && !s.is_empty_output() {
                    let fresh = crate::aot::concrete_plan(&spec, &v).unwrap();
                    assert_eq!(s.instantiate(&v).unwrap(), fresh, "{literals} literals at {v:?}");
                }
            }
        }
    }

    /// The traces a cover hands to the compile's verification are exactly what a trace at
    /// their point gives (the verifier uses them in place of its own), one per class the
    /// cover traced, more than it keeps.
    #[test]
    fn the_traces_a_cover_keeps_for_verification_are_real_traces() {
        let spec = Spec::from_json(
            r#"{"op":"add","inputs":[{"sizes":["a","b","c","d","e"],"layout":"contiguous"},{"sizes":["e"],"layout":"contiguous"}],"hints":{"a":2,"b":3,"c":4,"d":5,"e":6}}"#,
        )
        .unwrap();
        let options = CompileOptions {
            cover: true,
            ..Default::default()
        };
        let (kept, _, traced) = compile_cover_traced(&spec, &options).unwrap();
        assert!(traced.len() > kept.len(), "{} traces, {} kept", traced.len(), kept.len());
        for t in &traced {
            assert_eq!(*t, trace_or_error(&spec, &t.traced_at).unwrap());
        }
    }

    #[test]
    fn witness_satisfies_equalities_and_exclusions() {
        let spec = Spec::from_json(
            r#"{"op":"add","inputs":[{"sizes":["a"],"layout":"contiguous"},{"sizes":["b"],"layout":"contiguous"}],"hints":{"a":3,"b":5}}"#,
        )
        .unwrap();
        let lits = vec![
            BoolExpr::parse("a == b").unwrap(),
            BoolExpr::parse("a != 1").unwrap(),
            BoolExpr::parse("a >= 1").unwrap(),
        ];
        let domain = cover_domain(&spec, true);
        let mut f = Facts::new(&[(Symbol::new("a"), 0), (Symbol::new("b"), 0)]);
        for l in &lits {
            f.assume(l);
        }
        let w = find_witness(&spec, &lits, &domain, &f).unwrap();
        assert_eq!(w[0], w[1]);
        assert!(w[0] >= 2);
    }

    #[test]
    fn witness_of_a_region_with_products_of_free_strides() {
        let spec = Spec::from_json(
            r#"{"op":"add","inputs":[{"sizes":["a","b","c"],"strides":["s","t","u"]},{"sizes":["a","b","c"],"layout":"contiguous"}],"hints":{"a":3,"b":4,"c":5,"s":1,"t":7,"u":40}}"#,
        )
        .unwrap();
        // `s` and `t` follow from the others (`c*u`): the facts' substitutions order the
        // search so that it meets them.
        let region = "c*u == s && c*u == t && b == 1 && s == t && a*c*u != t && a*b != 1 && a*c != 1 && a*s != t && b*c != s && b*c != 1 && b*t != u && a != 0 && a != 1 && b != 0 && c != 0 && c != s && c != 1 && s != 0 && s != u && t != 0 && t != 1 && u != 0 && b <= a && a >= 1 && a >= 2 && a < c && b >= 1 && b < c && b <= 1 && c >= 1 && c >= 2 && t <= s && u <= s && u < s && s >= 1 && s <= t && u <= t && u < t && t >= 1 && u >= 1";
        let lits: Vec<BoolExpr> = region
            .split(" && ")
            .map(|l| BoolExpr::parse(l).unwrap())
            .collect();
        let domain = cover_domain(&spec, true);
        let mins: Vec<(Symbol, i64)> = spec.symbols.iter().map(|n| (Symbol::new(n), 0)).collect();
        let mut f = Facts::new(&mins);
        for l in &lits {
            f.assume(l);
        }
        let w = find_witness(&spec, &lits, &domain, &f).unwrap();
        let b = crate::sym::Bindings::from_pairs(
            spec.symbols.iter().map(|n| n.as_str()).zip(w.iter().copied()),
        );
        assert!(lits.iter().all(|l| l.eval(&b).unwrap()));
    }

    #[test]
    fn non_broadcasting_sizes_get_an_error_specialization() {
        let (s, c) = cover(
            r#"{"op":"add","inputs":[{"sizes":["a"],"layout":"contiguous"},{"sizes":["b"],"layout":"contiguous"}],"hints":{"a":3,"b":3}}"#,
        );
        assert!(c.complete, "{c:?}");
        assert!(s.iter().any(|x| x.error.as_deref() == Some("broadcast")));
        let spec = Spec::from_json(
            r#"{"op":"add","inputs":[{"sizes":["a"],"layout":"contiguous"},{"sizes":["b"],"layout":"contiguous"}],"hints":{"a":3,"b":3}}"#,
        )
        .unwrap();
        let domain = cover_domain(&spec, true);
        assert_eq!(uncovered_region(&spec, &domain, &s), None);
        // Without the error specialization the proof finds the gap.
        let plans: Vec<Specialization> = s.into_iter().filter(|x| x.error.is_none()).collect();
        assert!(uncovered_region(&spec, &domain, &plans).is_some());
    }
}
