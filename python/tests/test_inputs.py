"""Inputs as users give them: huge broadcast bool arrays checked by memory, empty arrays
(zero strides in numpy 2) dispatched through the specializations, inputs in other layouts
planned once per layout and counted; the package's small argument errors."""

import time

import numpy as np
import pytest

import symstride as ss

from test_programs import HEADS  # the attention-heads program the program tests use

CL_SUM = {
    "name": "cl_sum",
    "inputs": [{"name": "x", "sizes": ["n", "c", "h", "w"], "layout": "channels_last"}],
    "hints": {"n": 2, "c": 3, "h": 4, "w": 5},
    "steps": [
        {"let": "e", "op": "exp", "args": ["x"]},
        {"let": "s", "op": "sum", "args": ["e", [0, 2]], "keepdim": True},
        {"let": "t", "op": "transpose", "args": ["x", 1, 3]},
    ],
    "outputs": ["e", "s", "t"],
}

# A bool input returned as a view (nothing is computed over its elements).
BOOL_VIEW = {
    "name": "bool_view",
    "inputs": [{"name": "m", "sizes": ["a", "b"], "layout": "contiguous", "dtype": "bool"}],
    "hints": {"a": 3, "b": 4},
    "steps": [{"let": "t", "op": "transpose", "args": ["m", 0, 1]}],
    "outputs": ["t"],
}


def bool_view(arr):
    return ss.compile(BOOL_VIEW).run(m=arr)["t"]


def test_huge_zero_stride_bool_is_checked_by_memory():
    """``np.broadcast_to`` of one bool to 2**40 elements: the 0/1 check reads the one byte
    it covers (a walk over logical elements would hold the GIL for hours)."""
    huge = np.broadcast_to(np.bool_(True), (2**20, 2**20))
    t0 = time.perf_counter()
    t = bool_view(huge)
    assert time.perf_counter() - t0 < 5
    assert t.shape == (2**20, 2**20) and t.strides == (0, 0) and t[12345, 678]
    bad = np.broadcast_to(np.array([2], np.uint8).view(np.bool_), (2**20, 2**20))
    t0 = time.perf_counter()
    with pytest.raises(ss.InvalidInputError, match="bytes other than 0 and 1"):
        bool_view(bad)
    assert time.perf_counter() - t0 < 5


def test_overlapping_bool_views_are_checked_by_memory():
    """``as_strided`` views whose dims overlap (2**40 elements over 2**21 bytes): each byte
    they cover is read, none they skip; fast either way."""
    from numpy.lib.stride_tricks import as_strided

    n = 2**20
    buf = np.zeros(2 * n + 8, np.uint8)
    buf[::3] = 1
    ok = as_strided(buf.view(np.bool_), shape=(n, n), strides=(1, 1))
    t0 = time.perf_counter()
    assert bool_view(ok).shape == (n, n)
    buf[2 * n - 2] = 7  # the last byte the view covers
    with pytest.raises(ss.InvalidInputError, match="bytes other than 0 and 1"):
        bool_view(ok)
    buf[2 * n - 2] = 1
    buf[2 * n - 1] = 7  # just past it
    assert bool_view(ok).shape == (n, n)
    assert time.perf_counter() - t0 < 10


def test_bool_check_reads_exactly_the_covered_bytes():
    """Random strided, broadcast and overlapping views over bytes with some 2s: accepted iff
    no byte the view covers is above 1 (numpy's answer on the view's own elements)."""
    from numpy.lib.stride_tricks import as_strided

    rng = np.random.default_rng(39)
    seen = {True: 0, False: 0}
    for _ in range(400):
        buf = (rng.random(600) < 0.5).astype(np.uint8)
        buf[rng.random(600) < rng.choice([0.0, 0.01, 0.05])] = 2
        a, b = (int(v) for v in rng.integers(1, 9, size=2))
        sa, sb = (int(v) for v in rng.choice([0, 1, 2, 3, 5, 9, 17], size=2))
        if (a - 1) * sa + (b - 1) * sb >= 600:
            continue
        off = int(rng.integers(0, 600 - (a - 1) * sa - (b - 1) * sb))
        view = as_strided(buf[off:].view(np.bool_), shape=(a, b), strides=(sa, sb))
        want = not (view.view(np.uint8) > 1).any()
        try:
            bool_view(view)
            got = True
        except ss.InvalidInputError as e:
            assert "bytes other than 0 and 1" in str(e)
            got = False
        assert got == want, (a, b, sa, sb, off)
        seen[want] += 1
    assert seen[True] > 50 and seen[False] > 50, seen


def empty_arrays(spec, binding):
    """numpy's own empty arrays (``np.zeros``) for a binding with a size 0."""
    out = {}
    for inp in spec["inputs"]:
        shape = tuple(binding[s] if isinstance(s, str) else s for s in inp["sizes"])
        out[inp["name"]] = np.zeros(shape, np.dtype(inp.get("dtype", "float32")))
    return out


@pytest.mark.parametrize("spec", [HEADS, CL_SUM], ids=lambda s: s["name"])
def test_empty_arrays_dispatch_through_a_complete_cover(spec):
    """numpy 2 gives empty arrays zero strides; every size-0 binding still runs through a
    specialization of a complete cover (``retrace=False``), with the sizes and values
    ``check`` and numpy give and the layout of every output with elements."""
    art = ss.compile(spec, cover=True)
    names = list(spec["hints"])
    bindings = []
    for k in range(len(names)):
        for other in (1, 2, 3):
            b = {s: other for s in names}
            b[names[k]] = 0
            bindings.append(b)
    for b in bindings:
        arrays = empty_arrays(spec, b)
        before = art.dispatch_stats
        out = art.run_with(arrays, retrace=False)
        after = art.dispatch_stats
        assert after["hits"] == before["hits"] + 1, b
        assert after["layout_misses"] == 0 and after["layout_plans"] == 0
        want = art.check(**b)
        assert want.admitted
        for name, arr in out.items():
            layout = want.outputs[name]
            assert list(arr.shape) == layout["sizes"], (b, name)
            if arr.size:
                assert [s // arr.itemsize for s in arr.strides] == layout["strides"], (b, name)
        if spec is CL_SUM:
            x = arrays["x"]
            np.testing.assert_array_equal(out["s"], np.exp(x).sum(axis=(0, 2), keepdims=True))


def test_numpy_empty_arrays_have_zero_strides_or_the_test_above_is_weaker():
    """What the tests above rely on numpy doing (numpy 2); with numpy 1 they still pass,
    exercising the spec's own strides."""
    z = np.zeros((0, 5, 64), np.float32)
    if int(np.__version__.split(".")[0]) >= 2:
        assert z.strides == (0, 0, 0)


def test_inputs_in_other_layouts_are_planned_once_and_counted():
    art = ss.compile(HEADS)
    rng = np.random.default_rng(5)
    x = np.asfortranarray(rng.standard_normal((2, 5, 64)).astype(np.float32))
    bias = rng.standard_normal((4, 1, 16)).astype(np.float32)
    want = art.run(x=np.ascontiguousarray(x), bias=bias)
    base = art.dispatch_stats
    for call in range(3):
        out = art.run(x=x, bias=bias)
        for k in want:
            np.testing.assert_allclose(out[k], want[k], rtol=1e-6)
        st = art.dispatch_stats
        assert (st["layout_misses"], st["layout_hits"], st["layout_plans"]) == (1, call, 1)
        assert (st["hits"], st["misses"]) == (base["hits"], base["misses"])
    # retrace=False still refuses a layout no specialization describes, and counts nothing.
    with pytest.raises(ss.GuardError, match="strides differ"):
        art.run_with({"x": x, "bias": bias}, retrace=False)
    assert art.dispatch_stats == st


def test_specialization_index_errors():
    art = ss.compile(HEADS)
    for k in (-1, -5, art.num_specializations, 10**6):
        with pytest.raises(ss.DimIndexError, match=f"specialization {k} out of range"):
            art.guards(k)
        with pytest.raises(IndexError, match=f"specialization {k} out of range"):
            art.fused(k)
    assert art.guards(0) and art.fused(0) is not None


def test_check_rejects_unknown_symbols_like_the_cli():
    art = ss.compile(HEADS)
    with pytest.raises(
        ss.SymbolError, match=r"`q` is not a symbol of program heads_bias \(symbols: b, s\)"
    ):
        art.check(b=2, s=3, q=1)
    with pytest.raises(ss.SymbolError, match="no value for symbol `s`"):
        art.check(b=2)
    assert art.check(b=2, s=3).admitted


def test_package_errors_carry_their_category():
    """Errors the package raises itself have the category and kind of their class, as the
    engine's errors do (a wrong input dtype is category ``dtype``)."""
    art = ss.compile(HEADS)
    x = np.zeros((2, 5, 64), np.float32)
    bias = np.zeros((4, 1, 16), np.float32)
    with pytest.raises(ss.DTypeError) as e:
        art.run(x=x.astype(np.float64), bias=bias)
    assert (e.value.category, e.value.kind) == ("dtype", "DType")
    with pytest.raises(ss.ShapeError) as e:
        art.run(x=x[0], bias=bias)
    assert (e.value.category, e.value.kind) == ("shape", "Shape")
    with pytest.raises(ss.DimIndexError) as e:
        art.guards(-1)
    assert (e.value.category, e.value.kind) == ("index", "Index")
    # An engine error: the instance attributes agree with the class's.
    with pytest.raises(ss.BroadcastError) as e:
        ss.compile({"inputs": [{"name": "a", "sizes": [2], "layout": "contiguous"},
                               {"name": "b", "sizes": [3], "layout": "contiguous"}],
                    "steps": [{"let": "c", "op": "add", "args": ["a", "b"]}],
                    "outputs": ["c"]}).run(a=np.zeros(2, np.float32), b=np.zeros(3, np.float32))
    assert e.value.category == type(e.value).category == "broadcast"
