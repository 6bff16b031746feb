"""Engine semantics, each checked against PyTorch 2.13 running the same computation.

Every test builds the graph twice, once with ``retrograd`` (``R``) and once with ``torch``,
and compares values, gradients, grad_fn names and errors.  Inputs are float64 so that
tolerances can be tight.
"""

import gc
import re
import threading
import warnings
import weakref

import numpy as np
import pytest

import retrograd as R
from retrograd.autograd import Function as RFunction

torch = pytest.importorskip("torch")

RTOL = 1e-10
ATOL = 1e-12


def pair(data, requires_grad=True):
    """The same float64 leaf in retrograd and in torch."""
    arr = np.asarray(data, dtype=np.float64)
    return (R.tensor(arr.copy(), requires_grad=requires_grad),
            torch.tensor(arr.copy(), requires_grad=requires_grad))


def rand_pair(*shape, seed=0, requires_grad=True):
    return pair(np.random.default_rng(seed).standard_normal(shape), requires_grad)


def close(r, t, rtol=RTOL, atol=ATOL):
    """Assert a retrograd tensor equals a torch tensor (or both are None)."""
    if t is None:
        assert r is None, f"expected None, got {r!r}"
        return
    assert r is not None, f"expected {t!r}, got None"
    np.testing.assert_allclose(np.asarray(r.detach()), t.detach().numpy(), rtol=rtol,
                               atol=atol)
    assert tuple(r.shape) == tuple(t.shape)


def grad_of(x):
    """``x.grad`` without the non-leaf UserWarning (tests of the warning are separate)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return x.grad


def both_raise(fr, ft, exc=RuntimeError, match=None):
    """Both libraries raise ``exc``; retrograd's message matches ``match`` when given."""
    with pytest.raises(exc):
        ft()
    with pytest.raises(exc, match=match):
        fr()


# =========================================================================== backward / grad
def test_backward_scalar_and_gradient_argument():
    rx, tx = rand_pair(3, 4)
    for lib, x in ((R, rx), (torch, tx)):
        y = (x * x).sin()
        y.backward(lib.ones_like(y) * 2.0)
    close(rx.grad, tx.grad)
    rx, tx = rand_pair(3, 4)
    for x in (rx, tx):
        (x.exp() * 3).sum().backward()
    close(rx.grad, tx.grad)


def test_backward_gradient_weights_vjp():
    (rx, tx), (rv, tv) = rand_pair(3, 4), rand_pair(3, 4, seed=1, requires_grad=False)
    (rx * rx * rx).backward(rv)
    (tx * tx * tx).backward(tv)
    close(rx.grad, tx.grad)


def test_autograd_backward_multiple_tensors_and_grad_tensors():
    (rx, tx), (ry, ty) = rand_pair(2, 3), rand_pair(3, seed=1)
    (rw, tw) = rand_pair(2, 3, seed=2, requires_grad=False)
    for lib, x, y, w in ((R, rx, ry, rw), (torch, tx, ty, tw)):
        a = x * y
        b = (x.tanh() + y).sum()
        lib.autograd.backward([a, b], [w, None])
    close(rx.grad, tx.grad)
    close(ry.grad, ty.grad)


def test_autograd_grad_returns_without_touching_grad():
    (rx, tx), (ry, ty) = rand_pair(4), rand_pair(4, seed=1)
    rg = R.autograd.grad((rx * ry).sum(), [rx, ry])
    tg = torch.autograd.grad((tx * ty).sum(), [tx, ty])
    for a, b in zip(rg, tg):
        close(a, b)
        assert not a.requires_grad and a.grad_fn is None
    assert rx.grad is None and ry.grad is None


def test_grad_with_grad_outputs_and_multiple_outputs():
    (rx, tx) = rand_pair(3)
    (rv, tv) = rand_pair(3, seed=5, requires_grad=False)
    rg = R.autograd.grad([rx.sin(), (rx * rx).sum()], rx, grad_outputs=[rv, None])
    tg = torch.autograd.grad([tx.sin(), (tx * tx).sum()], tx, grad_outputs=[tv, None])
    close(rg[0], tg[0])


def test_grad_unused_input_errors_and_allow_unused():
    (rx, tx), (ry, ty) = rand_pair(3), rand_pair(3, seed=1)
    both_raise(lambda: R.autograd.grad((rx * 2).sum(), [rx, ry]),
               lambda: torch.autograd.grad((tx * 2).sum(), [tx, ty]),
               match="allow_unused=True")
    rg = R.autograd.grad((rx * 2).sum(), [rx, ry], allow_unused=True)
    tg = torch.autograd.grad((tx * 2).sum(), [tx, ty], allow_unused=True)
    close(rg[0], tg[0])
    assert rg[1] is None and tg[1] is None
    rg = R.autograd.grad((rx * 2).sum(), [rx, ry], materialize_grads=True)
    tg = torch.autograd.grad((tx * 2).sum(), [tx, ty], materialize_grads=True)
    close(rg[1], tg[1])
    both_raise(lambda: R.autograd.grad((rx * 2).sum(), [ry], allow_unused=False,
                                       materialize_grads=True),
               lambda: torch.autograd.grad((tx * 2).sum(), [ty], allow_unused=False,
                                           materialize_grads=True), ValueError)


def test_grad_input_reachable_but_gradient_blocked_is_none_not_error():
    # y is reachable only through a detached path: PyTorch calls it unused.
    (rx, tx) = rand_pair(3)
    both_raise(lambda: R.autograd.grad((rx.detach() * 2).sum() + 0 * rx.sum().detach(),
                                       [rx]),
               lambda: torch.autograd.grad((tx.detach() * 2).sum() + 0 * tx.sum().detach(),
                                           [tx]))


def test_output_not_requiring_grad_errors():
    rx, tx = rand_pair(3, requires_grad=False)
    both_raise(lambda: (rx * 2).sum().backward(), lambda: (tx * 2).sum().backward(),
               match="does not require grad")
    ry, ty = rand_pair(3)
    both_raise(lambda: R.autograd.grad((rx * 2).sum(), [ry]),
               lambda: torch.autograd.grad((tx * 2).sum(), [ty]),
               match="does not require grad")


def test_input_not_requiring_grad_errors():
    (rx, tx) = rand_pair(3)
    rc, tc = rand_pair(3, requires_grad=False)
    both_raise(lambda: R.autograd.grad((rx * rc).sum(), [rc]),
               lambda: torch.autograd.grad((tx * tc).sum(), [tc]), match="does not require grad")


def test_implicit_grad_needs_scalar():
    rx, tx = rand_pair(2, 3)
    both_raise(lambda: (rx * 2).backward(), lambda: (tx * 2).backward(),
               match="implicitly created only for scalar")
    both_raise(lambda: R.autograd.grad(rx * 2, rx), lambda: torch.autograd.grad(tx * 2, tx),
               match="implicitly created only for scalar")


def test_one_element_non_scalar_output_implicit_grad():
    rx, tx = rand_pair(1, 1)
    (rx * 3).backward()
    (tx * 3).backward()
    close(rx.grad, tx.grad)


def test_backward_on_leaf_itself():
    rx, tx = rand_pair()
    rx.backward()
    tx.backward()
    close(rx.grad, tx.grad)
    rx, tx = rand_pair(3)
    rx.backward(R.ones(3, dtype=R.float64) * 2)
    tx.backward(torch.ones(3, dtype=torch.float64) * 2)
    close(rx.grad, tx.grad)


def test_second_backward_after_free_raises_with_retain_graph_hint():
    rx, tx = rand_pair(3)
    ry, ty = (rx * rx).sum(), (tx * tx).sum()
    ry.backward()
    ty.backward()
    both_raise(ry.backward, ty.backward, match="retain_graph=True")
    # the same through grad()
    ry, ty = (rx.exp()).sum(), (tx.exp()).sum()
    R.autograd.grad(ry, rx)
    torch.autograd.grad(ty, tx)
    both_raise(lambda: R.autograd.grad(ry, rx), lambda: torch.autograd.grad(ty, tx),
               match="retain_graph=True")


def test_graph_that_saved_nothing_can_run_twice():
    rx, tx = rand_pair(3)
    ry, ty = (rx + 2).sum(), (tx + 2).sum()
    ry.backward()
    ry.backward()
    ty.backward()
    ty.backward()
    close(rx.grad, tx.grad)


def test_retain_graph_allows_second_backward_and_accumulates():
    rx, tx = rand_pair(3)
    ry, ty = (rx * rx.sin()).sum(), (tx * tx.sin()).sum()
    ry.backward(retain_graph=True)
    ty.backward(retain_graph=True)
    ry.backward()
    ty.backward()
    close(rx.grad, tx.grad)
    both_raise(ry.backward, ty.backward, match="retain_graph=True")


def test_leaves_accumulate_across_calls():
    rx, tx = rand_pair(2, 2)
    for _ in range(3):
        (rx * rx).sum().backward()
        (tx * tx).sum().backward()
    close(rx.grad, tx.grad)
    # .grad is not aliased to anything: modifying the first result doesn't change the graph
    g = rx.grad
    (rx * 1).sum().backward()
    assert g is rx.grad or np.allclose(g.numpy(), rx.grad.numpy())


def test_grad_not_aliasing_user_gradient():
    rx, tx = rand_pair(3)
    rv = R.ones(3, dtype=R.float64)
    (rx + 0).backward(rv)
    rx.grad.add_(1.0) if not rx.grad.requires_grad else None
    np.testing.assert_array_equal(rv.numpy(), np.ones(3))
    tv = torch.ones(3, dtype=torch.float64)
    (tx + 0).backward(tv)
    tx.grad.add_(1.0)
    close(rx.grad, tx.grad)


def test_non_leaf_grad_is_none_with_warning():
    rx, tx = rand_pair(3)
    ry, ty = rx * 2, tx * 2
    ry.sum().backward()
    ty.sum().backward()
    with pytest.warns(UserWarning, match="not a leaf Tensor"):
        assert ty.grad is None
    with pytest.warns(UserWarning, match="not a leaf Tensor"):
        assert ry.grad is None


def test_retain_grad_accumulates_like_torch():
    rx, tx = rand_pair(3)
    ry, ty = rx * rx, tx * tx
    ry.retain_grad()
    ty.retain_grad()
    rz, tz = (ry.sin() * ry).sum(), (ty.sin() * ty).sum()
    rz.backward(retain_graph=True)
    tz.backward(retain_graph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        close(ry.grad, ty.grad)
    rz.backward()
    tz.backward()
    close(ry.grad, ty.grad)
    close(rx.grad, tx.grad)
    assert ry.retains_grad and ty.retains_grad


def test_retain_grad_on_tensor_used_twice_and_multiple_calls():
    rx, tx = rand_pair(3)
    ys = []
    for x in (rx, tx):
        y = x * 3
        y.retain_grad()
        y.retain_grad()  # a second call must not double the gradient
        (y * y + y).sum().backward()
        ys.append(y)
    close(ys[0].grad, ys[1].grad)


def test_zero_grad_patterns():
    rx, tx = rand_pair(3)
    (rx * rx).sum().backward()
    (tx * tx).sum().backward()
    rx.grad.data.zero_()
    tx.grad.data.zero_()
    close(rx.grad, tx.grad)
    (rx * 3).sum().backward()
    (tx * 3).sum().backward()
    close(rx.grad, tx.grad)
    rx.grad.zero_()
    tx.grad.zero_()
    (rx * rx).sum().backward()
    (tx * tx).sum().backward()
    close(rx.grad, tx.grad)
    rx.grad = None
    tx.grad = None
    (rx * 5).sum().backward()
    (tx * 5).sum().backward()
    close(rx.grad, tx.grad)


# =========================================================================== create_graph
@pytest.mark.parametrize("fn", [lambda x: x ** 4, lambda x: x.sin(), lambda x: x.exp(),
                                lambda x: x.tanh(), lambda x: x.sigmoid(),
                                lambda x: (x * x).log()],
                         ids=["pow4", "sin", "exp", "tanh", "sigmoid", "log"])
def test_third_derivative(fn):
    rx, tx = rand_pair(5)
    results = []
    for lib, x in ((R, rx), (torch, tx)):
        y = fn(x).sum()
        derivs = []
        for _ in range(3):
            (y,) = lib.autograd.grad(y, x, create_graph=True)
            derivs.append(y)
            y = y.sum()
        results.append(derivs)
    for a, b in zip(*results):
        close(a, b, rtol=1e-9)
        assert a.requires_grad


def test_higher_order_through_matmul_and_reductions():
    (ra, ta), (rb, tb) = rand_pair(3, 4), rand_pair(4, 2, seed=1)
    res = []
    for lib, a, b in ((R, ra, rb), (torch, ta, tb)):
        y = ((a @ b).tanh() ** 2).mean() + (a.sum(1) * b.sum(0).sum()).max()
        ga, gb = lib.autograd.grad(y, [a, b], create_graph=True)
        z = (ga * ga).sum() + (gb.exp()).mean()
        hz = lib.autograd.grad(z, [a, b])
        res.append((ga, gb) + tuple(hz))
    for a, b in zip(*res):
        close(a, b, rtol=1e-9)


def test_create_graph_backward_makes_differentiable_grad():
    rx, tx = rand_pair(4)
    gs = []
    for x in (rx, tx):
        (x ** 3).sum().backward(create_graph=True)
        assert x.grad.requires_grad
        assert type(x.grad.grad_fn).__name__ == "CopyBackwards"  # a copy, not a graph tensor
        gs.append(x.grad)
        x.grad = None
    gs[0].sum().backward()
    gs[1].sum().backward()
    close(rx.grad, tx.grad)
    close(gs[0], gs[1])


def test_create_graph_accumulation_stays_differentiable():
    rx, tx = rand_pair(3)
    for x in (rx, tx):
        (x ** 3).sum().backward(create_graph=True)
        (x ** 2).sum().backward(create_graph=True)
    assert rx.grad.requires_grad == tx.grad.requires_grad
    close(rx.grad, tx.grad)


def _mlp_loss(lib, params, xb, yb):
    w1, b1, w2, b2 = params
    h = (xb @ w1 + b1).tanh()
    out = h @ w2 + b2
    return ((out - yb) ** 2).mean()


def test_hessian_vector_product_of_tanh_mlp():
    rng = np.random.default_rng(3)
    shapes = [(4, 5), (5,), (5, 2), (2,)]
    arrays = [rng.standard_normal(s) * 0.5 for s in shapes]
    vs = [rng.standard_normal(s) for s in shapes]
    xb, yb = rng.standard_normal((6, 4)), rng.standard_normal((6, 2))
    res = []
    for lib in (R, torch):
        params = [lib.tensor(a.copy(), requires_grad=True) for a in arrays]
        loss = _mlp_loss(lib, params, lib.tensor(xb), lib.tensor(yb))
        gs = lib.autograd.grad(loss, params, create_graph=True)
        dot = sum((g * lib.tensor(v)).sum() for g, v in zip(gs, vs))
        hv = lib.autograd.grad(dot, params)
        res.append(list(gs) + list(hv) + [loss])
    for a, b in zip(*res):
        close(a, b, rtol=1e-9)


# =========================================================================== inputs=
def test_backward_inputs_leaves_only_those_accumulate():
    (rx, tx), (ry, ty) = rand_pair(3), rand_pair(3, seed=1)
    (rx * ry).sum().backward(inputs=[rx])
    (tx * ty).sum().backward(inputs=[tx])
    close(rx.grad, tx.grad)
    assert ry.grad is None and ty.grad is None
    (rx * ry).sum().backward(inputs=ry)
    (tx * ty).sum().backward(inputs=ty)
    close(ry.grad, ty.grad)


def test_backward_inputs_non_leaf():
    (rx, tx) = rand_pair(3)
    res = []
    for x in (rx, tx):
        y = x.sin()
        z = y * y
        (z * x).sum().backward(inputs=[y, x])
        res.append((grad_of(y), x.grad))
    for a, b in zip(*res):
        close(a, b)


def test_backward_inputs_non_leaf_accumulates_twice():
    (rx, tx) = rand_pair(3)
    res = []
    for x in (rx, tx):
        y = x.exp()
        z = (y * y).sum()
        z.backward(inputs=[y], retain_graph=True)
        z.backward(inputs=[y])
        res.append((grad_of(y), x.grad))
    for a, b in zip(*res):
        close(a, b)


def test_backward_inputs_empty_errors():
    (rx, tx) = rand_pair(3)
    both_raise(lambda: (rx * 2).sum().backward(inputs=[]),
               lambda: (tx * 2).sum().backward(inputs=[]))


def test_grad_wrt_intermediate():
    (rx, tx) = rand_pair(3)
    res = []
    for lib, x in ((R, rx), (torch, tx)):
        y = x * 2
        z = (y.sin() * x).sum()
        res.append(lib.autograd.grad(z, [y, x]))
    for a, b in zip(*res):
        close(a, b)


def test_grad_wrt_intermediate_create_graph():
    (rx, tx) = rand_pair(3)
    res = []
    for lib, x in ((R, rx), (torch, tx)):
        y = x * x
        z = (y.sin() * y).sum()
        (gy,) = lib.autograd.grad(z, y, create_graph=True)
        res.append((gy,) + lib.autograd.grad(gy.sum(), x))
    for a, b in zip(*res):
        close(a, b)


# =========================================================================== hooks
def _run_both(build):
    """Run ``build(lib, x, log)`` for both libraries; return (retrograd, torch) results."""
    out = []
    for lib, x in zip((R, torch), rand_pair(3)):
        log = []
        result = build(lib, x, log)
        out.append((x, log, result))
    return out


def test_leaf_hook_replaces_gradient():
    def build(lib, x, log):
        x.register_hook(lambda g: log.append(g.detach().clone()) or g * 10)
        (x * x).sum().backward()

    (rx, rlog, _), (tx, tlog, _) = _run_both(build)
    close(rx.grad, tx.grad)
    assert len(rlog) == len(tlog) == 1
    close(rlog[0], tlog[0])


def test_hook_returning_none_keeps_gradient_and_handle_removes():
    def build(lib, x, log):
        h1 = x.register_hook(lambda g: log.append("a"))
        x.register_hook(lambda g: log.append("b") or g * 2)
        x.register_hook(lambda g: log.append("c"))
        (x * 3).sum().backward()
        h1.remove()
        (x * 3).sum().backward()

    (rx, rlog, _), (tx, tlog, _) = _run_both(build)
    assert rlog == tlog == ["a", "b", "c", "b", "c"]
    close(rx.grad, tx.grad)


def test_intermediate_used_twice_gets_one_hook_call_with_summed_grad():
    def build(lib, x, log):
        y = x * 2
        y.register_hook(lambda g: log.append(g.detach().clone()))
        (y * y.sin() + y).sum().backward()

    (rx, rlog, _), (tx, tlog, _) = _run_both(build)
    assert len(rlog) == len(tlog) == 1
    close(rlog[0], tlog[0])
    close(rx.grad, tx.grad)


def test_intermediate_hook_replacement_flows_to_leaves():
    def build(lib, x, log):
        y = x.exp()
        y.register_hook(lambda g: g * 0.5)
        y.register_hook(lambda g: g + 1)
        (y * y).sum().backward()

    (rx, _, _), (tx, _, _) = _run_both(build)
    close(rx.grad, tx.grad)


def test_hook_sees_retain_grad_value_after_hooks():
    # retain_grad stores the gradient after the tensor's hooks have run (torch >= 2.0)
    def build(lib, x, log):
        y = x * 2
        y.retain_grad()
        y.register_hook(lambda g: g * 3)
        y.sum().backward()
        return grad_of(y)

    (rx, _, ry), (tx, _, ty) = _run_both(build)
    close(ry, ty)
    close(rx.grad, tx.grad)


def test_hook_order_leaf_vs_intermediate():
    def build(lib, x, log):
        y = x * 2
        z = y.sin()
        x.register_hook(lambda g: log.append("x"))
        y.register_hook(lambda g: log.append("y"))
        z.register_hook(lambda g: log.append("z"))
        z.sum().backward()

    (_, rlog, _), (_, tlog, _) = _run_both(build)
    assert rlog == tlog


def test_hook_on_tensor_not_requiring_grad_errors():
    rx, tx = rand_pair(3, requires_grad=False)
    both_raise(lambda: rx.register_hook(lambda g: g), lambda: tx.register_hook(lambda g: g))


def test_hooks_run_under_grad_too():
    def build(lib, x, log):
        y = x * x
        y.register_hook(lambda g: log.append(g.detach().clone()) or g * 2)
        return lib.autograd.grad(y.sum(), x)[0]

    (_, rlog, rg), (_, tlog, tg) = _run_both(build)
    close(rg, tg)
    close(rlog[0], tlog[0])


def _structure(fn):
    """grad_fn.next_functions as nested names, down to the leaves."""
    if fn is None:
        return None
    name = type(fn).__name__
    if name == "AccumulateGrad":
        return name
    return (name, tuple((_structure(f), nr) for f, nr in fn.next_functions))


def test_next_functions_structure_matches_torch():
    (rx, tx), (ry, ty) = rand_pair(3), rand_pair(3, seed=1)
    rc, tc = rand_pair(3, seed=2, requires_grad=False)
    rz = ((rx * rc + ry).exp() * 2).sum()
    tz = ((tx * tc + ty).exp() * 2).sum()
    assert _structure(rz.grad_fn) == _structure(tz.grad_fn)
    # constants give (None, 0); leaves share one AccumulateGrad
    node = rz.grad_fn
    for _ in range(4):  # Sum -> Mul -> Exp -> Add -> Mul(x, c)
        node = node.next_functions[0][0]
    mul = node
    assert mul.name() == "MulBackward0"
    assert mul.next_functions[1] == (None, 0)
    acc = mul.next_functions[0][0]
    assert acc.variable is rx
    rw = rx * 3
    assert rw.grad_fn.next_functions[0][0] is acc


def test_next_functions_multi_output_nr():
    (rx, tx) = rand_pair(4, 3)
    ra, rb = rx.max(dim=1)
    ta, tb = tx.max(dim=1)
    assert _structure((ra * 2).grad_fn) == _structure((ta * 2).grad_fn)


def test_grad_fn_hooks_match_torch():
    def build(lib, x, log):
        y = x * x
        z = y.sin()
        z.grad_fn.register_prehook(lambda gouts: log.append(("pre", len(gouts))))

        def post(gins, gouts):
            log.append(("post", len(gins), len(gouts)))
            return tuple(g * 2 if g is not None else None for g in gins)

        h = z.grad_fn.register_hook(post)
        z.sum().backward(retain_graph=True)
        h.remove()
        z.sum().backward()
        return z

    (rx, rlog, _), (tx, tlog, _) = _run_both(build)
    assert rlog == tlog
    close(rx.grad, tx.grad)


def test_grad_fn_prehook_replaces_grad_outputs():
    def build(lib, x, log):
        y = x.exp()
        y.grad_fn.register_prehook(lambda gouts: (gouts[0] * 3,))
        y.sum().backward()

    (rx, _, _), (tx, _, _) = _run_both(build)
    close(rx.grad, tx.grad)


def test_grad_fn_name_and_call():
    (rx, tx) = rand_pair(3)
    for op in (lambda x: x * 2, lambda x: x + 1, lambda x: x.exp(), lambda x: x.sum(),
               lambda x: x @ x, lambda x: x.tanh(), lambda x: -x, lambda x: x / 2):
        assert type(op(rx).grad_fn).__name__ == type(op(tx).grad_fn).__name__
        assert op(rx).grad_fn.name() == op(tx).grad_fn.name()


# =========================================================================== grad modes
def test_no_grad_enable_grad_nesting_and_decorators():
    for lib, x in zip((R, torch), rand_pair(3)):
        with lib.no_grad():
            assert not lib.is_grad_enabled()
            y = x * 2
            with lib.enable_grad():
                assert lib.is_grad_enabled()
                z = x * 2
            w = x * 2
        assert lib.is_grad_enabled()
        assert not y.requires_grad and z.requires_grad and not w.requires_grad

        @lib.no_grad()
        def f(t, lib=lib):
            return t * 2, lib.is_grad_enabled()

        out, mode = f(x)
        assert not out.requires_grad and not mode and lib.is_grad_enabled()

        @lib.enable_grad()
        def g(t):
            return t * 2

        with lib.no_grad():
            assert g(x).requires_grad
            assert not lib.is_grad_enabled()


def test_set_grad_enabled_function_context_and_decorator():
    for lib, x in zip((R, torch), rand_pair(3)):
        lib.set_grad_enabled(False)
        try:
            assert not (x * 2).requires_grad
        finally:
            lib.set_grad_enabled(True)
        assert (x * 2).requires_grad
        with lib.set_grad_enabled(False):
            assert not (x * 2).requires_grad
            with lib.set_grad_enabled(True):
                assert (x * 2).requires_grad
            assert not lib.is_grad_enabled()
        assert lib.is_grad_enabled()

        @lib.set_grad_enabled(False)
        def f(t):
            return t * 2

        assert lib.is_grad_enabled()
        assert not f(x).requires_grad
        assert lib.is_grad_enabled()


def test_no_grad_restores_on_exception():
    for lib in (R, torch):
        with pytest.raises(ValueError):
            with lib.no_grad():
                raise ValueError
        assert lib.is_grad_enabled()


def test_grad_mode_is_thread_local():
    rx, _ = rand_pair(3)
    results = {}
    inside = threading.Event()
    proceed = threading.Event()

    def worker():
        with R.no_grad():
            results["worker_inside"] = R.is_grad_enabled()
            inside.set()
            proceed.wait(5)
            results["worker_tensor"] = (rx * 2).requires_grad

    t = threading.Thread(target=worker)
    t.start()
    inside.wait(5)
    # the worker is inside no_grad right now; the main thread still records
    results["main"] = R.is_grad_enabled()
    results["main_tensor"] = (rx * 2).requires_grad
    proceed.set()
    t.join()
    assert results == {"worker_inside": False, "worker_tensor": False, "main": True,
                       "main_tensor": True}


def test_new_thread_starts_with_grad_enabled():
    seen = []
    with R.no_grad():
        t = threading.Thread(target=lambda: seen.append(R.is_grad_enabled()))
        t.start()
        t.join()
    assert seen == [True]


def test_backward_under_no_grad_still_computes():
    for lib, x in zip((R, torch), rand_pair(3)):
        y = (x * x).sum()
        with lib.no_grad():
            y.backward()
    rx, tx = rand_pair(3)
    for lib, x in ((R, rx), (torch, tx)):
        y = (x * x).sum()
        with lib.no_grad():
            y.backward()
    close(rx.grad, tx.grad)


def test_leaf_hook_runs_for_grad_too():
    def build(lib, x, log):
        x.register_hook(lambda g: log.append("x") or g * 2)
        return lib.autograd.grad((x * x).sum(), x)[0]

    (rx, rlog, rg), (tx, tlog, tg) = _run_both(build)
    assert rlog == tlog
    close(rg, tg)
    assert rx.grad is None and tx.grad is None


# =========================================================================== Function
def _custom_functions(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.save_for_backward(x)
            ctx.scale = scale
            return x ** 3 * scale

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2 * ctx.scale, None

    class SplitTwo(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b, a + b

        @staticmethod
        def backward(ctx, ga, gb):
            a, b = ctx.saved_tensors
            return ga * b + gb, ga * a + gb

    class Needs(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.seen = ctx.needs_input_grad
            return a * b

        @staticmethod
        def backward(ctx, g):
            return (g * 2 if ctx.needs_input_grad[0] else None,
                    g * 3 if ctx.needs_input_grad[1] else None)

    class WithIndex(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            idx = x.argmax()
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(x)
            return x.exp(), idx

        @staticmethod
        def backward(ctx, g, gidx):
            (x,) = ctx.saved_tensors
            return g * x.exp()

    class WrongCount(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return (g,)

    return Cube, SplitTwo, Needs, WithIndex, WrongCount


def test_custom_function_saved_tensors_and_non_tensor_args():
    res = []
    for lib, x in zip((R, torch), rand_pair(4)):
        Cube = _custom_functions(lib)[0]
        y = Cube.apply(x, 2.5)
        assert type(y.grad_fn).__name__ == "CubeBackward"
        y.sum().backward()
        res.append((y, x.grad))
    for a, b in zip(*res):
        close(a, b)


def test_custom_function_multiple_outputs():
    res = []
    for lib, (a, b) in ((R, (rand_pair(3)[0], rand_pair(3, seed=1)[0])),
                        (torch, (rand_pair(3)[1], rand_pair(3, seed=1)[1]))):
        SplitTwo = _custom_functions(lib)[1]
        p, s = SplitTwo.apply(a, b)
        (p.sin() + s * s).sum().backward()
        res.append((p, s, a.grad, b.grad))
        # only one output used: the other gets a zero gradient (materialized)
        a.grad = b.grad = None
        p, s = SplitTwo.apply(a, b)
        p.sum().backward()
        res[-1] += (a.grad, b.grad)
    for x, y in zip(*res):
        close(x, y)


def test_custom_function_needs_input_grad_and_none_grads():
    res = []
    for lib, (a, c) in ((R, (rand_pair(3)[0], rand_pair(3, 1, requires_grad=False)[0])),
                        (torch, (rand_pair(3)[1], rand_pair(3, 1, requires_grad=False)[1]))):
        Needs = _custom_functions(lib)[2]
        y = Needs.apply(a, c)
        y.sum().backward()
        res.append((y.grad_fn.seen if hasattr(y.grad_fn, "seen") else None, a.grad))
    assert res[0][0] == res[1][0] == (True, False)
    close(res[0][1], res[1][1])


def test_custom_function_mark_non_differentiable():
    res = []
    for lib, x in zip((R, torch), rand_pair(4)):
        WithIndex = _custom_functions(lib)[3]
        y, idx = WithIndex.apply(x)
        assert not idx.requires_grad and y.requires_grad
        y.sum().backward()
        res.append((y, x.grad, idx))
    for a, b in zip(*res):
        close(a, b)


def test_custom_function_wrong_number_of_grads():
    (ra, ta), (rb, tb) = rand_pair(3), rand_pair(3, seed=1)
    RWrong = _custom_functions(R)[4]
    TWrong = _custom_functions(torch)[4]
    both_raise(lambda: RWrong.apply(ra, rb).sum().backward(),
               lambda: TWrong.apply(ta, tb).sum().backward(),
               match="incorrect number of gradients")


def test_custom_function_higher_order():
    res = []
    for lib, x in zip((R, torch), rand_pair(4)):
        Cube = _custom_functions(lib)[0]
        y = Cube.apply(x, 2.0).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        res.append((g, gg))
    for a, b in zip(*res):
        close(a, b)


def test_custom_function_no_grad_inputs_does_not_record():
    for lib, x in zip((R, torch), rand_pair(3, requires_grad=False)):
        Cube = _custom_functions(lib)[0]
        y = Cube.apply(x, 1.0)
        assert y.grad_fn is None and not y.requires_grad
        with lib.no_grad():
            (xx,) = rand_pair(3)[:1] if lib is R else rand_pair(3)[1:]
            assert Cube.apply(xx, 1.0).grad_fn is None


def test_custom_function_saved_tensor_freed_after_backward():
    res = []
    for lib, x in zip((R, torch), rand_pair(3)):
        Cube = _custom_functions(lib)[0]
        y = Cube.apply(x, 1.0)
        y.sum().backward()
        with pytest.raises(RuntimeError) as info:
            _ = y.grad_fn.saved_tensors
        res.append(str(info.value))
    assert "retain_graph" in res[0] or "backward" in res[0]


# =========================================================================== in-place
def test_version_counter_matches_torch():
    res = []
    for x in rand_pair(3, requires_grad=False):
        v = [x._version]
        x.add_(1)
        v.append(x._version)
        x.mul_(2)
        v.append(x._version)
        y = x.view(3) if hasattr(x, "view") else x
        y.sub_(1)
        v.append((x._version, y._version))
        d = x.detach()
        d.zero_()
        v.append((x._version, d._version))
        x[0] = 5.0
        v.append(x._version)
        x += 1
        v.append(x._version)
        res.append(v)
    assert res[0] == res[1]


def test_modified_saved_tensor_raises_naming_op_and_versions():
    rx, tx = rand_pair(3)
    ra, ta = rx * 1, tx * 1
    ry, ty = (ra * ra).sum(), (ta * ta).sum()
    ra.add_(1)
    ta.add_(1)
    both_raise(ry.backward, ty.backward, match=r"MulBackward0.*version 1; expected version 0")
    # saved outputs (exp saves its result) too
    ra, ta = rx * 1, tx * 1
    re_, te = ra.exp(), ta.exp()
    rs, ts = re_.sum(), te.sum()
    re_.mul_(2)
    te.mul_(2)
    both_raise(rs.backward, ts.backward, match=r"ExpBackward0")


def test_inplace_on_unused_saved_is_fine():
    # add saves nothing: modifying its input afterwards is harmless (as in torch)
    rx, tx = rand_pair(3)
    ra, ta = rx * 1, tx * 1
    ry, ty = (ra + 2).sum(), (ta + 2).sum()
    ra.mul_(3)
    ta.mul_(3)
    ry.backward()
    ty.backward()
    close(rx.grad, tx.grad)


def test_inplace_chain_gradient_matches():
    rx, tx = rand_pair(3)
    for x in (rx, tx):
        y = x * 2
        y.mul_(x)
        y.add_(x)
        y.exp_()
        y.sum().backward()
    close(rx.grad, tx.grad)


def test_inplace_on_leaf_requiring_grad_raises_and_allowed_under_no_grad():
    rx, tx = rand_pair(3)
    both_raise(lambda: rx.add_(1), lambda: tx.add_(1), match="leaf Variable")
    both_raise(lambda: rx.mul_(2), lambda: tx.mul_(2), match="leaf Variable")
    for lib, x in ((R, rx), (torch, tx)):
        with lib.no_grad():
            x.mul_(2)
            x.add_(1)
        assert x.requires_grad and x.is_leaf
    close(rx, tx)
    assert rx._version == tx._version


def test_grad_zero_inplace_then_backward():
    rx, tx = rand_pair(3)
    for x in (rx, tx):
        (x * x).sum().backward()
        x.grad.data.zero_()
        (x * 4).sum().backward()
        x.grad.zero_()
        (x.sin()).sum().backward()
    close(rx.grad, tx.grad)


# =========================================================================== scale & memory
def test_million_node_chain_backward_and_teardown():
    # iterative engine: no RecursionError; CPython's trashcan tears the chain down safely
    x = R.tensor(1.0, dtype=R.float64, requires_grad=True)
    y = x
    for _ in range(1_000_000):
        y = y * 1.0000001
    y.backward()
    np.testing.assert_allclose(x.grad.item(), np.exp(1_000_000 * np.log1p(1e-7)), rtol=1e-8)
    del y
    gc.collect()
    assert x.grad is not None


def test_deep_chain_create_graph():
    # the recorded backward graph is as deep as the forward one; it too must be iterative
    rx, tx = pair(0.5)
    res = []
    for lib, x in ((R, rx), (torch, tx)):
        y = x
        for _ in range(3000):
            y = (y * 0.999).sin() + y * 0.001
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad(g, x)
        res.append((g, gg))
    for a, b in zip(*res):
        close(a, b, rtol=1e-8)


def _sin_chain(n, size):
    x = R.tensor(np.linspace(0, 1, size), requires_grad=True)
    y = x
    for _ in range(n):
        y = y.sin()  # SinBackward0 saves its input tensor
    return x, y


def test_saved_values_freed_as_backward_runs():
    x, y = _sin_chain(5, 10)
    mid = y.grad_fn.next_functions[0][0].saved[0]  # an intermediate, now held only by a node
    ref = weakref.ref(mid)
    del mid
    assert ref() is not None
    y.sum().backward()
    # without retain_graph every node dropped what it saved, so the intermediate is gone
    # although y and the whole chain of nodes are still alive
    assert ref() is None
    node = y.grad_fn
    while node.name() != "AccumulateGrad":
        assert node.saved is None
        node = node.next_functions[0][0]


def test_retain_graph_keeps_saved_values():
    x, y = _sin_chain(5, 10)
    ref = weakref.ref(y.grad_fn.next_functions[0][0].saved[0])
    y.sum().backward(retain_graph=True)
    assert ref() is not None
    y.sum().backward()
    assert ref() is None


def test_memory_released_during_backward_tracemalloc():
    import tracemalloc

    n, size = 20, 50_000  # 20 saved float64 arrays of 400 kB = 8 MB
    tracemalloc.start()
    try:
        x, y = _sin_chain(n, size)
        before = tracemalloc.get_traced_memory()[0]
        y.sum().backward()
        after = tracemalloc.get_traced_memory()[0]
        # the whole chain's saved arrays are gone (only x.grad, 400 kB, was added), and the
        # peak stayed well below keeping every saved array plus every gradient
        assert before - after > 0.8 * n * size * 8
        x2, y2 = _sin_chain(n, size)
        keep_before = tracemalloc.get_traced_memory()[0]
        y2.sum().backward(retain_graph=True)
        keep_after = tracemalloc.get_traced_memory()[0]
        assert keep_after - keep_before > -size * 8  # nothing freed with retain_graph
    finally:
        tracemalloc.stop()


# =========================================================================== more contracts
def test_backward_inputs_non_leaf_with_retain_grad_accumulates_once():
    res = []
    for x in rand_pair(3):
        y = x * 2
        y.retain_grad()
        (y * y).sum().backward(inputs=[y])
        res.append((grad_of(y), x.grad))
    close(res[0][0], res[1][0])
    assert res[0][1] is None and res[1][1] is None


def test_backward_inputs_unused_leaf():
    (rx, tx), (ry, ty) = rand_pair(3), rand_pair(3, seed=1)
    for x, y in ((rx, ry), (tx, ty)):
        (x * 2).sum().backward(inputs=[x, y])
    close(rx.grad, tx.grad)
    assert ry.grad is None and ty.grad is None


def test_grad_of_output_wrt_itself_and_repeated_inputs():
    res = []
    for lib, x in zip((R, torch), rand_pair(3)):
        y = x.sin()
        res.append(lib.autograd.grad(y, [y, x, x], lib.ones_like(y)))
    for a, b in zip(*res):
        close(a, b)
    rx, tx = rand_pair(3)
    close(R.autograd.grad(rx, rx, R.ones_like(rx))[0],
          torch.autograd.grad(tx, tx, torch.ones_like(tx))[0])


def test_grad_wrt_grad_outputs_double_backward_trick():
    # jvp by double vjp: the gradient is linear in grad_outputs and differentiable in it
    res = []
    for lib, x in zip((R, torch), rand_pair(4)):
        v = lib.zeros(4, dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(x.sin() * x, x, v, create_graph=True)
        u = lib.tensor(np.arange(4.0))
        (jv,) = lib.autograd.grad(g, v, u)
        res.append(jv)
    close(*res)


def test_grad_wrt_multi_output_values():
    res = []
    for lib, x in zip((R, torch), rand_pair(3, 4)):
        values, idx = x.max(dim=1)
        loss = (values.exp() * 2).sum()
        res.append(lib.autograd.grad(loss, [values, x]))
    for a, b in zip(*res):
        close(a, b)


def test_root_gradient_dtype_is_cast_like_torch():
    rx = R.tensor([1.0, 2.0], requires_grad=True)  # float32
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    (rx * 3).backward(R.tensor([1.0, 1.0], dtype=R.float64))
    (tx * 3).backward(torch.tensor([1.0, 1.0], dtype=torch.float64))
    assert str(rx.grad.dtype).split(".")[-1] == str(tx.grad.dtype).split(".")[-1]
    close(rx.grad, tx.grad)


def test_root_gradient_shape_mismatch_errors():
    rx, tx = rand_pair(2, 3)
    both_raise(lambda: (rx * 2).backward(R.ones(3, 2, dtype=R.float64)),
               lambda: (tx * 2).backward(torch.ones(3, 2, dtype=torch.float64)),
               match=r"\[3, 2\].*\[2, 3\]")


def test_hook_returning_wrong_shape_errors():
    for x in rand_pair(3):
        y = x * 2
        y.register_hook(lambda g: g.sum())
        with pytest.raises(RuntimeError):
            y.sum().backward()


def test_grad_accumulates_in_place_into_existing_buffer():
    res = []
    for x in rand_pair(3):
        (x * x).sum().backward()
        g = x.grad
        (x * 3).sum().backward()
        res.append((g is x.grad, x.grad.clone()))
    assert res[0][0] == res[1][0]
    close(res[0][1], res[1][1])


def test_user_grad_requiring_grad_accumulates_out_of_place():
    res = []
    for lib, x in zip((R, torch), rand_pair(3)):
        x.grad = lib.ones(3, dtype=lib.float64, requires_grad=True)
        old = x.grad
        (x * x).sum().backward()
        res.append((x.grad is old, x.grad.requires_grad, x.grad))
    assert res[0][:2] == res[1][:2]
    close(res[0][2], res[1][2])


def test_data_edits_do_not_bump_version():
    res = []
    for x in rand_pair(3):
        y = x * 1
        z = (y * y).sum()
        y.data.mul_(2)  # invisible to autograd: no error, uses the new values
        z.backward()
        res.append((y._version, x.grad))
    assert res[0][0] == res[1][0]
    close(res[0][1], res[1][1])


def test_retain_grad_on_leaf_is_noop_and_on_non_requiring_errors():
    for x in rand_pair(3):
        x.retain_grad()
        (x * 2).sum().backward()
    rc, tc = rand_pair(3, requires_grad=False)
    both_raise(rc.retain_grad, tc.retain_grad, match="requires_grad=False")


def test_requires_grad_false_on_non_leaf_errors():
    rx, tx = rand_pair(3)
    ry, ty = rx * 2, tx * 2
    both_raise(lambda: ry.requires_grad_(False), lambda: ty.requires_grad_(False),
               match="leaf")


def test_retain_grad_with_create_graph():
    res = []
    for x in rand_pair(3):
        y = x ** 3
        y.retain_grad()
        (y * y).sum().backward(create_graph=True)
        res.append((grad_of(y), x.grad, grad_of(y).requires_grad))
    close(res[0][0], res[1][0])
    close(res[0][1], res[1][1])
    assert res[0][2] == res[1][2]


def test_accumulate_grad_node_post_hook():
    res = []
    for x in rand_pair(3):
        log = []
        y = x * 2
        acc = y.grad_fn.next_functions[0][0]
        acc.register_hook(lambda gi, go, log=log: log.append((len(gi), len(go))))
        y.sum().backward()
        res.append(log)
    assert res[0] == res[1]


def test_post_accumulate_grad_hook():
    res = []
    for x in rand_pair(3):
        log = []
        x.register_post_accumulate_grad_hook(lambda t, log=log: log.append(t.grad.clone()))
        (x * 2).sum().backward()
        (x * x).sum().backward()
        res.append(log)
    assert len(res[0]) == len(res[1]) == 2
    for a, b in zip(*res):
        close(a, b)


def test_function_set_materialize_grads_false_and_returning_input():
    res = []
    for lib, x in zip((R, torch), rand_pair(3)):
        seen = []

        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.set_materialize_grads(False)
                return a * 2, a * 3

            @staticmethod
            def backward(ctx, g1, g2, seen=seen):
                seen.append((g1 is None, g2 is None))
                out = 0
                if g1 is not None:
                    out = out + g1 * 2
                if g2 is not None:
                    out = out + g2 * 3
                return out

        class Ident(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a

            @staticmethod
            def backward(ctx, g):
                return g * 5

        p, _ = Two.apply(x)
        p.sum().backward()
        y = Ident.apply(x)
        assert y is not x and y.grad_fn is not None
        y.sum().backward()
        res.append((seen, x.grad))
    assert res[0][0] == res[1][0]
    close(res[0][1], res[1][1])


def test_function_returning_extra_none_grads_ok_and_extra_tensor_errors():
    for lib, x in zip((R, torch), rand_pair(3)):
        class ExtraNone(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2, None

        ExtraNone.apply(x).sum().backward()

        class ExtraTensor(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2, g

        with pytest.raises(RuntimeError, match="incorrect number of gradients"):
            ExtraTensor.apply(x).sum().backward()


def test_leaf_hooks_run_once_with_backward_inputs_and_not_on_skipped_leaves():
    def build(lib, x, log):
        y = lib.ones(3, dtype=lib.float64, requires_grad=True)
        x.register_hook(lambda g: log.append("x") or g * 2)
        y.register_hook(lambda g: log.append("y"))
        (x * y).sum().backward(inputs=[x])
        lib.autograd.grad((x * y).sum(), [x])
        return y.grad

    (rx, rlog, ry), (tx, tlog, ty) = _run_both(build)
    assert rlog == tlog
    close(rx.grad, tx.grad)
    assert ry is None and ty is None


def test_capture_sees_tensor_hooks_but_not_node_prehooks():
    def build(lib, x, log):
        y = x.sin()
        y.register_hook(lambda g: g * 2)
        y.grad_fn.register_prehook(lambda gouts: (gouts[0] * 100,))
        gy, gx = lib.autograd.grad((y * y).sum(), [y, x])
        return gy, gx

    (_, _, (rgy, rgx)), (_, _, (tgy, tgx)) = _run_both(build)
    close(rgy, tgy)
    close(rgx, tgx)


def test_hooks_see_create_graph_tensors():
    def build(lib, x, log):
        y = x ** 3
        y.register_hook(lambda g: log.append(g.requires_grad))
        x.register_hook(lambda g: log.append(g.requires_grad))
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        return g

    (_, rlog, rg), (_, tlog, tg) = _run_both(build)
    assert rlog == tlog
    close(rg, tg)


def test_capture_order_with_hooks_matches_torch_in_every_mode():
    def build(lib, x, log):
        out = []
        for mode in ("grad_needed", "grad_alone", "backward_needed", "backward_alone"):
            x.grad = None
            y = x.sin()
            y.register_hook(lambda g: g * 2)
            loss = (y * y).sum()
            if mode == "grad_needed":
                out += lib.autograd.grad(loss, [y, x])
            elif mode == "grad_alone":
                out += lib.autograd.grad(loss, [y])
            else:
                loss.backward(inputs=[y, x] if mode == "backward_needed" else [y])
                out += [grad_of(y), x.grad]
        return out

    (_, _, rout), (_, _, tout) = _run_both(build)
    for a, b in zip(rout, tout):
        close(a, b)


@pytest.mark.parametrize("build", [
    lambda lib, x: (x * 2).sum(),
    lambda lib, x: (x / 2).sum(),
    lambda lib, x: (x.expand(2, 3) + 1).mean(),
    lambda lib, x: (-x).sum(),
    lambda lib, x: x.reshape(3, 1).t().sum(),
    lambda lib, x: x[1:].sum(),
    lambda lib, x: (x - 1).sum(),
    lambda lib, x: x.clone().sum(),
    lambda lib, x: lib.cat([x, x]).sum(),
    lambda lib, x: x.float().sum(),
    lambda lib, x: (x ** 2).sum(),
    lambda lib, x: x.exp().sum(),
], ids=["mul_scalar", "div_scalar", "expand_mean", "neg", "reshape_t", "slice", "sub",
        "clone", "cat", "to", "pow", "exp"])
def test_second_backward_raises_exactly_when_torch_does(build):
    outcomes = []
    for lib, x in zip((R, torch), rand_pair(3)):
        y = build(lib, x)
        y.backward()
        try:
            y.backward()
            outcomes.append(("ok", x.grad.detach().numpy().copy()))
        except RuntimeError as e:
            assert lib is torch or "retain_graph=True" in str(e)
            outcomes.append(("error", None))
    assert outcomes[0][0] == outcomes[1][0]
    if outcomes[0][0] == "ok":
        np.testing.assert_allclose(outcomes[0][1], outcomes[1][1], rtol=1e-6)


def test_leaf_used_twice_one_hook_call():
    def build(lib, x, log):
        x.register_hook(lambda g: log.append(g.detach().clone()))
        (x * x + x.sin() + x).sum().backward()

    (rx, rlog, _), (tx, tlog, _) = _run_both(build)
    assert len(rlog) == len(tlog) == 1
    close(rlog[0], tlog[0])
    close(rx.grad, tx.grad)


def test_setitem_on_non_leaf_gradients():
    (rx, tx), (rz, tz) = rand_pair(3), rand_pair(2, seed=1)
    for x, z in ((rx, rz), (tx, tz)):
        y = x * 1
        y[0] = z[0] * 2
        y[1:] = x[1:].exp() * z.sum()
        (y * y).sum().backward()
    close(rx.grad, tx.grad)
    close(rz.grad, tz.grad)
    # y[1:] saved by the multiplication, then overwritten: both refuse
    losses = []
    for x, z in ((rx, rz), (tx, tz)):
        y = x * 1
        y[1:] = y[1:] * z.sum()
        losses.append((y * y).sum())
    with pytest.raises(RuntimeError) as tinfo:
        losses[1].backward()
    versions = re.search(r"version \d+; expected version \d+", str(tinfo.value)).group()
    with pytest.raises(RuntimeError, match=versions):
        losses[0].backward()


def test_calling_grad_fn_directly():
    (rx, tx), (ry, ty) = rand_pair(3), rand_pair(3, seed=1)
    rg = (rx * ry).grad_fn(R.ones(3, dtype=R.float64))
    tg = (tx * ty).grad_fn(torch.ones(3, dtype=torch.float64))
    assert len(rg) == len(tg) == 2
    for a, b in zip(rg, tg):
        close(a, b)


def test_custom_function_mark_dirty_in_place():
    res = []
    for lib, x in zip((R, torch), rand_pair(3)):
        class MulTwoInPlace(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.mark_dirty(a)
                return a.mul_(2)

            @staticmethod
            def backward(ctx, g):
                return g * 2

        y = x * 1
        v = y._version
        z = MulTwoInPlace.apply(y)
        (z * z).sum().backward()
        res.append((z, x.grad, y._version - v, type(z.grad_fn).__name__, z is y))
    close(res[0][0], res[1][0])
    close(res[0][1], res[1][1])
    assert res[0][2:] == res[1][2:]
    # on a leaf that requires grad it is refused, as any in-place op
    fns = []
    for lib, x in zip((R, torch), rand_pair(3)):
        class Dirty(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.mark_dirty(a)
                return a.mul_(2)

            @staticmethod
            def backward(ctx, g):
                return g * 2

        fns.append(lambda fn=Dirty, x=x: fn.apply(x))
    both_raise(fns[0], fns[1], match="leaf Variable")


def test_custom_function_saving_its_output_higher_order():
    res = []
    for lib, x in zip((R, torch), rand_pair(4)):
        class Exp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                out = a.exp()
                ctx.save_for_backward(out)
                return out

            @staticmethod
            def backward(ctx, g):
                (out,) = ctx.saved_tensors
                return g * out

        y = Exp.apply(x).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        res.append((g, gg))
    for a, b in zip(*res):
        close(a, b)


def test_reentrant_backward_inside_custom_function():
    # the checkpointing pattern: backward recomputes the forward and calls autograd.grad
    res = []
    for lib, x in zip((R, torch), rand_pair(4)):
        class Checkpoint(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return (a.sin() * a).exp()

            @staticmethod
            def backward(ctx, g, lib=lib):
                (a,) = ctx.saved_tensors
                with lib.enable_grad():
                    a2 = a.detach().requires_grad_(True)
                    out = (a2.sin() * a2).exp()
                    (ga,) = lib.autograd.grad(out, a2, g)
                return ga

        (Checkpoint.apply(x) * 2).sum().backward()
        res.append(x.grad)
    close(*res)


def test_grad_mode_bare_decorators_generators_and_inference_mode():
    for lib, x in zip((R, torch), rand_pair(3)):
        @lib.no_grad
        def f(t, lib=lib):
            return t * 2, lib.is_grad_enabled()

        out, mode = f(x)
        assert not out.requires_grad and not mode and lib.is_grad_enabled()

        @lib.enable_grad
        def g(t):
            return t * 2

        with lib.no_grad():
            assert g(x).requires_grad

        @lib.no_grad()
        def gen(lib=lib):
            for _ in range(2):
                yield lib.is_grad_enabled()

        steps = gen()
        assert next(steps) is False
        assert lib.is_grad_enabled()  # between steps the caller's mode is back
        assert list(steps) == [False]

        @lib.inference_mode
        def h(t):
            return t * 2

        @lib.inference_mode(False)
        def h2(t):
            return t * 2

        assert not h(x).requires_grad and h2(x).requires_grad
        with lib.inference_mode():
            assert not lib.is_grad_enabled() and lib.is_inference_mode_enabled()
            assert not (x * 2).requires_grad
        assert lib.is_grad_enabled() and not lib.is_inference_mode_enabled()


# =========================================================================== gradcheck
def _checkers(lib):
    """Custom functions with a right, a wrong, and a first-order-only derivative."""
    class Good(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * x * y, x + y

        @staticmethod
        def backward(ctx, g1, g2):
            x, y = ctx.saved_tensors
            return g1 * 2 * x * y + g2, g1 * x * x + g2

    class Wrong(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3.1 * x ** 2

    class FirstOrderOnly(lib.autograd.Function):
        # right first derivative, but computed off the graph: its derivative is lost
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x.detach() ** 2

    return Good, Wrong, FirstOrderOnly


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_agrees_with_torch(fast_mode):
    for lib in (R, torch):
        Good, Wrong, FirstOrderOnly = _checkers(lib)
        x = lib.tensor(np.array([[0.3, -1.2], [0.7, 2.0]]), requires_grad=True)
        y = lib.tensor(np.array([0.5, -0.4]), requires_grad=True)
        check, ggcheck = lib.autograd.gradcheck, lib.autograd.gradgradcheck
        assert check(Good.apply, (x, y), fast_mode=fast_mode)
        assert ggcheck(Good.apply, (x, y), fast_mode=fast_mode)
        assert check(lambda a: (a.sin() * a).sum(1), (x,), fast_mode=fast_mode)
        assert not check(Wrong.apply, (x,), raise_exception=False, fast_mode=fast_mode)
        with pytest.raises(RuntimeError, match="Jacobian mismatch"):
            check(Wrong.apply, (x,), fast_mode=fast_mode)
        assert check(FirstOrderOnly.apply, (x,), fast_mode=fast_mode)
        assert not ggcheck(FirstOrderOnly.apply, (x,), raise_exception=False,
                           fast_mode=fast_mode)


def test_gradcheck_non_contiguous_input_and_no_differentiable_input():
    base = np.arange(6.0).reshape(2, 3) / 7 + 0.1
    x = R.tensor(base).t().detach().requires_grad_(True)  # a transposed (strided) leaf
    assert not x.detach().numpy().flags.c_contiguous
    assert R.autograd.gradcheck(lambda a: a.exp() * a, (x,))
    Wrong = _checkers(R)[1]
    assert not R.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False)
    c = R.tensor(base)
    with pytest.raises(ValueError):
        torch.autograd.gradcheck(lambda a: a * 2, (torch.tensor(base),))
    with pytest.raises(ValueError, match="requires_grad=True"):
        R.autograd.gradcheck(lambda a: a * 2, (c,))


def test_retain_grad_follows_in_place_changes_but_old_hooks_stay():
    def build(lib, x, log):
        y = x * 1
        y.retain_grad()
        y.register_hook(lambda g: log.append(("before", g.detach().clone())))
        y.mul_(3)
        y.register_hook(lambda g: log.append(("after", g.detach().clone())))
        (y * y).sum().backward()
        out = [grad_of(y)]
        z = x * 1
        z.retain_grad()
        z[0] = 5.0
        (z * z).sum().backward()
        return out + [grad_of(z)]

    (_, rlog, rout), (_, tlog, tout) = _run_both(build)
    assert [k for k, _ in rlog] == [k for k, _ in tlog]
    for (_, a), (_, b) in zip(rlog, tlog):
        close(a, b)
    for a, b in zip(rout, tout):
        close(a, b)


def test_variable_wrapper_matches_torch():
    for lib in (R, torch):
        t = lib.ones(2)
        v = lib.autograd.Variable(t, requires_grad=True)
        assert v.requires_grad and v.is_leaf and isinstance(v, lib.Tensor)
        assert isinstance(v, lib.autograd.Variable)
        w = lib.autograd.Variable(t)
        t.add_(1)
        assert w.tolist() == [2.0, 2.0]  # shares memory
        with pytest.warns(UserWarning, match="volatile was removed"):
            lib.autograd.Variable(t, volatile=True)
        with pytest.raises(TypeError):
            lib.autograd.Variable([1.0, 2.0])


def test_grad_is_grads_batched_and_only_inputs_warning():
    res = []
    for lib, x in zip((R, torch), rand_pair(3)):
        y = x.sin() * x
        eye = lib.eye(3, dtype=lib.float64)
        (jac,) = lib.autograd.grad(y, x, eye, is_grads_batched=True)  # the full Jacobian
        with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
            (g,) = lib.autograd.grad((x * x).sum(), x, only_inputs=False)
        res.append((jac, g))
    close(res[0][0], res[1][0])
    close(res[0][1], res[1][1])


def test_function_saving_its_output_makes_no_reference_cycle():
    class Exp(RFunction):
        @staticmethod
        def forward(ctx, a):
            out = a.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            (out,) = ctx.saved_tensors
            return g * out

    x = R.tensor(np.linspace(0, 1, 5), requires_grad=True)
    gc.disable()
    try:
        y = Exp.apply(x)
        ref, node_ref = weakref.ref(y), weakref.ref(y.grad_fn)
        del y
        assert ref() is None and node_ref() is None  # freed by reference counting alone
    finally:
        gc.enable()
    y = Exp.apply(x)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(np.linspace(0, 1, 5)))
    # an in-place change of the saved output is caught, naming the node
    y = Exp.apply(x)
    loss = y.sum()
    with R.no_grad():
        y.mul_(2)
    with pytest.raises(RuntimeError, match="ExpBackward"):
        loss.backward()


def test_concurrent_backward_in_threads():
    # each thread has its own grad mode and its own graph; results are independent
    results = {}

    def work(k):
        x = R.tensor(np.full(4, float(k)), requires_grad=True)
        for _ in range(50):
            (g,) = R.autograd.grad((x ** 3).sum(), x, create_graph=True)
            (gg,) = R.autograd.grad(g.sum(), x)
        results[k] = (g.detach().numpy().copy(), gg.numpy().copy())

    threads = [threading.Thread(target=work, args=(k,)) for k in range(1, 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(1, 4):
        np.testing.assert_allclose(results[k][0], 3 * k ** 2)
        np.testing.assert_allclose(results[k][1], 6 * k)


# Known differences in ops (not the engine): the narrated seed example (y = 2 * x,
# z = y ** 3) in test_trace.py / test_viz.py shows the Python numbers 2 and 3 as constant
# inputs of MulBackward0 / PowBackward0, in the current order.
_STRUCTURE_GAPS = {
    "pow_scalar": "x ** 2: PowBackward0 lists the Python exponent as a (None, 0) input; torch "
                  "has one next_function",
    "rpow": "2 ** x: PowBackward2 lists the Python base as (None, 0); torch has one entry",
    "rmul": "3 * x: MulBackward0's inputs are recorded as (3, x), torch's as (x, 3)",
}


@pytest.mark.parametrize("build", [
    lambda lib, x, c: x * 2,
    lambda lib, x, c: 2 + x,
    lambda lib, x, c: 3 * x,
    lambda lib, x, c: x - c,
    lambda lib, x, c: c / x,
    lambda lib, x, c: x ** 2,
    lambda lib, x, c: 2 ** x,
    lambda lib, x, c: x ** c,
    lambda lib, x, c: (x @ c.t()).sum(),
    lambda lib, x, c: lib.cat([x, c]),
    lambda lib, x, c: lib.stack([x, c, x]),
    lambda lib, x, c: lib.where(c > 0, x, c),
    lambda lib, x, c: x.max(dim=1)[0] * x.min(),
    lambda lib, x, c: x[0] + x[0:1] + x[:, 1:2].t().sum(),
    lambda lib, x, c: x.reshape(-1).unsqueeze(0).squeeze(0).view(2, 3).permute(1, 0),
    lambda lib, x, c: x.exp().log().sqrt().abs().tanh().sigmoid().relu(),
    lambda lib, x, c: x.mean(0).expand(4, 3).transpose(0, 1).clone(),
    lambda lib, x, c: x.softmax(-1) + x.log_softmax(0),
    lambda lib, x, c: x.clamp(min=0.1) + x.double().float().double(),
], ids=["mul_scalar", "radd", "rmul", "sub_const", "rdiv", "pow_scalar", "rpow", "pow_tensor",
        "matmul_t", "cat", "stack", "where", "max_min", "indexing", "views", "unary_chain",
        "mean_expand", "softmax", "clamp_casts"])
def test_graph_structure_matches_torch(build, request):
    if request.node.callspec.id in _STRUCTURE_GAPS:
        request.applymarker(pytest.mark.xfail(strict=True,
                                              reason=_STRUCTURE_GAPS[request.node.callspec.id]))
    (rx, tx) = rand_pair(2, 3)
    (rc, tc) = rand_pair(2, 3, seed=1, requires_grad=False)
    rx.data = rx.data.abs() + 0.5
    tx.data = tx.data.abs() + 0.5
    ry, ty = build(R, rx, rc), build(torch, tx, tc)
    assert _structure(ry.grad_fn) == _structure(ty.grad_fn)
    close(ry, ty)
    ry.backward(R.ones_like(ry))
    ty.backward(torch.ones_like(ty))
    close(rx.grad, tx.grad)


def test_root_gradient_of_other_dtypes_is_cast_and_empty_inputs_error():
    rx = R.tensor([1.0, 2.0], requires_grad=True)
    tx = torch.tensor([1.0, 2.0], requires_grad=True)
    for rg, tg in ((R.tensor([True, False]), torch.tensor([True, False])),
                   (R.tensor([2, 3]), torch.tensor([2, 3]))):
        (rx * 3).backward(rg)
        (tx * 3).backward(tg)
        close(rx.grad, tx.grad)
        assert rx.grad.dtype == R.float32
    both_raise(lambda: R.autograd.grad((rx * 2).sum(), []),
               lambda: torch.autograd.grad((tx * 2).sum(), []), match="cannot be empty")


@pytest.mark.xfail(strict=True, reason="the engine runs ready nodes last-in-first-out; torch "
                   "runs the most recently created first (sequence numbers), which orders "
                   "hooks on sibling branches differently; matching it needs a per-node "
                   "sequence number and a heap in the hot loop")
def test_hook_order_on_sibling_branches_follows_creation_order():
    def build(lib, x, log):
        a, b = x * 2, x * 3
        a.register_hook(lambda g: log.append("a"))
        b.register_hook(lambda g: log.append("b"))
        (b.sum() + a.sum()).backward()

    (_, rlog, _), (_, tlog, _) = _run_both(build)
    assert rlog == tlog


def test_function_setup_context_style():
    res = []
    for lib, x in zip((R, torch), rand_pair(3)):
        class Mul(lib.autograd.Function):
            @staticmethod
            def forward(a, k):
                return a * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                a, k = inputs
                ctx.save_for_backward(a)
                ctx.k = k

            @staticmethod
            def backward(ctx, g):
                (a,) = ctx.saved_tensors
                return g * ctx.k, None

        y = Mul.apply(x, 2.5)
        (y * y).sum().backward()
        res.append((y, x.grad, type(y.grad_fn).__name__))
    close(res[0][0], res[1][0])
    close(res[0][1], res[1][1])
    assert res[0][2] == res[1][2] == "MulBackward"


def test_once_differentiable():
    from torch.autograd.function import once_differentiable as t_once

    from retrograd.autograd.function import once_differentiable as r_once

    res = []
    for lib, once, x in ((R, r_once, rand_pair(3)[0]), (torch, t_once, rand_pair(3)[1])):
        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.save_for_backward(a)
                return a ** 3

            @staticmethod
            @once
            def backward(ctx, g):
                (a,) = ctx.saved_tensors
                return g * 3 * a ** 2

        (g,) = lib.autograd.grad((Cube.apply(x) * x).sum(), x)
        res.append(g)
        # the gradient reaching Cube's backward (x) requires grad: its result is wrapped
        (g2,) = lib.autograd.grad((Cube.apply(x) * x).sum(), x, create_graph=True)
        close(g2, g)
        # (torch's grad() skips the error node, which hangs off a detached copy, and
        # silently drops that term; retrograd raises there too, so backward() is compared)
        with pytest.raises(RuntimeError, match="once_differentiable"):
            g2.sum().backward()
    close(*res)


def test_hooks_and_retain_grad_on_multi_output_nodes():
    def build(lib, x, log):
        xs = x.reshape(1, 3).expand(2, 3) * lib.tensor([[1.0], [2.0]], dtype=lib.float64)
        values, idx = xs.max(dim=1)
        values.register_hook(lambda g: log.append(("values", g.detach().clone())) or g * 2)
        values.retain_grad()
        p, s = _custom_functions(lib)[1].apply(x, x * 2)
        s.register_hook(lambda g: log.append(("s", g.detach().clone())))
        p.retain_grad()
        (values.exp().sum() + (p * s).sum()).backward()
        return grad_of(values), grad_of(p)

    (rx, rlog, rout), (tx, tlog, tout) = _run_both(build)
    assert sorted(k for k, _ in rlog) == sorted(k for k, _ in tlog)
    by_name = lambda log: [g for _, g in sorted(log, key=lambda e: e[0])]  # noqa: E731
    for a, b in zip(by_name(rlog), by_name(tlog)):
        close(a, b)
    for a, b in zip(rout, tout):
        close(a, b)
    close(rx.grad, tx.grad)


def test_detect_anomaly_matches_torch():
    for lib, x in zip((R, torch), pair([0.0, 1.0])):
        with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
            ctx = lib.autograd.detect_anomaly()
        with ctx:
            assert lib.is_anomaly_enabled() and lib.is_anomaly_check_nan_enabled()
            y = (x.sqrt() * 0).sum()
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                with pytest.raises(RuntimeError,
                                   match=r"Function 'SqrtBackward0' returned nan values in "
                                         r"its 0th output\."):
                    y.backward()
            assert any("Error detected in SqrtBackward0" in str(w.message) for w in seen)
        assert not lib.is_anomaly_enabled()
        with lib.autograd.set_detect_anomaly(True, check_nan=False):
            assert lib.is_anomaly_enabled() and not lib.is_anomaly_check_nan_enabled()
            (x.sqrt() * 0).sum().backward()  # NaN allowed through
        assert not lib.is_anomaly_enabled()
        assert np.isnan(x.grad.detach().numpy()[0])


def test_detect_anomaly_reports_forward_trace_of_custom_function():
    class Bad(RFunction):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("broken backward")

    x = R.tensor([1.0], requires_grad=True)
    with pytest.warns(UserWarning):
        ctx = R.autograd.detect_anomaly()
    with ctx:
        y = Bad.apply(x)  # this line must appear in the report
        with pytest.warns(UserWarning, match=r"(?s)Error detected in BadBackward.*y = Bad.apply"):
            with pytest.raises(ValueError, match="broken backward"):
                y.sum().backward()


def test_custom_function_bad_gradients_errors_match_torch():
    fns = []
    for lib, x in zip((R, torch), rand_pair(3)):
        class BadShape(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return g[:2]

        class NotTensor(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g):
                return 5.0

        class Broadcast(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 2

            @staticmethod
            def backward(ctx, g, lib=lib):
                return lib.ones(2, 3, dtype=lib.float64)  # summed down to the input's shape

        Broadcast.apply(x).sum().backward()
        fns.append((lambda f=BadShape, x=x: f.apply(x).sum().backward(),
                    lambda f=NotTensor, x=x: f.apply(x).sum().backward(), x.grad))
    (r_shape, r_type, r_grad), (t_shape, t_type, t_grad) = fns
    both_raise(r_shape, t_shape, match=r"invalid gradient at index 0 - got \[2\] but expected "
                                       r"shape compatible with \[3\]")
    both_raise(r_type, t_type, match=r"expected Variable or None \(got float\)")
    close(r_grad, t_grad)


def test_graphs_are_freed_by_reference_counting_alone():
    # no reference cycles: nodes, saved values and gradients go as soon as the user drops
    # the tensors, without waiting for the cyclic garbage collector
    x = R.tensor(np.linspace(0, 1, 4), requires_grad=True)
    gc.collect()
    gc.disable()
    try:
        for mode in ("backward", "create_graph", "retain_grad"):
            y = x.tanh() * x.exp()
            z = y.sin() @ y + y.max()
            refs = [weakref.ref(z.grad_fn), weakref.ref(y.grad_fn)]
            if mode == "backward":
                z.backward()
            elif mode == "create_graph":
                (g,) = R.autograd.grad(z, x, create_graph=True)
                refs.append(weakref.ref(g.grad_fn))
                R.autograd.grad(g.sum(), x)
                del g
            else:
                y.retain_grad()
                z.backward(retain_graph=True)
            del y, z
            assert [r() for r in refs] == [None] * len(refs), mode
    finally:
        gc.enable()


def test_mixed_dtypes_first_and_second_order():
    res = []
    for lib in (R, torch):
        x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)  # float32
        c = lib.tensor([1.5, 2.0, -0.5], dtype=lib.float64, requires_grad=True)
        y = (x.sin() * c).sum()  # promoted to float64
        gx, gc_ = lib.autograd.grad(y, [x, c], create_graph=True)
        hx, hc = lib.autograd.grad((gx * gx).sum() + gc_.sum(), [x, c])
        res.append([(t, str(t.dtype).split(".")[-1]) for t in (y, gx, gc_, hx, hc)])
    for (a, da), (b, db) in zip(*res):
        assert da == db
        close(a, b, rtol=1e-6)


def test_saved_values_are_freed_during_the_pass_not_after():
    # a hook halfway down a chain looks at the nodes: those already run (nearer the
    # output) hold nothing any more, those still to run keep their saved values
    x = R.tensor(np.linspace(0, 1, 10), requires_grad=True)
    values = [x]
    for _ in range(6):
        values.append(values[-1].sin())
    nodes = [v.grad_fn for v in values[1:]]  # nodes[i] computed values[i + 1]
    seen = {}

    def look(g):
        seen["freed"] = [n.saved is None for n in nodes]

    values[3].register_hook(look)  # fires when the gradient of values[3] is complete
    values[-1].sum().backward()
    # nodes[3:] (which made values[4:]) already ran; nodes[:3] had not
    assert seen["freed"] == [False, False, False, True, True, True]
    assert all(n.saved is None for n in nodes)


def _inplace_view_view_base(lib, x):
    y = x * 1
    z = (y[:2] * y[:2]).sum()
    y.mul_(2)
    z.backward()


def _inplace_base_view(lib, x):
    y = x * 1
    z = (y * y).sum()
    y[:2].mul_(2)
    z.backward()


def _inplace_through_view(lib, x):
    y = x * 1
    y.view(3).mul_(2)
    (y * y).sum().backward()


def _inplace_saved_output(lib, x):
    y = x.exp()
    y.add_(1)
    y.sum().backward()


def _inplace_detached_alias(lib, x):
    y = x.tanh()
    y.detach().zero_()
    y.sum().backward()


def _inplace_data_alias(lib, x):
    y = x.sigmoid()
    y.data.zero_()
    y.sum().backward()


def _inplace_relu(lib, x):
    y = x * 2
    y.relu_()
    y.sum().backward()


@pytest.mark.parametrize("scenario", [
    _inplace_view_view_base, _inplace_base_view, _inplace_through_view, _inplace_saved_output,
    _inplace_detached_alias, _inplace_data_alias, _inplace_relu,
], ids=lambda f: f.__name__[len("_inplace_"):])
def test_inplace_and_views_error_or_gradient_as_torch(scenario):
    outcomes = []
    for lib, x in zip((R, torch), pair([1.0, -2.0, 3.0])):
        try:
            scenario(lib, x)
            outcomes.append(("ok", x.grad.detach().numpy().copy()))
        except RuntimeError as e:
            assert "modified by an inplace operation" in str(e)
            outcomes.append(("error", None))
    assert outcomes[0][0] == outcomes[1][0]
    if outcomes[0][0] == "ok":
        np.testing.assert_allclose(outcomes[0][1], outcomes[1][1])
