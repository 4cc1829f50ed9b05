"""Queries the structural gates of several rules share, over a file's `Shape` (`stabfix.shape`): numbers a
name may fold to, calls however renamed, loops, backward passes, attribute stores, evaluation switches. Each
answers for this file's own text only and, like a gate, may say yes where the rule would not fire."""

from __future__ import annotations

import ast
from typing import Optional

from stabfix.model.calls.collectives import FRAMEWORK_METHODS, MODULE_COLLECTIVES
from stabfix.shape import FUNCTIONS, Shape, callee_name
from stabfix.shape_names import qualified_names, surely_qualified


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


def may_be_collective(shape: "Shape", call: ast.Call) -> bool:
    """Whether `collective_api` may name the call: torch's, DeepSpeed's or Accelerate's module function, or a framework
    method not surely of a library module (`torch.gather`, `functools.reduce`)."""
    if not qualified_names(shape, call.func).isdisjoint(MODULE_COLLECTIVES):
        return True
    if type(call.func) is not ast.Attribute or call.func.attr not in FRAMEWORK_METHODS:
        return False
    qualified = surely_qualified(shape, call.func)
    return qualified is None or not qualified.startswith(("torch.", "numpy.", "functools."))
