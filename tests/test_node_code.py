"""`node_code` writes some node kinds out itself instead of running libcst's codegen: it must give
libcst's text for every node (an upgrade of libcst that changes a codegen shows up here)."""

from __future__ import annotations

from pathlib import Path

import libcst as cst

from stabfix.model.source.syntax import node_code

ROOT = Path(__file__).resolve().parent.parent

# the spellings the hand-written kinds must follow: parentheses, spaces and comments around dots, commas
# and `=`, stars, trailing commas, calls spread over lines
SPELLINGS = '''
x = (a).b ( c , d = 1 ,*e, ** f , )
y = a . b(
    c,  # the first
    key = (1),
    *[2], **{},
)
z = (f)(g)((h)) + a.\\
    b(c)
w = f(a)(b=1.5, c=2j, d='s' "t", e=-1, f=a if b else c, g=lambda: 0, h=[i for i in j])
v = obj . attr . method ( "x" ) [0] . other
'''


def _nodes(module: cst.Module):
    stack = [module]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node is not module:
            yield node


def _libcst_code(node: cst.CSTNode):
    try:
        return cst.Module(body=[]).code_for_node(node)
    except Exception as error:  # a node that cannot be generated on its own (a `Param` star's default)
        return type(error)


def _code(node: cst.CSTNode):
    try:
        return node_code(node)
    except Exception as error:
        return type(error)


def test_node_code_is_libcsts_code_for_every_node():
    sources = [SPELLINGS, *(path.read_text(encoding="utf-8") for path in sorted((ROOT / "fixtures").rglob("*.py")))]
    compared = 0
    for source in sources:
        for node in _nodes(cst.parse_module(source)):
            assert _code(node) == _libcst_code(node), node
            compared += 1
    assert compared > 10_000


def test_node_code_of_built_nodes():
    call = cst.Call(cst.Attribute(cst.Name("torch"), cst.Name("no_grad")), args=[cst.Arg(cst.Name("x")), cst.Arg(cst.Integer("1"), keyword=cst.Name("k"))])
    assert node_code(call) == cst.Module(body=[]).code_for_node(call) == "torch.no_grad(x, k = 1)"
