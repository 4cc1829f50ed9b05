"""Structural gates of gates1's rules on shapes their bad examples do not show: each case here is reported by the
rule, so its gate must let the file by; the near misses are files the gate skips (no libcst parse)."""

from __future__ import annotations

import ast

import pytest

from stabfix.catalog import load_catalog
from stabfix.checkers import checker_classes
from stabfix.engine import analyse_text
from stabfix.shape import Shape

CLASSES = checker_classes()
CATALOG = load_catalog()
NET = "import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def __init__(self, n, layers):\n        super().__init__()\n"

REPORTED = {
    # attributes bound by unpacking a tuple of displays
    "SF413-unpacked": NET + "        self.a, self.b = [nn.Linear(2, 2)], [nn.Linear(2, 2)]\n",
    # an empty list bound through a local of another name, filled through the attribute
    "SF413-filled-through-attribute": NET + "        blocks = []\n        self.stages = blocks\n        self.stages.append(nn.Linear(2, 2))\n",
    "SF413-extended-by-generator": NET + "        self.stages = []\n        self.stages.extend(nn.Linear(2, 2) for _ in range(n))\n",
    "SF413-name-bound-to-a-module": NET + "        block = nn.Linear(2, 2)\n        self.stages = [block] * n\n",
    "SF413-module-level-list": "import torch.nn as nn\nHEADS = [nn.Linear(2, 2)]\n\n\nclass Net(nn.Module):\n"
                               "    def __init__(self):\n        super().__init__()\n        self.heads = HEADS\n",
    # the literal data comes first as a keyword when no positional argument is given
    "SF207-keyword-data": "import torch\n\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n"
                          "        return x * torch.tensor(data=[1.0, 2.0], device=x.device)\n",
    # a `strict` flag given positionally, the result dropped
    "SF412-positional-flag": "import torch\n\n\ndef load(model, path):\n    model.load_state_dict(torch.load(path), False)\n",
}

SKIPPED = {
    # a parameter, a list of sizes, a list filled with loop variables and `dict(...)`s: nothing that can hold a module
    "SF413": NET + "        self.layers = layers\n        self.sizes = [1, 2]\n        self.info = [dict(a=1)]\n"
                   "        self.ends = []\n        for end in layers:\n            self.ends.append(end)\n",
    # moves of parameters only, at module level or of values the file never assigns
    "SF207": "import torch\n\n\ndef forward(batch, device):\n    return batch.to(device)\n",
    # a factory that names its device
    "SF205": "import torch\n\n\ndef forward(x):\n    return torch.zeros(3, device=x.device).to(x.dtype) + x.cuda()\n",
    "SF412": "def load(model, sd):\n    missing = model.load_state_dict(sd, strict=True)\n    return missing\n",
}


def _allows(code: str, text: str) -> bool:
    return CLASSES[code].shape_allows(Shape(ast.parse(text), text))


@pytest.mark.parametrize("case", sorted(REPORTED))
def test_a_case_the_rule_reports_passes_its_gate(case):
    code, text = case.split("-", 1)[0], REPORTED[case]
    assert _allows(code, text)
    findings = analyse_text(text, "case.py", [CLASSES[code]], CATALOG).findings
    assert len(findings) >= 1  # the rule does report it: the gate must not skip it


@pytest.mark.parametrize("code", sorted(SKIPPED))
def test_a_near_miss_is_skipped_by_the_gate(code):
    assert not _allows(code, SKIPPED[code])
    assert analyse_text(SKIPPED[code], "case.py", [CLASSES[code]], CATALOG).findings == []
