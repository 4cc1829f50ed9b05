"""The parent of every node and every call of the file, in source order, filled in by the one traversal.

Several parts ask for a node's parent or for all calls only after the traversal (where a value goes, rank
conditions around a collective, what later code does with a value); each used to walk the whole file again
to build its own map. The traversal records the parent of each node it visits as it goes down (whitespace,
comments and punctuation are not visited, so they have no parent here; no question walks up from them),
and this part lists the calls as they are entered, so the list is in source order.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.source.node_fields import children
from stabfix.model.source.traversal import walk


class TreeIndex(cst.BatchableCSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.parents: dict[int, cst.CSTNode] = {}  # id(node) -> its parent; filled by `traversal.walk`
        self.calls: list[cst.Call] = []
        self.module: Optional[cst.Module] = None

    @classmethod
    def of(cls, module: cst.Module) -> "TreeIndex":
        """The index of a tree no model traversal has indexed (a part built on its own, in tests)."""
        index = cls()
        walk(module, [index], parents=index.parents)
        return index

    def visit_Module(self, node: cst.Module) -> None:
        self.module = node

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)

    def parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        if not self.parents and self.module is not None:  # a traversal that did not record them (libcst's own)
            stack: list[cst.CSTNode] = [self.module]
            while stack:
                current = stack.pop()
                for child in children(current):
                    self.parents[id(child)] = current
                    stack.append(child)
        return self.parents.get(id(node))
