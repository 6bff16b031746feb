"""addmm and nn.functional.linear: ``beta * input + alpha * (mat1 @ mat2)``, and the
layer's ``input @ weight.T + bias`` recorded as PyTorch records it (AddmmBackward0 over a
TBackward0 view of the weight), with an inline record for every plain nn.Linear call.
"""

from __future__ import annotations

import numpy as _np

from ..autograd.forward_state import fw
from ..autograd.grad_mode import inference_blocks, record_extras, state
from ..autograd.graph import AccumulateGrad, check_saveable, next_sequence_nr
from ..backend import namespace
from ..backend import ndarray as _ndarray
from ..tensor import Tensor, adopted_views, make_tensor, rederive_view
from ._apply import INPUTS, _leaf_edge, defop
from ._errors import PY_VALUES, not_a_tensor, tensor_arg
from .bool_products import check_empty_contraction_beta
from .linalg import _mT, _same_dtype, int_coefficients, matmul, refuse_bool
from .shape import reshape as _reshape  # (top level: an import inside linear() costs
from .shape import t as _t  # a lookup on every layer call)
from .shape import _t_op
from .shape import track_view as _track_view

_new = object.__new__
_F32 = _np.dtype("float32")
_F64 = _np.dtype("float64")


def _addmm_fwd(bias, x, wt, beta=1, alpha=1):
    if beta == 1 and alpha == 1:
        return bias + x @ wt
    if alpha == 0:
        return input_only(bias, beta, x @ wt)
    return bias * beta + (x @ wt) * alpha


def input_only(inp, beta, prod):
    """addmm/addmv/addbmm with alpha == 0: PyTorch's BLAS call then scales the input and
    skips the product, so nan and inf in the matrices do not propagate (fuzz seed 20807063:
    retrograd gave nan * 0); the input keeps its signed zeros, and beta == 0 gives zeros."""
    xp = namespace(prod)
    dtype = xp.result_type(inp, prod)
    if beta == 0:
        return xp.zeros(prod.shape, dtype=dtype)
    return xp.array(xp.broadcast_to(inp * beta if beta != 1 else inp, prod.shape), dtype=dtype)


def _addmm_vjp(node, g, saved):
    _, x, wt = saved
    beta, alpha = node.params if node.params else (1, 1)
    nb, nx, nw = node.next
    ga = g if alpha == 1 else g * alpha
    gw = None
    if nw:
        if type(ga) is _ndarray and type(x) is _ndarray and (
                wt.flags.f_contiguous and not wt.flags.c_contiguous if type(wt) is _ndarray
                else wt is None and _t_of_c_leaf(nw)):
            # a first-order backward through nn.Linear (wt = weight.t()): (ga.T @ x).T,
            # PyTorch's mm_mat2_backward for a column-major mat2, so that TBackward0's
            # transpose hands the weight a C-ordered gradient (its .grad without the
            # strided copy x.T @ ga's transpose would need: 35,000 instructions a step of
            # bench/ (m), whose first layer saves no wt)
            gw = (ga.T @ x).T
        else:
            gw = matmul(_mT(x), ga)
    return ((g if beta == 1 else g * beta) if nb else None, matmul(ga, _mT(wt)) if nx else None,
            gw)


def _t_of_c_leaf(nw):
    """Whether mat2's edge ``nw`` is TBackward0 of a C-ordered leaf (nn.Linear's weight):
    mat2 was then column-major, as the saved mat2 tells when mat1 needs a gradient."""
    if type(nw) is not _T_NODE:
        return False
    acc = nw.next[0]
    return type(acc) is AccumulateGrad and acc.variable._data.flags.c_contiguous


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
    if not d1.shape[1] and d1.dtype.kind != "f":
        check_empty_contraction_beta("addmm", d1.dtype, d1.shape[0] * d2.shape[1], True, beta)
    if beta != 1 or alpha != 1:
        beta, alpha = int_coefficients(d1.dtype, beta, alpha)
        return _addmm(input, mat1, mat2, beta, alpha)
    return _addmm_same(input, mat1, mat2)


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
    for what, pos, value in (("input", 1, input), ("weight", 2, weight)):
        if value.__class__ in PY_VALUES:  # (not wrapped by ops/tensor_only.py: hot)
            raise not_a_tensor("linear", what, pos, value)
    wt = _t(weight)
    if bias is None:
        return matmul(input, wt)
    if input.ndim == 2:
        return addmm(bias, input, wt)
    k = input.shape[-1] if input.ndim else 1
    flat = _reshape(input, -1, k)
    return _reshape(addmm(bias, flat, wt), *tuple(input.shape[:-1]), weight.shape[0])


__all__ = ["addmm"]


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(addmm, signature="input, mat1, mat2, *, beta=1, alpha=1")
register(linear, function=False, method=False, functional=("linear",))


linear.checks_input = True  # (ops/tensor_only.py leaves it unwrapped)
