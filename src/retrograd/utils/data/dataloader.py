"""DataLoader: batches from a dataset, in the main process or in worker processes.

Like ``torch.utils.data.DataLoader``: a sampler orders the keys, a batch sampler groups them,
a fetcher reads and collates each batch.  With ``num_workers > 0`` the batches are made by
worker processes (``multiprocessing``), each with its own index queue; the main process hands
out tasks round-robin, at most ``prefetch_factor`` per worker ahead, and returns the batches
in the sampler's order (``in_order=True``).
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import queue
import warnings
import weakref

from ...cuda.accelerator import is_available as _accelerator_available
from ...random import numpy_generator
from ._collate import default_collate, default_convert
from ._fetch import make_fetcher
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler
from .worker import (
    STATUS_CHECK_INTERVAL, ExceptionWrapper, IterableDatasetStopIteration, ResumeIteration,
    worker_loop,
)

__all__ = ["DataLoader"]

#: seconds between the main process's checks that no worker died while it waits for a batch
_WORKER_CHECK_INTERVAL = 0.5


class _InfiniteConstantSampler(Sampler):
    """The sampler of an iterable dataset: ``None`` forever (the dataset decides the end)."""

    def __iter__(self):
        while True:
            yield None


def _check_count(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"DataLoader: {name} must be an int, got {type(value).__name__}")


class DataLoader:
    """Iterate over ``dataset`` in batches.

    Parameters follow ``torch.utils.data.DataLoader``: ``batch_size`` (``None`` turns batching
    off), ``shuffle`` (a :class:`RandomSampler`, drawing from ``generator``), ``sampler`` or
    ``batch_sampler`` (exclusive with shuffle / batch_size / drop_last), ``num_workers``
    (worker processes; 0 loads in the main process), ``collate_fn`` (default
    :func:`default_collate`), ``drop_last``, ``timeout`` (seconds to wait for a worker's batch),
    ``worker_init_fn(worker_id)``, ``multiprocessing_context``, ``prefetch_factor`` (tasks
    in flight per worker, default 2), ``persistent_workers`` (keep workers between epochs),
    ``in_order``.  ``pin_memory`` and ``pin_memory_device`` are accepted and do nothing (no
    pinned memory; without an accelerator PyTorch's warning says so).

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd.utils.data import DataLoader, TensorDataset
    >>> ds = TensorDataset(T.arange(10.).reshape(5, 2), T.arange(5))
    >>> [y.tolist() for _, y in DataLoader(ds, batch_size=2)]
    [[0, 1], [2, 3], [4]]
    """

    _FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
               "persistent_workers")
    __initialized = False

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler=None, batch_sampler=None, num_workers: int = 0, collate_fn=None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True):
        _check_count("num_workers", num_workers)
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; "
                             "use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor "
                "to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.in_order = in_order
        self._is_iterable = isinstance(dataset, IterableDataset)

        if self._is_iterable:
            for name, value in (("shuffle", shuffle), ("sampler", sampler),
                                ("batch_sampler", batch_sampler)):
                if value not in (None, False):
                    raise ValueError(
                        f"DataLoader with IterableDataset: expected unspecified {name} "
                        f"option, but got {name}={value}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")

        if sampler is None:
            if self._is_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.multiprocessing_context = multiprocessing_context
        self._iterator = None
        self.__initialized = True
        self.check_worker_number_rationality()

    # ------------------------------------------------------------------ configuration
    @property
    def multiprocessing_context(self):
        return self.__mp_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, context):
        if context is not None:
            if self.num_workers == 0:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading "
                    f"(num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(context, str):
                methods = multiprocessing.get_all_start_methods()
                if context not in methods:
                    raise ValueError(
                        "multiprocessing_context option should specify a valid start method "
                        f"in {methods!r}, but got multiprocessing_context={context!r}")
                context = multiprocessing.get_context(context)
            elif not isinstance(context, multiprocessing.context.BaseContext):
                raise TypeError(
                    "multiprocessing_context option should be a valid context object or a "
                    f"string specifying the start method, but got "
                    f"multiprocessing_context={context}")
        self.__mp_context = context

    def __setattr__(self, attr, val):
        if self.__initialized and attr in self._FROZEN:
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    # ------------------------------------------------------------------ iteration
    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        if not self.persistent_workers:
            self.check_worker_number_rationality()
            return _MultiProcessIter(self)
        if self._iterator is None or self._iterator._shut:  # none yet, or stopped by an error
            self.check_worker_number_rationality()
            self._iterator = _MultiProcessIter(self)
        else:
            self._iterator._reset(first=False)
        return self._iterator

    def check_worker_number_rationality(self) -> None:
        """Warn (PyTorch's words) when more workers are asked for than CPUs this process
        may use: they would slow loading down or freeze it."""
        if not self.num_workers:
            return
        cpuset_checked = hasattr(os, "sched_getaffinity")
        suggested = len(os.sched_getaffinity(0)) if cpuset_checked else os.cpu_count()
        if suggested is not None and self.num_workers <= suggested:
            return
        if suggested is None:
            advice = ("DataLoader is not able to compute a suggested max number of worker in "
                      "current system.")
        else:
            advice = (f"Our suggested max number of worker in current system is {suggested}"
                      f"{'' if cpuset_checked else ' (`cpuset` is not taken into account)'}, "
                      "which is smaller than what this DataLoader is going to create.")
        warnings.warn(
            f"This DataLoader will create {self.num_workers} worker processes in total. "
            f"{advice} Please be aware that excessive worker creation might get DataLoader "
            "running slow or even freeze, lower the worker number to avoid potential "
            "slowness/freeze if necessary.", stacklevel=2)

    def __len__(self) -> int:
        if self._is_iterable:
            length = len(self.dataset)  # a TypeError when the stream has no length, as torch
            if self.batch_size is not None:
                if self.drop_last:
                    return length // self.batch_size
                return -(-length // self.batch_size)
            return length
        return len(self._index_sampler)


class _BaseIter:
    def __init__(self, loader: DataLoader):
        # a weak reference: a persistent loader holds its iterator, and a cycle would leave the
        # workers' shutdown to the garbage collector, after it has already closed the queues
        self._loader = weakref.ref(loader)
        self._is_iterable = loader._is_iterable
        self._dataset = loader.dataset
        self._index_sampler = loader._index_sampler
        self._auto_collation = loader._auto_collation
        self._collate_fn = loader.collate_fn
        self._drop_last = loader.drop_last
        self._sampler_iter = iter(self._index_sampler)
        if loader.pin_memory and not _accelerator_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=3)
        # a seed per epoch for the workers, drawn from the loader's generator (or the default
        # one) in the main process too, as PyTorch: the two then see the same sampler order
        self._base_seed = int(numpy_generator(loader.generator).integers(0, 2 ** 62))

    def __iter__(self):
        return self

    def __len__(self) -> int:
        return len(self._loader())

    def _next_index(self):
        return next(self._sampler_iter)


class _SingleProcessIter(_BaseIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = make_fetcher(self._is_iterable, self._dataset, self._auto_collation,
                                     self._collate_fn, self._drop_last)

    def __next__(self):
        index = self._next_index()
        return self._fetcher.fetch(index)


class _MultiProcessIter(_BaseIter):
    """Batches from ``num_workers`` worker processes, returned in the sampler's order."""

    def __init__(self, loader):
        super().__init__(loader)
        self._num_workers = loader.num_workers
        self._prefetch = loader.prefetch_factor * loader.num_workers
        self._timeout = loader.timeout
        self._in_order = loader.in_order
        self._persistent = loader.persistent_workers
        ctx = loader.multiprocessing_context or multiprocessing.get_context()
        self._done_event = ctx.Event()
        self._data_queue = ctx.Queue()
        self._index_queues, self._workers = [], []
        for worker_id in range(self._num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()  # never block exit on undelivered tasks
            worker = ctx.Process(
                target=worker_loop,
                args=(self._is_iterable, self._dataset, index_queue, self._data_queue,
                      self._done_event, self._auto_collation, self._collate_fn,
                      self._drop_last, self._base_seed, loader.worker_init_fn, worker_id,
                      self._num_workers, os.getpid()),
                daemon=True)
            worker.start()
            self._index_queues.append(index_queue)
            self._workers.append(worker)
        self._shut = False
        self._reset(first=True)

    def _reset(self, first: bool):
        self._sampler_iter = iter(self._index_sampler)
        self._send_idx = 0  # the next task's number
        self._rcvd_idx = 0  # the next task to return
        self._task_info = {}  # task number -> [worker_id] or [worker_id, data]
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first:  # persistent workers: start their new epoch, drop last epoch's leftovers
            for index_queue in self._index_queues:
                index_queue.put(ResumeIteration())
            pending = self._num_workers
            while pending:
                idx, _ = self._get_data()
                if isinstance(idx, ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch):
            self._try_put_index()

    def _try_put_index(self):
        if self._tasks_outstanding >= self._prefetch:
            return
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            worker_id = next(self._worker_cycle)
            if self._workers_status[worker_id]:
                break
        else:
            return  # every worker's stream has ended
        self._index_queues[worker_id].put((self._send_idx, index))
        self._task_info[self._send_idx] = [worker_id]
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _try_get_data(self, timeout):
        try:
            return True, self._data_queue.get(timeout=timeout)
        except queue.Empty:
            dead = [w for w in self._workers if not w.is_alive()]
            if dead:
                pids = ", ".join(str(w.pid) for w in dead)
                self._shutdown_workers()
                raise RuntimeError(
                    f"DataLoader worker (pid(s) {pids}) exited unexpectedly (killed, or out "
                    "of memory?); run with num_workers=0 to see the error in this process"
                ) from None
            return False, None

    def _get_data(self):
        if self._timeout > 0:
            ok, data = self._try_get_data(self._timeout)
            if not ok:
                self._shutdown_workers()
                raise RuntimeError(
                    f"DataLoader timed out after {self._timeout} seconds waiting for a batch "
                    "from its workers; raise timeout= or make __getitem__ faster")
            return data
        while True:
            ok, data = self._try_get_data(_WORKER_CHECK_INTERVAL)
            if ok:
                return data

    def _next_ready(self):
        """The next result to return, skipping tasks of workers whose stream has ended."""
        while self._rcvd_idx < self._send_idx:
            info = self._task_info.get(self._rcvd_idx)
            if info is not None and (len(info) == 2 or self._workers_status[info[0]]):
                return info
            self._task_info.pop(self._rcvd_idx, None)
            self._rcvd_idx += 1
        return None

    def __next__(self):
        while True:
            info = self._next_ready()
            if info is None:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            if len(info) == 2:  # arrived earlier, out of order
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process(info[1])
            if self._shut:
                raise StopIteration
            idx, data = self._get_data()
            if isinstance(idx, ResumeIteration):
                continue
            self._tasks_outstanding -= 1
            if isinstance(data, IterableDatasetStopIteration):
                self._retire(data.worker_id, idx)
                continue
            if idx != self._rcvd_idx and self._in_order:
                self._task_info[idx].append(data)
                continue
            del self._task_info[idx]
            if idx == self._rcvd_idx:
                self._rcvd_idx += 1
            return self._process(data)

    def _retire(self, worker_id: int, idx: int):
        """A worker's stream ended at task ``idx``: it drops the tasks it was sent after
        that one, so stop waiting for them and hand their places to the other workers."""
        self._workers_status[worker_id] = False
        self._task_info.pop(idx, None)
        dropped = [i for i, info in self._task_info.items()
                   if info[0] == worker_id and len(info) == 1]
        for i in dropped:
            del self._task_info[i]
        self._tasks_outstanding -= len(dropped)
        self._try_put_index()

    def _process(self, data):
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            # the workers live on, as in PyTorch: a caller may catch this and go on to the
            # next batch
            data.reraise()
        return data

    def _shutdown_workers(self):
        if self._shut:
            return
        self._shut = True
        self._done_event.set()
        for index_queue in self._index_queues:
            index_queue.put(None)
        for worker in self._workers:
            worker.join(timeout=STATUS_CHECK_INTERVAL)
        for worker in self._workers:
            if worker.is_alive():
                worker.terminate()
                worker.join()
        for index_queue in self._index_queues:
            index_queue.close()
        self._data_queue.cancel_join_thread()
        self._data_queue.close()

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:  # interpreter shutdown: queues may be gone already
            pass
