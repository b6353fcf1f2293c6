//! Answers to golden `"kind": "program"` lines and their comparison with PyTorch's.
//!
//! Values are computed through the kernels ([`super::run_program`]); the per-element
//! reference executor ([`super::execute`]) is the oracle the tests compare that with.
//!
//! The answer is `{"outputs": {name: {"sizes", "strides", "dtype", "offset", "values"}}}`
//! (values in row-major logical order, `null` above 4096 elements, non-finite floats as the
//! strings `"nan"`, `"inf"`, `"-inf"`) or `{"error": CATEGORY, "message": ...}`. Layouts
//! compare exactly, float values with PyTorch's relative and absolute tolerance of 1e-5.

use super::exec::MAX_ELEMENTS;
use super::run::{fill_inputs, run_program, tensor_values};
use super::spec::Program;
use super::trace::{concrete, trace, Value as Layout};
use crate::kernel::ExecConfig;
use crate::op::AnyTensor;
use crate::sym::Bindings;
use crate::tensor::Scalar;
use crate::{Error, Result};
use serde_json::{json, Map, Value};

/// Outputs with at most this many elements carry their values.
pub const MAX_VALUES: usize = 4096;

/// Relative and absolute tolerance of float values.
pub const TOLERANCE: f64 = 1e-5;

fn scalar_json(s: Scalar) -> Value {
    match s {
        Scalar::Bool(b) => json!(b),
        Scalar::Int(i) => json!(i),
        Scalar::Float(f) if f.is_nan() => json!("nan"),
        Scalar::Float(f) if f.is_infinite() => json!(if f > 0.0 { "inf" } else { "-inf" }),
        Scalar::Float(f) => json!(f),
    }
}

/// Whether an error is an answer (PyTorch rejects the program at this binding) rather than
/// a failure of the engine.
fn is_answer(e: &Error) -> bool {
    matches!(
        e,
        Error::Index { .. }
            | Error::Shape { .. }
            | Error::View { .. }
            | Error::Expand { .. }
            | Error::DType { .. }
            | Error::Broadcast { .. }
            | Error::MemoryOverlap { .. }
            | Error::Invalid { .. }
            | Error::Argument { .. }
    )
}

/// The concrete layouts at `b` and the outputs computed through the kernels
/// ([`run_program`]) on inputs made by the fill formula. Storages are limited to
/// [`MAX_ELEMENTS`] elements, as in the reference executor.
fn run(p: &Program, b: &Bindings) -> Result<(Vec<Layout<i64>>, Vec<AnyTensor>)> {
    let layouts = concrete(p, b)?;
    if let Some(l) = layouts.iter().find(|l| l.storage_numel > MAX_ELEMENTS) {
        return Err(Error::Limit {
            message: format!(
                "a storage of {} elements exceeds the executor's limit of {MAX_ELEMENTS}",
                l.storage_numel
            ),
        });
    }
    let inputs = fill_inputs(p, &layouts)?;
    let outs = run_program(p, &layouts, inputs, &ExecConfig::default())?;
    Ok((layouts, outs))
}

/// Answers a program line: executes `p` at `b`. With `symbolic`, the layouts reported are
/// the symbolic trace (at `b` as hints) instantiated at `b`, and they must equal the
/// concrete ones. `Err` only for engine failures (not a golden category).
pub fn answer(p: &Program, b: &Bindings, symbolic: bool) -> Result<Map<String, Value>> {
    let mut got = Map::new();
    let ex = match run(p, b) {
        Ok(ex) => ex,
        Err(e) if is_answer(&e) => {
            if symbolic {
                // The trace must stop with the same category; an error of the values (an
                // index out of range: the layouts trace fine, the kernel refuses to read)
                // is the run's, after a trace whose layouts are the concrete ones.
                let t = trace(p, b)?;
                match (&t.values, concrete(p, b)) {
                    (Err(te), _) if te.category() == e.category() => {}
                    (Ok(_), Ok(layouts)) => {
                        if !t.admits(b)? || t.instantiate(b)? != layouts {
                            return Err(Error::invalid(
                                "symbolic layouts at the binding differ from the concrete trace",
                            ));
                        }
                    }
                    (other, _) => {
                        return Err(Error::invalid(format!(
                            "symbolic trace disagrees with the concrete error {e}: {:?}",
                            other.as_ref().err()
                        )))
                    }
                }
            }
            got.insert("error".into(), json!(e.category()));
            got.insert("message".into(), json!(e.to_string()));
            return Ok(got);
        }
        Err(e) => return Err(e),
    };
    let layouts = if symbolic {
        let t = trace(p, b)?;
        if !t.admits(b)? {
            return Err(Error::invalid("the trace's guards reject its own hints"));
        }
        let l = t.instantiate(b)?;
        if l != ex.0 {
            return Err(Error::invalid(
                "symbolic layouts at the binding differ from the concrete trace",
            ));
        }
        l
    } else {
        ex.0.clone()
    };
    let mut outs = Map::new();
    for (&o, t) in p.outputs.iter().zip(&ex.1) {
        let l = &layouts[o];
        let numel: i64 = l.sizes.iter().product();
        let values = if numel as usize <= MAX_VALUES {
            Value::Array(tensor_values(t)?.into_iter().map(scalar_json).collect())
        } else {
            Value::Null
        };
        outs.insert(
            p.names[o].clone(),
            json!({
                "sizes": l.sizes,
                "strides": l.strides,
                "dtype": l.dtype.name(),
                "offset": l.offset,
                "values": values,
            }),
        );
    }
    got.insert("outputs".into(), Value::Object(outs));
    Ok(got)
}

fn value_matches(got: &Value, want: &Value, float: bool) -> bool {
    match (got, want) {
        (Value::Number(g), Value::Number(w)) if float => {
            let (g, w) = (
                g.as_f64().unwrap_or(f64::NAN),
                w.as_f64().unwrap_or(f64::NAN),
            );
            (g - w).abs() <= TOLERANCE + TOLERANCE * w.abs()
        }
        (Value::Number(g), Value::Number(w)) => match (g.as_i64(), w.as_i64()) {
            (Some(a), Some(b)) => a == b,
            _ => g.as_f64() == w.as_f64(),
        },
        _ => got == want,
    }
}

fn output_matches(got: &Value, want: &Value) -> bool {
    let (Some(g), Some(w)) = (got.as_object(), want.as_object()) else {
        return false;
    };
    if g.len() != w.len() {
        return false;
    }
    let float = w
        .get("dtype")
        .and_then(Value::as_str)
        .is_some_and(|d| d.starts_with("float"));
    w.iter().all(|(k, wv)| {
        let Some(gv) = g.get(k) else { return false };
        if k != "values" {
            return gv == wv;
        }
        match (gv.as_array(), wv.as_array()) {
            (Some(ga), Some(wa)) => {
                ga.len() == wa.len() && ga.iter().zip(wa).all(|(a, b)| value_matches(a, b, float))
            }
            _ => gv == wv,
        }
    })
}

/// Whether an answer matches a program line's `expect` (errors by category).
pub fn matches(got: &Map<String, Value>, expect: &Map<String, Value>) -> bool {
    if let Some(e) = expect.get("error") {
        return got.get("error") == Some(e);
    }
    match (got.get("outputs"), expect.get("outputs")) {
        (Some(Value::Object(g)), Some(Value::Object(w))) => {
            g.len() == w.len()
                && w.iter()
                    .all(|(k, wv)| g.get(k).is_some_and(|gv| output_matches(gv, wv)))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerances() {
        let out = |v: Value| json!({"outputs": {"y": {"dtype": "float32", "values": v}}});
        let m =
            |g: Value, w: Value| matches(out(g).as_object().unwrap(), out(w).as_object().unwrap());
        assert!(m(json!([1.0, "nan"]), json!([1.000001, "nan"])));
        assert!(!m(json!([1.0]), json!([1.001])));
        assert!(!m(json!([1.0, 2.0]), json!([1.0])));
        assert!(!m(json!(["inf"]), json!(["-inf"])));
        let ints = |v: Value| json!({"outputs": {"y": {"dtype": "int64", "values": v}}});
        assert!(!matches(
            ints(json!([1])).as_object().unwrap(),
            ints(json!([2])).as_object().unwrap()
        ));
    }
}
