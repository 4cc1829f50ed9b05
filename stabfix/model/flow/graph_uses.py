"""What a graph is used for: whether a backward pass (`x.backward()`, `accelerator.backward(x)`,
`torch.autograd.grad(x, ...)`) differentiates something computed from one of a set of spellings (`total`,
`self.aux_losses`), following names through their bindings, and the same for what a function returns (the
caller decides what happens to it). Part of the `history` part (`History.feeds_backward`, `backwards_of`,
`feeds_return`), over `names` and `events`.
"""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst

from stabfix.model.calls import torch_ops
from stabfix.model.calls.events import Backward, Events
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import Names
from stabfix.model.source.node_fields import code_children

CUT_BUILTINS = frozenset({"float", "int", "bool", "str", "len", "round", "repr", "list", "tuple", "abs"})


class GraphUses:
    def __init__(self, names: Names, events: Events) -> None:
        self.names = names
        self.events = events
        self._methods_by_class: Optional[dict[int, list[cst.FunctionDef]]] = None
        self._methods_indexed = -1  # how many returning functions `_methods_by_class` was built from
        self._differentiated: dict[tuple[int, frozenset[str]], bool] = {}
        self._backwards_by_class: dict[int, list] = {}  # id(class) -> its backward events (`_backwards_in_class`)
        self._backwards_indexed = -1  # how many events that index was built from
        self._reads_of: dict[int, list[tuple[cst.BaseExpression, Optional[str]]]] = {}  # id(expr) -> `reads(expr)`: see `_mentions`

    def feeds_backward(
        self, spellings: set[str], function: Optional[cst.FunctionDef], cls=None, after: int = -1
    ) -> bool:
        """A backward pass in `function` (or, with `cls`, in any method of that class; with `after`, only
        one placed after that position of the `names` model) differentiates something computed from one
        of `spellings`."""
        return any(True for _ in self.backwards_of(spellings, function, cls, after))

    def backwards_of(
        self, spellings: set[str], function: Optional[cst.FunctionDef], cls=None, after: int = -1
    ) -> Iterable[Backward]:
        """The backward passes `feeds_backward` asks about, in source order."""
        candidates = self._backwards_in_class(cls) if cls is not None else self.events.in_function(function, "backward")
        for event in candidates:
            if not isinstance(event, Backward) or event.site.names_order <= after:
                continue
            if cls is not None:
                if event.site.cls is not cls:
                    continue
            elif event.site.function is not function:
                continue
            if self._differentiates(event, spellings):
                yield event

    def _backwards_in_class(self, cls: cst.ClassDef) -> list:
        """The backward events in the class's methods, in order (every holder on `self` asks: indexed by
        class once, again only when the events part has grown)."""
        if self._backwards_indexed != len(self.events.events):
            self._backwards_indexed = len(self.events.events)
            self._backwards_by_class = {}
            for event in self.events.of_kind("backward"):
                self._backwards_by_class.setdefault(id(event.site.cls), []).append(event)
        return self._backwards_by_class.get(id(cls), [])

    def _differentiates(self, event: Backward, spellings: set[str]) -> bool:
        # Every accumulation site asks about the same backward passes: in a script whose cells rebind
        # `loss` in loops, each answer follows every earlier cell, so each is worked out once.
        key = (id(event), frozenset(spellings))
        if key not in self._differentiated:
            self._differentiated[key] = self._mentions(event.node if event.loss is None else event.loss, spellings)
        return self._differentiated[key]

    def _returning_methods(self) -> dict[int, list[cst.FunctionDef]]:
        """id(class) -> the functions in it that return a value, in order (asked per candidate: built once)."""
        if self._methods_by_class is None or self._methods_indexed != len(self.names.returns):
            self._methods_indexed = len(self.names.returns)
            self._methods_by_class = {}
            for f in self.names.returns:
                owner = self.names.enclosing_class(self.names.scopes[f])
                self._methods_by_class.setdefault(id(owner), []).append(f)
        return self._methods_by_class

    def feeds_return(self, spellings: set[str], function: Optional[cst.FunctionDef], cls=None) -> bool:
        """What `function` returns (with `cls`: any method of that class) is computed from one of `spellings`."""
        if cls is not None:
            functions = self._returning_methods().get(id(cls), [])
        else:
            functions = [function] if function is not None else []
        return any(
            self._mentions(returned, spellings) and not cut_at_top(returned)
            for f in functions for returned in self.names.returns.get(f, [])
        )

    def _mentions(self, expr: cst.CSTNode, spellings: set[str], depth: int = 0, seen: Optional[set] = None) -> bool:
        """Whether `expr`, or what a name in it was bound to (transitively), reads one of the spellings."""
        seen = set() if seen is None else seen
        # the same bound values are read again for every question (every backward pass, every spelling)
        spelled_reads = self._reads_of.get(id(expr))
        if spelled_reads is None:
            spelled_reads = self._reads_of[id(expr)] = [
                (node, dotted_name(node)) for node in reads(expr)
            ]
        for node, spelled in spelled_reads:
            if spelled in spellings:
                return True
            if type(node) is cst.Name and depth < 6:
                for binding in self.names.reaching(node):
                    if id(binding) in seen:
                        continue
                    seen.add(id(binding))
                    if binding.value is not None and self._mentions(binding.value, spellings, depth + 1, seen):
                        return True
        return False


def cut_at_top(expr: cst.BaseExpression) -> bool:
    """`total.item()`, `float(total)`, `torch.stack(xs).mean().detach()`: a returned number, not a graph."""
    if type(expr) is not cst.Call:
        return False
    func = expr.func
    if type(func) is cst.Attribute:
        op = torch_ops.method(func.attr.value, expr)
        return op is not None and op.kind in ("cut", "python")
    return type(func) is cst.Name and func.value in CUT_BUILTINS


def reads(expr: cst.CSTNode) -> Iterable[cst.BaseExpression]:
    """The names and attribute chains an expression reads (`self.losses`, `total`), in visiting order (an
    attribute chain, then the names in it)."""
    # `code_nodes`' walk inlined, by exact types (neither has a subclass): asked of every node of every bound value
    found: list[cst.BaseExpression] = []
    stack = [expr]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.Name or kind is cst.Attribute and dotted_name(node) is not None:
            found.append(node)
        stack.extend(reversed(code_children(node)))
    return found

