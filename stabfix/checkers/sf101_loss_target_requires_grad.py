"""SF101 loss-target-requires-grad: a loss target is made to require grad and never differentiated."""

from __future__ import annotations

from dataclasses import dataclass, replace

import libcst as cst

from stabfix.model.bindings import FunctionBindings, collect_bindings
from stabfix.model.imports import dotted_name
from stabfix.model.losses import (
    FunctionDefinition,
    LossInstances,
    LossOperands,
    parameter_role,
    receiving_parameter,
    resolve_definition,
)
from stabfix.checker import Checker
from stabfix.findings import Fix

_AUTOGRAD_GRAD = {"torch.autograd.grad", "torch.autograd.backward", "torch.autograd.functional.jacobian"}
# torch namespaces that call back into user code or differentiate: a tensor handed to them may need its grad
_TORCH_CALLING_BACK = (
    "torch.utils.",
    "torch.autograd.",
    "torch.func.",
    "torch.vmap",
    "torch.compile",
    "torch.jit.",
    "torch.optim.",
    "torch.nn.Parameter",
    "torch.nn.parameter.",
    "torch.distributed.",
)
# builtins that only look at a tensor
_INSPECTING_BUILTINS = frozenset({"print", "len", "isinstance", "type", "id", "repr", "str", "float", "int", "bool"})


@dataclass
class _Mark:
    """One place that makes a tensor require grad."""

    node: cst.CSTNode  # reported node
    names: tuple[str, ...]  # variables that end up requiring grad
    fix: Fix | None
    spelling: str  # how the user wrote it, for the message
    inline: cst.Call | None = None  # a requires_grad_ call used directly as an expression


def _is_true(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


class LossTargetRequiresGrad(Checker):
    code = "SF101"
    tokens = ("requires_grad",)
    # every loss the rule recognises is spelled with one of these (`F.mse_loss`, `nn.KLDivLoss`,
    # `criterion`, `loss_fn`, `F.cross_entropy`, `F.kl_div`)
    also_needs = (("loss", "Loss", "criterion", "cross_entropy", "kl_div"),)

    def __init__(self, context) -> None:
        super().__init__(context)
        self.losses = LossInstances(context.imports)
        self.classes: list[str] = []
        self.functions: list[cst.FunctionDef] = []
        self.scopes: list[cst.ClassDef | cst.FunctionDef] = []
        # functions of this file by name, to read what a user loss does with its arguments
        self.definitions: dict[str, list[FunctionDefinition]] = {}
        self.blocks: list[cst.BaseSuite] = []
        self.lines: list[cst.SimpleStatementLine] = []
        # outermost function -> (class name, marks inside it)
        self.marks: dict[cst.FunctionDef | cst.Module, tuple[str | None, list[_Mark]]] = {}
        self.module: cst.Module | None = None
        self.assign_values: set[int] = set()

    # --- traversal bookkeeping -------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self.module = node

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(node.name.value)
        self.scopes.append(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.classes.pop()
        self.scopes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        owner = self.scopes[-1] if self.scopes else None
        class_name = owner.name.value if isinstance(owner, cst.ClassDef) else None
        self.definitions.setdefault(node.name.value, []).append(FunctionDefinition(node, class_name))
        self.functions.append(node)
        self.scopes.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.functions.pop()
        self.scopes.pop()

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self.blocks.append(node)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self.blocks.pop()

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.lines.append(node)

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine) -> None:
        self.lines.pop()

    @property
    def _class_name(self) -> str | None:
        return self.classes[-1] if self.classes else None

    def _add(self, mark: _Mark) -> None:
        # Module-level scripts (a plain training loop) are analysed as one scope.
        outer = self.functions[0] if self.functions else self.module
        class_name = self.classes[0] if self.classes else None
        self.marks.setdefault(outer, (class_name, []))[1].append(mark)

    # --- collecting marks ----------------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self.losses.record_assignment(target.target, node.value, self._class_name)
        value = node.value
        names = tuple(t.target.value for t in node.targets if isinstance(t.target, cst.Name))
        if self._is_requires_grad_call(value):
            self.assign_values.add(id(value))
            inner = value.func.value  # type: ignore[attr-defined]
            in_place = inner.value if isinstance(inner, cst.Name) else None
            self._add(
                _Mark(
                    node=value,
                    names=names + ((in_place,) if in_place else ()),
                    fix=Fix("safe", "drop `.requires_grad_()`, keep the tensor", {value: inner}),
                    spelling=f".{value.func.attr.value}()",  # type: ignore[attr-defined]
                )
            )
            return
        factory = self._factory_with_requires_grad(value)
        if factory is not None and names:
            self.assign_values.add(id(value))
            call, keyword = factory
            self._add(
                _Mark(node=value, names=names, fix=_drop_keyword_fix(call, keyword), spelling="requires_grad=True")
            )
            return
        # `t.requires_grad = True`
        for target in node.targets:
            attr = target.target
            if (
                isinstance(attr, cst.Attribute)
                and attr.attr.value == "requires_grad"
                and _is_true(value)
                and isinstance(attr.value, cst.Name)
            ):
                self._add(
                    _Mark(node=node, names=(attr.value.value,), fix=self._remove_statement_fix(node), spelling=".requires_grad = True")
                )

    def visit_Call(self, node: cst.Call) -> None:
        if id(node) in self.assign_values or not self._is_requires_grad_call(node):
            return
        inner = node.func.value  # type: ignore[attr-defined]
        statement = self.lines[-1] if self.lines else None
        is_statement = (
            statement is not None
            and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr)
            and statement.body[0].value is node
        )
        if is_statement and isinstance(inner, cst.Name):
            self._add(
                _Mark(
                    node=node,
                    names=(inner.value,),
                    fix=self._remove_statement_fix(statement.body[0]),
                    spelling=f".{node.func.attr.value}()",  # type: ignore[attr-defined]
                )
            )
        elif not is_statement:
            self._add(
                _Mark(
                    node=node,
                    names=(),
                    fix=Fix("safe", "drop `.requires_grad_()`, keep the tensor", {node: inner}),
                    spelling=f".{node.func.attr.value}()",  # type: ignore[attr-defined]
                    inline=node,
                )
            )

    def _is_requires_grad_call(self, node: cst.BaseExpression) -> bool:
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
            return False
        if node.func.attr.value != "requires_grad_":
            return False
        if not node.args:
            return True
        first = node.args[0]
        return (first.keyword is None or first.keyword.value == "requires_grad") and _is_true(first.value)

    def _factory_with_requires_grad(self, node: cst.BaseExpression) -> tuple[cst.Call, cst.Arg] | None:
        if not isinstance(node, cst.Call):
            return None
        qualified = self.qualified_name(node.func)
        if qualified is None or not qualified.startswith("torch."):
            return None
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == "requires_grad" and _is_true(arg.value):
                return node, arg
        return None

    def _remove_statement_fix(self, small: cst.BaseSmallStatement) -> Fix | None:
        line = self.lines[-1] if self.lines else None
        if line is None:
            return None
        description = "remove the statement that makes the target require grad"
        if len(line.body) > 1:
            return Fix("safe", description, {small: cst.RemoveFromParent()})
        block = self.blocks[-1] if self.blocks else None
        if block is not None and len(block.body) == 1 and block.body[0] is line:
            return Fix("safe", description, {line: line.with_changes(body=[cst.Pass()])})
        return Fix("safe", description, {line: cst.RemoveFromParent()})

    def _target_roots(self, expr: cst.BaseExpression, depth: int = 0) -> set[str]:
        """The variables a loss target is computed from: `t`, `t.float()`, `t[mask]`, `y * mask`,
        `F.softmax(t_logits / T, dim=-1)` (a torch function of them)."""
        if depth > 8:
            return set()
        if isinstance(expr, cst.Name):
            return {expr.value}
        if isinstance(expr, (cst.Attribute, cst.Subscript)):
            return self._target_roots(expr.value, depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            return self._target_roots(expr.left, depth + 1) | self._target_roots(expr.right, depth + 1)
        if isinstance(expr, cst.UnaryOperation):
            return self._target_roots(expr.expression, depth + 1)
        if isinstance(expr, cst.Call):
            if (self.qualified_name(expr.func) or "").startswith("torch."):
                positional = [arg.value for arg in expr.args if arg.keyword is None and not arg.star]
                return self._target_roots(positional[0], depth + 1) if positional else set()
            if isinstance(expr.func, cst.Attribute):
                return self._target_roots(expr.func.value, depth + 1)  # a tensor method: `t.float()`
        return set()

    # --- deciding ---------------------------------------------------------------------------
    def leave_Module(self, original_node: cst.Module) -> None:
        for function, (class_name, marks) in self.marks.items():
            facts = _FunctionFacts(self, class_name)
            function.visit(facts)
            bindings = collect_bindings(function)
            for mark in marks:
                self._decide(mark, facts, bindings)

    def _decide(self, mark: _Mark, facts: "_FunctionFacts", bindings: FunctionBindings) -> None:
        if mark.inline is not None:
            loss = facts.loss_with_target(lambda expr: _contains(expr, mark.inline))
            if loss is not None:
                known = facts.is_known(loss)
                self.report(mark.node, _message(mark, None, loss, known), mark.fix if known else None)
            return
        names = set(mark.names)
        names |= {name for name in bindings.by_name if bindings.alias_root(name)[0] in names}
        if not names or names & facts.differentiated or names & facts.returned:
            return
        if _holders(names, bindings) & facts.escaped:
            return
        if names & facts.parameters and not any(bindings.by_name.get(name) for name in mark.names):
            return  # marks the caller's tensor in place: the caller may read its grad
        loss = facts.loss_with_target(lambda expr: bool(self._target_roots(expr) & names))
        if loss is not None:
            name = mark.names[0] if mark.names else None
            known = facts.is_known(loss)
            self.report(mark.node, _message(mark, name, loss, known), mark.fix if known else None)


def _holders(names: set[str], bindings: FunctionBindings) -> set[str]:
    """`names` and every name that is at some point bound to one of them (`h = x` before `h = block(h)`)."""
    holders = set(names)
    changed = True
    while changed:
        changed = False
        for name, bound in bindings.by_name.items():
            if name not in holders and any(isinstance(b.value, cst.Name) and b.value.value in holders for b in bound):
                holders.add(name)
                changed = True
    return holders


def _contains(expr: cst.CSTNode, needle: cst.CSTNode) -> bool:
    if expr is needle:
        return True
    return any(_contains(child, needle) for child in expr.children)


def _message(mark: _Mark, name: str | None, loss: LossOperands, known: bool = True) -> str:
    subject = f"`{name}`" if name else "this tensor"
    call = cst.Module(body=[]).code_for_node(loss.call)
    if len(call) > 70:
        call = f"{loss.loss_name}(...)"
    message = (
        f"{subject} is the target of `{call}` but is made to require grad ({mark.spelling}): autograd "
        "records it and allocates a gradient for it every step, and nothing reads that gradient; "
        "drop the requires_grad part and keep the detached tensor"
    )
    if not known:
        message += f" (no automatic fix: `{loss.loss_name}` is defined elsewhere; make sure it does not differentiate {subject})"
    return message


def _drop_keyword_fix(call: cst.Call, keyword: cst.Arg) -> Fix:
    args = list(call.args)
    position = args.index(keyword)
    args.pop(position)
    if args and position == len(args):
        args[-1] = args[-1].with_changes(comma=keyword.comma)
    return Fix("safe", "drop `requires_grad=True`", {call: call.with_changes(args=args)})


class _FunctionFacts(cst.CSTVisitor):
    """What one function does with its tensors: loss calls, gradients read, names returned."""

    def __init__(self, checker: LossTargetRequiresGrad, class_name: str | None) -> None:
        super().__init__()
        self.checker = checker
        self.class_name = class_name
        self.losses: list[LossOperands] = []
        self.differentiated: set[str] = set()
        self.returned: set[str] = set()
        self.parameters: set[str] = set()
        # handed to code this file does not show (a model, a helper, an attribute, a container):
        # that code may read the gradient, as a gradient penalty or a reentrant checkpoint does
        self.escaped: set[str] = set()
        self.verified: set[int] = set()  # loss calls whose target argument is known to be a target

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(isinstance(t.target, (cst.Attribute, cst.Subscript)) for t in node.targets):
            self.escaped |= _bare_names(node.value)

    def visit_Param(self, node: cst.Param) -> None:
        self.parameters.add(node.name.value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in ("grad", "register_hook", "retain_grad") and isinstance(node.value, cst.Name):
            self.differentiated.add(node.value.value)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self.returned |= _bare_names(node.value)

    def visit_Yield(self, node: cst.Yield) -> None:
        if isinstance(node.value, cst.BaseExpression):
            self.returned |= _bare_names(node.value)

    def visit_Call(self, node: cst.Call) -> None:
        loss = self.checker.losses.loss_call(node, self.class_name)
        if loss is not None:
            self.losses.append(self._with_user_target(loss))
        qualified = self.checker.qualified_name(node.func) or ""
        if loss is None and not self._only_computes(node, qualified):
            for arg in node.args:
                self.escaped |= _bare_names(arg.value)
        dotted = dotted_name(node.func) or ""
        if qualified in _AUTOGRAD_GRAD:
            # grad(outputs, inputs): everything but the first argument may be differentiated
            for arg in node.args[1:]:
                self.differentiated |= _names_in(arg.value)
            for arg in node.args[:1]:
                if arg.keyword is not None and arg.keyword.value == "inputs":
                    self.differentiated |= _names_in(arg.value)
        elif dotted.endswith(".backward") or qualified.startswith("torch.optim.") or qualified in (
            "torch.nn.Parameter",
            "torch.nn.parameter.Parameter",
        ):
            for arg in node.args:
                if qualified.startswith("torch.") or (arg.keyword is not None and arg.keyword.value == "inputs"):
                    self.differentiated |= _names_in(arg.value)

    @staticmethod
    def _only_computes(call: cst.Call, qualified: str) -> bool:
        """A torch math function or an inspecting builtin: it neither keeps nor differentiates its arguments."""
        if qualified.startswith("torch."):
            return not qualified.startswith(_TORCH_CALLING_BACK)
        return isinstance(call.func, cst.Name) and call.func.value in _INSPECTING_BUILTINS and not qualified

    def is_known(self, loss: LossOperands) -> bool:
        """The loss is torch's own, or a function of this file that uses the argument as its target: the
        target is certainly not differentiated there, so dropping requires_grad is safe."""
        return loss.kind.startswith("torch.") or id(loss.call) in self.verified

    def _with_user_target(self, loss: LossOperands) -> LossOperands:
        """A loss function of this file decides itself which argument is its target: one it feeds to
        the model (`def make_loss(model, x): return (model(x) - ref).pow(2).mean()`) is an input."""
        if loss.target is None:
            return loss
        resolved = resolve_definition(loss.call, self.checker.definitions, self.class_name)
        if resolved is None:
            return loss
        definition, skip = resolved
        parameter = receiving_parameter(loss.call, loss.target, definition, skip)
        if parameter is None:
            return loss
        role = parameter_role(definition, parameter, self.checker.losses, self.class_name)
        if role == "input":
            return replace(loss, target=None)
        if role == "target":
            self.verified.add(id(loss.call))
        return loss

    def loss_with_target(self, predicate) -> LossOperands | None:
        for loss in self.losses:
            if loss.target is not None and predicate(loss.target):
                return loss
        return None


def _bare_names(expr: cst.BaseExpression) -> set[str]:
    if isinstance(expr, cst.Name):
        return {expr.value}
    if isinstance(expr, (cst.Tuple, cst.List)):
        return {name for element in expr.elements for name in _bare_names(element.value)}
    if isinstance(expr, cst.Dict):
        return {
            name
            for element in expr.elements
            if isinstance(element, cst.DictElement)
            for name in _bare_names(element.value)
        }
    return set()


def _names_in(expr: cst.CSTNode) -> set[str]:
    if isinstance(expr, cst.Name):
        return {expr.value}
    return {name for child in expr.children for name in _names_in(child)}
