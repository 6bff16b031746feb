"""Forward-mode AD: how an op's output gets its tangent (a Jacobian-vector product).

The op callers (``_apply``) call :func:`propagate` after computing an output, only while a
dual level is open (``fw.active``).  The tangent comes from, in order:

* a hand-written rule for the common ops (pointwise unary, add/mul/matmul, sum/mean,
  softmax/log_softmax, cat/stack, and every view op, which is linear: the tangent of a view
  is the same view of the tangent, sharing its memory);
* otherwise the automatic fallback, the transpose of the op's VJP: the node the op would
  record is built (not attached to anything), its ``vjp`` is called with a cotangent ``g``
  that requires grad, and ``J t = d<vjp(g), t>/dg``, by the engine with ``create_graph``.
  The VJP is linear in ``g``, so this is exact, and every op with a VJP has a JVP.

Tangents are tensors that may require grad: the rules and the fallback record as any
computation does, so the reverse mode can differentiate a tangent (reverse-over-forward)
and a tangent can flow through a backward pass (forward-over-reverse).  While a tangent is
computed, forward propagation is suspended (levels do not nest, as in PyTorch).
"""

from __future__ import annotations

import re

from ..autograd import engine
from ..autograd.forward_state import fw, set_tangent, tangent_of
from ..autograd.graph import SavedOutput, accumulator_of, next_sequence_nr
from ..autograd.grad_mode import state
from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._apply import INPUTS, OUTPUT, apply_op

__all__ = ["propagate", "propagate_node", "propagate_multi", "propagate_outputs", "jvp_of_vjp",
           "JVPS", "JVPS_SAVED"]

_new = object.__new__


# ----------------------------------------------------------------- hand-written rules
# rule(op, inputs, tangents, out, params) -> the output's tangent; tangents[i] is None for an
# input without one (or a non-tensor)


def _zeros_for(x):
    return make_tensor(namespace(x._data).zeros_like(x._data))


def _linear(op, inputs, tangents, out, params):
    """An op jointly linear in its tensor inputs (add, cat, sum, views...): op(tangents)."""
    args = []
    for x, t in zip(inputs, tangents):
        if t is not None:
            args.append(t)
        elif isinstance(x, Tensor):
            args.append(_zeros_for(x))
        else:
            args.append(0)  # a number operand (x + 2): its tangent is 0
    return apply_op(op, args, params)


def _multilinear(op, inputs, tangents, out, params):
    """An op linear in each input separately (mul, matmul): sum of op(.., t_i, ..)."""
    total = None
    for i, t in enumerate(tangents):
        if t is None:
            continue
        args = list(inputs)
        args[i] = t
        term = apply_op(op, args, params)
        total = term if total is None else total + term
    return total


def _same(op, inputs, tangents, out, params):  # x + c, x - c: the tangent passes unchanged
    return tangents[0]


def _pointwise(derivative):
    def rule(op, inputs, tangents, out, params):
        return tangents[0] * derivative(inputs[0], out)

    return rule


def _softmax(op, inputs, tangents, out, params):
    t, dim = tangents[0], params[0]
    return out * (t - (out * t).sum(dim, keepdim=True))


def _log_softmax(op, inputs, tangents, out, params):
    t, dim = tangents[0], params[0]
    return t - (out.exp() * t).sum(dim, keepdim=True)


def _embedding_bag(op, inputs, tangents, out, params):
    # sum and mean bags are linear in the weight (and in per_sample_weights); a max bag's
    # derivative picks the argmax rows, which the fallback (the VJP's transpose) does
    mode = params[4]
    return _multilinear(op, inputs, tangents, out, params) if mode != 2 else None


def _svdvals(op, inputs, tangents, out, params):
    # d s_i = u_i^T dA v_i (distinct singular values); U and V are constants here, as the
    # VJP (first order only) treats them
    a = inputs[0]._data
    xp = namespace(a)
    u, _, vh = xp.linalg.svd(a, full_matrices=False)
    return ((make_tensor(u.swapaxes(-1, -2).copy()) @ tangents[0]) * make_tensor(vh)).sum(-1)


def _logcumsumexp(op, inputs, tangents, out, params):
    # d out_j = sum_{i <= j} exp(x_i - out_j) t_i, in log space (as the VJP): the positive
    # and negative parts of t each through logcumsumexp, so nothing overflows or underflows
    x, t = inputs[0], tangents[0]
    xp = namespace(x._data)
    lowest = float(xp.finfo(x._data.dtype).min)
    log_abs = t.abs().clamp_min(xp.finfo(x._data.dtype).tiny).log()
    pos = log_abs.where(t > 0, lowest)
    neg = log_abs.where(t < 0, lowest)
    return (apply_op(op, [x + pos], params) - out).exp() - \
        (apply_op(op, [x + neg], params) - out).exp()


def _ctc_loss(op, inputs, tangents, out, params, extras):
    # ctc_loss's gradient is not differentiable (as PyTorch's), so its VJP cannot be
    # transposed; but loss n reads only log_probs[:, n, :], so the gradient of the summed
    # losses (first order, on arrays) holds every loss's own gradient: JVP_n = <G[:, n], t>.
    # PyTorch's gradient adds softmax(log_probs) at each time step in the input (it expects
    # log_softmax's output, whose backward removes it); the derivative has it taken off
    lp = inputs[0]
    xp = namespace(lp._data)
    node = _bare_node(op.node_cls, inputs, tangents, params, [out])
    (grad,) = op.node_cls.vjp(node, xp.ones_like(out._data), [lp._data, *extras])
    input_lengths, zero_infinity = params[1], params[4]
    in_time = xp.arange(lp._data.shape[0])[:, None] < xp.asarray(input_lengths)[None, :]
    if zero_infinity:
        in_time = in_time & ~xp.isinf(out._data)[None, :]
    grad = grad - xp.exp(lp._data) * in_time[:, :, None]
    return (make_tensor(grad) * tangents[0]).sum((0, 2))


def _addcdiv(op, inputs, tangents, out, params):
    # An integer tensor2 (no tangent): the VJP's transpose would refuse it (its in-place
    # ``value / tensor2``, refused by PyTorch's backward too, not by its forward mode), so
    # PyTorch's forward formula self_t + value * t1_t / t2, in the output's dtype (as the
    # transpose gives it).  Otherwise the transpose.
    _, t1, t2 = inputs
    tx, tt1, _ = tangents
    if tt1 is None or t2._data.dtype.kind in "fc":
        return None
    value = params[0]
    term = tt1 / t2 if value == 1 else tt1 / t2 * value
    total = term if tx is None else tx + term
    return total if total._data.dtype == out._data.dtype else total.to(out.dtype)


# keyed by (op name, grad_fn name): one public name can stand for several records
RULES = {
    ("add", "AddBackward0"): _linear, ("sub", "SubBackward0"): _linear,
    ("neg", "NegBackward0"): _linear,
    ("add", "AddBackward1"): _same, ("sub", "SubBackward1"): _same,
    ("mul", "MulBackward1"): _linear,
    ("sum", "SumBackward0"): _linear, ("sum", "SumBackward1"): _linear,
    ("mean", "MeanBackward0"): _linear, ("mean", "MeanBackward1"): _linear,
    ("cat", "CatBackward0"): _linear, ("stack", "StackBackward0"): _linear,
    ("mul", "MulBackward0"): _multilinear,
    ("exp", "ExpBackward0"): _pointwise(lambda x, y: y),
    ("log", "LogBackward0"): _pointwise(lambda x, y: 1 / x),
    ("sqrt", "SqrtBackward0"): _pointwise(lambda x, y: 0.5 / y),
    ("sin", "SinBackward0"): _pointwise(lambda x, y: x.cos()),
    ("cos", "CosBackward0"): _pointwise(lambda x, y: -x.sin()),
    ("tanh", "TanhBackward0"): _pointwise(lambda x, y: 1 - y * y),
    ("sigmoid", "SigmoidBackward0"): _pointwise(lambda x, y: y * (1 - y)),
    ("relu", "ReluBackward0"): _pointwise(lambda x, y: y > 0),
    ("softmax", "SoftmaxBackward0"): _softmax,
    ("log_softmax", "LogSoftmaxBackward0"): _log_softmax,
    ("embedding", "EmbeddingBackward0"): _linear,  # the true derivative (PyTorch: auto_linear)
    ("embedding_bag", "EmbeddingBagBackward0"): _embedding_bag,
    ("svdvals", "LinalgSvdBackward0"): _svdvals,
    ("logcumsumexp", "LogcumsumexpBackward0"): _logcumsumexp,
    ("addcdiv", "AddcdivBackward0"): _addcdiv,
    # a view, but of the input's storage (its params hold that storage): the same view of
    # the tangent would read the input's memory, so the VJP's transpose gives it
    ("as_strided", "AsStridedBackward0"): lambda *args: None,
}
# rules that also read the op's extras (what its forward returned beside the output)
EXTRAS_RULES = {("ctc_loss", "CtcLossBackward0"): _ctc_loss}
MULTILINEAR_OPS = {"matmul", "mm", "bmm", "mv", "dot"}


def rule_for(op):
    """The hand-written rule of ``op``, or None (then the fallback)."""
    rule = RULES.get((op.name, op.node_cls.__name__))
    if rule is None:
        if op.view and op.n_inputs == 1:
            rule = _linear
        elif op.name in MULTILINEAR_OPS and op.n_inputs == 2:
            rule = _multilinear
    return rule


# ----------------------------------------------------------------- the automatic fallback
class _Edge:
    """Stands in ``node.next`` for an input that has a tangent (the VJP computes its part);
    like a node, it tells the input's shape and dtype (``shape.input_meta`` reads them)."""

    __slots__ = ("out_shape", "out_dtype")
    multi_output = False

    def __init__(self, x):
        self.out_shape = x._data.shape
        self.out_dtype = x._data.dtype


def _bare_node(node_cls, inputs, tangents, params, outs):
    multi = getattr(node_cls, "multi_output", False)
    node = node_cls() if multi else _new(node_cls)
    node.seq = next_sequence_nr()
    node.next = tuple(_Edge(x) if t is not None else None for x, t in zip(inputs, tangents))
    node.next_nr = None
    node.params = params
    node.hooks = None
    node.versions = None
    if multi:
        node.n_outputs = len(outs)
        node.out_shape = [o._data.shape for o in outs]
        node.out_dtype = [o._data.dtype for o in outs]
    else:
        node.out_shape = outs[0]._data.shape
        node.out_dtype = outs[0]._data.dtype
    return node


def jvp_of_vjp(node_cls, inputs, outs, params, saved, tangents):
    """The tangent of each of ``outs`` (None for a non-float one), by transposing the VJP
    of ``node_cls`` (see the module docstring); ``saved`` is what the vjp reads."""
    node = _bare_node(node_cls, inputs, tangents, params, outs)
    node.saved = tuple(saved)
    floats = [o._data.dtype.kind == "f" for o in outs]
    cotangents = []
    for o, is_float in zip(outs, floats):
        # any value would do (the VJP is linear in it); ones, not zeros, so a VJP written
        # in log space (logcumsumexp's log(g)) is at a point where it is smooth
        g = make_tensor(namespace(o._data).ones_like(o._data) if is_float else
                        namespace(o._data).ones(o._data.shape))
        g._requires_grad = is_float
        cotangents.append(g)
    prev = state.enabled
    state.enabled = True
    try:
        try:
            grads = node_cls.vjp(node, cotangents if node_cls.multi_output else cotangents[0],
                                 list(saved))
        except (NotImplementedError, RuntimeError) as e:
            raise type(e)(
                f"forward-mode AD through {node_cls.__name__}: retrograd derives this op's "
                f"JVP from its backward formula, which cannot be differentiated here ({e}); "
                "compute this derivative in reverse mode (backward / autograd.grad)") from e
        total = None
        for gi, t in zip(grads, tangents):
            if gi is None or t is None:
                continue
            if not isinstance(gi, Tensor):
                continue  # a constant (zeros made as an array): no dependence on g
            term = (gi * t).sum()
            total = term if total is None else total + term
        wanted = [i for i, f in enumerate(floats) if f]
        captured = [None] * len(outs)
        if total is not None and total._requires_grad:
            one = make_tensor(namespace(total._data).ones((), dtype=total._data.dtype))
            root = total._grad_fn
            got = engine.run_backward(
                [root], [(total._nr, one) if root.multi_output else one], False, True,
                [(accumulator_of(cotangents[i]), 0) for i in wanted], accumulate=False)
            for i, gi in zip(wanted, got):
                captured[i] = gi
    finally:
        state.enabled = prev
    differentiable = prev and any(
        isinstance(v, Tensor) and v._requires_grad for v in (*inputs, *tangents))
    result = []
    for o, is_float, c in zip(outs, floats, captured):
        if not is_float:
            result.append(None)
        elif c is None:
            result.append(_zeros_for(o))
        else:
            result.append(c if differentiable else make_tensor(c._data))
    return result


def _saved_for_fallback(node_cls, inputs, out, extras):
    saves = node_cls.saves
    saved = list(inputs) if saves & INPUTS else []
    if saves & OUTPUT:
        saved.append(out)
    return (*saved, *extras)


# ----------------------------------------------------------------- entry points
def _tangents(inputs):
    return [tangent_of(x) if isinstance(x, Tensor) else None for x in inputs]


def _conform(t, out):
    """The tangent as PyTorch keeps it: the output's shape, and a floating dtype (a float64
    tangent of a float32 dual stays float64 through the ops, as in PyTorch)."""
    if t is None:
        return None
    if not isinstance(t, Tensor):
        t = make_tensor(namespace(out._data).asarray(t, dtype=out._data.dtype))
    if t._data.dtype.kind != "f":
        t = t.to(out.dtype)
    if t._data.shape != out._data.shape:
        t = t.expand(out.shape).clone()
    return t


def _attach(out, t):
    """Give ``out`` its tangent; a node that saved ``out`` (exp, tanh...) reads it through
    an alias that carries the tangent, so a backward pass under the level sees it."""
    set_tangent(out, t)
    node = out._grad_fn
    saved = getattr(node, "saved", None) if node is not None else None
    if not saved:
        return
    for i, s in enumerate(saved):
        if type(s) is SavedOutput and s.data is out._data:
            alias = make_tensor(out._data, node)
            alias._vc = s.counter
            alias._nr = s.nr
            set_tangent(alias, t)
            versions = node.versions
            if versions is not None:
                versions = tuple(versions) + (0,) * (len(saved) - len(versions))
                node.versions = versions[:i] + (s.version,) + versions[i + 1:]
            elif s.version:
                node.versions = tuple(s.version if j == i else 0 for j in range(len(saved)))
            node.saved = saved[:i] + (alias,) + saved[i + 1:]
            return


def propagate(op, inputs, out, params, extras=()):
    """Set ``out``'s tangent from the tangents of ``inputs`` (op callers, under a level)."""
    tangents = _tangents(inputs)
    if all(t is None for t in tangents) or not op.differentiable or \
            out._data.dtype.kind != "f":
        return
    fw.active = False
    tracer, state.tracer = state.tracer, None  # a trace narrates the pass, not its inner math
    how = "view" if op.view else "rule"
    try:
        rule = rule_for(op)
        if rule is not None:
            t = rule(op, inputs, tangents, out, params)
        else:
            rule = EXTRAS_RULES.get((op.name, op.node_cls.__name__))
            t = rule(op, inputs, tangents, out, params, extras) if rule is not None else None
        if t is None:
            how = "transpose"
            saved = _saved_for_fallback(op.node_cls, inputs, out, extras)
            t = jvp_of_vjp(op.node_cls, inputs, [out], params, saved, tangents)[0]
        t = _conform(t, out)
    finally:
        fw.active = True
        state.tracer = tracer
    _attach(out, t)
    if tracer is not None:  # autograd.trace(): the forward pass is narrated
        fw.report(op.name, op.node_cls.__name__, inputs, tangents, [out], [t], how)


def propagate_node(node_cls, inputs, out, params, extras=()):
    """As :func:`propagate`, for ops that record ``node_cls`` nodes themselves (conv...)."""
    tangents = _tangents(inputs)
    if all(t is None for t in tangents) or out._data.dtype.kind != "f":
        return
    fw.active = False
    tracer, state.tracer = state.tracer, None  # a trace narrates the pass, not its inner math
    try:
        saved = _saved_for_fallback(node_cls, inputs, out, extras)
        t = _conform(jvp_of_vjp(node_cls, inputs, [out], params, saved, tangents)[0], out)
    finally:
        fw.active = True
        state.tracer = tracer
    _attach(out, t)
    if tracer is not None:
        fw.report(_op_name(node_cls), node_cls.__name__, inputs, tangents, [out], [t],
                    "transpose")


def propagate_outputs(node_cls, inputs, outs, params, saved=()):
    """The tangents of the outputs of one multi-output node of several inputs (the
    decompositions, lu, ldl...), by its hand-written JVP (``JVPS``) or the transpose of its
    VJP; ``saved`` is what the VJP reads (the saved inputs, outputs and extras as tensors or
    arrays, in the node's order).  Non-float outputs (pivots, info) get no tangent."""
    tangents = _tangents(inputs)
    if all(t is None for t in tangents):
        return
    fw.active = False
    tracer, state.tracer = state.tracer, None  # a trace narrates the pass, not its inner math
    how = "rule"
    try:
        rule = JVPS.get(node_cls.__name__)
        if rule is not None:
            ts = rule(inputs, tangents, list(outs), params)
        else:
            rule = JVPS_SAVED.get(node_cls.__name__)
            ts = rule(inputs, tangents, list(outs), params, saved) if rule is not None else None
        if ts is None:
            how = "transpose"
            ts = jvp_of_vjp(node_cls, tuple(inputs), list(outs), params, saved, tangents)
        ts = [_conform(ti, o) if o._data.dtype.kind == "f" else None for ti, o in zip(ts, outs)]
    finally:
        fw.active = True
        state.tracer = tracer
    for o, ti in zip(outs, ts):
        if ti is not None:
            _attach(o, ti)
    if tracer is not None:
        fw.report(_op_name(node_cls), node_cls.__name__, inputs, tangents, list(outs), ts,
                    how)


def _op_name(node_cls):
    """An op's name from its node class (``LinalgQrBackward0`` -> ``linalg_qr``)."""
    base = node_cls.__name__.lstrip("_").split("Backward")[0]
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", base).lower()


def propagate_multi(node_cls, x, outs, params, saved=()):
    """The tangents of the outputs of one multi-output node (split, var_mean, svd...)."""
    propagate_outputs(node_cls, (x,), outs, params, saved)


# hand-written JVPs of multi-output nodes, by grad_fn name: rule(inputs, tangents, outs,
# params) -> one tangent per output (None: none), or None for the fallback


def _split_pieces(inputs, tangents, outs, params):
    # split/chunk/unbind are linear and their outputs views: each piece's tangent is the same
    # piece of the input's tangent, a view of it (as PyTorch), not a copy
    t, dim = tangents[0], params[0]
    return list(t.split([o._data.shape[dim] for o in outs], dim))


def _unbind_pieces(inputs, tangents, outs, params):
    return list(tangents[0].unbind(params[0]))


JVPS = {"SplitBackward0": _split_pieces, "SplitWithSizesBackward0": _split_pieces,
        "UnbindBackward0": _unbind_pieces}
# ... and those that also read what the node saves (linalg.lu's permutation):
# rule(inputs, tangents, outs, params, saved)
JVPS_SAVED = {}


fw.propagate = propagate
fw.propagate_node = propagate_node
fw.propagate_multi = propagate_multi
fw.propagate_outputs = propagate_outputs
