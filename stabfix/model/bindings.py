"""Simple intra-function data flow: which names are bound to what, and aliases between names."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst


@dataclass
class Binding:
    name: str
    value: cst.BaseExpression
    statement: cst.CSTNode  # the Assign/AnnAssign node


@dataclass
class FunctionBindings:
    """All `name = value` bindings in a function body (nested closures included, in source order)."""

    by_name: dict[str, list[Binding]] = field(default_factory=dict)

    def add(self, name: str, value: cst.BaseExpression, statement: cst.CSTNode) -> None:
        self.by_name.setdefault(name, []).append(Binding(name, value, statement))

    def alias_root(self, name: str, limit: int = 10) -> tuple[str, list[Binding]]:
        """Follow `a = b`, `b = c` chains to the name a value came from, with the alias bindings used.

        Only names bound exactly once are followed: a re-bound name may hold anything.
        """
        chain: list[Binding] = []
        current = name
        for _ in range(limit):
            bindings = self.by_name.get(current, [])
            if len(bindings) != 1 or not isinstance(bindings[0].value, cst.Name):
                break
            chain.append(bindings[0])
            current = bindings[0].value.value
        return current, chain

    def holders(self, names: set[str]) -> set[str]:
        """`names` and every name that is at some point bound to one of them (`h = x` before `h = block(h)`)."""
        holders = set(names)
        changed = True
        while changed:
            changed = False
            for name, bound in self.by_name.items():
                if name not in holders and any(isinstance(b.value, cst.Name) and b.value.value in holders for b in bound):
                    holders.add(name)
                    changed = True
        return holders


class BindingCollector(cst.CSTVisitor):
    """Collects simple name bindings of a function body. Used lazily, only for functions of interest."""

    def __init__(self) -> None:
        super().__init__()
        self.bindings = FunctionBindings()

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self.bindings.add(target.target.value, node.value, node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None and isinstance(node.target, cst.Name):
            self.bindings.add(node.target.value, node.value, node)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        if isinstance(node.target, cst.Name):
            self.bindings.add(node.target.value, node.value, node)


def collect_bindings(scope: cst.FunctionDef | cst.Module) -> FunctionBindings:
    collector = BindingCollector()
    scope.visit(collector)
    return collector.bindings
