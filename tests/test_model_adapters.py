"""Adapter layers, the models that carry them, freezes (`model.adapters`) and what an optimizer was built from."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.domain.adapters import AdapterFacts
from stabfix.model.flow.parameters import all_parameters_of

LORA = """
import torch
from torch import nn

class LoRA(nn.Module):
    def __init__(self, base, r=4):
        super().__init__()
        self.base = base
        self.a = nn.Parameter(torch.zeros(r, base.in_features))
        self.b = nn.Parameter(torch.zeros(base.out_features, r))

    def forward(self, x):
        return self.base(x) + x @ self.a.t() @ self.b.t()

class Gate(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn
        self.g = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        return x + self.g * self.fn(x)

class Head(nn.Module):
    def __init__(self, backbone):
        super().__init__()
        self.backbone = backbone
        self.h1 = nn.Linear(8, 8)
        self.h2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.h2(self.h1(self.backbone(x)))
"""


def _facts(source: str) -> tuple[AdapterFacts, cst.Module, FileModel]:
    module = cst.parse_module(textwrap.dedent(source))
    model = FileModel(needs=("names",))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched(model.visitors())
    return AdapterFacts(module, model.names), module, model  # type: ignore[arg-type]


def _optimizer(module: cst.Module) -> tuple[cst.Call, cst.FunctionDef]:
    function = next(node for node in module.body if isinstance(node, cst.FunctionDef))
    last = function.body.body[-1].body[0]  # type: ignore[attr-defined]
    return last.value, function


def test_adapter_layers_are_recognised_by_what_they_do():
    facts, _, _ = _facts(LORA)
    assert facts.adapter_classes == {"LoRA"}  # not the one-weight gate, not the head on a backbone


def test_a_stored_size_is_not_a_wrapped_module():
    facts, _, _ = _facts(
        """
        from torch import nn

        class Dueling(nn.Module):
            def __init__(self, n_actions):
                super().__init__()
                self.n_actions = n_actions
                self.value = nn.Linear(8, 1)
                self.adv = nn.Linear(8, n_actions)

            def forward(self, h):
                a = self.adv(h).view(-1, self.n_actions)
                return self.value(h) + a - a.mean(dim=1, keepdim=True)

        class WeightLoRA(nn.Module):
            def __init__(self, base, r=4):
                super().__init__()
                self.base = base
                self.a = nn.Linear(base.in_features, r, bias=False)
                self.b = nn.Linear(r, base.out_features, bias=False)

            def forward(self, x):
                return nn.functional.linear(x, self.base.weight, self.base.bias) + self.b(self.a(x))
        """
    )
    assert facts.adapter_classes == {"WeightLoRA"}


@pytest.mark.parametrize(
    "setup,frozen",
    [
        ("    model.fc = LoRA(model.fc)\n", False),
        ("    model.requires_grad_(False)\n    model.fc = LoRA(model.fc)\n", True),
        ("    model.fc = LoRA(model.fc)\n    if flag:\n        model.requires_grad_(False)\n", False),
        ("    model.fc = LoRA(model.fc)\n    for n, p in model.named_parameters():\n        if 'a' not in n:\n"
         "            p.requires_grad = False\n", True),
        ("    model.fc = LoRA(model.fc)\n    freeze_backbone(model)\n", True),
        ("    model.fc = LoRA(model.fc)\n    for n, p in model.named_parameters():\n        p.requires_grad = 'a' in n\n", True),
    ],
)
def test_a_freeze_counts_only_when_it_always_runs_before(setup, frozen):
    facts, module, _ = _facts(LORA + "\ndef build(model, flag):\n" + setup + "    opt = torch.optim.AdamW(model.parameters())\n")
    call, function = _optimizer(module)
    model_expr = call.args[0].value.func.value  # type: ignore[attr-defined]
    assert facts.carries_adapters(model_expr, function, None) is not None
    assert facts.frozen_before(call, model_expr, function, None) is frozen


def test_a_model_built_by_an_imported_adapter_builder_carries_adapters():
    facts, module, _ = _facts(
        "import torch\nfrom lora_model import load_policy\n\ndef build(cfg):\n    model = load_policy(cfg)\n"
        "    opt = torch.optim.AdamW(model.parameters())\n"
    )
    call, function = _optimizer(module)
    assert "load_policy" in facts.carries_adapters(call.args[0].value.func.value, function, None)  # type: ignore


@pytest.mark.parametrize(
    "params,model,filtered",
    [
        ("model.parameters()", "model", False),
        ("list(self.net.parameters())", "self.net", False),
        ("[{'params': model.parameters(), 'lr': 1e-3}]", "model", False),
        ("filter(lambda p: p.requires_grad, model.parameters())", "model", True),
        ("[p for p in model.parameters() if p.requires_grad]", "model", True),
        ("[p for n, p in model.named_parameters() if 'lora' in n]", None, False),
        ("model.head.parameters()", "model.head", False),
    ],
)
def test_what_an_optimizer_was_built_from(params, model, filtered):
    _, module, file_model = _facts(f"import torch\ndef f(model):\n    opt = torch.optim.AdamW({params})\n")
    call, _ = _optimizer(module)
    found = all_parameters_of(call, file_model.names)  # type: ignore[arg-type]
    if model is None:
        assert found is None
    else:
        assert cst.Module(body=[]).code_for_node(found.model) == model and found.trainable_filter is filtered


def test_a_freeze_behind_the_same_guard_as_the_optimizer_counts():
    facts, module, _ = _facts(
        LORA + "\nif __name__ == '__main__':\n    model.fc = LoRA(model.fc)\n    model.requires_grad_(False)\n"
        "    opt = torch.optim.AdamW(model.parameters())\n"
    )
    guard = module.body[-1]
    call = guard.body.body[-1].body[0].value  # type: ignore[attr-defined]
    model_expr = call.args[0].value.func.value
    assert facts.carries_adapters(model_expr, None, None) is not None
    assert facts.frozen_before(call, model_expr, None, None)
