//! Fusion of elementwise chains: one pass over memory instead of one per step.
//!
//! # What is fused
//! A [`FusionPlan`] is decided once, from the program and its traced layouts
//! ([`plan_fusion`], at `Expr` for a compiled artifact or at `i64`): a set of
//! [`FusedChain`]s. A chain is a tree of elementwise steps (`add sub mul div maximum minimum
//! neg abs relu exp sqrt sigmoid`) over one floating dtype in which
//!
//! * every step but the last (the root) is read by exactly one step, a later member, is no
//!   output, and has no view aliasing it (so nobody else ever needs it materialized);
//! * every member has the root's sizes (equal as expressions: at every binding the guards
//!   admit, they are equal) and computes in the dtype of all its tensor operands (no
//!   promotion, no converted copies), so the per-element expression is exactly the steps'.
//!
//! The operands from outside the chain (leaves) broadcast to the root's sizes, as each
//! member's own build already required. Anything else is not fused and runs step by step.
//!
//! # Chains feeding a reduction
//! A chain may end in a reduction (`sum mean amax amin prod`) of its root, in the root's
//! dtype: the reduction is then evaluated inside the chain's loop, each block of the root
//! folded into the output's accumulator as it is computed, so the root is never read back
//! from memory. When the root has readers after the reduction (softmax's `exp` is read by
//! `sum` and by `div`) or is an output, it is **written while reducing** (one write, no
//! re-read); it must then have no view aliasing it and no reader between itself and the
//! reduction. The alternative, recomputing the root in each reader's chain, reads the same
//! bytes (the chain's leaves instead of the root) and evaluates the chain twice (two `exp`
//! per element for softmax), so it was not taken.
//!
//! # Row segments
//! After the chains, [`plan_fusion`] decides the row segments (`rows.rs`): runs of steps
//! reducing over the last dim and broadcasting back, evaluated one row at a time. A segment
//! holds every chain it touches, so a run whose rows are too short or too long for the row
//! evaluator runs those chains instead.
//!
//! # How a chain runs
//! At the root's step (a reduction chain: at the reduction's), the block evaluator
//! (`blocks.rs`) walks the root's layout in memory order in L1-sized blocks; only the root
//! (or the reduction's result) is written to memory, intermediates never leave the block
//! buffers.
//!
//! # Why
//! Step by step, a chain of `n` members over `N` elements writes and re-reads `n - 1`
//! intermediates of `N` elements: PyTorch eager does the same. The measurements that
//! justified the block evaluator are in `docs/perf/2026-11-programs.md` (the `symstride bench`
//! program scenarios).

use super::rows::{plan_rows, RowSegment, ROW_MAX, ROW_MIN};
use super::spec::{Program, StepArg, StepOp};
use super::trace::Value;
use crate::op::Op;
use crate::sym::Bindings;
use crate::reduce::ReductionOp;
use crate::tensor::Scalar;
use crate::{DType, Error, Result};
use serde::{Deserialize, Serialize};

pub use super::blocks::BLOCK;

/// What a chain's root is. Stored in artifacts as `"elementwise"` or
/// `{"reduction": {"writes_input": true}}`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChainKind {
    /// The last step is an elementwise step whose value is the only one materialized.
    #[default]
    Elementwise,
    /// The last step is a reduction of the step before it (the elementwise root), evaluated
    /// inside the chain's loop.
    Reduction {
        /// The elementwise root is written too (read after the reduction, or an output).
        writes_input: bool,
    },
}

/// One fused chain: step indices (0-based, ascending); the last is the root, whose value
/// is the only one materialized (for a reduction chain, see [`ChainKind`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FusedChain {
    /// The member steps (0-based, ascending); the last is the root.
    pub steps: Vec<usize>,
    /// What the root is (absent in plans written before reduction chains: elementwise).
    #[serde(default)]
    pub kind: ChainKind,
}

impl FusedChain {
    /// An elementwise chain of `steps`.
    pub fn elementwise(steps: Vec<usize>) -> Self {
        FusedChain {
            steps,
            kind: ChainKind::Elementwise,
        }
    }

    /// The elementwise members (every step but a reduction root).
    pub(crate) fn members(&self) -> &[usize] {
        match self.kind {
            ChainKind::Elementwise => &self.steps,
            ChainKind::Reduction { .. } => &self.steps[..self.steps.len().saturating_sub(1)],
        }
    }
}

/// Steps numbered from 1.
fn numbered(steps: &[usize]) -> Vec<usize> {
    steps.iter().map(|k| k + 1).collect()
}

/// The fusion decisions of a program (empty: run step by step).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FusionPlan {
    /// Disjoint chains.
    pub chains: Vec<FusedChain>,
    /// Row segments (`rows.rs`), disjoint, each holding every chain it touches (absent in
    /// plans written before row fusion, and when there is none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rows: Vec<RowSegment>,
}

impl FusionPlan {
    /// One line per chain, steps numbered from 1 as in guard reasons: `steps 2-4 fused`
    /// (consecutive) or `steps 2, 4, 5 fused`; a reduction chain adds `(reduction 4 in the
    /// loop)`, and `(reduction 4 in the loop, 3 written)` when its input is materialized.
    /// Then one line per row segment: `steps 1-5 fused row by row at rows of 32-16384
    /// elements (1, 5 written)` (a run with other rows takes the chains instead).
    pub fn summary(&self) -> Vec<String> {
        let rows = self.rows.iter().map(|r| {
            let (a, b) = r.span().unwrap_or_default();
            let written: Vec<String> = r.written.iter().map(|k| (k + 1).to_string()).collect();
            let written = match &written[..] {
                [] => "nothing".to_string(),
                w => w.join(", "),
            };
            format!(
                "steps {}-{} fused row by row at rows of {ROW_MIN}-{ROW_MAX} elements ({written} written)",
                a + 1,
                b + 1,
            )
        });
        self.chains
            .iter()
            .zip(self.step_numbers())
            .map(|(c, s)| {
                let consecutive = s.windows(2).all(|w| w[1] == w[0] + 1);
                let steps = if consecutive && s.len() > 1 {
                    format!("steps {}-{} fused", s[0], s[s.len() - 1])
                } else {
                    let list: Vec<String> = s.iter().map(|k| k.to_string()).collect();
                    format!("steps {} fused", list.join(", "))
                };
                match (c.kind, &s[..]) {
                    (ChainKind::Reduction { writes_input }, [.., j, r]) => {
                        let w = if writes_input {
                            format!(", {j} written")
                        } else {
                            String::new()
                        };
                        format!("{steps} (reduction {r} in the loop{w})")
                    }
                    _ => steps,
                }
            })
            .chain(rows)
            .collect()
    }

    /// Per chain, then per row segment, its member steps numbered from 1 (as in guard
    /// reasons and [`Self::summary`]). A chain and a row segment can hold the same steps;
    /// [`Self::chain_numbers`] and [`Self::row_numbers`] keep them apart.
    pub fn step_numbers(&self) -> Vec<Vec<usize>> {
        let mut all = self.chain_numbers();
        all.extend(self.row_numbers());
        all
    }

    /// Per chain, its member steps numbered from 1; what `symstride check` prints as
    /// `"fused": {"chains": ...}`.
    pub fn chain_numbers(&self) -> Vec<Vec<usize>> {
        self.chains.iter().map(|c| numbered(&c.steps)).collect()
    }

    /// Per row segment, its member steps numbered from 1; `"fused": {"rows": ...}`.
    pub fn row_numbers(&self) -> Vec<Vec<usize>> {
        self.rows.iter().map(|r| numbered(&r.steps)).collect()
    }

    /// How many steps a run at these concrete layouts evaluates fused: the steps of every
    /// row segment whose rows fit ([`RowSegment::fits`]), then those of every chain outside
    /// them. What [`super::RunStats::fused_steps`] reports.
    pub fn steps_fused_at(&self, p: &Program, values: &[Value<i64>]) -> usize {
        let taken: Vec<&RowSegment> = self.rows.iter().filter(|r| r.fits(p, values)).collect();
        let in_rows = |k: &usize| taken.iter().any(|r| r.steps.contains(k));
        taken.iter().map(|r| r.steps.len()).sum::<usize>()
            + self
                .chains
                .iter()
                .filter(|c| !c.steps.iter().any(in_rows))
                .map(|c| c.steps.len())
                .sum::<usize>()
    }

    /// Per step: the index of its chain, if fused.
    pub(crate) fn chain_of(&self, n_steps: usize) -> Vec<Option<usize>> {
        let mut of = vec![None; n_steps];
        for (c, ch) in self.chains.iter().enumerate() {
            for &k in &ch.steps {
                if let Some(slot) = of.get_mut(k) {
                    *slot = Some(c);
                }
            }
        }
        of
    }
}

impl std::fmt::Display for FusionPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.chains.is_empty() && self.rows.is_empty() {
            return write!(f, "no fusion");
        }
        write!(f, "{}", self.summary().join("; "))
    }
}

/// Whether step `k` may be a chain member: a fusable op writing a fresh floating value,
/// every tensor operand of that dtype, every number a float or an integer.
pub(super) fn fusable<I>(p: &Program, values: &[Value<I>], k: usize) -> bool {
    let st = &p.steps[k];
    let me = p.inputs.len() + k;
    let StepOp::Op(op) = st.op else { return false };
    let v = &values[me];
    op.def().fusable
        && v.storage == me
        && matches!(v.dtype, DType::F32 | DType::F64)
        && st.args.iter().all(|a| match a {
            StepArg::Value(i) => values[*i].dtype == v.dtype,
            StepArg::Number(Scalar::Float(_) | Scalar::Int(_)) | StepArg::SymNumber(_) => true,
            _ => false,
        })
}

/// The steps reading each value (each reading step once).
pub(super) fn readers(p: &Program) -> Vec<Vec<usize>> {
    let n = p.inputs.len() + p.steps.len();
    let mut r: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, st) in p.steps.iter().enumerate() {
        for a in &st.args {
            if let StepArg::Value(i) = a {
                if r[*i].last() != Some(&k) {
                    r[*i].push(k);
                }
            }
        }
    }
    r
}

/// Reductions a chain may feed.
pub(super) const FUSABLE_REDUCTIONS: [ReductionOp; 5] = [
    ReductionOp::Sum,
    ReductionOp::Mean,
    ReductionOp::Amax,
    ReductionOp::Amin,
    ReductionOp::Prod,
];

/// Whether value `me` has a view aliasing it.
pub(super) fn aliased<I>(values: &[Value<I>], me: usize) -> bool {
    values
        .iter()
        .enumerate()
        .any(|(v, x)| v != me && x.storage == me)
}

/// If step `r` is a reduction that can run inside the loop of a chain rooted at the step it
/// reduces: that step and whether it must be written too.
fn reduction_root<I: PartialEq>(
    p: &Program,
    values: &[Value<I>],
    readers: &[Vec<usize>],
    r: usize,
) -> Option<(usize, bool)> {
    let n_in = p.inputs.len();
    let st = &p.steps[r];
    let StepOp::Reduce(op) = st.op else {
        return None;
    };
    let Some(StepArg::Value(v)) = st.args.first() else {
        return None;
    };
    let j = v.checked_sub(n_in)?;
    let out = &values[n_in + r];
    if !FUSABLE_REDUCTIONS.contains(&op)
        || !fusable(p, values, j)
        || out.storage != n_in + r
        || out.dtype != values[*v].dtype
        || aliased(values, *v)
    {
        return None;
    }
    // Readers other than `r` all come after it (the root is written while reducing).
    if readers[*v].iter().any(|&k| k != r && k < r) {
        return None;
    }
    let writes = p.outputs.contains(v) || readers[*v].iter().any(|&k| k != r);
    Some((j, writes))
}

/// Decides the fused chains of `p` from its layouts (traced `Expr`s or concrete `i64`s).
pub fn plan_fusion<I: PartialEq>(p: &Program, values: &[Value<I>]) -> FusionPlan {
    let n_in = p.inputs.len();
    if values.len() != n_in + p.steps.len() {
        return FusionPlan::default();
    }
    let readers = readers(p);
    // `into[k]`: the member step that absorbs step `k` (its single reader).
    let mut into: Vec<Option<usize>> = vec![None; p.steps.len()];
    for (k, slot) in into.iter_mut().enumerate() {
        let me = n_in + k;
        if !fusable(p, values, k) || p.outputs.contains(&me) || aliased(values, me) {
            continue;
        }
        let [r] = readers[me][..] else { continue };
        let rv = n_in + r;
        if fusable(p, values, r)
            && values[rv].sizes == values[me].sizes
            && values[rv].dtype == values[me].dtype
        {
            *slot = Some(r);
        }
    }
    // A reduction absorbs the (elementwise) step it reduces: `reduced_by[j] = (r, writes)`.
    let mut reduced_by: Vec<Option<(usize, bool)>> = vec![None; p.steps.len()];
    for r in 0..p.steps.len() {
        if let Some((j, writes)) = reduction_root(p, values, &readers, r) {
            if into[j].is_none() && reduced_by[j].is_none() {
                reduced_by[j] = Some((r, writes));
            }
        }
    }
    // Chains: each root (a member absorbing others or reduced inside a loop, absorbed by
    // none) and everything that flows into it.
    let root_of = |mut k: usize| {
        while let Some(r) = into[k] {
            k = r;
        }
        k
    };
    let mut chains: Vec<FusedChain> = Vec::new();
    for k in 0..p.steps.len() {
        if into[k].is_some() || !(into.contains(&Some(k)) || reduced_by[k].is_some()) {
            continue;
        }
        let mut steps: Vec<usize> = (0..p.steps.len())
            .filter(|&j| j == k || (into[j].is_some() && root_of(j) == k))
            .collect();
        let kind = match reduced_by[k] {
            Some((r, writes_input)) => {
                steps.push(r);
                ChainKind::Reduction { writes_input }
            }
            None => ChainKind::Elementwise,
        };
        chains.push(FusedChain { steps, kind });
    }
    let rows = plan_rows(p, values, &chains);
    FusionPlan { chains, rows }
}

/// Checks that `plan` is a valid fusion of `p` at these layouts (a plan read from an
/// artifact is not trusted): every chain is exactly what [`plan_fusion`]'s rules allow.
pub fn check_fusion<I: PartialEq>(
    p: &Program,
    values: &[Value<I>],
    plan: &FusionPlan,
) -> Result<()> {
    let bad = |m: String| Err(Error::invalid(format!("fusion plan: {m}")));
    let n_in = p.inputs.len();
    if values.len() != n_in + p.steps.len() {
        return bad("layouts of another program".into());
    }
    let readers = readers(p);
    let mut seen = vec![false; p.steps.len()];
    for ch in &plan.chains {
        let Some(&last) = ch.steps.last() else {
            return bad("an empty chain".into());
        };
        if ch.steps.windows(2).any(|w| w[0] >= w[1]) || last >= p.steps.len() {
            return bad(format!(
                "steps {:?} are not ascending step indices",
                ch.steps
            ));
        }
        let members = ch.members();
        let Some(&root) = members.last() else {
            return bad("a reduction chain without elementwise members".into());
        };
        if let ChainKind::Reduction { writes_input } = ch.kind {
            match reduction_root(p, values, &readers, last) {
                Some((j, w)) if j == root && w == writes_input => {}
                _ => {
                    return bad(format!(
                        "step {} cannot reduce step {} inside its loop{}",
                        last + 1,
                        root + 1,
                        if writes_input {
                            " writing it"
                        } else {
                            " without writing it"
                        }
                    ))
                }
            }
            seen[last] = true;
        }
        for &k in members {
            if std::mem::replace(&mut seen[k], true) {
                return bad(format!("step {} is in two chains", k + 1));
            }
            let me = n_in + k;
            if !fusable(p, values, k) || values[me].sizes != values[n_in + root].sizes {
                return bad(format!("step {} cannot be fused", k + 1));
            }
            if k == root {
                continue;
            }
            let one_reader = matches!(readers[me][..], [r] if members.contains(&r));
            if p.outputs.contains(&me) || aliased(values, me) || !one_reader {
                return bad(format!(
                    "step {} is needed outside its chain (an output, aliased, or read elsewhere)",
                    k + 1
                ));
            }
        }
    }
    // Row segments, given the (now checked) chains.
    let decided = plan_rows(p, values, &plan.chains);
    for (i, seg) in plan.rows.iter().enumerate() {
        if !decided.contains(seg) || plan.rows[..i].contains(seg) {
            return bad(format!(
                "steps {:?} (writing {:?}) are not a row segment of these layouts",
                seg.steps, seg.written
            ));
        }
    }
    Ok(())
}

/// An operand of a member: a leaf, an earlier member's block, a number.
#[derive(Clone, Copy, Debug)]
pub(super) enum Src {
    Leaf(usize),
    Reg(usize),
    Imm(Scalar),
}

/// A chain compiled for evaluation: one instruction per member, operands resolved.
#[derive(Clone, Debug)]
pub(crate) struct Compiled {
    pub(super) code: Vec<(Op, Vec<Src>)>,
    /// The values read from outside the chain, in first-use order.
    pub(crate) leaves: Vec<usize>,
}

/// Resolves the operands of a chain's members; a size passed as a Python number becomes
/// its value at `binding` (the run's).
pub(crate) fn compile(p: &Program, chain: &FusedChain, binding: &Bindings) -> Result<Compiled> {
    let n_in = p.inputs.len();
    let mut leaves: Vec<usize> = Vec::new();
    let mut code = Vec::new();
    let members = chain.members();
    for &k in members {
        let StepOp::Op(op) = p.steps[k].op else {
            return Err(Error::invalid("internal: a fused step is no op"));
        };
        let args = p.steps[k]
            .args
            .iter()
            .map(|a| match a {
                StepArg::Value(i) => Ok(match members.iter().position(|&j| n_in + j == *i) {
                    Some(r) => Src::Reg(r),
                    None => Src::Leaf(match leaves.iter().position(|l| l == i) {
                        Some(l) => l,
                        None => {
                            leaves.push(*i);
                            leaves.len() - 1
                        }
                    }),
                }),
                StepArg::Number(_) | StepArg::SymNumber(_) => match a.number_at(binding) {
                    Some(s) => s.map(Src::Imm),
                    None => Err(Error::invalid("internal: a number without a value")),
                },
                other => Err(Error::invalid(format!("fused argument {other:?}"))),
            })
            .collect::<Result<Vec<_>>>()?;
        code.push((op, args));
    }
    Ok(Compiled { code, leaves })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_number_steps_from_one() {
        let plan = FusionPlan {
            chains: vec![
                FusedChain::elementwise(vec![1, 2, 3]),
                FusedChain::elementwise(vec![4, 6]),
                FusedChain {
                    steps: vec![7, 8, 9],
                    kind: ChainKind::Reduction { writes_input: true },
                },
                FusedChain {
                    steps: vec![10, 12],
                    kind: ChainKind::Reduction {
                        writes_input: false,
                    },
                },
            ],
            rows: vec![RowSegment {
                steps: vec![14, 15, 16],
                written: vec![14, 16],
            }],
        };
        assert_eq!(
            plan.summary(),
            vec![
                "steps 2-4 fused",
                "steps 5, 7 fused",
                "steps 8-10 fused (reduction 10 in the loop, 9 written)",
                "steps 11, 13 fused (reduction 13 in the loop)",
                "steps 15-17 fused row by row at rows of 32-16384 elements (15, 17 written)"
            ]
        );
        assert_eq!(
            FusionPlan {
                chains: plan.chains[..2].to_vec(),
                ..Default::default()
            }
            .to_string(),
            "steps 2-4 fused; steps 5, 7 fused"
        );
        assert_eq!(
            plan.step_numbers(),
            vec![
                vec![2, 3, 4],
                vec![5, 7],
                vec![8, 9, 10],
                vec![11, 13],
                vec![15, 16, 17]
            ]
        );
        assert_eq!(FusionPlan::default().to_string(), "no fusion");
    }

    #[test]
    fn plans_without_a_kind_read_as_elementwise() {
        let plan: FusionPlan = serde_json::from_str(r#"{"chains": [{"steps": [1, 2]}]}"#).unwrap();
        assert_eq!(plan.chains, vec![FusedChain::elementwise(vec![1, 2])]);
        let r = FusedChain {
            steps: vec![0, 1],
            kind: ChainKind::Reduction { writes_input: true },
        };
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<FusedChain>(&json).unwrap(), r);
    }
}
