"""Shared by the retrograd.func tests: the same inputs for both libraries, and comparisons."""

from __future__ import annotations

import numpy as np

import retrograd


def arrays(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


def both(torch, *arrs):
    """(retrograd tensors, torch tensors) of the float64 arrays ``arrs``."""
    return ([retrograd.tensor(a) for a in arrs], [torch.tensor(a) for a in arrs])


def same(rg, th, rtol=1e-9, atol=1e-10, what=""):
    """Equal nested structures of tensors (shapes, dtypes, values)."""
    if isinstance(th, dict):
        assert isinstance(rg, dict) and set(rg) == set(th), what
        for k in th:
            same(rg[k], th[k], rtol, atol, f"{what}[{k!r}]")
        return
    if isinstance(th, (tuple, list)):
        assert type(rg) is type(th) or (isinstance(rg, tuple) and isinstance(th, tuple)), (
            f"{what}: {type(rg).__name__} vs {type(th).__name__}")
        assert len(rg) == len(th), f"{what}: {len(rg)} items vs {len(th)}"
        for i, (a, b) in enumerate(zip(rg, th)):
            same(a, b, rtol, atol, f"{what}[{i}]")
        return
    if not hasattr(th, "shape"):
        assert rg == th, what
        return
    assert isinstance(rg, retrograd.Tensor), f"{what}: {type(rg).__name__}"
    assert tuple(rg.shape) == tuple(th.shape), (
        f"{what}: shape {tuple(rg.shape)} vs {tuple(th.shape)}")
    assert str(rg.dtype).split(".")[-1] == str(th.dtype).split(".")[-1], f"{what}: dtype"
    np.testing.assert_allclose(rg.detach().numpy(), th.detach().numpy(), rtol=rtol, atol=atol,
                               err_msg=what)
