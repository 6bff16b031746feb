"""More reductions: prod, var/std, norm, logsumexp, amax/amin, and the scan cumsum.

As in ``reduce``, each derivative sends the reduced gradient back over the reduced
dimensions (``_spread``); zeros, ties and empty norms follow PyTorch's conventions.
"""

from __future__ import annotations

import math

from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._apply import INPUTS, NOTHING, OUTPUT, defop
from .dtype_rules import check_grad_dtype, norm_input
from .pointwise import abs as _abs
from .pointwise import exp, sign, where
from .reduce import _dims, _keep_shape, _one_dim, _spread, _sum_dim
from .iter_layout import reduction
from .saved_checks import check_also
from .cast_inside import take_source
from .quiet_fp import quiet_fp


def quiet(xp):
    """Silence division-by-zero warnings where the result (inf, nan) is the answer; CuPy has
    no errstate (and does not warn)."""
    errstate = getattr(xp, "errstate", None)
    if errstate is None:
        import contextlib

        return contextlib.nullcontext()
    return errstate(divide="ignore", invalid="ignore")


def _count(shape, axes):
    n = 1
    for i, s in enumerate(shape):
        if axes is None or i in axes:
            n *= s
    return n


def _total(x, axes):
    """The sum over ``axes`` (None: all) keeping them as size 1; arrays or tensors."""
    axes = tuple(range(x.ndim)) if axes is None else axes
    return _sum_dim(x, axes, True, tuple(x.shape))


def _kept(out, in_shape, axes, keepdim):
    """A reduced value with the reduced dimensions back as size 1 (to broadcast)."""
    if keepdim or axes == ():
        return out
    from .shape import reshape_op

    return reshape_op(out, _keep_shape(in_shape, axes), tuple(out.shape))


# ----------------------------------------------------------------- prod


def _prod_fwd(a, axes, keepdim):
    out = a.prod(axis=axes, keepdims=keepdim)
    return out if a.dtype.kind == "f" or a.dtype.itemsize == 8 else out.astype("int64")


def _prod_vjp(node, g, saved):
    # d prod/dx_i = the product of the others, as PyTorch's prod_backward: result / x_i
    # without zeros; with zeros, the product of the others itself (so 0 * inf is nan where
    # PyTorch's is), except that a full prod with two or more zeros gives zeros in a
    # first-order backward (PyTorch's shortcut when grad mode is off)
    a, result = saved[:2]  # both saved, as PyTorch's ProdBackward0/1
    axes, keepdim = node.params
    shape = tuple(a.shape)
    if not shape:
        return (g,)  # a 0-d prod is the identity
    gk = _spread(_kept(g, shape, axes, keepdim), shape, axes)
    data = a._data if isinstance(a, Tensor) else a
    zeros = data == 0
    if not zeros.any():
        return (gk * (_spread(_kept(result, shape, axes, keepdim), shape, axes) / a),)
    if all(shape[d] == 1 for d in (range(len(shape)) if axes is None else axes)):
        # PyTorch's prod_safe_zeros_backward over one element: the gradient itself, not
        # reading x (under create_graph it requires grad only if g does: seed 9207047)
        return (gk,)
    if isinstance(a, Tensor):
        # create_graph: out / x_i is exact in value but not in its own derivative
        # (d2 prod/dxi dxj with xi = xj = 0 is the product of the rest, not 0)
        return (gk * _product_of_others(a, axes),)
    if axes is None and zeros.sum() > 1:
        return (namespace(data).zeros_like(data),)
    return (gk * _others_array(data, axes),)


def _others_array(a, axes):
    """The product of the others along the reduced dim of an array (all: flattened), from
    exclusive cumulative products from both ends, as PyTorch's prod_safe_zeros_backward."""
    xp = namespace(a)
    x = a.reshape(-1) if axes is None else xp.moveaxis(a, axes[0], -1)
    ones = xp.ones(x.shape[:-1] + (1,), dtype=a.dtype)
    before = xp.cumprod(xp.concatenate([ones, x[..., :-1]], axis=-1), axis=-1)
    after = xp.cumprod(xp.concatenate([ones, x[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    out = before * after
    return out.reshape(a.shape) if axes is None else xp.moveaxis(out, -1, axes[0])


def _product_of_others(a, axes):
    """``out[..., i, ...]`` = the product of ``a`` over the reduced dim without element i,
    as PyTorch's prod_safe_zeros_backward builds it under create_graph: exclusive cumprods
    from both ends, multiplied.  Its derivative is then cumprod's, whose masks drop the
    terms that hold a zero factor, as PyTorch's do: a nan weight on a slot whose value
    cannot move does not reach the others (fuzz seed 13307880; the exact product of copies
    used before gave nan * 0 = nan there)."""
    from . import registry  # (scans imports inplace, which imports this module: no cycle)
    from .layout import flip, narrow
    from .shape import cat, reshape_op

    cumprod = registry.entry("cumprod").fn

    shape = tuple(a.shape)
    x = a if axes is not None else reshape_op(a, (a._data.size,), shape)
    d = 0 if axes is None else axes[0]
    xs = tuple(x.shape)
    n = xs[d]
    xp = namespace(a._data)
    ones = make_tensor(xp.ones(xs[:d] + (1,) + xs[d + 1:], dtype=a._data.dtype))
    left = cumprod(cat([ones, narrow(x, d, 0, n - 1)], d), d)
    right = flip(cumprod(cat([ones, flip(narrow(x, d, 1, n - 1), d)], d), d), d)
    out = left * right
    return out if axes is not None else reshape_op(out, shape, xs)


_prod_all = defop("prod", reduction(_prod_fwd), _prod_vjp, "ProdBackward0", 1, INPUTS | OUTPUT)
_prod_dim = defop("prod", reduction(_prod_fwd), _prod_vjp, "ProdBackward1", 1, INPUTS | OUTPUT)


def prod(x, dim=None, keepdim=False, *, dtype=None):
    """Product of all elements, or along ``dim`` (integers give int64).

    Examples
    --------
    >>> import retrograd as T
    >>> T.tensor([[1.0, 2.0], [3.0, 4.0]]).prod(1)
    tensor([ 2., 12.])
    """
    source = x
    if dtype is not None:
        x = x.to(dtype=dtype)  # (a keyword: a string is refused, not a device)
    asked = x._data.dtype if dtype is not None else None
    if dim is None:
        result = _prod_all(x, None, False)
    elif not isinstance(dim, int):
        raise TypeError(f"prod(): dim must be an int, got {type(dim).__name__}")
    else:
        result = _prod_dim(x, _dims(dim, x.ndim), keepdim)
    take_source(result, x, source)  # (no ToCopyBackward0 below ProdBackward, as PyTorch)
    # (dtype=: the node saves the cast copy; PyTorch's saves the caller's tensor, so an
    # in-place change of it before backward raises: check_also keeps it for that check)
    if x is not source:
        check_also(result, source)
    if asked is not None and result._data.dtype != asked:  # dtype=int32 or bool is the result's
        result = result.to(dtype=dtype)
    if asked is not None:
        check_grad_dtype(source, result, "prod")
    return result


# ----------------------------------------------------------------- var / std


# below these lengths PyTorch's CPU sum adds the elements one by one (above, its vectorised
# cascade): its mean, which var/std of everything subtract, then rounds as a sequential sum
_SEQUENTIAL_SUM = {4: 16, 8: 8}  # itemsize: length


def _dtype_mean(data, axes):
    """PyTorch's ``mean(dim, keepdim=True)`` of an array in its dtype: the sum one element
    after another below ``_SEQUENTIAL_SUM`` (as PyTorch's, where NumPy's pairwise sum of 8+
    elements rounds otherwise), divided by the count."""
    xp = namespace(data)
    n = _count(data.shape, axes)
    if data.dtype.kind != "f" or not 0 < n < _SEQUENTIAL_SUM.get(data.dtype.itemsize, 0):
        return data.mean(axis=axes, keepdims=True)
    ax = tuple(range(data.ndim)) if axes is None else tuple(sorted(axes))
    rest = data.ndim - len(ax)
    moved = xp.moveaxis(data, ax, tuple(range(rest, data.ndim)))
    total = xp.cumsum(moved.reshape(moved.shape[:rest] + (n,)), axis=-1)[..., -1]
    return (total / data.dtype.type(n)).reshape(_keep_shape(data.shape, axes))


def _var_fwd(a, axes, correction, keepdim, root):
    xp = namespace(a)
    n = _count(a.shape, axes)
    dof = max(n - correction, 0)
    floating = a.dtype.kind == "f" and a.size
    # As PyTorch's CPU kernels, so that a spread of 0 (equal values) is 0 exactly where
    # PyTorch's is (its derivative is masked there; 1 / a 1-ulp spread is huge): over
    # everything, minus its mean in the dtype (summed in order for small tensors, _dtype_mean);
    # over some dims, Welford's algorithm, exactly 0 for a slice of equal values
    whole = floating and n == a.size
    centred = a - (_dtype_mean(a, axes) if whole else a.mean(axis=axes, keepdims=True))
    with quiet(xp):
        out = (centred * centred).sum(axis=axes, keepdims=keepdim) / dof
        if floating and not whole and n and dof:
            top = a.max(axis=axes, keepdims=keepdim)
            equal = (top == a.min(axis=axes, keepdims=keepdim)) & xp.isfinite(top)
            out = xp.where(equal, out.dtype.type(0), out)
    return xp.sqrt(out) if root else out


def _var_vjp(node, g, saved):
    a = saved[0]  # std also saved its result (PyTorch's StdBackward0 reads it)
    axes, correction, keepdim, root = node.params
    shape = tuple(a.shape)
    n = _count(shape, axes)
    # x - mean, the mean as PyTorch's var_backward takes it (in the dtype, summed in order:
    # its value decides the sign of a 1-ulp spread); under create_graph the differentiable
    # mean with that value (m - m.detach() is exactly 0)
    if isinstance(a, Tensor):
        mean = _spread(_total(a, axes), shape, axes) / n
        exact = _dtype_mean(a._data, axes)
        if namespace(exact).isfinite(exact).all():
            centred = a - (mean - mean.detach() + make_tensor(exact))
        else:  # (an infinite mean: m - m.detach() is nan, PyTorch's x - mean is -inf)
            centred = a - mean
    else:
        centred = a - _dtype_mean(a, axes)
    gk = _spread(_kept(g, shape, axes, keepdim), shape, axes)
    dof = n - correction
    whole = dof <= 0 and (a.ndim == 0 or axes is None)
    if not root:
        if whole:
            return (_times_no_dof_factor(gk, a, keepdim),)
        # over some dims: (2 / dof) * grad * (x - mean), 2 / 0 being inf (nan at x == mean)
        return (gk * centred * (2.0 / dof if dof else float("inf")),)
    # PyTorch's std_backward: (grad / (2 std)).masked_fill_(std == 0, 0) taken as var's
    # gradient, (2 / dof) * that * (x - mean).  Under create_graph the masked division gives
    # std itself the gradient 0 * g / 0 = nan where std is 0, as PyTorch's (a retained
    # .grad or hook of std sees it; std's own derivative masks it again; seed 11042127)
    out = _kept(saved[1], shape, axes, keepdim)
    with quiet(namespace(out._data if isinstance(out, Tensor) else out)):
        var_g = where(out == 0, 0.0, _kept(g, shape, axes, keepdim) / (out * 2))
    if whole:  # (then var_backward's constant factor, as above)
        return (_times_no_dof_factor(_spread(var_g, shape, axes), a, keepdim),)
    return (_spread(var_g * (2.0 / dof if dof else float("inf")), shape, axes) * centred,)


def _times_no_dof_factor(gk, a, keepdim):
    """PyTorch's var_backward over everything without degrees of freedom (n <= correction):
    grad * where(x == mean, nan, inf), a constant factor (under create_graph the gradient
    requires grad only if grad does).  That where of two Python numbers is of the default
    dtype and of x's shape, and grad is 0-d unless keepdim, so for x of another dtype with
    a dimension the product is computed in the default dtype (a float64 grad of 1e-50 is 0
    there: 0 * inf = nan) and its engine casts it back (ToCopyBackward0 under create_graph)."""
    from .. import dtypes

    data = a._data if isinstance(a, Tensor) else a
    xp = namespace(data)
    wide = dtypes.get_default_dtype().numpy
    narrowed = data.ndim > 0 and not keepdim and wide != data.dtype
    factor = xp.where(data == data.mean(), xp.nan, xp.inf).astype(
        wide if narrowed else data.dtype)
    if not isinstance(gk, Tensor):
        if not narrowed:
            return gk * factor
        with quiet(xp):
            return (gk.astype(wide) * factor).astype(data.dtype)
    if not narrowed:
        return gk * make_tensor(factor)
    from .pointwise import to_dtype

    return to_dtype(to_dtype(gk, wide) * make_tensor(factor), data.dtype)


_var_op = defop("var", reduction(_var_fwd), _var_vjp, "VarBackward0", 1, INPUTS)
_std_op = defop("std", reduction(_var_fwd), _var_vjp, "StdBackward0", 1, INPUTS | OUTPUT)


def _var(a, axes, correction, keepdim, root):
    if _count(tuple(a.shape), axes) - correction <= 0 and isinstance(a, Tensor):
        import warnings

        warnings.warn(
            f"{'std' if root else 'var'}(): degrees of freedom is <= 0. Correction should be "
            "strictly less than the reduction factor (input numel divided by output numel).",
            UserWarning, stacklevel=3,
        )
    return (_std_op if root else _var_op)(a, axes, correction, keepdim, root)


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def _float_only(x, message):
    if x._data.dtype.kind != "f":
        raise RuntimeError(message)


def var(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance over ``dim`` (all elements by default), dividing by ``N - correction``.

    Examples
    --------
    >>> import retrograd as T
    >>> x = T.tensor([1.0, 2.0, 3.0, 4.0])
    >>> x.var(), x.var(correction=0)
    (tensor(1.6667), tensor(1.2500))
    """
    _float_only(x, "std and var only support floating point and complex dtypes (convert "
                   "first, e.g. x.float().var())")
    if isinstance(dim, bool):  # var(x, False): the legacy unbiased argument
        dim, unbiased = None, dim
    axes = _dims(dim, x.ndim)
    return _var(x, axes, _correction(unbiased, correction), keepdim, False)


def std(x, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation over ``dim`` (all elements by default)."""
    _float_only(x, "std and var only support floating point and complex dtypes (convert "
                   "first, e.g. x.float().std())")
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    axes = _dims(dim, x.ndim)
    return _var(x, axes, _correction(unbiased, correction), keepdim, True)


# ----------------------------------------------------------------- norm


@quiet_fp
def _norm_fwd(a, p, axes, keepdim):
    xp = namespace(a)
    reduced = a.size if axes is None else math.prod(a.shape[d] for d in axes)
    if reduced == 1 and p != 0 and a.dtype.kind == "f":
        # one element per norm: PyTorch's kernel gives |x| itself, where the formula's
        # x ** p overflows (the norm of [-1.8e308] is 1.8e308, not inf: seed 12533611)
        m = xp.abs(a)
        return m.sum(axis=axes, keepdims=keepdim)
    if p == 2:
        if axes is None and not keepdim and a.dtype.kind == "f":
            flat = a.reshape(-1)
            return xp.sqrt(xp.asarray(flat @ flat))  # (one BLAS pass, as np.linalg.norm)
        return xp.sqrt((a * a).sum(axis=axes, keepdims=keepdim))
    m = xp.abs(a)
    if p == 1:
        return m.sum(axis=axes, keepdims=keepdim)
    return (m ** p).sum(axis=axes, keepdims=keepdim) ** (1.0 / p)


def _norm_vjp(node, g, saved):
    a, out = saved[:2]  # (then the caller's tensor, if dtype= cast it: check_also)
    p, axes, keepdim = node.params
    return (_pnorm_grad(g, a, p, out, axes, keepdim),)


def _pnorm_grad(g, a, p, out, axes, keepdim):
    """``g * d norm_p(a) / d a`` over ``axes`` (arrays or tensors): PyTorch's norm_backward,
    branch by branch: p = 1: sign(x); p = 2: x / norm, 0 for a zero norm; p < 1 (negative
    too): sign(x) |x|^(p-1) norm^(1-p), 0 where x = 0; 1 < p < 2: sign(x) |x|^(p-1) /
    norm^(p-1); p >= 2: x |x|^(p-2) / norm^(p-1), both 0 for a zero norm; +-inf: the
    largest (smallest) magnitudes share the gradient, with x's sign; p = 0: none."""
    shape = tuple(a.shape)
    if not isinstance(a, Tensor) and p != 0 and abs(p) != float("inf"):
        return _pnorm_grad_array(g, a, p, out, axes, keepdim)
    gk = _spread(_kept(g, shape, axes, keepdim), shape, axes)
    if p == 0:
        return a * 0
    if p == 1:
        return gk * sign(a)
    if p == float("inf") or p == -float("inf"):
        return _share_among_extremes(g, _abs(a), out, axes, keepdim, True) * sign(a)
    ok = _spread(_kept(out, shape, axes, keepdim), shape, axes)
    if p == 2:
        # PyTorch's grad * (x / norm).masked_fill_(norm == 0, 0): the masked quotient's own
        # derivative is 0 / 0 there, so a second derivative at a zero norm is nan, as PyTorch's
        with quiet(namespace(a._data)):  # (0 / 0 where masked)
            return gk * where(ok == 0, 0.0, a / ok)
    if p < 1:
        scaled = sign(a) * where(a == 0, 0.0, _abs(a) ** (p - 1))
        return scaled * gk * ok ** (1 - p)
    # PyTorch's (grad / norm.pow(p - 1)).masked_fill_(norm == 0, 0) on the reduced shape,
    # broadcast by the product: the masked quotient's own derivative is 0 * inf there, so a
    # second derivative at a zero norm is nan, as PyTorch's, also when the slice is empty
    # (seeds 12508461, 12526828), not the 0 of a guarded division
    ok = _kept(out, shape, axes, keepdim)
    with quiet(namespace(a._data)):
        scale = where(ok == 0, 0.0, _kept(g, shape, axes, keepdim) / ok ** (p - 1))
    if p < 2:
        return sign(a) * _abs(a) ** (p - 1) * scale
    return a * _abs(a) ** (p - 2) * scale


def _pnorm_grad_array(g, a, p, out, axes, keepdim):
    """``_pnorm_grad`` in a first-order backward: the same branches, with the per-slice
    factors computed on the reduced (small) arrays and broadcast once."""
    xp = namespace(a)
    shape = tuple(a.shape)
    keep = _keep_shape(shape, axes)
    gk = g.reshape(keep)
    nk = out.reshape(keep)
    with xp.errstate(all="ignore"):
        if p == 1:
            return gk * xp.sign(a)
        if p == 2:
            # PyTorch's grad * (x / norm).masked_fill_(norm == 0, 0): a nan or inf grad
            # still makes nan at a zero norm (gk * 0; x is 0 there), seed 12564607
            return a * xp.where(nk == 0, gk * 0, gk / xp.where(nk == 0, 1, nk))
        if p < 1:
            scaled = xp.where(a == 0, 0, xp.sign(a) * xp.abs(a) ** (p - 1))
            return scaled * (gk * nk ** (1 - p))
        scale = xp.where(nk == 0, 0, gk / xp.where(nk == 0, 1, nk) ** (p - 1))
        if p < 2:
            return xp.sign(a) * xp.abs(a) ** (p - 1) * scale
        return a * xp.abs(a) ** (p - 2) * scale


def _vector_norm(a, p, axes, keepdim):
    """The p-norm over ``axes`` of an array (computed) or a tensor (recorded)."""
    if p == float("inf") or p == -float("inf"):
        return _norm_inf(a, axes, keepdim, "max" if p > 0 else "min")
    if p == 0:
        return _norm0(a, axes, keepdim)
    return _norm(a, p, axes, keepdim)


_norm = defop("norm", reduction(_norm_fwd), _norm_vjp, "LinalgVectorNormBackward0", 1,
              INPUTS | OUTPUT, "float")


def norm(x, p="fro", dim=None, keepdim=False, dtype=None):
    """The vector p-norm over ``dim`` (all elements by default): ``p`` > 0 (``"fro"`` is 2),
    0 (the number of nonzero elements) or +-inf (the largest / smallest magnitude).

    Examples
    --------
    >>> import retrograd as T
    >>> T.tensor([3.0, 4.0]).norm(), T.tensor([3.0, -4.0]).norm(p=1)
    (tensor(5.), tensor(7.))
    """
    given = x
    x = norm_input("linalg.matrix_norm" if p == "nuc" else "linalg.vector_norm", x, dtype)
    if p == "fro" or p is None:
        p = 2
    if p == "nuc":
        return _nuclear(x, dim, keepdim)  # (PyTorch's SVD keeps the ToCopyBackward0)
    if isinstance(p, str):
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported (use 'fro', 'nuc' or "
                           "a number)")
    axes = _dims(dim, x.ndim)
    if p == float("inf") or p == -float("inf"):
        out = _norm_inf(x, axes, keepdim, "max" if p > 0 else "min")
    elif p == 0:
        out = _norm0(x, axes, keepdim)
    else:
        out = _norm(x, p, axes, keepdim)  # (p < 0 too: 0 when an element is 0, as PyTorch)
    take_source(out, x, given)  # (no ToCopyBackward0 below the norm's node, as PyTorch)
    # (dtype=: the node saved the cast copy; PyTorch's saves the caller's tensor, as prod's;
    # its 0-norm node saves it too, though its derivative is 0)
    return check_also(out, given) if x is not given or p == 0 else out


def _nuclear(x, dim, keepdim):
    """The nuclear norm (sum of singular values) over two dims, as PyTorch: the matrix dims
    permuted last, singular values, summed (SumBackward1 of LinalgSvdBackward0)."""
    from .reduce import sum as _sum
    from .shape import permute_op, reshape

    if dim is None:
        if x.ndim != 2:
            raise RuntimeError(f"norm(p='nuc'): expected a 2-D input without dim (got "
                               f"{x.ndim}-D); pass the two matrix dims as dim=(d0, d1)")
        dim = (0, 1)
    axes = [d % max(x.ndim, 1) for d in dim]
    if len(axes) != 2 or axes[0] == axes[1] or x.ndim < 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple of different dims "
                           f"(got {dim})")
    perm = tuple(i for i in range(x.ndim) if i not in axes) + tuple(axes)
    from .linalg_decomp import svdvals  # (the SVD's node: derivatives of every order)

    moved = permute_op(x, perm)
    out = _sum(svdvals(moved), -1)
    if keepdim:
        out = reshape(out, tuple(1 if i in axes else s for i, s in enumerate(x.shape)))
    return out


def _norm_inf_fwd(a, axes, keepdim, which):
    m = namespace(a).abs(a)
    return m.max(axis=axes, keepdims=keepdim) if which == "max" else m.min(
        axis=axes, keepdims=keepdim)


def _share_among_extremes(g, values, out, axes, keepdim, nans=False):
    """``g`` spread evenly over the elements of ``values`` equal to the reduced ``out``
    (the derivative of a max or min at ties, as PyTorch's amax/amin and inf-norms).
    ``nans``: a nan element counts as one of them (PyTorch's inf-norm backward: "argmax if
    self.abs() == norm or it's NaN", then times sgn(nan) = 0, so a slice holding a nan sends
    0 everywhere; amax's mask result == self leaves a nan slice with 0 / 0 = nan)."""
    shape = tuple(values.shape)
    hit = values == _spread(_kept(out, shape, axes, keepdim), shape, axes)
    if nans:
        hit = hit | (values != values)
    ties = _spread(_total(hit * 1, axes), shape, axes)
    return _spread(_kept(g, shape, axes, keepdim), shape, axes) * hit / ties


def _norm_inf_vjp(node, g, saved):
    # the largest (smallest) magnitudes share the gradient, with x's sign (PyTorch)
    a, out = saved[:2]
    axes, keepdim, _ = node.params
    return (_share_among_extremes(g, _abs(a), out, axes, keepdim, True) * sign(a),)


_norm_inf = defop("norm", reduction(_norm_inf_fwd), _norm_inf_vjp, "LinalgVectorNormBackward0", 1,
                  INPUTS | OUTPUT)


def _norm0_fwd(a, axes, keepdim):
    return (a != 0).sum(axis=axes, keepdims=keepdim).astype(a.dtype)


def _norm0_vjp(node, g, saved):
    # the "0-norm" counts the nonzero elements: PyTorch defines no gradient (the input's
    # .grad stays None)
    return (None,)


_norm0 = defop("norm", reduction(_norm0_fwd), _norm0_vjp, "LinalgVectorNormBackward0", 1, NOTHING)


# ----------------------------------------------------------------- logsumexp


def _logsumexp_fwd(a, axes, keepdim):
    xp = namespace(a)
    if a.size == 0:
        return xp.log(xp.exp(a).sum(axis=axes, keepdims=keepdim))
    m = a.max(axis=axes, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)  # all -inf (or inf): no shift
    out = xp.log(xp.exp(a - m).sum(axis=axes, keepdims=True)) + m
    return out if keepdim else out.reshape(tuple(s for i, s in enumerate(a.shape)
                                                 if i not in axes))


def _logsumexp_vjp(node, g, saved):
    a, out = saved[:2]
    axes, keepdim = node.params
    shape = tuple(a.shape)
    gk = _spread(_kept(g, shape, axes, keepdim), shape, axes)
    return (gk * exp(a - _spread(_kept(out, shape, axes, keepdim), shape, axes)),)


_logsumexp = defop("logsumexp", reduction(_logsumexp_fwd), _logsumexp_vjp, "LogsumexpBackward0", 1,
                   INPUTS | OUTPUT, "float")


def logsumexp(x, dim, keepdim=False):
    """``log(sum(exp(x), dim))``, computed stably.

    Examples
    --------
    >>> import retrograd as T
    >>> T.tensor([[0.0, 0.0]]).logsumexp(1)
    tensor([0.6931])
    """
    axes = _dims(dim, x.ndim)
    if axes is None:  # dim=(): PyTorch refuses too (its error is about shapes)
        raise RuntimeError("logsumexp(): dim=() names no dimension to reduce; pass the dims, "
                           "e.g. tuple(range(x.ndim)) for all of them")
    return _logsumexp(x, axes, keepdim)


# ----------------------------------------------------------------- amax / amin


def _amax_fwd(a, axes, keepdim, which):
    return a.max(axis=axes, keepdims=keepdim) if which == "max" else a.min(
        axis=axes, keepdims=keepdim)


def _amax_vjp(node, g, saved):
    # ties share the gradient evenly, as PyTorch's amax/amin
    a, out = saved[:2]
    axes, keepdim, _ = node.params
    return (_share_among_extremes(g, a, out, axes, keepdim),)


_amax = defop("amax", reduction(_amax_fwd), _amax_vjp, "AmaxBackward0", 1, INPUTS | OUTPUT)
_amin = defop("amin", reduction(_amax_fwd), _amax_vjp, "AminBackward0", 1, INPUTS | OUTPUT)


def _check_nonempty(x, axes, name):
    # NumPy's max of an empty array has no identity: PyTorch's errors instead
    if x._data.size == 0:
        if axes is None:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the 'dim' "
                               "argument.")
        for d in axes:
            if x.shape[d] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size "
                                 f"(input shape {list(x.shape)}).")


def amax(x, dim=(), keepdim=False):
    """Largest values over ``dim`` (all dimensions by default); ties share the gradient."""
    axes = _dims(dim, x.ndim) if dim != () else None
    _check_nonempty(x, axes, "amax")
    return _amax(x, axes, keepdim, "max")


def amin(x, dim=(), keepdim=False):
    """Smallest values over ``dim`` (all dimensions by default); ties share the gradient."""
    axes = _dims(dim, x.ndim) if dim != () else None
    _check_nonempty(x, axes, "amin")
    return _amin(x, axes, keepdim, "min")


# ----------------------------------------------------------------- cumsum


def _cumsum_fwd(a, dim):
    if not a.flags.c_contiguous:  # PyTorch's scans write a row-major result, whatever the
        a = namespace(a).ascontiguousarray(a)  # input's layout (NumPy follows it)
    out = namespace(a).cumsum(a, axis=dim)
    if a.ndim == 0:
        out = out.reshape(())  # NumPy's cumsum of a 0-d array is 1-d
    return out if a.dtype.kind == "f" else out.astype("int64")  # ints and bools: int64


def _cumsum_vjp(node, g, saved):
    # the reversed cumulative sum sum_{j >= i} g_j, as PyTorch: flip, cumsum, flip (not
    # total - cumsum(g) + g, which is nan everywhere once one g_j is inf or nan)
    from .layout import flip

    dim = node.params[0]
    if g.ndim == 0:
        return (g,)  # a 0-d cumsum is the identity
    if not isinstance(g, Tensor):  # first order: the reversed cumsum itself, in one pass
        xp = namespace(g)
        return (xp.flip(xp.cumsum(xp.flip(g, dim), dim), dim),)
    return (flip(cumsum(flip(g, (dim,)), dim), (dim,)),)


_cumsum = defop("cumsum", _cumsum_fwd, _cumsum_vjp, "CumsumBackward0", 1, NOTHING)


def cumsum(x, dim, *, dtype=None):
    """Cumulative sums along ``dim``.

    Examples
    --------
    >>> import retrograd as T
    >>> T.tensor([1.0, 2.0, 3.0]).cumsum(0)
    tensor([1., 3., 6.])
    """
    source = x
    if dtype is not None:
        x = x.to(dtype=dtype)  # (a keyword: a string is refused, not a device)
        if x._data.dtype.kind == "b" and x.ndim and x._data.size:  # (0-d, empty: no kernel)
            _one_dim(dim, x.ndim, "cumsum")  # (the dim check first, as PyTorch's)
            raise NotImplementedError(
                "\"cumsum_out_cpu\" not implemented for 'Bool' (cumsum(dtype=bool); PyTorch has "
                "no bool running sum: use dtype=retrograd.int64, then compare with 0)")
    if not hasattr(x, "_data"):
        return _cumsum_fwd(x, dim % max(x.ndim, 1))
    out = _cumsum(x, (_one_dim(dim, x.ndim, "cumsum") or (0,))[0])  # (0-d: dim 0 or -1)
    take_source(out, x, source)  # (no ToCopyBackward0 below CumsumBackward0, as PyTorch)
    if dtype is not None:
        if out._data.dtype != x._data.dtype:  # (dtype=int8: the sums wrap, as PyTorch's)
            out = out.to(dtype=x.dtype)
        check_grad_dtype(source, out, "cumsum")
    return out


__all__ = ["prod", "var", "std", "norm", "logsumexp", "amax", "amin", "cumsum"]


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

# PyTorch's keyword names (and out=) where one signature covers its overloads; norm keeps its
# own (PyTorch's takes `out` positionally)
_SIGNATURES = {"prod": "input, dim=None, keepdim=False, *, dtype=None",
               "logsumexp": "input, dim, keepdim=False",
               "amax": "input, dim=(), keepdim=False", "amin": "input, dim=(), keepdim=False",
               "cumsum": "input, dim, *, dtype=None",
               # (PyTorch's fifth positional parameter is out; dtype is keyword-only here)
               "norm": "input, p='fro', dim=None, keepdim=False, *, dtype=None",
               # both of PyTorch's overloads: var(input, dim, unbiased, keepdim) and
               # var(input, dim, *, correction, keepdim)
               "var": "input, dim=None, unbiased=None, keepdim=False, *, correction=None",
               "std": "input, dim=None, unbiased=None, keepdim=False, *, correction=None"}
for _name in __all__:
    register(globals()[_name], _name, special=("logsumexp",) if _name == "logsumexp" else (),
             signature=_SIGNATURES.get(_name))
