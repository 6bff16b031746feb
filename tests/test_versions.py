"""In-place ops and version counters: what is refused, what is allowed, and the gradients,
exactly as PyTorch 2.13 (views, bases, aliases, saved inputs and outputs).
"""

import re

import numpy as np
import pytest

import retrograd as R

torch = pytest.importorskip("torch")

from engine_helpers import both_raise, close, pair, rand_pair  # noqa: E402


def test_version_counter_matches_torch():
    res = []
    for x in rand_pair(3, requires_grad=False):
        v = [x._version]
        x.add_(1)
        v.append(x._version)
        x.mul_(2)
        v.append(x._version)
        y = x.view(3) if hasattr(x, "view") else x
        y.sub_(1)
        v.append((x._version, y._version))
        d = x.detach()
        d.zero_()
        v.append((x._version, d._version))
        x[0] = 5.0
        v.append(x._version)
        x += 1
        v.append(x._version)
        res.append(v)
    assert res[0] == res[1]


def test_modified_saved_tensor_raises_naming_op_and_versions():
    rx, tx = rand_pair(3)
    ra, ta = rx * 1, tx * 1
    ry, ty = (ra * ra).sum(), (ta * ta).sum()
    ra.add_(1)
    ta.add_(1)
    both_raise(ry.backward, ty.backward, match=r"MulBackward0.*version 1; expected version 0")
    # saved outputs (exp saves its result) too
    ra, ta = rx * 1, tx * 1
    re_, te = ra.exp(), ta.exp()
    rs, ts = re_.sum(), te.sum()
    re_.mul_(2)
    te.mul_(2)
    both_raise(rs.backward, ts.backward, match=r"ExpBackward0")


def test_inplace_on_unused_saved_is_fine():
    # add saves nothing: modifying its input afterwards is harmless (as in torch)
    rx, tx = rand_pair(3)
    ra, ta = rx * 1, tx * 1
    ry, ty = (ra + 2).sum(), (ta + 2).sum()
    ra.mul_(3)
    ta.mul_(3)
    ry.backward()
    ty.backward()
    close(rx.grad, tx.grad)


def test_inplace_chain_gradient_matches():
    rx, tx = rand_pair(3)
    for x in (rx, tx):
        y = x * 2
        y.mul_(x)
        y.add_(x)
        y.exp_()
        y.sum().backward()
    close(rx.grad, tx.grad)


def test_inplace_on_leaf_requiring_grad_raises_and_allowed_under_no_grad():
    rx, tx = rand_pair(3)
    both_raise(lambda: rx.add_(1), lambda: tx.add_(1), match="leaf Variable")
    both_raise(lambda: rx.mul_(2), lambda: tx.mul_(2), match="leaf Variable")
    for lib, x in ((R, rx), (torch, tx)):
        with lib.no_grad():
            x.mul_(2)
            x.add_(1)
        assert x.requires_grad and x.is_leaf
    close(rx, tx)
    assert rx._version == tx._version


def test_grad_zero_inplace_then_backward():
    rx, tx = rand_pair(3)
    for x in (rx, tx):
        (x * x).sum().backward()
        x.grad.data.zero_()
        (x * 4).sum().backward()
        x.grad.zero_()
        (x.sin()).sum().backward()
    close(rx.grad, tx.grad)


def test_data_edits_do_not_bump_version():
    res = []
    for x in rand_pair(3):
        y = x * 1
        z = (y * y).sum()
        y.data.mul_(2)  # invisible to autograd: no error, uses the new values
        z.backward()
        res.append((y._version, x.grad))
    assert res[0][0] == res[1][0]
    close(res[0][1], res[1][1])


def test_setitem_on_non_leaf_gradients():
    (rx, tx), (rz, tz) = rand_pair(3), rand_pair(2, seed=1)
    for x, z in ((rx, rz), (tx, tz)):
        y = x * 1
        y[0] = z[0] * 2
        y[1:] = x[1:].exp() * z.sum()
        (y * y).sum().backward()
    close(rx.grad, tx.grad)
    close(rz.grad, tz.grad)
    # y[1:] saved by the multiplication, then overwritten: both refuse
    losses = []
    for x, z in ((rx, rz), (tx, tz)):
        y = x * 1
        y[1:] = y[1:] * z.sum()
        losses.append((y * y).sum())
    with pytest.raises(RuntimeError) as tinfo:
        losses[1].backward()
    versions = re.search(r"version \d+; expected version \d+", str(tinfo.value)).group()
    with pytest.raises(RuntimeError, match=versions):
        losses[0].backward()


def _inplace_view_view_base(lib, x):
    y = x * 1
    z = (y[:2] * y[:2]).sum()
    y.mul_(2)
    z.backward()


def _inplace_base_view(lib, x):
    y = x * 1
    z = (y * y).sum()
    y[:2].mul_(2)
    z.backward()


def _inplace_through_view(lib, x):
    y = x * 1
    y.view(3).mul_(2)
    (y * y).sum().backward()


def _inplace_saved_output(lib, x):
    y = x.exp()
    y.add_(1)
    y.sum().backward()


def _inplace_detached_alias(lib, x):
    y = x.tanh()
    y.detach().zero_()
    y.sum().backward()


def _inplace_data_alias(lib, x):
    y = x.sigmoid()
    y.data.zero_()
    y.sum().backward()


def _inplace_relu(lib, x):
    y = x * 2
    y.relu_()
    y.sum().backward()


@pytest.mark.parametrize("scenario", [
    _inplace_view_view_base, _inplace_base_view, _inplace_through_view, _inplace_saved_output,
    _inplace_detached_alias, _inplace_data_alias, _inplace_relu,
], ids=lambda f: f.__name__[len("_inplace_"):])
def test_inplace_and_views_error_or_gradient_as_torch(scenario):
    outcomes = []
    for lib, x in zip((R, torch), pair([1.0, -2.0, 3.0])):
        try:
            scenario(lib, x)
            outcomes.append(("ok", x.grad.detach().numpy().copy()))
        except RuntimeError as e:
            assert "modified by an inplace operation" in str(e)
            outcomes.append(("error", None))
    assert outcomes[0][0] == outcomes[1][0]
    if outcomes[0][0] == "ok":
        np.testing.assert_allclose(outcomes[0][1], outcomes[1][1])
