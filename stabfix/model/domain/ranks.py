"""Rank facts of a distributed run: which tests hold on rank 0 only, which code only rank 0 runs, which values are the rank.

Built on `names` and `flows`, queried through `Distributed` (the model's `distributed` part) or its `ranks`:

- `rank_zero_test(expr)`: True when a test holds on global rank 0 only (`rank == 0`, `dist.get_rank() == 0`,
  `accelerator.is_main_process`, `trainer.is_global_zero`, `not rank`, a same-file helper returning such a
  test, a name bound to one, a `@property` or argument-less method of the receiver's known class defined in another
  scanned file whose every return is one: `self.args.should_save`), False when it holds on the other ranks only
  (`rank != 0`), None otherwise (an unknown class or member included).
  A helper of another file (`from utils import is_main_process`) is judged by its name: the only tie a name breaks.
- `rank_guarded(node)`: whether only rank 0 runs `node`: under a rank-0 test, after an early `return` of the
  other ranks, in a function decorated `@rank_zero_only` / `@accelerator.on_main_process`, or in a same-file
  function that every caller calls under a guard.
- `varies_by_rank(test)`: whether a test can differ between processes (a rank-0 test either way, `local_rank in
  [-1, 0]`, any test reading the rank; not the world size).
- `mentions_rank(expr)`: whether an expression depends on the process's rank (a per-rank file path). A parameter
  is the rank when every call of the file passes it one (`Callers.passed_for`; a constructor's parameter too:
  `Trainer(model, gpu_id=rank)` makes `__init__`'s `gpu_id`, and `self.gpu_id` set from it, the rank).
- `environment_rank_read(node)`: `os.environ["LOCAL_RANK"]` (with `sizes`, `os.environ["WORLD_SIZE"]` too).
"""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from stabfix.model.flow.callers import Callers
from stabfix.model.flow.flows import ValueFlows
from stabfix.model.source.instances import attribute_values, instance_class_name
from stabfix.model.source.names import Binding, Names
from stabfix.model.source.syntax import CLASSES_AND_FUNCTIONS
from stabfix.model.source.node_fields import code_children

RANK_CALLS = frozenset({"torch.distributed.get_rank", "torch.distributed.get_node_local_rank"})
RANK_ENV = frozenset({"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "SLURM_PROCID"})
PER_PROCESS_ENV = frozenset({"RANK", "LOCAL_RANK", "SLURM_PROCID", "SLURM_LOCALID"})
RANK_ATTRIBUTES = frozenset({"process_index", "local_process_index", "global_rank", "local_rank", "rank", "node_rank"})
MAIN_ATTRIBUTES = frozenset({"is_main_process", "is_local_main_process", "is_global_zero", "is_world_process_zero",
                             "is_local_process_zero", "is_main"})
MAIN_DECORATORS = frozenset({"rank_zero_only", "on_main_process", "on_local_main_process"})
PROPERTY_DECORATORS = frozenset({"property", "cached_property"})
RANK_FREE = frozenset({"torch.distributed.get_world_size"})
_MAIN_WORD = re.compile(r"(main|master|rank_?0|rank_?zero|global_zero|chief)", re.IGNORECASE)


class RankFacts:
    def __init__(self, names: Names, flows: ValueFlows, callers: Optional[Callers] = None, project=None) -> None:
        self.names = names
        self.flows = flows
        self.callers = callers  # what the file's calls pass for a parameter (a constructor's too), when known
        self.project = project  # the other files of the scan (`ProjectView`), or None
        self._varies: dict[int, bool] = {}  # id(test) -> varies_by_rank(test): asked once per call under the test

    def environment_rank_read(self, node: cst.CSTNode, sizes: bool = True) -> bool:
        """`os.environ["LOCAL_RANK"]` (with `sizes`, `os.environ["WORLD_SIZE"]` too)."""
        return type(node) is cst.Subscript and self.names.qualify(node.value) == "os.environ" \
            and len(node.slice) == 1 and type(node.slice[0].slice) is cst.Index \
            and env_name(node.slice[0].slice.value) in (RANK_ENV if sizes else PER_PROCESS_ENV)

    def mentions_rank(self, expr: cst.CSTNode, depth: int = 0) -> bool:
        """Any part of `expr` is the rank (`f"ckpt_{rank}.pt"`, `os.path.join(d, str(dist.get_rank()))`), also
        through names bound to such an expression (`name = fmt.format(rank=global_rank)`)."""
        stack = [expr]
        while stack:
            node = stack.pop()
            if self._rank_value(node):
                return True
            if type(node) is cst.Name and node in self.names.uses and depth < 2:
                values = [b.bound_value for b in self.names.bindings_of(node) if b.bound_value is not None]
                if any(self.mentions_rank(value, depth + 1) for value in values):
                    return True
            stack.extend(code_children(node))  # no trivia node reads the rank
        return False

    def varies_by_rank(self, test: cst.BaseExpression) -> bool:
        """Whether a test can come out differently on different processes (`rank == 0`, `local_rank in [-1, 0]`,
        `accelerator.is_main_process`, `not is_main()`); the world size is the same on all of them."""
        known = self._varies.get(id(test))
        if known is None:
            known = self._varies[id(test)] = self._varies_by_rank(test)
        return known

    def _varies_by_rank(self, test: cst.BaseExpression) -> bool:
        if type(test) is cst.BooleanOperation:
            return self.varies_by_rank(test.left) or self.varies_by_rank(test.right)
        if self._option_flag(test) or _distributed_mode_test(test):
            return False
        if self.rank_zero_test(test) is not None:
            return True
        stack: list[cst.CSTNode] = [test]
        while stack:
            node = stack.pop()
            if self._rank_value(node, sizes=False):
                return True
            stack.extend(code_children(node))  # no trivia node reads the rank
        return False

    def _option_flag(self, test: cst.BaseExpression) -> bool:
        """`if rank0_only:` of a parameter `rank0_only`: an option every rank is given alike, not a test of the
        rank, though its name mentions one (a name word breaking the tie the data flow leaves)."""
        if type(test) is cst.UnaryOperation:
            return self._option_flag(test.expression)
        if type(test) is not cst.Name or test not in self.names.uses:
            return False
        bindings = self.names.bindings_of(test)
        return bool(bindings) and all(b.kind == "param" and b.name.endswith("_only") for b in bindings)

    def _rank_value(self, expr: cst.CSTNode, depth: int = 0, sizes: bool = True) -> bool:
        if depth > 6:
            return False
        kind = type(expr)  # exact types (see node_fields.node_kinds)
        if kind is cst.Call:
            if self.names.qualify(expr.func) in RANK_CALLS:
                return True
            if type(expr.func) is cst.Name and expr.func.value in ("int", "str") and expr.args:
                return self._rank_value(expr.args[0].value, depth + 1, sizes)
            definition = self.names.definition_of(expr)  # `def get_rank(): ... return dist.get_rank()`
            if definition is not None:
                return any(self._rank_value(value, depth + 1, sizes) for value in returned_values(definition, nested=True))
            name = expr.func.attr.value if type(expr.func) is cst.Attribute else getattr(expr.func, "value", "")
            qualified = self.names.qualify(expr.func) or ""  # torch's own functions are known: RANK_CALLS read the rank
            if isinstance(name, str) and "rank" in name.lower() and qualified not in RANK_FREE and not qualified.startswith("torch."):
                return True  # another file's `get_local_rank()`: its name breaks the tie
            return self.names.qualify(expr.func) in ("os.getenv", "os.environ.get") and bool(expr.args) \
                and env_name(expr.args[0].value) in (RANK_ENV if sizes else PER_PROCESS_ENV)
        if self.environment_rank_read(expr, sizes):
            return True
        if kind is cst.Attribute:
            if expr.attr.value in RANK_ATTRIBUTES:
                return True
            # `self.gpu_id` that the class set from the rank (`self.gpu_id = int(os.environ["LOCAL_RANK"])`)
            return any(b.bound_value is not None and self._rank_value(b.bound_value, depth + 1, sizes)
                       for b in self.names.self_attribute_bindings(expr))
        if kind is cst.Name and expr in self.names.uses:
            for binding in self.names.bindings_of(expr):
                value = binding.bound_value
                if value is not None and self._rank_value(value, depth + 1, sizes):
                    return True
                if binding.kind == "param" and "rank" in binding.name.lower():  # `def worker(rank, world_size)`
                    return True
                if binding.kind == "param" and self._passed_a_rank(binding, depth, sizes):  # `Trainer(..., gpu_id=rank)`
                    return True
                if binding.kind == "import" and binding.name in RANK_ENV:  # `from utils import RANK`
                    return True
        return False

    def _passed_a_rank(self, parameter: Binding, depth: int, sizes: bool) -> bool:
        """Every call of the file passes the rank for the parameter (`Trainer(model, opt, gpu_id=rank)` for
        `__init__`'s `gpu_id`, `save(state, rank)` for `save`'s second parameter)."""
        passed = self.callers.passed_for(parameter) if self.callers is not None else None
        return bool(passed) and all(self._rank_value(value, depth + 1, sizes) for value in passed)  # type: ignore[union-attr]

    def rank_zero_test(self, test: cst.BaseExpression, depth: int = 0) -> Optional[bool]:
        if depth > 6:
            return None
        if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
            if self._rank_value(test.expression):
                return True
            inner = self.rank_zero_test(test.expression, depth + 1)
            return None if inner is None else not inner
        if type(test) is cst.BooleanOperation:
            sides = (self.rank_zero_test(test.left, depth + 1), self.rank_zero_test(test.right, depth + 1))
            if type(test.operator) is cst.And and True in sides or type(test.operator) is cst.Or and True in sides \
                    and False not in sides:
                return True
            return False if type(test.operator) is cst.Or and False in sides else None
        if type(test) is cst.Comparison and len(test.comparisons) == 1:
            target = test.comparisons[0]
            if type(target.operator) is cst.In and type(target.comparator) in (cst.Set, cst.Tuple, cst.List) \
                    and self._rank_value(test.left):  # `RANK in {-1, 0}`: rank 0, or not distributed at all
                values = [_int_value(element.value) for element in target.comparator.elements]
                return True if 0 in values and all(v is not None and v <= 0 for v in values) else None
            left, right = test.left, target.comparator
            if _is_zero(left):
                left, right = right, left
            if _is_zero(right) and self._rank_value(left):
                if type(target.operator) in (cst.Equal, cst.Is, cst.LessThanEqual):
                    return True
                if type(target.operator) in (cst.NotEqual, cst.IsNot, cst.GreaterThan):
                    return False
            return None
        if type(test) is cst.Attribute:
            if test.attr.value in MAIN_ATTRIBUTES:
                return True
            # `args.save_logs = ... and is_master(args)`, then `if args.save_logs:`: what every store there holds
            stored = attribute_values(self.names, test)  # on an object of the receiver's class, not any `.<attr>`
            answers = {self.rank_zero_test(value, depth + 1) if value is not None else None for value in stored}
            if len(answers) == 1 and (answer := answers.pop()) is not None:
                return answer
            # `self.args.should_save`: a property of the receiver's class, defined in another scanned file
            return self._foreign_member_test(test.value, test.attr.value, called=False)
        if type(test) is cst.Call:
            return self._main_call(test, depth)
        if type(test) is cst.Name and test in self.names.uses:
            for binding in self.names.bindings_of(test):
                value = binding.bound_value
                if value is not None and (answer := self.rank_zero_test(value, depth + 1)) is not None:
                    return answer
                if binding.kind == "param" and _MAIN_WORD.search(binding.name):
                    return True
        return None

    def _main_call(self, call: cst.Call, depth: int) -> Optional[bool]:
        if type(call.func) is cst.Attribute and call.func.attr.value in MAIN_ATTRIBUTES:
            return True
        definition = self.names.definition_of(call)
        if definition is not None:
            for returned in returned_values(definition):
                if (answer := self.rank_zero_test(returned, depth + 1)) is not None:
                    return answer
            return None
        if type(call.func) is cst.Attribute and not call.args:  # `args.is_first()`, a method of the receiver's class
            answer = self._foreign_member_test(call.func.value, call.func.attr.value, called=True)
            if answer is not None:
                return answer
        name = call.func.attr.value if type(call.func) is cst.Attribute else getattr(call.func, "value", "")
        return True if isinstance(name, str) and _MAIN_WORD.search(name) else None  # another file's helper

    def _foreign_member_test(self, receiver: cst.BaseExpression, member: str, called: bool) -> Optional[bool]:
        """`self.args.should_save` (a property) or `args.is_first()` (a method called without arguments) of the
        receiver's known class, defined in another scanned file: what every value the member returns tests there
        (`return self.process_index == 0`); None when the class, the member or one of its returns is not known."""
        if self.project is None:
            return None
        owner = self.class_of(receiver)
        if owner is None:
            return None
        return self.project.foreign(f"{owner}.{member}", lambda found: _member_rank_test(found, called),
                                    needs=("distributed",), kinds=("method",))

    def class_of(self, expr: cst.BaseExpression) -> Optional[str]:
        """The class whose instance `expr` holds (`source/instances.instance_class_name`)."""
        return instance_class_name(self.names, expr)

    def rank_guarded(self, node: cst.CSTNode, depth: int = 0) -> bool:
        child, current = node, self.flows.parent(node)
        while current is not None:
            if type(current) is cst.If:
                polarity = self.rank_zero_test(current.test)
                if polarity is True and child is current.body or polarity is False and child is current.orelse:
                    return True
            if type(current) is cst.FunctionDef:
                return self._guarded_function(current, child, depth)
            child, current = current, self.flows.parent(current)
        return False

    def _guarded_function(self, function: cst.FunctionDef, statement: cst.CSTNode, depth: int) -> bool:
        for decorator in function.decorators:
            target = decorator.decorator.func if type(decorator.decorator) is cst.Call else decorator.decorator
            name = target.attr.value if type(target) is cst.Attribute else getattr(target, "value", "")
            if name in MAIN_DECORATORS:
                return True
        body = function.body.body if type(function.body) is cst.IndentedBlock else ()
        for item in body:  # an early exit of the other ranks before the statement
            if item is statement:
                break
            if type(item) is cst.If and self.rank_zero_test(item.test) is False and _exits(item.body):
                return True
        if depth >= 2:
            return False
        callers = [call for call in self.flows.calls() if self.names.definition_of(call) is function]
        return bool(callers) and all(self.rank_guarded(call, depth + 1) for call in callers)


def _member_rank_test(found, called: bool) -> Optional[bool]:
    """What every return of another file's method tests (`project.foreign`'s question, asked of that file's
    model): a `@property` read as an attribute, or a method taking only its instance and called."""
    method = found.node
    decorators = {(d.decorator.attr.value if type(d.decorator) is cst.Attribute else getattr(d.decorator, "value", None))
                  for d in method.decorators}
    if bool(decorators & PROPERTY_DECORATORS) == called or type(method) is not cst.FunctionDef:
        return None
    params = method.params
    if called and (len(params.params) != 1 or params.kwonly_params or params.posonly_params
                   or type(params.star_arg) is cst.Param):
        return None
    returned = returned_values(method, nested=True)
    answers = {found.model.distributed.rank_zero_test(value) for value in returned}
    return answers.pop() if len(answers) == 1 else None


def _distributed_mode_test(test: cst.BaseExpression) -> bool:
    """`local_rank != -1`, `args.local_rank == -1`: -1 marks a run that is not distributed, the same on every rank."""
    return type(test) is cst.Comparison and all(
        type(c.comparator) is cst.UnaryOperation and type(c.comparator.operator) is cst.Minus
        and type(c.comparator.expression) is cst.Integer and c.comparator.expression.value == "1"
        for c in test.comparisons)


def _int_value(node: cst.BaseExpression) -> Optional[int]:
    if type(node) is cst.Integer:
        return int(node.value)
    if type(node) is cst.UnaryOperation and type(node.operator) is cst.Minus and type(node.expression) is cst.Integer:
        return -int(node.expression.value)
    return None


def env_name(node: cst.BaseExpression) -> Optional[str]:
    return node.evaluated_value if type(node) is cst.SimpleString and isinstance(node.evaluated_value, str) else None


def _is_zero(node: cst.BaseExpression) -> bool:
    return type(node) is cst.Integer and node.value == "0"


def _exits(block: cst.BaseSuite) -> bool:
    statements = block.body if type(block) is cst.IndentedBlock else ()
    last = statements[-1] if statements else None
    if type(last) is cst.SimpleStatementLine:
        return any(type(small) in (cst.Return, cst.Raise) for small in last.body)
    return False


def returned_values(function: cst.FunctionDef, nested: bool = False) -> list[cst.BaseExpression]:
    """The values the function's top-level `return`s give (`nested`: also those inside its branches)."""
    found: list[cst.BaseExpression] = []
    stack: list[cst.CSTNode] = list(function.body.body) if type(function.body) is cst.IndentedBlock else []
    while stack:  # exact types (see node_fields.node_kinds)
        item = stack.pop()
        kind = type(item)
        if kind is cst.SimpleStatementLine:
            found.extend(small.value for small in item.body if type(small) is cst.Return and small.value is not None)
        elif nested and kind not in CLASSES_AND_FUNCTIONS:
            stack.extend(code_children(item))  # trivia holds no return
    return found
