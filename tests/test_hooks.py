"""Hooks (tensor, grad_fn pre/post, AccumulateGrad, post-accumulate), captures and graph
structure (``next_functions``, names), each compared with PyTorch 2.13.
"""


import pytest

import retrograd as R

torch = pytest.importorskip("torch")

from engine_helpers import (  # noqa: E402  (after the torch check)
    _custom_functions, _run_both, _structure, both_raise, close, grad_of, rand_pair,
)


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


def test_leaf_hook_runs_for_grad_too():
    def build(lib, x, log):
        x.register_hook(lambda g: log.append("x") or g * 2)
        return lib.autograd.grad((x * x).sum(), x)[0]

    (rx, rlog, rg), (tx, tlog, tg) = _run_both(build)
    assert rlog == tlog
    close(rg, tg)
    assert rx.grad is None and tx.grad is None


def test_hook_returning_wrong_shape_errors():
    for x in rand_pair(3):
        y = x * 2
        y.register_hook(lambda g: g.sum())
        with pytest.raises(RuntimeError):
            y.sum().backward()


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


def test_leaf_used_twice_one_hook_call():
    def build(lib, x, log):
        x.register_hook(lambda g: log.append(g.detach().clone()))
        (x * x + x.sin() + x).sum().backward()

    (rx, rlog, _), (tx, tlog, _) = _run_both(build)
    assert len(rlog) == len(tlog) == 1
    close(rlog[0], tlog[0])
    close(rx.grad, tx.grad)


def test_calling_grad_fn_directly():
    (rx, tx), (ry, ty) = rand_pair(3), rand_pair(3, seed=1)
    rg = (rx * ry).grad_fn(R.ones(3, dtype=R.float64))
    tg = (tx * ty).grad_fn(torch.ones(3, dtype=torch.float64))
    assert len(rg) == len(tg) == 2
    for a, b in zip(rg, tg):
        close(a, b)


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
def test_graph_structure_matches_torch(build):
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


def test_hook_order_on_sibling_branches_follows_creation_order():
    def build(lib, x, log):
        a, b = x * 2, x * 3
        a.register_hook(lambda g: log.append("a"))
        b.register_hook(lambda g: log.append("b"))
        (b.sum() + a.sum()).backward()

    (_, rlog, _), (_, tlog, _) = _run_both(build)
    assert rlog == tlog


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
