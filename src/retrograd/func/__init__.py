"""``retrograd.func``: torch.func's composable transforms.

grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd, hessian, functional_call and
vmap (real batching: ``batched.py`` holds the BatchedTensor and the dispatch,
``batching_rules.py`` the rules per kind of op).
"""

from . import batching_rules  # noqa: F401  (attaches the rules to the op registry)
from . import batched_backward  # noqa: F401  (autograd.grad(is_grads_batched=True)'s pass)
from .functional_call import functional_call
from .transforms import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from .vmap import vmap

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "linearize", "vjp", "vmap"]
