"""``retrograd.compile``: trace a step once, replay it as straight-line NumPy.

>>> import retrograd as T
>>> w = T.tensor([1.0, 2.0], requires_grad=True)
>>> opt = T.optim.SGD([w], lr=0.1)
>>> @T.compile
... def step(x):
...     opt.zero_grad()
...     loss = (w * x).sum()
...     loss.backward()
...     opt.step()
...     return loss
>>> for _ in range(3):
...     loss = step(T.tensor([1.0, 1.0]))
>>> w
tensor([0.7000, 1.7000], requires_grad=True)

The first two calls with a new guard key run eagerly while a recorder notes every array
operation of the forward, the backward (the derivative calls the engine makes on arrays,
the sums of gradients, the ``.grad`` accumulations) and ``optimizer.step()`` /
``zero_grad()``; from the third call on, the recording is replayed without building
tensors, graph nodes or running the engine, and the tensors the caller sees (the returned
values, parameters, ``.grad``, optimizer state) get the values an eager call would give,
bit for bit.  The common steps (linear layers, relu, log-softmax and nll, pointwise ufuncs,
their derivatives) are replayed as the NumPy calls themselves (``_lower``).
``module.compile()`` compiles a module's forward in place, as PyTorch's.

Guards: argument shapes, dtypes and ``requires_grad`` flags, Python scalar arguments, grad
mode / inference mode and (for a module) ``training``; a new combination is traced anew
(up to ``MAX_TRACES``).  Python values that are not arguments (a closure's scalar, an
optimizer's learning rate) are checked by the two traces agreeing; an optimizer's own
state (lr, step counts) is read live because ``optimizer.step()`` is replayed as a call.

Falls back to eager, with one warning naming the reason and the line, for what a replay
could not reproduce: a tensor value read by Python (``.item()``, ``if x.sum() > 0``),
hooks, random numbers, ``backward(create_graph=True)`` into ``.grad``, ``retain_graph``
without ``create_graph``, in-place changes of tensors outside ``optimizer.step()``, custom
``autograd.Function``s, ops whose output shape depends on the values, values computed
outside the ops the tracer sees.  ``autograd.grad(..., create_graph=True)`` compiles (its
derivative ops are recorded as forwards): a Hessian-vector product replays.
"""

from __future__ import annotations

from ..nn.module import Module as _Module
from ._compiled import MAX_TRACES, CompiledFunction, CompiledModule
from ._trace import UncompilableError

__all__ = ["compile", "CompiledFunction", "CompiledModule", "UncompilableError", "MAX_TRACES"]


def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend="numpy",  # noqa: A001
            mode=None, options=None, disable: bool = False):
    """Compile a function or an ``nn.Module`` (as ``torch.compile``); usable as a decorator,
    with or without arguments (``@compile`` or ``@compile(mode=...)``).

    Parameters
    ----------
    model : callable or nn.Module
        The step to compile.  A module gives a module-like object whose calls are compiled.
    fullgraph : bool
        True: raise (RuntimeError) instead of falling back to eager when the function
        cannot be compiled.
    dynamic, mode, options :
        Accepted for PyTorch compatibility and ignored: every guard combination gets its
        own trace (as ``dynamic=False``), and there is one mode (replay of NumPy calls).
    backend : str
        Only ``"numpy"`` (the replay); other names are accepted and mean the same.
    disable : bool
        True: return ``model`` unchanged (eager).
    """
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                 mode=mode, options=options, disable=disable)
    if disable:
        return model
    from ..nn.module import Module

    if isinstance(model, Module):
        return CompiledModule(model, mode=mode, fullgraph=fullgraph, dynamic=dynamic)
    if not callable(model):
        raise TypeError(f"compile(): expected a function or an nn.Module, got "
                        f"{type(model).__name__}")
    return CompiledFunction(model, mode=mode, fullgraph=fullgraph, dynamic=dynamic)


def _compile_module_in_place(self, *args, **kwargs) -> None:
    """Compile this module's forward in place with :func:`retrograd.compile` (PyTorch's
    ``nn.Module.compile``): later calls of the module run the compiled forward, guarded on
    its ``training`` flag like ``retrograd.compile(module)``; forward hooks of this module
    run around it, eagerly.  The arguments are ``retrograd.compile``'s.

    >>> import retrograd as T
    >>> lin = T.nn.Linear(2, 1)
    >>> lin.compile()
    >>> with T.no_grad():
    ...     for _ in range(3):  # traced twice, then replayed
    ...         y = lin(T.ones(3, 2))
    >>> lin.forward.traces
    1
    """
    compiled = compile(self, *args, **kwargs)
    if compiled is self:  # disable=True
        return
    # an instance attribute, which the class's __call__ finds before the class's forward
    options = compiled._compiled
    self.__dict__["forward"] = _compiled_forward(self, options.mode, options.fullgraph,
                                                 options.dynamic)


class _CompiledForward(CompiledFunction):
    """A module's forward compiled in place: a copy or pickle of the module gets its own
    (its traces are the original's, not the copy's: it compiles afresh)."""

    _hooks_run_outside = True  # the class's __call__ runs the module's own hooks

    def __reduce__(self):
        return (_compiled_forward, (self._module, self.mode, self.fullgraph, self.dynamic))


def _compiled_forward(module, mode, fullgraph, dynamic):
    forward = type(module).forward.__get__(module, type(module))
    return _CompiledForward(forward, module, mode=mode, fullgraph=fullgraph, dynamic=dynamic)


_Module.compile = _compile_module_in_place
