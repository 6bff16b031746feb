"""Matrix products.  ``matmul`` covers 1-D, 2-D and broadcast batched operands.

grad_fn names follow PyTorch's dispatch: DotBackward0 (1-D @ 1-D), MvBackward0
(2-D @ 1-D), SqueezeBackward4 (1-D @ 2-D), MmBackward0 (2-D @ 2-D), and for batched
operands UnsafeViewBackward0, CloneBackward0 or TransposeBackward0 (see ``_dispatch``).
"""

from __future__ import annotations

import math

import numpy as _np

from ..autograd.forward_state import fw
from ..autograd.grad_mode import inference_blocks, record_extras, state
from ..autograd.graph import NO_EDGE, check_saveable, next_sequence_nr
from ..backend import namespace
from ..backend import ndarray as _ndarray
from ..tensor import Tensor, adopted_views, forget_adopted, make_tensor, rederive_view
from ._apply import INPUTS, _leaf_edge, defop, recording_caller
from . import registry
from ._errors import tensor_arg
from .matmul_saved import resave_copies, torch_saved_copies
from .index import getitem
from .shape import reshape as _reshape  # (top level: an import inside linear() costs
from .shape import t as _t  # a lookup on every layer call)
from .shape import _t_op
from .shape import track_view as _track_view
from .shape import transpose

_new = object.__new__
_F32 = _np.dtype("float32")
_F64 = _np.dtype("float64")


def _mT(x):  # noqa: N802 - swap the last two dimensions
    if type(x) is _ndarray:
        # a first-order backward: a view, without the op call and its dim checks
        # (bench/ (g): -5% for a Hessian-vector product)
        return x.swapaxes(-1, -2)
    return transpose(x, -2, -1)


def _matmul_vjp(node, g, saved):
    a, b = saved
    na, nb = node.next
    # (an operand only the other's derivative reads is kept alone, as PyTorch's: the rank of
    # the missing one follows from the result's, which drops a 1-D operand's dimension)
    if a is None:
        a1, b1 = len(node.out_shape) < b.ndim, b.ndim == 1
    elif b is None:
        a1, b1 = a.ndim == 1, len(node.out_shape) < a.ndim
    else:
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
    if a.shape[-1] == 1 and a.ndim == 2 == b.ndim and a.shape[0] > 1 and b.shape[1] > 1:
        # PyTorch's mm of an (m, 1) by a (1, n) matrix (m, n > 1) gives the exact products,
        # so a -0.0 product stays -0.0; NumPy's matmul adds them to +0.0 (fuzz seed 12588405)
        return a * b
    return a @ b


def _mm_of_outer(ad, bd, a_grad, b_grad):
    """Whether PyTorch lowers this N-D matmul (inner size 1) to one mm of more than one row
    and column (``_matmul_fwd``'s exact products), rather than to bmm or mv, which add the
    products to +0.0 (seed 12602253); ``_dispatch``'s squeeze and fold rules."""
    if ad.ndim < 2 or bd.ndim < 2 or ad.shape[-1] != 1:
        return False
    if ad.ndim == 2 and bd.ndim == 2:
        return ad.shape[0] > 1 and bd.shape[1] > 1
    if ad.ndim == 3 and bd.ndim == 3 and ad.shape[0] != bd.shape[0]:
        if ad.shape[0] == 1 and a_grad:
            return _mm_of_outer(ad[0], bd, a_grad, b_grad)
        if bd.shape[0] == 1 and b_grad:
            return _mm_of_outer(ad, bd[0], a_grad, b_grad)
    if not _should_fold(ad, bd, a_grad, b_grad):
        return False
    if ad.ndim >= bd.ndim:  # (..., m, 1) folded into (rows, 1) @ (1, n)
        rows, cols = math.prod(ad.shape[:-1]), bd.shape[-1]
    else:  # PyTorch folds b.mT: (..., n, 1) into (rows, 1) @ a.mT (1, m)
        rows, cols = math.prod(bd.shape[:-2]) * bd.shape[-1], ad.shape[-2]
    return rows > 1 and cols > 1


def _should_fold(ad, bd, a_grad, b_grad):
    """PyTorch folds an N-D by 1-D/2-D product into one mm/mv (rather than a bmm) when the
    small operand needs a gradient or the large one folds without a copy."""
    a_larger = ad.ndim >= bd.ndim
    t1 = ad if a_larger else bd.swapaxes(-1, -2)
    if not (t1.ndim >= 3 and (bd.ndim if a_larger else ad.ndim) <= 2):
        return False
    if b_grad if a_larger else a_grad:
        return True
    if ad.ndim == 2:
        return False
    if t1.size == 0:
        return True
    st, sh = t1.strides, t1.shape
    return all(st[i] == st[i + 1] * sh[i + 1] for i in range(t1.ndim - 2))


def _dispatch(ad, bd, a_grad, b_grad):
    """The record whose grad_fn name PyTorch's matmul ends with for these operands.

    PyTorch lowers matmul to dot / mv / mm / bmm plus views; its output's grad_fn is the
    last of those.  retrograd computes every case with one ``@`` and one derivative, but
    names the node as PyTorch would, following its dispatch (aten's ``_matmul_impl``).
    """
    da, db = ad.ndim, bd.ndim
    if da <= 2 and db <= 2:
        return {(1, 1): _dot, (2, 1): _mv, (1, 2): _squeeze, (2, 2): _mm}[da, db]
    if _should_fold(ad, bd, a_grad, b_grad):
        if db > da and da == 2:
            # the folded product is transposed back and made contiguous: a copy (Clone),
            # unless the transposed result is already contiguous (a size-1 side, or no
            # element at all: seed 12663285)
            n, p = ad.shape[0], bd.shape[-1]
            empty = 0 in bd.shape[:-2]
            return _transposed if n <= 1 or p <= 1 or empty else _cloned
        return _batched
    if da == 3 and db == 3 and ad.shape[0] != bd.shape[0]:
        if ad.shape[0] == 1 and a_grad:  # PyTorch squeezes a batch of one first
            return _dispatch(ad[0], bd, a_grad, b_grad)
        if bd.shape[0] == 1 and b_grad:
            return _dispatch(ad, bd[0], a_grad, b_grad)
    return _batched


def _matmul_saved_for(needs):
    # a's gradient reads b and b's reads a: PyTorch saves no more (fuzz seeds 9805661, 9807248)
    return (needs[1], needs[0])


_dot = defop("matmul", _matmul_fwd, _matmul_vjp, "DotBackward0", 2, INPUTS, "promote",
             saved_for=_matmul_saved_for)
_mv = defop("matmul", _matmul_fwd, _matmul_vjp, "MvBackward0", 2, INPUTS, "promote",
            saved_for=_matmul_saved_for)
_mm = defop("matmul", _matmul_fwd, _matmul_vjp, "MmBackward0", 2, INPUTS, "promote",
            saved_for=_matmul_saved_for)
_MM_OP = _mm.op
_mm_recording = recording_caller(_mm)  # (for matmul, which has read the grad mode)
_squeeze = defop("matmul", _matmul_fwd, _matmul_vjp, "SqueezeBackward4", 2, INPUTS, "promote",
                 saved_for=_matmul_saved_for)
_batched = defop("matmul", _matmul_fwd, _matmul_vjp, "UnsafeViewBackward0", 2, INPUTS,
                 "promote", saved_for=_matmul_saved_for)
_cloned = defop("matmul", _matmul_fwd, _matmul_vjp, "CloneBackward0", 2, INPUTS, "promote",
                saved_for=_matmul_saved_for)
_transposed = defop("matmul", _matmul_fwd, _matmul_vjp, "TransposeBackward0", 2, INPUTS,
                    "promote", saved_for=_matmul_saved_for)
# PyTorch's result here is a view (the folded product's .mT): inplace_forms re-derives it
_transposed.op.node_cls.result_is_view = True


def matmul(a, b):
    """Matrix product with NumPy/PyTorch broadcasting rules (``a @ b``).

    Examples
    --------
    >>> import retrograd as T
    >>> a = T.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> y = a @ T.tensor([1.0, 1.0])
    >>> y, y.grad_fn.name()
    (tensor([3., 7.], grad_fn=<MvBackward0>), 'MvBackward0')
    """
    ta, tb = type(a), type(b)
    if ta is _ndarray and tb is _ndarray:
        return a @ b  # a first-order backward: arrays in, nothing to record or check
    if ta is Tensor and tb is Tensor:
        ad = a._data
        bd = b._data
        dt = ad.dtype
        # the common 2-D float case (a linear layer) goes straight to MmBackward0; anything
        # unusual (other ranks and dtypes, mismatches to report) takes the general path
        # below.  (NumPy's float dtypes are singletons: ``is`` is the cheap equality test.)
        # A shape mismatch goes on to the general path below, which reports it.
        if (dt is _F32 or dt is _F64) and bd.dtype is dt and ad.ndim == 2 and bd.ndim == 2:
            # (the grad mode is read once, and only when an operand requires grad)
            if (a._requires_grad or b._requires_grad) and state.enabled:
                if ad.shape[1] == bd.shape[0]:
                    return _mm_recording(a, b)
            elif not fw.active and not inference_blocks and _MM_OP.forward is _matmul_fwd:
                # nothing to record (no_grad): the product, wrapped as _mm would, inline
                # (two calls fewer a layer; bench/ (f), MLP inference).  Not while compile
                # traces (it swaps the op's forward, and _mm's call lets it see the product)
                try:
                    # (an (m, 1) by (1, n) product: _matmul_fwd's exact products)
                    data = ad * bd if ad.shape[1] == 1 == bd.shape[0] and ad.shape[0] > 1 \
                        and bd.shape[1] > 1 else ad @ bd
                except ValueError:
                    pass
                else:
                    return make_tensor(data)  # (no inference_mode block is open here)
            elif ad.shape[1] == bd.shape[0]:
                return _mm(a, b)  # (tangents, inference tensors, a trace: _mm does them)
    if not hasattr(a, "_data") and not hasattr(b, "_data"):
        return a @ b
    ad, bd = getattr(a, "_data", a), getattr(b, "_data", b)
    if registry.batching[0] and (hasattr(a, "__retrograd_batched__")
                                 or hasattr(b, "__retrograd_batched__")):
        return registry.batched_call("matmul", matmul, (a, b), {})  # Tensor @ BatchedTensor
    tensor_arg(ad, "input", 0)
    tensor_arg(bd, "other")
    if ad.ndim == 0 or bd.ndim == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {ad.ndim}D and "
            f"{bd.ndim}D; use * for multiplication by a scalar"
        )
    ka = ad.shape[-1]
    kb = bd.shape[0] if bd.ndim == 1 else bd.shape[-2]
    if ka != kb:
        _forget_operands(a, b, ad, bd)
        sa = "x".join(map(str, ad.shape if ad.ndim > 1 else (1,) + ad.shape))
        sb = "x".join(map(str, bd.shape if bd.ndim > 1 else bd.shape + (1,)))
        raise RuntimeError(
            f"matmul(): mat1 and mat2 shapes cannot be multiplied ({sa} and {sb}): the last "
            f"dimension of the first ({ka}) must equal the "
            f"{'first' if bd.ndim == 1 else 'second-to-last'} dimension of the second ({kb})"
        )
    op = _dispatch(ad, bd, getattr(a, "_requires_grad", False), getattr(b, "_requires_grad",
                                                                          False))
    if ad.dtype != bd.dtype:
        _forget_operands(a, b, ad, bd)
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {a.dtype} != {b.dtype}; "
            "convert one of them (e.g. b.to(a.dtype))"
        )
    if ad.dtype.kind == "b" and not ((ad.size == 0 or bd.size == 0) and ad.ndim + bd.ndim > 2):
        # (PyTorch's kernel returns before looking at the dtype when there is nothing to add)
        # the kernel PyTorch's matmul lands in for these ranks names the error
        kernel = ("dot" if ad.ndim == bd.ndim == 1 else "addmv_impl_cpu" if bd.ndim == 1
                  else "addmm_impl_cpu_" if bd.ndim == 2 else "bmm")
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool' (matmul of bool "
                                  "tensors); convert first, e.g. a.int() @ b.int()")
    if ka == 1 and (ad.ndim > 2 or bd.ndim > 2) and _mm_of_outer(
            ad, bd, getattr(a, "_requires_grad", False), getattr(b, "_requires_grad", False)):
        out = _matmul_recorded(op, a, b, ad, bd)
        namespace(ad).multiply(ad, bd, out=out._data)  # (the exact products, as PyTorch's mm)
        return out
    return _matmul_recorded(op, a, b, ad, bd)


def _matmul_recorded(op, a, b, ad, bd):
    """``op(a, b)`` for matmul's general path, with the saved operands PyTorch saves."""
    if op is _transposed:
        if not state.enabled:
            return no_grad_product_view(op(a, b))
        if type(a) is Tensor and type(b) is Tensor:
            # PyTorch computes b.mT @ a.mT (folded into one mm) and returns its transpose, a
            # view of that hidden product: an in-place change of the result then records
            # CopySlices on the product and leaves the result AsStridedBackward0, and a
            # flatten of it is a view (seeds 15089969, 12607848).  Same steps here
            return transpose(matmul(_mT(b), _mT(a)), -2, -1)
    if state.enabled and (_no_edge(a) or _no_edge(b)):
        a, b = _through_views(a, b, ad, bd)
    if state.enabled and type(a) is Tensor and type(b) is Tensor and (
            a._requires_grad or b._requires_grad) and (ad.ndim > 2 or bd.ndim > 2 or (
            ad.ndim == 1 and bd.ndim == 2)):
        # PyTorch saves its unsqueezed/expanded/reshaped views of the operands here (b: only
        # one of 3+ dims), not the operands (see _saved_view)
        a, b = _saved_view(a), (_saved_view(b) if bd.ndim > 2 else b)
        if ad.ndim > 2 or bd.ndim > 2:
            # PyTorch's folded/expanded operands may be reshaped copies (seed 14805082)
            copies = _saved_copies(ad, bd, a._requires_grad, b._requires_grad)
            if copies[0] or copies[1]:
                out = op(a, b)
                resave_copies(out, (a, b), copies)
                return out
    return op(a, b)


def _no_edge(x) -> bool:
    """A view made under no_grad of a tensor requiring grad: it requires grad, but its
    gradient goes nowhere (graph.NO_EDGE)."""
    return type(x) is Tensor and x._requires_grad and x._grad_fn is None and x._acc is NO_EDGE


def _through_views(a, b, ad, bd):
    """PyTorch's matmul hands an operand to its mm/mv/bmm through a view (unsqueeze,
    reshape, expand, .t()) except where it uses it as given; that view's node is an edge
    even for a :func:`_no_edge` operand, so the product saves the other operand and checks
    its version in backward (seed 15054811).  Such an operand goes through a recorded
    view here too (its node sends nothing on, as PyTorch's)."""
    da, db = ad.ndim, bd.ndim
    if da <= 2 and db <= 2:
        via_a, via_b = da == 1 and db == 2, False  # (1-D @ 2-D: unsqueeze(0))
    elif _should_fold(ad, bd, a._requires_grad, b._requires_grad):
        # the larger operand is reshaped (b through .mT first); a 2-D a goes through .t()
        via_a, via_b = (db <= da or da == 2), db > da
    else:
        via_a = via_b = True  # bmm: both expanded and reshaped
    if via_a and _no_edge(a):
        a = a.view(tuple(ad.shape))
    if via_b and _no_edge(b):
        b = b.view(tuple(bd.shape))
    return a, b


def _saved_copies(ad, bd, a_grad, b_grad):
    """Which operands PyTorch's matmul saves as copies, following ``_dispatch``."""
    if ad.ndim == 3 and bd.ndim == 3 and ad.shape[0] != bd.shape[0]:
        if ad.shape[0] == 1 and a_grad:
            return torch_saved_copies(ad[0], bd, _should_fold(ad[0], bd, a_grad, b_grad))
        if bd.shape[0] == 1 and b_grad:
            return torch_saved_copies(ad, bd[0], _should_fold(ad, bd[0], a_grad, b_grad))
    return torch_saved_copies(ad, bd, _should_fold(ad, bd, a_grad, b_grad))


def _forget_operands(a, b, ad, bd):
    """A matmul that fails on its inner sizes or dtypes: PyTorch's has read both operands'
    grad_fn by then (its views of them, or mm's autograd wrapper), so their adopted-view
    entries go (tensor.still_adopted), unless the batch dims do not broadcast (checked
    before anything is recorded)."""
    if ad.ndim > 2 or bd.ndim > 2:
        try:
            _np.broadcast_shapes(ad.shape[:-2], bd.shape[:-2])
        except ValueError:
            return
    forget_adopted((a, b))


def no_grad_product_view(out):
    """``out``, made under no_grad where PyTorch's product is a view (a transpose or
    permute of its mm/bmm result), as a view made under no_grad of a stand-in for that
    result: an in-place change of it that records a graph is then refused as PyTorch
    refuses it (seeds 9415747, 9438331)."""
    from ..tensor import make_tensor
    from .shape import track_view

    if type(out) is not Tensor or out._vc is not None or state.inference:
        return out
    base = make_tensor(out._data)
    base._vc = out._vc = [0]
    return track_view(base, out)



# ----------------------------------------------------------------- dot

# d(a . b)/da = g * b and d/db = g * a, with g 0-d: matmul's 1-D x 1-D derivative
_dot_op = defop("dot", _matmul_fwd, _matmul_vjp, "DotBackward0", 2, INPUTS,
                saved_for=_matmul_saved_for)  # (fuzz seed 9838609)


def _same_dtype(name, tensors, words=None):
    """PyTorch's RuntimeError for a product of tensors of different dtypes (no promotion)."""
    first = getattr(tensors[0], "_data", tensors[0]).dtype  # (NumPy dtypes: cheap to compare)
    for x in tensors[1:]:
        if getattr(x, "_data", x).dtype != first:
            raise RuntimeError(
                (words or f"{name}(): expected scalar type {{}} but found {{}}").format(
                    tensors[0].dtype, x.dtype)
                + f" ({name} does not promote: convert one operand, e.g. b.to(a.dtype))"
            )


def dot(input, other):  # noqa: A002 - PyTorch's names
    """The inner product of two 1-D tensors of the same length and dtype (no broadcasting).

    Examples
    --------
    >>> import retrograd as T
    >>> T.dot(T.tensor([1.0, 2.0]), T.tensor([3.0, 4.0]))
    tensor(11.)
    """
    if registry.batching[0] and hasattr(other, "__retrograd_batched__"):
        # x.dot(batched) inside vmap: the method is this function, so hand it to the rule
        return registry.batched_call("dot", dot, (input, other))
    tensor_arg(other, "tensor")
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"dot(): 1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           f"tensors (shapes {list(input.shape)} and {list(other.shape)}); use "
                           "matmul for matrices")
    _same_dtype("dot", (input, other), "dot : expected both vectors to have same dtype, but "
                "found {} and {}")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(
            f"dot(): inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
            f"[{other.shape[0]}] to have the same number of elements, but got {input.shape[0]} "
            f"and {other.shape[0]} elements respectively"
        )
    if input._data.dtype.kind == "b":
        raise NotImplementedError("\"dot\" not implemented for 'Bool'; convert first, e.g. "
                                  "a.int().dot(b.int())")
    return _dot_op(input, other)


# ----------------------------------------------------------------- bmm, addmm, linear, outer

_bmm = defop("bmm", _matmul_fwd, _matmul_vjp, "BmmBackward0", 2, INPUTS, "promote",
             saved_for=_matmul_saved_for)  # (fuzz seed 12520706)


def refuse_bool(kernel, a, b):
    """PyTorch's CPU product kernels have no bool version: a NotImplementedError naming the
    kernel, unless an operand is empty (the kernel returns before it looks at the dtype)."""
    da, db = a._data, b._data
    if da.dtype.kind == "b" and da.size and db.size:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool' (a product of bool "
                                  "tensors); convert first, e.g. a.int()")


def bmm(a, b):
    """Batched matrix product of two 3-D tensors with the same batch size (no broadcasting).

    Examples
    --------
    >>> import retrograd as T
    >>> T.bmm(T.ones(5, 2, 3), T.ones(5, 3, 4)).shape
    retrograd.Size([5, 2, 4])
    """
    tensor_arg(b, "mat2")
    if a.ndim != 3 or b.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor (bmm got shapes {list(a.shape)} and "
                           f"{list(b.shape)}); use matmul for other ranks")
    if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: "
            f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}] (bmm of "
            f"shapes {list(a.shape)} and {list(b.shape)})"
        )
    _same_dtype("bmm", (a, b))
    refuse_bool("bmm", a, b)
    return _bmm(a, b)


def _addmm_fwd(bias, x, wt, beta=1, alpha=1):
    if beta == 1 and alpha == 1:
        return bias + x @ wt
    return bias * beta + (x @ wt) * alpha


def _addmm_vjp(node, g, saved):
    _, x, wt = saved
    beta, alpha = node.params if node.params else (1, 1)
    nb, nx, nw = node.next
    ga = g if alpha == 1 else g * alpha
    gw = None
    if nw:
        if (type(ga) is _ndarray and type(x) is _ndarray and type(wt) is _ndarray
                and wt.flags.f_contiguous and not wt.flags.c_contiguous):
            # a first-order backward through nn.Linear (wt = weight.t()): (ga.T @ x).T, so
            # that TBackward0's transpose hands the weight a C-ordered gradient (its
            # .grad without the strided copy x.T @ ga's transpose would need)
            gw = (ga.T @ x).T
        else:
            gw = matmul(_mT(x), ga)
    return ((g if beta == 1 else g * beta) if nb else None, matmul(ga, _mT(wt)) if nx else None,
            gw)


# (mat1 only for mat2's gradient and the reverse, as PyTorch saves: fuzz seed 9834415)
_addmm = defop("addmm", _addmm_fwd, _addmm_vjp, "AddmmBackward0", 3, INPUTS, "promote",
               saved_for=lambda needs: (False, needs[2], needs[1]))
# the same record for beta = alpha = 1, where addmm() has checked that the three dtypes are
# equal (or input is a number, which NumPy, like PyTorch, does not let promote): NumPy's
# result dtype is PyTorch's, so no promotion pass (every nn.Linear call, bench/ (m))
_addmm_same = defop("addmm", _addmm_fwd, _addmm_vjp, "AddmmBackward0", 3, INPUTS, "same",
                    saved_for=lambda needs: (False, needs[2], needs[1]))
_ADDMM_OP = _addmm_same.op  # (compile's tracer swaps its forward while it traces)
_ADDMM_NODE = _ADDMM_OP.node_cls
_T_NODE = _t_op.op.node_cls


def addmm(input, mat1, mat2, *, beta=1, alpha=1):  # noqa: A002 - PyTorch's names
    """``beta * input + alpha * (mat1 @ mat2)`` for 2-D ``mat1``, ``mat2``."""
    # (every linear layer comes here: the checks cost two attribute reads when all is well)
    d1, d2 = getattr(mat1, "_data", None), getattr(mat2, "_data", None)
    if d1 is None or d2 is None:
        tensor_arg(mat1, "mat1")
        tensor_arg(mat2, "mat2", 2)
    if d1.ndim != 2 or d2.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {mat1.ndim}-D tensor (addmm of shapes "
                           f"{list(mat1.shape)} and {list(mat2.shape)})")
    if d1.shape[1] != d2.shape[0]:
        matmul(mat1, mat2)  # raises the shape error
    if d1.dtype != d2.dtype or getattr(input, "_data", d1).dtype != d1.dtype:
        _same_dtype("addmm", (input, mat1, mat2) if hasattr(input, "_data") else (mat1, mat2),
                    "addmm(): self and mat2 must have the same dtype, but got {} and {}")
    if d1.dtype.kind == "b":
        refuse_bool("addmm_impl_cpu_", mat1, mat2)
    if beta != 1 or alpha != 1:
        beta, alpha = int_coefficients(d1.dtype, beta, alpha)
        return _addmm(input, mat1, mat2, beta, alpha)
    return _addmm_same(input, mat1, mat2)


def int_coefficients(dtype, beta, alpha):
    """PyTorch's integer addmm/addmv/addbmm/baddbmm take beta and alpha as the integer type:
    a float one truncates toward 0 (beta=0.5 drops the input: fuzz seed 11060037)."""
    if dtype.kind not in "iu":
        return beta, alpha
    return tuple(int(c) if isinstance(c, float) else c for c in (beta, alpha))


def _edge(x):
    """The node ``x``'s gradient goes to (x requires grad), as _apply.edge_of."""
    fn = x._grad_fn
    if fn is None:
        return _leaf_edge(x)
    if adopted_views:
        rederive_view(x, fn)
    return fn


def _linear_fast(input, weight, bias, xd, wd, bd):  # noqa: A002 - PyTorch's names
    """``bias + input @ weight.t()`` for NumPy float tensors of one dtype and matching
    shapes, with nothing unusual active (no dual level, inference_mode block, saved-tensor
    hooks, anomaly mode or compile trace: the caller checked).  The same graph as the
    general path (TBackward0 view of the weight, saved by AddmmBackward0; the same nodes,
    edges, saved tensors and versions, in the same creation order), built inline: an
    nn.Linear call was a quarter of an MLP training step's Python (bench/ (m))."""
    wg = weight._requires_grad
    xg = input._requires_grad
    bg = bias._requires_grad
    if not ((wg or xg or bg) and state.enabled):
        return make_tensor(bd + xd @ wd.T)  # (nothing records: the view is never seen)
    wtd = wd.T
    # weight.t(): a view sharing the weight's version counter, tracked as shape.t does
    wt = _new(Tensor)
    wt._data = wtd
    wt._grad = None
    wt._nr = 0
    wt._acc = None
    wt._extra = None
    vc = weight._vc
    if vc is None:
        vc = weight._vc = [0]
    wt._vc = vc
    if wg:
        tnode = _new(_T_NODE)
        tnode.seq = next_sequence_nr()
        tnode.next = (_edge(weight),)
        tnode.next_nr = (weight._nr,) if weight._nr else None
        tnode.params = ()
        tnode.hooks = None
        tnode.out_shape = wtd.shape
        tnode.out_dtype = wtd.dtype
        tnode.versions = None
        tnode.saved = ()
        wt._grad_fn = tnode
        wt._requires_grad = True
    else:
        tnode = None
        wt._grad_fn = None
        wt._requires_grad = False
        # (a view of a weight that does not require grad: weight.requires_grad_() later
        # makes the views taken before it require grad, which needs it tracked)
        _track_view(weight, wt)
    # A weight that requires grad: its view is not tracked.  Nothing outside this record
    # ever holds it (AddmmBackward0 names no saved tensor, no saved-tensor hook or anomaly
    # mode is active here), and it shares the weight's version counter, so any in-place
    # change of the weight makes backward refuse it before use (what re-deriving the
    # view after such a change is for).  Tracking it was an eighth of an nn.Linear
    # training step's Python, and left the weight with view groups that every in-place
    # optimizer update then walked (bench/ (m)).
    data = bd + xd @ wtd
    out = _new(Tensor)
    out._data = data
    out._grad = None
    out._vc = None
    out._nr = 0
    out._acc = None
    out._extra = None
    node = _new(_ADDMM_NODE)
    node.seq = next_sequence_nr()
    node.next = (_edge(bias) if bg else None, _edge(input) if xg else None, tnode)
    nb, nx = bias._nr, input._nr
    node.next_nr = [nb, nx, 0] if nb or nx else None  # (as _apply.record: a list)
    node.params = ()
    node.hooks = None
    node.out_shape = data.shape
    node.out_dtype = data.dtype
    node.versions = None
    # saved as _apply.record with addmm's saved_for: input for the weight's gradient, the
    # view for the input's; their versions when any is not 0
    sx = input if wg else None
    sw = wt if xg else None
    vx = input._vc[0] if sx is not None and input._vc else 0
    vw = vc[0] if sw is not None else 0
    if vx or vw:
        if sx is not None:
            check_saveable(input._vc)
        if sw is not None:
            check_saveable(vc)
        node.versions = (0, vx, vw)
    node.saved = (None, sx, sw)
    out._grad_fn = node
    out._requires_grad = True
    return out


def linear(input, weight, bias=None):  # noqa: A002 - PyTorch's names
    """``input @ weight.T + bias``, recorded as PyTorch records it (AddmmBackward0 for 2-D
    inputs with a bias, viewed back for other ranks).

    Examples
    --------
    >>> import retrograd as T
    >>> x, w, b = T.ones(2, 3), T.ones(4, 3), T.zeros(4)
    >>> T.nn.functional.linear(x, w, b).shape
    retrograd.Size([2, 4])
    """
    if isinstance(input, Tensor) and isinstance(weight, Tensor) and isinstance(bias, Tensor):
        # the common case (every nn.Linear call): one inline record, see _linear_fast
        xd, wd, bd = input._data, weight._data, bias._data
        dt = xd.dtype
        if ((dt is _F32 or dt is _F64) and wd.dtype is dt and bd.dtype is dt
                and xd.ndim == 2 and wd.ndim == 2 and bd.ndim == 1
                and xd.shape[1] == wd.shape[1] and bd.shape[0] == wd.shape[0]
                and xd.__class__ is _ndarray and wd.__class__ is _ndarray
                and bd.__class__ is _ndarray and not fw.active and not inference_blocks
                and not record_extras and _ADDMM_OP.forward is _addmm_fwd):
            return _linear_fast(input, weight, bias, xd, wd, bd)
    wt = _t(weight)
    if bias is None:
        return matmul(input, wt)
    if input.ndim == 2:
        return addmm(bias, input, wt)
    k = input.shape[-1] if input.ndim else 1
    flat = _reshape(input, -1, k)
    return _reshape(addmm(bias, flat, wt), *tuple(input.shape[:-1]), weight.shape[0])


def outer(a, b):
    """The outer product of two 1-D tensors (``a[:, None] * b[None, :]``)."""
    tensor_arg(b, "vec2")
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"outer: expected 1-D tensors, got shapes {list(a.shape)} and "
                           f"{list(b.shape)}")
    from .shape import reshape

    return reshape(a, -1, 1) * b


__all__ = ["bmm", "addmm", "outer", "dot"]  # (Tensor.dot is dot, not matmul)


# ----------------------------------------------------------------- einsum

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _parse_einsum(equation, shapes):
    """Explicit subscripts for ``equation`` (``'...'`` spelt out, the output made explicit)."""
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(shapes):
        raise RuntimeError(f"einsum(): {len(terms)} operands in the equation {equation!r} but "
                           f"{len(shapes)} tensors given")
    used = set(eq) - set(".,->")
    spare = [c for c in _LETTERS if c not in used]
    n_ell = 0
    for t, s in zip(terms, shapes):
        if "..." in t:
            n_ell = max(n_ell, len(s) - (len(t) - 3))
    ell = "".join(spare[:n_ell])
    fixed = []
    for t, s in zip(terms, shapes):
        if "..." in t:
            k = len(s) - (len(t) - 3)
            t = t.replace("...", ell[n_ell - k:] if k else "")
        if len(t) != len(s):
            raise RuntimeError(f"einsum(): the subscript {t!r} has {len(t)} indices but the "
                               f"operand has {len(s)} dimensions (shape {list(s)})")
        fixed.append(t)
    if arrow:
        out = out.replace("...", ell)
    else:  # implicit: the ellipsis, then the letters that appear once, in alphabetical order
        counts = {}
        for t in fixed:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    seen = {}  # each subscript's size: equal in every operand, or 1 (which broadcasts)
    for k, (t, s) in enumerate(zip(fixed, shapes)):
        for c, size in zip(t, s):
            before = seen.get(c, 1)
            if size != 1 and before != 1 and size != before:
                raise RuntimeError(
                    f"einsum(): subscript {c} has size {size} for operand {k} which does not "
                    f"broadcast with previously seen size {before} (equation {equation!r}, "
                    f"operand shapes {', '.join(str(list(x)) for x in shapes)})"
                )
            if size != 1:
                seen[c] = size
    for t in fixed:
        if len(set(t)) != len(t):
            raise NotImplementedError(
                f"einsum(): a repeated index within one operand ({t!r}, a diagonal) is not "
                "supported by retrograd; use torch.diagonal-style indexing first"
            )
    return fixed, out


def _einsum_fwd(*args):
    *arrays, terms, out, shapes = args
    from ..backend import namespace

    return namespace(arrays[0]).einsum(",".join(terms) + "->" + out, *arrays)


def _einsum_vjp(node, g, saved):
    from .shape import expand_op, reshape_op, sum_to_size

    terms, out, shapes = node.params
    grads = []
    for i, (t, nxt) in enumerate(zip(terms, node.next)):
        if nxt is None:
            grads.append(None)
            continue
        others = [s for j, s in enumerate(saved) if j != i]
        other_terms = [u for j, u in enumerate(terms) if j != i]
        present = set(out).union(*other_terms) if other_terms else set(out)
        avail = "".join(c for c in t if c in present)
        gi = einsum_terms([out] + other_terms, avail, [g] + others)
        shape = shapes[i]
        own = dict(zip(t, shape))
        # a size-1 dim of this operand that the others broadcast: sum it back (keepdim)
        reduced = tuple(1 if own[c] == 1 else s for c, s in zip(avail, gi.shape))
        if reduced != tuple(gi.shape):
            gi = sum_to_size(gi, reduced)
        # letters summed within this operand only, and dims this operand broadcasts to the
        # others' size (size 1 everywhere else, so 1 in gi): broadcast them back
        kept = tuple(gi.shape[avail.index(c)] if c in avail else 1 for c in t)
        if avail != t:
            gi = reshape_op(gi, kept, tuple(gi.shape))
        if kept != shape:
            gi = expand_op(gi, shape, kept)
        grads.append(gi)
    return tuple(grads)


def _einsum_name(terms, out):
    # PyTorch's einsum ends in different nodes by path; these are the common ones
    if len(terms) == 1:
        return "SumBackward1" if len(out) < len(terms[0]) else "PermuteBackward0"
    if set(out) == set().union(*terms):
        return "MulBackward0"
    return "ViewBackward0"


def _einsum_saved_for(needs):
    # operand j's values are read by the other operands' derivatives only (its own shape is
    # in the params): PyTorch's bmm/mul keep no more, so an in-place change of an operand
    # that only it needs breaks nothing (fuzz seed 9807254)
    return tuple(any(n for i, n in enumerate(needs) if i != j) for j in range(len(needs)))


_EINSUM_OPS = {name: defop("einsum", _einsum_fwd, _einsum_vjp, name, 0, INPUTS, "promote",
                           saved_for=_einsum_saved_for)
               for name in ("SumBackward1", "PermuteBackward0", "MulBackward0", "ViewBackward0",
                            "BmmBackward0")}


def einsum_terms(terms, out, operands):
    """einsum with parsed subscripts (used by einsum's own derivative)."""
    from ._apply import apply_op

    shapes = tuple(tuple(o.shape) for o in operands)
    if not any(hasattr(o, "_data") for o in operands):
        return _einsum_fwd(*operands, terms, out, shapes)
    name = _einsum_name(terms, out)
    result = apply_op(_EINSUM_OPS[name].op, list(operands), (terms, out, shapes))
    if name in ("PermuteBackward0", "ViewBackward0") and not state.enabled:
        return no_grad_product_view(result)
    return result


def _saved_view(o):
    """An operand that does not require grad as PyTorch's einsum saves it: a view of it (a
    permute/reshape made for bmm, sharing its memory and version counter) whose flags stay
    as they were, so a requires_grad_() on the operand after the product does not reach the
    saved one (a gradient under create_graph does not require grad; seeds 9301594,
    9311359).  Operands that require grad, or carry a forward-mode tangent, stay as given."""
    if o._requires_grad or fw.active:
        return o
    alias = make_tensor(o._data)
    if o._vc is None:
        o._vc = [0]
    alias._vc = o._vc
    return alias


def einsum(equation, *operands):
    """Einstein summation: ``einsum("ij,jk->ik", a, b)`` is ``a @ b``; ``...`` stands for
    broadcast dimensions.  A repeated index within one operand (a diagonal) is not supported.

    Examples
    --------
    >>> import retrograd as T
    >>> a, b = T.ones(2, 3), T.ones(3, 4)
    >>> T.einsum("ij,jk->ik", a, b).shape, T.einsum("ij->", a)
    (retrograd.Size([2, 4]), tensor(6.))
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    terms, out = _parse_einsum(equation, [tuple(o.shape) for o in operands])
    first = operands[0].dtype
    if all(isinstance(o, Tensor) for o in operands) and (
            not first.is_floating_point or any(o.dtype is not first for o in operands)):
        # PyTorch's dtype depends on its path (sums of bools count, products promote, bmm
        # refuses mixed dtypes): einsum_dtypes replays it
        from .einsum_dtypes import einsum_dtype

        want = einsum_dtype(terms, out, [tuple(o.shape) for o in operands],
                            [o.dtype for o in operands])
        operands = tuple(o if o.dtype is want else o.to(want) for o in operands)
    name = _einsum_name(terms, out)
    if name == "ViewBackward0" and all(type(o) is Tensor for o in operands):
        # PyTorch's result is a view of its last product (bmm or mul): an in-place change of
        # it goes to that base (CopySlices) and hooks registered before it see nothing of
        # it, so it is one here too (fuzz seeds 9482606, 9485972)
        from ._apply import apply_op
        from .shape import view

        product = apply_op(_EINSUM_OPS["BmmBackward0"].op, [_saved_view(o) for o in operands],
                           (terms, out, tuple(tuple(o.shape) for o in operands)))
        return view(product, tuple(product.shape))
    if name == "PermuteBackward0" and sorted(out) == sorted(terms[0]) and \
            type(operands[0]) is Tensor:
        # dims reordered only: PyTorch's result is a permute view of the operand (NumPy's
        # einsum shares its memory too, so it must share its version counter and views)
        from .shape import permute

        return permute(operands[0], tuple(terms[0].index(c) for c in out))
    return einsum_terms(terms, out, operands)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import reflected, register  # noqa: E402

# PyTorch's parameter names (torch.matmul(input=a, other=b), torch.mm(input=a, mat2=b)) and
# out=, through registry.with_signature
register(matmul, method=("matmul",), dunders=("__matmul__",),
         tensor={"__rmatmul__": reflected(matmul)}, signature="input, other")
register(matmul, "mm", method=("mm",), signature="input, mat2")
for _fn, _signature in ((bmm, "input, mat2"), (outer, "input, vec2"), (dot, "input, tensor"),
                        (addmm, "input, mat1, mat2, *, beta=1, alpha=1")):
    register(_fn, signature=_signature)
register(einsum, method=False)
register(linear, function=False, method=False, functional=("linear",))
