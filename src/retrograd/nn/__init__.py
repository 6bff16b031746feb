"""retrograd.nn: neural-network building blocks on the public API."""

from . import functional  # noqa: F401
