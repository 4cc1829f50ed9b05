"""Whether a receiver holds a tensor or a module (`flow/held_kinds.py`), and which classes are modules and which
functions their `forward` runs (`calls/module_classes.py`): the facts SF205, SF414 and SF416 read."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from stabfix.engine import analyse_text
from stabfix.catalog import load_catalog
from stabfix.checkers import checker_classes
from stabfix.model import FileModel
from stabfix.model.calls.module_classes import ModuleClasses
from stabfix.model.flow.held_kinds import HeldKinds
from stabfix.model.source.traversal import walk


def _model(source: str) -> tuple[FileModel, cst.Module]:
    module = cst.parse_module(textwrap.dedent(source))
    model = FileModel(needs=("names", "values", "modules"))
    walk(module, model.visitors())
    return model, module


MOVES = ("to", "cuda", "cpu", "float", "half")


def _statement_receivers(module: cst.Module) -> list[cst.BaseExpression]:
    """The receivers of `<x>.to(...)`-like expression statements, in source order."""
    found: list[cst.BaseExpression] = []

    class Collect(cst.CSTVisitor):
        def visit_Expr(self, node: cst.Expr) -> None:
            call = node.value
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in MOVES:
                found.append(node.value.func.value)

    module.visit(Collect())
    return found


def _kinds(source: str) -> list[str | None]:
    model, module = _model(source)
    kinds = HeldKinds(model.names, model.values, model.modules, ModuleClasses(model.names))
    return [kinds.kind(receiver) for receiver in _statement_receivers(module)]


def test_modules_of_every_spelling_are_modules():
    assert _kinds("""
        import torch.nn as nn

        class Net(nn.Module):
            pass

        class Deeper(Net):
            pass

        def f(device, block: nn.Module):
            a = nn.Linear(2, 2)
            b = Deeper().to(device)
            a.to(device)
            b.cuda()
            block.float()
    """) == ["module", "module", "module"]


def test_tensors_through_factories_helpers_comparisons_buffers_and_parameters():
    assert _kinds("""
        import torch
        from torch import Tensor, nn

        def mask(lengths, width):
            return torch.arange(width)[None, :] < lengths[:, None]

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("buf", torch.ones(2))
                self.w = nn.Parameter(torch.ones(2))

            def forward(self, x: Tensor, lengths, device):
                m = mask(lengths, 4)
                total = torch.zeros(2)
                total += x.sum()
                x.float()
                m.to(device)
                total.cpu()
                self.buf.cuda()
                self.w.half()
    """) == ["tensor"] * 5


def test_batches_of_a_default_loader_are_tensors_and_a_collate_fn_makes_them_unknown():
    assert _kinds("""
        from torch.utils.data import DataLoader

        def run(ds, collate, device):
            for i, data in enumerate(DataLoader(ds, batch_size=2)):
                images, labels = data
                images.to(device)
                data.to(device)
            for batch in DataLoader(ds, collate_fn=collate):
                batch.to(device)
            for item in DataLoader(ds, batch_size=None):
                item.to(device)
    """) == ["tensor", "tensor", None, None]


def test_unknown_and_disagreeing_bindings_stay_unknown():
    assert _kinds("""
        import torch
        import torch.nn as nn
        from lib import build

        def f(flag, data, device):
            enc = build()
            thing = nn.Linear(2, 2) if flag else torch.zeros(2)
            enc.to(device)
            thing.to(device)
            data.to(device)
    """) == [None, None, None]


@pytest.mark.parametrize("base,expected", [
    ("nn.Module", True), ("torch.nn.Sequential", True), ("pl.LightningModule", True), ("Base", True),
    ("object", False), ("Unknown", False),
])
def test_module_classes_resolve_their_bases(base, expected):
    model, module = _model(f"""
        import torch
        import torch.nn as nn
        import lightning.pytorch as pl
        from elsewhere import Unknown

        class Base(nn.Module):
            pass

        class Probe({base}):
            def forward(self, x):
                return helper(self.inner(x))

            def inner(self, x):
                return x

            def unused(self, x):
                return x

        def helper(x):
            return x
    """)
    classes = ModuleClasses(model.names)
    probe = next(node for node in module.body if isinstance(node, cst.ClassDef) and node.name.value == "Probe")
    assert classes.is_module_class(probe) is expected
    functions = {node.name.value: node for node in module.body if isinstance(node, cst.FunctionDef)}
    methods = {node.name.value: node for node in probe.body.body if isinstance(node, cst.FunctionDef)}
    reached = {name for name, node in {**functions, **methods}.items() if classes.forward_reach(node) is probe}
    assert reached == ({"forward", "inner", "helper"} if expected else set())
