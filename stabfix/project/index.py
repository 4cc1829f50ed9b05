"""The project index: qualified names of the scanned tree resolved to the file and definition they name.

Built from the file list (`ModuleMap`); a file is read, hashed and outlined (`ast`) only when a query
needs it, and at most once per process. Every answer records what it consulted (`Consulted`): the files
read, with their digests, and the module names looked up, with the file each resolved to (or none), so
a cached result can tell when editing, adding or removing a file would change it.

Resolution follows `from .x import y` and `import a.b as c` chains, package `__init__` re-exports and,
best effort, `from x import *` (the `__all__` of the module when it is a literal, else its public
names); a cycle, a name bound two different ways, a file outside the tree or one that does not parse
gives None: unknown, never proof.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Optional

from stabfix.project.modules import ModuleMap
from stabfix.project.outline import Binding, Outline, outline_of
from stabfix.notebook import is_notebook, read_notebook
from stabfix.source import SourceError, read_source

_MAX_HOPS = 24  # re-export chains longer than this are cut (unknown)
_MAX_ANCESTORS = 32


@dataclass(frozen=True)
class Symbol:
    """A definition of the tree: `qualified` is where it is defined (`pkg.models.Net`, `pkg.models.Net.forward`)."""

    qualified: str
    path: str  # the file defining it
    module: str  # the module of that file
    kind: str  # "def", "class", "method", "module", "value"
    binding: Optional[Binding] = None  # for a class: its bases and methods


@dataclass
class Consulted:
    """What answers depended on: file -> digest ("" for a file that could not be read) and module
    name -> the file it resolved to ("" for none)."""

    files: dict[str, str] = field(default_factory=dict)
    modules: dict[str, str] = field(default_factory=dict)

    def merge(self, other: "Consulted") -> None:
        self.files.update(other.files)
        self.modules.update(other.modules)

    def as_json(self) -> dict:
        return {"files": dict(sorted(self.files.items())), "modules": dict(sorted(self.modules.items()))}


def digest_of(raw: bytes) -> str:
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


class ProjectIndex:
    """One per scan. `sources` (path -> text) stands in for the disk: tests and rule examples."""

    def __init__(
        self,
        files: Iterable[str],
        roots: Iterable[str] = (),
        sources: Optional[Mapping[str, str]] = None,
        modules: Optional[ModuleMap] = None,
    ) -> None:
        """`modules`: the map of these files and roots, built before (the language server keeps one per
        project while the files stay; it must hold the `sources` paths too)."""
        self._sources = {os.path.abspath(path): text for path, text in (sources or {}).items()}
        self.modules = modules if modules is not None else ModuleMap([*files, *self._sources], roots)
        self._texts: dict[str, tuple[Optional[str], str]] = {}
        self._outlines: dict[str, Optional[Outline]] = {}
        self._lookups: dict[str, str] = {}  # recorded lookup key -> its file in this run ("" for none)
        self._package_of: dict[str, Optional[str]] = {}  # importer -> the package its relative imports start from
        self._recorders: list[Consulted] = []

    @classmethod
    def from_sources(cls, sources: Mapping[str, str], root: str = "/stabfix-sources") -> "ProjectIndex":
        """A tree held in memory: relative path -> text, placed under `root` (read nothing from disk)."""
        return cls((), [root], {os.path.join(root, path): text for path, text in sources.items()})

    def __getstate__(self) -> dict:
        # Workers get the file list only; each reads what its own queries need.
        return {"_sources": self._sources, "modules": self.modules}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._texts, self._outlines, self._lookups, self._package_of, self._recorders = {}, {}, {}, {}, []

    # -- recording ------------------------------------------------------------------------------------
    def recording(self) -> "_Recording":
        """`with index.recording() as consulted:` collects what every query inside depended on."""
        return _Recording(self)

    def _note_file(self, path: str, digest: str) -> None:
        for recorder in self._recorders:
            recorder.files[path] = digest

    def _note_module(self, module: str, path: Optional[str]) -> None:
        for recorder in self._recorders:
            recorder.modules[module] = path or ""

    # -- files ----------------------------------------------------------------------------------------
    def text(self, path: str) -> Optional[str]:
        """The file's text (None when unreadable), recorded with its digest."""
        path = os.path.abspath(path)
        if path not in self._texts:
            self._texts[path] = _read(path, self._sources)
        text, digest = self._texts[path]
        self._note_file(path, digest)
        return text

    def outline(self, path: str) -> Optional[Outline]:
        text = self.text(path)
        if path not in self._outlines:
            self._outlines[path] = outline_of(text) if text is not None else None
        return self._outlines[path]

    def module_file(self, module: str, importer: Optional[str] = None) -> Optional[str]:
        # what an importer finds depends on its search root alone, so a lookup is made once per root and name
        key = f"{self.modules.search_root(importer)}:{module}" if importer is not None else module
        found = self._lookups.get(key)
        if found is None:
            found = self._lookups[key] = self.modules.lookup(module, importer) or ""
        self._note_module(key, found)
        return found or None

    def current_digest(self, path: str) -> str:
        """The digest the file has in this run (read once per process; "" when unreadable)."""
        path = os.path.abspath(path)
        if path not in self._texts:
            self._texts[path] = _read(path, self._sources)
        return self._texts[path][1]

    def still_holds(self, consulted: Mapping[str, Mapping[str, str]]) -> bool:
        """Whether everything a cached result consulted (`Consulted.as_json()`) is as it was: each file's
        digest, each module name's resolution (a file added or removed can change one)."""
        return all(self.current_digest(path) == digest for path, digest in consulted["files"].items()) and all(
            self.still_resolves(key, path) for key, path in consulted["modules"].items()
        )

    def still_resolves(self, key: str, recorded: str) -> bool:
        """Whether a module lookup recorded as `key` (`module`, or `search root:module`) still gives `recorded`."""
        # a scan's files are fixed: each key is looked up once, however many cached results recorded it
        if key not in self._lookups:  # the same memory as `module_file`'s: the key names the search root
            folder, _, module = key.rpartition(":")
            importer = os.path.join(folder, "__stabfix_probe__.py") if folder else None
            self._lookups[key] = self.modules.lookup(module, importer) or ""
        return self._lookups[key] == recorded

    # -- names ----------------------------------------------------------------------------------------
    def absolute(self, qualified: str, importer: str) -> Optional[str]:
        """`..utils.f` seen from `importer` -> `pkg.utils.f`; an absolute name is returned as it is."""
        dots = len(qualified) - len(qualified.lstrip("."))
        if dots == 0:
            return qualified
        package = self._package_of.get(importer, "")
        if package == "":
            package = self._package_of[importer] = self.modules.package_of(importer)
        if package is None:
            return None
        parts = package.split(".")
        if dots - 1 >= len(parts):
            return None  # above the top-level package
        base = parts[: len(parts) - (dots - 1)]
        rest = qualified[dots:]
        return ".".join([*base, rest]) if rest else ".".join(base)

    def resolve(self, qualified: str, importer: Optional[str] = None) -> Optional[Symbol]:
        """The definition `qualified` names (`importer`: the file whose imports spelled it, for relative
        names and a script's neighbours); None when unknown."""
        if importer is not None:
            absolute = self.absolute(qualified, importer)
            if absolute is None:
                return None
            qualified = absolute
        return self._resolve(qualified, importer, 0, frozenset())

    def _resolve(self, qualified: str, importer: Optional[str], hops: int, seen: frozenset) -> Optional[Symbol]:
        if hops > _MAX_HOPS or qualified in seen:
            return None  # a cycle or an absurd chain: unknown
        seen = seen | {qualified}
        parts = qualified.split(".")
        for cut in range(len(parts), 0, -1):
            module = ".".join(parts[:cut])
            path = self.module_file(module, importer)
            if path is None:
                continue
            rest = parts[cut:]
            if not rest:
                return Symbol(module, path, module, "module")
            return self._member(path, module, rest, hops, seen)
        return None

    def _member(self, path: str, module: str, rest: list[str], hops: int, seen: frozenset) -> Optional[Symbol]:
        """`rest[0]` (then its attributes) in the module of `path`."""
        outline = self.outline(path)
        if outline is None:
            return None
        name, tail = rest[0], rest[1:]
        bindings = outline.bound(name)
        if not bindings:
            return self._through_stars(path, outline, rest, hops, seen)
        found = {self._follow(path, module, binding, name, tail, hops, seen) for binding in bindings}
        return found.pop() if len(found) == 1 else None  # bound two ways that disagree: unknown

    def _follow(
        self, path: str, module: str, binding: Binding, name: str, tail: list[str], hops: int, seen: frozenset
    ) -> Optional[Symbol]:
        if binding.kind in ("def", "value"):
            return Symbol(f"{module}.{name}", path, module, binding.kind, binding) if not tail else None
        if binding.kind == "class":
            if not tail:
                return Symbol(f"{module}.{name}", path, module, "class", binding)
            if len(tail) == 1 and tail[0] in binding.methods:
                return Symbol(f"{module}.{name}.{tail[0]}", path, module, "method", binding)
            return None
        target = self._import_target(binding, path)
        if target is None:
            return None
        return self._resolve(".".join([target, *tail]), path, hops + 1, seen)

    def imported_files(self, path: str) -> tuple[str, ...]:
        """The tree's files the file imports from (`from pkg.x import y`: `pkg/x.py`, or `pkg/x/y.py`
        when `y` is a submodule), and through package `__init__` re-exports the modules those name
        (`from pkg import Net` re-exported by `pkg/__init__.py` from `.models`: `pkg/models.py` too),
        sorted; () when it does not parse. Only the file and the packages' `__init__.py` are outlined."""
        found: set[str] = set()
        self._imported_into(path, found, 0)
        found.discard(os.path.abspath(path))
        return tuple(sorted(found))

    def _imported_into(self, path: str, found: set[str], depth: int, names: Optional[set[str]] = None) -> None:
        outline = self.outline(path)
        if outline is None or depth > 3:
            return
        for name in sorted(outline.bindings if names is None else names & set(outline.bindings)):
            for binding in outline.bindings[name]:
                target = self._import_target(binding, path) if binding.kind in ("import", "from") else None
                module = self._module_of(target, path) if target is not None else None
                if module is None:
                    continue
                found.add(module)
                if binding.kind == "from" and self.modules.is_package(module) and module != path:
                    self._imported_into(module, found, depth + 1, {binding.name})
        for star in outline.stars:
            base = self.absolute("." * star.level + star.target, path) if star.level else star.target
            module = self._module_of(base, path) if base else None
            if module is not None:
                found.add(module)

    def scanned_module_of(self, target: str, importer: str) -> Optional[str]:
        """The file of the scan that the absolute module name `target` (or its longest prefix that is one) names,
        as `importer` would import it; recorded like every module lookup."""
        return self._module_of(target, importer)

    def _module_of(self, target: str, path: str) -> Optional[str]:
        """The file of the longest prefix of `target` that is a module of the tree."""
        parts = target.split(".")
        for cut in range(len(parts), 0, -1):
            module = self.module_file(".".join(parts[:cut]), path)
            if module is not None:
                return module
        return None

    def _import_target(self, binding: Binding, path: str) -> Optional[str]:
        if binding.kind == "import":
            return binding.target
        spelled = "." * binding.level + (f"{binding.target}.{binding.name}" if binding.target else binding.name)
        return self.absolute(spelled, path)

    def _through_stars(self, path: str, outline: Outline, rest: list[str], hops: int, seen: frozenset) -> Optional[Symbol]:
        for star in outline.stars:
            base = self.absolute("." * star.level + star.target, path) if star.level else star.target
            source = self.module_file(base, path) if base else None
            star_outline = self.outline(source) if source is not None else None
            if star_outline is None:
                continue  # outside the tree: the name may come from there, so it stays unknown
            exported = star_outline.exported
            if exported is not None and rest[0] not in exported:
                continue
            if exported is None and rest[0].startswith("_"):
                continue
            found = self._resolve(".".join([base, *rest]), path, hops + 1, seen)  # type: ignore[list-item]
            if found is not None:
                return found
            if star_outline.bound(rest[0]) or star_outline.stars:
                return None  # bound there but unresolvable: do not look further
        return None

    # -- classes --------------------------------------------------------------------------------------
    def bases(self, symbol: Symbol) -> tuple[str, ...]:
        """The class's bases as absolute names: a class of the tree by where it is defined, anything
        else as the defining file's imports spell it (`torch.nn.Module`); "" for a base not known."""
        if symbol.kind != "class" or symbol.binding is None:
            return ()
        found = []
        for spelled in symbol.binding.bases:
            found.append(self._qualified_base(spelled, symbol) if spelled else "")
        return tuple(found)

    def _qualified_base(self, spelled: str, symbol: Symbol) -> str:
        head, _, tail = spelled.partition(".")
        outline = self.outline(symbol.path)
        bindings = outline.bound(head) if outline is not None else ()
        if len(bindings) != 1:
            return ""
        binding = bindings[0]
        if binding.kind == "class":
            return f"{symbol.module}.{spelled}"
        if binding.kind not in ("import", "from"):
            return ""
        target = self._import_target(binding, symbol.path)
        if target is None:
            return ""
        full = f"{target}.{tail}" if tail else target
        defined = self._resolve(full, symbol.path, 0, frozenset())
        return defined.qualified if defined is not None else full

    def ancestors(self, symbol: Symbol) -> tuple[str, ...]:
        """Every base class, transitively, nearest first, as `bases` names them (classes outside the
        tree end the walk); a base that is not known adds ""."""
        return tuple(name for name, _ in self.lineage(symbol)[1:])

    def lineage(self, symbol: Symbol) -> tuple[tuple[str, Optional[tuple[str, ...]]], ...]:
        """The class and its ancestors (breadth first, nearest first), each with the methods it defines
        itself; None for a class outside the tree (its methods are not known)."""
        found: list[tuple[str, Optional[tuple[str, ...]]]] = [(symbol.qualified, symbol.binding.methods if symbol.binding else None)]
        seen = {symbol.qualified}
        # each base with the file whose class names it (a base of the tree is found from there)
        pending = [(base, symbol.path) for base in self.bases(symbol)]
        while pending and len(found) <= _MAX_ANCESTORS:
            base, named_in = pending.pop(0)
            if base in seen:
                continue
            seen.add(base)
            defined = self._resolve(base, named_in, 0, frozenset()) if base else None
            if defined is not None and defined.kind == "class" and defined.binding is not None:
                found.append((base, defined.binding.methods))
                pending.extend((further, defined.path) for further in self.bases(defined))
            else:
                found.append((base, None))
        return tuple(found)


class _Recording:
    def __init__(self, index: ProjectIndex) -> None:
        self.index = index
        self.consulted = Consulted()

    def __enter__(self) -> Consulted:
        self.index._recorders.append(self.consulted)
        return self.consulted

    def __exit__(self, *exc) -> None:
        # by identity: an inner recording with the same contents as an outer one is another recorder
        recorders = self.index._recorders
        del recorders[next(i for i, recorder in enumerate(recorders) if recorder is self.consulted)]


def _read(path: str, sources: Mapping[str, str]) -> tuple[Optional[str], str]:
    if path in sources:
        text = sources[path]
        return text, digest_of(text.encode("utf-8"))
    try:
        # a notebook is outlined by its code cells, not its JSON; its digest stays that of its bytes
        source = read_notebook(Path(path)) if is_notebook(path) else read_source(Path(path))
    except (SourceError, OSError):
        try:
            raw = open(path, "rb").read()
        except OSError:
            return None, ""
        return None, digest_of(raw)
    return source.text, digest_of(source.raw)

