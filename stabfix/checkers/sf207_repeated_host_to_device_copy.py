"""SF207 repeated-host-to-device-copy: the same host tensor copied to the device on every step or `forward`.

A query over the model: a move to an accelerator (`calls/devices.py`: `.cuda()`, `.to(device)`,
`.to(x.device)`) of a tensor that already exists in host memory and does not change between the copies:
- a plain tensor attribute of a module class (`self.mask = torch.tril(torch.ones(n, n))` in `__init__`,
  every binding a host tensor: `flow/host_tensors.py`, a torch factory without `device=`,
  `torch.tensor`/`as_tensor`/`from_numpy`, views and casts of those, or a call of a method or function
  whose summary returns one, `self.mask = self._make_mask(n)`), moved in `forward` or a method `forward` runs (`calls/module_classes.py`), or
  on a training step; a buffer or `nn.Parameter` is moved by `model.to(device)` and is not such an attribute;
- a module-level host tensor (`CLASS_WEIGHTS = torch.tensor([...])`) moved on a step or in `forward`;
- a host tensor bound in the function before the loop that moves it (no binding inside the loop),
  moved on a training step: `w = torch.from_numpy(weights)` ... `for x, y in loader: ... w.cuda()`;
- `torch.tensor(<literal data>, device=...)` on a step or in `forward`: the constant crosses the bus again.
Not per call, left alone: a copy a lazy initialisation makes (`if self.table is None: self.table = ...`, also in a
method only that block calls: `source/lazy_inits.py`), once per object.
Not this rule's: a factory built and moved on the spot (`torch.zeros(n).cuda()`, also through a name read only
by the move): that is SF205's. SF207 is one value copied again and again; its cure is to copy it once.

Fix (unsafe, a module's attribute set once in `__init__`): `self.register_buffer("mask", value, persistent=False)`:
`.to()` moves it once (and `.half()` casts it too: a behaviour change). Elsewhere report-only.
"""

from __future__ import annotations

import ast
from typing import Optional

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.model.calls import torch_ops
from stabfix.model.calls.devices import DeviceKinds
from stabfix.model.calls.module_classes import ModuleClasses
from stabfix.model.flow.host_tensors import is_host_built
from stabfix.model.source.syntax import code_of
from stabfix.model.training.step_frames import Frame, LoopFrame
from stabfix.model.training.step_recognition import STEP_TOKENS
from stabfix.shape import Shape

LITERAL_BUILDERS = frozenset({"torch.tensor", "torch.as_tensor"})


class RepeatedHostToDeviceCopy(Checker):
    code = "SF207"
    tokens = (".cuda(", ".to(", "device=")
    # reported on a training step (`steps.step_path`: STEP_TOKENS) or in what a `forward` of this file runs
    also_needs = (("torch",), (*STEP_TOKENS, "forward"))
    needs = ("names", "steps", "values", "summaries")

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:
        # in a function: a `.cuda()`/`.to()` of an attribute or name the file assigns, or a `device=` call of literal data
        names, attributes = shape.assigned_names, shape.assigned_attributes
        if any(type(node) is ast.Name and node.id in names or type(node) is ast.Attribute and node.attr in attributes
               for move in shape.calls("cuda", "to") if type(move.func) is ast.Attribute
               and shape.enclosing_function(move) is not None for node in ast.walk(move.func.value)):
            return True
        return any(any(k.arg == "device" for k in call.keywords) and _literal_first(call)
                   and shape.enclosing_function(call) is not None for call in shape.all_calls())

    def __init__(self, context) -> None:
        super().__init__(context)
        self.candidates: list[tuple[cst.Call, tuple[Frame, ...], tuple[cst.FunctionDef, ...]]] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if type(func) is cst.Attribute and func.attr.value in ("cuda", "to") or \
                any(arg.keyword is not None and arg.keyword.value == "device" for arg in node.args):
            self.candidates.append((node, self.model.steps.frames(), self.model.enclosing.enclosing_functions()))

    def leave_Module(self, original_node: cst.Module) -> None:
        self.classes = classes = ModuleClasses(self.model.names, self.context.project)
        devices = DeviceKinds(self.model.names)
        for call, frames, functions in self.candidates:
            if not functions:
                continue
            owner = next((o for f in reversed(functions) if (o := classes.forward_reach(f, every_call=True)) is not None), None)
            in_step = self.model.steps.step_path(frames) is not None
            if not in_step and owner is None or any(classes.lazy_inits.runs_once(call, f, self.model.tree.parent) for f in functions):
                continue  # not per call: neither a step nor a forward, or a lazy initialisation (once per object)
            where = "every training step" if in_step else f"every call of `{owner.name.value}.forward`"
            if type(call.func) is cst.Attribute and call.func.attr.value in ("cuda", "to"):
                if self._to_accelerator(call, devices):
                    self._check_move(call, frames, functions[-1], in_step, where)
            elif (self.model.names.qualify(call.func) or "") in LITERAL_BUILDERS and call.args \
                    and _literal(call.args[0].value) and not _names_host(call, devices):
                self.report(call, f"`{code_of(call, 50)}` copies the same constant from the host to the device on "
                            f"{where}; build it once (before the loop, or `register_buffer` in `__init__`) and reuse it, or fill it "
                            "on the device (`torch.full((), v, device=...)`)")

    def _to_accelerator(self, move: cst.Call, devices: DeviceKinds) -> bool:
        if self.model.names.qualify(move.func) is not None:
            return False  # `torch.cuda(...)`-like module functions, not a tensor's method
        return devices.moves_to_accelerator(move)

    def _check_move(self, move: cst.Call, frames: tuple[Frame, ...], function: cst.FunctionDef, in_step: bool,
                    where: str) -> None:
        moved = move.func.value  # type: ignore[attr-defined]
        names = self.model.names
        while (peeled := torch_ops.step(moved, names.qualify)) is not None and peeled[1].kind in ("view", "cast"):
            moved = peeled[0]  # `self.table[:n].cuda()`, `self.mean.float().to(d)`: the held tensor is copied
        # the instance a method receives, whatever its first parameter is called
        owner = names.receiver_class(moved.value) if type(moved) is cst.Attribute and type(moved.value) is cst.Name else None
        if owner is not None:
            bindings = names.attribute_bindings(owner, moved.attr.value)  # type: ignore[union-attr]
            if bindings and all(b.bound_value is not None and self._host_tensor(b.bound_value) for b in bindings):
                fix = self._buffer_fix(bindings) if self.classes.is_module_class(owner) else None
                self.report(move, self._message(moved, move, where, "a plain tensor attribute (not a buffer)", fix is not None), fix)
        elif type(moved) is cst.Name and moved in names.uses:
            bindings = names.reaching(moved)
            if not bindings or not all(b.bound_value is not None and self._host_tensor(b.bound_value) for b in bindings):
                return
            if all(b.scope.node is not function for b in bindings) and all(b.scope.parent is None for b in bindings):
                self.report(move, self._message(moved, move, where, "a module-level host tensor", False))
            elif in_step and all(b.scope.node is function for b in bindings) and self._outside_loop(frames, bindings) \
                    and not self._sf205_shape(moved, bindings):
                self.report(move, self._message(moved, move, where, "a host tensor built before the loop", False))

    def _host_tensor(self, value: cst.BaseExpression) -> bool:
        return is_host_built(value, self.model.names, self.model.values, self.model.summaries.returned_facts)

    def _outside_loop(self, frames: tuple[Frame, ...], bindings) -> bool:
        """The innermost loop around the move holds none of the bindings: the same value is moved on each iteration."""
        loop = next((frame.node for frame in reversed(frames) if isinstance(frame, LoopFrame)), None)
        if loop is None:
            return False
        where = self.context.positions
        first, last = where[loop].start.line, where[loop].end.line
        return all(not first <= where[b.node].start.line <= last for b in bindings)

    def _sf205_shape(self, moved: cst.Name, bindings) -> bool:
        """SF205 reports a factory whose name is read only by the move (`w = torch.ones(n)` ... `w.cuda()`)."""
        names = self.model.names
        reads = [use for name, use in names.uses.items() if name.value == moved.value and use.scope is names.uses[moved].scope]
        factory = all(type(b.bound_value) is cst.Call and (names.qualify(b.bound_value.func) or "") != "torch.from_numpy"
                      for b in bindings)
        return factory and len(bindings) == 1 and len(reads) <= 2  # the binding's own target and the move

    def _buffer_fix(self, bindings) -> Optional[Fix]:
        if len(bindings) != 1 or bindings[0].kind != "assign":
            return None
        binding = bindings[0]
        statement = binding.node
        if type(statement) is not cst.Assign or len(statement.targets) != 1:
            return None
        function = binding.scope.node
        if type(function) is not cst.FunctionDef or function.name.value != "__init__":
            return None
        if not self._after_module_init(function, statement):
            return None  # `register_buffer` needs `nn.Module.__init__` to have run
        target = statement.targets[0].target
        name, receiver = target.attr.value, target.value.value  # type: ignore[attr-defined]  # `this.table`: `this`
        call = cst.parse_expression(f'{receiver}.register_buffer("{name}", VALUE, persistent=False)')
        call = call.with_changes(args=[call.args[0], call.args[1].with_changes(value=statement.value), call.args[2]])
        return Fix("unsafe", f'register `{receiver}.{name}` as a non-persistent buffer (unsafe: the module\'s `.to()` now moves '
                   "it and its `.half()`/`.double()` cast it)", {statement: cst.Expr(value=call)})

    @staticmethod
    def _after_module_init(function: cst.FunctionDef, statement: cst.CSTNode) -> bool:
        seen_init = False
        for item in function.body.body if type(function.body) is cst.IndentedBlock else ():
            if type(item) is cst.SimpleStatementLine and any(small is statement for small in item.body):
                return seen_init
            seen_init = seen_init or "__init__(" in code_of(item, 400)
        return False

    def _message(self, moved: cst.BaseExpression, move: cst.Call, where: str, what: str, fixable: bool) -> str:
        cure = "register it as a buffer in `__init__` (`register_buffer(..., persistent=False)`) so `model.to(device)` " \
               "moves it once" if fixable or what.startswith("a plain") else "move it to the device once, before the loop, and reuse it"
        return (f"`{code_of(moved, 40)}` is {what}: `{code_of(move, 50)}` copies the same values from the host "
                f"to the device on {where}; {cure}")


def _literal(data: cst.BaseExpression) -> bool:
    if type(data) in (cst.Integer, cst.Float, cst.SimpleString):
        return True
    if type(data) is cst.UnaryOperation:
        return _literal(data.expression)
    if type(data) in (cst.List, cst.Tuple):
        return bool(data.elements) and all(_literal(e.value) for e in data.elements)
    return type(data) is cst.Name and data.value in ("True", "False")


def _literal_first(call: ast.Call) -> bool:
    """Whether libcst's first argument (the first positional; `f(k=1, *xs)`, no positional: the first keyword) may be literal."""
    starred = not call.args or type(call.args[0]) is ast.Starred
    return any(map(_literal_data, call.args[:1] + [k.value for k in call.keywords[:1] if starred]))


def _literal_data(data: ast.expr) -> bool:
    if type(data) is ast.UnaryOp:
        return _literal_data(data.operand)
    return type(data) is ast.Constant or type(data) in (ast.List, ast.Tuple) and all(map(_literal_data, data.elts))


def _names_host(call: cst.Call, devices: DeviceKinds) -> bool:
    device = next(arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "device")
    return devices.kind(device) == "host" or type(device) is cst.SimpleString and "cpu" in device.value
