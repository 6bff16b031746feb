"""PyTorch 2.13's dtype rules that its kernels and autograd wrappers check, where NumPy would
compute something: bool shifts, in-place scans asked for another dtype, a dtype= argument
that makes a tensor requiring grad into an integer result.

The helpers raise PyTorch's exception class in PyTorch's order (its argument checks, then
the kernel's dtype dispatch, then the autograd wrapper's 'Autograd not support dtype').
"""

from __future__ import annotations

from ._errors import scalar_type_name


def _is_bool(value) -> bool:
    """Whether ``value`` (an array, a NumPy scalar or a Python number) is a bool."""
    if value.__class__ is bool:
        return True
    kind = getattr(getattr(value, "dtype", None), "kind", None)
    return kind == "b"


def shift_forward(kernel: str):
    """The forward of bitwise_left_shift (``kernel`` "lshift") or bitwise_right_shift
    ("rshift") on arrays or numbers.  PyTorch has no bool shift kernel: two bool operands
    (tensors or a Python bool) raise its NotImplementedError; NumPy would shift int8s."""

    def forward(a, b):
        if _is_bool(a) and _is_bool(b):
            raise NotImplementedError(
                f"\"{kernel}_cpu\" not implemented for 'Bool': a shift of two bool operands; "
                "convert one to an integer dtype first (x.long())")
        return a << b if kernel == "lshift" else a >> b

    forward.__name__ = f"_{kernel}_forward"
    return forward


# the C++ names of PyTorch's "Bad in-place call" message
_C_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
            "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool"}


def check_inplace_dtype(x, dtype, name: str) -> None:
    """``x.cumsum_(dim, dtype=dtype)``: PyTorch writes the scan into ``x`` itself, so a
    ``dtype`` other than x's raises its RuntimeError (after the dim check, before the
    kernel's dtype dispatch)."""
    if dtype is None:
        return
    from .. import dtypes

    dtypes.refuse_name(dtype, name)
    have = str(x._data.dtype)
    want_name = dtypes.to_dtype(dtype).name
    if want_name != have:
        raise RuntimeError(
            f"Bad in-place call: input tensor dtype {_C_NAMES.get(have, have)} and output "
            f"tensor dtype {_C_NAMES.get(want_name, want_name)} should match ({name}() writes "
            f"into the tensor itself: drop dtype=, or use the out-of-place "
            f"{name.rstrip('_')}(dtype=...))")


def autograd_dtype_error(dtype_name: str, name: str) -> RuntimeError:
    """PyTorch's refusal to record a differentiable op whose result has an integer or bool
    dtype while an input requires grad."""
    return RuntimeError(
        f"Autograd not support dtype: {dtype_name} ({name} of a tensor that requires grad "
        "with an integer or bool result: gradients need a floating dtype; detach() the input "
        "or ask for a floating dtype)")


def check_grad_dtype(x, result, name: str) -> None:
    """After ``name``(x, dtype=...) computed ``result``: PyTorch's autograd wrapper refuses
    an integer or bool result of an input that requires grad (x.sum(dtype=torch.int64))."""
    from ..autograd.grad_mode import state

    data = getattr(result, "_data", None)
    if (data is not None and data.dtype.kind != "f" and getattr(x, "_requires_grad", False)
            and state.enabled):
        raise autograd_dtype_error(scalar_type_name(data.dtype), name)


def norm_input(name: str, x, dtype):
    """The input of a norm (``name``: linalg.vector_norm or linalg.matrix_norm) converted to
    ``dtype``, with PyTorch's checks in its order: a floating input, then a floating
    ``dtype``, then one that the input's dtype reaches without narrowing (float32 -> float16
    is refused, float16 -> float32 allowed)."""
    from .. import dtypes

    dtypes.refuse_name(dtype, name.replace(".", "_"))  # (the argument parser's, first)
    have = x._data.dtype
    if have.kind != "f":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_type_name(have)} (convert first, e.g. x.float())")
    if dtype is None:
        return x
    want = dtypes.to_dtype(dtype)
    if not want.is_floating_point:
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got "
                           f"{scalar_type_name(want.numpy)} (ask for a floating dtype)")
    source = dtypes.FROM_NUMPY[have]
    if dtypes.promote_types(source, want) is not want:
        raise RuntimeError(f"{name}: the dtype of the input ({scalar_type_name(have)}) should "
                           "be convertible without narrowing to the specified dtype "
                           f"({scalar_type_name(want.numpy)}); convert the result instead")
    return x.to(dtype=want)
