"""Pre-filter patterns and sharper groups: a rule may ask the file for a necessary condition one token cannot say
(SF413: a class with a base; SF304: the tiny epsilon written as a number; SF409: `requires_grad` or a backward
pass; SF205/SF207: a training step or a `forward`). Such a gate skips files (no libcst parse, no model) where the rule cannot fire, and never one it reports on."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from stabfix.checkers import checker_classes
from stabfix.model.training.step_recognition import STEP_TOKENS

CLASSES = checker_classes()
ROOT = Path(__file__).resolve().parent.parent
SHARPENED = ("SF205", "SF207", "SF304", "SF409", "SF413")


def selected(text: str) -> set[str]:
    """The rules the text gates let by (structural gates come after: tests/test_shape_gates.py)."""
    return {cls.code for cls in CLASSES.values() if cls.may_fire(text)}


def test_every_pattern_is_a_regular_expression():
    import re

    for cls in CLASSES.values():
        if cls.pattern:
            re.compile(cls.pattern)


def test_a_class_without_a_base_is_never_a_module_class():
    header = "import torch\nimport torch.nn as nn\n\n"
    assert "SF413" not in selected(header + "class Config:\n    layers = [nn.Linear(2, 2)]\n")
    assert "SF413" not in selected(header + "class Config():\n    pass\n")
    assert "SF413" in selected(header + "class Net(nn.Module):\n    pass\n")
    assert "SF413" in selected(header + "class Net(\n    nn.Module,\n):\n    pass\n")
    assert "SF413" in selected(header + "class Net \\\n        (Base):\n    pass\n")
    assert "SF413" in selected(header + "class Net[T](Base):\n    pass\n")


def test_an_epsilon_token_must_be_part_of_a_number():
    # `e-1` of `size-1` is no epsilon
    assert "SF304" not in selected("import torch\nn = size-1\ny = x / x.std()\n")
    for epsilon in ("1e-8", "1E-10", "1e-1 ** 8", "0.1e-1 * 1e-7", "1 / 1e8 + 0*size-1", "10 ** -8 + 0*size-1",
                    "0.00000001 + 0*size-1", "1 / 100000000 + 0*size-1"):
        assert "SF304" in selected(f"import torch\ny = x / (x.std() + {epsilon})\n"), epsilon


def test_a_cut_spells_requires_grad_and_a_copied_loss_needs_a_backward_pass():
    assert "SF409" not in selected("import torch\nt = torch.tensor([1.0, 2.0]).detach()\n")
    assert "SF409" in selected("import torch\nt = torch.tensor([l1, l2]).sum()\nt.backward()\n")
    assert "SF409" in selected("p = Variable(out.data, requires_grad=True)\n")


def test_a_move_is_reported_only_on_a_step_or_in_a_forward():
    script = "import torch\nmask = torch.ones(4, 4)\nmask = mask.cuda()\nprint(mask.sum())\n"
    assert not {"SF205", "SF207"} & selected(script)
    assert {"SF205", "SF207"} <= selected(script + "for x in loader:\n    opt.step()\n")
    assert {"SF205", "SF207"} <= selected(script + "class Net(nn.Module):\n    def forward(self, x):\n        return x\n")
    for code in ("SF205", "SF207"):
        assert (*STEP_TOKENS, "forward") in CLASSES[code].also_needs, code


def _known_misses() -> set[str]:
    return set(yaml.safe_load((ROOT / "tests" / "redteam" / "known_failures.yaml").read_text()) or {})


def _bad_texts(code: str) -> list[tuple[str, str]]:
    """The rule's bad examples and its one-file red-team bad cases: each is reported, so each passes the gate."""
    texts = []
    spec = yaml.safe_load(next((ROOT / "rules").glob(f"{code}-*.yaml")).read_text())
    for example in spec["examples"]["bad"]:
        texts.append((example["name"], example["code"]))
    misses = _known_misses()
    for path in sorted((ROOT / "tests" / "redteam" / code).glob("bad_*.py")):
        if f"{code}/{path.name}" not in misses:
            texts.append((path.name, path.read_text()))
    return texts


@pytest.mark.parametrize("code", SHARPENED)
def test_every_reported_case_of_the_rule_passes_its_gate(code):
    cases = _bad_texts(code)
    assert len(cases) > 5
    skipped = [where for where, text in cases if not CLASSES[code].may_fire(text)]
    assert skipped == []
