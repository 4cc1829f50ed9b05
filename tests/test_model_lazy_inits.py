"""`source/lazy_inits.py`: which `if` blocks of a method run once per object (a lazy initialisation)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from stabfix.model import FileModel
from stabfix.model.source.lazy_inits import LazyInits


def _once_lines(source: str, method: str = "forward") -> list[int]:
    """The lines of the `if` statements of `method` whose body runs once per object."""
    module = cst.parse_module(textwrap.dedent(source))
    model = FileModel(needs=("names",))
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    wrapper.visit_batched(model.visitors())
    positions = wrapper.resolve(cst.metadata.PositionProvider)
    function = next(node for node in model.names.scopes if isinstance(node, cst.FunctionDef) and node.name.value == method)
    return [positions[block].start.line for block in LazyInits(model.names).once_blocks(function)]


CLASS = """
import torch
class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = None
        self.table = {}
"""


@pytest.mark.parametrize("body, expected", [
    # the test says empty, the body fills it: once
    ("        if self.cache is None:\n            self.cache = torch.ones(3)\n", [12]),
    ("        if not self.table:\n            self.table[0] = x\n", [12]),
    ("        if self.table == {}:\n            self.table.update(a=x)\n", [12]),
    ("        if len(self.table) == 0:\n            self.fill(x)\n", [12]),
    # the body fills another attribute, stores an empty value, or the method drops the cache again: every call
    ("        if self.cache is None:\n            self.other = torch.ones(3)\n", []),
    ("        if self.cache is None:\n            self.cache = None\n", []),
    ("        if self.cache is None:\n            self.cache = torch.ones(3)\n        self.cache = None\n", []),
    ("        if self.table == {}:\n            self.fill(x)\n        self.table.clear()\n", []),
    # a flag set once, and a flag set back on every call
    ("        if not self.cache:\n            self.cache = True\n", [12]),
    ("        if not self.cache:\n            self.cache = True\n        self.cache = False\n", []),
    # a test that is no emptiness test
    ("        if self.cache is not None:\n            self.cache = torch.ones(3)\n", []),
])
def test_once_blocks(body: str, expected: list[int]) -> None:
    source = CLASS + "    def fill(self, x):\n        self.table[0] = x\n\n    def forward(self, x):\n" + body
    assert _once_lines(source) == expected


def test_fill_through_a_function_handed_the_instance() -> None:
    source = """
    def seed(owner, x):
        owner.table[0] = x

    class Head:
        def __init__(self):
            self.table = {}

        def forward(self, x):
            if not self.table:
                seed(self, x)
            return x
    """
    assert _once_lines(source) == [10]
