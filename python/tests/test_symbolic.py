"""The symbolic layer from Python: arithmetic against plain ints, guards from branching,
static decisions, unbacked symbols, errors."""

import itertools
import random

import pytest

import symstride as ss


def test_arithmetic_agrees_with_ints_at_every_binding():
    rng = random.Random(0)
    for _ in range(200):
        env = ss.ShapeEnv()
        ha, hb = rng.randint(1, 9), rng.randint(1, 9)
        a, b = env.create_symbol("a", ha), env.create_symbol("b", hb)
        k = rng.randint(-5, 5)
        exprs = [
            (a + b, lambda x, y: x + y),
            (a * b + k, lambda x, y: x * y + k),
            (k - a, lambda x, y: k - x),
            (3 * a - b * b, lambda x, y: 3 * x - y * y),
            ((a * b + k) // b, lambda x, y: (x * y + k) // y),
            ((a + 7) % b, lambda x, y: (x + 7) % y),
            (-a, lambda x, y: -x),
            (ss.sym_max(a, b), max),
            (ss.sym_min(a, 2), lambda x, y: min(x, 2)),
        ]
        for e, f in exprs:
            assert e.hint == f(ha, hb)
            for x, y in itertools.product(range(1, 5), repeat=2):
                assert e.evaluate(a=x, b=y) == f(x, y)


def test_constants_come_back_as_ints():
    env = ss.ShapeEnv()
    s = env.create_symbol("s", 4)
    assert (s - s) == 0 and isinstance(s - s, int)
    assert isinstance(s * 0 + 3, int)
    assert ss.contiguous_strides([s, 3]) [1] == 1
    assert str(ss.contiguous_strides([s, 3, 2])[0]) == "6"


def test_branching_records_guards_with_reasons():
    env = ss.ShapeEnv()
    s = env.create_symbol("s", 5)
    assert bool(s == 1) is False
    assert [str(g) for g in env.guards] == ["s != 1"]
    assert "bool(" in env.guards[0].reason
    if s > 3:
        pass
    # `s != 1` is implied by `s >= 4` and pruned.
    assert [str(g) for g in env.guards] == ["s >= 4"]
    assert env.admits(s=7)
    assert not env.admits(s=1)
    assert env.hints == {"s": 5} and env.symbols == ["s"]
    assert str(env.failed_guard(s=3)) == "s >= 4"


def test_statically_known_true_records_nothing():
    env = ss.ShapeEnv()
    s = env.create_symbol("s", 3, min=2)
    assert ss.statically_known_true(s >= 2)
    assert ss.statically_known_true(s * s >= s)
    assert not ss.statically_known_true(s == 3)
    assert (s == 3).statically_known() is None
    assert ss.statically_known_true(True) and not ss.statically_known_true(False)
    assert env.guards == []


def test_int_specializes():
    env = ss.ShapeEnv()
    s = env.create_symbol("s", 6)
    assert int(s) == 6
    assert [str(g) for g in env.guards] == ["s == 6"]


def test_unbacked_symbols_are_data_dependent():
    env = ss.ShapeEnv()
    u = env.create_unbacked("u")
    assert u.hint is None
    with pytest.raises(ss.DataDependentError) as e:
        bool(u == 3)
    assert isinstance(e.value, RuntimeError)
    assert "u" in str(e.value)
    assert ss.guard_or_false(u == 3) is False
    assert ss.guard_or_true(u == 3) is True
    assert ss.is_contiguous_or_false([u, 2], [2, 1]) is True
    with pytest.raises(ss.DataDependentError):
        int(u)


def test_symbol_errors():
    env = ss.ShapeEnv()
    env.create_symbol("s", 2)
    with pytest.raises(ss.SymbolError, match="already exists"):
        env.create_symbol("s", 3)
    with pytest.raises(ss.SymbolError, match="outside its declared range"):
        env.create_symbol("t", 1, min=2)
    with pytest.raises(ss.SymbolError):
        env.create_symbol("1bad", 2)
    assert env.create_symbol("one", 1, specialize_zero_one=True) == 1
    s = env.create_symbol("z", 0)
    with pytest.raises(ZeroDivisionError):
        3 // s
    with pytest.raises(TypeError):
        ss.is_contiguous([True, 2], [2, 1])


def test_layout_on_symbols_guards_and_branch_free_forms():
    env = ss.ShapeEnv()
    c, h, w = (env.create_symbol(n, v) for n, v in (("c", 3), ("h", 4), ("w", 5)))
    sizes = [2, c, h, w]
    strides = ss.channels_last_strides(sizes)
    assert [str(x) for x in strides] == ["c*h*w", "1", "c*w", "c"]
    # Branch-free: proven for every binding, no guard.
    assert ss.channels_last_contiguity_expr(sizes, strides) is True
    assert env.guards == []
    assert ss.is_contiguous(sizes, strides) is False
    guards = env.guards
    assert guards and all(g.reason for g in guards)
    # The guards are sound: any binding they admit gives the concrete answer.
    for cv, hv, wv in itertools.product(range(0, 4), repeat=3):
        b = dict(c=cv, h=hv, w=wv)
        if env.admits(**b):
            conc = [2, cv, hv, wv]
            st = [x if isinstance(x, int) else x.evaluate(**b) for x in strides]
            assert ss.is_contiguous(conc, st) is False
    assert ss.suggest_memory_format(sizes, strides) == "channels_last"
    assert ss.numel(sizes).evaluate(c=1, h=2, w=3) == 12


def test_layout_input_errors():
    with pytest.raises(ss.InvalidInputError, match="negative"):
        ss.is_contiguous([2, -1], [1, 1])
    with pytest.raises(ValueError):
        ss.is_contiguous([2, 3], [1])
    with pytest.raises(ss.SymOverflowError):
        ss.contiguous_strides([1 << 40, 1 << 40])
    with pytest.raises(ss.BroadcastError, match="must match"):
        ss.broadcast_shapes([2, 3], [3, 2])


def test_views_with_symbolic_arguments():
    env = ss.ShapeEnv()
    b, s = env.create_symbol("b", 2), env.create_symbol("s", 5)
    x = ss.View([b, s, 64])
    q = x.view(b, s, 4, -1).transpose(1, 2)
    assert [str(v) for v in q.sizes] == ["b", "4", "s", "16"]
    assert [str(v) for v in q.strides] == ["64*s", "16", "64", "1"]
    assert q.aliases
    r = q.reshape(b, -1)
    assert not r.aliases
    with pytest.raises(ss.DimIndexError) as e:
        x.transpose(0, 5)
    assert isinstance(e.value, IndexError) and e.value.category == "index"
    with pytest.raises(ss.ViewError):
        ss.View([4, 6], [1, 4]).view(24)
