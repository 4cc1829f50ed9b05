"""What the branches around a site say about a tensor's dtype (`model/domain/dtype_gates.py`)."""

from __future__ import annotations

import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.domain.dtype_gates import known_dtypes, only_half
from stabfix.model.source.traversal import MergedVisitor


class _Probe(cst.BatchableCSTVisitor):
    """Records the frames and place of the argument of every `probe(x)` call."""

    def __init__(self, model) -> None:
        super().__init__()
        self.model = model
        self.sites: list = []

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "probe":
            self.sites.append((node.args[0].value, self.model.steps.frames(), self.model.steps.place()))


def _known(source: str) -> list:
    module = cst.parse_module(textwrap.dedent(source))
    model = FileModel(["names", "steps"])
    probe = _Probe(model)
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor([*model.visitors(), probe])])
    return [known_dtypes(expr, frames, place, model.names) for expr, frames, place in probe.sites]


def _set(*dtypes: str) -> frozenset:
    return frozenset(dtypes)


def test_else_of_a_full_precision_test_admits_only_half_also_for_the_rows_of_a_zip_loop():
    full, rows, whole = _known(
        """
        import torch

        def selective_log_softmax(logits, index, temperature):
            if temperature != 1.0:
                logits = logits / temperature
            if logits.dtype in [torch.float32, torch.float64]:
                probe(logits)
            else:
                for row_logits, row_labels in zip(logits, index, strict=True):
                    probe(row_logits[:-1].view(-1, 8))
                probe(logits.squeeze(0))
        """
    )
    assert full == _set("float32", "float64") and not only_half(full)
    assert rows == _set("float16", "bfloat16") and only_half(rows)
    assert whole == _set("float16", "bfloat16")


def test_equality_membership_negation_conjunction_and_elif():
    found = _known(
        """
        import torch
        from torch import bfloat16 as bf16

        def f(x, y):
            if x.dtype == bf16:
                probe(x)
            if torch.float32 != x.dtype:
                probe(x)
            if x.dtype not in (torch.float16, torch.bfloat16):
                pass
            else:
                probe(x)
            if not (x.dtype is torch.float32) and y.dtype == torch.float16:
                probe(x)
                probe(y)
            if x.dtype == torch.float64:
                pass
            elif x.dtype in {torch.float32, torch.half}:
                probe(x)
            if x.dtype == torch.float32 or y is None:
                pass
            else:
                probe(x)
        """
    )
    assert found == [
        _set("bfloat16"),
        _set("float16", "bfloat16", "float64"),
        _set("float16", "bfloat16"),
        _set("float16", "bfloat16", "float64"),
        _set("float16"),
        _set("float16", "float32"),
        _set("float16", "bfloat16", "float64"),
    ]
    assert [only_half(dtypes) for dtypes in found] == [True, True, True, True, True, False, True]


def test_an_earlier_return_or_raise_for_full_precision_leaves_only_half():
    found = _known(
        """
        import torch

        def f(logits, labels):
            if logits.dtype in (torch.float32, torch.float64):
                return fused(logits, labels)
            probe(logits)

        def g(logits):
            if logits.dtype not in (torch.float16, torch.bfloat16):
                raise ValueError(logits.dtype)
            probe(logits)
        """
    )
    assert found == [_set("float16", "bfloat16"), _set("float16", "bfloat16")]


def test_no_fact_about_another_tensor_a_cast_a_rebinding_or_an_unknown_dtype():
    found = _known(
        """
        import torch

        def f(logits, labels, wanted):
            probe(logits)
            if labels.dtype == torch.bfloat16:
                probe(logits)
            if logits.dtype == torch.bfloat16:
                probe(logits.float())
                probe(logits * 2)
                logits = upcast(logits)
                probe(logits)
            if logits.dtype in (torch.float16, wanted):
                probe(logits)
            if logits.dtype.is_floating_point:
                probe(logits)
        """
    )
    assert found == [None] * 7
