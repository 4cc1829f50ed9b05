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


def test_a_helper_module_imported_from_its_own_package_is_followed(tmp_path):
    # `from . import comm` names the sibling `pkg/comm.py`, not a module of the package above
    text, view = _view(tmp_path, "from . import comm\nsync_all = comm.sync_all")
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


# A project whose helpers lie in other files: reached directly, through two re-exporting packages, as a module's
# attribute, through an alias, as a class's method, from inside a function; a helper with no collective; and one
# that runs its collective through a third file (two files away: beyond what the summaries follow).
COLLECTIVE_PROJECT = {
    "pkg/__init__.py": "from .sub import sync_all\n",
    "pkg/sub/__init__.py": "from .comm import sync_all\n",
    "pkg/sub/comm.py": "import torch.distributed as dist\n\n\ndef sync_all(t):\n    dist.all_reduce(t)\n",
    "pkg/methods.py": "import torch.distributed as dist\n\n\nclass Comm:\n    def sync(self, t):\n        dist.barrier()\n",
    "pkg/plain.py": "def helper(t):\n    return t * 2\n",
    "pkg/relay.py": "from pkg.sub.comm import sync_all\n\n\ndef relay(t):\n    sync_all(t)\n",
    "nsdir/comm.py": "import torch.distributed as dist\n\n\ndef sync_all(t):\n    dist.all_reduce(t)\n",  # no `__init__.py`
}
UNDER_RANK = "\n\ndef log(t, rank):\n    if rank == 0:\n        {call}\n"
CALLERS = {  # file -> (imports, the call under the rank condition, whether SF504 reports it)
    "direct.py": ("from pkg.sub.comm import sync_all", "sync_all(t)", True),
    "two_reexports.py": ("from pkg import sync_all", "sync_all(t)", True),
    "module_attribute.py": ("import pkg.sub.comm", "pkg.sub.comm.sync_all(t)", True),
    "namespace_package.py": ("import nsdir", "nsdir.comm.sync_all(t)", True),
    "alias.py": ("from pkg.sub import comm\nsync = comm.sync_all", "sync(t)", True),
    "method.py": ("from pkg.methods import Comm", "Comm.sync(None, t)", True),
    "plain_helper.py": ("from pkg.plain import helper", "helper(t)", False),
    "not_called.py": ("from pkg import sync_all", "print(sync_all)", False),
    "two_files_away.py": ("from pkg.relay import relay", "relay(t)", False),
}


def _collective_project(tmp_path) -> Project:
    for relative, text in COLLECTIVE_PROJECT.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    for name, (imports, call, _) in CALLERS.items():
        (tmp_path / name).write_text(imports + UNDER_RANK.format(call=call))
    (tmp_path / "in_function.py").write_text("def log(t, rank):\n    from pkg import sync_all\n    if rank == 0:\n        sync_all(t)\n")
    return Project(ProjectIndex([str(p) for p in sorted(tmp_path.rglob("*.py"))], [str(tmp_path)]))


def test_a_helper_of_another_file_keeps_the_file_exactly_where_the_rule_can_report_through_it(tmp_path, monkeypatch):
    project = _collective_project(tmp_path)
    rule = CLASSES["SF504"]
    gated, reported = {}, {}
    for name in [*CALLERS, "in_function.py"]:
        text = (tmp_path / name).read_text()
        gated[name] = rule.shape_allows(Shape(ast.parse(text), text, name, project.view(str(tmp_path / name))))
    monkeypatch.setattr(rule, "shape_allows", classmethod(lambda cls, shape: True))
    for name in gated:
        text = (tmp_path / name).read_text()
        found = analyse_text(text, name, [rule], load_catalog(), project=project.view(str(tmp_path / name))).findings
        reported[name] = bool(found)
    # the gate passes every file the rule reports on (and here, no other: each helper's file decides)
    assert gated == reported
    assert reported == {**{name: expected for name, (_, _, expected) in CALLERS.items()}, "in_function.py": True}


def test_what_decided_a_helpers_collective_is_recorded_for_the_cache(tmp_path):
    project = _collective_project(tmp_path)
    text = (tmp_path / "two_reexports.py").read_text()
    view = project.view(str(tmp_path / "two_reexports.py"))
    assert CLASSES["SF504"].shape_allows(Shape(ast.parse(text), text, "two_reexports.py", view))
    # both re-exporting packages and the helper's file: editing any of them can change the answer
    assert {str(tmp_path / p) for p in ("pkg/__init__.py", "pkg/sub/__init__.py", "pkg/sub/comm.py")} <= set(view.consulted.files)
    text = (tmp_path / "plain_helper.py").read_text()
    view = project.view(str(tmp_path / "plain_helper.py"))
    assert not CLASSES["SF504"].shape_allows(Shape(ast.parse(text), text, "plain_helper.py", view))
    assert str(tmp_path / "pkg/plain.py") in view.consulted.files  # a skip too depends on the helper's text


def test_a_helper_that_comes_to_run_a_collective_rescans_its_caller(tmp_path, run_cli):
    from helpers import json_report

    project = dict(COLLECTIVE_PROJECT)
    for relative, text in project.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    (tmp_path / "train.py").write_text("from pkg.plain import helper" + UNDER_RANK.format(call="helper(t)"))

    def sf504() -> list[str]:
        result = run_cli("scan", ".", "--select", "SF504", "--output-format", "json", "--jobs", "1", cwd=tmp_path)
        assert result.returncode in (0, 1), result.stderr
        return [f["path"] for f in json_report(result)["findings"]]

    assert sf504() == []  # skipped by the gate, and the result cached
    (tmp_path / "pkg/plain.py").write_text("import torch.distributed as dist\n\n\ndef helper(t):\n    dist.barrier()\n")
    assert sf504() == ["train.py"]


MODULE_PROJECT = {  # module classes of other files: a base, a block; a helper function; a plain class
    "pkg/__init__.py": "",
    "pkg/base.py": "import torch.nn as nn\n\n\nclass Base(nn.Module):\n    pass\n",
    "pkg/blocks.py": "from .base import Base\n\n\nclass Block(Base):\n    pass\n\n\ndef make_size(n):\n    return n * 2\n\n\nclass Plain:\n    pass\n",
}
HOLDERS = {  # file -> (what it imports, the class statement, the list it keeps, whether SF413 reports it)
    "subclass.py": ("from pkg.base import Base", "class Net(Base):", "[nn.Linear(2, 2)]", True),
    "block_elements.py": ("from pkg.blocks import Block", "class Net(nn.Module):", "[Block() for _ in range(3)]", True),
    "helper_results.py": ("from pkg.blocks import make_size", "class Net(nn.Module):", "[make_size(n) for n in range(3)]", False),
    "plain_base.py": ("from pkg.blocks import Plain", "class Net(Plain):", "[nn.Linear(2, 2)]", False),
}


def test_a_module_class_of_another_file_keeps_the_file_exactly_where_the_rule_can_report(tmp_path, monkeypatch):
    for relative, text in MODULE_PROJECT.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    for name, (imports, header, kept, _) in HOLDERS.items():
        (tmp_path / name).write_text(f"import torch.nn as nn\n{imports}\n\n\n{header}\n    def __init__(self):\n"
                                     f"        super().__init__()\n        self.parts = {kept}\n")
    project = Project(ProjectIndex([str(p) for p in sorted(tmp_path.rglob("*.py"))], [str(tmp_path)]))
    rule = CLASSES["SF413"]
    gated, reported = {}, {}
    for name in HOLDERS:
        text = (tmp_path / name).read_text()
        view = project.view(str(tmp_path / name))
        gated[name] = rule.shape_allows(Shape(ast.parse(text), text, name, view))
        assert view.consulted.files  # the other file's outline decided: recorded for the cache
    monkeypatch.setattr(rule, "shape_allows", classmethod(lambda cls, shape: True))
    for name in HOLDERS:
        text = (tmp_path / name).read_text()
        reported[name] = bool(analyse_text(text, name, [rule], load_catalog(), project=project.view(str(tmp_path / name))).findings)
    assert gated == reported == {name: expected for name, (_, _, _, expected) in HOLDERS.items()}
