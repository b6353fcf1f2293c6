//! Specs: the dynamic-shape signature a user compiles for (op, input layouts, symbol hints).

use crate::error::{Error, Result};
use crate::int::Int;
use crate::layout::{self, MemoryFormat};
use crate::sym::{Bindings, Expr};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// The elementwise op of a spec: a row of the op table ([`crate::op::TABLE`]), which gives
/// its name and arity.
pub use crate::op::Op;

/// Whether specs take `op`: specs are float32 with an output the iterator allocates, so they
/// take the ops that compute and write float32 from float32 tensor inputs (not the
/// comparisons and logical ops, whose output is bool, nor `where`, whose condition is, nor
/// the bitwise ops, nor ops with scalar parameters).
pub fn is_spec_op(op: Op) -> bool {
    use crate::op::Promotion::*;
    let def = op.def();
    matches!(def.promotion, SameAsInput | Default | IntToFloat)
        && def.params.is_empty()
        && def.kernels.has(crate::DType::F32)
}

/// Parses a spec's op name through the op table.
fn spec_op(name: &str) -> Result<Op> {
    let names = || {
        crate::op::TABLE
            .iter()
            .filter(|d| is_spec_op(d.op))
            .map(|d| d.name)
            .collect::<Vec<_>>()
            .join(", ")
    };
    match Op::parse(name) {
        Ok(op) if is_spec_op(op) => Ok(op),
        Ok(_) => Err(Error::parse(
            "spec",
            format!(
                "op `{name}` does not compute float32 (specs take {})",
                names()
            ),
        )),
        Err(_) => Err(Error::parse(
            "spec",
            format!("unknown op `{name}` (expected one of {})", names()),
        )),
    }
}

/// One size of an input: a constant or a symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SizeSpec {
    /// A fixed size.
    Const(i64),
    /// A size symbol (index into [`Spec::symbols`]).
    Sym(usize),
}

/// How an input's strides are given.
#[derive(Clone, Debug, PartialEq)]
pub enum StrideSpec {
    /// Dense strides of a memory format at the input's sizes.
    Layout(MemoryFormat),
    /// One expression per dimension over the spec's symbols (in elements).
    Exprs(Vec<Expr>),
}

/// One input of a spec.
#[derive(Clone, Debug, PartialEq)]
pub struct InputSpec {
    /// Sizes, outermost first.
    pub sizes: Vec<SizeSpec>,
    /// Strides.
    pub strides: StrideSpec,
}

/// A validated spec. Construct with [`Spec::from_json`] / [`Spec::from_value`].
///
/// Invariants: the op's arity matches the inputs; every symbol has a non-negative hint and
/// can be bound from concrete tensors (it is some input's size, or some input's whole
/// stride); layouts fit their ranks; stride expressions only mention known symbols.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    /// Optional name.
    pub name: Option<String>,
    /// The op.
    pub op: Op,
    /// The inputs.
    pub inputs: Vec<InputSpec>,
    /// Symbol names in order of first appearance (sizes before strides). This order is the
    /// value order of every symbol-value slice in this module.
    pub symbols: Vec<String>,
    /// Hint of each symbol (same order as `symbols`).
    pub hints: Vec<i64>,
}

/// The file format of a spec (also embedded in artifacts).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    op: String,
    inputs: Vec<RawInput>,
    #[serde(default)]
    hints: BTreeMap<String, Value>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawInput {
    sizes: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    layout: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    strides: Option<Vec<Value>>,
}

fn spec_err(message: impl Into<String>) -> Error {
    Error::parse("spec", message)
}

fn format_from_name(input: usize, name: &str) -> Result<MemoryFormat> {
    match name {
        "contiguous" => Ok(MemoryFormat::Contiguous),
        "channels_last" => Ok(MemoryFormat::ChannelsLast),
        "channels_last_3d" => Ok(MemoryFormat::ChannelsLast3d),
        other => Err(spec_err(format!(
            "input {input}: unknown layout `{other}` (expected contiguous, channels_last or channels_last_3d)"
        ))),
    }
}

fn format_name(f: MemoryFormat) -> &'static str {
    match f {
        MemoryFormat::ChannelsLast => "channels_last",
        MemoryFormat::ChannelsLast3d => "channels_last_3d",
        _ => "contiguous",
    }
}

/// Symbol table under construction.
#[derive(Default)]
struct Symbols {
    names: Vec<String>,
}

impl Symbols {
    fn index(&mut self, name: &str) -> usize {
        match self.names.iter().position(|n| n == name) {
            Some(i) => i,
            None => {
                self.names.push(name.to_string());
                self.names.len() - 1
            }
        }
    }
}

impl Spec {
    /// Parses and validates one spec object from JSON text.
    pub fn from_json(text: &str) -> Result<Spec> {
        let v: Value = serde_json::from_str(text).map_err(|e| spec_err(e.to_string()))?;
        Spec::from_value(&v)
    }

    /// Parses and validates one spec object.
    pub fn from_value(v: &Value) -> Result<Spec> {
        let raw: RawSpec =
            serde_json::from_value(v.clone()).map_err(|e| spec_err(e.to_string()))?;
        Spec::from_raw(raw)
    }

    fn from_raw(raw: RawSpec) -> Result<Spec> {
        let op = spec_op(&raw.op)?;
        if raw.inputs.len() != op.arity() {
            return Err(spec_err(format!(
                "op {op} takes {} input(s), the spec gives {}",
                op.arity(),
                raw.inputs.len()
            )));
        }
        let mut syms = Symbols::default();
        // Sizes first, so that symbols are numbered by their first appearance as a size.
        let mut sizes_all = Vec::with_capacity(raw.inputs.len());
        for (i, inp) in raw.inputs.iter().enumerate() {
            let mut sizes = Vec::with_capacity(inp.sizes.len());
            for (d, s) in inp.sizes.iter().enumerate() {
                sizes.push(parse_size(i, d, s, &mut syms)?);
            }
            if sizes.len() > crate::iter::MAX_DIMS {
                return Err(spec_err(format!(
                    "input {i}: rank {} exceeds the maximum of {}",
                    sizes.len(),
                    crate::iter::MAX_DIMS
                )));
            }
            sizes_all.push(sizes);
        }
        let size_symbols = syms.names.len();
        let mut inputs = Vec::with_capacity(raw.inputs.len());
        for (i, (inp, sizes)) in raw.inputs.iter().zip(sizes_all).enumerate() {
            let strides = match (&inp.layout, &inp.strides) {
                (Some(_), Some(_)) => {
                    return Err(spec_err(format!(
                        "input {i}: give either `layout` or `strides`, not both"
                    )))
                }
                (None, None) => {
                    return Err(spec_err(format!(
                        "input {i}: missing `layout` or `strides`"
                    )))
                }
                (Some(name), None) => {
                    let f = format_from_name(i, name)?;
                    let need = match f {
                        MemoryFormat::ChannelsLast => Some(4),
                        MemoryFormat::ChannelsLast3d => Some(5),
                        _ => None,
                    };
                    if let Some(r) = need {
                        if sizes.len() != r {
                            return Err(spec_err(format!(
                                "input {i}: layout {name} needs rank {r}, but the sizes have rank {}",
                                sizes.len()
                            )));
                        }
                    }
                    StrideSpec::Layout(f)
                }
                (None, Some(strides)) => {
                    if strides.len() != sizes.len() {
                        return Err(spec_err(format!(
                            "input {i}: {} strides for {} sizes",
                            strides.len(),
                            sizes.len()
                        )));
                    }
                    let mut exprs = Vec::with_capacity(strides.len());
                    for (d, s) in strides.iter().enumerate() {
                        let e = match s {
                            Value::String(text) => Expr::parse(text)
                                .map_err(|e| spec_err(format!("input {i} stride {d}: {e}")))?,
                            Value::Number(n) => match n.as_i64() {
                                Some(k) => Expr::constant(k),
                                None => {
                                    return Err(spec_err(format!(
                                        "input {i} stride {d}: `{n}` is not an integer"
                                    )))
                                }
                            },
                            other => {
                                return Err(spec_err(format!(
                                "input {i} stride {d}: expected an expression string, got {other}"
                            )))
                            }
                        };
                        if let Some(k) = e.as_const() {
                            if k < 0 {
                                return Err(spec_err(format!(
                                    "input {i} stride {d}: negative stride {k}"
                                )));
                            }
                        }
                        if let Some(s) = e.as_symbol() {
                            syms.index(s.as_str());
                        }
                        exprs.push(e);
                    }
                    StrideSpec::Exprs(exprs)
                }
            };
            inputs.push(InputSpec { sizes, strides });
        }
        // Every symbol of a stride expression must be bindable: a size, or a whole stride
        // somewhere in the spec. Checked once all whole strides are known, so the order of
        // the strides does not matter (`["s*b", "s"]` is `["s", "s*b"]`).
        for (i, inp) in inputs.iter().enumerate() {
            if let StrideSpec::Exprs(es) = &inp.strides {
                for (d, e) in es.iter().enumerate() {
                    for s in e.symbols() {
                        if !syms.names.iter().any(|n| n == s.as_str()) {
                            return Err(spec_err(format!(
                                "input {i} stride {d}: symbol `{s}` in `{e}` is neither a size nor a whole stride, so it cannot be bound from concrete tensors"
                            )));
                        }
                    }
                }
            }
        }
        let _ = size_symbols;
        let mut hints = Vec::with_capacity(syms.names.len());
        for name in &syms.names {
            let v = raw
                .hints
                .get(name)
                .ok_or_else(|| spec_err(format!("missing hint for symbol `{name}`")))?;
            let h = v
                .as_i64()
                .ok_or_else(|| spec_err(format!("hint of `{name}` must be an integer, got {v}")))?;
            if h < 0 {
                return Err(spec_err(format!(
                    "hint of `{name}` is {h}; sizes are non-negative"
                )));
            }
            hints.push(h);
        }
        for name in raw.hints.keys() {
            if !syms.names.iter().any(|n| n == name) {
                return Err(spec_err(format!(
                    "hint given for unknown symbol `{name}` (not used by any input)"
                )));
            }
        }
        Ok(Spec {
            name: raw.name,
            op,
            inputs,
            symbols: syms.names,
            hints,
        })
    }

    /// The spec in its file format (canonical: stride expressions printed canonically).
    pub fn to_value(&self) -> Value {
        let raw = RawSpec {
            name: self.name.clone(),
            op: self.op.name().to_string(),
            inputs: self
                .inputs
                .iter()
                .map(|inp| RawInput {
                    sizes: inp
                        .sizes
                        .iter()
                        .map(|s| match s {
                            SizeSpec::Const(k) => Value::from(*k),
                            SizeSpec::Sym(i) => Value::from(self.symbols[*i].clone()),
                        })
                        .collect(),
                    layout: match &inp.strides {
                        StrideSpec::Layout(f) => Some(format_name(*f).to_string()),
                        StrideSpec::Exprs(_) => None,
                    },
                    strides: match &inp.strides {
                        StrideSpec::Layout(_) => None,
                        StrideSpec::Exprs(es) => {
                            Some(es.iter().map(|e| Value::from(e.to_string())).collect())
                        }
                    },
                })
                .collect(),
            hints: self
                .symbols
                .iter()
                .zip(&self.hints)
                .map(|(s, h)| (s.clone(), Value::from(*h)))
                .collect(),
        };
        serde_json::to_value(raw).unwrap_or(Value::Null)
    }

    /// True when symbol `i` is some input's size; otherwise it is a stride symbol (a whole
    /// stride of some input). Both are non-negative: specs have no negative strides.
    pub fn is_size_symbol(&self, i: usize) -> bool {
        self.inputs
            .iter()
            .any(|inp| inp.sizes.contains(&SizeSpec::Sym(i)))
    }

    /// Index of a symbol.
    pub fn symbol_index(&self, name: &str) -> Option<usize> {
        self.symbols.iter().position(|n| n == name)
    }

    /// The hints as [`Bindings`].
    pub fn hint_bindings(&self) -> Bindings {
        self.bindings(&self.hints)
    }

    /// `values` (in symbol order) as [`Bindings`].
    pub fn bindings(&self, values: &[i64]) -> Bindings {
        Bindings::from_pairs(
            self.symbols
                .iter()
                .map(String::as_str)
                .zip(values.iter().copied()),
        )
    }

    /// Symbol values (in symbol order) from a name → value map: every symbol must be given,
    /// no other name, no negative value.
    pub fn values_from_map<'a>(
        &self,
        pairs: impl IntoIterator<Item = (&'a str, i64)>,
    ) -> Result<Vec<i64>> {
        let mut values = vec![None; self.symbols.len()];
        for (k, v) in pairs {
            let i = self.symbol_index(k).ok_or_else(|| {
                Error::symbol(format!(
                    "unknown symbol `{k}` (the spec's symbols are {})",
                    self.symbols.join(", ")
                ))
            })?;
            if v < 0 {
                return Err(Error::symbol(format!(
                    "symbol `{k}` = {v}: sizes are non-negative"
                )));
            }
            if values[i].is_some_and(|old| old != v) {
                return Err(Error::symbol(format!("symbol `{k}` bound twice")));
            }
            values[i] = Some(v);
        }
        values
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                v.ok_or_else(|| Error::symbol(format!("no value for symbol `{}`", self.symbols[i])))
            })
            .collect()
    }

    /// The inputs at concrete symbol values: `(sizes, strides)` per input, validated
    /// (non-negative sizes and strides, products within i64).
    pub fn concrete_inputs(&self, values: &[i64]) -> Result<Vec<(Vec<i64>, Vec<i64>)>> {
        let b = self.bindings(values);
        self.inputs
            .iter()
            .enumerate()
            .map(|(i, inp)| {
                let sizes: Vec<i64> = inp
                    .sizes
                    .iter()
                    .map(|s| match s {
                        SizeSpec::Const(k) => *k,
                        SizeSpec::Sym(j) => values[*j],
                    })
                    .collect();
                let strides = self.input_strides(i, &sizes, &|e: &Expr| e.eval(&b))?;
                layout::check_layout(&format!("input {i}"), &sizes, &strides)?;
                if let Some(d) = strides.iter().position(|s| *s < 0) {
                    return Err(Error::layout(
                        format!("input {i}"),
                        format!("stride {} at dim {d} is negative", strides[d]),
                    ));
                }
                Ok((sizes, strides))
            })
            .collect()
    }

    /// Strides of input `i` at the given sizes, in any integer type: the layout's dense
    /// strides, or the stride expressions lifted by `lift`.
    pub fn input_strides<I: Int>(
        &self,
        i: usize,
        sizes: &[I],
        lift: &dyn Fn(&Expr) -> Result<I>,
    ) -> Result<Vec<I>> {
        match &self.inputs[i].strides {
            StrideSpec::Layout(f) => layout::strides_for_format(sizes, *f),
            StrideSpec::Exprs(es) => es.iter().map(lift).collect(),
        }
    }
}

fn parse_size(i: usize, d: usize, s: &Value, syms: &mut Symbols) -> Result<SizeSpec> {
    match s {
        Value::Number(n) => match n.as_i64() {
            Some(k) if k >= 0 => Ok(SizeSpec::Const(k)),
            _ => Err(spec_err(format!(
                "input {i} size {d}: `{n}` is not a non-negative integer"
            ))),
        },
        Value::String(name) => {
            let e = Expr::parse(name).map_err(|e| spec_err(format!("input {i} size {d}: {e}")))?;
            if let Some(k) = e.as_const() {
                if k >= 0 {
                    return Ok(SizeSpec::Const(k));
                }
            }
            match e.as_symbol() {
                Some(s) => Ok(SizeSpec::Sym(syms.index(s.as_str()))),
                None => Err(spec_err(format!(
                    "input {i} size {d}: `{name}` must be a non-negative integer or a symbol name"
                ))),
            }
        }
        other => Err(spec_err(format!(
            "input {i} size {d}: expected an integer or a symbol name, got {other}"
        ))),
    }
}

/// The seed spec: a channels-last `[2, c, h, w]` plus a contiguous `[c, h, w]` (the first
/// entry of the public specs; what `symstride demo` and the benches compile).
pub const SEED_SPEC_JSON: &str = r#"{"name":"seed_cl_plus_contig","op":"add","inputs":[{"sizes":[2,"c","h","w"],"layout":"channels_last"},{"sizes":["c","h","w"],"layout":"contiguous"}],"hints":{"c":3,"h":4,"w":5}}"#;

/// The `cover_10_symbols` bench spec: two contiguous rank-10 tensors of the same symbolic
/// shape, one symbol per dimension.
pub const COVER_10_SYMBOLS_SPEC_JSON: &str = r#"{"name":"cover_10_symbols","op":"add","inputs":[{"sizes":["a","b","c","d","e","f","g","h","i","j"],"layout":"contiguous"},{"sizes":["a","b","c","d","e","f","g","h","i","j"],"layout":"contiguous"}],"hints":{"a":2,"b":3,"c":4,"d":5,"e":6,"f":7,"g":8,"h":9,"i":10,"j":11}}"#;

/// The `cover_free_strides_3d` bench spec: a rank-3 tensor with free stride symbols
/// `s, t, u` (their order decides TensorIterator's permutation) plus a contiguous one of the
/// same symbolic shape.
pub const COVER_FREE_STRIDES_3D_SPEC_JSON: &str = r#"{"name":"cover_free_strides_3d","op":"add","inputs":[{"sizes":["a","b","c"],"strides":["s","t","u"]},{"sizes":["a","b","c"],"layout":"contiguous"}],"hints":{"a":3,"b":4,"c":5,"s":1,"t":7,"u":40}}"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_spec_parses_and_round_trips() {
        let s = Spec::from_json(SEED_SPEC_JSON).unwrap();
        assert_eq!(s.symbols, vec!["c", "h", "w"]);
        assert_eq!(s.hints, vec![3, 4, 5]);
        let again = Spec::from_value(&s.to_value()).unwrap();
        assert_eq!(again, s);
        let inputs = s.concrete_inputs(&[3, 4, 5]).unwrap();
        assert_eq!(inputs[0].1, vec![60, 1, 15, 3]);
        assert_eq!(inputs[1].1, vec![20, 5, 1]);
    }

    #[test]
    fn bad_specs_are_clear_errors() {
        let cases = [
            (r#"{"op":"tan","inputs":[],"hints":{}}"#, "unknown op"),
            (
                r#"{"op":"eq","inputs":[],"hints":{}}"#,
                "does not compute float32",
            ),
            (r#"{"op":"neg","inputs":[],"hints":{}}"#, "takes 1"),
            (
                r#"{"op":"neg","inputs":[{"sizes":["a"],"layout":"contiguous"}],"hints":{}}"#,
                "missing hint",
            ),
            (
                r#"{"op":"neg","inputs":[{"sizes":["a"],"layout":"contiguous"}],"hints":{"a":-1}}"#,
                "non-negative",
            ),
            (
                r#"{"op":"neg","inputs":[{"sizes":["a"],"layout":"contiguous"}],"hints":{"a":1,"b":2}}"#,
                "unknown symbol `b`",
            ),
            (
                r#"{"op":"neg","inputs":[{"sizes":["a"],"layout":"channels_last"}],"hints":{"a":1}}"#,
                "rank 4",
            ),
            (
                r#"{"op":"neg","inputs":[{"sizes":["a"],"layout":"nhwc"}],"hints":{"a":1}}"#,
                "unknown layout",
            ),
            (
                r#"{"op":"neg","inputs":[{"sizes":["a"],"strides":["a*"]}],"hints":{"a":1}}"#,
                "stride 0",
            ),
            (
                r#"{"op":"neg","inputs":[{"sizes":["a"],"strides":["1","a"]}],"hints":{"a":1}}"#,
                "1 sizes",
            ),
            (
                r#"{"op":"neg","inputs":[{"sizes":["a"],"strides":["b*a"]}],"hints":{"a":1,"b":1}}"#,
                "cannot be bound",
            ),
            (
                r#"{"op":"neg","inputs":[{"sizes":["a+1"],"layout":"contiguous"}],"hints":{"a":1}}"#,
                "symbol name",
            ),
            (
                r#"{"op":"neg","inputs":[{"sizes":[-2],"layout":"contiguous"}],"hints":{}}"#,
                "non-negative",
            ),
            (
                r#"{"op":"neg","inputs":[{"sizes":[2],"layout":"contiguous","strides":["1"]}],"hints":{}}"#,
                "not both",
            ),
        ];
        for (text, needle) in cases {
            let err = Spec::from_json(text).unwrap_err().to_string();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }
}
