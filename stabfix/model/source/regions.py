"""Where the traversal stands inside a scope: the open blocks (`Binding.suites`), whether it is inside a
branch or loop body (`Binding.conditional`), and whether autograd is off there (`Binding.grad_off`: a
`torch.no_grad()`/`inference_mode()` block, a decorator that turns it off, or a lambda or comprehension
written in such a region). `Regions` is mixed into the `names` part's recorder (`binding_recorder`),
which stamps every binding and use with it.
"""

from __future__ import annotations

import re

from typing import Optional

import libcst as cst

from stabfix.model.source.scopes import Scope, ScopeNode
from stabfix.model.source.syntax import NAMES_AND_ATTRIBUTES

GRAD_OFF_CONTEXTS = frozenset(
    {"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad",
     "torch.autograd.grad_mode.inference_mode"}
)
GRAD_SWITCHES = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled"})
_GRAD_OFF_NAME = re.compile(r"(?:^|_)(?:no_grad|inference_mode)(?:$|_)")


def _is_name(expr: cst.BaseExpression, value: str) -> bool:
    return type(expr) is cst.Name and expr.value == value


class Regions(cst.BatchableCSTVisitor):
    """Per open scope: its open blocks, its open branches, whether autograd is off (a stack each, kept
    in step with the recorder's scope stack by `_open_regions`/`_close_regions`)."""

    # the recorder's stack of open scopes (see `BindingRecorder`)
    _stack: list[Scope]

    def __init__(self) -> None:
        super().__init__()
        # per scope: ids of the open blocks, outermost first (a tuple each: every binding and use of the block
        # keeps it as it is, one object for all of them)
        self._suites: list[tuple[int, ...]] = []
        self._branch_depth: list[int] = []  # per scope: open if/else/except/match/loop bodies
        self._grad_off: list[bool] = []  # per scope: autograd is off here
        self.grad_off_functions: set[cst.FunctionDef] = set()
        # functions that build a decorator turning autograd off (`def smart_inference_mode(): ...
        # return torch.inference_mode()(fn)`): `@smart_inference_mode()` turns it off too
        self._grad_off_makers: set[cst.CSTNode] = set()

    def _open_regions(self, node: ScopeNode, grad_off: bool) -> None:
        self._suites.append(())
        self._branch_depth.append(0)
        # comprehensions and lambdas run where they are written; a def runs where it is called
        inherited = bool(self._grad_off) and self._grad_off[-1] and type(node) is not cst.FunctionDef
        self._grad_off.append(grad_off or inherited)

    def _close_regions(self) -> None:
        self._suites.pop()
        self._branch_depth.pop()
        self._grad_off.pop()

    # -- autograd regions ------------------------------------------------------------------------------
    def visit_With_body(self, node: cst.With) -> None:
        if self._grad_off:
            self._grad_off.append(self._grad_off[-1] or any(self._disables_grad(item.item) for item in node.items))

    def leave_With_body(self, node: cst.With) -> None:
        if len(self._grad_off) > len(self._stack):
            self._grad_off.pop()

    def _disables_grad(self, expr: cst.BaseExpression) -> bool:
        """`torch.no_grad()`, `torch.inference_mode()`, `torch.set_grad_enabled(False)`, as imported so far."""
        target = expr.func if type(expr) is cst.Call else expr
        name = self._qualify_so_far(target) or ""
        if name in GRAD_OFF_CONTEXTS:
            # `inference_mode(False)` turns it back off
            return not (type(expr) is cst.Call and expr.args and _is_name(expr.args[0].value, "False"))
        if name in GRAD_SWITCHES and type(expr) is cst.Call and expr.args:
            return _is_name(expr.args[0].value, "False")
        return False

    def _grad_off_context(self, expr: cst.BaseExpression) -> bool:
        """`torch.no_grad()`, or a choice between such contexts (`(torch.inference_mode if new else
        torch.no_grad)()`)."""
        if type(expr) is cst.Call and type(expr.func) is cst.IfExp and not expr.args:
            branches = (expr.func.body, expr.func.orelse)
            return all((self._qualify_so_far(b) or "") in GRAD_OFF_CONTEXTS for b in branches)
        return type(expr) is cst.Call and self._disables_grad(expr)

    def _grad_off_decorator(self, decorator: cst.BaseExpression) -> bool:
        """A decorator made by a function that turns autograd off: one of this file whose body applies
        or returns a no-grad context, or, when the file cannot show its body (imported from the
        project), one whose name says what it does (`smart_inference_mode()`, `torch_no_grad`)."""
        target = decorator.func if type(decorator) is cst.Call else decorator
        if type(target) not in NAMES_AND_ATTRIBUTES or not self._stack:
            return False
        if type(target) is cst.Name:
            bindings = self._stack[-1].resolving(target.value).bindings.get(target.value, [])
            if bindings and bindings[-1].kind == "def":
                return bindings[-1].node in self._grad_off_makers
        qualified = self._qualify_so_far(target)
        if qualified is None or qualified.startswith("torch."):
            return False  # a local variable, or a torch name (its real contexts are matched exactly)
        return bool(_GRAD_OFF_NAME.search(qualified.rsplit(".", 1)[-1].lower()))

    def _mark_grad_off_maker(self) -> None:
        for scope in self._stack:
            if type(scope.node) is cst.FunctionDef:
                self._grad_off_makers.add(scope.node)

    def visit_Call(self, node: cst.Call) -> None:
        if type(node.func) is cst.Call and self._grad_off_context(node.func):  # exact types (see node_fields.node_kinds)
            self._mark_grad_off_maker()  # `torch.inference_mode()(fn)`: a context applied as a decorator

    def _qualify_so_far(self, expr: cst.BaseExpression) -> Optional[str]:
        """Qualified name by the imports met so far (the traversal has not reached later uses yet)."""
        if type(expr) is cst.Attribute:
            base = self._qualify_so_far(expr.value)
            return f"{base}.{expr.attr.value}" if base is not None else None
        if type(expr) is not cst.Name or not self._stack:
            return None
        bindings = self._stack[-1].resolving(expr.value).bindings.get(expr.value, [])
        return bindings[-1].qualified if bindings and bindings[-1].kind == "import" else None

    # -- blocks: which suites and branches a binding sits in ------------------------------------------
    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        if self._suites:
            self._suites[-1] += (id(node),)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        if self._suites and self._suites[-1]:
            self._suites[-1] = self._suites[-1][:-1]

    # a one-line body (`if c: x = 1`) is a block too: its bindings run only when its branch does
    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        if self._suites:
            self._suites[-1] += (id(node),)

    def leave_SimpleStatementSuite(self, original_node: cst.SimpleStatementSuite) -> None:
        if self._suites and self._suites[-1]:
            self._suites[-1] = self._suites[-1][:-1]

    # libcst finds visitor methods by their __name__, so each branch kind gets its own pair
    def _enter_branch(self) -> None:
        if self._branch_depth:
            self._branch_depth[-1] += 1

    def _leave_branch(self) -> None:
        if self._branch_depth:
            self._branch_depth[-1] -= 1

    def visit_If_body(self, node: cst.If) -> None:
        self._enter_branch()

    def leave_If_body(self, node: cst.If) -> None:
        self._leave_branch()

    def visit_Else_body(self, node: cst.Else) -> None:
        self._enter_branch()

    def leave_Else_body(self, node: cst.Else) -> None:
        self._leave_branch()

    def visit_ExceptHandler_body(self, node: cst.ExceptHandler) -> None:
        self._enter_branch()

    def leave_ExceptHandler_body(self, node: cst.ExceptHandler) -> None:
        self._leave_branch()

    def visit_MatchCase_body(self, node: cst.MatchCase) -> None:
        self._enter_branch()

    def leave_MatchCase_body(self, node: cst.MatchCase) -> None:
        self._leave_branch()

    def visit_For_body(self, node: cst.For) -> None:
        self._enter_branch()

    def leave_For_body(self, node: cst.For) -> None:
        self._leave_branch()

    def visit_While_body(self, node: cst.While) -> None:
        self._enter_branch()

    def leave_While_body(self, node: cst.While) -> None:
        self._leave_branch()
