"""``x.view(dtype)``: the same memory read as another dtype (Tensor.view's dtype overload).

Not differentiable (PyTorch's view.dtype has no derivative): the result never requires
grad, has no grad_fn and is a leaf, even for the same dtype; it shares ``x``'s memory and
version counter (a non-differentiable view, as ``detach()``), so an in-place change
through it bumps ``x``'s version, and backward checks see it.

Same element size: every shape and layout, strides kept.  A different size reinterprets
the last dimension (PyTorch's rules and checks, in its order): a 0-d tensor refuses; the
last dim must have stride 1; growing the element size ``r`` times needs the last size, the
storage offset and the other strides divisible by ``r``, and divides them by ``r``;
shrinking multiplies them (in bytes nothing moves, so NumPy's own ``view`` of an array
whose last axis is contiguous gives exactly this layout).
"""

from __future__ import annotations

from .. import dtypes
from ..backend import namespace
from ._apply import defop
from ._errors import scalar_type_name


def _address(a) -> int:
    try:
        return a.__array_interface__["data"][0]
    except AttributeError:  # CuPy
        return a.data.ptr


def _storage_offset(a) -> int:
    """In elements of ``a``'s dtype from the start of the memory it views (as
    ``Tensor.storage_offset()``)."""
    root = a
    while getattr(root, "base", None) is not None:
        root = root.base
    return (_address(a) - _address(root)) // a.itemsize


def _strides(a):
    """``a``'s strides in elements, as PyTorch's: an empty tensor that retrograd made with
    all strides 0 has PyTorch's contiguous ones (each the product of the later sizes, a
    size 0 counting as 1), on which the checks below depend."""
    if a.size == 0 and not any(a.strides):
        out, step = [], 1
        for n in reversed(a.shape):
            out.append(step)
            step *= max(n, 1)
        return out[::-1]
    return [s // a.itemsize for s in a.strides]


def _view_dtype_fwd(a, np_dtype):
    old, new = a.itemsize, np_dtype.itemsize
    if old == new:
        return _empty_strides(a.view(np_dtype), _strides(a)) if a.size == 0 else \
            a.view(np_dtype)
    what = (f"to view {scalar_type_name(a.dtype)} as {scalar_type_name(np_dtype)} (different "
            "element sizes)")
    if a.ndim == 0:
        raise RuntimeError(f"self.dim() cannot be 0 {what}; view a 1-d tensor (x.reshape(1))")
    strides = _strides(a)
    ratio = new // old
    if new > old:
        if a.shape[-1] % ratio:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got "
                               f"{a.shape[-1]}")
        offset = _storage_offset(a)
        if offset % ratio:
            raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what}, "
                               f"but got {offset}; view a clone() instead")
    if strides[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}; view a "
                           "contiguous() copy instead")
    if new > old:
        for i, s in enumerate(strides[:-1]):
            if s % ratio:
                raise RuntimeError(f"self.stride({i}) must be divisible by {ratio} {what}, but "
                                   f"got {s}; view a contiguous() copy instead")
    out = a.view(np_dtype)
    if a.size == 0:
        return _empty_strides(out, [s * old // new for s in strides[:-1]] + [1])
    return out


def _empty_strides(out, steps):
    # an empty result reads no memory: give it PyTorch's strides (those checked, rescaled),
    # not the zeros retrograd's empty tensors have
    return namespace(out).lib.stride_tricks.as_strided(out, out.shape,
                                                       [s * out.itemsize for s in steps])


# (view=True: the result shares x's version counter; differentiable=False: no node, no
# tangent, the result a leaf that does not require grad)
_view_dtype = defop("view", _view_dtype_fwd, None, None, 1, view=True, differentiable=False)


def view_dtype(x, dtype):
    """``x.view(dtype)``: ``x``'s memory read as ``dtype`` (see the module's notes)."""
    return _view_dtype(x, dtypes.to_dtype(dtype).numpy)
