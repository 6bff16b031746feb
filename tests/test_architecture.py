"""The package's shape: imports point one way, and ``retrograd/__init__`` only assembles.

The import graph is read from the source (``ast``), every ``import`` statement counted,
including those inside functions: an import deferred into a function still makes the two
modules depend on each other, it only hides the cycle from Python's loader.  Importing
``a.b.c`` runs the packages ``a`` and ``a.b`` first, but those implicit parent imports are
not edges here (every package's ``__init__`` is an assembly point above its modules).
"""

from __future__ import annotations

import ast
import pathlib

import retrograd

SRC = pathlib.Path(retrograd.__file__).parent
PACKAGE = "retrograd"


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, pathlib.Path]:
    return {_module_name(p): p for p in sorted(SRC.rglob("*.py"))}


def _resolve(name: str, known) -> str | None:
    """The longest known module that ``name`` (a dotted import target) names or lies in."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph() -> dict[str, set[str]]:
    """module -> the modules of this package it imports (anywhere in its source)."""
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        is_pkg = path.name == "__init__.py"
        here = mod if is_pkg else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = here.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    prefix = ".".join(base + ([node.module] if node.module else []))
                else:
                    prefix = node.module or ""
                # ``from . import engine`` imports a submodule; ``from .x import f``, module x
                targets = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in mods else prefix
                           for a in node.names]
            for t in targets:
                if not t.startswith(PACKAGE):
                    continue
                target = _resolve(t, mods)
                if target is not None and target != mod:
                    graph[mod].add(target)
    return graph


def find_cycle(graph) -> list[str] | None:
    """One cycle of ``graph`` as a list of modules (first == last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return stack[stack.index(n):] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_imports_have_no_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_cycle_finder_finds_a_planted_cycle():
    # the check above must be able to fail
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


# The layers, lowest first (see retrograd/_assembly.py).  A module may import only from its
# own layer or a lower one; within a layer the cycle test above keeps the order.
LAYERS = [
    ["retrograd.dtypes", "retrograd.memory_formats", "retrograd.backend", "retrograd.random",
     "retrograd._formatting"],
    ["retrograd.autograd.grad_mode", "retrograd.autograd.graph", "retrograd.autograd.engine",
     "retrograd.autograd.forward_state", "retrograd.autograd.leaf_layout",
     "retrograd.autograd.engine_hooks", "retrograd.autograd.accumulate_grad"],
    ["retrograd.tensor"],
    ["retrograd.ops", "retrograd.ops.*"],
    ["retrograd._creation", "retrograd.autograd", "retrograd.autograd.*"],
    ["retrograd.viz", "retrograd.viz.*"],
    # distributed (over mpi4py) needs only tensors; nn.parallel (DDP, in nn.*) builds on it
    ["retrograd._assembly", "retrograd.special", "retrograd.linalg", "retrograd.nn",
     "retrograd.nn.*", "retrograd.distributed", "retrograd.distributed.*",
     "retrograd.func", "retrograd.func.*"],
    # the training stack above nn: optimizers, data loading, save/load, device queries
    ["retrograd.optim", "retrograd.optim.*", "retrograd.utils", "retrograd.utils.*",
     "retrograd.compiler", "retrograd.compiler.*",
     "retrograd.serialization", "retrograd.cuda", "retrograd.cuda.*",
     "retrograd.backends", "retrograd.backends.*"],
    ["retrograd", "retrograd.__main__", "retrograd._cli", "retrograd._cli.*"],
]


def _layer_of(module: str) -> int:
    best = None
    for i, layer in enumerate(LAYERS):
        for pattern in layer:
            if module == pattern:
                return i
            if pattern.endswith(".*") and module.startswith(pattern[:-1]):
                best = i
    assert best is not None, f"{module} has no layer in tests/test_architecture.py LAYERS"
    return best


def test_imports_point_down_the_layers():
    upward = [f"{m} (layer {_layer_of(m)}) imports {t} (layer {_layer_of(t)})"
              for m, targets in import_graph().items() for t in sorted(targets)
              if _layer_of(t) > _layer_of(m)]
    assert not upward, "imports from a layer above:\n" + "\n".join(upward)


def test_package_init_only_reexports():
    # retrograd/__init__.py: a docstring, imports and __version__; nothing defined there
    tree = ast.parse((SRC / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and getattr(node.targets[0], "id", None) == "__version__"):
            continue
        raise AssertionError(f"retrograd/__init__.py line {node.lineno} defines something "
                             f"({ast.dump(node)[:80]}); define it in a module and re-export it")


def test_tensor_module_imports_no_op():
    # Tensor learns its methods from the op registry at assembly, not by importing ops
    assert not {t for t in import_graph()["retrograd.tensor"]
                if t.startswith(("retrograd.ops", "retrograd._creation", "retrograd.autograd."))
                and t not in ("retrograd.autograd.graph", "retrograd.autograd.grad_mode")}
