import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))


@pytest.fixture
def torch():
    """PyTorch 2.13 (CPU), the oracle for differential tests; installed by `make test`."""
    return pytest.importorskip("torch")
