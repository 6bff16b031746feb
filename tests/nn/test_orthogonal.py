"""nn.utils.parametrizations.orthogonal against PyTorch: every map, with and without the
trivialization, on square, tall, wide and batched weights; values, gradients and the weights
over a few optimizer steps (torch's state copied in, the base buffer included), assignment
through right_inverse, float64 gradcheck/gradgradcheck of the maps, repr and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as T
from retrograd import nn
from retrograd.autograd.gradcheck import gradcheck, gradgradcheck
from retrograd.nn.utils.parametrizations import orthogonal

from .helpers import close, copy_weights, to_rg, to_torch

MAPS = ["matrix_exp", "cayley", "householder"]
SHAPES = [(3, 3), (4, 2), (2, 4)]  # (in_features, out_features) -> weight (out, in)


def _pair(torch, in_f, out_f, orthogonal_map, use_trivialization, dtype="float64"):
    """A Linear with the parametrization in retrograd and in PyTorch, PyTorch's state (the
    original, the base and the bias) copied into ours."""
    theirs = torch.nn.Linear(in_f, out_f).to(getattr(torch, dtype))
    torch.nn.utils.parametrizations.orthogonal(theirs, "weight", orthogonal_map,
                                               use_trivialization=use_trivialization)
    ours = nn.Linear(in_f, out_f).to(getattr(T, dtype))
    orthogonal(ours, "weight", orthogonal_map, use_trivialization=use_trivialization)
    copy_weights(ours, theirs)
    return ours, theirs


@pytest.mark.parametrize("use_trivialization", [True, False])
@pytest.mark.parametrize("orthogonal_map", MAPS)
@pytest.mark.parametrize("in_f,out_f", SHAPES)
def test_training_steps_match_torch(torch, in_f, out_f, orthogonal_map, use_trivialization):
    ours, theirs = _pair(torch, in_f, out_f, orthogonal_map, use_trivialization)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    opt_ours = T.optim.SGD(ours.parameters(), lr=0.1, momentum=0.9)
    opt_theirs = torch.optim.SGD(theirs.parameters(), lr=0.1, momentum=0.9)
    x = np.random.default_rng(0).standard_normal((5, in_f))
    target = np.random.default_rng(1).standard_normal((5, out_f))
    for _ in range(3):
        losses = []
        for module, lib, opt in ((ours, T, opt_ours), (theirs, torch, opt_theirs)):
            opt.zero_grad()
            out = module(lib.tensor(x))
            loss = ((out - lib.tensor(target)) ** 2).sum()
            loss.backward()
            opt.step()
            losses.append(loss)
        close(losses[0], losses[1], 1e-10)
        theirs_params = dict(theirs.named_parameters())
        for name, p in ours.named_parameters():
            close(p, theirs_params[name], 1e-10)
            close(p.grad, theirs_params[name].grad, 1e-10)
        close(ours.weight, theirs.weight, 1e-10)
    q = ours.weight.detach()
    gram = q.T @ q if out_f >= in_f else q @ q.T
    close(gram, T.eye(min(in_f, out_f), dtype=T.float64), 1e-10)


@pytest.mark.parametrize("orthogonal_map", MAPS)
def test_float32_weight_matches_torch(torch, orthogonal_map):
    ours, theirs = _pair(torch, 3, 3, orthogonal_map, True, dtype="float32")
    assert ours.weight.dtype == T.float32
    close(ours.weight, theirs.weight, 1e-5)
    x = np.random.default_rng(2).standard_normal((2, 3)).astype("float32")
    ours(T.tensor(x)).sum().backward()
    theirs(torch.tensor(x)).sum().backward()
    close(ours.parametrizations.weight.original.grad,
          theirs.parametrizations.weight.original.grad, 1e-5)


def test_batched_weight_matches_torch(torch):
    """A (2, 4, 3) buffer is a batch of tall matrices, each orthogonalised."""
    w = np.random.default_rng(3).standard_normal((2, 4, 3))
    for orthogonal_map in MAPS:
        ours, theirs = nn.Module(), torch.nn.Module()
        ours.weight = nn.Parameter(T.tensor(w))
        theirs.weight = torch.nn.Parameter(torch.tensor(w))
        orthogonal(ours, orthogonal_map=orthogonal_map)
        torch.nn.utils.parametrizations.orthogonal(theirs, orthogonal_map=orthogonal_map)
        copy_weights(ours, theirs)
        close(ours.weight, theirs.weight, 1e-10)
        g = np.random.default_rng(4).standard_normal((2, 4, 3))
        ours.weight.backward(T.tensor(g))
        theirs.weight.backward(torch.tensor(g))
        close(ours.parametrizations.weight.original.grad,
              theirs.parametrizations.weight.original.grad, 1e-10)


@pytest.mark.parametrize("orthogonal_map", MAPS)
def test_initial_value_is_the_qr_of_the_weight(torch, orthogonal_map):
    """Registering on a square weight keeps its Q factor (diag(R) >= 0): deterministic, so
    no state is copied, and equal to PyTorch's."""
    w = np.random.default_rng(5).standard_normal((3, 3))
    ours, theirs = nn.Linear(3, 3).double(), torch.nn.Linear(3, 3).double()
    with T.no_grad():
        ours.weight.copy_(T.tensor(w))
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(w))
    orthogonal(ours, orthogonal_map=orthogonal_map)
    torch.nn.utils.parametrizations.orthogonal(theirs, orthogonal_map=orthogonal_map)
    close(ours.weight, theirs.weight, 1e-10)
    for name, value in theirs.state_dict().items():
        if name.startswith("parametrizations."):  # the biases were drawn independently
            close(ours.state_dict()[name], value, 1e-10)


@pytest.mark.parametrize("use_trivialization", [True, False])
def test_assignment_runs_right_inverse_as_torch(torch, use_trivialization):
    """``module.weight = Q`` (square: no random completion) leaves the same originals,
    base and weight as PyTorch; an orthogonal Q is kept as it is."""
    orthogonal_map = "householder"
    ours, theirs = _pair(torch, 3, 3, orthogonal_map, use_trivialization)
    for seed in (6, 7):
        q = np.random.default_rng(seed).standard_normal((3, 3))
        if seed == 7:
            q = np.linalg.qr(q)[0]
        ours.weight = T.tensor(q)
        theirs.weight = torch.tensor(q)
        for name, value in theirs.state_dict().items():
            close(ours.state_dict()[name], value, 1e-10)
        close(ours.weight, theirs.weight, 1e-10)


@pytest.mark.parametrize("orthogonal_map", MAPS)
def test_wide_assignment_keeps_the_assigned_rows(orthogonal_map):
    """A wide orthogonal Q is completed with random rows, yet the weight is Q itself."""
    ours = orthogonal(nn.Linear(4, 2).double(), orthogonal_map=orthogonal_map)
    q = T.tensor(np.linalg.qr(np.random.default_rng(8).standard_normal((4, 2)))[0].T)
    ours.weight = q
    close(ours.weight, q, 1e-10)


@pytest.mark.parametrize("orthogonal_map", MAPS)
@pytest.mark.parametrize("use_trivialization", [True, False])
def test_maps_gradcheck_and_gradgradcheck(orthogonal_map, use_trivialization):
    m = orthogonal(nn.Linear(2, 3).double(), orthogonal_map=orthogonal_map,
                   use_trivialization=use_trivialization)
    orth = m.parametrizations.weight[0]
    x = T.tensor(np.random.default_rng(9).standard_normal((3, 2)))
    # the Householder map reads the diagonal's signs through an int cast: keep it away
    # from the integers so finite differences do not cross one
    x = (x + T.tensor([[1.5, 0.0], [0.0, -1.5], [0.0, 0.0]])).requires_grad_(True)
    gradcheck(orth, (x,))
    gradgradcheck(orth, (x,))


def test_repr_matches_torch(torch):
    ours = orthogonal(nn.Linear(2, 3))
    theirs = torch.nn.utils.parametrizations.orthogonal(torch.nn.Linear(2, 3))
    assert repr(ours) == repr(theirs)


def test_default_map_follows_torch(torch):
    for in_f, out_f in SHAPES:
        ours = orthogonal(nn.Linear(in_f, out_f)).parametrizations.weight[0]
        theirs = torch.nn.utils.parametrizations.orthogonal(
            torch.nn.Linear(in_f, out_f)).parametrizations.weight[0]
        assert ours.orthogonal_map.name == theirs.orthogonal_map.name


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return info.type, str(info.value)


# (retrograd has no complex dtype, so PyTorch's complex-Householder error cannot arise)
@pytest.mark.parametrize("case", ["vector", "bad_map", "no_such_name",
                                  "assign_exp_no_trivialization", "assign_wrong_shape"])
def test_errors_match_torch(torch, case):
    def run(lib):
        orth = lib.nn.utils.parametrizations.orthogonal
        if case == "vector":
            m = lib.nn.Module()
            m.weight = lib.nn.Parameter(lib.ones(3))
            orth(m)
        elif case == "bad_map":
            orth(lib.nn.Linear(2, 2), orthogonal_map="qr")
        elif case == "no_such_name":
            orth(lib.nn.Linear(2, 2), name="kernel")
        elif case == "assign_exp_no_trivialization":
            m = orth(lib.nn.Linear(2, 2), use_trivialization=False)
            m.weight = lib.eye(2)
        else:
            m = orth(lib.nn.Linear(2, 2))
            m.weight = lib.eye(3)

    ours, theirs = _error(lambda: run(T)), _error(lambda: run(torch))
    assert ours[0] is not None and ours[0].__name__ == theirs[0].__name__
    assert ours[1] == theirs[1].replace("torch.Size", "retrograd.Size")


def test_state_dict_round_trip_through_torch(torch):
    """Our state_dict, loaded into PyTorch's module, gives PyTorch our weight."""
    ours = orthogonal(nn.Linear(3, 5).double())
    theirs = torch.nn.utils.parametrizations.orthogonal(torch.nn.Linear(3, 5).double())
    theirs.load_state_dict({k: to_torch(torch, v) for k, v in ours.state_dict().items()})
    close(to_rg(theirs.weight), ours.weight, 1e-10)
