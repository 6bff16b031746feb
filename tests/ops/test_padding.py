"""Op tests, padding: ``nn.functional.pad`` in every mode (ops/padding.py).

One table of cases; ``case_checks`` runs every check on every case (float64 gradcheck and
gradgradcheck, values and gradients against PyTorch in float32 and float64, the grad_fn
name and the whole graph's shape): see ``tests/ops/helpers.py``.  Bad arguments are in
tests/test_argument_errors.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import retrograd

from .helpers import Case, case_checks, nnf

CASES: list[Case] = []

# PyTorch builds circular padding from slice copies (a chain of CopySlices nodes); retrograd
# records one CircularPad node, so the names and the graph's shape differ, not the values
_CIRCULAR = {"grad_fn": "PyTorch records circular padding as CopySlices chains",
             "structure": "PyTorch records circular padding as CopySlices chains"}


def case(*args, **kwargs):
    CASES.append(Case(*args, **kwargs))


# (pads, input shape): 1, 2 and 3 padded dims, batched and unbatched, negative pads (crops)
_LAYOUTS = {
    "1d": ((2, 1), (2, 3, 4)),
    "1d_unbatched": ((1, 3), (2, 4)),
    "1d_crop": ((-1, 2), (1, 2, 4)),
    "2d": ((1, 2, 2, 1), (1, 2, 3, 4)),
    "2d_unbatched": ((0, 1, 2, 0), (2, 3, 3)),
    "2d_crop": ((-2, 1, 1, -1), (1, 1, 3, 4)),
    "3d": ((1, 0, 1, 1, 0, 2), (1, 1, 3, 3, 3)),
    "3d_unbatched": ((1, 1, 0, 1, 1, 0), (1, 2, 3, 3)),
}
for _mode in ("reflect", "replicate", "circular"):
    for _name, (_pad, _shape) in _LAYOUTS.items():
        case(f"pad_{_mode}_{_name}", lambda m, a, pad, mode: nnf(m).pad(a, pad, mode=mode),
             (_shape,), params={"pad": _pad, "mode": _mode},
             xfail=_CIRCULAR if _mode == "circular" else {})
for _name, _pad, _shape in (("1d", (1, 2), (2, 3)), ("3d", (1, 0, -1, 2, 1, 1), (2, 2, 3)),
                            ("all_dims", (1, 1, 1, 0, 0, 1, 2, 0), (1, 2, 2, 2))):
    case(f"pad_constant_{_name}", lambda m, a, pad: nnf(m).pad(a, pad), (_shape,),
         params={"pad": _pad})
case("pad_constant_value", lambda m, a: nnf(m).pad(a, [2, 1, 1, 1], "constant", -1.5), ((2, 3),))
case("pad_reflect_twice", lambda m, a: nnf(m).pad(nnf(m).pad(a, (2, 2), mode="reflect") * a.sum(),
                                                   (3, 0), mode="replicate"), ((1, 4),))

(test_gradcheck, test_gradgradcheck, test_values_vs_torch, test_grads_vs_torch,
 test_grad_fn_name_vs_torch, test_graph_structure_vs_torch) = case_checks(CASES)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_every_output_position_reads_the_documented_input(mode, torch):
    # a long axis and every pad pair up to past the limits: the index maps, and the class
    # of the error where PyTorch refuses
    for shape in ((1, 6), (1, 1, 6), (1, 1, 6, 2)):
        x = np.arange(float(np.prod(shape))).reshape(shape)
        for lo in range(-7, 8):
            for hi in range(-7, 8):
                pad = (lo, hi) if len(shape) < 4 else (0, 0, lo, hi)
                if mode == "circular" and 6 + min(lo, 0) + min(hi, 0) <= 0 < 6 + lo + hi:
                    continue  # PyTorch reads uninitialised memory there; retrograd refuses
                try:
                    want = torch.nn.functional.pad(torch.tensor(x), pad, mode=mode).numpy()
                except RuntimeError as e:
                    if mode == "circular" and "wrapping" not in str(e) and "Negative" not in str(
                            e):  # PyTorch's own slicing fails (kept < pad): no reference
                        continue
                    with pytest.raises(RuntimeError, match="pad"):
                        retrograd.nn.functional.pad(retrograd.tensor(x), pad, mode=mode)
                    continue
                got = retrograd.nn.functional.pad(retrograd.tensor(x), pad, mode=mode)
                np.testing.assert_array_equal(got.numpy(), want, err_msg=f"{mode} {pad}")


def test_integer_inputs_keep_their_dtype(torch):
    x = np.arange(12).reshape(1, 3, 4)
    for mode in ("reflect", "replicate", "circular", "constant"):
        want = torch.nn.functional.pad(torch.tensor(x), (1, 2), mode=mode)
        got = retrograd.nn.functional.pad(retrograd.tensor(x), (1, 2), mode=mode)
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_empty_batch_pads(torch):
    got = retrograd.nn.functional.pad(retrograd.zeros(0, 2, 3), (1, 1), mode="reflect")
    assert tuple(got.shape) == (0, 2, 5)
