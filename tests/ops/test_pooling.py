"""Op tests, pooling (ops/pooling.py, ops/pooling_adaptive.py): max/avg/lp pools, adaptive
and fractional pools, max_unpool.

One table of cases; ``case_checks`` runs every check on every case (float64 gradcheck and
gradgradcheck, values (indices included) and gradients against PyTorch in float32 and
float64, the grad_fn name and the whole graph's shape): see ``tests/ops/helpers.py``.  Max
pools draw from the "spread" domain (values well apart), so a gradcheck step never changes
the argmax; ties, NaN, -inf padding, integer inputs and empty batches have tests of their
own below.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

from .helpers import Case, as_numpy, case_checks, nnf

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


# fractional pooling's random steps, fixed: (N, C, 2) and (N, C, 3) samples in [0, 1)
SAMPLES2 = np.random.default_rng(2).random((2, 2, 2))
SAMPLES3 = np.random.default_rng(3).random((1, 2, 3))


def samples(m, s, like):
    return m.tensor(s, dtype=like.dtype)


# ---- max-pooling: every argument, batched and unbatched, 1-d to 3-d
_MAX2 = [
    ("k2", (2,), {}),
    ("k3_s2_p1", (3, 2, 1), {}),
    ("k3x2_s2x1_p1x0_d1x2", ((3, 2), (2, 1), (1, 0), (1, 2)), {}),
    ("k3_s2_ceil", (3, 2), {"ceil_mode": True}),
    ("k2_s1_p1_ceil", (2, 1, 1), {"ceil_mode": True}),
    ("k2_d2", (2,), {"dilation": 2, "stride": 1}),
]
for _i, (_name, _args, _kw) in enumerate(_MAX2):  # batched and unbatched in turn
    _shape = ((2 if _i == 0 else 1, 2, 5, 6), (2, 5, 5))[_i % 2]  # (batch 2 once: time)
    case(f"max_pool2d_{_name}_{len(_shape)}d", lambda m, a, args, kw: nnf(m).max_pool2d(
        a, *args, return_indices=True, **kw), (_shape,), "spread",
        params={"args": _args, "kw": _kw})
case("max_pool2d_values_only", lambda m, a: nnf(m).max_pool2d(a, 2, 1), ((1, 2, 3, 4),),
     "spread")
case("max_pool2d_with_indices", lambda m, a: nnf(m).max_pool2d_with_indices(a, 2, 1),
     ((1, 2, 3, 4),), "spread")
case("torch.max_pool2d", lambda m, a: m.max_pool2d(a, (2, 3), 1, (1, 1), 1, True),
     ((2, 4, 5),), "spread")
for _shape in ((1, 2, 3, 4, 5), (2, 3, 4, 3)):
    case(f"max_pool3d_{len(_shape)}d", lambda m, a: nnf(m).max_pool3d(
        a, (2, 3, 2), (1, 2, 2), (1, 1, 0), (1, 1, 2), True, True), (_shape,), "spread")
case("max_pool3d_with_indices", lambda m, a: nnf(m).max_pool3d_with_indices(a, 2),
     ((1, 2, 4, 4, 2),), "spread")
case("torch.max_pool3d", lambda m, a: m.max_pool3d(a, 2, 1), ((2, 3, 3, 3),), "spread")
for _shape in ((2, 3, 7), (3, 8)):
    case(f"max_pool1d_{len(_shape)}d", lambda m, a: nnf(m).max_pool1d(
        a, 3, 2, 1, 2, True, True), (_shape,), "spread")
    case(f"max_pool1d_plain_{len(_shape)}d", lambda m, a: nnf(m).max_pool1d(a, 2),
         (_shape,), "spread")
case("max_pool1d_with_indices", lambda m, a: nnf(m).max_pool1d_with_indices(a, 2, 1),
     ((2, 6),), "spread")
case("torch.max_pool1d", lambda m, a: m.max_pool1d(a, 3, 1, 1), ((2, 2, 5),), "spread")
case("torch.max_pool1d_with_indices", lambda m, a: m.max_pool1d_with_indices(a, 2),
     ((2, 6),), "spread")

# ---- average pooling
_AVG2 = [
    ("k2", (2,), {}),
    ("k3_s2_p1", (3, 2, 1), {}),
    ("k3_s2_p1_ceil", (3, 2, 1), {"ceil_mode": True}),
    ("k3_s2_p1_ceil_nopad", (3, 2, 1), {"ceil_mode": True, "count_include_pad": False}),
    ("k3x2_s1x2_p1x1_nopad", ((3, 2), (1, 2), (1, 1)), {"count_include_pad": False}),
    ("k2_divisor", (2, 1), {"divisor_override": 3}),
]
for _i, (_name, _args, _kw) in enumerate(_AVG2):
    _shape = ((2 if _i == 0 else 1, 2, 5, 6), (2, 4, 5))[_i % 2]  # (batch 2 once: time)
    case(f"avg_pool2d_{_name}_{len(_shape)}d",
         lambda m, a, args, kw: nnf(m).avg_pool2d(a, *args, **kw), (_shape,),
         params={"args": _args, "kw": _kw})
for _shape in ((1, 2, 3, 4, 5), (2, 4, 3, 3)):
    case(f"avg_pool3d_{len(_shape)}d", lambda m, a: nnf(m).avg_pool3d(
        a, (2, 3, 2), (1, 2, 2), (1, 1, 0), True, False), (_shape,))
case("avg_pool3d_divisor", lambda m, a: nnf(m).avg_pool3d(a, 2, divisor_override=5),
     ((1, 2, 4, 4, 2),))
for _shape in ((2, 3, 7), (3, 8)):
    case(f"avg_pool1d_{len(_shape)}d", lambda m, a: nnf(m).avg_pool1d(a, 3, 2, 1, True, False),
         (_shape,))
case("torch.avg_pool1d", lambda m, a: m.avg_pool1d(a, 2, 1, 1), ((2, 2, 5),))

# ---- power-average pooling (PyTorch's composite: its graph is compared too)
for _p in (1, 2, 3.5):
    case(f"lp_pool2d_p{_p}", lambda m, a, p: nnf(m).lp_pool2d(a, p, (2, 3), 1), ((1, 2, 4, 5),),
         "pos", params={"p": _p})
case("lp_pool2d_inf", lambda m, a: nnf(m).lp_pool2d(a, float("inf"), 2, ceil_mode=True),
     ((2, 5, 5),), "spread")
case("lp_pool1d", lambda m, a: nnf(m).lp_pool1d(a, 2, 3, 2, True), ((2, 2, 8),), "pos")
case("lp_pool1d_unbatched", lambda m, a: nnf(m).lp_pool1d(a, 3, 2), ((3, 6),), "pos")
case("lp_pool3d", lambda m, a: nnf(m).lp_pool3d(a, 2, 2, 1), ((1, 2, 3, 3, 3),), "pos")

# ---- adaptive pooling: shrinking, growing, unchanged and (1, 1) outputs
for _i, _size in enumerate((3, (2, 4), (None, 3), 1, (7, 2))):
    _tag = str(_size).replace(" ", "")
    _shape = ((2 if _i == 0 else 1, 2, 5, 6), (2, 5, 6))[_i % 2]  # (batch 2 once: time)
    case(f"adaptive_avg_pool2d_{_tag}_{len(_shape)}d",
         lambda m, a, size: nnf(m).adaptive_avg_pool2d(a, size), (_shape,),
         params={"size": _size})
    case(f"adaptive_max_pool2d_{_tag}", lambda m, a, size: nnf(m).adaptive_max_pool2d(
        a, size, True), ((1, 2, 5, 6),), "spread", params={"size": _size})
case("adaptive_max_pool2d_unbatched", lambda m, a: nnf(m).adaptive_max_pool2d(a, (3, 2)),
     ((2, 5, 7),), "spread")
case("adaptive_max_pool2d_with_indices", lambda m, a: nnf(m).adaptive_max_pool2d_with_indices(
    a, 3), ((1, 2, 4, 5),), "spread")
for _size in ((2, 3, 2), 1):
    case(f"adaptive_avg_pool3d_{_size}", lambda m, a, size: nnf(m).adaptive_avg_pool3d(
        a, size), ((1, 2, 3, 5, 4),), params={"size": _size})
    case(f"adaptive_max_pool3d_{_size}", lambda m, a, size: nnf(m).adaptive_max_pool3d(
        a, size, True), ((2, 3, 5, 4),), "spread", params={"size": _size})
case("adaptive_max_pool3d_with_indices", lambda m, a: nnf(m).adaptive_max_pool3d_with_indices(
    a, (2, 1, 3)), ((1, 2, 3, 3, 4),), "spread")
for _shape in ((2, 3, 7), (3, 8)):
    case(f"adaptive_avg_pool1d_{len(_shape)}d", lambda m, a: nnf(m).adaptive_avg_pool1d(a, 3),
         (_shape,))
    case(f"adaptive_max_pool1d_{len(_shape)}d", lambda m, a: nnf(m).adaptive_max_pool1d(
        a, 3, True), (_shape,), "spread")
case("adaptive_avg_pool1d_1", lambda m, a: nnf(m).adaptive_avg_pool1d(a, 1), ((2, 3, 5),))
case("adaptive_max_pool1d_with_indices", lambda m, a: nnf(m).adaptive_max_pool1d_with_indices(
    a, 4), ((2, 6),), "spread")
case("torch.adaptive_avg_pool1d", lambda m, a: m.adaptive_avg_pool1d(a, 4), ((2, 2, 7),))
case("torch.adaptive_max_pool1d", lambda m, a: m.adaptive_max_pool1d(a, 4), ((2, 2, 7),),
     "spread")

# ---- fractional max-pooling (fixed samples; PyTorch's steps reproduced in the input dtype)
case("fractional_max_pool2d_size", lambda m, a: nnf(m).fractional_max_pool2d(
    a, (2, 3), output_size=(4, 3), return_indices=True,
    _random_samples=samples(m, SAMPLES2, a)), ((2, 2, 7, 8),), "spread")
case("fractional_max_pool2d_ratio", lambda m, a: nnf(m).fractional_max_pool2d(
    a, 2, output_ratio=(0.5, 0.7), _random_samples=samples(m, SAMPLES2[:1], a)), ((2, 9, 7),),
    "spread")
case("fractional_max_pool2d_with_indices", lambda m, a: nnf(
    m).fractional_max_pool2d_with_indices(a, 2, 3, _random_samples=samples(m, SAMPLES2, a)),
    ((2, 2, 6, 5),), "spread")
case("fractional_max_pool3d_size", lambda m, a: nnf(m).fractional_max_pool3d(
    a, (2, 1, 2), output_size=(2, 3, 3), return_indices=True,
    _random_samples=samples(m, SAMPLES3, a)), ((1, 2, 4, 5, 5),), "spread")
case("fractional_max_pool3d_ratio", lambda m, a: nnf(m).fractional_max_pool3d(
    a, 2, output_ratio=0.5, _random_samples=samples(m, SAMPLES3, a)), ((2, 6, 5, 4),),
    "spread")
case("fractional_max_pool3d_with_indices", lambda m, a: nnf(
    m).fractional_max_pool3d_with_indices(a, 2, (2, 2, 2), _random_samples=samples(
        m, SAMPLES3, a)), ((1, 2, 4, 4, 4),), "spread")

# ---- max_unpool: indices from max_pool (the pool's gradient flows too) or fixed ones
UNPOOL2 = np.array([[[[0, 3], [9, 14]], [[5, 2], [8, 15]]]])  # (1, 2, 2, 2) in a 4x4 plane


def _pool_unpool(m, a, n, **kw):
    y, i = getattr(nnf(m), f"max_pool{n}d")(a, 2, return_indices=True)
    return getattr(nnf(m), f"max_unpool{n}d")(y, i, 2, **kw)


case("max_unpool2d_fixed", lambda m, a: nnf(m).max_unpool2d(a, m.tensor(UNPOOL2), 2),
     ((1, 2, 2, 2),))
case("max_unpool2d_unbatched", lambda m, a: nnf(m).max_unpool2d(
    a, m.tensor(UNPOOL2[0]), 3, stride=2, padding=1, output_size=(4, 4)), ((2, 2, 2),))
case("max_unpool2d_pool", lambda m, a: _pool_unpool(m, a, 2, output_size=(5, 4)),
     ((2, 2, 5, 4),), "spread")
case("max_unpool1d", lambda m, a: _pool_unpool(m, a, 1), ((2, 3, 6),), "spread")
case("max_unpool1d_unbatched", lambda m, a: _pool_unpool(m, a, 1, output_size=[7]), ((3, 7),),
     "spread")
case("max_unpool3d", lambda m, a: _pool_unpool(m, a, 3), ((1, 2, 4, 2, 4),), "spread")

(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


# ----------------------------------------------------------------- conventions vs PyTorch


def _both(torch, fn, data, dtype="float64", grad=True):
    """``fn(m, x)`` on retrograd and torch from ``data``; values, indices and (with ``grad``)
    the input gradient of a random output gradient compared."""
    rg = retrograd.tensor(data, dtype=getattr(retrograd, dtype))
    th = torch.tensor(data, dtype=getattr(torch, dtype))
    if grad:
        rg.requires_grad_(True)
        th.requires_grad_(True)
    r_out, t_out = fn(retrograd, rg), fn(torch, th)
    r_out = r_out if isinstance(r_out, tuple) else (r_out,)
    t_out = t_out if isinstance(t_out, tuple) else (t_out,)
    for r, t in zip(r_out, t_out):
        assert str(r.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_array_equal(as_numpy(r), as_numpy(t))
    if grad:
        g = np.random.default_rng(0).standard_normal(tuple(t_out[0].shape))
        r_out[0].backward(retrograd.tensor(g, dtype=r_out[0].dtype))
        t_out[0].backward(torch.tensor(g, dtype=t_out[0].dtype))
        np.testing.assert_allclose(as_numpy(rg.grad), as_numpy(th.grad), rtol=1e-12)


TIES = np.array([[[[1.0, 3.0, 3.0, 0.0, 2.0], [3.0, 1.0, 3.0, 3.0, 2.0], [0.0, 3.0, 2.0, 2.0, 2.0],
                   [3.0, 3.0, 1.0, 0.0, 2.0]]]])


@pytest.mark.parametrize("call", [
    lambda m, x: nnf(m).max_pool2d(x, 2, 1, return_indices=True),
    lambda m, x: nnf(m).max_pool2d(x, 3, 1, 1, return_indices=True),
    lambda m, x: nnf(m).max_pool2d(x, 2, 2, 1, 2, True, True),
    lambda m, x: nnf(m).max_pool1d(x[0], 3, 1, 1, return_indices=True),
    lambda m, x: nnf(m).max_pool3d(x, (1, 2, 2), 1, return_indices=True),
    lambda m, x: nnf(m).adaptive_max_pool2d(x, (3, 2), True),
    lambda m, x: nnf(m).fractional_max_pool2d(x, 2, (2, 3), return_indices=True,
                                              _random_samples=m.tensor([[[0.3, 0.8]]],
                                                                       dtype=x.dtype)),
], ids=["max_pool2d", "max_pool2d_pad", "max_pool2d_ceil_dil", "max_pool1d", "max_pool3d",
        "adaptive_max_pool2d", "fractional_max_pool2d"])
@pytest.mark.parametrize("data", ["ties", "nan", "all_equal", "inf"])
def test_max_ties_nan_and_inf_as_torch(call, data, torch):
    """Ties keep the first maximum, the last NaN wins, -inf inputs never lose to padding:
    values, indices and where the gradient goes all as PyTorch's."""
    x = TIES.copy()
    if data == "nan":
        x[0, 0, 0, 1] = x[0, 0, 1, 2] = x[0, 0, 1, 3] = np.nan
    elif data == "all_equal":
        x[:] = 7.0
    elif data == "inf":
        x[:] = -np.inf
        x[0, 0, 3, 4] = 1.0
    _both(torch, call, x)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
@pytest.mark.parametrize("call", [
    lambda m, x: nnf(m).max_pool2d(x, 2, 1, 1, return_indices=True),
    lambda m, x: nnf(m).max_pool3d(x[None], (1, 2, 2)),
    lambda m, x: nnf(m).avg_pool2d(x, 3, 2, 1, True),
    lambda m, x: nnf(m).avg_pool2d(x - 5, 2, 1, count_include_pad=False, divisor_override=3),
    lambda m, x: nnf(m).avg_pool1d(x[0], 2),
    lambda m, x: nnf(m).max_pool1d(x[0], 2),
    lambda m, x: nnf(m).adaptive_avg_pool2d(x, 2),
], ids=["max_pool2d", "max_pool3d", "avg_pool2d", "avg_pool2d_negative", "avg_pool1d",
        "max_pool1d", "adaptive_avg_pool2d"])
def test_integer_inputs_as_torch(call, dtype, torch):
    """Integer pools keep the dtype (an integer average truncates toward zero, as C++), or
    are refused with PyTorch's exception where PyTorch has no kernel for the dtype."""
    data = (np.arange(20) * 7 % 11).reshape(1, 1, 4, 5)
    try:
        call(torch, torch.tensor(data, dtype=getattr(torch, dtype)))
    except Exception as e:  # noqa: BLE001 - comparing exceptions is the point
        with pytest.raises(type(e)):
            call(retrograd, retrograd.tensor(data, dtype=getattr(retrograd, dtype)))
        return
    _both(torch, call, data, dtype, grad=False)


def test_empty_batch_as_torch(torch):
    for call in (lambda m, x: nnf(m).max_pool2d(x, 2, return_indices=True),
                 lambda m, x: nnf(m).avg_pool2d(x, 2),
                 lambda m, x: nnf(m).adaptive_avg_pool2d(x, 2),
                 lambda m, x: nnf(m).adaptive_max_pool2d(x, 2, True)):
        _both(torch, call, np.zeros((0, 2, 4, 4)), grad=False)


def test_zero_output_size_as_torch(torch):
    for call in (lambda m, x: nnf(m).adaptive_avg_pool2d(x, 0),
                 lambda m, x: nnf(m).adaptive_max_pool2d(x, (0, 2), True),
                 lambda m, x: nnf(m).adaptive_max_pool1d(x[0], 0)):
        _both(torch, call, TIES, grad=False)


def test_fractional_samples_come_from_retrograds_generator(torch):
    """Without ``_random_samples`` the steps come from retrograd's generator: the same seed
    gives the same windows, and those are PyTorch's windows for the same samples."""
    from retrograd.random import generator

    x = np.random.default_rng(4).standard_normal((2, 3, 9, 8))
    retrograd.manual_seed(7)
    a, ia = nnf(retrograd).fractional_max_pool2d(retrograd.tensor(x), 3, output_ratio=(0.5, 0.5),
                                                 return_indices=True)
    retrograd.manual_seed(7)
    u = generator().random((2, 3, 2))
    want, iw = nnf(torch).fractional_max_pool2d(torch.tensor(x), 3, output_size=(4, 4),
                                                return_indices=True,
                                                _random_samples=torch.tensor(u))
    np.testing.assert_array_equal(as_numpy(a), as_numpy(want))
    np.testing.assert_array_equal(as_numpy(ia), as_numpy(iw))
    retrograd.manual_seed(7)
    b = nnf(retrograd).fractional_max_pool2d(retrograd.tensor(x), 3, output_ratio=(0.5, 0.5))
    np.testing.assert_array_equal(as_numpy(a), as_numpy(b))


def test_double_backward_records_the_adjoint_pools():
    """The gradient of a pool, taken with create_graph, is itself recorded (PyTorch's
    *BackwardBackward0 records), so its own gradient is the gather/spread again."""
    F = nnf(retrograd)
    x = retrograd.tensor(np.random.default_rng(5).permutation(np.arange(32.0)).reshape(1, 2, 4, 4),
                         requires_grad=True)
    for fn, name in ((lambda a: F.max_pool2d(a, 2), "MaxPool2DWithIndicesBackwardBackward0"),
                     (lambda a: F.avg_pool2d(a, 2), "AvgPool2DBackwardBackward0"),
                     (lambda a: F.adaptive_avg_pool2d(a, 3),
                      "AdaptiveAvgPool2DBackwardBackward0"),
                     (lambda a: F.adaptive_max_pool2d(a, 3),
                      "AdaptiveMaxPool2DBackwardBackward0")):
        y = fn(x)
        g = retrograd.ones_like(y, requires_grad=True)
        (gx,) = retrograd.autograd.grad(y, x, g, create_graph=True)
        assert gx.grad_fn.name() == name


@pytest.mark.parametrize("module", ["pooling", "pooling_adaptive", "pool_common"])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    mod = importlib.import_module(f"retrograd.ops.{module}")
    assert doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0
