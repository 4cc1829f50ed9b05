"""`stabfix.model.flow.grad_reach`: whether statements may use autograd, calls the file cannot see into included
(what decides SF106's fix safety)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.flow.grad_reach import GradReach
from stabfix.model.source.traversal import MergedVisitor


def _first(source: str, function: str = "evaluate", receiver: str = "model"):
    module = cst.parse_module(textwrap.dedent(source))
    model = FileModel(needs=("modes",))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    definition = next(s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == function)
    statements = list(definition.body.body)
    forwards = {id(call) for call, _ in model.modes.scan(statements, receiver).forwards}
    reach = GradReach(model.names, model.values, model.modules.is_module, model.modes.is_update)
    return reach.first(statements, forwards, receiver)


HEADER = "import torch\nimport numpy as np\nimport torch.nn.functional as F\nfrom attacks import pgd\n"


@pytest.mark.parametrize(
    "body",
    [
        "correct = (model(x).argmax(-1) == y).sum().item()",
        "probs = F.softmax(model(x.to('cuda')), -1).cpu().numpy()",
        "scores = []\nscores.append(np.mean([1.0]))\nprint(len(scores), max(scores))",
        "out = model(x)\nlogger.info('val %s', out.mean().item())",
        "for name, batch in batches.items():\n    model(batch).float().mean()",
        "model.to('cpu')\nstate = model.state_dict()",
        "return top1(model(x), y)",
        "with torch.autograd.no_grad():\n    model(x)",
    ],
)
def test_code_that_cannot_differentiate(body):
    source = HEADER + "def top1(p, y):\n    return (p.argmax(-1) == y).float().mean()\n"
    source += "def evaluate(model, x, y, batches, logger):\n" + textwrap.indent(body, "    ") + "\n"
    assert _first(source) is None


@pytest.mark.parametrize(
    "body,reason",
    [
        ("model(x).sum().backward()", "differentiates"),
        ("torch.autograd.grad(model(x).sum(), x)", "differentiates"),
        ("x.requires_grad_()\nmodel(x)", "asks for gradients"),
        ("print(model.fc.weight.grad)", "reads a gradient"),
        ("with torch.enable_grad():\n    model(x)", "uses autograd"),
        ("x_adv = pgd(model, x, y)", "`pgd(...)` runs code this file cannot see into"),
        ("x_adv = attack.perturb(x, y)", "`attack.perturb(...)` runs code this file cannot see into"),
        ("loss = criterion(model(x), y)", "`criterion(...)` runs code this file cannot see into"),
        ("return fgsm(model, x, y)", "`fgsm(...)` runs code where"),
        # builtins that call what they are given, and a tensor method's name on an object of unknown type
        ("outs = list(map(fgsm_step, [x]))", "`map(...)` runs code this file cannot see into"),
        ("best = max([x], key=fgsm_step)", "`max(...)` calls the function it is given"),
        ("x_adv = attack.sum(model, x)", "`attack.sum(...)` runs code this file cannot see into"),
    ],
)
def test_code_that_may_differentiate(body, reason):
    source = HEADER + "def fgsm(model, x, y):\n    x.requires_grad_(True)\n    F.cross_entropy(model(x), y).backward()\n"
    source += "    return x.grad.sign()\n"
    source += "def evaluate(model, x, y, attack, criterion):\n" + textwrap.indent(body, "    ") + "\n"
    found = _first(source)
    assert found is not None and reason in found


def test_nested_functions_run_later_and_recursion_ends():
    source = HEADER + textwrap.dedent(
        """
        def again(model, x):
            return again(model, x)
        def evaluate(model, x):
            def later():
                model(x).sum().backward()
            return again(model, x)
        """
    )
    assert _first(source) is None
