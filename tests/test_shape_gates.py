"""Structural gates (`Checker.shape_allows` over `stabfix.shape.Shape`): after the text gates, a rule asks CPython's
tree of the file whether a place it reports on is there at all; a file where no rule is left is never parsed by
libcst. A gate only skips: every case a rule reports on passes it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

from stabfix.checkers import checker_classes
from stabfix.engine import analyse_text, checkers_for_text
from stabfix.shape import Shape

CLASSES = checker_classes()
ROOT = Path(__file__).resolve().parent.parent
GATED = sorted(code for code, cls in CLASSES.items() if cls.has_shape_gate())
_EXPECT = re.compile(r"#\s*expect:\s*([A-Z]{2}\d{3}(?:\s*,\s*[A-Z]{2}\d{3})*)")


def shape_of(text: str) -> Shape:
    return Shape(ast.parse(text), text)


def test_calls_are_found_by_the_last_name_of_what_they_call():
    shape = shape_of("import torch\nx = torch.zeros(2).to(d)\nto(x)\nf()(y)\n")
    assert len(shape.calls("to")) == 2
    assert len(shape.calls("zeros")) == 1
    assert shape.calls("missing") == []
    assert len(shape.all_calls()) == 5


def test_a_loop_of_the_calls_own_function_runs_it_repeatedly():
    text = (
        "for batch in loader:\n    a.to(d)\n"
        "def helper():\n    b.to(d)\n"
        "for step in range(3):\n    def inner():\n        c.to(d)\n"
        "xs = [e.to(d) for e in items]\n"
    )
    shape = shape_of(text)
    looped = {call.func.value.id: shape.in_loop(call) for call in shape.calls("to")}
    assert looped == {"a": True, "b": False, "c": False, "e": True}


def test_a_call_knows_its_function_and_class():
    shape = shape_of("class Net(Base):\n    def forward(self, x):\n        return x.relu()\nrelu()\n")
    inside, outside = sorted(shape.calls("relu"), key=lambda call: call.lineno)
    assert shape.enclosing_function(inside).name == "forward"
    assert shape.enclosing_class(inside).name == "Net"
    assert shape.enclosing_function(outside) is None and shape.enclosing_class(outside) is None


@pytest.mark.skipif(not GATED, reason="no rule has a structural gate")
def test_a_rule_whose_shape_is_absent_is_skipped_and_the_file_not_parsed(monkeypatch):
    import stabfix.engine as engine

    gated = CLASSES[GATED[0]]
    monkeypatch.setattr(gated, "shape_allows", classmethod(lambda cls, shape: False))
    parsed = []
    monkeypatch.setattr(engine, "parse", lambda text: parsed.append(text))
    text = "import torch\nclass Net(torch.nn.Module):\n    pass\n"
    assert gated not in checkers_for_text(text, [gated])
    assert analyse_text(text, "x.py", [gated], {}).findings == []
    assert parsed == []


@pytest.mark.skipif(not GATED, reason="no rule has a structural gate")
def test_a_file_cpython_refuses_keeps_its_rules_and_gets_libcsts_error(monkeypatch):
    gated = CLASSES[GATED[0]]
    monkeypatch.setattr(gated, "shape_allows", classmethod(lambda cls, shape: False))
    monkeypatch.setattr(gated, "may_fire", classmethod(lambda cls, text, project=None: True))
    broken = "class Net(nn.Module):\n    def f(self:\n"
    assert checkers_for_text(broken, [gated]) == [gated]


def _known_misses() -> set[str]:
    return set(yaml.safe_load((ROOT / "tests" / "redteam" / "known_failures.yaml").read_text()) or {})


def _reported_shapes(code: str) -> list[tuple[str, Shape]]:
    """The rule's bad examples and the red-team files it reports on (single files, and the files of folder cases
    with a line marked for it), each as the scan's gate sees it: a folder case's file with the other files of
    its folder (the scan), under the path the scan shows."""
    from stabfix.project import Project, ProjectIndex

    from helpers import example_project
    from stabfix.catalog import load_catalog

    shapes = [(example.name, Shape(ast.parse(example.code), example.code, example.path, example_project(example)))
              for example in load_catalog()[code].bad]
    misses = _known_misses()
    for case in sorted((ROOT / "tests" / "redteam" / code).glob("bad_*")):
        if f"{code}/{case.name}" in misses:
            continue
        files = sorted(case.rglob("*.py")) if case.is_dir() else [case]
        project = Project(ProjectIndex([str(path) for path in files], [str(case)])) if case.is_dir() else None
        for path in files:
            text = path.read_text(encoding="utf-8")
            marks = {c.strip() for m in _EXPECT.finditer(text) for c in m.group(1).split(",")}
            if code in marks:
                shown = f"{code}/{case.name}" + (f"/{path.relative_to(case).as_posix()}" if case.is_dir() else "")
                view = project.view(str(path)) if project is not None else None  # as tests/redteam/harness.py analyses it
                shapes.append((str(path.relative_to(ROOT)), Shape(ast.parse(text), text, shown, view)))
    return shapes


@pytest.mark.parametrize("code", GATED)
def test_every_case_the_rule_reports_on_passes_its_structural_gate(code):
    cases = _reported_shapes(code)
    assert len(cases) > 5
    refused = [where for where, shape in cases if not CLASSES[code].shape_allows(shape)]
    assert refused == []


def test_a_gate_knows_whether_the_file_imports_code_of_the_scan(tmp_path):
    from stabfix.project import Project, ProjectIndex

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "util.py").write_text("def helper():\n    pass\n")
    texts = {
        "relative.py": "import os\nfrom . import util\n",
        "in_function.py": "def run():\n    from pkg.util import helper\n    helper()\n",
        "outside.py": "import os, numpy\nfrom collections import OrderedDict\n",
    }
    for name, text in texts.items():
        (tmp_path / "pkg" / name).write_text(text)
    project = Project(ProjectIndex([str(path) for path in tmp_path.rglob("*.py")], [str(tmp_path)]))
    found = {}
    for name, text in texts.items():
        path = str(tmp_path / "pkg" / name)
        view = project.view(path)
        found[name] = Shape(ast.parse(text), text, path, view).imports_scanned_code
        if name == "relative.py":
            assert view.consulted.modules  # the answer depends on the tree: recorded for the cache
    assert found == {"relative.py": True, "in_function.py": True, "outside.py": False}
    # a folder without `__init__.py` imported whole: `nsdir.comm.f()` still reaches its files
    (tmp_path / "nsdir").mkdir()
    (tmp_path / "nsdir" / "comm.py").write_text("def f():\n    pass\n")
    script = tmp_path / "run.py"
    script.write_text("import nsdir\nnsdir.comm.f()\n")
    project = Project(ProjectIndex([str(path) for path in tmp_path.rglob("*.py")], [str(tmp_path)]))
    text = script.read_text()
    assert Shape(ast.parse(text), text, str(script), project.view(str(script))).imports_scanned_code
    alone = texts["relative.py"]
    assert Shape(ast.parse(alone), alone).imports_scanned_code is False  # analysed alone: no other file


def test_the_engine_hands_a_gate_the_path_the_scan_shows(monkeypatch):
    gated = CLASSES[GATED[0]]
    seen = []
    monkeypatch.setattr(gated, "may_fire", classmethod(lambda cls, text, project=None: True))
    monkeypatch.setattr(gated, "shape_allows", classmethod(lambda cls, shape: seen.append(shape.path) or False))
    analyse_text("x = 1\n", "pkg/__main__.py", [gated], {})
    assert seen == ["pkg/__main__.py"]


def test_a_name_is_surely_qualified_only_where_imports_alone_bind_its_root():
    from stabfix.shape_names import qualified_names, surely_qualified

    def first_call(text: str):
        shape = shape_of(text)
        return shape, min(shape.all_calls(), key=lambda call: (call.lineno, call.col_offset)).func

    assert surely_qualified(*first_call("import torch\ntorch.gather(x)\n")) == "torch.gather"
    assert surely_qualified(*first_call("from torch import distributed as d\nd.barrier()\n")) == "torch.distributed.barrier"
    for unsure in ("import torch\ntorch.gather(x)\ndef f(torch):\n    pass\n",  # a parameter of the same name
                   "import torch\ntorch.gather(x)\ntorch = acc\n",  # assigned too
                   "import numpy as np\nimport torch as np\nnp.gather(x)\n",  # two imports that disagree
                   "t.gather(x)\n"):  # not imported
        assert surely_qualified(*first_call(unsure)) is None
    # every way the model may read it, through imports and plain aliases in any scope
    assert qualified_names(*first_call("import torch.distributed as dist\nsync = dist.barrier\nsync()\n")) == {"torch.distributed.barrier"}
    assert qualified_names(*first_call("from . import comm\ncomm.sync()\n")) == {"..comm.sync", ".comm.sync"}
