"""Convolutions (1-3 spatial dimensions, transposed too) and unfold / fold.

Three array kernels, all on the column buffer ("im2col") of the sliding windows of
ops/windows.py, each one batched BLAS matmul (per group), never a loop over positions:

* :func:`_conv_forward`   ``x (N, Ci, *S), w (Co, Ci/g, *K) -> y (N, Co, *O)``
* :func:`_conv_transposed` ``y, w -> x``: the transpose of the above in ``x`` (columns
  ``w^T y``, scatter-added back by the windows' adjoint); a transposed convolution, and the
  input gradient of a convolution;
* :func:`_conv_weight_grad` ``x, y -> w``: the gradient of a convolution's weight.

The three are one bilinear map seen from its three sides, so their derivatives are each
other: the ``convolution`` record (PyTorch's ConvolutionBackward0, transposed or not) and
the ``weight_grad`` record differentiate into those two records again, and every order of
derivative works (double backward, gradgradcheck).  Under a first-order backward the
forward's column buffer is kept and reused for the weight gradient (one im2col per layer and
step, not two); with ``create_graph=True`` the recorded ops recompute it.

Layout: columns are ``(N, groups, Ci/g * prod(K), prod(O))`` so that ``w`` as ``(g, Co/g,
Ci/g * prod(K))`` times the columns is ``(N, Co, *O)``, already PyTorch's NCHW: no copy of
the output.

>>> import retrograd as T
>>> F = T.nn.functional
>>> F.conv1d(T.tensor([[[1.0, 2.0, 3.0]]]), T.tensor([[[1.0, -1.0]]]))
tensor([[[-1., -1.]]])
"""

from __future__ import annotations

import math
import warnings

from ..autograd.grad_mode import state
from ..autograd.forward_state import fw
from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._apply import INPUTS, NOTHING, multi_output_class, node_class, record, record_multi_inputs
from .derivative_flags import tie
from .windows import expand_arg, sliding_windows, windows_adjoint
from .quiet_fp import quiet_fp

# ----------------------------------------------------------------- array kernels


def _columns(x, kernel, stride, pairs, dilation, groups, out=None):
    """im2col: ``(N, g, Ci/g * prod(K), prod(O))`` (one copy of the windows) and ``O``.

    ``out`` keeps only the first ``out`` windows along each dimension: the transpose of a
    transposed convolution whose ``output_padding`` reached past the last window."""
    n = len(kernel)
    win = sliding_windows(x, kernel, stride, pairs, dilation)  # (N, C, *O, *K), a view
    if out is not None and tuple(out) != win.shape[2:2 + n]:
        win = win[(slice(None), slice(None), *(slice(0, o) for o in out))]
    out = win.shape[2:2 + n]
    perm = (0, 1, *range(2 + n, 2 + 2 * n), *range(2, 2 + n))  # (N, C, *K, *O)
    cols = win.transpose(perm).reshape(
        x.shape[0], groups, x.shape[1] // groups * math.prod(kernel), math.prod(out))
    return cols, out


@quiet_fp
def _conv_forward(x, w, pairs, stride, dilation, groups, out=None):
    """``(y, columns)``: the convolution of ``x`` with ``w`` (no bias); ``out``: see
    :func:`_columns`."""
    kernel = w.shape[2:]
    cols, out = _columns(x, kernel, stride, pairs, dilation, groups, out)
    wm = w.reshape(groups, w.shape[0] // groups, -1)
    y = namespace(x).matmul(wm, cols)  # (N, g, Co/g, L): one BLAS call per (sample, group)
    return y.reshape((x.shape[0], w.shape[0]) + out), cols


@quiet_fp
def _conv_transposed(y, w, x_shape, pairs, stride, dilation, groups):
    """The transpose of :func:`_conv_forward` in ``x``: ``y (N, Co, *O) -> (N, Ci, *S)``."""
    xp = namespace(y)
    n = y.ndim - 2
    kernel = tuple(w.shape[2:])
    out = tuple(y.shape[2:])
    big_n = y.shape[0]
    wm = w.reshape(groups, w.shape[0] // groups, -1)
    ym = y.reshape(big_n, groups, w.shape[0] // groups, math.prod(out))
    # (the weight transposed into a contiguous copy first: small, and the batched GEMM
    # runs ~15% faster on it than on the transposed view)
    cols = xp.matmul(xp.ascontiguousarray(wm.swapaxes(1, 2)), ym)  # (N, g, Ci/g * K, L)
    cols = cols.reshape((big_n, x_shape[1]) + kernel + out)
    perm = (0, 1, *range(2 + n, 2 + 2 * n), *range(2, 2 + n))  # (N, Ci, *O, *K), a view
    return windows_adjoint(cols.transpose(perm), x_shape, kernel, stride, pairs, dilation)


def _conv_weight_grad(cols, y, w_shape, groups):
    """``sum_n y[n] cols[n]^T``: the weight gradient from the columns of ``x``."""
    big_n = y.shape[0]
    ym = y.reshape(big_n, groups, w_shape[0] // groups, math.prod(y.shape[2:]))
    gw = namespace(y).matmul(ym, cols.swapaxes(-1, -2))  # (N, g, Co/g, Ci/g * K)
    return gw.sum(axis=0).reshape(w_shape)


# ----------------------------------------------------------------- records
# params of the convolution record: (transposed, pairs, stride, dilation, groups, shape), with
# ``shape`` the output's shape for a transposed one (it depends on output_padding), and for a
# plain one None or the spatial size to crop the output to (see _columns)


def _convolution(x, w, b, transposed, pairs, stride, dilation, groups, x_shape=None):
    """The ``convolution`` record on tensors (recorded) or arrays (computed)."""
    params = (transposed, pairs, stride, dilation, groups, x_shape)
    tx, tw, tb = (isinstance(v, Tensor) for v in (x, w, b))
    if not (tx or tw or tb):
        return _convolution_fwd(x, w, b, *params)[0]
    xd = x._data if tx else x
    wd = w._data if tw else w
    bd = b._data if tb else b
    needs = state.enabled and any(v._requires_grad for v in (x, w, b) if isinstance(v, Tensor))
    data, cols = _convolution_fwd(xd, wd, bd, *params)
    out = make_tensor(data)
    if needs:
        keep = cols is not None and tw and w._requires_grad
        record(_ConvolutionBackward, (x, w, b), out, params, (cols if keep else None,))
    if fw.active:  # forward AD: the tangent (ops/_jvp.py)
        fw.propagate_node(_ConvolutionBackward, (x, w, b), out, params, (None,))
    return out


@quiet_fp
def _convolution_fwd(x, w, b, transposed, pairs, stride, dilation, groups, x_shape):
    if transposed:
        y, cols = _conv_transposed(x, w, x_shape, pairs, stride, dilation, groups), None
    else:
        y, cols = _conv_forward(x, w, pairs, stride, dilation, groups, x_shape)
        if x.shape[1] == 0:
            # PyTorch's empty-weight path (ConvBackend::Empty) keeps the input's 0 channels:
            # conv1d of [N, 0, L] by [Co, 0, K] is [N, 0, L'], not [N, Co, L'] of the bias
            # (fuzz seeds 12564073, 12657216)
            return y[:, :0], cols
    if b is not None:
        y += b.reshape((-1,) + (1,) * (y.ndim - 2))
    return y, cols


def _bias_grad(g):
    axes = (0, *range(2, g.ndim))
    return g.sum(axes) if isinstance(g, Tensor) else g.sum(axis=axes)


def _convolution_vjp(node, g, saved):
    x, w, _b, cols = saved
    transposed, pairs, stride, dilation, groups, x_shape = node.params
    nx, nw, nb = node.next
    if isinstance(g, Tensor) and not fw.active:
        return _backward_record(node, g, saved)
    if isinstance(g, Tensor) and (0 in g.shape or 0 in x.shape):
        # nothing to differentiate: PyTorch's double backward of an empty convolution gives
        # no gradient to anything, though the derivatives require grad (tie below)
        arrays = [v._data if isinstance(v, Tensor) else v for v in saved[:3]]
        grads = _convolution_vjp(node, g._data, tuple(arrays) + (None,))
        return tuple(None if d is None else tie(make_tensor(d), (x, w),
                                                "ConvolutionBackwardBackward0") for d in grads)
    gx = gw = None
    if 0 in g.shape or 0 in x.shape:  # empty: zeros, without a window that cannot fit the
        # empty output of an empty batch (conv_transpose1d of [0, 3, 0]: seed 14500518)
        xp = namespace(g)
        gx = xp.zeros(x.shape, dtype=g.dtype) if nx else None
        gw = xp.zeros(w.shape, dtype=g.dtype) if nw else None
        gb = None
        if nb:  # (zeros of the bias's size when the output kept 0 channels, as PyTorch's)
            channels = w.shape[1] * groups if transposed else w.shape[0]
            gb = _bias_grad(g) if g.shape[1] == channels else xp.zeros(channels, g.dtype)
        return (gx, gw, gb)
    if transposed:  # x is on the y side: x -> conv^T(x) has the convolution as its transpose
        if nx:
            gx = _convolution(g, w, None, False, pairs, stride, dilation, groups,
                              tuple(x.shape[2:]))
        if nw:
            gw = _weight_grad(g, x, tuple(w.shape), pairs, stride, dilation, groups)
    else:
        if nx:
            gx = _convolution(g, w, None, True, pairs, stride, dilation, groups, tuple(x.shape))
        if nw:
            if cols is not None and not isinstance(g, Tensor):  # the forward's columns
                gw = _conv_weight_grad(cols, g, tuple(w.shape), groups)
            else:
                gw = _weight_grad(x, g, tuple(w.shape), pairs, stride, dilation, groups)
    gb = _bias_grad(g) if nb else None
    if isinstance(g, Tensor):
        # PyTorch's convolution_backward takes the input and the weight: under create_graph
        # each derivative requires grad when one of them does (its double backward gives
        # them nothing for the parts that do not depend on them: fuzz seeds 11001116...)
        gx, gw, gb = (tie(d, (x, w), "ConvolutionBackwardBackward0") for d in (gx, gw, gb))
    return (gx, gw, gb)


_ConvolutionBackward = node_class("ConvolutionBackward0", _convolution_vjp, INPUTS,
                                  lambda needs: (True, True, False))


# ----------------------------------------------------------------- create_graph: one record


def _data(v):
    return v._data if isinstance(v, Tensor) else v


def _backward_record(node, g, saved):
    """Under create_graph: PyTorch's convolution_backward(grad_output, input, weight) as one
    ConvolutionBackwardBackward0 node with outputs (input, weight, bias gradients) and its
    three edges, so every derivative requires grad when one of them does (a weight gradient
    does not depend on the weight: its double backward gives it nothing; fuzz seeds
    11001116...).  (Forward AD keeps the composed records, which carry tangents.)"""
    x, w, b, _cols = saved
    # the values on arrays, through the array kernels compile traces: no forward columns
    # (the weight gradient from _weight_grad_fwd), the bias's as a sum op
    arrays = list(_convolution_vjp(node, g._data, (_data(x), _data(w), _data(b), None)))
    if arrays[2] is not None and 0 not in g.shape and 0 not in x.shape:
        arrays[2] = _bias_grad(make_tensor(g._data))._data
    inputs = tuple(v if isinstance(v, Tensor) else make_tensor(v) for v in (g, x, w))
    if not (state.enabled and any(v._requires_grad for v in inputs)):
        return tuple(None if d is None else make_tensor(d) for d in arrays)
    transposed, groups = node.params[0], node.params[4]
    channels = w.shape[1] * groups if transposed else w.shape[0]
    xp = namespace(g._data)
    zero = xp.zeros((), g._data.dtype)
    # an output nobody asked for is a broadcast zero (no memory): the node still has three
    outs = [make_tensor(d if d is not None else xp.broadcast_to(zero, shape))
            for d, shape in zip(arrays, (tuple(x.shape), tuple(w.shape), (channels,)))]
    record_multi_inputs(_ConvolutionBackwardBackward, inputs, outs, node.params + (channels,),
                        saved=inputs)
    return tuple(None if d is None else o for d, o in zip(arrays, outs))


def _spread_bias(gb, shape):
    b = gb.reshape((1, -1) + (1,) * (len(shape) - 2))
    return b.expand(*shape) if isinstance(b, Tensor) else namespace(b).broadcast_to(b, shape)


def _backward_backward_vjp(node, grads, saved):
    """PyTorch's convolution double backward: each derivative is linear in (g, x, w) pairs
    (gx in g and w, gw in g and x, gb in g), so each edge's part is a convolution, its
    transpose or a weight gradient of the other two."""
    ggx, ggw, ggb = grads
    g, x, w = saved
    transposed, pairs, stride, dilation, groups, _x_shape, _channels = node.params
    n_g, n_x, n_w = node.next
    if 0 in g.shape or 0 in x.shape:  # (an empty convolution's: nothing to anything)
        return (None, None, None)
    conv = (pairs, stride, dilation, groups)
    dg = dx = dw = None
    if transposed:  # y = conv^T(x, w): gx = conv(g, w), gw = wgrad(g, x)
        if n_g:
            parts = [_convolution(a, k, None, True, *conv, tuple(g.shape))
                     for a, k in ((ggx, w), (x, ggw)) if a is not None and k is not None]
            dg = _sum_parts(parts, ggb, tuple(g.shape))
        if n_x and ggw is not None:
            dx = _convolution(g, ggw, None, False, *conv, tuple(x.shape[2:]))
        if n_w and ggx is not None:
            dw = _weight_grad(g, ggx, tuple(w.shape), *conv)
    else:  # y = conv(x, w): gx = conv^T(g, w), gw = wgrad(x, g)
        if n_g:
            parts = [_convolution(a, k, None, False, *conv, tuple(g.shape[2:]))
                     for a, k in ((ggx, w), (x, ggw)) if a is not None and k is not None]
            dg = _sum_parts(parts, ggb, tuple(g.shape))
        if n_x and ggw is not None:
            dx = _convolution(g, ggw, None, True, *conv, tuple(x.shape))
        if n_w and ggx is not None:
            dw = _weight_grad(ggx, g, tuple(w.shape), *conv)
    return (dg, dx, dw)


def _sum_parts(parts, ggb, shape):
    if ggb is not None:
        parts.append(_spread_bias(ggb, shape))
    if not parts:
        return None
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return total


_ConvolutionBackwardBackward = multi_output_class(
    "ConvolutionBackwardBackward0", _backward_backward_vjp, NOTHING, _materialize=False)


def _weight_grad(x, y, w_shape, pairs, stride, dilation, groups):
    """The ``weight_grad`` record: a convolution's weight gradient from input ``x`` and
    output gradient ``y`` (recorded when either is a tensor that requires grad)."""
    params = (w_shape, pairs, stride, dilation, groups)
    if not (isinstance(x, Tensor) or isinstance(y, Tensor)):
        return _weight_grad_fwd(x, y, *params)
    xd = x._data if isinstance(x, Tensor) else x
    yd = y._data if isinstance(y, Tensor) else y
    out = make_tensor(_weight_grad_fwd(xd, yd, *params))
    if state.enabled and any(isinstance(v, Tensor) and v._requires_grad for v in (x, y)):
        record(_WeightGradBackward, (x, y), out, params)
    if fw.active:
        fw.propagate_node(_WeightGradBackward, (x, y), out, params)
    return out


def _weight_grad_fwd(x, y, w_shape, pairs, stride, dilation, groups):
    cols, _ = _columns(x, w_shape[2:], stride, pairs, dilation, groups, y.shape[2:])
    return _conv_weight_grad(cols, y, w_shape, groups)


def _weight_grad_vjp(node, g, saved):
    # <G, wgrad(x, y)> = <conv(x, G), y> = <x, conv^T(y, G)>
    x, y = saved
    _, pairs, stride, dilation, groups = node.params
    nx, ny = node.next
    gx = _convolution(y, g, None, True, pairs, stride, dilation, groups,
                      tuple(x.shape)) if nx else None
    gy = _convolution(x, g, None, False, pairs, stride, dilation, groups,
                      tuple(y.shape[2:])) if ny else None
    return (gx, gy)


# PyTorch's name for the node of a convolution's derivative, when it is itself differentiated
_WeightGradBackward = node_class("ConvolutionBackwardBackward0", _weight_grad_vjp, INPUTS)


# ----------------------------------------------------------------- argument checks


def _dims(v):
    return list(v.shape)


def _dtype_word(dt):
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long",
            "int32": "int"}.get(str(dt), str(dt))


def _check_tensors(name, x, w, b, n):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    if not isinstance(w, Tensor):
        raise TypeError(f"{name}(): argument 'weight' (position 2) must be Tensor, not "
                        f"{type(w).__name__}")
    if b is not None and not isinstance(b, Tensor):
        raise TypeError(f"{name}(): argument 'bias' (position 3) must be Tensor, not "
                        f"{type(b).__name__}")
    if x.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"Expected {n + 1}D (unbatched) or {n + 2}D (batched) input to "
                           f"{name}, but got input of size: {_dims(x)}")
    if w.ndim != n + 2:
        raise RuntimeError(
            f"{name}(): expected weight to be {n + 2}-dimensional (out_channels, "
            f"in_channels / groups, *kernel_size with {n} entries), but got weight of size "
            f"{_dims(w)}")
    xt, wt = x._data.dtype, w._data.dtype
    if xt != wt:
        raise RuntimeError(f"expected scalar type {_scalar(xt)} but found {_scalar(wt)} "
                           f"({name}(): input is {xt} but weight is {wt}; convert one of them, "
                           f"e.g. weight.to(input.dtype))")
    if b is not None and b._data.dtype != xt:
        raise RuntimeError(f"Input type ({_dtype_word(xt)}) and bias type "
                           f"({_dtype_word(b._data.dtype)}) should be the same ({name}(): "
                           "convert the bias to the input's dtype)")


def _scalar(dt):
    from .pointwise import scalar_type_name

    return scalar_type_name(dt)


def _check_positive(name, stride, dilation, groups):
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"non-positive stride is not supported ({name}(): got stride="
                           f"{list(stride)})")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"non-positive dilation is not supported ({name}(): got dilation="
                           f"{list(dilation)})")
    if groups <= 0:
        raise RuntimeError(f"non-positive groups is not supported ({name}(): got "
                           f"groups={groups})")


def _check_groups(name, x, w, groups, transposed):
    if w.shape[0] < groups:  # (an empty weight too: PyTorch's first check of its size)
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {_dims(w)} instead ({name}(): "
                           "weight.shape[0] holds the channels, at least one per group)")
    if w.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{_dims(w)}] instead "
                           f"({name}())")
    want = w.shape[0] if transposed else w.shape[1] * groups
    if x.shape[1] != want:
        given = f"transposed=1, weight of size {_dims(w)}" if transposed else (
            f"groups={groups}, weight of size {_dims(w)}")
        rule = "weight.shape[0]" if transposed else "weight.shape[1] * groups"
        raise RuntimeError(f"Given {given}, expected input{_dims(x)} to have {want} channels, "
                           f"but got {x.shape[1]} channels instead ({name}(): in_channels "
                           f"must be {rule})")
    if 0 in w.shape[2:]:  # (PyTorch's kernels refuse an empty kernel, NumPy would not)
        raise RuntimeError(f"kernel size should be greater than zero, but got a weight of size "
                           f"{_dims(w)} ({name}())")
    if transposed and w.shape[1] == 0:
        raise RuntimeError(f"non-empty weight tensor expected, but got: {_dims(w)} ({name}(): "
                           "weight.shape[1] holds the output channels per group)")


def _check_bias(name, w, b, out_channels):
    if b is not None and (b.ndim != 1 or b.shape[0] != out_channels):
        raise RuntimeError(f"Given weight of size {_dims(w)}, expected bias to be 1-dimensional "
                           f"with {out_channels} elements, but got bias of size {_dims(b)} "
                           f"instead ({name}())")


def _batched(x, n):
    """``(x as a batch, whether it was unbatched)``: PyTorch unsqueezes a single sample."""
    if x.ndim == n + 1:
        return x.unsqueeze(0), True
    return x, False


# ----------------------------------------------------------------- public functions


def _same_padding(name, x, w, stride, dilation):
    """PyTorch's padding='same': ``d * (k - 1)`` split evenly, any odd one left over padded
    on the high side by a separate constant_pad_nd (with PyTorch's warning)."""
    if any(s != 1 for s in stride):
        raise RuntimeError(f"padding='same' is not supported for strided convolutions "
                           f"({name}(): got stride={list(stride)}; pad explicitly instead)")
    n = len(stride)
    lo = [d * (k - 1) // 2 for d, k in zip(dilation, w.shape[2:])]
    extra = [d * (k - 1) - p for d, k, p in zip(dilation, w.shape[2:], lo)]
    if any(e != p for e, p in zip(extra, lo)):
        warnings.warn("Using padding='same' with even kernel lengths and odd dilation may "
                      "require a zero-padded copy of the input be created", UserWarning,
                      stacklevel=4)
        from .arrange import constant_pad_nd

        pad = []
        for i in reversed(range(n)):
            pad += [0, extra[i] - lo[i]]
        x = constant_pad_nd(x, tuple(pad))
    return x, lo


def _refuse_bool(x, weight, kernel, name):
    """PyTorch's CPU convolution kernels have no bool version (integers run): after the shape
    checks, a non-empty bool input raises NotImplementedError (fuzz seed 9970436)."""
    if x._data.dtype.kind == "b" and x._data.size and weight._data.size:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\' ({name}() of bool '
                                  "tensors: convert them first, e.g. x.float())")


def _conv(name, n, input, weight, bias, stride, padding, dilation, groups):  # noqa: A002
    _check_tensors(name, input, weight, bias, n)
    stride = expand_arg(stride, n, "stride", name)
    dilation = expand_arg(dilation, n, "dilation", name)
    _check_positive(name, stride, dilation, groups)
    x, unbatched = _batched(input, n)
    _check_groups(name, x, weight, groups, False)
    _check_bias(name, weight, bias, weight.shape[0])
    if isinstance(padding, str):
        if padding == "valid":
            pad = (0,) * n
        elif padding == "same":
            x, pad = _same_padding(name, x, weight, stride, dilation)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}' ({name}(): padding is "
                               "'valid', 'same', an int or a tuple of ints)")
    else:
        pad = expand_arg(padding, n, "padding", name)
        if any(p < 0 for p in pad):
            raise RuntimeError(f"negative padding is not supported ({name}(): got padding="
                               f"{list(pad)})")
    spatial = tuple(x.shape[2:])
    padded = [s + 2 * p for s, p in zip(spatial, pad)]
    span = [d * (k - 1) + 1 for d, k in zip(dilation, weight.shape[2:])]
    if any(p < k for p, k in zip(padded, span)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
            f"Kernel size: ({' x '.join(map(str, span))}). Kernel size can't be greater than "
            f"actual input size ({name}(): input of size {_dims(input)}, weight of size "
            f"{_dims(weight)}, padding={list(pad)}, dilation={list(dilation)})")
    _refuse_bool(x, weight, "slow_conv3d_cpu" if n == 3 else "slow_conv2d_cpu", name)
    pairs = tuple((p, p) for p in pad)
    out = _convolution(x, weight, bias, False, pairs, stride, dilation, groups)
    return out.squeeze(0) if unbatched else out


def _conv_transpose(name, n, input, weight, bias, stride, padding, output_padding,  # noqa: A002
                    groups, dilation):
    _check_tensors(name, input, weight, bias, n)
    stride = expand_arg(stride, n, "stride", name)
    dilation = expand_arg(dilation, n, "dilation", name)
    pad = expand_arg(padding, n, "padding", name)
    out_pad = expand_arg(output_padding, n, "output_padding", name)
    _check_positive(name, stride, dilation, groups)
    if any(p < 0 for p in pad):
        raise RuntimeError(f"negative padding is not supported ({name}(): got padding="
                           f"{list(pad)})")
    if any(p < 0 for p in out_pad):
        raise RuntimeError(f"negative output_padding is not supported ({name}(): got "
                           f"output_padding={list(out_pad)})")
    if any(p >= s and p >= d for p, s, d in zip(out_pad, stride, dilation)):
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, "
                           f"but got output_padding={list(out_pad)}, stride={list(stride)}, "
                           f"dilation={list(dilation)} ({name}())")
    x, unbatched = _batched(input, n)
    _check_groups(name, x, weight, groups, True)
    out_channels = weight.shape[1] * groups
    _check_bias(name, weight, bias, out_channels)
    spatial = tuple((o - 1) * s - 2 * p + d * (k - 1) + op + 1 for o, s, p, d, k, op in zip(
        x.shape[2:], stride, pad, dilation, weight.shape[2:], out_pad))
    # an empty batch may give an empty output, as PyTorch (seed 14500518)
    if any(s < 0 or (s == 0 and x.shape[0]) for s in spatial):
        raise RuntimeError(f"{name}(): the output would have size {list(spatial)}; with input "
                           f"of size {_dims(input)}, weight of size {_dims(weight)} and "
                           f"padding={list(pad)} every output size must be positive")
    _refuse_bool(x, weight, f"slow_conv_transpose{max(n, 2)}d_out_cpu", name)
    pairs = tuple((p, p) for p in pad)
    out = _convolution(x, weight, bias, True, pairs, stride, dilation, groups,
                       (x.shape[0], out_channels) + spatial)
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """1-d convolution (cross-correlation, as PyTorch) of ``(N, C_in, L)`` (or ``(C_in,
    L)``) with ``weight`` ``(C_out, C_in / groups, k)``; ``padding`` is an int, a tuple,
    ``'valid'`` or ``'same'``.

    >>> import retrograd as T
    >>> T.conv1d(T.ones(1, 1, 4), T.ones(1, 1, 3), padding=1).tolist()
    [[[2.0, 3.0, 3.0, 2.0]]]
    """
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """2-d convolution of ``(N, C_in, H, W)`` (or ``(C_in, H, W)``) with ``weight``
    ``(C_out, C_in / groups, kH, kW)``; see :func:`conv1d`."""
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """3-d convolution of ``(N, C_in, D, H, W)`` (or unbatched) with ``weight`` ``(C_out,
    C_in / groups, kD, kH, kW)``; see :func:`conv1d`."""
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0,  # noqa: A002
                     output_padding=0, groups=1, dilation=1):
    """Transposed 1-d convolution ("deconvolution"): the gradient of :func:`conv1d` with
    respect to its input.  ``weight`` is ``(C_in, C_out / groups, k)``; the output length
    is ``(L - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1``.

    >>> import retrograd as T
    >>> T.conv_transpose1d(T.ones(1, 1, 2), T.ones(1, 1, 2)).tolist()
    [[[1.0, 2.0, 1.0]]]
    """
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0,  # noqa: A002
                     output_padding=0, groups=1, dilation=1):
    """Transposed 2-d convolution; see :func:`conv_transpose1d`."""
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0,  # noqa: A002
                     output_padding=0, groups=1, dilation=1):
    """Transposed 3-d convolution; see :func:`conv_transpose1d`."""
    return _conv_transpose("conv_transpose3d", 3, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def convolution(input, weight, bias, stride, padding, dilation, transposed,  # noqa: A002
                output_padding, groups):
    """PyTorch's generic ``torch.convolution``: :func:`conv1d`/2d/3d, or with ``transposed``
    :func:`conv_transpose1d`/2d/3d, the number of spatial dimensions taken from ``weight``
    (every argument required, as PyTorch).

    >>> import retrograd as T
    >>> T.convolution(T.ones(1, 1, 3), T.ones(1, 1, 2), None, [1], [0], [1], False, [0], 1)
    tensor([[[2., 2.]]])
    """
    if not isinstance(weight, Tensor):
        raise TypeError(f"convolution(): argument 'weight' (position 2) must be Tensor, not "
                        f"{type(weight).__name__}")
    n = weight.ndim - 2
    if n < 1 or n > 3:
        raise RuntimeError(f"convolution(): expected a weight with 1 to 3 spatial dimensions "
                           f"(3 to 5 dimensions), but got weight of size {_dims(weight)}")
    if transposed:
        return _conv_transpose("convolution", n, input, weight, bias, stride, padding,
                               output_padding, groups, dilation)
    return _conv("convolution", n, input, weight, bias, stride, padding, dilation, groups)


# ----------------------------------------------------------------- unfold / fold
# im2col and col2im of (N, C, H, W) (or unbatched (C, H, W)): each the other's derivative.
# params: (spatial, kernel, dilation, pairs, stride), ``spatial`` the image's (H, W)


def _unfold_fwd(x, spatial, kernel, dilation, pairs, stride):
    win = sliding_windows(x, kernel, stride, pairs, dilation)  # (*lead, C, oh, ow, kh, kw)
    lead = x.ndim - 3
    perm = (*range(lead + 1), lead + 3, lead + 4, lead + 1, lead + 2)
    blocks = win.shape[lead + 1] * win.shape[lead + 2]
    rows = x.shape[lead] * math.prod(kernel)  # (explicit: -1 is ambiguous for an empty batch)
    return win.transpose(perm).reshape(x.shape[:lead] + (rows, blocks))


def _fold_fwd(cols, spatial, kernel, dilation, pairs, stride):
    lead = cols.ndim - 2
    channels = cols.shape[lead] // math.prod(kernel)
    blocks = tuple(_block_counts(spatial, kernel, dilation, pairs, stride))
    grid = cols.reshape(cols.shape[:lead] + (channels,) + tuple(kernel) + blocks)
    perm = (*range(lead + 1), lead + 3, lead + 4, lead + 1, lead + 2)  # (.., C, oh, ow, kh, kw)
    return windows_adjoint(grid.transpose(perm), cols.shape[:lead] + (channels,) + tuple(spatial),
                           kernel, stride, pairs, dilation)


def _block_counts(spatial, kernel, dilation, pairs, stride):
    return [(s + lo + hi - d * (k - 1) - 1) // st + 1
            for s, k, d, (lo, hi), st in zip(spatial, kernel, dilation, pairs, stride)]


def _unfold_vjp(node, g, saved):
    return (_run_im2col(_fold_fwd, _Col2ImBackward, g, node.params),)


def _fold_vjp(node, g, saved):
    return (_run_im2col(_unfold_fwd, _Im2ColBackward, g, node.params),)


_Im2ColBackward = node_class("Im2ColBackward0", _unfold_vjp, NOTHING)
_Col2ImBackward = node_class("Col2ImBackward0", _fold_vjp, NOTHING)


def _run_im2col(forward, node_cls, x, params):
    """``forward`` on a tensor (recorded as ``node_cls``) or on an array."""
    if not isinstance(x, Tensor):
        return forward(x, *params)
    out = make_tensor(forward(x._data, *params))
    if state.enabled and x._requires_grad:
        record(node_cls, (x,), out, params)
    if fw.active:
        fw.propagate_node(node_cls, (x,), out, params)
    return out


def _im2col_args(name, kernel_size, dilation, padding, stride):
    kernel = expand_arg(kernel_size, 2, "kernel_size", name)
    dilation = expand_arg(dilation, 2, "dilation", name)
    padding = expand_arg(padding, 2, "padding", name)
    stride = expand_arg(stride, 2, "stride", name)
    for what, vals, word in (("kernel size", kernel, "kernel"), ("dilation", dilation, "dilation"),
                             ("stride", stride, "stride")):
        if any(v <= 0 for v in vals):
            raise RuntimeError(f"{what} should be greater than zero, but got {word}_height: "
                               f"{vals[0]} {word}_width: {vals[1]} ({name}())")
    if any(p < 0 for p in padding):
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {padding[0]} "
                           f"pad_width: {padding[1]} ({name}())")
    return kernel, dilation, tuple((p, p) for p in padding), stride


def _float_input(name, x, kernel_name):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    if x._data.dtype.kind != "f":
        raise NotImplementedError(f"\"{kernel_name}\" not implemented for "
                                  f"'{_scalar(x._data.dtype)}' ({name}() needs a floating "
                                  "input: convert it with x.float())")


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):  # noqa: A002
    """Sliding blocks of a batch of images as columns ("im2col"): ``(N, C, H, W)`` (or
    ``(C, H, W)``) to ``(N, C * kh * kw, L)``, ``L`` the number of blocks.

    >>> import retrograd as T
    >>> T.nn.functional.unfold(T.arange(9.0).reshape(1, 1, 3, 3), 2).tolist()
    [[[0.0, 1.0, 3.0, 4.0], [1.0, 2.0, 4.0, 5.0], [3.0, 4.0, 6.0, 7.0], [4.0, 5.0, 7.0, 8.0]]]
    """
    _float_input("unfold", input, "im2col_out_cpu")
    if input.ndim not in (3, 4) or any(s == 0 for s in input.shape[-3:]):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           f"and other non-zero dimensions for input, but got: "
                           f"{_dims(input)} (unfold())")
    kernel, dilation, pairs, stride = _im2col_args("unfold", kernel_size, dilation, padding,
                                                   stride)
    spatial = tuple(input.shape[-2:])
    blocks = _block_counts(spatial, kernel, dilation, pairs, stride)
    if any(b < 1 for b in blocks):
        raise RuntimeError(
            f"Given input with spatial size {spatial}, kernel_size={kernel}, dilation="
            f"{dilation}, padding={tuple(p for p, _ in pairs)}, calculated shape of the array "
            f"of sliding blocks as {tuple(blocks)}, but its components must be at least one. "
            "(unfold(): use a smaller kernel or more padding)")
    return _run_im2col(_unfold_fwd, _Im2ColBackward, input,
                       (spatial, kernel, dilation, pairs, stride))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):  # noqa: A002
    """The transpose of :func:`unfold` ("col2im"): columns ``(N, C * kh * kw, L)`` (or
    ``(C * kh * kw, L)``) summed into images ``(N, C, *output_size)``; overlapping blocks
    add up.

    >>> import retrograd as T
    >>> F = T.nn.functional
    >>> F.fold(F.unfold(T.ones(1, 1, 3, 3), 2), (3, 3), 2).tolist()
    [[[[1.0, 2.0, 1.0], [2.0, 4.0, 2.0], [1.0, 2.0, 1.0]]]]
    """
    _float_input("fold", input, "col2im_out_cpu")
    if input.ndim not in (2, 3) or any(s == 0 for s in input.shape[-2:]):
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: "
                           f"{_dims(input)} (fold())")
    spatial = expand_arg(output_size, 2, "output_size", "fold")
    kernel, dilation, pairs, stride = _im2col_args("fold", kernel_size, dilation, padding,
                                                   stride)
    rows, length = input.shape[-2:]
    if rows % math.prod(kernel):
        raise RuntimeError(f"Expected size of input's dimension {input.ndim - 2} to be "
                           f"divisible by the product of kernel_size, but got input.size("
                           f"{input.ndim - 2})={rows} and kernel_size={kernel} (fold())")
    blocks = _block_counts(spatial, kernel, dilation, pairs, stride)
    if any(b < 1 for b in blocks) or math.prod(blocks) != length:
        raise RuntimeError(
            f"Given output_size={spatial}, kernel_size={kernel}, dilation={dilation}, "
            f"padding={tuple(p for p, _ in pairs)}, stride={stride}, expected size of input's "
            f"dimension {input.ndim - 1} to match the calculated number of sliding blocks "
            f"{max(blocks[0], 0)} * {max(blocks[1], 0)} = "
            f"{max(blocks[0], 0) * max(blocks[1], 0)}, but got input.size({input.ndim - 1})="
            f"{length}. (fold())")
    return _run_im2col(_fold_fwd, _Col2ImBackward, input, (spatial, kernel, dilation, pairs,
                                                           stride))


# ----------------------------------------------------------------- registry
from .registry import register  # noqa: E402

for _fn in (conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d):
    register(_fn, method=False, functional=(_fn.__name__,))
register(convolution, method=False)
for _fn in (unfold, fold):
    register(_fn, function=False, method=False, functional=(_fn.__name__,))
