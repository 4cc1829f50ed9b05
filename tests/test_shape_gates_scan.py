"""Structural gates that ask what only another file of the scan could supply (`Shape.imports_scanned_code`): the file is
kept exactly when one of its imports names code of the scan, and the rule then reports through that file."""

from __future__ import annotations

import ast

from stabfix.catalog import load_catalog
from stabfix.checkers import checker_classes
from stabfix.engine import analyse_text
from stabfix.project import Project, ProjectIndex
from stabfix.shape import Shape

CLASSES = checker_classes()

HELPER = "import torch.distributed as dist\n\n\ndef sync_all(t):\n    dist.all_reduce(t)\n"
CALLER = (
    '"""Rank 0 alone calls the helper."""\n{imports}\n\ndef log(t, rank):\n'
    "    if rank == 0:\n        sync_all(t)\n"
)


def _view(tmp_path, imports: str):
    (tmp_path / "pkg").mkdir(exist_ok=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "comm.py").write_text(HELPER)
    text = CALLER.format(imports=imports)
    (tmp_path / "pkg" / "train.py").write_text(text)
    project = Project(ProjectIndex([str(p) for p in sorted(tmp_path.rglob("*.py"))], [str(tmp_path)]))
    return text, project.view(str(tmp_path / "pkg" / "train.py"))


def test_a_collective_run_by_a_helper_of_the_scan_keeps_the_file_and_is_reported(tmp_path):
    text, view = _view(tmp_path, "from pkg.comm import sync_all")
    assert CLASSES["SF504"].shape_allows(Shape(ast.parse(text), text, "pkg/train.py", view))
    found = analyse_text(text, "pkg/train.py", [CLASSES["SF504"]], load_catalog(), project=view).findings
    assert [item.finding.code for item in found] == ["SF504"]


def test_with_no_import_of_the_scan_and_no_collective_spelled_the_file_is_skipped(tmp_path, monkeypatch):
    text, view = _view(tmp_path, "from helpers_outside import sync_all")  # not a module of the scan: unknown
    assert not CLASSES["SF504"].shape_allows(Shape(ast.parse(text), text, "pkg/train.py", view))
    # and the skip loses nothing: with the gate open the rule stays silent too
    monkeypatch.setattr(CLASSES["SF504"], "shape_allows", classmethod(lambda cls, shape: True))
    assert analyse_text(text, "pkg/train.py", [CLASSES["SF504"]], load_catalog(), project=view).findings == []


def test_unseeded_training_is_not_asked_of_a_test_file():
    text = "import torch\n\nif __name__ == '__main__':\n    torch.randn(2).sum().backward()\n    opt.step()\n"
    assert CLASSES["SF420"].shape_allows(Shape(ast.parse(text), text, "train.py"))
    assert not CLASSES["SF420"].shape_allows(Shape(ast.parse(text), text, "tests/test_train.py"))


def test_a_loader_setting_is_unset_a_name_or_a_listed_literal_by_keyword_or_position():
    text = ("DataLoader(ds, num_workers=4)\nDataLoader(ds, num_workers=n)\nDataLoader(ds, 8, True, None, None, 0)\n"
            "DataLoader(*args, num_workers=args.workers)\nDataLoader(ds)\n")
    shape = Shape(ast.parse(text), text)
    calls = sorted(shape.calls("DataLoader"), key=lambda call: call.lineno)
    assert [shape.unset_or(call, 5, "num_workers", (0,)) for call in calls] == [False, True, True, False, True]


def test_in_place_updates_are_the_ones_events_records():
    assert Shape(ast.parse("p -= lr * g\n")).updates_in_place(("sub_",), ("sub",))
    assert Shape(ast.parse("torch.sub(p, g, out=p)\n")).updates_in_place(("sub_",), ("sub",))
    assert Shape(ast.parse("p.data = q\n")).updates_in_place(("sub_",), ("sub",))
    assert not Shape(ast.parse("p = p - g\nq *= 2\ntorch.sub(p, g)\n")).updates_in_place(("sub_",), ("sub",))
