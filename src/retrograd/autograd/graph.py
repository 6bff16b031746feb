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
"""

from __future__ import annotations

import itertools
import sys
import threading
import weakref

__all__ = ["Node", "AccumulateGrad", "SavedOutput", "RemovableHandle", "freed_error",
           "move_retain_grad"]

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

    __slots__ = ("data", "counter", "version", "nr")

    def __init__(self, data, counter, nr=0):
        self.data = data
        self.counter = counter
        self.version = counter[0]
        self.nr = nr


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


def saved_value(node, name: str):
    """``node._saved_<name>``: the saved tensor (None where the op did not need it)."""
    names = SAVED_NAMES.get(type(node).__name__, ())
    if name not in names:
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '_saved_{name}'")
    if node.saved is None:
        raise freed_error(node)
    value = node.saved[names.index(name)]
    if isinstance(value, SavedOutput):
        return wrap_array(value.data)
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
        """PyTorch's name for this node, e.g. ``'MulBackward0'``."""
        return type(self).__name__

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

    def __getattr__(self, name: str):
        # only for attributes not found otherwise: PyTorch's _saved_<name> of this op
        if name.startswith("_saved_"):
            return saved_value(self, name[7:])
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    @property
    def _saved_freed(self) -> bool:
        return self.saved is None


#: Creation order of nodes (PyTorch's sequence_nr): among the nodes ready to run, the engine
#: runs the most recently created first, so hooks fire in PyTorch's order.
next_sequence_nr = itertools.count().__next__
#: AccumulateGrad runs as soon as it is ready, as PyTorch gives it the highest number.
LEAF_SEQUENCE_NR = sys.maxsize


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


def remember_forward(node) -> None:
    """Keep where ``node`` was recorded, for anomaly mode's error reports."""
    import traceback

    forward_traces[node] = "".join(traceback.format_stack()[:-2])  # not this frame, apply


def move_retain_grad(tensor, old_node, old_nr) -> None:
    """After an in-place op gave ``tensor`` a new grad_fn, its ``retain_grad`` follows it.

    As PyTorch: ``.grad`` is the gradient of the tensor's latest value, while hooks
    registered before the change keep seeing the gradient of the old value.
    """
    if old_node is None or old_node is tensor._grad_fn or not tensor.retains_grad:
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
