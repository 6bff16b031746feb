"""The backward engine: one iterative pass shared by ``backward()`` and ``autograd.grad()``.

It knows nothing about individual ops.  It counts, for every node reachable from the
roots, how many gradients it will receive; runs a node once all have arrived (so a
tensor used twice gets one summed gradient); sends each result to the next node after
reducing it to that node's shape and dtype (the single place broadcasting is undone; a
node with post-hooks has its results reduced before the hooks, as PyTorch's
validate_outputs does: ``_edge_grads``); frees saved values as it goes unless
``retain_graph``.

Two modes share this loop.  Without ``create_graph`` gradients travel as raw arrays and
the derivative formulas compute on arrays without recording anything.  With
``create_graph`` they travel as tensors and the formulas are recorded, so the result can
be differentiated again.

Hooks follow PyTorch's order at each node: the output tensors' hooks, retain_grad, the
node's pre-hooks, its derivative, its post-hooks; at a leaf: the tensor's hooks,
AccumulateGrad's pre-hooks, the accumulation, post-accumulate-grad hooks, post-hooks.
With ``inputs`` only the nodes that lead to an input run (``_nodes_needed``); what
``grad()`` captures at a non-leaf is taken before its hooks when that node must run
anyway, after them otherwise -- PyTorch's (surprising but observable) rule.
Among the nodes ready to run, the most recently created runs first (PyTorch's sequence
numbers), so hooks on sibling branches fire in PyTorch's order.

Threads: several threads may run backward at once, on separate graphs or on one graph kept
with ``retain_graph`` (PyTorch documents both as safe).  Each call keeps its dependency
counts and gradient buffers in locals; what the threads share is ``.grad``, so every
accumulation into it holds ``grad_lock`` (``data += g`` is a read-add-write and NumPy
releases the GIL inside the add).  Grad mode and the active ``autograd.trace()`` are
per thread (``grad_mode.state``); anomaly mode is process-wide, as in PyTorch.

The hooks live in ``engine_hooks.py``; how a gradient becomes ``.grad`` (AccumulateGrad,
retain_grad, the leaf's hooks around it) in ``accumulate_grad.py``.
"""

from __future__ import annotations

import sys
from heapq import heapify, heappop, heappush
from itertools import count as _count

import numpy as np

from ..backend import namespace, quiet_fp_enter, quiet_fp_exit
from .accumulate_grad import (
    _EXACT_REFCOUNTS, _run_leaf, _run_node_prehooks, _run_plain_leaf, grad_lock,
)
from .engine_hooks import _run_post_hooks, _run_pre_hooks, _wrap, above
from .forward_state import fw
from .grad_mode import anomaly, state
from .graph import (
    AccumulateGrad, Node, PackedSaved, SavedOutput, forward_traces, freed_error, graph_tasks,
    next_task_id, sole_grad, unpack_packed,
)

__all__ = ["run_backward", "call_node", "grad_lock"]

# Ties on the ready heap (every AccumulateGrad shares one sequence number) go to the node
# made ready first, as in PyTorch's ready queue: leaves' hooks then run in PyTorch's order
# (the order of the edges that release them), not in an order that follows id().
_push_order = _count().__next__


def __getattr__(name):
    # ``engine.tracer``: the ``autograd.trace()`` recorder active in THIS thread, or None.
    # It lives on the thread-local ``state`` (a trace narrates its own thread's backward
    # passes, not those other threads run meanwhile); this keeps the old module attribute
    # readable.
    if name == "tracer":
        return state.tracer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_ndarray = np.ndarray
_add_reduce = np.add.reduce  # (ndarray.sum goes through a Python wrapper in NumPy 2)
_getrefcount = getattr(sys, "getrefcount", lambda obj: 1 << 30)  # (not CPython: never)


def _tensor_cls():
    return above.Tensor


def _modified_error(node, index, tensor, saved_version):
    shape = list(tensor._data.shape)
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{tensor.dtype} {shape}], saved as input {index} of "
        f"{node.name()}, is at version {tensor._version}; expected version {saved_version} "
        "instead. Hint: the in-place change (an op ending in '_', an assignment into the "
        "tensor, or .data edits) happened after this op used the value; use an out-of-place "
        "op (x = x + 1 instead of x += 1) or .clone() the tensor before modifying it."
    )


def _unpack_results(node, as_tensors: bool):
    """What PyTorch unpacks of a node whose gradients all go nowhere: everything it saved.

    Its own results are saved whatever the edges; its inputs as the op's ``saved_for`` says
    for no edge (PyTorch guards a saved input by an edge only when one derivative alone reads
    it: minimum's, atan2's inputs are kept whatever the edges, mul's are not; fuzz seed
    12519587).  A changed or freed value raises, as there."""
    if len(node.next) == 1 or node.saved is not None:
        unpack_saved(node, False)
        return
    if getattr(node, "saves", 0) & 2:  # (_apply.OUTPUT; nothing saved: nothing to free)
        raise freed_error(node)


def unpack_saved(node, as_tensors: bool):
    """The values ``node`` saved, as arrays (first order) or tensors (create_graph)."""
    saved = node.saved
    if saved is None:
        raise freed_error(node)
    if not saved:
        return saved
    Tensor = above.Tensor
    versions = node.versions
    if versions is None and not as_tensors:
        # the common case (first order, every saved tensor at version 0): its arrays, one
        # type test per value; anything else takes the general loop below, from the start
        out = []
        for s in saved:
            if type(s) is Tensor or (type(s) is not SavedOutput and s is not None
                                     and type(s) is not PackedSaved and isinstance(s, Tensor)):
                vc = s._vc
                if vc is not None and vc[0]:
                    break
                out.append(s._data)
            elif s is None:
                out.append(None)
            elif type(s) is SavedOutput and s.counter[0] == s.version:
                out.append(s.data)
            else:
                break
        else:
            return out
    elif not as_tensors:
        # first order with versions recorded (a parameter updated in place every training
        # step is saved at its current version): the same, each version compared
        out = []
        i = -1
        for s in saved:
            i += 1
            if type(s) is Tensor or (type(s) is not SavedOutput and s is not None
                                     and type(s) is not PackedSaved and isinstance(s, Tensor)):
                vc = s._vc
                if (vc[0] if vc is not None else 0) != versions[i]:
                    break  # (the general loop below raises, naming it)
                out.append(s._data)
            elif s is None:
                out.append(None)
            elif type(s) is SavedOutput and s.counter[0] == s.version:
                out.append(s.data)
            else:
                break
        else:
            return out
    out = []
    for i, s in enumerate(saved):
        if s is None:  # (an input the derivative does not read: saved_for)
            out.append(s)
        elif type(s) is Tensor or isinstance(s, Tensor):
            vc = s._vc
            expected = versions[i] if versions else 0
            if vc is not None and vc[0] != expected:
                raise _modified_error(node, i, s, expected)
            out.append(s if as_tensors else s._data)
        elif type(s) is SavedOutput:
            if s.counter[0] != s.version:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: the output of {node.name()} (shape "
                    f"{list(s.data.shape)}) is at version {s.counter[0]}; expected version "
                    f"{s.version} instead. Hint: {node.name()} needs its own result for its "
                    "derivative; clone() the result before modifying it in place."
                )
            if as_tensors:
                make_tensor = above.make_tensor

                fn = s.view_fn() if s.view_fn is not None else None
                t = make_tensor(s.data, fn if fn is not None else node)
                t._vc = s.counter
                t._nr = s.nr if fn is None else 0
                out.append(t)
            else:
                out.append(s.data)
        elif type(s) is PackedSaved:  # a saved-tensor hook packed it
            out.append(unpack_packed(s, node, as_tensors))
        else:
            out.append(s)
    return out


# --------------------------------------------------------------------------- shape / dtype
def sum_to_array(g, shape):
    """Sum an array over the dimensions that broadcasting to its shape added or stretched
    (the one place broadcasting is undone; ``sum_to_size`` records the same on tensors)."""
    lead = g.ndim - len(shape)
    if lead and shape and g.shape[lead:] == shape:
        # only leading dimensions were added (a bias broadcast over the batch): one
        # reduction, whose fresh result a leaf may keep as its .grad without a copy (the
        # keepdims-then-reshape path below returns a view, which the leaf must copy).
        # (Not for a 0-d shape: NumPy's full reduction gives a scalar, not an array.)
        axis = 0 if lead == 1 else tuple(range(lead))
        return _add_reduce(g, axis) if type(g) is _ndarray else g.sum(axis=axis)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1
    )
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    if lead:
        g = g.reshape(shape)
    return g


def _can_sum_to(gshape, shape) -> bool:
    if len(gshape) < len(shape):
        return False
    lead = len(gshape) - len(shape)
    return all(s == 1 or s == gs for s, gs in zip(shape, gshape[lead:]))


def conform(g, shape, dtype, node, index, as_tensors):
    """Reduce a gradient to ``shape`` (undo broadcasting) and cast it to ``dtype``."""
    data = g._data if as_tensors else g
    if data.shape != shape:
        if (not as_tensors and type(g) is _ndarray and data.ndim == len(shape) + 1 and shape
                and data.shape[1:] == shape):
            # a bias's gradient (broadcast over the batch): one reduction, checks included
            g = _add_reduce(g, 0)
            return g if g.dtype == dtype else g.astype(dtype)
        if not _can_sum_to(data.shape, shape):
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {index} - got "
                f"{list(data.shape)} but expected shape compatible with {list(shape)}"
            )
        if as_tensors:
            # the record itself: the shape was checked just above (sum_to_size's argument
            # parsing and checks were a tenth of a Hessian-vector product's backward)
            g = above.sum_to_size_op(g, shape, data.shape)
        else:
            g = sum_to_array(g, shape)
    if (g._data if as_tensors else g).dtype != dtype:
        if as_tensors:
            g = g.to(dtype)
        else:
            g = g.astype(dtype)
    return g


# --------------------------------------------------------------------------- graph walk
def _count_dependencies(roots, ends=None):
    """How many gradients each node reachable from ``roots`` will receive (iteratively).

    ``ends``: a list to which every node reached that sends no gradient on (leaves, and
    nodes whose edges are all None) is appended, for :func:`_nodes_needed`."""
    deps = {}
    stack = []
    for r in roots:
        if r not in deps:
            deps[r] = 0
            stack.append(r)
    get, pop, push = deps.get, stack.pop, stack.append  # (bound once: a call each per edge)
    if ends is None:  # (backward(): the loop below without the test for ends)
        while stack:
            for child in pop().next:
                if child is not None:
                    count = get(child)
                    if count is None:
                        deps[child] = 1
                        push(child)
                    else:
                        deps[child] = count + 1
        return deps
    end = ends.append  # (grad(): the same walk, noting the ends)
    while stack:
        node = pop()
        nxt = node.next
        if not nxt or (None in nxt and nxt.count(None) == len(nxt)):
            end(node)
        for child in nxt:
            if child is not None:
                count = get(child)
                if count is None:
                    deps[child] = 1
                    push(child)
                else:
                    deps[child] = count + 1
    return deps


def _nodes_needed(deps, roots, targets, ends=None):
    """The nodes that must run: those from which a target can be reached, and leaf
    targets (whose AccumulateGrad adds into ``.grad``).

    A non-leaf target only collects its gradient; it runs only when it leads to another
    target (this decides, as in PyTorch, whether a capture sees hooks).  Found by walking
    up from the targets, which touches only the part of the graph that leads to them.

    Common case first (``grad(loss, params)``, a Hessian-vector product): every target is a
    leaf, every leaf reached is a target and every other node has an edge.  Then each walk
    down the graph ends at a target, so every node is needed: ``deps`` itself answers
    (membership is all the engine asks), and no parent map is built (on an HVP's graph
    that map was a sixth of the pass).
    """
    if all(type(t) is AccumulateGrad for t in targets):
        if ends is None:
            ends = [n for n in deps if n.next.count(None) == len(n.next)]
        for node in ends:  # (every node of deps that sends nothing on)
            if type(node) is not AccumulateGrad or node not in targets:
                break
        else:
            return deps
    parents = {}
    for node in deps:
        for child in node.next:
            if child is not None:
                above = parents.get(child)
                if above is None:
                    parents[child] = [node]
                else:
                    above.append(node)
    stack = [t for t in targets if t in deps]
    needed = {t for t in stack if type(t) is AccumulateGrad}
    while stack:
        for parent in parents.get(stack.pop(), ()):
            if parent not in needed:
                needed.add(parent)
                stack.append(parent)
    return needed


# --------------------------------------------------------------------------- the loop
def run_backward(roots, root_grads, retain_graph, create_graph, inputs=None,
                 accumulate=True, allow_unused=False):
    """Propagate ``root_grads`` from the ``roots`` nodes back through the graph.

    Parameters
    ----------
    roots : list of Node
        The grad_fn (or leaf accumulator) of each output.
    root_grads : list
        One gradient per root, already of the root's shape: arrays, or tensors when
        ``create_graph``.
    inputs : list of (Node, output_nr) or None
        Where to stop and collect; with ``accumulate`` only these leaves get ``.grad``.
    accumulate : bool
        True for ``backward()`` (into ``.grad``), False for ``grad()`` (returned).

    Returns
    -------
    list
        The gradient captured for each entry of ``inputs`` (None where none arrived), or
        None when ``inputs`` is None.
    """
    as_tensors = create_graph
    if fw.active and not create_graph:
        # under a dual level the formulas run on tensors (recording nothing) so that the
        # tangents of saved values reach the gradients, as PyTorch's (forward-over-reverse)
        as_tensors = True
        def tensor_of(g):
            return g if g is None or isinstance(g, above.Tensor) else _wrap(g, False)

        root_grads = [(g[0], tensor_of(g[1])) if type(g) is tuple else tensor_of(g)
                      for g in root_grads]
    ends = None if inputs is None else []
    deps = _count_dependencies(roots, ends)
    buffers = {}
    for node, g in zip(roots, root_grads):
        if node.multi_output:
            buf = buffers.setdefault(node, [None] * node.n_outputs)
            nr = g[0]
            g = g[1]
            buf[nr] = g if buf[nr] is None else buf[nr] + g
        else:
            prev = buffers.get(node)
            buffers[node] = g if prev is None else prev + g

    captures = None
    needed = None
    if inputs is not None:
        captures = {}
        for position, (node, nr) in enumerate(inputs):
            captures.setdefault(node, []).append((position, nr))
        needed = _nodes_needed(deps, roots, captures, ends)
    captured = [None] * (len(inputs) if inputs is not None else 0)

    prev_mode = state.enabled
    state.enabled = create_graph
    trace = state.tracer
    check_nan = anomaly.enabled and anomaly.check_nan
    node = None
    # backward() in first order, nothing traced or captured: a leaf without hooks of any
    # kind (its tensor's, its accumulator's, post-accumulate) takes _run_plain_leaf
    plain_leaves = captures is None and trace is None and accumulate and not as_tensors
    # every node reached must run (_nodes_needed answered with deps itself): no node is
    # skipped and no edge is cut on the way to the inputs
    dense = needed is deps
    sparse = needed is not None and not dense
    # for register_multi_grad_hook: which pass runs, and which nodes it will run
    tasks = graph_tasks.stack
    tasks.append((next_task_id(), deps, needed, captures))
    # PyTorch's backward computes inf and nan silently (inf * 0 at a saturated activation,
    # the 1/x of log at 0...): NumPy's FloatingPointError warnings on the way are noise
    # that reads as a bug deep in NumPy. One errstate for the whole pass, not one per
    # derivative (each costs a microsecond or more); per thread, as errstate's.
    quiet = quiet_fp_enter()
    try:
        # a heap keyed on creation order: the most recently created ready node runs first,
        # as in PyTorch (it decides the order of hooks on sibling branches); ties (leaves)
        # go to the first pushed
        ready = [(-r.seq, _push_order(), r) for r in dict.fromkeys(roots) if deps[r] == 0]
        heapify(ready)
        while ready:
            node = heappop(ready)[2]
            g = buffers.pop(node, None)
            if trace is not None:
                trace.node_ready(node, g)
            if type(node) is AccumulateGrad:
                if (plain_leaves and g is not None and node.hooks is None
                        and node.variable._extra is None):
                    _run_plain_leaf(node.variable, g)
                else:
                    _run_leaf(node, g, captures, captured, needed, accumulate, as_tensors,
                              trace)
                continue
            hooks = node.hooks
            nxt = node.next
            if (hooks is None and g is not None and not node.multi_output
                    and (captures is None or (dense and node not in captures))
                    and (None not in nxt or nxt.count(None) != len(nxt))):
                # the common case: no hooks, no capture, an edge to send gradients along
                saved = node.saved
                if saved:
                    saved = unpack_saved(node, as_tensors)
                elif saved is None:
                    raise freed_error(node)
            else:
                prepared = _prepare_node(node, g, hooks, captures, captured, needed, accumulate,
                                         as_tensors, retain_graph, deps, ready)
                if prepared is None:
                    continue
                g, saved, shown = prepared
                # (not held past this node: a reshaped leaf asks whether its gradient, maybe
                # this very array passed on by an add, has other holders; seed 19570739)
                prepared = None
            # (a post hook reads the incoming gradient after the derivative: never reuse it)
            if (type(g) is _ndarray and g.size >= _INPLACE_MIN
                    and _getrefcount(g) <= _SOLE_LOOP_REFS and g.base is None
                    and g.flags.writeable and (hooks is None or not hooks.post)):
                sole_grad[0] = g  # ours alone: the derivative may write its result into it
                try:
                    grads = node.vjp(node, g, saved)
                finally:
                    sole_grad[0] = None
            else:
                grads = node.vjp(node, g, saved)
            if hooks is not None and hooks.post:
                grads = _run_post_hooks(node, hooks,
                                        _edge_grads(node, grads, as_tensors, sparse, needed,
                                                    captures),
                                        g if shown is None else shown[0], as_tensors)
            if check_nan:
                _check_nan(node, grads, as_tensors)
            if not retain_graph and node.saved:
                node.saved = None
                if trace is not None:
                    trace.freed(node)
            if trace is not None:
                trace.node_done(node, g, grads)
            nxt = node.next
            if len(grads) != len(nxt):
                raise _count_error(node, grads)
            nrs = node.next_nr
            for i, child in enumerate(nxt):
                if child is None:
                    continue
                gi = grads[i]
                if sparse and gi is not None and child not in needed and \
                        child not in captures:
                    # PyTorch computes no gradient for an edge that leads to no input
                    # (should_compute_output), so that node's hooks and retain_grad see
                    # none (seed 9523647)
                    gi = None
                if gi is not None:
                    if child.multi_output:
                        nr = nrs[i] if nrs else 0
                        gi = conform(gi, child.out_shape[nr], child.out_dtype[nr], node, i,
                                     as_tensors)
                        buf = buffers.get(child)
                        if buf is None:
                            buf = buffers[child] = [None] * child.n_outputs
                        buf[nr] = gi if buf[nr] is None else buf[nr] + gi
                    else:
                        gd = gi._data if as_tensors else gi
                        # (dtypes by identity: an equal twin goes to conform, which passes it)
                        if gd.shape != child.out_shape or gd.dtype is not child.out_dtype:
                            gi = conform(gi, child.out_shape, child.out_dtype, node, i,
                                         as_tensors)
                        prev = buffers.get(child)
                        if prev is None:
                            buffers[child] = gi
                        elif as_tensors:
                            buffers[child] = prev + gi
                        else:
                            buffers[child] = _sum_arrays(prev, gi)
                count = deps[child] - 1
                deps[child] = count
                if count == 0:
                    heappush(ready, (-child.seq, _push_order(), child))
            # drop this node's references, so that a gradient the next node receives is
            # seen as held by ``g`` alone when nothing else holds it (sole_grad above)
            grads = gi = gd = prev = None
    except Exception:
        if anomaly.enabled and node is not None:
            _report_forward_trace(node)
        raise
    finally:
        quiet_fp_exit(quiet)
        state.enabled = prev_mode
        tasks.pop()
    if inputs is None:
        return None
    return captured


def _count_error(node, grads):
    return RuntimeError(
        f"function {node.name()} returned an incorrect number of gradients "
        f"(expected {len(node.next)}, got {len(grads)})"
    )


def _edge_grads(node, grads, as_tensors, sparse, needed, captures):
    """A node's gradients as its post-hooks see them: each reduced to its edge's shape and
    dtype, and None on an edge that leads to no input of ``grad()``.

    PyTorch checks and reduces a node's results (validate_outputs: the count, sum_to the
    input's shape, the cast) BEFORE its post-hooks, so a hook sees ``w``'s (4,) gradient of
    ``x * w``, not the (3, 4) product, and any replacement it returns is checked against
    that.  The loop in run_backward reduces at the edge, after the hooks; doing it here
    too, for hooked nodes only, leaves the hook-free path as it was (the loop's own
    conform then finds nothing to do)."""
    nxt = node.next
    if len(grads) != len(nxt):
        raise _count_error(node, grads)
    nrs = node.next_nr
    out = list(grads)
    for i, child in enumerate(nxt):
        gi = out[i]
        if child is None or gi is None:
            continue
        if sparse and child not in needed and child not in captures:
            out[i] = None  # (should_compute_output: PyTorch computes none; the loop's cut)
            continue
        if child.multi_output:
            nr = nrs[i] if nrs else 0
            shape, dtype = child.out_shape[nr], child.out_dtype[nr]
        else:
            shape, dtype = child.out_shape, child.out_dtype
        gd = gi._data if as_tensors else gi
        if gd.shape != shape or gd.dtype != dtype:
            out[i] = conform(gi, shape, dtype, node, i, as_tensors)
    return out


def _prepare_node(node, g, hooks, captures, captured, needed, accumulate, as_tensors,
                  retain_graph, deps, ready):
    """What runs at a non-leaf node before its derivative, beyond the common case: captures
    (``grad()``/``inputs=``), output tensor hooks and retain_grad, pre-hooks, a node that got
    no gradient or sends none anywhere, a multi-output node's missing gradients.  Returns
    ``(g, saved)`` for the derivative, or None when the node is done (its children
    released).

    A node that got no gradient at all (None: undefined ones) still runs, as PyTorch's: its
    output tensors' hooks and its pre-hooks see None, a custom Function's backward gets
    zeros (or None after ``set_materialize_grads(False)``), any other derivative gives
    None for every input, which its post-hooks see, and the nodes below run in turn."""
    if g is None and node.multi_output:
        g = [None] * node.n_outputs
    if captures is None:
        if hooks is not None:
            g = _run_node_prehooks(node, hooks, g, as_tensors)
    else:
        # PyTorch's order: grad() captures the gradient before the output tensors'
        # hooks when the node must run anyway (it leads to another input), after
        # them otherwise; backward(inputs=) always stores the hooked gradient.
        here = captures.get(node)
        is_needed = node in needed
        early = here is not None and is_needed and not accumulate
        if early:
            _capture(node, g, here, captured)
        if hooks is not None:
            g = _run_node_prehooks(node, hooks, g, as_tensors)
        if here is not None and not early:
            _capture(node, g, here, captured)
        if not is_needed:
            _release_children(node, deps, ready)
            return None
    if hooks is not None and hooks.pre:
        g = _run_pre_hooks(node, hooks, g, as_tensors)
    before = g
    if g is None or (node.multi_output and all(x is None for x in g)):
        if getattr(node, "fn_cls", None) is None:
            return _run_undefined(node, g, hooks, as_tensors, retain_graph, deps, ready)
        # a custom Function: PyTorch's PyNode calls its backward anyway, with zeros unless
        # the forward called ``ctx.set_materialize_grads(False)`` (then None; a multi-output
        # node's zeros come from _materialize_multi below)
        if g is None and getattr(node, "_materialize", True):
            g = _zeros_like(node.out_shape, node.out_dtype, as_tensors)
    nxt = node.next
    if nxt.count(None) == len(nxt):
        # its gradients go nowhere (its inputs are views made under no_grad): PyTorch
        # computes no output, but unpacks the saved values first (a changed or freed
        # one raises) and frees them after
        _unpack_results(node, as_tensors)
        if type(node).__name__ == "NotImplemented":  # (1.5 % x: PyTorch still calls
            node.vjp(node, g, node.saved)  # its function, which raises; seed 9966412)
        if not retain_graph and node.saved:
            node.saved = None
        _release_children(node, deps, ready)
        return None
    saved = unpack_saved(node, as_tensors)
    if node.multi_output:
        g = _materialize_multi(node, g, as_tensors)
    # post-hooks see the gradients the node received, not the zeros put in for the missing
    # ones (PyTorch materializes inside the node's function)
    shown = [before] if before is not g and hooks is not None and hooks.post else None
    return g, saved, shown


def _run_undefined(node, g, hooks, as_tensors, retain_graph, deps, ready):
    """A built-in node that got no gradient at all (an undefined one: slogdet's sign has
    none): PyTorch runs it anyway.  It unpacks its saved values first (a changed or freed
    one raises: seeds 15022920, 15099131) and frees them after; its derivative gives no
    gradient to any input, which its post-hooks see as None each; the nodes below run in
    turn (with None, unless another edge brings them one)."""
    if node.saved is None:  # (freed by an earlier backward: it saved something)
        raise freed_error(node)
    if node.saved:
        _unpack_results(node, as_tensors)
        if not retain_graph:
            node.saved = None
    if hooks is not None and hooks.post:
        # (a hook may return None for each; replacing one raises, in _check_hook_result)
        _run_post_hooks(node, hooks, [None] * len(node.next), g, as_tensors)
    _release_children(node, deps, ready)


def _zeros_like(shape, dtype, as_tensors):
    x = np.zeros(shape, dtype)
    return above.make_tensor(x) if as_tensors else x


# Gradients at least this big (elements) are summed in place when one of them is ours
# alone; below it a fresh array is as cheap (NumPy's own temporary elision uses 256 KiB).
_INPLACE_MIN = 1 << 15
# what getrefcount reports for a gradient held only by run_backward's local ``g`` (and
# getrefcount's argument): then no other edge, saved value, capture or caller sees it
_SOLE_LOOP_REFS = 2 if _EXACT_REFCOUNTS else -1
# what getrefcount reports for an array held only by run_backward's loop (the derivative's
# result tuple, ``gi`` and ``gd``) and _sum_arrays itself (its argument, getrefcount's).
# Any other holder (a saved value, the caller's tensor, a second slot of the tuple) makes
# it more; tests/test_inplace_accumulation.py checks both sides if the loop changes.
_SOLE_REFS = 5 if _EXACT_REFCOUNTS else -1


def _sum_arrays(prev, gi):
    """``prev + gi`` for two gradients on their way to one node (first order).

    A derivative's freshly computed result that nothing else references (not saved, not a
    view, not the caller's gradient passed on) takes the sum in place: on big tensors that
    saves an allocation and its page faults for every gradient that is summed (bench/ (d)).
    Addition commutes exactly, so the values are those of ``prev + gi``."""
    if (type(gi) is _ndarray and type(prev) is _ndarray and gi.size >= _INPLACE_MIN
            and gi.base is None and gi.shape == prev.shape and gi.dtype == prev.dtype
            and gi.flags.writeable and _getrefcount(gi) <= _SOLE_REFS):
        gi += prev
        return gi
    return prev + gi


def _check_nan(node, grads, as_tensors):
    """Anomaly mode: a NaN in what a node returned is an error naming the node."""
    for i, gi in enumerate(grads):
        if gi is None:
            continue
        data = gi._data if as_tensors else gi
        if data.dtype.kind in "fc" and bool(namespace(data).isnan(data).any()):
            raise RuntimeError(
                f"Function '{node.name()}' returned nan values in its {i}th output."
            )


def _report_forward_trace(node):
    import warnings

    # every node recorded while anomaly mode was on kept its forward stack (graph.on_record)
    stack = forward_traces.get(node)
    where = f" Traceback of forward call that caused the error:\n{stack}" if stack else ""
    warnings.warn(f"Error detected in {node.name()}.{where}", UserWarning, stacklevel=4)


def _capture(node, g, here, captured):
    for position, nr in here:
        captured[position] = g[nr] if node.multi_output and g is not None else g


def _release_children(node, deps, ready):
    for child in node.next:
        if child is not None:
            count = deps[child] - 1
            deps[child] = count
            if count == 0:
                heappush(ready, (-child.seq, _push_order(), child))


def _materialize_function(node):
    """Whether a custom Function's node that got no gradient at all runs its backward: with
    zeros for every output (PyTorch's PyNode materializes them), or with None where the
    forward called ``ctx.set_materialize_grads(False)``.  The engine then runs it as one
    that got gradients (``_materialize_multi`` fills a multi-output node's zeros)."""
    return True


def _materialize_multi(node, g, as_tensors):
    """Outputs of a multi-output node that got no gradient receive zeros.

    Unless a custom Function asked for ``None`` (``ctx.set_materialize_grads(False)``).
    """
    # (which outputs got none: PyTorch's undefined gradients, which svd/eigh's derivatives
    # tell from a zero one: seed 19734708)
    node.undefined_grads = frozenset(nr for nr, x in enumerate(g) if x is None)
    if not node.undefined_grads or not getattr(node, "_materialize", True):
        return g
    out = []
    for nr, x in enumerate(g):
        out.append(_zeros_like(node.out_shape[nr], node.out_dtype[nr], as_tensors)
                   if x is None else x)
    return out



def call_node(node, grads):
    """``grad_fn(grad)``: run one node's derivative by hand, as PyTorch allows."""
    saved = unpack_saved(node, True)
    if node.multi_output:  # (by hand: no engine run's record of undefined gradients)
        node.undefined_grads = None
    result = node.vjp(node, list(grads) if node.multi_output else grads[0], saved)
    return result if len(result) != 1 else result[0]


def _node_call(self, *grads):
    """``grad_fn(grad)``: run one node's derivative by hand, as PyTorch allows."""
    return call_node(self, grads)


# graph.py cannot import the engine (the engine imports graph.py): the call is attached here
Node.__call__ = _node_call
