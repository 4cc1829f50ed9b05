"""Which expressions of one scope hold the very same tensor values, and which calls compute a loss.

Built for SF401 (reference-aliases-source) and usable by any rule that must know whether two
operands are the same tensor: `ref = x_src` (an alias), `ref = x_src.clone()` (a copy: the same
values), `ref = x_src.detach().to(device)`. An alias is followed only when it provably holds at the
use: the name is bound exactly once in the scope, unconditionally (not inside an `if`/`except`/
`match` branch), before the use, and neither the source name is re-bound after it nor — for copies —
either side is modified in place after it.

`ScopeIndex` walks one scope (a function with its nested closures, or the module's top-level
statements) once, lazily, only for scopes that already contain a trigger site.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from stabfix.model.imports import ImportTracker, dotted_name
from stabfix.model.losses import (  # noqa: F401  (identifier_words, LossCall are re-exported for the rules)
    LossCall,
    LossInstances,
    identifier_words,
    is_loss_callee_name,
    is_loss_class_name,
    is_loss_like_name,
)

# Methods that return the same values (a view, a copy, a cast, a move): `x.detach().clone()` is `x`.
VIEW_METHODS = frozenset({"detach", "detach_", "requires_grad_", "contiguous", "view_as", "reshape_as"})
COPY_METHODS = frozenset({"clone", "float", "double", "half", "bfloat16", "to", "cpu", "cuda", "type_as", "type"})
COPY_FUNCTIONS = frozenset({"torch.clone", "copy.deepcopy", "copy.copy", "torch.Tensor.clone"})
# `x.data` is the same storage.
VIEW_ATTRIBUTES = frozenset({"data"})
# In-place methods that do not change a tensor's values.
_VALUE_KEEPING_INPLACE = frozenset({"requires_grad_", "detach_", "share_memory_", "retain_grad"})

# --- value keys ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class AliasStep:
    """One followed binding: `alias = <source>` (kind `alias`, `view` or `copy`)."""

    alias: str
    source: str  # code of the source expression after the stripped wrappers
    kind: str
    binding: "Binding"


@dataclass(frozen=True)
class ValueKey:
    """What an operand evaluates to: `key` is the root value (`x_src`, `batch["x"]`), `steps` the aliases used."""

    key: str
    root_name: str  # the leading Name of the root value
    steps: tuple[AliasStep, ...]
    copied: bool  # a wrapper like .clone()/.to() was stripped directly on the operand

    @property
    def is_bare_name(self) -> bool:
        return self.key == self.root_name


def strip_value_wrappers(expr: cst.BaseExpression, imports: ImportTracker) -> tuple[cst.BaseExpression, str]:
    """`x.detach().clone().to(dev)` -> (`x`, "copy"); `x.data` -> (`x`, "view"); `x` -> (`x`, "alias")."""
    kind = "alias"
    while True:
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            method = expr.func.attr.value
            if method in VIEW_METHODS or method in COPY_METHODS:
                if method == "type" and not expr.args:
                    return expr, kind  # `x.type()` is the type string, not a tensor
                if method in COPY_METHODS:
                    kind = "copy"
                elif kind == "alias":
                    kind = "view"
                expr = expr.func.value
                continue
        if isinstance(expr, cst.Call) and len(expr.args) == 1 and expr.args[0].keyword is None:
            qualified = imports.qualify(expr.func)
            if qualified in COPY_FUNCTIONS:
                kind = "copy"
                expr = expr.args[0].value
                continue
        if isinstance(expr, cst.Attribute) and expr.attr.value in VIEW_ATTRIBUTES:
            kind = "view" if kind == "alias" else kind
            expr = expr.value
            continue
        return expr, kind


def _constant_code(expr: cst.BaseExpression) -> str | None:
    """Code of an index that cannot change between two evaluations: literals, names, attribute chains."""
    if isinstance(expr, (cst.Integer, cst.SimpleString, cst.Float)):
        return expr.value
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = _constant_code(expr.expression)
        return f"-{inner}" if inner is not None else None
    name = dotted_name(expr)
    if name is not None:
        return name
    return None


def _slice_code(node: cst.Subscript) -> str | None:
    parts: list[str] = []
    for element in node.slice:
        index = element.slice
        if isinstance(index, cst.Index):
            code = _constant_code(index.value)
            if code is None:
                return None
            parts.append(code)
        elif isinstance(index, cst.Slice):
            bounds = []
            for bound in (index.lower, index.upper, index.step):
                if bound is None:
                    bounds.append("")
                else:
                    code = _constant_code(bound)
                    if code is None:
                        return None
                    bounds.append(code)
            parts.append(":".join(bounds).rstrip(":") or ":")
        else:
            return None
    return ", ".join(parts)


def literal_key(expr: cst.BaseExpression) -> str | None:
    """A cheap spelling key (no alias following): `x`, `self.x`, `batch["x"]`, `x[:, 0]`; None otherwise."""
    name = dotted_name(expr)
    if name is not None:
        return name
    if isinstance(expr, cst.Subscript):
        base = literal_key(expr.value)
        index = _slice_code(expr)
        if base is not None and index is not None:
            return f"{base}[{index}]"
    return None


# --- facts of one scope -----------------------------------------------------------------------


@dataclass
class Binding:
    name: str
    order: int
    node: cst.CSTNode  # the statement or expression that binds
    value: cst.BaseExpression | None  # for `name = value` bindings, else None
    suites: tuple[int, ...]  # ids of the enclosing suites, outermost first
    conditional: bool  # inside an if/elif/else/except/match branch of the scope


@dataclass
class CallSite:
    call: cst.Call
    order: int
    suites: tuple[int, ...]
    in_test: bool  # inside an `assert` or a test function: comparing a loss of x with x is a check


class ScopeFacts:
    """What one scope (a function with its closures, or a module's top level) binds, changes and calls.

    Filled in source order by `ScopeFactsCollector` during the engine's single traversal; `order`
    numbers the recorded events, so "before"/"after" questions are integer comparisons."""

    def __init__(self, imports: ImportTracker, class_name: str | None) -> None:
        self.imports = imports
        self.class_name = class_name  # the class the scope's function is a method of
        self.bindings: dict[str, list[Binding]] = {}
        self.unknown: set[str] = set()  # global/nonlocal: anything may re-bind them
        self.mutations: dict[str, list[int]] = {}  # name -> orders of in-place changes
        self.augmented: dict[str, list[cst.BaseExpression]] = {}  # `loss += term`
        self.calls: list[CallSite] = []
        self.sinks: list[cst.BaseExpression] = []  # expressions whose value is a loss
        self.order = 0
        self.triggered = False  # set by a checker when the scope holds a site worth analysing

    def next_order(self) -> int:
        self.order += 1
        return self.order

    # questions ----------------------------------------------------------------------------------------
    def binding_count(self, name: str) -> int:
        return 10**6 if name in self.unknown else len(self.bindings.get(name, ()))

    def rebound_between(self, name: str, start: int, end: int) -> bool:
        if name in self.unknown:
            return True
        return any(start < b.order < end for b in self.bindings.get(name, ()))

    def alias_binding(self, name: str, use_order: int, use_suites: tuple[int, ...]) -> Binding | None:
        """The single, unconditional `name = value` binding that holds at a use, if there is one."""
        if self.binding_count(name) != 1:
            return None
        binding = self.bindings[name][0]
        if binding.value is None or binding.conditional or binding.order >= use_order:
            return None
        if use_suites[: len(binding.suites)] != binding.suites:
            return None  # bound in a loop or block the use is not inside
        return binding

    def value_key(self, expr: cst.BaseExpression, use_order: int, use_suites: tuple[int, ...]) -> ValueKey | None:
        """The root value an operand holds, following aliases and copies that provably hold at the use."""
        expr, first_kind = strip_value_wrappers(expr, self.imports)
        steps: list[AliasStep] = []
        for _ in range(10):
            if not isinstance(expr, cst.Name):
                break
            binding = self.alias_binding(expr.value, use_order, use_suites)
            if binding is None:
                break
            source = alias_source(binding.value, self.imports)  # type: ignore[arg-type]
            if source is None or _root_name(source) == expr.value:
                break
            kind = strip_value_wrappers(binding.value, self.imports)[1]  # type: ignore[arg-type]
            if self._source_changed(source, kind, binding):
                break
            if kind == "copy" and self._mutated_after(expr.value, binding.order):
                break
            steps.append(AliasStep(expr.value, literal_key(source) or "", kind, binding))
            expr = source
        key = literal_key(expr)
        root = _root_name(expr)
        if key is None or root is None:
            return None
        return ValueKey(key, root, tuple(steps), first_kind == "copy")

    def _source_changed(self, source: cst.BaseExpression, kind: str, binding: Binding) -> bool:
        """Whether the source may hold other values at a later use than at the alias binding.

        Conservative about loops: any re-binding or in-place change after the alias counts."""
        root = _root_name(source)
        if root is None or root in self.unknown:
            return True
        if any(b.order > binding.order for b in self.bindings.get(root, ())):
            return True
        if not isinstance(source, cst.Name) or kind == "copy":
            # a copy no longer follows in-place changes of its source; `batch["x"] = ...` replaces the value
            return self._mutated_after(root, binding.order)
        return False

    def _mutated_after(self, name: str, start: int) -> bool:
        return any(start < order for order in self.mutations.get(name, ()))

    # loss terms -------------------------------------------------------------------------------------
    def loss_term_calls(self) -> set[int]:
        """ids of calls whose result is a term of a loss value (summed into what is backpropagated,
        returned from a loss/step function, or stored under a loss name)."""
        found: set[int] = set()
        seen: set[int] = set()
        for sink in self.sinks:
            self._terms(sink, found, seen, depth=0)
        return found

    def _terms(self, expr: cst.BaseExpression, found: set[int], seen: set[int], depth: int) -> None:
        if depth > 12 or id(expr) in seen:
            return
        seen.add(id(expr))
        nxt = depth + 1
        if isinstance(expr, cst.BinaryOperation):
            self._terms(expr.left, found, seen, nxt)
            self._terms(expr.right, found, seen, nxt)
        elif isinstance(expr, (cst.UnaryOperation, cst.Await)):
            self._terms(expr.expression, found, seen, nxt)
        elif isinstance(expr, cst.IfExp):
            self._terms(expr.body, found, seen, nxt)
            self._terms(expr.orelse, found, seen, nxt)
        elif isinstance(expr, (cst.Tuple, cst.List)):
            for element in expr.elements:
                self._terms(element.value, found, seen, nxt)
        elif isinstance(expr, cst.Subscript):
            self._terms(expr.value, found, seen, nxt)  # `self.energy_loss(...)["total"]`
        elif isinstance(expr, cst.Name):
            for binding in self.bindings.get(expr.value, ()):
                if binding.value is not None:
                    self._terms(binding.value, found, seen, nxt)
            for value in self.augmented.get(expr.value, ()):
                self._terms(value, found, seen, nxt)
        elif isinstance(expr, cst.Call):
            func = expr.func
            qualified = self.imports.qualify(func) or ""
            if isinstance(func, cst.Attribute) and func.attr.value in _PASS_THROUGH_METHODS:
                self._terms(func.value, found, seen, nxt)
                if func.attr.value in _ARITHMETIC_METHODS:
                    for arg in expr.args:
                        self._terms(arg.value, found, seen, nxt)
            elif (
                isinstance(func, cst.Name) and func.value in _PASS_THROUGH_BUILTINS and func.value not in self.bindings
            ) or qualified in _PASS_THROUGH_TORCH:
                for arg in expr.args:
                    self._terms(arg.value, found, seen, nxt)
            elif not qualified.startswith("torch.") or qualified.startswith("torch.nn.functional."):
                found.add(id(expr))


class ScopeFactsCollector(cst.BatchableCSTVisitor):
    """Mixin for a checker: fills one `ScopeFacts` per scope during the engine's traversal.

    Scopes are the outermost functions (methods included, closures folded in: conservative, a
    closure's bindings count as re-bindings) and the module's top level (class bodies excluded).
    A subclass that overrides one of these hooks must call `super()`; call `init_scope_facts`
    from `__init__`."""

    def init_scope_facts(self, imports: ImportTracker) -> None:
        self.scope_imports = imports
        self.scope_facts: dict[cst.CSTNode, ScopeFacts] = {}
        self._facts: ScopeFacts | None = None
        self._scope_functions: list[cst.FunctionDef] = []
        self._scope_classes: list[str] = []
        self._suites: list[tuple[int, bool]] = []
        self._suite_marks: list[int] = []  # suite depth at each function start
        self._branch: list[bool] = []  # the next suite is a conditional branch
        self._asserts = 0
        self._module_facts: ScopeFacts | None = None
        self._suite_cache: tuple[tuple[int, ...], bool] | None = None

    # scopes -------------------------------------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self._module_facts = ScopeFacts(self.scope_imports, None)
        self.scope_facts[node] = self._module_facts
        self._facts = self._module_facts

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._bind(node.name.value, node, None)
        self._scope_classes.append(node.name.value)
        if not self._scope_functions:
            self._facts = None  # a class body is its own scope; its methods are scopes of their own

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._scope_classes.pop()
        if not self._scope_functions and not self._scope_classes:
            self._facts = self._module_facts

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self._scope_functions:
            self._bind(node.name.value, node, None)  # a closure re-binds its name in the scope
        else:
            if self._facts is not None:
                self._bind(node.name.value, node, None)
            class_name = self._scope_classes[-1] if self._scope_classes else None
            self._facts = ScopeFacts(self.scope_imports, class_name)
            self.scope_facts[node] = self._facts
            self._suite_marks.append(len(self._suites))
            self._suite_cache = None
        self._scope_functions.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._scope_functions.pop()
        if not self._scope_functions:
            del self._suites[self._suite_marks.pop():]
            self._suite_cache = None
            self._facts = None if self._scope_classes else self._module_facts

    @property
    def current_facts(self) -> ScopeFacts | None:
        """The scope events are recorded for now (None inside a class body)."""
        return self._facts

    # suites: which blocks enclose a statement, and which of them are conditional branches -----------------
    def _enter_suite(self, node: cst.BaseSuite) -> None:
        conditional = self._branch.pop() if self._branch else False
        self._suites.append((id(node), conditional))
        self._suite_cache = None

    def _leave_suite(self) -> None:
        if self._suites:
            self._suites.pop()
        self._suite_cache = None

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._enter_suite(node)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self._leave_suite()

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self._enter_suite(node)

    def leave_SimpleStatementSuite(self, original_node: cst.SimpleStatementSuite) -> None:
        self._leave_suite()

    def visit_If_body(self, node: cst.If) -> None:
        # `if __name__ == "__main__":` guards a script, it does not choose between values
        self._branch.append(not _is_main_guard(node.test))

    def visit_Else_body(self, node: cst.Else) -> None:
        self._branch.append(True)

    def visit_ExceptHandler_body(self, node: cst.ExceptHandler) -> None:
        self._branch.append(True)

    def visit_ExceptStarHandler_body(self, node: cst.ExceptStarHandler) -> None:
        self._branch.append(True)

    def visit_MatchCase_body(self, node: cst.MatchCase) -> None:
        self._branch.append(True)

    def _suite_state(self) -> tuple[tuple[int, ...], bool]:
        if self._suite_cache is None:
            start = self._suite_marks[-1] if self._scope_functions and self._suite_marks else 0
            scoped = self._suites[start:]
            self._suite_cache = (tuple(s for s, _ in scoped), any(c for _, c in scoped))
        return self._suite_cache

    def visit_Assert(self, node: cst.Assert) -> None:
        self._asserts += 1

    def leave_Assert(self, original_node: cst.Assert) -> None:
        self._asserts -= 1

    # bindings -------------------------------------------------------------------------------------------
    def _bind(self, name: str, node: cst.CSTNode, value: cst.BaseExpression | None) -> None:
        facts = self._facts
        if facts is None:
            return
        suites, conditional = self._suite_state()
        facts.bindings.setdefault(name, []).append(Binding(name, facts.next_order(), node, value, suites, conditional))

    def _mutate(self, root: str | None) -> None:
        if root is not None and self._facts is not None:
            self._facts.mutations.setdefault(root, []).append(self._facts.next_order())

    def _bind_target(self, target: cst.BaseExpression, node: cst.CSTNode, value: cst.BaseExpression | None) -> None:
        if isinstance(target, cst.Name):
            self._bind(target.value, node, value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind_target(element.value, node, None)
        elif isinstance(target, cst.StarredElement):
            self._bind_target(target.value, node, None)
        elif isinstance(target, (cst.Subscript, cst.Attribute)):
            # `x[mask] = 0`, `batch.x = ...`, `t.data = ...`: the object behind the root name changes
            if isinstance(target, cst.Attribute) and target.attr.value in ("requires_grad", "grad", "retains_grad"):
                return
            self._mutate(_root_name(target))

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind_target(target.target, node, node.value)
            self._record_loss_sink(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind_target(node.target, node, node.value)
            self._record_loss_sink(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind_target(node.target, node, None)
        self._record_loss_sink(node.target, node.value)
        if isinstance(node.target, cst.Name) and self._facts is not None:
            self._facts.augmented.setdefault(node.target.value, []).append(node.value)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind_target(node.target, node, node.value)

    def visit_For(self, node: cst.For) -> None:
        self._bind_target(node.target, node, None)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind_target(node.target, node, None)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind_target(node.asname.name, node, None)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._bind_target(node.name.name, node, None)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is not None:
            self._bind_target(node.asname.name, node, None)
        else:
            name = dotted_name(node.name)
            if name is not None:
                self._bind(name.split(".")[0], node, None)

    def visit_Param(self, node: cst.Param) -> None:
        self._bind(node.name.value, node, None)

    def visit_Del(self, node: cst.Del) -> None:
        self._bind_target(node.target, node, None)

    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        if node.name is not None:
            self._bind(node.name.value, node, None)

    def visit_MatchStar(self, node: cst.MatchStar) -> None:
        if node.name is not None:
            self._bind(node.name.value, node, None)

    def visit_Global(self, node: cst.Global) -> None:
        if self._facts is not None:
            self._facts.unknown.update(item.name.value for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        if self._facts is not None:
            self._facts.unknown.update(item.name.value for item in node.names)

    # calls, mutations and loss sinks -------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        facts = self._facts
        if facts is None:
            return
        suites, _ = self._suite_state()
        in_test = self._asserts > 0 or any(_is_test_name(f.name.value) for f in self._scope_functions) or any(
            c.startswith("Test") for c in self._scope_classes
        )
        facts.calls.append(CallSite(node, facts.next_order(), suites, in_test))
        func = node.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method.endswith("_") and not method.startswith("_") and method not in _VALUE_KEEPING_INPLACE:
                self._mutate(_root_name(func.value))
            if method == "backward":
                facts.sinks.append(_backpropagated(node))
            elif method in ("append", "extend") and is_loss_like_name(_root_name(func.value) or ""):
                facts.sinks.extend(arg.value for arg in node.args)
            elif method == "manual_backward" and node.args:
                facts.sinks.append(node.args[0].value)
        if node.args and (dotted_name(func) or "").endswith("grad"):
            if self.scope_imports.qualify(func) == "torch.autograd.grad":
                facts.sinks.append(node.args[0].value)

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is None or not self._scope_functions or self._facts is None:
            return
        function = self._scope_functions[-1].name.value
        owner = self._scope_classes[-1] if self._scope_classes else ""
        if (
            is_loss_callee_name(function)
            or identifier_words(function)[-1:] == ("step",)
            or (function in ("forward", "__call__") and is_loss_class_name(owner))
        ):
            self._facts.sinks.append(node.value)

    def _record_loss_sink(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if self._facts is None:
            return
        root = _root_name(target)
        if root is None or not is_loss_like_name(root):
            return
        if isinstance(value, cst.Dict):
            self._facts.sinks.extend(e.value for e in value.elements if isinstance(e, cst.DictElement))
        else:
            self._facts.sinks.append(value)


_PASS_THROUGH_METHODS = frozenset(
    {"mean", "sum", "squeeze", "float", "double", "view", "reshape", "add", "sub", "mul", "div", "clamp",
     "abs", "sqrt", "pow", "log", "exp", "to", "nan_to_num", "__add__", "__mul__"}
)
_ARITHMETIC_METHODS = frozenset({"add", "sub", "mul", "div", "__add__", "__mul__"})
_PASS_THROUGH_BUILTINS = frozenset({"sum", "abs", "float", "max", "min"})
_PASS_THROUGH_TORCH = frozenset(
    {"torch.mean", "torch.sum", "torch.stack", "torch.cat", "torch.add", "torch.mul", "torch.abs", "torch.log",
     "torch.exp", "torch.sqrt", "torch.clamp", "torch.nan_to_num"}
)


# `True`/`False`/`None` parse as names but are constants: nothing can bind them, and no tensor is one.
_CONSTANT_NAMES = frozenset({"True", "False", "None"})


def _root_name(expr: cst.BaseExpression) -> str | None:
    while True:
        if isinstance(expr, cst.Name):
            return None if expr.value in _CONSTANT_NAMES else expr.value
        if isinstance(expr, (cst.Attribute, cst.Subscript)):
            expr = expr.value
        elif isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            expr = expr.func.value
        else:
            return None


def _backpropagated(call: cst.Call) -> cst.BaseExpression:
    """What `X.backward(...)` differentiates: `loss.backward()`, `scaler.scale(loss).backward()`,
    `accelerator.backward(loss)`, `self.fabric.backward(loss)`."""
    receiver = call.func.value  # type: ignore[attr-defined]
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    if positional and not isinstance(receiver, cst.Call) and not is_loss_like_name(_root_name(receiver) or ""):
        return positional[0]
    return _unscaled(receiver)


def _unscaled(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`scaler.scale(loss)` -> `loss`."""
    if (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value == "scale"
        and expr.args
    ):
        return expr.args[0].value
    return expr


def _is_main_guard(test: cst.BaseExpression) -> bool:
    return (
        isinstance(test, cst.Comparison)
        and isinstance(test.left, cst.Name)
        and test.left.value == "__name__"
    )


def _is_test_name(name: str) -> bool:
    return name.startswith("test") or name.endswith("_test")


# --- which calls are losses ---------------------------------------------------------------------

# Tensor operands of library losses, by position and keyword (the rest are labels, weights, lengths).
_LIBRARY_OPERANDS: dict[str, tuple[tuple[int, ...], tuple[str, ...]]] = {
    "triplet_margin_loss": ((0, 1, 2), ("anchor", "positive", "negative")),
    "TripletMarginLoss": ((0, 1, 2), ("anchor", "positive", "negative")),
    "TripletMarginWithDistanceLoss": ((0, 1, 2), ("anchor", "positive", "negative")),
    "margin_ranking_loss": ((0, 1), ("input1", "input2")),
    "MarginRankingLoss": ((0, 1), ("input1", "input2")),
    "cosine_embedding_loss": ((0, 1), ("input1", "input2")),
    "CosineEmbeddingLoss": ((0, 1), ("input1", "input2")),
}
_DEFAULT_LIBRARY_OPERANDS = ((0, 1), ("input", "target", "log_probs", "targets"))
# Keyword arguments of user losses that are not tensors to compare.
_META_WORDS = frozenset(
    {
        "len", "lens", "length", "lengths", "mask", "masks", "weight", "weights", "w", "idx", "index", "indices",
        "num", "n", "size", "sizes", "count", "step", "steps", "epoch", "scale", "temperature", "temp", "tau",
        "margin", "eps", "epsilon", "dim", "reduction", "reduce", "ignore", "lr", "alpha", "beta", "gamma",
        "lam", "lambda", "t", "time", "timestep", "timesteps", "sigma", "sigmas", "valid", "self", "model",
        "config", "cfg", "args", "opt", "device", "dtype", "shape", "kwargs", "name", "mode", "training",
        "label", "labels", "class", "classes", "cls", "positions", "offsets", "batch",
    }
)


# Words that say a name holds data to compare (`x_t`, `t_logits`, `model_pred`, `feat_mask`).
_TENSOR_WORDS = frozenset(
    {
        "x", "y", "z", "h", "pred", "preds", "prediction", "logits", "logit", "out", "output", "outputs", "target",
        "targets", "tgt", "ref", "src", "source", "feat", "feats", "features", "emb", "embeds", "embedding",
        "latent", "latents", "img", "image", "images", "hidden", "probs", "scores", "recon", "gt",
    }
)


def classify_loss_call(
    call: cst.Call, losses: LossInstances, imports: ImportTracker, class_name: str | None
) -> LossCall | None:
    """A call that computes a loss, by what the callee is: see `LossInstances.resolve` (the one definition)."""
    return losses.resolve(call, class_name)


def operand_positions(loss: LossCall) -> list[tuple[str, cst.BaseExpression]]:
    """(label, expression) of the tensor operands of a loss call, prediction first."""
    call = loss.call
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    if loss.library:
        last = loss.kind.rsplit(".", 1)[-1]
        positions, keywords = _LIBRARY_OPERANDS.get(last, _DEFAULT_LIBRARY_OPERANDS)
        found = [(f"#{i}", positional[i].value) for i in positions if i < len(positional)]
        found += [(arg.keyword.value, arg.value) for arg in call.args if arg.keyword is not None and arg.keyword.value in keywords]
        return found
    found = [(f"#{i}", arg.value) for i, arg in enumerate(positional)]
    for arg in call.args:
        if arg.keyword is not None and not any(w in _META_WORDS for w in identifier_words(arg.keyword.value)):
            found.append((arg.keyword.value, arg.value))
    return found


def is_meta_operand(expr: cst.BaseExpression) -> bool:
    """An argument that names a length, mask, weight, step... rather than a tensor to compare."""
    root = _root_name(expr)
    if root is None:
        return True
    name = dotted_name(expr) or root
    words = identifier_words(name.rsplit(".", 1)[-1])
    if not words:
        return True
    # `x_t`, `t_logits`, `model_pred` are tensors: only a name that ends in a meta word and says
    # nothing of a tensor (`t`, `mask`, `num_items`, `labels`) is taken for one
    return words[-1] in _META_WORDS and not any(w in _TENSOR_WORDS for w in words)


def alias_source(value: cst.BaseExpression, imports: ImportTracker) -> cst.BaseExpression | None:
    """The expression `name = value` makes `name` hold the values of: `x` for `x`, `x.clone()`,
    `x.detach().to(dev)`, `batch["x"]`; None for anything computed (calls, arithmetic, `self.*`)."""
    source, _ = strip_value_wrappers(value, imports)
    if literal_key(source) is None or _root_name(source) in (None, "self"):
        return None
    return source
