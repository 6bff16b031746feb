"""``retrograd.backends``: the switches PyTorch scripts read or set on ``torch.backends``,
answering truthfully for retrograd (NumPy on the CPU, CuPy on an NVIDIA GPU).

So the usual lines run unchanged::

    torch.backends.cudnn.benchmark = True
    device = "mps" if torch.backends.mps.is_available() else "cpu"

retrograd computes the same way whatever these flags say (no cuDNN, no TF32, no autotuning,
and its CPU results are deterministic): the settable flags are kept so scripts can read
back what they set, and are documented as having no effect.
"""

from . import cpu, cuda, cudnn, mkldnn, mps  # noqa: F401

__all__ = ["cpu", "cuda", "cudnn", "mkldnn", "mps"]
