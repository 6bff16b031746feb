"""nn.functional.conv_tbc against PyTorch (values, input/weight/bias gradients, float64
gradcheck/gradgradcheck, the errors) and nn.factory_kwargs (results and errors)."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as T
import retrograd.nn.functional as F
from retrograd.autograd.gradcheck import gradcheck, gradgradcheck

from .helpers import close

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("time,batch,cin,cout,width,pad", [(5, 2, 3, 4, 2, 0), (4, 1, 2, 3, 3, 1),
                                                            (3, 2, 1, 1, 1, 2)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv_tbc_matches_torch(torch, time, batch, cin, cout, width, pad, dtype):
    arrays = [RNG.standard_normal(s).astype(dtype)
              for s in ((time, batch, cin), (width, cin, cout), (cout,))]
    ours = [T.tensor(a, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    y, y_th = F.conv_tbc(*ours, pad), torch.nn.functional.conv_tbc(*theirs, pad)
    tol = 1e-5 if dtype == "float32" else 1e-12
    assert y.dtype == getattr(T, dtype)
    close(y, y_th, tol)
    g = RNG.standard_normal(tuple(y_th.shape)).astype(dtype)
    y.backward(T.tensor(g))
    y_th.backward(torch.tensor(g))
    for a, b in zip(ours, theirs):
        close(a.grad, b.grad, tol)


def test_conv_tbc_gradcheck_and_gradgradcheck():
    args = [T.tensor(RNG.standard_normal(s), requires_grad=True)
            for s in ((4, 2, 2), (2, 2, 3), (3,))]
    gradcheck(lambda x, w, b: F.conv_tbc(x, w, b, 1), args)
    gradgradcheck(lambda x, w, b: F.conv_tbc(x, w, b, 1), args)


@pytest.mark.parametrize("case", ["input_rank", "weight_rank", "bias_rank", "channels", "bias"])
def test_conv_tbc_errors_match_torch(torch, case):
    def run(lib):
        x, w, b = lib.ones(5, 2, 3), lib.ones(2, 3, 4), lib.ones(4)
        if case == "input_rank":
            x = x[0]
        elif case == "weight_rank":
            w = w[0]
        elif case == "bias_rank":
            b = b[None]
        elif case == "channels":
            w = lib.ones(2, 4, 4)
        else:
            b = lib.ones(3)
        lib.nn.functional.conv_tbc(x, w, b)

    messages = []
    for lib in (T, torch):
        with pytest.raises(RuntimeError) as info:
            run(lib)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("kwargs", [None, {}, {"dtype": "D"}, {"device": "cpu", "dtype": "D"},
                                    {"factory_kwargs": {"device": "cpu"}, "dtype": "D"},
                                    {"memory_format": None}])
def test_factory_kwargs_matches_torch(torch, kwargs):
    def convert(lib, d):
        if d is None:
            return None
        return {k: (lib.float64 if v == "D" else convert(lib, v) if isinstance(v, dict) else v)
                for k, v in d.items()}

    ours = T.nn.factory_kwargs(convert(T, kwargs))
    theirs = torch.nn.factory_kwargs(convert(torch, kwargs))
    assert {k: str(v).split(".")[-1] for k, v in ours.items()} == \
        {k: str(v).split(".")[-1] for k, v in theirs.items()}


@pytest.mark.parametrize("kwargs", [{"layout": 1}, {"dtype": 1, "factory_kwargs": {"dtype": 2}}])
def test_factory_kwargs_errors_match_torch(torch, kwargs):
    messages = []
    for lib in (T, torch):
        with pytest.raises(TypeError) as info:
            lib.nn.factory_kwargs(kwargs)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_common_types_aliases_as_torch(torch):
    from torch.nn import common_types as theirs

    from retrograd.nn import common_types as ours

    names = [n for n in dir(theirs) if n.startswith("_s") or n.startswith("_r")]
    assert names and all(hasattr(ours, n) for n in names)
    assert ours._size_2_t == theirs._size_2_t
