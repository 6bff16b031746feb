"""The Optimizer base: argument errors as PyTorch's, groups, zero_grad, hooks, closures,
versions of updated parameters, and state-dict loading rules."""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest
import torch

import retrograd as T


def leaf(values=(1.0, -2.0), dtype=T.float32):
    return T.tensor(list(values), dtype=dtype, requires_grad=True)


def torch_message(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


ERROR_CASES = [
    ("SGD", {"lr": -1.0}), ("SGD", {"lr": 0.1, "momentum": -0.5}),
    ("SGD", {"lr": 0.1, "weight_decay": -1}), ("SGD", {"lr": 0.1, "nesterov": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.1, "nesterov": True}),
    ("Adam", {"lr": -1e-3}), ("Adam", {"betas": (1.0, 0.999)}),
    ("Adam", {"betas": (0.9, -0.1)}), ("Adam", {"eps": -1.0}),
    ("Adam", {"weight_decay": -0.1}), ("Adam", {"betas": (0, 0.999)}),
    ("AdamW", {"betas": (0.9, 1.5)}), ("Adamax", {"betas": (-0.1, 0.9)}),
    ("NAdam", {"momentum_decay": -1.0}), ("RAdam", {"eps": -1.0}),
    ("RMSprop", {"alpha": -0.5}), ("RMSprop", {"momentum": -0.5}),
    ("Adagrad", {"lr_decay": -1.0}), ("Adagrad", {"initial_accumulator_value": -1.0}),
    ("Adadelta", {"rho": 1.5}), ("LBFGS", {"lr": -1.0}),
    ("Rprop", {"etas": (1.5, 2.0)}), ("Rprop", {"lr": -0.1}),
    ("ASGD", {"weight_decay": -1.0}),
    ("Adafactor", {"lr": -1.0}), ("Adafactor", {"beta2_decay": 0.5}),
    ("Adafactor", {"eps": (-1.0, 1e-3)}), ("Adafactor", {"eps": (None, -1.0)}),
    ("Adafactor", {"d": 0.5}), ("Adafactor", {"weight_decay": -0.1}),
]


@pytest.mark.parametrize("name,options", ERROR_CASES)
def test_invalid_options_raise_as_torch(name, options):
    expected = torch_message(lambda: getattr(torch.optim, name)(
        [torch.zeros(2, requires_grad=True)], **options))
    got = torch_message(lambda: getattr(T.optim, name)([leaf()], **options))
    assert got == expected


def test_param_list_errors_as_torch():
    x = leaf()
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        T.optim.SGD([x * 2], lr=0.1)
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        T.optim.Adam([])
    with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
        T.optim.Adam(x)
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors"):
        T.optim.Adam([x, 3.0])
    with pytest.raises(TypeError, match="ordering of tensors in sets"):
        T.optim.Adam([{"params": {x}}])
    with pytest.raises(ValueError, match="some parameters appear in more than one"):
        T.optim.SGD([{"params": [x]}, {"params": [x]}], lr=0.1)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        T.optim.SGD([x, x], lr=0.1)
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        T.optim.LBFGS([{"params": [x]}, {"params": [leaf()]}])


def test_add_param_group_and_named_params():
    a, b = leaf(), leaf()
    opt = T.optim.SGD([("a", a)], lr=0.1, momentum=0.5)
    assert opt.param_groups[0]["param_names"] == ["a"]
    with pytest.raises(ValueError, match="with/without names"):
        opt.add_param_group({"params": [b]})
    opt.add_param_group({"params": [("b", b)], "lr": 0.2})
    assert opt.param_groups[1]["lr"] == 0.2 and opt.param_groups[1]["momentum"] == 0.5
    assert "Parameter Group 1" in repr(opt) and "lr: 0.2" in repr(opt)


def test_required_option():
    from retrograd.optim.optimizer import Optimizer, required

    class Needs(Optimizer):
        def __init__(self, params, lr=required):
            super().__init__(params, {"lr": lr})

    with pytest.raises(ValueError, match="didn't specify a value of required optimization "
                                         "parameter lr"):
        Needs([leaf()])
    assert Needs([{"params": [leaf()], "lr": 1.0}]).param_groups[0]["lr"] == 1.0


def test_zero_grad_none_or_zeros():
    x = leaf()
    opt = T.optim.SGD([x], lr=0.1)
    (x * x).sum().backward()
    grad = x.grad
    opt.zero_grad(set_to_none=False)
    assert x.grad is grad and x.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert x.grad is None


def test_update_bumps_version_so_saved_parameters_refuse_backward():
    x = leaf()
    opt = T.optim.Adam([x], lr=0.1)
    (x * x).sum().backward()
    y = (x * x).sum()  # saves x
    version = x._version
    opt.step()
    assert x._version == version + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam",
                                  "RMSprop", "Adagrad", "Adadelta", "Rprop", "ASGD",
                                  "Adafactor"])
def test_float32_stays_float32_and_closure_loss_is_returned(name):
    x = leaf()
    opt = getattr(T.optim, name)([x], lr=0.1)
    calls = []

    def closure():
        calls.append(T.is_grad_enabled())
        opt.zero_grad()
        loss = (x * x).sum()
        loss.backward()
        return loss

    loss = opt.step(closure)
    assert calls == [True] and loss.item() == 5.0
    assert x.dtype == T.float32 and x.is_leaf and x.requires_grad
    for value in opt.state[x].values():
        if value.dim():
            assert value.dtype == T.float32


def test_step_hooks_order_and_removal():
    x = leaf()
    opt = T.optim.SGD([x], lr=0.1)
    seen = []
    pre = opt.register_step_pre_hook(lambda o, a, k: seen.append(("pre", o is opt)))
    opt.register_step_post_hook(lambda o, a, k: seen.append(("post", x._version)))
    global_pre = T.optim.optimizer.register_optimizer_step_pre_hook(
        lambda o, a, k: seen.append(("global",)))
    x.grad = T.ones(2)
    opt.step()
    assert seen == [("global",), ("pre", True), ("post", 1)]
    pre.remove()
    global_pre.remove()
    opt.step()
    assert seen[-1] == ("post", 2) and len(seen) == 4


def test_pre_hook_may_replace_arguments():
    x = leaf()
    opt = T.optim.SGD([x], lr=0.1)
    x.grad = T.ones(2)
    opt.register_step_pre_hook(lambda o, a, k: ((), {"closure": lambda: 7.0}))
    assert opt.step() == 7.0
    opt.register_step_pre_hook(lambda o, a, k: "bad")
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        opt.step()


def test_state_dict_hooks():
    x = leaf()
    opt = T.optim.SGD([x], lr=0.1)
    opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
    assert opt.state_dict()["extra"] == 1
    loaded = []
    opt.register_load_state_dict_post_hook(lambda o: loaded.append(True))
    opt.load_state_dict(opt.state_dict())
    assert loaded == [True]


def test_load_state_dict_checks_and_casts():
    x64 = leaf(dtype=T.float64)
    opt = T.optim.Adam([x64], lr=0.1)
    x64.grad = T.ones(2, dtype=T.float64)
    opt.step()
    saved = copy.deepcopy(opt.state_dict())
    x32 = leaf()
    other = T.optim.Adam([x32], lr=0.5)
    other.load_state_dict(saved)
    assert other.param_groups[0]["lr"] == 0.1 and other.param_groups[0]["params"] == [x32]
    assert other.state[x32]["exp_avg"].dtype == T.float32  # cast to the parameter's dtype
    assert other.state[x32]["step"].dtype == T.float32  # step counts keep theirs
    with pytest.raises(ValueError, match="different number of parameter groups"):
        T.optim.Adam([{"params": [leaf()]}, {"params": [leaf()]}]).load_state_dict(saved)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        T.optim.Adam([leaf(), leaf()]).load_state_dict(saved)


def test_torch_state_dict_values_load_into_retrograd():
    # a state dict written by torch (tensors converted) drives the same continuation
    values = np.array([1.0, -2.0])
    tx = torch.tensor(values, requires_grad=True)
    topt = torch.optim.RMSprop([tx], lr=0.1, momentum=0.5, centered=True)
    tx.grad = torch.ones(2, dtype=torch.float64)
    topt.step()
    sd = topt.state_dict()
    converted = {"param_groups": sd["param_groups"],
                 "state": {k: {n: T.tensor(v.numpy()) for n, v in st.items()}
                           for k, st in sd["state"].items()}}
    x = T.tensor(tx.detach().numpy().copy(), requires_grad=True)
    opt = T.optim.RMSprop([x], lr=0.1)
    opt.load_state_dict(converted)
    for _ in range(3):
        x.grad = T.tensor([0.5, -1.0], dtype=T.float64)
        tx.grad = torch.tensor([0.5, -1.0], dtype=torch.float64)
        opt.step()
        topt.step()
    np.testing.assert_allclose(x.detach().numpy(), tx.detach().numpy(), rtol=1e-12)


def test_tensor_lr():
    x, tx = leaf(dtype=T.float64), torch.tensor([1.0, -2.0], dtype=torch.float64,
                                                requires_grad=True)
    opt = T.optim.Adam([x], lr=T.tensor(0.1))
    topt = torch.optim.Adam([tx], lr=torch.tensor(0.1))
    for _ in range(3):
        x.grad = T.tensor([1.0, 1.0], dtype=T.float64)
        tx.grad = torch.ones(2, dtype=torch.float64)
        opt.step()
        topt.step()
    np.testing.assert_allclose(x.detach().numpy(), tx.detach().numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match=re.escape("Tensor lr must be 1-element")):
        T.optim.SGD([x], lr=T.tensor([0.1, 0.2]))


@pytest.mark.parametrize("flag", ["differentiable", "capturable"])
def test_unsupported_flags_are_refused(flag):
    with pytest.raises(NotImplementedError, match=f"{flag}=True"):
        T.optim.Adam([leaf()], **{flag: True})
    with pytest.raises(NotImplementedError, match=f"{flag}=True"):
        T.optim.Adam([{"params": [leaf()], flag: True}])
    # foreach and fused are speed hints: the one loop serves them all
    T.optim.Adam([leaf()], foreach=True)
    T.optim.SGD([leaf()], lr=0.1, fused=True)


def test_old_state_dict_without_newer_options_loads():
    x = leaf()
    opt = T.optim.Adam([x], lr=0.1)
    saved = opt.state_dict()
    del saved["param_groups"][0]["decoupled_weight_decay"]
    opt.load_state_dict(saved)
    x.grad = T.ones(2)
    opt.step()
    assert opt.param_groups[0]["decoupled_weight_decay"] is False
