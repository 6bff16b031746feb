"""nn.functional.gumbel_softmax against PyTorch's own function, fed the same exponential
noise (PyTorch's ``Tensor.exponential_`` is patched to return the draws retrograd makes):
values, dtypes and gradients, soft and hard (straight-through), over dims and
temperatures; float64 gradcheck/gradgradcheck of the soft sample; the eps warning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as T
import retrograd.nn.functional as F
from retrograd.autograd.gradcheck import gradcheck, gradgradcheck

from .helpers import close


def _noise(shape, dtype, seed):
    """The exponential draws gumbel_softmax makes after ``manual_seed(seed)``."""
    T.manual_seed(seed)
    return T.empty(*shape, dtype=getattr(T, dtype)).exponential_().numpy().copy()


CASES = [((2, 5), 1.0, False, -1), ((2, 5), 0.5, True, -1), ((3, 4, 2), 2.0, True, 1),
         ((4,), 0.3, False, 0), ((3, 4, 2), 1.0, False, 0)]


@pytest.mark.parametrize("shape,tau,hard,dim", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matches_torch_with_the_same_noise(torch, monkeypatch, shape, tau, hard, dim, dtype):
    noise = _noise(shape, dtype, seed=7)
    logits = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    upstream = np.random.default_rng(2).standard_normal(shape).astype(dtype)

    monkeypatch.setattr(torch.Tensor, "exponential_",
                        lambda self, *a, **k: self.copy_(torch.tensor(noise)))
    x_th = torch.tensor(logits, requires_grad=True)
    y_th = torch.nn.functional.gumbel_softmax(x_th, tau=tau, hard=hard, dim=dim)
    y_th.backward(torch.tensor(upstream))

    T.manual_seed(7)
    x = T.tensor(logits, requires_grad=True)
    y = F.gumbel_softmax(x, tau=tau, hard=hard, dim=dim)
    y.backward(T.tensor(upstream))

    tol = 1e-6 if dtype == "float32" else 1e-12
    assert y.dtype == getattr(T, dtype)
    close(y, y_th, tol)
    close(x.grad, x_th.grad, tol)
    if hard:  # one-hot along dim
        np.testing.assert_array_equal(y.detach().numpy().sum(axis=dim), 1.0)


def test_soft_sample_gradcheck_and_gradgradcheck():
    def sample(x):
        T.manual_seed(3)  # the same noise at every evaluation
        return F.gumbel_softmax(x, tau=0.7, dim=0)

    x = T.tensor(np.random.default_rng(4).standard_normal((3, 2)), requires_grad=True)
    gradcheck(sample, (x,))
    gradgradcheck(sample, (x,))


def test_eps_is_deprecated_as_in_torch(torch):
    messages = []
    for fn, lib in ((F.gumbel_softmax, T), (torch.nn.functional.gumbel_softmax, torch)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn(lib.zeros(2, 3), eps=1e-5)
        messages.append([(c.category, str(c.message)) for c in caught])
    assert messages[0] == messages[1] and messages[0]
