"""``vmap``: run a function over a batch dimension with batching rules, not a loop."""

from __future__ import annotations

import functools

from .. import random as _random
from ..tensor import Tensor
from . import _pytree
from .batched import IN_RULE, STACK, BatchedTensor, pop_level, push_level
from .levels import rewrap

_RANDOMNESS = ("error", "different", "same")


def _refuse_random():
    if any(lv.randomness == "error" for lv in STACK):
        raise RuntimeError(
            "vmap: called random operation while in randomness error mode. Please either use "
            "the 'same' or 'different' randomness flags on vmap or perform the randomness "
            "operation out of vmap")
    if not IN_RULE[0] and any(lv.randomness == "different" for lv in STACK):
        # a random op with no batched input (rand, randn, rand_like...) would draw one logical
        # tensor, the same numbers for every sample, which 'different' promises not to: its
        # caller (random.sampled, or dispatch for a registered op) catches this and draws
        # once per sample (draw_per_sample).  Uncaught, it is an in-place fill of an
        # unbatched tensor (as PyTorch) or a random Tensor method of one.
        raise _random.DrawPerSampleError(
            "vmap: Cannot ask for different inplace randomness on an unbatched tensor. This "
            "will appear like same randomness. (retrograd.vmap(randomness='different') met a "
            "draw for a tensor with no batch dimension: an in-place random fill, or a random "
            "method of an unbatched tensor. Fill a batched tensor, call the random function "
            "(retrograd.bernoulli(x) rather than x.bernoulli()), or use randomness='same'.)")


def draw_per_sample(fn, args, kwargs):
    """``fn(*args, **kwargs)``, a random op with no batched input, run once per sample of
    every randomness='different' vmap running, stacked into a BatchedTensor of those levels
    (independent numbers for each sample, as PyTorch's randomness='different')."""
    from ..ops import registry

    if getattr(fn, "__name__", "").endswith("_"):  # an in-place fill of an unbatched tensor
        raise RuntimeError(
            "vmap: Cannot ask for different inplace randomness on an unbatched tensor. This "
            f"will appear like same randomness. ({fn.__name__} of a tensor with no batch "
            "dimension inside vmap(randomness='different'): fill a batched tensor, or use "
            "randomness='same'.)")
    levels = [lv for lv in STACK if lv.randomness == "different"]
    sizes = [lv.size for lv in levels]
    count = 1
    for n in sizes:
        count *= n
    IN_RULE[0] += 1  # the draws below are the per-sample ones
    try:
        samples = [fn(*args, **kwargs) for _ in range(count)]
    finally:
        IN_RULE[0] -= 1
    stack = registry.entry("stack").fn
    flat = [_pytree.flatten(s)[0] for s in samples]
    spec = _pytree.flatten(samples[0])[1]
    out = []
    for i, first in enumerate(flat[0]):
        if not isinstance(first, Tensor):
            out.append(first)
            continue
        p = stack([f[i] for f in flat], 0).reshape(*sizes, *first.shape)
        out.append(rewrap(p, [lv.level for lv in levels]))
    return _pytree.unflatten(out, spec)


def _tensorlike(x):
    return isinstance(x, (Tensor, BatchedTensor))


def _stack(values, level):
    """Physical values (one per sample) stacked into a BatchedTensor of ``level``."""
    from ..ops import registry

    return BatchedTensor(registry.entry("stack").fn(list(values), 0), level)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over dimension ``in_dims`` of its inputs, as ``torch.vmap``.

    Inputs mapped over become BatchedTensors (the batch kept in front of a physical tensor)
    and every op runs once for the whole batch through its batching rule.

    >>> import retrograd as T
    >>> T.vmap(lambda x, y: (x * y).sum())(T.ones(3, 2), T.ones(3, 2))
    tensor([2., 2., 2.])
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")
    name = getattr(func, "__name__", repr(func))

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        fname = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
        if not isinstance(in_dims, (int, tuple)) and in_dims is not None:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...): expected `in_dims` to be "
                             f"int or a (potentially nested) tuple matching the structure of "
                             f"inputs, got: {type(in_dims)}.")
        if isinstance(in_dims, tuple):
            dims = _pytree.broadcast_prefix(in_dims, args, "in_dims", fname)
        else:
            dims = [in_dims] * len(_pytree.flatten(args)[0])
        leaves, spec = _pytree.flatten(args)
        sizes = []
        moved = []
        for x, d in zip(leaves, dims):
            if d is None:
                moved.append(x)
                continue
            if not _tensorlike(x):
                raise ValueError(
                    f"{fname}: Got in_dim={d} for an input but the input is of type "
                    f"{type(x)}. We cannot vmap over non-Tensor arguments, please use None as "
                    "the respective in_dim")
            if not isinstance(d, int):
                raise ValueError(f"{fname}: in_dim {d!r} is not an int or None")
            n = x.dim()
            if not -n <= d < n:
                raise ValueError(
                    f"{fname}: Got in_dim={d} for some input, but that input is a Tensor of "
                    f"dimensionality {n} so expected in_dim to satisfy -{n} <= in_dim < {n}.")
            sizes.append(x.shape[d])
            moved.append(x.movedim(d, 0) if d % n else x)
        if not sizes:
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): at least one input must be a "
                "Tensor mapped over (in_dims not None), got none. (Pass in_dims for a tensor "
                "input.)")
        if len(set(sizes)) != 1:
            raise ValueError(
                f"vmap: Expected all tensors to have the same size in the mapped dimension, got "
                f"sizes {sizes} for the mapped dimension")
        size = sizes[0]
        if chunk_size is None or chunk_size >= size:
            return _run(func, moved, dims, spec, kwargs, size, randomness, name, out_dims)
        parts = []
        for start in range(0, size, chunk_size):
            stop = min(start + chunk_size, size)
            chunk = [x.narrow(0, start, stop - start) if d is not None else x
                     for x, d in zip(moved, dims)]
            parts.append(_run(func, chunk, dims, spec, kwargs, stop - start, randomness, name,
                              out_dims))
        return _concat(parts, out_dims, name)

    return wrapped


def _run(func, moved, dims, spec, kwargs, size, randomness, name, out_dims):
    lv = push_level(size, randomness, name)
    hook, per_sample = _random.on_draw, _random.per_sample
    _random.on_draw, _random.per_sample = _refuse_random, draw_per_sample
    try:
        batched = [BatchedTensor(x, lv.level) if d is not None else x
                   for x, d in zip(moved, dims)]
        out = func(*_pytree.unflatten(batched, spec), **kwargs)
    finally:
        pop_level(lv)
        _random.on_draw, _random.per_sample = hook, per_sample
    return _unbatch(out, lv, out_dims, name)


def _unbatch(out, lv, out_dims, name):
    leaves, spec = _pytree.flatten(out)
    if out_dims is not None and not isinstance(out_dims, int):
        ods = _pytree.broadcast_prefix(out_dims, out, "out_dims", f"vmap({name}, ...)")
    else:
        ods = [out_dims] * len(leaves)
    res = []
    for o, od in zip(leaves, ods):
        if type(o) is BatchedTensor and o.level == lv.level:
            if od is None:
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                                 "when out_dim is None")
            v = o.value
            res.append(v.movedim(0, od) if od % v.dim() else v)
        elif _tensorlike(o):
            if od is None:
                res.append(o)
                continue
            n = o.dim() + 1
            d = od + n if od < 0 else od
            e = o.unsqueeze(d)
            res.append(e.expand(*e.shape[:d], lv.size, *e.shape[d + 1:]))
        else:
            if od is not None:
                raise ValueError(
                    f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                    f"{type(o)}. Did you mean to set out_dims= to None for output?")
            res.append(o)
    return _pytree.unflatten(res, spec)


def _concat(parts, out_dims, name):
    from ..ops import registry

    cat = registry.entry("cat").fn
    leaves0, spec = _pytree.flatten(parts[0])
    if out_dims is not None and not isinstance(out_dims, int):
        ods = _pytree.broadcast_prefix(out_dims, parts[0], "out_dims", f"vmap({name}, ...)")
    else:
        ods = [out_dims] * len(leaves0)
    flat = [_pytree.flatten(p)[0] for p in parts]
    res = []
    for i, od in enumerate(ods):
        if od is None:
            res.append(flat[0][i])
        else:
            res.append(cat([f[i] for f in flat], od))
    return _pytree.unflatten(res, spec)
