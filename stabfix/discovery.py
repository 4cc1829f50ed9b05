"""Finding the Python files and notebooks to analyse: recursive, sorted, honouring .gitignore and config
excludes (`exclude: ["*.ipynb"]` leaves notebooks out)."""

from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import pathspec

from stabfix.findings import FileError
from stabfix.notebook import NOTEBOOK_SUFFIX, PYTHON_SUFFIXES
from stabfix.source import SourceError, read_regular_file

SKIPPED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__", ".mypy_cache",
        ".pytest_cache", ".ruff_cache", ".stabfix_cache", "node_modules", "site-packages",
        "build", "dist", ".eggs", ".ipynb_checkpoints",
    }
)


@dataclass
class Discovery:
    files: list[Path] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    empty_dirs: list[Path] = field(default_factory=list)


def _gitignore_spec(folder: Path) -> pathspec.PathSpec | None:
    ignore_file = folder / ".gitignore"
    if not os.path.lexists(ignore_file):
        return None
    try:
        lines = read_regular_file(ignore_file).decode("utf-8", errors="replace").splitlines()
    except SourceError:  # unreadable, or a FIFO or device: as if absent
        return None
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines)
    except (ValueError, re.error):
        # git skips the lines it cannot parse and honours the rest
        return pathspec.GitIgnoreSpec.from_lines([line for line in lines if _valid_pattern(line)])


def _valid_pattern(line: str) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except (ValueError, re.error):
        return False
    return True


# folder -> (the folder the patterns are relative to, the `exclude` patterns in force there)
Exclusion = Callable[[Path], "tuple[Path, pathspec.PathSpec | None]"]


def discover(
    paths: list[Path], root: Path | None = None, exclude: Sequence[str] = (), exclusion_for: Exclusion | None = None
) -> Discovery:
    """Files under the given paths; explicit file arguments are always included. A walked folder's
    entries are excluded by `exclusion_for(folder)` (each folder's own config), else by `exclude`
    relative to `root` everywhere."""
    result = Discovery()
    if exclusion_for is None:
        fixed = (root or Path.cwd(), pathspec.GitIgnoreSpec.from_lines(exclude) if exclude else None)

        def exclusion_for(folder: Path) -> tuple[Path, pathspec.PathSpec | None]:
            return fixed
    seen: set[Path] = set()
    for path in paths:
        try:
            os.lstat(path)
        except PermissionError:
            result.errors.append(FileError(str(path), "permission denied", fatal=True))
            continue
        except OSError:
            result.errors.append(FileError(str(path), "path does not exist", fatal=True))
            continue
        if os.path.isdir(path):
            before = len(result.files)
            _walk_dir(path, exclusion_for, result, seen)
            if len(result.files) == before:
                result.empty_dirs.append(path)
        elif _neither_python_nor_notebook(path):
            result.errors.append(FileError(str(path), NOT_PYTHON_MESSAGE, fatal=True))
        else:
            _add_file(path, result, seen)
    return result


NOT_PYTHON_MESSAGE = "not a Python file or notebook (stabfix reads .py, .pyi and .ipynb files)"


def _neither_python_nor_notebook(path: Path) -> bool:
    """A file named on the command line with another suffix (README.md) is a mistake, never a clean scan;
    a file without one (a `bin/train` script) is read as Python."""
    suffix = path.suffix.lower()
    return bool(suffix) and suffix not in (*PYTHON_SUFFIXES, NOTEBOOK_SUFFIX)


def _add_file(path: Path, result: Discovery, seen: set[Path]) -> None:
    key = Path(os.path.abspath(path))
    if key not in seen:
        seen.add(key)
        result.files.append(path)


def _excluded(path: Path, exclusion: tuple[Path, pathspec.PathSpec | None], is_dir: bool) -> bool:
    root, spec = exclusion
    if spec is None:
        return False
    try:
        relative = path.resolve().relative_to(root).as_posix()
    except ValueError:
        relative = path.as_posix()
    return spec.match_file(relative + "/" if is_dir else relative)


def _walk_dir(top: Path, exclusion_for: Exclusion, result: Discovery, seen: set[Path]) -> None:
    visited_real: set[str] = set()
    # (folder, gitignore specs in force: (base folder, spec))
    stack: list[tuple[Path, tuple]] = [(top, ())]
    while stack:
        folder, inherited = stack.pop()
        real = os.path.realpath(folder)
        if real in visited_real:
            continue
        visited_real.add(real)
        spec = _gitignore_spec(folder)
        specs = inherited + ((folder, spec),) if spec is not None else inherited
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except PermissionError:
            result.errors.append(FileError(str(folder), "permission denied, folder skipped"))
            continue
        except OSError as exc:
            result.errors.append(FileError(str(folder), exc.strerror or str(exc)))
            continue
        subfolders: list[Path] = []
        exclusion = exclusion_for(folder)
        for entry in entries:
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir()
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    result.errors.append(FileError(str(path), "symlink loop, skipped"))
                continue
            if is_dir:
                if entry.is_symlink() and _is_loop(path):
                    result.errors.append(FileError(str(path), "symlink loop (points to a parent folder), skipped"))
                    continue
                if entry.name in SKIPPED_DIRS or entry.name.endswith(".egg-info"):
                    continue
                # os.path.exists: a folder we may not enter is reported when it is walked, not here
                if os.path.exists(path / "pyvenv.cfg") or _ignored(path, specs, True):
                    continue
                if _excluded(path, exclusion, True):
                    continue
                subfolders.append(path)
            elif entry.name.endswith((".py", NOTEBOOK_SUFFIX)):
                if entry.is_symlink() and not os.path.exists(path):
                    try:
                        os.stat(path)
                    except OSError as exc:
                        message = "symlink loop, skipped" if exc.errno == errno.ELOOP else "broken symlink, skipped"
                        result.errors.append(FileError(str(path), message))
                    continue
                if _ignored(path, specs, False) or _excluded(path, exclusion, False):
                    continue
                _add_file(path, result, seen)
        stack.extend((sub, specs) for sub in reversed(subfolders))


def _is_loop(link: Path) -> bool:
    target = os.path.realpath(link)
    parent = os.path.realpath(link.parent)
    return parent == target or parent.startswith(target + os.sep)


def _ignored(path: Path, specs: tuple, is_dir: bool) -> bool:
    for base, spec in specs:
        relative = path.relative_to(base).as_posix()
        if spec.match_file(relative + "/" if is_dir else relative):
            return True
    return False
