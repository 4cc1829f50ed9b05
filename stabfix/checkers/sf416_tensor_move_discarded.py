"""SF416 tensor-move-discarded: `x.to(device)` / `x.cuda()` / `x.float()` as a statement on a tensor.

A module moves or casts its parameters in place and returns itself, so `model.to(device)` alone is
right; a tensor returns a moved (or cast) copy and keeps its own data where it was, so the same
statement on a tensor throws the copy away. A query over the model: an expression statement whose value
is such a call (the torch-operation table's moves and casts, `calls/torch_ops.py`), whose receiver the
model shows to hold a tensor (`flow/held_kinds.py`: values, `self.<attr>` bindings, buffers, parameters,
default-collated batch elements); a module, or anything the code does not show, is left alone.

Fix: `x = x.to(device)`. Safe for a pure move to a device (`.cuda()`, `.to(device)`, with or without
`non_blocking=`) of a plain name or a `self.<attr>` that is not an `nn.Parameter`: every later read then
sees the same values on the device the code asked for; unsafe when a later read in the same scope hands
it to numpy (`x.numpy()`, `np.asarray(x)`: host memory only), and for a move to the CPU (reads that ran
on the device would now get a host tensor). A cast (`.float()`, `.to(torch.half)`,
`.to(device, dtype)`) changes the values later reads see: unsafe. An element of a container
(`batch["x"]`) or a parameter attribute is reported without a fix.
"""

from __future__ import annotations

import ast

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.model.calls import torch_ops
from stabfix.model.calls.devices import DeviceKinds
from stabfix.model.source.imports import dotted_name
from stabfix.model.calls.module_classes import ModuleClasses
from stabfix.model.flow.held_kinds import HeldKinds
from stabfix.model.functions.summaries import MAX_DEPTH, parameter_receiving
from stabfix.model.source.syntax import code_of
from stabfix.shape import Shape, callee_name

# moves and casts of the torch-operation table that return a new tensor (`requires_grad_` is in place)
MOVES_AND_CASTS = frozenset(name for name, op in torch_ops.METHODS.items()
                            if op.kind in ("move", "cast") or name in ("long", "int", "short", "byte", "bool"))
MOVE_ONLY_KEYWORDS = frozenset({"non_blocking", "device"})


class TensorMoveDiscarded(Checker):
    code = "SF416"
    tokens = (".to(", ".cuda(", ".cpu(", ".float(", ".half(", ".double(", ".bfloat16(", ".long(", ".int(", ".type(")
    needs = ("names", "values", "modules", "summaries")

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:
        # a statement moving or casting, or calling with arguments a helper `function_of_call` may resolve (imported: of the scan)
        imported = shape.imported_names if shape.imports_scanned_code else frozenset()
        names, roots = shape.defined_functions | shape.assigned_attributes, imported | shape.plain_aliases
        return any(any(type(p) is ast.Call and type(p.func) is ast.Attribute and p.func.attr in MOVES_AND_CASTS
                       for p in (value.elts if type(value) is ast.Tuple else [value])) or type(value) is ast.Call and
                   (value.args or value.keywords) and (callee_name(value) in names or shape.value_root(value.func, (), ()) in roots
                                                       or getattr(value.func, "id", None) in shape.assigned_names)
                   for value in (node.value for node in shape.nodes(ast.Expr)))

    def __init__(self, context) -> None:
        super().__init__(context)
        self.candidates: list[cst.Expr] = []
        self.calls: list[cst.Call] = []  # `.numpy()` and numpy functions: reads that need host memory
        self.helper_calls: list[cst.Call] = []  # calls made as statements of their own

    def visit_Call(self, node: cst.Call) -> None:
        if type(node.func) in (cst.Attribute, cst.Name):  # numpy functions resolve through the imports at the end
            self.calls.append(node)

    def visit_Expr(self, node: cst.Expr) -> None:
        # `x.to(d)`, also a tuple of them: `inputs.to(device), labels.to(device)`
        parts = [e.value for e in node.value.elements] if type(node.value) is cst.Tuple else [node.value]
        if any(_is_move(part) for part in parts):
            self.candidates.append(node)
        elif type(node.value) is cst.Call and node.value.args:
            self.helper_calls.append(node.value)  # `to_device(x, device)`: a helper may hand back a moved copy

    def leave_Module(self, original_node: cst.Module) -> None:
        if not self.candidates and not self.helper_calls:
            return
        names = self.model.names
        kinds = HeldKinds(names, self.model.values, self.model.modules, ModuleClasses(names, self.context.project))
        for call in self.helper_calls:
            moved = self._moved_by_helper(call)
            if moved is not None and kinds.kind(moved) == "tensor":
                self.report(call, self._helper_message(call, moved))
        for statement in self.candidates:
            if type(statement.value) is cst.Tuple:
                self._check_tuple(statement, kinds)
                continue
            call = statement.value
            assert type(call) is cst.Call and type(call.func) is cst.Attribute
            if self._moves_tensor(call, kinds):
                self.report(call, self._message(call, call.func.value), self._fix(statement, call, call.func.value, kinds))

    def _moved_by_helper(self, call: cst.Call) -> cst.BaseExpression | None:
        """The argument a function (of this file or another scanned one) hands back moved or cast, by its
        summary: its one returned value is that parameter put on a device (`return x.to(device)`)."""
        summaries = self.model.summaries
        summary = summaries.function_of_call(call)
        returned = summary.returned if summary is not None and summary.return_depth < MAX_DEPTH else None
        if returned is None or returned.parameter is None or returned.device is None:
            return None
        return next((arg.value for arg in call.args if parameter_receiving(summary, call, arg) == returned.parameter), None)

    def _helper_message(self, call: cst.Call, moved: cst.BaseExpression) -> str:
        held = code_of(moved, 40)
        return (
            f"`{code_of(call, 60)}` returns a moved copy of `{held}` and this statement throws it away: a tensor, "
            f"unlike a module, is not changed in place, so `{held}` stays where it was; assign it (`{held} = ...`)"
        )

    def _moves_tensor(self, call: cst.Call, kinds: HeldKinds) -> bool:
        if self.model.names.qualify(call.func) is not None:
            return False  # `torch.cuda(...)`-like library calls, not a method of a value
        if call.func.attr.value == "type" and not call.args:  # type: ignore[attr-defined]
            return False  # `x.type()` names the type
        return kinds.kind(call.func.value) == "tensor"  # type: ignore[attr-defined]

    def _check_tuple(self, statement: cst.Expr, kinds: HeldKinds) -> None:
        """`inputs.to(device), labels.to(device)`: each tensor moved is reported; when all are, one fix binds them all."""
        calls = [e.value for e in statement.value.elements]  # type: ignore[attr-defined]
        moved = [call for call in calls if _is_move(call) and self._moves_tensor(call, kinds)]
        fixes = [self._fix(statement, call, call.func.value, kinds) for call in moved] if len(moved) == len(calls) else []
        fix = None
        if fixes and all(f is not None and f.safety == "safe" for f in fixes):
            targets = cst.Tuple([cst.Element(call.func.value) for call in moved], lpar=[], rpar=[])
            assign = cst.Assign(targets=[cst.AssignTarget(target=targets)], value=statement.value, semicolon=statement.semicolon)
            fix = Fix("safe", f"keep the moved tensors: `{code_of(assign, 80)}`", {statement: assign})
        for call in moved:
            self.report(call, self._message(call, call.func.value), fix)

    def _fix(self, statement: cst.Expr, call: cst.Call, receiver: cst.BaseExpression, kinds: HeldKinds) -> Fix | None:
        # a local, a parameter or a loop variable (the reads after the statement see the moved tensor), or a `self.<attr>`
        # that is not a registered parameter (which a plain tensor cannot replace)
        if type(receiver) is not cst.Name and not (type(receiver) is cst.Attribute and type(receiver.value) is cst.Name
                                                       and kinds.self_attribute(receiver) is not None and not kinds.is_parameter_attribute(receiver)):
            return None
        assign = cst.Assign(targets=[cst.AssignTarget(target=receiver)], value=call, semicolon=statement.semicolon)
        spelled = f"{code_of(receiver, 40)} = {code_of(call, 60)}"
        if self._device_move_only(call):
            if DeviceKinds(self.model.names).moves_to_host(call):
                why = "later reads that ran on the device get a host tensor"
            elif self._read_on_host_later(receiver):
                why = "a later read hands it to numpy, which needs host memory"
            else:
                return Fix("safe", f"keep the moved tensor: `{spelled}`", {statement: assign})
            return Fix("unsafe", f"keep the moved tensor: `{spelled}` (unsafe: {why})", {statement: assign})
        return Fix("unsafe", f"keep the cast tensor: `{spelled}` (unsafe: later reads see the new dtype)", {statement: assign})

    def _read_on_host_later(self, receiver: cst.BaseExpression) -> bool:
        """A read of the same name (or `self.<attr>`) later in the same scope that numpy needs on the host:
        `x.numpy()`, `x.detach().numpy()`, `np.asarray(x)` (not `x.cpu().numpy()`)."""
        use = self._use_of(receiver)
        spelled = dotted_name(receiver)
        if use is None or spelled is None:
            return False
        for call in self.calls:
            if type(call.func) is cst.Attribute and call.func.attr.value == "numpy":
                reads = [call.func.value]
            elif (self.model.names.qualify(call.func) or "").startswith("numpy."):
                reads = [arg.value for arg in call.args]
            else:
                continue
            for read in reads:
                moved = False
                while type(read) is cst.Call and type(read.func) is cst.Attribute:
                    moved = read.func.attr.value in ("cpu", "to")
                    if moved:
                        break
                    read = read.func.value  # `.detach()`, `.float()` keep the device
                other = None if moved or dotted_name(read) != spelled else self._use_of(read)
                if other is not None and other.scope is use.scope and other.order > use.order:
                    return True
        return False

    def _use_of(self, expr: cst.BaseExpression):
        root = expr.value if type(expr) is cst.Attribute else expr
        return self.model.names.uses.get(root) if type(root) is cst.Name else None

    def _device_move_only(self, call: cst.Call) -> bool:
        method = call.func.attr.value  # type: ignore[attr-defined]
        if any(arg.star for arg in call.args) or method not in ("cuda", "cpu", "to"):
            return False
        if method in ("cuda", "cpu"):
            return all(arg.keyword is not None and arg.keyword.value == "non_blocking" for arg in call.args) \
                or (method == "cuda" and len(call.args) == 1 and call.args[0].keyword is None)
        target, device = DeviceKinds(self.model.names).move_target(call)
        others = [arg for arg in call.args if arg.value is not device]
        return target in ("device", "cpu") and all(
            arg.keyword is not None and arg.keyword.value in MOVE_ONLY_KEYWORDS for arg in others)

    def _message(self, call: cst.Call, receiver: cst.BaseExpression) -> str:
        what, held, verb = code_of(call, 60), code_of(receiver, 40), "moved" if self._device_move_only(call) else "converted"
        return (
            f"`{what}` returns a {verb} copy and this statement throws it away: a tensor, unlike a module, is "
            f"not changed in place, so `{held}` stays where it was; assign it (`{held} = {what}`)"
        )


def _is_move(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in MOVES_AND_CASTS
