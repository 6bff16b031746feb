"""Sliding windows (ops/windows.py): the view, its output-size arithmetic and its adjoint.

The view is checked element by element against a loop over positions, the adjoint by the
inner-product identity <windows(x), g> = <x, adjoint(g)>, and the output sizes (ceil_mode
included) against PyTorch's pooling and convolution.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from retrograd.ops.windows import (
    expand_arg, output_shape, output_size, pad_spatial, padding_pairs, sliding_windows,
    windows_adjoint,
)

# (spatial, kernel, stride, padding pairs, dilation, ceil_mode)
SETTINGS = [
    ((7,), (3,), (1,), ((0, 0),), (1,), False),
    ((7,), (2,), (3,), ((1, 1),), (2,), False),
    ((6,), (3,), (2,), ((1, 1),), (1,), True),
    ((5, 6), (3, 2), (1, 2), ((1, 1), (0, 1)), (1, 2), False),
    ((5, 5), (2, 2), (2, 2), ((0, 0), (0, 0)), (1, 1), True),
    ((4, 5), (3, 3), (2, 1), ((1, 1), (1, 1)), (1, 1), False),
    ((4, 5, 3), (2, 3, 1), (1, 2, 1), ((0, 1), (1, 1), (0, 0)), (2, 1, 1), False),
    ((5, 4, 4), (3, 2, 2), (2, 2, 2), ((1, 1), (0, 0), (1, 1)), (1, 1, 1), True),
]


def _padded(x, pairs, value):
    width = [(0, 0)] * (x.ndim - len(pairs)) + list(pairs)
    return np.pad(x, width, constant_values=value)


def _loop_windows(x, kernel, stride, pairs, dilation, ceil_mode, value):
    """The windows by an explicit loop over positions (the reference)."""
    n = len(kernel)
    spatial = x.shape[-n:]
    out = output_shape(spatial, kernel, stride, pairs, dilation, ceil_mode)
    # pad generously on the high side for ceil_mode's partial windows
    big = tuple((lo, hi + max(kernel) * max(dilation) + max(stride)) for lo, hi in pairs)
    xp = _padded(x, big, value)
    res = np.empty(x.shape[:-n] + out + tuple(kernel), x.dtype)
    for o in itertools.product(*map(range, out)):
        for k in itertools.product(*map(range, kernel)):
            idx = tuple(oi * s + ki * d for oi, ki, s, d in zip(o, k, stride, dilation))
            res[(Ellipsis, *o, *k)] = xp[(Ellipsis, *idx)]
    return res


@pytest.mark.parametrize("setting", SETTINGS, ids=str)
def test_windows_match_a_loop_over_positions(setting):
    spatial, kernel, stride, pairs, dilation, ceil_mode = setting
    x = np.random.default_rng(0).standard_normal((2, 3) + spatial)
    got = sliding_windows(x, kernel, stride, pairs, dilation, ceil_mode)
    want = _loop_windows(x, kernel, stride, pairs, dilation, ceil_mode, 0.0)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("setting", SETTINGS, ids=str)
def test_adjoint_is_the_transpose(setting):
    spatial, kernel, stride, pairs, dilation, ceil_mode = setting
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3) + spatial)
    w = sliding_windows(x, kernel, stride, pairs, dilation, ceil_mode)
    g = rng.standard_normal(w.shape)
    back = windows_adjoint(g, x.shape, kernel, stride, pairs, dilation, ceil_mode)
    assert back.shape == x.shape and back.dtype == g.dtype
    np.testing.assert_allclose((w * g).sum(), (x * back).sum(), rtol=1e-12)


def test_adjoint_of_a_transposed_view_and_float32():
    x = np.random.default_rng(2).standard_normal((2, 3, 5, 5)).astype(np.float32)
    # a column buffer laid out (N, C, kh, kw, oh, ow), handed over as (N, C, oh, ow, kh, kw)
    cols = np.ascontiguousarray(sliding_windows(x, (3, 3)).transpose(0, 1, 4, 5, 2, 3))
    back = windows_adjoint(cols.transpose(0, 1, 4, 5, 2, 3), x.shape, (3, 3))
    assert back.dtype == np.float32
    # each input element is counted once per window that holds it
    counts = windows_adjoint(np.ones((1, 1, 3, 3, 3, 3)), (1, 1, 5, 5), (3, 3))[0, 0]
    np.testing.assert_allclose(back, x * counts, rtol=1e-6)


def test_view_shares_memory_without_padding_and_is_read_only():
    x = np.zeros((1, 2, 6, 6))
    w = sliding_windows(x, (3, 3), (1, 1))
    assert np.shares_memory(w, x)
    with pytest.raises(ValueError):
        w[0, 0, 0, 0, 0, 0] = 1.0


def test_pad_value_fills_the_padding():
    x = np.ones((1, 1, 3))
    w = sliding_windows(x, (2,), (2,), ((1, 1),), (1,), False, pad_value=-np.inf)
    np.testing.assert_array_equal(w[0, 0], [[-np.inf, 1.0], [1.0, 1.0]])


def test_unbatched_and_one_lead_dimension():
    x = np.arange(10.0).reshape(2, 5)  # (C, L)
    w = sliding_windows(x, (2,), (2,))
    np.testing.assert_array_equal(w[1], [[5.0, 6.0], [7.0, 8.0]])


def test_no_window_fits():
    with pytest.raises(ValueError, match="no window"):
        sliding_windows(np.zeros((1, 1, 2)), (3,))


@pytest.mark.parametrize("size,k,s,p,d", [(7, 3, 2, 1, 1), (8, 2, 2, 0, 1), (6, 3, 2, 1, 1),
                                          (5, 2, 3, 1, 1), (9, 3, 2, 0, 2), (4, 4, 1, 2, 1)])
def test_output_size_matches_torch_pooling(torch, size, k, s, p, d):
    x = torch.zeros(1, 1, size)
    for ceil_mode in (False, True):
        want = torch.nn.functional.max_pool1d(x, k, s, p, d, ceil_mode).shape[-1]
        assert output_size(size, k, s, p, d, ceil_mode) == want


def test_output_shape_matches_torch_conv(torch):
    x = torch.zeros(1, 1, 9, 8, 7)
    w = torch.zeros(1, 1, 3, 2, 2)
    want = torch.nn.functional.conv3d(x, w, None, (2, 1, 3), (1, 0, 2), (1, 3, 2)).shape[2:]
    assert output_shape((9, 8, 7), (3, 2, 2), (2, 1, 3), (1, 0, 2), (1, 3, 2)) == tuple(want)


def test_argument_helpers():
    assert expand_arg(2, 3, "stride", "conv3d") == (2, 2, 2)
    assert expand_arg((2,), 2, "stride", "conv2d") == (2, 2)
    assert expand_arg([1, 2], 2, "stride", "conv2d") == (1, 2)
    with pytest.raises(RuntimeError, match="conv2d.*stride"):
        expand_arg((1, 2, 3), 2, "stride", "conv2d")
    with pytest.raises(TypeError, match="stride"):
        expand_arg("a", 2, "stride", "conv2d")
    assert padding_pairs((1, (0, 2))) == ((1, 1), (0, 2))
    np.testing.assert_array_equal(pad_spatial(np.ones((1, 2)), ((1, -1),), 5.0), [[5.0, 1.0]])
