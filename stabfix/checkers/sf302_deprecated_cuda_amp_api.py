"""SF302 deprecated-cuda-amp-api: `torch.cuda.amp.autocast(...)` / `torch.cuda.amp.GradScaler(...)`.

Every call, decorator or bare reference that names a deprecated `torch.cuda.amp` / `torch.cpu.amp`
entry point (`autocast`, `GradScaler`, `custom_fwd`, `custom_bwd`), through the file's imports and
aliases (`model.amp.legacy_uses`). Silent in a branch picked by the torch version or by what torch
provides (`if hasattr(torch, "amp"):` ... `else:`), the compatibility fallback of an older release.

Fix (safe): `torch.amp.autocast("cuda", ...)`, `torch.amp.GradScaler("cuda", ...)`,
`torch.amp.custom_fwd(device_type="cuda")`, every argument kept (the legacy autocast's positional
`enabled` becomes a keyword). A use through `torch` is rewritten in place; a use through
`from torch.cuda.amp import autocast` (or a module alias `amp`) is rewritten together with its import,
when every use of the imported names can be; otherwise the use is spelled `torch.amp.<name>` and the
old import stays (unused, harmless). Each fix requires the torch that has the names it writes
(`TORCH_AMP_SINCE`): a project that allows an older torch is not offered it (`stabfix.target`).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.fixes.amp import TORCH_AMP_SINCE, legacy_import_fix, modern_amp_call, torch_spelling
from stabfix.fixes.syntax import parsed_expression
from stabfix.model.domain.amp import LEGACY_APIS, LegacyUse
from stabfix.model.source.imports import dotted_name, imported_names
from stabfix.model.source.syntax import node_code

_SHOWN_ARGS = 40


class DeprecatedCudaAmpApi(Checker):
    code = "SF302"
    tokens = ("cuda.amp", "cpu.amp", "cuda import amp", "cpu import amp")
    needs = ("amp",)

    def leave_Module(self, original_node: cst.Module) -> None:
        amp = self.model.amp
        amp.scaling()  # resolves the traversal's records
        uses = [use for use in amp.legacy_uses if not amp.in_version_fallback(use)]
        import_fixes: dict[int, Optional[Fix]] = {}
        for use in uses:
            device, name = LEGACY_APIS[use.api]
            fix = self._fix(use, _callee(use), device, name, uses, import_fixes)
            replacement = fix.changes.get(use.node) if fix is not None else None
            self.report(use.node, self._message(use, device, name, replacement), fix)

    # -- fixes -----------------------------------------------------------------------------------------
    def _fix(self, use: LegacyUse, func, device: str, name: str, uses: list[LegacyUse], cache) -> Optional[Fix]:
        if use.how == "reference":
            return None
        description = f"use `torch.amp.{name}` with the device `\"{device}\"`"
        root = _root(func)
        if root is not None and self.model.names.qualify(root) == "torch" and dotted_name(func) is not None:
            new_func = parsed_expression(f"{root.value}.amp.{name}")
            rewritten = modern_amp_call(use.node, device, name, new_func)
            return Fix("safe", description, {use.node: rewritten}, requires_torch=TORCH_AMP_SINCE[name]) if rewritten is not None else None
        binding = self._import_binding(root)
        if binding is not None:
            key = id(binding.node)
            if key not in cache:
                cache[key] = self._import_fix(binding, uses, description)
            if cache[key] is not None:
                return cache[key]
        torch, needed = torch_spelling(self.model.imports)
        rewritten = modern_amp_call(use.node, device, name, parsed_expression(f"{torch}.amp.{name}"))
        return Fix("safe", description, {use.node: rewritten}, needed, TORCH_AMP_SINCE[name]) if rewritten is not None else None

    def _import_binding(self, root: Optional[cst.Name]):
        if root is None:
            return None
        bindings = self.model.names.bindings_of(root)
        return bindings[0] if len(bindings) == 1 and bindings[0].kind == "import" else None

    def _import_fix(self, binding, uses: list[LegacyUse], description: str) -> Optional[Fix]:
        """One fix for the import statement and every use of every name it binds, or None when some
        use is not a legacy call or decorator this rule rewrites."""
        amp, names = self.model.amp, self.model.names
        statement = amp.import_of(binding.node)
        if statement is None:
            return None
        aliases = [binding.node] if type(statement) is cst.Import else list(statement.names)  # type: ignore[arg-type]
        rewritable = {}
        for use in uses:
            root = _root(_callee(use))
            if root is not None and use.how != "reference":
                rewritable[id(root)] = use
        planned: list[tuple[cst.BaseExpression, str, str]] = []
        own = {id(node) for alias in aliases for node in _names_in(alias)}
        # only a use spelled like a name the aliases bind can resolve to the import: those, in recorded order
        bound = {local for local, _, alias in imported_names(statement) if any(alias is a for a in aliases)}
        candidates = [use for local in bound for use in names.uses_named(local)]
        if len(bound) > 1:
            candidates.sort(key=lambda use: names.uses[use].order)
        for name in candidates:
            if id(name) in own:
                continue  # `autocast` in `from torch.cuda.amp import autocast` itself
            reaching = names.bindings_of(name)
            if not any(b.kind == "import" and b.node in aliases for b in reaching):
                continue
            use = rewritable.get(id(name))
            if use is None or len(reaching) != 1:
                return None  # `ctx = autocast`, a second binding of the name: left as it is
            planned.append((use.node, *LEGACY_APIS[use.api]))
        if not planned:
            return None
        return legacy_import_fix(statement, binding.node, planned, description + " (and rewrite its import)")

    # -- messages --------------------------------------------------------------------------------------
    def _message(self, use: LegacyUse, device: str, name: str, replacement) -> str:
        spelled = _code(use.node)
        if type(replacement) is cst.Call and len(_code(replacement)) < 60:
            return (
                f"`{spelled}` uses the deprecated `torch.{device}.amp` API (a FutureWarning since torch 2.4); "
                f"write `{_code(replacement)}`" + (" (imported from `torch.amp`)" if _code(replacement.func) == _code(_callee(use)) else "")
            )
        if name == "autocast":
            modern = f'torch.amp.autocast("{device}", ...)'
        elif name == "GradScaler":
            modern = f'torch.amp.GradScaler("{device}", ...)'
        else:
            modern = f'torch.amp.{name}(device_type="{device}")'
        return (
            f"`{spelled}` uses the deprecated `torch.{device}.amp` API (a FutureWarning since torch 2.4, "
            f"slated for removal); use `{modern}` with the same arguments"
        )


def _callee(use: LegacyUse) -> cst.BaseExpression:
    return use.node.func if type(use.node) is cst.Call else use.node  # type: ignore[return-value]


def _names_in(node: cst.CSTNode):
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Name:
            yield current
        stack.extend(current.children)


def _root(func: cst.BaseExpression) -> Optional[cst.Name]:
    while type(func) is cst.Attribute:
        func = func.value
    return func if type(func) is cst.Name else None


def _code(node: cst.CSTNode) -> str:
    text = " ".join(node_code(node).split())
    return text if len(text) <= 60 else text[:57] + "..."
