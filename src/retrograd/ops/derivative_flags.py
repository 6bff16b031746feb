"""Derivative flags under ``create_graph``: what a first derivative requires grad from.

PyTorch computes a derivative with one backward op (``convolution_backward(grad_output,
input, weight, ...)``, ``native_layer_norm_backward``...) that takes every tensor the
formula might read; under ``create_graph`` its results require grad whenever any of those
tensors does, even a result that does not depend on it (a convolution's weight gradient
does not depend on the weight).  retrograd writes derivatives with the ops they need, so
such a result would not require grad, and a second backward through it raised where
PyTorch's runs.  :func:`tie` gives it PyTorch's flags, with PyTorch's second derivative for
those extra inputs: nothing (its double backward leaves them undefined).
"""

from __future__ import annotations

from ..autograd.grad_mode import state
from ..tensor import Tensor, make_tensor
from ._apply import node_class, record

_NODES: dict = {}


def _nothing_vjp(node, g, saved):
    # (the result's own gradient path is its old graph, which it had none of)
    return (None,) * len(node.next)


def _node(name):
    cls = _NODES.get(name)
    if cls is None:
        cls = _NODES[name] = node_class(name, _nothing_vjp)
    return cls


def tie(result, inputs, name):
    """``result`` (a derivative, or None) recorded as depending on ``inputs`` too.

    Only under ``create_graph`` (``result`` a Tensor and grad mode on; a first-order
    derivative on arrays is returned as is), and only where ``result`` does not require grad
    and one of ``inputs`` does: then a ``name`` node from those inputs that gives them no
    gradient (a derivative that already has a graph is returned as is: no node above it).
    ``name`` is PyTorch's node of the derivative (``ConvolutionBackwardBackward0``).

    (Derivatives whose PyTorch op takes an input it does not read and gives it zeros are one
    record each with that input as an edge instead: nll_loss's, prelu's weight's.)"""
    if not isinstance(result, Tensor) or not state.enabled or result._requires_grad:
        return result
    live = tuple(x for x in inputs if isinstance(x, Tensor) and x._requires_grad)
    if not live:
        return result
    out = make_tensor(result._data)
    record(_node(name), live, out, ())
    return out
