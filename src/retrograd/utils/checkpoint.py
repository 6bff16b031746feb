"""Activation checkpointing, as ``torch.utils.checkpoint``: trade compute for memory.

``checkpoint(fn, *args)`` runs ``fn`` without keeping the values its ops save for backward;
the graph from its outputs holds one node (a custom :class:`~retrograd.autograd.Function`)
whose backward runs ``fn`` again, with recording on, and differentiates that recomputation.
Gradients equal those of the un-checkpointed run; the generator state is restored for the
recompute (``preserve_rng_state``), so dropout draws the same mask twice.

* ``use_reentrant=True`` (PyTorch's old default): the forward runs under no_grad; backward
  recomputes and calls ``autograd.backward`` on the recomputed outputs, so parameters the
  function captures (module weights) get their ``.grad`` from that inner backward.  As in
  PyTorch, only ``.backward()`` without ``inputs`` may run through it: ``autograd.grad``
  raises PyTorch's RuntimeError.
* ``use_reentrant=False``: the forward runs once with recording on, to find the leaf tensors
  the function captures (parameters); that graph is dropped at once.  The checkpoint node
  takes the inputs *and* those leaves as its inputs, so ``autograd.grad``, ``create_graph``
  and double backward work.  (PyTorch implements it with saved-tensor hooks, so its outputs'
  grad_fn is the function's last op; here it is ``CheckpointBackward``.)  A captured
  *non-leaf* tensor that requires grad is not supported: pass it as an argument.
"""

from __future__ import annotations

import contextlib
import warnings

from ..autograd import Function
from ..autograd.frontend import backward as _backward
from ..autograd.frontend import grad as _grad
from ..autograd.grad_mode import enable_grad, no_grad, state
from ..autograd.graph import AccumulateGrad
from ..random import get_rng_state, set_rng_state
from ..tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError"]


class CheckpointError(RuntimeError):
    """The recomputation differs from the original forward (``determinism_check``)."""


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


_DETERMINISM_MODES = ("default", "none")


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


@contextlib.contextmanager
def _rng_restored(saved_state, preserve):
    """Run the recompute from the forward's generator state, then put the current one back."""
    if not preserve:
        yield
        return
    current = get_rng_state()
    set_rng_state(saved_state)
    try:
        yield
    finally:
        set_rng_state(current)


def _detached_inputs(inputs, requires=None):
    """Fresh leaves for the recompute; ``requires`` (per input) where the tensors came back
    from saved_tensors, which do not carry the inputs' requires_grad."""
    if requires is None:
        requires = [isinstance(x, Tensor) and x.requires_grad for x in inputs]
    return tuple(x.detach().requires_grad_(r) if isinstance(x, Tensor) else x
                 for x, r in zip(inputs, requires))


def _check_same(outputs, metadata, determinism_check):
    if determinism_check != "default":
        return
    now = [(tuple(o.shape), o.dtype) if isinstance(o, Tensor) else None for o in outputs]
    if now != metadata:
        raise CheckpointError(
            "torch.utils.checkpoint: Recomputed values have different metadata than during "
            f"the original forward pass: outputs were {metadata}, the recompute gave {now}. "
            "Make the checkpointed function deterministic in its shapes and dtypes, or pass "
            "determinism_check='none'.")


class CheckpointFunction(Function):
    """use_reentrant=True: forward under no_grad, recompute and backward inside backward."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.rng_state = get_rng_state()
        # tensors go through save_for_backward (version checks); the rest stays on ctx
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*[args[i] for i in ctx.tensor_indices])
        with no_grad():
            outputs = run_function(*args)
        ctx.out_meta = [(tuple(o.shape), o.dtype) if isinstance(o, Tensor) else None
                        for o in _as_tuple(outputs)]
        return outputs

    @staticmethod
    def backward(ctx, *grads):
        if not state.checkpoint_valid:
            # the inner backward would accumulate into the parameters' .grad behind grad()
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() "
                "or passing an `inputs` parameter to .backward(). To resolve this error, you "
                "can either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument.")
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        detached = _detached_inputs(inputs, ctx.needs_input_grad[2:])
        with _rng_restored(getattr(ctx, "rng_state", None), ctx.preserve_rng_state):
            with enable_grad():
                outputs = _as_tuple(ctx.run_function(*detached))
        _check_same(outputs, ctx.out_meta, "default")
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary")
        _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(x.grad if isinstance(x, Tensor) else None
                                    for x in detached)


class Checkpoint(Function):
    """use_reentrant=False: inputs plus captured leaves in, outputs computed beforehand."""

    @staticmethod
    def forward(ctx, plan, *tensors):
        ctx.plan = plan
        ctx.save_for_backward(*tensors[:len(plan.tensor_indices)])
        outputs = plan.outputs
        plan.outputs = None  # the node must not keep them (they point back at it)
        return outputs

    @staticmethod
    def backward(ctx, *grads):
        plan = ctx.plan
        # the leaves themselves (the recompute uses them, not copies); the inputs saved
        args, leaves = ctx.saved_tensors[:len(plan.tensor_indices)], plan.leaves
        inputs = list(plan.inputs)
        for i, t in zip(plan.tensor_indices, args):
            inputs[i] = t
        detached = _detached_inputs(inputs, plan.requires)
        create_graph = state.enabled  # engine turned recording on: create_graph=True
        _, recompute_ctx = plan.context_fn()
        with _rng_restored(plan.rng_state, plan.preserve), recompute_ctx, enable_grad():
            outputs = _as_tuple(plan.function(*detached, **plan.kwargs))
        _check_same(outputs, plan.out_meta, plan.determinism_check)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        wrt = [detached[i] for i in plan.tensor_indices] + list(leaves)
        targets = [(k, t) for k, t in enumerate(wrt) if t.requires_grad]
        result = [None] * len(wrt)
        if pairs and targets:
            got = _grad([o for o, _ in pairs], [t for _, t in targets], [g for _, g in pairs],
                        create_graph=create_graph, allow_unused=True)
            for (k, _), g in zip(targets, got):
                result[k] = g
        return (None,) + tuple(result)


class _Plan:
    """What the non-reentrant backward needs to recompute (kept off the tensors' graph)."""

    __slots__ = ("function", "inputs", "tensor_indices", "kwargs", "preserve", "rng_state",
                 "context_fn", "determinism_check", "out_meta", "outputs", "requires",
                 "leaves")


def _captured_leaves(outputs, inputs, start_seq):
    """Leaf tensors requiring grad that the recorded graph of ``outputs`` reaches, other than
    ``inputs``; raises for a captured non-leaf (its history would be cut)."""
    own = {id(t) for t in inputs if isinstance(t, Tensor)}
    leaves, seen = [], set()
    stack = [o.grad_fn for o in outputs if isinstance(o, Tensor) and o.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            if id(node.variable) not in own:
                leaves.append(node.variable)
            continue
        if node.seq < start_seq:
            raise NotImplementedError(
                "checkpoint(use_reentrant=False): the checkpointed function uses a tensor "
                f"that requires grad and was computed outside it (its grad_fn is "
                f"{node.name()}); retrograd cannot route gradients into it. Pass that tensor "
                "to checkpoint as an argument, or use use_reentrant=True.")
        stack.extend(node.next)
    return leaves


def _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, args,
                                  kwargs):
    from ..autograd.graph import next_sequence_nr

    plan = _Plan()
    plan.function, plan.kwargs, plan.preserve = function, kwargs, preserve
    plan.context_fn, plan.determinism_check = context_fn, determinism_check
    plan.rng_state = get_rng_state() if preserve else None
    plan.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    plan.inputs = [None if isinstance(a, Tensor) else a for a in args]
    detached = _detached_inputs(args)
    plan.requires = [isinstance(a, Tensor) and a.requires_grad for a in args]
    start_seq = next_sequence_nr()
    forward_ctx, _ = context_fn()
    with forward_ctx:
        recording = state.enabled
        outputs = function(*detached, **kwargs)
    outs = _as_tuple(outputs)
    leaves = _captured_leaves(outs, detached, start_seq) if recording else []
    plan.leaves = leaves
    plan.out_meta = [(tuple(o.shape), o.dtype) if isinstance(o, Tensor) else None
                     for o in outs]
    # only the values go on: the graph just recorded (and what it saved) dies here
    plain = tuple(o.detach() if isinstance(o, Tensor) else o for o in outs)
    plan.outputs = plain if isinstance(outputs, tuple) else plain[0]
    del outputs, outs
    return Checkpoint.apply(plan, *[args[i] for i in plan.tensor_indices], *leaves)


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, early_stop=True, **kwargs):
    """Run ``function(*args)`` without keeping its intermediate values; recompute in backward.

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd.utils.checkpoint import checkpoint
    >>> x = T.ones(3, requires_grad=True)
    >>> y = checkpoint(lambda a: (a.sin() * 2).sum(), x, use_reentrant=False)
    >>> y.backward(); bool(T.allclose(x.grad, 2 * x.cos()))
    True
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if determinism_check not in _DETERMINISM_MODES:
        raise ValueError(f"determinism_check should be one of {list(_DETERMINISM_MODES)}, "
                         f"but got {determinism_check}")
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        if state.enabled and not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          stacklevel=2)
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check,
                                         args, kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):  # noqa: A002
    """Checkpoint a sequence of layers in ``segments`` chunks (the last chunk runs as is)."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should "
            "be passed explicitly. In version 2.9 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is recommended, but if you need to preserve "
            "the current default behavior, you can pass use_reentrant=True. Refer to docs for "
            "more details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    if hasattr(functions, "children"):  # an nn.Sequential
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,  # noqa: A001
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)
