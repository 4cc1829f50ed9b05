"""Blocks that run once per object: a lazy initialisation of an attribute of `self`.

A method's `if` whose test says an attribute of the instance is still empty, and whose body fills that attribute,
runs its body on the first call only: after it the test is false. So what the body does, and the functions only the
body calls, happen once per object, not on every call of the method (a per-call cost is not one there).

- The test: `self.<a> is None`, `self.<a> == None`, `self.<a> == {}` (or `[]`, `()`, `dict()`, `list()`...),
  `not self.<a>`, `len(self.<a>) == 0`, `not hasattr(self, "<a>")`. `self` is the method's instance parameter,
  whatever it is called.
- The fill: the body (or a function of the file it calls on the same instance, `MAX_DEPTH` calls deep: a method,
  `self.m(...)`, or a function handed the instance, `fill(self, x)`) stores a value that is not
  empty in `self.<a>` (`self.<a> = v`, `setattr(self, "<a>", v)`), an item in it (`self.<a>[k] = v`), or adds
  one (`self.<a>.append(v)`, `.update(...)`...).
- Not emptied again on the way: the method holding the test, and the methods it calls, store no empty value in
  `self.<a>` outside the block and do not `del` it or `.clear()` it (a cache dropped on every call is filled on
  every call). A reset elsewhere (`__init__`, a `reset()` the user calls between epochs) keeps the block rare.

Ask after the traversal: `once_blocks(method)` (the `if` nodes of a method whose body runs once), `runs_once(node,
method, parent)` (whether a node of the method sits in such a body; `parent` walks up the tree).
"""

from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from stabfix.model.source.names import Names
from stabfix.model.source.scopes import instance_receiver
from stabfix.model.source.syntax import DEFINITIONS
from stabfix.model.source.node_fields import code_children

MAX_DEPTH = 3  # calls of the class's own methods followed from a block (and from the method, for resets)
FILL_METHODS = frozenset({"append", "extend", "insert", "update", "add", "setdefault", "__setitem__"})
EMPTY_CALLS = frozenset({"dict", "list", "set", "tuple", "OrderedDict", "defaultdict"})


def _attribute_of(expr: cst.BaseExpression, receiver: str) -> Optional[str]:
    """`a` for `self.a` (the receiver being the method's instance parameter)."""
    if type(expr) is cst.Attribute and type(expr.value) is cst.Name and expr.value.value == receiver:
        return expr.attr.value
    return None


def is_empty(expr: cst.BaseExpression) -> bool:
    """`None`, `False`, `0`, an empty display (`{}`, `[]`, `()`), or a container built with nothing (`dict()`, `list()`):
    a value `not self.<a>` still finds empty."""
    if type(expr) is cst.Name:
        return expr.value in ("None", "False")
    if type(expr) is cst.Integer:
        return expr.value == "0"
    if type(expr) in (cst.Dict, cst.List, cst.Tuple, cst.Set):
        return not expr.elements
    if type(expr) is cst.Call and not expr.args:
        func = expr.func
        name = func.value if type(func) is cst.Name else func.attr.value if type(func) is cst.Attribute else ""
        return name in EMPTY_CALLS
    return False


def _is_zero(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Integer and expr.value == "0"


def emptiness_test(test: cst.BaseExpression, receiver: str) -> Optional[str]:
    """The attribute an `if` test says is still empty (the forms in the module docstring), or None."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        operand = test.expression
        attribute = _attribute_of(operand, receiver)
        if attribute is not None:
            return attribute
        if type(operand) is cst.Call and type(operand.func) is cst.Name and operand.func.value == "hasattr" \
                and len(operand.args) == 2 and type(operand.args[0].value) is cst.Name \
                and operand.args[0].value.value == receiver and type(operand.args[1].value) is cst.SimpleString:
            return operand.args[1].value.evaluated_value  # type: ignore[return-value]
        return None
    if type(test) is cst.Comparison and len(test.comparisons) == 1:
        target = test.comparisons[0]
        if type(target.operator) not in (cst.Is, cst.Equal):
            return None
        left, right = test.left, target.comparator
        if type(left) is cst.Call and type(left.func) is cst.Name and left.func.value == "len" \
                and len(left.args) == 1 and _is_zero(right):
            return _attribute_of(left.args[0].value, receiver)
        if is_empty(right):
            return _attribute_of(left, receiver)
    return None


class LazyInits:
    def __init__(self, names: Names) -> None:
        self.names = names
        self._blocks: dict[int, list[cst.If]] = {}

    def once_blocks(self, method: cst.FunctionDef) -> list[cst.If]:
        found = self._blocks.get(id(method))
        if found is None:
            found = self._blocks[id(method)] = self._find(method)
        return found

    def runs_once(self, node: cst.CSTNode, method: cst.FunctionDef, parent: Callable[[cst.CSTNode], Optional[cst.CSTNode]]) -> bool:
        """Whether `node`, written in `method`, sits in the body of one of its once-blocks."""
        blocks = {id(block.body) for block in self.once_blocks(method)}
        if not blocks:
            return False
        current: Optional[cst.CSTNode] = node
        while current is not None and current is not method:
            if id(current) in blocks:
                return True
            current = parent(current)
        return False

    def _find(self, method: cst.FunctionDef) -> list[cst.If]:
        receiver = instance_receiver(method)
        if not receiver or not self._is_method(method):
            return []
        blocks = []
        for node in _own_nodes(method.body, statements_only=True):
            if type(node) is cst.If and (attribute := emptiness_test(node.test, receiver)) is not None \
                    and self._fills(node.body, receiver, attribute, 0) \
                    and not self._empties(method, receiver, attribute, node.body, 0):
                blocks.append(node)
        return blocks

    def _is_method(self, function: cst.FunctionDef) -> bool:
        scope = self.names.scopes.get(function)
        return scope is not None and scope.parent is not None and scope.parent.is_class

    def _callee_on_instance(self, call: cst.Call, receiver: str) -> Optional[tuple[cst.FunctionDef, str]]:
        """The function of the file a call runs on the same instance, and what it calls the instance there: a method
        called on it (`self.m(...)`), or a function handed it as a positional argument (`fill(self, x)`)."""
        callee = self.names.definition_of(call)
        if callee is None:
            return None
        if _attribute_of(call.func, receiver) is not None:
            inner = instance_receiver(callee)
            return (callee, inner) if inner else None
        params = [*callee.params.posonly_params, *callee.params.params]
        for index, arg in enumerate(call.args):
            if arg.keyword is not None or arg.star:
                break
            if type(arg.value) is cst.Name and arg.value.value == receiver and index < len(params):
                return callee, params[index].name.value
        return None

    def _fills(self, body: cst.CSTNode, receiver: str, attribute: str, depth: int) -> bool:
        for node in _own_nodes(body):
            if type(node) in (cst.Assign, cst.AnnAssign):
                targets = [t.target for t in node.targets] if type(node) is cst.Assign else [node.target]
                value = node.value
                for target in targets:
                    if _attribute_of(target, receiver) == attribute and value is not None and not is_empty(value):
                        return True
                    if type(target) is cst.Subscript and _attribute_of(target.value, receiver) == attribute:
                        return True
            elif type(node) is cst.Call:
                func = node.func
                if type(func) is cst.Attribute and func.attr.value in FILL_METHODS and node.args \
                        and _attribute_of(func.value, receiver) == attribute:
                    return True
                if type(func) is cst.Name and func.value == "setattr" and len(node.args) == 3 \
                        and type(node.args[0].value) is cst.Name and node.args[0].value.value == receiver \
                        and type(node.args[1].value) is cst.SimpleString \
                        and node.args[1].value.evaluated_value == attribute and not is_empty(node.args[2].value):
                    return True
                callee = self._callee_on_instance(node, receiver) if depth < MAX_DEPTH else None
                if callee is not None and self._fills(callee[0].body, callee[1], attribute, depth + 1):
                    return True
        return False

    def _empties(self, function: cst.FunctionDef, receiver: str, attribute: str, block: cst.CSTNode, depth: int) -> bool:
        """Whether the function (outside the block) or a method it calls drops what the block fills."""
        for node in _own_nodes(function.body, skip=block):
            if type(node) in (cst.Assign, cst.AnnAssign):
                targets = [t.target for t in node.targets] if type(node) is cst.Assign else [node.target]
                if any(_attribute_of(t, receiver) == attribute for t in targets) and (node.value is None or is_empty(node.value)):
                    return True
            elif type(node) is cst.Del:
                if _attribute_of(node.target, receiver) == attribute or any(
                        _attribute_of(e.value, receiver) == attribute for e in getattr(node.target, "elements", ())):
                    return True
            elif type(node) is cst.Call:
                func = node.func
                if type(func) is cst.Attribute and func.attr.value in ("clear", "pop", "popitem") \
                        and _attribute_of(func.value, receiver) == attribute:
                    return True
                callee = self._callee_on_instance(node, receiver) if depth < MAX_DEPTH else None
                if callee is not None and callee[0] is not function \
                        and self._empties(callee[0], callee[1], attribute, block, depth + 1):
                    return True
        return False


def _own_nodes(root: cst.CSTNode, skip: Optional[cst.CSTNode] = None, statements_only: bool = False):
    """The nodes under `root` that run where it runs: not inside nested definitions (nor under `skip`),
    and no trivia (every caller looks for statements and calls). Exact type tests: libcst's node
    classes are ABCs, whose isinstance costs a Python call per miss. `statements_only`: not below a
    line of simple statements, where no compound statement (an `if`) can be, and most of a body's nodes are."""
    stack: list[cst.CSTNode] = [root]
    definitions = _SIMPLE_LINES if statements_only else DEFINITIONS
    while stack:
        node = stack.pop()
        if node is skip:
            continue
        yield node
        for child in code_children(node):
            if type(child) not in definitions:
                stack.append(child)


_SIMPLE_LINES = DEFINITIONS | {cst.SimpleStatementLine, cst.SimpleStatementSuite}
