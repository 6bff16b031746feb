"""Statistics: var_mean, std_mean, aminmax, nansum, nanmean, dist, renorm, cov, corrcoef
and gradient.

``var_mean`` / ``std_mean`` / ``aminmax`` return two tensors from one node, as PyTorch's
VarMeanBackward0 / StdMeanBackward0 / AminmaxBackward0.  ``nanmean``, ``cov``,
``corrcoef`` and ``gradient`` are PyTorch's own compositions of simpler ops (so their
graphs are PyTorch's).  The derivatives follow PyTorch's formulas, conventions next to
each op.
"""

from __future__ import annotations

import warnings
from collections import namedtuple

from ..autograd.forward_state import fw
from ..autograd.grad_mode import state
from ..backend import namespace
from ..dtypes import refuse_name, result_type
from ..tensor import Tensor, make_tensor
from ._apply import INPUTS, OUTPUT, defop, multi_output_class, record_multi_inputs
from ._errors import scalar_type_name
from .dtype_rules import check_grad_dtype
from .iter_layout import reduction
from .saved_checks import check_also
from .cast_inside import take_source
from .pointwise import _div_vjp, in_result_dtype, where
from .reduce import _dims, _keep_shape, _spread, _sum_dim
from .stats import (
    _correction, _count, _float_only, _kept, _pnorm_grad, _share_among_extremes,
    _times_no_dof_factor, _var_vjp, _vector_norm, quiet,
)

aminmax_type = namedtuple("aminmax", ["min", "max"])


# ----------------------------------------------------------------- one node, two outputs


def _two_output_node(name, vjp, **attrs):
    return multi_output_class(name, vjp, INPUTS, **attrs)


def _record_two(node_cls, x, arrays, params, keep=()):
    """Tensors for ``arrays``, both outputs of one ``node_cls`` node that saves ``x`` and the
    outputs numbered in ``keep`` (as PyTorch's node: an in-place change of one of them
    breaks backward; the derivative itself reads only ``x``)."""
    outs = [make_tensor(a) for a in arrays]
    if x._requires_grad and state.enabled and arrays[0].dtype.kind == "f":
        record_multi_inputs(node_cls, (x,), outs, params, saved=(x,), keep=keep)
    if fw.active:  # forward AD: the tangents (ops/_jvp.py)
        fw.propagate_multi(node_cls, x, outs, params, (x,) + tuple(outs[i] for i in keep))
    return tuple(outs)


# ----------------------------------------------------------------- var_mean / std_mean


def _var_mean_vjp(node, grads, saved):
    # PyTorch's var_mean_backward / std_mean_backward: the var (std) derivative plus the
    # mean's, g_mean / n spread over the reduced elements; std's is 0 where std is 0
    a = saved[0]  # (then std_mean's std, saved for its version check as PyTorch's result0)
    g_var, g_mean = grads
    axes, correction, keepdim, root = node.params
    shape = tuple(a.shape)
    n = _count(shape, axes)
    if not isinstance(a, Tensor):
        stats = getattr(node, "stats", None)  # (a node the forward-AD fallback built: none)
        # (an output that got no gradient: None, not materialized, see _VarMean; as
        # PyTorch's undefined gradient it contributes nothing, not 0 * inf: seed 11101700)
        return (_var_mean_grad_array(a, g_var, g_mean, axes, correction, root, n, stats,
                                     keepdim),)
    # as PyTorch's var_mean_backward, only the outputs that got a gradient contribute: the
    # mean's alone does not depend on the input (so under create_graph it needs no grad)
    mean_part = None if g_mean is None else \
        _spread(_kept(g_mean, shape, axes, keepdim), shape, axes) / n
    if g_var is None:
        return (mean_part,)
    with quiet(namespace(a._data)):
        part = _var_vjp(node, g_var, saved)[0]
    return (part if mean_part is None else part + mean_part,)


def _var_mean_grad_array(a, g_var, g_mean, axes, correction, root, n, stats=None,
                         keepdim=False):
    """The same derivative in a first-order backward, per-slice factors on the reduced
    arrays; an output that got no gradient (zeros) costs nothing unless its factor is not
    finite (PyTorch's 0 * inf is nan).  ``stats``: the forward's (mean, spread) with the
    reduced dimensions kept, so neither is computed again."""
    xp = namespace(a)
    keep = _keep_shape(tuple(a.shape), axes)
    dof = n - correction
    out = None
    with xp.errstate(all="ignore"):
        if g_var is not None and (g_var.any() or not g_var.size or dof <= 0
                                  or not xp.isfinite(a).all()):
            mean, std = stats if stats is not None else (a.mean(axis=axes, keepdims=True), None)
            gk = g_var.reshape(keep)
            if root:  # std_backward: (grad / (2 std)) masked where std is 0, then var's
                if std is None:
                    std = xp.sqrt(((a - mean) ** 2).sum(axis=axes, keepdims=True) / max(dof, 0))
                gk = xp.where(std == 0, 0, gk / (std * 2))
            if dof <= 0 and (a.ndim == 0 or axes is None):
                # (var_backward's constant factor)
                out = _times_no_dof_factor(gk, a, keepdim)
            else:
                centred = a - mean  # (a new array: scaled in place below)
                centred *= (gk * (2.0 / dof if dof else float("inf"))).astype(a.dtype)
                out = centred
        if g_mean is not None and g_mean.any():
            part = (g_mean.reshape(keep) / n).astype(a.dtype)
            if out is None:
                out = xp.broadcast_to(part, a.shape)
            else:
                out = out + part
    return xp.zeros_like(a) if out is None else xp.ascontiguousarray(out, dtype=a.dtype)


# the nodes keep the forward's per-slice mean and spread (small) for a first-order backward
# (_materialize False: an output that got no gradient reaches the derivative as None)
_VarMean = type("VarMeanBackward0", (_two_output_node("VarMeanBackward0", _var_mean_vjp,
                                                      _materialize=False),),
                {"__slots__": ("stats",)})
_StdMean = type("StdMeanBackward0", (_two_output_node("StdMeanBackward0", _var_mean_vjp,
                                                      _materialize=False),),
                {"__slots__": ("stats",)})


def _var_mean(x, dim, unbiased, keepdim, correction, root):
    name = "std_mean" if root else "var_mean"
    _float_only(x, f"{name}(): std and var only support floating point and complex dtypes "
                   f"(convert first, e.g. x.float())")
    if isinstance(dim, bool):  # var_mean(x, False): the legacy unbiased argument
        dim, unbiased = None, dim
    axes = _dims(dim, x.ndim)
    corr = _correction(unbiased, correction)
    data = x._data
    xp = namespace(data)
    if _count(data.shape, axes) - corr <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly "
                      "less than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=3)
    # one pass for the mean, shared by both outputs (as var's forward, computed once)
    n = _count(data.shape, axes)
    with quiet(xp):
        mean = data.mean(axis=axes, keepdims=True)
        centred = data - mean
        centred *= centred
        spread = centred.sum(axis=axes, keepdims=True) / max(n - corr, 0)
        if root:
            spread = xp.sqrt(spread)
    del centred
    out_shape = mean.shape if keepdim else _reduced_shape(data.shape, axes)
    outs = _record_two(_StdMean if root else _VarMean, x,
                       [xp.asarray(spread, dtype=data.dtype).reshape(out_shape),
                        xp.asarray(mean, dtype=data.dtype).reshape(out_shape)],
                       (axes, corr, keepdim, root), keep=(0,) if root else ())
    node = outs[0]._grad_fn
    if isinstance(node, (_VarMean, _StdMean)):
        # copies: the outputs share these arrays' memory, and an in-place change of an
        # output must not change the derivative (PyTorch's var_mean does not save them)
        node.stats = (mean.copy(), spread.copy())
    return outs


def _reduced_shape(shape, axes):
    return () if axes is None else tuple(s for i, s in enumerate(shape) if i not in axes)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):  # noqa: A002
    """``(var, mean)`` over ``dim`` (all elements by default) from one pass, as PyTorch.

    Examples
    --------
    >>> import retrograd as T
    >>> T.var_mean(T.tensor([1.0, 2.0, 3.0, 4.0]))
    (tensor(1.6667), tensor(2.5000))
    """
    return _var_mean(input, dim, unbiased, keepdim, correction, False)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):  # noqa: A002
    """``(std, mean)`` over ``dim`` (all elements by default)."""
    return _var_mean(input, dim, unbiased, keepdim, correction, True)


# ----------------------------------------------------------------- aminmax


def _aminmax_vjp(node, grads, saved):
    # each of min and max shares its gradient evenly among the elements equal to it, as
    # PyTorch's amin/amax (AminmaxBackward0 is their sum)
    a = saved[0]  # (then min and max, saved for their version check as PyTorch's node)
    g_min, g_max = grads
    axes, keepdim = node.params
    if not isinstance(a, Tensor):  # first order: an output without gradient costs nothing
        xp = namespace(a)
        out = xp.zeros_like(a)
        for gk, extreme in ((g_min, a.min), (g_max, a.max)):
            if gk.any():
                hit = a == extreme(axis=axes, keepdims=True)
                count = hit.sum(axis=axes, keepdims=True)
                k = gk if keepdim or axes is None else xp.expand_dims(gk, axes)
                out += hit * (k / count).astype(a.dtype)
        return (out,)
    xp = namespace(a._data if isinstance(a, Tensor) else a)
    data = a._data if isinstance(a, Tensor) else a
    lo = make_tensor(data.min(axis=axes, keepdims=keepdim)) if isinstance(a, Tensor) else \
        data.min(axis=axes, keepdims=keepdim)
    hi = make_tensor(data.max(axis=axes, keepdims=keepdim)) if isinstance(a, Tensor) else \
        data.max(axis=axes, keepdims=keepdim)
    with quiet(xp):
        return (_share_among_extremes(g_min, a, lo, axes, keepdim)
                + _share_among_extremes(g_max, a, hi, axes, keepdim),)


_Aminmax = _two_output_node("AminmaxBackward0", _aminmax_vjp)


def aminmax(input, *, dim=None, keepdim=False):  # noqa: A002
    """``(min, max)`` of all elements or along ``dim``; ties share each gradient.

    Examples
    --------
    >>> import retrograd as T
    >>> T.tensor([3.0, 1.0, 2.0]).aminmax()
    aminmax(min=tensor(1.), max=tensor(3.))
    """
    data = input._data
    xp = namespace(data)
    if dim is None:
        if data.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                               "the operation has no identity.")
        axes = None
        if keepdim:
            axes = tuple(range(data.ndim))
    else:
        from .shape import _norm_dim

        d = _norm_dim(dim, data.ndim)
        if data.ndim and data.shape[d] == 0:
            raise IndexError(f"aminmax(): Expected reduction dim {d} to have non-zero size.")
        axes = (d,) if data.ndim else None
    lo = xp.asarray(data.min(axis=axes, keepdims=keepdim and bool(data.ndim)))
    hi = xp.asarray(data.max(axis=axes, keepdims=keepdim and bool(data.ndim)))
    outs = _record_two(_Aminmax, input, [lo, hi], (axes, keepdim and bool(data.ndim)),
                       keep=(0, 1))
    return aminmax_type(*outs)


# ----------------------------------------------------------------- nansum / nanmean


def _nansum_fwd(a, axes, keepdim):
    out = namespace(a).nansum(a, axis=axes, keepdims=keepdim)
    if a.dtype.kind == "f":
        return out.astype(a.dtype)
    return out.astype("int64")  # integers and bools sum to int64, as sum


def _nansum_vjp(node, g, saved):
    # PyTorch's nansum_backward: the gradient where x is not nan, 0 at the nans
    a = saved[0]  # (then the caller's tensor, if dtype= cast it: check_also)
    axes, keepdim = node.params
    shape = tuple(a.shape)
    data = a._data if isinstance(a, Tensor) else a
    keep = ~namespace(data).isnan(data)
    gk = _spread(_kept(g, shape, axes, keepdim), shape, axes)
    return (gk * (make_tensor(keep) if isinstance(a, Tensor) else keep),)


_nansum = defop("nansum", reduction(_nansum_fwd), _nansum_vjp, "NansumBackward0", 1, INPUTS)


def nansum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    """Sum treating nans as zero (integers and bools give int64).

    Examples
    --------
    >>> import retrograd as T
    >>> T.tensor([1.0, float("nan"), 2.0]).nansum()
    tensor(3.)
    """
    source = input
    if dtype is not None:
        input = input.to(dtype=dtype)  # noqa: A001 - PyTorch's name
    axes = _dims(dim, input.ndim) if dim is not None else None
    if axes == ():
        axes = None
    out = take_source(_nansum(input, axes, keepdim and dim is not None), input, source)
    if input is not source:
        # (dtype=: the node saves the cast copy; PyTorch's saves the caller's tensor, so an
        # in-place change of it before backward raises: check_also keeps it for that check)
        out = check_also(out, source)
    if dtype is not None:
        if out._data.dtype != input._data.dtype:  # (int8, bool: the dtype asked, as sum's)
            out = out.to(dtype=input.dtype)
        check_grad_dtype(source, out, "nansum")
    return out


def nanmean(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A002
    """The mean of the elements that are not nan (PyTorch's nansum / count: DivBackward0).

    Examples
    --------
    >>> import retrograd as T
    >>> T.tensor([1.0, float("nan"), 2.0]).nanmean()
    tensor(1.5000)
    """
    refuse_name(dtype, "nanmean")  # (the argument parser's, first)
    given = input
    data = input._data
    if data.dtype.kind != "f":
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {scalar_type_name(data.dtype)} (convert first, e.g. "
                           "x.float())")
    if dtype is not None:  # (the input's dtype is checked first, as PyTorch's)
        input = input.to(dtype=dtype)  # noqa: A001 - PyTorch's name
        if input._data.dtype.kind != "f":
            raise RuntimeError("nanmean(): could not infer output dtype. Optional dtype must be "
                               "either a floating point or complex dtype. Got: "
                               f"{scalar_type_name(input._data.dtype)}")
        data = input._data
    xp = namespace(data)
    axes = _dims(dim, input.ndim) if dim is not None else None
    kd = keepdim and dim is not None
    count = (~xp.isnan(data)).sum(axis=axes, keepdims=kd)
    # (nansum of the caller's tensor with dtype=, as PyTorch's: its node saves that tensor)
    return nansum(given, dim, keepdim, dtype=dtype) / make_tensor(xp.asarray(count,
                                                                              dtype="int64"))


# ----------------------------------------------------------------- dist


def _dist_fwd(a, b, p):
    with quiet(namespace(a)):
        return _vector_norm(a - b, p, None, False)


def _dist_vjp(node, g, saved):
    # PyTorch's DistBackward0: norm_backward of a - b (the engine sums over broadcasting);
    # the other input gets its negative
    a, b, out = saved
    (p,) = node.params
    if p == 0:
        return (None, None)  # the "0-norm" counts: PyTorch leaves both .grad None
    a, b = in_result_dtype(a, b)  # (as the forward: a - b in PyTorch's dtype)
    d = _pnorm_grad(g, a - b, p, out, None, False)
    na, nb = node.next
    return (d if na else None, -d if nb else None)


_dist = defop("dist", _dist_fwd, _dist_vjp, "DistBackward0", 2, INPUTS | OUTPUT, "promote")


def dist(input, other, p=2):  # noqa: A002
    """The p-norm of ``input - other`` (broadcast).

    Examples
    --------
    >>> import retrograd as T
    >>> T.dist(T.tensor([0.0, 0.0]), T.tensor([3.0, 4.0]))
    tensor(5.)
    """
    # PyTorch's dist subtracts first (bool operands raise there, with sub's message), then
    # needs a floating difference: a float and an int tensor run, in the promoted dtype
    # (fuzz seeds 9970436...)
    if any(isinstance(t, Tensor) and t._data.dtype.kind == "b" for t in (input, other)):
        input - other  # raises sub's RuntimeError for bool operands
    want = result_type(input, other)
    if not want.is_floating_point:
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {scalar_type_name(want.numpy)} instead (dist of integer tensors: "
                           "convert one with .float())")
    if isinstance(p, Tensor):
        p = float(p._data)
    return _dist(input, other, float(p))


# ----------------------------------------------------------------- renorm


def _renorm_fwd(a, p, dim, maxnorm):
    others = tuple(i for i in range(a.ndim) if i != dim)
    xp = namespace(a)
    norm = _vector_norm(a, p, others, True)
    with quiet(xp):
        factor = xp.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return (a * factor).astype(a.dtype)


def _renorm_vjp(node, g, saved):
    # PyTorch's renorm_backward: where norm > maxnorm, out = x * maxnorm / (norm + 1e-7),
    # so d out = factor * g - factor / (norm + 1e-7) * norm_backward(sum(x * g)); else g
    (a,) = saved
    p, dim, maxnorm = node.params
    others = tuple(i for i in range(a.ndim) if i != dim)
    norm = _vector_norm(a, p, others, True)
    inner = _sum_dim(a * g, others, True, tuple(a.shape)) if others else a * g
    nb = _pnorm_grad(inner, a, p, norm, others, True)
    inv = 1.0 / (norm + 1e-7)
    factor = inv * maxnorm
    return (where(norm > maxnorm, factor * g - factor * inv * nb, g),)


_renorm = defop("renorm", _renorm_fwd, _renorm_vjp, "RenormBackward0", 1, INPUTS)


def renorm(input, p, dim, maxnorm):  # noqa: A002
    """Each slice along ``dim`` whose p-norm exceeds ``maxnorm`` scaled down to it.

    Examples
    --------
    >>> import retrograd as T
    >>> T.tensor([[3.0, 4.0], [0.3, 0.4]]).renorm(2, 0, 1.0)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    from .shape import _norm_dim

    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} "
                           "dimensions")
    if input._data.dtype.kind != "f":
        _norm_dim(dim, input.ndim)  # (a dim out of range: PyTorch's IndexError comes first)
        raise RuntimeError(f"renorm(): expected a floating point input, got "
                           f"{scalar_type_name(input._data.dtype)} (convert first)")
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported (p={p})")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    return _renorm(input, float(p), _norm_dim(dim, input.ndim), float(maxnorm))


# ----------------------------------------------------------------- cov / corrcoef


def cov(input, *, correction=1, fweights=None, aweights=None):  # noqa: A002
    """The covariance matrix of the variables in the rows of ``input`` (observations in the
    columns), with frequency and/or analytic weights, as PyTorch's composition.

    Examples
    --------
    >>> import retrograd as T
    >>> T.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]).cov()
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    from .linalg import matmul as mm
    from .reduce import sum as _sum
    from .shape import reshape, squeeze, t, unsqueeze

    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    if input._data.dtype.kind == "b":
        raise RuntimeError("cov(): bool input is not supported; convert first (x.float())")
    x = reshape(input, 1, -1) if input.ndim < 2 else input
    n = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights(fweights, n, "fweights", integral=True)
        w = fweights
    if aweights is not None:
        _check_weights(aweights, n, "aweights", integral=False)
        w = aweights if w is None else w * aweights
    xp = namespace(x._data)
    w_sum = _sum(w) if w is not None else make_tensor(xp.asarray(n, dtype="int64"))
    avg = _sum(x * w if w is not None else x, 1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm_factor = w_sum - correction * _sum(w * aweights) / w_sum
    else:
        norm_factor = w_sum - correction
    if bool(norm_factor._data <= 0):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm_factor = norm_factor * 0
    x = x - unsqueeze(avg, 1)
    c = mm(x, t(x * w)) if w is not None else _gram(x, t(x))
    with quiet(xp):
        return squeeze(c / norm_factor)


def _gram_fwd(a, b):
    return a @ b  # (b is a's transpose, the same buffer: NumPy runs one syrk)


def _gram_vjp(node, g, saved):
    # mm(x, x.t()) as PyTorch's graph (MmBackward0 -> SubBackward0 and TBackward0), but the
    # two matmul derivatives g @ x and (x.t() @ g).t() = g.t() @ x come as one product down
    # the first edge, none down the second: the same gradient for x, one matmul instead of
    # two (cov's fwd+bwd: 3 products -> 2)
    a = saved[0]
    return ((g + g.T) @ a, None)


_gram = defop("mm", _gram_fwd, _gram_vjp, "MmBackward0", 2, INPUTS)


def _check_weights(w, n, name, integral):
    if not isinstance(w, Tensor):
        raise TypeError(f"cov(): argument '{name}' must be Tensor, not {type(w).__name__}")
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w.ndim} dimensions")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {n}")
    data = w._data
    if integral and data.dtype.kind not in "iu":
        raise RuntimeError(f"cov(): expected {name} to have integral dtype but got "
                           f"{scalar_type_name(data.dtype)}")
    if not integral and data.dtype.kind != "f":
        raise RuntimeError(f"cov(): expected {name} to have floating point dtype but got "
                           f"{scalar_type_name(data.dtype)}")
    if data.size and data.min() < 0:
        raise RuntimeError(f"cov(): {name} cannot be negative")


def corrcoef(input):  # noqa: A002
    """Pearson correlation coefficients of the rows of ``input``, clipped to [-1, 1].

    Examples
    --------
    >>> import retrograd as T
    >>> T.tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]).corrcoef()
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    from .pointwise import clamp, sqrt
    from .layout import diagonal
    from .shape import reshape

    if input.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but "
                           f"got an input with {input.ndim} dimensions")
    c = cov(input)
    xp = namespace(c._data)
    with quiet(xp):
        if c.ndim == 0:
            return c / c
        std = sqrt(diagonal(c))
        c = c / reshape(std, -1, 1)
        c = _div_unit_diagonal(c, reshape(std, 1, -1))
    return clamp(c, -1, 1)


def _div_unit_diagonal_fwd(a, b):
    # corrcoef's second division, with its diagonal exactly 1 (the truth): PyTorch's
    # c_ii / s_i / s_i rounds twice and lands a few ulp either side of 1 depending on the
    # last bit of its BLAS's c_ii, so floor or frac of it jumps; r_ii / r_ii is 1 exactly,
    # and nan where PyTorch's is (a zero, inf or nan variance)
    r = a / b
    xp = namespace(r)
    i = xp.arange(r.shape[-1])
    d = r[i, i]
    r[i, i] = d / d
    return r


# div's record (PyTorch's graph: DivBackward0, the same derivative), its forward corrected
_div_unit_diagonal = defop("div", _div_unit_diagonal_fwd, _div_vjp, "DivBackward0", 2, INPUTS,
                           "float", saved_for=lambda needs: (needs[1], True))


# ----------------------------------------------------------------- gradient


def _gradient_args(x, spacing, dim, edge_order):
    from .shape import _norm_dim

    if dim is None:
        dims = list(range(x.ndim))
    elif isinstance(dim, int):
        dims = [dim]
    else:
        dims = list(dim)
    dims = [_norm_dim(d, x.ndim) for d in dims]
    if len(set(dims)) != len(dims):
        raise RuntimeError("torch.gradient: dim appears multiple times in the list of dims")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if isinstance(spacing, (list, tuple)):
        if len(spacing) != len(dims):
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or "
                               f"it's spacing and dim arguments to have the same length, but "
                               f"got a spacing argument of length {len(spacing)} and a dim "
                               f"argument of length {len(dims)}.")
        spacings = list(spacing)
    else:
        spacings = [spacing] * len(dims)
    for d in dims:
        if x.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               f"edge_order+1 (dimension {d} has size {x.shape[d]}, "
                               f"edge_order={edge_order})")
    for s, d in zip(spacings, dims):
        if isinstance(s, Tensor):
            if s.ndim != 1:
                raise RuntimeError("torch.gradient expected each tensor to be on the same "
                                   "device and 1-dimensional coordinates")
            if s.shape[0] != x.shape[d]:
                raise RuntimeError(f"torch.gradient expected each tensor in spacing to have "
                                   f"as many elements as the input along dim {d} "
                                   f"({s.shape[0]} != {x.shape[d]})")
    return dims, spacings


def gradient(input, *, spacing=1, dim=None, edge_order=1):  # noqa: A002
    """Estimates of the derivative along each of ``dim`` (all by default) by central
    differences inside and one-sided ones (of order ``edge_order``) at the ends; ``spacing``
    a number, one number per dim, or one coordinate tensor per dim.  A tuple, one tensor per
    dim, built as PyTorch builds it.

    Examples
    --------
    >>> import retrograd as T
    >>> T.gradient(T.tensor([1.0, 4.0, 9.0, 16.0]))
    (tensor([3., 4., 6., 7.]),)
    """
    from .scans import _div_number, _mul_number, _slice, diff, sub_slices
    from .shape import cat

    if input._data.dtype.kind == "b" or input._data.dtype.name == "uint8":
        raise RuntimeError(f"torch.gradient does not support {input._data.dtype.name} input "
                           "(convert first, e.g. x.float())")
    dims, spacings = _gradient_args(input, spacing, dim, edge_order)
    out = []
    for d, dx in zip(dims, spacings):
        def s(start, stop=None, d=d):
            return _slice(input, d, start, stop)

        if not isinstance(dx, Tensor):
            # (differences of two slices: PyTorch's graph with a fused first-order backward)
            center = _div_number(sub_slices(input, d, slice(2, None), slice(0, -2)), dx)
            if edge_order == 1:
                pre = _div_number(sub_slices(input, d, slice(1, 2), slice(0, 1)), dx)
                app = _div_number(sub_slices(input, d, slice(-1, None), slice(-2, -1)), dx)
            else:
                pre = _div_number(_mul_number(s(0, 1), -1.5) + _mul_number(s(1, 2), 2)
                                  - _mul_number(s(2, 3), 0.5), dx)
                app = _div_number(_mul_number(s(-3, -2), 0.5) - _mul_number(s(-2, -1), 2)
                                  + _mul_number(s(-1), 1.5), dx)
            out.append(cat([pre, _div_number(center, 2), app], d))
            continue
        shape = tuple(-1 if i == d else 1 for i in range(input.ndim))
        h = diff(dx.detach(), 1, 0)
        hd = h._data
        h1, h2 = hd[:-1], hd[1:]
        with quiet(namespace(hd)):
            a = make_tensor((-h2 / (h1 * (h1 + h2))).reshape(shape))
            b = make_tensor(((h2 - h1) / (h1 * h2)).reshape(shape))
            c = make_tensor((h1 / (h2 * (h1 + h2))).reshape(shape))
            center = a * s(0, -2) + b * s(1, -1) + c * s(2)
            if edge_order == 1:
                pre = (s(1, 2) - s(0, 1)) / make_tensor(hd[0])
                app = (s(-1) - s(-2, -1)) / make_tensor(hd[-1])
            else:
                h0, h1_, hm1, hm2 = hd[0], hd[1], hd[-1], hd[-2]
                pre = (make_tensor(-(2.0 * h0 + h1_) / (h0 * (h0 + h1_))) * s(0, 1)
                       + make_tensor((h0 + h1_) / (h0 * h1_)) * s(1, 2)
                       + make_tensor(-h0 / (h1_ * (h0 + h1_))) * s(2, 3))
                app = (make_tensor(hm1 / (hm2 * (hm1 + hm2))) * s(-3, -2)
                       + make_tensor(-(hm1 + hm2) / (hm1 * hm2)) * s(-2, -1)
                       + make_tensor((2 * hm1 + hm2) / (hm1 * (hm1 + hm2))) * s(-1))
        out.append(cat([pre, center, app], d))
    return tuple(out)


__all__ = ["var_mean", "std_mean", "aminmax", "nansum", "nanmean", "dist", "renorm", "cov",
           "corrcoef", "gradient"]


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402
from .inplace import inplace  # noqa: E402

renorm_ = inplace(renorm, "renorm_", True)

for _name in __all__:
    register(globals()[_name], _name,
             method=_name not in ("var_mean", "std_mean", "gradient"),
             tuple_out=_name in ("aminmax", "nansum", "nanmean"))
register(renorm_, function=False, inplace_of="renorm")
