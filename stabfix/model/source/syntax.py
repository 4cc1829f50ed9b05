"""Small questions about libcst syntax trees that every rule asks: which names an expression reads,
whether a node lies inside another, and walks over a tree or one function's own body."""

from __future__ import annotations

import re

import libcst as cst

from stabfix.model.source.node_fields import children, code_children


def node_kinds(*classes: type) -> frozenset[type]:
    """The given libcst node classes and all their subclasses, for `type(node) in kinds` in place of
    `isinstance(node, classes)`: libcst's node classes are ABCs, so every isinstance that misses runs
    `ABCMeta.__instancecheck__` in Python (millions of calls in a scan). libcst defines all its node
    classes when it is imported, and stabfix subclasses none of them, so the set is complete."""
    found: set[type] = set()
    pending = list(classes)
    while pending:
        cls = pending.pop()
        if cls not in found:
            found.add(cls)
            pending.extend(cls.__subclasses__())
    return frozenset(found)


# Node types many walks test, for `type(node) in ...`
TUPLES_AND_LISTS = node_kinds(cst.Tuple, cst.List)
NAMES_AND_ATTRIBUTES = node_kinds(cst.Name, cst.Attribute)
CLASSES_AND_FUNCTIONS = node_kinds(cst.FunctionDef, cst.ClassDef)
DEFINITIONS = node_kinds(cst.FunctionDef, cst.ClassDef, cst.Lambda)  # nested code that runs only when called


def names_in(node: cst.CSTNode) -> set[str]:
    """Variable names read in an expression (attribute names and keywords excluded)."""
    found: set[str] = set()

    def walk(current: cst.CSTNode) -> None:
        if isinstance(current, cst.Name):
            found.add(current.value)
            return
        if isinstance(current, cst.Attribute):
            walk(current.value)
            return
        if isinstance(current, cst.Arg):
            walk(current.value)
            return
        for child in children(current):
            walk(child)

    walk(node)
    return found


def contains(node: cst.CSTNode, needle: cst.CSTNode) -> bool:
    if node is needle:
        return True
    return any(contains(child, needle) for child in children(node))


def walk_scope(function: cst.FunctionDef):
    """Nodes of a function body but the trivia (whitespace, punctuation), not descending into nested
    functions, classes or lambdas."""
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(child for child in code_children(current) if type(child) not in DEFINITIONS)


def walk(node: cst.CSTNode):
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(children(current))


def preorder(node: cst.CSTNode):
    yield node
    for child in children(node):
        yield from preorder(child)


def code_of(node: cst.CSTNode, limit: int = 60) -> str:
    """The node's source on one line (comments of a multi-line expression dropped), shortened for messages."""
    text = cst.Module(body=[]).code_for_node(node)
    if "\n" in text:
        text = re.sub(r"#[^\n]*", "", text)
    text = " ".join(text.split()).replace("( ", "(").replace(" )", ")")
    return text if len(text) <= limit else text[: limit - 3] + "..."
