"""vmap's randomness modes against torch.vmap: which samples share random numbers, for
random ops with and without a batched input, in-place fills, nested vmaps, and errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import retrograd as R

B, N = 3, 64


def _ops(m):
    u = m.ones(N)  # unbatched
    F = m.nn.functional  # noqa: N806
    return {
        "rand": lambda a: m.rand(N) + a,
        "randn": lambda a: m.randn(N) + a,
        "randint": lambda a: m.randint(0, 1000, (N,)) + a,
        "randn_like of unbatched": lambda a: m.randn_like(u) + a,
        "rand_like of batched": lambda a: m.rand_like(a),
        "randperm": lambda a: m.randperm(N) + a,
        "normal(mean, std, size)": lambda a: m.normal(0.0, 1.0, (N,)) + a,
        "bernoulli of unbatched": lambda a: m.bernoulli(u * 0.5) + a,
        "dropout of unbatched": lambda a: F.dropout(u, 0.5) + a,
        "dropout of batched": lambda a: F.dropout(a, 0.5),
        "normal_ of batched": lambda a: a.clone().normal_(),
        "uniform_ of batched": lambda a: a.clone().uniform_(),
        "bernoulli_ of batched": lambda a: a.clone().bernoulli_(0.5),
    }


def _pattern(out):
    """Which samples equal sample 0 (the randomness structure, not the numbers)."""
    a = out.detach().numpy()
    return [bool(np.array_equal(a[0], a[i])) for i in range(len(a))]


def _torch_vmap(torch, fn, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's "performance drop" notes
        return torch.vmap(fn, **kw)


@pytest.mark.parametrize("randomness", ["different", "same"])
@pytest.mark.parametrize("name", list(_ops(R)))
def test_random_ops_share_numbers_as_torch_does(name, randomness, torch):
    th = _torch_vmap(torch, _ops(torch)[name], randomness=randomness)(torch.ones(B, N))
    rg = R.vmap(_ops(R)[name], randomness=randomness)(R.ones(B, N))
    assert tuple(rg.shape) == tuple(th.shape)
    assert str(rg.dtype).split(".")[-1] == str(th.dtype).split(".")[-1]
    assert _pattern(rg) == _pattern(th), f"{name}: {_pattern(rg)} vs torch {_pattern(th)}"
    if randomness == "different" and "bernoulli" not in name and "dropout" not in name:
        # independent draws: no two samples share a number (continuous or wide ranges)
        a = rg.numpy()
        assert all(not np.array_equal(a[i], a[j]) for i in range(B) for j in range(i))


def test_different_draws_are_seeded_and_chunked_alike():
    def f(a):
        return R.randn(N) + a

    R.manual_seed(3)
    one = R.vmap(f, randomness="different")(R.zeros(4, N))
    R.manual_seed(3)
    again = R.vmap(f, randomness="different")(R.zeros(4, N))
    np.testing.assert_array_equal(one.numpy(), again.numpy())
    R.manual_seed(3)
    chunks = R.vmap(f, randomness="different", chunk_size=2)(R.zeros(4, N))
    np.testing.assert_array_equal(one.numpy(), chunks.numpy())  # the same stream of draws
    z = one.numpy()  # standard normal draws: mean near 0, sd near 1 over 4*64 numbers
    assert abs(z.mean()) < 0.3 and 0.8 < z.std() < 1.2


@pytest.mark.parametrize("outer, inner", [("different", "different"), ("different", "same"),
                                          ("same", "different"), ("same", "same")])
def test_nested_levels(outer, inner, torch):
    def run(m, vmap):
        f = vmap(lambda a: m.rand(5) + a, randomness=inner)
        return vmap(f, randomness=outer)(m.zeros(2, 3, 5))

    rg = run(R, R.vmap).numpy()
    th = run(torch, lambda fn, **kw: _torch_vmap(torch, fn, **kw)).numpy()
    assert rg.shape == th.shape

    def eq(a):  # equalities between all (i, j) samples
        flat = a.reshape(6, 5)
        return [[bool(np.array_equal(flat[p], flat[q])) for q in range(6)] for p in range(6)]

    assert eq(rg) == eq(th)


def test_errors_as_torch(torch):
    u, tu = R.ones(N), torch.ones(N)
    # an in-place fill of an unbatched tensor under 'different': PyTorch's RuntimeError
    with pytest.raises(RuntimeError, match="different inplace randomness on an unbatched"):
        _torch_vmap(torch, lambda a: tu.clone().normal_() + a,
                    randomness="different")(torch.ones(B, N))
    with pytest.raises(RuntimeError, match="different inplace randomness on an unbatched"):
        R.vmap(lambda a: u.clone().normal_() + a, randomness="different")(R.ones(B, N))
    # 'error' (the default) refuses every random op
    for lib, vmap, x in ((torch, lambda fn: _torch_vmap(torch, fn), torch.ones(B, N)),
                         (R, R.vmap, R.ones(B, N))):
        for fn in (lambda a, lib=lib: lib.rand(N) + a, lambda a, lib=lib: lib.rand_like(a),
                   lambda a: a.clone().normal_()):
            with pytest.raises(RuntimeError, match="randomness"):
                vmap(fn)(x)
