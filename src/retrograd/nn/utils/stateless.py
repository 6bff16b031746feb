"""``nn.utils.stateless``: PyTorch's deprecated home of ``functional_call`` (now
``func.functional_call``, which this forwards to after PyTorch's FutureWarning)."""

from __future__ import annotations

import warnings

__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """``module(*args, **kwargs)`` with the named parameters and buffers replaced for this
    call; deprecated, use ``retrograd.func.functional_call`` (a drop-in replacement).

    Examples
    --------
    >>> import warnings
    >>> import retrograd as T
    >>> lin = T.nn.Linear(2, 1)
    >>> p = {"weight": T.ones(1, 2), "bias": T.zeros(1)}
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     T.nn.utils.stateless.functional_call(lin, p, T.tensor([1.0, 2.0]))
    tensor([3.])
    """
    warnings.warn(
        "`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will "
        "be removed in a future version of PyTorch. Please use `torch.func.functional_call` "
        "instead which is a drop-in replacement.", FutureWarning, stacklevel=2)
    # imported here: func sits in nn's layer and imports nn itself
    from ...func.functional_call import functional_call as func_functional_call

    return func_functional_call(module, parameters_and_buffers, args, kwargs,
                                tie_weights=tie_weights, strict=strict)
