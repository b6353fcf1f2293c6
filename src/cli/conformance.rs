//! `symstride conformance`: answer golden cases through the engine, optionally checking them.
//!
//! Every case gets one stdout line `{"got": {...}}` with exactly the keys of its `expect`
//! (or `{"error": ...}`), in input order, so the output can be diffed against the golden
//! file. With `--symbolic` every size and stride first becomes a symbol whose hint is the
//! concrete value, the engine traces on symbols, and each answer is the traced result
//! evaluated at the hints.

use serde_json::{json, Value};
use std::io::Write;
use std::process::ExitCode;
use symstride::golden::{
    self, BroadcastCase, Case, ElementwiseCase, Expect, LayoutCase, OpArg, OpCase, OpTensor,
    ProgramCase, ReductionCase, ViewCase,
};
use symstride::iter::{self, TensorSpec};
use symstride::layout::{self, MemoryFormat, StrideMatch};
use symstride::op::{self, Arg, Dest};
use symstride::program::{self, Program};
use symstride::reduce::{self as reduction, Dims, ReductionOp};
use symstride::structured::{self, Call, Kw, SArg, SOp};
use symstride::sym::{Bindings, GuardCheck, ShapeEnv, SymBool, SymInt, SymbolSpec};
use symstride::view::{View, ViewChain};
use symstride::DType;
use symstride::{Error, Int, Result};

/// Arguments of `symstride conformance`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Golden JSONL files.
    #[arg(required = true)]
    pub files: Vec<std::path::PathBuf>,
    /// Compute every answer through the symbolic path.
    #[arg(long)]
    pub symbolic: bool,
    /// Compare with `expect`, list mismatches, print `N passed, M failed`.
    #[arg(long)]
    pub check: bool,
}

/// Error categories that are answers (PyTorch rejected the case), not engine failures.
const GOLDEN_CATEGORIES: &[&str] = &[
    "broadcast",
    "overlap",
    "index",
    "shape",
    "view",
    "expand",
    "dtype",
    "error",
];

/// How many mismatches `--check` lists on stderr.
const MAX_LISTED: usize = 20;

/// Sizes and strides of one tensor, lifted into an engine.
type Lifted<I> = (Vec<I>, Vec<I>);

/// Turns concrete case data into the engine's integers and answers back into i64/bool.
/// One engine per case, so nothing (symbols, guards) leaks between cases.
trait Engine {
    /// Whether this engine traces on symbols (program cases run their own trace).
    const SYMBOLIC: bool = false;
    /// The integer type the engine runs on.
    type I: Int;
    /// Lifts one tensor's sizes and strides (`name` prefixes symbol names).
    fn tensor(&mut self, name: &str, sizes: &[i64], strides: &[i64]) -> Result<Lifted<Self::I>>;
    /// Lifts a shape.
    fn shape(&mut self, name: &str, sizes: &[i64]) -> Result<Vec<Self::I>>;
    /// Lifts a storage offset (non-negative).
    fn offset(&mut self, name: &str, offset: i64) -> Result<Self::I>;
    /// Evaluates a result integer.
    fn int(&self, v: &Self::I) -> Result<i64>;
    /// Evaluates a result boolean.
    fn boolean(&self, b: &<Self::I as Int>::Bool) -> Result<bool>;
    /// Checks the engine's own invariants once a case is answered (symbolic: every
    /// recorded guard holds at the hints).
    fn finish(&self) -> Result<()> {
        Ok(())
    }
    /// Evaluates a vector of result integers.
    fn ints(&self, vs: &[Self::I]) -> Result<Vec<i64>> {
        vs.iter().map(|v| self.int(v)).collect()
    }
}

/// The concrete path: `i64` all the way.
struct Concrete;

impl Engine for Concrete {
    type I = i64;
    fn tensor(&mut self, name: &str, sizes: &[i64], strides: &[i64]) -> Result<Lifted<i64>> {
        // Same entry validation (and message) as the symbolic engine.
        layout::check_layout(name, sizes, strides)?;
        Ok((sizes.to_vec(), strides.to_vec()))
    }
    fn shape(&mut self, name: &str, sizes: &[i64]) -> Result<Vec<i64>> {
        layout::check_sizes(name, sizes)?;
        Ok(sizes.to_vec())
    }
    fn offset(&mut self, _name: &str, offset: i64) -> Result<i64> {
        Ok(offset)
    }
    fn int(&self, v: &i64) -> Result<i64> {
        Ok(*v)
    }
    fn boolean(&self, b: &bool) -> Result<bool> {
        Ok(*b)
    }
}

/// The symbolic path: every size and stride of the case is a fresh symbol of one
/// `ShapeEnv` whose hint is the concrete value (sizes `>= 0`, strides any integer);
/// results are evaluated at the hints from their expressions.
#[derive(Default)]
struct Symbolic {
    env: ShapeEnv,
    hints: Bindings,
}

impl Symbolic {
    fn symbols(&mut self, prefix: &str, values: &[i64], min: i64) -> Result<Vec<SymInt>> {
        let spec = SymbolSpec {
            min,
            ..Default::default()
        };
        let out = self.env.create_symbols(prefix, values, spec)?;
        self.hints = self.env.hints();
        Ok(out)
    }
}

impl Engine for Symbolic {
    const SYMBOLIC: bool = true;
    type I = SymInt;
    fn tensor(&mut self, name: &str, sizes: &[i64], strides: &[i64]) -> Result<Lifted<SymInt>> {
        // Reject what the concrete path rejects, with the same message, before lifting.
        layout::check_layout(name, sizes, strides)?;
        // Symbols `input0_s1` for the tensor named `input 0` in messages.
        let prefix = name.replace(' ', "");
        let s = self.symbols(&format!("{prefix}_s"), sizes, 0)?;
        let t = self.symbols(&format!("{prefix}_t"), strides, i64::MIN)?;
        Ok((s, t))
    }
    fn shape(&mut self, name: &str, sizes: &[i64]) -> Result<Vec<SymInt>> {
        layout::check_sizes(name, sizes)?;
        self.symbols(&format!("{}_s", name.replace(' ', "")), sizes, 0)
    }
    fn offset(&mut self, name: &str, offset: i64) -> Result<SymInt> {
        Ok(self.symbols(&format!("{name}_o"), &[offset], 0)?.remove(0))
    }
    fn int(&self, v: &SymInt) -> Result<i64> {
        v.eval(&self.hints)
    }
    fn boolean(&self, b: &SymBool) -> Result<bool> {
        b.eval(&self.hints)
    }
    fn finish(&self) -> Result<()> {
        let guards = self.env.guard_set();
        match guards.eval(&self.hints)? {
            GuardCheck::Pass => Ok(()),
            GuardCheck::Fail(i) => Err(Error::invalid(format!(
                "internal: recorded guard `{}` ({}) does not hold at the hints",
                guards.guards[i], guards.guards[i].reason
            ))),
        }
    }
}

/// Answers a layout case: one value per key of `expect`.
fn layout_case<E: Engine>(e: &mut E, case: &LayoutCase) -> Result<Expect> {
    let (sizes, strides) = e.tensor("input", &case.sizes, &case.strides)?;
    let (sizes, strides) = (&sizes[..], &strides[..]);
    let rank = sizes.len();
    let mut got = Expect::new();
    // The branch-free forms must agree with the branchy answers (they are what a plan can
    // test at run time); a disagreement is an engine bug, reported as the case's answer.
    let agree = |what: &str, branchy: bool, free: &<E::I as Int>::Bool| -> Result<bool> {
        let free = e.boolean(free)?;
        if free != branchy {
            return Err(Error::invalid(format!(
                "internal: branch-free {what} is {free} but the branchy answer is {branchy}"
            )));
        }
        Ok(branchy)
    };
    for key in case.expect.keys() {
        let value = match key.as_str() {
            "is_contiguous" => json!(agree(
                "contiguity",
                layout::is_contiguous(sizes, strides)?,
                &layout::contiguity_expr(sizes, strides)?
            )?),
            "is_channels_last_contiguous" => match rank {
                4 => json!(agree(
                    "channels-last contiguity",
                    layout::is_channels_last_contiguous_2d(sizes, strides)?,
                    &layout::channels_last_contiguity_expr_2d(sizes, strides)?
                )?),
                _ => Value::Null,
            },
            "is_channels_last_3d_contiguous" => match rank {
                5 => json!(agree(
                    "channels-last-3d contiguity",
                    layout::is_channels_last_contiguous_3d(sizes, strides)?,
                    &layout::channels_last_contiguity_expr_3d(sizes, strides)?
                )?),
                _ => Value::Null,
            },
            "is_non_overlapping_and_dense" => {
                json!(layout::is_non_overlapping_and_dense(sizes, strides)?)
            }
            "suggest_memory_format" => {
                let f: MemoryFormat =
                    layout::suggest_memory_format(sizes, strides, StrideMatch::Like)?;
                json!(f.name())
            }
            "empty_like_strides" => json!(e.ints(&layout::empty_like_strides(sizes, strides)?)?),
            "contiguous_strides" => json!(e.ints(&layout::try_contiguous_strides(sizes)?)?),
            "channels_last_strides" => match rank {
                4 => json!(e.ints(&layout::channels_last_strides_2d(sizes)?)?),
                _ => Value::Null,
            },
            other => return Err(Error::invalid(format!("unknown layout key `{other}`"))),
        };
        got.insert(key.clone(), value);
    }
    Ok(got)
}

/// Answers a broadcast case: `{"sizes": [...]}` or `{"error": "broadcast"}`.
fn broadcast_case<E: Engine>(e: &mut E, case: &BroadcastCase) -> Result<Expect> {
    let shapes = case
        .shapes
        .iter()
        .enumerate()
        .map(|(k, s)| e.shape(&format!("input {k}"), s))
        .collect::<Result<Vec<_>>>()?;
    let refs: Vec<&[E::I]> = shapes.iter().map(|s| &s[..]).collect();
    let mut got = Expect::new();
    match layout::infer_size(&refs) {
        Ok(sizes) => got.insert("sizes".into(), json!(e.ints(&sizes)?)),
        Err(Error::Broadcast { .. }) => got.insert("error".into(), json!("broadcast")),
        Err(err) => return Err(err),
    };
    Ok(got)
}

/// ============================ ELEMENTWISE DISPATCH ============================
/// The one place where elementwise cases meet the TensorIterator build (`crate::iter`):
/// given the case's inputs lifted through the engine, answer `{"sizes": [...],
/// "strides": [...]}` for the output TensorIterator allocates (strides evaluated through
/// `e.ints`), or `{"error": "broadcast"}` on a broadcast mismatch.
fn elementwise_case<E: Engine>(e: &mut E, case: &ElementwiseCase) -> Result<Expect> {
    let inputs = case
        .inputs
        .iter()
        .enumerate()
        .map(|(k, t)| e.tensor(&format!("input {k}"), &t.sizes, &t.strides))
        .collect::<Result<Vec<_>>>()?;
    let mut got = Expect::new();
    match iter::elementwise_output(&inputs) {
        Ok((sizes, strides)) => {
            got.insert("sizes".into(), json!(e.ints(&sizes)?));
            got.insert("strides".into(), json!(e.ints(&strides)?));
        }
        Err(Error::Broadcast { .. }) => {
            got.insert("error".into(), json!("broadcast"));
        }
        Err(err) => return Err(err),
    }
    Ok(got)
}

/// The last element a tensor of a case can address, plus one (0 when it is empty): the
/// storage extent it needs, in elements.
fn extent(t: &OpTensor) -> Result<i64> {
    layout::check_layout("tensor", &t.sizes, &t.strides)?;
    if t.offset < 0 {
        return Err(Error::invalid(format!("negative offset {}", t.offset)));
    }
    if t.sizes.contains(&0) {
        return Ok(t.offset);
    }
    let mut last = t.offset as i128;
    for (&z, &s) in t.sizes.iter().zip(&t.strides) {
        last += (z as i128 - 1) * s as i128;
    }
    i64::try_from(last + 1).map_err(|_| Error::overflow("storage extent"))
}

/// Answers an op case: `{"sizes", "strides", "dtype"}` of the output, or the error category
/// (with the engine's message) when the call is rejected the way PyTorch rejects it.
fn op_case<E: Engine>(e: &mut E, case: &OpCase) -> Result<Expect> {
    let structured = SOp::parse(&case.op);
    let known = match structured {
        Some(s) => s.def().keywords.iter().map(|k| k.name).collect(),
        None => op::keywords(&case.op),
    };
    if let Some(k) = case.kwargs.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(Error::parse("op case", format!("{}: unknown keyword `{k}`", case.op)));
    }
    // Elementwise keywords are numbers or names (structured ones are read by their op).
    let kwargs = case
        .kwargs
        .iter()
        .filter(|_| structured.is_none())
        .map(|(k, v)| Ok((k.as_str(), op::kwarg_from_json(v)?)))
        .collect::<Result<Vec<_>>>()?;
    if let Some((k, _)) = kwargs.iter().find(|(k, _)| !known.contains(k)) {
        return Err(Error::parse("op case", format!("{}: unknown keyword `{k}`", case.op)));
    }
    let kwarg = |k: &str| kwargs.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
    let resolved = match structured {
        Some(_) => None,
        None => match op::resolve(&case.op, case.inputs.len(), &kwarg) {
            Ok(Some(r)) => Some(r),
            Ok(None) => {
                return Err(Error::parse("op case", format!("unknown op `{}`", case.op)));
            }
            Err(err) => return error_answer(err),
        },
    };
    // Storages: tensors with one id share a storage of the largest extent among them.
    let tensors: Vec<&OpTensor> = case
        .inputs
        .iter()
        .flat_map(|a| match a {
            OpArg::Tensor(t) => vec![t],
            OpArg::List { list } => list.iter().collect(),
            _ => Vec::new(),
        })
        .chain(case.out.iter())
        .collect();
    let mut shared: std::collections::HashMap<u64, i64> = Default::default();
    for t in &tensors {
        if let Some(id) = t.storage {
            let bytes = extent(t)?
                .checked_mul(DType::parse(&t.dtype)?.element_size() as i64)
                .ok_or_else(|| Error::overflow("storage bytes"))?;
            let n = shared.entry(id).or_insert(0);
            *n = (*n).max(bytes);
        }
    }
    // Storages of their own get ids above every shared one.
    let mut own_id = shared.keys().max().map_or(0, |m| m + 1);
    let mut lift = |e: &mut E, name: &str, t: &OpTensor| -> Result<TensorSpec<E::I>> {
        let dtype = DType::parse(&t.dtype)?;
        let (id, nbytes) = match t.storage {
            Some(id) => (id, shared[&id]),
            None => {
                own_id += 1;
                (own_id - 1, extent(t)? * dtype.element_size() as i64)
            }
        };
        let (sizes, strides) = e.tensor(name, &t.sizes, &t.strides)?;
        let offset = e.offset(name, t.offset)?;
        // Every tensor of a case is a distinct tensor object (in place is said explicitly).
        own_id += 1;
        Ok(TensorSpec::typed(sizes, strides, dtype)
            .with_offset(offset)
            .with_storage(id, E::I::from_i64(nbytes))
            .with_tensor_id(own_id))
    };
    if let Some(sop) = structured {
        return structured_case(e, case, sop, &mut lift);
    }
    let Some(resolved) = resolved else {
        return Err(Error::invalid("internal: an op case without a row"));
    };
    let op = resolved.op;
    let mut given = Vec::with_capacity(case.inputs.len());
    for (k, a) in case.inputs.iter().enumerate() {
        given.push(match a {
            OpArg::Tensor(t) => Arg::Tensor(lift(e, &format!("x{k}"), t)?),
            OpArg::Scalar { scalar } => Arg::Scalar(op::scalar_from_json(scalar)?),
            OpArg::List { .. } | OpArg::Null => {
                return Err(Error::invalid(format!(
                    "{}: argument {k} is not a tensor or a number",
                    case.op
                )))
            }
        });
    }
    let args: Vec<Arg<E::I>> = resolved
        .args
        .iter()
        .map(|s| match s {
            op::Slot::Given(k) => Ok(given[*k].clone()),
            op::Slot::Number(v) => Ok(Arg::Scalar(*v)),
            // Op lines give numbers only (`kwarg_from_json` makes no `Kwarg::Int`).
            op::Slot::Keyword(k) => Err(Error::invalid(format!("{}: `{k}` is no number", case.op))),
        })
        .collect::<Result<_>>()?;
    let dest = match (&case.out, case.inplace) {
        (Some(_), true) => return Err(Error::invalid("both `out` and `inplace`")),
        (Some(t), false) => Dest::Out(lift(e, "out", t)?),
        (None, true) => Dest::InPlace,
        (None, false) => Dest::New,
    };
    let p = match op::plan_op(op, &args, &dest) {
        Ok(p) => p,
        Err(err) => return error_answer(err),
    };
    let mut got = Expect::new();
    got.insert("sizes".into(), json!(e.ints(p.out_sizes())?));
    got.insert("strides".into(), json!(e.ints(p.out_strides())?));
    got.insert("dtype".into(), json!(p.out_dtype.name()));
    Ok(got)
}

/// Lifts a case's tensor through the engine (sizes, strides, offset, storage).
type Lift<'a, E> = dyn FnMut(&mut E, &str, &OpTensor) -> Result<TensorSpec<<E as Engine>::I>> + 'a;

/// Answers an op case of a structured op ([`SOp`]): each result's layout and dtype (views
/// with their storage offset, under `outputs`), or PyTorch's error. Index values, where the
/// case gives them, are checked after the meta function, as PyTorch checks them.
fn structured_case<E: Engine>(
    e: &mut E,
    case: &OpCase,
    sop: SOp,
    lift: &mut Lift<'_, E>,
) -> Result<Expect> {
    if case.out.is_some() || case.inplace {
        return Err(Error::invalid(format!("{sop} takes no `out` or in-place form")));
    }
    let mut inputs = Vec::with_capacity(case.inputs.len());
    for (k, a) in case.inputs.iter().enumerate() {
        inputs.push(match a {
            OpArg::Tensor(t) => SArg::Tensor(lift(e, &format!("x{k}"), t)?),
            OpArg::List { list } => SArg::List(
                list.iter()
                    .enumerate()
                    .map(|(j, t)| lift(e, &format!("x{k}_{j}"), t))
                    .collect::<Result<_>>()?,
            ),
            OpArg::Null => SArg::Absent,
            OpArg::Scalar { .. } => {
                return Err(Error::invalid(format!("{sop}: argument {k} must be a tensor")))
            }
        });
    }
    let mut kwarg = |name: &str| -> Result<Option<Kw<E::I>>> {
        let Some(v) = case.kwargs.get(name) else {
            return Ok(None);
        };
        let int = |v: &Value| v.as_i64().filter(|_| v.is_i64() || v.is_u64());
        Ok(Some(match v {
            Value::Null => Kw::Null,
            Value::Bool(b) => Kw::Bool(*b),
            Value::String(s) => Kw::Name(s.clone()),
            Value::Array(xs) => {
                let vals = xs
                    .iter()
                    .map(|x| int(x).ok_or_else(|| Error::parse("op case", format!("{name}: expected integers, got {x}"))))
                    .collect::<Result<Vec<i64>>>()?;
                // Sizes of new tensors become symbols in the symbolic path.
                if name == "size" && vals.iter().all(|v| *v >= 0) {
                    Kw::Ints(e.shape(name, &vals)?)
                } else {
                    Kw::Ints(vals.into_iter().map(E::I::from_i64).collect())
                }
            }
            v => match int(v) {
                Some(i) => Kw::Int(E::I::from_i64(i)),
                None => match op::scalar_from_json(v)? {
                    symstride::tensor::Scalar::Float(f) => Kw::Float(f),
                    symstride::tensor::Scalar::Int(i) => Kw::Int(E::I::from_i64(i)),
                    symstride::tensor::Scalar::Bool(b) => Kw::Bool(b),
                },
            },
        }))
    };
    let call = match Call::new(sop, inputs, &mut kwarg) {
        Ok(c) => c,
        Err(err) => return error_answer(err),
    };
    let outs = match structured::meta(&call) {
        Ok(o) => o,
        Err(err) => return error_answer(err),
    };
    let index_values = case.inputs.get(1).and_then(|a| match a {
        OpArg::Tensor(t) => t.values.as_ref(),
        _ => None,
    });
    if let Some(values) = index_values {
        if let Some(bound) = structured::index_bound(&call)? {
            if let Err(err) = structured::check_index_values(sop, e.int(&bound)?, values) {
                return error_answer(err);
            }
        }
    }
    let describe = |e: &E, o: &structured::Out<E::I>| -> Result<Expect> {
        let mut got = Expect::new();
        got.insert("sizes".into(), json!(e.ints(&o.sizes)?));
        got.insert("strides".into(), json!(e.ints(&o.strides)?));
        got.insert("dtype".into(), json!(o.dtype.name()));
        if let Some(off) = &o.view_offset {
            got.insert("offset".into(), json!(e.int(off)?));
        }
        Ok(got)
    };
    if sop.def().results == structured::Results::Views {
        let list = outs
            .iter()
            .map(|o| describe(e, o).map(Value::Object))
            .collect::<Result<Vec<_>>>()?;
        let mut got = Expect::new();
        got.insert("outputs".into(), Value::Array(list));
        return Ok(got);
    }
    match outs.as_slice() {
        [o] => describe(e, o),
        _ => Err(Error::invalid(format!("internal: {sop} gave {} results", outs.len()))),
    }
}

/// An op case's error: PyTorch's rejection (a golden category, or an [`Error::Argument`],
/// category `error`) is the answer `{"error", "message"}`; any other error is the engine's.
fn error_answer(err: Error) -> Result<Expect> {
    if err.category() == "error" && !matches!(err, Error::Argument { .. }) {
        return Err(err);
    }
    let mut got = Expect::new();
    got.insert("error".into(), json!(err.category()));
    got.insert("message".into(), json!(err.to_string()));
    Ok(got)
}

/// Whether an answer matches a case's `expect`. An error's `message` is PyTorch's text, for
/// information only: only the category must match.
fn matches_expect(got: &Expect, expect: &Expect) -> bool {
    let strip = |m: &Expect| -> Expect {
        let mut m = m.clone();
        if m.contains_key("error") {
            m.remove("message");
        }
        m
    };
    strip(got) == strip(expect)
}

/// ================================ VIEW DISPATCH ================================
/// A `view` case: the base tensor (sizes, strides, offset and storage size lifted through
/// the engine; op arguments stay constants) goes through [`ViewChain`]; the answer is
/// `{"sizes", "strides", "offset", "aliases"}` or the error category of the first op that
/// PyTorch rejects. Other failures (overflow, limits) are engine errors, not answers.
fn view_case<E: Engine>(e: &mut E, case: &ViewCase) -> Result<Expect> {
    let b = &case.base;
    let (sizes, strides) = e.tensor("base", &b.sizes, &b.strides)?;
    let offset = e.offset("base", b.offset)?;
    let storage = e.offset("base_storage", b.storage_numel)?;
    let mut chain = ViewChain::new(View::new(sizes, strides, offset)?, storage);
    let mut got = Expect::new();
    for op in &case.ops {
        match chain.apply(op) {
            Ok(()) => {}
            Err(
                err @ (Error::Index { .. }
                | Error::Shape { .. }
                | Error::View { .. }
                | Error::Expand { .. }
                | Error::Invalid { .. }),
            ) => {
                got.insert("error".into(), json!(err.category()));
                return Ok(got);
            }
            Err(err) => return Err(err),
        }
    }
    got.insert("sizes".into(), json!(e.ints(chain.view.sizes())?));
    got.insert("strides".into(), json!(e.ints(chain.view.strides())?));
    got.insert("offset".into(), json!(e.int(chain.view.offset())?));
    got.insert("aliases".into(), json!(chain.aliases));
    Ok(got)
}

/// The `dim` argument of a reduction case: `null`, an integer or a list of integers.
fn reduction_dims(v: &Value) -> Result<Dims> {
    let bad = || Error::parse("reduction case", format!("bad `dim` {v}"));
    Ok(match v {
        Value::Null => Dims::All,
        Value::Number(n) => Dims::One(n.as_i64().ok_or_else(bad)?),
        Value::Array(a) => Dims::List(
            a.iter()
                .map(|d| d.as_i64().ok_or_else(bad))
                .collect::<Result<_>>()?,
        ),
        _ => return Err(bad()),
    })
}

/// Answers a reduction case through [`reduction::reduction_meta`] (argument checks, result
/// dtype and layout, and the reduction's TensorIterator build): `{"sizes", "strides",
/// "dtype"}`, or `{"error": CATEGORY}` for the rejections PyTorch makes.
fn reduction_case<E: Engine>(e: &mut E, case: &ReductionCase) -> Result<Expect> {
    let op = ReductionOp::parse(&case.op)?;
    let dtype = DType::parse(case.input.dtype.as_deref().unwrap_or("float32"))?;
    let dims = reduction_dims(&case.dim)?;
    let (sizes, strides) = e.tensor("x", &case.input.sizes, &case.input.strides)?;
    let offset = e
        .shape("x_offset", &[case.input.offset.unwrap_or(0)])?
        .remove(0);
    let input = iter::TensorSpec::new(sizes, strides, dtype.element_size()).with_offset(offset);
    let mut got = Expect::new();
    match reduction::reduction_meta(op, &input, dtype, &dims, case.keepdim) {
        Ok(m) => {
            got.insert("sizes".into(), json!(e.ints(&m.sizes)?));
            got.insert("strides".into(), json!(e.ints(&m.strides)?));
            got.insert("dtype".into(), json!(m.dtype.name()));
        }
        Err(err @ (Error::Index { .. } | Error::DType { .. } | Error::Invalid { .. })) => {
            got.insert("error".into(), json!(err.category()));
        }
        Err(err) => return Err(err),
    }
    Ok(got)
}

/// A `program` case: executed at its binding (layouts from the symbolic trace with
/// `--symbolic`), answered with every output's layout and values or the error category.
fn program_case(case: &ProgramCase, symbolic: bool) -> Result<Expect> {
    let p = match Program::from_value(&case.spec) {
        Ok(p) => p,
        // A dtype error is static: PyTorch raises it when the step runs.
        Err(e @ Error::DType { .. }) => {
            let mut got = Expect::new();
            got.insert("error".into(), json!(e.category()));
            got.insert("message".into(), json!(e.to_string()));
            return Ok(got);
        }
        Err(e) => return Err(e),
    };
    let b = p.bindings(&case.binding)?;
    program::golden::answer(&p, &b, symbolic)
}

/// Answers one case; an engine error becomes `{"error": "<message>"}`.
fn answer<E: Engine>(e: &mut E, case: &Case) -> Expect {
    let result = match case {
        Case::Layout(c) => layout_case(e, c),
        Case::Broadcast(c) => broadcast_case(e, c),
        Case::Elementwise(c) => elementwise_case(e, c),
        Case::Reduction(c) => reduction_case(e, c),
        Case::View(c) => view_case(e, c),
        Case::Op(c) => op_case(e, c),
        Case::Program(c) => program_case(c, E::SYMBOLIC),
    }
    .and_then(|got| e.finish().map(|()| got));
    result.unwrap_or_else(|err| {
        let mut m = Expect::new();
        m.insert("error".into(), json!(err.to_string()));
        m
    })
}

/// Answers one case on the engine the flags select (a fresh one per case).
fn answer_case(case: &Case, symbolic: bool) -> Expect {
    if symbolic {
        answer(&mut Symbolic::default(), case)
    } else {
        answer(&mut Concrete, case)
    }
}

/// Whether `path` holds coverage lines (`coverage.jsonl`, `program_coverage*.jsonl`: a spec
/// with PyTorch's guards and rows, no `kind`) rather than golden cases: its first non-empty
/// line says (an unreadable file is left to [`golden::read_cases`] to report).
fn is_coverage_file(path: &std::path::Path) -> bool {
    use std::io::BufRead;
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let first = std::io::BufReader::new(file)
        .lines()
        .map_while(std::result::Result::ok)
        .find(|l| !l.trim().is_empty());
    let Some(first) = first else {
        return false;
    };
    match serde_json::from_str::<Value>(&first) {
        Ok(Value::Object(o)) => {
            !o.contains_key("kind") && o.contains_key("spec") && o.contains_key("torch_guards")
        }
        _ => false,
    }
}

/// Runs the subcommand.
pub fn run(args: Args) -> Result<ExitCode> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let io_err = |e: std::io::Error| Error::Io {
        path: "<stdout>".into(),
        message: e.to_string(),
    };
    let (mut passed, mut failed, mut listed) = (0usize, 0usize, 0usize);
    let mut bad_input = false;
    for path in &args.files {
        if is_coverage_file(path) {
            eprintln!(
                "symstride: {} is a coverage file (PyTorch's guards and coverage of a spec per \
                 line: `spec`, `torch_guards`, `rows`), not golden cases (`kind`, `expect`); \
                 `conformance` answers golden cases only and skipped it",
                path.display()
            );
            bad_input = true;
            continue;
        }
        let lines = match golden::read_cases(path) {
            Ok(lines) => lines,
            Err(err) => {
                eprintln!("symstride: {err}");
                bad_input = true;
                continue;
            }
        };
        for line in lines {
            let case = match line.case {
                Ok(case) => case,
                Err(err) => {
                    eprintln!("{}:{}: malformed case: {err}", path.display(), line.number);
                    bad_input = true;
                    failed += 1;
                    listed += 1; // reported just above
                    let got = json!({"got": {"error": format!("malformed case: {err}")}});
                    writeln!(out, "{got}").map_err(io_err)?;
                    continue;
                }
            };
            let got = answer_case(&case, args.symbolic);
            // An error other than a golden category (the answer to a case PyTorch rejects)
            // means the case itself is invalid (or the engine failed): say where, and fail
            // the run.
            let error = match got.get("error") {
                Some(Value::String(err)) if !GOLDEN_CATEGORIES.contains(&err.as_str()) => Some(err),
                _ => None,
            };
            if let Some(err) = error {
                eprintln!(
                    "{}:{}: {} case: {err}",
                    path.display(),
                    line.number,
                    case.kind()
                );
                bad_input = true;
            }
            if args.check {
                let ok = match &case {
                    Case::Program(_) => program::golden::matches(&got, case.expect()),
                    _ => matches_expect(&got, case.expect()),
                };
                if ok {
                    passed += 1;
                } else {
                    failed += 1;
                    if error.is_some() {
                        listed += 1; // already reported above
                    } else if listed < MAX_LISTED {
                        listed += 1;
                        eprintln!(
                            "{}:{}: {} mismatch: expected {} got {}",
                            path.display(),
                            line.number,
                            case.kind(),
                            Value::Object(case.expect().clone()),
                            Value::Object(got.clone())
                        );
                    }
                }
            }
            writeln!(out, "{}", json!({ "got": got })).map_err(io_err)?;
        }
    }
    if args.check {
        if failed > listed {
            eprintln!("... and {} more mismatches", failed - listed);
        }
        writeln!(out, "{passed} passed, {failed} failed").map_err(io_err)?;
    }
    out.flush().map_err(io_err)?;
    Ok(if bad_input || (args.check && failed > 0) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
