"""gradcheck / gradgradcheck give the same verdicts as PyTorch's on right, wrong and
first-order-only derivatives, in full and fast mode.
"""

import numpy as np
import pytest

import retrograd as R

torch = pytest.importorskip("torch")


def _checkers(lib):
    """Custom functions with a right, a wrong, and a first-order-only derivative."""
    class Good(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * x * y, x + y

        @staticmethod
        def backward(ctx, g1, g2):
            x, y = ctx.saved_tensors
            return g1 * 2 * x * y + g2, g1 * x * x + g2

    class Wrong(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3.1 * x ** 2

    class FirstOrderOnly(lib.autograd.Function):
        # right first derivative, but computed off the graph: its derivative is lost
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x.detach() ** 2

    return Good, Wrong, FirstOrderOnly


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_agrees_with_torch(fast_mode):
    for lib in (R, torch):
        Good, Wrong, FirstOrderOnly = _checkers(lib)
        x = lib.tensor(np.array([[0.3, -1.2], [0.7, 2.0]]), requires_grad=True)
        y = lib.tensor(np.array([0.5, -0.4]), requires_grad=True)
        check, ggcheck = lib.autograd.gradcheck, lib.autograd.gradgradcheck
        assert check(Good.apply, (x, y), fast_mode=fast_mode)
        assert ggcheck(Good.apply, (x, y), fast_mode=fast_mode)
        assert check(lambda a: (a.sin() * a).sum(1), (x,), fast_mode=fast_mode)
        assert not check(Wrong.apply, (x,), raise_exception=False, fast_mode=fast_mode)
        with pytest.raises(RuntimeError, match="Jacobian mismatch"):
            check(Wrong.apply, (x,), fast_mode=fast_mode)
        assert check(FirstOrderOnly.apply, (x,), fast_mode=fast_mode)
        assert not ggcheck(FirstOrderOnly.apply, (x,), raise_exception=False,
                           fast_mode=fast_mode)


def test_gradcheck_non_contiguous_input_and_no_differentiable_input():
    base = np.arange(6.0).reshape(2, 3) / 7 + 0.1
    x = R.tensor(base).t().detach().requires_grad_(True)  # a transposed (strided) leaf
    assert not x.detach().numpy().flags.c_contiguous
    assert R.autograd.gradcheck(lambda a: a.exp() * a, (x,))
    Wrong = _checkers(R)[1]
    assert not R.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False)
    c = R.tensor(base)
    with pytest.raises(ValueError):
        torch.autograd.gradcheck(lambda a: a * 2, (torch.tensor(base),))
    with pytest.raises(ValueError, match="requires_grad=True"):
        R.autograd.gradcheck(lambda a: a * 2, (c,))
