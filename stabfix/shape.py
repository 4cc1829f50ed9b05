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
Queries several rules' gates share live in `stabfix.shape_queries`.
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


def _unpacked_targets(statements: list[ast.AST]) -> Iterator[ast.AST]:
    """The single targets the statements assign to, tuples, lists and `*rest` unpacked."""
    for node in statements:
        targets = list(node.targets) if type(node) is ast.Assign else [node.target]  # type: ignore[attr-defined]
        while targets:
            target = targets.pop()
            if type(target) in (ast.Tuple, ast.List):
                targets.extend(target.elts)  # type: ignore[attr-defined]
            elif type(target) is ast.Starred:
                targets.append(target.value)  # type: ignore[attr-defined]
            else:
                yield target


# The fields of a node class that may hold nodes, as (field, whether it is a list) (None: not known), from the
# grammar CPython's `ast` classes document themselves with (`FunctionDef(identifier name, arguments args, stmt* body,
# ...)`): names, strings, numbers and constants are never walked into, nor `ctx` (the shared Load/Store markers: no
# gate asks for them). Filled in the first time a class is met.
_FIELD_TYPE = re.compile(r"(\w+)([*?]?) (\w+)")
_LEAF_TYPES = frozenset({"identifier", "string", "constant", "int"})


class _ChildFields(dict):
    def __missing__(self, kind: type) -> tuple[tuple[str, Optional[bool]], ...]:
        documented = kind.__doc__ or ""
        declared = {name: (of, mark) for of, mark, name in _FIELD_TYPE.findall(documented.partition("(")[2])}
        fields = []
        for field in kind._fields:  # type: ignore[attr-defined]
            of, mark = declared.get(field, (None, None))
            if field != "ctx" and of not in _LEAF_TYPES:
                fields.append((field, None if of is None else mark == "*"))
        found = self[kind] = tuple(fields)
        return found


_CHILD_FIELDS = _ChildFields()


class _Index:
    __slots__ = ("parents", "by_type", "calls")

    def __init__(self, tree: ast.AST) -> None:
        parents: dict[int, ast.AST] = {}
        by_type: dict[type, list[ast.AST]] = {}
        calls: dict[Optional[str], list[ast.Call]] = {}
        node_class, call_class, child_fields = ast.AST, ast.Call, _CHILD_FIELDS
        stack = [tree]
        push, pop, extend = stack.append, stack.pop, stack.extend
        # Explicit stack, not recursion: a file CPython parsed may nest deeper than Python's recursion limit.
        # The children are read field by field here (what `ast.iter_child_nodes` does, without its generator and
        # without looking at the fields that never hold a node), a list of nodes at once.
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
            for field, is_list in child_fields[kind]:
                value = getattr(node, field, None)
                if value is None:
                    continue
                if is_list:  # `expr*`: nodes, with a None for a missing one (`kw_defaults`, the `**` of a dict)
                    if value:
                        if None in value:
                            value = [item for item in value if item is not None]
                        for item in value:
                            parents[id(item)] = node
                        extend(value)
                elif type(value) is list:
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
        self._grouped_values: dict[str, dict[Optional[ast.AST], list[ast.expr]]] = {}  # see `_values_by_function`

    @cached_property
    def imports_scanned_code(self) -> bool:
        """Whether an import anywhere in the file (a function's own included) names a module of the scan: a helper,
        class or property of another file may then do here what a rule reports. False for a file analysed alone."""
        if self.project is None:
            return False
        spelled = []
        for node in self.nodes(ast.Import):
            spelled += [alias.name for alias in node.names]  # type: ignore[attr-defined]
        for node in self.nodes(ast.ImportFrom):
            base = "." * node.level + (node.module or "")  # type: ignore[attr-defined]
            joint = "." if node.module else ""  # type: ignore[attr-defined]
            spelled += [base if alias.name == "*" else base + joint + alias.name for alias in node.names]  # type: ignore[attr-defined]
        return self.project.imports_scanned(spelled)

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

    def calls_by_name(self) -> dict[Optional[str], list[ast.Call]]:
        """Every call by its callee's last name (None: `g()(x)`); a gate asking about the names sees each once."""
        return self._index.calls

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

    def has_outside(self, kind: type, closed: tuple[type, ...]) -> bool:
        """Whether a node of `kind` sits outside every node of the `closed` types (a call outside every def and
        class): the code around the closed nodes is walked, not every node's ancestors."""
        stack: list[ast.AST] = [self.tree]
        while stack:
            node = stack.pop()
            if type(node) is kind:
                return True
            stack.extend(child for child in ast.iter_child_nodes(node) if type(child) not in closed)
        return False

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
        aliases = self._alias_assignments
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
    def _alias_assignments(self) -> list[ast.AST]:
        """The assignments of a name or an attribute chain (`ckpt = cp.checkpoint`), which `spellings` follows (asked by
        several gates)."""
        return [node for node in self.nodes(ast.Assign, ast.AnnAssign) if type(node.value) in (ast.Name, ast.Attribute)]  # type: ignore[attr-defined]

    @cached_property
    def assigned_names(self) -> frozenset[str]:
        """Every name an assignment with a value binds (`x = ...`, `x: T = ...`, `x += ...`, `(x := ...)`, also
        unpacked: `x, *y = ...`), in any scope."""
        nodes = self.nodes(ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)
        return frozenset(target.id for target in _unpacked_targets(nodes) if type(target) is ast.Name)  # type: ignore[attr-defined]

    @cached_property
    def assigned_attributes(self) -> frozenset[str]:
        """Every attribute name an assignment stores (`self.mask = ...`, `a.b += ...`, also unpacked, by a loop too)."""
        nodes = self.nodes(ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension)
        return frozenset(target.attr for target in _unpacked_targets(nodes) if type(target) is ast.Attribute)  # type: ignore[attr-defined]

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
        for target, value, node in self._bound_pairs(ast.Assign, ast.AnnAssign, ast.AugAssign):
            if type(target) is ast.Attribute:
                yield target, value, node  # type: ignore[misc]

    @cached_property
    def _assigned_values(self) -> dict[str, list[tuple[ast.AST, ast.expr]]]:
        found: dict[str, list[tuple[ast.AST, ast.expr]]] = {}
        for target, value, node in self._bound_pairs(ast.Assign, ast.AnnAssign, ast.NamedExpr):
            if type(target) is ast.Name:
                found.setdefault(target.id, []).append((node, value))  # type: ignore[attr-defined]
        return found

    def _bound_pairs(self, *kinds: type) -> Iterator[tuple[ast.expr, ast.expr, ast.AST]]:
        """(target, value, statement) for every target an assignment of these kinds binds, unpacked where both
        sides are displays (`a, self.b = [x], [y]`); a display target left whole where its value is not one."""
        for node in self.nodes(*kinds):
            if node.value is None:  # type: ignore[attr-defined]
                continue
            pairs = [(t, node.value) for t in (node.targets if type(node) is ast.Assign else [node.target])]  # type: ignore[attr-defined]
            while pairs:
                target, value = pairs.pop()
                if type(target) in (ast.Tuple, ast.List) and type(value) in (ast.Tuple, ast.List):
                    pairs += zip(target.elts, value.elts)  # type: ignore[attr-defined]
                else:
                    yield target, value, node

    def values_of(self, name: str, at: ast.AST) -> list[ast.expr]:
        """The values the file assigns to `name` that a read at `at` may see (unpacked from displays): the assignments of
        its function when it assigns the name, none when the name is its parameter, else those of every scope."""
        assigned = self._assigned_values.get(name)
        if not assigned:
            return []
        function = self.enclosing_function(at)
        own = self._values_by_function(name, assigned).get(function)
        if own:
            return own
        arguments = function.args if function is not None else None  # type: ignore[attr-defined]
        if arguments is not None and name in {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                                              *filter(None, (arguments.vararg, arguments.kwarg)))}:
            return []
        return [value for _, value in assigned]

    def _values_by_function(self, name: str, assigned: list[tuple[ast.AST, ast.expr]]) -> dict[Optional[ast.AST], list[ast.expr]]:
        """The values assigned to `name` grouped by the function the assignment is in (None: module or class level), in
        file order: a name assigned in many functions is asked about again and again by the gates."""
        grouped = self._grouped_values.get(name)
        if grouped is None:
            grouped = self._grouped_values[name] = {}
            for node, value in assigned:
                grouped.setdefault(self.enclosing_function(node), []).append(value)
        return grouped

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
