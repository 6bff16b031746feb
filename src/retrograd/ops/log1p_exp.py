"""``log(1 + exp(-|x|))``, the core of log_sigmoid, softplus and the logit losses, evaluated
in float64 for a float32 / float16 argument.

NumPy's float32 ``exp`` and ``log1p`` are each a few ulp off, differently per CPU (on
AVX-512 log1p(exp(-1)) is 2 ulp below AVX2's), while PyTorch's (Sleef, within 1 ulp) round
nearly correctly: float32 log_sigmoid, softplus and binary_cross_entropy_with_logits were up
to 2.6 ulp from the float64 truth and machine-dependent.  In float64, with one rounding at
the caller's end, a float32 result is the correctly rounded one on every CPU (so equal to
PyTorch's wherever PyTorch's is).  The float64 loops cost about as much as the float32 ones.
"""

from __future__ import annotations


def widened(xp, x):
    """``x`` as float64 if it is a narrower float array (a new array), else ``x`` itself."""
    if x.dtype.kind == "f" and x.dtype.itemsize < 8:
        return x.astype(xp.float64)
    return x


def log1p_exp_neg_abs(xp, x, wide=False):
    """``log(1 + exp(-|x|))`` (in (0, log 2], never overflows) evaluated in float64: the
    float64 array itself with ``wide=True``, for a caller that rounds once at its end, else
    rounded once to ``x``'s dtype."""
    narrow = x.dtype.kind == "f" and x.dtype.itemsize < 8
    # (a new array, even 0-d, and the steps in place in it: a fresh 8 MB result per step
    # made a float64 1000 x 1000 call three times slower)
    out = xp.array(x, dtype=xp.float64 if narrow else x.dtype)
    xp.abs(out, out=out)
    xp.negative(out, out=out)
    xp.exp(out, out=out)
    xp.log1p(out, out=out)
    return out.astype(x.dtype) if narrow and not wide else out
