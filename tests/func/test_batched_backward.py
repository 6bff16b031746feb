"""``autograd.grad(..., is_grads_batched=True)``: one batched backward pass (issue 10).

Every graph is compared three ways: with torch.autograd.grad(is_grads_batched=True)
(values, shapes, dtypes), with the per-sample loop (``frontend._batched_loop``), and for
the common layers with no per-sample fallback at all (no warning: batched, not a loop).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as R
from retrograd.autograd import frontend
from retrograd.func import batched_backward

from .helpers import same

torch = pytest.importorskip("torch")

F64 = {R: R.float64, torch: torch.float64}


def _mlp(lib, act, seed=0):
    rng = np.random.default_rng(seed)
    w1, b1, w2, x = (lib.tensor(rng.standard_normal(s), requires_grad=True)
                     for s in ((5, 4), (5,), (3, 5), (2, 4)))
    h = getattr(lib, act)(lib.nn.functional.linear(x, w1, b1))
    out = h @ w2.t()
    return [out], [x, w1, b1, w2]


def _cross_entropy(lib, reduction="mean", **kw):
    rng = np.random.default_rng(1)
    w, x = (lib.tensor(rng.standard_normal(s), requires_grad=True) for s in ((3, 4), (5, 4)))
    target = lib.tensor([0, 2, 1, 1, 2])
    loss = lib.nn.functional.cross_entropy(x @ w.t(), target, reduction=reduction, **kw)
    return [loss], [x, w]


def _softmax_views(lib):
    rng = np.random.default_rng(2)
    x = lib.tensor(rng.standard_normal((3, 4, 2)), requires_grad=True)
    y = lib.softmax(x.reshape(6, 4), dim=-1).view(3, 2, 4)
    z = y[1:, 0, ::2].t() * y[0].sum(0)[:2] - y[:, 1].mean(1).unsqueeze(0)[:, 1:]
    return [z.exp().sigmoid(), y.permute(2, 0, 1).sum(-1)], [x]


def _reduction_broadcast(lib):
    rng = np.random.default_rng(3)
    a = lib.tensor(rng.standard_normal((4, 1)), requires_grad=True)
    b = lib.tensor(rng.uniform(0.5, 2.0, (3,)), requires_grad=True)
    c = (a * b - b / a.exp()).square().log1p()
    return [(c ** 2).sum(0), (a.tanh() + b.sqrt().expand(4, 3)).mean()], [a, b]


def _nll_general(lib):
    rng = np.random.default_rng(4)
    x = lib.tensor(rng.standard_normal((3, 4, 2)), requires_grad=True)
    logp = lib.nn.functional.log_softmax(x, dim=1)
    target = lib.tensor([[0, 3], [-100, 2], [1, 1]])
    weight = lib.tensor([1.0, 2.0, 0.5, 3.0], dtype=F64[lib])
    return [lib.nn.functional.nll_loss(logp, target, weight=weight, ignore_index=-100)], [x]


def _embedding_gather(lib):
    rng = np.random.default_rng(5)
    w = lib.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    e = lib.nn.functional.embedding(lib.tensor([[0, 3], [3, 1]]), w, padding_idx=1)
    return [(e.tanh() * w[lib.tensor([2, 0])]).sum(-1)], [w]


GRAPHS = {
    "embedding_gather": _embedding_gather,
    "mlp_tanh": lambda lib: _mlp(lib, "tanh"),
    "mlp_relu": lambda lib: _mlp(lib, "relu"),
    "cross_entropy_mean": lambda lib: _cross_entropy(lib),
    "cross_entropy_none": lambda lib: _cross_entropy(lib, "none"),
    "cross_entropy_sum_weighted": lambda lib: _cross_entropy(
        lib, "sum", weight=lib.tensor([1.0, 0.5, 2.0], dtype=F64[lib])),
    "softmax_views_indexing": _softmax_views,
    "reduction_broadcast": _reduction_broadcast,
    "nll_weighted_ignore_kdim": _nll_general,
}


def _grad_outputs(lib, outs, batch, seed=7):
    rng = np.random.default_rng(seed)
    return [lib.tensor(rng.standard_normal((batch, *o.shape))) for o in outs]


def _run(lib, name, batch=4, **kw):
    outs, ins = GRAPHS[name](lib)
    return lib.autograd.grad(outs, ins, _grad_outputs(lib, outs, batch),
                             is_grads_batched=True, **kw)


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_batched_equals_torch_and_the_loop_without_fallback(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a per-sample fallback (ours or vmap's) warns
        got = _run(R, name)
    same(got, _run(torch, name), what=name)
    outs, ins = GRAPHS[name](R)
    looped = frontend._batched_loop(outs, ins, _grad_outputs(R, outs, 4), None, False, None,
                                    False)
    same(got, tuple(t.detach() for t in looped), what=f"{name} vs loop")
    assert all(not g.requires_grad for g in got)


def test_float32_stays_float32_and_grad_outputs_are_cast():
    res = []
    for lib in (R, torch):
        x = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3).astype(np.float32),
                       requires_grad=True)
        y = (x.tanh() * x).sum(1)
        eye = lib.eye(2, dtype=F64[lib])  # float64 weights for a float32 output
        res.append(lib.autograd.grad(y, x, eye, is_grads_batched=True))
    assert res[0][0].dtype == R.float32
    same(res[0], res[1], rtol=1e-6, atol=1e-6)


def test_jacobian_by_identity_batch():
    res = []
    for lib in (R, torch):
        outs, ins = _mlp(lib, "tanh")
        flat = outs[0].reshape(-1)
        eye = lib.eye(flat.shape[0], dtype=F64[lib])
        res.append(lib.autograd.grad(flat, ins[0], eye, is_grads_batched=True))
    assert tuple(res[0][0].shape) == (6, 2, 4)
    same(res[0], res[1])


@pytest.mark.parametrize("name", ["mlp_tanh", "mlp_relu", "cross_entropy_mean",
                                  "softmax_views_indexing", "embedding_gather",
                                  "nll_weighted_ignore_kdim"])
def test_create_graph_gives_differentiable_results(name):
    res = []
    for lib in (R, torch):
        outs, ins = GRAPHS[name](lib)
        gs = lib.autograd.grad(outs, ins, _grad_outputs(lib, outs, 3), is_grads_batched=True,
                               create_graph=True)
        assert all(g.requires_grad for g in gs)
        total = sum((g * g).sum() for g in gs)
        second = lib.autograd.grad(total, ins, allow_unused=True)
        res.append((gs, second))
    same(tuple(g.detach() for g in res[0][0]), tuple(g.detach() for g in res[1][0]))
    for a, b in zip(res[0][1], res[1][1]):
        assert (a is None) == (b is None)
        if a is not None:
            same(a, b, rtol=1e-8, atol=1e-9)


def test_retain_graph():
    for lib in (R, torch):
        outs, ins = _mlp(lib, "tanh")
        gos = _grad_outputs(lib, outs, 2)
        first = lib.autograd.grad(outs, ins, gos, is_grads_batched=True, retain_graph=True)
        again = lib.autograd.grad(outs, ins, gos, is_grads_batched=True)
        same(first, again) if lib is R else None
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            lib.autograd.grad(outs, ins, gos, is_grads_batched=True)


def test_unknown_node_falls_back_per_node_with_one_warning():
    batched_backward._warned.discard("CumsumBackward0")
    res = []
    for lib in (R, torch):
        x = lib.tensor(np.arange(1.0, 7.0).reshape(2, 3), requires_grad=True)
        y = (x.cumsum(1) * x).tanh()
        gos = _grad_outputs(lib, [y], 3)
        if lib is R:
            with pytest.warns(UserWarning, match="CumsumBackward0 has no batched derivative"):
                res.append(lib.autograd.grad(y, x, gos, is_grads_batched=True,
                                             retain_graph=True))
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # once per node type
                lib.autograd.grad(y, x, gos, is_grads_batched=True)
        else:
            res.append(lib.autograd.grad(y, x, gos, is_grads_batched=True))
    same(res[0], res[1])


def test_multi_output_nodes():
    res = []
    for lib in (R, torch):
        x = lib.tensor(np.arange(1.0, 9.0).reshape(4, 2), requires_grad=True)
        a, b = x.tanh().unbind(0)[1:3]
        c, d = x.chunk(2, 1)
        out = a * b + (c * d.exp()).sum(0) + x.split([1, 3])[1][1:].mean(1).sum()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            res.append(lib.autograd.grad(out, x, _grad_outputs(lib, [out], 3),
                                         is_grads_batched=True))
    same(res[0], res[1])


def test_hooks_see_per_sample_gradients():
    seen = []
    res = []
    for lib in (R, torch):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=F64[lib], requires_grad=True)
        h = x.exp()
        h.register_hook(lambda g, lib=lib: seen.append((lib, tuple(g.shape))) or g * 2)
        y = h.sin()
        res.append(lib.autograd.grad(y, x, lib.eye(3, dtype=F64[lib]), is_grads_batched=True))
    same(res[0], res[1])
    assert [s for lib, s in seen if lib is R][0] == (3,)  # the logical (per-sample) shape
    assert [s for lib, s in seen if lib is torch][0] == (3,)


def test_unused_inputs_and_materialize_grads():
    res = []
    for lib in (R, torch):
        x = lib.tensor([1.0, 2.0], dtype=F64[lib], requires_grad=True)
        z = lib.tensor([3.0, 4.0, 5.0], dtype=F64[lib], requires_grad=True)
        y = x * 3
        eye = lib.eye(2, dtype=F64[lib])
        with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
            lib.autograd.grad(y, [x, z], eye, is_grads_batched=True, retain_graph=True)
        unused = lib.autograd.grad(y, [x, z], eye, is_grads_batched=True, retain_graph=True,
                                   allow_unused=True)
        assert unused[1] is None
        res.append(lib.autograd.grad(y, [x, z], eye, is_grads_batched=True, retain_graph=True,
                                     materialize_grads=True))
        if lib is R:  # the per-sample loop (graphs with hooks) agrees
            res.append(frontend._batched_loop([y], [x, z], [eye], None, False, None, True))
    same(res[0], res[2])  # (torch's zeros for an unused input are unbatched)
    same(res[1], res[2])


@pytest.mark.parametrize("bad", ["no_batch_dim", "wrong_shape"])
def test_shape_errors_match_torch(bad):
    for lib in (R, torch):
        x = lib.tensor(np.ones((3, 2)), requires_grad=True)
        y = (x * 2).sum(1)
        go = {"no_batch_dim": lib.ones(3, dtype=F64[lib]),
              "wrong_shape": lib.ones(3, 2, dtype=F64[lib])}[bad]
        with pytest.raises(RuntimeError, match="If `is_grads_batched=True`, we interpret the "
                                               "first dimension"):
            lib.autograd.grad(y, x, go, is_grads_batched=True)


def test_zero_dim_grad_output_is_an_index_error():
    for lib in (R, torch):
        x = lib.tensor(np.ones(2), requires_grad=True)
        with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
            lib.autograd.grad((x * 2).sum(), x, lib.tensor(1.0, dtype=F64[lib]),
                              is_grads_batched=True)


def test_empty_batch_is_an_index_error():
    for lib in (R, torch):
        x = lib.tensor(np.ones((2, 3)), requires_grad=True)
        with pytest.raises(IndexError, match="index 0 is out of bounds for dimension 0"):
            lib.autograd.grad((x * 2).sum(1), x, lib.ones(0, 2, dtype=F64[lib]),
                              is_grads_batched=True)


def test_batch_sizes_differ_and_missing_grad_outputs():
    for lib in (R, torch):
        x = lib.tensor(np.ones((3, 2)), requires_grad=True)
        y1, y2 = (x * 2).sum(1), (x * 3).sum()
        with pytest.raises(ValueError, match="same size in the mapped dimension"):
            lib.autograd.grad([y1, y2], x, [lib.ones(3, 3, dtype=F64[lib]),
                                            lib.ones(2, dtype=F64[lib])],
                              is_grads_batched=True)
        with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
            lib.autograd.grad(y1, x, None, is_grads_batched=True)


# one node type each: those batched through their own formula (or a physical derivative)
# must not fall back; the others fall back per node and still equal torch
BATCHED_OPS = {
    "log1p": lambda m, x: x.abs().log1p(), "expm1": lambda m, x: x.expm1(),
    "rsqrt": lambda m, x: x.abs().rsqrt(), "reciprocal": lambda m, x: x.reciprocal(),
    "sinh_cosh": lambda m, x: x.sinh() * x.cosh(), "tan_atan": lambda m, x: x.tan().atan(),
    "asin": lambda m, x: (x / 4).asin(), "erf": lambda m, x: x.erf(),
    "gelu": lambda m, x: m.nn.functional.gelu(x), "silu": lambda m, x: m.nn.functional.silu(x),
    "logsigmoid": lambda m, x: m.nn.functional.logsigmoid(x),
    "square_sqrt_abs": lambda m, x: x.square() + x.abs().sqrt() - x.abs(),
    "trig": lambda m, x: x.sin() * x.cos(), "flip": lambda m, x: x.flip(0) * x,
    "flatten_keepdim": lambda m, x: x.flatten() * x.sum(1, keepdim=True).expand(3, 4).flatten(),
    "cat_stack": lambda m, x: m.stack([m.cat([x, x * 2], 1), m.cat([x.exp(), x], 1)]),
    "mse": lambda m, x: m.nn.functional.mse_loss(x, x.detach() * 0.5),
    "bce_logits": lambda m, x: m.nn.functional.binary_cross_entropy_with_logits(
        x, (x.detach() > 0).to(x.dtype)),
    "bce": lambda m, x: m.nn.functional.binary_cross_entropy(
        x.sigmoid(), (x.detach() > 0).to(x.dtype), reduction="none"),
    "matmul_3d": lambda m, x: x.unsqueeze(0).expand(2, 3, 4) @ x.t(),
    "bmm": lambda m, x: m.bmm(x.unsqueeze(0), x.t().unsqueeze(0)),
    "mv_dot": lambda m, x: m.mv(x, x[0]) * m.dot(x[0], x[1]),
    "div_rsub_neg_pow": lambda m, x: (1 - x) / (x.abs() + 1) - x ** 3,
    "clone_transpose": lambda m, x: x.clone().transpose(0, 1).unsqueeze(1).squeeze(1),
    "softmax_dim0": lambda m, x: m.softmax(x, 0), "mean_all": lambda m, x: x.mean(),
    "leaky_relu": lambda m, x: m.nn.functional.leaky_relu(x, 0.1),
    "where_clamp": lambda m, x: m.where(x > 0, x * 2, x.exp()).clamp(-0.5, 0.5),
    "clamp_min_max": lambda m, x: x.clamp(min=m.zeros(4, dtype=x.dtype)) + x.clamp(max=0.3),
    "hardtanh_elu_softplus": lambda m, x: (m.nn.functional.hardtanh(x) * m.nn.functional.elu(x)
                                           + m.nn.functional.softplus(x)),
    "threshold": lambda m, x: m.nn.functional.threshold(x, 0.1, -2.0),
    "masked_fill": lambda m, x: x.masked_fill(x > 0.5, 0.0) * 3,
    "maximum_minimum": lambda m, x: m.maximum(x, x[0]) - m.minimum(x.t()[1:2].t(), x * 0.5),
    "pow_tensor_broadcast": lambda m, x: (x[:, :1].abs() + 1) ** x + x ** 2.0,
    "advanced_index": lambda m, x: x[m.tensor([0, 2, 2])] * x[:, m.tensor([1, 0])].sum(),
    "advanced_index_int_mask": lambda m, x: x[1, m.tensor([0, 3])].sum() * x[x > 0].exp().sum(),
    "embedding": lambda m, x: m.nn.functional.embedding(m.tensor([[0, 2], [1, 1]]), x),
    "embedding_padding_freq": lambda m, x: m.nn.functional.embedding(
        m.tensor([[0, 2, 2], [1, 1, 2]]), x, padding_idx=1, scale_grad_by_freq=True),
}
LOOPED_OPS = {
    "cumsum": lambda m, x: x.cumsum(0), "var": lambda m, x: x.var(1),
    "layer_norm": lambda m, x: m.nn.functional.layer_norm(x, (4,)),
    "max_dim": lambda m, x: x.max(1)[0],
    "advanced_index_apart": lambda m, x: x.unsqueeze(1).expand(3, 2, 4)[
        m.tensor([0, 2]), :, m.tensor([1, 3])],
}


def _one_op(fn):
    res = []
    a = np.random.default_rng(0).standard_normal((3, 4))
    for lib in (R, torch):
        x = lib.tensor(a, requires_grad=True)
        y = fn(lib, x)
        go = lib.tensor(np.random.default_rng(1).standard_normal((5, *y.shape)))
        res.append(lib.autograd.grad(y, x, go, is_grads_batched=True))
    same(res[0], res[1], rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", sorted(BATCHED_OPS))
def test_node_types_batched_without_fallback(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _one_op(BATCHED_OPS[name])


@pytest.mark.parametrize("name", sorted(LOOPED_OPS))
def test_node_types_falling_back_still_equal_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _one_op(LOOPED_OPS[name])


def test_non_leaf_inputs_an_output_that_is_an_input_and_grads_of_grad_outputs():
    res = []
    for lib in (R, torch):
        x = lib.tensor([0.5, -1.0, 2.0], dtype=F64[lib], requires_grad=True)
        h = x.sin()
        y = h * x
        gos = _grad_outputs(lib, [y, x], 2)
        gos[0].requires_grad_()
        gh, gx = lib.autograd.grad([y, x], [h, x], gos, is_grads_batched=True,
                                   create_graph=True)
        (ggo,) = lib.autograd.grad((gx * gh).sum(), gos[0])
        res.append((gh, gx, ggo))
    same(tuple(t.detach() for t in res[0]), tuple(t.detach() for t in res[1]))


def test_grad_outputs_batched_by_an_enclosing_vmap():
    res = []
    for lib in (R, torch):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=F64[lib], requires_grad=True)
        y = x.sin() * x

        def f(v, lib=lib, x=x, y=y):
            eye = lib.eye(3, dtype=F64[lib])
            return lib.autograd.grad(y, x, eye * v.sum(), is_grads_batched=True,
                                     retain_graph=True)[0]

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (torch warns about its own fallback)
            res.append(lib.vmap(f)(lib.tensor(np.arange(6.0).reshape(2, 3))))
    same(res[0], res[1])
