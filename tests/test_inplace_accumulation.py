"""The engine sums two gradients bound for one node in place only when one of them is a
derivative's fresh result that nothing else holds (engine._sum_arrays): never into an
array the user, a saved value or another edge still sees."""

import sys

import numpy as np
import torch

import retrograd as R
from retrograd.autograd import accumulate_grad, engine

N = 200  # 40,000 elements: above engine._INPLACE_MIN, so the in-place path is taken


def _chain(lib, x):
    h = x
    for _ in range(2):
        h = h + lib.exp(lib.tanh(lib.sin(h))) * 0.1
    return h.sum()


def test_fresh_gradients_are_summed_in_place_with_torchs_values(monkeypatch):
    x0 = np.random.default_rng(0).standard_normal((N, N))
    inplace = []
    real = sys.getrefcount

    def spy(obj):
        refs = real(obj) - 1  # (this function's own parameter)
        inplace.append(refs <= engine._SOLE_REFS)
        return refs

    monkeypatch.setattr(engine, "_getrefcount", spy)
    x = R.tensor(x0, requires_grad=True)
    _chain(R, x).backward()
    xt = torch.tensor(x0, requires_grad=True)
    _chain(torch, xt).backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)
    assert inplace and all(inplace)  # (the path is exercised: the loop's references)


def test_a_gradient_someone_else_holds_is_never_written():
    held = R.ones(N, N, dtype=R.float64) * 3
    before = held.numpy().copy()

    class Give(R.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return held  # the caller's tensor: its array has another holder

    x = R.zeros(N, N, dtype=R.float64, requires_grad=True)
    y = x * 2
    (Give.apply(y) + y).sum().backward()
    np.testing.assert_array_equal(held.numpy(), before)
    np.testing.assert_array_equal(x.grad.numpy(), np.full((N, N), 8.0))


def test_one_gradient_sent_down_two_edges_is_not_summed_into_itself():
    x = R.tensor(np.ones((N, N)), requires_grad=True)
    y = x * 2
    (y + y + y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((N, N), 6.0))


# --------------------------------------------------------------------------- sole_grad
# A derivative may write its result into the incoming gradient when the engine says that
# no one else holds it (graph.sole_grad), and a leaf's first .grad may be that array itself.


def _spy_sole(monkeypatch):
    """Record, for every first-order vjp call, whether the engine marked ``g`` as its own."""
    from retrograd.autograd import graph

    marked = []
    real = engine.run_backward.__globals__["sole_grad"]
    assert real is graph.sole_grad
    from retrograd.ops import elementary, pointwise

    orig = elementary._exp_vjp

    def exp_vjp(node, g, saved):
        marked.append(g is graph.sole_grad[0])
        return orig(node, g, saved)

    monkeypatch.setattr(pointwise.exp.op.node_cls, "vjp", staticmethod(exp_vjp))
    return marked


def test_the_engines_own_gradient_is_reused_with_torchs_values(monkeypatch):
    marked = _spy_sole(monkeypatch)
    x0 = np.random.default_rng(1).standard_normal((N, N))
    x = R.tensor(x0, requires_grad=True)
    _chain(R, x).backward()
    xt = torch.tensor(x0, requires_grad=True)
    _chain(torch, xt).backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)
    assert marked and all(marked)  # (the in-place path ran)
    from retrograd.autograd import graph

    assert graph.sole_grad[0] is None  # cleared after each call


def test_a_gradient_held_elsewhere_is_never_marked_or_written(monkeypatch):
    marked = _spy_sole(monkeypatch)
    x = R.tensor(np.full((N, N), 0.5), requires_grad=True)
    y = R.exp(x)
    seen = []
    y.register_hook(lambda g: seen.append(g) or g)  # the hook keeps the gradient
    y.backward(R.ones(N, N, dtype=R.float64) * 2)
    assert marked == [False]
    np.testing.assert_array_equal(seen[0].numpy(), np.full((N, N), 2.0))
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(np.full((N, N), 0.5)))


def test_captured_gradients_are_not_written_by_the_next_derivative():
    x = R.tensor(np.full((N, N), 0.5), requires_grad=True)
    y = x * 3
    z = R.exp(y)
    gy, gx = R.autograd.grad(z.sum() * 2, (z, x))
    np.testing.assert_array_equal(gy.numpy(), np.full((N, N), 2.0))
    np.testing.assert_allclose(gx.numpy(), 6 * np.exp(np.full((N, N), 1.5)))


def test_a_leafs_first_grad_never_aliases_the_callers_gradient():
    x = R.tensor(np.ones((N, N)), requires_grad=True)
    v = R.tensor(np.full((N, N), 3.0))
    x.backward(v)
    assert not np.shares_memory(x.grad.numpy(), v.numpy())
    y = x * 1
    w = R.tensor(np.full((N, N), 5.0))
    x.grad = None
    y.backward(w)  # MulBackward0 computes g * 1: a fresh array, which may become .grad
    np.testing.assert_array_equal(x.grad.numpy(), np.full((N, N), 5.0))
    np.testing.assert_array_equal(w.numpy(), np.full((N, N), 5.0))
    z = x + 0  # AddBackward passes w on as it is: .grad must be a copy
    x.grad = None
    z.backward(w)
    assert not np.shares_memory(x.grad.numpy(), w.numpy())


def test_a_fresh_gradient_becomes_the_leafs_grad_without_a_copy(monkeypatch):
    seen = []
    real = sys.getrefcount

    def spy(obj):
        refs = real(obj) - 1  # (this function's own parameter)
        if sys._getframe(1).f_code.co_name in ("_run_leaf", "_run_plain_leaf"):
            seen.append(refs <= accumulate_grad._SOLE_LEAF_REFS)
        return refs

    monkeypatch.setattr(accumulate_grad, "_getrefcount", spy)
    x = R.tensor(np.ones((4, 4)), requires_grad=True)
    (x * 2).sum().backward()
    assert seen == [True]  # (the loop's and _run_leaf's references only)
    np.testing.assert_array_equal(x.grad.numpy(), np.full((4, 4), 2.0))
    (x * 3).sum().backward()  # accumulated into the existing .grad, in place
    np.testing.assert_array_equal(x.grad.numpy(), np.full((4, 4), 5.0))


def test_a_node_post_hook_sees_the_incoming_gradient_unchanged():
    """A derivative may reuse the engine's own gradient array (exp, sin, mul by a number),
    but not when a post hook on that node will read the incoming gradient afterwards."""
    n = 1 << 16

    def run(lib):
        x = lib.ones(n, requires_grad=True)
        y = x.exp()
        z = (y * 3.0).sin() * 2.0
        seen = []
        for node in (y.grad_fn, z.grad_fn):
            node.register_hook(lambda gi, go: seen.append((float(gi[0][0]), float(go[0][0]))))
        z.sum().backward()
        return seen, float(x.grad[0])

    ours, theirs = run(R), run(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5)


def _linear_pair():
    lin, tl = R.nn.Linear(3, 4), torch.nn.Linear(3, 4)
    with torch.no_grad():
        tl.weight.copy_(torch.tensor(lin.weight.detach().numpy()))
        tl.bias.copy_(torch.tensor(lin.bias.detach().numpy()))
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    return lin, tl, x


def test_a_linear_layers_weight_gradient_is_its_own_c_ordered_array():
    # AddmmBackward0 computes it as (g.T @ x).T, TBackward0 transposes it back: the leaf
    # keeps the product itself (no strided copy), with torch's values, and sums into it
    lin, tl, x = _linear_pair()
    for _ in range(2):
        (lin(R.tensor(x)) ** 2).sum().backward()
        (tl(torch.tensor(x)) ** 2).sum().backward()
        g = lin.weight.grad.numpy()
        assert g.flags.c_contiguous and g.base is None
        np.testing.assert_allclose(g, tl.weight.grad.numpy(), rtol=1e-5)
        np.testing.assert_allclose(lin.bias.grad.numpy(), tl.bias.grad.numpy(), rtol=1e-5)


def test_a_weight_gradient_someone_else_holds_is_copied():
    # the transposed weight retains its gradient: the weight's .grad must not alias it
    lin, tl, x = _linear_pair()
    wt = lin.weight.t()
    wt.retain_grad()
    out = R.addmm(lin.bias, R.tensor(x), wt)
    (out ** 2).sum().backward()
    (tl(torch.tensor(x)) ** 2).sum().backward()
    assert not np.shares_memory(lin.weight.grad.numpy(), wt.grad.numpy())
    np.testing.assert_allclose(lin.weight.grad.numpy(), tl.weight.grad.numpy(), rtol=1e-5)
    np.testing.assert_allclose(wt.grad.numpy(), tl.weight.grad.numpy().T, rtol=1e-5)


def test_a_0d_leaf_summed_from_a_batch_gets_a_0d_array_grad():
    w = R.tensor(0.5, requires_grad=True)
    (R.ones(3) * w).sum().backward()
    assert isinstance(w.grad.numpy(), np.ndarray) and w.grad.shape == ()
    w.grad.zero_()
    assert w.grad.item() == 0.0
