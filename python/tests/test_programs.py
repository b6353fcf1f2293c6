"""Programs through the Python API: the golden program cases (layouts through ``check``,
values through ``run`` on numpy arrays made with the golden fill), random strided inputs
against a numpy reference, zero-copy in and out, artifacts saved and loaded."""

import json

import numpy as np
import pytest

import symstride as ss

from conftest import golden_lines, make_input, strided_array, values_match

PROGRAMS = golden_lines("programs.jsonl")
REDUCTIONS = {"sum", "mean", "prod", "amax", "amin", "argmax", "argmin", "all", "any"}


def has_reduction(spec):
    return any(s["op"] in REDUCTIONS for s in spec["steps"])


def test_programs_golden_layouts_through_check():
    """Every golden program line: ``check`` at the binding gives PyTorch's output layouts
    (sizes, strides, dtype, offset) or its error category."""
    assert len(PROGRAMS) == 250
    bad = []
    for case in PROGRAMS:
        art = ss.compile(case["spec"])
        c = art.check(**case["binding"])
        want = case["expect"]
        if "error" in want:
            ok = c.error == want["error"] and c.outputs is None
        else:
            ok = c.error is None and all(
                c.outputs[name] == {k: o[k] for k in ("sizes", "strides", "dtype", "offset")}
                for name, o in want["outputs"].items()
            )
        if not ok:
            bad.append(case)
    assert not bad, f"{len(bad)} program cases differ, first: {bad[0]}"


def run_golden(case):
    spec, binding = case["spec"], case["binding"]
    arrays = {
        inp["name"]: make_input(inp, binding, k) for k, inp in enumerate(spec["inputs"])
    }
    art = ss.compile(spec)
    want = case["expect"]
    if "error" in want:
        with pytest.raises(ss.SymstrideError) as e:
            art.run(**arrays)
        return e.value.category == want["error"]
    out = art.run(**arrays)
    check = art.check(**binding)
    for name, o in want["outputs"].items():
        a = out[name]
        item = a.itemsize
        if list(a.shape) != o["sizes"] or a.dtype.name != o["dtype"]:
            return False
        # The outputs' strides are the plan's (dims of size 1 are never stepped over).
        got_strides = [s // item for s in a.strides]
        if any(z != 1 and g != w for z, g, w in zip(o["sizes"], got_strides, o["strides"])):
            return False
        if check.outputs[name]["strides"] != o["strides"]:
            return False
        if o["values"] is not None and not values_match(a, o["values"], o["dtype"]):
            return False
    return True


def test_programs_golden_values_through_run():
    """Every golden program line executed on numpy arrays in the line's layouts: every
    output's sizes, strides, dtype and values are PyTorch's (or its error category)."""
    assert sum(has_reduction(c["spec"]) for c in PROGRAMS) >= 100
    bad = [c for c in PROGRAMS if not run_golden(c)]
    assert not bad, f"{len(bad)} of {len(PROGRAMS)} program runs differ, first: {bad[0]}"


HEADS = {
    "name": "heads_bias",
    "inputs": [
        {"name": "x", "sizes": ["b", "s", 64], "layout": "contiguous", "dtype": "float32"},
        {"name": "bias", "sizes": [4, 1, 16], "layout": "contiguous", "dtype": "float32"},
    ],
    "hints": {"b": 2, "s": 5},
    "steps": [
        {"let": "q", "op": "view", "args": ["x", ["b", "s", 4, 16]]},
        {"let": "qt", "op": "transpose", "args": ["q", 1, 2]},
        {"let": "y", "op": "add", "args": ["qt", "bias"]},
        {"let": "r", "op": "relu", "args": ["y"]},
        {"let": "c", "op": "contiguous", "args": ["r"]},
    ],
    "outputs": ["c", "qt", "y"],
}


def heads_reference(x, bias):
    qt = x.reshape(x.shape[0], x.shape[1], 4, 16).transpose(0, 2, 1, 3)
    y = qt + bias
    return {"qt": qt, "y": y, "c": np.maximum(y, 0)}


def test_run_matches_numpy_on_random_shapes_and_strides():
    art = ss.compile(HEADS)
    rng = np.random.default_rng(0)
    for trial in range(40):
        b, s = int(rng.integers(1, 5)), int(rng.integers(1, 9))
        base = rng.standard_normal((b, s, 64)).astype(np.float32)
        kind = trial % 4
        if kind == 0:
            x = base
        elif kind == 1:  # a non-contiguous view (dims permuted in memory)
            x = np.ascontiguousarray(base.transpose(1, 0, 2)).transpose(1, 0, 2)
        elif kind == 2:  # a strided slice of a larger buffer
            big = np.zeros((b, s, 128), np.float32)
            big[:, :, ::2] = base
            x = big[:, :, ::2]
        else:  # Fortran order
            x = np.asfortranarray(base)
        bias = rng.standard_normal((4, 1, 16)).astype(np.float32)
        if trial % 5 == 0:  # a broadcast input: zero strides
            bias = np.broadcast_to(bias[:1], (4, 1, 16))
        out = art.run(x=x, bias=bias)
        ref = heads_reference(base, bias)
        for name in ("qt", "y", "c"):
            np.testing.assert_allclose(out[name], ref[name], rtol=1e-6, atol=1e-6)
        # Output layouts are the plan's at this binding for these input strides.
        assert out["c"].flags["C_CONTIGUOUS"]


def test_run_is_zero_copy_in_and_out():
    art = ss.compile(HEADS)
    x = np.random.default_rng(1).standard_normal((3, 7, 64)).astype(np.float32)
    bias = np.ones((4, 1, 16), np.float32)
    out = art.run(x=x, bias=bias)
    # `qt` is a view: an array over the caller's buffer, no copy.
    assert np.shares_memory(out["qt"], x)
    assert out["qt"].ctypes.data == x.ctypes.data
    x[0, 0, 0] = 123.0
    assert out["qt"][0, 0, 0, 0] == 123.0
    # New values are arrays over the engine's storages, with the plan's strides.
    plan = art.check(b=3, s=7).outputs
    for name in ("y", "c"):
        a = out[name]
        assert [st // a.itemsize for st in a.strides] == plan[name]["strides"]
        assert not np.shares_memory(a, x)
        assert a.flags["WRITEABLE"]
    # The storage outlives the result dict.
    y = out["y"]
    del out
    assert np.isfinite(y).all()


def test_read_only_input_gives_read_only_views():
    art = ss.compile(HEADS)
    x = np.zeros((2, 5, 64), np.float32)
    x.flags.writeable = False
    out = art.run(x=x, bias=np.zeros((4, 1, 16), np.float32))
    assert not out["qt"].flags["WRITEABLE"]
    assert out["y"].flags["WRITEABLE"]


def test_bad_inputs_raise():
    art = ss.compile(HEADS)
    x = np.zeros((2, 5, 64), np.float32)
    bias = np.zeros((4, 1, 16), np.float32)
    with pytest.raises(ss.InvalidInputError, match="negative stride"):
        art.run(x=x[:, ::-1], bias=bias)
    with pytest.raises(ValueError, match="missing input `bias`"):
        art.run(x=x)
    with pytest.raises(ValueError, match="not an input"):
        art.run(x=x, bias=bias, z=x)
    with pytest.raises(ValueError, match="numpy.ndarray"):
        art.run(x=x.tolist(), bias=bias)
    with pytest.raises(ss.DTypeError, match="expected dtype float32, got float64"):
        art.run(x=x.astype(np.float64), bias=bias)
    with pytest.raises(ss.ShapeError, match="expected 3 dimensions"):
        art.run(x=x[0], bias=bias)
    with pytest.raises(ss.ShapeError):
        art.run(x=np.zeros((2, 5, 63), np.float32), bias=bias)
    with pytest.raises(ValueError, match="not supported"):
        art.run(x=x.astype(np.complex64), bias=bias)
    with pytest.raises(ValueError, match="bytes other than 0 and 1"):
        spec = {"inputs": [{"name": "m", "sizes": ["n"], "layout": "contiguous", "dtype": "bool"}],
                "hints": {"n": 3}, "steps": [{"let": "k", "op": "logical_not", "args": ["m"]}],
                "outputs": ["k"]}
        ss.compile(spec).run(m=np.array([0, 2, 1], np.uint8).view(np.bool_))
    # A binding outside the guards is re-traced (and cached) by default, refused with
    # retrace=False.
    one = np.zeros((2, 1, 64), np.float32)
    with pytest.raises(ss.GuardError, match="s >= 2"):
        art.run_with({"x": one, "bias": bias}, retrace=False)
    before = art.dispatch_stats
    assert art.run(x=one, bias=bias)["y"].shape == (2, 4, 1, 16)
    after = art.dispatch_stats
    assert after["retraces"] == before["retraces"] + 1
    assert after["specializations"] == before["specializations"] + 1
    # The re-traced specialization now admits it: no GuardError, no new trace.
    assert art.run_with({"x": one, "bias": bias}, retrace=False)["y"].shape == (2, 4, 1, 16)
    assert art.dispatch_stats["retraces"] == after["retraces"]


def test_replanned_inputs_are_computed_for_their_own_layout():
    """Inputs in another layout than the spec's run through a plan for that layout."""
    spec = {"inputs": [{"name": "x", "sizes": ["n", "c", "h", "w"], "layout": "contiguous"}],
            "hints": {"n": 2, "c": 3, "h": 4, "w": 5},
            "steps": [{"let": "y", "op": "exp", "args": ["x"]}], "outputs": ["y"]}
    art = ss.compile(spec)
    v = np.random.default_rng(2).standard_normal((2, 3, 4, 5)).astype(np.float32)
    cl = np.ascontiguousarray(v.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    y = art.run(x=cl)["y"]
    np.testing.assert_allclose(y, np.exp(v), rtol=1e-6)
    # TensorIterator keeps the input's channels-last order for the output.
    assert [s // 4 for s in y.strides] == [60, 1, 15, 3]
    with pytest.raises(ss.GuardError):
        art.run_with({"x": cl}, retrace=False)


def test_compile_errors_and_spec_forms(tmp_path):
    with pytest.raises(ss.ParseError):
        ss.compile({"inputs": [], "steps": [], "outputs": ["nope"]})
    with pytest.raises(ss.ParseError):
        ss.compile("{not json")
    text = json.dumps(HEADS)
    a, b = ss.compile(text), ss.compile(HEADS)
    assert [str(g) for g in a.guards()] == [str(g) for g in b.guards()]
    covered = ss.compile(HEADS, cover=True)
    assert covered.num_specializations > 1
    # Every binding is admitted by some specialization, e.g. s = 1 that the trace at the
    # hints rejects; its layouts are the concrete ones.
    for b, s in ((1, 1), (0, 3), (3, 7)):
        c = covered.check(b=b, s=s)
        assert c.admitted and c.outputs == a.check(b=b, s=s).outputs


def test_guards_check_save_load(tmp_path):
    art = ss.compile(HEADS)
    guards = art.guards()
    assert [str(g) for g in guards] == ["b >= 1", "s >= 2"]
    assert all(g.reason for g in guards)
    assert "step 3" in guards[1].reason
    c = art.check(b=8, s=3)
    assert c and c.specialization == 0 and c.failed_guard is None
    assert c.outputs["c"]["sizes"] == [8, 4, 3, 16]
    miss = art.check(b=8, s=1)
    assert not miss and str(miss.failed_guard) == "s >= 2"
    assert miss.outputs["y"]["sizes"] == [8, 4, 1, 16]
    bad = art.check(b=-1, s=3) if False else None
    assert bad is None
    with pytest.raises(ss.SymbolError):
        art.check(b=2)
    path = tmp_path / "heads.json"
    art.save(path)
    again = ss.Artifact.load(path)
    assert [str(g) for g in again.guards()] == ["b >= 1", "s >= 2"]
    x = np.ones((2, 5, 64), np.float32)
    bias = np.ones((4, 1, 16), np.float32)
    np.testing.assert_array_equal(again.run(x=x, bias=bias)["c"], art.run(x=x, bias=bias)["c"])
    # An edited guard is rejected on load.
    doc = json.loads(path.read_text())
    doc["specializations"][0]["guards"][1]["cond"] = "s >= 1"
    path.write_text(json.dumps(doc))
    with pytest.raises(ss.ArtifactError, match="specialization 0"):
        ss.Artifact.load(path)
    with pytest.raises(ss.SymstrideIOError):
        ss.Artifact.load(tmp_path / "missing.json")


def test_empty_and_size_one_inputs():
    art = ss.compile(HEADS)
    x = np.zeros((0, 5, 64), np.float32)
    out = art.run(x=x, bias=np.zeros((4, 1, 16), np.float32))
    assert out["c"].shape == (0, 4, 5, 16)


def test_gil_is_released_during_run():
    """Another Python thread keeps running while the kernels run: ticks land inside the
    runs' time intervals (with the GIL held for a whole run, none could)."""
    import threading
    import time

    spec = {"inputs": [{"name": "x", "sizes": ["n"], "layout": "contiguous"}],
            "hints": {"n": 8}, "steps": [{"let": "y", "op": "exp", "args": ["x"]}],
            "outputs": ["y"]}
    art = ss.compile(spec)
    x = np.ones(1 << 23, np.float32)
    ticks, runs = [], []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.0002)

    t = threading.Thread(target=ticker)
    t.start()
    time.sleep(0.01)
    for _ in range(4):
        start = time.perf_counter()
        art.run(x=x)
        runs.append((start, time.perf_counter()))
    stop.set()
    t.join()
    inside = [u for u in ticks if any(a < u < b for a, b in runs)]
    assert len(inside) >= 2 * len(runs), (len(inside), runs)


def test_inputs_with_other_strides_on_size_one_dims():
    """numpy puts any stride on a size-1 dimension (0 for ``None`` indexing): such inputs
    run and give the same values."""
    art = ss.compile(HEADS)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, 64)).astype(np.float32)
    b2 = rng.standard_normal((4, 16)).astype(np.float32)
    bias = b2[:, None, :]
    assert bias.strides[1] == 0
    out = art.run(x=x, bias=bias)
    np.testing.assert_allclose(out["y"], heads_reference(x, bias)["y"], rtol=1e-6)


def test_fused_chains_run_like_step_by_step():
    """The artifact records which steps run fused; `run` evaluates them in one pass and
    agrees with `run_with(..., fuse=False)` (every step on its own) and with numpy."""
    spec = {"inputs": [{"name": "x", "sizes": ["n", "d"], "layout": "contiguous"},
                       {"name": "w", "sizes": ["d"], "layout": "contiguous"}],
            "hints": {"n": 3, "d": 8},
            "steps": [{"let": "a", "op": "mul", "args": ["x", "w"]},
                      {"let": "b", "op": "add", "args": ["a", 1.5]},
                      {"let": "r", "op": "relu", "args": ["b"]},
                      {"let": "m", "op": "amax", "args": ["r", [-1]], "keepdim": True},
                      {"let": "y", "op": "sub", "args": ["r", "m"]}],
            "outputs": ["y", "m"]}
    art = ss.compile(spec)
    # Steps 1-4 fuse: mul, add, relu evaluated inside the amax's loop, `r` written once
    # there for step 5 (its second reader). All five are also a row segment (the amax over
    # the last dim broadcast back by `sub`): rows of 32-16384 elements (d = 300 below) run
    # row by row, shorter ones the chain and step 5 on its own.
    assert art.fused() == [[1, 2, 3, 4], [1, 2, 3, 4, 5]]
    assert ss.Artifact.from_json(art.to_json()).fused() == [[1, 2, 3, 4], [1, 2, 3, 4, 5]]
    rng = np.random.default_rng(5)
    for n, d, transposed in [(3, 8, False), (5, 300, False), (4, 7, True), (1, 1, False)]:
        v = rng.standard_normal((n, d)).astype(np.float32)
        x = np.ascontiguousarray(v.T).T if transposed else v
        w = rng.standard_normal(d).astype(np.float32)
        fused = art.run(x=x, w=w)
        plain = art.run_with({"x": x, "w": w}, fuse=False)
        r = np.maximum(v * w + np.float32(1.5), 0)
        ref = {"m": r.max(axis=-1, keepdims=True)}
        ref["y"] = r - ref["m"]
        for name in ("y", "m"):
            np.testing.assert_allclose(fused[name], plain[name], rtol=1e-6, atol=1e-6)
            np.testing.assert_allclose(fused[name], ref[name], rtol=1e-6, atol=1e-6)
    with pytest.raises(ss.DimIndexError):
        art.fused(5)


def test_real_graph_activations_with_keywords():
    """The ops real model graphs use, by PyTorch name with keywords (``gelu`` tanh form,
    ``clamp`` with one bound, ``leaky_relu``, ``hardtanh``, ``masked_fill`` with ``-inf``),
    compiled and run on numpy arrays, against numpy."""
    from math import erf

    spec = {
        "inputs": [
            {"name": "x", "sizes": ["b", "s"], "layout": "contiguous"},
            {"name": "m", "sizes": [1, "s"], "layout": "contiguous", "dtype": "bool"},
        ],
        "hints": {"b": 2, "s": 8},
        "steps": [
            {"let": "g", "op": "gelu", "args": ["x"]},
            {"let": "l", "op": "leaky_relu", "args": ["x"], "negative_slope": 0.25},
            {"let": "c", "op": "clamp", "args": ["l"], "min": None, "max": 1.5},
            {"let": "h", "op": "hardtanh", "args": ["x"], "min_val": -0.5, "max_val": 0.5},
            {"let": "f", "op": "masked_fill", "args": ["x", "m"], "value": {"float": "-inf"}},
        ],
        "outputs": ["g", "c", "h", "f"],
    }
    art = ss.compile(spec)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 5)).astype(np.float32) * 3
    m = rng.random((1, 5)) < 0.5
    out = art.run(x=x, m=m)
    gelu = np.vectorize(lambda v: 0.5 * v * (1 + erf(v / np.sqrt(2))))(x.astype(np.float64))
    np.testing.assert_allclose(out["g"], gelu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["c"], np.minimum(np.where(x > 0, x, 0.25 * x), 1.5), rtol=1e-6)
    np.testing.assert_array_equal(out["h"], np.clip(x, -0.5, 0.5))
    np.testing.assert_array_equal(out["f"], np.where(m, -np.inf, x).astype(np.float32))
    assert out["f"].strides == (20, 4)


def test_structured_ops_in_a_program():
    """Structured ops of real graphs in one compiled program — ``arange`` with a symbolic
    end, ``embedding`` of an index input filled in range, ``layer_norm``, ``softmax``,
    ``cat``, a ``chunk`` naming two results — run on numpy arrays, against numpy."""
    spec = {
        "inputs": [
            {"name": "table", "sizes": ["v", "d"], "layout": "contiguous"},
            {"name": "ids", "sizes": ["b", "s"], "layout": "contiguous", "dtype": "int64",
             "fill": {"mod": "v"}},
            {"name": "w", "sizes": ["d"], "layout": "contiguous"},
        ],
        "hints": {"v": 7, "d": 4, "b": 2, "s": 3},
        "steps": [
            {"let": "e", "op": "embedding", "args": ["table", "ids"]},
            {"let": "ln", "op": "layer_norm", "args": ["e", "w", None],
             "normalized_shape": ["d"], "eps": 1e-5},
            {"let": "p", "op": "softmax", "args": ["ln"], "dim": -1},
            {"let": "pos", "op": "arange", "args": [], "end": "s"},
            {"let": "both", "op": "cat", "args": [["e", "ln"]], "dim": -1},
            {"let": ["lo", "hi"], "op": "chunk", "args": ["both"], "chunks": 2, "dim": -1},
        ],
        "outputs": ["p", "pos", "lo", "hi"],
    }
    art = ss.compile(spec)
    rng = np.random.default_rng(3)
    table = rng.standard_normal((5, 6)).astype(np.float32)
    ids = rng.integers(0, 5, size=(3, 4))
    w = rng.standard_normal(6).astype(np.float32)
    out = art.run(table=table, ids=ids, w=w)
    e = table[ids].astype(np.float64)
    ln = (e - e.mean(-1, keepdims=True)) / np.sqrt(e.var(-1, keepdims=True) + 1e-5) * w
    p = np.exp(ln - ln.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    np.testing.assert_allclose(out["p"], p, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out["pos"], np.arange(4))
    both = np.concatenate([e, ln], axis=-1)
    np.testing.assert_allclose(out["lo"], both[..., :6], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["hi"], both[..., 6:], rtol=1e-5, atol=1e-5)
    bad = ids.copy()
    bad[0, 0] = 5
    with pytest.raises(ss.SymstrideError):
        art.run(table=table, ids=bad, w=w)
