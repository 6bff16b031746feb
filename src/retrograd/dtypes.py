"""dtype objects with PyTorch's names, and PyTorch's type-promotion rules.

NumPy and PyTorch disagree on promotion in two places that matter to users:
an int tensor times a Python float is float32 in PyTorch (float64 in NumPy), and a
0-d tensor takes part in promotion only when it is of a higher *category*
(bool < integer < floating) than the dimensioned tensors.  ``result_type`` implements
PyTorch's rule; ops cast NumPy's result when the two disagree.
"""

from __future__ import annotations

import builtins

import numpy as np

__all__ = [
    "dtype", "float16", "float32", "float64", "bfloat16", "int8", "int16", "int32", "int64",
    "uint8", "bool", "half", "float", "double", "short", "int", "long",
    "get_default_dtype", "set_default_dtype", "to_dtype", "result_type", "promote_types",
    "can_cast", "finfo", "iinfo",
]

_BOOL, _INT, _FLOAT = 0, 1, 2


class dtype:
    """A tensor element type, named as PyTorch names it (``retrograd.float32``)."""

    __slots__ = ("name", "numpy", "is_floating_point", "is_signed", "itemsize", "category")

    def __init__(self, name: str, numpy_dtype):
        self.name = name
        self.numpy = np.dtype(numpy_dtype)
        kind = self.numpy.kind
        self.is_floating_point = kind == "f"
        self.is_signed = kind in "fi"
        self.itemsize = self.numpy.itemsize
        self.category = _FLOAT if kind == "f" else (_BOOL if kind == "b" else _INT)

    @property
    def is_complex(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"retrograd.{self.name}"

    def __reduce__(self):
        return (to_dtype, (self.name,))


float16 = half = dtype("float16", np.float16)
float32 = float = dtype("float32", np.float32)  # noqa: A001 - PyTorch's alias
float64 = double = dtype("float64", np.float64)
int8 = dtype("int8", np.int8)
int16 = short = dtype("int16", np.int16)
int32 = int = dtype("int32", np.int32)  # noqa: A001 - PyTorch's alias
int64 = long = dtype("int64", np.int64)
uint8 = dtype("uint8", np.uint8)
bool = dtype("bool", np.bool_)  # noqa: A001 - PyTorch's name
# NumPy has no bfloat16; the name exists so that code mentioning it gets a clear error.
bfloat16 = None

_ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, bool)
#: NumPy dtype -> retrograd dtype (the lookup behind ``Tensor.dtype``).
FROM_NUMPY = {d.numpy: d for d in _ALL}
_BY_NAME = {d.name: d for d in _ALL}
_BY_NAME.update(half=float16, float=float32, double=float64, short=int16, int=int32, long=int64)

_default_float = float32


def get_default_dtype() -> dtype:
    """The dtype of tensors made from Python floats (float32 unless changed)."""
    return _default_float


def set_default_dtype(d: dtype) -> None:
    """Set the default floating dtype (float32 or float64), as ``torch.set_default_dtype``."""
    global _default_float
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError(f"set_default_dtype only supports floating point dtypes, got {d}")
    _default_float = d
    _RESULT_CACHE.clear()


def to_dtype(d) -> dtype:
    """Accept a retrograd dtype, a NumPy dtype or type, a name, or Python's float/int/bool."""
    if type(d) is dtype:
        return d
    if d is None:
        return _default_float
    import builtins

    if d is builtins.float:
        return float64  # as PyTorch: Python's float is a double, whatever the default
    if d is builtins.int:
        return int64
    if d is builtins.bool:
        return bool
    if isinstance(d, str):
        name = d.removeprefix("torch.").removeprefix("retrograd.")
        if name in _BY_NAME:
            return _BY_NAME[name]
        raise TypeError(f"unknown dtype name {d!r}; use one of {sorted(_BY_NAME)}")
    try:
        return FROM_NUMPY[np.dtype(d)]
    except (TypeError, KeyError):
        raise TypeError(
            f"retrograd has no dtype matching {d!r}; supported: "
            + ", ".join(x.name for x in _ALL)
        ) from None


def refuse_name(d, op: str) -> None:
    """PyTorch's TypeError for a dtype given by name (``dtype="float32"``) to op ``op``,
    which takes a dtype: names are for ``Tensor.type()``, ops take the dtype object."""
    if isinstance(d, str):
        raise TypeError(
            f"{op}(): argument 'dtype' must be retrograd.dtype, not str "
            f"({d!r}); pass the dtype itself, e.g. dtype=retrograd.float32"
        )


def promote_types(a: dtype, b: dtype) -> dtype:
    """PyTorch's ``promote_types``: the higher category wins, else NumPy's promotion."""
    if a is b:
        return a
    try:  # (free when nothing is raised)
        if a.category != b.category:
            return a if a.category > b.category else b
        return FROM_NUMPY[np.promote_types(a.numpy, b.numpy)]
    except AttributeError:  # a number, a string...: PyTorch's parser refuses it
        bad, pos = (a, 1) if not isinstance(a, dtype) else (b, 2)
        raise TypeError(f"promote_types(): argument '{'type1' if pos == 1 else 'type2'}' "
                        f"(position {pos}) must be torch.dtype, not {type(bad).__name__} "
                        "(e.g. retrograd.float32)") from None


def _scalar_dtype(value) -> dtype:
    import builtins

    if isinstance(value, builtins.bool):
        return bool
    if isinstance(value, builtins.int):
        return int64
    return _default_float


def _combine(higher, lower):
    # PyTorch's combine_categories: a lower-priority group only matters if it brings a
    # higher category (an integer tensor times a float scalar becomes floating).
    if higher is None:
        return lower
    if lower is None or higher.category == _FLOAT:
        return higher
    if higher is bool or lower.category == _FLOAT:
        return promote_types(higher, lower)
    return higher


_RESULT_CACHE: dict = {}


def result_type(*operands) -> dtype:
    """The dtype PyTorch gives an op on ``operands`` (tensors, arrays or Python scalars)."""
    key = tuple(
        (o.dtype, o.ndim == 0) if hasattr(o, "ndim") else type(o) for o in operands
    )
    cached = _RESULT_CACHE.get(key)
    if cached is not None:
        return cached
    dim = zero = wrapped = None
    for o in operands:
        if hasattr(o, "ndim"):
            d = o.dtype if type(o.dtype) is dtype else FROM_NUMPY[np.dtype(o.dtype)]
            if o.ndim == 0:
                zero = d if zero is None else promote_types(zero, d)
            else:
                dim = d if dim is None else promote_types(dim, d)
        else:
            d = _scalar_dtype(o)
            wrapped = d if wrapped is None else promote_types(wrapped, d)
    out = _combine(dim, _combine(zero, wrapped))
    _RESULT_CACHE[key] = out
    return out


def can_cast(from_: dtype, to: dtype) -> bool:
    """Whether PyTorch's casting rules allow ``from_`` -> ``to`` in ops with an ``out``:
    never to a lower category (float -> int, int -> bool)."""
    from_, to = to_dtype(from_), to_dtype(to)
    return from_.category <= to.category


def _fmt(v) -> str:
    return f"{v:g}"


class finfo:
    """Limits of a floating dtype, as ``torch.finfo`` (``finfo(retrograd.float32).eps``)."""

    def __init__(self, type=None):  # noqa: A002 - PyTorch's name
        d = _default_float if type is None else to_dtype(type)
        if not d.is_floating_point:
            raise TypeError(
                "retrograd.finfo() requires a floating point input type. Use retrograd.iinfo to "
                f"handle '{d!r}'"
            )
        info = np.finfo(d.numpy)
        self.bits = builtins.int(info.bits)
        self.eps = builtins.float(info.eps)
        self.max = builtins.float(info.max)
        self.min = builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.smallest_normal)
        self.resolution = 10.0 ** -builtins.int(info.precision)
        self.dtype = d.name

    def __repr__(self) -> str:
        return (f"finfo(resolution={_fmt(self.resolution)}, min={_fmt(self.min)}, "
                f"max={_fmt(self.max)}, eps={_fmt(self.eps)}, "
                f"smallest_normal={_fmt(self.smallest_normal)}, tiny={_fmt(self.tiny)}, "
                f"dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype, as ``torch.iinfo`` (``iinfo(retrograd.int32).max``)."""

    def __init__(self, type):  # noqa: A002 - PyTorch's name
        d = to_dtype(type)
        if d.is_floating_point or d is bool:
            raise TypeError(
                "retrograd.iinfo() requires an integer input type. Use retrograd.finfo to "
                f"handle '{d!r}'"
            )
        info = np.iinfo(d.numpy)
        self.bits = builtins.int(info.bits)
        self.max = builtins.int(info.max)
        self.min = builtins.int(info.min)
        self.dtype = d.name

    def __repr__(self) -> str:
        return f"iinfo(min={_fmt(self.min)}, max={_fmt(self.max)}, dtype={self.dtype})"
