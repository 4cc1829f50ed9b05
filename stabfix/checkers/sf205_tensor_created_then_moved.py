"""SF205 tensor-created-then-moved: `torch.zeros(n).cuda()` on a training step or in a module's `forward`.

A torch factory called without `device=` builds its tensor in host memory; a `.cuda()` / `.to(device)`
after it allocates it again on the device and copies it over, every step. A query over the model: a move
to an accelerator (`calls/devices.py`) of a factory call, directly, through views and casts
(`calls/torch_ops.py`) or other methods of a tensor `values` shows is built from factories alone
(`torch.ones(n, n).tril()`), or through a name bound to one in the same function and read nowhere else;
where a training step runs it (`steps.step_path`) or a module's `forward` (`calls/module_classes.py`), on every call:
not only under a lazy initialisation (`if self.cache is None: self.cache = ...`, `source/lazy_inits.py`), which runs once.
Left alone: a factory that names a device, pins memory, draws from a `generator=` (a seeded host generator
draws only on the CPU) or makes a leaf that requires grad; `*_like` factories; `torch.from_numpy`.

Fix: the move's device at creation. Safe for factories whose values do not depend on where they are
computed (`EXACT`) and a move that only moves; unsafe for random factories (the device's generator draws
other numbers), `arange`/`linspace` and other methods (a kernel may round differently); none for a name.
"""

from __future__ import annotations

import ast
from typing import Optional

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.fixes.device_moves import keyword
from stabfix.fixes.syntax import with_chain_root
from stabfix.model.calls import torch_ops
from stabfix.model.calls.devices import DeviceKinds
from stabfix.model.calls.module_classes import ModuleClasses
from stabfix.model.flow.values import TORCH_FACTORIES
from stabfix.model.source.syntax import code_of
from stabfix.model.training.step_frames import Frame
from stabfix.model.training.step_recognition import STEP_TOKENS
from stabfix.shape import Shape

# factories with a `device=` keyword (not the legacy `torch.Tensor(...)`, `from_numpy`; `*_like` ones build where their input lives)
FACTORIES = frozenset(f"torch.{name}" for name in TORCH_FACTORIES | {"tensor", "as_tensor", "normal", "bernoulli"} if not name.endswith("_like"))
# factories whose values are the same wherever they are computed
EXACT = frozenset({f"torch.{name}" for name in ("zeros", "ones", "full", "empty", "eye", "tensor", "as_tensor",
                                                "tril_indices", "triu_indices")})
RANDOM = frozenset({f"torch.{name}" for name in ("rand", "randn", "randint", "randperm", "normal", "bernoulli")})
# a device already named, pinned memory for an asynchronous copy, or a generator (a seeded `torch.Generator()` lives on
# the CPU and draws only there: the same numbers on every machine)
BLOCKING = frozenset({"device", "pin_memory", "generator"})
_FACTORY_NAMES = frozenset(name.rsplit(".", 1)[1] for name in FACTORIES)


class TensorCreatedThenMoved(Checker):
    code = "SF205"
    tokens = (".cuda(", ".to(")
    # reported on a training step (`steps.step_path`: STEP_TOKENS) or in what a `forward` of this file runs
    also_needs = (("torch",), (*STEP_TOKENS, "forward"))
    needs = ("names", "steps", "values")

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:
        # reported on a `.cuda()`/`.to()` of a factory call naming no device (nor pinned memory, nor a generator): the
        # factory sits inside what is moved, or in an assignment to a name the move reads
        assigned: set[str] = set()
        for factory in shape.calls(*shape.spellings(*_FACTORY_NAMES)):
            if any(type(a) is ast.Starred for a in factory.args) or any(k.arg in BLOCKING or not k.arg for k in factory.keywords):
                continue
            if shape.receiver_of(factory, "cuda", "to"):
                return True  # `torch.zeros(n).cuda()`, also through views and casts
            assigned |= shape.bound_by(factory)
        return bool(assigned) and any(type(n) is ast.Name and n.id in assigned for move in shape.calls("cuda", "to")
                                      if type(move.func) is ast.Attribute for n in ast.walk(move.func.value))

    def __init__(self, context) -> None:
        super().__init__(context)
        self.steps = self.model.steps
        self.candidates: list[tuple[cst.Call, tuple[Frame, ...], tuple[cst.FunctionDef, ...]]] = []
        self.stores: set[int] = set()  # names assigned to (`x = ...`): the binding model lists them with the reads

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        targets = [node.target]
        while targets:
            target = targets.pop()
            if type(target) is cst.Name:
                self.stores.add(id(target))
            elif type(target) in (cst.Tuple, cst.List):
                targets += [element.value for element in target.elements]

    def visit_Call(self, node: cst.Call) -> None:
        if type(node.func) is cst.Attribute and node.func.attr.value in ("cuda", "to"):
            self.candidates.append((node, self.steps.frames(), self.model.enclosing.enclosing_functions()))

    def leave_Module(self, original_node: cst.Module) -> None:
        names = self.model.names
        classes = ModuleClasses(names, self.context.project)
        devices = DeviceKinds(names)
        for move, frames, functions in self.candidates:
            if names.qualify(move.func) is not None or not devices.moves_to_accelerator(move):
                continue
            source = self._factory_of(move.func.value, functions, move)  # type: ignore[attr-defined]
            if source is None:
                continue
            factory, named, computed = source
            owner = next((o for f in reversed(functions) if (o := classes.forward_reach(f, every_call=True)) is not None), None)
            in_step = self.steps.step_path(frames) is not None
            if not in_step and owner is None or any(classes.lazy_inits.runs_once(move, f, self.model.tree.parent) for f in functions):
                continue  # not per call: neither a step nor a forward, or a lazy initialisation (once per object)
            where = f"every call of `{owner.name.value}.forward`" if owner is not None and not in_step else "every training step"
            fix = None if named else self._fix(move, factory, computed)
            self.report(move, self._message(move, factory, where, named), fix)

    def _factory_of(self, expr: cst.BaseExpression, functions, move: cst.Call) -> Optional[tuple[cst.Call, bool, bool]]:
        """The factory call a value comes from, through views, casts and `Variable(t)` (or other methods of a tensor
        `values` shows to be built from factories alone: `torch.ones(n, n).tril()`), or a name bound to one in the same
        function by every binding that may hold but the move's own; (call, named, computed by a method other than a view or cast)."""
        qualify = self.model.names.qualify
        named = computed = False
        while True:
            if type(expr) is cst.Call and (qualify(expr.func) or "") in FACTORIES:
                return (expr, named, computed) if self._builds_on_host(expr) else None
            wrapper = type(expr) is cst.Call and torch_ops.is_wrapper(qualify(expr.func)) and self._builds_on_host(expr)
            method = wrapper or type(expr) is cst.Subscript or (
                type(expr) is cst.Call and type(expr.func) is cst.Attribute and qualify(expr.func) is None)
            peeled = torch_ops.step(expr, qualify) if method else None
            if peeled is not None and (wrapper or peeled[1].kind in ("view", "cast", "integer")):
                expr = peeled[0]
                continue
            if method and not wrapper and type(expr) is cst.Call and peeled is None and self.model.values.value_of(expr).constant:
                expr, computed = expr.func.value, True  # type: ignore[attr-defined]
                continue
            if type(expr) is cst.Name and not named and functions:
                bindings = [b for b in self.model.names.reaching(expr) if b.bound_value is not move]
                values = {id(b.bound_value): b.bound_value for b in bindings if b.kind == "assign"}
                if len(values) != 1 or len(bindings) != 1 or bindings[0].scope.node is not functions[-1] \
                        or self._other_reads(expr, bindings[0], move):
                    return None  # filled or read on the host before the move (`m[i] = v`): built there on purpose
                expr, named = next(iter(values.values())), True
                continue
            return None

    def _other_reads(self, moved: cst.Name, binding, move: cst.Call) -> bool:
        """Whether the binding is read anywhere but in the move (`m[i] = v` between: host work) and a later read the move's rebinding reaches."""
        names = self.model.names
        use = names.uses.get(moved)
        for other, where in names.uses.items():
            if other is not moved and other.value == moved.value and id(other) not in self.stores and use is not None and where.scope is use.scope \
                    and binding in (reaching := names.reaching(other)) and not (where.order > use.order and any(b.bound_value is move for b in reaching)):
                return True
        return False

    def _builds_on_host(self, factory: cst.Call) -> bool:
        for arg in factory.args:
            if arg.star:
                return False
            if arg.keyword is not None and arg.keyword.value in BLOCKING:
                return False
            if arg.keyword is not None and arg.keyword.value == "requires_grad" and not (
                    type(arg.value) is cst.Name and arg.value.value == "False"):
                return False  # a leaf that requires grad: moving it makes a copy autograd records
        data = factory.args[0].value if factory.args and factory.args[0].keyword is None else None
        if data is not None and (self.model.names.qualify(factory.func) or "").endswith(("tensor", "as_tensor")):
            held = self.model.values.value_of(data)
            return not (held.tensor and not held.constant)  # `torch.tensor(t)` copies `t` where it lives
        return True

    def _fix(self, move: cst.Call, factory: cst.Call, computed: bool) -> Optional[Fix]:
        device = self._device_of_move(move)
        if device is None:
            return None
        qualified = self.model.names.qualify(factory.func) or ""
        built = factory.with_changes(args=[*factory.args, keyword("device", device)])
        inner = move.func.value  # type: ignore[attr-defined]
        replacement = with_chain_root(inner, factory, built).with_changes(lpar=move.lpar, rpar=move.rpar)
        spelled = f"device={code_of(device, 30)}"
        if qualified in EXACT and not computed:
            return Fix("safe", f"build it on the device: `{spelled}` at creation", {move: replacement})
        why = "the device's random generator draws other numbers" if qualified in RANDOM else \
            "the device's kernels may round the last place differently"
        return Fix("unsafe", f"build it on the device: `{spelled}` at creation (unsafe: {why})", {move: replacement})

    def _device_of_move(self, move: cst.Call) -> Optional[cst.BaseExpression]:
        """`"cuda"` for `.cuda()`, `device` for `.to(device)` / `.to(device, non_blocking=True)`; None otherwise."""
        if any(arg.star for arg in move.args):
            return None
        others = [arg for arg in move.args if arg.keyword is None or arg.keyword.value != "non_blocking"]
        if move.func.attr.value == "cuda":  # type: ignore[attr-defined]
            return cst.SimpleString('"cuda"') if not others else None
        devices = DeviceKinds(self.model.names)
        target, device = devices.move_target(move)
        if target != "device" or device is None or any(arg.value is not device for arg in others):
            return None
        if not devices.names_a_device(device):
            return None  # `.to(other)` takes another tensor's device and dtype: `device=` cannot say that
        return device.with_changes(lpar=[], rpar=[]) if type(device) in (cst.Name, cst.Attribute) else device

    def _message(self, move: cst.Call, factory: cst.Call, where: str, named: bool) -> str:
        via = " (through a name)" if named else ""
        return (
            f"`{code_of(factory, 50)}` builds its tensor in host memory and `{code_of(move, 60)}`{via} copies it to the device "
            f"on {where}: an allocation, a host-to-device copy and a sync point each time; pass the device at "
            f"creation (`device=`)"
        )

