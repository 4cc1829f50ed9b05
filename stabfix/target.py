"""The oldest torch a project allows, so that no fix writes an API its users' torch does not have.

Like ruff's target version: the config's `target-torch` wins. Otherwise each file's project is the
nearest folder at or above it, up to the repository root (the folder holding `.git`), whose
`pyproject.toml` (`[project]` dependencies and optional dependencies, `[dependency-groups]`, the
files of setuptools' dynamic dependencies),
`requirements*.txt` (following `-r` includes), `setup.cfg` (`install_requires`, `extras_require`),
literal `setup.py`, or published metadata (an sdist's `PKG-INFO`, an unpacked wheel's
`*.dist-info/METADATA`: `Requires-Dist`) names torch. The target is the lowest lower bound among those requirements
(`torch>=1.13` -> 1.13, `torch==1.6.0` -> 1.6, `torch~=2.0` -> 2.0); torch named without a lower
bound, or not named at all, sets no limit. Versions are compared as (major, minor): APIs arrive in
minor releases.
"""

from __future__ import annotations

import ast
import configparser
import os
import re
import sys
from dataclasses import dataclass
from email.parser import Parser
from pathlib import Path
from typing import Any, Iterable, Optional

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, from PyPI
    import tomli as tomllib

from stabfix.findings import Fix

TorchVersion = tuple[int, int]
CONFIG_KEY = "target-torch"

# A requirement that means torch, even when the rest of the line cannot be read (`torch>=1.13,,`).
_NAMES_TORCH = re.compile(r"^torch\s*(?:$|[<>=!~;\[@(,\s])", re.IGNORECASE)
_LOWER_BOUNDS = (">=", ">", "==", "~=", "===")
_INCLUDE = re.compile(r"^(?:-r|--requirement)(?:\s*=\s*|\s*)(\S+)")


@dataclass(frozen=True)
class TorchTarget:
    version: TorchVersion
    source: str  # where it came from, for people: "`torch>=1.13` in requirements.txt"
    configured: bool = False  # set by the config's `target-torch`, not read from the dependencies


def version_text(version: TorchVersion) -> str:
    return f"{version[0]}.{version[1]}"


def parse_target(value: Any) -> TorchVersion:
    """The config's `target-torch` value ("2.1", "1.13.1") as (major, minor); ValueError says why not."""
    if not isinstance(value, str):
        # A YAML/TOML number loses its trailing zeros (2.10 reads as 2.1): only a string is exact.
        raise ValueError(f"must be a quoted version string like \"2.1\", got {value!r}")
    try:
        version = Version(value.strip())
    except InvalidVersion:
        raise ValueError(f"'{value}' is not a version (write it like \"2.1\")") from None
    return _major_minor(version)


def withheld_reason(fix: Fix, target: Optional[TorchTarget]) -> str:
    """Why `fix` is not offered to a project that allows torch older than its API, or "" when it is."""
    needed = fix.requires_torch
    if needed is None or target is None or target.version >= needed:
        return ""
    hint = "" if target.configured else f" (set `{CONFIG_KEY}` to override)"
    return (
        f"the fix ({fix.description}) needs torch>={version_text(needed)}, but {target.source} allows "
        f"torch {version_text(target.version)}{hint}"
    )


@dataclass(frozen=True)
class _Declaration:
    requirement: str
    where: str
    floor: Optional[TorchVersion]


def configured_target(version: TorchVersion, config_path: Optional[Path]) -> TorchTarget:
    """The target a config's `target-torch` sets, named by the file that sets it."""
    return TorchTarget(version, f'`{CONFIG_KEY} = "{version_text(version)}"` in {_shown(config_path or Path("."))}', True)


class TorchTargets:
    """The torch target of each scanned file: the config's `target-torch`, else what the file's project
    declares (read once per folder). `warnings` collects the torch requirements that could not be read
    (they are ignored)."""

    def __init__(self, configured: Optional[TorchVersion] = None, config_path: Optional[Path] = None) -> None:
        self._configured = configured_target(configured, config_path) if configured is not None else None
        self._by_folder: dict[Path, list[_Declaration]] = {}
        self._target_of: dict[Path, Optional[TorchTarget]] = {}
        self.warnings: list[str] = []

    def for_file(self, path: Path) -> Optional[TorchTarget]:
        if self._configured is not None:
            return self._configured
        start = Path(os.path.abspath(path))
        folder = start if start.is_dir() else start.parent
        if folder not in self._target_of:
            self._target_of[folder] = self._search(folder)
        return self._target_of[folder]

    def _search(self, folder: Path) -> Optional[TorchTarget]:
        for candidate in (folder, *folder.parents):
            declarations = self._declared_in(candidate)
            if declarations:
                return _lowest(declarations)
            if (candidate / ".git").exists():
                return None  # the repository root: folders above it are another project
        return None

    def _declared_in(self, folder: Path) -> list[_Declaration]:
        if folder not in self._by_folder:
            found: list[_Declaration] = []
            found += self._from_pyproject(folder / "pyproject.toml")
            found += self._from_setup_cfg(folder / "setup.cfg")
            found += self._from_setup_py(folder / "setup.py")
            try:
                requirement_files = sorted(folder.glob("requirements*.txt"))
            except OSError:
                requirement_files = []
            for requirements in requirement_files:
                found += self._from_requirements(requirements, set())
            try:
                metadata_files = [folder / "PKG-INFO", *sorted(folder.glob("*.dist-info/METADATA"))]
            except OSError:
                metadata_files = []
            for metadata in metadata_files:
                found += self._from_core_metadata(metadata)
            self._by_folder[folder] = found
        return self._by_folder[folder]

    # -- one reader per format ------------------------------------------------------------------------
    def _from_pyproject(self, path: Path) -> list[_Declaration]:
        text = self._read(path)
        if text is None:
            return []
        try:
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, RecursionError) as exc:  # RecursionError: thousands of nested arrays
            self._warn(f"{_shown(path)}: cannot read TOML ({exc}); its torch requirement is ignored")
            return []
        project = _table(data, "project")
        lists: list[Any] = [project.get("dependencies")]
        for table in (project.get("optional-dependencies"), data.get("dependency-groups")):
            if isinstance(table, dict):
                lists.extend(table.values())
        found = self._requirements(_strings(lists), path)
        # `dynamic = ["dependencies"]` read by setuptools from requirement files.
        dynamic = _table(_table(_table(data, "tool"), "setuptools"), "dynamic")
        optional = _table(dynamic, "optional-dependencies")
        for entry in (dynamic.get("dependencies"), *optional.values()):
            files = entry.get("file") if isinstance(entry, dict) else None
            for name in [files] if isinstance(files, str) else _strings([files]):
                found += self._from_requirements(path.parent / name, set())
        return found

    def _from_setup_cfg(self, path: Path) -> list[_Declaration]:
        text = self._read(path)
        if text is None:
            return []
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read_string(text, source=str(path))
        except configparser.Error as exc:
            self._warn(f"{_shown(path)}: cannot read ({exc.__class__.__name__}); its torch requirement is ignored")
            return []
        values = []
        if parser.has_option("options", "install_requires"):
            values.append(parser.get("options", "install_requires"))
        if parser.has_section("options.extras_require"):
            values.extend(value for _, value in parser.items("options.extras_require"))
        lines = [line.strip() for value in values for line in value.splitlines()]
        return self._requirements([line for line in lines if line and not line.startswith(("#", ";"))], path)

    def _from_setup_py(self, path: Path) -> list[_Declaration]:
        text = self._read(path)
        if text is None:
            return []
        try:
            module = ast.parse(text, filename=str(path))
        except (SyntaxError, ValueError, RecursionError):
            return []  # not ours to report: the scan itself reports a broken setup.py
        literals: dict[str, Any] = {}
        for statement in module.body:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
                value = _literal(statement.value, {})
                if value is not None:
                    literals[statement.targets[0].id] = value
        values: list[Any] = []
        for node in ast.walk(module):
            if isinstance(node, ast.Call) and _callee_name(node.func) == "setup":
                for keyword in node.keywords:
                    value = _literal(keyword.value, literals)
                    if keyword.arg == "install_requires":
                        values.append(value)
                    elif keyword.arg == "extras_require" and isinstance(value, dict):
                        values.extend(value.values())
        return self._requirements(_strings(values), path)

    def _from_core_metadata(self, path: Path) -> list[_Declaration]:
        """`Requires-Dist` of an sdist's PKG-INFO or an unpacked wheel's METADATA: the project as published."""
        text = self._read(path)
        if text is None:
            return []
        return self._requirements(Parser().parsestr(text, headersonly=True).get_all("Requires-Dist") or [], path)

    def _from_requirements(self, path: Path, seen: set[Path]) -> list[_Declaration]:
        resolved = Path(os.path.abspath(path))
        if resolved in seen:
            return []
        seen.add(resolved)
        text = self._read(path)
        if text is None:
            return []
        found: list[_Declaration] = []
        requirements: list[str] = []
        for line in _logical_lines(text):
            include = _INCLUDE.match(line)
            if include:
                found += self._from_requirements(path.parent / include.group(1), seen)
            elif not line.startswith("-"):  # other pip options: -e, -c, --index-url ...
                requirements.append(line.split(" --", 1)[0].strip())  # `--hash=...` after a requirement
        return self._requirements(requirements, path) + found

    # -- shared ---------------------------------------------------------------------------------------
    def _requirements(self, texts: Iterable[str], path: Path) -> list[_Declaration]:
        found = []
        for text in texts:
            text = text.strip()
            try:
                requirement = Requirement(text)
            except InvalidRequirement:
                if _NAMES_TORCH.match(text):
                    self._warn(f"{_shown(path)}: cannot read the requirement `{text}`; ignored")
                continue
            if canonicalize_name(requirement.name) == "torch":
                found.append(_Declaration(text, _shown(path), _floor(requirement.specifier)))
        return found

    def _read(self, path: Path) -> Optional[str]:
        try:
            if not path.is_file():
                return None
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self._warn(f"{_shown(path)}: cannot read ({exc.__class__.__name__}); its torch requirement is ignored")
            return None

    def _warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)


def _lowest(declarations: list[_Declaration]) -> Optional[TorchTarget]:
    bounded = [item for item in declarations if item.floor is not None]
    if not bounded:
        return None
    lowest = min(bounded, key=lambda item: item.floor)  # type: ignore[arg-type, return-value]
    return TorchTarget(lowest.floor, f"`{lowest.requirement}` in {lowest.where}")  # type: ignore[arg-type]


def _floor(specifier: SpecifierSet) -> Optional[TorchVersion]:
    """The oldest (major, minor) a specifier allows: the highest of its lower bounds."""
    floors = []
    for spec in specifier:
        if spec.operator not in _LOWER_BOUNDS:
            continue
        try:
            floors.append(_major_minor(Version(spec.version.removesuffix(".*"))))
        except InvalidVersion:
            continue  # `===` takes arbitrary strings
    return max(floors, default=None)


def _major_minor(version: Version) -> TorchVersion:
    release = (*version.release, 0)
    return release[0], release[1]


def _logical_lines(text: str) -> list[str]:
    """A requirements file's lines, backslash continuations joined, comments and blanks dropped."""
    lines, pending = [], ""
    for raw in text.splitlines():
        if raw.rstrip().endswith("\\"):
            pending += raw.rstrip()[:-1] + " "
            continue
        line = re.sub(r"(^|\s)#.*$", "", pending + raw).strip()  # pip: `#` at the start or after a space
        pending = ""
        if line:
            lines.append(line)
    return lines


def _table(data: Any, key: str) -> dict:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def _strings(values: Iterable[Any]) -> list[str]:
    """Every string of the given lists (other items, like `{include-group = ...}`, are skipped)."""
    return [item for value in values if isinstance(value, (list, tuple)) for item in value if isinstance(item, str)]


def _literal(node: ast.expr, names: dict[str, Any]) -> Any:
    if isinstance(node, ast.Name):
        return names.get(node.id)
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _callee_name(func: ast.expr) -> Optional[str]:
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def _shown(path: Path) -> str:
    """The path relative to the working folder when it lies below it, else absolute."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)
    return str(path) if relative.startswith("..") else Path(relative).as_posix()
