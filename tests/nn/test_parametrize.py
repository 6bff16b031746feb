"""nn.utils.parametrize against PyTorch: the class swap, chained parametrizations,
right_inverse (one tensor and several), unsafe, state_dict keys, remove (both ways),
cached(), deepcopy/pickle, gradients through the property, and the errors."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import retrograd as T
from retrograd import nn
from retrograd.autograd.gradcheck import gradcheck, gradgradcheck
from retrograd.nn.utils import parametrize as P

from .helpers import check_layer, close, copy_weights, to_rg


def symmetric(nn_):
    class Symmetric(nn_.Module):
        def forward(self, x):
            return x.triu() + x.triu(1).transpose(-1, -2)
    return Symmetric


def scaled(nn_):
    class Double(nn_.Module):
        def forward(self, x):
            return x * 2

        def right_inverse(self, x):
            return x / 2
    return Double


def split(nn_):
    """right_inverse returns two tensors: the module holds original0 and original1."""
    class Sum(nn_.Module):
        def forward(self, a, b):
            return a + b

        def right_inverse(self, x):
            return x * 0.25, x * 0.75
    return Sum


def factory_chain(nn_):
    m = nn_.Linear(3, 3)
    mod = nn_.utils.parametrize
    mod.register_parametrization(m, "weight", symmetric(nn_)())
    mod.register_parametrization(m, "weight", scaled(nn_)())
    return m


def factory_split(nn_):
    m = nn_.Linear(3, 2)
    nn_.utils.parametrize.register_parametrization(m, "weight", split(nn_)())
    nn_.utils.parametrize.register_parametrization(m, "bias", scaled(nn_)())
    return m


@pytest.mark.parametrize("factory", [factory_chain, factory_split])
def test_parametrized_module_matches_torch(torch, factory):
    """repr, state_dict keys/shapes, outputs, input and original-tensor gradients."""
    check_layer(torch, factory, [np.random.default_rng(0).standard_normal((4, 3))])
    rg_module = factory(nn)
    assert type(rg_module).__name__ == type(factory(torch.nn)).__name__ == "ParametrizedLinear"
    assert isinstance(rg_module, nn.Linear)


def test_class_swap_is_per_instance_and_undone():
    m, other = nn.Linear(2, 2), nn.Linear(2, 2)
    P.register_parametrization(m, "weight", symmetric(nn)())
    assert type(other) is nn.Linear and P.type_before_parametrizations(m) is nn.Linear
    assert P.is_parametrized(m) and P.is_parametrized(m, "weight")
    assert not P.is_parametrized(m, "bias") and not P.is_parametrized(other)
    P.remove_parametrizations(m, "weight")
    assert type(m) is nn.Linear and not hasattr(m, "parametrizations")
    assert list(m.state_dict()) == ["bias", "weight"]
    assert isinstance(m.weight, nn.Parameter)


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations_matches_torch(torch, leave):
    ours, theirs = nn.Linear(3, 3), torch.nn.Linear(3, 3)
    copy_weights(ours, theirs)
    original = ours.weight
    P.register_parametrization(ours, "weight", symmetric(nn)())
    torch.nn.utils.parametrize.register_parametrization(theirs, "weight", symmetric(torch.nn)())
    P.remove_parametrizations(ours, "weight", leave_parametrized=leave)
    torch.nn.utils.parametrize.remove_parametrizations(theirs, "weight",
                                                       leave_parametrized=leave)
    assert ours.weight is original  # the same Parameter object: optimizers keep it
    close(ours.weight, theirs.weight, 1e-6)
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_tuple_parametrization_remove():
    m = nn.Linear(3, 2)
    P.register_parametrization(m, "weight", split(nn)())
    value = m.weight.detach().clone()
    with pytest.raises(ValueError, match="sequence of tensors"):
        P.remove_parametrizations(m, "weight", leave_parametrized=False)
    P.remove_parametrizations(m, "weight")
    assert isinstance(m.weight, nn.Parameter)
    close(m.weight, value, 1e-7)


def test_assignment_runs_right_inverse(torch):
    ours, theirs = factory_split(nn), factory_split(torch.nn)
    value = np.arange(6.0).reshape(2, 3).astype("float32")
    ours.weight = T.tensor(value)
    theirs.weight = torch.tensor(value)
    for name in ("original0", "original1"):
        close(getattr(ours.parametrizations.weight, name),
              getattr(theirs.parametrizations.weight, name), 1e-7)
    close(ours.weight, value, 1e-6)
    m = factory_chain(nn)  # Symmetric has no right_inverse
    with pytest.raises(RuntimeError, match="Symmetric does not implement right_inverse"):
        m.weight = T.eye(3)


def test_gradients_through_the_property_float64():
    m = nn.Linear(3, 3).double()
    P.register_parametrization(m, "weight", symmetric(nn)())
    P.register_parametrization(m, "weight", scaled(nn)())
    x = T.randn(2, 3, dtype=T.float64, requires_grad=True)
    orig = m.parametrizations.weight.original

    def f(x, w):
        m.parametrizations.weight._parameters["original"] = w  # the graph reaches w
        return m(x)

    assert gradcheck(f, (x, orig.detach().clone().requires_grad_()))
    assert gradgradcheck(f, (x, orig.detach().clone().requires_grad_()))


def test_cached_computes_once():
    calls = []

    class Counting(nn.Module):
        def forward(self, x):
            calls.append(1)
            return x + 0

    m = P.register_parametrization(nn.Linear(2, 2), "weight", Counting())
    calls.clear()
    with P.cached():
        a, b = m.weight, m.weight
        with P.cached():  # nesting keeps the cache
            assert m.weight is a
    assert a is b and len(calls) == 1
    assert m.weight is not a and len(calls) == 2  # outside, computed on every access


def test_unsafe_and_shape_checks(torch):
    class Grow(nn.Module):
        def forward(self, x):
            return T.cat([x, x])

    with pytest.raises(ValueError, match="may not change the shape"):
        P.register_parametrization(nn.Linear(2, 2), "weight", Grow())
    m = P.register_parametrization(nn.Linear(2, 2), "weight", Grow(), unsafe=True)
    assert m.weight.shape == (4, 2)

    class ToDouble(nn.Module):
        def forward(self, x):
            return x.double()

    with pytest.raises(ValueError, match="may not change the dtype"):
        P.register_parametrization(nn.Linear(2, 2), "weight", ToDouble())
    m = P.register_parametrization(nn.Linear(2, 2), "weight", symmetric(nn)())
    with pytest.raises(ValueError, match="may not change the shape"):
        P.register_parametrization(m, "weight", Grow())  # added to a chain: checked too
    with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
        P.register_parametrization(nn.Linear(2, 2), "nope", Grow())
    with pytest.raises(ValueError, match="does not have a parametrization on bias"):
        P.remove_parametrizations(m, "bias")
    with pytest.raises(ValueError, match="requires one or more modules"):
        P.ParametrizationList([], T.zeros(2))


def test_buffer_parametrization_and_training_flag():
    m = nn.BatchNorm1d(3)
    m.eval()
    P.register_parametrization(m, "running_var", scaled(nn)())
    assert "parametrizations.running_var.original" in m.state_dict()
    assert m.parametrizations.running_var[0].training is False  # follows the module's mode
    close(m.parametrizations.running_var.original, 0.5 * np.ones(3), 1e-7)  # right_inverse
    close(m.running_var, np.ones(3), 1e-7)
    assert m(T.ones(2, 3)).shape == (2, 3)


def test_deepcopy_and_pickle(torch):
    m = factory_chain(nn)
    clone = copy.deepcopy(m)
    assert type(clone).__name__ == "ParametrizedLinear"
    close(clone.weight, m.weight, 0)
    assert clone.parametrizations.weight.original is not m.parametrizations.weight.original
    with pytest.raises(RuntimeError, match="only supported through state_dict"):
        pickle.dumps(m)


def test_load_state_dict_from_torch(torch):
    theirs = factory_chain(torch.nn)
    ours = factory_chain(nn)
    ours.load_state_dict({k: to_rg(v) for k, v in theirs.state_dict().items()})
    close(ours.weight, theirs.weight, 1e-6)


def test_transfer_parametrizations_and_params():
    a = factory_chain(nn)
    b = nn.Linear(3, 3)
    P.transfer_parametrizations_and_params(a, b)
    assert b.parametrizations.weight.original is a.parametrizations.weight.original
    close(b.weight, a.weight, 0)
