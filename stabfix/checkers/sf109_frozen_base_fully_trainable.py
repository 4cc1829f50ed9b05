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

import libcst as cst

from stabfix.checker import Checker
from stabfix.fixes.syntax import code_for
from stabfix.model.adapters import AdapterFacts
from stabfix.model.events import OptimizerBuilt
from stabfix.model.parameters import all_parameters_of


class FrozenBaseFullyTrainable(Checker):
    code = "SF109"
    tokens = ("parameters(",)
    # adapter layers: a weight of their own, or a library/name that says so (a pre-filter, not a decision)
    also_needs = (("Parameter(", "lora", "LoRA", "Lora", "adapter", "Adapter", "peft"),)
    needs = ("names", "events")

    def leave_Module(self, original_node: cst.Module) -> None:
        names, events = self.model.names, self.model.events
        assert names is not None and events is not None
        built = events.of_kind("optimizer")
        if not built:
            return
        facts = AdapterFacts(original_node, names)
        for event in built:
            assert isinstance(event, OptimizerBuilt)
            source = all_parameters_of(event.node, names)  # type: ignore[arg-type]
            if source is None:
                continue
            function, cls = event.site.function, event.site.cls
            evidence = facts.carries_adapters(source.model, function, cls)
            if evidence is None or facts.frozen_before(event.node, source.model, function, cls):
                continue
            self.report(event.node, _message(event.node, source.model, evidence, source.trainable_filter))


def _message(call: cst.CSTNode, model: cst.BaseExpression, evidence: str, filtered: bool) -> str:
    assert isinstance(call, cst.Call)
    spelled = code_for(model)
    what = "every parameter that still requires grad" if filtered else "every parameter"
    return (
        f"`{code_for(call.func)}` trains {what} of `{spelled}`, which carries adapters ({evidence}), with no "
        f"freeze of its base before it on every path; call `requires_grad_(False)` on the base parameters "
        f"first and pass only `p.requires_grad` ones"
    )
