"""Whether a held value is reset whenever an optimizer step runs (`reset_every_step`: see `later_uses`),
and whether one statement runs whenever another does in a pass of the loops around both
(`runs_whenever`). `HolderResets` is mixed into the `uses` part (`LaterUses`), whose parent map it
walks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, Optional, Union

import libcst as cst

from stabfix.model.calls.events import Events, Step, stepped_optimizer
from stabfix.model.calls.optimizers import OptimizerTracker
from stabfix.model.source.node_fields import children
from stabfix.model.source.tree_index import TreeIndex

_RESETTING_METHODS = frozenset({"zero_", "clear", "fill_"})
Holder = cst.BaseExpression
Loop = Union[cst.For, cst.While]
_OWN_SCOPES = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})
# the blocks a condition or a handler runs (`_guards`)
_BRANCHES = frozenset({cst.If, cst.Else, cst.ExceptHandler, cst.Try, cst.MatchCase})
_FEW_STEPS = 8  # up to this many optimizer steps, each is placed by its ancestors
# what holds statements (an assignment is one): blocks, lines and compound statements but the definitions
_STATEMENT_HOLDERS = frozenset({
    cst.IndentedBlock, cst.SimpleStatementSuite, cst.SimpleStatementLine, cst.If, cst.Else, cst.For, cst.While,
    cst.Try, cst.TryStar, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally, cst.With, cst.Match, cst.MatchCase,
})


class HolderResets:
    """Questions about resets and branches over the module `LaterUses` keeps (ask them after the traversal)."""

    # kept by `LaterUses` (see there)
    events: Events
    optimizers: OptimizerTracker

    # kept by `LaterUses`: id(loop) -> `_reset_candidates(loop)`; id(loop) -> the resetting calls in it; its tree
    _candidates_in: dict[int, list]
    _resetting_by_loop: Optional[dict[int, list[cst.Call]]]
    tree: Optional[TreeIndex]

    if TYPE_CHECKING:

        def loops_around(self, node: cst.CSTNode) -> list[Loop]: ...

        def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]: ...

        def _within(self, node: cst.CSTNode, outer: cst.CSTNode) -> bool: ...

        def _nodes_within(self, outer: cst.CSTNode) -> set[int]: ...

    def reset_every_step(self, holder: Holder, site: cst.CSTNode, function: Optional[cst.FunctionDef]) -> bool:
        """Whether the holder is reset whenever an optimizer step runs (see the docstring of `later_uses`)."""
        carrying = self.loops_around(site)
        if not carrying:
            return False
        outermost = carrying[-1]
        candidates = [
            event for event in self.events.in_function(function, "step")
            if isinstance(event, Step) and not event.site.in_lambda
        ]
        if len(candidates) > _FEW_STEPS:
            in_loop = self._nodes_within(outermost.body)  # a set: a script's every cell steps at module level
            steps = [event for event in candidates if id(event.node) in in_loop
                     and stepped_optimizer(event, self.optimizers, self.events) is not None]
        else:  # a function's one or two steps: their ancestors, not a set of the whole loop's nodes
            steps = [event for event in candidates if self._within(event.node, outermost.body)
                     and stepped_optimizer(event, self.optimizers, self.events) is not None]
        if not steps:
            return False
        resets = self._resets(holder, outermost)
        return all(any(self._covers(reset, step.node, site) for reset in resets) for step in steps)

    def _resets(self, holder: Holder, region: cst.CSTNode) -> list[cst.CSTNode]:
        """Statements in `region` that give the holder a fresh value or empty it in place."""
        found: list[cst.CSTNode] = []
        for node in self._reset_candidates(region):
            if type(node) is cst.Assign:
                if any(_same(t.target, holder) for t in node.targets):
                    if not _mentions(node.value, holder):
                        found.append(node)
                elif any(_unpacked_fresh(t.target, node.value, holder) for t in node.targets):
                    found.append(node)  # `running_loss, num_tokens = 0, 0`
            elif type(node) is cst.AugAssign:
                if _same(node.target, holder):
                    if type(node.operator) is cst.SubtractAssign and _same(node.value, holder):
                        found.append(node)  # `tr_loss -= tr_loss`
                    elif type(node.operator) is cst.MultiplyAssign and _is_zero(node.value):
                        found.append(node)
            elif _same(node.func.value, holder):  # `holder.zero_()`, `.clear()`, `.fill_(...)`
                if node.func.attr.value != "fill_" or (node.args and _is_zero(node.args[0].value)):
                    found.append(node)
        return found

    def _reset_candidates(self, region: cst.CSTNode) -> list:
        """The assignments, augmented assignments and calls of a resetting method in `region`, outside
        the functions and classes defined in it, in no particular order (every holder updated in a loop
        asks: found once a loop). An assignment is a statement: only the blocks and compound statements
        are walked, not the expressions in them; the calls come from the file's list of calls."""
        found = self._candidates_in.get(id(region))
        if found is None:
            found = self._candidates_in[id(region)] = []
            if self.tree is None or self.tree.module is None:
                self._walk_candidates(region, found)
                return found
            stack = [region]
            while stack:
                node = stack.pop()
                for child in children(node):
                    kind = type(child)
                    if kind is cst.Assign or kind is cst.AugAssign:
                        found.append(child)
                    elif kind in _STATEMENT_HOLDERS:
                        stack.append(child)
            found.extend(self._resetting_calls().get(id(region), ()))
        return found

    def _resetting_calls(self) -> dict[int, list[cst.Call]]:
        """id(loop) -> the calls of a resetting method in it, not inside a function, class or lambda of it."""
        if self._resetting_by_loop is None:
            self._resetting_by_loop = {}
            for call in self.tree.calls:  # type: ignore[union-attr]
                if type(call.func) is not cst.Attribute or call.func.attr.value not in _RESETTING_METHODS:
                    continue
                for ancestor in self.ancestors(call):
                    kind = type(ancestor)
                    if kind in _OWN_SCOPES:
                        break
                    if kind is cst.For or kind is cst.While:
                        self._resetting_by_loop.setdefault(id(ancestor), []).append(call)
        return self._resetting_by_loop

    def _walk_candidates(self, region: cst.CSTNode, found: list) -> None:
        """`_reset_candidates` by a walk of every node of the region (a tree no traversal indexed)."""
        stack = [region]
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind is cst.Assign or kind is cst.AugAssign:
                found.append(node)
            elif kind is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in _RESETTING_METHODS:
                found.append(node)
            if kind not in _OWN_SCOPES or node is region:
                stack.extend(children(node))

    def _covers(self, reset: cst.CSTNode, step: cst.CSTNode, site: cst.CSTNode) -> bool:
        """The reset runs whenever the step does, in a loop that carries the site."""
        reset_loops, step_loops = self.loops_around(reset), self.loops_around(step)
        shared = next((loop for loop in reset_loops if any(loop is other for other in step_loops)), None)
        if shared is None or not self._within(site, shared.body):
            return False
        if step_loops[0] is not shared:
            return False  # the step repeats in a loop of its own: many steps per reset
        return self.runs_whenever(reset, step)

    def runs_whenever(self, node: cst.CSTNode, other: cst.CSTNode) -> bool:
        """`node` runs whenever `other` does, in one pass of the loops around both: every `if`/`else`/
        `except` branch between their innermost shared loop (or function) and `node` holds `other` too."""
        other_loops = self.loops_around(other)
        container = next((loop for loop in self.loops_around(node) if any(loop is o for o in other_loops)), None)
        other_guards = set(self._guards(other, container))
        return all(guard in other_guards for guard in self._guards(node, container))

    def _guards(self, node: cst.CSTNode, container: Optional[cst.CSTNode]) -> list[int]:
        """The conditional blocks (`if`/`else`/`try` branches) between `container` (a loop; None: the
        function) and `node`, by id."""
        found: list[int] = []
        previous = node
        for ancestor in self.ancestors(node):
            kind = type(ancestor)  # exact types (libcst has no subclass of them)
            if ancestor is container or kind in _OWN_SCOPES:
                break
            if type(previous) is cst.IndentedBlock and kind in _BRANCHES and not (
                    kind is cst.Try and previous is ancestor.body):  # type: ignore[attr-defined]
                found.append(id(previous))
            previous = ancestor
        return found


def _same(expr: cst.BaseExpression, holder: Holder) -> bool:
    return expr.deep_equals(holder)


def _mentions(expr: cst.CSTNode, holder: Holder) -> bool:
    stack: list[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        if type(node) is type(holder) and isinstance(node, cst.BaseExpression) and node.deep_equals(holder):
            return True
        stack.extend(children(node))
    return False


def _is_zero(expr: cst.BaseExpression) -> bool:
    return type(expr) in (cst.Integer, cst.Float) and float(expr.value) == 0.0


def _unpacked_fresh(target: cst.BaseExpression, value: cst.BaseExpression, holder: Holder) -> bool:
    """`a, holder = x, fresh`: the holder gets its element of a tuple display, which does not read it."""
    if type(target) not in (cst.Tuple, cst.List) or type(value) not in (cst.Tuple, cst.List):
        return False
    if len(target.elements) != len(value.elements) or any(
            type(e) is cst.StarredElement for e in (*target.elements, *value.elements)):
        return False
    return any(_same(t.value, holder) and not _mentions(v.value, holder)
               for t, v in zip(target.elements, value.elements))
