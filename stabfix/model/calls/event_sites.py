"""Where a training event sits: its `Site` (enclosing functions and class, order among all events, place
among the `names` model's bindings, enclosing loops, branches, blocks and statement line), and
`SiteTracker`, the part of the `events` traversal that knows where it stands and answers questions
about places: a `for`/`while` loop's own site and span, `with` bodies, the `if` tests between a scope
and a site (`gates`), the innermost loop several sites share. `Events` (in `events`) inherits it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import libcst as cst

from stabfix.model.calls.optimizers import Scope
from stabfix.model.source.enclosing import EnclosingDefinitions
from stabfix.model.source.names import Names

Branch = tuple[int, str]  # (id of the statement that branches, which of its branches)
Gate = tuple[cst.BaseExpression, bool]  # an `if` test, and whether a site sits in its `else` branch


@dataclass(frozen=True, eq=False)
class Site:
    """Where an event (or a `for` loop) sits."""

    functions: tuple[cst.FunctionDef, ...]  # enclosing functions, outermost first
    cls: Optional[cst.ClassDef]  # innermost enclosing class
    order: int  # strictly increasing over all events and loops of the file
    names_order: int  # bindings of the `names` model with a smaller `order` come before this site
    loops: tuple[cst.For, ...]  # enclosing `for` loops of the innermost function, outermost first
    branches: tuple[Branch, ...]
    blocks: tuple[cst.CSTNode, ...]  # enclosing Module/IndentedBlock nodes, outermost first
    statement: Optional[cst.SimpleStatementLine]  # its line, unless it sits in a one-line suite
    any_loops: tuple[cst.CSTNode, ...] = ()  # enclosing `for` and `while` loops of its function, outermost first
    in_lambda: bool = False  # inside a lambda: runs when the lambda is called (a hook), not here

    @property
    def function(self) -> Optional[cst.FunctionDef]:
        return self.functions[-1] if self.functions else None

    @property
    def scope(self) -> Scope:
        """The position as the `optimizers` part takes it."""
        return Scope(self.functions, self.cls)

    def never_both_run(self, other: "Site") -> bool:
        """Whether the two sites sit in branches of one statement that exclude each other."""
        mine = dict(self.branches)
        for owner, label in other.branches:
            theirs = mine.get(owner)
            if theirs is None or theirs == label:
                continue
            pair = {theirs, label}
            if pair == {"if.body", "if.else"} or any(item.startswith("try.except.") for item in pair):
                return True
        return False

    def leaves_before(self, later: "Site") -> bool:
        """Whether this site sits in a block that `later` is not in and that ends in return, raise,
        continue or break: then control never flows from here to `later` in the same pass."""
        later_blocks = {id(block) for block in later.blocks}
        for block in self.blocks:
            if id(block) in later_blocks:
                continue
            body = getattr(block, "body", ())
            if body and type(body[-1]) is cst.SimpleStatementLine:
                if type(body[-1].body[-1]) in (cst.Return, cst.Raise, cst.Continue, cst.Break):
                    return True
        return False


class SiteTracker(cst.BatchableCSTVisitor):
    """Follows the traversal's place (functions, loops, lambdas, branches, blocks, statements) so that
    `_site()` can say where an event sits; run in the batched traversal after `names`."""

    def __init__(self, names: Names, enclosing: EnclosingDefinitions) -> None:
        super().__init__()
        self.names = names
        self.enclosing = enclosing
        self._loop_sites: dict[cst.For, Site] = {}
        self._loop_ends: dict[cst.For, int] = {}
        self._with_bodies: set[int] = set()
        self._gates: dict[int, Gate] = {}  # by the id of an `if`'s body or `else` body
        self._order = 0
        # the enclosing `for` loops of the innermost function, outermost first, at each depth (a function
        # opens an empty run): every event's site reads the top as it is
        self._loops: list[tuple[cst.For, ...]] = []
        self._blocks: list[cst.CSTNode] = []
        self._statements: list[Optional[cst.SimpleStatementLine]] = []
        self._branches: list[Branch] = []
        self._tries: list[cst.Try] = []
        self._any_loops: list[tuple[cst.CSTNode, ...]] = []  # the same, `for` and `while` bodies
        self._lambdas = 0

    # -- queries ---------------------------------------------------------------------------------------
    def loop_site(self, loop: cst.For) -> Site:
        return self._loop_sites[loop]

    def loop_span(self, loop: cst.For) -> tuple[int, int]:  # also a `while` loop
        """The loop's first and last place in the `names` model's order: a binding or use with an
        order in this range (ends included) sits in the loop."""
        return self._loop_sites[loop].names_order, self._loop_ends[loop]

    def is_with_body(self, block: cst.CSTNode) -> bool:
        """A `with` body always runs once its statement is reached (unlike a branch or a loop body)."""
        return id(block) in self._with_bodies

    def gates(self, site: Site, scope: cst.CSTNode) -> list[Gate]:
        """The tests of the `if` statements between `scope` (a loop or a function) and `site`, outermost
        first, each with whether the site sits in its `else` branch."""
        inside, found = False, []
        for block in site.blocks:
            if inside and id(block) in self._gates:
                found.append(self._gates[id(block)])
            inside = inside or block is getattr(scope, "body", None)
        return found

    @staticmethod
    def innermost_loop(*sites: Site) -> Optional[cst.CSTNode]:
        """The innermost `for`/`while` loop of one function that encloses all the sites, or None."""
        if not sites or any(site.function is not sites[0].function for site in sites):
            return None
        shared = None
        for loops in zip(*(site.any_loops for site in sites)):
            if any(loop is not loops[0] for loop in loops):
                break
            shared = loops[0]
        return shared

    # -- recording -------------------------------------------------------------------------------------
    def _site(self) -> Site:
        self._order += 1
        return Site(
            self.enclosing.enclosing_functions(),
            self.enclosing.innermost_class(),
            self._order,
            self.names.position,
            self._loops[-1] if self._loops else (),
            tuple(self._branches),
            tuple(self._blocks),
            self._statements[-1] if self._statements else None,
            self._any_loops[-1] if self._any_loops else (),
            self._lambdas > 0,
        )

    # -- structure -------------------------------------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self._blocks.append(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._loops.append(())
        self._any_loops.append(())

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._any_loops.pop()
        self._loops.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._lambdas += 1

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self._lambdas -= 1

    def visit_For(self, node: cst.For) -> None:
        self._loop_sites[node] = self._site()
        self._loops.append((*self._loops[-1], node) if self._loops else (node,))

    def leave_For(self, original_node: cst.For) -> None:
        self._loop_ends[original_node] = self.names.position
        self._loops.pop()

    def visit_While(self, node: cst.While) -> None:
        self._loop_sites[node] = self._site()  # type: ignore[index]

    def leave_While(self, original_node: cst.While) -> None:
        self._loop_ends[original_node] = self.names.position  # type: ignore[index]

    # the body (not the iterable or the test) is what runs once per pass
    def visit_For_body(self, node: cst.For) -> None:
        self._any_loops.append((*self._any_loops[-1], node) if self._any_loops else (node,))

    def leave_For_body(self, node: cst.For) -> None:
        self._any_loops.pop()

    def visit_While_body(self, node: cst.While) -> None:
        self._any_loops.append((*self._any_loops[-1], node) if self._any_loops else (node,))

    def leave_While_body(self, node: cst.While) -> None:
        self._any_loops.pop()

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._blocks.append(node)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        self._blocks.pop()

    def visit_With(self, node: cst.With) -> None:
        self._with_bodies.add(id(node.body))

    def visit_If(self, node: cst.If) -> None:
        self._gates[id(node.body)] = (node.test, False)
        if type(node.orelse) is cst.Else:
            self._gates[id(node.orelse.body)] = (node.test, True)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self._statements.append(node)

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine) -> None:
        self._statements.pop()

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self._statements.append(None)

    def leave_SimpleStatementSuite(self, original_node: cst.SimpleStatementSuite) -> None:
        self._statements.pop()

    # libcst finds visitor methods by their __name__, so each branch gets its own pair
    def visit_If_body(self, node: cst.If) -> None:
        self._branches.append((id(node), "if.body"))

    def leave_If_body(self, node: cst.If) -> None:
        self._branches.pop()

    def visit_If_orelse(self, node: cst.If) -> None:
        self._branches.append((id(node), "if.else"))

    def leave_If_orelse(self, node: cst.If) -> None:
        self._branches.pop()

    def visit_Try(self, node: cst.Try) -> None:
        self._tries.append(node)

    def leave_Try(self, original_node: cst.Try) -> None:
        self._tries.pop()

    def visit_Try_body(self, node: cst.Try) -> None:
        self._branches.append((id(node), "try.body"))

    def leave_Try_body(self, node: cst.Try) -> None:
        self._branches.pop()

    def visit_Try_orelse(self, node: cst.Try) -> None:
        self._branches.append((id(node), "try.else"))

    def leave_Try_orelse(self, node: cst.Try) -> None:
        self._branches.pop()

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        owner = id(self._tries[-1]) if self._tries else 0
        self._branches.append((owner, f"try.except.{id(node)}"))

    def leave_ExceptHandler(self, original_node: cst.ExceptHandler) -> None:
        self._branches.pop()
