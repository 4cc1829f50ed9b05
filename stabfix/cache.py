"""A content-hash cache of scan results, so re-scanning an unchanged repo parses nothing (0.4 s of CPU for 496 files).

An entry is keyed by the file's bytes, the rules that ran on it and its torch target: all that the
file's own config (`stabfix.config_tree`: select, ignore, per-file-ignores, target-torch) decides about
its results, so two folders with different configs never share an entry for the same bytes. The cache
file as a whole belongs to what produced its results: a digest of stabfix's own code and rule files (plus the Python and
libcst versions), not the version string, so an edited checker, model part or rule YAML never serves
results it would no longer produce. A result that consulted other files of the scan (the project
layer, `stabfix.project`) is stored with what it consulted: each file's digest and each module name's
resolution; it is served only while all of them still hold, so editing a helper, or adding or removing
a file that changes what an import resolves to, rescans the files that used it and nothing else.
Stored under the project in `.stabfix_cache/`. Only clean
analyses are stored (files that failed are retried); an entry that is not a list of well-formed
findings (a corrupt or hand-edited file) is dropped and its file analysed again.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Optional, get_type_hints

from stabfix.catalog import CODE_PATTERN, SAFETIES, SEVERITIES, rules_dir
from stabfix.findings import Finding

CACHE_DIR_NAME = ".stabfix_cache"
CACHE_FILE_NAME = "scan.json"
_FORMAT = 3  # the layout of the cache file (3: `consulted` per entry); the version-named files before 2 had no header


def content_key(raw: bytes, codes: tuple[str, ...]) -> str:
    digest = hashlib.blake2b(raw, digest_size=20)
    digest.update("|".join(codes).encode())
    return digest.hexdigest()


def code_digest(package_dir: Path, rules: Path) -> str:
    """A digest of every file that decides a scan's results: the package's Python sources and the rule
    YAMLs, with the interpreter and libcst versions (the parse and the traversal order come from them)."""
    digest = hashlib.blake2b(digest_size=20)
    digest.update(f"{sys.implementation.cache_tag}|{sys.version}|libcst ".encode())
    digest.update(_libcst_version_file())
    sources = [(package_dir, path) for path in package_dir.rglob("*.py") if "__pycache__" not in path.parts]
    sources += [(rules, path) for path in rules.glob("*.yaml")]
    for base, path in sorted(sources, key=lambda item: (str(item[0]), item[1].relative_to(item[0]).as_posix())):
        content = path.read_bytes()
        name = f"{base.name}/{path.relative_to(base).as_posix()}".encode()
        digest.update(b"%d:%s%d:" % (len(name), name, len(content)))
        digest.update(content)
    return digest.hexdigest()


def _libcst_version_file() -> bytes:
    """libcst's version file, read without importing libcst: a scan served from the cache never parses, and
    importing libcst would be most of its time (bench/README.md, "Startup and warm scan beside ruff")."""
    spec = importlib.util.find_spec("libcst")
    folder = spec.submodule_search_locations if spec is not None else None
    if folder:
        try:
            return (Path(list(folder)[0]) / "_version.py").read_bytes()
        except OSError:
            pass
    import libcst._version  # a layout without the file: ask the module

    return libcst._version.__version__.encode()


@lru_cache(maxsize=1)
def producer_digest() -> str:
    """`code_digest` of the running stabfix, once per process (the parent's, inherited by workers)."""
    return code_digest(Path(__file__).resolve().parent, rules_dir())


_FIELDS = get_type_hints(Finding)
_INTEGERS = {name for name, kind in _FIELDS.items() if kind is int}
_OPTIONAL_INTEGERS = {name for name, kind in _FIELDS.items() if kind == Optional[int]}  # notebook cells


def _well_formed(entry: object) -> bool:
    """A list of findings as `asdict(Finding)` wrote them: every field there, no other, each of its type."""
    if not isinstance(entry, list):
        return False
    for item in entry:
        if not isinstance(item, dict) or item.keys() != _FIELDS.keys():
            return False
        for name, value in item.items():
            if name in _INTEGERS or (name in _OPTIONAL_INTEGERS and value is not None):
                if type(value) is not int or value < 1:
                    return False
            elif name in _OPTIONAL_INTEGERS:
                continue
            elif not isinstance(value, str):
                return False
        if (
            not CODE_PATTERN.match(item["code"])
            or item["severity"] not in SEVERITIES
            or item["fix_safety"] not in SAFETIES
        ):
            return False
    return True


def _well_formed_consulted(consulted: object) -> bool:
    """`{"files": {path: digest}, "modules": {name: path}}`, strings only."""
    return (
        isinstance(consulted, dict)
        and consulted.keys() == {"files", "modules"}
        and all(
            isinstance(table, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in table.items())
            for table in consulted.values()
        )
    )


class ScanCache:
    def __init__(self, root: Path, producer: str | None = None) -> None:
        self.directory = root / CACHE_DIR_NAME
        self.file = self.directory / CACHE_FILE_NAME
        self.producer = producer if producer is not None else producer_digest()
        self.entries: dict[str, list[dict]] = {}
        # key -> what the entry's analysis consulted in other files (absent: nothing)
        self.consulted: dict[str, dict] = {}
        self.dirty = False

    def load(self) -> "ScanCache":
        try:
            data = json.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
        if (
            isinstance(data, dict)
            and data.get("format") == _FORMAT
            and data.get("producer") == self.producer
            and isinstance(data.get("entries"), dict)
            and isinstance(data.get("consulted", {}), dict)
        ):
            self.entries = data["entries"]
            self.consulted = data.get("consulted", {})
        else:
            # results of another stabfix (or unreadable): none of them may be served
            self.entries = {}
            self.dirty = self.file.exists()
        return self

    def get(self, key: str) -> list[dict] | None:
        entry = self.entries.get(key)
        if entry is None:
            return None
        consulted = self.consulted.get(key)
        if not _well_formed(entry) or (consulted is not None and not _well_formed_consulted(consulted)):
            del self.entries[key]  # recomputed by the caller, and replaced when it is put back
            self.consulted.pop(key, None)
            self.dirty = True
            return None
        return entry

    def consulted_by(self, key: str) -> dict | None:
        """What the entry's analysis consulted in other files (`Consulted.as_json()`), None for nothing."""
        return self.consulted.get(key)

    def put(self, key: str, findings: list[dict], consulted: dict | None = None) -> None:
        consulted = consulted if consulted and (consulted["files"] or consulted["modules"]) else None
        if self.entries.get(key) != findings or self.consulted.get(key) != consulted:
            self.entries[key] = findings
            if consulted is None:
                self.consulted.pop(key, None)
            else:
                self.consulted[key] = consulted
            self.dirty = True

    def save(self, live_keys: set[str]) -> None:
        if not self.dirty:
            return
        # Keep only entries seen in this run plus a bounded remainder, so the file does not grow forever.
        kept = {key: value for key, value in self.entries.items() if key in live_keys}
        consulted = {key: value for key, value in self.consulted.items() if key in kept}
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            gitignore = self.directory / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text("# created by stabfix\n*\n", encoding="utf-8")
            fd, temp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(
                    {"format": _FORMAT, "producer": self.producer, "entries": kept, "consulted": consulted},
                    handle,
                    separators=(",", ":"),
                )
            os.replace(temp, self.file)
        except OSError:
            # A read-only checkout must still scan; the cache is only an accelerator.
            pass
