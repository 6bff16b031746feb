"""Every optimizer and its options: the parameter trajectory equals PyTorch's, and a run
resumed from a state dict continues exactly as the unbroken run."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import retrograd as T

from .trajectory import run_both, run_resumed

CONFIGS = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "maximize": True}),
    ("Adam", {}),
    ("Adam", {"lr": 0.05, "amsgrad": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.05, "maximize": True, "decoupled_weight_decay": True,
              "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"amsgrad": True, "maximize": True, "betas": (0.8, 0.99)}),
    ("Adamax", {"lr": 0.05, "weight_decay": 0.1}),
    ("Adamax", {"maximize": True, "betas": (0.5, 0.9)}),
    ("NAdam", {"lr": 0.05}),
    ("NAdam", {"weight_decay": 0.1, "momentum_decay": 0.01}),
    ("NAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("RAdam", {"lr": 0.05}),  # 8 steps: rho_t passes 5, both branches run
    ("RAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True, "betas": (0.9, 0.9)}),
    ("RAdam", {"weight_decay": 0.1, "maximize": True}),
    ("RMSprop", {}),
    ("RMSprop", {"centered": True, "momentum": 0.5, "weight_decay": 0.1}),
    ("RMSprop", {"alpha": 0.9, "maximize": True, "momentum": 0.3}),
    ("Adagrad", {}),
    ("Adagrad", {"lr_decay": 0.1, "initial_accumulator_value": 0.5, "weight_decay": 0.1}),
    ("Adagrad", {"maximize": True, "eps": 1e-3}),
    ("Adadelta", {}),
    ("Adadelta", {"rho": 0.8, "weight_decay": 0.1, "maximize": True, "lr": 0.5}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.3, "etas": (0.3, 1.5), "step_sizes": (0.01, 0.5), "maximize": True}),
    ("ASGD", {"lr": 0.1}),
    ("ASGD", {"lr": 0.1, "t0": 3, "lambd": 0.01, "alpha": 0.5, "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.05, "t0": 2, "maximize": True}),
    ("Adafactor", {}),
    ("Adafactor", {"lr": 0.5, "weight_decay": 0.1, "d": 1.5, "eps": (1e-4, 1e-2)}),
    ("Adafactor", {"beta2_decay": -0.5, "maximize": True}),
]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in opts.items()) or 'defaults'}"
       for name, opts in CONFIGS]

# PyTorch's vector kernels fuse some multiply-adds (lerp_, add_ with alpha), NumPy cannot:
# the last bits may differ, nothing more
TOLERANCE = {np.float64: {"rtol": 1e-12, "atol": 1e-14},
             np.float32: {"rtol": 2e-5, "atol": 2e-6}}


def assert_same_trajectory(ours, theirs, dtype):
    for k, (a_step, b_step) in enumerate(zip(ours, theirs)):
        for i, (a, b) in enumerate(zip(a_step, b_step)):
            assert a.dtype == b.dtype == dtype, (k, i, a.dtype, b.dtype)
            np.testing.assert_allclose(a, b, **TOLERANCE[dtype],
                                       err_msg=f"step {k + 1}, parameter {i}")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name,options", CONFIGS, ids=IDS)
def test_trajectory_matches_torch(name, options, dtype):
    ours, theirs, opt, topt = run_both(name, options, dtype)
    assert_same_trajectory(ours, theirs, dtype)
    # the state: same keys, same dtypes, same values (step counts included)
    for p, q in zip(opt.param_groups[0]["params"], topt.param_groups[0]["params"]):
        mine, ref = opt.state[p], topt.state[q]
        assert sorted(mine) == sorted(ref)
        for key, value in ref.items():
            assert isinstance(mine[key], T.Tensor), key
            assert mine[key].dtype.numpy == np.dtype(str(value.dtype).split(".")[1]), key
            np.testing.assert_allclose(mine[key].numpy(), value.numpy(), **TOLERANCE[dtype])


@pytest.mark.parametrize("name,options", CONFIGS, ids=IDS)
def test_resumed_run_continues_exactly(name, options):
    resumed, unbroken = run_resumed(name, options, np.float64)
    for a_step, b_step in zip(resumed, unbroken):
        for a, b in zip(a_step, b_step):
            np.testing.assert_array_equal(a, b)


def test_param_groups_with_their_own_options():
    groups = [([0], {"lr": 0.01}), ([1, 2], {"lr": 0.2, "momentum": 0.5})]
    ours, theirs, opt, topt = run_both("SGD", {"lr": 0.1}, np.float64, groups=groups)
    assert_same_trajectory(ours, theirs, np.float64)
    assert opt.param_groups[1]["momentum"] == 0.5 and opt.param_groups[0]["momentum"] == 0
    resumed, unbroken = run_resumed("Adam", {"lr": 0.1}, np.float64,
                                    groups=[([2, 0], {"lr": 0.01}), ([1], {})])
    for a_step, b_step in zip(resumed, unbroken):
        for a, b in zip(a_step, b_step):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad"])
def test_parameters_without_grad_are_skipped(name):
    options = {"lr": 0.1, "momentum": 0.9} if name == "SGD" else {}
    ours, theirs, opt, topt = run_both(name, options, np.float64, steps=3, skip=(1,))
    assert_same_trajectory(ours, theirs, np.float64)
    skipped = opt.param_groups[0]["params"][1]
    if name == "Adagrad":  # Adagrad's state exists from construction on
        assert float(opt.state[skipped]["step"]) == 0
    else:
        assert skipped not in opt.state


def test_state_dict_structure_matches_torch():
    ours, theirs, opt, topt = run_both("Adam", {"lr": 0.05, "amsgrad": True}, np.float32,
                                       steps=2, groups=[([0, 2], {}), ([1], {"lr": 0.5})])
    mine, ref = opt.state_dict(), topt.state_dict()
    assert mine["param_groups"] == ref["param_groups"]
    assert sorted(mine["state"]) == sorted(ref["state"]) == [0, 1, 2]
    for idx, st in ref["state"].items():
        assert sorted(mine["state"][idx]) == sorted(st)
        assert mine["state"][idx]["step"].dtype == T.float32
        assert float(mine["state"][idx]["step"]) == float(st["step"]) == 2.0


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam",
                                  "RMSprop", "Adagrad", "Adadelta", "LBFGS", "Rprop", "ASGD"])
def test_defaults_match_torch(name):
    p = [T.zeros(2, requires_grad=True)]
    q = [torch.zeros(2, requires_grad=True)]
    kw = {"lr": 0.1} if name == "SGD" else {}
    assert getattr(T.optim, name)(p, **kw).defaults == getattr(torch.optim, name)(q, **kw).defaults


def _mlp_run(lib, name, options, steps=5):
    rng = np.random.default_rng(7)
    x = lib.tensor(rng.standard_normal((8, 3)))
    y = lib.tensor(rng.standard_normal((8, 2)))
    params = [lib.tensor(rng.standard_normal(s) * 0.5, requires_grad=True)
              for s in [(3, 5), (5,), (5, 2), (2,)]]
    opt = getattr(lib.optim, name)(params, **options)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        hidden = (x @ params[0] + params[1]).tanh()
        loss = ((hidden @ params[2] + params[3] - y) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().numpy() for p in params]


@pytest.mark.parametrize("name,options", [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    ("Adam", {"lr": 0.05}), ("AdamW", {"lr": 0.05, "amsgrad": True}),
    ("RMSprop", {"lr": 0.01, "centered": True}), ("NAdam", {"lr": 0.05}),
])
def test_training_a_small_mlp_matches_torch(name, options):
    # gradients from each library's own autograd: equal to rounding, so a looser tolerance
    ours, our_params = _mlp_run(T, name, options)
    theirs, their_params = _mlp_run(torch, name, options)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10)
    for a, b in zip(our_params, their_params):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    assert ours[-1] < ours[0]


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam",
                                  "RMSprop", "Adagrad", "Adadelta", "Rprop", "ASGD"])
def test_scalar_empty_and_strided_parameters(name):
    options = {"lr": 0.1, "momentum": 0.5, "nesterov": True} if name == "SGD" else {}
    scalar = T.tensor(1.5, dtype=T.float64, requires_grad=True)
    empty = T.zeros(0, 3, dtype=T.float64, requires_grad=True)
    strided = T.tensor(np.arange(6.0).reshape(2, 3)).t().detach().requires_grad_()
    ref_scalar = torch.tensor(1.5, dtype=torch.float64, requires_grad=True)
    ref_strided = torch.tensor(np.arange(6.0).reshape(2, 3)).t().detach().requires_grad_()
    opt = getattr(T.optim, name)([scalar, empty, strided], **options)
    topt = getattr(torch.optim, name)([ref_scalar, ref_strided], **options)
    for _ in range(3):
        scalar.grad, ref_scalar.grad = scalar.detach() * 2, ref_scalar.detach() * 2
        strided.grad, ref_strided.grad = strided.detach() - 1, ref_strided.detach() - 1
        empty.grad = T.zeros(0, 3, dtype=T.float64)
        opt.step()
        topt.step()
    np.testing.assert_allclose(scalar.item(), ref_scalar.item(), rtol=1e-12)
    np.testing.assert_allclose(strided.detach().numpy(), ref_strided.detach().numpy(),
                               rtol=1e-12)
    assert scalar.shape == () and empty.shape == (0, 3) and strided.shape == (3, 2)
