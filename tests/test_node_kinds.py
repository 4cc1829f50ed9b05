"""Exact node-type tests stand in for isinstance on libcst's node classes (ABCs, slow): they must
answer as isinstance would, on every node type libcst has."""

from __future__ import annotations

import re
from pathlib import Path

import libcst as cst
import pytest

from stabfix.model.source import syntax
from stabfix.model.source.syntax import node_kinds

ROOT = Path(__file__).resolve().parent.parent


def _all_node_types() -> set[type]:
    found, pending = set(), [cst.CSTNode]
    while pending:
        for sub in pending.pop().__subclasses__():
            found.add(sub)
            pending.append(sub)
    return found


NODE_TYPES = _all_node_types()


@pytest.mark.parametrize("classes", [
    (cst.BaseComp,), (cst.BaseExpression,), (cst.BaseSmallStatement, cst.BaseCompoundStatement),
    (cst.Name, cst.Attribute), (cst.For, cst.While, cst.BaseComp),
])
def test_node_kinds_are_what_isinstance_accepts(classes):
    kinds = node_kinds(*classes)
    assert {kind for kind in NODE_TYPES if issubclass(kind, classes)} == kinds - {cst.CSTNode}


def test_shared_sets_match_isinstance():
    for name in ("TUPLES_AND_LISTS", "NAMES_AND_ATTRIBUTES", "CLASSES_AND_FUNCTIONS", "DEFINITIONS"):
        kinds = getattr(syntax, name)
        classes = tuple(kind for kind in kinds if kind.__module__.startswith("libcst"))
        assert {kind for kind in NODE_TYPES if issubclass(kind, classes)} == kinds, name


# `type(x) is cst.Name`, `kind is not cst.Call`: identity with one class
_IDENTITY_TEST = re.compile(r"\bis (?:not )?cst\.([A-Za-z_]\w*)\b(?!\.)")


def test_identity_tests_name_classes_without_subclasses():
    """`type(x) is cst.X` equals isinstance only while libcst has no subclass of X; a base class
    (`BaseExpression`) or a class a later libcst subclasses needs `type(x) in node_kinds(...)`."""
    tested: dict[str, list[str]] = {}
    for path in sorted((ROOT / "stabfix").rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for name in _IDENTITY_TEST.findall(line):
                tested.setdefault(name, []).append(f"{path.relative_to(ROOT)}:{number}")
    assert "Call" in tested and "Name" in tested  # the scan sees the model's tests
    with_subclasses = {
        name: places for name, places in tested.items()
        if getattr(cst, name, None) in NODE_TYPES and getattr(cst, name).__subclasses__()
    }
    assert not with_subclasses
