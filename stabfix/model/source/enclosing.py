"""The classes and functions around the node being visited, kept once for every part and checker.

A definition counts from its `visit_FunctionDef`/`visit_ClassDef` to its `leave_*`: its decorators,
parameters (defaults and annotations), return annotation and bases belong to it, not to the code
around it. `StepIndex`'s frames start at the body instead (what runs when the function is called),
so a decorator such as `@torch.no_grad()` sits in a different function there; the parts that record
where a call, assignment or return sits ask this tracker. Lambdas are not functions here.

The model puts it first in the traversal: it enters a definition before any other part or checker
sees the node and leaves it after them, so the answers hold in every other `visit_*`/`leave_*`.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst


class EnclosingDefinitions(cst.BatchableCSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self._functions: list[cst.FunctionDef] = []
        self._classes: list[cst.ClassDef] = []

    def innermost_function(self) -> Optional[cst.FunctionDef]:
        return self._functions[-1] if self._functions else None

    def innermost_class(self) -> Optional[cst.ClassDef]:
        """The innermost class, even across functions: a method's nested function is still in it."""
        return self._classes[-1] if self._classes else None

    def enclosing_functions(self) -> tuple[cst.FunctionDef, ...]:
        """Every enclosing function, outermost first, across classes."""
        return tuple(self._functions)

    def enclosing_classes(self) -> tuple[cst.ClassDef, ...]:
        """Every enclosing class, outermost first, across functions."""
        return tuple(self._classes)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._functions.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._functions.pop()
