"""Engine semantics: backward / grad, create_graph, inputs=, accumulation, memory.

Each test runs the same computation in retrograd (``R``) and PyTorch 2.13 and compares
values, gradients and errors (float64, tight tolerances); helpers in engine_helpers.py.
"""

import gc
import threading
import warnings
import weakref

import numpy as np
import pytest

import retrograd as R

torch = pytest.importorskip("torch")

from engine_helpers import both_raise, close, grad_of, pair, rand_pair  # noqa: E402


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
    while type(node).__name__ != "AccumulateGrad":
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


def _retain_create_graph_no_retain(lib, x):
    y = (x.exp() * x).sum()
    (g,) = lib.autograd.grad(y, x, create_graph=True, retain_graph=False)
    (gg,) = lib.autograd.grad(g.sum(), x)
    return [g, gg] + list(lib.autograd.grad(y, x))


def _retain_default_then_reuse(lib, x):
    y = (x.exp() * x).sum()
    (g,) = lib.autograd.grad(y, x, create_graph=True)
    lib.autograd.grad(g.sum(), x)  # frees the first graph's nodes too
    return list(lib.autograd.grad(y, x))


def _retain_second_order_twice(lib, x):
    y = (x.exp() * x).sum()
    (g,) = lib.autograd.grad(y, x, create_graph=True)
    (gg,) = lib.autograd.grad(g.sum(), x, retain_graph=True)
    return [gg] + list(lib.autograd.grad(g.sum(), x))


def _retain_backward_create_graph(lib, x):
    (x.exp() * x).sum().backward(retain_graph=False, create_graph=True)
    g = x.grad
    x.grad = None
    return list(lib.autograd.grad(g.sum(), x))


@pytest.mark.parametrize("scenario", [
    _retain_create_graph_no_retain, _retain_default_then_reuse, _retain_second_order_twice,
    _retain_backward_create_graph,
], ids=lambda f: f.__name__[len("_retain_"):])
def test_retain_graph_and_create_graph_combinations_as_torch(scenario):
    outcomes = []
    for lib, x in zip((R, torch), pair([1.0, 2.0])):
        try:
            outcomes.append(("ok", scenario(lib, x)))
        except RuntimeError as e:
            assert lib is torch or "retain_graph=True" in str(e)
            outcomes.append(("error", None))
    assert outcomes[0][0] == outcomes[1][0]
    if outcomes[0][0] == "ok":
        for a, b in zip(outcomes[0][1], outcomes[1][1]):
            close(a, b)
