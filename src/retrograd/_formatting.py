"""``repr(tensor)`` in PyTorch's format: ``tensor([[1.1144]], requires_grad=True)``."""

from __future__ import annotations

import math

import numpy as np

from . import dtypes

LINEWIDTH = 80
THRESHOLD = 1000
EDGEITEMS = 3
PRECISION = 4


class _Formatter:
    """Chooses one format for every element, as PyTorch does (int, fixed or scientific)."""

    def __init__(self, values: np.ndarray):
        self.kind = values.dtype.kind
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if self.kind == "b":
            self.max_width = 5 if values.size and not values.all() else 4
            return
        if self.kind != "f":
            self.max_width = max((len(str(v)) for v in values.ravel()), default=1)
            return
        finite = values[np.isfinite(values)].astype(np.float64)
        nonzero = np.abs(finite[finite != 0])
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if nonzero.size:
            lo, hi = nonzero.min(), nonzero.max()
            if self.int_mode:
                self.sci_mode = hi > 1e8
            else:
                self.sci_mode = hi / lo > 1000.0 or hi > 1e8 or lo < 1e-4
        self.max_width = max((len(self._fmt(v)) for v in values.ravel()), default=1)

    def _fmt(self, v) -> str:
        if self.kind == "b":
            return str(bool(v))
        if self.kind != "f":
            return str(v)
        v = float(v)
        if not math.isfinite(v):
            return str(v)
        if self.sci_mode:
            return f"{v:.{PRECISION}e}"
        if self.int_mode:
            return f"{v:.0f}."
        return f"{v:.{PRECISION}f}"

    def format(self, v) -> str:
        return self._fmt(v).rjust(self.max_width)


def _summarized(a: np.ndarray) -> np.ndarray:
    """The edge elements that a summarized print shows (for choosing the format)."""
    if a.ndim == 0:
        return a.reshape(1)
    if a.shape[0] > 2 * EDGEITEMS:
        a = np.concatenate([a[:EDGEITEMS], a[-EDGEITEMS:]])
    return np.concatenate([_summarized(x).ravel() for x in a]) if a.ndim > 1 else a


def _body(a: np.ndarray, fmt: _Formatter, indent: int, summarize: bool) -> str:
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        items = [fmt.format(v) for v in (a.tolist() if a.dtype.kind != "f" else a)]
        if summarize and a.shape[0] > 2 * EDGEITEMS:
            items = items[:EDGEITEMS] + ["..."] + items[-EDGEITEMS:]
        per_line = max(1, (LINEWIDTH - indent) // (fmt.max_width + 2))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    n = a.shape[0]
    rows = range(n)
    parts = []
    if summarize and n > 2 * EDGEITEMS:
        parts = [_body(a[i], fmt, indent + 1, summarize) for i in rows[:EDGEITEMS]]
        parts.append("...")
        parts += [_body(a[i], fmt, indent + 1, summarize) for i in rows[-EDGEITEMS:]]
    else:
        parts = [_body(a[i], fmt, indent + 1, summarize) for i in rows]
    sep = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(parts) + "]"


def tensor_repr(t) -> str:
    from .backend import to_numpy

    a = to_numpy(t._data)
    prefix = "tensor("
    suffixes = []
    dtype = dtypes.FROM_NUMPY[a.dtype]
    if a.size == 0 and a.ndim != 1:
        body = "[]"
        suffixes.append(f"size={tuple(a.shape)}")
    elif a.size == 0:
        body = "[]"
    else:
        summarize = a.size > THRESHOLD
        fmt = _Formatter(_summarized(a) if summarize else a)
        body = _body(a, fmt, len(prefix), summarize)
    default = dtypes.get_default_dtype()
    if dtype not in (default, dtypes.int64, dtypes.bool) or (
        a.size == 0 and dtype is not default
    ):
        suffixes.append(f"dtype={dtype!r}")
    if str(t.device) != "cpu":
        suffixes.insert(0, f"device='{t.device}'")
    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return prefix + body + "".join(", " + s for s in suffixes) + ")"
