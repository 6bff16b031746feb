"""Utilities, as ``torch.utils``: ``data`` (datasets, samplers, DataLoader), ``checkpoint``."""

from . import data
from . import checkpoint  # noqa: F401
