"""Bad arguments: every op refuses what PyTorch refuses, with PyTorch's exception class.

One table of calls, each run through ``torch`` and ``retrograd`` alike (``m`` is the module):
where torch raises, retrograd must raise the same class (never a NumPy exception), and its
message must name the op; where torch succeeds, both results must agree.  The table covers
every public function and Tensor method that takes dims or sizes, at the edges: start > end,
dims out of range (on 0-d tensors too), duplicate dims, negative sizes, wrong counts...
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")


def a(m, *shape):  # m: the module under test (torch or retrograd)
    """Distinct float32 values of ``shape``."""
    n = int(np.prod(shape)) if shape else 1
    return m.arange(float(n)).reshape(*shape) if shape else m.tensor(1.5)


def i(m, values):
    return m.tensor(values)


# (id, call, words retrograd's message must contain (lowercase); None: both succeed)
CASES = [
    # ---- flatten / unflatten / reshape / view
    ("flatten start>end", lambda m: a(m, 2, 3, 4).flatten(2, 1), ["flatten"]),
    ("flatten start>end neg", lambda m: a(m, 2, 3, 4).flatten(-1, 0), ["flatten"]),
    ("flatten start=end", lambda m: a(m, 2, 3, 4).flatten(1, 1), None),
    ("flatten dim oob", lambda m: a(m, 2, 3).flatten(0, 2), ["flatten"]),
    ("flatten 0-d ok", lambda m: a(m).flatten(0, -1), None),
    ("flatten 0-d oob", lambda m: a(m).flatten(0, 1), ["flatten"]),
    ("flatten 0-d start oob", lambda m: a(m).flatten(2), ["flatten"]),
    ("flatten fn", lambda m: m.flatten(a(m, 2, 3, 4), 1), None),
    ("unflatten wrong sizes", lambda m: a(m, 2, 6).unflatten(1, (4, 2)), ["unflatten"]),
    ("unflatten -1", lambda m: a(m, 2, 6).unflatten(1, (-1, 2)), None),
    ("unflatten two -1", lambda m: a(m, 2, 6).unflatten(1, (-1, -1)), ["unflatten"]),
    ("unflatten empty sizes", lambda m: a(m, 2, 6).unflatten(1, ()), ["unflatten"]),
    ("unflatten dim oob", lambda m: a(m, 2, 6).unflatten(2, (3, 2)), ["unflatten"]),
    ("unflatten 0-d", lambda m: a(m).unflatten(0, (1,)), ["unflatten"]),
    ("reshape negative", lambda m: a(m, 2, 3).reshape(-2, 3), ["reshape", "-2"]),
    ("reshape two -1", lambda m: a(m, 2, 3).reshape(-1, -1), ["reshape"]),
    ("reshape wrong numel", lambda m: a(m, 2, 3).reshape(4, 2), ["reshape", "[4, 2]"]),
    ("reshape -1 with 0", lambda m: a(m, 2, 3).reshape(0, -1), ["reshape"]),
    ("reshape empty -1", lambda m: a(m, 0, 3).reshape(-1, 0), ["reshape"]),
    ("reshape ok", lambda m: a(m, 2, 3).reshape((3, -1)), None),
    ("view negative", lambda m: a(m, 2, 3).view(3, -3), ["view", "-3"]),
    ("view wrong numel", lambda m: a(m, 2, 3).view(5), ["view"]),
    ("view_as wrong numel", lambda m: a(m, 2, 3).view_as(a(m, 5)), ["view"]),
    ("reshape_as wrong numel", lambda m: a(m, 2, 3).reshape_as(a(m, 5)), ["reshape"]),
    # ---- transpose / permute / movedim
    ("transpose oob", lambda m: a(m, 2, 3).transpose(0, 2), ["transpose"]),
    ("transpose neg oob", lambda m: a(m, 2, 3).transpose(-3, 0), ["transpose"]),
    ("transpose 0-d ok", lambda m: a(m).transpose(0, -1), None),
    ("transpose 0-d oob", lambda m: a(m).transpose(0, 1), ["transpose"]),
    ("swapaxes oob", lambda m: a(m, 2, 3).swapaxes(0, 5), ["swapaxes"]),
    ("swapdims oob", lambda m: a(m, 2, 3).swapdims(0, 5), ["swapaxes"]),
    ("t 3-d", lambda m: a(m, 2, 3, 4).t(), ["t()"]),
    ("permute duplicate", lambda m: a(m, 2, 3).permute(0, 0), ["permute", "duplicate"]),
    ("permute duplicate neg", lambda m: a(m, 2, 3).permute(1, -1), ["permute"]),
    ("permute too few", lambda m: a(m, 2, 3, 4).permute(1, 0), ["permute"]),
    ("permute too many", lambda m: a(m, 2, 3).permute(1, 0, 2), ["permute"]),
    ("permute oob", lambda m: a(m, 2, 3).permute(0, 2), ["permute"]),
    ("permute 0-d ok", lambda m: a(m).permute(()), None),
    ("permute fn tuple", lambda m: m.permute(a(m, 2, 3, 4), (2, 0, 1)), None),
    ("movedim length mismatch", lambda m: a(m, 2, 3, 4).movedim((0, 1), (2,)), ["movedim"]),
    ("movedim duplicate source", lambda m: a(m, 2, 3, 4).movedim((0, 0), (1, 2)), ["movedim"]),
    ("movedim duplicate dest", lambda m: a(m, 2, 3, 4).movedim((0, 1), (2, 2)), ["movedim"]),
    ("movedim oob", lambda m: a(m, 2, 3, 4).movedim(3, 0), ["movedim"]),
    ("movedim ok", lambda m: a(m, 2, 3, 4).movedim((0, 2), (-1, 0)), None),
    ("moveaxis oob", lambda m: a(m, 2, 3).moveaxis(0, -3), ["movedim"]),
    # ---- squeeze / unsqueeze
    ("squeeze oob", lambda m: a(m, 2, 1).squeeze(2), ["squeeze"]),
    ("squeeze tuple oob", lambda m: a(m, 2, 1).squeeze((1, 2)), ["squeeze"]),
    ("squeeze 0-d ok", lambda m: a(m).squeeze(0), None),
    ("squeeze 0-d oob", lambda m: a(m).squeeze(1), ["squeeze"]),
    ("unsqueeze oob", lambda m: a(m, 2).unsqueeze(2), ["unsqueeze"]),
    ("unsqueeze neg oob", lambda m: a(m, 2).unsqueeze(-3), ["unsqueeze"]),
    ("unsqueeze 0-d ok", lambda m: a(m).unsqueeze(-1), None),
    # ---- expand / broadcast_to / repeat / tile / sum_to_size
    ("expand too few", lambda m: a(m, 2, 3).expand(3), ["expand"]),
    ("expand mismatch", lambda m: a(m, 2, 3).expand(2, 4), ["expand"]),
    ("expand negative new dim", lambda m: a(m, 3).expand(-1, 3), ["expand"]),
    ("expand negative", lambda m: a(m, 1).expand(-2), ["expand"]),
    ("expand ok", lambda m: a(m, 1, 3).expand(2, -1, 3), None),
    ("expand_as mismatch", lambda m: a(m, 2, 3).expand_as(a(m, 3, 2)), ["expand"]),
    ("broadcast_to mismatch", lambda m: m.broadcast_to(a(m, 2, 3), (3, 3)), ["expand"]),
    ("repeat negative", lambda m: a(m, 2).repeat(-1, 2), ["repeat"]),
    ("repeat too few", lambda m: a(m, 2, 3).repeat(2), ["repeat"]),
    ("repeat zero ok", lambda m: a(m, 2).repeat(0, 2), None),
    ("tile negative", lambda m: a(m, 2).tile((-1,)), ["repeat"]),
    ("sum_to_size bad", lambda m: a(m, 2, 3).sum_to_size(2), ["sum_to_size"]),
    ("sum_to_size ok", lambda m: a(m, 2, 3).sum_to_size(1, 3), None),
    # ---- creation sizes
    ("zeros negative", lambda m: m.zeros(2, -1), ["zeros", "-1"]),
    ("ones negative", lambda m: m.ones(-3), ["ones", "-3"]),
    ("empty negative", lambda m: m.empty((2, -2)), ["empty", "-2"]),
    ("full negative", lambda m: m.full((-1,), 2.0), ["full", "-1"]),
    ("rand negative", lambda m: m.rand(-1), ["rand", "-1"]),
    ("randn negative", lambda m: m.randn(2, -5), ["randn", "-5"]),
    ("normal negative size", lambda m: m.normal(0.0, 1.0, (2, -1)), ["normal", "-1"]),
    ("normal int size", lambda m: m.normal(0.0, 1.0, 3), ["normal"]),
    ("randint negative", lambda m: m.randint(0, 3, (-1,)), ["randint", "-1"]),
    ("eye negative", lambda m: m.eye(-1), ["eye", "-1"]),
    ("eye negative m", lambda m: m.eye(2, -1), ["eye", "-1"]),
    ("new_zeros negative", lambda m: a(m, 2).new_zeros(-1), ["new_zeros", "-1"]),
    ("zeros ok empty", lambda m: m.zeros(0, 3), None),
    ("arange step 0", lambda m: m.arange(0, 3, 0), ["arange"]),
    ("arange wrong sign", lambda m: m.arange(0, 3, -1), ["arange"]),
    ("linspace negative steps", lambda m: m.linspace(0, 1, -1), ["linspace"]),
    # ---- narrow / split / chunk / unbind
    ("narrow beyond end", lambda m: a(m, 5).narrow(0, 3, 3), ["narrow"]),
    ("narrow negative length", lambda m: a(m, 5).narrow(0, 1, -1), ["narrow"]),
    ("narrow start oob", lambda m: a(m, 5).narrow(0, 6, 0), ["narrow"]),
    ("narrow start neg oob", lambda m: a(m, 5).narrow(0, -6, 1), ["narrow"]),
    ("narrow start = size", lambda m: a(m, 5).narrow(0, 5, 0), None),
    ("select dim oob", lambda m: a(m, 2, 3).select(2, 0), ["select"]),
    ("select index oob", lambda m: a(m, 2, 3).select(1, 3), ["select", "3"]),
    ("select index neg oob", lambda m: a(m, 2, 3).select(1, -4), ["select"]),
    ("select 0-d", lambda m: m.tensor(1.0).select(0, 0), ["select"]),
    ("select negative ok", lambda m: a(m, 2, 3).select(-1, -1), None),
    ("polygamma negative n", lambda m: m.polygamma(-1, a(m, 3)), ["polygamma", "negative"]),
    ("polygamma float n", lambda m: m.polygamma(1.5, a(m, 3)), ["polygamma"]),
    ("polygamma method negative n", lambda m: a(m, 3).polygamma(-2), ["polygamma"]),
    ("polygamma n=0 ok", lambda m: m.polygamma(0, a(m, 3) + 1), None),
    ("narrow neg start ok", lambda m: a(m, 5).narrow(0, -2, 2), None),
    ("narrow dim oob", lambda m: a(m, 5).narrow(1, 0, 1), ["narrow"]),
    ("narrow 0-d", lambda m: a(m).narrow(0, 0, 1), ["narrow"]),
    ("split negative", lambda m: a(m, 5).split(-1), ["split"]),
    ("split zero", lambda m: a(m, 5).split(0), ["split"]),
    ("split sizes wrong sum", lambda m: a(m, 5).split([2, 2]), ["split", "5"]),
    ("split sizes negative", lambda m: a(m, 5).split([6, -1]), ["split"]),
    ("split dim oob", lambda m: a(m, 5).split(2, 1), ["split"]),
    ("split 0-d", lambda m: a(m).split(1), ["split"]),
    ("split ok", lambda m: a(m, 5).split([2, 3]), None),
    ("chunk 0", lambda m: a(m, 5).chunk(0), ["chunk"]),
    ("chunk negative", lambda m: a(m, 5).chunk(-2), ["chunk"]),
    ("chunk dim oob", lambda m: a(m, 5).chunk(2, 1), ["chunk"]),
    ("chunk 0-d", lambda m: a(m).chunk(1), ["chunk"]),
    ("chunk ok", lambda m: a(m, 5).chunk(3), None),
    ("unbind oob", lambda m: a(m, 2, 3).unbind(2), ["unbind"]),
    ("unbind 0-d", lambda m: a(m).unbind(0), ["unbind"]),
    # ---- cat / stack
    ("cat dim oob", lambda m: m.cat([a(m, 2), a(m, 2)], 1), ["cat"]),
    ("cat rank mismatch", lambda m: m.cat([a(m, 2, 2), a(m, 2)]), ["cat"]),
    ("cat size mismatch", lambda m: m.cat([a(m, 2, 2), a(m, 2, 3)]), ["cat"]),
    ("cat 0-d", lambda m: m.cat([a(m), a(m)]), ["cat"]),
    ("cat empty list", lambda m: m.cat([]), ["cat"]),
    ("concat dim oob", lambda m: m.concat([a(m, 2), a(m, 2)], -2), ["cat"]),
    ("concatenate ok", lambda m: m.concatenate([a(m, 2), a(m, 2)], -1), None),
    ("stack dim oob", lambda m: m.stack([a(m, 2), a(m, 2)], 2), ["stack"]),
    ("stack shape mismatch", lambda m: m.stack([a(m, 2), a(m, 3)]), ["stack"]),
    ("stack empty", lambda m: m.stack([]), ["stack"]),
    ("stack 0-d ok", lambda m: m.stack([a(m), a(m)], -1), None),
    # ---- flip / roll / triangles / diagonals
    ("flip duplicate", lambda m: a(m, 2, 3).flip(0, 0), ["flip"]),
    ("flip oob", lambda m: a(m, 2, 3).flip(2), ["flip"]),
    ("roll oob", lambda m: a(m, 2, 3).roll(1, 2), ["roll"]),
    ("roll mismatch", lambda m: a(m, 2, 3).roll((1, 2), (0,)), ["roll"]),
    ("tril 1-d", lambda m: a(m, 3).tril(), ["tril"]),
    ("triu 0-d", lambda m: a(m).triu(), ["triu"]),
    ("diagonal equal dims", lambda m: a(m, 3, 3).diagonal(0, 1, 1), ["diagonal"]),
    ("diagonal equal dims neg", lambda m: a(m, 3, 3).diagonal(0, 1, -1), ["diagonal"]),
    ("diagonal oob", lambda m: a(m, 3, 3).diagonal(0, 0, 2), ["diagonal"]),
    ("diagonal 1-d", lambda m: a(m, 3).diagonal(), ["diagonal"]),
    ("diagonal big offset ok", lambda m: a(m, 3, 3).diagonal(5), None),
    ("diag_embed equal dims", lambda m: m.diag_embed(a(m, 3), 0, 0, 0), ["diag_embed"]),
    ("diag 3-d", lambda m: m.diag(a(m, 2, 2, 2)), ["diag"]),
    ("trace 1-d", lambda m: m.trace(a(m, 3)), ["trace"]),
    # ---- reductions
    ("sum dim oob", lambda m: a(m, 2, 3).sum(2), ["sum"]),
    ("sum dim neg oob", lambda m: a(m, 2, 3).sum(-3), ["sum"]),
    ("sum duplicate dims", lambda m: a(m, 2, 3).sum((0, 0)), ["sum"]),
    ("sum duplicate dims neg", lambda m: a(m, 2, 3).sum((1, -1)), ["sum"]),
    ("sum 0-d dim 0 ok", lambda m: a(m).sum(0), None),
    ("sum 0-d dim -1 ok", lambda m: a(m).sum(-1), None),
    ("sum 0-d oob", lambda m: a(m).sum(1), ["sum"]),
    ("mean duplicate dims", lambda m: a(m, 2, 3).mean((0, 0)), ["mean"]),
    ("mean dim oob", lambda m: a(m, 2, 3).mean(5), ["mean"]),
    ("prod dim oob", lambda m: a(m, 2, 3).prod(2), ["prod"]),
    ("max dim oob", lambda m: a(m, 2, 3).max(2), ["max"]),
    ("max 0-d ok", lambda m: a(m).max(0), None),
    ("min dim oob", lambda m: a(m, 2, 3).min(-3), ["min"]),
    ("max empty dim", lambda m: a(m, 0, 3).max(0), ["max"]),
    ("max empty", lambda m: a(m, 0).max(), ["max"]),
    ("argmax dim oob", lambda m: a(m, 2, 3).argmax(2), ["argmax"]),
    ("argmin empty", lambda m: a(m, 0).argmin(), ["argmin"]),
    ("amax duplicate", lambda m: a(m, 2, 3).amax((0, 0)), ["amax"]),
    ("amax oob", lambda m: a(m, 2, 3).amax(2), ["amax"]),
    ("amin oob", lambda m: a(m, 2, 3).amin(-3), ["amin"]),
    ("all oob", lambda m: a(m, 2, 3).all(2), ["all"]),
    ("any oob", lambda m: a(m, 2, 3).any(2), ["any"]),
    ("var oob", lambda m: a(m, 2, 3).var(2), ["var"]),
    ("var duplicate", lambda m: a(m, 2, 3).var((1, 1)), ["var"]),
    ("std oob", lambda m: a(m, 2, 3).std(-3), ["std"]),
    ("logsumexp oob", lambda m: a(m, 2, 3).logsumexp(2), ["logsumexp"]),
    ("logsumexp duplicate", lambda m: a(m, 2, 3).logsumexp((0, 0)), ["logsumexp"]),
    ("norm oob", lambda m: a(m, 2, 3).norm(dim=2), ["norm"]),
    ("cumsum oob", lambda m: a(m, 2, 3).cumsum(2), ["cumsum"]),
    ("cumsum 0-d ok", lambda m: a(m).cumsum(0), None),
    ("softmax oob", lambda m: a(m, 2, 3).softmax(2), ["softmax"]),
    ("log_softmax oob", lambda m: a(m, 2, 3).log_softmax(-3), ["log_softmax"]),
    ("softmax 0-d ok", lambda m: a(m).softmax(0), None),
    # ---- sorting
    ("sort oob", lambda m: a(m, 2, 3).sort(2), ["sort"]),
    ("argsort oob", lambda m: a(m, 2, 3).argsort(-3), ["argsort"]),
    ("sort 0-d oob", lambda m: a(m).sort(1), ["sort"]),
    ("topk too big", lambda m: a(m, 3).topk(4), ["topk"]),
    ("topk negative", lambda m: a(m, 3).topk(-1), ["topk"]),
    ("topk oob", lambda m: a(m, 3).topk(1, 1), ["topk"]),
    ("kthvalue 0", lambda m: a(m, 3).kthvalue(0), ["kthvalue"]),
    ("kthvalue oob", lambda m: a(m, 3).kthvalue(1, 1), ["kthvalue"]),
    # ---- indexing
    ("getitem int oob", lambda m: a(m, 2, 3)[2], ["index"]),
    ("getitem neg oob", lambda m: a(m, 2, 3)[:, -4], ["index"]),
    ("getitem too many", lambda m: a(m, 2, 3)[0, 0, 0], ["index"]),
    ("getitem 0-d int", lambda m: a(m)[0], ["index"]),
    ("getitem tensor oob", lambda m: a(m, 2, 3)[i(m, [0, 2])], ["index"]),
    ("getitem mask shape", lambda m: a(m, 2, 3)[i(m, [True, False, True])], ["index"]),
    ("getitem float index", lambda m: a(m, 2, 3)[i(m, [0.0])], ["index"]),
    ("setitem oob", lambda m: a(m, 2, 3).__setitem__(2, 1.0), ["index"]),
    ("index_select oob", lambda m: a(m, 2, 3).index_select(1, i(m, [3])), ["index_select"]),
    ("index_select neg", lambda m: a(m, 2, 3).index_select(1, i(m, [-1])), ["index_select"]),
    ("index_select dim oob", lambda m: a(m, 2, 3).index_select(2, i(m, [0])),
     ["index_select"]),
    ("index_select 2-d index", lambda m: a(m, 2, 3).index_select(1, i(m, [[0]])),
     ["index_select"]),
    ("index_select float index", lambda m: a(m, 2, 3).index_select(1, i(m, [0.0])),
     ["index_select"]),
    ("gather uint8 index", lambda m: a(m, 3).gather(0, i(m, [1]).to(m.uint8)), ["gather"]),
    ("gather int16 index", lambda m: a(m, 3).gather(0, i(m, [1]).to(m.int16)), ["gather"]),
    ("gather 0-d index", lambda m: a(m, 3).gather(0, i(m, 1)), None),
    ("gather 0-d index 2-d", lambda m: a(m, 2, 3).gather(0, i(m, 1)), ["dimensions"]),
    ("index_select int16 index", lambda m: a(m, 2, 3).index_select(0, i(m, [1]).to(m.int16)),
     ["index_select", "int32"]),
    ("index_select 0-d two", lambda m: a(m).index_select(0, i(m, [0, 0])),
     ["index_select", "2"]),
    ("select float index", lambda m: a(m, 2, 3).select(1, 2.0), ["select", "index"]),
    # ---- scatter / index_* / take / put / *_scatter (ops/scatter.py)
    ("scatter oob", lambda m: a(m, 2, 3).scatter(1, i(m, [[3]]), a(m, 1, 1)),
     ["index 3", "dimension 1", "size 3"]),
    ("scatter negative", lambda m: a(m, 2, 3).scatter(0, i(m, [[-1]]), 1.0), ["index -1"]),
    ("scatter dim oob", lambda m: a(m, 2, 3).scatter(2, i(m, [[0]]), 1.0), ["dim"]),
    ("scatter float index", lambda m: a(m, 2, 3).scatter(1, i(m, [[0.0]]), 1.0),
     ["scatter", "index"]),
    ("scatter dtypes", lambda m: a(m, 2, 3).scatter(1, i(m, [[0]]), i(m, [[1]])),
     ["scatter", "dtype"]),
    ("scatter index ndim", lambda m: a(m, 2, 3).scatter(1, i(m, [0]), 1.0), ["dimensions"]),
    ("scatter index too big", lambda m: a(m, 2, 3).scatter_add(1, i(m, [[0], [1], [0]]),
                                                               a(m, 3, 1)), ["[3, 1]"]),
    ("scatter reduce bad", lambda m: a(m, 2, 3).scatter(1, i(m, [[0]]), a(m, 1, 1),
                                                        reduce="max"), ["add", "multiply"]),
    ("scatter_add oob", lambda m: m.scatter_add(a(m, 2, 3), 0, i(m, [[2]]), a(m, 1, 1)),
     ["index 2", "size 2"]),
    ("scatter_reduce bad", lambda m: a(m, 2, 3).scatter_reduce(0, i(m, [[0]]), a(m, 1, 1),
                                                               "foo"), ["foo"]),
    ("scatter_reduce dtypes", lambda m: a(m, 2, 3).scatter_reduce(
        0, i(m, [[0]]), a(m, 1, 1).double(), "sum"), ["dtype"]),
    ("scatter_reduce 0-d", lambda m: a(m).scatter_reduce(0, i(m, [0, 0]), a(m, 2), "amax"),
     None),
    ("scatter empty index", lambda m: a(m, 2, 3).scatter_add(0, i(m, [[]]).long(), a(m, 1, 0)),
     None),
    ("index_add oob", lambda m: a(m, 2, 3).index_add(1, i(m, [3]), a(m, 2, 1)),
     ["index 3", "size 3"]),
    ("index_add negative", lambda m: a(m, 2, 3).index_add(1, i(m, [-1]), a(m, 2, 1)),
     ["index -1"]),
    ("index_add source size", lambda m: a(m, 2, 3).index_add(1, i(m, [0, 1]), a(m, 2, 1)),
     ["index_add", "(2)"]),
    ("index_add dtypes", lambda m: a(m, 2, 3).index_add(1, i(m, [0]), a(m, 2, 1).double()),
     ["index_add", "double", "float"]),
    ("index_add 2-d index", lambda m: a(m, 2, 3).index_add(1, i(m, [[0]]), a(m, 2, 1)),
     ["vector"]),
    ("index_add float index", lambda m: a(m, 2, 3).index_add(1, i(m, [0.0]), a(m, 2, 1)),
     ["index_add", "float"]),
    ("index_add dim oob", lambda m: a(m, 2, 3).index_add(2, i(m, [0]), a(m, 2, 1)), ["dim"]),
    ("index_add 0-d", lambda m: a(m).index_add(0, i(m, [0]), a(m)), None),
    ("index_add 0-d twice", lambda m: a(m).index_add(0, i(m, [0, 0]), a(m)), ["dimension"]),
    ("index_add 0-d 1-d source", lambda m: a(m).index_add(0, i(m, [0]), a(m, 1)), ["shape"]),
    ("index_add 0-d 2 sources", lambda m: a(m).index_add(0, i(m, [0]), a(m, 2)),
     ["number of indices"]),
    ("index_add 0-d oob", lambda m: a(m).index_add(0, i(m, [1]), a(m)), ["index"]),
    ("index_add 0-d index", lambda m: a(m, 2, 3).index_add(1, i(m, 0), a(m, 2, 1)), None),
    ("index_copy oob", lambda m: a(m, 2, 3).index_copy(0, i(m, [2]), a(m, 1, 3)),
     ["index_copy", "index 2", "size 2"]),
    ("index_copy int32 index", lambda m: a(m, 2, 3).index_copy(0, i(m, [0]).int(), a(m, 1, 3)),
     ["index_copy", "long"]),
    ("index_copy source size", lambda m: a(m, 2, 3).index_copy(0, i(m, [0]), a(m, 2, 3)),
     ["index_copy"]),
    ("index_copy 0-d", lambda m: a(m).index_copy(0, i(m, [0]), a(m)), None),
    ("index_fill oob", lambda m: a(m, 2, 3).index_fill(1, i(m, [3]), 0.0), ["index 3"]),
    ("index_fill negative ok", lambda m: a(m, 2, 3).index_fill(1, i(m, [-3]), 0.0), None),
    ("index_fill int32 index", lambda m: a(m, 2, 3).index_fill(1, i(m, [0]).int(), 0.0),
     ["index_fill", "int64"]),
    ("index_fill 1-d value", lambda m: a(m, 2, 3).index_fill(1, i(m, [0]), a(m, 2)),
     ["index_fill"]),
    ("index_fill dim oob", lambda m: a(m, 2, 3).index_fill(-3, i(m, [0]), 0.0), ["dim"]),
    ("index_reduce bad", lambda m: a(m, 2, 3).index_reduce(1, i(m, [0]), a(m, 2, 1), "sum"),
     ["index_reduce", "sum"]),
    ("index_reduce oob", lambda m: a(m, 2, 3).index_reduce(1, i(m, [5]), a(m, 2, 1), "amax"),
     ["index 5"]),
    ("index_reduce dtypes", lambda m: a(m, 2, 3).index_reduce(1, i(m, [0]), a(m, 2, 1).double(),
                                                              "mean"), ["index_reduce"]),
    ("index_reduce dim oob", lambda m: a(m, 2, 3).index_reduce(3, i(m, [0]), a(m, 2, 1), "prod"),
     ["dim"]),
    ("index_put oob", lambda m: a(m, 2, 3).index_put((i(m, [2]),), a(m)), ["index 2", "size 2"]),
    ("index_put float index", lambda m: a(m, 2, 3).index_put((i(m, [0.0]),), a(m)),
     ["indices"]),
    ("index_put dtypes", lambda m: a(m, 2, 3).index_put((i(m, [0]),), a(m).double()),
     ["index put", "dtype"]),
    ("index_put shape", lambda m: a(m, 2, 3).index_put((i(m, [0, 1]),), a(m, 2)),
     ["shape mismatch", "[2]", "[2, 3]"]),
    ("take oob", lambda m: a(m, 2, 3).take(i(m, [6])), ["index 6", "6 elements"]),
    ("take negative oob", lambda m: m.take(a(m, 2, 3), i(m, [-7])), ["index -7"]),
    ("take int32 index", lambda m: a(m, 2, 3).take(i(m, [0]).int()), ["take", "long"]),
    ("put oob", lambda m: a(m, 2, 3).put(i(m, [6]), a(m, 1)), ["index 6"]),
    ("put numel", lambda m: a(m, 2, 3).put(i(m, [0, 1]), a(m, 3)), ["put_", "numel"]),
    ("put dtypes", lambda m: a(m, 2, 3).put(i(m, [0]), a(m, 1).double()), ["put_", "dtype"]),
    ("take_along_dim ndim", lambda m: a(m, 2, 3).take_along_dim(i(m, [0]), 1),
     ["take_along_dim", "dimensions"]),
    ("take_along_dim float", lambda m: a(m, 2, 3).take_along_dim(i(m, [[0.0]]), 1),
     ["take_along_dim", "long"]),
    ("take_along_dim 0-d", lambda m: a(m).take_along_dim(i(m, 0), 0), ["dimension"]),
    ("take_along_dim 0-d flat", lambda m: a(m).take_along_dim(i(m, [0, 0])), None),
    ("take_along_dim dim oob", lambda m: a(m, 2, 3).take_along_dim(i(m, [[0]]), 2), ["dim"]),
    ("masked_scatter int mask", lambda m: a(m, 2, 3).masked_scatter(i(m, [1, 0, 1]), a(m, 4)),
     ["masked_scatter", "bool"]),
    ("masked_scatter short source", lambda m: a(m, 2, 3).masked_scatter(
        i(m, [True, False, True]), a(m, 3)), ["number of elements"]),
    ("masked_scatter dtypes", lambda m: a(m, 2, 3).masked_scatter(
        i(m, [True, False, True]), a(m, 4).double()), ["masked_scatter", "dtype"]),
    ("diagonal_scatter size", lambda m: a(m, 2, 3).diagonal_scatter(a(m, 3)), ["src", "[3]"]),
    ("diagonal_scatter same dims", lambda m: a(m, 2, 3).diagonal_scatter(a(m, 2), 0, 1, 1),
     ["diagonal"]),
    ("diagonal_scatter dim oob", lambda m: m.diagonal_scatter(a(m, 2, 3), a(m, 2), 0, 0, 2),
     ["dim"]),
    ("select_scatter size", lambda m: a(m, 2, 3).select_scatter(a(m, 2), 0, 0), ["src", "[2]"]),
    ("select_scatter oob", lambda m: a(m, 2, 3).select_scatter(a(m, 3), 0, 2), ["select", "2"]),
    ("select_scatter dim oob", lambda m: a(m, 2, 3).select_scatter(a(m, 3), 2, 0), ["dim"]),
    ("slice_scatter size", lambda m: a(m, 2, 3).slice_scatter(a(m, 2, 3), 1, 0, 2),
     ["src", "[2, 2]"]),
    ("slice_scatter dim oob", lambda m: m.slice_scatter(a(m, 2, 3), a(m, 2, 3), 2), ["dim"]),
    ("gather oob", lambda m: a(m, 2, 3).gather(1, i(m, [[3]])), ["gather"]),
    ("gather negative", lambda m: a(m, 2, 3).gather(1, i(m, [[-1]])), ["gather"]),
    ("gather dim oob", lambda m: a(m, 2, 3).gather(2, i(m, [[0]])), ["gather"]),
    ("gather rank", lambda m: a(m, 2, 3).gather(1, i(m, [0])), ["gather"]),
    ("masked_select bad shape", lambda m: a(m, 2, 3).masked_select(i(m, [True, False])),
     ["masked_select"]),
    ("masked_select int mask", lambda m: a(m, 2, 3).masked_select(i(m, [1, 0, 1])),
     ["masked_select"]),
    # ---- size() / stride()
    ("size oob", lambda m: a(m, 2, 3).size(2), ["dimension"]),
    ("size 0-d", lambda m: a(m).size(0), ["dimension"]),
    ("stride oob", lambda m: a(m, 2, 3).stride(-3), ["dimension"]),
    # ---- products
    ("matmul inner", lambda m: m.matmul(a(m, 2, 3), a(m, 2, 3)), ["matmul"]),
    ("matmul 0-d", lambda m: m.matmul(a(m), a(m, 3)), ["matmul"]),
    ("mm 3-d ok", lambda m: m.mm(a(m, 2, 3), a(m, 3, 2)), None),
    ("bmm 2-d", lambda m: m.bmm(a(m, 2, 3), a(m, 3, 2)), ["bmm"]),
    ("bmm batch", lambda m: m.bmm(a(m, 2, 2, 3), a(m, 3, 3, 2)), ["bmm"]),
    ("bmm inner", lambda m: m.bmm(a(m, 2, 2, 3), a(m, 2, 2, 2)), ["bmm"]),
    ("addmm 1-d", lambda m: m.addmm(a(m, 2), a(m, 2), a(m, 2)), ["addmm"]),
    ("addmm bias", lambda m: m.addmm(a(m, 3), a(m, 2, 3), a(m, 3, 2)), ["addmm"]),
    ("addmm numbers", lambda m: a(m, 2, 2).addmm(0, 5), ["addmm", "mat1"]),
    ("outer 2-d", lambda m: m.outer(a(m, 2, 2), a(m, 2)), ["outer"]),
    ("einsum operand count", lambda m: m.einsum("ij,jk->ik", a(m, 2, 3)), ["einsum"]),
    ("einsum rank", lambda m: m.einsum("ijk->i", a(m, 2, 3)), ["einsum"]),
    ("einsum bad output", lambda m: m.einsum("ij->k", a(m, 2, 3)), ["einsum"]),
    ("diag_embed oob", lambda m: m.diag_embed(a(m, 3), 0, 0, 2), ["diag_embed"]),
    ("trace 3-d", lambda m: m.trace(a(m, 2, 2, 2)), ["trace"]),
    # ---- losses
    ("cross_entropy target batch",
     lambda m: m.nn.functional.cross_entropy(a(m, 2, 3), i(m, [0, 1, 2])), ["batch"]),
    ("nll_loss target oob", lambda m: m.nn.functional.nll_loss(a(m, 2, 3), i(m, [0, 3])),
     ["nll_loss"]),
    ("cross_entropy float target shape",
     lambda m: m.nn.functional.cross_entropy(a(m, 2, 3), a(m, 2, 2)), ["cross_entropy"]),
    ("mse_loss broadcast", lambda m: m.nn.functional.mse_loss(a(m, 2, 3), a(m, 3, 3)),
     ["mse_loss"]),
    # ---- more creation
    ("full_like ok", lambda m: m.full_like(a(m, 2), 3.0), None),
    ("new_ones negative", lambda m: a(m, 2).new_ones((2, -1)), ["new_ones", "-1"]),
    ("new_full negative", lambda m: a(m, 2).new_full((-1,), 1.0), ["new_full", "-1"]),
    ("new_empty negative", lambda m: a(m, 2).new_empty(-4), ["new_empty", "-4"]),
    ("randint high<=low", lambda m: m.randint(3, 3, (2,)), ["randint"]),
    # ---- 0-d tensors, empty tuples of dims, empty inputs
    ("squeeze duplicate", lambda m: a(m, 1, 2).squeeze((0, 0)), ["squeeze", "multiple"]),
    ("squeeze duplicate neg", lambda m: a(m, 1, 2).squeeze((0, -2)), ["squeeze"]),
    ("roll duplicate ok", lambda m: a(m, 2, 3).roll((1, 1), (0, 0)), None),
    ("roll 0-d", lambda m: a(m).roll(1, 0), ["roll"]),
    ("roll 0-d no dims ok", lambda m: a(m).roll(1), None),
    ("flip 0-d ok", lambda m: a(m).flip(0), None),
    ("expand 0-d ok", lambda m: a(m).expand(2, 3), None),
    ("view 0-d -1 ok", lambda m: a(m).view(-1), None),
    ("reshape () ok", lambda m: a(m, 1).reshape(()), None),
    ("reshape () bad", lambda m: a(m, 2).reshape(()), ["reshape"]),
    ("index_select 0-d ok", lambda m: a(m).index_select(0, i(m, [0])), None),
    ("index_select 0-d oob", lambda m: a(m).index_select(0, i(m, [1])), ["index_select"]),
    ("gather 0-d ok", lambda m: a(m).gather(0, i(m, [0, 0])), None),
    ("gather 0-d oob", lambda m: a(m).gather(0, i(m, [1])), ["gather"]),
    ("movedim 0-d ok", lambda m: a(m).movedim(0, -1), None),
    ("diagonal 0-d", lambda m: a(m).diagonal(), ["diagonal"]),
    ("tril 0-d", lambda m: a(m).tril(), ["tril"]),
    ("tile 0-d ok", lambda m: a(m).tile((2,)), None),
    ("repeat 0-d ok", lambda m: a(m).repeat(2), None),
    ("size -1 on 0-d", lambda m: a(m).size(-1), ["dimension"]),
    ("mT 1-d", lambda m: a(m, 3).mT, ["mt", "1-d"]),
    ("t 1-d ok", lambda m: a(m, 3).t(), None),
    ("sum dims () means all", lambda m: a(m, 2, 3).sum(()), None),
    ("mean dims () means all", lambda m: a(m, 2, 3).mean(()), None),
    ("var dims () means all", lambda m: a(m, 2, 3).var(()), None),
    ("amax empty dim", lambda m: a(m, 0, 3).amax(0), ["amax", "non-zero"]),
    ("amin empty all", lambda m: a(m, 0, 3).amin(), ["amin"]),
    ("amax empty other dim ok", lambda m: a(m, 0, 3).amax(1), None),
    ("max empty dim", lambda m: a(m, 0, 3).max(0), ["max"]),
    ("argmax empty dim", lambda m: a(m, 0, 3).argmax(0), ["argmax"]),
    ("logsumexp dims ()", lambda m: a(m, 2, 3).logsumexp(()), ["logsumexp"]),
    # ---- indexing by slices
    ("slice step 0", lambda m: a(m, 2, 3)[::0], ["zero"]),
    ("slice negative step", lambda m: a(m, 2, 3)[:, ::-1], ["step"]),
    ("slice step 2 ok", lambda m: a(m, 2, 3)[:, ::2], None),
    # ---- dims and sizes that are not ints
    ("reshape float size", lambda m: a(m, 2, 3).reshape((2.0, 3)), ["reshape", "float"]),
    ("view float size", lambda m: a(m, 2, 3).view(6.0), ["view"]),
    ("expand float size", lambda m: a(m, 1).expand(2.0), ["expand"]),
    ("repeat float", lambda m: a(m, 5).repeat(2.0), ["repeat"]),
    ("permute float dims", lambda m: a(m, 2, 3).permute((1.0, 0)), ["permute"]),
    ("sum float dim", lambda m: a(m, 2, 3).sum(1.0), ["sum"]),
    ("transpose float dim", lambda m: a(m, 2, 3).transpose(1.0, 0), ["transpose", "float"]),
    ("unsqueeze float dim", lambda m: a(m, 2, 3).unsqueeze(1.0), ["unsqueeze"]),
    ("softmax float dim", lambda m: a(m, 2, 3).softmax(1.0), ["softmax"]),
    ("flatten float dim", lambda m: a(m, 2, 3).flatten(0.0), ["flatten"]),
    ("narrow float start", lambda m: a(m, 5).narrow(0, 1.0, 2), ["narrow"]),
    ("topk float k", lambda m: a(m, 5).topk(2.0), ["topk"]),
    ("chunk float", lambda m: a(m, 5).chunk(2.0), ["chunk"]),
    ("split float", lambda m: a(m, 5).split(2.0), ["split"]),
    ("max tuple dim", lambda m: a(m, 2, 3).max((0, 1)), ["max", "tuple"]),
    ("argmax tuple dim", lambda m: a(m, 2, 3).argmax((0,)), ["argmax", "tuple"]),
    ("cumsum tuple dim", lambda m: a(m, 2, 3).cumsum((0,)), ["cumsum", "tuple"]),
    ("sum tensor dim ok", lambda m: a(m, 2, 3).sum(i(m, 1)), None),
    ("zeros float size", lambda m: m.zeros(2.0), ["zeros"]),
    ("randn float size", lambda m: m.randn(2.5), ["randn"]),
    ("full int size", lambda m: m.full(3, 1.0), ["full", "tuple"]),
    ("new_full int size", lambda m: a(m, 2).new_full(3, 1.0), ["new_full"]),
    ("eye float", lambda m: m.eye(2.5), ["eye"]),
    ("linspace float steps", lambda m: m.linspace(0, 1, 2.5), ["linspace"]),
    ("arange inf", lambda m: m.arange(0, float("inf")), ["arange"]),
    ("squeeze float dim", lambda m: a(m, 1, 2).squeeze(1.5), ["squeeze"]),
    ("tile int ok", lambda m: a(m, 3).tile(2), None),
    ("sort 0-d ok", lambda m: a(m).sort(), None),
    ("argsort 0-d ok", lambda m: a(m).argsort(), None),
    ("topk 0-d ok", lambda m: a(m).topk(1), None),
    ("kthvalue 0-d ok", lambda m: a(m).kthvalue(1), None),
    ("sum_to_size 0-d", lambda m: a(m).sum_to_size(5), ["sum_to_size", "[5]"]),
    ("sum_to_size longer", lambda m: a(m, 3).sum_to_size(2, 3), ["sum_to_size"]),
    ("flip duplicate neg", lambda m: a(m, 2, 3).flip(0, -2), ["flip", "multiple"]),
    # ---- a number or list where a tensor is needed
    ("matmul number", lambda m: a(m, 3).matmul(2.0), ["matmul", "float"]),
    ("@ list", lambda m: a(m, 3) @ [1.0, 2.0, 3.0], ["matmul", "list"]),
    ("bmm None", lambda m: m.bmm(a(m, 1, 2, 2), None), ["bmm"]),
    ("dot number", lambda m: a(m, 3).dot(2.0), ["dot"]),
    ("outer list", lambda m: m.outer(a(m, 3), [1.0]), ["outer"]),
    ("masked_select int", lambda m: a(m, 2).masked_select(1), ["masked_select", "mask"]),
    ("index_select int", lambda m: a(m, 3).index_select(0, 1), ["index_select", "index"]),
    ("gather int", lambda m: a(m, 3).gather(0, 1), ["gather", "index"]),
    ("masked_fill int mask", lambda m: a(m, 3).masked_fill(0, 1.0), ["masked_fill", "mask"]),
    # ---- arguments left out, checks in PyTorch's order
    ("reshape()", lambda m: a(m, 3).reshape(), ["reshape", "shape"]),
    ("view()", lambda m: a(m, 3).view(), ["view"]),
    ("permute()", lambda m: a(m, 3).permute(), ["permute", "dims"]),
    ("repeat()", lambda m: a(m, 3).repeat(), ["repeat"]),
    ("expand()", lambda m: a(m, 3).expand(), ["expand"]),
    ("tile()", lambda m: a(m, 3).tile(), ["tile"]),
    ("sum_to_size()", lambda m: a(m, 3).sum_to_size(), ["sum_to_size"]),
    ("flip()", lambda m: a(m, 3).flip(), ["flip", "dims"]),
    ("squeeze varargs ok", lambda m: a(m, 1, 3, 1).squeeze(0, 2), None),
    ("softmax long dim oob", lambda m: _long(m).softmax(5), ["softmax"]),
    ("trace bool 1-d", lambda m: _bool(m).trace(), ["trace", "bool"]),
    ("unflatten int sizes", lambda m: a(m, 6).unflatten(0, 6), ["unflatten", "sizes"]),
    ("chunk empty dim ok", lambda m: a(m, 0, 3).chunk(5), None),
    ("kthvalue empty dim", lambda m: a(m, 0, 3).kthvalue(1, 0), ["kthvalue"]),
    ("topk 0-d k=0 ok", lambda m: a(m).topk(0), None),
    ("index_select dim 0 oob", lambda m: a(m, 2, 3).index_select(0, i(m, [2])), ["index_select"]),
    ("index_select 1-d oob", lambda m: a(m, 3).index_select(0, i(m, [3])), ["index_select"]),
    ("diag_embed 0-d", lambda m: m.diag_embed(a(m)), ["diag_embed"]),
    ("diag_embed same dims", lambda m: m.diag_embed(a(m, 3), 0, -1, 1), ["diag_embed"]),
    # ---- arrange.py (issue 6): dims, sizes, sections, pads out of range
    ("diag_embed dims oob", lambda m: m.diag_embed(a(m, 2, 3), 0, 0, 3), ["diag_embed"]),
    ("diag_embed dims first ok", lambda m: m.diag_embed(a(m, 2, 3), 1, 0, 2), None),
    ("rot90 one dim", lambda m: a(m, 2, 3).rot90(1, [0]), ["rot90"]),
    ("rot90 1-d", lambda m: a(m, 3).rot90(), ["rot90"]),
    ("rot90 same dims", lambda m: a(m, 2, 3).rot90(1, (1, -1)), ["rot90"]),
    ("rot90 dim oob", lambda m: m.rot90(a(m, 2, 3), 1, (0, 2)), ["rot90"]),
    ("rot90 k neg ok", lambda m: a(m, 2, 3).rot90(-3, (1, 0)), None),
    ("fliplr 1-d", lambda m: a(m, 3).fliplr(), ["fliplr"]),
    ("flipud 0-d", lambda m: m.flipud(a(m)), ["flipud"]),
    ("split_with_sizes wrong sum", lambda m: a(m, 5).split_with_sizes([2, 2]), ["split"]),
    ("split_with_sizes negative", lambda m: m.split_with_sizes(a(m, 5), [6, -1]), ["split"]),
    ("split_with_sizes dim oob", lambda m: a(m, 5).split_with_sizes([5], 1), ["split"]),
    ("tensor_split 0 sections", lambda m: a(m, 5).tensor_split(0), ["tensor_split"]),
    ("tensor_split 0-d", lambda m: m.tensor_split(a(m), 1), ["tensor_split"]),
    ("tensor_split dim oob", lambda m: a(m, 5).tensor_split(2, 1), ["tensor_split"]),
    ("tensor_split float tensor", lambda m: a(m, 5).tensor_split(a(m, 2)), ["tensor_split"]),
    ("tensor_split 2-d tensor", lambda m: a(m, 5).tensor_split(i(m, [[1]])), ["tensor_split"]),
    ("tensor_split indices past end ok", lambda m: a(m, 5).tensor_split([7, 2, -9]), None),
    ("tensor_split more sections ok", lambda m: a(m, 2).tensor_split(4), None),
    ("tensor_split sections=", lambda m: m.tensor_split(a(m, 5), sections=2, dim=0), None),
    ("tensor_split indices=", lambda m: a(m, 5).tensor_split(indices=[1, 4]), None),
    ("tensor_split tensor_...=",
     lambda m: a(m, 5).tensor_split(tensor_indices_or_sections=i(m, 3)), None),
    ("tensor_split twice", lambda m: a(m, 5).tensor_split(2, sections=2), ["tensor_split"]),
    ("tensor_split none", lambda m: a(m, 5).tensor_split(), ["tensor_split"]),
    ("hsplit sections=", lambda m: a(m, 4).hsplit(sections=2), None),
    ("vsplit indices=", lambda m: m.vsplit(a(m, 4, 1), indices=[3]), None),
    ("hsplit 0-d", lambda m: a(m).hsplit(1), ["hsplit"]),
    ("hsplit uneven", lambda m: a(m, 2, 5).hsplit(2), ["hsplit"]),
    ("vsplit 1-d", lambda m: m.vsplit(a(m, 4), 2), ["vsplit"]),
    ("dsplit 2-d", lambda m: m.dsplit(a(m, 2, 4), 2), ["dsplit"]),
    ("dsplit uneven", lambda m: a(m, 2, 2, 3).dsplit(2), ["dsplit"]),
    ("unfold size too big", lambda m: a(m, 2, 3).unfold(1, 4, 1), ["unfold"]),
    ("unfold step 0", lambda m: a(m, 2, 3).unfold(1, 2, 0), ["unfold"]),
    ("unfold negative size", lambda m: a(m, 2, 3).unfold(1, -1, 1), ["unfold"]),
    ("unfold dim oob", lambda m: a(m, 2, 3).unfold(2, 1, 1), ["unfold"]),
    ("unfold 0-d size 2", lambda m: a(m).unfold(0, 2, 1), ["unfold"]),
    ("unfold 0-d ok", lambda m: a(m).unfold(-1, 1, 3), None),
    ("repeat_interleave negative", lambda m: a(m, 3).repeat_interleave(-1), ["repeat"]),
    ("repeat_interleave dim oob", lambda m: a(m, 3).repeat_interleave(2, 1), ["repeat"]),
    ("repeat_interleave wrong count",
     lambda m: a(m, 3).repeat_interleave(i(m, [1, 2]), 0), ["repeat"]),
    ("repeat_interleave negative tensor",
     lambda m: m.repeat_interleave(a(m, 2), i(m, [1, -2]), dim=0), ["repeat"]),
    ("repeat_interleave 2-d repeats",
     lambda m: a(m, 2).repeat_interleave(i(m, [[1, 2]]), dim=0), ["repeat"]),
    ("repeat_interleave repeats only", lambda m: m.repeat_interleave(i(m, [2, 0, 1])), None),
    ("meshgrid nothing", lambda m: m.meshgrid(indexing="ij"), ["meshgrid"]),
    ("broadcast_tensors nothing", lambda m: m.broadcast_tensors(), None),
    ("atleast_1d nothing", lambda m: m.atleast_1d(), None),
    ("meshgrid 2-d", lambda m: m.meshgrid(a(m, 2, 2), a(m, 2), indexing="ij"), ["meshgrid"]),
    ("meshgrid dtypes", lambda m: m.meshgrid(a(m, 2), i(m, [1]), indexing="ij"), ["meshgrid"]),
    ("meshgrid bad indexing", lambda m: m.meshgrid(a(m, 2), indexing="ji"), ["meshgrid"]),
    ("broadcast_tensors mismatch", lambda m: m.broadcast_tensors(a(m, 2, 3), a(m, 2)),
     ["size", "3", "2"]),
    ("block_diag 3-d", lambda m: m.block_diag(a(m, 2), a(m, 1, 1, 1)), ["block_diag"]),
    ("cartesian_prod 2-d", lambda m: m.cartesian_prod(a(m, 2), a(m, 2, 1)), ["1d"]),
    ("combinations 2-d", lambda m: m.combinations(a(m, 2, 2)), ["1d"]),
    ("combinations negative r", lambda m: m.combinations(a(m, 3), -1), ["combinations"]),
    ("constant_pad_nd odd", lambda m: m.constant_pad_nd(a(m, 2, 3), (1, 2, 3)), ["pad"]),
    ("constant_pad_nd too long", lambda m: m.constant_pad_nd(a(m, 3), (1, 1, 1, 1)), ["pad"]),
    ("constant_pad_nd negative size", lambda m: m.constant_pad_nd(a(m, 3), (-2, -2)),
     ["pad", "dimension 0"]),
    ("constant_pad_nd crop to empty ok", lambda m: m.constant_pad_nd(a(m, 3), (-2, -1)), None),
    ("hstack empty", lambda m: m.hstack([]), ["hstack"]),
    ("vstack mismatch", lambda m: m.vstack([a(m, 2), a(m, 3)]), ["size"]),
    ("dstack empty", lambda m: m.dstack(()), ["dstack"]),
    ("column_stack mismatch", lambda m: m.column_stack([a(m, 2), a(m, 3)]), ["size"]),
    ("mH 1-d", lambda m: a(m, 3).mH, ["mh"]),
    ("H 3-d", lambda m: a(m, 2, 2, 2).H, [".h"]),
    ("adjoint 1-d", lambda m: a(m, 3).adjoint(), ["adjoint"]),
    ("msort 0-d ok", lambda m: m.msort(a(m)), None),
    ("diagflat 2-d ok", lambda m: a(m, 2, 2).diagflat(-1), None),
    ("ravel 0-d ok", lambda m: a(m).ravel(), None),
    ("topk 0-d k=1 ok", lambda m: a(m).topk(1, 0), None),
    ("topk 0-d dim oob", lambda m: a(m).topk(1, 1), ["topk"]),
]
# ---- reductions and scans (issue 6: ops/scans.py, quantiles.py, statistics.py)
CASES += [
    ("cumprod dim oob", lambda m: a(m, 2, 3).cumprod(2), ["cumprod"]),
    ("cumprod 0-d ok", lambda m: a(m).cumprod(-1), None),
    ("cummax 0-d oob", lambda m: a(m).cummax(1), ["cummax"]),
    ("cummin tuple dim", lambda m: m.cummin(a(m, 2, 3), (0, 1)), ["cummin"]),
    ("logcumsumexp dim oob", lambda m: a(m, 2, 3).logcumsumexp(-3), ["logcumsumexp"]),
    ("diff 0-d", lambda m: m.diff(a(m)), ["diff"]),
    ("diff dim oob", lambda m: a(m, 2, 3).diff(dim=2), ["diff"]),
    ("trapezoid dim oob", lambda m: m.trapezoid(a(m, 2, 3), dim=2), ["trapezoid"]),
    ("trapz 0-d", lambda m: m.trapz(a(m)), ["dimension"]),
    ("cumulative_trapezoid dim oob", lambda m: m.cumulative_trapezoid(a(m, 2), dim=1),
     ["cumulative_trapezoid"]),
    ("median dim oob", lambda m: a(m, 2, 3).median(2), ["median"]),
    ("median 0-d ok", lambda m: a(m).median(-1), None),
    ("nanmedian empty dim", lambda m: a(m, 2, 0).nanmedian(1), ["nanmedian"]),
    ("mode dim oob", lambda m: a(m, 2, 3).mode(-3), ["mode"]),
    ("quantile dim oob", lambda m: a(m, 2, 3).quantile(0.5, dim=2), ["quantile"]),
    ("nanquantile q > 1", lambda m: a(m, 2, 3).nanquantile(1.5), ["nanquantile"]),
    ("var_mean dim oob", lambda m: m.var_mean(a(m, 2, 3), 2), ["var_mean"]),
    ("std_mean dup dims", lambda m: m.std_mean(a(m, 2, 3), (1, 1)), ["std_mean"]),
    ("aminmax dim oob", lambda m: a(m, 2, 3).aminmax(dim=2), ["aminmax"]),
    ("aminmax empty dim", lambda m: a(m, 2, 0).aminmax(dim=1), ["aminmax"]),
    ("nansum dim oob", lambda m: a(m, 2, 3).nansum(3), ["nansum"]),
    ("nanmean dim oob", lambda m: a(m, 2, 3).nanmean(-3), ["nanmean"]),
    ("renorm dim oob", lambda m: a(m, 2, 3).renorm(2, 2, 1.0), ["renorm"]),
    ("gradient dim oob", lambda m: m.gradient(a(m, 2, 3), dim=2), ["gradient"]),
    ("gradient size 1", lambda m: m.gradient(a(m, 1, 3), dim=0), ["gradient"]),
]

# ---- pooling (issue 8: ops/pooling.py, ops/pooling_adaptive.py)


def _pool(m, name):
    return getattr(m.nn.functional, name)


CASES += [
    ("max_pool2d kernel > input", lambda m: _pool(m, "max_pool2d")(a(m, 1, 2, 3, 3), 4),
     ["max_pool2d", "output size is too small", "kernel"]),
    ("max_pool2d pad > kernel/2", lambda m: _pool(m, "max_pool2d")(a(m, 1, 2, 5, 5), 2, 1, 2),
     ["max_pool2d", "pad", "half"]),
    ("max_pool2d pad > kernel/2 dilated", lambda m: _pool(m, "max_pool2d")(
        a(m, 1, 2, 9, 9), 2, 1, 2, 3), ["max_pool2d", "pad", "half"]),
    ("max_pool2d negative pad", lambda m: _pool(m, "max_pool2d")(a(m, 1, 2, 5, 5), 2, 1, -1),
     ["max_pool2d", "pad"]),
    ("max_pool2d stride 0", lambda m: _pool(m, "max_pool2d")(a(m, 1, 2, 5, 5), 2, 0),
     ["max_pool2d", "stride"]),
    ("max_pool2d kernel 0", lambda m: _pool(m, "max_pool2d")(a(m, 1, 2, 5, 5), 0),
     ["max_pool2d"]),
    ("max_pool2d negative kernel", lambda m: _pool(m, "max_pool2d")(a(m, 1, 2, 5, 5), -1, 1),
     ["max_pool2d", "kernel"]),
    ("max_pool2d dilation 0", lambda m: _pool(m, "max_pool2d")(a(m, 1, 2, 5, 5), 2, 1, 0, 0),
     ["max_pool2d", "dilation"]),
    ("max_pool2d 2-d input", lambda m: _pool(m, "max_pool2d")(a(m, 5, 5), 2),
     ["max_pool2d", "[5, 5]"]),
    ("max_pool2d 5-d input", lambda m: _pool(m, "max_pool2d")(a(m, 1, 1, 1, 4, 4), 2),
     ["max_pool2d"]),
    ("max_pool2d empty channels", lambda m: _pool(m, "max_pool2d")(a(m, 1, 0, 4, 4), 2),
     ["max_pool2d", "[1, 0, 4, 4]"]),
    ("max_pool2d empty batch ok", lambda m: _pool(m, "max_pool2d")(a(m, 0, 2, 4, 4), 2), None),
    ("max_pool2d kernel of 3", lambda m: _pool(m, "max_pool2d")(a(m, 1, 2, 5, 5), (2, 2, 2)),
     ["max_pool2d", "kernel_size"]),
    ("max_pool2d bool", lambda m: _pool(m, "max_pool2d")(a(m, 1, 2, 4, 4) > 3, 2),
     ["max_pool2d", "bool"]),
    ("max_pool2d_with_indices k>in", lambda m: _pool(m, "max_pool2d_with_indices")(
        a(m, 2, 3, 3), 4), ["max_pool2d"]),
    ("max_pool1d kernel > input", lambda m: _pool(m, "max_pool1d")(a(m, 1, 2, 3), 4),
     ["max_pool1d"]),
    ("max_pool1d 4-d input", lambda m: _pool(m, "max_pool1d")(a(m, 1, 2, 5, 5), 2),
     ["max_pool1d", "[1, 2, 5, 5]"]),
    ("max_pool1d long", lambda m: _pool(m, "max_pool1d")(m.ones(1, 2, 4, dtype=m.long), 2),
     ["max_pool1d", "long"]),
    ("torch.max_pool1d_with_indices k>in", lambda m: m.max_pool1d_with_indices(a(m, 2, 3), 4),
     ["max_pool1d"]),
    ("max_pool3d kernel > input", lambda m: _pool(m, "max_pool3d")(a(m, 1, 1, 3, 3, 3), 4),
     ["max_pool3d"]),
    ("max_pool3d 3-d input", lambda m: _pool(m, "max_pool3d")(a(m, 3, 3, 3), 2),
     ["max_pool3d"]),
    ("avg_pool2d kernel > input", lambda m: _pool(m, "avg_pool2d")(a(m, 1, 2, 5, 5), 6),
     ["avg_pool2d", "output size is too small"]),
    ("avg_pool2d pad > kernel/2", lambda m: _pool(m, "avg_pool2d")(a(m, 1, 2, 5, 5), 2, 1, 2),
     ["avg_pool2d", "pad"]),
    ("avg_pool2d divisor 0", lambda m: _pool(m, "avg_pool2d")(
        a(m, 1, 2, 5, 5), 2, divisor_override=0), ["avg_pool2d", "divisor"]),
    ("avg_pool2d int32", lambda m: _pool(m, "avg_pool2d")(m.ones(1, 2, 4, 4, dtype=m.int32), 2),
     ["avg_pool2d", "int"]),
    ("avg_pool1d kernel > input", lambda m: _pool(m, "avg_pool1d")(a(m, 1, 2, 3), 4),
     ["avg_pool1d"]),
    ("avg_pool1d pad", lambda m: _pool(m, "avg_pool1d")(a(m, 1, 2, 3), 2, 1, 2),
     ["avg_pool1d", "pad"]),
    ("torch.avg_pool1d 4-d", lambda m: m.avg_pool1d(a(m, 1, 2, 3, 3), 2), ["avg_pool1d"]),
    ("avg_pool3d kernel > input", lambda m: _pool(m, "avg_pool3d")(a(m, 1, 1, 3, 3, 3), 4),
     ["avg_pool3d"]),
    ("lp_pool2d kernel > input", lambda m: _pool(m, "lp_pool2d")(a(m, 1, 2, 5, 5), 2, 6),
     ["avg_pool2d"]),
    ("lp_pool1d kernel > input", lambda m: _pool(m, "lp_pool1d")(a(m, 1, 2, 3), 2, 4),
     ["avg_pool1d"]),
    ("lp_pool3d kernel > input", lambda m: _pool(m, "lp_pool3d")(a(m, 1, 1, 3, 3, 3), 2, 4),
     ["avg_pool3d"]),
    ("adaptive_avg_pool2d negative", lambda m: _pool(m, "adaptive_avg_pool2d")(
        a(m, 1, 2, 5, 5), -1), ["adaptive_avg_pool2d", "output_size"]),
    ("adaptive_avg_pool2d 3 sizes", lambda m: _pool(m, "adaptive_avg_pool2d")(
        a(m, 1, 2, 5, 5), (2, 2, 2)), ["adaptive_avg_pool2d", "output_size"]),
    ("adaptive_avg_pool2d 2-d input", lambda m: _pool(m, "adaptive_avg_pool2d")(a(m, 5, 5), 2),
     ["adaptive_avg_pool2d", "[5, 5]"]),
    ("adaptive_avg_pool2d empty", lambda m: _pool(m, "adaptive_avg_pool2d")(
        a(m, 1, 2, 0, 5), 2), ["adaptive_avg_pool2d", "[1, 2, 0, 5]"]),
    ("adaptive_avg_pool2d long", lambda m: _pool(m, "adaptive_avg_pool2d")(
        m.ones(1, 2, 4, 4, dtype=m.long), 2), ["adaptive_avg_pool2d", "long"]),
    ("adaptive_avg_pool1d 2 sizes", lambda m: _pool(m, "adaptive_avg_pool1d")(
        a(m, 2, 5), (2, 2)), ["adaptive_avg_pool1d", "output_size"]),
    ("torch.adaptive_avg_pool1d 4-d", lambda m: m.adaptive_avg_pool1d(a(m, 1, 2, 5, 5), 2),
     ["adaptive_avg_pool1d"]),
    ("adaptive_avg_pool3d 3-d", lambda m: _pool(m, "adaptive_avg_pool3d")(a(m, 2, 5, 5), 2),
     ["adaptive_avg_pool3d"]),
    ("adaptive_avg_pool2d 0 ok", lambda m: _pool(m, "adaptive_avg_pool2d")(
        a(m, 1, 2, 5, 5), 0), None),
    ("adaptive_max_pool2d 2-d", lambda m: _pool(m, "adaptive_max_pool2d")(a(m, 5, 5), 2),
     ["adaptive_max_pool2d", "[5, 5]"]),
    ("adaptive_max_pool2d long", lambda m: _pool(m, "adaptive_max_pool2d")(
        m.ones(1, 2, 4, 4, dtype=m.long), 2), ["adaptive_max_pool2d", "long"]),
    ("adaptive_max_pool2d_with_indices neg", lambda m: _pool(
        m, "adaptive_max_pool2d_with_indices")(a(m, 1, 2, 5, 5), -2), ["output_size"]),
    ("adaptive_max_pool1d 4-d", lambda m: _pool(m, "adaptive_max_pool1d")(
        a(m, 1, 2, 5, 5), 2), ["adaptive_max_pool1d"]),
    ("torch.adaptive_max_pool1d 1-d", lambda m: m.adaptive_max_pool1d(a(m, 5), 2),
     ["adaptive_max_pool1d"]),
    ("adaptive_max_pool1d_with_indices 2", lambda m: _pool(
        m, "adaptive_max_pool1d_with_indices")(a(m, 2, 5), (2, 2)), ["adaptive_max_pool1d"]),
    ("adaptive_max_pool3d 3-d", lambda m: _pool(m, "adaptive_max_pool3d")(a(m, 2, 5, 5), 2),
     ["adaptive_max_pool3d"]),
    ("adaptive_max_pool3d_with_indices", lambda m: _pool(
        m, "adaptive_max_pool3d_with_indices")(a(m, 1, 2, 0, 3, 3), 2), ["adaptive_max_pool3d"]),
    ("fractional_max_pool2d no size", lambda m: _pool(m, "fractional_max_pool2d")(
        a(m, 1, 2, 5, 5), 2), ["fractional_max_pool2d", "output_size"]),
    ("fractional_max_pool2d too big", lambda m: _pool(m, "fractional_max_pool2d")(
        a(m, 1, 2, 5, 5), 2, output_size=5), ["fractional_max_pool2d", "too large", "5"]),
    ("fractional_max_pool2d kernel > input", lambda m: _pool(m, "fractional_max_pool2d")(
        a(m, 1, 2, 5, 5), 6, output_size=2), ["fractional_max_pool2d", "too large"]),
    ("fractional_max_pool2d samples", lambda m: _pool(m, "fractional_max_pool2d")(
        a(m, 1, 2, 5, 5), 2, output_size=2, _random_samples=m.zeros(1, 2, 3)),
     ["_random_samples"]),
    ("fractional_max_pool2d samples channels", lambda m: _pool(m, "fractional_max_pool2d")(
        a(m, 1, 2, 5, 5), 2, output_size=2, _random_samples=m.zeros(1, 3, 2)),
     ["_random_samples"]),
    ("fractional_max_pool2d float ratio", lambda m: _pool(m, "fractional_max_pool2d")(
        a(m, 1, 2, 5, 5), 2, output_ratio=0.5), ["len"]),
    ("fractional_max_pool2d_with_indices", lambda m: _pool(
        m, "fractional_max_pool2d_with_indices")(a(m, 1, 2, 5, 5), 2), ["output_ratio"]),
    ("fractional_max_pool3d too big", lambda m: _pool(m, "fractional_max_pool3d")(
        a(m, 1, 1, 5, 5, 5), 2, output_size=4), ["fractional_max_pool3d", "too large"]),
    ("fractional_max_pool3d_with_indices", lambda m: _pool(
        m, "fractional_max_pool3d_with_indices")(a(m, 1, 1, 5, 5, 5), 2), ["output_ratio"]),
    ("max_unpool2d bad size", lambda m: _pool(m, "max_unpool2d")(
        a(m, 1, 1, 2, 2), m.zeros(1, 1, 2, 2, dtype=m.long), 2, output_size=(7, 7)),
     ["output_size", "between"]),
    ("max_unpool2d size length", lambda m: _pool(m, "max_unpool2d")(
        a(m, 1, 1, 2, 2), m.zeros(1, 1, 2, 2, dtype=m.long), 2, output_size=(4, 4, 4)),
     ["output_size"]),
    ("max_unpool2d index oob", lambda m: _pool(m, "max_unpool2d")(
        a(m, 1, 1, 2, 2), m.full((1, 1, 2, 2), 16), 2), ["max_unpool2d", "16", "4x4"]),
    ("max_unpool2d negative index", lambda m: _pool(m, "max_unpool2d")(
        a(m, 1, 1, 2, 2), m.full((1, 1, 2, 2), -1), 2), ["max_unpool2d", "-1"]),
    ("max_unpool2d float indices", lambda m: _pool(m, "max_unpool2d")(
        a(m, 1, 1, 2, 2), m.zeros(1, 1, 2, 2), 2), ["max_unpool2d", "int64"]),
    ("max_unpool2d index shape", lambda m: _pool(m, "max_unpool2d")(
        a(m, 1, 1, 2, 2), m.zeros(1, 1, 2, 3, dtype=m.long), 2), ["max_unpool2d", "shape"]),
    ("max_unpool2d 2-d input", lambda m: _pool(m, "max_unpool2d")(
        a(m, 2, 2), m.zeros(2, 2, dtype=m.long), 2), ["max_unpooling2d"]),
    ("max_unpool1d index oob", lambda m: _pool(m, "max_unpool1d")(
        a(m, 1, 1, 2), m.full((1, 1, 2), 4), 2), ["max_unpool1d", "4x1"]),
    ("max_pool2d float kernel", lambda m: _pool(m, "max_pool2d")(a(m, 1, 1, 4, 4), (2.0, 2.0)),
     ["max_pool2d", "kernel_size", "float"]),
    ("avg_pool2d float kernel", lambda m: _pool(m, "avg_pool2d")(a(m, 1, 1, 4, 4), 2.0),
     ["avg_pool2d", "kernel_size", "float"]),
    ("max_pool2d bool kernel", lambda m: _pool(m, "max_pool2d")(a(m, 1, 1, 4, 4), True),
     ["max_pool2d", "kernel_size", "bool"]),
    ("max_pool2d padding of 3", lambda m: _pool(m, "max_pool2d")(
        a(m, 1, 1, 4, 4), 2, padding=(1, 1, 1)), ["max_pool2d", "padding"]),
    ("fractional_max_pool2d ratio of 1", lambda m: _pool(m, "fractional_max_pool2d")(
        a(m, 1, 2, 5, 5), 2, output_ratio=(0.5,)), ["output_ratio"]),
    ("fractional_max_pool3d ratio of 2", lambda m: _pool(m, "fractional_max_pool3d")(
        a(m, 1, 2, 5, 5, 5), 2, output_ratio=(0.5, 0.5)), ["output_ratio"]),
    ("fractional_max_pool2d size 0 ok", lambda m: _pool(m, "fractional_max_pool2d")(
        a(m, 1, 2, 5, 5), 2, output_size=(0, 2), _random_samples=m.zeros(1, 2, 2)), None),
    ("adaptive_avg_pool2d one size", lambda m: _pool(m, "adaptive_avg_pool2d")(
        a(m, 1, 2, 5, 5), [3]), ["adaptive_avg_pool2d", "output_size"]),
    ("adaptive_max_pool2d one size", lambda m: _pool(m, "adaptive_max_pool2d")(
        a(m, 1, 2, 5, 5), [3]), ["adaptive_max_pool2d", "output_size"]),
    ("adaptive_max_pool2d None size ok", lambda m: _pool(m, "adaptive_max_pool2d")(
        a(m, 1, 2, 5, 5), (3, None)), None),
    ("adaptive_max_pool1d tuple ok", lambda m: _pool(m, "adaptive_max_pool1d")(
        a(m, 2, 5), (3,)), None),
    ("max_unpool3d index oob", lambda m: _pool(m, "max_unpool3d")(
        a(m, 1, 1, 1, 1, 2), m.full((1, 1, 1, 1, 2), 100), 2), ["max_unpool3d", "100"]),
]

# Shapes that do not broadcast: PyTorch's RuntimeError naming both shapes, never NumPy's
# ValueError (whichever path the op takes: fast binary caller, general caller, own code).
BROADCAST = [
    ("add", lambda m, x, y: x + y),
    ("sub", lambda m, x, y: m.sub(x, y, alpha=2)),
    ("mul", lambda m, x, y: x * y),
    ("div", lambda m, x, y: x / y),
    ("pow", lambda m, x, y: x ** y),
    ("remainder", lambda m, x, y: x % y),
    ("floor_divide", lambda m, x, y: x // y),
    ("eq", lambda m, x, y: x == y),
    ("lt", lambda m, x, y: x < y),
    ("maximum", lambda m, x, y: m.maximum(x, y)),
    ("minimum", lambda m, x, y: m.minimum(x, y)),
    ("atan2", lambda m, x, y: m.atan2(x, y)),
    ("hypot", lambda m, x, y: m.hypot(x, y)),
    ("xlogy", lambda m, x, y: m.xlogy(x, y)),
    ("logaddexp", lambda m, x, y: m.logaddexp(x, y)),
    ("lerp", lambda m, x, y: m.lerp(x, y, 0.5)),
    ("lerp weight", lambda m, x, y: m.lerp(x, x, y)),
    ("addcmul", lambda m, x, y: m.addcmul(x, x, y)),
    ("addcdiv", lambda m, x, y: m.addcdiv(x, y, y)),
    ("clamp", lambda m, x, y: m.clamp(x, min=y)),
    ("clamp_min", lambda m, x, y: m.clamp_min(x, y)),
    ("where", lambda m, x, y: m.where(x > 0, x, y)),
    ("where cond", lambda m, x, y: m.where(y > 0, x, x)),
    ("masked_fill", lambda m, x, y: x.masked_fill(y > 0, 1.0)),
    ("matmul batch", lambda m, x, y: m.matmul(x.reshape(2, 1, 3), y.reshape(4, 3, 1)),
     ["size", "[2, 1, 3]", "[4, 3, 1]"]),
    ("einsum", lambda m, x, y: m.einsum("ij,ij->i", x, y)),
    ("add_", lambda m, x, y: x.clone().add_(y)),
    ("mul_ grows self", lambda m, x, y: x[0].clone().mul_(x), ["shape [3]", "[2, 3]"]),
    ("mse_loss", lambda m, x, y: m.nn.functional.mse_loss(x, y)),
]


@pytest.mark.parametrize("case", BROADCAST, ids=[c[0] for c in BROADCAST])
def test_shapes_that_do_not_broadcast(case):
    name, call, *words = case

    def fn(m):
        return call(m, m.ones(2, 3) + 1, m.ones(4, 3) + 1)

    check(fn, words[0] if words else ["size", "[2, 3]", "[4, 3]"])


def _run(fn, module):
    try:
        return fn(module), None
    except Exception as e:  # noqa: BLE001 - comparing exceptions is the point
        return None, e


def _as_numpy(value):
    if isinstance(value, (tuple, list)):
        return [_as_numpy(v) for v in value]
    if isinstance(value, (torch.Tensor, retrograd.Tensor)):
        return value.detach().numpy()
    return value


def _assert_same(got, want):
    g, w = _as_numpy(got), _as_numpy(want)
    if isinstance(w, list):
        assert isinstance(g, list) and len(g) == len(w)
        for x, y in zip(g, w):
            _assert_same(x, y)
    elif isinstance(w, np.ndarray):
        assert isinstance(g, np.ndarray) and g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-6)
    else:
        assert g == w


def check(fn, words):
    want, t_err = _run(fn, torch)
    got, r_err = _run(fn, retrograd)
    if t_err is None:
        assert words is None, f"torch accepts this call ({want!r}); fix the table"
        assert r_err is None, f"retrograd raised {r_err!r} where torch succeeds"
        _assert_same(got, want)
        return
    assert words is not None, f"torch raises {t_err!r}; fix the table"
    assert r_err is not None, f"retrograd returned {got!r} where torch raises {t_err!r}"
    assert type(r_err).__module__ == "builtins", f"a foreign exception escaped: {r_err!r}"
    assert isinstance(r_err, type(t_err)), f"{type(r_err).__name__} ({r_err}), torch: {t_err!r}"
    msg = str(r_err).lower()
    for w in words:
        assert w in msg, f"message does not name {w!r}: {r_err}"


@pytest.mark.parametrize("fn,words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_arguments_match_torch(fn, words):
    check(fn, words)


# ---- inputs PyTorch refuses for their dtype (an integer tensor to a float-only kernel, bool
# arithmetic, products of mixed dtypes, a dtype given by name...)


def _long(m):
    return m.tensor([1, 2, 3])


def _bool(m):
    return m.tensor([True, False])


def _f32(m):
    return m.tensor([1.0, 2.0, 3.0])


def _f64(m):
    return m.tensor([1.0, 2.0, 3.0], dtype=m.float64)


DTYPE_CASES = [
    ("softmax long", lambda m: _long(m).softmax(0), ["softmax", "long"]),
    ("softmax long dtype=", lambda m: _long(m).softmax(0, dtype=m.float32), None),
    ("log_softmax long", lambda m: m.log_softmax(_long(m), 0), ["log_softmax"]),
    ("F.softmax bool", lambda m: m.nn.functional.softmax(_bool(m), 0), ["softmax", "bool"]),
    ("cross_entropy long", lambda m: m.nn.functional.cross_entropy(
        _long(m).reshape(1, 3), m.tensor([0])), ["log_softmax"]),
    ("where long cond", lambda m: m.where(_long(m), _f32(m), _f32(m)), ["where", "long"]),
    ("where float cond", lambda m: m.where(_f32(m), _f32(m), _f32(m)), ["where", "float"]),
    ("zeros dtype str", lambda m: m.zeros(2, dtype="float32"), ["zeros", "float32"]),
    ("ones dtype str", lambda m: m.ones(2, dtype="float32"), ["ones"]),
    ("tensor dtype str", lambda m: m.tensor([1.0], dtype="float32"), ["tensor"]),
    ("arange dtype str", lambda m: m.arange(3, dtype="float32"), ["arange"]),
    ("full dtype str", lambda m: m.full((2,), 1.0, dtype="float32"), ["full"]),
    ("randn dtype str", lambda m: m.randn(2, dtype="float32"), ["randn"]),
    ("eye dtype str", lambda m: m.eye(2, dtype="float32"), ["eye"]),
    ("linspace dtype str", lambda m: m.linspace(0, 1, 3, dtype="float32"), ["linspace"]),
    ("zeros_like dtype str", lambda m: m.zeros_like(_f32(m), dtype="float32"), ["zeros_like"]),
    ("to dtype= str", lambda m: _f32(m).to(dtype="float32"), ["to", "float32"]),
    ("to str is a device", lambda m: _f32(m).to("float32"), ["float32"]),
    ("sum dtype str", lambda m: _f32(m).sum(dtype="float64"), ["sum"]),
    ("softmax dtype str", lambda m: _f32(m).softmax(0, dtype="float64"), ["softmax"]),
    ("type str ok", lambda m: _f32(m).type("torch.DoubleTensor"), None),
    ("to python float", lambda m: _f32(m).to(float), None),
    ("zeros python float", lambda m: m.zeros(2, dtype=float), None),
    ("dot 2-d", lambda m: m.dot(_f32(m).reshape(1, 3), _f32(m).reshape(3, 1)), ["dot", "1d"]),
    ("Tensor.dot 2-d", lambda m: _f32(m).reshape(1, 3).dot(_f32(m).reshape(3, 1)), ["dot"]),
    ("dot lengths", lambda m: m.dot(_f32(m), _f32(m)[:2]), ["dot", "3", "2"]),
    ("dot dtypes", lambda m: m.dot(_f32(m), _f64(m)), ["dot", "float32", "float64"]),
    ("dot bool", lambda m: m.dot(_bool(m), _bool(m)), ["dot", "bool"]),
    ("dot ok", lambda m: m.dot(_f32(m), _f32(m)), None),
    ("dot long ok", lambda m: _long(m).dot(_long(m)), None),
    ("neg bool", lambda m: -_bool(m), ["bool"]),
    ("sub bool", lambda m: _bool(m) - _bool(m), ["bool"]),
    ("rsub bool", lambda m: 1 - _bool(m), ["bool"]),
    ("add bool ok", lambda m: _bool(m) + _bool(m), None),
    ("mean long", lambda m: _long(m).mean(), ["mean"]),
    ("mean long dim", lambda m: _long(m).mean(0), ["mean"]),
    ("var long", lambda m: _long(m).var(), ["var"]),
    ("norm long", lambda m: _long(m).norm(), ["norm"]),
    ("matmul dtypes", lambda m: m.matmul(_f32(m), _f64(m)), ["float32", "float64"]),
    ("mm dtypes", lambda m: m.mm(_f32(m).reshape(1, 3), _f64(m).reshape(3, 1)), ["float64"]),
    ("bmm dtypes", lambda m: m.bmm(_f32(m).reshape(1, 1, 3), _f64(m).reshape(1, 3, 1)),
     ["bmm", "float32", "float64"]),
    ("einsum dtypes", lambda m: m.einsum("i,i->", _f32(m), _f64(m)), ["einsum", "float64"]),
    ("addmm dtypes", lambda m: m.addmm(_f64(m)[:1], _f32(m).reshape(1, 3),
                                       _f32(m).reshape(3, 1)), ["addmm", "float64"]),
    ("linear dtypes", lambda m: m.nn.functional.linear(_f32(m).reshape(1, 3),
                                                       _f64(m).reshape(1, 3)), ["float64"]),
    ("gelu long", lambda m: m.nn.functional.gelu(_long(m)), ["gelu", "long"]),
    ("silu long", lambda m: m.nn.functional.silu(_long(m)), ["silu"]),
    ("elu long", lambda m: m.nn.functional.elu(_long(m)), ["elu"]),
    ("leaky_relu long", lambda m: m.nn.functional.leaky_relu(_long(m)), ["leaky_relu"]),
    ("softplus long", lambda m: m.nn.functional.softplus(_long(m)), ["softplus"]),
    ("hardtanh bool", lambda m: m.nn.functional.hardtanh(_bool(m)), ["hardtanh", "bool"]),
    ("relu long ok", lambda m: m.nn.functional.relu(_long(m)), None),
    ("bce long", lambda m: m.nn.functional.binary_cross_entropy(_long(m), _long(m)),
     ["binary_cross_entropy"]),
    ("bce logits long", lambda m: m.nn.functional.binary_cross_entropy_with_logits(
        _long(m), _long(m)), ["binary_cross_entropy_with_logits"]),
    ("dropout long", lambda m: m.nn.functional.dropout(_long(m), 0.5), ["dropout"]),
    ("trace bool", lambda m: m.trace(_bool(m).reshape(1, 2).expand(2, 2)), ["trace", "bool"]),
    ("topk bool", lambda m: m.topk(_bool(m), 1), ["topk", "bool"]),
    ("kthvalue bool", lambda m: m.kthvalue(_bool(m), 1), ["kthvalue", "bool"]),
    ("argmax bool", lambda m: m.argmax(_bool(m)), ["argmax"]),
    ("floor bool", lambda m: m.floor(_bool(m)), ["bool"]),
    ("bitwise_and float", lambda m: _f32(m) & _f32(m), ["bitwise_and", "float"]),
    ("bitwise_xor float", lambda m: _f32(m) ^ _f32(m), ["bitwise_xor"]),
    ("left shift float", lambda m: _f32(m) << _f32(m), ["float"]),
    ("invert float", lambda m: ~_f32(m), ["float"]),
    ("remainder long by 0", lambda m: _long(m) % 0, ["zero"]),
    ("requires_grad long", lambda m: m.tensor([1], requires_grad=True), ["floating"]),
]


@pytest.mark.parametrize("fn,words", [c[1:] for c in DTYPE_CASES], ids=[c[0] for c in DTYPE_CASES])
def test_dtypes_torch_refuses(fn, words):
    check(fn, words)


@pytest.mark.parametrize("change", ["dtype", "shape"])
@pytest.mark.parametrize("on_leaf", [True, False])
def test_hook_changing_gradient_dtype_or_shape_raises(change, on_leaf):
    def fn(m):
        x = m.ones(3, requires_grad=True)
        y = x * 2
        (x if on_leaf else y).register_hook(
            (lambda g: g.double()) if change == "dtype" else (lambda g: g[:2]))
        y.sum().backward()
        return x.grad

    check(fn, ["hook", change if change == "shape" else "float64"])


def test_dot_is_its_own_op_with_dot_backward():
    a = retrograd.tensor([1.0, 2.0, 3.0], dtype=retrograd.float64, requires_grad=True)
    b = retrograd.tensor([4.0, -1.0, 0.5], dtype=retrograd.float64, requires_grad=True)
    ta, tb = (torch.tensor(v.detach().numpy(), requires_grad=True) for v in (a, b))
    for out, want in ((retrograd.dot(a, b), torch.dot(ta, tb)), (a.dot(b), ta.dot(tb))):
        assert out.grad_fn.name() == want.grad_fn.name() == "DotBackward0"
        assert out.dtype == retrograd.float64 and out.shape == ()
        assert out.item() == pytest.approx(want.item())
    assert retrograd.autograd.gradcheck(retrograd.dot, (a, b))
    assert retrograd.autograd.gradgradcheck(retrograd.dot, (a, b))


# the parameter names of dims and sizes: an op taking one of them needs a case above
_DIM_PARAMS = {"dim", "dims", "dim0", "dim1", "dim2", "start_dim", "end_dim", "size", "sizes",
               "shape", "source", "destination", "split_size_or_sections", "chunks", "shifts",
               "axis0", "axis1", "n", "m", "steps"}


def _takes_dims(fn):
    try:
        return bool(_DIM_PARAMS & set(inspect.signature(fn).parameters))
    except (TypeError, ValueError):  # builtins without a signature
        return False


def _names_called(code, into):
    into.update(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            _names_called(const, into)
    return into


def test_every_op_taking_dims_or_sizes_has_cases():
    ops = {name for name in dir(retrograd) if not name.startswith("_")
           and callable(getattr(retrograd, name)) and not isinstance(getattr(retrograd, name), type)
           and _takes_dims(getattr(retrograd, name))}
    ops |= {name for name in dir(retrograd.Tensor) if not name.startswith("_")
            and callable(getattr(retrograd.Tensor, name, None))
            and _takes_dims(getattr(retrograd.Tensor, name))}
    called = set()
    for table in (CASES, DTYPE_CASES, BROADCAST):
        for case in table:
            _names_called(case[1].__code__, called)
    assert len(ops) > 60, sorted(ops)  # the enumeration itself works
    assert not ops - called, f"ops without argument-check cases: {sorted(ops - called)}"


def test_where_uint8_condition_warns_as_torch():
    for m in (torch, retrograd):
        with pytest.warns(UserWarning, match="uint8 condition"):
            out = m.where(m.tensor([1, 0, 2]).to(m.uint8), _f32(m), -_f32(m))
        assert out.tolist() == [1.0, -2.0, 3.0]


# ---- normalization, activations, dropout (issue 8, norm): bad shapes, sizes, p, dtypes


def _x3(m):
    return a(m, 2, 3, 4)


NORM_CASES = [
    ("batch_norm weight size", lambda m: m.nn.functional.batch_norm(
        _x3(m), m.zeros(3), m.ones(3), m.ones(4), None, True), ["weight", "3", "4"]),
    ("batch_norm bias size", lambda m: m.nn.functional.batch_norm(
        _x3(m), None, None, None, m.ones(2), True), ["bias", "3", "2"]),
    ("batch_norm running_mean size", lambda m: m.nn.functional.batch_norm(
        _x3(m), m.zeros(4), m.ones(3), training=True), ["running_mean", "3", "4"]),
    ("batch_norm running_var size eval", lambda m: m.nn.functional.batch_norm(
        _x3(m), m.zeros(3), m.ones(5)), ["running_var", "5"]),
    ("batch_norm one value per channel", lambda m: m.nn.functional.batch_norm(
        a(m, 1, 3), None, None, training=True), ["more than 1 value", "batch_norm"]),
    ("batch_norm one value spatial", lambda m: m.nn.functional.batch_norm(
        a(m, 1, 3, 1), m.zeros(3), m.ones(3), training=True), ["more than 1 value"]),
    ("batch_norm one value eval ok", lambda m: m.nn.functional.batch_norm(
        a(m, 1, 3), m.zeros(3), m.ones(3)), None),
    ("batch_norm eval without stats", lambda m: m.nn.functional.batch_norm(
        _x3(m), None, None), ["running_mean", "evaluation"]),
    ("batch_norm 1-d", lambda m: m.nn.functional.batch_norm(a(m, 3), None, None,
                                                            training=True), ["batch_norm"]),
    ("batch_norm long", lambda m: m.nn.functional.batch_norm(
        _long(m).reshape(3, 1).expand(3, 2), None, None, training=True), ["batch_norm"]),
    ("batch_norm mixed dtypes", lambda m: m.nn.functional.batch_norm(
        _x3(m).double(), None, None, m.ones(3), None, True), ["mixed dtype", "batch_norm"]),
    ("batch_norm stats dtype", lambda m: m.nn.functional.batch_norm(
        _x3(m), m.zeros(3).double(), m.ones(3).double(), training=True), ["batch_norm"]),
    ("batch_norm momentum None", lambda m: m.nn.functional.batch_norm(
        _x3(m), m.zeros(3), m.ones(3), training=True, momentum=None), ["momentum"]),
    ("torch.batch_norm ok", lambda m: m.batch_norm(
        _x3(m), None, None, m.zeros(3), m.ones(3), False, 0.1, 1e-5, False), None),
    ("layer_norm shape", lambda m: m.nn.functional.layer_norm(_x3(m), (3,)),
     ["normalized_shape", "[2, 3, 4]", "layer_norm"]),
    ("layer_norm too long", lambda m: m.nn.functional.layer_norm(_x3(m), (1, 2, 3, 4)),
     ["normalized_shape"]),
    ("layer_norm int shape", lambda m: m.nn.functional.layer_norm(_x3(m), 4),
     ["layer_norm", "normalized_shape"]),
    ("layer_norm weight", lambda m: m.nn.functional.layer_norm(_x3(m), (4,), m.ones(3)),
     ["weight", "[3]", "[4]"]),
    ("layer_norm bias", lambda m: m.nn.functional.layer_norm(_x3(m), [4], None, m.ones(2)),
     ["bias", "[2]"]),
    ("layer_norm long", lambda m: m.nn.functional.layer_norm(_long(m), (3,)), ["layer_norm"]),
    ("layer_norm mixed dtypes", lambda m: m.layer_norm(_x3(m).double(), (4,), m.ones(4)),
     ["mixed dtype"]),
    ("group_norm groups", lambda m: m.nn.functional.group_norm(_x3(m), 2),
     ["num_groups=2", "[2, 3, 4]"]),
    ("group_norm weight", lambda m: m.nn.functional.group_norm(_x3(m), 3, m.ones(2)),
     ["weight", "[2]", "[2, 3, 4]"]),
    ("group_norm 1-d", lambda m: m.nn.functional.group_norm(a(m, 3), 3), ["2 dimensions"]),
    ("group_norm one per group", lambda m: m.nn.functional.group_norm(a(m, 1, 3), 3),
     ["more than 1 value"]),
    ("group_norm 2-d ok", lambda m: m.nn.functional.group_norm(a(m, 2, 4), 2), None),
    ("instance_norm 2-d", lambda m: m.nn.functional.instance_norm(a(m, 2, 3)),
     ["spatial", "instance_norm"]),
    ("instance_norm running size", lambda m: m.nn.functional.instance_norm(
        _x3(m), m.zeros(4), m.ones(4)), ["running_mean", "6 elements not 8", "instance_norm"]),
    ("instance_norm weight size", lambda m: m.nn.functional.instance_norm(
        _x3(m), weight=m.ones(2)), ["weight", "instance_norm"]),
    ("instance_norm eval no stats", lambda m: m.nn.functional.instance_norm(
        _x3(m), use_input_stats=False), ["running_mean", "use_input_stats"]),
    ("rms_norm shape", lambda m: m.rms_norm(_x3(m), (3,)), ["normalized_shape", "rms_norm"]),
    ("rms_norm weight", lambda m: m.nn.functional.rms_norm(_x3(m), (4,), m.ones(3)),
     ["weight", "[3]"]),
    ("rms_norm long", lambda m: m.nn.functional.rms_norm(_long(m), (3,)), ["rms_norm"]),
    ("local_response_norm 2-d", lambda m: m.nn.functional.local_response_norm(a(m, 2, 3), 2),
     ["3d", "local_response_norm"]),
    ("local_response_norm size 0", lambda m: m.nn.functional.local_response_norm(_x3(m), 0),
     ["kernel size", "local_response_norm"]),
    ("normalize dim", lambda m: m.nn.functional.normalize(_x3(m), dim=5), ["dimension", "5"]),
    ("normalize long", lambda m: m.nn.functional.normalize(_long(m).reshape(1, 3)),
     ["vector_norm", "long"]),
    ("glu odd", lambda m: m.nn.functional.glu(_x3(m), 1), ["halving", "size 3"]),
    ("glu 0-d", lambda m: m.nn.functional.glu(a(m)), ["glu", "scalars"]),
    ("glu dim", lambda m: m.nn.functional.glu(_x3(m), 4), ["dimension", "4"]),
    ("glu long", lambda m: m.nn.functional.glu(_long(m)[:2]), ["glu", "long"]),
    ("prelu weight size", lambda m: m.prelu(_x3(m), m.ones(2)), ["parameter numbers = 2",
                                                                 "channel size = 3"]),
    ("prelu weight 2-d", lambda m: m.prelu(_x3(m), m.ones(3, 1)), ["prelu", "ndim = 2"]),
    ("prelu dtypes", lambda m: m.prelu(_x3(m), m.ones(1).double()), ["prelu", "double"]),
    ("prelu long", lambda m: m.nn.functional.prelu(_long(m), _long(m)[:1]), ["prelu"]),
    ("rrelu bounds", lambda m: m.nn.functional.rrelu(_x3(m), 0.5, 0.1, True),
     ["lower bound", "upper bound"]),
    ("rrelu long", lambda m: m.nn.functional.rrelu(_long(m)), ["leaky_relu"]),
    ("softshrink negative", lambda m: m.nn.functional.softshrink(_x3(m), -1.0),
     ["lambda", "-1"]),
    ("hardshrink negative ok", lambda m: m.hardshrink(_x3(m), -1.0), None),
    ("softmin long", lambda m: m.nn.functional.softmin(_long(m), 0), ["softmax"]),
    ("threshold long ok", lambda m: m.threshold(_long(m), 1, 5), None),
    ("celu long", lambda m: m.celu(_long(m)), ["elu", "long"]),
    ("selu long", lambda m: m.selu(_long(m)), ["elu", "long"]),
    ("mish long", lambda m: m.nn.functional.mish(_long(m)), ["mish"]),
    ("hardsigmoid long", lambda m: m.nn.functional.hardsigmoid(_long(m)), ["hardsigmoid"]),
    ("hardswish long", lambda m: m.nn.functional.hardswish(_long(m)), ["hardswish"]),
    ("hardshrink long", lambda m: m.nn.functional.hardshrink(_long(m)), ["hardshrink"]),
    ("dropout1d p", lambda m: m.nn.functional.dropout1d(_x3(m), 1.5), ["dropout", "1.5"]),
    ("dropout1d 4-d", lambda m: m.nn.functional.dropout1d(a(m, 1, 2, 3, 4), 0.5),
     ["dropout1d", "4d"]),
    ("dropout2d p", lambda m: m.nn.functional.dropout2d(a(m, 2, 3, 2, 2), -0.5),
     ["dropout", "-0.5"]),
    ("dropout3d p eval", lambda m: m.nn.functional.dropout3d(a(m, 1, 2, 3, 4, 5), 2.0, False),
     ["dropout"]),
    ("alpha_dropout p", lambda m: m.nn.functional.alpha_dropout(_x3(m), -0.1, True),
     ["dropout"]),
    ("feature_alpha_dropout 1-d", lambda m: m.nn.functional.feature_alpha_dropout(
        a(m, 3), 0.5, True), ["feature dropout", "2 dimensions"]),
    ("dropout1d long", lambda m: m.nn.functional.dropout1d(_long(m).reshape(1, 3), 0.5),
     ["long"]),
    ("alpha_dropout long", lambda m: m.nn.functional.alpha_dropout(_long(m), 0.5, True),
     ["long"]),
    ("torch.dropout p", lambda m: m.dropout(_x3(m), 1.5, False), ["dropout", "1.5"]),
    ("torch.feature_dropout 1-d", lambda m: m.feature_dropout(a(m, 3), 0.5, True),
     ["feature dropout"]),
]


@pytest.mark.parametrize("fn,words", [c[1:] for c in NORM_CASES], ids=[c[0] for c in NORM_CASES])
def test_normalization_activation_dropout_arguments_match_torch(fn, words):
    check(fn, words)
# ---- losses, distances, embeddings (issue 8): bad reductions, target shapes and dtypes,
# indices out of range.  Their own test; CASES also lists them, for the coverage check above.


def f(m):
    return m.nn.functional


LOSS_CASES = [
    ("smooth_l1 reduction", lambda m: f(m).smooth_l1_loss(a(m, 2), a(m, 2), reduction="avg"),
     ["avg"]),
    ("smooth_l1 beta<0", lambda m: f(m).smooth_l1_loss(a(m, 2), a(m, 2), beta=-1.0), ["beta"]),
    ("huber delta=0", lambda m: f(m).huber_loss(a(m, 2), a(m, 2), delta=0.0), ["delta"]),
    ("huber weight shape", lambda m: f(m).huber_loss(a(m, 2, 3), a(m, 2, 3), weight=a(m, 3)),
     ["weight"]),
    ("soft_margin reduction", lambda m: f(m).soft_margin_loss(a(m, 2), a(m, 2), reduction="x"),
     ["reduction"]),
    ("margin_ranking ndim", lambda m: f(m).margin_ranking_loss(a(m, 2), a(m, 2), a(m, 2, 1)),
     ["margin_ranking_loss"]),
    ("hinge reduction", lambda m: f(m).hinge_embedding_loss(a(m, 2), a(m, 2), reduction="x"),
     ["reduction"]),
    ("cosine_embedding 2-d target", lambda m: f(m).cosine_embedding_loss(
        a(m, 2, 3), a(m, 2, 3), a(m, 2, 1)), ["target"]),
    ("cosine_embedding 1-d target 1-d inputs", lambda m: f(m).cosine_embedding_loss(
        a(m, 3), a(m, 3), a(m, 1)), ["2d input"]),
    ("multi_margin p=3", lambda m: f(m).multi_margin_loss(a(m, 2, 3), i(m, [0, 1]), p=3),
     ["p == 1"]),
    ("multi_margin float target", lambda m: f(m).multi_margin_loss(a(m, 2, 3), a(m, 2)),
     ["long"]),
    ("multi_margin target shape", lambda m: f(m).multi_margin_loss(a(m, 2, 3), i(m, [0])),
     ["target"]),
    ("multi_margin 2-d weight", lambda m: f(m).multi_margin_loss(
        a(m, 2, 3), i(m, [0, 1]), weight=a(m, 1, 3)), ["weight"]),
    ("multilabel_margin shape", lambda m: f(m).multilabel_margin_loss(
        a(m, 2, 3), i(m, [[0, -1, 0]])), ["target"]),
    ("multilabel_soft_margin reduction", lambda m: f(m).multilabel_soft_margin_loss(
        a(m, 2, 3), a(m, 2, 3), reduction="x"), ["not valid"]),
    ("poisson_nll reduction", lambda m: f(m).poisson_nll_loss(a(m, 2), a(m, 2), reduction="x"),
     ["reduction"]),
    ("gaussian_nll var size", lambda m: f(m).gaussian_nll_loss(a(m, 2, 3), a(m, 2, 3),
                                                                a(m, 2, 2) + 1), ["var"]),
    ("gaussian_nll negative var", lambda m: f(m).gaussian_nll_loss(a(m, 2), a(m, 2), -a(m, 2)
                                                                    - 1), ["negative"]),
    ("gaussian_nll negative float var", lambda m: f(m).gaussian_nll_loss(a(m, 2), a(m, 2),
                                                                          -1.0), ["negative"]),
    ("gaussian_nll int var", lambda m: f(m).gaussian_nll_loss(a(m, 2), a(m, 2), 1), ["var"]),
    ("kl_div reduction", lambda m: f(m).kl_div(a(m, 2), a(m, 2), reduction="x"), ["reduction"]),
    ("bce logits pos_weight shape", lambda m: f(m).binary_cross_entropy_with_logits(
        a(m, 2, 3), a(m, 2, 3), pos_weight=a(m, 2)), ["pos_weight", "[2]"]),
    ("ctc blank", lambda m: f(m).ctc_loss(a(m, 4, 1, 3).log_softmax(2), i(m, [[1]]), [4], [1],
                                           blank=3), ["blank"]),
    ("ctc input_lengths count", lambda m: f(m).ctc_loss(
        a(m, 4, 1, 3).log_softmax(2), i(m, [[1]]), [4, 4], [1]), ["input_lengths"]),
    ("ctc input_lengths > T", lambda m: f(m).ctc_loss(
        a(m, 4, 1, 3).log_softmax(2), i(m, [[1]]), [5], [1]), ["input_lengths"]),
    ("ctc float targets ok", lambda m: f(m).ctc_loss(a(m, 4, 1, 3).log_softmax(2),
                                                      m.tensor([[1.7]]), [4], [1]), None),
    ("ctc target lengths > width", lambda m: f(m).ctc_loss(
        a(m, 4, 1, 3).log_softmax(2), i(m, [[1]]), [4], [2]), ["targets"]),
    ("ctc reduction", lambda m: f(m).ctc_loss(a(m, 4, 1, 3).log_softmax(2), i(m, [[1]]), [4],
                                               [1], reduction="x"), ["reduction"]),
    ("cosine_similarity dim oob", lambda m: m.cosine_similarity(a(m, 2, 3), a(m, 2, 3), dim=2),
     ["cosine_similarity"]),
    ("cosine_similarity ok", lambda m: m.cosine_similarity(a(m, 2, 3), a(m, 2, 3), 0), None),
    ("cosine_similarity no broadcast", lambda m: m.cosine_similarity(a(m, 2, 3), a(m, 4, 3)),
     ["size"]),
    ("pdist 1-d", lambda m: m.pdist(a(m, 3)), ["pdist"]),
    ("pairwise_distance shapes", lambda m: m.pairwise_distance(a(m, 2, 3), a(m, 4, 3)),
     ["size"]),
    ("triplet margin<=0", lambda m: f(m).triplet_margin_loss(a(m, 2), a(m, 2), a(m, 2),
                                                              margin=0.0), ["margin"]),
    ("embedding index oob", lambda m: f(m).embedding(i(m, [3]), a(m, 3, 2)),
     ["index out of range"]),
    ("embedding float index", lambda m: f(m).embedding(a(m, 2), a(m, 3, 2)), ["indices"]),
    ("one_hot oob", lambda m: f(m).one_hot(i(m, [3]), 3), ["num_classes"]),
    ("bilinear sizes", lambda m: m.bilinear(a(m, 2, 3), a(m, 2, 3), a(m, 1, 2, 3)),
     ["bilinear"]),
]
CASES += LOSS_CASES


@pytest.mark.parametrize("fn,words", [c[1:] for c in LOSS_CASES], ids=[c[0] for c in LOSS_CASES])
def test_losses_refuse_as_torch(fn, words):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
# ---- padding, resampling, attention (issue 8: ops/padding.py, resample.py, grid_sample.py,
# attention.py)
def _nnf(m):
    return m.nn.functional


def _mha(m, q_shape=(3, 2, 4), kv_shape=(5, 2, 4), e=4, heads=2, **kw):
    return _nnf(m).multi_head_attention_forward(
        a(m, *q_shape), a(m, *kv_shape), a(m, *kv_shape), e, heads, a(m, 3 * e, e), None, None,
        None, False, 0.0, a(m, e, e), None, **kw)


# (a table of its own: the CASES test above is parametrized before this point)
RESAMPLE_CASES = [
    ("pad bad mode", lambda m: _nnf(m).pad(a(m, 1, 2, 3), (1, 1), mode="wrap"), ["padding mode"]),
    ("pad odd length", lambda m: _nnf(m).pad(a(m, 1, 2, 3), (1, 1, 1)), ["divisible by 2"]),
    ("pad too long", lambda m: _nnf(m).pad(a(m, 2, 3), (1,) * 6), ["padding length"]),
    ("pad float entry", lambda m: _nnf(m).pad(a(m, 2, 3), (1.5, 1)), ["pad"]),
    ("pad reflect too wide", lambda m: _nnf(m).pad(a(m, 1, 2, 3), (3, 0), mode="reflect"),
     ["padding size", "(3, 0)"]),
    ("pad reflect 2d ok", lambda m: _nnf(m).pad(a(m, 1, 3, 3), (2, 2, 1, 1), "reflect"), None),
    ("pad replicate dims", lambda m: _nnf(m).pad(a(m, 2, 3), (1, 1, 1, 1), mode="replicate"),
     ["padding size 4", "2d input"]),
    ("pad replicate 1-d input", lambda m: _nnf(m).pad(a(m, 3), (1, 1), mode="replicate"),
     ["not supported"]),
    ("pad circular wraps twice", lambda m: _nnf(m).pad(a(m, 1, 2), (3, 0), mode="circular"),
     ["wrapping"]),
    ("pad value with reflect", lambda m: _nnf(m).pad(a(m, 1, 3), (1, 1), "reflect", 1.0),
     ["value"]),
    ("pad value 0 with reflect ok", lambda m: _nnf(m).pad(a(m, 1, 3), (1, 1), "reflect", 0.0),
     None),
    ("pad replicate crop all", lambda m: _nnf(m).pad(a(m, 1, 3), (-2, -1), mode="replicate"),
     ["too small"]),
    ("pad reflect empty channel", lambda m: _nnf(m).pad(a(m, 2, 0, 3), (1, 1), mode="reflect"),
     ["non-zero"]),
    ("interpolate bad mode", lambda m: _nnf(m).interpolate(a(m, 1, 1, 2, 2), scale_factor=2,
                                                           mode="cubic"), ["cubic"]),
    ("interpolate size and scale", lambda m: _nnf(m).interpolate(a(m, 1, 1, 2), size=3,
                                                                 scale_factor=2), ["only one"]),
    ("interpolate neither", lambda m: _nnf(m).interpolate(a(m, 1, 1, 2)), ["either size"]),
    ("interpolate 2-d input", lambda m: _nnf(m).interpolate(a(m, 2, 2), scale_factor=2),
     ["only 3d, 4d and 5d"]),
    ("interpolate linear on 4-d", lambda m: _nnf(m).interpolate(
        a(m, 1, 1, 2, 2), scale_factor=2, mode="linear"), ["linear", "3d"]),
    ("interpolate bilinear on 5-d", lambda m: _nnf(m).interpolate(
        a(m, 1, 1, 2, 2, 2), size=3, mode="bilinear"), ["bilinear", "4d"]),
    ("interpolate size length", lambda m: _nnf(m).interpolate(a(m, 1, 1, 2, 2), size=(3,)),
     ["spatial dimensions"]),
    ("interpolate scale length", lambda m: _nnf(m).interpolate(a(m, 1, 1, 2, 2),
                                                               scale_factor=(2, 2, 2)),
     ["scale_factor"]),
    ("interpolate float size", lambda m: _nnf(m).interpolate(a(m, 1, 1, 2, 2), size=(3.0, 2)),
     ["size"]),
    ("interpolate align nearest", lambda m: _nnf(m).interpolate(
        a(m, 1, 1, 2), scale_factor=2, align_corners=True), ["align_corners"]),
    ("interpolate recompute with size", lambda m: _nnf(m).interpolate(
        a(m, 1, 1, 2), size=4, recompute_scale_factor=True), ["recompute_scale_factor"]),
    ("interpolate zero output", lambda m: _nnf(m).interpolate(a(m, 1, 1, 2, 2), scale_factor=0.2),
     ["greater than 0"]),
    ("interpolate antialias bicubic ok", lambda m: _nnf(m).interpolate(
        a(m, 1, 1, 4, 4), scale_factor=0.5, mode="bicubic", antialias=True), None),
    ("interpolate lanczos no antialias", lambda m: _nnf(m).interpolate(
        a(m, 1, 1, 4, 4), scale_factor=0.5, mode="lanczos"), ["antialias"]),
    ("interpolate lanczos align", lambda m: _nnf(m).interpolate(
        a(m, 1, 1, 4, 4), size=2, mode="lanczos", antialias=True, align_corners=True),
     ["align_corners"]),
    ("interpolate lanczos 3-d", lambda m: _nnf(m).interpolate(
        a(m, 1, 1, 4), size=2, mode="lanczos"), ["lanczos"]),
    ("interpolate antialias nearest", lambda m: _nnf(m).interpolate(
        a(m, 1, 1, 2, 2), scale_factor=2, antialias=True), ["anti-alias"]),
    ("interpolate integer bilinear", lambda m: _nnf(m).interpolate(
        i(m, [[[1, 2]]]), scale_factor=2, mode="linear"), ["not implemented"]),
    ("interpolate area ok", lambda m: _nnf(m).interpolate(a(m, 1, 2, 5), size=2, mode="area"),
     None),
    ("grid_sample bad mode", lambda m: _nnf(m).grid_sample(
        a(m, 1, 1, 2, 2), a(m, 1, 1, 1, 2), mode="linear", align_corners=False), ["mode"]),
    ("grid_sample bad padding", lambda m: _nnf(m).grid_sample(
        a(m, 1, 1, 2, 2), a(m, 1, 1, 1, 2), padding_mode="wrap", align_corners=False),
     ["padding_mode"]),
    ("grid_sample batch", lambda m: _nnf(m).grid_sample(
        a(m, 2, 1, 2, 2), a(m, 1, 1, 1, 2), align_corners=False), ["batch size"]),
    ("grid_sample last dim", lambda m: _nnf(m).grid_sample(
        a(m, 1, 1, 2, 2), a(m, 1, 1, 1, 3), align_corners=False), ["last dimension"]),
    ("grid_sample grid rank", lambda m: _nnf(m).grid_sample(
        a(m, 1, 1, 2, 2), a(m, 1, 1, 1, 1, 2), align_corners=False), ["same number"]),
    ("grid_sample dtype", lambda m: _nnf(m).grid_sample(
        a(m, 1, 1, 2, 2), a(m, 1, 1, 1, 2).double(), align_corners=False), ["double"]),
    ("grid_sample bicubic 5-d", lambda m: _nnf(m).grid_sample(
        a(m, 1, 1, 2, 2, 2), a(m, 1, 1, 1, 1, 3), mode="bicubic", align_corners=False),
     ["bicubic"]),
    ("grid_sample empty image", lambda m: _nnf(m).grid_sample(
        a(m, 1, 1, 0, 2), a(m, 1, 1, 1, 2), align_corners=False), ["empty"]),
    ("affine_grid theta shape", lambda m: _nnf(m).affine_grid(a(m, 1, 2, 3), (1, 1, 2, 2, 2),
                                                              align_corners=False), ["nx3x4"]),
    ("affine_grid size rank", lambda m: _nnf(m).affine_grid(a(m, 1, 2, 3), (1, 1, 2),
                                                            align_corners=False), ["4d and 5d"]),
    ("affine_grid integer theta", lambda m: _nnf(m).affine_grid(
        i(m, [[[1, 0, 0], [0, 1, 0]]]), (1, 1, 2, 2), align_corners=False), ["floating"]),
    ("affine_grid zero size", lambda m: _nnf(m).affine_grid(a(m, 1, 2, 3), (1, 1, 0, 2),
                                                            align_corners=False), ["positive"]),
    ("pixel_shuffle channels", lambda m: m.pixel_shuffle(a(m, 1, 3, 2, 2), 2), ["divisible"]),
    ("pixel_shuffle 2-d", lambda m: m.pixel_shuffle(a(m, 4, 2), 2), ["3 dimensions"]),
    ("pixel_unshuffle height", lambda m: m.pixel_unshuffle(a(m, 1, 1, 3, 4), 2), ["height"]),
    ("pixel_unshuffle width", lambda m: m.pixel_unshuffle(a(m, 1, 1, 4, 3), 2), ["width"]),
    ("channel_shuffle groups", lambda m: m.channel_shuffle(a(m, 1, 4, 2), 3), ["divisible"]),
    ("channel_shuffle zero groups", lambda m: m.channel_shuffle(a(m, 1, 4, 2), 0), ["groups"]),
    ("sdpa dtypes", lambda m: _nnf(m).scaled_dot_product_attention(
        a(m, 2, 3), a(m, 2, 3).double(), a(m, 2, 3)), ["same dtype"]),
    ("sdpa 1-d query", lambda m: _nnf(m).scaled_dot_product_attention(
        a(m, 3), a(m, 2, 3), a(m, 2, 3)), ["2 dimensional"]),
    ("sdpa key width", lambda m: _nnf(m).scaled_dot_product_attention(
        a(m, 2, 3), a(m, 2, 4), a(m, 2, 3)), ["scaled_dot_product_attention", "[2, 4]"]),
    ("sdpa value length", lambda m: _nnf(m).scaled_dot_product_attention(
        a(m, 2, 3), a(m, 4, 3), a(m, 3, 3)), ["scaled_dot_product_attention", "[3, 3]"]),
    ("sdpa mask shape", lambda m: _nnf(m).scaled_dot_product_attention(
        a(m, 1, 2, 3), a(m, 1, 4, 3), a(m, 1, 4, 3), attn_mask=m.ones(3, 4, dtype=m.bool)),
     ["size"]),
    ("sdpa mask dtype", lambda m: _nnf(m).scaled_dot_product_attention(
        a(m, 2, 3), a(m, 2, 3), a(m, 2, 3), attn_mask=i(m, [[1, 0], [0, 1]])), ["attn_mask"]),
    ("sdpa causal and mask", lambda m: _nnf(m).scaled_dot_product_attention(
        a(m, 2, 3), a(m, 2, 3), a(m, 2, 3), attn_mask=m.ones(2, 2, dtype=m.bool),
        is_causal=True), ["is_causal"]),
    ("sdpa gqa heads", lambda m: _nnf(m).scaled_dot_product_attention(
        a(m, 1, 3, 2, 2), a(m, 1, 2, 2, 2), a(m, 1, 2, 2, 2), enable_gqa=True), ["heads"]),
    ("sdpa dropout > 1", lambda m: _nnf(m).scaled_dot_product_attention(
        a(m, 2, 3), a(m, 2, 3), a(m, 2, 3), dropout_p=1.5), ["dropout"]),
    ("mha embed dim", lambda m: _mha(m, e=4, q_shape=(3, 2, 6), kv_shape=(5, 2, 6)),
     ["embedding dimension"]),
    ("mha heads", lambda m: _mha(m, heads=3), ["divisible"]),
    ("mha 4-d query", lambda m: _mha(m, q_shape=(1, 3, 2, 4)), ["query"]),
    ("mha attn_mask shape", lambda m: _mha(m, attn_mask=a(m, 3, 4)), ["2d attn_mask"]),
    ("mha attn_mask 3-d shape", lambda m: _mha(m, attn_mask=a(m, 2, 3, 5)), ["3d attn_mask"]),
    ("mha key_padding_mask shape", lambda m: _mha(
        m, key_padding_mask=m.zeros(2, 4, dtype=m.bool)), ["key_padded_mask"]),
    ("mha causal without mask", lambda m: _mha(m, is_causal=True), ["attn_mask"]),
    ("mha integer mask", lambda m: _mha(m, attn_mask=m.zeros(3, 5, dtype=m.int64)), ["bool"]),
]


@pytest.mark.parametrize("fn,words", [c[1:] for c in RESAMPLE_CASES],
                         ids=[c[0] for c in RESAMPLE_CASES])
def test_bad_resampling_and_attention_arguments_match_torch(fn, words):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (MHA's mask dtype notice)
        check(fn, words)


# ---- linear algebra (issue 11): products taking dims, matrix powers
LINALG_CASES = [
    ("cross dim oob", lambda m: m.cross(a(m, 2, 3), a(m, 2, 3), dim=2), ["cross"]),
    ("cross dim not 3", lambda m: m.cross(a(m, 2, 3), a(m, 2, 3), dim=0), ["cross", "3"]),
    ("cross ranks differ", lambda m: m.linalg.cross(a(m, 2, 3), a(m, 3)), ["cross"]),
    ("cross broadcast ok", lambda m: m.linalg.cross(a(m, 2, 1, 3), a(m, 1, 4, 3)), None),
    ("cross method ok", lambda m: a(m, 3, 2).cross(a(m, 3, 2), dim=0), None),
    ("tensordot sizes differ", lambda m: m.tensordot(a(m, 2, 3), a(m, 2, 3), dims=1),
     ["contracted"]),
    ("tensordot negative", lambda m: m.tensordot(a(m, 2, 3), a(m, 3, 2), dims=-1),
     ["tensordot"]),
    ("tensordot too many", lambda m: m.tensordot(a(m, 2, 3), a(m, 3, 2), dims=3),
     ["tensordot"]),
    ("tensordot dim oob", lambda m: m.tensordot(a(m, 2, 3), a(m, 3, 2), dims=([2], [0])),
     ["tensordot"]),
    ("tensordot lists differ", lambda m: m.tensordot(a(m, 2, 3), a(m, 3, 2),
                                                     dims=([1], [0, 1])), ["tensordot"]),
    ("tensordot pairs ok", lambda m: m.tensordot(a(m, 2, 3), a(m, 3, 2), dims=([1, 0], [0, 1])),
     None),
    ("matrix_power not square", lambda m: m.matrix_power(a(m, 2, 3), 2), ["matrix_power"]),
    ("matrix_power 1-d", lambda m: m.linalg.matrix_power(a(m, 3), 2), ["matrix_power"]),
    ("matrix_power float n", lambda m: m.linalg.matrix_power(a(m, 2, 2), 1.5),
     ["matrix_power"]),
    ("matrix_power ok", lambda m: a(m, 2, 2).matrix_power(3), None),
]
CASES.extend(LINALG_CASES)  # (the coverage test above reads CASES when it runs)


@pytest.mark.parametrize("fn,words", [c[1:] for c in LINALG_CASES],
                         ids=[c[0] for c in LINALG_CASES])
def test_linalg_arguments_match_torch(fn, words):
    check(fn, words)


# ---- decompositions, least squares, rank, condition numbers (ops/linalg_decomp*.py)
DECOMP_CASES = [
    ("cholesky not square", lambda m: m.linalg.cholesky(a(m, 2, 3)), ["cholesky", "square"]),
    ("cholesky 1-d", lambda m: m.linalg.cholesky(a(m, 3)), ["cholesky", "2 dimensions"]),
    ("cholesky int", lambda m: m.linalg.cholesky(m.ones(2, 2, dtype=m.int64)),
     ["cholesky", "long"]),
    ("cholesky upper int", lambda m: m.linalg.cholesky(m.eye(2), upper=1), ["upper", "bool"]),
    ("cholesky_ex not square", lambda m: m.linalg.cholesky_ex(a(m, 3, 2)), ["square"]),
    ("old cholesky not square", lambda m: m.cholesky(a(m, 2, 3)), ["cholesky", "square"]),
    ("qr 1-d", lambda m: m.linalg.qr(a(m, 3)), ["qr", "2 dimensions"]),
    ("qr bad mode", lambda m: m.linalg.qr(a(m, 3, 2), mode="x"), ["mode", "'x'"]),
    ("qr int", lambda m: m.linalg.qr(m.ones(2, 2, dtype=m.int64)), ["qr", "long"]),
    ("eigh not square", lambda m: m.linalg.eigh(a(m, 2, 3)), ["eigh", "square"]),
    ("eigh bad UPLO", lambda m: m.linalg.eigh(m.eye(2), UPLO="X"), ["uplo", "x"]),
    ("eigvalsh not square", lambda m: m.linalg.eigvalsh(a(m, 3, 2)), ["eigvalsh", "square"]),
    ("svd 1-d", lambda m: m.linalg.svd(a(m, 3)), ["svd", "2 dimensions"]),
    ("svd int", lambda m: m.linalg.svd(m.ones(2, 2, dtype=m.int64)), ["svd", "long"]),
    ("svdvals 1-d", lambda m: m.linalg.svdvals(a(m, 3)), ["2 dimensions"]),
    ("old svd 1-d", lambda m: m.svd(a(m, 3)), ["svd", "2 dimensions"]),
    ("lstsq rows differ", lambda m: m.linalg.lstsq(a(m, 3, 2), a(m, 2, 2)),
     ["lstsq", "size(-2)"]),
    ("lstsq vector rows differ", lambda m: m.linalg.lstsq(a(m, 3, 2), a(m, 2)),
     ["lstsq", "size(-1)"]),
    ("lstsq 1-d", lambda m: m.linalg.lstsq(a(m, 3), a(m, 3)), ["lstsq", "2 dimensions"]),
    ("lstsq ranks", lambda m: m.linalg.lstsq(a(m, 2, 4, 2), a(m, 4)), ["lstsq", "dim()"]),
    ("lstsq bad driver", lambda m: m.linalg.lstsq(a(m, 3, 2), a(m, 3, 1), driver="foo"),
     ["driver", "gelsd"]),
    ("lstsq dtypes differ", lambda m: m.linalg.lstsq(a(m, 3, 2).double(), a(m, 3, 1)),
     ["lstsq", "dtype"]),
    ("lstsq int", lambda m: m.linalg.lstsq(m.ones(3, 2, dtype=m.int64),
                                           m.ones(3, 2, dtype=m.int64)), ["float"]),
    ("lstsq ok", lambda m: m.linalg.lstsq(2 * m.eye(3)[:, :2], a(m, 3, 1), driver="gelsd"),
     None),
    ("matrix_rank 1-d", lambda m: m.linalg.matrix_rank(a(m, 3)), ["matrix_rank", "2 dim"]),
    ("matrix_rank hermitian wide", lambda m: m.linalg.matrix_rank(a(m, 2, 3), hermitian=True),
     ["square"]),
    ("matrix_rank tol and atol", lambda m: m.linalg.matrix_rank(m.eye(3), tol=0.5, atol=0.1),
     ["tol"]),
    ("cond 1-d", lambda m: m.linalg.cond(a(m, 3)), ["cond", "2 dimensions"]),
    ("cond 1 not square", lambda m: m.linalg.cond(a(m, 2, 3), 1), ["cond", "square"]),
    ("cond bad p", lambda m: m.linalg.cond(m.eye(2), 3), ["cond", "norm type"]),
    ("cond bad name", lambda m: m.linalg.cond(m.eye(2), "abc"), ["cond", "abc"]),
    ("cond wide ok", lambda m: m.linalg.cond(a(m, 2, 3)), None),
]
CASES.extend(DECOMP_CASES)  # (the coverage test above reads CASES when it runs)


@pytest.mark.parametrize("fn,words", [c[1:] for c in DECOMP_CASES],
                         ids=[c[0] for c in DECOMP_CASES])
def test_decomposition_arguments_match_torch(fn, words):
    check(fn, words)


# ---- linear algebra (issue 11): the LU family, Cholesky solves, matrix functions (sizes, dims)
def _piv(m, *values):
    return m.tensor(list(values), dtype=m.int32)


LU_CASES = [
    ("lu_factor 1-d", lambda m: m.linalg.lu_factor(a(m, 3)), ["lu_factor", "2 or more"]),
    ("lu_factor no pivot", lambda m: m.linalg.lu_factor(a(m, 2, 2), pivot=False), ["pivot"]),
    ("lu_factor wide ok", lambda m: m.linalg.lu_factor(a(m, 2, 3) + 1), None),
    ("lu 1-d", lambda m: m.linalg.lu(a(m, 3)), ["2 or more"]),
    ("lu_unpack pivots dtype", lambda m: m.lu_unpack(m.eye(3), m.ones(3)), ["int32"]),
    ("lu_solve rows differ", lambda m: m.linalg.lu_solve(m.eye(3), _piv(m, 1, 2, 3),
                                                         a(m, 4, 2)), ["incompatible"]),
    ("lu_solve right cols differ", lambda m: m.linalg.lu_solve(
        m.eye(3), _piv(m, 1, 2, 3), a(m, 2, 4), left=False), ["incompatible"]),
    ("lu_solve not square", lambda m: m.linalg.lu_solve(a(m, 3, 2), _piv(m, 1, 2), a(m, 3, 1)),
     ["square"]),
    ("lu_solve pivots int64", lambda m: m.linalg.lu_solve(m.eye(3), m.tensor([1, 2, 3]),
                                                          a(m, 3, 1)), ["int32"]),
    ("lu_solve batch broadcast ok", lambda m: m.linalg.lu_solve(
        m.eye(2).expand(3, 2, 2), _piv(m, 1, 2).expand(3, 2), a(m, 2, 1, 2, 1)), None),
    ("cholesky_solve sizes", lambda m: m.cholesky_solve(a(m, 3, 2), m.eye(4)),
     ["cholesky_solve", "4 by 4", "3 by 2"]),
    ("cholesky_solve 1-d b", lambda m: m.cholesky_solve(a(m, 3), m.eye(3)), ["cholesky_solve"]),
    ("cholesky_inverse not square", lambda m: m.cholesky_inverse(a(m, 3, 4)), ["square"]),
    ("matrix_exp not square", lambda m: m.linalg.matrix_exp(a(m, 3, 4)), ["square"]),
    ("vander N=1", lambda m: m.linalg.vander(a(m, 3), N=1), ["n must be greater than 1"]),
    ("vander N ok", lambda m: m.linalg.vander(a(m, 2, 3), N=5), None),
    ("tensorinv ind=0", lambda m: m.linalg.tensorinv(a(m, 2, 2), ind=0), ["ind"]),
    ("tensorinv sizes", lambda m: m.linalg.tensorinv(a(m, 4, 6, 8), ind=2), ["prod", "8 != 24"]),
    ("tensorsolve sizes", lambda m: m.linalg.tensorsolve(a(m, 2, 3, 6), a(m, 2, 2)),
     ["prod", "6 != 4"]),
    ("householder wide", lambda m: m.linalg.householder_product(a(m, 3, 4), a(m, 2)),
     ["householder_product", "input.shape[-2]"]),
    ("householder tau long", lambda m: m.linalg.householder_product(a(m, 4, 3), a(m, 4)),
     ["householder_product", "tau.shape[-1]"]),
    ("ormqr other rows", lambda m: m.ormqr(a(m, 4, 3), a(m, 3), a(m, 3, 2)),
     ["ormqr", "other.shape[-2]"]),
    ("ormqr tau size", lambda m: m.ormqr(a(m, 4, 3), a(m, 2), a(m, 4, 2)), ["ormqr", "tau"]),
    ("geqrf 1-d", lambda m: m.geqrf(a(m, 3)), ["geqrf"]),
]
CASES.extend(LU_CASES)  # (the coverage test above reads CASES when it runs)


@pytest.mark.parametrize("fn,words", [c[1:] for c in LU_CASES], ids=[c[0] for c in LU_CASES])
def test_lu_and_matrix_function_arguments_match_torch(fn, words):
    check(fn, words)


# ---- issue 6: counting and searching ops (ops/counting.py)
COUNTING_CASES = [
    ("unique dim oob", lambda m: m.unique(a(m, 2, 3), dim=2), ["unique"]),
    ("unique dim neg oob", lambda m: a(m, 2, 3).unique(dim=-3), ["unique"]),
    ("unique dim ok", lambda m: m.unique(a(m, 2, 3), dim=-1), None),
    ("unique 0-d dim", lambda m: m.unique(a(m), dim=0), ["unique"]),
    ("unique_consecutive dim oob", lambda m: m.unique_consecutive(a(m, 2), dim=1),
     ["unique_consecutive"]),
    ("unique_consecutive dim ok", lambda m: a(m, 2, 3).unique_consecutive(dim=1), None),
    ("count_nonzero dim oob", lambda m: m.count_nonzero(a(m, 2, 3), dim=2), ["count_nonzero"]),
    ("count_nonzero dims repeat", lambda m: m.count_nonzero(a(m, 2, 3), dim=(0, -2)),
     ["multiple times"]),
    ("count_nonzero dims ok", lambda m: a(m, 2, 3).count_nonzero(dim=(0, 1)), None),
    ("unravel_index float", lambda m: m.unravel_index(a(m, 2), (2, 3)), ["indices"]),
    ("unravel_index shape ok", lambda m: m.unravel_index(i(m, [1, 5]), shape=(2, 3)), None),
    ("unravel_index negative shape", lambda m: m.unravel_index(i(m, [1]), (2, -3)), ["shape"]),
]
CASES.extend(COUNTING_CASES)  # (the coverage test above reads CASES when it runs)


@pytest.mark.parametrize("fn,words", [c[1:] for c in COUNTING_CASES],
                         ids=[c[0] for c in COUNTING_CASES])
def test_counting_arguments_match_torch(fn, words):
    check(fn, words)


# ---- issue 6: factories and storage methods (ops/factories.py, ops/tensor_extras.py)
FACTORY_CASES = [
    ("randperm negative", lambda m: m.randperm(-2), ["randperm"]),
    ("randperm float n", lambda m: m.randperm(2.5), ["randperm"]),
    ("randperm zero ok", lambda m: m.randperm(0), None),
    ("logspace negative steps", lambda m: m.logspace(0, 1, -1), ["steps"]),
    ("logspace zero steps ok", lambda m: m.logspace(0, 1, 0), None),
    ("narrow_copy start oob", lambda m: m.narrow_copy(a(m, 2, 3), 1, 4, 1), ["narrow"]),
    ("narrow_copy length oob", lambda m: a(m, 2, 3).narrow_copy(1, 2, 2), ["narrow"]),
    ("narrow_copy dim oob", lambda m: a(m, 2, 3).narrow_copy(2, 0, 1), ["narrow_copy"]),
    ("narrow_copy negative length", lambda m: a(m, 2, 3).narrow_copy(1, 0, -1), ["narrow"]),
    ("narrow_copy ok", lambda m: a(m, 2, 3).narrow_copy(-1, -2, 2), None),
    ("resize_ negative", lambda m: a(m, 2).resize_(2, -1), ["negative dimension"]),
    ("resize_ float size", lambda m: a(m, 2).resize_(2.0), ["resize_"]),
    ("resize_ ok", lambda m: a(m, 2, 3).resize_((3, 2)), None),
]
CASES.extend(FACTORY_CASES)  # (the coverage test above reads CASES when it runs)


@pytest.mark.parametrize("fn,words", [c[1:] for c in FACTORY_CASES],
                         ids=[c[0] for c in FACTORY_CASES])
def test_factory_arguments_match_torch(fn, words):
    check(fn, words)


# ---- issue 6: strided views (ops/strided.py)
STRIDED_CASES = [
    ("as_strided out of bounds", lambda m: m.as_strided(a(m, 4), (3,), (2,)), ["out of bounds"]),
    ("as_strided negative size", lambda m: a(m, 4).as_strided((-1,), (1,)),
     ["negative dimension"]),
    ("as_strided lengths differ", lambda m: a(m, 4).as_strided((2, 2), (1,)), ["stride"]),
    ("as_strided float size", lambda m: a(m, 4).as_strided((2.0,), (1,)), ["size"]),
    ("as_strided ok", lambda m: a(m, 2, 3).as_strided(size=(3, 2), stride=(1, 3)), None),
    ("as_strided_ out of bounds", lambda m: a(m, 4).as_strided_((5,), (1,)), ["out of bounds"]),
    ("as_strided_ ok", lambda m: m.as_strided_(a(m, 2, 3), (3, 2), (1, 3)), None),
    ("as_strided_scatter src shape", lambda m: m.as_strided_scatter(
        a(m, 4), a(m, 3), (2,), (1,)), ["src"]),
    ("as_strided_scatter out of bounds", lambda m: a(m, 4).as_strided_scatter(
        a(m, 3), (3,), (2,)), ["out of bounds"]),
    ("as_strided_scatter ok", lambda m: m.as_strided_scatter(a(m, 2, 3), a(m, 2), size=(2,),
                                                             stride=(3,), storage_offset=1),
     None),
]
CASES.extend(STRIDED_CASES)  # (the coverage test above reads CASES when it runs)


@pytest.mark.parametrize("fn,words", [c[1:] for c in STRIDED_CASES],
                         ids=[c[0] for c in STRIDED_CASES])
def test_strided_arguments_match_torch(fn, words):
    check(fn, words)


# ---- issue 6 leftovers (ops/leftovers.py)
LEFTOVER_CASES = [
    ("unsafe_split dim", lambda m: m.unsafe_split(a(m, 4), 2, dim=3), ["dim"]),
    ("unsafe_split negative size", lambda m: a(m, 4).unsafe_split(-1), ["split_size"]),
    ("unsafe_split_with_sizes sum", lambda m: m.unsafe_split_with_sizes(a(m, 4), [1, 2]),
     ["split_sizes"]),
    ("unsafe_chunk zero", lambda m: m.unsafe_chunk(a(m, 4), 0), ["chunk"]),
    ("unsafe_chunk dim", lambda m: a(m, 2, 2).unsafe_chunk(2, dim=-3), ["dim"]),
    ("nonzero_static negative size", lambda m: m.nonzero_static(a(m, 3), size=-2), ["size"]),
    ("norm_except_dim dim", lambda m: m.norm_except_dim(a(m, 2, 3), 2, 4), ["dim"]),
    ("nuclear_norm 1-d", lambda m: m.nuclear_norm(a(m, 3)), ["dim"]),
    ("frobenius_norm dim", lambda m: m.frobenius_norm(a(m, 2, 3), (0, 5)), ["dim"]),
    ("empty_strided lengths", lambda m: m.empty_strided((2, 3), (1,)), ["stride"]),
    ("empty_strided negative", lambda m: m.empty_strided((2, -3), (3, 1)), ["negative"]),
    ("new_empty_strided negative", lambda m: a(m, 2).new_empty_strided((-1,), (1,)),
     ["negative"]),
]
CASES.extend(LEFTOVER_CASES)  # (the coverage test above reads CASES when it runs)


@pytest.mark.parametrize("fn,words", [c[1:] for c in LEFTOVER_CASES],
                         ids=[c[0] for c in LEFTOVER_CASES])
def test_leftover_arguments_match_torch(fn, words):
    check(fn, words)


# ---- issue 6 leftovers: the *_copy functions (ops/view_copies.py)
VIEW_COPY_CASES = [
    ("transpose_copy dim", lambda m: m.transpose_copy(a(m, 2, 3), 0, 2), ["dim"]),
    ("permute_copy dims", lambda m: m.permute_copy(a(m, 2, 3), (0, 0)), ["dim"]),
    ("view_copy size", lambda m: m.view_copy(a(m, 2, 3), (4,)), ["size"]),
    ("unsqueeze_copy dim", lambda m: m.unsqueeze_copy(a(m, 2), 3), ["dim"]),
    ("squeeze_copy dim", lambda m: m.squeeze_copy(a(m, 2), 2), ["dim"]),
    ("expand_copy size", lambda m: m.expand_copy(a(m, 2), (3,)), ["size"]),
    ("select_copy index", lambda m: m.select_copy(a(m, 2, 3), 1, 5), ["index"]),
    ("slice_copy dim", lambda m: m.slice_copy(a(m, 2, 3), 2), ["dim"]),
    ("diagonal_copy dims", lambda m: m.diagonal_copy(a(m, 2, 3), 0, 0, 0), ["dim"]),
    ("unfold_copy size", lambda m: m.unfold_copy(a(m, 3), 0, 4, 1), ["size"]),
    ("as_strided_copy bounds", lambda m: m.as_strided_copy(a(m, 4), (3,), (2,)),
     ["out of bounds"]),
]
CASES.extend(VIEW_COPY_CASES)  # (the coverage test above reads CASES when it runs)


@pytest.mark.parametrize("fn,words", [c[1:] for c in VIEW_COPY_CASES],
                         ids=[c[0] for c in VIEW_COPY_CASES])
def test_view_copy_arguments_match_torch(fn, words):
    check(fn, words)


# ---- issue 6 leftovers: lobpcg's n, slice_inverse's dim, affine_grid_generator's size,
# split_copy / unbind_copy dims, empty_permuted's size;
# embedding_bag, stft and the RNN functions have their error tables beside their op tests
LOBPCG_CASES = [
    ("lobpcg n too big", lambda m: m.lobpcg(m.eye(6, dtype=m.float64), n=3), ["3 x the number"]),
    ("lobpcg k too big", lambda m: m.lobpcg(m.eye(5, dtype=m.float64), k=2), ["3 x the number"]),
    ("affine_grid_generator size", lambda m: m.affine_grid_generator(
        m.zeros(1, 2, 3), [1, 2, 4], False), ["4d (spatial) or 5d"]),
    ("split_copy dim", lambda m: m.split_copy(m.zeros(2, 3), 1, 2), ["dim"]),
    ("split_with_sizes_copy sum", lambda m: m.split_with_sizes_copy(m.zeros(5), [1, 2]),
     ["sum exactly"]),
    ("unbind_copy dim", lambda m: m.unbind_copy(m.zeros(2, 3), -3), ["dim"]),
    ("empty_permuted duplicate", lambda m: m.empty_permuted((2, 3), (1, 1)), ["duplicate dim"]),
    ("empty_permuted negative", lambda m: m.empty_permuted((2, -3), (1, 0)), ["negative"]),
    ("slice_inverse storage", lambda m: m.slice_inverse(m.zeros(2, 4), m.zeros(6, 4), 0, 1, 5,
                                                        2), ["out of bounds"]),
]
CASES.extend(LOBPCG_CASES)  # (the coverage test above reads CASES when it runs)


@pytest.mark.parametrize("fn,words", [c[1:] for c in LOBPCG_CASES],
                         ids=[c[0] for c in LOBPCG_CASES])
def test_lobpcg_arguments_match_torch(fn, words):
    check(fn, words)


# ---- cumsum_/cumprod_ (their bool guard takes a dim), conv and dist dtypes (branch fuzzF)
FUZZF_CASES = [
    # (float tensors take the generic in-place path, whose dim errors say "method()")
    ("cumsum_ dim oob", lambda m: a(m, 2, 3).cumsum_(2), ["out of range"]),
    ("cumprod_ dim oob", lambda m: a(m, 2, 3).cumprod_(-3), ["out of range"]),
    ("cumsum_ bool dim oob", lambda m: _bool(m).cumsum_(1), ["cumsum"]),
    ("cumsum_ bool", lambda m: _bool(m).cumsum_(0), ["cumsum_out_cpu", "bool"]),
    ("cumprod_ bool", lambda m: _bool(m).cumprod_(0), ["cumprod_out_cpu", "bool"]),
    ("cumsum_ bool 0-d ok", lambda m: m.tensor(True).cumsum_(0), None),
    ("cumprod_ bool empty ok", lambda m: m.zeros(0, dtype=m.bool).cumprod_(0), None),
    ("cumsum_ bool dtype", lambda m: _bool(m).cumsum_(0, dtype=m.int64), ["bool"]),
    ("conv1d bool", lambda m: m.nn.functional.conv1d(m.ones(1, 2, 3, dtype=m.bool),
                                                    m.ones(1, 2, 2, dtype=m.bool)),
     ["slow_conv2d_cpu", "bool"]),
    ("conv_transpose1d bool", lambda m: m.nn.functional.conv_transpose1d(
        m.ones(1, 2, 3, dtype=m.bool), m.ones(2, 1, 2, dtype=m.bool)),
     ["slow_conv_transpose2d_out_cpu", "bool"]),
    ("conv_transpose1d long ok", lambda m: m.nn.functional.conv_transpose1d(
        m.ones(1, 2, 3, dtype=m.int64), m.ones(2, 1, 2, dtype=m.int64)), None),
    ("dist long long", lambda m: m.dist(_long(m), _long(m)), ["norm", "long"]),
    ("dist bool", lambda m: m.dist(_bool(m), _bool(m)), ["bool"]),
    ("dist float long ok", lambda m: m.dist(_f32(m), _long(m), 3), None),
    ("lerp number end", lambda m: m.lerp(_f32(m), 0.5, 0.5), ["end", "tensor"]),
    ("lerp number input", lambda m: m.lerp(0.5, _f32(m), 0.5), ["input", "tensor"]),
    ("lerp long 0-d float64 weight ok", lambda m: m.lerp(_long(m), _long(m),
                                                         m.tensor(0.5, dtype=m.float64)), None),
]
CASES.extend(FUZZF_CASES)  # (the coverage test above reads CASES when it runs)


@pytest.mark.parametrize("fn,words", [c[1:] for c in FUZZF_CASES],
                         ids=[c[0] for c in FUZZF_CASES])
def test_fuzzf_arguments_match_torch(fn, words):
    check(fn, words)
