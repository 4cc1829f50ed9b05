"""Where each node of a file sits (line and column), one lazily built table for the whole analysis.

libcst's `PositionProvider` generates the whole module up front; here the module is generated
top-level statement by top-level statement (the same codegen calls as `Module._codegen`, so the same
positions) only as far as the nodes asked about. The engine locates findings with it and a rule that
words a message with a line (SF401) asks the same table, so a file pays for at most one codegen.
"""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst
from libcst._position import CodeRange
from libcst.metadata import PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState


class Positions:
    def __init__(self, module: cst.Module) -> None:
        self._provider = PositionProvider()
        self._provider._computed = {}
        self._steps = self._codegen(module)
        self._failure: Optional[RecursionError] = None

    def _codegen(self, module: cst.Module) -> Iterator[None]:
        state = PositionProvidingCodegenState(
            default_indent=module.default_indent, default_newline=module.default_newline, provider=self._provider
        )
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
        computed = self._provider._computed
        while node not in computed:
            if self._failure is not None:
                # a shared table: every later asker hears of the failed codegen, not of a missing node
                raise RecursionError(str(self._failure))
            try:
                if next(self._steps, StopIteration) is StopIteration:
                    return computed.get(node)  # the module itself is placed by the codegen's last step
            except RecursionError as error:
                self._failure = error
                raise
        return computed[node]

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        where = self.get(node)
        if where is None:
            raise KeyError(node)
        return where

    def line(self, node: cst.CSTNode) -> int:
        """The node's first line; 0 for a node that is not in the module."""
        where = self.get(node)
        return where.start.line if where is not None else 0
