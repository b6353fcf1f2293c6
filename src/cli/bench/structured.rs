//! Structured-op scenarios of `symstride bench` (issue 40): the row kernels (softmax, layer
//! norm with weight and bias, RMS norm) and the bandwidth-bound copies and gathers (`cat` of
//! channels-last halves, an embedding lookup), each one registry call through
//! [`structured::run`] as a program step runs it: the result is allocated in the layout the
//! meta function gives and written by the op's kernel. `scripts/torch_bench.py` times the same
//! calls in PyTorch eager under the same names.
//!
//! Bytes are the op's input read once plus its result written once (parameters and indices
//! are small beside them), so "vs copy" says how close a run is to one pass over memory.

use super::{tensor, Scenario, F};
use std::hint::black_box;
use symstride::kernel::ExecConfig;
use symstride::op::AnyTensor;
use symstride::structured::{self, Call, KArg, Kw, SOp};
use symstride::tensor::{MemoryFormat, Tensor};
use symstride::{Error, Result};

/// One scenario: `op` over `args` with the keywords `kw`, checked once before timing.
fn push(
    v: &mut Vec<Scenario>,
    name: &'static str,
    op: SOp,
    args: Vec<KArg>,
    kw: Vec<(&'static str, Kw<i64>)>,
    bytes: f64,
    cfg: &ExecConfig,
) -> Result<()> {
    let mut kwarg = |n: &str| Ok(kw.iter().find(|(k, _)| *k == n).map(|(_, v)| v.clone()));
    let call = Call::new(op, structured::sargs_of(&args), &mut kwarg)?;
    structured::run(&call, &args, cfg)?;
    let c = cfg.clone();
    v.push(Scenario {
        name,
        bytes,
        inner: 1,
        run: Box::new(move || {
            black_box(structured::run(&call, &args, &c)?);
            Ok(())
        }),
    });
    Ok(())
}

/// Appends the structured scenarios to `v`.
pub(super) fn scenarios(cfg: &ExecConfig, v: &mut Vec<Scenario>) -> Result<()> {
    let t = |sizes: &[i64], seed: u64| -> Result<KArg> { Ok(KArg::Tensor(tensor(sizes, seed)?.into())) };
    let (rows, len) = (16384i64, 1024i64);
    let n = (rows * len) as f64;
    let rw = 2.0 * F * n;
    push(v, "softmax_op_16M", SOp::Softmax, vec![t(&[rows, len], 41)?], vec![("dim", Kw::Int(-1))], rw, cfg)?;
    let norm_kw = || vec![("normalized_shape", Kw::Ints(vec![len]))];
    let ln_args = vec![t(&[rows, len], 42)?, t(&[len], 43)?, t(&[len], 44)?];
    push(v, "layer_norm_affine_16M", SOp::LayerNorm, ln_args, norm_kw(), rw, cfg)?;
    let rms_args = vec![t(&[rows, len], 45)?, t(&[len], 46)?];
    push(v, "rms_norm_16M", SOp::RmsNorm, rms_args, norm_kw(), rw, cfg)?;

    // `cat` of two channels-last halves along C: [8, 42, 96, 96] each, 6.2M elements out.
    let half = |seed: u64| -> Result<AnyTensor> {
        Ok(tensor(&[8, 42, 96, 96], seed)?.to(MemoryFormat::ChannelsLast)?.into())
    };
    let out_n = (8 * 84 * 96 * 96) as f64;
    let halves = KArg::List(vec![half(47)?, half(48)?]);
    push(v, "cat_cl_6M", SOp::Cat, vec![halves], vec![("dim", Kw::Int(1))], 2.0 * F * out_n, cfg)?;

    // An embedding lookup: 8192 rows of a [32000, 768] table (the rows read plus the result).
    let (vocab, dim, count) = (32000i64, 768i64, 8192usize);
    let mut rng = symstride::testing::XorShift::new(49);
    let ids: Vec<i64> = (0..count).map(|_| (rng.unit() * vocab as f32) as i64 % vocab).collect();
    if ids.iter().any(|&i| !(0..vocab).contains(&i)) {
        return Err(Error::invalid("internal: embedding index out of range"));
    }
    let ids: AnyTensor = Tensor::from_vec(ids, &[count as i64])?.into();
    let args = vec![t(&[vocab, dim], 50)?, KArg::Tensor(ids)];
    let bytes = 2.0 * F * (count as f64) * dim as f64;
    push(v, "embedding_gather", SOp::Embedding, args, vec![], bytes, cfg)?;
    Ok(())
}
