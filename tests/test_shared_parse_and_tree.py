"""What the cold scan's speed rests on, checked for the answers it must not change: a file parsed once
per process serves both its own scan and other files' questions about it (and a changed text is parsed
anew), and the parents and calls the traversal records are those of the tree."""

from __future__ import annotations

import libcst as cst

from stabfix.engine import analyse_text, parse
from stabfix.catalog import load_catalog
from stabfix.checkers import checker_classes
from stabfix.model import FileModel
from stabfix.model.source.node_fields import children
from stabfix.model.source.traversal import walk
from stabfix.model.source.tree_index import TreeIndex
from stabfix.project import Project, ProjectIndex

ROOT = "/stabfix-sources"
SOURCES = {
    "app/__init__.py": "",
    "app/helpers.py": "def clear(opt):\n    opt.zero_grad()\n",
    "app/train.py": (
        "import torch\nfrom .helpers import clear\n\n\n"
        "def train(model, loader, opt, loss_fn):\n"
        "    for x, y in loader:\n        clear(opt)\n        loss_fn(model(x), y).backward()\n        opt.step()\n"
    ),
    "app/leaky.py": (
        "import torch\nfrom .helpers import clear\n\n\n"
        "def train(model, loader, loss_fn):\n    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    for x, y in loader:\n        loss_fn(model(x), y).backward()\n        opt.step()\n"
    ),
}
TRAIN = f"{ROOT}/app/train.py"
HELPERS = f"{ROOT}/app/helpers.py"
LEAKY = f"{ROOT}/app/leaky.py"


def test_another_files_question_reuses_the_tree_its_scan_parsed():
    project = Project(ProjectIndex.from_sources(SOURCES, ROOT))
    scanned = project.view(HELPERS).parsed(SOURCES["app/helpers.py"], parse)
    asked = project.view(TRAIN).definition("app.helpers.clear", needs=("summaries",))
    assert asked is not None and asked.module is scanned


def test_a_changed_text_is_parsed_again_and_a_broken_one_is_not_kept():
    project = Project(ProjectIndex.from_sources(SOURCES, ROOT))
    view = project.view(HELPERS)
    first = view.parsed("x = 1\n", parse)
    assert view.parsed("x = 1\n", parse) is first
    second = view.parsed("x = 2\n", parse)
    assert second is not first and second.code == "x = 2\n"
    try:
        view.parsed("def f(:\n", parse)
    except Exception:
        pass
    assert view.parsed("x = 2\n", parse) is second  # the failed parse replaced nothing


def test_findings_with_shared_trees_equal_those_of_fresh_ones():
    classes, specs = list(checker_classes().values()), load_catalog()

    def scan(project: Project, path: str) -> list:
        text = SOURCES[path[len(ROOT) + 1:]]
        return [item.finding for item in analyse_text(text, path, classes, specs, project=project.view(path)).findings]

    order = (HELPERS, TRAIN, LEAKY)
    shared = Project(ProjectIndex.from_sources(SOURCES, ROOT))
    together = [scan(shared, path) for path in (*order, *order)]
    alone = [scan(Project(ProjectIndex.from_sources(SOURCES, ROOT)), path) for path in order]
    assert together == alone + alone
    assert alone[1] == [] and [finding.code for finding in alone[2]] == ["SF404"]  # the other file's helper clears in TRAIN


def test_the_traversal_records_every_parent_and_the_calls_in_source_order():
    module = cst.parse_module("def f(a):\n    return g(h(a), k=[m(1)])\n\nx = f(2).y(z())\n")
    model = FileModel(())
    walk(module, model.visitors(), parents=model.tree.parents)
    expected: dict[int, cst.CSTNode] = {}
    stack = [module]
    while stack:
        node = stack.pop()
        for child in children(node):
            expected[id(child)] = node
            stack.append(child)
    # every node the walk visited has its tree parent; whitespace and punctuation are not visited
    assert model.tree.parents and all(expected[key] is parent for key, parent in model.tree.parents.items())
    names = [node for node in _nodes(module) if isinstance(node, (cst.Name, cst.Call, cst.Arg))]
    assert all(model.tree.parent(node) is expected[id(node)] for node in names)
    spelled = [cst.Module(body=[]).code_for_node(call) for call in model.tree.calls]
    assert spelled == ["g(h(a), k=[m(1)])", "h(a)", "m(1)", "f(2).y(z())", "f(2)", "z()"]
    # a tree no model traversal indexed gets the same answers
    alone = TreeIndex.of(module)
    assert [id(call) for call in alone.calls] == [id(call) for call in model.tree.calls]
    assert all(alone.parent(node) is expected[id(node)] for node in names)


def _nodes(node: cst.CSTNode):
    yield node
    for child in children(node):
        yield from _nodes(child)
