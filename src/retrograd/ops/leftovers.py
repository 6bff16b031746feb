"""The last of PyTorch's top-level functions and Tensor methods (issue 6 leftovers).

Most are other spellings of ops the registry already has, with PyTorch's signatures:

* ``ger`` (``outer``), ``orgqr`` (``linalg.householder_product``), ``chain_matmul``
  (``linalg.multi_dot``, one matrix: a copy), ``nuclear_norm`` / ``frobenius_norm`` (the
  deprecated forms of ``linalg.matrix_norm(A, 'nuc')`` / ``linalg.vector_norm(A, 2, dim)``),
  ``norm_except_dim`` (weight_norm's helper: the norm over every dim but ``dim``);
* ``unsafe_chunk`` / ``unsafe_split`` / ``unsafe_split_with_sizes``: ``split`` whose pieces
  share memory with the input but are not tracked as views, so in-place changes to them are
  allowed (UnsafeSplitBackward0), as PyTorch;
* ``nonzero_static`` (``nonzero`` padded or cut to ``size`` rows), ``histogramdd``,
  ``broadcast_shapes``, ``asarray`` (shares memory with a NumPy array or tensor when it can),
  ``empty_strided`` / ``Tensor.new_empty_strided``;
* ``eig``, ``symeig``, ``solve``, ``lstsq``, ``matrix_rank``: removed from PyTorch in 1.9;
  its functions still exist and raise a RuntimeError saying what to call in
  ``torch.linalg`` instead, and so do retrograd's (the same messages).
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import dtypes
from ..backend import namespace
from ..tensor import Size, Tensor, make_tensor
from . import registry
from ..autograd.forward_state import fw
from ._apply import NOTHING, integer_grad, multi_output_class, record_multi
from ._errors import int_arg, tensor_arg
from ..autograd.grad_mode import no_grad, state
from .layout import _split_vjp
from .factories import _finish, _numpy_dtype
from .shape import _norm_dim
from .quiet_fp import quiet_fp


def _op(key):
    return registry.entry(key).fn


# ----------------------------------------------------------------- other spellings


def ger(input, vec2):  # noqa: A002 - PyTorch's names
    """The outer product of two 1-D tensors (the old name of ``outer``)."""
    return _op("outer")(input, vec2)


def orgqr(input, tau):  # noqa: A002
    """Q from Householder reflectors (LAPACK's name of ``linalg.householder_product``)."""
    return _op("linalg.householder_product")(input, tau)


_WARNED: set = set()  # PyTorch warns of these deprecations once per process


def _warn_once(key, message):
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(message, UserWarning, stacklevel=3)


def chain_matmul(*matrices, out=None):
    """The product of 2-D matrices in the cheapest order (deprecated: ``linalg.multi_dot``)."""
    _warn_once("chain_matmul", "torch.chain_matmul is deprecated and will be removed in a "
               "future PyTorch release. Use torch.linalg.multi_dot instead, which accepts a list "
               "of two or more tensors rather than multiple parameters.")
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for i, m in enumerate(matrices):
        tensor_arg(m, "chain_matmul", "matrices")
        if m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead. "
                               f"(chain_matmul(): matrix {i} of shape {list(m.shape)}; every "
                               "argument must be 2-D)")
    result = _op("clone")(matrices[0]) if len(matrices) == 1 else \
        _op("linalg.multi_dot")(list(matrices))
    if out is not None:
        registry.out_writer("chain_matmul", matrices, result, out)
        return out
    return result


def _deprecated_norm(name, instead):
    _warn_once(name, f"at::{name} is deprecated and it is just left for JIT compatibility. It "
               f"will be removed in a future PyTorch release. Please use {instead} instead")


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):  # noqa: A002
    """The sum of singular values over the matrix dims ``dim`` (default the last two);
    ``nuclear_norm(x, keepdim)`` with a bool as its second argument, as PyTorch."""
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    _deprecated_norm("nuclear_norm", "`linalg.matrix_norm(A, 'nuc', dim, keepdim)`")
    dim = (-2, -1) if dim is None else tuple(dim)
    return _op("linalg.matrix_norm")(input, "nuc", dim, keepdim, out=out)


def frobenius_norm(input, dim, keepdim=False, *, out=None):  # noqa: A002
    """The 2-norm over ``dim`` (deprecated: ``linalg.vector_norm(A, 2, dim, keepdim)``)."""
    _deprecated_norm("frobenius_norm", "`linalg.vector_norm(A, 2., dim, keepdim)`")
    dim = (dim,) if isinstance(dim, int) else tuple(dim)
    return _op("linalg.vector_norm")(input, 2, dim, keepdim, out=out)


def norm_except_dim(v, pow=2, dim=0):  # noqa: A002 - PyTorch's names
    """The ``pow``-norm over every dim of ``v`` except ``dim``, shaped as ``v`` with 1
    everywhere but ``dim`` (weight_norm's helper); ``dim=-1``: the norm of all of ``v``."""
    tensor_arg(v, "norm_except_dim", "v")
    dim = int_arg(dim, "dim")
    if dim == -1:
        return _op("norm")(v, pow)
    dim = _norm_dim(dim, v.ndim)
    n = v.shape[dim]
    rows = _op("movedim")(v, dim, 0).reshape(n, -1)
    shape = [1] * v.ndim
    shape[dim] = n
    return _op("linalg.vector_norm")(rows, pow, 1).reshape(shape)


def vander(x, N=None, increasing=False):  # noqa: N803 - PyTorch's name
    """The Vandermonde matrix of the 1-D ``x``: columns ``x ** (N - 1)`` ... ``x ** 0``
    (``increasing``: the other way round); ``N`` defaults to ``len(x)``.  Integer and bool
    inputs give int64, as PyTorch (it promotes with int64).  The powers are a cumulative
    product, as PyTorch's, so the gradient at x = 0 is exact."""
    tensor_arg(x, "vander", "x")
    if x.ndim != 1:
        raise RuntimeError(f"x must be a one-dimensional tensor. (vander got shape "
                           f"{list(x.shape)})")
    n = x.shape[0] if N is None else int_arg(N, "N")
    if n < 0:
        raise RuntimeError(f"N must be non-negative. (vander got N={n})")
    if x._data.dtype.kind in "biu":
        x = x.to(dtypes.int64)
    ones = make_tensor(namespace(x._data).ones((x.shape[0], min(n, 1)), x._data.dtype))
    if n > 1:
        powers = _op("cumprod")(_op("unsqueeze")(x, 1).expand(x.shape[0], n - 1), 1)
        result = _op("cat")([ones, powers], 1)
    else:
        result = ones
    return result if increasing else _op("flip")(result, (1,))


# ----------------------------------------------------------------- unsafe split


_UnsafeSplitBackward0 = multi_output_class("UnsafeSplitBackward0", _split_vjp, NOTHING)
_UnsafeSplitWithSizesBackward0 = multi_output_class("UnsafeSplitWithSizesBackward0",
                                                    _split_vjp, NOTHING)


def _unsafe_pieces(x, pieces, cls, dim):
    """``pieces`` (from ``split``) again as tensors sharing ``x``'s memory but not tracked as
    its views (each its own version counter): in-place changes to them are not refused."""
    outs = [make_tensor(p._data) for p in pieces]
    if x._requires_grad and state.enabled:
        integer_grad(cls.__name__, (x,), x._data)  # (an integer one: refused, as split's)
        record_multi(cls, x, outs, (dim,))
    if fw.active:  # forward AD: the pieces' tangents (ops/_jvp.py)
        fw.propagate_multi(cls, x, outs, (dim,))
    return tuple(outs)


def unsafe_split(tensor, split_size, dim=0):
    """``split`` into pieces of ``split_size`` without view tracking (UnsafeSplitBackward0);
    a list of sizes is ``unsafe_split_with_sizes``'s (a TypeError here, as PyTorch)."""
    if not isinstance(split_size, (int, np.integer)) or isinstance(split_size, bool):
        raise TypeError(f"unsafe_split(): argument 'split_size' (position 1) must be int, not "
                        f"{type(split_size).__name__}; for a list of sizes use "
                        "unsafe_split_with_sizes")
    pieces = _op("split")(tensor, split_size, dim)
    return _unsafe_pieces(tensor, pieces, _UnsafeSplitBackward0, _norm_dim(dim, tensor.ndim))


def unsafe_split_with_sizes(input, split_sizes, dim=0):  # noqa: A002
    """``split_with_sizes`` without view tracking (UnsafeSplitWithSizesBackward0)."""
    pieces = _op("split_with_sizes")(input, split_sizes, dim)
    return _unsafe_pieces(input, pieces, _UnsafeSplitWithSizesBackward0,
                          _norm_dim(dim, input.ndim))


def unsafe_chunk(input, chunks, dim=0):  # noqa: A002
    """``chunk`` without view tracking (UnsafeSplitBackward0)."""
    pieces = _op("chunk")(input, chunks, dim)
    return _unsafe_pieces(input, pieces, _UnsafeSplitBackward0, _norm_dim(dim, input.ndim))


# ----------------------------------------------------------------- nonzero_static, histogramdd


def nonzero_static(input, *, size, fill_value=-1):  # noqa: A002
    """The indices of the nonzero elements, one row each (as ``nonzero``), cut or padded with
    ``fill_value`` to exactly ``size`` rows: a shape known before the data is."""
    tensor_arg(input, "nonzero_static", "input")
    size = int_arg(size, "size")
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer (got "
                           f"{size})")
    a = input._data
    xp = namespace(a)
    found = xp.stack(xp.nonzero(a), axis=1) if a.ndim else \
        xp.zeros((int(bool(a)), 0), dtype=np.int64)
    found = found.astype(np.int64)[:size]
    pad = xp.full((size - found.shape[0], a.ndim), fill_value, dtype=np.int64)
    return make_tensor(xp.concatenate([found, pad], axis=0))


@quiet_fp
def histogramdd(input, bins, *, range=None, weight=None, density=False, out=None):  # noqa: A002
    """A D-dimensional histogram of the points in ``input`` (..., D): ``bins`` one count for
    every dim, a list of counts, or a list of 1-D tensors of bin edges; ``range`` the flat
    list ``[lo0, hi0, lo1, hi1, ...]``.  Returns (hist, bin_edges), float as ``input``."""
    from collections import namedtuple

    tensor_arg(input, "histogramdd", "input")
    if fw.active:  # no forward derivative, as PyTorch
        from ..autograd.forward_state import refuse_forward

        refuse_forward("aten::_histogramdd_bin_edges", input, weight)
    if out is not None:
        raise NotImplementedError("histogramdd(out=...) is not supported by retrograd; use the "
                                  "returned (hist, bin_edges)")
    a = input._data
    if a.dtype.kind != "f":
        raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the "
                           f"same dtype, but got input {input.dtype} (histogramdd needs a "
                           "floating point input)")
    if a.ndim < 2:
        raise RuntimeError(f"torch.histogramdd: input tensor should have at least 2 dimensions,"
                           f" but got {a.ndim}; the last dim holds each point's coordinates")
    d = a.shape[-1]
    points = np.asarray(a).reshape(-1, d)
    if isinstance(bins, int):
        bins_np = [bins] * d
    else:
        bins_np = [np.asarray(b._data) if isinstance(b, Tensor) else int(b) for b in bins]
    if len(bins_np) != d:
        raise RuntimeError(f"torch.histogramdd: expected {d} sequences of bin edges for each "
                           f"dimension, but got {len(bins_np)}")
    ranges = None
    if range is not None:
        if len(range) != 2 * d:
            raise RuntimeError(f"torch.histogramdd: for a {d}-dimensional histogram range should "
                               f"have {2 * d} elements, but got {len(range)}")
        ranges = [(float(range[2 * i]), float(range[2 * i + 1])) for i in builtins_range(d)]
    w = None if weight is None else np.asarray(weight._data).reshape(-1)
    hist, edges = np.histogramdd(points, bins=bins_np, range=ranges, weights=w,
                                 density=density)
    hist = make_tensor(hist.astype(a.dtype))
    edges = tuple(make_tensor(e.astype(a.dtype)) for e in edges)
    return namedtuple("histogramdd", ["hist", "bin_edges"])(hist, edges)


builtins_range = range


def broadcast_shapes(*shapes):
    """The shape that tensors of ``shapes`` broadcast to (each a tuple, or an int)."""
    result: list = []
    for i, s in enumerate(shapes):
        s = (s,) if isinstance(s, int) else tuple(s)
        for k in builtins_range(1, len(s) + 1):
            if len(result) < k:
                result.insert(0, 1)
            have, got = result[-k], int(s[-k])
            if got < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {got}: "
                                   f"{list(s)}")
            if have == 1:
                result[-k] = got
            elif got != 1 and got != have:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {got} at {-k}! Mismatching "
                    f"argument at index {i} had {s}; but expected shape should be "
                    f"broadcastable to {result}")
    return Size(result)


# ----------------------------------------------------------------- creation


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """``obj`` as a tensor, sharing its memory when ``obj`` is a tensor or a NumPy array (or
    anything with ``__array__``) and ``dtype``/``device`` need no conversion, as
    torch.asarray.  ``copy=True`` always copies; ``copy=False`` raises where it would have to.
    A tensor passed in comes back as itself (its graph kept) unless something changes; a
    copy or conversion of it is recorded (CloneBackward0, ToCopyBackward0), as PyTorch 2.13
    does when ``requires_grad`` is not given; ``requires_grad=False`` detaches."""
    np_dtype = None if dtype is None else dtypes.to_dtype(dtype).numpy
    if isinstance(obj, Tensor):
        same = np_dtype is None or np_dtype == obj._data.dtype
        if copy is False and not same:
            raise ValueError(f"can't alias tensor with dtype '{obj.dtype}' into dtype "
                             f"'{dtypes.to_dtype(dtype)}' (asarray(copy=False) shares memory "
                             "only without a dtype conversion)")
        if requires_grad is None and obj.requires_grad:
            warnings.warn("torch.asarray: unspecified requires_grad now defaults to "
                          "obj.requires_grad instead of False. Pass requires_grad=False "
                          "explicitly to get the old behavior and silence this warning.",
                          UserWarning, stacklevel=2)
        src = obj.detach() if requires_grad is False else obj
        out = (_op("clone")(src) if copy else src) if same else src.to(dtype)
        if requires_grad and not out.requires_grad:
            out = out.requires_grad_(True)
        return out
    arr = obj if isinstance(obj, np.ndarray) else (
        np.asarray(obj) if hasattr(obj, "__array__") or hasattr(obj, "__array_interface__")
        else None)
    if arr is not None and arr.dtype in dtypes.FROM_NUMPY:
        same = np_dtype is None or np_dtype == arr.dtype
        if copy is False and not same:
            raise ValueError(f"can't alias NumPy array with dtype '{arr.dtype}' into dtype "
                             f"'{dtypes.to_dtype(dtype)}' (asarray(copy=False) shares memory "
                             "only without a dtype conversion)")
        data = arr.astype(np_dtype or arr.dtype, copy=bool(copy) or not same)
        return _finish(data, dtype, bool(requires_grad), device, "asarray")
    if copy is False:
        raise ValueError(f"can't alias a {type(obj).__name__} (asarray(copy=False) shares "
                         "memory only with tensors and arrays; pass copy=None)")
    data = np.asarray(obj)  # Python numbers and (nested) sequences: tensor()'s dtypes
    if data.dtype.kind not in "biuf":
        raise TypeError(f"asarray(): could not convert a {type(obj).__name__} (NumPy makes it "
                        f"dtype {data.dtype}); pass numbers, sequences of numbers, arrays or "
                        "tensors")
    default = {"f": dtypes.get_default_dtype().numpy, "i": np.dtype(np.int64),
               "u": np.dtype(np.int64), "b": np.dtype(np.bool_)}[data.dtype.kind]
    data = data.astype(_numpy_dtype(dtype, default))
    return _finish(data, dtype, bool(requires_grad), device, "asarray")


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """An uninitialized tensor of ``size`` whose elements are ``stride`` apart (in elements),
    over a buffer just large enough, as torch.empty_strided."""
    size = tuple(int_arg(s, "size") for s in size)
    stride = tuple(int_arg(s, "stride") for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape (empty_strided: size "
                           f"{list(size)} has {len(size)} dims, stride {list(stride)} has "
                           f"{len(stride)})")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(size)}: {list(size)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, "
                           f"got strides: {list(stride)}")
    np_dtype = _numpy_dtype(dtype)
    n = 0 if 0 in size else 1 + sum((s - 1) * st for s, st in zip(size, stride))
    buf = np.empty(n, np_dtype)
    item = buf.itemsize
    data = np.lib.stride_tricks.as_strided(buf, size, tuple(st * item for st in stride))
    return _finish(data, dtype, requires_grad, device, "empty_strided")


def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                      requires_grad=False, pin_memory=False):
    """``empty_strided`` with this tensor's dtype unless ``dtype`` is given."""
    return empty_strided(size, stride, dtype=dtype or self.dtype, device=device,
                         requires_grad=requires_grad)


# ----------------------------------------------------------------- apply_ / map_ / map2_


def _python_map(name, self, others, fn):
    """``self`` overwritten, in place, by ``fn`` called element by element on Python numbers
    (``self``'s and ``others``' at the same place, ``others`` broadcast to ``self``)."""
    if self.requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.")
    for o in others:
        tensor_arg(o, name, "other")
        if o._data.dtype != self._data.dtype:
            raise TypeError(f"{name}: expected {self.dtype} for 'other' (got {o.dtype}); "
                            f"convert it first (other.to(self.dtype))")
    data = np.asarray(self._data)
    try:
        args = [np.broadcast_to(np.asarray(o._data), data.shape) for o in others]
    except ValueError:
        raise RuntimeError(f"{name}(): the expanded size of the other tensor "
                           f"{[list(o.shape) for o in others]} must match the size of self "
                           f"{list(self.shape)}") from None
    out = np.empty_like(data)
    flat_out = out.reshape(-1)
    columns = [data.reshape(-1)] + [a.reshape(-1) for a in args]
    for i, values in enumerate(zip(*(c.tolist() for c in columns))):
        value = fn(*values)
        if not isinstance(value, (int, float, np.number)):
            raise TypeError(f"must be real number, not {type(value).__name__} ({name}(): "
                            "the callable must return a number)")
        flat_out[i] = value
    with no_grad():
        self.copy_(make_tensor(namespace(self._data).asarray(out)))
    return self


def apply_(self, callable):  # noqa: A002 - PyTorch's names
    """Every element replaced by ``callable(element)``, in place (CPU, slow: Python calls)."""
    return _python_map("apply_", self, (), callable)


def map_(self, tensor, callable):  # noqa: A002
    """Every element replaced by ``callable(self_element, tensor_element)``, in place."""
    return _python_map("map_", self, (tensor,), callable)


def map2_(self, x, y, callable):  # noqa: A002
    """Every element replaced by ``callable(self_element, x_element, y_element)``, in place."""
    return _python_map("map2_", self, (x, y), callable)


# ----------------------------------------------------------------- removed in PyTorch 1.9

_REMOVED = "This function was deprecated since version 1.9 and is now removed."
REMOVED_MESSAGES = {
    "eig": _REMOVED + (
        " `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than "
        "real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced "
        "with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, "
        "eigenvectors=True) should be replaced with:\nL_complex, V_complex = "
        "torch.linalg.eig(A)"),
    "symeig": _REMOVED + (
        " The default behavior has changed from using the upper triangular portion of the matrix "
        "by default to using the lower triangular portion.\n\nL, _ = torch.symeig(A, "
        "upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper "
        "else 'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) should be replaced "
        "with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')"),
    "solve": _REMOVED + (
        " `torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` "
        "has its arguments reversed and does not return the LU factorization.\n\nTo get the LU "
        "factorization see `torch.lu`, which can be used with `torch.lu_solve` or "
        "`torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\nX = "
        "torch.linalg.solve(A, B)"),
    "lstsq": _REMOVED + (
        " `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` "
        "has reversed arguments and does not return the QR decomposition in the returned tuple "
        "(although it returns other information about the problem).\n\nTo get the QR "
        "decomposition consider using `torch.linalg.qr`.\n\nThe returned solution in "
        "`torch.lstsq` stored the residuals of the solution in the last m - n columns of the "
        "returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the field "
        "'residuals' of the returned named tuple.\n\nThe unpacking of the solution, as in\nX, _ "
        "= torch.lstsq(B, A).solution[:A.size(1)]\nshould be replaced with:\nX = "
        "torch.linalg.lstsq(A, B).solution"),
    "matrix_rank": _REMOVED + (
        "\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter "
        "'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'."),
}


def eig(self, eigenvectors=False, *, e=None, v=None):
    """Removed from PyTorch (1.9): raises, naming ``linalg.eigvals`` / ``linalg.eig``."""
    raise RuntimeError(REMOVED_MESSAGES["eig"])


def symeig(input, eigenvectors=False, upper=True, *, out=None):  # noqa: A002
    """Removed from PyTorch (1.9): raises, naming ``linalg.eigvalsh`` / ``linalg.eigh``."""
    raise RuntimeError(REMOVED_MESSAGES["symeig"])


def solve(input, A, *, out=None):  # noqa: A002, N803
    """Removed from PyTorch (1.9): raises, naming ``linalg.solve`` (arguments reversed)."""
    raise RuntimeError(REMOVED_MESSAGES["solve"])


def lstsq(input, A, *, out=None):  # noqa: A002, N803
    """Removed from PyTorch (1.9): raises, naming ``linalg.lstsq`` (arguments reversed)."""
    raise RuntimeError(REMOVED_MESSAGES["lstsq"])


def matrix_rank(input, tol=None, symmetric=False, *, out=None):  # noqa: A002
    """Removed from PyTorch (1.9): raises, naming ``linalg.matrix_rank``."""
    raise RuntimeError(REMOVED_MESSAGES["matrix_rank"])


# ----------------------------------------------------------------- public names (registry.py)
register = registry.register
register(ger, signature="input, vec2")
register(orgqr)
register(chain_matmul, method=False)
register(nuclear_norm, method=False)
register(frobenius_norm, method=False)
register(norm_except_dim, method=False)
register(unsafe_split)
register(unsafe_split_with_sizes)
register(unsafe_chunk)
register(vander, method=False)
register(nonzero_static, differentiable=False)
for _fn in (apply_, map_, map2_):
    register(_fn, function=False, differentiable=False)
register(histogramdd, method=False, differentiable=False)
register(broadcast_shapes, method=False, differentiable=False)
register(asarray, method=False)
register(empty_strided, method=False, differentiable=False)
register(new_empty_strided, function=False, differentiable=False)
for _fn in (eig, symeig, solve, lstsq):
    register(_fn, differentiable=False)
register(matrix_rank, method=False, differentiable=False)
