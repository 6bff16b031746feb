"""DistributedSampler against torch.utils.data.DistributedSampler.

Without shuffling the keys are PyTorch's exactly; with shuffling the permutation comes from
NumPy's generator (not PyTorch's), so its structure is checked instead: every rank draws the
same padded permutation, the ranks' shares interleave into it, ``set_epoch`` and ``seed``
change it."""

import itertools

import pytest
import torch.utils.data as tud

from retrograd.utils.data import DistributedSampler

SIZES = [1, 2, 5, 7, 8, 10]
REPLICAS = [1, 2, 3, 4]


@pytest.mark.parametrize("n,replicas", list(itertools.product(SIZES, REPLICAS)))
@pytest.mark.parametrize("drop_last", [False, True])
def test_unshuffled_keys_are_torchs(n, replicas, drop_last):
    data = list(range(n))
    for rank in range(replicas):
        ours = DistributedSampler(data, replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = tud.DistributedSampler(data, replicas, rank, shuffle=False,
                                        drop_last=drop_last)
        assert list(ours) == list(theirs)
        assert len(ours) == len(theirs)
        assert (ours.num_samples, ours.total_size) == (theirs.num_samples, theirs.total_size)


@pytest.mark.parametrize("n,replicas", [(10, 3), (7, 2), (2, 4), (8, 4)])
@pytest.mark.parametrize("drop_last", [False, True])
def test_shuffled_shares_partition_one_padded_permutation(n, replicas, drop_last):
    data = list(range(n))
    torch_lengths = [len(tud.DistributedSampler(data, replicas, r, drop_last=drop_last))
                     for r in range(replicas)]
    shares = [list(DistributedSampler(data, replicas, r, seed=3, drop_last=drop_last))
              for r in range(replicas)]
    assert [len(s) for s in shares] == torch_lengths
    merged = [shares[i % replicas][i // replicas] for i in range(sum(map(len, shares)))]
    if drop_last:
        assert len(set(merged)) == len(merged)           # no key twice
    else:
        assert set(merged) == set(data)                  # every key, the padding repeats
        perm = merged[:n]
        assert sorted(perm) == data
        assert merged[n:] == (perm * len(merged))[:len(merged) - n]


def test_shuffle_depends_on_seed_and_epoch_only():
    data = range(50)
    a, b = DistributedSampler(data, 2, 0, seed=1), DistributedSampler(data, 2, 0, seed=1)
    assert list(a) == list(b) and list(a) == list(a)   # the same every time, every instance
    first = list(a)
    a.set_epoch(1)
    assert list(a) != first
    assert list(DistributedSampler(data, 2, 0, seed=2)) != first


def test_bad_rank_is_torchs_error():
    for rank in (-1, 2):
        with pytest.raises(ValueError, match="Invalid rank"):
            DistributedSampler(range(4), num_replicas=2, rank=rank)
    with pytest.raises(ValueError, match="init_process_group"):
        DistributedSampler(range(4))   # no group to ask for the world size


def test_docstring_example_runs():
    import doctest

    import retrograd.utils.data.distributed as module

    assert doctest.testmod(module).failed == 0


def test_package_docstring_example_runs():
    import doctest

    import retrograd.distributed as module

    assert doctest.testmod(module).failed == 0
