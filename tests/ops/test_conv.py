"""Op tests, convolutions and unfold / fold (ops/conv.py).

One table of cases; ``case_checks`` runs every check on every case (float64 gradcheck and
gradgradcheck, values and input / weight / bias gradients against PyTorch in float32 and
float64, the grad_fn name and the whole graph's shape): see ``tests/ops/helpers.py``.
Then wrong calls against PyTorch's exceptions, second-order gradients against PyTorch's,
and the reuse of the forward's column buffer.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd

from .helpers import Case, case_checks, nnf

# the warning PyTorch gives too (test_same_padding_with_even_kernel_warns_as_torch)
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel")

CASES: list[Case] = []


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


def const(m, a, shape):
    """A constant (no grad) tensor of ``a``'s dtype, the same values in both libraries."""
    n = int(np.prod(shape))
    return m.tensor(np.linspace(-1.0, 1.0, n).reshape(shape), dtype=a.dtype)


# ---- conv1d / conv2d / conv3d: (input, weight, bias) shapes and keyword arguments
CONV = [
    ("conv1d", (2, 3, 7), (4, 3, 3), {}),
    ("conv1d", (2, 4, 8), (4, 2, 2), {"stride": 2, "padding": 1, "dilation": 2, "groups": 2}),
    ("conv1d", (1, 2, 5), (3, 2, 2), {"padding": "same"}),  # even kernel: a pad node first
    ("conv1d", (2, 2, 6), (2, 2, 3), {"padding": "same", "dilation": 2}),
    ("conv1d", (2, 2, 5), (3, 2, 3), {"padding": "valid", "stride": 3}),
    ("conv2d", (2, 3, 5, 4), (4, 3, 3, 2), {}),
    ("conv2d", (1, 2, 5, 6), (2, 2, 3, 3), {"stride": (2, 1), "padding": (1, 0),
                                            "dilation": (1, 2)}),
    ("conv2d", (1, 4, 4, 4), (4, 2, 3, 3), {"padding": 1, "groups": 2}),
    ("conv2d", (1, 2, 4, 4), (4, 1, 3, 3), {"padding": 1, "groups": 2}),  # depthwise
    ("conv2d", (2, 2, 4, 5), (3, 2, 2, 3), {"padding": "same"}),
    ("conv2d", (1, 2, 5, 3), (2, 2, 1, 1), {"stride": 2}),
    ("conv2d", (1, 1, 7, 5), (2, 1, 3, 3), {"stride": 3, "padding": 2}),  # odd, floor
    ("conv3d", (1, 2, 3, 4, 3), (2, 2, 2, 2, 2), {}),
    ("conv3d", (1, 2, 3, 3, 4), (2, 1, 2, 1, 3), {"stride": (1, 2, 2), "padding": (1, 0, 1),
                                                  "groups": 2}),
    ("conv3d", (1, 1, 4, 4, 4), (1, 1, 2, 2, 2), {"dilation": 2, "padding": "same"}),
]
for _i, (_name, _xs, _ws, _kw) in enumerate(CONV):
    _bs = (_ws[0],)
    case(f"{_name}_{_i}_bias", lambda m, x, w, b, name=_name, kw=_kw: getattr(nnf(m), name)(
        x, w, b, **kw), (_xs, _ws, _bs))
    case(f"{_name}_{_i}", lambda m, x, w, name=_name, kw=_kw: getattr(nnf(m), name)(
        x, w, **kw), (_xs, _ws))

case("conv2d_unbatched", lambda m, x, w, b: nnf(m).conv2d(x, w, b, padding=1), ((2, 4, 3),
     (3, 2, 3, 3), (3,)))
case("conv1d_unbatched_groups", lambda m, x, w: nnf(m).conv1d(x, w, groups=2, stride=2),
     ((4, 5), (2, 2, 2)))
case("conv3d_unbatched", lambda m, x, w: nnf(m).conv3d(x, w), ((1, 3, 2, 3), (2, 1, 2, 1, 2)))
case("conv2d_input_only", lambda m, x: nnf(m).conv2d(x, const(m, x, (2, 3, 2, 2)), stride=2),
     ((2, 3, 4, 5),))
case("conv2d_weight_only", lambda m, w: nnf(m).conv2d(const(m, w, (2, 2, 4, 4)), w, padding=1),
     ((3, 2, 3, 3),))
case("torch.conv2d", lambda m, x, w, b: m.conv2d(x, w, b, 1, 1, 1, 1), ((1, 2, 4, 4),
     (2, 2, 3, 3), (2,)))
case("torch.conv1d", lambda m, x, w: m.conv1d(x, w, padding="same"), ((2, 2, 5), (3, 2, 3)))
case("torch.conv3d", lambda m, x, w: m.conv3d(x, w, stride=2), ((1, 1, 3, 3, 3), (1, 1, 2, 2, 2)))
case("conv2d_then_relu_sum", lambda m, x, w: nnf(m).conv2d(x, w, padding=1).relu().sum(),
     ((2, 2, 3, 3), (3, 2, 3, 3)))

# ---- conv_transpose1d / 2d / 3d: weight is (C_in, C_out / groups, *kernel)
CONV_T = [
    ("conv_transpose1d", (2, 3, 4), (3, 2, 3), {}),
    ("conv_transpose1d", (1, 4, 3), (4, 1, 2), {"stride": 2, "padding": 1, "output_padding": 1,
                                                "groups": 2}),
    ("conv_transpose1d", (1, 2, 4), (2, 3, 3), {"dilation": 2, "output_padding": 1}),
    ("conv_transpose2d", (2, 2, 3, 4), (2, 3, 3, 2), {"stride": 2, "padding": 1,
                                                      "output_padding": (1, 0)}),
    ("conv_transpose2d", (1, 4, 3, 3), (4, 1, 2, 2), {"groups": 4, "dilation": (2, 1)}),
    ("conv_transpose2d", (1, 2, 3, 3), (2, 2, 3, 3), {"stride": (1, 3), "padding": (1, 1)}),
    ("conv_transpose3d", (1, 2, 2, 2, 2), (2, 1, 2, 2, 2), {"stride": 2, "output_padding": 1}),
]
for _i, (_name, _xs, _ws, _kw) in enumerate(CONV_T):
    _bs = (_ws[1] * _kw.get("groups", 1),)
    case(f"{_name}_{_i}_bias", lambda m, x, w, b, name=_name, kw=_kw: getattr(nnf(m), name)(
        x, w, b, **kw), (_xs, _ws, _bs))
    case(f"{_name}_{_i}", lambda m, x, w, name=_name, kw=_kw: getattr(nnf(m), name)(
        x, w, **kw), (_xs, _ws))
case("conv_transpose2d_unbatched", lambda m, x, w, b: nnf(m).conv_transpose2d(x, w, b, 2),
     ((2, 2, 3), (2, 1, 2, 2), (1,)))
case("torch.conv_transpose1d", lambda m, x, w: m.conv_transpose1d(x, w, None, 2, 0, 1),
     ((1, 2, 3), (2, 2, 2)))
case("torch.conv_transpose2d", lambda m, x, w: m.conv_transpose2d(x, w, padding=1),
     ((1, 2, 3, 3), (2, 1, 3, 3)))
case("torch.conv_transpose3d", lambda m, x, w: m.conv_transpose3d(x, w, groups=2),
     ((1, 2, 2, 2, 2), (2, 1, 1, 2, 1)))

case("torch.convolution", lambda m, x, w, b: m.convolution(x, w, b, [2], [1], [1], False, [0], 2),
     ((1, 4, 5), (2, 2, 3), (2,)))
case("torch.convolution_transposed", lambda m, x, w: m.convolution(
    x, w, None, [2, 1], [1, 0], [1, 1], True, [1, 0], 1), ((1, 2, 3, 3), (2, 3, 3, 2)))

# ---- unfold / fold
case("unfold", lambda m, x: nnf(m).unfold(x, 2), ((2, 3, 4, 4),))
case("unfold_args", lambda m, x: nnf(m).unfold(x, (2, 3), dilation=(1, 2), padding=1,
                                                stride=(2, 1)), ((1, 2, 5, 6),))
case("unfold_unbatched", lambda m, x: nnf(m).unfold(x, 3, padding=1, stride=2), ((2, 4, 3),))
case("fold", lambda m, x: nnf(m).fold(x, (3, 4), 2), ((2, 8, 6),))
case("fold_args", lambda m, x: nnf(m).fold(x, (5, 6), (2, 3), dilation=(1, 2), padding=1,
                                           stride=(2, 1)), ((1, 12, 12),))
case("fold_unbatched", lambda m, x: nnf(m).fold(x, 4, 3, padding=1, stride=2), ((9, 4),))
case("unfold_fold_roundtrip", lambda m, x: nnf(m).fold(nnf(m).unfold(x, 2, stride=1) ** 2,
                                                       (3, 3), 2), ((1, 2, 3, 3),))

(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


# ----------------------------------------------------------------- second order vs torch


@pytest.mark.parametrize("transposed", [False, True])
def test_second_order_gradients_match_torch(transposed, torch):
    """d/d(x, w, b) of a function of the first-order gradients (create_graph=True)."""
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal((2, 4, 4, 3)), rng.standard_normal((4, 2, 2, 2)),
          rng.standard_normal((4,))]
    got = []
    for m in (retrograd, torch):
        x, w, b = [m.tensor(a, requires_grad=True) for a in xs]
        fn = nnf(m).conv_transpose2d if transposed else nnf(m).conv2d
        y = fn(x, w, b, stride=2, padding=1, groups=2)
        gx, gw, gb = m.autograd.grad((y * y.tanh()).sum(), (x, w, b), create_graph=True)
        total = (gx ** 2).sum() + (gw ** 3).sum() + (gb * gx.sum()).sum()
        got.append([g.detach().numpy() for g in m.autograd.grad(total, (x, w, b))])
    for r, t in zip(*got):
        np.testing.assert_allclose(r, t, rtol=1e-9, atol=1e-10)


# ----------------------------------------------------------------- wrong calls vs torch


def _t(m, *shape):
    return m.ones(*shape)


# (id, call, words retrograd's message must contain (lowercase); None: torch accepts it too)
BAD_CALLS = [
    ("groups channels", lambda m: nnf(m).conv2d(_t(m, 2, 4, 5, 5), _t(m, 6, 2, 3, 3), groups=3),
     ["groups=3", "[2, 4, 5, 5]", "6 channels"]),
    ("groups out channels", lambda m: nnf(m).conv2d(_t(m, 2, 4, 5, 5), _t(m, 5, 2, 3, 3),
                                                    groups=2), ["divisible by 2", "[5, 2, 3, 3]"]),
    ("in channels", lambda m: nnf(m).conv1d(_t(m, 2, 4, 5), _t(m, 6, 3, 3)),
     ["conv1d", "[2, 4, 5]", "3 channels"]),
    ("kernel > input", lambda m: nnf(m).conv2d(_t(m, 2, 4, 5, 5), _t(m, 6, 4, 7, 7)),
     ["conv2d", "kernel size", "5 x 5", "7 x 7"]),
    ("kernel > input dilated", lambda m: nnf(m).conv1d(_t(m, 1, 1, 5), _t(m, 1, 1, 3),
                                                       dilation=3), ["conv1d", "kernel size"]),
    ("kernel fits padded", lambda m: nnf(m).conv2d(_t(m, 1, 4, 5, 5), _t(m, 6, 4, 7, 7),
                                                   padding=1), None),
    ("bad padding string", lambda m: nnf(m).conv2d(_t(m, 1, 4, 5, 5), _t(m, 6, 4, 3, 3),
                                                   padding="full"), ["padding", "full"]),
    ("same strided", lambda m: nnf(m).conv2d(_t(m, 1, 4, 5, 5), _t(m, 6, 4, 3, 3),
                                             padding="same", stride=2), ["same", "stride"]),
    ("weight dims", lambda m: nnf(m).conv2d(_t(m, 1, 4, 5, 5), _t(m, 6, 4, 3)),
     ["weight", "[6, 4, 3]"]),
    ("weight dims 3d", lambda m: nnf(m).conv3d(_t(m, 1, 1, 2, 2, 2), _t(m, 1, 1, 2, 2)),
     ["conv3d", "weight"]),
    ("input dims", lambda m: nnf(m).conv2d(_t(m, 2, 2, 4, 5, 5), _t(m, 6, 4, 3, 3)),
     ["conv2d", "[2, 2, 4, 5, 5]"]),
    ("input 1d", lambda m: nnf(m).conv1d(_t(m, 5), _t(m, 6, 4, 3)), ["conv1d", "[5]"]),
    ("bias size", lambda m: nnf(m).conv2d(_t(m, 1, 4, 5, 5), _t(m, 6, 4, 3, 3), _t(m, 5)),
     ["bias", "[5]", "6 elements"]),
    ("dtypes", lambda m: nnf(m).conv2d(_t(m, 1, 4, 5, 5).double(), _t(m, 6, 4, 3, 3)),
     ["double", "float"]),
    ("bias dtype", lambda m: nnf(m).conv2d(_t(m, 1, 4, 5, 5), _t(m, 6, 4, 3, 3),
                                           _t(m, 6).double()), ["bias", "double"]),
    ("stride 0", lambda m: nnf(m).conv2d(_t(m, 1, 4, 5, 5), _t(m, 6, 4, 3, 3), stride=0),
     ["stride"]),
    ("padding -1", lambda m: nnf(m).conv1d(_t(m, 1, 4, 5), _t(m, 6, 4, 3), padding=-1),
     ["padding"]),
    ("dilation 0", lambda m: nnf(m).conv1d(_t(m, 1, 4, 5), _t(m, 6, 4, 3), dilation=0),
     ["dilation"]),
    ("groups 0", lambda m: nnf(m).conv1d(_t(m, 1, 4, 5), _t(m, 6, 4, 3), groups=0), ["groups"]),
    ("stride length", lambda m: nnf(m).conv2d(_t(m, 1, 4, 5, 5), _t(m, 6, 4, 3, 3),
                                              stride=(1, 2, 3)), ["stride", "2"]),
    ("stride tuple ok", lambda m: nnf(m).conv2d(_t(m, 1, 4, 5, 5), _t(m, 6, 4, 3, 3),
                                                stride=[2]), None),
    ("input not tensor", lambda m: nnf(m).conv1d([1.0], _t(m, 6, 4, 3)), ["input"]),
    ("t output_padding", lambda m: nnf(m).conv_transpose2d(_t(m, 1, 4, 5, 5), _t(m, 4, 3, 3, 3),
                                                           output_padding=1), ["output padding"]),
    ("t output_padding ok", lambda m: nnf(m).conv_transpose2d(
        _t(m, 1, 4, 5, 5), _t(m, 4, 3, 3, 3), stride=2, output_padding=1), None),
    ("t groups", lambda m: nnf(m).conv_transpose2d(_t(m, 1, 4, 5, 5), _t(m, 4, 3, 3, 3),
                                                   groups=3), ["divisible by 3"]),
    ("t channels", lambda m: nnf(m).conv_transpose1d(_t(m, 1, 4, 5), _t(m, 3, 3, 3)),
     ["transposed", "[1, 4, 5]", "3 channels"]),
    ("t padding string", lambda m: nnf(m).conv_transpose2d(_t(m, 1, 4, 5, 5), _t(m, 4, 3, 3, 3),
                                                           padding="same"), ["padding"]),
    ("t bias", lambda m: nnf(m).conv_transpose2d(_t(m, 1, 4, 5, 5), _t(m, 4, 3, 3, 3),
                                                 _t(m, 4), groups=2), ["bias", "6 elements"]),
    ("t empty output", lambda m: nnf(m).conv_transpose2d(_t(m, 1, 2, 2, 3), _t(m, 2, 2, 3, 3),
                                                         padding=2), ["conv_transpose2d", "size"]),
    ("t weight dims", lambda m: nnf(m).conv_transpose2d(_t(m, 1, 4, 5, 5), _t(m, 4, 3, 3)),
     ["weight"]),
    ("convolution weight dims", lambda m: m.convolution(_t(m, 1, 2, 3), _t(m, 2, 2), None, [1],
                                                        [0], [1], False, [0], 1), ["weight"]),
    ("unfold dims", lambda m: nnf(m).unfold(_t(m, 1, 2, 3, 4, 5), 2), ["[1, 2, 3, 4, 5]"]),
    ("unfold kernel", lambda m: nnf(m).unfold(_t(m, 1, 2, 3, 3), (2, 2, 2)), ["kernel_size"]),
    ("unfold too big", lambda m: nnf(m).unfold(_t(m, 1, 2, 3, 3), 4), ["sliding blocks"]),
    ("unfold stride 0", lambda m: nnf(m).unfold(_t(m, 1, 2, 3, 3), 2, stride=0), ["stride"]),
    ("unfold padding -1", lambda m: nnf(m).unfold(_t(m, 1, 2, 3, 3), 2, padding=-1),
     ["padding"]),
    ("unfold long", lambda m: nnf(m).unfold(_t(m, 1, 2, 3, 3).long(), 2), ["long"]),
    ("fold dims", lambda m: nnf(m).fold(_t(m, 1, 2, 12, 16), (5, 5), 2), ["[1, 2, 12, 16]"]),
    ("fold channels", lambda m: nnf(m).fold(_t(m, 2, 13, 16), (5, 5), 2), ["divisible", "13"]),
    ("fold blocks", lambda m: nnf(m).fold(_t(m, 2, 12, 15), (5, 5), 2), ["16", "15"]),
    ("fold output_size", lambda m: nnf(m).fold(_t(m, 2, 12, 16), (5, 5, 5), 2),
     ["output_size"]),
    ("fold int size ok", lambda m: nnf(m).fold(_t(m, 2, 12, 16), 5, 2), None),
]


def _run(fn, m):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(m), None
    except Exception as e:  # noqa: BLE001 - comparing exceptions is the point
        return None, e


@pytest.mark.parametrize("fn,words", [c[1:] for c in BAD_CALLS], ids=[c[0] for c in BAD_CALLS])
def test_wrong_calls_raise_as_torch(fn, words, torch):
    want, t_err = _run(fn, torch)
    got, r_err = _run(fn, retrograd)
    if t_err is None:
        assert words is None, "torch accepts this call; fix the table"
        assert r_err is None, f"retrograd raised {r_err!r} where torch succeeds"
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
        return
    assert words is not None, f"torch raises {t_err!r}; fix the table"
    assert r_err is not None, f"retrograd returned a result where torch raises {t_err!r}"
    assert type(r_err).__module__ == "builtins", f"a foreign exception escaped: {r_err!r}"
    assert isinstance(r_err, type(t_err)), f"{type(r_err).__name__} ({r_err}), torch: {t_err!r}"
    for w in words:
        assert w in str(r_err).lower(), f"message does not name {w!r}: {r_err}"


# ----------------------------------------------------------------- behaviour


def test_same_padding_with_even_kernel_warns_as_torch():
    # (PyTorch warns once per process, so only retrograd's side can be checked here)
    with pytest.warns(UserWarning, match="even kernel lengths"):
        nnf(retrograd).conv1d(retrograd.ones(1, 1, 5), retrograd.ones(1, 1, 2), padding="same")


def test_float32_stays_float32_through_backward():
    x = retrograd.ones(2, 3, 5, 5, requires_grad=True)
    w = retrograd.ones(4, 3, 3, 3, requires_grad=True)
    b = retrograd.zeros(4, requires_grad=True)
    y = nnf(retrograd).conv2d(x, w, b, padding=1)
    y.sum().backward()
    assert y.dtype == x.grad.dtype == w.grad.dtype == b.grad.dtype == retrograd.float32


def test_columns_are_kept_only_when_the_weight_needs_a_gradient():
    x = retrograd.ones(1, 2, 4, 4, requires_grad=True)
    w = retrograd.ones(3, 2, 3, 3)
    y = nnf(retrograd).conv2d(x, w)
    assert y.grad_fn.saved[-1] is None  # the input gradient needs no columns
    w.requires_grad_(True)
    y = nnf(retrograd).conv2d(x, w)
    assert y.grad_fn.saved[-1].shape == (1, 1, 2 * 9, 4)
    with retrograd.no_grad():
        assert nnf(retrograd).conv2d(x, w).grad_fn is None


def test_in_place_change_of_the_input_after_forward_is_caught():
    x = retrograd.ones(1, 2, 4, 4, requires_grad=True) * 1
    w = retrograd.ones(3, 2, 3, 3, requires_grad=True)
    y = nnf(retrograd).conv2d(x, w)
    x.mul_(2)
    with pytest.raises(RuntimeError, match="inplace"):
        y.sum().backward()


def test_integer_convolution_as_torch(torch):
    x = np.arange(2 * 3 * 4 * 4).reshape(2, 3, 4, 4)
    w = np.arange(2 * 3 * 2 * 2).reshape(2, 3, 2, 2) % 5 - 2
    got = nnf(retrograd).conv2d(retrograd.tensor(x), retrograd.tensor(w), stride=2)
    want = nnf(torch).conv2d(torch.tensor(x), torch.tensor(w), stride=2)
    assert got.dtype == retrograd.int64
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_empty_batch(torch):
    for m in (retrograd, torch):
        x = m.ones(0, 2, 4, 4, requires_grad=True)
        w = m.ones(3, 2, 3, 3, requires_grad=True)
        y = nnf(m).conv2d(x, w, m.ones(3, requires_grad=True))
        y.sum().backward()
        t = nnf(m).conv_transpose2d(x, w.detach().transpose(0, 1), stride=2)
        u = nnf(m).unfold(x, 2)
        assert w.grad.abs().sum().item() == 0
        if m is retrograd:
            got = [tuple(v.shape) for v in (y, t, u, x.grad)]
        else:
            assert got == [tuple(v.shape) for v in (y, t, u, x.grad)]
