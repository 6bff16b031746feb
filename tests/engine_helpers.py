"""Helpers shared by the engine tests: the same leaf in both libraries, comparisons."""

import warnings

import numpy as np
import pytest

import retrograd as R

torch = pytest.importorskip("torch")

RTOL = 1e-10
ATOL = 1e-12


def pair(data, requires_grad=True):
    """The same float64 leaf in retrograd and in torch."""
    arr = np.asarray(data, dtype=np.float64)
    return (R.tensor(arr.copy(), requires_grad=requires_grad),
            torch.tensor(arr.copy(), requires_grad=requires_grad))


def rand_pair(*shape, seed=0, requires_grad=True):
    return pair(np.random.default_rng(seed).standard_normal(shape), requires_grad)


def close(r, t, rtol=RTOL, atol=ATOL):
    """Assert a retrograd tensor equals a torch tensor (or both are None)."""
    if t is None:
        assert r is None, f"expected None, got {r!r}"
        return
    assert r is not None, f"expected {t!r}, got None"
    np.testing.assert_allclose(np.asarray(r.detach()), t.detach().numpy(), rtol=rtol,
                               atol=atol)
    assert tuple(r.shape) == tuple(t.shape)


def grad_of(x):
    """``x.grad`` without the non-leaf UserWarning (tests of the warning are separate)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return x.grad


def both_raise(fr, ft, exc=RuntimeError, match=None):
    """Both libraries raise ``exc``; retrograd's message matches ``match`` when given."""
    with pytest.raises(exc):
        ft()
    with pytest.raises(exc, match=match):
        fr()


def _run_both(build):
    """Run ``build(lib, x, log)`` for both libraries; return (retrograd, torch) results."""
    out = []
    for lib, x in zip((R, torch), rand_pair(3)):
        log = []
        result = build(lib, x, log)
        out.append((x, log, result))
    return out


def _structure(fn):
    """grad_fn.next_functions as nested names, down to the leaves."""
    if fn is None:
        return None
    name = type(fn).__name__
    if name == "AccumulateGrad":
        return name
    return (name, tuple((_structure(f), nr) for f, nr in fn.next_functions))


def _custom_functions(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.save_for_backward(x)
            ctx.scale = scale
            return x ** 3 * scale

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2 * ctx.scale, None

    class SplitTwo(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b, a + b

        @staticmethod
        def backward(ctx, ga, gb):
            a, b = ctx.saved_tensors
            return ga * b + gb, ga * a + gb

    class Needs(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.seen = ctx.needs_input_grad
            return a * b

        @staticmethod
        def backward(ctx, g):
            return (g * 2 if ctx.needs_input_grad[0] else None,
                    g * 3 if ctx.needs_input_grad[1] else None)

    class WithIndex(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            idx = x.argmax()
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(x)
            return x.exp(), idx

        @staticmethod
        def backward(ctx, g, gidx):
            (x,) = ctx.saved_tensors
            return g * x.exp()

    class WrongCount(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return (g,)

    return Cube, SplitTwo, Needs, WithIndex, WrongCount
