"""Activation modules: thin wrappers that call ``nn.functional`` with their settings."""

from __future__ import annotations

from .. import functional as F
from ..module import Module

__all__ = ["ReLU", "ReLU6", "ELU", "GELU", "LeakyReLU", "Hardtanh", "Sigmoid", "Tanh", "SiLU",
           "Softplus", "LogSigmoid", "Softmax", "LogSoftmax"]


def _inplace_repr(inplace: bool) -> str:
    return "inplace=True" if inplace else ""


class ReLU(Module):
    """``max(x, 0)`` elementwise."""

    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class Hardtanh(Module):
    """``clamp(x, min_val, max_val)`` elementwise."""

    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value=None, max_value=None):
        super().__init__()
        if min_value is not None:
            import warnings

            warnings.warn("keyword argument `min_value` is deprecated and rename to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            import warnings

            warnings.warn("keyword argument `max_value` is deprecated and rename to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if not self.max_val > self.min_val:
            raise AssertionError(f"max_val ({max_val}) must be greater than min_val "
                                 f"({min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"min_val={self.min_val}, max_val={self.max_val}{inplace}"


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)`` elementwise."""

    def __init__(self, inplace: bool = False):
        super().__init__(0.0, 6.0, inplace)

    def forward(self, input):
        return F.relu6(input, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class ELU(Module):
    """``x`` for x > 0, ``alpha * (exp(x) - 1)`` otherwise."""

    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"alpha={self.alpha}{inplace}"


class GELU(Module):
    """Gaussian error linear unit; ``approximate='tanh'`` for the tanh approximation."""

    __constants__ = ["approximate"]

    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={repr(self.approximate)}"


class LeakyReLU(Module):
    """``x`` for x >= 0, ``negative_slope * x`` otherwise."""

    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        inplace = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{inplace}"


class Sigmoid(Module):
    """``1 / (1 + exp(-x))`` elementwise."""

    def forward(self, input):
        return F.sigmoid(input)


class Tanh(Module):
    """``tanh(x)`` elementwise."""

    def forward(self, input):
        return F.tanh(input)


class SiLU(Module):
    """``x * sigmoid(x)`` elementwise (swish)."""

    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold``."""

    __constants__ = ["beta", "threshold"]

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class LogSigmoid(Module):
    """``log(sigmoid(x))`` elementwise, computed stably."""

    def forward(self, input):
        return F.logsigmoid(input)


class Softmax(Module):
    """``exp(x) / exp(x).sum(dim)`` along ``dim``."""

    __constants__ = ["dim"]

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input):
        return F.softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """``log(softmax(x, dim))``, computed stably."""

    __constants__ = ["dim"]

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input):
        return F.log_softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
