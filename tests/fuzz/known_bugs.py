"""KNOWN_BUGS: mismatches being fixed on other branches, or found by the fuzzer and not yet fixed.

Each entry is a predicate on a failing program and its failure; a failure that matches one
is counted as known, not reported (and the shrinker never drifts into one).  The first group
is issue 7's list of bugs being fixed right now: delete an entry once its fix is merged and
``make fuzz`` no longer counts it.  The second group are the fuzzer's own findings too big to
fix in op code here (each with its minimal reproducer in tests/fuzz/README.md).
"""

from __future__ import annotations

import re

_NAME = re.compile(r"\bv\d+\b")

KNOWN_BUGS: list = []  # (name, predicate(program, failure) -> bool)
# Differences that are not bugs (see the group at the end: each says why); kept apart so that
# KNOWN_BUGS can shrink to nothing.
ACCEPTED_DIFFERENCES: list = []


def known(name):
    def register(pred):
        KNOWN_BUGS.append((name, pred))
        return pred
    return register


def accepted(name):
    def register(pred):
        ACCEPTED_DIFFERENCES.append((name, pred))
        return pred
    return register


def which_known(prog, failure) -> str | None:
    for name, pred in KNOWN_BUGS + ACCEPTED_DIFFERENCES:
        if pred(prog, failure):
            return name
    return None


def _ops(prog):
    return {st.op for st in prog.steps}


def _texts(prog):
    return [st.text for st in prog.steps if st.text]


def _raised_only_in(failure, lib):
    """The statement raised in ``lib`` ("torch" or "retrograd") and not in the other."""
    if failure.kind != "raise":
        return False
    return bool(failure.torch_exc) != bool(failure.retro_exc) and \
        bool(failure.torch_exc if lib == "torch" else failure.retro_exc)


VIEW_OPS = {"getitem", "getitem_multi", "narrow", "chunk", "diagonal", "expand"}
INPLACE = ("inplace",)


# ------------------------------------------------------------ issue 7's list (other branches)


# ------------------------------------------------------------ the fuzzer's findings (open)
def _texts_all(prog):
    """Every statement as it is rendered (the loss and backward steps are built late)."""
    return [src for src, _ in prog.chunks()]


@accepted("an in-place op on a view taken before its base came to require grad (a leaf to "
          "PyTorch until its grad_fn is read), after an op on it that raised in an argument "
          "check retrograd makes before recording and PyTorch's kernel makes after its "
          "autograd wrapper read the inputs' grad_fn (x.sum(5), softmax(x, 3): PyTorch's "
          "wrapper re-derives the view, which then is no leaf).  Failures in an op's forward "
          "and matmul's size/dtype checks re-derive it in retrograd too (tensor.forget_adopted: "
          "seed 9465309 was a 3-D @ 1-D size mismatch)")
def _adopted_view_after_failed_op(prog, failure):
    if not (_raised_only_in(failure, "retrograd") and
            "taken before its base came to require grad" in failure.message):
        return False
    chunks = prog.chunks()
    if not 0 <= failure.chunk < len(chunks):
        return False
    written = re.match(r"\s*(v\d+)\.\w+_\(", chunks[failure.chunk][0].split("\n")[-1])
    if written is None:
        return False
    # the view as an operand of an earlier op that raised (in both libraries: the programs
    # keep only such statements); an op that succeeded re-derives it in retrograd too
    from .runner import execute  # (the runner imports this module)
    import retrograd

    outcomes, _ = execute(prog, retrograd)
    return any(
        outcomes[i][0] is not None and any(
            written.group(1) in _NAME.findall(line.split("=", 1)[-1])
            for line in src.split("\n"))
        for i, (src, _) in enumerate(chunks[:failure.chunk]))


_LAYOUT_MAKERS = {"transpose", "permute", "expand", "diagonal", "narrow", "chunk", "getitem",
                  "getitem_multi", "flip", "arrange", "matmul", "einsum", "outer"}


@accepted("memory layout: an elementwise result's strides follow NumPy's order='K' rule in "
          "retrograd and TensorIterator's in PyTorch, which differ when the operands' layouts "
          "disagree (a permuted or expanded operand with a contiguous one: seed 9801385); so "
          "reshape/view/flatten of it is a view in one library and a copy in the other "
          "(ReshapeAliasBackward0/ViewBackward0 vs UnsafeViewBackward0, a no_grad reshape's "
          "flags, view() raising), and contiguous() is the tensor itself in one only (an "
          "in-place change reaches it or not).  retrograd's reshape is a view whenever its "
          "strides allow, as PyTorch's; matching the strides themselves would mean "
          "reimplementing TensorIterator's layout choice for every op")
def _layout(prog, failure):
    if not (_LAYOUT_MAKERS & _ops(prog)):
        return False
    if failure.kind == "raise":  # view() of a result PyTorch lays out differently
        return "view size is not compatible" in failure.message
    if failure.kind == "value":  # contiguous() of what PyTorch lays out contiguously is itself
        # (so an in-place write of it, or of its input, reaches the other in one library)
        contiguous = set()
        for st in prog.steps:
            if st.text and ".contiguous()" in st.text and st.target:
                contiguous |= {st.target} | _rhs_names(st)
        return bool(contiguous) and _writes_family_of(prog, contiguous)
    if failure.kind == "flags":  # a reshape under no_grad: a view requires grad, a copy not
        return failure.op in ("reshape", "flatten", "unflatten", "clone")
    return failure.kind == "grad_fn" and bool(
        {"UnsafeViewBackward0", "ReshapeAliasBackward0"} & set(failure.detail))


def _rhs_names(st):
    return set(_NAME.findall(st.text.split("=", 1)[-1])) if st.text else set()


def _writes_family_of(prog, names):
    """Whether an in-place statement writes one of ``names``, a view of one, or the tensor
    one is a view of (one step of the view relation each way)."""
    defs = {st.target: st for st in prog.steps if st.target and st.text}

    def related(name):
        if name in names:
            return True
        st = defs.get(name)
        if st is not None and st.view_chain and names & _rhs_names(st):
            return True  # a view of one of names
        return any(defs[o].view_chain and name in _rhs_names(defs[o])
                   for o in names if o in defs)  # the base of one
    return any(st.kind == "inplace" and st.on and related(st.on) for st in prog.steps)


def _written_product_operand(prog):
    """Whether an in-place statement writes an operand of a matmul/einsum statement, a view
    of one, or the tensor one is a view of."""
    operands = set()
    for st in prog.steps:
        if st.op in ("matmul", "einsum"):
            operands |= _rhs_names(st)
    return _writes_family_of(prog, operands)


@accepted("graph granularity of products (tests/fuzz/README.md): PyTorch's matmul folds an "
          "operand into a reshaped copy (1-D or N-D by N-D) and its einsum first sums the "
          "letters only one operand has, then saves those new tensors; retrograd's one node "
          "saves the operand itself, so an in-place change of the operand after the product "
          "breaks backward in retrograd only (never a wrong gradient: seeds 9804282, 9806581). "
          "Only a node a product records (MulBackward0/SumBackward1/ViewBackward0: einsum's) "
          "and an in-place write of a product's operand (or its view or base)")
def _product_saves_operand(prog, failure):
    if not (_raised_only_in(failure, "retrograd") and
            "modified by an inplace operation" in failure.message):
        return False
    m = re.search(r"saved as input \d+ of (\w+)", failure.message)
    if m is None:
        return False
    ops = _ops(prog)
    node = m.group(1)
    if node in ("UnsafeViewBackward0", "CloneBackward0", "TransposeBackward0",
                "BmmBackward0"):
        made = bool({"matmul", "einsum"} & ops)
    else:
        made = node in ("ViewBackward0", "MulBackward0", "SumBackward1") and "einsum" in ops
    return made and _written_product_operand(prog)


# ------------------------------------------------------------ ACCEPTED_DIFFERENCES (not bugs)
# Each is a difference retrograd keeps on purpose: PyTorch's result is unspecified there (ties,
# overlapping writes), within rounding of ours and only amplified by a discontinuity or a pole,
# or a PyTorch bug that retrograd must not copy.
_UNSPECIFIED_TIES = re.compile(r"\.(sort|topk|kthvalue|argsort)\(")


def _operands_before(prog, i):
    """PyTorch's values of the tensors step ``i`` reads, as the step runs (the program run
    up to it), in the order its text names them."""
    from .program import Program  # (the runner imports this module)
    from .runner import execute, torch

    if torch is None:
        return []
    _, ns = execute(Program(prog.seed, prog.steps[:i]), torch)
    names = _NAME.findall(prog.steps[i].text.split("=", 1)[-1])
    return [ns[n].detach() for n in names if isinstance(ns.get(n), torch.Tensor)]


def _large_trig_argument(prog, failure, at_least):
    """Whether the sin/cos/tan statement whose value differs read an argument of magnitude
    ``at_least`` or more (where a 1-ulp difference of it exceeds the tolerance)."""
    name = failure.message.split(":", 1)[0]
    for i, st in enumerate(prog.steps):
        if st.target == name and st.op in ("sin", "cos", "tan"):
            operands = _operands_before(prog, i)
            if operands and operands[0].is_floating_point():
                x = operands[0].abs()
                x = x[x.isfinite()]
                return bool(x.numel()) and float(x.max()) >= at_least
    return False


_LITERAL = re.compile(r"(?<![\w.])-?\d+\.\d*(?:e[-+]?\d+)?")


def _near_equal_operands(prog, ops):
    """Whether a statement of one of ``ops`` compares two values (its tensor operands and
    float literals, broadcast) that are equal up to rounding somewhere: where 1 ulp upstream
    decides the comparison (1e-5 relative in float32, 1e-10 in float64)."""
    import torch

    for i, st in enumerate(prog.steps):
        if st.op not in ops or not st.text:
            continue
        operands = [o for o in _operands_before(prog, i)
                    if o.is_floating_point() or o.dtype == torch.int64]
        rel = 1e-5 if any(o.dtype != torch.float64 for o in operands) else 1e-10
        values = [o.double() for o in operands]
        values += [torch.tensor(float(v), dtype=torch.float64)
                   for v in _LITERAL.findall(st.text.split("=", 1)[-1])]
        for a_i, a in enumerate(values):
            for b in values[a_i + 1:]:
                try:
                    gap = (a - b).abs() <= rel * torch.maximum(a.abs(), b.abs()).clamp(min=1)
                except RuntimeError:  # (shapes that do not broadcast)
                    continue
                if bool(gap.any()):
                    return True
    return False


def _operand_has_ties(prog, i):
    """Whether the tensor step ``i`` sorts (its first operand) holds equal values.  Two NaNs
    are tied too: both libraries sort NaN above everything, and which of them comes first
    is as unspecified as for equal numbers (seed 19552727; ``unique`` keeps NaNs apart)."""
    operands = _operands_before(prog, i)
    if not operands or operands[0].is_complex():
        return False
    values = operands[0].reshape(-1)
    if values.is_floating_point() and int(values.isnan().sum()) > 1:
        return True
    return values.unique().numel() < values.numel()


@accepted("ties: which of tied values sort/topk/kthvalue/argsort pick, so which index they "
          "return and which gets the gradient (PyTorch documents the order of equal "
          "elements as unspecified for an unstable sort; max/min(dim) and argmax/argmin "
          "return the first occurrence, documented, and retrograd matches them: not here); "
          "only when such an op's input holds equal values")
def _ties(prog, failure):
    sorts = [i for i, st in enumerate(prog.steps)
             if st.text and _UNSPECIFIED_TIES.search(st.text)]
    if failure.kind == "value":  # an index output differs (or a value computed from one)
        sorts = [i for i in sorts if any(
            k in prog.steps[i].text for k in ("[1]", ".indices", ".argsort("))]
    elif failure.kind not in ("grad", "log"):
        return False
    return any(_operand_has_ties(prog, i) for i in sorts)


@accepted("PyTorch's own bugs: an INTERNAL ASSERT; 'ZeroTensors are immutable' on a second "
          "backward through sgn/angle (their zero derivative is a ZeroTensor); ldexp's "
          "derivative by an integer exponent tensor (PyTorch computes 2 ** other in integers: "
          "0 for a negative exponent)")
def _torch_bug(prog, failure):
    if failure.kind == "raise":
        return "INTERNAL ASSERT" in failure.message or "ZeroTensors are immutable" in \
            failure.message
    # (the wrong first derivative also reaches the second backward's loss2 as a value)
    if not (failure.kind in ("grad", "log") or (failure.kind == "value" and
                                                failure.op == "loss2")):
        return False
    # (only an integer exponent tensor with a negative element: 2 ** -1 is 0 in integers)
    return any(st.op == "ldexp" and any(
        not o.is_floating_point() and not o.is_complex() and bool((o < 0).any())
        for o in _operands_before(prog, i)[1:2]) for i, st in enumerate(prog.steps))


@accepted("float32: a 1-ulp difference (NumPy's exp/pow vs PyTorch's vectorized kernels) "
          "amplified by sin/cos/tan of a large argument or by frac/trunc/floor/round at an "
          "integer")
def _float32_conditioning(prog, failure):
    # (an int64 tensor through a float op is float32, the default dtype)
    rounding = {"frac", "trunc", "floor", "ceil", "round"}
    # (also through an in-place rounding of the value: torch's float32 i0(0) is 0.99999994,
    # so floor_ of it is 0, where retrograd's i0(0) is exactly 1)
    rounded = any(st.kind == "inplace" and st.op.rstrip("_") in rounding for st in prog.steps)
    if not (failure.kind == "value" and any(
            "float32" in src or ".float()" in src or "int64" in src for src in _texts_all(prog))):
        return False
    if failure.op in ("sin", "cos", "tan"):  # (1 ulp of a float32 beyond 100 exceeds 1e-5)
        return _large_trig_argument(prog, failure, 100.0)
    return failure.op in rounding or rounded


@accepted("signed zeros: sums give 0.0 where PyTorch gives -0.0 or the "
          "reverse (1/x, atan2, rsqrt then differ in sign only), as do matmul's first-order "
          "gradients through an (m, 1) @ (1, n) mm (PyTorch's MmBackward0 mm keeps the exact "
          "products' -0.0, retrograd's array path adds them to +0.0: a check there costs the "
          "hot path; its forward and create_graph products match, tests/fuzz/"
          "test_regressions_fuzzv.py); relu, clamp, maximum/minimum and masked gradients "
          "match PyTorch (tests/ops/test_signed_zeros.py), as does remainder's zero (the "
          "dividend's sign: tests/fuzz/test_regressions_fuzzy2.py)")
def _signed_zero(prog, failure):
    # (atan2(y, -0.0) is pi where atan2(y, 0.0) is 0: the sign of a zero made by clamp/relu,
    # so only where an atan2's second operand holds a zero)
    return failure.kind in ("value", "grad") and ("(signs only)" in failure.message or (
        failure.op == "atan2" and bool({"clamp", "clamp_", "relu", "relu_"} & _ops(prog))
        and any(st.op == "atan2" and any(bool((o == 0).any()) for o in _operands_before(
            prog, i)[1:2]) for i, st in enumerate(prog.steps))))


@accepted("a comparison at a rounding boundary: sums add in another order (1 ulp), so x >= c "
          "can differ; likewise x % y where x / y is an integer up to 1 ulp (0 in one library, "
          "about y in the other)")
def _rounding_boundary(prog, failure):
    compares = {"eq", "ne", "lt", "le", "gt", "ge"}
    sums = {"sum", "mean", "cumsum", "logsumexp", "matmul", "einsum", "var", "std", "norm",
            "addmm", "addmv", "addbmm", "baddbmm", "addr", "mm", "bmm", "mv", "dot", "inner",
            "outer", "tensordot", "prod", "cumprod"}  # (seed 9010590: float32 addmm)
    if failure.kind == "value" and failure.op in ("remainder", "fmod"):
        # x % y jumps by y where x / y is an integer: a 1-ulp difference in x or y upstream
        # (digamma, lgamma, pow: SciPy's or NumPy's last bit vs PyTorch's) moves it across
        near_multiple = re.findall(r"[-+]?\d+\.\d+(?:e[-+]\d+)?", failure.message)
        return len(near_multiple) >= 2 and min(abs(float(v)) for v in near_multiple) < 1e-12
    if failure.kind != "value" or failure.op not in compares:
        return False
    # (only where the comparison's two sides are equal up to rounding)
    if failure.op in ("eq", "ne") and any("float32" in src for src in _texts_all(prog)):
        # float32 equality of transcendental results: 1 ulp decides (seed 9144260)
        return _near_equal_operands(prog, {failure.op})
    return bool(sums & _ops(prog)) and _near_equal_operands(prog, {failure.op})


@accepted("at a pole (1/0, log 0): inf in one library, nan (or a 1-ulp-off huge number) in "
          "the other, from the order of inf arithmetic or rounding just before the pole")
def _pole(prog, failure):
    m = failure.message
    if failure.kind not in ("value", "grad") or "\n" not in m:
        return False
    torch_part, retro_part = m.split("torch", 1)[-1].split("retrograd", 1)
    huge = re.compile(r"e\+1[5-9]")  # 1/x of a 1-ulp rounding of 0
    return ("inf" in torch_part and ("nan" in retro_part or huge.search(retro_part))) or \
        (("nan" in torch_part or huge.search(torch_part)) and "inf" in retro_part)


@accepted("the sign of a NaN: copysign by a NaN made by log/sqrt/acos... of a value out of "
          "the domain (x86's default NaN, which NumPy returns, has its sign bit set; PyTorch's "
          "kernels give +nan); NaN signs are unspecified.  Only a copysign result that differs "
          "in its signs alone")
def _nan_sign(prog, failure):
    return failure.kind == "value" and failure.op == "copysign" and \
        "(signs only)" in failure.message


@accepted("var/std over everything of 8+ float64 (16+ float32) elements: PyTorch subtracts a "
          "mean summed by its vectorised cascade, whose last bit NumPy's pairwise sum does not "
          "reproduce; for equal values one library's spread is then 0 (derivative masked) and "
          "the other's 1 ulp (derivative about 1 / sqrt(n (n - 1)), second derivative huge). "
          "Fewer elements, and reductions over some dims (Welford's exact 0), match PyTorch's "
          "algorithms exactly (ops/stats.py _var_fwd, _dtype_mean).  Only a std/var over "
          "everything of an input of 8+ values equal up to rounding")
def _std_mean_rounding(prog, failure):
    if failure.kind not in ("grad", "value"):
        return False
    for i, st in enumerate(prog.steps):
        if st.op not in ("std", "var") or not st.text:
            continue
        operands = _operands_before(prog, i)
        if not operands or not operands[0].is_floating_point():
            continue
        x = operands[0]
        if x.numel() < 8 or ("dim=" in st.text and x.dim() > 1):
            continue  # (a reduction over some dims: Welford's, exact)
        finite = x[x.isfinite()]
        if finite.numel() and float(finite.max() - finite.min()) <= 1e-5 * max(
                1.0, float(finite.abs().max())):
            return True
    return False


@accepted("a backward that raises part-way: which leaves already got their .grad (and which "
          "hooks already ran) depends on the order the engines met the error")
def _partial_backward(prog, failure):
    return failure.kind in ("grad", "log") and failure.after_failed_backward


@accepted("an in-place op whose other operand aliases part of the tensor it writes (x *= x[0] "
          "through a view): PyTorch's result depends on its kernel's loop order (its docs call "
          "overlapping in-place operands unsupported); NumPy buffers the operand")
def _aliased_operand(prog, failure):
    if failure.kind != "value":
        return False
    names = {st.target: st for st in prog.steps if st.target}
    for st in prog.steps:
        if st.kind != "inplace":
            continue
        others = set(_NAME.findall(st.text)) - {st.on}
        # (a view the table does not mark, such as a tensor_split piece: made from the
        # written tensor itself, seed 9300034)
        if any(o in names and (names[o].view_chain or
                               st.on in _NAME.findall(names[o].text or "")) for o in others):
            return True
    return False


@accepted("leaf hooks through a batched matmul (3-D @ 1-D...): PyTorch's matmul is a chain "
          "(view, unsqueeze, mm, unsafe view) and its engine runs a leaf fed straight by mm "
          "before one behind a view node, so the second operand's leaf hooks run first; "
          "retrograd's matmul is one node (README: graph granularity, as its grad_fn names), "
          "its leaves' hooks run in operand order.  The order between two different leaves' "
          "hooks is a scheduling detail PyTorch does not specify; each hook's gradient is "
          "the same (seed 9008323)")
def _hook_order_one_node(prog, failure):
    if not (failure.kind == "log" and "hooks ran in order" in failure.message and bool(
            {"matmul", "einsum", "getitem_multi"} & _ops(prog))):
        return False
    # (the order only: the runner stops at it, so the gradients each hook saw are compared
    # here, hook by hook in the order of its name)
    import retrograd

    from .runner import compare_tensors, execute, torch

    logs = [sorted(execute(prog, lib)[1]["LOG"], key=lambda e: e[0])
            for lib in (torch, retrograd)]
    return [e[0] for e in logs[0]] == [e[0] for e in logs[1]] and not any(
        compare_tensors(t, r, n) for (n, t), (_, r) in zip(*logs))


@accepted("a kink (clamp_min/max, maximum... by a tensor) where the two sides are equal up to "
          "1 ulp (logit(sigmoid(x)) against x): PyTorch's sigmoid/logit use its vectorized exp/"
          "log, NumPy's libm rounds the last bit otherwise (about 3 % of float64 sigmoid "
          "values, 0.8 % of logit(sigmoid(x)), 17 % in float32), so the kink's comparison "
          "falls on the other side and the other side gets the gradient (seed 9165951)")
def _kink_at_one_ulp(prog, failure):
    kinks = {"clamp_min", "clamp_max", "clamp", "maximum", "minimum", "fmax", "fmin"}
    # (only where a kink's two sides are equal up to rounding)
    return failure.kind in ("value", "grad") and bool(kinks & _ops(prog)) and bool(
        {"logit", "sigmoid"} & _ops(prog)) and failure.op in ("loss2", "leaf",
                                                               "autograd.grad") and \
        _near_equal_operands(prog, kinks)


# ------------------------------------------------------------ op families added by fuzzD
# (ops_table_more.py: activations, losses, scatter, scans, linalg, normalization, padding...)
_EMPTY_LEAF_TEXT = re.compile(r"v\d+ = T\.zeros\(\([\d, ]*\b0\b")


def _empty_leaf(prog):
    """A leaf with no elements: a generated one, or one printed as Leaf.expr writes it
    (``v0 = T.zeros((4, 0, 2), ...)``: a reproducer's text has no Leaf to read)."""
    return any(st.leaf.array.size == 0 if st.leaf is not None
               else bool(_EMPTY_LEAF_TEXT.match(st.text or "")) for st in prog.steps)


@accepted("circular padding's grad_fn: PyTorch 2.13 builds it from slice copies (CopySlices), "
          "retrograd records one CircularPad{1,2,3}DBackward0 node (graph granularity, as "
          "tests/ops/test_padding.py says; values and gradients are compared)")
def _circular_pad_name(prog, failure):
    return failure.kind == "grad_fn" and failure.op == "pad" and failure.detail[0] == \
        "CopySlices" and re.fullmatch(r"CircularPad[123]DBackward0", failure.detail[1] or "")


@accepted("a convolution with zero input channels: PyTorch's empty-convolution path gives "
          "0 output channels (conv1d of [2, 0, 5] by [3, 0, 2], stride 2: [2, 0, 2]), "
          "ignoring out_channels, a PyTorch bug; retrograd gives its documented "
          "(N, C_out, L_out) shape")
def _conv_zero_channels(prog, failure):
    return failure.kind == "value" and failure.op == "conv1d" and "shape torch" in \
        failure.message and _empty_leaf(prog)


@accepted("block_diag with an empty 1-d block: PyTorch's forward counts it as one row, its "
          "backward as none, so the later blocks' gradients are read from the wrong rows "
          "(block_diag(zeros(0), x): x.grad is the first row's gradient), a PyTorch bug")
def _block_diag_empty(prog, failure):
    return failure.kind in ("grad", "value", "log") and _empty_leaf(prog) and any(
        "T.block_diag(" in st.text and any(o.dim() == 1 and o.numel() == 0 for o in
                                             _operands_before(prog, i))
        for i, st in enumerate(prog.steps) if st.text)


@accepted("float64 rounding amplified: sin/cos/tan of a huge argument made by exp/expm1/"
          "exp2/sinh/cosh (cos(expm1(20.2)), about 6e8, seed 9966151): a 1-ulp difference "
          "upstream (a matmul's sum order) is 1e-6 there, beyond float64's tolerance")
def _huge_trig_argument(prog, failure):
    # (only an argument of 1e5 or more: 1 ulp of it is 1.5e-11, amplified upstream)
    return failure.kind == "value" and failure.op in ("sin", "cos", "tan") and bool(
        {"exp", "expm1", "exp2", "sinh", "cosh", "exp_", "expm1_"} & _ops(prog)) and \
        _large_trig_argument(prog, failure, 1e5)


@accepted("PyTorch calls a tensor hook with None in a second backward (a hook on an "
          "eigvalsh result, lambda g: g * 2, raises TypeError on None there, seed 9967110), "
          "a PyTorch bug: hooks get tensors")
def _hook_called_with_none(prog, failure):
    return failure.kind == "raise" and failure.op == "backward2" and \
        failure.torch_exc == "TypeError" and "'NoneType'" in failure.message and \
        not failure.retro_exc


@accepted("ties: which index mode(dim) returns for a value that occurs as often as another "
          "(or at several places) is unspecified (seed 9972189)")
def _mode_ties(prog, failure):
    return failure.kind == "value" and failure.op == "quantile" and any(
        ".mode(" in t and ("[1]" in t or ".indices" in t) for t in _texts(prog))


@accepted("PyTorch's adaptive_avg_pool1d/2d forward accepts an empty channel dim of a batched "
          "input ([2, 0, 2]) that its backward kernel then refuses ('Expected grad_output to "
          "have non-zero size for non-batch dimensions'); retrograd computes both (the empty "
          "gradient)")
def _adaptive_avg_empty_channels(prog, failure):
    return _raised_only_in(failure, "torch") and \
        "adaptive_avg_pool2d_backward(): Expected grad_output to have non-zero size" in \
        failure.message


def _defining_text(prog, failure):
    """The statement that made the tensor a value/grad failure names ("v7: values...")."""
    m = re.match(r"(v\d+)\b", failure.message)
    if m is None:
        return ""
    made = [t for t in _texts_all(prog) for line in t.split("\n")
            if re.match(rf"\s*{m.group(1)} = ", line)]
    return made[-1] if made else ""


@accepted("multi_margin_loss/multilabel_margin_loss of an empty batch: PyTorch 2.13 returns "
          "uninitialized memory (a different 0-d value from run to run, 6.9e-310, 8.2e+252..., "
          "for reduction 'mean' and 'sum' alike: seeds 11011698, 11044472), a PyTorch bug; "
          "retrograd gives the empty mean (nan) and the empty sum (0)")
def _margin_loss_empty_garbage(prog, failure):
    return failure.kind == "value" and failure.op == "nn_loss" and _empty_leaf(prog) and \
        "values differ" in failure.message and bool(re.search(
            r"multi(label)?_margin_loss\(", _defining_text(prog, failure)))


@accepted("log1p of a subnormal: PyTorch 2.13's vectorized log1p is wrong there (log1p(-5e-324) "
          "is 0.0, log1p(-1e-310) is -1.00000000000005e-310; log1p(x) rounds to x, NumPy's), "
          "so a sqrt/log of it is 0 in PyTorch and nan in retrograd; nextafter toward a "
          "number from 0 makes such values (seed 11024818)")
def _log1p_subnormal(prog, failure):
    m = failure.message
    if failure.kind != "value" or "\n" not in m or "nextafter" not in _ops(prog) or not (
            {"log1p", "log1p_"} & _ops(prog)):
        return False
    torch_part, retro_part = m.split("torch", 1)[-1].split("retrograd", 1)
    return "nan" in retro_part and "0.0" in torch_part


# (a statement of a with no_grad / set_grad_enabled(False) block)
_SHAPE_INPLACE = re.compile(r"^\s+v\d+\.(transpose_|t_|swapdims_|swapaxes_|unsqueeze_|"
                            r"squeeze_)\(", re.M)
_NO_GRAD_BLOCK = re.compile(r"^with T\.(no_grad\(\)|set_grad_enabled\(False\)):", re.M)


@accepted("a leaf's shape changed in place under no_grad (transpose_, t_, swapdims_...) after "
          "a recorded op used it, then a double backward: PyTorch's derivative formulas read "
          "the saved leaf in its new shape ('The size of tensor a (2) must match...'); "
          "retrograd's saved value keeps the shape the graph used.  Changing the metadata of a "
          "tensor autograd has saved is undefined in PyTorch.  (The first .grad's shape, "
          "AccumulateGrad's steal-or-copy by the leaf's layout, is matched: "
          "autograd/leaf_layout.py, seeds 11033550, 15067259, 15079092.)")
def _leaf_shape_changed_in_place(prog, failure):
    if not (_raised_only_in(failure, "torch") and failure.op == "backward2"
            and "must match the size of tensor" in failure.message):
        return False
    return any(_NO_GRAD_BLOCK.search(src) and _SHAPE_INPLACE.search(src)
               for src, _ in prog.chunks())
@accepted("float32 i0 rounding amplified by pow's domain: PyTorch's float32 i0(0) is "
          "0.99999994 (retrograd's exactly 1, the true value), so a negative base to that "
          "power is nan in PyTorch and the base itself in retrograd (seed 11047389)")
def _i0_power_of_negative(prog, failure):
    m = failure.message
    if failure.kind != "value" or failure.op not in ("pow", "pow_", "float_power") or \
            "\n" not in m or not ({"i0", "i0_"} & _ops(prog)):
        return False
    torch_part, retro_part = m.split("torch", 1)[-1].split("retrograd", 1)
    return "nan" in torch_part and any("float32" in src for src in _texts_all(prog))


@accepted("hardtanh/relu6's derivative at a NaN input depends on its position in PyTorch 2.13: "
          "its vectorized kernel stops the gradient there, its scalar tail (the last n mod 8 "
          "float64 / n mod 16 float32 elements with AVX-512, all of a smaller tensor) passes "
          "it; retrograd stops it everywhere, as the vectorized path (seed 11106532)")
def _hardtanh_nan_position(prog, failure):
    m = failure.message
    if failure.kind not in ("grad", "value") or "\n" not in m or not any(
            re.search(r"\b(hardtanh_?|relu6)\(", t) for t in _texts_all(prog)):
        return False
    torch_part, retro_part = m.split("torch", 1)[-1].split("retrograd", 1)
    return "nan" in torch_part or "nan" in retro_part


def _message_values(failure):
    """The two arrays a "values differ" message prints (torch's, retrograd's), or None."""
    import numpy as np

    m = re.match(r"v\d+: values differ[^\n]*\n  torch +(.*)\n  retrograd +(.*)$",
                 failure.message, re.S)
    if m is None:
        return None
    names = {"nan": float("nan"), "inf": float("inf"), "__builtins__": {}}
    try:
        a, b = (np.asarray(eval(s, dict(names)), dtype=np.float64) for s in m.groups())
    except Exception:  # (a value the message does not print as a Python literal)
        return None
    return (a, b) if a.shape == b.shape else None


def _fma_residue(values, operands, groups):
    """Whether the two arrays of ``values`` (torch's, retrograd's) differ only by the
    residue a norm kernel's fused x * scale + shift leaves: some normalised group (a row of
    ``groups(x)``) holds equal values (var 0, so rstd = 1/sqrt(eps)), and every difference
    is at most 2 ulp of max|x| * max(1, |w|) * rstd (plus max|b|); ``operands`` are the
    norm's input, weight and bias."""
    import numpy as np

    ulp = float(np.finfo(str(operands[0].dtype).rsplit(".", 1)[-1]).eps)
    x, *rest = (o.double() for o in operands)
    per = groups(x)
    span = per.amax(1) - per.amin(1)
    if not bool((span <= 1e-6 * per.abs().amax(1).clamp(min=1)).any()):
        return False
    w = float(rest[0].abs().max()) if rest and rest[0].numel() else 1.0
    b = float(rest[1].abs().max()) if len(rest) > 1 and rest[1].numel() else 0.0
    bound = 2 * ulp * (float(x.abs().max()) * max(1.0, w) / 1e-5 ** 0.5 + b)
    a, r = values
    diff = np.abs(a - r)
    return bool(np.all(np.isnan(a) == np.isnan(r)) and
                np.all(np.where(np.isnan(a), 0, diff) <= bound))


@accepted("batch_norm/instance_norm of a channel whose values are equal (var 0, so rstd = "
          "1/sqrt(eps), 316): PyTorch's contiguous CPU kernel computes x * alpha + beta with "
          "alpha = rstd * w, beta = b - mean * alpha, fused into one FMA, which leaves the "
          "rounding of mean * alpha (-3.3e-05 in float32, -3.7e-14 in float64, for x = mean "
          "= 3.6268604); its channels-last kernel, its layer_norm and group_norm, and "
          "retrograd compute (x - mean) * rstd, exactly 0 there.  Only a value of such a norm "
          "differing by at most 2 ulp of max|x| * max(1, |w|) * rstd (plus max|b|) (seed "
          "12669938)")
def _batch_norm_fma_residue(prog, failure):
    if failure.kind != "value" or failure.op != "normalization":
        return False
    values = _message_values(failure)
    if values is None:
        return False
    name = failure.message.split(":", 1)[0]
    for i, st in enumerate(prog.steps):
        if st.target != name or not st.text or not re.search(
                r"\.(batch_norm|instance_norm)\(", st.text):
            continue
        operands = [o for o in _operands_before(prog, i) if o.is_floating_point()]
        if not operands or operands[0].dim() < 2 or operands[0].numel() == 0:
            return False
        if ".instance_norm(" in st.text:  # (batch_norm's kernel on (1, N * C, ...): seed
            # 15124570) the groups are the instances
            return _fma_residue(values, operands, lambda x: x.reshape(
                x.shape[0] * x.shape[1], -1))
        # the groups are the channels
        return _fma_residue(values, operands, lambda x: x.transpose(0, 1).reshape(
            x.shape[1], -1))
    return False


@accepted("median/nanmedian(dim) of an expanded tensor (stride 0 along a dimension of size > "
          "1): PyTorch 2.13 reads uninitialized memory (tensor(2.).expand(5).median(0) gives "
          "3.2e-322 at index 3, expand(2, 1).median(0) 6.9e-310; the same values made "
          "contiguous give 2), a PyTorch bug; retrograd gives the median (seed 12604528)")
def _median_of_expanded(prog, failure):
    if failure.kind != "value" or failure.op != "quantile":
        return False
    name = failure.message.split(":", 1)[0]
    for i, st in enumerate(prog.steps):
        if st.target == name and st.text and re.search(
                r"\.(nan)?median\(\s*(dim\s*=\s*)?-?\d", st.text):
            operands = _operands_before(prog, i)
            return bool(operands) and any(
                stride == 0 and size > 1
                for size, stride in zip(operands[0].shape, operands[0].stride()))
    return False


@accepted("mode(dim) of values equal up to 1 ulp: PyTorch 2.13's vectorized exp2 (and other "
          "kernels) round the same input differently by position (exp2(0.5) is "
          "1.414213562373095 in the vector lanes, 1.4142135623730951 in the scalar tail, "
          "NumPy's everywhere), so values equal in retrograd are distinct in PyTorch and the "
          "most frequent value differs.  Only a mode whose operand (PyTorch's) holds two "
          "distinct values within 4 ulp of each other (seed 12643380)")
def _mode_of_near_ties(prog, failure):
    import torch

    if failure.kind != "value" or failure.op != "quantile":
        return False
    name = failure.message.split(":", 1)[0]
    for i, st in enumerate(prog.steps):
        if st.target == name and st.text and ".mode(" in st.text:
            operands = _operands_before(prog, i)
            if not operands or not operands[0].is_floating_point():
                return False
            x = operands[0]
            ulp = torch.finfo(x.dtype).eps
            values = x[x.isfinite()].unique()  # (sorted)
            if values.numel() < 2:
                return False
            gaps = values[1:] - values[:-1]
            scale = torch.maximum(values[1:].abs(), values[:-1].abs())
            return bool((gaps <= 4 * ulp * scale).any())
    return False
@accepted("a float sum written into an integer tensor (x[i] = y.sum() with x int64): the "
          "write truncates toward zero, so a sum 1 ulp below an integer in one library "
          "(-1.9999999999999998 against -2.0: another summation order) differs by 1 there "
          "(seed 12612079)")
def _float_sum_truncated_into_int(prog, failure):
    sums = {"sum", "mean", "matmul", "einsum", "var", "std", "norm", "prod", "logsumexp",
            "cumsum", "mm", "mv", "dot"}
    m = re.match(r"(v\d+): values differ\n", failure.message)
    if failure.kind != "value" or m is None:
        return False
    name = m.group(1)
    writes = [t for t in _texts(prog) if re.match(rf"{name}\[[^\n]*\] = ", t) and
              any(f".{s}(" in t.split(" = ", 1)[1] for s in sums)]
    torch_part, retro_part = failure.message.split("torch", 1)[-1].split("retrograd", 1)
    numbers = [re.findall(r"-?\d+(?:\.\d+)?", part) for part in (torch_part, retro_part)]
    return bool(writes) and len(numbers[0]) == len(numbers[1]) and all(
        "." not in a and "." not in b and abs(int(a) - int(b)) <= 1 for a, b in zip(*numbers))


@accepted("_conv_zero_channels' shape difference met downstream: a later statement on the "
          "convolution's result (copy_ into it, an op with it) raises in one library only, "
          "because PyTorch's result of a zero-input-channel convolution has 0 output channels "
          "(seed 12617046); only where the conv results' shapes differ")
def _conv_zero_channels_downstream(prog, failure):
    if failure.kind != "raise" or "conv1d" not in _ops(prog) or not _empty_leaf(prog):
        return False
    outs = [st.target for st in prog.steps if st.op == "conv1d" and st.target]
    if not outs:
        return False
    import retrograd

    from .runner import execute, torch

    spaces = [execute(prog, lib)[1] for lib in (torch, retrograd)]
    return any(n in spaces[0] and n in spaces[1] and
               tuple(spaces[0][n].shape) != tuple(spaces[1][n].shape) for n in outs)


_SPECTRAL = {"svdvals": "svd", "cond": "svd", "matrix_norm": "svd", "pinv": "svd",
             "eigvalsh": "eig", "qr": "qr"}


def _spectral_arguments(prog):
    """(function, PyTorch's value of its matrix argument) for each svdvals/cond/matrix_norm/
    pinv/eigvalsh/qr call of the program."""
    import ast

    from .program import Program  # (the runner imports this module)
    from .runner import execute, torch

    for i, st in enumerate(prog.steps):
        if not st.text or not re.search(r"linalg\.(%s)\(" % "|".join(_SPECTRAL), st.text):
            continue
        try:
            tree = ast.parse(st.text.split("=", 1)[-1].strip())
        except SyntaxError:
            continue
        _, ns = execute(Program(prog.seed, prog.steps[:i]), torch)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in _SPECTRAL and node.args:
                try:
                    a = eval(ast.unparse(node.args[0]), {**ns, "T": torch})
                except Exception:
                    continue
                if isinstance(a, torch.Tensor) and a.is_floating_point() and a.dim() >= 2:
                    yield node.func.attr, a.detach()


def _degenerate(fn, a):
    """Whether the matrices ``a`` are where ``fn``'s derivative has a pole: two singular
    values (eigenvalues) equal, or R of the QR with a zero diagonal, up to 100 ulp."""
    import torch

    tol = 100 * torch.finfo(a.dtype).eps
    a = a.double()
    if a.numel() == 0:
        return False
    if _SPECTRAL[fn] == "qr":
        r = torch.linalg.qr(a)[1].diagonal(dim1=-2, dim2=-1).abs()
        return bool((r <= tol * a.abs().amax((-2, -1)).clamp(min=1)[..., None]).any())
    s = torch.linalg.eigvalsh(a) if _SPECTRAL[fn] == "eig" else torch.linalg.svdvals(a)
    s = s.sort(-1).values
    gaps = s[..., 1:] - s[..., :-1]
    return bool((gaps.abs() <= tol * s.abs().amax(-1, keepdim=True).clamp(min=1)).any())


@accepted("a second derivative through svdvals/cond/matrix_norm/pinv/eigvalsh at repeated "
          "singular values (eigenvalues), or a derivative through qr of a rank-deficient "
          "matrix: the derivative of the vectors has a pole there (1 / (s_j^2 - s_k^2), "
          "R^-1; the first derivative of the values alone has none, and matches).  NumPy "
          "(which computes float32 in float64) returns the repeated values equal and R's zero "
          "exactly, so retrograd's result is nan; PyTorch's LAPACK leaves them 1 ulp apart and "
          "divides rounding by rounding, a finite number that is not the derivative (seed "
          "12502451: PyTorch -0.387, finite differences -0.348).  Only a nan/inf on one side, "
          "after create_graph, with such a call on such a matrix (seeds 12502451, 12535557)")
def _spectral_pole(prog, failure):
    if not (failure.kind == "grad" or (failure.kind == "value" and failure.op == "loss2")):
        return False
    if "create_graph=True" not in " ".join(_texts_all(prog)):
        return False
    m = failure.message
    if "\n" not in m or not re.search(r"\b(nan|inf)\b", m):
        return False
    return any(_degenerate(fn, a) for fn, a in _spectral_arguments(prog))


@accepted("group_norm's second derivative over empty groups (an input (N, C, 0), N > 0): "
          "PyTorch's double backward scales the zero sums over the empty groups by their nan "
          "statistics (0 * nan) and gives the weight a nan gradient; retrograd's second "
          "derivative is the derivative of sums over nothing, 0 (the first derivative, nan "
          "for the weight as PyTorch's kernel, matches).  Only a weight/bias .grad, after "
          "create_graph, of a program with group_norm of an empty spatial dimension (seed "
          "12557762)")
def _group_norm_empty_second_derivative(prog, failure):
    if failure.kind != "grad" or "nan" not in failure.message.split("retrograd", 1)[0]:
        return False
    if "create_graph=True" not in " ".join(_texts_all(prog)):
        return False
    for i, st in enumerate(prog.steps):
        if st.text and ".group_norm(" in st.text:
            operands = _operands_before(prog, i)
            if operands and operands[0].dim() >= 3 and operands[0].shape[0] and \
                    0 in operands[0].shape[2:]:
                return True
    return False
def _operand_made_to_require_grad_after(prog, ops):
    """Whether a ``requires_grad_()`` statement, after a step of ``ops``, is on one of that
    step's operands (a leaf that did not require grad when the step saved it)."""
    operands = set()
    for st in prog.steps:
        if st.op in ops:
            operands |= _rhs_names(st)
        elif st.text and operands:
            m = re.match(r"\s*(v\d+)\.requires_grad_\(", st.text)
            if m and m.group(1) in operands:
                return True
    return False


@accepted("float64 floor/ceil/round/trunc/frac at an integer: a value that is an integer up to "
          "rounding (an eigenvalue of a singular matrix, Q @ R, a sum of a few decimals "
          "added in another order) is 1 ulp below it in one library and on or above it in the "
          "other, so the rounding function jumps by 1 (seeds 12500387, 12512758, 12551356). "
          "Only where the rounded operand, in PyTorch, is within 1e-10 of an integer and an "
          "upstream op (a decomposition, a product, a sum) rounds in an unspecified order")
def _rounding_function_at_integer(prog, failure):
    rounding = {"floor", "ceil", "round", "trunc", "frac"}
    upstream = {"linalg_square", "linalg_products", "sum", "mean", "cumsum", "matmul",
                "einsum", "setitem", "addmm", "mm", "bmm", "prod", "cumprod"}
    if failure.kind != "value" or failure.op not in rounding or not (upstream & _ops(prog)):
        return False
    import numpy as np
    import torch

    from .program import Program  # (the runner imports this module)
    from .runner import execute
    import retrograd

    for i, st in enumerate(prog.steps):
        if st.op != failure.op or not st.text:
            continue
        names = _NAME.findall(st.text.split("=", 1)[-1])[:1]
        _, ns_t = execute(Program(prog.seed, prog.steps[:i]), torch)
        _, ns_r = execute(Program(prog.seed, prog.steps[:i]), retrograd)
        for n in names:
            t, r = ns_t.get(n), ns_r.get(n)
            if not (isinstance(t, torch.Tensor) and hasattr(r, "numpy")) or \
                    not t.is_floating_point():
                continue
            xt = t.detach().double().numpy()
            xr = np.asarray(r.detach().double().numpy())
            if xt.shape != xr.shape:
                continue
            fn = {"floor": np.floor, "ceil": np.ceil, "round": np.round, "trunc": np.trunc,
                  "frac": lambda v: v - np.trunc(v)}[failure.op]
            with np.errstate(invalid="ignore"):
                close = np.abs(xt - xr) <= 1e-10 * np.maximum(1, np.abs(xt))
                jumps = (fn(xt) != fn(xr)) & np.isfinite(xt)
            # (the inputs agree up to rounding, and the function jumps between them)
            if jumps.any() and close[jumps].all():
                return True
    return False


def _second_backward_refused_after_requires_grad(prog, failure, op):
    """retrograd's second backward raises 'does not require grad' where PyTorch's runs, in a
    program where an operand of ``op`` was made to require grad after ``op`` used it."""
    return failure.kind == "raise" and failure.op == "backward2" and \
        not failure.torch_exc and failure.retro_exc == "RuntimeError" and \
        "does not require grad" in failure.message and \
        _operand_made_to_require_grad_after(prog, (op,))


@accepted("a 1-D @ 2-D matmul operand made to require grad after the product: PyTorch's "
          "MmBackward0 saved its unsqueeze(0) view of it, and that view unpacks requiring grad "
          "(a view follows its base's flag) yet with no path to the base, so under "
          "create_graph the other operand's gradient requires grad and a second backward "
          "through it runs and gives the operand nothing (its .grad stays None).  retrograd "
          "saves a stand-in that keeps the flags of the product's time (linalg._saved_view: "
          "no gradient either), so that second backward finds nothing requiring grad and "
          "raises; every gradient agrees (seed 12635165)")
def _matmul_operand_requires_grad_after(prog, failure):
    return _second_backward_refused_after_requires_grad(prog, failure, "matmul")


@accepted("PyTorch calls a leaf's tensor hook with None when an undefined gradient flows down "
          "to it: slogdet's sign output has a zero derivative, which PyTorch's SlogdetBackward0 "
          "returns as an undefined tensor and its engine passes on through the nodes below "
          "(LOG.append(g.detach()) raises AttributeError there); retrograd drops a path that "
          "carries no gradient and calls no hook (hooks get tensors), the gradients agree "
          "(None).  As _hook_called_with_none, for a first backward (seed 12617547)")
def _hook_called_with_none_slogdet(prog, failure):
    return failure.kind == "raise" and failure.op in ("backward", "autograd.grad") and \
        failure.torch_exc in ("AttributeError", "TypeError") and \
        "'NoneType'" in failure.message and not failure.retro_exc and \
        any("slogdet(" in t for t in _texts_all(prog)) and \
        any("register_hook" in t for t in _texts_all(prog))


@accepted("graph granularity of einsum (as _product_saves_operand, the other way round): an "
          "operand that requires grad but has no edge (a view made under no_grad) gets views "
          "with a grad_fn inside PyTorch's einsum, so its bmm counts it as needing a gradient "
          "and saves the other operand's view, and an in-place change of that operand breaks "
          "backward in PyTorch only; retrograd's one node sees no edge and saves nothing for "
          "it.  No gradient differs (the edge goes nowhere) (seed 12531481)")
def _einsum_no_edge_operand(prog, failure):
    if not (_raised_only_in(failure, "torch") and
            "modified by an inplace operation" in failure.message and
            "einsum" in _ops(prog)):
        return False
    operands = set()
    for st in prog.steps:
        if st.op == "einsum":
            operands |= _rhs_names(st)
    return _writes_family_of(prog, operands)
@accepted("float32 logit(sigmoid(x)) is x up to 1 ulp, differently in the two libraries "
          "(PyTorch's vectorized exp/log against NumPy's, as _kink_at_one_ulp): comparing it "
          "with x (x <= logit(sigmoid(x))), or testing the sign of a function that crosses 0 "
          "there (sinc at an integer) decides by that ulp (seeds 12592525, 12597234). Only a "
          "comparison's value, in a float32 program with both sigmoid and logit")
def _sigmoid_logit_one_ulp_comparison(prog, failure):
    compares = {"eq", "ne", "lt", "le", "gt", "ge"}
    return failure.kind == "value" and failure.op in compares and \
        "logit" in _ops(prog) and any(
            re.search(r"\.sigmoid\(\)\)\.logit\(\)|logit\((T\.)?sigmoid", src) is not None
            for src in _texts_all(prog)) and any(
            "float32" in src or "int64" in src for src in _texts_all(prog))


@accepted("an in-place op on a tensor whose own elements share memory (unfold with a step "
          "below the size: x.unfold(1, 2, 1).pow_(2)): PyTorch cannot prove the overlap "
          "(MemOverlap::TooHard), so it lets its kernel write element by element, and an "
          "element seen twice is changed twice (its docs call in-place writes to overlapping "
          "memory undefined); retrograd writes each memory location once (seeds 12578146, "
          "12508764, 12614974). Only where the written tensor's elements, as PyTorch lays "
          "them out, overlap")
def _inplace_on_self_overlapping(prog, failure):
    if failure.kind not in ("value", "grad"):
        return False
    import numpy as np
    import torch

    from .program import Program  # (the runner imports this module)
    from .runner import execute

    for i, st in enumerate(prog.steps):
        if st.kind != "inplace" or not st.on:
            continue
        _, ns = execute(Program(prog.seed, prog.steps[:i]), torch)
        t = ns.get(st.on)
        if not isinstance(t, torch.Tensor) or t.numel() < 2 or t.numel() > 10000:
            continue
        if any(s == 0 and n > 1 for n, s in zip(t.shape, t.stride())):
            continue  # (an expanded tensor: PyTorch sees that overlap, not this one)
        offsets = np.zeros((), dtype=np.int64)
        for n, s in zip(t.shape, t.stride()):
            offsets = offsets[..., None] + np.arange(n, dtype=np.int64) * s
        if np.unique(offsets).size < t.numel():
            return True
    return False


@accepted("_block_diag_empty's PyTorch bug where the empty 1-d block is made by an op (a "
          "slice v[1:1]) rather than written as an empty leaf: the later blocks' gradients "
          "are read from the wrong rows in PyTorch (seed 13301347); only where a block_diag "
          "operand is 1-d and empty")
def _block_diag_empty_made(prog, failure):
    return failure.kind in ("grad", "value", "log") and any(
        "T.block_diag(" in st.text and any(o.dim() == 1 and o.numel() == 0 for o in
                                             _operands_before(prog, i))
        for i, st in enumerate(prog.steps) if st.text)


@accepted("sign/sgn of an affine group_norm/batch_norm/instance_norm output over a group of "
          "equal values (a group of one element: x - mean is 0, var 0, rstd = 1/sqrt(eps), "
          "316): PyTorch's CPU kernels compute x * scale + bias with scale = rstd * w, bias = b "
          "- mean * scale in one FMA, which leaves the rounding residue of mean * scale "
          "(-6.7e-15 for x = mean = 1.1796, w = -1, float64); retrograd gives exactly 0, the "
          "exact value, and sign turns the residue into -1.  Only a sign whose operand is such "
          "a norm's output, where the signs differ: 0 in retrograd, within 8 ulp of "
          "max|x| * max(1, |w|) * 316 of 0 in PyTorch (seed 13406311; the values themselves pass: "
          "_batch_norm_fma_residue)")
def _norm_fma_residue_sign(prog, failure):
    import numpy as np

    if failure.kind != "value" or failure.op not in ("sign", "sgn"):
        return False
    name = failure.message.split(":", 1)[0]
    norms = {st.target: i for i, st in enumerate(prog.steps) if st.text and re.search(
        r"\.(group_norm|batch_norm|instance_norm)\(.*weight=", st.text)}
    for i, st in enumerate(prog.steps):
        if st.target != name or not st.text or not re.search(r"\b(sign|sgn)\(", st.text):
            continue
        read = _NAME.findall(st.text.split("=", 1)[-1])
        if len(read) != 1 or read[0] not in norms:
            return False
        j = norms[read[0]]
        norm_in = [o for o in _operands_before(prog, j) if o.is_floating_point()]
        out = _operands_before(prog, i)
        if len(norm_in) < 2 or not out or not out[0].is_floating_point():
            return False
        x, w = norm_in[0].double(), norm_in[1].double()
        ulp = float(np.finfo(str(norm_in[0].dtype).rsplit(".", 1)[-1]).eps)
        bound = 8 * ulp * max(1.0, float(x.abs().max())) * max(1.0, float(w.abs().max())) \
            / 1e-5 ** 0.5
        values = _message_values(failure)
        y = out[0].double().numpy()
        if values is None or values[0].shape != y.shape:
            return False
        # (every element whose sign differs: a residue in PyTorch, exactly 0 in retrograd)
        differ = values[0] != values[1]
        return bool(differ.any()) and bool((values[1][differ] == 0).all()) and \
            bool((np.abs(y[differ]) <= bound).all())
    return False


@accepted("_hook_called_with_none for a hook on an svdvals/svd/eigvalsh/eigh result whose "
          "body reads an attribute (LOG.append(g.detach()...)): PyTorch's second backward "
          "calls it with None (AttributeError, not TypeError: seed 14800989, a hook on "
          "svdvals of [[-0.0]]), a PyTorch bug: hooks get tensors; retrograd calls no hook "
          "there and the gradients agree")
def _hook_called_with_none_attribute(prog, failure):
    return failure.kind == "raise" and failure.op == "backward2" and \
        failure.torch_exc == "AttributeError" and \
        "'NoneType' object has no attribute" in failure.message and \
        not failure.retro_exc and \
        any(re.search(r"\b(svdvals|svd|eigvalsh|eigh)\(", t) for t in _texts_all(prog)) and \
        any("register_hook" in t for t in _texts_all(prog))


@accepted("signed zeros of softshrink: PyTorch's CPU kernel returns +0.0 for an input within "
          "[-lambd, lambd] in its vectorized part and x * 0 (-0.0 for a negative input) in "
          "the scalar tail, so the sign of a zero depends on the element's position and the "
          "machine's vector width (softshrink(x, 0.25) of 12 doubles: -0.0 in, +0.0 out at "
          "index 1, -0.0 out at index 9; seed 13801278); retrograd returns x * 0 everywhere.  "
          "Only a value difference in a program with softshrink and an op that reads the "
          "sign of a zero (atan2, copysign, signbit, a division by it)")
def _softshrink_zero_sign(prog, failure):
    texts = _texts_all(prog)
    return failure.kind == "value" and any("softshrink(" in t for t in texts) and any(
        re.search(r"atan2|copysign|signbit|reciprocal|\bdiv|true_divide| / ", t)
        for t in texts)


@accepted("_batch_norm_fma_residue for group_norm with a weight or bias: PyTorch's CPU "
          "kernel then computes x * scale + shift (scale = rstd * w, shift = b - mean * "
          "scale, fused), which leaves the rounding of mean * scale where a group's values "
          "are equal (var 0, rstd 316): -6.1e-05 in float32 for x = mean = -3, w = 2 (seed "
          "13807319; without weight and bias it gives exactly 0, as retrograd always does). "
          "Only a group_norm value, with a group of equal values, differing by at most 2 ulp "
          "of max|x| * max(1, |w|) * rstd (plus max|b|)")
def _group_norm_fma_residue(prog, failure):
    if failure.kind != "value" or failure.op != "normalization":
        return False
    values = _message_values(failure)
    if values is None:
        return False
    name = failure.message.split(":", 1)[0]
    for i, st in enumerate(prog.steps):
        m = re.search(r"\.group_norm\(\w+, (\d+)", st.text or "")
        if st.target != name or m is None or not re.search(r"weight=|bias=", st.text):
            continue
        operands = [o for o in _operands_before(prog, i) if o.is_floating_point()]
        if not operands or operands[0].dim() < 2 or operands[0].numel() == 0:
            return False
        groups = int(m.group(1))
        return _fma_residue(values, operands, lambda x, g=groups: x.reshape(x.shape[0] * g, -1))
    return False


# ------------------------------------------------------ fuzzV (stop 21): float32 rounding
def _float64_run(prog):
    """PyTorch's namespace after running the program in float64: each float32 literal
    rounded to float32 first, so the inputs are the float32 program's, and everything else
    float64 (``.float()`` as ``.double()``, float64 the default dtype for integer inputs);
    None where a statement raises in one of the two runs only (another program then)."""
    import warnings

    from .runner import _hook_would_crash, execute, torch

    if torch is None:
        return None
    literal = re.compile(r"T\.tensor\(([^()]*?), dtype=T\.float32")
    t_out, _ = execute(prog, torch)
    ns, made_at = {"T": torch, "LOG": []}, {}
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for (src, _), (exc, _) in zip(prog.chunks(), t_out):
                src = literal.sub(r"T.tensor(T.tensor(\1, dtype=T.float32).tolist(), "
                                  r"dtype=T.float64", src)
                src = src.replace("T.float32", "T.float64").replace(".float()", ".double()")
                if _hook_would_crash(src, ns, made_at):
                    return None
                try:
                    exec(compile(src, "<fuzz64>", "exec"), ns)
                    raised = None
                except Exception as e:  # noqa: BLE001 - compared with the float32 run's
                    raised = type(e).__name__
                if (raised is None) != (exc is None):
                    return None
                for name, t in ns.items():
                    if name not in made_at and isinstance(t, torch.Tensor):
                        made_at[name] = t._version
    finally:
        torch.set_default_dtype(default)
    return ns


def _failure_arrays(failure):
    """(what, torch's array, retrograd's array) of a "values differ" message naming a value,
    a .grad or an autograd.grad result (vN, vN.grad, gs[i]), or None."""
    import numpy as np

    m = re.match(r"(v\d+|v\d+\.grad|gs\[\d+\]): values differ[^\n]*\n  torch +(.*)\n"
                 r"  retrograd +(.*)$", failure.message, re.S)
    if m is None:
        return None
    names = {"nan": float("nan"), "inf": float("inf"), "__builtins__": {}}
    try:
        a, b = (np.asarray(eval(s, dict(names)), dtype=np.float64) for s in m.groups()[1:])
    except Exception:  # (a value the message does not print as a Python literal)
        return None
    return (m.group(1), a, b) if a.shape == b.shape else None


@accepted("float32 gradients (and values) through layer_norm/group_norm/instance_norm/"
          "batch_norm are cancellation residues: dx = rstd * (g - mean(g) - xhat * "
          "mean(g * xhat)) projects g off 1 and xhat, which for a group of 2 elements leaves "
          "only the eps term (amplification var / eps: 3.5e-4 relative for layer_norm of "
          "cosh([-1.34, -1.28]), seed 15022282).  Over 300 random float32 layer_norms of 2 "
          "elements retrograd's gradient is off the float64 one by 3.1e-4 on average, "
          "PyTorch's by 6.3e-4 (PyTorch's worse in 78 %).  Only where a float64 run of the "
          "program (the float32 inputs rounded first) shows retrograd's error at most twice "
          "PyTorch's, and the program normalizes")
def _norm_float32_residue(prog, failure):
    import numpy as np

    if failure.kind not in ("grad", "value") or not any(
            "float32" in src for src in _texts_all(prog)) or not any(re.search(
            r"\.(layer_norm|group_norm|instance_norm|batch_norm)\(", t) for t in _texts(prog)):
        return False
    got = _failure_arrays(failure)
    if got is None:
        return False
    what, a, b = got
    ns = _float64_run(prog)
    if ns is None:
        return False
    if what.startswith("gs["):
        ref = ns.get("gs")
        ref = ref[int(what[3:-1])] if isinstance(ref, (list, tuple)) else None
    else:
        ref = ns.get(what.split(".")[0])
        if ref is not None and what.endswith(".grad"):
            ref = ref.grad
    if ref is None or tuple(ref.shape) != a.shape:
        return False
    ref = ref.detach().double().numpy()
    if not (np.isfinite(ref).all() and np.isfinite(a).all() and np.isfinite(b).all()):
        return False
    return float(np.abs(b - ref).max()) <= 2 * float(np.abs(a - ref).max())


@accepted("float32 1-ulp noise amplified by an in-place sin_/cos_/tan_ of an argument of 100 "
          "or more (as _float32_conditioning for sin/cos/tan statements): a float32 sum of 12 "
          "reciprocals is 1 ulp apart (NumPy's pairwise order against PyTorch's cascade: over "
          "2000 random sums of 12 each is off the correctly rounded sum in about 45 %, NumPy "
          "further off than PyTorch in 28 %, PyTorch than NumPy in 30 %), cosh(10.7) "
          "multiplies it by 10.7 and sin_ of 22283 (1 ulp = 0.002) turns it into 0.02 (seed "
          "15043801).  Only a value last changed by such an in-place op")
def _float32_inplace_trig_of_large(prog, failure):
    if failure.kind != "value" or not any(
            "float32" in src or ".float()" in src or "int64" in src for src in _texts_all(prog)):
        return False
    name = failure.message.split(":", 1)[0]
    for i in range(len(prog.steps) - 1, -1, -1):
        st = prog.steps[i]
        if st.target == name:
            return False  # (made after the last in-place trig)
        if st.kind == "inplace" and st.on == name and st.op in ("sin_", "cos_", "tan_"):
            before = _operands_before(prog, i)
            if not before or not before[0].is_floating_point():
                return False
            x = before[0].abs()
            x = x[x.isfinite()]
            return bool(x.numel()) and float(x.max()) >= 100.0
    return False


def _torch_rerun_passes(prog, failure, edit):
    """Whether the failing statement runs in PyTorch once ``edit`` (a text -> text function)
    changed the program's source: the raise came from what ``edit`` removed."""
    from .program import program_from_text
    from .runner import execute, torch  # (the runner imports this module)

    source = prog.source()
    edited = edit(source)
    if edited == source:
        return False
    outcomes, _ = execute(program_from_text(edited, prog.seed), torch)
    return 0 <= failure.chunk < len(outcomes) and outcomes[failure.chunk][0] is None


@accepted("_hook_called_with_none for a hook below a conv1d of an empty tensor: PyTorch's "
          "convolution double backward returns undefined gradients for an empty input or "
          "weight, and its engine calls the hook of a tensor below with None in the second "
          "backward (LOG.append(g.detach()) raises AttributeError: seed 15123163), a PyTorch "
          "bug: hooks get tensors; retrograd calls no hook there and the gradients agree "
          "(None).  The same for group_norm of an empty input (its double backward returns "
          "undefined gradients there too, seed 18327081; layer_norm, batch_norm, "
          "instance_norm and rms_norm call no hook with None).  Only where PyTorch's "
          "statement runs once every hook skips a None")
def _hook_called_with_none_conv_empty(prog, failure):
    if not (failure.kind == "raise" and not failure.retro_exc and
            failure.torch_exc in ("AttributeError", "TypeError") and
            "'NoneType'" in failure.message and ("conv1d" in _ops(prog) or any(
                "group_norm(" in t for t in _texts(prog))) and _empty_leaf(prog)):
        return False
    return _torch_rerun_passes(prog, failure, _hooks_skipping_none)


def _differing_values(failure):
    """The two arrays a "values differ" message prints (torch's, retrograd's), for a
    tensor's value or its .grad (``v3: ...``, ``v2.grad: ...``, ``loss2: ...``), or None."""
    import numpy as np

    m = re.match(r"[\w.]+: values differ[^\n]*\n  torch +(.*)\n  retrograd +(.*)$",
                 failure.message, re.S)
    if m is None:
        return None
    names = {"nan": float("nan"), "inf": float("inf"), "__builtins__": {}}
    try:
        a, b = (np.asarray(eval(s, dict(names)), dtype=np.float64) for s in m.groups())
    except Exception:  # (a value the message does not print as a Python literal)
        return None
    return (a, b) if a.shape == b.shape else None


def _nan_only_in_retrograd(failure, torch_zero):
    """Every element that differs is nan in retrograd and a number in PyTorch (exactly 0
    there if ``torch_zero``)."""
    import numpy as np

    values = _differing_values(failure)
    if values is None:
        return False
    a, r = values
    differ = ~((a == r) | (np.isnan(a) & np.isnan(r)))
    if not differ.any():
        return False
    ok = np.isnan(r[differ]) & np.isfinite(a[differ])
    if torch_zero:
        ok &= a[differ] == 0
    return bool(ok.all())


@accepted("float32 layer_norm over a group whose exact mean is one of its values: PyTorch's "
          "vectorized moments leave a rounding residue in the mean (-1.49e-08 for [1, 0, 0, "
          "2, -2, -1], whose mean is exactly 0), so its output is 1.15e-08 where retrograd's "
          "is exactly 0, the exact value (float64 gives 4.6e-17 in PyTorch).  A hypot of "
          "that output with 0 then sits at its derivative's 0 / 0 (nan in both libraries at "
          "(0, 0): grad * self / result) in retrograd only.  Only a nan in retrograd where "
          "PyTorch has a number, in a program whose float32 layer_norm output is 0 in "
          "float64 arithmetic and not in PyTorch's, read by hypot/hypot_ (seed 15020013)")
def _layer_norm_mean_residue_hypot(prog, failure):
    if failure.kind not in ("grad", "value") or not _nan_only_in_retrograd(failure, False):
        return False
    from .program import Program
    from .runner import execute, torch

    if torch is None:
        return False
    for i, st in enumerate(prog.steps):
        m = re.search(r"\.layer_norm\((v\d+), \(([\d, ]*)\)", st.text or "")
        if m is None or not st.target or not any(
                re.search(rf"\bhypot_?\(.*\b{st.target}\b|\b{st.target}\.hypot_?\(", t)
                for t in _texts_all(prog)):
            continue
        operands = _operands_before(prog, i)
        if not operands or operands[0].dtype != torch.float32:
            continue
        x = operands[0].double()
        k = len([s for s in m.group(2).split(",") if s.strip()])
        groups = x.reshape(-1, *x.shape[x.dim() - k:]).flatten(1) if k else x.reshape(-1, 1)
        centred = groups - groups.mean(1, keepdim=True)
        _, ns = execute(Program(prog.seed, prog.steps[:i + 1]), torch)
        out = ns.get(st.target)
        if out is None or out.numel() != centred.numel():
            continue
        residue = (centred == 0) & (out.detach().reshape(centred.shape) != 0)
        if bool(residue.any()):
            return True
    return False


# ops whose domain ends at 1 (or whose derivative has a pole there): a value 1 ulp below 1
# is out of the domain (acosh: nan) or on the other side of the pole
_DOMAIN_AT_ONE = {"acosh", "acos", "asin", "atanh", "logit", "log", "log2", "log10", "erfinv"}


@accepted("float32 i0 at 0: PyTorch 2.13's float32 kernel gives 0.99999994 (1 - 2**-24), and "
          "misses other values by 1 ulp (i0(-2) 2.2795851 against the correctly rounded "
          "2.2795854, the float64 value 2.2795853023 rounded); retrograd's float32 i0 is the "
          "correctly rounded one (exactly 1 at 0).  An op whose domain ends at 1 then gives "
          "nan in PyTorch and a number in retrograd (acosh(i0(0)) is nan against 0: seed "
          "16703574).  Only a value of such an op in a program with i0, whose PyTorch "
          "operand holds float32 1 - 2**-24")
def _i0_float32_below_one(prog, failure):
    if failure.kind != "value" or failure.op not in _DOMAIN_AT_ONE or "i0" not in _ops(prog):
        return False
    name = failure.message.split(":", 1)[0]
    for i, st in enumerate(prog.steps):
        if st.target == name and st.op == failure.op:
            import torch

            below = torch.tensor(1 - 2 ** -24, dtype=torch.float32)
            return any(o.dtype == torch.float32 and bool((o == below).any())
                       for o in _operands_before(prog, i))
    return False


_NORM_WITH_AFFINE = re.compile(r"\b(group_norm|batch_norm|instance_norm)\(.*\b(weight|bias)=")


@accepted("ties made by a norm's FMA residue (_batch_norm_fma_residue, "
          "_group_norm_fma_residue): where a normalized group holds one value (or equal "
          "values), retrograd's result is exactly the bias, so equal across the samples, "
          "while PyTorch's fused x * scale + shift leaves a different few-ulp residue in each "
          "(group_norm of a [2, 4] input in 4 groups: -0x1.eb851eb851bb1p-4 against "
          "-0x1.eb851eb85113dp-4 for the bias -0.12); a sort/topk/kthvalue/argsort of those "
          "then meets ties in retrograd only, and which index it returns is unspecified (seed "
          "16709150).  cummax/cummin too: their index follows the residues' order in "
          "PyTorch, the later equal value in retrograd (group_norm of a [3, 2] input in 2 "
          "groups, bias 1.37: residues up to 492 ulp, past _cum_extreme_position_rounding's "
          "4; seed 20143343).  Only an index (or what is computed from one) of such an op "
          "whose operand holds equal values in retrograd and agrees with PyTorch's within "
          "1e-12 (float64) or 1e-5 (float32) relative, in a program with such a norm")
def _norm_residue_ties(prog, failure):
    if failure.kind not in ("value", "grad") or not any(
            _NORM_WITH_AFFINE.search(t) for t in _texts_all(prog)):
        return False
    from .program import Program
    from .runner import execute, torch

    import retrograd

    for i, st in enumerate(prog.steps):
        if not (st.text and (_UNSPECIFIED_TIES.search(st.text) or
                             re.search(r"\.(cummax|cummin)\(", st.text))) or (
                failure.kind == "value" and not any(
                    k in st.text for k in ("[1]", ".indices", ".argsort("))):
            continue
        names = _NAME.findall(st.text.split("=", 1)[-1])
        if not names:
            continue
        head = Program(prog.seed, prog.steps[:i])
        t = execute(head, torch)[1].get(names[0])
        r = execute(head, retrograd)[1].get(names[0])
        if not isinstance(t, torch.Tensor) or not isinstance(r, retrograd.Tensor) or \
                not t.is_floating_point() or tuple(t.shape) != tuple(r.shape):
            continue
        a, b = t.detach().double().numpy(), r.detach().numpy().astype("float64")
        rel = 1e-12 if t.dtype == torch.float64 else 1e-5
        import numpy as np

        if np.allclose(a, b, rtol=rel, atol=rel, equal_nan=True) and \
                np.unique(b.reshape(-1)).size < b.size:
            return True
    return False


@accepted("float64 rounding amplified, as _huge_trig_argument, where the huge argument is made "
          "by a power: sin(x ** x) for x = 11.26 (6.9e11, seed 16713887); PyTorch's "
          "binary_cross_entropy_with_logits sum upstream is 1 ulp off the correctly rounded "
          "10.757522673943943 that retrograd gives, x ** x turns it into 4e-3, and sin of it "
          "differs by 1e-3 (retrograd's -0.95728 is the nearer to the mpmath value of the "
          "program, -0.95683; PyTorch's -0.95607).  Only sin/cos/tan of an argument of 1e5 "
          "or more in a program with pow/float_power")
def _huge_trig_argument_of_power(prog, failure):
    return failure.kind == "value" and failure.op in ("sin", "cos", "tan") and bool(
        {"pow", "pow_", "float_power", "float_power_"} & _ops(prog)) and \
        _large_trig_argument(prog, failure, 1e5)
def _operand_before(prog, failure):
    """PyTorch's and retrograd's first operand of the failing statement (float64 arrays), or
    None: run the program up to it in both libraries."""
    import numpy as np
    import torch

    import retrograd

    from .program import Program  # (the runner imports this module)
    from .runner import execute

    for i, st in enumerate(prog.steps):
        if st.op != failure.op or not st.text:
            continue
        # (only a bare name rounded: v.floor(), v.floor_(), T.floor(v))
        rhs = st.text.split("=", 1)[-1] if "=" in st.text else st.text
        m = re.fullmatch(r"\s*(?:(v\d+)\.[a-z]+_?\(\)|T\.[a-z]+\((v\d+)\))\s*", rhs)
        if not m:
            continue
        names = [m.group(1) or m.group(2)]
        _, ns_t = execute(Program(prog.seed, prog.steps[:i]), torch)
        _, ns_r = execute(Program(prog.seed, prog.steps[:i]), retrograd)
        for n in names:
            t, r = ns_t.get(n), ns_r.get(n)
            if isinstance(t, torch.Tensor) and hasattr(r, "numpy") and t.is_floating_point():
                xt = t.detach().double().numpy()
                xr = np.asarray(r.detach().double().numpy())
                if xt.shape == xr.shape:
                    return xt, xr
    return None


@accepted("floor/ceil/round/trunc/frac of corrcoef's diagonal: exactly +-1, which PyTorch's "
          "corrcoef gives as 0.9999999999999999 (it divides by the standard deviation twice, "
          "rounding twice) and retrograd as exactly 1.0 (ops.statistics), so floor jumps by 1 "
          "(seed 16507591).  Only where every jump is on a square matrix's diagonal, the operands "
          "agree within 1e-10, and retrograd's is at least as close to +-1 as PyTorch's.  "
          "The in-place forms floor_/ceil_/round_/trunc_/frac_ too, on the tensor that "
          "differs with nothing else written to it in between (seed 18928979: PyTorch's "
          "0.9999999999999999, retrograd's exact 1.0, frac_ gives 0.99.. against 0)")
def _rounding_corrcoef_diagonal(prog, failure):
    rounding = {"floor", "ceil", "round", "trunc", "frac"}
    if failure.kind != "value" or not any("corrcoef(" in src for src in _texts_all(prog)):
        return False
    import numpy as np

    if failure.op in rounding:
        got = _operand_before(prog, failure)
        op = failure.op
    else:
        got, op = _operand_before_rounded_in_place(prog, failure), None
        if got is not None:
            got, op = got
    if got is None:
        return False
    xt, xr = got
    if xt.ndim < 2 or xt.shape[-1] != xt.shape[-2]:
        return False
    # (frac jumps where trunc does: elsewhere its values differ as their operands do)
    fn = {"floor": np.floor, "ceil": np.ceil, "round": np.round, "trunc": np.trunc,
          "frac": np.trunc}[op]
    with np.errstate(invalid="ignore"):
        jumps = (fn(xt) != fn(xr)) & np.isfinite(xt)
    if not jumps.any():
        return False
    eye = np.broadcast_to(np.eye(xt.shape[-1], dtype=bool), xt.shape)
    one = np.sign(xt)  # (the exact diagonal: +-1)
    return bool((jumps <= eye).all() and (np.abs(xt - xr)[jumps] <= 1e-10).all() and
                (np.abs(np.abs(xt[jumps]) - 1) <= 1e-10).all() and
                (np.abs(xr - one)[jumps] <= np.abs(xt - one)[jumps]).all())


def _operand_before_rounded_in_place(prog, failure):
    """((PyTorch's, retrograd's) values of the differing tensor just before it is rounded in
    place (float64 arrays), the rounding's name), or None: the first statement after the
    tensor is made that writes it must be a bare ``v.floor_()`` (ceil_, round_, trunc_,
    frac_)."""
    import numpy as np
    import torch

    import retrograd

    from .program import Program  # (the runner imports this module)
    from .runner import execute

    name = failure.message.split(":", 1)[0]
    made = [i for i, st in enumerate(prog.steps) if st.target == name]
    if not made:
        return None
    for i in range(made[-1] + 1, len(prog.steps)):
        text = (prog.steps[i].text or "").strip()
        m = re.fullmatch(rf"{name}\.(floor|ceil|round|trunc|frac)_\(\)", text)
        if m:
            _, ns_t = execute(Program(prog.seed, prog.steps[:i]), torch)
            _, ns_r = execute(Program(prog.seed, prog.steps[:i]), retrograd)
            t, r = ns_t.get(name), ns_r.get(name)
            if not (isinstance(t, torch.Tensor) and hasattr(r, "numpy") and
                    t.is_floating_point()):
                return None
            xt = t.detach().double().numpy()
            xr = np.asarray(r.detach().double().numpy())
            return ((xt, xr), m.group(1)) if xt.shape == xr.shape else None
        if (prog.steps[i].on == name or prog.steps[i].target == name or
                re.match(rf"{name}(\.\w+_\(|\[.*\]\s*=)", text)):
            return None  # (written otherwise or renamed first: not this case)
    return None


@accepted("an einsum operand made to require grad after the einsum, as "
          "_matmul_operand_requires_grad_after for matmul: PyTorch's einsum runs a bmm on "
          "permuted/reshaped views of its operands and BmmBackward0 saves them; the saved view "
          "of that operand unpacks requiring grad (a view follows its base's flag) with no "
          "path to the base, so under create_graph the other operand's gradient requires grad "
          "(SqueezeBackward1/PermuteBackward0...) and a second backward through it runs and "
          "gives nothing to anyone (every .grad stays None).  retrograd's one einsum record "
          "saves the operand with the flags of the einsum's time, so that gradient does not "
          "require grad and the second backward raises 'does not require grad'; every "
          "gradient agrees.  Matching needs a fake graph node leading nowhere (seeds 17008240, "
          "17043197)")
def _einsum_operand_requires_grad_after(prog, failure):
    return _second_backward_refused_after_requires_grad(prog, failure, "einsum")


# ------------------------------------------------------- triB (stop 21): final run's values
@accepted("float32 i0 off by a few ulp in PyTorch 2.13 (as _i0_float32_below_one: i0(1.43) "
          "is 1.5803955 against the correctly rounded 1.5803951, retrograd's, SciPy's float64 "
          "i0 rounded), amplified by what follows (exp_ then expm1 multiply the relative "
          "error by about 7.7 and 4.9: fmod of it is 0.24175 against retrograd's 0.241563, "
          "the float64 run's 0.2415622; seed 17051230).  The float32 may come from no float32 "
          "in the text: exp of an int64 4 is float32 54.598148, whose i0 is 2.7861163e+22 in "
          "retrograd (1.4e-8 off the mpmath value, correctly rounded) and 2.7861161e+22 in "
          "PyTorch (6.6e-8 off), and fmod of that by 55.1 is rounding noise (43.04 against "
          "47.20; exactly 19.42 from the exact i0; seed 18802342).  i0 of an int64 or bool "
          "operand is float32 too: i0(0) is 0.99999994 in PyTorch, so frac of it is "
          "0.99999994 against 0 (seed 19603093, a bool mask), fmod_ by 0.5 0.49999994 against "
          "0 (seed 19607487).  Only a value (not a "
          "gradient), finite in both, of a program with i0 that agrees in the two libraries "
          "once each i0 of a float32 or integer operand (its dtype as the statement runs; "
          "i0_ float32 only) is computed in "
          "float64 and rounded to float32, where that leaves retrograd's value unchanged "
          "(retrograd's i0 already the correctly rounded one, PyTorch's the one that moved)")
def _i0_float32_amplified(prog, failure):
    import numpy as np

    if failure.kind != "value" or not any(
            re.search(r"\bi0_?\(", t) for t in _texts_all(prog)):
        return False
    got = _failure_arrays(failure)
    if got is None or got[0].endswith(".grad") or got[0].startswith("gs["):
        return False
    what, a, b = got
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        return False
    from .program import program_from_text
    from .runner import compare, execute, retrograd

    source = prog.source()
    rerun = _rewrite_calls(source, ("i0", "i0_"), _i0_rounded_from_float64)
    if rerun == source:
        return False
    rerun = program_from_text(rerun, prog.seed)
    if compare(rerun) is not None:
        return False
    _, ns = execute(rerun, retrograd)
    value = ns.get(what)
    return value is not None and tuple(value.shape) == b.shape and np.array_equal(
        np.asarray(value.detach().numpy(), dtype=np.float64), b)


def _i0_rounded_from_float64(attr, x):
    """i0(x) as ``i0(x.double()).float()`` where x is float32 as the statement runs (i0_ as
    ``x.copy_(x.double().i0())``), else as it was."""
    import ast

    exact = _call(_call(x, "double"), "i0")
    rounded = _call(x, "copy_", exact) if attr == "i0_" else _call(exact, "float")
    test = ast.Compare(ast.Attribute(x, "dtype", ast.Load()), [ast.Eq()],
                       [ast.Attribute(ast.Name("T", ast.Load()), "float32", ast.Load())])
    if attr == "i0":  # an int64/bool operand's i0 is float32 too (seeds 19603093, 19607487)
        test = ast.BoolOp(ast.Or(), [test, ast.UnaryOp(ast.Not(),
                                                       _call(x, "is_floating_point"))])
    return ast.IfExp(test, rounded, _call(x, attr))


_NAN_POSITION_OPS = re.compile(r"\b(elu|selu|celu|hardswish)_?\(")


@accepted("elu/selu/celu's and hardswish's derivative at a NaN input depends on the "
          "element's position in PyTorch 2.13 (as hardtanh's): the vectorized body of "
          "elu_backward tests x > 0 and gives nan there, its scalar tail (the last n mod 8 "
          "float64 / n mod 16 float32 elements with AVX2, all of a smaller tensor) tests "
          "x <= 0 and passes g * scale; hardswish_backward's vectorized body gives nan, its "
          "scalar tail g; their double backwards multiply those by a mask (nan or 0). "
          "retrograd gives one answer everywhere: nan for the elu family (the vectorized "
          "body's), g for hardswish (as before).  Only a gradient or value with a nan on "
          "either side, in a program where such an op's input holds a NaN")
def _nan_input_position(prog, failure):
    if failure.kind not in ("grad", "value") or "nan" not in failure.message:
        return False
    for i, st in enumerate(prog.steps):
        if st.text and _NAN_POSITION_OPS.search(st.text):
            operands = _operands_before(prog, i)
            if operands and operands[0].is_floating_point() and \
                    bool(operands[0].isnan().any()):
                return True
    return False


# ------------------------------------------------------------ fuzzP (stop 22): values
def _float32_retrograd_nearer(prog, failure, ops):
    """For a value of a float32 program made by one of ``ops``: (the differing elements,
    PyTorch's values of the op's operand) when a float64 run (the float32 inputs rounded
    first) shows every differing element of retrograd's finite and at least as near the
    float64 value as PyTorch's (an inf of PyTorch's counting as farthest); else None."""
    import numpy as np

    if failure.kind != "value" or failure.op not in ops or not any(
            "float32" in src or "int64" in src for src in _texts_all(prog)):
        return None
    got = _failure_arrays(failure)
    if got is None or not re.fullmatch(r"v\d+", got[0]):
        return None
    what, a, b = got
    at = [i for i, st in enumerate(prog.steps) if st.target == what and st.op in ops]
    operands = _operands_before(prog, at[0]) if at else []
    if not operands or tuple(operands[0].shape) != a.shape:
        return None
    ns = _float64_run(prog)
    ref = None if ns is None else ns.get(what)
    if ref is None or tuple(ref.shape) != a.shape:
        return None
    ref = ref.detach().double().numpy()
    differ = ~np.isclose(b, a, rtol=2e-4, atol=1e-5, equal_nan=True)
    if not (np.isfinite(ref[differ]).all() and np.isfinite(b[differ]).all()):
        return None
    with np.errstate(invalid="ignore"):
        far_a = np.where(np.isfinite(a), np.abs(a - ref), np.inf)
    if not (np.abs(b - ref)[differ] <= far_a[differ]).all():
        return None
    return differ, operands[0].double().numpy()


@accepted("float32 sigmoid rounded the wrong way by PyTorch 2.13 near 1, then logit's pole: "
          "PyTorch's float32 sigmoid(17) is 1.0 (the correctly rounded value is 0.99999994, "
          "retrograd's), so its logit(sigmoid(17)) is inf where retrograd's is 16.64; "
          "sigmoid(7) is 1 ulp off too (logit 7.000059 against retrograd's 6.999994; seed "
          "18002641).  Only a logit statement's value in a float32 program where a float64 "
          "run (the float32 inputs rounded first) shows every differing element of "
          "retrograd's finite and at least as near the float64 value as PyTorch's")
def _sigmoid_float32_rounding_at_logit(prog, failure):
    return _float32_retrograd_nearer(prog, failure, ("logit", "logit_")) is not None


@accepted("float32 rounding amplified by digamma's poles: digamma(x) near a negative integer "
          "-n is about 1 / (x + n), so a 1-ulp difference of x (7.6e-6 at -69) moves it by "
          "ulp / (x + n)**2: PyTorch's float32 matrix_exp of a symmetric matrix is not "
          "symmetric (-69.00649 and -69.006485 where SciPy's float64 expm of the same float32 "
          "matrix gives -69.0064865, so retrograd's -69.006485 is the correctly rounded one), "
          "and digamma of them is 158.24 against 158.42 (seed 18218768).  Only a digamma value "
          "of a float32 program whose differing elements' arguments lie within 0.05 of a pole "
          "(0, -1, -2, ...) and within 4 ulp of each other in the two libraries, where each "
          "library's digamma is its own argument's float64 digamma up to float32 rounding")
def _float32_digamma_pole(prog, failure):
    import numpy as np

    from .program import Program  # (the runner imports this module)
    from .runner import execute, torch

    if torch is None or failure.kind != "value" or failure.op != "digamma" or not any(
            "float32" in src for src in _texts_all(prog)):
        return False
    got = _failure_arrays(failure)
    if got is None or not re.fullmatch(r"v\d+", got[0]):
        return False
    what, a, b = got
    at = [i for i, st in enumerate(prog.steps) if st.target == what and st.op == "digamma"]
    m = re.fullmatch(r"v\d+ = (?:T\.digamma\((.+)\)|\((.+)\)\.digamma\(\)|(v\d+)\.digamma\(\))",
                     prog.steps[at[0]].text) if at else None
    if m is None:
        return False
    import retrograd

    xs = []
    for lib in (torch, retrograd):
        _, ns = execute(Program(prog.seed, prog.steps[:at[0]]), lib)
        try:
            x = eval(next(g for g in m.groups() if g), ns)  # (the argument, as the text has it)
        except Exception:  # noqa: BLE001 - a statement that raises is another failure
            return False
        if not hasattr(x, "shape") or tuple(x.shape) != a.shape or \
                _dtype_name(x) != "float32":
            return False
        xs.append(np.asarray(x.detach().numpy()))
    differ = ~np.isclose(b, a, rtol=2e-4, atol=1e-5, equal_nan=True)
    xt, xr = xs[0][differ], xs[1][differ]
    ulp = np.spacing(np.abs(xt))
    if not (differ.any() and np.isfinite(xt).all() and np.isfinite(xr).all() and
            (np.abs(xt - xr) <= 4 * ulp).all()):
        return False
    if not ((xr < 0.05) & (np.abs(xr - np.round(xr)) < 0.05)).all():
        return False
    for x, y in ((xt, a[differ]), (xr, b[differ])):  # (each digamma right for its argument)
        exact = torch.from_numpy(x.astype(np.float64)).digamma().numpy()
        if not np.allclose(y, exact, rtol=1e-5, atol=1e-5):
            return False
    return True


def _dtype_name(t):
    return str(t.dtype).rsplit(".", 1)[-1]


# ------------------------------------------- numC2 (stop 22): sgn's ZeroTensor, one entry
_SGN = re.compile(r"\bsgn(_?)\(")
_ABS = re.compile(r"\babs_?\(")


def _rewrite_calls(source, attrs, make):
    """``source`` with each call ``X.attr()`` / ``T.attr(X)`` / ``T.special.attr(X)`` (attr
    in ``attrs``, no other argument) replaced by the expression ``make(attr, X)`` builds (an
    ast node), line by line; the lines that do not parse alone (``with``, ``try:``) kept."""
    import ast

    class Rewrite(ast.NodeTransformer):
        def visit_Call(self, node):
            self.generic_visit(node)
            f = node.func
            if not isinstance(f, ast.Attribute) or f.attr not in attrs or node.keywords:
                return node
            namespace = f.value
            while isinstance(namespace, ast.Attribute):
                namespace = namespace.value
            if isinstance(namespace, ast.Name) and namespace.id == "T":  # T.abs(x)
                if len(node.args) != 1:
                    return node
                x = node.args[0]
            elif node.args:
                return node
            else:
                x = f.value
            return make(f.attr, x)

    lines = source.split("\n")
    for i, line in enumerate(lines):
        if not any(attr + "(" in line for attr in attrs):
            continue
        try:
            tree = ast.parse(line.strip())
        except SyntaxError:  # (a `with ...:` or `try:` line)
            continue
        tree = ast.fix_missing_locations(Rewrite().visit(tree))
        lines[i] = line[:len(line) - len(line.lstrip())] + ast.unparse(tree)
    return "\n".join(lines)


def _call(x, method, *args):
    import ast

    return ast.Call(ast.Attribute(x, method, ast.Load()), list(args), [])


def _abs_as_product(attr, x):
    """abs(x) as x * x.sign() (abs_ as x.mul_(x.sign())): the same values and first
    derivative (sgn(x) * grad: sign's own derivative is zeros), but no sgn node in the graph
    a create_graph backward records."""
    import ast

    if attr == "abs_":
        return _call(x, "mul_", _call(x, "sign"))
    return ast.BinOp(x, ast.Mult(), _call(x, "sign"))


def _without_sgn_nodes(source, create_graph):
    """The program with sgn written sign (the same values; its derivative zeros_like(grad)
    in PyTorch too, no ZeroTensor) and, under create_graph, abs as a product with sign."""
    source = _SGN.sub(r"sign\1(", source)
    return _rewrite_calls(source, ("abs", "abs_"), _abs_as_product) if create_graph else source


def _nan_where_torch_has_a_number(failure):
    """A "values differ" message (a value, a .grad, gs[i], loss, loss2, a hook's gradient)
    whose arrays differ only where retrograd has nan and PyTorch a number (or an inf): the
    0 * inf or 0 * nan that a ZeroTensor skips; the other elements agree."""
    import numpy as np

    m = re.match(r"([^\n]+): values differ[^\n]*\n  torch +(.*)\n  retrograd +(.*)$",
                 failure.message, re.S)
    if m is None:
        return False
    names = {"nan": float("nan"), "inf": float("inf"), "__builtins__": {}}
    try:
        a, r = (np.asarray(eval(s, dict(names)), dtype=np.float64) for s in m.groups()[1:])
    except Exception:  # (a value the message does not print as a Python literal)
        return False
    if a.shape != r.shape:
        return False
    nan_a, nan_r = np.isnan(a), np.isnan(r)
    rest = ~nan_a & ~nan_r
    return bool((nan_r & ~nan_a).any() and not (nan_a & ~nan_r).any() and
                np.allclose(r[rest], a[rest], rtol=1e-4, atol=1e-5))


@accepted("sgn's derivative on a real tensor is a ZeroTensor in PyTorch 2.13 (sgn_backward "
          "returns at::_efficientzerotensor; abs's derivative grad * self.sgn() has it as "
          "its second derivative by self, under create_graph), and the formulas of the nodes "
          "below keep or materialize it op by op (mul, div, add, sum, exp, views, cat keep "
          "it whatever they multiply it by; neg, flip, cumsum, expand, mean, tanh, relu, "
          "where, index materialize it).  So (1) a later 0 * inf or 0 * nan stays 0 in "
          "PyTorch and is nan in retrograd, whose sgn derivative is real zeros (as PyTorch's "
          "sign: zeros_like(grad)): acos'(1) = -inf under sgn_ (seed 18704327), var's "
          "derivative of one element, float_power's log of a negative base, hypot's 0 / 0 "
          "(seeds 12538714, 11019915, 11054798, 15045904 with abs under create_graph); and "
          "(2) copy_ from a ZeroTensor is zero_() of the destination without a broadcast "
          "check (a PyTorch bug), so AccumulateGrad into a leaf that t_/transpose_/squeeze_/"
          "unsqueeze_ reshaped under no_grad gives zeros of the new shape where a real zero "
          "gradient raises 'doesn't match the broadcast shape' (leafA, stop 22).  Matching "
          "needs PyTorch's per-formula ZeroTensor dispatch in the engine.  Only a program "
          "with sgn (or abs under create_graph) whose failure is nan in retrograd where "
          "PyTorch has a number, or that shape raise/shape difference, and which agrees in "
          "the two libraries once sgn is written sign and abs x * x.sign() (the same values "
          "and first derivatives, real zeros in both libraries): that rerun pins the cause")
def _sgn_zero_tensor(prog, failure):
    texts = _texts_all(prog)
    create_graph = any("create_graph=True" in t for t in texts)
    if not (any(_SGN.search(t) for t in texts) or
            create_graph and any(_ABS.search(t) for t in texts)):
        return False
    if failure.kind == "raise":
        if failure.torch_exc or failure.retro_exc != "RuntimeError" or \
                "shape" not in failure.message:
            return False
    elif failure.kind == "grad" and "shape torch" in failure.message:
        pass
    elif failure.kind not in ("grad", "value", "log") or \
            not _nan_where_torch_has_a_number(failure):
        return False
    return _agrees_when_source_rewritten(prog, lambda src: _without_sgn_nodes(src, create_graph))


# ------------------------------------------------------------ triE (stop 22): 19000000+
@accepted("_hook_called_with_none for a hook on a group_norm result: PyTorch's group_norm "
          "double backward reaches NativeGroupNormBackward0 through its saved mean and rstd "
          "outputs only, and its engine then calls the tensor hook of output 0 with None "
          "(LOG.append(g.detach()...) raises AttributeError: seed 19018579), a PyTorch bug: "
          "hooks get tensors; retrograd calls no hook there.  Only where the whole program "
          "compares equal once every hook skips a None")
def _hook_called_with_none_group_norm(prog, failure):
    if not (failure.kind == "raise" and not failure.retro_exc and
            failure.torch_exc in ("AttributeError", "TypeError") and
            "'NoneType'" in failure.message and
            any("group_norm(" in t for t in _texts_all(prog)) and
            any("register_hook(lambda g: " in t for t in _texts_all(prog))):
        return False
    return _agrees_when_source_rewritten(prog, _hooks_skipping_none)


# ------------------------------------------------------------ triG (stop 23): noise family
# A linear-algebra result that is exactly 0 in exact arithmetic (the det or an eigenvalue of
# a singular matrix, an entry of an inverse, a Q @ R entry that reconstructs a 0) comes out
# as rounding noise, different in LAPACK's order and NumPy's; an op that jumps or has a pole
# at 0 then turns the noise into a different value or gradient.
_LINALG_RESULT = re.compile(
    r"linalg\.(det|eigvalsh|eigvals|eigh|eig|svdvals|svd|qr|inv|inv_ex|pinv|cholesky|lu|"
    r"lu_factor|solve|lstsq|matrix_norm|cond|multi_dot|matrix_power)\(|"
    r"\.(det|logdet|inverse|pinverse|svd|qr|cholesky|matrix_power)\(|"
    r"\bT\.(det|logdet|inverse|pinverse|svd|qr|cholesky|matrix_power)\(")
_DETERMINANT = re.compile(r"linalg\.det\(|\.det\(|\bT\.det\(")
# ops that jump, have a pole or a kink at 0 (or compare, or pick by order), read downstream
_AT_ZERO_DISCONTINUOUS = re.compile(
    r"[<>]=?|[=!]=|\.(eq|ne|lt|le|gt|ge|greater|less|greater_equal|less_equal|sign|sgn|"
    r"signbit|heaviside|floor|ceil|round|trunc|frac|fix|reciprocal|rsqrt|sqrt|log|log2|log10|"
    r"pow|float_power|div|true_divide|divide|remainder|fmod|digamma|lgamma|abs|relu|clamp|"
    r"clamp_min|clamp_max|maximum|minimum|fmax|fmin|copysign|nextafter|argmax|argmin|sort|"
    r"argsort|topk|masked_fill|masked_scatter|where|amax|amin|max|min|xlogy|hardtanh|"
    r"nan_to_num)_?\(|\bT\.(heaviside|where|sign|sgn|floor|ceil|round|trunc|reciprocal|rsqrt|"
    r"sqrt|log|log2|log10|pow|float_power|div|true_divide|remainder|fmod|abs|relu|clamp|"
    r"maximum|minimum|copysign|xlogy|masked_fill|signbit|frac|digamma|lgamma)\(|\*\* ?-|/")


def _noise_bound(prog, j, target):
    """64 ulp of the scale of step ``j``'s linear-algebra result ``target`` (PyTorch's run):
    (n * largest entry) ** n for a determinant, else n * the largest entry of its matrix
    operands and of the result (the size of what the rounding errors are relative to)."""
    import numpy as np

    from .program import Program  # (the runner imports this module)
    from .runner import execute, torch

    _, ns = execute(Program(prog.seed, prog.steps[:j + 1]), torch)
    out = ns.get(target)
    if not isinstance(out, torch.Tensor) or not out.is_floating_point() or not out.numel():
        return None
    mats = [o for o in _operands_before(prog, j) if o.is_floating_point() and o.dim() >= 2]
    if not mats:
        return None

    def largest(t):
        t = t.double().abs()
        t = t[t.isfinite()]
        return float(t.max()) if t.numel() else 0.0

    n = max(max(m.shape[-2:]) for m in mats)
    entry = max(largest(m) for m in mats)
    if _DETERMINANT.search(prog.steps[j].text) and "@" not in prog.steps[j].text.split("(")[0]:
        scale = (n * entry) ** n
    else:
        scale = n * max(entry, largest(out))
    eps = float(np.finfo(str(out.dtype).rsplit(".", 1)[-1]).eps)
    bound = 64 * eps * scale
    # (only where PyTorch's result holds an element that small: noise, or an exact 0 where
    # retrograd's may be noise)
    return bound if bool((out.detach().double().abs() <= bound).any()) else None


def _reads_downstream(prog, j, target):
    """The steps after ``j`` that read ``target`` or a value made from it (in place too)."""
    derived, reading = {target}, []
    for k in range(j + 1, len(prog.steps)):
        st = prog.steps[k]
        text = st.text or ""
        rhs = text.split("=", 1)[-1] if st.target and text.startswith(st.target) else text
        if derived & set(_NAME.findall(rhs)):
            reading.append(k)
            if st.target:
                derived.add(st.target)
            if st.on:
                derived.add(st.on)
        elif st.target in derived and st.kind != "inplace":
            derived.discard(st.target)  # (rebound to something else)
    return reading


@accepted("rounding noise of a linear-algebra result reaching an op that jumps, has a pole or "
          "a kink at 0: a det, eigenvalue, singular value, inverse entry or Q @ R entry that "
          "is exactly 0 in exact arithmetic comes out as noise (|v| up to 64 ulp of its "
          "scale: (n * largest entry)^n for a det, n * the largest entry otherwise) that "
          "differs between LAPACK's and NumPy's orders, and a comparison, sign/heaviside, "
          "floor/ceil/round, a masked_fill mask, 1/x, log... downstream turns it into a "
          "different value or gradient (seeds 19560735: eigvalsh(...) > 0 as a masked_fill "
          "mask; 19569453: heaviside of a det; 19137444, 19138536: float32 Q @ R before "
          "abs/pow_(-1); and the seeds of the ten per-op entries it replaced: 13207490, "
          "15007648, 15056286, 15061065, 16464046, 17061048, 18913765, 18514390, 18300230, "
          "18321879, 12584880, 12611110).  Checked, not assumed: the program is run "
          "again in both libraries with every element of that result within the bound set "
          "to exactly 0 (its graph kept: v = v - noise.detach()), and must then agree in "
          "everything compared; a difference that the noise does not explain stays a finding")
def _linalg_noise_at_discontinuity(prog, failure):
    if failure.kind not in ("value", "grad", "log"):
        return False
    for j, st in enumerate(prog.steps):
        text = st.text or ""
        if not st.target or st.dyn is not None or not _LINALG_RESULT.search(text):
            continue
        reading = _reads_downstream(prog, j, st.target)
        if not any(_AT_ZERO_DISCONTINUOUS.search(prog.steps[k].text or "") for k in reading):
            continue
        bound = _noise_bound(prog, j, st.target)
        if bound is None:
            continue
        v = st.target
        noise = f"{v}.detach().masked_fill({v}.detach().abs() > {bound!r}, 0.0)"
        # (zeroed in place where rebinding fails (triJ, seed 19701486): a pow_ downstream
        # must still write into the linalg op's own output, whose version its backward checks)
        for text in (f"{v} = {v} - {noise}", f"{v}.sub_({noise})"):
            if _agrees_when_rewritten(prog, {j: [st, _added(st, "noise_zeroed", text)]}):
                return True
    return False


def _raises_alike(prog, edited):
    """Whether PyTorch raises the same exceptions, in order, in both programs: an edit that
    made statements raise (in both libraries alike) must not pass for an explanation."""
    from .runner import execute, torch  # (the runner imports this module)

    return [e for e, _ in execute(prog, torch)[0] if e] == \
        [e for e, _ in execute(edited, torch)[0] if e]


def _rewritten(prog, rewrite):
    """The program with statements rewritten: ``rewrite`` is {step index: the steps that
    stand in its place}."""
    from .program import Program  # (the runner imports this module)

    return Program(prog.seed, [s for j, st in enumerate(prog.steps)
                               for s in rewrite.get(j, [st])])


def _agrees_when_rewritten(prog, rewrite, differs=True):
    """Whether the program, run again in both libraries with statements rewritten (the
    claimed cause taken out; ``rewrite`` as for _rewritten), agrees in everything compared,
    PyTorch raising in it as in the program (_raises_alike); ``differs``: and the program as
    it is does differ (a failure given with another program explains nothing)."""
    from .runner import compare  # (the runner imports this module)

    edited = _rewritten(prog, rewrite)
    return compare(edited) is None and (not differs or compare(prog) is not None) and \
        _raises_alike(prog, edited)


def _added(st, op, text, **fields):
    """A statement ``text`` that a rerun adds beside ``st`` (in its with block unless
    ``fields`` say otherwise), named ``op``: no leaf, view or in-place target of its own."""
    import dataclasses

    return dataclasses.replace(st, op=op, kind="", leaf=None, view_chain=(), on=None,
                               text=text, **fields)


def _agrees_when_source_rewritten(prog, rewrite):
    """Whether the program's printed source, rewritten by ``rewrite`` (text -> text: the
    claimed cause taken out), runs alike in both libraries in everything compared; False
    where the rewrite changes nothing."""
    from .program import program_from_text
    from .runner import compare  # (the runner imports this module)

    source = prog.source()
    edited = rewrite(source)
    return edited != source and compare(program_from_text(edited, prog.seed)) is None


def _hooks_skipping_none(source):
    """The source with every hook skipping a None gradient (which PyTorch's engine passes
    some hooks in a second backward: the _hook_called_with_none entries)."""
    return source.replace("register_hook(lambda g: ",
                          "register_hook(lambda g: None if g is None else ")


# The per-op entries this family replaced (each of their seeds replays with findings: 0
# under it alone: tests/fuzz/test_regressions_trig23.py); their names stay for the tests of
# earlier stops that replay those seeds through them.
_singular_det_argmin = _reciprocal_of_singular_det = _abs_of_inverse_noise = \
    _reciprocal_of_reconstruction_noise = _sign_of_reconstruction_noise = \
    _reciprocal_of_eigenvalue_noise = _rounded_in_place_singular_det = _log_of_singular_det = \
    _log_of_eigenvalue_noise = _sqrt_of_rounding_noise = _linalg_noise_at_discontinuity


def _agrees_without_chunk(prog, chunk):
    """Whether the program, without the statement (chunk) at ``chunk``, compares equal."""
    from .program import Program  # (the runner imports this module)
    from .runner import compare

    chunks = prog.chunks()
    if not 0 <= chunk < len(chunks):
        return False
    drop = {id(st) for st in chunks[chunk][1]}
    return compare(Program(prog.seed, [st for st in prog.steps if id(st) not in drop])) is None


_CONV = re.compile(r"\bconv(_transpose)?[123]d\(")


@accepted("_hook_called_with_none_conv_empty without an empty tensor: PyTorch's convolution "
          "double backward returns an undefined gradient for the input when the weight's "
          "second-order term is undefined (a weight that does not require grad), and its "
          "engine calls the tensor hook of the input with None (conv_transpose1d and conv1d, "
          "batched or not: LOG.append(g.detach()...) raises AttributeError, seed 19504918), "
          "a PyTorch bug: hooks get tensors; retrograd calls no hook there.  Only where the "
          "whole program compares equal once every hook skips a None")
def _hook_called_with_none_conv(prog, failure):
    if not (failure.kind == "raise" and not failure.retro_exc and
            failure.torch_exc in ("AttributeError", "TypeError") and
            "'NoneType'" in failure.message and
            any(_CONV.search(t) for t in _texts_all(prog)) and
            any("register_hook(lambda g: " in t for t in _texts_all(prog))):
        return False
    return _agrees_when_source_rewritten(prog, _hooks_skipping_none)


@accepted("the second backward through a convolution with zero input channels and a bias: "
          "PyTorch 2.13's double backward expands the bias term [1, C_out, 1] to the empty "
          "output [N, 0, L] (its empty-convolution path gives 0 output channels, as "
          "_conv_zero_channels) and raises 'The expanded size of the tensor (0) must match "
          "the existing size (C_out)' (seed 19511516; without a bias it runs), a PyTorch bug; "
          "retrograd runs.  Only a backward of a create_graph gradient that raises so in "
          "PyTorch alone, with a conv of an empty tensor given a bias, where the program "
          "without that backward compares equal")
def _conv_zero_channels_bias_double_backward(prog, failure):
    if not (failure.kind == "raise" and not failure.retro_exc
            and failure.torch_exc == "RuntimeError"
            and re.match(r"statement \d+ `loss2\.backward\(", failure.message)
            and "The expanded size of the tensor (0)" in failure.message
            and _empty_leaf(prog)):
        return False
    convs = [t for t in _texts_all(prog) if _CONV.search(t)]
    if not any(re.search(r"conv(_transpose)?[123]d\(v\d+, v\d+, (v\d+|bias=v\d+)", t)
               for t in convs):
        return False
    return _agrees_without_chunk(prog, failure.chunk)


def _explained_by_ulps(prog, j, ulps, tol=None):
    """Whether step ``j``'s value differs between the libraries by at most ``ulps`` ulp in
    each element (somewhere by some; ``tol(a)``: the allowed difference at PyTorch's value
    ``a`` instead, for a value that amplifies an ulp upstream), and the program agrees in
    everything once both
    libraries continue from PyTorch's value (``v = v - v.detach() + <PyTorch's values>``:
    its graph kept), while it does not as it is."""
    import numpy as np

    import retrograd

    from .program import Program  # (the runner imports this module)
    from .runner import execute, torch

    st = prog.steps[j]
    v, values = st.target, []
    for lib in (torch, retrograd):
        _, ns = execute(Program(prog.seed, prog.steps[:j + 1]), lib)
        t = ns.get(v)
        if t is None or not hasattr(t, "dtype") or not t.is_floating_point() or not t.numel():
            return False
        values.append(np.asarray(t.detach().numpy()))
    a, b = values
    if a.shape != b.shape or a.dtype != b.dtype or np.array_equal(a, b, equal_nan=True):
        return False
    with np.errstate(all="ignore"):
        allowed = ulps * np.spacing(np.abs(a)) if tol is None else tol(a)
        close = (a == b) | (np.abs(a - b) <= allowed)
    if not (close | (np.isnan(a) & np.isnan(b))).all():
        return False
    literal = f"T.tensor({a.tolist()!r}, dtype=T.{a.dtype.name})"
    if "nan" in literal or "inf" in literal:
        return False
    swapped = _added(st, "torch_value", f"{v} = {v} - {v}.detach() + {literal}")
    return _agrees_when_rewritten(prog, {j: [st, swapped]})


@accepted("float64 logit(sigmoid(x)) is x up to 1 ulp, differently in the two libraries, and "
          "a comparison with x decides by that ulp (seed 19522719: x = 0.44 in a 4 x 2 "
          "tensor).  Neither float64 sigmoid is correctly rounded, and neither is nearer: "
          "PyTorch's vectorized kernel gives 0.6082590307465144 (0.21 ulp off the mpmath "
          "truth), its scalar path (a 0-d tensor) and retrograd 0.6082590307465143 (0.79 ulp); "
          "over 20,000 inputs (normal, sd 3) PyTorch's error is 0.419 ulp on average (1.90 at "
          "most), retrograd's 0.417 (1.82).  As _sigmoid_logit_one_ulp_comparison (float32).  "
          "Checked: the logit's value y differs by at most what 2 ulp of p = sigmoid(y) "
          "make of it (2 ulp(p) / (p (1 - p)): 8 ulp of 0.44 in the seed), and the program "
          "agrees everywhere once both libraries continue from PyTorch's logit value")
def _sigmoid_logit_float64_comparison(prog, failure):
    if failure.kind != "value":
        return False
    name = failure.message.split(":", 1)[0]
    made = [st.text or "" for st in prog.steps if st.target == name]
    if failure.op not in {"eq", "ne", "lt", "le", "gt", "ge"} and not (made and re.search(
            r"[<>]=?|[=!]=|\.(eq|ne|lt|le|gt|ge)\(", made[-1].split("=", 1)[-1])):
        return False
    pattern = re.compile(r"logit\((T\.)?sigmoid\(|logit\(v\d+\.sigmoid\(\)\)|"
                         r"\.sigmoid\(\)\)?\.logit\(")
    for j, st in enumerate(prog.steps):
        if st.target and st.dyn is None and pattern.search(st.text or "") and \
                _explained_by_ulps(prog, j, 2, _logit_of_sigmoid_ulps):
            return True
    return False


def _logit_of_sigmoid_ulps(y):
    """What 2 ulp of p = sigmoid(y) make of y = logit(p): 2 ulp(p) / (p (1 - p))."""
    import numpy as np

    p = 1 / (1 + np.exp(-y))
    return 2 * np.spacing(p) / (p * (1 - p))


def _logit_argument(text):
    """The expression a statement takes the logit of (``X.logit()``, ``T.logit(X)``), or
    None: the statement's one logit, with no eps."""
    rhs = text.split("=", 1)[-1].strip()
    m = re.fullmatch(r"T\.logit\((.+)\)", rhs)
    if m:
        return m.group(1)
    m = re.fullmatch(r"(.+)\.logit\(\)", rhs)
    return m.group(1) if m else None


@accepted("float32 sigmoid and logit rounded the wrong way by PyTorch 2.13: logit of float32 "
          "sigmoid(1) = 0.7310586 is 1.0000000963 exactly, so 1.0000001 (retrograd's, 0.19 "
          "ulp off) is the correctly rounded result and PyTorch's 1.0 is 0.81 ulp off; its "
          "float32 sigmoid(2) is 0.88079703 (0.83 ulp off; retrograd's 0.88079709 is "
          "correctly rounded); an op whose domain ends at 1 (acos) then gives 0 against nan "
          "(seed 19809679).  Only a float32 logit statement where retrograd's logit is "
          "correctly rounded for its own input, its input is PyTorch's or (a sigmoid) the "
          "correctly rounded sigmoid, the two logits differ by at most what 2 ulp of the input "
          "make, and the program agrees everywhere once both libraries continue from "
          "PyTorch's logit value")
def _logit_float32_rounding(prog, failure):
    if failure.kind not in ("value", "grad", "log"):
        return False
    import numpy as np

    import retrograd

    from .program import Program  # (the runner imports this module)
    from .runner import execute, torch

    for j, st in enumerate(prog.steps):
        arg = _logit_argument(st.text or "") if st.target and st.dyn is None else None
        if arg is None:
            continue
        sig = re.fullmatch(r"\(?(v\d+)\.sigmoid\(\)\)?|T\.sigmoid\((v\d+)\)", arg.strip())
        values = []
        for lib in (torch, retrograd):
            ns = execute(Program(prog.seed, prog.steps[:j + 1]), lib)[1]
            try:
                p = eval(arg, dict(ns))  # (the logit's input, as the statement reads it)
            except Exception:  # noqa: BLE001
                return False
            out = ns.get(st.target)
            if out is None or not hasattr(p, "dtype") or not str(p.dtype).endswith("float32"):
                return False
            x = ns.get(sig.group(1) or sig.group(2)) if sig else None
            values.append((np.asarray(p.detach().numpy()), np.asarray(out.detach().numpy()),
                           None if x is None else np.asarray(x.detach().numpy())))
        (p_t, a, _), (p_r, b, x) = values
        if a.shape != b.shape or p_t.shape != p_r.shape:
            return False
        with np.errstate(all="ignore"):
            q = p_r.astype(np.float64)
            half = 0.5001 * np.spacing(np.abs(b)).astype(np.float64)
            rounded = (np.abs(b - np.log(q / (1 - q))) <= half) | (b == a)
            moved = p_t != p_r
            if moved.any():
                if x is None:
                    return False
                exact = 1 / (1 + np.exp(-x.astype(np.float64)))
                near = np.abs(q - exact) <= 0.5001 * np.spacing(np.abs(p_r)).astype(np.float64)
                if not near[moved].all():
                    return False
        if not (a != b).any() or not rounded.all():
            return False
        return _explained_by_ulps(prog, j, 2, _logit_of_sigmoid_ulps)
    return False


# ------------------------------------------------------------ triF (stop 22): 19100000+
_RECONSTRUCTION = re.compile(r"@.*linalg\.(qr|svd|eigh|cholesky|lu)\(")


def _reconstruction_noise_bound(x):
    """64 ulp (of ``x``'s dtype) * n * its largest entry: below it, an entry of a product of
    decomposition factors is rounding noise of an exact 0."""
    import numpy as np

    ulp = float(np.finfo(str(x.dtype).rsplit(".", 1)[-1]).eps)
    v = x.detach().double().abs()
    v = v[v.isfinite()]
    return 64 * ulp * x.shape[-1] * max(1.0, float(v.max()) if v.numel() else 0.0)


@accepted("a gradient through abs of a product of decomposition factors (Q @ R of a float32 "
          "QR) that reconstructs exact zeros: both libraries leave rounding noise there "
          "(PyTorch up to 3.2e-07, retrograd, nearer 0, up to 1.5e-07; its other entries are "
          "as close as PyTorch's or closer), abs's derivative is the sign of that noise, so "
          "the leaf's gradient differs in sign (seed 19137444).  Only a gradient failure of a "
          "program with such a product read by abs, whose noise entries (below 64 ulp * n * "
          "largest entry) differ in sign, and that compares equal once that product's noise "
          "entries are masked to 0 (the same mask in both libraries)")
def _abs_of_reconstruction_noise(prog, failure):
    if failure.kind != "grad":
        return False
    from .program import Program
    from .runner import execute, torch  # (the runner imports this module)

    import retrograd

    for i, st in enumerate(prog.steps):
        if not st.target or not st.text or not _RECONSTRUCTION.search(st.text):
            continue
        name = st.target
        if not any(re.search(rf"\b{name}\.abs_?\(\)|\babs_?\({name}\)", t or "")
                   for t in (s.text for s in prog.steps[i + 1:])):
            continue
        made = []
        for lib in (torch, retrograd):
            _, ns = execute(Program(prog.seed, prog.steps[:i + 1]), lib)
            x = ns.get(name)
            if x is None or not hasattr(x, "dim") or x.dim() < 2:
                return False
            made.append(x.detach())
        bound = _reconstruction_noise_bound(made[0])
        a = made[0].double().numpy()
        b = made[1].double().numpy()
        noise = (abs(a) <= bound) & (abs(b) <= bound)
        import numpy as np

        if not (noise & (np.sign(a) != np.sign(b))).any():
            return False
        expr = st.text.split("=", 1)[1].strip()
        masked = f"{name} = (lambda p: p * (p.abs() > {bound!r}))({expr})"
        return _agrees_when_source_rewritten(
            prog, lambda src, old=st.text, new=masked: src.replace(old, new, 1))
    return False


@accepted("1/x of a float32 product of decomposition factors (Q @ R of a QR) that "
          "reconstructs an exact 0, as _reciprocal_of_reconstruction_noise (float64) but "
          "with float32's rounding: the product is noise there (PyTorch 2.98e-07, retrograd "
          "-1.55e-09, nearer the true 0), so pow_(-1) gives 3355443 against -6.5e+08 (seed "
          "19138536).  Only a float32 value of such a product changed by reciprocal_ or "
          "pow_(-1), where every differing element is, in both libraries, 1 over at most "
          "64 float32 ulp * n of the largest entry kept, and retrograd's noise is no larger "
          "than PyTorch's")
def _reciprocal_of_reconstruction_noise_f32(prog, failure):
    import numpy as np

    if failure.kind != "value":
        return False
    name = failure.message.split(":", 1)[0]
    made = [i for i, st in enumerate(prog.steps) if st.target == name]
    text = prog.steps[made[-1]].text if made else ""
    if not _RECONSTRUCTION.search(text) or not any(
            re.fullmatch(rf"\s*{name}\.(reciprocal_\(\)|pow_\(-1(\.0)?\))\s*", st.text or "")
            for st in prog.steps):
        return False
    from .program import Program
    from .runner import execute, torch  # (the runner imports this module)

    _, ns = execute(Program(prog.seed, prog.steps[:made[-1] + 1]), torch)
    if getattr(ns.get(name), "dtype", None) != torch.float32:
        return False
    got = _failure_arrays(failure)
    if got is None:
        return False
    _, a, b = got
    with np.errstate(divide="ignore", over="ignore"):
        ia, ib = 1 / a, 1 / b
    differ = ~np.isclose(a, b, rtol=1e-5, atol=0)
    if not differ.any() or a.ndim < 2:
        return False
    kept = np.abs(ia[~differ & np.isfinite(ia)])
    scale = max(1.0, float(kept.max()) if kept.size else 1.0)
    bound = 64 * float(np.finfo(np.float32).eps) * a.shape[-1] * scale
    return bool((np.abs(ia[differ]) <= bound).all() and (np.abs(ib[differ]) <= bound).all()
                and (np.abs(ib[differ]) <= np.abs(ia[differ])).all())


@accepted("slogdet/det of a matrix holding an infinite entry (digamma(0) = -inf): PyTorch's "
          "det/slogdet give nan and sign -0.0 although its own lu_factor of that matrix has "
          "the finite-or-infinite diagonal [-inf, -1, 1] (det -inf), while retrograd "
          "(NumPy's LAPACK) gives det -inf, slogdet (-1, inf): the limit of the determinant "
          "as that entry grows (its cofactor is -1 != 0), so retrograd's is the right one "
          "(seed 19116907).  Only a value failure of a det/slogdet statement whose operand, "
          "in PyTorch, has an infinite entry and no nan, where PyTorch's sign is 0 or its "
          "det nan, and retrograd's sign equals the sign of the product of PyTorch's own LU "
          "diagonal times its pivots' parity")
def _det_of_infinite_matrix(prog, failure):
    if failure.kind != "value":
        return False
    from .program import Program
    from .runner import execute, torch  # (the runner imports this module)

    import retrograd

    name = failure.message.split(":", 1)[0]
    for i, st in enumerate(prog.steps):
        m = re.match(rf"\s*{name}\s*=\s*T\.linalg\.(slogdet|det)\((.*)\)(\[\d\])?\s*$",
                     st.text or "")
        if st.target != name or m is None:
            continue
        _, ns = execute(Program(prog.seed, prog.steps[:i]), torch)
        try:
            x = eval(m.group(2), {"T": torch, **ns})
        except Exception:
            return False
        if not isinstance(x, torch.Tensor) or x.dim() != 2 or not x.is_floating_point():
            return False
        x = x.detach()
        if not bool(x.isinf().any()) or bool(x.isnan().any()):
            return False
        sign_t = float(torch.linalg.slogdet(x)[0])
        if not (sign_t == 0 or bool(torch.linalg.det(x).isnan())):
            return False
        lu, piv = torch.linalg.lu_factor(x)
        swaps = int((piv - 1 != torch.arange(x.shape[-1], dtype=piv.dtype)).sum())
        want = float(torch.sgn(lu.diagonal()).prod()) * (-1.0) ** swaps
        got = retrograd.linalg.slogdet(retrograd.tensor(x.numpy()))[0]
        return want != 0 and float(got) == want
    return False


# ------------------------------------------------------------ triI (stop 23): 19400000+
def _step_making(prog, name, ops):
    """The index of the last step that assigns ``name`` with one of ``ops``, or None."""
    at = [i for i, st in enumerate(prog.steps) if st.target == name and st.op in ops]
    return at[-1] if at else None


@accepted("float32 sigmoid rounded the wrong way by PyTorch 2.13 near 1 (as "
          "_sigmoid_float32_rounding_at_logit), then binary_cross_entropy's log(1 - x), a "
          "pole at 1: PyTorch's sigmoid(11.301922) is 0.9999876022 where the correctly "
          "rounded float32 of 0.99998765098 is 0.9999876618 (retrograd's), so 1 - x moves by "
          "0.5% and the loss is 5.6490 against retrograd's 5.6514, the float64 chain's "
          "5.6510 (seed 19443976; PyTorch's float32 i0 upstream is 1 ulp off too, "
          "_i0_float32_amplified).  Each library's loss is its own input's float64 loss "
          "rounded.  Only a binary_cross_entropy value (reduction 'none') of a sigmoid in a "
          "float32 program, whose differing elements have an input within 1e-3 of 0 or 1 in "
          "both libraries, where a float64 run (the float32 inputs rounded first) shows "
          "every differing element of retrograd's finite and at least as near the float64 "
          "value as PyTorch's")
def _sigmoid_float32_rounding_at_bce(prog, failure):
    if failure.kind != "value" or failure.op != "nn_loss":
        return False
    name = failure.message.split(":", 1)[0]
    i = _step_making(prog, name, ("nn_loss",))
    text = prog.steps[i].text if i is not None else ""
    if not re.search(r"\bbinary_cross_entropy\(.*sigmoid", text) or \
            "reduction='none'" not in text:
        return False
    near = _float32_retrograd_nearer(prog, failure, ("nn_loss",))
    if near is None:
        return False
    differ, x = near
    x = x[differ]
    return bool(differ.any()) and bool(((x < 1e-3) | (x > 1 - 1e-3)).all())


_COMPARISONS = {"gt", "lt", "ge", "le", "eq", "ne"}


@accepted("a float32 comparison of two values that are equal in exact arithmetic "
          "(logit(sigmoid(x)) against x), decided by rounding: PyTorch 2.13's float32 "
          "sigmoid is 1 ulp off (sigmoid(-0.43741974) is 0.39235595, the correctly rounded "
          "0.39235598 is retrograd's) and its logit 2 ulp, so logit(sigmoid(x)) > x is False "
          "in PyTorch and True in retrograd (seed 19414403).  Only a comparison's value in a "
          "float32 program where, at every differing element, each library's two operands "
          "lie within 4 ulp of each other, and each of retrograd's operands is at least as "
          "near a float64 run's (the float32 inputs rounded first) as PyTorch's")
def _float32_comparison_decided_by_rounding(prog, failure):
    import numpy as np

    from .program import Program  # (the runner imports this module)
    from .runner import execute, torch

    import retrograd

    if torch is None or failure.kind != "value" or failure.op not in _COMPARISONS or \
            not any("float32" in src or "int64" in src for src in _texts_all(prog)):
        return False
    got = _failure_arrays(failure)
    if got is None or not re.fullmatch(r"v\d+", got[0]):
        return False
    what, a, b = got
    i = _step_making(prog, what, _COMPARISONS)
    if i is None:
        return False
    rhs = prog.steps[i].text.split("=", 1)[1].strip()
    m = (re.fullmatch(r"\((.+)\) *(?:[<>]=?|[!=]=) *\((.+)\)", rhs) or
         re.fullmatch(r"\((.+)\)\.(?:gt|lt|ge|le|eq|ne)\((.+)\)", rhs) or
         re.fullmatch(r"T\.(?:gt|lt|ge|le|eq|ne)\((v\d+), (.+)\)", rhs))
    if m is None:
        return False
    head = Program(prog.seed, prog.steps[:i])
    ref = _float64_run(head)
    if ref is None:
        return False
    sides = []
    for lib, ns in ((torch, execute(head, torch)[1]), (retrograd, execute(head, retrograd)[1]),
                    (torch, ref)):
        try:
            vals = [eval(e, {**ns, "T": lib}) for e in m.groups()]  # (the operands as written)
        except Exception:  # noqa: BLE001 - a statement that raises is another failure
            return False
        if not all(hasattr(v, "shape") for v in vals):
            return False
        if lib is torch and ns is not ref and not all(
                _dtype_name(v) == "float32" for v in vals):
            return False
        try:
            sides.append([np.broadcast_to(np.asarray(v.detach().numpy(), dtype=np.float64),
                                          a.shape) for v in vals])
        except ValueError:
            return False
    differ = a != b
    if not differ.any():
        return False
    (tx, ty), (rx, ry), (fx, fy) = ([s[differ] for s in side] for side in sides)
    for x, y in ((tx, ty), (rx, ry)):
        ulp = np.spacing(np.maximum(np.abs(x), np.abs(y)).astype(np.float32)).astype(float)
        if not (np.abs(x - y) <= 4 * ulp).all():
            return False
    return bool((np.abs(rx - fx) <= np.abs(tx - fx)).all() and
                (np.abs(ry - fy) <= np.abs(ty - fy)).all())


@accepted("float_power/pow of a negative base to a norm's FMA residue "
          "(_group_norm_fma_residue, _batch_norm_fma_residue): a normalized group holding one "
          "value is exactly 0 before the affine, so retrograd's output is exactly its bias "
          "(-1, 0), while PyTorch's fused x * scale + shift leaves a residue (-1.0000000000000107, "
          "-1.9e-15); a negative base to a non-integer power is nan, so float_power(-1, .) is "
          "nan in PyTorch and +-1 in retrograd (seed 19406337).  Only a float_power/pow value "
          "whose exponent is such a norm's result (with weight or bias), where the norm's "
          "values differ only by that residue, and the program agrees in both libraries once "
          "the norm's result is snapped to the nearest integer where it lies within that "
          "residue bound of one")
def _pow_of_norm_fma_residue(prog, failure):
    from .runner import execute, torch

    import retrograd

    if torch is None or failure.kind != "value" or failure.op not in (
            "float_power", "float_power_", "pow", "pow_"):
        return False
    name = failure.message.split(":", 1)[0]
    i = _step_making(prog, name, ("float_power", "float_power_", "pow", "pow_"))
    if i is None:
        return False
    read = _NAME.findall(prog.steps[i].text.split("=", 1)[-1])
    for j, st in enumerate(prog.steps[:i]):
        m = re.search(r"\.(group_norm|batch_norm|instance_norm)\((\w+)(?:, (\d+))?",
                      st.text or "")
        if m is None or st.target not in read[1:] or not _NORM_WITH_AFFINE.search(st.text):
            continue
        operands = [o for o in _operands_before(prog, j) if o.is_floating_point()]
        if not operands or operands[0].dim() < 2 or operands[0].numel() == 0:
            return False
        if m.group(1) == "group_norm":
            groups = (lambda x, g=int(m.group(3)): x.reshape(x.shape[0] * g, -1))
        elif m.group(1) == "instance_norm":
            groups = (lambda x: x.reshape(x.shape[0] * x.shape[1], -1))
        else:
            groups = (lambda x: x.transpose(0, 1).reshape(x.shape[1], -1))
        head = type(prog)(prog.seed, prog.steps[:j + 1])
        made = [execute(head, lib)[1].get(st.target) for lib in (torch, retrograd)]
        if not all(hasattr(v, "shape") for v in made):
            return False
        values = tuple(v.detach().double().numpy() if lib == 0 else
                       v.detach().numpy().astype("float64") for lib, v in enumerate(made))
        if not _fma_residue(values, operands, groups):
            return False
        import numpy as np

        ulp = float(np.finfo(str(operands[0].dtype).rsplit(".", 1)[-1]).eps)
        x = operands[0].double()
        w = float(operands[1].double().abs().max()) if len(operands) > 1 else 1.0
        bias = float(operands[2].double().abs().max()) if len(operands) > 2 else 0.0
        bound = 2 * ulp * (float(x.abs().max()) * max(1.0, w) / 1e-5 ** 0.5 + bias)
        expr = st.text.split("=", 1)[1].strip()
        snapped = (f"{st.target} = (lambda y: T.where((y - y.round()).abs() <= {bound!r}, "
                   f"y.round(), y))({expr})")
        return _agrees_when_source_rewritten(
            prog, lambda src, old=st.text, new=snapped: src.replace(old, new, 1))
    return False


_QUANTILE = re.compile(r"\.(nan)?(quantile|median)\(")


@accepted("ties in quantile/nanquantile/median: PyTorch's composite sorts (unstable for equal "
          "values) and sends the gradient to the elements its sort put at the quantile's "
          "positions, so which of several equal inputs gets it is unspecified, as for sort "
          "(_ties); retrograd's stable sort picks others (nanquantile(0.25, 'midpoint') of "
          "18 values, eight of them -1: the extra 0.38 lands on two other -1s; seed "
          "19922607).  Only a leaf's gradient in a program with such an op whose operand "
          "holds equal values, where every differing element of the leaf holds one and the "
          "same value and the two libraries' gradients over them sum to the same total.  "
          "Where the tied values are not all the leaf's (cat([v0, v4, v0]) with v0 a "
          "constant: one element of v4 gets 0.75 of the gradient in PyTorch, 0.25 in "
          "retrograd, the rest going to v0's copies; seed 20061516), the totals are checked "
          "on the quantile's own operand instead: its gradient (the program rerun with it "
          "retained, the leaf's gradients as in the failure) differs only at elements equal "
          "to the leaf's differing value, with the same total there")
def _quantile_ties_gradient(prog, failure):
    import numpy as np

    from .runner import execute, torch

    if torch is None or failure.kind != "grad":
        return False
    quantiles = [i for i, st in enumerate(prog.steps) if st.text and _QUANTILE.search(st.text)]
    if not quantiles or not any(_operand_has_ties(prog, i) for i in quantiles):
        return False
    got = _failure_arrays(failure)
    if got is None or not re.fullmatch(r"v\d+\.grad", got[0]):
        return False
    what, a, b = got
    leaf = execute(prog, torch)[1].get(what.split(".")[0])
    if not isinstance(leaf, torch.Tensor) or tuple(leaf.shape) != a.shape:
        return False
    x = leaf.detach().double().numpy()
    differ = ~np.isclose(a, b, rtol=1e-7, atol=1e-12, equal_nan=True)
    if not differ.any() or np.unique(x[differ]).size != 1:
        return False
    total = max(1.0, float(np.abs(a[differ]).sum()))
    if differ.sum() >= 2 and abs(a[differ].sum() - b[differ].sum()) <= 1e-9 * total:
        return True
    return any(_quantile_grad_moves_among(prog, i, float(x[differ][0]), what, (a, b))
               for i in quantiles)


def _quantile_grad_moves_among(prog, i, value, what, got):
    """Whether the gradient of step ``i``'s quantile/median operand (the program rerun in
    both libraries with the operand's gradient retained after step ``i``) differs only at
    two or more elements equal to ``value``, totalling the same there, in a rerun whose
    ``what`` (a leaf's .grad) is the failure's ``got`` (torch's, retrograd's)."""
    import dataclasses

    import numpy as np

    import retrograd

    from .program import Program  # (the runner imports this module)
    from .runner import execute, torch

    names = _NAME.findall(prog.steps[i].text.split("=", 1)[-1])
    if not names:
        return False
    retain = dataclasses.replace(prog.steps[i], op="retain_operand", kind="", leaf=None,
                                 view_chain=(), on=None, target=None,
                                 text=f"{names[0]}.retain_grad()")
    edited = Program(prog.seed, prog.steps[:i + 1] + [retain] + prog.steps[i + 1:])
    grads = []
    for lib, want in zip((torch, retrograd), got):
        outcomes, ns = execute(edited, lib)
        x, leaf = ns.get(names[0]), ns.get(what.split(".")[0])
        if any(exc for exc, _ in outcomes) or x is None or getattr(x, "grad", None) is None \
                or getattr(leaf, "grad", None) is None or not np.allclose(
                    leaf.grad.numpy(), want, rtol=1e-12, atol=0, equal_nan=True):
            return False
        grads.append((x.detach().numpy().astype("float64"),
                      x.grad.numpy().astype("float64")))
    (x, gt), (_, gr) = grads
    differ = ~np.isclose(gt, gr, rtol=1e-7, atol=1e-12, equal_nan=True)
    if differ.sum() < 2 or not (x[differ] == value).all():
        return False
    total = max(1.0, float(np.abs(gt[differ]).sum()))
    return bool(abs(gt[differ].sum() - gr[differ].sum()) <= 1e-9 * total)


# ------------------------------------------------------------ fuzzV (stop 23): 19700000+
_SVD_OF_INFINITE = "contained an infinite entry (LAPACK's result for it is unspecified)"


@accepted("_svd_of_an_infinite_matrix: an SVD with vectors (svd, pinv, lstsq...) of a matrix "
          "whose sides are 3 or more, holding an infinite entry and no NaN: OpenBLAS's gesdd "
          "never returns on many such matrices (NumPy hangs: ones(3, 3) + eye(3) with -inf at "
          "[0, 0]), so retrograd raises LinAlgError without calling it; MKL's, PyTorch's, "
          "raises LinAlgError on most of them too (4 in 5 random ones) and gives NaN singular "
          "values with unspecified vectors (permutation matrices) on the rest.  Only where "
          "retrograd raised that very message and PyTorch ran")
def _svd_of_an_infinite_matrix(prog, failure):
    return (failure.kind == "raise" and not failure.torch_exc
            and failure.retro_exc == "RuntimeError" and _SVD_OF_INFINITE in failure.message)


# ------------------------------------------------------------ fuzzU (stop 23): 19600000+
_CUM_EXTREME = re.compile(r"\b(cummax|cummin)\(")


@accepted("cummax/cummin at a tie PyTorch 2.13 breaks by rounding: its vectorized float64 "
          "kernels round some lanes otherwise than the scalar loop of the tail, so equal "
          "inputs give values 1 ulp apart by position (float64 sinh, cosh, atanh, sigmoid, "
          "exp2 do so for 5-25% of values; cosh(1.01) of 12 equal elements is "
          "1.55490999729422 in the first 8, 1.5549099972942197 in the last 4: seed "
          "19690347); cummax's index then moves to the later equal value in retrograd (equal "
          "inputs, equal results: PyTorch's documented >= rule) and stays in PyTorch.  Only "
          "an integer value made by a cummax/cummin statement whose float64 operand, in "
          "PyTorch's run, holds two values that differ by at most 4 ulp, where the program "
          "agrees once each cummax/cummin operand is rounded to float32 in both libraries")
def _cum_extreme_position_rounding(prog, failure):
    import numpy as np

    if failure.kind != "value":
        return False
    name = failure.message.split(":", 1)[0]
    made = [i for i, st in enumerate(prog.steps)
            if st.target == name and st.text and _CUM_EXTREME.search(st.text)]
    if not made:
        return False
    operands = _operands_before(prog, made[-1])
    if not operands or str(operands[0].dtype) != "torch.float64":
        return False
    x = np.unique(operands[0].numpy().ravel())
    x = x[np.isfinite(x)]
    if x.size < 2 or not (np.diff(x) <= 4 * np.spacing(np.abs(x[:-1]))).any():
        return False

    def snapped(src):
        src = re.sub(r"\b(v\d+)\.(cummax|cummin)\(", r"\1.float().double().\2(", src)
        return re.sub(r"\bT\.(cummax|cummin)\((v\d+)", r"T.\1(\2.float().double()", src)
    return _agrees_when_source_rewritten(prog, snapped)


# ------------------------------------------------------- triJ (stop 23): float32 det noise
_DET_STEP = re.compile(r"^(v\d+) = (?:T\.linalg\.det\((.+)\)|(.+)\.det\(\))$")


@accepted("the float32 det of a matrix singular to float32 precision (condition number, "
          "in float64, above 1/eps of float32): PyTorch's float32 LU returns rounding noise "
          "(seeds 19660699, 19660738: a 3x3 Gram matrix of rank 2, condition 1.9e10, "
          "PyTorch 0.0961 where the float64 det of the same float32 matrix is -0.0238163, "
          "retrograd -0.0238162, which factors in float64).  Only a det statement with a "
          "float32 matrix where, in each matrix whose det differs, retrograd's det is at "
          "least as near the float64 det of its matrix as PyTorch's of its own, and "
          "PyTorch's is off by at most 8 n eps sigma_1 * (sigma_1 ... sigma_n-1) (what a "
          "perturbation of eps |A| moves a det by; the float32 matrices themselves may "
          "differ by an ulp upstream, which the "
          "condition number amplifies); checked by rerunning the program with each det of "
          "a singular matrix within that bound set to exactly 0 in both libraries (its "
          "graph kept), which must then agree in everything compared")
def _float32_det_noise_of_singular_matrix(prog, failure):
    if failure.kind != "value":
        return False
    import numpy as np

    import retrograd

    from .program import Program  # (the runner imports this module)
    from .runner import execute, torch

    for j, st in enumerate(prog.steps):
        m = _DET_STEP.match(st.text or "")
        if not m or st.dyn is not None or st.target != m.group(1):
            continue
        expr = m.group(2) or m.group(3)
        got = []
        for lib in (torch, retrograd):
            _, ns = execute(Program(prog.seed, prog.steps[:j]), lib)
            try:
                a = eval(expr, dict(ns))  # noqa: S307 - the fuzzer's own statement text
            except Exception:  # noqa: BLE001 - a matrix that does not build: not this case
                return False
            got.append((a.detach().numpy(), a.det().detach().numpy()))
        (a, det_t), (a_r, det_r) = got
        if a.dtype != np.float32 or a.shape != a_r.shape or not np.isfinite(a).all():
            continue
        a64 = a.astype(np.float64).reshape((-1,) + a.shape[-2:])
        det64 = np.linalg.det(a64)
        # (each library's own matrix: its float32 rounding upstream may differ by an ulp)
        det64_r = np.linalg.det(a_r.astype(np.float64).reshape(a64.shape))
        det_t, det_r = det_t.reshape(-1).astype(np.float64), det_r.reshape(-1).astype(np.float64)
        differ = ~np.isclose(det_t, det_r, rtol=1e-4, atol=1e-6, equal_nan=True)
        if not differ.any():
            continue
        s = np.linalg.svd(a64, compute_uv=False)
        n, eps = a.shape[-1], float(np.finfo(np.float32).eps)
        with np.errstate(divide="ignore"):
            singular = s[:, 0] > s[:, -1] / eps  # condition number above 1/eps
        bound = np.where(singular, 8 * n * eps * s[:, 0] * np.prod(s[:, :-1], axis=-1), -1.0)
        err_t, err_r = np.abs(det_t - det64), np.abs(det_r - det64_r)
        if not (singular & (err_r <= err_t) & (err_t <= bound))[differ].all():
            continue
        # the rerun: each det within its bound, of a singular matrix, set to exactly 0 in
        # both libraries (its graph kept), the rest left as it is
        v, shape = st.target, tuple(a.shape[:-2])
        zeroed = _added(st, "noise_zeroed",
                        f"{v} = {v} - {v}.detach().masked_fill({v}.detach().abs() > "
                        f"T.tensor({bound.tolist()!r}, dtype={v}.dtype).reshape({shape!r}), "
                        f"0.0)")
        if _agrees_when_rewritten(prog, {j: [st, zeroed]}):
            return True
    return False


# ------------------------------------------------------------ triL (stop 23)
_ELEMENTARY_CALL = re.compile(
    r"\b(tanh|sinh|cosh|exp|exp2|expm1|log|log2|log10|log1p|sin|cos|tan|asin|acos|atan|"
    r"asinh|acosh|atanh|sigmoid|erf|erfc)_?\(")


@accepted("float64 floor/ceil/round/trunc/frac at its jump, reached through an elementary "
          "function NumPy's libm rounds 1 ulp otherwise than PyTorch's: tanh(-1.4) is "
          "-0.8853516482022625 in PyTorch and -0.8853516482022624 in NumPy (the exact value, "
          "mpmath at 200 bits, is -0.885351648202262488...: 0.385 and 0.615 ulp off, both "
          "faithful), so x.remainder(|x| + 0.5) is exactly 0.5 in one library and 0.5 + 1 ulp "
          "in the other and round (half to even) gives 0 against 1 (seed 19730082).  Only "
          "where a float64 elementary function (tanh, exp, sin...) is called, and the "
          "rounding function's float64 operand, in both libraries, lies within 4 ulp of the "
          "function's jump (an integer; a half-integer for round) and within 2 ulp of each "
          "other at every element where the results differ")
def _rounding_jump_after_elementary64(prog, failure):
    if failure.kind != "value" or failure.op not in ("floor", "ceil", "round", "trunc",
                                                     "frac"):
        return False
    if not any(_ELEMENTARY_CALL.search(t) for t in _texts_all(prog)):
        return False
    import numpy as np
    import torch

    from .program import Program  # (the runner imports this module)
    from .runner import execute
    import retrograd

    fn = {"floor": np.floor, "ceil": np.ceil, "round": np.round, "trunc": np.trunc,
          "frac": lambda v: v - np.trunc(v)}[failure.op]
    name = failure.message.split(":", 1)[0]
    for i, st in enumerate(prog.steps):
        if st.op != failure.op or st.target != name or not st.text:
            continue
        operand = _NAME.findall(st.text.split("=", 1)[-1])[:1]
        if not operand:
            continue
        t = execute(Program(prog.seed, prog.steps[:i]), torch)[1].get(operand[0])
        r = execute(Program(prog.seed, prog.steps[:i]), retrograd)[1].get(operand[0])
        if not (isinstance(t, torch.Tensor) and t.dtype == torch.float64 and
                hasattr(r, "numpy") and str(r.dtype) == "retrograd.float64"):
            continue
        xt = t.detach().numpy()
        xr = np.asarray(r.detach().numpy())
        if xt.shape != xr.shape:
            continue
        with np.errstate(invalid="ignore"):
            jump = np.floor(xt) + 0.5 if failure.op == "round" else np.round(xt)
            ulp = np.spacing(np.maximum(np.abs(jump), 0.5))
            near = (np.abs(xt - jump) <= 4 * ulp) & (np.abs(xr - jump) <= 4 * ulp) & \
                (np.abs(xt - xr) <= 2 * ulp)
            jumps = (fn(xt) != fn(xr)) & np.isfinite(xt)
        if jumps.any() and near[jumps].all():
            return True
    return False


# ------------------------------------------------------------ acc24 (stop 24)
_TRUNCATING = re.compile(r"^(v\d+) = (?:T\.(trunc|floor|ceil)\((.+)\)|\(?(.+?)\)?\.(trunc|floor|"
                         r"ceil)\(\))$")
_INT_WRITE = re.compile(r"^(v\d+)(\[.+\]) = (.+)$")


@accepted("a float value within rounding of an integer, truncated: trunc/floor/ceil of it, or "
          "written into an integer tensor (which truncates), where the two libraries' "
          "values, each within 8 ulp of the integer, fall on its two sides.  PyTorch's "
          "float64 sum of the 6 values -1.44, 0.59, -1.44, -1.13, -0.87, -1.71 is "
          "-5.999999999999999 (its vectorized order), NumPy's -6.0 (the exact sum: math.fsum), "
          "so v[1] = x.sum() writes -5 in one and -6 in the other (seed 20017375); "
          "cosine_similarity(x, x) is 1 + 1 ulp in PyTorch and 1 - 1 ulp in retrograd (each "
          "of its own matrix_exp, 1 ulp apart), so trunc is 1 or 0 (seed 20149112).  Only "
          "where, at every element where the truncations differ, both values lie within 8 ulp "
          "of an integer, and the program agrees in everything once that statement's float "
          "operand is snapped, in both libraries, to the integer it lies within 8 ulp of")
def _integer_jump_at_rounding(prog, failure):
    if failure.kind not in ("value", "grad"):
        return False
    import numpy as np

    import retrograd

    from .program import Program  # (the runner imports this module)
    from .runner import execute, torch

    for i, st in enumerate(prog.steps):
        text = st.text or ""
        m, w = _TRUNCATING.match(text), _INT_WRITE.match(text)
        if m:
            expr, fn = m.group(3) or m.group(4), m.group(2) or m.group(5)
        elif w:
            expr, fn = w.group(3), "trunc"
        else:
            continue
        values = []
        for lib in (torch, retrograd):
            _, ns = execute(Program(prog.seed, prog.steps[:i]), lib)
            if w and not (hasattr(ns.get(w.group(1)), "dtype") and
                          str(ns[w.group(1)].dtype).endswith("int64")):
                break
            try:
                y = eval(expr, dict(ns))  # noqa: S307 - the fuzzer's own statement text
            except Exception:  # noqa: BLE001 - a statement that raises: another failure
                break
            if not (hasattr(y, "is_floating_point") and y.is_floating_point()):
                break
            values.append(np.asarray(y.detach().numpy()))
        if len(values) != 2 or values[0].shape != values[1].shape:
            continue
        yt, yr = (v.astype("float64") for v in values)
        eps = float(np.finfo(values[0].dtype).eps)
        jump = np.round(yt)
        bound = 8 * eps * np.maximum(np.abs(jump), 1.0)
        with np.errstate(invalid="ignore"):
            cut = getattr(np, fn)
            differ = cut(yt) != cut(yr)
            near = (np.abs(yt - jump) <= bound) & (np.abs(yr - jump) <= bound)
        if not differ.any() or not near[differ].all():
            continue
        snap = (f"(lambda y: T.where((y - y.round()).abs() <= {8 * eps!r} * "
                f"y.round().abs().clamp(min=1.0), y.round(), y))({expr})")
        snapped = f"{m.group(1)} = T.{fn}({snap})" if m else f"{w.group(1)}{w.group(2)} = {snap}"
        line = rf"(?m)^(\s*){re.escape(text)}$"  # (indented in a with block)
        if _agrees_when_source_rewritten(prog, lambda src, line=line, s=snapped: re.sub(
                line, lambda at: at.group(1) + s, src, count=1)):
            return True
    return False


_PINV_STEP = re.compile(r"^(v\d+) = (?:T\.linalg\.pinv\((.+)\)|(.+)\.pinverse\(\))$")


@accepted("a float32 pinv of an ill-conditioned matrix: its error bound is cond(A) * eps "
          "relative (5.7e4 * 1.2e-7 = 6.8e-3 for the seed's [[1841, 17581], [17581, "
          "168154]]), PyTorch's float32 SVD reaches 9.2e-4 of it, retrograd's (float64 "
          "inside) 1e-7 (seed 20102489).  Only the pinv's own value, with a float32 "
          "nonsingular matrix (cond * eps < 1), where at each matrix whose pinv differs "
          "PyTorch's lies within 4 cond eps (relative to its largest entry) of the float64 "
          "pinv of its float32 matrix and retrograd's within that bound and at least as near")
def _float32_pinv_conditioning(prog, failure):
    if failure.kind != "value":
        return False
    import numpy as np

    import retrograd

    from .program import Program  # (the runner imports this module)
    from .runner import execute, torch

    name = failure.message.split(":", 1)[0]
    for j, st in enumerate(prog.steps):
        m = _PINV_STEP.match(st.text or "")
        if not m or m.group(1) != name or st.target != name:
            continue
        expr = m.group(2) or m.group(3)
        got = []
        for lib in (torch, retrograd):
            _, ns = execute(Program(prog.seed, prog.steps[:j]), lib)
            try:
                a = eval(expr, dict(ns))  # noqa: S307 - the fuzzer's own statement text
                p = lib.linalg.pinv(a)
            except Exception:  # noqa: BLE001 - not a plain pinv of one matrix
                return False
            got.append((np.asarray(a.detach().numpy()), np.asarray(p.detach().numpy())))
        (a_t, p_t), (a_r, p_r) = got
        if a_t.dtype != np.float32 or a_t.shape != a_r.shape or p_t.shape != p_r.shape or \
                not a_t.size or not (np.isfinite(a_t).all() and np.isfinite(a_r).all()):
            return False
        eps = float(np.finfo(np.float32).eps)
        shape = (-1,) + a_t.shape[-2:]
        errs, bounds = [], []
        for a, p in ((a_t, p_t), (a_r, p_r)):
            a64 = a.astype(np.float64).reshape(shape)
            s = np.linalg.svd(a64, compute_uv=False)
            with np.errstate(divide="ignore"):
                cond = s[:, 0] / s[:, -1]
            exact = np.linalg.pinv(a64)
            scale = np.abs(exact).max(axis=(1, 2))
            errs.append(np.abs(p.reshape(exact.shape) - exact).max(axis=(1, 2)) / scale)
            bounds.append(np.where(cond * eps < 1, 4 * cond * eps, -1.0))
        differ = ~np.isclose(p_t, p_r, rtol=1e-4, atol=1e-6).reshape(shape).all(axis=(1, 2))
        (err_t, err_r), (bound_t, bound_r) = errs, bounds
        ok = (err_t <= bound_t) & (err_r <= bound_r) & (err_r <= err_t)
        return bool(differ.any() and ok[differ].all())
    return False


_MATRIX_EXP_STEP = re.compile(r"^(v\d+) = T\.linalg\.matrix_exp\((.+)\)$")


@accepted("PyTorch's matrix_exp backward with a huge incoming gradient G: it exponentiates "
          "the block [[A^T, G], [0, A^T]], whose norm G then dominates, and loses the "
          "gradient's digits (not linear in G: at max|G| = 1.9e28 it gives 4.6e28 where "
          "2^k times its own result at G / 2^k is 1.0e30); retrograd scales G to about 1 "
          "first (7c00f83) and is linear (seed 20078349, matrix_exp then expm1_ under "
          "create_graph: loss2 4.4e29 against 7.4e30).  Only a gradient (or a value made "
          "from one: loss2, gs) in a program with a float64 matrix_exp whose incoming "
          "gradient in PyTorch's run (a hook's) makes PyTorch's derivative 1e-6 or more "
          "(relative) off 2^k times its derivative at G / 2^k (max|G / 2^k| about 1), and "
          "retrograd's derivative at the same A and G within 1e-9 of that")
def _matrix_exp_backward_of_huge_gradient(prog, failure):
    name = failure.message.split(":", 1)[0]
    if not (failure.kind == "grad" or (failure.kind == "value" and (
            "loss2" in (failure.op, name) or name.startswith("gs[")))):
        return False
    if not any("matrix_exp(" in t for t in _texts(prog)):
        return False
    import dataclasses
    import math

    import numpy as np

    import retrograd

    from .program import Program  # (the runner imports this module)
    from .runner import execute, torch

    for j, st in enumerate(prog.steps):
        m = _MATRIX_EXP_STEP.match(st.text or "")
        if not m or st.target != m.group(1):
            continue
        _, ns = execute(Program(prog.seed, prog.steps[:j]), torch)
        try:
            a = eval(m.group(2), dict(ns))  # noqa: S307 - the fuzzer's own statement text
        except Exception:  # noqa: BLE001 - a statement that raises: another failure
            continue
        if not isinstance(a, torch.Tensor) or a.dtype != torch.float64 or not a.requires_grad:
            continue
        hook = dataclasses.replace(
            st, op="register_hook", kind="", leaf=None, view_chain=(), on=None, target=None,
            text=f"{m.group(1)}.register_hook(lambda g: LOG.append(('G', g.detach().clone())))")
        _, ns = execute(Program(prog.seed, prog.steps[:j + 1] + [hook] + prog.steps[j + 1:]),
                        torch)
        caught = [g for tag, *rest in ns["LOG"] if tag == "G" for g in rest]
        if not caught or not bool(caught[0].isfinite().all()):
            continue
        g = caught[0]
        top = float(g.abs().max())
        if top == 0:
            continue
        k = 2.0 ** -math.ceil(math.log2(top))
        x = a.detach().requires_grad_(True)
        y = torch.linalg.matrix_exp(x)
        (at_g,) = torch.autograd.grad(y, x, g, retain_graph=True)
        (scaled,) = torch.autograd.grad(y, x, g * k)
        want = (scaled / k).numpy()
        xr = retrograd.tensor(a.detach().numpy(), requires_grad=True)
        (ours,) = retrograd.autograd.grad(retrograd.linalg.matrix_exp(xr), xr,
                                          retrograd.tensor(g.numpy()))
        size = float(np.abs(want).max())
        if not (np.isfinite(want).all() and size > 0):
            continue
        if np.abs(at_g.numpy() - want).max() >= 1e-6 * size and \
                np.abs(ours.numpy() - want).max() <= 1e-9 * size:
            return True
    return False


# ------------------------------------------------ real24 (stop 24): dist(p=1)'s sgn ZeroTensor
def _dist_p1_as_where(line):
    """``line`` with each call ``T.dist(X, Y, p=1)`` (or ``X.dist(Y, 1)``) replaced by
    ``T.where(D != D, D.detach(), D * D.sign()).sum()``, D = ``(X - Y)``: the same value (nan
    where D is nan) and first derivative (sgn(D) * g, 0 at nan: no gradient through the
    detached branch), but sign's derivative is real zeros in PyTorch too.  None when the line
    has no such call or does not parse alone."""
    import ast

    def is_one(node):
        return isinstance(node, ast.Constant) and type(node.value) in (int, float) and \
            node.value == 1

    class Rewrite(ast.NodeTransformer):
        changed = False

        def visit_Call(self, node):
            self.generic_visit(node)
            f = node.func
            if not (isinstance(f, ast.Attribute) and f.attr == "dist"):
                return node
            args = list(node.args)
            if not (isinstance(f.value, ast.Name) and f.value.id == "T"):
                args = [f.value] + args  # X.dist(Y, ...)
            p = [k.value for k in node.keywords if k.arg == "p"]
            if len(node.keywords) != len(p) or len(args) + len(p) != 3:
                return node
            if not is_one(p[0] if p else args[2]) or len(args) < 2:
                return node
            d = ast.BinOp(args[0], ast.Sub(), args[1])
            self.changed = True
            return _call(_call(ast.Name("T", ast.Load()), "where",
                               ast.Compare(d, [ast.NotEq()], [d]), _call(d, "detach"),
                               ast.BinOp(d, ast.Mult(), _call(d, "sign"))), "sum")

    if "dist(" not in line:
        return None
    try:
        tree = ast.parse(line.strip())
    except SyntaxError:
        return None
    rw = Rewrite()
    tree = ast.fix_missing_locations(rw.visit(tree))
    if not rw.changed:
        return None
    return line[:len(line) - len(line.lstrip())] + ast.unparse(tree)


@accepted("dist(x, y, p=1)'s derivative is PyTorch's norm_backward, (x - y).sgn() * grad, "
          "and sgn's derivative on a real tensor is a ZeroTensor (the _sgn_zero_tensor entry "
          "above): under create_graph the second backward sends a ZeroTensor back into the "
          "ops before dist, whose formulas keep it, so a 0 / 0 there stays 0 in PyTorch and "
          "is nan in retrograd (real zeros, as PyTorch's own result for a real zero "
          "gradient): index_reduce amax's grad / N_to_distribute with N = 0 at a nan "
          "(seed 20097973, v7.grad).  Only a create_graph program with dist(..., p=1) whose "
          "failure is nan in retrograd where PyTorch has a number, and which agrees in the "
          "two libraries once each such dist is written where(D != D, D.detach(), D * "
          "D.sign()).sum() (the same value and first derivative; real zeros in both)")
def _dist_p1_sgn_zero_tensor(prog, failure):
    texts = _texts_all(prog)
    if not any("create_graph=True" in t for t in texts) or \
            failure.kind not in ("grad", "value", "log") or \
            not _nan_where_torch_has_a_number(failure):
        return False
    return _agrees_when_source_rewritten(prog, lambda src: "\n".join(
        _dist_p1_as_where(line) or line for line in src.split("\n")))


# ------------------------------------------ cpu24 (stop 24): det's double backward at rank <= n-2
def _leibniz_text(m, n):
    """The determinant of the matrices ``m`` (..., n, n) as its Leibniz polynomial: a sum of
    products whose derivatives of every order are finite (no LU, no SVD)."""
    import itertools

    terms = []
    for p in itertools.permutations(range(n)):
        odd = sum(p[i] > p[k] for i in range(n) for k in range(i + 1, n)) % 2
        prod = " * ".join(f"{m}[..., {i}, {j}]" for i, j in enumerate(p))
        terms.append(("- " if odd else "+ ") + prod)
    return " ".join(terms).removeprefix("+ ")


def _named_grad(ns, name):
    """The gradient the runner names ``v3.grad`` or ``gs[0]`` in a run's namespace."""
    m = re.fullmatch(r"(v\d+)\.grad|gs\[(\d+)\]", name)
    if m is None:
        return None
    if m.group(1):
        t = ns.get(m.group(1))
        return getattr(t, "grad", None)
    gs = ns.get("gs")
    return gs[int(m.group(2))] if gs is not None and int(m.group(2)) < len(gs) else None


@accepted("PyTorch 2.13's det double backward is NaN at a matrix of rank <= n-2 whose SVD "
          "(MKL's) returns the zero singular values exactly equal: its singular path takes "
          "the cofactors through the SVD, whose backward divides by s_i^2 - s_j^2 (seed "
          "19734708: det(v0 @ v0.mT) of a 3x3 rank-1 Gram matrix, autograd.grad "
          "create_graph then backward; v0.grad nan against retrograd's 0, the exact value: "
          "det(v v^T) is identically 0 for a 3x3, and det is a polynomial, so no derivative "
          "of it is NaN).  retrograd follows the same formula through NumPy's SVD, which on "
          "an AMD EPYC with AVX-512 (OpenBLAS 0.3.31, SkylakeX kernels) gives singular "
          "values [0.2705, 3.4e-20, 0], distinct, so finite; with OpenBLAS's Haswell kernels "
          "(OPENBLAS_CORETYPE=Haswell there) it gives [0.2705, 0, 0] and NaN too, and the "
          "seed replays clean, as it did on the CPU main ran on before.  Only a grad "
          "failure where PyTorch's gradient is NaN at every element that differs and "
          "retrograd's is finite everywhere, in a "
          "program with a det statement (linalg.det, .det()) of a 2x2..4x4 float matrix of "
          "numerical rank <= n-2 (its adjugate, the first derivative, exactly 0) in PyTorch's "
          "run; checked by rerunning with each such det written as its Leibniz polynomial in "
          "both libraries, which must then agree in everything compared, with PyTorch's "
          "gradient there equal to retrograd's in the original run")
def _det_double_backward_nan_at_rank_deficit(prog, failure):
    if failure.kind != "grad":
        return False
    import numpy as np

    import retrograd

    from .program import Program  # (the runner imports this module)
    from .runner import _arr, compare_tensors, execute, torch

    # det statements of a matrix of numerical rank <= n-2, in PyTorch's run
    deficient = []
    for j, st in enumerate(prog.steps):
        m = _DET_STEP.match(st.text or "")
        if not m or st.dyn is not None or st.target != m.group(1):
            continue
        _, ns = execute(Program(prog.seed, prog.steps[:j]), torch)
        try:
            a = eval(m.group(2) or m.group(3), dict(ns))  # noqa: S307 - the fuzzer's own text
        except Exception:  # noqa: BLE001 - a matrix that does not build: not this case
            continue
        if not isinstance(a, torch.Tensor) or not a.is_floating_point() or a.dim() < 2 or \
                not 2 <= a.shape[-1] == a.shape[-2] <= 4 or not a.numel() or \
                not bool(a.isfinite().all()):
            continue
        rank = torch.linalg.matrix_rank(a.detach().double())
        if bool((rank <= a.shape[-1] - 2).all()):
            deficient.append((j, st, m.group(2) or m.group(3), a.shape[-1]))
    if not deficient:
        return False
    # PyTorch's gradient NaN wherever the two differ, retrograd's finite everywhere
    name = failure.message.split(":", 1)[0]
    _, t_ns = execute(prog, torch)
    _, r_ns = execute(prog, retrograd)
    tg, rg = _named_grad(t_ns, name), _named_grad(r_ns, name)
    if tg is None or rg is None:
        return False
    t, r = _arr(tg).astype(np.float64), _arr(rg).astype(np.float64)
    if t.shape != r.shape or not np.isfinite(r).all() or not np.isnan(t).any():
        return False
    differ = ~np.isclose(t, r, rtol=1e-6, atol=1e-9, equal_nan=True)
    if not np.isnan(t[differ]).all():
        return False
    # the rerun: each such det as its Leibniz polynomial in both libraries
    rewrite = {j: [_added(st, "det_operand", f"{st.target} = {expr}"),
                   _added(st, "det_leibniz", f"{st.target} = {_leibniz_text(st.target, n)}")]
               for j, st, expr, n in deficient}
    if not _agrees_when_rewritten(prog, rewrite, differs=False):
        return False
    _, e_ns = execute(_rewritten(prog, rewrite), torch)
    exact = _named_grad(e_ns, name)
    return exact is not None and np.isfinite(_arr(exact)).all() and \
        compare_tensors(exact, rg, name, False) is None


# ------------------------------------------------------------ hunt24 (stop 24)
_CORRCOEF_STEP = re.compile(r"^(v\d+) = T\.corrcoef\(")


@accepted("corrcoef at +-1, clamp's kink: a correlation that is exactly +-1 in exact "
          "arithmetic (the diagonal; any two rows of two observations) comes out 1 or 2 ulp "
          "either side of it, as the matrix product rounds cov (NumPy's BLAS fuses the "
          "multiply-add: 0.04205, where PyTorch's a*a + b*b rounds twice: "
          "0.04204999999999999), so clamp(-1, 1) cuts the "
          "gradient in one library (1.0000000000000002: 0) and passes rounding noise in the "
          "other (1.0: 1e-15; the exact gradient is 0), and a pole downstream (logit's at 1: "
          "inf * noise) makes a nan of it (seed 20235569).  Checked, not assumed: corrcoef's "
          "result has entries within 8 ulp of +-1 in both libraries, and the program run "
          "again with the gradient into those entries cut in both (a hook on the result) must "
          "agree in everything compared")
def _corrcoef_gradient_at_unit_correlation(prog, failure):
    if failure.kind not in ("value", "grad", "log"):
        return False
    import numpy as np

    import retrograd

    from .program import Program  # (the runner imports this module)
    from .runner import execute, torch

    for j, st in enumerate(prog.steps):
        m = _CORRCOEF_STEP.match(st.text or "")
        if not m or st.dyn is not None or st.target != m.group(1):
            continue
        v = st.target
        near = []
        for lib in (torch, retrograd):
            t = execute(Program(prog.seed, prog.steps[:j + 1]), lib)[1].get(v)
            if t is None or not hasattr(t, "detach") or \
                    str(t.dtype).rsplit(".", 1)[-1] not in ("float64", "float32"):
                break
            a = np.asarray(t.detach().numpy())
            eps = float(np.finfo(a.dtype).eps)
            with np.errstate(invalid="ignore"):
                near.append((np.abs(np.abs(a) - 1) <= 8 * eps, 1 - 8 * eps))
        if len(near) != 2 or not (near[0][0].any() and near[1][0].any()):
            continue
        bound = near[0][1]
        cut = _added(st, "kink_cut", f"{v}.register_hook(lambda g, m={v}.detach().abs() >= "
                     f"{bound!r}: g.masked_fill(m, 0.0))", target=None, ctx=None)
        if _agrees_when_rewritten(prog, {j: [st, cut]}):
            return True
    return False


_REMAINDER_OF_NAME = re.compile(
    r"(?:^|=\s*)(?:\(?(v\d+)\)?\.(?:remainder|fmod)_?\(|\((v\d+)\) % |"
    r"T\.(?:remainder|fmod)\((v\d+),)")


@accepted("remainder/fmod of a dividend 1 or 2 ulp apart in the two libraries from rounding "
          "upstream, where an ulp of it is a good part of the divisor: the remainder moves "
          "by those ulps, anywhere in [0, divisor) (seed 20267782: float_power 28.33 ** "
          "28.83 is 7.383609899708221e+41 in PyTorch, 0.46 ulp from the exact value, and "
          "7.38360989970822e+41 in NumPy's pow (retrograd's), 0.54 ulp from it: both "
          "faithful, 1 ulp (1.5e+26) apart, so remainder_ by 28.83 is 5.65 against 24.60).  "
          "Checked, not assumed: the dividend (a name) is finite and "
          "within 2 ulp in both libraries just before the statement, and the program run "
          "again with it set to PyTorch's values in both (v.add_((PyTorch's - v).detach()), "
          "exact within a factor 2) must agree in everything compared")
def _remainder_of_ulps_apart_dividend(prog, failure):
    if failure.kind != "value":
        return False
    import numpy as np

    import retrograd

    from .program import Program  # (the runner imports this module)
    from .runner import execute, torch

    for j, st in enumerate(prog.steps):
        m = _REMAINDER_OF_NAME.search(st.text or "") if st.dyn is None else None
        if not m:
            continue
        v = next(g for g in m.groups() if g)
        got = []
        for lib in (torch, retrograd):
            t = execute(Program(prog.seed, prog.steps[:j]), lib)[1].get(v)
            if t is None or not hasattr(t, "is_floating_point") or not t.is_floating_point():
                break
            got.append(np.asarray(t.detach().numpy()))
        if len(got) != 2 or got[0].shape != got[1].shape or got[0].dtype != got[1].dtype:
            continue
        xt, xr = got
        if not (np.isfinite(xt).all() and np.isfinite(xr).all()) or \
                np.array_equal(xt, xr) or \
                not (np.abs(xt - xr) <= 2 * np.spacing(np.abs(xt))).all():
            continue
        to_torch = _added(st, "ulps_aligned", f"{v}.add_((T.tensor({xt.tolist()!r}, "
                          f"dtype={v}.dtype) - {v}).detach())", target=None)
        if _agrees_when_rewritten(prog, {j: [to_torch, st]}):
            return True
    return False


def _call_argument(text, call):
    """The argument text of the first ``call(...)`` in ``text`` (balanced parentheses)."""
    at = text.find(call)
    if at < 0:
        return None
    start = depth = at + len(call)
    depth = 1
    for k in range(start, len(text)):
        depth += {"(": 1, ")": -1}.get(text[k], 0)
        if depth == 0:
            return text[start:k]
    return None


@accepted("qr's derivative at a rank-deficient matrix (undefined there: PyTorch's docs ask "
          "for independent columns): R's diagonal is 0 in exact arithmetic, LAPACK's "
          "rounding gives an exact 0.0 in one library and noise (-1.2e-16) in the other, and "
          "qr's backward, a triangular solve with R, gives nan from the exact 0 and finite "
          "numbers from the noise (seed 20275033: dstack([v1, v1]), two equal columns; "
          "retrograd gives nan as PyTorch when its R has the exact 0 too).  Checked, not "
          "assumed: the qr operand is rank-deficient (a singular value within 64 n eps of "
          "its largest entry), one library's R has an exact-0 diagonal entry where the "
          "other's is nonzero noise within that bound, that library's gradient is non-finite "
          "at every element that differs, and the program run again with the operand "
          "detached (no gradient through qr) agrees in everything compared")
def _qr_gradient_at_rank_deficiency(prog, failure):
    if failure.kind != "grad":
        return False
    got = _failure_arrays(failure)
    if got is None:
        return False
    import dataclasses

    import numpy as np
    import torch

    import retrograd

    from .program import Program  # (the runner imports this module)
    from .runner import execute

    _, grad_t, grad_r = got
    with np.errstate(invalid="ignore"):
        differ = ~np.isclose(grad_t, grad_r, rtol=1e-6, atol=1e-8, equal_nan=True)
    for j, st in enumerate(prog.steps):
        arg = _call_argument(st.text or "", "T.linalg.qr(") if st.dyn is None else None
        if not arg:
            continue
        diag, mats = [], []
        for lib in (torch, retrograd):
            ns = dict(execute(Program(prog.seed, prog.steps[:j]), lib)[1])
            try:
                a = eval(arg, ns)  # noqa: S307 - the fuzzer's own statement text
                r = lib.linalg.qr(a.detach())[1]
            except Exception:  # noqa: BLE001 - an operand that does not build: not this case
                break
            mats.append(np.asarray(a.detach().numpy(), dtype=np.float64))
            diag.append(np.diagonal(np.asarray(r.numpy()), axis1=-2, axis2=-1))
        if len(diag) != 2 or mats[0].shape != mats[1].shape or \
                not np.isfinite(mats[0]).all() or not mats[0].size:
            continue
        a = mats[0]
        eps = float(np.finfo(diag[0].dtype).eps)
        bound = 64 * max(a.shape[-2:]) * eps * float(np.abs(a).max())
        if not (np.linalg.svd(a, compute_uv=False)[..., -1] <= bound).all():
            continue
        zero_in = [(d == 0) & (np.abs(o) > 0) & (np.abs(o) <= bound)
                   for d, o in ((diag[0], diag[1]), (diag[1], diag[0]))]
        if not differ.any() or not any(z.any() for z in zero_in):
            continue
        exact = grad_t if zero_in[0].any() else grad_r
        if np.isfinite(exact[differ]).any():
            continue
        cut = dataclasses.replace(st, text=st.text.replace(f"T.linalg.qr({arg})",
                                                           f"T.linalg.qr(({arg}).detach())"))
        if _agrees_when_rewritten(prog, {j: [cut]}):
            return True
    return False


_AFFINE_NORM_STEP = re.compile(r"^(v\d+) = T\.nn\.functional\.(group_norm|batch_norm|"
                               r"instance_norm)\(.*(weight|bias)=")


@accepted("an affine group_norm/batch_norm/instance_norm over a group of equal values (x - "
          "mean is 0, var 0, rstd = 1/sqrt(eps) = 316): PyTorch's CPU kernel computes x * "
          "scale + (b - mean * scale) fused, leaving the rounding residue of mean * scale "
          "(-4.4e-15 for x = mean = 0.31, w = -1), retrograd the exact 0 (as the values "
          "entry _group_norm_fma_residue and the sign entry _norm_fma_residue_sign say); a "
          "kink downstream (abs'(0) = 0 against abs'(-4e-15) = -1) or a pole turns it into a "
          "different gradient or value (seed 20307546: log2(|v5| + 0.5), bias.grad 2.197 "
          "against 0).  Checked, not assumed: PyTorch's output holds a nonzero element "
          "within 8 ulp of max|x| * max(1, |w|) * 316 of 0 where retrograd's is exactly 0, "
          "and the program run again with every element within that bound set to exactly 0 "
          "in both (its graph kept) agrees in everything compared")
def _affine_norm_residue_downstream(prog, failure):
    if failure.kind not in ("value", "grad", "log"):
        return False
    import numpy as np

    import retrograd

    from .program import Program  # (the runner imports this module)
    from .runner import execute, torch

    for j, st in enumerate(prog.steps):
        m = _AFFINE_NORM_STEP.match(st.text or "") if st.dyn is None else None
        if not m or st.target != m.group(1):
            continue
        v = st.target
        operands = [o for o in _operands_before(prog, j) if o.is_floating_point()]
        outs = [execute(Program(prog.seed, prog.steps[:j + 1]), lib)[1].get(v)
                for lib in (torch, retrograd)]
        if len(operands) < 2 or any(o is None or not hasattr(o, "detach") for o in outs):
            continue
        yt, yr = (np.asarray(o.detach().numpy(), dtype=np.float64) for o in outs)
        if yt.shape != yr.shape or not operands[0].numel():
            continue
        ulp = float(np.finfo(str(operands[0].dtype).rsplit(".", 1)[-1]).eps)
        big = max(1.0, float(operands[0].detach().double().abs().max()))
        scale = max(1.0, max(float(o.detach().double().abs().max()) if o.numel() else 0.0
                             for o in operands[1:]))
        bound = 8 * ulp * big * scale / 1e-5 ** 0.5
        residue = (yt != 0) & (np.abs(yt) <= bound) & (yr == 0)
        if not residue.any():
            continue
        zeroed = _added(st, "residue_zeroed", f"{v} = {v} - {v}.detach().masked_fill("
                        f"{v}.detach().abs() > {bound!r}, 0.0)")
        if _agrees_when_rewritten(prog, {j: [st, zeroed]}):
            return True
    return False


_EXTREMUM_OF_NAMES = re.compile(r"\((v\d+)\)\.(maximum|minimum|fmax|fmin)\((v\d+)\)|"
                                r"\bT\.(maximum|minimum|fmax|fmin)\((v\d+), (v\d+)\)")


@accepted("maximum/minimum (fmax/fmin) of two operands equal in exact arithmetic and apart "
          "by rounding noise that differs between the libraries (seed 20275033: Q @ R of a "
          "qr against its operand, LAPACK's noise up to 1.8e-15 either way): which operand "
          "wins, or whether they tie (the gradient split in halves), is decided by that "
          "noise.  Checked, not assumed: both operands are floating names, at every element "
          "where the libraries order them otherwise they are within 16 eps of the larger "
          "operand's largest entry in both, and the program run again with those near-ties "
          "made exact ties in both (a + (where(|a - b| <= bound, b, a) - a).detach()) "
          "agrees in everything compared")
def _extremum_of_noise_apart_operands(prog, failure):
    if failure.kind not in ("value", "grad", "log"):
        return False
    import dataclasses

    import numpy as np

    import retrograd

    from .program import Program  # (the runner imports this module)
    from .runner import execute, torch

    for j, st in enumerate(prog.steps):
        m = _EXTREMUM_OF_NAMES.search(st.text or "") if st.dyn is None else None
        if not m:
            continue
        a, b = (m.group(1), m.group(3)) if m.group(1) else (m.group(5), m.group(6))
        pairs = []
        for lib in (torch, retrograd):
            ns = execute(Program(prog.seed, prog.steps[:j]), lib)[1]
            x, y = ns.get(a), ns.get(b)
            if not all(hasattr(t, "is_floating_point") and t.is_floating_point()
                       for t in (x, y)):
                break
            try:
                pairs.append(np.broadcast_arrays(np.asarray(x.detach().numpy(), np.float64),
                                                 np.asarray(y.detach().numpy(), np.float64)))
            except ValueError:
                break
        if len(pairs) != 2 or pairs[0][0].shape != pairs[1][0].shape or not pairs[0][0].size:
            continue
        (xt, yt), (xr, yr) = pairs
        if not all(np.isfinite(t).all() for t in (xt, yt, xr, yr)):
            continue
        eps = float(np.finfo(str(execute(Program(prog.seed, prog.steps[:j]), torch)[1][a]
                                  .dtype).rsplit(".", 1)[-1]).eps)
        bound = 16 * eps * max(float(np.abs(xt).max()), float(np.abs(yt).max()))
        order = np.sign(xt - yt) != np.sign(xr - yr)
        near = (np.abs(xt - yt) <= bound) & (np.abs(xr - yr) <= bound)
        if not order.any() or not near[order].all():
            continue
        tied = f"({a} + (T.where(({a} - {b}).abs() <= {bound!r}, {b}, {a}) - {a}).detach())"
        text = st.text[:m.start()] + m.group(0).replace(
            f"({a})." if m.group(1) else f"({a}, ", f"({tied})." if m.group(1) else
            f"({tied}, ", 1) + st.text[m.end():]
        if _agrees_when_rewritten(prog, {j: [dataclasses.replace(st, text=text)]}):
            return True
    return False


_ORDER_STAT_OF_NAME = re.compile(r"\b(v\d+)\.(quantile|nanquantile|median|nanmedian|msort)\(")


@accepted("ties in quantile/nanquantile/median/nanmedian/msort (as _ties for sort/topk): "
          "they sort their input with PyTorch's unstable sort, so which of equal values "
          "takes the selected rank, and gets the gradient, is unspecified (seed 20346790: "
          "quantile(0.0, interpolation='higher') of a cat holding -1.0 three times: PyTorch's "
          "gradient goes to the last, retrograd's to the first).  Checked, not assumed: a "
          "gradient or hook-log difference only, the op's input (a name) holds equal values, "
          "and the program run again with that input detached in the op (no gradient "
          "through it) agrees in everything compared")
def _order_statistic_ties(prog, failure):
    if failure.kind not in ("grad", "log"):
        return False
    import dataclasses

    for j, st in enumerate(prog.steps):
        m = _ORDER_STAT_OF_NAME.search(st.text or "") if st.dyn is None else None
        if not m or not _operand_has_ties(prog, j):
            continue
        v = m.group(1)
        text = st.text[:m.start()] + f"{v}.detach().{m.group(2)}(" + st.text[m.end():]
        if _agrees_when_rewritten(prog, {j: [dataclasses.replace(st, text=text)]}):
            return True
    return False


_COPYSIGN_BY_NAME = re.compile(r"\bT\.copysign\(v\d+, (v\d+)\)|\(?v\d+\)?\.copysign_?\((v\d+)\)")


@accepted("the sign of a NaN (as _nan_sign) carried on past the copysign: x86's default NaN "
          "(sqrt/pow/log out of the domain in NumPy) has its sign bit set, PyTorch's kernels "
          "give +nan, so copysign(x, nan) is -|x| in one library and +|x| in the other, and "
          "what is computed from it differs in value (seed 20327138: scatter_add_ into it).  "
          "Checked, not assumed: copysign's sign operand (a name) holds NaNs whose sign bits "
          "differ between the libraries, and the program run again with those NaNs made "
          "+nan in both (where(isnan(s), s.abs(), s)) agrees in everything compared")
def _nan_sign_carried_on(prog, failure):
    if failure.kind not in ("value", "grad", "log"):
        return False
    import dataclasses

    import numpy as np

    import retrograd

    from .program import Program  # (the runner imports this module)
    from .runner import execute, torch

    for j, st in enumerate(prog.steps):
        m = _COPYSIGN_BY_NAME.search(st.text or "") if st.dyn is None else None
        if not m:
            continue
        s = m.group(1) or m.group(2)
        signs = []
        for lib in (torch, retrograd):
            t = execute(Program(prog.seed, prog.steps[:j]), lib)[1].get(s)
            if t is None or not hasattr(t, "is_floating_point") or not t.is_floating_point():
                break
            signs.append(np.asarray(t.detach().numpy()))
        if len(signs) != 2 or signs[0].shape != signs[1].shape:
            continue
        nan = np.isnan(signs[0]) & np.isnan(signs[1])
        if not (nan & (np.signbit(signs[0]) != np.signbit(signs[1]))).any():
            continue
        plain = f"T.where({s}.isnan(), {s}.abs(), {s})"
        text = st.text[:m.start()] + m.group(0).replace(f"{s})", f"{plain})") + \
            st.text[m.end():]
        if _agrees_when_rewritten(prog, {j: [dataclasses.replace(st, text=text)]}):
            return True
    return False


# ------------------------------------------------------------ hunt24b (stop 24): 20400000+
_TIE_SPLITTING = re.compile(r"\b(v\d+)\.(amax|amin|max|min)\(")
_TIE_SPLITTING_FN = re.compile(r"\bT\.(amax|amin|max|min)\((v\d+)")


@accepted("the gradient of amax/amin (max/min) split among values PyTorch 2.13's vectorized "
          "float64 kernels round 1 ulp apart by position: exp2(0.5) of 18 equal inputs is "
          "1.414213562373095 in the vector lanes and 1.4142135623730951 in the scalar tail "
          "(elements 16, 17), so a row of equal values in retrograd (gradient split three "
          "ways, 0.2961 each) has one larger value in PyTorch (split between the two tail "
          "values, 0.4442 each; seed 20441244, a hook's log on exp2's output).  Only a grad "
          "or hook-log failure of a program with an amax/amin/max/min statement whose float64 "
          "operand, in PyTorch's run, holds two distinct values within 4 ulp of each other, "
          "where the program agrees once each such operand is rounded to float32 (and back) "
          "in both libraries")
def _tie_split_position_rounding(prog, failure):
    import numpy as np

    if failure.kind not in ("grad", "log"):
        return False
    near = False
    for i, st in enumerate(prog.steps):
        if not st.text or not (_TIE_SPLITTING.search(st.text) or
                               _TIE_SPLITTING_FN.search(st.text)):
            continue
        operands = _operands_before(prog, i)
        if not operands or str(operands[0].dtype) != "torch.float64":
            continue
        x = np.unique(operands[0].numpy().ravel())
        x = x[np.isfinite(x)]
        if x.size >= 2 and (np.diff(x) <= 4 * np.spacing(np.abs(x[:-1]))).any():
            near = True
            break
    if not near:
        return False

    def snapped(src):
        src = _TIE_SPLITTING.sub(r"\1.float().double().\2(", src)
        return _TIE_SPLITTING_FN.sub(r"T.\1(\2.float().double()", src)
    return _agrees_when_source_rewritten(prog, snapped)


_SIGMOID_CALL = re.compile(r"\.sigmoid\(\)")


@accepted("float32 sigmoid 1 ulp off in PyTorch 2.13 (its vectorized exp), amplified by "
          "logit's pole near 1 and passed on (as _sigmoid_float32_rounding_at_logit, but "
          "met downstream of the logit): sigmoid(8.7543) is 0.99984217 in PyTorch, "
          "0.99984223 (the correctly rounded value) in retrograd, so logit of it is 8.75457 "
          "against 8.75419 and i0 of that 867.88 against 867.58 (seed 20463632).  Only a "
          "value or gradient of a program with both sigmoid and logit, whose every .sigmoid() "
          "operand is float32 (PyTorch's run), that agrees once each .sigmoid() is computed "
          "in float64 and rounded to float32 in both libraries, where that leaves "
          "retrograd's value (or gradient) of the failing name unchanged")
def _sigmoid_float32_rounding_downstream(prog, failure):
    import numpy as np

    if failure.kind not in ("value", "grad") or not any(
            re.search(r"\blogit_?\(", src) for src in _texts_all(prog)):
        return False
    name = failure.message.split(":", 1)[0]
    found = False
    for i, st in enumerate(prog.steps):
        if st.text and _SIGMOID_CALL.search(st.text):
            operands = _operands_before(prog, i)
            if not operands or str(operands[0].dtype) != "torch.float32":
                return False
            found = True
    if not found:
        return False
    source = prog.source()
    snapped = _SIGMOID_CALL.sub(".double().sigmoid().float()", source)
    import retrograd

    from .program import program_from_text
    from .runner import _arr, compare, execute  # (the runner imports this module)

    edited = program_from_text(snapped, prog.seed)
    if compare(edited) is not None:
        return False
    got = []
    for p in (prog, edited):
        _, ns = execute(p, retrograd)
        t = _named_grad(ns, name) if failure.kind == "grad" else ns.get(name)
        if t is None:
            return False
        got.append(np.asarray(_arr(t)))
    return got[0].shape == got[1].shape and np.array_equal(got[0], got[1], equal_nan=True)


_FRAC_STEP = re.compile(r"^(v\d+) = (?:T\.frac\((v\d+)\)|\(?(v\d+)\)?\.frac\(\))$")


@accepted("float64 frac of a large value that an elementary function rounds 1 ulp "
          "otherwise in NumPy's libm than in PyTorch's kernels: frac is exact, so the 1-ulp "
          "difference of its operand is its result's absolute difference, beyond the "
          "tolerance of a small fraction (exp(25) is 72004899337.38588 in PyTorch, "
          "72004899337.38586 in NumPy, the exact value 72004899337.3858725: 0.49 and 0.82 "
          "ulp off, both faithful; frac 0.3858795 against 0.3858643; seed 20496124).  Only "
          "a frac statement's value in a program with a float64 elementary function call, "
          "where at every element that differs the two libraries' float64 operands lie within "
          "2 ulp of each other and each library's result is its own operand's exact frac")
def _frac_of_large_value_one_ulp(prog, failure):
    import numpy as np

    if failure.kind != "value" or not any(_ELEMENTARY_CALL.search(t) for t in _texts_all(prog)):
        return False
    import retrograd

    from .program import Program  # (the runner imports this module)
    from .runner import _arr, execute, torch

    name = failure.message.split(":", 1)[0]
    for i, st in enumerate(prog.steps):
        m = _FRAC_STEP.match(st.text or "")
        if m is None or m.group(1) != name or st.target != name or st.dyn is not None:
            continue
        operand = m.group(2) or m.group(3)
        xs, outs = [], []
        for lib in (torch, retrograd):
            ns = execute(Program(prog.seed, prog.steps[:i + 1]), lib)[1]
            x = execute(Program(prog.seed, prog.steps[:i]), lib)[1].get(operand)
            out = ns.get(name)
            if x is None or out is None or not str(x.dtype).endswith("float64"):
                return False
            xs.append(np.asarray(_arr(x), dtype=np.float64))
            outs.append(np.asarray(_arr(out), dtype=np.float64))
        (xt, xr), (a, b) = xs, outs
        if not (xt.shape == xr.shape == a.shape == b.shape):
            return False
        differ = ~np.isclose(a, b, rtol=1e-7, atol=1e-9, equal_nan=True)
        if not differ.any():
            return False
        xt, xr, a, b = xt[differ], xr[differ], a[differ], b[differ]
        return bool(np.isfinite(xt).all() and np.isfinite(xr).all() and
                    (np.abs(xt - xr) <= 2 * np.spacing(np.abs(xt))).all() and
                    (a == xt - np.trunc(xt)).all() and (b == xr - np.trunc(xr)).all())
    return False


@accepted("sgn's ZeroTensor derivative (see _sgn_zero_tensor) reaching group_norm's "
          "backward: PyTorch 2.13's native_group_norm_backward reads the ZeroTensor's "
          "unallocated memory, so the input's gradient is uninitialized memory (1.2e-99, "
          "-4.2e-309, 3e78..., another each run) where the true gradient, retrograd's, is 0 "
          "(seed 20522057: group_norm(v0, 1).sgn_() then masked_fill, backward).  Only a "
          "gradient failure of a program with sgn and group_norm that agrees in the two "
          "libraries once sgn is written sign (the same values and first derivatives, real "
          "zeros in both libraries)")
def _sgn_zero_tensor_into_group_norm(prog, failure):
    if failure.kind not in ("grad", "value", "log"):
        return False
    texts = _texts_all(prog)
    if not any(_SGN.search(t) for t in texts) or not any("group_norm(" in t for t in texts):
        return False
    create_graph = any("create_graph=True" in t for t in texts)
    return _agrees_when_source_rewritten(prog, lambda src: _without_sgn_nodes(src, create_graph))


def _digamma_in_float64(attr, x):
    """digamma(x) as x.double().digamma().float(): the correctly rounded float32 value."""
    return _call(_call(_call(x, "double"), attr), "float")


@accepted("PyTorch 2.13's float32 digamma near its positive root (x0 = 1.4616...) is about "
          "1e-5 relatively off (digamma(1.44) is -0.02114237 against the correctly rounded "
          "-0.021142613, retrograd's; mpmath -0.0211426138), and a division by it, then "
          "sinh, amplify that (sinh(44.46) 1.01838e19 against 1.01787e19; seed 20521904).  "
          "Only a value or gradient of a program whose every digamma statement reads a "
          "float32 tensor (PyTorch's run), that agrees once each digamma is computed in "
          "float64 and rounded to float32 in both libraries, where that leaves retrograd's "
          "value (or gradient) of the failing name unchanged")
def _digamma_float32_near_root(prog, failure):
    import numpy as np

    if failure.kind not in ("value", "grad"):
        return False
    name = failure.message.split(":", 1)[0]
    found = False
    for i, st in enumerate(prog.steps):
        if st.text and "digamma(" in st.text:
            operands = _operands_before(prog, i)
            if not operands or any(str(o.dtype) != "torch.float32" for o in operands):
                return False
            found = True
    if not found:
        return False
    import retrograd

    from .program import program_from_text
    from .runner import _arr, compare, execute  # (the runner imports this module)

    source = prog.source()
    snapped = _rewrite_calls(source, ("digamma",), _digamma_in_float64)
    if snapped == source:
        return False
    edited = program_from_text(snapped, prog.seed)
    if compare(edited) is not None:
        return False
    got = []
    for p in (prog, edited):
        _, ns = execute(p, retrograd)
        t = _named_grad(ns, name) if failure.kind == "grad" else ns.get(name)
        if t is None:
            return False
        got.append(np.asarray(_arr(t)))
    return got[0].shape == got[1].shape and np.array_equal(got[0], got[1], equal_nan=True)


# ------------------------------------------------ fin24b (stop 24): matrix_exp's double backward
def _matrix_exp_with_scaled_backward(torch):
    """torch.linalg.matrix_exp with PyTorch's own derivative (the upper right block of
    exp([[A^H, G], [0, A^H]])) taken at G / 2^k, 2^k about max|G|, and multiplied back: the
    same function and the same derivative (linear in G), digit for digit where G is small,
    and differentiable again the same way (create_graph)."""
    plain = torch.linalg.matrix_exp

    class ScaledBackward(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return plain(a)

        @staticmethod
        def backward(ctx, g):
            (a,) = ctx.saved_tensors
            top = g.detach().abs().amax(dim=(-2, -1), keepdim=True)
            scale = torch.where(top > 0, torch.exp2(torch.ceil(torch.log2(top))), 1.0)
            ah, n = a.mH, a.shape[-1]
            block = torch.cat([torch.cat([ah, g / scale], -1),
                               torch.cat([torch.zeros_like(ah), ah], -1)], -2)
            return ScaledBackward.apply(block)[..., :n, n:] * scale

    return ScaledBackward.apply


@accepted("PyTorch's matrix_exp derivative under create_graph with a huge incoming gradient "
          "G: the first backward exponentiates [[A^T, G], [0, A^T]], whose norm G dominates, "
          "and loses digits (1.7e-8 relative at max|G| about 1e10), which the second "
          "backward (differentiating that block exponential) amplifies: seed 20683912, "
          "matrix_exp -> xlogy -> cosh, v0.grad 3.4e-4 apart, where retrograd agrees with "
          "mpmath's exact derivative to 1e-14 (tests/fuzz/test_regressions_fin24b.py).  The "
          "first-order entry above (_matrix_exp_backward_of_huge_gradient) asks for a 1e-6 "
          "first-order error.  Only a gradient (or loss2 / gs) of a program with a "
          "T.linalg.matrix_exp, whose PyTorch run, repeated with matrix_exp's derivative "
          "taken at G scaled to about 1 and multiplied back (the same derivative, linear in "
          "G), gives retrograd's value of the failing name within 1e-9 (relative)")
def _matrix_exp_double_backward_of_huge_gradient(prog, failure):
    import numpy as np

    runs = _matrix_exp_scaled_runs(prog, failure, float32_only=False)
    if runs is None:
        return False
    _, fixed, ours = runs
    size = float(np.abs(fixed).max()) if fixed.size else 0.0
    return size > 0 and float(np.abs(ours - fixed).max()) <= 1e-9 * size


def _matrix_exp_scaled_runs(prog, failure, float32_only):
    """For a gradient (or loss2 / gs value) failure of a program with a T.linalg.matrix_exp:
    ``(named, fixed, ours)``: a function giving the failing name's value in a namespace (as
    a float64 array, or None; float32 values only with ``float32_only``), its value in
    PyTorch's run with matrix_exp's derivative taken at a scaled G
    (_matrix_exp_with_scaled_backward), and in retrograd's run; None where the failure is
    of another kind or a value is missing, of another shape or not finite."""
    name = failure.message.split(":", 1)[0]
    if not (failure.kind == "grad" or (failure.kind == "value" and (
            "loss2" in (failure.op, name) or name.startswith("gs[")))):
        return None
    if not any(_MATRIX_EXP_STEP.match(t) for t in _texts(prog)):
        return None
    import numpy as np

    import retrograd

    from .runner import _arr, execute, torch  # (the runner imports this module)

    def named(ns):
        t = _named_grad(ns, name) if failure.kind == "grad" else ns.get(name)
        if t is None or not hasattr(t, "detach") or (
                float32_only and "float32" not in str(t.dtype)):
            return None
        return np.asarray(_arr(t), dtype=np.float64)

    plain = torch.linalg.matrix_exp
    torch.linalg.matrix_exp = _matrix_exp_with_scaled_backward(torch)
    try:
        _, ns = execute(prog, torch)
    finally:
        torch.linalg.matrix_exp = plain
    fixed = named(ns)
    ours = named(execute(prog, retrograd)[1])
    if fixed is None or ours is None or fixed.shape != ours.shape or \
            not (np.isfinite(fixed).all() and np.isfinite(ours).all()):
        return None
    return named, fixed, ours


# ------------------------------------------------- fin24a (stop 24): det's signed zero
@accepted("the sign of an exactly zero det (a singular matrix: an exactly zero LU pivot): "
          "NumPy's det returns +0.0 there (sign 0 times exp(-inf)); PyTorch's is the pivots' "
          "parity times the product of the LU diagonal of A^T (A contiguous), whose sign "
          "follows its LAPACK's operation order: -0.0 for the rank-1 4x4 v @ v.mT, v = "
          "[2.84, 0.91, 0.49, -0.0] (seed 20609704, then read by atan2_).  Not matched by "
          "computing that product here: SciPy's LAPACK and retrograd's getrf each disagree "
          "with PyTorch's sign on 2-3% of small singular integer matrices.  Only a program "
          "with a det statement whose result holds a zero (in both libraries) of a different "
          "sign, checked by rerunning it with each det result plus 0.0 (-0.0 + 0.0 is +0.0, "
          "its graph kept) in both libraries, which must then agree in everything compared")
def _det_signed_zero(prog, failure):
    if failure.kind not in ("value", "grad"):
        return False
    import numpy as np

    import retrograd

    from .program import Program  # (the runner imports this module)
    from .runner import _arr, execute, torch

    rewrite = {}  # {step index: the steps in its place}
    for j in range(len(prog.steps) - 1, -1, -1):
        st = prog.steps[j]
        m = _DET_STEP.match(st.text or "")
        if not m or st.dyn is not None or st.target != m.group(1):
            continue
        got = [execute(Program(prog.seed, prog.steps[:j + 1]), lib)[1].get(st.target)
               for lib in (torch, retrograd)]
        if not all(isinstance(g, lib.Tensor) for g, lib in zip(got, (torch, retrograd))):
            continue
        t, r = (np.asarray(_arr(g)) for g in got)
        if t.shape != r.shape or not ((t == 0) & (r == 0) &
                                      (np.signbit(t) != np.signbit(r))).any():
            continue
        rewrite[j] = [st, _added(st, "zero_sign_dropped", f"{st.target} = {st.target} + 0.0")]
    return bool(rewrite) and _agrees_when_rewritten(prog, rewrite, differs=False)


# --------------------------------------- fin24a (stop 24): a norm's FMA residue amplified
_NORM_STEP = re.compile(r"^(v\d+) = T\.nn\.functional\.(batch_norm|instance_norm|group_norm)"
                        r"\((v\d+)(?:, (\d+))?")


def _norm_groups(st):
    """(groups of the normalized input as rows, the norm's target) of a batch_norm,
    instance_norm or group_norm-with-weight statement, else None."""
    m = _NORM_STEP.match(st.text or "")
    if not m or st.dyn is not None or st.target != m.group(1):
        return None
    fn = m.group(2)
    if fn == "instance_norm":
        return lambda x: x.reshape(x.shape[0] * x.shape[1], -1)
    if fn == "batch_norm":
        return lambda x: x.transpose(0, 1).reshape(x.shape[1], -1)
    if m.group(4) is None or not re.search(r"weight=|bias=", st.text):
        return None  # (group_norm without weight and bias gives exactly 0, as retrograd)
    groups = int(m.group(4))
    return lambda x: x.reshape(x.shape[0] * groups, -1)


@accepted("_batch_norm_fma_residue (and _group_norm_fma_residue) amplified downstream: "
          "instance_norm of an instance whose values are equal leaves PyTorch's FMA residue "
          "1.08e-14 (float64) where retrograd gives exactly 0, within the compared "
          "tolerance, but amax picks it and sqrt makes it 1.04e-7 (seed 20609468).  Only a "
          "program with such a norm statement (a group of equal values; both libraries' "
          "results within 2 ulp of max|x| * max(1, |w|) * rstd (plus max|b|) of each "
          "other), checked by rerunning it with every result of such a norm within that "
          "bound of 0 set to exactly 0 in both libraries (its graph kept), which must then "
          "agree in everything compared")
def _norm_fma_residue_amplified(prog, failure):
    if failure.kind not in ("value", "grad"):
        return False
    import numpy as np

    import retrograd

    from .program import Program  # (the runner imports this module)
    from .runner import _arr, execute, torch

    rewrite = {}  # {step index: the steps in its place}
    for j in range(len(prog.steps) - 1, -1, -1):
        st = prog.steps[j]
        groups = _norm_groups(st)
        if groups is None:
            continue
        operands = [o for o in _operands_before(prog, j) if o.is_floating_point()]
        if not operands or operands[0].dim() < 2 or operands[0].numel() == 0:
            continue
        got = [execute(Program(prog.seed, prog.steps[:j + 1]), lib)[1].get(st.target)
               for lib in (torch, retrograd)]
        if not all(isinstance(g, lib.Tensor) for g, lib in zip(got, (torch, retrograd))):
            continue
        t, r = (np.asarray(_arr(g), dtype=np.float64) for g in got)
        if t.shape != r.shape or not _fma_residue((t, r), operands, groups):
            continue
        ulp = float(np.finfo(str(operands[0].dtype).rsplit(".", 1)[-1]).eps)
        x, *rest = (o.double() for o in operands)
        w = float(rest[0].abs().max()) if rest and rest[0].numel() else 1.0
        b = float(rest[1].abs().max()) if len(rest) > 1 and rest[1].numel() else 0.0
        bound = 2 * ulp * (float(x.abs().max()) * max(1.0, w) / 1e-5 ** 0.5 + b)
        v = st.target
        rewrite[j] = [st, _added(st, "residue_zeroed", f"{v} = {v} - {v}.detach().masked_fill("
                                 f"{v}.detach().abs() > {bound!r}, 0.0)")]
    return bool(rewrite) and _agrees_when_rewritten(prog, rewrite, differs=False)


# ------------------------------------------ fin24a (stop 24): float32 cond's conditioning
_COND_STEP = re.compile(r"^(v\d+) = T\.linalg\.cond\((.+)\)$")


@accepted("float32 linalg.cond of an ill-conditioned matrix: its smallest singular value "
          "is only known to about n eps sigma_1 in float32, so cond = sigma_1 / sigma_n to "
          "a relative n eps cond; PyTorch's float32 SVD gives 447627.34 for a 3x3 matrix "
          "whose float64 cond is 448552.36, retrograd 448551.97 (its own float32 matrix, an "
          "ulp off upstream after exp of exp: float64 cond 448551.95; seed 20704027).  Only "
          "a cond statement (p left None) of a float32 matrix where, in each matrix whose "
          "cond differs, retrograd's cond is at least as near the float64 cond of its "
          "matrix as PyTorch's of its own, and PyTorch's is off by at most 4 n eps (1 + "
          "cond) relative (a perturbation of eps |A| moving sigma_1 and sigma_n); where the "
          "failure is elsewhere, checked by rerunning the program with each such cond "
          "computed in float64 and rounded to float32 in both libraries, which must then "
          "agree in everything compared (at the cond itself the two matrices may differ by "
          "an ulp upstream, which a cond near 1/eps amplifies past float32's tolerance even "
          "in float64: the replayed seed's cond 9.4e8, 2 ulp apart after exp of exp)")
def _float32_cond_conditioning(prog, failure):
    if failure.kind not in ("value", "grad"):
        return False
    import dataclasses

    import numpy as np

    import retrograd

    from .program import Program  # (the runner imports this module)
    from .runner import execute, torch

    rewrite = {}  # {step index: the steps in its place}
    for j in range(len(prog.steps) - 1, -1, -1):
        st = prog.steps[j]
        m = _COND_STEP.match(st.text or "")
        if not m or st.dyn is not None or st.target != m.group(1):
            continue
        expr, got = m.group(2), []
        for lib in (torch, retrograd):
            _, ns = execute(Program(prog.seed, prog.steps[:j]), lib)
            try:
                a = eval(expr, dict(ns))  # noqa: S307 - the fuzzer's own statement text
                c = lib.linalg.cond(a)
            except Exception:  # noqa: BLE001 - a matrix that does not build: not this case
                return False
            got.append((np.asarray(a.detach().numpy()), np.asarray(c.detach().numpy())))
        (a, cond_t), (a_r, cond_r) = got
        if a.dtype != np.float32 or a.shape != a_r.shape or not np.isfinite(a).all() or \
                not np.isfinite(a_r).all():
            continue
        cond64 = np.linalg.cond(a.astype(np.float64))
        cond64_r = np.linalg.cond(a_r.astype(np.float64))
        cond_t, cond_r = cond_t.astype(np.float64), cond_r.astype(np.float64)
        differ = ~np.isclose(cond_t, cond_r, rtol=1e-4, atol=1e-6, equal_nan=True)
        if not differ.any():
            continue
        n, eps = a.shape[-1], float(np.finfo(np.float32).eps)
        err_t, err_r = np.abs(cond_t - cond64), np.abs(cond_r - cond64_r)
        bound = 4 * n * eps * (1 + cond64) * cond64
        if not ((err_r <= err_t) & (err_t <= bound))[differ].all():
            continue
        if failure.kind == "value" and failure.message.startswith(st.target + ":"):
            return True  # (the cond itself: the check above is the whole claim)
        rewrite[j] = [dataclasses.replace(
            st, text=f"{st.target} = T.linalg.cond(({expr}).double()).float()")]
    return bool(rewrite) and _agrees_when_rewritten(prog, rewrite, differs=False)


# ------------------------------------------------ fin24c (stop 24): layer_norm's hook of None
@accepted("_hook_called_with_none for a hook on layer_norm's weight or bias: PyTorch's "
          "NativeLayerNormBackwardBackward0 (a second backward through a create_graph "
          "gradient of layer_norm) returns no gradient for the bias, nor for the weight where "
          "the input's gradient is not taken (grad_input is the only one of the three that "
          "depends on the weight), and its engine still runs their AccumulateGrad and calls "
          "their tensor hooks with None (LOG.append(g.detach()...) raises AttributeError: "
          "seed 20748954), the PyTorch bug of the group_norm entry above: hooks get tensors; "
          "retrograd calls no hook there, and both leave .grad None.  Only a program with "
          "create_graph=True and layer_norm( that compares equal once every hook skips a "
          "None")
def _hook_called_with_none_layer_norm(prog, failure):
    texts = _texts_all(prog)
    if not (failure.kind == "raise" and not failure.retro_exc and
            failure.torch_exc in ("AttributeError", "TypeError") and
            "'NoneType'" in failure.message and
            any("layer_norm(" in t for t in texts) and
            any("create_graph=True" in t for t in texts) and
            any("register_hook(lambda g: " in t for t in texts)):
        return False
    from .program import program_from_text
    from .runner import compare  # (the runner imports this module)

    source = prog.source()
    edited = source.replace("register_hook(lambda g: ",
                            "register_hook(lambda g: None if g is None else ")
    return edited != source and compare(program_from_text(edited, prog.seed)) is None


@accepted("The float32 case of the fin24b entry above (_matrix_exp_double_backward_of_huge_"
          "gradient, whose 1e-9 bound is float64's): PyTorch's float32 matrix_exp "
          "derivative under create_graph at a large incoming gradient G (pow_(-1) of "
          "matrix_exp entries near 0 gives max|G| about 3e5) exponentiates [[A^T, G], [0, "
          "A^T]] and loses digits that the second backward amplifies: seed 20743575, loss2 "
          "381621.6 in PyTorch, 380767.09 in retrograd, 380767.0959 the float64 value at "
          "the same float32 inputs (both libraries agree there; "
          "tests/fuzz/test_regressions_fin24c.py).  Only a float32 gradient (or loss2 / gs) "
          "of a program with a T.linalg.matrix_exp whose PyTorch run, repeated with "
          "matrix_exp's derivative taken at G scaled to about 1 and multiplied back, gives "
          "retrograd's value within 2e-5 (relative; a tenth of the runner's float32 rtol: "
          "the two float32 runs still round apart, 6e-6 in the unshrunk program, where "
          "float64 is 537625.695, retrograd 537622.94, the rerun 537626.25, PyTorch "
          "538833.1), and moves PyTorch's own value by over 100 times what is left")
def _matrix_exp_double_backward_of_huge_gradient_float32(prog, failure):
    import numpy as np

    runs = _matrix_exp_scaled_runs(prog, failure, float32_only=True)
    if runs is None:
        return False
    named, fixed, ours = runs
    from .runner import execute, torch  # (the runner imports this module)

    theirs = named(execute(prog, torch)[1])
    if theirs is None or theirs.shape != fixed.shape or not np.isfinite(theirs).all():
        return False
    size = float(np.abs(fixed).max()) if fixed.size else 0.0
    left = float(np.abs(ours - fixed).max())
    return size > 0 and left <= 2e-5 * size and \
        float(np.abs(theirs - fixed).max()) > 100 * left


# ------------------------------------- open25b (stop 25): an empty margin loss, read later
_EMPTY_MARGIN_STEP = re.compile(r"^(v\d+) = T\.nn\.functional\.(multi_margin_loss|"
                                r"multilabel_margin_loss)\((v\d+), ")


@accepted("_margin_loss_empty_garbage (above) read downstream: PyTorch 2.13's CPU "
          "multi_margin_loss and multilabel_margin_loss resize the output to 0-d and return "
          "before writing it when the input is empty (LossMultiMargin.cpp, "
          "LossMultiLabelMargin.cpp: `if (input.numel() == 0) return;`), so reduction 'sum' "
          "and 'mean' give uninitialized memory (6.9e-310, 0.0, 4.7e-310... from call to "
          "call), a PyTorch bug; retrograd gives the empty sum 0 and the empty mean nan.  "
          "That entry matches the loss's own value; here a later op reads it: erfinv then "
          "sign_ of a 6.9e-310 is 1.0 in PyTorch, 0.0 in retrograd (seed 20856220).  Only a "
          "program with such a loss statement of an empty input whose result is 0-d in both "
          "libraries and retrograd's is the empty reduction (0 for sum, nan for mean), "
          "checked by rerunning it with that loss's value set to retrograd's in both "
          "libraries (masked_fill, its graph kept), which must then agree in everything "
          "compared")
def _margin_loss_empty_garbage_downstream(prog, failure):
    if failure.kind not in ("value", "grad", "log"):
        return False
    import dataclasses
    import math

    import retrograd

    from .program import Program  # (the runner imports this module)
    from .runner import compare, execute, torch

    steps, found = list(prog.steps), False
    for j in range(len(prog.steps) - 1, -1, -1):
        st = prog.steps[j]
        m = _EMPTY_MARGIN_STEP.match(st.text or "")
        if not m or st.dyn is not None or st.target != m.group(1) or \
                "reduction='none'" in st.text:
            continue
        operands = _operands_before(prog, j)
        if not operands or operands[0].numel() != 0:
            continue
        got = [execute(Program(prog.seed, prog.steps[:j + 1]), lib)[1].get(st.target)
               for lib in (torch, retrograd)]
        if not all(isinstance(g, lib.Tensor) and g.dim() == 0
                   for g, lib in zip(got, (torch, retrograd))):
            continue
        ours = float(got[1])
        if "reduction='sum'" in st.text:
            if ours != 0.0:
                continue
            value = "0.0"
        elif not math.isnan(ours):
            continue
        else:
            value = "float('nan')"
        v = st.target
        steps.insert(j + 1, dataclasses.replace(
            st, op="empty_loss_defined", kind="", leaf=None, view_chain=(), on=None,
            text=f"{v} = {v}.masked_fill(T.tensor(True), {value})"))
        found = True
    if not found:
        return False
    edited = Program(prog.seed, steps)
    return compare(edited) is None and _raises_alike(prog, edited)


# ------------------------------------------ open25a (stop 25): matmul's rounding at a comparison
_MATMUL_STEP = re.compile(r"(v\d+) = (?:T\.matmul\((v\d+), (v\d+)\)|(v\d+) @ (v\d+)|"
                          r"(v\d+)\.mm\((v\d+)\))$")


@accepted("rounding of a matmul element that is 0 (or nearly) in exact arithmetic, reaching "
          "an op that jumps, has a pole or a kink at 0 (as _linalg_noise_at_discontinuity "
          "for LAPACK's results): NumPy's matmul (OpenBLAS) accumulates with fused "
          "multiply-adds, PyTorch's small 1-D @ 2-D matmul (an mv) adds the rounded "
          "products, so [-0.89, -0.89] @ [[.., -0.28], [.., 0.28]] is 5.2e-18 (the FMA "
          "keeps the first product's rounding error) in retrograd and exactly 0 in "
          "PyTorch, and masked_fill_(v3 > 0, 3) writes 3 in one library only (seed "
          "20815720).  Neither order is wrong: both are within the dot product's rounding "
          "bound.  Checked, not assumed: the program is run again in both libraries with "
          "every element of the matmul's result within k * eps * (|a| @ |b|) of 0 (k the "
          "inner size; the standard bound is about half that) set to exactly 0, its graph "
          "kept, and must then agree in everything compared")
def _matmul_rounding_at_discontinuity(prog, failure):
    if failure.kind not in ("value", "grad", "log"):
        return False
    import dataclasses

    from .program import Program  # (the runner imports this module)
    from .runner import compare, torch

    for j, st in enumerate(prog.steps):
        m = _MATMUL_STEP.match((st.text or "").strip())
        if m is None or st.dyn is not None:
            continue
        v, a, b = m.group(1), *[n for n in m.groups()[1:] if n]
        reading = _reads_downstream(prog, j, v)
        if not any(_AT_ZERO_DISCONTINUOUS.search(prog.steps[k].text or "") for k in reading):
            continue
        operands = _operands_before(prog, j)
        if len(operands) != 2 or not all(o.is_floating_point() and o.numel() for o in operands):
            continue
        k = operands[0].shape[-1]
        c = k * torch.finfo(torch.promote_types(operands[0].dtype, operands[1].dtype)).eps
        bound = f"{c!r} * T.matmul({a}.detach().abs(), {b}.detach().abs())"
        noise = f"{v}.detach().masked_fill({v}.detach().abs() > {bound}, 0.0)"
        for text in (f"{v} = {v} - {noise}", f"{v}.sub_({noise})"):
            zeroed = dataclasses.replace(
                st, op="noise_zeroed", kind="", leaf=None, view_chain=(), on=None, text=text)
            edited = Program(prog.seed, prog.steps[:j + 1] + [zeroed] + prog.steps[j + 1:])
            if compare(edited) is None and compare(prog) is not None and \
                    _raises_alike(prog, edited):
                return True
    return False


# ------------------------------------------------ hunt25b (stop 25): Q @ R against its matrix
_QR_RECONSTRUCTION = re.compile(
    r"^(v\d+) = \(lambda qr: qr\[0\] @ qr\[1\]\)\(T\.linalg\.qr\((v\d+)\)\)$")
_COMPARISON = re.compile(r"[<>]=?|[=!]=|\.(eq|ne|lt|le|gt|ge)\(|\bT\.(eq|ne|lt|le|gt|ge)\(")


@accepted("a comparison of Q @ R (the fuzzer's qr reconstruction) with the matrix it "
          "reconstructs: the two are equal in exact arithmetic and differ by rounding (LAPACK "
          "through PyTorch, NumPy's LAPACK through retrograd, each with its own Householder "
          "vectors' rounding), so which side of x < Q @ R an element falls on is noise (seed "
          "21751913: v0 < v1, True at three elements in PyTorch, at none in retrograd).  "
          "Checked, not assumed: only a value failure at a comparison statement reading both "
          "the product and its matrix, and the program run again in both libraries with the "
          "product snapped to its matrix where they are within 64 ulp * n * its largest entry "
          "(v = v - (v - x).detach() masked there: its graph kept) must then agree in "
          "everything compared")
def _compare_with_qr_reconstruction(prog, failure):
    # (the statement by its text: a program read back from text has no op names)
    name = failure.message.split(":", 1)[0]
    defs = [st for st in prog.steps if st.target == name and st.text]
    if failure.kind != "value" or not defs or not _COMPARISON.search(
            defs[-1].text.split("=", 1)[-1]):
        return False
    import dataclasses

    from .program import Program  # (the runner imports this module)
    from .runner import compare, execute, torch

    for j, st in enumerate(prog.steps):
        m = _QR_RECONSTRUCTION.match(st.text or "")
        if not m or st.dyn is not None or st.target != m.group(1):
            continue
        v, x = m.groups()
        if defs[-1] not in prog.steps[j + 1:] or not {v, x} <= _rhs_names(defs[-1]):
            continue
        _, ns = execute(Program(prog.seed, prog.steps[:j + 1]), torch)
        made, of = ns.get(v), ns.get(x)
        if not isinstance(made, torch.Tensor) or not isinstance(of, torch.Tensor) or \
                made.shape != of.shape or not made.numel():
            continue
        bound = _reconstruction_noise_bound(made)
        gap = f"({v} - {x}).detach()"
        snapped = dataclasses.replace(
            st, op="noise_zeroed", kind="", leaf=None, view_chain=(), on=None,
            text=f"{v} = {v} - {gap}.masked_fill({gap}.abs() > {bound!r}, 0.0)")
        edited = Program(prog.seed, prog.steps[:j + 1] + [snapped] + prog.steps[j + 1:])
        if compare(edited) is None and _raises_alike(prog, edited):
            return True
    return False


# ------------------------------------------ hunt25a (stop 25): float32 sigmoid, then a pole
_SIGMOID_STEP = re.compile(r"(v\d+) = (?:\(?(v\d+)\)?\.sigmoid\(\)|T\.sigmoid\((v\d+)\))")
_POLE_AT_ONE_CALL = re.compile(r"\b(acosh|acos|asin|atanh|logit|log|log2|log10|erfinv)_?\(")


@accepted("float32 sigmoid rounded the wrong way by PyTorch 2.13 (as "
          "_sigmoid_float32_rounding_at_logit, for the other ops whose domain ends at 1 or "
          "that have a pole there): PyTorch's float32 sigmoid(12) is 0.9999938011 where the "
          "correctly rounded value (retrograd's) is 0.9999938607, 1 ulp apart, and atanh's "
          "pole at 1 turns that into 6.3421 against 6.3470 (6.3466 in float64: seed "
          "21108820, sigmoid of an argmax).  PyTorch's float32 sigmoid is over half an ulp "
          "off for about a third of inputs in [-20, 20], up to 2.2 ulp.  Only where a float32 "
          "sigmoid statement (v = x.sigmoid() or T.sigmoid(x)) of the same input in both "
          "libraries gives retrograd's correctly rounded value (within 0.5001 ulp of the "
          "float64 sigmoid) and PyTorch's within 3 ulp of it, in a program that calls such "
          "an op, and the program agrees in everything once both libraries continue from "
          "PyTorch's sigmoid value (its graph kept)")
def _sigmoid_float32_rounding_at_pole(prog, failure):
    if failure.kind not in ("value", "grad", "log") or not any(
            _POLE_AT_ONE_CALL.search(t) for t in _texts_all(prog)):
        return False
    import numpy as np

    import retrograd

    from .program import Program  # (the runner imports this module)
    from .runner import execute, torch

    for j, st in enumerate(prog.steps):
        m = _SIGMOID_STEP.fullmatch(st.text or "")
        if not m or st.dyn is not None or st.target != m.group(1):
            continue
        source, got = m.group(2) or m.group(3), []
        for lib in (torch, retrograd):
            ns = execute(Program(prog.seed, prog.steps[:j + 1]), lib)[1]
            x, p = ns.get(source), ns.get(st.target)
            if x is None or p is None or not hasattr(p, "dtype") or \
                    not str(p.dtype).endswith("float32"):
                break
            got.append((np.asarray(x.detach().numpy()), np.asarray(p.detach().numpy())))
        if len(got) != 2:
            continue
        (x_t, p_t), (x_r, p_r) = got
        if x_t.shape != x_r.shape or p_t.shape != p_r.shape or \
                not np.array_equal(x_t, x_r, equal_nan=True):
            continue
        with np.errstate(all="ignore"):
            exact = 1 / (1 + np.exp(-x_r.astype(np.float64)))
            ulp = np.spacing(np.abs(p_r)).astype(np.float64)
            moved = p_t != p_r
            rounded = np.abs(p_r.astype(np.float64) - exact) <= 0.5001 * ulp
        if moved.any() and rounded[moved].all() and _explained_by_ulps(prog, j, 3):
            return True
    return False


# ------------------------------------- hunt25a (stop 25): matrix_norm(ord=+-1) at tied columns
_MATRIX_NORM_ONE = re.compile(r"T\.linalg\.matrix_norm\((v\d+), ord=(-?1)\)")


@accepted("matrix_norm(ord=1 or -1) is the max/min of the column sums of |A|, whose gradient "
          "PyTorch (amax/amin) splits evenly among tied columns: columns that tie in exact "
          "arithmetic (a softmax over dim 0: every column sums to 1) tie in one library and "
          "not in the other once the entries round 1 ulp apart (float32 softmax, PyTorch's "
          "vectorized exp against NumPy's: seed 21189980, the gradient seen by a hook on the "
          "softmax split three ways in PyTorch, 1/3 each, and given to one column in "
          "retrograd).  Only a grad or hook-log failure where such a matrix_norm's float "
          "operand is, in the two libraries, within 4 ulp elementwise (not equal), the "
          "columns attaining the extreme differ between them, and the program agrees once "
          "the matrix_norm reads PyTorch's operand values in both libraries "
          "(x - x.detach() + <PyTorch's x>: its graph kept)")
def _matrix_norm_one_tie_rounding(prog, failure):
    if failure.kind not in ("grad", "log") or not any(
            _MATRIX_NORM_ONE.search(t) for t in _texts(prog)):
        return False
    import dataclasses

    import numpy as np

    import retrograd

    from .program import Program  # (the runner imports this module)
    from .runner import compare, execute, torch

    for k, st in enumerate(prog.steps):
        m = _MATRIX_NORM_ONE.search(st.text or "")
        if m is None:
            continue
        name, reduce = m.group(1), (np.max if m.group(2) == "1" else np.min)
        got = []
        for lib in (torch, retrograd):
            x = execute(Program(prog.seed, prog.steps[:k]), lib)[1].get(name)
            if x is None or not hasattr(x, "dtype") or not x.is_floating_point() or \
                    x.dim() < 2:
                break
            got.append(np.asarray(x.detach().numpy()))
        if len(got) != 2 or got[0].shape != got[1].shape or got[0].dtype != got[1].dtype:
            continue
        a, b = got
        if np.array_equal(a, b) or not np.isfinite(a).all() or not np.isfinite(b).all() or \
                not (np.abs(a - b) <= 4 * np.spacing(np.abs(a))).all():
            continue
        tied = []
        for x in (a, b):
            sums = np.abs(x).sum(-2)
            tied.append(sums == reduce(sums, axis=-1, keepdims=True))
        if np.array_equal(*tied):
            continue
        literal = f"T.tensor({a.tolist()!r}, dtype=T.{a.dtype.name})"
        text = st.text[:m.start(1)] + f"{name} - {name}.detach() + {literal}" + \
            st.text[m.end(1):]
        edited = Program(prog.seed, prog.steps[:k] + [dataclasses.replace(st, text=text)] +
                         prog.steps[k + 1:])
        if compare(edited) is None and _raises_alike(prog, edited):
            return True
    return False
