"""Module hook machinery: removable handles over ordered tables, and full backward hooks.

Full backward hooks work as PyTorch's (``torch/utils/hooks.py``): the module's tensor
inputs and outputs each pass through one identity autograd Function.  The gradient
reaching the outputs' identity node is ``grad_output`` (backward pre-hooks may replace
it); the gradient leaving the inputs' identity node is ``grad_input``, which the user
hooks see and may replace.
"""

from __future__ import annotations

import functools
import warnings
import weakref
from collections import OrderedDict

from .._creation import zeros
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..tensor import Tensor



class RemovableHandle:
    """What ``register_*_hook`` returns: ``handle.remove()`` unregisters the hook (also as
    a context manager).  ``extra_dict`` tables (with_kwargs / always_call flags) lose the
    entry too.

    It holds its tables by weak reference; pickling and deep-copying carry the tables
    themselves (as PyTorch's), so a handle copied along with its module removes the hook
    from the copy, and an id restored from a pickle is never handed out again.
    """

    id: int
    next_id: int = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        if extra_dict is None:
            extra_dict = []
        elif isinstance(extra_dict, dict):
            extra_dict = [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict)

    def remove(self) -> None:
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            table = ref()
            if table is not None and self.id in table:
                del table[self.id]

    def __getstate__(self):
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state) -> None:
        # a table that is gone gets a dead reference (remove() then does nothing)
        self.hooks_dict_ref = weakref.ref(OrderedDict() if state[0] is None else state[0])
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        extras = state[2] if len(state) > 2 and state[2] is not None else ()
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extras if d is not None)

    def __enter__(self) -> "RemovableHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def add_ordered(table: OrderedDict, hook, prepend: bool, extra=None) -> RemovableHandle:
    """Put ``hook`` in ``table`` (first when ``prepend``) and return its handle."""
    handle = RemovableHandle(table, extra_dict=extra)
    table[handle.id] = hook
    if prepend:
        table.move_to_end(handle.id, last=False)
    return handle


class BackwardHookFunction(Function):
    """Identity on tensors; its node is where a module's backward hooks attach."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


class BackwardHook:
    """One forward call's backward hooks (PyTorch's ``torch.utils.hooks.BackwardHook``)."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        out = [None] * size
        for i, v in zip(indices, values):
            out[i] = v
        return tuple(out)

    def _apply_on_tensors(self, fn, args):
        idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in idx]
        if not (any(t.requires_grad for t in tensors) and is_grad_enabled()):
            return args, None
        new = BackwardHookFunction.apply(*tensors)
        if not isinstance(new, tuple):
            new = (new,)
        grad_fns = [t.grad_fn for t in new if t.grad_fn is not None]
        fn(grad_fns[0])
        out = list(args)
        for i, t in zip(idx, new):
            out[i] = t
        return tuple(out), idx

    def setup_input_hook(self, args):
        def attach(grad_fn):
            def hook(grad_input, _):
                if self.grad_outputs is None:
                    return None  # reached without passing the outputs (double backward)
                # an input that needs no grad gets zeros, as PyTorch (its identity output is
                # non-differentiable and the incoming zeros are materialized)
                grad_input = tuple(
                    g if g is not None else zeros(shape, dtype=dtype)
                    for g, (shape, dtype) in zip(grad_input, self.input_meta))
                res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
                for user_hook in self.user_hooks:
                    out = user_hook(self.module, res, self.grad_outputs)
                    if out is None:
                        continue
                    if len(out) != len(res):
                        raise RuntimeError(
                            "Backward hook returned an invalid number of grad_input, got "
                            f"{len(out)}, but expected {len(res)}")
                    res = out
                self.grad_outputs = None
                return tuple(res[i] if self.input_needs[k] else None
                             for k, i in enumerate(self.input_tensors_index))

            grad_fn.register_hook(hook)

        res, idx = self._apply_on_tensors(attach, args)
        self.n_inputs = len(args)
        self.input_tensors_index = idx
        if idx is not None:
            self.input_meta = [(args[i].shape, args[i].dtype) for i in idx]
            self.input_needs = [args[i].requires_grad for i in idx]
        return res

    def setup_output_hook(self, outputs):
        def attach(grad_fn):
            def hook(grad_output):
                self.grad_outputs = self._pack_with_none(
                    self.output_tensors_index, grad_output, self.n_outputs)
                for pre in self.user_pre_hooks:
                    new = pre(self.module, self.grad_outputs)
                    if new is None:
                        continue
                    if len(new) != len(self.grad_outputs):
                        raise RuntimeError(
                            "Backward pre hook returned an invalid number of grad_output, got "
                            f"{len(new)}, but expected {len(self.grad_outputs)}")
                    self.grad_outputs = new
                local = self.grad_outputs
                if self.input_tensors_index is None:
                    warnings.warn(
                        "Full backward hook is firing when gradients are computed with respect "
                        "to module outputs since no inputs require gradients. See "
                        "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                        "#torch.nn.Module.register_full_backward_hook for more details.",
                        stacklevel=5)
                    grad_inputs = (None,) * self.n_inputs
                    for user_hook in self.user_hooks:
                        res = user_hook(self.module, grad_inputs, self.grad_outputs)
                        if res is not None and not (isinstance(res, tuple)
                                                    and all(r is None for r in res)):
                            raise RuntimeError(
                                "Backward hook for Modules where no input requires gradient "
                                "should always return None or None for all gradients.")
                    self.grad_outputs = None
                return tuple(local[i] for i in self.output_tensors_index)

            grad_fn.register_prehook(hook)

        single = not isinstance(outputs, tuple)
        args = (outputs,) if single else outputs
        res, idx = self._apply_on_tensors(attach, args)
        self.n_outputs = len(args)
        self.output_tensors_index = idx
        return res[0] if single else res


# hooks that run for every module (register_module_*_hook); __call__ checks these four dicts
_global_forward_pre_hooks: OrderedDict = OrderedDict()
_global_forward_hooks: OrderedDict = OrderedDict()
_global_forward_hooks_always_called: OrderedDict = OrderedDict()
_global_backward_pre_hooks: OrderedDict = OrderedDict()
_global_backward_hooks: OrderedDict = OrderedDict()


def register_module_forward_pre_hook(hook) -> RemovableHandle:
    """``hook(module, args)`` before every module's forward (before its own pre-hooks)."""
    return add_ordered(_global_forward_pre_hooks, hook, False)


def register_module_forward_hook(hook, *, always_call: bool = False) -> RemovableHandle:
    """``hook(module, args, output)`` after every module's forward (before its own hooks)."""
    handle = add_ordered(_global_forward_hooks, hook, False,
                         extra=_global_forward_hooks_always_called)
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    return handle


def register_module_full_backward_pre_hook(hook) -> RemovableHandle:
    """``hook(module, grad_output)`` for every module (before its own backward pre-hooks)."""
    return add_ordered(_global_backward_pre_hooks, hook, False)


def register_module_full_backward_hook(hook) -> RemovableHandle:
    """``hook(module, grad_input, grad_output)`` for every module (before its own)."""
    return add_ordered(_global_backward_hooks, hook, False)


# hooks that see (and may replace) every parameter, buffer or submodule being registered
_global_buffer_registration_hooks: OrderedDict = OrderedDict()
_global_module_registration_hooks: OrderedDict = OrderedDict()
_global_parameter_registration_hooks: OrderedDict = OrderedDict()


def register_module_buffer_registration_hook(hook) -> RemovableHandle:
    """``hook(module, name, buffer)`` whenever any module registers a buffer; a non-None
    return value is registered instead."""
    return add_ordered(_global_buffer_registration_hooks, hook, False)


def register_module_module_registration_hook(hook) -> RemovableHandle:
    """``hook(module, name, submodule)`` whenever any module registers a submodule; a
    non-None return value is registered instead."""
    return add_ordered(_global_module_registration_hooks, hook, False)


def register_module_parameter_registration_hook(hook) -> RemovableHandle:
    """``hook(module, name, param)`` whenever any module registers a parameter; a non-None
    return value is registered instead."""
    return add_ordered(_global_parameter_registration_hooks, hook, False)


def run_registration_hooks(table: OrderedDict, module, name: str, value):
    """``value`` as the registration hooks in ``table`` leave it (in registration order)."""
    for hook in table.values():
        output = hook(module, name, value)
        if output is not None:
            value = output
    return value


def _call_legacy_hook(hook, module, grad_input, grad_output):
    return hook(module, grad_input, grad_output)


def call_with_hooks(self, args, kwargs):
    """Module.__call__ when any hook is registered: forward pre-hooks, backward hook
    set-up on the inputs, forward, forward hooks, backward hook set-up on the outputs
    (PyTorch's ``_call_impl``); always_call forward hooks run even when forward raises."""
    called_always = set()
    result = None
    forward_hooks = [*_global_forward_hooks.items(), *self._forward_hooks.items()]
    try:
        for hook_id, hook in [*_global_forward_pre_hooks.items(),
                              *self._forward_pre_hooks.items()]:
            if hook_id in self._forward_pre_hooks_with_kwargs:
                out = hook(self, args, kwargs)
                if out is not None:
                    if isinstance(out, tuple) and len(out) == 2:
                        args, kwargs = out
                    else:
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {out}.")
            else:
                out = hook(self, args)
                if out is not None:
                    args = out if isinstance(out, tuple) else (out,)
        full = self._is_full_backward_hook is not False
        own = list(self._backward_hooks.values())
        post_hooks = [*_global_backward_hooks.values(), *(own if full else [])]
        pre_hooks = [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]
        bw_hook = None
        if post_hooks or pre_hooks:
            bw_hook = BackwardHook(self, post_hooks, pre_hooks)
            args = bw_hook.setup_input_hook(args)
        result = self.forward(*args, **kwargs)
        for hook_id, hook in forward_hooks:
            if hook_id in self._forward_hooks_always_called or \
                    hook_id in _global_forward_hooks_always_called:
                called_always.add(hook_id)
            if hook_id in self._forward_hooks_with_kwargs:
                out = hook(self, args, kwargs, result)
            else:
                out = hook(self, args, result)
            if out is not None:
                result = out
        if bw_hook is not None:
            if not isinstance(result, (Tensor, tuple)):
                warnings.warn("For backward hooks to be called, module output should be a "
                              f"Tensor or a tuple of Tensors but received {type(result)}",
                              stacklevel=2)
            result = bw_hook.setup_output_hook(result)
        if own and not full:
            _attach_legacy_backward_hooks(self, args, result, own)
        return result
    except Exception:
        for hook_id, hook in forward_hooks:
            if hook_id in called_always or not (
                    hook_id in self._forward_hooks_always_called
                    or hook_id in _global_forward_hooks_always_called):
                continue
            try:
                if hook_id in self._forward_hooks_with_kwargs:
                    out = hook(self, args, kwargs, result)
                else:
                    out = hook(self, args, result)
                if out is not None:
                    result = out
            except Exception as e:
                warnings.warn("module forward hook with ``always_call=True`` raised an "
                              "exception that was silenced as another error was raised "
                              f"in forward: {e}", stacklevel=2)
        raise


def _attach_legacy_backward_hooks(self, inputs, result, hooks) -> None:
    """register_backward_hook's (deprecated) hooks go on the node that made the output."""
    var = result
    while not isinstance(var, Tensor):
        var = next(v for v in var.values() if isinstance(v, Tensor)) \
            if isinstance(var, dict) else var[0]
    grad_fn = var.grad_fn
    if grad_fn is None:
        return
    for hook in hooks:
        grad_fn.register_hook(functools.partial(_call_legacy_hook, hook, self))
    _warn_legacy_backward_hook(inputs, result, grad_fn)


_LEGACY = ("Using non-full backward hooks on a Module that does not {} is deprecated and will "
           "be removed in future versions. This hook will be missing some of the {}. Please use "
           "register_full_backward_hook to get the documented behavior.")


def _warn_legacy_backward_hook(inputs, result, grad_fn) -> None:
    """PyTorch's warnings where a non-full hook sees incomplete gradients."""
    def warn(text):
        warnings.warn(text, FutureWarning, stacklevel=4)

    def all_tensors(x):
        return isinstance(x, tuple) and all(isinstance(r, Tensor) for r in x)

    if isinstance(result, Tensor):
        result = (result,)
    elif not all_tensors(result):
        return warn(_LEGACY.format("return a single Tensor or a tuple of Tensors",
                                   "grad_output"))
    if isinstance(inputs, Tensor):
        inputs = (inputs,)
    elif not all_tensors(inputs):
        return warn(_LEGACY.format("take as input a single Tensor or a tuple of Tensors",
                                   "grad_input"))
    out_fns = {r.grad_fn for r in result if r.grad_fn is not None}
    if not out_fns or (len(out_fns) == 1 and grad_fn not in out_fns):
        warn("Using a non-full backward hook when outputs are nested in python data structure "
             "is deprecated and will be removed in future versions. This hook will be missing "
             "some grad_output.")
    elif len(out_fns) > 1:
        warn("Using a non-full backward hook when outputs are generated by different autograd "
             "Nodes is deprecated and will be removed in future versions. This hook will be "
             "missing some grad_output. Please use register_full_backward_hook to get the "
             "documented behavior.")
    elif {i.grad_fn for i in inputs if i.grad_fn is not None} != \
            {n for n, _ in grad_fn.next_functions}:
        warn("Using a non-full backward hook when the forward contains multiple autograd Nodes "
             "is deprecated and will be removed in future versions. This hook will be missing "
             "some grad_input. Please use register_full_backward_hook to get the documented "
             "behavior.")
