"""Whether code checks a state dict's keys itself: an `if ...: raise` (in any branch of its chain) whose test reads
a key collection, `.keys()` of a state dict or module, directly or through the names bound from one
(`missing = set(model.state_dict().keys()) - set(sd)`; `if missing: raise ...`). Asked by SF412: a loose
`load_state_dict` after such a check has had its missing keys looked at. Also whether the code itself chose the
keys of a state dict (`keys_chosen_in_code`: a dict display, another module's `state_dict()`, a copy of one...).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.source.instances import attribute_values
from stabfix.model.source.names import Names


def raises(branch: cst.If) -> bool:
    """`if ...: raise ...`, also in an `elif` of the chain."""
    lines = branch.body.body
    statements = [s for line in lines for s in (line.body if type(line) is cst.SimpleStatementLine else ())] \
        if type(branch.body) is cst.IndentedBlock else list(lines)
    if any(type(statement) is cst.Raise for statement in statements):
        return True
    return type(branch.orelse) is cst.If and raises(branch.orelse)


def tests_keys(names: Names, test: cst.BaseExpression, about: tuple[cst.BaseExpression, ...], budget: int = 12) -> bool:
    """The test reads the keys of what a load is `about` (the state dict it loads, the module it loads into:
    `.keys()` of the same variable, `model.state_dict().keys()`) or the `missing_keys`/`unexpected_keys` of a
    load's result, directly or through the values of the names it reads; not the keys of any other dict."""
    variables = [found for found in (_variable(names, expr) for expr in about) if found is not None]
    frontier = [test]
    while frontier and budget > 0:
        node = frontier.pop()
        budget -= 1
        stack = [node]
        while stack:
            current = stack.pop()
            if type(current) is cst.Call and type(current.func) is cst.Attribute and current.func.attr.value == "keys" \
                    and any(_variable(names, current.func.value) is variable for variable in variables):
                return True
            if type(current) is cst.Attribute and current.attr.value in ("missing_keys", "unexpected_keys"):
                return True
            if type(current) is cst.Name and current in names.uses:
                frontier.extend(b.bound_value for b in names.reaching(current) if b.bound_value is not None)
            stack.extend(current.children)
    return False


def _variable(names: Names, expr: cst.BaseExpression) -> Optional[list]:
    """The bindings list of the variable an expression reads from (`ckpt` of `ckpt["model"]`, `model` of
    `model.state_dict()`): two expressions with the same list read one variable of one scope."""
    while type(expr) in (cst.Attribute, cst.Subscript, cst.Call):
        if type(expr) is cst.Call and names.qualify(expr.func) is not None:
            return None  # `torch.load(path)`: a library call's result, no variable of the file
        expr = expr.func if type(expr) is cst.Call else expr.value
    if type(expr) is not cst.Name or expr not in names.uses:
        return None
    use = names.uses[expr]
    return use.scope.resolving(expr.value).bindings.get(expr.value)


def keys_chosen_in_code(names: Names, expr: cst.BaseExpression, depth: int = 0) -> bool:
    """A dict display (`{"mu": mu}`, `{}` filled key by key), another module's `state_dict()`, a copy or
    comprehension of one, or a helper's result computed against one: the code decides which keys arrive."""
    if depth > 4:
        return False
    if type(expr) is cst.Name:
        value = names.single_value(expr)
        return value is not None and keys_chosen_in_code(names, value, depth + 1)
    if type(expr) is cst.Dict:
        return True
    if type(expr) is cst.Attribute:  # `model.load_state_dict(model._saved_norms)`: what the file stored there
        stored = [v for v in attribute_values(names, expr) if not _is_none(v)]  # on an object of the receiver's class
        return bool(stored) and all(v is not None and keys_chosen_in_code(names, v, depth + 1) for v in stored)
    if type(expr) is cst.DictComp:
        return keys_chosen_in_code(names, expr.for_in.iter, depth + 1)
    if type(expr) is not cst.Call:
        return False
    method = expr.func.attr.value if type(expr.func) is cst.Attribute else ""
    if method in ("state_dict", "named_parameters", "named_buffers"):
        return True
    # a function of this file that reads a live module's `state_dict()`: what every `return` hands back (a helper
    # that only re-keys the checkpoint it is given chooses nothing)
    helper = names.definition_of(expr)
    returned = names.returns.get(helper, []) if helper is not None and _reads_state_dict(helper) else []
    if returned and all(keys_chosen_in_code(names, value, depth + 1) for value in returned):
        return True
    if any(type(a.value) is cst.Call and type(a.value.func) is cst.Attribute
           and a.value.func.attr.value == "state_dict" for a in expr.args):
        return True  # `intersect_dicts(ckpt, model.state_dict())`: matched against the live module's keys
    copied = (names.qualify(expr.func) or "") in ("copy.deepcopy", "copy.copy") or method == "items"
    inner = expr.func.value if method == "items" else expr.args[0].value if expr.args else None
    return copied and inner is not None and keys_chosen_in_code(names, inner, depth + 1)


def _is_none(value: Optional[cst.BaseExpression]) -> bool:
    return type(value) is cst.Name and value.value == "None"


def _reads_state_dict(function: cst.FunctionDef) -> bool:
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "state_dict":
            return True
        stack.extend(node.children)
    return False
