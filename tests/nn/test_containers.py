"""Containers against PyTorch: Sequential, ModuleList, ModuleDict, ParameterList,
ParameterDict (indexing, slicing, mutation, naming, repr, errors)."""

from __future__ import annotations

from collections import OrderedDict

import pytest

import retrograd as T
from retrograd import nn


def keys(module):
    return list(module._modules)


def layer_names(seq):
    return [type(m).__name__ for m in seq]


def both(torch):
    return [(T, nn), (torch, torch.nn)]


def test_sequential_indexing_and_mutation(torch):
    def run(m, mnn):
        seq = mnn.Sequential(mnn.Linear(2, 3), mnn.ReLU(), mnn.Linear(3, 1))
        out = [len(seq), layer_names(seq), type(seq[-1]).__name__, type(seq[1:]).__name__,
               layer_names(seq[::2]), keys(seq[1:])]
        seq.append(mnn.Tanh())
        seq.insert(1, mnn.Sigmoid())
        seq.insert(-1, mnn.Identity())
        out.append((layer_names(seq), keys(seq)))
        del seq[0]
        out.append((layer_names(seq), keys(seq)))
        del seq[1:3]
        out.append((layer_names(seq), keys(seq)))
        seq[0] = mnn.ELU()
        seq.extend([mnn.ReLU(), mnn.ReLU6()])
        popped = seq.pop(1)
        out.append((layer_names(seq), keys(seq), type(popped).__name__))
        out.append(layer_names(seq + mnn.Sequential(mnn.Tanh())))
        out.append(layer_names(seq * 2))
        seq += mnn.Sequential(mnn.SiLU())
        out.append(layer_names(seq))
        for bad in (lambda: seq[10], lambda: seq.insert(20, mnn.ReLU()), lambda: seq + 3,
                    lambda: seq * 0, lambda: seq * 1.5):
            with pytest.raises(Exception) as info:
                bad()
            out.append((type(info.value).__name__, str(info.value).replace("torch.", "")
                        .replace("retrograd.", "").split("<class")[0]))
        return out

    results = [run(*b) for b in both(torch)]
    assert results[0] == results[1]


def test_sequential_from_ordered_dict_and_forward(torch):
    seq = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.Tanh())]))
    tseq = torch.nn.Sequential(OrderedDict([("fc", torch.nn.Linear(2, 2)),
                                            ("act", torch.nn.Tanh())]))
    assert keys(seq) == ["fc", "act"] and repr(seq) == repr(tseq)
    assert seq.fc is seq[0]
    assert seq(T.zeros(1, 2)).shape == (1, 2)
    assert "0" not in dir(nn.Sequential(nn.ReLU()))


def test_module_list(torch):
    def run(m, mnn):
        ml = mnn.ModuleList([mnn.Linear(2, 2), mnn.ReLU()])
        ml.append(mnn.Tanh())
        ml.extend([mnn.Sigmoid()])
        ml.insert(1, mnn.Identity())
        ml += [mnn.ELU()]
        out = [len(ml), layer_names(ml), keys(ml), type(ml[1:3]).__name__,
               layer_names(ml[1:3]), type(ml[-1]).__name__]
        del ml[0]
        out.append(keys(ml))
        ml[0] = mnn.ReLU6()
        out.append(layer_names(ml))
        out.append(type(ml.pop(0)).__name__)
        out.append(layer_names(ml + mnn.ModuleList([mnn.Tanh()])))
        out.append(len(list(mnn.ModuleList([mnn.Linear(2, 2)] * 2).parameters())))
        for bad in (lambda: ml[9], lambda: ml.extend(3)):
            with pytest.raises(Exception) as info:
                bad()
            out.append((type(info.value).__name__, str(info.value)))
        return out

    results = [run(*b) for b in both(torch)]
    assert results[0] == results[1]


def test_module_dict(torch):
    def run(m, mnn):
        md = mnn.ModuleDict({"b": mnn.ReLU(), "a": mnn.Linear(2, 2)})
        md["c"] = mnn.Tanh()
        md.update([("d", mnn.Sigmoid())])
        out = [list(md), list(md.keys()), layer_names(md.values()), "a" in md, len(md)]
        out.append(type(md.pop("b")).__name__)
        del md["c"]
        out.append(list(md))
        out.append([n for n, _ in md.named_parameters()])
        out.append(repr(md))
        for bad in (lambda: md.update(3), lambda: md.update([("x",)])):
            with pytest.raises(Exception) as info:
                bad()
            out.append((type(info.value).__name__, str(info.value)))
        md.clear()
        out.append(len(md))
        return out

    results = [run(*b) for b in both(torch)]
    assert results[0] == results[1]


def test_parameter_list(torch):
    def run(m, mnn):
        pl = mnn.ParameterList([mnn.Parameter(m.zeros(2)), m.ones(3)])
        pl.append(m.zeros(1, 2))
        pl.extend([mnn.Parameter(m.zeros(4))])
        out = [len(pl), [type(p).__name__ for p in pl], [tuple(p.shape) for p in pl],
               [n for n, _ in pl.named_parameters()], len(pl[1:3]),
               repr(pl).replace("torch.", "").replace("retrograd.", "")]
        pl[0] = m.ones(5)
        out.append(tuple(pl[0].shape))
        out.append(isinstance(pl[-1], mnn.Parameter))
        with pytest.raises(RuntimeError) as info:
            pl(m.zeros(1))
        out.append(str(info.value))
        with pytest.raises(IndexError) as info:
            _ = pl[7]
        out.append(str(info.value))
        return out

    results = [run(*b) for b in both(torch)]
    assert results[0] == results[1]


def test_parameter_dict(torch):
    def run(m, mnn):
        pd = mnn.ParameterDict({"w": mnn.Parameter(m.zeros(2, 3)), "b": m.ones(3)})
        pd["c"] = m.zeros(1)
        pd.update([("d", mnn.Parameter(m.zeros(2)))])
        out = [list(pd), [type(p).__name__ for p in pd.values()],
               [n for n, _ in pd.named_parameters()], "w" in pd, len(pd),
               pd.get("nope") is None,
               repr(pd).replace("torch.", "").replace("retrograd.", "")]
        out.append(tuple(pd.pop("w").shape))
        out.append(list(pd.keys()))
        out.append(tuple(pd.setdefault("e", m.zeros(4)).shape))
        out.append(list((pd | mnn.ParameterDict({"z": m.zeros(1)})).keys()))
        with pytest.raises(TypeError) as info:
            _ = pd[3]
        out.append(str(info.value))
        with pytest.raises(RuntimeError) as info:
            pd(1)
        out.append(str(info.value))
        pd.clear()
        out.append(len(pd))
        return out

    results = [run(*b) for b in both(torch)]
    assert results[0] == results[1]


def test_containers_train_and_state_dict(torch):
    net = nn.ModuleDict({"enc": nn.Sequential(nn.Linear(2, 2)),
                         "heads": nn.ModuleList([nn.Linear(2, 1), nn.Linear(2, 1)])})
    tnet = torch.nn.ModuleDict({"enc": torch.nn.Sequential(torch.nn.Linear(2, 2)),
                                "heads": torch.nn.ModuleList([torch.nn.Linear(2, 1),
                                                              torch.nn.Linear(2, 1)])})
    assert list(net.state_dict()) == list(tnet.state_dict())
    net.eval()
    assert not net["heads"][1].training
    assert repr(net) == repr(tnet)


def test_deprecated_container_as_torch(torch):
    """nn.Container: keyword arguments become submodules, with PyTorch's FutureWarning."""
    import warnings

    results = []
    for lib in (T, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c = lib.nn.Container(first=lib.nn.Linear(2, 3), second=lib.nn.ReLU())
        results.append((repr(c), list(c.state_dict()),
                        [(w.category, str(w.message)) for w in caught]))
    assert results[0] == results[1]
