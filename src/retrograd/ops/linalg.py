"""Matrix products.  ``matmul`` covers 1-D, 2-D and broadcast batched operands.

grad_fn names follow PyTorch's dispatch: DotBackward0 (1-D @ 1-D), MvBackward0
(2-D @ 1-D), MmBackward0 (2-D @ 2-D), BmmBackward0 (3-D @ 3-D, same batch), and
UnsafeViewBackward0 for the other batched and broadcast cases.
"""

from __future__ import annotations

from ._apply import INPUTS, defop
from .index import getitem
from .shape import transpose


def _mT(x):  # noqa: N802 - swap the last two dimensions
    return transpose(x, -2, -1)


def _matmul_vjp(node, g, saved):
    a, b = saved
    na, nb = node.next
    a1, b1 = a.ndim == 1, b.ndim == 1
    ga = gb = None
    if a1 and b1:  # dot: out is 0-d
        ga = g * b if na else None
        gb = g * a if nb else None
    elif a1:  # (k) @ (..., k, n) -> (..., n)
        if na:
            ga = getitem(matmul(b, getitem(g, (Ellipsis, None))), (Ellipsis, 0))
        if nb:
            gb = getitem(a, (slice(None), None)) * getitem(g, (Ellipsis, None, slice(None)))
    elif b1:  # (..., m, k) @ (k) -> (..., m)
        if na:
            ga = getitem(g, (Ellipsis, None)) * b
        if nb:
            gb = getitem(matmul(_mT(a), getitem(g, (Ellipsis, None))), (Ellipsis, 0))
    else:  # the engine sums broadcast batch dimensions back to each input's shape
        ga = matmul(g, _mT(b)) if na else None
        gb = matmul(_mT(a), g) if nb else None
    return (ga, gb)


def _matmul_fwd(a, b):
    return a @ b


_dot = defop("matmul", _matmul_fwd, _matmul_vjp, "DotBackward0", 2, INPUTS, "promote")
_mv = defop("matmul", _matmul_fwd, _matmul_vjp, "MvBackward0", 2, INPUTS, "promote")
_mm = defop("matmul", _matmul_fwd, _matmul_vjp, "MmBackward0", 2, INPUTS, "promote")
_bmm = defop("matmul", _matmul_fwd, _matmul_vjp, "BmmBackward0", 2, INPUTS, "promote")
_squeeze = defop("matmul", _matmul_fwd, _matmul_vjp, "SqueezeBackward4", 2, INPUTS, "promote")
_batched = defop("matmul", _matmul_fwd, _matmul_vjp, "UnsafeViewBackward0", 2, INPUTS,
                 "promote")


def matmul(a, b):
    """Matrix product with NumPy/PyTorch broadcasting rules (``a @ b``)."""
    if not hasattr(a, "_data") and not hasattr(b, "_data"):
        return a @ b
    ad, bd = getattr(a, "_data", a), getattr(b, "_data", b)
    if ad.ndim == 0 or bd.ndim == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {ad.ndim}D and "
            f"{bd.ndim}D; use * for multiplication by a scalar"
        )
    ka = ad.shape[-1]
    kb = bd.shape[0] if bd.ndim == 1 else bd.shape[-2]
    if ka != kb:
        sa = "x".join(map(str, ad.shape if ad.ndim > 1 else (1,) + ad.shape))
        sb = "x".join(map(str, bd.shape if bd.ndim > 1 else bd.shape + (1,)))
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({sa} and {sb}): the last dimension of "
            f"the first ({ka}) must equal the {'first' if bd.ndim == 1 else 'second-to-last'} "
            f"dimension of the second ({kb})"
        )
    if ad.ndim == 1 and bd.ndim == 1:
        op = _dot
    elif ad.ndim == 2 and bd.ndim == 1:
        op = _mv
    elif ad.ndim == 2 and bd.ndim == 2:
        op = _mm
    elif ad.ndim == 3 and bd.ndim == 3 and ad.shape[0] == bd.shape[0]:
        op = _bmm
    elif ad.ndim == 1 and bd.ndim == 2:
        op = _squeeze
    else:
        op = _batched
    if ad.dtype != bd.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {a.dtype} != {b.dtype}; "
            "convert one of them (e.g. b.to(a.dtype))"
        )
    return op(a, b)

