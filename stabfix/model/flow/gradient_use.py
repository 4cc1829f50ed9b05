"""What one function does with its tensors, as far as gradients go.

Which statements make a tensor require grad (`t.requires_grad_(True)`, `t.requires_grad = True`,
`torch.tensor(y, requires_grad=True)`, legacy `Variable(y, requires_grad=True)`), which names are
differentiated (`.grad` read, `torch.autograd.grad(..., inputs=t)`, handed to an optimizer), which
are returned, which escape to code the file does not show (stored, or handed to a call: `handovers`;
`escaped_unless(harmless)` leaves out the hand-overs a caller clears, such as a function of the file
whose summary shows it never reads that parameter's gradient, or a call whose callee's summary the
caller has read), and which calls are losses with which
target. The model part `gradients`, recorded in the engine's traversal for every outermost function
and for the module as a whole; used by SF101, and by any rule that asks "is this tensor's gradient
ever used?".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import libcst as cst

from stabfix.model.calls import torch_ops
from stabfix.model.calls.losses import LossIndex, LossOperands
from stabfix.model.source.enclosing import EnclosingDefinitions
from stabfix.model.source.imports import ImportTracker, dotted_name
from stabfix.model.source.names import Binding
from stabfix.model.source.syntax import node_kinds
from stabfix.model.source.node_fields import children, code_children

# node types for `type(node) in ...` (see node_fields.node_kinds)
_STORES = node_kinds(cst.Attribute, cst.Subscript)

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
# builtins that only look at a tensor, or hand its elements to a loop (what the loop target then does
# with them is followed through the target: `plain_aliases`)
_INSPECTING_BUILTINS = frozenset(
    {"print", "len", "isinstance", "type", "id", "repr", "str", "float", "int", "bool", "zip", "enumerate", "reversed"}
)


def is_true(node: cst.BaseExpression) -> bool:
    return type(node) is cst.Name and node.value == "True"  # type: ignore[attr-defined]


def is_requires_grad_call(node: cst.BaseExpression) -> bool:
    """`t.requires_grad_()`, `t.requires_grad_(True)` (not `requires_grad_(False)`)."""
    if not (type(node) is cst.Call and type(node.func) is cst.Attribute):  # exact types (see node_fields.node_kinds)
        return False
    if node.func.attr.value != "requires_grad_":
        return False
    if not node.args:
        return True
    first = node.args[0]
    return (first.keyword is None or first.keyword.value == "requires_grad") and is_true(first.value)


def asks_for_grad(node: cst.BaseExpression) -> bool:
    """`t.requires_grad_()` / `t.requires_grad_(True)`, or a call passing `requires_grad=` anything but
    `False` (`torch.zeros(n, requires_grad=flag)` may make a leaf autograd records from)."""
    if is_requires_grad_call(node):
        return True
    return type(node) is cst.Call and any(
        arg.keyword is not None and arg.keyword.value == "requires_grad" and not _is_false(arg.value) for arg in node.args
    )


def _is_false(node: cst.BaseExpression) -> bool:
    return type(node) is cst.Name and node.value == "False"


def requires_grad_keyword(node: cst.BaseExpression, imports: ImportTracker) -> cst.Arg | None:
    """The `requires_grad=True` argument of a torch factory or `Variable(...)` call."""
    if type(node) is not cst.Call:
        return None
    for arg in node.args:  # type: ignore[attr-defined]
        if arg.keyword is not None and arg.keyword.value == "requires_grad" and is_true(arg.value):
            # the callee is qualified only for the few calls that pass the keyword (every call of the file asks)
            return arg if (imports.qualify(node.func) or "").startswith("torch.") else None  # type: ignore[attr-defined]
    return None


def target_roots(expr: cst.BaseExpression, imports: ImportTracker, depth: int = 0) -> set[str]:
    """The variables a loss target is computed from and requires grad with: `t`, `t.float()`, `t[mask]`,
    `y * mask`, `F.softmax(t_logits / T, dim=-1)` (a torch function of them); not `t.long()`,
    `t.detach()` or `t.argmax(1)` (the torch-operation table says they drop requires-grad)."""
    if depth > 8:
        return set()
    if type(expr) is cst.Name:
        return {expr.value}
    found = torch_ops.step(expr, imports.qualify)
    if found is not None:
        operand, op = found
        return target_roots(operand, imports, depth + 1) if op.grad else set()
    if type(expr) in (cst.Attribute, cst.Subscript):
        return target_roots(expr.value, imports, depth + 1)
    if type(expr) is cst.BinaryOperation:
        return target_roots(expr.left, imports, depth + 1) | target_roots(expr.right, imports, depth + 1)
    if type(expr) is cst.UnaryOperation:
        return target_roots(expr.expression, imports, depth + 1)
    if type(expr) is cst.Call:
        if (imports.qualify(expr.func) or "").startswith("torch."):
            positional = [arg.value for arg in expr.args if arg.keyword is None and not arg.star]
            return target_roots(positional[0], imports, depth + 1) if positional else set()
        if type(expr.func) is cst.Attribute:
            return target_roots(expr.func.value, imports, depth + 1)  # a tensor method: `t.mean()`
    return set()


def contains(expr: cst.CSTNode, needle: cst.CSTNode) -> bool:
    if expr is needle:
        return True
    return any(contains(child, needle) for child in children(expr))


def inside(node: cst.CSTNode, expr: cst.CSTNode, parent: Callable[[cst.CSTNode], Optional[cst.CSTNode]]) -> bool:
    """`contains(expr, node)` for a node the traversal met (it has a `parent`, `TreeIndex.parent`): up the
    parents of `node` rather than through the whole subtree of `expr`."""
    current: Optional[cst.CSTNode] = node
    while current is not None:
        if current is expr:
            return True
        current = parent(current)
    return False


def bare_names(expr: cst.BaseExpression) -> set[str]:
    """Names an expression hands over as they are: `x`, `(x, y)`, `[x]`, `{"k": x}`."""
    kind = type(expr)  # exact types (libcst has no subclass of them): no ABC isinstance for the other nodes
    if kind is cst.Name:
        return {expr.value}  # type: ignore[attr-defined]
    if kind is cst.Tuple or kind is cst.List:
        return {name for element in expr.elements for name in bare_names(element.value)}  # type: ignore[attr-defined]
    if kind is cst.Dict:
        return {
            name
            for element in expr.elements
            if type(element) is cst.DictElement
            for name in bare_names(element.value)
        }
    return set()


def names_in(expr: cst.CSTNode) -> set[str]:
    """Every name spelled under `expr` (attribute names and keywords too): a walk without the trivia, which holds none."""
    found = set()
    stack = [expr]
    while stack:
        current = stack.pop()
        if type(current) is cst.Name:
            found.add(current.value)  # type: ignore[attr-defined]
        else:
            stack.extend(code_children(current))
    return found


@dataclass(eq=False)
class GradientUse:
    """What one scope (an outermost function with its closures, or the whole module) does with its
    tensors: loss calls, gradients read, names returned, escapes."""

    scope: cst.FunctionDef | cst.Module
    calls: list[cst.Call] = field(default_factory=list)
    losses: list[LossOperands] = field(default_factory=list)
    differentiated: set[str] = field(default_factory=set)
    returned: set[str] = field(default_factory=set)
    parameters: set[str] = field(default_factory=set)
    # handed to code this file does not show (a model, a helper, an attribute, a container):
    # that code may read the gradient, as a gradient penalty or a reentrant checkpoint does
    escaped: set[str] = field(default_factory=set)
    stored: set[str] = field(default_factory=set)  # assigned into an attribute or an entry (escaped too)
    # the calls that hand names over as arguments (escapes through a call): (call, argument)
    handovers: list[tuple[cst.Call, cst.Arg]] = field(default_factory=list)
    finished: bool = False

    def handed(self, names: set[str]) -> list[tuple[cst.Call, cst.Arg]]:
        """The calls that hand one of `names` over as it is (an escape through a call)."""
        return [(call, arg) for call, arg in self.handovers if bare_names(arg.value) & names]

    def escaped_unless(self, harmless: Callable[[cst.Call, cst.Arg], bool]) -> set[str]:
        """The escaped names, leaving out hand-overs `harmless` clears (a function of the file shown
        never to read the receiving parameter's gradient)."""
        kept = set(self.stored)
        for call, arg in self.handovers:
            if not harmless(call, arg):
                kept |= bare_names(arg.value)
        return kept

    @staticmethod
    def is_known(loss: LossOperands) -> bool:
        """The loss is torch's own, or a function of this file that uses the argument as its target: the
        target is certainly not differentiated there, so dropping requires_grad is safe."""
        return loss.checked

    def loss_with_target(self, predicate: Callable[[cst.BaseExpression], bool]) -> LossOperands | None:
        for loss in self.losses:
            if loss.target is not None and predicate(loss.target):
                return loss
        return None


class GradientFacts(cst.BatchableCSTVisitor):
    """The model part `gradients`: one `GradientUse` per outermost function and one for the module."""

    def __init__(self, losses: LossIndex, enclosing: EnclosingDefinitions) -> None:
        super().__init__()
        self.loss_index = losses
        self.enclosing = enclosing
        self.scopes: dict[cst.CSTNode, GradientUse] = {}
        self._open: list[GradientUse] = []  # the module's facts, then the outermost function's

    def bindings_in(self, scope: cst.FunctionDef | cst.Module) -> list[Binding]:
        """The binding model's bindings made inside `scope` (its closures included)."""
        return list(self.loss_index.names.bindings_within(scope))

    def of(self, scope: cst.FunctionDef | cst.Module) -> GradientUse:
        facts = self.scopes.get(scope) or GradientUse(scope)
        if not facts.finished:
            self._finish(facts)
        return facts

    # -- traversal -------------------------------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self._open = [self.scopes.setdefault(node, GradientUse(node))]

    def _is_outermost(self, function: cst.FunctionDef) -> bool:
        # the tracker has entered `function` before this part's visit and leaves it after its leave
        return self.enclosing.enclosing_functions()[0] is function

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self._is_outermost(node):
            self._open.append(self.scopes.setdefault(node, GradientUse(node)))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        if self._is_outermost(original_node) and len(self._open) > 1:
            self._open.pop()

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(type(t.target) in _STORES for t in node.targets):
            for facts in self._open:
                facts.escaped |= bare_names(node.value)
                facts.stored |= bare_names(node.value)

    def visit_Param(self, node: cst.Param) -> None:
        for facts in self._open:
            facts.parameters.add(node.name.value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in ("grad", "register_hook", "retain_grad") and type(node.value) is cst.Name:
            for facts in self._open:
                facts.differentiated.add(node.value.value)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            for facts in self._open:
                facts.returned |= bare_names(node.value)

    def visit_Yield(self, node: cst.Yield) -> None:
        if isinstance(node.value, cst.BaseExpression):
            for facts in self._open:
                facts.returned |= bare_names(node.value)

    def visit_Call(self, node: cst.Call) -> None:
        for facts in self._open:
            facts.calls.append(node)

    # -- after the traversal: calls, once callees can be resolved --------------------------------------------
    def _finish(self, facts: GradientUse) -> None:
        facts.finished = True
        for call in facts.calls:
            loss = self.loss_index.operands(call)
            if loss is not None:
                facts.losses.append(loss)
            qualified = self.loss_index.qualify(call.func) or ""
            if loss is None and not _only_computes(call, qualified):
                for arg in call.args:
                    handed = bare_names(arg.value)
                    facts.escaped |= handed
                    if handed:
                        facts.handovers.append((call, arg))
            func = call.func  # `a.b.backward`: spelled as a dotted name (rendered only for a `.backward`)
            backward = type(func) is cst.Attribute and func.attr.value == "backward" and dotted_name(func) is not None
            if qualified in _AUTOGRAD_GRAD:
                # grad(outputs, inputs): everything but the first argument may be differentiated
                for arg in call.args[1:]:
                    facts.differentiated |= names_in(arg.value)
                for arg in call.args[:1]:
                    if arg.keyword is not None and arg.keyword.value == "inputs":
                        facts.differentiated |= names_in(arg.value)
            elif backward or qualified.startswith("torch.optim.") or qualified in (
                "torch.nn.Parameter",
                "torch.nn.parameter.Parameter",
            ):
                for arg in call.args:
                    if qualified.startswith("torch.") or (arg.keyword is not None and arg.keyword.value == "inputs"):
                        facts.differentiated |= names_in(arg.value)


def _only_computes(call: cst.Call, qualified: str) -> bool:
    """A torch math function or an inspecting builtin: it neither keeps nor differentiates its arguments."""
    if torch_ops.is_wrapper(qualified):
        return True
    if qualified.startswith("torch."):
        return not qualified.startswith(_TORCH_CALLING_BACK)
    return type(call.func) is cst.Name and call.func.value in _INSPECTING_BUILTINS and not qualified  # type: ignore[attr-defined]


# --- values a function of this file returns to its callers ------------------------------------------


def return_positions(returns: list[cst.BaseExpression], names: set[str]) -> set[int | None] | None:
    """Where `names` leave a function, given what it returns: None for the whole returned value, i for
    element i of a returned tuple (`return x, y`). None when a return hands them over in another shape
    (a dict, an expression)."""
    positions: set[int | None] = set()
    for value in returns:
        if type(value) is cst.Name and value.value in names:
            positions.add(None)
        elif type(value) is cst.Tuple and all(type(e) is cst.Element for e in value.elements):
            positions |= {i for i, e in enumerate(value.elements) if bare_names(e.value) & names}
            if any(type(e.value) is not cst.Name and names_in(e.value) & names for e in value.elements):
                return None
        elif names_in(value) & names:
            return None
    return positions


def caller_bindings(
    losses: LossIndex, function: cst.FunctionDef, positions: set[int | None]
) -> list[tuple[cst.FunctionDef | cst.Module, str]] | None:
    """Every place of the file that calls `function` (its outermost scope) and the name it binds the
    returned tensor to: `x, y = prepare(batch)` binds position 1 to `y`. None when some call uses the
    result otherwise (it may reach code the file does not show), or when no call is found."""
    assigned = {
        id(b.value): b.node.targets[0].target  # type: ignore[attr-defined]
        for b in losses.names.all_bindings()
        if type(b.node) is cst.Assign and len(b.node.targets) == 1 and type(b.value) is cst.Call
    }
    found: list[tuple[cst.FunctionDef | cst.Module, str]] = []
    for site in losses.sites:
        call = site.call
        if losses.names.definition_of(call) is not function:
            if dotted_name(call.func) == function.name.value or (
                type(call.func) is cst.Attribute and call.func.attr.value == function.name.value
            ):
                return None  # a call stabfix cannot tie to one definition
            continue
        target = assigned.get(id(call))
        if target is None or site.outer is None:
            return None
        for position in positions:
            name = _bound_at(target, position)
            if name is None:
                return None
            found.append((site.outer, name))
    return found or None


def _bound_at(target: cst.BaseExpression, position: int | None) -> str | None:
    if position is None:
        return target.value if type(target) is cst.Name else None
    if type(target) in (cst.Tuple, cst.List) and position < len(target.elements):
        element = target.elements[position]
        if not any(type(e) is cst.StarredElement for e in target.elements) and type(element.value) is cst.Name:
            return element.value.value
    return None


def plain_aliases(bindings: list[Binding], names: set[str], qualify: torch_ops.Qualify | None = None) -> set[str]:
    """`names` and the names that are a chain of aliases of them (`t = target`, `u = t`, also through
    operations that keep requires-grad: `u = t.cuda()`, `u = t.view(-1)`, `a, u = x, t[0]`, and elements
    drawn from them: `for a, u in zip(xs, t)`), each alias bound exactly once in the scope."""
    by_name: dict[str, list[Binding]] = {}
    for binding in bindings:
        by_name.setdefault(binding.name, []).append(binding)
    found = set(names)
    for name in by_name:
        current = name
        for _ in range(10):
            bound = by_name.get(current, [])
            value = _held_value(bound[0]) if len(bound) == 1 else None
            value = torch_ops.grad_operand(value, qualify) if value is not None else None
            if type(value) is not cst.Name:
                break
            current = value.value
        if current in names:
            found.add(name)
    return found


def _held_value(binding: Binding) -> cst.BaseExpression | None:
    """What a binding's name holds: its bound value, or for a loop target the container it draws from
    (`b` of `for a, b in zip(xs, ys)` holds an element of `ys`)."""
    if binding.kind == "for" and binding.value is not None:
        return torch_ops.element_source(binding.value, binding.position)
    return binding.bound_value


def holders(bindings: list[Binding], names: set[str], qualify: torch_ops.Qualify | None = None) -> set[str]:
    """`names` and every name bound, at some point, to one of them (`h = x` before `h = block(h)`, also
    through operations that keep it: `h = x.cuda()`, and a loop target drawn from one: `for h in zip(w, x)`),
    given the binding model's bindings of a scope."""
    holders = set(names)
    changed = True
    while changed:
        changed = False
        for binding in bindings:
            value = _held_value(binding)
            value = torch_ops.grad_operand(value, qualify) if value is not None else None
            if binding.name not in holders and type(value) is cst.Name and value.value in holders:  # type: ignore[union-attr]
                holders.add(binding.name)
                changed = True
    return holders
