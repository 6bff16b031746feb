"""``nn.Module``: the base class of every layer, with PyTorch's full contract.

Parameters, buffers and submodules live in three ordered dicts (``_parameters``,
``_buffers``, ``_modules``), filled by attribute assignment; ``__getattr__`` finds them
there (it runs only when normal lookup fails, so plain attributes cost nothing extra).
Calling a module runs ``forward``; the hook machinery runs only when a hook is registered,
so a module call costs one method call more than ``forward`` itself.  ``state_dict`` /
``load_state_dict`` and their hooks come from ``_state_dict.py`` (:class:`StateDictMixin`).
"""

from __future__ import annotations

from collections import OrderedDict

from .. import dtypes
from .._creation import empty_like
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from ._hooks import (
    RemovableHandle, _global_backward_hooks, _global_backward_pre_hooks,
    _global_buffer_registration_hooks, _global_forward_hooks, _global_forward_pre_hooks,
    _global_module_registration_hooks, _global_parameter_registration_hooks, add_ordered,
    call_with_hooks, register_module_buffer_registration_hook, register_module_forward_hook,
    register_module_forward_pre_hook, register_module_full_backward_hook,
    register_module_full_backward_pre_hook, register_module_module_registration_hook,
    register_module_parameter_registration_hook, run_registration_hooks,
)
from ._state_dict import StateDictMixin
from .parameter import Buffer, Parameter, buffer_persistent

__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_pre_hook", "register_module_full_backward_hook",
           "register_module_buffer_registration_hook",
           "register_module_module_registration_hook",
           "register_module_parameter_registration_hook"]


def _addindent(s: str, num_spaces: int) -> str:
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(num_spaces * " " + line for line in lines)


def _typename(obj) -> str:
    """PyTorch's torch.typename: 'retrograd.FloatTensor' for tensors, the qualified class."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(type(obj), "__module__", "") or ""
    name = type(obj).__qualname__
    return name if module in ("", "builtins") else f"{module}.{name}"


class Module(StateDictMixin):
    """Base class for all neural network modules: subclass it, assign layers and
    parameters in ``__init__``, and write ``forward``.

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd import nn
    >>> class Net(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.fc = nn.Linear(2, 1)
    ...     def forward(self, x):
    ...         return self.fc(x)
    >>> [name for name, _ in Net().named_parameters()]
    ['fc.weight', 'fc.bias']
    """

    training: bool
    _version = 1
    call_super_init = False
    dump_patches = False

    def __init__(self, *args, **kwargs) -> None:
        if kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument "
                            f"but {len(args) + 1} were given")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_backward_pre_hooks"] = OrderedDict()
        d["_backward_hooks"] = OrderedDict()
        d["_is_full_backward_hook"] = None
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = OrderedDict()
        d["_forward_hooks_always_called"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = OrderedDict()
        d["_state_dict_hooks"] = OrderedDict()
        d["_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_pre_hooks"] = OrderedDict()
        d["_load_state_dict_post_hooks"] = OrderedDict()
        d["_modules"] = {}

    def forward(self, *input):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function')

    # ------------------------------------------------------------------ registration
    def register_buffer(self, name: str, tensor, persistent: bool = True) -> None:
        """Add a buffer (state that is not a parameter); ``persistent=False`` keeps it out
        of ``state_dict``."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        tensor = run_registration_hooks(_global_buffer_registration_hooks, self, name, tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param) -> None:
        """Add a parameter (a :class:`Parameter` or None) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        elif param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must "
                f"be created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method.")
        else:
            self._parameters[name] = run_registration_hooks(
                _global_parameter_registration_hooks, self, name, param)

    def add_module(self, name: str, module) -> None:
        """Add a child module under ``name`` (also reachable as an attribute)."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = run_registration_hooks(
            _global_module_registration_hooks, self, name, module)

    def register_module(self, name: str, module) -> None:
        """Alias of :meth:`add_module`."""
        self.add_module(name, module)

    def _walk(self, target: str, what: str):
        """The module at dotted path ``target`` (the error names where the walk stopped)."""
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_submodule(self, target: str) -> "Module":
        """The submodule at dotted path ``target`` ('' is this module)."""
        if target == "":
            return self
        return self._walk(target, "module")

    def set_submodule(self, target: str, module: "Module", strict: bool = False) -> None:
        """Replace (or with ``strict=False`` add) the submodule at dotted path ``target``."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(parent._get_name() + " has no attribute `" + name + "`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError("`" + name + "` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target`` ('layer.weight')."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    # ------------------------------------------------------------------ attribute protocol
    def __getattr__(self, name: str):
        d = self.__dict__
        if "_parameters" in d:
            p = d["_parameters"]
            if name in p:
                return p[name]
        if "_buffers" in d:
            b = d["_buffers"]
            if name in b:
                return b[name]
        if "_modules" in d:
            m = d["_modules"]
            if name in m:
                return m[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__

        def remove_from(*tables):
            for t in tables:
                if name in t:
                    if isinstance(t, dict):
                        del t[name]
                    else:
                        t.discard(name)

        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = run_registration_hooks(
                _global_module_registration_hooks, self, name, value)
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = run_registration_hooks(
                _global_module_registration_hooks, self, name, value)
            return
        buffers = d.get("_buffers")
        is_buffer = isinstance(value, Buffer)
        if is_buffer or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            persistent = (buffer_persistent(value) if is_buffer
                          else name not in self._non_persistent_buffers_set)
            self.register_buffer(name, value, persistent)
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        attrs = dir(self.__class__) + list(self.__dict__) + list(self._parameters) + \
            list(self._modules) + list(self._buffers)
        return sorted(a for a in attrs if not a[0].isdigit())

    def __setstate__(self, state) -> None:
        self.__dict__.update(state)

    # ------------------------------------------------------------------ iteration
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (module_prefix + ("." if module_prefix else "") + k, v)

    def parameters(self, recurse: bool = True):
        """The parameters of this module (and, with ``recurse``, its submodules)."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True):
        """``(name, parameter)`` pairs, names dotted ('0.weight'), in registration order."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def buffers(self, recurse: bool = True):
        """The buffers of this module (and, with ``recurse``, its submodules)."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True):
        """``(name, buffer)`` pairs, names dotted."""
        yield from self._named_members(lambda m: m._buffers.items(), prefix=prefix,
                                       recurse=recurse, remove_duplicate=remove_duplicate)

    def children(self):
        """The direct submodules."""
        for _, m in self.named_children():
            yield m

    def named_children(self):
        """``(name, module)`` for the direct submodules (each module once)."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in memo:
                memo.add(id(module))
                yield name, module

    def modules(self):
        """This module and every submodule, depth first (each once)."""
        for _, m in self.named_modules():
            yield m

    def named_modules(self, memo=None, prefix: str = "", remove_duplicate: bool = True):
        """``(name, module)`` for this module ('') and every submodule, depth first."""
        if memo is None:
            memo = set()
        if self not in memo:
            if remove_duplicate:
                memo.add(self)
            yield prefix, self
            for name, module in self._modules.items():
                if module is None:
                    continue
                sub = prefix + ("." if prefix else "") + name
                yield from module.named_modules(memo, sub, remove_duplicate)

    # ------------------------------------------------------------------ modes and state
    def train(self, mode: bool = True) -> "Module":
        """Set training mode (dropout active...) here and in every submodule."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> "Module":
        """Set evaluation mode: ``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        """Set ``requires_grad`` of every parameter."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def _parameters_in_order(self):
        """``list(self.parameters())`` without building the dotted names (zero_grad runs
        every training step: the generators and names were a twentieth of an nn.Linear
        MLP's step, bench/ (m)); None where a module overrides the walk, which the caller
        then takes as it is."""
        cls = type(self)
        if cls.parameters is not Module.parameters or cls.named_parameters is not \
                Module.named_parameters:
            return None
        base_walk, base_members = Module.named_modules, Module._named_members
        params, seen, modules = [], set(), set()
        # preorder, as named_modules: a stack of the modules still to visit, children
        # pushed in reverse (one loop: a call per module was most of zero_grad's cost)
        stack = [self]
        pop, push = stack.pop, stack.extend
        while stack:
            m = pop()
            if m is None:  # (a submodule slot set to None)
                continue
            cls = type(m)
            if cls.named_modules is not base_walk or cls._named_members is not base_members:
                return None
            if m in modules:
                continue
            modules.add(m)
            # (one attribute read, not two: every read of a Module's attribute goes through
            # its __getattr__ slot, three type lookups, whose cache misses made stop 25's
            # bench/ (m) count move with unrelated code)
            d = m.__dict__
            try:
                ps, subs = d["_parameters"], d["_modules"]
            except KeyError:  # (a module whose __init__ never ran: AttributeError, as ever)
                ps, subs = m._parameters, m._modules
            for v in ps.values():
                if v is not None and id(v) not in seen:
                    seen.add(id(v))
                    params.append(v)
            if subs:
                push(reversed(subs.values()))
        return params

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter (to None by default, else zeros)."""
        params = self._parameters_in_order()
        for p in self.parameters() if params is None else params:
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    g = p.grad
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def apply(self, fn) -> "Module":
        """Call ``fn(m)`` on every submodule (children first) and on this module."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def share_memory(self) -> "Module":
        return self

    def _apply(self, fn, recurse: bool = True) -> "Module":
        """Replace each parameter's and buffer's data by ``fn(data)`` (to(), float()...)."""
        if recurse:
            for module in self.children():
                module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            with no_grad():
                new = fn(param)
            param.data = new  # the Parameter object stays (optimizers hold it)
            if param.grad is not None:
                with no_grad():
                    param._grad = fn(param.grad)
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs) -> "Module":
        """Move/cast parameters and buffers: ``to(dtype)``, ``to(device)``, ``to(tensor)``;
        only floating-point values change dtype, as PyTorch."""
        device, dtype = kwargs.get("device"), kwargs.get("dtype")
        for a in args:
            if isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            elif isinstance(a, dtypes.dtype):
                dtype = a
            elif isinstance(a, bool):
                continue  # non_blocking
            elif a is not None:
                device = a
        if dtype is not None:
            dtype = dtypes.to_dtype(dtype)
            if not dtype.is_floating_point:
                raise TypeError("nn.Module.to only accepts floating point or complex dtypes, "
                                f"but got desired dtype={dtype}")

        def convert(t):
            if device is not None:
                t = t.to(device)
            if dtype is not None and t.is_floating_point():
                t = t.to(dtype)
            return t

        return self._apply(convert)

    def cpu(self) -> "Module":
        """Move every parameter and buffer to the CPU."""
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None) -> "Module":
        """Move every parameter and buffer to a CUDA device (needs CuPy)."""
        return self._apply(lambda t: t.cuda(device))

    def to_empty(self, *, device, recurse: bool = True) -> "Module":
        """Give every parameter and buffer fresh, uninitialised storage of the same shape
        and dtype on ``device`` (PyTorch's way out of the meta device)."""
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def type(self, dst_type) -> "Module":
        """Cast every parameter and buffer to ``dst_type``."""
        return self._apply(lambda t: t.type(dst_type))

    def float(self) -> "Module":
        """Cast floating-point parameters and buffers to float32."""
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self) -> "Module":
        """Cast floating-point parameters and buffers to float64."""
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self) -> "Module":
        """Cast floating-point parameters and buffers to float16."""
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    # ------------------------------------------------------------------ hooks
    def register_forward_pre_hook(self, hook, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """``hook(module, args)`` (or ``(module, args, kwargs)`` with ``with_kwargs``) runs
        before forward and may return new args (or ``(args, kwargs)``)."""
        handle = add_ordered(self._forward_pre_hooks, hook, prepend,
                             extra=self._forward_pre_hooks_with_kwargs)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """``hook(module, args, output)`` (``(module, args, kwargs, output)`` with
        ``with_kwargs``) runs after forward and may return a new output; ``always_call``
        runs it even when forward raises."""
        handle = add_ordered(self._forward_hooks, hook, prepend,
                             extra=[self._forward_hooks_with_kwargs,
                                    self._forward_hooks_always_called])
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_output)`` runs when the gradients of the outputs are known;
        it may return a new grad_output."""
        return add_ordered(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """``hook(module, grad_input, grad_output)`` runs when the gradients of the module's
        inputs are computed; it may return a new grad_input."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = True
        return add_ordered(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook) -> RemovableHandle:
        """Deprecated (as in PyTorch): ``hook(module, grad_input, grad_output)`` on the node
        that made the output, whose grad_input are that node's input gradients; use
        :meth:`register_full_backward_hook`."""
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = False
        return add_ordered(self._backward_hooks, hook, False)

    def _call_with_hooks(self, args, kwargs):
        return call_with_hooks(self, args, kwargs)

    def __call__(self, *args, **kwargs):
        d = self.__dict__
        if (d["_forward_pre_hooks"] or d["_forward_hooks"] or d["_backward_hooks"]
                or d["_backward_pre_hooks"] or _global_forward_pre_hooks
                or _global_forward_hooks or _global_backward_hooks
                or _global_backward_pre_hooks):
            return self._call_with_hooks(args, kwargs)
        return self.forward(*args, **kwargs)

    _call_impl = __call__

    # ------------------------------------------------------------------ repr
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The text between the parentheses of this module's repr (override it)."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"
