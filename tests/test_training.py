"""End-to-end: an MLP trained with hand-written SGD, and a Hessian-vector product, vs PyTorch.

These tests exercise the whole stack the way a user does (matmul, broadcasting adds,
relu/tanh, cross_entropy, backward into leaves, in-place updates under no_grad, double
backward) and compare with PyTorch 2.13 started from the very same weights.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as R
import retrograd.nn.functional as RF

from digits_mlp import init_mlp, load_digits_standardized, mlp_forward

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def digits():
    return load_digits_standardized()


def test_mlp_first_step_grads_match_torch(digits):
    x, y = digits
    init = init_mlp([64, 32, 10], 0, np.float64)
    xb, yb = x[:64], y[:64]
    pr = [R.tensor(p, requires_grad=True) for p in init]
    pt = [torch.tensor(p, requires_grad=True) for p in init]
    loss_r = RF.cross_entropy(mlp_forward(pr, R.tensor(xb), R.relu), R.tensor(yb))
    loss_t = torch.nn.functional.cross_entropy(mlp_forward(pt, torch.tensor(xb), torch.relu),
                                               torch.tensor(yb))
    loss_r.backward()
    loss_t.backward()
    np.testing.assert_allclose(loss_r.item(), loss_t.item(), rtol=1e-12)
    assert loss_r.grad_fn.name() == loss_t.grad_fn.name()
    for a, b in zip(pr, pt):
        assert a.grad.dtype == R.float64 and tuple(a.grad.shape) == tuple(b.grad.shape)
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_mlp_sgd_training_reduces_loss_and_tracks_torch(digits):
    """300 SGD steps in float32: the loss falls a lot, and stays with PyTorch's step by step."""
    x, y = digits
    x = x.astype(np.float32)
    init = init_mlp([64, 32, 10], 1, np.float32)
    pr = [R.tensor(p, requires_grad=True) for p in init]
    pt = [torch.tensor(p, requires_grad=True) for p in init]
    rng = np.random.default_rng(3)
    lr, bs, steps = 0.1, 64, 300
    full_r, full_t = R.tensor(x), torch.tensor(x)

    def full_loss():
        with R.no_grad():
            lr_ = RF.cross_entropy(mlp_forward(pr, full_r, R.relu), R.tensor(y)).item()
        with torch.no_grad():
            lt_ = torch.nn.functional.cross_entropy(mlp_forward(pt, full_t, torch.relu),
                                                    torch.tensor(y)).item()
        return lr_, lt_

    start_r, start_t = full_loss()
    for _ in range(steps):
        idx = rng.integers(0, len(x), bs)
        loss_r = RF.cross_entropy(mlp_forward(pr, R.tensor(x[idx]), R.relu), R.tensor(y[idx]))
        loss_r.backward()
        with R.no_grad():
            for p in pr:
                p -= lr * p.grad
                p.grad.zero_()  # the gradient buffer is reused: backward adds into it
        logits_t = mlp_forward(pt, torch.tensor(x[idx]), torch.relu)
        loss_t = torch.nn.functional.cross_entropy(logits_t, torch.tensor(y[idx]))
        loss_t.backward()
        with torch.no_grad():
            for p in pt:
                p -= lr * p.grad
                p.grad.zero_()
    end_r, end_t = full_loss()
    assert end_r < 0.25 * start_r, (start_r, end_r)  # ~2.3 -> ~0.1 on digits
    # float32 rounding differs between the two libraries, but 300 steps of SGD stay close
    np.testing.assert_allclose(end_r, end_t, rtol=1e-3)
    for a, b in zip(pr, pt):
        assert a.dtype == R.float32 and a.grad is not None
        assert not a.grad.numpy().any()  # zeroed in place, still allocated
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-3, atol=1e-4)


def _hvp(lib, params, vec, x, y, act, grad):
    """Hessian-vector product of the MLP's loss: grad of (grad(loss) . v)."""
    loss = lib.nn.functional.cross_entropy(mlp_forward(params, x, act), y)
    gs = grad(loss, params, create_graph=True)
    dot = sum((g * v).sum() for g, v in zip(gs, vec))
    return loss, gs, grad(dot, params)


@pytest.mark.parametrize("act_name", ["tanh", "relu"])
def test_mlp_hessian_vector_product_matches_torch(digits, act_name):
    x, y = digits
    xb, yb = x[:32], y[:32]
    init = init_mlp([64, 16, 10], 2, np.float64)
    rng = np.random.default_rng(4)
    vec = [rng.standard_normal(p.shape) for p in init]
    pr = [R.tensor(p, requires_grad=True) for p in init]
    pt = [torch.tensor(p, requires_grad=True) for p in init]
    loss_r, g_r, h_r = _hvp(R, pr, [R.tensor(v) for v in vec], R.tensor(xb), R.tensor(yb),
                            getattr(R, act_name), R.autograd.grad)
    loss_t, g_t, h_t = _hvp(torch, pt, [torch.tensor(v) for v in vec], torch.tensor(xb),
                            torch.tensor(yb), getattr(torch, act_name), torch.autograd.grad)
    np.testing.assert_allclose(loss_r.item(), loss_t.item(), rtol=1e-12)
    for a, b in zip(g_r, g_t):
        assert a.requires_grad and a.grad_fn is not None  # create_graph=True records
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
    nonzero = 0
    for a, b in zip(h_r, h_t):
        assert tuple(a.shape) == tuple(b.shape) and a.dtype == R.float64
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-9, atol=1e-11)
        nonzero += int(np.abs(b.numpy()).max() > 1e-6)
    # the HVP must be informative (a zero Hessian would make the comparison vacuous)
    assert nonzero == len(h_t)


def test_hvp_matches_finite_difference_of_gradient(digits):
    """Independent of torch: H v ~ (g(w + eps v) - g(w - eps v)) / (2 eps)."""
    x, y = digits
    xb, yb = R.tensor(x[:16]), R.tensor(y[:16])
    init = init_mlp([64, 8, 10], 5, np.float64)
    rng = np.random.default_rng(6)
    vec = [rng.standard_normal(p.shape) for p in init]
    pr = [R.tensor(p, requires_grad=True) for p in init]
    _, _, hv = _hvp(R, pr, [R.tensor(v) for v in vec], xb, yb, R.tanh, R.autograd.grad)

    def grads_at(sign, eps=1e-5):
        ps = [R.tensor(p + sign * eps * v, requires_grad=True) for p, v in zip(init, vec)]
        loss = RF.cross_entropy(mlp_forward(ps, xb, R.tanh), yb)
        return [g.numpy() for g in R.autograd.grad(loss, ps)], eps

    (gp, eps), (gm, _) = grads_at(1), grads_at(-1)
    for h, a, b in zip(hv, gp, gm):
        np.testing.assert_allclose(h.numpy(), (a - b) / (2 * eps), rtol=1e-5, atol=1e-7)


def _slots(cls):
    names = []
    for klass in cls.__mro__:
        names += [s for s in getattr(klass, "__slots__", ()) if s != "__weakref__"]
    return names


@pytest.mark.parametrize("grad_mode", [True, False])
def test_op_results_set_every_tensor_slot_like_make_tensor(grad_mode):
    """ops/_apply builds result tensors inline (the hot path); a slot added to Tensor must
    be initialised there too, or reading it fails later with an AttributeError."""
    from retrograd.tensor import Tensor, make_tensor

    ref = make_tensor(np.zeros(2))
    slots = _slots(Tensor)
    assert slots and all(hasattr(ref, s) for s in slots)
    x = R.tensor([1.0, 2.0], requires_grad=True)
    with R.set_grad_enabled(grad_mode):
        results = {
            "unary": R.exp(x), "unary_view": x.reshape(2, 1), "binary": x * x,
            "binary_scalar": x * 2.0, "scalar_binary": 2.0 - x, "general": R.cat([x, x]),
            "int_binary": R.tensor([1, 2]) + R.tensor([3, 4]),
            "matmul_2d": x.reshape(1, 2) @ x.reshape(2, 1),  # (linalg.matmul's inline path)
        }
    for what, out in results.items():
        missing = [s for s in slots if not hasattr(out, s)]
        assert not missing, f"{what}: slots never set by the op path: {missing}"
        if what.startswith("int"):
            assert not out.requires_grad and out.grad_fn is None
        elif what == "unary_view" and not grad_mode:
            # a view made under no_grad of a tensor that requires grad requires grad too (as
            # PyTorch: a leaf whose gradient goes nowhere)
            assert out.requires_grad and out.grad_fn is None
        else:
            assert out.requires_grad is grad_mode and (out.grad_fn is not None) is grad_mode
