"""Times the `symstride bench` program scenarios in PyTorch (eager composite, and
torch.softmax / torch.nn.functional.layer_norm), for comparison on your own machine.

Usage: python docs/bench/torch_programs.py [--threads 2] [--reps 11]
Prints JSON: {"median_s": {scenario: seconds}}. Not used by tests or CI.
"""
import argparse
import json
import statistics
import time

import torch


def median_time(f, reps):
    f()
    xs = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        xs.append(time.perf_counter() - t)
    return statistics.median(xs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=11)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    out = {}

    x = torch.rand(65536, 256) - 0.5

    def softmax_composite():
        m = x.amax(-1, keepdim=True)
        e = (x - m).exp()
        return e / e.sum(-1, keepdim=True)

    out["softmax_lastdim_16M"] = median_time(softmax_composite, a.reps)
    out["softmax_lastdim_16M_torch_softmax"] = median_time(lambda: torch.softmax(x, -1), a.reps)

    y = torch.rand(16384, 1024) - 0.5

    def layernorm_composite():
        mu = y.mean(-1, keepdim=True)
        c = y - mu
        var = (c * c).mean(-1, keepdim=True)
        return c / (var + 1e-5).sqrt()

    out["layernorm_16M"] = median_time(layernorm_composite, a.reps)
    out["layernorm_16M_torch_layer_norm"] = median_time(
        lambda: torch.nn.functional.layer_norm(y, (1024,)), a.reps
    )

    z = (torch.rand(32, 64, 56, 56) - 0.5).contiguous(memory_format=torch.channels_last)
    bias = torch.rand(64, 1, 1) - 0.5
    out["conv_epilogue_cl_6M"] = median_time(lambda: torch.relu(z + bias), a.reps)

    src = torch.rand(1 << 24)
    dst = torch.empty(1 << 24)
    out["copy_64MiB"] = median_time(lambda: dst.copy_(src), a.reps)
    print(json.dumps({"median_s": out, "threads": a.threads, "torch": torch.__version__}))


if __name__ == "__main__":
    main()
