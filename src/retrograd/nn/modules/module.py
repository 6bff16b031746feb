"""``retrograd.nn.modules.module``: where PyTorch code imports Module and the global
module hooks from (``from torch.nn.modules.module import Module``)."""

from ..module import (  # noqa: F401
    Module, register_module_buffer_registration_hook, register_module_forward_hook,
    register_module_forward_pre_hook, register_module_full_backward_hook,
    register_module_full_backward_pre_hook, register_module_module_registration_hook,
    register_module_parameter_registration_hook,
)
