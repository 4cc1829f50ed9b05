"""How long the project index takes on a large generated tree (issue 19 item 5: "the index for a
10,000-file tree is built in seconds").

    python bench/project_index.py [--files 10000] [--keep DIR]

Generates `--files` Python files in packages of 50 modules (each package's `__init__.py` re-exports
its modules' classes, each class derives from a base class of a shared package through a relative
import, and every tenth module also star-imports a sibling), then measures, in this process, CPU
seconds of:

1. discovering the files (`stabfix.discovery.discover`, as `stabfix scan` does);
2. building the index from the file list (`ProjectIndex`: module names only, nothing read);
3. resolving every class through its package's re-export (`pkg_17.Model_17_3`): each file read and
   outlined (`ast`) once;
4. the ancestors of every class (base classes across packages);
5. the same resolutions again (everything already outlined);
and the pickled size of the index, which is what a spawned worker receives.
"""

from __future__ import annotations

import argparse
import pickle
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from stabfix.discovery import discover  # noqa: E402
from stabfix.project import ProjectIndex  # noqa: E402

PER_PACKAGE = 50

MODULE = '''"""Generated module {package}.{module}."""
import torch
import torch.nn as nn
from ..common.base import Base{star}


class Model_{p}_{m}(Base):
    def __init__(self, width={m}):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return torch.relu(self.fc(x))


def build_{p}_{m}():
    return Model_{p}_{m}()
'''
BASE = '''"""Shared base class."""
import torch.nn as nn


class Base(nn.Module):
    pass
'''


def generate(root: Path, files: int) -> list[str]:
    """The tree under root/tree; returns the qualified names of its model classes."""
    tree = root / "tree"
    (tree / "common").mkdir(parents=True)
    (tree / "__init__.py").write_text("", encoding="utf-8")
    (tree / "common" / "__init__.py").write_text("", encoding="utf-8")
    (tree / "common" / "base.py").write_text(BASE, encoding="utf-8")
    written, names, package_index = 3, [], 0  # tree/__init__.py, common/__init__.py, common/base.py
    while written < files:
        package = tree / f"pkg_{package_index}"
        package.mkdir()
        exports = []
        for module_index in range(min(PER_PACKAGE, files - written - 1)):
            star = f"\nfrom .mod_{module_index - 1} import *" if module_index % 10 == 9 else ""
            text = MODULE.format(package=package.name, module=module_index, p=package_index, m=module_index, star=star)
            (package / f"mod_{module_index}.py").write_text(text, encoding="utf-8")
            exports.append(f"from .mod_{module_index} import Model_{package_index}_{module_index}")
            names.append(f"tree.pkg_{package_index}.Model_{package_index}_{module_index}")
            written += 1
        (package / "__init__.py").write_text("\n".join(exports) + "\n", encoding="utf-8")
        written += 1
        package_index += 1
    return names


def timed(label: str, action):
    start = time.process_time()
    result = action()
    print(f"{label:<58} {time.process_time() - start:8.2f} s CPU")
    return result


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--keep", type=Path, default=None, help="generate here and keep it")
    args = parser.parse_args(argv)
    root = args.keep or Path(tempfile.mkdtemp(prefix="stabfix-index-"))
    try:
        names = generate(root, args.files)
        found = timed("discover the files", lambda: discover([root], root, []))
        print(f"  {len(found.files):,} files, {len(names):,} model classes")
        paths = [str(path) for path in found.files]
        index = timed("build the index from the file list (nothing read)", lambda: ProjectIndex(paths, [str(root)]))
        assert not index._texts
        resolved = timed("resolve every class through its package's re-export", lambda: [index.resolve(n) for n in names])
        assert all(symbol is not None and symbol.kind == "class" for symbol in resolved)
        bases = timed("ancestors of every class", lambda: [index.ancestors(symbol) for symbol in resolved])  # type: ignore[arg-type]
        assert all(found == ("tree.common.base.Base", "torch.nn.Module") for found in bases)
        timed("resolve every class again (outlines kept)", lambda: [index.resolve(n) for n in names])
        print(f"  files read and outlined: {len(index._texts):,}")
        print(f"  pickled index (what a spawned worker receives): {len(pickle.dumps(ProjectIndex(paths, [str(root)]))) / 1e6:.2f} MB")
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
