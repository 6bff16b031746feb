"""A PyTorch tutorial-style training script, one source text run unchanged by retrograd and by
PyTorch (each bound to the name ``torch``): both train, and from the same initial weights, with
the same batches in the same order, their losses agree step by step."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

import retrograd

# The script a PyTorch user writes: a model class, a Dataset and DataLoader, an optimizer and
# a learning-rate scheduler, the training loop, save, load into a fresh model, evaluate.
# It reads its data and settings from names the test provides (X_TRAIN, INITIAL_STATE...).
SCRIPT = '''
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 32)
        self.fc2 = torch.nn.Linear(32, 10)

    def forward(self, x):
        x = torch.relu(self.fc1(x))
        return self.fc2(x)


class Digits(torch.utils.data.Dataset):
    def __init__(self, images, labels):
        self.images = torch.tensor(images, dtype=torch.float32)
        self.labels = torch.tensor(labels, dtype=torch.long)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        return self.images[i], self.labels[i]


torch.manual_seed(0)
model = Net()
if INITIAL_STATE is not None:
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.from_numpy(INITIAL_STATE[name]))

train_loader = torch.utils.data.DataLoader(Digits(X_TRAIN, Y_TRAIN), batch_size=32,
                                           shuffle=False)
loss_fn = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)

losses = []
for epoch in range(EPOCHS):
    model.train()
    for images, labels in train_loader:
        optimizer.zero_grad()
        loss = loss_fn(model(images), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    scheduler.step()

torch.save(model.state_dict(), MODEL_PATH)

reloaded = Net()
reloaded.load_state_dict(torch.load(MODEL_PATH))
reloaded.eval()
with torch.no_grad():
    logits = reloaded(torch.tensor(X_TEST, dtype=torch.float32))
    predicted = logits.argmax(dim=1)
    accuracy = (predicted == torch.tensor(Y_TEST)).float().mean().item()
'''

EPOCHS = 3


@pytest.fixture(scope="module")
def digits():
    from digits_mlp import load_digits_standardized

    x, y = load_digits_standardized()
    x = x.astype(np.float32)
    test = np.arange(len(y)) % 5 == 0  # a fixed interleaved split: every class in both
    return x[~test], y[~test], x[test], y[test]


def run_script(module, digits, path, initial_state=None):
    """Exec the one source text with ``module`` bound to ``torch``; returns its namespace."""
    x_train, y_train, x_test, y_test = digits
    namespace = {"torch": module, "X_TRAIN": x_train, "Y_TRAIN": y_train, "X_TEST": x_test,
                 "Y_TEST": y_test, "EPOCHS": EPOCHS, "MODEL_PATH": str(path),
                 "INITIAL_STATE": initial_state}
    with _one_thread(module):
        exec(compile(SCRIPT, f"<tutorial script, torch={module.__name__}>", "exec"), namespace)
    return namespace


@contextlib.contextmanager
def _one_thread(module):
    """NumPy's BLAS and PyTorch on one thread: the matrices are tiny, and threads only add
    wake-up waits (a lot of them on a busy machine)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        limits = contextlib.nullcontext()
    else:
        limits = threadpool_limits(limits=1, user_api="blas")
    torch_threads = module.get_num_threads() if module is not retrograd else None
    if torch_threads is not None:
        module.set_num_threads(1)
    try:
        with limits:
            yield
    finally:
        if torch_threads is not None:
            module.set_num_threads(torch_threads)


def _trains(ns):
    losses = ns["losses"]
    assert len(losses) == EPOCHS * -(-len(ns["Y_TRAIN"]) // 32)
    first, last = np.mean(losses[:5]), np.mean(losses[-20:])
    assert last < 0.2 * first, (first, last)  # ~2.3 -> under 0.2
    assert ns["accuracy"] > 0.9


def test_the_script_trains_in_retrograd_and_torch_alike(digits, tmp_path, torch):
    ours = run_script(retrograd, digits, tmp_path / "ours.pt")
    _trains(ours)
    # the same weights into both: take retrograd's initial draw, as NumPy arrays
    retrograd.manual_seed(0)
    start = {name: p.detach().numpy().copy()
             for name, p in ours["Net"]().named_parameters()}
    ours = run_script(retrograd, digits, tmp_path / "ours.pt", start)
    theirs = run_script(torch, digits, tmp_path / "theirs.pt", start)
    _trains(theirs)
    a, b = np.array(ours["losses"]), np.array(theirs["losses"])
    assert a.shape == b.shape
    # float32 all along; rounding differences grow slowly over ~135 momentum steps
    np.testing.assert_allclose(a[:10], b[:10], rtol=1e-5)
    np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-4)
    assert abs(ours["accuracy"] - theirs["accuracy"]) <= 2 / len(digits[3])
    # each saved its trained weights; both files hold the same values
    saved_ours = retrograd.load(str(tmp_path / "ours.pt"))
    saved_theirs = torch.load(str(tmp_path / "theirs.pt"))
    assert sorted(saved_ours) == sorted(saved_theirs)
    for key in saved_ours:
        assert saved_ours[key].dtype == retrograd.float32
        np.testing.assert_allclose(saved_ours[key].numpy(), saved_theirs[key].numpy(),
                                   rtol=1e-2, atol=1e-4)
