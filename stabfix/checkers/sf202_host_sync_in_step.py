"""SF202 host-sync-in-step: the training step makes the host wait for the accelerator more than it must.

Host syncs come from the model (`syncs`: barriers, memory reports, health checks, reads to the host); the
step structure from `steps`. A sync that runs on every step (no interval, flag or phase gate; a module
flag bound only to `True` is no gate) is reported when it is
- a barrier (`torch.cuda.synchronize()`) or a memory report (`memory_summary()`): it computes nothing;
- on every item of an inner loop of the step (per micro-batch, per layer, per parameter), on a value
  computed in that loop: one full pipeline drain per item;
- one of several health checks of one step (`torch.isnan(x).any()` in an `if`, per layer or tensor).
One read of the loss per step (`loss.item()` for the progress bar) and one finiteness guard are the price
nearly every loop pays once; they are left alone. Fix (unsafe, barriers and memory reports that are a
statement of their own, where a step counter exists): put them behind `if <counter> % 100 == 0:`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from stabfix.checker import Checker
from stabfix.fixes.gating import interval_gate_fix
from stabfix.model.domain.cleanup import is_log_call
from stabfix.model.domain.host_sync import Sync, measures_without_training, per_item_loop
from stabfix.model.source.places import Place, enclosing_statement
from stabfix.model.source.syntax import node_code
from stabfix.model.training import gates
from stabfix.model.training.step_frames import Frame, FunctionFrame, LoopFrame, StepPath, loop_header
from stabfix.model.training.step_recognition import STEP_TOKENS

INTERVAL = 100
_SYNC_WORDS = {"synchronize", "memory_summary", "memory_snapshot", "_snapshot", "list_gpu_processes", "item",
               "tolist", "cpu", "to", "float", "int", "bool", "equal", "allclose", "wait_device_ops", "isnan", "isinf",
               "isfinite"}
_ACCELERATOR = re.compile(r"cuda|device|accelerat|xla|mps|lightning|Trainer|deepspeed|fabric")
_KIND_WORDS = {"barrier": "waits for the whole device queue", "snapshot": "builds a memory report on the host",
               "check": "is a health check that copies a device value to the host",
               "read": "copies a device value to the host"}


@dataclass
class _Site:
    node: cst.CSTNode
    frames: tuple[Frame, ...]
    place: Place
    test: bool = False  # a truth test rather than a call
    sync: Sync | None = None
    path: StepPath | None = None


class HostSyncInStep(Checker):
    code = "SF202"
    tokens = ("synchronize", ".item()", ".cpu()", ".tolist()", "float(", "isnan", "isfinite", "isinf",
              "memory_summary", "_snapshot", ".any()", ".all()", "equal(", "allclose(")
    also_needs = (STEP_TOKENS,)  # reported only on a step path or in a helper every step calls
    needs = ("steps", "syncs", "events")

    def __init__(self, context) -> None:
        super().__init__(context)
        self.steps = self.model.steps
        self.sites: list[_Site] = []
        self._calls: list[tuple[cst.Call, tuple, Place]] = []  # calls of functions/methods of the file

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        kind = type(func)  # exact types (see node_fields.node_kinds): every call of the file comes here
        last = func.attr.value if kind is cst.Attribute else func.value if kind is cst.Name else ""
        if last in _SYNC_WORDS or kind is cst.Name:
            self.sites.append(_Site(node, self.steps.frames(), self.steps.place()))
        if kind is cst.Name or (kind is cst.Attribute and type(func.value) is cst.Name):
            self._calls.append((node, self.steps.frames(), self.steps.place()))

    def _test(self, test: cst.BaseExpression) -> None:
        self.sites.append(_Site(test, self.steps.frames(), self.steps.place(), test=True))

    def visit_If(self, node: cst.If) -> None:
        self._test(node.test)

    def visit_While(self, node: cst.While) -> None:
        self._test(node.test)

    def visit_Assert(self, node: cst.Assert) -> None:
        self._test(node.test)

    def leave_Module(self, original_node: cst.Module) -> None:
        syncs, names = self.model.syncs, self.model.names
        on_device_code = bool(_ACCELERATOR.search(self.context.text))
        seen: set[int] = set()
        every: list[_Site] = []
        for site in self.sites:
            site.sync = syncs.truth_test_sync(site.node) if site.test else syncs.sync_of(site.node)
            statement = enclosing_statement(site.place)
            if site.sync is None or statement is None or id(statement) in seen:
                continue
            if site.sync.kind in ("read", "check") and not on_device_code:
                continue  # a CPU-only script: reading a value costs nothing
            path = self.steps.helper_path(site.frames)
            if path is None or gates.step_gates(self.steps, names, path) or gates.on_host_branch(site.frames):
                continue
            scope = path.scope.node
            if gates.skipped_by_interval_guard(self.steps, site.place, statement, scope) or gates.exited_early(
                self.steps, names, site.place, statement, scope,
                rare=lambda test: syncs.truth_test_sync(test) or gates.filters_items(self.steps, path, test)
            ):
                continue
            seen.add(id(statement))
            site.path = path
            every.append(site)
        callers = self._ungated_callers()
        checks: dict[int, int] = {}
        for site in every:
            if site.sync.kind == "check":
                key = id(site.path.scope)
                checks[key] = checks.get(key, 0) + max(1, len(callers.get(_callee(site.path), ())))
        for site in every:
            kind, path = site.sync.kind, site.path
            calls = callers.get(_callee(site.path), [])
            per_item = per_item_loop(self.steps, path, site.sync.value) or next(
                (loop for caller in calls for loop in [per_item_loop(self.steps, caller.path, None, any_value=True)] if loop), None)
            if kind in ("barrier", "snapshot"):  # unless it makes a CUDA-event timing true in a file that trains nothing
                if not measures_without_training(self.model.events, self.model.names, self.model.tree.calls):
                    self.report(site.node, self._message(site, calls, None), self._fix(site))
            elif per_item is not None:
                self.report(site.node, self._message(site, calls, per_item))
            elif kind == "check" and checks.get(id(path.scope), 0) >= 2:
                self.report(site.node, self._message(site, calls, None, checks[id(path.scope)]))

    def _ungated_callers(self) -> dict[str, list[_Site]]:
        """Name of a function of the file -> its calls that run on every step."""
        found: dict[str, list[_Site]] = {}
        for call, frames, place in self._calls:
            path = self.steps.helper_path(frames)
            if path is None or gates.live_gates(self.steps, self.model.names, path):
                continue
            func = call.func
            name = func.value if type(func) is cst.Name else func.attr.value if (  # exact types: every call of a step
                type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self") else None
            if name is not None:
                found.setdefault(name, []).append(_Site(call, frames, place, path=path))
        return found

    def _fix(self, site: _Site):
        counter = self.steps.counter(site.path)
        if counter is None or type(site.node) is not cst.Call:
            return None
        syncs = self.model.syncs

        def belongs(line: cst.CSTNode) -> bool:
            smalls = getattr(line, "body", ())
            return all(type(s) is cst.Expr and type(s.value) is cst.Call and (
                is_log_call(s.value.func) or (syncs.sync_of(s.value) or Sync("", s)).kind in ("barrier", "snapshot"))
                for s in smalls)

        return interval_gate_fix(site.place, site.node, counter, INTERVAL, belongs=belongs,
                                 is_device_check=self.steps.is_device_check, what="the sync")

    def _message(self, site: _Site, calls: list, per_item: LoopFrame | None, checks: int = 0) -> str:
        code = " ".join(node_code(site.node).split())
        code = code if len(code) <= 60 else code[:57] + "..."
        path = site.path
        where = self.steps.describe(path.scope)
        if path.kind == "callee" and calls:
            where = f"`{path.scope.name}()`, which {self._caller_text(calls)} calls {_times(len(calls))} every step,"
        what = f"`{code}` {_KIND_WORDS[site.sync.kind]}"
        if per_item is not None:
            inner = "" if per_item is path.scope else f" in {where.rstrip(',')}"
            return (f"{what} on every iteration of `{loop_header(per_item.node)}`{inner}, one device stall per "
                    "item of every step; keep values on the device (`.detach()`) and read them once per step or every N steps")
        if checks:
            return (f"{what}; {where} runs {checks} such checks per step, each a full host sync; check once "
                    "(`torch.isfinite(loss)`), every N steps, or behind a debug flag")
        counter = self.steps.counter(path)
        gate = f"`if {counter} % {INTERVAL} == 0:`" if counter else "a debug flag or an interval"
        timing = " (time steps with CUDA events)" if site.sync.kind == "barrier" else ""
        return f"{what} on every step in {where.rstrip(',')}; put it behind {gate}{timing}"

    def _caller_text(self, calls: list) -> str:
        scopes = {id(c.path.scope): c.path.scope for c in calls}
        return ", ".join(f"`{s.name}()`" if isinstance(s, FunctionFrame) else f"`{loop_header(s.node)}`"
                         for s in scopes.values())


def _times(count: int) -> str:
    return "once" if count == 1 else "twice" if count == 2 else f"{count} times"


def _callee(path: StepPath) -> str | None:
    return path.scope.name if path.kind == "callee" and isinstance(path.scope, FunctionFrame) else None
