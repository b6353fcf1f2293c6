//! Calls by PyTorch name with keyword arguments, resolved to a registry row.
//!
//! Golden op lines and program steps name ops as PyTorch's Python API does: `clamp(x,
//! min=0)`, `gelu(x, approximate="tanh")`, `leaky_relu(x, negative_slope=0.2)`,
//! `square(x)`. The registry has one row per kernel instead (`clamp_min`, `gelu_tanh`,
//! `pow`), with parameters as trailing arguments ([`OpDef::params`]). This module is the one
//! place where the Python spelling becomes a row and an argument list, so the conformance
//! checker, the program parser and the Python package resolve a call alike.

use super::registry::Op;
use crate::error::{Error, Result};
use crate::tensor::Scalar;
use serde_json::Value;

/// A keyword argument's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kwarg<'a> {
    /// A Python number (`{"float": "inf"}` included).
    Number(Scalar),
    /// Python `None`.
    Null,
    /// A string (`approximate="tanh"`).
    Name(&'a str),
    /// An integer expression over a program's symbols (`clamp(x, max="n-1")`: a size passed
    /// as a Python number). The caller resolves it: its argument is [`Slot::Keyword`].
    Int(&'a str),
}

/// One argument of a resolved call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Slot {
    /// The caller's positional argument `k` (a tensor or a Python number).
    Given(usize),
    /// A number a keyword supplied (or its default).
    Number(Scalar),
    /// The number of this keyword, given as [`Kwarg::Int`] (the caller resolves it).
    Keyword(&'static str),
}

/// A call resolved to a registry row: the op and its arguments in the row's order.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    /// The row.
    pub op: Op,
    /// Its arguments.
    pub args: Vec<Slot>,
}

/// A Python number from JSON: an integer, a float, a bool, or `{"float": "inf" | "-inf" |
/// "nan"}` (JSON has no literal for the non-finite floats).
pub fn scalar_from_json(v: &Value) -> Result<Scalar> {
    let bad = || Error::parse("number", format!("expected a number, got {v}"));
    match v {
        Value::Bool(b) => Ok(Scalar::Bool(*b)),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Ok(Scalar::Int(i)),
            None => n.as_f64().map(Scalar::Float).ok_or_else(bad),
        },
        Value::Object(o) if o.len() == 1 => match o.get("float").and_then(Value::as_str) {
            Some("inf") => Ok(Scalar::Float(f64::INFINITY)),
            Some("-inf") => Ok(Scalar::Float(f64::NEG_INFINITY)),
            Some("nan") => Ok(Scalar::Float(f64::NAN)),
            _ => Err(bad()),
        },
        _ => Err(bad()),
    }
}

/// A keyword argument from JSON (`null`, a number, or a string).
pub fn kwarg_from_json(v: &Value) -> Result<Kwarg<'_>> {
    match v {
        Value::Null => Ok(Kwarg::Null),
        Value::String(s) => Ok(Kwarg::Name(s)),
        other => scalar_from_json(other).map(Kwarg::Number),
    }
}

/// The keyword arguments an elementwise call by `name` takes (besides its positional ones).
pub fn keywords(name: &str) -> Vec<&'static str> {
    match name {
        "clamp" => vec!["min", "max"],
        "gelu" => vec!["approximate"],
        _ => match Op::parse(name) {
            Ok(op) => op.def().params.iter().map(|p| p.name).collect(),
            Err(_) => Vec::new(),
        },
    }
}

/// The keywords of elementwise calls whose strings are names (`approximate="tanh"`); a string
/// given to any other keyword is an integer expression ([`Kwarg::Int`]) in a program step.
pub const NAME_KEYWORDS: &[&str] = &["approximate"];

/// Whether `name` is an elementwise call this module resolves.
pub fn is_elementwise(name: &str) -> bool {
    matches!(name, "clamp" | "gelu" | "square") || Op::parse(name).is_ok()
}

/// Resolves `name(n_given positional arguments, **kwargs)` to a registry row. `kwarg`
/// answers a keyword's value (`None` when absent). Unknown names give `Ok(None)`; a keyword
/// value PyTorch rejects gives its error (an [`Error::Argument`]).
pub fn resolve<'a>(
    name: &str,
    n_given: usize,
    kwarg: &dyn Fn(&str) -> Option<Kwarg<'a>>,
) -> Result<Option<Resolved>> {
    let number = |key: &'static str| -> Result<Option<Slot>> {
        match kwarg(key) {
            None | Some(Kwarg::Null) => Ok(None),
            Some(Kwarg::Number(s)) => Ok(Some(Slot::Number(s))),
            Some(Kwarg::Int(_)) => Ok(Some(Slot::Keyword(key))),
            Some(Kwarg::Name(n)) => Err(Error::parse(
                name.to_string(),
                format!("`{key}` must be a number, got \"{n}\""),
            )),
        }
    };
    let given: Vec<Slot> = (0..n_given).map(Slot::Given).collect();
    let with = |op: Op, extra: &[Slot]| {
        let mut args = given.clone();
        args.extend_from_slice(extra);
        Some(Resolved { op, args })
    };
    Ok(match name {
        "clamp" if n_given == 1 => match (number("min")?, number("max")?) {
            (Some(lo), Some(hi)) => with(Op::ClampScalar, &[lo, hi]),
            (Some(lo), None) => with(Op::ClampMin, &[lo]),
            (None, Some(hi)) => with(Op::ClampMax, &[hi]),
            (None, None) => {
                return Err(Error::argument(
                    "torch.clamp: At least one of 'min' or 'max' must not be None",
                ))
            }
        },
        "gelu" => match kwarg("approximate") {
            None | Some(Kwarg::Name("none")) => with(Op::Gelu, &[]),
            Some(Kwarg::Name("tanh")) => with(Op::GeluTanh, &[]),
            Some(_) => {
                return Err(Error::argument(
                    "approximate argument must be either none or tanh.",
                ))
            }
        },
        "square" => with(Op::Pow, &[Slot::Number(Scalar::Int(2))]),
        _ => {
            let Ok(op) = Op::parse(name) else {
                return Ok(None);
            };
            let def = op.def();
            let mut extra = Vec::new();
            for p in def.params {
                if p.pos < n_given {
                    continue;
                }
                let v = match (number(p.name)?, p.default) {
                    (Some(v), _) => v,
                    (None, Some(d)) => Slot::Number(Scalar::Float(d)),
                    (None, None) => {
                        return Err(Error::parse(
                            name.to_string(),
                            format!("missing keyword argument `{}`", p.name),
                        ))
                    }
                };
                extra.push(v);
            }
            with(op, &extra)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kw<'a>(pairs: &'a [(&'a str, Kwarg<'a>)]) -> impl Fn(&str) -> Option<Kwarg<'a>> + 'a {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| *v)
    }

    #[test]
    fn python_spellings_resolve_to_rows() {
        let one = |name: &str, pairs: &[(&str, Kwarg<'_>)]| {
            resolve(name, 1, &kw(pairs)).unwrap().unwrap()
        };
        let n = |v: f64| Kwarg::Number(Scalar::Float(v));
        assert_eq!(one("clamp", &[("min", n(0.0))]).op, Op::ClampMin);
        assert_eq!(one("clamp", &[("min", Kwarg::Null), ("max", n(1.0))]).op, Op::ClampMax);
        let both = one("clamp", &[("min", n(0.0)), ("max", n(1.0))]);
        assert_eq!(both.op, Op::ClampScalar);
        assert_eq!(both.args[2], Slot::Number(Scalar::Float(1.0)));
        assert_eq!(one("gelu", &[("approximate", Kwarg::Name("tanh"))]).op, Op::GeluTanh);
        assert_eq!(one("gelu", &[]).op, Op::Gelu);
        let sq = one("square", &[]);
        assert_eq!((sq.op, sq.args[1]), (Op::Pow, Slot::Number(Scalar::Int(2))));
        let lr = one("leaky_relu", &[]);
        assert_eq!(lr.args[1], Slot::Number(Scalar::Float(0.01)));
        let ht = one("hardtanh", &[("min_val", n(0.0)), ("max_val", n(6.0))]);
        assert_eq!(ht.args, vec![Slot::Given(0), Slot::Number(Scalar::Float(0.0)), Slot::Number(Scalar::Float(6.0))]);
        assert!(resolve("nonsense", 1, &kw(&[])).unwrap().is_none());
        let err = resolve("clamp", 1, &kw(&[])).unwrap_err();
        assert_eq!(err.category(), "error");
        let err = resolve("gelu", 1, &kw(&[("approximate", Kwarg::Name("erf"))])).unwrap_err();
        assert_eq!(err.category(), "error");
        assert!(resolve("masked_fill", 2, &kw(&[])).is_err(), "value has no default");
        // A keyword given as an expression chooses the row as a number would; its argument
        // is left to the caller.
        let sym = one("clamp", &[("min", n(0.0)), ("max", Kwarg::Int("n-1"))]);
        assert_eq!(sym.op, Op::ClampScalar);
        assert_eq!(sym.args[2], Slot::Keyword("max"));
        assert_eq!(one("clamp", &[("max", Kwarg::Int("n"))]).op, Op::ClampMax);
        assert_eq!(keywords("hardtanh"), ["min_val", "max_val"]);
    }

    #[test]
    fn non_finite_numbers_parse() {
        let v: Value = serde_json::json!({"float": "-inf"});
        assert_eq!(scalar_from_json(&v).unwrap(), Scalar::Float(f64::NEG_INFINITY));
        let v: Value = serde_json::json!({"float": "nan"});
        assert!(matches!(scalar_from_json(&v).unwrap(), Scalar::Float(f) if f.is_nan()));
        assert_eq!(scalar_from_json(&serde_json::json!(3)).unwrap(), Scalar::Int(3));
        assert_eq!(scalar_from_json(&serde_json::json!(2.5)).unwrap(), Scalar::Float(2.5));
        assert!(scalar_from_json(&serde_json::json!({"float": "big"})).is_err());
        assert!(scalar_from_json(&serde_json::json!("1")).is_err());
    }
}
