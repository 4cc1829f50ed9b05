"""The base class every rule's checker derives from.

A checker is a libcst batchable visitor: the engine runs all selected checkers of a file in one
traversal. A checker declares the literal `tokens` a file must contain for it to possibly fire
(and optionally `also_needs`, further groups that must each be present; files without them are
never parsed) and reports findings with optional fixes. `words` are sharper groups: whole identifiers
(`load` is not in `load_state_dict`), matched against the file's set of words, computed once per text.
A `pattern` is sharper still: a regular expression the file's own text must match (`class Net(nn.Module)`
needs a class with a base), searched only once the tokens pass. Sharpest is `shape_allows`, asked of CPython's
tree of a file the text gates let by (`stabfix.shape`): whether the statement or expression the rule reports on
is there at all.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Optional

import libcst as cst

from stabfix.model import FileModel
from stabfix.model.source.imports import ImportTracker
from stabfix.model.source.positions import Positions
from stabfix.findings import Fix
from stabfix.shape import Shape
from stabfix.text_gates import compiled_pattern, tokens_in, words_of

if TYPE_CHECKING:
    from stabfix.project import ProjectView


@dataclass
class RawFinding:
    code: str
    node: cst.CSTNode
    message: str
    fix: Fix | None = None


@dataclass
class CheckContext:
    path: str
    text: str
    model: FileModel
    module: cst.Module | None = None  # the parsed file; positions are read from it
    reports: list[RawFinding] = field(default_factory=list)
    # the other files of the scan as this file sees them (stabfix.project); None: the file alone
    project: Optional["ProjectView"] = None
    # CPython's tree of the text when the engine already has it (the structural gates'): it places statements
    cpython_tree: Optional[ast.Module] = field(default=None, repr=False)
    _positions: Positions | None = field(default=None, init=False, repr=False)

    @property
    def imports(self) -> ImportTracker:
        return self.model.imports

    @property
    def positions(self) -> Positions:
        """Line and column of any node of the file, computed on first use and shared by the rules and the
        engine (which locates the findings with it): a file pays for at most one codegen, and only a file
        where something asked."""
        if self._positions is None:
            if self.module is None:
                raise ValueError("positions need the context's module")
            self._positions = Positions(
                self.module, self.text, getattr(self.model.tree, "parents", None), self._cpython_tree
            )
        return self._positions

    def _cpython_tree(self) -> Optional[ast.Module]:
        if self.cpython_tree is None:
            try:
                self.cpython_tree = ast.parse(self.text)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return None
        return self.cpython_tree


class Checker(cst.BatchableCSTVisitor):
    code: ClassVar[str]
    # Literal substrings of which a file must contain at least one for this rule to run.
    tokens: ClassVar[tuple[str, ...]]
    # Further groups of substrings, one of each must be present too (a rule that needs both an
    # optimizer step and a gradient read): files without them skip the parse as well.
    also_needs: ClassVar[tuple[tuple[str, ...], ...]] = ()
    # A file that contains one of these (and at least one group, when there are several) may find its other
    # groups in the tree modules it imports, one file away: a criterion class, a model whose `forward` ends
    # in a softmax, a helper that switches the mode or makes a target is often defined there. Empty: the file
    # alone decides. (A speed filter only, like `tokens`.)
    tokens_elsewhere: ClassVar[tuple[str, ...]] = ()
    # Groups of whole words (identifiers, keywords) of which the file itself must contain one each: for a
    # rule that only reports what the file's own code names (a call resolved through the file's imports to
    # `torch.load` spells `load` somewhere in it). Never a word another file could supply.
    words: ClassVar[tuple[tuple[str, ...], ...]] = ()
    # A regular expression (`re` syntax, compiled once) the file's own text must match, for a necessary condition
    # one token cannot say (a class with a base: a module class has one). Like `words`, only for what no other
    # file can supply; it must match every spelling the rule reports (comments and strings may match too: a
    # gate only skips). Searched after the tokens pass, so a costly pattern costs only the files they let by.
    pattern: ClassVar[str] = ""
    # Parts of the file's model (see `stabfix.model`) this rule reads; only those are computed.
    needs: ClassVar[tuple[str, ...]] = ()
    # A meta rule judges the other rules' findings (unused-suppression): instead of reporting while
    # visiting, it reports from `audit(...)`, which the engine calls once suppressions are applied.
    meta: ClassVar[bool] = False

    @classmethod
    def may_fire(cls, text: str, project: Optional["ProjectView"] = None) -> bool:
        if cls.words and not cls.words_present(text):
            return False
        groups = (cls.tokens, *cls.also_needs)
        contains = tokens_in(text).__contains__
        if all(any(contains(token) for token in group) for group in groups):
            return cls.pattern_present(text)
        if project is None or not any(contains(token) for token in cls.tokens_elsewhere):
            return False
        if len(groups) > 1 and not any(any(contains(token) for token in group) for group in groups):
            return False  # one group at least is the file's own: most files need no other file read
        if not cls.pattern_present(text):
            return False
        texts = [text, *project.imported_texts()]
        return all(any(token in source for source in texts for token in group) for group in groups)

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:
        """Whether the file's CPython tree has a place this rule could report on: False only where it cannot
        fire (a speed filter, like the tokens, asked after them). A rule with a structural gate overrides it."""
        return True

    @classmethod
    def has_shape_gate(cls) -> bool:
        return cls.shape_allows.__func__ is not Checker.shape_allows.__func__  # type: ignore[attr-defined]

    @classmethod
    def pattern_present(cls, text: str) -> bool:
        return not cls.pattern or compiled_pattern(cls.pattern).search(text) is not None

    @classmethod
    def words_present(cls, text: str) -> bool:
        found = words_of(text)
        return all(not found.isdisjoint(group) for group in cls.words)

    def __init__(self, context: CheckContext) -> None:
        super().__init__()
        self.context = context
        self.model = context.model

    def qualified_name(self, node: cst.BaseExpression) -> str | None:
        """What an expression names through the imports: `t.cuda.empty_cache` -> `torch.cuda.empty_cache`."""
        return self.context.imports.qualify(node)

    def report(self, node: cst.CSTNode, message: str, fix: Fix | None = None) -> None:
        self.context.reports.append(RawFinding(self.code, node, message, fix))
