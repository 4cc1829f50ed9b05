"""SF412 load-state-dict-not-strict-unchecked: `load_state_dict(sd, strict=False)` whose result is never read.

With `strict=False`, `nn.Module.load_state_dict` loads the keys that match and returns the ones that do
not (`missing_keys`, `unexpected_keys`) instead of raising. A call whose result nobody reads turns every
renamed layer, wrapper prefix (`module.`) or architecture change into layers that silently keep their
random initialisation.

A query over the model: the call (`x.load_state_dict(...)`, `nn.Module.load_state_dict(x, ...)`), whether
`strict` is false (a literal, or a name whose one reaching value is), what the receiver is (`classes`: an
instance of a class shown not to be a module, with a `load_state_dict` of its own, is left alone; an
optimizer takes no `strict`), and whether the result is read: a statement of its own, or bound to names
(`missing, unexpected = ...`, `_ = ...`) none of which is read later, is unread; anything else (returned,
passed on, tested, stored on an object) reads it.

The fix (unsafe: a load that went through now raises when keys are missing) binds the result and raises
on missing keys; offered for a call that is a statement of its own.
"""

from __future__ import annotations

import ast
from typing import Optional

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.model.domain.key_checks import keys_chosen_in_code, raises, tests_keys
from stabfix.model.source.syntax import code_of
from stabfix.shape import Shape

RESULT_NAME = "load_result"


class LoadStateDictNotStrictUnchecked(Checker):
    code = "SF412"
    tokens = ("load_state_dict",)
    also_needs = (("strict", "False"),)
    needs = ("names", "classes")

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:
        # a `.load_state_dict()` that is a statement or an assignment's value, given `strict` as `False` or a name
        for call in shape.calls("load_state_dict"):
            if type(call.func) is ast.Attribute and type(parent := shape.parent(call)) in (ast.Expr, ast.Assign) and parent.value is call:
                strict = [k.value for k in call.keywords if k.arg == "strict"] or [a for a in call.args if type(a) is not ast.Starred][1:3]
                if any(type(e) is ast.Name or type(e) is ast.Constant and e.value is False for e in strict):
                    return True
        return False

    def __init__(self, context) -> None:
        super().__init__(context)
        # each call whose result is dropped or only bound to names: (call, its own line, the assignment)
        self.unread: list[tuple[cst.Call, Optional[cst.SimpleStatementLine], Optional[cst.Assign]]] = []
        self.line: Optional[cst.SimpleStatementLine] = None
        self.words: set[str] = set()
        self.functions: list[cst.FunctionDef] = []
        # per function, the `if ...: raise` statements met so far (a test of keys that raises checks them itself)
        self.raising_ifs: dict[Optional[cst.FunctionDef], list[cst.If]] = {}
        self.ifs_before: dict[int, list[cst.If]] = {}  # id(load call) -> the raising ifs of its function before it

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.line = node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.functions.pop()

    def visit_If(self, node: cst.If) -> None:
        if raises(node):
            self.raising_ifs.setdefault(self.functions[-1] if self.functions else None, []).append(node)

    def visit_Name(self, node: cst.Name) -> None:
        self.words.add(node.value)

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine) -> None:
        self.line = None

    def visit_Expr(self, node: cst.Expr) -> None:
        if _loads_state(node.value):  # the fix rewrites a line that holds only this statement
            self._note_checks_before(node.value)
            alone = self.line is not None and len(self.line.body) == 1 and self.line.body[0] is node
            self.unread.append((node.value, self.line if alone else None, None))

    def visit_Assign(self, node: cst.Assign) -> None:
        if _loads_state(node.value):
            self._note_checks_before(node.value)
            if all(_bound_names(t.target) is not None for t in node.targets):
                self.unread.append((node.value, None, node))

    def leave_Module(self, original_node: cst.Module) -> None:
        for call, line, assign in self.unread:
            receiver = self._receiver(call)
            if receiver is None or not self._not_strict(call):
                continue
            if self.model.classes.kind_of(receiver) in ("other", "optimizer"):
                continue  # a class of its own with a `load_state_dict`: its result is its own business
            loaded = _loaded(call)
            if loaded is not None and keys_chosen_in_code(self.model.names, loaded):
                continue  # a deliberate partial copy: keys written in the code or taken from a live module
            targets = [n for t in assign.targets for n in _bound_names(t.target) or []] if assign else []
            if assign is not None and self._read_later(assign):
                continue
            about = (receiver,) if loaded is None else (receiver, loaded)
            if any(tests_keys(self.model.names, branch.test, about) for branch in self.ifs_before.get(id(call), [])):
                continue  # `if missing_keys: raise ...` before the load: the code checks the keys itself
            self.report(call, self._message(call, receiver, targets), self._fix(call, line))

    def _note_checks_before(self, call: cst.Call) -> None:
        self.ifs_before[id(call)] = list(self.raising_ifs.get(self.functions[-1] if self.functions else None, []))

    def _receiver(self, call: cst.Call) -> Optional[cst.BaseExpression]:
        func = call.func
        if type(func) is not cst.Attribute or func.attr.value != "load_state_dict":
            return None
        qualified = self.model.names.qualify(func) or ""
        if qualified.startswith("torch.nn.") and qualified.endswith("Module.load_state_dict"):
            return call.args[0].value if call.args and call.args[0].keyword is None else None
        return func.value

    def _not_strict(self, call: cst.Call) -> bool:
        qualified = self.model.names.qualify(call.func) or ""
        unbound = qualified.endswith("Module.load_state_dict")  # `nn.Module.load_state_dict(model, sd, False)`
        strict = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "strict"), None)
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        if strict is None and len(positional) > (2 if unbound else 1):
            strict = positional[2 if unbound else 1]
        return strict is not None and self._is_false(strict)

    def _is_false(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        if type(expr) is cst.Name and expr.value == "False":
            return True
        if type(expr) is cst.Name and depth < 4:
            value = self.model.names.single_value(expr)
            return value is not None and self._is_false(value, depth + 1)
        return False

    def _read_later(self, assign: cst.Assign) -> bool:
        """Whether a use of a name the assignment binds may see that binding."""
        names = self.model.names
        bound = [b for b in names.all_bindings() if b.node is assign]
        targets = {id(n) for t in assign.targets for n in _bound_names(t.target) or []}
        spelled = {b.name for b in bound}
        return any(any(b in bound for b in names.reaching(use))
                   for use in names.uses if use.value in spelled and id(use) not in targets)

    def _message(self, call: cst.Call, receiver: cst.BaseExpression, targets: list[cst.Name]) -> str:
        kept = f"is bound to `{', '.join(t.value for t in targets)}`, which nothing reads" if targets else "is dropped"
        return (
            f"`{code_of(call, 90)}` loads only the keys that match and returns the missing and unexpected ones, "
            f"but the result {kept}: layers renamed, wrapped (`module.`) or added since the checkpoint silently "
            f"keep their random initialisation; check `missing_keys` (and `unexpected_keys`) and raise, or load "
            "strictly"
        )

    def _fix(self, call: cst.Call, line: Optional[cst.SimpleStatementLine]) -> Optional[Fix]:
        if line is None:
            return None
        result = RESULT_NAME
        while result in self.words:
            result += "_"
        assign = line.with_changes(body=[cst.Assign([cst.AssignTarget(cst.Name(result))], call)])
        check = cst.parse_statement(
            f"if {result}.missing_keys:\n"
            f"    raise RuntimeError(f\"weights missing from the loaded state dict: {{{result}.missing_keys}}\")\n")
        return Fix("unsafe", "bind the result and raise on missing keys", {line: cst.FlattenSentinel([assign, check])})


def _loaded(call: cst.Call) -> Optional[cst.BaseExpression]:
    """The state dict a `load_state_dict` call is handed (its first argument, or `state_dict=`)."""
    qualified_unbound = type(call.func) is cst.Attribute and type(call.func.value) is cst.Attribute \
        and call.func.value.attr.value == "Module"
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    keyword = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "state_dict"), None)
    index = 1 if qualified_unbound else 0
    return keyword if keyword is not None else positional[index] if len(positional) > index else None


def _loads_state(value: cst.BaseExpression) -> bool:
    return type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value == "load_state_dict"


def _bound_names(target: cst.BaseExpression) -> Optional[list[cst.Name]]:
    """The names a target binds, or None when it stores elsewhere (an attribute, an item): read later."""
    if type(target) is cst.Name:
        return [target]
    if type(target) in (cst.Tuple, cst.List):
        found: list[cst.Name] = []
        for element in target.elements:
            inner = _bound_names(element.value)
            if inner is None:
                return None
            found.extend(inner)
        return found
    if type(target) is cst.StarredElement:
        return _bound_names(target.value)
    return None

