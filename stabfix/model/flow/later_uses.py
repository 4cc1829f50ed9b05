"""What later code does with a held value: the reads of an accumulator after a point, and its resets.

The model's `uses` part, queried after the traversal. A *holder* is what keeps a value from one
iteration (or call) to the next: a local or module-global name (`total`), `self.<attr>`
(`self.loss_history`), or an entry of either (`logs["loss"]`).

`reads(holder, site, after, function, cls)` lists the reads of the holder that see what the statement
`site` put there: for a name, the uses that the site's binding reaches (or, for a container filled
in place, `losses.append(x)`, that the same bindings reach) placed after `after` in source order or
inside a loop around the site (they run on the next pass); for `self.<attr>`, every read in the
class's methods. Each read says what it *needs* of the value, following the value through arithmetic,
indexing, literals, local names it is bound to and same-file callers of a function that returns it:

- `number`: works the same on a Python number or a tensor: arithmetic whose result only meets such
  uses, comparisons and truth tests, formatting with a format spec (`f"{total:.3f}"`),
  `float`/`int`/`round`/`len`, updating the holder itself (`total /= n`), list bookkeeping
  (`losses.append`, `.clear()`);
- `tensor`: needs a tensor: a tensor method or attribute (`total.item()`, `.detach()`, `.cpu()`,
  `.shape`), a torch function (`torch.stack(losses)`, `dist.all_reduce(total)`);
- `unseen`: hands the value to code the file does not show: returned to no caller of the file,
  passed to an unknown or same-file function, stored on an object, yielded; a holder on `self` or
  a module global is such state itself (any code holding the object or module can read it);
- `graph`: differentiates it or reads its autograd state (`.backward()`, `torch.autograd.grad`,
  `.requires_grad`, `.grad_fn`, `.register_hook`), also through its text: `print(total)`,
  `str(total)`, `f"{total}"` and a logger's arguments show a tensor's `grad_fn=`.

`strongest(reads)` orders them `number` < `tensor` < `unseen` < `graph`.

`reset_every_step(holder, site, function)`: the holder is re-bound fresh (`total = 0`, a value that
does not read it) or emptied in place (`total.zero_()`, `losses.clear()`) whenever an optimizer step
runs: for every optimizer step in the loops around the site, a reset sits in the innermost loop that
holds both, inside the loop that carries the site, under no `if` branch the step is not under too,
and the step sits in no deeper loop of its own. What the holder sums then never outgrows one
accumulation window (`if (i + 1) % accum == 0: opt.step(); ...; running_loss = 0`). It and `runs_whenever` live in
`holder_resets.py` (`HolderResets`, which `LaterUses` inherits).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

import libcst as cst

from stabfix.model.calls import torch_ops
from stabfix.model.calls.events import Events
from stabfix.model.calls.optimizers import OptimizerTracker
from stabfix.model.flow.holder_resets import Holder, HolderResets, Loop
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import Names
from stabfix.model.source.node_fields import children
from stabfix.model.source.syntax import DEFINITIONS
from stabfix.model.source.tree_index import TreeIndex
from stabfix.model.source.vocabulary import LOG_RECEIVER_NAMES

NUMBER, TENSOR, UNSEEN, GRAPH = "number", "tensor", "unseen", "graph"
_RANK = {NUMBER: 0, TENSOR: 1, UNSEEN: 2, GRAPH: 3}
_GRAPH_METHODS = frozenset({"backward", "retain_grad", "register_hook", "requires_grad_"})
_GRAPH_ATTRIBUTES = frozenset({"requires_grad", "grad_fn", "is_leaf", "grad", "retains_grad"})
_GRAPH_FUNCTIONS = frozenset({"torch.autograd.grad", "torch.autograd.backward"})
# Methods whose result is Python data or cut from the graph: nothing downstream can need the graph.
_CUT_METHODS = frozenset(name for name, op in torch_ops.METHODS.items() if op.kind in ("cut", "python"))
# List and dict bookkeeping on a container holder: works whatever its elements are.
_CONTAINER_METHODS = frozenset({"append", "extend", "insert", "clear", "remove", "index", "count", "keys", "update"})
_ELEMENT_METHODS = frozenset({"pop", "get", "values", "items", "copy"})  # hand out what the holder holds
# Builtins whose result is plain Python data whatever they are given (a tensor converts itself).
_PLAIN_BUILTINS = frozenset({"float", "int", "bool", "round", "len", "isinstance", "type", "id", "hash"})
_TEXT_BUILTINS = frozenset({"print", "str", "repr", "format"})  # a tensor's text shows its `grad_fn=`
_PASS_THROUGH_BUILTINS = frozenset({"sum", "min", "max", "abs", "sorted", "list", "tuple", "reversed", "enumerate", "zip"})
_PLAIN_MODULES = ("math.", "statistics.")
_DEPTH = 4


@dataclass(frozen=True)
class Read:
    node: cst.CSTNode  # the read: a Name, or a `self.<attr>` Attribute
    need: str  # number | tensor | unseen | graph
    consumer: cst.CSTNode  # where following the value stopped (the call, statement or method)


def strongest(reads: list[Read]) -> str:
    """The most a read asks of the value (`number` when there is no read)."""
    return max((read.need for read in reads), key=_RANK.__getitem__, default=NUMBER)


class LaterUses(HolderResets, cst.BatchableCSTVisitor):
    """Answers `reads` and `reset_every_step` after the traversal (it only keeps the module)."""

    def __init__(self, names: Names, events: Events, optimizers: OptimizerTracker,
                 tree: Optional[TreeIndex] = None) -> None:
        super().__init__()
        self.names = names
        self.events = events
        self.optimizers = optimizers
        # the traversal's parent map (every node but whitespace and punctuation, which no question walks
        # up from); without it, one walk of the module builds a map of its own
        self.tree = tree
        self.module: Optional[cst.Module] = None
        self._parents: Optional[dict[int, cst.CSTNode]] = None
        self._callers: Optional[dict[int, list[cst.Call]]] = None  # by the id of the file's function they run
        # root name -> id(class) -> dotted spelling -> the attribute chains so spelled in the class
        self._attributes_by_class: Optional[dict[str, dict[int, dict[str, list[cst.Attribute]]]]] = None
        self._uses_by_scope: Optional[dict[str, dict[int, list[cst.Name]]]] = None  # name -> id(scope) -> uses
        self._within_sets: dict[int, set[int]] = {}  # id(node) -> `_nodes_within(node)`
        self._candidates_in: dict[int, list] = {}
        self._resetting_by_loop: Optional[dict[int, list[cst.Call]]] = None

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node

    # -- the parent map ----------------------------------------------------------------------------------
    def parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        if self.tree is not None:
            return self.tree.parent(node)
        if self._parents is None:
            self._parents = {}
            stack: list[cst.CSTNode] = [self.module] if self.module is not None else []
            while stack:
                current = stack.pop()
                for child in children(current):
                    self._parents[id(child)] = current
                    stack.append(child)
        return self._parents.get(id(node))

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self.parent(node)
        while current is not None:
            yield current
            current = self.parent(current)

    def loops_around(self, node: cst.CSTNode) -> list[Loop]:
        """The `for`/`while` loops around a node in its own function, innermost first (a loop only
        counts when the node is in its body, not its iterable or test)."""
        found: list[Loop] = []
        previous = node
        for ancestor in self.ancestors(node):
            kind = type(ancestor)  # exact types (libcst has no subclass of them): every ancestor of every site
            if kind in DEFINITIONS:
                break
            if (kind is cst.For or kind is cst.While) and previous is ancestor.body:  # type: ignore[attr-defined]
                found.append(ancestor)  # type: ignore[arg-type]
            previous = ancestor
        return found

    # -- reads ---------------------------------------------------------------------------------------------
    def reads(self, holder: Holder, site: cst.CSTNode, after: int, function: Optional[cst.FunctionDef],
              cls: Optional[cst.ClassDef]) -> list[Read]:
        """The reads of `holder` that see what `site` stored (see the module docstring), with their needs."""
        root = holder.value if type(holder) is cst.Subscript else holder
        found: list[Read] = []
        if type(root) is cst.Attribute or self._module_global(root):
            found.append(Read(root, UNSEEN, root))  # state any code holding the object or module can read
        for node in self._holder_reads(root, site, after, function, cls):
            need, consumer = self._need(node, 0, set())
            found.append(Read(node, need, consumer))
        return found

    def _holder_reads(self, root: cst.BaseExpression, site: cst.CSTNode, after: int,
                      function: Optional[cst.FunctionDef], cls: Optional[cst.ClassDef]) -> list[cst.CSTNode]:
        spelled = dotted_name(root)
        if spelled is None:
            return []
        if spelled.startswith("self.") and cls is not None:
            return [node for node in self._attribute_reads(cls, spelled) if not self._within(node, site)]
        if type(root) is not cst.Name or root not in self.names.uses:
            return []
        loops = self.loops_around(site)
        stored = {id(b) for b in self.names.reaching(root)}  # what the holder held when the site ran
        bindings = [b for b in self.names.bindings_of(root) if b.node is site]
        found = []
        # a script's holder at module level has a use in every cell: which uses sit in the site or in a
        # loop around it is read from a set of the nodes there, not from each use's ancestors
        in_site = self._nodes_within(site)
        in_loops: Optional[set[int]] = None
        for use in self._uses_resolved_in(root.value, self.names.uses[root].scope.resolving(root.value)):
            if use is root or id(use) in in_site or self._is_target(use):
                continue
            if not self.names.uses[use].order > after:
                if in_loops is None:
                    in_loops = set().union(*(self._nodes_within(loop.body) for loop in loops))
                if id(use) not in in_loops:
                    continue
            reaching = self.names.reaching(use)
            if bindings and not any(b in bindings for b in reaching):
                continue  # re-bound in between: another value
            if not bindings and not any(id(b) in stored for b in reaching):
                continue
            found.append(use)
        return found

    def _module_global(self, root: cst.BaseExpression) -> bool:
        use = self.names.uses.get(root) if type(root) is cst.Name else None
        return use is not None and use.scope.resolving(root.value).parent is None

    def _attribute_reads(self, cls: cst.ClassDef, spelled: str) -> list[cst.CSTNode]:
        """The reads of the dotted attribute `spelled` in the class (an attribute spelled so never holds
        another of the same spelling). Every such chain starts at a recorded use of its root name (`self`)
        whose scope lies in the class's (which covers all of the class's node, its bases and decorators
        too): the uses of the root name are followed up their chains once for every class, not each
        class's code walked."""
        root = spelled.split(".", 1)[0]
        if self._attributes_by_class is None:
            self._attributes_by_class = {}
        by_class = self._attributes_by_class.get(root)
        if by_class is None:
            by_class = self._attributes_by_class[root] = {}
            for use in self._uses(root):
                chain: list[tuple[str, cst.Attribute]] = []
                node, parent, spelling = use, self.parent(use), root
                while type(parent) is cst.Attribute and parent.value is node:
                    spelling = f"{spelling}.{parent.attr.value}"
                    chain.append((spelling, parent))
                    node, parent = parent, self.parent(parent)
                scope = self.names.uses[use].scope if chain else None
                while scope is not None:
                    if scope.is_class:
                        by_spelling = by_class.setdefault(id(scope.node), {})
                        for spelling, attribute in chain:
                            by_spelling.setdefault(spelling, []).append(attribute)
                    scope = scope.parent
        return [node for node in by_class.get(id(cls), {}).get(spelled, []) if not self._is_target(node)]

    def _uses(self, name: str) -> list[cst.Name]:
        return self.names.uses_named(name)

    def _uses_resolved_in(self, name: str, scope) -> list[cst.Name]:
        """The uses of `name` that resolve to the binding scope `scope`, in `_uses` order (every holder of a
        big file asks for its name: the file's uses are split by scope once per name, not scanned per holder)."""
        if self._uses_by_scope is None:
            self._uses_by_scope = {}
        by_scope = self._uses_by_scope.get(name)
        if by_scope is None:
            by_scope = self._uses_by_scope[name] = {}
            for use in self._uses(name):
                resolved = self.names.uses[use].scope.resolving(use.value)
                by_scope.setdefault(id(resolved), []).append(use)
        return by_scope.get(id(scope), [])

    def _nodes_within(self, outer: cst.CSTNode) -> set[int]:
        """The ids of `outer` and every node under it (asked again for a loop around many sites: kept)."""
        found = self._within_sets.get(id(outer))
        if found is None:
            found = self._within_sets[id(outer)] = set()
            stack = [outer]
            while stack:
                node = stack.pop()
                found.add(id(node))
                stack.extend(children(node))
        return found

    def _within(self, node: cst.CSTNode, outer: cst.CSTNode) -> bool:
        return node is outer or any(ancestor is outer for ancestor in self.ancestors(node))

    def _is_target(self, node: cst.CSTNode) -> bool:
        """Bound, not read: an assignment or loop target (an augmented target is read, and kept)."""
        parent = self.parent(node)
        while type(parent) in (cst.Tuple, cst.List, cst.Element, cst.StarredElement):
            node, parent = parent, self.parent(parent)
        if type(parent) in (cst.AssignTarget, cst.AsName, cst.Del):
            return True
        if type(parent) in (cst.For, cst.CompFor) and parent.target is node:
            return True
        return type(parent) is cst.AnnAssign and parent.target is node

    # -- what a read needs -----------------------------------------------------------------------------------
    def _need(self, node: cst.CSTNode, depth: int, seen: set[int]) -> tuple[str, cst.CSTNode]:
        if id(node) in seen or depth > _DEPTH:
            return UNSEEN, node
        seen.add(id(node))
        parent = self.parent(node)
        if parent is None:
            return UNSEEN, node
        grand = self.parent(parent)
        if type(parent) is cst.Attribute and parent.value is node:
            return self._method_need(parent, grand, depth, seen)
        if type(parent) is cst.Subscript and parent.value is node:
            return self._need(parent, depth, seen)  # an entry or element of it
        if type(parent) in (cst.BinaryOperation, cst.Index, cst.SubscriptElement):
            if type(parent) in (cst.Index, cst.SubscriptElement):
                return NUMBER, parent  # used as an index
            return self._need(parent, depth, seen)
        if type(parent) is cst.UnaryOperation:
            return (NUMBER, parent) if type(parent.operator) is cst.Not else self._need(parent, depth, seen)
        if type(parent) is cst.IfExp:
            return self._need(parent, depth, seen) if node is not parent.test else (NUMBER, parent)
        if type(parent) is cst.FormattedStringExpression:
            shown = parent.format_spec is None or parent.conversion is not None
            return (GRAPH if shown else NUMBER), parent  # `f"{total}"` shows `grad_fn=`; `f"{total:.3f}"` a number
        if type(parent) in (cst.Comparison, cst.ComparisonTarget, cst.BooleanOperation, cst.If, cst.While,
                               cst.Assert, cst.Expr):
            return NUMBER, parent
        if type(parent) in (cst.Element, cst.DictElement) and parent.value is node and grand is not None:
            return self._need(grand, depth, seen)  # in a literal: what happens to the literal
        if type(parent) is cst.Arg:
            return self._argument_need(parent, grand, depth, seen)
        if type(parent) is cst.AugAssign:
            if parent.target is node:
                return NUMBER, parent  # `total /= n`: the holder updates itself
            return self._bound_need(parent.target, parent, depth, seen)
        if type(parent) in (cst.Assign, cst.AnnAssign) and parent.value is node:
            targets = [t.target for t in parent.targets] if type(parent) is cst.Assign else [parent.target]
            return max((self._bound_need(t, parent, depth, seen) for t in targets), key=lambda r: _RANK[r[0]])
        if type(parent) is cst.Return:
            return self._returned_need(parent, depth, seen)
        if type(parent) is cst.For and parent.iter is node:
            return self._bound_need(parent.target, parent, depth, seen)
        return UNSEEN, parent

    def _method_need(self, attribute: cst.Attribute, grand, depth: int, seen: set[int]) -> tuple[str, cst.CSTNode]:
        method = attribute.attr.value
        called = type(grand) is cst.Call and grand.func is attribute
        if not called:
            return (GRAPH if method in _GRAPH_ATTRIBUTES else TENSOR), attribute
        if method in _GRAPH_METHODS:
            return GRAPH, grand
        if method in _CONTAINER_METHODS:
            return NUMBER, grand
        if method in _ELEMENT_METHODS:
            return self._need(grand, depth + 1, seen)
        if method in _CUT_METHODS:
            return TENSOR, grand  # `total.item()`: needs a tensor, hands on none of its graph
        need, consumer = self._need(grand, depth + 1, seen)  # `total.mean()`, `total.cpu()`: a tensor of it
        return (need if _RANK[need] > _RANK[TENSOR] else TENSOR), consumer

    def _argument_need(self, arg: cst.Arg, call, depth: int, seen: set[int]) -> tuple[str, cst.CSTNode]:
        if type(call) is not cst.Call:
            return UNSEEN, arg
        func = call.func
        qualified = self.names.qualify(func) or ""
        if qualified in _GRAPH_FUNCTIONS:
            return GRAPH, call
        if type(func) is cst.Name and not qualified and not self.names.bindings_of(func):
            if func.value in _PLAIN_BUILTINS or func.value == "format" and len(call.args) > 1:
                return NUMBER, call
            if func.value in _TEXT_BUILTINS:
                return GRAPH, call
            if func.value in _PASS_THROUGH_BUILTINS:
                return self._need(call, depth + 1, seen)
        if qualified.startswith(_PLAIN_MODULES):
            return NUMBER, call
        if qualified.startswith("torch."):
            need, consumer = self._need(call, depth + 1, seen)  # `torch.stack(losses)`: what its result meets
            return (need if _RANK[need] > _RANK[TENSOR] else TENSOR), consumer
        receiver = func.value if type(func) is cst.Attribute else None
        if type(receiver) is cst.Name and receiver.value in LOG_RECEIVER_NAMES and not qualified.startswith("torch"):
            # `logger.info(...)` formats what it is given, `grad_fn=` and all; only the wording hangs on the
            # name: an unseen call makes the fix unsafe just the same
            return GRAPH, call
        return UNSEEN, call

    def _bound_need(self, target: cst.BaseExpression, statement: cst.CSTNode, depth: int,
                    seen: set[int]) -> tuple[str, cst.CSTNode]:
        """What the reads of a local name bound (or updated) from the value need."""
        if type(target) is not cst.Name:
            return UNSEEN, statement  # stored on an object or in a container
        needs: list[tuple[str, cst.CSTNode]] = [(NUMBER, statement)]
        for use in self._uses(target.value):
            if use is target or self._is_target(use) or use not in self.names.uses:
                continue
            if any(binding.node is statement for binding in self.names.reaching(use)):
                needs.append(self._need(use, depth + 1, seen))
        return max(needs, key=lambda r: _RANK[r[0]])

    def _returned_need(self, statement: cst.Return, depth: int, seen: set[int]) -> tuple[str, cst.CSTNode]:
        function = next((a for a in self.ancestors(statement) if type(a) is cst.FunctionDef), None)
        if function is None:
            return UNSEEN, statement
        callers = self._calls_of(function)
        if not callers:
            return UNSEEN, statement  # returned to callers the file does not show
        return max((self._need(call, depth + 1, seen) for call in callers), key=lambda r: _RANK[r[0]])

    def _calls_of(self, function: cst.FunctionDef) -> list[cst.Call]:
        """The calls of the file that run `function`, in one walk's order (resolved once for every return):
        from the traversal's list of calls where there is one (the names part resolves each call once
        for every part that asks), else from a walk of the module of its own."""
        if self.tree is not None and self.tree.module is not None:
            return self._walk_order(self.names.calls_running(function, self.tree.calls))
        if self._callers is None:
            self._callers = {}
            for node in self._all_nodes():
                if type(node) is cst.Call:
                    definition = self.names.definition_of(node)
                    if definition is not None:
                        self._callers.setdefault(id(definition), []).append(node)
        return self._callers.get(id(function), [])

    def _walk_order(self, calls: list[cst.Call]) -> list[cst.Call]:
        """Calls in source order put in `_all_nodes`' order (each call before the calls inside it, later
        calls first), the order the reads of a returned value are followed in: a node one caller's reads
        reached is not followed again for the next."""
        if len(calls) < 2:
            return calls
        finished: list[cst.Call] = []  # in source order, each call after the calls inside it
        open_calls: list[cst.Call] = []
        for call in calls:
            around = {id(ancestor) for ancestor in self.ancestors(call)}
            while open_calls and id(open_calls[-1]) not in around:
                finished.append(open_calls.pop())
            open_calls.append(call)
        finished.extend(reversed(open_calls))
        return finished[::-1]

    def _all_nodes(self) -> Iterator[cst.CSTNode]:
        stack: list[cst.CSTNode] = [self.module] if self.module is not None else []
        while stack:
            node = stack.pop()
            yield node
            stack.extend(children(node))
