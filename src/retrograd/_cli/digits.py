"""Handwritten digits (scikit-learn's 8x8 set): the data, an MLP and a small CNN, and one
training loop, written the way a PyTorch user writes them.

Swap the four imports of ``retrograd`` below for ``torch`` and this file runs under PyTorch:
``nn.Module`` subclasses, a ``DataLoader`` over a ``TensorDataset``, ``optim.Adam`` with a
cosine learning-rate schedule, ``nn.CrossEntropyLoss``, ``torch.no_grad()`` for evaluation.
The command around it (options, plot, save and reload) is ``retrograd._cli.train``.
"""

from __future__ import annotations


import numpy as np

import retrograd as torch
from retrograd import nn, optim
from retrograd.utils.data import DataLoader, Dataset, TensorDataset


def load_digits_split(test_size: float = 0.2, split_seed: int = 0):
    """The 1797 digits as float32 images in [0, 1] of shape (N, 1, 8, 8) and int64 labels,
    split into train and test sets (stratified, the same split for every training seed).

    Returns ``(train_dataset, test_dataset)``, two ``TensorDataset``.
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    x, y = load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)  # pixels are 0..16
    x_train, x_test, y_train, y_test = train_test_split(
        x, y.astype(np.int64), test_size=test_size, random_state=split_seed, stratify=y)
    return (TensorDataset(torch.from_numpy(x_train), torch.from_numpy(y_train)),
            TensorDataset(torch.from_numpy(x_test), torch.from_numpy(y_test)))


class RandomShift(Dataset):
    """Each image moved by up to ``max_shift`` pixels up/down and left/right, at random
    (``torch.roll``: the digits' blank border wraps around, so no ink is lost).  A 1-pixel
    jitter is the cheap augmentation that lifts the CNN past 98% on these small images."""

    def __init__(self, dataset, max_shift: int = 1, generator=None):
        self.dataset, self.max_shift, self.generator = dataset, max_shift, generator

    def __len__(self):
        return len(self.dataset)

    def __getitem__(self, i):
        image, label = self.dataset[i]
        dy, dx = torch.randint(-self.max_shift, self.max_shift + 1, (2,),
                               generator=self.generator).tolist()
        return torch.roll(image, shifts=(dy, dx), dims=(1, 2)), label


class MLP(nn.Module):
    """64 pixels -> 256 -> 128 -> 10 logits, ReLU and dropout between the layers."""

    def __init__(self, hidden=(256, 128), dropout: float = 0.2):
        super().__init__()
        layers, width = [nn.Flatten()], 64
        for h in hidden:
            layers += [nn.Linear(width, h), nn.ReLU(), nn.Dropout(dropout)]
            width = h
        layers.append(nn.Linear(width, 10))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


class CNN(nn.Module):
    """Three 3x3 convolutions (32, 32 and 64 channels) with ReLU, 2x2 max-pooling after the
    second and the third (8x8 -> 4x4 -> 2x2), then dropout and a linear layer from the
    64*2*2 features to 10 logits."""

    def __init__(self, dropout: float = 0.25):
        super().__init__()
        conv, pool = nn.Conv2d, nn.MaxPool2d
        self.features = nn.Sequential(
            conv(1, 32, 3, padding=1), nn.ReLU(),
            conv(32, 32, 3, padding=1), nn.ReLU(), pool(2),
            conv(32, 64, 3, padding=1), nn.ReLU(), pool(2),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(dropout),
                                        nn.Linear(64 * 2 * 2, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


MODELS = {"mlp": MLP, "cnn": CNN}


def evaluate(model, loader, loss_fn):
    """(mean loss, accuracy) of ``model`` over ``loader``, in eval mode without a graph."""
    model.eval()
    total_loss, correct, seen = 0.0, 0, 0
    with torch.no_grad():
        for x, y in loader:
            logits = model(x)
            total_loss += loss_fn(logits, y).item() * len(y)
            correct += (logits.argmax(dim=1) == y).sum().item()
            seen += len(y)
    return total_loss / seen, correct / seen


def fit(model, train_set, test_set, epochs: int, seed: int, lr: float = 3e-3,
        batch_size: int = 32, augment: bool = False, progress=None, on_epoch=None,
        distributed: bool = False):
    """Train ``model`` with Adam and a cosine schedule; returns the per-epoch history.

    ``augment`` trains on randomly shifted images (:class:`RandomShift`).

    ``distributed``: data-parallel over the initialised process group, as a PyTorch user
    writes it: the model wrapped in ``DistributedDataParallel``, each rank reading its share
    of every epoch through a ``DistributedSampler``.  ``batch_size`` stays the *global*
    batch (each rank takes ``batch_size / world_size``), so the optimiser takes the same
    steps as one process would, and the train loss and accuracy of each epoch are summed
    over the ranks.

    ``progress(iterable, desc)`` wraps each epoch's batches (a tqdm bar in the command; it
    must have ``set_postfix``), and ``on_epoch(record)`` sees each epoch's record: train loss
    and accuracy, test loss and accuracy, learning rate.
    """
    world, rank = 1, 0
    if distributed:
        import retrograd.distributed as dist
        from retrograd.nn.parallel import DistributedDataParallel
        from retrograd.utils.data import DistributedSampler

        world, rank = dist.get_world_size(), dist.get_rank()
        if batch_size % world:
            raise ValueError(f"the global batch of {batch_size} does not split evenly over "
                             f"{world} processes; launch a number of processes that "
                             f"divides it")
        model = DistributedDataParallel(model)
    # the shuffling order (and the shifts; each rank shifts its own images differently)
    generator = torch.Generator().manual_seed(seed + rank)
    if augment:
        train_set = RandomShift(train_set, generator=generator)
    if distributed:
        sampler = DistributedSampler(train_set, num_replicas=world, rank=rank, seed=seed)
        train_loader = DataLoader(train_set, batch_size=batch_size // world, sampler=sampler)
    else:
        sampler = None
        train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True,
                                  generator=generator)
    test_loader = DataLoader(test_set, batch_size=256)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = optim.Adam(model.parameters(), lr=lr)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    history = []
    for epoch in range(1, epochs + 1):
        model.train()
        if sampler is not None:
            sampler.set_epoch(epoch)  # a new shuffle each epoch, the same on every rank
        total_loss, correct, seen = 0.0, 0, 0
        batches = train_loader if progress is None else progress(
            train_loader, f"epoch {epoch}/{epochs}")
        for x, y in batches:
            optimizer.zero_grad()
            logits = model(x)
            loss = loss_fn(logits, y)
            loss.backward()
            optimizer.step()
            total_loss += loss.item() * len(y)
            correct += (logits.argmax(dim=1) == y).sum().item()
            seen += len(y)
            if progress is not None:
                batches.set_postfix(loss=f"{total_loss / seen:.4f}",
                                    acc=f"{100 * correct / seen:.1f}%")
        if distributed:  # the epoch's figures over every rank's share
            sums = torch.tensor([total_loss, correct, seen], dtype=torch.float64)
            dist.all_reduce(sums)
            total_loss, correct, seen = sums.tolist()
        record = {"epoch": epoch, "lr": scheduler.get_last_lr()[0],
                  "train_loss": total_loss / seen, "train_acc": correct / seen}
        scheduler.step()
        record["test_loss"], record["test_acc"] = evaluate(model, test_loader, loss_fn)
        history.append(record)
        if on_epoch is not None:
            on_epoch(record)
    return history
