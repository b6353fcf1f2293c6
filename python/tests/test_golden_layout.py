"""The golden layout, broadcast and view cases through the Python API, concrete and
symbolic (every size, stride and offset a symbol whose hint is the concrete value)."""

import pytest

import symstride as ss

from conftest import golden_lines

LAYOUT = golden_lines("layout.jsonl")
BROADCAST = golden_lines("broadcast.jsonl")
VIEWS = golden_lines("views.jsonl")
ELEMENTWISE = golden_lines("elementwise.jsonl")


def expected(case):
    """The case's answer: PyTorch's ``message`` beside an error is information only."""
    return {k: v for k, v in case["expect"].items() if k != "message"}


def at_hint(x):
    """An answer evaluated at the hints (ints stay ints)."""
    if isinstance(x, list):
        return [at_hint(v) for v in x]
    if isinstance(x, (ss.SymInt, ss.SymBool)):
        return x.hint
    return x


class Lift:
    """Concrete values, or symbols with those hints in one ShapeEnv."""

    def __init__(self, symbolic):
        self.env = ss.ShapeEnv() if symbolic else None
        self.n = 0

    def __call__(self, values, prefix):
        if self.env is None:
            return list(values)
        out = []
        for v in values:
            out.append(self.env.create_symbol(f"{prefix}{self.n}", v))
            self.n += 1
        return out

    def one(self, v, prefix):
        return self(([v]), prefix)[0]

    def check_guards(self):
        """Every recorded guard holds at the hints."""
        if self.env is not None:
            assert self.env.failed_guard(**self.env.hints) is None


def layout_answer(case, symbolic):
    lift = Lift(symbolic)
    sizes = lift(case["sizes"], "s")
    strides = lift(case["strides"], "t")
    rank = len(sizes)
    got = {}
    for key in case["expect"]:
        if key == "is_contiguous":
            v = ss.is_contiguous(sizes, strides)
            free = ss.contiguity_expr(sizes, strides)
            assert at_hint(free) == v
        elif key == "is_channels_last_contiguous":
            v = ss.is_channels_last_contiguous(sizes, strides) if rank == 4 else None
        elif key == "is_channels_last_3d_contiguous":
            v = ss.is_channels_last_3d_contiguous(sizes, strides) if rank == 5 else None
        elif key == "is_non_overlapping_and_dense":
            v = ss.is_non_overlapping_and_dense(sizes, strides)
        elif key == "suggest_memory_format":
            v = ss.suggest_memory_format(sizes, strides)
        elif key == "empty_like_strides":
            v = at_hint(ss.empty_like_strides(sizes, strides))
        elif key == "contiguous_strides":
            v = at_hint(ss.contiguous_strides(sizes))
        elif key == "channels_last_strides":
            v = at_hint(ss.channels_last_strides(sizes)) if rank == 4 else None
        else:
            raise AssertionError(f"unknown layout key {key}")
        got[key] = v
    lift.check_guards()
    return got


@pytest.mark.parametrize("symbolic", [False, True], ids=["concrete", "symbolic"])
def test_layout_golden(symbolic):
    assert len(LAYOUT) == 3000
    bad = [c for c in LAYOUT if layout_answer(c, symbolic) != expected(c)]
    assert not bad, f"{len(bad)} layout cases differ, first: {bad[0]}"


def broadcast_answer(case, symbolic):
    lift = Lift(symbolic)
    shapes = [lift(s, "s") for s in case["shapes"]]
    try:
        got = {"sizes": at_hint(ss.broadcast_shapes(*shapes))}
    except ss.BroadcastError as e:
        assert isinstance(e, ValueError) and e.category == "broadcast"
        got = {"error": "broadcast"}
    lift.check_guards()
    return got


@pytest.mark.parametrize("symbolic", [False, True], ids=["concrete", "symbolic"])
def test_broadcast_golden(symbolic):
    assert len(BROADCAST) == 2000
    bad = [c for c in BROADCAST if broadcast_answer(c, symbolic) != expected(c)]
    assert not bad, f"{len(bad)} broadcast cases differ, first: {bad[0]}"


def apply_op(v, op):
    name, args = op[0], op[1:]
    if name in ("permute", "expand", "view", "reshape"):
        return getattr(v, name)(*args[0])
    if name == "slice":
        dim, start, end, step = args
        return v.slice(dim, start, end, step)
    if name == "squeeze":
        return v.squeeze(args[0])
    return getattr(v, name)(*args)


def view_answer(case, symbolic):
    lift = Lift(symbolic)
    b = case["base"]
    v = ss.View(
        lift(b["sizes"], "s"),
        lift(b["strides"], "t"),
        lift.one(b["offset"], "o"),
        lift.one(b["storage_numel"], "n"),
    )
    try:
        for op in case["ops"]:
            v = apply_op(v, op)
    except ss.SymstrideError as e:
        lift.check_guards()
        return {"error": e.category}
    lift.check_guards()
    return {
        "sizes": at_hint(v.sizes),
        "strides": at_hint(v.strides),
        "offset": at_hint(v.offset),
        "aliases": v.aliases,
    }


@pytest.mark.parametrize("symbolic", [False, True], ids=["concrete", "symbolic"])
def test_views_golden(symbolic):
    assert len(VIEWS) == 3000
    bad = [c for c in VIEWS if view_answer(c, symbolic) != expected(c)]
    assert not bad, f"{len(bad)} view cases differ, first: {bad[0]}"


def elementwise_answer(case, symbolic):
    lift = Lift(symbolic)
    tensors = [(lift(t["sizes"], "s"), lift(t["strides"], "t")) for t in case["inputs"]]
    try:
        sizes, strides = ss.elementwise_output(*tensors)
        got = {"sizes": at_hint(sizes), "strides": at_hint(strides)}
    except ss.BroadcastError:
        got = {"error": "broadcast"}
    lift.check_guards()
    return got


@pytest.mark.parametrize("symbolic", [False, True], ids=["concrete", "symbolic"])
def test_elementwise_golden(symbolic):
    assert len(ELEMENTWISE) == 3000
    bad = [c for c in ELEMENTWISE if elementwise_answer(c, symbolic) != expected(c)]
    assert not bad, f"{len(bad)} elementwise cases differ, first: {bad[0]}"
