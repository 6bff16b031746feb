"""How an op is recorded: ``defop`` turns a forward and its derivative into a callable.

An op is a forward on raw arrays plus a ``vjp(node, grad, saved)`` that returns one
gradient per input, written with retrograd's own ops and Python operators.  Because every
op also accepts plain arrays (and then just computes, recording nothing), the same
derivative code runs on arrays for a first-order backward (fast, no graph) and on tensors
for ``create_graph=True`` (recorded, so every higher order works).

What a node saves is declared, not inferred: ``saves`` names the inputs and/or the output,
and ``saved_for`` (optional) says which inputs the derivative reads given which inputs need
a gradient (PyTorch saves ``self`` of ``x * w`` only if ``w`` requires grad), so an input
that is not read is not kept, and changing it in place later is no error.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..autograd.grad_mode import inference_blocks, record_extras, state
from ..autograd.forward_state import fw as _fw
from ..autograd.graph import (
    InferenceVersion, SavedOutput, check_saveable, next_sequence_nr, on_record,
)
from ..backend import as_array
from ..tensor import Tensor, adopted_views, forget_adopted, make_tensor, rederive_view
from ._elision import ELIDE_MIN, UFUNCS, temporary
from ._errors import forward_error
from .iter_layout import POINTWISE, binary_like_torch, layout_operands, like_torch
from . import registry

# The recording, out= and operand rules live in their own modules; the op modules import
# these names from here, as before the split (hence the re-exports, noqa: F401)
from ._operands import (  # noqa: F401
    _NOT_ARRAYS, _NUMBERS_GIVE_TENSOR, _raise, _scalar_operand, _wrap_scalar, not_tensor,
    numbers_only,
)
from ._out_rules import _C_NAMES, _OUT_DTYPE, _dtype_name, write_out  # noqa: F401
from ._record import (  # noqa: F401
    BOTH, INPUTS, NOTHING, OUTPUT, _fix_dtype, _leaf_edge, _new_node, edge_of, integer_grad,
    multi_output_class, node_class, record, record_multi, record_multi_inputs,
)

_ndarray = np.ndarray
_new = object.__new__
_F32 = np.dtype("float32")  # (NumPy's built-in dtypes are singletons: ``is`` compares them)
_F64 = np.dtype("float64")
_NEVER = object()  # what a caller's ``forward`` never is
# ``[n]``, non-zero while retrograd.func.vmap runs: only then can an argument be a
# BatchedTensor, and the non-Tensor branches below hand it to ``registry.batched_call``
_batching = registry.batching


class Op:
    """A differentiable operation: call it with tensors (records) or arrays (computes).

    Parameters
    ----------
    name : str
        The public name (``"mul"``), used in error messages.
    forward : callable
        ``forward(*arrays, *params) -> array`` (or ``(array, extras)`` with ``extras=True``:
        extra arrays such as argmax indices, saved for the derivative).
    vjp : callable
        ``vjp(node, grad, saved) -> tuple``: one gradient per input, ``None`` where
        ``node.next[i]`` is None.  ``saved`` holds the declared inputs, then the output,
        then the extras; ``node.params`` holds the non-tensor arguments.
    backward_name : str
        The grad_fn name, as PyTorch's (``"MulBackward0"``).
    n_inputs : int
        How many leading arguments are tensors (or scalars standing for tensors).
    saves : int
        ``NOTHING``, ``INPUTS``, ``OUTPUT`` or ``BOTH``.
    dtype_rule : str
        ``"same"`` (NumPy's dtype is right), ``"promote"`` (PyTorch's promotion),
        ``"float"`` (promotion, integers become the default float), ``"bool"``.
    view : bool
        The output shares memory with input 0 (reshape, transpose...): versions are shared.
    fast : callable, (callable, callable) or None
        The forward as one C-level call on NumPy arrays (``numpy.add``), for the callers'
        plain path (see ``_unary_caller``): NumPy tensors of one dtype (float32 or float64
        for a unary op), nothing to record, no parameters.  It must compute what
        ``forward`` computes there (bit for bit), and may raise where ``forward`` would
        (the caller then takes the general path, which reports it).  A unary op may give
        a pair: the calls for float32 and for float64.
    """

    __slots__ = ("name", "forward", "node_cls", "n_inputs", "dtype_rule", "extras", "view",
                 "differentiable", "fast")

    def __init__(self, name, forward, vjp, backward_name, n_inputs=1, saves=NOTHING,
                 dtype_rule="same", extras=False, view=False, differentiable=True,
                 saved_for=None, fast=None):
        self.name = name
        self.forward = forward
        self.node_cls = node_class(backward_name, vjp, saves, saved_for)
        self.n_inputs = n_inputs
        self.dtype_rule = dtype_rule
        self.extras = extras
        self.view = view
        self.differentiable = differentiable
        self.fast = fast

    def __repr__(self):
        return f"<retrograd op {self.name}>"


def defop(name, forward, vjp=None, backward_name=None, n_inputs=1, saves=NOTHING,
          dtype_rule="same", extras=False, view=False, differentiable=True, doc=None,
          saved_for=None, fast=None):
    """Define an op; returns the function users call (``retrograd.mul`` etc.).

    ``saved_for(needs) -> keep``: given which inputs need a gradient (bools), which inputs
    the derivative reads; the others are not saved (None in ``saved``).  ``fast``: see
    :class:`Op` (unary and binary ops only)."""
    op = Op(name, forward, vjp, backward_name or "NotDifferentiable", n_inputs, saves,
            dtype_rule, extras, view, differentiable, saved_for, fast)
    if n_inputs == 1 and not extras:
        fn = _unary_caller(op)
    elif n_inputs == 2 and not extras:
        fn = _binary_caller(op)
    else:
        fn = _general_caller(op)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc or f"retrograd.{name}: see PyTorch's torch.{name}."
    fn.op = op
    return fn


def _share_version(x, out):
    if x._vc is None:
        x._vc = [0]
    out._vc = x._vc


def _unary_caller(op):
    # The hot path of every recorded program: one closure per op, with the op's settings
    # in local variables and the tensor and node built inline (each saved call or
    # attribute lookup is ~5% of a small op's cost; see bench/).  The slots set here must
    # stay those of tensor.make_tensor: tests/test_training.py checks every op path.
    forward = op.forward
    node_cls = op.node_cls
    to_float = op.dtype_rule == "float"
    view = op.view
    differentiable = op.differentiable
    saves = node_cls.saves
    saves_input = bool(saves & INPUTS)
    saves_output = bool(saves & OUTPUT)
    fw = _fw  # forward AD: one slot read per call while no dual level is open
    fast = op.fast
    fast32, fast64 = fast if type(fast) is tuple else (fast, fast)
    # The plain path below is taken only while ``forward is plain_forward``: compile's
    # tracer swaps the closure cell ``forward`` for an observer while it traces (and the
    # plain path never calls ``forward``), and ops without ``fast`` never match.
    plain_forward = forward if fast is not None and not view else _NEVER
    # whether a temporary input may take the result (ops/_elision.py): without a node, and
    # with one when the node does not save the input (tanh, exp save their output)
    elides = plain_forward is not _NEVER and fast32 in UFUNCS and fast64 in UFUNCS
    elides_recorded = elides and not saves_input
    # whether the result takes PyTorch's TensorIterator layout (ops/iter_layout.py)
    relays = op.name in POINTWISE and not view
    row_major_result = relays and not layout_operands(op, (True,))

    def call(input, *params, out=None):  # noqa: A002 - PyTorch's keyword names
        if out is not None:
            return write_out(op.name, (input,), call(input, *params), out, differentiable)
        x = input
        tx = type(x)
        if tx is not Tensor and (tx is _ndarray or not isinstance(x, Tensor)):
            if tx is not _ndarray:
                if _batching[0] and hasattr(x, "__retrograd_batched__"):  # inside vmap
                    return registry.batched_call(op.name, call, (input, *params))
                if tx in _NOT_ARRAYS:  # a user's number, list, None: PyTorch's TypeError
                    raise not_tensor(op.name, x)
            return forward(x, *params)  # arrays in, arrays out: a first-order backward
        xd = x._data
        # Whether a node is due: grad mode (a thread-local read, as costly as a few attribute
        # reads) is read here, once, only when x requires grad.
        recording = x._requires_grad and differentiable and state.enabled
        if not recording and forward is plain_forward and tx is Tensor and not params:
            # The plain path (inference: bench/ (f), MLP under no_grad): a float NumPy
            # tensor (not a subclass), no parameters, nothing to record, no dual level, no
            # inference_mode block, no compile trace (``plain_forward``): what the general
            # path below builds in that case, with a third of its Python.
            dt = xd.dtype
            if ((dt is _F32 or dt is _F64) and xd.__class__ is _ndarray
                    and not fw.active and not inference_blocks):
                if elides and xd.size >= ELIDE_MIN and temporary(x, xd):
                    return make_tensor((fast32 if dt is _F32 else fast64)(xd, out=xd))
                data = (fast32 if dt is _F32 else fast64)(xd)
                if data.__class__ is not _ndarray:
                    data = as_array(data)  # (0-d: NumPy gives a scalar)
                elif relays and not xd.flags.c_contiguous:  # (ops/iter_layout.py)
                    data = like_torch(data, () if row_major_result else (xd,))
                # make_tensor's slots, inline (a Python call fewer: ~500 instructions, bench/
                # instructions.py); no inference_mode block is open here
                t = _new(Tensor)
                t._data = data
                t._grad_fn = None
                t._requires_grad = False
                t._grad = None
                t._vc = None
                t._nr = 0
                t._acc = None
                t._extra = None
                return t
        if to_float and xd.dtype.kind != "f":
            # an integer or bool input computes in the default float, as PyTorch's exp/sqrt/
            # sigmoid... of an int tensor (NumPy would give float64, or float16 for uint8)
            xd = xd.astype(dtypes.get_default_dtype().numpy)
        try:  # free in Python 3.11 when nothing is raised
            if (recording and elides_recorded and xd.size >= ELIDE_MIN and not params
                    and forward is plain_forward and tx is Tensor
                    and (xd.dtype is _F32 or xd.dtype is _F64) and xd.__class__ is _ndarray
                    and not fw.active and not inference_blocks and not record_extras
                    and temporary(x, xd)):
                data = (fast32 if xd.dtype is _F32 else fast64)(xd, out=xd)
            else:
                data = forward(xd, *params)
        except (ValueError, IndexError, TypeError) as e:  # NumPy's: PyTorch's class, naming the op
            if _batching[0]:  # a BatchedTensor among the params (inside vmap): the
                return registry.batched_call(op.name, None, (input, *params))  # public op's rule
            if recording:  # (PyTorch's autograd wrapper read x's grad_fn before its kernel)
                forget_adopted((x,))
            raise forward_error(op.name, e, (xd, *params)) from None  # (masks)
        except RuntimeError:  # the forward's own check (shapes, dtypes), worded as PyTorch's
            if recording:
                forget_adopted((x,))
            raise
        if type(data) is not _ndarray:
            data = as_array(data)
        elif relays and not x._data.flags.c_contiguous:  # PyTorch's layout
            data = like_torch(data, () if row_major_result else (x._data,))
        out = _new(Tensor)
        out._data = data
        out._grad = None
        out._nr = 0
        out._acc = None
        out._extra = None
        if view:  # the output shares memory with x: share its version counter too
            vc = x._vc
            if vc is None:
                vc = x._vc = [0]
            out._vc = vc
        else:
            # (the thread-local flag is read only while some inference_mode block is open)
            out._vc = InferenceVersion((1,)) if inference_blocks and state.inference else None
        out_dtype = data.dtype  # (read once: an array's attribute is a descriptor call)
        if not (recording and (out_dtype.kind == "f"
                               or integer_grad(op.name, (x,), data))):
            out._grad_fn = None
            out._requires_grad = False
            if fw.active:
                fw.propagate(op, (x,), out, params, ())
            return out
        fn = x._grad_fn
        if fn is None:
            fn = _leaf_edge(x)
        elif adopted_views:  # PyTorch re-derives an adopted view here, or refuses it
            rederive_view(x, fn)
        node = _new(node_cls)
        node.seq = next_sequence_nr()
        node.next = (fn,)
        node.next_nr = (x._nr,) if x._nr else None
        node.params = params
        node.hooks = None
        node.out_shape = data.shape
        node.out_dtype = out_dtype
        node.versions = None
        if saves_input:
            vc = x._vc
            if vc is not None and vc[0]:
                check_saveable(vc)
                node.versions = (vc[0],)
            if saves_output:
                vc = out._vc
                if vc is None:
                    vc = out._vc = [0]
                node.saved = (x, SavedOutput(data, vc))
            else:
                node.saved = (x,)
        elif saves_output:
            vc = out._vc
            if vc is None:
                vc = out._vc = [0]
            node.saved = (SavedOutput(data, vc),)
        else:
            node.saved = ()
        out._grad_fn = node
        out._requires_grad = True
        if record_extras:  # saved-tensor hooks or anomaly mode: see graph.on_record
            on_record(node, (out,))
        if fw.active:
            fw.propagate(op, (x,), out, params, ())
        return out

    return call


def _into(fast, ad, bd, out):
    """``fast(ad, bd)`` written into ``out`` (one of them), or None when the result would
    not fit it (the other operand broadcasts it to a larger shape)."""
    try:
        return fast(ad, bd, out=out)
    except ValueError:
        return None


def _binary_caller(op, recording_known=False):
    # ``recording_known``: the caller for a function that has read the grad mode already and
    # calls this only when a node is due (matmul's 2-D product: one thread-local read a call)
    forward = op.forward
    node_cls = op.node_cls
    rule = op.dtype_rule
    promotes = rule != "same" and rule != "bool"
    to_float = rule == "float"
    differentiable = op.differentiable
    saves = node_cls.saves
    saves_input = bool(saves & INPUTS)
    saves_output = bool(saves & OUTPUT)
    saved_for = node_cls.saved_for
    # which of (a, b) to save, indexed by which edges exist (1: only a's, 2: b's, 3: both;
    # 0: a view made under no_grad requires grad but has no edge, as PyTorch's)
    keep = None if saved_for is None else [
        saved_for((bool(i & 1), bool(i & 2))) for i in (0, 1, 2, 3)]
    fw = _fw
    fast = op.fast
    # (see _unary_caller; an op whose integer results become floats (true division) would
    # need the dtype fix-up, which the plain path does not do: none there)
    plain_forward = forward if fast is not None and not to_float else _NEVER
    # (see _unary_caller; with a node only for ops that save no input: add, sub)
    elides = plain_forward is not _NEVER and fast in UFUNCS
    elides_recorded = elides and not saves_input
    relays = op.name in POINTWISE  # (see _unary_caller)
    # whether the first operand is TensorIterator's first (rsub(a, b) is sub(b, a))
    # (where(cond, a, b): the condition, a parameter here, is its first)
    a_first = op.name != "rsub" and op.name != "where"

    def call(input, other, *params, out=None):  # noqa: A002 - PyTorch's keyword names
        if out is not None:
            return write_out(op.name, (input, other), call(input, other, *params), out,
                             differentiable)
        a = input
        b = other
        ta = type(a)
        tb = type(b)
        a_is_t = ta is Tensor or (ta is not _ndarray and isinstance(a, Tensor))
        b_is_t = tb is Tensor or (tb is not _ndarray and isinstance(b, Tensor))
        # ``recording``: whether a node is due (grad mode read once, see _unary_caller)
        if a_is_t:
            ad = a._data
            ga = a._requires_grad
            if b_is_t:
                bd = b._data
                gb = b._requires_grad
                recording = recording_known or ((ga or gb) and differentiable and state.enabled)
                if (not recording and forward is plain_forward and ta is Tensor
                        and tb is Tensor and not params and ad.dtype is bd.dtype
                        and ad.__class__ is _ndarray and not fw.active
                        and not inference_blocks):
                    # The plain path (see _unary_caller): two NumPy tensors of one dtype,
                    # where NumPy's result dtype is PyTorch's
                    try:
                        if elides and ad.size >= ELIDE_MIN and temporary(a, ad):
                            data = fast(ad, bd, out=ad)  # (a broadcast to more: ValueError)
                        elif elides and bd.size >= ELIDE_MIN and temporary(b, bd):
                            data = fast(ad, bd, out=bd)
                        else:
                            data = fast(ad, bd)
                    except (ValueError, TypeError):
                        pass  # (no broadcast, bool - bool...: the general path reports them)
                    else:
                        if data.__class__ is not _ndarray:
                            data = as_array(data)
                        elif relays and not (a_first and ad.size == data.size
                                             and data is not bd and ad.flags.c_contiguous):
                            # (a row-major first operand of the result's shape, but for
                            # leading 1s, decides PyTorch's layout: row-major, as NumPy's
                            # unless written into b; ops/iter_layout.py)
                            data = binary_like_torch(data, ad, bd, op.name)  # (layout)
                        t = _new(Tensor)  # (as above: make_tensor's slots inline)
                        t._data = data
                        t._grad_fn = None
                        t._requires_grad = False
                        t._grad = None
                        t._vc = None
                        t._nr = 0
                        t._acc = None
                        t._extra = None
                        return t
                # (read once: an array's attribute is a descriptor call, never cached)
                differ = ad.dtype != bd.dtype
                if (differ and rule == "promote" and ad.dtype.kind == "f"
                        and bd.dtype.kind == "f" and (ad.ndim == 0) != (bd.ndim == 0)):
                    # PyTorch casts both to the result dtype first: a float32 0.69 minus a
                    # 0-d float64 0.69 is 0, not float64's -2.4e-9 rounded to float32
                    want = dtypes.result_type(ad, bd).numpy
                    ad, bd = ad.astype(want, copy=False), bd.astype(want, copy=False)
                    differ = False  # (both are ``want`` now)
                try:
                    data = None
                    if (recording and elides_recorded
                            and (ad.size >= ELIDE_MIN or bd.size >= ELIDE_MIN)  # (small: out)
                            and not params and ta is Tensor and tb is Tensor
                            and forward is plain_forward
                            and ad.dtype is bd.dtype and ad.dtype.kind == "f"
                            and ad.__class__ is _ndarray and bd.__class__ is _ndarray
                            and not fw.active and not inference_blocks and not record_extras):
                        # (inline: ops/_elision.py's reference counts assume this frame)
                        if ad.size >= ELIDE_MIN and temporary(a, ad):
                            data = _into(fast, ad, bd, ad)
                        elif bd.size >= ELIDE_MIN and temporary(b, bd):
                            data = _into(fast, ad, bd, bd)
                    if data is None:
                        data = forward(ad, bd, *params)
                except (ValueError, IndexError, TypeError) as e:  # (shapes, dtypes)
                    if recording:  # (see _unary_caller)
                        forget_adopted((a, b))
                    raise forward_error(op.name, e, (ad, bd)) from None
                except RuntimeError:
                    if recording:
                        forget_adopted((a, b))
                    raise
                # NumPy and PyTorch promote alike unless the dtypes differ (0-d rule)
                # or an integer op must give a float (true division).
                if type(data) is not _ndarray:
                    data = as_array(data)
                if differ or (to_float and ad.dtype.kind != "f"):
                    data = _fix_dtype(rule, (a, b), data)
                if relays and type(data) is _ndarray and not (
                        a_first and ad.size == data.size and data is not bd
                        and ad.flags.c_contiguous
                        and (forward is plain_forward or data.flags.c_contiguous)):
                    # (as the plain path; a forward other than one ufunc is checked)
                    data = binary_like_torch(data, a._data, b._data, op.name, params)  # (layout)
            else:
                gb = False
                if (tb is float and not ga and forward is plain_forward and ta is Tensor
                        and not params and (ad.dtype is _F32 or ad.dtype is _F64)
                        and ad.__class__ is _ndarray and not fw.active
                        and not inference_blocks):
                    # The plain path with a Python float (an optimizer step's lr * p.grad):
                    # NumPy keeps the array's float dtype for a Python float, as PyTorch
                    # does, and the forwards with ``fast`` (add, sub, mul) compute a + b,
                    # a - b, a * b: the same call
                    data = fast(ad, b)
                    if data.__class__ is not _ndarray:
                        data = as_array(data)
                    elif relays and not ad.flags.c_contiguous:  # (ops/iter_layout.py)
                        data = like_torch(data, (ad,))
                    t = _new(Tensor)  # (as above: make_tensor's slots inline)
                    t._data = data
                    t._grad_fn = None
                    t._requires_grad = False
                    t._grad = None
                    t._vc = None
                    t._nr = 0
                    t._acc = None
                    t._extra = None
                    return t
                if tb is not float and tb is not int and tb is not bool:
                    if _batching[0] and hasattr(b, "__retrograd_batched__"):  # inside vmap
                        return registry.batched_call(op.name, call, (input, other, *params))
                    b = _scalar_operand(b, op.name)
                try:
                    data = forward(ad, b, *params)
                except OverflowError:  # uint8 + 300: PyTorch wraps the scalar, NumPy raises
                    data = forward(ad, _wrap_scalar(b, ad.dtype), *params)
                except (ValueError, IndexError, TypeError) as e:
                    raise forward_error(op.name, e, (ad,)) from None
                if type(data) is not _ndarray:
                    data = as_array(data)
                if promotes and ad.dtype.kind != "f":
                    data = _fix_dtype(rule, (a, b), data)
                if relays and type(data) is _ndarray and not ad.flags.c_contiguous:
                    data = binary_like_torch(data, ad, b, op.name, params)  # (layout)
                recording = ga and differentiable and state.enabled
        elif b_is_t:
            bd = b._data
            ga = False
            gb = b._requires_grad
            if ta is not float and ta is not int and ta is not bool:
                if _batching[0] and hasattr(a, "__retrograd_batched__"):  # inside vmap
                    return registry.batched_call(op.name, call, (input, other, *params))
                a = _scalar_operand(a, op.name)
            try:
                data = forward(a, bd, *params)
            except OverflowError:
                data = forward(_wrap_scalar(a, bd.dtype), bd, *params)
            except (ValueError, IndexError, TypeError) as e:
                raise forward_error(op.name, e, (bd,)) from None
            if type(data) is not _ndarray:
                data = as_array(data)
            if promotes and bd.dtype.kind != "f":
                data = _fix_dtype(rule, (a, b), data)
            if relays and type(data) is _ndarray and not bd.flags.c_contiguous:
                data = binary_like_torch(data, a, bd, op.name, params)  # (ops/iter_layout.py)
            recording = gb and differentiable and state.enabled
        else:
            if _batching[0] and (hasattr(a, "__retrograd_batched__")
                                 or hasattr(b, "__retrograd_batched__")):  # inside vmap
                return registry.batched_call(op.name, call, (input, other, *params))
            if ta is not _ndarray and ta in _NOT_ARRAYS and tb in _NOT_ARRAYS:
                # a user's two numbers (derivatives pass an array): a 0-d tensor, or refused
                return call(numbers_only(op.name, a, b), b, *params)
            return forward(a, b, *params)
        out = _new(Tensor)
        out._data = data
        out._grad = None
        out._vc = InferenceVersion((1,)) if inference_blocks and state.inference else None
        out._nr = 0
        out._acc = None
        out._extra = None
        out_dtype = data.dtype  # (read once, as ``differ`` above)
        if not (recording and (out_dtype.kind == "f" or getattr(node_cls, "any_dtype", False)
                               or integer_grad(op.name, (a, b), data))):
            out._grad_fn = None
            out._requires_grad = False
            if fw.active:
                fw.propagate(op, (a, b), out, params, ())
            return out
        nrs = None
        if ga:
            ea = a._grad_fn
            if ea is None:
                ea = _leaf_edge(a)
            elif adopted_views:  # (see _unary_caller)
                rederive_view(a, ea)
            if a._nr:
                nrs = (a._nr, 0)
        else:
            ea = None
        if gb:
            eb = b._grad_fn
            if eb is None:
                eb = _leaf_edge(b)
            elif adopted_views:  # (see _unary_caller)
                rederive_view(b, eb)
            if b._nr:
                nrs = (nrs[0] if nrs else 0, b._nr)
        else:
            eb = None
        node = _new(node_cls)
        node.seq = next_sequence_nr()
        node.next = (ea, eb)
        node.next_nr = nrs
        node.params = params
        node.hooks = None
        node.out_shape = data.shape
        node.out_dtype = out_dtype
        node.versions = None
        if saves_input:
            if keep is not None:  # save only what the derivative reads
                # (by the edges, as record's: fuzz seed 12577197)
                keep_a, keep_b = keep[(ea is not None) + 2 * (eb is not None)]
                if not keep_a:
                    a, a_is_t = None, False
                if not keep_b:
                    b, b_is_t = None, False
            va = a._vc[0] if a_is_t and a._vc is not None else 0
            vb = b._vc[0] if b_is_t and b._vc is not None else 0
            if va or vb:
                check_saveable(a._vc if a_is_t else None)
                check_saveable(b._vc if b_is_t else None)
                node.versions = (va, vb)
            if saves_output:
                out._vc = [0]
                node.saved = (a, b, SavedOutput(data, out._vc))
            else:
                node.saved = (a, b)
        elif saves_output:
            out._vc = [0]
            node.saved = (SavedOutput(data, out._vc),)
        else:
            node.saved = ()
        out._grad_fn = node
        out._requires_grad = True
        if record_extras:  # saved-tensor hooks or anomaly mode: see graph.on_record
            on_record(node, (out,))
        if fw.active:
            fw.propagate(op, (input, other), out, params, ())
        return out

    return call


def recording_caller(fn):
    """A caller of ``fn``'s op (a two-input defop) for callers that have read the grad mode
    and found a node due: the same call, without reading it again."""
    call = _binary_caller(fn.op, recording_known=True)
    call.__name__ = call.__qualname__ = fn.__name__
    call.op = fn.op
    return call


def apply_op(op, inputs, params=()):
    """Run ``op`` on ``inputs`` (tensors or arrays) with non-tensor ``params``; record it."""
    any_tensor = False
    wants_grad = False
    datas = []
    for x in inputs:
        if isinstance(x, Tensor):
            any_tensor = True
            wants_grad = wants_grad or x._requires_grad
            datas.append(x._data)
        else:
            if _batching[0] and hasattr(x, "__retrograd_batched__"):  # inside vmap
                def call(*args, n=len(inputs)):
                    return apply_op(op, args[:n], args[n:])

                return registry.batched_call(op.name, call, (*inputs, *params))
            datas.append(x)
    if not any_tensor and inputs and type(inputs[0]) in _NOT_ARRAYS:
        raise not_tensor(op.name, inputs[0])  # (a user's number, list, None)
    try:
        result = op.forward(*datas, *params)
    except (ValueError, IndexError, TypeError) as e:  # NumPy's: PyTorch's class, naming the op
        if not any_tensor:
            raise
        if wants_grad and op.differentiable:  # (see _unary_caller)
            forget_adopted(inputs)
        raise forward_error(op.name, e, datas) from None
    except RuntimeError:
        if wants_grad and op.differentiable:
            forget_adopted(inputs)
        raise
    if not any_tensor:
        return result[0] if op.extras else result
    extras = ()
    if op.extras:
        result, extras = result
    data = _fix_dtype(op.dtype_rule, inputs, as_array(result))
    if op.name in POINTWISE and type(data) is _ndarray:  # addcmul, lerp, clamp of tensors
        first = datas[0]
        if not (type(first) is _ndarray and first.size == data.size
                and first.flags.c_contiguous and data.flags.c_contiguous):
            data = like_torch(data, [d for d in datas if hasattr(d, "ndim")])  # (see above)
    out = make_tensor(data)
    if op.view:
        _share_version(inputs[0], out)
    if wants_grad and state.enabled and op.differentiable:
        record(op.node_cls, inputs, out, params, extras)
    if _fw.active:
        _fw.propagate(op, inputs, out, params, extras)
    return out


def _general_caller(op):
    n = op.n_inputs

    def call(*args):
        return apply_op(op, args[:n], args[n:])

    return call
