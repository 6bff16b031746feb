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


def round_into(xp, wide, buffer, dtype):
    """``wide`` rounded to ``dtype``, written into ``buffer`` (a spent temporary of that
    dtype and shape) where there is one: a fresh 4 MB result cost more than the rounding
    (page faults: 2 ms for a 1000 x 1000 float32 array on a test machine)."""
    if isinstance(wide, xp.ndarray) and wide.dtype == dtype:
        return wide  # (nothing to round: a float64 input's)
    if (isinstance(buffer, xp.ndarray) and buffer.dtype == dtype
            and buffer.shape == getattr(wide, "shape", ())):
        buffer[...] = wide
        return buffer
    return xp.asarray(wide, dtype=dtype)  # (an array, even 0-d)


def times_sigmoid(xp, g, x):
    """``g * sigmoid(x)`` for float32 / float16 arrays of one dtype (the derivatives of
    log_sigmoid and softplus), the sigmoid and the product in float64 and rounded once:
    a float32 sigmoid, then a float32 product, were up to 1.3 ulp off the truth; None for
    other operands (Tensors under create_graph, mixed dtypes, a batch of cotangents), which
    take the general composite."""
    dtype = getattr(x, "dtype", None)
    if not (isinstance(x, xp.ndarray) and type(g) is type(x) and g.dtype == dtype
            and g.shape == x.shape and dtype.kind == "f" and dtype.itemsize < 8):
        return None
    # sigmoid(x) = exp(min(x, 0)) / (1 + exp(-|x|)): e^x / (1 + e^x) below 0, 1 / (1 +
    # e^-x) above, neither overflowing, without a select (NumPy's where is slow)
    neg = xp.minimum(x, 0)
    out = xp.exp(neg, dtype=xp.float64)
    den = xp.array(x, dtype=xp.float64)  # (an array, even 0-d: the steps in place)
    xp.abs(den, out=den)
    xp.negative(den, out=den)
    xp.exp(den, out=den)
    den += 1
    out /= den
    out *= g
    return round_into(xp, out, neg, dtype)
