"""SF201 cuda-cleanup-in-step: `torch.cuda.empty_cache()` on every training step, or twice in one step.

Two findings, both at the `empty_cache()` call:
- *duplicate*: a cleanup block in a step function or training-loop body that repeats an earlier one of
  the same step: the same cleanup calls (in any order, constants, logging calls and `synchronize()`
  ignored) under the same conditions (thresholds on a memory reading ignored; interval and phase gates
  and thresholds on a user setting not). Fix (safe):
  remove the later block, when it calls nothing the earlier one does not.
- *every step*: the call runs on every iteration of a training loop / every call of a step function,
  with no gate (interval, threshold, flag, exception handler) in between. Fix (unsafe): put it behind
  `if <step counter> % 100 == 0:` when a counter is in scope; otherwise report only.
What is a training loop, a step function and a gate is decided in `stabfix.model.structure`.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from typing import Mapping, Sequence, Union

import libcst as cst

from stabfix.model.imports import dotted_name
from stabfix.model.structure import (
    DEVICE_MODULES,
    MEMORY_IN_USE_CALLS,
    BranchFrame,
    Frame,
    FunctionFrame,
    LoopFrame,
    StepPath,
    loop_header,
    parent_map,
    skipped_by_interval_guard,
    target_names,
)
from stabfix.checker import Checker
from stabfix.findings import Fix
from stabfix.model import vocabulary as words

INTERVAL = 100

_DEVICE_MODULES = DEVICE_MODULES
_EMPTY_CACHE = {f"torch.{module}.empty_cache" for module in _DEVICE_MODULES} | {
    "torch_npu.npu.empty_cache",
    # library wrappers that do nothing but empty the device cache (and maybe gc.collect())
    "accelerate.utils.clear_device_cache",
    "accelerate.utils.memory.clear_device_cache",
    "diffusers.utils.torch_utils.empty_device_cache",
    "diffusers.utils.torch_utils.backend_empty_cache",
    "diffusers.training_utils.free_memory",
}
_CLEANUP_CALLS = _EMPTY_CACHE | {
    "gc.collect",
    *(
        f"torch.{module}.{name}"
        for module in _DEVICE_MODULES
        for name in (
            "synchronize",
            "ipc_collect",
            "reset_peak_memory_stats",
            "reset_max_memory_allocated",
            "reset_accumulated_memory_stats",
        )
    ),
}
# Waits for the GPU and frees nothing: a block that adds it still flushes the cache the same way.
_TIMING_ONLY_CALLS = {f"torch.{module}.synchronize" for module in _DEVICE_MODULES}
_TIMING_ONLY_PREFIX = "timing-only:"
_ORDERINGS = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)
_LOG_METHODS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "log", "write", "print"}
_LOG_FUNCTIONS = {"print", "warn", "pprint", "log"}
_MODULE_MOVES = {"to", "cpu", "cuda"}

Statement = Union[cst.SimpleStatementLine, cst.BaseCompoundStatement]


@dataclass
class _Site:
    call: cst.Call
    frames: tuple[Frame, ...]
    display: str  # how the user spelled the callee: `torch.cuda.empty_cache`, `ec`, `self._free_memory`
    callee: str | None = None  # for calls of this file's functions: the name of the function called


@dataclass
class _Unit:
    """The cleanup block a site belongs to: one `if` statement or a run of cleanup statements."""

    statements: tuple[Statement, ...]
    block: cst.CSTNode  # IndentedBlock or Module holding them
    calls: frozenset[str]  # its cleanup calls, constants erased
    conditions: frozenset[str]  # what must hold in the step for its cleanup to run

    @property
    def flushes(self) -> frozenset[str]:
        """The calls that decide what the block does to memory (not the timing-only ones)."""
        return frozenset(call for call in self.calls if not call.startswith(_TIMING_ONLY_PREFIX))


class CudaCleanupInStep(Checker):
    code = "SF201"
    tokens = ("empty_cache",)
    needs = ("steps",)

    def __init__(self, context) -> None:
        super().__init__(context)
        self.steps = self.model.steps
        self.sites: list[_Site] = []
        # functions / methods of this file whose whole body empties the cache
        self.cleanup_functions: set[str] = set()
        self.cleanup_methods: set[str] = set()

    # --- collecting ---------------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        if self._is_empty_cache(node):
            self.sites.append(_Site(node, self.steps.frames(), _spelling(node.func)))
            return
        func = node.func
        if isinstance(func, cst.Name) and func.value not in self.context.imports.aliases:
            callee = func.value
        elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            callee = f"self.{func.attr.value}"
        else:
            return
        # maybe a wrapper of empty_cache defined in this file; decided once the file is read
        self.sites.append(_Site(node, self.steps.frames(), callee, callee=callee))

    def _is_empty_cache(self, call: cst.Call) -> bool:
        func = call.func
        qualified = self.qualified_name(func)
        if qualified is not None:
            if qualified in _EMPTY_CACHE:
                return True
            # an imported project helper named for what it does: `from ..utils import empty_cache`
            if isinstance(func, cst.Name) and qualified.rsplit(".", 1)[-1] in (
                "empty_cache",
                "empty_device_cache",
                "clear_device_cache",
            ):
                return True
        if isinstance(func, cst.Name):
            return func.value in self.cleanup_functions
        if not isinstance(func, cst.Attribute):
            return False
        if func.attr.value != "empty_cache":
            return dotted_name(func) in self.cleanup_methods
        receiver = func.value
        if isinstance(receiver, cst.Call):
            # `get_accelerator().empty_cache()`, `getattr(torch, device_type).empty_cache()`
            callee = self.qualified_name(receiver.func) or dotted_name(receiver.func) or ""
            last = callee.rsplit(".", 1)[-1]
            if words.DEVICE_MODULE_GETTER.match(last):
                return True
            return last == "getattr" and bool(receiver.args) and dotted_name(receiver.args[0].value) == "torch"
        name = dotted_name(receiver)
        return name is not None and bool(words.DEVICE_HANDLE_NAME.search(name.rsplit(".", 1)[-1]))

    def _find_local_cleanup_functions(self) -> None:
        """Functions of this file whose whole body empties the cache.

        `def free_memory(): gc.collect(); torch.cuda.empty_cache()`: a call of it is a cleanup site too.
        """
        owners: dict[int, FunctionFrame] = {}
        for site in self.sites:
            function = next((f for f in reversed(site.frames) if isinstance(f, FunctionFrame)), None)
            if site.callee is None and function is not None:
                owners[id(function.node)] = function
        for function in owners.values():
            node = function.node
            body = (
                [s for s in node.body.body if not _is_docstring(s)] if isinstance(node.body, cst.IndentedBlock) else []
            )
            if (
                body
                and all(self._is_cleanup_statement(s, allow_logs_only=True) for s in body)
                and any(self._is_cleanup_statement(s) for s in body)
            ):
                if function.owner is None:
                    self.cleanup_functions.add(function.name)
                else:
                    self.cleanup_methods.add(f"self.{function.name}")

    # --- deciding -------------------------------------------------------------------------------
    def leave_Module(self, original_node: cst.Module) -> None:
        self._find_local_cleanup_functions()
        wrappers = self.cleanup_functions | self.cleanup_methods
        sites = [site for site in self.sites if site.callee is None or site.callee in wrappers]
        by_scope: dict[int, tuple[StepPath, list[_Site]]] = {}
        for site in sites:
            path = self.steps.step_path(site.frames)
            if path is not None:
                by_scope.setdefault(id(path.scope), (path, []))[1].append(site)
        for path, sites in by_scope.values():
            if path.kind == "step":
                self._check_scope(path.scope, sites)
            else:
                self._check_repeated_flushes(path.scope, sites)

    def _check_scope(self, scope: Union[LoopFrame, FunctionFrame], sites: list[_Site]) -> None:
        parents = parent_map(scope.node)
        reported: set[int] = set()
        earlier: list[tuple[_Site, _Unit]] = []
        paths = {id(site): self.steps.step_path(site.frames) for site in sites}
        for site in sites:
            path = paths[id(site)]
            if any(gate.kind == "except" for gate in path.gates):
                continue  # OOM recovery and error paths
            if self._at_phase_boundary(site.call, parents):
                continue  # a model is moved or swapped right here: one flush per swap is the point
            unit = self._unit(site.call, scope.node, parents, path)
            if unit is None or any(_same_nodes(seen.statements, unit.statements) for _, seen in earlier):
                continue  # not a cleanup block, or a second call inside a block already looked at
            for first_site, first_unit in earlier:
                if _repeats(unit, first_unit) and not _exclusive(paths[id(first_site)], path):
                    # removing the later block must not drop a call the earlier one does not make
                    fix = _removal_fix(unit, parents) if unit.calls <= first_unit.calls else None
                    self.report(site.call, self._duplicate_message(site, first_unit, scope), fix)
                    reported.add(id(site))
                    break
            earlier.append((site, unit))
        for site in sites:
            path = paths[id(site)]
            if id(site) in reported or not path.every_step:
                continue
            statement = _enclosing_statement(site.call, parents)
            if statement is None or skipped_by_interval_guard(self.steps, statement, scope.node, parents):
                continue
            if self._at_phase_boundary(site.call, parents):
                continue
            counter = self.steps.counter(path)
            if counter is not None and _rebound_between(path, counter):
                counter = None
            fix = self._gate_fix(site.call, counter, parents) if counter is not None else None
            self.report(site.call, self._every_step_message(site, path, counter), fix)

    def _check_repeated_flushes(self, scope: Union[LoopFrame, FunctionFrame], sites: list[_Site]) -> None:
        """An update loop (one iteration is one step) or a helper every step calls: a flush is reported when
        it runs on every item of an inner loop, or (update loops) after another flush of the same iteration.
        One flush per iteration, at the boundary between generation and training, is left alone."""
        parents = parent_map(scope.node)
        flushes: list[tuple[_Site, LoopFrame | None]] = []
        for site in sites:
            path = self.steps.step_path(site.frames)
            statement = _enclosing_statement(site.call, parents)
            if path is None or path.gates or statement is None or self._at_phase_boundary(site.call, parents):
                continue
            inner = next((frame for frame in path.between() if isinstance(frame, LoopFrame)), None)
            if (inner or isinstance(scope, LoopFrame)) and not skipped_by_interval_guard(
                self.steps, statement, scope.node, parents
            ):
                flushes.append((site, inner))
        where = (
            f"`{scope.name}()`, which a training step calls every time"
            if isinstance(scope, FunctionFrame)
            else f"the update loop `{loop_header(scope.node)}` (one iteration: draw a batch, roll out, update)"
        )
        harm = (
            "each flush hands the allocator's cached blocks back to the driver and the next phase allocates them "
            "again with slow, synchronizing `cudaMalloc` calls; keep at most one flush per iteration, at the "
            "boundary between generation and training, or put it behind an interval"
        )
        for position, (site, inner) in enumerate(flushes):
            if inner is not None:
                where_inner = f"every iteration of `{loop_header(inner.node)}` in {where}, so on every item"
                self.report(site.call, f"{_spelled(site)} runs on {where_inner} of each step: {harm}")
            elif position > 0:
                again = f"{where} flushes it {len(flushes)} times in every iteration"
                self.report(site.call, f"{_spelled(site)} flushes the CUDA cache again: {again}: {harm}")

    # --- cleanup blocks ---------------------------------------------------------------------------
    def _unit(
        self, call: cst.Call, scope_node: cst.CSTNode, parents: Mapping[int, cst.CSTNode], path: StepPath
    ) -> _Unit | None:
        expression = parents.get(id(call))
        if not isinstance(expression, cst.Expr) or expression.value is not call:
            return None
        container = parents.get(id(expression))
        if isinstance(container, cst.SimpleStatementSuite):
            statement: cst.CSTNode | None = parents.get(id(container))
        else:
            statement = container
        if statement is None or not self._is_cleanup_statement(statement):
            return None
        # climb to the outermost `if` that only does cleanup: `if cond: gc.collect(); empty_cache()`
        while True:
            owner = _owning_if(statement, parents)
            if owner is None or owner is scope_node or not self._is_cleanup_statement(owner):
                break
            statement = owner
        block = parents.get(id(statement))
        if not isinstance(block, (cst.IndentedBlock, cst.Module)):
            return None
        if isinstance(statement, cst.If):
            statements: tuple[Statement, ...] = (statement,)
        else:
            # a run of consecutive cleanup lines: `gc.collect()` / `torch.cuda.empty_cache()`
            siblings = list(block.body)
            position = next(i for i, item in enumerate(siblings) if item is statement)
            start, end = position, position + 1
            while start > 0 and _is_line(siblings[start - 1]) and self._is_cleanup_statement(siblings[start - 1]):
                start -= 1
            while end < len(siblings) and _is_line(siblings[end]) and self._is_cleanup_statement(siblings[end]):
                end += 1
            statements = tuple(siblings[start:end])
        return _Unit(statements, block, self._cleanup_calls(statements), self._conditions(path))

    def _cleanup_calls(self, statements: Sequence[Statement]) -> frozenset[str]:
        """The cleanup calls a block makes, wherever they sit in it (device checks and order do not matter)."""
        found: set[str] = set()
        checker = self

        class _Collector(cst.CSTVisitor):
            def visit_Expr(self, node: cst.Expr) -> None:
                if checker._is_cleanup_small(node):
                    qualified = checker.qualified_name(node.value.func) or ""
                    marker = _TIMING_ONLY_PREFIX if qualified in _TIMING_ONLY_CALLS else ""
                    found.add(marker + _canonical([cst.SimpleStatementLine(body=[node])]))

        for statement in statements:
            statement.visit(_Collector())
        return frozenset(found)

    # --- conditions -----------------------------------------------------------------------------------
    def _conditions(self, path: StepPath) -> frozenset[str]:
        """The conditions between the step and the site, split at `and`, device checks left out.

        Two blocks run together only on steps where both their conditions hold: `step % eval_every == 0`
        and `step % save_every == 0` pick different steps, `mem() > 8.0` and `mem() > 12.0` the same ones,
        `args.level >= 1` and `args.level >= 2` (a user setting, not a memory reading) different runs.
        """
        function = next((f for f in reversed(path.frames) if isinstance(f, FunctionFrame)), None)
        conditions: set[str] = set()
        for gate in path.gates:
            test = getattr(gate.node, "test", None)
            if gate.kind == "if" and test is not None:
                conditions.update(self._condition_key(part, function) for part in self._conjuncts(test))
            elif gate.kind == "else" and test is not None:
                conditions.add("not " + self._condition_key(test, function))
            else:
                conditions.add(f"{gate.kind} #{id(gate.node)}")  # a `case` or loop `else`: only itself
        return frozenset(conditions)

    def _conjuncts(self, test: cst.BaseExpression) -> list[cst.BaseExpression]:
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self._conjuncts(test.left) + self._conjuncts(test.right)
        return [] if self.steps.is_device_check(test) else [test]

    def _condition_key(self, test: cst.BaseExpression, function: FunctionFrame | None) -> str:
        """The condition with layout erased, and memory thresholds too: the constants compared with `<`/`>`
        to a memory reading (a threshold on a user setting is kept: each value is its own gate)."""
        checker = self

        class _Thresholds(cst.CSTTransformer):
            def __init__(self) -> None:
                super().__init__()
                self.orderings = 0

            def _on_memory(self, node: cst.Comparison) -> bool:
                operands = [node.left, *(target.comparator for target in node.comparisons)]
                return _is_ordering(node) and any(checker.steps.reads_memory(op, function) for op in operands)

            def visit_Comparison(self, node: cst.Comparison) -> None:
                self.orderings += self._on_memory(node)

            def leave_Comparison(self, original: cst.Comparison, updated: cst.Comparison) -> cst.BaseExpression:
                self.orderings -= self._on_memory(original)
                return updated

            def leave_Integer(self, original: cst.Integer, updated: cst.Integer) -> cst.BaseExpression:
                return cst.Name("THRESHOLD") if self.orderings else updated

            def leave_Float(self, original: cst.Float, updated: cst.Float) -> cst.BaseExpression:
                return cst.Name("THRESHOLD") if self.orderings else updated

            def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
                if checker.qualified_name(original.func) in MEMORY_IN_USE_CALLS:
                    return cst.Name("DEVICE_MEMORY_IN_USE")
                return updated

        normalized = test.visit(_Thresholds())
        code = cst.Module(body=[]).code_for_node(normalized)
        try:
            return ast.dump(ast.parse(code.strip(), mode="eval"), annotate_fields=False, include_attributes=False)
        except SyntaxError:
            return " ".join(code.split())

    def _is_cleanup_statement(self, statement: cst.CSTNode, *, allow_logs_only: bool = False) -> bool:
        """Statements that only free memory (and log about it), with at least one freeing call."""
        if isinstance(statement, cst.SimpleStatementLine):
            smalls = list(statement.body)
            return all(self._is_cleanup_small(small) or self._is_log_small(small) for small in smalls) and (
                allow_logs_only or any(self._is_cleanup_small(small) for small in smalls)
            )
        if isinstance(statement, cst.If):
            body = statement.body
            if isinstance(body, cst.SimpleStatementSuite):
                smalls = list(body.body)
                content = all(self._is_cleanup_small(s) or self._is_log_small(s) for s in smalls) and any(
                    self._is_cleanup_small(s) for s in smalls
                )
            else:
                inner = list(body.body)
                content = all(self._is_cleanup_statement(s, allow_logs_only=True) for s in inner) and any(
                    self._is_cleanup_statement(s) for s in inner
                )
            if not content:
                return False
            if statement.orelse is None:
                return True
            other = statement.orelse.body if isinstance(statement.orelse, cst.Else) else statement.orelse
            if isinstance(other, cst.If):
                return self._is_cleanup_statement(other, allow_logs_only=True)
            return all(self._is_cleanup_statement(s, allow_logs_only=True) for s in getattr(other, "body", ()))
        return False

    def _is_cleanup_small(self, small: cst.BaseSmallStatement) -> bool:
        if isinstance(small, cst.Pass):
            return False
        if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
            return False
        call = small.value
        return self._is_empty_cache(call) or self.qualified_name(call.func) in _CLEANUP_CALLS

    def _is_log_small(self, small: cst.BaseSmallStatement) -> bool:
        if isinstance(small, cst.Pass):
            return True
        if not (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call)):
            return False
        return _is_log_call(small.value.func)

    # --- phase boundaries -------------------------------------------------------------------------
    def _at_phase_boundary(self, call: cst.Call, parents: Mapping[int, cst.CSTNode]) -> bool:
        """The cleanup sits right next to a model being moved, swapped or unloaded."""
        statement = _enclosing_statement(call, parents)
        if statement is None:
            return False
        block = parents.get(id(statement))
        siblings = list(getattr(block, "body", ()))
        position = next((i for i, item in enumerate(siblings) if item is statement), None)
        if position is None:
            return False
        neighbours = []
        for direction in (-1, 1):
            index = position + direction
            while 0 <= index < len(siblings) and self._is_cleanup_statement(siblings[index], allow_logs_only=True):
                index += direction
            if 0 <= index < len(siblings):
                neighbours.append(siblings[index])
        return any(_moves_or_swaps_model(neighbour) for neighbour in neighbours)

    # --- fixes ---------------------------------------------------------------------------------------
    def _gate_fix(self, call: cst.Call, counter: str, parents: Mapping[int, cst.CSTNode]) -> Fix | None:
        expression = parents.get(id(call))
        if not isinstance(expression, cst.Expr) or expression.value is not call:
            return None
        container = parents.get(id(expression))
        gate = cst.parse_expression(f"{counter} % {INTERVAL} == 0")
        description = f"run the cleanup only every {INTERVAL} steps (`if {counter} % {INTERVAL} == 0:`)"
        if isinstance(container, cst.SimpleStatementSuite):
            owner = parents.get(id(container))
            if (
                isinstance(owner, cst.If)
                and owner.orelse is None
                and self.steps.is_device_check(owner.test)
                and all(self._is_cleanup_small(s) or self._is_log_small(s) for s in container.body)
            ):
                return Fix("unsafe", description, {owner: owner.with_changes(test=_and(owner.test, gate))})
            return None
        if not isinstance(container, cst.SimpleStatementLine) or not self._is_cleanup_statement(container):
            return None
        block = parents.get(id(container))
        if not isinstance(block, (cst.IndentedBlock, cst.Module)):
            return None
        siblings = list(block.body)
        position = next(i for i, item in enumerate(siblings) if item is container)
        start, end = position, position + 1
        while start > 0 and _is_line(siblings[start - 1]) and self._is_cleanup_statement(siblings[start - 1]):
            start -= 1
        while end < len(siblings) and _is_line(siblings[end]) and self._is_cleanup_statement(siblings[end]):
            end += 1
        run = siblings[start:end]
        owner = parents.get(id(block))
        if (
            isinstance(owner, cst.If)
            and owner.body is block
            and owner.orelse is None
            and len(run) == len(siblings)
            and self.steps.is_device_check(owner.test)
        ):
            return Fix("unsafe", description, {owner: owner.with_changes(test=_and(owner.test, gate))})
        first = run[0]
        wrapped = cst.If(
            test=gate,
            body=cst.IndentedBlock(body=[first.with_changes(leading_lines=()), *run[1:]]),
            leading_lines=first.leading_lines,
        )
        changes: dict[cst.CSTNode, object] = {first: wrapped}
        changes.update({line: cst.RemoveFromParent() for line in run[1:]})
        return Fix("unsafe", description, changes)

    # --- messages -------------------------------------------------------------------------------------
    def _duplicate_message(self, site: _Site, first: _Unit, scope: Union[LoopFrame, FunctionFrame]) -> str:
        return (
            f"{_spelled(site)} here is a second copy of the cleanup block `{_describe_unit(first.statements)}` "
            f"earlier in {self.steps.describe(scope)} (same cleanup calls under the same conditions, ignoring "
            "memory thresholds, statement order and log messages): every step that runs them flushes the CUDA cache "
            "twice, which frees nothing the step can reuse and makes the allocator request the same memory from "
            "the driver again; keep one block and remove this one"
        )

    def _every_step_message(self, site: _Site, path: StepPath, counter: str | None) -> str:
        where = self.steps.describe(path.scope)
        when = "every call of" if isinstance(path.scope, FunctionFrame) else "every iteration of"
        advice = "run it at phase boundaries only (after eval, once per epoch) or behind an interval"
        if counter is not None:
            advice += f" such as `if {counter} % {INTERVAL} == 0:`"
        else:
            advice += (
                "; there is no step counter in scope: add one (e.g. `for step, batch in enumerate(loader):`) "
                f"and use `if step % {INTERVAL} == 0:`"
            )
        return (
            f"{_spelled(site)} runs on {when} {where}: it hands the allocator's cached blocks back to the "
            "driver, so the next step has to allocate them from the driver again (slow `cudaMalloc` calls that "
            f"synchronize with the GPU) while freeing no memory the training can use; {advice}"
        )


# --- helpers ------------------------------------------------------------------------------------------


def _same_nodes(first: Sequence[cst.CSTNode], second: Sequence[cst.CSTNode]) -> bool:
    return len(first) == len(second) and all(a is b for a, b in zip(first, second, strict=True))


def _repeats(later: _Unit, earlier: _Unit) -> bool:
    """Both blocks flush the same way and run on the same steps.

    A block behind a condition the other does not share (another interval, another phase) is not a copy:
    each is its own phase-boundary cleanup.
    """
    return later.flushes == earlier.flushes and later.conditions == earlier.conditions


def _is_ordering(comparison: cst.Comparison) -> bool:
    return all(isinstance(target.operator, _ORDERINGS) for target in comparison.comparisons)


def _rebound_between(path: StepPath, counter: str) -> bool:
    """An inner loop between the scope and the site reuses the counter's name.

    `for i in range(3):` inside `for i, batch in enumerate(loader):` would make `i % 100` wrong.
    """
    root = counter.split(".", 1)[0]
    for frame in path.between():
        if isinstance(frame, LoopFrame) and isinstance(frame.node, cst.For):
            if any(isinstance(node, cst.Name) and node.value == root for node in target_names(frame.node.target)):
                return True
    return False


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _spelling(func: cst.BaseExpression) -> str:
    text = dotted_name(func) or cst.Module(body=[]).code_for_node(func)
    return text if len(text) <= 50 else "empty_cache"


def _spelled(site: _Site) -> str:
    return f"`{site.display}()`" + (" (which empties the CUDA cache)" if site.callee else "")


def _is_line(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine)


def _is_log_call(func: cst.BaseExpression) -> bool:
    if isinstance(func, cst.Name):
        return func.value in _LOG_FUNCTIONS
    if isinstance(func, cst.Attribute):
        name = dotted_name(func) or ""
        return func.attr.value in _LOG_METHODS or name.startswith(("logging.", "warnings."))
    return False


def _enclosing_statement(node: cst.CSTNode, parents: Mapping[int, cst.CSTNode]) -> cst.CSTNode | None:
    current: cst.CSTNode | None = node
    while current is not None and not isinstance(current, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        current = parents.get(id(current))
    return current


def _owning_if(statement: cst.CSTNode, parents: Mapping[int, cst.CSTNode]) -> cst.If | None:
    """The `if` whose body (or `else`/`elif`) directly holds statement."""
    current = parents.get(id(statement))
    while isinstance(current, (cst.IndentedBlock, cst.SimpleStatementSuite, cst.Else)):
        current = parents.get(id(current))
    return current if isinstance(current, cst.If) else None


def _exclusive(first: StepPath, second: StepPath) -> bool:
    """The two sites sit in different branches of one `if`/`match`: one step never runs both."""
    branches = {id(frame.node): frame.kind for frame in first.frames if isinstance(frame, BranchFrame)}
    for frame in second.frames:
        if isinstance(frame, BranchFrame) and id(frame.node) in branches and branches[id(frame.node)] != frame.kind:
            return True
    cases = {id(frame.node) for frame in first.frames if isinstance(frame, BranchFrame) and frame.kind == "case"}
    other_cases = {id(frame.node) for frame in second.frames if isinstance(frame, BranchFrame) and frame.kind == "case"}
    return bool(cases) and bool(other_cases) and cases.isdisjoint(other_cases)


def _canonical(statements: Sequence[Statement]) -> str:
    """The block's structure with comments, layout, constants and logging calls erased."""
    code = cst.Module(body=list(statements)).code
    try:
        tree = ast.parse(textwrap.dedent(code))
    except SyntaxError:
        return code
    tree = _Normalizer().visit(tree)
    return ast.dump(tree, annotate_fields=False, include_attributes=False)


class _Normalizer(ast.NodeTransformer):
    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        return ast.Constant(value=type(node.value).__name__ if not isinstance(node.value, (int, float)) else "number")

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        return ast.Constant(value="str")

    def visit_Expr(self, node: ast.Expr) -> ast.AST | None:
        if isinstance(node.value, ast.Call) and _is_ast_log_call(node.value.func):
            return None
        return self.generic_visit(node)


def _is_ast_log_call(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id in _LOG_FUNCTIONS
    if isinstance(func, ast.Attribute):
        root = func
        while isinstance(root, ast.Attribute):
            root = root.value
        return func.attr in _LOG_METHODS or (isinstance(root, ast.Name) and root.id in ("logging", "warnings"))
    return False


def _removal_fix(unit: _Unit, parents: Mapping[int, cst.CSTNode]) -> Fix:
    description = "remove the duplicated cleanup block"
    statements = unit.statements
    block = unit.block
    if isinstance(block, cst.IndentedBlock) and len(statements) == len(block.body):
        first = statements[0]
        placeholder = cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=first.leading_lines)
        changes: dict[cst.CSTNode, object] = {first: placeholder}
        changes.update({statement: cst.RemoveFromParent() for statement in statements[1:]})
        return Fix("safe", description, changes)
    return Fix("safe", description, {statement: cst.RemoveFromParent() for statement in statements})


def _and(test: cst.BaseExpression, gate: cst.BaseExpression) -> cst.BaseExpression:
    needs_parens = isinstance(test, (cst.BooleanOperation, cst.IfExp, cst.Lambda, cst.NamedExpr)) and not test.lpar
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        needs_parens = False
    if needs_parens:
        test = test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.BooleanOperation(left=test, operator=cst.And(), right=gate)


def _describe_unit(statements: Sequence[Statement]) -> str:
    """`if mem > 8.0:` for an `if` block, `gc.collect(); torch.cuda.empty_cache()` for a run of lines."""
    module = cst.Module(body=[])
    if isinstance(statements[0], cst.If):
        text = "if " + module.code_for_node(statements[0].test) + ":"
    else:
        text = "; ".join(module.code_for_node(small) for line in statements for small in line.body)
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def _moves_or_swaps_model(statement: cst.CSTNode) -> bool:
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            if isinstance(small, cst.Del) and _deletes_a_model(small.target):
                return True
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                func = small.value.func
                # a bare `x.to(...)`/`x.cpu()` statement only does something to a module:
                # tensors are not moved in place
                if isinstance(func, cst.Attribute) and func.attr.value in _MODULE_MOVES:
                    return True
    found = False

    class _Finder(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found
            func = node.func
            last = (
                func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
            )
            if any(word in last.lower() for word in words.MODEL_SWAP_WORDS):
                found = True

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

    if isinstance(statement, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        statement.visit(_Finder())
    return found


def _deletes_a_model(target: cst.BaseDelTargetExpression) -> bool:
    targets = [element.value for element in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
    for item in targets:
        name = dotted_name(item) if isinstance(item, (cst.Name, cst.Attribute)) else None
        if name is None:
            continue
        parts = set(name.rsplit(".", 1)[-1].lower().split("_"))
        if parts & words.MODEL_WORDS and not parts & words.TENSOR_WORDS:
            return True
    return False
