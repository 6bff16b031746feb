"""The fuzzer's op table: every op retrograd has, and how to call it on a random value.

One record per op: its name, its kind, which dtype kinds its first input may have, the least
number of dimensions it needs, whether the result is a view of that input, and ``build``:
``build(g, a) -> expression text or None`` where ``a`` is the chosen input (a ``Val``: name,
shape, dtype) and ``g`` the generator (``g.rng``, ``g.dim(a)``, ``g.other(a)``, ``g.fresh()``...).
``None`` means "not applicable to this input".  The simple families (unary, binary,
reductions) are plain name lists, so the table can later be filled from the op registry.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

FLOAT = frozenset({"float"})
NUM = frozenset({"float", "int"})
ANY = frozenset({"float", "int", "bool"})


@dataclasses.dataclass(frozen=True)
class OpSpec:
    name: str
    kind: str                # unary, binary, ternary, reduce, view, shape, index, linalg, inplace
    build: Callable
    accepts: frozenset = FLOAT
    min_ndim: int = 0
    view: bool = False       # the result is a view of the first input
    weight: float = 1.0


TABLE: list[OpSpec] = []


def op(name, kind, accepts=FLOAT, min_ndim=0, view=False, weight=1.0):
    def register(build):
        TABLE.append(OpSpec(name, kind, build, accepts, min_ndim, view, weight))
        return build
    return register


# Inputs outside an op's domain give NaN (and NumPy warnings); most of the time the input is
# moved into the domain first, sometimes not (NaN propagation is worth testing too).
DOMAIN = {
    "pos": "{a}.abs().add(0.5)",
    "unit": "{a}.tanh().mul(0.9)",
    "ge1": "{a}.abs().add(1.25)",
    "prob": "{a}.sigmoid()",
}


def in_domain(g, a, domain):
    if domain is None or g.rng.random() < 0.1:
        return a.name
    return DOMAIN[domain].format(a=a.name)


# ------------------------------------------------------------------------------ unary
UNARY = {  # name: domain
    "neg": None, "abs": None, "sign": None, "exp": None, "log": "pos", "sqrt": "pos",
    "reciprocal": "pos", "sin": None, "cos": None, "tanh": None, "sigmoid": None, "relu": None,
    "log1p": "pos", "expm1": None, "rsqrt": "pos", "log2": "pos", "log10": "pos", "exp2": None,
    "tan": "unit", "atan": None, "asin": "unit", "acos": "unit", "sinh": None, "cosh": None,
    "floor": None, "ceil": None, "trunc": None, "frac": None, "round": None, "square": None,
    "erf": None, "erfc": None,
}

# The rest of the elementwise ops come from retrograd's op registry: every one-input op of
# the unary/special modules and every two-input op of the binary module that is a Tensor
# method, so an op added there is fuzzed without an edit here.  REGISTRY_DOMAIN gives the
# inputs that keep them finite (as for the lists above); REGISTRY_SKIP the ones that are not
# plain x.f() / x.f(y): they need more arguments, return tuples, or return x itself (their
# view/identity semantics are not elementwise ones).
REGISTRY_DOMAIN = {
    "acosh": "ge1", "atanh": "unit", "logit": "prob", "erfinv": "unit", "lgamma": "pos",
    "digamma": "pos", "fmod": "pos", "float_power": "pos", "true_divide": "pos",
}
REGISTRY_SKIP = {"fill", "frexp", "mvlgamma", "polygamma", "real", "conj", "resolve_conj",
                 "resolve_neg", "positive", "lerp", "addcmul", "addcdiv", "rsub", "angle"}
REGISTRY_UNARY: list = []
REGISTRY_BINARY: list = []


def _from_registry():
    import retrograd  # noqa: F401  (importing the package fills the registry)
    from retrograd.ops import registry

    for e in registry.entries():
        name = e.key
        if e.inplace_of or name in REGISTRY_SKIP or name not in e.methods:
            continue
        if e.kind in ("unary", "special") and name not in UNARY:
            REGISTRY_UNARY.append(name)
        elif e.kind == "binary":
            REGISTRY_BINARY.append(name)


_from_registry()
# Functions both libraries have at top level (T.sin(x) as well as x.sin()); filled by runner.
TOPLEVEL: set = set()


def _unary(name, domain):
    def build(g, a):
        x = in_domain(g, a, domain)
        if name in TOPLEVEL and g.rng.random() < 0.3:
            return f"T.{name}({x})"
        return f"({x}).{name}()" if x != a.name else f"{x}.{name}()"
    return build


for _n, _d in UNARY.items():
    op(_n, "unary", accepts=ANY if _n in ("neg", "abs", "sign") else NUM)(_unary(_n, _d))
for _n in REGISTRY_UNARY:
    op(_n, "unary", accepts=NUM, weight=0.5)(_unary(_n, REGISTRY_DOMAIN.get(_n)))


@op("clamp", "unary", NUM)
def _clamp(g, a):
    lo = round(g.rng.uniform(-1, 0), 1)
    hi = round(g.rng.uniform(0, 1), 1)
    form = g.rng.randrange(3)
    return [f"{a.name}.clamp({lo}, {hi})", f"{a.name}.clamp(min={lo})",
            f"T.clamp({a.name}, max={hi})"][form]


@op("to", "unary", ANY, weight=0.5)
def _to(g, a):
    return g.rng.choice([f"{a.name}.double()", f"{a.name}.float()", f"{a.name}.to(T.float64)",
                         f"{a.name}.long()", f"{a.name}.type_as({g.other(a, any_shape=True)})"])


# ------------------------------------------------------------------------------ binary
BINARY = {  # name: (method or operator, domain of the second input)
    "add": ("+", None), "sub": ("-", None), "mul": ("*", None), "div": ("/", "pos"),
    "pow": ("**", None), "maximum": (None, None), "minimum": (None, None),
    "atan2": (None, None), "hypot": (None, None), "logaddexp": (None, None),
    "xlogy": (None, "pos"), "remainder": ("%", "pos"), "clamp_min": (None, None),
    "clamp_max": (None, None), "eq": ("==", None), "ne": ("!=", None), "lt": ("<", None),
    "le": ("<=", None), "gt": (">", None), "ge": (">=", None),
}
SCALAR_OK = {"add", "sub", "mul", "div", "pow", "remainder", "eq", "ne", "lt", "le", "gt", "ge",
             "clamp_min", "clamp_max", "xlogy"}


def _binary(name, sym, domain):
    def build(g, a):
        x = a.name
        if name == "pow":
            x = in_domain(g, a, "pos")
        if name in SCALAR_OK and g.rng.random() < 0.35:
            b = g.scalar(positive=domain == "pos" or name == "pow")
            if sym and g.rng.random() < 0.5:
                if g.rng.random() < 0.3 and name not in ("pow",):
                    return f"{b} {sym} ({x})"  # reflected
                return f"({x}) {sym} {b}"
            return f"({x}).{name}({b})"
        b = g.other(a)
        if b is None:
            return None
        if domain is not None:
            b = DOMAIN[domain].format(a=b) if g.rng.random() < 0.9 else b
        if sym and g.rng.random() < 0.5:
            return f"({x}) {sym} ({b})"
        if name in TOPLEVEL and g.rng.random() < 0.3:
            return f"T.{name}({x}, {b})"
        if name in ("add", "sub") and g.rng.random() < 0.3:
            return f"({x}).{name}({b}, alpha={g.scalar()})"
        return f"({x}).{name}({b})"
    return build


for _n, (_s, _d) in BINARY.items():
    op(_n, "binary", accepts=NUM)(_binary(_n, _s, _d))
REGISTRY_BINARY[:] = [n for n in REGISTRY_BINARY if n not in BINARY]
for _n in REGISTRY_BINARY:
    op(_n, "binary", accepts=NUM, weight=0.5)(_binary(_n, None, REGISTRY_DOMAIN.get(_n)))


@op("where", "ternary", NUM)
def _where(g, a):
    b = g.other(a)
    c = g.other(a, any_shape=False)
    if b is None or c is None:
        return None
    if g.rng.random() < 0.3:
        return f"T.where({c} > 0, {a.name}, {g.scalar()})"
    return f"T.where({c} > 0, {a.name}, {b})"


@op("lerp", "ternary", FLOAT)
def _lerp(g, a):
    b = g.other(a)
    if b is None:
        return None
    w = g.other(a) if g.rng.random() < 0.4 else g.scalar()
    return f"{a.name}.lerp({b}, {w})" if w is not None else None


@op("addcmul", "ternary", FLOAT)
def _addcmul(g, a):
    b, c = g.other(a), g.other(a)
    if b is None or c is None:
        return None
    fn = g.rng.choice(["addcmul", "addcdiv"])
    if fn == "addcdiv":
        c = DOMAIN["pos"].format(a=c)
    return f"{a.name}.{fn}({b}, {c}, value={g.scalar()})"


@op("masked_fill", "binary", ANY)
def _masked_fill(g, a):
    m = g.other(a)
    if m is None:
        return None
    return f"{a.name}.masked_fill({m} > 0, {g.scalar()})"


# ------------------------------------------------------------------------------ reductions
def _dim_kw(g, a, keepdim=True, allow_none=True, tuple_ok=False):
    if allow_none and g.rng.random() < 0.3:
        return ""
    if tuple_ok and a.ndim >= 2 and g.rng.random() < 0.3:
        dims = g.rng.sample(range(a.ndim), 2)
        s = f"dim=({dims[0]}, {dims[1] - a.ndim})"
    else:
        s = f"dim={g.dim(a)}"
    if keepdim and g.rng.random() < 0.5:
        s += ", keepdim=True"
    return s


REDUCE = ["sum", "mean", "prod", "amax", "amin", "var", "std", "logsumexp", "norm"]


def _reduce(name):
    def build(g, a):
        if name == "logsumexp":
            return f"{a.name}.logsumexp({_dim_kw(g, a, allow_none=False)})"
        if name in ("var", "std") and g.rng.random() < 0.3:
            kw = _dim_kw(g, a, allow_none=False)
            return f"{a.name}.{name}({kw}, correction={g.rng.choice([0, 1, 2])})"
        if name == "norm" and g.rng.random() < 0.5:
            p = g.rng.choice([1, 3, "float('inf')"])
            return f"{a.name}.norm(p={p}, {_dim_kw(g, a, allow_none=False)})"
        return f"{a.name}.{name}({_dim_kw(g, a, tuple_ok=name != 'prod')})"
    return build


for _n in REDUCE:
    op(_n, "reduce", accepts=FLOAT if _n in ("mean", "var", "std", "logsumexp", "norm")
       else NUM)(_reduce(_n))


@op("max", "reduce", NUM)
def _max(g, a):
    fn = g.rng.choice(["max", "min"])
    if g.rng.random() < 0.3:
        return f"{a.name}.{fn}()"
    kw = _dim_kw(g, a, allow_none=False)
    return f"{a.name}.{fn}({kw}){g.rng.choice(['[0]', '.values', '[1]', '.indices'])}"


@op("sort", "reduce", NUM, min_ndim=0)
def _sort(g, a):
    d = g.dim(a)
    which = g.rng.choice(["[0]", "[1]", ".values"])
    k = g.rng.choice(["sort", "topk", "kthvalue"])
    size = a.shape[d] if a.ndim else 1
    if k == "sort":
        return f"{a.name}.sort(dim={d}, descending={g.rng.random() < 0.5}){which}"
    if k == "topk":
        return f"{a.name}.topk({g.rng.randint(0, size)}, dim={d}){which}"
    return f"{a.name}.kthvalue({g.rng.randint(1, max(size, 1))}, dim={d}){which}"


@op("argmax", "reduce", NUM, weight=0.3)
def _argmax(g, a):
    fn = g.rng.choice(["argmax", "argmin", "argsort"])
    if fn == "argsort":
        return f"{a.name}.argsort(dim={g.dim(a)})"
    return f"{a.name}.{fn}({_dim_kw(g, a)})"


@op("cumsum", "reduce", NUM)
def _cumsum(g, a):
    return f"{a.name}.cumsum(dim={g.dim(a)})"


@op("softmax", "reduce", FLOAT)
def _softmax(g, a):
    fn = g.rng.choice(["softmax", "log_softmax"])
    if g.rng.random() < 0.3:
        return f"T.{fn}({a.name}, dim={g.dim(a)})"
    return f"{a.name}.{fn}(dim={g.dim(a)})"


@op("all", "reduce", ANY, weight=0.2)
def _all(g, a):
    return f"({a.name} > 0).{g.rng.choice(['all', 'any'])}({_dim_kw(g, a)})"


# ------------------------------------------------------------------------------ views, shapes
def random_shape(g, numel, allow_minus=True):
    """A random shape with ``numel`` elements (sometimes with one -1)."""
    factors = []
    n = numel
    p = 2
    while n > 1 and p <= n:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    if numel == 0:
        factors = [0] + [g.rng.choice([1, 2, 3])]
    ndim = g.rng.randint(1, 3)
    dims = [1] * ndim
    for f in factors:
        dims[g.rng.randrange(ndim)] *= f
    if allow_minus and numel > 0 and g.rng.random() < 0.3:
        dims[g.rng.randrange(ndim)] = -1
    return tuple(dims)


@op("reshape", "view", ANY, view=True, weight=1.5)
def _reshape(g, a):
    shape = random_shape(g, a.numel)
    fn = g.rng.choice(["reshape", "view", "view"])
    return f"{a.name}.{fn}{shape!r}" if len(shape) > 1 else f"{a.name}.{fn}({shape[0]})"


@op("flatten", "view", ANY, view=True)
def _flatten(g, a):
    if g.rng.random() < 0.3 or a.ndim == 0:
        return f"{a.name}.flatten()"
    s = g.dim(a)
    e = g.rng.randrange(s % a.ndim, a.ndim)
    return f"{a.name}.flatten({s}, {e})"


@op("unflatten", "view", ANY, min_ndim=1, view=True, weight=0.5)
def _unflatten(g, a):
    d = g.dim(a)
    return f"{a.name}.unflatten({d}, {random_shape(g, a.shape[d], allow_minus=False)!r})"


@op("transpose", "view", ANY, min_ndim=1, view=True, weight=1.5)
def _transpose(g, a):
    if a.ndim <= 2 and g.rng.random() < 0.3:
        return f"{a.name}.t()"
    if a.ndim == 2 and g.rng.random() < 0.2:
        return f"{a.name}.T"
    if a.ndim >= 2 and g.rng.random() < 0.2:
        return f"{a.name}.mT"
    fn = g.rng.choice(["transpose", "swapaxes", "movedim"])
    return f"{a.name}.{fn}({g.dim(a)}, {g.dim(a)})"


@op("permute", "view", ANY, min_ndim=1, view=True)
def _permute(g, a):
    perm = list(range(a.ndim))
    g.rng.shuffle(perm)
    return f"{a.name}.permute({', '.join(map(str, perm))})"


@op("squeeze", "view", ANY, view=True)
def _squeeze(g, a):
    r = g.rng.random()
    if r < 0.3:
        return f"{a.name}.squeeze()"
    if r < 0.6 and a.ndim:
        return f"{a.name}.squeeze({g.dim(a)})"
    return f"{a.name}.unsqueeze({g.rng.randint(-a.ndim - 1, a.ndim)})"


@op("expand", "view", ANY, view=True)
def _expand(g, a):
    shape = [s if s != 1 else g.rng.choice([1, 2, 3]) for s in a.shape]
    if g.rng.random() < 0.5:
        shape = [g.rng.choice([1, 2])] + shape
    if shape and g.rng.random() < 0.3:
        shape[-1] = -1
    fn = g.rng.choice(["expand", "broadcast_to"])
    if fn == "broadcast_to":
        shape = [a.shape[i - len(shape) + a.ndim] if s == -1 else s for i, s in enumerate(shape)]
        return f"{a.name}.broadcast_to({tuple(shape)!r})"
    return f"{a.name}.expand({', '.join(map(str, shape))})" if shape else f"{a.name}.expand(())"


@op("narrow", "view", ANY, min_ndim=1, view=True)
def _narrow(g, a):
    d = g.dim(a)
    size = a.shape[d]
    start = g.rng.randint(0, size)
    return f"{a.name}.narrow({d}, {start}, {g.rng.randint(0, size - start)})"


@op("chunk", "view", ANY, min_ndim=1, view=True)
def _chunk(g, a):
    d = g.dim(a)
    size = a.shape[d]
    fn = g.rng.choice(["chunk", "split", "unbind"])
    if fn == "unbind":
        if size == 0:
            return None
        return f"{a.name}.unbind({d})[{g.rng.randrange(size)}]"
    n = g.rng.randint(1, 3)
    # chunk(n) gives pieces of ceil(size / n), split(n) pieces of n: an index past the last
    # piece raises IndexError in both (drawn now and then, dropped by the generator)
    step = math.ceil(size / n) if fn == "chunk" and size else n
    pieces = max(1, math.ceil(size / step)) if size else 1
    return f"{a.name}.{fn}({n}, dim={d})[{g.rng.randrange(pieces)}]"


@op("diagonal", "view", ANY, min_ndim=2, view=True, weight=0.5)
def _diagonal(g, a):
    d1, d2 = g.rng.sample(range(a.ndim), 2)
    return f"{a.name}.diagonal({g.rng.randint(-1, 1)}, {d1}, {d2})"


@op("getitem", "view", ANY, min_ndim=1, view=True, weight=2.5)
def _getitem(g, a):
    items = []
    for size in a.shape[:g.rng.randint(1, a.ndim)]:
        r = g.rng.random()
        if r < 0.35 and size:
            items.append(str(g.rng.randrange(-size, size)))
        elif r < 0.7:
            lo = g.rng.randint(0, size)
            items.append(f"{lo}:{g.rng.randint(lo, size)}" + (":2" if g.rng.random() < 0.3 else ""))
        elif r < 0.8:
            items.append("None")
        elif r < 0.9:
            items.append("...")
            break
        else:
            items.append(":")
    if len(items) == 1 and items[0] == "...":
        items.append("None")
    return f"{a.name}[{', '.join(items)}]"


@op("index", "index", ANY, min_ndim=1)
def _index(g, a):
    d = g.dim(a)
    size = a.shape[d]
    if size == 0:
        return None
    idx = [g.rng.randrange(size) for _ in range(g.rng.randint(1, 4))]
    r = g.rng.random()
    if r < 0.3:
        return f"{a.name}[T.tensor({idx!r})]"
    if r < 0.5:
        return f"{a.name}[{a.name} > 0]"
    if r < 0.65:
        return f"{a.name}.masked_select({a.name} > 0)"
    if r < 0.85:
        return f"{a.name}.index_select({d}, T.tensor({idx!r}))"
    shape = list(a.shape)
    shape[d] = g.rng.randint(1, 3)
    index = g.fresh_index(shape, size)
    return f"{a.name}.gather({d}, {index})"


@op("flip", "shape", ANY, min_ndim=1)
def _flip(g, a):
    fn = g.rng.choice(["flip", "roll", "repeat", "tile"])
    if fn == "flip":
        return f"{a.name}.flip({g.dim(a)})"
    if fn == "roll":
        return f"{a.name}.roll({g.rng.randint(-2, 2)}, {g.dim(a)})"
    reps = [g.rng.randint(1, 2) for _ in range(a.ndim + g.rng.randint(0, 1))]
    return f"{a.name}.{fn}({tuple(reps)!r})"


@op("tril", "shape", ANY, min_ndim=2, weight=0.5)
def _tril(g, a):
    return f"{a.name}.{g.rng.choice(['tril', 'triu'])}({g.rng.randint(-1, 1)})"


@op("diag", "shape", NUM, min_ndim=1, weight=0.5)
def _diag(g, a):
    if a.ndim == 2 and g.rng.random() < 0.5:
        return f"{a.name}.trace()"
    if a.ndim <= 2:
        return f"{a.name}.diag({g.rng.randint(-1, 1)})"
    return f"{a.name}.diag_embed()"


@op("cat", "shape", ANY)
def _cat(g, a):
    b = g.other(a, same_shape=True)
    if b is None:
        return None
    if g.rng.random() < 0.5 or a.ndim == 0:
        return f"T.stack([{a.name}, {b}], dim={g.rng.randint(-a.ndim - 1, a.ndim)})"
    return f"T.cat([{a.name}, {b}, {a.name}], dim={g.dim(a)})"


@op("arrange", "shape", ANY, weight=1.0)
def _arrange(g, a):
    """ops/arrange.py: rot90, fliplr/flipud, ravel, atleast_*d, hstack/vstack, tensor_split."""
    fn = g.rng.choice(["rot90", "fliplr", "flipud", "ravel", "atleast", "stack", "split"])
    if fn == "rot90":
        if a.ndim < 2:
            return None
        k = g.rng.randint(-2, 3)
        return f"{a.name}.rot90({k}, [{g.dim(a)}, {g.dim(a)}])" if g.rng.random() < 0.2 \
            else f"T.rot90({a.name}, {k}, [0, {a.ndim - 1}])"
    if fn in ("fliplr", "flipud"):
        return f"T.{fn}({a.name})" if a.ndim >= (2 if fn == "fliplr" else 1) else None
    if fn == "ravel":
        return f"{a.name}.ravel()"
    if fn == "atleast":
        return f"T.atleast_{g.rng.randint(1, 3)}d({a.name})"
    if fn == "stack":
        b = g.other(a, same_shape=True)
        if b is None:
            return None
        return f"T.{g.rng.choice(['hstack', 'vstack'])}([{a.name}, {b}])"
    if a.ndim == 0:
        return None
    d = g.dim(a)
    parts = g.rng.choice([g.rng.randint(1, 3), [1], [0, 2]])
    pieces = len(parts) + 1 if isinstance(parts, list) else parts
    return f"{a.name}.tensor_split({parts!r}, dim={d})[{g.rng.randrange(pieces)}]"


@op("clone", "shape", ANY, weight=0.5)
def _clone(g, a):
    return f"{a.name}.{g.rng.choice(['clone', 'contiguous'])}()"


# ------------------------------------------------------------------------------ linalg
@op("matmul", "linalg", NUM, min_ndim=1, weight=1.5)
def _matmul(g, a):
    k = a.shape[-1]
    if a.ndim == 1:
        shape = g.rng.choice([(k,), (k, 2), (2, k, 3)])
    elif a.ndim == 2:
        shape = g.rng.choice([(k,), (k, 2), (2, k, 3)])
    else:
        shape = g.rng.choice([(k, 2), (a.shape[-3], k, 2)] if a.ndim == 3 else [(k, 2)])
    b = g.fresh(shape, a.dtype)
    if g.rng.random() < 0.5:
        return f"{a.name} @ {b}"
    if a.ndim == 2 and len(shape) == 2 and g.rng.random() < 0.5:
        return f"{a.name}.mm({b})"
    return f"T.matmul({a.name}, {b})"


@op("einsum", "linalg", FLOAT, min_ndim=2, weight=0.5)
def _einsum(g, a):
    if a.ndim != 2:
        return None
    b = g.fresh((a.shape[1], 2), a.dtype)
    eq = g.rng.choice(["ij,jk->ik", "ij,jk->ki", "ij,jk->", "ij,jk->j"])
    return f"T.einsum('{eq}', {a.name}, {b})"


@op("outer", "linalg", FLOAT, min_ndim=1, weight=0.5)
def _outer(g, a):
    if a.ndim == 2:
        b = g.fresh((a.shape[1], 2), a.dtype)
        c = g.fresh((a.shape[0], 2), a.dtype)
        return f"T.addmm({c}, {a.name}, {b})"
    if a.ndim == 3:
        return f"T.bmm({a.name}, {g.fresh((a.shape[0], a.shape[2], 2), a.dtype)})"
    if a.ndim == 1:
        if g.rng.random() < 0.5:
            return f"{a.name}.dot({g.fresh(a.shape, a.dtype)})"
        return f"T.outer({a.name}, {g.fresh((2,), a.dtype)})"
    return None


# ------------------------------------------------------------------------------ in place
INPLACE_UNARY = ["relu_", "neg_", "exp_", "zero_", "abs_", "sin_", "cos_", "tanh_", "sigmoid_",
                 "sign_", "square_", "floor_", "round_", "expm1_"]
INPLACE_POS = ["sqrt_", "log_", "log1p_", "rsqrt_", "reciprocal_"]
INPLACE_BINARY = ["add_", "sub_", "mul_", "div_"]


def inplace_statement(g, a):
    """An in-place statement on ``a`` (the generator picks ``a``)."""
    r = g.rng.random()
    if r < 0.25:
        name = g.rng.choice(INPLACE_UNARY)
        return name, f"{a.name}.{name}()"
    if r < 0.35:
        name = g.rng.choice(INPLACE_POS)
        pre = f"{a.name}.abs_().add_(0.5)" if g.rng.random() < 0.8 else f"{a.name}"
        return name, f"{pre}.{name}()"
    if r < 0.65:
        name = g.rng.choice(INPLACE_BINARY)
        b = g.other(a, into=True) if g.rng.random() < 0.5 else None
        if b is None:
            b = g.scalar(positive=True)
        elif name == "div_":
            b = DOMAIN["pos"].format(a=b)
        if g.rng.random() < 0.3:
            sym = {"add_": "+=", "sub_": "-=", "mul_": "*=", "div_": "/="}[name]
            return name, f"{a.name} {sym} {b}"
        return name, f"{a.name}.{name}({b})"
    if r < 0.72:
        return "pow_", f"{a.name}.pow_({g.rng.choice([2, 3, 0.5, -1])})"
    if r < 0.78:
        return "clamp_", f"{a.name}.clamp_({round(g.rng.uniform(-1, 0), 1)}, 0.5)"
    if r < 0.84:
        b = g.other(a, into=True)
        if b is None:
            return "fill_", f"{a.name}.fill_({g.scalar()})"
        return "copy_", f"{a.name}.copy_({b})"
    if r < 0.88:
        m = g.other(a, into=True)
        if m is None:
            return None
        return "masked_fill_", f"{a.name}.masked_fill_({m} > 0, {g.scalar()})"
    if r < 0.94 and a.ndim:
        size = a.shape[0]
        idx = str(g.rng.randrange(size)) if size and g.rng.random() < 0.5 else "0:1"
        val = g.scalar() if g.rng.random() < 0.5 else g.other(a, any_shape=True) or g.scalar()
        if not isinstance(val, str) or not val.startswith("v"):
            return "setitem", f"{a.name}[{idx}] = {val}"
        return "setitem", f"{a.name}[{idx}] = {val}.sum()"
    name = g.rng.choice(["addcmul_", "lerp_", "clamp_min_"])
    b = g.other(a, into=True)
    if b is None:
        return None
    if name == "addcmul_":
        return name, f"{a.name}.addcmul_({b}, {b}, value=0.5)"
    if name == "lerp_":
        return name, f"{a.name}.lerp_({b}, 0.25)"
    return name, f"{a.name}.clamp_min_({b})"


OPS = {spec.name: spec for spec in TABLE}


# ------------------------------------------------------------------------------ more families
# nn.functional activations and losses, scatter/gather, scans, sorting and quantiles,
# statistics, linalg, normalization, padding, conv1d/pooling, more in-place forms: their
# records are in ops_table_more.py (this file stays under its size); importing it appends
# them to TABLE.  A quarter of the in-place statements take its forms.
from . import ops_table_more  # noqa: E402

_first_inplace_statement = inplace_statement


def inplace_statement(g, a):  # noqa: F811 - the first forms, and ops_table_more's
    if g.rng.random() < 0.25:
        made = ops_table_more.more_inplace_statement(g, a)
        if made is not None:
            return made
    return _first_inplace_statement(g, a)


OPS = {spec.name: spec for spec in TABLE}
