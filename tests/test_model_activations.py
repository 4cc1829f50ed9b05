"""The model's `activations` part: which output activation an expression has had last."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.traversal import MergedVisitor


def _kind_of_probe(source: str) -> str | None:
    """The activation of the argument of the file's `probe(...)` call."""
    model = FileModel(("activations",))
    module = cst.parse_module(textwrap.dedent(source))
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor(model.visitors())])
    calls = [node for node in model.names.uses if node.value == "probe"]
    assert calls, "the source must call probe(...)"
    found = []

    class _Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name) and node.func.value == "probe":
                found.append(node.args[0].value)

    module.visit(_Finder())
    activation = model.activations.of(found[0])
    return None if activation is None else activation.kind


@pytest.mark.parametrize(
    "source, kind",
    [
        ("import torch.nn.functional as F\nprobe(F.softmax(x, dim=1))", "softmax"),
        ("import torch as t\nprobe(t.log_softmax(x, -1))", "log_softmax"),
        ("from torch.special import expit\nprobe(expit(x))", "sigmoid"),
        ("probe(x.sigmoid().view(-1))", "sigmoid"),
        ("import torch\nimport torch.nn.functional as F\nprobe(torch.log(F.softmax(x, 1)))", "log_softmax"),
        ("import torch.nn as nn\nhead = nn.Linear(4, 2)\nprobe(head(h)[:, 0])", "logits"),
        ("import torch.nn as nn\nnet = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())\nprobe(net(x))", "sigmoid"),
        ("import torch.nn as nn\nprobe(nn.Softmax(dim=1)(x))", "softmax"),
    ],
)
def test_an_activation_is_recognised_however_it_is_spelled(source, kind):
    assert _kind_of_probe(source) == kind


def test_names_are_followed_and_every_reaching_binding_must_agree():
    assert _kind_of_probe("import torch\np = torch.softmax(z, -1)\nq = p\nprobe(q)") == "softmax"
    branchy = """
        import torch
        out = model(x)
        if cond:
            out = torch.softmax(out, -1)
        probe(out)
    """
    assert _kind_of_probe(branchy) == "softmax"  # on the path through the `if`
    disagreeing = """
        import torch
        if cond:
            out = torch.softmax(z, -1)
        else:
            out = torch.log_softmax(z, -1)
        probe(out)
    """
    assert _kind_of_probe(disagreeing) is None


def test_a_same_file_model_class_is_followed_into_its_forward_and_held_modules():
    source = """
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 3)
                self.act = nn.Softmax(dim=-1)

            def forward(self, x):
                h = self.fc(x)
                return self.act(h)

        model = Net()
        probe(model(batch))
    """
    assert _kind_of_probe(source) == "softmax"


@pytest.mark.parametrize(
    "rebinding, kind",
    [
        ("        self.net = nn.Sequential(self.net, nn.Sigmoid())\n", "sigmoid"),
        ("        self.net = nn.Sequential(nn.Dropout(0.1), self.net)\n", "logits"),
        ("        if probabilities:\n            self.net = nn.Sequential(self.net, nn.Sigmoid())\n", None),
        ("        if probabilities:\n            self.net = nn.Sequential(nn.Flatten(), self.net)\n", "logits"),
    ],
)
def test_a_held_module_rebound_around_itself_is_followed(rebinding, kind):
    source = (
        "import torch.nn as nn\n\n"
        "class Net(nn.Module):\n"
        "    def __init__(self, probabilities):\n"
        "        super().__init__()\n"
        "        self.net = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))\n"
        f"{rebinding}"
        "    def forward(self, x):\n"
        "        return self.net(x)\n\n"
        "probe(Net(True)(batch))\n"
    )
    assert _kind_of_probe(source) == kind


def test_unknown_values_stay_unknown():
    assert _kind_of_probe("from lib import build\nmodel = build()\nprobe(model(x))") is None
    assert _kind_of_probe("def f(logits):\n    probe(logits)") is None
    shadowed = "def softmax(x):\n    return x\nprobe(softmax(x))"
    assert _kind_of_probe(shadowed) is None
