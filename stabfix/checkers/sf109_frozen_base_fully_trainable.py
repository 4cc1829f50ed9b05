"""SF109 frozen-base-fully-trainable: adapter (LoRA) fine-tuning whose optimizer trains the whole base model.

A query over the model: `events` gives the optimizer constructions, `parameters.all_parameters_of`
whether one receives every parameter of a model (`model.parameters()`, or filtered only by
`requires_grad`), and `model.adapters` whether that model carries adapter layers (built by a same-file
adapter class, injector or library layer, or by an imported builder whose name says adapter) and whether
a freeze of the base always runs before the optimizer is built (`requires_grad_(False)` over the base
parameters, `mark_only_lora_as_trainable`, peft's `get_peft_model`...). Report only: which parameters
should train is the user's decision; `stabfix verify` budgets the trainable-parameter count.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from stabfix.checker import Checker
from stabfix.fixes.syntax import code_for
from stabfix.model.domain.adapters import AdapterFacts
from stabfix.model.flow.parameters import AllParameters, all_parameters_of, trainer_parameters
from stabfix.model.source.names import Names
from stabfix.shape import Shape


class FrozenBaseFullyTrainable(Checker):
    code = "SF109"
    tokens = ("parameters(", "Trainer(")
    # adapter layers: a weight of their own, or a library/name that says so (a pre-filter, not a decision)
    also_needs = (("Parameter(", "lora", "LoRA", "Lora", "adapter", "Adapter", "peft"),)
    needs = ("names", "events")

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:
        # reported on an optimizer given a model's whole `.parameters()` (spelled in this file), or a `Trainer(model=...)`
        if any(not call.args and not call.keywords for call in shape.calls("parameters")):
            return True
        return any(kw.arg == "model" for call in shape.all_calls() for kw in call.keywords)

    def __init__(self, context) -> None:
        super().__init__(context)
        self.trainers: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        if any(arg.keyword is not None and arg.keyword.value == "model" for arg in node.args):
            self.trainers.append(node)  # a Hugging Face `Trainer(model=...)` builds its own optimizer

    def leave_Module(self, original_node: cst.Module) -> None:
        names, events = self.model.names, self.model.events
        assert names is not None and events is not None
        built: list[tuple[cst.Call, AllParameters, Optional[cst.FunctionDef], Optional[cst.ClassDef]]] = []
        for event in events.of_kind("optimizer"):
            source = all_parameters_of(event.node, names)  # type: ignore[arg-type]
            if source is not None:
                built.append((event.node, source, event.site.function, event.site.cls))  # type: ignore[arg-type]
        for call in self.trainers:
            source = trainer_parameters(call, names)
            if source is not None:
                built.append((call, source, *_position(source.model, names)))
        if not built:
            return
        facts = AdapterFacts(original_node, names, self.model.tree.calls)
        for call, source, function, cls in built:
            evidence = facts.carries_adapters(source.model, function, cls)
            if evidence is None or facts.frozen_before(call, source.model, function, cls):
                continue
            self.report(call, _message(call, source.model, evidence, source.trainable_filter))


def _position(expr: cst.BaseExpression, names: Names) -> tuple[Optional[cst.FunctionDef], Optional[cst.ClassDef]]:
    """The function and class a model argument is read in (its root name's scope)."""
    root = expr
    while type(root) in (cst.Attribute, cst.Call, cst.Subscript):
        root = root.func if type(root) is cst.Call else root.value
    scope = names.scope_of(root)
    while scope is not None and type(scope.node) not in (cst.FunctionDef, cst.Module):
        scope = scope.parent
    function = scope.node if scope is not None and type(scope.node) is cst.FunctionDef else None
    return function, (names.enclosing_class(scope) if scope is not None else None)


def _message(call: cst.CSTNode, model: cst.BaseExpression, evidence: str, filtered: bool) -> str:
    assert type(call) is cst.Call
    spelled = code_for(model)
    what = "every still-trainable parameter" if filtered else "every parameter"
    return (
        f"`{code_for(call.func)}` trains {what} of `{spelled}`, which carries adapters ({evidence}), but no "
        f"freeze of its base always runs first; freeze the base (`requires_grad_(False)`) and pass only "
        f"`p.requires_grad` parameters"
    )
