"""Anomaly mode against PyTorch: a NaN in backward raises RuntimeError naming the node, and
the warning shows the forward traceback of the op that recorded it (kept only in anomaly
mode), for built-in ops and custom Functions."""

from __future__ import annotations

import warnings

import numpy as np

import pytest

import retrograd as T
from retrograd.autograd import graph


def _nan_in_backward(m):
    x = m.tensor([0.0, 1.0], requires_grad=True)
    z = x.sqrt()  # FORWARD-LINE
    return (z * 0).sum()  # backward of sqrt at 0: 0 * inf = nan


def _run(m, build):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with m.autograd.detect_anomaly():
            y = build(m)
            with pytest.raises(RuntimeError) as info:
                y.backward()
    found = [str(w.message) for w in caught if "Error detected in" in str(w.message)]
    return str(info.value), found


def _user_lines(text):
    """The source lines a traceback text quotes (what both libraries show of the user's
    code), without PyTorch's '(Triggered internally at ...)' suffix."""
    return [line.strip() for line in text.splitlines()
            if line.startswith("    ") and not line.strip().startswith("(Triggered")]


def test_nan_names_the_node_and_warns_with_the_forward_line(torch):
    (ours, our_warn), (theirs, their_warn) = (_run(m, _nan_in_backward) for m in (T, torch))
    assert ours == theirs == "Function 'SqrtBackward0' returned nan values in its 0th output."
    assert len(our_warn) == len(their_warn) == 1
    head = "Error detected in SqrtBackward0. Traceback of forward call that caused the error:"
    assert our_warn[0].startswith(head) and their_warn[0].startswith(head)
    # the innermost frame quoted is the user's line that called sqrt, in both
    assert _user_lines(our_warn[0])[-1] == _user_lines(their_warn[0])[-1]
    assert _user_lines(our_warn[0])[-1].endswith("# FORWARD-LINE")
    assert "_apply.py" not in our_warn[0]  # no retrograd machinery frame at the end


def test_a_custom_function_node_keeps_its_forward_line_too(torch):
    def build(m):
        class Bad(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * float("nan")

        x = m.ones(2, requires_grad=True)
        return Bad.apply(x).sum()  # CUSTOM-LINE

    (ours, our_warn), (theirs, their_warn) = (_run(m, build) for m in (T, torch))
    assert ours == theirs == "Function 'BadBackward' returned nan values in its 0th output."
    # PyTorch's innermost frame is its own Function.apply; the user's line comes just above
    assert _user_lines(our_warn[0])[-1].endswith("# CUSTOM-LINE")
    assert _user_lines(our_warn[0])[-1] in _user_lines(their_warn[0])


def test_an_error_other_than_nan_also_shows_the_forward_traceback():
    class Broken(T.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("broken backward")

    x = T.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with T.autograd.set_detect_anomaly(True):
            y = Broken.apply(x).sum()  # BROKEN-LINE
            with pytest.raises(ValueError):
                y.backward()
    text = [str(w.message) for w in caught if "Error detected in" in str(w.message)]
    assert text and text[0].startswith("Error detected in BrokenBackward.")
    assert "# BROKEN-LINE" in text[0]


def test_stacks_are_kept_only_in_anomaly_mode():
    x = T.ones(2, requires_grad=True)
    y = x.exp()
    assert y.grad_fn not in graph.forward_traces
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with T.autograd.detect_anomaly(check_nan=False):
            z = x.exp()
            assert T.autograd.is_anomaly_enabled()
            assert not T.autograd.is_anomaly_check_nan_enabled()
    assert z.grad_fn in graph.forward_traces
    assert not T.autograd.is_anomaly_enabled()
    from retrograd.autograd.grad_mode import record_extras

    assert record_extras == []  # recording is back to its one cheap check
    # check_nan=False: a NaN passes silently, as in PyTorch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with T.autograd.detect_anomaly(check_nan=False):
            w = T.tensor([0.0], requires_grad=True)
            (w.sqrt() * 0).sum().backward()
    assert np.isnan(w.grad.numpy()).all()
