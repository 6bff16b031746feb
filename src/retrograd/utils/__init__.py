"""Utilities, as ``torch.utils``: ``data`` (datasets, samplers, DataLoader)."""

from . import data
