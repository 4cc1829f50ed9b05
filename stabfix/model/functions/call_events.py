"""Training events through calls: the `events` part's queries, with what each called function does
spliced in at the call.

The model's `events_through_calls` part. On real code a step, a clear, a clip or an optimizer's
construction often lives in a helper function, a method or another module (`step(optimizer)` in a
loop that runs `loss.backward()` itself). The `events` part records one function's own statements;
this part answers the same questions (`in_function`, `of_kind`, `iteration`, `events`) over a
sequence where every call of a summarised function (of this file, another scanned file, a method of
`self` or of an instance: `summaries.effects_at`) is followed by events standing for what its summary
says it runs, in the order it runs them:

- `backward` -> `Backward`, its `loss` what the caller hands in to be differentiated (None when the
  callee differentiates something of its own); not `torch.autograd.grad` (it fills no `.grad`);
- `zero_grad` of something the caller can name -> `ClearGrad(how="zero_grad")`;
- `unscale` of a scaler the caller can name -> `Unscale`;
- `step` of something the caller can name -> `Step`, with the optimizer a scaler steps
  (`scaler.step(opt)`) as its second candidate, as `events` records it (not a step handed to another
  object's method, `strategy.optimizer_step(opt)`: what that steps is unknown);
- `clip` -> `Clip` (what it clips, when the caller can name it);
- `optimizer` -> `OptimizerBuilt` (the class it builds).

A spliced event has the call as its node and the call's `Site` (so it sits in the caller's loops,
branches and bindings), its `order` a fraction past the call's (before the caller's next event, in
the callee's order among themselves), and `via(event)` names the functions it goes through (empty for a function's
own event): a rule reports it at the call, the line the user can act on, and offers no fix there (a
rewrite of the call would move everything else the function does). An effect on something the caller
cannot name (a local of the callee) is not spliced: what it acts on is unknown, and unknown is never
proof. The summaries' depth limit holds (`summaries.MAX_DEPTH`). Every other query of `events`
(`stepped_by`, `gates`, `innermost_loop`, `is_scaler`...) is answered by `events` itself;
`one_call(*events)` tells events that all stand for one call (the callee's own body shows them together:
a rule reports that in the callee, once); `stepped_by`
takes a spliced step as the optimizer's own (the summary recorded a step of what the call hands in).

A callee is looked up (its summary's effects, maybe another file's model) only when a query can see what
it splices: `in_function` and `iteration` look up the calls of that function or loop, a query for kinds no
callee splices (`call`, `update`) none, and each call once; the answers are the whole file's.
"""

from __future__ import annotations

from dataclasses import replace
from operator import attrgetter
from typing import Any, Iterable, Optional

import libcst as cst

from stabfix.model.calls.events import Backward, ClearGrad, Clip, Event, Events, LocalCall, OptimizerBuilt, Step, Unscale
from stabfix.model.functions.summaries import Effect, Summaries
from stabfix.model.source.imports import dotted_name


class EventsThroughCalls:
    """The `events_through_calls` part: ask it what you would ask `events`, and get the callees' events too."""

    def __init__(self, events: Events, summaries: Summaries) -> None:
        self._events = events
        self.summaries = summaries
        self._spliced: Optional[list[Event]] = None
        self._effects: dict[int, Effect] = {}  # id(spliced event) -> the effect it stands for
        # the file's own events and instance calls in order, placed by function and loop before any callee
        # is looked up: a query splices only the calls it can see (another file's callee costs that file's model)
        self._sequence: Optional[list[Event]] = None
        self._instance: set[int] = set()
        self._by_function: dict[int, list[Event]] = {}  # by id(function), id(None) for the module's own
        self._by_loop: dict[int, list[Event]] = {}
        self._run: dict[int, list[Event]] = {}  # id(call) -> the events spliced at it (each call looked up once)
        # (id(a run of `_sequence`), kinds) -> the answer: rules ask one function or loop for the same kinds
        # again and again (each backward, each step), and the file's answers are fixed once its calls are spliced
        self._answers: dict[tuple[int, tuple[str, ...]], list[Event]] = {}

    def __getattr__(self, name: str) -> Any:
        # every query this part does not splice is the `events` part's own
        if name.startswith("__") or name == "_events":
            raise AttributeError(name)  # (copy and pickle ask before `__init__` ran)
        return getattr(self._events, name)

    # -- queries ---------------------------------------------------------------------------------------
    @property
    def spliced_into(self) -> Events:
        """The `events` part whose queries this view answers with the callees' events spliced in."""
        return self._events

    @property
    def events(self) -> list[Event]:
        """Every event of the file in order, the callees' spliced in after their calls."""
        return list(self._all())

    def in_function(self, function: Optional[cst.FunctionDef], *kinds: str) -> list[Event]:
        self._place()
        placed = self._by_function.get(id(function))
        return self._through(placed, kinds) if placed else []

    def of_kind(self, *kinds: str) -> list[Event]:
        if kinds and not _SPLICED.intersection(kinds):
            return self._through(self._place(), kinds)
        return _of(self._all(), kinds)

    def iteration(self, loop: cst.CSTNode, *kinds: str) -> list[Event]:
        self._place()
        placed = self._by_loop.get(id(loop))
        return self._through(placed, kinds) if placed else []

    def via(self, event: Event) -> tuple[str, ...]:
        """The functions a spliced event goes through, outermost first; empty for an event of the code itself."""
        effect = self._effects.get(id(event))
        return effect.via if effect is not None else ()

    def effect_of(self, event: Event) -> Optional[Effect]:
        """The summary's effect a spliced event stands for (its `detail`: a clip that is torch's own), None
        for an event of the code itself."""
        return self._effects.get(id(event))

    def one_call(self, *events: Event) -> bool:
        """Whether these events all stand for what one call runs: then the callee's own body shows them
        together, and a rule that judges each function on its own reports them there, not at the call."""
        return all(id(event) in self._effects for event in events) and len({id(event.node) for event in events}) == 1

    def stepped_by(self, step: Step, optimizer: cst.BaseExpression) -> Optional[list[cst.FunctionDef]]:
        if self.via(step):
            return None  # the callee's own `step()` of what the call hands it
        return self._events.stepped_by(step, optimizer)

    # -- building --------------------------------------------------------------------------------------
    def _all(self) -> list[Event]:
        if self._spliced is None:
            self._spliced = self._spliced_run(self._place(), ())
        return self._spliced

    def _place(self) -> list[Event]:
        """The file's events and instance calls in order (no callee looked up), indexed by function and loop."""
        if self._sequence is None:
            # `obj.method()` on an instance is no event of `events` (a name is no proof of what it runs);
            # only what its summary shows is spliced in
            self._sequence = sorted([*self._events.events, *self._events.instance_calls], key=_site_order)
            self._instance = {id(call) for call in self._events.instance_calls}
            by_function, by_loop = self._by_function, self._by_loop
            # (ids, not nodes: a node's hash is a Python call; the events of one loop body share its tuple of loops)
            loops_seen: tuple[cst.CSTNode, ...] = ()
            loop_ids: Iterable[int] = ()
            for event in self._sequence:
                # a spliced event has its call's site: it sits in the call's function and loops
                site = event.site
                functions = site.functions
                function = id(functions[-1]) if functions else id(None)
                placed = by_function.get(function)
                if placed is None:
                    placed = by_function[function] = []
                placed.append(event)
                loops = site.any_loops
                if loops and not site.in_lambda:
                    if loops is not loops_seen:
                        loops_seen, loop_ids = loops, dict.fromkeys(map(id, loops))
                    for loop in loop_ids:
                        by_loop.setdefault(loop, []).append(event)
        return self._sequence

    def _through(self, placed: list[Event], kinds: tuple[str, ...]) -> list[Event]:
        """`placed` (a run of `_sequence` kept by `_place`: its id names it) with the callees' events spliced in
        after their calls, of `kinds` (all if none); a call is looked up only when a spliced event could be of one
        of them."""
        key = (id(placed), kinds)
        answer = self._answers.get(key)
        if answer is None:
            answer = self._answers[key] = self._spliced_run(placed, kinds)
        return list(answer)

    def _spliced_run(self, placed: list[Event], kinds: tuple[str, ...]) -> list[Event]:
        splice = not kinds or bool(_SPLICED.intersection(kinds))
        if splice and kinds:
            # every call of the run is looked up whatever kinds are asked: one splicing of the run, kept, and
            # each such question (a function's backward passes, its steps, its clears...) a filter of it
            whole = self._answers.get((id(placed), ()))
            if whole is None:
                whole = self._answers[(id(placed), ())] = self._spliced_run(placed, ())
            return _of(whole, kinds)
        found: list[Event] = []
        instance, runs = self._instance, self._run
        for event in placed:
            key = id(event)
            if key not in instance:
                found.append(event)
            if splice and isinstance(event, LocalCall):
                run = runs.get(key)
                if run is None:
                    run = runs[key] = self._run_by(event)
                if run:
                    found.extend(run)
        return _of(found, kinds)

    def _run_by(self, call: LocalCall) -> list[Event]:
        """The events standing for what the called function runs, in its order, at the call."""
        if type(call.node) is not cst.Call:
            return []
        node = call.node
        effects = self.summaries.effects_at(node)
        found: list[Event] = []
        for effect in effects:
            # between the call and the next event of the caller, in the callee's order
            site = replace(call.site, order=call.site.order + (len(found) + 1) / (len(effects) + 1))
            event = self._event_of(effect, node, site, found)
            if event is not None:
                found.append(event)
                self._effects[id(event)] = effect
        return found

    def _event_of(self, effect: Effect, node: cst.Call, site, so_far: list[Event]) -> Optional[Event]:
        if effect.kind == "backward" and effect.detail != "grad":  # `autograd.grad` adds nothing to `.grad`
            return Backward(node, site, _expression(node, effect.target) if effect.target is not None else None)
        if effect.kind == "optimizer" and effect.detail:
            return OptimizerBuilt(node, site, effect.detail)
        if effect.kind == "clip":
            return Clip(node, site, _expression(node, effect.target) if effect.target is not None else None)
        spelled = _expression(node, effect.target) if effect.target is not None else None
        if spelled is None:
            return None  # acts on something of the callee's own: unknown to the caller
        if effect.kind == "zero_grad":
            return ClearGrad(node, site, spelled, "zero_grad")
        if effect.kind == "unscale":
            return Unscale(node, site, spelled, None)
        if effect.kind == "step" and effect.detail == "stepped":
            last = so_far[-1] if so_far else None
            if isinstance(last, Step) and len(last.candidates) == 1:
                last.candidates = (*last.candidates, spelled)  # `scaler.step(opt)`: the optimizer it steps
            return None
        if effect.kind == "step" and effect.detail != "handed":  # a step handed to a wrapper may step anything
            return Step(node, site, (spelled,))
        return None


_site_order = attrgetter("site.order")

# the kinds of event a callee's summary can splice in (`_event_of`)
_SPLICED = frozenset((Backward.kind, ClearGrad.kind, Clip.kind, OptimizerBuilt.kind, Step.kind, Unscale.kind))


def _of(events: list[Event], kinds: tuple[str, ...]) -> list[Event]:
    return [event for event in events if event.kind in kinds] if kinds else list(events)


def _expression(call: cst.Call, spelled: str) -> Optional[cst.BaseExpression]:
    """The caller's expression for a spelling: the argument itself when one reads so, else parsed (None
    for a spelling that is no expression: `h[*]`, some element of `h`)."""
    for arg in call.args:
        if dotted_name(arg.value) == spelled:
            return arg.value
    try:
        return cst.parse_expression(spelled)
    except cst.ParserSyntaxError:
        return None
