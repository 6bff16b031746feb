"""nn.utils.rnn against PyTorch: packing, padding and unpacking (values, batch sizes,
permutations, gradients), gradcheck through each, PackedSequence as a namedtuple, errors."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as T
from retrograd.autograd import gradcheck, gradgradcheck
from retrograd.nn.utils import rnn

from .helpers import close


def _pair(torch, *shape, seed=0):
    a = np.random.default_rng(seed).standard_normal(shape)
    return T.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _same_ints(a, b):
    if b is None:
        assert a is None
        return
    assert a.dtype == T.int64
    assert a.tolist() == b.tolist()


def _same_packed(p_rg, p_th):
    close(p_rg.data, p_th.data, 1e-12)
    _same_ints(p_rg.batch_sizes, p_th.batch_sizes)
    _same_ints(p_rg.sorted_indices, p_th.sorted_indices)
    _same_ints(p_rg.unsorted_indices, p_th.unsorted_indices)


def _backward_both(torch, out_rg, out_th, inputs):
    w = np.random.default_rng(9).standard_normal(tuple(out_th.shape))
    (out_rg * T.tensor(w)).sum().backward()
    (out_th * torch.tensor(w)).sum().backward()
    for a, b in inputs:
        close(a.grad, b.grad, 1e-12)


PACK_CASES = [  # (lengths, batch_first, enforce_sorted, trailing shape)
    ([4, 3, 1], False, True, (2,)),
    ([4, 4, 2], True, True, ()),
    ([1, 4, 3], False, False, (2, 3)),
    ([2, 4, 2, 3], True, False, (1,)),
    ([3], False, True, (2,)),
]


@pytest.mark.parametrize("lengths_as_tensor", [False, True])
@pytest.mark.parametrize("lengths, batch_first, enforce_sorted, trailing", PACK_CASES)
def test_pack_and_pad_packed_match_torch(torch, lengths, batch_first, enforce_sorted,
                                         trailing, lengths_as_tensor):
    steps, batch = max(lengths), len(lengths)
    shape = ((batch, steps) if batch_first else (steps, batch)) + trailing
    x_rg, x_th = _pair(torch, *shape)
    lens_rg = T.tensor(lengths) if lengths_as_tensor else lengths
    lens_th = torch.tensor(lengths) if lengths_as_tensor else lengths
    p_rg = rnn.pack_padded_sequence(x_rg, lens_rg, batch_first, enforce_sorted)
    p_th = torch.nn.utils.rnn.pack_padded_sequence(x_th, lens_th, batch_first, enforce_sorted)
    _same_packed(p_rg, p_th)
    _backward_both(torch, p_rg.data, p_th.data, [(x_rg, x_th)])
    # and back, from a packed sequence with its own gradient
    d_rg, d_th = _pair(torch, *p_th.data.shape, seed=1)
    for total_length in (None, steps + 2):
        for padding_value in (0.0, -1.5):
            args = (batch_first, padding_value, total_length)
            out_rg, len_rg = rnn.pad_packed_sequence(p_rg._replace(data=d_rg), *args)
            out_th, len_th = torch.nn.utils.rnn.pad_packed_sequence(p_th._replace(data=d_th),
                                                                    *args)
            close(out_rg, out_th, 1e-12)
            _same_ints(len_rg, len_th)
    d_rg.grad = None
    d_th.grad = None
    _backward_both(torch, out_rg, out_th, [(d_rg, d_th)])


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_matches_torch(torch, batch_first, padding_side):
    pairs = [_pair(torch, n, 2, seed=n) for n in (2, 4, 1)]
    out_rg = rnn.pad_sequence([p[0] for p in pairs], batch_first, 0.5, padding_side)
    out_th = torch.nn.utils.rnn.pad_sequence([p[1] for p in pairs], batch_first, 0.5,
                                             padding_side)
    close(out_rg, out_th, 1e-12)
    _backward_both(torch, out_rg, out_th, pairs)


def test_pad_sequence_of_a_tensor_and_of_1d_sequences(torch):
    a = np.arange(6.0).reshape(2, 3)
    close(rnn.pad_sequence(T.tensor(a)), torch.nn.utils.rnn.pad_sequence(torch.tensor(a)), 0)
    seqs = [np.arange(3.0), np.arange(1.0)]
    close(rnn.pad_sequence([T.tensor(s) for s in seqs], batch_first=True),
          torch.nn.utils.rnn.pad_sequence([torch.tensor(s) for s in seqs], batch_first=True), 0)


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_sequence_and_unpack_sequence(torch, enforce_sorted):
    sizes = (4, 3, 1) if enforce_sorted else (2, 4, 3)
    pairs = [_pair(torch, n, 2, seed=n) for n in sizes]
    p_rg = rnn.pack_sequence([p[0] for p in pairs], enforce_sorted)
    p_th = torch.nn.utils.rnn.pack_sequence([p[1] for p in pairs], enforce_sorted)
    _same_packed(p_rg, p_th)
    back = rnn.unpack_sequence(p_rg)
    assert len(back) == len(pairs)
    for got, (orig, _) in zip(back, pairs):
        close(got, orig, 0)
    sum(((s * (i + 1)).sum() for i, s in enumerate(back)), T.tensor(0.0)).backward()
    for i, (orig, _) in enumerate(pairs):
        close(orig.grad, np.full(orig.shape, i + 1.0), 0)


@pytest.mark.parametrize("batch_first", [False, True])
def test_unpad_sequence_matches_torch(torch, batch_first):
    pairs = [_pair(torch, n, 2, seed=n) for n in (2, 4, 1)]
    padded_th = torch.nn.utils.rnn.pad_sequence([p[1] for p in pairs], batch_first)
    padded_rg = rnn.pad_sequence([p[0] for p in pairs], batch_first)
    lengths = torch.tensor([2, 4, 1])
    got = rnn.unpad_sequence(padded_rg, T.tensor([2, 4, 1]), batch_first)
    want = torch.nn.utils.rnn.unpad_sequence(padded_th.detach().clone(), lengths, batch_first)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        close(a, b, 0)
    assert tuple(padded_rg.shape) == tuple(padded_th.shape)  # not transposed in place


def test_gradcheck_through_pack_and_pad():
    x = T.randn(3, 2, 2, dtype=T.float64, requires_grad=True)

    def f(x):
        packed = rnn.pack_padded_sequence(x, [2, 3], enforce_sorted=False)
        return rnn.pad_packed_sequence(packed, batch_first=True, total_length=4)[0]

    def g(a, b):
        return rnn.pad_sequence([a, b], padding_value=2.0, padding_side="left")

    assert gradcheck(f, (x,)) and gradgradcheck(f, (x,))
    a = T.randn(3, 2, dtype=T.float64, requires_grad=True)
    b = T.randn(1, 2, dtype=T.float64, requires_grad=True)
    assert gradcheck(g, (a, b)) and gradgradcheck(g, (a, b))


def test_packed_sequence_is_a_namedtuple():
    p = rnn.pack_sequence([T.tensor([1.0, 2.0, 3.0]), T.tensor([4.0, 5.0])])
    data, batch_sizes, sorted_indices, unsorted_indices = p
    assert p._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    assert data.tolist() == [1.0, 4.0, 2.0, 5.0, 3.0]
    assert batch_sizes.tolist() == [2, 2, 1]
    assert sorted_indices is None and unsorted_indices is None
    assert repr(p).startswith("PackedSequence(data=")
    q = rnn.PackedSequence(p.data, p.batch_sizes, T.tensor([1, 0]))
    assert q.unsorted_indices.tolist() == [1, 0]
    r = rnn.PackedSequence((p.data, p.batch_sizes))
    assert r.batch_sizes is p.batch_sizes
    assert p.double().data.dtype == T.float64
    assert p.to(T.float32) is p
    assert not p.is_cuda
    assert rnn.invert_permutation(T.tensor([2, 0, 1])).tolist() == [1, 2, 0]
    assert rnn.invert_permutation(None) is None


def _raises_like_torch(torch, call, exc):
    with pytest.raises(exc) as th_err:
        call(torch, torch.nn.utils.rnn)
    with pytest.raises(exc) as rg_err:
        call(T, rnn)
    expected = str(th_err.value).replace("torch.", "retrograd.")
    assert str(rg_err.value).startswith(expected), (str(rg_err.value), expected)


ERRORS = [
    ("unsorted", lambda lib, u: u.pack_padded_sequence(lib.zeros(5, 3, 2), [3, 5, 2]),
     RuntimeError),
    ("zero-length", lambda lib, u: u.pack_padded_sequence(lib.zeros(5, 3, 2), [5, 3, 0]),
     RuntimeError),
    ("count", lambda lib, u: u.pack_padded_sequence(lib.zeros(5, 3, 2), [5, 3]),
     RuntimeError),
    ("2d-lengths", lambda lib, u: u.pack_padded_sequence(lib.zeros(5, 3, 2),
                                                         lib.tensor([[5, 3, 1]])),
     RuntimeError),
    ("empty", lambda lib, u: u.pad_sequence([]), RuntimeError),
    ("side", lambda lib, u: u.pad_sequence([lib.zeros(2)], padding_side="middle"),
     RuntimeError),
    ("not-iterable", lambda lib, u: u.pad_sequence(3), RuntimeError),
    ("total-length", lambda lib, u: u.pad_packed_sequence(
        u.pack_sequence([lib.zeros(3), lib.zeros(2)]), total_length=2), ValueError),
]


@pytest.mark.parametrize("name, call, exc", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(torch, name, call, exc):
    _raises_like_torch(torch, call, exc)


def test_errors_torch_does_not_catch():
    # PyTorch reads past the input here (a length above the padded length); retrograd refuses
    with pytest.raises(RuntimeError, match="exceeds the 5 time steps"):
        rnn.pack_padded_sequence(T.zeros(5, 3, 2), [6, 3, 1])
    with pytest.raises(RuntimeError, match="sequence 1 has shape"):
        rnn.pad_sequence([T.zeros(3, 2), T.zeros(2, 3)])


@pytest.mark.parametrize("module", ["retrograd.nn.modules.rnn", "retrograd.nn.utils.rnn"])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module),
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
