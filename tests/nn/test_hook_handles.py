"""RemovableHandle pickles and copies as PyTorch's (its hook tables travel with it), and a
module with hooks deep-copies with working, independent hooks."""

from __future__ import annotations

import copy
import pickle
from collections import OrderedDict

import retrograd as T
from retrograd import nn
from retrograd.nn._hooks import RemovableHandle


def _record(module, args, output):
    module.calls = getattr(module, "calls", 0) + 1


def test_handle_deepcopied_with_its_module_removes_from_the_copy():
    m = nn.Linear(2, 2)
    handle = m.register_forward_hook(_record, with_kwargs=True, always_call=True)
    m2, handle2 = copy.deepcopy((m, handle))
    assert handle2.id == handle.id
    handle2.remove()
    assert not m2._forward_hooks and not m2._forward_hooks_with_kwargs
    assert not m2._forward_hooks_always_called
    assert handle.id in m._forward_hooks and handle.id in m._forward_hooks_with_kwargs


def test_module_with_hooks_deepcopies_and_runs():
    m = nn.Linear(2, 2)
    m.register_forward_hook(_record)
    m.register_full_backward_hook(lambda module, gi, go: None)
    m2 = copy.deepcopy(m)
    m2(T.randn(1, 2, requires_grad=True)).sum().backward()
    assert m2.calls == 1 and not hasattr(m, "calls")
    assert m2.weight.grad is not None and m.weight.grad is None


def test_handle_pickle_round_trip_matches_torch(torch):
    table, extra = OrderedDict(), OrderedDict()
    handle = RemovableHandle(table, extra_dict=extra)
    table[handle.id] = extra[handle.id] = "hook"
    got_table, got = pickle.loads(pickle.dumps((table, handle)))
    assert got.id == handle.id and got.hooks_dict_ref() == got_table
    got.remove()
    assert not got_table and handle.id in table
    # an id restored from a pickle is never handed out again
    restored = pickle.loads(pickle.dumps(RemovableHandle(OrderedDict())))
    assert RemovableHandle(OrderedDict()).id > restored.id
    # PyTorch's handle pickles to the same state layout (table, id, extra tables)
    from torch.utils.hooks import RemovableHandle as TorchHandle

    theirs = TorchHandle(OrderedDict(), extra_dict=OrderedDict())
    assert len(theirs.__getstate__()) == len(handle.__getstate__()) == 3


def test_handle_whose_table_is_gone_unpickles_dead():
    handle = RemovableHandle(OrderedDict())  # the table dies at once
    got = pickle.loads(pickle.dumps(handle))
    got.remove()  # nothing to remove, no error
    assert got.hooks_dict_ref() is None
