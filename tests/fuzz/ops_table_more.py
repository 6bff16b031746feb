"""More op families for the fuzzer (ops_table.py holds the first ones and the record format).

Added after the op library grew past the first table: nn.functional activations and losses,
scatter/gather/index_* and *_scatter, cumulative ops, sorting and quantiles, statistics,
linalg (square-matrix functions on well-conditioned inputs, products), normalization,
padding, 1-d convolution and pooling, and more in-place forms (index_add_, scatter_add_,
in-place view ops such as t_/unsqueeze_...).  Results that are not unique (the vectors of
eigh/svd/qr, which of duplicate indices a scatter writes last) are left out, so that a
difference is a bug, not a convention.
"""

from __future__ import annotations

import numpy as np

from .ops_table import ANY, FLOAT, NUM, in_domain, op
from .program import Leaf

F = "T.nn.functional"


def _index_leaf(g, shape, size, distinct_along=None):
    """An int64 leaf of ``shape`` with values in [0, size): along ``distinct_along`` (a dim)
    every line has distinct values (a scatter/index_copy then writes each place once)."""
    shape = tuple(shape)
    if distinct_along is None:
        arr = np.array([g.rng.randrange(size) for _ in range(int(np.prod(shape)))],
                       dtype=np.int64).reshape(shape)
    else:
        moved = list(shape)
        k = moved.pop(distinct_along)
        lines = int(np.prod(moved)) if moved else 1
        arr = np.array([g.rng.sample(range(size), k) for _ in range(lines)],
                       dtype=np.int64).reshape(moved + [k])
        arr = np.moveaxis(arr, -1, distinct_along)
    return g._leaf(Leaf(np.ascontiguousarray(arr), "int64", False))


def _reduction(g, extra=()):
    return g.rng.choice(["", ", reduction='sum'", ", reduction='none'", *extra])


# ------------------------------------------------------------------------------ activations
ACTIVATIONS = {  # name: extra arguments (a few forms each)
    "leaky_relu": ["", ", 0.2", ", negative_slope=1.5"], "softplus": ["", ", beta=2.0",
                                                                     ", beta=0.5, threshold=1.0"],
    "silu": [""], "elu": ["", ", alpha=0.5"], "celu": ["", ", alpha=2.0"], "selu": [""],
    "gelu": ["", ", approximate='tanh'"], "hardtanh": ["", ", -0.5, 0.5"], "relu6": [""],
    "logsigmoid": [""], "threshold": [", 0.1, 2.0", ", -0.5, 0.0"],
    "hardshrink": ["", ", 0.25"], "softshrink": ["", ", 0.25"], "hardsigmoid": [""],
    "hardswish": [""], "mish": [""], "softsign": [""], "tanhshrink": [""],
    "rrelu": [", training=False"],
}


@op("activation", "unary", FLOAT, weight=1.5)
def _activation(g, a):
    r = g.rng.random()
    if r < 0.1 and a.ndim:
        return f"{F}.{g.rng.choice(['softmin', 'softmax', 'log_softmax'])}({a.name}, " \
               f"dim={g.dim(a)})"
    if r < 0.17 and a.ndim:
        return f"{F}.glu({a.name}, dim={g.dim(a)})"  # (odd sizes raise in both)
    if r < 0.25:
        c = a.shape[1] if a.ndim >= 2 else 1
        w = g.fresh((g.rng.choice([1, c]),), a.dtype)
        return f"{F}.prelu({a.name}, {w})"
    name = g.rng.choice(sorted(ACTIVATIONS))
    return f"{F}.{name}({a.name}{g.rng.choice(ACTIVATIONS[name])})"


# ------------------------------------------------------------------------------ losses
@op("nn_loss", "reduce", FLOAT, weight=1.5)
def _loss(g, a):
    b = g.other(a, same_shape=True) if g.rng.random() < 0.4 else None
    b = b or g.fresh(a.shape, a.dtype)
    x = a.name
    name = g.rng.choice(["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
                         "soft_margin_loss", "kl_div", "binary_cross_entropy",
                         "binary_cross_entropy_with_logits", "poisson_nll_loss",
                         "gaussian_nll_loss", "margin_ranking_loss", "hinge_embedding_loss",
                         "class", "class", "pairs"])
    red = _reduction(g)
    if name in ("mse_loss", "l1_loss"):
        return f"{F}.{name}({x}, {b}{red})"
    if name == "smooth_l1_loss":
        return f"{F}.smooth_l1_loss({x}, {b}{red}, beta={g.rng.choice([1.0, 0.5])})"
    if name == "huber_loss":
        return f"{F}.huber_loss({x}, {b}{red}, delta={g.rng.choice([1.0, 0.5, 2.0])})"
    if name == "soft_margin_loss":
        return f"{F}.soft_margin_loss({x}, ({b}).sign(){red})"
    if name == "kl_div":
        log_target = g.rng.random() < 0.5
        t = b if log_target else f"({b}).sigmoid()"
        red = _reduction(g, [", reduction='batchmean'"])
        return f"{F}.kl_div({x}, {t}{red}, log_target={log_target})"
    if name == "binary_cross_entropy":
        w = f", weight={g.fresh(a.shape[-1:], a.dtype, False)}.abs()" \
            if a.ndim and g.rng.random() < 0.3 else ""
        return f"{F}.binary_cross_entropy(({x}).sigmoid(), ({b}).sigmoid(){w}{red})"
    if name == "binary_cross_entropy_with_logits":
        pw = f", pos_weight={g.fresh(a.shape[-1:], a.dtype)}.abs()" \
            if a.ndim and g.rng.random() < 0.3 else ""
        return f"{F}.binary_cross_entropy_with_logits({x}, ({b}).sigmoid(){pw}{red})"
    if name == "poisson_nll_loss":
        log_input = g.rng.random() < 0.5
        inp = x if log_input else in_domain(g, a, "pos")
        return f"{F}.poisson_nll_loss({inp}, ({b}).abs(), log_input={log_input}" \
               f", full={g.rng.random() < 0.3}{red})"
    if name == "gaussian_nll_loss":
        var = g.fresh(a.shape, a.dtype)
        return f"{F}.gaussian_nll_loss({x}, {b}, ({var}).abs().add(0.5)" \
               f", full={g.rng.random() < 0.3}{red})"
    if name == "margin_ranking_loss":
        c = g.fresh(a.shape, a.dtype, False)
        return f"{F}.margin_ranking_loss({x}, {b}, ({c}).sign(), margin=" \
               f"{g.rng.choice([0.0, 0.5])}{red})"
    if name == "hinge_embedding_loss":
        return f"{F}.hinge_embedding_loss({x}, ({b}).sign(), margin=" \
               f"{g.rng.choice([1.0, 0.5])}{red})"
    if name == "class":  # (N, C) or (C,) scores against class indices or probabilities
        if a.ndim not in (1, 2) or not a.shape[-1]:
            return None
        c = a.shape[-1]
        fn = g.rng.choice(["cross_entropy", "nll_loss", "multi_margin_loss",
                           "multilabel_soft_margin_loss"])
        if fn == "multilabel_soft_margin_loss":
            return f"{F}.{fn}({x}, ({b} > 0).to({x}.dtype){red})"
        target = _index_leaf(g, a.shape[:-1], c)
        if fn == "cross_entropy" and g.rng.random() < 0.3:
            target = f"({b}).softmax(-1)"
        w = f", weight={g.fresh((c,), a.dtype, False)}.abs()" if g.rng.random() < 0.3 else ""
        extra = ""
        if fn == "cross_entropy" and g.rng.random() < 0.3:
            extra = ", label_smoothing=0.1"
        if fn in ("cross_entropy", "nll_loss") and "softmax" not in target and \
                g.rng.random() < 0.2:
            extra += ", ignore_index=0"
        if fn == "multi_margin_loss":
            extra = g.rng.choice(["", ", p=2", ", margin=0.5"])
        return f"{F}.{fn}({x}, {target}{w}{extra}{red})"
    # pairs of vectors: (N, D) or (D,)
    if a.ndim not in (1, 2):
        return None
    fn = g.rng.choice(["cosine_embedding_loss", "cosine_similarity", "pairwise_distance",
                       "triplet_margin_loss"])
    if fn == "cosine_embedding_loss":
        y = g.fresh(a.shape[:-1], a.dtype, False)
        return f"{F}.cosine_embedding_loss({x}, {b}, ({y}).sign(){red})"
    if fn == "cosine_similarity":
        return f"{F}.cosine_similarity({x}, {b}, dim=-1)"
    if fn == "pairwise_distance":
        return f"{F}.pairwise_distance({x}, {b}, p={g.rng.choice([1.0, 2.0, 3.0])})"
    c = g.fresh(a.shape, a.dtype)
    return f"{F}.triplet_margin_loss({x}, {b}, {c}, margin={g.rng.choice([1.0, 0.5])}{red})"


# ------------------------------------------------------------------------------ scatter, gather
@op("scatter", "index", NUM, min_ndim=1, weight=1.5)
def _scatter(g, a):
    d = g.dim(a)
    size = a.shape[d]
    if not size:
        return None
    r = g.rng.random()
    src_dtype = a.dtype if a.kind == "float" else "float64"
    if r < 0.4:  # scatter / scatter_add / scatter_reduce: index no bigger than a, than src
        shape = [g.rng.randint(1, s) if s else 0 for s in a.shape]
        shape[d] = g.rng.randint(1, size)
        fn = g.rng.choice(["scatter", "scatter_add", "scatter_reduce", "scatter_value"])
        idx = _index_leaf(g, shape, size, distinct_along=d if fn in ("scatter",
                                                                    "scatter_value") else None)
        if fn == "scatter_value":
            return f"{a.name}.scatter({d}, {idx}, {g.scalar()})"
        src = g.fresh(shape, a.dtype if a.kind != "bool" else src_dtype)
        if fn == "scatter_reduce":
            red = g.rng.choice(["sum", "prod", "mean", "amax", "amin"])
            return f"{a.name}.scatter_reduce({d}, {idx}, {src}, '{red}', " \
                   f"include_self={g.rng.random() < 0.5})"
        return f"{a.name}.{fn}({d}, {idx}, {src})"
    if r < 0.7:  # index_add / index_copy / index_fill / index_reduce along d
        k = g.rng.randint(1, size)
        fn = g.rng.choice(["index_add", "index_copy", "index_fill", "index_reduce"])
        idx = _index_leaf(g, (k,), size, distinct_along=0 if fn == "index_copy" else None)
        if fn == "index_fill":
            return f"{a.name}.index_fill({d}, {idx}, {g.scalar()})"
        shape = list(a.shape)
        shape[d] = k
        src = g.fresh(shape, a.dtype)
        if fn == "index_add":
            return f"{a.name}.index_add({d}, {idx}, {src}, alpha={g.scalar()})"
        if fn == "index_reduce":
            red = g.rng.choice(["prod", "mean", "amax", "amin"])
            return f"{a.name}.index_reduce({d}, {idx}, {src}, '{red}', " \
                   f"include_self={g.rng.random() < 0.5})"
        return f"{a.name}.index_copy({d}, {idx}, {src})"
    if r < 0.85:  # take / take_along_dim / index_put
        fn = g.rng.choice(["take", "take_along_dim", "index_put", "index_put_acc"])
        if fn == "take":
            return f"T.take({a.name}, {_index_leaf(g, (g.rng.randint(1, 4),), a.numel)})"
        if fn == "take_along_dim":
            shape = list(a.shape)
            shape[d] = g.rng.randint(1, 3)
            return f"T.take_along_dim({a.name}, {_index_leaf(g, shape, size)}, dim={d})"
        k = g.rng.randint(1, a.shape[0]) if a.shape[0] else 0
        if not k:
            return None
        acc = fn == "index_put_acc"
        idx = _index_leaf(g, (k,), a.shape[0], distinct_along=None if acc else 0)
        vals = g.fresh((k,) + a.shape[1:], a.dtype)
        return f"{a.name}.index_put(({idx},), {vals}, accumulate={acc})"
    fn = g.rng.choice(["masked_scatter", "select_scatter", "slice_scatter",
                       "diagonal_scatter"])
    if fn == "masked_scatter":
        m = g.other(a, into=True)
        src = g.fresh((a.numel,), a.dtype)
        return f"{a.name}.masked_scatter({m} > 0, {src})" if m else None
    if fn == "select_scatter":
        i = g.rng.randrange(size)
        src = g.fresh(a.shape[:d % a.ndim] + a.shape[d % a.ndim + 1:], a.dtype)
        return f"T.select_scatter({a.name}, {src}, {d}, {i})"
    if fn == "slice_scatter":
        lo = g.rng.randint(0, size)
        hi = g.rng.randint(lo, size)
        step = g.rng.choice([1, 2])
        shape = list(a.shape)
        shape[d] = len(range(lo, hi, step))
        src = g.fresh(shape, a.dtype)
        return f"T.slice_scatter({a.name}, {src}, dim={d}, start={lo}, end={hi}, step={step})"
    if a.ndim < 2:
        return None
    off = g.rng.randint(-1, 1)
    diag = np.zeros(a.shape[-2:]).diagonal(off)  # the diagonal's length
    src = g.fresh(a.shape[:-2] + diag.shape, a.dtype)
    return f"T.diagonal_scatter({a.name}, {src}, {off}, -2, -1)"


# ------------------------------------------------------------------------------ as_strided_scatter
_STORAGE_VIEWS = ["", ".t()", "[1:]", "[::2]", ".diagonal()", ".transpose(0, -1)[1:]",
                  ".unsqueeze(0).expand(2, *{shape})"]


@op("as_strided_scatter", "index", NUM, weight=1.0)
def _as_strided_scatter(g, a):
    """src written into a strided window of the storage of ``a`` or of a view of it
    (transposed, sliced, diagonal, expanded): the positions address that storage (issue 7).
    The input is detached and src requires grad only on a contiguous input at offset 0 that
    fills its storage: PyTorch's gradients are wrong elsewhere (its input gradient always;
    tests/ops/test_as_strided_scatter_views.py)."""
    view = g.rng.choice(_STORAGE_VIEWS).format(shape=a.shape)
    text = f"{a.name}.detach(){view}"
    try:
        t = eval(text, g.ns)  # noqa: S307 - PyTorch's tensor, for its storage's geometry
    except Exception:  # noqa: BLE001 - a view this input has not (0-d, too short)
        return None
    if any(s == 0 and n > 1 for s, n in zip(t.stride(), t.shape)):
        storage = t.numel()  # an expanded input is cloned dense first
    else:
        storage = min(t.untyped_storage().nbytes() // max(t.element_size(), 1),
                      _owner_extent(eval(a.name, g.ns)))  # noqa: S307 - as above
    k = g.rng.randint(0, 2)
    size = tuple(g.rng.randint(1, 3) for _ in range(k))
    stride = tuple(g.rng.randint(1, 4) for _ in range(k))
    places = {sum(i * s for i, s in zip(ix, stride)) for ix in np.ndindex(*size)}
    span = max(places) + 1
    if span > storage or len(places) != int(np.prod(size)):
        return None  # (which of two writes to one place lands is unspecified)
    offset = g.rng.randint(0, storage - span)
    rg = (t.is_contiguous() and t.storage_offset() == 0 and storage == t.numel()
          and a.kind == "float" and g.rng.random() < 0.8)
    src = g.fresh(size, a.dtype, requires_grad=rg)
    if g.rng.random() < 0.3 and t.storage_offset() + span <= storage:
        return f"T.as_strided_scatter({text}, {src}, {size}, {stride})"
    return f"T.as_strided_scatter({text}, {src}, {size}, {stride}, {offset})"


def _owner_extent(t):
    """How many storage places the tensor that owns ``t``'s storage (its ``_base``, followed
    to the root) reaches.  Past them the storage is allocation slack: PyTorch's mse_loss,
    smooth_l1_loss, binary_cross_entropy, ... reduce an unreduced buffer and resize it to
    0-d in place, so their 0-d result keeps that buffer's storage (8 places for a 4x2 input;
    seed 20670301), which retrograd's reductions do not have."""
    while t._base is not None:
        t = t._base
    if t.numel() == 0:
        return t.storage_offset()
    return t.storage_offset() + sum((n - 1) * s for n, s in zip(t.shape, t.stride())) + 1


# ------------------------------------------------------------------------------ scans
@op("scan", "reduce", NUM, weight=1.0)
def _scan(g, a):
    d = g.dim(a)
    fn = g.rng.choice(["cumprod", "cummax", "cummin", "logcumsumexp", "diff", "trapezoid",
                       "cumulative_trapezoid"])
    if fn == "cumprod":
        return f"{a.name}.cumprod({d})"
    if fn in ("cummax", "cummin"):
        return f"{a.name}.{fn}({d}){g.rng.choice(['[0]', '.values', '[1]', '.indices'])}"
    if fn == "logcumsumexp":
        return f"{a.name}.logcumsumexp({d})"
    if fn == "diff":
        if g.rng.random() < 0.3:
            b = g.fresh(a.shape[:d % max(a.ndim, 1)] + (1,) + a.shape[d % max(a.ndim, 1) + 1:],
                        a.dtype) if a.ndim else None
            return f"{a.name}.diff(dim={d}, prepend={b})" if b else None
        return f"{a.name}.diff(n={g.rng.choice([1, 2])}, dim={d})"
    if fn == "trapezoid" and g.rng.random() < 0.3:
        return f"T.trapezoid({a.name}, dx={g.scalar(positive=True)}, dim={d})"
    return f"T.{fn}({a.name}, dim={d})"


# ------------------------------------------------------------------------------ sorting, stats
@op("quantile", "reduce", NUM, weight=1.0)
def _quantile(g, a):
    fn = g.rng.choice(["msort", "median", "nanmedian", "mode", "quantile", "nanquantile"])
    if fn == "msort":
        return f"{a.name}.msort()" if a.ndim else None
    if fn in ("median", "nanmedian", "mode"):
        if fn != "mode" and g.rng.random() < 0.3:
            return f"{a.name}.{fn}()"
        keep = ", keepdim=True" if g.rng.random() < 0.3 else ""
        return f"{a.name}.{fn}({g.dim(a)}{keep}){g.rng.choice(['[0]', '.values', '[1]'])}"
    q = g.rng.choice(["0.5", "0.25", "0.0", "1.0", "T.tensor([0.1, 0.9], dtype=T.float64)"])
    if "tensor" in q and a.dtype != "float64":
        q = "0.3"
    interp = g.rng.choice(["linear", "lower", "higher", "midpoint", "nearest"])
    dim = "" if g.rng.random() < 0.3 else f", dim={g.dim(a)}"
    return f"{a.name}.{fn}({q}{dim}, interpolation='{interp}')"


@op("statistics", "reduce", FLOAT, weight=1.0)
def _statistics(g, a):
    fn = g.rng.choice(["var_mean", "std_mean", "aminmax", "nansum", "nanmean", "dist",
                       "renorm", "cov", "corrcoef", "sum_to_size", "count_nonzero"])
    dim = "" if g.rng.random() < 0.3 else f"dim={g.dim(a)}"
    if fn in ("var_mean", "std_mean"):
        c = f", correction={g.rng.choice([0, 1])}" if dim and g.rng.random() < 0.5 else ""
        return f"T.{fn}({a.name}{', ' + dim if dim else ''}{c})[{g.rng.randint(0, 1)}]"
    if fn == "aminmax":
        return f"{a.name}.aminmax({dim}).{g.rng.choice(['min', 'max'])}"
    if fn in ("nansum", "nanmean", "count_nonzero"):
        return f"{a.name}.{fn}({dim})"
    if fn == "dist":
        b = g.other(a)
        return f"T.dist({a.name}, {b}, p={g.rng.choice([1, 2, 3, 0.5])})" if b else None
    if fn == "renorm":
        if a.ndim < 1:
            return None
        return f"{a.name}.renorm({g.rng.choice([1, 2])}, {g.dim(a)}, " \
               f"{g.rng.choice([0.5, 1.0])})"
    if fn in ("cov", "corrcoef"):
        return f"T.{fn}({a.name})" if a.ndim <= 2 else None
    # sum_to_size: a shape a broadcasts from (some sizes made 1)
    shape = tuple(1 if g.rng.random() < 0.5 else s for s in a.shape)
    return f"{a.name}.sum_to_size({shape!r})"


# ------------------------------------------------------------------------------ linalg
def _square(g, a):
    """A square (batch of) matrices from ``a``: itself when square, else a @ a.mT."""
    if a.shape[-1] == a.shape[-2]:
        return a.name, a.shape[-1]
    return f"({a.name} @ {a.name}.mT)", a.shape[-2]


@op("linalg_square", "linalg", FLOAT, min_ndim=2, weight=1.5)
def _linalg_square(g, a):
    m, n = _square(g, a)
    eye = f"T.eye({n}, dtype={a.name}.dtype)"
    spd = f"({m} @ {m}.mT + {eye})"        # symmetric positive definite
    well = f"({m} + {n + 1} * {eye})"      # diagonally dominant enough: invertible
    fn = g.rng.choice(["det", "slogdet", "logdet", "inv", "solve", "cholesky", "eigvalsh",
                       "svdvals", "matrix_norm", "matrix_power", "matrix_exp", "pinv",
                       "solve_triangular", "cond", "lu_solve", "qr_product"])
    if fn == "det":
        return f"T.linalg.det({m})" if g.rng.random() < 0.5 else f"{m}.det()"
    if fn == "slogdet":
        return f"T.linalg.slogdet({well})[{g.rng.randint(0, 1)}]"
    if fn == "logdet":
        return f"T.logdet({spd})"
    if fn == "inv":
        return f"T.linalg.inv({well})" if g.rng.random() < 0.7 else f"{well}.inverse()"
    if fn == "solve":
        b = g.fresh(a.shape[:-2] + (n, g.rng.choice([1, 2])), a.dtype)
        return f"T.linalg.solve({well}, {b}, left={g.rng.random() < 0.8})" \
            if g.rng.random() < 0.8 else f"T.linalg.solve({well}, {b}[..., 0])"
    if fn == "cholesky":
        return f"T.linalg.cholesky({spd}, upper={g.rng.random() < 0.3})"
    if fn == "eigvalsh":
        return f"T.linalg.eigvalsh({m} + {m}.mT)"
    if fn == "svdvals":
        return f"T.linalg.svdvals({a.name})"
    if fn == "matrix_norm":
        return f"T.linalg.matrix_norm({a.name}, ord={g.rng.choice(['fro', 'nuc', 1, -1])})"
    if fn == "matrix_power":
        p = g.rng.choice([0, 1, 2, 3, -1])
        return f"T.linalg.matrix_power({well if p < 0 else m}, {p})"
    if fn == "matrix_exp":
        return f"T.linalg.matrix_exp({m}.mul(0.3))"
    if fn == "pinv":
        return f"T.linalg.pinv({well})"
    if fn == "solve_triangular":
        b = g.fresh(a.shape[:-2] + (n, 2), a.dtype)
        upper = g.rng.random() < 0.5
        tri = f"{well}.{'triu' if upper else 'tril'}()"
        return f"T.linalg.solve_triangular({tri}, {b}, upper={upper}, " \
               f"unitriangular={g.rng.random() < 0.2})"
    if fn == "cond":
        return f"T.linalg.cond({well})"
    if fn == "lu_solve":
        b = g.fresh(a.shape[:-2] + (n, 2), a.dtype)
        return f"T.linalg.lu_solve(*T.linalg.lu_factor({well}), {b})"
    return f"(lambda qr: qr[0] @ qr[1])(T.linalg.qr({a.name}))"  # invariant of the signs


@op("linalg_products", "linalg", FLOAT, min_ndim=1, weight=1.0)
def _linalg_products(g, a):
    fn = g.rng.choice(["vector_norm", "cross", "kron", "tensordot", "mv", "inner", "vdot",
                       "multi_dot", "vecdot", "addmv", "addr", "baddbmm", "cdist"])
    k = a.shape[-1]
    if fn == "vector_norm":
        ord_ = g.rng.choice([2, 1, 3, "float('inf')", 0.5])
        return f"T.linalg.vector_norm({a.name}, ord={ord_}, dim={g.dim(a)})"
    if fn == "cross":
        if 3 not in a.shape:
            return None
        d = a.shape.index(3)
        return f"T.linalg.cross({a.name}, {g.fresh(a.shape, a.dtype)}, dim={d})"
    if fn == "kron":
        return f"T.kron({a.name}, {g.fresh((2,) * min(a.ndim, 2), a.dtype)})"
    if fn == "tensordot":
        return f"T.tensordot({a.name}, {g.fresh((k, 2), a.dtype)}, dims=1)"
    if fn == "inner":
        return f"T.inner({a.name}, {g.fresh((2, k), a.dtype)})"
    if fn == "vecdot":
        return f"T.linalg.vecdot({a.name}, {g.fresh((k,), a.dtype)})"
    if fn == "cdist":
        if a.ndim != 2:
            return None
        return f"T.cdist({a.name}, {g.fresh((2, k), a.dtype)}, p={g.rng.choice([1.0, 2.0])})"
    if a.ndim == 1:
        if fn == "vdot":
            return f"T.vdot({a.name}, {g.fresh((k,), a.dtype)})"
        if fn == "addr":
            c = g.fresh((2, k), a.dtype)
            return f"T.addr({c}, {g.fresh((2,), a.dtype)}, {a.name}, beta=0.5, alpha=2.0)"
        return None
    if a.ndim == 2:
        if fn == "mv":
            return f"T.mv({a.name}, {g.fresh((k,), a.dtype)})"
        if fn == "addmv":
            return f"T.addmv({g.fresh((a.shape[0],), a.dtype)}, {a.name}, " \
                   f"{g.fresh((k,), a.dtype)}, beta={g.scalar()}, alpha={g.scalar()})"
        if fn == "multi_dot":
            return f"T.linalg.multi_dot([{g.fresh((2, a.shape[0]), a.dtype)}, {a.name}, " \
                   f"{g.fresh((k, 3), a.dtype)}])"
    if a.ndim == 3 and fn == "baddbmm":
        c = g.fresh((a.shape[0], a.shape[1], 2), a.dtype)
        return f"T.baddbmm({c}, {a.name}, {g.fresh((a.shape[0], k, 2), a.dtype)}, " \
               f"beta={g.scalar()}, alpha={g.scalar()})"
    return None


# ------------------------------------------------------------------------------ normalization
@op("normalization", "reduce", FLOAT, min_ndim=1, weight=1.0)
def _normalization(g, a):
    fn = g.rng.choice(["layer_norm", "rms_norm", "normalize", "group_norm", "batch_norm",
                       "instance_norm", "local_response_norm"])
    if fn in ("layer_norm", "rms_norm"):
        k = g.rng.randint(1, a.ndim)
        shape = a.shape[-k:]
        w = f", weight={g.fresh(shape, a.dtype)}" if g.rng.random() < 0.5 else ""
        b = f", bias={g.fresh(shape, a.dtype)}" if fn == "layer_norm" and w and \
            g.rng.random() < 0.5 else ""
        eps = f", eps={g.rng.choice([1e-5, 0.1])}" if g.rng.random() < 0.5 else ""
        return f"{F}.{fn}({a.name}, {shape!r}{w}{b}{eps})"
    if fn == "normalize":
        return f"{F}.normalize({a.name}, p={g.rng.choice([2.0, 1.0])}, dim={g.dim(a)})"
    if a.ndim < 2:
        return None
    c = a.shape[1]
    if fn == "group_norm":
        groups = g.rng.choice([1, c]) if c else 1
        w = f", weight={g.fresh((c,), a.dtype)}, bias={g.fresh((c,), a.dtype)}" \
            if g.rng.random() < 0.5 else ""
        return f"{F}.group_norm({a.name}, {groups}{w})"
    if fn == "batch_norm":
        w = f", weight={g.fresh((c,), a.dtype)}, bias={g.fresh((c,), a.dtype)}" \
            if g.rng.random() < 0.5 else ""
        return f"{F}.batch_norm({a.name}, None, None{w}, training=True)"
    if fn == "instance_norm":
        return f"{F}.instance_norm({a.name})" if a.ndim == 3 else None
    return f"{F}.local_response_norm({a.name}, {g.rng.choice([1, 2])})" if a.ndim == 3 else None


# ------------------------------------------------------------------------------ padding, conv
@op("pad", "shape", NUM, weight=1.0)
def _pad(g, a):
    mode = g.rng.choice(["constant", "constant", "reflect", "replicate", "circular"])
    n = g.rng.randint(1, max(1, min(a.ndim, 3) if mode == "constant" else a.ndim - 1))
    pads = [g.rng.choice([0, 1, 2, -1] if mode == "constant" else [0, 1, 2]) for _ in range(2 * n)]
    if mode == "constant":
        return f"{F}.pad({a.name}, {tuple(pads)!r}, value={g.scalar()})"
    if a.ndim < 2 or a.kind != "float":
        return None
    return f"{F}.pad({a.name}, {tuple(pads)!r}, mode='{mode}')"


@op("conv1d", "linalg", FLOAT, min_ndim=2, weight=1.0)
def _conv1d(g, a):
    """(C, L) or (N, C, L) input: conv1d/conv_transpose1d with a fresh weight, 1-d pooling."""
    if a.ndim > 3:
        return None
    c, length = a.shape[-2], a.shape[-1]
    fn = g.rng.choice(["conv1d", "conv_transpose1d", "avg_pool1d", "max_pool1d",
                       "adaptive_avg_pool1d", "adaptive_max_pool1d", "lp_pool1d"])
    k = g.rng.randint(1, max(1, min(3, length)))
    if fn in ("conv1d", "conv_transpose1d"):
        o = g.rng.choice([1, 2])
        w = g.fresh((c, o, k) if fn == "conv_transpose1d" else (o, c, k), a.dtype)
        bias = f", {g.fresh((o,), a.dtype)}" if g.rng.random() < 0.5 else ", None"
        stride = g.rng.choice([1, 2])
        pad = g.rng.choice([0, 1]) if k > 1 else 0
        extra = f", stride={stride}, padding={pad}"
        if fn == "conv1d" and g.rng.random() < 0.3:
            extra += ", dilation=2"
        return f"{F}.{fn}({a.name}, {w}{bias}{extra})"
    if fn in ("avg_pool1d", "max_pool1d", "lp_pool1d"):
        stride = g.rng.choice([1, 2, k])
        pad = f", padding={g.rng.choice([0, k // 2])}" if fn != "lp_pool1d" else ""
        extra = ", ceil_mode=True" if g.rng.random() < 0.2 else ""
        if fn == "lp_pool1d":
            return f"{F}.lp_pool1d({a.name}, {g.rng.choice([1, 2])}, {k}, stride={stride})"
        if fn == "avg_pool1d" and g.rng.random() < 0.3:
            extra += ", count_include_pad=False"
        return f"{F}.{fn}({a.name}, {k}, stride={stride}{pad}{extra})"
    return f"{F}.{fn}({a.name}, {g.rng.randint(1, 3)})"


# ------------------------------------------------------------------------------ arranging
@op("arrange_more", "shape", ANY, weight=1.0)
def _arrange_more(g, a):
    fn = g.rng.choice(["repeat_interleave", "unfold", "dstack", "column_stack", "block_diag",
                       "diagflat", "cartesian_prod", "broadcast_tensors", "select",
                       "combinations", "split_with_sizes", "heaviside", "logical"])
    if fn == "repeat_interleave":
        if a.ndim and g.rng.random() < 0.5:
            d = g.dim(a)
            reps = [g.rng.randint(0, 2) for _ in range(a.shape[d])]
            return f"{a.name}.repeat_interleave(T.tensor({reps!r}), dim={d})"
        return f"{a.name}.repeat_interleave({g.rng.randint(1, 3)})"
    if fn == "unfold":
        if not a.ndim:
            return None
        d = g.dim(a)
        return f"{a.name}.unfold({d}, {g.rng.randint(1, 2)}, {g.rng.randint(1, 2)})"
    if fn in ("dstack", "column_stack"):
        b = g.other(a, same_shape=True)
        return f"T.{fn}([{a.name}, {b}])" if b else None
    if fn == "block_diag":
        if a.ndim > 2:
            return None
        return f"T.block_diag({a.name}, {g.fresh((2, 1), a.dtype)})"
    if fn == "diagflat":
        return f"T.diagflat({a.name}, {g.rng.randint(-1, 1)})"
    if fn == "cartesian_prod":
        if a.ndim != 1:
            return None
        return f"T.cartesian_prod({a.name}, {g.fresh((2,), a.dtype)})"
    if fn == "combinations":
        if a.ndim != 1:
            return None
        return f"T.combinations({a.name}, r={g.rng.choice([1, 2])}, " \
               f"with_replacement={g.rng.random() < 0.3})"
    if fn == "broadcast_tensors":
        b = g.other(a)
        return f"T.broadcast_tensors({b}, {a.name})[1]" if b else None
    if fn == "select":
        if not a.ndim or not a.shape[g.dim(a)]:
            return None
        d = g.dim(a)
        return f"{a.name}.select({d}, {g.rng.randrange(-a.shape[d], a.shape[d])})"
    if fn == "split_with_sizes":
        if not a.ndim:
            return None
        d = g.dim(a)
        size = a.shape[d]
        cut = g.rng.randint(0, size)
        return f"{a.name}.split_with_sizes([{cut}, {size - cut}], dim={d})[{g.rng.randint(0, 1)}]"
    if fn == "heaviside":
        b = g.other(a)
        return f"T.heaviside({a.name}, {b}.to({a.name}.dtype))" if b else None
    b = g.other(a)
    return f"T.{g.rng.choice(['logical_and', 'logical_or', 'logical_xor'])}({a.name}, {b})" \
        if b else None


# ------------------------------------------------------------------------------ more in place
def more_inplace_statement(g, a):
    """In-place forms beyond ops_table.inplace_statement: indexed ones (index_add_,
    scatter_add_, index_fill_, masked_scatter_), binary ones (remainder_, fmod_, atan2_,
    hypot_, copysign_, clamp_max_, addcdiv_, lerp_ by a tensor), unary ones (trunc_, ceil_,
    frac_, tan_, sinh_...) and in-place view ops (t_, transpose_, unsqueeze_, squeeze_)."""
    r = g.rng.random()
    if r < 0.3 and a.ndim and a.shape[0]:
        size = a.shape[0]
        k = g.rng.randint(1, size)
        fn = g.rng.choice(["index_add_", "index_fill_", "scatter_add_", "masked_scatter_",
                           "index_copy_"])
        if fn == "index_fill_":
            return fn, f"{a.name}.index_fill_(0, {_index_leaf(g, (k,), size)}, {g.scalar()})"
        if fn == "masked_scatter_":
            m = g.other(a, into=True)
            if m is None:
                return None
            return fn, f"{a.name}.masked_scatter_({m} > 0, {g.fresh((a.numel,), a.dtype)})"
        shape = (k,) + a.shape[1:]
        if fn == "scatter_add_":
            idx = _index_leaf(g, shape, size)
            return fn, f"{a.name}.scatter_add_(0, {idx}, {g.fresh(shape, a.dtype)})"
        idx = _index_leaf(g, (k,), size, distinct_along=0 if fn == "index_copy_" else None)
        return fn, f"{a.name}.{fn}(0, {idx}, {g.fresh(shape, a.dtype)})"
    if r < 0.6:
        fn = g.rng.choice(["remainder_", "fmod_", "atan2_", "hypot_", "copysign_",
                           "clamp_max_", "addcdiv_", "lerp_", "xlogy_", "float_power_"])
        b = g.other(a, into=True)
        if b is None:
            return None
        if fn in ("remainder_", "fmod_"):
            return fn, f"{a.name}.{fn}({b}.abs().add(0.5))"
        if fn == "addcdiv_":
            return fn, f"{a.name}.addcdiv_({b}, {b}.abs().add(0.5), value={g.scalar()})"
        if fn == "lerp_":
            return fn, f"{a.name}.lerp_({b}, {g.other(a, into=True) or 0.5})"
        if fn == "xlogy_":
            return fn, f"{a.name}.xlogy_({b}.abs().add(0.5))"
        if fn == "float_power_":
            return fn, f"{a.name}.abs_().add_(0.5).float_power_({b})"
        return fn, f"{a.name}.{fn}({b})"
    if r < 0.85:
        fn = g.rng.choice(["trunc_", "ceil_", "frac_", "tan_", "sinh_", "cosh_", "atan_",
                           "erf_", "log2_", "exp2_", "sgn_", "deg2rad_", "nan_to_num_",
                           "logit_", "hardtanh_", "leaky_relu_", "elu_", "cumsum_", "tril_"])
        if fn in ("hardtanh_", "leaky_relu_", "elu_"):
            return fn, f"{F}.{fn}({a.name})"
        if fn == "cumsum_":
            return fn, f"{a.name}.cumsum_({g.dim(a)})"
        if fn == "tril_":
            return (fn, f"{a.name}.tril_({g.rng.randint(-1, 1)})") if a.ndim >= 2 else None
        if fn == "log2_":
            return fn, f"{a.name}.abs_().add_(0.5).log2_()"
        if fn == "logit_":
            return fn, f"{a.name}.sigmoid_().logit_()"
        return fn, f"{a.name}.{fn}()"
    fn = g.rng.choice(["t_", "transpose_", "unsqueeze_", "squeeze_", "swapaxes_"])
    if fn == "t_":
        return (fn, f"{a.name}.t_()") if a.ndim <= 2 else None
    if fn == "unsqueeze_":
        return fn, f"{a.name}.unsqueeze_({g.rng.randint(-a.ndim - 1, a.ndim)})"
    if fn == "squeeze_":
        return fn, f"{a.name}.squeeze_({g.dim(a)})" if a.ndim else f"{a.name}.squeeze_()"
    if not a.ndim:
        return None
    return fn, f"{a.name}.{fn}({g.dim(a)}, {g.dim(a)})"
