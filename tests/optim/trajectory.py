"""Run an optimizer side by side in retrograd and PyTorch on the same problem.

The gradients are computed once, in NumPy, from the current parameter values and handed to
both libraries, so the comparison sees the optimizers' arithmetic alone (not two autograd
engines' rounding).  The problem: a separable quartic, grad = a*p + c*p^3 - b.
"""

from __future__ import annotations

import copy

import numpy as np
import torch

import retrograd as T

SHAPES = [(3, 4), (4,), (2, 1)]


def initial_values(dtype, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in SHAPES]


def problem_grad(p: np.ndarray, index: int) -> np.ndarray:
    rng = np.random.default_rng(100 + index)
    a = rng.uniform(0.5, 2.0, p.shape).astype(p.dtype)
    b = rng.standard_normal(p.shape).astype(p.dtype)
    return a * p + p.dtype.type(0.3) * p ** 3 - b


def make_pair(values):
    ours = [T.tensor(v.copy(), requires_grad=True) for v in values]
    theirs = [torch.tensor(v.copy(), requires_grad=True) for v in values]
    return ours, theirs


def param_groups(params, groups):
    """``groups`` None: a flat list; else a list of (indices, options) dicts."""
    if groups is None:
        return params
    return [{"params": [params[i] for i in idx], **opts} for idx, opts in groups]


def set_grads(ours, theirs, skip=(), sign=1):
    for i, (p, q) in enumerate(zip(ours, theirs)):
        if i in skip:
            p.grad, q.grad = None, None
            continue
        g = sign * problem_grad(p.detach().numpy(), i)
        p.grad = T.tensor(g.copy())
        q.grad = torch.tensor(g.copy())


def run_both(name, options, dtype, steps=8, groups=None, skip=()):
    """The parameters of both libraries after each step: two lists of lists of arrays."""
    ours, theirs = make_pair(initial_values(dtype))
    opt = getattr(T.optim, name)(param_groups(ours, groups), **options)
    topt = getattr(torch.optim, name)(param_groups(theirs, groups), **options)
    ours_traj, theirs_traj = [], []
    sign = -1 if options.get("maximize") else 1  # maximize -f: the run still converges
    for _ in range(steps):
        set_grads(ours, theirs, skip, sign)
        opt.step()
        topt.step()
        ours_traj.append([p.detach().numpy().copy() for p in ours])
        theirs_traj.append([q.detach().numpy().copy() for q in theirs])
    return ours_traj, theirs_traj, opt, topt


def run_resumed(name, options, dtype, steps=8, split=3, groups=None):
    """Our trajectory with a state_dict save/load into a fresh optimizer after ``split``
    steps, and the unbroken run's."""
    unbroken = run_both(name, options, dtype, steps, groups)[0]
    params = [T.tensor(v.copy(), requires_grad=True) for v in initial_values(dtype)]
    opt = getattr(T.optim, name)(param_groups(params, groups), **options)
    traj = []
    sign = -1 if options.get("maximize") else 1
    for k in range(steps):
        if k == split:
            saved = copy.deepcopy(opt.state_dict())
            params = [T.tensor(p.detach().numpy().copy(), requires_grad=True) for p in params]
            opt = getattr(T.optim, name)(param_groups(params, groups), **options)
            opt.load_state_dict(saved)
        for i, p in enumerate(params):
            p.grad = T.tensor(sign * problem_grad(p.detach().numpy(), i))
        opt.step()
        traj.append([p.detach().numpy().copy() for p in params])
    return traj, unbroken
