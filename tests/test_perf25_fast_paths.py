"""perf25's first-order fast paths: each must give what the path it replaced gave.

grad_where (relu's backward) tests finiteness by one BLAS dot (ops/selection.py
_all_finite); nn.Linear's first layer, whose input needs no gradient, computes its
weight's gradient as (g.T @ x).T as the other layers do (ops/linear.py _addmm_vjp)."""

import numpy as np
import pytest
import torch

import retrograd as R
import retrograd.nn.functional as RF
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


@pytest.mark.parametrize("dtype", [R.float32, R.float64])
def test_first_linear_weight_grad_as_with_input_grad(dtype):
    """The first layer's weight gradient is C-ordered (no copy made) and bit for bit what
    it is when the input needs a gradient too, and close to PyTorch's."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 30))
    y = rng.integers(0, 5, 64)
    R.manual_seed(0)
    model = R.nn.Sequential(R.nn.Linear(30, 16), R.nn.ReLU(), R.nn.Linear(16, 5)).to(dtype)
    grads = []
    for need in (False, True):
        model.zero_grad()
        RF.cross_entropy(model(R.tensor(x, dtype=dtype, requires_grad=need)),
                         R.tensor(y)).backward()
        w = model[0].weight.grad
        assert w.is_contiguous() and w.stride() == (30, 1)
        grads.append(w.numpy().tobytes())
    assert grads[0] == grads[1]
    tdtype = torch.float32 if dtype == R.float32 else torch.float64
    tmodel = torch.nn.Sequential(torch.nn.Linear(30, 16), torch.nn.ReLU(),
                                 torch.nn.Linear(16, 5)).to(tdtype)
    with torch.no_grad():
        for tp, p in zip(tmodel.parameters(), model.parameters()):
            tp.copy_(torch.tensor(p.detach().numpy()))
    torch.nn.functional.cross_entropy(tmodel(torch.tensor(x, dtype=tdtype)),
                                      torch.tensor(y)).backward()
    tol = 1e-5 if dtype == R.float32 else 1e-12
    np.testing.assert_allclose(model[0].weight.grad.numpy(), tmodel[0].weight.grad.numpy(),
                               rtol=tol, atol=tol)
    assert tmodel[0].weight.grad.stride() == (30, 1)


def test_zero_grad_walk_reads_module_tables_as_attributes_did():
    """Module._parameters_in_order reads a module's tables from its __dict__: the same
    parameters, and a child whose __init__ never ran still raises PyTorch's AttributeError."""
    model = R.nn.Sequential(R.nn.Linear(3, 4), R.nn.ReLU(), R.nn.Sequential(R.nn.Linear(4, 2)))
    assert model._parameters_in_order() == list(model.parameters())

    class Bare(R.nn.Module):
        def __init__(self):  # (no super().__init__())
            pass

    model.add_module("bare", Bare())
    with pytest.raises(AttributeError, match="'Bare' object has no attribute '_parameters'"):
        model.zero_grad()
