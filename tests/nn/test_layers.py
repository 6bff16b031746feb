"""Every layer against PyTorch with the same weights (outputs, input and parameter grads,
float32 and float64), and float64 gradcheck/gradgradcheck through the module."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as T
from retrograd import nn
from retrograd.autograd import gradcheck, gradgradcheck

from .helpers import compare_module

RNG = np.random.default_rng(7)


def real(*shape):
    return RNG.standard_normal(shape)


def prob(*shape):
    return RNG.uniform(0.1, 0.9, shape)


def labels(n, c):
    return RNG.integers(0, c, n).astype(np.int64)


# (name, factory(nn) -> module, inputs); the factory runs once with retrograd.nn and once
# with torch.nn, so both get the same constructor call
LAYERS = [
    ("Linear", lambda nn: nn.Linear(4, 3), [real(5, 4)]),
    ("Linear-nobias", lambda nn: nn.Linear(4, 3, bias=False), [real(2, 5, 4)]),
    ("Linear-1d", lambda nn: nn.Linear(4, 2), [real(4)]),
    ("Bilinear", lambda nn: nn.Bilinear(3, 2, 4), [real(5, 3), real(5, 2)]),
    ("Bilinear-nobias", lambda nn: nn.Bilinear(3, 2, 2, bias=False), [real(2, 3), real(2, 2)]),
    ("Identity", lambda nn: nn.Identity(3, k=1), [real(2, 3)]),
    ("Flatten", lambda nn: nn.Flatten(), [real(2, 3, 4)]),
    ("Flatten-0", lambda nn: nn.Flatten(0, 1), [real(2, 3, 4)]),
    ("Unflatten", lambda nn: nn.Unflatten(1, (2, 3)), [real(4, 6)]),
    ("ReLU", lambda nn: nn.ReLU(), [real(3, 4)]),
    ("ReLU6", lambda nn: nn.ReLU6(), [real(3, 4) * 4]),
    ("ELU", lambda nn: nn.ELU(alpha=0.7), [real(3, 4)]),
    ("GELU", lambda nn: nn.GELU(), [real(3, 4)]),
    ("GELU-tanh", lambda nn: nn.GELU(approximate="tanh"), [real(3, 4)]),
    ("LeakyReLU", lambda nn: nn.LeakyReLU(0.2), [real(3, 4)]),
    ("Hardtanh", lambda nn: nn.Hardtanh(-0.5, 0.7), [real(3, 4)]),
    ("Sigmoid", lambda nn: nn.Sigmoid(), [real(3, 4)]),
    ("Tanh", lambda nn: nn.Tanh(), [real(3, 4)]),
    ("SiLU", lambda nn: nn.SiLU(), [real(3, 4)]),
    ("Softplus", lambda nn: nn.Softplus(beta=2.0, threshold=1.5), [real(3, 4)]),
    ("LogSigmoid", lambda nn: nn.LogSigmoid(), [real(3, 4)]),
    ("Softmax", lambda nn: nn.Softmax(dim=1), [real(3, 4)]),
    ("LogSoftmax", lambda nn: nn.LogSoftmax(dim=0), [real(3, 4)]),
    ("Dropout-eval", lambda nn: nn.Dropout(0.3).eval(), [real(3, 4)]),
    ("Dropout-p0", lambda nn: nn.Dropout(0.0), [real(3, 4)]),
    ("Sequential", lambda nn: nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 2)),
     [real(3, 4)]),
    ("CrossEntropyLoss", lambda nn: nn.CrossEntropyLoss(), [real(5, 4), labels(5, 4)]),
    ("CrossEntropyLoss-sum", lambda nn: nn.CrossEntropyLoss(reduction="sum"),
     [real(5, 4), labels(5, 4)]),
    ("CrossEntropyLoss-ignore", lambda nn: nn.CrossEntropyLoss(ignore_index=1,
                                                               reduction="none"),
     [real(6, 3), np.array([0, 1, 2, 1, 0, 2])]),
    ("CrossEntropyLoss-probs", lambda nn: nn.CrossEntropyLoss(), [real(3, 4),
                                                                 np.full((3, 4), 0.25)]),
    ("NLLLoss", lambda nn: nn.NLLLoss(), [real(5, 4), labels(5, 4)]),
    ("MSELoss", lambda nn: nn.MSELoss(), [real(3, 4), real(3, 4)]),
    ("MSELoss-sum", lambda nn: nn.MSELoss(reduction="sum"), [real(3, 4), real(3, 4)]),
    ("L1Loss", lambda nn: nn.L1Loss(reduction="none"), [real(3, 4), real(3, 4)]),
    ("BCELoss", lambda nn: nn.BCELoss(), [prob(3, 4), prob(3, 4)]),
    ("BCEWithLogitsLoss", lambda nn: nn.BCEWithLogitsLoss(), [real(3, 4), prob(3, 4)]),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, factory, inputs", LAYERS, ids=[c[0] for c in LAYERS])
def test_layer_matches_torch(torch, name, factory, inputs, dtype):
    compare_module(torch, factory(nn), factory(torch.nn), inputs, dtype=dtype)


@pytest.mark.parametrize("name, factory, inputs", LAYERS, ids=[c[0] for c in LAYERS])
def test_layer_gradcheck(name, factory, inputs):
    module = factory(nn).double()
    xs = [T.tensor(x, requires_grad=x.dtype.kind == "f") for x in inputs]
    if "probs" in name:
        xs[1].requires_grad_(False)  # PyTorch: no derivative for soft targets in its kernel
    params = [p for p in module.parameters()]
    leaves = [x for x in xs if x.requires_grad] + params

    def f(*_):  # the leaves are perturbed in place; the module reads them directly
        return module(*xs)

    assert gradcheck(f, leaves)
    assert gradgradcheck(f, leaves)


@pytest.mark.parametrize("name, factory, inputs", LAYERS, ids=[c[0] for c in LAYERS])
def test_layer_repr_matches_torch(torch, name, factory, inputs):
    assert repr(factory(nn)) == repr(factory(torch.nn))


def test_bilinear_batched_leading_dims(torch):
    compare_module(torch, nn.Bilinear(2, 3, 2), torch.nn.Bilinear(2, 3, 2),
                   [real(2, 3, 2), real(2, 3, 3)])


def test_bilinear_refuses_mismatched_batches():
    with pytest.raises(RuntimeError, match="batch dimensions"):
        nn.Bilinear(2, 3, 2)(T.zeros(4, 2), T.zeros(5, 3))
    with pytest.raises(RuntimeError, match="weight of shape"):
        nn.Bilinear(2, 3, 2)(T.zeros(4, 3), T.zeros(4, 3))


def test_dropout_training_zeroes_and_scales():
    T.manual_seed(0)
    x = T.ones(2000)
    y = nn.Dropout(0.25)(x)
    values = set(np.unique(y.numpy()).tolist())
    assert values <= {0.0, float(np.float32(1 / 0.75))}
    assert abs((y.numpy() == 0).mean() - 0.25) < 0.05
    assert np.array_equal(nn.Dropout(0.25).eval()(x).numpy(), x.numpy())


def test_dropout_refuses_bad_probability(torch):
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError, match="between 0 and 1") as ours:
            nn.Dropout(p)
        with pytest.raises(ValueError) as theirs:
            torch.nn.Dropout(p)
        assert str(ours.value) == str(theirs.value)


def test_weighted_losses_keep_weight_as_buffer(torch):
    w = np.array([0.2, 1.0, 3.0])
    ours = nn.CrossEntropyLoss(weight=T.tensor(w))
    theirs = torch.nn.CrossEntropyLoss(weight=torch.tensor(w))
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
    compare_module(torch, ours, theirs, [real(4, 3), labels(4, 3)], dtype="float64")
    compare_module(torch, nn.BCEWithLogitsLoss(weight=T.tensor([2.0, 0.5])),
                   torch.nn.BCEWithLogitsLoss(weight=torch.tensor([2.0, 0.5])),
                   [real(3, 2), prob(3, 2)], dtype="float64")
    compare_module(torch, nn.BCELoss(weight=T.tensor([2.0, 0.5])),
                   torch.nn.BCELoss(weight=torch.tensor([2.0, 0.5])),
                   [prob(3, 2), prob(3, 2)], dtype="float64")
    # the module holds pos_weight as a buffer, as PyTorch
    pos = nn.BCEWithLogitsLoss(pos_weight=T.tensor([2.0, 0.5]))
    assert list(pos.state_dict()) == list(torch.nn.BCEWithLogitsLoss(
        pos_weight=torch.tensor([2.0, 0.5])).state_dict()) == ["pos_weight"]
    compare_module(torch, pos, torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0, 0.5])),
                   [real(3, 2), prob(3, 2)], dtype="float64")
    compare_module(torch, nn.CrossEntropyLoss(weight=T.tensor(w), label_smoothing=0.1),
                   torch.nn.CrossEntropyLoss(weight=torch.tensor(w), label_smoothing=0.1),
                   [real(4, 3), labels(4, 3)], dtype="float64")


def test_legacy_reduction_flags(torch):
    with pytest.warns(UserWarning, match="reduction='sum'"):
        loss = nn.MSELoss(size_average=False)
    with pytest.warns(UserWarning):
        assert loss.reduction == "sum" == torch.nn.MSELoss(size_average=False).reduction
    with pytest.warns(UserWarning, match="reduction='none'"):
        assert nn.L1Loss(reduce=False).reduction == "none"


def test_hardtanh_refuses_empty_range():
    with pytest.raises(AssertionError, match="max_val"):
        nn.Hardtanh(1.0, 0.0)


def test_unflatten_argument_errors(torch):
    for args, kind in (((1, 4), TypeError), ((1, (2, 2.5)), TypeError)):
        with pytest.raises(kind) as ours:
            nn.Unflatten(*args)
        with pytest.raises(kind) as theirs:
            torch.nn.Unflatten(*args)
        assert str(ours.value) == str(theirs.value)


def test_lazy_linear_infers_in_features(torch):
    T.manual_seed(0)
    m = nn.LazyLinear(3)
    assert repr(m) == repr(torch.nn.LazyLinear(3))
    assert isinstance(m.weight, nn.UninitializedParameter)
    assert repr(m.weight) == "<UninitializedParameter>"
    with pytest.raises(RuntimeError, match="uninitialized parameter"):
        _ = m.weight.shape
    y = m(T.randn(2, 5))
    assert type(m) is nn.Linear and y.shape == (2, 3)
    assert m.in_features == 5 and m.weight.shape == (3, 5)
    assert type(m.weight) is nn.Parameter
    bound = 1 / np.sqrt(5)
    assert np.abs(m.weight.detach().numpy()).max() <= bound
    assert repr(m) == "Linear(in_features=5, out_features=3, bias=True)"


def test_lazy_linear_loads_a_state_dict():
    src = nn.Linear(4, 2)
    m = nn.LazyLinear(2)
    m.load_state_dict(src.state_dict())
    x = T.randn(3, 4)
    np.testing.assert_array_equal(m(x).detach().numpy(), src(x).detach().numpy())
    assert type(m) is nn.Linear and m.in_features == 4


def test_linear_keeps_float32_and_dtype_argument():
    assert nn.Linear(2, 3).weight.dtype == T.float32
    m = nn.Linear(2, 3, dtype=T.float64)
    assert m.weight.dtype == T.float64 and m.bias.dtype == T.float64
    assert m(T.zeros(1, 2, dtype=T.float64)).dtype == T.float64


@pytest.mark.parametrize("factory", [
    lambda nn: nn.ReLU(True), lambda nn: nn.ReLU6(inplace=True),
    lambda nn: nn.ELU(0.5, inplace=True), lambda nn: nn.LeakyReLU(0.1, True),
    lambda nn: nn.Hardtanh(-0.5, 0.5, True), lambda nn: nn.SiLU(inplace=True),
], ids=["ReLU", "ReLU6", "ELU", "LeakyReLU", "Hardtanh", "SiLU"])
def test_inplace_activations_match_torch(torch, factory):
    x0 = real(3, 4) * 2
    results = []
    for m, mnn in ((T, nn), (torch, torch.nn)):
        x = m.tensor(x0, requires_grad=True)
        h = x * 1.5
        y = factory(mnn)(h)
        assert y is h  # modified in place and returned, as PyTorch
        (y * m.tensor(x0)).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy(), y.grad_fn.name()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)
    assert results[0][2] == results[1][2]
