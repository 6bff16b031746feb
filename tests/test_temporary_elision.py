"""Temporary elision (ops/_elision.py): an op writes its result into a temporary input's
memory only when nothing else can see that memory again.

Each test builds the temporary in a helper that notes its array's address and returns it
without keeping a reference (as ``x @ w`` does in ``x @ w + b``): the result lies at that
address exactly when the op elided (the temporary is alive during the op, so a fresh result
can never land there).  The must-not cases check that the result is elsewhere AND that the
values seen through the other holder are untouched.
"""

from __future__ import annotations

import weakref

import numpy as np
import pytest
import torch

import retrograd as T
from retrograd.ops import _apply, _elision

pytestmark = pytest.mark.skipif(
    not _elision._EXACT_REFCOUNTS, reason="elision is off where refcounts are not exact "
    "(CPython 3.14+, other interpreters): nothing to check")

SHAPE = (64, 80)  # 5120 elements: above the threshold the tests set


@pytest.fixture(autouse=True)
def _small_threshold(monkeypatch):
    # the op callers read ops._apply.ELIDE_MIN: small enough here for small test tensors
    monkeypatch.setattr(_apply, "ELIDE_MIN", 4096)


def _ptr(t):
    return t._data.__array_interface__["data"][0]


class Temps:
    """Makes temporaries and remembers where their arrays lie."""

    def __init__(self):
        self.array = None
        self.kept = []  # other holders, where a test wants some

    def __call__(self, x, keep=None):
        t = x * 2.0
        # a weak reference, which leaves the refcount elision reads as it is: when the temporary
        # was not reused its array dies, and a new result at the same address (malloc reuses
        # freed memory) is not mistaken for an elided one
        self.array = weakref.ref(t._data)
        if keep is not None:
            self.kept.append(keep(t))
        return t

    def elided(self, result):
        array = self.array()
        return array is not None and np.shares_memory(result._data, array)


def _inputs(dtype=np.float32, requires_grad=False):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(SHAPE).astype(dtype)
    b = rng.standard_normal(SHAPE[1:]).astype(dtype)
    return (T.tensor(x, requires_grad=requires_grad), T.tensor(b),
            torch.tensor(x, requires_grad=requires_grad), torch.tensor(b))


# --------------------------------------------------------------------- where it happens

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_plain_binary_operator_elides_and_matches(dtype):
    x, b, xt, bt = _inputs(dtype)
    tmp = Temps()
    with T.no_grad():
        r = tmp(x) + b
    assert tmp.elided(r)
    assert r.dtype == x.dtype and r.shape == x.shape and r._version == 0
    np.testing.assert_array_equal(r.numpy(), (xt * 2.0 + bt).numpy())
    r = b + tmp(x)  # the right operand takes it
    assert tmp.elided(r)
    np.testing.assert_array_equal(r.numpy(), (bt + xt * 2.0).numpy())


def test_plain_unary_elides_and_matches():
    x, _, xt, _ = _inputs()
    tmp = Temps()
    r = T.tanh(tmp(x))
    assert tmp.elided(r)
    # bit for bit what NumPy gives without the elision; PyTorch's tanh rounds its own way
    np.testing.assert_array_equal(r.numpy(), np.tanh(x.numpy() * np.float32(2.0)))
    np.testing.assert_allclose(r.numpy(), torch.tanh(xt * 2.0).numpy(), rtol=1e-6, atol=1e-7)


def test_recorded_add_and_tanh_elide_with_torch_gradients():
    # bench/ (d)'s pattern: h + exp(tanh(sin(h))) * 0.1 elides the add, and tanh of a
    # temporary whose node saved nothing of it
    x, b, xt, bt = _inputs(requires_grad=True)
    tmp = Temps()
    s = T.tanh(tmp(x))
    assert tmp.elided(s)
    r = tmp(x) + s
    assert tmp.elided(r) and r.grad_fn.name() == "AddBackward0"
    r.sum().backward()
    st = torch.tanh(xt * 2.0)
    rt = xt * 2.0 + st
    rt.sum().backward()
    xn = x.detach().numpy() * np.float32(2.0)
    np.testing.assert_array_equal(r.detach().numpy(), xn + np.tanh(xn))
    np.testing.assert_allclose(r.detach().numpy(), rt.detach().numpy(), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_double_backward_through_elided_tanh():
    x, _, xt, _ = _inputs(np.float64, requires_grad=True)
    tmp = Temps()
    y = T.tanh(tmp(x))
    assert tmp.elided(y)
    (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
    g.sum().backward()
    yt = torch.tanh(xt * 2.0)
    (gt,) = torch.autograd.grad(yt.sum(), xt, create_graph=True)
    gt.sum().backward()
    np.testing.assert_allclose(g.detach().numpy(), gt.detach().numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_broadcast_to_a_larger_shape_falls_back():
    # the temporary is the small operand: the result cannot fit it
    x, b, xt, bt = _inputs()
    small = []

    def tmp_small():
        t = b * 2.0
        small.append(_ptr(t))
        return t

    for grad in (False, True):
        x.requires_grad_(grad)
        r = tmp_small() + x
        assert _ptr(r) != small[-1] and r.shape == x.shape
        np.testing.assert_array_equal(r.detach().numpy(), (bt * 2.0 + xt).numpy())


# --------------------------------------------------------------------- where it must not

def _not_elided_plain(keep):
    x, b, xt, bt = _inputs()
    tmp = Temps()
    with T.no_grad():
        r = tmp(x, keep) + b
    assert not tmp.elided(r)
    np.testing.assert_array_equal(r.numpy(), (xt * 2.0 + bt).numpy())
    return tmp.kept[0], (xt * 2.0).numpy()


def test_not_when_named():
    x, b, _, _ = _inputs()
    tmp = Temps()
    for op in (lambda t: t + b, lambda t: t.__add__(b), lambda t: T.mul(t, b),
               lambda t: T.tanh(t), lambda t: t.tanh()):
        y = tmp(x)
        r = op(y)
        assert not tmp.elided(r)
        np.testing.assert_array_equal(y.numpy(), x.numpy() * np.float32(2.0))


def test_not_when_a_view_is_alive():
    view, want = _not_elided_plain(lambda t: t[1:])
    np.testing.assert_array_equal(view.numpy(), want[1:])


@pytest.mark.parametrize("share", ["detach", "data", "numpy", "view_as"])
def test_not_when_another_tensor_or_array_shares_it(share):
    keep = {"detach": lambda t: t.detach(), "data": lambda t: t.data,
            "numpy": lambda t: t.numpy(), "view_as": lambda t: t.view_as(t)}[share]
    other, want = _not_elided_plain(keep)
    got = other if isinstance(other, np.ndarray) else other.numpy()
    np.testing.assert_array_equal(got, want)


def test_not_when_a_node_saved_it():
    # sin and mul save their inputs, exp its output: the derivatives read them
    x, b, xt, bt = _inputs(requires_grad=True)
    tmp = Temps()
    f = T.sin(tmp(x))
    assert not tmp.elided(f)
    m = tmp(x) * x
    assert not tmp.elided(m)
    z = T.tanh(T.exp(tmp(x)))
    (f.sum() + m.sum() + z.sum()).backward()
    (torch.sin(xt * 2.0).sum() + (xt * 2.0 * xt).sum()
     + torch.tanh(torch.exp(xt * 2.0)).sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_not_into_an_output_saved_for_backward():
    x, _, xt, _ = _inputs(requires_grad=True)
    kept = []

    def saved_output():
        t = T.exp(x)  # ExpBackward0 saves its result
        kept.append(_ptr(t))
        return t

    r = saved_output() + x
    assert _ptr(r) != kept[0]
    r.sum().backward()
    (torch.exp(xt) + xt).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("mark", ["retain_grad", "hook"])
def test_not_with_retain_grad_or_hooks(mark):
    x, b, _, _ = _inputs(requires_grad=True)
    tmp = Temps()
    seen = []

    def keep(t):
        if mark == "retain_grad":
            t.retain_grad()
        else:
            t.register_hook(lambda g: seen.append(g.shape))

    r = tmp(x, keep) + b
    assert not tmp.elided(r)
    r.sum().backward()
    assert mark == "retain_grad" or seen == [T.Size(SHAPE)]


def test_not_into_a_leaf_requiring_grad():
    x, b, _, _ = _inputs()
    addr = []

    def leaf():
        t = T.ones(SHAPE, requires_grad=True)
        addr.append(_ptr(t))
        return t

    r = leaf() + x
    assert _ptr(r) != addr[0]
    with T.no_grad():
        r = leaf() + x
    assert _ptr(r) != addr[1]


def test_not_under_forward_ad():
    import retrograd.autograd.forward_ad as fwad

    x, b, xt, bt = _inputs()
    tangent = T.ones(SHAPE)
    tmp = Temps()
    with fwad.dual_level():
        d = fwad.make_dual(x, tangent)
        r = T.tanh(tmp(d)) * 1.0
        assert not tmp.elided(r)
        _, tan = fwad.unpack_dual(r)
    want = (1 - torch.tanh(xt * 2.0) ** 2) * 2.0
    np.testing.assert_allclose(tan.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)


def test_not_under_anomaly_mode_or_saved_tensor_hooks():
    x, b, _, _ = _inputs(requires_grad=True)
    tmp = Temps()
    with T.autograd.detect_anomaly():
        r = tmp(x) + b
    assert not tmp.elided(r)
    with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        r = tmp(x) + b
    assert not tmp.elided(r)


def test_not_under_inference_mode():
    x, b, _, _ = _inputs()
    tmp = Temps()
    with T.inference_mode():
        r = tmp(x) + b
        assert not tmp.elided(r)
        assert r.is_inference()


def test_not_while_compile_traces():
    x, b, _, _ = _inputs()

    def fn(x, b):
        return T.tanh(x * 2.0) + b

    step = T.compile(fn)
    with T.no_grad():
        want = fn(x, b).numpy()
        for _ in range(3):  # the trace, then replays
            np.testing.assert_array_equal(step(x, b).numpy(), want)
    np.testing.assert_array_equal(x.numpy(), _inputs()[0].numpy())  # inputs untouched


def test_inputs_and_versions_untouched():
    # elision writes into the dying temporary only: the named operands keep their values and
    # versions (as PyTorch: an out-of-place op bumps nothing), the result starts at 0
    x, b, xt, bt = _inputs()
    x0, b0 = x.numpy().copy(), b.numpy().copy()
    tmp = Temps()
    r = T.sin(tmp(x)) + b
    assert tmp.elided(r)
    assert r._version == 0 and x._version == 0 and b._version == 0
    np.testing.assert_array_equal(x.numpy(), x0)
    np.testing.assert_array_equal(b.numpy(), b0)


def test_small_tensors_are_left_alone():
    x = T.ones(8)
    addr = []

    def small():
        t = x * 2.0
        addr.append(_ptr(t))
        return t

    r = small() + x
    assert _ptr(r) != addr[0]
