"""``retrograd.autograd.forward_ad``: forward-mode AD with PyTorch's API.

Inside ``with dual_level():``, ``make_dual(x, t)`` gives a tensor whose every use also
computes a tangent (a Jacobian-vector product), read with ``unpack_dual``.  As in PyTorch
2.13, levels do not nest (entering a second one is a RuntimeError) and a dual does not
require grad because of its tangent.  How ops propagate tangents: ``retrograd.ops._jvp``.

Examples
--------
>>> import retrograd as T
>>> import retrograd.autograd.forward_ad as fwAD
>>> with fwAD.dual_level():
...     x = fwAD.make_dual(T.tensor(1.0), T.tensor(1.0))
...     fwAD.unpack_dual((2 * x) ** 3).tangent
tensor(24.)
"""

from __future__ import annotations

from collections import namedtuple

from .forward_state import fw, set_tangent, tangent_of
from .forward_trace import report_dual, report_unpack

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]


class _Level:
    """The token of one open level (tangents made at it carry it)."""

    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index

    def __repr__(self):
        return f"<forward AD level {self.index}>"


def enter_dual_level() -> int:
    """Open a dual level and return its number (0).  Levels do not nest, as in PyTorch."""
    if fw.level is not None:
        raise RuntimeError(
            "Nested forward mode AD is not supported at the moment (a dual level is already "
            "open: exit it with exit_dual_level(), or leave its `with dual_level():` block, "
            "before entering another)")
    fw.index = 0
    fw.duals = []
    fw.prune_at = 1024
    fw.level = _Level(fw.index)
    fw.active = True
    return fw.index


def exit_dual_level(*, level=None) -> None:
    """Close the open dual level; every tangent made at it is dropped."""
    if level is None:
        level = fw.index if fw.level is not None else -1
    if level < 0:
        raise RuntimeError("Dual level must be a positive number. (No dual level is open: "
                           "exit_dual_level() closes the one dual_level() opened.)")
    if fw.level is None or level != fw.index:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported. (Open level: "
            f"{fw.index if fw.level is not None else 'none'}; given: {level}.)")
    for ref in fw.duals:
        t = ref()
        if t is not None and t._extra is not None and t._extra.fw_grad is not None \
                and t._extra.fw_grad[0] is fw.level:
            t._extra.fw_grad = None
    fw.duals = []
    fw.level = None
    fw.active = False


def _check_level(level, what):
    if level is None:
        return
    if fw.level is None or level != fw.index:
        raise RuntimeError(f"Invalid level given to {what} (level {level}; the open level is "
                           f"{fw.index if fw.level is not None else 'none'})")


def _alias(tensor):
    """A view of ``tensor`` (its graph position and memory), with no tangent."""
    prev = fw.active
    fw.active = False
    try:
        return tensor.view_as(tensor)
    finally:
        fw.active = prev


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` whose tangent is ``tangent`` (same shape), at the open level."""
    from ..tensor import Tensor

    if fw.level is None:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first.")
    if not isinstance(tensor, Tensor):
        raise TypeError(f"make_dual(): argument 'tensor' must be Tensor, not "
                        f"{type(tensor).__name__}")
    if not isinstance(tangent, Tensor):
        raise AttributeError(f"'{type(tangent).__name__}' object has no attribute "
                             "'is_floating_point' (make_dual's tangent must be a Tensor)")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(
            f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    _check_level(level, "_make_dual")
    if tangent_of(tensor) is not None:
        raise RuntimeError(
            f"Making a dual Tensor based on a Tensor that already has a forward gradient at "
            f"the same level {fw.index} is not supported.")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}.")
    dual = _alias(tensor)
    set_tangent(dual, tangent)
    report_dual(tensor, dual, tangent)  # to an active autograd.trace()
    return dual


UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = "A dual tensor's ``primal`` (a view, no tangent) and ``tangent``."


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)`` of ``tensor`` at the open level (tangent None if it has none)."""
    from ..tensor import Tensor

    if fw.level is None:
        return UnpackedDualTensor(tensor, None)
    if not isinstance(tensor, Tensor):
        raise TypeError(f"_unpack_dual(): argument 'dual' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    _check_level(level, "_fw_primal")
    if not fw.active:  # (suspended: inside a custom Function's forward or jvp, where
        # PyTorch's forward grad mode is off and no tangent is seen)
        return UnpackedDualTensor(tensor, None)
    tangent = tangent_of(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    report_unpack(tensor, tangent)
    return UnpackedDualTensor(_alias(tensor), tangent)


class dual_level:  # noqa: N801 - PyTorch's name
    """``with dual_level():`` opens a level (``as`` gives its number) and closes it after."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False
