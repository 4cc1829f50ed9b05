"""CPython's tree of a file, indexed for the rules' structural gates.

A rule's text gates (`Checker.tokens`, `words`, `pattern`) let a file by when it spells what the rule needs.
Its structural gate (`Checker.shape_allows`) then asks CPython's tree of the file (`ast`: a fraction of a libcst
parse, and parsed anyway to see whether the file nests too deeply to analyse) whether a shape the rule reports on
is there at all: a statement that is only a call, a class with a base that keeps a list in `self`, a call inside
a loop. Only the file's own code decides (what another file defines is never seen here), so a gate asks for the
place the rule would report on, never for a fact that could come from elsewhere.

A gate is a speed filter: it must answer True for every file the rule can report on (a wrong False loses
findings silently; tests/test_shape_gates.py runs every bad example and red-team case through it), and may
answer True for many files it cannot. The index is built on the first question, in one walk of the tree.
"""

from __future__ import annotations

import ast
import re
from functools import cached_property
from typing import TYPE_CHECKING, Iterator, Optional

from stabfix.text_gates import words_of

if TYPE_CHECKING:
    from stabfix.project import ProjectView

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def callee_name(call: ast.Call) -> Optional[str]:
    """The last name of what a call calls: `x.to(d)` -> "to", `f(x)` -> "f", `g()(x)` -> None."""
    func = call.func
    if type(func) is ast.Attribute:
        return func.attr
    if type(func) is ast.Name:
        return func.id
    return None


class _Index:
    __slots__ = ("parents", "by_type", "calls")

    def __init__(self, tree: ast.AST) -> None:
        parents: dict[int, ast.AST] = {}
        by_type: dict[type, list[ast.AST]] = {}
        calls: dict[Optional[str], list[ast.Call]] = {}
        node_class, call_class = ast.AST, ast.Call
        stack = [tree]
        push, pop = stack.append, stack.pop
        # Explicit stack, not recursion: a file CPython parsed may nest deeper than Python's recursion limit.
        # The children are read field by field here (what `ast.iter_child_nodes` does, without its generator,
        # 40% of this walk), leaving out `ctx` (the shared Load/Store markers: no gate asks for them).
        while stack:
            node = pop()
            kind = type(node)
            found = by_type.get(kind)
            if found is None:
                by_type[kind] = [node]
            else:
                found.append(node)
            if kind is call_class:
                calls.setdefault(callee_name(node), []).append(node)  # type: ignore[arg-type]
            for field in kind._fields:
                if field == "ctx":
                    continue
                value = getattr(node, field, None)
                if type(value) is list:
                    for item in value:
                        if isinstance(item, node_class):
                            parents[id(item)] = node
                            push(item)
                elif isinstance(value, node_class):
                    parents[id(value)] = node
                    push(value)
        self.parents = parents
        self.by_type = by_type
        self.calls = calls


class Shape:
    """A file's CPython tree with the lookups structural gates ask."""

    def __init__(self, tree: ast.Module, text: str = "", path: str = "", project: Optional["ProjectView"] = None) -> None:
        self.tree = tree
        self.text = text
        self.path = path  # as the scan shows it ("" when unknown)
        self.project = project

    @cached_property
    def imports_scanned_code(self) -> bool:
        """Whether an import anywhere in the file (a function's own included) names a module of the scan: a helper,
        class or property of another file may then do here what a rule reports. False for a file analysed alone."""
        return self.project is not None and self.project.imports_scanned(self._imported_modules)

    def imported_code_matches(self, pattern: "re.Pattern[str]") -> bool:
        """Whether `pattern` matches the text of a file of the scan this file imports (anywhere in it), or of one
        that file imports in turn: a helper the model follows into another file is defined there. False alone."""
        return self.project is not None and self.project.imported_code_matches(self._imported_modules, pattern)

    @cached_property
    def _imported_modules(self) -> list[str]:
        """What every import statement of the file names, as spelled (`pkg.x`, `..utils.f`)."""
        spelled = []
        for node in self.nodes(ast.Import):
            spelled += [alias.name for alias in node.names]  # type: ignore[attr-defined]
        for node in self.nodes(ast.ImportFrom):
            base = "." * node.level + (node.module or "")  # type: ignore[attr-defined]
            joint = "." if node.module else ""  # type: ignore[attr-defined]
            spelled += [base if alias.name == "*" else base + joint + alias.name for alias in node.names]  # type: ignore[attr-defined]
        return spelled

    @cached_property
    def words(self) -> frozenset[str]:
        """Every word of the file's text (identifiers, keywords, words in strings and comments)."""
        return words_of(self.text)

    @cached_property
    def _index(self) -> _Index:
        return _Index(self.tree)

    def nodes(self, *types: type) -> list[ast.AST]:
        """Every node of these types (in no particular order: a gate answers yes or no)."""
        by_type = self._index.by_type
        if len(types) == 1:
            return by_type.get(types[0], [])
        return [node for kind in types for node in by_type.get(kind, [])]

    def calls(self, *names: str) -> list[ast.Call]:
        """Every call whose callee's last name is one of `names` (`x.to(d)` and `to(x)` for "to")."""
        calls = self._index.calls
        return [call for name in names for call in calls.get(name, [])]

    def all_calls(self) -> list[ast.Call]:
        return self.nodes(ast.Call)  # type: ignore[return-value]

    def parent(self, node: ast.AST) -> Optional[ast.AST]:
        return self._index.parents.get(id(node))

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        parents = self._index.parents
        parent = parents.get(id(node))
        while parent is not None:
            yield parent
            parent = parents.get(id(parent))

    def enclosing_function(self, node: ast.AST) -> Optional[ast.AST]:
        """The innermost `def`/`async def`/`lambda` around the node, None at module or class level."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, FUNCTIONS):
                return ancestor
        return None

    def enclosing_class(self, node: ast.AST) -> Optional[ast.ClassDef]:
        """The innermost class around the node (through its methods), None outside every class."""
        for ancestor in self.ancestors(node):
            if type(ancestor) is ast.ClassDef:
                return ancestor  # type: ignore[return-value]
        return None

    def in_loop(self, node: ast.AST) -> bool:
        """Whether a loop (or comprehension) of the node's own function (or of the module) runs it repeatedly."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, LOOPS):
                return True
            if isinstance(ancestor, FUNCTIONS):
                return False
        return False

    @cached_property
    def imported_names(self) -> frozenset[str]:
        """The names the file's imports bind (`import a.b` binds `a`, `from m import f as g` binds `g`)."""
        found = set()
        for node in self.nodes(ast.Import, ast.ImportFrom):
            for alias in node.names:  # type: ignore[attr-defined]
                found.add(alias.asname or alias.name.split(".", 1)[0])
        return frozenset(found)

    def spellings(self, *names: str) -> set[str]:
        """The last names a call of a function named one of `names` may be spelled with in this file: the names,
        and what imports (`from m import checkpoint as ckpt`) or plain aliases (`ckpt = cp.checkpoint`) rename
        them to (what `names.qualify` follows)."""
        found = set(names)
        for node in self.nodes(ast.Import, ast.ImportFrom):
            for alias in node.names:  # type: ignore[attr-defined]
                if alias.asname and alias.name.rsplit(".", 1)[-1] in found:
                    found.add(alias.asname)
        aliases = [node for node in self.nodes(ast.Assign, ast.AnnAssign) if type(node.value) in (ast.Name, ast.Attribute)]
        grown = True
        while grown:
            grown = False
            for node in aliases:
                value = node.value
                if (value.attr if type(value) is ast.Attribute else value.id) in found:
                    for target in node.targets if type(node) is ast.Assign else [node.target]:
                        if type(target) is ast.Name and target.id not in found:
                            found.add(target.id)
                            grown = True
        return found

    @cached_property
    def assigned_names(self) -> frozenset[str]:
        """Every name an assignment with a value binds (`x = ...`, `x: T = ...`, `x += ...`, `(x := ...)`, also
        unpacked: `x, *y = ...`), in any scope."""
        found = set()
        for node in self.nodes(ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr):
            targets = list(node.targets) if type(node) is ast.Assign else [node.target]  # type: ignore[attr-defined]
            while targets:
                target = targets.pop()
                if type(target) is ast.Name:
                    found.add(target.id)
                elif type(target) in (ast.Tuple, ast.List):
                    targets.extend(target.elts)  # type: ignore[attr-defined]
                elif type(target) is ast.Starred:
                    targets.append(target.value)  # type: ignore[attr-defined]
        return frozenset(found)

    @cached_property
    def assigned_attributes(self) -> frozenset[str]:
        """Every attribute name an assignment stores (`self.mask = ...`, `a.b += ...`, also unpacked, by a loop too)."""
        found = set()
        for node in self.nodes(ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension):
            targets = list(node.targets) if type(node) is ast.Assign else [node.target]  # type: ignore[attr-defined]
            while targets:
                target = targets.pop()
                if type(target) is ast.Attribute:
                    found.add(target.attr)
                elif type(target) in (ast.Tuple, ast.List):
                    targets.extend(target.elts)  # type: ignore[attr-defined]
                elif type(target) is ast.Starred:
                    targets.append(target.value)  # type: ignore[attr-defined]
        return frozenset(found)

    def receiver_of(self, node: ast.AST, *methods: str) -> bool:
        """Whether the node is (part of) what a call of one of `methods` of the same statement is called on:
        `torch.zeros(n)` in `torch.zeros(n).float().cuda()` for "cuda"."""
        child = node
        for ancestor in self.ancestors(node):
            if type(ancestor) is ast.Attribute and ancestor.value is child and ancestor.attr in methods:
                return True
            if isinstance(ancestor, ast.stmt):
                return False
            child = ancestor
        return False

    def bound_by(self, node: ast.AST) -> set[str]:
        """The names bound by the assignments (statement or `:=`) whose value holds the node."""
        found: set[str] = set()
        for ancestor in self.ancestors(node):
            kind = type(ancestor)
            if kind in (ast.NamedExpr, ast.Assign, ast.AnnAssign):
                targets = ancestor.targets if kind is ast.Assign else [ancestor.target]  # type: ignore[attr-defined]
                found.update(name.id for target in targets for name in ast.walk(target) if type(name) is ast.Name)
            if isinstance(ancestor, ast.stmt):
                break
        return found

    def decorated(self, *names: str) -> list[ast.AST]:
        """The functions with a decorator whose last name is one of `names` (`@rank_zero_only`, `@acc.on_main_process`,
        `@on_main_process()`)."""
        found = []
        for function in self.nodes(ast.FunctionDef, ast.AsyncFunctionDef):
            for decorator in function.decorator_list:  # type: ignore[attr-defined]
                target = decorator.func if type(decorator) is ast.Call else decorator
                if (target.attr if type(target) is ast.Attribute else getattr(target, "id", None)) in names:
                    found.append(function)
                    break
        return found

    def early_exits(self) -> bool:
        """Whether an `if` of the file has a branch ending in `return`, `raise`, `break` or `continue`."""
        exits = (ast.Return, ast.Raise, ast.Break, ast.Continue)
        return any(block and type(block[-1]) in exits for node in self.nodes(ast.If) for block in (node.body, node.orelse))  # type: ignore[attr-defined]

    def in_branch(self, node: ast.AST) -> bool:
        """Whether the node sits in the body or `else` of an `if` of its own function (or of the module)."""
        if not self.nodes(ast.If):
            return False
        child = node
        for ancestor in self.ancestors(node):
            if type(ancestor) is ast.If and child is not ancestor.test:  # type: ignore[attr-defined]
                return True
            if type(ancestor) in (ast.FunctionDef, ast.AsyncFunctionDef):
                return False
            child = ancestor
        return False

    def assigned_values(self) -> Iterator[ast.expr]:
        """The value of every assignment (`x = v`, `x: T = v`, `(x := v)`), each element of a tuple or list assigned."""
        for node in self.nodes(ast.Assign, ast.AnnAssign, ast.NamedExpr):
            value = node.value  # type: ignore[attr-defined]
            if value is not None:
                yield value
                if type(value) in (ast.Tuple, ast.List):
                    yield from value.elts  # type: ignore[attr-defined]

    @staticmethod
    def value_root(expr: ast.AST, methods: frozenset[str] | set[str], functions: frozenset[str] | set[str]) -> Optional[str]:
        """The name whose value an expression reads through attributes, subscripts, calls of `methods` (`x.detach()`)
        and one-argument calls of `functions` (`torch.clone(x)`): "x" for `x.detach()[0].data`; None otherwise."""
        while True:
            kind = type(expr)
            if kind is ast.Name:
                return expr.id  # type: ignore[attr-defined]
            if kind in (ast.Attribute, ast.Subscript, ast.Starred):
                expr = expr.value  # type: ignore[attr-defined]
            elif kind is ast.Call and type(expr.func) is ast.Attribute and expr.func.attr in methods:  # type: ignore[attr-defined]
                expr = expr.func.value  # type: ignore[attr-defined]
            elif kind is ast.Call and len(expr.args) == 1 and callee_name(expr) in functions:  # type: ignore[attr-defined,arg-type]
                expr = expr.args[0]  # type: ignore[attr-defined]
            else:
                return None

    @cached_property
    def defined_functions(self) -> frozenset[str]:
        """The names of the file's `def`s (methods and nested functions too)."""
        return frozenset(node.name for node in self.nodes(ast.FunctionDef, ast.AsyncFunctionDef))  # type: ignore[attr-defined]

    def attribute_stores(self) -> Iterator[tuple[ast.Attribute, ast.expr, ast.AST]]:
        """(target, value, statement) of every assignment to an attribute (`self.a = v`, `self.a += v`, `self.a: T = v`),
        unpacked where both sides are displays (`self.a, self.b = [x], [y]`)."""
        for node in self.nodes(ast.Assign, ast.AnnAssign, ast.AugAssign):
            if node.value is None:  # type: ignore[attr-defined]
                continue
            pairs = [(t, node.value) for t in (node.targets if type(node) is ast.Assign else [node.target])]  # type: ignore[attr-defined]
            while pairs:
                target, value = pairs.pop()
                if type(target) is ast.Attribute:
                    yield target, value, node  # type: ignore[misc]
                elif type(target) in (ast.Tuple, ast.List) and type(value) in (ast.Tuple, ast.List):
                    pairs += zip(target.elts, value.elts)  # type: ignore[attr-defined]

    @cached_property
    def _assigned_values(self) -> dict[str, list[tuple[ast.AST, ast.expr]]]:
        found: dict[str, list[tuple[ast.AST, ast.expr]]] = {}
        for node in self.nodes(ast.Assign, ast.AnnAssign, ast.NamedExpr):
            if node.value is None:  # type: ignore[attr-defined]
                continue
            pairs = [(t, node.value) for t in (node.targets if type(node) is ast.Assign else [node.target])]  # type: ignore[attr-defined]
            while pairs:
                target, value = pairs.pop()
                if type(target) is ast.Name:
                    found.setdefault(target.id, []).append((node, value))
                elif type(target) in (ast.Tuple, ast.List) and type(value) in (ast.Tuple, ast.List):
                    pairs += zip(target.elts, value.elts)  # type: ignore[attr-defined]
        return found

    def values_of(self, name: str, at: ast.AST) -> list[ast.expr]:
        """The values the file assigns to `name` that a read at `at` may see (unpacked from displays): the assignments of
        its function when it assigns the name, none when the name is its parameter, else those of every scope."""
        assigned = self._assigned_values.get(name)
        if not assigned:
            return []
        function = self.enclosing_function(at)
        own = [value for node, value in assigned if self.enclosing_function(node) is function]
        if own:
            return own
        arguments = function.args if function is not None else None  # type: ignore[attr-defined]
        if arguments is not None and name in {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                                              *filter(None, (arguments.vararg, arguments.kwarg)))}:
            return []
        return [value for _, value in assigned]

    @cached_property
    def bound_names(self) -> frozenset[str]:
        """Every name the file binds by an import, an assignment, a `def` or a `class` (a builtin it rebinds is not one)."""
        classes = (node.name for node in self.nodes(ast.ClassDef))  # type: ignore[attr-defined]
        return self.imported_names | self.assigned_names | self.defined_functions | frozenset(classes)

    @staticmethod
    def displayed(value: ast.AST, generators: bool = False) -> Optional[list[ast.expr]]:
        """The elements a list, tuple or dict display or a list (or, asked, generator) comprehension shows; None otherwise."""
        kind = type(value)
        if kind is ast.ListComp or generators and kind is ast.GeneratorExp:
            return [value.elt]  # type: ignore[attr-defined]
        if kind in (ast.List, ast.Tuple):
            return value.elts  # type: ignore[attr-defined]
        return value.values if kind is ast.Dict else [value.value] if kind is ast.DictComp else None  # type: ignore[attr-defined]

    @cached_property
    def plain_aliases(self) -> frozenset[str]:
        """The names an assignment binds to a name or an attribute chain (`sync = utils.sync_all`): besides imports, what
        `names.qualify` follows."""
        return frozenset(target.id for node in self.nodes(ast.Assign, ast.AnnAssign)
                         if type(node.value) in (ast.Name, ast.Attribute)  # type: ignore[attr-defined]
                         for target in (node.targets if type(node) is ast.Assign else [node.target])  # type: ignore[attr-defined]
                         if type(target) is ast.Name)

    def updates_in_place(self, methods: tuple[str, ...], out_functions: tuple[str, ...]) -> bool:
        """Whether the file changes a value in place: `x += v`/`x -= v`, a call of one of `methods` (`p.add_(g)`, last
        names as `calls` matches them), a call of one of `out_functions` (however renamed) given `out=`, or `x.data = v`."""
        return bool(self.calls(*methods)) or any(type(node.op) in (ast.Add, ast.Sub) for node in self.nodes(ast.AugAssign)) \
            or any(keyword.arg == "out" for call in self.calls(*self.spellings(*out_functions)) for keyword in call.keywords) \
            or any(type(target) is ast.Attribute and target.attr == "data" for node in self.nodes(ast.Assign)
                   for target in node.targets)  # type: ignore[attr-defined]

    @staticmethod
    def unset_or(call: ast.Call, position: int, keyword: str, literals: tuple[object, ...]) -> bool:
        """Whether a call's argument (by keyword, else by position among the positional ones not unpacked, as
        `domain/data_loaders.argument` finds it) is absent, a name (whatever it holds) or one of `literals` (`0`, `False`)."""
        found = next((k.value for k in call.keywords if k.arg == keyword), None)
        positional = [arg for arg in call.args if type(arg) is not ast.Starred]
        found = found if found is not None else positional[position] if position < len(positional) else None
        return found is None or type(found) is ast.Name or type(found) is ast.Constant and found.value in literals  # type: ignore[attr-defined]


def may_fold_to(shape: "Shape", expr: ast.AST, wanted) -> bool:
    """Whether `expr` may hold a number `wanted(number)` accepts, as `model.calls.numerics.constant_of` folds
    numbers: literals and folds of them (`10 ** -8`), names and attributes through every value the file binds to
    that name (assignments, walrus, parameter defaults), whatever scope binds them. A value left unknown (a fold of
    too many possible values, a name bound through itself) counts as possible."""
    values = _possible_numbers(expr, _numeric_bindings(shape), shape.__dict__.setdefault("_name_numbers", {}), 0)
    return values is None or any(wanted(value) for value in values)


_MAX_POSSIBLE = 64
_BINARY = {ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: float(a ** b),
           ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b}


def _possible_numbers(expr: ast.AST, bindings: dict[str, list[ast.AST]], known: dict, depth: int) -> Optional[set[float]]:
    """The numbers `expr` may fold to (empty: none, it is no constant), None when unknown."""
    if depth > 8:
        return None
    kind = type(expr)
    if kind is ast.Constant:
        value = expr.value  # type: ignore[attr-defined]
        return {float(value)} if type(value) in (int, float) else set()
    if kind is ast.Name or kind is ast.Attribute:
        name = expr.id if kind is ast.Name else expr.attr  # type: ignore[attr-defined]
        if name in known:
            return known[name]  # None while being worked out: a name bound through itself is unknown
        known[name] = None
        found: Optional[set[float]] = set()
        for bound in bindings.get(name, ()):
            if type(bound) in (ast.Name, ast.Attribute) and (bound.id if type(bound) is ast.Name else bound.attr) == name:  # type: ignore[attr-defined]
                continue  # `self.eps = eps`: the same name's values, not a fold through itself
            values = _possible_numbers(bound, bindings, known, depth + 1)
            found = None if values is None or found is None else found | values
        known[name] = found if found is None or len(found) <= _MAX_POSSIBLE else None
        return known[name]
    if kind is ast.UnaryOp and type(expr.op) in (ast.USub, ast.UAdd):  # type: ignore[attr-defined]
        values = _possible_numbers(expr.operand, bindings, known, depth + 1)  # type: ignore[attr-defined]
        return values if values is None or type(expr.op) is ast.UAdd else {-value for value in values}  # type: ignore[attr-defined]
    if kind is ast.BinOp and type(expr.op) in _BINARY:  # type: ignore[attr-defined]
        left = _possible_numbers(expr.left, bindings, known, depth + 1)  # type: ignore[attr-defined]
        right = _possible_numbers(expr.right, bindings, known, depth + 1) if left != set() else set()  # type: ignore[attr-defined]
        if left is None or right is None:
            return None if left != set() and right != set() else set()
        if len(left) * len(right) > _MAX_POSSIBLE:
            return None
        folded = set()
        for a in left:
            for b in right:
                try:
                    result = _BINARY[type(expr.op)](a, b)  # type: ignore[attr-defined]
                except (ZeroDivisionError, OverflowError, TypeError):
                    continue
                if type(result) is float and result == result:  # not complex, not NaN
                    folded.add(result)
        return folded
    return set()


def _numeric_bindings(shape: "Shape") -> dict[str, list[ast.AST]]:
    """Every value the file binds to each name or attribute name (`x = v`, `self.x = v`, `x: T = v`, `(x := v)`,
    `a, b = u, v`, a parameter's default), kept on the shape: the values `constant_of` may follow."""
    found = shape.__dict__.get("_numeric_bindings")
    if found is not None:
        return found
    found = {}
    for node in shape.nodes(ast.Assign, ast.AnnAssign, ast.NamedExpr, ast.AugAssign):
        if node.value is None:  # type: ignore[attr-defined]
            continue
        targets = node.targets if type(node) is ast.Assign else [node.target]  # type: ignore[attr-defined]
        pairs = [(target, node.value) for target in targets]  # type: ignore[attr-defined]
        while pairs:
            target, value = pairs.pop()
            if type(target) in (ast.Tuple, ast.List):
                shown = value.elts if type(value) in (ast.Tuple, ast.List) else None  # type: ignore[attr-defined]
                if shown is not None and len(shown) == len(target.elts):  # type: ignore[attr-defined]
                    pairs.extend(zip(target.elts, shown))  # type: ignore[attr-defined]
            elif type(target) is ast.Name:
                found.setdefault(target.id, []).append(value)  # type: ignore[attr-defined]
            elif type(target) is ast.Attribute:
                found.setdefault(target.attr, []).append(value)  # type: ignore[attr-defined]
    for arguments in shape.nodes(ast.arguments):
        positional = arguments.posonlyargs + arguments.args  # type: ignore[attr-defined]
        pairs = list(zip(positional[len(positional) - len(arguments.defaults):], arguments.defaults))  # type: ignore[attr-defined]
        pairs += [(a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None]  # type: ignore[attr-defined]
        for arg, default in pairs:
            found.setdefault(arg.arg, []).append(default)
    shape.__dict__["_numeric_bindings"] = found
    return found


def import_aliases(shape: "Shape") -> frozenset[str]:
    """The names the file's imports bind under another name (`import torch as T`, `from torch import div as d`):
    a call through one may reach any function, so a gate asking for a callee's name also accepts them."""
    found = shape.__dict__.get("_import_aliases")
    if found is None:
        found = shape.__dict__["_import_aliases"] = _import_aliases(shape)
    return found


def _import_aliases(shape: "Shape") -> frozenset[str]:
    return frozenset(alias.asname for node in shape.nodes(ast.Import, ast.ImportFrom)
                     for alias in node.names if alias.asname and alias.asname != alias.name.rsplit(".", 1)[-1])  # type: ignore[attr-defined]


def calls_named(shape: "Shape", names) -> list[ast.Call]:
    """`shape.calls(*names)`, and calls through a name an import renamed (`from torch import load as L`)."""
    found = shape.calls(*names)
    aliases = import_aliases(shape)
    return found + [call for alias in aliases for call in shape.calls(alias)] if aliases else found


STATEMENT_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def under(shape: "Shape", node: ast.AST, types: tuple) -> bool:
    """Whether any ancestor of the node (through functions and classes too) is of these types."""
    return any(isinstance(ancestor, types) for ancestor in shape.ancestors(node))


def loops_contain(shape: "Shape", wanted) -> bool:
    """Whether some `for`/`while` statement of the file has, in its body or `else`, a node `wanted(node)` accepts
    (through nested functions too)."""
    for loop in shape.nodes(*STATEMENT_LOOPS):
        for part in (loop.body, loop.orelse):  # type: ignore[attr-defined]
            for statement in part:
                if any(wanted(node) for node in ast.walk(statement)):
                    return True
    return False


BACKWARD_NAMES = ("backward", "manual_backward", "grad")  # `.backward()`, Lightning's, `torch.autograd.backward/grad`


def backward_calls(shape: "Shape") -> list[ast.Call]:
    """The calls that may be a backward pass (by their name, or through a renaming import)."""
    return calls_named(shape, BACKWARD_NAMES)


def attribute_stores(shape: "Shape", *attributes: str) -> list[ast.AST]:
    """The assignments (plain, annotated or augmented) to `<anything>.<attribute>`, tuple targets included."""
    found = []
    for node in shape.nodes(ast.Assign, ast.AnnAssign, ast.AugAssign):
        targets = node.targets if type(node) is ast.Assign else [node.target]  # type: ignore[attr-defined]
        if any(type(t) is ast.Attribute and t.attr in attributes for target in targets for t in ast.walk(target)):
            found.append(node)
    return found



def eval_switches(shape: "Shape") -> list[ast.Call]:
    """The calls that may switch a module to eval mode as `model.training.modes` reads them: `<x>.eval()` (no
    argument but `*`/`**` ones) and `<x>.train(False)` (its first argument, positional or keyword, `False`)."""
    found = [call for call in shape.calls("eval") if type(call.func) is ast.Attribute
             and all(type(arg) is ast.Starred for arg in call.args) and all(kw.arg is None for kw in call.keywords)]
    for call in shape.calls("train"):
        first = [*(a for a in call.args if type(a) is not ast.Starred), *(k.value for k in call.keywords if k.arg)][:1]
        if type(call.func) is ast.Attribute and first and type(first[0]) is ast.Constant and first[0].value is False:  # type: ignore[attr-defined]
            found.append(call)
    return found


def root_name(expr: ast.AST) -> Optional[str]:
    """The name a container or tensor is known by in `c`, `self.c`, `c[i]`, `self.c[i][j]`; None for anything else."""
    while type(expr) is ast.Subscript:
        expr = expr.value  # type: ignore[attr-defined]
    return expr.id if type(expr) is ast.Name else expr.attr if type(expr) is ast.Attribute else None  # type: ignore[attr-defined]


def training_loops(shape: "Shape") -> list[ast.AST]:
    """The `for`/`while` loops around both a `.backward()` and a `.zero_grad()` or argument-less `.step()` (as the
    `containers` part marks a training loop; nested functions included)."""
    def loops_around(calls) -> dict[int, ast.AST]:
        return {id(a): a for call in calls if type(call.func) is ast.Attribute for a in shape.ancestors(call) if isinstance(a, STATEMENT_LOOPS)}

    updates = [c for c in shape.calls("zero_grad", "step") if c.func.attr == "zero_grad" or not c.args and not c.keywords]  # type: ignore[attr-defined]
    backward = loops_around(shape.calls("backward"))
    return [loop for key, loop in loops_around(updates).items() if key in backward] if backward else []


def releafs(shape: "Shape") -> bool:
    """Whether the file may make a tensor require grad afresh, as `model.flow.graph_cuts` reads it: `t.requires_grad_()`
    or `t.requires_grad_(True)`, `t.requires_grad = True`, or `requires_grad=True` passed to `torch.tensor` /
    `torch.from_numpy` (any renamed import) or to a call whose first argument may drop autograd history (`.detach()`,
    `.data`, `.numpy()`: `Variable(out.data, requires_grad=True)`). Not `nn.Parameter(torch.zeros(n), requires_grad=True)`."""
    for call in shape.calls("requires_grad_"):
        first = [*call.args, *(kw.value for kw in call.keywords if kw.arg == "requires_grad")][:1]
        if not call.args and not call.keywords or first and type(first[0]) is ast.Constant and first[0].value is True:  # type: ignore[attr-defined]
            return True
    aliases = import_aliases(shape)
    for call in shape.all_calls():
        if any(kw.arg == "requires_grad" and type(kw.value) is ast.Constant and kw.value.value is True for kw in call.keywords):  # type: ignore[attr-defined]
            if callee_name(call) in ("tensor", "from_numpy") or callee_name(call) in aliases or call.args and _may_cut(call.args[0]):
                return True
    return any(type(node) is ast.Assign and type(node.value) is ast.Constant and node.value.value is True  # type: ignore[attr-defined]
               for node in attribute_stores(shape, "requires_grad"))


def _may_cut(expr: ast.AST) -> bool:
    """Whether an operation under `expr` may drop autograd history (a torch method or attribute whose result has none)."""
    from stabfix.model.calls import torch_ops

    cutting = {name for table in (torch_ops.METHODS, torch_ops.ATTRIBUTES) for name, op in table.items() if not op.history}
    return any(type(node) is ast.Attribute and node.attr in cutting for node in ast.walk(expr)) or any(  # type: ignore[attr-defined]
        type(node) is ast.Call and callee_name(node) in cutting for node in ast.walk(expr))


EMPTY_CONTAINER_CALLS = ("dict", "list", "OrderedDict", "defaultdict", "deque")


def makes_empty_container(shape: "Shape", value: ast.AST) -> bool:
    """`{}`, `[]`, `{k: {} for ...}`, or a call of `dict`/`list`/`OrderedDict`/`defaultdict`/`deque` (or of a name an
    import renamed): a container created empty (`model.domain.containers.empty_container_kind`, loosened)."""
    kind = type(value)
    if (kind is ast.Dict and not value.keys) or (kind is ast.List and not value.elts) or kind is ast.DictComp:  # type: ignore[attr-defined]
        return True
    return kind is ast.Call and (callee_name(value) in EMPTY_CONTAINER_CALLS or callee_name(value) in import_aliases(shape))  # type: ignore[arg-type]


def mentions_a_name(node: ast.AST) -> bool:
    """Whether a name is read or written anywhere under the node (a key that is no constant has one)."""
    return any(type(inner) is ast.Name for inner in ast.walk(node))


def arguments_may_fold_to(shape: "Shape", calls: list[ast.Call], wanted) -> bool:
    """Whether an argument (positional or keyword) of one of the calls may fold to a number `wanted` accepts (`may_fold_to`)."""
    return any(may_fold_to(shape, arg, wanted) for call in calls for arg in [*call.args, *(kw.value for kw in call.keywords)])


def spells_infinity(shape: "Shape") -> bool:
    """Whether the file spells an infinity `numerics.signed_constant` reads (`float("-inf")`, `math.inf`, `np.NINF`)."""
    return any(word.lower() in ("inf", "infinity", "ninf") for word in shape.words)


def functions_keeping_locals(shape: "Shape") -> set[int]:
    """The ids of the functions whose locals may outlive one call (`container_roles._outlives_a_step`): those around
    a training loop (`training_loops`), or returning (by name) a function nested in them."""
    found = {id(a) for loop in training_loops(shape) for a in shape.ancestors(loop) if isinstance(a, FUNCTIONS)}
    returned: dict[int, set[str]] = {}
    for node in shape.nodes(ast.Return):
        if type(node.value) is ast.Name:  # type: ignore[attr-defined]
            for a in shape.ancestors(node):
                if isinstance(a, FUNCTIONS):
                    returned.setdefault(id(a), set()).add(node.value.id)  # type: ignore[attr-defined]
    for inner in shape.nodes(ast.FunctionDef, ast.AsyncFunctionDef):
        found.update(id(a) for a in shape.ancestors(inner) if isinstance(a, FUNCTIONS) and inner.name in returned.get(id(a), ()))
    return found
