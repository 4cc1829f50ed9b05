"""Where a value goes: the consumers an expression's result reaches, following names, parts and helpers.

Asked of one expression (a `torch.load(...)` call), `ValueFlows.destinations(expr)` follows its result
through the file and lists where it ends up:

- `restore`: handed to `<x>.load_state_dict(...)` (a module, an optimizer, a scheduler), or to a
  library function that does the same (peft's `set_peft_model_state_dict(model, sd)`, torch's
  distributed `set_model_state_dict`), which copies every tensor into the model's own storage, on
  its device;
- `adopt`: handed to `<x>.load_state_dict(..., assign=True)`, which makes the loaded tensors the
  module's own (they stay on the device they were loaded to);
- `move`: moved with `.to(...)`, `.cuda()` or `.cpu()`;
- `inspect`: only looked at (`k in sd`, `len(sd)`, `sd.keys()`, `isinstance(sd, dict)`, an `if` test,
  a log call);
- `other`: anything else: stored on an attribute, returned to a caller nobody in the file is seen
  using, passed to another call, used in arithmetic, or a method called on it.

Each destination says whether it is reached by the *whole* value or by a *part* of it (an entry
`sd["model"]`, `sd.get("model")`, an element drawn by `for k, v in sd.items()`, an element of a tuple
it is unpacked into, a comprehension or literal built from its entries).

The value is followed through local names (`ckpt = torch.load(p)`, then `ckpt = ckpt["state_dict"]`),
the bindings that reach each use (`Names.reaching`), loops over `.items()`/`.values()`, comprehensions,
and the callers of a same-file function that returns it (`Names.definition_of`, two levels).

The parent of a node is looked up in the map the traversal records (`model.tree`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from stabfix.model.calls import torch_ops
from stabfix.model.calls.numerics import self_attribute_bindings
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import Names
from stabfix.model.source.syntax import CLASSES_AND_FUNCTIONS
from stabfix.model.source.tree_index import TreeIndex

# the methods a `with` statement runs, both of them, in order
CONTEXT_PROTOCOL = frozenset({"__enter__", "__exit__", "__aenter__", "__aexit__"})
from stabfix.model.source.vocabulary import LOG_RECEIVER_NAMES, SCALER_CLASSES

_MOVES = frozenset(name for name, op in torch_ops.METHODS.items() if op.kind == "move")
_KEPT_THROUGH = frozenset({"cast", "view", "copy"})  # a floating cast, view or copy of a loaded tensor is followed on
_PART_METHODS = frozenset({"get", "pop", "copy"})
_ELEMENT_METHODS = frozenset({"items", "values"})
_INSPECT_METHODS = frozenset({"keys", "__contains__"})
_INSPECT_CALLS = frozenset({"len", "isinstance", "print", "str", "repr", "type", "hasattr", "list", "sorted", "set"})
_LIMIT = 200  # nodes followed per question; a value spreads into few places in real code
# Library functions that copy a state dict into a model or optimizer, as `load_state_dict` does: the
# (position, keyword) of each state-dict argument
_PEFT_SET = ((1, "peft_model_state_dict"),)
_RESTORE_FUNCTIONS: dict[str, tuple[tuple[int, str], ...]] = {
    "peft.set_peft_model_state_dict": _PEFT_SET,
    "peft.utils.set_peft_model_state_dict": _PEFT_SET,
    "peft.utils.save_and_load.set_peft_model_state_dict": _PEFT_SET,
    "torch.distributed.checkpoint.state_dict.set_model_state_dict": ((1, "model_state_dict"),),
    "torch.distributed.checkpoint.state_dict.set_optimizer_state_dict": ((2, "optim_state_dict"),),
    "torch.distributed.checkpoint.state_dict.set_state_dict": ((-1, "model_state_dict"), (-1, "optim_state_dict")),
}


@dataclass(frozen=True)
class Destination:
    kind: str  # restore, adopt, move, inspect, other
    node: cst.CSTNode  # the consumer: the load_state_dict / .to(...) call, or the node where the trail ends
    whole: bool  # reached by the whole value, not by an entry or element of it


class ValueFlows(cst.BatchableCSTVisitor):
    """Answers where values go, after the traversal (it only keeps the module)."""

    def __init__(self, names: Names, tree: Optional[TreeIndex] = None) -> None:
        super().__init__()
        self.names = names
        # parents and calls, recorded in the model's traversal (None: indexed here on the first question)
        self._tree = tree
        self.module: Optional[cst.Module] = None
        # the uses by name, indexed when a value is first followed through a name (`calls()` alone needs none)
        self._uses_by_name: Optional[dict[str, list[cst.Name]]] = None
        # name -> id(the top-level `def`/`class` whose body holds them) -> its uses there, per name followed:
        # finding a use's top-level definition walks its parents, and few names are ever followed
        self._uses_by_definition: dict[str, dict[int, list[cst.Name]]] = {}
        self._declared_global: set[str] = set()
        self._number_state: Optional[set[str]] = None  # receivers used as loss scalers

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node

    # --- queries ------------------------------------------------------------------------------------
    @property
    def tree(self) -> TreeIndex:
        if self._tree is None:
            self._tree = TreeIndex.of(self.module) if self.module is not None else TreeIndex()
        return self._tree

    def parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        return self.tree.parent(node)

    def enclosing_function(self, node: cst.CSTNode) -> Optional[cst.FunctionDef]:
        current = self.parent(node)
        while current is not None and type(current) is not cst.FunctionDef:
            current = self.parent(current)
        return current

    def run_unit(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """What runs as a whole around `node` each time: its function, or for the `__enter__`/`__exit__` of a class
        (`__aenter__`/`__aexit__`) the class: a `with` runs the one then the other, on whatever runs the `with`."""
        function = self.enclosing_function(node)
        if function is None or function.name.value not in CONTEXT_PROTOCOL:
            return function
        owner = self.parent(self.parent(function)) if self.parent(function) is not None else None
        return owner if type(owner) is cst.ClassDef else function

    def calls(self) -> list[cst.Call]:
        """Every call of the file, in source order."""
        return self.tree.calls if self.module is not None else []

    def destinations(self, expr: cst.BaseExpression) -> list[Destination]:
        """Where the result of `expr` goes (see the module docstring)."""
        found: list[Destination] = []
        work: list[tuple[cst.CSTNode, bool, int]] = [(expr, True, 0)]
        seen: set[tuple[int, bool]] = set()
        while work and len(seen) < _LIMIT:
            node, whole, depth = work.pop(0)  # breadth first: consumers come out in the order uses are met
            if (id(node), whole) in seen:
                continue
            seen.add((id(node), whole))
            self._step(node, whole, depth, found, work)
        return found

    def restores_no_tensors(self, restore: cst.Call) -> bool:
        """`<x>.load_state_dict(sd)` copies no tensors: `x` is a loss scaler (built from a `GradScaler` class or used
        as one in the file: `x.scale(loss).backward()`, `x.unscale_(opt)`) or a `torch.optim.lr_scheduler` scheduler,
        whose state dicts hold Python numbers only."""
        receiver = restore.func.value if type(restore.func) is cst.Attribute else None
        key = dotted_name(receiver) if receiver is not None else None
        if key is None:
            return False
        if self._number_state is None:
            self._number_state = {used for call in self.calls() if (used := _scaler_used(call)) is not None}
        if key in self._number_state:
            return True
        if type(receiver) is cst.Name:
            values = [binding.bound_value for binding in self.names.reaching(receiver)]
        else:
            values = [binding.bound_value for binding in self_attribute_bindings(receiver, self.names)]
        return bool(values) and all(
            type(value) is cst.Call and _builds_number_state(self.names.qualify(value.func) or "") for value in values
        )

    # --- following one step -------------------------------------------------------------------------
    def _step(self, node, whole, depth, found, work) -> None:
        parent = self.parent(node)
        if parent is None:
            return
        grand = self.parent(parent)
        if type(parent) is cst.Attribute and parent.value is node:
            method = parent.attr.value
            called = type(grand) is cst.Call and grand.func is parent
            op = torch_ops.method(method, grand) if called else None
            if called and method in _MOVES:
                found.append(Destination("move", grand, whole))
            elif op is not None and op.kind in _KEPT_THROUGH:
                work.append((grand, whole, depth))  # `w.float().cuda()`, `w.view(-1, d).to(device)`: the same tensor
            elif called and method in _PART_METHODS:
                work.append((grand, False, depth))
            elif called and method in _ELEMENT_METHODS:
                self._follow_iteration(grand, work, depth, found)
            elif called and method in _INSPECT_METHODS:
                found.append(Destination("inspect", grand, whole))
            else:
                found.append(Destination("other", parent, whole))
        elif type(parent) is cst.Subscript and parent.value is node:
            work.append((parent, False, depth))
        elif type(parent) is cst.Arg:
            self._follow_argument(node, parent, whole, found)
        elif type(parent) in (cst.Assign, cst.AnnAssign) and parent.value is node:
            self._follow_binding(parent, whole, depth, found, work)
        elif type(parent) is cst.Return:
            self._follow_return(parent, whole, depth, found, work)
        elif type(parent) in (cst.Comparison, cst.ComparisonTarget, cst.If, cst.While, cst.BooleanOperation,
                                 cst.UnaryOperation, cst.FormattedStringExpression, cst.Assert):
            found.append(Destination("inspect", parent, whole))
        elif type(parent) in (cst.For, cst.CompFor) and parent.iter is node:
            found.append(Destination("inspect", parent, whole))  # iterating a dict: its keys
        elif type(parent) in (cst.Element, cst.DictElement) and parent.value is node:
            literal = grand
            if literal is not None:
                work.append((literal, False, depth))
        elif type(parent) in (cst.DictComp, cst.ListComp, cst.SetComp, cst.GeneratorExp) and any(
            part is node for part in (getattr(parent, "value", None), getattr(parent, "elt", None))
        ):
            work.append((parent, False, depth))
        elif type(parent) is cst.IfExp and (node is parent.body or node is parent.orelse):
            work.append((parent, whole, depth))
        else:
            found.append(Destination("other", parent, whole))

    def _follow_argument(self, node, arg: cst.Arg, whole: bool, found) -> None:
        call = self.parent(arg)
        if type(call) is not cst.Call:
            return
        func = call.func
        if type(func) is cst.Attribute and func.attr.value == "load_state_dict":
            if arg.keyword is None or arg.keyword.value == "state_dict":
                found.append(Destination("adopt" if _assigns(call) else "restore", call, whole))
                return
        slots = _RESTORE_FUNCTIONS.get(self.names.qualify(func) or "")
        if slots is not None:
            positional = [a for a in call.args if a.keyword is None]
            position = next((i for i, a in enumerate(positional) if a is arg), -1)
            if any(arg.keyword is not None and arg.keyword.value == keyword or position == index >= 0
                   for index, keyword in slots):
                found.append(Destination("restore", call, whole))  # `set_peft_model_state_dict(model, sd)`
                return
        name = func.value if type(func) is cst.Name else None
        receiver = func.value if type(func) is cst.Attribute else None
        if name in _INSPECT_CALLS or (type(receiver) is cst.Name and receiver.value in LOG_RECEIVER_NAMES):
            found.append(Destination("inspect", call, whole))
            return
        found.append(Destination("other", call, whole))

    def _follow_binding(self, statement, whole: bool, depth: int, found, work) -> None:
        targets = [t.target for t in statement.targets] if type(statement) is cst.Assign else [statement.target]
        for target in targets:
            if type(target) is cst.Name:
                self._follow_name(target.value, statement, whole, depth, work)
            elif type(target) in (cst.Tuple, cst.List):
                for element in target.elements:
                    if type(element.value) is cst.Name:
                        self._follow_name(element.value.value, statement, False, depth, work)
            elif type(target) is cst.Subscript and type(target.value) is cst.Name:
                # `cleaned[k] = v`: the local container now holds the value; follow the container
                for binding in self.names.reaching(target.value):
                    self._follow_name(target.value.value, binding.node, False, depth, work)
                if not self.names.reaching(target.value):
                    found.append(Destination("other", statement, whole))
            else:
                found.append(Destination("other", statement, whole))  # stored on an attribute

    def _follow_iteration(self, call: cst.Call, work, depth: int, found) -> None:
        """`for k, v in sd.items():` / `{k: v for k, v in sd.items()}`: the loop's names hold entries."""
        loop = self.parent(call)
        if type(loop) in (cst.For, cst.CompFor) and loop.iter is call:
            target = loop.target
            elements = target.elements if type(target) is cst.Tuple else [cst.Element(target)]
            if type(target) is cst.Tuple and type(call.func) is cst.Attribute and call.func.attr.value == "items":
                elements = elements[1:]  # `for key, value in sd.items()`: the keys are names, not what was loaded
            for element in elements:
                if type(element.value) is cst.Name:
                    self._follow_name(element.value.value, loop, False, depth, work)
            return
        found.append(Destination("other", call, False))

    def _follow_name(self, name: str, binder: cst.CSTNode, whole: bool, depth: int, work) -> None:
        uses_by_name = self._uses_by_name if self._uses_by_name is not None else self._index_uses()
        comprehension = self._comprehension_of(binder) if type(binder) is cst.CompFor else None
        definition = self._top_definition(binder)
        if definition is not None and name not in self._declared_global:
            # a name bound in the body of a top-level def or class is seen only there: read its uses only
            uses = self._uses_in_definitions(name, uses_by_name).get(id(definition), [])
        else:
            uses = uses_by_name.get(name, [])
        for use in uses:
            if self._is_target(use):
                continue
            if comprehension is not None:
                # a comprehension's value is read before its `for` binds (source order): match by scope
                scope = self.names.uses[use].scope.resolving(name)
                if scope.node is comprehension:
                    work.append((use, whole, depth))
            elif any(binding.node is binder for binding in self.names.reaching(use)):
                work.append((use, whole, depth))

    def _comprehension_of(self, loop: cst.CompFor) -> Optional[cst.CSTNode]:
        current = self.parent(loop)
        while current is not None and not isinstance(current, cst.BaseComp):
            current = self.parent(current)
        return current

    def _is_target(self, name: cst.Name) -> bool:
        """Whether a name is (inside) the target of an assignment or loop, not a read."""
        node: cst.CSTNode = name
        parent = self.parent(node)
        while type(parent) in (cst.Tuple, cst.List, cst.Element, cst.StarredElement):
            node, parent = parent, self.parent(parent)
        if type(parent) in (cst.AssignTarget, cst.AsName):
            return True
        if type(parent) in (cst.For, cst.CompFor) and parent.target is node:
            return True
        return type(parent) in (cst.AugAssign, cst.AnnAssign) and parent.target is node

    def _follow_return(self, statement: cst.Return, whole: bool, depth: int, found, work) -> None:
        function = self.enclosing_function(statement)
        callers = []
        if function is not None and depth < 2:
            callers = [call for call in self.calls() if self.names.definition_of(call) is function]
        if not callers:
            found.append(Destination("other", statement, whole))
        for call in callers:
            work.append((call, whole, depth + 1))

    # --- the index ----------------------------------------------------------------------------------
    def _index_uses(self) -> dict[str, list[cst.Name]]:
        self._uses_by_name = {}
        if self.module is None:
            return self._uses_by_name
        for use in self.names.uses:
            self._uses_by_name.setdefault(use.value, []).append(use)
        self._declared_global = {name for scope in self.names.scopes.values() for name in scope.declared_global}
        return self._uses_by_name

    def _uses_in_definitions(self, name: str, uses_by_name: dict[str, list[cst.Name]]) -> dict[int, list[cst.Name]]:
        """id(top-level `def`/`class`) -> the uses of `name` in its body, in order."""
        by_definition = self._uses_by_definition.get(name)
        if by_definition is None:
            by_definition = self._uses_by_definition[name] = {}
            for use in uses_by_name.get(name, []):
                definition = self._top_definition(use)
                if definition is not None:
                    by_definition.setdefault(id(definition), []).append(use)
        return by_definition

    def _top_definition(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The top-level `def`/`class` whose body holds `node` (not its decorators, parameters or bases)."""
        parent = self.tree.parent
        below, current = node, parent(node)
        while current is not None:
            above = parent(current)
            if above is self.module:
                if type(current) in CLASSES_AND_FUNCTIONS and below is current.body:
                    return current
                return None
            below, current = current, above
        return None


def _assigns(call: cst.Call) -> bool:
    """`load_state_dict(sd, assign=True)` (anything but a literal False): the module takes the tensors as they are."""
    return any(
        arg.keyword is not None and arg.keyword.value == "assign"
        and not (type(arg.value) is cst.Name and arg.value.value == "False")
        for arg in call.args
    )


def _scaler_used(call: cst.Call) -> Optional[str]:
    """The receiver a call uses as a loss scaler: `x.unscale_(opt)`, `x.scale(loss).backward()`."""
    func = call.func
    if type(func) is not cst.Attribute:
        return None
    if func.attr.value == "unscale_":
        return dotted_name(func.value)
    inner = func.value
    if func.attr.value == "backward" and type(inner) is cst.Call and type(inner.func) is cst.Attribute:
        return dotted_name(inner.func.value) if inner.func.attr.value == "scale" else None
    return None


def _builds_number_state(qualified: str) -> bool:
    return qualified.rsplit(".", 1)[-1] in SCALER_CLASSES or qualified.startswith(
        "torch.optim.lr_scheduler."
    )
