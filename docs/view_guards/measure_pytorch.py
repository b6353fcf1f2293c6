#!/usr/bin/env python3
"""Measures the guards PyTorch records for a dozen real reshapes (issue #12).

Not run by tests or CI (PyTorch is not a dependency). Run it in an environment with
`pip install torch`; it prints JSON, saved as `pytorch.json` beside this script and read by
`tests/view_guards.rs`, which traces the same ops through symstride and prints both columns.

Every input size is a fresh dynamic symbol (`DimDynamic.DYNAMIC`, hints from the case),
inputs are created by `FakeTensorMode.from_tensor` under one `ShapeEnv`, the ops run on the
fake tensors, and the guards are `shape_env.guards` (each with its expression). Integer
arguments of the ops are expressions of the input sizes, as a model's code writes them.
"""
import json
import sys

import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import (
    DimDynamic,
    ShapeEnv,
    StatelessSymbolicContext,
)


def cases():
    """name -> (input sizes, input layout, function of the fake input)."""
    return {
        "attn_split": ([2, 5, 64], "contiguous",
                       lambda x: x.view(x.shape[0], x.shape[1], 8, -1)),
        "attn_split_transpose": ([2, 5, 64], "contiguous",
                                 lambda x: x.view(x.shape[0], x.shape[1], 8, -1).transpose(1, 2)),
        "attn_merge_copy": ([2, 8, 5, 16], "contiguous",
                            lambda x: x.transpose(1, 2).reshape(x.shape[0], x.shape[2], -1)),
        "attn_merge_view": ([2, 5, 8, 16], "contiguous",
                            lambda x: x.reshape(x.shape[0], x.shape[1], x.shape[2] * x.shape[3])),
        "nchw_flatten_1": ([2, 3, 4, 5], "contiguous", lambda x: x.flatten(1)),
        "nchw_flatten_all": ([2, 3, 4, 5], "contiguous", lambda x: x.flatten()),
        "channels_last_flatten_hw": ([2, 3, 4, 5], "channels_last", lambda x: x.flatten(2)),
        "channels_last_flatten_chw": ([2, 3, 4, 5], "channels_last", lambda x: x.flatten(1)),
        "channels_last_nhwc_flatten": ([2, 3, 4, 5], "channels_last",
                                       lambda x: x.permute(0, 2, 3, 1).flatten(1, 2)),
        "group_norm_view": ([2, 8, 4, 5], "contiguous",
                            lambda x: x.view(x.shape[0], 4, -1)),
        "group_norm_view_5d": ([2, 8, 4, 5], "contiguous",
                               lambda x: x.view(x.shape[0], 4, x.shape[1] // 4, x.shape[2], x.shape[3])),
        "unflatten_heads": ([2, 64], "contiguous", lambda x: x.unflatten(1, (8, -1))),
        "sliced_reshape": ([2, 5, 6], "contiguous",
                           lambda x: x[:, 1:, :].reshape(-1, x.shape[2])),
        "expanded_reshape": ([2, 1, 6], "contiguous",
                             lambda x: x.expand(x.shape[0], 3, x.shape[2]).reshape(-1, x.shape[2])),
    }


def measure(sizes, layout, fn):
    env = ShapeEnv()
    mode = FakeTensorMode(shape_env=env)
    fmt = torch.channels_last if layout == "channels_last" else torch.contiguous_format
    real = torch.empty(sizes).contiguous(memory_format=fmt)
    ctx = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC] * len(sizes))
    with mode:
        x = mode.from_tensor(real, symbolic_context=ctx)
        before = len(env.guards)
        y = fn(x)
        guards = [str(g.expr) for g in env.guards[before:]]
        aliases = y.untyped_storage()._cdata == x.untyped_storage()._cdata
    return {
        "sizes": sizes,
        "layout": layout,
        "input_symbols": [str(s) for s in x.shape],
        "result_sizes": [str(s) for s in y.shape],
        "result_strides": [str(s) for s in y.stride()],
        "aliases": bool(aliases),
        "guards": guards,
    }


def main():
    out = {"torch": torch.__version__, "cases": {}}
    for name, (sizes, layout, fn) in cases().items():
        try:
            out["cases"][name] = measure(sizes, layout, fn)
        except Exception as e:  # report, keep measuring the others
            out["cases"][name] = {"error": f"{type(e).__name__}: {e}"}
    json.dump(out, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
