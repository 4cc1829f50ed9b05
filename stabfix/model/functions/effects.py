"""The effects half of the function summaries: what each function of the file does to `self.<attr>` and
its parameters (`EffectFacts.effects`: mode switches, `zero_grad`, `step`, `backward`, `unscale`,
`no_grad`, `store`, `requires_grad`, `detach`, `collective`), its callees' effects included and spelled
as it spells them, built on demand with its own fixpoint (`fixpoint.py`). Reads `modes`, `events` and
the body's syntax (`body_effects.py`); never the returns half. Asked through `summaries.py`
(`Summaries.effects_at`, `with_calls`, `detached_at`, `FunctionSummary.effects`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import libcst as cst

from stabfix.model.calls.collectives import collective_api
from stabfix.model.calls.events import (Backward, ClearGrad, Clip, Event, Events, LocalCall, OptimizerBuilt, Step,
                                         Unscale, clip_measures_only)
from stabfix.model.source.imports import ImportTracker
from stabfix.model.flow.callers import argument
from stabfix.model.functions.body_effects import BodyEffects, body_effects
from stabfix.model.functions.fixpoint import MAX_DEPTH, Fixpoint, Frame
from stabfix.model.functions.instance_calls import built_holding_none
from stabfix.model.functions.summary_facts import LEAF_SETTER, CallSummaries, Effect, EffectFacts, FunctionSummary
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.names import Names
from stabfix.model.training.modes import ModeSwitches, owns


class EffectSummaries:
    def __init__(self, summaries: CallSummaries, names: Names, modes: ModeSwitches, events: Events) -> None:
        self.summaries = summaries
        self.names = names
        self.modes = modes
        self.events = events
        self.fixpoint: Fixpoint[EffectFacts] = Fixpoint(self._build, EffectFacts())
        self._grad_off_scopes: Optional[set[int]] = None
        self._bodies: dict[cst.FunctionDef, BodyEffects] = {}  # a recursive function is built more than once
        # per call: the callee's effects as they were mapped onto it, kept with the callee's facts they came
        # from (a call is asked about by many rules and by every summary above it; while a recursive
        # function is being built its facts change, and the call is then mapped again)
        self._at: dict[int, tuple[FunctionSummary, EffectFacts, tuple[Effect, ...], cst.Call]] = {}  # by id(call)

    def of(self, function: cst.FunctionDef) -> EffectFacts:
        return self.fixpoint.of(function)

    # -- queries -----------------------------------------------------------------------------------
    def effects_at(self, call: cst.Call) -> list[Effect]:
        """The effects of the function a call runs, spelled as the caller spells them (`evaluate(net)`
        switching its parameter `model` to eval switches `net`)."""
        summary = self.summaries.running(call)
        if summary is None:
            return []
        facts = summary.effect_facts()
        kept = self._at.get(id(call))
        if kept is not None and kept[0] is summary and kept[1] is facts and kept[3] is call:
            return list(kept[2])
        mapped = tuple(replace(effect, target=self._spelled_at(call, summary, effect.target), depth=effect.depth + 1,
                               via=(summary.name, *effect.via))
                       for effect in facts.effects if effect.depth + 1 <= MAX_DEPTH and not self._on_none(call, summary, effect.target))
        self._at[id(call)] = (summary, facts, mapped, call)
        return list(mapped)

    def with_calls(self, events: list[Event]) -> list[Event]:
        """`events` (of one function, in order) with each call of a summarised function followed by
        events standing for the backward passes, `zero_grad` clears and unscales it runs, at the call's
        site and with the call as their node (the receiver as the caller spells it), so that a query
        over one function's events sees what moved into a helper (of this file or another)."""
        found: list[Event] = []
        for event in events:
            found.append(event)
            if not isinstance(event, LocalCall) or type(event.node) is not cst.Call:
                continue
            for effect in self.effects_at(event.node):
                if effect.kind == "backward":
                    found.append(Backward(event.node, event.site, None))
                elif effect.kind in ("zero_grad", "unscale") and effect.target is not None:
                    spelled = _expression(event.node, effect.target)
                    found.append(ClearGrad(event.node, event.site, spelled, "zero_grad") if effect.kind == "zero_grad"
                                 else Unscale(event.node, event.site, spelled, None))
        return found

    def detached_at(self, call: cst.Call) -> list[str]:
        """What the function a call runs detaches in place, spelled as the caller spells it
        (`repackage(state)` running `state.detach_()` detaches `state`; `h[*]`: some element of `h`)."""
        return [effect.target for effect in self.effects_at(call) if effect.kind == "detach" and effect.target]

    # -- building one function's effects -----------------------------------------------------------
    def _build(self, function: cst.FunctionDef, frame: Frame) -> EffectFacts:
        return EffectFacts(self._effects(function))

    def _effects(self, function: cst.FunctionDef) -> tuple[Effect, ...]:
        own: list[tuple[int, Effect]] = []
        for switch in self.modes.in_function(function):
            own.append((switch.order, Effect("eval" if switch.to_eval else "train", switch.receiver)))
        for event in self.events.in_function(function):
            if event.site.in_lambda:
                continue
            order = event.site.names_order
            if isinstance(event, Backward):
                own.append((order, Effect("backward", _differentiated(event), detail=_backward_form(event, self.events.imports))))
            elif isinstance(event, Step):
                # `strategy.optimizer_step(opt)`: handed to another object's method, which may step something else
                handed = "handed" if _hands_on(event, self.events) else None
                own.append((order, Effect("step", dotted_name(event.candidates[0]) if event.candidates else None, detail=handed)))
                # `scaler.step(opt)`: the optimizer it steps, as a second effect (`call_events` joins the two)
                own.extend((order, Effect("step", dotted_name(c), detail="stepped")) for c in event.candidates[1:2])
            elif isinstance(event, Clip) and not clip_measures_only(event.node):
                torch_clip = (self.events.imports.qualify(event.node.func) or "").startswith("torch.nn.utils.")  # type: ignore[attr-defined]
                own.append((order, Effect("clip", dotted_name(event.parameters) if event.parameters is not None else None,
                                          detail="torch" if torch_clip else None)))
            elif isinstance(event, OptimizerBuilt):
                own.append((order, Effect("optimizer", None, detail=event.class_name)))
            elif isinstance(event, ClearGrad):
                own.append((order, Effect("zero_grad", dotted_name(event.receiver))))
            elif isinstance(event, Unscale):
                own.append((order, Effect("unscale", dotted_name(event.scaler))))
            elif isinstance(event, LocalCall) and (self.summaries.summarised(event.node)  # type: ignore[arg-type]
                                                   or self.summaries.called_instance(event.node)):  # type: ignore[arg-type]
                own.extend((order, effect) for effect in self.effects_at(event.node))  # type: ignore[arg-type]
        for call in self.events.instance_calls_in(function):  # `Evaluator().run(model)`: a method of the file's class
            if not call.site.in_lambda and self.summaries.summarised(call.node):  # type: ignore[arg-type]
                own.extend((call.site.names_order, effect) for effect in self.effects_at(call.node))  # type: ignore[arg-type]
        if self._enters_no_grad(function):
            own.append((0, Effect("no_grad", None)))
        body = self._body(function)
        own.extend((0, Effect("store", target)) for target in body.stores)
        # a tensor the caller hands in, made to require grad (a method's receiver is a module, not one)
        receiver, positional = self.summaries.callers.signature(function)
        own.extend((0, Effect("requires_grad", target, detail=LEAF_SETTER if target in body.setters else None))
                   for target in body.marked if target in positional)
        # a tensor it rebinds or reads the gradient of (also one a callee marks) is not left marked for the caller
        own = [(order, effect) for order, effect in own
               if effect.kind != "requires_grad" or (effect.target or "").partition(".")[0] not in body.kept]
        own.extend((0, Effect("detach", target)) for target in body.detaches)
        own.extend((0, Effect("collective", None, detail=api)) for api in self._collectives(body))
        own.sort(key=lambda item: item[0])  # in the order the body runs them (`call_events` reads the order)
        settled = [_restored(effect, order, own) for order, effect in own]
        return _deduplicated(settled, {param.name.value for param in function.params.params})

    def _body(self, function: cst.FunctionDef) -> BodyEffects:
        body = self._bodies.get(function)
        if body is None:
            body = self._bodies[function] = body_effects(function)
        return body

    def _collectives(self, body: BodyEffects) -> list[str]:
        """The collectives its own body runs (`calls/collectives.py`), nested definitions left out."""
        return sorted({api for call in body.calls if (api := collective_api(call, self.names)) is not None})

    def _spelled_at(self, call: cst.Call, summary: FunctionSummary, target: Optional[str]) -> Optional[str]:
        """The caller's spelling of what the callee calls `target` (a parameter, or `self.<attr>`)."""
        if target is None:
            return None
        root, dot, rest = _root_of(target)
        if summary.receiver is not None and root == summary.receiver:
            held = self.summaries.function_of_call(call) is None  # an object called (`net(x)`): the receiver is `net`
            owner = dotted_name(call.func if held else call.func.value) if held or type(call.func) is cst.Attribute else None
            return owner + dot + rest if owner else None
        if root not in summary.parameters:
            return None
        passed = argument(call, summary.parameters, root)
        spelled = dotted_name(passed) if passed is not None else None
        return spelled + dot + rest if spelled else None

    def _on_none(self, call: cst.Call, summary: FunctionSummary, target: Optional[str]) -> bool:
        """The effect is on an attribute of an argument the call builds holding `None` there
        (`run_epoch(..., LossCompute(gen, crit, None))` and `loss_compute.opt.step()`): it cannot run."""
        root, dot, rest = _root_of(target) if target is not None else ("", "", "")
        if dot != "." or root not in summary.parameters:
            return False
        passed = argument(call, summary.parameters, root)
        return passed is not None and built_holding_none(self.names, passed, rest.partition(".")[0])

    def _enters_no_grad(self, function: cst.FunctionDef) -> bool:
        if function in self.names.grad_off_functions:
            return True
        if self._grad_off_scopes is None:
            self._grad_off_scopes = {id(use.scope.node) for use in self.names.uses.values() if use.grad_off}
        return id(function) in self._grad_off_scopes


def _restored(effect: Effect, order: int, effects: list[tuple[int, Effect]]) -> Effect:
    if effect.kind != "eval" or effect.restored or effect.target is None:
        return effect
    if any(later.kind == "train" and after > order and (later.target is None or owns(later.target, effect.target))
           for after, later in effects):
        return replace(effect, restored=True)
    return effect


def _deduplicated(effects: list[Effect], roots: set[str]) -> tuple[Effect, ...]:
    """One effect per kind, target and restoration (the shallowest); a target the callers cannot name
    (a local of this function) becomes None."""
    kept: dict[tuple[str, Optional[str], bool, Optional[str]], Effect] = {}
    for effect in effects:
        if effect.target is not None and _root_of(effect.target)[0] not in roots:
            effect = replace(effect, target=None)
        key = (effect.kind, effect.target, effect.restored, effect.detail)
        if key not in kept or effect.depth < kept[key].depth:
            kept[key] = effect
    return tuple(kept.values())  # the first place each runs, in the body's order


def _expression(call: cst.Call, spelled: str) -> cst.BaseExpression:
    """The caller's expression for a spelling: the argument itself when one reads so, else parsed."""
    for arg in call.args:
        if dotted_name(arg.value) == spelled:
            return arg.value
    return cst.parse_expression(spelled)


def _root_of(target: str) -> tuple[str, str, str]:
    """`self.h` -> (`self`, `.`, `h`); `h[0]` -> (`h`, `[`, `0]`); `h` -> (`h`, ``, ``)."""
    cut = min((i for i in (target.find("."), target.find("[")) if i >= 0), default=-1)
    return (target, "", "") if cut < 0 else (target[:cut], target[cut], target[cut + 1:])


def _hands_on(step: Step, events: Events) -> bool:
    """`strategy.optimizer_step(opt)`: a step method of another object that is handed the optimizer (not
    `opt.step()`, `scaler.step(opt)`, torch_xla's `optimizer_step`): what it steps is that object's business."""
    func = step.node.func
    return (type(func) is cst.Attribute and func.attr.value != "step" and bool(step.candidates)
            and events.stepped_by(step, step.candidates[-1]) is not None)


def _differentiated(backward: Backward) -> Optional[str]:
    """What a backward differentiates, when a caller may name it (`loss` of `loss.backward()`)."""
    return dotted_name(backward.loss) if backward.loss is not None else None


def _backward_form(backward: Backward, imports: ImportTracker) -> Optional[str]:
    """"tensor" for `t.backward()` (a library's `engine.backward(loss)` may scale it), "grad" for
    `torch.autograd.grad(...)` (returns the gradients, adds nothing to `.grad`), else None."""
    node = backward.node
    if type(node) is not cst.Call:
        return None
    if imports.qualify(node.func) == "torch.autograd.grad":
        return "grad"
    func = node.func
    if type(func) is cst.Attribute and func.attr.value == "backward" and not node.args:
        return "tensor"
    return None
