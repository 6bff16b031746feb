"""retrograd.func's transforms against torch.func: values, structures, errors."""

from __future__ import annotations

import pytest

import retrograd as R
from retrograd import func
from retrograd.autograd import gradcheck, gradgradcheck

from .helpers import arrays, both, same


def f_scalar(m):
    return lambda x, y: (m.sin(x) * y).sum() + (x ** 2).sum()


def test_grad_argnums_and_value(torch):
    (x, y), (tx, ty) = both(torch, *arrays(0, (3,), (3,)))
    for argnums in (0, 1, (0, 1), (1, 0), -1):
        same(func.grad(f_scalar(R), argnums)(x, y),
             torch.func.grad(f_scalar(torch), argnums)(tx, ty), what=f"argnums={argnums}")
    g, v = func.grad_and_value(f_scalar(R))(x, y)
    tg, tv = torch.func.grad_and_value(f_scalar(torch))(tx, ty)
    same((g, v), (tg, tv))
    assert not v.requires_grad and not g.requires_grad


def test_grad_has_aux_and_pytree_inputs(torch):
    (w, b), (tw, tb) = both(torch, *arrays(1, (2, 3), (2,)))

    def loss(m):
        def f(params, x):
            out = m.tanh(x @ params["w"].T + params["b"])
            return out.pow(2).sum(), {"out": out}
        return f

    (x,), (tx,) = both(torch, *arrays(2, (4, 3)))
    g, aux = func.grad(loss(R), has_aux=True)({"w": w, "b": b}, x)
    tg, taux = torch.func.grad(loss(torch), has_aux=True)({"w": tw, "b": tb}, tx)
    same(g, tg)
    same(aux, taux)


def test_grad_of_unused_input_is_zeros(torch):
    (x,), (tx,) = both(torch, *arrays(3, (3,)))
    same(func.grad(lambda x: R.tensor(1.0, dtype=R.float64))(x),
         torch.func.grad(lambda x: torch.tensor(1.0, dtype=torch.float64))(tx))


def test_grad_errors_match_torch(torch):
    (x,), (tx,) = both(torch, *arrays(4, (3,)))
    for fn, arg in ((torch.func.grad, tx), (func.grad, x)):
        with pytest.raises(RuntimeError, match="scalar Tensor"):
            fn(lambda x: x * 2)(arg)
        with pytest.raises(RuntimeError, match="argnum=3"):
            fn(lambda x: x.sum(), argnums=3)(arg)
        with pytest.raises(RuntimeError, match="tuple"):
            fn(lambda x: x.sum(), has_aux=True)(arg)


def test_nested_grad_and_gradcheck(torch):
    (x,), (tx,) = both(torch, *arrays(5, ()))
    f = lambda m: (lambda x: m.sin(x) * x ** 3)  # noqa: E731
    same(func.grad(func.grad(f(R)))(x), torch.func.grad(torch.func.grad(f(torch)))(tx))
    (v,) = arrays(6, (3,))
    xs = R.tensor(v, requires_grad=True)
    g = lambda x: func.grad(lambda y: (R.tanh(y) * y).sum())(x)  # noqa: E731
    assert gradcheck(g, (xs,))
    assert gradgradcheck(g, (xs,))
    j = lambda x: func.jacrev(R.sin)(x)  # noqa: E731
    assert gradcheck(j, (xs,))


def test_vjp_structures_and_aux(torch):
    (x, y, c1, c2), (tx, ty, tc1, tc2) = both(torch, *arrays(7, (3,), (3,), (3,), ()))

    def f(m):
        return lambda a, b: ((a * b, (a.sum() * b).sum()), m.cos(a))

    out, fn, aux = func.vjp(f(R), x, y, has_aux=True)
    tout, tfn, taux = torch.func.vjp(f(torch), tx, ty, has_aux=True)
    same((out, aux), (tout, taux))
    same(fn((c1, c2)), tfn((tc1, tc2)))
    same(fn((c1 * 2, c2)), tfn((tc1 * 2, tc2)))  # vjp_fn can be called again
    _, fn1 = func.vjp(R.sin, x)
    _, tfn1 = torch.func.vjp(torch.sin, tx)
    assert isinstance(fn1(c1), tuple)
    same(fn1(c1), tfn1(tc1))
    with pytest.raises(RuntimeError, match="shape"):
        fn1(R.ones(4, dtype=R.float64))


def test_jvp_and_linearize(torch):
    (x, y, t1, t2), (tx, ty, tt1, tt2) = both(torch, *arrays(8, (3,), (3,), (3,), (3,)))

    def f(m):
        return lambda a, b: (m.sin(a) * b, (a * a).sum())

    same(func.jvp(f(R), (x, y), (t1, t2)), torch.func.jvp(f(torch), (tx, ty), (tt1, tt2)))
    out, jfn = func.linearize(R.tanh, x)
    tout, tjfn = torch.func.linearize(torch.tanh, tx)
    same(out, tout)
    same(jfn(t1), tjfn(tt1))
    same(jfn(t2), tjfn(tt2))
    for lib, jv, a, t in ((torch, torch.func.jvp, tx, tt1), (R, func.jvp, x, t1)):
        with pytest.raises(RuntimeError, match="primals to be a tuple"):
            jv(lib.sin, a, (t,))
        with pytest.raises(RuntimeError, match="different size"):
            jv(lib.sin, (a,), (lib.ones(4, dtype=lib.float64),))


def test_jacrev_jacfwd_hessian(torch):
    (x, y), (tx, ty) = both(torch, *arrays(9, (3,), (2, 3)))

    def f(m):
        return lambda a, b: (m.tanh(b @ a), (a ** 3).sum())

    for argnums in (0, 1, (0, 1)):
        for rg_fn, th_fn in ((func.jacrev, torch.func.jacrev), (func.jacfwd, torch.func.jacfwd)):
            same(rg_fn(f(R), argnums)(x, y), th_fn(f(torch), argnums)(tx, ty),
                 what=f"{rg_fn.__name__} argnums={argnums}")
    same(func.jacrev(R.sin, chunk_size=2)(x), torch.func.jacrev(torch.sin, chunk_size=2)(tx))
    # (PyTorch 2.13's jacfwd has no chunk_size; retrograd's takes one, as its vmap does)
    same(func.jacfwd(R.sin, chunk_size=1)(x), torch.func.jacfwd(torch.sin)(tx))
    aux_f = lambda m: (lambda a: (m.sin(a), a.sum()))  # noqa: E731
    same(func.jacrev(aux_f(R), has_aux=True)(x), torch.func.jacrev(aux_f(torch), has_aux=True)(tx))
    same(func.jacfwd(aux_f(R), has_aux=True)(x), torch.func.jacfwd(aux_f(torch), has_aux=True)(tx))
    h = lambda m: (lambda a, b: (m.sin(a) * b).sum() * a.sum())  # noqa: E731
    same(func.hessian(h(R), (0, 1))(x, y[0]), torch.func.hessian(h(torch), (0, 1))(tx, ty[0]))


def test_jacobians_of_batched_inputs_under_vmap(torch):
    (x,), (tx,) = both(torch, *arrays(10, (4, 3)))
    same(R.vmap(func.jacrev(R.sin))(x), torch.vmap(torch.func.jacrev(torch.sin))(tx))
    same(R.vmap(func.jacfwd(R.tanh))(x), torch.vmap(torch.func.jacfwd(torch.tanh))(tx))
    same(R.vmap(func.hessian(lambda a: (a ** 3).sum()))(x),
         torch.vmap(torch.func.hessian(lambda a: (a ** 3).sum()))(tx))


def _mlp(lib, weights):
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2)).double()
    with lib.no_grad():
        for p, a in zip(net.parameters(), weights):
            p.copy_(lib.tensor(a))
    return net


def test_functional_call(torch):
    ws = arrays(11, (4, 3), (4,), (2, 4), (2,))
    net, tnet = _mlp(R, ws), _mlp(torch, ws)
    (x, w0, b1), (tx, tw0, tb1) = both(torch, *arrays(12, (5, 3), (4, 3), (2,)))
    same(func.functional_call(net, {"0.weight": w0}, (x,)),
         torch.func.functional_call(tnet, {"0.weight": tw0}, (tx,)))
    same(func.functional_call(net, ({"0.weight": w0}, {"2.bias": b1}), x),
         torch.func.functional_call(tnet, ({"0.weight": tw0}, {"2.bias": tb1}), tx))
    same(net(x), tnet(tx))  # the module's own parameters are back
    for lib, fc, n, w in ((torch, torch.func.functional_call, tnet, tw0),
                          (R, func.functional_call, net, w0)):
        with pytest.raises(RuntimeError, match="Missing key"):
            fc(n, {"0.weight": w}, (x if lib is R else tx,), strict=True)
        with pytest.raises(ValueError, match="multiple dictionaries"):
            fc(n, ({"0.weight": w}, {"0.weight": w}), (x if lib is R else tx,))


def test_functional_call_grads_match_torch(torch):
    ws = arrays(13, (4, 3), (4,), (2, 4), (2,))
    net, tnet = _mlp(R, ws), _mlp(torch, ws)
    params = {k: v.detach() for k, v in net.named_parameters()}
    tparams = {k: v.detach() for k, v in tnet.named_parameters()}
    (x,), (tx,) = both(torch, *arrays(14, (5, 3)))
    loss = lambda fc, n: lambda p, x: fc(n, p, (x,)).pow(2).sum()  # noqa: E731
    same(func.grad(loss(func.functional_call, net))(params, x),
         torch.func.grad(loss(torch.func.functional_call, tnet))(tparams, tx))


def test_functional_call_tied_weights(torch):
    outs = []
    for lib, fc in ((R, func.functional_call), (torch, torch.func.functional_call)):
        net = lib.nn.Sequential(lib.nn.Linear(2, 2, bias=False), lib.nn.Linear(2, 2, bias=False))
        with lib.no_grad():
            net[0].weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
        net[1].weight = net[0].weight  # tied
        w = lib.eye(2) * 2
        x = lib.ones(2)
        outs.append((fc(net, {"0.weight": w}, (x,)),
                     fc(net, {"0.weight": w}, (x,), tie_weights=False)))
        with pytest.raises(ValueError, match="tied"):
            fc(net, {"0.weight": w, "1.weight": w * 3}, (x,))
    same(outs[0], outs[1], rtol=1e-6, atol=1e-6)
