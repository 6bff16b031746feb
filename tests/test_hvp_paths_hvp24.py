"""The paths a Hessian-vector product (bench/run.py's (g)) takes after stop 24's cuts, against
PyTorch 2.13: ``sum``'s forward on NumPy arrays calls the ufunc's reduction itself,
log_softmax's recorded derivative (LogSoftmaxBackwardDataBackward0) differentiates on arrays
with the same reductions, and ``autograd.grad`` runs no import statement per call."""

import dis
import sys

import numpy as np
import pytest

import retrograd as R
from retrograd.ops.nn import _log_softmax_backward
from retrograd.ops.reduce import _sum_fwd

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int64])
@pytest.mark.parametrize("axes,keepdim", [(None, False), ((0,), False), ((1,), True),
                                          ((0, 2), False), ((0, 1, 2), True)])
def test_sum_forward_is_ndarray_sum(dtype, axes, keepdim):
    # the same reduction as ndarray.sum (its Python wrapper's call), bit for bit, and the
    # same result type (a NumPy scalar for a full reduction, made a 0-d array by the caller)
    a = (np.random.default_rng(0).standard_normal((3, 4, 5)) * 50).astype(dtype)
    got = _sum_fwd(a, axes, keepdim, a.shape)
    want = a.sum(axis=axes, keepdims=keepdim)
    assert type(got) is type(want)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()


def test_sum_values_and_graph_match_torch():
    x = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    for dim, keep in [(None, False), (0, False), (1, True)]:
        r = R.tensor(x, requires_grad=True)
        t = torch.tensor(x, requires_grad=True)
        rs = r.sum() if dim is None else r.sum(dim, keepdim=keep)
        ts = t.sum() if dim is None else t.sum(dim, keepdim=keep)
        np.testing.assert_allclose(rs.detach().numpy(), ts.detach().numpy(), rtol=1e-6)
        assert rs.grad_fn.name() == ts.grad_fn.name()
        assert type(rs.grad_fn.next_functions[0][0]).__name__ == "AccumulateGrad"


def _hvp(lib, fn, x, y, ps, vs):
    loss = fn.cross_entropy(lib.tanh(x @ ps[0] + ps[1]) @ ps[2] + ps[3], y)
    gs = lib.autograd.grad(loss, ps, create_graph=True)
    dot = sum((g * v).sum() for g, v in zip(gs, vs))
    return lib.autograd.grad(dot, ps)


def test_hvp_matches_torch():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((16, 8)).astype(np.float32)
    y = rng.integers(0, 5, 16)
    shapes = [(8, 8), (8,), (8, 5), (5,)]
    ws = [(rng.standard_normal(s) / 3).astype(np.float32) for s in shapes]
    vs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    import retrograd.nn.functional as RF
    import torch.nn.functional as TF

    got = _hvp(R, RF, R.tensor(x), R.tensor(y), [R.tensor(w, requires_grad=True) for w in ws],
               [R.tensor(v) for v in vs])
    want = _hvp(torch, TF, torch.tensor(x), torch.tensor(y),
                [torch.tensor(w, requires_grad=True) for w in ws], [torch.tensor(v) for v in vs])
    for g, t in zip(got, want):
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("y_grad", [True, False])
def test_log_softmax_backward_derivative_on_arrays(y_grad):
    # the first-order derivative of LogSoftmaxBackwardDataBackward0 (arrays), with y needing
    # a gradient (g saved) and without (g not saved: None in saved), against PyTorch's
    rng = np.random.default_rng(3)
    g0 = rng.standard_normal((6, 4)).astype(np.float32)
    x0 = rng.standard_normal((6, 4)).astype(np.float32)
    v0 = rng.standard_normal((6, 4)).astype(np.float32)
    rg, rx = R.tensor(g0, requires_grad=True), R.tensor(x0, requires_grad=y_grad)
    tg, tx = torch.tensor(g0, requires_grad=True), torch.tensor(x0, requires_grad=y_grad)
    ry = R.log_softmax(rx, 1)
    ty = torch.log_softmax(tx, 1)
    rout = _log_softmax_backward(rg, ry, 1)
    tout = torch._log_softmax_backward_data(tg, ty, 1, torch.float32)
    assert rout.grad_fn.name() == tout.grad_fn.name()
    rin = [rg, rx] if y_grad else [rg]
    tin = [tg, tx] if y_grad else [tg]
    got = R.autograd.grad((rout * R.tensor(v0)).sum(), rin)
    want = torch.autograd.grad((tout * torch.tensor(v0)).sum(), tin)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


def test_grad_runs_no_import_statement():
    # an import statement inside autograd.grad ran importlib's from-list machinery on every
    # call (a percent of a Hessian-vector product's second gradient)
    x = R.tensor([1.0, 2.0], requires_grad=True)
    op = dis.opmap["IMPORT_NAME"]
    seen = []

    def tracer(frame, event, arg):
        frame.f_trace_opcodes = True

        def local(frame, event, arg):
            if event == "opcode" and frame.f_code.co_code[frame.f_lasti] == op:
                seen.append((frame.f_code.co_filename, frame.f_lineno))
            return local
        return local

    R.autograd.grad((x * x).sum(), x)  # (warm: anything imported lazily once)
    y = (x * x).sum()
    sys.settrace(tracer)
    try:
        (g,) = R.autograd.grad(y, x)
    finally:
        sys.settrace(None)
    assert seen == []
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0])


def test_zero_stride_gradient_views_stay_read_only():
    # sum's and expand's derivatives on arrays build their broadcast views directly and make
    # them read-only with setflags (no engine or hook may write through a zero stride)
    from retrograd.ops.reduce import _spread
    from retrograd.ops.shape import _expand_fwd

    g0 = np.asarray(np.float32(2.5))
    full = _spread(g0, (3, 4), None)
    row = _spread(np.arange(4, dtype=np.float32), (3, 4), (0,))
    ex = _expand_fwd(np.arange(4, dtype=np.float32).reshape(1, 4), (3, 4))
    for view, want in [(full, np.full((3, 4), 2.5, np.float32)),
                       (row, np.tile(np.arange(4, dtype=np.float32), (3, 1))),
                       (ex, np.tile(np.arange(4, dtype=np.float32), (3, 1)))]:
        assert not view.flags.writeable
        assert view.strides[0] == 0
        np.testing.assert_array_equal(view, want)
        with pytest.raises(ValueError):
            view[0, 0] = 1.0
