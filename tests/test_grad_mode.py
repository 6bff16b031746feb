"""Grad modes (no_grad, enable_grad, set_grad_enabled, inference_mode; context managers,
decorators, generators, threads) and anomaly detection, each compared with PyTorch 2.13.
"""

import threading
import warnings

import numpy as np
import pytest

import retrograd as R
from retrograd.autograd import Function as RFunction

torch = pytest.importorskip("torch")

from engine_helpers import close, pair, rand_pair  # noqa: E402


def test_no_grad_enable_grad_nesting_and_decorators():
    for lib, x in zip((R, torch), rand_pair(3)):
        with lib.no_grad():
            assert not lib.is_grad_enabled()
            y = x * 2
            with lib.enable_grad():
                assert lib.is_grad_enabled()
                z = x * 2
            w = x * 2
        assert lib.is_grad_enabled()
        assert not y.requires_grad and z.requires_grad and not w.requires_grad

        @lib.no_grad()
        def f(t, lib=lib):
            return t * 2, lib.is_grad_enabled()

        out, mode = f(x)
        assert not out.requires_grad and not mode and lib.is_grad_enabled()

        @lib.enable_grad()
        def g(t):
            return t * 2

        with lib.no_grad():
            assert g(x).requires_grad
            assert not lib.is_grad_enabled()


def test_set_grad_enabled_function_context_and_decorator():
    for lib, x in zip((R, torch), rand_pair(3)):
        lib.set_grad_enabled(False)
        try:
            assert not (x * 2).requires_grad
        finally:
            lib.set_grad_enabled(True)
        assert (x * 2).requires_grad
        with lib.set_grad_enabled(False):
            assert not (x * 2).requires_grad
            with lib.set_grad_enabled(True):
                assert (x * 2).requires_grad
            assert not lib.is_grad_enabled()
        assert lib.is_grad_enabled()

        @lib.set_grad_enabled(False)
        def f(t):
            return t * 2

        assert lib.is_grad_enabled()
        assert not f(x).requires_grad
        assert lib.is_grad_enabled()


def test_no_grad_restores_on_exception():
    for lib in (R, torch):
        with pytest.raises(ValueError):
            with lib.no_grad():
                raise ValueError
        assert lib.is_grad_enabled()


def test_grad_mode_is_thread_local():
    rx, _ = rand_pair(3)
    results = {}
    inside = threading.Event()
    proceed = threading.Event()

    def worker():
        with R.no_grad():
            results["worker_inside"] = R.is_grad_enabled()
            inside.set()
            proceed.wait(5)
            results["worker_tensor"] = (rx * 2).requires_grad

    t = threading.Thread(target=worker)
    t.start()
    inside.wait(5)
    # the worker is inside no_grad right now; the main thread still records
    results["main"] = R.is_grad_enabled()
    results["main_tensor"] = (rx * 2).requires_grad
    proceed.set()
    t.join()
    assert results == {"worker_inside": False, "worker_tensor": False, "main": True,
                       "main_tensor": True}


def test_new_thread_starts_with_grad_enabled():
    seen = []
    with R.no_grad():
        t = threading.Thread(target=lambda: seen.append(R.is_grad_enabled()))
        t.start()
        t.join()
    assert seen == [True]


def test_backward_under_no_grad_still_computes():
    for lib, x in zip((R, torch), rand_pair(3)):
        y = (x * x).sum()
        with lib.no_grad():
            y.backward()
    rx, tx = rand_pair(3)
    for lib, x in ((R, rx), (torch, tx)):
        y = (x * x).sum()
        with lib.no_grad():
            y.backward()
    close(rx.grad, tx.grad)


def test_grad_mode_bare_decorators_generators_and_inference_mode():
    for lib, x in zip((R, torch), rand_pair(3)):
        @lib.no_grad
        def f(t, lib=lib):
            return t * 2, lib.is_grad_enabled()

        out, mode = f(x)
        assert not out.requires_grad and not mode and lib.is_grad_enabled()

        @lib.enable_grad
        def g(t):
            return t * 2

        with lib.no_grad():
            assert g(x).requires_grad

        @lib.no_grad()
        def gen(lib=lib):
            for _ in range(2):
                yield lib.is_grad_enabled()

        steps = gen()
        assert next(steps) is False
        assert lib.is_grad_enabled()  # between steps the caller's mode is back
        assert list(steps) == [False]

        @lib.inference_mode
        def h(t):
            return t * 2

        @lib.inference_mode(False)
        def h2(t):
            return t * 2

        assert not h(x).requires_grad and h2(x).requires_grad
        with lib.inference_mode():
            assert not lib.is_grad_enabled() and lib.is_inference_mode_enabled()
            assert not (x * 2).requires_grad
        assert lib.is_grad_enabled() and not lib.is_inference_mode_enabled()


def test_detect_anomaly_matches_torch():
    for lib, x in zip((R, torch), pair([0.0, 1.0])):
        with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
            ctx = lib.autograd.detect_anomaly()
        with ctx:
            assert lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()
            y = (x.sqrt() * 0).sum()
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                with pytest.raises(RuntimeError,
                                   match=r"Function 'SqrtBackward0' returned nan values in "
                                         r"its 0th output\."):
                    y.backward()
            assert any("Error detected in SqrtBackward0" in str(w.message) for w in seen)
        assert not lib.is_anomaly_enabled()
        with lib.autograd.set_detect_anomaly(True, check_nan=False):
            assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
            (x.sqrt() * 0).sum().backward()  # NaN allowed through
        assert not lib.is_anomaly_enabled()
        assert np.isnan(x.grad.detach().numpy()[0])


def test_detect_anomaly_reports_forward_trace_of_custom_function():
    class Bad(RFunction):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("broken backward")

    x = R.tensor([1.0], requires_grad=True)
    with pytest.warns(UserWarning):
        ctx = R.autograd.detect_anomaly()
    with ctx:
        y = Bad.apply(x)  # this line must appear in the report
        with pytest.warns(UserWarning, match=r"(?s)Error detected in BadBackward.*y = Bad.apply"):
            with pytest.raises(ValueError, match="broken backward"):
                y.sum().backward()


def test_view_made_under_no_grad_requires_grad_but_gets_no_gradient_as_torch(torch):
    # PyTorch: such a view requires grad (it is a leaf), ops on it record a graph, but its
    # edge is None: no .grad for it or its base, hooks never run, grad() finds it unused
    seen = {}
    for m in (R, torch):
        base = m.tensor([[2.0, 3.0]], dtype=m.float64, requires_grad=True)
        with m.no_grad():
            views = [base[0], base.t(), base.view(2)]
        hook_calls = []
        views[0].register_hook(hook_calls.append)
        y = (views[0] * 2).sum()
        with pytest.raises(RuntimeError, match="appears to not have been used"):
            m.autograd.grad(y, views[0], retain_graph=True)
        unused = m.autograd.grad(y, [views[0]], allow_unused=True, retain_graph=True)
        y.backward(retain_graph=True)
        y.backward(inputs=[views[0]])
        (views[0] * base).sum().backward()
        with pytest.raises(RuntimeError, match="does not require grad"):
            views[0].backward(m.ones(2))
        views[0].requires_grad_(False)
        seen[m] = ([(v.requires_grad, v.is_leaf, v.grad_fn is None) for v in views],
                   y.requires_grad, unused, hook_calls, views[0].grad, base.grad.tolist(),
                   views[0].requires_grad)
    assert seen[R] == seen[torch]
