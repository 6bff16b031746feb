"""optim.swa_utils against PyTorch: AveragedModel (SWA, EMA, per-tensor and list averaging
functions, use_buffers) over several SGD steps from the same weights, update_bn, SWALR's
rate sequences and state-dict round trip, and the errors."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest
import torch

import retrograd as T

X = np.random.default_rng(0).standard_normal((6, 3)).astype("float32")
Y = np.random.default_rng(1).standard_normal((6, 2)).astype("float32")


def _model(lib):
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.ReLU(),
                             lib.nn.Linear(4, 2))


def _pair():
    theirs = _model(torch)
    ours = _model(T)
    ours.load_state_dict({k: T.tensor(v.numpy().copy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def _close(a, b, tol=1e-6):
    np.testing.assert_allclose(np.asarray(a.detach().numpy()), b.detach().numpy(),
                               rtol=tol, atol=tol)


def _state_close(ours, theirs):
    ours_state = ours.state_dict()
    assert list(ours_state) == list(theirs.state_dict())
    for key, value in theirs.state_dict().items():
        _close(ours_state[key], value)


AVERAGINGS = {
    "swa": lambda su: {},
    "swa_use_buffers": lambda su: {"use_buffers": True},
    "ema_multi": lambda su: {"multi_avg_fn": su.get_ema_multi_avg_fn(0.8)},
    "ema_multi_buffers": lambda su: {"multi_avg_fn": su.get_ema_multi_avg_fn(0.8),
                                     "use_buffers": True},
    "ema_single": lambda su: {"avg_fn": su.get_ema_avg_fn(0.7)},
    "swa_single": lambda su: {"avg_fn": su.get_swa_avg_fn()},
    "swa_multi": lambda su: {"multi_avg_fn": su.get_swa_multi_avg_fn()},
}


@pytest.mark.parametrize("name", list(AVERAGINGS))
def test_averaged_model_matches_torch_over_training(name):
    ours, theirs = _pair()
    averaged = [lib.optim.swa_utils.AveragedModel(m, **AVERAGINGS[name](lib.optim.swa_utils))
                for lib, m in ((T, ours), (torch, theirs))]
    opts = [T.optim.SGD(ours.parameters(), lr=0.1), torch.optim.SGD(theirs.parameters(), lr=0.1)]
    for _ in range(4):
        for lib, model, opt, avg in zip((T, torch), (ours, theirs), opts, averaged):
            opt.zero_grad()
            ((model(lib.tensor(X)) - lib.tensor(Y)) ** 2).mean().backward()
            opt.step()
            avg.update_parameters(model)
        _state_close(averaged[0], averaged[1])
    assert int(averaged[0].n_averaged) == 4 and averaged[0].n_averaged.dtype == T.int64
    averaged[0].eval()
    averaged[1].eval()
    _close(averaged[0](T.tensor(X)), averaged[1](torch.tensor(X)))


def test_update_bn_matches_torch():
    ours, theirs = _pair()
    batches = [X[:3], X[3:]]
    for lib, model in ((T, ours), (torch, theirs)):
        model.eval()
        loader = [(lib.tensor(b), lib.tensor(0)) for b in batches]
        lib.optim.swa_utils.update_bn(loader, model)
        assert not model.training
        assert model[1].momentum == 0.1
    _state_close(ours, theirs)
    # a model without BatchNorm is left alone
    plain = T.nn.Linear(3, 2)
    before = copy.deepcopy(plain.state_dict())
    T.optim.swa_utils.update_bn([T.tensor(X)], plain)
    for key, value in before.items():
        np.testing.assert_array_equal(plain.state_dict()[key].numpy(), value.numpy())


def _rates(lib, make, epochs=12, with_other=False):
    params = [lib.zeros(1, requires_grad=True)]
    opt = lib.optim.SGD([{"params": params}, {"params": [lib.zeros(1, requires_grad=True)],
                                               "lr": 0.5}], lr=1.0)
    sched = make(lib, opt)
    other = lib.optim.lr_scheduler.ExponentialLR(opt, 0.9) if with_other else None
    rates = []
    for _ in range(epochs):
        opt.step()
        sched.step()
        if other is not None:
            other.step()
        rates.append([g["lr"] for g in opt.param_groups])
    return rates, sched, opt


SWALRS = {
    "cos": lambda lib, o: lib.optim.swa_utils.SWALR(o, swa_lr=0.05, anneal_epochs=5),
    "linear": lambda lib, o: lib.optim.swa_utils.SWALR(o, swa_lr=[0.05, 0.2], anneal_epochs=3,
                                                        anneal_strategy="linear"),
    "no_annealing": lambda lib, o: lib.optim.swa_utils.SWALR(o, swa_lr=0.1, anneal_epochs=0),
}


@pytest.mark.parametrize("name", list(SWALRS))
@pytest.mark.parametrize("with_other", [False, True])
def test_swalr_rates_match_torch(name, with_other):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ours, _, _ = _rates(T, SWALRS[name], with_other=with_other)
        theirs, _, _ = _rates(torch, SWALRS[name], with_other=with_other)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=0)


def test_swalr_state_dict_round_trip():
    ours, sched, _ = _rates(T, SWALRS["cos"], epochs=2)
    theirs, their_sched, _ = _rates(torch, SWALRS["cos"], epochs=2)
    state = sched.state_dict()
    assert sorted(state) == sorted(their_sched.state_dict())
    assert "anneal_func" not in state and "optimizer" not in state
    opt = T.optim.SGD([T.zeros(1, requires_grad=True)], lr=1.0)
    fresh = T.optim.swa_utils.SWALR(opt, swa_lr=0.5, anneal_strategy="linear")
    fresh.load_state_dict(state)
    assert fresh.anneal_func is T.optim.swa_utils.SWALR._cosine_anneal


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return info.type.__name__, str(info.value)


@pytest.mark.parametrize("case", ["ema_decay", "ema_single_decay", "both_fns", "strategy",
                                  "anneal_epochs", "swa_lr_length"])
def test_errors_match_torch(case):
    def run(lib):
        su = lib.optim.swa_utils
        opt = lib.optim.SGD([lib.zeros(1, requires_grad=True)], lr=1.0)
        if case == "ema_decay":
            su.get_ema_multi_avg_fn(1.5)
        elif case == "ema_single_decay":
            su.get_ema_avg_fn(-0.1)
        elif case == "both_fns":
            su.AveragedModel(lib.nn.Linear(1, 1), avg_fn=su.get_swa_avg_fn(),
                             multi_avg_fn=su.get_swa_multi_avg_fn())
        elif case == "strategy":
            su.SWALR(opt, swa_lr=0.1, anneal_strategy="exp")
        elif case == "anneal_epochs":
            su.SWALR(opt, swa_lr=0.1, anneal_epochs=-1)
        else:
            su.SWALR(opt, swa_lr=[0.1, 0.2])

    assert _error(lambda: run(T)) == _error(lambda: run(torch))
