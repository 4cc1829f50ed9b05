"""Which expressions of one scope hold the very same tensor values, and which calls compute a loss.

Built for SF401 (reference-aliases-source) and usable by any rule that must know whether two
operands are the same tensor: `ref = x_src` (an alias), `ref = x_src.clone()` (a copy: the same
values), `ref = x_src.detach().to(device)`. An alias is followed only when it provably holds at the
use: exactly one binding of the name reaches the use (the binding model's `reaching`), it is not
inside an `if`/`except`/`match` branch, and neither the source name is re-bound after it nor — for
copies — either side is modified in place after it.

The model part `tensors` (`TensorFacts`) records, in the engine's traversal, what the binding model
does not: in-place changes, bindings made inside a branch, and the expressions whose value is a loss
(per scope: an outermost function with its closures, or the module's top level). What a loss is What a loss is
made of (its operands, its terms) is in `loss_operands.py`; which operands hold the same values, and
the queries over the recorded facts (`value_key`, `alias_binding`, `changes_between`...), in
`value_keys.py` (`ValueAliases`, which `TensorFacts` inherits).
"""

from __future__ import annotations

import libcst as cst

from stabfix.model.calls.loss_operands import backpropagated, loss_term_calls, root_name, root_name_node
from stabfix.model.calls.losses import LossIndex, identifier_words, is_loss_callee_name, is_loss_class_name, is_loss_like_name
from stabfix.model.source.enclosing import EnclosingDefinitions
from stabfix.model.source.imports import dotted_name
from stabfix.model.flow.value_keys import (
    COPY_FUNCTIONS,
    COPY_METHODS,
    VIEW_ATTRIBUTES,
    VIEW_METHODS,
    AliasStep,
    Qualifier,
    ScopeTensors,
    ValueAliases,
    ValueKey,
    alias_source,
    literal_key,
    spells_whole_value,
    strip_value_wrappers,
)

# the names other modules import from here
__all__ = ["COPY_FUNCTIONS", "COPY_METHODS", "VIEW_ATTRIBUTES", "VIEW_METHODS", "AliasStep", "Qualifier",
           "ScopeTensors", "TensorFacts", "ValueKey", "alias_source", "literal_key", "spells_whole_value",
           "strip_value_wrappers"]

# In-place methods that do not change a tensor's values.
_VALUE_KEEPING_INPLACE = frozenset({"requires_grad_", "detach_", "share_memory_", "retain_grad"})


class TensorFacts(ValueAliases, cst.BatchableCSTVisitor):
    """The model part `tensors`: which operands hold the very same tensor values (`value_key`), and which
    calls are terms of a loss (`loss_term_calls`). Built on the binding model and the loss index."""

    def __init__(self, losses: LossIndex, enclosing: EnclosingDefinitions) -> None:
        super().__init__()
        self.losses = losses
        self.enclosing = enclosing
        self.names = losses.names
        self.scopes: dict[cst.CSTNode, ScopeTensors] = {}
        self.branched: set[cst.CSTNode] = set()  # bindings inside an if/else/except/match branch of their scope
        self._current: list[ScopeTensors | None] = []
        self._branches: list[int] = [0]  # per function nesting level: open branches
        self.stores: list[tuple[cst.Subscript, cst.Assign]] = []  # `batch["ref"] = ...` with a literal index

    # -- traversal -----------------------------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self._current = [self.scopes.setdefault(node, ScopeTensors())]

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if self.enclosing.innermost_function() is None:
            self._current.append(None)  # a class body is its own scope; its methods are scopes of their own

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        if self.enclosing.innermost_function() is None:
            self._current.pop()

    def _is_outermost(self, function: cst.FunctionDef) -> bool:
        # the tracker has entered `function` before this part's visit and leaves it after its leave
        return self.enclosing.enclosing_functions()[0] is function

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self._is_outermost(node):
            self._current.append(self.scopes.setdefault(node, ScopeTensors()))
        self._branches.append(0)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._branches.pop()
        if self._is_outermost(original_node):
            self._current.pop()

    def _enter_branch(self) -> None:
        self._branches[-1] += 1

    def _leave_branch(self) -> None:
        self._branches[-1] -= 1

    def visit_If_body(self, node: cst.If) -> None:
        # `if __name__ == "__main__":` guards a script, it does not choose between values
        if not _is_main_guard(node.test):
            self._enter_branch()

    def leave_If_body(self, node: cst.If) -> None:
        if not _is_main_guard(node.test):
            self._leave_branch()

    def visit_Else_body(self, node: cst.Else) -> None:
        self._enter_branch()

    def leave_Else_body(self, node: cst.Else) -> None:
        self._leave_branch()

    def visit_ExceptHandler_body(self, node: cst.ExceptHandler) -> None:
        self._enter_branch()

    def leave_ExceptHandler_body(self, node: cst.ExceptHandler) -> None:
        self._leave_branch()

    def visit_ExceptStarHandler_body(self, node: cst.ExceptStarHandler) -> None:
        self._enter_branch()

    def leave_ExceptStarHandler_body(self, node: cst.ExceptStarHandler) -> None:
        self._leave_branch()

    def visit_MatchCase_body(self, node: cst.MatchCase) -> None:
        self._enter_branch()

    def leave_MatchCase_body(self, node: cst.MatchCase) -> None:
        self._leave_branch()

    @property
    def _scope(self) -> ScopeTensors | None:
        return self._current[-1] if self._current else None

    def _binding(self, node: cst.CSTNode) -> None:
        if self._branches[-1] > 0:
            self.branched.add(node)

    def _mutate(self, expr: cst.BaseExpression) -> None:
        root = root_name_node(expr)
        if root is not None and self._scope is not None:
            self._scope.mutations.append(root)

    def _target(self, target: cst.BaseExpression) -> None:
        target_type = type(target)  # exact types (see node_fields.node_kinds)
        if target_type is cst.Tuple or target_type is cst.List:
            for element in target.elements:
                self._target(element.value)
        elif target_type is cst.StarredElement:
            self._target(target.value)
        elif target_type is cst.Subscript or target_type is cst.Attribute:
            # `x[mask] = 0`, `batch.x = ...`, `t.data = ...`: the object behind the root name changes
            if target_type is cst.Attribute and target.attr.value in ("requires_grad", "grad", "retains_grad"):
                return
            self._mutate(target)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._binding(node)
        for target in node.targets:
            self._target(target.target)
            self._record_loss_sink(target.target, node.value)
            if type(target.target) is cst.Subscript and literal_key(target.target) is not None:
                self.stores.append((target.target, node))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._binding(node)
        if node.value is not None:
            self._target(node.target)
            self._record_loss_sink(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._binding(node)
        self._target(node.target)
        self._record_loss_sink(node.target, node.value)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._binding(node)

    def visit_Call(self, node: cst.Call) -> None:
        scope = self._scope
        if scope is None:
            return
        func = node.func
        if type(func) is cst.Attribute:
            method = func.attr.value
            if method.endswith("_") and not method.startswith("_") and method not in _VALUE_KEEPING_INPLACE:
                self._mutate(func.value)
            if method == "backward":
                scope.sinks.append(backpropagated(node))
            elif method in ("append", "extend") and is_loss_like_name(root_name(func.value) or ""):
                scope.sinks.extend(arg.value for arg in node.args)
            elif method == "manual_backward" and node.args:
                scope.sinks.append(node.args[0].value)
        if node.args and (dotted_name(func) or "").endswith("grad"):
            if self.losses.imports.qualify(func) == "torch.autograd.grad":
                scope.sinks.append(node.args[0].value)

    def visit_Return(self, node: cst.Return) -> None:
        function_node = self.enclosing.innermost_function()
        if node.value is None or self._scope is None or function_node is None:
            return
        function = function_node.name.value
        class_node = self.enclosing.innermost_class()
        owner = class_node.name.value if class_node is not None else ""
        if (
            is_loss_callee_name(function)
            or identifier_words(function)[-1:] == ("step",)
            or (function in ("forward", "__call__") and is_loss_class_name(owner))
        ):
            self._scope.sinks.append(node.value)

    def _record_loss_sink(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if self._scope is None:
            return
        root = root_name(target)
        if root is None or not is_loss_like_name(root):
            return
        if type(value) is cst.Dict:
            self._scope.sinks.extend(e.value for e in value.elements if type(e) is cst.DictElement)
        else:
            self._scope.sinks.append(value)

    # -- queries (and those of `ValueAliases`) -------------------------------------------------------
    def loss_term_calls(self, scope: cst.CSTNode) -> set[cst.Call]:
        """Calls whose result is a term of a loss value (summed into what is backpropagated, returned
        from a loss/step function, or stored under a loss name)."""
        sinks = self.scopes[scope].sinks if scope in self.scopes else ()
        return loss_term_calls(sinks, self.names, self.losses.qualify)


def _is_main_guard(test: cst.BaseExpression) -> bool:
    return (
        type(test) is cst.Comparison
        and type(test.left) is cst.Name
        and test.left.value == "__name__"
    )
