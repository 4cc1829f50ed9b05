"""SF408 optimizer-created-in-loop: a new optimizer is built on every pass of the loop that steps it.

A query over `events` and `optimizers`: an optimizer construction (`OptimizerBuilt`, or a factory call
bound in the loop body) whose step (`stepped_optimizer` resolves to that very construction) runs in the
same innermost `for`/`while` loop, unconditionally with respect to the step (a construction behind an
`if` that the step is not in is a rebuild at a phase boundary or a lazy init); or built in a step function
that a loop of the file calls (`self.train_step(...)`, `train_step(...)`, or `gate.train_step(...)` on an
instance of the class: `Callers.method_called`). Silent when the steps sit in a loop nested inside the constructing one (a
new optimizer per stage, fold, trial or meta-learning task) and when the optimized model or tensors are
themselves created in the same pass (a fresh learner each task: there is no state to keep).
No fix: where to build it instead depends on the code around.
"""

from __future__ import annotations

import ast
from typing import Optional

import libcst as cst

from stabfix.checker import Checker
from stabfix.fixes.syntax import code_for
from stabfix.model.calls.events import OptimizerBuilt, Step, stepped_optimizer
from stabfix.model.calls.optimizers import learning_rate_argument
from stabfix.model.flow.callers import Callers
from stabfix.model.flow.per_pass import changes_each_pass, fresh_each_pass
from stabfix.model.training.step_frames import loop_header
from stabfix.shape import Shape
from stabfix.shape_queries import loops_contain


class OptimizerCreatedInLoop(Checker):
    code = "SF408"
    # an optimizer construction names `optim` (torch.optim, build_optimizer) or a known optimizer class
    tokens = ("optim", "Optim", "Adam", "SGD", "Lion", "RMSprop", "Adagrad", "LBFGS", "Lamb", "LAMB", "Adafactor", "Muon")
    tokens_elsewhere = ("optim", "Optim", "Adam", "SGD", ".step(")  # a helper of another module may run the rest (`events_through_calls`)
    also_needs = (("step",),)
    needs = ("names", "optimizers", "events", "events_through_calls")

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:
        # reported on a construction (or a helper's call that builds one) in a `for`/`while` loop of the file, or
        # in a function a call in such a loop runs: either way a call sits in a loop
        return loops_contain(shape, lambda node: type(node) is ast.Call)

    def __init__(self, context) -> None:
        super().__init__(context)
        self._loops: list[list[cst.CSTNode]] = [[]]  # the loops around the node, per function
        self._method_calls: list[tuple[cst.Call, cst.CSTNode]] = []  # `obj.m(...)` in a loop, with the loop

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._loops.append([])

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._loops.pop()

    def visit_For(self, node: cst.For) -> None:
        self._loops[-1].append(node)

    def leave_For(self, original_node: cst.For) -> None:
        self._loops[-1].pop()

    def visit_While(self, node: cst.While) -> None:
        self._loops[-1].append(node)

    def leave_While(self, original_node: cst.While) -> None:
        self._loops[-1].pop()

    def visit_Call(self, node: cst.Call) -> None:
        if self._loops[-1] and type(node.func) is cst.Attribute and type(node.func.value) is cst.Name:
            self._method_calls.append((node, self._loops[-1][-1]))

    def leave_Module(self, original_node: cst.Module) -> None:
        events = self.model.events_through_calls
        self._callers = Callers(self.model.names, events)
        steps = [e for e in events.of_kind("step") if isinstance(e, Step) and not e.site.in_lambda]
        stepped = [(step, stepped_optimizer(step, self.model.optimizers, self.model.events_through_calls)) for step in steps]
        reported: set[int] = set()
        # the steps of each construction's own optimizer: a file builds and steps hundreds, each build asks
        by_constructor: dict[int, list[tuple[Step, tuple]]] = {}
        for step, found in stepped:
            if found is not None:
                by_constructor.setdefault(id(found[1].constructor), []).append((step, found))
        for built in events.of_kind("optimizer"):
            assert isinstance(built, OptimizerBuilt)
            if built.site.in_lambda:
                continue
            # built in a helper (spliced in at its call): the value of that call may be stepped too
            candidates = stepped if events.via(built) else by_constructor.get(id(built.node), [])
            mine = [step for step, found in candidates if found is not None and self._built_by(found, built)
                    and not events.one_call(built, step)]  # built and stepped by one helper: judged in its body
            found_pass = self._every_pass(built, mine)
            if found_pass is not None:
                reported.add(id(built.node))
                self.report(built.node, _message(built.node, mine[0], *found_pass))
        for step, found in stepped:
            if found is None or found[1].origin != "factory" or not step.site.any_loops:
                continue
            value = self._bound_in_loop(found[0], step.site.any_loops[-1])
            if value is not None and id(value) not in reported:
                reported.add(id(value))
                self.report(value, _message(value, step, f"`{loop_header(step.site.any_loops[-1])}`"))

    def _built_by(self, found, built: OptimizerBuilt) -> bool:
        """The stepped optimizer is that construction, or the value of the call a helper builds it in
        (`opt = make_optimizer(model)`, its construction spliced in at the call)."""
        if found[1].constructor is built.node:
            return True
        expression = found[0]
        return bool(self.model.events_through_calls.via(built)) and type(expression) is cst.Name and (
            expression in self.model.names.uses and self.model.names.single_value(expression) is built.node)

    def _every_pass(self, built: OptimizerBuilt, steps: list[Step]) -> Optional[tuple[str, bool, bool]]:
        """How to name the loop whose every pass builds the optimizer, whether the learning rate it is given
        changes pass to pass, and whether the steps run in an inner loop (a rebuild per epoch); or None."""
        events = self.model.events_through_calls
        for step in steps:
            if not set(built.site.branches) <= set(step.site.branches):
                continue  # built on some passes only: a rebuild at a milestone, a lazy init
            if built.site.any_loops:
                loop = built.site.any_loops[-1]
                if loop not in step.site.any_loops or self._fresh_parameters(built, loop):
                    continue
                schedules = self._lr_changes(built, loop)
                if step.site.any_loops[-1] is loop or schedules:  # nested: a stage, unless only to move the lr
                    return f"`{loop_header(loop)}`", schedules, step.site.any_loops[-1] is not loop
            function = built.site.function
            if function is None or step.site.any_loops or step.site.function is not function:
                continue
            is_method = built.site.cls is not None and len(built.site.functions) == 1
            for call in events.calls_of(function.name.value):
                if call.on_self == is_method and call.site.any_loops and not call.site.in_lambda:
                    return f"`{loop_header(call.site.any_loops[-1])}` (through `{function.name.value}()`)", False, False
            if is_method:
                for node, loop in self._method_calls:
                    if self._callers.method_called(node) is function:
                        return f"`{loop_header(loop)}` (through `{code_for(node.func)}()`)", False, False  # type: ignore[arg-type]
        return None

    def _lr_changes(self, built: OptimizerBuilt, loop: cst.CSTNode) -> bool:
        """The learning rate handed to the construction changes pass to pass (`lr=base * 0.1 ** (epoch // 30)`)."""
        names = self.model.names
        scope = names.scope_of(built.site.function) if built.site.function is not None else names.module_scope
        lr = learning_rate_argument(built.node)
        return scope is not None and lr is not None and changes_each_pass(lr, loop, scope, self.model.events_through_calls.loop_span(loop))

    def _fresh_parameters(self, built: OptimizerBuilt, loop: cst.CSTNode) -> bool:
        """The tensors it optimizes are other objects on each pass (`learner = deepcopy(model)`, the loop's own
        target): `per_pass.fresh_each_pass`."""
        names = self.model.names
        scope = names.scope_of(built.site.function) if built.site.function is not None else names.module_scope
        if scope is None or type(built.node) is not cst.Call or not built.node.args:
            return False
        span = self.model.events_through_calls.loop_span(loop)  # type: ignore[arg-type]
        return fresh_each_pass(built.node.args[0].value, loop, scope, span, names, built.site.cls)

    def _bound_in_loop(self, expression: cst.BaseExpression, loop: cst.CSTNode) -> Optional[cst.BaseExpression]:
        """The factory call a stepped name was bound to by a statement of the loop body itself."""
        if type(expression) is not cst.Name:
            return None
        body = getattr(getattr(loop, "body", None), "body", ())
        for binding in self.model.names.reaching(expression):
            statement = binding.node
            if not any(type(line) is cst.SimpleStatementLine and any(s is statement for s in line.body) for line in body):
                continue
            value = binding.bound_value
            if type(value) is cst.Call:
                return value
        return None


def _message(call: cst.CSTNode, step: Step, where: str, schedules: bool = False, per_stage: bool = False) -> str:
    text = code_for(call) if len(code_for(call)) <= 60 else code_for(call)[:57] + "..."
    reset = "(no momentum, Adam moments or step count)"
    if per_stage:
        head = (f"`{text}` builds a new optimizer on every pass of {where} only to change the learning rate, so "
                f"each pass's first `{code_for(step.node)}` starts from empty state {reset}")
    else:
        head = f"`{text}` builds a new optimizer on every pass of {where}, so each `{code_for(step.node)}` starts from empty state {reset}"
    if schedules:
        return (head + "; build it once before the loop and change the rate in place (`for group in optimizer.param_groups: "
                'group["lr"] = ...`) or with a `torch.optim.lr_scheduler`')
    return head + "; build it once before the loop"
