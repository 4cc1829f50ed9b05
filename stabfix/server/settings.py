"""What the configuration of an open file's project says for that file: the rules that run on it, its
torch target, whether `exclude` leaves it out, and which folder is its project."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

from stabfix.catalog import RuleSpec
from stabfix.config_tree import ConfigTree
from stabfix.file_settings import FileSettings as PerFileRules
from stabfix.target import TorchTarget


@dataclass(frozen=True)
class FileSettings:
    codes: tuple[str, ...]
    torch_target: Optional[TorchTarget]
    # The folder the file's cross-file facts come from: the config's folder, else the editor's workspace
    # folder holding the file, else the file's own folder.
    root: Path
    # Neither a config nor a workspace folder places the file in a project (a file opened on its own):
    # like `stabfix scan FILE`, it is analysed alone rather than with everything under its folder.
    alone: bool
    exclude: tuple[str, ...]
    excluded: bool


def settings_for(path: Path, workspace_roots: Sequence[Path], catalog: dict[str, RuleSpec]) -> FileSettings:
    """Raises ConfigError or SelectorError (a one-line message naming the config file). The file's
    settings come from the same per-folder resolution as `scan` (nearest config, `extend` chains)."""
    tree = ConfigTree()
    config = tree.config_for(path)
    rules = PerFileRules(tree, catalog, None, [])
    base, spec = tree.exclusion(Path(os.path.abspath(path)).parent)
    excluded = spec is not None and spec.match_file(_relative(path, base))
    root = config.root if config.path is not None else _workspace_root(path, workspace_roots)
    return FileSettings(
        codes=rules.codes_for(path),
        torch_target=rules.torch_target(path),
        root=root or Path(os.path.abspath(path)).parent,
        alone=root is None,
        exclude=tuple(config.exclude),
        excluded=excluded,
    )


def _relative(path: Path, root: Path) -> str:
    """The path patterns of the config match (the config's folder is resolved; the path may not be)."""
    for candidate in (Path(os.path.abspath(path)), path.resolve()):
        try:
            return candidate.relative_to(root).as_posix()
        except ValueError:
            continue
    return path.as_posix()


def _workspace_root(path: Path, workspace_roots: Sequence[Path]) -> Optional[Path]:
    absolute = Path(os.path.abspath(path))
    holding = [root for root in workspace_roots if absolute.is_relative_to(root)]
    # The innermost folder: a workspace may hold nested projects.
    return max(holding, key=lambda root: len(root.parts)) if holding else None
