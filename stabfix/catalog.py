"""The rule catalog: one YAML file per rule (`rules/<code>-<name>.yaml`), shipped inside the package."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterable

import yaml

CODE_PATTERN = re.compile(r"^SF\d{3}$")
SEVERITIES = ("error", "warning", "info")
SAFETIES = ("safe", "unsafe", "none")
DOC_SECTIONS = ("what_it_does", "why_is_this_bad", "example", "use_instead")


class CatalogError(Exception):
    """A rule YAML is malformed: a bug in stabfix itself, caught by the test suite."""


class SelectorError(Exception):
    """A --select/--ignore/config entry names no rule."""


@dataclass(frozen=True)
class Example:
    name: str
    code: str
    fixed: str | None = None  # expected output of `apply --unsafe-fixes`, when the rule fixes it
    # words the finding's message must contain: the user's own variables and what to do
    message_contains: tuple[str, ...] = ()
    # a few lines that drive the example where the generic driver of tests/differential.py cannot
    # (they run after the module, before and after the fix); stabfix itself never reads them
    run: str | None = None
    # the safety of the fix this example's findings get, where a rule's fixes are not all alike
    fix_safety: str | None = None
    # other files of the example's project (relative path -> code), for a rule that sees across files;
    # `code` is then the file at `path` among them
    files: tuple[tuple[str, str], ...] = ()
    path: str = "example.py"

    def project_sources(self) -> dict[str, str]:
        """Every file of the example's project, relative path -> code (the example itself included)."""
        return {**dict(self.files), self.path: self.code}


@dataclass(frozen=True)
class RuleSpec:
    code: str
    name: str
    category: str
    severity: str
    summary: str
    seed: str | None
    fix_safety: str
    fix_reason: str
    docs: dict[str, str]
    bad: tuple[Example, ...] = field(default=())
    good: tuple[Example, ...] = field(default=())
    near_misses: tuple[Example, ...] = field(default=())
    source: Path | None = None
    # A rule whose false positives on real code could not be removed ships off: it runs only when
    # selected by code, name, prefix or `ALL`.
    enabled_by_default: bool = True
    # How far a safe fix may move values (units in the last place of the dtype, relative to
    # max(|value|, 1)); None: bitwise equal. Enforced by tests/test_fix_differential.py.
    fix_bound_ulps: float | None = None
    # A bad example declares `fix_safety: unsafe`: known also when the examples were not loaded
    unsafe_for_some: bool = False

    @property
    def fix_label(self) -> str:
        """The fix safety the rule tables show: the rule's own, and `safe (some unsafe)` for a rule whose fix
        is safe for most findings but unsafe for some (a bad example declares `fix_safety: unsafe`)."""
        if self.fix_safety == "safe" and self.unsafe_for_some:
            return "safe (some unsafe)"
        return self.fix_safety


def rules_dir() -> Path:
    """The shipped copy inside an installed wheel, else the repo's top-level rules/."""
    package_dir = Path(__file__).resolve().parent
    shipped = package_dir / "_rules"
    return shipped if shipped.is_dir() else package_dir.parent / "rules"


# libyaml's parser when PyYAML was built with it: the rule files' examples make the pure-Python parser
# most of a warm scan's time (the same safe constructors and resolvers either way)
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@lru_cache(maxsize=2)
def load_catalog(examples: bool = True) -> dict[str, RuleSpec]:
    """Every rule by code. `examples=False` leaves the examples out (bad, good, near_misses empty): what
    the commands and the engine read, without parsing the examples, most of each file."""
    specs: dict[str, RuleSpec] = {}
    for path in sorted(rules_dir().glob("SF*.yaml")):
        spec = _parse_spec(path, examples)
        specs[spec.code] = spec
    return specs


# A top-level key of a rule file: any other line of a block is indented, or a comment or a list item.
_TOP_LEVEL_KEY = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:", re.MULTILINE)


def _without_examples(text: str) -> str:
    """The rule file's text less its top-level `examples:` block."""
    keys = list(_TOP_LEVEL_KEY.finditer(text))
    for key, following in zip(keys, [*keys[1:], None]):
        if key.group(1) == "examples":
            return text[: key.start()] + (text[following.start() :] if following is not None else "")
    return text


# an example's own `fix_safety: unsafe` line (only examples declare one; the rule's is `fix: {safety: ...}`)
_UNSAFE_EXAMPLE = re.compile(r"^[ \t]+(?:- )?fix_safety:[ \t]*['\"]?unsafe['\"]?[ \t]*$", re.MULTILINE)


def _parse_spec(path: Path, examples: bool = True) -> RuleSpec:
    try:
        text = path.read_text(encoding="utf-8")
        data = _rule_data(text, examples)
    except yaml.YAMLError as exc:
        raise CatalogError(f"{path}: {exc}") from None
    try:
        code, name = data["code"], data["name"]
        if not CODE_PATTERN.match(code) or path.stem != f"{code}-{name}":
            raise CatalogError(f"{path}: file must be named <code>-<name>.yaml with code SFnnn")
        if data["severity"] not in SEVERITIES or data["fix"]["safety"] not in SAFETIES:
            raise CatalogError(f"{path}: bad severity or fix safety")
        listed = data.get("examples", {}) or {}
        bad = _examples(listed.get("bad"))
        return RuleSpec(
            code=code,
            name=name,
            category=data["category"],
            severity=data["severity"],
            summary=data["summary"].strip(),
            seed=str(data["seed"]) if data.get("seed") is not None else None,
            fix_safety=data["fix"]["safety"],
            fix_reason=data["fix"]["reason"].strip(),
            docs={section: data["docs"][section].rstrip() for section in DOC_SECTIONS},
            bad=bad,
            unsafe_for_some=any(example.fix_safety == "unsafe" for example in bad) if examples
            else _UNSAFE_EXAMPLE.search(text) is not None,
            good=_examples(listed.get("good")),
            near_misses=_examples(listed.get("near_misses")),
            source=path,
            enabled_by_default=bool(data.get("enabled_by_default", True)),
            fix_bound_ulps=_bound(path, data["fix"].get("bound_ulps")),
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise CatalogError(f"{path}: missing or malformed field {exc}") from None


def _rule_data(text: str, examples: bool) -> object:
    if not examples:
        try:
            data = _load_yaml(_without_examples(text))
        except yaml.YAMLError:
            data = None
        if isinstance(data, dict):
            return data
    data = _load_yaml(text)  # with the examples, or when the cut did not leave the file's mapping
    if not examples and isinstance(data, dict):
        data.pop("examples", None)
    return data


def _load_yaml(text: str) -> object:
    return yaml.load(text, Loader=_SAFE_LOADER)


def _bound(path: Path, value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise CatalogError(f"{path}: fix.bound_ulps must be a non-negative number")
    return float(value)


def _examples(items: Iterable[dict] | None) -> tuple[Example, ...]:
    for item in items or ():
        if item.get("run") is not None and not isinstance(item["run"], str):
            raise TypeError(f"example {item.get('name')!r}: run must be text")
    return tuple(
        Example(
            name=item["name"],
            code=item["code"],
            fixed=item.get("fixed"),
            message_contains=tuple(item.get("message_contains") or ()),
            run=item.get("run"),
            fix_safety=_example_safety(item.get("fix_safety")),
            files=_example_files(item.get("files")),
            path=str(item.get("path", "example.py")),
        )
        for item in items or ()
    )


def _example_files(value: object) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise CatalogError("example files must map relative paths to code")
    return tuple(sorted(value.items()))


def _example_safety(value: object) -> str | None:
    if value is not None and value not in SAFETIES:
        raise CatalogError(f"example fix_safety must be one of {', '.join(SAFETIES)}, not {value!r}")
    return value  # type: ignore[return-value]


def resolve_selectors(selectors: Iterable[str], catalog: dict[str, RuleSpec], origin: str) -> set[str]:
    """Codes named by selectors: exact codes, code prefixes (`SF1`), kebab names, or `ALL`."""
    by_name = {spec.name: code for code, spec in catalog.items()}
    chosen: set[str] = set()
    for raw in selectors:
        selector = raw.strip()
        if selector.upper() == "ALL":
            chosen.update(catalog)
            continue
        if selector in by_name:
            chosen.add(by_name[selector])
            continue
        matches = {code for code in catalog if code.startswith(selector.upper())} if selector else set()
        if not matches or not re.match(r"^SF\d{0,3}$", selector.upper()):
            known = ", ".join(sorted(catalog))
            raise SelectorError(f"{origin}: unknown rule selector '{raw}' (known rules: {known})")
        chosen.update(matches)
    return chosen


def default_codes(catalog: dict[str, RuleSpec]) -> set[str]:
    return {code for code, spec in catalog.items() if spec.enabled_by_default}


def selected_codes(
    catalog: dict[str, RuleSpec],
    select: list[str],
    ignore: list[str],
    origin: str,
) -> set[str]:
    base = resolve_selectors(select, catalog, origin) if select else default_codes(catalog)
    return base - resolve_selectors(ignore, catalog, origin)
