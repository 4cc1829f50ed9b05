"""SF108 graph-carried-across-steps: a recurrent state or output is fed into the next step without
`detach()`, so every backward pass runs through (and keeps alive) the graphs of all earlier steps.

A query over the `carried` part: a name (or `self` attribute) that a call inside a training loop
(or a step method) takes and re-binds from its result, with a backward pass on the same iterations
and no detach or reset of it in the loop (or class). Often covered up with `retain_graph=True`,
which the message names. Report only: where to cut (every step, every k steps for truncated
backpropagation through time) is the author's choice. The detach it suggests goes element by element
when the state is a tuple or list (an LSTM's `(h, c)`), which has no `.detach()`.
"""

from __future__ import annotations

import ast

import libcst as cst

from stabfix.checker import Checker
from stabfix.model.source.syntax import node_code
from stabfix.model.training.carried import CarriedState
from stabfix.shape import Shape
from stabfix.shape_queries import calls_named

_MAX_TEXT = 50


class GraphCarriedAcrossSteps(Checker):
    code = "SF108"
    tokens = ("backward",)
    needs = ("carried",)

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:
        # reported on a call that takes a name (or an attribute) and whose result re-binds it, beside a backward
        # pass of this file (`.backward()`, `autograd.backward/grad`, `manual_backward`, any alias)
        if not calls_named(shape, ("backward", "manual_backward", "grad")):
            return False
        return any(_feeds_itself(node) for node in shape.nodes(ast.Assign, ast.AnnAssign))

    def leave_Module(self, original_node: cst.Module) -> None:
        for state in self.model.carried.carried():
            callee = _text(state.call.func)
            cover = (
                f"; `{_text(state.backward.node)}` only hides the error this causes"
                if state.retain_graph
                else ""
            )
            self.report(
                state.call,
                f"`{state.name}` is fed back into `{callee}` on every step without `detach()`, so each backward "
                f"runs through every earlier step's graph and keeps it alive{cover}; detach it after the update "
                f"(`{_detached(state)}`)",
            )


def _feeds_itself(assign) -> bool:
    call = assign.value
    if type(call) is not ast.Call:
        return False
    targets = assign.targets if type(assign) is ast.Assign else [assign.target]
    bound = {n.id if type(n) is ast.Name else n.attr for target in targets for n in ast.walk(target)
             if type(n) in (ast.Name, ast.Attribute)}
    read = {n.id if type(n) is ast.Name else n.attr for arg in [*call.args, *(k.value for k in call.keywords)]
            for n in ast.walk(arg) if type(n) in (ast.Name, ast.Attribute)}
    return not bound.isdisjoint(read)


def _detached(state: CarriedState) -> str:
    """The detaching assignment to suggest; a tuple or list has no `.detach()`: detach each element."""
    name = state.name
    if not state.is_sequence:
        return f"{name} = {name}.detach()"
    element = "t" if name == "h" else "h"
    return f"{name} = tuple({element}.detach() for {element} in {name})"


def _text(node: cst.CSTNode) -> str:
    code = " ".join(node_code(node).split())
    return code if len(code) <= _MAX_TEXT else code[: _MAX_TEXT - 3] + "..."
