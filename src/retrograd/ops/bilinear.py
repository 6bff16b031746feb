"""``bilinear``: ``y[..., o] = x1[..., i] W[o, i, j] x2[..., j] + b[o]``.

PyTorch flattens the batch dimensions of both inputs (reshape to (-1, features)), runs its
``_trilinear`` kernel (TrilinearBackward0) and views the result back; retrograd records the
same graph.  The three derivatives are einsums of the other two factors with the gradient,
written with retrograd's einsum so they differentiate again.
"""

from __future__ import annotations

from ..backend import namespace
from ..tensor import Tensor
from ._apply import INPUTS, defop
from .einsum import einsum
from .quiet_fp import quiet_fp


@quiet_fp
def _trilinear_fwd(x1, w, x2):
    return namespace(x1).einsum("bi,oij,bj->bo", x1, w, x2, optimize=True)


def _trilinear_vjp(node, g, saved):
    x1, w, x2 = saved
    n1, nw, n2 = node.next
    return (einsum("bo,oij,bj->bi", g, w, x2) if n1 else None,
            einsum("bo,bi,bj->oij", g, x1, x2) if nw else None,
            einsum("bo,oij,bi->bj", g, w, x1) if n2 else None)


# each factor only for the other two's gradients, as PyTorch saves them (wrap_opt_if)
_trilinear = defop("_trilinear", _trilinear_fwd, _trilinear_vjp, "TrilinearBackward0", 3,
                   INPUTS, "promote", saved_for=lambda needs: (
                       needs[1] or needs[2], needs[0] or needs[2], needs[0] or needs[1]))


def bilinear(input1, input2, weight, bias=None):
    """``x1^T W[o] x2 + b[o]`` for each output feature ``o``: ``input1`` (..., in1),
    ``input2`` (..., in2) with the same batch dimensions, ``weight`` (out, in1, in2),
    ``bias`` (out,).

    Examples
    --------
    >>> import retrograd as T
    >>> w = T.ones(1, 2, 2)
    >>> T.bilinear(T.tensor([[1.0, 2.0]]), T.tensor([[3.0, 4.0]]), w)
    tensor([[21.]])
    """
    for name, x in (("input1", input1), ("input2", input2), ("weight", weight)):
        if not isinstance(x, Tensor):
            raise TypeError(f"bilinear(): argument '{name}' must be Tensor, not "
                            f"{type(x).__name__}")
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and "
                           f"{input2.ndim}")
    for i in range(input1.ndim - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: "
                               f"got {input1.shape[i]} and {input2.shape[i]}")
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be 3-d (out, in1, in2), got shape "
                           f"{list(weight.shape)}")
    for k, x in ((1, input1), (2, input2)):
        if x.shape[-1] != weight.shape[k]:
            raise RuntimeError(f"bilinear(): input{k} size does not match weight size: got "
                               f"{x.shape[-1]} but expected {weight.shape[k]}")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[-1] if bias.ndim else 1} but expected "
                           f"{weight.shape[0]}")
    kinds = {x._data.dtype for x in (input1, input2, weight)}
    if len(kinds) > 1:
        raise RuntimeError(f"All tensors must have the same dtype, got input1: "
                           f"{input1._data.dtype}, input2: {input2._data.dtype}, weight: "
                           f"{weight._data.dtype} (bilinear: convert them with .to())")
    out_shape = (*input1.shape[:-1], weight.shape[0])
    out = _trilinear(input1.reshape(-1, input1.shape[-1]), weight,
                     input2.reshape(-1, input2.shape[-1])).reshape(out_shape)
    return out if bias is None else out + bias


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(bilinear, method=False, functional=("bilinear",))
