"""Random ops: ``normal``, ``bernoulli`` and the in-place random fills (``normal_``,
``uniform_``, ``bernoulli_``, ``exponential_``, ``geometric_``, ``log_normal_``, ``cauchy_``,
``random_``).

The numbers come from NumPy's generator (``retrograd.manual_seed`` or a ``generator=``
repeats them), not PyTorch's.  Everything else is PyTorch 2.13's: shapes, dtypes, checks,
and the graph.  Gradient convention (derivatives.yaml): a sample's derivative with respect
to its parameters is ZERO (``mean``, ``std``, the probabilities ``p``, and the tensor a fill
overwrites), not the reparametrisation ``d(mean + std * z)``; write ``mean + std * randn(...)``
for that.  So every node here has a zero VJP, under PyTorch's node names (NormalBackward1/2/3
for the three tensor forms of ``normal``, NormalBackward0 for ``normal_``...).  A fill on a
tensor in a graph is recorded like any in-place op: version bump, new grad_fn.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..autograd.grad_mode import no_grad, state
from ..random import numpy_generator
from ..tensor import Tensor, make_tensor
from ._apply import apply_op, defop
from ._errors import broadcast_message, scalar_type_name
from .pointwise import zeros_like_grad
from .inplace import inplace
from .shape import expand


def _zero_vjp(node, g, saved):
    # PyTorch: zeros_like(grad) for every input (the engine sums a broadcast down)
    # (exact zeros recording nothing, not g * 0: see pointwise.zeros_like_grad)
    return tuple(zeros_like_grad(g) if n is not None else None for n in node.next)


def _sample(a, *rest):
    return rest[-1]  # the values drawn before the op was applied (a param)


def _node(name, backward, n=1):
    return defop(name, _sample, _zero_vjp, backward, n, extras=False).op


_NORMAL = {"TT": _node("normal", "NormalBackward3", 2),
           "Tf": _node("normal", "NormalBackward1"),
           "fT": _node("normal", "NormalBackward2")}
_BERNOULLI = _node("bernoulli", "BernoulliBackward0")


def _not_implemented_vjp(node, g, saved):
    raise RuntimeError(f"derivative for aten::{node.params[0]} is not implemented")


# bernoulli(input, p): PyTorch records a node that refuses backward (its name: NotImplemented)
_NOT_IMPLEMENTED = defop("bernoulli", lambda a, name, sample: sample, _not_implemented_vjp,
                         "NotImplemented", 1).op


def _need_float(np_dtype, kernel):
    if np.dtype(np_dtype).kind != "f":
        raise NotImplementedError(
            f'"{kernel}" not implemented for \'{scalar_type_name(np_dtype)}\' (random samples of '
            "this distribution are floating point: make the tensor float first)")


def _check_std(std):
    if isinstance(std, Tensor):
        if (std._data < 0).any():
            raise RuntimeError(
                "normal expects all elements of std >= 0.0 (got a negative standard deviation "
                f"in a std of shape {list(std.shape)})")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, pin_memory=False, requires_grad=False):
    """Samples of N(mean, std**2): ``normal(mean, std)`` with either or both a tensor (the
    shapes broadcast), or ``normal(mean, std, size)`` with two numbers.

    Its gradient is zero, as PyTorch's (see the module's notes).

    Examples
    --------
    >>> import retrograd as T
    >>> _ = T.manual_seed(0)
    >>> T.normal(T.zeros(2, 3), 1.0).shape
    retrograd.Size([2, 3])
    >>> T.normal(2.0, 0.0, (2,))
    tensor([2., 2.])
    """
    if out is not None:
        _check_out(out, "normal", mean, std)
        result = normal(mean, std, size, generator=generator,
                        dtype=dtype or dtypes.FROM_NUMPY[out._data.dtype])
        return _write_out(out, result, resize=size is not None)
    rng = numpy_generator(generator)
    m_t, s_t = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not m_t and not s_t:
        if size is None:
            raise TypeError(
                "normal() received an invalid combination of arguments - got (float, float): "
                "with a number mean and std, give the size: normal(mean, std, size)")
        np_dtype = (dtype or dtypes.get_default_dtype()).numpy
        _need_float(np_dtype, "normal_kernel_cpu")
        _check_std(std)
        shape = _size(size)
        out = make_tensor((mean + std * rng.standard_normal(shape)).astype(np_dtype))
        return out.requires_grad_(True) if requires_grad else out
    if size is not None:
        raise TypeError(
            "normal() received an invalid combination of arguments: a size is only taken "
            "with a number mean and std; the shape comes from the tensor mean / std")
    like = mean if m_t else std  # the output's dtype: the mean's, else the std's
    _need_float(like._data.dtype, "normal_kernel_cpu")
    _check_std(std)
    md = mean._data if m_t else mean
    sd = std._data if s_t else std
    try:
        shape = np.broadcast_shapes(np.shape(md), np.shape(sd))
    except ValueError:
        raise RuntimeError(
            f"{broadcast_message([np.shape(md), np.shape(sd)])} (normal: a mean of shape "
            f"{list(np.shape(md))} and a std of shape {list(np.shape(sd))}); make the shapes "
            "broadcast") from None
    values = (md + sd * rng.standard_normal(shape)).astype(like._data.dtype)
    if m_t and s_t:
        return apply_op(_NORMAL["TT"], (mean, std), (values,))
    return apply_op(_NORMAL["Tf" if m_t else "fT"], (like,), (values,))


def _size(size) -> tuple:
    if not isinstance(size, (tuple, list)) or any(
            isinstance(s, bool) or not hasattr(s, "__index__") for s in size):
        raise TypeError(
            f"normal() received an invalid combination of arguments - got size={size!r}: the "
            "size is a tuple of ints, as normal(mean, std, (2, 3))")
    shape = tuple(s.__index__() for s in size)
    for s in shape:
        if s < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {s}: {list(shape)} "
                "(normal(): sizes must be >= 0)")
    return shape


def _check_out(out, name, *args):
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if state.enabled and any(isinstance(a, Tensor) and a._requires_grad for a in args):
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad. (Call it without out=, "
            "or under retrograd.no_grad().)")


def _write_out(out, result, resize):
    """``result`` written into ``out`` (in ``out``'s dtype); ``out`` takes the result's shape
    where PyTorch resizes it (the size-given form, bernoulli), else the shapes must match."""
    data = result._data.astype(out._data.dtype, copy=False)
    if out._data.shape == data.shape:
        out._data[...] = data
    elif resize:
        out._data = data.copy()
    else:
        raise RuntimeError(
            f"{broadcast_message([data.shape, out._data.shape])} (out= of shape "
            f"{list(out._data.shape)} for a result of shape {list(data.shape)})")
    out._bump_version()
    return out


def bernoulli(input, p=None, *, generator=None, out=None):  # noqa: A002
    """1 with probability ``input`` (element by element), else 0, in ``input``'s dtype; or
    with the one probability ``p`` for every element.

    Its gradient is zero, as PyTorch's; with a number ``p`` PyTorch has none (backward
    raises).

    Examples
    --------
    >>> import retrograd as T
    >>> T.bernoulli(T.tensor([0.0, 1.0, 1.0]))
    tensor([0., 1., 1.])
    """
    if out is not None:
        _check_out(out, "bernoulli", input)
        return _write_out(out, bernoulli(input, p, generator=generator), resize=True)
    rng = numpy_generator(generator)
    data = input._data
    if p is None:
        _need_float(data.dtype, "bernoulli_tensor_cpu_p_")
        if ((data < 0) | (data > 1) | np.isnan(data)).any():
            raise RuntimeError(
                "Expected p_in >= 0 && p_in <= 1 to be true, but got false. (bernoulli: the "
                f"probabilities, a tensor of shape {list(input.shape)}, must lie in [0, 1])")
        values = (rng.random(data.shape) < data).astype(data.dtype)
        return apply_op(_BERNOULLI, (input,), (values,))
    _check_p(p, "bernoulli_")
    values = (rng.random(data.shape) < p).astype(data.dtype)
    return apply_op(_NOT_IMPLEMENTED, (input,), ("bernoulli", values))


def _check_p(p, name):
    if not 0 <= p <= 1:
        raise RuntimeError(f"{name} expects p to be in [0, 1], but got p={p}")


# ----------------------------------------------------------------- in-place fills
# Each fill is an out-of-place "op" on the old tensor whose result is the drawn sample (a
# param) and whose VJP is zero; ``inplace`` writes it into the tensor, bumps the version and,
# when the tensor is in a graph, makes the node its grad_fn (as PyTorch records them).

_FILL = {name: _node(name, backward) for name, backward in (
    ("normal_", "NormalBackward0"), ("uniform_", "UniformBackward0"),
    ("exponential_", "ExponentialBackward0"), ("geometric_", "GeometricBackward0"),
    ("log_normal_", "LogNormalBackward0"), ("cauchy_", "CauchyBackward0"),
    ("random_2", "RandomBackward2"), ("random_1", "RandomBackward1"),
    ("random_0", "RandomBackward0"), ("bernoulli_2", "BernoulliBackward2"))}
_BERNOULLI_TENSOR = _node("bernoulli_", "BernoulliBackward1", 2)


def _fill(x, key, values):
    return apply_op(_FILL[key], (x,), (np.asarray(values).astype(x._data.dtype),))


def _normal_fill(x, mean=0.0, std=1.0, *, generator=None):
    _need_float(x._data.dtype, "normal_kernel_cpu")
    _check_std(std)
    return _fill(x, "normal_", numpy_generator(generator).normal(mean, std, x._data.shape))


def _uniform_fill(x, a=0.0, b=1.0, *, generator=None):
    _need_float(x._data.dtype, "check_uniform_bounds")
    if a > b:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={a:g} > to={b:g}")
    return _fill(x, "uniform_", numpy_generator(generator).uniform(a, b, x._data.shape))


# cauchy_'s message names the C type (PyTorch 2.13's wording), exponential_'s the scalar type
_C_NAMES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool"}


def _continuous(x, name):
    if x._data.dtype.kind != "f":
        kind = (_C_NAMES.get(x._data.dtype.name, x._data.dtype.name) if name == "Cauchy"
                else scalar_type_name(x._data.dtype))
        raise RuntimeError(
            f"{name} distribution is a continuous probability distribution. dtype must be a "
            f"floating point but you specified {kind}")


def _exponential_fill(x, lambd=1.0, *, generator=None):
    _continuous(x, "Exponential")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    return _fill(x, "exponential_",
                 numpy_generator(generator).exponential(1.0 / lambd, x._data.shape))


def _geometric_fill(x, p, *, generator=None):
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    return _fill(x, "geometric_", numpy_generator(generator).geometric(p, x._data.shape))


def _log_normal_fill(x, mean=1.0, std=2.0, *, generator=None):
    _need_float(x._data.dtype, "log_normal_cpu")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    return _fill(x, "log_normal_",
                 numpy_generator(generator).lognormal(mean, std, x._data.shape))


def _cauchy_fill(x, median=0.0, sigma=1.0, *, generator=None):
    _continuous(x, "Cauchy")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    return _fill(x, "cauchy_",
                 median + sigma * numpy_generator(generator).standard_cauchy(x._data.shape))


def _default_high(np_dtype) -> int:
    """random_()'s bound: every integer the dtype holds exactly (PyTorch's), [0, high)."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype.kind == "f":
        return 2 ** (np.finfo(np_dtype).nmant + 1) + 1
    if np_dtype.kind == "b":
        return 2
    return int(np.iinfo(np_dtype).max)


def _random_fill(x, *bounds, generator=None, **kw):
    if "to" in kw or "from" in kw:
        bounds = (kw.pop("from", 0), kw.pop("to")) if "to" in kw else (kw.pop("from"),)
    if kw or len(bounds) > 2 or any(type(b) is not int and b is not None for b in bounds):
        raise TypeError(
            "random_() received an invalid combination of arguments: random_(), random_(to) "
            f"or random_(from, to), with integers (got {bounds!r} {kw or ''})")
    if len(bounds) == 2 and bounds[1] is None:
        bounds = (bounds[0], _default_high(x._data.dtype))
    low, high = (0, _default_high(x._data.dtype)) if not bounds else \
        (0, bounds[0]) if len(bounds) == 1 else bounds
    if low >= high:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    key = f"random_{2 - len(bounds)}"  # PyTorch: random_() 2, random_(to) 1, (from, to) 0
    return _fill(x, key, numpy_generator(generator).integers(low, high, x._data.shape))


def _bernoulli_fill(x, p=0.5, *, generator=None):
    rng = numpy_generator(generator)
    shape = x._data.shape
    if isinstance(p, Tensor):
        pd = p._data
        if ((pd < 0) | (pd > 1) | np.isnan(pd)).any():
            raise RuntimeError(
                "Expected p_in >= 0 && p_in <= 1 to be true, but got false. (bernoulli_: the "
                f"probabilities, a tensor of shape {list(p.shape)}, must lie in [0, 1])")
        if pd.ndim > len(shape):
            raise RuntimeError(
                f"expand({list(pd.shape)}, size={list(shape)}): the number of sizes provided "
                f"({len(shape)}) must be greater or equal to the number of dimensions in the "
                f"tensor ({pd.ndim}) (bernoulli_'s probabilities broadcast to the tensor's "
                "shape, which cannot change)")
        with no_grad():
            expand(p, *shape)  # PyTorch's error for probabilities that do not broadcast
        values = rng.random(shape) < np.broadcast_to(pd, shape)
        return apply_op(_BERNOULLI_TENSOR, (x, p), (values.astype(x._data.dtype),))
    _check_p(p, "bernoulli_")
    return _fill(x, "bernoulli_2", rng.random(shape) < p)


# (name, how it samples): each writes into the tensor as the in-place ops do
def _kernel_checks_first(method, checks):
    """``method`` whose ``checks`` run first on an integer or bool tensor: normal_'s and
    uniform_'s kernels refuse the dtype before PyTorch's check for an expanded tensor (the
    one a float tensor meets first), so that refusal is what such a tensor gets."""
    def call(x, *args, **kwargs):
        if isinstance(x, Tensor) and x._data.dtype.kind != "f":
            checks(x, *args, **kwargs)
        return method(x, *args, **kwargs)

    call.__name__, call.__doc__ = method.__name__, method.__doc__
    return call


def _normal_checks(x, mean=0.0, std=1.0, *, generator=None):
    _check_std(std)  # (PyTorch: the std before the dtype)
    _need_float(x._data.dtype, "normal_kernel_cpu")


def _uniform_checks(x, a=0.0, b=1.0, *, generator=None):
    _need_float(x._data.dtype, "check_uniform_bounds")


normal_ = _kernel_checks_first(inplace(_normal_fill, "normal_", False), _normal_checks)
uniform_ = _kernel_checks_first(inplace(_uniform_fill, "uniform_", False), _uniform_checks)
exponential_ = inplace(_exponential_fill, "exponential_", False)
geometric_ = inplace(_geometric_fill, "geometric_", False)
log_normal_ = inplace(_log_normal_fill, "log_normal_", False)
cauchy_ = inplace(_cauchy_fill, "cauchy_", False)
random_ = inplace(_random_fill, "random_", False)
bernoulli_ = inplace(_bernoulli_fill, "bernoulli_", False)


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(normal, method=False)
register(bernoulli)
register(bernoulli_, function=False, inplace_of="bernoulli")
for _fn in (normal_, uniform_, exponential_, geometric_, log_normal_, cauchy_, random_):
    register(_fn, function=False)
