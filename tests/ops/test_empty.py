"""Empty tensors: the same shapes, dtypes, values and gradient shapes as PyTorch, or the
same exception class.
"""

from __future__ import annotations

import warnings

import pytest

import retrograd

from .helpers import check_same, nnf, outputs, TOL


EMPTY_CASES = {
    "sum": lambda m, a: a.sum(), "sum_dim0": lambda m, a: a.sum(0), "mean": lambda m, a: a.mean(),
    "mean_dim1": lambda m, a: a.mean(1), "exp": lambda m, a: a.exp(), "mul": lambda m, a: a * a,
    "matmul": lambda m, a: a @ m.ones(3, 2, dtype=m.float64),
    "matmul_inner0": lambda m, a: a.t() @ a,
    "cat": lambda m, a: m.cat([a, m.ones(1, 3, dtype=m.float64)]),
    "softmax": lambda m, a: a.softmax(1), "log_softmax_empty_dim": lambda m, a: a.log_softmax(0),
    "reshape": lambda m, a: a.reshape(-1, 3), "index": lambda m, a: a[:, 1],
    "mask": lambda m, a: a[a > 0], "max_dim1": lambda m, a: a.max(1)[0],
    "stack": lambda m, a: m.stack([a, a]), "where": lambda m, a: m.where(a > 0, a, 0.0),
    "expand": lambda m, a: a.unsqueeze(0).expand(2, 0, 3), "clamp": lambda m, a: a.clamp(0, 1),
    "gather": lambda m, a: a.gather(0, m.zeros(0, 3, dtype=m.int64)),
    "mse_loss": lambda m, a: nnf(m).mse_loss(a, a * 2),
    "cross_entropy": lambda m, a: nnf(m).cross_entropy(a, m.zeros(0, dtype=m.int64)),
    # errors: the max of nothing, a max over an empty dimension
    "max_all": lambda m, a: a.max(), "max_dim0": lambda m, a: a.max(0),
}


@pytest.mark.parametrize("name", sorted(EMPTY_CASES))
def test_empty_tensor_vs_torch(name, torch):
    """A (0, 3) input: the same shapes, dtypes, values (nan for a mean of nothing), gradient
    shapes, or the same exception class."""
    results = []
    for m in (retrograd, torch):
        a = m.ones(0, 3, dtype=m.float64, requires_grad=True)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's mean of empty slice
                out = outputs(EMPTY_CASES[name](m, a))[0]
                out.backward(m.ones_like(out))
        except (RuntimeError, IndexError, ValueError) as e:
            results.append(type(e))
            continue
        results.append((out, a.grad))
    rg, th = results
    if not isinstance(th, tuple):
        assert rg is th
        return
    assert isinstance(rg, tuple), rg
    check_same(rg[0], th[0], TOL["float64"], "value")
    check_same(rg[1], th[1], TOL["float64"], "grad")
