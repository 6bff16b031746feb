"""Check analytical gradients against finite differences (float64).

``gradcheck`` compares the Jacobian that backward() computes (one vector-Jacobian product
per output element) with central differences; ``gradgradcheck`` does the same for the
gradient function itself, which tests every derivative formula's own derivative.
"""

from __future__ import annotations

import numpy as np


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


def _numerical_jacobians(func, inputs, eps):
    """d(out_k)/d(input_j) by central differences, for each differentiable input j."""
    from ..autograd.grad_mode import no_grad

    outs = _outputs(func, inputs)
    jacs = []
    for t in inputs:
        if not (hasattr(t, "_data") and t._requires_grad):
            jacs.append(None)
            continue
        flat = t._data.reshape(-1)
        cols = []
        for k in range(flat.size):
            orig = flat[k]
            with no_grad():
                flat[k] = orig + eps
                plus = [o._data.astype(np.float64).ravel().copy() for o in _outputs(func, inputs)]
                flat[k] = orig - eps
                minus = [o._data.astype(np.float64).ravel().copy() for o in
                         _outputs(func, inputs)]
            flat[k] = orig
            cols.append(np.concatenate([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
                        if plus else np.zeros(0))
        total_out = builtins_sum(o._data.size for o in outs)
        jacs.append(np.stack(cols, axis=1) if cols else np.zeros((total_out, 0)))
    return jacs


def builtins_sum(values):
    total = 0
    for v in values:
        total += v
    return total


def _analytical_jacobians(func, inputs):
    from . import grad
    from ..tensor import make_tensor

    outs = _outputs(func, inputs)
    diff_inputs = [t for t in inputs if hasattr(t, "_data") and t._requires_grad]
    rows = {id(t): [] for t in diff_inputs}
    for o in outs:
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
    jacs = []
    for t in inputs:
        if hasattr(t, "_data") and t._requires_grad:
            r = rows[id(t)]
            jacs.append(np.stack(r) if r else np.zeros((0, t._data.size)))
        else:
            jacs.append(None)
    return jacs


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, fast_mode=False, **unused) -> bool:
    """True if backward()'s gradients of ``func`` at ``inputs`` match finite differences.

    Use float64 inputs with ``requires_grad=True``; a mismatch raises ``GradcheckError``
    naming the input and the largest difference (or returns False).

    Examples
    --------
    >>> import retrograd as T
    >>> x = T.randn(3, dtype=T.float64, requires_grad=True)
    >>> T.autograd.gradcheck(lambda x: (x ** 3).sum(), (x,))
    True
    """
    inputs = _tensors(inputs)
    for i, t in enumerate(inputs):
        if hasattr(t, "_data") and t._requires_grad and t._data.dtype != np.float64:
            import warnings

            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point. "
                "This check will likely fail if all the inputs are not of double precision "
                "floating point.", UserWarning, stacklevel=2,
            )
    numerical = _numerical_jacobians(func, inputs, eps)
    analytical = _analytical_jacobians(func, inputs)
    for i, (n, a) in enumerate(zip(numerical, analytical)):
        if n is None:
            continue
        if n.shape != a.shape or not np.allclose(a, n, rtol=rtol, atol=atol):
            diff = np.abs(a - n).max() if n.shape == a.shape else float("nan")
            msg = (
                f"Jacobian mismatch for output 0 with respect to input {i},\n"
                f"numerical:{n}\nanalytical:{a}\nlargest difference {diff:.3g} "
                f"(atol={atol}, rtol={rtol})"
            )
            if raise_exception:
                raise GradcheckError(msg)
            return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, **unused) -> bool:
    """gradcheck of the gradient of ``func``: checks second derivatives (create_graph)."""
    from . import grad
    from ..tensor import make_tensor

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
    diff_idx = [i for i, t in enumerate(inputs) if hasattr(t, "_data") and t._requires_grad]

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
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_grads, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
