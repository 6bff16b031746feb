"""Op tests, ``retrograd.embedding_bag``: PyTorch's top-level four-tuple form
(ops/embedding_aten.py).

The table checks all four outputs against ``torch.embedding_bag`` (output, offset2bag,
bag_size, max_indices), with float64 gradcheck and gradgradcheck of the output; below it,
the errors.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

from .helpers import Case, case_checks

CASES: list[Case] = []

FLAT = np.array([1, 2, 4, 4, 3, 0, 5, 2])
OFFSETS = np.array([0, 3, 3, 6])  # an empty bag too
LAST = np.array([0, 3, 3, 6, 8])  # include_last_offset: the last offset is the input's length


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


def bag(m, w, offsets=OFFSETS, *args):
    return m.embedding_bag(w, m.tensor(FLAT), m.tensor(offsets), *args)


for _mode in (0, 1, 2):
    case(f"embedding_bag_mode{_mode}", lambda m, w, mode: bag(m, w, OFFSETS, False, mode),
         ((6, 3),), "spread", params={"mode": _mode})
    case(f"embedding_bag_mode{_mode}_padding", lambda m, w, mode: bag(
        m, w, OFFSETS, False, mode, False, None, False, 4), ((6, 3),), "spread",
        params={"mode": _mode})
    case(f"embedding_bag_mode{_mode}_last_offset", lambda m, w, mode: bag(
        m, w, LAST, False, mode, False, None, True), ((6, 3),), "spread",
        params={"mode": _mode})
case("embedding_bag_negative_padding", lambda m, w: bag(
    m, w, OFFSETS, False, 1, False, None, False, -2), ((6, 3),))
case("embedding_bag_keywords", lambda m, w: m.embedding_bag(
    weight=w, indices=m.tensor(FLAT), offsets=m.tensor(OFFSETS), mode=1), ((6, 3),))
case("embedding_bag_per_sample_weights", lambda m, w, p: bag(
    m, w, OFFSETS, False, 0, False, p), ((6, 3), (8,)))
case("embedding_bag_per_sample_weights_padding", lambda m, w, p: bag(
    m, w, OFFSETS, False, 0, False, p, False, 2), ((6, 3), (8,)))
case("embedding_bag_max_ignores_freq", lambda m, w: bag(m, w, OFFSETS, True, 2), ((6, 3),),
     "spread")
case("embedding_bag_freq_no_repeats", lambda m, w: m.embedding_bag(
    w, m.tensor(np.array([3, 1, 0, 5])), m.tensor(np.array([0, 1])), True, 1), ((6, 3),))

(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


def test_offset2bag_is_empty_on_torchs_sum_fast_path(torch):
    # float32 sum without padding: PyTorch's kernel leaves offset2bag empty; float64 fills it
    for dtype in ("float32", "float64"):
        got = [m.embedding_bag(m.ones(6, 3, dtype=getattr(m, dtype)), m.tensor(FLAT),
                               m.tensor(OFFSETS))[1].numpy() for m in (retrograd, torch)]
        np.testing.assert_array_equal(got[0], got[1])
        assert got[0].size == (0 if dtype == "float32" else FLAT.size)


W = np.zeros((5, 3))
BAD = [
    ("mode 3", lambda m: m.embedding_bag(m.tensor(W), m.tensor([1]), m.tensor([0]), False, 3),
     "mode"),
    ("float indices", lambda m: m.embedding_bag(m.tensor(W), m.tensor([1.0]), m.tensor([0])),
     "long, int"),
    ("float offsets", lambda m: m.embedding_bag(m.tensor(W), m.tensor([1]), m.tensor([0.0])),
     "long, int"),
    ("no offsets", lambda m: m.embedding_bag(m.tensor(W), m.tensor([1]), None), "offsets"),
    ("psw with mean", lambda m: m.embedding_bag(m.tensor(W), m.tensor([1]), m.tensor([0]),
                                                False, 1, False, m.ones(1, dtype=m.float64)),
     "per_sample_weights"),
    ("index out of range", lambda m: m.embedding_bag(m.tensor(W), m.tensor([7]),
                                                     m.tensor([0])), "index_size"),
    ("first offset", lambda m: m.embedding_bag(m.tensor(W), m.tensor([1, 2]), m.tensor([1])),
     "offsets[0]"),
    ("padding_idx", lambda m: m.embedding_bag(m.tensor(W), m.tensor([1]), m.tensor([0]), False,
                                              1, False, None, False, 9), "padding_idx"),
]


@pytest.mark.parametrize("call,words", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_embedding_bag_errors_as_torch(call, words, torch):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)) as got:
        call(retrograd)
    assert words in str(got.value).lower(), str(got.value)


@pytest.mark.parametrize("grad", ["leaf", "none", "no_grad"])
def test_sum_mode_aux_sizes_follow_torchs_kernels(grad, torch):
    # one per offset on PyTorch's forward-only kernel, one per bag otherwise
    got = []
    for m in (retrograd, torch):
        w = m.ones(6, 3, requires_grad=grad != "none")
        with m.no_grad() if grad == "no_grad" else m.enable_grad():
            out = m.embedding_bag(w, m.tensor(FLAT), m.tensor(LAST), False, 0, False, None, True)
        got.append([tuple(t.shape) for t in out])
    assert got[0] == got[1]
