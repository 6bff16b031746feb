"""``nn.factory_kwargs``: the validated device/dtype keywords a layer passes to the
tensor factories, as ``torch.nn.factory_kwargs``."""

from __future__ import annotations

__all__ = ["factory_kwargs"]


def factory_kwargs(kwargs):
    """A new dict of the ``device``, ``dtype`` and ``memory_format`` entries of ``kwargs``
    (plus those of its ``factory_kwargs`` entry); a TypeError for any other key, or for a
    key given both ways.

    Examples
    --------
    >>> import retrograd as T
    >>> T.nn.factory_kwargs({"dtype": T.float64, "factory_kwargs": {"device": "cpu"}})
    {'device': 'cpu', 'dtype': retrograd.float64}
    """
    if kwargs is None:
        return {}
    simple_keys = {"device", "dtype", "memory_format"}
    expected_keys = simple_keys | {"factory_kwargs"}
    if not kwargs.keys() <= expected_keys:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected_keys}")
    result = dict(kwargs.get("factory_kwargs", {}))
    for key in simple_keys:
        if key in kwargs:
            if key in result:
                raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
            result[key] = kwargs[key]
    return result
