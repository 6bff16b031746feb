"""Module hook machinery: removable handles over ordered tables, and full backward hooks.

Full backward hooks work as PyTorch's (``torch/utils/hooks.py``): the module's tensor
inputs and outputs each pass through one identity autograd Function.  The gradient
reaching the outputs' identity node is ``grad_output`` (backward pre-hooks may replace
it); the gradient leaving the inputs' identity node is ``grad_input``, which the user
hooks see and may replace.
"""

from __future__ import annotations

import itertools
import warnings
import weakref
from collections import OrderedDict

from .._creation import zeros
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..tensor import Tensor

_ids = itertools.count()


class RemovableHandle:
    """What ``register_*_hook`` returns: ``handle.remove()`` unregisters the hook (also as
    a context manager).  ``extra_dict`` tables (with_kwargs / always_call flags) lose the
    entry too."""

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(_ids)
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
