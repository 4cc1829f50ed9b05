"""Applying node replacements without losing a comment.

A fix rebuilds an expression or a statement from its parts, or removes a statement, and the comments
in or above what it replaces would go with it. `replace_keeping_comments` applies the replacements and
puts every comment that did not survive (and did not move elsewhere, as a moved statement's comments
do) on its own line above the statement it was in; a removed statement's comments go above the next
statement of its block, or to the end of the block. A replacement of a comment itself (a `Comment`, or
the `EmptyLine`/`TrailingWhitespace` holding one: SF001 rewriting a suppression) edits it on purpose.
"""

from __future__ import annotations

from collections import Counter
from typing import Mapping, Optional

import libcst as cst

from stabfix.model.source.node_fields import children

_COMMENT_EDITS = (cst.Comment, cst.EmptyLine, cst.TrailingWhitespace)


def replace_keeping_comments(module: cst.Module, changes: Mapping[int, object]) -> cst.Module:
    """`changes` maps `id(original node)` to its replacement (a node, `RemovalSentinel`, `FlattenSentinel`)."""
    counting = _Replacer(changes, plan=None)
    rewritten = module.visit(counting)
    lost = counting.net_lost()
    if not lost:
        return rewritten
    plan: dict[int, list[str]] = {}
    for site, comments in counting.lost_at:
        for comment in comments:
            if lost[comment] > 0:
                lost[comment] -= 1
                plan.setdefault(site, []).append(comment)
    return module.visit(_Replacer(changes, plan=plan))


def comments_in(node) -> list[str]:
    """The comments of a node, a `FlattenSentinel`'s nodes or nothing (a removal), in source order."""
    if isinstance(node, cst.FlattenSentinel):
        return [comment for inner in node.nodes for comment in comments_in(inner)]
    if not isinstance(node, cst.CSTNode):
        return []
    found, stack = [], [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Comment:
            found.append(current.value)
        stack.extend(reversed(children(current)))
    return found


class _Replacer(cst.CSTTransformer):
    """Without a plan, applies the changes and records what each changed statement lost and gained; with
    one, applies them again and puts each planned comment back."""

    def __init__(self, changes: Mapping[int, object], plan: Optional[dict[int, list[str]]]) -> None:
        super().__init__()
        self.changes = changes
        self.plan = plan
        self.stack: list[cst.CSTNode] = []
        self.sites: set[int] = set()  # statements a change was made in (the innermost one around it)
        self.edited: dict[int, list[str]] = {}  # site -> comments a fix replaced on purpose
        self.lost_at: list[tuple[int, list[str]]] = []
        self.gained: Counter = Counter()
        self.carried: dict[int, list[cst.EmptyLine]] = {}  # block -> comment lines of statements removed from it

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.stack.append(node)
        return True

    def on_leave(self, original_node, updated_node):
        self.stack.pop()
        result = self.changes.get(id(original_node), updated_node)
        if id(original_node) in self.changes:
            site = original_node if isinstance(original_node, cst.BaseStatement) else self._statement_around()
            if site is not None:
                self.sites.add(id(site))
                if isinstance(original_node, _COMMENT_EDITS):
                    self.edited.setdefault(id(site), []).extend(comments_in(original_node))
        if isinstance(original_node, cst.BaseStatement):
            if self.plan is None:
                if id(original_node) in self.sites:
                    self._count(original_node, result)
            else:
                result = self._put_back(original_node, result)
        elif type(original_node) in (cst.IndentedBlock, cst.Module) and id(original_node) in self.carried:
            result = result.with_changes(footer=[*self.carried.pop(id(original_node)), *result.footer])
        return result

    def _statement_around(self) -> Optional[cst.CSTNode]:
        for node in reversed(self.stack):
            if isinstance(node, cst.BaseStatement):
                return node
        return None

    def _count(self, original: cst.CSTNode, result) -> None:
        before, after = Counter(comments_in(original)), Counter(comments_in(result))
        before -= Counter(self.edited.get(id(original), ()))
        self.gained += after - before
        lost = before - after
        if lost:
            in_order = []
            for comment in comments_in(original):
                if lost[comment] > 0:
                    lost[comment] -= 1
                    in_order.append(comment)
            self.lost_at.append((id(original), in_order))

    def _put_back(self, original: cst.CSTNode, result):
        block = id(self.stack[-1]) if self.stack else None
        planned = self.plan.get(id(original), [])
        nodes = list(result.nodes) if isinstance(result, cst.FlattenSentinel) else [] if isinstance(result, cst.RemovalSentinel) else [result]
        removed = not nodes or not isinstance(nodes[0], cst.BaseStatement)
        # a removed statement's blank and comment lines above it move with the comments, as they were
        lines = _keeping(original.leading_lines, planned) if removed and planned else [_line(c) for c in planned]
        lines = [*self.carried.pop(block, ()), *lines]
        if not lines:
            return result
        if removed:
            self.carried[block] = lines
            return result
        nodes[0] = nodes[0].with_changes(leading_lines=[*lines, *nodes[0].leading_lines])
        return cst.FlattenSentinel(nodes) if isinstance(result, cst.FlattenSentinel) else nodes[0]

    def net_lost(self) -> Counter:
        lost = Counter(comment for _, comments in self.lost_at for comment in comments)
        return lost - self.gained


def _line(comment: str) -> cst.EmptyLine:
    return cst.EmptyLine(indent=True, whitespace=cst.SimpleWhitespace(""), comment=cst.Comment(comment))


def _keeping(leading_lines, comments: list[str]) -> list[cst.EmptyLine]:
    """`leading_lines` with the blank lines and those of `comments` they hold, then the rest of `comments`."""
    rest = Counter(comments)
    kept = []
    for line in leading_lines:
        if line.comment is None:
            kept.append(line)
        elif rest[line.comment.value] > 0:
            rest[line.comment.value] -= 1
            kept.append(line)
    for comment in comments:
        if rest[comment] > 0:
            rest[comment] -= 1
            kept.append(_line(comment))
    return kept

