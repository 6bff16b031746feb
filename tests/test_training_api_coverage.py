"""The public names of PyTorch 2.13's training-stack namespaces (torch.nn and its
functional/init/utils/attention/grad, torch.optim and its schedulers and swa_utils,
torch.utils.data, torch.backends) all exist in retrograd, except the ones listed here with
the reason.  A name added to retrograd must leave the list (the test says which), so the
list is always the true state of the gaps."""

from __future__ import annotations

import importlib
import inspect

import pytest

torch = pytest.importorskip("torch")

_SPARSE = "retrograd has no sparse tensors"
_QUANT = "retrograd has no quantization"
_DATAPIPES = "torchdata's DataPipes, deprecated in PyTorch and not carried over"
_INTERNAL = "PyTorch-internal helper (TorchScript or __torch_function__ plumbing)"

KNOWN_MISSING = {
    "nn": {
        "intrinsic": _QUANT, "qat": _QUANT, "quantizable": _QUANT, "quantized": _QUANT,
    },
    "nn.functional": {
        "BroadcastingList1": _INTERNAL, "BroadcastingList2": _INTERNAL,
        "BroadcastingList3": _INTERNAL, "assert_int_or_pair": _INTERNAL,
        "boolean_dispatch": _INTERNAL, "handle_torch_function": _INTERNAL,
        "has_torch_function": _INTERNAL, "has_torch_function_unary": _INTERNAL,
        "has_torch_function_variadic": _INTERNAL, "Tensor": "a re-export of torch.Tensor",
        "grouped_mm": "low-precision GPU grouped matmul (needs bfloat16/float8)",
        "scaled_grouped_mm": "float8 GPU kernel", "scaled_mm": "float8 GPU kernel",
        "ScalingType": "float8 scaled_mm's options", "SwizzleType": "float8 scaled_mm's options",
    },
    "nn.init": {"Tensor": "a re-export of torch.Tensor"},
    "nn.utils": {
        "convert_conv2d_weight_memory_format": "retrograd has no memory formats",
        "convert_conv3d_weight_memory_format": "retrograd has no memory formats",
        "memory_format": "retrograd has no memory formats",
    },
    "nn.utils.rnn": {"PackedSequence_": _INTERNAL, "bind": _INTERNAL,
                     "copy_method_params": _INTERNAL},
    "nn.utils.parametrize": {
        "OpaqueBase": _INTERNAL, "get_swap_module_params_on_conversion": _INTERNAL,
        "is_opaque_reference_type": _INTERNAL, "is_traceable_wrapper_subclass": _INTERNAL,
    },
    "nn.utils.parametrizations": {},
    "nn.attention": {
        "flex_attention": "a submodule built on torch.compile (user score functions compiled "
                          "into kernels); imported below so the list does not depend on "
                          "whether another test loaded it",
        "SDPAParams": "fused-kernel selection internals; retrograd has one (math) kernel",
        "activate_flash_attention_impl": "flash-attention kernel registry (GPU)",
        "can_use_efficient_attention": "fused-kernel selection internals",
        "can_use_flash_attention": "fused-kernel selection internals",
        "current_flash_attention_impl": "flash-attention kernel registry (GPU)",
        "list_flash_attention_impls": "flash-attention kernel registry (GPU)",
        "register_flash_attention_impl": "flash-attention kernel registry (GPU)",
        "restore_flash_attention_impl": "flash-attention kernel registry (GPU)",
    },
    "nn.grad": {},
    "optim": {
        "SparseAdam": _SPARSE,
        "swap_in_optimizer_params_and_state": "swaps parameters for tensor subclasses "
                                              "(PyTorch's FSDP/DTensor machinery)",
    },
    "optim.lr_scheduler": {"Optimizer": "a re-export", "Tensor": "a re-export"},
    "optim.swa_utils": {},
    "utils.data": {
        "DFIterDataPipe": _DATAPIPES, "DataChunk": _DATAPIPES, "IterDataPipe": _DATAPIPES,
        "MapDataPipe": _DATAPIPES, "argument_validation": _DATAPIPES, "datapipes": _DATAPIPES,
        "functional_datapipe": _DATAPIPES, "graph": _DATAPIPES, "graph_settings": _DATAPIPES,
        "guaranteed_datapipes_determinism": _DATAPIPES, "non_deterministic": _DATAPIPES,
        "runtime_validation": _DATAPIPES, "runtime_validation_disabled": _DATAPIPES,
    },
    "backends": {
        name: "a PyTorch build or kernel-library switch with no counterpart in retrograd"
        for name in ("cusparselt", "kleidiai", "m", "mha", "miopen", "mkl", "nnpack",
                     "openmp", "opt_einsum", "python_native", "quantized")
    },
}


# torch submodules that become attributes of their package only once something imports
# them: imported before the comparison, so its result does not depend on test order
LAZY_SUBMODULES = {"nn.attention": ("flex_attention",)}


def _public_torch_names(mod) -> set:
    """Names PyTorch itself defines there (not typing helpers, math, numpy...)."""
    names = set()
    for name in dir(mod):
        if name.startswith("_"):
            continue
        obj = getattr(mod, name)
        where = obj.__name__ if inspect.ismodule(obj) else getattr(obj, "__module__", None)
        if not isinstance(where, str) or not where.startswith("torch"):
            continue
        if inspect.ismodule(obj) and not obj.__name__.startswith(mod.__name__):
            continue  # an imported module (torch itself), not a submodule
        names.add(name)
    return names


@pytest.mark.parametrize("namespace", list(KNOWN_MISSING))
def test_every_public_name_exists_or_is_a_listed_gap(namespace):
    for lazy in LAZY_SUBMODULES.get(namespace, ()):
        importlib.import_module(f"torch.{namespace}.{lazy}")  # an attribute once imported
    theirs = importlib.import_module(f"torch.{namespace}")
    ours = importlib.import_module(f"retrograd.{namespace}")
    missing = {n for n in _public_torch_names(theirs) if not hasattr(ours, n)}
    listed = set(KNOWN_MISSING[namespace])
    assert missing - listed == set(), f"retrograd.{namespace} lacks {sorted(missing - listed)}"
    assert listed - missing == set(), (f"retrograd.{namespace} now has "
                                       f"{sorted(listed - missing)}: take them off the list")
