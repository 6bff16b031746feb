"""Every LR scheduler's sequence of rates (and cycled momenta) over 30 epochs equals
PyTorch's, exactly; state-dict round trips resume exactly; composition works."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest
import torch

import retrograd as T

EPOCHS = 30
SPLIT = 12


class Halve:
    """A callable object: its __dict__ travels in the scheduler's state dict."""

    def __init__(self):
        self.factor = 0.9

    def __call__(self, epoch):
        return self.factor ** epoch


def S(lib):  # noqa: N802 - the scheduler module of a library
    return lib.optim.lr_scheduler


CASES = {
    "LambdaLR": lambda lib, o: S(lib).LambdaLR(o, lambda e: 1.0 / (1 + e)),
    "LambdaLR-per-group": lambda lib, o: S(lib).LambdaLR(o, [lambda e: 0.95 ** e, Halve()]),
    "MultiplicativeLR": lambda lib, o: S(lib).MultiplicativeLR(o, lambda e: 0.95),
    "StepLR": lambda lib, o: S(lib).StepLR(o, step_size=4, gamma=0.5),
    "MultiStepLR": lambda lib, o: S(lib).MultiStepLR(o, milestones=[3, 8, 8, 20], gamma=0.3),
    "ExponentialLR": lambda lib, o: S(lib).ExponentialLR(o, gamma=0.9),
    "CosineAnnealingLR": lambda lib, o: S(lib).CosineAnnealingLR(o, T_max=7, eta_min=0.001),
    "CosineAnnealingWarmRestarts": lambda lib, o: S(lib).CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.01),
    "LinearLR": lambda lib, o: S(lib).LinearLR(o, start_factor=0.25, end_factor=0.9,
                                               total_iters=6),
    "ConstantLR": lambda lib, o: S(lib).ConstantLR(o, factor=0.5, total_iters=4),
    "PolynomialLR": lambda lib, o: S(lib).PolynomialLR(o, total_iters=10, power=2.0),
    "OneCycleLR": lambda lib, o: S(lib).OneCycleLR(o, max_lr=[0.5, 1.0], total_steps=EPOCHS),
    "OneCycleLR-3phase-linear": lambda lib, o: S(lib).OneCycleLR(
        o, max_lr=0.8, epochs=3, steps_per_epoch=10, three_phase=True,
        anneal_strategy="linear"),
    "CyclicLR-triangular": lambda lib, o: S(lib).CyclicLR(o, base_lr=0.01, max_lr=0.1,
                                                          step_size_up=4),
    "CyclicLR-triangular2": lambda lib, o: S(lib).CyclicLR(
        o, base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=3, step_size_down=5,
        mode="triangular2"),
    "CyclicLR-exp_range": lambda lib, o: S(lib).CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=5, mode="exp_range", gamma=0.95),
    "CyclicLR-scale_fn": lambda lib, o: S(lib).CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=2, scale_fn=Halve(),
        scale_mode="iterations", cycle_momentum=False),
    "ChainedScheduler": lambda lib, o: S(lib).ChainedScheduler(
        [S(lib).ConstantLR(o, factor=0.1, total_iters=3),
         S(lib).ExponentialLR(o, gamma=0.9)]),
    "SequentialLR": lambda lib, o: S(lib).SequentialLR(
        o, [S(lib).LinearLR(o, start_factor=0.1, total_iters=5),
            S(lib).CosineAnnealingLR(o, T_max=10)], milestones=[6]),
    "SequentialLR-three": lambda lib, o: S(lib).SequentialLR(
        o, [S(lib).ConstantLR(o, factor=0.5, total_iters=2),
            S(lib).ExponentialLR(o, gamma=0.8), S(lib).StepLR(o, step_size=3)],
        milestones=[4, 11]),
    # (a ChainedScheduler inside a SequentialLR fails in PyTorch: it has no get_lr)
    "Sequential-in-Chained": lambda lib, o: S(lib).ChainedScheduler(
        [S(lib).SequentialLR(o, [S(lib).ConstantLR(o, factor=0.5, total_iters=3),
                                 S(lib).StepLR(o, step_size=2, gamma=0.5)], milestones=[5]),
         S(lib).ExponentialLR(o, gamma=0.95)]),
}
ADAM_CASES = {"OneCycleLR", "CyclicLR-triangular"}  # cycle beta1 instead of momentum


def make_optimizer(lib, name):
    params = [lib.zeros(2, requires_grad=True), lib.zeros(3, requires_grad=True)]
    groups = [{"params": params[:1]}, {"params": params[1:], "lr": 0.05}]
    if name in ADAM_CASES:
        return lib.optim.Adam(groups, lr=0.1)
    return lib.optim.SGD(groups, lr=0.1, momentum=0.9)


def observe(opt, sched):
    return (list(sched.get_last_lr()),
            [(g["lr"], g.get("momentum"), g.get("betas")) for g in opt.param_groups])


def run(lib, name, epochs=EPOCHS, sched=None, opt=None):
    if opt is None:
        opt = make_optimizer(lib, name)
        sched = CASES[name](lib, opt)
    seen = [observe(opt, sched)]
    for _ in range(epochs):
        opt.step()
        sched.step()
        seen.append(observe(opt, sched))
    return seen, opt, sched


@pytest.mark.parametrize("name", list(CASES))
def test_rates_equal_torch(name):
    ours, _, _ = run(T, name)
    theirs, _, _ = run(torch, name)
    assert ours == theirs


@pytest.mark.parametrize("name", list(CASES))
def test_state_dict_round_trip_resumes_exactly(name):
    unbroken, _, _ = run(T, name)
    first, opt, sched = run(T, name, epochs=SPLIT)
    saved_opt = copy.deepcopy(opt.state_dict())
    saved = copy.deepcopy(sched.state_dict())
    # a fresh optimizer and scheduler, loaded in PyTorch's documented order
    opt2 = make_optimizer(T, name)
    sched2 = CASES[name](T, opt2)
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved)
    rest, _, _ = run(T, name, epochs=EPOCHS - SPLIT, sched=sched2, opt=opt2)
    assert first + rest[1:] == unbroken


def test_state_dict_keys_match_torch():
    for name in ["StepLR", "LambdaLR-per-group", "SequentialLR", "CyclicLR-scale_fn",
                 "OneCycleLR"]:
        _, _, ours = run(T, name, epochs=3)
        _, _, theirs = run(torch, name, epochs=3)
        mine, ref = ours.state_dict(), theirs.state_dict()
        assert sorted(mine) == sorted(ref), name
        for key in ("last_epoch", "_step_count", "base_lrs", "_last_lr"):
            assert mine.get(key) == ref.get(key), (name, key)


def test_reduce_lr_on_plateau_matches_torch():
    metrics = [1.0, 0.9, 0.9, 0.95, 0.91, 0.92, 0.93, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6, 0.4,
               0.41, 0.42, 0.43, 0.44, 0.45, 0.46]
    configs = [{"patience": 2}, {"mode": "max", "factor": 0.5, "patience": 1, "cooldown": 2},
               {"threshold_mode": "abs", "threshold": 0.05, "patience": 0,
                "min_lr": [0.02, 0.001]}]
    for kw in configs:
        results = []
        for lib in (T, torch):
            opt = make_optimizer(lib, "plateau")
            sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
            seq = []
            for k, m in enumerate(metrics):
                if k == 9 and lib is T:  # round trip mid-run
                    state = copy.deepcopy(sched.state_dict())
                    sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
                    sched.load_state_dict(state)
                sched.step(m)
                seq.append((list(sched.get_last_lr()), sched.num_bad_epochs,
                            sched.cooldown_counter, sched.best))
            results.append(seq)
        assert results[0] == results[1], kw


def test_epoch_argument_uses_the_closed_form():
    out = []
    for lib in (T, torch):
        opt = make_optimizer(lib, "x")
        step = lib.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
        warm = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(
            make_optimizer(lib, "x"), T_0=4, T_mult=2)
        seq = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in [2, 7, 3, 11]:
                opt.step()
                step.step(epoch)
                seq.append(step.get_last_lr())
            for epoch in [0.5, 3.75, 4.0, 13.2, 30.0]:
                warm.step(epoch)
                seq.append(warm.get_last_lr())
        out.append(seq)
    assert out[0] == out[1]


def record_warnings(lib):
    opt = make_optimizer(lib, "x")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2)
        sched.step()  # before optimizer.step(): warned
        sched.get_lr()  # outside step: warned
        sched.step(3)  # the epoch argument: deprecated
    return [str(w.message)[:60] for w in caught]


def test_warnings_as_torch():
    assert record_warnings(T) == record_warnings(torch)
    assert len(record_warnings(T)) == 3


def test_scheduler_errors_as_torch():
    def both(make):
        got = []
        for lib in (T, torch):
            with pytest.raises(Exception) as info:
                make(lib, make_optimizer(lib, "x"))
            got.append((type(info.value).__name__, str(info.value)))
        assert got[0] == got[1]
        return got[0]

    both(lambda lib, o: S(lib).StepLR("not an optimizer", 2))
    both(lambda lib, o: S(lib).ConstantLR(o, factor=2.0))
    both(lambda lib, o: S(lib).LinearLR(o, start_factor=0))
    both(lambda lib, o: S(lib).LambdaLR(o, [lambda e: 1.0]))
    both(lambda lib, o: S(lib).MultiplicativeLR(o, 3))
    both(lambda lib, o: S(lib).CosineAnnealingWarmRestarts(o, T_0=0))
    both(lambda lib, o: S(lib).CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0))
    both(lambda lib, o: S(lib).OneCycleLR(o, max_lr=0.1))
    both(lambda lib, o: S(lib).OneCycleLR(o, max_lr=0.1, total_steps=10, pct_start=1.5))
    both(lambda lib, o: S(lib).OneCycleLR(o, max_lr=0.1, total_steps=10,
                                          anneal_strategy="exp"))
    both(lambda lib, o: S(lib).CyclicLR(o, 0.1, 1.0, mode="weird"))
    both(lambda lib, o: S(lib).ReduceLROnPlateau(o, factor=1.5))
    both(lambda lib, o: S(lib).ReduceLROnPlateau(o, mode="up"))
    both(lambda lib, o: S(lib).ReduceLROnPlateau(o, min_lr=[0.1]))
    both(lambda lib, o: S(lib).SequentialLR(o, [S(lib).StepLR(o, 2)], milestones=[3]))
    both(lambda lib, o: S(lib).SequentialLR(o, [S(lib).ReduceLROnPlateau(o)], milestones=[]))
    both(lambda lib, o: S(lib).ChainedScheduler([]))
    both(lambda lib, o: S(lib).StepLR(o, 2, last_epoch=5))
    def past_the_end(lib, o):
        sched = S(lib).OneCycleLR(o, max_lr=0.1, total_steps=2)
        for _ in range(3):
            o.step()
            sched.step()

    assert "Tried to step 3 times" in both(past_the_end)[1]


def test_tensor_lr_is_filled_in_place():
    x = T.zeros(2, requires_grad=True)
    lr = T.tensor(0.1, dtype=T.float64)
    opt = T.optim.SGD([x], lr=lr)
    sched = T.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr and lr.item() == 0.05
    assert sched.base_lrs[0].item() == 0.1 and sched.get_last_lr()[0].item() == 0.05
    np.testing.assert_equal(opt.param_groups[0]["initial_lr"].item(), 0.1)


@pytest.mark.parametrize("name", ["StepLR", "CosineAnnealingLR", "ExponentialLR"])
def test_constructing_with_last_epoch_resumes_as_torch(name):
    make = {"StepLR": lambda s, o: s.StepLR(o, step_size=3, gamma=0.5, last_epoch=5),
            "CosineAnnealingLR": lambda s, o: s.CosineAnnealingLR(o, T_max=8, last_epoch=5),
            "ExponentialLR": lambda s, o: s.ExponentialLR(o, gamma=0.8, last_epoch=5)}[name]
    seqs = []
    for lib in (T, torch):
        opt = make_optimizer(lib, name)
        for group in opt.param_groups:
            group["initial_lr"] = group["lr"] * 2
        sched = make(S(lib), opt)
        seq = [list(sched.get_last_lr())]
        for _ in range(10):
            opt.step()
            sched.step()
            seq.append(list(sched.get_last_lr()))
        seqs.append(seq)
    assert seqs[0] == seqs[1]
