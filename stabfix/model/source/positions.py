"""Where each node of a file sits (line and column), one lazily built table for the whole analysis.

libcst's `PositionProvider` generates the whole module up front; here the module is generated
top-level statement by top-level statement (the same codegen calls as `Module._codegen`, so the same
positions) only as far as the nodes asked about. The engine locates findings with it and a rule that
words a message with a line (SF401) asks the same table, so a file pays for at most one codegen.

The codegen state is libcst's `PositionProvidingCodegenState` made cheap (`_PositionState`): on a big
file, libcst's own state spent six times the codegen on its bookkeeping (a regex split of every token,
three frozen dataclasses and a generator-based context manager per node), more than the parse itself.
"""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst
from libcst.metadata import CodePosition, CodeRange
from libcst.metadata.position_provider import NEWLINE_RE, PositionProvidingCodegenState

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
    def __init__(self, module: cst.Module) -> None:
        self._state = _PositionState(module)
        self._steps = self._codegen(module)
        self._failure: Optional[RecursionError] = None

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
        where = computed.get(id(node))
        if where is None:
            return None
        start_line, start_column, end_line, end_column = where
        return CodeRange(CodePosition(start_line, start_column), CodePosition(end_line, end_column))

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        where = self.get(node)
        if where is None:
            raise KeyError(node)
        return where

    def line(self, node: cst.CSTNode) -> int:
        """The node's first line; 0 for a node that is not in the module."""
        where = self.get(node)
        return where.start.line if where is not None else 0
