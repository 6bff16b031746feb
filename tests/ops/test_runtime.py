"""Runtime settings (ops/runtime.py): thread counts and deterministic mode, their values,
the errors PyTorch raises, and what they change (recorded; BLAS threads via threadpoolctl
when installed)."""

from __future__ import annotations

import pytest

import retrograd
from retrograd.ops import runtime


@pytest.fixture
def restore():
    saved = (list(runtime._threads), list(runtime._interop), list(runtime._deterministic))
    yield
    runtime._threads[:], runtime._interop[:], runtime._deterministic[:] = saved
    retrograd.set_num_threads(saved[0][0])


def test_num_threads_round_trip(restore):
    assert retrograd.get_num_threads() >= 1
    retrograd.set_num_threads(1)
    assert retrograd.get_num_threads() == 1


def test_num_threads_limits_blas_when_threadpoolctl_is_installed(restore):
    threadpoolctl = pytest.importorskip("threadpoolctl")  # optional by design
    retrograd.set_num_threads(1)
    pools = threadpoolctl.threadpool_info()
    assert all(p["num_threads"] == 1 for p in pools)


def test_interop_threads_set_once(restore):
    runtime._interop[1] = False
    retrograd.set_num_interop_threads(3)
    assert retrograd.get_num_interop_threads() == 3
    with pytest.raises(RuntimeError, match="cannot set number of interop threads"):
        retrograd.set_num_interop_threads(2)


@pytest.mark.parametrize("mode,want", [("warn", (True, True, 1)), ("error", (True, False, 2)),
                                       ("default", (False, False, 0)), (1, (True, True, 1)),
                                       (2, (True, False, 2))])
def test_debug_mode_as_torch(mode, want, restore, torch):
    for m in (retrograd, torch):
        m.set_deterministic_debug_mode(mode)
        got = (m.are_deterministic_algorithms_enabled(),
               m.is_deterministic_algorithms_warn_only_enabled(),
               m.get_deterministic_debug_mode())
        m.use_deterministic_algorithms(False)
        assert got == want


def test_use_deterministic_algorithms_as_torch(restore, torch):
    for m in (retrograd, torch):
        m.use_deterministic_algorithms(True, warn_only=True)
        assert m.are_deterministic_algorithms_enabled()
        assert m.is_deterministic_algorithms_warn_only_enabled()
        assert m.get_deterministic_debug_mode() == 1
        m.use_deterministic_algorithms(False)
        assert m.get_deterministic_debug_mode() == 0


BAD = [
    ("threads 0", lambda m: m.set_num_threads(0), "positive integer"),
    ("threads float", lambda m: m.set_num_threads(2.5), "expects an int"),
    ("interop 0", lambda m: m.set_num_interop_threads(0), "positive integer"),
    ("mode int", lambda m: m.use_deterministic_algorithms(1), "must be bool"),
    ("warn_only int", lambda m: m.use_deterministic_algorithms(True, warn_only=1),
     "must be bool"),
    ("debug name", lambda m: m.set_deterministic_debug_mode("loud"), "debug_mode"),
    ("debug int", lambda m: m.set_deterministic_debug_mode(3), "debug_mode"),
    ("debug float", lambda m: m.set_deterministic_debug_mode(1.0), "debug_mode"),
]


@pytest.mark.parametrize("call,words", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_errors_as_torch(call, words, restore, torch):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)) as got:
        call(retrograd)
    assert words in str(got.value), str(got.value)


def test_more_settings_as_torch(torch):
    for m in (retrograd, torch):
        assert m.is_warn_always_enabled() is False
        m.set_warn_always(True)
        assert m.is_warn_always_enabled() is True
        m.set_warn_always(False)
        assert m.get_float32_matmul_precision() == "highest"
        m.set_float32_matmul_precision("medium")
        assert m.get_float32_matmul_precision() == "medium"
        with pytest.warns(UserWarning, match="not one of"):
            m.set_float32_matmul_precision("fastest")
        assert m.get_float32_matmul_precision() == "medium"
        m.set_float32_matmul_precision("highest")
        assert str(m.get_default_device()) == "cpu"
        assert m.is_storage(m.zeros(1)) is False
    assert retrograd.set_flush_denormal(True) is False  # not supported: NumPy has no switch


@pytest.mark.parametrize("obj", ["tensor", "int8", 3, None, "dtype"])
def test_typename_as_torch(obj, torch):
    def make(m):
        return {"tensor": m.zeros(2), "int8": m.zeros(2, dtype=m.int8), "dtype": 1.5}.get(
            obj, obj)

    got, want = retrograd.typename(make(retrograd)), torch.typename(make(torch))
    assert got.replace("retrograd.", "torch.") == want


def test_cond_as_torch(torch):
    for m in (retrograd, torch):
        x = m.ones(2, requires_grad=True)
        y = m.cond(m.tensor(True), lambda a: a * 3, lambda a: a - 1, (x,))
        y.sum().backward()
        assert x.grad.tolist() == [3.0, 3.0]
        assert m.cond(0, lambda m=m: m.ones(1), lambda m=m: m.zeros(1)).tolist() == [0.0]
    for m in (retrograd, torch):
        with pytest.raises(RuntimeError, match="single-element tensor"):
            m.cond(m.tensor([True, False]), lambda: 1, lambda: 2)


def test_while_loop_as_torch(torch):
    got = []
    for m in (retrograd, torch):
        x = m.ones(2, requires_grad=True)
        i, y = m.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, a * 2), (m.tensor(0), x))
        y.sum().backward()
        got.append((int(i), y.tolist(), x.grad.tolist()))
        assert m.while_loop(lambda i: i < 3, lambda i: i + 1, (m.tensor(0),)).tolist() == 3
    assert got[0] == got[1]


def test_sym_helpers_and_get_device_as_torch(torch):
    for m in (retrograd, torch):
        got = (m.sym_max(2, 1.0), m.sym_min(2, 1.0), m.sym_max(2, 3), m.sym_int(-2.7),
               m.sym_float(3), m.sym_sqrt(4), m.sym_sum([1, 2, 3]), m.sym_ite(False, 1, 2),
               m.sym_not(True), m.get_device(m.zeros(1)), m.init_num_threads())
        assert got == (2.0, 1.0, 3, -2, 3.0, 2.0, 6, 2, False, -1, None)
        assert [type(v) for v in got[:3]] == [float, float, int]


def test_anomaly_switch_and_backend_queries_as_torch(torch):
    for m in (retrograd, torch):
        m.set_anomaly_enabled(True, False)
        assert m.is_anomaly_enabled() and not m.is_anomaly_check_nan_enabled()
        m.set_anomaly_enabled(False)
        assert not m.is_anomaly_enabled()
        assert not m.is_distributed(m.zeros(1)) and not m.is_vulkan_available()
        assert not m.cudnn_is_acceptable(m.zeros(1))
