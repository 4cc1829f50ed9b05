"""What dtype an expression of the file holds: `torch.bfloat16`, a name or a `self`/config field bound to one,
a choice between two (`bf16 if torch.cuda.is_bf16_supported() else fp16`), a lookup in a literal table, a
`getattr(torch, "...")`. Every binding must agree, or the answer is unknown (None). Asked by `Amp` of the `dtype=`
of an autocast region, and of what a scaler attribute holds (`field_values`).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import Binding, Names
from stabfix.model.source.node_fields import visit_readonly

DTYPES = {
    "torch.float16": "float16", "torch.half": "float16", "torch.bfloat16": "bfloat16",
    "torch.float32": "float32", "torch.float": "float32",
}
# a device's bfloat16 support asked at run time: a choice on it falls back on the other dtype somewhere
BF16_SUPPORT_QUERIES = frozenset({"torch.cuda.is_bf16_supported", "torch.cuda.amp.is_bf16_supported",
                                  "torch.xpu.is_bf16_supported"})


class DtypeValues:
    def __init__(self, names: Names) -> None:
        self.names = names
        # (binding order it was built at, field -> its bindings in class bodies, field -> its `self.<field>`
        # bindings): asked for every scaler and dtype read through an attribute, over every class of the file
        self._fields: Optional[tuple[int, dict[str, list[Binding]], dict[str, list[Binding]]]] = None

    def of(self, expression: cst.BaseExpression, sources: list) -> Optional[str]:
        """The dtype `expression` holds (`float16`/`bfloat16`/`float32`), None when unknown; `sources` gets the
        expressions that decided it."""
        return self._of(expression, sources, 0)

    def _of(self, expression: cst.BaseExpression, sources: list, depth: int) -> Optional[str]:
        """Follow names, `self` attributes and config fields of the file to a dtype; every value must agree."""
        if depth > 6:
            return None
        # a variable is followed to its assignment (the fix changes the setting, not this use of it)
        imported = type(expression) is cst.Name and all(b.kind == "import" for b in self.names.reaching(expression))
        qualified = self.names.qualify(expression) if type(expression) is not cst.Name or imported else None
        if qualified in DTYPES:
            sources.append(expression)
            return DTYPES[qualified]
        if type(expression) is cst.IfExp:
            body, orelse = self._of(expression.body, sources, depth + 1), self._of(expression.orelse, sources, depth + 1)
            return self._chosen(expression.test, body, orelse)
        if type(expression) is cst.Subscript:
            return self._looked_up(expression, sources, depth)
        if type(expression) is cst.Call and dotted_name(expression.func) == "getattr" and len(expression.args) == 2:
            text = expression.args[1].value
            if self.names.qualify(expression.args[0].value) == "torch" and type(text) is cst.SimpleString:
                return DTYPES.get(f"torch.{text.evaluated_value}")
            return None
        values: list[cst.BaseExpression] = []
        if type(expression) is cst.Name:
            reaching = self.names.reaching(expression)
            if not reaching or any(binding.bound_value is None for binding in reaching):
                return None
            values = [binding.bound_value for binding in reaching]  # type: ignore[misc]
        elif type(expression) is cst.Attribute:
            values = self.field_values(expression)
        results = {self._of(value, sources, depth + 1) for value in values}
        return results.pop() if len(results) == 1 else None

    def _chosen(self, test: cst.BaseExpression, body: Optional[str], orelse: Optional[str]) -> Optional[str]:
        """What a choice between two dtypes computes in: the one both branches agree on, or float16 when
        the choice asks whether the device supports bfloat16 (`bf16 if is_bf16_supported() else fp16`):
        the fallback runs on every GPU without bfloat16, by design."""
        if body == orelse:
            return body
        if {body, orelse} == {"float16", "bfloat16"} and self._asks_bf16_support(test):
            return "float16"
        return None

    def _asks_bf16_support(self, test: cst.BaseExpression) -> bool:
        found = _CallCollector()
        visit_readonly(test, found)
        return any(self.names.qualify(call.func) in BF16_SUPPORT_QUERIES for call in found.calls)

    def _looked_up(self, subscript: cst.Subscript, sources: list, depth: int) -> Optional[str]:
        """`{"bfloat16": torch.bfloat16, "float16": torch.float16}[name]`: the entry every key the name
        may hold selects (a key chosen between two strings is followed like a choice of dtypes)."""
        table = subscript.value
        if type(table) is cst.Name:
            table = self.names.single_value(table) or table
        if type(table) is not cst.Dict or len(subscript.slice) != 1:
            return None
        index = subscript.slice[0].slice
        if type(index) is not cst.Index:
            return None
        entries = {element.key.evaluated_value: element.value for element in table.elements
                   if type(element) is cst.DictElement and type(element.key) is cst.SimpleString}
        key = index.value
        if type(key) is cst.Name:
            key = self.names.single_value(key) or key
        if type(key) is cst.SimpleString:
            entry = entries.get(key.evaluated_value)
            return self._of(entry, sources, depth + 1) if entry is not None else None
        if type(key) is cst.IfExp and type(key.body) is cst.SimpleString and type(key.orelse) is cst.SimpleString:
            body, orelse = entries.get(key.body.evaluated_value), entries.get(key.orelse.evaluated_value)
            if body is None or orelse is None:
                return None
            return self._chosen(key.test, self._of(body, sources, depth + 1), self._of(orelse, sources, depth + 1))
        return None

    def field_values(self, attribute: cst.Attribute) -> list[cst.BaseExpression]:
        """What `self.amp_dtype` / `cfg.train.amp_dtype` can hold: the file's assignments of that field
        (`self.<field> = ...` in a method, `<field>: torch.dtype = ...` in a class body); none when any
        of them shows no value."""
        field = attribute.attr.value
        in_bodies, on_self = self._field_bindings()
        bindings = [*in_bodies.get(field, ()), *on_self.get(field, ())]
        if not bindings or any(binding.bound_value is None for binding in bindings):
            return []
        return [binding.bound_value for binding in bindings]  # type: ignore[misc]

    def _field_bindings(self) -> tuple[dict[str, list[Binding]], dict[str, list[Binding]]]:
        """Every class's bindings by field, class bodies and `self.<field>` apart, in the order of the
        classes and of each one's bindings."""
        if self._fields is None or self._fields[0] != self.names.position:
            in_bodies: dict[str, list[Binding]] = {}
            for scope in self.names.scopes.values():
                if scope.is_class:
                    for field, bindings in scope.bindings.items():
                        in_bodies.setdefault(field, []).extend(bindings)
            on_self: dict[str, list[Binding]] = {}
            for per_class in self.names.self_attributes.values():
                for field, bindings in per_class.items():
                    on_self.setdefault(field, []).extend(bindings)
            self._fields = (self.names.position, in_bodies, on_self)
        return self._fields[1], self._fields[2]


class _CallCollector(cst.CSTVisitor):
    def __init__(self) -> None:
        self.calls: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)
