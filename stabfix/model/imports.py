"""Resolve what a name or attribute chain refers to through the file's imports.

`import torch as t; t.cuda.empty_cache()` and `from torch.cuda import empty_cache as ec; ec()`
both resolve to `torch.cuda.empty_cache`. This is far cheaper than libcst's scope-based
QualifiedNameProvider and is all the rules need: they ask about library call targets.
"""

from __future__ import annotations

import libcst as cst


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted_name(node.value)
        return f"{base}.{node.attr.value}" if base is not None else None
    return None


class ImportTracker(cst.BatchableCSTVisitor):
    """Records import aliases as the traversal meets them; runs first in every batch."""

    def __init__(self) -> None:
        super().__init__()
        self.aliases: dict[str, str] = {}

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = dotted_name(alias.name)
            if full is None:
                continue
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.aliases[alias.asname.name.value] = full
            else:
                top = full.split(".")[0]
                self.aliases[top] = top

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            return
        module = dotted_name(node.module) if node.module is not None else ""
        prefix = "." * len(node.relative) + (module or "")
        for alias in node.names:
            name = dotted_name(alias.name)
            if name is None:
                continue
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.aliases[local] = f"{prefix}.{name}" if prefix else name

    def qualify(self, node: cst.BaseExpression) -> str | None:
        """The fully qualified name of an imported name/attribute chain, or None if not imported."""
        if isinstance(node, cst.Name):
            return self.aliases.get(node.value)
        if isinstance(node, cst.Attribute):
            base = self.qualify(node.value)
            return f"{base}.{node.attr.value}" if base is not None else None
        return None
