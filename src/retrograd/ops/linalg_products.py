"""More matrix and vector products (issue 11): mv, addmv, addr, addbmm, baddbmm, vdot,
inner, kron, tensordot, linalg.vecdot, linalg.multi_dot, linalg.matrix_power, cross /
linalg.cross, linalg.diagonal.

The "add" products (``beta * input + alpha * product``) and cross have records of their own
(PyTorch's grad_fn names, one node); the rest compose matmul, reshapes and sums, whose
derivatives already exist.  Every derivative is written with retrograd ops, so second and
higher derivatives work; broadcast inputs are summed back to their shapes by the engine.
"""

from __future__ import annotations

from ..backend import namespace
from ._apply import INPUTS, defop
from ._errors import check_broadcast, scalar_type_name, tensor_arg
from .bool_products import check_empty_contraction_beta, refuse_bool_tensordot
from .pointwise import zeros_like_grad
from .layout import diagonal as _diagonal
from .linear import input_only
from .matmul_saved import view_strides
from .linalg import (
    _matmul_fwd, _matmul_vjp, _mT, _mv, _same_dtype, int_coefficients, matmul, refuse_bool,
)
from .reduce import sum as _sum
from .shape import _unsafe_view, permute, reshape, unsqueeze, view
from .quiet_fp import quiet_fp


def _scaled(g, factor):
    return g if factor == 1 else g * factor


def _shape(x):
    return list(x.shape)


# ----------------------------------------------------------------- mv, addmv, addr


def mv(input, vec):  # noqa: A002 - PyTorch's names
    """The product of a matrix ``(n, m)`` and a vector ``(m,)``.

    Examples
    --------
    >>> import retrograd as T
    >>> T.mv(T.eye(2), T.tensor([1.0, 2.0]))
    tensor([1., 2.])
    """
    tensor_arg(vec, "vec")
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {vec.ndim} "
                           f"(mv of shapes {_shape(input)} and {_shape(vec)}: a 2-D matrix "
                           "and a 1-D vector)")
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat ({input.shape[0]}"
                           f"x{input.shape[1]}), vec ({vec.shape[0]}) (mv): the matrix's "
                           "columns must equal the vector's length")
    _same_dtype("mv", (input, vec))
    refuse_bool("addmv_impl_cpu", input, vec)
    return _mv(input, vec)


@quiet_fp
def _addmv_fwd(inp, mat, vec, beta=1, alpha=1):
    prod = mat @ vec
    if alpha == 0:
        return input_only(inp, beta, prod)
    if beta == 0:  # PyTorch ignores input then (nan and inf in it do not propagate)
        return namespace(prod).broadcast_to(prod * alpha, inp.shape if inp.ndim else prod.shape)
    return inp * beta + prod * alpha


def _addmv_vjp(node, g, saved):
    _, mat, vec = saved
    beta, alpha = node.params or (1, 1)
    ni, nm, nv = node.next
    ga = _scaled(g, alpha)
    return (_scaled(g, beta) if ni else None,
            unsqueeze(ga, -1) * vec if nm else None,
            matmul(_mT(mat), ga) if nv else None)


# PyTorch saves no input (only beta), the matrix for the vector's gradient and the reverse
# (an in-place change of an unread one is no error: fuzz seeds 12517604, 12598407)
_addmv = defop("addmv", _addmv_fwd, _addmv_vjp, "AddmvBackward0", 3, INPUTS, "promote",
               saved_for=lambda needs: (False, needs[2], needs[1]))


def addmv(input, mat, vec, *, beta=1, alpha=1):  # noqa: A002 - PyTorch's names
    """``beta * input + alpha * (mat @ vec)``."""
    tensor_arg(mat, "mat")
    tensor_arg(vec, "vec", 2)
    mv(mat, vec)  # (the shape checks)
    _same_dtype("addmv", (input, mat, vec))
    _broadcast_input("addmv", input, (mat.shape[0],))
    beta, alpha = int_coefficients(mat._data.dtype, beta, alpha)
    return _addmv(input, mat, vec, beta, alpha)


def _broadcast_input(name, input, shape):  # noqa: A002
    """PyTorch's error when ``input`` does not broadcast to the product's shape."""
    s = tuple(input.shape)
    if len(s) > len(shape) or any(a not in (1, b) for a, b in zip(s[::-1], shape[::-1])):
        raise RuntimeError(f"{name}: the expanded size of input {list(s)} must match the "
                           f"product's shape {list(shape)} (input broadcasts to the result)")


@quiet_fp
def _addr_fwd(inp, v1, v2, beta=1, alpha=1):
    prod = v1[:, None] * v2[None, :]
    if beta == 0:
        return namespace(prod).broadcast_to(prod * alpha, prod.shape)
    return inp * beta + prod * alpha


def _addr_vjp(node, g, saved):
    _, v1, v2 = saved
    beta, alpha = node.params or (1, 1)
    ni, n1, n2 = node.next
    ga = _scaled(g, alpha)
    return (_scaled(g, beta) if ni else None, matmul(ga, v2) if n1 else None,
            matmul(_mT(ga), v1) if n2 else None)


_addr = defop("addr", _addr_fwd, _addr_vjp, "AddrBackward0", 3, INPUTS, "promote",
              saved_for=lambda needs: (False, needs[2], needs[1]))  # (as addmv's)


def addr(input, vec1, vec2, *, beta=1, alpha=1):  # noqa: A002 - PyTorch's names
    """``beta * input + alpha * outer(vec1, vec2)``."""
    tensor_arg(vec1, "vec1")
    tensor_arg(vec2, "vec2", 2)
    if vec1.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.ndim}-D" if
                           vec1.ndim != 1 else f"addr: Expected 1-D argument vec2, but got "
                           f"{vec2.ndim}-D")
    _same_dtype("addr", (input, vec1, vec2))
    _broadcast_input("addr", input, (vec1.shape[0], vec2.shape[0]))
    _addr_coefficients(vec1._data.dtype, beta, alpha)
    return _addr(input, vec1, vec2, beta, alpha)


def _addr_coefficients(dtype, beta, alpha):
    """PyTorch's addr refuses a float beta/alpha for integer tensors and a bool one for
    non-bool tensors (where addmv truncates them: int_coefficients)."""
    for name, c in (("beta", beta), ("alpha", alpha)):
        if dtype.kind in "iub" and isinstance(c, float):  # (bool is integral to PyTorch)
            raise RuntimeError(f"For integral input tensors, argument {name} must not be a "
                               "floating point number (addr; pass an int)")
        if dtype.kind != "b" and isinstance(c, bool):
            raise RuntimeError(f"Boolean {name} only supported for Boolean results (addr; "
                               "pass a number)")


# ----------------------------------------------------------------- addbmm, baddbmm


@quiet_fp
def _baddbmm_fwd(inp, b1, b2, beta=1, alpha=1):
    prod = b1 @ b2
    if beta == 0:
        return prod * alpha
    return inp * beta + prod * alpha


def _baddbmm_vjp(node, g, saved):
    _, b1, b2 = saved
    beta, alpha = node.params or (1, 1)
    ni, n1, n2 = node.next
    ga = _scaled(g, alpha)
    return (_scaled(g, beta) if ni else None, matmul(ga, _mT(b2)) if n1 else None,
            matmul(_mT(b1), ga) if n2 else None)


_baddbmm = defop("baddbmm", _baddbmm_fwd, _baddbmm_vjp, "BaddbmmBackward0", 3, INPUTS,
                 "promote", saved_for=lambda needs: (False, needs[2], needs[1]))  # (as addmv's)


@quiet_fp
def _addbmm_fwd(inp, b1, b2, beta=1, alpha=1):
    prod = (b1 @ b2).sum(axis=0)
    if alpha == 0:
        return input_only(inp, beta, prod)
    if beta == 0:
        return prod * alpha
    return inp * beta + prod * alpha


def _addbmm_vjp(node, g, saved):
    _, b1, b2 = saved
    beta, alpha = node.params or (1, 1)
    ni, n1, n2 = node.next
    ga = unsqueeze(_scaled(g, alpha), 0)  # every batch gets the same gradient
    return (_scaled(g, beta) if ni else None, matmul(ga, _mT(b2)) if n1 else None,
            matmul(_mT(b1), ga) if n2 else None)


_addbmm = defop("addbmm", _addbmm_fwd, _addbmm_vjp, "AddbmmBackward0", 3, INPUTS, "promote",
                saved_for=lambda needs: (False, needs[2], needs[1]))  # (as addmv's)


def _check_batches(name, b1, b2):
    tensor_arg(b1, "batch1")
    tensor_arg(b2, "batch2", 2)
    if b1.ndim != 3 or b2.ndim != 3:
        raise RuntimeError(f"{name}: batch1 must be a 3D tensor and batch2 too (got shapes "
                           f"{_shape(b1)} and {_shape(b2)})")
    if b1.shape[0] != b2.shape[0] or b1.shape[2] != b2.shape[1]:
        raise RuntimeError(
            f"{name}: Expected size for first two dimensions of batch2 tensor to be: "
            f"[{b1.shape[0]}, {b1.shape[2]}] but got: [{b2.shape[0]}, {b2.shape[1]}] (shapes "
            f"{_shape(b1)} and {_shape(b2)})")


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):  # noqa: A002 - PyTorch's names
    """``beta * input + alpha * bmm(batch1, batch2)``."""
    _check_batches("baddbmm", batch1, batch2)
    _same_dtype("baddbmm", (input, batch1, batch2))
    refuse_bool("baddbmm", batch1, batch2)
    _broadcast_input("baddbmm", input, (batch1.shape[0], batch1.shape[1], batch2.shape[2]))
    check_empty_contraction_beta("baddbmm", batch1._data.dtype, batch1.shape[0] *
                                 batch1.shape[1] * batch2.shape[2], not batch1.shape[2], beta)
    beta, alpha = int_coefficients(batch1._data.dtype, beta, alpha)
    return _baddbmm(input, batch1, batch2, beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):  # noqa: A002 - PyTorch's names
    """``beta * input + alpha * sum_b(batch1[b] @ batch2[b])``."""
    _check_batches("addbmm", batch1, batch2)
    _same_dtype("addbmm", (input, batch1, batch2))
    refuse_bool("addmm_impl_cpu_", batch1, batch2)
    _broadcast_input("addbmm", input, (batch1.shape[1], batch2.shape[2]))
    check_empty_contraction_beta("addbmm", batch1._data.dtype, batch1.shape[1] *
                                 batch2.shape[2], not (batch1.shape[0] and batch1.shape[2]),
                                 beta)
    beta, alpha = int_coefficients(batch1._data.dtype, beta, alpha)
    return _addbmm(input, batch1, batch2, beta, alpha)


# ----------------------------------------------------------------- vdot, inner, tensordot, kron

# for real tensors vdot is dot (no conjugation to do); PyTorch names it VdotBackward0
# (each input only for the other's gradient, as PyTorch saves: fuzz seed 12660443)
_vdot = defop("vdot", _matmul_fwd, _matmul_vjp, "VdotBackward0", 2, INPUTS,
              saved_for=lambda needs: (needs[1], needs[0]))


def vdot(input, other):  # noqa: A002 - PyTorch's names
    """The dot product of two 1-D tensors, the first conjugated (real tensors: ``dot``)."""
    tensor_arg(other, "other")
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           f"tensors (vdot of shapes {_shape(input)} and {_shape(other)})")
    _same_dtype("vdot", (input, other), "vdot : expected both vectors to have same dtype, but "
                "found {} and {}")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and "
                           f"src [{other.shape[0]}] to have the same number of elements, but "
                           f"got {input.shape[0]} and {other.shape[0]} elements respectively "
                           "(vdot)")
    if input._data.dtype.kind == "b":  # (PyTorch's dot kernel: even for empty vectors)
        raise NotImplementedError("\"dot\" not implemented for 'Bool' (vdot of bool tensors); "
                                  "convert first, e.g. a.int()")
    return _vdot(input, other)


def _dims_list(dims, name):
    if hasattr(dims, "tolist"):
        dims = dims.tolist()
    return [int(d) for d in dims] if isinstance(dims, (list, tuple)) else [int(dims)]


def tensordot(a, b, dims=2, out=None):
    """Sum over the last ``dims`` dims of ``a`` and the first ``dims`` of ``b`` (an int), or
    over the pairs ``dims = (dims_a, dims_b)``.

    Examples
    --------
    >>> import retrograd as T
    >>> T.tensordot(T.ones(2, 3, 4), T.ones(3, 4, 5)).shape
    retrograd.Size([2, 5])
    """
    tensor_arg(a, "a", 0)
    tensor_arg(b, "b", 1)
    if isinstance(dims, (list, tuple)) or (hasattr(dims, "ndim") and dims.ndim == 2):
        if len(dims) != 2:
            raise RuntimeError(f"tensordot expects dims to be an int or a pair of lists of "
                               f"dims, got {dims!r}")
        da, db = _dims_list(dims[0], "dims"), _dims_list(dims[1], "dims")
    else:
        n = int(dims.item() if hasattr(dims, "item") else dims)
        if n < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={n}")
        if n > a.ndim or n > b.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={n} "
                               f"(shapes {_shape(a)} and {_shape(b)})")
        da, db = list(range(a.ndim - n, a.ndim)), list(range(n))
    if len(da) != len(db):
        raise RuntimeError(f"both dimension lists should have same length (tensordot got "
                           f"{da} and {db})")
    for d, x, which in [(d, a, "a") for d in da] + [(d, b, "b") for d in db]:
        if not -max(x.ndim, 1) <= d < max(x.ndim, 1):
            raise IndexError(f"tensordot(): Dimension out of range (expected to be in range of "
                             f"[{-max(x.ndim, 1)}, {max(x.ndim, 1) - 1}], but got {d}) for {which} "
                             f"with {x.ndim} dimension(s)")
    da = [d % max(a.ndim, 1) for d in da]
    db = [d % max(b.ndim, 1) for d in db]
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j] and 1 not in (a.shape[i], b.shape[j]):  # (1: summed)
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[i]} in dim {i} and second has size {b.shape[j]} in "
                               f"dim {j} (tensordot of shapes {_shape(a)} and {_shape(b)})")
    _same_dtype("tensordot", (a, b))
    if a._data.dtype.kind == "b":
        refuse_bool_tensordot(a, b, da, db)
    free_a = [d for d in range(a.ndim) if d not in da]
    free_b = [d for d in range(b.ndim) if d not in db]
    k = 1
    bools = a._data.dtype.kind == "b"  # (a bool sum is int64: only where PyTorch sums too)
    for i, j in zip(da, db):
        if bools and a.shape[i] == b.shape[j]:
            k *= a.shape[i]
            continue
        # PyTorch sums a contracted dim of size 1 on the other side right away (SumBackward1):
        # the product then saves that sum, not a view of the operand, so changing the
        # operand in place before backward is no error (seed 11041000)
        if b.shape[j] == 1:
            a = a.sum(i, keepdim=True, dtype=a.dtype if bools else None)
        elif a.shape[i] == 1:
            b = b.sum(j, keepdim=True, dtype=b.dtype if bools else None)
        else:
            k *= a.shape[i]
    na = nb = 1  # (explicit sizes: -1 cannot be inferred when k is 0)
    for d in free_a:
        na *= a.shape[d]
    for d in free_b:
        nb *= b.shape[d]
    am = reshape(permute(a, *free_a, *da), na, k) if a.ndim else reshape(a, 1, 1)
    bm = reshape(permute(b, *db, *free_b), k, nb) if b.ndim else reshape(b, 1, 1)
    res = reshape(matmul(am, bm), tuple([a.shape[d] for d in free_a] +
                                            [b.shape[d] for d in free_b]))
    if out is not None:
        from .inplace import copy_

        return copy_(out, res)  # (resizing out is not supported: give it the right shape)
    return res


def inner(input, other):  # noqa: A002 - PyTorch's names
    """Sum over the last dimension of both: ``tensordot(input, other, ([-1], [-1]))``; a
    0-d operand multiplies."""
    tensor_arg(other, "other")
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {_shape(input)} and {_shape(other)}")
    return tensordot(input, other, ([input.ndim - 1], [other.ndim - 1]))


def kron(input, other):  # noqa: A002 - PyTorch's names
    """The Kronecker product: blocks ``input[i, j] * other`` (ranks padded with leading 1s)."""
    tensor_arg(other, "other")
    _same_dtype("kron", (input, other))
    n = max(input.ndim, other.ndim)
    sa = (1,) * (n - input.ndim) + tuple(input.shape)
    sb = (1,) * (n - other.ndim) + tuple(other.shape)
    # interleave: input's dims at even positions, other's at odd ones, then merge pairs.
    # As PyTorch's kron, with _unsafe_view (inserting size-1 dims: always the same memory):
    # fresh tensors (UnsafeViewBackward0), so the product saves operands that keep the flags
    # and versions they had (one that comes to require grad later is not differentiated in
    # a double backward: fuzz seed 11000439; changing one in place breaks nothing: 11046607)
    ea = _with_view_strides(input, _unsafe_view(
        input, tuple(s for d in sa for s in (d, 1)), tuple(input.shape)))
    eb = _with_view_strides(other, _unsafe_view(
        other, tuple(s for d in sb for s in (1, d)), tuple(other.shape)))
    prod = ea * eb
    shape = tuple(x * y for x, y in zip(sa, sb))
    if _view_strides(prod, shape) is None:
        _kron_view_error(prod, shape)
    # PyTorch's kron ends in _unsafe_view: a fresh tensor (UnsafeViewBackward0), not a view of
    # the product, so an in-place op on it is recorded on it (seeds 9972015, 9976976, 9979842)
    return _with_view_strides(prod, _unsafe_view(prod, shape, tuple(prod.shape)))


def _view_strides(x, shape):
    """The element strides of PyTorch's ``x.view(shape)`` (matmul_saved.view_strides)."""
    return view_strides(tuple(x.shape), tuple(s // x._data.itemsize for s in x._data.strides),
                        shape)


def _with_view_strides(x, viewed):
    """``viewed`` (``x`` reshaped) with the strides PyTorch's view of ``x`` has."""
    strides = _view_strides(x, tuple(viewed.shape))
    if strides is None or 0 in viewed.shape:
        return viewed
    data = x._data
    item = data.itemsize
    if tuple(s // item for s in viewed._data.strides) != strides:
        viewed._data = namespace(data).lib.stride_tricks.as_strided(
            data, tuple(viewed.shape), tuple(s * item for s in strides))
    return viewed


def _kron_view_error(prod, shape):
    """PyTorch's kron merges the product's interleaved dims with a view, which fails where
    the product's layout (TensorIterator's, following a column-major operand such as a
    solve_triangular result or a transpose) does not allow it: PyTorch raises there, so
    retrograd does too (seed 19670971)."""
    raise RuntimeError(
        "view size is not compatible with input tensor's size and stride (at least one "
        "dimension spans across two contiguous subspaces). Use .reshape(...) instead. "
        f"(kron: PyTorch's kron views its product of shape {list(prod.shape)} as "
        f"{list(shape)}, which this operand layout does not allow; pass .contiguous() "
        "operands)")


def vecdot(x, y, *, dim=-1):
    """``sum(x * y, dim)`` (x conjugated, for complex inputs), broadcasting x and y."""
    tensor_arg(x, "x")
    tensor_arg(y, "y", 1)
    if x._data.dtype.kind not in "fc":  # (PyTorch's first check: seed 12517484)
        raise RuntimeError(
            "linalg.vecdot: Expected a floating point or complex tensor as input. Got "
            f"{scalar_type_name(x._data.dtype)} (convert x and y first, e.g. x.double())")
    _same_dtype("linalg.vecdot", (x, y))
    if x.ndim == 1 and y.ndim == 1:  # PyTorch's 1-d path: VdotBackward0, no broadcasting,
        return vdot(x, y)            # and dim is not checked
    prod = x * y
    if not -max(prod.ndim, 1) <= dim < max(prod.ndim, 1):
        raise IndexError(f"linalg.vecdot(): Dimension out of range (expected to be in range of "
                         f"[{-max(prod.ndim, 1)}, {max(prod.ndim, 1) - 1}], but got {dim})")
    return _sum(prod, dim)


# ----------------------------------------------------------------- multi_dot, matrix_power


def _chain_order(dims):
    """The cheapest parenthesisation of a chain of matrices with sizes ``dims`` (matrix i is
    dims[i] x dims[i+1]): the classic O(n^3) dynamic programme.  split[i][j] is where the
    product of matrices i..j is cut."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    if n == 3:
        # PyTorch's three-matrix case is its own formula, (A @ B) @ C unless A @ (B @ C) is
        # strictly cheaper: on a tie the other order than the programme's, and what each
        # product saves (so which in-place change breaks the backward) differs (seed
        # 19017022)
        a, b, c, d = dims
        split[0][2] = 0 if a * c * (b + d) > b * d * (a + c) else 1
    return split


def multi_dot(tensors, *, out=None):
    """The product of a chain of matrices, multiplied in the cheapest order; the first and
    last may be 1-D (a row and a column vector).

    Examples
    --------
    >>> import retrograd as T
    >>> T.linalg.multi_dot([T.ones(2, 3), T.ones(3, 4), T.ones(4)]).shape
    retrograd.Size([2])
    """
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):
        tensor_arg(t, "tensors", i)
        want = (1, 2) if i in (0, len(tensors) - 1) else (2,)
        if t.ndim not in want:
            where = "first" if i == 0 else "last" if i == len(tensors) - 1 else None
            raise RuntimeError(
                f"multi_dot(): the {where} tensor must be 1D or 2D but got {t.ndim}D" if where
                else f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    _same_dtype("multi_dot", tensors, "multi_dot(): all tensors must have be the same dtype but "
                "tensor 0 is {} and another is {}")
    first_1d, last_1d = tensors[0].ndim == 1, tensors[-1].ndim == 1
    mats = list(tensors)
    if first_1d:
        mats[0] = unsqueeze(mats[0], 0)
    if last_1d:
        mats[-1] = unsqueeze(mats[-1], -1)
    for i in range(len(mats) - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes {_shape(tensors[i])} and "
                f"{_shape(tensors[i + 1])} cannot be multiplied")
    dims = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
    split = _chain_order(dims)

    def product(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return matmul(product(i, k), product(k + 1, j))

    res = product(0, len(mats) - 1)
    # PyTorch ends with a view to the output shape, also when it does not change it: the
    # result's grad_fn is ViewBackward0
    shape = ([] if first_1d else [res.shape[0]]) + ([] if last_1d else [res.shape[1]])
    res = view(res, tuple(shape))
    if out is not None:
        from .inplace import copy_

        return copy_(out, res)
    return res


def _identity_fwd(a):
    xp = namespace(a)
    return xp.broadcast_to(xp.eye(a.shape[-1], dtype=a.dtype), a.shape).copy()


# PyTorch copies the identity into a clone of A: A's gradient is copy_'s zeros_like(grad),
# exact zeros that record nothing (g * 0 required grad under create_graph: seed 15013377)
_identity = defop("matrix_power", _identity_fwd,
                  lambda node, g, saved: (zeros_like_grad(g),), "CopyBackwards", 1)


def matrix_power(A, n):  # noqa: N803 - PyTorch's name
    """``A`` multiplied by itself ``n`` times (square matrices, batched); ``n = 0`` gives the
    identity, a negative ``n`` the inverse's power (repeated squaring)."""
    tensor_arg(A, "A")
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but "
                           f"they are {A.shape[-2] if A.ndim > 1 else 1} by "
                           f"{A.shape[-1] if A.ndim else 1} matrices")
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"linalg_matrix_power(): argument 'n' (position 2) must be int, not "
                        f"{type(n).__name__}")
    if n == 0:  # the identity, recorded (PyTorch's result requires grad too; its grad is 0)
        return _identity(A)
    if n < 0:
        from .linalg_solve import inv

        A, n = inv(A), -n
        if n == 1:
            return A
    if n == 1:
        from .shape import clone_contiguous

        return clone_contiguous(A)  # (PyTorch: self.clone(at::MemoryFormat::Contiguous))
    result = None
    base = A
    while n:  # repeated squaring: the low bits first
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


# ----------------------------------------------------------------- cross, diagonal


@quiet_fp
def _cross_fwd(a, b, dim):
    xp = namespace(a)
    a, b = xp.broadcast_arrays(a, b)
    # NumPy's result along another axis than the last is a transposed view; PyTorch's is
    # contiguous, so that .view() of it works (seed 11029955)
    return xp.ascontiguousarray(xp.cross(a, b, axis=dim))


def _cross_vjp(node, g, saved):
    a, b = saved
    (dim,) = node.params
    na, nb = node.next
    # d<g, a x b>/da = b x g, d/db = g x a (the engine sums broadcast dims back)
    return (linalg_cross(b, g, dim=dim) if na else None,
            linalg_cross(g, a, dim=dim) if nb else None)


_cross = defop("linalg.cross", _cross_fwd, _cross_vjp, "LinalgCrossBackward0", 2, INPUTS,
               "promote", saved_for=lambda needs: (needs[1], needs[0]))  # (as PyTorch saves)


def linalg_cross(input, other, *, dim=-1):  # noqa: A002 - PyTorch's names
    """The cross product of 3-vectors along ``dim``, broadcasting the other dimensions."""
    if not hasattr(input, "_data") and not hasattr(other, "_data"):
        return _cross_fwd(input, other, dim)  # (a first-order backward on arrays)
    tensor_arg(other, "other")
    if input.ndim != other.ndim:
        raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions (got "
                           f"shapes {_shape(input)} and {_shape(other)}; unsqueeze one)")
    nd = max(input.ndim, other.ndim, 1)
    if not -nd <= dim < nd:
        raise IndexError(f"linalg.cross(): Dimension out of range (expected to be in range of "
                         f"[{-nd}, {nd - 1}], but got {dim})")
    sa = (1,) * (nd - input.ndim) + tuple(input.shape)
    sb = (1,) * (nd - other.ndim) + tuple(other.shape)
    if sa[dim] != 3 or sb[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{sa[dim]} and {sb[dim]}")
    if input._data.dtype.kind == "b":
        # the kernel has no bool version: PyTorch refuses it after the broadcast, before
        # the operands' dtypes are compared (NumPy's cross raised a TypeError)
        check_broadcast("linalg.cross", input, other)
        raise NotImplementedError("\"cross\" not implemented for 'Bool' (linalg.cross of a "
                                  "bool tensor; convert it first, e.g. x.int())")
    _same_dtype("linalg.cross", (input, other))
    return _cross(input, other, dim % nd)


def cross(input, other, dim=None):  # noqa: A002 - PyTorch's names
    """``linalg.cross`` along ``dim``; without ``dim``, the first dimension of size 3 (with
    PyTorch's deprecation warning)."""
    if dim is None:
        import warnings

        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease "
                      "either pass the dim explicitly or simply use torch.linalg.cross.\nThe "
                      "default value of dim will change to agree with that of linalg.cross in a "
                      "future release.", UserWarning, stacklevel=2)
        shape = [max(x, y) for x, y in zip(input.shape, other.shape)] if input.ndim == \
            other.ndim else list(input.shape)
        dim = next((d for d, s in enumerate(shape) if s == 3), -1)
    return linalg_cross(input, other, dim=dim)


def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):  # noqa: N803 - PyTorch's name
    """The diagonals of the matrices in ``A`` (a view): ``diagonal`` with the last two dims
    by default."""
    tensor_arg(A, "A")
    return _diagonal(A, offset, dim1, dim2)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(mv, signature="input, vec")
register(addmv, signature="input, mat, vec, *, beta=1, alpha=1")
register(addr, signature="input, vec1, vec2, *, beta=1, alpha=1")
register(addbmm, signature="input, batch1, batch2, *, beta=1, alpha=1")
register(baddbmm, signature="input, batch1, batch2, *, beta=1, alpha=1")
register(vdot, signature="input, other")
register(inner, signature="input, other")
register(kron, signature="input, other")
register(tensordot, method=False)
register(cross, signature="input, other, dim=None")
register(vecdot, "vecdot", function=False, method=False, linalg=("vecdot",),
         signature="x, y, *, dim=-1")
register(multi_dot, function=False, method=False, linalg=("multi_dot",))
register(matrix_power, function=True, method=True, linalg=("matrix_power",),
         signature="A, n")
register(linalg_cross, "cross", function=False, method=False, linalg=("cross",),
         signature="input, other, *, dim=-1")
register(linalg_diagonal, "diagonal", function=False, method=False, linalg=("diagonal",))

# the in-place forms (x.addmv_(mat, vec)...): the result written into x, recorded as the op
from .inplace import inplace  # noqa: E402

for _fn in (addmv, addr, addbmm, baddbmm):
    register(inplace(_fn, _fn.__name__ + "_", True), _fn.__name__ + "_", function=False,
             inplace_of=_fn.__name__)
