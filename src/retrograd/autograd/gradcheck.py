"""Check analytical gradients against finite differences (float64).

``gradcheck`` compares the Jacobian that backward() computes (one vector-Jacobian product
per output element) with central differences; ``gradgradcheck`` does the same for the
gradient function itself, which tests every derivative formula's own derivative.

``fast_mode=True`` checks one random projection ``u^T J v`` per input instead of the whole
Jacobian (as PyTorch's fast mode): one backward pass and two evaluations per input, so
big inputs cost little; a wrong derivative almost surely changes the projection.
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the analytical and numerical Jacobians differ."""


def _tensors(inputs):
    from ..tensor import Tensor

    if isinstance(inputs, Tensor):
        return (inputs,)
    return tuple(inputs)


def _outputs(func, inputs):
    from ..tensor import Tensor

    out = func(*inputs)
    if isinstance(out, Tensor):
        return (out,)
    return tuple(o for o in out if isinstance(o, Tensor))


def _differentiable(t) -> bool:
    return hasattr(t, "_data") and t._requires_grad


def _evaluate(func, inputs):
    """The outputs of ``func`` as float64 arrays, computed without recording."""
    from .grad_mode import no_grad

    with no_grad():
        return [np.array(o._data, dtype=np.float64) for o in _outputs(func, inputs)]


def _numerical_jacobians(func, inputs, eps):
    """Per differentiable input, per output: d(out)/d(input) by central differences.

    The input's own array is perturbed in place (index by index, so non-contiguous
    inputs work too) and restored.
    """
    out_sizes = [o.size for o in _evaluate(func, inputs)]
    jacs = []
    for t in inputs:
        if not _differentiable(t):
            jacs.append(None)
            continue
        data = t._data
        cols = []
        for idx in np.ndindex(data.shape):
            orig = data[idx].copy()
            data[idx] = orig + eps
            plus = _evaluate(func, inputs)
            data[idx] = orig - eps
            minus = _evaluate(func, inputs)
            data[idx] = orig
            cols.append([((p - m) / (2 * eps)).ravel() for p, m in zip(plus, minus)])
        # an input with no elements has no columns: (output size, 0) Jacobians
        jacs.append([np.stack([c[k] for c in cols], axis=1) if cols else np.zeros((size, 0))
                     for k, size in enumerate(out_sizes)])
    return jacs


def _analytical_jacobians(func, inputs):
    """Per differentiable input, per output: the Jacobian from one backward per element."""
    from ..tensor import make_tensor
    from .frontend import grad

    outs = _outputs(func, inputs)
    diff_inputs = [t for t in inputs if _differentiable(t)]
    per_input = {id(t): [] for t in diff_inputs}
    for o in outs:
        rows = {id(t): [] for t in diff_inputs}
        for k in range(o._data.size):
            if not o._requires_grad:
                for t in diff_inputs:
                    rows[id(t)].append(np.zeros(t._data.size))
                continue
            go = np.zeros(o._data.size, o._data.dtype)
            go[k] = 1
            gs = grad([o], diff_inputs, [make_tensor(go.reshape(o._data.shape))],
                      retain_graph=True, allow_unused=True)
            for t, g in zip(diff_inputs, gs):
                rows[id(t)].append(np.zeros(t._data.size) if g is None else
                                   np.asarray(g._data, np.float64).ravel())
        for t in diff_inputs:
            r = rows[id(t)]
            per_input[id(t)].append(np.stack(r) if r else np.zeros((0, t._data.size)))
    return [per_input[id(t)] if _differentiable(t) else None for t in inputs]


def _fail(msg, raise_exception):
    if raise_exception:
        raise GradcheckError(msg)
    return False


def _slow_check(func, inputs, eps, atol, rtol, raise_exception):
    numerical = _numerical_jacobians(func, inputs, eps)
    analytical = _analytical_jacobians(func, inputs)
    for i, (num, ana) in enumerate(zip(numerical, analytical)):
        if num is None:
            continue
        for k, (n, a) in enumerate(zip(num, ana)):
            if n.shape != a.shape or not np.allclose(a, n, rtol=rtol, atol=atol):
                diff = np.abs(a - n).max() if n.shape == a.shape else float("nan")
                return _fail(
                    f"Jacobian mismatch for output {k} with respect to input {i},\n"
                    f"numerical:{n}\nanalytical:{a}\nlargest difference {diff:.3g} "
                    f"(atol={atol}, rtol={rtol}). The backward formula (vjp) of an op on "
                    "the path from this input to this output is wrong.",
                    raise_exception,
                )
    return True


def _fast_check(func, inputs, eps, atol, rtol, raise_exception):
    """Compare ``u^T J_i v_i`` (backward) with the directional difference, per input i."""
    from ..tensor import make_tensor
    from .frontend import grad

    rng = np.random.default_rng(0)
    outs = _outputs(func, inputs)
    live = [o for o in outs if o._requires_grad]
    us = [rng.standard_normal(o._data.shape) for o in outs]
    diff_idx = [i for i, t in enumerate(inputs) if _differentiable(t)]
    if live:
        gs = grad(live, [inputs[i] for i in diff_idx],
                  [make_tensor(u.astype(o._data.dtype)) for o, u in zip(outs, us)
                   if o._requires_grad],
                  retain_graph=True, allow_unused=True)
    else:
        gs = [None] * len(diff_idx)
    for i, g in zip(diff_idx, gs):
        data = inputs[i]._data
        v = rng.standard_normal(data.shape)
        norm = np.sqrt((v * v).sum())
        v = v / norm if norm else v
        analytical = 0.0 if g is None else float((np.asarray(g._data, np.float64) * v).sum())
        orig = data.copy()
        data[...] = orig + eps * v
        plus = _evaluate(func, inputs)
        data[...] = orig - eps * v
        minus = _evaluate(func, inputs)
        data[...] = orig
        numerical = float(sum(((p - m) / (2 * eps) * u).sum()
                              for p, m, u in zip(plus, minus, us)))
        if not abs(analytical - numerical) <= atol + rtol * abs(numerical):
            return _fail(
                f"Jacobian mismatch with respect to input {i} (fast mode: u^T J v with "
                f"random u, v): numerical {numerical:.10g}, analytical {analytical:.10g}, "
                f"difference {abs(analytical - numerical):.3g} (atol={atol}, rtol={rtol}). "
                "Rerun with fast_mode=False to see the full Jacobians.",
                raise_exception,
            )
    return True


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, fast_mode=False, **unused) -> bool:
    """True if backward()'s gradients of ``func`` at ``inputs`` match finite differences.

    Use float64 inputs with ``requires_grad=True``; a mismatch raises ``GradcheckError``
    (a RuntimeError) naming the input, the output and the largest difference, or returns
    False with ``raise_exception=False``.  ``fast_mode=True`` checks a random projection
    of each Jacobian instead of every entry.

    Examples
    --------
    >>> import retrograd as T
    >>> x = T.randn(3, dtype=T.float64, requires_grad=True)
    >>> T.autograd.gradcheck(lambda x: (x ** 3).sum(), (x,))
    True
    """
    inputs = _tensors(inputs)
    for i, t in enumerate(inputs):
        if _differentiable(t) and t._data.dtype != np.float64:
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point. "
                "This check will likely fail if all the inputs are not of double precision "
                "floating point.", UserWarning, stacklevel=2,
            )
    if not any(_differentiable(t) for t in inputs):
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of "
            "the them have requires_grad=True."
        )
    check = _fast_check if fast_mode else _slow_check
    return check(func, inputs, eps, atol, rtol, raise_exception)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, fast_mode=False,
                  **unused) -> bool:
    """gradcheck of the gradient of ``func``: checks second derivatives (create_graph).

    The gradient is taken with random ``grad_outputs`` (which are differentiated too), so
    every derivative formula's own derivative is checked.

    Examples
    --------
    >>> import retrograd as T
    >>> x = T.randn(3, dtype=T.float64, requires_grad=True)
    >>> T.autograd.gradgradcheck(lambda x: x.sin(), (x,))
    True
    """
    from ..tensor import make_tensor
    from .frontend import grad

    inputs = _tensors(inputs)
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(
            make_tensor(rng.standard_normal(o._data.shape).astype(o._data.dtype))
            .requires_grad_(o._requires_grad) for o in outs  # not for integer outputs
        )
    grad_outputs = _tensors(grad_outputs)
    n_in = len(inputs)
    diff_idx = [i for i, t in enumerate(inputs) if _differentiable(t)]

    def first_grads(*args):
        from .grad_mode import enable_grad

        ins, gos = args[:n_in], args[n_in:]
        # the numerical Jacobian calls this under no_grad: the first gradients need a graph
        with enable_grad():
            outs = _outputs(func, ins)
            diff = [ins[i] for i in diff_idx]
            pairs = [(o, g) for o, g in zip(outs, gos) if o._requires_grad]
            gs = grad([o for o, _ in pairs], diff, [g for _, g in pairs], create_graph=True,
                      allow_unused=True)
        # an unused input's gradient is zero, whose derivative is zero too
        return tuple(make_tensor(np.zeros_like(np.asarray(d._data))) if g is None else g
                     for g, d in zip(gs, diff))

    return gradcheck(first_grads, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, fast_mode=fast_mode)
