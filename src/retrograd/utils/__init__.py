"""Utilities, as ``torch.utils``: ``data`` (datasets, samplers, DataLoader), ``checkpoint``."""

from . import data
from . import checkpoint  # noqa: F401
from . import dlpack  # noqa: F401, E402
