"""retrograd.autograd.functional against torch.autograd.functional: values, result
structures (tuple/single inputs and outputs), create_graph, strict-mode errors."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as T
from retrograd.autograd import functional as RF

RNG = np.random.default_rng(0)


def _arr(*shape):
    return RNG.standard_normal(shape)


def _to(m, x):
    """The same (nested) structure with numpy arrays turned into m tensors."""
    if isinstance(x, tuple):
        return tuple(_to(m, e) for e in x)
    return m.tensor(x, dtype=m.float64)


def _same(a, b, create_graph=False):
    """Structures equal, leaf by leaf: shape, dtype name, values, requires_grad."""
    if isinstance(b, tuple):
        assert isinstance(a, tuple) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            _same(x, y, create_graph)
        return
    assert not isinstance(a, tuple)
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert a.requires_grad == b.requires_grad


# each: (name, fn(m, *inputs), input arrays (a tuple means tuple inputs))
FUNCS = [
    ("single-single", lambda m, x: (x.tanh() * x).sum(0), _arr(3, 2)),
    ("tuple-single", lambda m, x, y: (x.sin() @ y).exp(), (_arr(2, 3), _arr(3))),
    ("single-tuple", lambda m, x: (x * x, x.sum().cos()), _arr(4)),
    ("tuple-tuple", lambda m, x, y: (x * y.sum(), (x ** 2).sum() * y), (_arr(2), _arr(3))),
    ("scalar", lambda m, x: x.exp() * 3, _arr()),
]
SCALAR_FUNCS = [
    ("single", lambda m, x: (x.sin() * x).sum(), _arr(3)),
    ("tuple", lambda m, x, y: (x.exp() @ y.tanh()) ** 2, (_arr(3), _arr(3))),
    ("matrix", lambda m, x: (x @ x).sum(), _arr(2, 2)),
]


def _run(m, api, fn, inputs, **kw):
    f = getattr(m.autograd.functional, api)
    wrapped = (lambda *a: fn(m, *a))
    return f(wrapped, _to(m, inputs), **kw)


def _v_like(outputs):
    if isinstance(outputs, tuple):
        return tuple(RNG.standard_normal(tuple(o.shape)) for o in outputs)
    return RNG.standard_normal(tuple(outputs.shape))


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name,fn,inputs", FUNCS, ids=[f[0] for f in FUNCS])
def test_jacobian(torch, name, fn, inputs, create_graph):
    ours = _run(T, "jacobian", fn, inputs, create_graph=create_graph)
    theirs = _run(torch, "jacobian", fn, inputs, create_graph=create_graph)
    _same(ours, theirs)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name,fn,inputs", FUNCS, ids=[f[0] for f in FUNCS])
def test_jacobian_vectorize_gives_the_same(torch, name, fn, inputs, create_graph):
    # one batched backward pass (is_grads_batched) for all the rows, as torch's vmap
    _same(_run(T, "jacobian", fn, inputs, vectorize=True, create_graph=create_graph),
          _run(torch, "jacobian", fn, inputs, vectorize=True, create_graph=create_graph))


@pytest.mark.parametrize("name,fn,inputs", SCALAR_FUNCS, ids=[f[0] for f in SCALAR_FUNCS])
def test_hessian_vectorize_gives_the_same(torch, name, fn, inputs):
    _same(_run(T, "hessian", fn, inputs, vectorize=True),
          _run(torch, "hessian", fn, inputs, vectorize=True))


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name,fn,inputs", SCALAR_FUNCS, ids=[f[0] for f in SCALAR_FUNCS])
def test_hessian(torch, name, fn, inputs, create_graph):
    _same(_run(T, "hessian", fn, inputs, create_graph=create_graph),
          _run(torch, "hessian", fn, inputs, create_graph=create_graph))


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name,fn,inputs", FUNCS, ids=[f[0] for f in FUNCS])
def test_vjp_and_jvp(torch, name, fn, inputs, create_graph):
    outs = fn(T, *(_to(T, inputs) if isinstance(inputs, tuple) else (_to(T, inputs),)))
    v_out, v_in = _v_like(outs), _v_like(_to(T, inputs))
    for api, v in (("vjp", v_out), ("jvp", v_in)):
        ours = _run(T, api, fn, inputs, v=_to(T, v), create_graph=create_graph)
        theirs = _run(torch, api, fn, inputs, v=_to(torch, v), create_graph=create_graph)
        _same(ours, theirs)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name,fn,inputs", SCALAR_FUNCS, ids=[f[0] for f in SCALAR_FUNCS])
def test_hvp_and_vhp(torch, name, fn, inputs, create_graph):
    v = _v_like(_to(T, inputs))
    for api in ("hvp", "vhp"):
        _same(_run(T, api, fn, inputs, v=_to(T, v), create_graph=create_graph),
              _run(torch, api, fn, inputs, v=_to(torch, v), create_graph=create_graph))


def test_v_none_for_single_element(torch):
    x = _arr(1)
    for api in ("vjp", "jvp", "hvp", "vhp"):
        _same(_run(T, api, lambda m, a: (a * a * a).sum(), x),
              _run(torch, api, lambda m, a: (a * a * a).sum(), x))


def test_create_graph_results_differentiate_to_the_inputs(torch):
    # the Jacobian keeps history back to the caller's inputs: differentiate it once more
    results = []
    for m in (T, torch):
        x = m.tensor([0.3, -0.7], dtype=m.float64, requires_grad=True)
        jac = m.autograd.functional.jacobian(lambda a: (a ** 3).sin(), x, create_graph=True)
        (g,) = m.autograd.grad(jac.sum(), x)
        results.append(g.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-12)


def test_captured_input_is_not_differentiated(torch):
    # the function closes over the same tensor it is given: only the argument counts
    results = []
    for m in (T, torch):
        x = m.tensor([1.0, 2.0], dtype=m.float64, requires_grad=True)
        results.append(m.autograd.functional.jacobian(lambda a, x=x: a * x, x).numpy())
    np.testing.assert_allclose(results[0], results[1])


def _error(m, call):
    with pytest.raises(Exception) as info:
        call(m)
    return info.type, str(info.value)


STRICT_AND_MISUSE = [
    # independent output: strict
    lambda m: m.autograd.functional.jacobian(lambda x, y: x * 2, (m.ones(2), m.ones(2)),
                                             strict=True),
    lambda m: m.autograd.functional.jacobian(lambda x: m.ones(2), m.ones(2), strict=True),
    lambda m: m.autograd.functional.vjp(lambda x, y: x.sum(), (m.ones(2), m.ones(2)),
                                        strict=True),
    lambda m: m.autograd.functional.jvp(lambda x, y: x * 2, (m.ones(2), m.ones(2)),
                                        (m.ones(2), m.ones(2)), strict=True),
    lambda m: m.autograd.functional.jvp(lambda x: x.detach(), m.ones(2), m.ones(2),
                                        strict=True),
    lambda m: m.autograd.functional.hessian(lambda x: x.sum(), m.ones(2), strict=True),
    lambda m: m.autograd.functional.hvp(lambda x: x.sum(), m.ones(2), m.ones(2), strict=True),
    lambda m: m.autograd.functional.vjp(lambda x: x * 2, m.ones(2), m.ones(2),
                                        create_graph=True, strict=True),
    lambda m: m.autograd.functional.vhp(lambda x, y: (x * x).sum(), (m.ones(2), m.ones(2)),
                                        (m.ones(2), m.ones(2)), strict=True),
    lambda m: m.autograd.functional.jacobian(lambda x: x * 2, m.ones(2), strict=True,
                                             vectorize=True),
    # misuse
    lambda m: m.autograd.functional.vjp(lambda x: x * 2, m.ones(2)),
    lambda m: m.autograd.functional.vjp(lambda x: x * 2, m.ones(2), m.ones(3)),
    lambda m: m.autograd.functional.vjp(lambda x: (x, x), m.ones(2), (m.ones(2),)),
    lambda m: m.autograd.functional.vjp(lambda x: x * 2, m.ones(2), (m.ones(2), m.ones(2))),
    lambda m: m.autograd.functional.jvp(lambda x, y: x * y, (m.ones(2), m.ones(2)),
                                        (m.ones(2), m.ones(3))),
    lambda m: m.autograd.functional.jacobian(lambda x: x, [1.0, 2.0]),
    lambda m: m.autograd.functional.jacobian(lambda x: x, (m.ones(1), 2.0)),
    lambda m: m.autograd.functional.jacobian(lambda x: 3.0, m.ones(1)),
    lambda m: m.autograd.functional.hessian(lambda x: x * x, m.ones(2)),
    lambda m: m.autograd.functional.hessian(lambda x: (x.sum(), x.sum()), m.ones(2)),
    lambda m: m.autograd.functional.hvp(lambda x: x * x, m.ones(2), m.ones(2)),
    lambda m: m.autograd.functional.jacobian(lambda x: x, m.ones(1), strategy="sideways"),
    lambda m: m.autograd.functional.jacobian(lambda x: x, m.ones(1), create_graph=True,
                                             strategy="forward-mode"),
    lambda m: m.autograd.functional.hessian(lambda x: x.sum(), m.ones(1),
                                            outer_jacobian_strategy="sideways"),
]


@pytest.mark.parametrize("k", range(len(STRICT_AND_MISUSE)))
def test_errors_as_torch(torch, k):
    ours = _error(T, STRICT_AND_MISUSE[k])
    theirs = _error(torch, STRICT_AND_MISUSE[k])
    assert ours[0] is theirs[0], (ours, theirs)
    # same text, up to the class names of types and sizes
    assert ours[1].replace("retrograd", "torch") == theirs[1], (ours[1], theirs[1])


def test_forward_mode_needs_vectorize_as_torch():
    # (forward mode itself: tests/autograd/test_forward_ad.py)
    with pytest.raises(NotImplementedError, match="vectorize=True"):
        RF.jacobian(lambda x: x * 2, T.ones(2), strategy="forward-mode")
    with pytest.raises(NotImplementedError, match="vectorize=True"):
        RF.hessian(lambda x: x.sum(), T.ones(2), outer_jacobian_strategy="forward-mode")


def test_results_detached_and_grad_mode_kept():
    x = T.ones(2, requires_grad=True)
    with T.no_grad():
        out, v = RF.vjp(lambda a: (a * a).sum(), x)
    assert not v.requires_grad and v.grad_fn is None
    assert T.is_grad_enabled()
    jac = RF.jacobian(lambda a: a * a, x)
    assert jac.grad_fn is None and jac.dtype == T.float32


@pytest.mark.parametrize("module", ["retrograd.autograd.functional",
                                    "retrograd.utils.checkpoint"])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module),
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
