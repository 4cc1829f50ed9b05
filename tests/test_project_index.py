"""The project index: module names from the file list, qualified names resolved across the tree
(absolute, relative, package re-exports, star imports), class ancestors; unknown is None, never a guess;
files are read only when a query needs them."""

from __future__ import annotations

import os

import pytest

from stabfix.project import ProjectIndex

ROOT = "/stabfix-sources"


def _index(sources: dict[str, str]) -> ProjectIndex:
    return ProjectIndex.from_sources(sources, ROOT)


def _at(relative: str) -> str:
    return os.path.join(ROOT, relative)


PACKAGE = {
    "src/pkg/__init__.py": "from .models import Net\nfrom .nets import *\n",
    "src/pkg/models.py": "import torch.nn as nn\nfrom .base import Base\n\n\nclass Net(Base):\n    def forward(self, x):\n        return x\n",
    "src/pkg/base.py": "from torch import nn\n\n\nclass Base(nn.Module):\n    pass\n",
    "src/pkg/nets.py": "__all__ = ['Wide']\n\n\nclass Wide:\n    pass\n\n\nclass Hidden:\n    pass\n",
    "src/pkg/sub/__init__.py": "",
    "src/pkg/sub/train.py": "from ..models import Net\nfrom .. import models as m\n",
    "scripts/run.py": "from helper import make\n",
    "scripts/helper.py": "def make():\n    return 1\n",
}


def test_module_names_come_from_the_package_chain_and_the_scanned_folder():
    index = _index(PACKAGE)
    assert index.modules.name_of(_at("src/pkg/sub/train.py")) == "pkg.sub.train"
    assert index.modules.name_of(_at("src/pkg/__init__.py")) == "pkg"
    assert index.modules.lookup("pkg.models") == _at("src/pkg/models.py")
    # relative to the scanned folder too (a `src` layout scanned from the repository root)
    assert index.modules.lookup("src.pkg.models") == _at("src/pkg/models.py")
    assert index.modules.lookup("torch") is None


def test_a_script_imports_its_neighbours_first():
    sources = {**PACKAGE, "other/helper.py": "def make():\n    return 2\n"}
    index = _index(sources)
    # two scripts named `helper`: ambiguous from anywhere else ...
    assert index.modules.lookup("helper") is None
    # ... but a script's own folder comes first on sys.path
    assert index.resolve("helper.make", _at("scripts/run.py")).path == _at("scripts/helper.py")


def test_resolution_follows_relative_imports_and_package_reexports():
    index = _index(PACKAGE)
    train = _at("src/pkg/sub/train.py")
    assert index.resolve("..models.Net", train).qualified == "pkg.models.Net"
    assert index.resolve("pkg.Net").qualified == "pkg.models.Net"  # re-exported by pkg/__init__.py
    assert index.resolve("pkg.Net.forward").kind == "method"
    assert index.resolve("pkg.models").kind == "module"
    assert index.resolve("...models.Net", train) is None  # above the top-level package


def test_star_imports_honour_all():
    index = _index(PACKAGE)
    assert index.resolve("pkg.Wide").qualified == "pkg.nets.Wide"
    assert index.resolve("pkg.Hidden") is None  # not in `__all__`


def test_a_star_import_without_all_exports_public_names_only():
    index = _index({"a/__init__.py": "from .b import *\n", "a/b.py": "def f():\n    pass\n\n\ndef _g():\n    pass\n"})
    assert index.resolve("a.f").qualified == "a.b.f"
    assert index.resolve("a._g") is None


@pytest.mark.parametrize(
    "sources, name",
    [
        ({"a/__init__.py": "from .b import x\n", "a/b.py": "from . import x\n"}, "a.x"),  # a cycle
        ({"a/__init__.py": "from torch.nn import Module\n"}, "a.Module"),  # outside the tree
        ({"a/__init__.py": "def broken(:\n"}, "a.broken"),  # does not parse
        ({"a/__init__.py": "try:\n    from .b import f\nexcept ImportError:\n    from .c import f\n",
          "a/b.py": "def f(): pass\n", "a/c.py": "def f(): pass\n"}, "a.f"),  # bound two ways
        ({"a/__init__.py": "from .missing import *\n"}, "a.thing"),
    ],
    ids=["cycle", "outside", "unparsable", "two-bindings", "star-of-nothing"],
)
def test_unknown_is_none(sources, name):
    assert _index(sources).resolve(name) is None


def test_two_bindings_that_agree_resolve():
    sources = {"a/__init__.py": "try:\n    from .b import f\nexcept ImportError:\n    from .b import f\n", "a/b.py": "def f(): pass\n"}
    assert _index(sources).resolve("a.f").qualified == "a.b.f"


def test_class_bases_and_ancestors_across_files():
    index = _index(PACKAGE)
    net = index.resolve("pkg.Net")
    assert index.bases(net) == ("pkg.base.Base",)
    assert index.ancestors(net) == ("pkg.base.Base", "torch.nn.Module")
    assert index.lineage(net) == (
        ("pkg.models.Net", ("forward",)),
        ("pkg.base.Base", ()),
        ("torch.nn.Module", None),
    )


def test_files_are_read_only_when_a_query_needs_them(tmp_path):
    for relative, text in PACKAGE.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    files = [str(path) for path in sorted(tmp_path.rglob("*.py"))]
    # a file list naming files that do not exist builds as well: nothing is read
    index = ProjectIndex([*files, str(tmp_path / "gone.py")], [str(tmp_path)])
    assert index._texts == {}
    with index.recording() as consulted:
        index.resolve("pkg.models.Net")
    assert sorted(index._texts) == [str(tmp_path / "src/pkg/models.py")]
    assert set(consulted.files) == {str(tmp_path / "src/pkg/models.py")}
    assert consulted.modules["pkg.models"] == str(tmp_path / "src/pkg/models.py")


def test_a_recording_inside_another_leaves_the_outer_one_recording(tmp_path):
    for relative, text in PACKAGE.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    index = ProjectIndex([str(path) for path in sorted(tmp_path.rglob("*.py"))], [str(tmp_path)])
    with index.recording() as outer:
        with index.recording() as inner:  # both empty, so equal, when the inner one ends
            pass
        index.resolve("pkg.models.Net")
    assert inner.files == {}
    assert set(outer.files) == {str(tmp_path / "src/pkg/models.py")}


def test_two_copies_of_a_package_each_import_their_own():
    copy = {"lib/__init__.py": "from .objectives import Crit\n", "lib/objectives.py": "class Crit:\n    pass\n", "main.py": "from lib import Crit\n"}
    index = _index({**{f"a/{k}": v for k, v in copy.items()}, **{f"b/{k}": v for k, v in copy.items()}})
    assert index.modules.lookup("lib.objectives") is None  # ambiguous from outside both copies
    assert index.resolve("lib.Crit", _at("a/main.py")).path == _at("a/lib/objectives.py")
    assert index.resolve(".objectives.Crit", _at("b/lib/__init__.py")).path == _at("b/lib/objectives.py")
    assert index.lineage(index.resolve("lib.Crit", _at("b/main.py")))[0] == ("lib.objectives.Crit", ())


def test_a_lookup_remembered_for_one_importer_gives_each_importer_its_own_answer_and_is_still_recorded():
    sources = {**PACKAGE, "other/helper.py": "def make():\n    return 2\n", "other/run.py": "from helper import make\n"}
    index = _index(sources)
    askers = [_at("scripts/run.py"), _at("other/run.py"), _at("src/pkg/sub/train.py"), _at("scripts/run.py")]
    for _ in range(2):  # the second round is answered from memory
        for asker in askers:
            for name in ("helper", "pkg.models", "..models", "torch"):
                module = index.absolute(name, asker)
                with index.recording() as consulted:
                    found = index.module_file(module, asker) if module is not None else None
                assert found == (index.modules.lookup(module, asker) if module is not None else None)
                if module is not None:
                    assert consulted.modules == {f"{index.modules.search_root(asker)}:{module}": found or ""}
    assert index.module_file("helper", _at("other/run.py")) == _at("other/helper.py")
    assert index.module_file("helper", _at("scripts/run.py")) == _at("scripts/helper.py")
    assert index.module_file("helper") is None  # from nowhere in particular: two claim it
