"""Op tests, random (ops/random_ops.py): normal, bernoulli and the in-place random fills.

retrograd draws from NumPy's generator, so values are compared with PyTorch's only where a
distribution is degenerate (std 0, p in {0, 1}): the CASES table.  Elsewhere: shapes,
dtypes, grad_fn names, gradients (zero, as PyTorch's), errors, the samples' moments, and
repeatability under ``manual_seed`` and a ``Generator``.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

from .helpers import Case, case_checks

CASES: list[Case] = []

# PyTorch's gradient of a sample is zero (derivatives.yaml), not the derivative of
# mean + std * z: with std = 0 the numerical derivative is the identity, so gradcheck fails
# (as it does on torch.normal)
_ZERO_GRAD = "PyTorch defines a sample's gradient as zero, not the numerical derivative"

CASES += [
    Case("normal_tensor_tensor", lambda m, a, b: m.normal(a, b * 0), ((3, 4), (4,)),
         xfail={"gradcheck": _ZERO_GRAD}),
    Case("normal_tensor_float", lambda m, a: m.normal(a, 0.0), ((2, 3),),
         xfail={"gradcheck": _ZERO_GRAD}),
    Case("normal_tensor_default", lambda m, a: m.normal(a * 0 + 2, std=0.0), ((3,),)),
    Case("normal_float_tensor", lambda m, b: m.normal(1.5, b * 0), ((2, 3),)),
    Case("bernoulli_ones", lambda m, a: m.bernoulli(a * 0 + 1), ((3, 4),)),
    Case("bernoulli_zeros_method", lambda m, a: (a * 0).bernoulli(), ((2, 3),)),
]

(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


# ----------------------------------------------------------------- every calling form

def _forms(m):
    """(name, call) for every calling form, on fresh float64/float32 leaves."""
    mean = m.zeros(2, 3, dtype=m.float64, requires_grad=True)
    std = m.full((3,), 2.0, requires_grad=True)  # float32: the mean's dtype wins
    p = m.full((4,), 0.3, dtype=m.float64, requires_grad=True)
    return [
        ("normal(T, T)", lambda g: m.normal(mean, std, generator=g), (mean, std)),
        ("normal(T, f)", lambda g: m.normal(mean, 2.0, generator=g), (mean,)),
        ("normal(T)", lambda g: m.normal(mean, generator=g), (mean,)),
        ("normal(f, T)", lambda g: m.normal(1.0, std, generator=g), (std,)),
        ("normal(f, f, size)", lambda g: m.normal(1.0, 2.0, (2, 5), generator=g), ()),
        ("normal(size=)", lambda g: m.normal(0, 1, size=[3], generator=g), ()),
        ("normal(dtype=)", lambda g: m.normal(0.0, 1.0, (3,), dtype=m.float64, generator=g),
         ()),
        ("normal(requires_grad)", lambda g: m.normal(0.0, 1.0, (3,), requires_grad=True,
                                                     generator=g), ()),
        ("bernoulli(T)", lambda g: m.bernoulli(p, generator=g), (p,)),
        ("T.bernoulli()", lambda g: p.bernoulli(generator=g), (p,)),
    ]


def _describe(out):
    fn = out.grad_fn
    name = None if fn is None else fn.name().replace("torch::autograd::", "")
    return (tuple(out.shape), str(out.dtype).split(".")[-1], out.requires_grad, name)


@pytest.mark.parametrize("i", range(10))
def test_forms_shape_dtype_grad_fn_grads_vs_torch(i, torch):
    res = []
    for m in (retrograd, torch):
        name, call, inputs = _forms(m)[i]
        out = call(m.Generator().manual_seed(3))
        desc = _describe(out)
        grads = None
        if out.grad_fn is not None:
            out.backward(m.ones_like(out))
            grads = [(inp.grad.tolist(), str(inp.grad.dtype).split(".")[-1]) for inp in inputs]
        res.append((desc, grads))
    assert res[0] == res[1], name


@pytest.mark.parametrize("i", range(10))
def test_forms_repeat_under_manual_seed_and_generator(i):
    m = retrograd
    name, call, _ = _forms(m)[i]
    m.manual_seed(11)
    a = call(None)
    m.manual_seed(11)
    b = call(None)
    c = call(None)  # the stream goes on
    assert a.tolist() == b.tolist(), name
    assert a.tolist() != c.tolist() or "bernoulli" in name, name
    g = m.Generator().manual_seed(5)
    d = call(g)
    m.manual_seed(11)  # the default generator's state does not matter to a generator's draw
    e = call(m.Generator().manual_seed(5))
    assert d.tolist() == e.tolist(), name


def _moments(m, make):
    x = make(m).double()
    return float(x.mean()), float(x.std())


MOMENT_CASES = [
    ("normal(T, T)", lambda m: m.normal(m.full((20000,), 1.5), m.full((20000,), 2.0))),
    ("normal(f, T)", lambda m: m.normal(-1.0, m.full((20000,), 0.5))),
    ("normal(f, f, size)", lambda m: m.normal(3.0, 0.25, (20000,))),
    ("bernoulli", lambda m: m.bernoulli(m.full((20000,), 0.3))),
    ("normal_", lambda m: m.empty(20000).normal_(2.0, 3.0)),
    ("uniform_", lambda m: m.empty(20000).uniform_(-1.0, 3.0)),
    ("exponential_", lambda m: m.empty(20000).exponential_(2.0)),
    ("geometric_", lambda m: m.empty(20000).geometric_(0.25)),
    ("log_normal_", lambda m: m.empty(20000).log_normal_(0.5, 0.25)),
    ("random_", lambda m: m.empty(20000).random_(-3, 7)),
    ("bernoulli_", lambda m: m.empty(20000).bernoulli_(0.7)),
    ("bernoulli_tensor", lambda m: m.empty(20000).bernoulli_(m.full((20000,), 0.2))),
]


@pytest.mark.parametrize("make", [pytest.param(f, id=n) for n, f in MOMENT_CASES])
def test_sample_moments_vs_torch(make, torch):
    """The same distribution as PyTorch's: mean and std of 20000 samples agree (4% of the
    spread: a 5-sigma margin)."""
    retrograd.manual_seed(0)
    torch.manual_seed(0)
    (rm, rs), (tm, ts) = _moments(retrograd, make), _moments(torch, make)
    assert abs(rm - tm) < 0.04 * ts + 1e-9 and abs(rs - ts) < 0.04 * ts + 1e-9, (rm, rs, tm, ts)


def test_cauchy_median_and_random_default_range_vs_torch(torch):
    """cauchy_ has no moments: its median and quartiles; random_() with no bound: every
    integer the dtype holds exactly."""
    retrograd.manual_seed(0)
    for m in (retrograd, torch):
        x = m.empty(20000, dtype=m.float64).cauchy_(1.0, 2.0).numpy()
        q1, med, q3 = np.quantile(x, [0.25, 0.5, 0.75])
        assert abs(med - 1.0) < 0.1 and abs(q1 + 1.0) < 0.15 and abs(q3 - 3.0) < 0.15
    for dtype, high in (("float32", 2 ** 24), ("float64", 2 ** 53), ("int16", 2 ** 15 - 1),
                        ("uint8", 255), ("bool", 1)):
        for m in (retrograd, torch):
            x = m.zeros(5000, dtype=getattr(m, dtype)).random_()
            v = x.double().numpy()
            assert v.min() >= 0 and v.max() <= high and v.max() > high / 2, (dtype, m)


# ----------------------------------------------------------------- the fills in a graph

FILLS = [
    ("normal_", lambda y, p: y.normal_(1.0, 2.0)),
    ("uniform_", lambda y, p: y.uniform_(-1, 1)),
    ("exponential_", lambda y, p: y.exponential_()),
    ("geometric_", lambda y, p: y.geometric_(0.5)),
    ("log_normal_", lambda y, p: y.log_normal_()),
    ("cauchy_", lambda y, p: y.cauchy_()),
    ("random_()", lambda y, p: y.random_()),
    ("random_(to)", lambda y, p: y.random_(5)),
    ("random_(from, to)", lambda y, p: y.random_(-2, 5)),
    ("random_(from, to=None)", lambda y, p: y.random_(3, None)),
    ("bernoulli_()", lambda y, p: y.bernoulli_()),
    ("bernoulli_(p)", lambda y, p: y.bernoulli_(0.25)),
    ("bernoulli_(tensor)", lambda y, p: y.bernoulli_(p)),
]


@pytest.mark.parametrize("fill", [pytest.param(f, id=n) for n, f in FILLS])
def test_fill_in_a_graph_vs_torch(fill, torch):
    """A random fill of a tensor in a graph is recorded as PyTorch records it: same object,
    one version further, its grad_fn, zero gradients to what came before; on a view, the
    base's grad_fn becomes CopySlices."""
    res = []
    for m in (retrograd, torch):
        a = m.ones(3, 4, dtype=m.float64, requires_grad=True)
        p = m.full((4,), 0.5, dtype=m.float64, requires_grad=True)
        y = a * 2
        v = y._version
        out = fill(y, p)
        rec = [out is y, y._version - v, _describe(y)]
        (y * 3).sum().backward()
        rec += [a.grad.tolist(), None if p.grad is None else p.grad.tolist()]
        z = a * 2
        fill(z[1:], p)
        rec.append(_describe(z))
        z.sum().backward()
        rec.append(a.grad.tolist())
        res.append(rec)
    assert res[0] == res[1]


@pytest.mark.parametrize("fill", [pytest.param(f, id=n) for n, f in FILLS])
def test_fill_on_leaf_errors_and_no_grad_like_torch(fill, torch):
    for m in (retrograd, torch):
        a = m.ones(4, dtype=m.float64, requires_grad=True)
        p = m.full((4,), 0.5, dtype=m.float64)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            fill(a, p)
        with m.no_grad():
            assert fill(a, p) is a  # an initialisation
        assert a._version == 1 and a.grad_fn is None and a.requires_grad


def test_bernoulli_with_number_p_has_no_derivative_like_torch(torch):
    for m in (retrograd, torch):
        p = m.full((3,), 0.4, requires_grad=True)
        out = m.bernoulli(p, 0.3)
        assert out.grad_fn.name().endswith("NotImplemented")
        with pytest.raises(RuntimeError, match="derivative for aten::bernoulli is not "
                                               "implemented"):
            out.sum().backward()


ERROR_CASES = [
    ("normal int mean", lambda m: m.normal(m.zeros(3, dtype=m.int64), 1.0)),
    ("normal int std", lambda m: m.normal(1.0, m.zeros(3, dtype=m.int64))),
    ("normal negative std", lambda m: m.normal(m.zeros(3), -1.0)),
    ("normal negative std tensor", lambda m: m.normal(m.zeros(3), -m.ones(3))),
    ("normal negative std size", lambda m: m.normal(0.0, -1.0, (2,))),
    ("normal numbers, no size", lambda m: m.normal(0.0, 1.0)),
    ("normal tensor with size", lambda m: m.normal(m.zeros(3), 1.0, (3,))),
    ("normal int dtype", lambda m: m.normal(0, 1, (2,), dtype=m.int64)),
    ("normal shapes", lambda m: m.normal(m.zeros(3), m.ones(2))),
    ("bernoulli int", lambda m: m.bernoulli(m.zeros(3, dtype=m.int64))),
    ("bernoulli p out of range", lambda m: m.bernoulli(m.full((3,), 1.5))),
    ("bernoulli number p out of range", lambda m: m.bernoulli(m.zeros(3), 1.3)),
    ("bernoulli_ p", lambda m: m.zeros(3).bernoulli_(-0.1)),
    ("bernoulli_ tensor p", lambda m: m.zeros(3).bernoulli_(m.tensor([2.0, 0, 0]))),
    ("uniform_ int", lambda m: m.zeros(3, dtype=m.int64).uniform_()),
    ("uniform_ from > to", lambda m: m.zeros(3).uniform_(2, 1)),
    ("normal_ int", lambda m: m.zeros(3, dtype=m.int64).normal_()),
    ("normal_ negative std", lambda m: m.zeros(3).normal_(0, -1)),
    ("exponential_ int", lambda m: m.zeros(3, dtype=m.int64).exponential_()),
    ("exponential_ lambda", lambda m: m.zeros(3).exponential_(-1)),
    ("geometric_ p", lambda m: m.zeros(3).geometric_(1.5)),
    ("log_normal_ int", lambda m: m.zeros(3, dtype=m.int64).log_normal_()),
    ("log_normal_ std", lambda m: m.zeros(3).log_normal_(1, -2)),
    ("cauchy_ sigma", lambda m: m.zeros(3).cauchy_(0.5, 0.0)),
    ("cauchy_ int64", lambda m: m.zeros(3, dtype=m.int64).cauchy_()),
    ("cauchy_ int32", lambda m: m.zeros(3, dtype=m.int32).cauchy_()),
    ("exponential_ int32", lambda m: m.zeros(3, dtype=m.int32).exponential_()),
    ("bernoulli_ p of more dims", lambda m: m.zeros(3).bernoulli_(m.full((2, 3), 0.5))),
    ("bernoulli_ p of another size", lambda m: m.zeros(3).bernoulli_(m.full((2,), 0.5))),
    ("random_ from >= to", lambda m: m.zeros(3).random_(5, 2)),
    ("random_ to 0", lambda m: m.zeros(3).random_(0)),
    ("random_ float bound", lambda m: m.zeros(3).random_(2.5)),
    ("generator of another kind", lambda m: m.zeros(3).normal_(generator=0)),
]


@pytest.mark.parametrize("fn", [pytest.param(f, id=n) for n, f in ERROR_CASES])
def test_errors_like_torch(fn, torch):
    """The same exception class as PyTorch, whose message's start ours begins with."""
    caught = []
    for m in (retrograd, torch):
        with pytest.raises(Exception) as info:
            fn(m)
        caught.append(info)
    r, t = caught
    assert r.type is t.type, (r.value, t.value)
    if t.type is not TypeError:  # (PyTorch's TypeErrors list its signatures)
        head = str(t.value).split(" (")[0].split(".  ")[0].rstrip(".")
        if "torch." in head:  # PyTorch names its tensor type there: compare what follows
            head = head.split("): ", 1)[1]
            assert head in str(r.value), (str(r.value), head)
            return
        assert str(r.value).startswith(head), (str(r.value), head)


def test_fill_dtypes_kept_like_torch(torch):
    """The fills keep the tensor's dtype (integers for random_/geometric_/bernoulli_ on an
    integer tensor)."""
    for dtype in ("float16", "float32", "float64", "int32", "int64", "uint8"):
        for call in (lambda x: x.random_(0, 3), lambda x: x.bernoulli_(0.5),
                     lambda x: x.geometric_(0.5)):
            got = [str(call(m.zeros(4, dtype=getattr(m, dtype))).dtype).split(".")[-1]
                   for m in (retrograd, torch)]
            assert got[0] == got[1] == dtype


OUT_CASES = [
    ("normal(T, T, out=)", lambda m, o: m.normal(m.zeros(2, 3), m.ones(2, 3), out=o), (2, 3),
     "float32"),
    ("normal(T, f, out=) same", lambda m, o: m.normal(m.zeros(2, 3), 1.0, out=o), (2, 3),
     "float32"),
    ("normal(T, f, out=) empty", lambda m, o: m.normal(m.zeros(2, 3), 1.0, out=o), (0,),
     "float32"),
    ("normal(f, f, size, out=) resized", lambda m, o: m.normal(0.0, 1.0, (2, 3), out=o), (4,),
     "float32"),
    ("normal(T, f, out=float64)", lambda m, o: m.normal(m.zeros(2, 3), 1.0, out=o), (2, 3),
     "float64"),
    ("bernoulli(out=) empty", lambda m, o: m.bernoulli(m.full((3,), 0.5), out=o), (0,),
     "float32"),
    ("bernoulli(out=float64)", lambda m, o: m.bernoulli(m.full((3,), 0.5), out=o), (3,),
     "float64"),
    ("normal(out=) with grad", lambda m, o: m.normal(m.zeros(3, requires_grad=True), 1.0,
                                                     out=o), (3,), "float32"),
]


@pytest.mark.parametrize("fn,shape,dtype", [pytest.param(f, s, d, id=n)
                                             for n, f, s, d in OUT_CASES])
def test_out_like_torch(fn, shape, dtype, torch):
    """out=: the same object back, in out's dtype, resized where PyTorch resizes it, or the
    same error."""
    res = []
    for m in (retrograd, torch):
        o = m.empty(shape, dtype=getattr(m, dtype))
        try:
            r = fn(m, o)
            res.append((r is o, tuple(o.shape), str(o.dtype).split(".")[-1]))
        except RuntimeError as e:
            res.append(str(e).split(" (")[0].split(". ")[0])
    assert res[0] == res[1]


@pytest.mark.parametrize("fill", [pytest.param(f, id=n) for n, f in FILLS])
def test_fills_repeat_under_manual_seed_and_generator(fill):
    m = retrograd
    p = m.full((4,), 0.5, dtype=m.float64)

    def draw(gen=None):
        x = m.zeros(50, 4, dtype=m.float64)
        if gen is None:
            return fill(x, p).tolist()
        # the same fill with a generator= keyword (each fill takes one)
        name = fill.__code__.co_names[0]
        args = {"normal_": (1.0, 2.0), "uniform_": (-1, 1), "geometric_": (0.5,),
                "random_": (-2, 5), "bernoulli_": (p,)}.get(name, ())
        return getattr(x, name)(*args, generator=gen).tolist()

    m.manual_seed(4)
    first = draw()
    m.manual_seed(4)
    assert draw() == first
    assert draw() != first  # the stream goes on
    a = draw(m.Generator().manual_seed(9))
    m.manual_seed(123)
    assert draw(m.Generator().manual_seed(9)) == a
