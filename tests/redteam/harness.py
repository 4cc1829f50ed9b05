"""Shared logic of the red-team suite: find the cases, run one rule on one file, judge the result.

Each case is `tests/redteam/<CODE>/bad_*.py` (the rule must report on a line marked
`# expect: <CODE>` and on no unmarked line) or `ok_*.py` (the rule must report nothing). A case may
also be a folder `bad_*/` or `ok_*/`: a small project whose files are analysed together, each seeing
the others (`stabfix.project`), as `stabfix scan` of that folder would; its marks may be in any file.
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
from stabfix.project import Project, ProjectIndex

ROOT = Path(__file__).resolve().parent
MANIFEST = ROOT / "known_failures.yaml"
# every rule with a folder of cases here
CODES = tuple(sorted(path.name for path in ROOT.iterdir() if path.is_dir() and path.name in load_catalog()))
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

    @property
    def files(self) -> list[Path]:
        """The case's Python files: the case itself, or every file of a folder case."""
        return sorted(self.path.rglob("*.py")) if self.path.is_dir() else [self.path]


@dataclass(frozen=True)
class Verdict:
    passed: bool
    detail: str


def cases() -> list[Case]:
    found = []
    for code in CODES:
        for path in sorted((ROOT / code).iterdir()):
            if path.name.startswith(("bad_", "ok_")) and (path.suffix == ".py" or path.is_dir()):
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


def _where(case: Case, path: Path, line: int):
    """A line of a single-file case is its number; one of a folder case is `file:number`."""
    return line if not case.path.is_dir() else f"{path.relative_to(case.path).as_posix()}:{line}"


def reported_lines(case: Case) -> list:
    catalog = load_catalog()
    checker = checker_classes()[case.code]
    project = None
    if case.path.is_dir():
        project = Project(ProjectIndex([str(path) for path in case.files], [str(case.path)]))
    found = []
    for path in case.files:
        source = path.read_text(encoding="utf-8")
        view = project.view(str(path)) if project is not None else None
        shown = f"{case.key}/{path.relative_to(case.path).as_posix()}" if case.path.is_dir() else case.key  # a file's place in its project
        analysis = analyse_text(source, shown, [checker], catalog, project=view)
        found += [_where(case, path, item.finding.line) for item in analysis.findings if item.finding.code == case.code]
    return sorted(found, key=str)


def judge(case: Case) -> Verdict:
    marked = set()
    for path in case.files:
        source = path.read_text(encoding="utf-8")
        compile(source, str(path), "exec")
        marked |= {_where(case, path, line) for line in expected_lines(source, case.code)}
    lines = reported_lines(case)
    if case.kind == "ok":
        return Verdict(not lines, f"reported on lines {lines}" if lines else "silent")
    if not marked:
        return Verdict(False, "a bad_ case must mark at least one line with `# expect: CODE`")
    hits = [line for line in lines if line in marked]
    stray = [line for line in lines if line not in marked]
    if not hits:
        return Verdict(False, f"missed: marked {sorted(marked, key=str)}, reported {lines}")
    if stray:
        return Verdict(False, f"reported on unmarked lines {stray} (marked {sorted(marked, key=str)})")
    return Verdict(True, f"reported on {hits}")
