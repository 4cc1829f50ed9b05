"""SF106 eval-without-no-grad: evaluation forwards run with autograd on.

A query over the `modes` part: an eval switch (`model.eval()`, `model.train(False)`) and the statements
it governs (up to `model.train()`); reported at the first forward of that model there that runs with
autograd on, when the region runs no backward pass or optimizer step and asks for no gradients, and
nothing it binds is differentiated later in the function. Silent when autograd is already off where
the switch runs (a `no_grad`/`inference_mode` block or decorator), in Lightning's evaluation hooks
(Lightning runs them under `no_grad`), and when every call of the function in the file sits under
`no_grad`, callers of callers included (the `summaries` part's `always_called_without_grad`).
Fix: add `@torch.no_grad()` to the function when it trains nothing at all and the region runs to its
end; otherwise wrap the region's statements, from the first forward to the last, in
`with torch.no_grad():`. Safe only when nothing that then runs under no_grad may differentiate, calls the
file cannot see into included (`model.grad_reach`); unsafe otherwise.
"""

from __future__ import annotations

import ast
from typing import Optional

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.fixes.syntax import code_for, parsed_expression
from stabfix.model.flow.grad_reach import GradReach
from stabfix.model.training.modes import Switch, in_harness, within
from stabfix.shape import LOOPS, Shape
from stabfix.shape_queries import eval_switches

# Lightning runs these hooks with autograd off.
LIGHTNING_NO_GRAD_HOOKS = frozenset({"validation_step", "test_step", "predict_step"})


class EvalWithoutNoGrad(Checker):
    code = "SF106"
    tokens = (".eval()", ".train(False)", ".backward(")  # the last: an evaluation phase that never switches modes
    needs = ("modes", "history", "events", "summaries", "evaluations")
    _torch: Optional[str] = None  # the fixes' spelling of `torch`, found once per file

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:
        # reported on a forward after `m.eval()` / `m.train(False)`, or in a loop of a function of the file that
        # the file calls (an evaluation phase that never switches modes)
        if eval_switches(shape):
            return True
        return any(shape.calls(f.name) and any(isinstance(n, LOOPS) for n in ast.walk(f))
                   for f in shape.nodes(ast.FunctionDef, ast.AsyncFunctionDef))

    def leave_Module(self, original_node: cst.Module) -> None:
        modes = self.model.modes
        reported: set[int] = set()
        for switch in modes.switches:
            if not switch.to_eval or switch.grad_off or self._framework_no_grad(switch.function) or in_harness(
                switch.function, switch.cls
            ):
                continue
            region = modes.region(switch)
            facts = modes.scan(region, switch.receiver)
            live = [call for call, grad_on in facts.forwards if grad_on and any(call is r for r in facts.repeated)]
            if not live or facts.backward or facts.needs_grad or switch.freezes or facts.frozen or id(live[0]) in reported:
                continue
            if facts.bound and self.model.history.feeds_backward(facts.bound, switch.function, after=switch.order):
                continue  # something computed in eval mode is differentiated later: not an evaluation
            if self._only_called_without_grad(switch.function):
                continue
            reported.add(id(live[0]))
            self.report(live[0], self._message(switch, live[0]), self._fix(switch, region, live))
        for function, parameter, forward in self.model.evaluations.unswitched():
            if id(forward) not in reported and not self._framework_no_grad(function):
                reported.add(id(forward))
                self.report(forward, self._unswitched_message(function, parameter, forward))

    def _unswitched_message(self, function: cst.FunctionDef, parameter: str, forward: cst.Call) -> str:
        return (
            f"`{code_for(forward.func)}(...)` runs `{parameter}` over data in `{function.name.value}()`, which trains "
            "nothing and whose callers train it, with autograd on: every evaluation forward records a graph and "
            "keeps its activations; wrap the evaluation in `with torch.no_grad():` (and switch to `.eval()`)"
        )

    def _framework_no_grad(self, function: Optional[cst.FunctionDef]) -> bool:
        return function is not None and function.name.value in LIGHTNING_NO_GRAD_HOOKS

    def _only_called_without_grad(self, function: Optional[cst.FunctionDef]) -> bool:
        """Every call of the function in this file runs where autograd is off (callers of callers too)."""
        return self.model.summaries.always_called_without_grad(function)

    def _message(self, switch: Switch, forward: cst.Call) -> str:
        where = f" in `{switch.function.name.value}()`" if switch.function is not None else ""
        call = code_for(forward)
        call = call if len(call) <= 40 else code_for(forward.func) + "(...)"
        return (
            f"`{call}` runs after `{switch.receiver}.eval()`{where} with autograd on, so every evaluation forward "
            "records a graph and keeps its activations; wrap the evaluation in `with torch.no_grad():`"
        )

    def _fix(self, switch: Switch, region: list[cst.CSTNode], live: list[cst.Call]) -> Optional[Fix]:
        line, block = self.model.modes.statement_of(switch)
        function = switch.function
        torch = self._torch_name()
        imports = () if torch != "torch" else ("torch",)
        if block is None or not region:
            return None
        siblings = list(block.body)
        whole = function is not None and block is function.body and region[-1] is siblings[-1]
        trains = self.model.events.in_function(function, "backward", "step") or (
            function is not None and self.model.summaries.of(function).effects_of("step"))  # an optimizer step in a function it calls
        if whole and not trains and not function.decorators:
            decorator = cst.Decorator(decorator=parsed_expression(f"{torch}.no_grad()"))
            fixed = function.with_changes(decorators=[decorator])
            safety, why = self._safety(list(function.body.body), switch.receiver)
            return Fix(safety, f"decorate the function with `@{torch}.no_grad()`{why}", {function: fixed}, imports=imports)
        holding = [i for i, statement in enumerate(region) if any(within(call, statement) for call in live)]
        if not holding or type(block) not in (cst.IndentedBlock, cst.Module):
            return None
        first, last = holding[0], holding[-1]
        wrapped = region[first:last + 1]
        if any(not isinstance(s, (cst.SimpleStatementLine, cst.BaseCompoundStatement)) for s in wrapped):
            return None
        head = wrapped[0]
        leading = getattr(head, "leading_lines", ())
        body = [head.with_changes(leading_lines=())] + list(wrapped[1:]) if leading else list(wrapped)
        statement = cst.With(
            items=[cst.WithItem(item=parsed_expression(f"{torch}.no_grad()"))],
            body=cst.IndentedBlock(body=body),
            leading_lines=leading,
        )
        start = siblings.index(head)
        new_body = siblings[:start] + [statement] + siblings[start + len(wrapped):]
        safety, why = self._safety(wrapped, switch.receiver)
        return Fix(safety, f"wrap the evaluation in `with {torch}.no_grad():`{why}", {block: block.with_changes(body=new_body)},
                   imports=imports)

    def _safety(self, statements: list[cst.CSTNode], receiver: str) -> tuple[str, str]:
        """Safe when nothing that would run under no_grad may differentiate, calls the file cannot see
        into included (an adversarial attack, a metric object); else unsafe, with the reason."""
        model = self.model
        forwards = {id(call) for call, _ in model.modes.scan(statements, receiver).forwards}
        reach = GradReach(model.names, model.values, model.modules.is_module, model.modes.is_update)
        why = reach.first(statements, forwards, receiver)
        return ("unsafe", f" (unsafe: {why})") if why else ("safe", "")

    def _torch_name(self) -> str:
        """The module-level name `torch` is imported as (`import torch as T`), else `torch` (imported by the fix)."""
        if self._torch is None:  # asked for every fix: read the module's bindings once
            self._torch = self._find_torch_name()
        return self._torch

    def _find_torch_name(self) -> str:
        bindings = self.model.names.module_scope.bindings
        aliases = sorted(name for name, found in bindings.items() if any(b.qualified == "torch" for b in found))
        return "torch" if not aliases or "torch" in aliases else aliases[0]

