"""Function summaries: what each function or method of the file returns and what it does, node-free.

The model's `summaries` part, queried after the traversal. A summary is built from the other parts
(`values`, `history`, `activations` for what is returned; `modes` and `events` for what is done) and
holds no CST node, so it can be pickled, cached and handed to another file's model:

- `FunctionSummary.returns`: one `ValueFacts` per returned element (`return x, y` gives two; a single
  value gives one; no `return` with a value gives none). Each field is evidence, and `None` is "not
  shown", never proof: `requires_grad`, `history` (still carries an autograd graph), `detached`,
  `device` ("accelerator"/"host"), `activation` ("softmax"/"log_softmax"/"sigmoid"/"logits"), `role`
  ("model_output"/"loss"/"batch"). A leaf made to require grad (`torch.tensor(y, requires_grad=True)`)
  requires grad and carries no history; a forward pass's output does both.
- `FunctionSummary.effects`: what the function does to `self.<attr>` and its parameters, spelled as
  the function spells them (`self.model`, `model` for a parameter): `eval`/`train` mode switches (an
  eval switch is `restored` when a later train switch of the same module, or a module holding it, runs
  in the same function), `zero_grad`, `step`, `backward`, `unscale` (a gradient scaler's `unscale_`),
  `no_grad` (enters a no_grad/inference_mode region or is decorated with one), `store` (appends to or
  assigns into a container), `requires_grad` (makes a parameter require grad in place:
  `t.requires_grad_()`, `t.requires_grad = True`), `detach` (cuts it from the graph in place:
  `h.detach_()`, `h[0].detach_()` (`h[0]`), `h[i].detach_()` with a variable index (`h[*]`),
  `self.h = self.h.detach()`), `collective` (runs a collective every process must join, named in
  `detail`: `dist.barrier`, `accelerator.gather`), `clip` (clips gradients, target: what it clips, detail
  "torch" for torch's own `clip_grad_*`, not a wrapper's method; not a clip to an infinite norm), `optimizer` (builds an optimizer, its class in `detail`); a step through a
  scaler (`scaler.step(opt)`) adds a second `step` effect on the optimizer, `detail="stepped"`; a `backward` names what it differentiates when the
  caller can name it, its `detail` "tensor" for `t.backward()`, "grad" for `torch.autograd.grad`. Effects
  are listed in the order the body first runs them (`functions/call_events.py` splices them in). Effects of the
  same-file functions it calls are included, mapped onto its own spelling (the call's arguments), with
  `depth` (how many calls down) and `via` (the functions they go through); an effect on something of
  the callee's own (a local variable) keeps `target=None`.

A summary has two halves, each built on demand and only when read: what it returns
(`returns.py`) and what it does (`effects.py`); a rule that reads only effects never pays for returns,
nor the other way round. `grad_unread` is a third part, built apart from the returns it reads
(`grad_unread.py`): a rule that reads returns never pays for it. Each part is built bottom-up over
the call graph (`fixpoint.py`): a function's summary uses its callees'
summaries. Recursion reaches a fixpoint: a call back into a function being summarised sees its summary
so far (nothing, at first), and the function is summarised again until its summary stops changing (at
most `MAX_ROUNDS` times). Depth limit: facts followed more than `MAX_DEPTH` calls down are dropped
(an effect) or unknown (a returned value).

`of(def)` for a def of this file, `of_call(call)` for a call (a same-file function or method, also
on an instance the file builds: `Steps().run(x)`; a class of this file: its `ClassSummary`); any other call asks the hook `foreign(qualified_name)`, which
returns None (unknown) until a project index supplies another file's summaries. What the callers of a
function do (`always_called_without_grad`, `passed_for`) is `callers.py`'s, reachable from here.
Set `foreign` before the first query: summaries are memoised, a summary built without it stays so.
Other files' summaries flow through everything here: a foreign call's effects map onto the caller's
arguments, its returned elements reach names unpacked from it, its activation reaches a loss.
"""

from __future__ import annotations

from typing import Callable, Optional, Union

import libcst as cst

from stabfix.model.calls.activations import Activations
from stabfix.model.calls.events import Event, Events
from stabfix.model.flow.callers import Callers
from stabfix.model.flow.gradient_use import GradientFacts
from stabfix.model.flow.history import History
from stabfix.model.flow.values import Values
from stabfix.model.functions.effects import EffectSummaries
from stabfix.model.functions.fixpoint import MAX_DEPTH, MAX_ROUNDS
from stabfix.model.functions.grad_unread import UnreadSummaries
from stabfix.model.functions.instance_calls import called_instance_class, own_called_method
from stabfix.model.functions.returns import ReturnSummaries, parameter_receiving
from stabfix.model.functions.summary_facts import (ClassSummary, Effect, EffectFacts, FunctionSummary, ReturnFacts,
                                                   Summary, UnreadFacts, ValueFacts)
from stabfix.model.source.imports import ImportTracker, dotted_name
from stabfix.model.source.names import Names
from stabfix.model.training.modes import ModeSwitches

__all__ = ["MAX_DEPTH", "MAX_ROUNDS", "ClassSummary", "Effect", "EffectFacts", "FunctionSummary", "ReturnFacts",
           "Summaries", "Summary", "UnreadFacts", "ValueFacts", "parameter_receiving"]


class Summaries:
    """The model part `summaries`: ask `of(def)`, `of_call(call)` after the traversal."""

    def __init__(self, imports: ImportTracker, names: Names, values: Values, history: History,
                 activations: Activations, modes: ModeSwitches, events: Events,
                 gradients: Optional[GradientFacts] = None) -> None:
        self.imports = imports
        self.gradients = gradients
        self.names = names
        self.values = values
        self.history = history
        self.activations = activations
        self.modes = modes
        self.events = events
        self.foreign: Callable[[str], Optional[Summary]] = lambda qualified: None
        # `foreign` for a function or method only, where the caller can spare the summary of a class (and
        # the build of its file) that a question about a call's returns or effects never reads; None: `foreign`
        self.foreign_function: Optional[Callable[[str], Optional[Summary]]] = None
        self._returns = ReturnSummaries(self, imports, names, values, history, activations)
        self._unread = UnreadSummaries(self, imports, gradients, self._returns.of)
        self._effects = EffectSummaries(self, names, modes, events)
        self._summaries: dict[cst.FunctionDef, FunctionSummary] = {}
        self._foreign_answers: dict[tuple[int, str], tuple[Callable[[str], Optional[Summary]], Optional[Summary]]] = {}
        # per call (by id: a node's hash is a Python call, and every call of the file is asked about): the
        # function it runs, asked again by every rule and every summary that reads the call (each answer is
        # fixed once the traversal is done; kept with the hook it was asked through, and the call itself)
        self._function_of_call: dict[int, tuple[Callable[[str], Optional[Summary]], Optional[FunctionSummary], cst.Call]] = {}
        self._summarised: dict[int, tuple[Callable[[str], Optional[Summary]], bool, cst.Call]] = {}
        self._called_instance: dict[int, tuple[Callable[[str], Optional[Summary]], Optional[FunctionSummary], cst.Call]] = {}
        # `running`'s answers, kept with both hooks they were asked through
        self._running: dict[int, tuple[Callable, Callable, Optional[FunctionSummary], cst.Call]] = {}
        activations.call_activation = self._returns.activation_of_call  # a helper's softmax reaches its callers' losses
        self.callers = Callers(names, events)
        # what the callers pass and how they call: asked through `summaries` by rules that read summaries
        self.passed_for = self.callers.passed_for
        self.always_called_without_grad = self.callers.always_called_without_grad
        activations.parameter_values = self.passed_for  # a model handed to a training routine
        activations.returned_values = self._returned_values  # a model built by a factory function

    # -- queries -----------------------------------------------------------------------------------
    def of(self, function: cst.FunctionDef) -> FunctionSummary:
        """The function's summary; each half is built (and memoised) when first read."""
        summary = self._summaries.get(function)
        if summary is None:
            receiver, positional = self.callers.signature(function)
            cls = self.callers.class_of(function)
            name = f"{cls.name.value}.{function.name.value}" if cls is not None else function.name.value
            summary = FunctionSummary(name, positional, receiver,
                                      return_facts=lambda: self._returns.of(function),
                                      effect_facts=lambda: self._effects.of(function),
                                      unread_facts=lambda: self._unread.of(function))
            self._summaries[function] = summary
        return summary

    def built(self, function: cst.FunctionDef, half: Optional[str] = None) -> bool:
        """The half (`"returns"`, `"effects"`, `"grad_unread"`; None: any) of the function's summary has been built."""
        halves = {"returns": self._returns.fixpoint, "effects": self._effects.fixpoint, "grad_unread": self._unread.fixpoint}
        return any(function in halves[name].built for name in ((half,) if half else halves))

    def of_call(self, call: cst.Call) -> Optional[Summary]:
        """The summary of what a call runs: a function or method of this file, a class of this file
        (constructing it), else what the `foreign` hook knows of its qualified name."""
        target = self._same_file_target(call)
        if type(target) is cst.ClassDef:  # `Net()`: constructing a class of this file
            return self.of_class(target)
        if target is not None:
            return self.of(target)
        return self._foreign_of(call, self.foreign)

    def function_of_call(self, call: cst.Call) -> Optional[FunctionSummary]:
        """`of_call` when the call runs a function or method (what every question about a call's returns
        or effects reads); None for a class constructed, whose methods are then not summarised."""
        return _kept_for(self._function_of_call, call, self.foreign_function or self.foreign, self._function_of_call_uncached)

    def _function_of_call_uncached(self, call: cst.Call, foreign: Callable[[str], Optional[Summary]]) -> Optional[FunctionSummary]:
        target = self._same_file_target(call)
        if target is not None:
            return self.of(target) if type(target) is cst.FunctionDef else None
        summary = self._foreign_of(call, foreign)
        return summary if isinstance(summary, FunctionSummary) else None

    def called_instance(self, call: cst.Call) -> Optional[FunctionSummary]:
        """The method a call of an object runs (`net(x)`, `self.net(x)`, `loss_compute(out, y)` on a parameter
        every caller hands an instance of one class): that class's `__call__`, else its `forward`, of this file
        or of another scanned file (`instance_calls.py`); None when the class is not shown or not one."""
        return _kept_for(self._called_instance, call, self.foreign, self._called_instance_uncached)

    def running(self, call: cst.Call) -> Optional[FunctionSummary]:
        """`function_of_call`, else `called_instance`: the function whose effects a call runs. Asked of every
        call of the file several times over (its spliced events, its clears, its detaches), and of most
        calls with no answer: one lookup, not one per question."""
        function_hook, instance_hook = self.foreign_function or self.foreign, self.foreign
        kept = self._running.get(id(call))
        if kept is not None and kept[0] is function_hook and kept[1] is instance_hook and kept[3] is call:
            return kept[2]
        summary = self.function_of_call(call) or self.called_instance(call)
        self._running[id(call)] = (function_hook, instance_hook, summary, call)
        return summary

    def _called_instance_uncached(self, call: cst.Call, foreign: Callable[[str], Optional[Summary]]) -> Optional[FunctionSummary]:
        if type(call.func) is cst.Name and self.names.definition_of(call) is not None:
            return None  # a function of this file
        held = called_instance_class(self.names, self.passed_for, call)
        if type(held) is cst.ClassDef:  # (most calls hold none: a failing `isinstance` is `ABCMeta.__instancecheck__`)
            method = own_called_method(held)
            return self.of(method) if method is not None else None
        summary = self._foreign_named(held, foreign) if held else None
        if not isinstance(summary, ClassSummary):
            return None
        methods = dict(summary.methods)
        return next((methods[name] for name in ("__call__", "forward") if name in methods), None)

    def of_class(self, cls: cst.ClassDef) -> ClassSummary:
        methods = tuple((item.name.value, self.of(item)) for item in cls.body.body if type(item) is cst.FunctionDef)
        bases = tuple(self.names.qualify(base.value) or dotted_name(base.value) or "" for base in cls.bases)
        return ClassSummary(cls.name.value, bases, methods)

    def returned_facts(self, call: cst.Call) -> Optional[tuple[ValueFacts, ...]]:
        """What a call returns, element by element, when its summary is known and within the depth limit."""
        return self._returns.returned_facts(call)

    def facts(self, expr: cst.BaseExpression) -> ValueFacts:
        """What the code shows about one value, following names into the same-file calls that made it
        (`x, y = prepare(batch)`: element 1 of `prepare`'s summary)."""
        return self._returns.facts(expr)

    def returned_to(self, name: cst.Name) -> Optional[ValueFacts]:
        """What a name holds when every binding reaching it is a same-file call's result (or an element of
        it, unpacked); None when some binding is anything else."""
        return self._returns.returned_to(name)

    def grad_unread_at(self, call: cst.Call, arg: cst.Arg) -> bool:
        """`arg` goes to a function (of this file or another scanned file) whose summary shows it never
        reads the receiving parameter's gradient."""
        return self._unread.grad_unread_at(call, arg)

    def effects_at(self, call: cst.Call) -> list[Effect]:
        """The effects of the function a call runs, spelled as the caller spells them (`evaluate(net)`
        switching its parameter `model` to eval switches `net`)."""
        return self._effects.effects_at(call)

    def with_calls(self, events: list[Event]) -> list[Event]:
        """`events` (of one function, in order) with each call of a summarised function followed by
        events standing for the backward passes, `zero_grad` clears and unscales it runs (`effects.py`)."""
        return self._effects.with_calls(events)

    def detached_at(self, call: cst.Call) -> list[str]:
        """What the function a call runs detaches in place, spelled as the caller spells it."""
        return self._effects.detached_at(call)

    # -- what a call runs --------------------------------------------------------------------------
    def _same_file_target(self, call: cst.Call) -> Optional[Union[cst.FunctionDef, cst.ClassDef]]:
        """The def a call runs or the class it constructs, when it is of this file."""
        # (asked of every call of the file: `definition_of` already tries a method on an instance built here,
        # and exact node types spare a failing `isinstance` its `ABCMeta.__instancecheck__`)
        function = self.names.definition_of(call)
        if function is not None:
            return function
        function = self.names.own_function_of(call.func)
        if function is not None:
            return function
        built = self.names.instance_of(call) if type(call.func) is cst.Name else None
        owner = built.module_class or built.node if built is not None and built.kind in ("function", "class") else None
        return owner if type(owner) is cst.ClassDef else None

    def _foreign_of(self, call: cst.Call, foreign: Callable[[str], Optional[Summary]]) -> Optional[Summary]:
        qualified = self.names.qualify(call.func) if _rooted_in_name(call.func) else None
        return self._foreign_named(qualified, foreign) if qualified else None

    def _foreign_named(self, qualified: str, foreign: Callable[[str], Optional[Summary]]) -> Optional[Summary]:
        # asked again at every call of the same function (is it summarised? what does it do?): once per name
        kept = self._foreign_answers.get((id(foreign), qualified))
        if kept is None or kept[0] is not foreign:
            kept = self._foreign_answers[(id(foreign), qualified)] = (foreign, foreign(qualified))
        return kept[1]

    def summarised(self, call: cst.Call) -> bool:
        """A call of a function this part can summarise: of this file, or of another file through `foreign`."""
        foreign = self.foreign_function or self.foreign
        kept = self._summarised.get(id(call))
        if kept is not None and kept[0] is foreign and kept[2] is call:
            return kept[1]
        found = self._summarised_uncached(call, foreign)
        self._summarised[id(call)] = (foreign, found, call)
        return found

    def _summarised_uncached(self, call: cst.Call, foreign: Callable[[str], Optional[Summary]]) -> bool:
        if self._is_same_file_call(call):
            return True
        built = self.names.instance_of(call) if type(call.func) is cst.Name else None
        if built is not None and (built.kind == "class" or built.module_class is not None):
            return False  # a class of this file: constructed, not summarised as a function
        return isinstance(self._foreign_of(call, foreign), FunctionSummary)

    def _is_same_file_call(self, call: cst.Call) -> bool:
        if self.names.definition_of(call) is not None:  # (a method on an instance built here included)
            return True
        return type(call.func) in (cst.Name, cst.Attribute) and self.names.own_function_of(call.func) is not None

    def single_value(self, expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        return self.names.single_value(expr) if type(expr) is cst.Name and expr in self.names.uses else None

    def _returned_values(self, call: cst.Call) -> Optional[list[cst.BaseExpression]]:
        function = self.names.definition_of(call)
        return list(self.names.returns.get(function, [])) or None if function is not None else None


def _rooted_in_name(expr: cst.BaseExpression) -> bool:
    while type(expr) is cst.Attribute:
        expr = expr.value  # type: ignore[attr-defined]
    return type(expr) is cst.Name


def _kept_for(kept: dict, call: cst.Call, foreign: Callable, answer: Callable) -> Optional[FunctionSummary]:
    """`answer(call, foreign)`, kept per call for as long as the same other-file lookup is installed (the model
    installs it once the project is known: an answer without it is not kept past that)."""
    found = kept.get(id(call))
    if found is not None and found[0] is foreign and found[2] is call:
        return found[1]
    summary = answer(call, foreign)
    kept[id(call)] = (foreign, summary, call)
    return summary
