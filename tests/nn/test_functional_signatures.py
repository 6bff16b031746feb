"""nn.functional keeps PyTorch's parameter names and order, so calls written for PyTorch
(keywords such as ``F.softmax(input=x, dim=1)``, positional legacy ``size_average`` /
``reduce``) run unchanged; the legacy and weighted loss forms give torch's values."""

import inspect
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import retrograd as T
import retrograd.nn.functional as F

# torch builds these with boolean_dispatch (*args, **kwargs) or as C builtins with extra
# internal parameters on our side; their own names are checked by the op tables
_EXEMPT = {"sigmoid", "tanh"}


def _names(fn):
    return [p.name for p in inspect.signature(fn).parameters.values()]


def test_every_python_level_signature_matches_torch():
    differing = []
    for name in sorted(n for n in dir(F) if not n.startswith("_") and hasattr(TF, n)):
        try:
            theirs = _names(getattr(TF, name))
        except (TypeError, ValueError):  # a C builtin without a signature
            continue
        if theirs == ["args", "kwargs"] or name in _EXEMPT:
            continue
        if _names(getattr(F, name)) != theirs:
            differing.append(name)
    assert differing == []


def _both(fn, x, t, *args, **kwargs):
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        a = getattr(F, fn)(T.tensor(x), T.tensor(t), *args, **kwargs)
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        b = getattr(TF, fn)(torch.tensor(x), torch.tensor(t), *args, **kwargs)
    np.testing.assert_allclose(a.detach().numpy(), b.numpy(), rtol=1e-12)
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]


@pytest.mark.parametrize("fn", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("legacy", [dict(size_average=False), dict(reduce=False),
                                    dict(size_average=True, reduce=True)])
def test_class_index_losses_take_legacy_flags(fn, legacy):
    rng = np.random.default_rng(0)
    x = rng.random((3, 4))
    if fn == "nll_loss":
        x = np.log(x)
    _both(fn, x, np.array([0, 2, 1]), **legacy)


def test_legacy_flags_positionally():
    rng = np.random.default_rng(1)
    p, t = rng.random((3, 4)), rng.random((3, 4))
    _both("binary_cross_entropy", p, t, None, False)  # weight, size_average
    _both("mse_loss", p, t, False)                    # size_average
    _both("l1_loss", p, t, None, False)               # size_average, reduce


@pytest.mark.parametrize("fn", ["l1_loss", "mse_loss"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_weighted_l1_and_mse(fn, reduction):
    rng = np.random.default_rng(2)
    x, t, w = rng.random((3, 4)), rng.random((3, 4)), rng.random((3, 4))
    xa, xb = T.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    a = getattr(F, fn)(xa, T.tensor(t), reduction=reduction, weight=T.tensor(w))
    b = getattr(TF, fn)(xb, torch.tensor(t), reduction=reduction, weight=torch.tensor(w))
    a.sum().backward()
    b.sum().backward()
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(xa.grad.numpy(), xb.grad.numpy(), rtol=1e-12)


def test_weight_of_another_size_raises_as_torch():
    x = np.ones((3, 4))
    with pytest.raises(ValueError, match="Weights and input must have the same size"):
        TF.mse_loss(torch.tensor(x), torch.tensor(x), weight=torch.ones(4))
    with pytest.raises(ValueError, match=r"Weights and input must have the same size.*\[4\]"):
        F.mse_loss(T.tensor(x), T.tensor(x), weight=T.ones(4))


def test_softmax_keywords_and_positional_dtype():
    x = np.random.default_rng(3).random((2, 3)).astype(np.float32)
    for name in ("softmax", "log_softmax"):
        ours = getattr(F, name)(input=T.tensor(x), dim=1, dtype=T.float64)
        theirs = getattr(TF, name)(input=torch.tensor(x), dim=1, dtype=torch.float64)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
        assert ours.dtype == T.float64
        # torch.softmax(x, dim, dtype) and x.softmax(dim, dtype): a dtype in the third slot
        assert getattr(T, name)(T.tensor(x), 1, T.float64).dtype == T.float64
        assert getattr(T.tensor(x), name)(1, T.float64).dtype == T.float64


@pytest.mark.parametrize("fn,kwargs", [
    ("mse_loss", dict(size_average=False)),
    ("l1_loss", dict(reduce=False)),
    ("mse_loss", dict(weight="w")),
    ("cross_entropy", dict(size_average=False)),
    ("nll_loss", dict(reduce=False)),
])
def test_vmap_of_the_legacy_and_weighted_forms(fn, kwargs):
    rng = np.random.default_rng(4)
    x, w = rng.random((5, 3, 4)), rng.random((3, 4))
    t = rng.integers(0, 4, (5, 3)) if fn in ("cross_entropy", "nll_loss") else rng.random((5, 3, 4))

    def run(lib, functional):
        kw = {k: (lib.tensor(w) if v == "w" else v) for k, v in kwargs.items()}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the deprecation warning, checked above
            loss = lib.vmap(lambda a, b: getattr(functional, fn)(a, b, **kw))
            return loss(lib.tensor(x), lib.tensor(t))

    np.testing.assert_allclose(run(T, F).numpy(), run(torch, TF).numpy(), rtol=1e-12)
