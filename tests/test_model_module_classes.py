"""The model's `classes` part: which classes are nn.Module subclasses (through bases of the file and of other
scanned files), what an expression holds (a module, an optimizer, another object), and what a container
element or an attribute value is (a module, a parameter, a fresh tensor made to require grad)."""

from __future__ import annotations

import textwrap

import libcst as cst

from stabfix.model import FileModel
from stabfix.model.source.traversal import walk
from stabfix.project import Project, ProjectIndex


def _classes(source: str, others: dict[str, str] | None = None):
    text = textwrap.dedent(source)
    project = None
    if others is not None:
        sources = {path: textwrap.dedent(code) for path, code in others.items()} | {"main.py": text}
        project = Project(ProjectIndex.from_sources(sources)).view("/stabfix-sources/main.py")
    module = cst.parse_module(text)
    model = FileModel(needs=("classes",), project=project)
    walk(module, model.visitors())
    defs = {node.name.value: node for node in module.body if isinstance(node, cst.ClassDef)}
    return module, model.classes, defs


def _expr(module: cst.Module, text: str) -> cst.BaseExpression:
    """The expression of the assignment whose source is `text`'s right-hand side, or the call statement `text`."""
    found = []

    class Find(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            if module.code_for_node(node.value) == text:
                found.append(node.value)

        def visit_Expr(self, node: cst.Expr) -> None:
            if isinstance(node.value, cst.Call) and module.code_for_node(node.value.func) == text:
                found.append(node.value.func.value)

    module.visit(Find())
    assert found, text
    return found[0]


def test_module_classes_through_bases_of_the_file_and_aliases():
    _, classes, defs = _classes(
        """
        import torch
        from torch import nn as tnn
        import lightning as L
        from dataclasses import dataclass

        class Base(tnn.Module):
            pass

        class Child(Base):
            pass

        class Lit(L.LightningModule):
            pass

        class Seq(torch.nn.Sequential):
            pass

        class Plain:
            pass

        class PlainChild(Plain, object):
            pass

        @dataclass
        class Config:
            sizes: list

        class Unknown(SomeLibraryBase):
            pass
        """
    )
    kinds = {name: classes.class_kind(node) for name, node in defs.items()}
    assert kinds == {"Base": "module", "Child": "module", "Lit": "module", "Seq": "module", "Plain": "other",
                     "PlainChild": "other", "Config": "other", "Unknown": None}


def test_a_base_of_another_file_decides_and_another_framework_is_not_torch():
    _, classes, defs = _classes(
        """
        import mlx.nn as mnn
        from models.base import BaseModel, Helper

        class Net(BaseModel):
            pass

        class Tool(Helper):
            pass

        class MlxNet(mnn.Module):
            pass
        """,
        {
            "models/__init__.py": "",
            "models/base.py": """
                import torch.nn as nn

                class Root(nn.Module):
                    pass

                class BaseModel(Root):
                    pass

                class Helper:
                    pass
                """,
        },
    )
    assert classes.class_kind(defs["Net"]) == "module"  # two classes deep in the other file
    assert classes.class_kind(defs["Tool"]) == "other"
    assert classes.class_kind(defs["MlxNet"]) is None


def test_what_an_expression_holds():
    module, classes, defs = _classes(
        """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2)

            def load(me, sd):
                me.load_state_dict(sd, strict=False)
                me.fc.load_state_dict(sd, strict=False)
                super().load_state_dict(sd, strict=False)

        class Stats:
            def load_state_dict(self, sd, strict=True):
                pass

        def run(sd, unknown):
            net = Net().to("cpu")
            stats = Stats()
            opt = torch.optim.SGD(net.parameters(), lr=0.1)
            net.load_state_dict(sd)
            stats.load_state_dict(sd)
            opt.load_state_dict(sd)
            unknown.load_state_dict(sd)
        """
    )
    receivers = {}

    class Receivers(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Attribute) and node.func.attr.value == "load_state_dict":
                receivers[module.code_for_node(node.func.value)] = classes.kind_of(node.func.value)

    module.visit(Receivers())
    # what builds a value decides before how the file uses it: `stats.load_state_dict(...)` is a module-only
    # method for the `modules` part, but `stats` is built from a plain class; `unknown` has only its use
    assert receivers == {"me": "module", "me.fc": "module", "super()": "module", "net": "module", "stats": "other",
                         "opt": "optimizer", "unknown": "module"}


def test_container_elements_and_trainable_tensors():
    module, classes, _ = _classes(
        """
        import torch
        import torch.nn as nn
        from torch.autograd import Variable

        class Block(nn.Module):
            pass

        layer = nn.Conv2d(3, 3, 3)
        a = nn.Linear(2, 2).to("cuda")
        b = Block()
        c = layer
        d = nn.Parameter(torch.zeros(2))
        e = nn.functional.relu
        f = torch.randn(3, requires_grad=True)
        g = torch.zeros(3).requires_grad_()
        h = Variable(torch.zeros(3), requires_grad=True)
        i = torch.zeros(3)
        j = torch.zeros(3, requires_grad=False)
        """
    )
    holds = {name: classes.holds(_expr(module, text)) for name, text in
             [("a", 'nn.Linear(2, 2).to("cuda")'), ("b", "Block()"), ("c", "layer"), ("d", "nn.Parameter(torch.zeros(2))"),
              ("e", "nn.functional.relu")]}
    assert holds == {"a": "module", "b": "module", "c": "module", "d": "parameter", "e": None}
    trainable = {text: classes.trainable_tensor(_expr(module, text)) for text in
                 ["torch.randn(3, requires_grad=True)", "torch.zeros(3).requires_grad_()",
                  "Variable(torch.zeros(3), requires_grad=True)", "torch.zeros(3)", "torch.zeros(3, requires_grad=False)"]}
    assert trainable == {"torch.randn(3, requires_grad=True)": True, "torch.zeros(3).requires_grad_()": True,
                         "Variable(torch.zeros(3), requires_grad=True)": True, "torch.zeros(3)": False,
                         "torch.zeros(3, requires_grad=False)": False}
    assert classes.fresh_tensor(_expr(module, "torch.zeros(3)"))
