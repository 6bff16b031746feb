"""Derivatives recorded as ONE node, as PyTorch's: under create_graph the derivative of a
convolution, of nll_loss's general path and of prelu's weight is a single backward-backward
node with PyTorch's name and edges (not composed ops, nor a node tied on top), and its own
derivatives (second and third order) are PyTorch's."""

import numpy as np
import pytest
import torch

import retrograd as T


def _name(lib, fn):
    if fn is None:
        return None
    return fn.name()


def _structure(lib, grads):
    """Each derivative's node and the names of its edges."""
    return [(_name(lib, d.grad_fn),
             [_name(lib, n) for n, _ in d.grad_fn.next_functions]) for d in grads]


CONV_CASES = {
    "conv2d_groups_stride": ("conv2d", (2, 4, 5, 6), (6, 2, 3, 2),
                             dict(stride=2, padding=1, groups=2)),
    "conv1d_dilation": ("conv1d", (2, 3, 7), (4, 3, 3), dict(padding=2, dilation=2)),
    "conv_transpose2d": ("conv_transpose2d", (2, 4, 3, 4), (4, 3, 3, 3),
                         dict(stride=2, padding=1)),
    "conv_transpose1d_groups": ("conv_transpose1d", (1, 4, 5), (4, 1, 3),
                                dict(stride=2, groups=2, dilation=2)),
}


def _conv_run(lib, name, arrays, kw):
    x, w, b = (lib.tensor(a, requires_grad=True) for a in arrays)
    y = getattr(lib.nn.functional, name)(x, w, b, **kw)
    grads = lib.autograd.grad(y.sin().sum(), (x, w, b), create_graph=True)
    second = lib.autograd.grad(sum((d * d).sum() for d in grads), (x, w, b), create_graph=True)
    third = lib.autograd.grad(sum(s.cos().sum() for s in second), (x, w, b))
    values = [np.asarray(t.detach().numpy()) for t in second + third]
    return _structure(lib, grads), values


@pytest.mark.parametrize("case", sorted(CONV_CASES))
def test_convolution_derivative_is_one_node_like_torch(case):
    name, x_shape, w_shape, kw = CONV_CASES[case]
    rng = np.random.default_rng(0)
    transposed = "transpose" in name
    channels = w_shape[1] * kw.get("groups", 1) if transposed else w_shape[0]
    arrays = (rng.standard_normal(x_shape), rng.standard_normal(w_shape),
              rng.standard_normal(channels))
    ours, ours_values = _conv_run(T, name, arrays, kw)
    theirs, their_values = _conv_run(torch, name, arrays, kw)
    assert ours == theirs
    assert all(s == "ConvolutionBackwardBackward0" for s, _ in ours)
    for a, b in zip(ours_values, their_values):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


def _nll_run(lib, x_array, t_array, w_array, kw):
    x = lib.tensor(x_array, requires_grad=True)
    weight = None if w_array is None else lib.tensor(w_array)
    loss = lib.nn.functional.nll_loss(x.tanh(), lib.tensor(t_array), weight=weight, **kw)
    scale = lib.tensor(1.5, dtype=lib.float64, requires_grad=True)  # (a gradient with a graph)
    gx, = lib.autograd.grad((loss * scale).sum(), x, create_graph=True)
    # gx is tanh's backward; its first edge is nll_loss's derivative
    nll_node = gx.grad_fn.next_functions[0][0]
    structure = (_name(lib, nll_node), [_name(lib, n) for n, _ in nll_node.next_functions])
    second, = lib.autograd.grad((gx * gx).sum(), x)
    return structure, np.asarray(second.detach().numpy())


@pytest.mark.parametrize("shape", [(3, 4), (4,), (3, 4, 2, 2)])
@pytest.mark.parametrize("kw", [dict(), dict(reduction="sum", ignore_index=1),
                                dict(reduction="none", ignore_index=1)])
def test_nll_loss_general_derivative_is_one_node_like_torch(shape, kw):
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape)
    target_shape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
    target = rng.integers(0, 4, target_shape)
    weight = rng.random(4)
    ours = _nll_run(T, x, target, weight, kw)
    theirs = _nll_run(torch, x, target, weight, kw)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-10, atol=1e-12)


def test_prelu_weight_derivative_is_one_node_like_torch():
    rng = np.random.default_rng(2)
    arrays = (rng.standard_normal((2, 3, 4)), rng.random(3) * 0.3)
    out = []
    for lib in (T, torch):
        x, w = (lib.tensor(a, requires_grad=True) for a in arrays)
        gx, gw = lib.autograd.grad(lib.nn.functional.prelu(x, w).pow(2).sum(), (x, w),
                                   create_graph=True)
        kernel = gw.grad_fn.next_functions[0][0].next_functions[0][0]  # under view and sum
        structure = (_name(lib, kernel), [_name(lib, n) for n, _ in kernel.next_functions])
        second = lib.autograd.grad(gw.sum(), (x, w))
        out.append((structure, [np.asarray(s.detach().numpy()) for s in second]))
    assert out[0][0] == out[1][0]
    for a, b in zip(out[0][1], out[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
