"""Analysing an open document: its buffer text through the engine `scan` uses, with the rest of its
project read from disk, under the config of the file's project; results cached by content.

Not thread-safe: the server runs every analysis on one worker thread."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Optional, Sequence, Union

from stabfix.catalog import SelectorError, load_catalog
from stabfix.checkers import checker_classes
from stabfix.config import ConfigError
from stabfix.discovery import discover
from stabfix.engine import Analysis, AnalysisError, AnalysedFinding, analyse_text, describe_error
from stabfix.fixer import FixError, fix_text, fixed_by
from stabfix.project import Project, ProjectIndex
from stabfix.project.modules import ModuleMap
from stabfix.server.settings import FileSettings, settings_for


ALL_SAFE = "all safe"


@dataclass
class DocumentAnalysis:
    """One document text's findings (each with the fix `apply` would make, if any), or why there are none."""

    path: Path
    text: str
    findings: list[AnalysedFinding] = field(default_factory=list)
    # A one-line reason the file could not be (fully) analysed: a syntax error, a bad config, a failed rule.
    problem: Optional[str] = None
    problem_in_config: bool = False  # the file's config is wrong: no rule ran on it
    analysis: Optional[Analysis] = None
    settings: Optional[FileSettings] = None
    # The texts its fixes make (by finding index, or ALL_SAFE), computed once: an editor asks for code
    # actions at every cursor move. None: the fix could not be made.
    fixed: dict[Union[int, str], Optional[str]] = field(default_factory=dict)


@dataclass
class _Cached:
    key: str
    result: DocumentAnalysis
    consulted: Optional[dict]  # what the analysis read of other files (`Consulted.as_json()`)


class Analyser:
    def __init__(self, workspace_roots: Sequence[Path] = ()) -> None:
        self.workspace_roots = [Path(os.path.abspath(root)) for root in workspace_roots]
        # Each project's files, listed and mapped to module names once until a file is saved or changes.
        self._modules_by_root: dict[tuple[Path, tuple[str, ...]], ModuleMap] = {}
        self._cache: dict[Path, _Cached] = {}

    @cached_property
    def _catalog(self):
        return load_catalog()  # loaded by the first analysis, on the worker thread

    @cached_property
    def _checkers(self):
        return checker_classes()

    def forget_project_files(self) -> None:
        """A file was saved, created or deleted: list each project's files afresh."""
        self._modules_by_root.clear()

    def forget(self, path: Path) -> None:
        self._cache.pop(path, None)

    def analyse(self, path: Path, text: str) -> DocumentAnalysis:
        try:
            settings = settings_for(path, self.workspace_roots, self._catalog)
        except (ConfigError, SelectorError) as error:
            return DocumentAnalysis(path, text, problem=str(error), problem_in_config=True)
        if settings.excluded or not settings.codes:
            return DocumentAnalysis(path, text, settings=settings)
        key = _key(path, text, settings)
        cached = self._cache.get(path)
        if cached is not None and cached.key == key and self._still_holds(cached, settings):
            return cached.result
        project = self._project(path, text, settings)
        view = project.view(str(path))
        result = DocumentAnalysis(path, text, settings=settings)
        try:
            analysis = analyse_text(
                text, self._display(path, settings), self._classes(settings), self._catalog, settings.torch_target, view
            )
        except AnalysisError as error:
            result.problem = str(error)
        except RecursionError:
            result.problem = "code nested too deeply to analyse"
        except Exception as error:  # a stabfix bug must not take the editor's server down
            result.problem = f"internal error while analysing ({describe_error(error)}); please report it"
        else:
            result.analysis, result.findings, result.problem = analysis, analysis.findings, analysis.error
        self._cache[path] = _Cached(key, result, view.consulted.as_json())
        return result

    def fix_one(self, result: DocumentAnalysis, item: AnalysedFinding) -> Optional[str]:
        """The document's text with this finding's fix made (None when it cannot be made)."""
        if result.analysis is None or result.analysis.module is None or item.fix is None:
            return None
        index = result.findings.index(item)
        if index not in result.fixed:
            try:
                text = fixed_by(result.analysis.module, [item.fix], self._display(result.path, result.settings))
            except (FixError, RecursionError):
                text = None
            result.fixed[index] = text
        return result.fixed[index]

    def fix_all_safe(self, result: DocumentAnalysis) -> Optional[str]:
        """The document's text after what `stabfix apply` does to it (safe fixes, in rounds)."""
        settings = result.settings
        if result.analysis is None or settings is None:
            return None
        if ALL_SAFE not in result.fixed:
            result.fixed[ALL_SAFE] = self._fix_all_safe(result, settings)
        return result.fixed[ALL_SAFE]

    def _fix_all_safe(self, result: DocumentAnalysis, settings: FileSettings) -> Optional[str]:
        view = self._project(result.path, result.text, settings).view(str(result.path))
        try:
            outcome = fix_text(
                result.text, self._display(result.path, settings), self._classes(settings), self._catalog,
                unsafe=False, analysis=result.analysis, torch_target=settings.torch_target, project=view,
            )
        except (FixError, AnalysisError, RecursionError):
            return None
        return outcome.text

    def _classes(self, settings: FileSettings):
        return [self._checkers[code] for code in settings.codes if code in self._checkers]

    def _project(self, path: Path, text: str, settings: FileSettings) -> Project:
        """The project as `scan` of its root sees it, with this file's buffer in place of its saved text."""
        key = (settings.root, settings.exclude)
        modules = self._modules_by_root.get(key) if not settings.alone else ModuleMap([str(path)], [str(settings.root)])
        if modules is None:
            found = discover([settings.root], settings.root, list(settings.exclude))
            modules = self._modules_by_root[key] = ModuleMap([str(file) for file in found.files], [str(settings.root)])
        if os.path.abspath(path) not in modules.files:  # a file the project listing leaves out: map it too
            modules = ModuleMap([*modules.files, str(path)], modules.roots)
        return Project(ProjectIndex(modules.files, modules.roots, sources={str(path): text}, modules=modules))

    def _still_holds(self, cached: _Cached, settings: FileSettings) -> bool:
        """Other files the cached result consulted are as they were (they may have been saved since)."""
        if not cached.consulted or not any(cached.consulted.values()):
            return True
        index = self._project(cached.result.path, cached.result.text, settings).index
        return index.still_holds(cached.consulted)

    @staticmethod
    def _display(path: Path, settings: Optional[FileSettings]) -> str:
        if settings is not None:
            try:
                return Path(os.path.abspath(path)).relative_to(settings.root).as_posix()
            except ValueError:
                pass
        return Path(path).as_posix()


def _key(path: Path, text: str, settings: FileSettings) -> str:
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20)
    digest.update(repr((str(path), settings.codes, settings.torch_target, str(settings.root), settings.alone)).encode())
    return digest.hexdigest()
