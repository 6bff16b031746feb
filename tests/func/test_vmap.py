"""vmap against torch.vmap: in_dims/out_dims, nesting, chunks, errors, randomness, the rules
no op-table case reaches alone (losses, conv, products, indexing), and per-sample gradients."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as R
from retrograd import func

from .helpers import arrays, both, same


def test_top_level_vmap_is_func_vmap():
    assert R.vmap is func.vmap


def test_in_dims_out_dims_and_structures(torch):
    (x, y), (tx, ty) = both(torch, *arrays(0, (3, 4), (4, 3)))

    def f(m):
        return lambda d, k: {"sum": d["a"] * d["b"].sum(), "k": m.sin(k)}

    for in_dims, out_dims in ((({"a": 0, "b": 1}, None), 0), (({"a": -2, "b": -1}, 0), 1),
                              (({"a": 0, "b": 1}, None), {"sum": 1, "k": None})):
        k, tk = (x[0], tx[0]) if in_dims[1] is None else (x, tx)
        same(R.vmap(f(R), in_dims, out_dims)({"a": x, "b": y}, k),
             torch.vmap(f(torch), in_dims, out_dims)({"a": tx, "b": ty}, tk), what=str(in_dims))


def test_unbatched_outputs_are_expanded_and_kwargs_pass(torch):
    (x, c), (tx, tc) = both(torch, *arrays(1, (3, 2), (2,)))
    same(R.vmap(lambda a, scale: (c * scale, a * scale))(x, scale=2.0),
         torch.vmap(lambda a, scale: (tc * scale, a * scale))(tx, scale=2.0))
    out = R.vmap(lambda a: c, out_dims=1)(x)  # (torch 2.13 fails on this one)
    same(out, (c.unsqueeze(1) * R.ones(1, 3, dtype=R.float64)))


def test_nested_vmap_and_chunks(torch):
    (x, y), (tx, ty) = both(torch, *arrays(2, (2, 3, 4), (3, 4)))

    def f(m):
        return lambda a, b: m.softmax(a * b, -1) @ b + a.mean()

    inner = lambda lib: lib.vmap(f(lib), in_dims=(0, 0))  # noqa: E731
    same(R.vmap(inner(R), in_dims=(0, None))(x, y),
         torch.vmap(inner(torch), in_dims=(0, None))(tx, ty))
    same(R.vmap(R.vmap(f(R)), in_dims=(2, None), out_dims=1)(x.transpose(0, 2), y.T),
         torch.vmap(torch.vmap(f(torch)), in_dims=(2, None), out_dims=1)(tx.transpose(0, 2), ty.T))
    same(R.vmap(f(R), in_dims=(1, 0), chunk_size=2)(x, y),
         torch.vmap(f(torch), in_dims=(1, 0), chunk_size=2)(tx, ty))


def _raises_like(torch, exc, fn_rg, fn_th, match):
    with pytest.raises(exc):
        fn_th()
    with pytest.raises(exc, match=match):
        fn_rg()


def test_errors_match_torch(torch):
    (x, y), (tx, ty) = both(torch, *arrays(3, (3,), (4,)))
    _raises_like(torch, ValueError, lambda: R.vmap(R.add)(x, y),
                 lambda: torch.vmap(torch.add)(tx, ty),
                 r"same size in the mapped dimension, got sizes \[3, 4\]")
    _raises_like(torch, ValueError, lambda: R.vmap(R.sin, in_dims=2)(x),
                 lambda: torch.vmap(torch.sin, in_dims=2)(tx), "in_dim=2")
    _raises_like(torch, ValueError, lambda: R.vmap(R.sin, in_dims=(0, 0))(x),
                 lambda: torch.vmap(torch.sin, in_dims=(0, 0))(tx), "structure")
    _raises_like(torch, ValueError, lambda: R.vmap(lambda a: a)(3.0),
                 lambda: torch.vmap(lambda a: a)(3.0), "non-Tensor")
    _raises_like(torch, ValueError, lambda: R.vmap(lambda a: 3.0)(x),
                 lambda: torch.vmap(lambda a: 3.0)(tx), "must only return Tensors")
    _raises_like(torch, RuntimeError, lambda: R.vmap(lambda a: R.rand(3) + a)(x),
                 lambda: torch.vmap(lambda a: torch.rand(3) + a)(tx), "randomness")
    _raises_like(torch, RuntimeError, lambda: R.vmap(lambda a: a.item())(x),
                 lambda: torch.vmap(lambda a: a.item())(tx), "item")
    _raises_like(torch, RuntimeError, lambda: R.vmap(R.sin, randomness="maybe")(x),
                 lambda: torch.vmap(torch.sin, randomness="maybe")(tx), "randomness")


def test_randomness_modes():
    x = R.ones(4, 1000)
    with pytest.raises(RuntimeError, match="randomness"):
        R.vmap(lambda a: R.nn.functional.dropout(a, 0.5))(x)
    diff = R.vmap(lambda a: R.nn.functional.dropout(a, 0.5), randomness="different")(x)
    same_ = R.vmap(lambda a: R.nn.functional.dropout(a, 0.5), randomness="same")(x)
    assert not np.array_equal(diff[0].numpy(), diff[1].numpy())
    assert all(np.array_equal(same_[0].numpy(), same_[i].numpy()) for i in range(4))
    assert set(np.unique(diff.numpy())) <= {0.0, 2.0}
    # a random op with no batched input: the same numbers for every sample under 'same'
    s = R.vmap(lambda a: R.rand(3) + a * 0, randomness="same")(R.zeros(4, 3))
    assert all(np.array_equal(s[0].numpy(), s[i].numpy()) for i in range(4))
    # ... and its own numbers for each sample under 'different' (test_vmap_randomness.py)
    d = R.vmap(lambda a: R.rand_like(a), randomness="different")(x)
    assert tuple(d.shape) == (4, 1000) and not np.array_equal(d[0].numpy(), d[1].numpy())


def test_new_tensors_from_a_batched_tensor(torch):
    (x,), (tx,) = both(torch, *arrays(11, (3, 4)))
    def f(m):
        return lambda a: (a.new_zeros(2) + a[:2], m.zeros_like(a) + a, a.new_full((4,), 2.0))

    same(R.vmap(f(R))(x), torch.vmap(f(torch))(tx))


def test_fallback_warns_naming_the_op_and_matches_the_loop(torch):
    (x, y), (tx, ty) = both(torch, *arrays(4, (3, 2, 4), (3, 5, 4)))
    with pytest.warns(UserWarning, match="batching rule for cdist"):
        out = R.vmap(R.cdist)(x, y)
    same(out, R.stack([R.cdist(x[i], y[i]) for i in range(3)]))
    same(out, torch.vmap(torch.cdist)(tx, ty))


CASES = {  # rules the op tables cannot reach alone: (function of m, shapes, in_dims)
    "matmul vector-matrix": (lambda m, a, b: m.matmul(a, b), ((3, 4), (3, 4, 2)), (0, 0)),
    "matmul matrix-vector unbatched matrix": (lambda m, a, b: a @ b, ((2, 4), (3, 4)),
                                              (None, 0)),
    "matmul batched-rank mismatch": (lambda m, a, b: a @ b, ((3, 2, 5, 4), (3, 4, 2)), (0, 0)),
    "Tensor @ BatchedTensor": (lambda m, a, b: a @ b, ((5, 4), (3, 4, 2)), (None, 0)),
    "bmm": (lambda m, a, b: m.bmm(a, b), ((3, 2, 2, 4), (3, 2, 4, 2)), (0, 0)),
    "dot": (lambda m, a, b: m.dot(a, b), ((3, 4), (3, 4)), (0, 0)),
    "outer": (lambda m, a, b: m.outer(a, b), ((3, 4), (2,)), (0, None)),
    "addmm": (lambda m, a, b, c: m.addmm(a, b, c, beta=0.5, alpha=2),
              ((2, 2), (3, 2, 4), (4, 3, 2)), (None, 0, 1)),
    "linear batched weight": (lambda m, x, w, b: m.nn.functional.linear(x, w, b),
                              ((3, 4), (3, 2, 4), (3, 2)), (0, 0, 0)),
    "linear 2-D input": (lambda m, x, w: m.nn.functional.linear(x, w), ((3, 5, 4), (2, 4)),
                         (0, None)),
    "conv2d batched input": (lambda m, x, w, b: m.nn.functional.conv2d(x, w, b, padding=1),
                             ((3, 2, 2, 5, 5), (4, 2, 3, 3), (4,)), (0, None, None)),
    "conv2d batched weight": (lambda m, x, w: m.nn.functional.conv2d(x, w, stride=2, groups=2),
                              ((2, 4, 5, 5), (3, 6, 2, 3, 3)), (None, 0)),
    "conv1d unbatched-conv input": (lambda m, x, w, b: m.nn.functional.conv1d(x, w, b),
                                    ((3, 2, 7), (3, 4, 2, 3), (3, 4)), (0, 0, 0)),
    "mse_loss": (lambda m, a, b: m.nn.functional.mse_loss(a, b), ((3, 2, 4), (2, 4)), (0, None)),
    "l1_loss sum": (lambda m, a, b: m.nn.functional.l1_loss(a, b, reduction="sum"),
                    ((3, 4), (3, 4)), (0, 0)),
    "bce_with_logits": (lambda m, a, b: m.nn.functional.binary_cross_entropy_with_logits(
        a, b.sigmoid()), ((3, 2, 4), (3, 2, 4)), (0, 0)),
    "getitem advanced": (lambda m, a: a[[0, 2], 1:], ((3, 4, 3),), (0,)),
    "getitem ints and slices": (lambda m, a: a[..., 1, None, ::2], ((3, 2, 4, 5),), (0,)),
    "getitem split advanced (loop)": (lambda m, a: a[[0, 1], :, [1, 0]], ((3, 2, 4, 5),), (0,)),
    "cat with unbatched": (lambda m, a, b: m.cat([a, b, a], dim=-1), ((3, 2, 2), (2, 3)),
                           (0, None)),
    "stack": (lambda m, a, b: m.stack([a, b], dim=1), ((3, 2, 2), (2, 2)), (0, None)),
    "expand": (lambda m, a: a.expand(2, 4, 3), ((3, 4, 1),), (0,)),
    "squeeze all": (lambda m, a: a.squeeze(), ((3, 1, 4, 1),), (0,)),
    "permute T mT": (lambda m, a: (a.permute(2, 0, 1), a.mT, a[0].T), ((3, 2, 3, 4),), (0,)),
    "max argmax of all": (lambda m, a: (a.max(), a.argmax(), a.sum(dim=(0, 1))), ((3, 2, 4),),
                          (0,)),
    "max with dim": (lambda m, a: tuple(a.max(-1, keepdim=True)), ((3, 2, 4),), (0,)),
    "split chunk unbind": (lambda m, a: (*a.split(1, -1), *a.chunk(2), *a.unbind(1)),
                           ((3, 2, 2),), (0,)),
    "setitem": (lambda m, a, b: _setitem(a, b), ((3, 4), (3, 2)), (0, 0)),
    "inplace add_": (lambda m, a, b: a.clone().add_(b), ((3, 4), (4,)), (0, None)),
    "layer_norm batched affine": (lambda m, a, w, b: m.nn.functional.layer_norm(a, (4,), w, b),
                                  ((3, 2, 4), (3, 4), (4,)), (0, 0, None)),
    "softmax family": (lambda m, a: (m.softmax(a, 0), m.log_softmax(a, -1),
                                     m.nn.functional.softmin(a, 1)), ((3, 2, 4),), (0,)),
    "where scalar": (lambda m, a, b: m.where(a > 0, a, b), ((3, 4), ()), (0, None)),
}


def _setitem(a, b):
    a = a.clone()
    a[1:3] = b
    return a


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_cases(name, torch):
    fn, shapes, in_dims = CASES[name]
    (rg, th) = both(torch, *arrays(len(name), *shapes))
    with warnings.catch_warnings():
        if "(loop)" not in name:
            warnings.filterwarnings("error", message=".*performance drop.*")
        out = R.vmap(lambda *a: fn(R, *a), in_dims=in_dims)(*rg)
    same(out, torch.vmap(lambda *a: fn(torch, *a), in_dims=in_dims)(*th), what=name)


@pytest.mark.parametrize("kind", ["class indices", "no N", "weighted ignore", "probs", "sum 2d"])
def test_cross_entropy_and_nll(kind, torch):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 4, 5))
    t = rng.integers(0, 5, (3, 4))
    t[1, 2] = -100
    w = rng.uniform(0.5, 2, 5)

    def run(lib):
        F = lib.nn.functional  # noqa: N806
        X, T, W = lib.tensor(x), lib.tensor(t), lib.tensor(w)  # noqa: N806
        if kind == "class indices":
            return lib.vmap(lambda a, b: F.cross_entropy(a, b.clamp(min=0)))(X, T)
        if kind == "no N":
            return lib.vmap(lambda a, b: (F.cross_entropy(a, b, W), F.nll_loss(a, b)))(
                X[:, 0], T[:, 0])
        if kind == "weighted ignore":
            return lib.vmap(lambda a, b: (F.cross_entropy(a, b, W), F.nll_loss(a, b, W),
                                          F.cross_entropy(a, b, reduction="none")))(X, T)
        if kind == "probs":
            return lib.vmap(lambda a, b: F.cross_entropy(a, b.softmax(-1)), in_dims=(0, None))(
                X, X[0])
        return lib.vmap(lambda a, b: F.cross_entropy(a.unsqueeze(-1), b.clamp(min=0).unsqueeze(-1),
                                                     reduction="sum", label_smoothing=0.1))(X, T)

    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*performance drop.*")
        out = run(R)
    same(out, run(torch))


def _digits_mlp(lib, ws):
    net = lib.nn.Sequential(lib.nn.Linear(8, 6), lib.nn.ReLU(), lib.nn.Linear(6, 3)).double()
    with lib.no_grad():
        for p, a in zip(net.parameters(), ws):
            p.copy_(lib.tensor(a))
    return net


def test_per_sample_gradients_of_an_mlp(torch):
    ws = arrays(6, (6, 8), (6,), (3, 6), (3,))
    (x,), (tx,) = both(torch, *arrays(7, (5, 8)))
    y = np.array([0, 2, 1, 1, 0])

    def grads(lib, fc, grad):
        net = _digits_mlp(lib, ws)
        params = {k: v.detach() for k, v in net.named_parameters()}

        def loss(p, xi, yi):
            out = fc(net, p, (xi.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, yi.unsqueeze(0))

        return lib.vmap(grad(loss), in_dims=(None, 0, 0))(params, *(
            (x, R.tensor(y)) if lib is R else (tx, torch.tensor(y))))

    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*performance drop.*")
        rg = grads(R, func.functional_call, func.grad)
    same(rg, grads(torch, torch.func.functional_call, torch.func.grad))
    # the same as a loop of grad over the samples
    net = _digits_mlp(R, ws)
    for i in range(5):
        net.zero_grad()
        R.nn.functional.cross_entropy(net(x[i:i + 1]), R.tensor(y[i:i + 1])).backward()
        for k, p in net.named_parameters():
            np.testing.assert_allclose(rg[k][i].numpy(), p.grad.numpy(), rtol=1e-10)


def test_vjp_fn_vmapped_over_cotangents(torch):
    (x, cts), (tx, tcts) = both(torch, *arrays(8, (3,), (4, 3)))
    _, fn = func.vjp(R.sin, x)
    _, tfn = torch.func.vjp(torch.sin, tx)
    same(R.vmap(fn)(cts), torch.vmap(tfn)(tcts))


def test_grad_inside_vmap_with_closure_over_batched(torch):
    (w, xs), (tw, txs) = both(torch, *arrays(9, (3,), (4, 3)))
    f = lambda lib, g, w0: lib.vmap(  # noqa: E731
        lambda x: g(lambda w: (lib.tanh(w * x)).sum())(w0))
    same(f(R, func.grad, w)(xs), f(torch, torch.func.grad, tw)(txs))


def test_an_error_of_an_unbatched_op_inside_vmap_is_the_ops_own(torch):
    # a NumPy error inside vmap with no BatchedTensor involved: the op's own message and
    # class (RuntimeError, as torch.vmap), not a TypeError from the dispatch
    with pytest.raises(RuntimeError, match="invalid for input of size 6"):
        torch.vmap(lambda a: torch.ones(6).reshape(4) + a.sum())(torch.ones(3, 2))
    with pytest.raises(RuntimeError, match="invalid for input of size 6"):
        R.vmap(lambda a: R.ones(6).reshape(4) + a.sum())(R.ones(3, 2))
