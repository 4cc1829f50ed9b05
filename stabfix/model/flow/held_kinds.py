"""Whether a receiver holds a tensor or a module: the two answer `.to()`, `.cuda()` and `.float()` alike,
but a module moves itself in place and returns itself, while a tensor returns a moved copy.

`HeldKinds.kind(expr)` is "module", "tensor" or None (the code does not show it; never proof either way),
following the bindings that may hold at the read:

- a module: a name or `self.<attr>` the file treats as one (`calls/modules.py`: built from `torch.nn`,
  switched with `.eval()`, asked for `.parameters()`), bound to an instance of a module class of this
  file (`calls/module_classes.py`) or of `torch.nn`, or annotated `nn.Module`;
- a tensor: what `values` shows to be one (factories, torch functions, `.detach()`, a same-file helper
  that returns one, a parameter annotated `Tensor`), a `self.<attr>` bound to one in the class or
  registered with `register_buffer`, an `nn.Parameter`, a comparison of tensors, what every return of a
  same-file function is, and a batch (or a part of one: `for x, y in loader`, `x, y = data`,
  `batch["x"]`) a torch `DataLoader` collates by default: default collation yields tensors, lists,
  tuples, dicts and strings, and only a tensor has a `.to`; a `collate_fn` (or `batch_size=None`) may
  hand over objects that move in place.
Every binding that may hold must agree (an augmented assignment keeps the kind); one unknown makes the
answer None.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.calls.module_classes import ModuleClasses, is_torch_module_name
from stabfix.model.calls.modules import ModuleIndex
from stabfix.model.flow.values import DATA_LOADERS, Values, annotation_mentions_tensor
from stabfix.model.source.names import Binding, Names
from stabfix.model.source.scopes import first_parameter
from stabfix.model.source.node_fields import children

PARAMETER_TYPES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})


class HeldKinds:
    def __init__(self, names: Names, values: Values, modules: Optional[ModuleIndex], classes: ModuleClasses) -> None:
        self.names = names
        self.values = values
        self.modules = modules
        self.classes = classes

    def kind(self, expr: cst.BaseExpression) -> Optional[str]:
        if self.modules is not None and self.modules.is_module(expr):
            return "module"
        if type(expr) is cst.Name:
            if self._default_batch(expr):
                return "tensor"
            return self._agree([self._binding_kind(b) for b in _through_augments(self.names.reaching(expr))])
        if type(expr) is cst.Attribute and type(expr.value) is cst.Name:
            bindings = self.self_attribute(expr)
            if bindings is None:
                return None
            return self._agree([self._binding_kind(b) for b in bindings if b.kind != "augment"] + self._registered(expr))
        if type(expr) is cst.Subscript and type(expr.value) is cst.Name and self._default_batch(expr.value):
            return "tensor"
        return "tensor" if self._is_tensor(expr) else None

    def self_attribute(self, expr: cst.Attribute) -> Optional[list[Binding]]:
        """The `self.<attr> = ...` bindings of the class a method reads `self.<attr>` in; None when the
        receiver is not the method's own first parameter."""
        receiver = expr.value
        use = self.names.uses.get(receiver) if type(receiver) is cst.Name else None
        if use is None:
            return None
        reaching = self.names.reaching(receiver)  # type: ignore[arg-type]
        if len(reaching) != 1 or reaching[0].kind != "param":
            return None
        scope = use.scope
        while scope is not None and type(scope.node) is not cst.FunctionDef:
            scope = scope.parent
        owner = self.names.enclosing_class(use.scope)
        if scope is None or owner is None or first_parameter(scope.node) != receiver.value:  # type: ignore[arg-type]
            return None
        return self.names.attribute_bindings(owner, expr.attr.value)

    def is_parameter_attribute(self, expr: cst.Attribute) -> bool:
        """`self.w` bound to an `nn.Parameter` (rebinding it to a plain tensor raises)."""
        bindings = self.self_attribute(expr) or []
        return any(b.bound_value is not None and self._is_parameter(b.bound_value) for b in bindings)

    # -- one binding ---------------------------------------------------------------------------------
    def _binding_kind(self, binding: Binding) -> Optional[str]:
        if binding.kind == "param":
            annotation = getattr(binding.node, "annotation", None)
            qualified = self.names.qualify(annotation.annotation) if annotation is not None else None
            if qualified is not None and is_torch_module_name(qualified):
                return "module"
            return "tensor" if annotation_mentions_tensor(annotation) else None
        value = binding.bound_value
        if value is not None and self._is_parameter(value):
            return "tensor"
        if value is not None and self._builds_module(value):
            return "module"
        if self._drawn_from_default_loader(binding):
            return "tensor"
        if binding.kind == "unpack" and type(binding.value) is cst.Name and self._default_batch(binding.value):
            return "tensor"  # `inputs, labels = data` with `data` drawn from the loader
        if value is not None and type(value) is cst.Subscript and type(value.value) is cst.Name \
                and self._default_batch(value.value):
            return "tensor"
        if value is not None:
            return "tensor" if self._is_tensor(value) else None
        return "tensor" if self.values.binding_value(binding).tensor else None  # an element a call returns

    def _is_tensor(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        """What `values` shows, plus comparisons of tensors (`torch.arange(n)[None] < lengths[:, None]` is a
        bool tensor) and what every return of a same-file function is."""
        if type(expr) is cst.IfExp:  # both branches (`values` joins "tensor" over any of them)
            return self._is_tensor(expr.body, depth + 1) and self._is_tensor(expr.orelse, depth + 1)
        if type(expr) is cst.Comparison:
            return any(self._is_tensor(part, depth + 1) for part in (expr.left, *(c.comparator for c in expr.comparisons)))
        if type(expr) is cst.Call and depth < 3:
            function = self.names.definition_of(expr)
            returned = self.names.returns.get(function, []) if function is not None else []
            if returned and all(r is not None and self._is_tensor(r, depth + 1) for r in returned):
                return True
        if type(expr) is cst.Name and depth < 3:
            bindings = _through_augments(self.names.reaching(expr))
            if bindings and all(b.bound_value is not None and self._is_tensor(b.bound_value, depth + 1) for b in bindings):
                return True
        return self.values.value_of(expr).tensor

    def _is_parameter(self, value: cst.BaseExpression) -> bool:
        return type(value) is cst.Call and self.names.qualify(value.func) in PARAMETER_TYPES

    def _builds_module(self, value: cst.BaseExpression) -> bool:
        """`Net(...)` (a module class of this file), `nn.Linear(...)`, also moved: `Net().to(device)`."""
        while type(value) is cst.Call and type(value.func) is cst.Attribute \
                and value.func.attr.value in ("to", "cuda", "cpu", "float", "half", "double", "eval", "train"):
            value = value.func.value
        if type(value) is not cst.Call:
            return False
        qualified = self.names.qualify(value.func)
        if qualified is not None:
            return is_torch_module_name(qualified)
        callee = self.names.instance_of(value)
        owner = None
        if callee is not None and callee.kind == "class":
            owner = callee.node
        elif callee is not None and callee.module_class is not None:
            owner = callee.module_class
        return type(owner) is cst.ClassDef and self.classes.is_module_class(owner)

    def _registered(self, expr: cst.Attribute) -> list[Optional[str]]:
        """`self.register_buffer("mask", ...)` in the class makes `self.mask` a tensor."""
        owner = self._owner(expr)
        if owner is None:
            return []
        for node in _calls_in(owner):
            func = node.func
            if type(func) is cst.Attribute and func.attr.value == "register_buffer" and node.args:
                first = node.args[0].value
                if type(first) is cst.SimpleString and first.evaluated_value == expr.attr.value:
                    return ["tensor"]
        return []

    def _owner(self, expr: cst.Attribute) -> Optional[cst.ClassDef]:
        use = self.names.uses.get(expr.value) if type(expr.value) is cst.Name else None
        return self.names.enclosing_class(use.scope) if use is not None else None

    def _drawn_from_default_loader(self, binding: Binding) -> bool:
        """A `for` target over a torch DataLoader that collates by default (whole batch or unpacked element):
        default collation yields tensors, lists, tuples, dicts and strings, and of those only a tensor has a
        `.to`/`.cuda`, so whatever the code moves there is a tensor."""
        return binding.kind == "for" and self.values.binding_value(binding).batch and self._default_loader(binding.value)

    def _default_batch(self, name: cst.Name) -> bool:
        bindings = self.names.reaching(name)
        return bool(bindings) and all(self._drawn_from_default_loader(b) for b in bindings)

    def _default_loader(self, source: Optional[cst.BaseExpression], depth: int = 0) -> bool:
        """`DataLoader(ds, ...)` without a `collate_fn`, directly or through names and `enumerate`/`tqdm`."""
        if source is None or depth > 4:
            return False
        if type(source) is cst.Call:
            if (self.names.qualify(source.func) or "") in DATA_LOADERS:
                # a `collate_fn` may build objects that move in place; `batch_size=None` hands items over as they are
                return not any(arg.star or (arg.keyword is not None and (arg.keyword.value == "collate_fn" or (
                    arg.keyword.value == "batch_size" and type(arg.value) is cst.Name and arg.value.value == "None")))
                    for arg in source.args)
            return bool(source.args) and self._default_loader(source.args[0].value, depth + 1)
        if type(source) is cst.Name:
            bindings = self.names.reaching(source)
            return bool(bindings) and all(
                self._default_loader(b.value if b.kind in ("for", "unpack") else b.bound_value, depth + 1)
                for b in bindings)
        return False

    @staticmethod
    def _agree(kinds: list[Optional[str]]) -> Optional[str]:
        return kinds[0] if kinds and all(kind == kinds[0] for kind in kinds) else None


def _through_augments(bindings: list[Binding]) -> list[Binding]:
    """`total += x` keeps the kind of what `total` held: each augmented binding is replaced by the bindings of
    its scope before it (the last unconditional one and any conditional ones after it)."""
    result: list[Binding] = []
    for binding in bindings:
        if binding.kind != "augment":
            result.append(binding)
            continue
        earlier = [b for b in binding.scope.bindings.get(binding.name, []) if b.order < binding.order and b.kind != "augment"]
        last = max((i for i, b in enumerate(earlier) if not b.conditional), default=0)
        result.extend(earlier[last:])
    return list({id(b): b for b in result}.values())


def _calls_in(node: cst.CSTNode) -> list[cst.Call]:
    found: list[cst.Call] = []
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Call:
            found.append(current)
        stack.extend(children(current))
    return found
