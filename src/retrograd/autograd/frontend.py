"""``backward`` and ``grad``: the two ways into the engine.

They validate their arguments here, then call the one engine
(``engine.run_backward``); they differ only in accumulating into ``.grad`` or returning.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..backend import as_array as _as_array
from .grad_mode import state as _state
from .graph import accumulator_of
from . import engine

__all__ = ["backward", "grad"]


# the Tensor class (the engine is handed it when the package is assembled)
_tensor_cls = engine._tensor_cls


def _as_list(x):
    Tensor = _tensor_cls()
    if x is None:
        return None
    if isinstance(x, Tensor):
        return [x]
    return list(x)


_TENSOR_MODULE = __package__.rsplit(".", 1)[0] + ".tensor"
_tensor_module = []  # the tensor module, found on first use (it is above this layer)


def _rederive(t):
    # PyTorch reads a root's or an input's grad_fn here: an adopted view is re-derived
    # (tensor.rederive_view; the module, not the package's tensor() function)
    if not _tensor_module:
        import sys

        _tensor_module.append(sys.modules[_TENSOR_MODULE])
    tensor = _tensor_module[0]
    if tensor.adopted_views:
        tensor.rederive_view(t, t._grad_fn)


def _root_node(t, i):
    if t._grad_fn is not None:
        _rederive(t)
        return t._grad_fn
    if t._requires_grad:
        acc = accumulator_of(t)
        if acc is not None:  # (None: a view made under no_grad, whose gradient goes nowhere)
            return acc
    raise RuntimeError(
        f"element {i} of tensors does not require grad and does not have a grad_fn: the "
        f"tensor (shape {list(t.shape)}) was not computed from any tensor with "
        "requires_grad=True, so there is nothing to differentiate. Create the inputs with "
        "requires_grad=True (or call .requires_grad_()) before computing it, and make sure it "
        "was not computed under no_grad()."
    )


def _make_root_grad(out, grad, i, create_graph):
    """The gradient that starts backward at ``out``, shape-checked (and broadcast)."""
    # (the engine's handles on the tensor layer: an import statement here was a
    # relative import's machinery every training step)
    Tensor, make_tensor = engine.above.Tensor, engine.above.make_tensor
    data = out._data
    if grad is None:
        if data.size != 1:
            raise RuntimeError(
                f"grad can be implicitly created only for scalar outputs: output {i} has shape "
                f"{list(data.shape)}. backward() needs to know how to weight each output "
                "element: pass gradient= a tensor of the output's shape (e.g. "
                "out.backward(retrograd.ones_like(out)) sums the elements' gradients), or "
                "reduce the output to one element first (out.sum().backward())."
            )
        if type(data) is np.ndarray:
            # (np.array: a fifth of np.ones's cost for the usual 0-d loss)
            g = np.array(1, data.dtype) if not data.ndim else np.ones(data.shape, data.dtype)
        else:
            g = _namespace(data).ones(data.shape, dtype=data.dtype)
        tracer = _state.tracer
        if tracer is not None:
            tracer.root_grad(i, out, None, g)
        return make_tensor(g) if create_graph else g
    given = grad  # what the caller passed, for autograd.trace()
    if not isinstance(grad, Tensor):
        if isinstance(grad, (int, float)):
            grad = make_tensor(np.full(data.shape, grad, data.dtype))
        else:
            raise TypeError(
                f"gradients can be either Tensors or None, but got {type(grad).__name__}"
            )
    gdata = grad._data
    if gdata.shape != data.shape:
        if gdata.size == 1 and data.size == 1:
            grad = grad.reshape(data.shape)
        elif _broadcastable(gdata.shape, data.shape):
            # retrograd extension (the seed post's PyTorch accepted it): broadcast
            # the gradient, e.g. [1, 0] against a 2x2 output weights its first column.
            grad = grad.expand(*data.shape)
        else:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {list(gdata.shape)} and "
                f"output[{i}] has a shape of {list(data.shape)}. The gradient must have the "
                "output's shape (or, in retrograd, a shape that broadcasts to it); pass e.g. "
                "retrograd.ones_like(output) to weight every element by one."
            )
    if grad._data.dtype != data.dtype:
        # as PyTorch, a gradient of another dtype (double for a float output, int, bool)
        # is cast to the output's dtype before it enters the graph
        grad = grad.to(out.dtype)
    tracer = _state.tracer
    if tracer is not None:
        tracer.root_grad(i, out, given, grad)
    if create_graph:
        return grad
    return grad._data


def _namespace(a):
    from ..backend import namespace

    return namespace(a)


def _broadcastable(src, dst) -> bool:
    if len(src) > len(dst):
        return False
    return all(s == 1 or s == d for s, d in zip(reversed(src), reversed(dst)))


def _legacy_kwargs(kwargs, grad, retain_graph, grad_name):
    """Accept the seed-era names grad_variables= and retain_variables= (with a warning)."""
    if "grad_variables" in kwargs:
        warnings.warn(
            f"'grad_variables' is a deprecated name for '{grad_name}' (it was renamed in "
            f"PyTorch 0.4); use {grad_name}=", DeprecationWarning, stacklevel=3,
        )
        value = kwargs.pop("grad_variables")
        if grad is not None and value is not None:
            raise RuntimeError(f"pass either {grad_name}= or grad_variables=, not both")
        grad = value
    if "retain_variables" in kwargs:
        warnings.warn(
            "'retain_variables' is a deprecated name for 'retain_graph'; use retain_graph=",
            DeprecationWarning, stacklevel=3,
        )
        value = kwargs.pop("retain_variables")
        if retain_graph is None:
            retain_graph = value
    if kwargs:
        raise TypeError(f"backward() got unexpected keyword arguments {sorted(kwargs)}")
    return grad, retain_graph


def _input_targets(inputs, what):
    targets = []
    for i, t in enumerate(inputs):
        if not isinstance(t, _tensor_cls()):
            raise TypeError(f"{what}: inputs[{i}] is {type(t).__name__}, not a Tensor")
        if t._grad_fn is not None:
            _rederive(t)
            targets.append((t._grad_fn, t._nr))
        elif t._requires_grad:
            targets.append((accumulator_of(t), 0))
        else:
            raise RuntimeError(
                f"One of the differentiated Tensors does not require grad (inputs[{i}], shape "
                f"{list(t.shape)}); set requires_grad=True on it before computing the outputs"
            )
    return targets


def _run_marked(checkpoint_valid, *args, **kwargs):
    """engine.run_backward, telling a reentrant checkpoint whether it may run inside (only
    for a backward() without inputs, as PyTorch's ``_is_checkpoint_valid``)."""
    prev = _state.checkpoint_valid
    _state.checkpoint_valid = checkpoint_valid
    try:
        return engine.run_backward(*args, **kwargs)
    finally:
        _state.checkpoint_valid = prev


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None, **legacy):
    """Accumulate the gradients of ``tensors`` w.r.t. the graph leaves into their ``.grad``.

    Parameters
    ----------
    tensors : Tensor or sequence of Tensor
        Outputs to differentiate.
    grad_tensors : Tensor or sequence, optional
        The weight of each output (its "gradient"); may be omitted for one-element outputs.
        A weight whose shape broadcasts to the output's is broadcast (retrograd extension).
    retain_graph : bool, optional
        Keep saved values so the graph can be differentiated again (default: create_graph).
    create_graph : bool
        Record the backward pass so the gradients can themselves be differentiated.
    inputs : sequence of Tensor, optional
        Accumulate only into these.

    Examples
    --------
    >>> import retrograd as T
    >>> x = T.tensor([1.0, 2.0], requires_grad=True)
    >>> T.autograd.backward((x ** 2).sum())
    >>> x.grad
    tensor([2., 4.])
    """
    if grad_variables is not None:
        legacy["grad_variables"] = grad_variables
    grad_tensors, retain_graph = _legacy_kwargs(legacy, grad_tensors, retain_graph,
                                                "grad_tensors")
    outputs = _as_list(tensors)
    grads = _as_list(grad_tensors) if grad_tensors is not None else [None] * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(
            f"got {len(grads)} gradients for {len(outputs)} tensors; pass one gradient per "
            "output (None for one-element outputs)"
        )
    if retain_graph is None:
        retain_graph = create_graph
    inputs = _as_list(inputs)
    if inputs is not None and not inputs:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    roots = [_root_node(t, i) for i, t in enumerate(outputs)]
    root_grads = [_make_root_grad(t, g, i, create_graph) for i, (t, g) in
                  enumerate(zip(outputs, grads))]
    roots, root_grads = _multi_output_roots(outputs, roots, root_grads)
    targets = _input_targets(inputs, "backward") if inputs is not None else None
    captured = _run_marked(inputs is None, roots, root_grads, retain_graph, create_graph,
                           targets, accumulate=True)
    if inputs is not None:
        from .accumulate_grad import _accumulate_into_grad

        # non-leaf inputs get .grad, as PyTorch's backward(inputs=...); one that retains
        # its grad already got it from the engine
        for t, g in zip(inputs, captured):
            if t._grad_fn is not None and g is not None and not t.retains_grad:
                _accumulate_into_grad(t, g, create_graph)


def _multi_output_roots(outputs, roots, root_grads):
    out_grads = []
    for t, node, g in zip(outputs, roots, root_grads):
        out_grads.append((t._nr, g) if node.multi_output else g)
    return roots, out_grads


def unused_input_error(i, t):
    """grad()'s error for an input no path from the outputs reaches (PyTorch's words)."""
    return RuntimeError(
        f"One of the differentiated Tensors appears to not have been used in the "
        f"graph (inputs[{i}], shape {list(t.shape)}): no path leads from the "
        "outputs back to it. Set allow_unused=True if this is the desired behavior "
        "(its gradient is then None), or materialize_grads=True for zeros.")


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of ``outputs`` w.r.t. ``inputs``, returned (``.grad`` is untouched).

    Examples
    --------
    >>> import retrograd as T
    >>> x = T.tensor(3.0, requires_grad=True)
    >>> (g,) = T.autograd.grad(x ** 3, x, create_graph=True)
    >>> g, T.autograd.grad(g, x)[0]
    (tensor(27., grad_fn=<MulBackward0>), tensor(18.))
    """
    # (the tensor module sits above this layer: engine.above finds it once; an import
    # statement here ran importlib's from-list machinery on every call)
    make_tensor = engine.above.make_tensor
    if not only_inputs:
        warnings.warn(
            "only_inputs argument is deprecated and is ignored now (defaults to True). To "
            "accumulate gradient for other parts of the graph, please use "
            "retrograd.autograd.backward.", FutureWarning, stacklevel=2,
        )
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                             allow_unused, materialize_grads)
    if allow_unused is None:
        allow_unused = materialize_grads
    elif materialize_grads and not allow_unused:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    outs = _as_list(outputs)
    ins = _as_list(inputs)
    if not ins:
        raise RuntimeError(
            "`inputs` argument to `grad()` cannot be empty: pass the tensors to "
            "differentiate with respect to"
        )
    gos = _as_list(grad_outputs) if grad_outputs is not None else [None] * len(outs)
    if len(gos) != len(outs):
        raise RuntimeError(
            f"grad requires one grad_output per output: got {len(gos)} for {len(outs)} outputs"
        )
    if retain_graph is None:
        retain_graph = create_graph
    roots = [_root_node(t, i) for i, t in enumerate(outs)]
    root_grads = [_make_root_grad(t, g, i, create_graph) for i, (t, g) in
                  enumerate(zip(outs, gos))]
    roots, root_grads = _multi_output_roots(outs, roots, root_grads)
    targets = _input_targets(ins, "grad")
    captured = _run_marked(False, roots, root_grads, retain_graph, create_graph, targets,
                           accumulate=False)
    results = []
    for i, (t, g) in enumerate(zip(ins, captured)):
        if g is None:
            if materialize_grads:
                results.append(make_tensor(np.zeros_like(np.asarray(t._data))))
                continue
            if not allow_unused:
                raise unused_input_error(i, t)
            results.append(None)
        elif create_graph or isinstance(g, _tensor_cls()):  # (a tensor under a dual level)
            results.append(g)
        else:
            g = _as_array(g)
            if not g.flags.writeable:
                g = g.copy()
            results.append(make_tensor(g))
    return tuple(results)


#: ``func.batched_backward.batched_grad``, installed when ``retrograd.func`` is imported (the
#: batched backward runs derivatives on vmap's BatchedTensors, a layer above this one)
batched_backward = None


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    """``is_grads_batched=True``: one backward pass for the batch (``batched_backward``),
    or, before retrograd.func is loaded, the per-sample loop."""
    if batched_backward is not None:
        return batched_backward(outputs, inputs, grad_outputs, retain_graph, create_graph,
                                allow_unused, materialize_grads, _batched_loop)
    return _batched_loop(outputs, inputs, grad_outputs, retain_graph, create_graph,
                         allow_unused, materialize_grads)


def _batched_loop(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    """``is_grads_batched=True`` as one vector-Jacobian product per leading index of the
    grad_outputs, stacked: the reference, and what a graph with hooks runs (they must see
    plain per-sample gradients)."""
    from ..ops.shape import stack
    from ..tensor import make_tensor

    outs = _as_list(outputs)
    gos = _as_list(grad_outputs) if grad_outputs is not None else None
    if gos is None or any(g is None for g in gos):
        raise RuntimeError(
            "is_grads_batched=True needs grad_outputs: one tensor per output whose first "
            "dimension is the batch of vectors to multiply the Jacobian with"
        )
    sizes = {g.shape[0] if g.ndim else None for g in gos}
    if len(sizes) != 1 or None in sizes:
        raise RuntimeError(
            f"is_grads_batched=True: every grad_output needs the same leading batch dimension, "
            f"got shapes {[list(g.shape) for g in gos]}"
        )
    (batch,) = sizes
    per_item = []
    for b in range(batch):
        # the graph is kept for every item but the last, which frees it as one call would
        per_item.append(grad(outs, inputs, [g[b] for g in gos],
                             retain_graph=True if b < batch - 1 else retain_graph,
                             create_graph=create_graph,
                             allow_unused=allow_unused or materialize_grads))
    results = []
    for i, t in enumerate(_as_list(inputs)):
        column = [item[i] for item in per_item]
        if not column or column[0] is None:
            # as PyTorch: materialize_grads gives an unused input zeros of its own shape
            results.append(make_tensor(np.zeros(t.shape, t._data.dtype)) if materialize_grads
                           else None)
        else:
            results.append(stack(column))
    return tuple(results)
