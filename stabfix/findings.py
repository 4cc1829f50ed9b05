"""The records every layer passes along: findings, their fixes, and per-file results."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Literal, Mapping, Union

if TYPE_CHECKING:  # a cached scan builds findings without importing libcst (bench/README.md, startup)
    import libcst as cst

FixSafety = Literal["safe", "unsafe", "none"]
Replacement = Union["cst.CSTNode", "cst.RemovalSentinel", "cst.FlattenSentinel"]


@dataclass
class Fix:
    """Node replacements (by node identity) that together repair one finding."""

    safety: Literal["safe", "unsafe"]
    description: str
    changes: Mapping[cst.CSTNode, Replacement]
    # Modules the rewritten code needs, added as `import NAME` when missing.
    imports: tuple[str, ...] = ()
    # The oldest torch (major, minor) that has every API the rewritten code uses; None: any torch.
    # A project that allows an older torch is not offered the fix (stabfix.target).
    requires_torch: tuple[int, int] | None = None


@dataclass
class Finding:
    code: str
    name: str
    path: str
    line: int  # 1-based
    column: int  # 1-based
    end_line: int
    end_column: int
    message: str
    severity: str
    fix_safety: FixSafety
    fix_description: str = ""
    # Why a fix the rule has is not offered (its API is newer than the project's torch); "" otherwise.
    fix_withheld: str = ""
    # In a notebook (stabfix.notebook): the cell's number (from 1, every cell counted) and the lines
    # within the cell; `line`/`end_line` are then the lines of the .ipynb file that hold that code.
    cell: int | None = None
    cell_line: int | None = None
    cell_end_line: int | None = None

    def sort_key(self) -> tuple:
        return (self.path, self.line, self.column, self.code, self.end_line, self.end_column, self.message)

    def to_json(self) -> dict:
        data = asdict(self)
        data.pop("fix_description")
        if not data["fix_withheld"]:
            data.pop("fix_withheld")  # only findings whose fix was withheld carry the field
        if data["cell"] is None:
            for key in ("cell", "cell_line", "cell_end_line"):  # only findings in notebooks carry them
                data.pop(key)
        return data


@dataclass
class FileError:
    path: str
    message: str
    # A fatal error (missing path, bad config) makes the run exit 2 instead of 1.
    fatal: bool = False
    # Only some rules failed on the file; every other rule's findings were reported.
    partial: bool = False


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    error: FileError | None = None
    fixes_applied: int = 0
    diff: str = ""


@dataclass
class RunResult:
    """Every file's result of one scan/apply run, in report order."""

    results: list[FileResult] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        return [finding for result in self.results for finding in result.findings]

    @property
    def errors(self) -> list[FileError]:
        return [result.error for result in self.results if result.error is not None]
