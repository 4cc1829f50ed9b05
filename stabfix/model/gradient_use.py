"""What one function does with its tensors, as far as gradients go.

Which statements make a tensor require grad (`t.requires_grad_(True)`, `t.requires_grad = True`,
`torch.tensor(y, requires_grad=True)`, legacy `Variable(y, requires_grad=True)`), which names are
differentiated (`.grad` read, `torch.autograd.grad(..., inputs=t)`, handed to an optimizer), which
are returned, which escape to code the file does not show, and which calls are losses with which
target. Used by SF101; any rule that asks "is this tensor's gradient ever used?" can use it.
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from stabfix.model.imports import ImportTracker, dotted_name
from stabfix.model.losses import (
    FunctionDefinition,
    LossInstances,
    LossOperands,
    helper_loss,
    parameter_role,
    receiving_parameter,
    resolve_definition,
)

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
# legacy wrappers that only hold a tensor's values (`Variable(t)` is `t` since torch 0.4)
_VALUE_WRAPPERS = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})
# builtins that only look at a tensor
_INSPECTING_BUILTINS = frozenset({"print", "len", "isinstance", "type", "id", "repr", "str", "float", "int", "bool"})


def is_true(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "True"


def is_requires_grad_call(node: cst.BaseExpression) -> bool:
    """`t.requires_grad_()`, `t.requires_grad_(True)` (not `requires_grad_(False)`)."""
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
        return False
    if node.func.attr.value != "requires_grad_":
        return False
    if not node.args:
        return True
    first = node.args[0]
    return (first.keyword is None or first.keyword.value == "requires_grad") and is_true(first.value)


def requires_grad_keyword(node: cst.BaseExpression, imports: ImportTracker) -> cst.Arg | None:
    """The `requires_grad=True` argument of a torch factory or `Variable(...)` call."""
    if not isinstance(node, cst.Call) or not (imports.qualify(node.func) or "").startswith("torch."):
        return None
    for arg in node.args:
        if arg.keyword is not None and arg.keyword.value == "requires_grad" and is_true(arg.value):
            return arg
    return None


def target_roots(expr: cst.BaseExpression, imports: ImportTracker, depth: int = 0) -> set[str]:
    """The variables a loss target is computed from: `t`, `t.float()`, `t[mask]`, `y * mask`,
    `F.softmax(t_logits / T, dim=-1)` (a torch function of them)."""
    if depth > 8:
        return set()
    if isinstance(expr, cst.Name):
        return {expr.value}
    if isinstance(expr, (cst.Attribute, cst.Subscript)):
        return target_roots(expr.value, imports, depth + 1)
    if isinstance(expr, cst.BinaryOperation):
        return target_roots(expr.left, imports, depth + 1) | target_roots(expr.right, imports, depth + 1)
    if isinstance(expr, cst.UnaryOperation):
        return target_roots(expr.expression, imports, depth + 1)
    if isinstance(expr, cst.Call):
        if (imports.qualify(expr.func) or "").startswith("torch."):
            positional = [arg.value for arg in expr.args if arg.keyword is None and not arg.star]
            return target_roots(positional[0], imports, depth + 1) if positional else set()
        if isinstance(expr.func, cst.Attribute):
            return target_roots(expr.func.value, imports, depth + 1)  # a tensor method: `t.float()`
    return set()


def contains(expr: cst.CSTNode, needle: cst.CSTNode) -> bool:
    if expr is needle:
        return True
    return any(contains(child, needle) for child in expr.children)


def bare_names(expr: cst.BaseExpression) -> set[str]:
    """Names an expression hands over as they are: `x`, `(x, y)`, `[x]`, `{"k": x}`."""
    if isinstance(expr, cst.Name):
        return {expr.value}
    if isinstance(expr, (cst.Tuple, cst.List)):
        return {name for element in expr.elements for name in bare_names(element.value)}
    if isinstance(expr, cst.Dict):
        return {
            name
            for element in expr.elements
            if isinstance(element, cst.DictElement)
            for name in bare_names(element.value)
        }
    return set()


def names_in(expr: cst.CSTNode) -> set[str]:
    if isinstance(expr, cst.Name):
        return {expr.value}
    return {name for child in expr.children for name in names_in(child)}


class GradientUse(cst.CSTVisitor):
    """What one function does with its tensors: loss calls, gradients read, names returned, escapes."""

    def __init__(
        self,
        imports: ImportTracker,
        losses: LossInstances,
        definitions: dict[str, list[FunctionDefinition]],
        class_name: str | None,
    ) -> None:
        super().__init__()
        self.imports = imports
        self.loss_instances = losses
        self.definitions = definitions
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
            self.escaped |= bare_names(node.value)

    def visit_Param(self, node: cst.Param) -> None:
        self.parameters.add(node.name.value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in ("grad", "register_hook", "retain_grad") and isinstance(node.value, cst.Name):
            self.differentiated.add(node.value.value)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self.returned |= bare_names(node.value)

    def visit_Yield(self, node: cst.Yield) -> None:
        if isinstance(node.value, cst.BaseExpression):
            self.returned |= bare_names(node.value)

    def visit_Call(self, node: cst.Call) -> None:
        loss = self.loss_instances.loss_call(node, self.class_name)
        if loss is not None:
            loss = self._with_user_target(loss)
        else:
            loss = helper_loss(node, self.definitions, self.loss_instances, self.class_name)
            if loss is not None:
                self.verified.add(id(node))
        if loss is not None:
            self.losses.append(loss)
        qualified = self.imports.qualify(node.func) or ""
        if loss is None and not self._only_computes(node, qualified):
            for arg in node.args:
                self.escaped |= bare_names(arg.value)
        dotted = dotted_name(node.func) or ""
        if qualified in _AUTOGRAD_GRAD:
            # grad(outputs, inputs): everything but the first argument may be differentiated
            for arg in node.args[1:]:
                self.differentiated |= names_in(arg.value)
            for arg in node.args[:1]:
                if arg.keyword is not None and arg.keyword.value == "inputs":
                    self.differentiated |= names_in(arg.value)
        elif dotted.endswith(".backward") or qualified.startswith("torch.optim.") or qualified in (
            "torch.nn.Parameter",
            "torch.nn.parameter.Parameter",
        ):
            for arg in node.args:
                if qualified.startswith("torch.") or (arg.keyword is not None and arg.keyword.value == "inputs"):
                    self.differentiated |= names_in(arg.value)

    @staticmethod
    def _only_computes(call: cst.Call, qualified: str) -> bool:
        """A torch math function or an inspecting builtin: it neither keeps nor differentiates its arguments."""
        if qualified in _VALUE_WRAPPERS:
            return True
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
        resolved = resolve_definition(loss.call, self.definitions, self.class_name)
        if resolved is None:
            return loss
        definition, skip = resolved
        parameter = receiving_parameter(loss.call, loss.target, definition, skip)
        if parameter is None:
            return loss
        role = parameter_role(definition, parameter, self.loss_instances, self.class_name)
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


# --- values a function of this file returns to its callers ------------------------------------------


def return_positions(function: cst.FunctionDef, names: set[str]) -> set[int | None] | None:
    """Where `names` leave `function`: None for the whole returned value, i for element i of a returned
    tuple (`return x, y`). None when a return hands them over in another shape (a dict, an expression)."""
    positions: set[int | None] = set()
    for node in _returns(function.body):
        if node.value is None:
            continue
        if isinstance(node.value, cst.Name) and node.value.value in names:
            positions.add(None)
        elif isinstance(node.value, cst.Tuple) and all(isinstance(e, cst.Element) for e in node.value.elements):
            positions |= {i for i, e in enumerate(node.value.elements) if bare_names(e.value) & names}
            if any(not isinstance(e.value, cst.Name) and names_in(e.value) & names for e in node.value.elements):
                return None
        elif names_in(node.value) & names:
            return None
    return positions


def _returns(node: cst.CSTNode) -> list[cst.Return]:
    """The return statements of a function body, not those of nested functions or lambdas."""
    if isinstance(node, cst.Return):
        return [node]
    if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
        return []
    return [found for child in node.children for found in _returns(child)]


def caller_bindings(
    module: cst.Module,
    function: cst.FunctionDef,
    positions: set[int | None],
    definitions: dict[str, list[FunctionDefinition]],
) -> list[tuple[cst.FunctionDef | cst.Module, str | None, str]] | None:
    """Every place of the file that calls `function` and the name it binds the returned tensor to:
    `x, y = prepare(batch)` binds position 1 to `y`. None when some call uses the result otherwise (it
    may reach code the file does not show), or when no call is found."""
    finder = _CallsOf(function, definitions)
    module.visit(finder)
    if finder.unknown or not finder.sites:
        return None
    found = []
    for scope, class_name, target in finder.sites:
        for position in positions:
            name = _bound_at(target, position)
            if name is None:
                return None
            found.append((scope, class_name, name))
    return found


def _bound_at(target: cst.BaseExpression, position: int | None) -> str | None:
    if position is None:
        return target.value if isinstance(target, cst.Name) else None
    if isinstance(target, (cst.Tuple, cst.List)) and position < len(target.elements):
        element = target.elements[position]
        if not any(isinstance(e, cst.StarredElement) for e in target.elements) and isinstance(element.value, cst.Name):
            return element.value.value
    return None


class _CallsOf(cst.CSTVisitor):
    """Calls of one function of the file, with the outermost scope they are in and the assignment target."""

    def __init__(self, function: cst.FunctionDef, definitions: dict[str, list[FunctionDefinition]]) -> None:
        super().__init__()
        self.function = function
        self.definitions = definitions
        self.module: cst.Module | None = None
        self.scopes: list[cst.FunctionDef] = []
        self.classes: list[str] = []
        self.assigned: dict[int, cst.BaseExpression] = {}  # id(call) -> the single assignment target
        self.sites: list[tuple[cst.FunctionDef | cst.Module, str | None, cst.BaseExpression]] = []
        self.unknown = False

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scopes.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.value, cst.Call):
            self.assigned[id(node.value)] = node.targets[0].target

    def visit_Call(self, node: cst.Call) -> None:
        class_name = self.classes[0] if self.classes else None
        resolved = resolve_definition(node, self.definitions, class_name)
        if resolved is None or resolved[0] is not self.function:
            if dotted_name(node.func) == self.function.name.value or (
                isinstance(node.func, cst.Attribute) and node.func.attr.value == self.function.name.value
            ):
                self.unknown = True  # a call stabfix cannot tie to one definition
            return
        target = self.assigned.get(id(node))
        if target is None:
            self.unknown = True
            return
        scope = self.scopes[0] if self.scopes else self.module
        self.sites.append((scope, class_name, target))  # type: ignore[arg-type]
