"""Op tests, top-level ATen spellings (ops/aten_forms.py): ``grid_sampler`` (2d/3d),
``affine_grid_generator``, ``embedding_renorm_``, ``is_inference``, ``frombuffer``."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

from .helpers import Case, case_checks

GRID = np.array([[[[-0.9, -0.5], [0.2, 0.7]], [[0.5, -0.1], [1.3, 0.4]]]])  # (1, 2, 2, 2)
W = np.array([[3.0, 4.0], [0.3, 0.4], [1.0, -2.0]])


def _grid(m, dtype):
    return m.tensor(GRID, dtype=dtype)


CASES = [
    Case("grid_sampler_bilinear_zeros", lambda m, x: m.grid_sampler(
        x, _grid(m, x.dtype), 0, 0, False), ((1, 2, 3, 3),)),
    Case("grid_sampler_2d_border_aligned", lambda m, x, g: m.grid_sampler_2d(
        x, g, 0, 1, True), ((1, 2, 3, 3), (1, 2, 2, 2)), ("real", "unit")),
    Case("grid_sampler_3d_reflection", lambda m, x, g: m.grid_sampler_3d(
        x, g, 0, 2, False), ((1, 1, 2, 3, 3), (1, 1, 2, 2, 3)), ("real", "unit")),
    Case("affine_grid_generator", lambda m, t: m.affine_grid_generator(t, [1, 2, 3, 4], False),
         ((1, 2, 3),)),
    # the renorm is in place and unrecorded: a constant factor here, compared with torch's
    Case("embedding_renorm_", lambda m, x: x * m.embedding_renorm_(
        m.tensor(W, dtype=x.dtype), m.tensor([0, 2]), 1.5, 2.0), ((3, 2),)),
    Case("conv_tbc", lambda m, x, w, b: m.conv_tbc(x, w, b, 1), ((5, 2, 3), (3, 3, 4), (4,)),
         xfail={"grad_fn": "composed of conv1d and permutes; PyTorch's is one ConvTbcBackward0",
                "structure": "composed of conv1d and permutes"}),
    Case("empty_permuted", lambda m, x: x + m.empty_permuted((2, 3), (1, 0), dtype=x.dtype)
         .zero_(), ((2, 3),)),
    Case("is_inference", lambda m, x: x + float(m.is_inference(x)), ((3,),)),
    Case("frombuffer", lambda m, x: x * m.frombuffer(
        bytearray(np.arange(4.0).astype(np.float64).tobytes()), dtype=m.float64).to(x.dtype),
        ((4,),)),
]

(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


def test_unknown_sampler_mode_is_refused():
    # (PyTorch 2.13 accepts any integer here without checking; retrograd names the choices)
    with pytest.raises(RuntimeError, match="interpolation_mode must be"):
        retrograd.grid_sampler(retrograd.zeros(1, 1, 2, 2), retrograd.zeros(1, 1, 1, 2), 5, 0,
                               False)


def test_empty_permuted_strides_as_torch(torch):
    for size, order in (((2, 3, 4), (0, 2, 1)), ((2, 3, 4, 5), (0, 2, 3, 1)), ((3,), (0,))):
        assert retrograd.empty_permuted(size, order).stride() == torch.empty_permuted(
            size, order).stride()


def test_is_inference_as_torch(torch):
    for m in (retrograd, torch):
        assert m.is_inference(m.zeros(2)) is False
        with m.inference_mode():
            assert m.is_inference(m.zeros(2)) is True


def test_frombuffer_shares_memory_count_offset(torch):
    buf = bytearray(np.arange(6, dtype=np.int32).tobytes())
    for m in (retrograd, torch):
        t = m.frombuffer(buf, dtype=m.int32, count=3, offset=4)
        assert t.tolist() == [1, 2, 3]
    t = retrograd.frombuffer(buf, dtype=retrograd.int32)
    buf[0] = 9
    assert t[0].item() == 9


BAD = [
    ("conv_tbc channels", lambda m: m.conv_tbc(m.zeros(5, 2, 3), m.zeros(3, 2, 4), m.zeros(4)),
     "input channels"),
    ("empty_permuted duplicate", lambda m: m.empty_permuted((2, 3), (0, 0)), "Duplicate dim"),
    ("frombuffer odd length", lambda m: m.frombuffer(bytearray(b"abc"), dtype=m.int16),
     "multiple of element size"),
    ("frombuffer count", lambda m: m.frombuffer(bytearray(b"abcd"), dtype=m.uint8, count=9),
     "must not be greater"),
]


@pytest.mark.parametrize("call,words", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_aten_forms_errors_as_torch(call, words, torch):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)) as got:
        call(retrograd)
    assert words in str(got.value), str(got.value)
