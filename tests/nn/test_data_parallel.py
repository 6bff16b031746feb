"""nn.DataParallel against torch.nn.DataParallel on a machine without GPUs (where PyTorch
runs the module itself): outputs, gradients, ``module``, state_dict keys, repr; and, with
GPUs pretended, the errors for what retrograd does not do (a batch split across GPUs)."""

from __future__ import annotations

import numpy as np
import pytest

import retrograd as T
from retrograd.nn.parallel import data_parallel

torch = pytest.importorskip("torch")


class Net:
    """The same two-layer net in both libraries, float64 (the bias before BatchNorm has a
    gradient that is all cancellation), weights copied in."""

    @staticmethod
    def make(lib):
        lib.manual_seed(0)
        return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2),
                                 lib.nn.BatchNorm1d(2)).double()

    @classmethod
    def pair(cls):
        ours, theirs = cls.make(T), cls.make(torch)
        ours.load_state_dict({k: T.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
        return ours, theirs


@pytest.fixture(autouse=True)
def no_gpu():
    if data_parallel._gpu_count() or torch.cuda.is_available():
        pytest.skip("compares PyTorch's behaviour without GPUs")


@pytest.mark.parametrize("kwargs", [{}, {"device_ids": [0, 1]}, {"device_ids": ["cuda:3"]},
                                    {"output_device": 0, "dim": 1}])
def test_runs_the_module_as_torch(kwargs):
    # without a GPU PyTorch ignores device_ids, output_device and dim: so does retrograd
    ours, theirs = Net.pair()
    dp, tdp = T.nn.DataParallel(ours, **kwargs), torch.nn.DataParallel(theirs, **kwargs)
    assert dp.module is ours and dp.device_ids == tdp.device_ids == []
    x = np.random.default_rng(1).standard_normal((5, 3))
    xs, txs = T.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    out, tout = dp(xs), tdp(txs)
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-12,
                               atol=1e-12)
    assert type(out.grad_fn).__name__ == type(tout.grad_fn).__name__
    (out * out).sum().backward()
    (tout * tout).sum().backward()
    np.testing.assert_allclose(xs.grad.numpy(), txs.grad.numpy(), rtol=1e-10, atol=1e-12)
    for (name, p), (tname, q) in zip(dp.named_parameters(), tdp.named_parameters()):
        assert name == tname
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-10,
                                   atol=1e-12, err_msg=name)
    # the running statistics moved on the module itself, as there
    np.testing.assert_allclose(ours[3].running_mean.numpy(), theirs[3].running_mean.numpy(),
                               rtol=1e-12, atol=1e-12)


def test_state_dict_repr_and_modes_as_torch():
    ours, theirs = Net.pair()
    dp, tdp = T.nn.DataParallel(ours), torch.nn.DataParallel(theirs)
    assert list(dp.state_dict()) == list(tdp.state_dict())
    assert all(k.startswith("module.") for k in dp.state_dict())
    assert repr(dp) == repr(tdp)
    dp.eval()
    assert not ours.training and not ours[3].training
    # a checkpoint of the wrapped model loads into the bare one once the prefix goes
    bare = Net.make(T)
    bare.load_state_dict({k[len("module."):]: v for k, v in dp.state_dict().items()})
    assert all((a == b).all() for a, b in zip(bare.parameters(), ours.parameters()))
    assert not hasattr(dp, "dim") and not hasattr(tdp, "dim")   # set only with GPUs


def test_kwargs_reach_the_module():
    class Scale(T.nn.Module):
        def forward(self, x, *, factor=1.0):
            return x * factor

    assert float(T.nn.DataParallel(Scale())(T.ones(1), factor=3.0)) == 3.0


class Recording(T.nn.Linear):
    def to(self, *args, **kwargs):
        self.moved_to = args
        return self


def test_with_gpus_several_devices_are_refused(monkeypatch):
    monkeypatch.setattr(data_parallel, "_gpu_count", lambda: 2)
    with pytest.raises(NotImplementedError, match=r"device_ids \[0, 1\] name 2 GPUs.*"
                                                  r"DistributedDataParallel"):
        T.nn.DataParallel(T.nn.Linear(2, 2))     # None: every GPU, as PyTorch
    with pytest.raises(NotImplementedError, match=r"device_ids=\[1\]"):
        T.nn.DataParallel(T.nn.Linear(2, 2), device_ids=[1, "cuda:0"])
    with pytest.raises(ValueError, match=r"GPUs \[4\] but this machine has 2"):
        T.nn.DataParallel(T.nn.Linear(2, 2), device_ids=[4])
    with pytest.raises(ValueError, match="must name CUDA devices, got 'cpu'"):
        T.nn.DataParallel(T.nn.Linear(2, 2), device_ids=["cpu"])
    with pytest.raises(RuntimeError, match="no available devices were found"):
        T.nn.DataParallel(T.nn.Linear(2, 2), device_ids=[])


def test_with_one_gpu_the_module_moves_there(monkeypatch):
    monkeypatch.setattr(data_parallel, "_gpu_count", lambda: 2)
    net = Recording(2, 2)
    dp = T.nn.DataParallel(net, device_ids=[T.device("cuda", 1)])
    assert dp.device_ids == [1] and dp.output_device == 1 and dp.dim == 0
    assert net.moved_to == (T.device("cuda", 1),)
    # its parameters stayed on the CPU here (no real GPU): PyTorch's error
    with pytest.raises(RuntimeError, match=r"on device cuda:1 \(device_ids\[0\]\) but found "
                                           r"one of them on device: cpu"):
        dp(T.ones(1, 2))


def test_docstring_examples_run():
    import doctest
    assert doctest.testmod(data_parallel, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0
