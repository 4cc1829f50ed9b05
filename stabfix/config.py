"""Project configuration: `[tool.stabfix]` in pyproject.toml or a `stabfix.yaml`, found by walking up."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pathspec
import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, from PyPI
    import tomli as tomllib

from stabfix.target import TorchVersion, parse_target

CONFIG_KEYS = ("select", "ignore", "per-file-ignores", "exclude", "verify", "target-torch")
YAML_NAME = "stabfix.yaml"


class ConfigError(Exception):
    """A configuration problem the user must fix; the message names the file and the key."""


@dataclass
class Config:
    path: Path | None = None  # the file the settings came from, None when defaults apply
    root: Path = field(default_factory=Path.cwd)  # folder holding the config file (project root)
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=list)
    verify: dict[str, Any] = field(default_factory=dict)  # raw; stabfix.verify validates its keys
    # `target-torch`: the oldest torch the project supports, over what its dependencies declare.
    target_torch: TorchVersion | None = None


def find_config_file(start: Path) -> Path | None:
    """The nearest stabfix.yaml, or pyproject.toml that has a [tool.stabfix] table, at or above start."""
    start = start.resolve()
    # os.path, not Path: a folder we may not enter holds no config for us, it is no traceback
    folder = start if os.path.isdir(start) else start.parent
    for candidate_dir in (folder, *folder.parents):
        yaml_file = candidate_dir / YAML_NAME
        if os.path.isfile(yaml_file):
            return yaml_file
        pyproject = candidate_dir / "pyproject.toml"
        if os.path.isfile(pyproject) and _pyproject_has_section(pyproject):
            return pyproject
    return None


def _pyproject_has_section(pyproject: Path) -> bool:
    try:
        text = pyproject.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    # A cheap textual check first: parsing every pyproject on the way up is wasted work.
    return "tool.stabfix" in text


def load_config(start: Path, explicit: Path | None = None) -> Config:
    """Read the configuration that governs `start` (or the explicit file). Raises ConfigError."""
    path = explicit if explicit is not None else find_config_file(start)
    if path is None:
        root = start.resolve()
        return Config(root=root if os.path.isdir(root) else root.parent)
    if not path.is_file():
        raise ConfigError(f"{path}: config file does not exist")
    table = _read_table(path)
    return _config_from_table(table, path)


def _read_table(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config: {exc}") from None
    if path.suffix == ".toml":
        try:
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, RecursionError) as exc:
            raise ConfigError(f"{path}: malformed TOML: {exc}") from None
        table = data.get("tool", {}).get("stabfix", {})
    else:
        try:
            table = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            where = getattr(exc, "problem_mark", None)
            line = f" (line {where.line + 1})" if where is not None else ""
            problem = getattr(exc, "problem", None) or "invalid YAML"
            raise ConfigError(f"{path}: malformed YAML{line}: {problem}") from None
        if table is None:
            table = {}
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: expected a mapping of settings, got {type(table).__name__}")
    return table


def _config_from_table(table: dict[str, Any], path: Path) -> Config:
    unknown = sorted(set(table) - set(CONFIG_KEYS))
    if unknown:
        raise ConfigError(
            f"{path}: unknown config key '{unknown[0]}' (known keys: {', '.join(CONFIG_KEYS)})"
        )
    per_file = table.get("per-file-ignores", {}) or {}
    if not isinstance(per_file, dict):
        raise ConfigError(f"{path}: 'per-file-ignores' must map glob patterns to lists of codes")
    verify = table.get("verify", {}) or {}
    if not isinstance(verify, dict):
        raise ConfigError(f"{path}: 'verify' must be a mapping")
    return Config(
        path=path,
        root=path.parent.resolve(),
        select=_string_list(table, "select", path),
        ignore=_string_list(table, "ignore", path),
        per_file_ignores={
            _pattern(str(pattern), "per-file-ignores", path):
            _as_string_list(codes, f"per-file-ignores.{pattern}", path)
            for pattern, codes in per_file.items()
        },
        exclude=[_pattern(pattern, "exclude", path) for pattern in _string_list(table, "exclude", path)],
        verify=verify,
        target_torch=_target_torch(table, path),
    )


def _target_torch(table: dict[str, Any], path: Path) -> TorchVersion | None:
    if table.get("target-torch") is None:
        return None
    try:
        return parse_target(table["target-torch"])
    except ValueError as exc:
        raise ConfigError(f"{path}: 'target-torch' {exc}") from None


def _pattern(pattern: str, key: str, path: Path) -> str:
    """A gitignore-style pattern, checked now so that a bad one is a config error, not a traceback later."""
    try:
        pathspec.GitIgnoreSpec.from_lines([pattern])
    except (ValueError, re.error) as exc:
        detail = f" ({exc.msg})" if isinstance(exc, re.error) else ""  # re's own position is in its regex, not here
        raise ConfigError(f"{path}: '{key}' has an invalid pattern {pattern!r}{detail}") from None
    return pattern


def _string_list(table: dict[str, Any], key: str, path: Path) -> list[str]:
    return _as_string_list(table.get(key, []) or [], key, path)


def _as_string_list(value: Any, key: str, path: Path) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"{path}: '{key}' must be a list of strings")
    return list(value)
