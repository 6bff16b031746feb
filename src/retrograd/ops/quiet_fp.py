"""Forwards that meet inf and nan on the way to PyTorch's answer, without NumPy's warnings.

PyTorch computes ``inf - inf``, ``0 * inf``, an overflowing ``exp`` silently; NumPy
prints a RuntimeWarning ("invalid value encountered in multiply") for the same step,
which a user reads as a bug deep in NumPy.  :func:`quiet_fp` runs one op's forward (or a
composite's whole body) with those warnings off; the values are NumPy's, unchanged.

It costs a fraction of a microsecond a call (backend.quiet_fp_enter), so it wraps
composite ops and whole kernels (softmax, conv, a loss), never the one-ufunc elementwise
ops' fast paths (``log``, ``mul``...: ops/_apply.py, where it would be a tenth of a small
call) nor matmul/linear, which keep NumPy's warnings.  Backward passes are
quiet as a whole (one errstate per pass: autograd/engine.py).  CuPy does not warn, and
NumPy's errstate does nothing to its kernels.
"""

from __future__ import annotations

import functools

import numpy as np

from ..backend import quiet_fp_enter, quiet_fp_exit


def quiet_fp(fn):
    """``fn``, run with NumPy's divide, overflow and invalid warnings off
    (backend.quiet_fp_enter: on NumPy 2 a third of an ``errstate``'s cost).

    Examples
    --------
    >>> import numpy as np
    >>> quiet_fp(lambda a: a - a)(np.array([np.inf]))
    array([nan])
    """
    # (a private name: _errors.calling_op names the outermost public function of the op
    # modules on the stack in its messages, which must stay the op's, not this wrapper's)
    @functools.wraps(fn)
    def _quiet(*args, **kwargs):
        token = quiet_fp_enter()
        try:
            return fn(*args, **kwargs)
        finally:
            quiet_fp_exit(token)
    return _quiet


def mean_of(a, axis=None, keepdims=False):
    """``a.mean(axis, keepdims)`` of an array, and PyTorch's nan where a slice averaged is
    empty, without NumPy's "Mean of empty slice" warning (a plain ``warnings.warn``, which
    no errstate silences): the empty case, rare, is computed as ``sum / 0``.

    Examples
    --------
    >>> import numpy as np
    >>> float(mean_of(np.zeros(0)))
    nan
    """
    if a.size:
        return a.mean(axis=axis, keepdims=keepdims)
    with np.errstate(divide="ignore", invalid="ignore"):
        total = a.sum(axis=axis, keepdims=keepdims)
        return total / total.dtype.type(0)
