"""Assembling the package: the layers below learn what they need from the layers above.

Imports point one way (``tests/test_architecture.py`` fails on any cycle)::

    dtypes, backend, random, _formatting           arrays, dtypes, random numbers
    autograd.grad_mode, .graph, .engine            the graph and the one backward loop
    tensor                                         Tensor: data + autograd metadata
    ops._apply, ops.<kind>, ops                    every op, each registered (ops/registry.py)
    _creation; autograd.frontend, .function...     tensor(), zeros(); backward(), grad()
    viz                                            draw(): graphs as DOT
    _assembly (this module), special, nn           built from the registry
    __init__                                       re-exports only

Running this module once (``retrograd/__init__`` imports it) attaches every registered op
to Tensor as a method, operator or in-place form, hands tensor.py and the engine the few
functions of the layers above them that they call, and exposes the registry's top-level
functions (``retrograd.add`` ...) as this module's names, which ``__init__`` re-exports.
"""

from __future__ import annotations

from . import _creation, ops
from .autograd import engine, frontend
from .autograd.tracing import Trace
from .ops import registry
from .ops.changed_views import regenerate_view
from .ops.inplace import copy_
from .ops.layout import unbind
from .ops.shape import sum_to_size, sum_to_size_op
from .tensor import Tensor, above, make_tensor
from .viz.forward import draw_trace

registry.install(Tensor)

above.legacy_new = _creation.legacy_new
above.tensor = _creation.tensor
above.zeros = _creation.zeros
above.ones = _creation.ones
above.empty = _creation.empty
above.full = _creation.full
above.rebuild = _creation._rebuild
above.backward = frontend.backward
above.unbind = unbind
above.regenerate_view = regenerate_view

engine.above.Tensor = Tensor
engine.above.make_tensor = make_tensor
engine.above.sum_to_size = sum_to_size
engine.above.sum_to_size_op = sum_to_size_op
engine.above.copy_ = copy_

Trace.draw = draw_trace

_functions = registry.namespace("torch")
globals().update(_functions)
__all__ = sorted(_functions)
del ops
