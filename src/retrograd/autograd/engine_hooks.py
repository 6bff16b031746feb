"""Hooks as the backward engine runs them: a tensor's hooks (each may replace the gradient),
a node's pre-hooks and post-hooks, with PyTorch's checks of what a hook returns.

Gradients travel as arrays in a first-order pass and as tensors under ``create_graph``;
a hook always sees tensors, so ``_wrap``/``_unwrap`` convert at the boundary.  ``above``
holds what the engine needs from the layers above autograd (the package's assembly,
``retrograd/_assembly.py``, fills it in), so this module imports no tensor or op.
"""

from __future__ import annotations

from ..backend import as_array
from .grad_mode import state


class _Above:
    """What the engine needs from the layers above autograd: the Tensor class and
    ``make_tensor`` (tensors for hooks and ``create_graph=True``), and the ops
    ``sum_to_size`` and ``copy_`` (recorded under ``create_graph=True``).  The package's
    assembly (``retrograd/_assembly.py``) fills them in: the engine imports no tensor or op."""

    __slots__ = ("Tensor", "make_tensor", "sum_to_size", "sum_to_size_op", "copy_")


above = _Above()


def _wrap(g, as_tensors):
    if g is None or as_tensors:
        return g
    make_tensor = above.make_tensor

    return make_tensor(as_array(g))


def _unwrap(t, as_tensors):
    if t is None or as_tensors:
        return t
    return t._data


def _run_tensor_hooks(hooks, g, as_tensors, what):
    """Tensor hooks: each sees the gradient so far and may return a replacement.

    An undefined gradient (None: the tensor got none) is shown to the hooks too, as
    PyTorch's; it cannot be replaced."""
    tracer = state.tracer
    for fn in list(hooks.values()):
        given = _wrap(g, as_tensors)
        result = fn(given)
        if tracer is not None:
            tracer.hook(f"tensor hook on {what}", fn, given, result)
        if result is not None:
            if g is None:
                raise RuntimeError("can't replace a None gradient with a non-None value")
            if not hasattr(result, "_data"):
                raise TypeError(
                    f"a hook registered on {what} returned {type(result).__name__}; hooks must "
                    "return a Tensor (the new gradient) or None"
                )
            # g is an array, or a Tensor under create_graph: compare the arrays
            want = g._data if as_tensors else g
            if result._data.shape != want.shape:
                raise RuntimeError(
                    f"hook on {what} returned a gradient of shape {list(result._data.shape)}, "
                    f"but the gradient has shape {list(want.shape)}; a hook must keep the shape"
                )
            if result._data.dtype != want.dtype:
                raise RuntimeError(
                    f"hook '{getattr(fn, '__name__', fn)}' on {what} has changed the type of "
                    f"value (was {want.dtype} got {result._data.dtype}); a hook must keep the "
                    "dtype"
                )
            g = _unwrap(result, as_tensors)
    return g


def _run_pre_hooks(node, hooks, g, as_tensors):
    """The node's own pre-hooks (``grad_fn.register_prehook``): may replace grad_outputs."""
    multi = node.multi_output
    grads = list(g) if multi else [g]
    tracer = state.tracer
    if hooks.pre:
        for fn in list(hooks.pre.values()):
            wrapped = tuple(_wrap(x, as_tensors) for x in grads)
            result = fn(wrapped)
            if tracer is not None:
                tracer.hook(f"pre-hook of {node.name()}", fn, wrapped, result)
            if result is not None:
                _check_hook_result(fn, result, wrapped)
                grads = [_unwrap(x, as_tensors) for x in result]
    return grads if multi else grads[0]


def _run_post_hooks(node, hooks, grads, g, as_tensors):
    outs = tuple(_wrap(x, as_tensors) for x in (g if node.multi_output else [g]))
    tracer = state.tracer
    for fn in list(hooks.post.values()):
        given = tuple(_wrap(x, as_tensors) for x in grads)
        result = fn(given, outs)
        if tracer is not None:
            tracer.hook(f"post-hook of {node.name()}", fn, given, result)
        if result is not None:
            _check_hook_result(fn, result, given)
            grads = tuple(_unwrap(x, as_tensors) for x in result)
    return grads


def _check_hook_result(fn, result, given):
    """A node hook's replacement gradients: a tuple of as many values, each None, or of
    the type and size of the one it replaces, which must not be None (PyTorch's checks and
    messages, check_single_result's order)."""
    if not isinstance(result, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(result).__name__}'")
    name = getattr(fn, "__name__", repr(fn))
    if len(result) != len(given):
        raise RuntimeError(f"hook '{name}' has returned an incorrect number of values (got "
                           f"{len(result)}, but expected {len(given)})")
    for new, old in zip(result, given):
        if new is None:
            continue
        if not hasattr(new, "_data"):
            raise TypeError(f"hook '{name}' returned {type(new).__name__} in its tuple; "
                            "expected Tensor or None")
        if old is None:
            raise RuntimeError("can't replace a None gradient with a non-None value")
        if new._data.dtype != old._data.dtype:
            raise RuntimeError(f"hook '{name}' has changed the type of value (was "
                               f"{old.type()} got {new.type()})")
        if new._data.shape != old._data.shape:
            raise RuntimeError(f"hook '{name}' has changed the size of value")
