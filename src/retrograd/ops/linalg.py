"""Matrix products: matmul (and mm), dot, bmm, outer.  ``matmul`` covers 1-D, 2-D and
broadcast batched operands.  (addmm and nn.functional.linear: ``linear.py``; einsum:
``einsum.py``.)

grad_fn names follow PyTorch's dispatch: DotBackward0 (1-D @ 1-D), MvBackward0
(2-D @ 1-D), SqueezeBackward4 (1-D @ 2-D), MmBackward0 (2-D @ 2-D), and for batched
operands UnsafeViewBackward0, CloneBackward0 or TransposeBackward0 (see ``_dispatch``).
"""

from __future__ import annotations

import math

import numpy as _np

from ..autograd.forward_state import fw
from ..autograd.grad_mode import inference_blocks, state
from ..autograd.graph import NO_EDGE
from ..backend import namespace
from ..backend import ndarray as _ndarray
from ..tensor import Tensor, forget_adopted, make_tensor
from ._apply import INPUTS, defop, recording_caller
from . import registry
from ._errors import tensor_arg
from .matmul_saved import resave_copies, torch_saved_copies
from .index import getitem
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
    if node.params:
        # an operand's shape differs from the one its grad_fn recorded (changed in place
        # under no_grad): PyTorch's matmul reduces each gradient to its operand's shape
        # (the backward of its unsqueeze/expand/reshape views) before the engine checks it
        # against the grad_fn's, so the engine raises 'invalid gradient' (seed 19619582)
        ga, gb = _to_shape(ga, node.params[0]), _to_shape(gb, node.params[1])
    return (ga, gb)


def _to_shape(g, shape):
    if g is None or tuple(g.shape) == shape:
        return g
    if type(g) is _ndarray:
        from ..autograd.engine import sum_to_array

        return sum_to_array(g, shape)
    return g.sum_to_size(shape)


def _stale_shape(x) -> bool:
    """Whether ``x``'s shape is no longer the one its grad_fn recorded for it (an in-place
    view op such as squeeze_ under no_grad changes it without a new grad_fn)."""
    fn = getattr(x, "_grad_fn", None)
    if fn is None:
        return False
    shape = fn.out_shape[x._nr] if fn.multi_output else fn.out_shape
    return tuple(shape) != tuple(x._data.shape)


def _keep_operand_shapes(out, a, b, ad, bd):
    """Let ``out``'s matmul node reduce its gradients to the operands' shapes now where one
    of them has a stale grad_fn shape (see ``_matmul_vjp``); the common case keeps ()."""
    node = getattr(out, "_grad_fn", None)
    if node is not None and type(node).vjp is _matmul_vjp and (
            _stale_shape(a) or _stale_shape(b)):
        node.params = (tuple(ad.shape), tuple(bd.shape))
    return out


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
                    # make_tensor's slots, inline (a Python call fewer: ~500 instructions,
                    # bench/instructions.py); no inference_mode block is open here
                    out = _new(Tensor)
                    out._data = data
                    out._grad_fn = None
                    out._requires_grad = False
                    out._grad = None
                    out._vc = None
                    out._nr = 0
                    out._acc = None
                    out._extra = None
                    return out
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
        return _keep_operand_shapes(out, a, b, ad, bd)
    return _keep_operand_shapes(_matmul_recorded(op, a, b, ad, bd), a, b, ad, bd)


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


# ----------------------------------------------------------------- bmm, outer

_bmm = defop("bmm", _matmul_fwd, _matmul_vjp, "BmmBackward0", 2, INPUTS, "promote",
             saved_for=_matmul_saved_for)  # (fuzz seed 12520706)


def refuse_bool(kernel, a, b):
    """PyTorch's CPU product kernels have no bool version: a NotImplementedError naming the
    kernel, unless an operand is empty (the kernel returns before it looks at the dtype)."""
    da, db = a._data, b._data
    if da.dtype.kind == "b" and da.size and db.size:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool' (a product of bool "
                                  "tensors); convert first, e.g. a.int()")


def int_coefficients(dtype, beta, alpha):
    """PyTorch's integer addmm/addmv/addbmm/baddbmm take beta and alpha as the integer type:
    a float one truncates toward 0 (beta=0.5 drops the input: fuzz seed 11060037)."""
    if dtype.kind not in "iu":
        return beta, alpha
    return tuple(int(c) if isinstance(c, float) else c for c in (beta, alpha))


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


def outer(a, b):
    """The outer product of two 1-D tensors (``a[:, None] * b[None, :]``)."""
    tensor_arg(b, "vec2")
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"outer: expected 1-D tensors, got shapes {list(a.shape)} and "
                           f"{list(b.shape)}")
    from .shape import reshape

    return reshape(a, -1, 1) * b



__all__ = ["bmm", "outer", "dot"]  # (Tensor.dot is dot, not matmul)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import reflected, register  # noqa: E402

# PyTorch's parameter names (torch.matmul(input=a, other=b), torch.mm(input=a, mat2=b)) and
# out=, through registry.with_signature
register(matmul, method=("matmul",), dunders=("__matmul__",),
         tensor={"__rmatmul__": reflected(matmul)}, signature="input, other")
register(matmul, "mm", method=("mm",), signature="input, mat2")
for _fn, _signature in ((bmm, "input, mat2"), (outer, "input, vec2"), (dot, "input, tensor")):
    register(_fn, signature=_signature)
