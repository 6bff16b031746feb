"""The op library.  Each kind of op lives in its own module, forward beside derivative:

* ``pointwise`` -- arithmetic (and the registration of the basic elementwise ops);
  ``elementary`` -- exp, log, tanh, relu...; ``selection`` -- where, clamp, maximum;
  ``pointwise_compare`` -- comparisons, logical/bitwise; ``pointwise_common`` -- their
  shared helpers
* ``unary``, ``binary``, ``activation`` -- more elementwise functions
* ``special`` -- lgamma, digamma, erfinv, Bessel, ndtr... (SciPy, optional)
* ``reduce``, ``stats`` -- sum, mean, max/min, argmax; prod, var, norm, cumsum...
* ``shape``, ``layout`` -- reshape/view, transpose/permute, cat, stack; split, flip, tril...
* ``index``, ``sorting`` -- ``x[i]``, gather/scatter; sort, topk, nonzero
* ``scatter``, ``take_put`` -- scatter(_add/_reduce), index_add/copy/fill/reduce; index_put,
  take, put, masked_scatter, diagonal/select/slice_scatter (and their in-place forms)
* ``linalg`` -- matmul, dot, bmm; ``linear`` -- addmm, linear; ``einsum``
* ``nn`` -- softmax, log_softmax, dropout; ``nll`` -- nll_loss, cross_entropy;
  ``elementwise_losses`` -- binary_cross_entropy(_with_logits), l1_loss, mse_loss
* ``inplace`` -- ``add_``, ``mul_``, ``zero_``, ``copy_``... (version counting);
  ``index_assign`` -- ``x[i] = v``; ``changed_views`` -- what an in-place change does to
  the views sharing the memory (CopySlices, AsStridedBackward0 re-derivation);
  ``inplace_forms`` -- the other ``_`` forms (``tan_``, ``eq_``, ``t_``, ``x &= y``...)
* ``random_ops`` -- ``normal``, ``bernoulli`` and the random fills (``uniform_``...)

Each module ends with the public names of its ops (``registry.register``); importing this
package imports them all, so ``registry`` then lists every op.  The conversions below
(``to``, ``float()``...) and the bitwise operators have no module of their own.
"""

from __future__ import annotations

from ..backend import device, device_of, namespace
from ..memory_formats import preserve_format
from .pointwise_common import to_format
from . import (  # noqa: F401 - imported for their registrations
    activation, binary, compare, index, inplace, layout, linalg, nn, pointwise, reduce, shape,
    sorting, stats, unary,
)
from . import arrange, distance  # noqa: F401, E402 - shape and view ops, cdist
from . import elementwise_losses, index_assign, multi_margin, nll  # noqa: F401, E402 - split modules' registrations
from . import einsum, linear  # noqa: F401, E402 - split from linalg: their registrations
from . import special  # noqa: F401, E402 - its registrations (after unary and inplace)
from . import quantiles, scans, statistics  # noqa: F401, E402 - reductions and scans (issue 6)
from . import attention, grid_sample, padding, resample  # noqa: F401, E402 - nn.functional (issue 8)
from .registry import reflected, register
from .saved_checks import check_also  # noqa: E402 - (masked_fill saves its mask, as PyTorch)
from .dtype_rules import shift_forward  # noqa: E402 - (PyTorch's bool shifts raise: dtypeD)


clone = shape.clone


_TO_KEYWORDS = ("device", "dtype", "non_blocking", "copy", "memory_format")


def _to_usage(args, kwargs):
    got = ", ".join([type(a).__name__ for a in args] + [f"{k}={type(v).__name__}"
                                                          for k, v in kwargs.items()])
    return TypeError(
        f"to() received an invalid combination of arguments - got ({got}), but expected one "
        "of:\n * (device device = None, dtype dtype = None, bool non_blocking = False, bool copy "
        "= False, *, memory_format memory_format = None)\n * (dtype dtype, bool non_blocking = "
        "False, bool copy = False, *, memory_format memory_format = None)\n * (Tensor tensor, "
        "bool non_blocking = False, bool copy = False, *, memory_format memory_format = None)")


def to(x, *args, **kwargs):
    """A tensor of another dtype and/or device: ``x.to(dtype)``, ``x.to(device, dtype)``,
    ``x.to(other)`` (other's dtype and device), each with ``non_blocking`` and ``copy``
    (positional after them, or keywords) and ``memory_format=``.  ``x`` itself when nothing
    changes and ``copy`` is False; otherwise a copy recorded as ToCopyBackward0."""
    from .. import dtypes

    if set(kwargs) - set(_TO_KEYWORDS):
        raise _to_usage(args, kwargs)

    def is_dtype(a):  # also a NumPy dtype (the engine casts gradients with one)
        return (isinstance(a, dtypes.dtype) or a in (float, int, bool)
                or (hasattr(a, "itemsize") and not hasattr(a, "_data")))

    rest = list(args)
    dtype = device = None
    if rest and hasattr(rest[0], "_data"):  # a tensor (checked first: tensors have .itemsize)
        other = rest.pop(0)
        if "dtype" in kwargs or "device" in kwargs:
            raise _to_usage(args, kwargs)
        dtype, device = other.dtype, getattr(other, "device", None)
    elif rest and is_dtype(rest[0]):
        dtype = rest.pop(0)
    elif rest and not isinstance(rest[0], bool):
        device = rest.pop(0)
        if rest and (rest[0] is None or is_dtype(rest[0])) and not isinstance(rest[0], bool):
            dtype = rest.pop(0)
    if len(rest) > 2 or any(not isinstance(a, bool) for a in rest):
        raise _to_usage(args, kwargs)
    # non_blocking (rest[0]) changes nothing: every copy is done when to() returns
    copy = rest[1] if len(rest) == 2 else kwargs.get("copy", False)
    for name, positional in (("dtype", dtype), ("device", device)):
        if name in kwargs:
            if positional is not None:
                raise TypeError(f"to() got multiple values for argument '{name}'")
    dtype = kwargs.get("dtype", dtype)
    device = kwargs.get("device", device)
    if isinstance(dtype, str):  # (a positional string is a device)
        from ._errors import calling_op

        dtypes.refuse_name(dtype, calling_op("to"))
    fmt = kwargs.get("memory_format")
    if fmt is preserve_format:
        fmt = None
    out = x
    if device is not None:
        out = move_to_device(out, device)
    if dtype is not None:
        d = dtypes.to_dtype(dtype)
        if d.numpy != out._data.dtype:  # (into memory_format's layout, when one is given)
            out = (pointwise.to_dtype(out, d.numpy) if fmt is None
                   else to_format(out, d.numpy, fmt))
    if out is x and (copy or fmt is not None and _suggested_format(x._data) is not fmt):
        # PyTorch's copy=True, or a format x does not suggest (its to_will_alias: a
        # transposed matrix passes as contiguous_format): a new tensor, ToCopyBackward0
        out = (pointwise.to_dtype(out, out._data.dtype) if fmt is None
               else to_format(out, out._data.dtype, fmt))
    return out


def _suggested_format(a):
    """PyTorch's suggest_memory_format: channels_last(_3d) for a 4-d (5-d) array whose
    strides order it so, contiguous_format for any other."""
    from .. import memory_formats

    if shape._channels_last(a):
        return memory_formats.channels_last if a.ndim == 4 else memory_formats.channels_last_3d
    return memory_formats.contiguous_format


def move_to_device(tensor, target):
    """Copy a tensor's data to ``target`` ('cpu' or 'cuda[:i]'); recorded as a copy."""
    target = target if isinstance(target, device) else device(str(target))
    if device_of(tensor._data) == target:
        return tensor
    if target.type == "cuda":
        try:
            import cupy
        except ImportError:
            # AssertionError, as PyTorch's CPU-only build raises ("Torch not compiled with
            # CUDA enabled"), so code that catches it keeps working
            raise AssertionError(
                "retrograd's CUDA path needs CuPy: pip install cupy-cuda12x (or the wheel for "
                "your CUDA version); without it tensors stay on the CPU (check "
                "retrograd.cuda.is_available() first)"
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
    """``x`` itself when laid out row-major (or in ``memory_format``: channels_last...),
    else a copy so laid out (CloneBackward0)."""
    if memory_format is not None:
        return x if x.is_contiguous(memory_format) else clone(x, memory_format=memory_format)
    if x._data.flags.c_contiguous:
        return x
    return shape.clone_contiguous(x)  # (a row-major copy: clone's default keeps x's strides)


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
_masked_fill_tensor.op.node_cls.any_dtype = True  # into an int/bool tensor too (inplace.py)


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
        return check_also(_masked_fill_tensor(x, value, m), mask)  # (saved by PyTorch)
    return check_also(_masked_fill_number(x, value, m), mask)


_bitwise_not = pointwise.defop("bitwise_not", lambda a: namespace(a).invert(a), None, None, 1,
                               differentiable=False)
bitwise_xor = pointwise.defop("bitwise_xor", lambda a, b: a ^ b, None, None, 2,
                              dtype_rule="promote", differentiable=False)
bitwise_left_shift = pointwise.defop("bitwise_left_shift", shift_forward("lshift"), None, None,
                                     2, dtype_rule="promote", differentiable=False)
bitwise_right_shift = pointwise.defop("bitwise_right_shift", shift_forward("rshift"), None,
                                      None, 2, dtype_rule="promote", differentiable=False)


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

from . import inplace_forms  # noqa: E402, F401  (the in-place forms of the ops above: tan_, eq_, x &= y...)
from . import random_ops  # noqa: E402, F401  (normal, bernoulli, the random fills)
# scatter, index_add, take... (their registrations; after inplace, whose machinery they use)
from . import scatter, take_put  # noqa: F401, E402
from . import conv  # noqa: F401, E402 - convolutions, unfold / fold (issue 8)
from . import pooling, pooling_adaptive  # noqa: F401, E402 - pooling, max_unpool (issue 8)
from . import activation_more, dropout, normalization  # noqa: F401, E402 - issue 8 (norm)
from . import bilinear, ctc, embedding, losses  # noqa: F401, E402 - issue 8: losses, distances, embeddings, bilinear
from . import losses_multilabel  # noqa: F401, E402 - multilabel_margin_loss (fuzzJ)
from . import linalg_products, linalg_scalars, linalg_solve  # noqa: F401, E402 - issue 11 (linalg)
from . import linalg_decomp, linalg_decomp_lstsq  # noqa: F401, E402 - issue 11 (decompositions)
from . import linalg_ldl, linalg_lu, linalg_matfn  # noqa: F401, E402 - issue 11: LU, LDL, matrix functions
from . import counting, factories, logical, strided, tensor_extras, aliases  # noqa: F401, E402 - issue 6 (aliases last)
from . import leftovers, view_copies  # noqa: F401, E402 - issue 6 leftovers (ger, asarray, *_copy...)
from . import (  # noqa: F401, E402 - issue 6 leftovers (ops6c: embedding_bag, rnn, stft, dlpack...)
    aten_forms, embedding_aten, interop, lobpcg, lowrank, recurrent, slice_inverse, spectral,
    native_norms, split_copies,
)
from . import _jvp  # noqa: F401, E402 - forward-mode AD: tangent propagation (issue 10)
from . import linalg_jvp  # noqa: F401, E402 - forward AD of qr, eigh, svd, lu (issue 10)
from . import tensor_only  # noqa: F401, E402 - Tensor-only arguments: a number raises TypeError (fuzzY; last: wraps the registered names)
