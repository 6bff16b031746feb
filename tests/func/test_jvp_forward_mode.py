"""func.jvp / jacfwd / linearize run forward-mode AD (autograd.forward_ad), vs torch.func:
values of every composition with the reverse transforms, and PyTorch's errors."""

from __future__ import annotations

import pytest

import retrograd as R
import retrograd.autograd.forward_ad as fwAD
from retrograd import func

from .helpers import arrays, both, same


def test_jvp_runs_func_once_on_duals():
    x, t = (R.tensor(a) for a in arrays(20, (3,), (3,)))
    seen = []

    def f(a):
        seen.append(fwAD.unpack_dual(a).tangent)
        return a.sin()

    out, jv = func.jvp(f, (x,), (t,))
    assert len(seen) == 1 and seen[0] is not None  # one run, the input a dual of t
    assert (seen[0] - t).abs().max().item() == 0
    assert (jv - x.cos() * t).abs().max().item() < 1e-15
    assert out.grad_fn is None and jv.grad_fn is None and not jv.requires_grad


def test_compositions_match_torch(torch):
    (x, t), (tx, tt) = both(torch, *arrays(21, (3,), (3,)))

    def f(m):
        return lambda a: (m.sin(a) * a).sum() * a

    def g(m):
        return lambda a: (m.sin(a) * a.exp()).sum()

    for a, b in ((func.jacfwd, torch.func.jacfwd), (func.jacrev, torch.func.jacrev)):
        for c, d in ((func.jacfwd, torch.func.jacfwd), (func.jacrev, torch.func.jacrev)):
            same(a(c(f(R)))(x), b(d(f(torch)))(tx), what=f"{a.__name__}({c.__name__})")
    same(func.jvp(func.grad(g(R)), (x,), (t,)),
         torch.func.jvp(torch.func.grad(g(torch)), (tx,), (tt,)), what="jvp(grad)")
    same(func.grad(lambda a: func.jvp(g(R), (a,), (t,))[1])(x),
         torch.func.grad(lambda a: torch.func.jvp(g(torch), (a,), (tt,))[1])(tx),
         what="grad(jvp)")
    same(func.jvp(lambda a: func.jvp(g(R), (a,), (t,))[1], (x,), (t,)),
         torch.func.jvp(lambda a: torch.func.jvp(g(torch), (a,), (tt,))[1], (tx,), (tt,)),
         what="jvp(jvp)")
    (xs, ts), (txs, tts) = both(torch, *arrays(22, (4, 3), (4, 3)))
    same(R.vmap(lambda a, b: func.jvp(R.tanh, (a,), (b,)))(xs, ts),
         torch.vmap(lambda a, b: torch.func.jvp(torch.tanh, (a,), (b,)))(txs, tts),
         what="vmap(jvp)")
    same(R.vmap(lambda b: func.jvp(R.tanh, (x,), (b,))[1])(ts),
         torch.vmap(lambda b: torch.func.jvp(torch.tanh, (tx,), (b,))[1])(tts),
         what="vmap over the tangent only")


def test_outputs_structures_aux_and_constant_outputs(torch):
    (x, y, t, u), (tx, ty, tt, tu) = both(torch, *arrays(23, (3,), (3,), (3,), (3,)))

    def f(m):
        return lambda a, b: ({"p": a * b, "c": m.ones(2, dtype=m.float64)}, (a.sum(), b))

    same(func.jvp(f(R), (x, y), (t, u), has_aux=True),
         torch.func.jvp(f(torch), (tx, ty), (tt, tu), has_aux=True))
    out, fn = func.linearize(lambda a: a.sin() * a, x)
    tout, tfn = torch.func.linearize(lambda a: a.sin() * a, tx)
    same(out, tout)
    same(fn(t), tfn(tt))
    same(fn(u), tfn(tu))


def test_errors_match_torch(torch):
    for lib, jv in ((torch, torch.func.jvp), (R, func.jvp)):
        with pytest.raises(ValueError, match="primal to be floating point"):
            jv(lib.sin, (lib.tensor([1, 2]),), (lib.tensor([1, 2]),))
        with pytest.raises(ValueError, match="tangent to be floating point"):
            jv(lib.sin, (lib.tensor([1.0, 2]),), (lib.tensor([1, 2]),))
        with pytest.raises(RuntimeError, match="return only tensors"):
            jv(lambda a: 3, (lib.tensor([1.0, 2]),), (lib.tensor([1.0, 2]),))
    with fwAD.dual_level(), pytest.raises(RuntimeError, match="Nested forward mode AD"):
        func.jvp(R.sin, (R.ones(2),), (R.ones(2),))
    with torch.autograd.forward_ad.dual_level(), pytest.raises(RuntimeError,
                                                                 match="Nested forward mode"):
        torch.func.jvp(torch.sin, (torch.ones(2),), (torch.ones(2),))
    # the level is closed again after an error inside f
    with pytest.raises(ZeroDivisionError):
        func.jvp(lambda a: 1 / 0, (R.ones(2),), (R.ones(2),))
    with fwAD.dual_level():
        pass
