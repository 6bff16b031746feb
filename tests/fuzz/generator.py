"""Seeded generator of straight-line programs (``generate(seed) -> Program``).

Every statement is tried in PyTorch while the program is being written, so the generator
knows each value's shape, dtype and flags without a shape function per op; a statement that
raises in PyTorch is usually dropped, sometimes kept (then both libraries must raise the same
class).  Same seed, same program.
"""

from __future__ import annotations

import dataclasses
import random
import warnings

import numpy as np

from . import ops_table
from .program import CONTEXTS, NAME, Leaf, Program, Step

KIND = {"float64": "float", "float32": "float", "int64": "int", "bool": "bool"}


@dataclasses.dataclass
class Val:
    name: str
    shape: tuple
    dtype: str
    requires_grad: bool
    is_leaf: bool
    view_chain: tuple = ()
    version: int = 0  # PyTorch's version counter when the value was made (see act_hook)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def numel(self):
        return int(np.prod(self.shape)) if self.shape else 1

    @property
    def kind(self):
        return KIND.get(self.dtype, "other")


def dtype_name(t) -> str:
    return str(t.dtype).rsplit(".", 1)[-1]


class Generator:
    def __init__(self, seed: int, torch, max_steps: int = 14):
        self.rng = random.Random(seed)
        self.seed = seed
        self.T = torch
        self.ns = {"T": torch, "LOG": []}
        self.steps: list[Step] = []
        self.vals: dict[str, Val] = {}
        self.hooks: list[str] = []
        self.retained: set = set()
        self.touched_no_grad: set = set()  # changed in place under no_grad
        self.count = 0
        self.group = 0
        self.ctx = None
        self.max_steps = max_steps
        self.weights = [(s, s.weight) for s in ops_table.TABLE]

    # ------------------------------------------------------------------ helpers for ops_table
    def name(self, prefix="v"):
        self.count += 1
        return f"{prefix}{self.count - 1}"

    def dim(self, a: Val) -> int:
        nd = max(a.ndim, 1)
        if self.rng.random() < 0.02:
            return nd  # out of range: both must raise IndexError
        return self.rng.randrange(-nd, nd)

    def scalar(self, positive=False) -> str:
        v = self.rng.choice([0.5, 2.0, 1.5, 3, 2, 0.25, -1.5, -2, 0.0])
        if positive:
            v = abs(v) or 1.5
        return repr(v)

    def fresh(self, shape, dtype="float64", requires_grad=None) -> str:
        """A new leaf of this shape, written before the statement being built."""
        if dtype not in KIND:
            dtype = "float64"
        if requires_grad is None:
            requires_grad = KIND[dtype] == "float" and self.rng.random() < 0.8
        arr = self._data(tuple(shape), dtype)
        return self._leaf(Leaf(arr, dtype, requires_grad))

    def fresh_index(self, shape, size) -> str:
        arr = np.array([self.rng.randrange(size) for _ in range(int(np.prod(shape)))],
                       dtype=np.int64).reshape(shape)
        return self._leaf(Leaf(arr, "int64", False))

    def other(self, a: Val, same_shape=False, any_shape=False, into=False) -> str | None:
        """Another tensor to combine with ``a``: broadcastable to it (``into``: to its shape)."""
        rng = self.rng
        if rng.random() < 0.03 and a.ndim:
            return self.fresh(tuple(s + 1 for s in a.shape))  # does not broadcast: an error
        def fits(b: Val):
            if b.kind == "bool" or b.kind == "other":
                return False
            if same_shape:
                return b.shape == a.shape
            if any_shape:
                return True
            try:
                s = np.broadcast_shapes(a.shape, b.shape)
            except ValueError:
                return False
            return not into or s == a.shape
        cands = [b for b in self.vals.values() if fits(b)]
        if cands and rng.random() < 0.6:
            return rng.choice(cands).name
        shape = list(a.shape)
        if not same_shape:
            shape = shape[rng.randint(0, len(shape)):] if rng.random() < 0.3 else shape
            shape = [1 if rng.random() < 0.25 else s for s in shape]
            if not into and rng.random() < 0.15:
                shape = [2] + shape if len(shape) < 4 else shape
        dtype = a.dtype if a.kind == "float" else "float64"
        if rng.random() < 0.1:
            dtype = rng.choice(["float32", "int64", "float64"])
        return self.fresh(tuple(shape), dtype)

    # ------------------------------------------------------------------ data
    def _data(self, shape, dtype):
        rng = self.rng
        n = int(np.prod(shape)) if shape else 1
        if KIND[dtype] == "bool":
            return np.array([rng.random() < 0.5 for _ in range(n)], dtype=bool).reshape(shape)
        if KIND[dtype] == "int":
            return np.array([rng.randint(-3, 4) for _ in range(n)], dtype=np.int64).reshape(shape)
        vals = []
        for _ in range(n):
            r = rng.random()
            if r < 0.08:
                vals.append(0.0)
            elif r < 0.14 and vals:
                vals.append(rng.choice(vals))  # ties: max/sort/amax must share or pick alike
            else:
                vals.append(round(rng.gauss(0, 1.2), 2))
        return np.array(vals, dtype=np.float64).reshape(shape)

    def _random_shape(self):
        rng = self.rng
        ndim = rng.choices([0, 1, 2, 3], [0.15, 0.3, 0.35, 0.2])[0]
        while True:
            shape = tuple(rng.choices([0, 1, 2, 3, 4], [0.05, 0.2, 0.35, 0.3, 0.1])[0]
                          for _ in range(ndim))
            if int(np.prod(shape)) <= 24:
                return shape

    # ------------------------------------------------------------------ running statements
    def _try(self, src, ctx=None):
        if ctx is not None:
            src = CONTEXTS[ctx] + "\n    " + src.replace("\n", "\n    ")
        try:
            exec(compile(src, "<fuzz>", "exec"), self.ns)
        except Exception as e:  # noqa: BLE001 - any exception is an outcome to compare
            return e
        return None

    def _refresh(self):
        """Flags change under in-place ops (requires_grad, is_leaf): read them back."""
        for name, v in list(self.vals.items()):
            t = self.ns.get(name)
            try:
                v.requires_grad, v.is_leaf = bool(t.requires_grad), bool(t.is_leaf)
            except RuntimeError:  # a no_grad view whose base changed: not used further
                del self.vals[name]
                continue
            v.shape = tuple(t.shape)

    def _leaf(self, leaf: Leaf) -> str:
        name = self.name()
        st = Step(target=name, leaf=leaf, op="leaf", kind="leaf")
        err = self._try(st.render(set()))
        assert err is None, err
        self.steps.append(st)
        self.vals[name] = Val(name, tuple(leaf.array.shape), leaf.dtype, leaf.requires_grad,
                              True)
        return name

    def _commit(self, st: Step, keep_error=0.25, ctx=None):
        """Try the statement in PyTorch; keep it if it runs (or, sometimes, if it raises)."""
        err = self._try(st.text, ctx)
        if err is not None:
            if ctx is not None or self.rng.random() >= keep_error:
                self.ns.pop(st.target, None)
                return False
            st.ctx = None
            self.steps.append(st)
            return True
        st.ctx, st.group = ctx, self.group
        if st.target and st.target.startswith("v"):
            t = self.ns[st.target]
            if not isinstance(t, self.T.Tensor):
                self.ns.pop(st.target)
                return False
            self.vals[st.target] = Val(st.target, tuple(t.shape), dtype_name(t),
                                       bool(t.requires_grad), bool(t.is_leaf), st.view_chain,
                                       self._made_at(st.target, t))
        self.steps.append(st)
        self._refresh()
        return True

    # ------------------------------------------------------------------ actions
    def _pick(self, pred=lambda v: True) -> Val | None:
        cands = [v for v in self.vals.values() if pred(v)]
        if not cands:
            return None
        # recent values more often: longer chains
        weights = [1 + i for i in range(len(cands))]
        return self.rng.choices(cands, weights)[0]

    def act_op(self, ctx=None):
        a = self._pick()
        specs = [(s, w) for s, w in self.weights
                 if a.kind in s.accepts and a.ndim >= s.min_ndim]
        if a.kind not in ("float",) and self.rng.random() < 0.05:
            specs = self.weights  # an op on a dtype it refuses: both must raise alike
        spec = self.rng.choices([s for s, _ in specs], [w for _, w in specs])[0]
        try:
            expr = spec.build(self, a)
        except (IndexError, ValueError):  # an out-of-range dim drawn for a size lookup
            return False
        if expr is None:
            return False
        target = self.name()
        chain = a.view_chain + (spec.name,) if spec.view else ()
        multi_item = spec.name == "getitem" and "," in expr.split("[", 1)[1]
        st = Step(f"{target} = {expr}", "getitem_multi" if multi_item else spec.name,
                  spec.kind, target, view_chain=chain)
        return self._commit(st, ctx=ctx)

    def act_inplace(self, ctx=None):
        def ok(v):
            if v.is_leaf and v.requires_grad and ctx is None:
                return self.rng.random() < 0.1  # in-place on a leaf that requires grad: error
            return True
        a = self._pick(ok)
        if a is None:
            return False
        made = ops_table.inplace_statement(self, a)
        if made is None:
            return False
        name, text = made
        st = Step(text, name, "inplace", None, view_chain=a.view_chain, on=a.name)
        if ctx is not None:
            self.touched_no_grad.add(a.name)
        return self._commit(st, ctx=ctx)

    def act_detach(self):
        a = self._pick()
        target = self.name()
        return self._commit(Step(f"{target} = {a.name}.detach()", "detach", "detach", target,
                                 view_chain=a.view_chain + ("detach",)))

    def _hook_crashes_torch(self, v: Val) -> bool:
        """PyTorch 2.13 segfaults in register_hook on a view whose memory was written since
        the view was made by a write its graph did not see: under no_grad, or through another
        alias (``v3[0:1] = ...`` where ``v4 = v3.detach()`` and ``v5 = v4.ravel()``, then
        ``v4.requires_grad_()``, ``v5.register_hook(...)``: seed 9009322).  The view's version
        counter (shared with its base and every alias) tells: changed since it was made.
        Views that the table does not mark (ravel, reshape, squeeze, an einsum result...)
        count too, so this asks PyTorch, not ``view_chain``."""
        t = self.ns.get(v.name)
        return t is None or (t._is_view() and t._version != v.version)

    def _made_at(self, target, t) -> int:
        """The version counter ``t`` had when it was made: an op that returns its input
        itself (``to`` its own dtype, ``contiguous`` of a contiguous tensor) makes no new
        tensor, so a name bound to an older tensor takes that tensor's version (seed
        20226372: ``v3 = v1.to(T.float64)`` after a no_grad write to the view v1, then
        ``v3.register_hook`` crashed PyTorch)."""
        for name, v in self.vals.items():
            if name != target and self.ns.get(name) is t:
                return v.version
        return t._version

    def act_hook(self):
        # never on a view of the table, nor on a tensor changed in place under no_grad; and
        # never where PyTorch would crash (_hook_crashes_torch)
        a = self._pick(lambda v: (v.requires_grad or self.rng.random() < 0.05)
                       and not v.view_chain and v.name not in self.touched_no_grad
                       and not self._hook_crashes_torch(v))
        if a is None:
            return False
        h = self.name("h")
        fn = self.rng.choice([
            f"lambda g: LOG.append(('{a.name}', g.detach().clone()))",
            "lambda g: g * 2",
            "lambda g: None",
        ])
        st = Step(f"{h} = {a.name}.register_hook({fn})", "register_hook", "hook", h)
        if self._commit(st) and st.ctx is None and self.ns.get(h) is not None:
            self.hooks.append(h)
            return True
        return False

    def act_misc(self):
        r = self.rng.random()
        if r < 0.4 and self.hooks:
            h = self.hooks.pop(self.rng.randrange(len(self.hooks)))
            return self._commit(Step(f"{h}.remove()", "remove_hook", "hook"))
        if r < 0.7:
            # once per tensor: retain_grad twice, then register_hook, crashed PyTorch 2.13
            # and never on a later output of a multi-output node (std_mean(...)[1], qr(...)[1],
            # svd(...)[1]): changed in place after retain_grad, PyTorch 2.13 segfaults in
            # backward (seed 19879210; tests/fuzz/test_torch_crash_guard.py)
            a = self._pick(lambda v: not v.is_leaf and v.name not in self.retained
                           and not v.view_chain and v.name not in self.touched_no_grad
                           and getattr(self.ns.get(v.name), "output_nr", 0) == 0)
            if a is None:
                return False
            self.retained.add(a.name)
            return self._commit(Step(f"{a.name}.retain_grad()", "retain_grad", "flag"))
        a = self._pick(lambda v: v.kind == "float" and not v.requires_grad)
        return a is not None and self._commit(
            Step(f"{a.name}.requires_grad_()", "requires_grad_", "flag"))

    def act_block(self):
        self.group += 1
        ctx = self.rng.choice(list(CONTEXTS))
        made = 0
        for _ in range(self.rng.randint(1, 3)):
            act = self.act_inplace if self.rng.random() < 0.4 else self.act_op
            made += bool(act(ctx=ctx))
        self.group += 1
        return made

    # ------------------------------------------------------------------ the program
    def generate(self) -> Program:
        rng = self.rng
        for _ in range(rng.randint(1, 3)):
            kind = rng.choices(["float64", "float32", "int64", "bool"], [0.75, 0.1, 0.1, 0.05])[0]
            self.fresh(self._random_shape(), kind)
        n = rng.randint(3, self.max_steps)
        tries = 0
        while len(self.steps) < n and tries < 4 * n:
            tries += 1
            r = rng.random()
            if r < 0.08:
                kind = rng.choices(["float64", "float32", "int64"], [0.8, 0.1, 0.1])[0]
                self.fresh(self._random_shape(), kind)
            elif r < 0.62:
                self.act_op()
            elif r < 0.76:
                self.act_inplace()
            elif r < 0.80:
                self.act_detach()
            elif r < 0.87:
                self.act_hook()
            elif r < 0.91:
                self.act_misc()
            else:
                self.act_block()
        self._ending()
        return Program(self.seed, self.steps)

    def _ending(self):
        rng = self.rng
        vals = list(self.vals.values())
        terms = [v.name for v in vals if v.kind == "float" and v.requires_grad]
        if not terms:
            terms = [v.name for v in vals if v.kind == "float"][-1:]
        if not terms:
            return
        terms = terms[-3:] if rng.random() < 0.7 else rng.sample(terms, 1)
        leaves = [v.name for v in vals if v.is_leaf and v.requires_grad]

        def loss(alive):
            # weights from the values themselves, well conditioned (cos of 1e40 is noise)
            ts = [f"({t} * {t}.detach().tanh()).sum()" for t in terms if t in alive]
            return "loss = " + " + ".join(ts) if ts else None

        self.steps.append(Step(op="loss", kind="end", target="loss", dyn=loss))

        def names(alive):
            return ", ".join(n for n in leaves if n in alive)

        def needs(*deps):
            def wrap(f):
                return lambda alive: f(alive) if set(deps) <= alive else None
            return wrap

        form = rng.choices(["plain", "retain", "twice", "inputs", "grad2", "grad"],
                           [0.3, 0.15, 0.1, 0.1, 0.25, 0.1])[0]
        add = lambda f, op="backward": self.steps.append(Step(op=op, kind="end", dyn=f))
        if form == "plain":
            add(needs("loss")(lambda alive: "loss.backward()"))
        elif form in ("retain", "twice"):
            kw = "retain_graph=True" if form == "retain" else ""
            add(needs("loss")(lambda alive: f"loss.backward({kw})"))
            add(needs("loss")(lambda alive: "loss.backward()"))
        elif form == "inputs":
            add(needs("loss")(lambda alive: f"loss.backward(inputs=[{names(alive)}])"
                              if names(alive) else None))
        else:
            create = "create_graph=True" if form == "grad2" else "retain_graph=True"

            def grad(alive):
                if "loss" not in alive or not names(alive):
                    return None
                return (f"gs = T.autograd.grad(loss, [{names(alive)}], {create}, "
                        "allow_unused=True)")
            self.steps.append(Step(op="autograd.grad", kind="end", target="gs", dyn=grad))
            if form == "grad2":
                self.steps.append(Step(
                    op="loss2", kind="end", target="loss2",
                    dyn=needs("gs")(lambda alive: "loss2 = sum((g * g.detach().tanh()).sum() "
                                    "for g in gs if g is not None)")))
                add(needs("loss2")(lambda alive: "loss2.backward()"), "backward2")
            else:
                add(needs("loss")(lambda alive: "loss.backward()"))


def generate(seed: int, torch, max_steps: int = 14) -> Program:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return Generator(seed, torch, max_steps).generate()


__all__ = ["generate", "Generator", "Val", "NAME"]
