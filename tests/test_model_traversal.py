"""The read-only walk calls the same visitor methods, on the same nodes, in the same order as
libcst's batched traversal (which rebuilds every node), whether or not whitespace is visited."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from stabfix.model.source.node_fields import field_order
from stabfix.model.source.traversal import MergedVisitor, walk

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(ROOT.glob("fixtures/*/*.py")) + sorted(ROOT.glob("stabfix/model/**/*.py"))[:6]

TRICKY = '''
from . import a
from .. b import (c as d, e,)
from x import *
import os.path as p  # noqa: SF001
@dec(1)
async def f(x: int = 1, /, *args, y, **kw) -> "T":
    """doc"""
    global g
    async with a as (b, c), d:
        async for i in range(3):
            yield f"{x!r:>{w}} {y=}" + rb'z'
    while x: break
    else: pass
    try: pass
    except* (E, F) as e: raise
    finally: pass
    match p:
        case [1, *rest] if rest: pass
        case {"k": v, **kw}: pass
        case Point(x=0) | None: pass
    lam = lambda q, *, r=2: q[1:2, ::3] @ r
    x += 1; x **= 2; del x
    return [i async for i in g if i] or {k: v for k, v in d.items()} or {*s}
class C(B, metaclass=M):
    x: int = 1
    def g[T](self) -> T: ...
type Alias[T] = list[T]
print(not a, -b, ~c, a if b else c, a < b <= c is not d, (yield), await z, *s)
'''


class Recorder(cst.BatchableCSTVisitor):
    """Records every callback; with `trivia`, also those on whitespace, comments and punctuation; without
    `fields`, no callback on a node's fields (the walk then does not read a field that holds only skipped
    nodes)."""

    def __init__(self, trivia: bool, fields: bool = True) -> None:
        super().__init__()
        self.events: list[tuple[str, int]] = []
        self.trivia = trivia
        self.fields = fields

    def get_visitors(self):
        names = {}
        pending = [cst.CSTNode]
        while pending:
            for sub in pending.pop().__subclasses__():
                pending.append(sub)
                if not sub.__module__.startswith("libcst.") or "_visit_and_replace_children" not in vars(sub):
                    continue
                if not self.trivia and sub.__module__.endswith(("whitespace", ".op")):
                    continue
                names[f"visit_{sub.__name__}"] = self._record(f"visit_{sub.__name__}")
                names[f"leave_{sub.__name__}"] = self._record(f"leave_{sub.__name__}")
                for field, _ in field_order(sub) if self.fields else ():
                    for kind in ("visit", "leave"):
                        names[f"{kind}_{sub.__name__}_{field}"] = self._record(f"{kind}_{sub.__name__}_{field}")
        return names

    def _record(self, name):
        return lambda node: self.events.append((name, id(node)))


def _sources():
    yield "tricky", TRICKY
    for path in SOURCES:
        yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")


@pytest.mark.parametrize("trivia", [True, False])
@pytest.mark.parametrize("fields", [True, False])
def test_walk_matches_libcst_visit_batched(trivia, fields):
    for label, text in _sources():
        module = cst.parse_module(text)
        expected, got = Recorder(trivia, fields), Recorder(trivia, fields)
        MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([MergedVisitor([expected])])
        walk(module, [got])
        assert got.events == expected.events, label
        assert len(got.events) > (10 if fields else 2)


def test_walk_skips_whitespace_no_visitor_asked_for():
    class Calls(cst.BatchableCSTVisitor):
        def __init__(self):
            super().__init__()
            self.seen = []

        def visit_Call(self, node):
            self.seen.append(node)

    module = cst.parse_module("f(g(1), h( 2 ))  # c\n")
    expected, got = Calls(), Calls()
    MetadataWrapper(module, unsafe_skip_copy=True).visit_batched([expected])
    walk(module, [got])
    assert [id(n) for n in got.seen] == [id(n) for n in expected.seen] and len(got.seen) == 3


def test_engine_positions_and_parents_match_libcst_metadata():
    import random

    from libcst.metadata import ParentNodeProvider, PositionProvider

    from stabfix.engine import _parents
    from stabfix.model.source.node_fields import children
    from stabfix.model.source.positions import Positions

    for label, text in _sources():
        for variant in (text, text.rstrip("\n"), "# header\n\n" + text + "\n# footer\n"):
            module = cst.parse_module(variant)
            wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
            expected, parents = wrapper.resolve(PositionProvider), wrapper.resolve(ParentNodeProvider)
            nodes = [module]
            for node in nodes:
                nodes.extend(children(node))
            order = list(nodes)
            random.Random(len(order)).shuffle(order)
            positions, found = Positions(module), _parents(module)
            for node in order[: len(order) // 3] + nodes:
                assert positions[node] == expected[node], label
            assert {key: id(value) for key, value in found.items()} == {id(k): id(v) for k, v in parents.items()}


def test_deeply_nested_code_is_an_error_or_analysed_never_a_crash(tmp_path):
    from stabfix.catalog import load_catalog
    from stabfix.scan_runner import Task, process

    codes = tuple(sorted(load_catalog()))
    for depth in (100, 200, 400):
        path = tmp_path / f"d{depth}.py"
        path.write_text(
            "import torch\ndef step(model, opt, x):\n    loss = " + "f(" * depth + "x" + ")" * depth
            + "\n    loss.backward()\n    opt.step()\n    torch.cuda.empty_cache()\n"
        )
        result = process(Task(str(path), path.name, codes, "scan", False)).result
        if result.error is not None:
            assert "nested too deeply" in result.error.message, result.error.message
        else:
            assert [finding.code for finding in result.findings] == ["SF201"]


def test_a_position_table_whose_codegen_failed_fails_every_later_ask_too(monkeypatch):
    # the table is shared by the rules and the engine: after one asker hit code too deep for libcst's
    # codegen, a later asker must hear the same error, never get "no such node" (a line 0 in a message)
    from stabfix.model.source.positions import Positions

    module = cst.parse_module("a = 1\nb = f(g(h(2)))\nc = 3\n")
    deep = module.body[1]
    original = cst.SimpleStatementLine._codegen

    def codegen(statement, state):
        if statement is deep:
            raise RecursionError("maximum recursion depth exceeded")
        return original(statement, state)

    monkeypatch.setattr(cst.SimpleStatementLine, "_codegen", codegen)
    positions = Positions(module)
    assert positions.line(module.body[0]) == 1
    for _ in range(2):
        with pytest.raises(RecursionError, match="nested too deeply"):
            positions.line(module.body[2])


def test_code_children_are_the_children_less_trivia_in_order():
    """A search of a subtree that looks at no trivia (whitespace, comments, punctuation, operators) meets the
    same code nodes, in the same order, whether it steps with `children` or `code_children`."""
    from stabfix.model.source.node_fields import children, code_children, trivia

    def reached(module, step):
        order, stack = [], [module]
        while stack:
            node = stack.pop()
            order.append(node)
            stack.extend(step(node))
        return order

    trivia = trivia()
    for label, text in _sources():
        module = cst.parse_module(text)
        everything = reached(module, children)
        code = reached(module, code_children)
        assert [id(n) for n in code] == [id(n) for n in everything if type(n) not in trivia], label
        assert len(code) < len(everything), label  # the trivia are left out
        assert all(type(n) not in trivia for n in code), label
        for node in everything:
            assert [id(c) for c in code_children(node)] == [id(c) for c in children(node) if type(c) not in trivia]


def test_node_types_compared_exactly_have_no_subclasses():
    """Hot paths of the model compare a node's exact type (`type(node) is cst.Name`, `type(node) in
    frozenset({cst.FunctionDef, ...})`) instead of `isinstance`, which on libcst's ABC node classes costs a
    Python call: that reads the same only while the installed libcst has no subclass of those types."""
    import re

    root = Path(__file__).resolve().parent.parent / "stabfix"
    compared: set[str] = set()
    for path in root.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        compared.update(re.findall(r"(?:\btype\([\w.]+\)|\bkind) is (?:not )?cst\.([A-Z]\w*)", text))
        for members in re.findall(r"frozenset\(\{((?:cst\.\w+(?:, )?)+)\}\)", text):
            compared.update(re.findall(r"cst\.(\w+)", members))
    assert {"Name", "Attribute", "Call", "FunctionDef", "ClassDef"} <= compared
    subclassed = {name: [sub.__name__ for sub in getattr(cst, name).__subclasses__()] for name in sorted(compared)}
    assert {name: subs for name, subs in subclassed.items() if subs} == {}
