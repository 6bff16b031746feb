"""perf25's first-order fast paths: each must give what the path it replaced gave.

grad_where (relu's backward) tests finiteness by one BLAS dot (ops/selection.py
_all_finite)."""

import numpy as np
import pytest
import torch

import retrograd as R
from retrograd.ops.selection import _all_finite, grad_where


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_all_finite_is_isfinite_all(dtype):
    rng = np.random.default_rng(0)
    big = float(np.finfo(dtype).max) / 4
    for fill in (None, np.inf, -np.inf, np.nan, big):
        g = rng.standard_normal((7, 9)).astype(dtype)
        if fill is not None:
            g[3, 4] = fill
            g[6, 8] = fill  # (big twice: the sum of squares overflows on finite values)
        for a in (g, g.T, g[:, ::2], g[:0]):
            assert bool(_all_finite(a)) == bool(np.isfinite(a).all())


def test_grad_where_overflowing_finite_keeps_multiply_semantics():
    # every value finite, the sum of squares inf: still the multiply path, which turns a
    # kept -0.0 into +0.0 (as before the dot test)
    rng = np.random.default_rng(1)
    g = (rng.standard_normal((64, 32)) * 1e30).astype(np.float32)
    g[0, :4] = -0.0
    keep = rng.random((64, 32)) > 0.5
    keep[0, :4] = True
    out = grad_where(keep, g)
    want = g * keep
    want += 0.0
    assert out.tobytes() == want.tobytes()


@pytest.mark.parametrize("fill", [np.inf, -np.inf, np.nan])
def test_relu_backward_nonfinite_grad_against_torch(fill):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((16, 8)).astype(np.float32)
    g = rng.standard_normal((16, 8)).astype(np.float32)
    g[x <= 0] = fill  # only where relu's gradient is 0: those must be exactly 0
    g[0, 0] = fill
    a, t = R.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    R.relu(a).backward(R.tensor(g))
    torch.relu(t).backward(torch.tensor(g))
    np.testing.assert_array_equal(a.grad.numpy(), t.grad.numpy())
