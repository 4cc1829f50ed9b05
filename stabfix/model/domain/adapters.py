"""Adapters (LoRA and the like): which models of a file carry them, and whether their base is frozen.

`AdapterFacts(module, names)` reads the file once and answers:

- `adapter_classes`: classes of the file that are adapter layers, by what they do: `__init__` stores a
  module it is handed (`self.base = base`, which `forward` then calls or reads the weights of: a stored
  size such as `self.n_atoms = n_atoms` is no module) and creates weights of its own (`nn.Parameter`, a
  torch layer), and `forward` adds the two paths (`self.base(x) + x @ self.lora_A.t() @ ...`); library
  adapter layers (`loralib.Linear`, `loralib.MergedLinear`...) count too;
- `injectors`: functions and classes of the file that build such layers (`apply_lora(model)` wrapping
  children with `setattr`, a model class whose `__init__` makes `LoRALinear`s), following the file's own
  calls;
- `freezes`: where code stops parameters from training: `p.requires_grad = False` / `requires_grad_(False)`
  (also inside a loop over `named_parameters()` filtered by name), `model.requires_grad_(False)`,
  `loralib.mark_only_lora_as_trainable(model)`, peft's `get_peft_model` / `PeftModel.from_pretrained` /
  `prepare_model_for_kbit_training`, a same-file helper that always does one of these, or an imported
  helper named like one (`freeze_base(model)`, `model.freeze()`); each freeze knows whether it always
  runs (not behind an `if`, `try` or `while` outside the loop over the parameters).

`carries_adapters(expr, function, cls)` says what shows that a model expression holds adapters (how it
was built, or an injector it was handed to before), or None; `frozen_before(call, function, cls)` says
whether a freeze always runs before `call` (in its function, in a same-file function it calls first, in
the builder of the model, or anywhere in its class). A model built by an imported function whose module
or name says adapter (`from lora_model import load_policy`) is taken to carry adapters: another file
cannot be read here, and the name is the only evidence the file has.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Optional

import libcst as cst

from stabfix.model.flow.parameters import element_source
from stabfix.model.source import vocabulary as words
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import Names
from stabfix.model.source.node_fields import code_children, code_nodes
from stabfix.model.source.syntax import node_code

_PARAMETER_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
_LIBRARY_LAYERS = ("loralib.",)
_FREEZING_CALLS = frozenset(
    {
        "loralib.mark_only_lora_as_trainable", "loralib.utils.mark_only_lora_as_trainable",
        "peft.get_peft_model", "peft.PeftModel.from_pretrained", "peft.AutoPeftModelForCausalLM.from_pretrained",
        "peft.prepare_model_for_kbit_training", "peft.prepare_model_for_int8_training",
        "peft.inject_adapter_in_model", "peft.LoraModel",
    }
)
Guards = frozenset  # ids of the `if`/`try`/`while` statements around a node, within its function
_FREEZE_WORDS = frozenset({"freeze", "frozen", "mark_only"})


@dataclass
class _Body:
    """What one function (or class) does, in source order."""

    adapters: list[cst.Call] = field(default_factory=list)  # calls that build adapter layers
    freezes: list[tuple[cst.CSTNode, Guards]] = field(default_factory=list)  # (node, the guards it sits behind)
    calls: list[tuple[cst.Call, Guards]] = field(default_factory=list)  # calls of this file's functions
    adapter_targets: list[cst.BaseExpression] = field(default_factory=list)  # `model.blocks = [Adapter(b)...]`
    imported: list[tuple[cst.Call, Guards]] = field(default_factory=list)  # calls of imported functions
    order: dict[int, int] = field(default_factory=dict)  # id(node) -> position
    guards: dict[int, Guards] = field(default_factory=dict)  # id(node) -> the guards it sits behind


class AdapterFacts:
    def __init__(self, module: cst.Module, names: Names, calls: Optional[list[cst.Call]] = None) -> None:
        """`calls`: every call of the module (`TreeIndex.calls`), where the traversal listed them."""
        self.names = names
        self.module = module
        self._calls = calls
        self._adapters_shown: Optional[bool] = None
        self.classes: dict[str, cst.ClassDef] = {}
        self.functions: dict[str, cst.FunctionDef] = {}
        for node in _definitions(module, names):
            if type(node) is cst.ClassDef:
                self.classes.setdefault(node.name.value, node)
            elif type(node) is cst.FunctionDef:
                self.functions.setdefault(node.name.value, node)
        self.adapter_classes = {name for name, cls in self.classes.items() if self._is_adapter_layer(cls)}
        self._bodies: dict[int, _Body] = {}
        self._injecting: dict[int, bool] = {}

    # --- questions --------------------------------------------------------------------------------------
    def carries_adapters(
        self, expr: cst.BaseExpression, function: Optional[cst.FunctionDef], cls: Optional[cst.ClassDef], depth: int = 0
    ) -> Optional[str]:
        """How the code shows that the model `expr` holds adapter layers, or None: how it was built, an
        injector it is handed to, layers assigned into it (`model.fc = LoRA(model.fc)`, also through a
        loop over its blocks); a name or `self.<attr>` bound to another model is followed."""
        if not self._shows_adapters():
            return None
        if type(expr) is cst.Name and expr.value == "self" and cls is not None:
            return f"`{cls.name.value}` builds adapter layers" if self._injects(cls) else None
        spelled = dotted_name(expr)
        body = self._body(function if function is not None else self.module)
        for call, _ in body.calls + body.imported:
            if any(dotted_name(arg.value) == spelled for arg in call.args) and (
                self._injects(self._callee(call)) or self._named_adapter(call) is not None
            ):
                return f"`{dotted_name(call.func)}(...)` puts adapter layers in it"
        for target in body.adapter_targets:
            if spelled and self._rooted_at(target, spelled):
                return f"`{dotted_name(target)}` is set to adapter layers"
        for binding_value, scope in self._built_from(expr, cls):
            found = self._builder_evidence(binding_value)
            if found is None and depth < 3 and type(binding_value) in (cst.Name, cst.Attribute):
                inner = scope if type(scope) is cst.FunctionDef else None
                found = self.carries_adapters(binding_value, inner, cls, depth + 1)
            if found is not None:
                return found
        return None

    def _shows_adapters(self) -> bool:
        """Whether some call of the file builds an adapter layer or runs a builder named for adapters: every
        piece of evidence `carries_adapters` gives is one of those (one pass over the calls, not a walk of
        every function that builds an optimizer, where a file has none)."""
        if self._adapters_shown is None:
            named: dict[Optional[str], bool] = {}
            shown = self._calls is None
            for call in self._calls or ():
                qualified = self.names.qualify(call.func)
                if qualified not in named:
                    named[qualified] = self._named_adapter(call) is not None
                if named[qualified] or self._adapter_layer_call(call, qualified):
                    shown = True
                    break
            self._adapters_shown = shown
        return self._adapters_shown

    def _rooted_at(self, target: cst.BaseExpression, spelled: str) -> bool:
        """`model.fc` for `model`; `block.mlp` where `block` iterates over `model.blocks`."""
        text = dotted_name(target) or ""
        if text == spelled or text.startswith(spelled + "."):
            return True
        root = target
        while type(root) in (cst.Attribute, cst.Subscript):
            root = root.value
        if type(root) is not cst.Name:
            return False
        for binding in self.names.bindings_of(root):
            if binding.kind == "for" and binding.value is not None:
                source = element_source(binding.node.target, binding.value, root.value)  # type: ignore[attr-defined]
                while type(source) in (cst.Call, cst.Attribute, cst.Subscript):
                    inner = dotted_name(source) or ""
                    if inner == spelled or inner.startswith(spelled + "."):
                        return True
                    source = source.func if type(source) is cst.Call else source.value
        return False

    def frozen_before(self, node: cst.CSTNode, model: cst.BaseExpression, function: Optional[cst.FunctionDef], cls: Optional[cst.ClassDef]) -> bool:
        """Whether some freeze always runs before `node`: in its function, in a same-file function called
        before it, in the same-file builder of `model`, or (for models held on `self`) in a method of `cls`."""
        body = self._body(function if function is not None else self.module)
        position = body.order.get(id(node), len(body.order))
        around = body.guards.get(id(node), frozenset())
        # a freeze runs whenever `node` does when it sits behind no guard that `node` is not behind too
        if any(guards <= around and body.order[id(f)] < position for f, guards in body.freezes):
            return True
        if any(
            guards <= around and body.order[id(c)] < position and self._freezes(self._callee(c)) for c, guards in body.calls
        ):
            return True
        for value, _ in self._built_from(model, cls):
            if type(value) is cst.Call and self._freezes(self._callee(value)):
                return True
            if type(value) is cst.Call and self._freezing_call(value):
                return True
        spelled = dotted_name(model) or ""
        if cls is not None and (spelled == "self" or spelled.startswith("self.")):
            return self._freezes(cls)
        return False

    # --- what a model was built from ------------------------------------------------------------------------
    def _built_from(self, expr: cst.BaseExpression, cls: Optional[cst.ClassDef]) -> list[tuple[cst.BaseExpression, cst.CSTNode]]:
        """The values a model expression was bound to, each with the scope node of its binding."""
        bindings = []
        if type(expr) is cst.Name:
            bindings = self.names.reaching(expr)
        elif type(expr) is cst.Attribute and type(expr.value) is cst.Name and expr.value.value == "self" and cls is not None:
            bindings = self.names.attribute_bindings(cls, expr.attr.value)
        return [(b.bound_value, b.scope.node) for b in bindings if b.bound_value is not None]

    def _builder_evidence(self, value: cst.BaseExpression) -> Optional[str]:
        if type(value) is not cst.Call:
            return None
        callee = self._callee(value)
        spelled = dotted_name(value.func) or "the builder"
        if self._injects(callee) or self._adapter_layer_call(value):
            return f"`{spelled}(...)` builds adapter layers"
        if any(self._builder_evidence(arg.value) for arg in value.args):
            return f"`{spelled}(...)` wraps a model with adapter layers"
        if callee is None and not self._freezing_call(value):
            return self._named_adapter(value)
        return None

    def _named_adapter(self, call: cst.Call) -> Optional[str]:
        """An imported builder whose module or name says adapter: `from lora_model import load_policy`."""
        qualified = self.names.qualify(call.func) or ""
        module, _, name = qualified.rpartition(".")
        if qualified and any(word in words.ADAPTER_WORDS for part in qualified.split(".") for word in words.identifier_words(part)):
            return f"built by `{name}` from `{module or name}`"
        return None

    # --- adapter layers and who builds them ------------------------------------------------------------------
    def _is_adapter_layer(self, cls: cst.ClassDef) -> bool:
        methods = _methods(cls)
        init, forward = methods.get("__init__"), methods.get("forward")
        if init is None or forward is None:
            return False
        params = {p.name.value for p in init.params.params[1:]}
        wrapped: set[str] = set()
        own: dict[str, int] = {}
        for node in _statements(init.body):
            if type(node) is cst.Assign and len(node.targets) == 1:
                target = dotted_name(node.targets[0].target) or ""
                if not target.startswith("self."):
                    continue
                if type(node.value) is cst.Name and node.value.value in params:
                    wrapped.add(target)
                elif type(node.value) is cst.Call and self._weights(node.value):
                    own[target] = self._weights(node.value)
        if not wrapped or sum(own.values()) < 2:
            return False  # a gate (`x + self.alpha * self.fn(x)`) has one weight; a low-rank pair has two
        layers, used, adds = _forward_reads(forward)
        wrapped &= layers  # a stored size or flag (`self.n_atoms = n_atoms`) wraps nothing
        if not wrapped:
            return False
        return adds and bool(used & wrapped) and sum(own.get(name, 0) for name in used) >= 2

    def _weights(self, call: cst.Call, depth: int = 0) -> int:
        """How many weights a constructor call creates: 1 for `nn.Parameter`/a torch layer, the weights a
        module class of the file creates in its `__init__` (`self.lora = LoRALayer(...)`: two)."""
        name = self.names.qualify(call.func) or ""
        last = name.rsplit(".", 1)[-1]
        if name in _PARAMETER_CLASSES or (name.startswith("torch.nn.") and last[:1].isupper() and name.count(".") == 2):
            return 1
        local = self.classes.get(call.func.value) if type(call.func) is cst.Name else None
        init = _methods(local).get("__init__") if local is not None and depth < 2 else None
        if init is None:
            return 0
        return sum(
            self._weights(node.value, depth + 1)
            for node in _statements(init.body)
            if type(node) is cst.Assign and type(node.value) is cst.Call
            and (dotted_name(node.targets[0].target) or "").startswith("self.")
        )

    def _self_freezing_layer(self, call: cst.Call) -> bool:
        """`SimpleLoraLinear(base)` whose `__init__` freezes the base it wraps."""
        local = self.classes.get(call.func.value) if type(call.func) is cst.Name else None
        return local is not None and call.func.value in self.adapter_classes and self._freezes(local)

    def _adapter_layer_call(self, call: cst.Call, qualified: Optional[str] = "") -> bool:
        """`qualified`: what the call's function names, where the caller has it."""
        if type(call.func) is cst.Name and call.func.value in self.adapter_classes:
            return True
        return ((self.names.qualify(call.func) if qualified == "" else qualified) or "").startswith(_LIBRARY_LAYERS)

    def _injects(self, scope: Optional[cst.CSTNode], depth: int = 0) -> bool:
        """Whether a function or class of the file builds adapter layers (itself or through its own calls)."""
        if scope is None or depth > 3:
            return False
        key = id(scope)
        if key not in self._injecting:
            self._injecting[key] = False
            body = self._body(scope)
            self._injecting[key] = bool(body.adapters) or any(self._injects(self._callee(c), depth + 1) for c, _ in body.calls)
        return self._injecting[key]

    def _freezes(self, scope: Optional[cst.CSTNode], depth: int = 0) -> bool:
        """Whether a function (or a method of a class) of the file always freezes some parameters."""
        if scope is None or depth > 3:
            return False
        body = self._body(scope)
        return any(not guards for _, guards in body.freezes) or any(
            not guards and self._freezes(self._callee(c), depth + 1) for c, guards in body.calls
        )

    def _callee(self, call: cst.Call) -> Optional[cst.CSTNode]:
        definition = self.names.definition_of(call)
        if definition is not None:
            return definition
        if type(call.func) is cst.Name:
            bindings = self.names.bindings_of(call.func)
            if bindings and all(b.kind == "class" for b in bindings):
                return self.classes.get(call.func.value)
        return None

    # --- one pass over a function or class ----------------------------------------------------------------
    def _body(self, scope: cst.CSTNode) -> _Body:
        key = id(scope)
        if key not in self._bodies:
            body = self._bodies[key] = _Body()
            assigns: list[cst.Assign] = []  # may be set to adapter layers
            skipped: list[cst.CSTNode] = []
            for position, (node, guards) in enumerate(_ordered(scope, skipped)):
                body.order[id(node)] = position
                body.guards[id(node)] = guards
                if type(node) is cst.Call:
                    qualified = self.names.qualify(node.func)
                    if self._adapter_layer_call(node, qualified):
                        body.adapters.append(node)
                        if type(scope) is not cst.ClassDef and self._self_freezing_layer(node):
                            body.freezes.append((node, frozenset()))  # the layer freezes what it wraps
                    if self._freezing_call(node, qualified):
                        body.freezes.append((node, guards))
                    elif self._callee(node) is not None:
                        body.calls.append((node, guards))
                    elif qualified:
                        body.imported.append((node, guards))
                elif _sets_requires_grad_false(node):  # type: ignore[arg-type]
                    body.freezes.append((node, guards))
                else:
                    assigns.append(node)  # type: ignore[arg-type]
            # the walk met every call of an assigned value but those in the lambdas it skipped: with no
            # adapter layer built among them, no value assigned builds one
            if body.adapters or any(
                type(child) is cst.Call and self._adapter_layer_call(child) for node in skipped for child in code_nodes(node)
            ):
                for assign in assigns:
                    if any(type(child) is cst.Call and self._adapter_layer_call(child) for child in code_nodes(assign.value)):
                        body.adapter_targets.extend(t.target for t in assign.targets)
        return self._bodies[key]

    def _freezing_call(self, call: cst.Call, qualified: Optional[str] = "") -> bool:
        qualified = (self.names.qualify(call.func) if qualified == "" else qualified) or ""
        if qualified in _FREEZING_CALLS or qualified.startswith("peft."):
            return True  # every peft model (`PeftModel(...)`, `get_peft_model`, tuners) freezes its base
        func = call.func
        if type(func) is cst.Attribute and func.attr.value == "requires_grad_":
            return bool(call.args) and not _is_true(call.args[0].value)
        last = (dotted_name(func) or "").rsplit(".", 1)[-1].lower()
        if any(word in last for word in _FREEZE_WORDS) and self._callee(call) is None:
            return "unfreeze" not in last  # an imported `freeze_base(model)`, `model.freeze()`: trusted by name
        return False


def _methods(cls: cst.ClassDef) -> dict[str, cst.FunctionDef]:
    return {node.name.value: node for node in cls.body.body if type(node) is cst.FunctionDef}


def _sets_requires_grad_false(node: cst.Assign) -> bool:
    """`p.requires_grad = False`, or a test (`p.requires_grad = "lora_" in n`): some parameters stop training."""
    return not _is_true(node.value) and any(
        type(t.target) is cst.Attribute and t.target.attr.value == "requires_grad" for t in node.targets
    )


def _is_true(node: cst.BaseExpression) -> bool:
    return type(node) is cst.Name and node.value == "True"


def _forward_reads(forward: cst.FunctionDef) -> tuple[set[str], set[str], bool]:
    """In one walk of `forward`'s body: the `self.<attr>` chains it uses as layers, called (`self.base(x)`)
    or read for their weights (`F.linear(x, self.base.weight)`); every attribute chain it spells; whether
    it adds (`+`, `+=`)."""
    layers, used, adds = set(), set(), False
    for node in code_nodes(forward.body):
        kind = type(node)
        if kind is cst.Call:
            layers.add(dotted_name(node.func) or "")
        elif kind is cst.Attribute:
            if node.attr.value in ("weight", "bias"):
                layers.add(dotted_name(node.value) or "")
            name = dotted_name(node)
            if name:
                used.add(name)
        elif kind is cst.BinaryOperation:
            adds = adds or type(node.operator) is cst.Add
        elif kind is cst.AugAssign:
            adds = adds or type(node.operator) is cst.AddAssign
    return {name for name in layers if name.startswith("self.")}, used, adds


def _ordered(scope: cst.CSTNode, skipped: list[cst.CSTNode]) -> Iterator[tuple[cst.CSTNode, Guards]]:
    """Calls and assignments of a function or class body in source order, each with the `if`, `try` and
    `while` statements it sits behind (a loop over parameters is no guard: it always runs, and a test
    inside it only picks which parameters). The nested functions and lambdas it does not enter go to `skipped`."""
    body = scope.body if type(scope) in (cst.FunctionDef, cst.ClassDef) else scope
    in_class = type(scope) is cst.ClassDef
    # depth first in visiting order, with a stack (nested generators cost a step per level for every node)
    stack: list[tuple[cst.CSTNode, Guards, bool]] = [(body, frozenset(), False)]
    # node types by identity (none has subclasses): `isinstance` with libcst's abstract node classes runs a
    # Python-level check per class for every node that is not one
    while stack:
        node, guards, in_params = stack.pop()
        kind = type(node)
        if kind is cst.Call or kind is cst.Assign:
            yield node, guards
        elif kind in _DEFERRED and node is not scope and not in_class:
            skipped.append(node)
            continue  # a nested function runs when it is called, not here (a class's methods all count)
        elif kind in _GUARDS and not in_params:
            guards = guards | {id(node)}
        elif kind is cst.For and "parameters" in node_code(node.iter):
            in_params = True
        below = code_children(node)  # what it yields and the guards are no trivia (whitespace, punctuation)
        if below:
            stack.extend([(child, guards, in_params) for child in reversed(below)])


_DEFERRED = frozenset({cst.FunctionDef, cst.Lambda})
_GUARDS = frozenset({cst.If, cst.Try, cst.While, cst.IfExp})


def _definitions(module: cst.Module, names: Names) -> Iterator[cst.CSTNode]:
    """The classes and functions of the module in source order: the scopes the names part opened as the
    traversal met them, where it read this module (else a walk of the module)."""
    if names.module_scope is not None and names.module_scope.node is module:
        return (node for node in names.scopes if type(node) in (cst.ClassDef, cst.FunctionDef))
    return (node for node in code_nodes(module) if type(node) in (cst.ClassDef, cst.FunctionDef))


def _statements(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The statements under `node` (nested definitions too) in visiting order: `_walk` less what lies below a
    line of simple statements (expressions, which hold no statement; most of a body's nodes)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        kind = type(current)
        if kind is cst.SimpleStatementLine or kind is cst.SimpleStatementSuite:
            yield from current.body  # type: ignore[attr-defined]
        else:
            stack.extend(reversed(code_children(current)))

