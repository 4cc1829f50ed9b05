"""Where each node of a file sits (line and column), one lazily built table for the whole analysis.

libcst's `PositionProvider` generates the whole module up front. Here a node is placed by generating only
the statement that holds it (the innermost statement that starts a line: its codegen depends on nothing
before it but the indentation of its blocks), and that statement is placed in the file by CPython's line
of it (`statement_lines`; the tree the rules' structural gates already parsed). The placement is checked:
the generated statement must be the file's text at that line; when it is not, or the node has no such
statement or nothing maps, the module is generated from its top (the same codegen calls as
`Module._codegen`) as far as the node. Either way the positions are those libcst's provider gives. The
engine locates findings with it and a rule that words a message with a line (SF401) asks the same table.

The codegen state is libcst's `PositionProvidingCodegenState` made cheap (`_PositionState`): on a big
file, libcst's own state spent six times the codegen on its bookkeeping (a regex split of every token,
three frozen dataclasses and a generator-based context manager per node), more than the parse itself.
"""

from __future__ import annotations

import ast
from typing import Callable, Iterator, Optional

import libcst as cst
from libcst.metadata import CodePosition, CodeRange
from libcst.metadata.position_provider import NEWLINE_RE, PositionProvidingCodegenState

from stabfix.model.source.statement_lines import COMPOUND_TYPES, StatementLines

# start line, start column, end line, end column
_Range = tuple[int, int, int, int]


class _PositionState(PositionProvidingCodegenState):
    """The positions libcst's `PositionProvidingCodegenState` records, kept as tuples by node id: the same
    line and column arithmetic, the same rule that a syntactic position (recorded inside the node's
    codegen) wins over the whitespace-inclusive one its `after_codegen` would record. What it does not
    redefine (indentation, the trailing newline) is libcst's own."""

    def __init__(self, module: cst.Module) -> None:
        self.default_indent = module.default_indent
        self.default_newline = module.default_newline
        self.provider = None
        self.indent_tokens: list[str] = []
        self.tokens: list[str] = []
        self.line = 1  # one-indexed
        self.column = 0  # zero-indexed
        self.ranges: dict[int, _Range] = {}
        self._starts: list[tuple[int, int]] = []

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        if "\n" in value or "\r" in value:
            segments = NEWLINE_RE.split(value)
            self.line += len(segments) - 1
            self.column = len(segments[-1])  # a newline resets the column; what follows it shifts it
        else:
            self.column += len(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._starts.append((self.line, self.column))

    def after_codegen(self, node: cst.CSTNode) -> None:
        line, column = self._starts.pop()
        self.ranges.setdefault(id(node), (line, column, self.line, self.column))

    def record_syntactic_position(
        self, node: cst.CSTNode, *, start_node: Optional[cst.CSTNode] = None, end_node: Optional[cst.CSTNode] = None
    ) -> "_Syntactic":
        return _Syntactic(self, node, start_node, end_node)


class _Syntactic:
    """`record_syntactic_position`'s context: the node's range is where its syntax starts and ends, or
    its hoisted child's start or end."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(self, state: _PositionState, node: cst.CSTNode, start_node, end_node) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self) -> None:
        self.start = (self.state.line, self.state.column)

    def __exit__(self, *exc: object) -> bool:
        state = self.state
        start_line, start_column = self.start
        end_line, end_column = state.line, state.column
        if self.start_node is not None:
            start_line, start_column = state.ranges[id(self.start_node)][:2]
        if self.end_node is not None:
            end_line, end_column = state.ranges[id(self.end_node)][2:]
        state.ranges[id(self.node)] = (start_line, start_column, end_line, end_column)
        return False


class Positions:
    def __init__(
        self,
        module: cst.Module,
        text: Optional[str] = None,
        parents: Optional[dict[int, cst.CSTNode]] = None,
        cpython_tree: Optional[Callable[[], Optional[ast.Module]]] = None,
    ) -> None:
        """`text` (the module's source), `parents` (id(node) -> parent) and `cpython_tree` (CPython's tree
        of the text, or None) let a node be placed by its statement alone; without them, or where that
        fails, the module is generated from its top."""
        self._module = module
        self._state = _PositionState(module)
        self._steps = self._codegen(module)
        self._failure: Optional[RecursionError] = None
        self._text, self._parents, self._cpython_tree = text, parents, cpython_tree
        self._lines: Optional[StatementLines] = None
        self._line_starts: list[int] = []
        # id(statement) -> (its generated ranges, the line shift that places them), None: could not place
        self._statements: dict[int, Optional[tuple[dict[int, _Range], int]]] = {}

    def _codegen(self, module: cst.Module) -> Iterator[None]:
        state = self._state
        state.before_codegen(module)
        for node in (*module.header, *module.body, *module.footer):
            try:
                node._codegen(state)
            except (RecursionError, KeyError):
                # too deep for libcst's recursive codegen (a RecursionError can surface as a KeyError from
                # libcst's position bookkeeping): the caller reports the file as nested too deeply
                raise RecursionError("code nested too deeply to locate findings") from None
            yield
        # the end of Module._codegen_impl, then Module._codegen
        if module.has_trailing_newline:
            if len(state.tokens) == 0:
                state.add_token(state.default_newline)
        else:
            state.pop_trailing_newline()
        state.after_codegen(module)

    def get(self, node: cst.CSTNode) -> Optional[CodeRange]:
        """The node's range; None for a node that is not in the module (after generating all of it)."""
        where = self._state.ranges.get(id(node))
        if where is None and self._parents:
            where = self._by_statement(node)
        if where is None:
            where = self._from_top(node)
        if where is None:
            return None
        start_line, start_column, end_line, end_column = where
        return CodeRange(CodePosition(start_line, start_column), CodePosition(end_line, end_column))

    def _from_top(self, node: cst.CSTNode) -> Optional[_Range]:
        computed = self._state.ranges
        while id(node) not in computed:
            if self._failure is not None:
                # a shared table: every later asker hears of the failed codegen, not of a missing node
                raise RecursionError(str(self._failure))
            try:
                if next(self._steps, StopIteration) is StopIteration:
                    break  # the module itself is placed by the codegen's last step
            except RecursionError as error:
                self._failure = error
                raise
        return computed.get(id(node))

    def _by_statement(self, node: cst.CSTNode) -> Optional[_Range]:
        statements = self._line_statements(node)
        if not statements:
            return None
        # a statement already generated around this one (for an earlier node) holds its ranges too
        placed = next((self._statements[id(outer)] for outer in statements if self._statements.get(id(outer))), None)
        if placed is None:
            statement = statements[0]
            if id(statement) in self._statements:
                return None  # could not be placed before either
            placed = self._statements[id(statement)] = self._place(statement)
            if placed is None:
                return None
        ranges, shift = placed
        where = ranges.get(id(node))
        if where is None:
            return None
        start_line, start_column, end_line, end_column = where
        return (start_line + shift, start_column, end_line + shift, end_column)

    def _line_statements(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """The statements around the node (itself included) that start a line of a block or the module,
        innermost first; empty when the walk up the parents does not reach the module."""
        parents, current, found = self._parents, node, []
        while current is not self._module:
            parent = parents.get(id(current))
            if parent is None:
                return []
            if (type(current) is cst.SimpleStatementLine or type(current) in COMPOUND_TYPES) and (
                type(parent) is cst.IndentedBlock or parent is self._module
            ):
                found.append(current)
            current = parent
        return found

    def _place(self, statement: cst.CSTNode) -> Optional[tuple[dict[int, _Range], int]]:
        """The statement generated on its own (lines counted from 1) and the shift that puts its lines
        where the file has them; None when CPython's line of it is unknown or its text is not there."""
        if self._lines is None:
            tree = self._cpython_tree() if self._cpython_tree is not None else None
            if tree is None or self._text is None:
                self._parents = None  # nothing to anchor statements by: generate from the top from now on
                return None
            self._lines = StatementLines(self._module, tree, self._parents)
        anchor = self._lines.statement(statement)
        if anchor is None:
            return None
        state = _PositionState(self._module)
        state.indent_tokens = self._indentation(statement)
        try:
            statement._codegen(state)
        except (RecursionError, KeyError):
            raise RecursionError("code nested too deeply to locate findings") from None
        shift = anchor.lineno - state.ranges[id(statement)][0]
        code = "".join(state.tokens)
        start = self._line_start(1 + shift)
        if start is None or self._text[start : start + len(code)] != code:
            return None
        return state.ranges, shift

    def _indentation(self, statement: cst.CSTNode) -> list[str]:
        """The indent tokens the enclosing blocks push before the statement's codegen (outermost first)."""
        tokens: list[str] = []
        current = self._parents.get(id(statement))
        while current is not None and current is not self._module:
            if type(current) is cst.IndentedBlock:
                tokens.append(self._module.default_indent if current.indent is None else current.indent)
            current = self._parents.get(id(current))
        tokens.reverse()
        return tokens

    def _line_start(self, line: int) -> Optional[int]:
        """The text's offset of a line (one-indexed), lines split as libcst counts them."""
        if not self._line_starts:
            self._line_starts = [0, *(match.end() for match in NEWLINE_RE.finditer(self._text))]
        return self._line_starts[line - 1] if 1 <= line <= len(self._line_starts) else None

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        where = self.get(node)
        if where is None:
            raise KeyError(node)
        return where

    def line(self, node: cst.CSTNode) -> int:
        """The node's first line; 0 for a node that is not in the module."""
        where = self.get(node)
        return where.start.line if where is not None else 0
