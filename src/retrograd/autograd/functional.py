"""Jacobians, Hessians and their products, as ``torch.autograd.functional``.

Every function here is built on ``autograd.grad`` alone (reverse mode).  ``jvp`` and ``hvp``
use the double-backward trick, as PyTorch does without forward mode: the VJP ``u -> J^T u``
is linear in ``u``, so differentiating it with respect to ``u`` in the direction ``v`` gives
``J v``.  The argument handling, the result structures and the strict-mode errors follow
PyTorch 2.13's ``torch/autograd/functional.py`` line by line, so the two agree on every
tuple/single combination.

``vectorize=True`` computes every row in one backward pass, the rows of the identity as a
batch of gradients (``autograd.grad(..., is_grads_batched=True)``), as PyTorch does with
vmap.  ``jacobian(..., strategy='forward-mode', vectorize=True)`` (and hessian's
``outer_jacobian_strategy='forward-mode'``, forward over reverse) use forward AD
(``autograd.forward_ad``), one pass per input element (a loop over the basis vectors, where
PyTorch batches them with vmap: same results, not faster).
"""

from __future__ import annotations

from .. import _creation
from ..ops.shape import stack
from ..tensor import Tensor
from .frontend import grad as _grad
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]



def _as_tuple(inp, arg_name, fn_name):
    """(was it a tuple, the tuple of Tensors), with PyTorch's TypeError otherwise."""
    is_tuple = isinstance(inp, tuple)
    if not is_tuple:
        inp = (inp,)
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            where = (f"value at index {i} has type {type(el)}" if is_tuple
                     else f"given {arg_name} has type {type(el)}")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but the {where}.")
    return is_tuple, inp


def _tuple_postprocess(res, to_unpack):
    """Undo ``_as_tuple``: unwrap the outer (and inner) level where the user gave no tuple."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    # always a new Tensor object, so the inputs handed to the function can be told apart
    # from the same tensors captured by the function's closure (PyTorch issue 32576)
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(inputs, create_graph):
    # without create_graph the results carry no history
    if isinstance(inputs[0], Tensor):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but "
                               f"got {el_v.size()}.")


def _check_requires_grad(inputs, input_type, strict):
    """strict mode: every output/gradient must depend on the inputs (PyTorch's messages)."""
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if inp.requires_grad:
            continue
        if input_type == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should "
                "ensure that your function is thrice differentiable and that the hessian "
                "depends on the inputs.")
        if input_type == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).")
        if input_type == "grad_inputs":
            raise RuntimeError(
                f"The gradient with respect to input {i} is independent of the inputs of the "
                "user-provided function. This is not allowed in strict mode.")
        raise RuntimeError(
            f"Output {i} of the user-provided function does not require gradients. The "
            "outputs must be computed in a differentiable manner from the input when running "
            "in strict mode.")


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None,
                   is_grads_batched=False):
    """``autograd.grad`` that skips outputs which are None or do not require grad."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    new_outputs, new_grad_outputs = [], []
    for out, grad_out in zip(outputs, grad_outputs):
        if out is not None and out.requires_grad:
            new_outputs.append(out)
            new_grad_outputs.append(grad_out)
    if not new_outputs:
        return (None,) * len(inputs)
    return _grad(tuple(new_outputs), inputs, tuple(new_grad_outputs), allow_unused=True,
                 create_graph=create_graph, retain_graph=retain_graph,
                 is_grads_batched=is_grads_batched)


_ZERO_ERRORS = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
            "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
                         "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """None gradients become zeros shaped as ``refs`` (or, strict, PyTorch's errors)."""
    res = []
    for i, grads_i in enumerate(grads):
        if grads_i is None:
            if strict:
                raise RuntimeError(_ZERO_ERRORS[stage].format(i=i))
            grads_i = _creation.zeros_like(refs[i])
        elif strict and create_graph and not grads_i.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        res.append(grads_i)
    return tuple(res)


def _prepare_v(v, against, is_tuple, create_graph, fn, none_error):
    if v is not None:
        _, v = _as_tuple(v, "v", fn)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, against, is_tuple)
    elif len(against) != 1 or against[0].nelement() != 1:
        raise RuntimeError(none_error)
    return v


_V_NONE_INPUT = ("The vector v can only be None if the input to the user-provided function "
                 "is a single Tensor with a single element.")


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product of ``func`` at ``inputs``."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "vjp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        v = _prepare_v(v, outputs, is_outputs_tuple, create_graph, "vjp",
                       "The vector v can only be None if the user-provided function returns "
                       "a single Tensor with a single element.")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(result, is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v), by the double-backward trick (no forward mode needed)."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "jvp", _V_NONE_INPUT)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jvp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        # the VJP is linear in these cotangents, so their value never shows in the result;
        # zeros only keep NaN/inf out of the double-backward graph
        grad_outputs = tuple(_creation.zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(result, is_outputs_tuple))


def _check_strategy(strategy, create_graph, fn, arg):
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `create_graph=False` or `strategy="reverse-mode"`.')


def _jacfwd(func, inputs, strict, vectorize):
    """The Jacobian by forward AD: one dual pass per element of the inputs (the basis vector
    as tangent) gives one column of every output's Jacobian."""
    from . import forward_ad

    if strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and `strategy=\"forward-mode\"` "
            "are not supported together (yet). Please either set `strict=False` or "
            "`strategy=\"reverse-mode\"`.")
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian is only "
            "implemented for `vectorize=True` (retrograd: pass vectorize=True).")
    columns = None  # [output][input] -> list of tangents, one per input element
    is_outputs_tuple = False
    outputs = None
    for j, inp in enumerate(inputs):
        for k in range(inp.nelement()):
            with forward_ad.dual_level():
                duals = []
                for i, x in enumerate(inputs):
                    t = _creation.zeros_like(x)
                    if i == j:
                        t.view(-1)[k] = 1.0
                    duals.append(forward_ad.make_dual(x, t))
                out = func(*duals)
                is_outputs_tuple, outs = _as_tuple(
                    out, "outputs of the user-provided function", "jacobian")
                if columns is None:
                    columns = [[[] for _ in inputs] for _ in outs]
                    outputs = outs
                for o, col in zip(outs, columns):
                    t = forward_ad.unpack_dual(o).tangent
                    col[j].append(t.detach() if t is not None else
                                  _creation.zeros_like(o).detach())
    if columns is None:  # no input has an element: run once for the outputs' shapes
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided "
                                              "function", "jacobian")
        columns = [[[] for _ in inputs] for _ in outputs]
    jac = tuple(tuple(
        stack(col, dim=-1).view(tuple(o.shape) + tuple(x.shape)) if col else
        _creation.zeros(tuple(o.shape) + tuple(x.shape), dtype=o.dtype)
        for col, x in zip(cols, inputs)) for o, cols in zip(outputs, columns))
    return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: one row of ``autograd.grad`` per output element.

    Result structure as PyTorch: a Tensor for one input and one output; a tuple over inputs
    (or outputs) when one side is a tuple; a tuple (outputs) of tuples (inputs) when both are.
    Entry ``[i][j]`` has shape ``outputs[i].shape + inputs[j].shape``.

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd.autograd.functional import jacobian
    >>> jacobian(lambda x: x ** 2, T.tensor([1.0, 3.0]))
    tensor([[2., 0.],
            [0., 6.]])
    >>> [j.shape for j in jacobian(lambda x, y: x * y, (T.ones(2), T.ones(2)))]
    [retrograd.Size([2, 2]), retrograd.Size([2, 2])]
    """
    _check_strategy(strategy, create_graph, "jacobian", "strategy")
    if strategy == "forward-mode":
        return _jacfwd(func, inputs, strict, vectorize)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if vectorize and strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are "
                "not supported together. Please either set `strict=False` or "
                "`vectorize=False`.")
        if vectorize:
            jac = _jacobian_batched(outputs, inputs, create_graph)
            jac = _grad_postprocess(jac, create_graph)
            return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))
        jac = []
        for i, out in enumerate(outputs):
            rows = tuple([] for _ in inputs)
            flat = out.reshape(-1)
            for j in range(out.nelement()):
                vj = _autograd_grad((flat[j],), inputs, retain_graph=True,
                                    create_graph=create_graph)
                for el_idx, (rows_el, vj_el, inp_el) in enumerate(zip(rows, vj, inputs)):
                    if vj_el is not None:
                        if strict and create_graph and not vj_el.requires_grad:
                            raise RuntimeError(
                                "The jacobian of the user-provided function is independent of "
                                f"input {i}. This is not allowed in strict mode when "
                                "create_graph=True.")
                        rows_el.append(vj_el)
                    else:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of "
                                f"input {el_idx}. This is not allowed in strict mode.")
                        rows_el.append(_creation.zeros_like(inp_el))
            jac.append(tuple(
                stack(rows_el, dim=0).view(tuple(out.size()) + tuple(inputs[k].size()))
                if rows_el else
                # an output with no elements: an empty Jacobian of the right shape
                _creation.zeros(tuple(out.size()) + tuple(inputs[k].size()),
                                dtype=inputs[k].dtype)
                for k, rows_el in enumerate(rows)))
        jac = _grad_postprocess(tuple(jac), create_graph)
        return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def _jacobian_batched(outputs, inputs, create_graph):
    """``vectorize=True``, as PyTorch: one backward pass for every row of every output at
    once, the rows of the identity as a batch of ``grad_outputs``
    (``autograd.grad(..., is_grads_batched=True)``, which batches the derivatives)."""
    sizes = [out.nelement() for out in outputs]
    total = sum(sizes)
    basis, start = [], 0
    for out, size in zip(outputs, sizes):
        rows = _creation.zeros((total, size), dtype=out.dtype)
        if size:
            rows[start:start + size] = _creation.eye(size, dtype=out.dtype)
        basis.append(rows.view((total,) + tuple(out.shape)))
        start += size
    if total:
        vjps = _autograd_grad(outputs, inputs, tuple(basis), create_graph=create_graph,
                              retain_graph=True, is_grads_batched=True)
    else:
        vjps = (None,) * len(inputs)
    jac, start = [], 0
    for out, size in zip(outputs, sizes):
        shape = tuple(out.shape)
        jac.append(tuple(
            (vjp[start:start + size] if vjp is not None
             else _creation.zeros((size,) + tuple(inp.shape), dtype=inp.dtype))
            .view(shape + tuple(inp.shape))
            for vjp, inp in zip(vjps, inputs)))
        start += size
    return tuple(jac)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar ``func``: the Jacobian of its gradient (reverse over reverse).

    Entry ``[i][j]`` (a plain Tensor for a single input) has shape
    ``inputs[i].shape + inputs[j].shape``.
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    if outer_jacobian_strategy == "forward-mode":
        _check_strategy("forward-mode", create_graph, "hessian", "outer_jacobian_strategy")

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            # forward over reverse: the duals must require grad, or the inner jacobian's
            # preprocessing would detach them (and their tangents)
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_function_grad(func, inputs, v, create_graph, strict, fn):
    """Shared head of vhp/hvp: inputs, v, the scalar output and its gradient (with graph)."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, fn, _V_NONE_INPUT)
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", fn)
    _check_requires_grad(outputs, "outputs", strict=strict)
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {fn} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn} should contain "
                           "a single element")
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict=strict)
    return is_inputs_tuple, inputs, v, outputs, is_outputs_tuple, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H): differentiate ``v . grad f`` once more."""
    with enable_grad():
        is_inputs_tuple, inputs, v, outputs, is_outputs_tuple, jac = _scalar_function_grad(
            func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(result, is_inputs_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v), by the double-backward trick over ``vhp``'s graph.

    Examples
    --------
    >>> import retrograd as T
    >>> from retrograd.autograd.functional import hvp
    >>> hvp(lambda x: (x ** 3).sum(), T.tensor([1.0, 2.0]), T.tensor([1.0, 1.0]))
    (tensor(9.), tensor([ 6., 12.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs, v, outputs, is_outputs_tuple, jac = _scalar_function_grad(
            func, inputs, v, create_graph, strict, "hvp")
        grad_jac = tuple(_creation.zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(result, is_inputs_tuple))
