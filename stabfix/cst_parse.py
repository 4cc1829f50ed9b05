"""Parsing a file's text with libcst, without re-checking every node the parser builds.

libcst validates each node in `CSTNode.__post_init__` (a name is an identifier, whitespace is whitespace,
parentheses pair up): that protects code that builds nodes by hand, but the parser only builds nodes
from text it has just accepted, and the check is about 12% of a parse (bench/README.md, "Cold scan,
parse side"). While `parsing_unvalidated()` is active on a thread, the nodes that thread builds skip it;
every other thread, and the same thread before and after, validates as libcst always does, so a codemod
building `cst.Name("1 2")` still gets its error.

The hook is installed on `CSTNode` while at least one thread parses (a count under a lock) and reads a
thread-local flag, so a language server parsing on its worker thread never turns validation off for the
thread that builds fixes.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

import libcst as cst

# `CSTNode` is public (`libcst.CSTNode`); its validating `__post_init__` is libcst's own detail. A libcst
# without one (an API change within `libcst>=1.4`) parses validated, as before: slower, never wrong.
CSTNode = cst.CSTNode
_VALIDATING_POST_INIT = CSTNode.__dict__.get("__post_init__")


class _ParsingFlag(threading.local):
    active = False  # per thread: whether it is inside `parsing_unvalidated()`


_parsing = _ParsingFlag()
_install_lock = threading.Lock()
_threads_parsing = 0


def _validate_unless_parsing(node: CSTNode) -> None:
    if not _parsing.active:
        _VALIDATING_POST_INIT(node)


@contextmanager
def parsing_unvalidated() -> Iterator[None]:
    """Nodes built by this thread inside the block are not validated (re-entrant)."""
    global _threads_parsing
    if _VALIDATING_POST_INIT is None:
        yield
        return
    outer = _parsing.active
    if not outer:
        with _install_lock:
            if _threads_parsing == 0:
                CSTNode.__post_init__ = _validate_unless_parsing  # type: ignore[method-assign]
            _threads_parsing += 1
        _parsing.active = True
    try:
        yield
    finally:
        if not outer:
            _parsing.active = False
            with _install_lock:
                _threads_parsing -= 1
                if _threads_parsing == 0:
                    CSTNode.__post_init__ = _VALIDATING_POST_INIT  # type: ignore[method-assign]


def parse_source(text: str) -> cst.Module:
    """`libcst.parse_module(text)`: the same tree, built without per-node validation; raises what it raises."""
    with parsing_unvalidated():
        return cst.parse_module(text)
