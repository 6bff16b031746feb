"""Module.zero_grad walks the parameters without building their names (a faster walk); it
must reset exactly what ``parameters()`` yields, in its order, and take an override of the
walk (``parameters``/``named_modules`` in a subclass) as it is."""

from __future__ import annotations

import retrograd as R


def _model():
    shared = R.nn.Linear(3, 3)
    inner = R.nn.Sequential(shared, R.nn.ReLU(), R.nn.Linear(3, 2, bias=False))
    model = R.nn.Sequential(R.nn.Linear(2, 3), inner)
    model.add_module("again", shared)  # a module reached twice
    model.tied = R.nn.Linear(3, 3)
    model.tied.weight = shared.weight  # a parameter reached twice
    return model


def _fill(model):
    for p in model.parameters():
        p.grad = R.ones_like(p)


def test_walk_is_parameters_order():
    model = _model()
    assert [id(p) for p in model._parameters_in_order()] == [id(p) for p in model.parameters()]


def test_zero_grad_resets_every_parameter():
    model = _model()
    _fill(model)
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    _fill(model)
    model.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.any() for p in model.parameters())


class _OnlyFirst(R.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = R.nn.Linear(2, 2), R.nn.Linear(2, 2)

    def parameters(self, recurse=True):
        return iter([self.a.weight])


class _NamedModulesOverride(R.nn.Linear):
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        yield prefix, self


def test_overridden_walk_is_used():
    model = _OnlyFirst()
    _fill(model.a)
    _fill(model.b)
    model.zero_grad()
    assert model.a.weight.grad is None and model.b.weight.grad is not None
    assert model._parameters_in_order() is None
    outer = R.nn.Sequential(_NamedModulesOverride(2, 2))
    assert outer._parameters_in_order() is None
    _fill(outer)
    outer.zero_grad()
    assert all(p.grad is None for p in outer.parameters())
