"""How a node is recorded: the Node classes of ops and the graph edges of their inputs.

``defop``'s callers (ops/_apply.py) build the common one-node case inline; this module holds
the general recording that they, ``apply_op`` and the ops that build their node themselves
(several outputs: split, the decompositions; conv, pooling, linalg_ldl...) share, and the
rule for integer results.  ``saves`` (``NOTHING``, ``INPUTS``, ``OUTPUT``, ``BOTH``) says
what a node keeps for its derivative; see ops/_apply.py's module doc.
"""

from __future__ import annotations

from .. import dtypes
from ..autograd.grad_mode import record_extras, state
from ..autograd.graph import (
    LEAF_SEQUENCE_NR, Node, SavedOutput, accumulator_of, check_saveable, next_sequence_nr,
    on_record,
)
from ..tensor import Tensor, adopted_views, rederive_view
from ._out_rules import _dtype_name

NOTHING, INPUTS, OUTPUT, BOTH = 0, 1, 2, 3

_new = object.__new__


def node_class(name: str, vjp, saves: int = NOTHING, saved_for=None) -> type:
    """A Node subclass called ``name`` (PyTorch's grad_fn name) whose derivative is ``vjp``."""
    return type(name, (Node,), {"__slots__": (), "vjp": staticmethod(vjp), "saves": saves,
                                "saved_for": staticmethod(saved_for) if saved_for else None,
                                **_sequence_of(name)})


# PyTorch's NotImplemented node (an op with no derivative: 1.5 % x, heaviside, floor_divide,
# binomial...) is made with the highest sequence number, as AccumulateGrad, so its engine
# runs it (and raises) as soon as it is ready, before sibling nodes made later: a leaf
# behind those gets no .grad (seed 21734783).  The recording sites' ``node.seq = ...`` then
# sets nothing.
_LAST_TO_BE_MADE = property(lambda node: LEAF_SEQUENCE_NR, lambda node, seq: None)


def _sequence_of(name: str) -> dict:
    return {"seq": _LAST_TO_BE_MADE} if name == "NotImplemented" else {}


def edge_of(x):
    """The node a gradient for tensor ``x`` must be sent to, or None if it needs none."""
    node = x._grad_fn
    if node is not None:
        if adopted_views:  # PyTorch re-derives an adopted view here, or refuses it
            rederive_view(x, node)
        return node
    if x._requires_grad:
        return accumulator_of(x)
    return None


def _fix_dtype(rule: str, inputs, result):
    """Cast NumPy's result where PyTorch's promotion gives another dtype."""
    if rule == "same" or rule == "bool":
        return result
    want = dtypes.result_type(*[x._data if isinstance(x, Tensor) else x for x in inputs])
    if rule == "float" and not want.is_floating_point:
        want = dtypes.get_default_dtype()
    if result.dtype != want.numpy:
        result = result.astype(want.numpy)
    return result


def _leaf_edge(x):
    """The AccumulateGrad of a leaf that requires grad (its weakref is usually still alive)."""
    ref = x._acc
    if ref is not None:
        acc = ref()
        if acc is not None:
            return acc
    return accumulator_of(x)


def _new_node(node_cls, nxt, nrs, params, data):
    """A node of ``node_cls`` for a float result ``data``; ``saved`` is set by the caller."""
    node = _new(node_cls)
    node.seq = next_sequence_nr()
    node.next = nxt
    node.next_nr = nrs
    node.params = params
    node.hooks = None
    node.versions = None
    node.out_shape = data.shape
    node.out_dtype = data.dtype
    return node


# PyTorch's _to_copy (to, type_as, long(), a copy=True to the same dtype) marks an integer or
# bool result not differentiable: nothing recorded and nothing refused, where the other ops
# refuse (fuzz seed 14813907: ``v.type_as(int64)`` after ``v[1] = w.sum()``)
_NOT_DIFFERENTIABLE_INT = frozenset(("to", "ToCopyBackward0"))
# (the node's name, or the op's where its caller passes that)
_NO_DERIVATIVE = frozenset(("NotImplemented", "heaviside", "floor_divide"))


def integer_grad(name, inputs, data) -> bool:
    """Whether a differentiable op with an integer or bool result ``data`` records a node.

    An integer or bool tensor can come to require grad (``v[0:1] = w.sum()``, as PyTorch).
    PyTorch then records an in-place op on it (MulBackward0 for ``mul_``: ops/inplace.py sets
    ``state.int_inplace`` around it) but refuses an out-of-place one (fuzz seeds 9713483,
    9427681); other integer results (argmax of a float tensor...) record nothing."""
    if data.dtype.kind == "f" or not any(
            isinstance(x, Tensor) and x._requires_grad and x._data.dtype.kind != "f"
            for x in inputs):
        return False
    if name in _NO_DERIVATIVE:
        # floor_divide, heaviside (PyTorch's ops without a derivative): an integer result
        # records nothing and refuses nothing, in place too (the tensor keeps its grad_fn)
        return False
    if getattr(state, "int_inplace", False):
        return True
    if name in _NOT_DIFFERENTIABLE_INT:
        return False
    raise RuntimeError(
            f"Autograd not support dtype: {_dtype_name(data.dtype)} ({name} of an integer or "
            "bool tensor that requires grad, which only a write of a tensor requiring grad "
            "makes: gradients need a floating dtype; detach() it or convert it first)")


def record(node_cls, inputs, out, params, extras=()):
    """Attach a new ``node_cls`` node to ``out`` (a fresh tensor) for ``inputs``."""
    data = out._data
    if data.dtype.kind != "f" and not getattr(node_cls, "any_dtype", False) and \
            not integer_grad(node_cls.__name__, inputs, data):
        return None  # integer and bool results never require grad (argmax, comparisons)
    nxt = []
    nrs = None
    for i, x in enumerate(inputs):
        if isinstance(x, Tensor):
            nxt.append(edge_of(x))
            if x._nr:
                nrs = nrs or [0] * len(inputs)
                nrs[i] = x._nr
        else:
            nxt.append(None)
    node = _new_node(node_cls, tuple(nxt), nrs, params, data)
    saves = node_cls.saves
    if saves == NOTHING:
        node.saved = extras
    else:
        saved = list(inputs) if saves & INPUTS else []
        if saves & INPUTS and node_cls.saved_for is not None:
            keep = node_cls.saved_for(tuple(n is not None for n in nxt))
            saved = [x if k else None for x, k in zip(saved, keep)]
        if saves & INPUTS:
            versions = [x._vc[0] if isinstance(x, Tensor) and x._vc else 0 for x in saved]
            if any(versions):
                for x in saved:
                    if isinstance(x, Tensor):
                        check_saveable(x._vc)
                node.versions = tuple(versions)
        if saves & OUTPUT:
            if out._vc is None:
                out._vc = [0]
            saved.append(SavedOutput(data, out._vc))
        node.saved = tuple(saved) + tuple(extras)
    out._grad_fn = node
    out._requires_grad = True
    if record_extras:
        on_record(node, (out,))
    return node


def multi_output_class(name: str, vjp, saves: int = NOTHING, **attrs) -> type:
    """A Node subclass for one node with several outputs (PyTorch's SplitBackward0,
    VarMeanBackward0...): the engine hands ``vjp`` one gradient per output."""
    return type(name, (Node,), {"__slots__": ("n_outputs", "undefined_grads"), "multi_output": True,
                                "vjp": staticmethod(vjp), "saves": saves, **attrs,
                                **_sequence_of(name)})


def record_multi(node_cls, x, outs, params, saved=()):
    """Attach one new ``node_cls`` node for input ``x`` to every tensor of ``outs`` (output
    ``nr`` of it in order), saving ``saved`` (tensors, their versions checked)."""
    return record_multi_inputs(node_cls, (x,), outs, params, saved)


def record_multi_inputs(node_cls, inputs, outs, params, saved=(), keep=()):
    """:func:`record_multi` for a node of several input tensors (the decompositions, lu...).

    The node saves ``saved`` (tensors, their versions checked), then the outputs whose
    indices are in ``keep``, as arrays with their version counters (no reference cycle:
    under create_graph the engine rebuilds them as tensors of this very node)."""
    node = node_cls()
    node.seq = next_sequence_nr()
    node.next = tuple(edge_of(x) for x in inputs)
    nrs = tuple(x._nr for x in inputs)
    node.next_nr = nrs if any(nrs) else None
    node.params = params
    node.hooks = None
    versions = tuple(s._vc[0] if s._vc else 0 for s in saved)
    if any(versions):
        for s in saved:
            check_saveable(s._vc)  # (an inference tensor cannot be saved)
    node.versions = versions if any(versions) else None
    node.out_shape = [o._data.shape for o in outs]
    node.out_dtype = [o._data.dtype for o in outs]
    node.n_outputs = len(outs)
    for nr, o in enumerate(outs):
        o._grad_fn = node
        o._requires_grad = True
        o._nr = nr
        if nr in keep:
            o._vc = o._vc or [0]
    node.saved = tuple(saved) + tuple(SavedOutput(outs[i]._data, outs[i]._vc, i)
                                      for i in keep)
    if record_extras:  # saved-tensor hooks, anomaly mode's forward traceback
        on_record(node, outs)
    return node
