"""weight_norm and spectral_norm, as parametrizations and in the legacy hook form, against
PyTorch with the same weights and the same power-iteration vectors copied in: outputs,
input and parameter gradients, the u/v buffers over training steps, eval mode, removal,
state_dict keys, and the errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as T
from retrograd import nn
from retrograd.autograd.gradcheck import gradcheck, gradgradcheck
from retrograd.nn.utils import parametrizations, parametrize

from .helpers import check_layer, close, copy_weights, to_rg

X3 = np.random.default_rng(1).standard_normal((4, 3))
XC = np.random.default_rng(2).standard_normal((2, 2, 5))


def legacy(fn):
    """Call a deprecated PyTorch/retrograd helper without its FutureWarning."""
    def call(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            return fn(*args, **kwargs)
    return call


WEIGHT_NORM = [
    ("linear_dim0", lambda nn_: nn_.utils.parametrizations.weight_norm(nn_.Linear(3, 4)), X3),
    ("linear_dim1", lambda nn_: nn_.utils.parametrizations.weight_norm(nn_.Linear(3, 4), dim=1),
     X3),
    ("linear_none",
     lambda nn_: nn_.utils.parametrizations.weight_norm(nn_.Linear(3, 4), dim=None), X3),
    ("conv_dim0", lambda nn_: nn_.utils.parametrizations.weight_norm(nn_.Conv1d(2, 3, 2)), XC),
    ("conv_dim_neg2",
     lambda nn_: nn_.utils.parametrizations.weight_norm(nn_.Conv1d(2, 3, 2), dim=-2), XC),
    ("legacy_linear", lambda nn_: legacy(nn_.utils.weight_norm)(nn_.Linear(3, 4)), X3),
    ("legacy_conv_dim1", lambda nn_: legacy(nn_.utils.weight_norm)(nn_.Conv1d(2, 3, 2), dim=1),
     XC),
    ("legacy_none",
     lambda nn_: legacy(nn_.utils.weight_norm)(nn_.Linear(3, 4), name="weight", dim=None), X3),
]


@pytest.mark.parametrize("name,factory,x", WEIGHT_NORM, ids=[r[0] for r in WEIGHT_NORM])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_weight_norm_matches_torch(torch, name, factory, x, dtype):
    check_layer(torch, factory, [x], dtype=dtype)


def test_weight_norm_values_of_g_and_v(torch):
    """g is the per-row norm of the initial weight, v the weight: same as PyTorch's."""
    theirs = torch.nn.Linear(3, 4)
    ours = nn.Linear(3, 4)
    copy_weights(ours, theirs)
    parametrizations.weight_norm(ours)
    torch.nn.utils.parametrizations.weight_norm(theirs)
    for k in ("original0", "original1"):
        close(getattr(ours.parametrizations.weight, k),
              getattr(theirs.parametrizations.weight, k), 1e-6)
    close(ours.weight, theirs.weight, 1e-6)


def test_weight_norm_double_backward():
    v = T.randn(3, 2, dtype=T.float64, requires_grad=True)
    g = T.randn(3, 1, dtype=T.float64, requires_grad=True)
    m = parametrizations._WeightNorm(0)
    assert gradcheck(m, (g, v)) and gradgradcheck(m, (g, v))


def test_weight_norm_loads_legacy_checkpoint(torch):
    old = legacy(torch.nn.utils.weight_norm)(torch.nn.Linear(3, 4))
    ours = parametrizations.weight_norm(nn.Linear(3, 4))
    result = ours.load_state_dict({k: to_rg(v) for k, v in old.state_dict().items()})
    assert not result.missing_keys and not result.unexpected_keys
    close(ours.weight, old.weight, 1e-6)


def test_legacy_weight_norm_remove_and_errors(torch):
    with pytest.warns(FutureWarning, match="parametrizations.weight_norm"):
        m = nn.utils.weight_norm(nn.Linear(3, 4))
    w = m.weight.detach().clone()
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
        legacy(nn.utils.weight_norm)(m)
    nn.utils.remove_weight_norm(m)
    assert list(m.state_dict()) == ["bias", "weight"] and isinstance(m.weight, nn.Parameter)
    close(m.weight, w, 1e-6)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        nn.utils.remove_weight_norm(m)


def sn_pair(torch, make, **kwargs):
    """The same module under PyTorch's and retrograd's spectral_norm (parametrization),
    with PyTorch's weights and u/v vectors copied in."""
    theirs = torch.nn.utils.parametrizations.spectral_norm(make(torch.nn).double(), **kwargs)
    ours = parametrizations.spectral_norm(make(nn).double(), **kwargs)
    copy_weights(ours, theirs)
    return ours, theirs


SPECTRAL = [
    ("linear", lambda nn_: nn_.Linear(3, 4), X3, {}),
    ("linear_iter3_eps", lambda nn_: nn_.Linear(3, 4), X3,
     {"n_power_iterations": 3, "eps": 1e-6}),
    ("linear_dim1", lambda nn_: nn_.Linear(3, 4), X3, {"dim": 1}),
    ("conv", lambda nn_: nn_.Conv1d(2, 3, 2), XC, {}),
    ("conv_transpose", lambda nn_: nn_.ConvTranspose1d(2, 3, 2), XC, {}),
]


@pytest.mark.parametrize("name,make,x,kwargs", SPECTRAL, ids=[r[0] for r in SPECTRAL])
def test_spectral_norm_training_steps_match_torch(torch, name, make, x, kwargs):
    ours, theirs = sn_pair(torch, make, **kwargs)
    for _ in range(3):  # each training forward advances u and v
        for p in list(ours.parameters()) + list(theirs.parameters()):
            p.grad = None
        xr, xt = T.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out_r, out_t = ours(xr), theirs(xt)
        close(out_r, out_t, 1e-10)
        out_r.sum().backward()
        out_t.sum().backward()
        close(xr.grad, xt.grad, 1e-10)
        for (k, p), (tk, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
            assert k == tk
            close(p.grad, tp.grad, 1e-10)
        for k in ("_u", "_v"):
            close(getattr(ours.parametrizations.weight[0], k),
                  getattr(theirs.parametrizations.weight[0], k), 1e-10)
    ours.eval()
    theirs.eval()
    u = ours.parametrizations.weight[0]._u.detach().clone()
    close(ours(T.tensor(x)), theirs(torch.tensor(x)), 1e-10)
    close(ours.parametrizations.weight[0]._u, u, 0)  # eval mode: no power iteration


def test_spectral_norm_structure_and_one_d(torch):
    ours = parametrizations.spectral_norm(nn.Linear(3, 4))
    theirs = torch.nn.utils.parametrizations.spectral_norm(torch.nn.Linear(3, 4))
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    # a 1-D weight is normalized (no power iteration, no buffers)
    b_ours = parametrizations.spectral_norm(nn.Linear(3, 4), name="bias")
    close(b_ours.bias.norm(), 1.0, 1e-6)
    assert "parametrizations.bias.0._u" not in b_ours.state_dict()
    # sigma of the result is about 1 after enough iterations: 15 at registration, one more
    # per training-mode forward (how fast they converge depends on the random weight's
    # singular-value gap, so run enough of them for any draw)
    for _ in range(200):
        ours(T.randn(2, 3))
    w = ours.weight.detach().numpy()
    assert abs(np.linalg.svd(w, compute_uv=False)[0] - 1) < 1e-3
    parametrize.remove_parametrizations(ours, "weight")
    assert list(ours.state_dict()) == ["bias", "weight"]


def test_spectral_norm_errors():
    with pytest.raises(ValueError, match="n_power_iterations to be positive"):
        parametrizations.spectral_norm(nn.Linear(3, 4), n_power_iterations=0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        parametrizations.spectral_norm(nn.Linear(3, 4), dim=2)
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'nope'"):
        parametrizations.spectral_norm(nn.Linear(3, 4), name="nope")


LEGACY_SPECTRAL = [
    ("linear", lambda nn_: nn_.Linear(3, 4), X3, {}),
    ("linear_iter2", lambda nn_: nn_.Linear(3, 4), X3, {"n_power_iterations": 2}),
    ("conv_transpose", lambda nn_: nn_.ConvTranspose1d(2, 3, 2), XC, {}),
]


@pytest.mark.parametrize("name,make,x,kwargs", LEGACY_SPECTRAL,
                         ids=[r[0] for r in LEGACY_SPECTRAL])
def test_legacy_spectral_norm_matches_torch(torch, name, make, x, kwargs):
    theirs = torch.nn.utils.spectral_norm(make(torch.nn).double(), **kwargs)
    ours = nn.utils.spectral_norm(make(nn).double(), **kwargs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours.state_dict()._metadata[""]["spectral_norm"] == {"weight.version": 1}
    copy_weights(ours, theirs)
    for _ in range(2):
        for p in list(ours.parameters()) + list(theirs.parameters()):
            p.grad = None
        out_r, out_t = ours(T.tensor(x)), theirs(torch.tensor(x))
        close(out_r, out_t, 1e-10)
        out_r.sum().backward()
        out_t.sum().backward()
        close(ours.weight_orig.grad, theirs.weight_orig.grad, 1e-10)
        close(ours.weight_u, theirs.weight_u, 1e-10)
        close(ours.weight_v, theirs.weight_v, 1e-10)
    ours.eval()
    theirs.eval()
    close(ours(T.tensor(x)), theirs(torch.tensor(x)), 1e-10)
    nn.utils.remove_spectral_norm(ours)
    torch.nn.utils.remove_spectral_norm(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    close(ours.weight, theirs.weight, 1e-10)
    assert "spectral_norm" not in ours.state_dict()._metadata[""]


def test_legacy_spectral_norm_errors():
    m = nn.utils.spectral_norm(nn.Linear(3, 4))
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        nn.utils.spectral_norm(m)
    with pytest.raises(ValueError, match="n_power_iterations to be positive"):
        nn.utils.spectral_norm(nn.Linear(3, 4), n_power_iterations=0)
    with pytest.raises(ValueError, match="spectral_norm of 'bias' not found"):
        nn.utils.remove_spectral_norm(m, "bias")
