"""The tutorial check: a small MLP class, trained a few SGD steps by hand
(``p -= lr * p.grad`` under no_grad), matches PyTorch step for step."""

from __future__ import annotations

import numpy as np

import retrograd as T

from .helpers import copy_weights


def mlp_class(m):
    nn, F = m.nn, m.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.hidden = nn.Linear(6, 16)
            self.act = nn.GELU()
            self.drop = nn.Dropout(0.5)
            self.out = nn.Linear(16, 3)

        def forward(self, x):
            return self.out(self.drop(self.act(self.hidden(x))))

    return MLP, F


def train(m, model, functional, x, y, steps, lr):
    losses = []
    model.eval()  # dropout off: the two libraries draw different masks
    for _ in range(steps):
        loss = functional.cross_entropy(model(x), y)
        model.zero_grad()
        loss.backward()
        with m.no_grad():
            for p in model.parameters():
                p -= lr * p.grad
        losses.append(loss.item())
    return losses


def test_mlp_trains_like_torch_step_for_step(torch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 6)).astype(np.float32)
    y = rng.integers(0, 3, 32)
    MLP, F = mlp_class(T)
    TMLP, TF = mlp_class(torch)
    ours, theirs = MLP(), TMLP()
    copy_weights(ours, theirs)
    losses = train(T, ours, F, T.tensor(x), T.tensor(y), 8, 0.3)
    tlosses = train(torch, theirs, TF, torch.tensor(x), torch.tensor(y), 8, 0.3)
    np.testing.assert_allclose(losses, tlosses, rtol=1e-5)
    assert losses[-1] < losses[0]
    tstate = theirs.state_dict()
    for name, value in ours.state_dict().items():
        np.testing.assert_allclose(value.numpy(), tstate[name].numpy(), rtol=1e-4, atol=1e-6,
                                   err_msg=name)
    assert all(isinstance(p, T.nn.Parameter) and p.is_leaf for p in ours.parameters())
