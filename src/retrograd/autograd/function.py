"""Custom differentiable functions: subclass ``Function``, write ``forward`` and ``backward``.

``MyFn.apply(x)`` runs ``forward`` without recording, then records one node whose class
is named ``MyFnBackward`` (as PyTorch does); that node *is* the ``ctx`` both methods see.
It lowers onto the same Node machinery as the built-in ops: the engine calls its ``vjp``.
"""

from __future__ import annotations

import threading
import warnings

import numpy as np

from .forward_state import fw
from .grad_mode import record_extras, state
from .graph import (
    Node, SavedOutput, accumulator_of, check_saveable, next_sequence_nr, on_record,
)


def _tensor_mod():
    # not ``from .. import tensor``: the package re-exports the tensor() function under
    # that name, which shadows the submodule
    import sys

    from ..tensor import Tensor  # noqa: F401 - makes sure the module is loaded

    return sys.modules[__package__.rsplit(".", 1)[0] + ".tensor"]


class _Unpacking(threading.local):
    """``ctx.saved_tensors`` while backward runs, per thread: two threads may run backward
    through one graph (retain_graph) at once, one with create_graph and one without, and
    each must see its own unpacking (tensors that record, or plain values)."""

    def __init__(self):
        self.by_node = {}


_unpacking = _Unpacking()


class FunctionCtx(Node):
    """The ``ctx`` of a custom Function: a graph node that also stores what you put on it."""

    # no __slots__: users set arbitrary attributes on ctx
    def save_for_backward(self, *tensors) -> None:
        Tensor = _tensor_mod().Tensor
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    f"save_for_backward can only save tensors (or None), but argument {i} is "
                    f"{type(t).__name__}; store other values as attributes: ctx.value = ..."
                )
        self._to_save = tensors

    @property
    def saved_tensors(self) -> tuple:
        unpacked = _unpacking.by_node.get(self)
        if unpacked is not None:
            return unpacked
        if self.saved is None:
            from .graph import freed_error

            raise freed_error(self)
        from .engine import unpack_saved

        return tuple(unpack_saved(self, True))

    def save_for_forward(self, *tensors) -> None:
        """Keep tensors for ``jvp`` (forward mode), which reads them as ``ctx.saved_tensors``."""
        self._saved_forward = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        self._non_diff = {id(t) for t in tensors}

    def mark_dirty(self, *tensors) -> None:
        self._dirty = {id(t) for t in tensors}

    def set_materialize_grads(self, value: bool) -> None:
        self._materialize = value

    @property
    def needs_input_grad(self) -> tuple:
        return self._needs


def _function_vjp(node, g, saved):
    """Call the user's backward with tensors; hand arrays back in a first-order pass."""
    tensor = _tensor_mod()
    Tensor = tensor.Tensor
    as_tensors = state.enabled  # create_graph: the engine enabled recording

    def wrap(x):
        if x is None or isinstance(x, Tensor):
            return x
        return tensor.make_tensor(np.asarray(x) if isinstance(x, np.generic) else x)

    by_node = _unpacking.by_node
    outer = by_node.get(node)  # a backward run from inside this node's backward
    by_node[node] = tuple(wrap(s) if s is not None and not isinstance(s, (int, float)) else s
                          for s in saved)
    try:
        grads = g if node.multi_output else [g]
        result = node.fn_cls.backward(node, *[wrap(x) for x in grads])
    finally:
        if outer is None:
            del by_node[node]
        else:
            by_node[node] = outer
    if not isinstance(result, tuple):
        result = (result,)
    # one gradient per forward input (numbers and None included), as PyTorch; node.next
    # holds the tensor inputs only, at positions node.tensor_args (None: all are tensors)
    positions = node.tensor_args
    n = len(node._needs)
    if len(result) > n and any(r is not None for r in result[n:]):
        raise RuntimeError(
            f"function {node.name()} returned an incorrect number of gradients (expected {n}, "
            f"got {len(result)})"
        )
    if len(result) < n:
        raise RuntimeError(
            f"function {node.name()} returned an incorrect number of gradients (expected {n}, "
            f"got {len(result)}); return one gradient (or None) per forward input"
        )
    if positions is not None:
        for i, r in enumerate(result[:n]):
            if r is not None and i not in positions:
                raise RuntimeError(
                    f"function {node.name()} returned a gradient different than None at "
                    f"position {i + 1}, but the corresponding forward input was not a Variable "
                    "(return None for a non-tensor input)"
                )
        result = [result[i] for i in positions]
    out = []
    for k, r in enumerate(result[:n]):
        i = positions[k] if positions is not None else k
        if r is None:
            out.append(None)
            continue
        if not isinstance(r, Tensor):
            raise RuntimeError(
                f"expected Variable or None (got {type(r).__name__}): function {node.name()} "
                f"returned it as the gradient at index {i}; backward must return Tensors (or "
                "None), e.g. wrap a number with retrograd.tensor(...)"
            )
        # (kept for an input that needs no gradient too, as PyTorch's PyNode: the node's
        # post-hooks see it; the engine sends nothing along the missing edge)
        out.append(r if as_tensors else r._data)
    return tuple(out)


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(name + "Backward", (FunctionCtx,), {
            "vjp": staticmethod(_function_vjp), "fn_cls": cls,
        })


class Function(metaclass=_FunctionMeta):
    """Base class for custom autograd functions.

    Examples
    --------
    >>> import retrograd as T
    >>> class Cube(T.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return g * 3 * x ** 2
    >>> x = T.tensor(2.0, requires_grad=True)
    >>> Cube.apply(x).backward(); x.grad
    tensor(12.)
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    #: True: ``func.vmap`` batches this Function by running its forward and backward on the
    #: batched tensors (they must be written with retrograd ops); False: write ``vmap``.
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        """Override: how this Function runs under ``func.vmap`` (``info.batch_size``,
        ``info.randomness``; one in_dim per argument); returns ``(output, out_dims)``."""
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap "
            "staticmethod or set generate_vmap_rule=True.")

    def __init__(self, *args, **kwargs):
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are "
            "all static, so you should invoke them on the class itself. Instantiating an "
            "autograd function will raise an error in a future version of PyTorch.",
            DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        # the legacy style (an instance called like a module) is gone in PyTorch too
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """Override for forward mode: the outputs' tangents from the inputs' (``grad_inputs``:
        one per argument of forward, zeros for a tensor without one, None for a non-tensor)."""
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        """Override (with a ``forward`` that takes no ctx) to save what backward needs."""
        raise NotImplementedError("setup_context is not implemented.")

    @classmethod
    def apply(cls, *args, **kwargs):
        tensor = _tensor_mod()
        Tensor = tensor.Tensor
        ctx = cls._backward_cls()
        ctx.seq = next_sequence_nr()
        ctx.next = ()
        ctx.next_nr = None
        ctx.tensor_args = None
        ctx.saved = ()
        ctx.versions = None
        ctx.params = ()
        ctx.hooks = None
        ctx._to_save = ()
        ctx._needs = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        prev = state.enabled
        state.enabled = False
        # forward AD is off inside forward too, as PyTorch's (no tangents are seen or
        # propagated there: ``jvp`` gives the outputs' tangents, and a tangent changed in
        # place by it is not changed twice)
        fw_prev, fw.active = fw.active, False
        try:
            if cls.setup_context is Function.setup_context:
                outputs = cls.forward(ctx, *args, **kwargs)
            else:
                # PyTorch 2's style: forward(*args) without ctx, then setup_context
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
        finally:
            state.enabled = prev
            fw.active = fw_prev
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        record = prev and any(ctx._needs)
        non_diff = getattr(ctx, "_non_diff", set())
        dirty = getattr(ctx, "_dirty", ())
        results = []
        for o in outs:
            if isinstance(o, Tensor) and id(o) in dirty:
                # modified in place (ctx.mark_dirty): as PyTorch, the very same tensor comes
                # back, rebased onto this node, one version further
                if prev and o._requires_grad and o._grad_fn is None:
                    raise RuntimeError(
                        f"a leaf Variable that requires grad is being used in an in-place "
                        f"operation ({cls.__name__}, marked dirty, on a leaf of shape "
                        f"{list(o._data.shape)}); apply it to a clone, or under no_grad()"
                    )
                o._bump_version()
                if not record and o._requires_grad and any(o is a for a in args):
                    # not recorded (no_grad), of a tensor that requires grad: PyTorch
                    # returns a new alias of it (not a view, not requiring grad), as for an
                    # input returned unchanged below; else the tensor itself
                    o = _alias(tensor, o)
            elif isinstance(o, Tensor) and (any(o is a for a in args) or
                                            o._grad_fn is not None):
                # an input returned as is: a new alias sharing its data and version counter
                o = _alias(tensor, o)
            results.append(o)
        if record and len(results) > 1:
            _refuse_changed_view(results, outs, dirty, non_diff, Tensor)
        if record:
            # as PyTorch: one edge (next_functions entry) per tensor argument only; numbers,
            # None and lists get none (a tensor inside a list is not an input)
            tensors = [a for a in args if isinstance(a, Tensor)]
            if len(tensors) < len(args):
                ctx.tensor_args = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
            nxt, nrs = [], None
            for i, a in enumerate(tensors):
                nxt.append(a._grad_fn or (accumulator_of(a) if a._requires_grad else None))
                if tensor.adopted_views and a._grad_fn is not None:
                    # PyTorch re-derives an adopted view here, or refuses it
                    tensor.rederive_view(a, a._grad_fn)
                if a._nr:
                    nrs = nrs or [0] * len(tensors)
                    nrs[i] = a._nr
            ctx.next = tuple(nxt)
            ctx.next_nr = nrs
            tensor_outs = [o for o in results if isinstance(o, Tensor)]
            if len(results) > 1:
                ctx.multi_output = True
                ctx.n_outputs = len(results)
                ctx.out_shape = [getattr(o, "_data", np.zeros(())).shape for o in results]
                ctx.out_dtype = [getattr(o, "_data", np.zeros(())).dtype for o in results]
            else:
                ctx.out_shape = tensor_outs[0]._data.shape if tensor_outs else ()
                ctx.out_dtype = tensor_outs[0]._data.dtype if tensor_outs else np.float32
            for nr, o in enumerate(results):
                if isinstance(o, Tensor) and id(outs[nr]) not in non_diff and \
                        o._data.dtype.kind == "f":
                    o._grad_fn = ctx
                    o._requires_grad = True
                    o._nr = nr
            to_save = ctx._to_save
            saved = []
            for t in to_save:
                if isinstance(t, Tensor) and t._grad_fn is ctx:
                    # one of this node's own outputs: keep its array and version counter,
                    # not the tensor, or ctx -> output -> ctx would be a reference cycle
                    # that only the cyclic garbage collector frees
                    if t._vc is None:
                        t._vc = [0]
                    saved.append(SavedOutput(t._data, t._vc, t._nr))
                else:
                    saved.append(t)
            ctx.saved = tuple(saved)
            ctx._to_save = ()
            if any(isinstance(t, Tensor) and t._vc for t in to_save):
                for t in to_save:
                    if isinstance(t, Tensor):
                        check_saveable(t._vc)
                ctx.versions = tuple(t._vc[0] if isinstance(t, Tensor) and t._vc else 0
                                     for t in to_save)
            if record_extras:  # saved-tensor hooks (save_for_backward), anomaly mode
                on_record(ctx, results)
        for o in outs:  # (the tensors changed, not the aliases returned for them)
            if isinstance(o, Tensor) and id(o) in dirty and o._vc is not None and len(o._vc) > 1:
                # a view changed in place: its base gets CopySlices and the other views are
                # re-derived, as for the built-in in-place ops (same lazy import as tensor)
                from ..ops.changed_views import rebase_views

                rebase_views(o, recorded=o._grad_fn is ctx)
        if fw.active:
            _forward_tangents(cls, ctx, args, results)
        return results[0] if single else tuple(results)


def _alias(tensor, o):
    """A new tensor sharing ``o``'s data and version counter, outside the graph."""
    alias = tensor.make_tensor(o._data)
    if o._vc is None:
        o._vc = [0]
    alias._vc = o._vc
    return alias


def _refuse_changed_view(results, outs, dirty, non_diff, tensor_cls):
    """PyTorch's refusal of a recorded Function returning more than one value (tensor or
    not) that changed a view in place (ctx.mark_dirty): its base's CopySlices could only
    wrap a single-output node.  Raised before any output gets this node, as there."""
    for o, raw in zip(results, outs):
        if not (isinstance(o, tensor_cls) and id(o) in dirty and id(raw) not in non_diff
                and o._data.dtype.kind == "f"):
            continue
        vc = o._vc
        # (a view: a member of its memory's view groups, whatever it requires; the same
        # test as Tensor.detach_'s)
        if vc is not None and len(vc) > 1 and any(v is o for v in getattr(vc[1], "views", ())):
            raise RuntimeError(
                "If your Function modifies inplace an input that is a view of another Tensor, "
                "your Function cannot return more than one Tensor. This is not supported by "
                "the current autograd engine. You should either make sure the input is not a "
                "view (using .clone() for example) or make your Function only return one "
                "Tensor (potentially splitting it into two Functions: one doing the inplace "
                "that returns a single Tensor and a second one that does the other "
                "operations).")


def _forward_tangents(cls, ctx, args, results):
    """Forward AD through a custom Function: its ``jvp`` staticmethod gives the outputs'
    tangents (PyTorch's NotImplementedError when it has none and an input has a tangent)."""
    from ..backend import namespace
    from .forward_state import set_tangent, tangent_of

    Tensor = _tensor_mod().Tensor
    tangents = [tangent_of(a) if isinstance(a, Tensor) else None for a in args]
    if all(t is None for t in tangents):
        return
    grad_inputs = [t if t is not None or not isinstance(a, Tensor) else
                   _tensor_mod().make_tensor(namespace(a._data).zeros_like(a._data))
                   for a, t in zip(args, tangents)]
    fw.active = False
    _unpacking.by_node[ctx] = tuple(getattr(ctx, "_saved_forward", ()))
    try:
        out = cls.jvp(ctx, *grad_inputs)
    finally:
        _unpacking.by_node.pop(ctx, None)
        fw.active = True
    outs = out if isinstance(out, tuple) else (out,)
    if len(outs) != len(results):
        raise RuntimeError(f"{cls.__name__}.jvp returned {len(outs)} tangents for "
                           f"{len(results)} outputs of forward; return one per output")
    for o, t in zip(results, outs):
        if isinstance(o, Tensor) and t is not None and o._data.dtype.kind == "f":
            set_tangent(o, t)


def once_differentiable(fn):
    """Decorate a Function's ``backward`` that can't itself be differentiated.

    It runs without recording; under ``create_graph=True`` its results are wrapped so
    that differentiating them raises, as PyTorch's ``backward()`` does.  (PyTorch's
    ``autograd.grad`` skips its error node and silently drops that term; retrograd's
    error node is linked to the real gradients, so ``grad`` raises too.)
    """
    import functools

    @functools.wraps(fn)
    def wrapper(ctx, *grads):
        recording = state.enabled
        prev = state.enabled
        state.enabled = False
        try:
            result = fn(ctx, *grads)
        finally:
            state.enabled = prev
        if not recording or not any(getattr(g, "_requires_grad", False) for g in grads):
            return result
        single = not isinstance(result, tuple)
        outs = (result,) if single else result
        wrapped = tuple(_DelayedError.apply(o, *grads) if o is not None else None
                        for o in outs)
        return wrapped[0] if single else wrapped

    return wrapper


class DelayedError(Function):
    """The node placed after a once_differentiable backward: raises if differentiated."""

    @staticmethod
    def forward(ctx, value, *grads):
        return value.clone()

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(
            "trying to differentiate twice a function that was marked with "
            "@once_differentiable"
        )


_DelayedError = DelayedError
