"""The one-walk index behind `Shape` (its nodes by type, calls by callee name, parents) sees every node a plain
walk of CPython's tree sees, in the same order, though it skips the fields that never hold a node."""

from __future__ import annotations

import ast

from stabfix.shape import Shape, _Index, callee_name

SOURCE = '''
import torch, torch.nn as nn
from . import helpers as h
from .x import *
global_step: int = 0

@torch.no_grad()
def f(a, /, b=1, *args, c, d=2, **kw) -> "T":
    global global_step
    merged = {**kw, "a": a, None: b}
    s = f"{a!r:>{b}} {c=}"
    total = sum(x * 2 for x in args if x) + (y := 3)
    [p, *rest], q = merged.items(), lambda z=4, *, w: z + w
    with open(s) as handle, torch.autocast("cpu"):
        del handle
    try:
        raise ValueError(s) from None
    except* (OSError, ValueError) as group:
        pass
    match merged:
        case {"a": 1, **others}:
            return others
        case Point(x=0, y=yy) | [1, 2, *_] if yy:
            return yy
        case None:
            return -a
    async def inner():
        async for item in agen():
            await item
        async with lock:
            yield [i async for i in agen()]
    return total if not q else q(1, w=2)[0:1:2]

class Net(nn.Module, metaclass=Meta):
    x: int
    def forward(self, x):
        assert x is not None, "x"
        self.out, self.aux = x @ x.T, ~x
        return x.sum().item() ** 2
'''


def plain_index(tree: ast.AST):
    """The index as the library's own walk would make it: children by `ast.iter_child_nodes`, `ctx` markers left out."""
    parents, by_type, calls = {}, {}, {}
    stack = [tree]
    while stack:
        node = stack.pop()
        by_type.setdefault(type(node), []).append(node)
        if type(node) is ast.Call:
            calls.setdefault(callee_name(node), []).append(node)
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.expr_context):
                parents[id(child)] = node
                stack.append(child)
    return parents, by_type, calls


def by_identity(index: dict) -> list:
    return [(key, [id(node) for node in nodes]) for key, nodes in index.items()]


def test_the_index_sees_every_node_a_plain_walk_sees_in_the_same_order():
    tree = ast.parse(SOURCE)
    parents, by_type, calls = plain_index(tree)
    index = _Index(tree)
    assert index.parents == parents
    assert by_identity(index.by_type) == by_identity(by_type)
    assert by_identity(index.calls) == by_identity(calls)
    assert ast.Load not in index.by_type and ast.MatchAs in index.by_type and ast.Starred in index.by_type


def test_shape_queries_answer_from_the_index():
    tree = ast.parse(SOURCE)
    shape = Shape(tree, SOURCE)
    (merged,) = [node for node in shape.nodes(ast.Dict) if len(node.keys) == 3]
    assert None in merged.keys and shape.parent(merged.values[0]) is merged  # `**kw`: no key, still walked
    (call,) = shape.calls("agen")[:1]
    assert [type(node).__name__ for node in shape.ancestors(call)][:3] == ["comprehension", "ListComp", "Yield"]
    assert shape.enclosing_function(call).name == "inner" and shape.in_loop(call)
    assert {node.id for node in shape.nodes(ast.Name) if shape.parent(node) is not None} >= {"kw", "yy", "lock"}
    assert shape.defined_functions == {"f", "inner", "forward"}
