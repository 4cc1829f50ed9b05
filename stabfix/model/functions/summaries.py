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
  `detail`: `dist.barrier`, `accelerator.gather`). Effects of the
  same-file functions it calls are included, mapped onto its own spelling (the call's arguments), with
  `depth` (how many calls down) and `via` (the functions they go through); an effect on something of
  the callee's own (a local variable) keeps `target=None`.

Summaries are built bottom-up over the call graph, on demand: a function's summary uses its callees'
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

from dataclasses import dataclass, fields, replace
from typing import Callable, Optional, Union

import libcst as cst

from stabfix.model.calls import torch_ops
from stabfix.model.calls.activations import Activations
from stabfix.model.calls.collectives import collective_api
from stabfix.model.calls.schedulers import LR_SCHEDULER, is_lr_scheduler
from stabfix.model.calls.events import Backward, ClearGrad, Event, Events, LocalCall, Step, Unscale
from stabfix.model.flow.callers import Callers, argument
from stabfix.model.functions.body_effects import detaches, marked_in_place, stores
from stabfix.model.flow.gradient_use import GradientFacts, holders, is_requires_grad_call, requires_grad_keyword
from stabfix.model.flow.host_tensors import is_host_built
from stabfix.model.flow.history import LOSS, MODEL_OUTPUT, History
from stabfix.model.flow.values import Values
from stabfix.model.source.imports import ImportTracker, dotted_name
from stabfix.model.source.instances import method_of_instance
from stabfix.model.source.names import Names
from stabfix.model.source.traversal import children
from stabfix.model.training.modes import ModeSwitches, owns

MAX_DEPTH = 8  # calls followed below a function before its facts are cut
LEAF_SETTER = "setter"  # `requires_grad` effect's detail: by `t.requires_grad = True` (a leaf only)
MAX_ROUNDS = 6  # re-summaries of a recursive function before its summary is taken as it stands


@dataclass(frozen=True)
class ValueFacts:
    requires_grad: Optional[bool] = None
    history: Optional[bool] = None
    detached: Optional[bool] = None
    device: Optional[str] = None  # "accelerator" | "host"
    activation: Optional[str] = None  # "softmax" | "log_softmax" | "sigmoid" | "logits"
    role: Optional[str] = None  # "model_output" | "loss" | "batch" | "lr_scheduler"
    # the positional parameter this element hands back, through operations that keep requires-grad
    # (`return x.view(n, -1), y.float()`): the caller's argument comes back as this element
    parameter: Optional[str] = None
    # a tensor built in host memory by torch factories and arithmetic, no `device=` (`flow/host_tensors.py`)
    host_built: Optional[bool] = None

    @staticmethod
    def join(facts: list["ValueFacts"]) -> "ValueFacts":
        """What holds whichever of these values it is: a field all of them agree on, else unknown."""
        if not facts:
            return ValueFacts()
        agreed = {}
        for item in fields(ValueFacts):
            seen = {getattr(fact, item.name) for fact in facts}
            agreed[item.name] = seen.pop() if len(seen) == 1 else None
        return ValueFacts(**agreed)

    @property
    def made_to_require_grad(self) -> bool:
        """A leaf made to require grad (`torch.tensor(y, requires_grad=True)`), not a computed value."""
        return self.requires_grad is True and self.history is False


@dataclass(frozen=True)
class Effect:
    kind: str  # eval | train | zero_grad | step | backward | unscale | no_grad | store | requires_grad | detach | collective
    target: Optional[str]  # `self.model`, a parameter's spelling; None when not nameable by the caller
    restored: bool = False  # an eval switch that a later train switch of the same module undoes
    depth: int = 0  # calls below the summarised function (0: in its own body)
    via: tuple[str, ...] = ()  # names of the functions it goes through, outermost first
    detail: Optional[str] = None  # `collective`: the collective it runs (`dist.barrier`); `requires_grad`: LEAF_SETTER


@dataclass(frozen=True)
class FunctionSummary:
    name: str  # `evaluate`, `Runner.evaluate`
    parameters: tuple[str, ...]  # positional parameters, the receiver (`self`) left out
    receiver: Optional[str]  # a method's first parameter (`self`), None for a function
    returns: tuple[ValueFacts, ...] = ()
    effects: tuple[Effect, ...] = ()
    return_depth: int = 0  # the deepest call level its return facts rely on
    # parameters whose gradient it never reads: see `Summaries._grad_unread`
    grad_unread: tuple[str, ...] = ()
    converged: bool = True  # False when recursion did not settle within MAX_ROUNDS

    def effects_of(self, *kinds: str) -> list[Effect]:
        return [effect for effect in self.effects if effect.kind in kinds]

    @property
    def returned(self) -> Optional[ValueFacts]:
        """What it returns when it returns one value (not a tuple)."""
        return self.returns[0] if len(self.returns) == 1 else None


@dataclass(frozen=True)
class ClassSummary:
    name: str
    bases: tuple[str, ...]  # as spelled or qualified through the imports (`torch.nn.Module`)
    methods: tuple[tuple[str, FunctionSummary], ...] = ()

    def method(self, name: str) -> Optional[FunctionSummary]:
        return next((summary for found, summary in self.methods if found == name), None)


Summary = Union[FunctionSummary, ClassSummary]


@dataclass
class _Frame:
    function: cst.FunctionDef
    provisional: bool = False  # read a summary still being built (recursion): not final yet
    depth: int = 0  # deepest call level its return facts used


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
        self._final: dict[cst.FunctionDef, FunctionSummary] = {}
        self._provisional: dict[cst.FunctionDef, FunctionSummary] = {}
        self._approximate: dict[cst.FunctionDef, FunctionSummary] = {}
        self._stack: list[_Frame] = []
        self._recursive: set[cst.FunctionDef] = set()
        self._grad_off_scopes: Optional[set[int]] = None
        activations.call_activation = self._activation_of_call  # a helper's softmax reaches its callers' losses
        self.callers = Callers(names, events)
        # what the callers pass and how they call: asked through `summaries` by rules that read summaries
        self.passed_for = self.callers.passed_for
        self.always_called_without_grad = self.callers.always_called_without_grad
        activations.parameter_values = self.passed_for  # a model handed to a training routine
        activations.returned_values = self._returned_values  # a model built by a factory function

    # -- queries -----------------------------------------------------------------------------------
    def of(self, function: cst.FunctionDef) -> FunctionSummary:
        done = self._final.get(function) or self._provisional.get(function)
        if done is not None:
            if function in self._provisional and self._stack:
                self._stack[-1].provisional = True
            return done
        active = [frame.function for frame in self._stack]
        if function in active:  # recursion: what is known so far
            for frame in self._stack[active.index(function) + 1:]:
                frame.provisional = True
            self._recursive.add(function)
            return self._approximate.get(function) or self._empty(function)
        if len(self._stack) > 4 * MAX_DEPTH:  # a chain this long is cut; asked from nearer, it is not
            self._stack[-1].provisional = True
            return self._empty(function)
        summary, provisional = self._summarise(function)
        rounds = 1
        while function in self._recursive and summary != self._approximate.get(function) and rounds < MAX_ROUNDS:
            self._approximate[function] = summary
            self._provisional.clear()
            summary, provisional = self._summarise(function)
            rounds += 1
        if function in self._recursive and summary != self._approximate.get(function):
            summary = replace(summary, converged=False)
        if provisional:
            self._provisional[function] = summary
            if self._stack:
                self._stack[-1].provisional = True
        else:
            self._final[function] = summary
            self._provisional.clear()  # what depended on a function being built is built again when asked
        return summary

    def of_call(self, call: cst.Call) -> Optional[Summary]:
        """The summary of what a call runs: a function or method of this file, a class of this file
        (constructing it), else what the `foreign` hook knows of its qualified name."""
        target = self._same_file_target(call)
        if isinstance(target, cst.ClassDef):  # `Net()`: constructing a class of this file
            return self.of_class(target)
        if target is not None:
            return self.of(target)
        return self._foreign_of(call, self.foreign)

    def function_of_call(self, call: cst.Call) -> Optional[FunctionSummary]:
        """`of_call` when the call runs a function or method (what every question about a call's returns
        or effects reads); None for a class constructed, whose methods are then not summarised."""
        target = self._same_file_target(call)
        if target is not None:
            return self.of(target) if isinstance(target, cst.FunctionDef) else None
        summary = self._foreign_of(call, self.foreign_function or self.foreign)
        return summary if isinstance(summary, FunctionSummary) else None

    def _same_file_target(self, call: cst.Call) -> Optional[Union[cst.FunctionDef, cst.ClassDef]]:
        """The def a call runs or the class it constructs, when it is of this file."""
        function = self.names.definition_of(call) or method_of_instance(self.names, call)
        if function is not None:
            return function
        callee = self.names.callable_of(call.func)
        if callee is not None and callee.kind == "function" and isinstance(callee.node, cst.FunctionDef):
            if callee.module_class is None:
                return callee.node
        built = self.names.instance_of(call) if isinstance(call.func, cst.Name) else None
        owner = built.module_class or built.node if built is not None and built.kind in ("function", "class") else None
        return owner if isinstance(owner, cst.ClassDef) else None

    def _foreign_of(self, call: cst.Call, foreign: Callable[[str], Optional[Summary]]) -> Optional[Summary]:
        qualified = self.names.qualify(call.func) if _rooted_in_name(call.func) else None
        return foreign(qualified) if qualified else None

    def of_class(self, cls: cst.ClassDef) -> ClassSummary:
        methods = tuple((item.name.value, self.of(item)) for item in cls.body.body if isinstance(item, cst.FunctionDef))
        bases = tuple(self.names.qualify(base.value) or dotted_name(base.value) or "" for base in cls.bases)
        return ClassSummary(cls.name.value, bases, methods)

    def returned_facts(self, call: cst.Call) -> Optional[tuple[ValueFacts, ...]]:
        """What a call returns, element by element, when its summary is known and within the depth limit."""
        summary = self.function_of_call(call)
        if summary is None or not summary.returns or summary.return_depth >= MAX_DEPTH:
            return None
        recursive = any(frame.function is self.names.definition_of(call) for frame in self._stack)
        if self._stack and not recursive:  # a call back into the cycle adds no level: the fixpoint settles
            self._stack[-1].depth = max(self._stack[-1].depth, summary.return_depth + 1)
        return tuple(self._as_passed(call, summary, fact) for fact in summary.returns)

    def _as_passed(self, call: cst.Call, summary: FunctionSummary, fact: ValueFacts) -> ValueFacts:
        """A returned element as the caller sees it: a callee's parameter handed back is the caller's
        argument, which is a parameter of the caller only when `_parameter_of` shows it."""
        if fact.parameter is None:
            return fact
        arg = next((a for a in call.args if parameter_receiving(summary, call, a) == fact.parameter), None)
        return replace(fact, parameter=self._parameter_of(arg.value) if arg is not None else None)

    def facts(self, expr: cst.BaseExpression) -> ValueFacts:
        """What the code shows about one value, following names into the same-file calls that made it
        (`x, y = prepare(batch)`: element 1 of `prepare`'s summary)."""
        return self._facts(expr, 0)

    def returned_to(self, name: cst.Name) -> Optional[ValueFacts]:
        """What a name holds when every binding reaching it is a same-file call's result (or an element of
        it, unpacked); None when some binding is anything else."""
        return self._through_unpacking(name, 0)

    def effects_at(self, call: cst.Call) -> list[Effect]:
        """The effects of the function a call runs, spelled as the caller spells them (`evaluate(net)`
        switching its parameter `model` to eval switches `net`)."""
        summary = self.function_of_call(call)
        if summary is None:
            return []
        return [replace(effect, target=self._spelled_at(call, summary, effect.target), depth=effect.depth + 1,
                        via=(summary.name, *effect.via))
                for effect in summary.effects if effect.depth + 1 <= MAX_DEPTH]

    def with_calls(self, events: list[Event]) -> list[Event]:
        """`events` (of one function, in order) with each call of a summarised function followed by
        events standing for the backward passes, `zero_grad` clears and unscales it runs, at the call's
        site and with the call as their node (the receiver as the caller spells it), so that a query
        over one function's events sees what moved into a helper (of this file or another)."""
        found: list[Event] = []
        for event in events:
            found.append(event)
            if not isinstance(event, LocalCall) or not isinstance(event.node, cst.Call):
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

    # -- building one summary ----------------------------------------------------------------------
    def _summarise(self, function: cst.FunctionDef) -> tuple[FunctionSummary, bool]:
        """The function's summary, and whether it read a summary still being built (recursion)."""
        frame = _Frame(function)
        self._stack.append(frame)
        try:
            returns = self._returns(function)
            effects = self._effects(function)
            base = self._empty(function)
            grad_unread = self._grad_unread(function, base.parameters, returns)
        finally:
            self._stack.pop()
        return (replace(base, returns=returns, effects=effects, return_depth=frame.depth, grad_unread=grad_unread),
                frame.provisional)

    def _empty(self, function: cst.FunctionDef) -> FunctionSummary:
        receiver, positional = self.callers.signature(function)
        cls = self.callers.class_of(function)
        name = f"{cls.name.value}.{function.name.value}" if cls is not None else function.name.value
        return FunctionSummary(name, positional, receiver)

    def _returns(self, function: cst.FunctionDef) -> tuple[ValueFacts, ...]:
        shapes = [shape for value in self.names.returns.get(function, []) if (shape := self._shape(value, 0)) is not None]
        if not shapes:
            return ()
        if len({len(shape) for shape in shapes}) != 1:
            return (ValueFacts(),)
        return tuple(ValueFacts.join([shape[i] for shape in shapes]) for i in range(len(shapes[0])))

    def _shape(self, expr: cst.BaseExpression, depth: int) -> Optional[tuple[ValueFacts, ...]]:
        """A returned value, element by element; None when it adds nothing (a recursive call not yet known)."""
        if isinstance(expr, cst.Tuple) and not any(isinstance(e, cst.StarredElement) for e in expr.elements):
            return tuple(self._facts(element.value, depth) for element in expr.elements)
        if isinstance(expr, cst.Call) and self._summarised(expr):
            return self.returned_facts(expr)
        bound = self._single_value(expr)
        if bound is not None and depth < MAX_DEPTH and isinstance(bound, (cst.Tuple, cst.Call)):
            return self._shape(bound, depth + 1)
        return (self._facts(expr, depth),)

    def _facts(self, expr: cst.BaseExpression, depth: int) -> ValueFacts:
        if depth > MAX_DEPTH:
            return ValueFacts()
        if isinstance(expr, cst.Call) and self._summarised(expr):
            returned = self.returned_facts(expr)
            return returned[0] if returned and len(returned) == 1 else ValueFacts()
        if isinstance(expr, cst.Name):
            followed = self._through_unpacking(expr, depth)
            if followed is not None:
                return followed
        return self._local_facts(expr)

    def _through_unpacking(self, name: cst.Name, depth: int) -> Optional[ValueFacts]:
        """`x, y = prepare(batch)` (or `pair = prepare(batch); x, y = pair`): an element of a call's summary;
        `y = prepare_target(batch)`: its one value. Every binding reaching the use must show one."""
        bindings = self.names.reaching(name)
        found = []
        for binding in bindings:
            source = binding.value
            while isinstance(source, cst.Name) and depth < MAX_DEPTH:
                source, depth = self._single_value(source), depth + 1
            if not isinstance(source, cst.Call) or not self._summarised(source):
                return None
            returned = self.returned_facts(source)
            if binding.kind == "unpack" and len(binding.position) == 1 and returned and binding.position[0] < len(returned):
                found.append(returned[binding.position[0]])
            elif binding.kind == "assign" and returned and len(returned) == 1:
                found.append(returned[0])
            else:
                return None
        return ValueFacts.join(found) if found else None

    def _local_facts(self, expr: cst.BaseExpression) -> ValueFacts:
        value = self.values.value_of(expr)
        origin = self.history.origin(expr)
        activation = self.activations.of(expr)
        made = self._made_to_require_grad(expr)
        requires_grad = True if made or origin is not None else (False if value.detached or value.not_tensor else None)
        history = True if origin is not None else (False if made or value.detached else None)
        device = "accelerator" if value.placed else "host" if value.host else None
        role = ("loss" if origin == LOSS else "model_output" if value.model_output or origin == MODEL_OUTPUT
                else "batch" if value.batch else self._object_role(expr) if not value.tensor else None)
        host_built = True if is_host_built(expr, self.names, self.values, self.returned_facts) else None
        return ValueFacts(requires_grad, history, True if value.detached else None, device,
                          activation.kind if activation is not None else None, role, self._parameter_of(expr), host_built)

    def _object_role(self, expr: cst.BaseExpression) -> Optional[str]:
        """What a returned object that is not a tensor is for: a learning-rate scheduler (`schedulers`)."""
        optimizers = self.values.optimizers
        return LR_SCHEDULER if optimizers is not None and is_lr_scheduler(expr, self.names, optimizers, self) else None

    def _parameter_of(self, expr: cst.BaseExpression) -> Optional[str]:
        """The parameter `expr` is, through operations that keep requires-grad (`y.view(n, -1).float()`)."""
        operand = torch_ops.grad_operand(expr, self.imports.qualify)
        if not isinstance(operand, cst.Name):
            return None
        reaching = self.names.reaching(operand)
        return operand.value if reaching and all(b.kind == "param" for b in reaching) else None

    def _grad_unread(self, function: cst.FunctionDef, parameters: tuple[str, ...],
                     returns: tuple[ValueFacts, ...]) -> tuple[str, ...]:
        """The positional parameters whose gradient `function` shows it never reads: not differentiated
        (`.grad`, `autograd.grad`, an optimizer), not stored or handed to code the file does not show,
        handed on only to functions whose summaries say the same of the receiving parameter, and
        returned, if at all, only as whole elements the caller gets back (`ValueFacts.parameter`), where
        the caller's own facts follow it. Known only for an outermost function (its gradient facts)."""
        if self.gradients is None or function not in self.gradients.scopes:
            return ()
        facts = self.gradients.of(function)
        bindings = self.gradients.bindings_in(function)
        passed_back = {fact.parameter for fact in returns if fact.parameter is not None}
        unread = []
        for parameter in parameters:
            if self._rebound(bindings, parameter):
                continue  # what the name holds later is not (only) the caller's tensor
            held = holders(bindings, {parameter}, self.imports.qualify)
            if held & facts.differentiated or held & facts.stored:
                continue
            if held & facts.returned and parameter not in passed_back:
                continue  # returned under another name or inside a container
            if any(not self.grad_unread_at(call, arg) for call, arg in facts.handed(held)):
                continue
            unread.append(parameter)
        return tuple(unread)

    @staticmethod
    def _rebound(bindings, parameter: str) -> bool:
        return any(b.name == parameter and b.kind != "param" for b in bindings)

    def grad_unread_at(self, call: cst.Call, arg: cst.Arg) -> bool:
        """`arg` goes to a function (of this file or another scanned file) whose summary shows it never
        reads the receiving parameter's gradient."""
        summary = self.function_of_call(call)
        if summary is None:
            return False
        parameter = parameter_receiving(summary, call, arg)
        return parameter is not None and parameter in summary.grad_unread

    def _made_to_require_grad(self, expr: cst.BaseExpression) -> bool:
        candidates = [expr]
        if isinstance(expr, cst.Name):
            candidates = [b.bound_value for b in self.names.reaching(expr)]
            if not candidates or any(c is None for c in candidates):
                return False
        # through operations that keep the flag: `torch.tensor(y, requires_grad=True).to(device).view(-1)`
        marked = [torch_ops.grad_operand(c, self.imports.qualify) for c in candidates]  # type: ignore[arg-type]
        return all(c is not None and (is_requires_grad_call(c) or requires_grad_keyword(c, self.imports) is not None)
                   for c in marked)

    def _effects(self, function: cst.FunctionDef) -> tuple[Effect, ...]:
        own: list[tuple[int, Effect]] = []
        for switch in self.modes.in_function(function):
            own.append((switch.order, Effect("eval" if switch.to_eval else "train", switch.receiver)))
        for event in self.events.in_function(function):
            if event.site.in_lambda:
                continue
            order = event.site.names_order
            if isinstance(event, Backward):
                own.append((order, Effect("backward", None)))
            elif isinstance(event, Step):
                own.append((order, Effect("step", dotted_name(event.candidates[0]) if event.candidates else None)))
            elif isinstance(event, ClearGrad):
                own.append((order, Effect("zero_grad", dotted_name(event.receiver))))
            elif isinstance(event, Unscale):
                own.append((order, Effect("unscale", dotted_name(event.scaler))))
            elif isinstance(event, LocalCall) and self._summarised(event.node):  # type: ignore[arg-type]
                own.extend((order, effect) for effect in self.effects_at(event.node))  # type: ignore[arg-type]
        if self._enters_no_grad(function):
            own.append((0, Effect("no_grad", None)))
        own.extend((0, Effect("store", target)) for target in stores(function))
        # a tensor the caller hands in, made to require grad (a method's receiver is a module, not one)
        receiver, positional = self.callers.signature(function)
        setters: set[str] = set()
        marked, kept = marked_in_place(function, setters)
        own.extend((0, Effect("requires_grad", target, detail=LEAF_SETTER if target in setters else None))
                   for target in marked if target in positional)
        # a tensor it rebinds or reads the gradient of (also one a callee marks) is not left marked for the caller
        own = [(order, effect) for order, effect in own
               if effect.kind != "requires_grad" or (effect.target or "").partition(".")[0] not in kept]
        own.extend((0, Effect("detach", target)) for target in detaches(function))
        own.extend((0, Effect("collective", None, detail=api)) for api in self._collectives(function))
        settled = [self._restored(effect, order, own) for order, effect in own]
        return _deduplicated(settled, self._reachable_spellings(function))

    def _collectives(self, function: cst.FunctionDef) -> list[str]:
        """The collectives its own body runs (`calls/collectives.py`), nested definitions left out."""
        found, stack = [], list(children(function.body))
        while stack:
            node = stack.pop()
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if isinstance(node, cst.Call) and (api := collective_api(node, self.names)) is not None:
                found.append(api)
            stack.extend(children(node))
        return sorted(set(found))

    def _restored(self, effect: Effect, order: int, effects: list[tuple[int, Effect]]) -> Effect:
        if effect.kind != "eval" or effect.restored or effect.target is None:
            return effect
        if any(later.kind == "train" and after > order and (later.target is None or owns(later.target, effect.target))
               for after, later in effects):
            return replace(effect, restored=True)
        return effect

    def _reachable_spellings(self, function: cst.FunctionDef) -> set[str]:
        """The roots a caller can name: the receiver and the parameters."""
        return {param.name.value for param in function.params.params}

    def _spelled_at(self, call: cst.Call, summary: FunctionSummary, target: Optional[str]) -> Optional[str]:
        """The caller's spelling of what the callee calls `target` (a parameter, or `self.<attr>`)."""
        if target is None:
            return None
        root, dot, rest = _root_of(target)
        if summary.receiver is not None and root == summary.receiver:
            owner = dotted_name(call.func.value) if isinstance(call.func, cst.Attribute) else None
            return owner + dot + rest if owner else None
        if root not in summary.parameters:
            return None
        passed = argument(call, summary.parameters, root)
        spelled = dotted_name(passed) if passed is not None else None
        return spelled + dot + rest if spelled else None

    def _enters_no_grad(self, function: cst.FunctionDef) -> bool:
        if function in self.names.grad_off_functions:
            return True
        if self._grad_off_scopes is None:
            self._grad_off_scopes = {id(use.scope.node) for use in self.names.uses.values() if use.grad_off}
        return id(function) in self._grad_off_scopes

    # -- helpers -----------------------------------------------------------------------------------
    def _activation_of_call(self, call: cst.Call) -> Optional[str]:
        if not self._summarised(call):
            return None
        returned = self.returned_facts(call)
        return returned[0].activation if returned and len(returned) == 1 else None

    def _returned_values(self, call: cst.Call) -> Optional[list[cst.BaseExpression]]:
        function = self.names.definition_of(call)
        return list(self.names.returns.get(function, [])) or None if function is not None else None

    def _summarised(self, call: cst.Call) -> bool:
        """A call of a function this part can summarise: of this file, or of another file through `foreign`."""
        if self._is_same_file_call(call):
            return True
        built = self.names.instance_of(call) if isinstance(call.func, cst.Name) else None
        if built is not None and (built.kind == "class" or built.module_class is not None):
            return False  # a class of this file: constructed, not summarised as a function
        return isinstance(self._foreign_of(call, self.foreign_function or self.foreign), FunctionSummary)

    def _is_same_file_call(self, call: cst.Call) -> bool:
        if self.names.definition_of(call) is not None or method_of_instance(self.names, call) is not None:
            return True
        callee = self.names.callable_of(call.func) if isinstance(call.func, (cst.Name, cst.Attribute)) else None
        return bool(callee is not None and callee.kind == "function" and callee.module_class is None
                    and isinstance(callee.node, cst.FunctionDef))

    def _single_value(self, expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
        return self.names.single_value(expr) if isinstance(expr, cst.Name) and expr in self.names.uses else None



def parameter_receiving(summary: FunctionSummary, call: cst.Call, arg: cst.Arg) -> Optional[str]:
    """The positional parameter of `summary` that `arg` of `call` binds (a method's receiver left out)."""
    if arg.star:
        return None
    if arg.keyword is not None:
        return arg.keyword.value if arg.keyword.value in summary.parameters else None
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in positional[: positional.index(arg) + 1]):
        return None
    index = positional.index(arg)
    return summary.parameters[index] if index < len(summary.parameters) else None


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
    return tuple(sorted(kept.values(), key=lambda e: (e.kind, e.target or "", e.restored, e.depth, e.via)))


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


def _rooted_in_name(expr: cst.BaseExpression) -> bool:
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return isinstance(expr, cst.Name)
