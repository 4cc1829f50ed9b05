"""Which operands hold the very same tensor values: the value key of an operand (`x_src`, `batch["x"]`)
after stripping value-keeping wrappers (`.detach()`, `.clone()`, `.to(dev)`, `.data`) and following
aliases that provably hold at the use (`ValueAliases.value_key`), and whether an operand may hold
another tensor later (`changes_between`, `rebound_between`). `ValueAliases` is the query half of the
`tensors` part: `TensorFacts` (in `tensor_identity`) records the facts in the traversal and inherits it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Protocol

import libcst as cst

from stabfix.model.calls import torch_ops
from stabfix.model.calls.loss_operands import root_name, root_name_node
from stabfix.model.calls.losses import LossIndex
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import Binding, Names
from stabfix.model.source.node_fields import children


class Qualifier(Protocol):
    def qualify(self, expr: cst.BaseExpression) -> Optional[str]: ...

# Methods that return the same values (a view, a copy, a cast, a move): `x.detach().clone()` is `x`. The
# torch-operation table says which keep the values, and which of those share the storage.
VIEW_METHODS = frozenset(name for name, op in torch_ops.METHODS.items() if op.same_values and op.shares_storage)
COPY_METHODS = frozenset(name for name, op in torch_ops.METHODS.items() if op.same_values and not op.shares_storage)
COPY_FUNCTIONS = frozenset({"torch.clone", "copy.deepcopy", "copy.copy", "torch.Tensor.clone"})
# `x.data` is the same storage.
VIEW_ATTRIBUTES = frozenset(name for name, op in torch_ops.ATTRIBUTES.items() if op.same_values and op.shares_storage)

# --- value keys ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class AliasStep:
    """One followed binding: `alias = <source>` (kind `alias`, `view` or `copy`)."""

    alias: str
    source: str  # code of the source expression after the stripped wrappers
    kind: str
    binding: "Binding"


@dataclass(frozen=True)
class ValueKey:
    """What an operand evaluates to: `key` is the root value (`x_src`, `batch["x"]`), `steps` the aliases used."""

    key: str
    root_name: str  # the leading Name of the root value
    root: cst.Name  # that Name, as written where the alias chain ends
    steps: tuple[AliasStep, ...]
    copied: bool  # a wrapper like .clone()/.to() was stripped directly on the operand

    @property
    def is_bare_name(self) -> bool:
        return self.key == self.root_name


def strip_value_wrappers(expr: cst.BaseExpression, imports: Qualifier) -> tuple[cst.BaseExpression, str]:
    """`x.detach().clone().to(dev)` -> (`x`, "copy"); `x.data` -> (`x`, "view"); `x` -> (`x`, "alias")."""
    kind = "alias"
    while True:
        node_type = type(expr)  # exact types (libcst has no subclass of them): every operand of every loss
        if node_type is cst.Call and type(expr.func) is cst.Attribute:  # type: ignore[attr-defined]
            method = expr.func.attr.value  # type: ignore[attr-defined]
            op = torch_ops.method(method, expr)
            if op is not None and op.same_values:
                if method == "type" and not expr.args:
                    return expr, kind  # `x.type()` is the type string, not a tensor
                if method in COPY_METHODS:
                    kind = "copy"
                elif kind == "alias":
                    kind = "view"
                expr = expr.func.value
                continue
        if node_type is cst.Call and len(expr.args) == 1 and expr.args[0].keyword is None:  # type: ignore[attr-defined]
            qualified = imports.qualify(expr.func)
            if qualified in COPY_FUNCTIONS:
                kind = "copy"
                expr = expr.args[0].value
                continue
        if node_type is cst.Attribute and expr.attr.value in VIEW_ATTRIBUTES:  # type: ignore[attr-defined]
            kind = "view" if kind == "alias" else kind
            expr = expr.value
            continue
        return expr, kind


def _constant_code(expr: cst.BaseExpression) -> str | None:
    """Code of an index that cannot change between two evaluations: literals, names, attribute chains."""
    if type(expr) in (cst.Integer, cst.SimpleString, cst.Float):
        return expr.value
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus:
        inner = _constant_code(expr.expression)
        return f"-{inner}" if inner is not None else None
    name = dotted_name(expr)
    if name is not None:
        return name
    return None


def _slice_code(node: cst.Subscript) -> str | None:
    parts: list[str] = []
    for element in node.slice:
        index = element.slice
        if type(index) is cst.Index:
            code = _constant_code(index.value)
            if code is None:
                return None
            parts.append(code)
        elif type(index) is cst.Slice:
            bounds = []
            for bound in (index.lower, index.upper, index.step):
                if bound is None:
                    bounds.append("")
                else:
                    code = _constant_code(bound)
                    if code is None:
                        return None
                    bounds.append(code)
            parts.append(":".join(bounds).rstrip(":") or ":")
        else:
            return None
    return ", ".join(parts)


def literal_key(expr: cst.BaseExpression) -> str | None:
    """A cheap spelling key (no alias following): `x`, `self.x`, `batch["x"]`, `x[:, 0]`; None otherwise."""
    name = dotted_name(expr)
    if name is not None:
        return name
    if type(expr) is cst.Subscript:  # exact type (libcst has no subclass of it)
        base = literal_key(expr.value)  # type: ignore[attr-defined]
        index = _slice_code(expr)  # type: ignore[arg-type]
        if base is not None and index is not None:
            return f"{base}[{index}]"
    return None


def spells_whole_value(spelled: str | None) -> bool:
    """A spelling of a whole value (`x_src`, `self.x_ref`, `batch["src"]`), not a slice of a tensor (`out[:, 1:]`)."""
    return spelled is not None and ("[" not in spelled or spelled.endswith(('"]', "']")))


@dataclass(eq=False)
class ScopeTensors:
    """What one scope (an outermost function with its closures, or the module's top level) changes in
    place and which of its expressions hold a loss."""

    mutations: list[cst.Name] = field(default_factory=list)  # root names of in-place changes, as written
    sinks: list[cst.BaseExpression] = field(default_factory=list)  # expressions whose value is a loss


class ValueAliases:
    """Questions over what `TensorFacts` recorded (ask them after the traversal)."""

    # recorded by `TensorFacts` (see there)
    losses: LossIndex
    names: Names
    scopes: dict[cst.CSTNode, ScopeTensors]
    branched: set[cst.CSTNode]
    stores: list[tuple[cst.Subscript, cst.Assign]]

    def value_key(self, expr: cst.BaseExpression) -> ValueKey | None:
        """The root value an operand holds, following aliases and copies that provably hold at the use:
        names, `self.<attr>` set earlier in the same method, `batch["k"]` stored earlier in the scope."""
        expr, first_kind = strip_value_wrappers(expr, self.losses)
        steps: list[AliasStep] = []
        for _ in range(10):
            binding = self._holding_binding(expr)
            if binding is None:
                break
            value = binding.bound_value
            source = alias_source(value, self.losses)  # type: ignore[arg-type]
            spelled = literal_key(expr)
            if source is None or root_name(source) == spelled or literal_key(source) == spelled:
                break
            kind = strip_value_wrappers(value, self.losses)[1]  # type: ignore[arg-type]
            if self._source_changed(source, kind, binding):
                break
            root = root_name_node(expr)
            if kind == "copy" and (root is None or self._mutated_after(root, binding.order)):
                break
            steps.append(AliasStep(spelled or "", literal_key(source) or "", kind, binding))
            expr = source
        key = literal_key(expr)
        root = root_name_node(expr)
        if key is None or root is None:
            return None
        return ValueKey(key, root.value, root, tuple(steps), first_kind == "copy")

    def _holding_binding(self, expr: cst.BaseExpression) -> Binding | None:
        kind = type(expr)  # exact types (libcst has no subclass of them)
        if kind is cst.Name:
            return self.alias_binding(expr)  # type: ignore[arg-type]
        if kind is cst.Attribute:
            return self._attribute_binding(expr)  # type: ignore[arg-type]
        if kind is cst.Subscript:
            return self._store_binding(expr)  # type: ignore[arg-type]
        return None

    def _attribute_binding(self, expr: cst.Attribute) -> Binding | None:
        """`self.x_ref` read in the method that set it: the class binds the attribute once, earlier in
        this method and outside any branch or loop, so no other method or iteration can have replaced it."""
        owner = expr.value
        use = self.names.uses.get(owner) if type(owner) is cst.Name else None
        if use is None or type(use.scope.node) is not cst.FunctionDef or use.scope.parent is None:
            return None
        params = use.scope.node.params.params
        if not use.scope.parent.is_class or not params or params[0].name.value != owner.value:  # type: ignore[union-attr]
            return None
        if use.scope.resolving(owner.value) is not use.scope or len(self.names.bindings_of(owner)) != 1:
            return None
        bindings = self.names.attribute_bindings(use.scope.parent.node, expr.attr.value)  # type: ignore[arg-type]
        if len(bindings) != 1:
            return None
        binding = bindings[0]
        if binding.scope is not use.scope or binding.order > use.order or binding.conditional or binding.kind != "assign":
            return None
        return binding

    def _store_binding(self, expr: cst.Subscript) -> Binding | None:
        """`batch["style_ref"]` read after the scope's one store under that index (`batch["style_ref"] =
        batch["src"]`), made outside any branch, with `batch` not re-bound in between."""
        key, root = literal_key(expr), root_name_node(expr)
        use = self.names.uses.get(root) if root is not None else None
        if key is None or use is None:
            return None
        scope = use.scope.resolving(root.value)  # type: ignore[union-attr]
        found = []
        for target, node in self.stores:
            target_root = root_name_node(target)
            store_use = self.names.uses.get(target_root) if target_root is not None else None
            if store_use is not None and literal_key(target) == key and store_use.scope.resolving(target_root.value) is scope:
                found.append((store_use, node))
        if len(found) != 1:
            return None
        store_use, node = found[0]
        if store_use.scope is not use.scope or store_use.order > use.order or node in self.branched:
            return None
        if self.rebound_between(root, store_use.order, use.order):  # type: ignore[arg-type]
            return None
        return Binding(key, "assign", node, store_use.scope, store_use.order, node.value)

    def alias_binding(self, name: cst.Name) -> Binding | None:
        """The one binding that holds at a use, when it binds a visible value outside any branch."""
        reaching: list[Binding] = []
        for candidate in self.names.reaching(name):
            if not _within(candidate.bound_value, name):
                reaching.append(candidate)
                if len(reaching) > 1:
                    return None  # a script's name reaches every earlier cell's binding: two settle it
        if len(reaching) != 1:
            return None
        binding = reaching[0]
        if binding.bound_value is None or binding.node in self.branched:
            return None
        return binding

    def rebound_between(self, name: cst.Name, start: int, end: int) -> bool:
        return any(start < b.order < end for b in self.names.bindings_of(name))

    def changes_between(self, expr: cst.BaseExpression, value: ValueKey, start: int, end: int) -> bool:
        """An operand may hold another tensor at `end` than at `start`: its name or its root is re-bound."""
        names = [value.root]
        spelled = strip_value_wrappers(expr, self.losses)[0]
        if type(spelled) is cst.Name:
            names.append(spelled)  # the alias the operand reads, if any
        return any(self.rebound_between(name, start, end) for name in names)

    def conditioned_beyond(self, name: cst.Name, key: str) -> bool:
        """The value a name holds is computed by a call that takes the tensor `key` together with some
        other varying input (`x1 = model(x_src, style_id)`, `integrate(x_t, t, cond)`, `net(img_a,
        img_b)`): a conditional mapping, not a reconstruction of `key` alone (`recon = ae(images)`)."""
        for binding in self.names.reaching(name):
            call = binding.bound_value
            if type(call) is not cst.Call:
                continue
            varying = [arg for arg in call.args if not _is_constant_argument(arg.value)]
            takes_key = any(
                (found := self.value_key(arg.value)) is not None and found.key == key for arg in varying
            )
            if takes_key and len(varying) >= 2:
                return True
        return False

    def _source_changed(self, source: cst.BaseExpression, kind: str, binding: Binding) -> bool:
        """Whether the source may hold other values at a later use than at the alias binding.

        Conservative about loops: any re-binding or in-place change after the alias counts."""
        root = root_name_node(source)
        if root is None:
            return True
        if any(b.order > binding.order for b in self.names.bindings_of(root)):
            return True
        if type(source) is not cst.Name or kind == "copy":
            # a copy no longer follows in-place changes of its source; `batch["x"] = ...` replaces the value
            return self._mutated_after(root, binding.order)
        return False

    def _mutated_after(self, name: cst.Name, start: int) -> bool:
        use = self.names.uses.get(name)
        if use is None:
            return True
        scope = use.scope.resolving(name.value)
        for scope_facts in self.scopes.values():
            for mutated in scope_facts.mutations:
                other = self.names.uses.get(mutated)
                if (
                    other is not None
                    and mutated.value == name.value
                    and other.order > start
                    and other.scope.resolving(mutated.value) is scope
                ):
                    return True
        return False


def _within(value: cst.CSTNode | None, node: cst.CSTNode) -> bool:
    """`node` is part of `value` (`h = cell(h)`: the `h` read is not bound by its own statement)."""
    if value is None:
        return False
    if value is node:
        return True
    return any(_within(child, node) for child in children(value))


def alias_source(value: cst.BaseExpression, imports: Qualifier) -> cst.BaseExpression | None:
    """The expression `name = value` makes `name` hold the values of: `x` for `x`, `x.clone()`,
    `x.detach().to(dev)`, `batch["x"]`; None for anything computed (calls, arithmetic, `self.*`)."""
    source, _ = strip_value_wrappers(value, imports)
    if literal_key(source) is None or root_name(source) in (None, "self"):
        return None
    return source


def _is_constant_argument(expr: cst.BaseExpression) -> bool:
    """A literal or a flag (`True`, `None`, `4`, `"bicubic"`): an option, not an input."""
    if type(expr) is cst.Name:
        return expr.value in ("True", "False", "None")
    return type(expr) in (cst.Integer, cst.Float, cst.SimpleString, cst.UnaryOperation, cst.Imaginary)
