"""Op tests, the short-time Fourier transform: ``stft`` and ``istft`` (ops/spectral.py).

retrograd stores a complex spectrum as PyTorch's ``view_as_real`` does (a last dimension of
2), so ``stft`` is compared with ``torch.stft(..., return_complex=False)`` and ``istft``'s
input is handed to PyTorch through ``torch.view_as_complex``.  The table runs float64
gradcheck and gradgradcheck (input and window) and the comparisons with PyTorch; below it,
the round trip, the warnings and the errors.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd

from .helpers import Case, case_checks

CASES: list[Case] = []

# no complex dtype: PyTorch's graph passes through complex nodes (FftR2C -> ViewAsReal,
# ViewAsComplex -> FftC2R) that retrograd's real layout has no counterpart for
COMPLEX = {"grad_fn": "PyTorch's last node is ViewAsRealBackward0 (a complex view); "
                      "retrograd's output is already real",
           "structure": "PyTorch's graph holds complex views (view_as_real/view_as_complex)"}
COMPLEX_IN = {"structure": COMPLEX["structure"]}


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


def stft(m, x, *window, **kw):
    return m.stft(x, 8, window=window[0] if window else None, return_complex=False, **kw)


def spectrum(m, s):
    """retrograd's real layout as each library takes it (complex for PyTorch)."""
    return s if m is retrograd else m.view_as_complex(s)


case("stft", lambda m, x: stft(m, x), ((20,),), xfail=COMPLEX)
case("stft_batched_window_hop", lambda m, x, w: stft(m, x, w, hop_length=3), ((2, 20), (8,)),
     xfail=COMPLEX)
case("stft_short_window_normalized_twosided", lambda m, x, w: stft(
    m, x, w, win_length=6, normalized=True, onesided=False), ((17,), (6,)), xfail=COMPLEX)
case("stft_constant_pad", lambda m, x: stft(m, x, pad_mode="constant"), ((12,),),
     xfail=COMPLEX)
case("stft_replicate_pad", lambda m, x: stft(m, x, pad_mode="replicate"), ((12,),),
     xfail=COMPLEX)
case("stft_no_center", lambda m, x, w: stft(m, x, w, center=False, hop_length=4),
     ((2, 19), (8,)), xfail=COMPLEX)
case("stft_align_to_window", lambda m, x, w: stft(
    m, x, w, center=False, win_length=5, hop_length=3, align_to_window=True), ((16,), (5,)),
    xfail=COMPLEX)

case("istft", lambda m, s, w: m.istft(spectrum(m, s), 8, window=w), ((5, 6, 2), (8,)), "pos",
     xfail=COMPLEX_IN)
case("istft_batched_length", lambda m, s: m.istft(spectrum(m, s), 8, hop_length=4,
                                                  window=m.ones(8, dtype=s.dtype), length=13),
     ((2, 5, 4, 2),), xfail=COMPLEX_IN)
case("istft_zero_padded_length", lambda m, s: m.istft(
    spectrum(m, s), 8, hop_length=4, window=m.ones(8, dtype=s.dtype), length=30),
    ((5, 4, 2),), xfail=COMPLEX_IN)
case("istft_twosided_normalized_no_center", lambda m, s, w: m.istft(
    spectrum(m, s), 8, hop_length=2, window=w, normalized=True, onesided=False,
    center=False), ((8, 5, 2), (8,)), ("real", "pos"), xfail=COMPLEX_IN)
case("istft_short_window", lambda m, s, w: m.istft(spectrum(m, s), 8, hop_length=2,
                                                   win_length=6, window=w),
     ((5, 7, 2), (6,)), ("real", "pos"), xfail=COMPLEX_IN)

(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


def test_istft_inverts_stft():
    x = retrograd.tensor(np.random.default_rng(0).standard_normal((2, 40)))
    w = retrograd.hann_window(16, dtype=retrograd.float64)
    spec = retrograd.stft(x, 16, 4, window=w, return_complex=False)
    back = retrograd.istft(spec, 16, 4, window=w, length=40)
    np.testing.assert_allclose(back.numpy(), x.numpy(), atol=1e-12)


def test_warnings_as_torch():
    # (PyTorch warns once per process, so only retrograd's side is checked here; the texts
    # are PyTorch's)
    for m in (retrograd,):
        with pytest.warns(UserWarning, match="return_complex=False is deprecated"):
            m.stft(m.ones(16), 8, window=m.ones(8), return_complex=False)
        with pytest.warns(UserWarning, match="A window was not provided"):
            m.stft(m.ones(16), 8, return_complex=False)


def test_return_complex_true_is_refused_naming_the_real_layout():
    with pytest.raises(NotImplementedError, match="return_complex=False"):
        retrograd.stft(retrograd.ones(16), 8, window=retrograd.ones(8), return_complex=True)


def z(m, *shape):
    return m.zeros(*shape, dtype=m.float64)


BAD = [
    ("return_complex missing", lambda m: m.stft(z(m, 16), 8), "return_complex"),
    ("n_fft 0", lambda m: m.stft(z(m, 16), 0, return_complex=False), "n_fft"),
    ("n_fft too long", lambda m: m.stft(z(m, 16), 20, center=False, return_complex=False),
     "n_fft"),
    ("hop 0", lambda m: m.stft(z(m, 16), 8, 0, return_complex=False), "hop_length"),
    ("win_length", lambda m: m.stft(z(m, 16), 8, win_length=9, return_complex=False),
     "win_length"),
    ("window size", lambda m: m.stft(z(m, 16), 8, win_length=6, window=z(m, 5),
                                     return_complex=False), "window"),
    ("3-d input", lambda m: m.stft(z(m, 2, 2, 8), 4, return_complex=False), "1d or 2d"),
    ("int input", lambda m: m.stft(m.zeros(16, dtype=m.int32), 8, center=False,
                                   return_complex=False), "floating point"),
    ("align with center", lambda m: m.stft(z(m, 16), 8, return_complex=False,
                                           align_to_window=True), "align_to_window"),
    ("istft real input", lambda m: m.istft(z(m, 5, 6), 8), "complex"),
]


@pytest.mark.parametrize("call,words", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_spectral_errors_as_torch(call, words, torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as want:
            call(torch)
        with pytest.raises(type(want.value)) as got:
            call(retrograd)
    assert words in str(got.value).lower(), str(got.value)
