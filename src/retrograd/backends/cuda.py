"""``backends.cuda``: whether GPU support is there (CuPy importable) and the matmul and
scaled-dot-product-attention switches, kept with PyTorch's defaults; retrograd computes
float32 matmuls in float32 and attention one way, whatever they say."""

from __future__ import annotations

__all__ = ["is_built", "matmul", "flash_sdp_enabled", "enable_flash_sdp",
           "mem_efficient_sdp_enabled", "enable_mem_efficient_sdp", "math_sdp_enabled",
           "enable_math_sdp", "cudnn_sdp_enabled", "enable_cudnn_sdp"]


def is_built() -> bool:
    """Whether retrograd can reach a GPU at all: CuPy is installed (``retrograd[gpu]``);
    ``retrograd.cuda.is_available()`` says whether a GPU is actually there."""
    from ..cuda._runtime import cupy_or_none

    return cupy_or_none() is not None


class _MatmulFlags:
    """``backends.cuda.matmul``: the reduced-precision switches (no effect here)."""

    def __init__(self) -> None:
        self.allow_tf32 = False
        self.allow_fp16_reduced_precision_reduction = True
        self.allow_bf16_reduced_precision_reduction = True


matmul = _MatmulFlags()

_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def flash_sdp_enabled() -> bool:
    return _sdp["flash"]


def enable_flash_sdp(enabled: bool) -> None:
    _sdp["flash"] = bool(enabled)


def mem_efficient_sdp_enabled() -> bool:
    return _sdp["mem_efficient"]


def enable_mem_efficient_sdp(enabled: bool) -> None:
    _sdp["mem_efficient"] = bool(enabled)


def math_sdp_enabled() -> bool:
    return _sdp["math"]


def enable_math_sdp(enabled: bool) -> None:
    _sdp["math"] = bool(enabled)


def cudnn_sdp_enabled() -> bool:
    return _sdp["cudnn"]


def enable_cudnn_sdp(enabled: bool) -> None:
    _sdp["cudnn"] = bool(enabled)
