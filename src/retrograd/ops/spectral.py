"""The short-time Fourier transform: ``stft`` and its inverse ``istft``, differentiable to
every order in the input and the window.

retrograd has no complex dtype, so a complex spectrum is stored as PyTorch's
``view_as_real`` stores it: a real tensor with a last dimension of 2 (real, imaginary).
``stft(..., return_complex=False)`` returns exactly PyTorch's tensor; ``istft`` takes that
layout where PyTorch takes the complex tensor (``torch.view_as_real`` of PyTorch's input);
``return_complex=True`` is refused, naming the real layout to use instead.

Four small records carry the Fourier transforms, each one's derivative the other's forward
(they are linear maps and each pair is mutually adjoint), so any order of derivative is a
chain of the same four FFTs:

* ``r2c``: real frames (..., n) -> spectrum (..., F, 2) (``rfft``; ``fft`` when two-sided),
  and its adjoint ``r2c_adjoint``: ``n * Re(ifft(z, n))``;
* ``c2r``: spectrum -> real frames (``irfft``), and its adjoint ``c2r_adjoint``:
  ``rfft(g) * c / n`` with ``c`` = 2 for the bins that stand for two (1 for DC, Nyquist).

Framing, windowing, padding and the overlap-add are retrograd's own differentiable ops
(``unfold``, ``mul``, ``pad``, ``fold``), as PyTorch composes them.
"""

from __future__ import annotations

import warnings

from ..backend import namespace
from ..tensor import Tensor, make_tensor
from ._apply import NOTHING, defop
from .padding import pad as _pad
from .shape import reshape, squeeze, transpose, unsqueeze


_COMPLEX = {"float32": "complex64", "float64": "complex128"}


def _stack_complex(xp, z, dtype):
    """A complex array as real pairs (..., 2) of ``dtype``: a free view of its memory."""
    c = _COMPLEX.get(str(dtype))
    if c is None:  # (float16: no complex counterpart)
        return xp.stack([z.real, z.imag], axis=-1).astype(dtype, copy=False)
    z = xp.ascontiguousarray(z.astype(c, copy=False))
    return z.view(dtype).reshape(z.shape + (2,))


def _as_complex(xp, g):
    """Real pairs (..., 2) as a complex array (a view when the pairs are contiguous)."""
    c = _COMPLEX.get(str(g.dtype))
    if c is None:
        return g[..., 0] + 1j * g[..., 1]
    return xp.ascontiguousarray(g).view(c)[..., 0]


def _r2c_fwd(x, n, onesided):
    xp = namespace(x)
    z = xp.fft.rfft(x, n, axis=-1) if onesided else xp.fft.fft(x, n, axis=-1)
    return _stack_complex(xp, z, x.dtype)


def _r2c_adjoint_fwd(g, n, onesided):
    xp = namespace(g)
    z = _as_complex(xp, g)
    return (xp.fft.ifft(z, n, axis=-1).real * n).astype(g.dtype, copy=False)


def _bin_weights(xp, n, bins, dtype):
    """How many bins of the full spectrum each one-sided bin stands for (1 or 2)."""
    c = xp.full((bins,), 2.0, dtype=dtype)
    c[0] = 1.0
    if n % 2 == 0:
        c[-1] = 1.0
    return c


def _c2r_fwd(z, n, onesided):
    xp = namespace(z)
    c = _as_complex(xp, z)
    y = xp.fft.irfft(c, n, axis=-1) if onesided else xp.fft.ifft(c, n, axis=-1).real
    return y.astype(z.dtype, copy=False)


def _c2r_adjoint_fwd(g, n, onesided):
    xp = namespace(g)
    if onesided:
        z = xp.fft.rfft(g, n, axis=-1) * (_bin_weights(xp, n, n // 2 + 1, g.dtype) / n)
    else:
        z = xp.fft.fft(g, n, axis=-1) / n
    return _stack_complex(xp, z, g.dtype)


_r2c = defop("fft_r2c", _r2c_fwd, lambda node, g, saved: (_r2c_adjoint(g, *node.params),),
             "FftR2CBackward0", 1, NOTHING)
_r2c_adjoint = defop("fft_r2c_backward", _r2c_adjoint_fwd,
                     lambda node, g, saved: (_r2c(g, *node.params),),
                     "FftR2CBackwardBackward0", 1, NOTHING)
_c2r = defop("fft_c2r", _c2r_fwd, lambda node, g, saved: (_c2r_adjoint(g, *node.params),),
             "FftC2RBackward0", 1, NOTHING)
_c2r_adjoint = defop("fft_c2r_backward", _c2r_adjoint_fwd,
                     lambda node, g, saved: (_c2r(g, *node.params),),
                     "FftC2RBackwardBackward0", 1, NOTHING)


def _overlap_add_fwd(f, hop, total, n):
    """Frames (B, T, n) added at multiples of ``hop``: (B, total).  One vectorised add per
    ``hop``-wide column block of the frames (n / hop of them), not one per frame."""
    xp = namespace(f)
    b, t, _ = f.shape
    blocks = -(-n // hop)
    out = xp.zeros((b, (blocks + t) * hop), dtype=f.dtype)
    for j in range(blocks):
        width = min(hop, n - j * hop)
        buf = xp.zeros((b, t, hop), dtype=f.dtype)
        buf[:, :, :width] = f[:, :, j * hop:j * hop + width]
        out[:, j * hop:j * hop + t * hop] += buf.reshape(b, t * hop)
    return out[:, :total]


def _frames_fwd(x, n, hop, total, _n):
    """The frames of ``x`` (B, L): (B, 1 + (L - n) // hop, n), copied (``total``: L, and
    ``n`` again: the parameters of the transpose, ``_overlap_add``)."""
    xp = namespace(x)
    return xp.ascontiguousarray(xp.lib.stride_tricks.sliding_window_view(
        x, n, axis=-1)[:, ::hop])


# framing and overlap-adding are each other's transposes: each one's derivative is the other
# (PyTorch's stft frames with as_strided; its istft overlap-adds with unfold_backward)
_frames_op = defop("stft_frames", _frames_fwd,
                   lambda node, g, saved: (_overlap_add(g, node.params[1], *node.params[2:]),),
                   "AsStridedBackward0", 1, NOTHING)
_overlap_add = defop("overlap_add", _overlap_add_fwd,
                     lambda node, g, saved: (_frames_op(g, node.params[2], node.params[0],
                                                        node.params[1], node.params[2]),),
                     "UnfoldBackwardBackward0", 1, NOTHING)


def _frame(x, n, hop):
    """``x`` (B, L) cut into frames of ``n`` every ``hop``: (B, T, n)."""
    return _frames_op(x, n, hop, x.shape[-1], n)


# ----------------------------------------------------------------- shared checks


def _describe(name, x, n_fft, hop, win, window, normalized, onesided, return_complex):
    w = "None" if window is None else f"torch.{_type(window)}{{{list(window.shape)}}}"
    return (f"{name}(torch.{_type(x)}{list(x.shape)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={w}, normalized={int(bool(normalized))}, "
            f"onesided={onesided}, return_complex={int(bool(return_complex))})")


def _type(t):
    names = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor"}
    return names.get(str(t._data.dtype), f"{str(t._data.dtype).capitalize()}Tensor")


def _window(window, win, n_fft, like, what):
    """The window (ones when None) padded with zeros on both sides to ``n_fft``."""
    if window is None:
        window = make_tensor(namespace(like._data).ones(win, dtype=like._data.dtype))
    elif window.ndim != 1 or window.shape[0] != win:
        raise RuntimeError(f"{what() if callable(what) else what} : expected a 1D window "
                           f"tensor of size equal to "
                           f"win_length={win}, but got window with size {list(window.shape)}")
    if win < n_fft:
        left = (n_fft - win) // 2
        window = _pad(window, (left, n_fft - win - left))
    return window


_NO_WINDOW = ("A window was not provided. A rectangular window will be applied,which is known "
              "to cause spectral leakage. Other windows such as torch.hann_window or "
              "torch.hamming_window are recommended to reduce spectral leakage.To suppress this "
              "warning and use a rectangular window, explicitly set `window=torch.ones(n_fft, "
              "device=<device>)`.")


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,  # noqa: A002
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """The short-time Fourier transform of a real signal ``input`` (L,) or (B, L), as
    ``torch.stft``: frames of ``n_fft`` samples every ``hop_length`` (default
    ``n_fft // 4``), each multiplied by ``window`` (``win_length`` samples, zero-padded to
    ``n_fft`` in the middle; default rectangular) and Fourier-transformed.  Returns
    ``(B?, N, T, 2)`` (real and imaginary parts; ``N = n_fft // 2 + 1`` when ``onesided``),
    which needs ``return_complex=False`` (retrograd has no complex dtype).

    Examples
    --------
    >>> import retrograd as T
    >>> T.stft(T.ones(16), 8, window=T.ones(8), return_complex=False).shape
    retrograd.Size([5, 9, 2])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"stft(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if return_complex is None:
        raise RuntimeError("stft requires the return_complex parameter be given for real "
                           "inputs, and will further require that return_complex=True in a "
                           "future PyTorch release.")
    if return_complex:
        raise NotImplementedError(
            "stft(return_complex=True): retrograd has no complex dtype; pass "
            "return_complex=False for PyTorch's real layout (..., 2) of real and imaginary "
            "parts, the layout torch.view_as_real gives")
    if input.ndim not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, got shape {list(input.shape)}")
    if input._data.dtype.kind != "f":
        raise RuntimeError(f"stft: expected a tensor of floating point or complex values, got "
                           f"{input.dtype}")
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if window is None:
        warnings.warn(_NO_WINDOW, UserWarning, stacklevel=2)
    warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, "
                  "stft will return complex tensors for all inputs, and return_complex=False "
                  "will raise an error.\nNote: you can still call torch.view_as_real on the "
                  "complex output to recover the old return format.", UserWarning, stacklevel=2)
    x = input
    if center:
        p = n_fft // 2
        shape = (1,) * (3 - x.ndim) + tuple(x.shape)
        x = reshape(_pad(reshape(x, *shape), (p, p), pad_mode), *x.shape[:-1], -1)
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    def what():  # (built only for an error message)
        return _describe("stft", x, n_fft, hop, win, window, normalized, onesided,
                         return_complex)

    length = x.shape[-1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"{what()} : expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"{what()} : expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"{what()} : expected 0 < win_length <= n_fft, but got "
                           f"win_length={win}")
    w = _window(window, win, n_fft, x, what)
    if not center and align_to_window and win < n_fft:
        left = (n_fft - win) // 2  # each window starts at its frame's hop, not n_fft's middle
        x = _pad(x, (left, n_fft - win - left))
    batched = x.ndim == 2
    if not batched:
        x = unsqueeze(x, 0)
    frames = _frame(x, n_fft, hop) * w  # (B, T, n_fft)
    out = _r2c(frames, n_fft, True if onesided is None else bool(onesided))
    if normalized:
        out = out * n_fft ** -0.5
    out = transpose(out, 1, 2)  # (B, N, T, 2)
    return out if batched else squeeze(out, 0)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,  # noqa: A002
          normalized=False, onesided=None, length=None, return_complex=False):
    """The inverse of :func:`stft`: overlap-adds the inverse transforms of the frames and
    divides by the window's squared overlap-add.  ``input`` is a spectrum in retrograd's
    real layout, ``(B?, N, T, 2)`` (what ``torch.view_as_real`` gives of PyTorch's complex
    input).  Returns the signal ``(B?, L)``; ``length`` trims or zero-pads it.

    Examples
    --------
    >>> import retrograd as T
    >>> x = T.arange(16.0)
    >>> spec = T.stft(x, 8, window=T.ones(8), return_complex=False)
    >>> T.istft(spec, 8, window=T.ones(8), length=16).allclose(x, atol=1e-5)
    True
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"istft(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if return_complex:
        raise NotImplementedError("istft(return_complex=True): retrograd has no complex dtype; "
                                  "the real signal (return_complex=False) is supported")
    if input.ndim not in (3, 4) or input.shape[-1] != 2 or input._data.dtype.kind != "f":
        raise RuntimeError(
            f"istft requires a complex-valued input tensor matching the output from stft with "
            f"return_complex=True; retrograd stores it as real and imaginary parts in a last "
            f"dimension of 2, (B?, n_freq, n_frame, 2), got {input.dtype} of shape "
            f"{list(input.shape)}")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    batched = input.ndim == 4
    z = input if batched else unsqueeze(input, 0)
    n_freq, n_frames = z.shape[1], z.shape[2]
    if onesided is None:
        onesided = n_freq != n_fft
    what = f"istft(n_fft={n_fft}, hop_length={hop}, win_length={win})"
    if onesided and n_fft // 2 + 1 != n_freq:
        raise RuntimeError(f"istft expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft / 2 + 1 when onesided=True, but got "
                           f"{n_freq}")
    if not onesided and n_freq != n_fft:
        raise RuntimeError(f"istft expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft when onesided=False, but got {n_freq}")
    if not 0 < hop <= win:
        raise RuntimeError(f"{what}: expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"{what}: expected 0 < win_length <= n_fft")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied.Please "
                      "provide the same window used by stft to make the inversion lossless.To "
                      "suppress this warning and use a rectangular window, explicitly set "
                      "`window=torch.ones(n_fft, device=<device>)`.", UserWarning, stacklevel=2)
    w = _window(window, win, n_fft, z, what)
    z = transpose(z, 1, 2)  # (B, T, N, 2)
    if not onesided:
        z = z[:, :, :n_fft // 2 + 1]  # PyTorch inverts the first half only (a real signal)
    frames = _c2r(z, n_fft, True)
    if normalized:
        frames = frames * n_fft ** 0.5
    frames = frames * w  # (B, T, n_fft)
    total = n_fft + hop * (n_frames - 1)

    def overlap_add(f):  # (B, T, n_fft) -> (B, total)
        return _overlap_add(f, hop, total, n_fft)

    y = overlap_add(frames)
    envelope = overlap_add(reshape(w * w, 1, 1, n_fft).expand(1, n_frames, n_fft))
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = total - n_fft // 2 if center else total
    y = y[:, start:end]
    envelope = envelope[:, start:end]
    if envelope.numel() and float(abs(envelope._data).min()) < 1e-11:
        raise RuntimeError(f"{what}: window overlap add min: {float(abs(envelope._data).min())}"
                           " (the squared window overlap-added must be non-zero everywhere: "
                           "the NOLA condition; use a smaller hop_length or another window)")
    y = y / envelope
    if not batched:
        y = squeeze(y, 0)
    if end > total:
        y = _pad(y, (0, end - total))
    return y


# ----------------------------------------------------------------- public names (registry.py)
from .registry import register  # noqa: E402

register(stft)
register(istft)
