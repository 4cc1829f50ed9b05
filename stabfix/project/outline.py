"""The outline of one file: what its module binds at top level, from CPython's `ast` (milliseconds a
file, no libcst parse).

Node-free and picklable, so it can cross processes and files. It holds what the project index needs to
resolve a qualified name: each top-level name with how it is bound (a `def`, a `class` with its bases
and methods, an import of another module or of a name from one, any other assignment), the star
imports, and `__all__` when it is a literal list. Bindings inside a top-level `if`/`try`/`with` count
(`try: from a import x / except ImportError: from b import x` binds `x` twice: the index then sees two
candidates and calls the name unknown unless both agree).
"""

from __future__ import annotations

import ast
import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import Iterator, Optional


@dataclass(frozen=True)
class Binding:
    """How a top-level name is bound.

    kind: "def", "class", "import" (the whole module `target`), "from" (name `name` of module `target`,
    `level` dots up), or "value" (anything else: an assignment, a loop target).
    """

    kind: str
    target: str = ""  # the module an import names (without its leading dots)
    name: str = ""  # the imported name, for "from"
    level: int = 0  # leading dots of a relative import
    bases: tuple[str, ...] = ()  # a class's bases as spelled (`nn.Module`); "" for one that is not a name
    methods: tuple[str, ...] = ()  # a class's own methods


@dataclass(frozen=True)
class StarImport:
    target: str
    level: int


@dataclass(frozen=True)
class Outline:
    bindings: dict[str, tuple[Binding, ...]]
    stars: tuple[StarImport, ...]
    exported: Optional[tuple[str, ...]]  # a literal `__all__`, else None

    def bound(self, name: str) -> tuple[Binding, ...]:
        return self.bindings.get(name, ())



# What CPython's parser made of each text seen lately, by digest: whether it ran out of recursion, and the
# outline. The engine asks whether a file it is about to analyse recurses (`cpython_parse_recurses`), the
# project index asks for the outline of a file another one imports: whichever comes first parses, the other
# is answered here, so a file is parsed by CPython once per process. A recursion is never remembered (the
# limit depends on how deep the stack already was, so it is asked again). Bounded for a language server,
# which sees a new text at every edit; an outline is a few names, so thousands cost little.
_PARSED: "OrderedDict[bytes, Optional[Outline]]" = OrderedDict()  # None: CPython refused the text
_PARSED_KEPT = 4096
_RECURSED = object()  # what `_parsed` answers for a text CPython ran out of recursion on


class _KeptTrees:
    """Trees by digest, the oldest dropped first once there are more than `most` or their texts are longer than
    `most_chars` in all (a tree costs about 30 bytes a character of its text). A tree is handed out once (`take`):
    the asker owns it and may keep it."""

    def __init__(self, most: int, most_chars: int) -> None:
        self.most, self.most_chars = most, most_chars
        self._trees: "OrderedDict[bytes, tuple[ast.Module, int]]" = OrderedDict()  # digest -> (tree, its text's length)
        self.chars = 0

    def __len__(self) -> int:
        return len(self._trees)

    def keep(self, key: bytes, tree: ast.Module, length: int) -> None:
        if length > self.most_chars:
            return
        self.take(key)
        self._trees[key] = (tree, length)
        self.chars += length
        while len(self._trees) > self.most or self.chars > self.most_chars:
            self.chars -= self._trees.popitem(last=False)[1][1]

    def take(self, key: bytes) -> Optional[ast.Module]:
        kept = self._trees.pop(key, None)
        if kept is None:
            return None
        self.chars -= kept[1]
        return kept[0]


# The trees outlines were made from, kept a short while for `cpython_tree`: the project index outlines a file (for
# its own imports or another file's) mostly just before the file's own turn asks for its tree, which then takes the
# kept one instead of parsing the text again (in the cold scan of bench's 496-file corpus, 205 of the 213 files
# outlined before their own turn; 301 outlined in all). Up to about 15 MB of trees.
_TREES = _KeptTrees(32, 500_000)


def cpython_parse_recurses(text: str) -> bool:
    """Whether `ast.parse(text)` raises RecursionError (the code is nested too deeply for any walk of it)."""
    return _parsed(text) is _RECURSED


def cpython_parses(text: str) -> bool:
    """Whether `ast.parse(text)` succeeds (False for a syntax error and for a recursion)."""
    return isinstance(_parsed(text), Outline)


def outline_of(text: str) -> Optional[Outline]:
    """The file's outline; None when CPython cannot parse it (unknown, never an empty module)."""
    outcome = _parsed(text)
    return outcome if isinstance(outcome, Outline) else None


def cpython_tree(text: str) -> Optional[ast.Module]:
    """CPython's tree of the text, a new one at each call (the tree of a recent outline of the text when one is kept),
    None when CPython refuses it or runs out of recursion. What it learns is remembered, so the questions above cost
    nothing afterwards."""
    key = _digest(text)
    kept = _TREES.take(key)
    if kept is not None:
        return kept
    try:
        tree = ast.parse(text)
    except RecursionError:
        return None
    except (SyntaxError, ValueError, MemoryError):
        _remember(key, None)
        return None
    if key not in _PARSED:
        outline = _outline_or_unknown(tree)
        if outline is not _RECURSED:
            _remember(key, outline)
    return tree


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _remember(key: bytes, outline: Optional[Outline]) -> None:
    _PARSED[key] = outline
    while len(_PARSED) > _PARSED_KEPT:
        _PARSED.popitem(last=False)


def _outline_or_unknown(tree: ast.Module):
    try:
        return _outline(tree)
    except RecursionError:  # a base class spelled `a.b.c...` thousands deep: unknown, the parse held
        return _RECURSED


def _parsed(text: str):
    """The text's outline, None when CPython refuses it, `_RECURSED` when it runs out of recursion."""
    key = _digest(text)
    if key in _PARSED:
        _PARSED.move_to_end(key)
        return _PARSED[key]
    try:
        tree = ast.parse(text)
    except RecursionError:
        return _RECURSED
    except (SyntaxError, ValueError, MemoryError):
        outline = None
    else:
        outline = _outline_or_unknown(tree)
        if outline is _RECURSED:
            return None
        _TREES.keep(key, tree, len(text))
    _remember(key, outline)
    return outline


def _outline(tree: ast.Module) -> Outline:
    bindings: dict[str, list[Binding]] = {}
    stars: list[StarImport] = []
    exported: Optional[tuple[str, ...]] = None
    for statement in _top_level(tree.body):
        for name, binding in _bindings_of(statement, stars):
            bindings.setdefault(name, []).append(binding)
        if isinstance(statement, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__all__" for target in statement.targets
        ):
            exported = _literal_names(statement.value)
    return Outline({name: tuple(found) for name, found in bindings.items()}, tuple(stars), exported)


def _top_level(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Module-level statements, also those inside top-level `if`/`try`/`with` blocks."""
    for statement in body:
        yield statement
        if isinstance(statement, ast.If):
            yield from _top_level(statement.body)
            yield from _top_level(statement.orelse)
        elif isinstance(statement, ast.Try) or type(statement).__name__ == "TryStar":
            yield from _top_level(statement.body)  # type: ignore[attr-defined]
            for handler in statement.handlers:  # type: ignore[attr-defined]
                yield from _top_level(handler.body)
            yield from _top_level(statement.orelse)  # type: ignore[attr-defined]
            yield from _top_level(statement.finalbody)  # type: ignore[attr-defined]
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            yield from _top_level(statement.body)


def _bindings_of(statement: ast.stmt, stars: list[StarImport]) -> Iterator[tuple[str, Binding]]:
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
        yield statement.name, Binding("def")
    elif isinstance(statement, ast.ClassDef):
        bases = tuple(_dotted(base) or "" for base in statement.bases)
        methods = tuple(
            item.name for item in statement.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
        )
        yield statement.name, Binding("class", bases=bases, methods=methods)
    elif isinstance(statement, ast.Import):
        for alias in statement.names:
            if alias.asname is not None:
                yield alias.asname, Binding("import", target=alias.name)
            else:
                top = alias.name.split(".")[0]
                yield top, Binding("import", target=top)
    elif isinstance(statement, ast.ImportFrom):
        module, level = statement.module or "", statement.level or 0
        for alias in statement.names:
            if alias.name == "*":
                stars.append(StarImport(module, level))
            else:
                yield alias.asname or alias.name, Binding("from", target=module, name=alias.name, level=level)
    elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        for target in targets:
            for node in ast.walk(target):
                if isinstance(node, ast.Name):
                    yield node.id, Binding("value")
    elif isinstance(statement, (ast.For, ast.AsyncFor)):
        for node in ast.walk(statement.target):
            if isinstance(node, ast.Name):
                yield node.id, Binding("value")


def _dotted(node: ast.expr) -> Optional[str]:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base is not None else None
    if isinstance(node, ast.Subscript):  # `Generic[T]`, `nn.ModuleList[...]`: the class itself
        return _dotted(node.value)
    return None


def _literal_names(value: ast.expr) -> Optional[tuple[str, ...]]:
    if not isinstance(value, (ast.List, ast.Tuple)):
        return None
    names = [item.value for item in value.elts if isinstance(item, ast.Constant) and isinstance(item.value, str)]
    return tuple(names) if len(names) == len(value.elts) else None
