"""The `names` part's traversal: it opens a scope at every module, class, function, lambda and
comprehension, records every binding (assignment, unpacking, parameter, loop target, import, def,
`global`/`nonlocal`...) and every name use with its place in source order and the regions around it,
`self.<attr>` bound in the methods of a class, and what each function returns. `Names` (in `names`)
inherits it and answers the questions afterwards.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.model.source.imports import dotted_name, imported_names
from stabfix.model.source.regions import Regions
from stabfix.model.source.scopes import Binding, Scope, ScopeNode, Use, first_parameter
from stabfix.model.source.syntax import TUPLES_AND_LISTS


class BindingRecorder(Regions):
    """Records the scopes, bindings and uses of one file in the batched traversal."""

    def __init__(self) -> None:
        super().__init__()
        self.module_scope: Optional[Scope] = None
        self.scopes: dict[cst.CSTNode, Scope] = {}
        self.uses: dict[cst.Name, Use] = {}
        self.self_attributes: dict[cst.ClassDef, dict[str, list[Binding]]] = {}
        self.returns: dict[cst.FunctionDef, list[cst.BaseExpression]] = {}  # what each function returns
        # `<param>.<attr> = ...` in a module-level function, by (function name, parameter position), and the
        # (function name, position) a method of a class hands its own instance to (`init_state(self, cfg)`)
        self.parameter_attributes: dict[tuple[str, int], dict[str, list[Binding]]] = {}
        self.instance_handed: dict[cst.ClassDef, set[tuple[str, int]]] = {}
        self.other_handed: set[tuple[str, int]] = set()  # (function name, position) some call passes something else
        # every value the file stores in `<anything>.<attr>`, by attribute (None where unpacking or `+=` hides
        # it): what a read of that attribute on an object of unknown class may hold, set in this file
        self.attribute_stores: dict[str, list[Optional[cst.BaseExpression]]] = {}
        # the target of each of those stores, in the same order (`instances.attribute_values` asks whose object it is)
        self.attribute_store_targets: dict[str, list[cst.Attribute]] = {}
        self._stack: list[Scope] = []
        self._methods: list[tuple[cst.ClassDef, str]] = []  # (class, self parameter) per open method
        self._order = 0
        self._calls_visited = 0

    # -- scopes ----------------------------------------------------------------------------------------
    def _open(self, node: ScopeNode, grad_off: bool = False) -> None:
        scope = Scope(node, self._stack[-1] if self._stack else None)
        self.scopes[node] = scope
        self._stack.append(scope)
        self._open_regions(node, grad_off)

    def _close(self) -> None:
        self._stack.pop()
        self._close_regions()

    def visit_Module(self, node: cst.Module) -> None:
        self._open(node)
        self.module_scope = self._stack[0]

    def leave_Module(self, original_node: cst.Module) -> None:
        self._close()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._bind(node.name.value, "class", node)
        self._open(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._close()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._bind(node.name.value, "def", node)
        owner = self._stack[-1].node if self._stack else None
        grad_off = any(self._disables_grad(d.decorator) or self._grad_off_decorator(d.decorator) for d in node.decorators)
        if grad_off:
            self.grad_off_functions.add(node)
        self._open(node, grad_off)
        if type(owner) is cst.ClassDef:
            first = first_parameter(node)
            is_static = any(dotted_name(d.decorator) in ("staticmethod", "classmethod") for d in node.decorators)
            self._methods.append((owner, first if first and not is_static else ""))
        else:
            self._methods.append(self._methods[-1] if self._methods else (None, ""))  # type: ignore[arg-type]

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._methods.pop()
        self._close()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._open(node)

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self._close()

    def _visit_comp(self, node: cst.BaseComp) -> None:
        self._open(node)

    def visit_ListComp(self, node: cst.ListComp) -> None:
        self._visit_comp(node)

    def leave_ListComp(self, original_node: cst.ListComp) -> None:
        self._close()

    def visit_SetComp(self, node: cst.SetComp) -> None:
        self._visit_comp(node)

    def leave_SetComp(self, original_node: cst.SetComp) -> None:
        self._close()

    def visit_DictComp(self, node: cst.DictComp) -> None:
        self._visit_comp(node)

    def leave_DictComp(self, original_node: cst.DictComp) -> None:
        self._close()

    def visit_GeneratorExp(self, node: cst.GeneratorExp) -> None:
        self._visit_comp(node)

    def leave_GeneratorExp(self, original_node: cst.GeneratorExp) -> None:
        self._close()

    # -- bindings --------------------------------------------------------------------------------------
    def _bind(
        self,
        name: str,
        kind: str,
        node: cst.CSTNode,
        value: Optional[cst.BaseExpression] = None,
        element: Optional[cst.BaseExpression] = None,
        position: tuple[int, ...] = (),
        qualified: Optional[str] = None,
        scope: Optional[Scope] = None,
    ) -> None:
        if not self._stack:
            return
        here = scope or self._stack[-1]
        if name in here.declared_global:
            here = here.module()
        self._order += 1
        binding = Binding(
            name, kind, node, here, self._order, value, element, position, qualified,
            self._suites[-1], self._branch_depth[-1] > 0, self._grad_off[-1],
        )
        if name in here.declared_nonlocal and here.parent is not None:
            here = here.parent.resolving(name)
            binding.scope = here
        here.bindings.setdefault(name, []).append(binding)

    def _bind_target(
        self,
        target: cst.BaseExpression,
        kind: str,
        node: cst.CSTNode,
        value: Optional[cst.BaseExpression],
        element: Optional[cst.BaseExpression] = None,
        position: tuple[int, ...] = (),
    ) -> None:
        target_type = type(target)  # exact types (see node_fields.node_kinds)
        if target_type is cst.Name:
            unpacked = bool(position)
            self._bind(target.value, "unpack" if unpacked and kind == "assign" else kind, node, value,
                       element if unpacked else None, position)
        elif target_type is cst.Tuple or target_type is cst.List:
            elements = _literal_elements(element if position else value)
            for index, item in enumerate(target.elements):
                inner = item.value
                source = elements[index] if elements is not None and index < len(elements) else None
                if type(inner) is cst.StarredElement or type(item) is cst.StarredElement:
                    source = None
                    inner = inner.value if type(inner) is cst.StarredElement else inner
                self._bind_target(inner, kind, node, value, source, position + (index,))
        elif target_type is cst.StarredElement:
            self._bind_target(target.value, kind, node, value, None, position + (-1,))
        elif target_type is cst.Attribute:
            self._bind_attribute(target, kind, node, value, element, position)

    def visit_Call(self, node: cst.Call) -> None:
        super().visit_Call(node)
        self._calls_visited += 1  # `Names.definition_of` reads the hand-overs below: its answers are keyed on it
        if type(node.func) is not cst.Name:
            return
        owner, self_name = self._methods[-1] if self._methods else (None, "")
        for index, arg in enumerate(node.args):
            if arg.star or arg.keyword is not None:
                break
            key = (node.func.value, index)
            if owner is not None and self_name and type(arg.value) is cst.Name and arg.value.value == self_name:
                self.instance_handed.setdefault(owner, set()).add(key)
            else:
                self.other_handed.add(key)

    def _bind_attribute(self, target, kind, node, value, element, position) -> None:
        if kind != "del":
            stored = value if kind == "assign" and not position else element if kind == "assign" else None
            self.attribute_stores.setdefault(target.attr.value, []).append(stored)
            self.attribute_store_targets.setdefault(target.attr.value, []).append(target)
        if not self._methods:
            return
        owner, self_name = self._methods[-1]
        if owner is None and type(target.value) is cst.Name:
            self._bind_parameter_attribute(target, kind, node, value, element, position)
            return
        if owner is None or not self_name or not (type(target.value) is cst.Name and target.value.value == self_name):
            return
        self._order += 1
        attribute = target.attr.value
        binding = Binding(
            attribute, "unpack" if position else kind, node, self._stack[-1], self._order, value,
            element if position else None, position, None, self._suites[-1], self._branch_depth[-1] > 0,
            self._grad_off[-1],
        )
        self.self_attributes.setdefault(owner, {}).setdefault(attribute, []).append(binding)

    def _bind_parameter_attribute(self, target, kind, node, value, element, position) -> None:
        """`module.mask = ...` in a module-level function whose parameter `module` is (an instance handed in)."""
        function = self._stack[-1].node if self._stack else None
        if type(function) is not cst.FunctionDef or self._stack[-1].parent is not self.module_scope:
            return
        params = [param.name.value for param in (*function.params.posonly_params, *function.params.params)]
        if target.value.value not in params:
            return
        self._order += 1
        binding = Binding(
            target.attr.value, "unpack" if position else kind, node, self._stack[-1], self._order, value,
            element if position else None, position, None, self._suites[-1], self._branch_depth[-1] > 0,
            self._grad_off[-1],
        )
        key = (function.name.value, params.index(target.value.value))
        self.parameter_attributes.setdefault(key, {}).setdefault(target.attr.value, []).append(binding)

    # A binding takes effect after its value is evaluated: in `h = cell(h)` the `h` read is the old one.
    def leave_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind_target(target.target, "assign", node, node.value)

    def leave_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind_target(node.target, "assign", node, node.value)

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind_target(node.target, "augment", node, node.value)

    def leave_NamedExpr(self, node: cst.NamedExpr) -> None:
        # a walrus in a comprehension binds in the enclosing function
        scope = self._stack[-1] if self._stack else None
        while scope is not None and isinstance(scope.node, cst.BaseComp):
            scope = scope.parent
        if type(node.target) is cst.Name:
            self._bind(node.target.value, "walrus", node, node.value, scope=scope)

    def visit_For(self, node: cst.For) -> None:
        self._bind_target(node.target, "for", node, node.iter)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind_target(node.target, "for", node, node.iter)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind_target(node.asname.name, "with", node, node.item)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None and type(node.name.name) is cst.Name:
            self._bind(node.name.name.value, "except", node)

    def visit_Import(self, node: cst.Import) -> None:
        for local, qualified, alias in imported_names(node):
            self._bind(local, "import", alias, qualified=qualified)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        for local, qualified, alias in imported_names(node):
            self._bind(local, "import", alias, qualified=qualified)

    def visit_Param(self, node: cst.Param) -> None:
        self._bind(node.name.value, "param", node, node.default)

    def visit_Del(self, node: cst.Del) -> None:
        self._bind_target(node.target, "del", node, None)

    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        if node.name is not None:
            self._bind(node.name.value, "match", node)

    def visit_MatchStar(self, node: cst.MatchStar) -> None:
        if node.name is not None:
            self._bind(node.name.value, "match", node)

    def visit_Global(self, node: cst.Global) -> None:
        if self._stack:
            self._stack[-1].declared_global.update(item.name.value for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        if self._stack:
            self._stack[-1].declared_nonlocal.update(item.name.value for item in node.names)

    def visit_Return(self, node: cst.Return) -> None:
        scope = self._stack[-1] if self._stack else None
        if scope is not None and type(scope.node) is cst.FunctionDef and node.value is not None:
            self.returns.setdefault(scope.node, []).append(node.value)
            if self._grad_off_context(node.value):
                self._mark_grad_off_maker()  # `return torch.no_grad()`: the factory's result decorates

    # -- uses ------------------------------------------------------------------------------------------
    def visit_Name(self, node: cst.Name) -> None:
        if self._stack:
            self._order += 1
            self.uses[node] = Use(self._stack[-1], self._order, self._suites[-1], self._grad_off[-1])

    def leave_Attribute_attr(self, node: cst.Attribute) -> None:
        self.uses.pop(node.attr, None)  # `x.attr`: only `x` is a variable

    def leave_Arg_keyword(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self.uses.pop(node.keyword, None)


def _literal_elements(value: Optional[cst.BaseExpression]) -> Optional[list[cst.BaseExpression]]:
    if type(value) in TUPLES_AND_LISTS:
        if any(type(e) is cst.StarredElement for e in value.elements):  # exact types (node_fields.node_kinds)
            return None
        return [e.value for e in value.elements]
    return None
