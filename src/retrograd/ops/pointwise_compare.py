"""Comparisons, logical and bitwise ops: bool results that record no graph (as PyTorch)."""

from __future__ import annotations



from .. import dtypes
from ..backend import namespace
from .pointwise_common import _broadcasting
from ._apply import NOTHING, defop



def _cmp(name, fn):
    return defop(name, _broadcasting(fn, name), None, None, 2, NOTHING, "bool",
                 differentiable=False)


def _in_common_dtype(compare):
    """Compare in PyTorch's promoted dtype: a 0-d float64 tensor does not lift a float32 one
    (NumPy's 0-d arrays do), so x != x.double()[0] of float32 values is False (seed 9202561)."""
    def forward(a, b):
        da, db = getattr(a, "dtype", None), getattr(b, "dtype", None)
        if da is not None and db is not None and da != db and (a.ndim == 0) != (b.ndim == 0):
            want = dtypes.result_type(a, b).numpy
            a, b = a.astype(want, copy=False), b.astype(want, copy=False)
        return compare(a, b)
    return forward


eq = _cmp("eq", _in_common_dtype(lambda a, b: a == b))
ne = _cmp("ne", _in_common_dtype(lambda a, b: a != b))
lt = _cmp("lt", _in_common_dtype(lambda a, b: a < b))
le = _cmp("le", _in_common_dtype(lambda a, b: a <= b))
gt = _cmp("gt", _in_common_dtype(lambda a, b: a > b))
ge = _cmp("ge", _in_common_dtype(lambda a, b: a >= b))
logical_and = _cmp("logical_and", lambda a, b: namespace(a).logical_and(a, b))
logical_or = _cmp("logical_or", lambda a, b: namespace(a).logical_or(a, b))
bitwise_and = _cmp("bitwise_and", lambda a, b: a & b)
bitwise_or = _cmp("bitwise_or", lambda a, b: a | b)
logical_not = defop("logical_not", lambda a: namespace(a).logical_not(a), None, None, 1,
                    differentiable=False)
