"""Small differential helpers for the boundary tests of the reduction and scan tables
(tests/ops/test_scans.py, test_quantiles.py, test_statistics.py): run one call on
retrograd and on torch and compare outputs, return types, gradients and error classes."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd


def both(torch, fn, *arrays, dtype="float64", grad=True):
    """fn on retrograd and on torch; returns [(result, outputs, input grads)] for each."""
    res = []
    for m in (retrograd, torch):
        xs = [m.tensor(a, dtype=getattr(m, dtype)) for a in arrays]
        if grad:
            xs = [x.requires_grad_() for x in xs]
        out = fn(m, *xs)
        outs = list(out) if isinstance(out, tuple) else [out]
        grads = []
        if grad and outs[0].requires_grad and outs[0].numel():
            outs[0].backward(m.ones_like(outs[0]) * 1.5)
            grads = [x.grad for x in xs]
        res.append((out, outs, grads))
    return res


def same(r, t):
    assert tuple(r.shape) == tuple(t.shape)
    assert str(r.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    tol = 1e-6 if str(t.dtype).endswith("float32") else 1e-12
    np.testing.assert_allclose(np.asarray(r.detach().numpy()), t.detach().numpy(),
                               rtol=tol, atol=tol, equal_nan=True)


def check_both(torch, fn, *arrays, dtype="float64", grad=True):
    """Values, dtypes, shapes, return type and field names, grad_fn names and gradients."""
    (ro, rs, rg), (to, ts, tg) = both(torch, fn, *arrays, dtype=dtype, grad=grad)
    assert type(ro).__name__ == type(to).__name__
    if hasattr(to, "n_fields"):  # torch.return_types.*: structseqs, fields by attribute
        assert len(ro) == len(to) == to.n_fields
        for i, field in enumerate(ro._fields):
            assert getattr(to, field) is to[i]
    assert len(rs) == len(ts)
    for r, t in zip(rs, ts):
        same(r, t)
        want = None if t.grad_fn is None else t.grad_fn.name()
        assert (None if r.grad_fn is None else r.grad_fn.name()) == want
    assert len(rg) == len(tg)
    for r, t in zip(rg, tg):
        assert (r is None) == (t is None)
        if t is not None:
            same(r, t)


def error_classes(torch, call, *args):
    """The exception classes ``call(m, *args)`` raises on retrograd and on torch."""
    classes = []
    for m in (retrograd, torch):
        with pytest.raises(Exception) as info:
            call(m, *[m.tensor(a) if isinstance(a, np.ndarray) else a for a in args])
        classes.append(info.type)
    return classes


def dtype_outcomes(torch, call, a, dtype):
    """``call`` on an integer/bool/float tensor in both: result or exception class each."""
    got = []
    for m in (retrograd, torch):
        try:
            got.append(call(m, m.tensor(a, dtype=getattr(m, dtype))))
        except Exception as e:  # noqa: BLE001 - the class is compared
            got.append(type(e))
    return got
