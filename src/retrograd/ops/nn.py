"""Neural-network ops with their own derivative records (composites would be slower):
softmax / log_softmax, computed stably (max subtracted), and dropout.

The losses built on them are in nll.py (nll_loss, cross_entropy) and
elementwise_losses.py (binary_cross_entropy, l1_loss, mse_loss); the others in losses.py.
"""

from __future__ import annotations

import numpy as _np

from ..backend import namespace
from ..dtypes import dtype as dtype_class
from ..tensor import make_tensor as _make_tensor
from ._errors import float_only
from ._apply import INPUTS, OUTPUT, defop
from .reduce import sum as _sum
from .pointwise import exp
from .shape import _norm_dim
from .quiet_fp import quiet_fp


_ndarray = _np.ndarray
_max_reduce = _np.maximum.reduce
_NLL_TARGET_DTYPES = (_np.dtype(_np.int64), _np.dtype(_np.uint8))
_add_reduce = _np.add.reduce
_exp = _np.exp
_log = _np.log
_multiply = _np.multiply
_subtract = _np.subtract


@quiet_fp
def _softmax_fwd(a, dim):
    xp = namespace(a)
    if a.size == 0:  # (the max of an empty dimension has no identity)
        return a.copy()
    if not a.flags.c_contiguous:  # PyTorch's kernel reads input.contiguous(): a row-major
        a = xp.ascontiguousarray(a)  # result, whatever the input's layout (seed 19435842)
    e = xp.exp(a - a.max(axis=dim, keepdims=True))
    e /= e.sum(axis=dim, keepdims=True)
    return e


def _softmax_vjp(node, g, saved):
    (y,) = saved
    dim = node.params[0]
    gy = g * y
    return (gy - y * _sum(gy, dim, True) if hasattr(gy, "_data") else gy - y * gy.sum(
        axis=dim, keepdims=True),)


_softmax = defop("softmax", _softmax_fwd, _softmax_vjp, "SoftmaxBackward0", 1, OUTPUT, "float")


@quiet_fp
def _log_softmax_fwd(a, dim):
    if not a.flags.c_contiguous:  # a row-major result, as PyTorch's (see _softmax_fwd)
        a = namespace(a).ascontiguousarray(a)
    if type(a) is _ndarray and a.ndim and a.size:  # (0-d: reductions give scalars, no out=)
        # NumPy arrays: the ufuncs' reductions themselves (ndarray.max/sum go through
        # NumPy's Python wrappers), the exponentials' temporary reused for the sum's log
        shifted = a - _max_reduce(a, dim, keepdims=True)
        lse = _log(_add_reduce(_exp(shifted), dim, keepdims=True))
        return _subtract(shifted, lse, out=shifted)  # (shifted is ours: no new array)
    xp = namespace(a)
    if a.size == 0:
        return a.copy()
    shifted = a - a.max(axis=dim, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))


# nll_loss's first-order derivative, when its input is a log_softmax result (cross_entropy),
# leaves here ``(gradient, c, flat)``: the (N, C) gradient it sent, all zeros but ``-c`` at
# the flat positions ``flat`` of the targets.  log_softmax's derivative of exactly that
# array (tested by identity) is then ``exp(y) * c`` less ``c`` at the targets, the same bits
# as ``g - exp(y) * g.sum(1)`` (a row of g sums to -c exactly) with no reduction and no
# broadcast: the hand-written NumPy step's ``softmax - onehot``, scaled.  One slot for all
# threads: another thread's entry fails the identity test and takes the general formula.
one_hot_grad = [None]


def _log_softmax_vjp(node, g, saved):
    (y,) = saved
    dim = node.params[0]
    if hasattr(g, "_data"):
        return (_log_softmax_backward(g, y, dim),)
    hot = one_hot_grad[0]
    if hot is not None and hot[0] is g:
        one_hot_grad[0] = None
        # (no hook on this node: a pre-hook could have changed g in place)
        if (node.hooks is None and dim == 1 and type(y) is _ndarray and y.shape == g.shape
                and y.dtype is g.dtype):
            c, flat = hot[1], hot[2]
            out = _exp(y)
            _multiply(out, c, out=out)
            at = out.take(flat)
            out.put(flat, _subtract(at, c, out=at))
            return (out,)
    # first order: the array function itself (no import statement or op call per backward)
    return (_log_softmax_backward_fwd(g, y, dim),)


def _log_softmax_backward_fwd(g, y, dim):
    if type(g) is _ndarray and type(y) is _ndarray:  # (the ufuncs themselves, as above)
        return g - _exp(y) * _add_reduce(g, dim, keepdims=True)
    return g - namespace(y).exp(y) * g.sum(axis=dim, keepdims=True)


def _log_softmax_backward_vjp(node, gg, saved):
    # PyTorch's derivatives of _log_softmax_backward_data(g, y) = g - exp(y) * sum(g): through
    # g, gg - sum(gg * exp(y)); through y, -sum(g) * exp(y) * gg
    g, y = saved
    dim = node.params[0]
    n_g, n_y = node.next
    if not hasattr(gg, "_data") and not hasattr(y, "_data"):  # first order: arrays
        if type(gg) is _ndarray and type(y) is _ndarray and (g is None or type(g) is _ndarray):
            # (NumPy: the ufuncs' reductions themselves, as _log_softmax_fwd's)
            e = _exp(y)
            return ((gg - _add_reduce(gg * e, dim, keepdims=True)) if n_g else None,
                    (-_add_reduce(g, dim, keepdims=True) * e * gg) if n_y else None)
        e = namespace(y).exp(y)
        return ((gg - (gg * e).sum(axis=dim, keepdims=True)) if n_g else None,
                (-g.sum(axis=dim, keepdims=True) * e * gg) if n_y else None)
    e = exp(y)
    return ((gg - _sum(gg * e, dim, True)) if n_g else None,
            (-_sum(g, dim, True) * e * gg) if n_y else None)


# log_softmax's derivative as one record under create_graph (PyTorch's
# LogSoftmaxBackwardDataBackward0), where composing exp/sum/mul/sub recorded four nodes
# (bench/ (g), a Hessian-vector product); its forward is the first-order formula above
_log_softmax_backward = defop("log_softmax_backward", _log_softmax_backward_fwd,
                              _log_softmax_backward_vjp, "LogSoftmaxBackwardDataBackward0", 2,
                              INPUTS, saved_for=lambda needs: (needs[1], True))


_log_softmax = defop("log_softmax", _log_softmax_fwd, _log_softmax_vjp, "LogSoftmaxBackward0", 1,
                     OUTPUT, "float")


def _dim_for(x, dim, name):
    if dim is None:
        # PyTorch's legacy implicit choice, with its warning
        import warnings

        warnings.warn(
            f"Implicit dimension choice for {name} has been deprecated. Change the call to "
            "include dim=X as an argument.",
            UserWarning, stacklevel=3,
        )
        dim = 0 if x.ndim in (0, 1, 3) else 1
    return _norm_dim(dim, x.ndim)


def _empty_like(x):
    """PyTorch's softmax kernels, and their dtype check, are not reached for an empty input:
    an empty integer or bool tensor gives an empty one of its dtype (seed 11010560)."""
    return _make_tensor(namespace(x._data).empty_like(x._data))


def softmax(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002 - PyTorch's names
    """``exp(x) / exp(x).sum(dim)``, computed stably.

    The signature is ``torch.nn.functional.softmax``'s: ``_stacklevel`` is accepted and unused,
    so ``F.softmax(input=x, dim=1)`` and a positional ``dtype`` after it work as in PyTorch.

    Examples
    --------
    >>> import retrograd as T
    >>> T.softmax(T.tensor([0.0, 0.0, 0.0, 0.0]), dim=0)
    tensor([0.2500, 0.2500, 0.2500, 0.2500])
    """
    x = input
    if isinstance(_stacklevel, dtype_class) and dtype is None:
        dtype = _stacklevel  # torch.softmax(x, dim, dtype) / x.softmax(dim, dtype)
    if dtype is not None:
        x = x.to(dtype=dtype)  # (a keyword: a string is refused, not a device)
    dim = _dim_for(x, dim, "softmax")  # (the dim is checked first, as PyTorch)
    if not x._data.size and x._data.dtype.kind != "f":
        return _empty_like(x)
    float_only(x, "softmax_lastdim_kernel_impl", "softmax")  # integers need dtype=
    return _softmax(x, dim)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):  # noqa: A002 - PyTorch's names
    """``log(softmax(x, dim))``, computed stably (signature as :func:`softmax`'s).

    Examples
    --------
    >>> import retrograd as T
    >>> T.log_softmax(T.tensor([1.0, 1.0]), dim=0)
    tensor([-0.6931, -0.6931])
    """
    x = input
    if isinstance(_stacklevel, dtype_class) and dtype is None:
        dtype = _stacklevel
    if dtype is not None:
        x = x.to(dtype=dtype)  # (a keyword: a string is refused, not a device)
    dim = _dim_for(x, dim, "log_softmax")
    if not x._data.size and x._data.dtype.kind != "f":
        return _empty_like(x)  # (as softmax's, seed 11058080)
    float_only(x, "log_softmax_lastdim_kernel_impl", "log_softmax")
    return _log_softmax(x, dim)


def dropout(input, p=0.5, training=True, inplace=False):  # noqa: A002 - PyTorch's names
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``
    (random numbers from retrograd's generator: ``retrograd.manual_seed`` repeats them)."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input._data.dtype.kind != "f" and training and p != 0:
        raise RuntimeError(f"dropout(): result type Float can't be cast to the desired output "
                           f"type {input.dtype} (dropout scales by 1 / (1 - p)); convert the "
                           "input with x.float() first")
    if not training or p == 0:
        return input
    from ..random import generator
    from ..tensor import make_tensor

    data = input._data
    keep = generator().random(data.shape) >= p
    scale = make_tensor(namespace(data).asarray(
        keep.astype(data.dtype) * (1.0 / (1 - p) if p < 1 else 0.0)))
    return input.mul_(scale) if inplace else input * scale


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402


def _special_softmax(input, dim, *, dtype=None):  # noqa: A002 - PyTorch's names
    """``retrograd.special.softmax``: as ``softmax``, with ``dim`` required."""
    return softmax(input, dim, dtype=dtype)


def _special_log_softmax(input, dim, *, dtype=None):  # noqa: A002 - PyTorch's names
    """``retrograd.special.log_softmax``: as ``log_softmax``, with ``dim`` required."""
    return log_softmax(input, dim, dtype=dtype)


register(softmax, functional=("softmax",))
register(log_softmax, functional=("log_softmax",))
register(_special_softmax, "softmax", function=False, method=False, special=("softmax",))
register(_special_log_softmax, "log_softmax", function=False, method=False,
         special=("log_softmax",))
register(dropout, function=False, method=False, functional=("dropout",))
