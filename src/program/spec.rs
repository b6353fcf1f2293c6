//! Program specs: parsing and static validation of the golden "Programs" format.
//!
//! Everything that can be decided without sizes is decided here, with the step and the
//! argument named: unknown ops, arities, where a Python number may stand, keyword arguments,
//! shadowing, symbols that are no input's size. Op names and arities are read from the
//! tables ([`crate::op::TABLE`], [`crate::reduce::REDUCTIONS`], [`ViewOp::arity`]).

use super::trace::in_step;
use crate::aot::Spec;
use crate::layout::MemoryFormat;
use crate::op::Op;
use crate::reduce::{Dims, ReductionOp};
use crate::structured::SOp;
use crate::sym::{Bindings, Expr};
use crate::tensor::Scalar;
use crate::view::ViewOp;
use crate::{DType, Error, Result};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// How an input's strides are given.
#[derive(Clone, Debug, PartialEq)]
pub enum InputStrides {
    /// Dense strides of a memory format.
    Layout(MemoryFormat),
    /// One expression per dimension, over the symbols.
    Exprs(Vec<Expr>),
}

/// One named input.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgramInput {
    /// The value name.
    pub name: String,
    /// Sizes: constants or symbols.
    pub sizes: Vec<Expr>,
    /// Strides.
    pub strides: InputStrides,
    /// Element type.
    pub dtype: DType,
    /// `"fill": {"mod": m}`: the input holds `(7*L + 3*k) % m` (index inputs in range).
    pub fill_mod: Option<Expr>,
}

/// What a step does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepOp {
    /// A view op (its name, as in [`ViewOp::arity`]).
    View(String),
    /// An op of the op table.
    Op(Op),
    /// A reduction.
    Reduce(ReductionOp),
    /// `contiguous(memory_format)`.
    Contiguous,
    /// `clone(memory_format)`.
    Clone,
    /// `to(dtype)`.
    To,
    /// A structured op (creation, concatenation, indexing, normalization, attention,
    /// multi-result views): [`crate::structured`].
    Structured(SOp),
}

/// One argument of a step.
#[derive(Clone, Debug, PartialEq)]
pub enum StepArg {
    /// A value (index: inputs first, then steps).
    Value(usize),
    /// An integer expression over the symbols.
    Int(Expr),
    /// A list of integer expressions.
    Ints(Vec<Expr>),
    /// JSON `null` (Python `None`).
    Null,
    /// A Python number of an op.
    Number(Scalar),
    /// A Python integer given as an integer expression over the symbols (`div(x, "d")`,
    /// `clamp(x, max="n-1")`): PyTorch's SymInt passed as a Scalar, a wrapped-number int in
    /// type promotion. Its value is the expression at each binding ([`StepArg::number_at`]).
    SymNumber(Expr),
    /// A list of values (a structured op's tensor list).
    Values(Vec<usize>),
}

/// A keyword argument of a structured step (absent ones take the row's default).
#[derive(Clone, Debug, PartialEq)]
pub enum StepKw {
    /// Not given: the registry's default.
    Default,
    /// An integer expression over the symbols.
    Int(Expr),
    /// A list of integer expressions.
    Ints(Vec<Expr>),
    /// A float (or a non-finite number).
    Float(f64),
    /// A bool.
    Bool(bool),
    /// `null`.
    Null,
    /// A name (`dtype`, `memory_format`).
    Name(String),
}

/// One step: `let = op(args)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// The bound name.
    pub name: String,
    /// The operation.
    pub op: StepOp,
    /// Arguments, the tensor first.
    pub args: Vec<StepArg>,
    /// `keepdim` (reductions).
    pub keepdim: bool,
    /// `memory_format` (`contiguous`: default contiguous; `clone`: default preserve).
    pub memory_format: MemoryFormat,
    /// `dtype` (`to`).
    pub dtype: Option<DType>,
    /// `step k (op let = op(args))`, for guard reasons and errors.
    pub label: String,
    /// A structured step's keywords, one per keyword of its row (empty otherwise).
    pub kwargs: Vec<StepKw>,
    /// For one result of a multi-result step (`let` an array): `(k, n)`, result `k` of the
    /// `n` the program names. Each result is a step of its own defining one value.
    pub part: Option<(usize, usize)>,
}

impl StepArg {
    /// The Python number this argument stands for at binding `b`: a constant, or a
    /// [`StepArg::SymNumber`] evaluated exactly (an overflow or an unbound symbol is an
    /// error naming the expression, never a wrapped value); `None` for a non-number.
    pub fn number_at(&self, b: &Bindings) -> Option<Result<Scalar>> {
        match self {
            StepArg::Number(s) => Some(Ok(*s)),
            StepArg::SymNumber(e) => Some(e.eval(b).map(Scalar::Int).map_err(|err| match err {
                Error::Overflow { .. } => {
                    Error::overflow(format!("the Python number `{e}` at this binding"))
                }
                other => other,
            })),
            _ => None,
        }
    }
}

impl Step {
    /// The values the step reads (tensor arguments and tensor lists).
    pub fn value_args(&self) -> impl Iterator<Item = usize> + '_ {
        self.args.iter().flat_map(|a| match a {
            StepArg::Value(i) => vec![*i],
            StepArg::Values(is) => is.clone(),
            _ => Vec::new(),
        })
    }

    /// The `dim` argument of a reduction step at run time (parsing made every dim a
    /// constant): all dims when absent or `null`.
    pub(crate) fn reduction_dims(&self) -> Result<Dims> {
        Ok(match self.args.get(1) {
            None | Some(StepArg::Null) => Dims::All,
            Some(StepArg::Int(e)) => Dims::One(e.as_const().unwrap_or(0)),
            Some(StepArg::Ints(es)) => {
                Dims::List(es.iter().map(|e| e.as_const().unwrap_or(0)).collect())
            }
            Some(other) => return Err(Error::invalid(format!("bad dim {other:?}"))),
        })
    }
}

/// A validated program.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// Name.
    pub name: String,
    /// Inputs (values `0..inputs.len()`).
    pub inputs: Vec<ProgramInput>,
    /// Symbols in order of first appearance in the input sizes.
    pub symbols: Vec<String>,
    /// Hint per symbol (same order); empty when the spec gave none.
    pub hints: Vec<i64>,
    /// Steps (step `k` defines value `inputs.len() + k`).
    pub steps: Vec<Step>,
    /// Returned values.
    pub outputs: Vec<usize>,
    /// Value names, inputs then steps.
    pub names: Vec<String>,
    /// The JSON the program was parsed from (what an artifact stores).
    pub source: Value,
}

fn err(message: impl Into<String>) -> Error {
    Error::parse("program", message)
}

fn memory_format(v: &Value, at: &str) -> Result<MemoryFormat> {
    Ok(match v.as_str() {
        Some("contiguous") | Some("contiguous_format") => MemoryFormat::Contiguous,
        Some("channels_last") => MemoryFormat::ChannelsLast,
        Some("channels_last_3d") => MemoryFormat::ChannelsLast3d,
        Some("preserve") | Some("preserve_format") => MemoryFormat::Preserve,
        _ => return Err(err(format!("{at}: unknown memory_format {v}"))),
    })
}

/// Parses an integer expression and checks its symbols are known.
fn int_expr(v: &Value, symbols: &[String], at: &str) -> Result<Expr> {
    parse_int_expr(v, symbols).map_err(|m| err(format!("{at}: {m}")))
}

/// [`int_expr`] with the reason as the error.
fn parse_int_expr(v: &Value, symbols: &[String]) -> std::result::Result<Expr, String> {
    let e = match v {
        Value::Number(n) => Expr::constant(
            n.as_i64()
                .ok_or_else(|| format!("`{n}` is not an integer"))?,
        ),
        Value::String(s) => Expr::parse(s).map_err(|e| e.to_string())?,
        other => return Err(format!("expected an integer, got {other}")),
    };
    for s in e.symbols() {
        if !symbols.iter().any(|k| k == s.as_str()) {
            return Err(format!(
                "symbol `{s}` is no input's size (symbols: {})",
                symbols.join(", ")
            ));
        }
    }
    Ok(e)
}

impl Program {
    /// Symbol values (program order) from `name=value` pairs, as the CLI's `check`/`run`
    /// and Python's `Artifact.check` take them: every symbol exactly once, no name that is
    /// not a symbol, sizes non-negative.
    pub fn values_from_pairs<S: AsRef<str>>(&self, pairs: &[(S, i64)]) -> Result<Vec<i64>> {
        for (k, _) in pairs {
            let k = k.as_ref();
            if !self.symbols.iter().any(|s| s == k) {
                return Err(Error::symbol(format!(
                    "`{k}` is not a symbol of program {} (symbols: {})",
                    self.name,
                    if self.symbols.is_empty() {
                        "none".to_string()
                    } else {
                        self.symbols.join(", ")
                    }
                )));
            }
        }
        self.symbols
            .iter()
            .map(|s| {
                let mut it = pairs.iter().filter(|(k, _)| k.as_ref() == s);
                let v = it
                    .next()
                    .ok_or_else(|| Error::symbol(format!("no value for symbol `{s}`")))?
                    .1;
                if it.next().is_some() {
                    return Err(Error::symbol(format!("symbol `{s}` is bound twice")));
                }
                if v < 0 {
                    return Err(Error::symbol(format!(
                        "symbol `{s}` = {v}: sizes are non-negative"
                    )));
                }
                Ok(v)
            })
            .collect()
    }

    /// Parses a program from JSON text.
    pub fn from_json(text: &str) -> Result<Program> {
        let v: Value = serde_json::from_str(text).map_err(|e| err(e.to_string()))?;
        Program::from_value(&v)
    }

    /// Parses and validates a program.
    pub fn from_value(v: &Value) -> Result<Program> {
        let o = v.as_object().ok_or_else(|| err("expected an object"))?;
        for k in o.keys() {
            if !["name", "inputs", "hints", "steps", "outputs"].contains(&k.as_str()) {
                return Err(err(format!("unknown key `{k}`")));
            }
        }
        let name = o.get("name").and_then(Value::as_str).unwrap_or("program");
        let mut symbols: Vec<String> = Vec::new();
        let mut inputs = Vec::new();
        let raw_inputs = o
            .get("inputs")
            .and_then(Value::as_array)
            .ok_or_else(|| err("missing `inputs` array"))?;
        for (i, inp) in raw_inputs.iter().enumerate() {
            inputs.push(parse_input(i, inp, &mut symbols)?);
        }
        // Stride expressions may only use size symbols (checked once all sizes are known).
        for (i, inp) in raw_inputs.iter().enumerate() {
            if let Some(Value::Array(st)) = inp.get("strides") {
                let at = format!("input {} (`{}`) strides", i, inputs[i].name);
                if st.len() != inputs[i].sizes.len() {
                    return Err(err(format!(
                        "{at}: {} strides for {} sizes",
                        st.len(),
                        inputs[i].sizes.len()
                    )));
                }
                let es = st
                    .iter()
                    .map(|s| int_expr(s, &symbols, &at))
                    .collect::<Result<Vec<_>>>()?;
                inputs[i].strides = InputStrides::Exprs(es);
            }
        }
        // Fill moduli may use any size symbol too.
        for (i, inp) in raw_inputs.iter().enumerate() {
            if let Some(f) = inp.get("fill") {
                let at = format!("input {} (`{}`) fill", i, inputs[i].name);
                let m = f
                    .as_object()
                    .filter(|m| m.len() == 1)
                    .and_then(|m| m.get("mod"))
                    .ok_or_else(|| err(format!("{at}: expected {{\"mod\": EXPR}}")))?;
                inputs[i].fill_mod = Some(int_expr(m, &symbols, &at)?);
            }
        }
        let mut hints = Vec::new();
        if let Some(h) = o.get("hints") {
            let h = h
                .as_object()
                .ok_or_else(|| err("`hints` must be an object"))?;
            for k in h.keys() {
                if !symbols.contains(k) {
                    return Err(err(format!("hint for `{k}`, which is no input's size")));
                }
            }
            for s in &symbols {
                let v = h
                    .get(s)
                    .and_then(Value::as_i64)
                    .filter(|v| *v >= 0)
                    .ok_or_else(|| err(format!("missing or bad hint for symbol `{s}`")))?;
                hints.push(v);
            }
        }
        let mut names: Vec<String> = Vec::new();
        let mut scope: HashMap<String, usize> = HashMap::new();
        let mut declare = |n: &str, what: &str, names: &mut Vec<String>| -> Result<()> {
            if symbols.iter().any(|s| s == n) {
                return Err(err(format!("{what}: `{n}` is both a value and a symbol")));
            }
            if scope.insert(n.to_string(), names.len()).is_some() {
                return Err(err(format!("{what}: `{n}` shadows an earlier value")));
            }
            names.push(n.to_string());
            Ok(())
        };
        for (i, inp) in inputs.iter().enumerate() {
            declare(&inp.name, &format!("input {i}"), &mut names)?;
        }
        let mut steps = Vec::new();
        let raw_steps = o
            .get("steps")
            .and_then(Value::as_array)
            .ok_or_else(|| err("missing `steps` array"))?;
        for (k, st) in raw_steps.iter().enumerate() {
            let lookup = |n: &str| names.iter().position(|x| x == n);
            for step in parse_step(k, st, &symbols, &lookup, &names)? {
                declare(&step.name, &format!("step {}", k + 1), &mut names)?;
                steps.push(step);
            }
        }
        static_dtypes(&inputs, &steps)?;
        let outputs = o
            .get("outputs")
            .and_then(Value::as_array)
            .ok_or_else(|| err("missing `outputs` array"))?
            .iter()
            .map(|n| {
                let n = n
                    .as_str()
                    .ok_or_else(|| err(format!("output {n} is not a name")))?;
                names
                    .iter()
                    .position(|x| x == n)
                    .ok_or_else(|| err(format!("output `{n}` is no value")))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Program {
            name: name.to_string(),
            inputs,
            symbols,
            hints,
            steps,
            outputs,
            names,
            source: v.clone(),
        })
    }

    /// The one-step program of a single-op spec: inputs `x0, x1, ...` (float32), one step
    /// `out = op(x0, ...)`, output `out`.
    pub fn from_spec(spec: &Spec) -> Result<Program> {
        let mut v = spec.to_value();
        let o = v
            .as_object_mut()
            .ok_or_else(|| err("spec is not an object"))?;
        let op = o.remove("op").unwrap_or(Value::Null);
        let mut args = Vec::new();
        if let Some(Value::Array(inputs)) = o.get_mut("inputs") {
            for (i, inp) in inputs.iter_mut().enumerate() {
                if let Some(m) = inp.as_object_mut() {
                    m.insert("name".into(), json!(format!("x{i}")));
                    m.insert("dtype".into(), json!("float32"));
                }
                args.push(json!(format!("x{i}")));
            }
        }
        o.insert(
            "steps".into(),
            json!([{"let": "out", "op": op, "args": args}]),
        );
        o.insert("outputs".into(), json!(["out"]));
        if o.get("name").is_none_or(Value::is_null) {
            o.remove("name");
        }
        Program::from_value(&v)
    }

    /// Whether a step passes a size as a Python number ([`StepArg::SymNumber`]): a run then
    /// evaluates it at its binding ([`Program::number_binding`]).
    pub fn has_sym_numbers(&self) -> bool {
        self.steps
            .iter()
            .any(|st| st.args.iter().any(|a| matches!(a, StepArg::SymNumber(_))))
    }

    /// The binding a run over the concrete layouts `values` (inputs first) evaluates its
    /// Python numbers at: the inputs' sizes where a step passes a size as a number
    /// ([`Program::has_sym_numbers`]), else empty (every number is a constant).
    pub fn number_binding(&self, values: &[super::Value<i64>]) -> Bindings {
        if self.has_sym_numbers() {
            self.bindings_of_layouts(values)
        } else {
            Bindings::new()
        }
    }

    /// The bindings the inputs' layouts give (every symbol is some input's size).
    pub fn bindings_of_layouts(&self, values: &[super::Value<i64>]) -> Bindings {
        let mut pairs = Vec::new();
        for (inp, v) in self.inputs.iter().zip(values) {
            for (e, &z) in inp.sizes.iter().zip(&v.sizes) {
                if let Some(s) = e.as_symbol() {
                    pairs.push((s.to_string(), z));
                }
            }
        }
        Bindings::from_pairs(pairs.iter().map(|(s, z)| (s.as_str(), *z)))
    }

    /// The hints as bindings.
    pub fn hint_bindings(&self) -> Bindings {
        Bindings::from_pairs(
            self.symbols
                .iter()
                .zip(&self.hints)
                .map(|(s, &v)| (s.as_str(), v)),
        )
    }

    /// Bindings from a `{symbol: value}` JSON object; every symbol must be bound.
    pub fn bindings(&self, v: &Map<String, Value>) -> Result<Bindings> {
        let mut pairs = Vec::new();
        for s in &self.symbols {
            let x = v
                .get(s)
                .and_then(Value::as_i64)
                .ok_or_else(|| err(format!("binding has no integer for `{s}`")))?;
            pairs.push((s.as_str(), x));
        }
        Ok(Bindings::from_pairs(pairs))
    }
}

/// Dtypes do not depend on sizes, so every dtype error is static (reported as
/// [`Error::DType`], PyTorch's category, naming the step): each op is planned on
/// 0-dim stand-ins of its arguments' dtypes (the same [`crate::op::plan_op`] the trace
/// runs), each reduction asks its table for the result dtype.
fn static_dtypes(inputs: &[ProgramInput], steps: &[Step]) -> Result<()> {
    use crate::iter::TensorSpec;
    use crate::op::Arg;
    // `None`: a dtype only the trace knows (a structured op's result, whose dtype checks
    // can depend on sizes: an empty tensor skips some); steps reading one are left to it.
    let mut dtypes: Vec<Option<DType>> = inputs.iter().map(|i| Some(i.dtype)).collect();
    for st in steps {
        let of = |a: &StepArg| match a {
            StepArg::Value(i) => dtypes[*i],
            _ => None,
        };
        let unknown = st.args.iter().any(|a| matches!(a, StepArg::Value(i) if dtypes[*i].is_none()));
        let x = st.args.first().and_then(of).unwrap_or(DType::F32);
        let dtype = match &st.op {
            StepOp::Structured(_) => None,
            _ if unknown => None,
            StepOp::View(_) | StepOp::Contiguous | StepOp::Clone => Some(x),
            StepOp::To => Some(st.dtype.unwrap_or(x)),
            StepOp::Reduce(r) => match r.result_dtype(x) {
                Ok(d) => Some(d),
                Err(e) => return Err(in_step(e, &st.label)),
            },
            StepOp::Op(op) => Some({
                let args: Vec<Arg<i64>> = st
                    .args
                    .iter()
                    .map(|a| match a {
                        StepArg::Number(s) => Arg::Scalar(*s),
                        // A dtype never depends on an integer's value.
                        StepArg::SymNumber(_) => Arg::Scalar(Scalar::Int(0)),
                        a => Arg::Tensor(TensorSpec::typed(
                            Vec::new(),
                            Vec::new(),
                            of(a).unwrap_or(DType::F32),
                        )),
                    })
                    .collect();
                match crate::op::plan_op(*op, &args, &crate::op::Dest::New) {
                    Ok(plan) => plan.out_dtype,
                    Err(e @ Error::DType { .. }) => return Err(in_step(e, &st.label)),
                    // Anything else depends on the sizes: the trace decides it.
                    Err(_) => x,
                }
            }),
        };
        dtypes.push(dtype);
    }
    Ok(())
}

fn parse_input(i: usize, v: &Value, symbols: &mut Vec<String>) -> Result<ProgramInput> {
    let o = v
        .as_object()
        .ok_or_else(|| err(format!("input {i}: expected an object")))?;
    for k in o.keys() {
        if !["name", "sizes", "layout", "strides", "dtype", "fill"].contains(&k.as_str()) {
            return Err(err(format!("input {i}: unknown key `{k}`")));
        }
    }
    let name = o
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| err(format!("input {i}: missing `name`")))?
        .to_string();
    let at = format!("input {i} (`{name}`)");
    let mut sizes = Vec::new();
    for (d, s) in o
        .get("sizes")
        .and_then(Value::as_array)
        .ok_or_else(|| err(format!("{at}: missing `sizes`")))?
        .iter()
        .enumerate()
    {
        match s {
            Value::Number(n) => match n.as_i64() {
                Some(k) if k >= 0 => sizes.push(Expr::constant(k)),
                _ => return Err(err(format!("{at} size {d}: `{n}` is not a size"))),
            },
            Value::String(s) => {
                let e = Expr::parse(s).map_err(|e| err(format!("{at} size {d}: {e}")))?;
                let sym = e.as_symbol().ok_or_else(|| {
                    err(format!(
                        "{at} size {d}: `{s}` must be an integer or a symbol"
                    ))
                })?;
                if !symbols.iter().any(|k| k == sym.as_str()) {
                    symbols.push(sym.to_string());
                }
                sizes.push(e);
            }
            other => return Err(err(format!("{at} size {d}: bad size {other}"))),
        }
    }
    let strides = match (o.get("layout"), o.get("strides")) {
        (Some(l), None) => {
            let f = memory_format(l, &at)?;
            let rank = match f {
                MemoryFormat::ChannelsLast => Some(4),
                MemoryFormat::ChannelsLast3d => Some(5),
                MemoryFormat::Preserve => {
                    return Err(err(format!("{at}: `preserve` is not a layout")))
                }
                MemoryFormat::Contiguous => None,
            };
            if let Some(r) = rank.filter(|r| *r != sizes.len()) {
                return Err(err(format!("{at}: layout {} needs rank {r}", f.name())));
            }
            InputStrides::Layout(f)
        }
        // Filled in once every size symbol is known.
        (None, Some(Value::Array(_))) => InputStrides::Exprs(Vec::new()),
        (Some(_), Some(_)) => return Err(err(format!("{at}: give either `layout` or `strides`"))),
        _ => return Err(err(format!("{at}: missing `layout` or `strides`"))),
    };
    let dtype = match o.get("dtype") {
        None => DType::F32,
        Some(d) => {
            DType::parse(d.as_str().unwrap_or_default()).map_err(|e| err(format!("{at}: {e}")))?
        }
    };
    Ok(ProgramInput {
        name,
        sizes,
        strides,
        dtype,
        fill_mod: None,
    })
}

/// A Python number as JSON (non-finite floats as `{"float": ...}`).
fn number_json(v: Scalar) -> Value {
    match v {
        Scalar::Bool(b) => Value::Bool(b),
        Scalar::Int(i) => Value::from(i),
        Scalar::Float(f) if f.is_finite() => Value::from(f),
        Scalar::Float(f) => {
            let name = if f.is_nan() { "nan" } else if f > 0.0 { "inf" } else { "-inf" };
            serde_json::json!({ "float": name })
        }
    }
}

fn step_op(name: &str) -> Option<StepOp> {
    if ViewOp::arity(name).is_some() {
        return Some(StepOp::View(name.to_string()));
    }
    if let Ok(op) = Op::parse(name) {
        return Some(StepOp::Op(op));
    }
    if let Ok(op) = ReductionOp::parse(name) {
        return Some(StepOp::Reduce(op));
    }
    match name {
        "contiguous" => Some(StepOp::Contiguous),
        "clone" => Some(StepOp::Clone),
        "to" => Some(StepOp::To),
        _ => None,
    }
}

/// The arguments of `op` (index in the step's `args`, name, and why) that must be integer
/// constants: where PyTorch's signature takes a plain `int` (a dim, a list of dims, a
/// diagonal offset, an unfold step), a symbolic size cannot be passed at all (PyTorch
/// would specialize it to its value); the slice step is a `SymInt` in PyTorch, but a
/// symbolic step is not traced here. Refused when the spec is parsed, so that no artifact
/// is compiled whose every binding then fails.
fn constant_args(op: &StepOp) -> Vec<(usize, &'static str, &'static str)> {
    const INT: &str = "PyTorch takes a plain `int` here";
    let names: &[&str] = match op {
        StepOp::Reduce(_) => &["dim"],
        StepOp::View(name) => match name.as_str() {
            "permute" => &["dims"],
            "transpose" => &["dim0", "dim1"],
            "slice" => &["dim", "", "", "step"],
            "narrow" | "select" | "unflatten" => &["dim"],
            "unsqueeze" | "squeeze" => &["dim"],
            "flatten" => &["start_dim", "end_dim"],
            "movedim" => &["source", "destination"],
            "diagonal" => &["offset", "dim1", "dim2"],
            "unfold" => &["dimension", "", "step"],
            _ => &[],
        },
        _ => &[],
    };
    names
        .iter()
        .enumerate()
        .filter(|(_, n)| !n.is_empty())
        .map(|(i, &n)| {
            let why = if matches!(op, StepOp::View(v) if v == "slice") && n == "step" {
                "a symbolic slice step is not traced"
            } else {
                INT
            };
            (i + 1, n, why)
        })
        .collect()
}

fn parse_step(
    k: usize,
    v: &Value,
    symbols: &[String],
    lookup: &dyn Fn(&str) -> Option<usize>,
    names: &[String],
) -> Result<Vec<Step>> {
    let o = v
        .as_object()
        .ok_or_else(|| err(format!("step {}: expected an object", k + 1)))?;
    if let Some(sop) = o.get("op").and_then(Value::as_str).and_then(SOp::parse) {
        return parse_structured(k, o, sop, symbols, lookup, names);
    }
    parse_plain_step(k, o, symbols, lookup, names).map(|s| vec![s])
}

/// `step k (op let = op(args))`: how guard reasons and errors name a step.
fn step_label(k: usize, op_name: &str, lets: &str, raw: &[Value]) -> String {
    let shown: Vec<String> = raw
        .iter()
        .map(|a| match a {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect();
    format!("step {} ({op_name} {lets} = {op_name}({}))", k + 1, shown.join(", "))
}

fn parse_plain_step(
    k: usize,
    o: &Map<String, Value>,
    symbols: &[String],
    lookup: &dyn Fn(&str) -> Option<usize>,
    names: &[String],
) -> Result<Step> {
    let name = o
        .get("let")
        .and_then(Value::as_str)
        .ok_or_else(|| err(format!("step {}: missing `let`", k + 1)))?
        .to_string();
    let op_name = o
        .get("op")
        .and_then(Value::as_str)
        .ok_or_else(|| err(format!("step {} (`{name}`): missing `op`", k + 1)))?;
    let raw = o
        .get("args")
        .and_then(Value::as_array)
        .ok_or_else(|| err(format!("step {} (`{name}`): missing `args`", k + 1)))?;
    let label = step_label(k, op_name, &name, raw);
    let at = |j: usize| format!("{label}: argument {j}");
    // Elementwise calls by PyTorch name with keywords (`clamp(x, min=0)`, `gelu(x,
    // approximate="tanh")`, `leaky_relu(x, negative_slope=0.2)`) resolve to a registry row,
    // the keywords' numbers becoming trailing arguments.
    // A keyword's string is an integer expression over the symbols (`max="n-1"`), except for
    // the keywords whose strings are names (`approximate`); its argument is then that
    // expression (`from_keyword`), never a value name.
    let resolved_raw: Vec<Value>;
    let mut from_keyword: Vec<Option<&'static str>> = Vec::new();
    let (op, raw, keywords) = if crate::op::is_elementwise(op_name) && ViewOp::arity(op_name).is_none() {
        let keywords = crate::op::keywords(op_name);
        let kwargs = keywords
            .iter()
            .filter_map(|k| o.get(*k).map(|v| (*k, v)))
            .map(|(k, v)| {
                let kw = match v {
                    Value::String(s) if !crate::op::NAME_KEYWORDS.contains(&k) => {
                        crate::op::Kwarg::Int(s)
                    }
                    v => crate::op::kwarg_from_json(v)
                        .map_err(|e| err(format!("{label}: `{k}`: {e}")))?,
                };
                Ok((k, kw))
            })
            .collect::<Result<Vec<_>>>()?;
        let kwarg = |k: &str| kwargs.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
        let r = crate::op::resolve(op_name, raw.len(), &kwarg)
            .map_err(|e| err(format!("{label}: {e}")))?
            .ok_or_else(|| err(format!("{label}: unknown op `{op_name}`")))?;
        resolved_raw = r
            .args
            .iter()
            .map(|s| match s {
                crate::op::Slot::Given(k) => raw[*k].clone(),
                crate::op::Slot::Number(v) => number_json(*v),
                crate::op::Slot::Keyword(k) => o.get(*k).cloned().unwrap_or(Value::Null),
            })
            .collect();
        from_keyword = r
            .args
            .iter()
            .map(|s| match s {
                crate::op::Slot::Keyword(k) => Some(*k),
                _ => None,
            })
            .collect();
        (StepOp::Op(r.op), &resolved_raw, keywords)
    } else {
        let op = step_op(op_name).ok_or_else(|| err(format!("{label}: unknown op `{op_name}`")))?;
        (op, raw, Vec::new())
    };
    // Keyword arguments.
    let allowed: &[&str] = match &op {
        StepOp::Reduce(_) => &["keepdim"],
        StepOp::Contiguous | StepOp::Clone => &["memory_format"],
        StepOp::To => &["dtype"],
        StepOp::Op(_) => &keywords,
        _ => &[],
    };
    for key in o.keys() {
        if !["let", "op", "args"].contains(&key.as_str()) && !allowed.contains(&key.as_str()) {
            return Err(err(format!("{label}: unknown keyword argument `{key}`")));
        }
    }
    let keepdim = match o.get("keepdim") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => return Err(err(format!("{label}: keepdim must be a bool, got {other}"))),
    };
    let memory_format = match (&op, o.get("memory_format")) {
        (_, Some(m)) => memory_format(m, &label)?,
        (StepOp::Clone, None) => MemoryFormat::Preserve,
        _ => MemoryFormat::Contiguous,
    };
    if op == StepOp::Contiguous && memory_format == MemoryFormat::Preserve {
        return Err(err(format!("{label}: contiguous takes no preserve_format")));
    }
    let dtype = match (&op, o.get("dtype")) {
        (StepOp::To, Some(d)) => Some(
            DType::parse(d.as_str().unwrap_or_default())
                .map_err(|e| err(format!("{label}: {e}")))?,
        ),
        (StepOp::To, None) => return Err(err(format!("{label}: `to` needs `dtype`"))),
        _ => None,
    };
    // Arity.
    let (min, max) = match &op {
        StepOp::View(n) => {
            let a = ViewOp::arity(n).unwrap_or(0) + 1;
            (a, a)
        }
        StepOp::Op(op) => (op.arity(), op.arity()),
        StepOp::Reduce(_) => (1, 2),
        StepOp::Contiguous | StepOp::Clone | StepOp::To => (1, 1),
        StepOp::Structured(_) => return Err(err(format!("{label}: internal: a structured step"))),
    };
    if raw.len() < min || raw.len() > max {
        let want = if min == max {
            format!("{min}")
        } else {
            format!("{min} to {max}")
        };
        return Err(err(format!(
            "{label}: `{op_name}` takes {want} arguments, got {}",
            raw.len()
        )));
    }
    let value = |j: usize, a: &Value| -> Result<usize> {
        let n = a
            .as_str()
            .ok_or_else(|| err(format!("{}: expected a value name, got {a}", at(j))))?;
        lookup(n).ok_or_else(|| {
            err(format!(
                "{}: `{n}` is no value in scope (values: {})",
                at(j),
                names.join(", ")
            ))
        })
    };
    let mut args = Vec::with_capacity(raw.len());
    for (j, a) in raw.iter().enumerate() {
        let arg = match &op {
            _ if j == 0 && !matches!(op, StepOp::Op(_)) => StepArg::Value(value(j, a)?),
            // A keyword's expression (`clamp(x, max="n-1")`): never a value name.
            StepOp::Op(_) if from_keyword.get(j).copied().flatten().is_some() => {
                let k = from_keyword[j].unwrap_or_default();
                StepArg::SymNumber(int_expr(a, symbols, &format!("{label}: `{k}`"))?)
            }
            StepOp::Op(o) => match a {
                Value::String(s) if lookup(s).is_some() => StepArg::Value(value(j, a)?),
                Value::Number(_) | Value::Bool(_) | Value::Object(_) if o.def().takes_number(j) => {
                    StepArg::Number(
                        crate::op::scalar_from_json(a).map_err(|e| err(format!("{}: {e}", at(j))))?,
                    )
                }
                Value::Number(_) | Value::Bool(_) | Value::Object(_) => {
                    return Err(err(format!("{}: {o} takes no Python number here", at(j))))
                }
                // Not a value in scope: an integer expression over the symbols, which PyTorch
                // passes as a SymInt where a Python number goes (`div(x, d)`).
                Value::String(s) if o.def().takes_number(j) => {
                    match parse_int_expr(a, symbols) {
                        Ok(e) => StepArg::SymNumber(e),
                        Err(e) => {
                            return Err(err(format!(
                                "{}: `{s}` is no value in scope (values: {}) and no integer \
                                 expression over the symbols ({e})",
                                at(j),
                                names.join(", ")
                            )))
                        }
                    }
                }
                _ => StepArg::Value(value(j, a)?),
            },
            _ => match a {
                Value::Null => StepArg::Null,
                Value::Array(xs) => StepArg::Ints(
                    xs.iter()
                        .map(|x| int_expr(x, symbols, &at(j)))
                        .collect::<Result<_>>()?,
                ),
                Value::String(s) if lookup(s).is_some() => {
                    return Err(err(format!(
                        "{}: expected an integer, got the value `{s}`",
                        at(j)
                    )))
                }
                _ => StepArg::Int(int_expr(a, symbols, &at(j))?),
            },
        };
        args.push(arg);
    }
    for (j, what, why) in constant_args(&op) {
        let symbolic = match args.get(j) {
            Some(StepArg::Int(e)) => (e.as_const().is_none()).then(|| e.to_string()),
            Some(StepArg::Ints(es)) => es
                .iter()
                .any(|e| e.as_const().is_none())
                .then(|| format!("[{}]", es.iter().map(|e| e.to_string()).collect::<Vec<_>>().join(", "))),
            _ => None,
        };
        if let Some(e) = symbolic {
            return Err(err(format!(
                "{}: `{what}` must be an integer constant, not the expression `{e}` ({why})",
                at(j)
            )));
        }
    }
    Ok(Step {
        name,
        op,
        args,
        keepdim,
        memory_format,
        dtype,
        label,
        kwargs: Vec::new(),
        part: None,
    })
}

/// A structured step (see [`crate::structured`]): tensor arguments by slot (a value name,
/// `null` for an absent optional tensor, an array of names for a list), keywords as keys of
/// the step (integer expressions over the symbols, numbers, names for `dtype` and
/// `memory_format`). A `let` array names the results of a multi-result op: one step per
/// name, each defining its value.
fn parse_structured(
    k: usize,
    o: &Map<String, Value>,
    sop: SOp,
    symbols: &[String],
    lookup: &dyn Fn(&str) -> Option<usize>,
    names: &[String],
) -> Result<Vec<Step>> {
    use crate::structured::Slot;
    let def = sop.def();
    let op_name = def.name;
    let lets: Vec<String> = match o.get("let") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(xs)) if def.results == crate::structured::Results::Views => xs
            .iter()
            .map(|x| {
                x.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| err(format!("step {}: `let` names must be strings", k + 1)))
            })
            .collect::<Result<_>>()?,
        Some(Value::Array(_)) => {
            return Err(err(format!("step {}: {op_name} returns one value: `let` must be a name", k + 1)))
        }
        _ => return Err(err(format!("step {}: missing `let`", k + 1))),
    };
    if lets.is_empty() {
        return Err(err(format!("step {}: an empty `let` array", k + 1)));
    }
    let raw = o
        .get("args")
        .and_then(Value::as_array)
        .ok_or_else(|| err(format!("step {} (`{}`): missing `args`", k + 1, lets[0])))?;
    let label = step_label(k, op_name, &lets.join(", "), raw);
    if raw.len() != def.slots.len() {
        return Err(err(format!(
            "{label}: `{op_name}` takes {} tensor arguments, got {}",
            def.slots.len(),
            raw.len()
        )));
    }
    let value = |j: usize, a: &Value| -> Result<usize> {
        let n = a
            .as_str()
            .ok_or_else(|| err(format!("{label}: argument {j}: expected a value name, got {a}")))?;
        lookup(n).ok_or_else(|| {
            err(format!(
                "{label}: argument {j}: `{n}` is no value in scope (values: {})",
                names.join(", ")
            ))
        })
    };
    let mut args = Vec::with_capacity(raw.len());
    for (j, (a, slot)) in raw.iter().zip(def.slots).enumerate() {
        args.push(match (slot, a) {
            (Slot::Optional, Value::Null) => StepArg::Null,
            (Slot::List, Value::Array(xs)) => StepArg::Values(
                xs.iter().map(|x| value(j, x)).collect::<Result<_>>()?,
            ),
            (Slot::List, other) => {
                return Err(err(format!("{label}: argument {j}: expected a list of value names, got {other}")))
            }
            (_, a) => StepArg::Value(value(j, a)?),
        });
    }
    for key in o.keys() {
        if !["let", "op", "args"].contains(&key.as_str()) && !def.keywords.iter().any(|kw| kw.name == key) {
            return Err(err(format!("{label}: unknown keyword argument `{key}`")));
        }
    }
    let mut kwargs = Vec::with_capacity(def.keywords.len());
    for kw in def.keywords {
        let at = format!("{label}: `{}`", kw.name);
        kwargs.push(match o.get(kw.name) {
            None => StepKw::Default,
            Some(Value::Null) => StepKw::Null,
            Some(Value::String(s)) if kw.is_name => StepKw::Name(s.clone()),
            Some(Value::Bool(b)) => StepKw::Bool(*b),
            Some(Value::Array(xs)) => StepKw::Ints(
                xs.iter().map(|x| int_expr(x, symbols, &at)).collect::<Result<_>>()?,
            ),
            Some(v @ Value::Number(n)) if n.is_f64() => {
                StepKw::Float(
                    crate::op::scalar_from_json(v)
                        .map(Scalar::to_f64)
                        .map_err(|e| err(format!("{at}: {e}")))?,
                )
            }
            Some(v @ Value::Object(_)) => match crate::op::scalar_from_json(v) {
                Ok(Scalar::Float(f)) => StepKw::Float(f),
                _ => return Err(err(format!("{at}: bad value {v}"))),
            },
            Some(v) => StepKw::Int(int_expr(v, symbols, &at)?),
        });
    }
    let n = lets.len();
    let multi = matches!(o.get("let"), Some(Value::Array(_)));
    Ok(lets
        .into_iter()
        .enumerate()
        .map(|(i, name)| Step {
            name,
            op: StepOp::Structured(sop),
            args: args.clone(),
            keepdim: false,
            memory_format: MemoryFormat::Contiguous,
            dtype: None,
            label: label.clone(),
            kwargs: kwargs.clone(),
            part: multi.then_some((i, n)),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::program::HEADS;

    fn with_step(step: &str) -> String {
        HEADS.replace(
            r#"{"let": "z",  "op": "sum",       "args": ["y", [-1]], "keepdim": true}"#,
            step,
        )
    }

    fn rejects(text: &str, needle: &str) {
        let e = Program::from_json(text).unwrap_err().to_string();
        assert!(e.contains(needle), "`{e}` does not mention `{needle}`");
    }

    #[test]
    fn parses_the_readme_example() {
        let p = Program::from_json(HEADS).unwrap();
        assert_eq!(p.symbols, vec!["b", "s"]);
        assert_eq!(p.hints, vec![2, 5]);
        assert_eq!(p.steps.len(), 4);
        assert_eq!(p.outputs, vec![5, 3]);
        assert_eq!(p.steps[2].op, StepOp::Op(Op::Add));
        assert_eq!(p.steps[3].op, StepOp::Reduce(ReductionOp::Sum));
        assert!(p.steps[3].keepdim);
        assert!(p.steps[2].label.starts_with("step 3 (add y = "));
        assert_eq!(p.inputs[1].dtype, DType::F32);
    }

    #[test]
    fn rejects_with_step_and_argument_named() {
        rejects(
            &with_step(r#"{"let": "z", "op": "frobnicate", "args": ["y"]}"#),
            "step 4",
        );
        rejects(
            &with_step(r#"{"let": "z", "op": "add", "args": ["y"]}"#),
            "takes 2 arguments",
        );
        rejects(
            &with_step(r#"{"let": "z", "op": "add", "args": ["y", "nope"]}"#),
            "argument 1: `nope` is no value",
        );
        rejects(
            &with_step(r#"{"let": "q", "op": "relu", "args": ["y"]}"#),
            "shadows",
        );
        rejects(
            &with_step(r#"{"let": "b", "op": "relu", "args": ["y"]}"#),
            "both a value and a symbol",
        );
        rejects(
            &with_step(r#"{"let": "z", "op": "select", "args": ["y", 0, "k-1"]}"#),
            "symbol `k` is no input's size",
        );
        rejects(
            &with_step(r#"{"let": "z", "op": "relu", "args": [1.0]}"#),
            "relu takes no Python number",
        );
        rejects(
            &with_step(r#"{"let": "z", "op": "sum", "args": ["y"], "dtype": "int32"}"#),
            "unknown keyword argument `dtype`",
        );
        rejects(
            &with_step(
                r#"{"let": "z", "op": "neg", "args": ["c"]}, {"let": "c", "op": "gt", "args": ["y", 0]}"#,
            ),
            "no value in scope",
        );
        rejects(
            &with_step(
                r#"{"let": "c", "op": "gt", "args": ["y", 0]}, {"let": "z", "op": "neg", "args": ["c"]}"#,
            ),
            "step 5 (neg z = neg(c)): Negation",
        );
        rejects(
            &with_step(
                r#"{"let": "c", "op": "to", "args": ["y"], "dtype": "int32"}, {"let": "z", "op": "mean", "args": ["c"]}"#,
            ),
            "step 5 (mean z = mean(c))",
        );
        rejects(
            &with_step(r#"{"let": "z", "op": "where", "args": ["y", "y", 0.5]}"#),
            "where expected condition",
        );
        rejects(
            &with_step(r#"{"let": "z", "op": "to", "args": ["y"]}"#),
            "needs `dtype`",
        );
        rejects(
            &with_step(r#"{"let": "z", "op": "transpose", "args": ["y", "y", 1]}"#),
            "argument 1: expected an integer",
        );
    }

    /// A symbolic expression where PyTorch takes a plain `int` is refused when the spec is
    /// parsed, naming the argument; the same step with a constant parses, and symbolic
    /// sizes where PyTorch takes a `SymInt` stay accepted.
    #[test]
    fn symbolic_plain_int_arguments_are_refused_by_name() {
        for (step, what) in [
            (r#"{"let": "z", "op": "transpose", "args": ["y", "s-2", 1]}"#, "argument 1: `dim0`"),
            (r#"{"let": "z", "op": "transpose", "args": ["y", 0, "b"]}"#, "argument 2: `dim1`"),
            (r#"{"let": "z", "op": "sum", "args": ["y", "s-3"]}"#, "argument 1: `dim`"),
            (r#"{"let": "z", "op": "amax", "args": ["y", [0, "s-2"]]}"#, "argument 1: `dim`"),
            (r#"{"let": "z", "op": "unfold", "args": ["y", 0, 1, "s"]}"#, "argument 3: `step`"),
            (r#"{"let": "z", "op": "diagonal", "args": ["y", "s", 0, 1]}"#, "argument 1: `offset`"),
            (r#"{"let": "z", "op": "permute", "args": ["y", [0, 1, "s-1"]]}"#, "argument 1: `dims`"),
            (r#"{"let": "z", "op": "slice", "args": ["y", 0, 0, null, "s"]}"#, "argument 4: `step`"),
            (r#"{"let": "z", "op": "select", "args": ["y", "s-3", 0]}"#, "argument 1: `dim`"),
            (r#"{"let": "z", "op": "flatten", "args": ["y", 0, "s-2"]}"#, "argument 2: `end_dim`"),
            (r#"{"let": "z", "op": "movedim", "args": ["y", "s", 0]}"#, "argument 1: `source`"),
        ] {
            rejects(&with_step(step), what);
            rejects(&with_step(step), "must be an integer constant");
        }
        for step in [
            r#"{"let": "z", "op": "mul", "args": ["y", "s-1"]}"#,
            r#"{"let": "z", "op": "transpose", "args": ["y", 0, 1]}"#,
            r#"{"let": "z", "op": "sum", "args": ["y", [0, -1]]}"#,
            r#"{"let": "z", "op": "select", "args": ["y", 0, "s-1"]}"#,
            r#"{"let": "z", "op": "narrow", "args": ["y", 0, 0, "s-1"]}"#,
            r#"{"let": "z", "op": "slice", "args": ["y", 0, 1, "s", 2]}"#,
            r#"{"let": "z", "op": "unfold", "args": ["y", 0, "s-1", 1]}"#,
        ] {
            let text = with_step(step);
            if let Err(e) = Program::from_json(&text) {
                panic!("{step}: {e}");
            }
        }
    }

    /// A size passed as a Python number (PyTorch's SymInt as a Scalar), positionally or by
    /// keyword, is a `SymNumber` over the symbols; a string that is neither a value nor such
    /// an expression is refused naming both readings.
    #[test]
    fn sizes_as_python_numbers() {
        let p = Program::from_json(&with_step(
            r#"{"let": "z", "op": "div", "args": ["y", "s*b"]}, {"let": "w", "op": "clamp", "args": ["z"], "min": 0, "max": "s-1"}"#,
        ))
        .unwrap();
        assert_eq!(p.steps[3].args[1], StepArg::SymNumber(Expr::parse("s*b").unwrap()));
        assert_eq!(p.steps[4].op, StepOp::Op(Op::ClampScalar));
        assert_eq!(p.steps[4].args[1], StepArg::Number(Scalar::Int(0)));
        assert_eq!(p.steps[4].args[2], StepArg::SymNumber(Expr::parse("s-1").unwrap()));
        assert!(p.has_sym_numbers());
        let b = Bindings::from_pairs([("b", 3), ("s", 4)]);
        assert_eq!(p.steps[3].args[1].number_at(&b).unwrap().unwrap(), Scalar::Int(12));
        // The value is exact: an overflow is an error naming the number, never a wrap.
        let big = Bindings::from_pairs([("b", i64::MAX), ("s", 2)]);
        let e = p.steps[3].args[1].number_at(&big).unwrap().unwrap_err();
        assert!(matches!(e, Error::Overflow { .. }), "{e}");
        assert!(e.to_string().contains("the Python number `b*s`"), "{e}");
        rejects(
            &with_step(r#"{"let": "z", "op": "mul", "args": ["y", "k+1"]}"#),
            "`k+1` is no value in scope (values: x, bias, q, qt, y) and no integer expression \
             over the symbols (symbol `k` is no input's size",
        );
        rejects(
            &with_step(r#"{"let": "z", "op": "mul", "args": ["y", "s+"]}"#),
            "no integer expression over the symbols",
        );
        rejects(
            &with_step(r#"{"let": "z", "op": "clamp", "args": ["y"], "max": "q"}"#),
            "`max`: symbol `q` is no input's size",
        );
        rejects(
            &with_step(r#"{"let": "z", "op": "relu", "args": ["s"]}"#),
            "`s` is no value in scope",
        );
    }

    #[test]
    fn a_single_op_spec_is_a_one_step_program() {
        let spec = Spec::from_json(crate::aot::SEED_SPEC_JSON).unwrap();
        let p = Program::from_spec(&spec).unwrap();
        assert_eq!(p.steps.len(), 1);
        assert_eq!(p.steps[0].op, StepOp::Op(Op::Add));
        assert_eq!(p.symbols, spec.symbols);
        assert_eq!(p.hints, spec.hints);
        assert_eq!(
            p.inputs[0].strides,
            InputStrides::Layout(MemoryFormat::ChannelsLast)
        );
    }
}
