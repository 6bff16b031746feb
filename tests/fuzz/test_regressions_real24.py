"""Fuzzer findings handled by real24 (issue 7, stop 24).

20010520: logdet's derivative under create_graph is PyTorch's slogdet_backward with grad mode
on, linalg.solve(A^T, diag_embed(g)); retrograd's inv(A)^T * g, the same function, rounded a
float32 second derivative 4e-4 relatively away from PyTorch's (and 10x farther from the
float64 truth than PyTorch's)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # (seed 20010520) float32 logdet at condition number 513, second derivative
    "logdet_float32_double_backward": """
v0 = T.tensor([[[0.0]], [[2.0]]], dtype=T.float32, requires_grad=True)
v1 = v0.addcmul(v0, v0, value=-1.5)
v4 = v1.cumsum(dim=0)
v5 = T.logdet(((v4 @ v4.mT) @ (v4 @ v4.mT).mT + T.eye(2, dtype=v4.dtype)))
loss = (v4 * v4.detach().tanh()).sum() + (v5 * v5.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v0], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
loss2.backward()
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)




@pytest.mark.parametrize("fn", ["logdet", "slogdet"])
def test_logdet_create_graph_is_a_solve_like_pytorch(fn):
    """The recorded derivative is linalg.solve's (grad_fn LinalgSolveExBackward0), its float32
    second derivative agrees with PyTorch's to 1e-6 at condition number 513."""
    a = np.array([[[257.0, 256.0], [256.0, 257.0]], [[1.0, 2.0], [3.0, 4.5]]])
    w = np.array([2.0, -3.0])
    out = []
    for lib in (retrograd, torch):
        A = lib.tensor(a, dtype=lib.float32, requires_grad=True)
        W = lib.tensor(w, dtype=lib.float32, requires_grad=True)
        y = lib.logdet(A) if fn == "logdet" else lib.linalg.slogdet(A)[1]
        (g,) = lib.autograd.grad((y * W).sum(), [A], create_graph=True)
        assert type(g.grad_fn).__name__ == "LinalgSolveExBackward0"
        (g * g.detach().tanh()).sum().backward()
        out.append([t.detach().numpy() for t in (g, A.grad, W.grad)])
    for r, t in zip(*out):
        np.testing.assert_allclose(r, t, rtol=1e-6, atol=1e-6)


def test_logdet_create_graph_singular_raises_like_pytorch():
    """A singular matrix: linalg.solve's LinAlgError (PyTorch's), not the LU solve's infs
    that the first-order derivative gives."""
    a = [[1.0, 2.0], [2.0, 4.0]]
    for lib in (retrograd, torch):
        A = lib.tensor(a, requires_grad=True)
        with pytest.raises(RuntimeError, match="input matrix is singular"):
            lib.autograd.grad(lib.logdet(A), [A], create_graph=True)
        A = lib.tensor(a, requires_grad=True)
        (g,) = lib.autograd.grad(lib.logdet(A), [A])  # first order: no error
        assert not np.isfinite(g.numpy()).any()


def test_logdet_create_graph_inf_gradient_keeps_zeros_off_the_diagonal():
    """diag_embed(g), not g * I: an inf incoming gradient leaves the off-diagonal of the
    right-hand side 0 and LAPACK's solve gives PyTorch's mix of nan and inf (inv(A)^T * inf:
    inf, nan, nan, inf)."""
    a = np.array([[2.0, 0.0], [0.0, 4.0]])
    res = []
    for lib in (retrograd, torch):
        A = lib.tensor(a, requires_grad=True)
        y = lib.logdet(A)
        (g,) = lib.autograd.grad(y, [A], lib.tensor(float("inf"), dtype=lib.float64),
                                 create_graph=True)
        res.append(g.detach().numpy())
    assert np.isnan(res[1]).any() and np.isinf(res[1]).any()
    np.testing.assert_array_equal(res[0], res[1])
