"""Resolve what a name or attribute chain refers to through the file's imports.

`import torch as t; t.cuda.empty_cache()` and `from torch.cuda import empty_cache as ec; ec()`
both resolve to `torch.cuda.empty_cache`. This is far cheaper than libcst's scope-based
QualifiedNameProvider and is all the rules need: they ask about library call targets.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    # by type identity (neither has subclasses): asked of most expressions of a file, and `isinstance` with
    # libcst's node classes runs a Python-level check whenever the answer is no
    kind = type(node)
    if kind is cst.Name:
        return node.value
    if kind is cst.Attribute:
        value = node.value
        # a chain's last link read here, not in a call of its own: most chains are `x.y`
        base = value.value if type(value) is cst.Name else dotted_name(value)
        return f"{base}.{node.attr.value}" if base is not None else None
    return None


def imported_names(node: cst.Import | cst.ImportFrom) -> Iterator[tuple[str, str, cst.ImportAlias]]:
    """(local name, what it stands for, alias node) for every name an import statement binds:
    `import torch.nn as nn` -> nn = torch.nn; `import torch.nn` -> torch = torch;
    `from ..utils import empty_cache as ec` -> ec = ..utils.empty_cache. Star imports bind nothing we know."""
    if type(node) is cst.Import:
        for alias in node.names:
            full = dotted_name(alias.name)
            if full is None:
                continue
            if alias.asname is not None and type(alias.asname.name) is cst.Name:
                yield alias.asname.name.value, full, alias
            else:
                top = full.split(".")[0]
                yield top, top, alias
        return
    if type(node.names) is cst.ImportStar:
        return
    module = dotted_name(node.module) if node.module is not None else ""
    prefix = "." * len(node.relative) + (module or "")
    joint = "." if module else ""  # `from . import comm`: `.comm`, not `..comm` (the parent package's)
    for alias in node.names:
        name = dotted_name(alias.name)
        if name is None:
            continue
        local = name
        if alias.asname is not None and type(alias.asname.name) is cst.Name:
            local = alias.asname.name.value
        yield local, f"{prefix}{joint}{name}" if prefix else name, alias


class ImportTracker(cst.BatchableCSTVisitor):
    """Records import aliases as the traversal meets them; runs first in every batch."""

    def __init__(self) -> None:
        super().__init__()
        self.aliases: dict[str, str] = {}

    def visit_Import(self, node: cst.Import) -> None:
        for local, qualified, _ in imported_names(node):
            self.aliases[local] = qualified

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        for local, qualified, _ in imported_names(node):
            self.aliases[local] = qualified

    def qualify(self, node: cst.BaseExpression) -> str | None:
        """The fully qualified name of an imported name/attribute chain, or None if not imported."""
        kind = type(node)  # by identity, as `dotted_name`
        if kind is cst.Name:
            return self.aliases.get(node.value)
        if kind is cst.Attribute:
            value = node.value  # its last link read here, as in `dotted_name`
            base = self.aliases.get(value.value) if type(value) is cst.Name else self.qualify(value)
            return f"{base}.{node.attr.value}" if base is not None else None
        return None
