"""The op library.  Each kind of op lives in its own module, forward beside derivative:

* ``pointwise`` -- arithmetic, elementwise functions, comparisons, dtype casts
* ``reduce``    -- sum, mean, max/min, argmax
* ``shape``     -- reshape/view, transpose/permute, squeeze, expand, cat, stack
* ``index``     -- ``x[i]``, ``x[i] = v``, gather/scatter
* ``linalg``    -- matmul
* ``nn``        -- softmax, log_softmax, losses
* ``inplace``   -- ``add_``, ``mul_``, ``zero_``... (version counting)

``bind_methods`` attaches them to :class:`retrograd.Tensor` as methods and operators.
"""

from __future__ import annotations

from ..backend import namespace
from . import (
    binary, index, layout, linalg, nn, pointwise, reduce, shape, sorting, stats, unary,
)


clone = shape.clone


def to(x, *args, **kwargs):
    """Convert dtype (``x.to(retrograd.float64)``); devices ``"cpu"``/``"cuda"`` move data."""
    from .. import dtypes
    from ..backend import move_to_device

    dtype = kwargs.pop("dtype", None)
    if isinstance(dtype, str):  # (a positional string is a device)
        from ._errors import calling_op

        dtypes.refuse_name(dtype, calling_op("to"))
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    for a in args:
        if hasattr(a, "_data"):  # a tensor (checked first: tensors have .itemsize too)
            dtype = a.dtype
        elif isinstance(a, dtypes.dtype) or a in (float, int, bool) or hasattr(a, "itemsize"):
            dtype = a  # also a NumPy dtype (the engine casts gradients with one)
        elif a is not None:
            device = a
    out = x
    if device is not None:
        out = move_to_device(out, device)
    if dtype is not None:
        d = dtypes.to_dtype(dtype)
        if d.numpy != out._data.dtype:
            out = pointwise.to_dtype(out, d.numpy)
        elif copy:
            out = clone(out)
    elif copy and out is x:
        out = clone(out)
    return out


def _cast(name):
    def convert(x, memory_format=None):
        from .. import dtypes

        return to(x, getattr(dtypes, name))  # a dtype object: a bare string means a device

    convert.__name__ = name
    return convert


def contiguous(x, memory_format=None):
    if x._data.flags.c_contiguous:
        return x
    return clone(x)


def _masked_fill_fwd(a, value, mask):
    xp = namespace(a)
    return xp.where(mask, xp.asarray(value, dtype=a.dtype), a)  # keeps x's dtype, as PyTorch


def _masked_fill_vjp(node, g, saved):
    mask = node.params[-1]
    zero = g * 0
    if len(node.next) == 1:
        return (pointwise.where(mask, zero, g),)
    nx, nv = node.next
    return (pointwise.where(mask, zero, g) if nx else None,
            pointwise.where(mask, g, zero) if nv else None)  # the engine sums to 0-d


# PyTorch's names: MaskedFillBackward0 for a number, MaskedFillBackward1 for a 0-d tensor
_masked_fill_number = pointwise.defop(
    "masked_fill", _masked_fill_fwd, _masked_fill_vjp, "MaskedFillBackward0", 1)
_masked_fill_tensor = pointwise.defop(
    "masked_fill", _masked_fill_fwd, _masked_fill_vjp, "MaskedFillBackward1", 2)


def masked_fill(x, mask, value):
    """``value`` where ``mask`` (bool, broadcast to ``x``) is True, ``x`` elsewhere."""
    m = mask._data if hasattr(mask, "_data") else mask
    if not hasattr(m, "dtype"):
        raise TypeError(f"masked_fill(): argument 'mask' (position 1) must be Tensor, not "
                        f"{type(m).__name__}")
    if m.dtype.kind != "b":
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{pointwise.scalar_type_name(m.dtype)}; compare first, e.g. x.masked_fill(m > 0, v)"
        )
    if hasattr(value, "_data"):
        if value.ndim != 0:
            raise RuntimeError(
                f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                f"{value.ndim} dimension(s)"
            )
        return _masked_fill_tensor(x, value, m)
    return _masked_fill_number(x, value, m)


_bitwise_not = pointwise.defop("bitwise_not", lambda a: namespace(a).invert(a), None, None, 1,
                               differentiable=False)
bitwise_xor = pointwise.defop("bitwise_xor", lambda a, b: a ^ b, None, None, 2,
                              dtype_rule="promote", differentiable=False)
bitwise_left_shift = pointwise.defop("bitwise_left_shift", lambda a, b: a << b, None, None, 2,
                                     dtype_rule="promote", differentiable=False)
bitwise_right_shift = pointwise.defop("bitwise_right_shift", lambda a, b: a >> b, None, None,
                                      2, dtype_rule="promote", differentiable=False)


def invert(x):
    """``~x``: logical not of a bool tensor, bitwise not of an integer tensor (as PyTorch)."""
    kind = x._data.dtype.kind
    if kind == "b":
        return pointwise.logical_not(x)
    if kind in "iu":
        return _bitwise_not(x)
    raise TypeError(
        "~ (operator.invert) is only implemented on integer and Boolean-type tensors (got "
        f"{x.dtype}); for a mask use (x == 0) or x.logical_not()"
    )


def _or_not_implemented(op):
    # ``x == None`` is False in PyTorch: an operand the op refuses gives NotImplemented, and
    # Python falls back to comparing identities.
    def method(self, other):
        try:
            return op(self, other)
        except TypeError:
            return NotImplemented

    method.__name__ = op.__name__
    return method


def bind_methods(Tensor) -> None:  # noqa: N803 - the class
    """Attach every op to Tensor as a method or operator (called once by tensor.py)."""
    from . import inplace as ip

    pw, rd, sh, ix, la = pointwise, reduce, shape, index, linalg
    methods = {
        # arithmetic operators (reflected + puts self first, as torch: next_functions)
        "__add__": pw.add_op, "__radd__": lambda s, o: pw.add_op(s, o),
        "__sub__": pw.sub_op, "__rsub__": pw.rsub,
        "__mul__": pw.mul, "__rmul__": lambda s, o: pw.mul(s, o),  # PyTorch records (x, 3)
        "__truediv__": pw.div, "__rtruediv__": pw.rdiv,
        "__floordiv__": pw.floor_divide, "__rfloordiv__": lambda s, o: pw.floor_divide(o, s),
        "__mod__": pw.remainder, "__rmod__": lambda s, o: pw.remainder(o, s),
        "__pow__": pw.power, "__rpow__": lambda s, o: pw.power(o, s),
        "__matmul__": la.matmul, "__rmatmul__": lambda s, o: la.matmul(o, s),
        "__neg__": pw.neg, "__abs__": pw.abs, "__pos__": lambda s: s,
        "__eq__": _or_not_implemented(pw.eq), "__ne__": _or_not_implemented(pw.ne),
        "__lt__": pw.lt, "__le__": pw.le,
        "__gt__": pw.gt, "__ge__": pw.ge,
        "__and__": pw.bitwise_and, "__or__": pw.bitwise_or, "__invert__": invert,
        "__rand__": lambda s, o: pw.bitwise_and(o, s), "__ror__": lambda s, o: pw.bitwise_or(o, s),
        "__xor__": bitwise_xor, "__rxor__": lambda s, o: bitwise_xor(o, s),
        "__lshift__": bitwise_left_shift, "__rshift__": bitwise_right_shift,
        "bitwise_not": invert, "bitwise_xor": bitwise_xor, "logical_not": pw.logical_not,
        "__getitem__": ix.getitem, "__setitem__": ix.setitem,
        "__iadd__": ip.add_, "__isub__": ip.sub_, "__imul__": ip.mul_, "__itruediv__": ip.div_,
        # named arithmetic
        "add": pw.add, "sub": pw.sub, "mul": pw.mul, "div": pw.div, "neg": pw.neg,
        "pow": pw.power, "abs": pw.abs, "sign": pw.sign, "exp": pw.exp, "log": pw.log,
        "sqrt": pw.sqrt, "reciprocal": pw.reciprocal, "sin": pw.sin, "cos": pw.cos, "tanh": pw.tanh,
        "sigmoid": pw.sigmoid, "relu": pw.relu, "clamp": pw.clamp, "clip": pw.clamp,
        "maximum": pw.maximum, "minimum": pw.minimum, "remainder": pw.remainder,
        "eq": pw.eq, "ne": pw.ne, "lt": pw.lt, "le": pw.le, "gt": pw.gt, "ge": pw.ge,
        "where": lambda s, cond, other: pw.where(cond, s, other),
        "masked_fill": masked_fill,
        # reductions
        "sum": rd.sum, "mean": rd.mean, "max": rd.max, "min": rd.min,
        "argmax": rd.argmax, "argmin": rd.argmin, "all": rd.all, "any": rd.any,
        # shape
        "reshape": sh.reshape, "view": sh.view, "flatten": sh.flatten,
        "view_as": lambda s, o: sh.view(s, tuple(o.shape)),
        "reshape_as": lambda s, o: sh.reshape(s, tuple(o.shape)),
        "transpose": sh.transpose, "t": sh.t, "permute": sh.permute,
        "squeeze": sh.squeeze, "unsqueeze": sh.unsqueeze, "expand": sh.expand,
        "expand_as": lambda s, o: sh.expand(s, tuple(o.shape)),
        "broadcast_to": sh.broadcast_to, "sum_to_size": sh.sum_to_size,
        "matmul": la.matmul, "mm": la.matmul, "dot": la.matmul,
        "gather": ix.gather,
        "softmax": nn.softmax, "log_softmax": nn.log_softmax,
        # more elementwise functions
        **{name: getattr(unary, name) for name in unary.__all__},
        **{name: getattr(stats, name) for name in stats.__all__},
        **{name: getattr(layout, name) for name in layout.__all__},
        **{name: getattr(la, name) for name in la.__all__},
        **{name: getattr(sorting, name) for name in sorting.__all__},
        **{name: getattr(binary, name) for name in binary.__all__},
        "swapdims": layout.swapaxes, "moveaxis": layout.movedim,
        "arcsin": unary.asin, "arccos": unary.acos, "arctan": unary.atan,
        # copies and conversions
        "clone": clone, "contiguous": contiguous, "to": to, "type_as": lambda s, o: to(s, o.dtype),
        "float": _cast("float32"), "double": _cast("float64"), "half": _cast("float16"),
        "long": _cast("int64"), "int": _cast("int32"), "bool": _cast("bool"),
        "byte": _cast("uint8"), "short": _cast("int16"),
        # in place
        "add_": ip.add_, "sub_": ip.sub_, "mul_": ip.mul_, "div_": ip.div_, "pow_": ip.pow_,
        "clamp_": ip.clamp_, "relu_": ip.relu_, "neg_": ip.neg_, "exp_": ip.exp_,
        "zero_": ip.zero_, "fill_": ip.fill_, "copy_": ip.copy_,
        **ip.MORE, "masked_fill_": ip.inplace(masked_fill, "masked_fill_", False),
    }
    for name, fn in methods.items():
        setattr(Tensor, name, fn)
    Tensor.T = property(lambda s: sh.permute(s, *reversed(range(s.ndim))))
    Tensor.mT = property(sh.mT)
