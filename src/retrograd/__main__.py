"""``python -m retrograd explain``: the seed post's examples, run step by step."""

from __future__ import annotations

import argparse
import sys


def _walkthrough() -> None:
    import retrograd as T

    T.manual_seed(0)
    print("z = (2x)^3 on a 1x1 leaf x; dz/dx = 24 x^2")
    x = T.randn(1, 1, requires_grad=True)
    y = 2 * x
    z = y ** 3
    print("x =", x, "\ny =", y, "\nz =", z)
    z.backward(retain_graph=True)
    print("after z.backward():      x.grad =", x.grad, " (24 x^2 =", 24 * x.item() ** 2, ")")
    x.grad.zero_()
    z.backward(T.FloatTensor([0.1]))
    print("after z.backward([0.1]): x.grad =", x.grad)
    x = T.randn(2, 2, requires_grad=True)
    z = (2 * x) ** 3
    for w in ([1, 0], [0, 1], [1, 1]):
        if x.grad is not None:
            x.grad.zero_()
        z.backward(T.FloatTensor(w), retain_graph=True)
        print(f"2x2 z, gradient {w}: x.grad =\n{x.grad}")
    out = z.mean()
    out.backward()
    try:
        out.backward()
    except RuntimeError as e:
        print("second backward without retain_graph:", e)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="retrograd", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    explain = sub.add_parser("explain", help="narrate the seed post's backward() examples")
    explain.add_argument("--out", default=None, help="folder for the graph pictures")
    args = parser.parse_args(argv)
    if args.command == "explain":
        _walkthrough()
    return 0


if __name__ == "__main__":
    sys.exit(main())
