//! The op set on real tensors: every op of the table and every dtype, kernel against the
//! naive multi-index reference of the table, on random strided, overlapping-input and
//! broadcast layouts with Python numbers, 1-3 threads; `out=` and in-place results against
//! the out-of-place result.

use proptest::prelude::*;
use symstride::kernel::ExecConfig;
use symstride::op::{self, narrow, AnyTensor, Input, Op, Output, Promotion};
use symstride::tensor::{Element, Scalar, Storage, Tensor};
use symstride::{DType, Error};

/// SplitMix64: a small deterministic generator for layouts and values.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }
}

fn value(rng: &mut Rng, dtype: DType) -> Scalar {
    match dtype {
        DType::Bool => Scalar::Bool(rng.chance(1, 2)),
        DType::U8 => Scalar::Int(rng.below(256) as i64),
        DType::I32 | DType::I64 => Scalar::Int(rng.below(41) as i64 - 20),
        DType::F32 | DType::F64 => {
            let specials = [0.0, -0.0, f64::NAN, f64::INFINITY, -1.0];
            if rng.chance(1, 16) {
                Scalar::Float(specials[rng.below(5) as usize])
            } else {
                Scalar::Float((rng.below(2001) as f64 - 1000.0) / 250.0)
            }
        }
    }
}

fn filled<T: Element>(rng: &mut Rng, len: usize) -> Storage<T> {
    Storage::from_vec(
        (0..len)
            .map(|_| T::from_scalar(value(rng, T::DTYPE)))
            .collect(),
    )
}

/// A tensor of `sizes` over a fresh storage with random values: a random dimension order,
/// sometimes gaps (a step), sometimes stride 0 (an expanded, overlapping input) or a
/// sliding-window stride, and an offset.
fn random_tensor(rng: &mut Rng, dtype: DType, sizes: &[i64], overlapping: bool) -> AnyTensor {
    let n = sizes.len();
    let mut order: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        order.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let mut strides = vec![0i64; n];
    let mut next = 1i64;
    for &d in &order {
        strides[d] = next;
        next *= sizes[d].max(1) + if rng.chance(1, 4) { 1 } else { 0 };
    }
    if overlapping && n > 0 {
        let d = rng.below(n as u64) as usize;
        strides[d] = if rng.chance(1, 2) { 0 } else { 1 };
    }
    let offset = rng.below(3) as i64;
    let extent = offset
        + sizes
            .iter()
            .zip(&strides)
            .map(|(&z, &s)| (z - 1).max(0) * s)
            .sum::<i64>()
        + 1;
    macro_rules! make {
        ($t:ty) => {
            Tensor::<$t>::from_storage(filled(rng, extent as usize), sizes, &strides, offset)
                .unwrap()
                .into()
        };
    }
    match dtype {
        DType::Bool => make!(bool),
        DType::U8 => make!(u8),
        DType::I32 => make!(i32),
        DType::I64 => make!(i64),
        DType::F32 => make!(f32),
        DType::F64 => make!(f64),
    }
}

/// Sizes of an argument that broadcasts to `shape`: some leading dims dropped, some set to 1.
fn broadcastable(rng: &mut Rng, shape: &[i64]) -> Vec<i64> {
    let drop = rng.below(shape.len() as u64 + 1) as usize;
    shape[drop..]
        .iter()
        .map(|&z| if rng.chance(1, 4) { 1 } else { z })
        .collect()
}

fn random_inputs(rng: &mut Rng, op: Op, dtypes: &[DType], shape: &[i64]) -> Vec<Input> {
    let def = op.def();
    (0..def.arity)
        .map(|k| {
            if def.is_param(k) {
                // Parameters in range for every dtype, ordered bounds for hardtanh.
                let v = match (op, k) {
                    (Op::Hardtanh, 1) => -1.5 + rng.below(3) as f64,
                    (Op::Hardtanh, _) => 1.0 + rng.below(4) as f64,
                    _ => rng.below(8) as f64 * 0.5,
                };
                return Input::Scalar(if rng.chance(1, 2) && v.fract() == 0.0 {
                    Scalar::Int(v as i64)
                } else {
                    Scalar::Float(v)
                });
            }
            if def.scalar_args.contains(&k) && rng.chance(1, 3) {
                let kind = [DType::Bool, DType::I64, DType::F64][rng.below(3) as usize];
                return Input::Scalar(value(rng, kind));
            }
            let sizes = if k == 0 && rng.chance(1, 2) {
                shape.to_vec()
            } else {
                broadcastable(rng, shape)
            };
            let overlapping = rng.chance(1, 3);
            Input::Tensor(random_tensor(rng, dtypes[k], &sizes, overlapping))
        })
        .collect()
}

/// Equal, or within 1e-5 relative, or within the op's tolerance relative to `1 + |want|`
/// (functions computed in float32 with a cancellation, as PyTorch computes them: `gelu`
/// near -3 loses digits in `1 + erf(x/√2)` there too).
fn close(got: Scalar, want: Scalar, tolerance: f64) -> bool {
    match (got, want) {
        (Scalar::Float(a), Scalar::Float(b)) => {
            (a.is_nan() && b.is_nan())
                || a == b
                || (a - b).abs() <= 1e-5 * a.abs().max(b.abs()).max(1e-30)
                || (a - b).abs() <= tolerance * (1.0 + b.abs())
        }
        _ => got == want,
    }
}

fn sizes_of(t: &AnyTensor) -> Vec<i64> {
    t.sizes().to_vec()
}

/// Every element of `out` against the table's reference, by multi-index.
fn check_against_reference(op: Op, inputs: &[Input], out: &AnyTensor) -> Result<(), String> {
    let shape = sizes_of(out);
    let plan_inputs: Vec<op::Arg<i64>> = inputs
        .iter()
        .map(|a| match a {
            Input::Tensor(t) => op::Arg::Tensor(symstride::iter::TensorSpec::typed(
                t.sizes().to_vec(),
                t.strides().to_vec(),
                t.dtype(),
            )),
            Input::Scalar(s) => op::Arg::Scalar(*s),
        })
        .collect();
    let p = op::plan_op(op, &plan_inputs, &op::Dest::New).map_err(|e| e.to_string())?;
    let compute = p.compute_dtype;
    let kernel_out = match op.def().promotion {
        Promotion::Comparison | Promotion::LogicalNot => DType::Bool,
        _ => compute,
    };
    let numel: i64 = shape.iter().product();
    let mut index = vec![0i64; shape.len()];
    for _ in 0..numel {
        let args: Vec<Scalar> = inputs
            .iter()
            .enumerate()
            .map(|(k, a)| {
                let v = match a {
                    Input::Scalar(s) => *s,
                    Input::Tensor(t) => {
                        let off = shape.len() - t.sizes().len();
                        let idx: Vec<i64> = t
                            .sizes()
                            .iter()
                            .enumerate()
                            .map(|(d, &z)| if z == 1 { 0 } else { index[off + d] })
                            .collect();
                        t.get(&idx).unwrap()
                    }
                };
                narrow(v, op.def().input_dtype(k, compute))
            })
            .collect();
        let want = narrow(narrow((op.def().reference)(&args), kernel_out), out.dtype());
        let got = out.get(&index).unwrap();
        if !close(got, want, op.def().tolerance) {
            return Err(format!(
                "{op} at {index:?}: got {got:?}, reference {want:?} (args {args:?}, compute {compute})"
            ));
        }
        for d in (0..shape.len()).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    Ok(())
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

/// Small grain so that even these small tensors are split across the threads.
fn cfg() -> ExecConfig {
    ExecConfig {
        grain_size: 4,
        ..ExecConfig::default()
    }
}

fn random_shape(rng: &mut Rng) -> Vec<i64> {
    let rank = rng.below(5) as usize;
    (0..rank)
        .map(|_| {
            if rng.chance(1, 12) {
                0
            } else {
                1 + rng.below(6) as i64
            }
        })
        .collect()
}

/// One random call: `Ok(true)` when it ran and matched, `Ok(false)` when PyTorch rejects the
/// call (planned error), `Err` on a mismatch.
fn one_case(op: Op, dtypes: &[DType], seed: u64, threads: usize) -> Result<bool, String> {
    let mut rng = Rng(seed);
    let shape = random_shape(&mut rng);
    let inputs = random_inputs(&mut rng, op, dtypes, &shape);
    let out = pool(threads).install(|| op::call(op, &inputs, Output::New, &cfg()));
    let out = match out {
        Ok(o) => o,
        Err(e) if e.category() != "error" || matches!(e, symstride::Error::Argument { .. }) => {
            return Ok(false)
        }
        Err(e) => return Err(format!("{op}: unexpected error {e}")),
    };
    check_against_reference(op, &inputs, &out)?;
    Ok(true)
}

#[test]
fn every_op_and_dtype_matches_the_reference() {
    // Every op with every dtype for all its tensor arguments (where: a bool condition), plus
    // mixed dtypes: each combination PyTorch accepts must run and match.
    let mut ran = 0;
    for op in Op::all() {
        for (i, &d) in DType::ALL.iter().enumerate() {
            let mut ok = 0;
            for seed in 0..6u64 {
                let mut dtypes = vec![d; op.arity()];
                if op == Op::Where {
                    dtypes[0] = DType::Bool;
                }
                if op == Op::MaskedFill {
                    dtypes[1] = DType::Bool;
                }
                if seed >= 4 {
                    dtypes[op.arity() - 1] = DType::ALL[(i + seed as usize) % 6];
                }
                let s = (op as u64) * 1000 + i as u64 * 10 + seed;
                match one_case(op, &dtypes, s, 1 + (seed as usize % 3)) {
                    Ok(true) => ok += 1,
                    Ok(false) => {}
                    Err(e) => panic!("{e}"),
                }
            }
            let def = op.def();
            let rejected = (def.check)(&vec![d; op.arity()], &symstride::op::Numbers::new(vec![None; op.arity()])).is_err()
                || (!def.kernels.has(d) && def.promotion != Promotion::IntToFloat);
            if !rejected {
                assert!(ok > 0, "{op} never ran for {d}");
            }
            ran += ok;
        }
    }
    assert!(ran > 500, "only {ran} calls ran");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn random_calls_match_the_reference(
        op in 0usize..symstride::op::TABLE.len(),
        dtypes in proptest::collection::vec(0usize..6, 3),
        seed in any::<u64>(),
        threads in 1usize..=3,
    ) {
        let op = Op::all().nth(op).unwrap();
        let dtypes: Vec<DType> = dtypes.iter().map(|&k| DType::ALL[k]).collect();
        one_case(op, &dtypes, seed, threads).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn out_and_inplace_equal_out_of_place(
        op in 0usize..symstride::op::TABLE.len(),
        dtypes in proptest::collection::vec(0usize..6, 4),
        seed in any::<u64>(),
        threads in 1usize..=3,
        wrong_shape in any::<bool>(),
    ) {
        let op = Op::all().nth(op).unwrap();
        let dtypes: Vec<DType> = dtypes.iter().map(|&k| DType::ALL[k]).collect();
        let mut rng = Rng(seed);
        let shape = random_shape(&mut rng);
        let inputs = random_inputs(&mut rng, op, &dtypes, &shape);
        let pool = pool(threads);
        let Ok(reference) = pool.install(|| op::call(op, &inputs, Output::New, &cfg())) else {
            return Ok(());
        };
        // out=: a dense tensor of another dtype, of the broadcast shape (written in place) or
        // of another shape (replaced by one with the planned layout).
        let out_sizes = if wrong_shape { vec![2] } else { sizes_of(&reference) };
        let mut out = random_tensor(&mut rng, dtypes[3], &out_sizes, false);
        match pool.install(|| op::call(op, &inputs, Output::Out(&mut out), &cfg())) {
            Ok(got) => {
                prop_assert_eq!(sizes_of(&got), sizes_of(&reference));
                prop_assert_eq!(got.dtype(), dtypes[3]);
                prop_assert_eq!(sizes_of(&out), sizes_of(&reference));
                equal_after_cast(&got, &reference).map_err(TestCaseError::fail)?;
            }
            Err(e) => prop_assert!(
                e.category() == "dtype" || !op.def().out,
                "{op} out=: {e}"
            ),
        }
        // In place: into a private copy of input 0.
        if let Some(Input::Tensor(t0)) = inputs.first() {
            let mut inputs = inputs.clone();
            let copy = private_copy(t0);
            inputs[0] = Input::Tensor(copy.clone());
            match pool.install(|| op::call(op, &inputs, Output::InPlace, &cfg())) {
                Ok(got) => {
                    prop_assert_eq!(got.dtype(), t0.dtype());
                    equal_after_cast(&copy, &reference).map_err(TestCaseError::fail)?;
                }
                Err(e) => prop_assert!(
                    matches!(e.category(), "dtype" | "shape" | "overlap") || !op.def().inplace,
                    "{op} in place: {e}"
                ),
            }
        }
    }
}

/// A copy of `t` with the same layout in a storage of its own.
fn private_copy(t: &AnyTensor) -> AnyTensor {
    macro_rules! copy {
        ($x:expr) => {{
            let s = $x.storage();
            let data = Tensor::from_storage(s.clone(), &[s.len() as i64], &[1], 0)
                .unwrap()
                .to_vec()
                .unwrap();
            Tensor::from_storage(
                Storage::from_vec(data),
                $x.sizes(),
                $x.strides(),
                $x.storage_offset(),
            )
            .unwrap()
            .into()
        }};
    }
    match t {
        AnyTensor::Bool(x) => copy!(x),
        AnyTensor::U8(x) => copy!(x),
        AnyTensor::I32(x) => copy!(x),
        AnyTensor::I64(x) => copy!(x),
        AnyTensor::F32(x) => copy!(x),
        AnyTensor::F64(x) => copy!(x),
    }
}

/// `got` equals `reference` cast to `got`'s dtype, element by element.
fn equal_after_cast(got: &AnyTensor, reference: &AnyTensor) -> Result<(), String> {
    let shape = sizes_of(reference);
    if sizes_of(got) != shape {
        return Err(format!("sizes {:?} vs {:?}", sizes_of(got), shape));
    }
    let numel: i64 = shape.iter().product();
    let mut index = vec![0i64; shape.len()];
    for _ in 0..numel {
        let want = narrow(reference.get(&index).unwrap(), got.dtype());
        let have = got.get(&index).unwrap();
        if !close(have, want, 0.0) {
            return Err(format!("at {index:?}: {have:?} vs {want:?}"));
        }
        for d in (0..shape.len()).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    Ok(())
}

#[test]
fn errors_are_pytorchs() {
    let t = |d: DType| -> Input {
        let mut rng = Rng(7);
        Input::Tensor(random_tensor(&mut rng, d, &[3], false))
    };
    let err = |op: Op, inputs: &[Input]| -> Error {
        op::call(op, inputs, Output::New, &ExecConfig::default()).unwrap_err()
    };
    assert_eq!(err(Op::Neg, &[t(DType::Bool)]).category(), "dtype");
    assert_eq!(
        err(Op::Sub, &[t(DType::Bool), t(DType::Bool)]).category(),
        "dtype"
    );
    assert_eq!(err(Op::Abs, &[t(DType::Bool)]).category(), "dtype");
    assert_eq!(
        err(Op::Where, &[t(DType::F32), t(DType::F32), t(DType::F32)]).category(),
        "dtype"
    );
    // exp of an int tensor in place: float32 can't be cast to int64.
    let e = op::call(
        Op::Exp,
        &[t(DType::I64)],
        Output::InPlace,
        &ExecConfig::default(),
    );
    assert_eq!(e.unwrap_err().category(), "dtype");
    // A Python integer outside uint8 is wrapped into it and computed with, as PyTorch 2.15
    // does (`uint8 + 300` adds 44); only `where`, which converts it with a check, refuses it
    // ("value cannot be converted to type uint8_t without overflow").
    let x = t(DType::U8);
    let Input::Tensor(xt) = &x else {
        unreachable!()
    };
    let sum = op::call(
        Op::Add,
        &[x.clone(), Input::Scalar(Scalar::Int(300))],
        Output::New,
        &ExecConfig::default(),
    )
    .unwrap();
    let want: Vec<Scalar> = symstride::program::tensor_values(xt)
        .unwrap()
        .into_iter()
        .map(|v| match v {
            Scalar::Int(i) => Scalar::Int((i + 44) % 256),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(symstride::program::tensor_values(&sum).unwrap(), want);
    // In place and into `out=`, the same (`u8.add_(300)`, `torch.lt(u8, 1048576, out=b)`:
    // 1048576 wraps to 0, nothing is below it).
    let mut rng = Rng(7);
    let fresh = random_tensor(&mut rng, DType::U8, &[3], false);
    let inplace = op::call(
        Op::Add,
        &[Input::Tensor(fresh), Input::Scalar(Scalar::Int(300))],
        Output::InPlace,
        &ExecConfig::default(),
    )
    .unwrap();
    assert_eq!(symstride::program::tensor_values(&inplace).unwrap(), want);
    let mut rng = Rng(3);
    let mut out = random_tensor(&mut rng, DType::Bool, &[3], false);
    op::call(
        Op::Lt,
        &[x.clone(), Input::Scalar(Scalar::Int(1 << 20))],
        Output::Out(&mut out),
        &ExecConfig::default(),
    )
    .unwrap();
    assert_eq!(
        symstride::program::tensor_values(&out).unwrap(),
        vec![Scalar::Bool(false); 3]
    );
    let e = err(
        Op::Where,
        &[t(DType::Bool), t(DType::U8), Input::Scalar(Scalar::Int(300))],
    );
    assert_eq!(e.category(), "error");
    // In place into a tensor that is not the broadcast shape.
    let mut rng = Rng(1);
    let small = Input::Tensor(random_tensor(&mut rng, DType::F32, &[1], false));
    let e = op::call(
        Op::Add,
        &[small, t(DType::F32)],
        Output::InPlace,
        &ExecConfig::default(),
    );
    assert_eq!(e.unwrap_err().category(), "shape");
}

// ---------------------------------------------------------------------------------------
// Soundness of symbolic op plans: the golden op cases traced with every size, stride and
// offset a symbol; at any binding the recorded guards admit, the traced answer (plan and
// dtypes, or the error category) is what a fresh concrete call computes there.

use symstride::golden::{Case, OpArg, OpTensor};
use symstride::iter::{Plan, TensorSpec};
use symstride::sym::{Bindings, ShapeEnv, SymInt, SymbolSpec};

fn lift_case<I: symstride::Int>(
    case: &symstride::golden::OpCase,
    mut int: impl FnMut(String, i64, i64) -> I,
) -> (Vec<op::Arg<I>>, op::Dest<I>) {
    let mut lift = |name: &str, t: &OpTensor, id: u64| -> TensorSpec<I> {
        let sizes = (0..t.sizes.len())
            .map(|d| int(format!("{name}_z{d}"), t.sizes[d], 0))
            .collect();
        let strides = (0..t.strides.len())
            .map(|d| int(format!("{name}_t{d}"), t.strides[d], 0))
            .collect();
        let mut spec = TensorSpec {
            storage_offset: int(format!("{name}_o"), t.offset, 0),
            ..TensorSpec::new(sizes, strides, 1)
        };
        spec.dtype = Some(DType::parse(&t.dtype).unwrap());
        spec.element_size = spec.dtype.unwrap().element_size();
        spec.tensor_id = Some(id);
        spec
    };
    let args = case
        .inputs
        .iter()
        .enumerate()
        .map(|(k, a)| match a {
            OpArg::Tensor(t) => op::Arg::Tensor(lift(&format!("x{k}"), t, k as u64)),
            OpArg::Scalar { scalar } => op::Arg::Scalar(match scalar {
                serde_json::Value::Bool(b) => Scalar::Bool(*b),
                v if v.is_i64() => Scalar::Int(v.as_i64().unwrap()),
                v => Scalar::Float(v.as_f64().unwrap()),
            }),
            other => panic!("ops.jsonl has tensors and numbers only, got {other:?}"),
        })
        .collect();
    let dest = match (&case.out, case.inplace) {
        (Some(t), _) => op::Dest::Out(lift("out", t, 99)),
        (None, true) => op::Dest::InPlace,
        (None, false) => op::Dest::New,
    };
    (args, dest)
}

type Answer = Result<(Plan<i64>, DType, DType), &'static str>;

fn answer_of(r: symstride::Result<op::OpPlan<i64>>) -> Answer {
    r.map(|p| (p.plan, p.compute_dtype, p.out_dtype))
        .map_err(|e| e.category())
}

#[test]
fn symbolic_op_plans_specialize_to_concrete_calls() {
    let path = symstride::testing::golden_path("ops.jsonl");
    let lines = symstride::golden::read_cases(&path).unwrap();
    let (mut admitted, mut cases) = (0, 0);
    for line in lines.iter().step_by(7) {
        let Ok(Case::Op(case)) = &line.case else {
            panic!("line {}: not an op case", line.number)
        };
        let op = Op::parse(&case.op).unwrap();
        let env = ShapeEnv::default();
        let (args, dest) = lift_case(case, |name, v, min| {
            let spec = SymbolSpec {
                min,
                ..Default::default()
            };
            env.create_symbol(&name, v, spec).unwrap()
        });
        let traced: symstride::Result<op::OpPlan<SymInt>> = op::plan_op(op, &args, &dest);
        let traced_category = traced.as_ref().err().map(|e| e.category());
        if traced_category == Some("error") {
            continue; // not a PyTorch decision (none in the golden file)
        }
        cases += 1;
        let guards = env.guard_set();
        let mut rng = Rng(line.number as u64);
        for attempt in 0..12 {
            let mut b = Bindings::new();
            for name in env.symbol_names() {
                let hint = env.symbol_hint(&name).unwrap();
                let v = if attempt == 0 || rng.chance(1, 2) {
                    hint
                } else {
                    rng.below(6) as i64
                };
                b.insert(&name, v);
            }
            if !guards.eval(&b).unwrap().is_pass() {
                assert!(attempt > 0, "line {}: the hints are rejected", line.number);
                continue;
            }
            admitted += 1;
            let (cargs, cdest) = lift_case(case, |name, _, _| b.get(&name).unwrap());
            let concrete = answer_of(op::plan_op(op, &cargs, &cdest));
            let evaluated: Answer = match &traced {
                Ok(p) => Ok((
                    p.plan.try_map(|s| s.eval(&b)).unwrap(),
                    p.compute_dtype,
                    p.out_dtype,
                )),
                Err(e) => Err(e.category()),
            };
            // A binding whose layouts are invalid (e.g. an offset making a view negative)
            // is rejected by validation alone, before any guarded decision.
            if let Err("error") = concrete {
                continue;
            }
            assert_eq!(
                evaluated, concrete,
                "line {} at {b:?} (guards {guards:?})",
                line.number
            );
        }
    }
    assert!(cases > 300, "{cases} cases traced");
    assert!(admitted > cases * 3, "only {admitted} admitted bindings");
}

/// PyTorch's `addcmul` fuses its last multiply with the add (one rounding): torch 2.15 gives
/// `-0.03999948501586914` for float32 `-13 + (-0.72 * -18)`, the exact value rounded once,
/// where a rounded product (`-0.72f32 * -18` is a rounding tie) would give `-0.039999008`.
/// The same case, found by `random_calls_match_the_reference` (int32, float32, int32
/// operands), is replayed at 1-3 threads.
#[test]
fn addcmul_rounds_once_like_pytorch() {
    let t = |v: f32| -> Input {
        AnyTensor::from(
            Tensor::from_storage(Storage::from_vec(vec![v; 37]), &[37], &[1], 0).unwrap(),
        )
        .into()
    };
    let got = op::call(
        Op::Addcmul,
        &[t(-13.0), t(-0.72), t(-18.0)],
        Output::New,
        &cfg(),
    )
    .unwrap();
    let once = (-13.0f64 + (-0.72f32 as f64) * -18.0) as f32;
    for i in 0..37 {
        assert_eq!(
            got.get(&[i]).unwrap(),
            Scalar::Float(once as f64),
            "element {i}"
        );
    }
    for threads in 1..=3 {
        let dtypes = [DType::I32, DType::F32, DType::I32];
        one_case(Op::Addcmul, &dtypes, 8158707465251767959, threads).unwrap();
    }
}
