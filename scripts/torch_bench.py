#!/usr/bin/env python3
"""Times symstride's benchmark scenarios in PyTorch, for comparison on one's own machine.

Prints the `median_s` map of `symstride bench --json` (`{"median_s": {name: seconds}}`),
so the two outputs can be compared name by name:

    python3 scripts/torch_bench.py --threads 2 > torch.json
    symstride bench --json --threads 2 > ours.json

Each scenario builds the same shapes, dtypes and layouts as the Rust bench and runs the
PyTorch eager equivalent (allocating ops allocate, `_out` scenarios write into a given
tensor). The fused-program scenarios (`softmax_lastdim_16M`, `layernorm_16M`,
`conv_epilogue_cl_6M`) run as eager composites of the program's steps;
`softmax_lastdim_16M_torch_softmax` is `torch.softmax`'s own fused kernel and
`layernorm_16M_torch_layer_norm` is `torch.nn.functional.layer_norm`'s (without affine
weights). This script replaces the former `docs/bench/torch_programs.py`. Scenarios with no
PyTorch equivalent (`dispatch_cached_4d`, `compile_seed_spec`, `cover_10_symbols`,
`artifact_load_100`) are left
out. `memcpy_64MiB` is PyTorch's `copy_` of 64 MiB at the same thread count.

Needs only `torch`; not used by tests or CI.
"""

import argparse
import json
import statistics
import sys
import time

import torch


def scenarios():
    """(name, inner calls per sample, setup() -> body) in the Rust bench's order."""
    cl = torch.channels_last
    n = 1 << 24
    s4 = (64, 64, 64, 64)

    def randf(*shape, dtype=torch.float32):
        return (torch.rand(*shape) - 0.5).to(dtype)

    def binop(op, make):
        def setup():
            a, b = make(), make()
            return lambda: op(a, b)
        return setup

    def unary(op):
        def setup():
            x = randf(*s4)
            return lambda: op(x)
        return setup

    def where():
        c, x, y = torch.rand(s4) > 0.5, randf(*s4), randf(*s4)
        return lambda: torch.where(c, x, y)

    def add_out():
        a, b, out = randf(*s4), randf(*s4), torch.empty(s4)
        return lambda: torch.add(a, b, out=out)

    def cl_bcast(out_given):
        def setup():
            a = randf(32, 64, 56, 56).contiguous(memory_format=cl)
            b = randf(64, 56, 56)
            if out_given:
                out = torch.empty_like(a)
                return lambda: torch.add(a, b, out=out)
            return lambda: a + b
        return setup

    def transpose(out_given):
        def setup():
            t = randf(4096, 4096).t()
            if out_given:
                out = torch.empty(4096, 4096)
                return lambda: out.copy_(t)
            return lambda: t.contiguous()
        return setup

    def add_bias():
        x, b = randf(65536, 256), randf(256)
        return lambda: x + b

    def to_cl():
        x = randf(8, 3, 224, 224)
        return lambda: x.to(memory_format=cl)

    def small():
        x, y = randf(2, 3, 4, 5), randf(3, 4, 5)

        def body():
            for _ in range(2000):
                torch.add(x, y)
        return body

    def reduce(shape, f, channels_last=False):
        def setup():
            x = randf(*shape)
            if channels_last:
                x = x.contiguous(memory_format=cl)
            return lambda: f(x)
        return setup

    def softmax_composite():
        x = randf(65536, 256)

        def body():
            m = x.amax(-1, keepdim=True)
            e = (x - m).exp()
            return e / e.sum(-1, keepdim=True)
        return body

    def softmax_fused():
        x = randf(65536, 256)
        return lambda: torch.softmax(x, -1)

    def layernorm_composite():
        x = randf(16384, 1024)

        def body():
            d = x - x.mean(-1, keepdim=True)
            return d / ((d * d).mean(-1, keepdim=True) + 1e-5).sqrt()
        return body

    def layernorm_fused():
        x = randf(16384, 1024)
        return lambda: torch.nn.functional.layer_norm(x, (1024,))

    def conv_epilogue():
        x = randf(32, 64, 56, 56).contiguous(memory_format=cl)
        b = randf(64, 1, 1)
        return lambda: torch.relu(x + b)

    # Structured-op scenarios (issue 40): one PyTorch call each, as `symstride bench`'s
    # `src/cli/bench/structured.rs` makes them.
    def softmax_op():
        x = randf(16384, 1024)
        return lambda: torch.softmax(x, -1)

    def layer_norm_affine():
        x, w, b = randf(16384, 1024), randf(1024), randf(1024)
        return lambda: torch.nn.functional.layer_norm(x, (1024,), w, b)

    def rms_norm():
        x, w = randf(16384, 1024), randf(1024)
        return lambda: torch.nn.functional.rms_norm(x, (1024,), w)

    def cat_cl():
        a = randf(8, 42, 96, 96).contiguous(memory_format=cl)
        b = randf(8, 42, 96, 96).contiguous(memory_format=cl)
        return lambda: torch.cat([a, b], 1)

    def embedding_gather():
        table = randf(32000, 768)
        ids = torch.randint(0, 32000, (8192,))
        return lambda: torch.nn.functional.embedding(ids, table)

    def copy(threads_one):
        def setup():
            src, dst = randf(n), torch.empty(n)
            if not threads_one:
                return lambda: dst.copy_(src)

            def body():
                t = torch.get_num_threads()
                torch.set_num_threads(1)
                try:
                    dst.copy_(src)
                finally:
                    torch.set_num_threads(t)
            return body
        return setup

    ints = lambda dt: (lambda: (randf(*s4) * 1e6).to(dt))  # noqa: E731
    return [
        ("add_int32_16M", 1, binop(torch.add, ints(torch.int32))),
        ("add_f64_16M", 1, binop(torch.add, lambda: randf(*s4, dtype=torch.float64))),
        ("add_u8_16M", 1, binop(torch.add, lambda: (torch.rand(s4) * 255).to(torch.uint8))),
        ("mul_i64_16M", 1, binop(torch.mul, ints(torch.int64))),
        ("eq_f32_16M", 1, binop(torch.eq, lambda: (randf(*s4) * 8).round())),
        ("logical_and_bool_16M", 1, binop(torch.logical_and, lambda: torch.rand(s4) > 0.5)),
        ("where_16M", 1, where),
        ("gelu_16M", 1, unary(torch.nn.functional.gelu)),
        ("silu_16M", 1, unary(torch.nn.functional.silu)),
        ("tanh_16M", 1, unary(torch.tanh)),
        ("add_contig_16M", 1, binop(torch.add, lambda: randf(*s4))),
        ("add_contig_16M_out", 1, add_out),
        ("add_cl_bcast_6M", 1, cl_bcast(False)),
        ("add_cl_bcast_6M_out", 1, cl_bcast(True)),
        ("copy_transpose_16M", 1, transpose(False)),
        ("copy_transpose_16M_out", 1, transpose(True)),
        ("add_bias_16M", 1, add_bias),
        ("to_channels_last_1M", 1, to_cl),
        ("add_small_dispatch", 2000, small),
        ("sum_lastdim_16M", 1, reduce((65536, 256), lambda x: x.sum(-1))),
        ("sum_outer_16M", 1, reduce((65536, 256), lambda x: x.sum(0))),
        ("amax_cl_6M", 1, reduce((32, 64, 56, 56), lambda x: x.amax((2, 3)), True)),
        ("softmax_lastdim_16M", 1, softmax_composite),
        ("softmax_lastdim_16M_torch_softmax", 1, softmax_fused),
        ("layernorm_16M", 1, layernorm_composite),
        ("layernorm_16M_torch_layer_norm", 1, layernorm_fused),
        ("conv_epilogue_cl_6M", 1, conv_epilogue),
        ("softmax_op_16M", 1, softmax_op),
        ("layer_norm_affine_16M", 1, layer_norm_affine),
        ("rms_norm_16M", 1, rms_norm),
        ("cat_cl_6M", 1, cat_cl),
        ("embedding_gather", 1, embedding_gather),
        ("memcpy_64MiB", 1, copy(False)),
        ("memcpy_64MiB_1thread", 1, copy(True)),
    ]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: torch's default)")
    p.add_argument("--reps", type=int, default=11, help="repetitions per scenario (median reported)")
    p.add_argument("--only", default=None, help="only scenarios whose name contains one of these comma-separated strings "
                        "(as `symstride bench --only`)")
    p.add_argument("--cpu-time", action="store_true",
                   help="time by process CPU time / threads, as `symstride bench --cpu-time` "
                        "(OpenMP threads spinning in barriers are counted too)")
    args = p.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    threads = torch.get_num_threads()
    clock = time.process_time if args.cpu_time else time.perf_counter
    scale = threads if args.cpu_time else 1
    print(f"torch {torch.__version__}, {threads} thread(s), median of {args.reps} runs"
          + (" (process CPU time / threads)" if args.cpu_time else ""), file=sys.stderr)
    medians = {}
    with torch.inference_mode():
        for name, inner, setup in scenarios():
            if args.only and not any(o and o in name for o in args.only.split(",")):
                continue
            body = setup()
            body()  # warm-up (allocator, page faults)
            times = []
            for _ in range(max(args.reps, 1)):
                t0 = clock()
                body()
                times.append((clock() - t0) / scale / inner)
            medians[name] = statistics.median(times)
            del body
    print(json.dumps({"median_s": medians}))


if __name__ == "__main__":
    main()
