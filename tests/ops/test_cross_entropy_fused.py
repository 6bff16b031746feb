"""cross_entropy's fused first-order backward (nll_loss's one-hot gradient handed to
log_softmax's derivative, ops/nn.py ``one_hot_grad``): the same bits as the general
formula ``g - exp(y) * g.sum(1)``, which a hook on the log-probabilities forces, and the
fused path itself taken (not only its fallback)."""

import numpy as np
import pytest
import torch

import retrograd as R
import retrograd.nn.functional as RF
from retrograd.ops import nn as rnn


def _grads(xa, ta, reduction, scale, fused):
    x = R.tensor(xa, requires_grad=True)
    if fused:
        loss = RF.cross_entropy(x, R.tensor(ta), reduction=reduction)
    else:
        logp = R.log_softmax(x, 1)
        logp.register_hook(lambda g: None)  # (a hook on the node: the general formula)
        loss = RF.nll_loss(logp, R.tensor(ta), reduction=reduction)
    (loss * scale).backward()
    return loss.detach().numpy(), x.grad.numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("scale", [1.0, 3.7, -2.0, 0.0, 1e-40, float("nan"), float("inf")])
def test_fused_backward_bits_match_general_formula(dtype, reduction, scale):
    rng = np.random.default_rng(0)
    for n, c in [(6, 4), (5, 1), (3, 9)]:
        xa = (rng.standard_normal((n, c)) * 5).astype(dtype)
        xa[0, 0] = -200.0  # an exponential that underflows to 0
        ta = rng.integers(0, c, n)
        with np.errstate(all="ignore"):
            loss_f, grad_f = _grads(xa, ta, reduction, scale, True)
            loss_g, grad_g = _grads(xa, ta, reduction, scale, False)
        assert grad_f.dtype == dtype
        assert np.array_equal(grad_f.view(np.uint8), grad_g.view(np.uint8))
        assert np.array_equal(loss_f, loss_g, equal_nan=True)
    assert rnn.one_hot_grad[0] is None  # (nothing kept after the backward)


def test_fused_path_is_taken_and_matches_torch(monkeypatch):
    calls = []
    real = rnn._multiply
    monkeypatch.setattr(rnn, "_multiply", lambda *a, **k: calls.append(1) or real(*a, **k))
    rng = np.random.default_rng(1)
    xa = rng.standard_normal((8, 5)).astype(np.float32)
    ta = rng.integers(0, 5, 8)
    x = R.tensor(xa, requires_grad=True)
    RF.cross_entropy(x, R.tensor(ta)).backward()
    assert calls == [1]
    xt = torch.tensor(xa, requires_grad=True)
    torch.nn.functional.cross_entropy(xt, torch.tensor(ta)).backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_hooks_on_either_node_see_and_change_the_gradient_as_general():
    rng = np.random.default_rng(2)
    xa = rng.standard_normal((4, 3))
    ta = rng.integers(0, 3, 4)
    x = R.tensor(xa, requires_grad=True)
    loss = RF.cross_entropy(x, R.tensor(ta))
    ls_node = loss.grad_fn.next_functions[0][0]
    assert (loss.grad_fn.name(), ls_node.name()) == ("NllLossBackward0", "LogSoftmaxBackward0")
    seen = []
    # a pre-hook that doubles the one-hot gradient in place: the general formula must run
    ls_node.register_prehook(lambda gs: seen.append(gs[0].clone()) or (gs[0] * 2,))
    loss.backward()
    xt = torch.tensor(xa, requires_grad=True)
    lt = torch.nn.functional.cross_entropy(xt, torch.tensor(ta))
    lt.grad_fn.next_functions[0][0].register_prehook(lambda gs: (gs[0] * 2,))
    lt.backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12)
    assert seen and seen[0].shape == (4, 3)
