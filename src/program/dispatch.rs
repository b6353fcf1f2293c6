//! Dispatch of a program: concrete inputs → symbol values → first admitting specialization
//! → every value's layout.
//!
//! # Why the single-op binder
//! A program's inputs are described exactly like a single-op spec's (sizes that are
//! constants or bare symbols, strides given by a memory format or by expressions over the
//! symbols), so binding reuses the single-op [`Binder`]: a fast path that reads each symbol
//! where it first appears and compares the rest, and a checked path that names the input
//! (``input 1 (`bias`)``) and the size or stride that disagrees. After binding, the layouts
//! are exactly the program's at those values, which is what the guards and the
//! instantiated layouts assume.
//!
//! # The cache
//! As the single-op [`crate::aot::Dispatcher`]: lookups take a read lock and run each
//! specialization's compiled guards in order; a miss traces at the call's values without
//! any lock and appends under the write lock (re-checking first whether a concurrent miss
//! already added an admitting specialization). Every admitting specialization instantiates
//! the same layouts (soundness), so concurrent use gives the results of serial use.
//!
//! # Inputs in other layouts
//! [`ProgramDispatcher::run_with`] also runs inputs whose strides are not the program's
//! (a transposed numpy array for a `contiguous` input): no specialization describes them,
//! so the program is planned for the strides they have (a concrete trace of the program
//! with those strides as constants, its kernel plans and fusion plan). Such plans are
//! cached by the inputs' exact layouts (sizes and strides), up to [`LAYOUT_PLANS_MAX`]
//! of them, and counted apart from the specializations (`layout_hits`, `layout_misses`,
//! `layout_plans` in [`DispatchStats`]): a caller repeating one foreign layout plans it
//! once. An exact key makes a hit sound without guards: the cached plan *is* the fresh
//! concrete trace for those layouts.
//!
//! # Empty inputs
//! An empty input (a size 0) is the program's layout whatever its strides (numpy 2 gives
//! every empty array zero strides); the binder accepts it and the run re-strides it to the
//! layout the specialization describes, see [`crate::aot`]'s binder.

use super::artifact::ProgramArtifact;
use super::fuse::{check_fusion, plan_fusion};
use super::fuse::FusionPlan;
use super::run::{run_inner, run_program_with, RunOptions, RunStats};
use super::spec::{InputStrides, Program};
use super::specialize::{bindings_of, specialize, ProgramSpecialization};
use super::trace::{concrete, concrete_planned, StepPlans, Value};
use crate::aot::{Binder, Coverage, DispatchStats, Dispatched, InputSpec, SizeSpec, StrideSpec};
use crate::kernel::ExecConfig;
use crate::op::AnyTensor;
use crate::sym::Expr;
use crate::{Error, Result};
use smallvec::SmallVec;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// The most plans for inputs in other layouts a dispatcher keeps; beyond it, such inputs
/// are planned on every call (counted as `layout_misses`).
pub const LAYOUT_PLANS_MAX: usize = 64;

/// Every input's `(sizes, strides)`: the key of a plan for inputs in another layout.
type LayoutKey = Vec<(Vec<i64>, Vec<i64>)>;

/// A plan for inputs in another layout than the program's: the program with those
/// strides as constants, and its concrete values, kernel plans and fusion plan there.
#[derive(Debug)]
struct LayoutPlan {
    program: Program,
    values: Vec<Value<i64>>,
    plans: StepPlans<i64>,
    fusion: FusionPlan,
}

/// Symbol values of one call (program symbol order).
pub type ProgramValues = SmallVec<[i64; 8]>;

/// The binder of a program's inputs.
fn binder(p: &Program) -> Result<Binder> {
    let index = |e: &crate::sym::Expr| -> Result<SizeSpec> {
        if let Some(k) = e.as_const() {
            return Ok(SizeSpec::Const(k));
        }
        e.as_symbol()
            .and_then(|s| p.symbols.iter().position(|n| n == s.as_str()))
            .map(SizeSpec::Sym)
            .ok_or_else(|| Error::invalid(format!("size `{e}` is neither a constant nor a symbol")))
    };
    let inputs = p
        .inputs
        .iter()
        .map(|inp| {
            Ok(InputSpec {
                sizes: inp.sizes.iter().map(index).collect::<Result<Vec<_>>>()?,
                strides: match &inp.strides {
                    InputStrides::Layout(f) => StrideSpec::Layout(*f),
                    InputStrides::Exprs(es) => StrideSpec::Exprs(es.clone()),
                },
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let labels = p
        .inputs
        .iter()
        .enumerate()
        .map(|(i, inp)| format!("input {i} (`{}`)", inp.name))
        .collect();
    Binder::from_parts(
        p.symbols.clone(),
        inputs,
        labels,
        format!("program `{}`", p.name),
    )
}

/// A thread-safe specialization cache over one program: the runtime side of a
/// [`ProgramArtifact`].
#[derive(Debug)]
pub struct ProgramDispatcher {
    program: Program,
    binder: Binder,
    cache: RwLock<Vec<Arc<ProgramSpecialization>>>,
    coverage: Option<Coverage>,
    hits: AtomicU64,
    misses: AtomicU64,
    retraces: AtomicU64,
    layout_plans: RwLock<HashMap<LayoutKey, Arc<LayoutPlan>>>,
    layout_hits: AtomicU64,
    layout_misses: AtomicU64,
}

impl ProgramDispatcher {
    /// A dispatcher starting with the artifact's specializations.
    pub fn new(artifact: ProgramArtifact) -> Result<ProgramDispatcher> {
        Ok(ProgramDispatcher {
            binder: binder(&artifact.program)?,
            program: artifact.program,
            cache: RwLock::new(artifact.specializations.into_iter().map(Arc::new).collect()),
            coverage: artifact.coverage,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            retraces: AtomicU64::new(0),
            layout_plans: RwLock::new(HashMap::new()),
            layout_hits: AtomicU64::new(0),
            layout_misses: AtomicU64::new(0),
        })
    }

    /// The program.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// Symbol values (program order) from concrete input layouts `(sizes, strides)`, one
    /// per input in order: each symbol from the sizes (and bare stride symbols) it names,
    /// which must agree; then the layouts must be exactly the program's at those values.
    pub fn bind(&self, inputs: &[(&[i64], &[i64])]) -> Result<ProgramValues> {
        let mut v: ProgramValues = SmallVec::from_elem(-1, self.program.symbols.len());
        self.binder.bind(inputs, &mut v)?;
        Ok(v)
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<Arc<ProgramSpecialization>>> {
        self.cache.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The error of a binding an error specialization admits: the concrete run's own
    /// (PyTorch's message, with the real sizes).
    #[cold]
    fn error_at(&self, values: &[i64]) -> Error {
        match concrete(&self.program, &bindings_of(&self.program.symbols, values)) {
            Err(e) => e,
            Ok(_) => Error::invalid(format!(
                "internal error: an error specialization admits {values:?}, where the program runs"
            )),
        }
    }

    /// Index of the first cached specialization admitting `values`, without counting.
    pub fn lookup(&self, values: &[i64]) -> Result<Option<usize>> {
        for (k, s) in self.read().iter().enumerate() {
            if s.admits(values)? {
                return Ok(Some(k));
            }
        }
        Ok(None)
    }

    /// Every value's layout at symbol values `values` into `out` (no allocation on a hit
    /// when `out` has the specialization's structure): guards checked in order, the first
    /// admitting specialization instantiated; on a miss, a trace at `values` is added.
    pub fn dispatch_values(&self, values: &[i64], out: &mut Vec<Value<i64>>) -> Result<Dispatched> {
        self.dispatch_parts(values, out, None, None)
    }

    /// [`Self::dispatch_values`], also instantiating every step's kernel plan into `plans`
    /// when given (one evaluation of the admitting specialization's program), and copying
    /// the specialization's fusion plan into `fusion` when given.
    #[inline]
    fn dispatch_parts(
        &self,
        values: &[i64],
        out: &mut Vec<Value<i64>>,
        mut plans: Option<&mut StepPlans<i64>>,
        fusion: Option<&mut FusionPlan>,
    ) -> Result<Dispatched> {
        {
            let cache = self.read();
            for (k, s) in cache.iter().enumerate() {
                if s.admits(values)? {
                    if s.error().is_some() {
                        return Err(self.error_at(values));
                    }
                    s.instantiate_parts(values, out, plans.as_deref_mut())?;
                    if let Some(f) = fusion {
                        f.clone_from(&s.fusion);
                    }
                    self.hits.fetch_add(1, Ordering::Relaxed);
                    return Ok(Dispatched {
                        specialization: k,
                        retraced: false,
                    });
                }
            }
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        self.retraces.fetch_add(1, Ordering::Relaxed);
        let fresh = specialize(&self.program, values)?;
        if !fresh.admits(values)? {
            return Err(Error::invalid(format!(
                "internal error: a trace at {values:?} does not admit its own values"
            )));
        }
        let mut cache = self.cache.write().unwrap_or_else(|e| e.into_inner());
        // A concurrent miss may have added an admitting specialization meanwhile.
        let mut found = None;
        for (k, s) in cache.iter().enumerate() {
            if s.admits(values)? {
                found = Some(k);
                break;
            }
        }
        let k = match found {
            Some(k) => k,
            None => {
                cache.push(Arc::new(fresh));
                cache.len() - 1
            }
        };
        if cache[k].error().is_some() {
            drop(cache);
            return Err(self.error_at(values));
        }
        cache[k].instantiate_parts(values, out, plans)?;
        if let Some(f) = fusion {
            f.clone_from(&cache[k].fusion);
        }
        Ok(Dispatched {
            specialization: k,
            retraced: true,
        })
    }

    /// Binds `inputs` and dispatches (see [`Self::bind`], [`Self::dispatch_values`]).
    #[inline]
    pub fn dispatch(
        &self,
        inputs: &[(&[i64], &[i64])],
        out: &mut Vec<Value<i64>>,
    ) -> Result<Dispatched> {
        let n = self.program.symbols.len();
        if n <= 8 {
            let mut v = [-1i64; 8];
            self.binder.bind(inputs, &mut v[..n])?;
            self.dispatch_values(&v[..n], out)
        } else {
            let v = self.bind(inputs)?;
            self.dispatch_values(&v, out)
        }
    }

    /// Executes the program on `inputs` (one tensor per input, in order), fused:
    /// [`Self::run_with`] with [`Fuse::Chains`]. Returns the outputs in `program().outputs` order,
    /// and how the call was served (`None`: planned for inputs in another layout).
    pub fn run(
        &self,
        inputs: Vec<AnyTensor>,
        cfg: &ExecConfig,
    ) -> Result<(Vec<AnyTensor>, Option<Dispatched>)> {
        let r = self.run_with(inputs, cfg, Fuse::Chains)?;
        Ok((r.outputs, r.dispatched))
    }

    /// Executes the program on `inputs` (one tensor per input, in order): bind their
    /// layouts, dispatch (every value's layout and every op's and reduction's kernel plan
    /// from the specialization's one straight-line program; a re-trace on a miss), then run
    /// ([`run_program_with`]): with [`Fuse::Chains`], the specialization's fused chains one pass each
    /// (its [`FusionPlan`], decided at its trace), every other op and reduction from its
    /// stored plan, without planning again; without, every step from its plan. Views alias
    /// their base, dead intermediate buffers are reused. Inputs whose strides are not the
    /// program's run from a plan for their layouts (cached; see the module docs).
    pub fn run_with(
        &self,
        inputs: Vec<AnyTensor>,
        cfg: &ExecConfig,
        fuse: Fuse,
    ) -> Result<ProgramRun> {
        self.run_opts(inputs, cfg, fuse, true)?.ok_or_else(|| {
            Error::invalid("internal error: a run allowed to retrace did not run".to_string())
        })
    }

    /// [`Self::run_with`]; with `retrace == false`, inputs that no cached specialization
    /// admits, or whose strides are not the program's (no specialization describes them),
    /// are `Ok(None)` and nothing is traced, planned or run.
    pub fn run_opts(
        &self,
        inputs: Vec<AnyTensor>,
        cfg: &ExecConfig,
        fuse: Fuse,
        retrace: bool,
    ) -> Result<Option<ProgramRun>> {
        let fuse = fuse == Fuse::Chains;
        let layouts: Vec<(&[i64], &[i64])> =
            inputs.iter().map(|t| (t.sizes(), t.strides())).collect();
        let mut symbols: ProgramValues = SmallVec::from_elem(-1, self.program.symbols.len());
        if let Err(e) = self.binder.bind(&layouts, &mut symbols) {
            // Only a stride that differs from the program's makes another layout; any
            // other binding error is the caller's.
            if self.binder.bind_symbols(&layouts, &mut symbols).is_err() {
                return Err(e);
            }
            if !retrace {
                return Ok(None);
            }
            drop(layouts);
            return self.run_layout_plan(&symbols, inputs, cfg, fuse).map(Some);
        }
        drop(layouts);
        if !retrace && self.lookup(&symbols)?.is_none() {
            return Ok(None);
        }
        let mut values = Vec::new();
        let mut plans = Vec::new();
        let mut fusion = FusionPlan::default();
        let dispatched = self.dispatch_parts(
            &symbols,
            &mut values,
            Some(&mut plans),
            fuse.then_some(&mut fusion),
        )?;
        let inputs = normalize_empty_inputs(inputs, &values)?;
        // The specialization's fusion plan was decided at its trace's binding; its guards
        // do not restrict fusion, so at an admitted binding where a chain is no longer a
        // valid fusion (a size-1 dim that breaks a row segment) the chains are planned from
        // this binding's layouts instead (step plans stay the specialization's).
        // Checked here once (not again by `run_program_with`): the step plans come from the
        // specialization's own instantiation, one per step.
        if fuse && check_fusion(&self.program, &values, &fusion).is_err() {
            fusion = plan_fusion(&self.program, &values);
        }
        let (outputs, stats) = run_inner(
            &self.program,
            &values,
            Some(&plans),
            inputs,
            fuse.then_some(&fusion),
            cfg,
        )?;
        Ok(Some(ProgramRun {
            outputs,
            values,
            dispatched: Some(dispatched),
            layout_plan_cached: None,
            fusion,
            stats,
        }))
    }

    /// Runs inputs whose strides are not the program's (bound to `symbols`) from the plan
    /// for their layouts: the cached one, or a concrete trace of the program with those
    /// strides (cached while fewer than [`LAYOUT_PLANS_MAX`] are).
    fn run_layout_plan(
        &self,
        symbols: &[i64],
        inputs: Vec<AnyTensor>,
        cfg: &ExecConfig,
        fuse: bool,
    ) -> Result<ProgramRun> {
        let key: LayoutKey = inputs
            .iter()
            .map(|t| (t.sizes().to_vec(), t.strides().to_vec()))
            .collect();
        let cached = self
            .layout_plans
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .cloned();
        let (plan, hit) = match cached {
            Some(plan) => {
                self.layout_hits.fetch_add(1, Ordering::Relaxed);
                (plan, true)
            }
            None => {
                self.layout_misses.fetch_add(1, Ordering::Relaxed);
                let mut program = self.program.clone();
                for (input, (_, strides)) in program.inputs.iter_mut().zip(&key) {
                    input.strides =
                        InputStrides::Exprs(strides.iter().map(|&v| Expr::constant(v)).collect());
                }
                let (values, plans) =
                    concrete_planned(&program, &bindings_of(&program.symbols, symbols))?;
                let fusion = plan_fusion(&program, &values);
                let plan = Arc::new(LayoutPlan {
                    program,
                    values,
                    plans,
                    fusion,
                });
                let mut cache = self.layout_plans.write().unwrap_or_else(|e| e.into_inner());
                if cache.len() < LAYOUT_PLANS_MAX {
                    cache.insert(key, plan.clone());
                }
                (plan, false)
            }
        };
        let options = RunOptions {
            plans: Some(&plan.plans),
            fusion: fuse.then_some(&plan.fusion),
        };
        let (outputs, stats) =
            run_program_with(&plan.program, &plan.values, inputs, &options, cfg)?;
        Ok(ProgramRun {
            outputs,
            values: plan.values.clone(),
            dispatched: None,
            layout_plan_cached: Some(hit),
            fusion: if fuse {
                plan.fusion.clone()
            } else {
                FusionPlan::default()
            },
            stats,
        })
    }

    /// The counters.
    pub fn stats(&self) -> DispatchStats {
        DispatchStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            retraces: self.retraces.load(Ordering::Relaxed),
            specializations: self.read().len(),
            layout_hits: self.layout_hits.load(Ordering::Relaxed),
            layout_misses: self.layout_misses.load(Ordering::Relaxed),
            layout_plans: self
                .layout_plans
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .len(),
        }
    }

    /// A cached specialization.
    pub fn specialization(&self, k: usize) -> Option<Arc<ProgramSpecialization>> {
        self.read().get(k).cloned()
    }

    /// The cache as an artifact (e.g. to save the specializations retraced at run time).
    pub fn to_artifact(&self) -> ProgramArtifact {
        ProgramArtifact {
            program: self.program.clone(),
            specializations: self.read().iter().map(|s| (**s).clone()).collect(),
            coverage: self.coverage.clone(),
        }
    }
}

/// How [`ProgramDispatcher::run_with`] executes the steps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fuse {
    /// The specialization's [`FusionPlan`]: its row segments row by row where the rows fit,
    /// its fused chains one pass each, every other step from its stored plan.
    #[default]
    Chains,
    /// Every step on its own from its stored plan (`--no-fuse`, Python's `fuse=False`).
    StepByStep,
}

/// What [`ProgramDispatcher::run_with`] did.
#[derive(Clone, Debug)]
pub struct ProgramRun {
    /// The outputs, in `program().outputs` order.
    pub outputs: Vec<AnyTensor>,
    /// Every value's layout at this call (inputs, then one per step).
    pub values: Vec<Value<i64>>,
    /// How the call was served (specialization, re-traced or not); `None` when the inputs'
    /// strides are not the program's and the run used a plan for their layouts.
    pub dispatched: Option<Dispatched>,
    /// For a run planned for inputs in another layout: whether the plan was cached
    /// (`Some(true)`) or made for this call (`Some(false)`); `None` otherwise.
    pub layout_plan_cached: Option<bool>,
    /// The chains that ran fused (the specialization's plan; empty with
    /// [`Fuse::StepByStep`]).
    pub fusion: FusionPlan,
    /// What was allocated, reused and fused (`fused_steps`).
    pub stats: RunStats,
}

/// Each input's `(sizes, strides)` at `values` (program symbol order), as a caller's
/// tensors would have them.
pub fn input_layouts(p: &Program, values: &[i64]) -> Result<Vec<(Vec<i64>, Vec<i64>)>> {
    let b = bindings_of(&p.symbols, values);
    p.inputs
        .iter()
        .map(|inp| {
            let sizes = inp
                .sizes
                .iter()
                .map(|e| e.eval(&b))
                .collect::<Result<Vec<_>>>()?;
            let strides = match &inp.strides {
                InputStrides::Layout(f) => crate::layout::strides_for_format(&sizes, *f)?,
                InputStrides::Exprs(es) => es.iter().map(|e| e.eval(&b)).collect::<Result<_>>()?,
            };
            Ok((sizes, strides))
        })
        .collect()
}

/// `inputs` with every one whose strides differ from its instantiated value's re-strided
/// to the value's layout (same storage and offset). The binder lets only empty inputs
/// differ ([`crate::aot`]'s `layout_differs`), which address no memory whatever their
/// strides, so the re-strided tensor holds the same (no) elements.
fn normalize_empty_inputs(inputs: Vec<AnyTensor>, values: &[Value<i64>]) -> Result<Vec<AnyTensor>> {
    inputs
        .into_iter()
        .zip(values)
        .map(|(t, v)| {
            if t.strides() == v.strides.as_slice() {
                return Ok(t);
            }
            if !t.sizes().contains(&0) {
                return Err(Error::invalid(format!(
                    "internal error: a non-empty input of strides {:?} was bound to strides {:?}",
                    t.strides(),
                    v.strides
                )));
            }
            t.as_strided(&v.sizes, &v.strides, t.storage_offset())
        })
        .collect()
}

/// The demo program: an attention head split with a per-head bias and a softmax over the
/// last dimension (`x.view(b, s, 3, 16).transpose(1, 2) + bias`, then `amax`, `sub`,
/// `exp`, `sum`, `div`), eight steps over two symbols.
pub const DEMO_PROGRAM_JSON: &str = r#"{"name": "attn_heads_bias_softmax",
 "inputs": [{"name": "x", "sizes": ["b", "s", 48], "layout": "contiguous", "dtype": "float32"},
            {"name": "bias", "sizes": [3, 1, 16], "layout": "contiguous", "dtype": "float32"}],
 "hints": {"b": 2, "s": 5},
 "steps": [{"let": "q",  "op": "view",      "args": ["x", ["b", "s", 3, 16]]},
           {"let": "qt", "op": "transpose", "args": ["q", 1, 2]},
           {"let": "y",  "op": "add",       "args": ["qt", "bias"]},
           {"let": "mx", "op": "amax",      "args": ["y", [-1]], "keepdim": true},
           {"let": "sh", "op": "sub",       "args": ["y", "mx"]},
           {"let": "e",  "op": "exp",       "args": ["sh"]},
           {"let": "z",  "op": "sum",       "args": ["e", [-1]], "keepdim": true},
           {"let": "p",  "op": "div",       "args": ["e", "z"]}],
 "outputs": ["p", "qt"]}"#;

/// Benchmark scenario `compile_program`: one compile (parse + trace at the hints + guard
/// and value-program compilation) of [`DEMO_PROGRAM_JSON`].
pub fn compile_demo_program() -> Result<ProgramArtifact> {
    ProgramArtifact::compile(&Program::from_json(DEMO_PROGRAM_JSON)?)
}

/// Benchmark scenario `dispatch_cached_program`: a dispatcher over the compiled demo
/// program and the input layouts of one call (`b = 4, s = 128`), so that
/// [`ProgramDispatch::run`] measures binding, the guard check and the instantiation of
/// every value of a cache hit, without any kernel.
#[derive(Debug)]
pub struct ProgramDispatch {
    /// The dispatcher.
    pub dispatcher: ProgramDispatcher,
    /// Input layouts `(sizes, strides)`.
    pub inputs: Vec<(Vec<i64>, Vec<i64>)>,
    /// The values instantiated into (reused across calls).
    pub values: Vec<Value<i64>>,
}

impl ProgramDispatch {
    /// Compiles the demo program and prepares one call's inputs.
    pub fn new() -> Result<ProgramDispatch> {
        let artifact = compile_demo_program()?;
        let inputs = input_layouts(&artifact.program, &[4, 128])?;
        let mut s = ProgramDispatch {
            dispatcher: ProgramDispatcher::new(artifact)?,
            inputs,
            values: Vec::new(),
        };
        s.run()?;
        Ok(s)
    }

    /// One dispatch (bind + guards + instantiate every value); returns the specialization
    /// index.
    #[inline]
    pub fn run(&mut self) -> Result<usize> {
        let a = (&self.inputs[0].0[..], &self.inputs[0].1[..]);
        let b = (&self.inputs[1].0[..], &self.inputs[1].1[..]);
        Ok(self
            .dispatcher
            .dispatch(&[a, b], &mut self.values)?
            .specialization)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::HEADS;

    fn layouts(l: &[(Vec<i64>, Vec<i64>)]) -> Vec<(&[i64], &[i64])> {
        l.iter().map(|(a, b)| (&a[..], &b[..])).collect()
    }

    #[test]
    fn binds_dispatches_and_retraces() {
        let p = Program::from_json(HEADS).unwrap();
        let d = ProgramDispatcher::new(ProgramArtifact::compile(&p).unwrap()).unwrap();
        let mut out = Vec::new();
        for vals in [[2, 5], [3, 7], [1, 1], [0, 4], [5, 0], [2, 5]] {
            let l = input_layouts(&p, &vals).unwrap();
            assert_eq!(&d.bind(&layouts(&l)).unwrap()[..], &vals);
            d.dispatch(&layouts(&l), &mut out).unwrap();
            assert_eq!(out, concrete(&p, &bindings_of(&p.symbols, &vals)).unwrap());
        }
        let st = d.stats();
        assert_eq!(st.hits + st.misses, 6);
        assert!(st.misses >= 1 && st.specializations == 1 + st.retraces as usize);
    }

    #[test]
    fn demo_program_dispatches_without_misses() {
        let mut d = ProgramDispatch::new().unwrap();
        assert_eq!(d.run().unwrap(), 0);
        let st = d.dispatcher.stats();
        assert_eq!((st.misses, st.specializations), (0, 1));
        let p = d.dispatcher.program().clone();
        assert_eq!(
            d.values,
            concrete(&p, &bindings_of(&p.symbols, &[4, 128])).unwrap()
        );
    }

    #[test]
    fn binding_errors_name_the_input() {
        let p = Program::from_json(HEADS).unwrap();
        let d = ProgramDispatcher::new(ProgramArtifact::compile(&p).unwrap()).unwrap();
        let x = (vec![2, 5, 64], vec![320, 64, 1]);
        let bad_bias = (vec![4, 2, 16], vec![32, 16, 1]);
        let e = d
            .bind(&[(&x.0, &x.1), (&bad_bias.0, &bad_bias.1)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("input 1 (`bias`)"), "{e}");
        let bad_x = (vec![2, 5, 64], vec![64, 128, 1]);
        let bias = (vec![4, 1, 16], vec![16, 16, 1]);
        let e = d
            .bind(&[(&bad_x.0, &bad_x.1), (&bias.0, &bias.1)])
            .unwrap_err()
            .to_string();
        assert!(e.contains("input 0 (`x`)"), "{e}");
        let e = d.bind(&[(&x.0, &x.1)]).unwrap_err().to_string();
        assert!(e.contains("takes 2 inputs"), "{e}");
    }
}
