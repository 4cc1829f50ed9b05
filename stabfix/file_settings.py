"""What each scanned file runs: its rule codes and its torch target, from the config that governs it
(`stabfix.config_tree`) with the command line's `--select`/`--ignore` applied last, as ruff applies its own."""

from __future__ import annotations

import os
from pathlib import Path

import pathspec

from stabfix.catalog import RuleSpec, default_codes, resolve_selectors
from stabfix.config import Config, ConfigError
from stabfix.config_tree import ConfigTree
from stabfix.target import TorchTarget, TorchTargets, configured_target

NOTHING_SELECTED = "no rules selected: --select/--ignore and the config's select/ignore leave nothing to run"


class FileSettings:
    def __init__(
        self, tree: ConfigTree, catalog: dict[str, RuleSpec], select: list[str] | None, ignore: list[str]
    ) -> None:
        """`select`: the command line's `--select` (None when not given), which replaces every config's."""
        self.tree = tree
        self._catalog = catalog
        self._cli_select = resolve_selectors(select, catalog, "--select") if select is not None else None
        self._cli_ignore = resolve_selectors(ignore, catalog, "--ignore")
        # id(config) -> (config, its codes, its per-file ignores); the tree keeps one object per config file
        self._rules: dict[int, tuple[Config, frozenset[str], list[tuple[pathspec.PathSpec, set[str]]]]] = {}
        self._torch = TorchTargets()
        self.codes_in_use: set[str] = set()  # every code some config of this run selects (for SARIF's rule list)

    @property
    def warnings(self) -> list[str]:
        return [*self.tree.warnings, *self._torch.warnings]

    def check(self, path: Path) -> None:
        """Read the config of a path now, so that its problems are reported before any file is looked at."""
        self._rules_of(self.tree.config_for(path))

    def codes_for(self, path: Path) -> tuple[str, ...]:
        config = self.tree.config_for(path)
        _, codes, ignores = self._rules_of(config)
        if ignores:
            base = config.base_of("per-file-ignores")
            try:
                relative = Path(os.path.abspath(path)).relative_to(base).as_posix()
            except ValueError:
                relative = Path(path).as_posix()
            for spec, ignored in ignores:
                if spec.match_file(relative):
                    codes = codes - ignored
        return tuple(sorted(codes))

    def torch_target(self, path: Path) -> TorchTarget | None:
        config = self.tree.config_for(path)
        if config.target_torch is not None:
            return configured_target(config.target_torch, config.declared_in.get("target-torch", config.path))
        return self._torch.for_file(path)

    def _rules_of(self, config: Config):
        key = id(config)
        if key not in self._rules:
            codes = frozenset(self._selected(config))
            if not codes:
                raise ConfigError(NOTHING_SELECTED)
            self.codes_in_use |= codes
            self._rules[key] = (config, codes, self._per_file_ignores(config))
        return self._rules[key]

    def _selected(self, config: Config) -> set[str]:
        codes = default_codes(self._catalog)
        for step in config.rule_steps:
            origin = str(step.origin)
            if step.select:  # an empty `select` means the defaults, as it always has
                codes = resolve_selectors(step.select, self._catalog, origin)
            codes |= resolve_selectors(step.extend_select, self._catalog, origin)
            codes -= resolve_selectors(step.ignore, self._catalog, origin)
        if self._cli_select is not None:
            codes = set(self._cli_select)
        return codes - self._cli_ignore

    def _per_file_ignores(self, config: Config) -> list[tuple[pathspec.PathSpec, set[str]]]:
        declared = config.declared_in.get("per-file-ignores", config.path)
        origin = f"{declared}: per-file-ignores" if declared else "per-file-ignores"
        return [
            (pathspec.GitIgnoreSpec.from_lines([pattern]), resolve_selectors(codes, self._catalog, origin))
            for pattern, codes in config.per_file_ignores.items()
        ]
