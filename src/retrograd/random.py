"""The random number generators behind rand/randn/randint and the in-place fills.

Values differ from PyTorch's (NumPy's PCG64 generator, not PyTorch's Mersenne Twister), but a
seed fixes them, as in PyTorch: ``manual_seed(0)`` then ``randn(3)`` repeats exactly.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
           "set_rng_state", "default_generator"]


class Generator:
    """A random number generator, as ``torch.Generator``: pass it as ``generator=`` to
    ``rand``/``randn``/``randint``/``normal_``... to draw from a stream of its own.

    Examples
    --------
    >>> import retrograd as T
    >>> g = T.Generator().manual_seed(42)
    >>> a = T.rand(2, generator=g)
    >>> g.manual_seed(42)  # doctest: +ELLIPSIS
    <retrograd.Generator ...>
    >>> bool((T.rand(2, generator=g) == a).all())
    True
    """

    __slots__ = ("_rng", "_seed")

    def __init__(self, device: str = "cpu"):
        self._seed = int(np.random.SeedSequence().entropy % (2 ** 63))
        self._rng = np.random.default_rng(self._seed)

    def manual_seed(self, seed: int) -> "Generator":
        """Restart the stream from ``seed``; returns the generator itself."""
        seed = int(seed)
        # PyTorch accepts negative seeds (it reinterprets them as unsigned 64-bit)
        self._seed = seed % (2 ** 64)
        self._rng = np.random.default_rng(self._seed)
        return self

    def seed(self) -> int:
        """Reseed from fresh entropy; returns the new seed."""
        self.manual_seed(int(np.random.SeedSequence().entropy % (2 ** 63)))
        return self._seed

    def initial_seed(self) -> int:
        """The seed the current stream started from."""
        return self._seed

    def get_state(self) -> dict:
        """The generator's state (NumPy's bit-generator state dict), for :meth:`set_state`."""
        return {"seed": self._seed, "state": self._rng.bit_generator.state}

    def set_state(self, state: dict) -> "Generator":
        """Restore a state from :meth:`get_state`."""
        self._seed = state["seed"]
        self._rng.bit_generator.state = state["state"]
        return self

    @property
    def device(self):
        from .backend import device

        return device("cpu")

    def __repr__(self) -> str:
        return f"<retrograd.Generator object at {id(self):#x}>"


#: The generator used when no ``generator=`` is passed.
default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the default generator so that rand/randn/randint repeat exactly.

    Examples
    --------
    >>> import retrograd as T
    >>> _ = T.manual_seed(0); a = T.randn(3)
    >>> _ = T.manual_seed(0); bool((T.randn(3) == a).all())
    True
    """
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed the default generator from fresh entropy; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator started from."""
    return default_generator.initial_seed()


def get_rng_state() -> dict:
    """The default generator's state (restore it with :func:`set_rng_state`)."""
    return default_generator.get_state()


def set_rng_state(state: dict) -> None:
    """Restore the default generator's state from :func:`get_rng_state`."""
    default_generator.set_state(state)


#: called before each draw while set: retrograd.func.vmap sets it under randomness='error'
#: so that a random op inside vmap raises (this module imports nothing above it), and under
#: randomness='different' so that a draw with no batched input raises DrawPerSampleError
on_draw = None
#: ``per_sample(fn, args, kwargs)``: set by retrograd.func.vmap; runs a random op once per
#: sample of the randomness='different' vmaps and gives the batched result
per_sample = None


class DrawPerSampleError(RuntimeError):
    """Raised (by vmap's ``on_draw``) before a draw that would give every sample of a
    vmap(randomness='different') the same numbers: the random op's caller (:func:`sampled`,
    or vmap's dispatch for registered ops) catches it and draws once per sample."""


def sampled(fn):
    """Mark a random factory (rand, randn, randint) so that, inside vmap with
    randomness='different', each sample draws its own numbers (a batched result)."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if on_draw is None:
            return fn(*args, **kwargs)
        try:
            return fn(*args, **kwargs)
        except DrawPerSampleError:
            return per_sample(fn, args, kwargs)

    return wrapper


def numpy_generator(generator=None) -> np.random.Generator:
    """The NumPy generator to draw from: ``generator``'s, or the default one's."""
    if on_draw is not None:
        on_draw()
    if generator is None:
        return default_generator._rng
    if isinstance(generator, Generator):
        return generator._rng
    if isinstance(generator, np.random.Generator):
        return generator
    raise TypeError(
        f"generator must be a retrograd.Generator, not {type(generator).__name__}; make one "
        "with retrograd.Generator().manual_seed(seed)"
    )


def generator() -> np.random.Generator:
    """The default generator's NumPy generator (kept for code that draws arrays directly)."""
    if on_draw is not None:
        on_draw()
    return default_generator._rng
