"""Project configuration: `[tool.stabfix]` in pyproject.toml or a `stabfix.yaml`, found by walking up.

A config may `extend` another config file (a path relative to it): the base is read first and the
child's keys replace the base's, except the rule selection, which is kept as the chain's steps (see
`RuleStep`). Which config governs which file is `stabfix.config_tree`'s job.
"""

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

CONFIG_KEYS = (
    "select", "ignore", "per-file-ignores", "exclude", "verify", "target-torch",
    "extend", "extend-select", "extend-ignore",
)
YAML_NAME = "stabfix.yaml"
# Keys whose value replaces the base's whole when a config that `extend`s another sets them.
_REPLACED_KEYS = ("select", "ignore", "per-file-ignores", "exclude", "verify", "target-torch")


class ConfigError(Exception):
    """A configuration problem the user must fix; the message names the file and the key."""


@dataclass
class Config:
    path: Path | None = None  # the file the settings came from, None when defaults apply
    root: Path = field(default_factory=Path.cwd)  # folder holding the config file (project root)
    # this file's select/ignore, or the nearest base's that sets them; the rules that run are rule_steps'
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=list)
    verify: dict[str, Any] = field(default_factory=dict)  # raw; stabfix.verify validates its keys
    # `target-torch`: the oldest torch the project supports, over what its dependencies declare.
    target_torch: TorchVersion | None = None
    # The rule selection of this file and of the files it extends, the farthest base first.
    rule_steps: tuple["RuleStep", ...] = ()
    # key -> the file that set it (this one or one it extends): patterns are relative to that file's folder
    declared_in: dict[str, Path] = field(default_factory=dict)
    extends: tuple[Path, ...] = ()  # the files this one inherits from, nearest first

    def base_of(self, key: str) -> Path:
        """The folder the key's patterns are relative to: that of the config file that declared it."""
        declared = self.declared_in.get(key)
        return declared.parent.resolve() if declared is not None else self.root


@dataclass(frozen=True)
class RuleStep:
    """One config file's rule selection. Steps apply in order, as ruff's do: `select` (when set) replaces
    the rules chosen so far, `extend-select` adds, `ignore` and `extend-ignore` remove."""

    origin: Path
    select: tuple[str, ...] | None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()


def find_config_file(start: Path) -> Path | None:
    """The nearest stabfix.yaml, or pyproject.toml that has a [tool.stabfix] table, at or above start."""
    start = start.resolve()
    # os.path, not Path: a folder we may not enter holds no config for us, it is no traceback
    folder = start if os.path.isdir(start) else start.parent
    for candidate_dir in (folder, *folder.parents):
        found = configs_in(candidate_dir)
        if found:
            return found[0]
    return None


def configs_in(folder: Path) -> list[Path]:
    """The config files in one folder, the one that wins first: stabfix.yaml, then a pyproject.toml
    with a [tool.stabfix] table."""
    found = []
    yaml_file = folder / YAML_NAME
    if os.path.isfile(yaml_file):
        found.append(yaml_file)
    pyproject = folder / "pyproject.toml"
    if os.path.isfile(pyproject) and _pyproject_has_section(pyproject):
        found.append(pyproject)
    return found


def declares_stabfix_table(pyproject: Path) -> bool:
    """Whether the file really has a [tool.stabfix] table (not only the words in a comment)."""
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return False
    tool = data.get("tool")
    return isinstance(tool, dict) and "stabfix" in tool


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
    return load_config_file(path)


def load_config_file(path: Path) -> Config:
    """One config file with the files it `extend`s, the child's keys over the base's. Raises ConfigError."""
    chain = _extend_chain(path)
    config = Config()
    for file, table in reversed(chain):  # the farthest base first
        config = _overlay(config, file, table)
    config.extends = tuple(file for file, _ in chain[1:])
    return config


def _extend_chain(path: Path) -> list[tuple[Path, dict[str, Any]]]:
    """(file, table) for the file and each one it extends, nearest first; a cycle is a ConfigError."""
    chain: list[tuple[Path, dict[str, Any]]] = []
    seen: list[Path] = []
    current = path
    while True:
        real = current.resolve()
        if real in seen:
            loop = " -> ".join(str(file) for file in (*[file for file, _ in chain], current))
            raise ConfigError(f"{path}: 'extend' forms a cycle: {loop}")
        seen.append(real)
        table = _read_table(current)
        _check_keys(table, current)
        chain.append((current, table))
        base = table.get("extend")
        if base is None:
            return chain
        if not isinstance(base, str) or not base.strip():
            raise ConfigError(f"{current}: 'extend' must be the path of another config file")
        target = Path(os.path.normpath(current.parent / os.path.expanduser(base)))
        if not os.path.isfile(target):
            raise ConfigError(f"{current}: 'extend' names {base!r}, which is not a file")
        current = target


def _overlay(base: Config, path: Path, table: dict[str, Any]) -> Config:
    """`base` with the keys `table` (read from `path`) sets replacing its own."""
    own = _config_from_table(table, path)
    declared = {**base.declared_in, **{key: path for key in _REPLACED_KEYS if key in table}}
    step = RuleStep(
        path,
        tuple(own.select) if "select" in table else None,
        tuple(_string_list(table, "extend-select", path)),
        tuple(own.ignore) + tuple(_string_list(table, "extend-ignore", path)),
    )

    def pick(key: str, mine: Any, theirs: Any) -> Any:
        return mine if key in table else theirs

    return Config(
        path=path,
        root=own.root,
        select=pick("select", own.select, base.select),
        ignore=pick("ignore", own.ignore, base.ignore),
        per_file_ignores=pick("per-file-ignores", own.per_file_ignores, base.per_file_ignores),
        exclude=pick("exclude", own.exclude, base.exclude),
        verify=pick("verify", own.verify, base.verify),
        target_torch=pick("target-torch", own.target_torch, base.target_torch),
        rule_steps=(*base.rule_steps, step),
        declared_in=declared,
    )


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


def _check_keys(table: dict[str, Any], path: Path) -> None:
    unknown = sorted(set(table) - set(CONFIG_KEYS))
    if unknown:
        raise ConfigError(
            f"{path}: unknown config key '{unknown[0]}' (known keys: {', '.join(CONFIG_KEYS)})"
        )


def _config_from_table(table: dict[str, Any], path: Path) -> Config:
    _check_keys(table, path)
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
