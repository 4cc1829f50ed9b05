"""SF402 optimizer-step-undo: after `optimizer.step()`, the step is "undone" in place with `lr * p.grad`.

A query over the file's model: `events` gives the optimizer steps, gradient resets and clears, the
in-place tensor updates and the calls between functions (`events_through_calls`: a helper's step, backward
or clear counts where it is called, reported without a fix); `model.updates` which way an update moves a
tensor against its gradient; `model.parameters` whose parameters the updated tensors are; `optimizers`
what was stepped; `optimizer_tensors` whether the updated tensors are its parameters; `grad_clears` a
`zero_grad()` in between. The fix is `fixes.snapshot_restore`.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.fixes.snapshot_restore import deepcopy_spelling, replaceable_loop, snapshot_restore_fix
from stabfix.fixes.syntax import block_body, code_for, names_local_to, names_taken, starts_statement
from stabfix.model.calls.events import ParamUpdate, Site, Step, gradient_resets
from stabfix.model.calls.optimizers import OptimizerInfo
from stabfix.model.flow.parameters import ParameterLoops, names_in, parameter_loops, target_names
from stabfix.model.flow.updates import direction
from stabfix.shape import Shape


@dataclass
class _Found:
    """The optimizer step an undo refers to."""

    step: Step
    optimizer: OptimizerInfo
    expression: cst.BaseExpression  # the stepped optimizer as written at the step
    cleared_by: str | None  # `optimizer.zero_grad()` when gradients were cleared in between


class OptimizerStepUndo(Checker):
    code = "SF402"
    tokens = (".grad",)
    also_needs = (("step",),)  # an undo is only reported after an optimizer step (`.step(`, `optimizer_step`)
    tokens_elsewhere = (".grad", ".step(")  # a helper of another module may run the step (`events_through_calls`)
    needs = ("names", "optimizers", "events", "summaries", "events_through_calls", "optimizer_tensors", "grad_clears")

    @classmethod
    def shape_allows(cls, shape: Shape) -> bool:  # an update as `events` records one (a helper's is not spliced in here)
        return shape.updates_in_place(("add_", "sub_", "copy_", *shape.spellings("_foreach_add_", "_foreach_sub_")), ("add", "sub"))

    def leave_Module(self, original_node: cst.Module) -> None:
        events, names = self.model.events_through_calls, self.model.names  # a helper's step counts at its call
        assert events is not None and names is not None
        updates = events.of_kind("update")
        if not updates or not events.of_kind("step"):
            return
        found_after: list[tuple[ParamUpdate, int, ParameterLoops, _Found]] = []
        for update in updates:
            assert isinstance(update, ParamUpdate)
            sign = direction(update, names)
            loops = parameter_loops(update, names) if sign in (1, -1) else None
            if sign is None or loops is None:
                continue
            found = self._step_before(update.site, update, loops, sign)
            if found is not None:
                found_after.append((update, sign, loops, found))
                continue
            via = self._step_before_call_of(update, loops, sign)
            if via is not None:
                self.report(update.node, _message(update, sign, *via), None)
        # one snapshot per step: fixed when all the undos after a step sit in one loop (or are one line)
        anchors: dict[int, set[int]] = {}
        for update, _, loops, found in found_after:
            anchors.setdefault(id(found.step), set()).add(id(loops.chain[0]) if loops.chain else id(update.node))
        fixed_steps: set[int] = set()
        for update, sign, loops, found in found_after:
            fix = None
            if len(anchors[id(found.step)]) == 1 and id(found.step) not in fixed_steps:
                fix = self._fix(original_node, update, found, loops)
                if fix is not None:
                    fixed_steps.add(id(found.step))
            self.report(update.node, _message(update, sign, found, None), fix)

    def _step_before(self, site: Site, update: ParamUpdate, loops: ParameterLoops, sign: int) -> _Found | None:
        """The latest optimizer step that runs before `site` in the same function with the same gradients."""
        here = self.model.events_through_calls.in_function(site.function)
        resets = [event.site.order for event in gradient_resets(here)]
        for step in sorted((e for e in here if isinstance(e, Step)), key=lambda s: -s.site.order):
            if step.site.order >= site.order or step.site.never_both_run(site) or step.site.leaves_before(site):
                continue
            if any(step.site.order < reset < site.order for reset in resets):
                return None  # gradients were recomputed in between
            for candidate in step.candidates:
                optimizer = self.model.optimizers.resolve(candidate, step.site.scope)
                if optimizer is None:
                    continue
                if not self.model.optimizer_tensors.trains(optimizer, loops, update, candidate):
                    return None
                if sign == 1 and optimizer.known_plain_sgd:
                    return None  # `p -= lr * grad` was exactly the step: adding it back undoes it
                if sign == -1 and not self.model.optimizer_tensors.owns(optimizer, candidate, loops, update):
                    return None  # a descent step on tensors that may not be this optimizer's
                cleared = self.model.grad_clears.zero_grad_between(here, step.site.order, site.order)
                return _Found(step, optimizer, candidate, code_for(cleared.node) if cleared is not None else None)
        return None

    def _step_before_call_of(self, update: ParamUpdate, loops: ParameterLoops, sign: int) -> tuple[_Found, str] | None:
        """A helper that does the undo, called right after an optimizer step in another function."""
        events, function = self.model.events, update.site.function
        if function is None or not loops.chain or events.in_function(function, "step"):
            return None
        if any(reset.site.order < update.site.order
               for reset in gradient_resets(self.model.events_through_calls.in_function(function))):
            return None
        is_method = update.site.cls is not None and len(update.site.functions) == 1
        for call in events.calls_of(function.name.value):
            if call.site.function is function or call.on_self != is_method:
                continue
            if is_method and call.site.cls is not update.site.cls:
                continue
            found = self._step_before(call.site, update, loops, sign)
            if found is not None:
                return found, call.site.function.name.value if call.site.function else "module level"
        return None

    # --- the fix ----------------------------------------------------------------------------------
    def _fix(self, module: cst.Module, update: ParamUpdate, found: _Found, loops: ParameterLoops) -> Fix | None:
        events, names, step = self.model.events, self.model.names, found.step
        if self.model.events_through_calls.via(step):
            return None  # a helper's step: a snapshot before its call would also cover all else it does
        line = step.site.statement
        if line is None or not starts_statement(line, step.node) or not self._snapshot_reaches(step.site, update.site):
            return None  # no line of its own to put the snapshot before, or it may not run before the undo
        if loops.listed or update.tensor is None:
            return None  # `params[name]`, `_foreach_add_(params, ...)`: the collection may be built after the step
        if loops.chain:
            outer = loops.chain[0]
            if any(loop.asynchronous is not None for loop in loops.chain):
                return None
            if events.loop_site(outer).order < step.site.order:
                return None
            replaced: cst.CSTNode = outer
            needed = set().union(*(names_in(loop.iter) for loop in loops.chain))
            needed -= set().union(*(target_names(loop.target) for loop in loops.chain))
            start = events.loop_site(outer).names_order
        else:
            statement = update.site.statement
            if statement is None or len(statement.body) != 1:
                return None
            if not any(statement is other for other in block_body(update.site.blocks[-1])):
                return None
            replaced, needed, start = statement, names_in(update.tensor), update.site.names_order
        scope_node = update.site.function or module
        scope = names.scope_of(scope_node)
        if scope is None:
            return None
        # Names the snapshot reads must hold the same objects before the step as at the undo.
        for name in needed | names_in(found.expression):
            if any(step.site.names_order < b.order < start for b in scope.bindings.get(name, [])):
                return None
        if loops.chain:
            undo_nodes = {id(e.node) for e in events.of_kind("update") if isinstance(e, ParamUpdate) and e.param == update.param}
            loop_locals = names_local_to(names, scope_node, events.loop_span(loops.chain[0]))
            if not replaceable_loop(loops.chain[0], update.param, undo_nodes, loop_locals):
                return None
        deepcopy = deepcopy_spelling(self.context.imports, names)
        if deepcopy is None:
            return None
        taken = names_taken(names, scope_node)
        return snapshot_restore_fix(module, line, replaced, update.param, loops.chain, found.expression, deepcopy, taken)

    def _snapshot_reaches(self, step: Site, update: Site) -> bool:
        """Whether code put right before the step always runs before the undo: the step's block encloses
        the undo, or only `with` bodies (which always run) stand between them."""
        update_blocks = {id(block) for block in update.blocks}
        for block in reversed(step.blocks):
            if id(block) in update_blocks:
                return True
            if not self.model.events.is_with_body(block):
                return False
        return False


# --- message ------------------------------------------------------------------------------------------
def _message(update: ParamUpdate, sign: int, found: _Found, caller: str | None) -> str:
    statement = code_for(update.node).strip()
    statement = statement[:57] + "..." if len(statement) > 60 else statement
    name = code_for(found.expression) if caller is None else found.optimizer.expression
    klass = found.optimizer.class_name
    where = f"`{name}.step()`" + (f" (in `{caller}`)" if caller else "")
    if sign == -1:
        problem = "that takes a second step instead of undoing the first"
    elif klass is None:
        problem = "that is exact only for plain SGD, and the optimizer state stays advanced"
    else:
        problem = f"`{name}` is {klass}, whose step is not lr * grad, and its state stays advanced"
    if found.cleared_by:
        problem += f" (`{found.cleared_by}` cleared the gradients first)"
    return (
        f"`{statement}` tries to undo {where} with gradient math; {problem}. "
        f"Instead, snapshot the parameters and `{name}.state_dict()` before the step and restore both"
    )
