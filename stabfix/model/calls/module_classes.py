"""Which classes of a file are torch modules, and which functions run inside a module's `forward`.

A class is a module when one of its bases resolves, through the imports, to a class of `torch.nn`
(`nn.Module`, `nn.Sequential`, `torch.nn.modules.module.Module`), to a framework class that derives
from it (Lightning's `LightningModule`, Hugging Face's `PreTrainedModel`), to a module class of the same
file, or (with a project) to a class of another scanned file whose ancestors reach one of those. A base
the code does not show (`from base import Net`, outside the scan) is unknown, never proof.

`forward_reach(function)` says which module class's `forward` runs a function: the `forward` itself,
another method or a module-level function of the file that it calls (`self.encode(x)`, `drop(h)`), up to
`MAX_DEPTH` calls deep. Two rules ask it: SF205 (a tensor built then moved on every forward) and SF414
(functional dropout without the module's mode).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.source.names import Names
from stabfix.model.source.traversal import children

MAX_DEPTH = 3
# Framework classes that are `nn.Module`s, by qualified name (their own packages' spellings).
FRAMEWORK_MODULES = frozenset(
    {
        "lightning.LightningModule",
        "lightning.pytorch.LightningModule",
        "lightning.pytorch.core.LightningModule",
        "lightning.pytorch.core.module.LightningModule",
        "pytorch_lightning.LightningModule",
        "pytorch_lightning.core.LightningModule",
        "pytorch_lightning.core.lightning.LightningModule",
        "transformers.PreTrainedModel",
        "transformers.modeling_utils.PreTrainedModel",
    }
)


def is_torch_module_name(qualified: str) -> bool:
    """`torch.nn.Module`, `torch.nn.Sequential`, `torch.nn.modules.module.Module`, a framework module."""
    if qualified in FRAMEWORK_MODULES:
        return True
    return qualified.startswith("torch.nn.") and qualified.rsplit(".", 1)[-1][:1].isupper() \
        and not qualified.startswith(("torch.nn.functional.", "torch.nn.init.", "torch.nn.utils.", "torch.nn.parameter."))


class ModuleClasses:
    """Ask after the traversal: `is_module_class(class_def)`, `forward_reach(function_def)`."""

    def __init__(self, names: Names, project=None) -> None:
        self.names = names
        self.project = project
        self._classes: dict[int, bool] = {}
        self._reach: Optional[dict[int, cst.ClassDef]] = None

    def is_module_class(self, node: cst.ClassDef, depth: int = 0) -> bool:
        known = self._classes.get(id(node))
        if known is None:
            self._classes[id(node)] = False  # a class that derives from itself through a rebinding
            known = self._classes[id(node)] = any(self._base_is_module(arg.value, depth) for arg in node.bases)
        return known

    def _base_is_module(self, base: cst.BaseExpression, depth: int) -> bool:
        qualified = self.names.qualify(base)
        if qualified is not None:
            if is_torch_module_name(qualified):
                return True
            ancestors = getattr(self.project, "ancestors", None) if self.project is not None else None
            if ancestors is not None:
                try:
                    return any(is_torch_module_name(name) for name in ancestors(qualified))
                except Exception:  # another file the index cannot read is unknown, never proof
                    return False
            return False
        if isinstance(base, cst.Name) and depth < 8:
            bindings = self.names._module_bindings(base.value)
            classes = [b.node for b in bindings if b.kind == "class"]
            return bool(classes) and len(classes) == len(bindings) and all(
                self.is_module_class(node, depth + 1) for node in classes)
        return False

    def owner_of(self, function: cst.FunctionDef) -> Optional[cst.ClassDef]:
        """The class a function is a method of (None for a module-level or nested function)."""
        scope = self.names.scopes.get(function)
        parent = scope.parent if scope is not None else None
        return parent.node if parent is not None and parent.is_class else None  # type: ignore[return-value]

    def forward_reach(self, function: cst.FunctionDef) -> Optional[cst.ClassDef]:
        """The module class whose `forward` runs `function` (itself, or a function of the file it calls)."""
        if self._reach is None:
            self._reach = {}
            for scope_node in list(self.names.scopes):
                if isinstance(scope_node, cst.ClassDef) and self.is_module_class(scope_node):
                    for item in _methods(scope_node):
                        if item.name.value == "forward":
                            self._collect(item, scope_node, 0)
        return self._reach.get(id(function))

    def _collect(self, function: cst.FunctionDef, owner: cst.ClassDef, depth: int) -> None:
        if id(function) in self._reach or depth > MAX_DEPTH:  # type: ignore[operator]
            return
        self._reach[id(function)] = owner  # type: ignore[index]
        stack: list[cst.CSTNode] = [function.body]
        while stack:
            node = stack.pop()
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue  # a nested definition runs only when called
            if isinstance(node, cst.Call):
                callee = self.names.definition_of(node)
                if callee is not None:
                    self._collect(callee, owner, depth + 1)
            stack.extend(children(node))


def _methods(node: cst.ClassDef) -> list[cst.FunctionDef]:
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    return [item for item in body if isinstance(item, cst.FunctionDef)]
