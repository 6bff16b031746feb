"""The Gaussian-process example (examples/gp_marginal_likelihood.py) as a test: the negative
log marginal likelihood (RBF kernel, Cholesky, triangular solve, log-determinant from the
factor's diagonal) and its gradients with respect to the hyperparameters match PyTorch's;
its second derivatives pass gradgradcheck; a short fit lowers it."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
from gp_marginal_likelihood import (
    fit, negative_log_marginal_likelihood, noisy_sine, posterior_mean,
)
from retrograd.autograd import gradcheck, gradgradcheck

HYPER = (0.3, -0.2, -1.5)  # log lengthscale, log signal sd, log noise sd


def _run(m, xs, ys, hyper, dtype_name):
    dtype = getattr(m, dtype_name)
    x, y = m.tensor(xs, dtype=dtype), m.tensor(ys, dtype=dtype)
    params = [m.tensor(h, dtype=dtype, requires_grad=True) for h in hyper]
    loss = negative_log_marginal_likelihood(m, x, y, *params)
    loss.backward()
    return loss.detach().numpy(), [p.grad.numpy() for p in params]


@pytest.mark.parametrize("dtype_name,tol", [("float64", 1e-10), ("float32", 1e-4)])
def test_likelihood_and_hyperparameter_gradients_match_torch(dtype_name, tol, torch):
    xs, ys = noisy_sine(12, seed=1)
    got_loss, got_grads = _run(retrograd, xs, ys, HYPER, dtype_name)
    want_loss, want_grads = _run(torch, xs, ys, HYPER, dtype_name)
    np.testing.assert_allclose(got_loss, want_loss, rtol=tol)
    for g, w in zip(got_grads, want_grads):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def test_data_gradients_match_torch(torch):
    # the gradient with respect to the inputs and targets too (kernel derivatives)
    xs, ys = noisy_sine(8, seed=2)
    grads = []
    for m in (retrograd, torch):
        x = m.tensor(xs, requires_grad=True)
        y = m.tensor(ys, requires_grad=True)
        negative_log_marginal_likelihood(m, x, y, *[m.tensor(h, dtype=m.float64)
                                                    for h in HYPER]).backward()
        grads.append((x.grad.numpy(), y.grad.numpy()))
    for g, w in zip(*grads):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def test_second_derivatives_pass_gradgradcheck():
    xs, ys = noisy_sine(6, seed=3)
    x, y = retrograd.tensor(xs), retrograd.tensor(ys)
    params = [retrograd.tensor(h, dtype=retrograd.float64, requires_grad=True) for h in HYPER]

    def nll(*p):
        return negative_log_marginal_likelihood(retrograd, x, y, *p)

    assert gradcheck(nll, params)
    assert gradgradcheck(nll, params)


def test_posterior_mean_matches_torch(torch):
    xs, ys = noisy_sine(10, seed=4)
    grid = np.linspace(-2, 2, 7)[:, None]
    got = posterior_mean(retrograd, retrograd.tensor(xs), retrograd.tensor(ys),
                         retrograd.tensor(grid),
                         *[retrograd.tensor(h, dtype=retrograd.float64) for h in HYPER])
    want = posterior_mean(torch, torch.tensor(xs), torch.tensor(ys), torch.tensor(grid),
                          *[torch.tensor(h, dtype=torch.float64) for h in HYPER])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-9, atol=1e-10)


def test_fit_lowers_the_loss():
    # (retrograd alone: importing torch.optim costs seconds; the gradients Adam follows are
    # compared with PyTorch's above)
    xs, ys = noisy_sine(15, seed=5)
    params, losses = fit(retrograd, retrograd.tensor(xs), retrograd.tensor(ys), steps=20)
    assert losses[-1] < losses[0] - 1
    assert all(np.isfinite(p.item()) for p in params)
