"""The shared per-parameter step (PerParameterOptimizer): what every algorithm inherits --
state created on a parameter's first step only where PyTorch creates it, the step count,
version bumps, parameters without gradients skipped, step hooks -- and that a new
algorithm needs only its math."""

from __future__ import annotations

import numpy as np

import retrograd as T
from retrograd import optim
from retrograd.optim.optimizer import PerParameterOptimizer, step_tensor


class HalfStep(PerParameterOptimizer):
    """A toy algorithm: p -= lr * g / 2, counting steps."""

    def __init__(self, params, lr=0.1):
        super().__init__(params, {"lr": lr})

    def _group_settings(self, group):
        return group["lr"]

    def _init_state(self, state, param, group):
        state["step"] = step_tensor()

    def _update(self, param, grad, state, lr, scratch):
        param -= lr * grad / 2


def test_new_algorithm_needs_only_its_math():
    w = T.tensor([1.0, 2.0], requires_grad=True)
    unused = T.tensor([5.0], requires_grad=True)
    opt = HalfStep([w, unused], lr=0.5)
    calls = []
    opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
    for _ in range(3):
        opt.zero_grad()
        version = w._version
        (w * w).sum().backward()
        opt.step()
        assert w._version == version + 1
    np.testing.assert_allclose(w.detach().numpy(), np.array([1.0, 2.0]) * 0.5 ** 3)
    assert float(opt.state[w]["step"]) == 3 and unused not in opt.state
    assert calls == ["pre", "post"] * 3


def test_state_only_where_torch_keeps_it(torch):
    for kwargs in ({}, {"momentum": 0.9}):
        ours = T.tensor([1.0, -1.0], requires_grad=True)
        theirs = torch.tensor([1.0, -1.0], requires_grad=True)
        o1, o2 = optim.SGD([ours], lr=0.1, **kwargs), torch.optim.SGD([theirs], lr=0.1, **kwargs)
        for w, o in ((ours, o1), (theirs, o2)):
            (w * w).sum().backward()
            o.step()
        assert list(o1.state_dict()["state"]) == list(o2.state_dict()["state"])
        assert len(o1.state) == len(o2.state)
    for name in ("Adam", "RMSprop", "Rprop"):
        ours = T.tensor([1.0], requires_grad=True)
        theirs = torch.tensor([1.0], requires_grad=True)
        o1 = getattr(optim, name)([ours])
        o2 = getattr(torch.optim, name)([theirs])
        for w, o in ((ours, o1), (theirs, o2)):
            (w * w).sum().backward()
            o.step()
        assert sorted(o1.state_dict()["state"][0]) == sorted(o2.state_dict()["state"][0])
