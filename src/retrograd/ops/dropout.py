"""Dropout variants: dropout1d/2d/3d (whole channels), alpha_dropout and
feature_alpha_dropout (for SELU networks), and PyTorch's top-level forms (``dropout``,
``feature_dropout``, ``alpha_dropout``, ``feature_alpha_dropout`` and their ``_`` in-place
forms).  ``nn.functional.dropout`` itself lives in ops/nn.py.

As PyTorch's ``_dropout_impl``: the mask is drawn once (retrograd's generator, so
``retrograd.manual_seed`` repeats it), turned into a constant ``noise`` tensor, and the
result is ``input * noise`` (MulBackward0), plus a constant shift ``b`` for alpha dropout
(AddBackward0).  The derivative is therefore exactly ``grad * noise``, the same mask as the
forward's, and every order of derivative comes from mul and add.  Random values differ from
PyTorch's (another generator); their statistics and structure do not.
"""

from __future__ import annotations

import math
import warnings

from ..backend import namespace
from ..tensor import make_tensor
from ._errors import scalar_type_name

#: SELU's alpha * scale: alpha dropout sets dropped units to -ALPHA (SELU's negative limit)
ALPHA = 1.7580993408473766


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_impl(x, p, train, feature, alpha, inplace):
    """PyTorch's ``_dropout_impl``: ``x`` itself when nothing is dropped."""
    _check_p(p)
    data = x._data
    if p == 0 or not train or data.size == 0:
        return x
    xp = namespace(data)
    if p == 1:  # everything dropped: x * 0 (still recorded, as PyTorch)
        zero = make_tensor(xp.zeros((), data.dtype))
        return x.mul_(zero) if inplace else x * zero
    if feature and data.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input (it "
                           "drops whole channels of (N, C, *)); use dropout for 1-d inputs")
    if data.dtype.kind != "f":
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{scalar_type_name(data.dtype)} (dropout scales by a float; "
                           "convert the input with x.float() first)")
    from ..random import generator

    # one draw per element, or per channel (broadcast over the spatial dimensions)
    shape = data.shape if not feature else data.shape[:2] + (1,) * (data.ndim - 2)
    keep = xp.asarray(generator().random(shape) >= p)
    noise = keep.astype(data.dtype)
    if not alpha:
        noise /= 1 - p
        return x.mul_(make_tensor(noise)) if inplace else x * make_tensor(noise)
    # alpha dropout: dropped units become -ALPHA, then an affine map a * y + b that keeps
    # the mean 0 and variance 1 of SELU activations
    a = 1.0 / math.sqrt((ALPHA * ALPHA * p + 1) * (1 - p))
    b = make_tensor((noise - 1) * (ALPHA * a) + ALPHA * a * p)
    noise *= a
    if inplace:
        return x.mul_(make_tensor(noise)).add_(b)
    return x * make_tensor(noise) + b


def _channel_dropout(x, p, training, inplace, batched):
    """feature dropout of ``x``, unbatched inputs given a batch dimension of 1 first."""
    if not batched:
        x = x.unsqueeze_(0) if inplace else x.unsqueeze(0)
    out = _dropout_impl(x, p, training, True, False, inplace)
    if not batched:
        out = out.squeeze_(0) if inplace else out.squeeze(0)
    return out


def dropout1d(input, p=0.5, training=True, inplace=False):  # noqa: A002 - PyTorch's names
    """Zero whole channels of ``(N, C, L)`` (or unbatched ``(C, L)``) with probability ``p``,
    scaling the rest by ``1 / (1 - p)``.

    Examples
    --------
    >>> import retrograd as T
    >>> x = T.ones(1, 2, 3)
    >>> T.nn.functional.dropout1d(x, 0.5, training=False) is x
    True
    """
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs).")
    return _channel_dropout(input, p, training, inplace, input.ndim == 3)


def _warn_rank(name, ndim, spatial):
    warnings.warn(
        f"{name}: Received a {ndim}-D input to {name}, which is deprecated and will result in "
        "an error in a future release. To retain the behavior and silence this warning, please "
        f"use dropout instead. Note that {name} exists to provide channel-wise dropout on inputs "
        f"with {spatial} spatial dimensions, a channel dimension, and an optional batch "
        f"dimension (i.e. {spatial + 1}D or {spatial + 2}D inputs).", UserWarning, stacklevel=3)


def dropout2d(input, p=0.5, training=True, inplace=False):  # noqa: A002
    """Zero whole channels of ``(N, C, H, W)`` with probability ``p``, scaling the rest by
    ``1 / (1 - p)``.  A 3-d input is taken as ``(N, C, L)`` (PyTorch's legacy, with its
    warning)."""
    _check_p(p)
    ndim = input.ndim
    if ndim not in (3, 4):
        _warn_rank("dropout2d", ndim, 2)
    if ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            UserWarning, stacklevel=2)
    return _channel_dropout(input, p, training, inplace, True)


def dropout3d(input, p=0.5, training=True, inplace=False):  # noqa: A002
    """Zero whole channels of ``(N, C, D, H, W)`` (or unbatched ``(C, D, H, W)``) with
    probability ``p``, scaling the rest by ``1 / (1 - p)``."""
    _check_p(p)
    ndim = input.ndim
    if ndim not in (4, 5):
        _warn_rank("dropout3d", ndim, 3)
    return _channel_dropout(input, p, training, inplace, ndim == 5)


def alpha_dropout(input, p=0.5, training=False, inplace=False):  # noqa: A002
    """Dropout for SELU networks: dropped elements take SELU's negative saturation value and
    an affine correction keeps the mean and variance of the input (0 and 1 for SELU's).

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.functional.alpha_dropout(T.ones(2), 1.0, training=True)
    tensor([0., 0.])
    """
    return _dropout_impl(input, p, training, False, True, inplace)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):  # noqa: A002
    """:func:`alpha_dropout` of whole channels of ``(N, C, *)``."""
    return _dropout_impl(input, p, training, True, True, inplace)


# ----------------------------------------------------------------- PyTorch's top-level forms


def _top_level(name, feature, alpha, inplace):
    def fn(input, p, train):  # noqa: A002 - ATen's names
        if p < 0 or p > 1:  # (ATen's check: RuntimeError, unlike nn.functional's ValueError)
            raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p} "
                               f"({name})")
        return _dropout_impl(input, p, train, feature, alpha, inplace)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``retrograd.{name}(input, p, train)``: PyTorch's top-level "
                  f"{'feature ' if feature else ''}{'alpha ' if alpha else ''}dropout"
                  f"{' in place' if inplace else ''}.")
    return fn


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

for _fn in (dropout1d, dropout2d, dropout3d, alpha_dropout, feature_alpha_dropout):
    register(_fn, function=False, method=False, functional=(_fn.__name__,))
for _feature, _stem in ((False, "dropout"), (True, "feature_dropout")):
    for _alpha in (False, True):
        for _inplace in (False, True):
            _name = ("alpha_" if _alpha else "") + _stem + ("_" if _inplace else "")
            if _feature and _alpha:
                _name = "feature_alpha_dropout" + ("_" if _inplace else "")
            register(_top_level(_name, _feature, _alpha, _inplace), _name, method=False)
