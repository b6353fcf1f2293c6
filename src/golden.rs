//! Reading golden conformance cases (`tests/golden/*.jsonl`, copies of `../shared/golden`).
//!
//! Each line of a golden file is one [`Case`] whose `expect` object PyTorch computed. The
//! reader keeps `expect` as raw JSON: a checker answers with exactly the keys the case
//! asks for, so the set of keys is data, not code. Malformed lines are reported with their
//! line number and do not stop the reading of the others.

use crate::{Error, Result};
use serde::Deserialize;
use std::path::Path;

/// The `expect` (or answer) object of a case: key to JSON value.
pub type Expect = serde_json::Map<String, serde_json::Value>;

/// One strided tensor of a case.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorLayout {
    /// Sizes, in elements.
    pub sizes: Vec<i64>,
    /// Strides, in elements.
    pub strides: Vec<i64>,
}

/// A `layout` case: the layout predicates and strides of one tensor.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct LayoutCase {
    /// Sizes, in elements.
    pub sizes: Vec<i64>,
    /// Strides, in elements.
    pub strides: Vec<i64>,
    /// PyTorch's answers by key (see the golden README).
    pub expect: Expect,
}

/// A `broadcast` case: the broadcast shape of several shapes (or an error).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct BroadcastCase {
    /// The operand shapes, in order.
    pub shapes: Vec<Vec<i64>>,
    /// `{"sizes": [...]}` or `{"error": "broadcast"}`.
    pub expect: Expect,
}

/// An `elementwise` case: the output TensorIterator allocates for an op on strided inputs.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ElementwiseCase {
    /// The op.
    pub op: crate::op::Op,
    /// Its inputs, in argument order.
    pub inputs: Vec<TensorLayout>,
    /// `{"sizes": [...], "strides": [...]}` or `{"error": "broadcast"}`.
    pub expect: Expect,
}

/// A tensor of an `op` case: layout, dtype, and the storage it shares with others.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpTensor {
    /// Sizes, in elements.
    pub sizes: Vec<i64>,
    /// Strides, in elements.
    pub strides: Vec<i64>,
    /// Dtype name (`float32` when missing).
    #[serde(default = "default_dtype")]
    pub dtype: String,
    /// Tensors with the same id share one storage; `None`: a storage of its own.
    #[serde(default)]
    pub storage: Option<u64>,
    /// Storage offset in elements.
    #[serde(default)]
    pub offset: i64,
    /// Element values, row-major (index tensors of `ops_real.jsonl`); `None`: filled with ones.
    #[serde(default)]
    pub values: Option<Vec<i64>>,
}

fn default_dtype() -> String {
    "float32".into()
}

/// An argument of an `op` case: a tensor, a Python number, a tensor list or `None`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum OpArg {
    /// `{"scalar": v}`: a Python int, float or bool (or `{"float": "inf"}`).
    Scalar {
        /// The number.
        scalar: serde_json::Value,
    },
    /// `{"list": [T, ...]}`: a list of tensors (`cat`, `stack`).
    List {
        /// The tensors.
        list: Vec<OpTensor>,
    },
    /// A tensor.
    Tensor(OpTensor),
    /// `null`: an absent optional tensor.
    Null,
}

/// An `op` case: the output of an elementwise op with dtypes, `out=` or in-place.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct OpCase {
    /// The op's name (a row of `symstride::op::TABLE`).
    pub op: String,
    /// Its arguments, in order.
    pub inputs: Vec<OpArg>,
    /// Keyword arguments (PyTorch's names; `ops_real.jsonl`).
    #[serde(default)]
    pub kwargs: serde_json::Map<String, serde_json::Value>,
    /// The `out=` tensor, if any.
    #[serde(default)]
    pub out: Option<OpTensor>,
    /// In place: input 0 is the output.
    #[serde(default)]
    pub inplace: bool,
    /// `{"sizes", "strides", "dtype"}` or `{"error": category, "message": ...}`.
    pub expect: Expect,
}

/// The strided tensor a `view` case starts from.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ViewBase {
    /// Sizes, in elements.
    pub sizes: Vec<i64>,
    /// Strides, in elements.
    pub strides: Vec<i64>,
    /// Storage offset, in elements.
    pub offset: i64,
    /// Elements in the storage.
    pub storage_numel: i64,
}

/// A `view` case: movement ops applied left to right to a strided tensor.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ViewCase {
    /// The input tensor.
    pub base: ViewBase,
    /// The ops, in order.
    pub ops: Vec<crate::view::ViewOp>,
    /// `{"sizes", "strides", "offset", "aliases"}` or `{"error": CATEGORY}` (PyTorch's
    /// `message` is moved to [`ViewCase::message`]: it is information, not an answer).
    pub expect: Expect,
    /// PyTorch's error message, when the case expects an error.
    #[serde(skip)]
    pub message: Option<String>,
}

/// The input tensor of a `reduction` case.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReductionInput {
    /// Sizes, in elements.
    pub sizes: Vec<i64>,
    /// Strides, in elements.
    pub strides: Vec<i64>,
    /// Dtype name; `None` means `float32`.
    #[serde(default)]
    pub dtype: Option<String>,
    /// Storage offset in elements (0 when absent).
    #[serde(default)]
    pub offset: Option<i64>,
    /// Storage id shared with other tensors of the case (none in reductions; kept for the
    /// common tensor format).
    #[serde(default)]
    pub storage: Option<serde_json::Value>,
}

/// A `reduction` case: the result PyTorch allocates for `op(input, dim, keepdim)`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ReductionCase {
    /// `sum mean prod amax amin argmax argmin all any`.
    pub op: String,
    /// The input.
    pub input: ReductionInput,
    /// `null`, one dim, or a list of dims.
    #[serde(default)]
    pub dim: serde_json::Value,
    /// `keepdim`.
    pub keepdim: bool,
    /// `{"sizes", "strides", "dtype"}` or `{"error": CATEGORY, "message": ...}`.
    pub expect: Expect,
}

/// A `program` case: a program spec executed at a binding (`programs.jsonl`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ProgramCase {
    /// The program (the golden "Programs" format).
    pub spec: serde_json::Value,
    /// A value per symbol.
    pub binding: serde_json::Map<String, serde_json::Value>,
    /// `{"outputs": {...}}` or `{"error": CATEGORY}`.
    pub expect: Expect,
}

/// One golden case.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Case {
    /// See [`LayoutCase`].
    Layout(LayoutCase),
    /// See [`BroadcastCase`].
    Broadcast(BroadcastCase),
    /// See [`ElementwiseCase`].
    Elementwise(ElementwiseCase),
    /// See [`ReductionCase`].
    Reduction(ReductionCase),
    /// See [`ViewCase`].
    View(ViewCase),
    /// See [`OpCase`].
    Op(OpCase),
    /// A program executed at a binding.
    Program(ProgramCase),
}

impl Case {
    /// The expected answer object.
    pub fn expect(&self) -> &Expect {
        match self {
            Case::Reduction(c) => &c.expect,
            Case::Layout(c) => &c.expect,
            Case::Broadcast(c) => &c.expect,
            Case::Elementwise(c) => &c.expect,
            Case::Op(c) => &c.expect,
            Case::View(c) => &c.expect,
            Case::Program(c) => &c.expect,
        }
    }

    /// The `kind` tag (`"layout"`, `"broadcast"`, `"elementwise"`, `"op"`, `"view"`,
    /// `"reduction"`).
    pub fn kind(&self) -> &'static str {
        match self {
            Case::Reduction(_) => "reduction",
            Case::Layout(_) => "layout",
            Case::Broadcast(_) => "broadcast",
            Case::Elementwise(_) => "elementwise",
            Case::Op(_) => "op",
            Case::View(_) => "view",
            Case::Program(_) => "program",
        }
    }

    /// Parses one JSONL line. Errors are [`Error::Parse`] with serde's position.
    pub fn parse(line: &str) -> Result<Case> {
        let mut case: Case =
            serde_json::from_str(line).map_err(|e| Error::parse("golden case", e.to_string()))?;
        if let Case::Elementwise(c) = &case {
            if c.inputs.len() != c.op.arity() {
                return Err(Error::parse(
                    "golden case",
                    format!(
                        "op {:?} takes {} inputs, got {}",
                        c.op,
                        c.op.arity(),
                        c.inputs.len()
                    ),
                ));
            }
        }
        if let Case::View(c) = &mut case {
            c.message = match c.expect.remove("message") {
                Some(serde_json::Value::String(m)) => Some(m),
                _ => None,
            };
        }
        Ok(case)
    }
}

/// One non-blank line of a golden file: its 1-based line number and the parsed case (or
/// why it could not be parsed).
#[derive(Debug, Clone)]
pub struct Line {
    /// 1-based line number in the file.
    pub number: usize,
    /// The case, or the parse error.
    pub case: Result<Case>,
}

/// Parses golden JSONL text; blank lines are skipped, malformed lines kept as errors.
pub fn parse_cases(text: &str) -> Vec<Line> {
    parse_case_bytes(text.as_bytes())
}

/// Parses golden JSONL bytes like [`parse_cases`]; a line that is not valid UTF-8 is kept
/// as an error (with the byte position) and does not stop the others.
pub fn parse_case_bytes(bytes: &[u8]) -> Vec<Line> {
    bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .filter_map(|(i, raw)| {
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            let case = match std::str::from_utf8(raw) {
                Ok(l) if l.trim().is_empty() => return None,
                Ok(l) => Case::parse(l),
                Err(e) => Err(Error::parse(
                    "golden case",
                    format!("line is not valid UTF-8 ({e})"),
                )),
            };
            Some(Line {
                number: i + 1,
                case,
            })
        })
        .collect()
}

/// Reads and parses a golden JSONL file ([`Error::Io`] if it cannot be read).
pub fn read_cases(path: &Path) -> Result<Vec<Line>> {
    let bytes = std::fs::read(path).map_err(|e| Error::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    Ok(parse_case_bytes(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_each_kind_and_reports_bad_lines() {
        let text = r#"{"kind":"layout","sizes":[1,2],"strides":[2,1],"expect":{"is_contiguous":true}}

{"kind":"broadcast","shapes":[[8,1],[1]],"expect":{"sizes":[8,1]}}
{"kind":"elementwise","op":"add","inputs":[{"sizes":[],"strides":[]},{"sizes":[8],"strides":[1]}],"expect":{"error":"broadcast"}}
{"kind":"layout","sizes":[1,2]}
{"kind":"elementwise","op":"neg","inputs":[],"expect":{}}
not json"#;
        let lines = parse_cases(text);
        assert_eq!(
            lines.iter().map(|l| l.number).collect::<Vec<_>>(),
            vec![1, 3, 4, 5, 6, 7]
        );
        let kinds: Vec<_> = lines
            .iter()
            .map(|l| l.case.as_ref().map(|c| c.kind()).ok())
            .collect();
        assert_eq!(
            kinds,
            vec![
                Some("layout"),
                Some("broadcast"),
                Some("elementwise"),
                None,
                None,
                None
            ]
        );
        match &lines[0].case {
            Ok(Case::Layout(c)) => {
                assert_eq!(c.sizes, vec![1, 2]);
                assert_eq!(
                    c.expect.get("is_contiguous"),
                    Some(&serde_json::Value::Bool(true))
                );
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(matches!(lines[3].case, Err(Error::Parse { .. })));
    }

    #[test]
    fn view_cases_parse_ops_and_set_the_message_aside() {
        let text = r#"{"kind":"view","base":{"sizes":[2,3],"strides":[3,1],"offset":0,"storage_numel":6},"ops":[["slice",1,null,-1,2],["squeeze",null],["view",[-1]]],"expect":{"error":"view","message":"view size is not compatible"}}
{"kind":"view","base":{"sizes":[2],"strides":[1],"offset":0,"storage_numel":2},"ops":[["frobnicate",1]],"expect":{}}"#;
        let lines = parse_cases(text);
        match &lines[0].case {
            Ok(Case::View(c)) => {
                assert_eq!(c.ops.len(), 3);
                assert_eq!(
                    c.ops[0],
                    crate::view::ViewOp::Slice {
                        dim: 1,
                        start: None,
                        end: Some(-1),
                        step: 2
                    }
                );
                assert_eq!(c.expect.len(), 1);
                assert_eq!(c.message.as_deref(), Some("view size is not compatible"));
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(matches!(lines[1].case, Err(Error::Parse { .. })));
    }
}
