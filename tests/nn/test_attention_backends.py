"""nn.attention's SDPBackend and sdpa_kernel against PyTorch: the enum's names and values,
what the context manager yields, argument errors, and that attention computed inside any
choice equals PyTorch's math kernel."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as T
from retrograd.nn.attention import SDPBackend, current_backends, sdpa_kernel

from .helpers import close


def test_enum_matches_torch(torch):
    theirs = torch.nn.attention.SDPBackend
    assert [(m.name, m.value) for m in SDPBackend] == \
        [(name, int(m.value)) for name, m in theirs.__members__.items()]


def test_context_yields_restores_and_nests():
    before = current_backends()
    with sdpa_kernel(SDPBackend.MATH) as result:
        assert result == {} and current_backends() == [SDPBackend.MATH]
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.FLASH_ATTENTION,
                          SDPBackend.MATH]):
            assert current_backends() == [SDPBackend.FLASH_ATTENTION, SDPBackend.MATH]
        assert current_backends() == [SDPBackend.MATH]
    assert current_backends() == before


def test_bad_argument_error_matches_torch(torch):
    messages = []
    for mod in (T.nn.attention, torch.nn.attention):
        with pytest.raises(AssertionError) as info:
            with mod.sdpa_kernel(3):
                pass
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("backend", [SDPBackend.MATH, SDPBackend.FLASH_ATTENTION])
def test_attention_inside_a_choice_equals_torchs_math_kernel(torch, backend):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 2, 4, 3)) for _ in range(3))
    with sdpa_kernel(backend):
        ours = T.nn.functional.scaled_dot_product_attention(
            T.tensor(q), T.tensor(k), T.tensor(v), is_causal=True)
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
        theirs = torch.nn.functional.scaled_dot_product_attention(
            torch.tensor(q), torch.tensor(k), torch.tensor(v), is_causal=True)
    close(ours, theirs, 1e-12)
