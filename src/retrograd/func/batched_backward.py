"""``autograd.grad(..., is_grads_batched=True)``: one backward pass for the whole batch.

PyTorch vmaps the backward over the leading dimension of ``grad_outputs``.  Here the
gradients flow through the graph as *physical* tensors ``[batch, *shape]`` (the values of
BatchedTensors of one vmap level, pushed for the pass) and each node's derivative runs once
for the whole batch, per node, in the first of these ways that applies:

* ``batched_derivatives.PHYSICAL`` (keyed by the node's formula): a derivative written on
  physical tensors, for the common nodes whose own formula cannot take a batched gradient
  (sum, mean, views, transpose/permute, squeeze, expand, select/slice, (log_)softmax,
  relu, nll_loss, split/unbind);
* ``ELEMENTWISE``: the node's own formula called with the physical gradient (broadcasting
  puts the batch in front of the saved values; no BatchedTensor involved);
* ``BATCH_SAFE`` (matmuls, cat/stack, losses...): the node's own formula called with a
  BatchedTensor gradient, its ops dispatched to their vmap batching rules;
* any other node -- or a batch-safe one whose formula still raises on a BatchedTensor --
  runs its ``vjp`` once per sample on plain gradient slices, stacked: a correct loop for
  that node only, with a warning once per node type (as vmap's fallback).

Every listed node type is checked against torch in tests/func/test_batched_backward.py.

A whole graph falls back to the old loop (one full backward per sample) where a batched
gradient would be seen by user code or by machinery that expects plain tensors: hooks on
any node or leaf reached, ``autograd.trace()``, anomaly mode, an active forward-AD level.

Not an engine of its own in spirit: the dependency counting, the ``inputs`` pruning, the
unpacking of saved values (version checks, freed graphs) are the engine's functions; only
the loop is repeated here, stripped of what the conditions above exclude.
"""

from __future__ import annotations

import warnings
from heapq import heapify, heappop, heappush
from itertools import count as _count

from ..autograd import engine, frontend
from ..autograd.forward_state import fw
from ..autograd.grad_mode import anomaly, state
from ..autograd.graph import AccumulateGrad
from ..ops import registry
from ..tensor import Tensor
from .batched import BatchedTensor, pop_level, push_level
from .batched_derivatives import PHYSICAL, sum_to_batched

__all__ = ["batched_grad", "BATCH_SAFE"]

#: Node types whose derivative takes a BatchedTensor gradient (every op it calls has a
#: batching rule, and it never branches on the gradient being an array).  Names as
#: ``grad_fn.name()``.
BATCH_SAFE = frozenset({
    # arithmetic
    "AddBackward0", "AddBackward1", "SubBackward0", "SubBackward1", "RsubBackward0",
    "RsubBackward1", "MulBackward0", "MulBackward1", "DivBackward0", "DivBackward1",
    "NegBackward0", "PowBackward0", "PowBackward1", "PowBackward2",
    # elementwise functions
    "TanhBackward0", "SigmoidBackward0", "ReluBackward0",
    "ExpBackward0", "LogBackward0", "SinBackward0", "CosBackward0", "SqrtBackward0",
    "AbsBackward0", "Log1PBackward0", "Expm1Backward0", "RsqrtBackward0",
    "ReciprocalBackward0", "SinhBackward0", "CoshBackward0", "TanBackward0", "AsinBackward0",
    "AtanBackward0", "ErfBackward0", "GeluBackward0", "SiluBackward0", "LogSigmoidBackward0",
    # matrix products
    "MmBackward0", "AddmmBackward0", "MvBackward0", "DotBackward0", "MatmulBackward0",
    "BmmBackward0",
    # views and indexing
    "TBackward0", "TransposeBackward0", "PermuteBackward0", "ViewBackward0",
    "ReshapeAliasBackward0", "UnsqueezeBackward0", "SqueezeBackward0", "SqueezeBackward1",
    "ExpandBackward0", "SelectBackward0", "SliceBackward0", "CloneBackward0", "FlipBackward0",
    "UnsafeViewBackward0", "CatBackward0", "StackBackward0",
    # reductions
    "SumBackward0", "SumBackward1", "MeanBackward0", "MeanBackward1",
    # softmax and losses
    "LogSoftmaxBackward0", "SoftmaxBackward0", "NllLossBackward0", "MseLossBackward0",
    "BinaryCrossEntropyWithLogitsBackward0", "BinaryCrossEntropyBackward0",
})

#: Elementwise node types whose formula combines the gradient with saved values only by
#: broadcasting operations: given the *physical* gradient ``[batch, *out_shape]`` it computes
#: every sample at once (saved values align to the right, the batch stays in front) with
#: no BatchedTensor and no batching rule at all; the engine's sum-to-shape step then undoes
#: any input broadcasting.  Each is checked against torch in the tests.
ELEMENTWISE = frozenset({
    "AddBackward0", "AddBackward1", "SubBackward0", "SubBackward1", "RsubBackward0",
    "RsubBackward1", "MulBackward0", "MulBackward1", "DivBackward0", "DivBackward1",
    "NegBackward0", "PowBackward0", "PowBackward1", "PowBackward2", "TanhBackward0",
    "SigmoidBackward0", "ExpBackward0", "LogBackward0", "SinBackward0", "CosBackward0",
    "SqrtBackward0", "AbsBackward0", "Log1PBackward0", "Expm1Backward0", "RsqrtBackward0",
    "ReciprocalBackward0", "SinhBackward0", "CoshBackward0", "TanBackward0", "AsinBackward0",
    "AtanBackward0", "ErfBackward0", "GeluBackward0", "SiluBackward0", "LogSigmoidBackward0",
    "WhereBackward0", "ClampBackward0", "ClampBackward1", "LeakyReluBackward0",
    "HardtanhBackward0", "EluBackward0", "SoftplusBackward0", "ThresholdBackward0",
    "MaskedFillBackward0", "MaximumBackward0", "MinimumBackward0", "CloneBackward0",
    "TanhBackwardBackward0", "SigmoidBackwardBackward0",
})

_warned: set = set()
_push_order = _count().__next__


def _needs_loop(deps) -> bool:
    """Whether user code or tracing would see the batched gradients: then the whole graph
    runs the per-sample loop (hooks expect plain tensors of the output's shape)."""
    if state.tracer is not None or anomaly.enabled or fw.active:
        return True
    for node in deps:
        h = node.hooks
        if h is not None and (h.pre or h.post or h.tensor or h.retain):
            return True
        if type(node) is AccumulateGrad:
            extra = node.variable._extra
            if extra is not None and extra.hooks:
                return True
    return False


def _check_grad_outputs(outs, gos):
    """PyTorch's checks: every grad_output is [batch, *output.shape], one batch size."""
    if gos is None or any(g is None for g in gos):
        raise RuntimeError(
            "grad can be implicitly created only for scalar outputs: is_grads_batched=True "
            "needs grad_outputs, one tensor per output whose first dimension is the batch of "
            "vectors to multiply the Jacobian with")
    if len(gos) != len(outs):
        raise RuntimeError(
            f"grad requires one grad_output per output: got {len(gos)} for {len(outs)} outputs")
    for i, (o, g) in enumerate(zip(outs, gos)):
        if not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got "
                            f"{type(g).__name__}")
        if g.dim() == 0:
            raise IndexError(
                f"invalid index of a 0-dim tensor: is_grads_batched=True takes grad_output[{i}]'s "
                "first dimension as the batch, and it has none (shape []). Give it shape "
                f"[batch, *{list(o.shape)}].")
        if g.shape[0] == 0:  # (PyTorch reads the first vector of the batch, and fails so)
            raise IndexError(
                f"index 0 is out of bounds for dimension 0 with size 0: is_grads_batched=True "
                f"got an empty batch in grad_output[{i}] (shape {list(g.shape)}); pass at "
                "least one vector")
        if tuple(g.shape[1:]) != tuple(o.shape):
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each "
                "grad_output as the batch dimension. The sizes of the remaining dimensions are "
                "expected to match the shape of corresponding output, but a mismatch was "
                f"detected: grad_output[{i}] has a shape of {list(g.shape)} and output[{i}] has "
                f"a shape of {list(o.shape)}. If you only want some tensors in `grad_output` to "
                "be considered batched, consider using vmap.")
    sizes = [g.shape[0] for g in gos]
    if len(set(sizes)) != 1:
        raise ValueError(
            f"vmap: Expected all tensors to have the same size in the mapped dimension, got "
            f"sizes {sizes} for the mapped dimension (is_grads_batched=True: every grad_output "
            "needs the same leading batch size)")
    return sizes[0]


def batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                 materialize_grads, loop):
    """``autograd.grad`` with ``is_grads_batched=True``; ``loop(...)`` is the per-sample
    version (same arguments), used for graphs that must not see batched gradients."""
    outs, ins = _as_list(outputs), _as_list(inputs)
    gos = _as_list(grad_outputs) if grad_outputs is not None else None
    if any(type(t) is BatchedTensor for t in (*outs, *(ins or ()))):
        raise RuntimeError(
            "autograd.grad(is_grads_batched=True) inside vmap: retrograd supports grad_outputs "
            "batched by the enclosing vmap, not outputs or inputs computed inside it; "
            "differentiate with retrograd.func.vjp / jacrev inside the vmapped function instead")
    if gos is not None and any(type(g) is BatchedTensor for g in gos):
        return _under_vmap(outs, ins, gos, retain_graph, create_graph, allow_unused,
                           materialize_grads, loop)
    batch = _check_grad_outputs(outs, gos)
    if not ins:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty: pass the tensors "
                           "to differentiate with respect to")
    if allow_unused is None:
        allow_unused = materialize_grads
    elif materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if retain_graph is None:
        retain_graph = create_graph
    roots = [frontend._root_node(t, i) for i, t in enumerate(outs)]
    targets = frontend._input_targets(ins, "grad")
    deps = engine._count_dependencies(roots)
    if _needs_loop(deps):
        return loop(outs, ins, gos, retain_graph, create_graph, allow_unused,
                    materialize_grads)
    # the gradients start as the physical [batch, *shape] tensors, cast to the output dtype
    root_grads = []
    for o, g in zip(outs, gos):
        if g.dtype != o.dtype:
            g = g.to(o.dtype)
        root_grads.append(g if create_graph else g.detach())
    captured = _run(roots, [o._nr for o in outs], root_grads, deps, targets, batch,
                    retain_graph, create_graph)
    results = []
    for i, (t, g) in enumerate(zip(ins, captured)):
        if g is None:
            if materialize_grads:  # (PyTorch's zeros here are the input's shape, unbatched)
                results.append(t.detach().new_zeros(tuple(t.shape)))
                continue
            if not allow_unused:
                raise frontend.unused_input_error(i, t)
            results.append(None)
        else:
            results.append(g)
    return tuple(results)


def _as_list(x):
    if x is None or isinstance(x, (Tensor, BatchedTensor)):
        return None if x is None else [x]
    return list(x)


def _under_vmap(outs, ins, gos, retain_graph, create_graph, allow_unused, materialize_grads,
                loop):
    """grad_outputs batched by the caller's vmap (torch allows it): the vmap levels and the
    is_grads_batched dimension together are one batch of vector-Jacobian products (the graph
    is the same for all), so they are flattened into one, and the results split back."""
    from .batched import STACK
    from .levels import chain, rewrap, to_levels

    have = set()
    for g in gos:
        have |= set(chain(g)[1])
    want = [lv for lv in STACK if lv.level in have]
    sizes = [lv.size for lv in want]
    phys = [chain(to_levels(g, want))[0] for g in gos]
    for i, p in enumerate(phys):
        if p.dim() == len(sizes):
            raise IndexError(
                f"invalid index of a 0-dim tensor: is_grads_batched=True takes "
                f"grad_output[{i}]'s first dimension as the batch, and it has none (shape []).")
    flat = [p.reshape(-1, *p.shape[len(sizes) + 1:]) for p in phys]
    inner = [p.shape[len(sizes)] for p in phys]
    res = batched_grad(outs, ins, flat, retain_graph, create_graph, allow_unused,
                       materialize_grads, loop)
    out = []
    for r, t in zip(res, ins):
        if r is None or tuple(r.shape) == tuple(t.shape):  # (unused: None or unbatched zeros)
            out.append(r)
        else:
            out.append(rewrap(r.reshape(*sizes, inner[0], *t.shape), [lv.level for lv in want]))
    return tuple(out)


# --------------------------------------------------------------------------- the loop
def _run(roots, root_nrs, root_grads, deps, targets, batch, retain_graph, create_graph):
    """The backward loop on physical gradients (batch in dimension 0)."""
    buffers = {}
    for node, nr, g in zip(roots, root_nrs, root_grads):
        _add(buffers, node, nr, g)
    captures = {}
    for position, (node, nr) in enumerate(targets):
        captures.setdefault(node, []).append((position, nr))
    needed = engine._nodes_needed(deps, roots, captures)
    captured = [None] * len(targets)
    lv = push_level(batch, "error", "autograd.grad(is_grads_batched=True)")
    prev_mode = state.enabled
    state.enabled = create_graph
    try:
        ready = [(-r.seq, _push_order(), r) for r in dict.fromkeys(roots) if deps[r] == 0]
        heapify(ready)
        while ready:
            node = heappop(ready)[2]
            g = buffers.pop(node, None)
            here = captures.get(node)
            if here is not None and g is not None:
                for position, nr in here:
                    captured[position] = g[nr] if node.multi_output else g
            if type(node) is AccumulateGrad:
                continue
            if (node not in needed or g is None
                    or (node.multi_output and all(x is None for x in g))
                    or node.next.count(None) == len(node.next)):
                engine._release_children(node, deps, ready)
                continue
            saved = engine.unpack_saved(node, True)
            if node.multi_output:  # (which got none: as the engine's _materialize_multi)
                node.undefined_grads = frozenset(nr for nr, x in enumerate(g) if x is None)
                g = [x if x is not None else _zeros(batch, node.out_shape[nr],
                                                    node.out_dtype[nr])
                     for nr, x in enumerate(g)]
            grads = _call(node, g, saved, lv.level, batch)
            if not retain_graph and node.saved:
                node.saved = None
            nxt = node.next
            if len(grads) != len(nxt):
                raise RuntimeError(
                    f"function {node.name()} returned an incorrect number of gradients "
                    f"(expected {len(nxt)}, got {len(grads)})")
            nrs = node.next_nr
            for i, child in enumerate(nxt):
                if child is None:
                    continue
                gi = grads[i]
                if gi is not None:
                    nr = (nrs[i] if nrs else 0) if child.multi_output else None
                    shape = child.out_shape[nr] if nr is not None else child.out_shape
                    dtype = child.out_dtype[nr] if nr is not None else child.out_dtype
                    _add(buffers, child, nr, _conform(gi, shape, dtype, node, i, batch))
                count = deps[child] - 1
                deps[child] = count
                if count == 0:
                    heappush(ready, (-child.seq, _push_order(), child))
    finally:
        state.enabled = prev_mode
        pop_level(lv)
    return captured


def _add(buffers, node, nr, g):
    if node.multi_output:
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * node.n_outputs
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    else:
        prev = buffers.get(node)
        buffers[node] = g if prev is None else prev + g


def _zeros(batch, shape, dtype):
    from .._creation import zeros

    return zeros((batch, *shape), dtype=dtype)


def _conform(g, shape, dtype, node, index, batch):
    """A physical gradient reduced to [batch, *shape] (undo broadcasting) and ``dtype``."""
    have = tuple(g.shape[1:])
    shape = tuple(shape)
    if have != shape:
        if not engine._can_sum_to(have, shape):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {index} - got "
                f"{list(have)} but expected shape compatible with {list(shape)}")
        g = sum_to_batched(g, shape, batch)
    if g._data.dtype != dtype:  # (out_dtype is a NumPy dtype)
        g = g.to(dtype)
    return g


# --------------------------------------------------------------------------- one node
def _call(node, g, saved, level, batch):
    """The node's gradients for the whole batch, as physical tensors (or None)."""
    name = type(node).__name__
    physical = PHYSICAL.get(node.vjp)
    if physical is not None:
        out = physical(node, g, saved, batch)
        if out is not None:
            return list(out)
    if name in ELEMENTWISE:
        try:
            out = node.vjp(node, g, saved)
        except Exception:  # noqa: BLE001 - the ways below re-raise a real error
            out = None
        if out is not None and all(x is None or (isinstance(x, Tensor) and x.dim() == g.dim())
                                   for x in out):
            return list(out)
    if name in BATCH_SAFE:
        bg = [BatchedTensor(x, level) for x in g] if node.multi_output else \
            BatchedTensor(g, level)
        try:
            out = node.vjp(node, bg, saved)
        except Exception:  # noqa: BLE001 - the per-sample loop below re-raises a real error
            # a formula that cannot take a BatchedTensor (an array-only branch, a record
            # call whose arguments a batching rule does not expect): the loop below
            out = None
        if out is not None:
            return [_physical(x, level, batch) for x in out]
    return _per_sample(node, name, g, saved, batch)


def _physical(x, level, batch):
    if x is None:
        return None
    if type(x) is BatchedTensor and x.level == level:
        return x.value
    if type(x) is BatchedTensor:  # (a level of the caller's vmap only: not ours)
        raise RuntimeError("is_grads_batched: a derivative returned a tensor batched at "
                           "another vmap level")
    if not isinstance(x, Tensor):  # an array from a first-order formula
        from ..tensor import make_tensor

        x = make_tensor(x)
    # the same for every sample (it did not depend on the gradient)
    return x.unsqueeze(0).expand(batch, *x.shape)


def _per_sample(node, name, g, saved, batch):
    if name not in _warned:  # (stacklevel: the caller of autograd.grad)
        _warned.add(name)
        warnings.warn(
            f"autograd.grad(is_grads_batched=True): {name} has no batched derivative yet; "
            f"its backward runs once per sample of the batch and the results are stacked "
            f"(a performance drop for this node only).", UserWarning, stacklevel=7)
    stack = registry.entry("stack").fn
    rows = []
    for b in range(batch):
        gb = [x.select(0, b) for x in g] if node.multi_output else g.select(0, b)
        rows.append(node.vjp(node, gb, saved))
    out = []
    for k in range(len(rows[0])):
        column = [r[k] for r in rows]
        if all(c is None for c in column):
            out.append(None)
            continue
        first = _tensor(next(c for c in column if c is not None))
        out.append(stack([_tensor(c) if c is not None else first.new_zeros(tuple(first.shape))
                          for c in column], 0))
    return out


def _tensor(x):
    if isinstance(x, Tensor):
        return x
    from ..tensor import make_tensor

    return make_tensor(x)


frontend.batched_backward = batched_grad
