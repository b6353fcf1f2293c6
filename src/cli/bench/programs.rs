//! Program scenarios of `symstride bench`: softmax over the last dim, layer norm, and a
//! channels-last conv epilogue, each run step by step ([`run_program`]: every intermediate
//! materialized, as PyTorch eager does) and fused ([`run_program_fused`] with the chains
//! [`plan_fusion`] decides). Bytes are the program's input read once plus its output
//! written once, so "vs copy" says how close a run is to one pass over memory.

use super::{tensor, Scenario, F};
use std::hint::black_box;
use symstride::kernel::ExecConfig;
use symstride::op::AnyTensor;
use symstride::program::{concrete, plan_fusion, run_program, run_program_fused, Program};
use symstride::tensor::MemoryFormat;
use symstride::Result;

const SOFTMAX: &str = r#"{"name": "softmax_lastdim",
 "inputs": [{"name": "x", "sizes": [65536, 256], "layout": "contiguous"}],
 "steps": [{"let": "m", "op": "amax", "args": ["x", [-1]], "keepdim": true},
           {"let": "s", "op": "sub", "args": ["x", "m"]},
           {"let": "e", "op": "exp", "args": ["s"]},
           {"let": "z", "op": "sum", "args": ["e", [-1]], "keepdim": true},
           {"let": "y", "op": "div", "args": ["e", "z"]}],
 "outputs": ["y"]}"#;

const LAYERNORM: &str = r#"{"name": "layernorm",
 "inputs": [{"name": "x", "sizes": [16384, 1024], "layout": "contiguous"}],
 "steps": [{"let": "mu", "op": "mean", "args": ["x", [-1]], "keepdim": true},
           {"let": "c", "op": "sub", "args": ["x", "mu"]},
           {"let": "sq", "op": "mul", "args": ["c", "c"]},
           {"let": "var", "op": "mean", "args": ["sq", [-1]], "keepdim": true},
           {"let": "ve", "op": "add", "args": ["var", 1e-5]},
           {"let": "sd", "op": "sqrt", "args": ["ve"]},
           {"let": "y", "op": "div", "args": ["c", "sd"]}],
 "outputs": ["y"]}"#;

const EPILOGUE: &str = r#"{"name": "conv_epilogue_cl",
 "inputs": [{"name": "x", "sizes": [32, 64, 56, 56], "layout": "channels_last"},
            {"name": "bias", "sizes": [64, 1, 1], "layout": "contiguous"}],
 "steps": [{"let": "y", "op": "add", "args": ["x", "bias"]},
           {"let": "r", "op": "relu", "args": ["y"]}],
 "outputs": ["r"]}"#;

fn push(
    v: &mut Vec<Scenario>,
    names: [&'static str; 2],
    spec: &str,
    inputs: Vec<AnyTensor>,
    bytes: f64,
    cfg: &ExecConfig,
) -> Result<()> {
    let p = Program::from_json(spec)?;
    let values = concrete(&p, &p.hint_bindings())?;
    let fusion = plan_fusion(&p, &values);
    {
        let (p, values, inputs, c) = (p.clone(), values.clone(), inputs.clone(), cfg.clone());
        v.push(Scenario {
            name: names[0],
            bytes,
            inner: 1,
            run: Box::new(move || {
                black_box(run_program(&p, &values, inputs.clone(), &c)?);
                Ok(())
            }),
        });
    }
    let c = cfg.clone();
    v.push(Scenario {
        name: names[1],
        bytes,
        inner: 1,
        run: Box::new(move || {
            black_box(run_program_fused(&p, &values, inputs.clone(), &fusion, &c)?);
            Ok(())
        }),
    });
    Ok(())
}

/// Adds the program scenarios (step by step, then fused).
pub(super) fn scenarios(cfg: &ExecConfig, v: &mut Vec<Scenario>) -> Result<()> {
    let n16 = (1usize << 24) as f64;
    let x = tensor(&[65536, 256], 21)?;
    push(
        v,
        ["softmax_lastdim_16M", "softmax_lastdim_16M_fused"],
        SOFTMAX,
        vec![x.into()],
        2.0 * F * n16,
        cfg,
    )?;
    let x = tensor(&[16384, 1024], 22)?;
    push(
        v,
        ["layernorm_16M", "layernorm_16M_fused"],
        LAYERNORM,
        vec![x.into()],
        2.0 * F * n16,
        cfg,
    )?;
    let x = tensor(&[32, 64, 56, 56], 23)?.to(MemoryFormat::ChannelsLast)?;
    let bias = tensor(&[64, 1, 1], 24)?;
    let n6 = (32 * 64 * 56 * 56) as f64;
    push(
        v,
        ["conv_epilogue_cl_6M", "conv_epilogue_cl_6M_fused"],
        EPILOGUE,
        vec![x.into(), bias.into()],
        (2.0 * n6 + 64.0) * F,
        cfg,
    )?;
    Ok(())
}
