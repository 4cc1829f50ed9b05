"""Moving tensors between the accelerator and host memory, as libcst rewrites.

- `cpu_copy(v)`: what to store instead of an accelerator tensor, `v.detach().to("cpu", copy=True)`;
- `move_back(e, device)`: a read of such a copy, moved back where it is used,
  `e.to(device, non_blocking=True)`;
- `with_map_location(call)`: `torch.load(p)` -> `torch.load(p, map_location="cpu")`, so what was
  saved from an accelerator is loaded into host memory.

The rewrites keep the user's own nodes (comments, line breaks, parentheses) and only add around them.
"""

from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from stabfix.fixes.syntax import parsed_expression
from stabfix.model.calls.devices import DeviceKinds, is_device_name, is_host_name, method_chain, to_call_target
from stabfix.model.domain.container_uses import METADATA_READS, ContainerKey, ContainerUse, LocalBinding, mutates
from stabfix.model.domain.containers import Containers
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import Binding
from stabfix.model.source.scopes import instance_receiver, method_receiver
from stabfix.model.source.syntax import code_of, preorder

Qualify = Callable[[cst.BaseExpression], Optional[str]]

_SNAPSHOT_METHODS = frozenset({"detach", "detach_", "clone"})


def cpu_copy(value: cst.BaseExpression, qualify: Qualify) -> cst.BaseExpression:
    """`x.clone().detach()` -> `x.detach().to("cpu", copy=True)`; keeps any other part of the chain.

    A final move to the accelerator (`.to(device)`, `.cuda()`) is replaced by the move to the CPU (a
    cast it does is kept); parentheses around the whole value stay around the whole new value.
    """
    outer_lpar, outer_rpar = value.lpar, value.rpar
    base = value.with_changes(lpar=[], rpar=[])
    while (
        type(base) is cst.Call
        and type(base.func) is cst.Attribute
        and base.func.attr.value in _SNAPSHOT_METHODS
        and not base.args
        and qualify(base.func) is None
    ):
        base = base.func.value
    base, kept = _without_device_move(base, qualify)
    _, steps = method_chain(base, qualify)
    if type(base) not in (cst.Name, cst.Attribute, cst.Call, cst.Subscript) and not base.lpar:
        base = base.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    if not any(name in ("detach", "detach_") for name, _ in steps):
        base = method_call(base, "detach", [])
    moved = method_call(base, "to", [cst.Arg(cst.SimpleString('"cpu"')), *kept, keyword("copy", cst.Name("True"))])
    return moved.with_changes(lpar=outer_lpar, rpar=outer_rpar)


def _without_device_move(value: cst.BaseExpression, qualify: Qualify) -> tuple[cst.BaseExpression, list[cst.Arg]]:
    """`emb.to(device, dtype=torch.float16)` -> (`emb`, [`dtype=torch.float16`])."""
    if not (type(value) is cst.Call and type(value.func) is cst.Attribute and not value.lpar):
        return value, []
    method = value.func.attr.value
    only_non_blocking = all(arg.keyword is not None and arg.keyword.value == "non_blocking" for arg in value.args)
    if method == "cuda" and only_non_blocking:
        return value.func.value, []  # `.cuda()`: a move to the current accelerator, nothing else
    if method != "to" or any(arg.star for arg in value.args):
        return value, []
    target, device = to_call_target(value, qualify)
    if target != "device":
        return value, []
    kept = [
        keyword(arg.keyword.value, arg.value) if arg.keyword is not None else cst.Arg(arg.value)
        for arg in value.args
        if arg.value is not device and (arg.keyword is None or arg.keyword.value not in ("copy", "non_blocking"))
    ]
    return value.func.value, kept


def move_back(expression: cst.BaseExpression, device: str) -> cst.BaseExpression:
    """`c[k]` -> `c[k].to(device, non_blocking=True)`; `v.clone()` -> `v.to(device, non_blocking=True, copy=True)`."""
    arguments = [cst.Arg(parsed_expression(device)), keyword("non_blocking", cst.Name("True"))]
    if (
        type(expression) is cst.Call
        and type(expression.func) is cst.Attribute
        and expression.func.attr.value == "clone"
    ):
        moved = method_call(expression.func.value, "to", [*arguments, keyword("copy", cst.Name("True"))])
        return moved.with_changes(lpar=expression.lpar, rpar=expression.rpar)
    return method_call(expression, "to", arguments)


def has_map_location(call: cst.Call) -> bool:
    """Whether a `torch.load` call already says where to load (a second positional, `map_location=`, `**kw`)."""
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    return (
        len(positional) > 1
        or any(arg.keyword is not None and arg.keyword.value == "map_location" for arg in call.args)
        or any(arg.star == "**" for arg in call.args)
    )


def with_map_location(call: cst.Call) -> cst.Call:
    """`torch.load(p)` -> `torch.load(p, map_location="cpu")`, keeping a trailing comma where there was one."""
    argument = keyword("map_location", cst.SimpleString('"cpu"'))
    args = list(call.args)
    if args and type(args[-1].comma) is cst.Comma:
        return call.with_changes(args=[*args, argument.with_changes(comma=args[-1].comma)])
    return call.with_changes(args=[*args, argument])


def method_call(receiver: cst.BaseExpression, method: str, args: list[cst.Arg]) -> cst.Call:
    return cst.Call(func=cst.Attribute(value=receiver, attr=cst.Name(method)), args=args)


def keyword(name: str, value: cst.BaseExpression) -> cst.Arg:
    """`name=value`, spelled without spaces around `=`."""
    no_space = cst.SimpleWhitespace("")
    return cst.Arg(value=value, keyword=cst.Name(name), equal=cst.AssignEqual(whitespace_before=no_space, whitespace_after=no_space))

# ----------------------------------------------------------------------------------------------
# moving the reads of a container back to the device
# ----------------------------------------------------------------------------------------------
# Classes whose instances already have a `.device` property.
_DEVICE_BASES = ("LightningModule", "PreTrainedModel", "ModelMixin", "DiffusionPipeline")


class ReadMoves:
    """Where the entries of a container are read, the rewrite moving each back to the device it is used on.

    When a container is changed to hold CPU copies, every read that hands an entry out
    (`c[k]`, `c[k].clone()`, `v = c.get(k)` behind a None guard) must move it back, so the plan is
    only made when every use of the container is understood and each read site has a device
    expression at hand (a `device` parameter or local, `self.device`, a module-level device);
    otherwise `unfixable` says why.
    """

    def __init__(
        self,
        containers: Containers,
        container: ContainerKey,
        uses: list[ContainerUse],
        kind: str,
        other_store: Callable[[], Optional[cst.BaseExpression]],
    ) -> None:
        self.containers = containers
        self.container = container
        self.uses = uses
        self.changes: dict[cst.CSTNode, cst.CSTNode] = {}
        self.unfixable: Optional[str] = None
        self._other_store = other_store  # a stored value that may not be a tensor (the rule knows values)
        self._device_kinds: Optional[DeviceKinds] = None
        self._plan(kind)

    def _plan(self, kind: str) -> None:
        container = self.container
        if container.on_self and container.name in self.containers.foreign_attributes:
            self.unfixable = f"`{container.name}` is also used outside the class"
            return
        for use in self.uses:
            if use.kind == "unfixable":
                statement = code_of(self._statement_of(use), 50)
                self.unfixable = f"`{container.display()}` is used in a way the fix cannot follow (`{statement}`)"
                return
            if use.kind == "nested-store":
                self.unfixable = f"`{container.display()}` holds lists of tensors"
                return
            if use.kind == "iterate" and kind == "list":
                self.unfixable = f"`{container.display()}` is iterated over"
                return
        other = self._other_store()
        if other is not None:
            self.unfixable = f"`{container.display()}` also receives `{code_of(other, 40)}`, which may not be a tensor"
            return
        if not any(use.kind in ("read", "get", "moved", "meta") for use in self.uses):
            # nothing here reads the entries back: whoever does (another module) would get CPU tensors
            self.unfixable = (
                f"`{container.display()}` is never read here, so its readers cannot be moved back to the device"
            )
            return
        for use in self.uses:
            if use.kind == "read":
                if not self._plan_read(use, use.rewrite):  # type: ignore[arg-type]
                    return
            elif use.kind == "get":
                if not self._plan_get(use):
                    return

    def _statement_of(self, use: ContainerUse) -> cst.CSTNode:
        for ancestor in reversed(use.parents):
            if isinstance(ancestor, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                if type(ancestor) is cst.SimpleStatementLine and ancestor.body:
                    return ancestor.body[0]
                return use.node
        return use.node

    def _plan_read(
        self, use: ContainerUse, expression: cst.BaseExpression
    ) -> bool:
        return self._move_back_at(use, expression, use.node)

    def _move_back_at(self, use: ContainerUse, expression: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """Plan `expression.to(<device at hand>, non_blocking=True)`, or say why no device is at hand."""
        device = self._device_expression(self.container, use.functions, at)
        if device is None:
            where = f"`{use.functions[-1].name.value}()`" if use.functions else "module level"
            self.unfixable = f"no device is at hand where `{self.container.display()}` is read in {where}"
            return False
        self.changes[expression] = move_back(expression, device)
        return True

    def _plan_get(self, use: ContainerUse) -> bool:
        """`v = c.get(key)` with a None guard: move `v` back wherever it is handed out."""
        call = use.rewrite
        assert type(call) is cst.Call
        reason = f"`{code_of(call, 40)}` may return None where it is used"
        positional = [arg for arg in call.args if arg.keyword is None]
        if len(call.args) > 1 and not (
            len(positional) == 2 and type(positional[1].value) is cst.Name and positional[1].value.value == "None"
        ):
            self.unfixable = reason
            return False
        position = next((i for i, ancestor in enumerate(use.parents) if ancestor is call), 0)
        parent = use.parents[position - 1] if position > 0 else None
        if type(parent) is cst.Attribute and parent.attr.value in ("to", "cuda"):
            return True  # already moved where it is read
        if type(parent) in (cst.Comparison, cst.ComparisonTarget):
            return True  # `c.get(k) is None`
        if not (
            type(parent) is cst.Assign
            and parent.value is call
            and len(parent.targets) == 1
            and type(parent.targets[0].target) is cst.Name
        ):
            self.unfixable = reason
            return False
        assign = parent
        name = assign.targets[0].target.value  # type: ignore[attr-defined]
        function = use.functions[-1] if use.functions else self.containers.module
        assert function is not None
        finder = _NameUses(name, assign)
        function.visit(finder)
        if not finder.bindings_guarded():
            self.unfixable = reason
            return False
        for node, ancestors in finder.uses:
            if _inside_refill(ancestors, name):
                continue  # the freshly computed value, not the cached one
            parent_node = ancestors[-1]
            if type(parent_node) is cst.Comparison and parent_node.left is node:
                continue
            if type(parent_node) is cst.Attribute and parent_node.value is node:
                grand = ancestors[-2]
                if parent_node.attr.value in ("to", "cuda") and type(grand) is cst.Call:
                    continue
                if parent_node.attr.value in METADATA_READS:
                    continue
            if not _guarded(node, ancestors, name):
                self.unfixable = reason
                return False
            if mutates(node, parent_node, ancestors[-2] if len(ancestors) > 1 else None):
                self.unfixable = f"an entry of `{self.container.display()}` is modified in place through `{name}`"
                return False
            expression: cst.BaseExpression = node
            if (
                type(parent_node) is cst.Attribute
                and parent_node.value is node
                and parent_node.attr.value == "clone"
            ):
                grand = ancestors[-2]
                if type(grand) is cst.Call and grand.func is parent_node and not grand.args:
                    expression = grand
            if not self._move_back_at(use, expression, node):
                return False
        return True

    def _device_expression(
        self, container: ContainerKey, functions: tuple[cst.FunctionDef, ...], at: cst.CSTNode
    ) -> str | None:
        """An expression holding the device the reader works on, available where `at` is: by what the code
        shows (a parameter annotated `torch.device` or that the function moves tensors to, a name or instance
        attribute bound to an accelerator or to another tensor's `.device`, a tensor parameter's `.device`);
        a parameter spelled like a device that the code shows nothing about only where nothing else is."""
        devices = self._devices()
        for function in reversed(functions):
            facts = self.containers.facts(function)
            for name, param in facts.params.items():
                annotation = code_of(param.annotation.annotation, 200) if param.annotation else ""
                if annotation.endswith("device") or devices.used_as_device(function, name):
                    return name
            for name, bindings in facts.bindings.items():
                if _bound_before(function, bindings, at) and devices.binds_a_device(self._bindings(function, name)):
                    return name
            for name, param in facts.params.items():
                if param.annotation is not None and code_of(param.annotation.annotation, 200) in (
                    "Tensor",
                    "torch.Tensor",
                ):
                    return f"{name}.device"
        receiver = method_receiver(container.owner, functions) if type(container.owner) is cst.ClassDef else ""
        if receiver:
            attribute = self._device_attribute(container.owner)  # type: ignore[arg-type]
            if attribute is not None:
                return f"{receiver}.{attribute}"
        if self.containers.module is not None:
            facts = self.containers.facts(self.containers.module)
            for name, bindings in facts.bindings.items():
                if (functions or _bound_before(self.containers.module, bindings, at)) and devices.binds_a_device(
                    self._bindings(self.containers.module, name)
                ):
                    return name
        return self._device_named(container, functions, receiver, at)

    def _device_named(
        self, container: ContainerKey, functions: tuple[cst.FunctionDef, ...], receiver: str, at: cst.CSTNode
    ) -> str | None:
        """The tie-break where the code shows no device: a parameter, instance attribute or module name spelled
        like a device (`device`, `model_device`), not like host memory, and not shown to hold the host."""
        devices = self._devices()
        for function in reversed(functions):
            for name in self.containers.facts(function).params:
                if is_device_name(name) and not is_host_name(name):
                    return name
        if receiver:
            owner: cst.ClassDef = container.owner  # type: ignore[assignment]
            for attribute in self.containers.self_attributes.get(owner, {}):
                bindings = self.containers.names.attribute_bindings(owner, attribute)
                if is_device_name(attribute) and not is_host_name(attribute) and not any(
                    b.bound_value is not None and devices.kind(b.bound_value) == "host" for b in bindings
                ):
                    return f"{receiver}.{attribute}"
        if self.containers.module is not None:
            module = self.containers.module
            for name, bindings in self.containers.facts(module).bindings.items():
                if is_device_name(name) and not is_host_name(name) and (functions or _bound_before(module, bindings, at)):
                    if not any(b.bound_value is not None and devices.kind(b.bound_value) == "host" for b in self._bindings(module, name)):
                        return name
        return None

    def _devices(self) -> DeviceKinds:
        if self._device_kinds is None:
            self._device_kinds = DeviceKinds(self.containers.names)
        return self._device_kinds

    def _bindings(self, scope: cst.CSTNode, name: str) -> list[Binding]:
        """Every binding of `name` in `scope` (the function or module), as `Names` records them."""
        recorded = self.containers.names.scopes.get(scope)
        return list(recorded.bindings.get(name, [])) if recorded is not None else []

    def _device_attribute(self, owner: cst.ClassDef) -> str | None:
        """The attribute of the class's instance that holds its device: `device` where the class or a library
        base gives it one (a method or property, `LightningModule`), else one set to an accelerator or to another
        tensor's `.device`, or that its methods move tensors to (`device` first where several are: a tie)."""
        methods = self.containers.class_methods.get(owner, set())
        if "device" in methods or self._has_device_base(owner):
            return "device"
        devices = self._devices()
        found = [
            attribute
            for attribute in self.containers.self_attributes.get(owner, {})
            if devices.binds_a_device(self.containers.names.attribute_bindings(owner, attribute))
            or any(devices.used_as_device(method, f"{receiver}.{attribute}") for method, receiver in _methods(owner))
        ]
        return "device" if "device" in found else found[0] if found else None

    def _has_device_base(self, owner: cst.ClassDef) -> bool:
        for base in owner.bases:
            name = self.containers.qualified_name(base.value) or dotted_name(base.value) or ""
            if name.rsplit(".", 1)[-1] in _DEVICE_BASES:
                return True
        return False

    # --- findings -------------------------------------------------------------------------------------

def _methods(owner: cst.ClassDef) -> list[tuple[cst.FunctionDef, str]]:
    """The methods of a class with the name each calls its instance (`self`, `this`); not static or class methods."""
    body = owner.body.body if type(owner.body) is cst.IndentedBlock else []
    return [(item, instance_receiver(item)) for item in body if type(item) is cst.FunctionDef and instance_receiver(item)]


def _is_none_test(test: cst.BaseExpression, name: str, negated: bool) -> bool:
    """`name is None` (or `name is not None` when negated)."""
    if not (type(test) is cst.Comparison and type(test.left) is cst.Name and test.left.value == name):
        return False
    if len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    operator = cst.IsNot if negated else cst.Is
    return (
        isinstance(target.operator, operator)
        and type(target.comparator) is cst.Name
        and target.comparator.value == "None"
    )


def _block_ends_flow(block: cst.BaseSuite) -> bool:
    body = block.body if type(block) is cst.IndentedBlock else [block]
    if not body:
        return False
    last = body[-1]
    statements = last.body if type(last) is cst.SimpleStatementLine else [last]
    if type(block) is cst.SimpleStatementSuite:
        statements = block.body
    return bool(statements) and type(statements[-1]) in (cst.Return, cst.Raise, cst.Continue, cst.Break)


def _block_assigns(block: cst.BaseSuite, name: str) -> bool:
    statements: list[cst.CSTNode] = []
    if type(block) is cst.IndentedBlock:
        for line in block.body:
            if type(line) is cst.SimpleStatementLine:
                statements.extend(line.body)
    else:
        statements.extend(block.body)  # type: ignore[attr-defined]
    for statement in statements:
        if type(statement) is cst.Assign and any(
            type(t.target) is cst.Name and t.target.value == name for t in statement.targets
        ):
            return True
    return False


def _bound_before(scope: cst.CSTNode, bindings: list[LocalBinding], at: cst.CSTNode) -> bool:
    """Whether one of the bindings comes before `at` in source order (a pre-order walk of the scope)."""
    statements = {id(b.statement) for b in bindings}
    for node in preorder(scope):
        if id(node) in statements:
            return True
        if node is at:
            return False
    return False


class _NameUses(cst.CSTVisitor):
    """Reads of one local name in a function, with their ancestors, and its other bindings."""

    def __init__(self, name: str, binding: cst.Assign) -> None:
        super().__init__()
        self.name = name
        self.binding = binding
        self.stack: list[cst.CSTNode] = []
        self.uses: list[tuple[cst.Name, tuple[cst.CSTNode, ...]]] = []
        self.other_bindings: list[tuple[cst.CSTNode, ...]] = []
        self.started = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if node is self.binding:
            self.started = True
        if type(node) in (cst.Lambda,) or (type(node) is cst.FunctionDef and self.stack):
            return False
        if type(node) is cst.Name and node.value == self.name and self.stack:
            parent = self.stack[-1]
            if type(parent) is cst.AssignTarget and parent.target is node:
                if self.stack[-2] is not self.binding:
                    self.other_bindings.append(tuple(self.stack))
            elif type(parent) is cst.Attribute and parent.attr is node:
                pass
            elif type(parent) in (cst.Arg,) and parent.keyword is node:
                pass
            elif type(parent) is cst.Param:
                self.other_bindings.append(tuple(self.stack))
            elif self.started:
                self.uses.append((node, tuple(self.stack)))
        self.stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()

    def bindings_guarded(self) -> bool:
        """Other bindings of the name are only the refill inside `if name is None:`."""
        for ancestors in self.other_bindings:
            if not any(type(a) is cst.If and _is_none_test(a.test, self.name, negated=False) for a in ancestors):
                return False
        return True


def _inside_refill(ancestors: tuple[cst.CSTNode, ...], name: str) -> bool:
    """Inside `if name is None:` whose block re-binds the name (the miss path computing a fresh value)."""
    for index, ancestor in enumerate(ancestors[:-1]):
        if (
            type(ancestor) is cst.If
            and _is_none_test(ancestor.test, name, negated=False)
            and ancestors[index + 1] is ancestor.body
            and _block_assigns(ancestor.body, name)
        ):
            return True
    return False


def _guarded(node: cst.Name, ancestors: tuple[cst.CSTNode, ...], name: str) -> bool:
    """Whether `name` cannot be None here: inside `if name is not None:`, or after `if name is None: return/refill`."""
    chain = (*ancestors, node)
    for index, ancestor in enumerate(ancestors):
        child = chain[index + 1]
        if type(ancestor) is cst.If:
            if _is_none_test(ancestor.test, name, negated=True) and child is ancestor.body:
                return True
            if _is_none_test(ancestor.test, name, negated=False) and child is ancestor.orelse:
                return True
            if _is_none_test(ancestor.test, name, negated=False) and child is ancestor.body:
                return False
        if type(ancestor) is cst.IfExp:
            if _is_none_test(ancestor.test, name, negated=True) and child is ancestor.body:
                return True
            if _is_none_test(ancestor.test, name, negated=False) and child is ancestor.orelse:
                return True
        body = getattr(ancestor, "body", None)
        if type(ancestor) in (cst.IndentedBlock, cst.Module) and isinstance(body, (list, tuple)):
            position = next((i for i, statement in enumerate(body) if statement is child), None)
            if position is None:
                continue
            for statement in body[:position]:
                if type(statement) is cst.If and _is_none_test(statement.test, name, negated=False):
                    if _block_ends_flow(statement.body) or _block_assigns(statement.body, name):
                        return True
    return False

