"""The recorded graph: nodes (``grad_fn``), leaf accumulators, saved tensors, hooks.

A :class:`Node` is one recorded operation.  Each op defines a subclass named as PyTorch
names its backward (``MulBackward0``) with a ``vjp`` static method beside its forward in
``retrograd.ops``; the engine only ever calls ``node.vjp``.  Every node has exactly the
information the engine needs:

* ``next`` -- one entry per input: the node that produced it, its leaf's
  :class:`AccumulateGrad`, or ``None`` when that input needs no gradient;
* ``out_shape`` / ``out_dtype`` -- what a gradient arriving at this node must look like
  (the engine reduces broadcast gradients to this shape, in one place);
* ``saved`` -- what the derivative needs, freed after backward unless ``retain_graph``.

Also here, as in PyTorch's ``torch.autograd.graph``: saved-tensor hooks
(``saved_tensors_hooks`` and what is built on them: ``save_on_cpu``,
``allow_mutation_on_saved_tensors``, non-reentrant checkpointing), which replace a saved
value by what a pack hook returns (:class:`PackedSaved`) when the node is recorded; and the
hooks that need to know the running backward pass (``register_multi_grad_hook``).
"""

from __future__ import annotations

import contextlib
import itertools
import sys
import threading
import weakref

__all__ = ["Node", "AccumulateGrad", "SavedOutput", "RemovableHandle", "freed_error",
           "move_retain_grad", "saved_tensors_hooks", "save_on_cpu",
           "disable_saved_tensors_hooks", "register_multi_grad_hook", "increment_version",
           "SavedTensor", "allow_mutation_on_saved_tensors"]

_handle_ids = itertools.count()

#: Guards the lazy creation of state that threads share (a node's hook table, a tensor's
#: extra state, a leaf's AccumulateGrad): the check and the store are separated by a
#: Python call, so without it two threads could each create one and one would be lost
#: (with the hooks registered on it).  Taken only on creation, never on the hot path.
#: Not the lock of ``.grad`` (``engine.grad_lock``): accumulating with create_graph records
#: ops, which may create an AccumulateGrad.
create_lock = threading.Lock()


def create_once(obj, attr: str, factory):
    """``obj.<attr>``, made by ``factory()`` where it is still None: under ``create_lock``, so
    two threads creating it at once get the same one (and both keep what they register)."""
    value = getattr(obj, attr)
    if value is None:
        with create_lock:
            value = getattr(obj, attr)
            if value is None:
                value = factory()
                setattr(obj, attr, value)
    return value


class RemovableHandle:
    """Returned by ``register_hook``; ``handle.remove()`` unregisters the hook."""

    __slots__ = ("_table", "id")

    def __init__(self, table: dict):
        self.id = next(_handle_ids)
        self._table = table

    def remove(self) -> None:
        self._table.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def add_hook(table: dict, fn) -> RemovableHandle:
    handle = RemovableHandle(table)
    table[handle.id] = fn
    return handle


class NodeHooks:
    """Hooks of one node; allocated only when someone registers one (keeps nodes small)."""

    __slots__ = ("pre", "post", "tensor", "retain", "metadata")

    def __init__(self):
        self.pre = {}  # fn(grad_outputs) -> new grad_outputs or None
        self.post = {}  # fn(grad_inputs, grad_outputs) -> new grad_inputs or None
        self.tensor = {}  # output_nr -> {id: fn(grad) -> new grad or None}
        self.retain = {}  # output_nr -> weakref to the non-leaf tensor that retains .grad
        self.metadata = {}  # grad_fn.metadata: the user's dict, one per node


#: ``[array or None]``: the gradient the engine is handing to a derivative right now when
#: nothing else holds it (not saved, not sent down another edge, not the caller's), so the
#: derivative may compute its result in that array's memory (``g *= out``) instead of a new
#: one: on big tensors, fewer fresh buffers and page faults (bench/ (d)).  The engine sets it
#: just before a first-order ``vjp`` call and clears it right after; a derivative called by
#: anyone else (``grad_fn(g)``, a compiled replay) sees None and leaves ``g`` alone.  One
#: slot for all threads: a derivative tests ``g is sole_grad[0]`` (identity), so another
#: thread's marking never applies to its array; a race only skips the reuse.
sole_grad = [None]


class InferenceVersion(list):
    """The version counter of a tensor made under ``inference_mode()``: marks it an inference
    tensor (views and detach() share the counter, so they are inference tensors too, as in
    PyTorch).  It starts at 1, so that saving one for backward takes the op machinery's
    rare "saved at a non-zero version" branch, where :func:`check_saveable` runs: ordinary
    tensors pay nothing for the check."""

    __slots__ = ()


INFERENCE_SAVE_ERROR = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`.")

INFERENCE_INPLACE_ERROR = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details.")


def check_saveable(vc) -> None:
    """Raise PyTorch's error for an inference tensor (version counter ``vc``) being saved."""
    if type(vc) is InferenceVersion:
        raise RuntimeError(INFERENCE_SAVE_ERROR)


def check_inplace_allowed(vc) -> None:
    """Raise PyTorch's error for an in-place change of an inference tensor outside
    inference mode."""
    if type(vc) is InferenceVersion:
        from .grad_mode import state

        if not state.inference:
            raise RuntimeError(INFERENCE_INPLACE_ERROR)


class SavedOutput:
    """A node's own output, saved for its derivative (exp, tanh, sigmoid...).

    Only the array and its version counter are kept, not the output tensor: the tensor
    refers to this node as its grad_fn, and holding it here would make a reference cycle
    that keeps big arrays alive until the cyclic garbage collector runs.
    """

    __slots__ = ("data", "counter", "version", "nr", "view_fn")

    def __init__(self, data, counter, nr=0, view_fn=None):
        self.data = data
        self.counter = counter
        self.version = counter[0]
        self.nr = nr
        # an in-place op's result on a view: a weak reference to the view's grad_fn after
        # the change (AsStridedBackward0 of its base's CopySlices), which PyTorch's
        # SavedVariable keeps (is_inplace_on_view) and unpacks the result on, so that a
        # second-order gradient through it passes the base's node (its retained .grad and
        # hooks: seed 15072673); when that node is gone, the op's own node, as there
        self.view_fn = view_fn


def freed_error(node) -> RuntimeError:
    return RuntimeError(
        f"Trying to backward through the graph a second time: {node.name()} already ran "
        "and freed the values it had saved for backward (saved values are freed by "
        ".backward() and autograd.grad() to save memory). Specify retain_graph=True on the "
        "first backward (or autograd.grad) call if you need to backward through the graph "
        "a second time or to access saved tensors after calling backward."
    )


#: PyTorch's names of what a node class saves, in the order of ``node.saved`` (inputs, then
#: the result): ``y.grad_fn._saved_self`` and the like.  Only the classes checked against
#: PyTorch (tests/autograd/test_engine_fixes.py) are listed; others have no ``_saved_``
#: attributes yet.
SAVED_NAMES = {
    "MulBackward0": ("self", "other"), "DivBackward0": ("self", "other"),
    "MmBackward0": ("self", "mat2"), "PowBackward0": ("self",),
    "PowBackward1": ("self", "exponent", "result"),
    **{name: ("self",) for name in ("SinBackward0", "CosBackward0", "LogBackward0",
                                    "AbsBackward0")},
    **{name: ("result",) for name in ("ExpBackward0", "TanhBackward0", "SigmoidBackward0",
                                      "ReluBackward0", "SqrtBackward0", "RsqrtBackward0")},
}


def saved_value(node, name: str, raw: bool = False):
    """``node._saved_<name>``: the saved tensor (None where the op did not need it), unpacked
    by its hooks if it has some; ``raw``: ``node._raw_saved_<name>``, a :class:`SavedTensor`."""
    names = SAVED_NAMES.get(type(node).__name__, ())
    if name not in names:
        prefix = "_raw_saved_" if raw else "_saved_"
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{prefix}{name}'")
    if raw:
        return SavedTensor(node, names.index(name))
    if node.saved is None:
        raise freed_error(node)
    value = node.saved[names.index(name)]
    if isinstance(value, SavedOutput):
        return wrap_array(value.data)
    if type(value) is PackedSaved:
        return unpack_packed(value, node, True)
    return value


def wrap_array(data):
    """An array as a Tensor: retrograd.tensor puts its ``make_tensor`` here when it loads
    (it sits above this module, which cannot import it)."""
    raise RuntimeError("retrograd.tensor is not loaded")


class Node:
    """One recorded operation: PyTorch's ``grad_fn``.

    Subclasses set ``vjp(node, grad, saved) -> tuple`` (one gradient per input, ``None``
    where ``next[i]`` is ``None``) and are named after PyTorch's backward nodes.
    """

    __slots__ = (
        "next", "next_nr", "saved", "versions", "params", "out_shape", "out_dtype", "hooks",
        "seq", "__weakref__",
    )
    multi_output = False

    def name(self) -> str:
        """PyTorch's name for this node, e.g. ``'MulBackward0'``; the nodes PyTorch writes in
        C++ by hand carry their namespace (``'torch::autograd::CopySlices'``), while their
        class and repr say ``CopySlices``.  What retrograd prints (a tensor's ``grad_fn=<>``,
        viz, traces) uses the class name, as PyTorch's repr does."""
        name = type(self).__name__
        return _CPP_NAMES.get(name, name)

    @property
    def next_functions(self) -> tuple:
        """``((node, output_nr), ...)`` for each input, ``(None, 0)`` where no grad flows."""
        nrs = self.next_nr
        return tuple(
            (n, nrs[i] if nrs else 0) for i, n in enumerate(self.next)
        )

    @property
    def needs_input_grad(self) -> tuple:
        return tuple(n is not None for n in self.next)

    @property
    def metadata(self) -> dict:
        """A dict of your own on this node (the same one on every access, as PyTorch)."""
        return self._hook_table().metadata

    def _hook_table(self) -> NodeHooks:
        return create_once(self, "hooks", NodeHooks)

    def register_hook(self, fn) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after this node; may return new grad_inputs."""
        return add_hook(self._hook_table().post, fn)

    def register_prehook(self, fn) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before this node; may return new grad_outputs."""
        return add_hook(self._hook_table().pre, fn)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    # PyTorch's ``_saved_<name>`` / ``_raw_saved_<name>`` are properties (made below for
    # every name in SAVED_NAMES), not a ``__getattr__``: a class with ``__getattr__`` makes
    # every attribute read of its instances take CPython's slow path (no specialised slot
    # reads), and the engine reads node slots on every step (-5% instructions in a
    # Hessian-vector product, bench/ (g)).

    @property
    def _saved_freed(self) -> bool:
        return self.saved is None


def _saved_property(name: str, raw: bool):
    return property(lambda node: saved_value(node, name, raw),
                    doc=f"PyTorch's ``_{'raw_' if raw else ''}saved_{name}`` (where this op "
                        "saves it)")


for _name in sorted({n for names in SAVED_NAMES.values() for n in names}):
    setattr(Node, f"_saved_{_name}", _saved_property(_name, False))
    setattr(Node, f"_raw_saved_{_name}", _saved_property(_name, True))
del _name


#: Creation order of nodes (PyTorch's sequence_nr): among the nodes ready to run, the engine
#: runs the most recently created first, so hooks fire in PyTorch's order.
next_sequence_nr = itertools.count().__next__
#: AccumulateGrad runs as soon as it is ready, as PyTorch gives it the highest number.
LEAF_SEQUENCE_NR = sys.maxsize


#: the nodes PyTorch writes in C++ by hand (torch/csrc/autograd/functions/), whose name()
#: is qualified; the generated ``*Backward*`` nodes and custom Functions' are not
_CPP_NAMES = {n: "torch::autograd::" + n for n in (
    "AccumulateGrad", "CopySlices", "CopyBackwards", "NotImplemented", "Error", "DelayedError",
    "GraphRoot", "UndefinedGrad", "UndefinedGradBackward", "Identity")}


class AccumulateGrad(Node):
    """The node of a leaf tensor: gradients arriving here are added into ``leaf.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        self.variable = variable
        self.seq = LEAF_SEQUENCE_NR
        self.next = ()
        self.next_nr = None
        self.saved = ()
        self.versions = None
        self.params = ()
        self.out_shape = variable._data.shape
        self.out_dtype = variable._data.dtype
        self.hooks = None


#: node -> the stack of the forward call that recorded it (anomaly mode only)
forward_traces = weakref.WeakKeyDictionary()


#: the machinery between a user's call and the recording of its node: left out of the
#: forward traceback anomaly mode shows (PyTorch's shows Python frames down to the op call)
_RECORDING_FILES = ("ops/_apply.py", "autograd/graph.py", "autograd/function.py")


def remember_forward(node) -> None:
    """Keep where ``node`` was recorded, for anomaly mode's error reports."""
    import traceback

    frames = traceback.extract_stack()[:-1]
    while frames and frames[-1].filename.replace("\\", "/").endswith(_RECORDING_FILES):
        frames.pop()
    forward_traces[node] = "".join(traceback.format_list(frames))


def move_retain_grad(tensor, old_node, old_nr) -> None:
    """After an in-place op gave ``tensor`` a new grad_fn, its ``retain_grad`` follows it.

    As PyTorch: ``.grad`` is the gradient of the tensor's latest value, while hooks
    registered before the change keep seeing the gradient of the old value.
    """
    if old_node is None or old_node is tensor._grad_fn:
        return
    extra = tensor._extra
    if extra is not None:  # PyTorch's reset_backward_hooks: later hooks go to the new node
        extra.hook_home = None
    if not tensor.retains_grad:
        return
    if old_node.hooks is not None:
        old_node.hooks.retain.pop(old_nr, None)
    if tensor._grad_fn is not None:
        tensor._grad_fn._hook_table().retain[tensor._nr] = weakref.ref(tensor)


def NO_EDGE():  # noqa: N802 - a constant, called like the weakref it stands in for
    """Stands in ``tensor._acc`` for a leaf whose gradient goes nowhere: a view made under
    no_grad of a tensor that requires grad.  PyTorch gives such a view requires_grad=True
    (ops on it record a graph) but no AccumulateGrad: its edge is None, its hooks never run,
    it never gets a ``.grad``."""
    return None


def accumulator_of(tensor) -> AccumulateGrad | None:
    """The leaf's AccumulateGrad, shared by every graph that uses the leaf (None for a
    :func:`NO_EDGE` leaf).

    The leaf holds it weakly (as in PyTorch): the graphs that use it keep it alive.
    """
    ref = tensor._acc
    acc = ref() if ref is not None else None
    if acc is None:
        if ref is NO_EDGE:
            return None
        # one per leaf even when threads build graphs on it at once (hooks registered on
        # it must not land on a twin that another graph never sees).  acquire/release,
        # cheaper than ``with``: a training loop gets here for every leaf every iteration
        create_lock.acquire()
        try:
            ref = tensor._acc
            acc = ref() if ref is not None else None
            if acc is None:
                acc = AccumulateGrad(tensor)
                tensor._acc = weakref.ref(acc)
        finally:
            create_lock.release()
    return acc


# --------------------------------------------------------------------------- saved-tensor hooks
class _SavedHooksState(threading.local):
    """Per thread, as PyTorch's default saved-tensor hooks: the active ``(pack, unpack)``
    pairs (innermost last) and the message of an active ``disable_saved_tensors_hooks``."""

    stack = ()
    disabled = None


saved_hooks_state = _SavedHooksState()


class PackedSaved:
    """A saved value after a pack hook ran on it: what ``pack`` returned, the ``unpack`` to
    call in backward, and the gradient edge of the tensor that was saved (the unpacked tensor
    gets it under ``create_graph``, so double backward goes through the original graph, as
    PyTorch's SavedVariable).  An output of the node itself keeps no edge (that would be a
    reference cycle): the node is known when it unpacks."""

    __slots__ = ("packed", "unpack", "grad_fn", "nr", "requires_grad", "acc", "is_output")

    def __init__(self, packed, unpack, tensor=None, nr=0):
        self.packed = packed
        self.unpack = unpack
        self.is_output = tensor is None
        self.nr = nr if tensor is None else tensor._nr
        self.grad_fn = None if tensor is None else tensor._grad_fn
        self.requires_grad = tensor is not None and tensor._requires_grad
        self.acc = None if tensor is None else tensor._acc


def _is_tensor(x) -> bool:
    # the Tensor class sits above this module: known by its slots
    return hasattr(x, "_grad_fn") and hasattr(x, "_data")


def _call_pack(pack, tensor):
    """Run a pack hook as PyTorch does: with grad mode off (what it computes records nothing)."""
    from .grad_mode import state

    prev = state.enabled
    state.enabled = False
    try:
        return pack(tensor)
    finally:
        state.enabled = prev


def pack_saved(node, outputs) -> None:
    """Run the innermost pack hook on every tensor ``node`` saved (``outputs``: the node's
    output tensors, by output number, for the values it saved of its own result)."""
    pack, unpack = saved_hooks_state.stack[-1]
    saved = node.saved
    if not saved:
        return
    order = range(len(saved))
    if len(node.next) == 2 and len(saved) >= 2 and _is_tensor(saved[0]) and \
            _is_tensor(saved[1]):
        # PyTorch's generated nodes save a binary op's ``other`` first (mul, div, mm, atan2,
        # maximum, hypot...: the derivative for ``self`` reads ``other``): pack in its order
        order = [1, 0, *range(2, len(saved))]
    packed = list(saved)
    for i in order:
        s = saved[i]
        if type(s) is SavedOutput:
            packed[i] = PackedSaved(_call_pack(pack, outputs[s.nr]), unpack, None, s.nr)
        elif _is_tensor(s):
            packed[i] = PackedSaved(_call_pack(pack, s), unpack, s)
    node.saved = tuple(packed)


def unpack_packed(p: PackedSaved, node, as_tensors: bool):
    """The value behind ``p``: ``unpack(packed)``, as an array (first order) or as a tensor
    on the saved tensor's gradient edge (create_graph).  No version check: PyTorch skips it
    for hooked values (the hooks own what is kept)."""
    t = p.unpack(p.packed)
    if not _is_tensor(t):
        raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                        f"result of type {type(t).__name__}")
    if not as_tensors:
        return t._data
    out = wrap_array(t._data)
    out._nr = p.nr
    if p.is_output:
        out._grad_fn = node
        out._requires_grad = True
    else:
        out._grad_fn = p.grad_fn
        out._requires_grad = p.requires_grad
        out._acc = p.acc
    return out


def on_record(node, outputs) -> None:
    """Called for each recorded node while ``grad_mode.record_extras`` is non-empty (saved
    tensor hooks active in some thread, or anomaly mode): everything else pays one check."""
    from .grad_mode import anomaly

    if anomaly.enabled:
        remember_forward(node)
    if saved_hooks_state.stack:
        pack_saved(node, outputs)


class saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Context manager: ``pack_hook(tensor)`` runs on every tensor an op saves for backward
    (its result is kept instead); ``unpack_hook(packed)`` gives the tensor back in backward.

    Nested blocks: the innermost pair applies.  Per thread, as in PyTorch.

    Examples
    --------
    >>> import retrograd as T
    >>> x = T.ones(3, requires_grad=True)
    >>> with T.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
    ...     y = (x * x).sum()
    >>> y.backward(); x.grad
    tensor([2., 2., 2.])
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        from .grad_mode import record_extras

        message = saved_hooks_state.disabled
        if message is not None:
            raise RuntimeError(message)
        saved_hooks_state.stack = saved_hooks_state.stack + ((self.pack_hook,
                                                              self.unpack_hook),)
        record_extras.append(self)
        return self

    def __exit__(self, *exc):
        from .grad_mode import record_extras

        saved_hooks_state.stack = saved_hooks_state.stack[:-1]
        record_extras.remove(self)
        return False


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - PyTorch's name
    """Keep saved tensors in CPU memory (a copy) and move them back for backward.

    ``pin_memory`` is accepted for PyTorch's signature; NumPy memory needs no pinning.
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        def pack_to_cpu(tensor):
            return tensor.device, tensor.detach().cpu().clone()

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


class disable_saved_tensors_hooks:  # noqa: N801 - PyTorch's name
    """Inside it, entering ``saved_tensors_hooks`` raises RuntimeError(``error_message``);
    entering it while hooks are active raises the same."""

    def __init__(self, error_message: str):
        self.error_message = error_message

    def __enter__(self):
        if saved_hooks_state.stack:
            raise RuntimeError(self.error_message)
        self._prev = saved_hooks_state.disabled
        saved_hooks_state.disabled = self.error_message
        return self

    def __exit__(self, *exc):
        saved_hooks_state.disabled = self._prev
        return False


class _AllowMutationOnSavedContext:
    """The value ``allow_mutation_on_saved_tensors()`` yields; closed when the block ends."""

    def __init__(self):
        self.closed = False


_mutation_state = threading.local()


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Inside it, a tensor saved for backward may be changed in place afterwards: backward
    uses the value it had when it was saved.  (PyTorch copies a saved tensor when it is
    first changed; retrograd copies each saved tensor when it is saved, which gives the
    same values at the cost of the copies.)  Backward must run inside the block."""
    if getattr(_mutation_state, "active", False):
        raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
    ctx = _AllowMutationOnSavedContext()

    def pack(tensor):
        return tensor.detach().clone()

    def unpack(copy):
        if ctx.closed:
            raise AssertionError(
                "Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
                "in which the graph was originally recorded.")
        return copy

    _mutation_state.active = True
    try:
        with saved_tensors_hooks(pack, unpack):
            yield ctx
    finally:
        ctx.closed = True
        _mutation_state.active = False


class SavedTensor:
    """``node._raw_saved_<name>``: one saved value, whose hooks can be set once."""

    __slots__ = ("node", "index")

    def __init__(self, node, index):
        self.node = node
        self.index = index

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError("register_hooks(): incompatible function arguments: pack_hook and "
                            "unpack_hook must both be callables")
        saved = self.node.saved
        if saved is None:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved "
                "intermediate values of the graph are freed when you call .backward() or "
                "autograd.grad(). Specify retain_graph=True if you need to backward through "
                "the graph a second time or if you need to access saved variables after "
                "calling backward.")
        value = saved[self.index]
        if type(value) is PackedSaved:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor whose hooks have already been set. "
                "Hint: only one pair of hooks is allowed at a time.")
        if type(value) is SavedOutput:
            tensor = wrap_array(value.data)
            tensor._grad_fn, tensor._requires_grad, tensor._nr = self.node, True, value.nr
            packed = PackedSaved(_call_pack(pack_hook, tensor), unpack_hook, None, value.nr)
        elif value is None:
            return  # nothing saved there (PyTorch's undefined tensor): no hook to run
        else:
            packed = PackedSaved(_call_pack(pack_hook, value), unpack_hook, value)
        self.node.saved = saved[:self.index] + (packed,) + saved[self.index + 1:]

    def __repr__(self) -> str:
        return f"<retrograd.autograd.graph.SavedTensor object at {id(self):#x}>"


# --------------------------------------------------------------------------- graph tasks
class _GraphTasks(threading.local):
    """The backward passes running in this thread (innermost last): the engine pushes
    ``(task id, dependency counts, nodes needed or None, captured nodes or None)``."""

    def __init__(self):
        self.stack = []


graph_tasks = _GraphTasks()
next_task_id = itertools.count().__next__


def current_graph_task_id() -> int:
    """The id of the backward pass running in this thread, -1 outside backward."""
    stack = graph_tasks.stack
    return stack[-1][0] if stack else -1


def will_engine_execute_node(node) -> bool:
    """Whether the running backward pass reaches ``node`` and runs it."""
    stack = graph_tasks.stack
    if not stack:
        raise RuntimeError("_will_engine_execute_node should only be called during the "
                           "backward pass")
    _, deps, needed, captures = stack[-1]
    if node not in deps:
        return False
    return needed is None or node in needed or (captures is not None and node in captures)


def _node_of(tensor):
    """The node whose hooks see ``tensor``'s gradient (its grad_fn, or its leaf's
    AccumulateGrad)."""
    if tensor._grad_fn is not None:
        return tensor._grad_fn
    node = accumulator_of(tensor) if tensor._requires_grad else None
    if node is None:
        raise AssertionError("Expected gradient function to be set")
    return node


class _MultiHandle(RemovableHandle):
    """The handle of ``register_multi_grad_hook``: ``remove()`` removes every tensor hook."""

    __slots__ = ("handles",)

    def __init__(self, handles):
        self.handles = handles
        self.id = next(_handle_ids)

    def remove(self) -> None:
        for h in self.handles:
            h.remove()


def register_multi_grad_hook(tensors, fn, *, mode: str = "all") -> RemovableHandle:
    """``fn`` sees the gradients of several tensors at once, as PyTorch's.

    ``mode='all'``: after every tensor of ``tensors`` that this backward pass reaches got
    its gradient, ``fn(grads)`` (None for the others).  ``mode='any'``: ``fn(grad)`` with
    the first gradient computed for any of them, once per backward pass.
    """
    supported = ("all", "any")
    if mode not in supported:
        raise ValueError(f"Expects mode to be one of {supported} but got {mode}")
    lock = threading.Lock()
    tensors = tuple(tensors)
    if mode == "any":
        ran = set()

        def wrapped(grad):
            task = current_graph_task_id()
            with lock:
                if task in ran:
                    return
                ran.add(task)
            fn(grad)

        return _MultiHandle(tuple(t.register_hook(wrapped) for t in tensors
                                  if t._requires_grad))
    nodes = [_node_of(t) for t in tensors]
    count, buffer, expected = {}, {}, {}

    def inner_hook(idx):
        def hook(grad):
            task = current_graph_task_id()
            with lock:
                seen = count.get(task, 0)
                count[task] = seen + 1
                if seen == 0:
                    expected[task] = sum(map(will_engine_execute_node, nodes))
                    buffer[task] = [None] * len(tensors)
                buffer[task][idx] = grad
                done = seen == expected[task] - 1
                if done:
                    grads = buffer.pop(task)
                    del count[task], expected[task]
            if done:
                fn(grads)
        return hook

    return _MultiHandle(tuple(t.register_hook(inner_hook(i)) for i, t in enumerate(tensors)))


def increment_version(tensor) -> None:
    """Bump the version counter of ``tensor`` (or of each tensor of an iterable), as an
    in-place change would: saved copies of it then fail their check in backward."""
    tensors = (tensor,) if _is_tensor(tensor) else tensor
    for t in tensors:
        t._bump_version()
