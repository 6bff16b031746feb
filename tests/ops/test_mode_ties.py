"""``mode``'s index among ties, against PyTorch's CPU kernel (ops/quantiles.py, issue 6).

PyTorch sorts (value, index) pairs by value with ``std::sort`` and returns the index that
ends the mode's run: the last occurrence for slices of up to 16 elements (libstdc++ sorts
those by insertion, a stable sort), an artefact of introsort's partitioning beyond.  So the
values are compared everywhere, the indices where PyTorch's are well-defined (<= 16
elements, or a mode that occurs once), and beyond that the index must point at the mode.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd


def _ties(n, seed):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 4, (5, n)).astype(np.float64)  # many ties in every row


@pytest.mark.parametrize("n", [1, 2, 7, 16])
def test_up_to_16_elements_values_and_indices_are_torchs(n, torch):
    x = _ties(n, n)
    got = retrograd.tensor(x).mode(-1)
    want = torch.tensor(x).mode(-1)
    np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
    np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())


@pytest.mark.parametrize("n", [17, 40, 100])
def test_past_16_elements_values_are_torchs_and_the_index_points_at_the_mode(n, torch):
    x = _ties(n, n)
    got = retrograd.tensor(x).mode(-1)
    want = torch.tensor(x).mode(-1)
    np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
    idx = got.indices.numpy()
    np.testing.assert_array_equal(x[np.arange(5), idx], got.values.numpy())
    # retrograd's choice: the last occurrence, on every platform
    last = [np.nonzero(row == v)[0][-1] for row, v in zip(x, got.values.numpy())]
    np.testing.assert_array_equal(idx, last)


def test_past_16_elements_without_ties_indices_are_torchs(torch):
    x = np.random.default_rng(5).permutation(40).astype(np.float64).reshape(2, 20)
    got = retrograd.tensor(x).mode(1)
    want = torch.tensor(x).mode(1)
    np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
    np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
