"""``Variable``: the pre-0.4 wrapper the seed post uses.  Today it just returns a Tensor."""

from __future__ import annotations


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        from ..tensor import Tensor

        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(t, requires_grad=True)`` returns a Tensor sharing ``t``'s memory.

    Every Tensor is an instance of Variable, as in PyTorch since 0.4.
    """

    def __new__(cls, data, requires_grad=False, volatile=False):
        from ..tensor import Tensor, make_tensor

        if not isinstance(data, Tensor):
            raise TypeError(
                f"Variable data has to be a tensor, but got {type(data).__name__}; wrap it "
                "first with retrograd.tensor(...)"
            )
        if volatile:
            import warnings

            warnings.warn(
                "volatile was removed and now has no effect. Use `with retrograd.no_grad():` "
                "instead.", UserWarning, stacklevel=2,
            )
        out = make_tensor(data._data)
        if data._vc is None:
            data._vc = [0]
        out._vc = data._vc
        if requires_grad:
            out.requires_grad_(True)
        return out
