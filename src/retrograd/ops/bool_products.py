"""Dtype refusals of PyTorch's product kernels that depend on the shapes: which kernel a
bool tensordot/inner lands in, and the ``mul_(beta)`` of addmm/addbmm/baddbmm when there is
nothing to contract (fuzz seed 18321406 and fuzzQ's hunt).  Only called for the cases that
can refuse, so the success path of a float product never comes here."""

from __future__ import annotations

from ._errors import scalar_type_name


def refuse_bool_tensordot(a, b, da, db):
    """PyTorch's tensordot of bool tensors: an output of one element goes to ``dot`` (which
    has no bool kernel, even for empty operands), an empty output or an empty contraction
    returns before any kernel, anything else reaches ``addmm_impl_cpu_`` (no bool kernel)."""
    free = 1
    for d in range(a.ndim):
        if d not in da:
            free *= a.shape[d]
    for d in range(b.ndim):
        if d not in db:
            free *= b.shape[d]
    k = 1
    for i, j in zip(da, db):
        # (a contracted dim of size 1 against a bigger one is summed first: it counts once)
        k *= a.shape[i] if a.shape[i] == b.shape[j] else 1
    if free == 1:
        raise NotImplementedError("\"dot\" not implemented for 'Bool' (tensordot of bool "
                                  "tensors with a one-element result); convert first, e.g. "
                                  "a.int()")
    if free and k:
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool' (tensordot "
                                  "of bool tensors); convert first, e.g. a.int()")


_CATEGORY = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}


def check_empty_contraction_beta(name, dtype, out_numel, empty, beta):
    """addmm/addbmm/baddbmm with nothing to contract (``empty``) and a non-empty result:
    PyTorch's kernel computes ``input.mul_(beta)``, which refuses a ``beta`` of a higher
    category than the tensors (an int beta for bool tensors, a float one for integer
    tensors: "result type Long can't be cast to the desired output type Bool").  A zero
    ``beta`` zero-fills instead, and a bool ``beta`` never refuses."""
    if not empty or not out_numel or isinstance(beta, bool) or beta == 0:
        return
    if isinstance(beta, complex):
        have, cat = "ComplexFloat", 3
    elif isinstance(beta, float):
        have, cat = "Float", 2
    else:
        have, cat = "Long", 1
    if cat > _CATEGORY[dtype.kind]:
        raise RuntimeError(f"result type {have} can't be cast to the desired output type "
                           f"{scalar_type_name(dtype)} ({name} with an empty contraction "
                           f"scales input by beta={beta!r} in place; pass a beta of the "
                           "tensors' kind, or convert the tensors)")
