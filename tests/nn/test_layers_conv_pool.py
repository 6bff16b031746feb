"""Convolution and pooling layers against PyTorch: repr, state_dict, outputs and input and
parameter gradients with torch's weights copied in (float64, tight); default initialisation
bounds; argument errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import retrograd as T
from retrograd import nn

from .helpers import check_layer, close, compare_double_backward, compare_module, to_rg

RNG = np.random.default_rng(11)


def real(*shape):
    return RNG.standard_normal(shape)


def distinct(*shape):
    """No ties, so max pooling picks the same element as PyTorch."""
    return RNG.permutation(int(np.prod(shape))).reshape(shape) / 7.0


# (name, factory(nn) -> module, inputs); the factory runs with retrograd.nn and torch.nn
LAYERS = [
    ("Conv1d", lambda nn: nn.Conv1d(2, 3, 3), [real(2, 2, 6)]),
    ("Conv1d-unbatched", lambda nn: nn.Conv1d(2, 3, 2, stride=2, bias=False), [real(2, 7)]),
    ("Conv1d-same-reflect", lambda nn: nn.Conv1d(2, 2, 4, padding="same", dilation=1,
                                                 padding_mode="reflect"), [real(1, 2, 6)]),
    ("Conv1d-same-even", lambda nn: nn.Conv1d(2, 2, 4, padding="same"), [real(1, 2, 6)]),
    ("Conv2d-same-even-circular", lambda nn: nn.Conv2d(1, 2, (2, 4), padding="same",
                                                       padding_mode="circular"),
     [real(1, 1, 4, 5)]),
    ("Conv1d-valid", lambda nn: nn.Conv1d(2, 2, 3, padding="valid"), [real(1, 2, 5)]),
    ("Conv1d-circular", lambda nn: nn.Conv1d(2, 4, 3, padding=2, padding_mode="circular",
                                             groups=2), [real(1, 2, 5)]),
    ("Conv2d", lambda nn: nn.Conv2d(2, 3, (2, 3), stride=(2, 1), padding=1, dilation=(1, 2)),
     [real(2, 2, 5, 6)]),
    ("Conv2d-groups", lambda nn: nn.Conv2d(4, 2, 3, groups=2, bias=False),
     [real(1, 4, 4, 4)]),
    ("Conv2d-replicate", lambda nn: nn.Conv2d(1, 2, 3, padding=(1, 2),
                                              padding_mode="replicate"), [real(1, 1, 4, 4)]),
    ("Conv2d-same", lambda nn: nn.Conv2d(1, 1, (2, 3), padding="same", dilation=2),
     [real(1, 1, 5, 5)]),
    ("Conv3d", lambda nn: nn.Conv3d(2, 2, 2, padding=(0, 1, 0)), [real(1, 2, 3, 3, 3)]),
    ("Conv3d-circular", lambda nn: nn.Conv3d(1, 1, 3, padding=1, padding_mode="circular"),
     [real(1, 1, 3, 3, 3)]),
    ("ConvTranspose1d", lambda nn: nn.ConvTranspose1d(2, 3, 3, stride=2, padding=1,
                                                      output_padding=1), [real(2, 2, 4)]),
    ("ConvTranspose2d", lambda nn: nn.ConvTranspose2d(4, 2, 2, stride=2, groups=2,
                                                      dilation=1), [real(1, 4, 3, 2)]),
    ("ConvTranspose2d-dil", lambda nn: nn.ConvTranspose2d(1, 2, 3, dilation=2, bias=False),
     [real(1, 1, 2, 3)]),
    ("ConvTranspose3d", lambda nn: nn.ConvTranspose3d(1, 2, 2, stride=(1, 2, 1)),
     [real(1, 1, 2, 2, 2)]),
    ("MaxPool1d", lambda nn: nn.MaxPool1d(3, stride=2, padding=1, ceil_mode=True),
     [distinct(2, 2, 7)]),
    ("MaxPool2d", lambda nn: nn.MaxPool2d((2, 3), dilation=(1, 2)), [distinct(1, 2, 5, 7)]),
    ("MaxPool3d", lambda nn: nn.MaxPool3d(2, stride=1), [distinct(1, 1, 3, 3, 3)]),
    ("AvgPool1d", lambda nn: nn.AvgPool1d(3, stride=2, padding=1, count_include_pad=False),
     [real(2, 2, 6)]),
    ("AvgPool2d", lambda nn: nn.AvgPool2d(2, padding=1, ceil_mode=True), [real(1, 2, 5, 4)]),
    ("AvgPool2d-divisor", lambda nn: nn.AvgPool2d((2, 1), divisor_override=3),
     [real(1, 1, 4, 3)]),
    ("AvgPool3d", lambda nn: nn.AvgPool3d(2, stride=1), [real(1, 1, 3, 3, 3)]),
    ("AdaptiveAvgPool1d", lambda nn: nn.AdaptiveAvgPool1d(3), [real(2, 2, 7)]),
    ("AdaptiveAvgPool2d", lambda nn: nn.AdaptiveAvgPool2d((2, None)), [real(1, 2, 5, 3)]),
    ("AdaptiveAvgPool3d", lambda nn: nn.AdaptiveAvgPool3d(2), [real(1, 1, 3, 4, 5)]),
    ("AdaptiveMaxPool1d", lambda nn: nn.AdaptiveMaxPool1d(2), [distinct(2, 2, 5)]),
    ("AdaptiveMaxPool2d", lambda nn: nn.AdaptiveMaxPool2d((3, 2)), [distinct(1, 2, 5, 4)]),
    ("AdaptiveMaxPool3d", lambda nn: nn.AdaptiveMaxPool3d(2), [distinct(1, 1, 3, 4, 3)]),
    ("LPPool1d", lambda nn: nn.LPPool1d(2, 3, stride=2), [real(1, 2, 7)]),
    ("LPPool2d", lambda nn: nn.LPPool2d(3, 2), [np.abs(real(1, 2, 4, 4)) + 0.1]),
    ("LPPool3d", lambda nn: nn.LPPool3d(2, 2), [real(1, 1, 2, 4, 2)]),
]


# both libraries warn that an even kernel with padding='same' pads a copy of the input
@pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel:UserWarning")
@pytest.mark.parametrize("name, factory, inputs", LAYERS, ids=[c[0] for c in LAYERS])
def test_layer_matches_torch(torch, name, factory, inputs):
    check_layer(torch, factory, inputs)


@pytest.mark.parametrize("factory", [lambda nn: nn.Conv2d(2, 3, 3, padding=1),
                                     lambda nn: nn.ConvTranspose1d(2, 2, 3),
                                     lambda nn: nn.MaxPool2d(2), lambda nn: nn.AvgPool1d(2)])
def test_float32_stays_float32(torch, factory):
    shape = (1, 2, 4, 4) if "2d" in repr(factory(nn)) else (1, 2, 6)
    compare_module(torch, factory(nn), factory(torch.nn), [real(*shape)], dtype="float32")


@pytest.mark.parametrize("cls, k", [("Conv1d", 3), ("Conv2d", (2, 3)), ("Conv3d", 2),
                                    ("ConvTranspose1d", 3), ("ConvTranspose2d", 2),
                                    ("ConvTranspose3d", (1, 2, 2))])
def test_conv_default_init_bounds(cls, k):
    """kaiming_uniform_(a=sqrt(5)): weight and bias in U(-1/sqrt(fan_in), 1/sqrt(fan_in)),
    fan_in = weight.size(1) * prod(kernel) (for a transposed conv too, as PyTorch)."""
    T.manual_seed(0)
    m = getattr(nn, cls)(8, 16, k, groups=2)
    ks = m.kernel_size
    assert m.weight.shape == ((8, 8) if "Transpose" in cls else (16, 4)) + ks
    bound = 1 / math.sqrt(m.weight.shape[1] * math.prod(ks))
    for p in (m.weight, m.bias):
        w = p.detach().numpy()
        assert np.abs(w).max() <= bound
        assert np.abs(w).max() > 0.5 * bound  # spread over the interval, not squeezed
    assert m.weight.dtype == T.float32


def test_conv_dtype_argument():
    m = nn.Conv2d(1, 2, 3, dtype=T.float64)
    assert m.weight.dtype == T.float64 and m.bias.dtype == T.float64


@pytest.mark.parametrize("size", [(9,), (1, 2, 9), [10]])
def test_conv_transpose_output_size(torch, size):
    rg_m, th_m = nn.ConvTranspose1d(2, 2, 3, stride=2), torch.nn.ConvTranspose1d(2, 2, 3, stride=2)
    th_m = th_m.double()
    rg_m = rg_m.double()
    rg_m.load_state_dict({k: to_rg(v) for k, v in th_m.state_dict().items()})
    x = real(1, 2, 4)
    close(rg_m(T.tensor(x), output_size=size), th_m(torch.tensor(x), output_size=size), 1e-12)


def test_conv_transpose_bad_output_size(torch):
    m = nn.ConvTranspose2d(1, 1, 3, stride=2)
    with pytest.raises(ValueError, match="requested an output size of"):
        m(T.zeros(1, 1, 3, 3), output_size=(12, 7))
    with pytest.raises(ValueError, match="output_size must have 2 or 4 elements"):
        m(T.zeros(1, 1, 3, 3), output_size=(7,))


@pytest.mark.parametrize("call, exc, match", [
    (lambda: nn.Conv2d(3, 4, 3, groups=2), ValueError, "in_channels .* divisible by groups"),
    (lambda: nn.Conv2d(4, 3, 3, groups=2), ValueError, "out_channels .* divisible by groups"),
    (lambda: nn.Conv2d(4, 4, 3, groups=0), ValueError, "groups must be a positive integer"),
    (lambda: nn.Conv1d(1, 1, 3, padding="full"), ValueError, "Invalid padding string"),
    (lambda: nn.Conv1d(1, 1, 3, stride=2, padding="same"), ValueError, "strided"),
    (lambda: nn.Conv1d(1, 1, 3, padding_mode="wrap"), ValueError, "padding_mode must be"),
    (lambda: nn.ConvTranspose1d(1, 1, 3, padding_mode="reflect"), ValueError,
     'Only "zeros" padding mode'),
    (lambda: nn.FractionalMaxPool2d(2), ValueError, "either an output size"),
    (lambda: nn.FractionalMaxPool2d(2, 2, 0.5), ValueError, "only one of"),
    (lambda: nn.FractionalMaxPool3d(2, output_ratio=1.5), ValueError, "between 0 and 1"),
])
def test_constructor_errors_match_torch(torch, call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_reprs_with_options(torch):
    factories = [
        lambda nn: nn.Conv2d(2, 4, 3, padding="same", groups=2, bias=False,
                             padding_mode="reflect"),
        lambda nn: nn.ConvTranspose2d(2, 4, 3, stride=2, output_padding=1, dilation=2),
        lambda nn: nn.MaxPool2d((2, 1), return_indices=True),
        lambda nn: nn.AvgPool1d(3), lambda nn: nn.AvgPool3d(2, divisor_override=2),
        lambda nn: nn.AdaptiveMaxPool2d((2, None), return_indices=True),
        lambda nn: nn.MaxUnpool2d(2), lambda nn: nn.MaxUnpool3d(2, stride=1, padding=0),
        lambda nn: nn.LPPool2d(2, 3), lambda nn: nn.FractionalMaxPool2d(2, output_size=3),
        lambda nn: nn.FractionalMaxPool3d(2, output_ratio=0.5),
    ]
    for f in factories:
        assert repr(f(nn)) == repr(f(torch.nn))


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_maxpool_indices_and_unpool(torch, dims):
    shape = (1, 2) + (4,) * dims
    x = distinct(*shape)
    pool = f"MaxPool{dims}d"
    unpool = f"MaxUnpool{dims}d"
    rg_out, rg_idx = getattr(nn, pool)(2, return_indices=True)(T.tensor(x, requires_grad=True))
    th_out, th_idx = getattr(torch.nn, pool)(2, return_indices=True)(torch.tensor(x))
    close(rg_out, th_out, 1e-12)
    np.testing.assert_array_equal(rg_idx.numpy(), th_idx.numpy())
    rg_up = getattr(nn, unpool)(2)(rg_out, rg_idx)
    th_up = getattr(torch.nn, unpool)(2)(th_out, th_idx)
    close(rg_up, th_up, 1e-12)
    rg_up2 = getattr(nn, unpool)(2)(rg_out, rg_idx, output_size=(5,) * dims)
    th_up2 = getattr(torch.nn, unpool)(2)(th_out, th_idx, output_size=(5,) * dims)
    close(rg_up2, th_up2, 1e-12)
    rg_up2.sum().backward()


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_adaptive_max_pool_indices(torch, dims):
    x = distinct(*(1, 2) + (5,) * dims)
    rg_out, rg_idx = getattr(nn, f"AdaptiveMaxPool{dims}d")(2, return_indices=True)(T.tensor(x))
    th_out, th_idx = getattr(torch.nn, f"AdaptiveMaxPool{dims}d")(2, return_indices=True)(
        torch.tensor(x))
    close(rg_out, th_out, 1e-12)
    np.testing.assert_array_equal(rg_idx.numpy(), th_idx.numpy())


@pytest.mark.parametrize("dims", [2, 3])
def test_fractional_max_pool_with_fixed_samples(torch, dims):
    """With the same ``_random_samples`` the windows are PyTorch's: values, indices and
    the input gradient agree."""
    shape = (1, 2) + (7,) * dims
    x = distinct(*shape)
    samples = RNG.uniform(0, 1, (1, 2, dims))
    kwargs = dict(output_size=(3,) * dims, return_indices=True)
    name = f"FractionalMaxPool{dims}d"
    rg_m = getattr(nn, name)(2, _random_samples=T.tensor(samples), **kwargs)
    th_m = getattr(torch.nn, name)(2, _random_samples=torch.tensor(samples), **kwargs)
    xr, xt = T.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (rg_out, rg_idx), (th_out, th_idx) = rg_m(xr), th_m(xt)
    close(rg_out, th_out, 1e-12)
    np.testing.assert_array_equal(rg_idx.numpy(), th_idx.numpy())
    rg_out.sum().backward()
    th_out.sum().backward()
    close(xr.grad, xt.grad, 1e-12)
    assert list(rg_m.state_dict()) == list(th_m.state_dict()) == ["_random_samples"]


def test_fractional_max_pool_random_ratio():
    y = nn.FractionalMaxPool2d(2, output_ratio=0.5)(T.randn(2, 3, 8, 6))
    assert y.shape == (2, 3, 4, 3)


def test_conv_state_dict_round_trip(torch):
    th = torch.nn.Conv2d(2, 3, 3)
    rg = nn.Conv2d(2, 3, 3)
    rg.load_state_dict({k: to_rg(v) for k, v in th.state_dict().items()})
    for k, v in rg.state_dict().items():
        close(v, th.state_dict()[k], 0)


@pytest.mark.parametrize("cls, kwargs, shape", [
    ("LazyConv1d", dict(out_channels=3, kernel_size=2), (2, 4, 5)),
    ("LazyConv2d", dict(out_channels=4, kernel_size=3, groups=2, padding=1), (1, 2, 4, 4)),
    ("LazyConv3d", dict(out_channels=2, kernel_size=2, bias=False), (1, 2, 3, 3, 3)),
    ("LazyConv1d", dict(out_channels=3, kernel_size=2), (4, 5)),
    ("LazyConvTranspose1d", dict(out_channels=2, kernel_size=3, stride=2), (2, 3, 4)),
    ("LazyConvTranspose2d", dict(out_channels=4, kernel_size=2, groups=2), (1, 2, 3, 3)),
    ("LazyConvTranspose3d", dict(out_channels=2, kernel_size=2), (1, 1, 2, 2, 2)),
])
def test_lazy_conv_becomes_conv(torch, cls, kwargs, shape):
    rg_m, th_m = getattr(nn, cls)(**kwargs), getattr(torch.nn, cls)(**kwargs)
    assert repr(rg_m) == repr(th_m)
    assert list(rg_m.state_dict()) == list(th_m.state_dict())
    x = real(*shape).astype(np.float32)
    rg_m(T.tensor(x))
    th_m(torch.tensor(x))
    assert type(rg_m).__name__ == type(th_m).__name__ == cls[4:]
    assert repr(rg_m) == repr(th_m)
    bound = 1 / math.sqrt(rg_m.weight.shape[1] * math.prod(rg_m.kernel_size))
    assert np.abs(rg_m.weight.detach().numpy()).max() <= bound
    compare_module(torch, rg_m, th_m, [real(*shape)], dtype="float64")


def test_lazy_conv_loads_a_state_dict_before_its_first_call(torch):
    th = torch.nn.Conv2d(3, 4, 2, groups=1)
    rg = nn.LazyConv2d(4, 2)
    rg.load_state_dict({k: to_rg(v) for k, v in th.state_dict().items()})
    x = real(1, 3, 3, 3).astype(np.float32)
    close(rg(T.tensor(x)), th(torch.tensor(x)), 1e-5)
    assert rg.in_channels == 3 and type(rg) is nn.Conv2d


def test_lazy_conv_errors():
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input"):
        nn.LazyConv2d(2, 2)(T.zeros(2, 3))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv1d(4, 2, groups=2)(T.zeros(1, 3, 4))


@pytest.mark.parametrize("factory, shape", [
    (lambda nn: nn.Conv2d(2, 2, 2, padding=1, padding_mode="reflect"), (1, 2, 3, 3)),
    (lambda nn: nn.ConvTranspose1d(2, 2, 2, stride=2), (1, 2, 3)),
    (lambda nn: nn.AvgPool2d(2), (1, 1, 4, 4)),
    (lambda nn: nn.LPPool1d(2, 2), (1, 2, 4)),
])
def test_double_backward_matches_torch(torch, factory, shape):
    compare_double_backward(torch, factory, [real(*shape)])


def test_default_init_draws_from_retrograd_generator():
    """Same seed, same weights; the next module draws new ones."""
    T.manual_seed(3)
    a = nn.Conv2d(2, 3, 3)
    b = nn.Conv2d(2, 3, 3)
    T.manual_seed(3)
    c = nn.Conv2d(2, 3, 3)
    np.testing.assert_array_equal(a.weight.detach().numpy(), c.weight.detach().numpy())
    np.testing.assert_array_equal(a.bias.detach().numpy(), c.bias.detach().numpy())
    assert not np.array_equal(a.weight.detach().numpy(), b.weight.detach().numpy())
    g = T.Generator().manual_seed(5)
    T.manual_seed(5)
    e = nn.Embedding(4, 3)
    np.testing.assert_array_equal(e.weight.detach().numpy(), T.randn(4, 3, generator=g).numpy())
