"""Op tests, DLPack (ops/interop.py): ``from_dlpack``, ``to_dlpack``, ``Tensor.__dlpack__``
and ``__dlpack_device__``, against PyTorch and NumPy, memory shared both ways."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd
import retrograd.utils.dlpack

from .helpers import Case, case_checks

C = np.array([[1.5, -2.0, 0.25], [3.0, 0.5, -1.0]])

CASES = [
    # the imported tensor is a constant factor: x's gradient is checked through it
    Case("from_dlpack", lambda m, x: x * m.from_dlpack(m.tensor(C, dtype=x.dtype)), ((2, 3),)),
    Case("from_dlpack_of_to_dlpack", lambda m, x: x * m.from_dlpack(
        m.to_dlpack(m.tensor(C, dtype=x.dtype))), ((2, 3),)),
    Case("tensor_dlpack_to_numpy", lambda m, x: x + m.tensor(np.from_dlpack(
        m.tensor(C, dtype=x.dtype))), ((2, 3),)),
]

(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


def test_memory_is_shared_with_torch_both_ways(torch):
    t = torch.zeros(3)
    r = retrograd.from_dlpack(t)
    t[1] = 5.0
    assert r.tolist() == [0.0, 5.0, 0.0] and r.dtype == retrograd.float32
    back = torch.from_dlpack(r)
    back[2] = -1.0
    assert r.tolist() == [0.0, 5.0, -1.0]
    assert not r.requires_grad and r.grad_fn is None


def test_capsules_and_utils_module(torch):
    r = retrograd.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(torch.arange(4)))
    assert r.tolist() == [0, 1, 2, 3] and r.dtype == retrograd.int64
    t = torch.utils.dlpack.from_dlpack(retrograd.utils.dlpack.to_dlpack(retrograd.ones(2)))
    assert t.tolist() == [1.0, 1.0]


def test_copy_true_copies():
    a = np.zeros(2)
    r = retrograd.from_dlpack(a, copy=True)
    a[0] = 1.0
    assert r.tolist() == [0.0, 0.0]


def test_dlpack_device_and_grad_refusal(torch):
    x = retrograd.ones(2)
    assert tuple(x.__dlpack_device__()) == tuple(torch.ones(2).__dlpack_device__())
    for m in (retrograd, torch):
        with pytest.raises(BufferError, match="detach"):
            m.ones(2, requires_grad=True).__dlpack__()


def test_not_a_tensor_or_capsule():
    with pytest.raises(RuntimeError, match="invalid capsule"):
        retrograd.from_dlpack(3)
