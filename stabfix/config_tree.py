"""Which configuration governs each file, as ruff decides it: the nearest config file at or above the
file's folder, or the one `--config` names for every file. Read once per file and once per folder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

import pathspec

from stabfix.config import Config, configs_in, declares_stabfix_table, load_config, load_config_file


class ConfigTree:
    """A cached resolver Path -> Config. `warnings` names each folder with two config files and the one
    used (stabfix.yaml wins over pyproject.toml's [tool.stabfix]); ConfigError escapes from the lookups."""

    def __init__(self, explicit: Path | None = None) -> None:
        self._explicit = load_config(Path("."), explicit=explicit) if explicit is not None else None
        self._file_of_folder: dict[Path, Path | None] = {}
        self._configs: dict[Path, Config] = {}
        self._defaults: dict[Path, Config] = {}
        self._exclusions: dict[str, tuple[Path, pathspec.PathSpec | None]] = {}
        self._of_folder: dict[str, Config] = {}  # absolute folder, as given -> its config
        self.warnings: list[str] = []

    def config_for(self, path: Path) -> Config:
        """The config of a file or folder (a folder's own config file counts)."""
        if self._explicit is not None:
            return self._explicit
        absolute = os.path.abspath(path)
        # os.path, not Path: a folder we may not enter holds no config for us, it is no traceback
        folder = absolute if os.path.isdir(absolute) else os.path.dirname(absolute)
        config = self._of_folder.get(folder)
        if config is None:
            config = self._of_folder[folder] = self._resolve(Path(os.path.realpath(folder)))
        return config

    def _resolve(self, folder: Path) -> Config:
        config_file = self._nearest(folder)
        if config_file is None:
            # no config above: defaults, with the scanned folder as the place for the cache
            return self._defaults.setdefault(folder, Config(root=folder))
        if config_file not in self._configs:
            self._configs[config_file] = load_config_file(config_file)
        return self._configs[config_file]

    def exclusion(self, folder: Path) -> tuple[Path, pathspec.PathSpec | None]:
        """The `exclude` patterns in force while walking `folder`, and the folder they are relative to."""
        key = os.path.abspath(folder)
        if key not in self._exclusions:
            config = self.config_for(folder)
            spec = pathspec.GitIgnoreSpec.from_lines(config.exclude) if config.exclude else None
            self._exclusions[key] = (config.base_of("exclude"), spec)
        return self._exclusions[key]

    def _nearest(self, folder: Path) -> Path | None:
        walked: list[Path] = []
        found: Path | None = None
        for candidate in _self_and_parents(folder):
            if candidate in self._file_of_folder:
                found = self._file_of_folder[candidate]
                break
            walked.append(candidate)
            files = configs_in(candidate)
            if files:
                found = files[0]
                self._warn_if_both(candidate, files)
                break
        for visited in walked:
            self._file_of_folder[visited] = found
        return found

    def _warn_if_both(self, folder: Path, files: list[Path]) -> None:
        if len(files) > 1 and declares_stabfix_table(files[1]):
            self.warnings.append(
                f"{folder} has both {files[0].name} and [tool.stabfix] in {files[1].name}; "
                f"using {files[0].name} (the other one is ignored)"
            )


def _self_and_parents(folder: Path) -> Iterator[Path]:
    """Lazily: most walks stop at the first folder, already resolved for a sibling."""
    yield folder
    yield from folder.parents
