"""The Examples sections in the op modules' docstrings are true."""

from __future__ import annotations

import pytest

@pytest.mark.parametrize("module", ["pointwise", "reduce", "shape", "index", "linalg", "nn",
                                    "inplace", "unary", "activation", "stats", "layout",
                                    "registry", "elementary", "selection",
                                    "pointwise_compare", "pointwise_common", "changed_views",
                                    "index_assign", "nll", "elementwise_losses",
                                    "multi_margin", "linear", "einsum"])
def test_docstring_examples_run(module):
    """The Examples sections in the op modules' docstrings are true."""
    import doctest
    import importlib

    mod = importlib.import_module(f"retrograd.ops.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
