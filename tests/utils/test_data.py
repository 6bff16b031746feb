"""retrograd.utils.data against torch.utils.data: collation, batches, samplers, splits and
errors (all in the main process; worker processes are tested in test_dataloader_workers)."""

from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest

import retrograd as T
from retrograd.utils import data as D

torch = pytest.importorskip("torch")
TD = torch.utils.data

Point = collections.namedtuple("Point", "x y")


# ---------------------------------------------------------------- comparing structures
def assert_same(ours, theirs, where="batch"):
    """Same structure, container types, dtypes and values as PyTorch's result."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, T.Tensor), f"{where}: {type(ours)} where torch has a Tensor"
        assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1], where
        assert tuple(ours.shape) == tuple(theirs.shape), where
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=where)
        return
    assert type(ours) is type(theirs), f"{where}: {type(ours)} vs torch's {type(theirs)}"
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs), where
        for k in theirs:
            assert_same(ours[k], theirs[k], f"{where}[{k!r}]")
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs), where
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_same(a, b, f"{where}[{i}]")
    elif isinstance(theirs, np.ndarray):
        np.testing.assert_array_equal(ours, theirs)
    else:
        assert ours == theirs, where


def _samples(lib):
    """Lists of samples (each a batch to collate), built with ``lib``'s tensors."""
    return {
        "ints": [1, 2, 3],
        "floats": [1.0, 2.5],
        "int_then_float": [1, 2.5],
        "float_then_int": [1.5, 2],
        "bools": [True, False],
        "strings": ["a", "bc"],
        "bytes": [b"a", b"b"],
        "np_float32_scalars": [np.float32(1), np.float32(2)],
        "np_int16_scalars": [np.int16(1), np.int16(-2)],
        "np_bool_scalars": [np.bool_(True), np.bool_(False)],
        "np_arrays": [np.arange(6.0).reshape(2, 3), np.ones((2, 3))],
        "np_int32_arrays": [np.arange(3, dtype=np.int32), np.zeros(3, dtype=np.int32)],
        "np_uint8_arrays": [np.arange(3, dtype=np.uint8), np.ones(3, dtype=np.uint8)],
        "np_0d_arrays": [np.array(1.5), np.array(2.0)],
        "tensors_f32": [lib.ones(2, 3), lib.zeros(2, 3)],
        "tensors_0d": [lib.tensor(1.5), lib.tensor(2.5)],
        "tensors_i64": [lib.arange(3), lib.arange(3) * 2],
        "tensors_bool": [lib.tensor([True, False]), lib.tensor([False, False])],
        "tensors_f16": [lib.ones(2, dtype=lib.float16), lib.zeros(2, dtype=lib.float16)],
        "tuples": [(1, 2.0, "a"), (3, 4.0, "b")],
        "lists": [[1, 2], [3, 4]],
        "dicts": [{"x": 1, "y": "s", "z": lib.ones(2)}, {"x": 2, "y": "t", "z": lib.zeros(2)}],
        "ordered_dicts": [collections.OrderedDict(b=1, a=2.0),
                          collections.OrderedDict(b=3, a=4.0)],
        "namedtuples": [Point(1, 2.0), Point(3, 4.0)],
        "nested": [{"img": (lib.ones(1), np.zeros(2)), "meta": [Point(1, "p"), 0.5]},
                   {"img": (lib.zeros(1), np.ones(2)), "meta": [Point(2, "q"), 1.5]}],
        "single": [(lib.arange(4).reshape(2, 2), 7)],
    }


@pytest.mark.parametrize("name", list(_samples(T)))
def test_default_collate_matches_torch(name):
    ours = D.default_collate(_samples(T)[name])
    theirs = TD.default_collate(_samples(torch)[name])
    assert_same(ours, theirs, name)


@pytest.mark.parametrize("name", list(_samples(T)))
def test_default_convert_matches_torch(name):
    for i, (a, b) in enumerate(zip(_samples(T)[name], _samples(torch)[name])):
        assert_same(D.default_convert(a), TD.default_convert(b), f"{name}[{i}]")


def _bad_batches(lib):
    return {
        "none": [None, None],
        "object": [object(), object()],
        "string_arrays": [np.array(["a"]), np.array(["b"])],
        "unequal_lists": [[1, 2], [3]],
        "unequal_tensors": [lib.ones(2), lib.ones(3)],
        "missing_key": [{"a": 1}, {"b": 2}],
        "int_then_str": [1, "a"],
        "int_then_none": [1, None],
        "float_then_str": [1.0, "x"],
        "float_then_none": [1.0, None],
        "np_scalar_then_str": [np.float64(1), "a"],
        "not_a_mapping": [{"a": 1}, 5],
        "huge_int": [2 ** 70, 1],
        "unequal_arrays": [np.zeros(1), np.zeros(2)],
    }


@pytest.mark.parametrize("name", list(_bad_batches(T)))
def test_default_collate_errors_match_torch(name):
    with pytest.raises(Exception) as theirs:
        TD.default_collate(_bad_batches(torch)[name])
    with pytest.raises(theirs.type):
        D.default_collate(_bad_batches(T)[name])


# ---------------------------------------------------------------- datasets
def test_tensor_dataset_and_combinators_match_torch():
    x = np.arange(12.0).reshape(6, 2)
    ours = D.TensorDataset(T.tensor(x), T.arange(6))
    theirs = TD.TensorDataset(torch.tensor(x), torch.arange(6))
    assert len(ours) == len(theirs) == 6
    for i in (0, 5, -1):
        assert_same(ours[i], theirs[i], f"item {i}")
    cat_o, cat_t = D.ConcatDataset([ours, ours]), TD.ConcatDataset([theirs, theirs])
    assert len(cat_o) == len(cat_t)
    for i in (0, 6, 11, -1, -12):
        assert_same(cat_o[i], cat_t[i], f"concat item {i}")
    assert isinstance(ours + ours, D.ConcatDataset)
    sub_o, sub_t = D.Subset(ours, [4, 1]), TD.Subset(theirs, [4, 1])
    assert_same([sub_o[0], sub_o[1]], [sub_t[0], sub_t[1]])
    assert_same(sub_o.__getitems__([1, 0]), sub_t.__getitems__([1, 0]))
    stack_o = D.StackDataset(a=range(3), b=["x", "y", "z"])
    stack_t = TD.StackDataset(a=range(3), b=["x", "y", "z"])
    assert stack_o[2] == stack_t[2] and len(stack_o) == len(stack_t)
    assert D.StackDataset(range(2), "ab")[1] == TD.StackDataset(range(2), "ab")[1]


def test_dataset_errors_match_torch():
    cases = [
        (lambda m, lib: m.TensorDataset(lib.ones(2), lib.ones(3))),
        (lambda m, lib: m.ConcatDataset([])),
        (lambda m, lib: m.ConcatDataset([range(3)])[-4]),
        (lambda m, lib: m.StackDataset(range(2), range(3))),
        (lambda m, lib: m.StackDataset()),
        (lambda m, lib: m.Dataset()[0]),
        (lambda m, lib: type("S", (m.Subset,), {"__getitem__": lambda s, i: i})(range(3), [0])),
    ]
    for make in cases:
        with pytest.raises(Exception) as theirs:
            make(TD, torch)
        with pytest.raises(theirs.type):
            make(D, T)


def test_concat_refuses_iterable_and_chain_chains():
    class Stream(D.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(self.n))

        def __len__(self):
            return self.n

    with pytest.raises(AssertionError, match="IterableDataset"):
        D.ConcatDataset([Stream(2)])
    chained = Stream(2) + Stream(3)
    assert isinstance(chained, D.ChainDataset)
    assert list(chained) == [0, 1, 0, 1, 2] and len(chained) == 5


# ---------------------------------------------------------------- random_split
@pytest.mark.parametrize("n, lengths", [
    (10, [3, 7]), (10, [0.3, 0.7]), (30, [0.3, 0.3, 0.4]), (11, [0.5, 0.5]),
    (7, [0.1, 0.2, 0.7]), (5, [1 / 3, 1 / 3, 1 / 3]), (3, [0.25, 0.25, 0.25, 0.25]),
])
def test_random_split_lengths_match_torch(n, lengths):
    with warnings.catch_warnings(record=True) as ours_w:
        warnings.simplefilter("always")
        ours = D.random_split(range(n), lengths, generator=T.Generator().manual_seed(0))
    with warnings.catch_warnings(record=True) as theirs_w:
        warnings.simplefilter("always")
        theirs = TD.random_split(range(n), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    assert len(ours_w) == len(theirs_w)  # a warning per empty split
    together = [i for s in ours for i in s]
    assert sorted(together) == list(range(n))
    assert all(isinstance(s, D.Subset) for s in ours)


def test_random_split_is_repeatable():
    def split(gen):
        return [list(s) for s in D.random_split(range(20), [5, 15], generator=gen)]

    assert split(T.Generator().manual_seed(3)) == split(T.Generator().manual_seed(3))
    T.manual_seed(4)
    first = [list(s) for s in D.random_split(range(20), [0.5, 0.5])]
    T.manual_seed(4)
    assert first == [list(s) for s in D.random_split(range(20), [0.5, 0.5])]


@pytest.mark.parametrize("lengths", [[3, 3], [0.5, 0.6], [1.2, -0.2], [11]])
def test_random_split_errors_match_torch(lengths):
    with pytest.raises(Exception) as theirs:
        TD.random_split(range(10), lengths)
    with pytest.raises(theirs.type):
        D.random_split(range(10), lengths)


# ---------------------------------------------------------------- samplers
def test_sequential_and_batch_samplers_match_torch():
    assert list(D.SequentialSampler(range(4))) == list(TD.SequentialSampler(range(4)))
    for size in (1, 2, 3, 5):
        for drop in (False, True):
            ours = D.BatchSampler(D.SequentialSampler(range(7)), size, drop)
            theirs = TD.BatchSampler(TD.SequentialSampler(range(7)), size, drop)
            assert list(ours) == list(theirs) and len(ours) == len(theirs)


@pytest.mark.parametrize("replacement, num_samples", [
    (False, None), (False, 3), (False, 12), (True, None), (True, 40)])
def test_random_sampler_semantics(replacement, num_samples):
    n = 5
    ours = D.RandomSampler(range(n), replacement, num_samples, T.Generator().manual_seed(1))
    theirs = TD.RandomSampler(range(n), replacement, num_samples)
    keys = list(ours)
    assert len(keys) == len(ours) == len(theirs) == len(list(theirs))
    assert all(0 <= k < n for k in keys) and all(type(k) is int for k in keys)
    if not replacement:  # whole permutations, then the start of one more
        for start in range(0, len(keys) - len(keys) % n, n):
            assert sorted(keys[start:start + n]) == list(range(n))
        assert len(set(keys[len(keys) - len(keys) % n:])) == len(keys) % n
    again = D.RandomSampler(range(n), replacement, num_samples, T.Generator().manual_seed(1))
    assert list(again) == keys


def test_random_sampler_without_generator_follows_manual_seed():
    sampler = D.RandomSampler(range(50))
    T.manual_seed(7)
    epochs = [list(sampler), list(sampler)]
    T.manual_seed(7)
    assert [list(sampler), list(sampler)] == epochs
    assert epochs[0] != epochs[1]  # each epoch its own order (1 in 50! to fail)


def test_subset_and_weighted_samplers():
    gen = T.Generator().manual_seed(0)
    keys = list(D.SubsetRandomSampler([10, 20, 30], generator=gen))
    assert sorted(keys) == [10, 20, 30]
    weights = [0.0, 1.0, 0.0, 3.0]
    drawn = list(D.WeightedRandomSampler(weights, 200, generator=gen))
    assert set(drawn) == {1, 3} and len(drawn) == 200
    assert drawn.count(3) > drawn.count(1)  # 3:1 odds over 200 draws
    unique = list(D.WeightedRandomSampler([1, 2, 3, 4], 4, replacement=False, generator=gen))
    assert sorted(unique) == [0, 1, 2, 3]
    # without replacement the zero weights come last, once the positive ones are used up
    zeros_last = list(D.WeightedRandomSampler([0.0, 1.0, 0.0], 3, replacement=False))
    assert zeros_last[0] == 1 and sorted(zeros_last[1:]) == [0, 2]
    sampler_o = D.WeightedRandomSampler([1.0, 2.0], 3)
    sampler_t = TD.WeightedRandomSampler([1.0, 2.0], 3)
    assert_same(sampler_o.weights, sampler_t.weights)
    assert len(sampler_o) == len(sampler_t)


@pytest.mark.parametrize("make", [
    lambda m: m.RandomSampler(range(3), replacement=1),
    lambda m: m.RandomSampler(range(3), num_samples=0),
    lambda m: m.RandomSampler([], num_samples=None),
    lambda m: m.WeightedRandomSampler([1.0], num_samples=-1),
    lambda m: m.WeightedRandomSampler([1.0], num_samples=True),
    lambda m: m.WeightedRandomSampler([1.0], 1, replacement=None),
    lambda m: m.WeightedRandomSampler([[1.0]], 1),
    lambda m: list(m.WeightedRandomSampler([1.0, 0.0], 3, replacement=False)),
    lambda m: list(m.WeightedRandomSampler([0.0, 0.0], 2)),
    lambda m: list(m.WeightedRandomSampler([-1.0, 2.0], 2)),
    lambda m: m.BatchSampler(range(3), 0, False),
    lambda m: m.BatchSampler(range(3), True, False),
    lambda m: m.BatchSampler(range(3), 2, None),
])
def test_sampler_errors_match_torch(make):
    with pytest.raises(Exception) as theirs:
        make(TD)
    with pytest.raises(theirs.type):
        make(D)


# ---------------------------------------------------------------- DataLoader
def _tensor_datasets():
    x = np.arange(14.0).reshape(7, 2).astype(np.float32)
    y = np.arange(7)
    return (D.TensorDataset(T.tensor(x), T.tensor(y)),
            TD.TensorDataset(torch.tensor(x), torch.tensor(y)))


class _DictData:
    """A plain map-style dataset (no base class), samples of mixed types."""

    def __len__(self):
        return 5

    def __getitem__(self, i):
        return {"id": i, "weight": i / 2, "name": f"s{i}", "vec": np.full(2, i, np.float32)}


@pytest.mark.parametrize("kwargs", [
    {}, {"batch_size": 2}, {"batch_size": 3, "drop_last": True}, {"batch_size": 7},
    {"batch_size": 10}, {"batch_size": None},
])
def test_dataloader_batches_match_torch(kwargs):
    ours_ds, theirs_ds = _tensor_datasets()
    ours, theirs = D.DataLoader(ours_ds, **kwargs), TD.DataLoader(theirs_ds, **kwargs)
    assert len(ours) == len(theirs)
    assert_same(list(ours), list(theirs), str(kwargs))
    assert_same(list(D.DataLoader(_DictData(), **kwargs)),
                list(TD.DataLoader(_DictData(), **kwargs)), f"dicts {kwargs}")


def test_dataloader_with_samplers_and_collate_fn_match_torch():
    ours_ds, theirs_ds = _tensor_datasets()
    order = [6, 0, 3, 3]
    assert_same(list(D.DataLoader(ours_ds, batch_size=3, sampler=order)),
                list(TD.DataLoader(theirs_ds, batch_size=3, sampler=order)))
    batches = [[1, 2], [0], [6, 5, 4]]
    ours = D.DataLoader(ours_ds, batch_sampler=batches)
    theirs = TD.DataLoader(theirs_ds, batch_sampler=batches)
    assert len(ours) == len(theirs)
    assert_same(list(ours), list(theirs))
    collate = lambda samples: [int(y) for _, y in samples]  # noqa: E731
    assert list(D.DataLoader(ours_ds, batch_size=4, collate_fn=collate)) == list(
        TD.DataLoader(theirs_ds, batch_size=4, collate_fn=collate))


class _RowsOneByOne(D.TensorDataset):
    """A subclass: the loader fetches it a sample at a time (no whole-row gather)."""


def test_tensor_dataset_batches_equal_collated_samples():
    x = T.tensor(np.random.default_rng(0).random((7, 3)).astype(np.float32))
    columns = (x, T.arange(7), T.tensor([True, False] * 3 + [True]), T.zeros(7, 0))
    order = [6, 0, 3, 3, -1]
    fast = list(D.DataLoader(D.TensorDataset(*columns), batch_size=3, sampler=order))
    slow = list(D.DataLoader(_RowsOneByOne(*columns), batch_size=3, sampler=order))
    for a, b in zip(fast, slow):
        assert type(a) is type(b) is list
        for u, v in zip(a, b):
            assert u.dtype == v.dtype and u.shape == v.shape and u.is_contiguous()
            assert u.tolist() == v.tolist()
    # a batch sampler of tuples or ranges: rows, not one multi-dimensional index
    rows = list(D.DataLoader(D.TensorDataset(x), batch_sampler=[(1, 2), range(3)]))
    assert [len(b[0]) for b in rows] == [2, 3] and rows[0][0].tolist() == x[1:3].tolist()
    w = T.ones(4, 2, requires_grad=True)  # a graph to record: through stack, as torch
    (batch,) = next(iter(D.DataLoader(D.TensorDataset(w), batch_size=2)))
    assert type(batch.grad_fn).__name__ == "StackBackward0"


def test_dataloader_shuffle_is_a_repeatable_permutation():
    ds = D.TensorDataset(T.arange(20))
    loader = D.DataLoader(ds, batch_size=6, shuffle=True,
                          generator=T.Generator().manual_seed(5))
    epoch = [int(v) for (batch,) in loader for v in batch]
    assert sorted(epoch) == list(range(20)) and len(list(loader)) == 4
    again = D.DataLoader(ds, batch_size=6, shuffle=True,
                         generator=T.Generator().manual_seed(5))
    assert [int(v) for (b,) in again for v in b] == epoch
    T.manual_seed(11)
    a = [int(v) for (b,) in D.DataLoader(ds, batch_size=6, shuffle=True) for v in b]
    T.manual_seed(11)
    assert [int(v) for (b,) in D.DataLoader(ds, batch_size=6, shuffle=True) for v in b] == a


class _Stream(D.IterableDataset):
    def __init__(self, n, sized=True):
        self.n, self.sized = n, sized

    def __iter__(self):
        return iter([{"v": i, "x": np.float64(i)} for i in range(self.n)])

    def __len__(self):
        if not self.sized:
            raise TypeError("no length")
        return self.n


class _TorchStream(_Stream, TD.IterableDataset):
    pass


@pytest.mark.parametrize("kwargs", [
    {}, {"batch_size": 2}, {"batch_size": 2, "drop_last": True}, {"batch_size": None},
])
def test_dataloader_iterable_dataset_matches_torch(kwargs):
    ours, theirs = D.DataLoader(_Stream(5), **kwargs), TD.DataLoader(_TorchStream(5), **kwargs)
    assert len(ours) == len(theirs)
    assert_same(list(ours), list(theirs), str(kwargs))
    with pytest.raises(TypeError):
        len(D.DataLoader(_Stream(5, sized=False), **kwargs))


@pytest.mark.parametrize("kwargs", [
    {"shuffle": True, "sampler": [0, 1]},
    {"batch_sampler": [[0]], "batch_size": 2},
    {"batch_sampler": [[0]], "shuffle": True},
    {"batch_sampler": [[0]], "sampler": [0]},
    {"batch_sampler": [[0]], "drop_last": True},
    {"batch_size": None, "drop_last": True},
    {"num_workers": -1},
    {"timeout": -1},
    {"prefetch_factor": 2},
    {"persistent_workers": True},
    {"num_workers": 1, "prefetch_factor": -1},
    {"multiprocessing_context": "fork"},
    {"num_workers": 1, "multiprocessing_context": "no-such-method"},
    {"num_workers": 1, "multiprocessing_context": 3},
    {"batch_size": 0},
])
def test_dataloader_argument_errors_match_torch(kwargs):
    ours_ds, theirs_ds = _tensor_datasets()
    with pytest.raises(Exception) as theirs:
        TD.DataLoader(theirs_ds, **kwargs)
    with pytest.raises(theirs.type) as ours:
        D.DataLoader(ours_ds, **kwargs)
    assert str(ours.value).split(",")[0].split(";")[0] in str(theirs.value)


@pytest.mark.parametrize("kwargs", [{"shuffle": True}, {"sampler": [0]},
                                    {"batch_sampler": [[0]]}])
def test_iterable_dataset_refuses_samplers_as_torch(kwargs):
    with pytest.raises(Exception) as theirs:
        TD.DataLoader(_TorchStream(3), **kwargs)
    with pytest.raises(theirs.type, match="IterableDataset"):
        D.DataLoader(_Stream(3), **kwargs)


def test_dataloader_attributes_frozen_after_init():
    loader = D.DataLoader(range(3))
    with pytest.raises(ValueError, match="batch_size attribute should not be set"):
        loader.batch_size = 2
    loader.num_workers = 0  # not frozen, as in torch


class _Ragged(D.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        return T.zeros(3 if i != 4 else 2), i


def test_inconsistent_shapes_name_the_batch_indices():
    loader = D.DataLoader(_Ragged(), batch_size=3, sampler=[0, 1, 2, 5, 4, 3])
    batches = iter(loader)
    next(batches)
    with pytest.raises(RuntimeError) as info:
        next(batches)
    message = str(info.value)
    assert "[3] at entry 0 and [2] at entry 1" in message
    assert "dataset indices [5, 4, 3]" in message


def test_inconsistent_shapes_in_a_stream_name_the_samples():
    class Ragged(D.IterableDataset):
        def __iter__(self):
            return iter([np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(3)])

    batches = iter(D.DataLoader(Ragged(), batch_size=2))
    next(batches)
    with pytest.raises(RuntimeError, match="samples 2 to 3"):
        next(batches)


def test_a_missing_key_keeps_its_class_and_gains_the_indices():
    class Keys(D.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return {"a": 1} if i == 0 else {"b": 2}

    with pytest.raises(KeyError) as info:
        next(iter(D.DataLoader(Keys(), batch_size=2)))
    notes = getattr(info.value, "__notes__", ["dataset indices [0, 1]"])
    assert "dataset indices [0, 1]" in notes[0]


def test_get_worker_info_is_none_in_main_process():
    assert D.get_worker_info() is None and TD.get_worker_info() is None


@pytest.mark.parametrize("module", ["dataset", "sampler", "_collate", "dataloader"])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    mod = importlib.import_module(f"retrograd.utils.data.{module}")
    assert doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0


def _warnings_of(fn):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [(w.category, str(w.message)) for w in caught]


def test_pin_memory_without_accelerator_warns_as_torch():
    if torch.accelerator.is_available() or T.cuda.is_available():
        pytest.skip("PyTorch warns only without an accelerator")
    ours = _warnings_of(lambda: next(iter(
        T.utils.data.DataLoader(T.utils.data.TensorDataset(T.ones(4, 2)), pin_memory=True))))
    theirs = _warnings_of(lambda: next(iter(torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.ones(4, 2)), pin_memory=True))))
    assert ours == theirs and ours


@pytest.mark.parametrize("workers", [0, 1, 10_000])
def test_check_worker_number_rationality_as_torch(workers):
    """At construction and on its own (no worker is started), as PyTorch's."""
    loaders = []
    def make(lib):
        loaders.append(lib.utils.data.DataLoader(lib.utils.data.TensorDataset(lib.ones(4, 2)),
                                                 num_workers=workers))

    made = [_warnings_of(lambda: make(T)), _warnings_of(lambda: make(torch))]
    assert made[0] == made[1]
    assert _warnings_of(loaders[0].check_worker_number_rationality) == \
        _warnings_of(loaders[1].check_worker_number_rationality)
