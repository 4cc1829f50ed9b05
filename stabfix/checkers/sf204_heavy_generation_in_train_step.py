"""SF204 heavy-generation-in-train-step: generation (decoding token by token) on every training step.

Generation comes from the model (`generation`): `.generate(...)` of a model, a call with generation
settings whose name says it decodes, a function of the file that generates, or a decode loop written in
the step. It is reported when it runs on every step (no interval, eval or flag gate; a module flag bound
only to `True` is no gate) and what it makes does not feed the update: RL/RLHF rollouts (PPO, GRPO,
REINFORCE) generate the very data the loss is computed on, and are left alone. Report only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import ast

import libcst as cst

from stabfix.checker import Checker
from stabfix.model.source.places import Place, enclosing_statement
from stabfix.model.source.syntax import node_code
from stabfix.model.training import gates
from stabfix.model.training.step_frames import Frame, FunctionFrame, StepPath, loop_header
from stabfix.model.source import vocabulary as words
from stabfix.model.training.step_recognition import STEP_TOKENS
from stabfix.shape import Shape, callee_name

INTERVAL = 100


@dataclass
class _Site:
    node: Union[cst.Call, cst.For, cst.While]
    frames: tuple[Frame, ...]
    place: Place


class HeavyGenerationInTrainStep(Checker):
    code = "SF204"
    tokens = ("generate", "decode", "argmax", "multinomial", "sample", "max_new_tokens", "max_length", "beam")
    also_needs = (STEP_TOKENS,)  # reported only on a step path, which needs one of them
    needs = ("steps", "generation")

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:
        # generation (`generation`): a `.generate()`, a decoding call given generation settings, or a loop that picks a
        # token and grows a sequence (a function of the file that generates holds one of them)
        if any(type(call.func) is ast.Attribute for call in shape.calls("generate")) or any(
                k.arg in words.GENERATION_SETTINGS for call in shape.all_calls() if words.GENERATION_CALL_WORD.search(
                    callee_name(call) or "") for k in call.keywords):
            return True
        picked = {id(loop) for call in shape.calls("argmax", "multinomial", "sample") for loop in shape.ancestors(call)
                  if type(loop) in (ast.For, ast.AsyncFor, ast.While)}
        return bool(picked) and any(id(loop) in picked for call in shape.calls("append", "extend", *shape.spellings(
            "cat", "stack", "concat")) for loop in shape.ancestors(call))

    def __init__(self, context) -> None:
        super().__init__(context)
        self.steps = self.model.steps
        self.sites: list[_Site] = []

    def visit_Call(self, node: cst.Call) -> None:
        kind = type(node.func)  # exact types (see node_fields.node_kinds): every call of the file comes here
        if kind is cst.Name or kind is cst.Attribute:
            self.sites.append(_Site(node, self.steps.frames(), self.steps.place()))

    def visit_For(self, node: cst.For) -> None:
        self.sites.append(_Site(node, self.steps.frames(), self.steps.place()))

    def visit_While(self, node: cst.While) -> None:
        self.sites.append(_Site(node, self.steps.frames(), self.steps.place()))

    def leave_Module(self, original_node: cst.Module) -> None:
        generation, names = self.model.generation, self.model.names
        inside: list[cst.CSTNode] = []  # decode loops already reported: their calls are part of them
        frames: dict[int, FunctionFrame] | None = None  # the file's function frames, by node (for callees)
        for site in self.sites:
            path = self.steps.step_path(site.frames)
            if path is None or path.kind == "callee":
                continue  # in a helper, the step's call of the helper is what is reported
            if type(site.node) is cst.Call and not generation.may_generate(site.node):
                continue  # most of a step's calls: asked first, it spares them the gate queries below
            if gates.live_gates(self.steps, names, path):
                continue
            if any(_contains(loop, site.node) for loop in inside):
                continue
            statement = enclosing_statement(site.place) if type(site.node) is cst.Call else site.node
            scope_node = path.scope.node
            if statement is None or gates.skipped_by_interval_guard(
                self.steps, site.place, statement, scope_node
            ) or gates.exited_early(self.steps, names, site.place, statement, scope_node):
                continue
            if type(site.node) is cst.Call:
                if frames is None:
                    frames = {id(f.node): f for other in self.sites for f in other.frames if isinstance(f, FunctionFrame)}
                callee = frames.get(id(names.definition_of(site.node)))
                if callee is not None and self.steps.is_step_function(callee):
                    continue  # a step function of its own (`trainer.train_step(batch)`): reported inside it
                why = generation.generation_call(site.node)
            else:
                why = "decodes token by token" if generation.decode_loop(site.node) else None
            if why is None:
                continue
            function = next((f for f in reversed(site.frames) if isinstance(f, FunctionFrame)), None)
            scope = function.node if function is not None else original_node
            if generation.feeds_training(site.node, statement, scope):
                continue  # a rollout: the generated tokens are the data the update trains on
            if type(site.node) is not cst.Call:
                inside.append(site.node)
            self.report(site.node, self._message(site, path, why, statement))

    def _message(self, site: _Site, path: StepPath, why: str, statement: cst.CSTNode) -> str:
        if type(site.node) is cst.Call:
            code = node_code(site.node.func) + "(...)"
        else:
            code = loop_header(site.node)
        target = _assigned(statement) if type(site.node) is cst.Call else None
        result = f"its result `{target}` does not feed the loss" if target else "what it makes does not feed the loss"
        counter = self.steps.counter(path)
        gate = f"`if {counter} % {INTERVAL} == 0:`" if counter else "an interval (`if step % 100 == 0:`)"
        when = "every call of" if isinstance(path.scope, FunctionFrame) else "every iteration of"
        where = self.steps.describe(path.scope)
        return (f"`{code}` {why} on {when} {where}, and {result}; run it behind {gate} or at evaluation")


def _assigned(statement: cst.CSTNode) -> str | None:
    if type(statement) is cst.SimpleStatementLine and type(statement.body[0]) is cst.Assign:
        text = node_code(statement.body[0].targets[0].target)
        return text if len(text) <= 40 else None
    return None


def _contains(outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
    if outer is inner:
        return True
    return any(_contains(child, inner) for child in outer.children)
