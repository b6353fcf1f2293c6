//! Fuzzes the golden-case reader (`golden::parse_cases`) and the engine behind it.
//!
//! Every parsed case is answered through the layout, broadcast, iterator and view entry points
//! on the concrete path and, for small ranks, on the symbolic path (every size and stride a
//! symbol whose hint is the concrete value, as `symstride conformance --symbolic` does).
//! Invariants: line numbers are 1-based and increasing; no entry point panics; validation
//! errors are the same on both paths; a concrete answer equals the symbolic one evaluated
//! at the hints; every recorded guard holds at the hints.
//!
//! Shared by the cargo-fuzz target `fuzz_targets/golden_case.rs` and by `tests/fuzz_regressions.rs`,
//! which replays `fuzz/seeds/golden_case` and `fuzz/regressions/golden_case` under `cargo test`.
use symstride::golden::{self, Case};
use symstride::iter;
use symstride::layout::{self, StrideMatch};
use symstride::reduce;
use symstride::sym::{Bindings, ShapeEnv, SymInt, SymbolSpec};
use symstride::view::{View, ViewChain};
use symstride::{Int, Result};

/// A result as it can be compared across engines: the value, or the kind of error (the
/// messages name symbols on the symbolic path).
fn show<T: std::fmt::Debug>(r: Result<T>) -> String {
    match r {
        Ok(v) => format!("{v:?}"),
        Err(e) => {
            let d = format!("{e:?}");
            let kind = d.split([' ', '{', '(']).next().unwrap_or("").to_string();
            assert!(!e.to_string().is_empty(), "empty error message");
            format!("Err({kind})")
        }
    }
}

/// Lifts concrete values into an engine's integers: `(name prefix, values, minimum)`.
type Lift<'a, I> = dyn FnMut(&str, &[i64], i64) -> Result<Vec<I>> + 'a;

/// The answers one engine gives for one case, as printable values.
fn answers<I: Int>(
    case: &Case,
    lift: &mut Lift<'_, I>,
    int: &dyn Fn(&I) -> Result<i64>,
    boolean: &dyn Fn(&<I as Int>::Bool) -> Result<bool>,
) -> Vec<String> {
    let ints = |v: &[I]| -> Result<Vec<i64>> { v.iter().map(int).collect() };
    let mut out = Vec::new();
    match case {
        Case::Layout(c) => {
            if let Err(e) = layout::check_layout("input", &c.sizes, &c.strides) {
                return vec![format!("invalid: {e}")];
            }
            let (s, t) = match (lift("s", &c.sizes, 0), lift("t", &c.strides, i64::MIN)) {
                (Ok(s), Ok(t)) => (s, t),
                (Err(e), _) | (_, Err(e)) => return vec![format!("lift: {e}")],
            };
            out.push(show(layout::is_contiguous(&s, &t)));
            out.push(show(
                layout::contiguity_expr(&s, &t).and_then(|b| boolean(&b)),
            ));
            out.push(show(layout::is_channels_last_contiguous_2d(&s, &t)));
            out.push(show(layout::is_channels_last_contiguous_3d(&s, &t)));
            out.push(show(layout::is_non_overlapping_and_dense(&s, &t)));
            out.push(show(
                layout::non_overlapping_and_dense_expr(&s, &t).and_then(|b| boolean(&b)),
            ));
            out.push(show(
                layout::suggest_memory_format(&s, &t, StrideMatch::Like).map(|f| f.name()),
            ));
            out.push(show(
                layout::empty_like_strides(&s, &t).and_then(|v| ints(&v)),
            ));
            out.push(show(
                layout::try_contiguous_strides(&s).and_then(|v| ints(&v)),
            ));
            out.push(show(
                layout::channels_last_strides_2d(&s).and_then(|v| ints(&v)),
            ));
        }
        Case::Broadcast(c) => {
            let mut shapes = Vec::new();
            for (k, shape) in c.shapes.iter().enumerate() {
                if let Err(e) = layout::check_sizes(&format!("operand {k}"), shape) {
                    return vec![format!("invalid: {e}")];
                }
                match lift(&format!("x{k}_"), shape, 0) {
                    Ok(s) => shapes.push(s),
                    Err(e) => return vec![format!("lift: {e}")],
                }
            }
            let refs: Vec<&[I]> = shapes.iter().map(|s| &s[..]).collect();
            out.push(show(layout::infer_size(&refs).and_then(|v| ints(&v))));
        }
        Case::Elementwise(c) => {
            let mut inputs = Vec::new();
            for (k, t) in c.inputs.iter().enumerate() {
                if let Err(e) = layout::check_layout(&format!("x{k}"), &t.sizes, &t.strides) {
                    return vec![format!("invalid: {e}")];
                }
                match (
                    lift(&format!("x{k}_s"), &t.sizes, 0),
                    lift(&format!("x{k}_t"), &t.strides, i64::MIN),
                ) {
                    (Ok(s), Ok(st)) => inputs.push((s, st)),
                    (Err(e), _) | (_, Err(e)) => return vec![format!("lift: {e}")],
                }
            }
            out.push(show(
                iter::elementwise_output(&inputs).and_then(|(s, t)| Ok((ints(&s)?, ints(&t)?))),
            ));
        }
        Case::Op(c) => {
            // Storages are not modelled here (conformance does that); every tensor is its own
            // object, and in place reuses input 0.
            let Ok(op) = symstride::op::Op::parse(&c.op) else {
                return vec!["unknown op".into()];
            };
            let mut lift_t = |k: usize,
                              t: &golden::OpTensor|
             -> std::result::Result<iter::TensorSpec<I>, String> {
                layout::check_layout(&format!("x{k}"), &t.sizes, &t.strides)
                    .map_err(|e| format!("invalid: {e}"))?;
                let dtype =
                    symstride::DType::parse(&t.dtype).map_err(|e| format!("invalid: {e}"))?;
                let s = lift(&format!("x{k}_s"), &t.sizes, 0).map_err(|e| format!("lift: {e}"))?;
                let st = lift(&format!("x{k}_t"), &t.strides, i64::MIN)
                    .map_err(|e| format!("lift: {e}"))?;
                let o =
                    lift(&format!("x{k}_o"), &[t.offset], 0).map_err(|e| format!("lift: {e}"))?;
                Ok(iter::TensorSpec::typed(s, st, dtype)
                    .with_offset(o[0].clone())
                    .with_tensor_id(k as u64))
            };
            let mut args = Vec::new();
            for (k, a) in c.inputs.iter().enumerate() {
                args.push(match a {
                    golden::OpArg::Tensor(t) => match lift_t(k, t) {
                        Ok(t) => symstride::op::Arg::Tensor(t),
                        Err(e) => return vec![e],
                    },
                    golden::OpArg::Scalar { scalar } => symstride::op::Arg::Scalar(
                        match (scalar.as_bool(), scalar.as_i64(), scalar.as_f64()) {
                            (Some(b), _, _) => symstride::tensor::Scalar::Bool(b),
                            (_, Some(i), _) => symstride::tensor::Scalar::Int(i),
                            (_, _, Some(f)) => symstride::tensor::Scalar::Float(f),
                            _ => return vec!["bad scalar".into()],
                        },
                    ),
                    // Tensor lists and absent tensors are not ops of the op table.
                    golden::OpArg::List { .. } | golden::OpArg::Null => return Vec::new(),
                });
            }
            let dest = match (&c.out, c.inplace) {
                (Some(t), _) => match lift_t(99, t) {
                    Ok(t) => symstride::op::Dest::Out(t),
                    Err(e) => return vec![e],
                },
                (None, true) => symstride::op::Dest::InPlace,
                (None, false) => symstride::op::Dest::New,
            };
            out.push(show(symstride::op::plan_op(op, &args, &dest).and_then(
                |p| Ok((ints(p.out_sizes())?, ints(p.out_strides())?, p.out_dtype)),
            )));
        }
        Case::View(c) => {
            let b = &c.base;
            if let Err(e) = layout::check_layout("base", &b.sizes, &b.strides) {
                return vec![format!("invalid: {e}")];
            }
            let lifted = (|| -> Result<_> {
                let view = View::new(
                    lift("s", &b.sizes, 0)?,
                    lift("t", &b.strides, 0)?,
                    lift("o", &[b.offset], 0)?.remove(0),
                )?;
                Ok(ViewChain::new(
                    view,
                    lift("n", &[b.storage_numel], 0)?.remove(0),
                ))
            })();
            let mut chain = match lifted {
                Ok(chain) => chain,
                Err(e) => return vec![format!("lift: {}", show::<()>(Err(e)))],
            };
            for op in &c.ops {
                if let Err(e) = chain.apply(op) {
                    out.push(format!("{} {}", e.category(), show::<()>(Err(e))));
                    return out;
                }
            }
            let v = &chain.view;
            out.push(show(ints(v.sizes()).and_then(|s| {
                Ok((s, ints(v.strides())?, int(v.offset())?, chain.aliases))
            })));
        }
        Case::Reduction(c) => {
            let parsed = (
                reduce::ReductionOp::parse(&c.op),
                symstride::DType::parse(c.input.dtype.as_deref().unwrap_or("float32")),
            );
            let (op, dtype) = match parsed {
                (Ok(op), Ok(d)) => (op, d),
                (Err(e), _) | (_, Err(e)) => return vec![format!("invalid: {e}")],
            };
            let dims = match &c.dim {
                serde_json::Value::Null => reduce::Dims::All,
                serde_json::Value::Number(n) => match n.as_i64() {
                    Some(d) => reduce::Dims::One(d),
                    None => return vec!["invalid dim".into()],
                },
                serde_json::Value::Array(a) => {
                    match a.iter().map(|d| d.as_i64()).collect::<Option<Vec<_>>>() {
                        Some(v) => reduce::Dims::List(v),
                        None => return vec!["invalid dim".into()],
                    }
                }
                _ => return vec!["invalid dim".into()],
            };
            if let Err(e) = layout::check_layout("x", &c.input.sizes, &c.input.strides) {
                return vec![format!("invalid: {e}")];
            }
            let offset = c.input.offset.unwrap_or(0);
            if offset < 0 {
                return vec!["invalid offset".into()];
            }
            let (s, t, o) = match (
                lift("s", &c.input.sizes, 0),
                lift("t", &c.input.strides, i64::MIN),
                lift("o", &[offset], 0),
            ) {
                (Ok(s), Ok(t), Ok(o)) => (s, t, o),
                (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
                    return vec![format!("lift: {e}")]
                }
            };
            let spec = iter::TensorSpec::new(s, t, dtype.element_size()).with_offset(o[0].clone());
            out.push(show(
                reduce::reduction_meta(op, &spec, dtype, &dims, c.keepdim)
                    .and_then(|m| Ok((ints(&m.sizes)?, ints(&m.strides)?, m.dtype, m.mask))),
            ));
        }
        // A program runs its own symbolic trace (checked against the concrete one inside
        // `answer`); both engines must give the same answer and neither may panic.
        Case::Program(c) => {
            out.push(show(
                symstride::program::Program::from_value(&c.spec).and_then(|p| {
                    let b = p.bindings(&c.binding)?;
                    let symbolic = symstride::program::golden::answer(&p, &b, true);
                    let concrete = symstride::program::golden::answer(&p, &b, false)?;
                    match &symbolic {
                        Ok(s) => assert_eq!(s, &concrete, "program: answers differ"),
                        Err(e) => assert!(
                            !e.to_string().contains("differ")
                                && !e.to_string().contains("disagrees")
                                && !e.to_string().contains("reject its own hints"),
                            "program: {e}"
                        ),
                    }
                    Ok(serde_json::Value::Object(concrete).to_string())
                }),
            ));
        }
    }
    out
}

fn rank(case: &Case) -> usize {
    match case {
        Case::Layout(c) => c.sizes.len().max(c.strides.len()),
        Case::Broadcast(c) => c.shapes.iter().map(|s| s.len()).sum(),
        Case::Elementwise(c) => c.inputs.iter().map(|t| t.sizes.len()).sum(),
        Case::Reduction(c) => c.input.sizes.len(),
        Case::View(c) => c.base.sizes.len() + c.ops.len(),
        Case::Program(c) => c.spec.to_string().len() / 16,
        Case::Op(c) => c
            .inputs
            .iter()
            .map(|a| match a {
                golden::OpArg::Tensor(t) => t.sizes.len(),
                golden::OpArg::List { list } => list.iter().map(|t| t.sizes.len()).sum(),
                golden::OpArg::Scalar { .. } | golden::OpArg::Null => 0,
            })
            .sum(),
    }
}

/// Runs every check on one input (panics on a violated invariant).
pub fn check(data: &[u8]) {
    if data.len() > 4096 {
        return;
    }
    let text = String::from_utf8_lossy(data);
    let lines = golden::parse_cases(&text);
    let mut last = 0;
    for line in &lines {
        assert!(line.number > last, "line numbers must increase");
        last = line.number;
        let Ok(case) = &line.case else { continue };
        let concrete = answers::<i64>(case, &mut |_, v, _| Ok(v.to_vec()), &|v| Ok(*v), &|b| {
            Ok(*b)
        });
        // The symbolic path is much slower; keep it to the ranks golden files use.
        if rank(case) > 12 {
            continue;
        }
        let env = ShapeEnv::default();
        let mut n = 0;
        let lift_env = env.clone();
        let mut lift = |prefix: &str, values: &[i64], min: i64| -> Result<Vec<SymInt>> {
            values
                .iter()
                .map(|&v| {
                    n += 1;
                    lift_env.create_symbol(
                        &format!("{prefix}{n}"),
                        v,
                        SymbolSpec {
                            min,
                            ..Default::default()
                        },
                    )
                })
                .collect()
        };
        let hints = std::cell::RefCell::new(Bindings::new());
        let symbolic = {
            let int = |v: &SymInt| {
                *hints.borrow_mut() = env.hints();
                v.eval(&hints.borrow())
            };
            let boolean = |b: &symstride::sym::SymBool| b.eval(&env.hints());
            answers::<SymInt>(case, &mut lift, &int, &boolean)
        };
        assert_eq!(
            concrete, symbolic,
            "concrete vs symbolic answers for line {}",
            line.number
        );
        let guards = env.guard_set();
        let at_hints = guards
            .eval(&env.hints())
            .expect("guards evaluate at the hints");
        assert!(at_hints.is_pass(), "a recorded guard fails at the hints");
    }
}
