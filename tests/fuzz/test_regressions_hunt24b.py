"""Fuzzer findings handled by hunt24b (issue 7, stop 24: seeds 20400000..20457447).

20427011: soft_margin_loss computed log(1 + exp(-y x)) stably, 1960 where PyTorch's kernel,
log1p(exp(-x y)), overflows to inf; its derivative, -y z / (1 + z) with z = exp(-y x), is nan
there in PyTorch (sigmoid's 1 in retrograd)."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # (seed 20427011) expm1 of expm1 of 2.15 is about 1960: exp(1960) overflows
    "soft_margin_loss_overflow": """
v0 = T.tensor([[-2.02, 0.31], [0.5, 2.15], [1.01, 0.4]], dtype=T.float64)
v1 = T.tensor(3, dtype=T.int64)
v0.expm1_()
v5 = (v1).maximum(v0)
v6 = v5.expm1()
v7 = T.tensor([[0.0], [-1.0], [0.0]], dtype=T.float64)
v8 = T.nn.functional.soft_margin_loss(v6, (v7).sign())
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_soft_margin_loss_overflow_like_pytorch(dtype, reduction):
    """exp(-y x) past its overflow: the loss inf, the gradient nan (first order and under
    create_graph), finite elements unchanged."""
    x = [99.0, 1960.0, 2.0, -3.0, 0.5]
    y = [-1.0, -1.0, 1.0, 0.0, 1.0]
    out = []
    for lib in (retrograd, torch):
        dt = getattr(lib, dtype)
        got = []
        for create_graph in (False, True):
            X = lib.tensor(x, dtype=dt, requires_grad=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                loss = lib.nn.functional.soft_margin_loss(X, lib.tensor(y, dtype=dt),
                                                          reduction=reduction)
                (g,) = lib.autograd.grad(loss.sum(), [X], create_graph=create_graph)
            got += [loss.detach().numpy(), g.detach().numpy()]
        out.append(got)
    for r, t in zip(*out):
        np.testing.assert_allclose(r, t, rtol=1e-6, atol=0)


# (seed 20402816) det of a matrix with a nan entry and a zero first column: NumPy's det
# stops at the zero pivot and returns 0, PyTorch's LU product is nan; its gradient is
# PyTorch's LU solve (inf and nan), not inv's LinAlgError
CASES["det_nan_entry_zero_pivot"] = """
v2 = T.tensor([[0.0, -0.03], [0.0, 1.97]], dtype=T.float64, requires_grad=True)
v4 = v2.float()
v4.sqrt_()
v6 = T.linalg.det(v4)
loss = (v4 * v4.detach().tanh()).sum() + (v6 * v6.detach().tanh()).sum()
loss.backward()
"""

_NAN, _INF = float("nan"), float("inf")
_NONFINITE = [
    [[0.0, _NAN], [0.0, 1.4]],
    [[_NAN, 1.0], [2.0, 3.0]],
    [[1.0, _INF], [2.0, 3.0]],
    [[0.0, _INF], [0.0, 1.0]],
    [[_INF, _INF], [1.0, 1.0]],
    [[0.0, 1.0, 2.0], [0.0, _NAN, 1.0], [1.0, 1.0, 1.0]],
    [[2.0, 1.0, 0.0], [4.0, _NAN, 1.0], [1.0, 1.0, _INF]],
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("i", range(len(_NONFINITE)))
def test_det_of_a_nonfinite_matrix_like_pytorch(dtype, i):
    """det of a matrix with an inf or nan entry, alone and batched with a regular one, and
    its first derivative: PyTorch's values (nan where the LU elimination meets one)."""
    a = np.array(_NONFINITE[i])
    batch = np.stack([a, np.eye(len(a)) * 2.0])
    out = []
    for lib in (retrograd, torch):
        got = []
        for m in (a, batch):
            A = lib.tensor(m, dtype=getattr(lib, dtype), requires_grad=True)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                d = lib.linalg.det(A)
                d.sum().backward()
            got += [d.detach().numpy(), A.grad.numpy()]
        out.append(got)
    for r, t in zip(*out):
        np.testing.assert_allclose(r, t, rtol=1e-6, atol=0, equal_nan=True)
