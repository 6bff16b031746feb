"""retrograd.compile writes plain SGD's ``step()`` into the replay: it stays bit-identical
to eager while its settings change between calls, and hands back to the call (momentum,
weight decay, hooks, a new parameter group) whenever the inline update would not be
eager's."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as T
import retrograd.nn.functional as F
from retrograd import nn

from .test_compile import same


def _pair(**sgd):
    models = []
    for _ in range(2):
        T.manual_seed(0)
        models.append(nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3)).double())
    opts = [T.optim.SGD(m.parameters(), **sgd) for m in models]

    def make(model, opt):
        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss
        return step

    return models, opts, make(models[0], opts[0]), T.compile(make(models[1], opts[1]))


def _check(models, eager, compiled, calls, between=None):
    rng = np.random.default_rng(0)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for i in range(calls):
            if between is not None:
                between(i)
            x, y = T.tensor(rng.standard_normal((5, 4))), T.tensor(rng.integers(0, 3, 5))
            assert same(compiled(x, y), eager(x, y)), f"call {i}"
            for pc, pe in zip(models[1].parameters(), models[0].parameters()):
                assert same(pc, pe) and same(pc.grad, pe.grad), f"call {i}"
    assert not [x for x in w if "retrograd.compile" in str(x.message)]
    assert compiled.refused is None


def test_inline_sgd_is_in_the_replay_and_bitwise():
    models, opts, eager, compiled = _pair(lr=0.1)
    _check(models, eager, compiled, 5)
    source = next(iter(compiled._cache.values())).replay.source
    assert "._bump_version()" in source  # the update is written out, not called


@pytest.mark.parametrize("change", ["lr", "tensor_lr", "momentum", "weight_decay",
                                    "maximize", "hook", "param_group"])
def test_settings_changed_after_tracing(change):
    models, opts, eager, compiled = _pair(lr=0.1)
    handles = []

    def between(i):
        if i != 3:
            return
        for opt in opts:
            group = opt.param_groups[0]
            if change == "lr":
                group["lr"] = 0.03
            elif change == "tensor_lr":
                group["lr"] = T.tensor(0.03)
            elif change in ("momentum", "weight_decay"):
                group[change] = 0.5
            elif change == "maximize":
                group["maximize"] = True
            elif change == "hook":
                handles.append(opt.register_step_post_hook(lambda o, a, kw: None))
            else:
                opt.add_param_group({"params": [nn.Parameter(T.zeros(2, dtype=T.float64))]})

    _check(models, eager, compiled, 7, between)
    for h in handles:
        h.remove()
