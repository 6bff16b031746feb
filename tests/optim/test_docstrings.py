"""The Examples sections in the optim modules' docstrings are true."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["optimizer", "sgd", "adam", "adamax", "nadam", "radam", "rmsprop", "adagrad",
           "adadelta", "lbfgs", "rprop", "asgd", "lr_scheduler", "_schedules", "swa_utils",
           "adafactor"]


@pytest.mark.parametrize("module", MODULES)
def test_docstring_examples_run(module):
    mod = importlib.import_module(f"retrograd.optim.{module}")
    result = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
