"""What the Python layer costs: `Artifact.run` on numpy arrays of 16M elements against
the same program run through the Rust API alone on the same memory (the arrays wrapped
once, untimed; then planning + `run_program` per repetition), in the same process, with a
64 MiB numpy copy as the machine's reference.

    python python/bench/run_overhead.py [--repeat N]

Prints medians and the overhead of the Python path over the Rust path (target: <= 5%).
"""

import argparse
import statistics
import time

import numpy as np

import symstride as ss
from symstride._symstride import _rust_run_seconds

N = 1 << 24  # 16M elements

PROGRAMS = {
    # 16M float32 + 16M float32 -> 16M float32 (192 MiB moved)
    "add_16M": {
        "inputs": [
            {"name": "x", "sizes": ["n", 4096], "layout": "contiguous", "dtype": "float32"},
            {"name": "y", "sizes": ["n", 4096], "layout": "contiguous", "dtype": "float32"},
        ],
        "hints": {"n": 8},
        "steps": [{"let": "z", "op": "add", "args": ["x", "y"]}],
        "outputs": ["z"],
    },
    # a view, a broadcast add and a copy to contiguous (the README's head split)
    "heads_bias_16M": {
        "inputs": [
            {"name": "x", "sizes": ["b", "s", 64], "layout": "contiguous", "dtype": "float32"},
            {"name": "bias", "sizes": [4, 1, 16], "layout": "contiguous", "dtype": "float32"},
        ],
        "hints": {"b": 2, "s": 5},
        "steps": [
            {"let": "q", "op": "view", "args": ["x", ["b", "s", 4, 16]]},
            {"let": "qt", "op": "transpose", "args": ["q", 1, 2]},
            {"let": "y", "op": "add", "args": ["qt", "bias"]},
        ],
        "outputs": ["y"],
    },
    # a reduction over the last dimension of [65536, 256]
    "sum_lastdim_16M": {
        "inputs": [{"name": "x", "sizes": ["n", 256], "layout": "contiguous", "dtype": "float32"}],
        "hints": {"n": 8},
        "steps": [{"let": "s", "op": "sum", "args": ["x", [-1]]}],
        "outputs": ["s"],
    },
}

# The fixed cost per call, visible on a small problem: [4, 4096] + [4, 4096].
PROGRAMS["add_16K"] = PROGRAMS["add_16M"]

BINDINGS = {
    "add_16K": {"n": 4},
    "add_16M": {"n": N // 4096},
    "heads_bias_16M": {"b": 64, "s": N // (64 * 64)},
    "sum_lastdim_16M": {"n": N // 256},
}


def arrays_for(name, binding):
    rng = np.random.default_rng(0)
    if name in ("add_16M", "add_16K"):
        shape = (binding["n"], 4096)
        return {"x": rng.random(shape, np.float32), "y": rng.random(shape, np.float32)}
    if name == "sum_lastdim_16M":
        return {"x": rng.random((binding["n"], 256), np.float32)}
    return {
        "x": rng.random((binding["b"], binding["s"], 64), np.float32),
        "bias": rng.random((4, 1, 16), np.float32),
    }


def median_time(f, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=21)
    args = ap.parse_args()
    src = np.ones(N, np.float32)  # 64 MiB
    dst = np.empty_like(src)
    copy = median_time(lambda: np.copyto(dst, src), args.repeat)
    print(f"reference: numpy copy of 64 MiB: {copy * 1e3:.2f} ms (shared 2-core machine)")
    print(f"{'program':<16} {'python run':>11} {'rust api':>9} {'overhead':>9} {'vs copy':>8}")
    for name, spec in PROGRAMS.items():
        art = ss.compile(spec)
        b = BINDINGS[name]
        arrays = arrays_for(name, b)
        art.run(**arrays)  # warm-up (pool, page faults)
        _rust_run_seconds(art, 3, **arrays)
        # Interleave the two paths so machine noise hits both alike.
        py_t, rs_t = [], []
        for _ in range(args.repeat):
            py_t.append(median_time(lambda: art.run(**arrays), 1))
            rs_t.append(statistics.median(_rust_run_seconds(art, 1, **arrays)))
        p, r = statistics.median(py_t), statistics.median(rs_t)
        print(
            f"{name:<16} {p * 1e3:>9.3f}ms {r * 1e3:>7.3f}ms {100 * (p / r - 1):>8.1f}% "
            f"{p / copy:>7.2f}x   (python layer: {(p - r) * 1e6:+.0f} us per call)"
        )


if __name__ == "__main__":
    main()
