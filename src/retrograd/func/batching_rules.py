"""vmap's batching rules, one table keyed by the op registry's key (``RULES``).

A rule is ``rule(fn, args, kwargs, level) -> result``: ``fn`` is the op as called (its
arguments in the registry function's order, every positional parameter present), some
arguments are :class:`~retrograd.func.batched.BatchedTensor` of vmap ``level`` (others may
be batched at lower levels, or not at all).  A rule runs ``fn`` once on the physical values,
whose dimension 0 is the batch, and wraps the result.  Rules call ops through the public,
dispatching functions, so values batched at a lower level are batched again (nested vmap).

Kinds of rule (the issue's list): elementwise (pad the ranks, NumPy broadcasts the rest),
"leading dims are batch" (the op treats leading dimensions as a batch already), reductions
and scans (shift the dim arguments), shape and view ops, indexing, matrix products, softmax
family, losses (computed unreduced, reduced per sample) and convolution (batch folded into
N, or into groups when the weight is batched).  Ops without a rule use the loop fallback.
"""

from __future__ import annotations

from ..ops import registry
from ..ops.elementwise_losses import legacy_reduction
from ..tensor import Tensor
from .batched import BatchedTensor, fallback, level_info, materialize, wrap

RULES: dict = {}


def _op(name):
    return registry.entry(name).fn


def _tensorlike(x) -> bool:
    return isinstance(x, (Tensor, BatchedTensor))


def _batched(x, level) -> bool:
    return type(x) is BatchedTensor and x.level == level


def _norm(dim, ndim):
    n = max(ndim, 1)
    if not isinstance(dim, int) or not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim}) (inside vmap)")
    return dim + n if dim < 0 else dim


def _pad(v, have, want):
    """Physical ``v`` (batch first) of logical rank ``have`` with ``want - have`` size-1
    dimensions inserted after the batch, so it broadcasts like the logical tensor."""
    if have >= want:
        return v
    return v.reshape(v.shape[0], *([1] * (want - have)), *v.shape[1:])


def _only_first_batched(args, kwargs, level) -> bool:
    return _batched(args[0], level) and not any(
        _batched(a, level) for a in (*args[1:], *kwargs.values()))


# ------------------------------------------------------------------------ elementwise


def elementwise(fn, args, kwargs, level):
    """Ops that broadcast their tensor arguments elementwise (add, where, relu, clamp...)."""
    rank = max((a.dim() for a in (*args, *kwargs.values()) if _tensorlike(a)), default=0)

    def physical(a):
        if _batched(a, level):
            return _pad(a.value, a.dim(), rank)
        return a

    out = fn(*[physical(a) for a in args], **{k: physical(v) for k, v in kwargs.items()})
    return wrap(out, level)


def elementwise_inplace(fn, args, kwargs, level):
    """``x.add_(y)``: ``x`` must be batched (its values change per sample)."""
    if not _batched(args[0], level):
        raise RuntimeError(
            "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists "
            "a Tensor `other` in extra_args that has more elements than `self`. This happened "
            "due to `other` being vmapped over but `self` not being vmapped over in a vmap. "
            "Please try to use out-of-place operators instead of inplace arithmetic.")
    rank = args[0].dim()
    vals = [args[0].value] + [_pad(a.value, a.dim(), rank) if _batched(a, level) else a
                              for a in args[1:]]
    fn(*vals, **kwargs)
    return args[0]


def leading_batch(fn, args, kwargs, level):
    """Ops that already treat leading dimensions as a batch (layer_norm, tril, inv, det...):
    only the first argument may be batched; others batched go to the loop."""
    if not _only_first_batched(args, kwargs, level):
        return fallback(_name(fn), fn, args, kwargs, level)
    return wrap(fn(args[0].value, *args[1:], **kwargs), level)


def _name(fn):
    return getattr(fn, "__name__", "op")


# --------------------------------------------------------------- reductions and scans


def _get(args, kwargs, pos, kw):
    if len(args) > pos:
        return args[pos]
    return kwargs.get(kw)


def _put(args, kwargs, pos, kw, value):
    if len(args) > pos:
        args[pos] = value
    else:
        kwargs[kw] = value


def reduction(pos=1, kw="dim", none_means_all=True, values_when_all=False):
    """Reductions and scans: ``dim`` at position ``pos`` is shifted past the batch; a dim of
    None (all dimensions) reduces the flattened sample instead."""

    def rule(fn, args, kwargs, level):
        d = _get(args, kwargs, pos, kw)
        if _tensorlike(d):  # max(x, other): the elementwise overload
            return elementwise(fn, args, kwargs, level)
        if not _only_first_batched(args, kwargs, level):
            return fallback(_name(fn), fn, args, kwargs, level)
        x = args[0]
        v, r = x.value, x.dim()
        args, kwargs = list(args), dict(kwargs)
        if d is None or d == ():
            if not none_means_all:
                return fallback(_name(fn), fn, args, kwargs, level)
            keep = _get(args, kwargs, pos + 1, "keepdim") if kw == "dim" else False
            args[0] = v.reshape(v.shape[0], -1)
            _put(args, kwargs, pos, kw, 1)
            out = fn(*args, **kwargs)
            if values_when_all and isinstance(out, tuple):
                out = out[0]  # max(x): the value, not (values, indices)
            if keep is True and r:
                out = out.reshape(out.shape[0], *([1] * r))
            return wrap(out, level)
        scalar = r == 0
        if scalar:  # a 0-d sample: one element along a dim 0 (or -1), as PyTorch allows
            v = v.unsqueeze(-1)
            r = 1
        if isinstance(d, (tuple, list)):
            nd = tuple(_norm(i, r) + 1 for i in d)
        else:
            nd = _norm(d, r) + 1
        args[0] = v
        _put(args, kwargs, pos, kw, nd)
        out = fn(*args, **kwargs)
        if scalar:
            out = _to_batch_only(out)
        return wrap(out, level)

    return rule


def _to_batch_only(out):
    """The results of a reduction or scan of 0-d samples, as 0-d samples ([B])."""
    if isinstance(out, tuple):
        parts = [_to_batch_only(o) for o in out]
        return type(out)(*parts) if hasattr(out, "_fields") else tuple(parts)
    return out.reshape(out.shape[0])


def _shift_dims(*positions):
    """Dim arguments at ``positions`` shifted past the batch (transpose, narrow, select...)."""

    def rule(fn, args, kwargs, level):
        if not _only_first_batched(args, kwargs, level):
            return fallback(_name(fn), fn, args, kwargs, level)
        x = args[0]
        r = x.dim()
        args = list(args)
        args[0] = x.value
        for p in positions:
            if len(args) > p and args[p] is not None:
                d = args[p]
                args[p] = (tuple(_norm(i, r) + 1 for i in d) if isinstance(d, (tuple, list))
                           else _norm(d, r) + 1)
        return wrap(fn(*args, **kwargs), level)

    return rule


# ----------------------------------------------------------------------- shape and view


def _sizes(rest):
    if len(rest) == 1 and isinstance(rest[0], (tuple, list)):
        return tuple(rest[0])
    return tuple(rest)


def reshape_rule(fn, args, kwargs, level):
    x = args[0]
    v = x.value
    return wrap(fn(v, v.shape[0], *_sizes(args[1:])), level)


def view_rule(fn, args, kwargs, level):
    """``x.view(*sizes)`` (or ``size=``) as reshape; ``x.view(dtype)`` reinterprets the last
    dim, which the batch dim (leading) never is: the batched value viewed as it is, except
    for 0-d samples, where a different element size refuses (one sample says how)."""
    from ..dtypes import dtype as dtype_cls

    given = kwargs.get("dtype")
    if given is None and len(args) == 2:
        given = args[1]
    if not isinstance(given, dtype_cls):
        if kwargs.get("size") is not None:
            args = (*args, kwargs["size"])
        return reshape_rule(fn, args, {}, level)
    v = args[0].value
    if v.ndim == 1 and v.dtype.itemsize != given.itemsize:
        fn(v[0], given)  # (raises PyTorch's error for a 0-d tensor)
    return wrap(fn(v, given), level)


def ravel_rule(fn, args, kwargs, level):
    v = args[0].value
    return wrap(v.reshape(v.shape[0], -1), level)


def flatten_rule(fn, args, kwargs, level):
    x = args[0]
    v, r = x.value, x.dim()
    if r == 0:
        return wrap(v.reshape(v.shape[0], 1), level)
    start = _norm(_get(args, kwargs, 1, "start_dim") or 0, r) + 1
    end_arg = _get(args, kwargs, 2, "end_dim")
    end = _norm(-1 if end_arg is None else end_arg, r) + 1
    return wrap(fn(v, start, end), level)


def permute_rule(fn, args, kwargs, level):
    x = args[0]
    r = x.dim()
    dims = _sizes(args[1:]) if len(args) > 1 else tuple(kwargs["dims"])
    return wrap(fn(x.value, 0, *[_norm(d, r) + 1 for d in dims]), level)


def t_rule(fn, args, kwargs, level):
    x = args[0]
    if x.dim() < 2:
        return x
    return wrap(x.value.transpose(1, 2), level)


def squeeze_rule(fn, args, kwargs, level):
    x = args[0]
    v, r = x.value, x.dim()
    dims = [a for a in args[1:] if a is not None]
    if not dims and "dim" in kwargs and kwargs["dim"] is not None:
        dims = [kwargs["dim"]]
    if not dims:
        dims = [i for i, s in enumerate(x.shape) if s == 1]
    elif len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = list(dims[0])
    if r == 0 or not dims:
        return x
    shifted = tuple(_norm(d, r) + 1 for d in dims)
    keep = [s for i, s in enumerate(v.shape) if not (i in shifted and s == 1)]
    return wrap(v.reshape(*keep), level)


def unsqueeze_rule(fn, args, kwargs, level):
    x = args[0]
    d = _get(args, kwargs, 1, "dim")
    return wrap(x.value.unsqueeze(_norm(d, x.dim() + 1) + 1), level)


def expand_rule(fn, args, kwargs, level):
    x = args[0]
    sizes = _sizes(args[1:]) if len(args) > 1 else tuple(kwargs.get("size", kwargs.get("shape")))
    v = _pad(x.value, x.dim(), len(sizes))
    return wrap(fn(v, (v.shape[0], *sizes)), level)


def repeat_rule(fn, args, kwargs, level):
    x = args[0]
    sizes = _sizes(args[1:])
    sizes = (1,) * (x.dim() - len(sizes)) + sizes  # (tile's short dims: leading ones)
    v = _pad(x.value, x.dim(), len(sizes))
    return wrap(fn(v, 1, *sizes), level)


def flip_rule(fn, args, kwargs, level):
    x = args[0]
    dims = _sizes(args[1:]) if len(args) > 1 else tuple(kwargs["dims"])
    return wrap(fn(x.value, tuple(_norm(d, x.dim()) + 1 for d in dims)), level)


def _materialized(tensors, level):
    return [materialize(t, level) for t in tensors]


def cat_rule(fn, args, kwargs, level):
    tensors = list(args[0])
    d = _get(args, kwargs, 1, "dim")
    ref = next(t for t in tensors if _tensorlike(t) and not (t.dim() == 1 and t.shape[0] == 0))
    nd = _norm(d, ref.dim()) + 1
    return wrap(fn(_materialized(tensors, level), nd), level)


def stack_rule(fn, args, kwargs, level):
    tensors = list(args[0])
    d = _get(args, kwargs, 1, "dim")
    nd = _norm(d, tensors[0].dim() + 1) + 1
    return wrap(fn(_materialized(tensors, level), nd), level)


def _plain_index(item) -> bool:
    return item is None or item is Ellipsis or isinstance(item, slice)


def getitem_rule(fn, args, kwargs, level):
    x, index = args[0], args[1]
    idx = index if isinstance(index, tuple) else (index,)
    if not _batched(x, level) or any(_batched(i, level) for i in idx):
        return fallback("getitem", fn, args, kwargs, level)
    # advanced indices (tensors, lists) with ints must form one block, so that the batch
    # dimension (a leading full slice) stays first in the result, as NumPy and PyTorch place
    # the dims of one block of advanced indices where the block is
    adv = [i for i, item in enumerate(idx) if not _plain_index(item)]
    if any(not isinstance(idx[i], int) for i in adv) and adv != list(range(adv[0], adv[-1] + 1)):
        return fallback("getitem", fn, args, kwargs, level)
    return wrap(fn(x.value, (slice(None), *idx)), level)


def setitem_rule(fn, args, kwargs, level):
    x, index, value = args
    if not _batched(x, level):
        raise RuntimeError(
            "vmap: index_put_(self, *extra_args) is not possible because there exists a Tensor "
            "`other` in extra_args that has more elements than `self`: the tensor written to "
            "is not vmapped over but the value is. Use out-of-place ops (retrograd.where, "
            "index_put) instead.")
    idx = index if isinstance(index, tuple) else (index,)
    if any(_batched(i, level) for i in idx):
        return fallback("setitem", fn, args, kwargs, level)
    if _batched(value, level):
        region = x[index].dim()
        value = _pad(value.value, value.dim(), region)
    fn(x.value, (slice(None), *idx), value)
    return x


def split_rule(pos_dim):
    def rule(fn, args, kwargs, level):
        if not _only_first_batched(args, kwargs, level):
            return fallback(_name(fn), fn, args, kwargs, level)
        x = args[0]
        args = list(args)
        args[0] = x.value
        d = _get(args, kwargs, pos_dim, "dim")
        _put(args, kwargs, pos_dim, "dim", _norm(0 if d is None else d, x.dim()) + 1)
        return wrap(fn(*args, **kwargs), level)

    return rule


def movedim_rule(fn, args, kwargs, level):
    return _shift_dims(1, 2)(fn, args, kwargs, level)


def gather_rule(fn, args, kwargs, level):
    x, d, index = args[:3]
    r = max(x.dim(), 1)
    xv, iv = materialize(x, level), materialize(index, level)
    return wrap(fn(xv, _norm(d, r) + 1, iv, *args[3:], **kwargs), level)


def index_select_rule(fn, args, kwargs, level):
    if _batched(args[2], level):
        return fallback("index_select", fn, args, kwargs, level)
    return _shift_dims(1)(fn, args, kwargs, level)


def diagonal_rule(fn, args, kwargs, level):
    x = args[0]
    r = x.dim()
    offset = _get(args, kwargs, 1, "offset") or 0
    d1 = _get(args, kwargs, 2, "dim1")
    d2 = _get(args, kwargs, 3, "dim2")
    d1 = 0 if d1 is None else d1
    d2 = 1 if d2 is None else d2
    return wrap(fn(x.value, offset, _norm(d1, r) + 1, _norm(d2, r) + 1), level)


def as_strided_rule(fn, args, kwargs, level):
    """as_strided addresses storage: PyTorch's rule views each sample i at ``offset + i *``
    the batch stride (as if every sample started where the batch does), so an explicit
    offset is not read from sample 0's storage for every sample, as the loop would."""
    if not _only_first_batched(args, kwargs, level):
        return fallback(_name(fn), fn, args, kwargs, level)
    v = args[0].value
    size, stride = _get(args, kwargs, 1, "size"), _get(args, kwargs, 2, "stride")
    size = (size,) if isinstance(size, int) else tuple(size)
    stride = (stride,) if isinstance(stride, int) else tuple(stride)
    offset = _get(args, kwargs, 3, "storage_offset")
    return wrap(fn(v, (v.shape[0], *size), (v.stride(0), *stride), offset), level)


def no_rule(name):
    """Ops PyTorch's vmap refuses (RuntimeError) where the loop's samples, views of one
    storage, would give each sample's storage addresses another meaning."""

    def rule(fn, args, kwargs, level):
        raise RuntimeError(f"Error: aten::{name} requires special handling, and does not yet "
                           "have a batching rule. Feel free to file a github issue!")
    return rule


def norm_rule(weight_pos):
    """layer_norm / rms_norm: normalization treats leading dims as batch; a batched weight
    or bias is applied afterwards by the elementwise rule."""

    def rule(fn, args, kwargs, level):
        args = list(args)
        affine = [args[i] if len(args) > i else None for i in weight_pos]
        if not any(_batched(a, level) for a in affine):
            return leading_batch(fn, args, kwargs, level)
        for i in weight_pos:
            if len(args) > i:
                args[i] = None
        out = fn(*args, **kwargs)
        w, *b = affine
        if w is not None:
            out = out * w
        if b and b[0] is not None:
            out = out + b[0]
        return out

    return rule


def embedding_rule(fn, args, kwargs, level):
    """embedding(input, weight, ...): a batched weight is gathered per sample."""
    idx, weight = args[0], args[1]
    if not _batched(weight, level):
        return leading_batch(fn, args, kwargs, level)
    if any(a is not None and a is not False for a in args[2:4]):  # padding_idx, max_norm
        return fallback("embedding", fn, args, kwargs, level)
    from .._creation import arange

    size = level_info(level).size
    iv = materialize(idx, level)
    rows = arange(size).reshape(size, *([1] * (iv.dim() - 1)))
    return wrap(weight.value[rows, iv], level)


# ------------------------------------------------------------------------ products


def matmul_rule(fn, args, kwargs, level):
    a, b = args[0], args[1]
    ra, rb = a.dim(), b.dim()
    av = a.value if _batched(a, level) else a
    bv = b.value if _batched(b, level) else b
    squeeze = []
    if ra == 1:  # a vector: a row of a matrix, dropped afterwards
        av = av.unsqueeze(-2)
        ra = 2
        squeeze.append(-2)
    if rb == 1:
        bv = bv.unsqueeze(-1)
        rb = 2
        squeeze.append(-1)
    rank = max(ra, rb)
    if _batched(a, level):
        av = _pad(av, ra, rank)
    if _batched(b, level):
        bv = _pad(bv, rb, rank)
    out = _op("matmul")(av, bv)
    for d in squeeze:
        out = out.squeeze(d if d == -1 or len(squeeze) == 1 else -1)
    return wrap(out, level)


def dot_rule(fn, args, kwargs, level):
    return (args[0] * args[1]).sum(-1)


def outer_rule(fn, args, kwargs, level):
    return args[0].unsqueeze(-1) * args[1].unsqueeze(-2)


def addmm_rule(fn, args, kwargs, level):
    inp, m1, m2 = args[:3]
    beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
    prod = _op("matmul")(m1, m2)
    prod = prod if alpha == 1 else prod * alpha
    return prod + (inp if beta == 1 else inp * beta)


def linear_rule(fn, args, kwargs, level):
    x, w = args[0], args[1]
    b = _get(args, kwargs, 2, "bias")
    out = _op("matmul")(x, w.transpose(-1, -2) if w.dim() == 2 else w)
    return out if b is None else out + b


# ------------------------------------------------------------------------ losses


def _reduce_per_sample(loss, reduction):
    if reduction == "none":
        return loss
    if loss.dim() == 0:
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()


def pointwise_loss(red_pos):
    """Losses that are elementwise before reduction (mse, l1, bce...): computed with
    reduction='none' by the elementwise rule, then reduced per sample."""

    def rule(fn, args, kwargs, level):
        args, kwargs = list(args), dict(kwargs)
        if _get(args, kwargs, red_pos + 1, "weight") is not None and red_pos == 4:
            # l1/mse's per-element weight: the mean divides by the weight's sum
            return fallback(_name(fn), fn, tuple(args), kwargs, level)
        # the legacy size_average / reduce flags sit just before reduction, as PyTorch's
        reduction = legacy_reduction(_get(args, kwargs, red_pos - 2, "size_average"),
                                     _get(args, kwargs, red_pos - 1, "reduce"),
                                     _get(args, kwargs, red_pos, "reduction") or "mean")
        _put(args, kwargs, red_pos - 2, "size_average", None)
        _put(args, kwargs, red_pos - 1, "reduce", None)
        _put(args, kwargs, red_pos, "reduction", "none")
        for i in (0, 1):  # input and target: same shapes (no broadcasting in these losses)
            args[i] = BatchedTensor(materialize(args[i], level), level)
        loss = elementwise(fn, args, kwargs, level)
        return _reduce_per_sample(loss, reduction or "mean")

    return rule


def class_loss(has_smoothing):
    """cross_entropy / nll_loss: the samples' rows folded into one call with
    reduction='none', reduced per sample as PyTorch reduces (weighted mean over the
    targets that are not ignored)."""

    def rule(fn, args, kwargs, level):
        names = ("input", "target", "weight", "size_average", "ignore_index", "reduce",
                 "reduction", "label_smoothing")
        vals = dict(zip(names, args))
        vals.update(kwargs)
        inp, target, weight = vals["input"], vals["target"], vals.get("weight")
        ignore = vals.get("ignore_index", -100)
        reduction = legacy_reduction(vals.get("size_average"), vals.get("reduce"),
                                     vals.get("reduction", "mean"))
        smoothing = vals.get("label_smoothing", 0.0) if has_smoothing else 0.0
        if _batched(weight, level) or (smoothing and weight is not None and reduction == "mean"):
            return fallback(_name(fn), fn, args, kwargs, level)
        size = level_info(level).size
        xv, tv = materialize(inp, level), materialize(target, level)
        probs = target.dtype.is_floating_point
        no_n = inp.dim() == 1
        if no_n:
            flat_x, flat_t = xv, tv
        else:
            flat_x = xv.reshape(-1, *xv.shape[2:])
            flat_t = tv.reshape(-1, *tv.shape[2:])
        extra = {"label_smoothing": smoothing} if has_smoothing else {}
        loss = fn(flat_x, flat_t, weight, ignore_index=ignore, reduction="none", **extra)
        if no_n:  # one row per sample: the unreduced loss is the sample's loss
            if reduction == "mean" and not probs and weight is not None:
                loss = loss / weight[tv]
            return wrap(loss, level)
        if reduction == "none":
            shape = tv.shape[1:] if not probs else (xv.shape[1], *xv.shape[3:])
            return wrap(loss.reshape(size, *shape), level)
        loss = loss.reshape(size, -1)
        total = loss.sum(1)
        if reduction == "sum":
            return wrap(total, level)
        if probs:
            return wrap(total / loss.shape[1], level)
        t2 = tv.reshape(size, -1)
        valid = (t2 != ignore)
        w = valid.to(loss.dtype) if weight is None else (
            weight[t2.clamp(0, weight.shape[0] - 1)] * valid.to(loss.dtype))
        return wrap(total / w.sum(1), level)

    return rule


# ------------------------------------------------------------------------ convolution


def conv_rule(fn, args, kwargs, level):
    """conv1d/2d/3d: a batched input folds its batch into N; a batched weight folds the
    batch into the channels and runs B times as many groups."""
    names = ("input", "weight", "bias", "stride", "padding", "dilation", "groups")
    vals = dict(zip(names, args))
    vals.update(kwargs)
    x, w, b = vals["input"], vals["weight"], vals.get("bias")
    rest = [vals.get(k, d) for k, d in (("stride", 1), ("padding", 0), ("dilation", 1))]
    groups = vals.get("groups", 1)
    size = level_info(level).size
    spatial = w.dim() - 2
    unbatched_conv = x.dim() == spatial + 1  # a [C, *spatial] input: no N
    if not _batched(w, level) and not _batched(b, level):
        v = x.value
        if unbatched_conv:
            return wrap(fn(v, w, b, *rest, groups), level)
        n = v.shape[1]
        out = fn(v.reshape(size * n, *v.shape[2:]), w, b, *rest, groups)
        return wrap(out.reshape(size, n, *out.shape[1:]), level)
    xv = materialize(x, level)
    if unbatched_conv:
        xv = xv.unsqueeze(1)
    n, c = xv.shape[1], xv.shape[2]
    xf = xv.transpose(0, 1).reshape(n, size * c, *xv.shape[3:])
    wv = materialize(w, level)
    o = wv.shape[1]
    wf = wv.reshape(size * o, *wv.shape[2:])
    bf = None if b is None else materialize(b, level).reshape(size * o)
    out = fn(xf, wf, bf, *rest, groups * size)
    out = out.reshape(n, size, o, *out.shape[2:]).transpose(0, 1)
    if unbatched_conv:
        out = out.squeeze(1)
    return wrap(out, level)


# ------------------------------------------------------------------------ randomness


def dropout_rule(fn, args, kwargs, level):
    """Dropout: 'different' draws one mask per sample (the physical call); 'same' draws one
    mask for the logical shape and applies it to every sample."""
    lv = level_info(level)
    x = args[0]
    if lv.randomness == "same":
        from .._creation import ones

        mask = fn(ones(*x.shape, dtype=x.dtype), *args[1:3])
        return x * mask
    return wrap(fn(x.value, *args[1:], **kwargs), level)


def random_fill_rule(fn, args, kwargs, level):
    """In-place random fills (normal_, uniform_, bernoulli_...) of a batched tensor:
    'different' fills the physical tensor (independent numbers per sample); 'same' draws
    one sample's numbers and writes them into every sample, as PyTorch."""
    x = args[0]
    if not _batched(x, level) or not _only_first_batched(args, kwargs, level):
        return fallback(_name(fn), fn, args, kwargs, level)
    if level_info(level).randomness == "same":
        one = x.value.select(0, 0).clone()  # (still batched at a lower level, if any)
        fn(one, *args[1:], **kwargs)
        x.value.copy_(one.unsqueeze(0).expand(*x.value.shape))
    else:
        fn(x.value, *args[1:], **kwargs)
    return x


# ------------------------------------------------------------------------ the table

_ELEMENTWISE_KINDS = ("pointwise", "binary", "unary", "special", "activation")
_NOT_ELEMENTWISE = {"frexp", "fill"}
_ELEMENTWISE_MORE = {
    "isclose", "to", "contiguous", "type_as", "float", "double", "half", "long", "int", "bool",
    "byte", "short", "masked_fill", "bitwise_not", "bitwise_xor", "bitwise_left_shift",
    "bitwise_right_shift", "clone", "selu", "celu", "threshold", "hardshrink",
    "nn.functional.hardsigmoid", "nn.functional.hardswish", "nn.functional.mish",
    "nn.functional.softsign", "nn.functional.tanhshrink", "nn.functional.softshrink",
    "nn.functional.rrelu", "rrelu",
}
_LEADING_BATCH = [
    "tril", "triu", "nn.functional.one_hot", "linalg.inv", "inverse", "det",
    "logdet", "slogdet", "linalg.slogdet", "linalg.pinv", "pinverse", "adjoint",
]
_REDUCTIONS = {  # key: (dim position, None means all, max(x) gives the value)
    "sum": (1, True, False), "mean": (1, True, False), "prod": (1, True, False),
    "amax": (1, True, False), "amin": (1, True, False), "nansum": (1, True, False),
    "nanmean": (1, True, False), "all": (1, True, False), "any": (1, True, False),
    "var": (1, True, False), "std": (1, True, False), "logsumexp": (1, True, False),
    "argmax": (1, True, False), "argmin": (1, True, False), "max": (1, True, True),
    "min": (1, True, True), "median": (1, True, True), "nanmedian": (1, True, True),
    "norm": (2, True, False),
    "var_mean": (1, True, False), "std_mean": (1, True, False),
    # scans and the softmax family: a dim is required
    "cumsum": (1, False, False), "cumprod": (1, False, False), "cummax": (1, False, False),
    "cummin": (1, False, False), "logcumsumexp": (1, False, False),
    "softmax": (1, False, False), "log_softmax": (1, False, False),
    "special.softmax": (1, False, False), "special.log_softmax": (1, False, False),
    "nn.functional.softmin": (1, False, False), "nn.functional.glu": (1, False, False),
    "sort": (1, False, False), "argsort": (1, False, False), "mode": (1, False, False),
    "kthvalue": (2, False, False), "topk": (2, False, False),
    "nn.functional.normalize": (2, False, False),
}


def _matrix_norm_aware(vector_rule):
    """``norm(x, 'nuc')`` without dim is a matrix norm over the sample's two dims, not a
    norm of all elements: name them (-2, -1) so the reduction rule shifts them past the batch."""

    def rule(fn, args, kwargs, level):
        if _get(args, kwargs, 1, "p") == "nuc" and _get(args, kwargs, 2, "dim") is None:
            args, kwargs = list(args), dict(kwargs)
            if len(args) < 2:
                kwargs["p"] = "nuc"
            _put(args, kwargs, 2, "dim", (-2, -1))
        return vector_rule(fn, args, kwargs, level)

    return rule


def _default_dim(rule, default=-1):
    """sort/argsort take ``(input, *args, **kwargs)`` (PyTorch's two overloads: with
    ``stable=``, dim is a keyword only), so an omitted dim reaches the rule as nothing, not
    as its default: name it (a keyword, which both overloads take)."""

    def wrapped(fn, args, kwargs, level):
        if len(args) < 2 and "dim" not in kwargs:
            kwargs = {**kwargs, "dim": default}
        return rule(fn, args, kwargs, level)

    return wrapped


def _build():
    for e in registry.entries():
        if e.kind in _ELEMENTWISE_KINDS and e.key not in _NOT_ELEMENTWISE:
            RULES[e.key] = elementwise_inplace if e.inplace_of else elementwise
        elif e.inplace_of and e.inplace_of in RULES and RULES[e.inplace_of] is elementwise:
            RULES[e.key] = elementwise_inplace
    for key in _ELEMENTWISE_MORE:
        RULES[key] = elementwise
    for key in _LEADING_BATCH:
        RULES[key] = leading_batch
    for key, (pos, all_ok, values) in _REDUCTIONS.items():
        RULES[key] = reduction(pos, "dim", all_ok, values)
    RULES["norm"] = _matrix_norm_aware(RULES["norm"])
    for key in ("sort", "argsort"):
        RULES[key] = _default_dim(RULES[key])
    RULES.update({
        "reshape": reshape_rule, "view": view_rule, "flatten": flatten_rule,
        "ravel": ravel_rule, "permute": permute_rule, "t": t_rule,
        "transpose": _shift_dims(1, 2), "swapaxes": _shift_dims(1, 2),
        "movedim": movedim_rule, "squeeze": squeeze_rule, "unsqueeze": unsqueeze_rule,
        "expand": expand_rule, "broadcast_to": expand_rule, "repeat": repeat_rule,
        "tile": repeat_rule, "cat": cat_rule, "stack": stack_rule, "getitem": getitem_rule,
        "setitem": setitem_rule, "select": _shift_dims(1), "narrow": _shift_dims(1),
        "unflatten": _shift_dims(1), "flip": flip_rule, "diagonal": diagonal_rule,
        "as_strided": as_strided_rule, "as_strided_scatter": no_rule("as_strided_scatter"),
        "split": split_rule(2), "chunk": split_rule(2), "unbind": split_rule(1),
        "split_with_sizes": split_rule(2),
        "gather": gather_rule, "take_along_dim": None, "index_select": index_select_rule,
        "matmul": matmul_rule, "mm": matmul_rule, "bmm": matmul_rule, "mv": matmul_rule,
        "dot": dot_rule, "vdot": dot_rule, "inner": None, "outer": outer_rule,
        "addmm": addmm_rule, "nn.functional.linear": linear_rule,
        "nn.functional.mse_loss": pointwise_loss(4), "nn.functional.l1_loss": pointwise_loss(4),
        "nn.functional.binary_cross_entropy": pointwise_loss(5),
        "nn.functional.binary_cross_entropy_with_logits": pointwise_loss(5),
        "nn.functional.cross_entropy": class_loss(True),
        "nn.functional.nll_loss": class_loss(False),
        "conv1d": conv_rule, "conv2d": conv_rule, "conv3d": conv_rule,
        "nn.functional.dropout": dropout_rule, "dropout": dropout_rule,
        **{k: random_fill_rule for k in ("normal_", "uniform_", "exponential_", "geometric_",
                                         "log_normal_", "cauchy_", "random_", "bernoulli_")},
        "nn.functional.layer_norm": norm_rule((2, 3)), "layer_norm": norm_rule((2, 3)),
        "rms_norm": norm_rule((2,)), "nn.functional.embedding": embedding_rule,
    })
    for key in [k for k, v in RULES.items() if v is None]:
        del RULES[key]
    for key, rule in RULES.items():
        registry.entry(key).batch_rule = rule  # the registry's slot: dispatch reads it there


_build()
