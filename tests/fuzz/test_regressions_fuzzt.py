"""Fuzzer findings fixed by fuzzT (issue 7, new signatures of stop 20's runs): each program
must run alike in retrograd and PyTorch (values, dtypes, shapes, grad_fn names, gradients,
exceptions)."""

import itertools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import retrograd  # noqa: E402

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # PyTorch's matmul folds (2, 2, 3).mT into a (6, 2) matrix, a reshape that copies: its
    # MvBackward0 saves that copy, so an in-place change of the operand after the product
    # does not make the backward raise; retrograd saved the operand (seed 14805082)
    "matmul_saved_copy_version": """
v2 = T.tensor([-1.0, 0.0], dtype=T.float64, requires_grad=True)
v5 = T.tensor([[[2.0, 1.0, 2.0], [-3.0, -0.0, 0.0]], [[-3.0, -2.0, 1.0], [-3.0, 2.0, 0.0]]],
              dtype=T.float64)
v6 = T.matmul(v2, v5)
v7 = v5.detach()
v8 = v7.detach()
v8.swapaxes_(0, 0)
loss = (v5 * v5.detach().tanh()).sum() + (v6 * v6.detach().tanh()).sum()
loss.backward()
""",
    # PyTorch's _to_copy of an integer/bool tensor that requires grad (after a write of a
    # tensor requiring grad) to an integer or bool dtype records nothing and refuses nothing;
    # retrograd refused it as the other ops do (seed 14813907)
    "to_integer_of_integer_requiring_grad": """
v1 = T.tensor([[2.0], [-3.0], [-2.0]], dtype=T.float64, requires_grad=True)
v4 = T.zeros((3, 1), dtype=T.bool)
v6 = v4.contiguous()
v6[1] = v1.sum()
v7 = v6.type_as(T.tensor([-2, 3], dtype=T.int64))
v8 = v6.to(T.int32)
v9 = v7.to(T.bool)
v10 = v7.to(T.int64, copy=True)
v11 = v7.long()
v12 = v6.double()
""",
    # nll_loss skips an ignored target (0) where its input is nan, in every reduction and
    # rank, as PyTorch's kernels; retrograd gave nan * 0 weight = nan (seed 13801247)
    "nll_loss_ignored_nan_input": """
v3 = T.tensor([[-0.0, -1.0, 1.0], [0.0, 2.0, 1.0], [-1.0, -1.0, 0.0]], dtype=T.float64)
v5 = T.true_divide(v3, v3.detach())
v8 = T.tensor([1, 0, 2], dtype=T.int64)
v9 = T.tensor([1.0, -0.0, -2.0], dtype=T.float64)
v10 = T.nn.functional.nll_loss(v5, v8, weight=v9.abs(), ignore_index=0, reduction='none')
v11 = T.nn.functional.nll_loss(v5[1:], v8[1:], ignore_index=0, reduction='sum')
v12 = T.nn.functional.nll_loss(v5.T[None], v8[None], ignore_index=0, reduction='mean')
v13 = T.nn.functional.nll_loss(v5.T[None, :, :, None], v8[None, :, None], ignore_index=0,
                               reduction='none')
""",
    # cholesky of a matrix with infs: LAPACK's potrf meets inf / inf = NaN below the first
    # pivot and stops (PyTorch raises); NumPy's factor dropped it (seed 13812838)
    "cholesky_inf_input": """
v1 = T.zeros((1, 1, 0), dtype=T.float64)
v3 = v1.logsumexp(dim=-1)
try:
    v4 = T.linalg.cholesky(((v3 @ v3.mT) @ (v3 @ v3.mT).mT + T.eye(2, dtype=v3.dtype)), upper=True)
except Exception as e:
    pass
v5 = T.linalg.cholesky_ex(T.full((2, 2), float("inf"), dtype=T.float64) + T.eye(2, dtype=T.float64))
v6 = T.linalg.cholesky(T.tensor([[float("inf"), 0.0], [0.0, 1.0]], dtype=T.float64))
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzt(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)


_SHAPES = [((3,), (2, 3, 4)), ((2, 3, 4), (4,)), ((2, 3), (2, 3, 4)), ((2, 3, 4), (4, 5)),
           ((2, 3, 4), (2, 4, 5)), ((1, 3, 4), (2, 4, 5)), ((2, 3, 4), (1, 4, 5)),
           ((2, 1, 3, 4), (5, 4, 2)), ((3,), (2, 2, 3, 1))]


def _run(lib, sa, sb, a_grad, b_grad, transposed, change):
    """matmul of two non-leaf operands (one maybe a transposed view), then ``change`` is
    changed in place through a detached alias; returns the error class or the gradients."""
    rng = np.random.default_rng(0)
    xs = []
    for shape, grad in ((sa, a_grad), (sb, b_grad)):
        data = rng.standard_normal(shape[::-1] if transposed else shape)
        leaf = lib.tensor(data, dtype=lib.float64, requires_grad=True)
        x = leaf * 1 if grad else leaf.detach() * 1
        xs.append((leaf, x.permute(*range(x.ndim - 1, -1, -1)) if transposed else x))
    out = lib.matmul(xs[0][1], xs[1][1])
    xs[change][1].detach().mul_(2)
    try:
        out.pow(2).sum().backward()
    except RuntimeError:
        return "RuntimeError"
    return [leaf.grad.numpy() if leaf.grad is not None else None for leaf, _ in xs]


@pytest.mark.parametrize("sa,sb", _SHAPES)
def test_matmul_saved_copies_like_pytorch(sa, sb):
    """Whether a backward after an in-place change of a batched matmul's operand raises,
    and the gradients it gives, follow PyTorch (whose reshaped operands are sometimes
    copies), for every combination of flags and layouts."""
    for a_grad, b_grad, transposed, change in itertools.product(
            (True, False), (True, False), (False, True), (0, 1)):
        if not (a_grad or b_grad):
            continue
        want = _run(torch, sa, sb, a_grad, b_grad, transposed, change)
        got = _run(retrograd, sa, sb, a_grad, b_grad, transposed, change)
        where = (sa, sb, a_grad, b_grad, transposed, change)
        if isinstance(want, str):
            assert got == want, where
        else:
            assert not isinstance(got, str), where
            for w, g in zip(want, got):
                assert (w is None) == (g is None), where
                if w is not None:
                    np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12, err_msg=str(where))


def _prod_second_order(lib, data, dim, weights):
    """prod's gradient under create_graph, weighted (nan weights too: a nan reaching a slot
    whose value cannot move), then the second derivative."""
    x = lib.tensor(data, dtype=lib.float64, requires_grad=True)
    out = x.prod() if dim is None else x.prod(dim)
    (g,) = lib.autograd.grad(out.sum() if dim is not None else out, [x], create_graph=True)
    (g * lib.tensor(weights, dtype=lib.float64)).sum().backward()
    return g.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("dim", [None, 0, 1])
def test_prod_double_backward_with_zeros_like_pytorch(dim):
    """prod's create_graph derivative with zeros is PyTorch's prod_safe_zeros_backward
    (exclusive cumprods), whose own derivative drops terms holding a zero factor: a nan
    weight on one slot leaves the others finite, as in PyTorch (seed 13307880)."""
    rows = [[3.0, 0.0, 0.0, -1.0], [0.0, 2.0, -1.5, 0.5], [1.0, 2.0, 0.0, 3.0]]
    for zero_rows in (rows, rows[1:], [[2.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0]]):
        data = np.array(zero_rows)
        for k in range(data.size):
            weights = np.linspace(0.5, -1.0, data.size).reshape(data.shape)
            weights.flat[k] = np.nan
            want = _prod_second_order(torch, data, dim, weights)
            got = _prod_second_order(retrograd, data, dim, weights)
            for w, g in zip(want, got):
                np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12,
                                           err_msg=f"{zero_rows} {dim} {k}")
