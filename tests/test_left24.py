"""left24 (stop 24): leftovers of issue 7 checked against PyTorch 2.13: the ``*_copy`` view
ops' gradients (values, shapes, strides) for non-contiguous inputs, block_diag after an
in-place metadata change of an operand, matrix_exp's overflow/underflow, CopySlices'
next_functions."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")


def _transposed(m, shape):
    """A leaf of ``shape`` whose memory is column-major (strides reversed)."""
    n = int(np.prod(shape))
    base = m.arange(float(n), dtype=m.float64).reshape(tuple(reversed(shape)))
    return base.permute(*reversed(range(len(shape)))).detach().requires_grad_(True)


def _grad_record(m, fn, shape, layout):
    x = _transposed(m, shape) if layout == "t" else \
        m.arange(float(np.prod(shape)), dtype=m.float64).reshape(shape).requires_grad_(True)
    y = fn(m, x)
    g = m.arange(float(y.numel()), dtype=m.float64).reshape(y.shape) + 1
    (gx,) = m.autograd.grad(y, x, g)
    return (y.grad_fn.name().rsplit("::", 1)[-1], y.tolist(), tuple(y.shape), tuple(y.stride()),
            gx.tolist(), tuple(gx.shape), tuple(gx.stride()))


COPIES = {
    # as_strided reads the storage: a contiguous zero leaf put the gradient of a
    # column-major input at the wrong places (and PyTorch's gradient has its strides)
    "as_strided_copy": (lambda m, x: m.as_strided_copy(x, (2, 2), (1, 2), 1), (3, 4)),
    "as_strided": (lambda m, x: m.as_strided(x, (2, 2), (1, 2), 1), (3, 4)),
    "as_strided_3d": (lambda m, x: x.as_strided((2, 3), (4, 1), 2), (2, 3, 4)),
    "as_strided_overlap": (lambda m, x: m.as_strided_copy(x, (3, 3), (1, 1)), (3, 4)),
    # a size no view of the input's strides can take: PyTorch's view_copy copies anyway
    "view_copy": (lambda m, x: m.view_copy(x, (6, 4)), (2, 3, 4)),
    "view_copy_flat": (lambda m, x: m.view_copy(x, (-1,)), (3, 4)),
    "transpose_copy": (lambda m, x: m.transpose_copy(x, 0, 2), (2, 3, 4)),
    "diagonal_copy": (lambda m, x: m.diagonal_copy(x, 1, 0, 2), (3, 4, 5)),
    "unfold_copy": (lambda m, x: m.unfold_copy(x, 0, 2, 2), (6, 4)),
    "expand_copy": (lambda m, x: m.expand_copy(x, (2, 3, 4)), (3, 1)),
    "select_copy": (lambda m, x: m.select_copy(x, 1, 2), (3, 4)),
}


@pytest.mark.parametrize("layout", ["c", "t"])
@pytest.mark.parametrize("key", sorted(COPIES))
def test_copy_view_gradients_as_torch(key, layout):
    fn, shape = COPIES[key]
    assert _grad_record(retrograd, fn, shape, layout) == _grad_record(torch, fn, shape, layout)


def test_view_copy_wrong_size_still_raises():
    x = _transposed(retrograd, (2, 3))
    with pytest.raises(RuntimeError, match="invalid for input of size 6"):
        retrograd.view_copy(x, (4, 2))


def test_as_strided_gradient_of_every_order_column_major():
    x = _transposed(retrograd, (3, 4))
    for fn in (retrograd.as_strided, retrograd.as_strided_copy):
        assert retrograd.autograd.gradgradcheck(lambda t, f=fn: f(t, (2, 2), (1, 2), 1) ** 2,
                                                (x,))


def _block_diag_after(m, shape_a, op, mode):
    a = m.arange(1.0, 1.0 + float(np.prod(shape_a)), dtype=m.float64).reshape(shape_a)
    a.requires_grad_(True)
    b = m.tensor([[1.0, -2.0], [3.0, 0.5]], dtype=m.float64, requires_grad=True)
    c = a * 1
    try:
        if mode == "before":
            getattr(c, op[0])(*op[1:])
            y = m.block_diag(c, b)
        elif mode == "leaf_no_grad":  # the leaf itself, changed after the graph used it
            y = m.block_diag(a, b)
            with m.no_grad():
                getattr(a, op[0])(*op[1:])
        else:
            y = m.block_diag(c, b)
            with m.no_grad():
                getattr(c, op[0])(*op[1:])
        w = m.arange(float(y.numel()), dtype=m.float64).reshape(y.shape)
        ga, gb = m.autograd.grad((y * w).sum(), [a, b])
        return (tuple(y.shape), y.grad_fn.name(), tuple(ga.shape), ga.tolist(), gb.tolist())
    except RuntimeError as e:  # (retrograd adds a hint after PyTorch's message)
        return ("RuntimeError", str(e).split(" (")[0])


@pytest.mark.parametrize("mode", ["before", "after_no_grad", "leaf_no_grad"])
@pytest.mark.parametrize("shape, op", [
    ((1, 3), ("squeeze_",)), ((3, 1), ("squeeze_",)), ((1, 1), ("squeeze_",)),
    ((1,), ("squeeze_",)), ((1,), ("squeeze_", 0)), ((3,), ("unsqueeze_", 1)),
    ((1, 3, 1), ("squeeze_",)), ((2, 1, 3), ("squeeze_", 1)), ((), ("unsqueeze_", 0)),
    ((2, 3), ("t_",))])
def test_block_diag_after_in_place_metadata_change_as_torch(shape, op, mode):
    # (stop 24: already matched PyTorch: gradient shapes, values and errors)
    assert _block_diag_after(retrograd, shape, op, mode) == _block_diag_after(torch, shape, op,
                                                                              mode)


# ----------------------------------------------------------------- CopySlices' edges

def _describe(fn, depth=0):
    if fn is None:
        return None
    name = fn.name().rsplit("::", 1)[-1]
    if depth >= 2:
        return name
    return (name, [(_describe(n, depth + 1), nr) for n, nr in fn.next_functions])


INPLACE_ON_VIEW = {
    "select_mul_number": lambda m, x, w, y: y[0].mul_(3),
    "select_mul_tensor": lambda m, x, w, y: y[0].mul_(w),
    "slice_addcmul": lambda m, x, w, y: y[1:].addcmul_(w, w),
    "select_copy_": lambda m, x, w, y: y[0].copy_(w),
    "setitem": lambda m, x, w, y: y.__setitem__(0, w),
    "view_of_view": lambda m, x, w, y: y[0][1:].mul_(w[1:]),
    "t_select_zero_": lambda m, x, w, y: y.t()[0].zero_(),
    "diagonal_clamp_": lambda m, x, w, y: y.diagonal().clamp_(min=0),
    "masked_fill_number": lambda m, x, w, y: y[0].masked_fill_(w > 0, 1.0),
    "masked_fill_0d": lambda m, x, w, y: y[0].masked_fill_(w > 0, w[0]),
    "index_put_": lambda m, x, w, y: y[:, 0].index_put_((m.tensor([0, 1]),), w[:2]),
    "mixed_setitem": lambda m, x, w, y: y.__setitem__((0, m.tensor([0, 1])), w[:2]),
    "view_add_": lambda m, x, w, y: y.view(12).add_(1.0),
    "twice": lambda m, x, w, y: (y[0].sin_(), y[0].exp_()),
    "lerp_": lambda m, x, w, y: y[0].lerp_(w, 0.5),
    "addcmul_two_views": lambda m, x, w, y: y[0].addcmul_(w, x[1]),
    "exp_saves_result": lambda m, x, w, y: y[1:, 1:].exp_(),
}


def _inplace_on_view(m, key):
    x = m.linspace(-1.5, 2.0, 12, dtype=m.float64).reshape(3, 4).requires_grad_(True)
    w = m.linspace(0.5, -1.0, 4, dtype=m.float64).requires_grad_(True)
    y = x * 2
    INPLACE_ON_VIEW[key](m, x, w, y)
    return x, w, y


@pytest.mark.parametrize("key", sorted(INPLACE_ON_VIEW))
def test_copy_slices_next_functions_as_torch(key):
    # PyTorch's CopySlices: edges to the old base, then to the in-place op's other inputs
    # (retrograd had the base and the op's own node, reaching the view's old graph)
    records = []
    for m in (retrograd, torch):
        x, w, y = _inplace_on_view(m, key)
        seen = []
        y.grad_fn.register_hook(lambda gi, go, s=seen: s.append(len(gi)))
        wy = m.linspace(1.0, 2.0, 12, dtype=m.float64).reshape(3, 4)
        grads = m.autograd.grad((y * wy).sum(), [x, w], allow_unused=True, retain_graph=True)
        called = y.grad_fn(m.ones(3, 4, dtype=m.float64))
        called = called if isinstance(called, tuple) else (called,)
        records.append((_describe(y.grad_fn), seen, [None if g is None else g.tolist()
                                                     for g in grads], len(called)))
    assert records[0][:2] == records[1][:2]
    assert records[0][3] == records[1][3]
    for mine, theirs in zip(records[0][2], records[1][2]):
        assert (mine is None) == (theirs is None)
        if mine is not None:
            np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("key", ["select_mul_tensor", "exp_saves_result", "slice_addcmul"])
def test_copy_slices_second_order_and_release_as_torch(key):
    out = []
    for m in (retrograd, torch):
        x, w, y = _inplace_on_view(m, key)
        (gx, gw) = m.autograd.grad((y * y).sum(), [x, w], create_graph=True, allow_unused=True)
        total = gx.sum() + (gw.sum() if gw is not None else 0)
        hx, hw = m.autograd.grad(total, [x, w], allow_unused=True)
        rec = [hx.tolist(), None if hw is None else hw.tolist()]
        x, w, y = _inplace_on_view(m, key)
        y.sum().backward()
        try:  # the wrapped op's values were freed with CopySlices'
            y.sum().backward()
            rec.append("ran")
        except RuntimeError as e:
            rec.append("Trying to backward through the graph a second time" in str(e))
        out.append(rec)
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-12)
    assert (out[0][1] is None) == (out[1][1] is None)
    if out[0][1] is not None:
        np.testing.assert_allclose(out[0][1], out[1][1], rtol=1e-12)
    assert out[0][2] == out[1][2] is True


# ----------------------------------------------------------------- matrix_exp

@pytest.mark.parametrize("matrix", [
    [[-1e300, 0.0], [0.0, 1.0]], [[-1e300, 1.0], [0.0, 1.0]], [[-1e10, 0.0], [0.0, 1.0]],
    [[-800.0, 0.0], [0.0, 1.0]], [[0.0, 1e300], [0.0, 0.0]], [[1e300, 0.0], [0.0, 1.0]]])
def test_matrix_exp_of_huge_entries_as_torch(matrix):
    # (Pade-13 gave exp(tiny) 1 ulp under 1, which ~1000 squarings took to 0: the value
    # and the gradient of [[-1e300, 0], [0, 1]] were all zeros)
    out = []
    for m in (retrograd, torch):
        x = m.tensor(matrix, dtype=m.float64, requires_grad=True)
        y = m.linalg.matrix_exp(x)
        (g,) = m.autograd.grad(y, x, m.ones_like(y))
        out.append((y.detach().numpy(), g.numpy()))
    for mine, theirs in zip(out[0], out[1]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-13, atol=0)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_matrix_exp_each_taylor_degree_as_torch(dtype):
    # 1-norms from 1e-9 to 30: every degree (1, 2, 4, 8, 12, 18 scaled and squared), batched
    rng = np.random.default_rng(24)
    base = rng.standard_normal((7, 4, 4))
    base /= np.abs(base).sum(axis=-2).max(axis=-1)[:, None, None]
    a = base * np.array([1e-9, 2e-8, 1e-4, 1e-2, 0.2, 0.9, 30.0])[:, None, None]
    mine = retrograd.linalg.matrix_exp(retrograd.tensor(a, dtype=getattr(retrograd, dtype)))
    theirs = torch.linalg.matrix_exp(torch.tensor(a, dtype=getattr(torch, dtype))).numpy()
    assert str(mine.dtype) == f"retrograd.{dtype}"
    # (within rounding of each matrix's largest entry: float32 is computed in float64 here)
    tol = 1e-14 if dtype == "float64" else 1e-5
    scale = np.abs(theirs).max(axis=(-2, -1), keepdims=True)
    assert (np.abs(mine.numpy() - theirs) <= tol * scale).all()
