"""Shared helpers: the repository's golden files and the golden fill formula."""

import json
import math
from pathlib import Path

import numpy as np

GOLDEN = Path(__file__).resolve().parents[2] / "tests" / "golden"

NP_DTYPES = {
    "float32": np.float32,
    "float64": np.float64,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "bool": np.bool_,
}


def golden_lines(name):
    """The cases of one golden file (a missing file fails the test loudly)."""
    path = GOLDEN / name
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def fill(k, sizes, dtype):
    """The golden fill of input ``k``: element ``L`` (row-major) is
    ``((7*L + 3*k) % 11) - 5`` (uint8: without ``- 5``; bool: ``(7*L + 3*k) % 3 == 0``)."""
    n = int(np.prod(sizes, dtype=np.int64)) if sizes else 1
    L = np.arange(n, dtype=np.int64)
    if dtype == "bool":
        v = (7 * L + 3 * k) % 3 == 0
    elif dtype == "uint8":
        v = (7 * L + 3 * k) % 11
    else:
        v = (7 * L + 3 * k) % 11 - 5
    return v.astype(NP_DTYPES[dtype]).reshape(sizes)


def strided_array(values, strides):
    """``values`` copied into a new array with these element strides (non-overlapping)."""
    sizes = values.shape
    item = values.itemsize
    extent = 1 + sum((z - 1) * s for z, s in zip(sizes, strides)) if 0 not in sizes else 0
    buf = np.zeros(max(extent, 1), dtype=values.dtype)
    arr = np.lib.stride_tricks.as_strided(
        buf, shape=sizes, strides=[s * item for s in strides]
    )
    arr[...] = values
    return arr


def make_input(inp, binding, k):
    """Input ``k`` of a program spec at ``binding``, filled and laid out as the spec says."""
    dtype = inp.get("dtype", "float32")
    sizes = tuple(s if isinstance(s, int) else binding[s] for s in inp["sizes"])
    values = fill(k, sizes, dtype)
    layout = inp.get("layout")
    if layout == "contiguous":
        return np.ascontiguousarray(values)
    if layout == "channels_last":
        return np.ascontiguousarray(values.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    if layout == "channels_last_3d":
        return np.ascontiguousarray(values.transpose(0, 2, 3, 4, 1)).transpose(0, 4, 1, 2, 3)
    strides = [s if isinstance(s, int) else eval(s, {}, dict(binding)) for s in inp["strides"]]
    return strided_array(values, strides)


def golden_value(v):
    if isinstance(v, str):
        return {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[v]
    return v


def values_match(got, want, dtype):
    """Golden comparison: floats within 1e-5 relative and absolute (NaN matches NaN),
    integers and bools exactly."""
    want = np.array([golden_value(v) for v in want], dtype=np.float64)
    got = np.asarray(got, dtype=np.float64).reshape(-1)
    if got.shape != want.shape:
        return False
    if dtype.startswith("float"):
        return bool(np.all(np.isclose(got, want, rtol=1e-5, atol=1e-5, equal_nan=True)))
    return bool(np.array_equal(got, want))
