"""``nn.utils.init``: build a module whose parameters are left for the caller to set."""

from __future__ import annotations

import inspect

from ..module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` with parameters and buffers uninitialised (fresh
    storage, as ``empty``): for modules whose weights are loaded or set right after.

    The class must accept a ``device`` argument (PyTorch's requirement).  PyTorch builds
    on its ``meta`` device so the default initialisation costs nothing; retrograd has no
    meta device, so it builds normally, then ``to_empty`` replaces the values: the result
    is the same, only the saving in time is missing.

    Examples
    --------
    >>> from retrograd import nn
    >>> m = nn.utils.skip_init(nn.Linear, 5, 1)
    >>> tuple(m.weight.shape), m.weight.requires_grad
    ((1, 5), True)
    """
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    return module_cls(*args, **kwargs).to_empty(device=final_device)
