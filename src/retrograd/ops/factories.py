"""More factories and samplers (issue 6): randperm, multinomial, poisson, binomial, logspace,
range (deprecated, inclusive end), scalar_tensor, and the window functions (hann, hamming,
blackman, bartlett, kaiser).

Random numbers come from retrograd's generator (``manual_seed`` or ``generator=`` repeats
them; NumPy's bit stream, not PyTorch's); their distributions are PyTorch's.  Gradients as
derivatives.yaml: ``poisson`` records PoissonBackward0 whose derivative is zero; ``binomial``
records a node whose backward raises, as PyTorch's; the others record nothing.
"""

from __future__ import annotations

import builtins
import math
import warnings

import numpy as np

from .. import dtypes
from ..random import numpy_generator
from ..tensor import Tensor, make_tensor
from ._apply import apply_op, defop
from ._errors import scalar_type_name
from .pointwise import zeros_like_grad

# ----------------------------------------------------------------- shared pieces


def _finish(data, dtype_given, requires_grad, device, name):
    """A new tensor from a host array: on ``device``, requiring grad if asked (floats only)."""
    t = make_tensor(data)
    if device is not None and str(device) != "cpu":
        t = t.to(device)  # (the method: ops/__init__ defines it, above this module)
    if requires_grad:
        if data.dtype.kind != "f":
            raise RuntimeError(f"{name}(): only Tensors of floating point dtype can require "
                               f"gradients (got {scalar_type_name(data.dtype)})")
        t.requires_grad_(True)
    return t


def _numpy_dtype(dtype, default=None):
    """``dtype``'s NumPy dtype; else ``default`` (a NumPy dtype), else the default float."""
    if dtype is not None:
        return dtypes.to_dtype(dtype).numpy
    return default if default is not None else dtypes.get_default_dtype().numpy


def _length(n, name, what="window_length"):
    if isinstance(n, bool) or not hasattr(n, "__index__"):
        raise TypeError(f"{name}(): argument '{what}' must be int, not {type(n).__name__}")
    return int(n)


# ----------------------------------------------------------------- random


def randperm(n, *, generator=None, dtype=None, layout=None, device=None, pin_memory=False,
             requires_grad=False):
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype``)."""
    n = _length(n, "randperm", "n")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}] "
                           "(randperm's n must be >= 0)")
    np_dtype = _numpy_dtype(dtype, np.dtype(np.int64))
    data = numpy_generator(generator).permutation(n).astype(np_dtype)
    return _finish(data, dtype, requires_grad, device, "randperm")


def _check_probs(p, name):
    if p.dtype.kind != "f":
        raise RuntimeError(f"{name} only supports floating-point dtypes for input, got: "
                           f"{scalar_type_name(p.dtype)}")
    if p.ndim not in (1, 2):
        raise RuntimeError(f"prob_dist must be 1 or 2 dim (got a tensor of shape "
                           f"{list(p.shape)})")
    if p.shape[-1] == 0:
        raise RuntimeError("multinomial: the number of categories cannot be 0")
    if not np.isfinite(p).all() or (p < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (p.sum(axis=-1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def multinomial(input, num_samples, replacement=False, *, generator=None):  # noqa: A002
    """``num_samples`` category indices per row of ``input`` (unnormalized probabilities);
    without ``replacement`` each category at most once per row."""
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    p = np.asarray(input._data, dtype=np.float64)  # (sampling runs on the host)
    _check_probs(input._data, "multinomial")
    k = _length(num_samples, "multinomial", "num_samples")
    if k <= 0:
        raise RuntimeError(f"cannot sample n_sample <= 0 samples (got {k})")
    rows = p.reshape(-1, p.shape[-1])
    if not replacement and k > rows.shape[1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           f"replacement (n_sample={k}, {rows.shape[1]} categories)")
    rng = numpy_generator(generator)
    if replacement:
        cdf = np.cumsum(rows, axis=1)
        cdf /= cdf[:, -1:]
        u = rng.random((rows.shape[0], k))
        out = np.empty((rows.shape[0], k), dtype=np.int64)
        for r in builtins.range(rows.shape[0]):
            out[r] = np.searchsorted(cdf[r], u[r], side="right")
        out = np.minimum(out, rows.shape[1] - 1)
    else:
        # PyTorch's way: the k smallest Exp(1) / p (zero probabilities last, never first)
        with np.errstate(divide="ignore"):
            keys = rng.exponential(size=rows.shape) / rows
        out = np.argsort(keys, axis=1, kind="stable")[:, :k].astype(np.int64)
    return make_tensor(out.reshape(*p.shape[:-1], k))


def _zero_vjp(node, g, saved):
    # derivatives.yaml: poisson's derivative is zeros_like(grad): exact zeros that record
    # nothing (g * 0 requires grad under create_graph, and is nan for an inf g)
    return (zeros_like_grad(g),)


_POISSON = defop("poisson", lambda a, values: values, _zero_vjp, "PoissonBackward0", 1)


def poisson(input, generator=None):  # noqa: A002
    """Poisson samples with the rates ``input`` (same shape and dtype)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"poisson(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    rates = input._data
    if rates.dtype.kind != "f":
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for "
                                  f"'{scalar_type_name(rates.dtype)}'")
    host = np.asarray(rates, dtype=np.float64)
    if (host < 0).any() or np.isnan(host).any():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    values = numpy_generator(generator).poisson(host).astype(rates.dtype)
    return _POISSON(input, values)


def _binomial_vjp(node, g, saved):
    raise RuntimeError("derivative for aten::binomial is not implemented")


_BINOMIAL = defop("binomial", lambda c, p, values: values, _binomial_vjp, "NotImplemented", 2)


def binomial(count, prob, generator=None):
    """Binomial samples: ``count`` trials each with success probability ``prob``."""
    for t, arg, pos in ((count, "count", 1), (prob, "prob", 2)):
        if not isinstance(t, Tensor):
            raise TypeError(f"binomial(): argument '{arg}' (position {pos}) must be Tensor, "
                            f"not {type(t).__name__}")
    c, p = count._data, prob._data
    if c.dtype.kind != "f" or p.dtype.kind != "f":
        raise NotImplementedError(f"\"binomial_cpu\" not implemented for "
                                  f"'{scalar_type_name(c.dtype)}'")
    if c.shape != p.shape:
        raise RuntimeError(f"binomial(): count and prob must have the same shape, got "
                           f"{list(c.shape)} and {list(p.shape)}")
    n = np.asarray(c, dtype=np.float64)
    q = np.clip(np.asarray(p, dtype=np.float64), 0.0, 1.0)  # (PyTorch clamps too)
    values = numpy_generator(generator).binomial(n.astype(np.int64), q).astype(c.dtype)
    return apply_op(_BINOMIAL.op, (count, prob), (values,))


# ----------------------------------------------------------------- sequences


def _number(v, name, what):
    if isinstance(v, Tensor):
        if v.numel() != 1:
            raise RuntimeError(f"{name}(): argument '{what}' must be a number or a 0-d tensor "
                               f"(got shape {list(v.shape)})")
        return v.item()
    return v


def logspace(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None,
             requires_grad=False):
    """``steps`` values ``base ** x`` with x evenly spaced from ``start`` to ``end``."""
    start, end = _number(start, "logspace", "start"), _number(end, "logspace", "end")
    steps = _length(steps, "logspace", "steps")
    if steps < 0:
        raise RuntimeError(f"number of steps must be non-negative (logspace got {steps})")
    np_dtype = _numpy_dtype(dtype)
    values = np.power(float(base), np.linspace(float(start), float(end), steps))
    if np_dtype.kind in "iub":
        values = np.round(values) if np_dtype.kind != "b" else values
    return _finish(values.astype(np_dtype), dtype, requires_grad, device, "logspace")


def range(start=0, end=None, step=1, *, dtype=None, layout=None, device=None,  # noqa: A001
          requires_grad=False):
    """Deprecated (as in PyTorch): values from ``start`` to ``end`` INCLUSIVE, by ``step``,
    in the default float dtype; use ``arange`` (end exclusive)."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if end is None:
        start, end = 0, start
    start, end = _number(start, "range", "start"), _number(end, "range", "end")
    step = _number(step, "range", "step")
    if step == 0:
        raise RuntimeError("step must be nonzero (range)")
    for v in (start, end):
        if not math.isfinite(v):
            raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign "
                           f"(range({start}, {end}, {step}))")
    n = int(math.floor((end - start) / step)) + 1
    np_dtype = _numpy_dtype(dtype)
    values = start + np.arange(n, dtype=np.float64) * step
    return _finish(values.astype(np_dtype), dtype, requires_grad, device, "range")


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=False,
                  requires_grad=False):
    """A 0-d tensor holding the number ``s`` (the default float dtype unless ``dtype``)."""
    s = _number(s, "scalar_tensor", "s")
    if not isinstance(s, (bool, int, float)):
        raise TypeError(f"scalar_tensor(): argument 's' (position 1) must be Number, not "
                        f"{type(s).__name__}")
    np_dtype = _numpy_dtype(dtype)
    return _finish(np.asarray(s).astype(np_dtype), dtype, requires_grad, device,
                   "scalar_tensor")


# ----------------------------------------------------------------- window functions


def _window(name, formula):
    """A window function: ``formula(n, N, *params)`` on n = 0..N-1 (float64); ``periodic``
    computes it for N + 1 points and drops the last (for spectral analysis)."""

    def fn(window_length, periodic=True, *params, dtype=None, layout=None, device=None,
           pin_memory=False, requires_grad=False):
        n = _length(window_length, name)
        if periodic.__class__ is not bool:  # (PyTorch's parser: a bool, not a truthy number)
            raise TypeError(f"{name}(): argument 'periodic' (position 2) must be bool, not "
                            f"{type(periodic).__name__}")
        if n < 0:
            raise RuntimeError(f"{name} requires non-negative window_length, got "
                               f"window_length={n}")
        np_dtype = _numpy_dtype(dtype)
        if np_dtype.kind != "f":
            raise RuntimeError(f"{name} expects floating point dtypes, got: "
                               f"{dtypes.to_dtype(np_dtype)}")
        if n <= 1:
            values = np.ones(n)
        else:
            total = n + 1 if periodic else n
            values = formula(np.arange(total, dtype=np.float64), total, *params)[:n]
        return _finish(values.astype(np_dtype), dtype, requires_grad, device, name)

    fn.__name__ = name
    return fn


def _cosine(n, total, *coefs):
    x = 2 * math.pi * n / (total - 1)
    return builtins.sum(c * np.cos(k * x) * (-1) ** k for k, c in enumerate(coefs))


_hann = _window("hann_window", lambda n, total: _cosine(n, total, 0.5, 0.5))
_hamming = _window("hamming_window",
                   lambda n, total, alpha=0.54, beta=0.46: _cosine(n, total, alpha, beta))
_blackman = _window("blackman_window", lambda n, total: _cosine(n, total, 0.42, 0.5, 0.08))
_bartlett = _window("bartlett_window",
                    lambda n, total: 1 - np.abs(2 * n / (total - 1) - 1))
_kaiser = _window("kaiser_window", lambda n, total, beta=12.0: np.i0(
    beta * np.sqrt(np.clip(1 - ((n - (total - 1) / 2) / ((total - 1) / 2)) ** 2, 0, None)))
    / np.i0(beta))


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    """The Hann window: 0.5 - 0.5 cos(2 pi n / (N - 1))."""
    return _hann(window_length, periodic, dtype=dtype, device=device,
                 requires_grad=requires_grad)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, pin_memory=False, requires_grad=False):
    """The Hamming window: alpha - beta cos(2 pi n / (N - 1))."""
    return _hamming(window_length, periodic, alpha, beta, dtype=dtype, device=device,
                    requires_grad=requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """The Blackman window: 0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."""
    return _blackman(window_length, periodic, dtype=dtype, device=device,
                     requires_grad=requires_grad)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """The Bartlett (triangular) window: 1 - |2n / (N - 1) - 1|."""
    return _bartlett(window_length, periodic, dtype=dtype, device=device,
                     requires_grad=requires_grad)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, pin_memory=False, requires_grad=False):
    """The Kaiser window: I0(beta sqrt(1 - ((n - N/2) / (N/2))^2)) / I0(beta)."""
    return _kaiser(window_length, periodic, beta, dtype=dtype, device=device,
                   requires_grad=requires_grad)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

for _fn in (randperm, poisson, binomial, logspace, range, scalar_tensor, hann_window,
            hamming_window, blackman_window, bartlett_window, kaiser_window):
    register(_fn, method=False, differentiable=_fn is poisson)
register(multinomial, differentiable=False,
         signature="input, num_samples, replacement=False, *, generator=None")
