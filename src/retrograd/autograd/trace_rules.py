"""Each grad_fn's forward formula and local derivative rule, in words.

``RULES`` maps a grad_fn name (``"MulBackward0"``) to ``(forward formula, rule)``; the
helpers below name a node's saved values and constants as its rule does.  Read by
:mod:`retrograd.autograd.tracing` (the table), ``forward_trace.py`` and the graph pictures
(``retrograd.viz``); :func:`describe_rule` says so when a name has no entry.
"""

from __future__ import annotations

__all__ = ["RULES", "describe_rule", "describe_forward", "saved_slot_names",
           "param_constants", "saved_constants"]

#: grad_fn name -> (forward formula, local derivative rule in words).  ``g`` is the
#: gradient that arrived from the output; "a", "b" are the inputs (self, other).
RULES: dict[str, tuple[str, str]] = {
    "AccumulateGrad": ("leaf.grad", "leaf.grad += g (the gradient is added, never replaced)"),
    "AbsBackward0": ("|a|", "d|a|/da = sign(a) (0 at a = 0)"),
    "AddBackward0": ("a + alpha*b", "d/da = 1, d/db = alpha: g passes through unchanged"),
    "AddBackward1": ("a + c (c a number)", "d/da = 1: g passes through unchanged"),
    "AliasBackward0": ("alias(a)", "identity: g passes through"),
    "AsStridedBackward0": ("a view of base (re-derived after an in-place change)",
                           "g is placed at the view's positions in zeros shaped like base"),
    "BmmBackward0": ("a @ b (batched)", "grad_a = g @ b^T, grad_b = a^T @ g"),
    "CatBackward0": ("cat([a, b, ...])", "each input gets its own slice of g"),
    "ClampBackward0": ("clamp(a, min, max), tensor bounds", "d/da = 1 inside [min, max], 0 "
                       "outside; a bound gets g where it produced the value"),
    "ClampBackward1": ("clamp(a, min, max)", "d/da = 1 inside [min, max], 0 outside"),
    "CloneBackward0": ("clone(a)", "identity: g passes through"),
    "CopyBackwards": ("a.copy_(src)", "the old a is overwritten: grad_a = 0, grad_src = g "
                      "(cast and summed to src's shape)"),
    "CopySlices": ("a[index] = v, or view_of_a.op_(b...), in place",
                   "grad_a = g with the written places zeroed (or given op_'s gradient for "
                   "the view, of g there), grad_v = g there (grad_b: op_'s, of g there)"),
    "CosBackward0": ("cos(a)", "d cos(a)/da = -sin(a)"),
    "DivBackward0": ("a / b", "d(a/b)/da = 1/b, d(a/b)/db = -a/b**2"),
    "DivBackward1": ("a / c (c a number)", "d(a/c)/da = 1/c"),
    "DotBackward0": ("dot(a, b)", "grad_a = g*b, grad_b = g*a"),
    "ExpBackward0": ("exp(a)", "d exp(a)/da = exp(a) (the saved result)"),
    "ExpandBackward0": ("a.expand(shape)", "sum g over the expanded dimensions"),
    "FillBackward0": ("fill(a, value)", "d/da = 0: the value does not depend on a"),
    "FillBackward2": ("a.fill_(number)", "d/da = 0: the value does not depend on a"),
    "FillBackward3": ("a.fill_(v), v a 0-d tensor", "d/da = 0, d/dv = sum(g) (v is "
                      "broadcast to every element)"),
    "GatherBackward0": ("gather(a, dim, index)", "g is scatter-added back to the gathered "
                        "positions of zeros shaped like a"),
    "IndexBackward0": ("a[index]", "g is added into zeros shaped like a at the indexed places"),
    "IndexPutBackward0": ("a[index] = v", "grad_a = g with the overwritten places zeroed, "
                          "grad_v = g[index]"),
    "LogBackward0": ("log(a)", "d log(a)/da = 1/a"),
    "LogSoftmaxBackward0": ("log_softmax(a)", "grad = g - softmax(a) * sum(g)"),
    "MaxBackward0": ("max(a)", "g goes to the maximum element (split evenly between ties)"),
    "MaxBackward1": ("max(a, dim)", "g goes to the argmax position along dim"),
    "MaximumBackward0": ("maximum(a, b)", "g goes to the larger input (half each on ties)"),
    "MeanBackward0": ("mean(a)", "d mean(a)/da_i = 1/n for each of the n elements"),
    "MeanBackward1": ("mean(a, dim)", "d/da_i = 1/n, g broadcast back over the reduced dims"),
    "MinBackward0": ("min(a)", "g goes to the minimum element (split evenly between ties)"),
    "MinBackward1": ("min(a, dim)", "g goes to the argmin position along dim"),
    "MinimumBackward0": ("minimum(a, b)", "g goes to the smaller input (half each on ties)"),
    "MmBackward0": ("a @ b", "grad_a = g @ b^T, grad_b = a^T @ g"),
    "MseLossBackward0": ("mean((a - t)**2)", "d/da = 2*(a - t)/n"),
    "MulBackward0": ("a * b", "d(a*b)/da = b, d(a*b)/db = a: grad_a = g*b, grad_b = g*a"),
    "MulBackward1": ("a * c (c a number)", "d(a*c)/da = c"),
    "MvBackward0": ("A @ v", "grad_A = outer(g, v), grad_v = A^T @ g"),
    "NegBackward0": ("-a", "d(-a)/da = -1"),
    "NllLossBackward0": ("nll_loss(a, target)", "-1/n (times the class weight) at each "
                         "target's log-probability, 0 elsewhere"),
    "NllLoss2DBackward0": ("nll_loss(a, target) over (N, C, d1, ...)", "-1/n (times the class "
                           "weight) at each target's log-probability, 0 elsewhere"),
    "PermuteBackward0": ("a.permute(dims)", "g is permuted back with the inverse order"),
    "PowBackward0": ("y ** p (p a number)", "d(y**p)/dy = p*y**(p-1)"),
    "PowBackward1": ("a ** b", "d(a**b)/da = b*a**(b-1), d(a**b)/db = a**b * log(a)"),
    "PowBackward2": ("c ** b (c a number)", "d(c**b)/db = c**b * log(c)"),
    "ReciprocalBackward0": ("1 / a", "d(1/a)/da = -1/a**2"),
    "RefusedViewBackward": ("a split/unbind output or no_grad view whose base changed",
                            "raises: PyTorch refuses to re-derive such a view"),
    "ReluBackward0": ("relu(a)", "d relu(a)/da = 1 where a > 0, else 0 (0 at a = 0)"),
    "RemainderBackward0": ("remainder(a, c) (c a number)", "d/da = 1"),
    "RemainderBackward1": ("remainder(a, b)", "d/da = 1, d/db = -floor(a/b)"),
    "NotImplemented": ("c % a (c a number)", "none: PyTorch defines no derivative (backward "
                       "raises)"),
    "RsubBackward1": ("c - a (c a number)", "d(c - a)/da = -1"),
    "ScatterAddBackward0": ("a.scatter_add(dim, index, src)", "grad_a = g, "
                            "grad_src = gather(g, dim, index)"),
    "SelectBackward0": ("a[i]", "g is placed at index i of zeros shaped like a"),
    "SigmoidBackward0": ("sigmoid(a)", "d s(a)/da = s*(1 - s) (s the saved result)"),
    "SignBackward0": ("sign(a)", "d sign(a)/da = 0"),
    "SinBackward0": ("sin(a)", "d sin(a)/da = cos(a)"),
    "SliceBackward0": ("a[start:stop:step]", "g is placed into the sliced positions of zeros"),
    "SoftmaxBackward0": ("softmax(a)", "grad = s * (g - sum(g * s)) (s the saved result)"),
    "SqrtBackward0": ("sqrt(a)", "d sqrt(a)/da = 1/(2*sqrt(a))"),
    "SqueezeBackward0": ("a.squeeze()", "g is reshaped back to a's shape"),
    "SqueezeBackward1": ("a.squeeze(dim)", "g is reshaped back to a's shape"),
    "SqueezeBackward2": ("a.squeeze(dims)", "g is reshaped back to a's shape"),
    "SqueezeBackward4": ("a.squeeze(dims)", "g is reshaped back to a's shape"),
    "StackBackward0": ("stack([a, b, ...])", "each input gets its own slice of g"),
    "SubBackward0": ("a - alpha*b", "d/da = 1, d/db = -alpha"),
    "SubBackward1": ("a - c (c a number)", "d(a - c)/da = 1"),
    "SumBackward0": ("sum(a)", "d sum(a)/da_i = 1: g is copied to every element"),
    "SumBackward1": ("sum(a, dim)", "d/da_i = 1: g is broadcast back over the summed dims"),
    "TBackward0": ("a.t()", "g is transposed back"),
    "TanhBackward0": ("tanh(a)", "d tanh(a)/da = 1 - tanh(a)**2 (the saved result)"),
    "ToCopyBackward0": ("a.to(dtype)", "identity, cast back to a's dtype"),
    "TransposeBackward0": ("a.transpose(i, j)", "g is transposed back"),
    "UnsafeViewBackward0": ("a.reshape(shape)", "g is reshaped back to a's shape"),
    "ReshapeAliasBackward0": ("a.reshape(shape), a non-contiguous a that strides can view",
                              "g is reshaped back to a's shape"),
    "UnsqueezeBackward0": ("a.unsqueeze(dim)", "g is squeezed back to a's shape"),
    "ViewBackward0": ("a.view(shape)", "g is reshaped back to a's shape"),
    "WhereBackward0": ("where(cond, a, b)", "g goes to a where cond is true, to b elsewhere"),
    "ZeroBackward0": ("a.zero_()", "d/da = 0: the result does not depend on a"),
    "AcosBackward0": ("acos(a)", "d acos(a)/da = -1/sqrt(1 - a**2)"),
    "AsinBackward0": ("asin(a)", "d asin(a)/da = 1/sqrt(1 - a**2)"),
    "AtanBackward0": ("atan(a)", "d atan(a)/da = 1/(1 + a**2)"),
    "TanBackward0": ("tan(a)", "d tan(a)/da = 1 + tan(a)**2 (the saved result)"),
    "SinhBackward0": ("sinh(a)", "d sinh(a)/da = cosh(a)"),
    "CoshBackward0": ("cosh(a)", "d cosh(a)/da = sinh(a)"),
    "Log1PBackward0": ("log1p(a)", "d log(1 + a)/da = 1/(1 + a)"),
    "Log2Backward0": ("log2(a)", "d log2(a)/da = 1/(a*ln 2)"),
    "Log10Backward0": ("log10(a)", "d log10(a)/da = 1/(a*ln 10)"),
    "Exp2Backward0": ("exp2(a)", "d 2**a/da = 2**a * ln 2 (the saved result)"),
    "Expm1Backward0": ("expm1(a)", "d (exp(a) - 1)/da = exp(a) = result + 1"),
    "RsqrtBackward0": ("rsqrt(a)", "d a**-0.5/da = -0.5 * result**3"),
    "FloorBackward0": ("floor(a)", "d/da = 0 (piecewise constant)"),
    "CeilBackward0": ("ceil(a)", "d/da = 0 (piecewise constant)"),
    "TruncBackward0": ("trunc(a)", "d/da = 0 (piecewise constant)"),
    "RoundBackward0": ("round(a)", "d/da = 0 (piecewise constant)"),
    "RoundBackward1": ("round(a, decimals)", "d/da = 0 (piecewise constant)"),
    "FracBackward0": ("frac(a)", "d (a - trunc(a))/da = 1"),
    "LeakyReluBackward0": ("leaky_relu(a, s)", "1 where a > 0, else s (s at a = 0)"),
    "EluBackward0": ("elu(a, alpha)", "1 where a > 0, else alpha*exp(a)"),
    "SoftplusBackward0": ("softplus(a)",
                         "d log(1 + exp(a))/da = sigmoid(a) (1 above the threshold)"),
    "SiluBackward0": ("silu(a) = a*sigmoid(a)", "s*(1 + a*(1 - s)) with s = sigmoid(a)"),
    "LogSigmoidBackward0": ("log(sigmoid(a))", "d/da = 1 - sigmoid(a) = sigmoid(-a)"),
    "HardtanhBackward0": ("hardtanh(a, lo, hi)", "1 where lo < a < hi, else 0 (0 at the bounds)"),
    "NllLossBackwardBackward0": ("nll_loss_backward(g, target)",
                                 "d/dg = -1 at each target's class (/ weight or count for "
                                 "mean), 0 elsewhere: linear in g"),
    "NllLoss2DBackwardBackward0": ("nll_loss2d_backward(g, target)",
                                   "as NllLossBackwardBackward0, over (N, C, H, W)"),
    "MultiMarginLossBackward0": ("multi_margin_loss(x, y, p, margin)",
                                 "d/dx_j = p * max(0, margin - x_y + x_j)**(p - 1) / C for "
                                 "j != y (times weight[y]), and minus their sum at j = y"),
    # smooth first derivatives recorded as one node under create_graph (y the saved result)
    "TanhBackwardBackward0": ("tanh_backward(g, y) = g * (1 - y**2)",
                              "d/dg = 1 - y**2; d/dy = -2 * y * g"),
    "SigmoidBackwardBackward0": ("sigmoid_backward(g, y) = g * (1 - y) * y",
                                 "d/dg = (1 - y) * y; d/dy = g * (1 - 2 * y)"),
    "EluBackwardBackward0": ("elu_backward(g, a) = g * scale, or g * s * alpha * scale * "
                             "exp(a * s) for a <= 0 (s = input_scale; from the result r of "
                             "an in-place form: g * s * (r + alpha * scale))",
                             "d/dg = the same slope (linear in g); d/da = gg * g * s * "
                             "elu_backward(1, a) for a < 0, else 0 (gg * g * s from r)"),
    "SoftplusBackwardBackward0": ("softplus_backward(g, a) = g * sigmoid(beta * a) "
                                  "(g above the threshold)",
                                  "d/dg = the same slope (linear in g); d/da = gg * g * "
                                  "beta * s * (1 - s) below the threshold, else 0"),
    "HardswishBackwardBackward0": ("hardswish_backward(g, a) = g * (a / 3 + 1/2) for "
                                   "-3 < a < 3 (0 below, g above)",
                                   "d/dg = the same slope (linear in g); d/da = gg * g / 3 "
                                   "strictly inside, else 0"),
    "GeluBackwardBackward0": ("gelu_backward(g, a) = g * (Phi(a) + a * phi(a))",
                              "d/dg = Phi(a) + a * phi(a) (linear in g); "
                              "d/da = g * phi(a) * (2 - a**2) (tanh form: its own closed form)"),
    "LogSoftmaxBackwardDataBackward0": ("log_softmax_backward(g, y) = g - exp(y) * sum(g)",
                                        "d/dg = gg - sum(gg * exp(y)) (linear in g); "
                                        "d/dy = -gg * exp(y) * sum(g)"),
    # the first derivatives of piecewise-linear ops, recorded under create_graph
    "ThresholdBackwardBackward0": ("threshold_backward(g, a)",
                                   "d/dg = the same mask (linear in g); d/da = 0 (a step)"),
    "LeakyReluBackwardBackward0": ("leaky_relu_backward(g, a, s)",
                                   "d/dg = 1 or s (linear in g); d/da = 0 (a step)"),
    "HardtanhBackwardBackward0": ("hardtanh_backward(g, a, lo, hi)",
                                  "d/dg = the same mask (linear in g); d/da = 0 (a step)"),
    "HardshrinkBackwardBackward0": ("hardshrink_backward(g, a, lambd)",
                                    "d/dg = the same mask (linear in g); d/da = 0 (a step)"),
    "SoftshrinkBackwardBackward0": ("softshrink_backward(g, a, lambd)",
                                    "d/dg = the same mask (linear in g); d/da = 0 (a step)"),
    "RreluWithNoiseBackwardBackward0": ("rrelu_backward(g, a, s)",
                                        "d/dg = 1 or s (linear in g); d/da = 0 (a step)"),
    "ProdBackward0": ("prod(a)", "the product of the other elements (out/a_i without zeros)"),
    "ProdBackward1": ("prod(a, dim)", "the product of the other elements along dim"),
    "VarBackward0": ("var(a)", "d/da_i = 2*(a_i - mean)/(n - correction)"),
    "StdBackward0": ("std(a)", "d/da_i = (a_i - mean)/((n - correction)*std), 0 where std = 0"),
    "LinalgVectorNormBackward0": ("norm(a, p)",
                                 "p = 2: a/|a| (0 for a zero vector); p = 1: sign(a)"),
    "LogsumexpBackward0": ("logsumexp(a, dim)", "d/da_i = exp(a_i - result) (the softmax)"),
    "AmaxBackward0": ("amax(a, dim)", "g goes to the maximum elements (split evenly between ties)"),
    "AminBackward0": ("amin(a, dim)", "g goes to the minimum elements (split evenly between ties)"),
    "CumsumBackward0": ("cumsum(a, dim)", "grad_i = sum of g_j for j >= i (a reversed cumsum)"),
    "FlipBackward0": ("a.flip(dims)", "g is flipped back"),
    "RollBackward0": ("a.roll(shifts, dims)", "g is rolled back by -shifts"),
    "RepeatBackward0": ("a.repeat(sizes)", "the copies' gradients are summed back"),
    "TrilBackward0": ("a.tril(k)", "g's lower triangle (the rest got no gradient)"),
    "TriuBackward0": ("a.triu(k)", "g's upper triangle (the rest got no gradient)"),
    "IndexSelectBackward0": ("a.index_select(dim, idx)",
                            "g is added into zeros at idx (repeats add up)"),
    "MaskedSelectBackward0": ("a.masked_select(mask)", "g is placed where mask is true"),
    "SplitBackward0": ("a.split(size, dim)", "the pieces' gradients are joined back (cat)"),
    "SplitWithSizesBackward0": ("a.split(sizes, dim)",
                               "the pieces' gradients are joined back (cat)"),
    "UnbindBackward0": ("a.unbind(dim)", "the slices' gradients are stacked back"),
    "SortBackward0": ("a.sort(dim)", "g goes back to the positions the values came from"),
    "SortBackward1": ("a.sort(dim, stable=...)",
                      "g goes back to the positions the values came from"),
    "TopkBackward0": ("a.topk(k, dim)", "g goes back to the k positions picked, 0 elsewhere"),
    "KthvalueBackward0": ("a.kthvalue(k, dim)", "g goes to the k-th smallest element"),
    "LeakyReluBackward1": ("leaky_relu_(a, s)", "1 where the result > 0, else s"),
    "EluBackward1": ("elu_(a, alpha)", "1 where the result > 0, else result + alpha"),
    "ErfBackward0": ("erf(a)", "d erf(a)/da = 2/sqrt(pi) * exp(-a**2)"),
    "ErfcBackward0": ("erfc(a)", "d erfc(a)/da = -2/sqrt(pi) * exp(-a**2)"),
    "GeluBackward0": ("gelu(a) = a * Phi(a)", "Phi(a) + a * phi(a) (normal CDF and density)"),
    "AddcmulBackward0": ("a + v * b * c", "grad_a = g, grad_b = g*v*c, grad_c = g*v*b"),
    "AddcdivBackward0": ("a + v * b / c", "grad_a = g, grad_b = g*v/c, grad_c = -g*v*b/c**2"),
    "LerpBackward0": ("a + w * (b - a) (w a number)", "grad_a = g*(1 - w), grad_b = g*w"),
    "LerpBackward1": ("a + w * (b - a)", "grad_a = g*(1 - w), grad_b = g*w, grad_w = g*(b - a)"),
    "Atan2Backward0": ("atan2(a, b)", "grad_a = g*b/(a**2 + b**2), grad_b = -g*a/(a**2 + b**2)"),
    "HypotBackward0": ("hypot(a, b)", "grad_a = g*a/result, grad_b = g*b/result"),
    "LogaddexpBackward0": ("log(exp(a) + exp(b))", "grad_a = g*exp(a - result), "
                           "grad_b = g*exp(b - result)"),
    "XlogyBackward0": ("a * log(b)", "grad_a = g*log(b) (0 where a = 0 and b <= 0), "
                       "grad_b = g*a/b"),
    "ClampMinBackward0": ("max(a, m)", "1 where a >= m, else 0"),
    "ClampMaxBackward0": ("min(a, m)", "1 where a <= m, else 0"),
    "ClampMinBackward1": ("a.clamp_min(m), m a tensor", "d/da = 1 where a >= m, 0 elsewhere; "
                          "m gets g where it produced the value"),
    "ClampMaxBackward1": ("a.clamp_max(m), m a tensor", "d/da = 1 where a <= m, 0 elsewhere; "
                          "m gets g where it produced the value"),
    "XlogyBackward2": ("a * log(c) (c a number)", "grad_a = g*log(c) (0 where a = 0 and c <= 0)"),
    "DiagonalBackward0": ("a.diagonal(k)", "g is placed on the k-th diagonal of zeros"),
    "DiagonalBackward0_copy": ("a.diag(k)", "g is placed on the k-th diagonal of zeros"),
    "DiagEmbedBackward0": ("diag_embed(a, k)", "the k-th diagonal of g"),
    "TraceBackward0": ("trace(a)", "g on the main diagonal, 0 elsewhere"),
    "AddmmBackward0": ("c + a @ b", "grad_c = g, grad_a = g @ b^T, grad_b = a^T @ g"),
    "BinaryCrossEntropyBackward0": ("bce(x, t)", "d/dx = (x - t) / (x (1 - x)), the "
                                    "denominator at least 1e-12"),
    "BinaryCrossEntropyWithLogitsBackward0": ("bce(sigmoid(x), t)", "d/dx = sigmoid(x) - t, "
                                              "d/dt = -x"),
    # operator library I (ops/unary.py, ops/special.py)
    "AcoshBackward0": ("acosh(a)", "d/da = 1/sqrt(a**2 - 1) (inf at a = 1)"),
    "AsinhBackward0": ("asinh(a)", "d/da = 1/sqrt(a**2 + 1)"),
    "AtanhBackward0": ("atanh(a)", "d/da = 1/(1 - a**2) (inf at a = +-1)"),
    "AcoshBackward1": ("a.acosh_()", "not implemented in PyTorch 2.13: backward raises"),
    "AsinhBackward1": ("a.asinh_()", "not implemented in PyTorch 2.13: backward raises"),
    "AtanhBackward1": ("a.atanh_()", "not implemented in PyTorch 2.13: backward raises"),
    "AngleBackward0": ("angle(a) (0 or pi for real a)", "0 everywhere, whatever g"),
    "SgnBackward0": ("sgn(a)", "0 everywhere, whatever g"),
    "ConjPhysicalBackward1": ("a.conj_physical_() (real a: unchanged)", "identity: g passes"),
    "Deg2RadBackward0": ("a * pi/180", "d/da = pi/180"),
    "Rad2DegBackward0": ("a * 180/pi", "d/da = 180/pi"),
    "SincBackward0": ("sin(pi a)/(pi a)", "(pi a cos(pi a) - sin(pi a))/(pi a**2), 0 at a = 0"),
    "NanToNumBackward0": ("nan_to_num(a)", "g where a is finite, g*0 where it was replaced"),
    "LogitBackward0": ("log(a/(1 - a)), a clamped to [eps, 1-eps]",
                       "d/da = 1/(a (1 - a)); 0 outside [eps, 1-eps] (nan outside [0, 1] "
                       "without eps)"),
    "FrexpBackward0": ("mantissa of frexp(a) = a / 2**e", "d/da = 2**-e (e held fixed)"),
    "FillBackward1": ("fill(a, v), v a 0-d tensor", "d/da = 0, d/dv = sum(g)"),
    "LgammaBackward0": ("log|Gamma(a)|", "d/da = digamma(a)"),
    "DigammaBackward0": ("digamma(a)", "d/da = polygamma(1, a)"),
    "PolygammaBackward0": ("polygamma(n, a)", "d/da = polygamma(n + 1, a)"),
    "PolygammaBackward1": ("a.polygamma_(n)", "d/da = polygamma(n + 1, a)"),
    "MvlgammaBackward0": ("sum_i lgamma(a - i/2) + const", "d/da = sum_i digamma(a - i/2)"),
    "ErfinvBackward0": ("erfinv(a)", "d/da = sqrt(pi)/2 * exp(erfinv(a)**2)"),
    "I0Backward0": ("i0(a)", "d/da = i1(a)"),
    "SpecialI0EBackward0": ("i0e(a) = exp(-|a|) i0(a)", "d/da = i1e(a) - sgn(a) * i0e(a)"),
    "SpecialI1Backward0": ("i1(a)", "d/da = i0(a) - i1(a)/a (0.5 at a = 0)"),
    "SpecialI1EBackward0": ("i1e(a)", "d/da = i0e(a) - i1e(a) (sgn(a) + 1/a) (0.5 at a = 0)"),
    "SpecialNdtriBackward0": ("ndtri(a), the normal quantile",
                              "d/da = sqrt(2 pi) * exp(ndtri(a)**2 / 2)"),
    "SpecialLogNdtrBackward0": ("log(ndtr(a))", "d/da = exp(-a**2/2)/sqrt(2 pi) / ndtr(a)"),
    "SpecialErfcxBackward0": ("exp(a**2) erfc(a)", "d/da = 2 a erfcx(a) - 2/sqrt(pi)"),
    "SpecialEntrBackward0": ("-a log(a)", "d/da = -(1 + log(a))"),
    "SpecialXlog1PyBackward0": ("a * log1p(b)", "grad_a = g*log1p(b) (0 where a = 0 and "
                                "b <= -1), grad_b = g*a/(1 + b)"),
    "SpecialXlog1PyBackward1": ("c * log1p(b) (c a number)", "grad_b = g*c/(1 + b)"),
    "SpecialXlog1PyBackward2": ("a * log1p(c) (c a number)", "grad_a = g*log1p(c)"),
    # reductions and scans (ops/scans.py, quantiles.py, statistics.py; issue 6)
    "LinalgSvdBackward0": ("svdvals(a)", "grad = U diag(g) V^T"),
    "CumprodBackward0": ("cumprod(a, dim)", "grad_i = sum_{j >= i} g_j * out_j / a_i (an "
                         "exact product of the others where a has zeros)"),
    "CummaxBackward0": ("cummax(a, dim)", "g_j goes to the index the running max came from"),
    "CumminBackward0": ("cummin(a, dim)", "g_j goes to the index the running min came from"),
    "LogcumsumexpBackward0": ("logcumsumexp(a, dim)", "grad_i = sum_{j >= i} g_j * "
                              "exp(a_i - out_j)"),
    "MedianBackward0": ("median(a)", "g split evenly among the elements equal to the median"),
    "MedianBackward1": ("median(a, dim)", "g goes to the returned index"),
    "NanmedianBackward0": ("nanmedian(a)", "g split evenly among the elements equal to it"),
    "NanmedianBackward1": ("nanmedian(a, dim)", "g goes to the returned index"),
    "ModeBackward0": ("mode(a, dim)", "g goes to the returned index"),
    "UnsqueezeBackward1": ("a.unsqueeze_(dim)", "g is squeezed back"),
    "TransposeBackward1": ("a.transpose_(d0, d1)", "g is transposed back"),
    "VarMeanBackward0": ("var_mean(a)", "2 (a - mean) / (n - correction) * g_var + g_mean / n"),
    "StdMeanBackward0": ("std_mean(a)", "(a - mean) / ((n - correction) std) * g_std + "
                         "g_mean / n"),
    "AminmaxBackward0": ("aminmax(a)", "g_min and g_max each split evenly among their ties"),
    "NansumBackward0": ("nansum(a)", "g where a is not nan, 0 at the nans"),
    "DistBackward0": ("norm_p(a - b)", "grad_a = g * d norm/d(a - b), grad_b = -grad_a"),
    "RenormBackward0": ("renorm(a, p, dim, maxnorm)", "g where a slice's norm <= maxnorm, "
                        "else the derivative of a * maxnorm / (norm + 1e-7)"),
}

# issue 6's two-input ops (ops/binary.py)
RULES.update({
    "CopysignBackward0": ("copysign(a, b)", "d/da = sign(a) * sign(b) (0 at a = 0), d/db = 0"),
    "CopysignBackward1": ("copysign(a, c) (c a number)", "d/da = sign(a) * sign(c) (0 at 0)"),
    "DivBackward2": ("div(a, b, rounding_mode)", "a step function: both gradients are 0"),
    "FmaxBackward0": ("fmax(a, b), nan ignored", "g to a where a >= b or b is nan, else to b"),
    "FminBackward0": ("fmin(a, b), nan ignored", "g to a where a <= b or b is nan, else to b"),
    "FmodBackward0": ("fmod(a, c) (c a number)", "d/da = 1"),
    "FmodBackward1": ("fmod(a, b)", "d/da = 1, d/db = -trunc(a / b)"),
    "LdexpBackward0": ("a * 2**b", "d/da = 2**b, d/db = a * 2**b * log(2)"),
    "Logaddexp2Backward0": ("log2(2**a + 2**b)", "d/da = 1 / (1 + 2**(b - a)), d/db alike"),
    "NextafterBackward0": ("nextafter(a, b)", "d/da = 1 (0 where a == b), d/db = 0"),
    "RsubBackward0": ("b - alpha * a", "d/da = -alpha, d/db = 1"),
})

#: The letters the rules use for each input of a few nodes (default: a, b), so that the
#: table and the picture name saved values and constants as the rule does.
SAVED_NAMES = {
    "PowBackward0": ("y",),
    "PowBackward2": ("b",),
    "ClampBackward1": ("a", "min", "max"),
}


def describe_rule(node) -> str:
    """The local derivative rule of ``node`` (a Node or a grad_fn name) in words."""
    name = node if isinstance(node, str) else type(node).__name__
    entry = RULES.get(name)
    if entry is not None:
        return entry[1]
    # a custom Function's node (a FunctionCtx), told by its class name: this module sits
    # below autograd.function in the imports (the forward-mode machinery of ops reports here)
    if not isinstance(node, str) and any(c.__name__ == "FunctionCtx"
                                         for c in type(node).__mro__):
        return f"custom Function: the rule is {name[:-len('Backward')]}.backward()"
    return (f"no rule recorded for {name} (retrograd.autograd.trace_rules.RULES has no entry); "
            "its vjp in retrograd.ops computes it")


def describe_forward(node) -> str | None:
    """The forward formula of ``node`` (``'a * b'``), or None if unknown."""
    name = node if isinstance(node, str) else type(node).__name__
    entry = RULES.get(name)
    return entry[0] if entry is not None else None


def saved_slot_names(node) -> tuple:
    """A name for each entry of ``node.saved``: the rule's letters (a, b), then result."""
    name = type(node).__name__
    n_in = len(node.next)
    inputs = SAVED_NAMES.get(name)
    if inputs is None:
        inputs = ("a", "b") if n_in == 2 else ("a",) if n_in == 1 else tuple(
            f"input{i}" for i in range(n_in))
    # ops.defop nodes declare what they save (1: the inputs, 2: the output, 3: both), in
    # that order, then any extras; other nodes (custom Functions) name inputs then result
    saves = getattr(type(node), "saves", 3)
    base = (inputs if saves & 1 else ()) + (("result",) if saves & 2 else ())
    return base + tuple(f"extra{i}" for i in range(8))


#: Numbers a node keeps as parameters (not inputs), named as its rule names them.
PARAM_NAMES = {
    "PowBackward0": ("p",),
    "PowBackward2": ("c",),
}


def param_constants(node) -> list:
    """``[(name, repr)]`` of the numbers a node keeps as parameters (the 3 of y ** 3)."""
    names = PARAM_NAMES.get(type(node).__name__, ())
    return [(n, repr(v)) for n, v in zip(names, getattr(node, "params", ()) or ())]


def saved_constants(node) -> list:
    """``[(input index, repr)]`` of the non-tensor inputs ``node`` saved (the 2 of 2 * x)."""
    saved = node.saved
    if not saved or not getattr(type(node), "saves", 3) & 1:
        return []
    return [(i, repr(v)) for i, v in enumerate(saved[:len(node.next)])
            if isinstance(v, (int, float, bool))]
