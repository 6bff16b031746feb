"""nn.grad.conv{1,2,3}d_{input,weight} against torch.nn.grad: values over strides,
paddings, dilations and groups, their own gradients (double backward) and the error for
an input of the wrong rank."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as T

from .helpers import close

RNG = np.random.default_rng(0)

# (dims, input shape, weight shape, stride, padding, dilation, groups)
CASES = [
    (1, (2, 2, 7), (3, 2, 3), 1, 0, 1, 1),
    (1, (1, 4, 9), (4, 2, 2), 2, 1, 2, 2),
    (2, (1, 2, 6, 5), (3, 2, 3, 2), (2, 1), (1, 0), 1, 1),
    (2, (2, 4, 5, 5), (2, 2, 2, 2), 1, 1, (2, 1), 2),
    (3, (1, 2, 4, 4, 3), (2, 2, 2, 2, 2), (1, 2, 1), 1, 1, 1),
]


def _output_shape(torch, dims, x, w, stride, padding, dilation, groups):
    conv = getattr(torch.nn.functional, f"conv{dims}d")
    return conv(x, w, None, stride, padding, dilation, groups).shape


@pytest.mark.parametrize("dims,x_shape,w_shape,stride,padding,dilation,groups", CASES)
def test_input_and_weight_gradients_match_torch(torch, dims, x_shape, w_shape, stride,
                                                padding, dilation, groups):
    x, w = RNG.standard_normal(x_shape), RNG.standard_normal(w_shape)
    out_shape = _output_shape(torch, dims, torch.tensor(x), torch.tensor(w), stride, padding,
                              dilation, groups)
    go = RNG.standard_normal(tuple(out_shape))
    args = (stride, padding, dilation, groups)
    ours_in = getattr(T.nn.grad, f"conv{dims}d_input")(
        x_shape, T.tensor(w), T.tensor(go), *args)
    theirs_in = getattr(torch.nn.grad, f"conv{dims}d_input")(
        x_shape, torch.tensor(w), torch.tensor(go), *args)
    close(ours_in, theirs_in, 1e-12)
    ours_w = getattr(T.nn.grad, f"conv{dims}d_weight")(T.tensor(x), w_shape, T.tensor(go), *args)
    theirs_w = getattr(torch.nn.grad, f"conv{dims}d_weight")(
        torch.tensor(x), w_shape, torch.tensor(go), *args)
    close(ours_w, theirs_w, 1e-12)
    assert not ours_in.requires_grad and not ours_w.requires_grad


@pytest.mark.parametrize("dims,x_shape,w_shape,stride,padding,dilation,groups", CASES[1:3])
def test_results_are_differentiable_as_torch(torch, dims, x_shape, w_shape, stride, padding,
                                             dilation, groups):
    x, w = RNG.standard_normal(x_shape), RNG.standard_normal(w_shape)
    out_shape = _output_shape(torch, dims, torch.tensor(x), torch.tensor(w), stride, padding,
                              dilation, groups)
    go = RNG.standard_normal(tuple(out_shape))
    args = (stride, padding, dilation, groups)
    grads = []
    for lib in (T, torch):
        tw = lib.tensor(w, requires_grad=True)
        tx = lib.tensor(x, requires_grad=True)
        tgo = lib.tensor(go, requires_grad=True)
        gi = getattr(lib.nn.grad, f"conv{dims}d_input")(x_shape, tw, tgo, *args)
        gw = getattr(lib.nn.grad, f"conv{dims}d_weight")(tx, w_shape, tgo, *args)
        ((gi * gi).sum() + (gw * gw).sum()).backward()
        grads.append((tw.grad, tx.grad, tgo.grad))
    for ours, theirs in zip(*grads):
        close(ours, theirs, 1e-10)


def test_wrong_rank_error_matches_torch(torch):
    messages = []
    for lib in (T, torch):
        with pytest.raises(RuntimeError) as info:
            lib.nn.grad.conv2d_input((1, 2, 5), lib.ones(3, 2, 3, 3), lib.ones(1, 3, 3, 3))
        messages.append(str(info.value))
    assert messages[0] == messages[1]
