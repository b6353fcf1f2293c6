//! One trace of a whole program, written once over [`Int`].
//!
//! [`run_steps`] walks the steps with the generic layers: views through [`View`], ops through
//! [`op::plan_op`] (the TensorIterator build with dtypes), reductions through
//! [`reduction_meta`], copies through the layout functions. At `i64` it is the concrete
//! (eager) answer; at [`SymInt`] in one [`ShapeEnv`] it is the symbolic trace, whose guards
//! each name the step that asked ([`trace`]).

use super::spec::{InputStrides, Program, StepArg, StepOp};
use super::stepplan::StepPlan;
use crate::iter::TensorSpec;
use crate::layout::{self, MemoryFormat};
use crate::op::{self, Arg, Dest};
use crate::reduce::{reduction_meta, Dims};
use crate::sym::{
    Bindings, BoolExpr, Expr, Guard, GuardSet, ShapeEnv, SymInt, Symbol, SymbolSpec,
};
use crate::tensor::Scalar;
use crate::view::{SqueezeDims, View};
use crate::{Bool, DType, Error, Int, Result};

/// One value of a program: a layout over a storage, and its dtype.
#[derive(Clone, Debug, PartialEq)]
pub struct Value<I> {
    /// Sizes.
    pub sizes: Vec<I>,
    /// Strides (elements).
    pub strides: Vec<I>,
    /// Storage offset (elements).
    pub offset: I,
    /// Element type.
    pub dtype: DType,
    /// The value that allocated the storage this value lives in (itself when it allocated).
    pub storage: usize,
    /// Elements of that storage.
    pub storage_numel: I,
}

impl<I: Int> Value<I> {
    /// Whether this value is a view of another value's storage.
    pub fn aliases(&self, me: usize) -> Option<usize> {
        (self.storage != me).then_some(self.storage)
    }

    pub(crate) fn spec(&self, me: usize) -> TensorSpec<I> {
        TensorSpec::typed(self.sizes.clone(), self.strides.clone(), self.dtype)
            .with_offset(self.offset.clone())
            .with_storage(
                self.storage as u64,
                self.storage_numel.clone() * I::from_i64(self.dtype.element_size() as i64),
            )
            .with_tensor_id(me as u64)
    }

    fn allocated(sizes: Vec<I>, strides: Vec<I>, dtype: DType, me: usize) -> Value<I> {
        let numel = layout::numel(&sizes);
        Value {
            sizes,
            strides,
            offset: I::from_i64(0),
            dtype,
            storage: me,
            storage_numel: numel,
        }
    }

    fn view(&self, v: View<I>) -> Value<I> {
        let (sizes, strides, offset) = v.into_parts();
        Value {
            sizes,
            strides,
            offset,
            dtype: self.dtype,
            storage: self.storage,
            storage_numel: self.storage_numel.clone(),
        }
    }
}

/// Prefixes an error's message with the step's label (the variant, hence the golden
/// category, is kept).
pub(crate) fn in_step(e: Error, label: &str) -> Error {
    let pre = |m: String| format!("{label}: {m}");
    match e {
        Error::Index { message } => Error::Index {
            message: pre(message),
        },
        Error::Shape { message } => Error::Shape {
            message: pre(message),
        },
        Error::View { message } => Error::View {
            message: pre(message),
        },
        Error::Expand { message } => Error::Expand {
            message: pre(message),
        },
        Error::DType { message } => Error::DType {
            message: pre(message),
        },
        Error::Invalid { message } => Error::Invalid {
            message: pre(message),
        },
        Error::MemoryOverlap { message } => Error::MemoryOverlap {
            message: pre(message),
        },
        Error::Argument { message } => Error::Argument {
            message: pre(message),
        },
        other => other,
    }
}

fn konst(e: &Expr, what: &str) -> Result<i64> {
    e.as_const()
        .ok_or_else(|| Error::invalid(format!("{what} must be an integer, not `{e}`")))
}

/// The program's inputs in the engine's integers.
fn inputs<I: Int>(p: &Program, lift: &dyn Fn(&Expr) -> Result<I>) -> Result<Vec<Value<I>>> {
    p.inputs
        .iter()
        .enumerate()
        .map(|(k, inp)| {
            let sizes = inp.sizes.iter().map(lift).collect::<Result<Vec<I>>>()?;
            layout::check_sizes(&inp.name, &sizes)?;
            let (strides, storage_numel) = match &inp.strides {
                InputStrides::Layout(f) => (
                    layout::strides_for_format(&sizes, *f)?,
                    layout::numel(&sizes),
                ),
                InputStrides::Exprs(es) => {
                    let strides = es.iter().map(lift).collect::<Result<Vec<I>>>()?;
                    layout::check_layout(&inp.name, &sizes, &strides)?;
                    // The last element addressed plus one (size-0 dims count as size 1).
                    let one = I::from_i64(1);
                    let extent = sizes.iter().zip(&strides).fold(one.clone(), |acc, (z, s)| {
                        acc + (z.max(&one) - one.clone()) * s.clone()
                    });
                    (strides, extent)
                }
            };
            Ok(Value {
                sizes,
                strides,
                offset: I::from_i64(0),
                dtype: inp.dtype,
                storage: k,
                storage_numel,
            })
        })
        .collect()
}

fn int<I: Int>(a: &StepArg, lift: &dyn Fn(&Expr) -> Result<I>) -> Result<I> {
    match a {
        StepArg::Int(e) => lift(e),
        other => Err(Error::invalid(format!(
            "expected an integer, got {other:?}"
        ))),
    }
}

fn opt_int<I: Int>(a: &StepArg, lift: &dyn Fn(&Expr) -> Result<I>) -> Result<Option<I>> {
    match a {
        StepArg::Null => Ok(None),
        other => int(other, lift).map(Some),
    }
}

fn ints<I: Int>(a: &StepArg, lift: &dyn Fn(&Expr) -> Result<I>) -> Result<Vec<I>> {
    match a {
        StepArg::Ints(es) => es.iter().map(lift).collect(),
        other => Err(Error::invalid(format!(
            "expected a list of integers, got {other:?}"
        ))),
    }
}

fn cint(a: &StepArg, what: &str) -> Result<i64> {
    match a {
        StepArg::Int(e) => konst(e, what),
        other => Err(Error::invalid(format!(
            "{what}: expected an integer, got {other:?}"
        ))),
    }
}

fn cints(a: &StepArg, what: &str) -> Result<Vec<i64>> {
    match a {
        StepArg::Ints(es) => es.iter().map(|e| konst(e, what)).collect(),
        other => Err(Error::invalid(format!(
            "{what}: expected a list of integers, got {other:?}"
        ))),
    }
}

/// A view step (`x` is the tensor argument).
fn view_step<I: Int>(
    name: &str,
    x: &Value<I>,
    a: &[StepArg],
    lift: &dyn Fn(&Expr) -> Result<I>,
    me: usize,
) -> Result<Value<I>> {
    let v = View::new(x.sizes.clone(), x.strides.clone(), x.offset.clone())?;
    let reshaped = |r: crate::view::Reshaped<I>| {
        if r.copied {
            let (sizes, strides, _) = r.view.into_parts();
            Value::allocated(sizes, strides, x.dtype, me)
        } else {
            x.view(r.view)
        }
    };
    let out = match name {
        "permute" => v.permute(&cints(&a[0], "permute dims")?)?,
        "transpose" => v.transpose(cint(&a[0], "dim0")?, cint(&a[1], "dim1")?)?,
        "t" => v.t()?,
        "expand" => v.expand(&ints(&a[0], lift)?)?,
        "slice" => v.slice(
            cint(&a[0], "dim")?,
            opt_int(&a[1], lift)?,
            opt_int(&a[2], lift)?,
            cint(&a[3], "step")?,
        )?,
        "narrow" => v.narrow(cint(&a[0], "dim")?, int(&a[1], lift)?, int(&a[2], lift)?)?,
        "select" => v.select(cint(&a[0], "dim")?, int(&a[1], lift)?)?,
        "unsqueeze" => v.unsqueeze(cint(&a[0], "dim")?)?,
        "squeeze" => v.squeeze(&match &a[0] {
            StepArg::Null => SqueezeDims::All,
            StepArg::Ints(_) => SqueezeDims::Many(cints(&a[0], "squeeze dims")?),
            other => SqueezeDims::One(cint(other, "squeeze dim")?),
        })?,
        "flatten" => {
            return Ok(reshaped(
                v.flatten(cint(&a[0], "start")?, cint(&a[1], "end")?)?,
            ))
        }
        "unflatten" => v.unflatten(cint(&a[0], "dim")?, &ints(&a[1], lift)?)?,
        "movedim" => v.movedim(cint(&a[0], "source")?, cint(&a[1], "destination")?)?,
        "view" => v.view(&ints(&a[0], lift)?)?,
        "reshape" => return Ok(reshaped(v.reshape(&ints(&a[0], lift)?)?)),
        "as_strided" => v.as_strided(
            ints(&a[0], lift)?,
            ints(&a[1], lift)?,
            int(&a[2], lift)?,
            &x.storage_numel,
        )?,
        "diagonal" => v.diagonal(
            cint(&a[0], "offset")?,
            cint(&a[1], "dim1")?,
            cint(&a[2], "dim2")?,
        )?,
        "unfold" => v.unfold(cint(&a[0], "dim")?, int(&a[1], lift)?, cint(&a[2], "step")?)?,
        other => return Err(Error::invalid(format!("unknown view op `{other}`"))),
    };
    Ok(x.view(out))
}

/// Whether `x` is contiguous in `format` (PyTorch's `is_contiguous(memory_format)`).
fn is_contiguous_as<I: Int>(x: &Value<I>, format: MemoryFormat) -> Result<bool> {
    layout::is_contiguous_in(&x.sizes, &x.strides, format)
}

/// Strides of a new tensor of `x`'s sizes in `format` (`Preserve`: `empty_like`'s).
fn strides_like<I: Int>(x: &Value<I>, format: MemoryFormat) -> Result<Vec<I>> {
    match format {
        MemoryFormat::Preserve => layout::empty_like_strides(&x.sizes, &x.strides),
        f => layout::strides_for_format(&x.sizes, f),
    }
}

/// One step: the value it defines (`me` is its value index) and, for an op or a
/// reduction, the kernel plan the build made for it.
fn step<I: Int>(
    p: &Program,
    k: usize,
    vals: &[Value<I>],
    lift: &dyn Fn(&Expr) -> Result<I>,
) -> Result<(Value<I>, Option<StepPlan<I>>)> {
    let st = &p.steps[k];
    let me = p.inputs.len() + k;
    let value = |a: &StepArg| -> Result<&Value<I>> {
        match a {
            StepArg::Value(i) => Ok(&vals[*i]),
            other => Err(Error::invalid(format!("expected a value, got {other:?}"))),
        }
    };
    match &st.op {
        StepOp::View(name) => {
            view_step(name, value(&st.args[0])?, &st.args[1..], lift, me).map(|v| (v, None))
        }
        StepOp::Op(op) => {
            // A size passed as a Python number is planned at its value (the hint, in a
            // symbolic trace): layouts and dtypes never depend on it; where a check reads it
            // (`pow` of an integer tensor, `clamp` of an `int32` one), it is guarded equal to
            // that value below, as PyTorch's `guard_int` specializes it.
            let mut sym_numbers: Vec<(usize, &Expr, I, i64)> = Vec::new();
            let args = st
                .args
                .iter()
                .enumerate()
                .map(|(j, a)| match a {
                    StepArg::Value(i) => Ok(Arg::Tensor(vals[*i].spec(*i))),
                    StepArg::Number(s) => Ok(Arg::Scalar(*s)),
                    StepArg::SymNumber(e) => {
                        let v = lift(e)?;
                        let h = v.hint().ok_or_else(|| {
                            Error::invalid(format!("the Python number `{e}` has no value"))
                        })?;
                        sym_numbers.push((j, e, v, h));
                        Ok(Arg::Scalar(Scalar::Int(h)))
                    }
                    other => Err(Error::invalid(format!(
                        "expected a value or a number, got {other:?}"
                    ))),
                })
                .collect::<Result<Vec<_>>>()?;
            let (plan, read) = op::plan_op_reads(*op, &args, &Dest::New);
            for (j, e, v, h) in sym_numbers {
                if read.contains(&j) {
                    v.sym_eq(&I::from_i64(h)).guard(|| {
                        format!(
                            "{op} reads the value of its Python number `{e}` (argument {j}): \
                             specialized to {h}"
                        )
                    })?;
                }
            }
            let plan = plan?;
            let v = Value::allocated(
                plan.out_sizes().to_vec(),
                plan.out_strides().to_vec(),
                plan.out_dtype,
                me,
            );
            Ok((v, Some(StepPlan::Op(plan))))
        }
        StepOp::Reduce(op) => {
            let x = value(&st.args[0])?;
            let dims = match st.args.get(1) {
                None | Some(StepArg::Null) => Dims::All,
                Some(StepArg::Int(e)) => Dims::One(konst(e, "dim")?),
                Some(a) => Dims::List(cints(a, "dim")?),
            };
            let input = TensorSpec::new(x.sizes.clone(), x.strides.clone(), x.dtype.element_size())
                .with_offset(x.offset.clone());
            let m = reduction_meta(*op, &input, x.dtype, &dims, st.keepdim)?;
            Ok((
                Value::allocated(m.sizes, m.strides, m.dtype, me),
                Some(StepPlan::Reduce(m.plan)),
            ))
        }
        StepOp::Contiguous => {
            let x = value(&st.args[0])?;
            let f = st.memory_format;
            let rank = match f {
                MemoryFormat::ChannelsLast => Some(4),
                MemoryFormat::ChannelsLast3d => Some(5),
                _ => None,
            };
            if let Some(r) = rank.filter(|r| *r != x.sizes.len()) {
                return Err(Error::invalid(format!(
                    "required rank {r} tensor to use {} format",
                    f.name()
                )));
            }
            if is_contiguous_as(x, f)? {
                Ok((x.clone(), None))
            } else {
                Ok((
                    Value::allocated(x.sizes.clone(), strides_like(x, f)?, x.dtype, me),
                    None,
                ))
            }
        }
        StepOp::Clone => {
            let x = value(&st.args[0])?;
            let strides = strides_like(x, st.memory_format)?;
            Ok((
                Value::allocated(x.sizes.clone(), strides, x.dtype, me),
                None,
            ))
        }
        StepOp::To => {
            let x = value(&st.args[0])?;
            let d = st
                .dtype
                .ok_or_else(|| Error::invalid("`to` without a dtype"))?;
            if d == x.dtype {
                return Ok((x.clone(), None));
            }
            let strides = strides_like(x, MemoryFormat::Preserve)?;
            Ok((Value::allocated(x.sizes.clone(), strides, d, me), None))
        }
        StepOp::Structured(_) => {
            let call = structured_call(st, vals, lift)?;
            let mut outs = crate::structured::meta(&call)?;
            let k = match st.part {
                Some((k, n)) => {
                    if outs.len() != n {
                        return Err(Error::argument(if outs.len() > n {
                            format!("too many values to unpack (expected {n})")
                        } else {
                            format!("not enough values to unpack (expected {n}, got {})", outs.len())
                        }));
                    }
                    k
                }
                None => 0,
            };
            if k >= outs.len() {
                return Err(Error::invalid(format!("internal: result {k} of {}", outs.len())));
            }
            let o = outs.swap_remove(k);
            Ok(match o.view_offset {
                Some(offset) => {
                    let x = value(&st.args[0])?;
                    let v = Value {
                        sizes: o.sizes,
                        strides: o.strides,
                        offset,
                        dtype: o.dtype,
                        storage: x.storage,
                        storage_numel: x.storage_numel.clone(),
                    };
                    (v, None)
                }
                None => (Value::allocated(o.sizes, o.strides, o.dtype, me), None),
            })
        }
    }
}

/// The call of a structured step over `I`: its tensors from the values, its keywords'
/// expressions lifted (the trace's symbols, or a binding's values).
pub(crate) fn structured_call<I: Int>(
    st: &super::spec::Step,
    vals: &[Value<I>],
    lift: &dyn Fn(&Expr) -> Result<I>,
) -> Result<crate::structured::Call<I>> {
    use super::spec::StepKw;
    use crate::structured::{Call, Kw, SArg};
    let StepOp::Structured(sop) = st.op else {
        return Err(Error::invalid("internal: not a structured step"));
    };
    let inputs = st
        .args
        .iter()
        .map(|a| match a {
            StepArg::Value(i) => Ok(SArg::Tensor(vals[*i].spec(*i))),
            StepArg::Values(is) => Ok(SArg::List(is.iter().map(|i| vals[*i].spec(*i)).collect())),
            StepArg::Null => Ok(SArg::Absent),
            other => Err(Error::invalid(format!("bad structured argument {other:?}"))),
        })
        .collect::<Result<Vec<_>>>()?;
    let def = sop.def();
    let mut kwarg = |name: &str| -> Result<Option<Kw<I>>> {
        let i = def
            .keywords
            .iter()
            .position(|k| k.name == name)
            .ok_or_else(|| Error::invalid(format!("internal: {sop} has no keyword `{name}`")))?;
        Ok(match st.kwargs.get(i) {
            None | Some(StepKw::Default) => None,
            Some(StepKw::Int(e)) => Some(Kw::Int(lift(e)?)),
            Some(StepKw::Ints(es)) => Some(Kw::Ints(es.iter().map(lift).collect::<Result<_>>()?)),
            Some(StepKw::Float(f)) => Some(Kw::Float(*f)),
            Some(StepKw::Bool(b)) => Some(Kw::Bool(*b)),
            Some(StepKw::Null) => Some(Kw::Null),
            Some(StepKw::Name(n)) => Some(Kw::Name(n.clone())),
        })
    };
    Call::new(sop, inputs, &mut kwarg)
}

/// Runs every step over `I`; `after_step(k)` is called once step `k` has run. Returns the
/// values (inputs, then one per step). An error names its step.
pub fn run_steps<I: Int>(
    p: &Program,
    lift: &dyn Fn(&Expr) -> Result<I>,
    after_step: impl FnMut(usize),
) -> Result<Vec<Value<I>>> {
    run_steps_planned(p, lift, after_step).map(|(vals, _)| vals)
}

/// Per step: the kernel plan of an op or a reduction (`None` for views and copies).
pub type StepPlans<I> = Vec<Option<StepPlan<I>>>;

/// [`run_steps`], also returning each step's kernel plan.
pub fn run_steps_planned<I: Int>(
    p: &Program,
    lift: &dyn Fn(&Expr) -> Result<I>,
    mut after_step: impl FnMut(usize),
) -> Result<(Vec<Value<I>>, StepPlans<I>)> {
    let mut vals = inputs(p, lift)?;
    let mut plans = Vec::with_capacity(p.steps.len());
    for k in 0..p.steps.len() {
        let (v, plan) = step(p, k, &vals, lift).map_err(|e| in_step(e, &p.steps[k].label))?;
        vals.push(v);
        plans.push(plan);
        after_step(k);
    }
    Ok((vals, plans))
}

/// The inputs' concrete layouts at `b`, validated (sizes and strides non-negative, extents
/// representable): whether `b` describes real tensors.
pub(crate) fn concrete_inputs(p: &Program, b: &Bindings) -> Result<Vec<Value<i64>>> {
    inputs(p, &|e: &Expr| e.eval(b))
}

/// The concrete (eager) values' layouts at `b`.
pub fn concrete(p: &Program, b: &Bindings) -> Result<Vec<Value<i64>>> {
    run_steps(p, &|e: &Expr| e.eval(b), |_| {})
}

/// The concrete values' layouts at `b` and each step's kernel plan: what a specialization's
/// instantiated plans must equal.
pub fn concrete_planned(p: &Program, b: &Bindings) -> Result<(Vec<Value<i64>>, StepPlans<i64>)> {
    run_steps_planned(p, &|e: &Expr| e.eval(b), |_| {})
}

/// A symbolic trace: the values as expressions over the symbols and the guards under which
/// they hold.
#[derive(Clone, Debug)]
pub struct ProgramTrace {
    /// The traced values (inputs, then one per step); `Err` when the trace stopped at a step
    /// (the error of every binding the guards admit).
    pub values: std::result::Result<Vec<Value<Expr>>, Error>,
    /// Per step, the kernel plan of an op or a reduction as expressions (empty when the
    /// trace stopped at a step).
    pub plans: StepPlans<Expr>,
    /// The guards: symbol ranges first, then the recorded ones, each reason naming its step.
    pub guards: GuardSet,
    /// Per step, the plan conditions of its kernel plan (empty when the trace stopped at a
    /// step): decisions that only chose how the kernel iterates (TensorIterator's
    /// dimension merging, the iteration order over a reduction's output), decided at the
    /// trace point and not guards ([`ShapeEnv::record_plan_conditions`]). Where the guards
    /// and a step's plan conditions hold, its plan is the fresh build's; where only the
    /// guards hold, the values are still right and the step is planned from the concrete
    /// layouts at run time.
    pub plan_conditions: PlanConditions,
}

/// Per step, the conditions under which its traced kernel plan is the fresh build's (see
/// [`ProgramTrace::plan_conditions`]).
pub type PlanConditions = Vec<Vec<Guard>>;

fn map_value(v: Value<SymInt>) -> Value<Expr> {
    let e = |x: &SymInt| x.expr().clone();
    Value {
        sizes: v.sizes.iter().map(e).collect(),
        strides: v.strides.iter().map(e).collect(),
        offset: e(&v.offset),
        dtype: v.dtype,
        storage: v.storage,
        storage_numel: e(&v.storage_numel),
    }
}

/// Traces `p` once at `hints` (one symbol per name, range `>= 1` when its hint is positive).
///
/// A symbol whose hint is 0 is specialized, as PyTorch specializes size 0: it enters the
/// trace as the constant 0 under a guard `s == 0`. (Left symbolic with range `>= 0`, every
/// layout rule that treats size 0 apart — `max(size, 1)` in contiguous strides, the empty
/// tensor's trivial contiguity — would record a guard over `Max(s, 1)` terms that only
/// describe the zero class, and a cover would need a trace per such term.)
pub fn trace(p: &Program, hints: &Bindings) -> Result<ProgramTrace> {
    let env = ShapeEnv::default();
    env.record_plan_conditions();
    let mut guards = Vec::new();
    let mut zeros: Vec<Symbol> = Vec::new();
    for s in &p.symbols {
        let h = hints
            .get(s)
            .ok_or_else(|| Error::symbol(format!("no hint for symbol `{s}`")))?;
        if h < 0 {
            return Err(Error::symbol(format!(
                "symbol `{s}` = {h}: sizes are non-negative"
            )));
        }
        if h == 0 {
            zeros.push(Symbol::new(s));
            guards.push(Guard {
                cond: BoolExpr::eq(&Expr::symbol(s), &Expr::constant(0)),
                reason: format!("symbol range: `{s}` was traced as a size of 0 (specialized)"),
            });
            continue;
        }
        let min = 1;
        env.create_symbol(
            s,
            h,
            SymbolSpec {
                min,
                ..SymbolSpec::default()
            },
        )?;
        guards.push(Guard {
            cond: BoolExpr::ge(&Expr::symbol(s), &Expr::constant(min)),
            reason: format!("symbol range: `{s}` was traced as a size >= 1"),
        });
    }
    let n_range = guards.len();
    // Which step recorded each guard (by condition; the environment prunes and dedups).
    let mut asked: Vec<(BoolExpr, usize)> = Vec::new();
    let zero = |s: &Symbol| zeros.contains(s).then(|| Expr::constant(0));
    let lift = |e: &Expr| -> Result<SymInt> {
        let e = if zeros.is_empty() {
            e.clone()
        } else {
            e.substitute(&zero)
        };
        // An expression of the program that overflows at the trace point (`n**30` at
        // `n = 5`) fails the concrete run there; the trace fails the same way (an overflow
        // is no error specialization: no guard describes where it happens) instead of
        // going on with a value that has no hint, which gave an error specialization
        // whose own trace point fails otherwise: an artifact its loader rejected.
        if let Err(err @ Error::Overflow { .. }) = e.eval(&env.hints()) {
            return Err(err);
        }
        Ok(SymInt::from_expr(e, &env))
    };
    let mut conditions: PlanConditions = Vec::new();
    let traced = run_steps_planned(p, &lift, |k| {
        for g in env.guards() {
            if !asked.iter().any(|(c, _)| *c == g.cond) {
                asked.push((g.cond, k));
            }
        }
        let label = &p.steps[k].label;
        conditions.push(
            env.take_plan_conditions()
                .into_iter()
                .map(|g| Guard {
                    cond: g.cond,
                    reason: format!("{label}: {}", g.reason),
                })
                .collect(),
        );
    });
    let failed_at = p.steps.len();
    for g in env.guards() {
        let k = asked
            .iter()
            .find(|(c, _)| *c == g.cond)
            .map_or(failed_at, |(_, k)| *k);
        let label = p
            .steps
            .get(k)
            .map_or("the failing step", |s| s.label.as_str());
        guards.push(Guard {
            cond: g.cond,
            reason: format!("{label}: {}", g.reason),
        });
    }
    // The single-op traces' simplification (`aot::simplify_guards`): implied guards
    // dropped, each guard weakened where the others allow, comparisons of one symbol
    // merged (`s >= 1` with `s != 1` is `s >= 2`, with `s <= 1` it is `s == 1`).
    let at: Vec<i64> = p
        .symbols
        .iter()
        .map(|s| hints.get(s).unwrap_or(0))
        .collect();
    let mins: Vec<i64> = at.iter().map(|&v| i64::from(v > 0)).collect();
    let guards = crate::aot::simplify_guards(&p.symbols, &at, &mins, guards, n_range);
    let mut plans = Vec::new();
    let values = match traced {
        Ok((vs, ps)) => {
            plans = ps
                .iter()
                .map(|o| {
                    o.as_ref()
                        .map(|sp| sp.try_map(|x| Ok::<_, Error>(x.expr().clone())))
                        .transpose()
                })
                .collect::<Result<_>>()?;
            Ok(vs.into_iter().map(map_value).collect())
        }
        Err(e @ (Error::Overflow { .. } | Error::Limit { .. } | Error::Symbol { .. })) => {
            return Err(e)
        }
        Err(e) => Err(e),
    };
    if values.is_err() {
        conditions.clear();
    }
    Ok(ProgramTrace {
        values,
        plans,
        guards: GuardSet::from(guards),
        plan_conditions: conditions,
    })
}

impl ProgramTrace {
    /// Whether the guards admit `b`: every guard evaluates to true. A guard that cannot be
    /// evaluated at `b` (a division by a size that is 0 there) does not admit it.
    pub fn admits(&self, b: &Bindings) -> Result<bool> {
        for g in &self.guards.guards {
            match g.cond.eval(b) {
                Ok(true) => {}
                Ok(false) | Err(Error::DivisionByZero { .. }) => return Ok(false),
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// The traced values instantiated at `b` (the caller checks [`Self::admits`]).
    pub fn instantiate(&self, b: &Bindings) -> Result<Vec<Value<i64>>> {
        let vals = self.values.as_ref().map_err(Clone::clone)?;
        vals.iter()
            .map(|v| {
                let e = |xs: &[Expr]| xs.iter().map(|x| x.eval(b)).collect::<Result<Vec<_>>>();
                Ok(Value {
                    sizes: e(&v.sizes)?,
                    strides: e(&v.strides)?,
                    offset: v.offset.eval(b)?,
                    dtype: v.dtype,
                    storage: v.storage,
                    storage_numel: v.storage_numel.eval(b)?,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::program::HEADS;

    #[test]
    fn pruning_and_merging_keep_the_conjunction() {
        let g = |c: &str| Guard {
            cond: BoolExpr::parse(c).unwrap(),
            reason: c.to_string(),
        };
        let syms = vec!["a".to_string(), "b".to_string()];
        let before = vec![
            g("a >= 1"),
            g("b >= 1"),
            g("a != 1"),
            g("b >= 3"),
            g("a*b != 1"),
        ];
        let n_range = 2;
        let after =
            crate::aot::simplify_guards(&syms, &[3, 4], &[1, 1], before.clone(), n_range);
        assert!(after.len() < before.len(), "{after:?}");
        let (gb, ga) = (GuardSet::from(before), GuardSet::from(after));
        for a in 0..8 {
            for b in 0..8 {
                let bind = Bindings::from_pairs([("a", a), ("b", b)]);
                assert_eq!(
                    gb.eval(&bind).unwrap().is_pass(),
                    ga.eval(&bind).unwrap().is_pass(),
                    "a={a} b={b}"
                );
            }
        }
    }

    #[test]
    fn copies_follow_pytorch_and_aliases_are_kept() {
        let p = Program::from_json(
            r#"{"inputs": [{"name": "x", "sizes": ["n", 3], "layout": "contiguous"}],
                "hints": {"n": 2},
                "steps": [{"let": "t", "op": "transpose", "args": ["x", 0, 1]},
                          {"let": "c1", "op": "clone", "args": ["t"]},
                          {"let": "c2", "op": "contiguous", "args": ["t"]},
                          {"let": "c3", "op": "contiguous", "args": ["x"]},
                          {"let": "f", "op": "to", "args": ["t"], "dtype": "float32"},
                          {"let": "i", "op": "to", "args": ["t"], "dtype": "int64"},
                          {"let": "nw", "op": "narrow", "args": ["x", 1, 0, 2]},
                          {"let": "c4", "op": "clone", "args": ["nw"]},
                          {"let": "c5", "op": "clone", "args": ["t"], "memory_format": "contiguous"}],
                "outputs": ["c1"]}"#,
        )
        .unwrap();
        let v = concrete(&p, &p.hint_bindings()).unwrap();
        let layout = |k: usize| (v[k].strides.clone(), v[k].dtype, v[k].aliases(k));
        assert_eq!(layout(2), (vec![1, 3], DType::F32, None)); // clone keeps dense strides
        assert_eq!(layout(3), (vec![2, 1], DType::F32, None)); // contiguous copies
        assert_eq!(layout(4), (vec![3, 1], DType::F32, Some(0))); // already contiguous: self
        assert_eq!(layout(5), (vec![1, 3], DType::F32, Some(0))); // same dtype: self
        assert_eq!(layout(6), (vec![1, 3], DType::I64, None));
        assert_eq!(layout(8), (vec![2, 1], DType::F32, None)); // not dense: dense strides
        assert_eq!(layout(9), (vec![2, 1], DType::F32, None));
        // The symbolic trace agrees at other bindings its guards admit.
        let t = trace(&p, &p.hint_bindings()).unwrap();
        for n in 0..6 {
            let b = Bindings::from_pairs([("n", n)]);
            if t.admits(&b).unwrap() {
                assert_eq!(t.instantiate(&b).unwrap(), concrete(&p, &b).unwrap());
            }
        }
    }

    /// A size passed as a Python number stays symbolic where no check reads its value
    /// (`div` of a float tensor, `clamp` of an `int64` one); where one does (`pow` of an
    /// integer tensor refuses negative powers, `clamp` of an `int32` tensor checks its bound's
    /// range), the trace guards it equal to its value, so no binding of another outcome is
    /// admitted. Every admitted binding's layouts are a fresh concrete run's.
    #[test]
    fn sizes_as_python_numbers_are_guarded_where_a_check_reads_them() {
        let prog = |dtype: &str, step: &str| {
            Program::from_json(&format!(
                r#"{{"inputs": [{{"name": "x", "sizes": ["n", 3], "layout": "contiguous", "dtype": "{dtype}"}}],
                    "hints": {{"n": 5}},
                    "steps": [{step}], "outputs": ["y"]}}"#
            ))
            .unwrap()
        };
        let specialized = |t: &ProgramTrace| {
            t.guards.guards.iter().any(|g| g.reason.contains("reads the value of its Python number"))
        };
        for (dtype, step, guarded) in [
            ("float32", r#"{"let": "y", "op": "div", "args": ["x", "n"]}"#, false),
            ("int64", r#"{"let": "y", "op": "div", "args": ["x", "n-1"]}"#, false),
            ("int64", r#"{"let": "y", "op": "clamp", "args": ["x"], "min": 0, "max": "n-1"}"#, false),
            ("int32", r#"{"let": "y", "op": "clamp", "args": ["x"], "max": "n-1"}"#, true),
            ("int64", r#"{"let": "y", "op": "pow", "args": ["x", "n-7"]}"#, true),
            ("float32", r#"{"let": "y", "op": "pow", "args": ["x", "n-7"]}"#, false),
        ] {
            let p = prog(dtype, step);
            let t = trace(&p, &p.hint_bindings()).unwrap();
            assert_eq!(specialized(&t), guarded, "{dtype} {step}: {:?}", t.guards);
            for n in 0..12 {
                let b = Bindings::from_pairs([("n", n)]);
                if !t.admits(&b).unwrap() {
                    assert!(guarded || n < 2, "{dtype} {step}: n = {n} not admitted");
                    continue;
                }
                match (&t.values, concrete(&p, &b)) {
                    (Ok(_), Ok(c)) => assert_eq!(t.instantiate(&b).unwrap(), c),
                    (Err(x), Err(y)) => assert_eq!(x.category(), y.category()),
                    (x, y) => panic!("{dtype} {step} at n = {n}: {x:?} vs {y:?}"),
                }
            }
        }
        // The integer power is refused at its trace point, and only there.
        let p = prog("int64", r#"{"let": "y", "op": "pow", "args": ["x", "n-7"]}"#);
        let t = trace(&p, &p.hint_bindings()).unwrap();
        assert_eq!(t.values.as_ref().unwrap_err().category(), "error");
        assert!(!t.admits(&Bindings::from_pairs([("n", 7)])).unwrap());
        assert!(concrete(&p, &Bindings::from_pairs([("n", 7)])).is_ok());
    }

    #[test]
    fn concrete_layouts_of_the_readme_example() {
        let p = Program::from_json(HEADS).unwrap();
        let v = concrete(&p, &p.hint_bindings()).unwrap();
        assert_eq!(v[3].sizes, vec![2, 4, 5, 16]);
        assert_eq!(v[3].strides, vec![320, 16, 64, 1]);
        assert_eq!(v[3].aliases(3), Some(0));
        assert_eq!(v[5].sizes, vec![2, 4, 5, 1]);
        assert_eq!(v[5].aliases(5), None);
    }

    #[test]
    fn symbolic_trace_matches_concrete_and_names_steps() {
        let p = Program::from_json(HEADS).unwrap();
        let t = trace(&p, &p.hint_bindings()).unwrap();
        for (b, s) in [(2, 5), (3, 7), (1, 9), (4, 1)] {
            let bind = Bindings::from_pairs([("b", b), ("s", s)]);
            if t.admits(&bind).unwrap() {
                assert_eq!(t.instantiate(&bind).unwrap(), concrete(&p, &bind).unwrap());
            }
        }
        for g in &t.guards.guards[..] {
            assert!(
                g.reason.starts_with("symbol range") || g.reason.starts_with("step "),
                "{}",
                g.reason
            );
        }
    }
}
