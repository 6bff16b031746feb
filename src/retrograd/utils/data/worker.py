"""The worker-process side of the DataLoader: ``get_worker_info``, the loop each worker runs,
and the wrapper that carries a worker's exception (with its traceback) to the main process.

Protocol (one index queue per worker, one shared data queue):
  main -> worker: ``(send_idx, keys)`` a task; ``ResumeIteration()`` start a new epoch
  (persistent workers); ``None`` stop.
  worker -> main: ``(send_idx, batch)``, ``(send_idx, ExceptionWrapper)``,
  ``(send_idx, IterableDatasetStopIteration(worker_id))`` when its stream ran out, or
  ``(ResumeIteration, None)`` to acknowledge a new epoch.
"""

from __future__ import annotations

import os
import queue
import random
import sys
import traceback

import numpy as np

from ...random import manual_seed
from ._fetch import make_fetcher

__all__ = ["WorkerInfo", "get_worker_info"]

#: seconds a worker waits for a task before checking that the main process is alive and
#: has not shut it down: short, because a loader freed by the garbage collector may have had
#: its queues closed first, so that the stop message never arrives and only the event does
WORKER_POLL_INTERVAL = 0.25
#: seconds the main process gives a worker to finish its batch and exit before killing it
STATUS_CHECK_INTERVAL = 5.0


class WorkerInfo:
    """What a worker process knows about itself: ``id``, ``num_workers``, ``seed`` and its
    copy of the ``dataset``.  Read-only, as in PyTorch."""

    __initialized = False

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)
        self.__keys = tuple(kwargs)
        self.__initialized = True

    def __setattr__(self, key, val):
        if self.__initialized:
            raise RuntimeError(
                f"Cannot assign attributes to {self.__class__.__name__} objects"
            )
        super().__setattr__(key, val)

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self.__keys)
        return f"{self.__class__.__name__}({items})"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """In a DataLoader worker process, its :class:`WorkerInfo`; ``None`` in the main process.

    Use it in ``IterableDataset.__iter__`` or ``worker_init_fn`` to give each worker its own
    share of the data::

        info = get_worker_info()
        start = 0 if info is None else info.id
        step = 1 if info is None else info.num_workers
        yield from items[start::step]
    """
    return _worker_info


class ExceptionWrapper:
    """An exception raised in a worker, carried to the main process and raised there again
    with the worker's traceback in its message."""

    def __init__(self, where: str):
        exc_type, exc, _ = sys.exc_info()
        self.exc_type = exc_type
        self.exc_msg = "".join(traceback.format_exception(exc_type, exc, exc.__traceback__))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        try:
            error = self.exc_type(msg)
        except Exception:  # the class needs other arguments: keep the message at least
            raise RuntimeError(msg) from None
        raise error


class _KeyErrorMessage(str):
    # KeyError shows repr(message); this keeps the traceback readable
    def __repr__(self):
        return str(self)


class IterableDatasetStopIteration:
    """Sent by a worker whose iterable dataset ran out."""

    def __init__(self, worker_id: int):
        self.worker_id = worker_id


class ResumeIteration:
    """Sent to persistent workers when a new epoch starts (and echoed back)."""


def _seed_worker(seed: int, base_seed: int, worker_id: int) -> None:
    # each worker gets its own streams: Python's, retrograd's and NumPy's global one
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(np.random.SeedSequence([base_seed, worker_id]).generate_state(4))


def worker_loop(is_iterable, dataset, index_queue, data_queue, done_event, auto_collation,
                collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers,
                parent_pid):
    """The body of one worker process."""
    global _worker_info
    seed = base_seed + worker_id
    _seed_worker(seed, base_seed, worker_id)
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                              dataset=dataset)
    init_error = None
    fetcher = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = make_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
    except Exception:
        init_error = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
    exhausted = False  # an iterable dataset that ran out sends nothing more this epoch
    while True:
        try:
            task = index_queue.get(timeout=WORKER_POLL_INTERVAL)
        except queue.Empty:
            if os.getppid() != parent_pid or done_event.is_set():
                break  # the main process is gone, or shut down without reaching us
            continue
        if task is None:
            break
        if isinstance(task, ResumeIteration):
            data_queue.put((task, None))
            exhausted = False
            try:
                fetcher = make_fetcher(is_iterable, dataset, auto_collation, collate_fn,
                                       drop_last)
            except Exception:
                init_error = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            continue
        if done_event.is_set() or exhausted:
            continue  # shutting down, or a stale task: drop it
        send_idx, keys = task
        if init_error is not None:
            data, init_error = init_error, None
        else:
            try:
                data = fetcher.fetch(keys)
            except Exception as e:
                if isinstance(e, StopIteration) and is_iterable:
                    exhausted = True
                    data = IterableDatasetStopIteration(worker_id)
                else:  # (a map-style dataset's StopIteration is an error like any other)
                    data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        data_queue.put((send_idx, data))
    if done_event.is_set():
        # the main process is not reading any more: don't block on flushing to it
        data_queue.cancel_join_thread()
        data_queue.close()
