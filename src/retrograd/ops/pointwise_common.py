"""What the elementwise op families share: PyTorch's broadcast error, operands cast to
PyTorch's result dtype, gradients that are exactly zero, and the dtype conversion op (``to``).
"""

from __future__ import annotations



from .. import dtypes
from ..backend import namespace
from ..tensor import Tensor
from ..tensor import make_tensor as _make_tensor
from ._apply import NOTHING, defop
from .iter_layout import format_strides, preserved_strides, strided_copy



def broadcast_error(a, b, op: str):
    """PyTorch's RuntimeError for operands whose shapes do not broadcast, or None."""
    sa, sb = tuple(getattr(a, "shape", ())), tuple(getattr(b, "shape", ()))
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + sa, (1,) * (n - len(sb)) + sb
    for d in range(n - 1, -1, -1):  # PyTorch reports the last mismatching dimension
        if pa[d] != pb[d] and pa[d] != 1 and pb[d] != 1:
            return RuntimeError(
                f"The size of tensor a ({pa[d]}) must match the size of tensor b ({pb[d]}) at "
                f"non-singleton dimension {d} ({op} of shapes {list(sa)} and {list(sb)}, "
                "which do not broadcast; reshape or unsqueeze one of them)"
            )
    return None


def _broadcasting(fn, op):
    """``fn`` with NumPy's broadcast ValueError turned into PyTorch's RuntimeError."""

    def forward(a, b, *params):
        try:
            return fn(a, b, *params)
        except ValueError:
            err = broadcast_error(a, b, op)
            if err is None:
                raise
            raise err from None

    return forward


def zeros_like_grad(g):
    """Zeros shaped like ``g`` that record nothing: PyTorch's ``zeros_like(grad)`` for
    derivatives that are 0 whatever the gradient (sign, round...). Not ``g * 0``, which is
    nan where ``g`` is inf or nan and records a node that gives nan second derivatives."""
    if g.__class__ is Tensor:
        return _make_tensor(namespace(g._data).zeros_like(g._data))
    return namespace(g).zeros_like(g)



def in_result_dtype(a, b):
    """``a`` and ``b`` cast to PyTorch's result dtype when their dtypes differ.

    Most ops may compute in NumPy's wider dtype and round once at the end, but floor
    division, remainder and fmod jump near a multiple of the divisor: ``3.0 % 0.02`` is about
    0 with float32's 0.02 and about 0.02 with float64's.  PyTorch computes them in the result
    dtype (float32 for a float32 tensor and a 0-d float64 tensor), so they must be too."""
    # (arrays only: under vmap the forward may see batched tensors, which promote alike)
    da, db = getattr(a, "dtype", None), getattr(b, "dtype", None)
    if (da is not None and db is not None and da != db and hasattr(a, "astype")
            and hasattr(b, "astype")):
        want = dtypes.result_type(a, b).numpy
        return a.astype(want, copy=False), b.astype(want, copy=False)
    return a, b


# ----------------------------------------------------------------- dtype conversion


def _to_fwd(a, np_dtype):
    # PyTorch's _to_copy allocates as empty_like(preserve_format): the input's strides when
    # non-overlapping and dense (size-1 dims' too), else dense in its stride order
    if a.flags.c_contiguous and 1 not in a.shape:
        return a.astype(np_dtype)  # (the common case: row-major in, row-major out)
    return strided_copy(a, preserved_strides(a), np_dtype)


def _to_vjp(node, g, saved):
    # the engine casts the gradient back to the input's dtype
    return (g,)


to_dtype = defop("to", _to_fwd, _to_vjp, "ToCopyBackward0", 1, NOTHING)


def _to_format_fwd(a, np_dtype, fmt):
    return strided_copy(a, format_strides(a, fmt), np_dtype)


# to(..., memory_format=fmt): PyTorch's _to_copy into that format (its own record, named
# as ATen's op: ``to``'s results are re-laid as TensorIterator's, iter_layout.POINTWISE)
to_format = defop("_to_copy", _to_format_fwd, _to_vjp, "ToCopyBackward0", 1, NOTHING)
