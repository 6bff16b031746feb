"""nn.Linear's inline record (ops/linear.py ``_linear_fast``) and optim.SGD's plain step
(optim/sgd.py): the same graph, gradients, versions and trajectories as the general paths
and as PyTorch."""

import numpy as np
import pytest
import torch

import retrograd as R
import retrograd.ops.linear as L


def _graph(fn, depth=0, out=None):
    """(depth, name, number of edges) of every node reachable from ``fn``, in order."""
    out = [] if out is None else out
    if fn is None:
        out.append((depth, None, 0))
        return out
    out.append((depth, type(fn).__name__, len(fn.next_functions)))
    for child, _nr in fn.next_functions:
        _graph(child, depth + 1, out)
    return out


def _run(lib, general, monkeypatch, x_grad, w_grad, b_grad, dtype):
    if general:  # a wrapped forward: linear() takes the general path (as under compile)
        orig = L._ADDMM_OP.forward
        monkeypatch.setattr(L._ADDMM_OP, "forward", lambda *a: orig(*a))
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.standard_normal((5, 3)).astype(dtype), requires_grad=x_grad)
    w = lib.tensor(rng.standard_normal((4, 3)).astype(dtype), requires_grad=w_grad)
    b = lib.tensor(rng.standard_normal(4).astype(dtype), requires_grad=b_grad)
    y = lib.nn.functional.linear(x, w, b)
    graph = _graph(y.grad_fn)
    grads = None
    if y.requires_grad:
        (y * y).sum().backward()
        grads = [None if t.grad is None else t.grad.numpy().copy() for t in (x, w, b)]
    if general:
        monkeypatch.undo()
    return y.detach().numpy().copy(), y.dtype, graph, grads


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("flags", [(True, True, True), (False, True, True), (True, False, False),
                                   (False, False, True), (False, False, False)])
def test_linear_records_what_the_general_path_and_pytorch_record(monkeypatch, flags, dtype):
    fast = _run(R, False, monkeypatch, *flags, dtype)
    general = _run(R, True, monkeypatch, *flags, dtype)
    th = _run(torch, False, monkeypatch, *flags, dtype)
    assert np.array_equal(fast[0], general[0])
    np.testing.assert_allclose(fast[0], th[0], rtol=1e-5, atol=1e-6)
    assert str(fast[1]) == str(th[1]).replace("torch", "retrograd")
    assert fast[2] == general[2] == th[2]
    if fast[3] is not None:
        for a, g, t in zip(fast[3], general[3], th[3]):
            assert (a is None) == (g is None) == (t is None)
            if a is not None:
                assert np.array_equal(a, g)
                np.testing.assert_allclose(a, t, rtol=1e-4, atol=1e-5)


def test_linear_saves_versions_and_refuses_a_modified_weight_or_input():
    lin = R.nn.Linear(3, 4)
    x = R.randn(2, 3, requires_grad=True)
    y = lin(x)
    with R.no_grad():
        lin.weight.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    x2 = R.randn(2, 3)
    y = lin(x2)  # the weight's gradient reads the input
    x2.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_linear_under_no_grad_and_inference_mode_records_nothing():
    lin = R.nn.Linear(3, 4)
    x = R.randn(2, 3)
    with R.no_grad():
        y = lin(x)
    assert not y.requires_grad and y.grad_fn is None
    with R.inference_mode():
        z = lin(x)
    assert z.is_inference() and np.array_equal(y.numpy(), z.numpy())


def test_linear_double_backward_through_the_inline_record():
    rng = np.random.default_rng(1)
    tensors = [rng.standard_normal(s) for s in ((3, 2), (4, 2), (4,))]
    outs = []
    for lib in (R, torch):
        x, w, b = (lib.tensor(t, requires_grad=True) for t in tensors)
        y = lib.nn.functional.linear(x, w, b)
        (gx,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        gx.pow(2).sum().backward()
        outs.append([t.grad.numpy() for t in (x, w, b)])
    for a, t in zip(*outs):
        np.testing.assert_allclose(a, t, rtol=1e-10)


@pytest.mark.parametrize("size", [7, 70_000])  # a temporary, and the scratch buffer
def test_plain_sgd_step_matches_pytorch_and_bumps_versions(size):
    rng = np.random.default_rng(2)
    init = rng.standard_normal(size).astype(np.float32)
    target = rng.standard_normal(size).astype(np.float32)
    trajectories = []
    for lib in (R, torch):
        p = lib.tensor(init.copy(), requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1)
        versions = []
        for _ in range(3):
            opt.zero_grad()
            ((p - lib.tensor(target)) ** 2).sum().backward()
            before = p._version
            opt.step()
            versions.append(p._version - before)
        trajectories.append((p.detach().numpy().copy(), versions))
    np.testing.assert_allclose(trajectories[0][0], trajectories[1][0], rtol=1e-6, atol=1e-6)
    assert trajectories[0][1] == trajectories[1][1]


def test_sgd_subclass_with_its_own_update_is_used():
    class Halving(R.optim.SGD):
        def _update(self, param, grad, state, settings, scratch):
            param *= 0.5

    p = R.tensor([4.0], requires_grad=True)
    opt = Halving([p], lr=0.1)
    (p * 1).sum().backward()
    opt.step()
    assert p.item() == 2.0
