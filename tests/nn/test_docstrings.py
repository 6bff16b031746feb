"""The Examples sections in the nn modules' docstrings are true."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize("module", [
    "module", "parameter", "init", "modules.container", "modules.linear", "modules.loss",
    "modules.activation", "utils.clip_grad", "utils._orthogonal", "utils.fusion", "utils.init",
    "utils.stateless", "_gumbel", "grad", "attention", "_conv_tbc", "_factory",
])
def test_docstring_examples_run(module):
    mod = importlib.import_module(f"retrograd.nn.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
