"""Module names <-> files of one scan, from the file list alone (nothing is read).

A file gets the name its package `__init__.py` chain gives it (`src/pkg/sub/mod.py` with
`pkg/__init__.py` and `pkg/sub/__init__.py` in the list is `pkg.sub.mod`; a package's `__init__.py`
is the package itself), and a second name relative to each scanned folder it lies under
(`src.pkg.sub.mod` when `.` was scanned), for namespace packages and scripts. An importing file sees
the modules under its own search root first: a script's folder (Python puts it first on `sys.path`),
a package module's top-level package's parent folder, so two copies of a package in one tree (an
`examples/a/utils/`, an `examples/b/utils/`) each import their own. A name two files claim at the same
rank is ambiguous: unknown, never a guess.
"""

from __future__ import annotations

import os
from typing import Iterable, Iterator, Optional

INIT = "__init__.py"


def _identifier_parts(parts: Iterable[str]) -> Optional[list[str]]:
    names = list(parts)
    return names if names and all(part.isidentifier() for part in names) else None


def _module_parts(relative: list[str]) -> Optional[list[str]]:
    """`["pkg", "mod.py"]` -> `["pkg", "mod"]`; `["pkg", "__init__.py"]` -> `["pkg"]`."""
    if not relative or not relative[-1].endswith(".py"):
        return None
    stem = relative[-1][: -len(".py")]
    parts = relative[:-1] if stem == "__init__" else [*relative[:-1], stem]
    return _identifier_parts(parts)


class ModuleMap:
    """Built once per scan in the parent process; cheap to pickle to the workers (strings only)."""

    def __init__(self, files: Iterable[str], roots: Iterable[str] = ()) -> None:
        self.files: tuple[str, ...] = tuple(sorted({os.path.abspath(path) for path in files}))
        file_set = set(self.files)
        packages = {os.path.dirname(path) for path in self.files if os.path.basename(path) == INIT}
        self.roots: tuple[str, ...] = tuple(sorted({os.path.abspath(root) for root in roots}))
        # rank 0: the package chain's name; rank 1: the name relative to a scanned folder
        claims: list[dict[str, set[str]]] = [{}, {}]
        self._names: dict[str, str] = {}
        for path in self.files:
            chain = self._chain_name(path, packages)
            if chain is not None:
                claims[0].setdefault(chain, set()).add(path)
                self._names[path] = chain
            for root in self.roots:
                if path.startswith(root + os.sep):
                    parts = _module_parts(os.path.relpath(path, root).split(os.sep))
                    if parts is not None:
                        claims[1].setdefault(".".join(parts), set()).add(path)
        self._ranked = [{name: sorted(paths) for name, paths in rank.items()} for rank in claims]
        self._file_set = file_set
        self._packages = packages
        self._search_roots: dict[str, str] = {}  # importer as given -> its search root (asked per import of a file)
        self._prefixes: Optional[set[str]] = None  # every dotted prefix of a module name (`holds_submodules`)
        self._folders: set[str] = set()  # every folder holding a file of the tree, at any depth

    @staticmethod
    def _chain_name(path: str, packages: set[str]) -> Optional[str]:
        folder = os.path.dirname(path)
        relative = [os.path.basename(path)]
        while folder in packages:
            relative.insert(0, os.path.basename(folder))
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        parts = _module_parts(relative)
        return ".".join(parts) if parts is not None else None

    def name_of(self, path: str) -> Optional[str]:
        """The module name the file's package chain gives it (a script's is its stem)."""
        return self._names.get(os.path.abspath(path))

    def is_package(self, path: str) -> bool:
        return os.path.basename(path) == INIT

    def in_package(self, path: str) -> bool:
        return os.path.dirname(os.path.abspath(path)) in self._packages

    def search_root(self, importer: str) -> str:
        """The folder `importer`'s imports start from: its own for a script, its top-level package's parent
        for a module of a package."""
        root = self._search_roots.get(importer)
        if root is None:
            root = folder = os.path.dirname(os.path.abspath(importer))
            while folder in self._packages:
                parent = os.path.dirname(folder)
                if parent == folder:
                    break
                root = folder = parent
            self._search_roots[importer] = root
        return root

    def lookup(self, module: str, importer: Optional[str] = None) -> Optional[str]:
        """The file of `module` as `importer` would import it; None when outside the tree or ambiguous."""
        if importer is not None:
            beside = self._beside(module, self.search_root(importer))
            if beside is not None:
                return beside
        for rank in self._ranked:
            paths = rank.get(module)
            if paths:
                return paths[0] if len(paths) == 1 else None
        return None

    def holds_submodules(self, module: str, importer: Optional[str] = None) -> bool:
        """Whether a file of the tree is a submodule of `module` (`pkg.x` or `pkg.x.y` for `pkg`) by its name, or lies
        under the folder `module` names beside `importer`'s search root: `import pkg` then `pkg.x.f()` reaches it
        even where `pkg` has no `__init__.py` of its own."""
        if self._prefixes is None:
            names = {name for rank in self._ranked for name in rank}
            self._prefixes = {name.rsplit(".", cut)[0] for name in names for cut in range(1, name.count(".") + 1)}
            self._folders = {folder for path in self.files for folder in _folders_above(path)}
        if module in self._prefixes:
            return True
        return importer is not None and os.path.join(self.search_root(importer), *module.split(".")) in self._folders

    def _beside(self, module: str, folder: str) -> Optional[str]:
        base = os.path.join(folder, *module.split("."))
        for candidate in (base + ".py", os.path.join(base, INIT)):
            if candidate in self._file_set:
                return candidate
        return None

    def package_of(self, path: str) -> Optional[str]:
        """The package a relative import of this file starts from (`pkg.sub` for `pkg/sub/mod.py`,
        and for `pkg/sub/__init__.py` itself)."""
        name = self.name_of(path)
        if name is None or not self.in_package(path):
            return None
        return name if self.is_package(path) else name.rpartition(".")[0]


def _folders_above(path: str) -> Iterator[str]:
    folder = os.path.dirname(path)
    while True:
        yield folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent
