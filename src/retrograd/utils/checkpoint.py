"""Activation checkpointing, as ``torch.utils.checkpoint``: trade compute for memory.

``checkpoint(fn, *args)`` runs ``fn`` without keeping the values its ops save for backward;
backward runs ``fn`` again to get them back.  Gradients equal those of the un-checkpointed
run; the generator state is restored for the recompute (``preserve_rng_state``), so dropout
draws the same mask twice.

* ``use_reentrant=True`` (PyTorch's old default): the forward runs under no_grad; backward
  recomputes and calls ``autograd.backward`` on the recomputed outputs, so parameters the
  function captures (module weights) get their ``.grad`` from that inner backward.  As in
  PyTorch, only ``.backward()`` without ``inputs`` may run through it: ``autograd.grad``
  raises PyTorch's RuntimeError.
* ``use_reentrant=False`` (as PyTorch, with saved-tensor hooks): the function runs once on
  the real inputs, recording its graph, under ``saved_tensors_hooks`` whose pack keeps a
  small holder instead of each saved tensor.  The outputs are the function's own (their
  grad_fn is its last op); captured tensors, leaves or not, get their gradients through the
  ordinary graph; ``autograd.grad``, ``create_graph`` and double backward work.  In
  backward, the first node to unpack a holder runs the function again under hooks that
  collect the recomputed saved tensors by position (stopping early once all are back), and
  each node then takes its own.  ``determinism_check='default'`` compares their shapes,
  dtypes and devices with the forward's.
"""

from __future__ import annotations

import contextlib
import warnings
import weakref

from ..autograd import Function
from ..autograd.frontend import backward as _backward
from ..autograd.grad_mode import enable_grad, no_grad, state
from ..autograd.graph import current_graph_task_id, saved_tensors_hooks
from ..random import get_rng_state, set_rng_state
from ..tensor import Tensor

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "set_checkpoint_early_stop"]


class CheckpointError(RuntimeError):
    """The recomputation differs from the original forward (``determinism_check``)."""


#: set by ``set_checkpoint_early_stop``: overrides every checkpoint's ``early_stop``
_early_stop_override = None


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Inside it, non-reentrant checkpoints stop (or not) recomputing once every saved
    tensor is back, whatever their ``early_stop`` argument says (as PyTorch's)."""
    global _early_stop_override
    prev = _early_stop_override
    _early_stop_override = enable
    try:
        yield
    finally:
        _early_stop_override = prev


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


class _StopRecomputationError(Exception):
    """Raised by the recompute's pack hook once every value still needed is back (early
    stop): the rest of the function need not run."""


class _Holder:
    """What the forward's pack hook keeps in place of a saved tensor: per backward pass
    (graph task id), the index of its recomputed value, None once unpacked."""

    __slots__ = ("handles", "__weakref__")

    def __init__(self):
        self.handles = {}


def _metadata(x):
    return {"shape": tuple(x.shape), "dtype": x.dtype, "device": x.device}


class _Frame:
    """One checkpointed call: how to recompute it and what its forward saved."""

    def __init__(self, recompute, early_stop, metadata_fn):
        self.recompute = recompute
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.weak_holders = []  # one weakref per tensor the forward saved, in pack order
        self.x_metadatas = []
        self.recomputed = {}  # graph task id -> {index: recomputed tensor}
        self.recomp_counter = {}
        self.is_recomputed = set()
        self.forward_completed = False

    def check_recomputed_tensors_match(self, gid):
        if len(self.weak_holders) != self.recomp_counter[gid]:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {self.recomp_counter[gid]}.\n"
                "Make the checkpointed function run the same ops each time (or pass "
                "determinism_check='none').")
        if self.metadata_fn is None:
            return
        different = ""
        for idx, ref in enumerate(self.weak_holders):
            holder = ref()
            if holder is None:
                continue
            now = self.metadata_fn(self.recomputed[gid][holder.handles[gid]])
            if now != self.x_metadatas[idx]:
                different += (f"tensor at position {idx}:\nsaved metadata: "
                              f"{self.x_metadatas[idx]}\nrecomputed metadata: {now}\n")
        if different:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                f"different metadata than during the forward pass.\n{different}.\n"
                "Make the checkpointed function deterministic in its shapes and dtypes, or "
                "pass determinism_check='none'.")


def _recomputation_hooks(frame, gid):
    """The hooks active while the function runs again in backward: each tensor saved is
    matched, by position, to the holder the forward left for it."""

    def pack(x):
        x = x.detach() if x.requires_grad else x
        idx = frame.recomp_counter[gid]
        frame.recomp_counter[gid] = idx + 1
        if idx >= len(frame.weak_holders):
            raise CheckpointError(
                "torch.utils.checkpoint: trying to save more tensors during recomputation "
                "than during the original forward pass.")
        holder = frame.weak_holders[idx]()
        if holder is not None:  # None: the node that saved it is gone, nothing to keep
            holder.handles[gid] = idx
            frame.recomputed[gid][idx] = x
        if frame.early_stop and frame.recomp_counter[gid] == len(frame.weak_holders):
            raise _StopRecomputationError
        return x

    return saved_tensors_hooks(pack, lambda x: x)


def _checkpoint_hooks(frame):
    """The hooks active while the checkpointed function runs forward: saved tensors are
    dropped (a holder stands in); the first unpack in a backward pass recomputes them."""

    def pack(x):
        frame.weak_holders.append(weakref.ref(holder := _Holder()))
        if frame.metadata_fn is not None:
            frame.x_metadatas.append(frame.metadata_fn(x))
        return holder

    def unpack(holder):
        gid = current_graph_task_id()
        if gid == -1:  # unpacked outside backward (grad_fn._saved_self): a one-off id
            gid = object()
        if gid not in frame.is_recomputed:
            frame.recomputed[gid] = {}
            frame.recomp_counter[gid] = 0
            try:
                with _recomputation_hooks(frame, gid), enable_grad():
                    frame.recompute()
            except _StopRecomputationError:
                pass
            frame.is_recomputed.add(gid)
            frame.check_recomputed_tensors_match(gid)
        idx = holder.handles.get(gid)
        if idx is None:
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
                "already unpacked once. If you are calling ctx.saved_tensors in backward, make "
                "sure to do so only once. Otherwise please open an issue with details on your "
                "use case.")
        holder.handles[gid] = None
        return frame.recomputed[gid].pop(idx)

    return saved_tensors_hooks(pack, unpack)


def _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, debug,
                                  early_stop, args, kwargs):
    """As PyTorch: the function runs once, on the real inputs, under saved-tensor hooks that
    keep a holder instead of each saved tensor; its outputs are its own (grad_fn: its last
    op).  In backward, the first unpack runs the function again (generator state replayed)
    and hands each node its recomputed values."""
    forward_ctx, recompute_ctx = context_fn()
    rng_state = get_rng_state() if preserve else None

    def recompute():
        with _rng_restored(rng_state, preserve), recompute_ctx:
            function(*args, **kwargs)

    if not state.enabled:
        return function(*args, **kwargs)
    if _early_stop_override is not None:
        early_stop = _early_stop_override
    frame = _Frame(recompute, early_stop,
                   _metadata if determinism_check == "default" else None)
    raised = False
    with _checkpoint_hooks(frame), forward_ctx:
        try:
            outputs = function(*args, **kwargs)
        except BaseException:
            raised = True
            raise
    if raised:  # the forward context swallowed the function's exception
        raise RuntimeError(
            "torch.utils.checkpoint: the forward context provided by context_fn suppressed an "
            "exception raised during the checkpointed forward. This is not supported because "
            "checkpoint cannot return a value for a failed forward.")
    frame.forward_completed = True
    return outputs


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
                                         debug, early_stop, args, kwargs)


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
