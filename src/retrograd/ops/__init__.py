"""The op library.  Each kind of op lives in its own module, forward beside derivative:

* ``pointwise`` -- arithmetic, elementwise functions, comparisons, dtype casts
* ``unary``, ``binary``, ``activation`` -- more elementwise functions
* ``reduce``, ``stats`` -- sum, mean, max/min, argmax; prod, var, norm, cumsum...
* ``shape``, ``layout`` -- reshape/view, transpose/permute, cat, stack; split, flip, tril...
* ``index``, ``sorting`` -- ``x[i]``, gather/scatter; sort, topk, nonzero
* ``scatter``, ``take_put`` -- scatter(_add/_reduce), index_add/copy/fill/reduce; index_put,
  take, put, masked_scatter, diagonal/select/slice_scatter (and their in-place forms)
* ``linalg`` -- matmul, einsum
* ``nn`` -- softmax, log_softmax, losses
* ``inplace`` -- ``add_``, ``mul_``, ``zero_``, ``x[i] = v``... (version counting)

Each module ends with the public names of its ops (``registry.register``); importing this
package imports them all, so ``registry`` then lists every op.  The conversions below
(``to``, ``float()``...) and the bitwise operators have no module of their own.
"""

from __future__ import annotations

from ..backend import device, device_of, namespace
from . import (  # noqa: F401 - imported for their registrations
    activation, binary, index, inplace, layout, linalg, nn, pointwise, reduce, shape, sorting,
    stats, unary,
)
from .registry import reflected, register


clone = shape.clone


def to(x, *args, **kwargs):
    """Convert dtype (``x.to(retrograd.float64)``); devices ``"cpu"``/``"cuda"`` move data."""
    from .. import dtypes

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


def move_to_device(tensor, target):
    """Copy a tensor's data to ``target`` ('cpu' or 'cuda[:i]'); recorded as a copy."""
    target = target if isinstance(target, device) else device(str(target))
    if device_of(tensor._data) == target:
        return tensor
    if target.type == "cuda":
        try:
            import cupy
        except ImportError:
            raise RuntimeError(
                "retrograd's CUDA path needs CuPy: pip install cupy-cuda12x (or the wheel for "
                "your CUDA version); without it tensors stay on the CPU"
            ) from None
        global _to_cuda, _to_cpu
        if _to_cuda is None:
            _to_cuda = pointwise.defop("to", lambda a: cupy.asarray(a),
                                       lambda node, g, saved: (_to_cpu(g),), "ToCopyBackward0", 1)
            _to_cpu = pointwise.defop("to", lambda a: cupy.asnumpy(a),
                                      lambda node, g, saved: (_to_cuda(g),), "ToCopyBackward0", 1)
        return _to_cuda(tensor)
    return _to_cpu(tensor)


_to_cuda = _to_cpu = None


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
    # exactly 0 where masked, even for an inf g (PyTorch's grad.masked_fill(mask, 0))
    if len(node.next) == 1:
        return (pointwise.where(mask, 0.0, g),)
    nx, nv = node.next
    return (pointwise.where(mask, 0.0, g) if nx else None,
            pointwise.where(mask, g, 0.0) if nv else None)  # the engine sums to 0-d


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


# ----------------------------------------------------------------- public names (registry.py)
register(to, function=False)
register(contiguous, function=False)
register(lambda self, other: to(self, other.dtype), "type_as", function=False)
for _method, _dtype in (("float", "float32"), ("double", "float64"), ("half", "float16"),
                        ("long", "int64"), ("int", "int32"), ("bool", "bool"),
                        ("byte", "uint8"), ("short", "int16")):
    register(_cast(_dtype), _method, function=False,
             differentiable=_dtype.startswith("float"))  # integer results need no grad
register(masked_fill, function=False)
register(inplace.inplace(masked_fill, "masked_fill_", False), function=False,
         inplace_of="masked_fill")
register(invert, "bitwise_not", function=False, dunders=("__invert__",), differentiable=False)
register(bitwise_xor, function=False, dunders=("__xor__",),
         tensor={"__rxor__": reflected(bitwise_xor)})
register(bitwise_left_shift, function=False, method=False, dunders=("__lshift__",))
register(bitwise_right_shift, function=False, method=False, dunders=("__rshift__",))

# scatter, index_add, take... (their registrations; after inplace, whose machinery they use)
from . import scatter, take_put  # noqa: F401, E402
