"""In-place ops (``add_``, ``mul_``, ``zero_``, ``copy_``...): version counting and rebasing.

An in-place op computes its result with the out-of-place op, writes it into the
tensor's own array (so views and ``.data`` aliases see it), bumps the version counter, and
makes the tensor's grad_fn the new node.  The node's input is a *shadow* holding the
tensor's previous graph position (and, if the op saves its inputs, the previous values).
"""

from __future__ import annotations

from ..autograd.grad_mode import state
from ..tensor import Tensor, make_tensor
from . import pointwise


def shadow_of(x, keep_values: bool):
    """A stand-in for ``x`` as it was before an in-place change."""
    s = make_tensor(x._data.copy() if keep_values else x._data, x._grad_fn)
    s._requires_grad = x._requires_grad
    s._nr = x._nr
    s._acc = x._acc
    return s


def _leaf_error(x, name):
    return RuntimeError(
        f"a leaf Variable that requires grad is being used in an in-place operation ({name} "
        f"on a leaf of shape {list(x.shape)}). Modify it under `with retrograd.no_grad():` "
        "(e.g. an optimizer step or an initialisation), or use the out-of-place op."
    )


def _write(x, data, name):
    target = x._data
    if data.dtype != target.dtype:
        if target.dtype.kind != "f" and data.dtype.kind == "f" or (
            target.dtype.kind == "b" and data.dtype.kind != "b"
        ):
            raise RuntimeError(
                f"result type {pointwise.scalar_type_name(data.dtype)} can't be cast to the "
                f"desired output type {pointwise.scalar_type_name(target.dtype)} in {name} (the "
                f"tensor is {x.dtype}); use the out-of-place op or convert the tensor first"
            )
    if data.shape != target.shape:
        raise RuntimeError(
            f"output with shape {list(target.shape)} doesn't match the broadcast shape "
            f"{list(data.shape)} in {name}; an in-place op cannot change the tensor's shape"
        )
    target[...] = data


def inplace(op_fn, name, saves_inputs):
    """Make ``x.name_(other)`` from the out-of-place ``op_fn``."""

    def method(x, *args, **kwargs):
        wants = state.enabled and (
            x._requires_grad or any(isinstance(a, Tensor) and a._requires_grad
                                   for a in (*args, *kwargs.values()))
        )
        if wants and x._grad_fn is None and x._requires_grad:
            raise _leaf_error(x, name)
        if wants:
            result = op_fn(shadow_of(x, saves_inputs), *args, **kwargs)
            _write(x, result._data, name)
            x._grad_fn = result._grad_fn
            x._requires_grad = result._requires_grad
            x._nr = 0
        else:
            with _no_record():
                result = op_fn(x, *args, **kwargs)
            _write(x, result._data if isinstance(result, Tensor) else result, name)
        x._bump_version()
        return x

    method.__name__ = name
    method.__doc__ = f"In-place version of ``{name[:-1]}``."
    return method


class _no_record:
    def __enter__(self):
        self.prev = state.enabled
        state.enabled = False

    def __exit__(self, *exc):
        state.enabled = self.prev


add_ = inplace(lambda x, other, alpha=1: pointwise.add(x, other, alpha=alpha), "add_", False)
sub_ = inplace(lambda x, other, alpha=1: pointwise.sub(x, other, alpha=alpha), "sub_", False)
mul_ = inplace(pointwise.mul, "mul_", True)
div_ = inplace(pointwise.div, "div_", True)
pow_ = inplace(pointwise.power, "pow_", True)
clamp_ = inplace(pointwise.clamp, "clamp_", True)
relu_ = inplace(pointwise.relu, "relu_", False)
neg_ = inplace(pointwise.neg, "neg_", False)
exp_ = inplace(pointwise.exp, "exp_", False)


def _fill_fwd(a, value):
    out = a.copy()
    out[...] = value
    return out


# PyTorch 2.13's names: FillBackward2 for a number, FillBackward3 for a 0-d tensor (whose
# gradient is the sum of the output's: the engine reduces the broadcast), ZeroBackward0
_fill_op = pointwise.defop("fill", _fill_fwd, lambda node, g, saved: (g * 0,), "FillBackward2",
                           1, pointwise.NOTHING)
_fill_tensor_op = pointwise.defop(
    "fill", _fill_fwd,
    lambda node, g, saved: (g * 0 if node.next[0] else None, g if node.next[1] else None),
    "FillBackward3", 2, pointwise.NOTHING)
_zero_op = pointwise.defop("zero", lambda a: _fill_fwd(a, 0), lambda node, g, saved: (g * 0,),
                           "ZeroBackward0", 1, pointwise.NOTHING)
_fill_number = inplace(_fill_op, "fill_", False)
_fill_tensor = inplace(_fill_tensor_op, "fill_", False)


def fill_(x, value):
    """Fill with ``value`` (a number or a 0-d tensor) in place."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions (shape {list(value.shape)}); use copy_ to write a "
                "tensor of values"
            )
        return _fill_tensor(x, value)
    return _fill_number(x, value)


zero_ = inplace(_zero_op, "zero_", False)
zero_.__doc__ = "Fill with zeros in place (``x.grad.zero_()``, ``x.grad.data.zero_()``)."


def _copy_fwd(a, src):
    xp_src = src
    out = a.copy()
    out[...] = xp_src
    return out


def _copy_vjp(node, g, saved):
    na, ns = node.next
    return (g * 0 if na else None, g if ns else None)


_copy_op = pointwise.defop("copy", _copy_fwd, _copy_vjp, "CopyBackwards", 2, pointwise.NOTHING)
copy_ = inplace(_copy_op, "copy_", False)
