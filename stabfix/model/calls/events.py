"""Training events: what a file's training code does to gradients and parameters, where, in source order.

The model's `events` part. During the single traversal it records, per function (and for module level):

- `Backward`      `loss.backward()`, `accelerator.backward(loss)`, `self.manual_backward(loss)`,
                  `torch.autograd.backward(...)`, `torch.autograd.grad(...)`,
                  `dist_autograd.backward(ctx, [loss])` (through import aliases);
- `Step`          `opt.step()`, `scaler.step(opt)`, `xm.optimizer_step(opt)`, with the expressions that
                  may be the stepped optimizer (whether one is, the `optimizers` part answers);
- `ClearGrad`     `X.zero_grad()` (with its receiver), `p.grad = None`, and a fresh distributed
                  autograd context (`with dist_autograd.context() as ctx:`, how="context": what
                  `dist_autograd.backward(ctx, [loss])` accumulates lives and dies with it);
- `GradWrite`     a gradient overwritten by hand: `p.grad = g`, `p.grad.copy_(g)`, `p.grad.add_(g)`;
- `Clip`          `clip_grad_norm_` / `clip_grad_value_` (torch's functions or a wrapper's method);
- `Unscale`       `scaler.unscale_(opt)`;
- `ParamUpdate`   a tensor changed in place: `p.add_(...)`, `p.data.sub_(...)`, `p.copy_(...)`,
                  `p += ...`, `p.data -= ...`, `p.data = ...`, `torch.add(p, x, out=p)`, the
                  multi-tensor `torch._foreach_add_(params, xs)`; the tensor is a variable, an
                  attribute chain (`model.head.weight`) or a lookup (`params[name]`) (whether it is a
                  parameter, and what the update adds, `model.parameters` and `model.updates` answer);
- `OptimizerBuilt` a call that constructs an optimizer class (`torch.optim.AdamW(...)`, `Lion(...)`);
- `LocalCall`     a call of a plain name or of a method on `self` (`helper()`, `self._undo()`), so a
                  rule can follow an event into the function that the file calls.

Each event has a `Site`: its enclosing functions and class, its order among all events, its place
among the `names` model's bindings, its enclosing `for` loops (of its own function), the branches
it sits in (`if`/`else`, `try`/`except`/`else`), its enclosing blocks, and its statement line.
`for` loops get a site of their own (`loop_site`), and `with` bodies are known (they always run).
`Site` and the tracking of where the traversal stands live in `event_sites` (`SiteTracker`, which
`Events` inherits), the event records in `event_kinds`; import them from here.

For the event-order rules (SF303, SF404-SF406, SF408): `Site.any_loops` are the enclosing `for` *and*
`while` loops of its function and `Site.in_lambda` marks code that runs when a lambda is called (a
hook), `iteration(loop)` the events one pass of a loop runs (its function's own, nested functions
aside), `innermost_loop(*sites)` the innermost loop they share, `functions_called(events)` the
same-file functions they call, `is_scaler(expr)` whether an expression is a `GradScaler`
(constructed, or used as `scaler.scale(loss).backward()` / `scaler.unscale_`), and `ClearGrad`
also covers `p.grad.zero_()`, `torch._foreach_zero_(grads)` and helpers named for clearing
(`pyro.infer.util.zero_grads(params)`, how="helper"). `stepped_by(step, optimizer)` tells an
optimizer's own step (`opt.step()`, `scaler.step(opt)`) from one handed to a wrapper
(`strategy.optimizer_step(opt)`), and `gates(site, scope)` gives the `if` tests a site runs under.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Iterable, Optional

import libcst as cst

from stabfix.model.calls.backward_wrappers import wraps_backward
from stabfix.model.calls.event_kinds import (
    Backward,
    ClearGrad,
    Clip,
    Event,
    GradWrite,
    LocalCall,
    OptimizerBuilt,
    ParamUpdate,
    Step,
    Unscale,
)
from stabfix.model.calls.event_sites import Branch, Gate, Site, SiteTracker
from stabfix.model.calls.optimizers import OptimizerInfo, OptimizerTracker, optimizer_class_name
from stabfix.model.source import vocabulary as vocab
from stabfix.model.source.enclosing import EnclosingDefinitions
from stabfix.model.source.scopes import method_receiver
from stabfix.model.source.imports import ImportTracker, dotted_name
from stabfix.model.source.names import Names
from stabfix.model.source.syntax import TUPLES_AND_LISTS, code_of

# the names other modules import from here
__all__ = ["Backward", "Branch", "ClearGrad", "Clip", "Event", "Events", "Gate", "GradWrite", "LocalCall",
           "OptimizerBuilt", "ParamUpdate", "Site", "Step", "Unscale", "gradient_resets", "stepped_optimizer",
           "tensor_spelling", "unpacked_step"]

_BACKWARD_FUNCTIONS = {"torch.autograd.backward", "torch.autograd.grad"}
_DISTRIBUTED_BACKWARD = "torch.distributed.autograd.backward"  # (context_id, roots): into the context, not `.grad`
_DISTRIBUTED_CONTEXT = "torch.distributed.autograd.context"
# Functions that run the optimizer they are handed through its own `step()` (torch_xla reduces gradients first).
_OPTIMIZER_STEP_FUNCTIONS = {"torch_xla.core.xla_model.optimizer_step"}
_CLIP_FUNCTIONS = {"clip_grad_norm_", "clip_grad_value_", "clip_grad_norm", "clip_grad_value"}
_STEP_METHODS = {"step", "optimizer_step"}
_IN_PLACE_UPDATES = {"add_", "sub_", "copy_"}
# Functions that update their first argument, a list of tensors, in place (one kernel for all of them).
_FOREACH_UPDATES = {"torch._foreach_add_": "foreach_add_", "torch._foreach_sub_": "foreach_sub_"}
# Out-of-place arithmetic that writes its result into `out=`.
_OUT_UPDATES = {"torch.add": "out=add", "torch.sub": "out=sub"}


class Events(SiteTracker):
    """The `events` part: run it in the batched traversal after `names`, then query it."""

    def __init__(self, imports: ImportTracker, names: Names, enclosing: EnclosingDefinitions) -> None:
        super().__init__(names, enclosing)
        self.imports = imports
        self.events: list[Event] = []
        self.instance_calls: list[LocalCall] = []  # `obj.method(...)`, `Cls().method(...)` (not events)
        self._instance_calls_by_function: dict[Optional[cst.FunctionDef], list[LocalCall]] = {}
        self._instance_calls_by_name: dict[str, list[LocalCall]] = {}
        # `functions_called`'s maps of the functions with events, by name and to their class; rebuilt only
        # when a function gains its first event (rules ask for every step and every pass of a big file)
        self._functions_by_name: tuple[int, dict[str, list[cst.FunctionDef]], dict[int, Optional[cst.ClassDef]]] = (-1, {}, {})
        self._by_function: dict[Optional[cst.FunctionDef], list[Event]] = {}
        self._by_kind: dict[str, list[tuple[int, Event]]] = {}  # with each event's place in `events`
        self._by_loop: dict[int, list[Event]] = {}  # id(loop) -> the events of one pass (see `iteration`)
        self._calls_by_name: dict[str, list[LocalCall]] = {}
        self._transitions: set[int] = set()  # `obs, reward, done = env.step(a)`: not an optimizer step
        self._scalers: set[str] = set()  # dotted names bound to a GradScaler or used as one
        # (id(innermost class), id(innermost function)) -> `method_receiver` there: fixed by where the traversal
        # stands, and asked of every method call
        self._receivers: dict[tuple[int, int], str] = {}

    # -- queries ---------------------------------------------------------------------------------------
    def in_function(self, function: Optional[cst.FunctionDef], *kinds: str) -> list[Event]:
        """The events of one function (None: module level), of the given kinds (all if none), in order."""
        found = self._by_function.get(function, [])
        return [event for event in found if event.kind in kinds] if kinds else list(found)

    def of_kind(self, *kinds: str) -> list[Event]:
        """The events of the given kinds, in order (from an index: rules ask this for every candidate)."""
        if len(kinds) == 1:
            return [event for _, event in self._by_kind.get(kinds[0], ())]
        placed = [item for kind in dict.fromkeys(kinds) for item in self._by_kind.get(kind, ())]
        return [event for _, event in sorted(placed, key=lambda item: item[0])]

    def calls_on_instances_of(self, cls: cst.ClassDef, method: str) -> list[LocalCall]:
        """`trainer.train_step(batch)` where `trainer` holds one instance of the file's class `cls`
        (`trainer = Trainer(...)`): a method call from outside the class."""
        found = []
        for call in self._instance_calls_by_name.get(method, ()):
            receiver = call.node.func.value  # type: ignore[attr-defined]
            if type(receiver) is not cst.Name:
                continue
            value = self.names.single_value(receiver)
            if type(value) is cst.Call:
                built = self.names.instance_of(value)
                owner = None if built is None else (built.module_class or (built.node if built.kind == "class" else None))
                if owner is cls:
                    found.append(call)
        return found

    def stepped_by(self, step: Step, optimizer: cst.BaseExpression) -> Optional[list[cst.FunctionDef]]:
        """None when the call runs the optimizer's own `step()` (`opt.step()`, a GradScaler's
        `scaler.step(opt)`, torch_xla's `xm.optimizer_step(opt)`); else it hands the optimizer to a method
        of another object, and this lists the file's functions that method may be (`self.m(opt)`: the
        class's own; `strategy.optimizer_step(opt)`: any class's of that name), empty when the file does
        not show its code: a wrapper that may step an engine instead or clear the gradients itself."""
        func = step.node.func
        assert type(func) is cst.Attribute
        if optimizer is func.value or self.is_scaler(func.value):
            return None
        if self.imports.qualify(func) in _OPTIMIZER_STEP_FUNCTIONS:
            return None
        on_self = type(func.value) is cst.Name and func.value.value == method_receiver(step.site.cls, step.site.functions)
        found = []
        for function, recorded in self._by_function.items():
            if function is None or function is step.site.function or function.name.value != func.attr.value:
                continue
            site = recorded[0].site
            if len(site.functions) == 1 and site.cls is not None and (not on_self or site.cls is step.site.cls):
                found.append(function)
        return found

    def instance_calls_in(self, function: Optional[cst.FunctionDef]) -> list[LocalCall]:
        """The method calls on an object (`obj.method(...)`, `Cls().method(...)`) of one function, in order."""
        return list(self._instance_calls_by_function.get(function, ()))

    def calls_of(self, name: str) -> list[LocalCall]:
        return list(self._calls_by_name.get(name, ()))

    def iteration(self, loop: cst.CSTNode, *kinds: str) -> list[Event]:
        """The events one pass of a `for`/`while` loop runs in its own function (lambdas and nested
        functions aside: they run when called), of the given kinds (all if none), in order."""
        found = self._by_loop.get(id(loop), [])
        return [event for event in found if event.kind in kinds] if kinds else list(found)

    def functions_called(self, events: Iterable[Event], depth: int = 3) -> list[cst.FunctionDef]:
        """The functions of this file (with events) that the calls among `events` run, following their
        own calls `depth` levels: `helper()` a function of that name, `self.m()` a method of the same class."""
        known, by_name, classes = self._functions_by_name
        if known != len(self._by_function):  # functions only gain events: the same keys give the same maps
            by_name, classes = {}, {}
            for function, recorded in self._by_function.items():
                if function is not None and recorded:
                    by_name.setdefault(function.name.value, []).append(function)
                    site = recorded[0].site
                    classes[id(function)] = site.cls if len(site.functions) == 1 else None  # a method
            self._functions_by_name = (len(self._by_function), by_name, classes)
        found: list[cst.FunctionDef] = []
        pending = [(event, depth) for event in events if isinstance(event, LocalCall)]
        while pending:
            call, left = pending.pop(0)
            for function in by_name.get(call.name, []):
                owner = classes.get(id(function))
                if any(function is seen for seen in found) or (call.on_self and owner is not call.site.cls):
                    continue
                if not call.on_self and owner is not None:
                    continue  # `helper()` does not run a method
                found.append(function)
                if left > 1:
                    pending.extend((event, left - 1) for event in self._by_function[function] if isinstance(event, LocalCall))
        return found

    def accumulates(self, backward: Event) -> bool:
        """Whether a backward event adds into `.grad` (`torch.autograd.grad` returns the gradients instead)."""
        return isinstance(backward, Backward) and not (
            type(backward.node) is cst.Call and self.imports.qualify(backward.node.func) == "torch.autograd.grad"
        )

    def is_scaler(self, expr: Optional[cst.BaseExpression]) -> bool:
        """Whether `expr` is a gradient scaler: bound to `GradScaler(...)` (torch.amp, torch.cuda.amp,
        `ShardedGradScaler`, any import alias), or used as one (`x.scale(loss).backward()`, `x.unscale_(opt)`)."""
        name = dotted_name(expr) if expr is not None else None
        return name is not None and name in self._scalers

    # -- recording -------------------------------------------------------------------------------------
    def _add(self, event: Event) -> None:
        site = event.site
        self._by_kind.setdefault(event.kind, []).append((len(self.events), event))
        if site.any_loops and not site.in_lambda:
            for loop in dict.fromkeys(map(id, site.any_loops)):
                self._by_loop.setdefault(loop, []).append(event)
        if isinstance(event, LocalCall):
            self._calls_by_name.setdefault(event.name, []).append(event)
        self.events.append(event)
        self._by_function.setdefault(site.function, []).append(event)

    # -- events ----------------------------------------------------------------------------------------
    def visit_With(self, node: cst.With) -> None:
        super().visit_With(node)
        for item in node.items:
            if type(item.item) is cst.Call and self.imports.qualify(item.item.func) == _DISTRIBUTED_CONTEXT:
                context = item.asname.name if item.asname is not None else item.item
                self._add(ClearGrad(item.item, self._site(), context, "context"))  # type: ignore[arg-type]


    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        qualified = self.imports.qualify(func) or ""
        if type(func) is cst.Name:  # exact types (libcst has no subclass of them): no ABC isinstance per call
            self._add(LocalCall(node, self._site(), func.value, False))  # type: ignore[attr-defined]
        if qualified in _BACKWARD_FUNCTIONS:
            self._add(Backward(node, self._site(), _first_argument(node)))
        elif qualified == _DISTRIBUTED_BACKWARD:
            roots = [arg.value for arg in node.args if arg.keyword is None and not arg.star][1:2]
            self._add(Backward(node, self._site(), roots[0] if roots else None))
        elif qualified == "torch._foreach_zero_" and _first_argument(node) is not None:
            self._add(ClearGrad(node, self._site(), _first_argument(node), "foreach_zero_"))  # type: ignore[arg-type]
        elif qualified in _FOREACH_UPDATES:
            tensors = _first_argument(node)
            spelled = tensor_spelling(tensors) if tensors is not None else None
            if spelled is not None:
                self._add(ParamUpdate(node, self._site(), spelled, _FOREACH_UPDATES[qualified], tensors))
        elif qualified in _OUT_UPDATES:
            out = next((arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value == "out"), None)
            spelled = _variable_of(out) if out is not None else None
            if spelled is not None:
                self._add(ParamUpdate(node, self._site(), spelled, _OUT_UPDATES[qualified], _tensor_of(out)))
        elif _clears_by_name(qualified or dotted_name(func) or "", func):
            self._add(ClearGrad(node, self._site(), _first_argument(node) or func, "helper"))
        elif qualified.startswith("torch.nn.utils.") and qualified.rsplit(".", 1)[-1] in _CLIP_FUNCTIONS:
            self._add(Clip(node, self._site(), _first_argument(node) or _keyword_argument(node, "parameters")))
        elif type(func) is cst.Attribute:
            self._method_call(node, func)  # type: ignore[arg-type]
        class_name = optimizer_class_name(qualified or dotted_name(func) or "")
        if class_name is not None:
            self._add(OptimizerBuilt(node, self._site(), class_name))

    def _method_call(self, node: cst.Call, func: cst.Attribute) -> None:
        method, receiver = func.attr.value, func.value
        if method in _STEP_METHODS and id(node) not in self._transitions:
            self._add(Step(node, self._site(), _stepped(node, func)))
        elif method in ("backward", "manual_backward"):
            self._add(Backward(node, self._site(), self._differentiated(node, func)))
        elif method == "zero_grad":
            self._add(ClearGrad(node, self._site(), receiver, "zero_grad"))
        elif method == "zero_" and _grad_owner(receiver) is not None:
            self._add(ClearGrad(node, self._site(), _grad_owner(receiver), "zero_"))  # type: ignore[arg-type]
        elif method in _IN_PLACE_UPDATES:
            if _is_grad_attribute(receiver):
                self._add(GradWrite(node, self._site(), receiver.value))  # type: ignore[attr-defined]
            else:
                param = _variable_of(receiver)
                if param is not None:
                    self._add(ParamUpdate(node, self._site(), param, method, _tensor_of(receiver)))
        elif method in _CLIP_FUNCTIONS:
            self._add(Clip(node, self._site(), _first_argument(node) or _keyword_argument(node, "parameters")))  # `accelerator.clip_grad_norm_(...)`
        elif method == "unscale_":
            self._add(Unscale(node, self._site(), receiver, _first_argument(node)))
            self._note_scaler(receiver)
        if method == "backward" and type(receiver) is cst.Call and type(receiver.func) is cst.Attribute:
            if receiver.func.attr.value == "scale":
                self._note_scaler(receiver.func.value)  # `scaler.scale(loss).backward()`
        if type(receiver) is cst.Name and receiver.value == self._method_receiver():  # `self.m()`, any receiver name
            self._add(LocalCall(node, self._site(), method, True))
        elif type(receiver) is cst.Name or type(receiver) is cst.Call:  # `trainer.fit(x)`, `Steps().run(x)`
            call = LocalCall(node, self._site(), method, False)
            self.instance_calls.append(call)
            self._instance_calls_by_function.setdefault(call.site.function, []).append(call)
            self._instance_calls_by_name.setdefault(method, []).append(call)

    def _method_receiver(self) -> str:
        cls, functions = self.enclosing.innermost_class(), self.enclosing.enclosing_functions()
        key = (id(cls), id(functions[-1]) if functions else 0)
        receiver = self._receivers.get(key)
        if receiver is None:
            receiver = self._receivers[key] = method_receiver(cls, functions)
        return receiver

    def _differentiated(self, call: cst.Call, func: cst.Attribute) -> Optional[cst.BaseExpression]:
        """What a `.backward(...)` call differentiates: its argument when the receiver is a training wrapper
        (`accelerator.backward(loss)`, `engine.backward(loss)`, `manual_backward(loss)`), else the receiver
        itself (`t.backward(grad)`)."""
        argument = _first_argument(call)
        if func.attr.value == "manual_backward":
            return argument
        return argument if argument is not None and wraps_backward(self.names, func.value) else func.value

    def _note_scaler(self, expr: cst.BaseExpression) -> None:
        name = dotted_name(expr)
        if name is not None:
            self._scalers.add(name)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        param = _variable_of(node.target)
        if param is None:
            return
        if type(node.operator) is cst.AddAssign:
            self._add(ParamUpdate(node, self._site(), param, "+=", _tensor_of(node.target)))
        elif type(node.operator) is cst.SubtractAssign:
            self._add(ParamUpdate(node, self._site(), param, "-=", _tensor_of(node.target)))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None and _builds_scaler(self.imports, node.value):
            self._note_scaler(node.target)

    def visit_Assign(self, node: cst.Assign) -> None:
        transition = unpacked_step(node)
        if transition is not None:
            self._transitions.add(id(transition))
        if _builds_scaler(self.imports, node.value):
            for target in node.targets:
                self._note_scaler(target.target)
        for target in node.targets:
            if _is_grad_attribute(target.target):
                tensor = target.target.value  # type: ignore[attr-defined]
                if type(node.value) is cst.Name and node.value.value == "None":
                    self._add(ClearGrad(node, self._site(), tensor, "set_none"))
                else:
                    self._add(GradWrite(node, self._site(), tensor))
        if len(node.targets) == 1:
            target = node.targets[0].target
            param = _variable_of(target) if type(target) is cst.Attribute and target.attr.value == "data" else None
            if param is not None:
                self._add(ParamUpdate(node, self._site(), param, "data=", _tensor_of(target)))


def stepped_optimizer(
    step: Step, optimizers: OptimizerTracker, events: Optional["Events"] = None
) -> Optional[tuple[cst.BaseExpression, OptimizerInfo]]:
    """The optimizer a step steps, as written there (`opt` of `scaler.step(opt)`), when it is one. With
    `events`, what a gradient scaler steps is an optimizer even when nothing else in the file says so."""
    for candidate in step.candidates:
        info = optimizers.resolve(candidate, step.site.scope)
        if info is not None:
            return candidate, info
    if events is not None and len(step.candidates) > 1 and events.is_scaler(step.candidates[0]):
        candidate = step.candidates[1]
        return candidate, OptimizerInfo(dotted_name(candidate) or "optimizer", None, "scaled")
    return None


def gradient_resets(events: Iterable[Event]) -> list[Event]:
    """The events after which `p.grad` no longer holds the gradient an earlier step used: a new
    backward, or a gradient cleared or overwritten by hand (`zero_grad()` aside: it empties the
    gradients rather than replacing them, and rules tell the two apart)."""
    return [
        event
        for event in events
        if isinstance(event, (Backward, GradWrite)) or (isinstance(event, ClearGrad) and event.how == "set_none")
    ]


def _builds_scaler(imports: ImportTracker, value: cst.BaseExpression) -> bool:
    """`GradScaler(...)`, `torch.cuda.amp.GradScaler(...)`, `ShardedGradScaler(...)`, by any import alias."""
    if type(value) is not cst.Call:  # exact types (see node_fields.node_kinds)
        return False
    name = imports.qualify(value.func) or dotted_name(value.func) or ""
    return name.rsplit(".", 1)[-1].endswith("GradScaler")


def _clears_by_name(name: str, func: cst.BaseExpression) -> bool:
    """`zero_grads(params)`, `util.clear_grads(model)`: a helper of another module named for clearing
    gradients (not the `zero_grad()` method, recorded with its receiver)."""
    if type(func) is cst.Attribute and func.attr.value == "zero_grad":  # type: ignore[attr-defined]  # exact type: no ABC isinstance
        return False
    return _names_a_clear(name.rsplit(".", 1)[-1])


@lru_cache(maxsize=4096)
def _names_a_clear(last: str) -> bool:
    """The pattern asked once per callee name (every call of every file asks it)."""
    return bool(last) and bool(vocab.GRADIENT_CLEAR_CALL.match(last))


def _grad_owner(node: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """`p` for `p.grad` or `p.grad.data`, else None."""
    if type(node) is cst.Attribute and node.attr.value == "data":
        node = node.value
    return node.value if _is_grad_attribute(node) else None  # type: ignore[attr-defined]


def _first_argument(node: cst.Call) -> Optional[cst.BaseExpression]:
    positional = [arg.value for arg in node.args if arg.keyword is None and not arg.star]
    return positional[0] if positional else None


def _keyword_argument(node: cst.Call, keyword: str) -> Optional[cst.BaseExpression]:
    return next((arg.value for arg in node.args if arg.keyword is not None and arg.keyword.value == keyword), None)


def unpacked_step(assign: cst.Assign) -> Optional[cst.Call]:
    """The `.step(...)` call whose result this assignment unpacks into several names (`obs, reward,
    done, info = env.step(action)`): an environment's transition, since an optimizer's step returns
    None or the closure's loss."""
    value = assign.value
    if not (type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value == "step"):
        return None
    unpacks = any(type(t.target) in TUPLES_AND_LISTS and len(t.target.elements) > 1 for t in assign.targets)
    return value if unpacks else None


def _stepped(call: cst.Call, func: cst.Attribute) -> tuple[cst.BaseExpression, ...]:
    candidates: list[cst.BaseExpression] = [func.value] if func.attr.value == "step" else []
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    by_keyword = [arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "optimizer"]
    candidates.extend(by_keyword or positional[:1])  # `scaler.step(opt)`, `xm.optimizer_step(opt)`
    return tuple(candidates)


def _is_grad_attribute(node: cst.BaseExpression) -> bool:
    return type(node) is cst.Attribute and node.attr.value == "grad"


def _tensor_of(node: cst.BaseExpression) -> cst.BaseExpression:
    """`p` for `p.data`."""
    return node.value if type(node) is cst.Attribute and node.attr.value == "data" else node


def _variable_of(node: cst.BaseExpression) -> Optional[str]:
    """The spelling of the tensor `node` changes (`p` for `p` or `p.data`), see `tensor_spelling`."""
    return tensor_spelling(_tensor_of(node))


def tensor_spelling(node: cst.BaseExpression) -> Optional[str]:
    """`p`, `model.head.weight`, `params[name]`: a name, an attribute chain (not through `.grad` or
    `.data`) or a dict lookup by a name or string on one; None for anything else."""
    if type(node) is cst.Subscript:
        if len(node.slice) != 1 or type(node.slice[0].slice) is not cst.Index:
            return None
        key, owner = node.slice[0].slice.value, tensor_spelling(node.value)
        if owner is None or "[" in owner or type(key) not in (cst.Name, cst.SimpleString):
            return None
        return f"{owner}[{key.value}]"
    name = dotted_name(node)
    if name is None or any(part in ("grad", "data") for part in name.split(".")[1:]):
        return None
    return name


def clip_measures_only(call: cst.CSTNode) -> bool:
    """`clip_grad_norm_(params, float("inf"))`: computes the norm, clips nothing."""
    if type(call) is not cst.Call:
        return False
    keyword = [arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value in ("max_norm", "clip_value")]
    positional = [arg.value for arg in call.args if arg.keyword is None]
    limit = keyword[0] if keyword else (positional[1] if len(positional) > 1 else None)
    return limit is not None and code_of(limit).replace(" ", "").replace("'", '"') in vocab.INFINITE_LIMITS
