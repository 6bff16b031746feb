"""The engine sums two gradients bound for one node in place only when one of them is a
derivative's fresh result that nothing else holds (engine._sum_arrays): never into an
array the user, a saved value or another edge still sees."""

import sys

import numpy as np
import torch

import retrograd as R
from retrograd.autograd import engine

N = 200  # 40,000 elements: above engine._INPLACE_MIN, so the in-place path is taken


def _chain(lib, x):
    h = x
    for _ in range(2):
        h = h + lib.exp(lib.tanh(lib.sin(h))) * 0.1
    return h.sum()


def test_fresh_gradients_are_summed_in_place_with_torchs_values(monkeypatch):
    x0 = np.random.default_rng(0).standard_normal((N, N))
    inplace = []
    real = sys.getrefcount

    def spy(obj):
        refs = real(obj) - 1  # (this function's own parameter)
        inplace.append(refs <= engine._SOLE_REFS)
        return refs

    monkeypatch.setattr(engine, "_getrefcount", spy)
    x = R.tensor(x0, requires_grad=True)
    _chain(R, x).backward()
    xt = torch.tensor(x0, requires_grad=True)
    _chain(torch, xt).backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)
    assert inplace and all(inplace)  # (the path is exercised: the loop's references)


def test_a_gradient_someone_else_holds_is_never_written():
    held = R.ones(N, N, dtype=R.float64) * 3
    before = held.numpy().copy()

    class Give(R.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return held  # the caller's tensor: its array has another holder

    x = R.zeros(N, N, dtype=R.float64, requires_grad=True)
    y = x * 2
    (Give.apply(y) + y).sum().backward()
    np.testing.assert_array_equal(held.numpy(), before)
    np.testing.assert_array_equal(x.grad.numpy(), np.full((N, N), 8.0))


def test_one_gradient_sent_down_two_edges_is_not_summed_into_itself():
    x = R.tensor(np.ones((N, N)), requires_grad=True)
    y = x * 2
    (y + y + y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((N, N), 6.0))
