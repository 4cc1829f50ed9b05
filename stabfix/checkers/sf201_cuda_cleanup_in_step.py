"""SF201 cuda-cleanup-in-step: `torch.cuda.empty_cache()` on every training step, or twice in one step.

A query over the model: which calls flush a device cache and which cleanup block each belongs to
(`model.cleanup`, the `memory` part), which step it runs in and behind which gates (`model.structure`,
`model.gates`). Findings, all at the flush:
- *duplicate*: a cleanup block of a step repeats an earlier one of the same step: the same flushes under
  the same conditions (`gates.conditions`: memory thresholds erased, interval, phase and setting gates
  kept), not in exclusive branches. Fix (safe): remove the later block, when it calls nothing the
  earlier one does not.
- *every step*: the flush runs on every iteration of a training loop / every call of a step function,
  with no gate in between. Fix (unsafe): put it behind `if <step counter> % 100 == 0:` when a counter
  is in scope; otherwise report only.
- *several flushes per update*: in an update loop (one iteration is one step) or a helper every step
  calls, a flush on every item of an inner loop, or after another flush of the same iteration.
Flushes in `except` handlers and at phase boundaries (next to a model swap) are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import libcst as cst

from stabfix.checker import Checker
from stabfix.fixes.gating import interval_gate_fix, removal_fix
from stabfix.model.domain.cleanup import CleanupBlock
from stabfix.model.source.imports import dotted_name
from stabfix.model.source.places import Place, enclosing_statement
from stabfix.model.source.syntax import node_code
from stabfix.model.training import gates
from stabfix.model.training.step_frames import Frame, FunctionFrame, LoopFrame, StepPath, loop_header
from stabfix.model.training.step_recognition import STEP_TOKENS

INTERVAL = 100
Scope = Union[LoopFrame, FunctionFrame]


@dataclass
class _Site:
    call: cst.Call
    frames: tuple[Frame, ...]
    place: Place
    display: str = ""  # how the user spelled the callee: `torch.cuda.empty_cache`, `ec`, `self._free_memory`
    wrapper: bool = False  # a function of this file that empties the cache


class CudaCleanupInStep(Checker):
    code = "SF201"
    tokens = ("empty_cache",)
    also_needs = (STEP_TOKENS,)  # reported only on a step path, which needs one of them
    needs = ("steps", "memory")

    def __init__(self, context) -> None:
        super().__init__(context)
        self.steps = self.model.steps
        self.memory = self.model.memory
        self.candidates: list[_Site] = []

    def visit_Call(self, node: cst.Call) -> None:
        # whether it flushes is decided once the file is read (aliases and wrappers may come later)
        kind = type(node.func)  # exact types (see node_fields.node_kinds): every call of the file comes here
        if kind is cst.Name or kind is cst.Attribute:
            self.candidates.append(_Site(node, self.steps.frames(), self.steps.place()))

    def leave_Module(self, original_node: cst.Module) -> None:
        by_scope: dict[int, tuple[StepPath, list[_Site]]] = {}
        for site in self.candidates:
            if not self.memory.is_flush(site.call):
                continue
            path = self.steps.step_path(site.frames)
            if path is None:
                continue
            site.wrapper = not self.memory.is_flush(site.call, wrappers=False)
            site.display = _spelling(site.call.func)
            by_scope.setdefault(id(path.scope), (path, []))[1].append(site)
        for path, sites in by_scope.values():
            if path.kind == "step":
                self._check_step(path.scope, sites)
            else:
                self._check_repeated_flushes(path.scope, sites)

    def _check_step(self, scope: Scope, sites: list[_Site]) -> None:
        paths = {id(site): self.steps.step_path(site.frames) for site in sites}
        reported: set[int] = set()
        earlier: list[tuple[_Site, CleanupBlock, frozenset[str]]] = []
        for site in sites:
            path = paths[id(site)]
            if any(gate.kind == "except" for gate in path.gates) or self.memory.at_phase_boundary(site.place):
                continue  # OOM recovery and error paths; a model swapped right here: one flush per swap
            block = self.memory.cleanup_block(site.place, site.call, scope.node)
            if block is None or any(_same(seen.statements, block.statements) for _, seen, _ in earlier):
                continue  # not a cleanup block, or a second call inside a block already looked at
            conditions = gates.conditions(self.steps, path)
            for first_site, first, first_conditions in earlier:
                if (
                    block.flushes == first.flushes
                    and conditions == first_conditions
                    and not gates.never_both(paths[id(first_site)], path)
                ):
                    # removing the later block must not drop a call the earlier one does not make
                    fix = None
                    if block.calls <= first.calls:
                        fix = removal_fix(block.statements, block.block, "remove the duplicated cleanup block")
                    self.report(site.call, self._duplicate_message(site, first, scope), fix)
                    reported.add(id(site))
                    break
            earlier.append((site, block, conditions))
        for site in sites:
            path = paths[id(site)]
            if id(site) in reported or not path.every_step:
                continue
            statement = enclosing_statement(site.place)
            if statement is None or gates.skipped_by_interval_guard(self.steps, site.place, statement, scope.node):
                continue
            if self.memory.at_phase_boundary(site.place):
                continue
            counter = self.steps.counter(path)
            fix = None
            if counter is not None:
                fix = interval_gate_fix(
                    site.place, site.call, counter, INTERVAL, what="the cleanup",
                    belongs=self.memory.is_cleanup_statement, is_device_check=self.steps.is_device_check,
                )
            self.report(site.call, self._every_step_message(site, path, counter), fix)

    def _check_repeated_flushes(self, scope: Scope, sites: list[_Site]) -> None:
        """An update loop (one iteration is one step) or a helper every step calls: a flush is reported when
        it runs on every item of an inner loop, or (update loops) after another flush of the same iteration.
        One flush per iteration, at the boundary between generation and training, is left alone."""
        flushes: list[tuple[_Site, LoopFrame | None]] = []
        for site in sites:
            path = self.steps.step_path(site.frames)
            statement = enclosing_statement(site.place)
            if path is None or path.gates or statement is None or self.memory.at_phase_boundary(site.place):
                continue
            inner = next((frame for frame in path.between() if isinstance(frame, LoopFrame)), None)
            if (inner or isinstance(scope, LoopFrame)) and not gates.skipped_by_interval_guard(
                self.steps, site.place, statement, scope.node
            ):
                flushes.append((site, inner))
        where = (
            f"`{scope.name}()`, which a training step calls every time"
            if isinstance(scope, FunctionFrame)
            else f"the update loop `{loop_header(scope.node)}` (one iteration: draw a batch, roll out, update)"
        )
        harm = "keep at most one flush per iteration, at the generation/training boundary, or gate it behind an interval"
        for position, (site, inner) in enumerate(flushes):
            if inner is not None:
                where_inner = f"every iteration of `{loop_header(inner.node)}` in {where}, so on every item"
                self.report(site.call, f"{_spelled(site)} runs on {where_inner} of each step; {harm}")
            elif position > 0:
                again = f"{where} flushes it {len(flushes)} times in every iteration"
                self.report(site.call, f"{_spelled(site)} flushes the CUDA cache again: {again}; {harm}")

    # --- messages -------------------------------------------------------------------------------------
    def _duplicate_message(self, site: _Site, first: CleanupBlock, scope: Scope) -> str:
        return (
            f"{_spelled(site)} here is a second copy of the cleanup block `{_describe(first.statements)}` "
            f"earlier in {self.steps.describe(scope)}, so every step flushes the cache twice; "
            "keep one block and remove this one"
        )

    def _every_step_message(self, site: _Site, path: StepPath, counter: str | None) -> str:
        where = self.steps.describe(path.scope)
        when = "every call of" if isinstance(path.scope, FunctionFrame) else "every iteration of"
        if counter is not None:
            advice = f"behind `if {counter} % {INTERVAL} == 0:`"
        else:
            advice = f"behind an interval (add a step counter, e.g. `enumerate(loader)`, and `if step % {INTERVAL} == 0:`)"
        return (
            f"{_spelled(site)} runs on {when} {where}, so every step re-allocates the memory it hands back; "
            f"move it to a phase boundary (after eval, once per epoch) or put it {advice}"
        )


def _same(first: tuple, second: tuple) -> bool:
    return len(first) == len(second) and all(a is b for a, b in zip(first, second))


def _spelling(func: cst.BaseExpression) -> str:
    text = dotted_name(func) or node_code(func)
    return text if len(text) <= 50 else "empty_cache"


def _spelled(site: _Site) -> str:
    return f"`{site.display}()`" + (" (which empties the CUDA cache)" if site.wrapper else "")


def _describe(statements: tuple) -> str:
    """`if mem > 8.0:` for an `if` block, `gc.collect(); torch.cuda.empty_cache()` for a run of lines."""
    module = cst.Module(body=[])
    if type(statements[0]) is cst.If:
        text = "if " + module.code_for_node(statements[0].test) + ":"
    else:
        text = "; ".join(module.code_for_node(small) for line in statements for small in line.body)
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."
