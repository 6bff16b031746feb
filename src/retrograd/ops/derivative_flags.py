"""Derivative flags under ``create_graph``: what a first derivative requires grad from.

PyTorch computes a derivative with one backward op (``convolution_backward(grad_output,
input, weight, ...)``, ``native_layer_norm_backward``...) that takes every tensor the
formula might read; under ``create_graph`` its results require grad whenever any of those
tensors does, even a result that does not depend on it (a convolution's weight gradient
does not depend on the weight).  retrograd writes derivatives with the ops they need, so
such a result would not require grad, and a second backward through it raised where
PyTorch's runs.  :func:`tie` gives it PyTorch's flags, with PyTorch's second derivative for
those extra inputs: nothing (its double backward leaves them undefined) or zeros
(``self: zeros_like(self)``).
"""

from __future__ import annotations

from ..autograd.grad_mode import state
from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._apply import node_class, record

_NODES: dict = {}


def _nothing_vjp(node, g, saved):
    # (the result's own gradient path is its old graph, which it had none of)
    return (None,) * len(node.next)


def _zeros_vjp(node, g, saved):
    # the result's gradient passes through; the extra inputs get exact zeros
    # (arrays in a first-order backward, tensors under create_graph)
    if isinstance(g, Tensor):
        xp = namespace(g._data)
        return (g,) + tuple(make_tensor(xp.zeros(shape, dtype)) for shape, dtype in node.params)
    xp = namespace(g)
    return (g,) + tuple(xp.zeros(shape, dtype) for shape, dtype in node.params)


def _node(name, zeros):
    cls = _NODES.get((name, zeros))
    if cls is None:
        cls = _NODES[(name, zeros)] = node_class(name, _zeros_vjp if zeros else _nothing_vjp)
    return cls


def tie(result, inputs, name, zeros=False):
    """``result`` (a derivative, or None) recorded as depending on ``inputs`` too.

    Only under ``create_graph`` (``result`` a Tensor and grad mode on; a first-order
    derivative on arrays is returned as is).  ``zeros=False``: where ``result`` does not
    require grad and one of ``inputs`` does, a ``name`` node from those inputs that gives
    them no gradient.  ``zeros=True``: whenever one of ``inputs`` requires grad, a ``name``
    node over ``result`` and them, passing the gradient to ``result``'s graph and zeros to
    them.  ``name`` is PyTorch's node of the derivative (``ConvolutionBackwardBackward0``)."""
    if not isinstance(result, Tensor) or not state.enabled:
        return result
    live = tuple(x for x in inputs if isinstance(x, Tensor) and x._requires_grad)
    if not live:
        return result
    if zeros:
        out = make_tensor(result._data)
        params = tuple((tuple(x.shape), x._data.dtype) for x in live)
        record(_node(name, True), (result,) + live, out, params)
        return out
    if result._requires_grad:
        return result
    out = make_tensor(result._data)
    record(_node(name, False), live, out, ())
    return out
