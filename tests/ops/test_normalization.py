"""Op tests, normalization (ops/normalization.py): batch_norm, layer_norm, group_norm,
instance_norm, rms_norm, local_response_norm, normalize.

The table of cases runs every check of ``case_checks`` (float64 gradcheck and
gradgradcheck, values and gradients of input, weight and bias against PyTorch, grad_fn names,
graph shape); the tests below it cover what a table cannot: running statistics updated in
place, a gradient penalty through a normalized layer (double backward against PyTorch), and
float32 results on a bigger input.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

from .helpers import Case, case_checks, nnf

CASES: list[Case] = []

RM = np.array([0.5, -1.0, 0.25])  # running statistics for 3 channels
RV = np.array([1.5, 0.5, 2.0])


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


def stats(m, x, n=3):
    """Fresh running statistics of x's dtype (they change in place on every call)."""
    return m.tensor(RM[:n], dtype=x.dtype), m.tensor(RV[:n], dtype=x.dtype)


case("F.batch_norm_train", lambda m, x, w, b: nnf(m).batch_norm(
    x, *stats(m, x), w, b, training=True, momentum=0.3), ((4, 3, 2), (3,), (3,)))
case("F.batch_norm_train_no_stats", lambda m, x, w, b: nnf(m).batch_norm(
    x, None, None, w, b, True), ((5, 3), (3,), (3,)))
case("F.batch_norm_eval", lambda m, x, w, b: nnf(m).batch_norm(
    x, *stats(m, x), w, b, training=False, eps=0.1), ((2, 3, 2, 2), (3,), (3,)))
case("F.batch_norm_no_affine", lambda m, x: nnf(m).batch_norm(
    x, *stats(m, x), training=True), ((3, 3, 2),))
case("F.batch_norm_eval_no_affine", lambda m, x: nnf(m).batch_norm(x, *stats(m, x)),
     ((2, 3),))
case("F.batch_norm_weight_only", lambda m, x, w: nnf(m).batch_norm(
    x, None, None, w, training=True), ((3, 3, 2), (3,)))
case("batch_norm", lambda m, x, w, b: m.batch_norm(
    x, w, b, *stats(m, x), True, 0.1, 1e-5, False), ((4, 3, 2), (3,), (3,)))
case("F.layer_norm", lambda m, x, w, b: nnf(m).layer_norm(x, (3, 4), w, b),
     ((2, 3, 4), (3, 4), (3, 4)))
case("F.layer_norm_no_affine", lambda m, x: nnf(m).layer_norm(x, [4], eps=0.01), ((3, 4),))
case("F.layer_norm_1d", lambda m, x, w: nnf(m).layer_norm(x, (5,), w), ((5,), (5,)))
case("layer_norm", lambda m, x, w, b: m.layer_norm(x, (4,), w, b), ((2, 3, 4), (4,), (4,)))
case("F.group_norm", lambda m, x, w, b: nnf(m).group_norm(x, 2, w, b),
     ((2, 4, 3), (4,), (4,)))
case("F.group_norm_4d", lambda m, x: nnf(m).group_norm(x, 3, eps=0.1), ((2, 6, 2, 2),))
case("F.group_norm_one_group", lambda m, x, w: nnf(m).group_norm(x, 1, w), ((3, 2, 2), (2,)))
case("group_norm", lambda m, x, w, b: m.group_norm(x, 3, w, b), ((2, 3, 4), (3,), (3,)))
case("F.instance_norm", lambda m, x, w, b: nnf(m).instance_norm(x, weight=w, bias=b),
     ((2, 3, 4), (3,), (3,)))
case("F.instance_norm_stats", lambda m, x: nnf(m).instance_norm(x, *stats(m, x)),
     ((2, 3, 2, 2),))
case("F.instance_norm_eval", lambda m, x, w: nnf(m).instance_norm(
    x, *stats(m, x), w, use_input_stats=False), ((2, 3, 4), (3,)))
case("instance_norm", lambda m, x, w, b: m.instance_norm(
    x, w, b, None, None, True, 0.1, 1e-5, False), ((2, 3, 4), (3,), (3,)))
case("F.rms_norm", lambda m, x, w: nnf(m).rms_norm(x, (4,), w), ((2, 3, 4), (4,)))
case("F.rms_norm_eps", lambda m, x: nnf(m).rms_norm(x, [2, 3], eps=0.5), ((2, 2, 3),))
case("rms_norm", lambda m, x: m.rms_norm(x, (3,)), ((2, 3),))
_LRN_GRAPH = ("PyTorch records constant_pad_nd, avg_pool2d/3d and views for the window; "
              "retrograd one linear window record (same values and gradients)")
case("F.local_response_norm", lambda m, x: nnf(m).local_response_norm(x, 3, 0.5, 0.6, 1.5),
     ((2, 5, 3),), xfail={"structure": _LRN_GRAPH})
case("F.local_response_norm_4d", lambda m, x: nnf(m).local_response_norm(x, 2, 0.3, k=2.0),
     ((1, 4, 2, 3),), xfail={"structure": _LRN_GRAPH})
case("F.normalize", lambda m, x: nnf(m).normalize(x), ((3, 4),))
case("F.normalize_p1_dim0", lambda m, x: nnf(m).normalize(x, p=1, dim=0), ((3, 4),))


(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


# ----------------------------------------------------------------- running statistics


@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_updates_running_stats_in_place(torch, training, dtype_name):
    x = np.random.default_rng(0).standard_normal((4, 3, 5))
    got = []
    for m in (retrograd, torch):
        dt = getattr(m, dtype_name)
        rm, rv = m.tensor(RM, dtype=dt), m.tensor(RV, dtype=dt)
        rm_data = rm.numpy()  # the same memory: updated in place, not replaced
        nnf(m).batch_norm(m.tensor(x, dtype=dt), rm, rv, training=training, momentum=0.2)
        got.append((rm.numpy().copy(), rv.numpy().copy(), rm._version))
        assert np.shares_memory(rm.numpy(), rm_data)
    (rm, rv, version), (trm, trv, tversion) = got
    np.testing.assert_allclose(rm, trm, rtol=1e-6)
    np.testing.assert_allclose(rv, trv, rtol=1e-6)  # the unbiased variance
    assert version == tversion


def test_batch_norm_of_an_empty_batch_leaves_running_stats(torch):
    for m in (retrograd, torch):
        rm, rv = m.tensor(RM), m.tensor(RV)
        x = m.zeros(0, 3, dtype=m.float64, requires_grad=True)
        y = nnf(m).batch_norm(x, rm, rv, training=True)
        y.sum().backward()
        assert tuple(y.shape) == tuple(x.grad.shape) == (0, 3)
        np.testing.assert_array_equal(rm.numpy(), RM)
        np.testing.assert_array_equal(rv.numpy(), RV)


def test_instance_norm_updates_running_stats(torch):
    x = np.random.default_rng(1).standard_normal((2, 3, 4))
    got = []
    for m in (retrograd, torch):
        rm, rv = m.tensor(RM), m.tensor(RV)
        nnf(m).instance_norm(m.tensor(x), rm, rv, momentum=0.5)
        got.append((rm.numpy().copy(), rv.numpy().copy()))
        assert rm._version == rv._version == 1  # (PyTorch's copy_, unlike batch_norm's kernel)
    np.testing.assert_allclose(got[0][0], got[1][0], rtol=1e-12)
    np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-12)


def test_batch_norm_eval_saves_the_stats_of_its_call():
    # the running stats change after the forward (a training step): backward must use the
    # values the forward normalized with
    x = retrograd.tensor([[1.0, 2.0], [3.0, 5.0]], requires_grad=True)
    rm, rv = retrograd.zeros(2), retrograd.ones(2) * 4
    w = retrograd.tensor([1.0, 1.0], requires_grad=True)
    y = nnf(retrograd).batch_norm(x, rm, rv, w, training=False, eps=0.0)
    with retrograd.no_grad():
        rm.add_(10.0)
        rv.mul_(100.0)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 2), 0.5))
    np.testing.assert_allclose(w.grad.numpy(), [2.0, 3.5])


# ----------------------------------------------------------------- double backward


@pytest.mark.parametrize("name", ["batch_norm", "layer_norm", "group_norm"])
def test_gradient_penalty_matches_torch(torch, name):
    """d/dw of ||dy/dx||^2: the derivative's own derivative, against PyTorch's."""
    rng = np.random.default_rng(2)
    x, w, b = rng.standard_normal((3, 4, 2)), rng.standard_normal(4), rng.standard_normal(4)
    wn = rng.standard_normal((3, 4, 2))
    calls = {"batch_norm": lambda m, x, w, b: nnf(m).batch_norm(x, None, None, w, b, True),
             "layer_norm": lambda m, x, w, b: nnf(m).layer_norm(
                 x.transpose(1, 2), (4,), w, b).transpose(1, 2),
             "group_norm": lambda m, x, w, b: nnf(m).group_norm(x, 2, w, b)}
    grads = []
    for m in (retrograd, torch):
        xs = [m.tensor(v, requires_grad=True) for v in (x, w, b)]
        y = calls[name](m, *xs)
        (gx,) = m.autograd.grad((y * m.tensor(wn)).sum() ** 2, xs[0], create_graph=True)
        (gx * gx).sum().backward()
        grads.append([t.grad.numpy() for t in xs])
    for got, want in zip(*grads):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10)


# ----------------------------------------------------------------- float32, a bigger input


@pytest.mark.parametrize("name", ["batch_norm", "layer_norm", "group_norm"])
def test_float32_forward_backward_on_a_bigger_input(torch, name):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((8, 16, 6, 6)) * 3 + 1).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    calls = {"batch_norm": lambda m, x, w, b: nnf(m).batch_norm(x, None, None, w, b, True),
             "layer_norm": lambda m, x, w, b: nnf(m).layer_norm(x, (6,), w[:6], b[:6]),
             "group_norm": lambda m, x, w, b: nnf(m).group_norm(x, 4, w, b)}
    res = []
    for m in (retrograd, torch):
        xs = [m.tensor(v, requires_grad=True) for v in
              (x, rng.standard_normal(16).astype(np.float32) * 0 + 1.5,
               np.arange(16, dtype=np.float32))]
        y = calls[name](m, *xs)
        y.backward(m.tensor(g))
        assert y.dtype == m.float32
        res.append([y.detach().numpy()] + [t.grad.numpy() for t in xs])
    for got, want in zip(*res):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_docstring_examples_run():
    import doctest

    from retrograd.ops import normalization

    assert doctest.testmod(normalization, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0


@pytest.mark.parametrize("name", ["batch_norm", "batch_norm_eval", "layer_norm", "group_norm"])
@pytest.mark.parametrize("needs", [(True, False, False), (False, True, False),
                                   (False, False, True), (False, True, True)])
def test_gradients_of_some_inputs_only(name, needs):
    """The derivative computes only what is asked; each gradient as when all are asked."""
    rng = np.random.default_rng(4)
    x, w, b = rng.standard_normal((3, 4, 2)), rng.standard_normal(4), rng.standard_normal(4)
    g = retrograd.tensor(rng.standard_normal((3, 4, 2)))
    calls = {"batch_norm": lambda x, w, b: F.batch_norm(x, None, None, w, b, True),
             "batch_norm_eval": lambda x, w, b: F.batch_norm(
                 x, retrograd.tensor(np.append(RM, 0.0)), retrograd.tensor(np.append(RV, 1.0)),
                 w, b),
             "layer_norm": lambda x, w, b: F.layer_norm(x.transpose(1, 2), (4,), w, b),
             "group_norm": lambda x, w, b: F.group_norm(x, 2, w, b)}
    full = [retrograd.tensor(v, requires_grad=True) for v in (x, w, b)]
    some = [retrograd.tensor(v, requires_grad=n) for v, n in zip((x, w, b), needs)]
    for ts in (full, some):
        y = calls[name](*ts)
        y.backward(g if name != "layer_norm" else g.transpose(1, 2))
    for t_full, t_some, n in zip(full, some, needs):
        if n:
            np.testing.assert_allclose(t_some.grad.numpy(), t_full.grad.numpy(), rtol=1e-12)
        else:
            assert t_some.grad is None


F = nnf(retrograd)


# ----------------------------------------------------------------- random shapes (hypothesis)
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


# (the torch fixture only imports torch: the same module for every example)
@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 3), groups=st.integers(1, 3), per_group=st.integers(1, 3),
       spatial=st.lists(st.integers(1, 3), max_size=2), which=st.sampled_from(
           ["batch_norm", "layer_norm", "group_norm", "instance_norm"]),
       affine=st.booleans(), seed=st.integers(0, 2 ** 16))
def test_random_shapes_match_torch(torch, n, groups, per_group, spatial, which, affine, seed):
    c = groups * per_group
    shape = (n, c, *spatial)
    if which == "batch_norm" and n * int(np.prod(spatial)) == 1:
        n, shape = 2, (2, c, *spatial)  # (one value per channel: refused in training)
    if which == "group_norm" and n * per_group * int(np.prod(spatial)) == 1:
        n, shape = 2, (2, c, *spatial)  # (one value per group: refused, as PyTorch's)
    if which == "instance_norm" and int(np.prod(spatial)) == 1:
        spatial, shape = [2], (n, c, 2)
    rng = np.random.default_rng(seed)
    k = shape[-1]
    wshape = {"layer_norm": (k,)}.get(which, (c,))
    x, w, b = rng.standard_normal(shape), rng.standard_normal(wshape), rng.standard_normal(wshape)
    g = rng.standard_normal(shape)
    calls = {"batch_norm": lambda m, x, w, b: nnf(m).batch_norm(x, None, None, w, b, True),
             "layer_norm": lambda m, x, w, b: nnf(m).layer_norm(x, (k,), w, b),
             "group_norm": lambda m, x, w, b: nnf(m).group_norm(x, groups, w, b),
             "instance_norm": lambda m, x, w, b: nnf(m).instance_norm(x, weight=w, bias=b)}
    got = []
    for m in (retrograd, torch):
        ts = [m.tensor(v, requires_grad=True) for v in (x, w, b)]
        y = calls[which](m, ts[0], *(ts[1:] if affine else (None, None)))
        y.backward(m.tensor(g))
        got.append([y.detach().numpy(), ts[0].grad.numpy()]
                   + ([ts[1].grad.numpy(), ts[2].grad.numpy()] if affine else []))
    for r, t in zip(*got):
        np.testing.assert_allclose(r, t, rtol=1e-9, atol=1e-9)
