"""PyTorch's ``*_copy`` functions: a view op's result as a new tensor (no memory shared),
recorded as one node named after the view's (``TransposeBackward0_copy``...), as PyTorch's.

``transpose_copy``, ``t_copy``, ``permute_copy``, ``view_copy``, ``unsqueeze_copy``,
``squeeze_copy``, ``expand_copy``, ``select_copy``, ``slice_copy``, ``diagonal_copy``,
``alias_copy``, ``unfold_copy``, ``as_strided_copy`` (its own record: it reads the
input's storage).

The view ops are linear, so the derivative of each is the view's own: it is taken by
running the view on a zero leaf of the input's shape and differentiating that with
``create_graph=True`` (a graph in ``g``, so the second derivative works too).  The copies
are rare in user code (export tooling uses them), so that extra graph costs nothing that
matters.
"""

from __future__ import annotations

from ..autograd import engine
from ..autograd.graph import accumulator_of
from ..autograd.grad_mode import enable_grad
from ..backend import namespace
from ..tensor import make_tensor
from . import registry, strided
from ._apply import NOTHING, defop
from .shape import _norm_dim, input_meta


def _entry(key):
    return registry.entry(key).fn


def _slice(x, dim=0, start=None, end=None, step=1):
    dim = _norm_dim(dim, x.ndim)  # (IndexError naming the dim and the allowed range)
    index = [slice(None)] * x.ndim
    index[dim] = slice(start, end, step)
    return x[tuple(index)]


def _view_or_reshape(x, size):
    # PyTorch's view_copy copies, so it needs no view of the input's strides: a size that
    # no view of a non-contiguous input can take is reshaped (a wrong size still raises)
    try:
        return x.view(size)
    except RuntimeError as e:
        if "view size is not compatible" not in str(e):
            raise
        return x.reshape(size)


# name -> (the view it copies, as a call on a tensor, PyTorch's parameters after input)
_VIEWS = {
    "transpose_copy": (lambda x, d0, d1: _entry("transpose")(x, d0, d1), "dim0, dim1",
                       "TransposeBackward0"),
    "t_copy": (lambda x: _entry("t")(x), "", "TBackward0"),
    "permute_copy": (lambda x, dims: _entry("permute")(x, dims), "dims", "PermuteBackward0"),
    "view_copy": (lambda x, size: _view_or_reshape(x, size), "size", "ViewBackward0"),
    "unsqueeze_copy": (lambda x, dim: _entry("unsqueeze")(x, dim), "dim",
                       "UnsqueezeBackward0"),
    "expand_copy": (lambda x, size: x.expand(size), "size", "ExpandBackward0"),
    "select_copy": (lambda x, dim, index: _entry("select")(x, dim, index), "dim, index",
                    "SelectBackward0"),
    "slice_copy": (_slice, "dim=0, start=None, end=None, step=1", "SliceBackward0"),
    "diagonal_copy": (lambda x, offset=0, dim1=0, dim2=1: _entry("diagonal")(
        x, offset, dim1, dim2), "offset=0, dim1=0, dim2=1", "DiagonalBackward0"),
    "alias_copy": (lambda x: x.view(x.shape), "", "AliasBackward0"),
    "unfold_copy": (lambda x, dimension, size, step: x.unfold(dimension, size, step),
                    "dimension, size, step", "UnfoldBackward0"),
}


def _make(name, view, node_name):
    def forward(a, *params):
        return view(make_tensor(a), *params)._data.copy()

    def vjp(node, g, saved):
        shape, dtype = input_meta(node)
        tensor_g = hasattr(g, "_data")  # (a plain array when no graph of g is wanted)
        gd = g._data if tensor_g else g
        with enable_grad():
            zero = make_tensor(namespace(gd).zeros(shape, dtype))
            zero.requires_grad_(True)
            y = view(zero, *node.params)
            # the engine itself (autograd.grad sits a layer above the ops): g through the
            # view's node, collected at the zero leaf
            (gx,) = engine.run_backward([y._grad_fn], [g], tensor_g, tensor_g,
                                        [(accumulator_of(zero), 0)], accumulate=False)
        return (gx,)

    return defop(name, forward, vjp, f"{node_name}_copy", 1, NOTHING)


for _name, (_view, _signature, _node) in _VIEWS.items():
    _op = _make(_name, _view, _node)
    sig = f"input, {_signature}" if _signature else "input"
    globals()[_name] = registry.register(_op, _name, method=False, signature=sig)

# squeeze's node is SqueezeBackward0 (all dims), 1 (one dim) or 2 (a tuple of dims)
_squeezes = [_make("squeeze_copy", lambda x, *dim: x.squeeze(*dim), f"SqueezeBackward{i}")
             for i in range(3)]


def squeeze_copy(input, dim=None):  # noqa: A002 - PyTorch's names
    """``input.squeeze(dim)`` as a new tensor (SqueezeBackward0/1/2_copy)."""
    if dim is None:
        return _squeezes[0](input)
    return _squeezes[2 if isinstance(dim, (tuple, list)) else 1](input, dim)


registry.register(squeeze_copy, method=False, signature="input, dim=None")


# as_strided reads the input's storage, so the zero leaf above (contiguous) would put the
# gradient at the wrong places of a non-contiguous input: as_strided_copy records
# as_strided's own parameters (the storage, the input's strides) and derivative
_as_strided_copy = defop("as_strided_copy",
                         lambda a, *params: strided._as_strided_fwd(a, *params).copy(),
                         strided._as_strided_vjp, "AsStridedBackward0_copy", 1, NOTHING)


def as_strided_copy(input, size, stride, storage_offset=None):  # noqa: A002
    """``input.as_strided(size, stride, storage_offset)`` as a new tensor."""
    return _as_strided_copy(input, *strided.view_params(input, size, stride, storage_offset))


registry.register(as_strided_copy, method=False,
                  signature="input, size, stride, storage_offset=None")
