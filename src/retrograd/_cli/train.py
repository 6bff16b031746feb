"""``retrograd train``: an MLP and a small CNN trained on scikit-learn's handwritten digits.

Each model trains with a progress bar per epoch (loss and accuracy so far), then the command
writes a loss/accuracy plot, saves the trained weights with ``retrograd.save`` (the
``state_dict``), loads that file into a freshly built model and checks it reproduces the test
accuracy.  Targets: test accuracy >= 97% for the MLP and >= 98% for the CNN (at the default
number of epochs).  The exit status is 0 when every target is met and every reload matched.

Needs scikit-learn (the data), tqdm (the bars) and matplotlib (the plot):
``pip install retrograd[examples]``.

``--distributed`` trains data-parallel over MPI (``pip install retrograd[mpi]``):
``mpiexec -n 2 python -m retrograd train --distributed`` (under Slurm: ``srun -n 2 python -m
retrograd train --distributed``).  Each process trains on its share of every batch through
``DistributedDataParallel`` and a ``DistributedSampler``; rank 0 alone prints, draws the
progress bar, writes the plot and saves the model.  The global batch stays 32, so the run
takes the same optimiser steps as one process and reaches the same accuracy targets.
"""

from __future__ import annotations

import contextlib
import os
import sys

import retrograd as T

#: The optional packages the command needs: import name -> pip name.
EXTRAS = {"sklearn": "scikit-learn", "tqdm": "tqdm", "matplotlib": "matplotlib"}
TARGETS = {"mlp": 0.97, "cnn": 0.98}
DEFAULT_EPOCHS = {"mlp": 30, "cnn": 20}
TITLES = {"mlp": "MLP", "cnn": "CNN"}
#: Train the CNN on images jittered by a pixel (the MLP reaches its target without).
AUGMENT = {"mlp": False, "cnn": True}


class MissingExtraError(ImportError):
    """An optional package the command needs is not installed."""


def check_extras() -> None:
    """Raise :class:`MissingExtraError` naming every missing package and the pip command."""
    missing = []
    for module, package in EXTRAS.items():
        try:
            __import__(module)
        except ImportError:
            missing.append(package)
    if missing:
        raise MissingExtraError(
            f"retrograd train needs {', '.join(missing)} (not installed); install the "
            f"examples extra: pip install retrograd[examples]")


def _progress(stream):
    from tqdm import tqdm

    def wrap(iterable, desc):
        return tqdm(iterable, desc=desc, unit="batch", leave=True, file=stream,
                    dynamic_ncols=True)

    return wrap


def one_blas_thread():
    """A context where NumPy's BLAS runs on one thread (threadpoolctl comes with scikit-learn).

    The digits' matrices are tiny (a batch of 32 times 64x256 weights): waking BLAS threads
    costs more than they save, and on a machine with other busy processes each product waits
    for its threads: 12x slower measured on a loaded 2-core machine.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def plot(histories: dict, path: str) -> str:
    """Write the per-epoch training loss and test accuracy of each model to a PNG."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 3.4), dpi=90)
    FigureCanvasAgg(fig)
    ax_loss, ax_acc = fig.subplots(1, 2)
    for name, history in histories.items():
        epochs = [r["epoch"] for r in history]
        line, = ax_loss.plot(epochs, [r["train_loss"] for r in history],
                             label=f"{TITLES[name]} train")
        ax_loss.plot(epochs, [r["test_loss"] for r in history], "--", color=line.get_color(),
                     label=f"{TITLES[name]} test")
        ax_acc.plot(epochs, [100 * r["test_acc"] for r in history], color=line.get_color(),
                    label=f"{TITLES[name]} test")
        ax_acc.axhline(100 * TARGETS[name], color=line.get_color(), linestyle=":",
                       linewidth=1)
    ax_loss.set(xlabel="epoch", ylabel="cross-entropy loss", yscale="log",
                title="loss")
    ax_acc.set(xlabel="epoch", ylabel="accuracy (%)", ylim=(90, 100),
               title="test accuracy (dotted: target)")
    for ax in (ax_loss, ax_acc):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("retrograd train: scikit-learn digits")
    fig.tight_layout()
    fig.savefig(path)
    return path


def train_one(name: str, epochs: int, seed: int, out_dir: str, stream=None,
              progress: bool = True, distributed: bool = False) -> dict:
    """Train model ``name`` ('mlp' or 'cnn'), save it, reload it and check the reload.

    Returns a dict: ``history`` (per-epoch records), ``test_acc``, ``model_path``,
    ``reloaded_acc``, ``reload_ok``, ``target`` and ``target_met``.  With ``distributed``,
    only rank 0 saves and reloads (the other ranks hold the same weights: DDP keeps them
    identical); their ``model_path`` is None and ``reload_ok`` True.
    """
    from .digits import MODELS, evaluate, fit, load_digits_split

    stream = stream if stream is not None else sys.stdout
    train_set, test_set = load_digits_split()
    T.manual_seed(seed)  # the initial weights and the dropout masks
    model = MODELS[name]()
    n_params = sum(p.numel() for p in model.parameters())
    shifted = " (shifted at random by up to 1 pixel)" if AUGMENT[name] else ""
    print(f"== {TITLES[name]}: {n_params} parameters, {len(train_set)} training digits"
          f"{shifted}, {len(test_set)} test digits, {epochs} epochs, seed {seed} ==",
          file=stream)

    def report(r):
        print(f"epoch {r['epoch']:3d}  lr {r['lr']:.2e}  train loss {r['train_loss']:.4f} "
              f"acc {100 * r['train_acc']:5.1f}%  test loss {r['test_loss']:.4f} "
              f"acc {100 * r['test_acc']:5.1f}%", file=stream, flush=True)

    history = fit(model, train_set, test_set, epochs, seed, augment=AUGMENT[name],
                  progress=_progress(sys.stderr) if progress else None, on_epoch=report,
                  distributed=distributed)
    test_acc = history[-1]["test_acc"]
    target = TARGETS[name]
    if distributed and T.distributed.get_rank() != 0:
        return {"history": history, "test_acc": test_acc, "model_path": None,
                "reloaded_acc": test_acc, "reload_ok": True, "target": target,
                "target_met": test_acc >= target}

    model_path = os.path.join(out_dir, f"digits_{name}.pt")
    T.save(model.state_dict(), model_path)
    fresh = MODELS[name]()  # new random weights: only the file can make it score the same
    fresh.load_state_dict(T.load(model_path))
    test_loader = T.utils.data.DataLoader(test_set, batch_size=256)
    _, reloaded_acc = evaluate(fresh, test_loader, T.nn.CrossEntropyLoss())
    reload_ok = reloaded_acc == test_acc
    print(f"{TITLES[name]} test accuracy: {100 * test_acc:.2f}% "
          f"(target {100 * target:.0f}%: {'met' if test_acc >= target else 'NOT MET'})",
          file=stream)
    print(f"saved {model_path}; reloaded into a fresh {TITLES[name]}: test accuracy "
          f"{100 * reloaded_acc:.2f}% ({'matches' if reload_ok else 'DOES NOT MATCH'})",
          file=stream, flush=True)
    return {"history": history, "test_acc": test_acc, "model_path": model_path,
            "reloaded_acc": reloaded_acc, "reload_ok": reload_ok, "target": target,
            "target_met": test_acc >= target}


def train(models=("mlp", "cnn"), epochs=None, out_dir: str = "out/train", seed: int = 0,
          stream=None, progress: bool = True, distributed: bool = False) -> dict:
    """Train each of ``models``, write the plot; returns ``{name: train_one's dict}`` plus
    ``"plot"``: the PNG's path (None on ranks other than 0).  ``epochs`` None means each
    model's default.  ``distributed``: data-parallel over the initialised process group."""
    check_extras()
    stream = stream if stream is not None else sys.stdout
    quiet = distributed and T.distributed.get_rank() != 0
    if quiet:  # one voice: rank 0 prints, draws the bar and writes the files
        stream, progress = open(os.devnull, "w"), False  # noqa: SIM115 - closed below
    os.makedirs(out_dir, exist_ok=True)
    results = {}
    with one_blas_thread():
        for name in models:
            results[name] = train_one(name, epochs or DEFAULT_EPOCHS[name], seed, out_dir,
                                      stream, progress, distributed)
    if quiet:
        stream.close()
        results["plot"] = None
        return results
    path = plot({n: r["history"] for n, r in results.items()},
                os.path.join(out_dir, "digits_training.png"))
    print(f"plot: {path}", file=stream)
    for name, r in results.items():
        print(f"{TITLES[name]}: test accuracy {100 * r['test_acc']:.2f}% "
              f"(target {100 * r['target']:.0f}%) reload "
              f"{'matches' if r['reload_ok'] else 'DOES NOT MATCH'}", file=stream)
    results["plot"] = path
    return results


def add_parser(sub) -> None:
    """The ``train`` subcommand's options, on the ``retrograd`` command's subparsers."""
    import argparse

    p = sub.add_parser("train", help="train an MLP and a CNN on scikit-learn's digits",
                       description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--epochs", type=int, default=None,
                   help=f"epochs per model (default: MLP {DEFAULT_EPOCHS['mlp']}, "
                   f"CNN {DEFAULT_EPOCHS['cnn']})")
    p.add_argument("--out", default="out/train", metavar="DIR",
                   help="where the plot and the model files go (default out/train)")
    p.add_argument("--model", choices=("mlp", "cnn", "both"), default="both",
                   help="which model to train (default both)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed for the initial weights, dropout and shuffling (default 0)")
    p.add_argument("--distributed", action="store_true",
                   help="data-parallel over MPI: launch with mpiexec -n N (or srun); needs "
                   "pip install retrograd[mpi]")
    p.set_defaults(run=run)


def run(args) -> int:
    """The subcommand: 0 when every target is met and every reload matched, 1 when not,
    2 when an optional package is missing (the message names the pip command)."""
    if args.epochs is not None and args.epochs < 1:
        print(f"retrograd train: --epochs must be at least 1, got {args.epochs}",
              file=sys.stderr)
        return 2
    try:
        check_extras()
    except MissingExtraError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    models = ("mlp", "cnn") if args.model == "both" else (args.model,)
    if args.distributed:
        try:
            T.distributed.init_process_group("mpi")
        except ImportError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    try:
        results = train(models, args.epochs, args.out, args.seed,
                        distributed=args.distributed)
    finally:
        if args.distributed:
            T.distributed.destroy_process_group()
    ok = all(results[m]["reload_ok"] and results[m]["target_met"] for m in models)
    return 0 if ok else 1
