"""Errors that teach, in one place: which op the user called, and PyTorch's exception for a
NumPy one raised inside a forward.

Everything here runs only once an error has happened, so it may be slow: the success path
of an op never calls into this module.
"""

from __future__ import annotations

import re
import sys

import numpy as np

_SCALAR_TYPE = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
                "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def scalar_type_name(np_dtype) -> str:
    """PyTorch's name for a dtype in its error messages (``Long`` for int64...)."""
    return _SCALAR_TYPE.get(str(np_dtype), str(np_dtype))


# modules whose public functions are ops a user calls (not autograd, nn modules, tests)
_OP_MODULES = ("retrograd.ops", "retrograd.tensor", "retrograd._creation")


def calling_op(default: str = "op") -> str:
    """The name of the public retrograd op the user called: the outermost public function
    of the op modules on the stack (``x.swapdims(...)`` names ``swapaxes``, not the
    ``transpose`` it calls).  Asking the stack keeps every dim check a one-liner, without
    an op-name argument threaded through each helper."""
    f = sys._getframe(1)
    name = default
    while f is not None:
        code_name = f.f_code.co_name
        if (f.f_globals.get("__name__", "").startswith(_OP_MODULES)
                and not code_name.startswith(("_", "<"))):
            name = code_name
        f = f.f_back
    return name


def dim_error(dim, ndim: int, what: str = "Dimension") -> IndexError:
    """PyTorch's IndexError for a dim outside ``[-max(ndim, 1), max(ndim, 1) - 1]``."""
    n = max(ndim, 1)
    return IndexError(
        f"{calling_op()}(): {what} out of range (expected to be in range of [{-n}, {n - 1}], "
        f"but got {dim}) for a tensor with {ndim} dimension(s)"
    )


def _shapes(arrays) -> str:
    return " and ".join(str(list(np.shape(a))) for a in arrays if hasattr(a, "shape"))


def broadcast_message(shapes) -> str | None:
    """PyTorch's words for the last dimension where ``shapes`` do not broadcast, or None."""
    n = max((len(s) for s in shapes), default=0)
    padded = [(1,) * (n - len(s)) + tuple(s) for s in shapes]
    for d in range(n - 1, -1, -1):
        sizes = {p[d] for p in padded if p[d] != 1}
        if len(sizes) > 1:
            a, b = sorted(sizes, key=[p[d] for p in padded].index)[:2]
            return (f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                    f"non-singleton dimension {d}")
    return None


def check_broadcast(name: str, *operands) -> None:
    """PyTorch's RuntimeError when the operands' shapes (tensors or arrays; numbers have
    none) do not broadcast.  TensorIterator checks the shapes before the kernel's dtype
    dispatch, so an elementwise op calls this before refusing a dtype: a bool or integer
    operand of the wrong shape gets the shape's error, as in PyTorch (fuzz seed 16605020's
    class)."""
    shapes = [tuple(d.shape) for d in (getattr(x, "_data", x) for x in operands)
              if hasattr(d, "shape")]
    text = broadcast_message(shapes)
    if text is not None:
        raise RuntimeError(f"{name}(): {text} (input shapes "
                           f"{' and '.join(str(list(s)) for s in shapes)}); make the shapes "
                           "match or broadcast (reshape, unsqueeze or expand one)")


# Python's own values, which PyTorch's parser refuses where it wants a Tensor
PY_VALUES = frozenset((int, float, bool, complex, type(None), list, tuple, str))


def not_a_tensor(name: str, what: str, position: int, value) -> TypeError:
    """PyTorch's TypeError for ``value`` (a number, list, None...) given as Tensor ``what``."""
    return TypeError(f"{name}(): argument '{what}' (position {position}) must be Tensor, not "
                     f"{type(value).__name__} (wrap it: retrograd.tensor(...))")


# Python's message for a function called with too many positional arguments
_TOO_MANY = re.compile(r"^[\w<>.]+\(\) takes \d+ positional arguments? but \d+ (was|were) given$")


def forward_error(name: str, exc: Exception, arrays) -> Exception:
    """PyTorch's exception for ``exc``, raised by NumPy inside op ``name``'s forward on
    ``arrays`` (returned unchanged when it is already one of retrograd's own)."""
    if isinstance(exc, np.exceptions.AxisError):
        return IndexError(f"{name}(): Dimension out of range ({exc}); input shapes "
                          f"{_shapes(arrays)}")
    if type(exc) is ValueError or isinstance(exc, np.linalg.LinAlgError):
        text = str(exc)
        if "broadcast" in text or "mismatch" in text:
            shapes = [np.shape(a) for a in arrays if hasattr(a, "shape")]
            if name == "matmul" or name == "bmm":  # the batch dims broadcast, not the matrices
                shapes = [s[:-2] for s in shapes if len(s) > 2]
            text = broadcast_message(shapes) or text
            return RuntimeError(f"{name}(): {text} (input shapes {_shapes(arrays)}); make the "
                                "shapes match or broadcast (reshape, unsqueeze or expand one)")
        return RuntimeError(f"{name}(): {text} (input shapes {_shapes(arrays)})")
    if type(exc) is IndexError:
        return IndexError(f"{name}(): {exc} (input shapes {_shapes(arrays)})")
    if type(exc) is TypeError and _TOO_MANY.match(str(exc)):
        # the forward was called with too many arguments (``clone(x, 2)``): PyTorch's parser
        # counts the same ones (input and the parameters), naming the op
        text = str(exc)
        return TypeError(f"{name}(){text[text.index(') ') + 1:]}")
    if isinstance(exc, TypeError) and str(exc).startswith("ufunc "):
        # a ufunc without a loop for these dtypes: bitwise ops of floats...
        kinds = [scalar_type_name(a.dtype) for a in arrays if hasattr(a, "dtype")]
        return NotImplementedError(
            f"\"{name}\" not implemented for '{kinds[0] if kinds else '?'}' (input dtypes "
            f"{', '.join(kinds)}); convert the inputs to a dtype the op supports"
        )
    return exc


def float_only(x, kernel: str, name: str) -> None:
    """PyTorch's NotImplementedError for an integer or bool tensor given to op ``name``,
    whose kernel (``kernel``, the name PyTorch's message gives) exists for floats only."""
    data = getattr(x, "_data", None)
    if data is not None and data.dtype.kind != "f":
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{scalar_type_name(data.dtype)}': {name}() takes "
            "a floating tensor; convert it first (x.float()) or pass dtype= where the op has it"
        )


def int_arg(value, arg: str):
    """``value`` as an int, or PyTorch's TypeError naming the op and argument ``arg`` (a
    float such as 2.0 is refused, as PyTorch does; an int tensor or NumPy int passes)."""
    if value.__class__ is int:
        return value
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"{calling_op()}(): argument '{arg}' must be int, not "
                        f"{type(value).__name__} ({value!r})")
    return value.__index__()


def tensor_arg(value, arg: str, position: int = 1) -> None:
    """PyTorch's TypeError for a number, list or None where op needs a tensor ``arg``."""
    if not hasattr(value, "shape"):
        raise TypeError(f"{calling_op()}(): argument '{arg}' (position {position}) must be "
                        f"Tensor, not {type(value).__name__}; wrap it with retrograd.tensor(...)")
