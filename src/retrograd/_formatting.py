"""``repr(tensor)`` in PyTorch's format: ``tensor([[1.1144]], requires_grad=True)``.

The rules follow ``torch/_tensor_str.py`` step by step (so that printed tensors read exactly
as PyTorch's do): one format is chosen for all elements from the nonzero finite values
(integer-valued floats print as ``1.``, a wide range of magnitudes switches to scientific
notation), tensors above ``threshold`` elements are summarized with ``...``, rows wrap at
``linewidth`` columns, and the suffixes (``dtype=``, ``grad_fn=``...) wrap too.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math

import numpy as np

from . import dtypes

__all__ = ["tensor_repr", "set_printoptions", "get_printoptions", "printoptions"]


@dataclasses.dataclass
class _PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrintOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None) -> None:
    """Set how tensors print, as ``torch.set_printoptions``.

    Parameters
    ----------
    precision : int, optional
        Digits after the decimal point (default 4).
    threshold : float, optional
        Tensors with more elements than this are summarized with ``...`` (default 1000).
    edgeitems : int, optional
        Items shown at each end of a summarized dimension (default 3).
    linewidth : int, optional
        Characters per line before wrapping (default 80).
    profile : {"default", "short", "full"}, optional
        A preset, applied before the other arguments.
    sci_mode : bool or None
        Force scientific notation on (True) or off (False); None chooses automatically.

    Examples
    --------
    >>> import retrograd as T
    >>> T.set_printoptions(precision=2)
    >>> T.tensor([1.12345])
    tensor([1.12])
    >>> T.set_printoptions(profile="default")
    """
    if profile is not None:
        presets = {
            "default": (4, 1000, 3, 80),
            "short": (2, 1000, 2, 80),
            "full": (4, math.inf, 3, 80),
        }
        if profile not in presets:
            raise ValueError(f"unknown print profile {profile!r}; use one of {sorted(presets)}")
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = presets[profile]
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    # As in PyTorch, every call resets sci_mode unless it is given.
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict:
    """The current print options, as keyword arguments for :func:`set_printoptions`."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Temporarily change the print options (a context manager)."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """One format for every element, chosen as PyTorch chooses (int, fixed or scientific)."""

    def __init__(self, values: np.ndarray):
        self.floating = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        if not self.floating:
            # Python's str of each value: ints, and True/False for bools.
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(str(v)))
            return
        # Only nonzero finite values choose the format; nan/inf/0 print as they come.
        wide = flat.astype(np.float64)
        vals = wide[np.isfinite(wide) & (wide != 0)]
        if vals.size == 0:
            return
        absv = np.abs(vals)
        lo, hi = float(absv.min()), float(absv.max())
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        p = PRINT_OPTS.precision
        items = vals.tolist()
        if self.sci_mode:
            self.max_width = max(self.max_width, *(len(f"{v:.{p}e}") for v in items))
        elif self.int_mode:
            # the "+ 1" is the trailing "." that marks a float
            self.max_width = max(self.max_width, *(len(f"{v:.0f}") + 1 for v in items))
        else:
            self.max_width = max(self.max_width, *(len(f"{v:.{p}f}") for v in items))

    def format(self, value) -> str:
        if self.floating:
            p = PRINT_OPTS.precision
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{p}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _summarized(a: np.ndarray) -> np.ndarray:
    """The elements a summarized print shows (they alone choose the format)."""
    edge = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate([a[:edge], a[-edge:]]) if a.shape[0] > 2 * edge else a
    if not edge:
        return a[:0]
    rows = list(range(a.shape[0]))
    if a.shape[0] > 2 * edge:
        rows = rows[:edge] + rows[-edge:]
    return np.stack([_summarized(a[i]) for i in rows])


def _vector(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    edge = PRINT_OPTS.edgeitems
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / (fmt.max_width + 2)))
    if summarize and not edge:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * edge:
        data = ([fmt.format(v) for v in a[:edge].tolist()] + [" ..."]
                + [fmt.format(v) for v in a[-edge:].tolist()])
    else:
        data = [fmt.format(v) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _body(a: np.ndarray, indent: int, summarize: bool, fmt: _Formatter) -> str:
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        return _vector(a, indent, summarize, fmt)
    edge = PRINT_OPTS.edgeitems
    n = a.shape[0]
    if summarize and n > 2 * edge:
        slices = ([_body(a[i], indent + 1, summarize, fmt) for i in range(edge)] + ["..."]
                  + [_body(a[i], indent + 1, summarize, fmt) for i in range(n - edge, n)])
    else:
        slices = [_body(a[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _add_suffixes(text: str, suffixes: list, indent: int) -> str:
    # A suffix that would run past the line width goes on a new line, indented.
    parts = [text]
    last_line_len = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t) -> str:
    """The text ``repr(t)`` shows, in PyTorch's layout."""
    from .backend import to_numpy

    a = to_numpy(t._data)
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    dtype = dtypes.FROM_NUMPY[a.dtype]
    default = dtypes.get_default_dtype()
    if str(t.device) != "cpu":
        suffixes.append(f"device='{t.device}'")
    if a.size == 0:
        body = "[]"
        # NumPy-style: the shape is shown unless it is (0,); an empty tensor shows its
        # dtype unless it is the default float (no elements hint that it is int64).
        if a.ndim != 1:
            suffixes.append(f"size={tuple(a.shape)}")
        if dtype is not default:
            suffixes.append(f"dtype={dtype!r}")
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(a.shape)}")
        if dtype not in (default, dtypes.int64, dtypes.bool):
            suffixes.append(f"dtype={dtype!r}")
        summarize = a.size > PRINT_OPTS.threshold
        fmt = _Formatter(_summarized(a) if summarize else a)
        body = _body(a, indent, summarize, fmt)
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t._grad_fn).__name__}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
