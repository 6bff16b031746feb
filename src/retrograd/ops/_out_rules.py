"""``fn(..., out=out)``: PyTorch's rules for writing an op's result into ``out``.

``write_out`` is the one place every op's ``out=`` ends in (the defop callers of
ops/_apply.py, and the registry's generated functions through ``registry.out_writer``): the
dtype each op's ``out`` must have (``_OUT_DTYPE``), the resize warning, and the refusal of
``out=`` with inputs that require grad.
"""

from __future__ import annotations

from .. import dtypes
from ..autograd.grad_mode import state
from ..backend import as_array
from ..tensor import Tensor
from . import registry


_SCALAR_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "int8": "Char",
                 "int16": "Short", "int32": "Int", "int64": "Long", "uint8": "Byte", "bool": "Bool"}


def _dtype_name(np_dtype) -> str:
    """PyTorch's name for a dtype in messages (``Long``), as pointwise.scalar_type_name."""
    return _SCALAR_NAMES.get(str(np_dtype), str(np_dtype))


# How an op's out= checks the dtype, where PyTorch's differs from its usual "the result must
# cast to out's dtype" (TensorIterator's canCast): ops that want out's dtype exactly, and
# ops with their own message or class
_OUT_DTYPE = {
    "abs": ("exact", RuntimeError, "Found dtype {want} but expected {have}"),
    "neg": ("exact", RuntimeError, "Found dtype {want} but expected {have}"),
    "clamp": ("exact", RuntimeError, "Found dtype {want} but expected {have}"),
    "clamp_min": ("exact", RuntimeError, "Found dtype {want} but expected {have}"),
    "clamp_max": ("exact", RuntimeError, "Found dtype {want} but expected {have}"),
    "where": ("exact", RuntimeError, "Expected out type to be {have} but got {want}"),
    "float_power": ("exact", RuntimeError, "the output given to float_power has dtype {want} "
                    "but the operation's result requires dtype {have}"),
    "cat": ("cast", TypeError, "torch.cat(): input types can't be cast to the desired output "
            "type {want}"),
    "stack": ("cast", TypeError, "torch.cat(): input types can't be cast to the desired output "
              "type {want}"),
    "ldexp": ("cast", RuntimeError, "ldexp can't be cast to the desired output type {want}"),
    # the matrix products want out's dtype exactly
    **{name: ("exact", RuntimeError, "Expected out tensor to have dtype {have_c}, but got "
              "{want_c} instead") for name in ("matmul", "mm", "bmm", "addmm")},
    "dot": ("exact", RuntimeError, "result dtype {want} does not match input dtype {have}"),
    "logsumexp": ("float", RuntimeError, "logsumexp(): Expected floating point type for result "
                  "tensor, but got: {want}"),
    **{name: ("exact", RuntimeError, "Expected the dtype for input and out to match, but got "
              "{have} for input's dtype and {want} for out's dtype.") for name in ("amax", "amin")},
    **{name: ("exact", RuntimeError, "Expected out tensor to have dtype {have_c}, but got "
              "{want_c} instead") for name in ("argmax", "argmin", "gather", "tril", "triu")},
    **{name: ("exact", RuntimeError, name + "(): self and result must have the same scalar "
              "type") for name in ("index_select", "masked_select")},
}
# the C++ names PyTorch's matmul messages use for dtypes
_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
            "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool"}
_CAST = ("cast", RuntimeError, "result type {have} can't be cast to the desired output type "
         "{want}")


def write_out(name, inputs, result, out, differentiable=True):
    """``fn(..., out=out)``: write ``result`` into ``out`` with PyTorch's rules, return ``out``.

    Every op's ``out=`` comes here: the defop callers call it when given ``out`` (so calls
    without it pay one ``is not None``), and the registry's generated public functions for
    ops with a signature (``registry.register(..., signature=...)``).  PyTorch's rules:
    nothing may require grad (out= is not differentiable); the result dtype must be castable
    to ``out``'s (no float into an integer ``out``, nothing but bool into a bool one); an
    ``out`` of another shape is resized, with a UserWarning unless it was empty."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    flat = [y for x in inputs for y in (x if isinstance(x, (list, tuple)) else (x,))]
    if differentiable and state.enabled and (out._requires_grad or any(
            isinstance(x, Tensor) and x._requires_grad for x in flat)):
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad. (Call it without out= "
            "to record the graph, or under `with retrograd.no_grad():`.)")
    data = result._data if isinstance(result, Tensor) else as_array(result)
    have, want = data.dtype, out._data.dtype
    if have != want:
        rule, exc, message = _OUT_DTYPE.get(name, _CAST)
        if (rule == "exact" or not dtypes.can_cast(have, want)
                or (rule == "float" and want.kind != "f")):
            raise exc(message.format(have=_dtype_name(have), want=_dtype_name(want),
                                     have_c=_C_NAMES.get(str(have), str(have)),
                                     want_c=_C_NAMES.get(str(want), str(want)))
                      + f" (in {name}(..., out=...); pass an out of dtype "
                      f"{_dtype_name(have)}, or convert the inputs)")
    if data.shape != out._data.shape:
        if out._data.size:
            import warnings

            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out._data.shape)}, which does not match the required output shape "
                f"{list(data.shape)}. This behavior is deprecated, and in a future PyTorch "
                "release outputs will not be resized unless they have zero elements. You can "
                "explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
                "with t.resize_(0).", UserWarning, stacklevel=3)
        out._data = data.astype(want, copy=True)
    else:
        out._data[...] = data  # in place: views of ``out`` see the values
    out._bump_version()
    return out


registry.out_writer = write_out
