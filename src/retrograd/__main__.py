"""The ``retrograd`` console command (``python -m retrograd``): its subcommands.

- ``explain``: the seed post's backward() examples, narrated step by step
  (``retrograd._cli.explain``; needs nothing but NumPy).
- ``train``: an MLP and a small CNN trained on scikit-learn's digits, as a PyTorch user writes
  it (``retrograd._cli.train``; needs ``pip install retrograd[examples]``).
"""

from __future__ import annotations

import argparse
import sys

from ._cli import explain as _explain
from ._cli import train as _train
from ._cli.explain import explain  # noqa: F401  (the documented entry point, kept here)


def main(argv=None) -> int:
    """The ``retrograd`` console command (``python -m retrograd``)."""
    parser = argparse.ArgumentParser(
        prog="retrograd", description="retrograd: reverse-mode autodiff with PyTorch's API.")
    sub = parser.add_subparsers(dest="command", required=True)
    _explain.add_parser(sub)
    _train.add_parser(sub)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
