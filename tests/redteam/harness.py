"""Shared logic of the red-team suite: find the cases, run one rule on one file, judge the result.

Each case is `tests/redteam/<CODE>/bad_*.py` (the rule must report on a line marked
`# expect: <CODE>` and on no unmarked line) or `ok_*.py` (the rule must report nothing).
Known misses and false alarms of the current checkers are listed in `known_failures.yaml`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from stabfix.catalog import load_catalog
from stabfix.checkers import checker_classes
from stabfix.engine import analyse_text

ROOT = Path(__file__).resolve().parent
MANIFEST = ROOT / "known_failures.yaml"
CODES = ("SF101", "SF102", "SF201", "SF401", "SF402", "SF103", "SF106", "SF407")
_EXPECT = re.compile(r"#\s*expect:\s*([A-Z]{2}\d{3}(?:\s*,\s*[A-Z]{2}\d{3})*)")


@dataclass(frozen=True)
class Case:
    code: str
    path: Path

    @property
    def key(self) -> str:
        return f"{self.code}/{self.path.name}"

    @property
    def kind(self) -> str:
        return "bad" if self.path.name.startswith("bad_") else "ok"


@dataclass(frozen=True)
class Verdict:
    passed: bool
    detail: str


def cases() -> list[Case]:
    found = []
    for code in CODES:
        for path in sorted((ROOT / code).glob("*.py")):
            if path.name.startswith(("bad_", "ok_")):
                found.append(Case(code, path))
    return found


def known_failures() -> dict[str, str]:
    if not MANIFEST.exists():
        return {}
    data = yaml.safe_load(MANIFEST.read_text(encoding="utf-8")) or {}
    return {str(key): str(value) for key, value in data.items()}


def expected_lines(source: str, code: str) -> set[int]:
    lines = set()
    for number, line in enumerate(source.splitlines(), start=1):
        match = _EXPECT.search(line)
        if match and code in {part.strip() for part in match.group(1).split(",")}:
            lines.add(number)
    return lines


def reported_lines(case: Case) -> list[int]:
    catalog = load_catalog()
    checker = checker_classes()[case.code]
    source = case.path.read_text(encoding="utf-8")
    analysis = analyse_text(source, case.key, [checker], catalog)
    return sorted(item.finding.line for item in analysis.findings if item.finding.code == case.code)


def judge(case: Case) -> Verdict:
    source = case.path.read_text(encoding="utf-8")
    compile(source, str(case.path), "exec")
    lines = reported_lines(case)
    if case.kind == "ok":
        return Verdict(not lines, f"reported on lines {lines}" if lines else "silent")
    marked = expected_lines(source, case.code)
    if not marked:
        return Verdict(False, "a bad_ case must mark at least one line with `# expect: CODE`")
    hits = [line for line in lines if line in marked]
    stray = [line for line in lines if line not in marked]
    if not hits:
        return Verdict(False, f"missed: marked {sorted(marked)}, reported {lines}")
    if stray:
        return Verdict(False, f"reported on unmarked lines {stray} (marked {sorted(marked)})")
    return Verdict(True, f"reported on {hits}")
