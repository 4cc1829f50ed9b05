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
    # a class whose base is a module class of the file; a layer moved; tensors made to require grad (session 26)
    "SF413-base-of-the-file": "import torch.nn as nn\n\n\nclass Base(nn.Module):\n    pass\n\n\nclass Net(Base):\n"
                              "    def __init__(self, d):\n        super().__init__()\n        self.layers = [nn.Linear(2, 2).to(d)]\n",
    "SF413-marked-tensor": NET + "        self.w = torch.zeros(3)\n        self.w.requires_grad_()\n",
    "SF413-trainable-tensor": NET + "        self.w = torch.randn(3, requires_grad=True)\n",
    "SF413-renamed-parameter": "import torch\nfrom torch.nn import Module, Parameter as P\n\n\nclass Net(Module):\n"
                               "    def __init__(self):\n        super().__init__()\n        self.ws = [P(torch.ones(2))]\n",
    # torch's checkpoint renamed, or reached through its module
    "SF415-renamed": "from torch.utils.checkpoint import checkpoint as ckpt\nfrom torch.utils.data import DataLoader\n\n"
                     "for x, y in DataLoader(data):\n    ckpt(model.trunk, x).sum().backward()\n",
    "SF415-module-attribute": "import torch.utils.checkpoint as cp\nfrom torch.utils.data import DataLoader\n\n"
                              "for x, y in DataLoader(data):\n    cp.checkpoint(model.trunk, x).sum().backward()\n",
    # a collective renamed by its import, under a rank condition
    "SF504-renamed-collective": "from torch.distributed import barrier as sync_point\n\n\ndef save(rank):\n"
                                "    if rank == 0:\n        sync_point()\n",
    # torch's functional dropout renamed, in a module's forward
    "SF414-renamed": "import torch\nfrom torch.nn.functional import dropout as drop\n\n\nclass Net(torch.nn.Module):\n"
                     "    def forward(self, x):\n        return drop(x, 0.5)\n",
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


NEAR_MISSES = {  # (session 26) each reads like its rule's shape, but the rule cannot report it
    # a `checkpoint` of the project's own (timm's `_manipulate.checkpoint`): not torch's, whatever it runs
    "SF415-own-wrapper": "from ._manipulate import checkpoint\nfrom torch.utils.data import DataLoader\n\n"
                         "for x, y in DataLoader(data):\n    checkpoint(model.trunk, x).sum().backward()\n",
    # torch's `gather` and functools' `reduce` under a rank condition: library functions, no collectives
    "SF504-library-gather-and-reduce": "import functools\nimport torch\n\n\ndef log(rank, x, i):\n    if rank == 0:\n"
                                       "        return torch.gather(x, 1, i), functools.reduce(max, [1, 2])\n",
    # a module's own dropout layer called in `forward` (`self.dropout(x)`): it follows the mode
    "SF414-dropout-layer": "import torch\n\n\nclass Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                           "        self.dropout = torch.nn.Dropout(0.5)\n\n    def forward(self, x):\n        return self.dropout(x)\n",
    # a class whose base is a dataset, not a module
    "SF413-dataset": "import torch\nfrom torch.utils.data import IterableDataset\n\n\nclass Data(IterableDataset):\n"
                     "    def __init__(self, paths):\n        self.items = [torch.load(p) for p in paths]\n",
    # lists of what functions and methods return: sizes, indices
    "SF413-function-results": NET + "        self.pads = [pad_of(3)] * 4\n        self.ends = [layers.index(n) for n in layers]\n"
                                    "\n\ndef pad_of(k):\n    return k // 2\n",
    # an attribute frozen in place, a parameter that does not require grad: no tensor is made trainable
    "SF413-frozen": NET + "        self.embed = nn.Embedding(3, 2)\n        self.embed.requires_grad = False\n"
                          "        self.scale = nn.Parameter(torch.ones(2), requires_grad=False)\n",
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


@pytest.mark.parametrize("case", sorted(NEAR_MISSES))
def test_a_near_miss_of_session_26_is_skipped_and_the_rule_silent_there(case, monkeypatch):
    code, text = case.split("-", 1)[0], NEAR_MISSES[case]
    assert not _allows(code, text)
    monkeypatch.setattr(CLASSES[code], "shape_allows", classmethod(lambda cls, shape: True))  # the skip loses nothing
    assert analyse_text(text, "pkg/case.py", [CLASSES[code]], CATALOG).findings == []
