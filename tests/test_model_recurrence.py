"""What a checkpointed callable runs (`Names.callable_of`) and whether it returns or changes state
(`stabfix.model.flow.recurrence`): the facts SF403 asks about."""

from __future__ import annotations

import textwrap

import libcst as cst

from stabfix.model.flow.recurrence import Recurrence
from stabfix.model.source.names import build_names


def _callee_of_first_checkpoint(source: str):
    module = cst.parse_module(textwrap.dedent(source))
    names = build_names(module)
    call = next(
        node for node in _calls(module) if isinstance(node.func, cst.Name) and node.func.value == "checkpoint"
    )
    return names, Recurrence(names), names.callable_of(call.args[0].value)


def _calls(module: cst.Module):
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Call):
            yield node
        stack.extend(node.children)


def test_self_attribute_bound_to_an_rnn_module_is_the_library_rnn():
    _, recurrence, callee = _callee_of_first_checkpoint(
        """
        import torch.nn as nn
        class M(nn.Module):
            def __init__(self):
                self.rnn = nn.GRU(4, 4)
            def forward(self, x):
                return checkpoint(self.rnn, x)
        """
    )
    assert callee.kind == "library" and callee.qualified == "torch.nn.GRU"
    assert recurrence.state_output(callee) is not None


def test_element_of_a_module_dict_runs_the_forward_of_its_class():
    names, recurrence, callee = _callee_of_first_checkpoint(
        """
        import torch.nn as nn
        class Cell(nn.Module):
            def forward(self, x, h):
                for t in range(x.shape[1]):
                    h = h * 0.5 + x[:, t]
                return x, h
        class Block(nn.Module):
            def __init__(self):
                self.cells = nn.ModuleDict({"a": Cell()})
            def forward(self, x, h):
                for name, cell in self.cells.items():
                    return checkpoint(cell, x, h)
        """
    )
    assert callee.kind == "function" and callee.node.name.value == "forward"
    assert callee.module_class is not None and callee.module_class.name.value == "Cell"
    assert "carried from one time step to the next" in recurrence.state_output(callee)


def test_partial_and_lambda_resolve_to_what_they_call():
    _, _, callee = _callee_of_first_checkpoint(
        """
        import functools
        def f(x, k):
            return x * k
        g = functools.partial(f, k=2)
        checkpoint(g, 1)
        """
    )
    assert callee.kind == "function" and callee.node.name.value == "f"


def test_layer_stack_threading_an_activation_is_not_state():
    _, recurrence, callee = _callee_of_first_checkpoint(
        """
        class Stack:
            def run(self, x, mask):
                for i, layer in enumerate(self.layers):
                    x = layer(x, mask[i])
                return x, mask
            def forward(self, x, mask):
                return checkpoint(self.run, x, mask)
        """
    )
    assert callee.node.name.value == "run"
    assert recurrence.state_output(callee) is None


def test_mutations_outside_the_call_are_named_and_local_containers_are_not():
    _, recurrence, callee = _callee_of_first_checkpoint(
        """
        LOG = []
        def step(x):
            seen = {}
            seen["x"] = x
            LOG.append(x)
            return x
        checkpoint(step, 1)
        """
    )
    assert recurrence.mutation(callee.node) == "calls `LOG.append(...)`"
