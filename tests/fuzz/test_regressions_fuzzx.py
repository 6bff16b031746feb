"""Fuzzer findings fixed by fuzzX (issue 7: autograd.grad/backward2/setitem raises, grad_fn
names; stop 20's run): each program must run alike in retrograd and PyTorch (values, dtypes,
shapes, grad_fn names, gradients, exceptions)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from .program import program_from_text  # noqa: E402
from .runner import compare, reproducer  # noqa: E402

CASES = {
    # x[whole] = number into an integer tensor that requires grad (a write of a tensor that
    # does made it so): PyTorch's setitem writes x itself (a slice of all of a dim is no view)
    # with fill_ by the number as a 0-d tensor, which records FillBackward3; retrograd took a
    # number for a copy_ (which records nothing into an integer tensor: seed 15120006)
    "setitem_number_into_integer_requiring_grad": """
v0 = T.tensor([[4]], dtype=T.int64)
v1 = T.tensor(-1.0, dtype=T.float64, requires_grad=True)
v0[0] = v1.sum()
v0[0:1] = 2.0
v2 = T.tensor([[4], [5]], dtype=T.int64)
v2[0] = v1.sum()
v2[...] = 3
""",
    # the same fill_ into a bool view taken before its base came to require grad: PyTorch
    # counts such a view as a leaf (its grad_fn not re-derived yet) and refuses the write
    # (seed 15127374)
    "setitem_number_into_adopted_bool_view": """
v1 = T.tensor([True], dtype=T.bool)
v3 = v1[None, 0:2]
v4 = T.tensor(-2.0, dtype=T.float64, requires_grad=True)
v3[0] = v4.sum()
try:
    v3[0:1] = 1.5
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # matrix_power(A, 0): PyTorch copies the identity into a clone of A, so A's gradient is
    # copy_'s zeros_like(grad), which under create_graph requires no grad and a second
    # backward of it raises; retrograd's g * 0 required grad (seed 15013377)
    "matrix_power_zero_create_graph": """
v4 = T.tensor([[0.0, -1.0], [-2.0, 1.0]], dtype=T.float64, requires_grad=True)
v7 = T.linalg.matrix_power(v4, 0)
v9 = T.sinh(v7)
loss = (v9 * v9.detach().tanh()).sum()
gs = T.autograd.grad(loss, [v4], create_graph=True, allow_unused=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
try:
    loss2.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # 2-D @ 3-D where a requires grad and the transposed result is contiguous (a size-1
    # side, or empty): PyTorch's result is a transpose of its folded mm's result, a view, so
    # an in-place change of it gives AsStridedBackward0 and flatten(2, 2) is that view itself
    # (seeds 15089969, 12607848)
    "matmul_2d_by_3d_result_is_a_view": """
v1 = T.zeros((0, 2), dtype=T.float64, requires_grad=True)
v2 = T.tensor([[[0.0], [0.0]]], dtype=T.float64)
v3 = v1 @ v2
v4 = v3.flatten(2, 2)
v3 += v4
v10 = T.tensor([[-0.5]], dtype=T.float64, requires_grad=True)
v11 = v10[0:1]
v12 = T.tensor([[[2.0]]], dtype=T.float64)
v13 = v11 @ v12
v14 = v13.flatten(-1, 2)
v15 = T.tensor(-1.0, dtype=T.float64)
v13.remainder_(v15.abs().add(0.5))
loss = (v13 * v13.detach().tanh()).sum() + (v14 * v14.detach().tanh()).sum()
loss.backward()
""",
    # slogdet's sign has no gradient (real input): PyTorch's engine still runs the nodes
    # below with an undefined gradient, and each unpacks its saved tensors first, so an
    # in-place change of one (v1, saved by mm, changed by exp_) raises; retrograd skipped
    # the nodes that got no gradient (seeds 15099131, 15022920)
    "version_check_below_slogdet_sign": """
v1 = T.tensor([[-1.0]], dtype=T.float64, requires_grad=True)
v5 = T.linalg.slogdet(((v1 @ v1.mT) + 2 * T.eye(1, dtype=v1.dtype)))[0]
with T.set_grad_enabled(False):
    v1.exp_()
loss = (v5 * v5.detach().tanh()).sum()
try:
    gs = T.autograd.grad(loss, [v1], create_graph=True, allow_unused=True)
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
""",
    # the same view of the folded product, transposed in place under no_grad: PyTorch's
    # swapaxes_ changes the view's metadata only, so the gradient reaching the product has
    # its shape; retrograd's product was no view and its own node got the new shape (seed
    # 15114207, fixed by making the result that view)
    "matmul_2d_by_3d_view_swapped_under_no_grad": """
v6 = T.zeros((1, 0), dtype=T.float64, requires_grad=True)
v9 = T.zeros((1, 0, 3), dtype=T.float64, requires_grad=True)
v10 = v6 @ v9
with T.set_grad_enabled(False):
    v10.swapaxes_(-2, -1)
loss = (v9 * v9.detach().tanh()).sum() + (v10 * v10.detach().tanh()).sum()
loss.backward(inputs=[v6, v9])
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fuzz_regression_fuzzx(name):
    prog = program_from_text(CASES[name])
    failure = compare(prog)
    assert failure is None, reproducer(prog, failure)


_ZERO_DERIVATIVE = {
    "matrix_power_0": lambda lib, y: lib.linalg.matrix_power(y.reshape(2, 2), 0),
    "eq_": lambda lib, y: y.clone().eq_(2.0),
    "poisson": lambda lib, y: lib.poisson(y.abs()),
    "normal": lambda lib, y: lib.normal(y, 1.0),
    "bernoulli": lambda lib, y: lib.bernoulli(y.abs() / 8),
}


@pytest.mark.parametrize("name", sorted(_ZERO_DERIVATIVE))
def test_zero_derivative_records_nothing_like_pytorch(name):
    """Ops whose derivative is zeros_like(grad) in PyTorch give exact zeros that require no
    grad under create_graph (and 0, not nan, for an inf gradient); g * 0 did neither."""
    import retrograd

    got = []
    for T in (torch, retrograd):
        x = T.tensor([1.0, 2.0, -3.0, 0.5], dtype=T.float64, requires_grad=True)
        out = _ZERO_DERIVATIVE[name](T, x * 1)
        weight = T.full(tuple(out.shape), float("inf"), dtype=T.float64)
        (g,) = T.autograd.grad((out * weight).sum() if out.dtype == T.float64 else out.sum(),
                               [x], create_graph=True)
        got.append((type(out.grad_fn).__name__, g.requires_grad, g.detach().tolist()))
    assert got[1] == got[0]


_FOLDED_WRITES = ["v3.mul_(2.0)", "v3 += v4", "v3[0] = 1.5", "v3.zero_()", "v3.transpose_(0, 1)"]


@pytest.mark.parametrize("sa,sb", [((2, 3), (2, 3, 1)), ((0, 2), (1, 2, 1)),
                                   ((1, 1), (2, 2, 1, 1)), ((2, 3), (2, 3, 4))])
@pytest.mark.parametrize("b_grad", [False, True])
def test_inplace_on_folded_matmul_result_like_pytorch(sa, sb, b_grad):
    """An in-place change of a 2-D @ N-D product (a transposed view of PyTorch's folded mm
    where the transpose is contiguous, a copy elsewhere): grad_fn names of the result and its
    views, values, gradients and a second backward, as PyTorch."""
    na, nb = np.prod(sa, dtype=int), np.prod(sb, dtype=int)
    for write in _FOLDED_WRITES:
        text = f"""
v1 = T.arange({na}, dtype=T.float64).sub(1.5).div(2).reshape{sa}.requires_grad_()
v2 = T.arange({nb}, dtype=T.float64).sub(2.5).div(3).reshape{sb}.requires_grad_({b_grad})
v3 = v1 @ v2
v4 = v3.flatten(-1, -1)
v5 = v3.reshape(-1)
{write}
v6 = v3.sin()
loss = (v6 * v6.detach().tanh()).sum() + (v5 * v5.detach().tanh()).sum()
gs = T.autograd.grad(loss, [x for x in (v1, v2) if x.requires_grad], create_graph=True)
loss2 = sum((g * g.detach().tanh()).sum() for g in gs if g is not None)
try:
    loss2.backward()
except Exception as e:  # PyTorch: RuntimeError
    print(type(e).__name__, e)
"""
        prog = program_from_text(text)
        failure = compare(prog)
        assert failure is None, reproducer(prog, failure)


def _no_gradient_path(lib, retain):
    """A backward whose only gradient stops at slogdet's sign: what the nodes below (mul's,
    which saved x) do with their saved values, seen by a second backward through them."""
    x = lib.tensor([[2.0, 1.0], [0.5, 3.0]], dtype=lib.float64, requires_grad=True)
    y = x * x
    lib.linalg.slogdet(y)[0].backward(retain_graph=retain)
    try:
        y.sum().backward()
    except RuntimeError as e:
        return "backward through the graph a second time" in str(e), None
    return False, x.grad.tolist()


@pytest.mark.parametrize("retain", [False, True])
def test_node_without_gradient_frees_saved_like_pytorch(retain):
    """PyTorch runs a node that gets no gradient: it frees its saved values after (without
    retain_graph), so a second backward through it raises there too."""
    import retrograd

    assert _no_gradient_path(retrograd, retain) == _no_gradient_path(torch, retain)


def _freed_then_no_gradient(lib):
    """A node freed by a first backward, then reached by one that brings it no gradient
    (slogdet's sign): PyTorch runs it, and unpacking what it freed raises."""
    x = lib.tensor([[2.0, 1.0], [0.5, 3.0]], dtype=lib.float64, requires_grad=True)
    z = x.exp()
    (z * 2).sum().backward()
    try:
        lib.linalg.slogdet(z)[0].backward()
    except RuntimeError as e:
        return "backward through the graph a second time" in str(e)
    return False


def test_freed_node_without_gradient_raises_like_pytorch():
    import retrograd

    assert _freed_then_no_gradient(retrograd) == _freed_then_no_gradient(torch)
