"""The model's `activations` part: which output activation an expression has had last."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.source.traversal import MergedVisitor


def _kind_of_probe(source: str) -> str | None:
    """The activation of the argument of the file's `probe(...)` call."""
    activation = _activation_of_probe(source)
    return None if activation is None else activation.kind


def _activation_of_probe(source: str):
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
    return model.activations.of(found[0])


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


_SOFTMAX_NET = """
import torch.nn as nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(8, 3), nn.Softmax(dim=-1))

    def forward(self, x):
        return self.mlp(x)

    def raw(self, x):
        return self.mlp[0](x)
"""


@pytest.mark.parametrize(
    "call, kind",
    [
        ("model = Net()\nprobe(model.forward(batch))", "softmax"),  # `forward` called by name runs the same layers
        ("probe(Net().forward(batch))", "softmax"),
        ("def update(self, batch):\n    probe(self(batch))", "softmax"),  # a method calling its own receiver
        ("def update(this, batch):\n    probe(this.forward(batch))", "softmax"),  # whatever the receiver is named
        ("def update(self, batch):\n    probe(self.raw(batch))", None),  # another method: not the forward
    ],
)
def test_a_model_called_through_forward_or_its_own_receiver_is_its_forward(call, kind):
    if call.startswith("def "):  # a method of Net
        body = "\n".join("    " + line for line in call.splitlines())
        source = _SOFTMAX_NET + "\n" + body + "\n"
    else:
        source = _SOFTMAX_NET + "\n\n" + call + "\n"
    assert _kind_of_probe(source) == kind


def test_calling_a_receiver_whose_class_has_its_own_call_is_not_its_forward():
    source = _SOFTMAX_NET.replace("    def raw(self, x):", "    def __call__(self, x):") + (
        "\n    def update(self, batch):\n        probe(self(batch))\n"
    )
    assert _kind_of_probe(source) is None


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


@pytest.mark.parametrize(
    "source, kind",
    [
        ("import torch\nimport torch.nn.functional as F\nprobe(torch.exp(F.log_softmax(x, dim=1)))", "softmax"),
        ("import torch.nn.functional as F\nlp = F.log_softmax(x, -1)\nprobe(lp.exp())", "softmax"),
        ("import torch as th\nprobe(th.exp(x.log_softmax(-1)).view(-1, 5))", "softmax"),
        ("import torch.nn.functional as F\np = F.softmax(x, -1)\nprobe(p.log())", "log_softmax"),
        ("import torch\nprobe(torch.exp(x))", None),  # exp of a value the code shows nothing about
        ("import torch\nprobe(torch.exp(torch.softmax(x, -1)))", None),  # exp of probabilities: another quantity
        ("import torch\nprobe(x.sigmoid().log())", "log_sigmoid"),  # a log-sigmoid, not a log-softmax
        ("import torch\nimport torch.nn.functional as F\nprobe(torch.exp(F.logsigmoid(x)))", "sigmoid"),
        ("import torch.nn.functional as F\nls = F.logsigmoid(z)\nprobe(ls.exp().view(-1))", "sigmoid"),
        ("from torch import nn\nact = nn.LogSigmoid()\nprobe(act(h).exp())", "sigmoid"),
        ("import torch\nprobe(torch.exp(torch.sigmoid(x)))", None),  # exp of probabilities: another quantity
        ("probe(x.exp(2))", None),  # a user method `exp` with an argument
    ],
)
def test_exp_and_log_undo_each_other_so_equivalent_spellings_give_the_same_kind(source, kind):
    assert _kind_of_probe(source) == kind


def test_a_model_whose_forward_exponentiates_a_log_softmax_outputs_probabilities():
    source = """
        import torch.nn as nn
        import torch.nn.functional as F

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(8, 3)

            def forward(self, x):
                return F.log_softmax(self.fc(x), dim=-1).exp()

        probe(Net()(batch))
    """
    assert _kind_of_probe(source) == "softmax"


@pytest.mark.parametrize(
    "source, over",
    [
        ("import torch.nn.functional as F\nprobe(F.log_softmax(F.softmax(x, 2), 2))", "softmax"),
        ("import torch\np = torch.sigmoid(z)\nprobe(p.log_softmax(-1))", "sigmoid"),
        (
            "import torch.nn as nn\nimport torch.nn.functional as F\n"
            "class Net(nn.Module):\n    def forward(self, x):\n        return F.softmax(x, -1)\n"
            "net = Net()\nprobe(F.log_softmax(net(b), -1))",
            "softmax",
        ),
        ("import torch.nn as nn\nlsm = nn.LogSoftmax(dim=2)\nprobe(lsm(x.softmax(2)))", "softmax"),
        ("import torch.nn.functional as F\nprobe(F.log_softmax(model(x), 2))", None),  # unknown scores
        (
            "import torch.nn as nn\nimport torch.nn.functional as F\n"
            "class Head(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 3)\n"
            "    def forward(self, p):\n        return F.log_softmax(self.fc(p), -1)\n"
            "head = Head()\nprobe(head(F.softmax(x, -1)))",
            None,  # a model fed probabilities as features: its own scores are normalised once
        ),
        ("import torch.nn.functional as F\nprobe(F.log_softmax(F.log_softmax(x, 2), 2))", None),  # idempotent
    ],
)
def test_a_log_softmax_of_probabilities_says_what_was_normalised_twice(source, over):
    found = _activation_of_probe(source)
    assert found is not None and found.kind == "log_softmax"
    assert found.over == over
