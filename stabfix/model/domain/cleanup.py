"""What a block of statements does to device memory: cache flushes, cleanup blocks, phase boundaries.

Queried after the traversal, on the `names` binding model (calls resolved through imports, plain
aliases such as `flush = torch.cuda.empty_cache`, and the file's own functions):

- `is_flush(call)`: the call empties a device's caching allocator: `torch.cuda.empty_cache()` and
  its `mps`/`xpu`/`npu`/`accelerator` variants, library wrappers (`accelerate`'s
  `clear_device_cache`), a device-module handle (`get_accelerator().empty_cache()`,
  `getattr(torch, device).empty_cache()`), or a function of this file whose whole body is cleanup
  with a flush in it (`def free_memory(): gc.collect(); torch.cuda.empty_cache()`, `return
  torch.cuda.empty_cache()`, a wrapper of such a wrapper; by name, on `self`, or on an instance the
  file builds). A call of a cleanup wrapper is cleanup (`cleanup_wrapper`), and a block calling one
  compares with others by what the wrapper's body does (`canonical_calls`).
- `is_cleanup_statement(statement)`: the statement only frees memory (flushes, `gc.collect()`,
  `synchronize()`, `ipc_collect()`, peak-stat resets) and logs about it.
- `cleanup_block(place, call, scope)`: the block a cleanup call belongs to (the outermost `if` that only
  cleans up, or a run of cleanup lines), with its cleanup calls in canonical form (constants and
  logging erased; `synchronize()` marked timing-only: it frees nothing).
- `at_phase_boundary(place)`: the statement sits right next to a model being moved, swapped,
  offloaded or deleted (looking into the edge of a neighbouring `with` block), where one flush per
  swap is the point.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from typing import Optional, Sequence

import libcst as cst

from stabfix.model.source import vocabulary as words
from stabfix.model.source.imports import ImportTracker, dotted_name
from stabfix.model.source.instances import held_class, method_of_instance
from stabfix.model.source.names import Names
from stabfix.model.source.node_fields import visit_readonly
from stabfix.model.source.places import (
    Place,
    Statement,
    body_of,
    called_as_statement,
    enclosing_statement,
    owning_if,
    parent_in,
    position_in,
)
from stabfix.model.training.step_paths import DEVICE_MODULES

FLUSH_CALLS = {f"torch.{module}.empty_cache" for module in DEVICE_MODULES} | {
    "torch_npu.npu.empty_cache",
    # library wrappers that do nothing but empty the device cache (and maybe gc.collect())
    "accelerate.utils.clear_device_cache",
    "accelerate.utils.memory.clear_device_cache",
    "diffusers.utils.torch_utils.empty_device_cache",
    "diffusers.utils.torch_utils.backend_empty_cache",
    "diffusers.training_utils.free_memory",
}
# an imported project helper named for what it does: `from ..utils import empty_cache`
_FLUSH_HELPER_NAMES = ("empty_cache", "empty_device_cache", "clear_device_cache")
# Waits for the GPU and frees nothing: a block that adds it still flushes the cache the same way.
TIMING_ONLY_CALLS = {f"torch.{module}.synchronize" for module in DEVICE_MODULES}
CLEANUP_CALLS = FLUSH_CALLS | {"gc.collect"} | {
    f"torch.{module}.{name}"
    for module in DEVICE_MODULES
    for name in (
        "synchronize", "ipc_collect", "reset_peak_memory_stats", "reset_max_memory_allocated",
        "reset_accumulated_memory_stats",
    )
}
TIMING_ONLY = "timing-only:"  # prefix of a canonical call that frees nothing
_LOG_METHODS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "log", "write", "print"}
_LOG_FUNCTIONS = {"print", "warn", "pprint", "log"}
_MODULE_MOVES = {"to", "cpu", "cuda"}
_MAX_WRAPPING = 4  # cleanup wrappers calling cleanup wrappers, followed this deep


@dataclass(frozen=True, eq=False)
class CleanupBlock:
    """One `if` statement that only cleans up, or a run of consecutive cleanup lines."""

    statements: tuple[Statement, ...]
    block: cst.CSTNode  # the IndentedBlock or Module holding them
    calls: frozenset[str]  # its cleanup calls, canonical

    @property
    def flushes(self) -> frozenset[str]:
        """The calls that decide what the block does to memory (not the timing-only ones)."""
        return frozenset(call for call in self.calls if not call.startswith(TIMING_ONLY))


class DeviceMemory:
    def __init__(self, imports: ImportTracker, names: Names) -> None:
        self.imports = imports
        self.names = names
        self._wrappers: dict[cst.FunctionDef, bool] = {}
        self._flushing: dict[cst.FunctionDef, bool] = {}
        self._function_names: Optional[frozenset[str]] = None  # see `_may_be_method`

    # -- calls ---------------------------------------------------------------------------------------
    def qualify(self, expression: cst.BaseExpression) -> Optional[str]:
        return self.names.qualify(expression)

    def is_flush(self, call: cst.Call, *, wrappers: bool = True) -> bool:
        """The call empties a device cache, itself or (`wrappers`) through a function of this file."""
        func = call.func
        qualified = self.qualify(func)
        if qualified is not None:
            if qualified in FLUSH_CALLS:
                return True
            if type(func) is cst.Name and qualified.rsplit(".", 1)[-1] in _FLUSH_HELPER_NAMES:
                return True
        if type(func) is cst.Attribute and func.attr.value == "empty_cache" and self._is_device_handle(func.value):
            return True
        return wrappers and self.flush_wrapper(call) is not None

    def _is_device_handle(self, receiver: cst.BaseExpression, depth: int = 0) -> bool:
        """`X` of `X.empty_cache()` holds a torch device module, by its value: `torch.cuda` (any alias), a getter's
        result (`get_accelerator()`, `getattr(torch, device_type)`), a name or attribute of an instance of a class
        of this file every binding of which holds one; its name (`self.device_module`) only breaks the tie
        where the code does not show the value (a parameter, a config field, another file's object)."""
        if depth > 4:
            return False
        if type(receiver) is cst.Call:
            # `get_accelerator().empty_cache()`, `getattr(torch, device_type).empty_cache()`
            callee = self.qualify(receiver.func) or dotted_name(receiver.func) or ""
            last = callee.rsplit(".", 1)[-1]
            if words.DEVICE_MODULE_GETTER.match(last):
                return True
            return last == "getattr" and bool(receiver.args) and self.qualify(receiver.args[0].value) == "torch"
        qualified = self.qualify(receiver)
        if qualified is not None and qualified.startswith("torch."):
            return qualified[len("torch."):] in DEVICE_MODULES
        bindings = None
        if type(receiver) is cst.Name:
            bindings = self.names.reaching(receiver)
        elif type(receiver) is cst.Attribute and (owner := held_class(self.names, receiver.value)) is not None:
            bindings = self.names.attribute_reaching(owner, receiver.attr.value, receiver.value)  # type: ignore[arg-type]
        if bindings and all(b.bound_value is not None for b in bindings):
            return all(self._is_device_handle(b.bound_value, depth + 1) for b in bindings)  # type: ignore[arg-type]
        name = dotted_name(receiver)
        return name is not None and bool(words.DEVICE_HANDLE_NAME.search(name.rsplit(".", 1)[-1]))

    def flush_wrapper(self, call: cst.Call) -> Optional[cst.FunctionDef]:
        """The function of this file the call runs, when its whole body is cleanup with a flush in it
        (itself or through another such function: `def free(): return clear_cuda_cache()`)."""
        definition = self.cleanup_wrapper(call)
        if definition is None:
            return None
        if definition not in self._flushing:
            self._flushing[definition] = False  # a wrapper reaching itself again flushes nothing more
            self._flushing[definition] = any(
                self.is_flush(c) for s in _wrapper_body(definition) for c in _statement_calls(s)
            )
        return definition if self._flushing[definition] else None

    def cleanup_wrapper(self, call: cst.Call) -> Optional[cst.FunctionDef]:
        """The function of this file the call runs (by name, on `self`, on an instance the file builds:
        `Memory().free()`), when its whole body is cleanup (and logs about it), `return f()` included."""
        definition = self.names.definition_of(call) or (method_of_instance(self.names, call) if self._may_be_method(call) else None)
        if definition is None:
            return None
        if definition not in self._wrappers:
            self._wrappers[definition] = False  # a function calling itself is no cleanup wrapper
            body = _wrapper_body(definition)
            self._wrappers[definition] = (
                bool(body)
                and all(self.is_cleanup_statement(s, allow_logs_only=True) for s in body)
                and any(self.is_cleanup_statement(s) for s in body)
            )
        return definition if self._wrappers[definition] else None

    def _may_be_method(self, call: cst.Call) -> bool:
        """The call's attribute names a function of the file, which `method_of_instance` needs: asked of every
        call, it spares the others that lookup of the receiver's value."""
        if self._function_names is None:
            self._function_names = frozenset(node.name.value for node in self.names.scopes if type(node) is cst.FunctionDef)
        func = call.func
        return type(func) is cst.Attribute and func.attr.value in self._function_names

    def is_cleanup_call(self, call: cst.Call, *, wrappers: bool = True) -> bool:
        return (
            self.is_flush(call, wrappers=wrappers)
            or self.qualify(call.func) in CLEANUP_CALLS
            or (wrappers and self.cleanup_wrapper(call) is not None)
        )

    # -- statements ------------------------------------------------------------------------------------
    def is_cleanup_statement(
        self, statement: cst.CSTNode, *, allow_logs_only: bool = False, wrappers: bool = True
    ) -> bool:
        """The statement only frees memory (and logs about it), with at least one freeing call unless
        `allow_logs_only`; an `if` counts when its branches do."""
        if type(statement) in (cst.SimpleStatementLine, cst.SimpleStatementSuite):
            smalls = statement.body
            return all(self._cleans(s, wrappers) or _logs(s) for s in smalls) and (
                allow_logs_only or any(self._cleans(s, wrappers) for s in smalls)
            )
        if type(statement) is not cst.If:
            return False
        body = statement.body
        if type(body) is cst.SimpleStatementSuite:
            content = self.is_cleanup_statement(body, wrappers=wrappers)
        else:
            inner = body.body
            content = all(self.is_cleanup_statement(s, allow_logs_only=True, wrappers=wrappers) for s in inner) and any(
                self.is_cleanup_statement(s, wrappers=wrappers) for s in inner
            )
        if not content or statement.orelse is None:
            return content
        other = statement.orelse.body if type(statement.orelse) is cst.Else else statement.orelse
        if type(other) is cst.If:
            return self.is_cleanup_statement(other, allow_logs_only=True, wrappers=wrappers)
        return all(self.is_cleanup_statement(s, allow_logs_only=True, wrappers=wrappers) for s in body_of(other))

    def _cleans(self, small: cst.BaseSmallStatement, wrappers: bool) -> bool:
        call = _called(small)
        return call is not None and self.is_cleanup_call(call, wrappers=wrappers)

    def is_cleanup_line(self, statement: cst.CSTNode) -> bool:
        return type(statement) is cst.SimpleStatementLine and self.is_cleanup_statement(statement)

    def cleanup_run(self, siblings: tuple, position: int) -> tuple[int, int]:
        """The run of consecutive cleanup lines around `siblings[position]`, as a slice."""
        start, end = position, position + 1
        while start > 0 and self.is_cleanup_line(siblings[start - 1]):
            start -= 1
        while end < len(siblings) and self.is_cleanup_line(siblings[end]):
            end += 1
        return start, end

    def cleanup_block(self, place: Place, call: cst.Call, scope_node: cst.CSTNode) -> Optional[CleanupBlock]:
        """The cleanup block the call (a statement of its own) belongs to, within the scope."""
        container = called_as_statement(place, call)
        if container is None:
            return None
        statement = parent_in(place, container) if type(container) is cst.SimpleStatementSuite else container
        if statement is None or not self.is_cleanup_statement(statement):
            return None
        # climb to the outermost `if` that only does cleanup: `if cond: gc.collect(); empty_cache()`
        while True:
            owner = owning_if(place, statement)
            if owner is None or owner is scope_node or not self.is_cleanup_statement(owner):
                break
            statement = owner
        block = parent_in(place, statement)
        if type(block) not in (cst.IndentedBlock, cst.Module):
            return None
        if type(statement) is cst.If:
            statements: tuple[Statement, ...] = (statement,)
        else:
            siblings = body_of(block)
            start, end = self.cleanup_run(siblings, position_in(siblings, statement) or 0)
            statements = siblings[start:end]
        return CleanupBlock(statements, block, self.canonical_calls(statements))

    def canonical_calls(self, statements: Sequence[Statement], depth: int = 0) -> frozenset[str]:
        """The cleanup calls the statements make, wherever they sit in them (order and device checks aside)."""
        found: set[str] = set()
        for statement in statements:
            for call in _statement_calls(statement):
                wrapper = self.cleanup_wrapper(call)
                if wrapper is not None and depth < _MAX_WRAPPING:  # what the wrapper's body does, as if inline
                    found |= self.canonical_calls(_wrapper_body(wrapper), depth + 1)
                elif self.is_cleanup_call(call):
                    marker = TIMING_ONLY if self.qualify(call.func) in TIMING_ONLY_CALLS else ""
                    found.add(marker + canonical([cst.SimpleStatementLine(body=[cst.Expr(call)])]))
        return frozenset(found)

    # -- phase boundaries --------------------------------------------------------------------------------
    def at_phase_boundary(self, place: Place) -> bool:
        """The statement of the place sits right next to a model being moved, swapped or unloaded (cleanup
        lines in between skipped), or next to a `with` block that ends (or starts) with one."""
        statement = enclosing_statement(place)
        siblings = body_of(parent_in(place, statement)) if statement is not None else ()
        position = position_in(siblings, statement) if statement is not None else None
        if position is None:
            return False
        for direction in (-1, 1):
            index = position + direction
            while 0 <= index < len(siblings) and self.is_cleanup_statement(siblings[index], allow_logs_only=True):
                index += direction
            neighbour = siblings[index] if 0 <= index < len(siblings) else None
            while neighbour is not None:
                if _moves_or_swaps_model(neighbour):
                    return True
                # `with torch.no_grad(): ...; ref_model.to("cpu")` then the flush: the swap ends the block
                edge = body_of(neighbour.body) if type(neighbour) is cst.With else ()
                neighbour = (edge[-1] if direction < 0 else edge[0]) if edge else None
        return False


# --- helpers --------------------------------------------------------------------------------------------


def _statement_calls(statement: cst.CSTNode):
    """The calls made as statements of their own in a cleanup line or `if` (its branches included)."""
    if type(statement) in (cst.SimpleStatementLine, cst.SimpleStatementSuite):
        for small in statement.body:
            call = _called(small)
            if call is not None:
                yield call
    elif type(statement) is cst.If:
        body = statement.body
        for inner in (body,) if type(body) is cst.SimpleStatementSuite else body.body:
            yield from _statement_calls(inner)
        other = statement.orelse
        if type(other) is cst.If:
            yield from _statement_calls(other)
        elif type(other) is cst.Else:
            for inner in (other.body,) if type(other.body) is cst.SimpleStatementSuite else other.body.body:
                yield from _statement_calls(inner)


def _wrapper_body(definition: cst.FunctionDef) -> list:
    return [s for s in body_of(definition.body) if not _is_docstring(s)]


def _called(small: cst.BaseSmallStatement) -> Optional[cst.Call]:
    """The call a statement makes for its effect: `f()`, or `return f()` (a helper handing back
    whatever the flush returns, `None`)."""
    if type(small) in (cst.Expr, cst.Return) and type(small.value) is cst.Call:
        return small.value
    return None


def _logs(small: cst.BaseSmallStatement) -> bool:
    if type(small) is cst.Pass:
        return True
    return type(small) is cst.Expr and type(small.value) is cst.Call and is_log_call(small.value.func)


def is_log_call(func: cst.BaseExpression) -> bool:
    if type(func) is cst.Name:
        return func.value in _LOG_FUNCTIONS
    if type(func) is cst.Attribute:
        name = dotted_name(func) or ""
        return func.attr.value in _LOG_METHODS or name.startswith(("logging.", "warnings."))
    return False


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (
        type(statement) is cst.SimpleStatementLine
        and len(statement.body) == 1
        and type(statement.body[0]) is cst.Expr
        and type(statement.body[0].value) in (cst.SimpleString, cst.ConcatenatedString)
    )


def canonical(statements: Sequence[Statement]) -> str:
    """The statements' structure with comments, layout, constants and logging calls erased."""
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


def _moves_or_swaps_model(statement: cst.CSTNode) -> bool:
    if type(statement) is cst.SimpleStatementLine:
        for small in statement.body:
            if type(small) is cst.Del and _deletes_a_model(small.target):
                return True
            if type(small) is cst.Expr and type(small.value) is cst.Call:
                func = small.value.func
                # a bare `x.to(...)`/`x.cpu()` statement only does something to a module:
                # tensors are not moved in place
                if type(func) is cst.Attribute and func.attr.value in _MODULE_MOVES:
                    return True
    finder = _ModelSwapCalls()
    if isinstance(statement, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        visit_readonly(statement, finder)
    return finder.found


class _ModelSwapCalls(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        last = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else ""
        if any(word in last.lower() for word in words.MODEL_SWAP_WORDS):
            self.found = True

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False


def _deletes_a_model(target: cst.BaseDelTargetExpression) -> bool:
    targets = [element.value for element in target.elements] if type(target) in (cst.Tuple, cst.List) else [target]
    for item in targets:
        name = dotted_name(item) if type(item) in (cst.Name, cst.Attribute) else None
        if name is None:
            continue
        parts = set(name.rsplit(".", 1)[-1].lower().split("_"))
        if parts & words.MODEL_WORDS and not parts & words.TENSOR_WORDS:
            return True
    return False
