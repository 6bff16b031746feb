"""The random number generator behind rand/randn/randint (reproducible with manual_seed).

Values differ from PyTorch's (a different generator), but a seed fixes them, as in PyTorch.
"""

from __future__ import annotations

import numpy as np

_generator = np.random.default_rng()


def manual_seed(seed: int):
    """Seed the generator so that rand/randn/randint repeat exactly."""
    global _generator
    _generator = np.random.default_rng(int(seed))
    return _generator


seed = manual_seed


def generator() -> np.random.Generator:
    return _generator


def get_rng_state():
    return _generator.bit_generator.state


def set_rng_state(state) -> None:
    _generator.bit_generator.state = state
