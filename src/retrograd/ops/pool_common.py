"""What every pooling op shares: argument checks with PyTorch's errors, recording a result
computed outside ``defop``, pairs of mutually adjoint linear records, and the running max
with PyTorch's tie and NaN rule.

Pooling's derivatives are linear maps of the gradient (scatter the gradient to the argmax,
spread it over the window); each such map's own derivative is its adjoint (gather from the
argmax, sum over the window).  :func:`adjoint_pair` makes both records at once, each one's
VJP calling the other, so every order of derivative works with two hand-written forwards.
"""

from __future__ import annotations

import math

from ..autograd.forward_state import fw
from ..autograd.grad_mode import state
from ..backend import namespace
from ..tensor import make_tensor
from ._apply import INPUTS, NOTHING, defop, record
from .pointwise import zeros_like_grad
from ._errors import scalar_type_name

_WORDS = {1: "one", 2: "two", 3: "three"}


def expand(value, n: int, name: str, fn: str, omittable: bool = False) -> tuple:
    """``kernel_size``/``stride``/``padding``/``dilation``: an int or ``n`` ints (one int
    repeated), as a tuple; anything else is PyTorch's RuntimeError naming ``fn``."""
    if isinstance(value, bool):
        raise TypeError(f"{fn}(): argument '{name}' must be tuple of ints, not bool")
    if hasattr(value, "__index__") and not hasattr(value, "__len__"):
        return (int(value),) * n
    if not hasattr(value, "__len__"):
        raise TypeError(f"{fn}(): argument '{name}' must be tuple of ints, not "
                        f"{type(value).__name__}")
    for pos, v in enumerate(value):
        if isinstance(v, bool) or not hasattr(v, "__index__"):
            raise TypeError(f"{fn}(): argument '{name}' must be tuple of ints, but found "
                            f"element of type {type(v).__name__} at pos {pos}")
    values = tuple(int(v) for v in value)
    if len(values) == 1:
        return values * n
    if len(values) != n:
        either = "either be omitted, a single int" if omittable else "either be a single int"
        raise RuntimeError(f"{fn}: {name} must {either}, or a tuple of {_WORDS[n]} ints, but got "
                           f"{name}={list(values)} for a {n}-d pooling")
    return values


def check_input(x, n: int, fn: str, *, nonempty: str = "non-empty"):
    """An ``(N, C, *spatial)`` or unbatched ``(C, *spatial)`` input with ``n`` spatial dims,
    whose non-batch dimensions are not empty (PyTorch's RuntimeError otherwise)."""
    shape = list(x.shape)
    if x.ndim not in (n + 1, n + 2):
        raise RuntimeError(
            f"{fn}: {nonempty} {n + 1}D or {n + 2}D (batch mode) tensor expected for input, "
            f"but got a tensor of shape {shape}; pass (C, *spatial) or (N, C, *spatial) with "
            f"{n} spatial dimension(s)")
    if any(s == 0 for s in shape[-(n + 1):]):
        raise RuntimeError(
            f"{fn}: Expected {n + 1}D or {n + 2}D (batch mode) tensor with optional 0 dim batch "
            f"size for input, but got:{shape} (only the batch dimension may be empty)")


def refuse_dtype(x, fn: str, kinds: str = "b"):
    """PyTorch's NotImplementedError for a dtype the kernel lacks (bool; ints for some)."""
    dt = x._data.dtype
    if dt.kind in kinds:
        raise NotImplementedError(
            f"\"{fn}\" not implemented for '{scalar_type_name(dt)}'; convert the input first "
            "(e.g. x.float())")


def recorded(node_cls, x, data, params, extras=()):
    """``data`` (computed from ``x``'s array) as a tensor, recorded as a ``node_cls`` node
    when ``x`` needs a gradient: for ops whose forward also yields what is not an output of
    a ``defop`` (the argmax behind a max-pool, returned as indices)."""
    out = make_tensor(data)
    if x._requires_grad and state.enabled:
        record(node_cls, (x,), out, params, extras)
    if fw.active:  # forward AD: the tangent (ops/_jvp.py)
        fw.propagate_node(node_cls, (x,), out, params, extras)
    return out


def adjoint_pair(name: str, forward, adjoint, forward_node: str, adjoint_node: str,
                 anchored: bool = False):
    """Two recorded linear maps with the same parameters, each the other's derivative.

    ``forward(a, *params)`` and ``adjoint(g, *params)`` act on arrays; the first record's
    VJP is the second and vice versa (the adjoint of the adjoint is the map), so
    ``create_graph`` and every higher order record ops of the pair.

    ``anchored``: the pools' form.  PyTorch's pooling derivative takes the pooled input too
    (``avg_pool2d_backward(grad, self, ...)``), so the forward saves its input (changing it
    in place before backward raises) and the adjoint record takes it as a second input: under
    create_graph the first derivative requires grad whenever the input does, and its own
    derivative gives the input zeros (``self: zeros_like(self)``), as PyTorch's."""
    pair = []

    if anchored:
        def forward_vjp(node, g, saved):
            return (pair[1](g, saved[0], *node.params),)

        def adjoint_vjp(node, g, saved):
            n_g, n_x = node.next
            return (pair[0](g, *node.params) if n_g else None,
                    zeros_like_grad(g) if n_x else None)

        def adjoint_fwd(g, x, *params):
            return adjoint(g, *params)
    else:
        def forward_vjp(node, g, saved):
            return (pair[1](g, *node.params),)

        def adjoint_vjp(node, g, saved):
            return (pair[0](g, *node.params),)

    pair.append(defop(name, forward, forward_vjp, forward_node, 1,
                      INPUTS if anchored else NOTHING))
    if anchored:
        pair.append(defop(f"{name}_backward", adjoint_fwd, adjoint_vjp, adjoint_node, 2,
                          NOTHING))
    else:
        pair.append(defop(f"{name}_backward", adjoint, adjoint_vjp, adjoint_node, 1, NOTHING))
    return pair[0], pair[1]


def arg_dtype(count: int, xp):
    """The smallest integer dtype for an index into ``count`` candidates."""
    return xp.int8 if count <= 127 else xp.int16 if count <= 32767 else xp.int64


def running_max(candidates, count: int):
    """The elementwise max over ``candidates`` (arrays of one shape, in PyTorch's scan order)
    and the position of the winner, as PyTorch's pooling kernels choose it: a later
    candidate wins only if it is strictly greater or NaN (ties keep the first; the last NaN
    wins).  ``candidates`` is called with no argument for a fresh iterator (the scan runs
    twice only when a NaN shows up)."""
    it = iter(candidates())
    first = next(it)
    xp = namespace(first)
    best = xp.array(first, copy=True)
    arg = xp.zeros(best.shape, dtype=arg_dtype(count, xp))
    mask = xp.empty(best.shape, dtype=bool)
    v = xp.empty_like(best)
    for k, view in enumerate(it, 1):
        # one strided read into a contiguous buffer: ufuncs on a strided window view loop
        # over its short rows (15 elements for a 32-wide 3x3 stride-2 pool), 10x slower
        v[...] = view
        xp.greater(v, best, out=mask)
        arg = xp.where(mask, arg.dtype.type(k), arg)  # (copyto(where=) is 7x slower here)
        xp.maximum(best, v, out=best)  # NaN propagates, so a window with a NaN shows here
    if best.dtype.kind == "f" and bool(xp.isnan(best).any()):
        it = iter(candidates())
        best = xp.array(next(it), copy=True)
        arg[...] = 0
        for k, v in enumerate(it, 1):
            xp.logical_or(v > best, xp.isnan(v), out=mask)
            xp.copyto(best, v, where=mask)
            xp.copyto(arg, k, where=mask)
    return best, arg


def lowest(dtype, xp):
    """What padding may never beat in a max: -inf, or an integer dtype's minimum."""
    return -xp.inf if dtype.kind == "f" else xp.iinfo(dtype).min


# ----------------------------------------------------------------- positions in the plane


def take_plane(a, idx, spatial):
    """``a`` (..., *spatial) at flat plane positions ``idx`` (..., *out)."""
    xp = namespace(a)
    n = len(spatial)
    lead = a.shape[:a.ndim - n]
    # (sizes spelled out: -1 is ambiguous for an empty batch, seed 12611504)
    plane = a.reshape(lead + (math.prod(a.shape[len(lead):]),))
    flat = idx.reshape(idx.shape[:len(lead)] + (math.prod(idx.shape[len(lead):]),))
    return xp.take_along_axis(plane, flat, axis=-1).reshape(idx.shape)


def scatter_add_plane(g, idx, spatial):
    """The adjoint of :func:`take_plane`: ``g`` added into zeros (..., *spatial) at ``idx``."""
    xp = namespace(g)
    n = len(spatial)
    lead = g.shape[:g.ndim - n]
    rows = math.prod(lead)
    size = math.prod(spatial)
    if rows == 0 or size == 0:
        return xp.zeros(lead + tuple(spatial), dtype=g.dtype)
    # one bincount over positions made global (row * size + idx): for a 3x3 stride-2
    # max-pool 4x faster than adding the gradient back one kernel offset at a time (strided
    # slices), 5x faster than np.add.at
    flat = idx.reshape(rows, -1) + (xp.arange(rows) * size)[:, None]
    total = xp.bincount(flat.reshape(-1), weights=g.reshape(-1), minlength=rows * size)
    return total.astype(g.dtype, copy=False).reshape(lead + tuple(spatial))
