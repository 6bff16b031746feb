"""``Tensor.to`` in all its forms, against PyTorch: ``to(dtype)``, ``to(device[, dtype])``,
``to(other)``, keywords, ``non_blocking`` and ``copy`` (positional or keyword),
``memory_format=``; whether the result is the tensor itself, its dtype, its grad_fn name,
the gradient through it, and the calls PyTorch refuses."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")

CALLS = [
    ("dtype", lambda m, x: x.to(m.float64)),
    ("same dtype", lambda m, x: x.to(m.float32)),
    ("same dtype copy", lambda m, x: x.to(m.float32, copy=True)),
    ("dtype non_blocking pos", lambda m, x: x.to(m.float64, True)),
    ("dtype non_blocking copy pos", lambda m, x: x.to(m.float32, False, True)),
    ("dtype kw", lambda m, x: x.to(dtype=m.float64)),
    ("device", lambda m, x: x.to("cpu")),
    ("device copy", lambda m, x: x.to("cpu", copy=True)),
    ("device object", lambda m, x: x.to(m.device("cpu"))),
    ("device dtype", lambda m, x: x.to("cpu", m.float64)),
    ("device dtype flags", lambda m, x: x.to("cpu", m.float32, False, True)),
    ("device kw dtype kw", lambda m, x: x.to(device="cpu", dtype=m.float64, non_blocking=True)),
    ("device None dtype", lambda m, x: x.to(None, m.float64)),
    ("other", lambda m, x: x.to(m.zeros(2, dtype=m.float64))),
    ("other same", lambda m, x: x.to(m.zeros(2))),
    ("other copy", lambda m, x: x.to(m.zeros(2), copy=True)),
    ("other flags", lambda m, x: x.to(m.zeros(2), False, True)),
    ("memory_format", lambda m, x: x.to(m.float64, memory_format=None)),
    ("nothing", lambda m, x: x.to()),
    ("int", lambda m, x: x.to(m.int64)),
    ("python float", lambda m, x: x.to(float)),
]


@pytest.mark.parametrize("name,call", CALLS, ids=[c[0] for c in CALLS])
def test_to_as_torch(name, call):
    got = []
    for m in (torch, retrograd):
        x = m.tensor([1.5, -2.0, 3.25], requires_grad=True)
        y = call(m, x)
        fn = None if y.grad_fn is None else y.grad_fn.name()
        row = [y is x, str(y.dtype).split(".")[-1], fn, y.tolist()]
        if y.dtype.is_floating_point and y.requires_grad:
            y.sum().backward() if y is not x else (y * 3).sum().backward()
            row.append(x.grad.tolist())
        got.append(row)
    assert got[1] == got[0]


REFUSED = [
    lambda m, x: x.to(m.float64, foo=1),
    lambda m, x: x.to(x, m.float64),
    lambda m, x: x.to(x, dtype=m.float64),
    lambda m, x: x.to(m.float64, 1),
    lambda m, x: x.to(m.float64, False, False, False),
    lambda m, x: x.to("cpu", dtype=m.float64, device="cpu"),
]


@pytest.mark.parametrize("call", REFUSED)
def test_to_refuses_as_torch(call):
    with pytest.raises(Exception) as want:
        call(torch, torch.zeros(2))
    with pytest.raises(type(want.value), match="to()"):
        call(retrograd, retrograd.zeros(2))


def test_to_copy_is_a_new_tensor_with_its_own_memory():
    x = retrograd.zeros(3)
    y = x.to(retrograd.float32, copy=True)
    y.add_(1.0)
    assert x.tolist() == [0.0, 0.0, 0.0]
    assert not np.shares_memory(x.numpy(), y.numpy())
