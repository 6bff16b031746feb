"""DataLoader with worker processes: order, worker info and seeds, iterable datasets,
persistent workers, timeouts and errors raised in a worker.  Few loaders, tiny datasets."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

import retrograd as T
from retrograd.utils import data as D

_INIT_RAN = {}


def _init(worker_id):
    _INIT_RAN[worker_id] = True


class _Probe(D.Dataset):
    """Each sample says which process made it and what that process knew."""

    def __init__(self, n=8, slow=()):
        self.n, self.slow = n, set(slow)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i in self.slow:
            time.sleep(0.2)  # a slow sample must not change the order of the batches
        info = D.get_worker_info()
        return {"i": i, "pid": os.getpid(), "worker": info.id, "workers": info.num_workers,
                "seed": info.seed, "init": _INIT_RAN.get(info.id, False),
                "rand": float(np.random.rand()), "rg": float(T.rand(()))}


def test_workers_keep_the_samplers_order_and_know_themselves():
    gen = T.Generator().manual_seed(3)
    loader = D.DataLoader(_Probe(slow=[0]), batch_size=2, shuffle=True, generator=gen,
                          num_workers=2, worker_init_fn=_init, prefetch_factor=1)
    batches = list(loader)
    assert len(batches) == len(loader) == 4
    order = [b["i"].tolist() for b in batches]
    assert sorted(sum(order, [])) == list(range(8))
    # batch k goes to worker k % 2 (round-robin) and comes back in place
    assert [b["worker"].tolist() for b in batches] == [[0, 0], [1, 1], [0, 0], [1, 1]]
    assert all(b["workers"].tolist() == [2, 2] and all(b["init"].tolist()) for b in batches)
    seeds = {tuple(b["seed"].tolist()) for b in batches}
    assert len(seeds) == 2 and all(s[0] == s[1] for s in seeds)
    assert abs(batches[0]["seed"][0].item() - batches[1]["seed"][0].item()) == 1
    # each worker's random streams differ (seeded from seed = base + id)
    assert batches[0]["rand"][0].item() != batches[1]["rand"][0].item()
    assert batches[0]["rg"][0].item() != batches[1]["rg"][0].item()
    assert {b["pid"][0].item() for b in batches}.isdisjoint({os.getpid()})


def test_worker_order_matches_single_process_order():
    data = D.TensorDataset(T.arange(20.).reshape(10, 2), T.arange(10))
    single = list(D.DataLoader(data, batch_size=3, shuffle=True,
                               generator=T.Generator().manual_seed(9)))
    multi = list(D.DataLoader(data, batch_size=3, shuffle=True, num_workers=2,
                              generator=T.Generator().manual_seed(9)))
    # the sampler draws its order before the workers' base seed: same generator, same order
    assert [y.tolist() for _, y in multi] == [y.tolist() for _, y in single]


class _Shards(D.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = D.get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(start, self.n, step))


def test_iterable_dataset_in_workers_matches_torch():
    torch = pytest.importorskip("torch")

    class TorchShards(_Shards, torch.utils.data.IterableDataset):
        def __iter__(self):
            info = torch.utils.data.get_worker_info()
            return iter(range(info.id, self.n, info.num_workers))

    ours = [b.tolist() for b in D.DataLoader(_Shards(11), batch_size=2, num_workers=2)]
    theirs = [b.tolist() for b in torch.utils.data.DataLoader(TorchShards(11), batch_size=2,
                                                              num_workers=2)]
    assert ours == theirs


def test_persistent_workers_survive_epochs_and_an_early_break():
    loader = D.DataLoader(_Probe(6), batch_size=2, num_workers=2, persistent_workers=True)
    first = iter(loader)
    pids = {next(first)["pid"][0].item()}  # leave the epoch early
    for _ in range(2):
        batches = list(loader)
        assert [b["i"].tolist() for b in batches] == [[0, 1], [2, 3], [4, 5]]
        pids |= {b["pid"][0].item() for b in batches}
    assert len(pids) == 2  # the same two processes throughout
    workers = loader._iterator._workers
    del first, loader
    # dropping the loader stops its workers at once (not at the garbage collector's leisure)
    assert [w.exitcode for w in workers] == [0, 0]
    streams = D.DataLoader(_Shards(5), batch_size=2, num_workers=2, persistent_workers=True)
    assert [b.tolist() for b in streams] == [b.tolist() for b in streams] == [
        [0, 2], [1, 3], [4]]


class _Faulty(D.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            raise ValueError("sample 2 is corrupt")
        if i == 3:
            return T.zeros(5)
        return T.zeros(3)


def test_worker_errors_reach_the_main_process():
    with pytest.raises(ValueError, match=r"(?s)worker process 1.*sample 2 is corrupt"):
        list(D.DataLoader(_Faulty(), batch_size=1, sampler=[0, 2], num_workers=2))
    # the loader goes on after an error, as PyTorch's: skip the bad batch, keep the rest
    batches = iter(D.DataLoader(_Faulty(), batch_size=1, sampler=[0, 2, 1], num_workers=2,
                                persistent_workers=True))
    kept = []
    while True:
        try:
            kept.append(next(batches).shape)
        except ValueError:
            continue
        except StopIteration:
            break
    assert kept == [(1, 3), (1, 3)]
    with pytest.raises(RuntimeError, match=r"(?s)entry 1.*dataset indices \[1, 3\]"):
        list(D.DataLoader(_Faulty(), batch_size=2, sampler=[1, 3], num_workers=1))


class _Sleepy(D.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        time.sleep(1)
        return i


class _Dies(D.Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        os._exit(1)


def test_timeout_and_dead_worker_raise():
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="timed out after 0.2 seconds"):
        list(D.DataLoader(_Sleepy(), num_workers=1, timeout=0.2))
    with pytest.raises(RuntimeError, match="exited unexpectedly"):
        list(D.DataLoader(_Dies(), num_workers=1))
    assert time.monotonic() - start < 10  # the sleeping worker was stopped, not waited for


def test_spawned_workers_work():
    # macOS and Windows start workers by spawning: dataset and collate_fn travel pickled
    loader = D.DataLoader(_Shards(5), batch_size=2, num_workers=1,
                          multiprocessing_context="spawn")
    assert [b.tolist() for b in loader] == [[0, 1], [2, 3], [4]]
